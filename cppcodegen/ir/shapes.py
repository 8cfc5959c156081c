"""Symbolic sizes for dynamic shapes.

With ``compile(fn, dynamic=True)`` (or after an automatic-dynamic recompile) an input
dimension may be a sympy symbol (``n0``, ``n1``, ...) instead of an int, one per dimension.
Sizes 0 and 1 in the traced call stay ints (broadcasting depends on them). When two different
sizes meet in broadcasting (or a matrix product), the trace decides from their values and
records the guard (``n0 == n1``; a derived size such as ``n0 - 9`` may also be decided equal to
1). A symbol may take any size >= 0 in later calls, as long as every guard holds.

While tracing, a ``ShapeEnv`` holds each symbol's value in the traced call (its *hint*) and
collects the guards that the trace relied on beyond those facts (``n0 - 2 >= 1`` when a
slice's length was decided from it, ``n0 == 7`` when a size was used as a Python int).
Shapes inside the compiler are tuples of ints and sympy expressions; the user's function sees
``SymInt`` objects, which do arithmetic symbolically and answer comparisons from the hints,
recording a guard each time.

Guards and shape expressions reach the runtime as Python expression text (``guardtext.py``),
which the runtime evaluates without sympy.
"""
from __future__ import annotations

import functools
import math
import threading

import numpy as np
import sympy

from .relations import extreme as _extreme, known as _known, less_than as _less, \
    memo_key as _memo_key, normalize as _normalize



def size_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


def value_symbol(index: int) -> sympy.Symbol:
    """The value of the integer argument ``index`` used as a size (``range(n)``,
    ``np.zeros(n)``): read from the argument at each call (``v1``). Any int, negative too."""
    return sympy.Symbol(f"v{index}", integer=True)


def data_symbol(k: int, nonnegative: bool = False) -> sympy.Symbol:
    """A loop bound computed from array values (``range(indptr[i], indptr[i + 1])``, a while
    loop's counter) or the start or length of a slice with such bounds (``nonnegative``):
    ``dv0``, ``dv1``, ...; C++ reads it from its buffer where the loop starts (where the
    slice's ``bind`` node runs). Nothing else is known about it while tracing: facts that
    depend on it are ``LoopDependent``."""
    return sympy.Symbol(f"dv{k}", integer=True, nonnegative=nonnegative or None)


def loop_symbol(k: int) -> sympy.Symbol:
    """The induction variable of the k-th compiled loop of a trace (``lv0``, ``lv1``, ...)."""
    return sympy.Symbol(f"lv{k}", integer=True)


class LoopDependent(Exception):
    """A fact about sizes that holds for some iterations of a compiled loop and not others."""


def is_symbolic(d) -> bool:
    return isinstance(d, (sympy.Basic, SymInt)) and not (
        isinstance(d, sympy.Basic) and d.is_Integer)


def canon(d):
    """A dimension as the compiler stores it: an int, or a sympy expression."""
    if isinstance(d, SymInt):
        d = d.expr
    if isinstance(d, sympy.Basic):
        d = sympy.expand(d)
        return int(d) if d.is_Integer else d
    return int(d)


def canon_shape(shape) -> tuple:
    return tuple(canon(d) for d in shape)


def prod(dims):
    """The product of sizes: an int when all are ints."""
    out = 1
    for d in dims:
        out = out * canon(d)
    return canon(out)


def has_symbols(shape) -> bool:
    return any(isinstance(d, sympy.Basic) for d in shape)


# --------------------------------------------------------------------------- the trace's env

