"""What a traced value's graph says about its range: ``bounds(v)`` -> (lo, hi) or None.

An element of an array of a narrow int type has its dtype's range (``int(img[i, j])`` of a
uint8 image is in [0, 255]); constants, sums, differences, products, squares and
negations of bounded values are bounded. Python int arithmetic whose result provably stays
in int64 needs no overflow check (``pyints.py``), ``math.sqrt`` of a value that cannot be
negative no domain check (``pymath.py``): without the checks, a loop of such code runs in
SIMD lanes.
"""
from __future__ import annotations

import numpy as np

from .proxy import Proxy

INT64_RANGE = (int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max))
_VALUE_OPS = ("cast", "check", "reshape", "slice", "broadcast_to")  # (input 0's value)
_DEPTH = 64


def bounds(v, depth: int = 0):
    """(lo, hi) that the int value ``v`` (a number, or a traced one) lies in, as far as its
    graph shows: an element of an array of a narrower int type (``int(img[i, j])`` of
    uint8), constants, and sums, differences, products and negations of such; else None."""
    if not isinstance(v, Proxy):
        return (int(v), int(v)) if isinstance(v, (int, np.integer)) else None
    node = v.node if isinstance(v, Proxy) else v
    return _node_bounds(node, depth)


def _node_bounds(node, depth: int):
    kind, size = node.dtype.kind, node.dtype.itemsize
    if kind == "f" and node.op == "cast" and node.inputs[0].dtype.kind in "biu":
        return _node_bounds(node.inputs[0], depth + 1)      # (rounded, but never past 0)
    if kind == "b":
        return (0, 1)
    if kind in "iu" and size < 8:
        info = np.iinfo(node.dtype)
        return (int(info.min), int(info.max))
    if kind not in "iu" or depth > _DEPTH:
        return None
    if node.op == "const":
        value = node.attr("value")
        return (int(value), int(value)) if isinstance(value, (int, np.integer)) else None
    if node.op in _VALUE_OPS:
        return _node_bounds(node.inputs[0], depth + 1)
    if node.op == "negative":
        b = _node_bounds(node.inputs[0], depth + 1)
        return None if b is None else (-b[1], -b[0])
    if node.op in ("add", "subtract", "multiply") and len(node.inputs) == 2:
        a, b = (_node_bounds(i, depth + 1) for i in node.inputs)
        if a is None or b is None:
            return None
        if node.op == "add":
            return (a[0] + b[0], a[1] + b[1])
        if node.op == "subtract":
            return (a[0] - b[1], a[1] - b[0])
        if node.inputs[0] is node.inputs[1]:                 # a square
            return (0 if a[0] <= 0 <= a[1] else min(a[0] ** 2, a[1] ** 2), max(a[0] ** 2, a[1] ** 2))
        corners = [x * y for x in a for y in b]
        return (min(corners), max(corners))
    return None


def cannot_overflow(kind, a, b) -> bool:
    """Does the graph show that ``a <kind> b`` stays inside int64 (``int(u8) * 2 + ...``)?"""
    ba, bb = bounds(a), (0, 0) if kind == "neg" else bounds(b)
    if ba is None or bb is None:
        return False
    lo, hi = {"add": lambda: (ba[0] + bb[0], ba[1] + bb[1]),
              "sub": lambda: (ba[0] - bb[1], ba[1] - bb[0]),
              "neg": lambda: (-ba[1], -ba[0]),
              "mul": lambda: (min(x * y for x in ba for y in bb),
                              max(x * y for x in ba for y in bb))}[kind]()
    return INT64_RANGE[0] <= lo and hi <= INT64_RANGE[1]
