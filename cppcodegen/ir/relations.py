"""Facts of sizes as relations: the forms ``ShapeEnv`` (``shapes.py``) compares and decides.

In: sympy expressions and relations of size, loop and data symbols. Out: a relation in one
normal form (``lhs - rhs OP 0``), what the symbols' assumptions alone say of it, and an
expression's remainders by constants at their extremes (for ranges over a loop). Each is
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
