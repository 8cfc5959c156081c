"""Reading back what a fresh array was filled with: ``np.sort(np.stack([...]), axis=0)[4]``.

A joined or stacked array is a fresh buffer filled by slices (``setitem`` nodes, one per
part). Reading one whole part back (``[4]`` of a stack along axis 0) gave a load of that
buffer, so the buffer, every part of it, had to be computed first: a median filter written
``np.sort(stack, axis=0)[4]`` computed all nine sorted rows to keep one. Here a basic index
whose region is exactly one part's, past parts that do not overlap it, reads that part's
value instead; the view proxy keeps its chain from the array (``view_of``), so later
in-place updates of the array and writes through the view behave as NumPy's.
"""
from __future__ import annotations

from ..ir.graph import make_node


def stored_part(node, spec, ints):
    """The value node a setitem chain under ``node`` stored in exactly the region ``spec``
    ((start, step, length) per axis; ``ints``: the axes indexed by an int), reshaped to the
    slice's shape; None when no single part is known to hold it, or when the array is not
    a fresh one filled by parts (an argument updated in place: ``A[i, 1:-1] += ...;
    A[i, 1:-1] *= 0.5`` stays a chain of updates of A's rows, which later passes store in
    place)."""
    bottom = node
    while bottom.op == "setitem":
        bottom = bottom.inputs[0]
    if not (bottom.op == "const" or bottom.op == "broadcast_to" and bottom.inputs[0].op == "const"):
        return None
    while node.op == "setitem" and len(node.inputs) == 2:
        theirs = node.attr("spec")
        same = all(_same(s, t, d in ints) for d, (s, t) in enumerate(zip(spec, theirs)))
        if same:
            value = node.inputs[1]
            shape = tuple(s[2] for s in spec)
            if value.shape != shape:
                value = make_node("reshape", (value,), shape, value.dtype, value.where)
            return value
        if not any(_apart(s, t) for s, t in zip(spec, theirs)):
            return None
        node = node.inputs[0]
    return None


def _same(s, t, an_int: bool) -> bool:
    start, step, length = s
    if t[0] == "i":
        return an_int and start == t[1]
    return (start, length) == (t[1], t[3]) and (step == t[2] or length == 1)


def _apart(s, t) -> bool:
    """Do the two regions share no index on this axis (both known ints, unit steps)?"""
    lo, hi = _span(s[0], s[1], s[2])
    olo, ohi = _span(*((t[1], 1, 1) if t[0] == "i" else t[1:]))
    if None in (lo, hi, olo, ohi):
        return False
    return hi < olo or ohi < lo


def _span(start, step, length):
    if not all(type(v) is int for v in (start, step, length)) or step != 1 or length < 1:
        return None, None
    return start, start + length - 1
