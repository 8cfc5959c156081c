"""Slices whose bounds come from array values: ``vals[indptr[i]:indptr[i + 1]]`` in a loop.

In: a slice of one axis (of size ``size``) with a bound computed from array values, inside a
compiled loop. Out: the slice's (start, step, length) as *data symbols* (``dv<k>``, integers
>= 0) and the ``bind`` nodes that define them. A bind node computes NumPy's clamped start and
length of the slice from the traced bounds (a negative bound counts from the end, bounds past
either end are clipped, a slice that runs backwards is empty), and the C++ sets the symbol
where the bind runs, before anything that reads it; the slice (or setitem) node takes the
bind nodes as trailing inputs, so they stay in the region and run first.

The length of such a slice is known only at run time, so it is allowed only inside a compiled
loop, where buffers of that length are allocated per iteration. Met outside every loop
(``nx`` an ``np.int64``: ``u[int(.5 / dx):int(1 / dx + 1)] = 2``), the function is traced again
with its whole body in a compiled loop of one trip; where that cannot be (such a slice's size
in a returned array), the slice is refused with the reason.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataDependentError, user_location
from ..ir.graph import MADE, make_node, SliceOut
from .proxy import as_node, Proxy, wrap
from .sizes import is_dim, loop_dependent, same_size_now, symbolic


class OutsideLoop(DataDependentError):
    """A slice of run-time length met outside every compiled loop: the tracer tries the
    function again with its body in a loop of one trip (``control.trace_function``)."""


def run_time_slice(ix) -> bool:
    """A slice known only at run time: a bound computed from array values, or a step that
    is a loop's index (``x[i * i::i]``)."""
    from .iteration import has_loop_symbol
    return isinstance(ix, slice) and (any(is_data_bound(b) for b in (ix.start, ix.stop, ix.step))
                                      or (is_dim(ix.step) and has_loop_symbol(ix.step)))


def is_data_bound(b) -> bool:
    """A slice bound computed from array values (not a size or an integer argument)."""
    from .iteration import int_expr
    return isinstance(b, Proxy) and int_expr(b.node) is None


def value_bounds(ix):
    """A slice whose bounds are integer arguments (``x[:n]``): bounds as value symbols (bounds
    from array values stay as they are: ``dataslice.py``)."""
    if isinstance(ix, slice) and any(isinstance(b, Proxy) for b in (ix.start, ix.stop)) and \
            not any(is_data_bound(b) for b in (ix.start, ix.stop)):
        return slice(*(symbolic().SymInt(_value_size(b)) if isinstance(b, Proxy) else b
                       for b in (ix.start, ix.stop)), ix.step)
    return ix


