"""Indexing: basic slicing and integer indices, integer-array gathers and scatters, ``x[i] = v``.

In: a traced array and an index (ints, slices, ellipsis, newaxis, symbolic loop indices,
integer or boolean arrays). Out: a view (``slice`` node) for basic indexing; a ``gather``
node for integer arrays (loaded inside fused kernels, bounds-checked at run time); for
assignment, an in-place update (``proxy.update``) of the array with a ``setitem`` or
``scatter`` node. ``x[mask]`` reads: ``selection.py``."""
from __future__ import annotations

import contextlib

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import out_of_bounds, user_location
from ..ir.graph import EFFECTS, keep_for_errors, MADE, make_node
from .elementwise import loop_dtypes, where
from .creation import array, of_scalars, pinned_bound
from .externs import extern_call
from . import replace
from .proxy import (as_node, asproxy, broadcast_node, broadcasts_to, cast_node, copy_of, own,
                    Proxy, unsupported, update, view_of, wrap)
from .dataslice import (argument_ints, data_slice, is_data_bound, OutsideLoop, pending,
                        run_time_slice, value_bounds)
from .iteration import size_proxy, value_size
from .mask_assign import mask_store
from .selection import is_selection, Selection
from .stored import stored_part
from .sizes import (broadcast_sizes, canon_shape, fit, is_dim, loop_dependent, run_time_size,
                    symbolic, symbolic_index)
from .views import ravel, reshape, transpose


def _basic_index(a: Proxy, index):
    """Normalize a basic index: per input dim (start, step, length) (an int index is
    (i, 1, 1) and listed in ``ints``), the result shape, the sliced shape, and the ``bind``
    nodes of slices with bounds from array values (``dataslice.py``)."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(value_bounds(ix) for ix in index)
    for ix in index:
        if isinstance(ix, (Proxy, np.ndarray, list)) or (ix is not None and not isinstance(
                ix, (int, np.integer, slice, type(Ellipsis))) and not is_dim(ix)):
            unsupported("advanced indexing (integer or boolean arrays as indices)")
    n_ell = sum(ix is Ellipsis for ix in index)
    if n_ell > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...') (at {user_location()})")
    n_real = sum(ix is not None and ix is not Ellipsis for ix in index)
    if n_real > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{n_real} were indexed (at {user_location()})")
    if n_ell == 0:
        index = index + (Ellipsis,)
    pos = index.index(Ellipsis)
    index = index[:pos] + (slice(None),) * (a.ndim - n_real) + index[pos + 1:]
    spec, out_shape, sliced_shape, ints, dim = [], [], [], [], 0
    binds = ()
    for ix in index:
        if ix is None:
            out_shape.append(1)
            continue
        size = a.node.shape[dim]
        bounds = (ix.start, ix.stop, ix.step) if isinstance(ix, slice) else ()
        if any(isinstance(b, Proxy) for b in bounds) and not any(map(is_data_bound, bounds)):
            ix = slice(*(symbolic().SymInt.wrap(value_size(b)) if isinstance(b, Proxy)
                         else b for b in bounds))       # (integer arguments' values)
        elif bounds and not MADE and any(map(is_data_bound, bounds)) and all(
                of_scalars(b) for b in bounds if is_data_bound(b)):
            ix = slice(*(pinned_bound(b) if is_data_bound(b) else b for b in bounds))
        if run_time_slice(ix) or _undecidable(ix, size, dim):
            sp, more = data_slice(ix, size, dim)
            spec.append(sp)
            out_shape.append(sp[2])
            sliced_shape.append(sp[2])
            binds += more
            dim += 1
            continue
        if not isinstance(size, int) or is_dim(ix) or (isinstance(ix, slice) and any(
                is_dim(b) for b in (ix.start, ix.stop))):     # a loop's index: symbolic
            spec.append(symbolic_index(ix, size, dim))
            length = spec[-1][2]
            if isinstance(ix, slice):
                out_shape.append(length)
            else:
                ints.append(dim)
            sliced_shape.append(length)
            dim += 1
            continue
        if isinstance(ix, slice):
            start, stop, step = ix.indices(size)
            length = len(range(start, stop, step))
            spec.append((start if length else 0, step, length))
            out_shape.append(length)
            sliced_shape.append(length)
        else:
            i = int(ix)
            if not -size <= i < size:
                raise out_of_bounds(i, dim, size)
            spec.append((i % size, 1, 1))
            sliced_shape.append(1)
            ints.append(dim)
        dim += 1
    return spec, out_shape, sliced_shape, ints, binds


def _undecidable(ix, size, dim) -> bool:
    """A slice in a compiled loop whose clamping differs between iterations (``x[:n - i * i]``,
    ``x[i * i:]``, ``row[1:]`` of a slice of run-time length): computed where it runs instead
    (``dataslice.py``)."""
    if not isinstance(ix, slice) or not (any(is_dim(b) for b in (ix.start, ix.stop))
                                         or run_time_size(size)):
        return False
    try:
        symbolic_index(ix, size, dim)
    except Exception as e:
        return loop_dependent(e)
    return False


def _is_advanced(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(ix, (Proxy, np.ndarray, list)) for ix in parts)


def _traced_item(v):
    """An item of an index list as a traced int if it is one (a traced value, a loop
    variable), else itself; lists item by item."""
    if isinstance(v, list):
        return [_traced_item(u) for u in v]
    if is_dim(v) and not isinstance(v, (int, np.integer)):
        return size_proxy(symbolic().canon(v))
    return v


def _holds_traced(v) -> bool:
    if isinstance(v, list):
        return any(_holds_traced(u) for u in v)
    return isinstance(v, Proxy) or is_dim(v) and not isinstance(v, (int, np.integer))


def _index_lists(index):
    """``index`` with its lists that hold traced ints (``A[[k, p]]``, p = np.argmax(...))
    as traced index arrays; lists of plain ints stay lists."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(ix, list) and _holds_traced(ix) for ix in parts):
        return index
    new = tuple(array(_traced_item(ix), original=np.array)
                if isinstance(ix, list) and _holds_traced(ix) else ix for ix in parts)
    return new if isinstance(index, tuple) else new[0]


