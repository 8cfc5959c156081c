"""Views, indexing and array creation inside compiled functions vs NumPy.

All results are compared exactly (views/copies move values, they never round);
the few entries that do arithmetic on top use 2 ULP.  `empty_like` is only
checked for shape and dtype.  Compilations in this module: ~12.
"""
import numpy as np
import pytest

import cppcodegen

from helpers import ARITH, EXACT, Batch, assert_matches_numpy, check_against_numpy, rng

RESHAPE = {
    "reshape": "x.reshape(6, 4)", "reshape_tuple": "x.reshape((4, 6))",
    "reshape_neg1": "x.reshape(-1)", "reshape_neg1_mid": "x.reshape(2, -1, 2)",
    "np_reshape": "np.reshape(x, (3, -1))", "reshape_to_5d": "x.reshape(1, 2, 3, 1, 4)",
    "ravel": "x.ravel()", "np_ravel": "np.ravel(x)", "flatten": "x.flatten()",
    "ravel_T": "x.T.ravel()", "reshape_T": "x.T.reshape(4, 6)",
    "reshape_step": "x[:, ::2, ::-1].reshape(-1)", "reshape_then_T": "x.reshape(4, 6).T",
    "reshape_arith": "x.reshape(6, 4) * 2 + x.reshape(6, 4)[::-1]",
    "flatten_neg": "x[::-1].flatten()",
}
TRANSPOSE = {
    "T": "x.T", "transpose": "x.transpose()", "transpose_axes": "x.transpose(2, 0, 1)",
    "np_transpose": "np.transpose(x, (1, 2, 0))", "transpose_tuple": "x.transpose((0, 2, 1))",
    "swapaxes": "x.swapaxes(0, 2)", "np_swapaxes_neg": "np.swapaxes(x, -1, 1)",
    "moveaxis": "np.moveaxis(x, 0, -1)", "moveaxis_multi": "np.moveaxis(x, [0, 1], [2, 0])",
    "T_plus": "x.T + 1", "T_T": "x.T.T * 2", "T_of_expr": "(x * 3).T[::2]",
    "mT_2d": "x[0].T - x[1].T",
}
INDEXING = {
    "step": "x[::2]", "neg_step": "x[:, ::-1]", "neg_step2": "x[::-1, ::-2, 1::2]",
    "ellipsis": "x[..., 1:3]", "ellipsis_mid": "x[0, ..., 2]", "int0": "x[1]",
    "int_neg": "x[-1, :, 2]", "int_all": "x[1, 2, 3]", "int_all_neg": "x[-1, -2, -3]",
    "newaxis": "x[None]", "newaxis_mid": "x[:, np.newaxis]", "newaxis_end": "x[..., None]",
    "newaxis_multi": "x[None, :, None, 1]", "slice_empty": "x[:, 3:]",
    "slice_clamped": "x[:, 1:100]", "slice_neg_bounds": "x[-1:-3:-1, -2:]",
    "slice_then_arith": "x[:, 1:] - x[:, :-1]", "neg_idx_arith": "x[::-1] + x",
    "chain": "x[1:][0][::-1]", "single_elem_slice": "x[1:2, 2:3, 3:4]",
}
BROADCAST = {
    "broadcast_to": "np.broadcast_to(x[:, :1, :], (2, 5, 4))",
    "broadcast_to_new": "np.broadcast_to(x[0, 0], (3, 4))",
    "broadcast_to_arith": "np.broadcast_to(x[:, :1], (2, 3, 4)) + x",
    "expand_dims": "np.expand_dims(x, 1)", "expand_dims_tuple": "np.expand_dims(x, (0, -1))",
    "expand_dims_neg": "np.expand_dims(x, -2)", "squeeze": "x[:, :1].squeeze()",
    "squeeze_axis": "np.squeeze(x[:1, :, :1], axis=0)", "squeeze_tuple": "x[:1, 1:2].squeeze((0, 1))",
    "squeeze_noop": "np.squeeze(x)", "bcast_row_col": "x[:, :, :1] * x[:, :1, :]",
    "bcast_arange": "x + np.arange(4)",
}
CREATION = {
    "zeros": "np.zeros((2, 3))", "zeros_dtype": "np.zeros(5, dtype=np.int32)",
    "zeros_bool": "np.zeros((2, 2), dtype=bool)", "ones": "np.ones((3,), dtype=np.float32)",
    "ones_int": "np.ones((2, 4), np.int64)", "full": "np.full((2, 3), 7, dtype=np.int32)",
    "full_float": "np.full((3, 2), 2.5)", "full_nan": "np.full(4, np.nan, dtype=np.float32)",
    "arange": "np.arange(5)", "arange_start_step": "np.arange(2, 11, 3)",
    "arange_neg_step": "np.arange(10, -3, -4)", "arange_float": "np.arange(0.0, 1.0, 0.25)",
    "arange_dtype": "np.arange(6, dtype=np.float32)", "arange_empty": "np.arange(3, 3)",
    "zeros_like": "np.zeros_like(x)", "ones_like": "np.ones_like(x)",
    "ones_like_dtype": "np.ones_like(x, dtype=np.int8)", "full_like": "np.full_like(x, 3)",
    "full_like_float": "np.full_like(x, 0.5, dtype=np.float64)",
    "zeros_like_T": "np.zeros_like(x.T)", "empty_like": "np.empty_like(x)",
    "empty_like_dtype": "np.empty_like(x, dtype=np.float32)",
    "zeros_plus_x": "np.zeros((2, 3, 4), x.dtype) + x", "arange_times": "np.arange(4) * x",
    "ones_0d": "np.ones(())", "zeros_empty": "np.zeros((0, 3))",
}
SHAPE_ONLY = {"empty_like", "empty_like_dtype"}
ARITH_OPS = {"reshape_arith", "T_plus", "T_T", "T_of_expr", "slice_then_arith", "neg_idx_arith",
             "broadcast_to_arith", "bcast_row_col", "bcast_arange", "zeros_plus_x",
             "arange_times", "mT_2d"}

