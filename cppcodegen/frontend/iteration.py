"""What a compiled ``for`` iterates over, and the induction variables it binds.

In: the iterable of a captured ``for`` (a ``range`` of ints or symbolic sizes, a traced array,
``enumerate``/``zip``/``reversed`` of them). Out: a loop spec: the range of the induction
variable (start, stop, step as sizes: ints or sympy expressions) and the item the body sees at
each value of it (``i``, ``x[i]``, ``(i, x[i])``, ...).

Induction variables are size symbols (``ir.shapes.loop_symbol``) registered in the trace's
``ShapeEnv`` with their lowest and highest value, so facts about sizes are decided for every
iteration at once. sympy is imported here only once a loop is traced.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import DataDependentError, TraceError, user_location
from .externs import TraceState
from ..ir.graph import make_node
from .proxy import as_node, asproxy, cast_node, Proxy, size_operand, wrap
from .sizes import dynamic, is_dim, symbolic


def _shapes():
    from ..ir import shapes     # sympy: only when a loop is traced (warm starts trace without)
    return shapes


def symbolic_int(value) -> bool:
    """A size from the user's code (``x.shape[0]`` under dynamic shapes, a loop's index)."""
    return is_dim(value) and hasattr(value, "expr")


def has_loop_symbol(x) -> bool:
    env = symbolic().current() if dynamic() else None
    expr = getattr(x, "expr", x)
    return env is not None and bool(getattr(expr, "free_symbols", set()) & set(env.loops))


def size_proxy(expr):
    """A size expression as a traced int64 value (weak, like a Python int)."""
    n = size_operand(_shapes().canon(expr))
    return n if isinstance(n, Proxy) else wrap(as_node(n), weak=True, scalar=True)


def size_value(a, bound: bool = False):
    """A range bound as a size: an int, or a sympy expression of sizes and loop indices; with
    ``bound``, a traced int computed from array values too (a data symbol)."""
    if isinstance(a, (bool, np.bool_, int, np.integer)):
        return int(a)
    if isinstance(a, Proxy):
        if bound and int_expr(a.node) is None:
            return data_size(a)
        return value_size(a)
    return _shapes().canon(a)


def data_size(p: Proxy):
    """A loop bound computed from array values (``indptr[i + 1]``, a counter a while loop
    carries): a data symbol (``dv<k>``) that the loop reads from the value's buffer when it
    starts. Only loop bounds take these: a shape or a slice from array values is still refused
    (its size would be unknown to everything that allocates)."""
    if p.dtype.kind not in "iub" or p.node.shape not in ((), (1,)):
        raise TypeError(f"'{p.dtype}' object cannot be interpreted as an integer (a range "
                        f"bound at {user_location()})")
    sh = _shapes()
    env = _env()
    sym = sh.data_symbol(len(env.data))
    node = p.node if p.node.shape == () else make_node("reshape", (p.node,), (), p.dtype,
                                                       user_location())
    env.data[sym] = cast_node(node, np.dtype(np.int64))
    return sym


def value_size(p: Proxy):
    """A traced int used as a size: a size expression (``x.shape[0] - 1`` carried as a value),
    or an integer argument's value symbol (``v1``: read from the argument at each call, so one
    build serves every trip count; facts the trace decides about it are guarded)."""
    expr = int_expr(p.node)
    if expr is not None:
        return _shapes().canon(expr)
    raise DataDependentError(f"a size computed from array values is not supported yet (at "
                             f"{user_location()}); use a size, a Python int or an integer "
                             "argument")


def pinned_int(p: Proxy):
    """A traced int of sizes and integer arguments only (``n - 1`` of a Python int argument
    read at each call) used where Python needs an int (``axis=k``, ``reshape(n, -1)``,
    ``[0] * n``): its value in this call, guarded (another value compiles again); None
    when it depends on array values or a compiled loop's index."""
    if p.dtype.kind not in "iu" or p.node.shape:
        return None
    expr = int_expr(p.node)
    if expr is None:
        return pinned_number(p)
    try:
        return int(_env().specialize(expr))
    except _shapes().LoopDependent:
        return None


def pinned_number(p: Proxy):
    """A traced number computed from sizes and integer arguments only (``2.0 / (nx - 1)``)
    where Python needs the number itself (``float(dx)``, ``np.arange(0, 1, dx)``): its value
    in this call, every size and argument it reads guarded; None otherwise."""
    from ..ir.graph import toposort
    from .externs import values_now
    if p.node.shape:
        return None
    nodes = toposort([p.node])
    if any(not n.inputs and n.op not in ("size", "const", "scalar") for n in nodes):
        return None
    env = _env()
    try:
        for n in nodes:
            if n.op in ("size", "scalar"):
                expr = n.attr("expr") if n.op == "size" else int_expr(n)
                if expr is None:
                    return None
                env.specialize(expr)
    except _shapes().LoopDependent:
        return None
    values = values_now([p])
    return None if values is None else np.asarray(values[0]).item()


