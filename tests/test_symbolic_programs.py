"""Programs keep their compiled form when the sizes are symbolic (the build a second input
size gets): arrays joined from slices (a fresh array filled in its interior, ``f[1:-1] =
...``, a concatenation, ``np.roll``, ``np.pad`` in every border mode), ``np.convolve`` and
``np.correlate`` of a signal of any length with fixed taps, ``np.gradient`` with a spacing
argument, ``np.fft.fftfreq`` of a length, a loop index modulo a length (periodic neighbours),
``np.bincount`` of argmin labels in a ``while`` loop. Each is compared with NumPy at many
lengths (small ones too: a decision a length takes is guarded, and another length gets a
build of its own), and the interior of a fill is a vector loop over the interior, not a
select with clamped loads at every element."""
import numpy as np
import pytest

import cppcodegen


def interior(x):
    f = np.zeros_like(x)
    f[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]
    return f


def interior_2d(u):
    out = np.zeros_like(u)
    out[1:-1, 2:-1] = u[2:, 2:-1] + u[:-2, 2:-1] + u[1:-1, 3:] + u[1:-1, 1:-2] - 4 * u[1:-1, 2:-1]
    return out


def wrapped(x):
    return np.concatenate([x[-3:], x, x[:2]]) * 2


def rolled(u):
    return u - np.roll(u, 3) + np.roll(u, -2)


def padded(u, mode):
    return np.pad(u, ((2, 1), (0, 3)), mode=mode)


def smoothed(x, taps):
    return np.convolve(x, taps, mode="same"), np.convolve(x, taps), np.correlate(x, taps)


def slope(x, dt):
    return np.gradient(x, dt), np.gradient(x, dt, edge_order=2)


LENGTHS = [0, 1, 2, 3, 4, 5, 7, 16, 37, 100]


def _check(fn, make, lengths, *extra):
    f = cppcodegen.compile(fn, dynamic=True, fallback=False)
    for n in lengths:
        x = make(n)
        try:
            want = fn(x, *extra)
        except Exception as e:          # noqa: BLE001 -- NumPy's error: the same one
            with pytest.raises(type(e)):
                f(x, *extra)
            continue
        got = f(x, *extra)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
            assert g.shape == w.shape and g.dtype == w.dtype, n
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"length {n}")


rng = np.random.default_rng(8)


@pytest.mark.parametrize("fn", [interior, wrapped, rolled], ids=lambda f: f.__name__)
def test_one_axis(fn):
    _check(fn, lambda n: rng.random(n).astype(np.float32), LENGTHS)


def test_interior_of_a_matrix():
    _check(interior_2d, lambda n: rng.random((n, n + 3)), LENGTHS)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
def test_pad(mode):
    _check(padded, lambda n: rng.random((n, n + 2)), [0, 1, 2, 3, 4, 9, 30], mode)


def test_convolve_and_correlate():
    taps = np.hamming(7)
    _check(smoothed, lambda n: rng.standard_normal(n), [1, 3, 6, 7, 8, 50, 301], taps)


def test_gradient_with_a_spacing_argument():
    _check(slope, lambda n: rng.standard_normal(n), [1, 2, 3, 4, 10, 99], 0.01)


@pytest.mark.parametrize("fn,load", [(interior, "in0 + (-1 + i0)"), (rolled, "in0 + (-3 + i0)")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_symbolic_fill_is_a_vector_loop(fn, load):
    """The interior is a loop of its own with plain vector loads (the few elements at the
    ends, where the length decides which part a point is in, keep their selects)."""
    f = cppcodegen.compile(fn, dynamic=True, fallback=False)
    src = cppcodegen.explain(f, rng.random(64)).source
    assert "n0" in src                  # (the build with symbolic sizes)
    assert f"Vec<double, L>::load({load})" in src


@pytest.mark.parametrize("fn,x,extra", [
    (rolled, rng.random(100), ()),
    (padded, rng.random((30, 20)), ("reflect",)),
    (padded, rng.random((30, 20)), ("edge",)),
    (smoothed, rng.standard_normal(100), (np.hamming(7),)),
    (slope, rng.standard_normal(100), (0.01,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_no_numpy_call_at_symbolic_sizes(fn, x, extra):
    """Compiled natively at symbolic sizes: no NumPy step between kernels (a warning)."""
    import warnings
    f = cppcodegen.compile(fn, dynamic=True, fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x, *extra)


def frequencies(x, d):
    n = x.shape[0]
    return np.fft.rfftfreq(n, d=d), np.fft.fftfreq(n, 0.5), np.fft.fftfreq(8)


def test_fft_frequencies_of_a_symbolic_length():
    """``np.fft.fftfreq``/``rfftfreq`` of ``x.shape[0]``: NumPy's values, bit for bit, at
    every length one build serves (NumPy's own function refuses a symbolic length)."""
    f = cppcodegen.compile(frequencies, fallback=False)
    for n in (8, 10, 1, 2, 5, 11, 64):
        for g, w in zip(f(np.ones(n), 0.001), frequencies(np.ones(n), 0.001)):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def flip_if_neighbour_up(s):
    L = s.shape[0]
    for i in range(L):
        for j in range(L):
            if s[(i + 1) % L, (j + 1) % L] > 0:     # periodic neighbours: the loop index
                s[i, j] = 0                         # modulo a symbolic length
    return s


def metropolis_sweep(spins, u, beta):
    n, m = spins.shape
    for i in range(n):
        for j in range(m):
            nb = spins[(i + 1) % n, j] + spins[(i - 1) % n, j] + \
                spins[i, (j + 1) % m] + spins[i, (j - 1) % m]
            dE = 2.0 * spins[i, j] * nb
            if dE <= 0 or u[i, j] < np.exp(-beta * dE):
                spins[i, j] = -spins[i, j]
    return spins


@pytest.mark.parametrize("fn", [flip_if_neighbour_up, metropolis_sweep],
                         ids=lambda f: f.__name__)
def test_periodic_neighbours_at_a_second_size(fn):
    """The second size builds with symbolic sizes: ``(i + 1) % L`` is an index expression
    of the loop variable, not a value the trace needs."""
    f = cppcodegen.compile(fn, fallback=False)
    for n in (16, 24, 5):
        s = np.random.default_rng(n).choice(np.array([-1, 1]), size=(n, n + 1)).astype(np.int64)
        extra = (rng.random(s.shape), 0.4) if fn is metropolis_sweep else ()
        if fn is flip_if_neighbour_up:
            s = s[:, :n].copy()
        want_s, got_s = s.copy(), s.copy()
        np.testing.assert_array_equal(f(got_s, *extra), fn(want_s, *extra))
        np.testing.assert_array_equal(got_s, want_s)


def labels_until_converged(x, C, tol):
    shift = 1.0
    cnt = np.zeros(3, dtype=np.int64)
    while shift > tol:
        lab = np.abs(x[:, None] - C[None, :]).argmin(axis=1)
        cnt = np.bincount(lab, minlength=3)     # argmin's labels are < 3: a native count
        shift = shift / 2
    return cnt


def test_bincount_of_argmin_labels_in_a_while_loop():
    x, C = rng.standard_normal(100), np.array([-1.0, 0.0, 1.0])
    got = cppcodegen.compile(labels_until_converged, fallback=False)(x, C, 1e-3)
    np.testing.assert_array_equal(got, labels_until_converged(x, C, 1e-3))
