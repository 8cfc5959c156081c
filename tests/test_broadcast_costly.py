"""An expensive value spread by a broadcast (a twiddle factor ``np.exp(-1j * pi * k / n)[:, None]``
multiplying a matrix, ``np.log(w)[None, :] * X``) is computed once per element of its own, in
a buffer, not once per element of the product; results equal NumPy's. And a butterfly written
with slices of a reshaped array (the radix-2 FFT of public NumPy code) compiles to loops
without selects or divisions in its indices."""
import numpy as np
import pytest

import cppcodegen


def twiddle(X):
    n = X.shape[0]
    f = np.exp(-1j * np.pi * np.arange(n) / n)[:, None]
    return np.vstack([X + f * X, X - f * X])


def log_weights(w, X):
    return np.log(w)[None, :] * X + np.sin(w)


def fft_radix2(x):
    N = x.shape[0]
    a = x.astype(np.complex128)
    m = 2
    while m <= N:
        half = m // 2
        w = np.exp(-2j * np.pi * np.arange(half) / m)
        b = a.reshape(N // m, m)
        t = w * b[:, half:]
        u = b[:, :half].copy()
        b[:, :half] = u + t
        b[:, half:] = u - t
        a = b.reshape(N)
        m *= 2
    return a


R = np.random.default_rng(2)


@pytest.mark.parametrize("fn,args", [
    (twiddle, (R.random((16, 64)) + 1j * R.random((16, 64)),)),
    (log_weights, (R.random(40) + 0.5, R.random((30, 40)))),
], ids=["twiddle", "log_weights"])
def test_the_expensive_factor_is_computed_once_per_element(fn, args):
    f = cppcodegen.compile(fn)
    np.testing.assert_allclose(f(*args), fn(*args), rtol=1e-13)
    text = str(f.explain(*args))
    ir = text[text.index("== loop IR =="):text.index("== kernels")]
    costly = [line for line in ir.splitlines() if "exp(" in line or "log(" in line]
    assert costly and all(f"over [{args[0].shape[-1] if fn is log_weights else args[0].shape[0]}]"
                          in line for line in costly), "\n".join(costly)


def test_a_radix2_fft_like_numpy_without_selects():
    x = R.random(256) + 1j * R.random(256)
    f = cppcodegen.compile(fft_radix2)
    np.testing.assert_allclose(f(x), fft_radix2(x), rtol=1e-12)
    rev = _bit_reversed(256)            # with its input bit-reversed, it is the DFT
    np.testing.assert_allclose(f(x[rev]), np.fft.fft(x), rtol=1e-10, atol=1e-10)
    src = f.explain(x).source
    kernels = src[src.index("static void kernel"):src.index('extern "C"')]
    assert " ? " not in kernels and "ccg_idx_div" not in kernels and "std::min" not in kernels


def _bit_reversed(n):
    bits = n.bit_length() - 1
    return np.array([int(format(i, f"0{bits}b")[::-1], 2) for i in range(n)])


def softmax_rows(x):
    n, m = x.shape
    out = np.empty_like(x)
    for i in range(n):
        mx = x[i, 0]
        for j in range(1, m):
            if x[i, j] > mx:
                mx = x[i, j]
        s = 0.0
        for j in range(m):
            out[i, j] = np.exp(x[i, j] - mx)
            s += out[i, j]
        for j in range(m):
            out[i, j] /= s
    return out


def test_a_stored_expensive_value_read_back_is_computed_once():
    """``out[i, j] = np.exp(...)`` then ``s += out[i, j]``: the read is the stored value,
    computed once into its own value (inlined into the sum's kernel too, each element's exp
    was computed twice: float32 row softmax 2.66 -> 1.41 ms for 2000 x 256)."""
    for dt in (np.float32, np.float64):
        x = (np.random.default_rng(3).random((37, 19)) * 10).astype(dt)
        got, want = cppcodegen.compile(softmax_rows)(x), softmax_rows(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=4e-6 if dt == np.float32 else 1e-14)
        src = cppcodegen.explain(softmax_rows, x).source
        assert src.count("exp(t") == 1, src     # (ccg::exp or std::exp of a temporary)