_INT_OPS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
            "multiply": lambda a, b: a * b, "negative": lambda a: -a,
            "positive": lambda a: a, "floor_divide": lambda a, b: _shapes().floordiv(a, b)}


def int_expr(node):
    """The integer node as a sympy expression of sizes and integer arguments (``n - 1``,
    ``2 * k``), or None when it depends on array values."""
    if node.dtype.kind not in "iu":
        return None
    if node.op == "size":
        return node.attr("expr")
    if node.op == "const":
        return int(node.attr("value"))
    if node.op == "scalar" and TraceState.args is not None:
        index = node.attr("index")
        sym = _shapes().value_symbol(index)
        env = _env()
        env.hints[sym] = int(TraceState.args[index])
        env.values[sym] = index
        return sym
    if node.op == "reduce" and node.dtype == np.int64:  # len(x[mask]) as a size: its count
        from .counted import count_size
        return count_size(node)
    if node.op == "check":      # a Python int's overflow check: the value it passes on
        return int_expr(node.inputs[0])     # (the check itself stays: keep_for_errors)
    if node.op == "cast" or node.op in _INT_OPS:
        args = [int_expr(i) for i in node.inputs]
        if any(a is None for a in args):
            return None
        return args[0] if node.op == "cast" else _INT_OPS[node.op](*args)
    return None


def _env():
    """The trace's shape environment (made for a static trace when its first loop or value
    size needs symbols)."""
    sh = _shapes()
    env = sh.current()
    if env is None:
        env = sh.ShapeEnv({})
        sh.set_current(env)         # (until trace_function puts the caller's back)
    return env


def concrete_int(x) -> int:
    return x if isinstance(x, int) else _shapes().as_int(x)


def traced_sizes(sh):
    """Sizes the trace cannot decide are traced values (``size_proxy``), and their text
    (``f"{i}"`` of a loop's index) a placeholder print() fills in when it runs."""
    from .printing import placeholder
    sh.TRACED_VALUE, sh.FORMAT = size_proxy, placeholder


def enter_loop(spec):
    """A new induction variable ranging over the values of ``spec`` (as the user's code
    sees them), registered with its lowest and highest value (a negative step counts down
    from ``first`` to ``last``)."""
    sh = _shapes()
    env = _env()
    traced_sizes(sh)
    sym = sh.loop_symbol(len(env.loops) + len(env.retired))
    if spec.positive is None:           # a step of either sign: the range either way
        env.loops[sym] = (sh.sympy.Min(spec.first, spec.stop + 1),
                          sh.sympy.Max(spec.first, spec.stop - 1))
    else:
        env.loops[sym] = (spec.first, spec.last) if spec.positive else (spec.last, spec.first)
    return sh.SymInt(sym)


PARALLEL_BODIES = [0]       # prange bodies being traced now (a check in one cannot stop it)


def in_prange() -> bool:
    """Is a ``prange`` body being traced? Its iterations run at the same time, so a failed
    check there is raised when the program returns, not where it fails."""
    return PARALLEL_BODIES[0] > 0


def varying_symbols() -> set:
    """The symbols whose value changes while a loop runs: induction variables (of the loops
    open now and of those already closed) and bounds read from array values."""
    env = _shapes().current()
    return set(env.loops) | set(env.retired) | set(env.data)


def leave_loop(var) -> None:
    env = _shapes().current()
    env.retired[var.expr] = env.loops.pop(var.expr)


def loops_mark():
    """How many loops were traced so far (``forget_loops`` goes back to it)."""
    env = _shapes().current()
    return None if env is None else len(env.retired)


def forget_loops(mark) -> None:
    """A trace of a loop body or branch was dropped (traced again): the loops traced in it
    are forgotten, so the next trace names its loops' induction variables as it did. The
    same index expressions then come back, and what was decided of them is remembered."""
    env = _shapes().current()
    if env is not None and mark is not None:
        for sym in list(env.retired)[mark:]:
            del env.retired[sym]


