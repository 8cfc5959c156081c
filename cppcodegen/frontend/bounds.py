"""What a traced value's graph says about its range: ``bounds(v)`` -> (lo, hi) or None.

An element of an array of a narrow int type has its dtype's range (``int(img[i, j])`` of a
uint8 image is in [0, 255]); constants, sums, differences, products, squares and
negations of bounded values are bounded; of a float, only a lower bound is followed
(squares, sums, constants: ``_float_floor``). Python int arithmetic whose result provably
stays in int64 needs no overflow check (``pyints.py``), ``math.sqrt`` of a value that cannot
be negative no domain check (``pymath.py``): without the checks, a loop of such code runs in
SIMD lanes.
"""
from __future__ import annotations

import numpy as np

from .proxy import Proxy

INT64 = np.dtype(np.int64)
_VALUE_OPS = ("check", "reshape", "slice", "broadcast_to")     # (input 0's value)
_ARITHMETIC = {"add": "add", "subtract": "sub", "multiply": "mul", "negative": "neg"}
_DEPTH = 64


def bounds(v, depth: int = 0):
    """(lo, hi) that the int value ``v`` (a number, or a traced one) lies in, as far as its
    graph shows: an element of an array of a narrower int type (``int(img[i, j])`` of
    uint8), constants, and sums, differences, products, squares and negations of such whose
    range fits their dtype (one that may have wrapped says nothing), their floor quotients,
    shifts, remainders and masks by constants; else None."""
    if not isinstance(v, Proxy):
        return (int(v), int(v)) if isinstance(v, (int, np.integer)) else None
    return _node_bounds(v.node, depth)


def _interval(kind, a, b=None, square=False):
    """The range of ``a <kind> b`` (``kind``: add, sub, mul or neg) for operands in ``a``, ``b``."""
    if kind == "neg":
        return (-a[1], -a[0])
    if kind == "add":
        return (a[0] + b[0], a[1] + b[1])
    if kind == "sub":
        return (a[0] - b[1], a[1] - b[0])
    if kind in ("lshift", "pow"):       # (a shift by 0..62, a power to 0..62: else unknown)
        if b[0] < 0 or b[1] > 62:
            return None
        if kind == "lshift":
            return (min(a[0] << b[0], a[0] << b[1]), max(a[1] << b[0], a[1] << b[1]))
        m = max(abs(a[0]), abs(a[1]), 1) ** b[1]
        return (-m, m)
    if square:
        return (0 if a[0] <= 0 <= a[1] else min(a[0] ** 2, a[1] ** 2), max(a[0] ** 2, a[1] ** 2))
    corners = [x * y for x in a for y in b]
    return (min(corners), max(corners))


def _fits(span, dtype) -> bool:
    info = np.iinfo(dtype)
    return span is not None and int(info.min) <= span[0] and span[1] <= int(info.max)


def _node_bounds(node, depth: int):
    kind, size = node.dtype.kind, node.dtype.itemsize
    if kind == "f" and node.op == "cast" and node.inputs[0].dtype.kind in "biu":
        return _node_bounds(node.inputs[0], depth + 1)      # (rounded, but never past 0)
    if kind == "f":
        return _float_floor(node, depth)
    if kind in "iu" and node.op == "cast" and node.inputs[0].dtype.kind not in "biu":
        return None
    if kind == "b":
        return (0, 1)
    if kind in "iu" and size < 8:
        info = np.iinfo(node.dtype)
        return (int(info.min), int(info.max))
    if kind not in "iu" or depth > _DEPTH:
        return None
    span = None
    if node.op == "const":
        value = node.attr("value")
        span = (int(value), int(value)) if isinstance(value, (int, np.integer)) else None
    elif node.op in _VALUE_OPS and node.op != "check" and _ASSUMED:
        saved = dict(_ASSUMED)          # (other elements, or the same ones elsewhere: what
        _ASSUMED.clear()                # a comparison said of the value's own no longer holds)
        try:
            span = _node_bounds(node.inputs[0], depth + 1)
        finally:
            _ASSUMED.update(saved)
    elif node.op in _VALUE_OPS or node.op == "cast":
        span = _node_bounds(node.inputs[0], depth + 1)
    elif node.op in _ARITHMETIC and len(node.inputs) == (1 if node.op == "negative" else 2):
        ops = [_node_bounds(i, depth + 1) for i in node.inputs]
        if None not in ops:
            span = _interval(_ARITHMETIC[node.op], *ops,
                             square=len(ops) == 2 and node.inputs[0] is node.inputs[1])
    elif node.op in _BY_CONSTANT and len(node.inputs) == 2:
        span = _by_constant(node, depth)
    elif node.op == "absolute":
        a = _node_bounds(node.inputs[0], depth + 1)
        if a is not None:
            span = (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])),
                    max(abs(a[0]), abs(a[1])))
    elif node.op in ("maximum", "minimum") and len(node.inputs) == 2:
        ops = [_node_bounds(i, depth + 1) for i in node.inputs]
        if None not in ops:
            pick = max if node.op == "maximum" else min
            span = (pick(ops[0][0], ops[1][0]), pick(ops[0][1], ops[1][1]))
    elif node.op == "where" and len(node.inputs) == 3:
        span = _where(node, depth)
    elif node.op == "carry":
        span = _CARRIED.get(id(node))
    elif node.op == "loop_out":
        span = _carried(node, depth)
    if _ASSUMED and id(_base(node)) in _ASSUMED:   # (on a side of a comparison with it)
        a = _ASSUMED[id(_base(node))]
        span = a if span is None or max(span[0], a[0]) > min(span[1], a[1]) else \
            (max(span[0], a[0]), min(span[1], a[1]))
    return span if _fits(span, node.dtype) else None


