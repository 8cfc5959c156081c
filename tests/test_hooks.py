"""Intermediate hooks: the registration list, and compiled code reporting its buffers."""
import numpy as np
import pytest

import cppcodegen
from cppcodegen import hooks
from cppcodegen.runtime import CompiledVariant, HookedVariant

HOOKED = {"generate_intermediate_hooks": True}


def test_hooks_run_in_registration_order_and_are_removed_on_exit():
    calls = []
    with hooks.intermediate_hook(lambda n, v: calls.append(("a", n, v))):
        with hooks.intermediate_hook(lambda n, v: calls.append(("b", n, v))):
            hooks.run_intermediate_hooks("x", 1)
        hooks.run_intermediate_hooks("y", 2)
    hooks.run_intermediate_hooks("z", 3)
    assert calls == [("a", "x", 1), ("b", "x", 1), ("a", "y", 2)]
    assert hooks.INTERMEDIATE_HOOKS == []


def test_hook_removed_when_the_block_raises():
    with pytest.raises(KeyError):
        with hooks.intermediate_hook(lambda n, v: None):
            raise KeyError("boom")
    assert hooks.INTERMEDIATE_HOOKS == []


def test_list_is_empty_while_hooks_run_and_restored_after_an_error():
    inner = []

    def hook(name, value):
        inner.append(list(hooks.INTERMEDIATE_HOOKS))
        hooks.run_intermediate_hooks("nested", 0)        # must not recurse
        if name == "bad":
            raise RuntimeError("hook failed")

    with hooks.intermediate_hook(hook):
        hooks.run_intermediate_hooks("ok", 0)
        with pytest.raises(RuntimeError):
            hooks.run_intermediate_hooks("bad", 0)
        assert hooks.INTERMEDIATE_HOOKS == [hook]      # restored after the exception
    assert inner == [[], []]


def softmax_parts(x):
    m = x.max(axis=0)                       # column reduction: a kernel of its own, a temporary
    e = np.exp(x - m)                       # an output: materialized
    s = e.sum(axis=1, keepdims=True)
    return e / s, e


@pytest.fixture(scope="module")
def hooked():
    return cppcodegen.compile(softmax_parts, options=HOOKED)


X = np.random.default_rng(0).standard_normal((6, 40)).astype(np.float32)


def test_compiled_code_reports_every_materialized_buffer(hooked):
    seen = []
    with hooks.intermediate_hook(lambda n, v: seen.append((n, v))):
        out, e = hooked(X)
    names = [n for n, _ in seen]
    ops = [n.split(":")[2] for n in names]
    assert ops == ["max", "exp", "divide"], names           # execution order
    for n in names:
        buf, node, op = n.split(":")
        assert buf.startswith("buf") and node.startswith("%")
    values = dict(seen)
    m = X.max(axis=0)
    np.testing.assert_array_equal(values[names[0]], m)
    np.testing.assert_allclose(values[names[1]], np.exp(X - m), rtol=1e-6)
    np.testing.assert_array_equal(values[names[1]], e)       # the reported buffer is the output
    np.testing.assert_array_equal(values[names[2]], out)
    assert all(isinstance(v, np.ndarray) and not v.flags.writeable for _, v in seen)
    assert isinstance(hooked.variants[next(iter(hooked.variants))], HookedVariant)


def test_names_are_stable_across_compilations(hooked):
    def names_of(f):
        seen = []
        with hooks.intermediate_hook(lambda n, v: seen.append(n)):
            f(X)
        return seen
    again = cppcodegen.compile(softmax_parts, options=HOOKED)      # a new object, same graph
    assert names_of(hooked) == names_of(again) != []


def test_local_reductions_are_not_reported():
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))   # row max and sum stay in registers
        return e / e.sum(axis=-1, keepdims=True)
    f = cppcodegen.compile(softmax, options=HOOKED)
    seen = []
    with hooks.intermediate_hook(lambda n, v: seen.append(n)):
        f(X)
    assert [n.split(":")[2] for n in seen] == ["divide"]


def test_a_hook_that_calls_compiled_code_does_not_recurse(hooked):
    calls = []

    def hook(name, value):
        calls.append(name)
        hooked(X)               # compiled code inside a hook: no hooks run for it

    with hooks.intermediate_hook(hook):
        hooked(X)
    assert len(calls) == 3


def test_option_off_means_no_reports_and_the_plain_variant():
    f = cppcodegen.compile(softmax_parts)
    seen = []
    with hooks.intermediate_hook(lambda n, v: seen.append(n)):
        f(X)
    assert seen == []
    (variant,) = f.variants.values()
    assert type(variant) is CompiledVariant and variant.plan.hooks == ()


def test_extern_results_are_reported():
    def f(a, b):
        return np.exp(a @ b) * 2
    g = cppcodegen.compile(f, options=HOOKED)
    a, b = X[:, :5], X[:5, :7].copy()
    a = np.ascontiguousarray(a)
    seen = {}
    with hooks.intermediate_hook(lambda n, v: seen.__setitem__(n.split(":")[2], v)):
        g(a, b)
    assert list(seen) == ["matmul", "multiply"]
    np.testing.assert_allclose(seen["matmul"], a @ b, rtol=1e-5)