def argument_ints(index):
    """``index`` with its ints computed from sizes and integer arguments (``img[:, :, c]``,
    ``x[n - 1]`` of an int argument ``n`` whose value changed: read at each call) as their
    value expressions: a basic index, so a view as in NumPy, its facts guarded, rather
    than a gather (a copy)."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(_argument_int(ix) for ix in parts):
        return index
    new = tuple(symbolic().SymInt(_value_size(ix)) if _argument_int(ix) else ix for ix in parts)
    return new if isinstance(index, tuple) else new[0]


def _argument_int(ix) -> bool:
    """(A plain traced value: a lazy ``yi[valid]`` is an index array, not computed here.)"""
    return type(ix) is Proxy and bool(ix.scalar or ix.weak) and not ix.node.shape and \
        ix.dtype.kind in "iu" and not is_data_bound(ix)


def _value_size(p):
    from .iteration import value_size
    return value_size(p)


def data_slice(ix: slice, size, dim: int):
    """((start, step, length), bind nodes) of slice ``ix`` on an axis of ``size``."""
    from .iteration import _env
    env = _env()
    if not MADE:                        # not in a compiled loop's (or branch's) region
        raise OutsideLoop(
            f"a slice with bounds computed from array values (at {user_location()}) has a "
            "length known only at run time; this compiles inside a compiled for/while loop "
            "(where its buffers are made per iteration), not outside one")
    from .iteration import traced_sizes
    traced_sizes(symbolic())    # its length compared: a traced bool (a while
    step = _positive_step(1 if ix.step is None else ix.step)    # loop sets no loop index)
    if isinstance(step, int) and step > 0 and (is_dim(ix.stop) or type(ix.stop) is int) and \
            same_size_now(ix.stop, size):  # (``U[i, i + 1:n]`` is ``U[i, i + 1:]``: one length
        ix = slice(ix.start, None, ix.step)     # with ``x[i + 1:]``, a product of the two)
    key = (_key(ix.start), _key(ix.stop), _key(step))
    region = MADE[-1] if MADE else None
    for seen in env.slices.get(key, ()):    # vals[lo:hi] and cols[lo:hi]: one length, when
        if seen[0] is region and same_size_now(seen[1], size):     # the arrays' are equal
            return seen[2], seen[3]
    n = _as_int64(size, "axis size")
    if isinstance(step, int) and step < 0:      # row[::-1]: NumPy's clamping downwards
        start = _clamp(ix.start, n, n - 1, up=False)
        stop = _clamp(ix.stop, n, -1, up=False)
        length = (np.maximum(start - stop, 0) + (-step - 1)) // -step
        start = np.where(length > 0, start, 0)  # (an empty slice: any start >= 0 will do)
    else:
        start = _clamp(ix.start, n, 0)
        stop = _clamp(ix.stop, n, n)
        length = np.maximum(stop - start, 0)
        if not isinstance(step, int):   # a loop's index (x[i * i::i]): its value now
            length = (length + (_as_int64(step, "slice step") - 1)) // _as_int64(step, "step")
        elif step > 1:
            length = (length + (step - 1)) // step
    binds = []
    out = []
    for value in (start, step, length):
        if not isinstance(value, Proxy):
            out.append(value if value is step else int(value))
            continue
        sym, node = data_length(value)
        binds.append(node)
        out.append(sym)
    spec = (out[0], symbolic().canon(out[1]), out[2])
    env.slices.setdefault(key, []).append((region, size, spec, tuple(binds), ix))  # (ix: keeps
    return spec, tuple(binds)                                           # the ids in key alive)


COPIED = [False]        # a PendingSlice read is a copy between kernels (control._traced_with)


class PendingSlice(Proxy):
    """``a[key]`` outside every compiled loop, a slice bound computed from array values
    (``return out[:k]`` after a loop counted ``k``). Returned as it is, it is a view the
    caller gets from the program's outputs (``ir.graph.SliceOut``: ``a`` as it ends and the
    bounds' values now); any other use needs its length while tracing: the trace starts
    again with the body in a compiled loop of one trip (``OutsideLoop``), and where that
    fails (``np.sort(out[:k]) * 2`` returned: a result of that length), with ``COPIED``:
    a read is a copy of the slice made between kernels (``runtime.extern.axis_slice``), its
    length a count known after that step, as ``np.nonzero``'s is. A write through it (which
    the copy would not show in ``a``) is refused."""

    def __init__(self, a: Proxy, key: tuple, error: OutsideLoop):
        super().__init__(None)
        self._gone = error              # (``node`` raises it)
        self._copied = None             # (a's node, the copy's node)
        self.sliced = a
        self.listed = None              # returned as a list (listbuffer.py): as_list's python
        self.bounds = []
        self.key = tuple(self._template(ix) for ix in key)

    @property
    def node(self):
        if not COPIED[0]:
            raise self._gone
        a = self.sliced.node            # (a copy of ``a`` as it is now: updated since, again)
        if self._copied is None or self._copied[0] is not a:
            self._copied = (a, self._copy())
        return self._copied[1]

    @node.setter
    def node(self, value):
        raise self._gone

    @property
    def copied_from(self):              # a write through the view: not into a copy
        return self._gone if COPIED[0] else None

    def _copy(self):
        """The node of a copy of ``a[key]``: each data-bounded axis sliced by a step between
        kernels, then the rest of the key (ints, plain slices, np.newaxis) applied."""
        from ..runtime.extern import axis_slice
        from .externs import extern_call

        def fill(b):
            return self.bounds[b[1]] if isinstance(b, tuple) else b
        key = list(self.key)
        if any(ix is Ellipsis for ix in key):
            at = next(k for k, ix in enumerate(key) if ix is Ellipsis)
            used = sum(ix is not None and ix is not Ellipsis for ix in key)
            key[at:at + 1] = [slice(None)] * (self.sliced.ndim - used)
        a, rest, axis = self.sliced, [], 0
        for ix in key:
            if isinstance(ix, slice) and any(isinstance(b, tuple)
                                             for b in (ix.start, ix.stop, ix.step)):
                a = extern_call(axis_slice, (a, axis, fill(ix.start), fill(ix.stop),
                                             fill(ix.step)), {}, where=user_location())
                ix = slice(None)
            rest.append(fill(ix))
            axis += ix is not None
        return a[tuple(rest)].node

    def _template(self, ix):
        if isinstance(ix, slice):
            return slice(*(self._template(b) for b in (ix.start, ix.stop, ix.step)))
        if ix is None or ix is Ellipsis or isinstance(ix, (int, np.integer)) and \
                not isinstance(ix, bool):
            return ix
        if is_dim(ix):                  # a size known only at run time
            from .iteration import size_proxy
            ix = size_proxy(symbolic().canon(ix))
        if not isinstance(ix, Proxy) or ix.dtype.kind not in "iub" or ix.node.shape:
            raise TypeError(f"slice indices must be integers or None or have an __index__ "
                            f"method (at {user_location()})")
        self.bounds.append(wrap(ix.node, weak=True, scalar=True))   # (its value now)
        return ("bound", len(self.bounds) - 1)

    def output(self):
        """The result as the program's outputs: the array and the bounds' values."""
        return SliceOut(self.sliced, tuple(self.bounds), self.key, self.listed)


def pending(a: Proxy, index, error: OutsideLoop):
    """``a[index]`` with a bound from array values, outside every compiled loop."""
    return PendingSlice(a, index if isinstance(index, tuple) else (index,), error)


def data_length(value: Proxy):
    """A length (an int >= 0) computed from array values in a compiled loop: its data symbol
    and the ``bind`` node that sets it (a node of that length takes the bind as an input)."""
    from .iteration import _env
    env = _env()
    sym = symbolic().data_symbol(len(env.data), nonnegative=True)
    node = make_node("bind", (value.node,), (), np.dtype(np.int64), user_location(),
                     sym=str(sym))
    env.data[sym] = node
    return sym, node


LENGTHS_DIFFER = 12      # check code (runtime/compiled.py CHECK_MESSAGES)


def checked_equal(node, shape):
    """``node`` broadcast to ``shape`` where a size of each is a length from array values
    that broadcasting took as equal (``np.maximum(dp[w:], dp[:n - w] + v)``, ``ShapeEnv
    .assumed``): ``node`` behind a check that they are equal, or that ``node``'s is 1 and
    ``shape``'s 0 (NumPy broadcasts a length 1 to 0; nothing is read), when the program runs
    (else NumPy's ValueError, before anything reads past the shorter one: ``x[lag:] -
    x[:T - lag]`` with lag > T is (0,) against (2T - lag,))."""
    assumed = symbolic()._env().assumed
    lead = len(shape) - len(node.shape)
    pairs = [(a, b) for a, b in zip(node.shape, shape[lead:]) if assumed and
             not isinstance(a, int) and symbolic().sympy.expand(a - b) in assumed]
    if not pairs:
        return node
    from .indexing import checked
    from .proxy import size_operand
    ok = None
    for a, b in pairs:          # (or nothing to compute: NumPy broadcasts a length 1 to 0)
        same = (size_operand(a) == size_operand(b)) | \
            (size_operand(a) == 1) & (size_operand(b) == 0)
        ok = same if ok is None else ok & same
    return checked(wrap(node), ok, LENGTHS_DIFFER).node


def _positive_step(step):
    """A slice's step: a nonzero int, or a loop index's expression that is > 0 in every
    iteration."""
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool) and step != 0:
        return int(step)
    if is_dim(step):
        try:
            if symbolic().less(0, step):
                return step
        except Exception as e:
            if not loop_dependent(e):
                raise
    if isinstance(step, Proxy) and step.node.shape in ((), (1,)) and step.dtype.kind in "iu":
        return _checked_step(step)
    raise DataDependentError(
        f"a slice with bounds or a step known only at run time and step {step!r} (at "
        f"{user_location()}): only a nonzero int step, or a loop index > 0 in every "
        "iteration, is supported there")


STEP_ZERO, STEP_NEGATIVE = 9, 10     # check codes (runtime/compiled.py CHECK_MESSAGES)


def _checked_step(step):
    """A step computed from array values (``sieve[i * i::i]`` with ``i`` carried by a while
    loop), checked when the program runs: zero raises NumPy's ValueError, a negative step
    (a reversed slice, not compiled) raises saying so."""
    from .indexing import checked
    s = _as_int64(step, "slice step")
    for code, ok in ((STEP_ZERO, s != 0), (STEP_NEGATIVE, s >= 0)):
        s = checked(s, ok, code)
    return s


def _key(b):
    """A bound as a key: equal for equal values (``indptr[i]`` written twice is one value)."""
    if isinstance(b, Proxy):
        return _structure(b.node, 0)
    return ("value", str(getattr(b, "expr", b)))      # (an int, or a size's expression)


_LEAVES = ("input", "const", "scalar", "size")      # the same attributes, the same value


def _structure(node, depth):
    """The node's value as a key: its op, attributes and operands' keys (the graph is pure,
    so equal keys are equal values); a carried value or a deep chain by identity."""
    if depth > 24 or (not node.inputs and node.op not in _LEAVES):
        return ("id", id(node))
    return (node.op, node.attrs, node.shape, str(node.dtype),
            tuple(_structure(i, depth + 1) for i in node.inputs))


def _as_int64(b, what):
    """A bound or size as an int, or a traced int64 value."""
    if isinstance(b, Proxy):
        if b.dtype.kind not in "iub" or b.node.shape not in ((), (1,)):
            raise TypeError(f"slice indices must be integers or None or have an __index__ "
                            f"method (a {what} of dtype {b.dtype} at {user_location()})")
        return b.reshape(()).astype(np.int64)
    if is_dim(b):
        from .iteration import size_proxy
        return size_proxy(symbolic().canon(b))
    return int(b)


def _clamp(b, n, default, up=True):
    """NumPy's start or stop of a slice on an axis of ``n``: a negative bound counts from the
    end; the result is clipped to [0, n] (step > 0) or [-1, n - 1] (step < 0, ``up`` False)."""
    if b is None:
        return default
    v = _as_int64(b, "slice bound")
    lo, hi = (0, n) if up else (-1, n - 1)
    if not isinstance(v, Proxy) and not isinstance(n, Proxy):
        return min(max(v + n if v < 0 else v, lo), hi)
    if not isinstance(v, Proxy):
        v = wrap(as_node(np.int64(v)))
    return np.minimum(np.maximum(np.where(v < 0, v + n, v), lo), hi)
