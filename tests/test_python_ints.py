"""Python ints in a compiled function are int64 values whose products (and sums of two
non-constant values) are checked: where one leaves int64, the call runs as Python (exact,
with a warning) when it writes no argument, and raises OverflowError naming the line when it
does (the arguments are already written). Python's ints have no limit: a wrapped int64
would be a wrong result. Compared with the plain Python function."""
import inspect
import math
import warnings

import numpy as np
import pytest

import cppcodegen
from test_python_numbers import count_positive     # a counter: no check (c += 1)


def fact_mod(x, n):
    p = 1
    for i in range(1, n):
        p *= i
    return x * 0 + (p % 1000003)


def fact_data(x):
    p = 1
    for i in range(1, x.shape[0]):
        if x[i] > 0:
            p *= i
    return p


def binomial(x, n, k):
    c = 1
    for j in range(k):
        c = c * (n - j) // (j + 1)
    return x * 0 + c % 1000


def lcg(x, seed):
    s = seed
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        s = (1103515245 * s + 12345) % 2147483648     # stays below 2^62: exact in int64
        out[i] = s / 2147483648.0
    return out


def fact_into(x):
    p = 1
    for i in range(1, x.shape[0]):
        p *= i
        x[i] = p % 7
    return x


def power_by_steps(x, a, b):
    p, q = 1, a
    for i in range(b):
        p = p * q       # (two ints known when it runs: the multiply's overflow flag)
        q = q + 0
    return x * 0 + p % 1000


CASES = [(power_by_steps, (np.ones(2, np.int64), 3, 39)),
         (power_by_steps, (np.ones(2, np.int64), 3, 40)),
         (power_by_steps, (np.ones(2, np.int64), -2, 63)),
         (power_by_steps, (np.ones(2, np.int64), -2, 64)),
         (power_by_steps, (np.ones(2, np.int64), 2, 63)),
         (fact_mod, (np.ones(3, np.int64), 30)), (fact_mod, (np.ones(3, np.int64), 15)),
         (fact_data, (np.ones(30),)), (fact_data, (-np.ones(30),)),
         (binomial, (np.ones(2, np.int64), 70, 35)), (binomial, (np.ones(2, np.int64), 20, 10)),
         (lcg, (np.zeros(50), 7)), (count_positive, (np.random.default_rng(1).standard_normal(99),))]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_python_ints_as_python_computes_them(fn, args):
    want = fn(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn, fallback=False)(*args)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert type(got) is type(want)


