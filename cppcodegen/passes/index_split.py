"""Index-set splitting: a pointwise loop over a join becomes one loop per part.

A join (``np.concatenate``, ``np.roll``, ``np.pad``, ``np.append``, a fresh array filled by
slices) reads as ``where(i0 >= 999, x[Max(0, Min(998, i0 - 999))], y[...])`` at each point:
a select per element, loads at clamped indices, no vector loop. Where the conditions compare
a loop index with constants, the points where their truth changes cut the loop's range into
pieces; in each piece every condition has one value, so the selects fold away and the clamps
(``Max``/``Min`` of affine indices whose range in the piece is known) reduce to one of their
arguments: ``u - np.roll(u, 1)`` becomes ``out[0] = u[0] - u[n-1]`` and a vector loop
``out[i] = u[i] - u[i-1]`` for i in [1, n).

In: a pointwise Stage, the axes its loops run over (outer ones already bound by the caller),
and integer domain sizes. Out: (stage, {axis: (lo, hi)}) pieces, each with its body
specialized to its box; where nothing splits (or the pieces would be too many), the stage
with the clamps its whole domain decides reduced, or None when none is.
"""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import sympy

from ..ir.loopir import Const, Gather, Index, Load, Op, index_vars, walk

BOOL = np.dtype(bool)
MAX_PIECES = 27         # 3 per axis on 3 axes: a pad or roll of a 3-D array
_FLIP = {"greater_equal": "less_equal", "less_equal": "greater_equal", "greater": "less",
         "less": "greater"}


def split(stage, axes) -> list | None:
    """[(specialized stage, {axis: (lo, hi)})] covering the axes' ranges, or None."""
    if stage.kind != "pointwise":
        return None
    vars_ = index_vars(len(stage.domain))
    conds = [c for c in (_condition(e) for e in walk(stage.body)) if c is not None]
    cuts = {}
    for a in axes:
        n = stage.domain[a]
        if type(n) is not int:
            continue
        points = sorted({p for var, p in conds if var == vars_[a] and 0 < p < n})
        if points:
            cuts[a] = list(zip([0] + points, points + [n]))
    known = {vars_[a]: (0, n - 1) for a, n in enumerate(stage.domain) if type(n) is int}
    if not cuts or np.prod([len(c) for c in cuts.values()]) > MAX_PIECES:
        body = specialize(stage.body, known)    # no cut: the clamps the domain decides
        if body is stage.body:                  # (x[Min(15, i3)] over i3 < 16: x[i3])
            return None
        return [(_with_body(stage, body), {})]
    out = []
    for box in itertools.product(*cuts.values()):
        ranges = dict(zip(cuts, box))
        here = dict(known)
        here.update({vars_[a]: (lo, hi - 1) for a, (lo, hi) in ranges.items()})
        out.append((_with_body(stage, specialize(stage.body, here)),
                    {a: (str(lo), str(hi)) for a, (lo, hi) in ranges.items()}))
    return out


def _with_body(stage, body):
    """``stage`` computing ``body`` (a multi-output loop: its members the group's parts)."""
    members = tuple(dataclasses.replace(m, body=b) for m, b in zip(stage.members, body.args)
                    ) if stage.members else ()
    return dataclasses.replace(stage, body=body, members=members)


def _condition(e):
    """(loop variable, the first value from which the truth of ``e`` may differ from the
    value before it) for a comparison of ``±var + k`` with an integer constant."""
    if not (isinstance(e, Op) and e.name in _FLIP and len(e.args) == 2):
        return None
    a, b = e.args
    name = e.name
    if isinstance(a, Const) and isinstance(b, Index):
        a, b, name = b, a, _FLIP[name]
    if not (isinstance(a, Index) and isinstance(b, Const)) or not _integral(b.value):
        return None
    expr = sympy.expand(a.expr)
    if len(expr.free_symbols) != 1:
        return None
    (var,) = expr.free_symbols
    coef, rest = expr.coeff(var), expr.subs(var, 0)
    if coef not in (1, -1) or not rest.is_Integer:
        return None
    c = int(b.value) - int(rest)        # coef * var  <name>  c
    if coef == -1:
        name, c = _FLIP[name], -c
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
    if isinstance(e, Gather):
        return e                        # (its positions come from array values)
    if isinstance(e, Load):
        index = tuple(_clamp(ix, known) for ix in e.index)
        return e if index == e.index else dataclasses.replace(e, index=index)
    if isinstance(e, Index):
        expr = _clamp(e.expr, known)
        return e if expr == e.expr else dataclasses.replace(e, expr=expr)
    if not isinstance(e, Op):
        return e
    args = tuple(memo[id(a)] for a in e.args)
    if e.name in _FLIP and len(args) == 2:
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


def _decide(name, args, known):
    a, b = args
    if not all(isinstance(x, (Index, Const)) for x in args):
        return None
    ia = _interval(a.expr, known) if isinstance(a, Index) else _const(a)
    ib = _interval(b.expr, known) if isinstance(b, Index) else _const(b)
    if ia is None or ib is None:
        return None
    (alo, ahi), (blo, bhi) = ia, ib
    holds = {"greater_equal": alo >= bhi, "greater": alo > bhi,
             "less_equal": ahi <= blo, "less": ahi < blo}[name]
    fails = {"greater_equal": ahi < blo, "greater": ahi <= blo,
             "less_equal": alo > bhi, "less": alo >= bhi}[name]
    return True if holds else False if fails else None


def _const(c):
    return (c.value, c.value) if _integral(c.value) else None


def _interval(expr, known):
    """(lo, hi) of an integer index expression over ``known``, or None."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr), int(expr)
    if expr.is_Symbol:
        return known.get(expr)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        parts = [_interval(a, known) for a in expr.args]
        if None in parts:
            return None
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
    if not expr.has(sympy.Min, sympy.Max, sympy.floor, sympy.Mod):
        return expr
    args = [_clamp(a, known) for a in expr.args]
    if isinstance(expr, sympy.floor):  # floor(e / d) with e in one multiple of d's range
        num, den = sympy.fraction(sympy.together(args[0]))
        span = _interval(num, known) if den.is_Integer and den > 0 else None
        if span is not None and span[0] // int(den) == span[1] // int(den):
            return sympy.Integer(span[0] // int(den))
        return expr.func(*args)
    if isinstance(expr, sympy.Mod) and args[1].is_Integer and args[1] > 0:
        span = _interval(args[0], known)
        m = int(args[1])
        if span is not None and span[0] // m == span[1] // m:
            return sympy.expand(args[0] - m * (span[0] // m))
        return expr.func(*args)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        parts = [_interval(a, known) for a in args]
        if None not in parts:
            for k, (lo, hi) in enumerate(parts):
                others = [p for j, p in enumerate(parts) if j != k]
                if isinstance(expr, sympy.Min) and all(hi <= p[0] for p in others):
                    return args[k]
                if isinstance(expr, sympy.Max) and all(lo >= p[1] for p in others):
                    return args[k]
    return expr.func(*args)
