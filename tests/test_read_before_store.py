"""A value read from an array before the function stores into that array keeps the value it
had when it was read, as in Python, wherever the compiler puts the store: a scalar carried to
the next iteration (``nxt = a[x]; a[x] = -1; x = nxt``: union-find's path compression, a
linked list reversed in place), the two reads of a tuple swap in a ``while`` loop, a value
saved before an inner loop that shifts the array (an in-place permutation). Each program is
compared with the plain Python function: the result and the arguments it updates."""
import numpy as np
import pytest

import cppcodegen


def follow_and_mark(a, x):
    for _ in range(3):
        nxt = a[x]
        a[x] = -1
        x = nxt
    return x


def compress_path(parent, x, root):
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return parent


def reverse_list(nxt, head):
    prev = -1
    cur = head
    while cur != -1:
        after = nxt[cur]
        nxt[cur] = prev
        prev = cur
        cur = after
    return prev


def union_find(edges_a, edges_b, n):
    parent = np.arange(n)
    for e in range(edges_a.shape[0]):
        ra = edges_a[e]
        while parent[ra] != ra:
            ra = parent[ra]
        rb = edges_b[e]
        while parent[rb] != rb:
            rb = parent[rb]
        x = edges_a[e]          # compress both paths to the root kept
        while parent[x] != x:
            up = parent[x]
            parent[x] = rb
            x = up
        if ra != rb:
            parent[ra] = rb
    return parent


def swap_while(a):
    i = 0
    j = a.shape[0] - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        i += 1
        j -= 1
    return a


def sift_down_sort(a):          # heap sort: tuple swaps in while loops
    n = a.shape[0]
    for start in range(n // 2 - 1, -1, -1):
        root = start
        while 2 * root + 1 < n:
            child = 2 * root + 1
            if child + 1 < n and a[child] < a[child + 1]:
                child += 1
            if a[root] < a[child]:
                a[root], a[child] = a[child], a[root]
                root = child
            else:
                break
    end = n - 1
    while end > 0:
        a[0], a[end] = a[end], a[0]
        root = 0
        while 2 * root + 1 < end:
            child = 2 * root + 1
            if child + 1 < end and a[child] < a[child + 1]:
                child += 1
            if a[root] < a[child]:
                a[root], a[child] = a[child], a[root]
                root = child
            else:
                break
        end -= 1
    return a


def rotate_first_in_branch(a):
    for i in range(2):
        if i == 0:
            t = a[0]
            j = 0
            while True:
                if j == a.shape[0] - 1:
                    a[j] = t
                    break
                a[j] = a[j + 1]
                j += 1
    return a


def apply_permutation(a, perm):
    done = np.zeros(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        if done[i]:
            continue
        t = a[i]
        j = i
        while True:
            done[j] = True
            k = perm[j]
            if k == i:
                a[j] = t
                break
            a[j] = a[k]
            j = k
    return a


def _linked_list(n, rng):
    order = rng.permutation(n)
    nxt = np.full(n, -1, dtype=np.int64)
    nxt[order[:-1]] = order[1:]
    return nxt, int(order[0])


def _cases():
    rng = np.random.default_rng(5)
    nxt, head = _linked_list(300, rng)
    ea, eb = rng.integers(0, 200, 400), rng.integers(0, 200, 400)
    chain = np.array([0, 0, 1, 2, 3, 4, 5, 6])
    return [
        (follow_and_mark, (np.array([5, 2, 3, 1, 0, 4]), 1)),
        (compress_path, (chain.copy(), 7, 0)),
        (compress_path, (np.array([0, 3, 0, 2]), 1, 0)),
        (reverse_list, (nxt, head)),
        (union_find, (ea, eb, 200)),
        (swap_while, (np.arange(7),)),
        (swap_while, (rng.standard_normal(10),)),
        (sift_down_sort, (rng.integers(-50, 50, 257),)),
        (rotate_first_in_branch, (np.array([0, 10, 20]),)),
        (apply_permutation, (rng.standard_normal(50), rng.permutation(50))),
    ]


@pytest.mark.parametrize("fn,args", _cases(),
                         ids=lambda v: v.__name__ if callable(v) else "")
def test_matches_python(fn, args):
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = cppcodegen.compile(fn, fallback=False)(*got_args)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def test_swap_in_while_stores_in_place():
    """The two stores of ``a[i], a[j] = a[j], a[i]`` go into the array where it is (the
    argument's own memory): no copy of the whole array per iteration, nor in and out."""
    ex = cppcodegen.explain(swap_while, np.arange(64.0))
    body = str(ex).split("== loop IR ==")[1].split("== kernels")[0]
    assert body.count("scatter in0") == 2
    assert "over [64]" not in body


def finite_differences(w, X):
    s = 0.0
    for _ in range(3):
        old = w[0]
        w[0] = old + 1.0
        fp = np.sum(X @ w)              # a reduction of a product, read before the next store
        w[0] = old - 1.0
        fm = np.sum(X @ w)
        w[0] = old
        s += fp - fm
    return s


def test_reductions_read_before_a_store_in_place():
    rng = np.random.default_rng(2)
    w, X = rng.standard_normal(5), rng.standard_normal((7, 5))
    want_w, got_w = w.copy(), w.copy()
    want = finite_differences(want_w, X)
    got = cppcodegen.compile(finite_differences, fallback=False)(got_w, X)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(got_w, want_w)


def leapfrog(x, v, k, dt, steps):
    for _ in range(steps):
        v -= dt * k * x
        x += dt * v


def three_way(a, b, c):
    a += b
    b += c * a
    c -= a + b
    return a.sum() + b.sum() + c.sum()


@pytest.mark.parametrize("fn,make", [
    (leapfrog, lambda r: (r.random(300), r.random(300), 2.0, 0.01, 7)),
    (leapfrog, lambda r: (r.random(5), r.random(5), 2.0, 0.01, 0)),
    (three_way, lambda r: (r.random(50), r.random(50), r.random(50))),
])
def test_updates_of_arguments_that_read_each_other(fn, make):
    """In-place updates of arguments that each read the other's old or new value (a
    semi-implicit Euler step): one goes through a temporary, the others in place, and every
    argument ends as NumPy leaves it."""
    want_args, got_args = make(np.random.default_rng(3)), make(np.random.default_rng(3))
    want = fn(*want_args)
    got = cppcodegen.compile(fn)(*got_args)
    assert (got is None and want is None) or np.isclose(got, want, rtol=1e-12)
    for g, w in zip(got_args, want_args):
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_a_cycle_of_updates_needs_one_temporary():
    r = np.random.default_rng(0)
    ir = str(cppcodegen.explain(leapfrog, r.random(300), r.random(300), 2.0, 0.01, 7))
    ir = ir.split("== loop IR ==")[1].split("== kernels")[0]
    arrays = [ln for ln in ir.splitlines() if ln.startswith("buffer buf") and "[] " not in ln]
    assert len(arrays) == 1, ir         # (a 0-d one: k * dt, made once before the loop)