class ShapeEnv:
    """Hints and guards of one trace."""

    def __init__(self, hints: dict):
        self.hints = dict(hints)          # Symbol -> int
        self.guards: list = []            # sympy relationals the variant needs
        self.loops: dict = {}             # induction variable -> (lowest, highest) value
        self.retired: dict = {}           # the same, of loops already traced
        self.values: dict = {}            # value symbol -> the index of its argument
        self.data: dict = {}              # data symbol -> the graph node that computes it
        self.slices: dict = {}            # a data slice's bounds -> its symbols (dataslice.py)
        self.counts: dict = {}            # count symbol -> the step giving it (counted.py)
        self.assumed: set = set()         # differences of data sizes taken as 0, both signs
                                          # (broadcast: checked when the program runs)
        self.decided: dict = {}           # decide's answers and the guards they recorded

    def hint(self, expr) -> int:
        expr = canon(expr)
        if isinstance(expr, int):
            return expr
        value = sympy.sympify(expr.xreplace(self.hints))
        if not value.is_Integer:          # floor/Mod/Max of numbers evaluate to Integer
            value = sympy.simplify(value)
        return int(value)

    def known(self, rel) -> bool | None:
        """True/False when ``rel`` (normalized: ``e >= 0``, ``e > 0``, ``e == 0`` or
        ``e != 0``) holds for all sizes (symbols are integers >= 0), else None."""
        return _known(rel)

    def decide(self, rel) -> bool:
        """The truth of ``rel`` in the traced call; recorded as a guard unless it is implied.
        Asked again (the same index checked in each trace of a loop body), the answer and
        the guards it recorded are replayed."""
        key = _memo_key(rel, tuple(self.loops.items()), self.data)
        if key is None:
            return self._decide(rel)
        if key not in self.decided:
            start = len(self.guards)
            try:
                self.decided[key] = (self._decide(rel), self.guards[start:])
            except LoopDependent:
                self.decided[key] = (None, self.guards[start:])
        value, guards = self.decided[key]
        self.guards += [g for g in guards if g not in self.guards]
        if value is None:
            raise LoopDependent(rel)
        return value

    def _decide(self, rel) -> bool:
        rel = _normalize(rel)
        if rel in (sympy.true, sympy.false):
            return bool(rel)
        if self.loops and rel.free_symbols & set(self.loops):
            return self._decide_for_all(rel)
        if self.data and rel.free_symbols & set(self.data):
            known = self.known(rel)     # values from arrays: only what holds for all of them
            if known is None and isinstance(rel, (sympy.Eq, sympy.Ne)) and \
                    sympy.expand(rel.lhs) in self.assumed:
                known = isinstance(rel, sympy.Eq)
            if known is None:
                raise LoopDependent(rel)
            return known
        known = self.known(rel)
        if known is not None:
            return known
        value = bool(rel.xreplace(self.hints))
        guard = rel if value else rel.negated
        if guard not in self.guards:
            self.guards.append(guard)
        return value

    def _decide_for_all(self, rel) -> bool:
        """``rel`` in every iteration of the enclosing compiled loops (an empty iteration
        decides nothing): True or False when it is the same for all, guarded on the sizes;
        otherwise ``LoopDependent``."""
        ranges = tuple(self.loops.items())
        lo, hi = _extreme(rel.lhs, ranges, False), _extreme(rel.lhs, ranges, True)
        if lo is None or hi is None:
            raise LoopDependent(rel)
        negate = isinstance(rel, sympy.Ne)
        if isinstance(rel, sympy.GreaterThan):
            cases = [(True, sympy.Ge(lo, 0)), (False, sympy.Lt(hi, 0))]
        elif isinstance(rel, sympy.StrictGreaterThan):
            cases = [(True, sympy.Gt(lo, 0)), (False, sympy.Le(hi, 0))]
        else:                           # == 0 (!= 0 negated): zero throughout, or never
            cases = [(False, sympy.Gt(lo, 0)), (False, sympy.Lt(hi, 0))]
            if sympy.expand(lo - hi) == 0:
                cases.append((True, sympy.Eq(lo, 0)))
        holding = [(value, fact) for value, fact in cases if self._holds(fact)]
        if len(holding) > 1:            # only in a loop empty in this call (lo > hi): the
            holding.sort(key=lambda c: not self._implied(c[1]))     # answer that needs no
        for value, fact in holding[:1]:                             # guard, if one does
            self._decide(fact)          # (recorded as a guard unless implied)
            return value != negate
        raise LoopDependent(rel)

    def _implied(self, rel) -> bool:
        """``rel`` holds for every value of the symbols."""
        rel = _normalize(rel)
        return rel == sympy.true or (rel != sympy.false and self.known(rel) is True)

    def _holds(self, rel) -> bool:
        """The truth of ``rel`` (no loop indices in it) in this call, without a guard."""
        rel = _normalize(rel)
        if rel in (sympy.true, sympy.false):
            return bool(rel)
        known = self.known(rel)
        if self.data and rel.free_symbols & set(self.data):
            return known is True        # no value to look at: only what always holds
        return known if known is not None else bool(rel.xreplace(self.hints))

    def specialize(self, expr) -> int:
        """``expr`` as a plain int: its value now, guarded."""
        if getattr(canon(expr), "free_symbols", set()) & (set(self.loops) | set(self.data)):
            raise LoopDependent(expr)
        value = self.hint(expr)
        if is_symbolic(canon(expr)):
            self.decide(sympy.Eq(canon(expr), value))
        return value


