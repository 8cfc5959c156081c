"""Minimal programs found by the loop fuzzer (tests/fuzz/loops.py, loopcheck.py; issue 15).

Each test is a bug or limitation not fixed yet, marked ``xfail(strict=True)``: it turns red
the day it is fixed (then remove the mark, and the construct from ``loops.KNOWN_LIMITS`` /
``tests/test_fuzz_loops.py``'s KNOWN if it is listed there). ``check_loop_function`` runs the
function as plain Python (the oracle: values within the fuzzer's tolerances, the same dtypes,
the same exception class where Python raises) and compiled, and compares the two.

The functions are module-level on purpose: the capture re-reads their source.
Grouped by root cause; the comment above each group says what goes wrong.
"""
import math  # noqa: F401  (the programs may use it)

import numpy as np
import pytest

from fuzz.inputs import make_input
from fuzz.loopcheck import check_loop_function


# -- A (fixed): a loop with a break (or a return) did not compile when an element index is
# not provably inside the array (now a checked gather/scatter, NumPy's error at run time): x[i + 1], a wrapping x[i - 1] / x[i - 2], x[i // 2],
# x[(i * 7) % n]. "cannot be compiled as a loop (LoopDependent: 2 - lv0 > 0) nor unrolled
# (a traced condition in a loop that Python runs)". The same reads compile in a loop without
# a break (or with continue), and the README lists break, return and negative indices as
# supported. (seed 1 #2, seed 2 #0/#1/#4/#14, seed 3 #21/#22/#31 ...)
def f_break_wrap_read(x):
    c1 = 0
    for i in range(len(x)):
        if x[i] > x[i - 2]:
            break
        c1 += 1
    return (c1,)


def f_break_next_read(x):
    s = 0.0
    for j in range(x.shape[0]):
        if x[j] > 0.5:
            break
        s += x[j + 1]
    return (s,)


