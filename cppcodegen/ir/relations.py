"""Facts of sizes as relations: the forms ``ShapeEnv`` (``shapes.py``) compares and decides.

In: sympy expressions and relations of size, loop and data symbols. Out: a relation in one
normal form (``lhs - rhs OP 0``), what the symbols' assumptions alone say of it, and an
expression's extremes over loop ranges (its remainders by constants at theirs too). Each is
a pure function of its arguments, cached: a program asks the same ones many times.
"""
from __future__ import annotations

import functools

import sympy


@functools.lru_cache(maxsize=4096)
def remainders_at(e, high: bool):
    """``e`` with each ``c * (u - m * floor(u / m))`` in it (an integer ``u``, a constant
    ``m > 0``: the remainder ``u % m``) replaced by its greatest (``high``) or least value."""
    for f in sorted(e.atoms(sympy.floor), key=str):
        u, m = sympy.fraction(sympy.together(f.args[0]))
        k = e.coeff(f)
        if not (m.is_Integer and m > 0 and k.is_Integer and k % m == 0) or \
                not all(c.is_Integer for c in sympy.Poly(u, *u.free_symbols).coeffs()
                        if u.free_symbols) or not u.free_symbols:
            continue
        c = -k // m
        rest = sympy.expand(e - c * (u - m * f))
        if rest.has(f):
            continue
        e = rest + c * ((m - 1) if (c > 0) == high else 0)
    return e


@functools.lru_cache(maxsize=8192)
def known(rel) -> bool | None:
    """``ShapeEnv.known``: a fact of the symbols' assumptions alone, so asked once per
    relation (sympy's assumptions are slow; a program asks the same ones many times)."""
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


@functools.lru_cache(maxsize=8192)
def normalize(rel):
    """Relations as ``lhs - rhs OP 0`` with < and <= turned around, so equal facts compare equal."""
    if rel in (sympy.true, sympy.false) or not isinstance(rel, sympy.Rel):
        return rel
    if isinstance(rel, sympy.StrictLessThan):
        rel = sympy.Gt(rel.rhs, rel.lhs, evaluate=False)
    elif isinstance(rel, sympy.LessThan):
        rel = sympy.Ge(rel.rhs, rel.lhs, evaluate=False)
    diff = sympy.expand(rel.lhs - rel.rhs)
    return type(rel)(diff, 0)


@functools.lru_cache(maxsize=8192)
def less_than(a, b):
    """``a < b`` in normal form."""
    return normalize(sympy.Lt(a, b))


@functools.lru_cache(maxsize=8192)
def extreme(e, ranges: tuple, high: bool):
    """The least (greatest) value of ``e`` over the loops' ranges (``ranges``: (induction
    variable, (lowest, highest)) from the outermost loop in): each variable, innermost first,
    replaced by the end of its range that makes ``e`` least (greatest). None when ``e`` is
    not linear in them with constant coefficients, once each ``u - m * floor(u / m)`` in it
    (``(i + di) % h`` of a periodic stencil) is taken for the remainder it is, between 0 and
    m - 1."""
    e = sympy.expand(e)
    if e.has(sympy.floor):
        e = remainders_at(e, high)
    for sym, (lo, hi) in reversed(ranges):
        if sym not in e.free_symbols:
            continue
        c = sympy.expand(e).coeff(sym)
        if not c.is_Integer or sympy.expand(e - c * sym).has(sym):
            return None
        e = sympy.expand(e.subs(sym, hi if (c > 0) == high else lo))
    return e


def memo_key(rel, ranges: tuple, data: dict):
    """``rel`` with the ranges of the loops open around it: ``ShapeEnv.decide``'s question,
    asked again when a loop body is traced again. None (not remembered) when a data symbol
    is involved (what is assumed of those grows) or there is nothing to decide."""
    if not isinstance(rel, sympy.Basic) or rel in (sympy.true, sympy.false):
        return None
    if data and any(getattr(e, "free_symbols", set()) & data.keys()
                    for e in (rel, *(b for _, r in ranges for b in r))):
        return None
    return rel, ranges
