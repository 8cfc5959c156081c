"""Check mode: compiled buffers against the NumPy reference, and a planted miscompile."""
import inspect

import numpy as np
import pytest

import cppcodegen
from cppcodegen.checking.check import CheckError, compare

X = np.random.default_rng(1).standard_normal((16, 50)).astype(np.float32)


def model(x):
    m = x.max(axis=0)                       # kernel 1: column max (a temporary)
    e = np.exp(x - m)                       # kernel 2: the op we miscompile
    s = e.sum(axis=1, keepdims=True)        # kernel 2: row sums of e
    return e / s, e, (e * 2.0).sum(axis=0)  # more kernels downstream of e


EXP_LINE = inspect.getsourcelines(model)[1] + 2


def test_check_passes_on_correct_code():
    report = cppcodegen.check(model, X)
    assert report.ok and report.first_mismatch is None
    assert [b.op for b in report.buffers][:2] == ["max", "exp"]
    assert len(report.buffers) >= 4
    assert "all match" in str(report)


def test_check_names_exactly_the_miscompiled_buffer():
    opts = {"_testing_miscompile": "exp"}
    with pytest.raises(CheckError) as info:
        cppcodegen.check(model, X, options=opts)
    report = info.value.report
    bad = report.first_mismatch
    assert bad.op == "exp" and bad.name.endswith(":exp")
    assert bad.where.endswith(f"test_check.py:{EXP_LINE}")
    assert report.buffers[0].ok and report.buffers[0].op == "max"     # before it: fine
    assert report.buffers.index(bad) == 1
    assert 5e-4 < bad.max_rel < 2e-3                       # exp(x) * 1.001
    msg = str(info.value)
    assert bad.name in msg and f"test_check.py:{EXP_LINE}" in msg
    assert "max abs error" in msg and "max rel error" in msg
    # without raising: the same report comes back
    report2 = cppcodegen.check(model, X, options=opts, raise_on_mismatch=False)
    assert not report2.ok and report2.first_mismatch.name == bad.name


def test_check_backend_raises_on_a_call():
    f = cppcodegen.compile(model, backend="check", options={"_testing_miscompile": "exp"})
    with pytest.raises(CheckError, match=":exp"):
        f(X)
    g = cppcodegen.compile(model, backend="check")
    out, e, col = g(X)
    np.testing.assert_allclose(e, np.exp(X - X.max(axis=0)), rtol=1e-6)


def test_compare_tolerances():
    f32 = np.float32
    a = np.array([1.0, 2.0, np.nan, np.inf], f32)
    assert compare(a, a.copy())[0]
    close = a.copy()
    close[:2] = np.nextafter(close[:2], f32(10))             # 1 ulp off: accepted
    assert compare(close, a)[0]
    far = a.copy()
    far[1] *= f32(1.001)
    ok, mabs, mrel, bad, reason = compare(far, a)
    assert not ok and bad == 1 and mabs == pytest.approx(0.002, rel=1e-3)
    nan_moved = a.copy()
    nan_moved[2], nan_moved[0] = 0.0, np.nan
    assert compare(nan_moved, a)[4] == "NaN positions differ"
    neg_inf = a.copy()
    neg_inf[3] = -np.inf
    assert not compare(neg_inf, a)[0]
    ints = np.arange(5)
    assert compare(ints, ints.copy())[0]
    assert not compare(ints, ints + np.array([0, 0, 1, 0, 0]))[0]
    assert not compare(np.array([True, False]), np.array([True, True]))[0]
    d = np.array([1.0, 1e-300])
    assert compare(d * (1 + 1e-13), d)[0]
    assert not compare(d * (1 + 1e-9), d)[0]
