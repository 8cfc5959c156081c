"""Index-set splitting of a serial ``for``: the iterations whose element accesses need
NumPy's checks or wraps, and the long run between them that needs none.

``for i in range(n): u[i] = un[i] - c * (un[i] - un[i - 1]) + d * (un[(i + 1) % n] - ...)``
reads ``un[i - 1]`` (which wraps at i = 0) and ``un[(i + 1) % n]`` (a division per element):
each is a checked gather (``ccg::checked_index``), and a loop with checks stays out of SIMD
lanes. For i in [1, n - 1) every such position is in range and each ``%`` is its numerator,
so the loop runs as three: [start, 1) and [n - 1, stop) as written, and the middle with the
gathers made plain loads and the floor divisions folded (``passes/index_split.decided``,
``specialize``). The iterations run in the same order, each in one piece, so results and
errors are the loop's own.

In: a ``for`` kernel. Out: None (nothing to split), or the C++ lines that compute the middle
piece's bounds and the three pieces, each a ``for`` kernel over its part of the range.
"""
from __future__ import annotations

import dataclasses

import sympy

from .cexpr import cindex
from ..ir.loopir import Const, FloorDiv, Gather, Index, Load, nested, Op, Scalar, walk
from ..passes.index_split import specialize, with_body


def split_for(k):
    """(bound lines, [first, middle, last] kernels), or None."""
    c = k.stages[0].control
    if c.get("up") is not True or c.get("step") != 1 or c.get("test") or \
            (c.get("parallel") is not None and not c.get("auto")):
        return None
    lows, highs, var = [], [], None
    for g in _gathers(k.regions[0]):
        for _, size, value, _ in g.binds:
            mine = [v for v in value.expr.free_symbols if v.name == c["var"]] \
                if isinstance(value, Index) else []
            if not mine:
                continue
            var = mine[0]
            good = _good(sympy.expand(value.expr), var, size)
            if good is None:
                return None
            lows += good[0]
            highs += good[1]
    for ix in _wrapped_indices(k.regions[0], c["var"]):     # (wraps known to be in range:
        v = next(v for v in ix.free_symbols if v.name == c["var"])  # plain loads with floors)
        floors = _good(sympy.expand(ix), v, None, affine=False)
        if floors is None:
            return None
        var = v
        lows += floors[0]
        highs += floors[1]
    if var is None:
        return _peeled(k, c["start"], c["stop"], k.regions[0])
    lo, hi = sympy.Max(c["start"], *lows), sympy.Min(c["stop"], *highs)
    if lo.has(sympy.Max, sympy.Min) or hi.has(sympy.Max, sympy.Min):
        return None                     # (no order known between the ends)
    known = {var: tuple(int(e) if e.is_Integer else e for e in (lo, hi - 1))}
    middle = [sub.rewritten("_mid", lambda s: s if s.kind != "pointwise" else
                            with_body(s, specialize(s.body, known))) for sub in k.regions[0]]
    if any(var in v.expr.free_symbols for g in _gathers(middle) for _, _, v, _ in g.binds
           if isinstance(v, Index)):
        return None                     # (a position the middle does not decide)
    a, b = (sympy.Symbol(f"ccg_{c['var']}_{end}", integer=True) for end in ("from", "to"))
    start, stop = cindex(c["start"]), cindex(c["stop"])
    lines = [f"const int64_t {a} = std::min<int64_t>(std::max<int64_t>({cindex(lo)}, {start}), "
             f"{stop});   // iterations whose accesses need no check: [{a}, {b})",
             f"const int64_t {b} = std::max<int64_t>({a}, std::min<int64_t>({cindex(hi)}, {stop}));"]
    peeled = _peeled(k, a, b, middle)
    if peeled is None:
        return lines, [_piece(k, c["start"], a, k.regions[0]), _piece(k, a, b, middle),
                       _piece(k, b, c["stop"], k.regions[0])]
    return lines + peeled[0], [_piece(k, c["start"], a, k.regions[0]), *peeled[1],
                               _piece(k, b, c["stop"], k.regions[0])]


