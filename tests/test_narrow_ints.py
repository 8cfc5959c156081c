"""8-, 16-bit and unsigned integer arrays run in vector loops (ccg::Vec of narrow lanes):
every result equal to NumPy's, bit for bit, on rows long enough for the vector loops, with
their partial tails (37 = 2 vectors of 16 + 5), NumPy's edge values (MIN, MAX, 0, -1) and
zero divisors (NumPy gives 0)."""
import warnings

import numpy as np
import pytest

from helpers import check_against_numpy, int_mixed_1d, rng
import narrow_int_programs as P

import cppcodegen

NARROW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]


def _pair(dt, n=37 * 9):
    a = int_mixed_1d(dt, n=n, seed=11).reshape(9, 37)
    b = int_mixed_1d(dt, n=n, seed=12).reshape(9, 37)
    b.flat[::13] = 0                       # x // 0 and x % 0 are 0 in NumPy (with a warning)
    return a, b


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.parametrize("prog", [P.arith, P.division, P.compare])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_binary_programs(prog, dt):
    check_against_numpy(prog, *_pair(dt))


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_casts(dt):
    a, _ = _pair(dt)
    f = rng(13).uniform(0, 3, a.shape).astype(np.float32)
    check_against_numpy(P.casts, a, f, rtol=1e-6)


def test_image_programs():
    img = rng(14).integers(0, 256, (67, 131), dtype=np.uint8)
    check_against_numpy(P.box_blur, img)
    cells = (rng(15).random((67, 131)) < 0.35).astype(np.uint8)
    check_against_numpy(P.life_step, cells)


@pytest.mark.parametrize("dt", ["float32", "uint8", "int16"])
def test_condition_on_outer_axis(dt):
    """The frame of ``out`` (a condition on the row index inside the loop over columns) is
    computed once per row and broadcast; values as NumPy's."""
    x = rng(16).integers(0, 100, (23, 70)).astype(dt)
    check_against_numpy(P.frame_scale, x, 1.5)


def _add_rows(img, v):
    for i in range(img.shape[0]):
        img[i] += v
    return img


def _add_all(img, v):
    img += v
    return img


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn", [_add_rows, _add_all])
def test_an_int_argument_out_of_range_writes_nothing(fn):
    """``img += v`` with int8 ``img`` and ``v = 300``: NumPy raises OverflowError before it
    writes. The range of ``v`` is checked as the call starts (the call then runs as Python),
    so the caller's array is left as NumPy leaves it; it was left holding the wrapped sums."""
    f = cppcodegen.compile(fn)
    np.testing.assert_array_equal(f(np.zeros((3, 2), np.int8), 100), np.full((3, 2), 100))
    for v in (300, -129):
        img = np.ones((3, 2), np.int8)
        with pytest.raises(OverflowError, match=f"Python integer {v} out of bounds for int8"):
            f(img, v)
        np.testing.assert_array_equal(img, np.ones((3, 2), np.int8))
    img = np.ones((3, 2), np.int8)
    np.testing.assert_array_equal(f(img, -1), np.zeros((3, 2)))


def _crc_table():
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = np.uint32(i)
        for _ in range(8):
            c = (np.uint32(0xEDB88320) ^ (c >> np.uint32(1))) if c & np.uint32(1) else \
                (c >> np.uint32(1))
        table[i] = c
    return table


def _shifted_bytes(n):
    out = np.zeros(n, np.uint8)
    for i in range(n):
        out[i] = np.uint8(i + 250)
    return out