def test_the_python_run_says_why():
    from cppcodegen.runtime import compiled
    compiled._WARNED.clear()
    with pytest.warns(cppcodegen.FallbackWarning, match="left the int64"):
        cppcodegen.compile(fact_mod, fallback=False)(np.ones(3, np.int64), 25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no overflow: compiled, no warning
        assert cppcodegen.compile(count_positive, fallback=False)(np.ones(5)) == 5


def test_overflow_after_writing_an_argument_raises():
    lines, first = inspect.getsourcelines(fact_into)
    line = first + next(i for i, s in enumerate(lines) if "p *= i" in s)
    x = np.zeros(30, np.int64)
    with pytest.raises(OverflowError, match=f"test_python_ints.py:{line}"):
        cppcodegen.compile(fact_into, fallback=False)(x)
    small = np.zeros(10, np.int64)
    np.testing.assert_array_equal(cppcodegen.compile(fact_into, fallback=False)(small.copy()),
                                  fact_into(small.copy()))


def own_overflow(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 100:
            raise OverflowError("too big")
        s += x[i]
    return s


def test_every_call_runs_as_python_on_overflow():
    """Later calls take the compiled function's fast path: an overflow there too runs the
    call as Python (it raised OverflowError from the second call on); the user's own
    OverflowError is raised, not answered by running Python."""
    comp = cppcodegen.compile(fact_data, fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in (np.ones(30), np.ones(30), -np.ones(30), np.ones(30), np.ones(30)):
            assert comp(x) == fact_data(x)
    f = cppcodegen.compile(own_overflow, fallback=False)
    assert f(np.ones(4)) == 4.0
    for _ in range(2):
        with pytest.raises(OverflowError, match="too big"):
            f(np.array([1.0, 200.0]))


def add_int(x, k):
    return x + k


def below_int(x, k):
    return x < k, k >= x


def store_int(x, k):
    x[0] = k
    x[1] = -1 if x.dtype.kind == "u" else 1000
    return x


def shifted_by_index(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] + i           # a uint8 array plus a Python int that grows
    return out


def _outcome(fn, *args):
    try:
        return fn(*args)
    except (OverflowError, ValueError) as e:
        return type(e)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.uint64])
def test_python_int_operands_out_of_the_arrays_range(dtype):
    """NEP 50 casts a Python int operand to the array's dtype, and NumPy raises OverflowError
    when it does not fit; a comparison compares by value. An int argument read at run time
    (the second value passed), a loop's index, and a store of a Python int are checked the
    same way (they wrapped: uint8 < 1000 was False, uint8 + -1 gave 249, x[1] = -1 stored 255)."""
    x = np.array([1, 2, 100], dtype)
    add, below = cppcodegen.compile(add_int), cppcodegen.compile(below_int)
    for k in (1, -1, 300, 100000, -5):      # the first is a build constant, the others not
        for fn, compiled in ((add_int, add), (below_int, below)):
            want, got = _outcome(fn, x, k), _outcome(compiled, x, k)
            if isinstance(want, type):
                assert got is want, (fn.__name__, k, got)
            else:
                for g, w in zip(got if isinstance(got, tuple) else (got,),
                                want if isinstance(want, tuple) else (want,)):
                    np.testing.assert_array_equal(g, w)
                    assert g.dtype == w.dtype
    store = cppcodegen.compile(store_int)
    for k in (3, 2 ** 40):
        want, got = _outcome(store_int, x.copy(), k), _outcome(store, x.copy(), k)
        assert got is want if isinstance(want, type) else np.array_equal(got, want), (k, got)
    long = np.full(300, 5, dtype)
    want = _outcome(shifted_by_index, long)
    got = _outcome(cppcodegen.compile(shifted_by_index), long)
    assert got is want if isinstance(want, type) else np.array_equal(got, want)


def where_constants(img):
    return (np.where(img > 1, img, 300), np.where(img > 1, -1, img),
            np.where(img > 1, img, 2 ** 63), np.where(img > 1, img, 7.5))


def where_int_argument(img, v):
    return np.where(img > 1, img, v)


def where_too_big(img):
    return np.where(img > 1, img, 2 ** 64 + 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32])
