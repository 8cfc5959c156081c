"""A list of traced arrays where NumPy takes one array (``np.mean([a, b, c], axis=0)``,
``np.maximum.reduce([a, b, c])``): NumPy converts the list to one array, and so does the
compiled function (frontend/listargs.py); these ran as plain Python before. Functions that
take a sequence of arrays as such (np.concatenate, np.select) keep doing so."""
import numpy as np
import pytest

import cppcodegen


def maximum_reduce(a, b, c):
    return np.maximum.reduce([a, b, c])


def add_reduce_tuple(a, b, c):
    return np.add.reduce((a, b))


def minimum_reduce_axis(a, b, c):
    return np.minimum.reduce([a, b, c], axis=0)


def add_accumulate(a, b, c):
    return np.add.accumulate([a, b, c])


def max_of_list(a, b, c):
    return np.max([a, b, c], axis=0)


def ensemble_mean(a, b, c):
    return np.mean([a, b, c], axis=0)


def sum_of_list(a, b, c):
    return np.sum([a, b], axis=0)


def median_of_list(a, b, c):
    return np.median([a, b, c], axis=0)


def std_of_list(a, b, c):
    return np.std([a, b, c], axis=0)


def max_of_sums(a, b, c):
    return np.max([a.sum(), b.sum(), 0.5])


def argmax_of_list(a, b, c):
    return np.argmax([a, b, c], axis=0)


def any_of_masks(a, b, c):
    return np.any([a > 0.5, b > 0.5], axis=0)


def ufunc_of_a_list(a, b, c):
    return np.maximum([a, b], 0.25)


def nested_list(a, b, c):
    return np.min([[a, b], [c, a]], axis=1)


def mixed_dtypes(a, b, c):
    return np.sum([a, (b * 10).astype(np.int32)], axis=0)


def still_sequences(a, b, c):
    return np.concatenate([a, b]), np.select([a > 0.5, b > 0.5], [a, b], 0.0)


FUNCTIONS = [maximum_reduce, add_reduce_tuple, minimum_reduce_axis, add_accumulate,
             max_of_list, ensemble_mean, sum_of_list, median_of_list, std_of_list,
             max_of_sums, argmax_of_list, any_of_masks, ufunc_of_a_list, nested_list,
             mixed_dtypes, still_sequences]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_list_of_arrays_is_one_array(fn):
    rng = np.random.default_rng(7)
    f = cppcodegen.compile(fn)          # (the tests run with the fallback off: no Python run)
    for n in (5, 33):
        a, b, c = rng.random((3, n))
        got, want = f(a, b, c), fn(a, b, c)
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-12)