def _peeled(k, start, stop, body):
    """The iterations [start, stop) of ``k`` with ``body`` where every iteration gathers at
    the same positions (``W[u, v]`` with ``u = order[k]`` read before the loop over ``v``):
    the first as written, which checks them, then the others with those gathers wrapped but
    not checked (each position is the same value), so that no check keeps them out of SIMD
    lanes: (bound lines, pieces), or None when no such gather runs in every iteration."""
    c = k.stages[0].control
    stored = {m.name for sub in nested(body) if sub.form != "control"
              for st in sub.stages for m in (st.members or (st,))}
    same = {id(g): dataclasses.replace(g, checked=False) for g in _elements(body)
            if type(g) is Gather and g.checked and g.guard is None and
            all(_invariant(v, c["var"], stored) for _, _, v, _ in g.binds)}
    if not same:
        return None
    first = sympy.Symbol(f"ccg_{c['var']}_next", integer=True)
    rest = [sub if sub.form == "control" else sub.rewritten(
        "_rest", lambda st: st if st.kind != "pointwise" else with_body(st, _swapped(st.body, same)))
        for sub in body]
    lines = [f"const int64_t {first} = std::min<int64_t>(({cindex(start)}) + 1, "
             f"std::max<int64_t>({cindex(start)}, {cindex(stop)}));   // after the first "
             "iteration, which checks the positions every one gathers at"]
    return lines, [_piece(k, start, first, body), _piece(k, first, stop, rest)]


def _invariant(value, var: str, stored: set) -> bool:
    """Is ``value`` (a gather's position) the same in every iteration of the loop over
    ``var``: no index of it reads ``var`` or a value bound in the loop, no load reads a
    buffer the loop stores into, no gather in it?"""
    for e in walk(value):
        if isinstance(e, Gather) or isinstance(e, Load) and e.buf in stored:
            return False
        exprs = [e.expr] if isinstance(e, Index) else list(e.index) if isinstance(e, Load) else []
        if any(str(sym) == var or str(sym).startswith("dv")
               for x in exprs for sym in sympy.sympify(x).free_symbols):
            return False
        if not isinstance(e, (Op, Index, Load, Scalar, Const)):
            return False
    return True


def _swapped(body, same: dict):
    """``body`` with the gathers of ``same`` (id -> replacement) replaced, ops rebuilt."""
    memo = {}
    for e in walk(body):
        if id(e) in same:
            memo[id(e)] = same[id(e)]
        elif isinstance(e, Op):
            args = tuple(memo.get(id(a), a) for a in e.args)
            memo[id(e)] = e if all(a is b for a, b in zip(args, e.args)) else \
                dataclasses.replace(e, args=args)
        else:
            memo[id(e)] = e
    return memo[id(body)]


def _elements(kernels):
    """The expressions of the element code of ``kernels`` (not of their control kernels)."""
    return [e for sub in kernels if sub.form != "control" for s in sub.stages
            for m in (s.members or (s,)) for e in walk(m.body)]


def _gathers(kernels) -> list:
    return [e for e in _elements(nested(kernels)) if type(e) is Gather]


def _wrapped_indices(kernels, var: str) -> list:
    """The index expressions of plain loads (positions proved in range) with a floor
    division or modulo of the loop's variable in them (``un[(i + 1) % n]``), in the loop's
    own kernels (a loop inside it splits on its own: its middle would be written twice)."""
    return [ix for e in _elements(kernels) if type(e) is Load
            for ix in map(sympy.sympify, e.index)
            if any(v.name == var for v in ix.free_symbols) and
            ix.has(sympy.floor, sympy.Mod, FloorDiv)]


def _good(expr, var, size, affine=True):
    """([lower ends], [upper ends]) of the range of ``var`` where the position ``expr``
    (``var + a``, with floor divisions or modulos of ``var + b`` by a constant or a size) is in
    [0, size) and each floor is 0, or None for another form (``affine=False``: only the
    floors' conditions)."""
    lows, highs = [], []
    zero = {}
    for f in expr.atoms(sympy.floor, sympy.Mod, FloorDiv):
        num, den = (sympy.fraction(sympy.together(f.args[0])) if isinstance(f, sympy.floor)
                    else (f.args[0], f.args[1]))       # (FloorDiv: a size d > 0)
        num = sympy.expand(num)
        if not (den.is_Integer and den > 0 or isinstance(f, FloorDiv) and den.is_Symbol) or \
                num.coeff(var) != 1 or (num - var).has(var):
            return None
        lows.append(var - num)          # num >= 0 and num < den
        highs.append(den + var - num)
        zero[f] = num if isinstance(f, sympy.Mod) else 0
    if not affine:
        return lows, highs
    affine = sympy.expand(expr.xreplace(zero))
    if affine.coeff(var) != 1 or (affine - var).has(var):
        return None
    rest = affine - var
    return lows + [-rest], highs + [size - rest]


def _piece(k, start, stop, body):
    s = k.stages[0]
    stage = dataclasses.replace(s, control={**s.control, "start": start, "stop": stop})
    return dataclasses.replace(k, stages=[stage], regions=(list(body),) + tuple(k.regions[1:]))
