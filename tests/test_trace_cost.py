"""What a trace costs: loops nested deep are traced a bounded number of times, and what the
shape reasoning decided is asked once.

A loop body is traced until the types of the values it carries settle; each trace of an
outer body traces the loops inside it again. Three causes made that 3^depth: a carried
NumPy scalar first taken for an array updated in place (a second trace to learn it is
rebound), new induction-variable symbols in every trace (so nothing decided before was
recognised), and the same bounds questions answered again. These tests pin the count and
the answers, not a time.
"""
import numpy as np
import pytest
import cppcodegen
from cppcodegen.ir import shapes as sh

def test_six_constructs_deep_trace_a_bounded_number_of_regions(monkeypatch):
    """The new-user Life program (4 loops and 2 branches deep): its regions (each trace of
    each construct's body or side) were traced 1915 times, then 903, and 555 now that a
    construct traced again carries from its first attempt the arrays it was found updating
    (``carried.SEEN_UPDATES``); the innermost body 630 -> 189 times."""
    from cppcodegen.frontend import carried
    from test_new_user_programs import life_periodic_loops
    traces = [0]
    trace = carried.Carried._trace

    def counted(self, *args, **kwargs):
        traces[0] += 1
        return trace(self, *args, **kwargs)
    monkeypatch.setattr(carried.Carried, "_trace", counted)
    g = (np.random.default_rng(1).random((12, 10)) < 0.4).astype(np.uint8)
    got = cppcodegen.compile(life_periodic_loops, options={"fallback": False})(g.copy(), 3)
    traced = traces[0]
    want = life_periodic_loops(g.copy(), 3)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert traced <= 600, traced


TRACES = [0]


def seen(x):
    """Counts how often the tracer runs the statement that calls it."""
    TRACES[0] += 1
    return x


def accumulate_rows(a):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        s = 0
        for j in range(a.shape[1]):
            if a[i, j] > 0:
                s += seen(a[i, j])
        out[i] = s
    return out


def test_a_number_accumulated_in_a_branch_is_carried_by_value_from_the_first_trace():
    a = np.random.default_rng(2).standard_normal((7, 9))
    TRACES[0] = 0
    got = cppcodegen.compile(accumulate_rows)(a)
    traced = TRACES[0]
    np.testing.assert_allclose(got, accumulate_rows(a), rtol=1e-12)
    assert traced <= 12, traced       # 21 when `s` was first taken for an array


def _env():
    n = sh.size_symbol("n0")
    env = sh.ShapeEnv({n: 6})
    return env, n


def test_a_decision_asked_again_replays_its_answer_and_guards():
    env, n = _env()
    i = sh.loop_symbol(0)
    env.loops[i] = (0, n - 3)
    with sh.active(env):
        assert sh.less(i + 2, n) is True       # i <= n - 3 < n - 2 ... for every i
        guards = list(env.guards)
        assert sh.less(i + 2, n) is True
        assert env.guards == guards            # replayed, not recorded twice
        assert env.decided                     # remembered
        with pytest.raises(sh.LoopDependent):
            sh.less(i, 2)                      # true for i < 2 only
        with pytest.raises(sh.LoopDependent):
            sh.less(i, 2)                      # and again, from the memo


def test_the_memo_tells_loop_ranges_apart():
    env, n = _env()
    i = sh.loop_symbol(0)
    with sh.active(env):
        env.loops[i] = (0, n - 1)
        assert sh.less(i, n) is True
        env.loops[i] = (0, n)                  # the same question over a longer range
        with pytest.raises(sh.LoopDependent):
            sh.less(i, n)


def test_a_relation_of_data_symbols_is_not_remembered():
    env, n = _env()
    d = sh.data_symbol(0, nonnegative=True)
    env.data[d] = None
    with sh.active(env):
        with pytest.raises(sh.LoopDependent):
            sh.less(d, n)                      # nothing is known of a value read from data
        assert not env.decided
