"""A value made before a loop that each iteration starts a carried name from (``s =
np.log(S0)`` at the top of a path's loop, then updated by a loop, a branch or a while inside
it): every iteration starts from that value, as in Python. The lowering gave the inner
construct the value's own buffer, so its updates stayed there for the next iteration (a
loop proved independent: each thread's private copy started from 0)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import check_against_numpy


def per_path(S0, Z):
    out = np.empty(Z.shape[0])
    for p in range(Z.shape[0]):
        s = np.log(S0)
        for t in range(Z.shape[1]):
            s += Z[p, t]
        out[p] = s
    return out


def with_branch(base, x):
    out = np.empty(x.shape[0])
    b2 = base * 2.0
    for i in range(x.shape[0]):
        s = b2
        if x[i] > 0:
            s += x[i]
        out[i] = s
    return out


def with_break(capital, R, lev):
    final = np.empty(R.shape[0])
    for s in range(R.shape[0]):
        nav = capital * lev
        for t in range(R.shape[1]):
            nav *= 1.0 + R[s, t]
            if nav < 0.5 * capital:
                break
        final[s] = nav
    return final


def with_while(x, tol):
    out = np.empty(x.shape[0])
    start = np.sqrt(tol) * 10.0
    for i in range(x.shape[0]):
        g = start
        while abs(g * g - x[i]) > tol:
            g = 0.5 * (g + x[i] / g)
        out[i] = g
    return out


def array_start(z, base):
    out = np.empty(z.shape)
    row0 = base * 2.0               # an array made before the loop, each row starts from it
    for p in range(z.shape[0]):
        acc = row0
        for t in range(z.shape[1]):
            acc = acc + z[p, t]
        out[p] = acc
    return out


R = np.random.default_rng(5)


@pytest.mark.parametrize("fn, args", [
    (per_path, (100.0, R.standard_normal((40, 7)))),
    (with_branch, (100.0, R.standard_normal(33))),
    (with_break, (1.0, R.uniform(-0.3, 0.5, (30, 6)), 2.0)),
    (with_while, (R.uniform(1.0, 50.0, 20), 1e-9)),
    (array_start, (R.standard_normal((9, 5, 4)), R.standard_normal(4))),
])
def test_each_iteration_starts_from_the_value_made_before_the_loop(fn, args):
    check_against_numpy(fn, *args)


def two_branches_from_one_start(img):
    """A value made before two branches (``lx``) that each start a while loop from it
    (``k = lx``, then ``k += 1``): the first loop must not take ``lx``'s buffer, the
    second reads it after (a scanline flood fill: its second row was never pushed)."""
    out = img.copy()
    h, w = out.shape
    total = 0
    for y in range(h):
        x = w - 1
        lx = x
        while lx > 0 and out[y, lx - 1] == 1:
            lx -= 1
        if y > 0:
            k = lx
            while k <= x and out[y - 1, k] >= 0:
                total += k
                k += 1
        if y < h - 1:
            k = lx
            while k <= x and out[y + 1, k] >= 0:
                total += 10 * k
                k += 1
    return total


def test_a_value_two_branches_start_loops_from():
    img = np.array([[1, 1, 1, 0], [1, 0, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]], dtype=np.int16)
    check_against_numpy(two_branches_from_one_start, img)
    check_against_numpy(two_branches_from_one_start, (R.random((9, 7)) > 0.3).astype(np.int16))
