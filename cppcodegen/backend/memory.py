"""Buffers that share memory: temporaries that live in an output's or another temporary's.

In: a LoopProgram and its kernels in run order. Out: ``share_temporaries``, {temporary:
the buffer whose memory it uses}, which ``program.generate`` turns into pointers of the
entry points into the pooled buffers (fewer fresh pages to fault in on every call).
"""
from __future__ import annotations

from .cexpr import cindex
from ..ir.loopir import Load, LoopProgram, index_vars, walk


def element_count(shape) -> str:
    """C++ for the number of elements of ``shape`` ("1" for a 0-d one)."""
    return " * ".join(f"({cindex(d)})" for d in shape) or "1"


def most_elements(shape, var: str, start, stop):
    """C++ for the largest element count ``shape`` has while the loop over ``var`` runs from
    ``start`` to ``stop`` (a bound: its count at either end, the count being affine in
    ``var``), so that a buffer allocated per iteration can be allocated once before the loop;
    None when it cannot (its size reads a value bound inside the loop, or grows another way
    than linearly with ``var``: a maximum inside the range)."""
    import sympy
    count = sympy.sympify(sympy.Mul(*shape))
    syms = {s.name: s for s in count.free_symbols}
    if any(n.startswith("dv") for n in syms):
        return None
    if var not in syms:
        return element_count(shape)
    lv = syms[var]
    try:
        if sympy.Poly(count, lv).degree() > 1:
            return None
    except sympy.PolynomialError:
        return None
    a, b = (count.subs(lv, sympy.sympify(e)) for e in (start, stop))
    return f"std::max<int64_t>({cindex(a)}, {cindex(b)})"


def scratch_lines(t: str, name: str, count: str, note: str) -> list:
    """C++ declaring ``name``: a heap array of ``count`` (at least one) elements of C type
    ``t``, freed at the end of the enclosing block (its storage is ``name_mem``)."""
    return [f"std::vector<unsigned char> {name}_mem(sizeof({t}) * std::max<int64_t>({count}, 1));",
            f"{t}* {name} = reinterpret_cast<{t}*>({name}_mem.data());   // {note}"]


def share_temporaries(program: LoopProgram, kernels: list) -> dict:
    """Buffers that can live in another buffer's memory: {temporary: the buffer whose memory
    it uses}. Fewer, reused buffers mean fewer fresh pages to fault in on every call:

    - a temporary last read by the kernel that computes an output from it elementwise (the
      epilogue ``+ b`` after a matrix product) is that output's memory: the NumPy call writes
      the output buffer and the epilogue updates it in place;
    - temporaries of equal dtype and shape share memory when their lifetimes (first to last
      kernel using them) do not overlap, or only touch in a kernel that computes the new one
      elementwise from the old one (``relu(x @ W + b)``): a time loop's steps ping-pong between
      two buffers instead of holding one per step.
    """
    span: dict = {}
    for i, k in enumerate(kernels):
        for s in k.stages:
            names = [s.name] + list(s.args) if s.kind == "extern" else [s.name] + [
                m.name for m in s.members] + [e.buf for e in walk(s.body) if isinstance(e, Load)]
            for name in names:
                lo, hi = span.get(name, (i, i))
                span[name] = (min(lo, i), max(hi, i))
    local = set().union(*[k.locals for k in kernels]) if kernels else set()
    buffers = program.buffers

    def same_layout(a, b) -> bool:
        a, b = buffers[a], buffers[b]
        return a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.strides == b.strides

    def elementwise(i, old, new) -> bool:
        """Kernel i is one pointwise stage writing ``new`` that reads ``old`` only at the
        element it writes."""
        k = kernels[i]
        if k.form == "extern" or len(k.stages) != 1:
            return False
        s = k.stages[0]
        if s.kind != "pointwise" or s.members or s.name != new or s.store is not None:
            return False
        here = index_vars(len(s.domain))
        return all(tuple(e.index) == here for e in walk(s.body)
                   if isinstance(e, Load) and e.buf == old)

    shared = {}
    for i, k in enumerate(kernels):
        if k.form == "extern" or len(k.stages) != 1 or buffers[k.stages[0].name].role != "output":
            continue
        out = k.stages[0].name
        for e in walk(k.stages[0].body):
            t = getattr(e, "buf", None)
            if (t is not None and buffers[t].role == "temp" and t not in local
                    and t not in shared and span[t][1] == i and span[out][0] == i
                    and same_layout(t, out) and elementwise(i, t, out)):
                shared[t] = out
                break
    pools: dict = {}            # (dtype, shape) -> [[pool buffer, last kernel using it, its
    for name, (lo, hi) in sorted(span.items(), key=lambda kv: kv[1]):    # last occupant], ...]
        buf = buffers[name]
        if buf.role != "temp" or name in local or name in shared:
            continue
        slots = pools.setdefault((buf.dtype, tuple(buf.shape), buf.strides), [])
        for slot in slots:
            if slot[1] < lo or (slot[1] == lo and elementwise(lo, slot[2], name)):
                shared[name] = slot[0]
                slot[1], slot[2] = hi, name
                break
        else:
            slots.append([name, hi, name])
    return shared