class LoopSpec:
    """An induction variable's range (start, stop, step) and the body's item at each value;
    ``parallel``: its iterations may run at the same time (``prange``)."""
    start = stop = step = 0
    parallel = False

    @property
    def positive(self) -> bool:
        """Does the loop count up? (A symbolic step's sign was decided for every value.)"""
        return self.step > 0

    @property
    def first(self):
        return self.start

    def single_trip(self) -> bool:
        """At most one iteration, whatever the sizes (nothing to run on other threads)."""
        return all(isinstance(v, int) for v in (self.start, self.stop, self.step)) and \
            len(range(self.start, self.stop, self.step)) <= 1

    @property
    def last(self):
        """The last value (a bound of it where the sizes are symbolic: ``range(0, n, 4)``)."""
        if all(type(v) is int for v in (self.start, self.stop, self.step)):
            r = builtins.range(self.start, self.stop, self.step)
            if len(r):              # (``range(0, 256, 16)``: 240, so x[i:i + 8] fits)
                return r[-1]
        return self.stop - 1 if self.positive else self.stop + 1

    def item(self, var):
        return var

    def python_items(self):
        """The items as Python runs them (an unrolled loop)."""
        return (self.item(concrete_int(i)) for i in builtins.range(
            concrete_int(self.start), concrete_int(self.stop), concrete_int(self.step)))


class LoopRange(LoopSpec):
    def __init__(self, *args):
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        start, stop, step = (size_value(a, bound=True) for a in args)
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step
        if not isinstance(step, int):   # range(i * i, n + 1, i): its sign for every value
            self.up = _step_sign(step)

    @property
    def positive(self) -> bool:
        return self.up if not isinstance(self.step, int) else self.step > 0

    def reversed(self):
        if not isinstance(self.step, int) or abs(self.step) != 1:
            raise TraceError("reversed() of a range with a step other than 1 is not supported")
        r = LoopRange.__new__(LoopRange)
        r.start, r.stop, r.step = self.last, self.first - self.step, -self.step
        return r


def _step_sign(step):
    """True when a symbolic step is positive for every value it takes, False when negative,
    None when only the run decides (``range(i * i, n + 1, i)`` with ``i`` carried by a while
    loop: the C++ loop tests the step's sign, and reports a zero step as Python does)."""
    sh = _shapes()
    try:
        if sh.less(0, step):
            return True
        if sh.less(step, 0):
            return False
        zero = sh.equal(step, 0)
    except sh.LoopDependent:
        zero = False
    if zero:
        raise ValueError("range() arg 3 must not be zero")
    return None


class ArrayIter(LoopSpec):
    """``for row in x``: the rows of a traced array (``values``: its numbers, when they are
    known while tracing: a constant table, ``np.arange(9)``)."""

    def __init__(self, array):
        if not array.node.shape:
            raise TypeError("iteration over a 0-d array")
        self.array = array
        self.start, self.stop, self.step = 0, size_value(array.node.shape[0]), 1
        self.values = known_values(array.node)
        self.progression = _progression(array.node, self.values)

    def item(self, var):
        if self.values is not None and isinstance(var, (int, np.integer)):
            return self.values[int(var)]        # a number known while tracing
        if self.progression is not None and not isinstance(var, (int, np.integer)):
            first, step = self.progression      # ``for i in np.arange(n - 1, -1, -1)``: a
            p = size_proxy(first + step * var.expr)     # size (``np.arange(i + 1)``, ``x[:i]``),
            return wrap(p.node, weak=False, scalar=True)    # an np.int64 as NumPy's items
        return self.array[var]


def _progression(node, values):
    """(first, step) of a 1-d int64 array of equally spaced values (``np.arange``), else
    None."""
    if node.dtype != np.int64 or len(node.shape) != 1 or values is None or not len(values):
        return None
    steps = np.diff(values)
    if not len(steps):
        return int(values[0]), 1
    return (int(values[0]), int(steps[0])) if steps[0] and (steps == steps[0]).all() else None


def known_values(node):
    """The values of a constant node or of ``np.arange(n)`` of a static ``n``, else None."""
    if node.op == "constant":
        return node.attr("array").array
    if node.op == "const" and all(type(d) is int for d in node.shape):
        return np.full(node.shape, node.attr("value"), node.dtype)
    if node.op == "broadcast_to" and node.inputs[0].op == "const" and \
            all(type(d) is int for d in node.shape):
        return np.full(node.shape, node.inputs[0].attr("value"), node.dtype)
    if node.op == "iota" and type(node.shape[0]) is int:
        return np.arange(node.shape[0], dtype=node.dtype)
    return None


def constant_items(spec) -> bool:
    """Are a loop's items numbers known while tracing (``zip(idxs, cxs, cys)`` over a
    lattice's constant velocity tables)?"""
    if isinstance(spec, ArrayIter):
        return spec.values is not None and spec.values.ndim == 1
    if isinstance(spec, Zip):
        return all(constant_items(s) or type(s) is LoopRange for s in spec.inner) and \
            any(constant_items(s) for s in spec.inner)
    if isinstance(spec, Enumerate):
        return constant_items(spec.inner)
    return False


