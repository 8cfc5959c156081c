"""Loops over constant numbers that Python cannot run while tracing (a ``break`` or
``any(...)`` on traced values inside): ``for w in (0.5, 0.25)`` and a table of offsets,
``for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1))``, compiled as loops over a constant
array (its rows). The items are Python numbers there, as in Python: a float32 value times a
weight stays float32 (it was promoted to float64), and a table of tuples was refused."""
import numpy as np
import pytest

import cppcodegen


def weighted_until_positive(x):
    s = 0.0
    for w in (0.5, 0.25, 0.125):
        if x[0] > 0:
            break
        s = s + x[1] * w
    return s


def burning_neighbours(grid):
    n, m = grid.shape
    out = np.zeros((n, m), dtype=np.bool_)
    for i in range(n):
        for j in range(m):
            out[i, j] = any(grid[(i + di) % n, (j + dj) % m] == 2
                            for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)))
    return out


def first_free_step(grid, i, j):
    for di, dj, cost in [(0, 1, 1.5), (1, 0, 2.5), (0, -1, 3.5)]:
        if grid[i + di, j + dj] == 0:
            return cost
    return -1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_constant_numbers_stay_python_numbers(dtype):
    f = cppcodegen.compile(weighted_until_positive, fallback=False)
    for x in (np.array([-1.0, 3.0], dtype), np.array([1.0, 3.0], dtype)):
        got, want = f(x), weighted_until_positive(x)
        assert type(got) is type(want) and got == want


def test_a_table_of_offsets_is_a_loop_over_its_rows():
    g = np.random.default_rng(0).integers(0, 3, (9, 7))
    np.testing.assert_array_equal(cppcodegen.compile(burning_neighbours, fallback=False)(g),
                                  burning_neighbours(g))
    f = cppcodegen.compile(first_free_step, fallback=False)
    for i, j in ((1, 1), (3, 4), (7, 5)):
        assert f(g, i, j) == first_free_step(g, i, j)