def _traced_ints(index):
    """``index`` with its loop-variable ints (``x[i + 1]``) as traced values: a checked
    gather or scatter, for an index in bounds in some iterations only (the error is then
    NumPy's, at run time, and only where Python would read it); plain ints too (``row[0]`` of
    a slice of run-time length); None if there are none."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any((is_dim(ix) or type(ix) is int or isinstance(ix, np.integer))
               and not isinstance(ix, slice) for ix in parts):
        return None
    new = tuple(size_proxy(symbolic().canon(ix)) if is_dim(ix) and not isinstance(ix, slice)
                else size_proxy(int(ix)) if type(ix) is int or isinstance(ix, np.integer)
                else ix for ix in parts)
    return new if isinstance(index, tuple) else new[0]


def _basic_or_checked(a: Proxy, index):
    """(``_basic_index(a, index)``, None), or (None, the index with its loop-variable ints
    traced) where a loop index makes the basic index undecidable (``_traced_ints``)."""
    try:
        return _basic_index(a, index), None
    except Exception as e:
        traced = _traced_ints(index) if loop_dependent(e) or GUARDS and isinstance(
            e, IndexError) else None    # (x[5] of 5 under a guard: an error where it holds)
        if traced is None:
            raise
        return None, traced


def getitem(a: Proxy, index):
    index = argument_ints(_index_lists(index))
    sel = _select_rows(a, index)
    if sel is not None:
        return sel
    if _is_advanced(index):
        return advanced_getitem(a, index)
    try:
        basic, traced = _basic_or_checked(a, index)
    except OutsideLoop as e:            # out[:k] outside every loop: returned, a view
        return pending(a, index, e)
    if basic is None:
        return advanced_getitem(a, traced)
    spec, out_shape, sliced_shape, ints, binds = basic
    node = a.node
    part = None
    if any(s != (0, 1, n) for s, n in zip(spec, a.node.shape)):   # (no guard)
        node = make_node("slice", (node,) + binds, sliced_shape, a.dtype, user_location(), spec=tuple(spec))
        part = None if binds else stored_part(a.node, spec, ints)
    parts = index if isinstance(index, tuple) else (index,)
    if not out_shape and not any(ix is Ellipsis for ix in parts):    # x[i, j]: a scalar,
        r = reshape(wrap(own(node)), ())        # a copy of the element (not a view)
        r.scalar = True
        return r
    view = view_of(a, node)
    if part is not None:            # (one part of a fresh array: its value, stored_part)
        view._node = part
    return reshape(view, out_shape)


_ASARRAY = np.asarray      # (NumPy's own: during a trace np.asarray is creation.array)


def _full(ix) -> bool:
    return isinstance(ix, slice) and ix == slice(None)


def _select_rows(a, index):
    """``sel[:, rest]`` of a lazy selection ``x[mask]``: each selected row indexed alike, the
    selection of ``x[..., rest]`` (``F[cyl, :][:, [0, 5, 6, ...]]``); None otherwise."""
    if not is_selection(a) or not isinstance(index, tuple) or not index or \
            not _full(index[0]) or any(ix is Ellipsis for ix in index):
        return None
    rest = index[1:]
    listed = [ix for ix in rest if ix is not None and not isinstance(ix, slice) and
              type(ix) is not int]      # (ints, np.newaxis and slices: each row's view)
    if len(listed) > 1 or any(np.ndim(ix) != 1 for ix in listed):
        return None         # (several advanced indices: NumPy may move their axes first)
    k = a.mask.ndim
    whole = getitem(a.base, (slice(None),) * k + rest)
    if tuple(whole.shape[:k]) != tuple(a.base.shape[:k]):
        return None
    return Selection(whole, a.mask)


def _int_checked(a: Proxy, value):
    """``value`` stored by ``x[mask] = v`` or ``x[idx] = v`` (a Python int: checked)."""
    from .pyints import python_int_into     # (raises.py, which pyints uses, imports this)
    return python_int_into(value, a.dtype, _of_argument(a))


def _of_argument(a: Proxy) -> bool:
    """Is ``a`` an argument, or a view of one (a store into it reaches the caller's array)?"""
    while a._base is not None:
        a = a._base[0]
    return a.arg is not None


def advanced_getitem(a: Proxy, index):
    """``x[idx]``, ``x[i_arr, j_arr]``, ``x[:, idx]``, ``x[k]`` with a traced int ``k``: a
    gather, loaded inside the fused kernels (negative indices wrap, an out-of-range one raises
    NumPy's IndexError when the program returns). ``x[mask]`` (a data-dependent shape) and
    indices with np.newaxis are NumPy's own indexing between kernels (see
    ``extern_call(speculate=True)``)."""
    from ..runtime.extern import advanced_index
    parts = index if isinstance(index, tuple) else (index,)
    for ix in parts:
        if isinstance(ix, list):
            ix = np.asarray(ix)
        dt = ix.dtype if isinstance(ix, (Proxy, np.ndarray)) else None
        if dt is not None and dt.kind not in "biu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type "
                             f"(at {user_location()})")
    sel = _gather_selected(a, parts)
    if sel is not None:
        return sel
    masked = any(isinstance(ix, (Proxy, np.ndarray)) and ix.dtype.kind == "b" or
                 isinstance(ix, list) and np.asarray(ix).dtype.kind == "b" for ix in parts)
    if masked and isinstance(parts[0], (Proxy, np.ndarray)) and \
            0 < parts[0].ndim <= a.ndim and tuple(parts[0].shape) == tuple(a.shape[:parts[0].ndim]) \
            and all(_full(ix) for ix in parts[1:]):
        return Selection(a, asproxy(parts[0]))      # x[mask], x[mask, :]: lazy (selection.py)
    if not masked and not any(ix is None for ix in parts):
        out = _gather(a, parts)
        if out.ndim and not GUARDS and all(_integer_scalar(ix) for ix in parts):
            return view_of(a, out.node)     # A[k] with a NumPy integer k: a view, as NumPy's
        return out                          # basic indexing (A[i], A[j] = A[j], A[i])
    key = tuple(asproxy(np.asarray(ix)) if isinstance(ix, (np.ndarray, list)) else ix
                for ix in parts)
    return extern_call(advanced_index, (a, key if isinstance(index, tuple) else key[0]), {},
                       speculate=masked)


