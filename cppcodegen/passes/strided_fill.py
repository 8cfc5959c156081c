"""An array made with ``np.empty`` and filled by strided assignments (``out[0::2] = a;
out[1::2] = b``: interleaved pairs) is stored region by region: one loop per assignment over
its own elements, not one loop over the whole array choosing each element's value by its
index (which computed both values at every element, with an index division each). An array
made with a value (``np.zeros``, ``np.full``) is first filled with it (a vector loop), as
NumPy does: ``y = np.zeros(n * L); y[::L] = x`` took 3.4x NumPy's time as one loop of
divisions and selects."""
from __future__ import annotations

from ..ir.loopir import Stage


def strided_fill(lowering, node, role, label, where) -> bool:
    """Lower ``node`` (the last of a chain of assignments into a fresh ``np.empty``) as a
    store per assignment into one buffer, when some assignment has a step; else False."""
    chain, n = [], node
    while n.op == "setitem" and id(n) not in lowering.buffer_of:
        chain.append(n)
        n = n.inputs[0]
    if not chain or n.op != "broadcast_to" or \
            not n.attr("uninit", False) and n.inputs[0].shape != () or \
            id(n) in lowering.buffer_of or any(
                len(lowering.users.get(id(c), ())) != 1 for c in chain[1:] + [n]):
        return False
    if not any(sp[0] != "i" and sp[2] != 1 for c in chain for sp in c.attr("spec")):
        return False            # (contiguous parts: one loop split at their bounds)
    name = lowering.add_buffer(node, role)
    if not n.attr("uninit", False):     # np.zeros, np.full: the value everywhere first
        lowering.stages.append(Stage(name, "pointwise", tuple(node.shape),
                                     lowering.value(n.inputs[0], ()), (), None, label, where))
    for c in reversed(chain):   # (in the order they were made: a later one wins)
        domain, store, body = lowering._region(c)
        if 0 not in domain:
            lowering.stages.append(Stage(name, "pointwise", domain, body, (), None, label,
                                         where, store=store))
    return True
