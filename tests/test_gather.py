"""Integer-array indexing compiled as gathers (issue 16 part 2): ``x[idx]``, ``x[:, idx]``,
``x[i_arr, j_arr]``, indices apart, ints among arrays, traced scalar indices in loops;
loaded inside the fused kernels, with NumPy's semantics (negative indices wrap, an index out
of range raises IndexError naming the index, the axis and its size; never a read outside
the array). Compared with NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen

from helpers import check_against_numpy

RNG = np.random.default_rng(7)
V = RNG.standard_normal(50)
M = RNG.standard_normal((9, 7))
T3 = RNG.standard_normal((4, 5, 6))
IDX = np.array([0, 3, -1, 8, 8, -9, 2])
JDX = np.array([6, 0, -7, 3, 2, 1, 5], dtype=np.int32)


def take_scaled(x, idx):
    return x[idx] * 2.0 + 1.0


def rows_and_columns(x, idx, jdx):
    return x[idx], x[:, jdx], x[idx, jdx], x[idx, 1:4], x[2, jdx]


def pairs_summed(x, idx, jdx):
    return x[idx, jdx].sum(), (x[idx] * x[idx]).sum(axis=1)


def apart(t, i, j):
    """Advanced indices not next to each other: the broadcast axes come first."""
    return t[i, :, j], t[:, i[:3], 0], t[0, :, j], t[..., j]


def broadcast_indices(x, idx, jdx):
    return x[idx[:, None], jdx[None, :4]], x[idx.reshape(7, 1), 0]


def constant_indices(x):
    return x[[0, 2, -1]] + x[np.array([1, 1, 0])], x[[[0, 1], [2, 3]]]


def computed_source(x, idx):
    return np.exp(x * 0.5)[idx] + (x + 1)[idx[::-1]]


def computed_index(x, keys):
    order = (keys * 3) % x.shape[0]
    return x[order] - x[order - 1]


def lookup_table(table, codes):
    """A lookup table of 256 entries read through uint8 codes (image style)."""
    return table[codes]


def walk_linked_list(nxt, start, steps):
    i = start
    total = 0
    for _ in range(steps):
        total += i
        i = nxt[i]
    return total, i


def first_above(a, t):
    i = 0
    while i < a.shape[0] and a[i] <= t:
        i += 1
    return i


CASES = [
    (take_scaled, (V, IDX)), (take_scaled, (V, JDX)), (rows_and_columns, (M, IDX, JDX)),
    (pairs_summed, (M, IDX, JDX)), (apart, (T3, np.array([0, -1, 2, 3]), np.array([5, 0, 1, 2]))),
    (broadcast_indices, (M, IDX, JDX)), (constant_indices, (M,)), (computed_source, (V, IDX)),
    (computed_index, (V, np.arange(20))),
    (lookup_table, (RNG.standard_normal(256).astype(np.float32),
                    RNG.integers(0, 256, (16, 16)).astype(np.uint8))),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", None) or "")
def test_matches_numpy(fn, args):
    check_against_numpy(fn, *args, rtol=1e-12, atol=1e-14)


def test_indices_from_loop_state():
    nxt = np.roll(np.arange(30), -7)
    for start in (0, 5, 29):
        check_against_numpy(walk_linked_list, nxt, start, 40)
    a = np.sort(RNG.standard_normal(100))
    for t in (-10.0, 0.0, 0.7, 10.0):
        check_against_numpy(first_above, a, t)


def test_gather_feeding_a_reduction_is_one_kernel():
    text = str(cppcodegen.compile(pairs_summed).explain(M, IDX, JDX))
    kernels = text.split("== kernels")[1].split("== C++")[0]
    assert kernels.split("\n", 1)[0].strip().startswith("(2)"), kernels
    assert "ccg::checked_index" in text


def test_different_index_values_reuse_the_variant():
    c = cppcodegen.compile(take_scaled)
    for seed in range(3):
        idx = np.random.default_rng(seed).integers(-50, 50, 7)
        np.testing.assert_array_equal(c(V, idx), V[idx] * 2.0 + 1.0)
    assert len(c.variants) == 1


@pytest.mark.parametrize("bad", [50, -51, 1000])
def test_out_of_range_raises_index_error(bad):
    idx = IDX.copy()
    idx[3] = bad
    with pytest.raises(IndexError) as numpy_error:
        take_scaled(V, idx)
    with pytest.raises(IndexError, match=rf"index {bad} is out of bounds for axis 0 with size 50"):
        cppcodegen.compile(take_scaled)(V, idx)
    assert "out of bounds" in str(numpy_error.value)


def test_out_of_range_column_names_its_axis():
    jdx = JDX.copy()
    jdx[0] = 7
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 7"):
        cppcodegen.compile(rows_and_columns)(M, IDX, jdx)


def test_float_index_is_numpys_error():
    def f(x, idx):
        return x[idx]
    with pytest.raises(IndexError, match="integer"):
        cppcodegen.compile(f)(V, np.array([0.0, 1.0]))


def test_mismatched_index_shapes():
    def f(x, i, j):
        return x[i, j]
    with pytest.raises(IndexError, match="shape mismatch"):
        cppcodegen.compile(f)(M, IDX, JDX[:3])


@pytest.mark.parametrize("n", [17, 40])
def test_dynamic_sizes(n):
    c = cppcodegen.compile(computed_index, dynamic=True)
    x = RNG.standard_normal(n)
    keys = np.arange(n + 3)
    np.testing.assert_allclose(c(x, keys), computed_index(x, keys), rtol=0, atol=0)


def guarded_reads(a, i):
    x = a[i] if i < a.shape[0] else -1.0
    y = i >= a.shape[0] or a[i] > 0
    z = i < a.shape[0] and a[i] < 0
    return x, y, z


@pytest.mark.parametrize("i", [3, 49, -50, 50, 1000])
def test_reads_python_would_not_make_raise_nothing(i):
    """``a[i] if i < n else ...`` and ``i >= n or a[i] > 0``: the read happens only where
    Python evaluates it, so an index past the end there is not an error."""
    check_against_numpy(guarded_reads, V, np.int64(i))


def test_traced_scalar_index_out_of_range():
    def f(a, i):
        return a[i] * 2
    c = cppcodegen.compile(f)
    assert c(V, np.int64(-3)) == V[-3] * 2
    with pytest.raises(IndexError, match="index 50 is out of bounds for axis 0 with size 50"):
        c(V, np.int64(50))


@pytest.mark.parametrize("backend", ["numpy", "check"])
@pytest.mark.parametrize("fn, args", CASES[:6] + [(guarded_reads, (V, np.int64(50)))],
                         ids=lambda v: getattr(v, "__name__", None) or "")
def test_reference_backends(backend, fn, args):
    """The NumPy reference interpreter runs gathers too (check mode compares them)."""
    got = cppcodegen.compile(fn, backend=backend)(*args)
    expected = fn(*args)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def takes(x, idx):
    return np.take(x, idx), np.take(x, idx[:3], axis=1), np.take(x, -1, axis=0), x.take(idx[:2], 0)


def test_take_is_a_gather():
    check_against_numpy(takes, M, np.array([0, 5, -2, 3]))
    assert "ccg::checked_index" in str(cppcodegen.compile(takes).explain(M, np.array([0, 5, -2, 3])))


def gather_of_a_reduction(x):
    """(found by the fuzzer) a reduction read through a gather in the kernel that computes it
    stays in memory, not in a register the gather cannot index."""
    return np.max(x, axis=-1, keepdims=True)[[-1, 0]], x.sum(axis=1)[[2, 0, 2]]


def test_gather_of_a_reduction():
    check_against_numpy(gather_of_a_reduction, M, rtol=1e-12, atol=1e-14)
    check_against_numpy(gather_of_a_reduction, np.array([[False], [True], [False]]))
