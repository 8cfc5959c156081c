"""Loop bounds computed from array values (range(indptr[i], indptr[i + 1]), a while loop's
counter, int() of a float value): one build serves every value, compared with Python."""
import numpy as np
import pytest

import cppcodegen
from cppcodegen import prange


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * x[indices[jj]]
        y[i] = s
    return y


def csr_matvec_parallel(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in prange(n):
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * x[indices[jj]]
        y[i] = s
    return y


def _csr(n, seed, empty_every=5):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, n)
    counts[::empty_every] = 0                           # empty rows
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = rng.integers(0, n, indptr[-1]).astype(np.int64)
    return indptr, indices, rng.standard_normal(indptr[-1]), rng.standard_normal(n)


@pytest.mark.parametrize("fn", [csr_matvec, csr_matvec_parallel])
def test_csr_rows_with_empty_ones_one_build_for_every_matrix(fn):
    f = cppcodegen.compile(fn)
    for n, seed in ((40, 0), (40, 1), (7, 2)):
        args = _csr(n, seed)
        want = csr_matvec(*args)
        np.testing.assert_allclose(f(*args), want, rtol=1e-12, atol=1e-12)
    assert f.explain(*args).source.count("[0];") >= 2      # bounds read where the loop starts


def test_an_index_out_of_range_from_data_bounds_raises_indexerror():
    indptr, indices, data, x = _csr(10, 3)
    indptr = indptr.copy()
    indptr[-1] += 3                                     # past the end of data
    f = cppcodegen.compile(csr_matvec)
    with pytest.raises(IndexError):
        csr_matvec(indptr, indices, data, x)
    with pytest.raises(IndexError):
        f(indptr, indices, data, x)


def triangle_by_counter(x, t):
    s = 0.0
    i = -1
    while i + 1 < x.shape[0]:
        i += 1
        for j in range(i + 1):
            s += x[j]
        if x[i] > t:
            break
    return s, i


@pytest.mark.parametrize("t", [10.0, 0.5, -10.0])
def test_a_while_counter_as_a_bound(t):
    x = np.linspace(-1.0, 1.0, 9)
    f = cppcodegen.compile(triangle_by_counter)
    s, i = f(x, t)
    s0, i0 = triangle_by_counter(x, t)
    assert s == pytest.approx(s0, rel=1e-13, abs=1e-13) and int(i) == i0


def sieve_like(x):
    k = int(np.sqrt(x.shape[0] * x.max()))              # a bound from a float value
    out = np.zeros(x.shape[0])
    for i in range(-2, k):                              # may be empty, may start negative
        out[i % x.shape[0]] += 1.0
    return out, k


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 3.0])
def test_int_of_a_float_value_as_a_bound(scale):
    x = np.full(16, scale)
    f = cppcodegen.compile(sieve_like)
    out, k = f(x)
    out0, k0 = sieve_like(x)
    np.testing.assert_array_equal(out, out0)
    assert int(k) == k0


def count_then_loop(x):
    m = (x > 0).sum()
    acc = 0.0
    for j in range(m, 0, -1):                           # a negative step down to 1
        acc = acc * 0.5 + j
    return acc


def test_a_count_as_a_bound_with_a_negative_step_and_the_reference_interpreter():
    x = np.array([1.0, -1.0, 2.0, 3.0, -4.0, 5.0])
    f = cppcodegen.compile(count_then_loop)
    assert f(x) == pytest.approx(count_then_loop(x), rel=1e-15)
    assert f(-x) == pytest.approx(count_then_loop(-x), rel=1e-15)
    report = cppcodegen.check(count_then_loop, x)
    assert report.ok, report


def slice_from_values(x, idx):
    return x[: idx[0]].sum()


def slice_from_values_returned(x, idx):
    return x[: idx[0]]


def test_a_shape_from_array_values_compiles_inside_and_as_a_returned_view():
    f = cppcodegen.compile(slice_from_values)       # (the body in a loop of one trip)
    g = cppcodegen.compile(slice_from_values_returned)
    for k in (2, 0, -1, 9):
        x, idx = np.arange(5.0), np.array([k])
        assert f(x, idx) == slice_from_values(x, idx)
        np.testing.assert_array_equal(g(x, idx), slice_from_values_returned(x, idx))


def sieve(n):
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[0] = False
    is_prime[1] = False
    for i in range(2, int(n ** 0.5) + 1):               # a bound from a float value
        if is_prime[i]:
            for j in range(i * i, n + 1, i):             # a step that is a loop variable
                is_prime[j] = False
    return is_prime


def strided_down(x, k):
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -k):             # a negative step from an argument
        s = s * 0.5 + x[i]
    return s


def test_steps_that_are_loop_variables_or_arguments():
    f = cppcodegen.compile(sieve)
    for n in (10, 100, 101, 2):
        np.testing.assert_array_equal(f(np.int64(n)), sieve(n))
    g = cppcodegen.compile(strided_down)
    x = np.linspace(0.0, 1.0, 17)
    for k in (1, 3, 20):
        assert g(x, np.int64(k)) == pytest.approx(strided_down(x, k), rel=1e-15)


def step_from_an_argument(x, k):
    s = 0.0
    for i in range(5, 10, k - 2):                       # up, down or zero: guarded per sign
        s += x[i]
    return s


def step_from_a_loop_variable(x):
    s = 0.0
    for j in range(-2, 3):
        for i in range(0, 10, j):                       # j = 0: ValueError in Python
            s += x[i]
    return s


def test_a_step_sign_is_guarded_or_refused():
    f = cppcodegen.compile(step_from_an_argument)
    x = np.arange(10.0)
    for k in (3, 1, 4):
        assert f(x, np.int64(k)) == step_from_an_argument(x, k)
    with pytest.raises(ValueError, match="must not be zero"):
        f(x, np.int64(2))
    with pytest.raises(ValueError, match="must not be zero"):     # as Python (the outer
        cppcodegen.compile(step_from_a_loop_variable)(x)            # loop is unrolled)


def first_weight_over(x, t):
    for w in (0.5, 1.5, 2.5, 3.5):                      # a traced return: compiled over the
        if (x * w).sum() > t:                           # tuple's values as a constant array
            return w
    return -1.0


def shape_from_tuple(x):
    out = 0.0
    for n in (1, 2, 3):                                 # Python ints as shapes: unrolled
        out += x[:n].sum()
    return out


def test_a_return_in_a_loop_over_a_tuple_and_tuples_that_still_unroll():
    f = cppcodegen.compile(first_weight_over)
    x = np.ones(4)
    for t in (1.0, 5.0, 9.0, 100.0):
        assert f(x, t) == first_weight_over(x, t)
    g = cppcodegen.compile(shape_from_tuple)
    assert g(np.arange(5.0)) == shape_from_tuple(np.arange(5.0))