def _gather_selected(a, parts):
    """``img[yi[m], xi[m]]``: every index a selection of one mask, element by element: the
    selection of the gather by the whole index arrays, loaded (and range-checked, as NumPy
    checks the selected ones) only where the mask holds; else None."""
    if is_selection(a) or not all(is_selection(ix) and ix.dtype.kind in "iu" and
                                  ix.ndim == 1 and parts[0].same_mask(ix) for ix in parts):
        return None
    mask = parts[0].mask
    if len(parts) > a.ndim:
        return None
    with guarded(reshape(mask, tuple(mask.shape) + (1,) * (a.ndim - len(parts)))):
        return Selection(_gather(a, tuple(ix.base for ix in parts)), mask)


def _integer_scalar(ix) -> bool:
    """An index NumPy's basic indexing takes (a slice, an int, a traced NumPy or Python
    integer scalar), not an array (a traced 0-d array's index makes a copy)."""
    if isinstance(ix, Proxy):
        return not ix.node.shape and ix.dtype.kind in "iu" and bool(ix.weak or ix.scalar)
    return isinstance(ix, (slice, int, np.integer)) or ix is Ellipsis


GUARDS: list = []
"""Traced 0-d bools under which the values being traced are used: the later operands of
``a and b``/``a or b`` and the arms of ``x if c else y``, which Python would not evaluate
when the guard is False. A gather's index error counts only where its guard holds
(``while i < n and a[i] > t`` reads a[n] and discards it)."""


