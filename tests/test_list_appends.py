"""A list a compiled loop appends one item to in each iteration (``history.append(e)``, then
``np.array(history)``) is kept as an array of (trip count,) + item shape, filled at each
iteration's row (frontend/listbuffer.py): one build for every trip count, where the loop ran
in Python while tracing (a build per count, refused past 5000 operations). Appends of an array
a later update could change (``frames.append(u)`` then ``u[1:] += ...``), appends under a
branch on values and list uses other than np.array/len/indexing/iteration/NumPy functions are
left to Python. Compared with the plain function: values, dtypes, shapes, Python types."""
import numpy as np
import pytest

import cppcodegen


def history(x, steps):
    energy = []
    v = x.copy()
    for t in range(steps):
        v = v * 0.9 + 0.1
        energy.append(v.sum())
    return np.array(energy), len(energy)


def snapshots(u, nt):
    frames = [u.copy()]
    for n in range(nt):
        u = 0.5 * (np.roll(u, 1) + np.roll(u, -1))
        frames.append(u.copy())
    return np.asarray(frames)


def every_other_row(A):
    out = []
    for i in range(1, A.shape[0], 2):
        out.append(A[i].mean())
    return np.mean(out) + out[-1], np.sqrt(out)


def counting_down(x, n):
    xs = []
    for i in range(n, 0, -1):
        xs.append(x[i % x.shape[0]] * i)
    total = 0.0
    for v in xs:
        total += v
    return np.array(xs, dtype=np.float32), total


def same_array(u, nt):             # Python's list holds u itself nt times
    frames = []
    for n in range(nt):
        u[1:] += u[:-1] * 0.5
        frames.append(u)
    return np.array(frames)


def changed_after(x, n):           # the last item changes after the loop
    out = []
    for i in range(n):
        v = x * i
        out.append(v)
    v[0] = -1.0
    return np.array(out)


def _same(got, want):
    g = got if isinstance(got, tuple) else (got,)
    w = want if isinstance(want, tuple) else (want,)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert type(a) is type(b) or isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-6 if np.asarray(b).dtype == np.float32
                                   else 1e-12)


R = np.random.default_rng(2)


@pytest.mark.parametrize("fn,make", [
    (history, lambda n: (R.random(50), np.int64(n))),
    (snapshots, lambda n: (R.random(16), np.int64(n))),
    (every_other_row, lambda n: (R.random((2 * n + 3, 4)),)),
    (counting_down, lambda n: (R.random(7), np.int64(n + 1))),
])
def test_compiled_once_for_every_trip_count(fn, make):
    f = cppcodegen.compile(fn, fallback=False)
    for n in (6, 11, 23):
        args = make(n)
        _same(f(*args), fn(*args))
    assert len(f.recompile_reasons) <= 1        # (to symbolic sizes, once)


def test_the_loop_is_compiled():
    text = str(cppcodegen.explain(history, np.ones(50), np.int64(20)))
    loops = text[text.index("== loop IR"):text.index("== kernels")]
    assert "for lv0 in range(0, v1, 1)" in loops


@pytest.mark.parametrize("fn,args", [(same_array, lambda: (np.arange(4.0), 3)),
                                     (changed_after, lambda: (np.arange(3.0), 4))])
def test_items_a_later_update_changes_stay_python(fn, args):
    got, want = cppcodegen.compile(fn, fallback=False)(*args()), fn(*args())
    _same(got, want)


def indices_times(x, n):
    xs = []
    for i in range(n):
        xs.append(x[i] * i)
    return np.array(xs), len(xs)


def test_no_trip_gives_numpys_empty_array():
    """``np.array([])`` is float64 whatever the items would have been: a call of no trip is
    guarded out of the int32 build and gets its own."""
    f = cppcodegen.compile(indices_times, fallback=False)
    x = np.arange(10, dtype=np.int32)
    for n in (5, 7, 0, 3):
        _same(f(x, np.int64(n)), indices_times(x, np.int64(n)))


def multiples(n, d):
    qs = []
    for k in range(-3, n):
        qs.append(k // d)
    return qs


def doubled(x):
    out = [0.5]
    for v in x:
        out.append(v * 2)
    return out, len(out)


def rows_of(u, steps):
    frames = []
    for _ in range(steps):
        u = u * 0.5
        frames.append(u.copy())
    return frames


def nested(A):
    out = []
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out.append(A[i, j] * 2)
    return out


@pytest.mark.parametrize("fn,arg_sets", [
    (multiples, [(4, 2), (6, -3)]),
    (nested, [(np.arange(6.0).reshape(2, 3),)]),    # (its outer loop unrolls: it raised
                                                    # about a sympy attribute of the list)
    (doubled, [(np.arange(3.0),), (np.arange(5.0),)]),
    (rows_of, [(np.ones(3), 4)]),
])
@pytest.mark.parametrize("backend", ["cpp", "check"])
def test_a_returned_list_is_a_list(fn, arg_sets, backend):
    """A list a compiled loop appended to, returned: a Python list of its items (Python ints
    where Python appended ints, NumPy scalars or arrays where it appended those); it raised
    'returned a ListBuffer' (found by a new user's probe)."""
    compiled = cppcodegen.compile(fn, fallback=False, backend=backend)
    for args in arg_sets:
        want, got = fn(*args), compiled(*args)
        want_list = want[0] if isinstance(want, tuple) else want
        got_list = got[0] if isinstance(got, tuple) else got
        assert type(got_list) is list and len(got_list) == len(want_list)
        for g, w in zip(got_list, want_list):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)
        if isinstance(want, tuple):
            assert got[1:] == want[1:]


def _history_of_updates(x, steps):
    hist = []
    for t in range(steps):
        x[0] += 1.0
        x[1:] *= 2.0
        hist.append(x.sum())
    return hist


@pytest.mark.parametrize("steps", [3, 1, 0])
def test_updates_in_place_run_once_per_iteration(steps):
    """A loop that appends to a list and updates an array element or slice in place: the
    update runs once per iteration (the trace that found the list ran it once more, and
    the argument changed even for a loop of no trip; found by a new user's probe)."""
    a, b = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 2.0])
    want, got = _history_of_updates(a, steps), cppcodegen.compile(_history_of_updates)(b, steps)
    assert [float(v) for v in got] == [float(v) for v in want]
    np.testing.assert_array_equal(b, a)
