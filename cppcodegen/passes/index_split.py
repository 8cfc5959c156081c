"""Index-set splitting: a pointwise loop over a join becomes one loop per part.

A join (``np.concatenate``, ``np.roll``, ``np.pad``, ``np.append``, a fresh array filled by
slices) reads as ``where(i0 >= 999, x[Max(0, Min(998, i0 - 999))], y[...])`` at each point:
a select per element, loads at clamped indices, no vector loop. Where the conditions compare
a loop index with constants, the points where their truth changes cut the loop's range into
pieces; in each piece every condition has one value, so the selects fold away and the clamps
(``Max``/``Min`` of affine indices whose range in the piece is known) reduce to one of their
arguments: ``u - np.roll(u, 1)`` becomes ``out[0] = u[0] - u[n-1]`` and a vector loop
``out[i] = u[i] - u[i-1]`` for i in [1, n).

In: a pointwise Stage, the axes its loops run over (outer ones already bound by the caller).
Out: (stage, {axis: (lo, hi)}) pieces (bounds: ints or size expressions), each with its body
specialized to its box; where nothing splits (or the pieces would be too many), the stage
with the clamps its whole domain decides reduced, or None when none is.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np
import sympy

from ..ir import ufuncs
from ..ir.loopir import Const, FloorDiv, Gather, Index, Load, Op, index_vars, walk

BOOL = np.dtype(bool)
COMPARISONS = frozenset(ufuncs.MIRRORED) | {"equal", "not_equal"}
MAX_PIECES = 27         # 3 per axis on 3 axes: a pad or roll of a 3-D array


def split(stage, axes) -> list | None:
    """[(specialized stage, {axis: (lo, hi)})] covering the axes' ranges, or None."""
    if stage.kind != "pointwise":
        return None
    vars_ = index_vars(len(stage.domain))
    conds = [c for c in (_condition(e, vars_) for e in walk(stage.body)) if c is not None]
    cuts = {}
    for a in axes:
        n = stage.domain[a]
        points = sorted({p for var, p in conds if var == vars_[a] and not (
            isinstance(p, int) and (p <= 0 or type(n) is int and p >= n))}, key=_large)
        if points:          # (a symbolic length: each piece ends at its point or at n)
            cuts[a] = list(zip([0] + points, points + [n]))
    known = {vars_[a]: (0, n - 1) for a, n in enumerate(stage.domain)}
    if not cuts or np.prod([len(c) for c in cuts.values()]) > MAX_PIECES:
        body = specialize(stage.body, known)    # no cut: the clamps the domain decides
        if body is stage.body:                  # (x[Min(15, i3)] over i3 < 16: x[i3])
            return None
        return [(with_body(stage, body), {})]
    out = []
    for box in itertools.product(*cuts.values()):
        ranges = dict(zip(cuts, box))
        here = dict(known)
        here.update({vars_[a]: (lo, hi - 1) for a, (lo, hi) in ranges.items()})
        out.append((with_body(stage, specialize(stage.body, here)),
                    {a: _bounds(cuts[a], lo, stage.domain[a]) for a, (lo, hi) in ranges.items()}))
    return out


def _bounds(pieces, lo, n):
    """The loop bounds of the piece starting at cut point ``lo``: every cut point clamped
    to be at least the one before it and at most the length ``n`` (symbolic points, or a
    symbolic length, may come in another order for some sizes: a piece then runs on fewer
    points, or none, and each point runs in one piece, where the piece's facts hold)."""
    if all(isinstance(p, int) for piece in pieces for p in piece):
        return next(piece for piece in pieces if piece[0] == lo)
    ends, prev = [], sympy.Integer(0)
    for _, b in pieces[:-1]:
        prev = sympy.Min(sympy.Max(b, prev), n)
        ends.append(prev)
    starts = [0] + ends
    k = [piece[0] for piece in pieces].index(lo)
    return starts[k], (ends + [n])[k]


def _large(p):
    """A cut point's order: its value when every size is large (the order that holds for
    the sizes worth a vector loop)."""
    p = sympy.sympify(p)
    return float(p.subs({s: 10 ** 6 for s in p.free_symbols}))