def checked(value: Proxy, ok, code: int, at: str = "", **attrs) -> Proxy:
    """``value`` behind a check stage: NumPy's error ``code`` (runtime/compiled.py
    CHECK_MESSAGES; ``attrs``: the user's exception of a raise, ``raises.py``) where ``ok``
    is 0 when the program runs; in one side of ``x if c else y`` (``GUARDS``) only where that
    side is taken."""
    if GUARDS:
        ok = where(GUARDS[-1], ok, 1)
    node = make_node("check", (value.node, as_node(ok, np.dtype(np.int64))), value.node.shape,
                     value.dtype, at or user_location(), code=code, **attrs)
    keep_for_errors(node)       # (raised also where the value is never used, as in Python)
    return wrap(node, scalar=value.scalar)


@contextlib.contextmanager
def guarded(cond):
    cond = asproxy(cond)
    if GUARDS:
        cond = np.logical_and(GUARDS[-1], cond)
    GUARDS.append(cond)
    try:
        yield
    finally:
        GUARDS.pop()


def _advanced(a: Proxy, parts):
    """NumPy's integer-array indexing, normalized: slices first (a view of ``a``), then the
    array (and int) indices, broadcast together; when they are not next to each other the
    broadcast axes come first, as in NumPy (the view is transposed so they are together).
    Returns (the view, the index nodes, the first indexed axis, the broadcast shape)."""
    dots = [k for k, ix in enumerate(parts) if ix is Ellipsis]
    if len(dots) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...') (at {user_location()})")
    if dots:
        k = dots[0]
        parts = parts[:k] + (slice(None),) * (a.ndim - len(parts) + 1) + parts[k + 1:]
    if len(parts) > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{len(parts)} were indexed (at {user_location()})")
    parts = tuple(parts) + (slice(None),) * (a.ndim - len(parts))
    adv = [k for k, ix in enumerate(parts) if not isinstance(ix, slice)]
    b = a if all(ix.start is None and ix.stop is None and ix.step is None
                 for ix in parts if isinstance(ix, slice)) else \
        getitem(a, tuple(ix if isinstance(ix, slice) else slice(None) for ix in parts))
    nodes = []
    for k in adv:
        ix = parts[k]
        if isinstance(ix, (bool, np.bool_)):
            unsupported("a bool among integer-array indices")
        node = as_node(np.asarray(ix) if isinstance(ix, list) else ix)
        if node.dtype.kind not in "iu":
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             f"(`None`) and integer or boolean arrays are valid indices "
                             f"(at {user_location()})")
        nodes.append(node)
    try:
        bshape = broadcast_sizes(*[n.shape for n in nodes])
    except ValueError:
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(tuple(n.shape)) for n in nodes)} "
                         f"(at {user_location()})") from None
    axis = adv[0]
    if adv != list(range(adv[0], adv[0] + len(adv))):      # apart: broadcast axes first
        rest = [k for k in range(a.ndim) if k not in adv]
        b, axis = transpose(b, adv + rest), 0
    return b, nodes, axis, tuple(bshape)


