"""An index out of range is NumPy's IndexError where Python would raise it, and only there:
a read under a branch on array values (``if x[4] >= 3: s += x[5]``) or in the arm of a
conditional expression that is not taken raises nothing, and one that runs names the user's
line (also for an index checked when the compiled loop runs). Compared with the plain Python
function."""
import inspect

import numpy as np
import pytest

import cppcodegen


def ifexp_in_tuple_loop(x):
    s = 0
    for i in (0, 1, 2, 3, 4):
        s += abs(x[i] - x[i + 1]) if x[i] >= 3 else -1
    return s


def branch_constant_index(x):
    s = 0
    if x[4] >= 3:
        s += x[5]
    return s


def branch_loop_index(x):
    s = 0
    for i in range(x.shape[0]):
        if x[i] >= 3:
            s += x[i + 1]
    return s


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


CASES = [(ifexp_in_tuple_loop, "x[i + 1]"), (branch_constant_index, "x[5]"),
         (branch_loop_index, "x[i + 1]")]


@pytest.mark.parametrize("fn,text", CASES, ids=[c[0].__name__ for c in CASES])
def test_index_error_only_where_python_raises(fn, text):
    comp = cppcodegen.compile(fn)
    quiet = np.array([5, 4, 3, 1, 0])           # the last element's read is not taken
    assert comp(quiet.copy()) == fn(quiet.copy())
    loud = np.array([5, 4, 3, 1, 4])
    with pytest.raises(IndexError, match="out of bounds"):
        fn(loud.copy())
    with pytest.raises(IndexError, match=f"index 5 is out of bounds for axis 0 with size 5 "
                                         f".at .*test_index_errors.py:{_line(fn, text)}"):
        comp(loud.copy())


def _sieve(n):
    flags = np.ones(n + 1, dtype=np.bool_)
    flags[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if flags[i]:
            for j in range(i * i, n + 1, i):
                flags[j] = False
    return flags


def _past_the_end(x, n):
    s = 0.0
    for i in range(n, n + 3):
        s += x[i]
    return s


def test_an_index_past_the_end_in_every_iteration_of_a_loop_that_may_not_run():
    """``flags[i]``, i >= 2, of a 1-element array (a sieve at n = 0): out of range in every
    iteration of a loop that runs none this call. The call is Python's (the loop's bound comes
    from a float, so it is not unrolled), and the reason names the IndexError (its message
    failed on the loop's index: an internal sympy TypeError); where the loop runs, NumPy's
    IndexError when it runs."""
    import warnings
    f = cppcodegen.compile(_sieve, options={"fallback": True})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for n in (100, 0, 1, 37, 0):
            np.testing.assert_array_equal(f(np.int64(n)), _sieve(np.int64(n)))
    assert not any("Cannot convert" in str(w.message) for w in seen)
    g = cppcodegen.compile(_past_the_end)
    x = np.arange(4.0)
    assert g(x, 1) == _past_the_end(x, 1)
    for n in (3, 7):
        with pytest.raises(IndexError):
            g(x, n)


SOURCE = '''
import numpy as np

def pick(x, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s += x[idx[i]]
    return s, x[x > 0].min()
'''


def _load(path, text, name):
    import importlib.util
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_errors_name_the_lines_where_they_are_now_after_a_cache_hit(tmp_path):
    """The graph cache's key leaves the source lines out (a function moved in its file
    reuses its kernel); its errors still name the lines where the statements are now."""
    cache = tmp_path / "cache"
    x = np.array([1.0, -2.0, 3.0])
    for blank, name in ((0, "before_edit"), (7, "after_edit")):
        path = tmp_path / f"{name}.py"
        mod = _load(path, "\n" * blank + SOURCE, name)
        f = cppcodegen.compile(mod.pick, options={"cache_dir": str(cache)}, fallback=False)
        assert f(x, np.array([0, 2])) == (4.0, 1.0)
        with pytest.raises(IndexError, match=rf"{path}:{blank + 7}\b"):
            f(x, np.array([0, 5]))
        with pytest.raises(ValueError, match=rf"{path}:{blank + 8}\b"):
            f(-x * x, np.array([0]))
