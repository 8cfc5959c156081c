"""The plain-Python runtime of captured functions (the oracle of tests/test_capture.py):
every converted construct run with exact Python semantics on concrete values."""
import builtins
import operator
import types

from cppcodegen.frontend import dictlocals
from cppcodegen.frontend.capture import UNDEFINED, convert


class PythonOps:
    """Executes converted control flow eagerly on concrete Python values.

    convert_calls: if True, ``call(f, ...)`` converts plain Python user functions
    (recursively, through capture.convert with this ops) before calling them.
    """
    UNDEFINED = UNDEFINED
    MISSING, dict_item, dict_of = dictlocals.MISSING, staticmethod(dictlocals.dict_item), \
        staticmethod(dictlocals.dict_of)

    def __init__(self, convert_calls=False, ops_name="__ccg"):
        self.convert_calls = convert_calls
        self.ops_name = ops_name
        self.converted_calls = 0  # statistics, handy for tests

    # -- statements -----------------------------------------------------------
    def for_stmt(self, iter_, body, get_state, set_state, names, extra_test, where, slices=False,
                 fresh=(), entry=(), lists=(), unread=(), stacks=()):
        it = iter(iter_)
        # extra_test is checked before pulling the next item (exact `break` semantics)
        while extra_test is None or extra_test():
            try:
                item = next(it)
            except StopIteration:
                break
            body(item)

    def while_stmt(self, cond, body, get_state, set_state, names, where, entry=(), lists=()):
        while cond():
            body()

    def if_stmt(self, test, then_, else_, get_state, set_state, names, where, keep=()):
        if test:
            then_()
        else:
            else_()

    # try statements (trying.py): nothing to guard on concrete values
    def enter_try(self, where, names=(), scope=None):
        pass

    def try_handler(self):
        pass

    def leave_try(self):
        pass

    # counting while loops (whileloops.py) as for loops when the counter is a Python int
    def counted_while(self, i, bound):
        return type(i) is int and isinstance(bound, int)

    def while_exit(self, start, stop, step):
        from cppcodegen.frontend.whileloops import while_exit
        return while_exit(start, stop, step)

    # -- expressions ----------------------------------------------------------
    def bound(self, value, flag, name, where):
        if not flag:
            raise UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                    f"associated with a value (at {where})")
        return value

    def is_none(self, value, flag, negate=False, eq=False):
        if eq and flag:
            return (value != None) if negate else (value == None)   # noqa: E711
        return (value is not None if negate else value is None) if flag else not negate

    def maybe_none(self, value, flag, name):
        return value if flag else None

    def some(self, value, flag, name, where, raising):
        return value if flag else None

    def if_exp(self, cond, a, b, where):
        return a() if cond else b()

    def and_(self, *fs):
        v = True
        for f in fs:
            v = f()
            if not v:
                return v
        return v

    def or_(self, *fs):
        v = False
        for f in fs:
            v = f()
            if v:
                return v
        return v

    def not_(self, x):
        return not x

    def seq_eq(self, negate, left, right):
        return (left() != right()) if negate else (left() == right())

    # -- builtins -------------------------------------------------------------
    range_ = staticmethod(builtins.range)
    enumerate_ = staticmethod(builtins.enumerate)
    zip_ = staticmethod(builtins.zip)

    @staticmethod
    def product_iters(callee, args, k):
        from cppcodegen.frontend.products import product_iters
        return product_iters(callee, args, k, builtins.range)
    reversed_ = staticmethod(builtins.reversed)
    max_ = staticmethod(builtins.max)
    min_ = staticmethod(builtins.min)
    abs_ = staticmethod(builtins.abs)
    float_ = staticmethod(builtins.float)
    int_ = staticmethod(builtins.int)
    bool_ = staticmethod(builtins.bool)
    len_ = staticmethod(builtins.len)
    print_ = staticmethod(builtins.print)
    getitem = staticmethod(operator.getitem)

    def call(self, f, /, *args, **kwargs):
        if self.convert_calls and isinstance(f, (types.FunctionType, types.MethodType)):
            g = convert(f, self, self.ops_name)
            if g is not None:
                self.converted_calls += 1
                return g(*args, **kwargs)
        return f(*args, **kwargs)
