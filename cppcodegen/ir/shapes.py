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

Guards and shape expressions reach the runtime as Python expression text (``pyexpr``), which
the runtime evaluates without sympy.
"""
from __future__ import annotations

import threading

import numpy as np
import sympy

from ..errors import UnsupportedError


def size_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


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
        e = sympy.expand(rel.lhs)
        pos, nonneg = e.is_positive, e.is_nonnegative
        neg, nonpos = (-e).is_positive, (-e).is_nonnegative
        if isinstance(rel, sympy.GreaterThan):
            return True if nonneg else False if neg else None
        if isinstance(rel, sympy.StrictGreaterThan):
            return True if pos else False if nonpos else None
        if isinstance(rel, (sympy.Eq, sympy.Ne)):
            same = True if e == 0 else False if (pos or neg) else None
            if same is None:
                return None
            return same if isinstance(rel, sympy.Eq) else not same
        return None

    def decide(self, rel) -> bool:
        """The truth of ``rel`` in the traced call; recorded as a guard unless it is implied."""
        rel = _normalize(rel)
        if rel in (sympy.true, sympy.false):
            return bool(rel)
        known = self.known(rel)
        if known is not None:
            return known
        value = bool(rel.xreplace(self.hints))
        guard = rel if value else rel.negated
        if guard not in self.guards:
            self.guards.append(guard)
        return value

    def specialize(self, expr) -> int:
        """``expr`` as a plain int: its value now, guarded."""
        value = self.hint(expr)
        if is_symbolic(canon(expr)):
            self.decide(sympy.Eq(canon(expr), value))
        return value


def _normalize(rel):
    """Relations as ``lhs - rhs OP 0`` with < and <= turned around, so equal facts compare equal."""
    if rel in (sympy.true, sympy.false) or not isinstance(rel, sympy.Rel):
        return rel
    if isinstance(rel, sympy.StrictLessThan):
        rel = sympy.Gt(rel.rhs, rel.lhs, evaluate=False)
    elif isinstance(rel, sympy.LessThan):
        rel = sympy.Ge(rel.rhs, rel.lhs, evaluate=False)
    diff = sympy.expand(rel.lhs - rel.rhs)
    return type(rel)(diff, 0)


_LOCAL = threading.local()


def current() -> ShapeEnv | None:
    return getattr(_LOCAL, "env", None)


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
    return _env().decide(sympy.Lt(a, b))


def as_int(d) -> int:
    """A size used where only an int will do (a Python range, a constant shape)."""
    d = canon(d)
    return d if isinstance(d, int) else _env().specialize(d)


def broadcast_shapes(*shapes):
    """NumPy's broadcasting of shapes whose sizes may be symbolic. A derived size (``s0 - 2``)
    that meets another size is decided from its value and guarded."""
    shapes = [canon_shape(s) for s in shapes]
    if not any(has_symbols(s) for s in shapes):
        return np.broadcast_shapes(*shapes)
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        dims = [s[len(s) - ndim + k] for s in shapes if len(s) - ndim + k >= 0]
        distinct = []
        for d in dims:
            if not any(isinstance(d, int) and isinstance(e, int) and d == e or
                       not isinstance(d, int) and not isinstance(e, int) and sympy.expand(d - e) == 0
                       for e in distinct):
                distinct.append(d)
        if len(distinct) == 1:
            out.append(distinct[0])
            continue
        result = None
        for d in distinct:
            if isinstance(d, int) and d == 1:
                continue
            if not isinstance(d, int) and not d.is_Symbol and equal(d, 1):
                continue                        # a derived size that is 1 in this call
            if result is None:
                result = d
            elif not equal(result, d):
                raise ValueError(f"shape mismatch: sizes {result} and {d}")
            elif isinstance(d, int):
                result = d                      # equal to a fixed size: keep the int
        out.append(1 if result is None else result)
    return tuple(out)


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
        else:
            return NotImplemented
        return SymInt.wrap(fn(self.expr, other))

    def __add__(self, o): return self._arith(o, lambda a, b: a + b)
    def __radd__(self, o): return self._arith(o, lambda a, b: b + a)
    def __sub__(self, o): return self._arith(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._arith(o, lambda a, b: b - a)
    def __mul__(self, o): return self._arith(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._arith(o, lambda a, b: b * a)
    def __neg__(self): return SymInt.wrap(-self.expr)

    def __floordiv__(self, o):
        return self._arith(o, floordiv)

    def __rfloordiv__(self, o):
        return self._arith(o, lambda a, b: floordiv(b, a))

    def __mod__(self, o):
        return self._arith(o, lambda a, b: canon(a) - canon(b) * floordiv(a, b))

    # results that must be Python values: decided from the hint, guarded
    def __index__(self): return _env().specialize(self.expr)
    __int__ = __index__

    def __float__(self): return float(self.__index__())
    def __truediv__(self, o):
        if not isinstance(o, (int, float, SymInt)):
            return NotImplemented          # an array: the array's operator takes it
        return self.__index__() / (o.__index__() if isinstance(o, SymInt) else o)

    def __rtruediv__(self, o):
        return o / self.__index__() if isinstance(o, (int, float)) else NotImplemented
    def __bool__(self): return not equal(self.expr, 0)
    def __eq__(self, o):
        if isinstance(o, (int, np.integer, SymInt)) and not isinstance(o, bool):
            return equal(self.expr, o)
        return NotImplemented
    def __ne__(self, o):
        r = self.__eq__(o)
        return r if r is NotImplemented else not r
    def __lt__(self, o): return less(self.expr, o)
    def __gt__(self, o): return less(o, self.expr)
    def __le__(self, o): return not less(o, self.expr)
    def __ge__(self, o): return not less(self.expr, o)
    def __hash__(self): return hash(self.__index__())

    def __repr__(self):
        env = current()
        return f"{self.expr}" + (f" (= {env.hint(self.expr)} now)" if env else "")


def floordiv(a, b):
    """a // b for sizes: exact when ``b`` divides ``a``, otherwise the traced value, guarded."""
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    q = sympy.cancel(sympy.sympify(a) / b)
    num, den = sympy.fraction(q)
    if den == 1 and q.is_polynomial() and all(c.is_Integer for c in sympy.Poly(q).coeffs()):
        return canon(q)
    if isinstance(b, int) and b > 0:
        return canon(sympy.floor(sympy.sympify(a) / b))
    return as_int(a) // as_int(b)


