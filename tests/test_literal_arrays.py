"""Arrays the function makes from constants and then updates, and NumPy arrays of its
module: ``np.array([0.0, 0.0])`` filled with traced values or updated in a compiled loop is
an array of the program (``creation._literal``); a NumPy array the trace would update once
instead of at every run (``np.mgrid``'s grid, ``np.zeros_like`` of it) makes the loop run in
Python while tracing (``pystate.mark``); a module array the function updates is refused
(``pystate.check_outside``): with the fallback on, Python runs the call."""
import warnings

import numpy as np
import pytest

import cppcodegen

COUNTS = np.zeros(3)


def hits(x):
    counts = np.array([0, 0])            # [below, above]
    for v in x:
        if v > 0.5:
            counts[1] += 1
        else:
            counts[0] += 1
    return counts


def relax(steps):
    z = np.array([0.0, 1.0, 2.0])
    for _ in range(steps):
        z += 1
    return z


def orbit(v, dt, steps):
    pos = np.array([1.0, 0.0])
    vel = v.copy()
    for _ in range(steps):
        r3 = (pos @ pos) ** 1.5
        vel -= pos / r3 * dt
        pos += vel * dt
    return pos


def tally(x):
    acc = np.array([0.0, 0.0])
    for i in range(x.shape[0]):
        acc[0] += x[i]
        acc[1] += x[i] * x[i]
    return acc


def moments(x):
    m = np.array([0.0, 0.0, 0.0], dtype=np.float32)
    m[0] = x.sum()
    m[1:] += x[:2]
    return m


def grid_counts(n, maxit):
    X = np.mgrid[-2:1:n * 1j]
    Z = np.zeros_like(X)
    for _ in range(maxit):
        M = np.abs(Z) < 2
        Z[M] = Z[M] * Z[M] + X[M]
    return Z


def bump(x):
    COUNTS[0] += 1
    return x * 2


def bump_loop(x):
    for i in range(x.shape[0]):
        COUNTS[1] += x[i]
    return x * 2


CASES = [(hits, lambda r: (r.random(50),)), (relax, lambda r: (7,)),
         (orbit, lambda r: (np.array([0.0, 1.0]), 0.01, 100)),
         (tally, lambda r: (r.random(20),)),
         (moments, lambda r: (r.random(5).astype(np.float32),)),
         (grid_counts, lambda r: (7, 4))]


@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_arrays_made_from_constants_and_updated_match_python(fn, make):
    f = cppcodegen.compile(fn)
    for seed in range(2):
        args = make(np.random.default_rng(seed))
        got, want = f(*args), fn(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_module_array_updated_by_the_function_is_refused_and_python_updates_it():
    COUNTS[:] = 0
    x = np.arange(3.0)
    with pytest.raises(cppcodegen.TraceError, match="updates 'COUNTS' in place"):
        cppcodegen.compile(bump)(x)
    assert not COUNTS.any()             # (put back as it was after the trace)
    with pytest.raises(cppcodegen.TraceError, match=r"test_literal_arrays.py:\d+\): if the "
                       r"value is traced, the array it is stored into is NumPy's"):
        cppcodegen.compile(bump_loop)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (bump, bump_loop):
            f = cppcodegen.compile(fn, fallback=True)
            for _ in range(3):
                np.testing.assert_array_equal(f(x), x * 2)
    np.testing.assert_array_equal(COUNTS, [3.0, 9.0, 0.0])


def mandel_grid(n, maxit):
    Y, X = np.mgrid[-1.5:1.5:n * 1j, -2:1:n * 1j]
    C = X + 1j * Y
    Z = np.zeros_like(C)
    M = np.full(C.shape, True, dtype=bool)
    N = np.zeros(C.shape, dtype=np.int32)
    for i in range(maxit):
        Z[M] = Z[M] * Z[M] + C[M]
        M[np.abs(Z) > 2] = False
        N[M] = i
    return N


def masked_cdf(img):
    cdf = np.bincount(img.ravel(), minlength=8).cumsum()
    return np.ma.filled(np.ma.masked_equal(cdf, 0), 0)


def test_like_arrays_of_numpy_arrays_are_the_programs():
    """``np.zeros_like(C)`` of a NumPy grid (``np.mgrid``) is an array of the program: the
    tutorial's Mandelbrot with masked updates compiles (it refused the mask as a conversion
    to NumPy), one build for every iteration count."""
    f = cppcodegen.compile(mandel_grid, fallback=False)
    for maxit in (0, 1, 20):
        np.testing.assert_array_equal(f(30, maxit), mandel_grid(30, maxit))


def test_a_library_that_takes_numpy_arrays_only_is_named():
    with pytest.raises(cppcodegen.DataDependentError, match=r"by numpy\.ma \(numpy\.ma\."):
        cppcodegen.compile(masked_cdf, fallback=False)(np.arange(8, dtype=np.uint8))


def cyclic_weights(x, w):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * w[i % len(w)] + w[-1 - i % len(w)]
    return out


def chain_order(dims):
    n = len(dims) - 1
    cost = np.zeros((n, n))
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                c = cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i, j]:
                    cost[i, j] = c
    return cost[0, n - 1]


@pytest.mark.parametrize("w", [(1.5, 2.0, 3.0), [1, 2, 3, 4], (7,)])
def test_a_tuple_of_numbers_indexed_by_a_loop_is_a_table_of_python_numbers(w):
    """``w[i % len(w)]`` of a tuple or list of numbers in a compiled loop: a constant table
    read at the index, its items Python numbers (a float32 ``x`` stays float32)."""
    x = np.arange(50, dtype=np.float32)
    got, want = cppcodegen.compile(cyclic_weights, fallback=False)(x, w), cyclic_weights(x, w)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    dims = (30, 35, 15, 5, 10, 20, 25)
    assert cppcodegen.compile(chain_order, fallback=False)(dims) == chain_order(dims)


def primes_by_comprehension(n):
    sieve = np.ones(n + 1, dtype=np.bool_)
    sieve[:2] = False
    for i in range(2, n + 1):
        if sieve[i]:
            sieve[2 * i::i] = False
    return np.array([i for i in range(n + 1) if sieve[i]])


def primes_by_set_comprehension(n):
    sieve = np.ones(n + 1, dtype=np.bool_)
    sieve[:2] = False
    return len({i for i in range(n + 1) if sieve[i]})


def test_a_comprehension_testing_array_values_compiles():
    """A list comprehension is a loop that appends (frontend/comprehensions.py): its filter on
    array values is a counted list; a set comprehension still says what compiles."""
    for n in (30, 31, 100):
        np.testing.assert_array_equal(
            cppcodegen.compile(primes_by_comprehension, fallback=False)(n),
            primes_by_comprehension(n))
    with pytest.raises(cppcodegen.DataDependentError, match=r"tested in a comprehension "
                       r"\(<setcomp>\).*a for loop that appends"):
        cppcodegen.compile(primes_by_set_comprehension, fallback=False)(30)