GROUPS = {"reshape": RESHAPE, "transpose": TRANSPOSE, "indexing": INDEXING,
          "broadcast": BROADCAST, "creation": CREATION}


def _x(dt, seed=200):
    r = rng(seed)
    if np.dtype(dt) == np.bool_:
        return r.random((2, 3, 4)) < 0.5
    if np.dtype(dt).kind == "f":
        x = r.uniform(-9, 9, (2, 3, 4)).astype(dt)
        x[0, 0, :2] = [np.nan, -0.0]
        return x
    return r.integers(-100, 100, (2, 3, 4)).astype(dt)


def _batches():
    out = {}
    for g, ops in GROUPS.items():  # every group on float64, contiguous
        out[f"views-{g}-f64"] = Batch(f"views-{g}-f64", ["x"], ops, lambda: (_x(np.float64),))
    # the input itself non-contiguous (same logical values layout (2,3,4))
    out["views-reshape-f64-strided"] = Batch(
        "views-reshape-f64-strided", ["x"], RESHAPE,
        lambda: (_x(np.float64, 201).transpose(2, 1, 0).copy().transpose(2, 1, 0)[:, :, :],))
    out["views-indexing-f64-T"] = Batch(
        "views-indexing-f64-T", ["x"], INDEXING,
        lambda: (np.ascontiguousarray(_x(np.float64, 202).transpose(1, 2, 0)).transpose(2, 0, 1),))
    out["views-transpose-f32-neg"] = Batch(
        "views-transpose-f32-neg", ["x"], TRANSPOSE,
        lambda: (_x(np.float32, 203)[::-1, :, ::-1],))
    mixed = {**{k: RESHAPE[k] for k in ["reshape_neg1", "ravel_T", "reshape_step"]},
             **{k: TRANSPOSE[k] for k in ["transpose_axes", "moveaxis", "T_plus"]},
             **{k: INDEXING[k] for k in ["neg_step2", "int_all", "newaxis_multi", "ellipsis_mid"]},
             **{k: BROADCAST[k] for k in ["broadcast_to", "expand_dims_tuple", "squeeze_axis",
                                          "bcast_arange"]},
             **{k: CREATION[k] for k in ["zeros_like", "full_like", "ones_like_dtype",
                                         "empty_like"]}}
    for dt, dn in [(np.int32, "i32"), (np.bool_, "bool"), (np.int8, "i8")]:
        ops = dict(mixed)
        if dt == np.bool_:
            ops = {k: v for k, v in ops.items()
                   if k not in ("T_plus", "bcast_arange", "full_like")}
        out[f"views-mixed-{dn}"] = Batch(f"views-mixed-{dn}", ["x"], ops, lambda dt=dt: (_x(dt),))
    return out


