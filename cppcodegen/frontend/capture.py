"""AutoGraph-style capture of Python control flow (source transformation only).

``convert(fn, ops)`` re-parses ``fn``'s source and rewrites ``for``/``while``/
``if``/conditional expressions/``and``/``or``/``not``/some builtin calls into
calls on a runtime object ``ops`` (bound to the hidden name ``__ccg``).  The
runtime decides to execute them as plain Python or to record them.

Standard library only; the rewriting itself is ``rewrite.py``.
"""
from __future__ import annotations

import __future__
import ast
import builtins
import functools
import inspect
import textwrap
import types

from ..errors import user_location
from .argtree import packed_parts
from .astutil import function_def, loop_else, mangle, name_node, set_location, walk_scope
from .bindings import guard_unbound
from .optionals import guard_none
from .generators import hoist
from .tuplenames import split
from .rewrite import Converter
from . import comprehensions, dictlocals, products
from .whileloops import counted_whiles

__all__ = ["convert", "convert_source", "Undefined", "UNDEFINED"]


class Undefined:
    """Sentinel bound to names that may be unbound when a converted block runs.

    Any use of it (truth value, arithmetic, indexing, calling, iterating...)
    raises UnboundLocalError.
    """
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self):
        return "<ccg.UNDEFINED>"

    def __reduce__(self):
        return (Undefined, ())


def _undef_err(self, *a, **k):
    raise UnboundLocalError(
        f"a local variable is read at {user_location()} where it has no value: before it is "
        f"assigned, or after a compiled loop that makes it afresh in each iteration (a tuple, "
        f"an array whose shape changes between iterations): such a value is not kept after "
        f"the loop; keep the part you need in a variable of one shape (`last = t[1]`)")


def _undef_attr(self, name):
    if name.startswith("__"):
        raise AttributeError(name)
    _undef_err(self)


Undefined.__getattr__ = _undef_attr


for _m in ("__bool__", "__len__", "__iter__", "__getitem__", "__setitem__", "__call__",
           "__index__", "__int__", "__float__", "__complex__", "__neg__", "__pos__",
           "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__",
           "__array__", "__contains__"):
    setattr(Undefined, _m, _undef_err)
for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
            "lshift", "rshift", "and", "or", "xor"):
    for _f in ("__%s__", "__r%s__", "__i%s__"):
        setattr(Undefined, _f % _op, _undef_err)

UNDEFINED = Undefined()

_FUTURE_MASK = 0
for _fname in __future__.all_feature_names:
    _FUTURE_MASK |= getattr(__future__, _fname).compiler_flag

# ----------------------------------------------------------------------------
# driver
# ----------------------------------------------------------------------------

_cache = {}
_NO_SOURCE: set = set()     # functions warned about: no source to rewrite


def _no_source(fn):
    """Warn (once per function) that a function with loops has no source to rewrite."""
    import dis
    import warnings
    if fn.__code__ in _NO_SOURCE or not any(
            i.opname == "FOR_ITER" or i.opname.startswith("JUMP_BACKWARD")
            for i in dis.get_instructions(fn)):
        return
    _NO_SOURCE.add(fn.__code__)
    warnings.warn(f"cppcodegen: the source of {fn.__qualname__} is not available (defined in "
                  "`python -`, `exec` or a prompt that keeps no source), so its loops run in "
                  "Python while tracing, one step per iteration; define it in a file to "
                  "compile them as loops", stacklevel=6)


def _parse_fn(fn):
    """(FunctionDef with file line numbers, filename) or None."""
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return None
    try:
        # the code object: do not follow __wrapped__ of decorator wrappers
        lines, start = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError):
        _no_source(fn)
        return None
    src = "".join(lines)
    tree = None
    try:
        tree = ast.parse(textwrap.dedent(src))
        off = start - 1
    except SyntaxError:
        try:  # e.g. multi-line strings defeat dedent
            tree = ast.parse("if 1:\n" + src)
            tree.body = tree.body[0].body
            off = start - 2
        except SyntaxError:
            return None
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    fdef = tree.body[0]
    if fdef.name != fn.__code__.co_name:
        return None
    ast.increment_lineno(fdef, off)
    return fdef, fn.__code__.co_filename


def _transform(fn, ops_name, once=False):
    """Return (converted FunctionDef module AST, factory-free) or None."""
    parsed = _parse_fn(fn)
    if parsed is None:
        return None
    fdef, filename = parsed
    fdef.decorator_list = []
    fdef.returns = None
    for a in ast.walk(fdef.args):
        if isinstance(a, ast.arg):
            a.annotation = None
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        mangle(fdef, parts[-2])
    if "__class__" in fn.__code__.co_freevars:
        # zero-argument super() would look at the generated inner functions
        a = fdef.args
        pos = a.posonlyargs + a.args
        for n in walk_scope(fdef.body):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "super" and not n.args and pos):
                n.args = [name_node("__class__"), name_node(pos[0].arg)]
    # local annotations have no runtime effect; they are illegal on nonlocal names
    _strip_annassign(fdef)
    a = fdef.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    declared = {x for n in walk_scope(fdef.body) if isinstance(n, (ast.Global, ast.Nonlocal))
                for x in n.names}
    split(fdef)         # (names bound only to tuples: a name per element, tuplenames.py)
    counted_whiles(fdef, ops_name)      # (``while i < n: ...; i += 1``: a for, whileloops.py)
    hoist(fdef, ops_name + "_", lambda name: hasattr(builtins, name) and name not in params
          and name not in fn.__globals__ and name not in fn.__code__.co_freevars
          and not _bound_in(fdef, name))
    cells = set(fn.__code__.co_cellvars) | set(fn.__code__.co_freevars) | declared
    maybe_unbound = guard_unbound(fdef, ops_name, filename, params, cells)
    guard_none(fdef, ops_name, filename, params, cells | maybe_unbound)
    dictlocals.scalarize(fdef, ops_name, params)    # (p["w"] = ...: a name per key)
    comprehensions.unfold(fdef)         # ([f(k) for k in range(n)]: a loop that appends)
    loop_else(fdef, ops_name + "_")
    products.nest(fdef, ops_name)       # (for i, j in np.ndindex(...): nested loops)
    conv = Converter(fdef, fn, ops_name, filename, once)
    if not conv.run():
        return None
    return fdef, filename


