"""float32 sums as accurate as NumPy's pairwise sum on every ISA (more accurate: within an ulp
of the exact sum), identical for any thread count. Each float32 vector is widened into double
lanes as it is read (ccg::WideSum), blocked per lane (Options.reduction_block elements per
lane), so no float32 addition rounds before the final result and the lane count of the ISA
does not change the error. Measured (AMD EPYC): x.sum() of the 8192x8192 normal float32
matrix of `make bench`: relative error 3.1e-8 on AVX-512, AVX2 and scalar builds alike
(NumPy 2.1e-7; float32 blocks with Kahan across them: 3.9e-7 on AVX-512)."""
import numpy as np
import pytest

import cppcodegen
from helpers import run_isolated


def _rms(v):
    return float(np.sqrt(np.mean(np.square(v))))


@pytest.mark.parametrize("shape", [(1 << 22,), (2048, 2048)], ids=["1d", "2d"])
def test_float32_sum_error_not_worse_than_numpy(shape):
    f = cppcodegen.compile(lambda x: x.sum())
    rng = np.random.default_rng(5)
    ours, numpy_ = [], []
    for _ in range(8):
        x = rng.standard_normal(shape, dtype=np.float32)
        exact = x.astype(np.float64).sum()
        ours.append(float(f(x)) - exact)
        numpy_.append(float(x.sum()) - exact)
    # statistically: a single sum of cancelling terms is one random draw, so compare RMS
    assert _rms(ours) <= 1.25 * _rms(numpy_), (_rms(ours), _rms(numpy_))


@pytest.mark.parametrize("shape", [(1 << 22,), (2048, 2048), (3, 5000)], ids=["1d", "2d", "rows"])
def test_float32_sum_positive_terms_close_to_exact(shape):
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    got = cppcodegen.compile(lambda x: x.sum())(x)
    exact = x.astype(np.float64).sum()
    assert abs(float(got) - exact) <= 2 * np.spacing(np.float32(exact))
    rows = cppcodegen.compile(lambda x: x.sum(axis=-1))(x)
    np.testing.assert_allclose(rows, x.astype(np.float64).sum(axis=-1), rtol=3e-7)


def test_float32_sum_special_values():
    x = np.ones(100000, np.float32)
    f = cppcodegen.compile(lambda x: x.sum())
    for v, want in ((np.inf, np.inf), (-np.inf, -np.inf), (np.nan, np.nan)):
        y = x.copy()
        y[777] = v
        got = f(y)
        assert (np.isnan(got) and np.isnan(want)) or got == want


def test_float32_sum_same_bits_for_any_thread_count():
    code = """
import os, numpy as np, cppcodegen
x = np.random.default_rng(3).standard_normal((1000, 3001), dtype=np.float32)
f = cppcodegen.compile(lambda x: (x.sum(), x.sum(axis=1), (x * 2).sum(axis=0)))
print(repr([np.asarray(r).tobytes().hex() for r in f(x)]))
"""
    outs = set()
    for threads in ("1", "2", "3"):
        outs.add(run_isolated(f"import os; os.environ['OMP_NUM_THREADS'] = '{threads}'\n" + code))
    assert len(outs) == 1


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_float32_sum_within_an_ulp_of_exact(isa):
    """Cancelling terms (normal values): the error is the final rounding's, on every ISA."""
    f = cppcodegen.compile(lambda x: x.sum(), options={"isa": isa})
    g = cppcodegen.compile(lambda x: x.sum(axis=1), options={"isa": isa})
    rng = np.random.default_rng(11)
    for shape in ((1 << 21,), (1500, 1777)):
        x = rng.standard_normal(shape, dtype=np.float32)
        exact = x.astype(np.float64).sum()
        assert abs(float(f(x)) - exact) <= np.spacing(np.float32(abs(exact))), shape
    x = rng.standard_normal((64, 100000), dtype=np.float32)
    exact = x.astype(np.float64).sum(axis=1)
    assert np.all(np.abs(g(x) - exact) <= np.spacing(np.abs(exact).astype(np.float32)))


def _taps(sigma, r):
    x = np.arange(-r, r + 1)
    return np.exp(-(x * x) / (2.0 * sigma * sigma)).astype(np.float32).sum(), \
        (np.arange(2 * r + 1) / 3.0).sum()


@pytest.mark.parametrize("isa", ["native", "avx2"])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_fewer_than_eight_terms_add_in_order_as_numpy(isa, r):
    """NumPy adds fewer than 8 elements one after the other: a filter's 5 or 7 taps summed
    in vector lanes and a tail (AVX2's 4 double lanes) came out an ulp off, and with them
    every pixel normalized by the sum. (A radius that changes between calls is a run-time
    length: its float32 sum adds in double, more exact than NumPy's, not always the same.)"""
    f = cppcodegen.compile(lambda sigma: _taps(sigma, r), options={"isa": isa})
    for sigma in (0.7, 1.0, 1.3, 2.1):
        got, want = f(sigma), _taps(sigma, r)
        assert [g.dtype for g in got] == [w.dtype for w in want]
        assert got == want, (sigma, r)
