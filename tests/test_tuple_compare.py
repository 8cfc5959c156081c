"""A tuple or list display compared with ``==`` / ``!=`` when its items are traced: a BFS's
``r, c = queue[head]; if (r, c) == goal: break``. Python compares the two tuples item by item,
asking the truth of each item's ``==``; tracing used to raise DataDependentError there (the
truth of a traced item). Each case is compared with the plain Python function."""
import numpy as np
import pytest

import cppcodegen


def find(queue, goal):
    for head in range(queue.shape[0]):
        r, c = queue[head]
        if (r, c) == goal:
            return head
    return -1


def count_moves(queue, goal):
    hits = 0
    for head in range(queue.shape[0]):
        r, c = queue[head]
        if [r, c] != list(goal) and (c, r) != (r, c):   # a list display, a symmetric pair
            hits += 1
        if goal == (r, c):
            break
    return hits


def shorter(queue, goal):
    n = 0
    for head in range(queue.shape[0]):
        r, c = queue[head]
        if (r, c, 0) == goal or (r, c) == [r, c]:        # other lengths, list vs tuple
            n += 1
    return n


def same_object(x):
    v = x[0]
    return (v, x[1]) == (v, x[1])     # (NaN: the same object is equal in Python)


QUEUE = np.array([[0, 0], [0, 1], [1, 1], [2, 1], [2, 2]], dtype=np.int32)


@pytest.mark.parametrize("goal", [(1, 1), (2, 2), (5, 5), (0, 0)])
@pytest.mark.parametrize("fn", [find, count_moves, shorter])
def test_tuple_equality_of_traced_items(fn, goal):
    got = cppcodegen.compile(fn)(QUEUE, goal)
    assert got == fn(QUEUE, goal)
    assert type(got) in (int, np.int64)


def test_float_items_compare_by_value():
    def near(points, target):
        n = 0
        for i in range(points.shape[0]):
            if (points[i, 0], points[i, 1]) != target:
                n += 1
        return n
    p = np.array([[0.5, 1.0], [0.5, 1.5], [np.nan, 1.0], [0.5, 1.0]])
    for target in [(0.5, 1.0), (np.nan, 1.0), (0.0, 0.0)]:
        assert cppcodegen.compile(near)(p, target) == near(p, target)


def test_a_tuple_of_arrays_still_asks_an_arrays_truth():
    def eq_arrays(a, b):
        return (a, b) == (b, a)
    a = np.arange(3.0)
    with pytest.raises(ValueError):
        eq_arrays(a, a + 1)
    with pytest.raises(Exception, match="truth|ambiguous|array"):
        cppcodegen.compile(eq_arrays)(a, a + 1)


def test_same_object_on_both_sides():
    x = np.array([np.nan, 2.0])
    assert bool(cppcodegen.compile(same_object)(x)) == same_object(x)