def _gather(a: Proxy, parts) -> Proxy:
    """``a[parts]`` with integer arrays: a ``gather`` node."""
    b, nodes, axis, bshape = _advanced(a, parts)
    shape = tuple(b.shape[:axis]) + bshape + tuple(b.shape[axis + len(nodes):])
    guard = (GUARDS[-1].node,) if GUARDS else ()
    out = wrap(make_node("gather", (b.node, *nodes, *guard), canon_shape(shape), a.dtype,
                         user_location(), axis=axis, guarded=bool(guard)))
    out.scalar = not shape
    _check_if_empty(b, nodes, axis, bshape, shape, guard)
    return out


def _check_if_empty(b, nodes, axis, bshape, shape, guard):
    """NumPy checks every index of a gather whose result is empty because another axis has
    length 0 (x of shape (0, 5), x[:, [7]] raises IndexError): the result's loop loads
    nothing, so the same gather from zeros (a view) whose other empty axes have length 1
    checks them, kept as an effect of the call."""
    def empty(dims):
        return any(type(d) is int and d == 0 for d in dims)

    def one(dims):
        return tuple(1 if type(d) is int and d == 0 else d for d in dims)
    if MADE or not empty(shape) or empty(bshape):
        return
    k = len(nodes)                      # (an empty indexed axis stays empty: every index fails)
    zeros = broadcast_node(as_node(np.zeros((), b.dtype)), one(b.shape[:axis]) +
                           tuple(b.shape[axis:axis + k]) + one(b.shape[axis + k:]))
    EFFECTS.append(make_node("gather", (zeros, *nodes, *guard), one(shape), b.dtype,
                             user_location(), axis=axis, guarded=bool(guard)))