BATCHES = _batches()


@pytest.mark.parametrize("batch,op", [b.param(op) for b in BATCHES.values() for op in b.exprs])
def test_view(batch, op):
    got, expected = batch.get(op)
    path = f"{batch.key}:{op} = {batch.exprs[op]}"
    if op in SHAPE_ONLY:
        assert isinstance(got, np.ndarray), f"{path}: got {type(got).__name__}"
        assert got.shape == expected.shape and got.dtype == expected.dtype, (
            f"{path}: got {got.shape} {got.dtype}, expected {expected.shape} {expected.dtype}")
        return
    tol = ARITH if op in ARITH_OPS else EXACT
    assert_matches_numpy(got, expected, _path=path, check_zero_sign=op not in ARITH_OPS, **tol)


# ---- results of one call are not clobbered by the next call ------------------
def view_then_scale(x):
    return x.T, x[::-1] * 2.0, x.reshape(-1)


def test_results_survive_next_call():
    """A returned array must stay valid after another call (no reuse of an
    internal output buffer); if it aliases the input it must do so like NumPy."""
    x1 = rng(210).uniform(-1, 1, (4, 5))
    x2 = rng(211).uniform(-1, 1, (4, 5))
    got1, expected1 = check_against_numpy(view_then_scale, x1, **EXACT)
    snapshot = [np.array(g, copy=True) for g in got1]
    check_against_numpy(view_then_scale, x2, **EXACT)
    for i, (g, s) in enumerate(zip(got1, snapshot)):
        assert np.array_equal(np.asarray(g), s), f"result [{i}] of the first call changed"


def _evens(x):
    return x[::2]


def _transposed_rows(a):
    return a.T[::2]


def _reversed_after_update(x):
    x += 1
    return x[::-3]


def _view_then_update(x):
    v = x[1:]
    x *= 2
    return v


def _copies(x):
    return x[:, ::2].copy(), x.flatten(), x.astype(x.dtype)


@pytest.mark.parametrize("fn, writes", [(_evens, ()), (_transposed_rows, ()),
                                        (_reversed_after_update, (0,)),
                                        (_view_then_update, (0,))])
def test_a_view_of_an_argument_is_returned_as_a_view(fn, writes):
    """``return x[::2]``, ``a.T[::2]``: NumPy returns views of the caller's array (a write
    through the result reaches it; an update of the argument after the view was taken shows
    in it). The compiled function returned copies."""
    x = np.arange(24.0).reshape(4, 6) if fn is _transposed_rows else np.arange(10.0)
    want, got_arg = fn(x.copy()), x.copy()
    got = cppcodegen.compile(fn)(got_arg)
    np.testing.assert_array_equal(got, want)
    assert np.shares_memory(got, got_arg)
    got[...] = -1                               # a write through the result
    assert (got_arg == -1).sum() == got.size


def _rows_reshaped(a):
    a[0, 0] = -1.0
    return a[1:].reshape(-1), a[:, 1:].T


@pytest.mark.parametrize("fn", [_evens, _transposed_rows, _reversed_after_update,
                                _view_then_update, _rows_reshaped])
def test_views_of_arguments_stay_views_for_every_size_and_layout(fn):
    """After a call of another size (a build for symbolic sizes) or with a strided argument,
    a returned view of the argument was a copy; its sizes are now evaluated when it runs."""
    f = cppcodegen.compile(fn)
    shapes = [(4, 6), (6, 8), (3, 5)] if fn in (_transposed_rows, _rows_reshaped) else \
        [(10,), (14,), (9,)]
    for k, shape in enumerate(shapes):
        base = np.arange(float(np.prod(shape) * 2)).reshape(*shape[:-1], shape[-1] * 2)
        x = base[..., ::2] if k == 2 else np.ascontiguousarray(base[..., :shape[-1]])
        want_arg, got_arg = x.copy(), x
        want, got = fn(want_arg), f(got_arg)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(g, w)
            assert np.shares_memory(g, got_arg)
        np.testing.assert_array_equal(got_arg, want_arg)


def _crop(img, top, ch):
    return img[top:top + ch]


def _center_crop(img, ch, cw):
    h, w = img.shape[:2]
    top, left = (h - ch) // 2, (w - cw) // 2
    return img[top:top + ch, left:left + cw], img[top:, left]