_CARRIED: dict = {}     # id(a region's parameter) -> its range while its construct is followed
_REGIONS = {"for": ("body",), "while": ("body",), "if": ("then", "orelse")}
_NESTED = 6             # constructs followed inside one another at most


def _carried(node, depth: int):
    """The range of a value a loop or a branch carries out: its value before it and every
    value its regions give it, each computed with the parameter in the range found so far,
    until that range stops growing (a flag set to 0 or 1 in a window loop: [0, 1]); one
    that keeps growing (an accumulator) is unknown."""
    ctrl, k = node.inputs[0], node.attr("index")
    names = _REGIONS.get(ctrl.op)
    if names is None or k >= ctrl.attr("ncarry") or len(_CARRIED) >= _NESTED:
        return None             # (each level follows its regions up to three times)
    regions = [ctrl.attr(n) for n in names]
    if any(len(r.params) != ctrl.attr("ncarry") or len(r.results) != len(r.params)
           for r in regions):
        return None
    span = _node_bounds(ctrl.inputs[(ctrl.op == "if") + k], depth + 1)
    for _ in range(3):
        if span is None:
            return None
        grown = span
        for r in regions:
            _CARRIED[id(r.params[k])] = span
            try:
                b = _node_bounds(r.results[k], depth + 1)
            finally:
                del _CARRIED[id(r.params[k])]
            if b is None:
                return None
            grown = (min(grown[0], b[0]), max(grown[1], b[1]))
        if grown == span:
            return span
        span = grown
    return None


_COMPARES = {"greater": "less", "greater_equal": "less_equal", "less": "greater",
             "less_equal": "greater_equal"}      # (each with its operands swapped)
_NEGATED = {"greater": "less_equal", "greater_equal": "less", "less": "greater_equal",
            "less_equal": "greater"}
_ASSUMED: dict = {}     # id(value) -> its range on the side of a ``where`` being followed


def _where(node, depth: int):
    """The range of ``where(c, a, b)``: either side's; where ``c`` compares a value with a
    constant (``255 if m > 255 else m``, ``min(d, 7)``), each side's range with that value
    in the range the comparison leaves it on that side (``m <= 255`` on the else side)."""
    cond, sides = node.inputs[0], node.inputs[1:]
    fact = _comparison(cond, depth)
    spans = []
    for k, side in enumerate(sides):
        if fact is None:
            spans.append(_node_bounds(side, depth + 1))
            continue
        key, op, c, span = fact
        saved = _ASSUMED.get(key)
        _ASSUMED[key] = _refined(span, op, c, k == 0)
        try:
            spans.append(_node_bounds(side, depth + 1))
        finally:
            if saved is None:
                del _ASSUMED[key]
            else:
                _ASSUMED[key] = saved
    if None in spans:
        return None
    return (min(spans[0][0], spans[1][0]), max(spans[0][1], spans[1][1]))