def with_body(stage, body):
    """``stage`` computing ``body`` (a multi-output loop: its members the group's parts)."""
    members = tuple(dataclasses.replace(m, body=b) for m, b in zip(stage.members, body.args)
                    ) if stage.members else ()
    return dataclasses.replace(stage, body=body, members=members)


def _condition(e, vars_=()):
    """(loop variable, the first value from which the truth of ``e`` may differ from the
    value before it) for a comparison of ``±var + k`` with an integer constant (``k`` an
    integer, or an expression of sizes: ``i0 <= n0 - 2``)."""
    if not (isinstance(e, Op) and e.name in ufuncs.MIRRORED and len(e.args) == 2):
        return None
    a, b = e.args
    name = e.name
    if isinstance(a, Const) and isinstance(b, Index):
        a, b, name = b, a, ufuncs.MIRRORED[name]
    if not (isinstance(a, Index) and isinstance(b, Const)) or not _integral(b.value):
        return None
    expr = sympy.expand(a.expr)
    mine = [v for v in expr.free_symbols if v in vars_] if vars_ else list(expr.free_symbols)
    if len(mine) != 1 or (not vars_ and len(expr.free_symbols) != 1):
        return None
    (var,) = mine
    coef, rest = expr.coeff(var), expr.subs(var, 0)
    if coef not in (1, -1) or rest.free_symbols & set(vars_) or \
            not (rest.is_Integer or rest.free_symbols and rest.is_polynomial()):
        return None
    c = int(b.value) - rest             # coef * var  <name>  c
    c = int(c) if c.is_Integer else c
    if coef == -1:
        name, c = ufuncs.MIRRORED[name], -c
    return var, (c + 1 if name in ("greater", "less_equal") else c)


def _integral(v) -> bool:
    return isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating))
                                                and float(v).is_integer())


def specialize(body, known: dict):
    """``body`` with the comparisons that hold alike over ``known`` (variable -> (lo, hi),
    inclusive) made constants, the selects on them folded, and the clamps of load indices
    that ``known`` decides reduced."""
    memo = {}
    for e in walk(body):
        memo[id(e)] = _rebuild(e, memo, known)
    return memo[id(body)]


def _rebuild(e, memo, known):
    if isinstance(e, Gather):           # (positions from array values, or from indices the
        return decided(e, known) or e   # box may decide in range: a plain load)
    if isinstance(e, Load):
        index = tuple(_clamp(ix, known) for ix in e.index)
        return e if index == e.index else dataclasses.replace(e, index=index)
    if isinstance(e, Index):
        expr = _clamp(e.expr, known)
        return e if expr == e.expr else dataclasses.replace(e, expr=expr)
    if not isinstance(e, Op):
        return e
    args = tuple(memo[id(a)] for a in e.args)
    if e.name in COMPARISONS and len(args) == 2:
        truth = _decide(e.name, args, known)
        if truth is not None:
            return Const(truth, BOOL)
    if e.name == "where" and isinstance(args[0], Const):
        return args[1] if bool(args[0].value) else args[2]
    if e.name in ("logical_and", "logical_or") and any(isinstance(a, Const) for a in args):
        fixed = [bool(a.value) for a in args if isinstance(a, Const)]
        other = [a for a in args if not isinstance(a, Const)]
        if e.name == "logical_and" and not all(fixed):
            return Const(False, BOOL)
        if e.name == "logical_or" and any(fixed):
            return Const(True, BOOL)
        if not other:
            return Const(e.name == "logical_and", BOOL)
        if other[0].dtype == BOOL and len(other) == 1:
            return other[0]
    if e.name == "logical_not" and isinstance(args[0], Const):
        return Const(not bool(args[0].value), BOOL)
    if all(a is b for a, b in zip(args, e.args)):
        return e
    return dataclasses.replace(e, args=args)


