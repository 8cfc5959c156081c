"""Joining arrays natively (issue 16): ``np.concatenate``, ``np.append``, ``np.hstack``,
``np.vstack``, ``np.column_stack``, ``np.stack`` of traced arrays and constants are slice
assignments into one fresh array, fused into their consumers (no NumPy call between kernels).
Compared with NumPy: values, shapes, dtypes (promotion, ``dtype=``), empty and one-element
parts, NaN, every axis, NumPy's errors."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen

from helpers import check_against_numpy

RNG = np.random.default_rng(16)
A = RNG.standard_normal(7)
B = RNG.standard_normal(5)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((2, 4))
K = RNG.standard_normal((3, 2))
I32 = np.arange(6, dtype=np.int32) - 2
NAN = np.array([np.nan, 1.0, -0.0, np.inf])


def forms(fn, *args):
    return [k.form for k in cppcodegen.explain(fn, *args).kernels]


def cat_two(a, b):
    return np.concatenate((a, b))


def cat_consumed(a, b):
    """The join is read by a reduction and a pointwise op: one fused kernel each."""
    c = np.concatenate((a * 2.0, np.zeros(1), b))
    return c.sum(), np.exp(c) - 1.0


def cat_reduceat(indptr, cols, vals, x):
    prods = np.concatenate((vals * x[cols], np.zeros(1)))
    return np.add.reduceat(prods, indptr[:-1])


def cat_constants(a):
    return np.concatenate(([1.5, 2.5], a, np.array([-1.0])))


def cat_axes(m, n, k):
    return (np.concatenate((m, n), axis=0), np.concatenate((m, k), axis=1),
            np.concatenate((m, k), axis=-1), np.concatenate((m, n), axis=None))


def cat_dtype(a, i):
    return (np.concatenate((a, i)), np.concatenate((i, i)), np.concatenate((i, a), dtype=np.float32),
            np.concatenate((i, i.astype(np.int8))), np.concatenate((a, a), dtype=np.int64,
                                                                   casting="unsafe"))


def cat_empty(a, e):
    return np.concatenate((e, a, e)), np.concatenate((e, e)), np.concatenate((a[:1], a[:0]))


def cat_one(a):
    return np.concatenate((a,)) + 0.0


def appends(a, m):
    return np.append(a, 0.0), np.append(m, [[9.0, 8.0, 7.0, 6.0]], axis=0), np.append(m, a)


def stacks(a, b, m, n):
    return (np.hstack((a, b)), np.hstack((m, m)), np.vstack((m, n)), np.vstack((a, a)),
            np.column_stack((a, a * 2)), np.stack((a, a + 1)), np.stack((m, m), axis=-1),
            np.hstack((a, 0.0)))


def cat_in_loop(a):
    out = a
    for _ in range(3):
        out = np.concatenate((out[1:], out[:1])) * 0.5
    return out


def cat_updated(a, b):
    c = np.concatenate((a, b))
    c[2:4] = -1.0
    return c, a


@pytest.mark.parametrize("a,b", [(A, B), (NAN, A), (A[:1], B[:1]), (I32, I32[::-1]),
                                 (A.astype(np.float32), I32.astype(np.int16))])
def test_two_parts(a, b):
    check_against_numpy(cat_two, a, b)


def test_fused_into_consumers():
    check_against_numpy(cat_consumed, A, B, rtol=1e-12)
    assert "extern" not in forms(cat_consumed, A, B)


def test_reduceat_reads_the_join_in_its_loop():
    indptr = np.array([0, 2, 2, 5, 9, 9])
    cols = np.array([0, 3, 1, 1, 2, 4, 0, 3, 2])
    vals = RNG.standard_normal(9)
    x = RNG.standard_normal(5)
    check_against_numpy(cat_reduceat, indptr, cols, vals, x, rtol=1e-12)
    assert forms(cat_reduceat, indptr, cols, vals, x) == ["segment"]


@pytest.mark.parametrize("fn,args", [
    (cat_constants, (A,)), (cat_axes, (M, N, K)), (cat_dtype, (A[:6], I32)),
    (cat_empty, (A, np.zeros(0))), (cat_one, (A,)), (appends, (M[0], M)),
    (stacks, (A, B, M, N)), (cat_in_loop, (A,)), (cat_updated, (A, B))])
def test_forms(fn, args):
    check_against_numpy(fn, *args)
    assert "extern" not in forms(fn, *args)


def test_bool_and_complex():
    def f(m, z):
        return np.concatenate((m, ~m)), np.concatenate((z, z.conj()))
    m = np.array([True, False, True])
    check_against_numpy(f, m, m + 1j)


def test_errors_are_numpys():
    def ranks(m, a):
        return np.concatenate((m, a))

    def sizes(m, k):
        return np.concatenate((m, k), axis=0)

    def scalar(a):
        return np.concatenate((a[0], a[1]))

    def casting(a):
        return np.concatenate((a, a), dtype=np.int64)

    def axis(a):
        return np.concatenate((a, a), axis=1)

    for fn, args, exc in [(ranks, (M, A), ValueError), (sizes, (M, K), ValueError),
                          (scalar, (A,), ValueError), (casting, (A,), TypeError),
                          (axis, (A,), np.exceptions.AxisError)]:
        with pytest.raises(exc):
            fn(*args)
        with pytest.raises(exc):
            cppcodegen.compile(fn)(*args)


def cat_out(a, b, out):
    r = np.concatenate((a, b), out=out)
    return r + 1, out


def test_out():
    check_against_numpy(cat_out, A, B, np.zeros(12), writes=(2,))
    check_against_numpy(cat_out, A, B, np.zeros(12, np.float32), writes=(2,))
    with pytest.raises(ValueError):
        cppcodegen.compile(cat_out)(A, B, np.zeros(11))


def test_symbolic_sizes():
    """One build for every length (dynamic shapes): the parts' positions are sizes."""
    f = cppcodegen.compile(cat_consumed, dynamic=True)
    for n, m in [(7, 5), (1, 3), (0, 4), (12, 0)]:
        a, b = RNG.standard_normal(n), RNG.standard_normal(m)
        got = f(a, b)
        want = cat_consumed(a, b)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


