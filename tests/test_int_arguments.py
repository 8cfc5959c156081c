"""Python int arguments are constants of the first build; a call with another value makes
them values read at each call ("automatic dynamic", as for sizes): ``collatz(n)`` compiled
again for every n, a second each, until the recompile limit (found by a new user's probe).
Where Python needs the int itself (``axis=k``, ``reshape(n, -1)``, ``[0] * n``) its value is
this call's, guarded (another value compiles again). Compared with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import cppcodegen


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def powers(x, deg):
    out = np.zeros_like(x)
    for k in range(deg):
        out += x ** k
    return out, deg * 2


def by_axis(x, axis):
    return x.sum(axis=axis) * 2


def shaped(x, n):
    return x.reshape(n, -1).sum(0), np.zeros((n, 2)), len([0] * n)


def branchy(x, k):
    if k > 3:
        return x * k
    return x - k


X = np.arange(12.0).reshape(3, 4)


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert type(g) is type(w)
        np.testing.assert_array_equal(g, w)


def test_another_value_is_read_at_each_call():
    compiled = cppcodegen.compile(collatz_steps, fallback=False)
    for n in (27, 97, 871, 6171, 837799, 1, 2 ** 40 + 1):
        _same(compiled(n), collatz_steps(n))
    assert len(compiled.variants) == 2       # the first value's, then one for every value


@pytest.mark.parametrize("fn,arg,values", [
    (powers, X.ravel(), [2, 3, 5, 0, 1]),
    (by_axis, X, [0, 1, 0, -1]),
    (shaped, X, [3, 2, 6, 3, 4]),
    (branchy, X.ravel(), [1, 5, 2, 9]),
])
def test_int_arguments_of_every_value(fn, arg, values):
    compiled = cppcodegen.compile(fn, fallback=False)
    for v in values:
        _same(compiled(arg, v), fn(arg, v))
    assert len(compiled.variants) <= len(set(values))


def test_an_int_past_int64_stays_a_constant():
    def plus(x, n):
        return x + (n - 2 ** 70)
    compiled = cppcodegen.compile(plus, fallback=False)
    for n in (2 ** 70 + 1, 2 ** 70 + 5, 3):
        _same(compiled(np.ones(3), n), plus(np.ones(3), n))


def prefix_sum(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def test_int_values_reach_the_fast_path():
    """A call with a Python int argument finds its variant by the arguments' layouts and the
    int's value (it went through classify and the guards on every call): results stay the
    plain function's as values come back in any order, and the cache holds one entry per
    value seen."""
    compiled = cppcodegen.compile(prefix_sum)
    x = np.arange(10.0)
    for n in (3, 5, 3, 7, 5, 0, 10, 7):
        assert compiled(x, n) == prefix_sum(x, n)
    assert len(compiled._fast) == 5
    with pytest.raises(IndexError):
        compiled(x, 11)


def sliding_sums(x, w):
    out = np.zeros(x.shape[0] - w + 1)
    for i in range(out.shape[0]):
        out[i] = x[i:i + w].sum()
    return out


def test_a_size_from_sizes_and_an_int_argument_follows_every_call():
    """np.zeros(x.shape[0] - w + 1), w a Python int argument: a size of sizes and the
    argument's value (its Python-int overflow check aside), so a call with another size
    runs compiled, with no warning, not as NumPy."""
    import warnings
    f = cppcodegen.compile(sliding_sums)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n, w in ((3, 2), (100, 7), (5, 5), (40, 1)):
            x = np.arange(float(n))
            np.testing.assert_array_equal(f(x, w), sliding_sums(x, w))


def _xorshift(seed, n):
    out = np.empty(n, dtype=np.uint64)
    s = np.uint64(seed)
    for i in range(n):
        s ^= s << np.uint64(13)
        s ^= s >> np.uint64(7)
        s ^= s << np.uint64(17)
        out[i] = s
    return out


def test_uint64_scalars_past_int64_are_passed_whole():
    """An np.uint64 argument of 2**63 or more is passed as uint64 (it was an int64, and cffi
    refused it: OverflowError), on the first call and on the later ones."""
    add = cppcodegen.compile(lambda x, s: x + s, fallback=False)
    f = cppcodegen.compile(_xorshift, fallback=False)
    x = np.arange(3, dtype=np.uint64)
    for s in (np.uint64(2 ** 64 - 1), np.uint64(2 ** 63 + 5), np.uint64(7)):
        np.testing.assert_array_equal(add(x, s), x + s)
        np.testing.assert_array_equal(f(s, 5), _xorshift(s, 5))
        np.testing.assert_array_equal(f(s, 5), _xorshift(s, 5))


def max_pool(x, k):
    H, W = x.shape
    h, w = H // k, W // k
    return x[:h * k, :w * k].reshape(h, k, w, k).max(axis=(1, 3))


@pytest.mark.parametrize("kind", [int, np.int64])
def test_block_pooling_by_an_int_argument(kind):
    """A slice whose length is computed from an int argument, reshaped into blocks: the
    loads' positions name the argument's value (the kernel was built without it and the
    C++ did not compile, with np.int64 k at once, with a Python int at its second value)."""
    f = cppcodegen.compile(max_pool)
    rng = np.random.default_rng(3)
    for shape, k in (((16, 16), 4), ((16, 16), 4), ((13, 9), 2), ((16, 16), 3)):
        x = rng.random(shape)
        np.testing.assert_array_equal(f(x, kind(k)), max_pool(x, kind(k)))