def _bound_in(fdef, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
               for n in ast.walk(fdef))


def _strip_annassign(fdef):
    class T(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node if node is not fdef else self.generic_visit(node)

        visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

        def visit_AnnAssign(self, node):
            if node.value is None:
                return ast.copy_location(ast.Pass(), node)
            return ast.copy_location(ast.Assign(targets=[node.target], value=node.value,
                                                type_comment=None), node)

    T().visit(fdef)


def _compile(fn, ops_name, once):
    if not isinstance(fn, types.FunctionType):
        return None
    key = (fn.__code__, ops_name, id(fn.__globals__), once)
    if key in _cache:
        return _cache[key]
    res = _transform(fn, ops_name, once)
    if res is None:
        _cache[key] = None
        return None
    fdef, filename = res
    inner_name = ops_name + "_fn"
    fdef.name = inner_name
    params = [ops_name] + list(fn.__code__.co_freevars)
    factory = function_def(ops_name + "_factory", params,
                    [fdef, ast.Return(value=name_node(inner_name))])
    set_location(factory, fdef)
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    code = compile(mod, filename, "exec", flags=fn.__code__.co_flags & _FUTURE_MASK,
                   dont_inherit=True)
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    icode = next(c for c in fcode.co_consts
                 if isinstance(c, types.CodeType) and c.co_name == inner_name)
    repl = {"co_name": fn.__code__.co_name}
    if hasattr(fn.__code__, "co_qualname"):
        repl["co_qualname"] = fn.__code__.co_qualname
    icode = icode.replace(**repl)
    _cache[key] = icode
    return icode


def user_function(f) -> bool:
    """A plain Python function of the user's (not NumPy's, not ours): its control flow is
    captured, and what it does to Python state is checked (``pystate.py``)."""
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", "") or ""
    return not (mod.startswith(("numpy", "cppcodegen", "sympy")) or
                mod in ("builtins", "math", "operator", "functools"))


def convert(fn, ops, ops_name="__ccg", once=False):
    """Return ``fn`` with its control flow routed through ``ops``, or None.

    None means: no source available, or nothing to convert; use ``fn`` as is. With ``once``
    the whole body is the body of a loop of one trip (``rewrite.ONCE``).
    The result shares ``fn``'s globals dict and closure cells (so it sees later
    changes to closed-over variables, and empty cells fail only when used).
    """
    packed = packed_parts(fn)      # (a function of container arguments' leaves)
    if packed is not None:
        inner = convert(packed[0], ops, ops_name, once)
        return None if inner is None else packed[1].around(packed[0], inner)
    fn0 = fn
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    icode = _compile(fn, ops_name, once)
    if icode is None:
        return None
    if icode.co_kwonlyargcount and not fn.__code__.co_kwonlyargcount:
        icode = _positional_code(icode)         # (fn is positional(user's function))
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[ops_name] = types.CellType(ops)
    closure = tuple(cells[v] for v in icode.co_freevars)
    new = types.FunctionType(icode, fn.__globals__, fn.__name__, fn.__defaults__,
                             closure or None)
    functools.update_wrapper(new, fn)
    new.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    new.__defaults__ = fn.__defaults__
    new.__wrapped__ = fn
    if fn0 is not fn:
        return types.MethodType(new, fn0.__self__)
    return new


def _positional_code(code):
    # keyword-only parameters follow the positional ones in co_varnames (before *args and
    # **kwargs, which positional() refuses): counted as positional, they are
    return code.replace(co_argcount=code.co_argcount + code.co_kwonlyargcount,
                        co_kwonlyargcount=0)


def positional(fn):
    """``fn`` with its keyword-only parameters made positional (in their order, after the
    others): the compiled function binds a call's arguments to one tuple, and every runner
    (the trace, the plain-Python fallback) calls ``fn(*that_tuple)``. Same code, globals and
    closure; no defaults (the binding applied them)."""
    flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
    if not isinstance(fn, types.FunctionType) or not fn.__code__.co_kwonlyargcount or \
            fn.__code__.co_flags & flags:
        return fn               # (a method, a callable object: keyword-only ones refused)
    new = types.FunctionType(_positional_code(fn.__code__), fn.__globals__, fn.__name__,
                             None, fn.__closure__)
    functools.update_wrapper(new, fn)
    new.__kwdefaults__ = None
    new.__wrapped__ = fn
    return new


def convert_source(fn, ops_name="__ccg"):
    """Debug helper: the transformed source of ``fn`` (None if not converted)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    res = _transform(fn, ops_name)
    if res is None:
        return None
    return ast.unparse(res[0])