class ConstantIter(LoopSpec):
    """``for v in (2, 1, 0)`` compiled as a loop over a constant array of the numbers (when
    Python cannot run it: a break or a return on traced values inside); ``for di, dj in
    ((-1, 0), (1, 0), ...)`` over its rows, each item a tuple. Python numbers stay Python
    numbers (weak: ``x32 * w`` of a float ``w`` is float32, as in Python)."""

    def __init__(self, values):
        self.start, self.stop, self.step = 0, len(values), 1
        self.table = isinstance(values[0], (tuple, list))
        columns = list(zip(*values)) if self.table else [values]
        # a constant node per column, holding its numbers (ints and floats apart)
        self.columns = [(asproxy(np.asarray(c)), all(type(v) in (int, float) for v in c))
                        for c in columns]

    def item(self, var):
        items = tuple(wrap(a[var].node, weak=True, scalar=True) if weak else a[var]
                      for a, weak in self.columns)
        return items if self.table else items[0]


def constant_numbers(it) -> bool:
    """A tuple or list of Python/NumPy numbers, all ints or all floats (no bools), or of
    tuples of as many numbers each, each column such numbers (a table: its rows)."""
    if isinstance(it, (tuple, list)) and it and all(isinstance(r, (tuple, list)) for r in it):
        return len({len(r) for r in it}) == 1 and len(it[0]) > 0 and \
            all(constant_numbers(list(c)) for c in zip(*it))     # (each column alike)
    return isinstance(it, (tuple, list)) and len(it) > 0 and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        for v in it) and len({isinstance(v, (float, np.floating)) for v in it}) == 1


class Enumerate(LoopSpec):
    def __init__(self, inner, start=0):
        if inner.step != 1:
            raise TraceError("enumerate() over a range with a step other than 1 is not supported")
        self.inner, self.offset = inner, start
        self.start, self.stop, self.step = inner.start, inner.stop, 1

    def item(self, var):
        return (var - self.inner.start + self.offset, self.inner.item(var))


class Zip(LoopSpec):
    def __init__(self, *inner):
        if any(s.step != 1 for s in inner):
            raise TraceError("zip() over a range with a step other than 1 is not supported")
        import sympy        # (only with a loop traced: sympy is loaded already)
        self.inner = inner
        self.start, self.step = 0, 1
        self.stop = _shapes().canon(sympy.Min(*[sympy.Max(s.stop - s.start, 0) for s in inner]))

    def item(self, var):
        return tuple(s.item(var + s.start) for s in self.inner)


class PRange:
    """What ``prange`` gives outside a trace: Python iterates it as the range it wraps."""

    def __init__(self, *args):
        self.range = builtins.range(*args)

    def __iter__(self):
        return iter(self.range)

    def __len__(self):
        return len(self.range)

    def __repr__(self):
        return "p" + repr(self.range)


def prange(*args):
    """``range(*args)`` whose iterations a compiled function runs in parallel, like Numba's
    ``prange``: the loop's author promises that no iteration reads what another one writes.
    Scalars updated with ``+=``, ``*=`` or ``max``/``min`` of themselves are reductions
    (each thread sums its share, the shares are combined in order); other variables assigned
    in the body are private to an iteration. Run by Python (uncompiled) it is ``range``."""
    if any(isinstance(a, Proxy) or symbolic_int(a) for a in args):
        spec = LoopRange(*args)
        spec.parallel = True
        return spec
    return PRange(*args)


def loop_spec(it):
    """The spec of a ``for``'s iterable, or None when Python iterates it (a list, a tuple)."""
    if isinstance(it, LoopSpec):
        return it
    if isinstance(it, PRange):
        spec = LoopRange(it.range.start, it.range.stop, it.range.step)
        spec.parallel = True
        return spec
    if isinstance(it, builtins.range):
        return LoopRange(it.start, it.stop, it.step)
    if isinstance(it, Proxy):
        return ArrayIter(it)
    if hasattr(type(it), "traced_array"):   # a list a compiled loop filled (listbuffer.py)
        return ArrayIter(it.traced_array())
    return None


def spec_of(it):
    spec = loop_spec(it)
    if spec is None and isinstance(it, np.ndarray) and it.ndim and it.dtype.kind in "biuf":
        spec = ArrayIter(asproxy(it))   # a constant array zipped with a range or an array
    if spec is None:
        raise TraceError(f"cannot iterate over {type(it).__name__} in a compiled loop together "
                         "with a range or an array")
    return spec