def f_break_half_index(x):
    c = 0
    for i in range(x.shape[0]):
        if x[i // 2] > 0:
            break
        c += 1
    return (c,)


def f_return_wrap_read(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i - 1]
        if s > 2.0:
            return (s,)
    return (s,)


def test_loops_break_with_wrapping_read():
    check_loop_function(f_break_wrap_read, [make_input(np.array([1, 5, 2, 7, 3, 9, 4], dtype=np.int64))])


def test_loops_break_with_next_element_read():
    check_loop_function(f_break_next_read, [make_input(np.array([-1.0, -2.0, 3.0], dtype=np.float64))])


def test_loops_break_with_half_index():
    check_loop_function(f_break_half_index, [make_input(np.array([-1.0, -2.0, 3.0, -1.0, 5.0]))])


def test_loops_return_with_wrapping_read():
    check_loop_function(f_return_wrap_read, [make_input(np.array([-1.0, -2.0, 3.0, -1.0, 5.0]))])


# -- B (fixed): a range with a negative step read the wrong elements where the index wraps
# (x[i - 2] at i = 1, 0 must read x[-1], x[-2]): the loop variable's range was registered
# highest value first. (seed 3 #1, seed 3 #16)
def f_negstep_wrap(x):
    s1 = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        s1 += x[i - 2]
    return (s1,)


def f_negstep_wrap_recurrence(x):
    s1 = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        s1 = 0.5 * s1 + x[i] * x[i - 2]
    return (s1,)


def f_negstep_wrap_int(x):
    s2 = 0.0
    for i in range(len(x) - 1, -1, -1):
        s2 += int(x[i]) * int(x[i - 2])
    return (s2,)


def test_loops_negative_step_wrapping_read():
    check_loop_function(f_negstep_wrap, [make_input(np.array([1.0, 2.0, 3.0]))])


def test_loops_negative_step_wrapping_read_recurrence():
    check_loop_function(f_negstep_wrap_recurrence, [make_input(np.array([1.0, 1.0, 1.0]))])


def test_loops_negative_step_wrapping_read_bool():
    check_loop_function(f_negstep_wrap_int, [make_input(np.array([True, False, True]))])


# -- E (fixed, the cause of B): a range with a negative step did not see an index past the
# end: Python raises IndexError at the first iteration (x[i + 1] at i = n - 1).
# (seed 4 #57, seed 4 #75)
def f_negstep_past_end(x):
    s2 = 0.0
    for i in range(len(x) - 1, -1, -1):
        s2 += x[i] * x[i + 1]
    return (s2,)


def test_loops_negative_step_read_past_end_raises():
    check_loop_function(f_negstep_past_end, [make_input(np.array([1.0, 2.0, 3.0, 4.0]))])


# -- C (fixed, with A): a read in a branch Python does not take raised IndexError compiled: the compiled
# call raises where Python returns a value (README: "a read Python would skip ... raises
# nothing"). (seed 2 #16, seed 3 #8)
def f_untaken_branch_read(x):
    s = 0.0
    for j in range(x.shape[0]):
        if x[j] > 0.5:
            s += x[j]
        else:
            s += x[j + 1]
    return (s,)


def f_untaken_branch_loop(x):
    s = 0.0
    if x.sum() > 0.5:
        s += 1.0
    else:
        for j in range(x.shape[0]):
            s += x[j + 1]
    return (s,)


def test_loops_untaken_branch_read_does_not_raise():
    check_loop_function(f_untaken_branch_read, [make_input(np.array([1.0, 2.0, 3.0]))])


def test_loops_untaken_branch_loop_does_not_raise():
    check_loop_function(f_untaken_branch_loop, [make_input(np.array([1.0, 2.0, 3.0]))])


# -- D (fixed: a branch whose carried value's type changed is traced again with the unified
# type, as loops are; its entry value lives in the carried buffer of that type). Was:
# `s % 2` of a carried value unified to int32 or float32 (s = 0, then s += x[0] with an
# int32/float32 x, or s = s * 2.0 on one branch) fails to build: "no matching function for
# call to 'mod(int&, int64_t)'" (float&/double& for float32/float64); an int64 s builds.
# (seed 4 #12, seed 4 #97, seed 5 #54)
def f_mod_of_int32_carried(x, t):
    s2 = 0
    if x.max() > t:
        s2 += 1
    else:
        s2 += x[0] if s2 % 2 == 0 else 2
    return (s2,)


def test_loops_mod_of_int32_carried_value():     # (G fixed: returned as Python's int
    # on the side where Python kept one, frontend/pyflags.py)
    check_loop_function(f_mod_of_int32_carried, [make_input(np.array([3], dtype=np.int32)), -0.5])


def test_loops_mod_of_float32_carried_value():     # (G fixed for floats too: a Python int
    # on the side that kept one, its int flag, frontend/pyflags.py)
    check_loop_function(f_mod_of_int32_carried, [make_input(np.array([3.0], dtype=np.float32)), -0.5])


def f_mod_of_float_carried(x, t):
    s2 = 0
    if x.sum() > t:
        s2 = s2 * 2.0
    elif s2 % 2 == 0:
        s2 = s2 + 1
    return (s2,)


def test_loops_mod_of_float64_carried_value():
    check_loop_function(f_mod_of_float_carried, [make_input(np.array([1.0, 2.0])), 0.0])


# -- F (fixed): a value-dependent break or return in a loop that Python runs while tracing
# (over a tuple of constants: the fuzzer's unrolled twin) was rejected: "cannot be compiled
# as a loop (a traced condition in a loop that Python runs) nor unrolled". A tuple or list of
# numbers is now compiled as a loop over a constant array when Python cannot run it.
# (seed 3 #1 twin, seed 3 #29/#36 twins with --known)
def f_tuple_loop_break(x, t):
    s1 = 0.0
    for i in (2, 1, 0):
        if x[i] > t:
            s1 += x[i]
        else:
            break
    return (s1,)


def test_loops_break_in_tuple_loop():
    check_loop_function(f_tuple_loop_break, [make_input(np.array([1.0, -1.0, 1.0])), 0.0])


# -- H (fixed): a loop bound from a counter carried by a while loop (the fuzzer's
# while-form twin: i = -1; while i + 1 < n: i += 1; for j in range(i + 1): ...) was rejected:
# "a size computed from array values is not supported yet". Such a bound is now a data symbol
# read where the loop starts. (seed 5 #35/#49 twins)
def f_while_counter_as_bound(x, t):
    s1 = 0.0
    i = -1
    while i + 1 < x.shape[0]:
        i += 1
        for j in range(i + 1):
            s1 += x[j]
        if x[i] > t:
            return (s1,)
    return (s1,)


def test_loops_while_counter_as_range_bound():
    check_loop_function(f_while_counter_as_bound, [make_input(np.array([0.5, -1.0, 0.25, 2.0])), 1.0])


# -- G (fixed): a scalar whose Python type depends on the path (s = 0 stays a Python int when
# the loop runs 0 times, becomes an np.float32 after s += x[i]) came back with ONE dtype; its
# flags (a Python number? a Python int? frontend/pyflags.py) now give Python's type. The
# fuzzer still counts other mixed types as known-type (loopcheck.judge, ``mixed``).
def f_zero_trip_int_init(x, n):
    s = 0
    for i in range(n):
        s += x[i]
    return (s,)


def test_loops_zero_trip_keeps_python_int():
    check_loop_function(f_zero_trip_int_init, [make_input(np.array([1.0, 2.0], dtype=np.float32)),
                                               np.int64(0)])


# -- H (fixed): an if whose sides bind nothing was dropped with its condition, and with it the
# condition's index check: ``if M[j].sum() > 0: pass`` for j past M's rows returned where
# Python raises IndexError (seed 2029 #96). A construct is kept for the errors of what it
# reads, not only of its regions.
def f_s2029_96(M):
    s5 = 0.0
    for i in range(51):
        for j in range(i + 1):
            if M[j].sum() > 0:
                pass
    return (s5,)


def f_unused_if_at_top(M, k):
    if M[k].sum() > 0:
        pass
    return (1.0,)


def test_loops_s2029_96():
    check_loop_function(f_s2029_96, [make_input(np.array([0.0], dtype=np.float64).reshape((1, 1)))],
                        mixed=(0,))


@pytest.mark.parametrize("k", [0, 3, -1, -2])
def test_unused_if_keeps_its_condition_check(k):
    check_loop_function(f_unused_if_at_top, [make_input(np.zeros((1, 2))), np.int64(k)])


# -- I (fixed): a checked read whose value only fed an array nothing reads after (a dead
# local's update) was dropped with its check: ``acc[...] += a[pos:pos + c][-1]`` of an empty
# slice returned where Python raises IndexError (dataslice seed 2031 #61). Checks are kept
# for their errors wherever they are made.
def f_s2031_61(a, lo, hi, cnt):
    acc1 = a.copy()
    pos = 0
    s = np.float64(0.0)
    for i in range(len(lo)):
        acc1[hi[i]:lo[i]] += a[pos:pos + cnt[i]][-1]
    return (s,)


@pytest.mark.parametrize("c", [0, 1])
def test_loops_s2031_61(c):
    check_loop_function(f_s2031_61, [make_input(np.array([1.0])), make_input(np.array([1])),
                                     make_input(np.array([-2], dtype=np.int32)),
                                     make_input(np.array([c]))])


# -- J (fixed): a running minimum updated under a branch (``m1 = min(m1, ...)`` inside an
# ``if``) reached the independence check as the branch's result, one input where a min's
# result has two: IndexError while tracing (seed 4242 #50).
def f_s4242_50(x, t, k):
    n = x.shape[0]
    m1 = x[0]
    s2 = 0
    for i in range(k):
        if x[n - 1 - i] > t or i % 3 == 0:
            m1 = min(m1, x[x.shape[0] - 1 - i])
            continue
        s2 += (x[i] if x[i] < 0 else 2)
    return (m1, s2,)


@pytest.mark.parametrize("k", [1, 5])
def test_loops_s4242_50(k):
    check_loop_function(f_s4242_50, [make_input(np.array([3, 1, 4, 1, 5], dtype=np.int32)),
                                     0.25, np.int64(k)])


# -- K (open): a float32 scalar that a path makes float64 (``s1 += w[i] if w[i] < 0 else
# 0.25`` with float64 ``w``: the weak 0.25 keeps float32, w[i] makes it float64) is carried as
# float64 from the start, where Python rounds it to float32 until the first float64 path: a
# difference in the 8th digit (seed 777 #81). It needs a flag of the kind the value is now,
# as Python numbers have (pyflags.py), and a rounding to float32 while it holds.
def f_s777_81(x, w):
    s1 = x.dtype.type(0)
    s2 = 0.0
    for i in range(len(x) - 1, 0, -2):
        s1 += (w[i] if w[i] < 0 else 0.25)
        s2 += x[i] * 0.5 + s1 * 0.25
    return (s2,)


@pytest.mark.xfail(strict=True, reason="float32 rounding until a path makes it float64")
def test_loops_s777_81():
    check_loop_function(f_s777_81, [
        make_input(np.array([-0.3183601498603821, -2.4396634101867676, 1.5889548063278198,
                             1.131982445716858, 2.6867587566375732, 1.2484712600708008, 0.0,
                             0.9767687916755676], dtype=np.float32)),
        make_input(np.array([1.0, 1.0, 1.0, 2.0, 1.0, -3.0, -1.0, 1.0]))], mixed=(0,))