# ------------------------------------------------------------------------ np.insert
INSERTS = [
    ("flat", lambda a: np.insert(a, 1, 5), np.arange(6).reshape(2, 3)),
    ("axis1_scalar", lambda a: np.insert(a, 1, 5, axis=1), np.arange(6).reshape(2, 3)),
    ("negative_row", lambda a: np.insert(a, -1, [7, 8, 9], axis=0), np.arange(6.).reshape(2, 3)),
    ("end_column", lambda a: np.insert(a, 3, [[1], [2]], axis=1), np.arange(6).reshape(2, 3)),
    ("traced_values", lambda a: np.insert(a, 0, a[:, 0] * 2, axis=1),
     np.arange(6.).reshape(2, 3)),
    ("cast_to_int", lambda a: np.insert(a, 2, 1.7), np.arange(5)),
    ("prefix_zero", lambda a: np.cumsum(np.insert(a, 0, 0.0)), np.linspace(0, 1, 9)),
]


@pytest.mark.parametrize("name,fn,a", INSERTS, ids=[c[0] for c in INSERTS])
def test_insert_at_an_int_matches_numpy(name, fn, a):
    want = fn(a)
    got = cppcodegen.compile(fn)(a)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("index", [6, -7])
def test_insert_out_of_range_is_numpys_index_error(index):
    with pytest.raises(IndexError) as want:
        np.insert(np.arange(5), index, 1)
    with pytest.raises(IndexError) as got:
        cppcodegen.compile(lambda a: np.insert(a, index, 1))(np.arange(5))
    assert str(got.value) == str(want.value)


def test_insert_at_index_array_is_refused_by_name():
    with pytest.raises(cppcodegen.UnsupportedError, match="np.insert at an index array"):
        cppcodegen.compile(lambda a: np.insert(a, [1, 2], 0))(np.arange(5))


def _hstack_items(x):
    return np.hstack(([x[0]], x[1:] * 2, [x.sum(), 1.0]))


def _roundtrip(x):                  # np.diff undone: the first item in a list
    return np.concatenate(([x[0]], x[0] + np.cumsum(np.diff(x))))


def _stack_rows(x):
    return np.stack([[x[0], x[1]], [x[2], x.max()]])


def _vstack_row(x):
    return np.vstack(([x[0], x[1], x[2]], x[:3]))


def _int_item(x):
    return np.concatenate(([np.int64(x.shape[0])], np.arange(2)))


@pytest.mark.parametrize("fn", [_hstack_items, _roundtrip, _stack_rows, _vstack_row, _int_item])
def test_lists_holding_traced_values_as_parts(fn):
    """A part written as a list of traced scalars (``[x[0]]``) is ``np.array`` of it, as
    NumPy converts it; it raised DataDependentError (a new user's ``np.diff`` round trip)."""
    x = np.array([1.0, 4.0, 2.0, 7.0])
    got, want = cppcodegen.compile(fn, fallback=False)(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def frames_energy(x, frame, hop):
    n = 1 + (len(x) - frame) // hop
    frames = np.stack([x[i * hop:i * hop + frame] for i in range(n)])
    return np.sum(frames ** 2, axis=1)


def frames_of_columns(a):
    return np.stack([a[:, 2 * k:2 * k + 3] for k in range(5)], axis=1)


def frames_last_axis(a):
    return np.stack([a[k + 1, ::2] for k in range(4)], axis=-1)


def starts_not_in_step(x):
    return np.stack([x[0:4], x[1:5], x[3:7], x[4:8]])


def windows_as_array(x, w):
    return np.array([x[i:i + w] for i in range(len(x) - w + 1)]).mean(axis=1)


def scaled_rows(a):
    return np.stack([a[i] * (i + 1) for i in range(a.shape[0])])


def row_sums(x, k):
    return np.array([np.sum(x[i::k]) for i in range(k)])


FRAMED = np.random.default_rng(77).standard_normal(3000)


@pytest.mark.parametrize("fn, args", [
    (frames_energy, (FRAMED, 256, 128)), (frames_energy, (FRAMED, 256, 256)),
    (frames_energy, (FRAMED[:300], 64, 100)),
    (frames_of_columns, (np.arange(120.0).reshape(6, 20),)),
    (frames_last_axis, (np.arange(120.0).reshape(6, 20),)),
    (starts_not_in_step, (FRAMED,)), (windows_as_array, (FRAMED[:300], 7)),
    (scaled_rows, (FRAMED[:2400].reshape(40, 60),)), (row_sums, (FRAMED, 30)),
])
def test_many_parts_joined(fn, args):
    """Frames of a signal (slices one hop apart) are one gather; many other parts are each
    stored in turn: neither a select per element that tests every part (a 778-frame
    np.stack took 23 s to build and ran at 0.01x NumPy). (A sum over a frame adds in
    another order than NumPy's pairwise sum over a row: a few ULP.)"""
    check_against_numpy(fn, *args, rtol=1e-13)


def test_frames_are_one_gather_and_long_joins_are_stored_in_turn():
    text = str(cppcodegen.explain(frames_energy, FRAMED, 256, 128).program)
    assert text.count("where(") == 0, text
    text = str(cppcodegen.explain(scaled_rows, FRAMED[:2400].reshape(40, 60)).program)
    assert text.count("where(") == 0 and text.count("pointwise") >= 40, text