_LOCAL = threading.local()


def current() -> ShapeEnv | None:
    return getattr(_LOCAL, "env", None)


def set_current(env) -> None:
    """Makes ``env`` (or None) the trace's shape environment from now on."""
    _LOCAL.env = env


class active:
    """``with active(env):`` makes ``env`` the trace's shape environment."""

    def __init__(self, env):
        self.env = env

    def __enter__(self):
        self.saved = current()
        _LOCAL.env = self.env
        return self.env

    def __exit__(self, *exc):
        _LOCAL.env = self.saved


def _env() -> ShapeEnv:
    env = current()
    if env is None:
        raise AssertionError("symbolic size outside a dynamic trace")
    return env


def identical(a, b) -> bool:
    """Are two sizes (ints or sympy expressions) equal for every value of their symbols? No
    guard is recorded: a size that is only equal for the traced values is not identical."""
    try:
        a, b = canon(a), canon(b)
        return a == b or sympy.expand(a - b) == 0
    except (TypeError, ValueError, AttributeError):
        return False


def equal(a, b) -> bool:
    """a == b for sizes, guarded when it depends on the symbols' values."""
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if sympy.expand(a - b) == 0:
        return True
    return _env().decide(sympy.Eq(a, b))


def less(a, b) -> bool:
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a < b
    return _env().decide(_less(a, b))



def as_int(d) -> int:
    """A size used where only an int will do (a Python range, a constant shape)."""
    d = canon(d)
    return d if isinstance(d, int) else _env().specialize(d)


# --------------------------------------------------------------------------- SymInt