def _comparison(cond, depth: int):
    """(id of the value compared, the comparison as ``value <op> c``, c, the value's range)
    of a comparison of a bounded int with an int constant; else None."""
    if cond.op not in _COMPARES or len(cond.inputs) != 2 or \
            any(i.dtype.kind not in "iu" for i in cond.inputs):
        return None
    (x, c), op = cond.inputs, cond.op
    limit = _node_bounds(c, depth + 1)
    if limit is None or limit[0] != limit[1]:
        (c, x), op = cond.inputs, _COMPARES[cond.op]       # (7 < d: d > 7)
        limit = _node_bounds(c, depth + 1)
    span = _node_bounds(x, depth + 1)
    if limit is None or limit[0] != limit[1] or span is None:
        return None
    return id(_base(x)), op, limit[0], span


def _refined(span, op: str, c: int, holds: bool):
    """``span`` of ``x`` where ``x <op> c`` holds (or fails)."""
    lo, hi = span
    if not holds:
        op = _NEGATED[op]
    if op == "greater":
        lo = max(lo, c + 1)
    elif op == "greater_equal":
        lo = max(lo, c)
    elif op == "less":
        hi = min(hi, c - 1)
    else:
        hi = min(hi, c)
    return (lo, hi) if lo <= hi else span     # (a side never taken: its own range)


def _base(n):
    """The value ``n`` holds, seen through checks and casts that keep every value."""
    while n.inputs and (n.op == "check" or n.op == "cast" and n.dtype.kind in "iu" and
                        np.can_cast(n.inputs[0].dtype, n.dtype, "safe")):
        n = n.inputs[0]
    return n


_BY_CONSTANT = ("floor_divide", "right_shift", "remainder", "bitwise_and")


def _by_constant(node, depth: int):
    """The range of ``a // c``, ``a >> c``, ``a % c``, ``a & c`` for a constant ``c`` (the
    average of two pixels, ``(int(a) + int(b)) // 2``, fits uint8: its store needs no
    check)."""
    c = _node_bounds(node.inputs[1], depth + 1)
    if c is None or c[0] != c[1]:
        return None
    c = c[0]
    if node.op == "remainder":
        return (0, c - 1) if c > 0 else None
    if node.op == "bitwise_and":
        return (0, c) if c >= 0 else None
    a = _node_bounds(node.inputs[0], depth + 1)
    if a is None:
        return None
    if node.op == "right_shift":
        return (a[0] >> c, a[1] >> c) if 0 <= c < 64 else None
    if c == 0:
        return (0, 0)                   # (NumPy's integer division by zero: 0)
    ends = (a[0] // c, a[1] // c)
    return (min(ends), max(ends))


_NONNEGATIVE = ("absolute", "sqrt", "exp", "exp2", "square", "cosh", "hypot")


def _float_floor(node, depth: int):
    """(lo, inf) of a float value, as far as its graph shows a lower bound (or NaN): float
    rounding is monotone, so a sum of values at least ``a`` and ``b`` is at least the
    rounded ``a + b``, a square is at least 0 (``math.sqrt(dx * dx + dy * dy + 1e-3)`` needs
    no domain check). Upper bounds are not followed."""
    if depth > _DEPTH:
        return None
    inf = float("inf")
    if node.op == "const":
        value = node.attr("value")
        return (float(value), float(value)) if isinstance(value, (int, float, np.number)) and \
            not isinstance(value, complex) and not np.isnan(value) else None
    if node.op in _VALUE_OPS:
        return _node_bounds(node.inputs[0], depth + 1)
    if node.op in _NONNEGATIVE:
        return (0.0, inf)
    if node.op == "multiply" and len(node.inputs) == 2 and node.inputs[0] is node.inputs[1]:
        return (0.0, inf)
    if node.op in ("add", "multiply") and len(node.inputs) == 2:
        ops = [_node_bounds(i, depth + 1) for i in node.inputs]
        if None in ops or (node.op == "multiply" and min(ops[0][0], ops[1][0]) < 0):
            return None
        lo = ops[0][0] + ops[1][0] if node.op == "add" else ops[0][0] * ops[1][0]
        return (float(np.asarray(lo, dtype=node.dtype)) if np.isfinite(lo) else lo, inf)
    return None


def cannot_overflow(kind, a, b) -> bool:
    """Does the graph show that ``a <kind> b`` stays inside int64 (``int(u8) * 2 + ...``)?"""
    ba, bb = bounds(a), (0, 0) if kind == "neg" else bounds(b)
    return ba is not None and bb is not None and \
        _fits(_interval(kind, ba, bb, square=a is b), INT64)
