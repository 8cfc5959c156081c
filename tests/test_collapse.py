"""Pointwise kernels over arrays with a short last axis ((n, 3) points, (h, w, 3) pixels) run
their last two axes as one loop (``passes/collapse.py``) where every access allows it; where
one does not (a per-column value, a strided view, a transpose) the axes stay apart. Results
are NumPy's either way."""
import numpy as np
import pytest

import cppcodegen

RNG = np.random.default_rng(21)


def exp_of(x):
    return np.exp(x)


def affine(x):
    return x * 2.0 + 1.0


def per_column(x, b):
    return x * b + 1.0


def per_row(x, r):
    return x * r


def scaled_into(x):
    x *= 0.5
    x += 1.0
    return x


def gamma_u8(img):
    return np.clip(img.astype(np.float32) * 1.2 + 8.0, 0, 255).astype(np.uint8)


def relax(u, steps):
    for _ in range(steps):
        u = 0.5 * u + 0.25
    return u


def strided(x):
    return np.sqrt(x[:, ::2] + 1.0)


def transposed(x):
    return x.T + 1.0


def _kernels(fn, *args):
    return str(cppcodegen.explain(fn, *args))


def _run(fn, *args, exact=True):
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = cppcodegen.compile(fn, fallback=False)(*[a.copy() if isinstance(a, np.ndarray) else a
                                                   for a in args])
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:       # (exp: the vector and scalar paths are each within NumPy's ULPs)
        np.testing.assert_allclose(got, want, rtol=4e-16 * 8, atol=0)
    return got


@pytest.mark.parametrize("shape", [(40, 5), (7, 3), (1, 4), (0, 3), (6, 1), (9, 63)])
def test_short_last_axis_is_one_loop(shape):
    x = RNG.normal(size=shape)
    _run(exp_of, x, exact=False)
    _run(affine, x)
    ir = _kernels(affine, x)
    n = int(np.prod(shape))
    assert f"over [{n}]" in ir, ir


def test_three_axes_merge_the_last_two():
    img = RNG.integers(0, 256, (6, 11, 3), dtype=np.uint8)
    _run(gamma_u8, img)
    assert "over [6, 33]" in _kernels(gamma_u8, img)


def test_sizes_known_at_run_time_merge_too():
    f = cppcodegen.compile(affine, dynamic=True, fallback=False)
    for shape in [(50, 3), (17, 5), (4, 2)]:
        x = RNG.normal(size=shape)
        np.testing.assert_array_equal(f(x), affine(x))
    assert len(f.variants) + len(f.dynamic_variants) <= 2


@pytest.mark.parametrize("fn,make", [
    (per_column, lambda: (RNG.normal(size=(30, 5)), RNG.normal(size=5))),
    (per_row, lambda: (RNG.normal(size=(30, 5)), RNG.normal(size=(30, 1)))),
    (strided, lambda: (RNG.random((12, 6)),)),
    (transposed, lambda: (RNG.normal(size=(5, 12)),)),
])
def test_accesses_that_keep_the_axes_apart(fn, make):
    args = make()
    _run(fn, *args)
    ir = _kernels(fn, *args)
    out = fn(*args)
    assert f"over [{out.size}]" not in ir, ir


def test_in_place_updates_and_loops():
    x = RNG.normal(size=(25, 3))
    want = scaled_into(x.copy())
    got = cppcodegen.compile(scaled_into, fallback=False)(x)
    assert got is x
    np.testing.assert_array_equal(x, want)
    u = RNG.normal(size=(33, 3)).astype(np.float32)
    _run(relax, u, 7)


def test_fortran_ordered_and_reversed_inputs():
    x = np.asfortranarray(RNG.normal(size=(20, 3)))
    _run(affine, x)
    y = RNG.normal(size=(20, 3))[::-1]
    _run(affine, y)


def log_returns(p):
    return np.diff(np.log(p), axis=0)


def shifted_sum(x):
    return x[1:, 1:] + x[:-1, :-1]


@pytest.mark.parametrize("shape", [(40, 5), (9, 3), (2, 4), (1, 5)])
def test_rows_shifted_by_a_constant_merge(shape):
    """``x[i + 1, j] - x[i, j]`` (np.diff along rows of a (n, 5) price table): one run of
    memory shifted by a row, so one loop (a scalar tail of 5 per row took 24 ms for
    (200000, 5), NumPy 6 ms); shifted along both axes, the axes stay apart."""
    p = RNG.random(shape) + 0.5
    f = cppcodegen.compile(log_returns, fallback=False)
    for q in (p, np.asfortranarray(p)):     # (a difference of logs within 1 ulp of NumPy's
        np.testing.assert_allclose(f(q), log_returns(q), rtol=0, atol=4e-16 * 2)  # each)
    _run(shifted_sum, p)
    if shape[0] > 1:
        n = (shape[0] - 1) * shape[1]
        assert f"over [{n}]" in _kernels(log_returns, p)
        assert f"over [{n}]" not in _kernels(shifted_sum, p) or shape[1] == 1


def kinetic(v):
    return 0.5 * np.sum(v * v), v.max(), np.abs(v).sum(axis=(1, 2))


def berendsen(v, t_target, tau, dt):
    t = np.mean(v ** 2)
    lam = np.sqrt(1.0 + dt / tau * (t_target / t - 1.0))
    v *= lam
    return v, t


@pytest.mark.parametrize("shape", [(4000, 3), (7, 2), (1, 3), (0, 3)])
def test_reductions_over_short_rows_and_stages_after_a_scalar_merge(shape):
    """A reduction over both of its last axes, the inner one short, and a pointwise stage
    of a flat kernel (after the 0-d stage computing ``lam``) run over the rows as one axis."""
    v = RNG.normal(size=shape)
    v3 = RNG.normal(size=(shape[0], 4, 3))
    with np.errstate(all="ignore"):
        for fn, args in ((kinetic, (v3,)), (berendsen, (v, 1.0, 0.1, 0.005))):
            if shape[0] == 0 and fn is kinetic:
                continue            # (max of nothing: NumPy's error)
            want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            got = cppcodegen.compile(fn, fallback=False)(
                *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)
    if shape[0] == 4000:
        src = cppcodegen.explain(berendsen, v, 1.0, 0.1, 0.005).source
        assert src.count("= 12000 / L * L;") == 2 and "3 / L * L" not in src   # (the mean,
        assert "reduction buf1 over [48000] sum" in _kernels(kinetic, v3)   # v *= lam)
