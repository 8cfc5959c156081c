"""Functions with a construct cppcodegen cannot compile (tests/test_fallback.py)."""
import numpy as np


def low_bits(x):
    y = x * 2
    return (y.view(np.int64) & 0xff) + 1      # reinterpreting bits: not compiled


def bad_shapes(a, b):
    return a + b


def binomial_tree(S0, K, r, sigma, T, N):
    """Backward induction over a shrinking array: V's shape changes every step, so the loop
    cannot be compiled, and run by Python it would be N copies of its body."""
    dt = T / N
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    j = np.arange(N + 1)
    V = np.maximum(S0 * u ** j * d ** (N - j) - K, 0.0)
    for i in range(N, 0, -1):
        V = disc * (p * V[1:i + 1] + (1.0 - p) * V[0:i])
    return V[0]
