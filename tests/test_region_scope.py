"""A value computed before a branch or a loop and used both inside it and after it is computed
where both see it: not only inside a branch that may not run (``i += 1`` read by a loop under
``if`` and again by the next test of a ``while``: the loop never ended), and a store made
before a branch is made before it, not in the branch (``y[i] = ...; if x[i] < 0: return y``
lost every store when the branch was not taken). A scalar read from an array before the
array's element is stored keeps the old value in a ``while`` loop as in a ``for`` loop (the
loop fuzzer's seed 2026, programs 135 and 259), and a sum read at the end of a ``while`` body
uses the element it read before the index moved on. Each program is compared with the plain Python
function: its result and the arguments it updates."""
import numpy as np
import pytest

import cppcodegen


def running_before_store(x):
    s1 = 0.0
    i = -2
    while i + 3 < x.shape[0]:
        i += 3
        s1 += x[i] * 0.5 + s1 * 0.25
        x[i] = x[i] * 0.5 + x[i - 1] * 0.25
    return s1


def store_then_return(x, t):
    y = x * 1.0
    c = 0
    i = -2
    while i + 2 < x.shape[0]:
        i += 2
        y[i] = x[i] * 3
        if x[i] < 0:
            return y, c
        if x[i] > t:
            c += 1
            continue
    return y, c


def store_then_return_for(x, t):
    y = x * 1.0
    for i in range(0, x.shape[0], 2):
        y[i] = x[i] - x[len(x) - 1 - i]
        if x[i] < 0:
            return y
    return y


def recurrence_per_term(a, n):
    """h(k+1) = a[i] h(k) + h(k-1) from (1, 1), n steps, for each nonnegative a[i]."""
    res = np.zeros(a.shape[0], dtype=np.int64)
    i = 0
    while i < a.shape[0]:
        i += 1
        if a[i - 1] < 0:
            continue
        h0, h1 = 1, 1
        for _ in range(n):
            h0, h1 = h1, a[i - 1] * h1 + h0
        res[i - 1] = h1
    return res


def convergents(a, stop):
    """Numerator and denominator of the continued fraction [a0; a1, ...] cut at the first
    prefix whose numerator passes ``stop`` (zero terms skipped as prefix ends)."""
    out = np.zeros(2, dtype=np.int64)
    i = 0
    while i < a.shape[0]:
        i += 1
        if a[i - 1] == 0:
            continue
        h0, h1 = 0, 1
        k0, k1 = 1, 0
        for j in range(i):
            t = a[j]
            h0, h1 = h1, t * h1 + h0
            k0, k1 = k1, t * k1 + k0
        out[0] = h1
        out[1] = k1
        if h1 > stop:
            break
    return out


def scaled_in_branch(x, flag):
    m = x.max() * 2.0
    out = np.zeros_like(x)
    if flag > 0:
        for k in range(x.shape[0]):
            out[k] = x[k] / m
    return out + m


def accumulate_until(x, tol):
    """The sum read at the end of the body was made from x[i] after i += 1 (it read x[i + 1],
    and x[4] of four elements raised)."""
    i = 0
    s = 0.0
    while i < 4:
        s += x[i]
        if s > tol:
            break
        i += 1
    return i, s


def roulette(w, u):
    acc = 0.0
    i = 0
    while True:
        acc += w[i]
        if acc >= u or i == len(w) - 1:
            break
        i += 1
    return i, acc


TERMS = np.array([2, 1, 0, 3, 1, 4, 2], dtype=np.int64)
POWERS = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
CASES = [
    (accumulate_until, (POWERS, 50.0)),
    (accumulate_until, (POWERS[:4], 1e9)),
    (roulette, (np.array([0.1, 0.2, 0.3, 0.4]), 0.55)),
    (roulette, (np.array([0.1, 0.2, 0.3, 0.4]), 2.0)),
    (running_before_store, (np.linspace(-1.0, 2.0, 2),)),
    (running_before_store, (np.linspace(-1.0, 2.0, 40),)),
    (store_then_return, (np.arange(1.0, 8.0), 0.25)),
    (store_then_return, (np.array([1.0, 2.0, -3.0, 4.0, 5.0]), 0.25)),
    (store_then_return_for, (np.arange(1, 18).astype(np.int32), 0.25)),
    (recurrence_per_term, (np.array([1, -2, 2, 3], dtype=np.int64), 5)),
    (convergents, (TERMS, 20)),
    (convergents, (TERMS, 10**6)),
    (scaled_in_branch, (np.linspace(0.5, 3.0, 9), 1)),
    (scaled_in_branch, (np.linspace(0.5, 3.0, 9), -1)),
]


@pytest.mark.parametrize("fn,args", CASES,
                         ids=[f"{fn.__name__}-{k}" for k, (fn, _) in enumerate(CASES)])
def test_matches_python(fn, args):
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