def test_python_ints_of_where_wrap_as_numpys_do(dtype):
    """np.where converts a Python int into the result dtype the way NumPy does, by wrapping
    (uint8: 300 -> 44, -1 -> 255), unlike a ufunc, which raises; past 64 bits it raises
    NumPy's OverflowError at the user's line (the compiled where raised for any int out of
    the dtype's range)."""
    img = np.array([0, 1, 2, 100], dtype)
    for got, want in zip(cppcodegen.compile(where_constants)(img), where_constants(img)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    f = cppcodegen.compile(where_int_argument)
    for v in (3, 300, -1, 70000):           # a constant of the build, then a run-time value
        got, want = f(img, v), where_int_argument(img, v)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    with pytest.raises(OverflowError, match="test_python_ints.py"):
        cppcodegen.compile(where_too_big)(img)


def sobel_magnitude(im):
    """Python ints of uint8 pixels: their sums and squares stay far inside int64."""
    h, w = im.shape
    mag = np.zeros((h, w))
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            gx = (int(im[i - 1, j + 1]) + 2 * int(im[i, j + 1]) + int(im[i + 1, j + 1])
                  - int(im[i - 1, j - 1]) - 2 * int(im[i, j - 1]) - int(im[i + 1, j - 1]))
            gy = (int(im[i + 1, j - 1]) + 2 * int(im[i + 1, j]) - int(im[i - 1, j - 1])
                  - 2 * int(im[i - 1, j]))
            mag[i, j] = math.sqrt(gx * gx + gy * gy)
    return mag


def test_bounded_python_ints_need_no_checks():
    """``int()`` of a uint8 element is in [0, 255]: the sums, products and squares the loop
    makes of such values cannot leave int64, and ``math.sqrt`` of a sum of squares cannot be
    negative, so no check is compiled (the loop runs in SIMD lanes)."""
    im = np.random.default_rng(5).integers(0, 256, (9, 37)).astype(np.uint8)
    np.testing.assert_array_equal(cppcodegen.compile(sobel_magnitude)(im), sobel_magnitude(im))
    src = cppcodegen.explain(sobel_magnitude, im).source
    assert "ccg_err" not in src and "#pragma omp simd" in src, src


def product_of_bytes(a):
    p = 1
    for i in range(a.shape[0]):
        p = p * int(a[i])
    return p


def root_of_difference(a):
    return math.sqrt(int(a[0]) - int(a[1]))


def test_unbounded_python_ints_are_still_checked():
    """Eight bytes' product can leave int64 (255**8 > 2**63): still checked, so the call
    gives Python's exact int; a difference of bytes can be negative: math.sqrt still
    raises Python's ValueError."""
    big = np.full(8, 255, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cppcodegen.compile(product_of_bytes)(big) == 255 ** 8
    assert cppcodegen.compile(product_of_bytes)(big[:3]) == 255 ** 3
    a = np.array([3, 7], np.uint8)
    with pytest.raises(ValueError, match="math domain error"):
        cppcodegen.compile(root_of_difference, fallback=False)(a)
    assert cppcodegen.compile(root_of_difference)(a[::-1]) == 2.0


def _power_of_two(k):
    return 2 ** k // 3


def _shifted(k):
    return (1 << k) // 3


def _cube(n):
    return n ** 3


def _absolute(n):
    return abs(n) + 0


def _bit_masks(n):
    total = 0
    for b in range(n):
        total += 1 << b
    return total


@pytest.mark.parametrize("fn, values", [
    (_power_of_two, (10, 61, 63, 64, 100)), (_shifted, (10, 62, 63, 70)),
    (_bit_masks, (8, 63, 64)), (_cube, (10, -3, 2 ** 21 + 1)),
    (_absolute, (5, -3, -2 ** 63))])
def test_shifts_powers_and_abs_of_python_ints_never_wrap(fn, values):
    """Past int64 the call runs as Python (IntOverflow), as for sums and products."""
    f = cppcodegen.compile(fn, fallback=True)
    for v in values:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(v)
        want = fn(v)
        assert got == want and type(got) is type(want), (fn.__name__, v, got, want)


def sum_below(x, limit):
    tot = 0
    for v in x:
        if v < limit:
            tot += int(v)       # checked, under a branch flattened into blends
    return tot


def test_checked_sum_under_a_flattened_branch():
    """The ``if`` runs both sides as blends (backend/simd.cheap_branch), its overflow check a
    branch taken only where the ``if`` holds: values the ``if`` skips may overflow the blended
    sum without an error, values it takes still run the call as Python."""
    from cppcodegen.runtime import compiled
    comp = cppcodegen.compile(sum_below, fallback=False)
    signs = np.random.default_rng(3).integers(-50, 50, 10_001)
    skipped = np.array([5, 2 ** 63 - 1, 7, 2 ** 63 - 1, 2 ** 62], np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # compiled: no run as Python
        assert comp(signs, 0) == sum_below(signs, 0)
        assert comp(skipped, 2 ** 62) == sum_below(skipped, 2 ** 62) == 12
    compiled._WARNED.clear()
    taken = np.array([2 ** 62, -1, 2 ** 62, 2 ** 62], np.int64)
    with pytest.warns(UserWarning, match="left the int64"):
        got = comp(taken, 2 ** 63 - 1)
    assert got == sum_below(taken, 2 ** 63 - 1) == 3 * 2 ** 62 - 1 and type(got) is int


def quotients(a, b):
    out = np.empty(a.shape[0], dtype=np.int64)
    q = 0
    for i in range(a.shape[0]):
        q = int(a[i]) // int(b[i])
        out[i] = int(a[i]) // 2
    return q, out


def test_floor_division_of_the_minimum_by_minus_one_never_wraps():
    comp = cppcodegen.compile(quotients, fallback=False)
    small = (np.array([7, -7, 2 ** 62]), np.array([2, -1, 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, want = comp(*small), quotients(*small)
    assert got[0] == want[0] and np.array_equal(got[1], want[1])
    edge = (np.array([5, -2 ** 63]), np.array([1, -1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = comp(*edge)
    assert got[0] == 2 ** 63 == quotients(*edge)[0] and type(got[0]) is int


def pixel_means(img):
    out = np.empty((img.shape[0], img.shape[1] - 1), dtype=np.uint8)
    for i in range(img.shape[0]):
        for j in range(img.shape[1] - 1):
            out[i, j] = (int(img[i, j]) + int(img[i, j + 1])) // 2
    return out


def pixel_sums(img):
    out = np.empty(img.shape[1] - 1, dtype=np.uint8)
    for j in range(img.shape[1] - 1):
        out[j] = int(img[0, j]) + int(img[0, j + 1])
    return out


def test_stores_of_bounded_python_ints_need_no_checks():
    """``(int(a) + int(b)) // 2`` of uint8 values fits uint8 (floor quotients, shifts,
    remainders and masks by constants are followed): its store is not checked and the loop
    runs in lanes; a sum of two bytes may not fit, and is still NumPy's OverflowError."""
    im = np.random.default_rng(6).integers(0, 256, (7, 41)).astype(np.uint8)
    np.testing.assert_array_equal(cppcodegen.compile(pixel_means)(im), pixel_means(im))
    src = cppcodegen.explain(pixel_means, im).source
    assert "ccg_err" not in src and "#pragma omp simd" in src
    small = (im // 3).astype(np.uint8)
    np.testing.assert_array_equal(cppcodegen.compile(pixel_sums)(small), pixel_sums(small))
    big = np.full((1, 5), 200, np.uint8)
    with pytest.raises(OverflowError):
        cppcodegen.compile(pixel_sums)(big)


def sobel_u8(img):
    h, w = img.shape
    out = np.zeros((h, w), dtype=np.uint8)
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            gx = (int(img[i - 1, j + 1]) + 2 * int(img[i, j + 1]) + int(img[i + 1, j + 1])
                  - int(img[i - 1, j - 1]) - 2 * int(img[i, j - 1]) - int(img[i + 1, j - 1]))
            gy = (int(img[i + 1, j - 1]) + 2 * int(img[i + 1, j]) + int(img[i + 1, j + 1])
                  - int(img[i - 1, j - 1]) - 2 * int(img[i - 1, j]) - int(img[i - 1, j + 1]))
            m = abs(gx) + abs(gy)
            out[i, j] = 255 if m > 255 else m
    return out


def clamped_low(img):
    out = np.empty(img.shape, np.uint8)
    for i in range(img.shape[0]):
        d = int(img[i]) - 100
        out[i] = 0 if d < 0 else max(d, min(d, 7))
    return out


def test_abs_max_min_and_clamping_branches_are_bounded():
    """``abs()`` of bounded ints, ``max``/``min`` of them, and ``255 if m > 255 else m`` (the
    side a comparison with a constant picks: at most 255 there) are followed: a uint8 Sobel
    filter's sum and store need no checks, and its loop runs in lanes (it ran scalar with an
    overflow check and a range check per pixel: 8x slower than Numba)."""
    im = np.random.default_rng(8).integers(0, 256, (9, 37)).astype(np.uint8)
    for fn, x in ((sobel_u8, im), (clamped_low, im[0])):
        np.testing.assert_array_equal(cppcodegen.compile(fn)(x), fn(x))
        src = cppcodegen.explain(fn, x).source
        assert "ccg_err" not in src and "#pragma omp simd" in src


def _uint64_total(x):
    s = 0
    for i in range(x.shape[0]):
        s += int(x[i])
    return s


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_int_of_a_uint64_past_int64_is_pythons():
    """``int(x[i])`` of a uint64 element of 2**63 or more: the call runs as Python, which
    makes the big int (it wrapped to a negative int64)."""
    f = cppcodegen.compile(_uint64_total)
    for x in (np.array([5, 1], np.uint64), np.array([2 ** 63 + 5, 1], np.uint64),
              np.array([2 ** 64 - 1], np.uint64), np.array([2 ** 63 - 1, 0], np.uint64)):
        got = f(x)
        assert type(got) is int and got == _uint64_total(x)


def _gcd_loop(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def test_a_python_int_argument_past_int64_runs_as_python():
    """``gcd(2**70, 6)`` after calls with small ints: the call runs as Python, with a
    warning that says why (it crashed with a bare OverflowError in the tracer)."""
    f = cppcodegen.compile(_gcd_loop, options={"fallback": True})
    assert (f(48, 18), f(0, 5)) == (6, 5)
    with pytest.warns(UserWarning, match="past the int64"):
        assert f(2 ** 70, 6) == _gcd_loop(2 ** 70, 6)


def _reversed_where_root(a):
    x = a.astype(np.int64)
    t = np.where(x > 0, x[::-1], 1)
    return math.sqrt(int(t[0]))


def test_a_comparison_bounds_its_own_elements_only():
    """``where(x > 0, x[::-1], 1)``: the comparison says nothing of the reversed view (other
    elements): its square root keeps its domain check."""
    f = cppcodegen.compile(_reversed_where_root)
    a = np.array([3, 50, 4], np.int32)
    assert f(a) == _reversed_where_root(a)
    with pytest.raises(ValueError, match="math domain error"):
        f(np.array([3, 50, -7], np.int32))


CLIP_BOUNDS = [(-5, 300), (2, 300), (-5, 7), (300, 400), (-10, -5), (5, -3), (-2 ** 70, 5),
               (1, 2 ** 70), (-1000, 50)]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_clip_by_python_ints_past_the_dtype(dtype):
    """np.clip compares a Python int bound by value: past the dtype's range on its own side it
    clamps nothing (np.clip(u8, -5, 300) is u8; the compiled clip raised OverflowError),
    past it on the other side NumPy's OverflowError."""
    x = np.array([0, 3, 100], dtype)
    for lo, hi in CLIP_BOUNDS:
        def clip(x, lo=lo, hi=hi):
            return np.clip(x, lo, hi)
        want, got = _outcome(clip, x), _outcome(cppcodegen.compile(clip), x)
        if isinstance(want, type):
            assert got is want, (lo, hi, got)
        else:
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def erode(a):
    n, m = a.shape
    out = np.zeros_like(a)
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v = 1
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    if a[i + di, j + dj] == 0:
                        v = 0
            out[i, j] = v
    return out


def window_max(a):
    n = a.shape[0]
    out = np.zeros(n - 2, dtype=np.uint8)
    for i in range(n - 2):
        best = 0
        for k in range(3):
            best = max(best, int(a[i + k]))
        out[i] = best
    return out


def running_count(a):
    out = np.zeros_like(a)
    c = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            c += 1
        out[i] = c
    return out


def test_values_carried_by_loops_and_branches_keep_their_range():
    """A flag set to 0 or 1 through a window's loops and branches, or the max of bytes, stays
    in uint8's range: its store needs no check and the row runs in lanes (erode: 14 ms ->
    0.5 ms at 1500 x 1500, numba's time). A count that grows with the loop is still checked,
    and still raises NumPy's OverflowError where it leaves uint8."""
    rng = np.random.default_rng(8)
    a = (rng.random((30, 41)) < 0.8).astype(np.uint8)
    np.testing.assert_array_equal(cppcodegen.compile(erode)(a), erode(a))
    src = cppcodegen.explain(erode, a).source
    assert "ccg_err" not in src and "#pragma omp simd" in src
    b = rng.integers(0, 256, 50).astype(np.uint8)
    np.testing.assert_array_equal(cppcodegen.compile(window_max)(b), window_max(b))
    assert "ccg_err" not in cppcodegen.explain(window_max, b).source
    f = cppcodegen.compile(running_count)
    c = np.ones(300, np.uint8)
    np.testing.assert_array_equal(f(c[:200]), running_count(c[:200]))
    with pytest.raises(OverflowError):
        running_count(c)
    with pytest.raises(OverflowError):
        f(c)