def test_numpy_scalar_of_a_loop_index():
    """``np.uint32(i)`` of a compiled loop's index is a cast of it with NumPy's range check
    (the loop ran as Python: "the loop variable is used where a Python int is needed")."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(cppcodegen.compile(_crc_table)(), _crc_table())
    f = cppcodegen.compile(_shifted_bytes)
    for n in (0, 1, 6):
        np.testing.assert_array_equal(f(n), _shifted_bytes(n))
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        f(7)


def _clipped_store(a, out):
    for i in range(a.shape[0]):
        m = int(a[i])
        out[i] = m if m >= -1 else 0
    return out


def test_a_bad_store_into_an_argument_stops_there():
    """``out[i] = m`` of a Python int out of uint8's range, ``out`` an argument: Python raises
    at the first bad store, with nothing after it written; the compiled loop stored the
    wrapped values of every iteration and raised when it returned."""
    a = np.array([-1, 3, 7], np.int16)
    out = np.zeros(3, np.uint8)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        cppcodegen.compile(_clipped_store)(a, out)
    np.testing.assert_array_equal(out, np.zeros(3, np.uint8))
    good = np.array([1, 3, 7], np.int16)
    np.testing.assert_array_equal(cppcodegen.compile(_clipped_store)(good, out), good)


def _mask_store(img, v):
    img[img > 1] = v
    return img


def _fancy_store(img, v):
    img[[0, 1]] = v
    return img


def _filled(img, v):
    return np.full(3, v, dtype=img.dtype), np.full_like(img, v), np.uint8(v) + img


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn", [_mask_store, _fancy_store, _filled])
def test_python_int_arguments_out_of_range_in_stores_and_fills(fn):
    """``img[mask] = v``, ``img[[0, 1]] = v``, ``np.full(n, v, uint8)``, ``np.full_like``,
    ``np.uint8(v)`` with ``v`` outside uint8: NumPy's OverflowError, the argument untouched
    (the compiled code wrapped v)."""
    f = cppcodegen.compile(fn)
    for v in (1, 256, -1):
        want, got = np.array([1, 2, 3, 100], np.uint8), np.array([1, 2, 3, 100], np.uint8)
        try:
            expected = fn(want, v)
        except OverflowError:
            with pytest.raises(OverflowError):
                f(got, v)
        else:
            for g, e in zip(f(got, v) if isinstance(expected, tuple) else (f(got, v),),
                            expected if isinstance(expected, tuple) else (expected,)):
                np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(got, want)


def _index_store(a, k):
    for i in range(a.shape[0]):
        a[i] = k + i
    return a


@pytest.mark.parametrize("dt, k", [(np.int8, 126), (np.int32, 2 ** 31 - 2), (np.uint8, 254),
                                   (np.uint8, -1), (np.int8, 3), (np.int64, 5)])
def test_a_loop_index_stored_out_of_range(dt, k):
    """``a[i] = k + i``: a Python int made of the loop's index, stored past the array's int
    range, is NumPy's OverflowError at that store, the stores before it kept (the compiled
    loop wrapped it: 127 + 1 stored -128)."""
    want, got = np.zeros(3, dt), np.zeros(3, dt)
    try:
        _index_store(want, k)
    except OverflowError:
        with pytest.raises(OverflowError, match=f"out of bounds for {np.dtype(dt).name}"):
            cppcodegen.compile(_index_store)(got, k)
    else:
        np.testing.assert_array_equal(cppcodegen.compile(_index_store)(got, k), want)
    np.testing.assert_array_equal(got, want)


def _float_store(a, v):
    for i in range(a.shape[0]):
        a[i] = v[i]
    return a


def _float_store_parallel(a, v):
    for i in cppcodegen.prange(a.shape[0]):
        a[i] = v[i]
    return a


@pytest.mark.parametrize("dt, bad, exc", [(np.int16, 1e6, OverflowError),
                                          (np.int64, np.nan, ValueError),
                                          (np.int32, -np.inf, OverflowError)])
def test_a_float_stored_out_of_range_stops_there(dt, bad, exc):
    """``a[i] = v[i]`` of a float NaN (ValueError), infinite or out of range (OverflowError)
    into the caller's int array: Python's error at the first bad store, nothing after it
    written (the compiled loop wrote every element and raised a ValueError at the end)."""
    v = np.array([2.5, -3.0, bad, 4.0])
    want, got = np.zeros(4, dt), np.zeros(4, dt)
    with pytest.raises(exc):
        _float_store(want, v)
    with pytest.raises(exc):
        cppcodegen.compile(_float_store)(got, v)
    np.testing.assert_array_equal(got, want)
    good = np.array([2.5, -3.0, 7.9, 4.0])
    np.testing.assert_array_equal(cppcodegen.compile(_float_store)(got, good),
                                  good.astype(dt))


def test_a_float_stored_out_of_range_in_a_prange():
    """In a prange the threads cannot stop one another: the bad store is found when the
    program returns (a ValueError), and the good values all arrive."""
    v = np.arange(5000.0)
    f = cppcodegen.compile(_float_store_parallel)
    np.testing.assert_array_equal(f(np.zeros(5000, np.int32), v), v.astype(np.int32))
    v[4321] = np.nan
    with pytest.raises(ValueError):
        f(np.zeros(5000, np.int32), v)
