"""Lists a while loop uses as a stack or a queue (frontend/worklists.py): flood fill and
depth-first search with ``stack.pop()``, breadth-first search with a head index or
``pop(0)``, quicksort with a stack of (lo, hi) tuples, component labelling with a stack made
inside nested loops. Each is compared with the plain function; an empty pop raises Python's
IndexError, a list that outgrows its room runs as Python, an item of another dtype is
refused by name."""
from __future__ import annotations

import heapq
import warnings

import numpy as np
import pytest

import cppcodegen
from cppcodegen.frontend.worklists import LEAST_ROOM
from helpers import check_against_numpy


def flood(img, si, sj):
    h, w = img.shape
    out = np.zeros((h, w), np.uint8)
    stack = [(si, sj)]
    target = img[si, sj]
    while stack:
        i, j = stack.pop()
        if i < 0 or i >= h or j < 0 or j >= w:
            continue
        if out[i, j] or img[i, j] != target:
            continue
        out[i, j] = 1
        stack.append((i + 1, j))
        stack.append((i - 1, j))
        stack.append((i, j + 1))
        stack.append((i, j - 1))
    return out


def reach(adj, start):
    seen = np.zeros(adj.shape[0], dtype=np.bool_)
    seen[start] = True
    stack = [start]
    while stack:
        u = stack.pop()
        for v in range(adj.shape[0]):
            if adj[u, v] and not seen[v]:
                seen[v] = True
                stack.append(v)
    return seen


def bfs_order(nbr, start):
    seen = np.zeros(nbr.shape[0], dtype=np.bool_)
    seen[start] = True
    order = [start]
    head = 0
    while head < len(order):
        u = order[head]
        head += 1
        for k in range(nbr.shape[1]):
            v = nbr[u, k]
            if not seen[v]:
                seen[v] = True
                order.append(v)
    return np.array(order)


def bfs_depth(adj, start):
    depth = np.full(adj.shape[0], -1)
    depth[start] = 0
    queue = [start]
    while queue:
        u = queue.pop(0)
        for v in range(adj.shape[0]):
            if adj[u, v] and depth[v] < 0:
                depth[v] = depth[u] + 1
                queue.append(v)
    return depth


def quicksort(a):
    a = a.copy()
    stack = [(0, a.shape[0] - 1)]
    while len(stack) > 0:
        lo, hi = stack.pop()
        if lo >= hi:
            continue
        pivot = a[hi]
        i = lo
        for j in range(lo, hi):
            if a[j] < pivot:
                a[i], a[j] = a[j], a[i]
                i += 1
        a[i], a[hi] = a[hi], a[i]
        stack.append((lo, i - 1))
        stack.append((i + 1, hi))
    return a


def label(mask):
    h, w = mask.shape
    labels = np.zeros((h, w), dtype=np.int32)
    cur = 0
    for i in range(h):
        for j in range(w):
            if mask[i, j] and labels[i, j] == 0:
                cur += 1
                labels[i, j] = cur
                stack = [i * w + j]
                while len(stack) > 0:
                    p = stack.pop()
                    r, c = p // w, p % w
                    if r > 0 and mask[r - 1, c] and labels[r - 1, c] == 0:
                        labels[r - 1, c] = cur
                        stack.append(p - w)
                    if r < h - 1 and mask[r + 1, c] and labels[r + 1, c] == 0:
                        labels[r + 1, c] = cur
                        stack.append(p + w)
                    if c > 0 and mask[r, c - 1] and labels[r, c - 1] == 0:
                        labels[r, c - 1] = cur
                        stack.append(p - 1)
                    if c < w - 1 and mask[r, c + 1] and labels[r, c + 1] == 0:
                        labels[r, c + 1] = cur
                        stack.append(p + 1)
    return labels, cur


def peek_and_index(x):
    stack = [0.0]
    total = 0.0
    k = 0
    while k < x.shape[0]:
        if x[k] > stack[-1]:
            stack.append(x[k])
        else:
            total += stack.pop() if len(stack) > 1 else stack[0]
        k += 1
    return total, len(stack)


def pops_too_many(x):
    stack = [1, 2]
    s = 0
    while x[s] > 0:
        s += stack.pop()
    return s


def grows(n):
    stack = [0]
    while len(stack) < n:
        stack.append(len(stack))
    return np.array(stack).sum()


def wrong_item(x):
    stack = [0]
    k = 0
    v = 0
    while stack and x[k] > 0.0:
        v = stack.pop()
        stack.append(x[k])
        k += 1
    return v


