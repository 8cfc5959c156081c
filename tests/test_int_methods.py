"""``int(v).bit_count()`` and ``.bit_length()`` of traced integers (a popcount loop, the
width of the largest value): Python's, of the magnitude, as a Python int. They raised an
AttributeError about numpy.ndarray from inside the tracer. Compared with the plain function."""
import numpy as np
import pytest

import cppcodegen


def total_bits(a):
    tot = 0
    for v in a:
        tot += int(v).bit_count()
    return tot


def widest(a):
    mx = 0
    for i in range(a.shape[0]):
        mx = max(mx, int(a[i]).bit_length())
    return mx


def per_element(a):
    out = np.zeros(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        out[i] = a[i].bit_count() * 100 + int(a[i]).bit_length()
    return out


EDGES = np.array([0, 1, -1, -8, 7, 255, 2**40, 2**62, -2**63, 2**63 - 1, 12345], dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.uint32, np.uint16])
@pytest.mark.parametrize("fn", [total_bits, widest, per_element])
def test_like_python(fn, dtype):
    r = np.random.default_rng(7)
    info = np.iinfo(dtype)
    a = np.concatenate([r.integers(info.min, info.max, 300, dtype=dtype, endpoint=True),
                        EDGES.astype(dtype)])
    got, want = cppcodegen.compile(fn)(a), fn(a)
    np.testing.assert_array_equal(got, want)
    assert type(got) is type(want) or np.asarray(got).dtype == np.asarray(want).dtype


def test_what_numpy_lacks_is_an_attribute_error():
    def f(a):
        return a.bit_count()

    def g(a):
        return a[0].bit_length()        # (NumPy's integers have bit_count, not bit_length)
    for fn in (f, g):
        with pytest.raises(AttributeError):
            fn(np.arange(3))
        with pytest.raises(AttributeError):
            cppcodegen.compile(fn)(np.arange(3))