class SymInt:
    """A symbolic size as the user's function sees it (``x.shape[0]``): arithmetic stays
    symbolic; comparisons, ``int()`` and ``range()`` use the traced call's value and add a
    guard, so a later call where the answer differs compiles again."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    @staticmethod
    def wrap(d):
        d = canon(d)
        return d if isinstance(d, int) else SymInt(d)

    def _arith(self, other, fn):
        if isinstance(other, SymInt):
            other = other.expr
        elif isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            other = int(other)
        elif isinstance(other, (float, complex, np.inexact)):
            return fn(self._number(), other)    # n * 0.5
        else:
            return NotImplemented
        return SymInt.wrap(fn(self.expr, other))

    def _number(self):
        """The size as a number (``lv0 * 0.5``, ``2.0 / (n - 1)``): a traced value, so one build
        serves every size (where Python needs the number itself, its value in this call,
        guarded: ``frontend/iteration.pinned_number``); this call's int without a tracer."""
        return TRACED_VALUE(self.expr) if TRACED_VALUE is not None else self.__index__()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.sqrt(x.shape[0])``: the ufunc of the size as a number."""
        return getattr(ufunc, method)(*[v._number() if isinstance(v, SymInt) else v
                                        for v in inputs], **kwargs)

    def _in_loop(self) -> bool:
        """Does the value change while the function runs: a loop's index, or a slice's length
        or a bound read from array values in a compiled loop?"""
        env = current()
        return bool(env is not None and (env.loops or env.data) and TRACED_VALUE is not None
                    and self.expr.free_symbols & (set(env.loops) | set(env.data)))

    def _decided(self, decide, traced):
        """A comparison: a Python bool when it holds alike in every iteration of the
        enclosing compiled loops (or there are none), else a traced bool."""
        try:
            return decide()
        except LoopDependent:
            if TRACED_VALUE is None:
                raise
            return traced(TRACED_VALUE(self.expr))

    def __add__(self, o): return self._arith(o, lambda a, b: a + b)
    def __radd__(self, o): return self._arith(o, lambda a, b: b + a)
    def __sub__(self, o): return self._arith(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._arith(o, lambda a, b: b - a)
    def __mul__(self, o): return self._arith(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._arith(o, lambda a, b: b * a)
    def __neg__(self): return SymInt.wrap(-self.expr)

    def __floordiv__(self, o): return self._arith(o, floordiv)
    def __rfloordiv__(self, o): return self._arith(o, lambda a, b: floordiv(b, a))
    def __mod__(self, o): return self._arith(o, lambda a, b: canon(a) - canon(b) * floordiv(a, b))

    def __pow__(self, o):
        """An int power of a size stays a size; ``n ** 0.5`` is the power of the number."""
        if isinstance(o, (int, np.integer)) and not isinstance(o, bool) and o >= 0:
            return self._arith(o, lambda a, b: a ** b)
        return self._number() ** (o._number() if isinstance(o, SymInt) else o)

    def __rpow__(self, o):
        return o ** self._number()

    def __rmod__(self, o):
        return self._arith(o, lambda a, b: canon(b) - canon(a) * floordiv(b, a))

    def __divmod__(self, o): return (self // o, self % o)
    def __rdivmod__(self, o): return (o // self, o % self)

    def __rshift__(self, o):        # n >> 1: n // 2, a size (a radix-2 FFT's half)
        if type(o) is int and o >= 0:
            return self // (1 << o)
        return self._bitwise(o, lambda a, b: a >> b)

    def __lshift__(self, o):
        if type(o) is int and o >= 0:
            return self * (1 << o)
        return self._bitwise(o, lambda a, b: a << b)

    def _bitwise(self, o, op, reflected=False):
        """``n & 6``, ``n ^ m``: of the size as a number (this call's, guarded; a traced
        value in a loop)."""
        if not isinstance(o, (int, np.integer, SymInt)):
            return NotImplemented
        a, b = self._number(), o._number() if isinstance(o, SymInt) else o
        return op(b, a) if reflected else op(a, b)

    def __and__(self, o): return self._bitwise(o, lambda a, b: a & b)
    def __rand__(self, o): return self._bitwise(o, lambda a, b: a & b, True)
    def __or__(self, o): return self._bitwise(o, lambda a, b: a | b)
    def __ror__(self, o): return self._bitwise(o, lambda a, b: a | b, True)
    def __xor__(self, o): return self._bitwise(o, lambda a, b: a ^ b)
    def __rxor__(self, o): return self._bitwise(o, lambda a, b: a ^ b, True)
    def __rrshift__(self, o): return self._bitwise(o, lambda a, b: a >> b, True)
    def __rlshift__(self, o): return self._bitwise(o, lambda a, b: a << b, True)

    # results that must be Python values: decided from the hint, guarded
    def __index__(self):
        try:
            return _env().specialize(self.expr)
        except LoopDependent:
            raise TypeError(f"the loop variable {self.expr} is used where a Python int is "
                            "needed (a shape, a range bound of a Python loop, int())") from None
    __int__ = __index__

    def __float__(self): return float(self.__index__())
    def bit_length(self): return self.__index__().bit_length()     # (a radix-2 FFT's log2 n)

    def __truediv__(self, o):
        if not isinstance(o, (int, float, complex, SymInt, np.number)):
            return NotImplemented          # an array: the array's operator takes it
        return self._number() / (o._number() if isinstance(o, SymInt) else o)

    def __rtruediv__(self, o):
        return o / self._number() if isinstance(o, (int, float, complex)) else NotImplemented

    def __bool__(self):
        return self._decided(lambda: not equal(self.expr, 0), lambda v: v != 0)

    def __eq__(self, o):
        o = _integral(o, "eq")
        if isinstance(o, (int, np.integer, SymInt)) and not isinstance(o, bool):
            return self._decided(lambda: equal(self.expr, o), lambda v: v == _value(o))
        return o if isinstance(o, bool) else NotImplemented

    def __ne__(self, o):
        o = _integral(o, "ne")
        if isinstance(o, (int, np.integer, SymInt)) and not isinstance(o, bool):
            return self._decided(lambda: not equal(self.expr, o), lambda v: v != _value(o))
        return o if isinstance(o, bool) else NotImplemented

    def _order(self, o, op, decide, traced):
        o = _integral(o, op)
        if isinstance(o, bool) or o is NotImplemented:
            return o
        return self._decided(lambda: decide(o), lambda v: traced(v, _value(o)))

    def __lt__(self, o): return self._order(o, "lt", lambda o: less(self.expr, o), lambda v, w: v < w)
    def __gt__(self, o): return self._order(o, "gt", lambda o: less(o, self.expr), lambda v, w: v > w)
    def __le__(self, o): return self._order(o, "le", lambda o: not less(o, self.expr), lambda v, w: v <= w)
    def __ge__(self, o): return self._order(o, "ge", lambda o: not less(self.expr, o), lambda v, w: v >= w)
    def __hash__(self): return hash(self.__index__())

    def __format__(self, spec):
        return self._user_text(spec, "")

    def __str__(self):
        return self._user_text("", "s")

    def __repr__(self):
        return self._user_text("", "r")

    def _user_text(self, spec, conversion):
        """``f"{i:3d}"``, ``str(i)``, ``f"{i!r}"`` of a loop's index or a symbolic size in
        the user's code: a placeholder print() fills in when the program runs (FORMAT)."""
        from ..errors import called_by_user
        if FORMAT is not None and called_by_user(2):
            return FORMAT(self, spec, conversion)
        return format(self._text(), spec)

    def _text(self):
        env = current()
        try:
            now = f" (= {env.hint(self.expr)} now)" if env else ""
        except (TypeError, ValueError):     # (a loop's index: no value while tracing)
            now = ""
        return f"{self.expr}{now}"