R = np.random.default_rng(31)
IMG = (R.random((40, 30)) > 0.35).astype(np.uint8)
ADJ = R.random((60, 60)) < 0.05


@pytest.mark.parametrize("fn, args", [
    (flood, (IMG, 3, 4)), (flood, (IMG, 0, 0)),
    (reach, (ADJ, 0)), (reach, (ADJ, 7)),
    (bfs_order, (R.integers(0, 50, (50, 3)), 0)),
    (bfs_depth, (ADJ, 3)),
    (quicksort, (R.standard_normal(300),)), (quicksort, (np.arange(40.0)[::-1].copy(),)),
    (label, (IMG > 0,)),
    (peek_and_index, (R.random(50),)),
])
def test_stacks_and_queues_in_while_loops(fn, args):
    check_against_numpy(fn, *args)


@pytest.mark.parametrize("backend", ["check", "numpy"])
def test_a_stack_in_check_mode(backend):
    """The NumPy reference runs the same loops (check mode compares every buffer)."""
    for fn, args in ((reach, (ADJ[:20, :20], 0)), (bfs_order, (np.arange(30).reshape(10, 3) % 10, 0))):
        np.testing.assert_array_equal(cppcodegen.compile(fn, backend=backend)(*args), fn(*args))


def test_an_empty_pop_raises_pythons_index_error():
    f = cppcodegen.compile(pops_too_many)
    assert f(np.array([1, 1, 0])) == pops_too_many(np.array([1, 1, 0]))
    with pytest.raises(IndexError, match="pop from empty list"):
        f(np.array([1, 1, 1, 1]))