def test_slices_bounded_by_int_arguments_stay_views_when_the_ints_change():
    """An int argument whose value changed is a run-time value (one build for every value):
    a slice bounded by it was returned as a copy, and writes through it never reached the
    image."""
    f, g = cppcodegen.compile(_crop), cppcodegen.compile(_center_crop)
    for top, ch in [(10, 20), (11, 20), (12, 30), (0, 100)]:
        img = np.arange(100.0)
        r = f(img, top, ch)
        np.testing.assert_array_equal(r, _crop(img, top, ch))
        assert np.shares_memory(r, img)
    for shape in [(48, 64, 3), (41, 29, 3), (9, 9, 3)]:
        img = np.arange(np.prod(shape)).reshape(shape).astype(np.uint8)
        got, want = g(img, shape[0] // 2, shape[1] // 3), _center_crop(img, shape[0] // 2,
                                                                         shape[1] // 3)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
            assert np.shares_memory(a, img)
        got[0][...] = 7
        assert (want[0] == 7).all()


def test_copies_of_argument_views_stay_copies():
    x = np.arange(12.0).reshape(3, 4)
    for got, want in zip(cppcodegen.compile(_copies)(x), _copies(x)):
        np.testing.assert_array_equal(got, want)
        assert not np.shares_memory(got, x)


def _copy_after_update(x):
    x *= 2
    return x[1:].copy(), x.copy()


def _contiguous(x):
    return np.ascontiguousarray(x), np.asarray(x, order="C"), x.astype(x.dtype, order="C", copy=False)


def test_copies_after_updates_and_layout_requests_are_copies():
    """``x *= 2; return x.copy()`` returned the caller's array (the buffer the update was
    written into); ``np.ascontiguousarray(x)`` of a strided argument returned x itself. NumPy
    copies both; a diagonal (NumPy's read-only view) is returned as a copy."""
    x = np.arange(6.0)
    for got in cppcodegen.compile(_copy_after_update)(x):
        assert not np.shares_memory(got, x)
    strided = np.arange(96.0).reshape(8, 12)[::2, ::2]
    for got, want in zip(cppcodegen.compile(_contiguous)(strided), _contiguous(strided)):
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous and not np.shares_memory(got, strided)
    plain = np.arange(12.0).reshape(3, 4)
    assert all(np.shares_memory(got, plain) for got in cppcodegen.compile(_contiguous)(plain))
    assert not np.shares_memory(cppcodegen.compile(lambda a: np.diagonal(a))(plain), plain)


def _flat_grid(n, m):
    xi, yi = np.mgrid[0:n, 0:m]
    xi.shape = yi.shape = n * m
    return xi * 10 + yi


def _shape_set(x):
    y = x * 2.0
    y.shape = x.size
    z = x[1:]
    z.shape = (-1,)
    return y + 1, z, np.asarray(x, copy=np._CopyMode.IF_NEEDED)


def test_setting_shape_reshapes_in_place():
    """``y.shape = n`` (NPBench's mandelbrot: ``Xi.shape = Yi.shape = n * m``) raised an
    AttributeError from inside the tracer."""
    np.testing.assert_array_equal(cppcodegen.compile(_flat_grid)(3, 4), _flat_grid(3, 4))
    x = np.arange(12.0).reshape(3, 4)
    f = cppcodegen.compile(_shape_set)
    for g, w in zip(f(x), _shape_set(x)):
        np.testing.assert_array_equal(g, w)
        assert g.shape == w.shape


def _rotations(img):
    return np.rot90(img), np.rot90(img, 2), np.rot90(img, -1), np.rot90(img, 3, axes=(1, 0))


def _rotated_result(img):
    return np.rot90(img * 2, 1, (0, 2)) + 1


def test_rot90_is_numpys_view():
    """``np.rot90`` as NumPy composes it (flips and a transpose): a view of the argument
    (it was NumPy's call and a copy, 40x NumPy's time for an image), every k and axes."""
    img = np.arange(4 * 5 * 3).reshape(4, 5, 3).astype(np.uint8)
    for got, want in zip(cppcodegen.compile(_rotations, fallback=False)(img), _rotations(img)):
        assert got.shape == want.shape and np.shares_memory(got, img)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(cppcodegen.compile(_rotated_result, fallback=False)(img),
                                  _rotated_result(img))
    with pytest.raises(ValueError, match="Axes must be different"):
        cppcodegen.compile(lambda m: np.rot90(m, 1, (1, 1)), fallback=False)(img)
