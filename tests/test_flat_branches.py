"""A cheap ``if`` in a serial loop runs as blends, not a branch (backend/predicate.py ``_sel``,
scalar.h ``ccg::select``/``add_if``): every result must still be the plain function's, bit
for bit where Python's is exact (signed zeros, NaN, wrapping ints)."""
import numpy as np
import pytest

import cppcodegen
from benchmarks.loop_workloads import loop_positive_mean as positive_mean
from test_control_flow import argmax_loop


def signed_sums(x):
    up = -0.0                   # stays -0.0 when nothing is added: x + -0.0 keeps it
    down = -0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            up += x[i]
        else:
            down -= x[i]
    return up, down


def three_way(x, lo, hi):
    below = 0
    above = 0
    total = x[0] * 0
    for i in range(x.shape[0]):
        v = x[i]
        if v < lo:
            below += 1
        elif v > hi:
            above += 1
        else:
            total += v
    return below, above, total


def toggled(x):
    on = False
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            on = not on
        if on:
            count += 1
    return count, on


def clipped_into(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        if v > 1.0:
            v = 1.0
        out[i] = v
    return out


FLOATS = [np.random.default_rng(0).standard_normal(1001),
          np.array([-0.0, -1.0, -2.0]),                 # nothing positive: signed zeros
          np.array([np.nan, 1.0, -1.0, np.nan, 2.0]),
          np.random.default_rng(1).standard_normal(64).astype(np.float32)]


def _same(got, want):
    """Same Python types, and floats equal to the bit (NaN where NaN, the zero's sign)."""
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        assert type(g) is type(w) and isinstance(got, tuple) == isinstance(want, tuple), (g, w)
        if isinstance(w, (float, np.floating)):
            assert (np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w))
        else:
            assert g == w


@pytest.mark.parametrize("x", FLOATS, ids=["normal", "negative-zeros", "nan", "float32"])
@pytest.mark.parametrize("fn", [positive_mean, signed_sums, argmax_loop, toggled])
def test_flattened_branches_give_the_plain_results(fn, x):
    _same(cppcodegen.compile(fn)(x), fn(x))


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float64])
def test_elif_chains_and_wrapping_sums(dtype):
    x = (np.arange(-60, 60) * 3).astype(dtype)
    lo, hi = dtype(-20), dtype(40)
    with np.errstate(over="ignore"):            # (int8's sum wraps, as NumPy's does)
        want = three_way(x, lo, hi)
    _same(cppcodegen.compile(three_way)(x, lo, hi), want)


def test_a_predicated_element_store_writes_every_element():
    x = np.random.default_rng(2).uniform(0, 2, 500)
    out, want = np.full(500, -1.0), np.full(500, -1.0)
    cppcodegen.compile(clipped_into)(x, out)
    np.testing.assert_array_equal(out, clipped_into(x, want))


def test_a_cheap_branch_is_flattened_and_an_expensive_one_is_not():
    x = np.random.default_rng(3).standard_normal(100)
    source = cppcodegen.explain(positive_mean, x).source
    assert "add_if" in source
    # (the count's n += 1 too, an int64 sum cast to its type: one add, not a select)
    assert source.count("ccg::add_if(ccg_when") >= 2, source

    def exp_sum(x):
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 0:
                s += np.exp(x[i])
        return s

    text = cppcodegen.explain(exp_sum, x).source
    assert "_sel(" not in text and "if (" in text
    assert cppcodegen.compile(exp_sum)(x) == pytest.approx(exp_sum(x), rel=1e-14)


def test_a_branch_on_the_value_it_updates_stays_a_branch():
    """``if x[i] > m: m = x[i]``: a blend would put the compare on the carried chain; the
    branch, rarely taken, is predicted."""
    x = np.random.default_rng(4).standard_normal(100)
    assert "_sel(" not in cppcodegen.explain(argmax_loop, x).source
    assert "_sel(" in cppcodegen.explain(three_way, x, -0.5, 0.5).source     # (elif: nested)


def bubble_pass(x):
    for i in range(x.shape[0] - 1):
        a = x[i]
        if a > x[i + 1]:
            x[i] = x[i + 1]
            x[i + 1] = a
    return x


def test_branches_that_store_array_elements_stay_branches():
    """A swap's condition reads what the branch stores (through a kernel of two stages), and
    element stores flattened would read, blend and write memory on the loop's chain."""
    x = np.random.default_rng(5).random(50)
    assert "_sel(" not in cppcodegen.explain(bubble_pass, x).source
    np.testing.assert_array_equal(cppcodegen.compile(bubble_pass)(x.copy()), bubble_pass(x.copy()))


def wrapped_square_sum(x, c, box):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - c
        if d > 0.5 * box:           # (a minimum image: this iteration's value adjusted)
            d -= box
        s += d * d
    return s


def test_a_branch_adjusting_this_iterations_value_stays_a_branch():
    x = np.random.default_rng(6).uniform(0, 10, 200)
    assert "_sel(" not in cppcodegen.explain(wrapped_square_sum, x, 1.0, 10.0).source
    assert cppcodegen.compile(wrapped_square_sum)(x, 1.0, 10.0) == wrapped_square_sum(x, 1.0, 10.0)


def longest_run(mask):
    best = 0
    cur = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            cur += 1
            if cur > best:
                best = cur
        else:
            cur = 0
    return best


def carried_condition(a, b):
    """The inner condition is a variable the loop carries and a second ``if`` reads: it must
    keep its value where the outer condition is False (never computed unpredicated)."""
    c = False
    s = 0
    t = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            c = b[i] > 0
            if c:
                s += 1
        if c:
            t += 1
    return s, t, c


@pytest.mark.parametrize("p", [0.0, 0.3, 0.7, 1.0])
def test_an_outer_branch_on_data_is_flattened_around_an_inner_one_on_the_carried_chain(p):
    """``if mask[i]: cur += 1; if cur > best: best = cur; else: cur = 0``: the outer branch
    goes either way (blends), the inner one stays a branch on its predicate and condition,
    and the condition's compare runs unpredicated (it is read only there)."""
    r = np.random.default_rng(5)
    mask = r.random(2000) < p
    f = cppcodegen.compile(longest_run)
    assert f(mask) == longest_run(mask)
    src = cppcodegen.explain(longest_run, mask).source
    assert "_sel(" in src and "a branch" in src
    a, b = r.standard_normal(500), r.standard_normal(500)
    assert cppcodegen.compile(carried_condition)(a, b) == carried_condition(a, b)