def test_a_list_that_outgrows_its_room_runs_as_python():
    f = cppcodegen.compile(grows)
    assert f(100) == grows(100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        n = LEAST_ROOM + 100        # (no array argument: the least room)
        assert f(n) == grows(n)


def test_an_item_of_another_dtype_is_refused_by_name():
    with pytest.raises(cppcodegen.UnsupportedError, match="dtype float64 is appended to the list 'stack'"):
        cppcodegen.compile(wrong_item, options={"fallback": False})(np.array([0.5, 1.5, 2.5, -1.0]))


def dijkstra(W, s):
    dist = np.full(W.shape[0], np.inf)
    dist[s] = 0.0
    heap = [(0.0, s)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for v in range(W.shape[0]):
            if W[u, v] > 0:
                nd = d + W[u, v]
                if nd < dist[v]:
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
    return dist


def heap_order(x):
    h = [x[0]]
    for k in range(1, x.shape[0]):
        heapq.heappush(h, x[k])
    out = np.empty(x.shape[0])
    for k in range(x.shape[0]):
        out[k] = heapq.heappop(h)
    return out


def ties(keys, vals):
    """Equal keys: the second field decides, as Python compares tuples; a heap's pops come
    in CPython's order."""
    h = [(keys[0], vals[0])]
    for k in range(1, keys.shape[0]):
        heapq.heappush(h, (keys[k], vals[k]))
    out = np.empty(keys.shape[0], dtype=np.int64)
    for k in range(keys.shape[0]):
        key, val = heapq.heappop(h)
        out[k] = key * 1000 + val
    return out


def pops_an_empty_heap(x):
    h = [1.0]
    s = 0.0
    k = 0
    while x[k] > 0:
        s += heapq.heappop(h)
        k += 1
    return s


@pytest.mark.parametrize("fn, args", [
    (dijkstra, (np.where(R.random((40, 40)) < 0.2, R.random((40, 40)) * 10, 0.0), 0)),
    (dijkstra, (np.round(np.where(R.random((30, 30)) < 0.3, R.random((30, 30)) * 4, 0.0)), 5)),
    (heap_order, (R.standard_normal(200),)),
    (ties, (R.integers(0, 5, 60), R.integers(0, 100, 60))),
])
def test_heapq_on_a_list_kept_as_arrays(fn, args):
    check_against_numpy(fn, *args)


def test_heappop_of_an_empty_heap_raises_as_cpython():
    f = cppcodegen.compile(pops_an_empty_heap)
    assert f(np.array([1, 0])) == 1.0
    with pytest.raises(IndexError, match="index out of range"):
        f(np.array([1, 1, 0]))


def test_the_room_follows_the_argument_sizes():
    """A larger image on a later call (sizes read at each call): a larger room, no
    recompile per size and no run as Python."""
    f = cppcodegen.compile(flood)
    for n in (20, 33, 64, 90):
        img = np.ones((n, n), np.uint8)
        np.testing.assert_array_equal(f(img, 0, 0), flood(img, 0, 0))
    assert len(f.recompile_reasons) <= 1, f.recompile_reasons


def weak_counts(x):
    st = [3]
    s = x[0]
    for i in range(1, x.shape[0]):
        c = st.pop()            # a Python int: float32 * int stays float32 (NEP 50)
        s = s + x[i] * c
        st.append(c)
    return s


def float32_then_python_float(x):
    st = [x[0]]
    tot = 0.0
    k = 1
    while x[k] > 0.0:
        st.append(float(x[k]) / 3.0)
        tot += st.pop()
        k += 1
    return tot


def drained(x):
    q = [0]
    while q:
        u = q.pop(0)
        if u < x.shape[0] and x[u] > 0:
            q.append(u + 1)
    return np.array(q)


def has_cycle(indptr, indices, s):
    n = indptr.shape[0] - 1
    color = np.zeros(n, np.int8)
    stack = [(s, indptr[s])]
    color[s] = 1
    while stack:
        u, k = stack[-1]
        if k < indptr[u + 1]:
            stack[-1] = (u, k + 1)
            v = indices[k]
            if color[v] == 1:
                return True
            if color[v] == 0:
                color[v] = 1
                stack.append((v, indptr[v]))
        else:
            color[u] = 2
            stack.pop()
    return False


def test_python_ints_taken_off_a_list_stay_python_ints():
    got, want = check_against_numpy(weak_counts, R.random(200).astype(np.float32))
    assert np.asarray(got).dtype == np.float32


def test_an_item_a_field_cannot_hold_exactly_is_refused():
    """A Python float appended to a list of float32 items: Python keeps it a float64."""
    x = np.array([0.5, 0.25, 0.125, -1.0], np.float32)
    with pytest.raises(cppcodegen.UnsupportedError, match="float64 is appended to the list 'st'"):
        cppcodegen.compile(float32_then_python_float, options={"fallback": False})(x)


def test_a_queue_left_empty_is_numpys_float64_empty_array():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cppcodegen.FallbackWarning)
        check_against_numpy(drained, np.ones(5))
        check_against_numpy(drained, np.array([1.0, 1.0, -1.0, 1.0]))


@pytest.mark.parametrize("edges", [[1, 2, 0], [1, 2, 3], [1, 3, 3, 1]])
def test_the_top_of_a_stack_assigned(edges):
    """``stack[-1] = (u, k + 1)``: an iterative DFS keeping each node's next edge."""
    n = len(edges)
    indptr = np.arange(n + 1, dtype=np.int64)
    indices = np.array(edges, dtype=np.int64) % n
    assert cppcodegen.compile(has_cycle)(indptr, indices, 0) == has_cycle(indptr, indices, 0)


def max_depth(codes):
    stack = []
    depth = 0
    for k in range(codes.shape[0]):
        if codes[k] == 0:
            stack.append(k)
        elif len(stack) > 0:
            stack.pop()
        depth = max(depth, len(stack))
    return depth


def dfs_order(A, s):
    n = A.shape[0]
    seen = np.zeros(n, np.bool_)
    order = []
    stack = [s]
    while stack:
        u = stack.pop()
        if seen[u]:
            continue
        seen[u] = True
        order.append(u)
        for v in range(n):
            if A[u, v] and not seen[v]:
                stack.append(v)
    return np.array(order)


@pytest.mark.parametrize("fn, args", [
    (max_depth, (R.integers(0, 2, 300),)),
    (dfs_order, (ADJ, 0)),
])
def test_lists_empty_when_the_loop_starts(fn, args):
    """``stack = []``: the first append says what its items are; the loop is traced again
    with the list kept as arrays of that kind."""
    check_against_numpy(fn, *args)


def depth_marks(codes):
    """An empty stack popped in a for loop that also updates an array made before it."""
    marks = np.zeros(codes.shape[0], np.int64)
    stack = []
    for k in range(codes.shape[0]):
        if codes[k] == 0:
            stack.append(k)
        elif len(stack) > 0:
            marks[stack.pop()] = k
    return marks


def test_an_empty_stack_in_a_loop_that_updates_an_array():
    check_against_numpy(depth_marks, R.integers(0, 2, 200))


def kahn(indptr, indices, indeg):
    """Kahn's order: the queue filled under a branch by a for loop, drained by a while."""
    indeg = indeg.copy()
    queue = []
    for i in range(indeg.shape[0]):
        if indeg[i] == 0:
            queue.append(i)
    order = []
    while queue:
        u = queue.pop(0)
        order.append(u)
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    return np.array(order)


def kahn_comprehension(indptr, indices, indeg):
    indeg = indeg.copy()
    queue = [i for i in range(indeg.shape[0]) if indeg[i] == 0]
    done = 0
    while queue:
        u = queue.pop()
        done += 1
        for k in range(indptr[u], indptr[u + 1]):
            indeg[indices[k]] -= 1
            if indeg[indices[k]] == 0:
                queue.append(indices[k])
    return done


def drain_all(x):
    """A list with an item per iteration (and one before), then popped from both ends."""
    items = [-1.0]
    for i in range(x.shape[0]):
        items.append(x[i] * 2.0)
    total = 0.0
    while len(items) > 1:
        total += items.pop() - items.pop(0)
    return total, len(items)


def _dag(n, p, seed):
    r = np.random.default_rng(seed)
    d = np.triu(r.random((n, n)) < p, 1)
    indptr = np.r_[0, np.cumsum(d.sum(1))].astype(np.int64)
    return indptr, np.nonzero(d)[1].astype(np.int64), d.sum(0).astype(np.int64)


@pytest.mark.parametrize("fn, args", [
    (kahn, _dag(60, 0.08, 1)), (kahn, _dag(1, 0.5, 2)),
    (kahn_comprehension, _dag(80, 0.05, 3)),
    (drain_all, (R.random(31),)), (drain_all, (R.random(0),)),
])
def test_a_list_an_earlier_loop_filled_drained_by_a_while(fn, args):
    """The list the first loop filled (one item per trip, or counted under a branch) is
    kept as arrays for the while loop that pops it and appends to it."""
    check_against_numpy(fn, *args)


def scanline_fill(img, sy, sx):
    """Span flood fill: scan left, then push the marked rows above and below by two counted
    while loops (each rewritten as a for loop with an else clause: their flags must not
    clash with the branches' own names)."""
    out = img.copy()
    h, w = out.shape
    st = [(sy, sx)]
    while st:
        y, x = st.pop()
        if out[y, x] != 1:
            continue
        lx = x
        while lx > 0 and out[y, lx - 1] == 1:
            lx -= 1
        rx = x
        while rx + 1 < w and out[y, rx + 1] == 1:
            rx += 1
        out[y, lx:rx + 1] = 3
        yy = y - 1
        if yy >= 0:
            k = lx
            while k <= rx:
                if out[yy, k] == 1:
                    st.append((yy, k))
                k += 1
        yy = y + 1
        if yy < h:
            k = lx
            while k <= rx:
                if out[yy, k] == 1:
                    st.append((yy, k))
                k += 1
    return out


@pytest.mark.parametrize("start", [(0, 0), (5, 7), (39, 29)])
def test_a_scanline_fill_with_two_counted_push_loops(start):
    img = (R.random((40, 30)) > 0.3).astype(np.int16)
    img[start] = 1
    check_against_numpy(scanline_fill, img, *start)


def _cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def monotone_hull(pts):
    """Andrew's monotone chain: two stacks that start empty, ``len(stack) >= 2`` in the
    while condition, then ``lower[:-1] + upper[:-1]`` joined after the loops."""
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    p = pts[order]
    lower = []
    for i in range(len(p)):
        while len(lower) >= 2 and _cross(p[lower[-2]], p[lower[-1]], p[i]) <= 0:
            lower.pop()
        lower.append(i)
    upper = []
    for i in range(len(p) - 1, -1, -1):
        while len(upper) >= 2 and _cross(p[upper[-2]], p[upper[-1]], p[i]) <= 0:
            upper.pop()
        upper.append(i)
    idx = lower[:-1] + upper[:-1]
    return p[np.array(idx)]


def kept_and_joined(x):
    st = []
    for i in range(x.shape[0]):
        if len(st) > 0 and x[st[-1]] > x[i]:
            st.pop()
        st.append(i)
    both = [-1] + st[1:] + st
    return np.array(both), len(st[:-2])


@pytest.mark.parametrize("fn, args", [
    (monotone_hull, (R.random((300, 2)),)),
    (monotone_hull, (np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]),)),
    (kept_and_joined, (R.random(40),)),
    (kept_and_joined, (np.arange(5.0),)),
])
def test_stacks_that_start_empty_sliced_and_joined_after_the_loop(fn, args):
    check_against_numpy(fn, *args)