def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take``: a gather (``mode='raise'``; other modes stay NumPy's own call)."""
    if out is not None or mode != "raise":
        return extern_call(np.take, (a, indices), {"axis": axis, "out": out, "mode": mode})
    a = asproxy(a)
    if axis is None:
        return _gather(ravel(a), (indices,))
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    return _gather(a, (slice(None),) * axis + (indices,))


def _take_anywhere(a, indices, axis=None, out=None, mode="raise", *, original):
    """``np.take(table, idx)`` with a NumPy table and traced positions: NumPy dispatches on
    the table alone, so the tracer takes the call (replace.py)."""
    if any(isinstance(v, Proxy) for v in (a, indices, out)):
        return take(a, indices, axis=axis, out=out, mode=mode)
    return original(a, indices, axis=axis, out=out, mode=mode)


replace.register(np, {"take": _take_anywhere}, pass_original=True)


def _scatter(a: Proxy, index, value, accumulate=None):
    """``a[index] = value`` with integer arrays (``accumulate``: ``np.<op>.at(a, index,
    value)``): a ``scatter`` node, the stores in C order of the value (a repeated index keeps
    the last one, or accumulates them all); ``a[mask] = scalar`` is ``np.where``."""
    parts = index if isinstance(index, tuple) else (index,)
    masks = [ix for ix in parts if isinstance(ix, (Proxy, np.ndarray)) and ix.dtype.kind == "b"]
    if masks and len(parts) > 1 and parts[0] is masks[0] and all(_full(ix) for ix in parts[1:]):
        parts = parts[:1]                   # x[mask, :] = v is x[mask] = v
    if masks and len(parts) > 1 and parts[0] is masks[0] and accumulate is None and \
            np.ndim(masks[0]) == 1 and np.ndim(value) == 0 and not is_selection(value) and \
            not any(isinstance(ix, (Proxy, np.ndarray, list)) for ix in parts[1:]):
        view = a[(slice(None),) + tuple(parts[1:])]     # x[mask, 0] = v: the rows of the
        view[masks[0]] = value                          # view x[:, 0] where mask holds
        return
    if masks:
        if parts[0] is masks[0] and mask_store(a, parts, value, accumulate):
            return
        unsupported("boolean-mask assignment other than x[mask] = v (v a scalar, a row, "
                    "f(x[mask]), one value per True element) with a mask of x's shape or of "
                    "its leading axes")
    if any(ix is None for ix in parts):
        unsupported("np.newaxis in an assignment index")
    b, nodes, axis, bshape = _advanced(a, parts)
    region = canon_shape(tuple(b.shape[:axis]) + bshape + tuple(b.shape[axis + len(nodes):]))
    v = as_node(value)
    dt = a.dtype
    if accumulate is not None:
        dt = loop_dtypes(getattr(np, accumulate), (a, value), None)[-1]
        if not np.can_cast(dt, a.dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{accumulate}' output from {dt!r} to "
                            f"{a.dtype!r} with casting rule 'same_kind' (at {user_location()})")
    if not broadcasts_to(v.shape, region):
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be "
                         f"broadcast to indexing result of shape {region} "
                         f"(at {user_location()})")
    v = broadcast_node(cast_node(fit(v, region), dt), region)
    if region:          # (one element: the scatter's own check stores nothing, kernels.py)
        nodes = _checked_first(nodes, [b.shape[axis + k] for k in range(len(nodes))])
    update(b, make_node("scatter", (b.node, v, *nodes), b.shape, b.dtype, user_location(),
                         axis=axis, accumulate=accumulate))


SCATTER_RANGE = 15      # check code (runtime/compiled.py CHECK_MESSAGES)


def _checked_first(nodes, sizes) -> list:
    """A scatter's indices behind a check that every one is inside its axis, which stops the
    program before the scatter stores anything: NumPy checks the indices first and leaves
    the array as it was (the scatter's own per-element check would store the other
    elements, into an argument's memory too)."""
    ok = None
    for node, n in zip(nodes, sizes):
        idx, size = wrap(node), size_proxy(n) if is_dim(n) and not isinstance(n, int) else n
        inside = np.all((idx >= -size) & (idx < size))
        ok = inside if ok is None else ok & inside
    return [checked(wrap(n), ok.astype(np.int64), SCATTER_RANGE).node for n in nodes]


def _same_view(a: Proxy, index, value) -> bool:
    """Is ``value`` the view ``a[index]`` of ``a`` as it is now? (Python's augmented assignment
    ``x[idx] += v`` updates x through the view, then assigns the view to ``x[idx]``.)"""
    if not isinstance(value, Proxy) or value._base is None:
        return False
    mine, root = _views_to_root(value)
    if mine is None or root is not (_views_to_root(a)[1] if a._base is not None else a):
        return False                # (``a`` a view itself: a row ``r = A[i]``, ``r[k:] -= v``)
    again = getitem(a, index)
    if not isinstance(again, Proxy) or again.scalar:
        return False
    other, _ = _views_to_root(again)
    return other is not None and len(other) == len(mine) and all(
        x.op == y.op and x.shape == y.shape and dict(x.attrs) == dict(y.attrs)
        for x, y in zip(mine, other))