def decided(e, known):
    """The gather ``e`` with the positions ``known`` decides (an index expression of loop
    variables: ``un[i - 1]``, ``un[(i + 1) % n]``) within its axis, or within NumPy's
    negative range (it wraps), made plain: no check, no wrap. A plain load when that is
    every position, a gather of the others when some (``W[u, i]`` with ``u`` an array's
    value), else None."""
    if type(e) is not Gather or not known:
        return None
    subs, kept = {}, []
    for bind in e.binds:
        name, size, value, _ = bind
        expr = _clamp(value.expr, known) if isinstance(value, Index) else None
        span = None if expr is None else _interval(expr, known)
        if span is None or expr.has(sympy.floor, sympy.Mod, sympy.Min, sympy.Max, FloorDiv):
            kept.append(bind)
            continue
        lo, hi = span
        if _le(0, lo, known) and _le(hi, size - 1, known):
            subs[name] = expr
        elif _le(-size, lo, known) and _le(hi, -1, known):
            subs[name] = expr + size
        else:
            kept.append(bind)
    if not subs:
        return None
    index = tuple(sympy.expand(sympy.sympify(ix).xreplace(
        {v: subs[v.name] for v in sympy.sympify(ix).free_symbols if v.name in subs}))
        for ix in e.index)
    if kept:
        return dataclasses.replace(e, index=index, binds=tuple(kept))
    return Load(e.buf, index, e.dtype)


def _decide(name, args, known):
    a, b = args
    if not all(isinstance(x, (Index, Const)) for x in args):
        return None
    ia = _interval(a.expr, known) if isinstance(a, Index) else _const(a)
    ib = _interval(b.expr, known) if isinstance(b, Index) else _const(b)
    if ia is None or ib is None:
        return None
    (alo, ahi), (blo, bhi) = ia, ib
    le = lambda x, y: _le(x, y, known)
    lt = lambda x, y: _le(x + 1, y, known)
    if name in ("equal", "not_equal"):      # (one point each, the same one; or apart)
        same = le(ahi, alo) and le(bhi, blo) and le(ahi, blo) and le(blo, ahi)
        apart = lt(ahi, blo) or lt(bhi, alo)
        return None if not (same or apart) else same == (name == "equal")
    holds = {"greater_equal": le(bhi, alo), "greater": lt(bhi, alo),
             "less_equal": le(ahi, blo), "less": lt(ahi, blo)}[name]
    fails = {"greater_equal": lt(ahi, blo), "greater": le(ahi, blo),
             "less_equal": lt(bhi, alo), "less": le(bhi, alo)}[name]
    return True if holds else False if fails else None


def _le(a, b, known) -> bool:
    """``a <= b`` at every point of ``known`` that runs: ints compared, symbolic bounds with
    each interval's upper end at least its lower one (an empty range runs nothing)."""
    if isinstance(a, int) and isinstance(b, int):
        return a <= b
    d = sympy.expand(sympy.sympify(b) - sympy.sympify(a))
    if d.is_number:
        return bool(d >= 0)
    return bool(sympy.expand(d.xreplace(_running(tuple(known.values())))).is_nonnegative)


@functools.lru_cache(maxsize=64)
def _running(intervals) -> dict:
    """Each size ``s`` that ends an interval ``(lo, s + c)`` as ``lo - c`` plus a size >= 0:
    where the interval runs, its end is at least its start (one substitution per piece)."""
    subs = {}
    for lo, hi in intervals:
        hi = sympy.expand(sympy.sympify(hi))
        c = hi.as_coeff_Add()[0]
        s = hi - c
        if s.is_Symbol and s not in subs and isinstance(lo, (int, sympy.Integer)):
            subs[s] = sympy.Integer(lo) - c + sympy.Symbol(f"_{s}", integer=True,
                                                           nonnegative=True)
    return subs


def _const(c):
    return (c.value, c.value) if _integral(c.value) else None