def exact_div(a, b):
    """a / b for a size that must divide exactly (a reshape's -1): symbolic when ``b``'s
    symbols cancel, with the divisibility as a guard when an int remains below the line."""
    a, b = canon(a), canon(b)
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    q = sympy.cancel(sympy.sympify(a) / b)
    num, den = sympy.fraction(q)
    if den.is_Integer and q.is_polynomial() and all(c.is_Rational for c in sympy.Poly(q).coeffs()):
        num = sympy.expand(num)
        if den != 1:
            _env().decide(sympy.Eq(sympy.Mod(num, den), 0))
        return canon(num if den == 1 else sympy.floor(num / den))
    return as_int(a) // as_int(b)


# --------------------------------------------------------------------------- runtime text

def guard_text(rel) -> str:
    """A guard for people: ``n0 - 2 >= 3`` rather than ``n0 - 5 >= 0``."""
    ops = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">"}
    op = next((o for cls, o in ops.items() if isinstance(rel, cls)), None)
    if op is None or rel.rhs != 0:
        return str(rel)
    const, rest = sympy.expand(rel.lhs).as_coeff_Add()
    if rest == 0:
        return str(rel)
    if rest.could_extract_minus_sign():
        rest, const = -rest, -const
        op = {">=": "<=", ">": "<"}.get(op, op)
    return f"{sympy.sstr(rest)} {op} {sympy.sstr(-const)}"


def pyexpr(expr) -> str:
    """Python source for a size expression or a guard, evaluated by the runtime with the sizes
    bound to names (``runtime.compiled.size_eval``): no sympy there."""
    if isinstance(expr, (int, np.integer)):
        return str(int(expr))
    if expr is sympy.true:
        return "True"
    if expr is sympy.false:
        return "False"
    if expr.is_Integer:
        return str(int(expr))
    if expr.is_Rational:
        return f"Fraction({expr.p}, {expr.q})"
    if expr.is_Symbol:
        return expr.name
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer:
        e = int(expr.exp)
        base = pyexpr(expr.base)
        return f"({base} ** {e})" if e > 0 else f"Fraction(1, {base} ** {-e})"
    if isinstance(expr, sympy.floor):
        return f"floor({pyexpr(expr.args[0])})"
    if isinstance(expr, sympy.ceiling):
        return f"ceil({pyexpr(expr.args[0])})"
    if isinstance(expr, sympy.Max):
        return "max(" + ", ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Min):
        return "min(" + ", ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mod):
        return f"({pyexpr(expr.args[0])} % {pyexpr(expr.args[1])})"
    ops = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=",
           sympy.Lt: "<"}
    for cls, op in ops.items():
        if isinstance(expr, cls):
            return f"({pyexpr(expr.lhs)} {op} {pyexpr(expr.rhs)})"
    raise UnsupportedError(f"size expression {expr} cannot be evaluated at run time")