TRACED_VALUE = FORMAT = None    # set by the tracer (frontend/iteration.traced_sizes)


def _integral(o, op):
    """The other side of ``size OP o`` as an int where the answer is the same for every
    integer size (``n > 1.5`` is ``n > 1``); a bool where it is decided for all (NaN,
    infinities, ``n == 1.5``); NotImplemented for a traced value (its own operator then
    compares, giving a traced bool)."""
    if isinstance(o, (float, np.floating)):
        if o != o:
            return op == "ne"
        if o in (math.inf, -math.inf):
            return op == "ne" or (op in ("lt", "le")) == (o > 0)
        if o == int(o):
            return int(o)
        if op in ("eq", "ne"):
            return op == "ne"
        return math.floor(o) if op in ("le", "gt") else math.ceil(o)
    if isinstance(o, (int, np.integer, SymInt)):
        return o
    return NotImplemented


def _value(o):
    if isinstance(o, SymInt) and o._in_loop():
        return TRACED_VALUE(o.expr)
    return o.expr if isinstance(o, SymInt) else o


def floordiv(a, b):
    """a // b for sizes: exact when ``b`` divides ``a``, otherwise the traced value, guarded."""
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(a, int) and a == 0:
        return 0
    q = _exact_quotient(a, b)
    if q is not None:
        return q
    if isinstance(b, int) and b > 0:
        return canon(sympy.floor(sympy.sympify(a) / b))
    env = _env()
    if getattr(a, "free_symbols", set()) & set(env.loops) and b.free_symbols.isdisjoint(
            env.loops) and env.decide(sympy.Gt(b, 0)):      # ((i + 1) % n in a loop over i)
        from .loopir import FloorDiv
        return FloorDiv(a, b)
    return as_int(a) // as_int(b)


@functools.lru_cache(maxsize=4096)
def _exact_quotient(a, b):
    """``a / b`` when it is a polynomial of integer coefficients (``(n0 * 16) // n0``), else
    None. sympy's cancel (milliseconds each) only where every symbol of ``b`` is in ``a``:
    ``(i - 1) % n`` of a loop index never divides, and a stencil's neighbour loop asks it
    hundreds of times."""
    if not isinstance(b, int) and not b.free_symbols <= getattr(a, "free_symbols", set()):
        return None
    q = sympy.cancel(sympy.sympify(a) / b)
    num, den = sympy.fraction(q)
    if den == 1 and (q.is_Integer or q.is_polynomial() and q.free_symbols and all(
            c.is_Integer for c in sympy.Poly(q).coeffs())):
        return canon(q)
    return None


def exact_div(a, b):
    """a / b for a size that must divide exactly (a reshape's -1): symbolic when ``b``'s
    symbols cancel, with the divisibility as a guard when an int remains below the line."""
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    q = sympy.cancel(sympy.sympify(a) / b)
    if q.is_Integer:                # (n0 * 16) / n0: the symbols cancel
        return int(q)
    num, den = sympy.fraction(q)
    if den.is_Integer and q.free_symbols and q.is_polynomial() and all(c.is_Rational for c in sympy.Poly(q).coeffs()):
        num = sympy.expand(num)
        if den != 1:
            _env().decide(sympy.Eq(sympy.Mod(num, den), 0))
        return canon(num if den == 1 else sympy.floor(num / den))
    return as_int(a) // as_int(b)