def _interval(expr, known):
    """(lo, hi) of an integer index expression over ``known``, or None."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr), int(expr)
    if expr.is_Symbol:              # (a size or an outer loop's index: one value here)
        return known.get(expr, (expr, expr))
    if isinstance(expr, (sympy.Min, sympy.Max)):
        parts = [_interval(a, known) for a in expr.args]
        if None in parts:
            return None
        if not all(isinstance(v, int) for p in parts for v in p):
            return None                 # (symbolic ends: no order between them here)
        pick = min if isinstance(expr, sympy.Min) else max
        return pick(p[0] for p in parts), pick(p[1] for p in parts)
    if expr.is_Add:
        parts = [_interval(a, known) for a in expr.args]
        if None in parts:
            return None
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if expr.is_Mul and len(expr.args) == 2 and expr.args[0].is_Integer:
        k, inner = int(expr.args[0]), _interval(expr.args[1], known)
        if inner is None:
            return None
        return (k * inner[0], k * inner[1]) if k >= 0 else (k * inner[1], k * inner[0])
    return None


def _clamp(expr, known):
    """``expr`` with each Min/Max whose one argument is always the answer over ``known``
    replaced by that argument, and each floor division or modulo that ``known`` decides
    (its numerator within one multiple of the divisor) by its value."""
    expr = sympy.sympify(expr)
    if not expr.has(sympy.Min, sympy.Max, sympy.floor, sympy.Mod, FloorDiv):
        return expr
    return _clamped(expr, tuple(known.items()))


@functools.lru_cache(maxsize=4096)
def _clamped(expr, known_items):
    """``_clamp`` of one expression over one box, once (the stages of a program index their
    arrays alike: ``un[1:-1, 2:]`` in many of them; a Min/Max rebuilt by sympy is slow)."""
    known = dict(known_items)
    args = [_clamp(a, known) for a in expr.args]
    if all(a is b for a, b in zip(args, expr.args)) and not isinstance(
            expr, (sympy.floor, sympy.Mod, sympy.Min, sympy.Max, FloorDiv)):
        return expr
    if isinstance(expr, FloorDiv):     # a symbolic divisor d > 0: 0 where 0 <= num < d
        span = _interval(args[0], known)
        if span is not None and _le(0, span[0], known) and _le(span[1], args[1] - 1, known):
            return sympy.Integer(0)
        return expr.func(*args)
    if isinstance(expr, sympy.floor):  # floor(e / d) with e in one multiple of d's range
        num, den = sympy.fraction(sympy.together(args[0]))
        span = _interval(num, known) if den.is_Integer and den > 0 else None
        if span is not None and all(isinstance(v, int) for v in span) and \
                span[0] // int(den) == span[1] // int(den):
            return sympy.Integer(span[0] // int(den))
        return expr.func(*args)
    if isinstance(expr, sympy.Mod) and args[1].is_Integer and args[1] > 0:
        span = _interval(args[0], known)
        m = int(args[1])
        if span is not None and all(isinstance(v, int) for v in span) and \
                span[0] // m == span[1] // m:
            return sympy.expand(args[0] - m * (span[0] // m))
        return expr.func(*args)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        parts = [_interval(a, known) for a in args]
        if None not in parts:
            for k, (lo, hi) in enumerate(parts):
                others = [p for j, p in enumerate(parts) if j != k]
                if isinstance(expr, sympy.Min) and all(_le(hi, p[0], known) for p in others):
                    return args[k]
                if isinstance(expr, sympy.Max) and all(_le(p[1], lo, known) for p in others):
                    return args[k]
    return expr.func(*args)


def within_domains(stages) -> list:
    """``stages`` (and those of the loops and branches among them) with each pointwise or
    reduction body specialized to its own domain where it compares a loop index: a stage
    that reads back a part just stored (``R[:k, k] = Q[:, :k].T @ a`` then ``Q[:, :k] @ R[:k,
    k]``) selects per element between the part and the array, ``where(i1 - k + 1 <= 0,
    part[Min(i1, k - 1)], R[i1, lv0])``, which its domain ``i1 < k`` decides once."""
    out = []
    for s in stages:
        if s.regions:
            s = dataclasses.replace(s, regions=tuple(within_domains(r) for r in s.regions))
        elif s.kind in ("pointwise", "reduction") and s.body is not None and not s.members \
                and any(isinstance(e, Op) and e.name in COMPARISONS and
                        any(isinstance(a, Index) for a in e.args) for e in walk(s.body)):
            known = {v: (0, n - 1) for v, n in zip(index_vars(len(s.domain)), s.domain)}
            body = specialize(s.body, known)
            s = s if body is s.body else with_body(s, body)
        out.append(s)
    return out
