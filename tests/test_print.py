"""print() in a compiled function prints when the program runs, in Python's order and with
Python's text: in every iteration of a compiled loop, under branches on array values, after
loops, on every call (CFD tutorials print progress in their while loops; such functions ran
as plain Python)."""
import re
import sys

import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.errors import UnsupportedError


def laplace(p, target):
    l1norm = 1.0
    it = 0
    while l1norm > target:
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
        p[:, -1] = 1.0
        l1norm = np.sum(np.abs(p) - np.abs(pn)) / np.sum(np.abs(pn))
        it += 1
        if it % 25 == 0:
            print(it, l1norm)
    print("converged after", it, "iterations")
    return p


def formats(x, scale):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * scale
        if x[i] < 0:
            print(f"negative at {i:3d}: {x[i]:.3e} {x[i]!r} total={total:>12.4f}", end=";\n")
    m = x.max()
    print("max", m, m > 0, x.argmax(), total, x[0:1].sum(), sep=" | ")
    print("stderr line", x.shape[0], file=sys.stderr)
    return total


def kinds(a, b, c):
    print(a[0], b[0], c[0], a.sum(), b.sum(), c.sum(), a[0] + 1.0, np.float32(2) * b[0])
    return a + 1


def counted(x):
    n = 0
    for v in x:
        if v > 0.5:
            print("big")
            n += 1
    return n


_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]\d+)?|-?\d+e[-+]\d+")


def _same_text(got: str, want: str):
    """The same text, but for floats' last digits (sums add in another order: a 1-ulp
    difference prints 17 digits instead of 16): numbers within 1e-13 of each other."""
    assert _NUMBER.sub("#", got) == _NUMBER.sub("#", want), (got, want)
    for g, w in zip(_NUMBER.findall(got), _NUMBER.findall(want)):
        assert float(g) == pytest.approx(float(w), rel=1e-13), (got, want)


def newton(x0, maxiter):
    x = x0
    for k in range(maxiter):
        x_new = x - (np.exp(x) - 3 * x) / (np.exp(x) - 3)
        print(f"iter {k:2d}: x = {x_new:.6f} {str(k)} {k!r}")
        if abs(x_new - x) < 1e-3:
            return x_new
        x = x_new
    return x


def _run(capsys, fn, args, copy=True):
    """(result, stdout, stderr) of fn, each array argument copied first."""
    args = [a.copy() if copy and isinstance(a, np.ndarray) else a for a in args]
    capsys.readouterr()
    out = fn(*args)
    text = capsys.readouterr()
    return out, text.out, text.err


@pytest.mark.parametrize("fn, args", [
    (laplace, (np.zeros((12, 12)), 1e-3)),
    (formats, (np.array([0.5, -2.25e-7, 3.0, -1.5]), 2.0)),
    (formats, (np.array([-1.0]), 0.5)),
    (kinds, (np.array([1, 2], np.int32), np.array([0.1, 1e20], np.float32),
             np.array([1 + 2j, 0.5j]))),
    (counted, (np.linspace(0, 1, 9),)),
    (newton, (1.0, 50)),
])
def test_prints_as_python(capsys, fn, args):
    want, want_out, want_err = _run(capsys, fn, args)
    f = cppcodegen.compile(fn)
    for _ in range(2):                          # every call prints, not only the first
        got, out, err = _run(capsys, f, args)
        np.testing.assert_allclose(got, want, rtol=1e-13)
        _same_text(out, want_out)
        _same_text(err, want_err)


def test_loop_with_a_print_keeps_its_order(capsys):
    """A loop the compiler could run on the threads stays on one when it prints."""
    def f(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] * 2.0
            if i % 997 == 0:
                print("row", i, out[i])
        return out
    x = np.arange(20000.0)
    want, want_out, _ = _run(capsys, f, (x,))
    got, out, _ = _run(capsys, cppcodegen.compile(f, parallel_threshold=0), (x,))
    np.testing.assert_array_equal(got, want)
    assert out == want_out


def test_check_mode_with_prints(capsys):
    assert cppcodegen.check(counted, np.linspace(0, 1, 5)).ok


def _array_printed(x):
    for i in range(2):
        x = x * 2
        print(x)
    return x


def _returned_text(x):
    return f"{x.sum():.2f}"


def _in_prange(x):
    out = np.empty_like(x)
    for i in cppcodegen.prange(x.shape[0]):
        print(i)
        out[i] = x[i] * 2.0
    return out


@pytest.mark.parametrize("fn, n, text", [
    (_array_printed, 3, "print() of an array of shape (3,)"),
    (_returned_text, 3, "a returned string"),
    (_in_prange, 10000, "print() in a prange body"),     # (too long a loop to unroll)
])
def test_refused_with_the_line(fn, n, text):
    with pytest.raises(UnsupportedError) as e:
        cppcodegen.compile(fn, fallback=False)(np.ones(n))
    assert text in str(e.value) and "test_print.py:" in str(e.value)


def _raises_with_a_value(x, tol):
    if tol <= 0:
        raise ValueError(f"tol must be positive, got {tol} ({x.sum():.1f})")
    return x * tol


def test_raise_with_a_formatted_message_runs_python():
    """A message formatted from traced values: the compiled program stops at the raise and
    Python runs the call again, raising it with its numbers (fallback on or off: the
    function compiled; a call that does not raise is the compiled one's)."""
    for fallback in (False, True):
        f = cppcodegen.compile(_raises_with_a_value, fallback=fallback)
        np.testing.assert_array_equal(f(np.ones(3), 2.0), np.full(3, 2.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
            with pytest.raises(ValueError, match=r"got -0\.5 \(3\.0\)"):
                f(np.ones(3), -0.5)