def _views_to_root(p: Proxy):
    """(the view nodes from the array ``p`` views down to ``p``, that array), or (None, _)
    when an array on the way was updated since the view was made (updates through a view
    keep both in step, so then the view no longer shows its base as it is)."""
    chain = ()
    while p._base is not None:
        base, node_then, part = p._base
        if node_then is not base.node:
            return None, None
        chain, p = tuple(part) + chain, base
    return chain, p


def setitem(a: Proxy, index, value):
    """``a[index] = value`` on a fresh result: ``a`` becomes a new node that holds ``value``
    in the indexed region and ``a`` elsewhere (value cast unsafely, as NumPy's setitem does).
    On a view it updates the viewed array; on an argument, the caller's array."""
    index = _index_lists(index)
    if isinstance(value, (tuple, list)):    # out[0] = (x0, y0): an array of the items
        value = array(value, original=_ASARRAY)
    if _is_advanced(index):
        return _scatter(a, index, _int_checked(a, value))
    if isinstance(index, tuple) and any(ix is None for ix in index) or index is None:
        unsupported("np.newaxis in an assignment index")
    if _same_view(a, index, value):     # `x[i, :k] += v` stores x[i, :k] back into itself
        return
    basic, traced = _basic_or_checked(a, index)
    if basic is None:
        return _scatter(a, traced, _int_checked(a, value))
    spec, region, _, ints, binds = basic
    from .pyints import stored_scalar       # (raises.py, which pyints uses, imports this)
    v = as_node(stored_scalar(value, a.dtype, into_argument=_of_argument(a)))
    want = canon_shape(region)
    if not broadcasts_to(v.shape, want):
        raise ValueError(f"could not broadcast input array from shape {v.shape} into shape "
                         f"{tuple(region)} (at {user_location()})")
    v = fit(v, want)
    if v.dtype != a.dtype:
        v = make_node("cast", (v,), v.shape, a.dtype, user_location()) if v.op != "const" else \
            cast_node(v, a.dtype)
    spec = tuple(("i", s[0]) if d in ints else ("s",) + tuple(s) for d, s in enumerate(spec))
    update(a, make_node("setitem", (a.node, v) + binds, a.shape, a.dtype, user_location(),
                         spec=spec, region=tuple(region)))


def flip(m, axis=None):
    """A view with negative strides: slices with step -1."""
    m = asproxy(m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    return getitem(m, tuple(slice(None, None, -1) if d in axes else slice(None)
                            for d in range(m.ndim)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """A view: the two axes moved last and flattened, then every (m+1)-th element."""
    a = asproxy(a)
    axis1, axis2 = normalize_axis_tuple((axis1, axis2), a.ndim, allow_duplicate=False)
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    t = transpose(a, rest + [axis1, axis2])
    n, m = a.shape[axis1], a.shape[axis2]
    if offset >= 0:
        start, length = offset, max(0, min(n, m - offset))
    else:
        start, length = -offset * m, max(0, min(n + offset, m))
    if not (isinstance(n, int) and isinstance(m, int)):     # symbolic sizes: a gather of
        from .creation import arange                        # (i, i + offset), not a slice
        i = arange(length, original=np.arange)              # stepping m + 1 (which pins m)
        return getitem(t, (Ellipsis, i + max(0, -offset), i + max(0, offset)))
    flat = reshape(t, t.shape[:-2] + (n * m,))
    if length == 0:
        return getitem(flat, (Ellipsis, slice(0, 0)))
    d = getitem(flat, (Ellipsis, slice(start, start + (length - 1) * (m + 1) + 1, m + 1)))
    return copy_of(d)       # (NumPy's is a read-only view: returned, a copy, not a view
                            # the caller could write into)
