"""Backends: registry, lookup errors, the numpy backend, lazy imports."""
import subprocess
import sys

import numpy as np
import pytest

import cppcodegen
from cppcodegen.checking.backends import lookup_backend


def test_builtin_backends_are_listed():
    assert {"cpp", "numpy", "check"} <= set(cppcodegen.list_backends())


def test_unknown_backend_error_lists_known_names():
    with pytest.raises(ValueError) as info:
        cppcodegen.compile(lambda x: x, backend="cuda")
    msg = str(info.value)
    assert "'cuda'" in msg and "cpp" in msg and "numpy" in msg and "check" in msg


def test_register_backend_and_use_it():
    calls = []

    @cppcodegen.register_backend("recording_test", replace=True)
    def recording(fn, specs, args, opts, compilation):
        calls.append(specs)
        return lambda args: ("ran", fn(*args))

    f = cppcodegen.compile(lambda x: x + 1, backend="recording_test")
    assert f(1.0) == ("ran", 2.0)
    assert f(2.0) == ("ran", 3.0) and len(calls) == 1          # one variant per signature
    assert "recording_test" in cppcodegen.list_backends()
    assert lookup_backend("recording_test") is recording
    with pytest.raises(ValueError, match="already registered"):
        cppcodegen.register_backend("recording_test")(lambda *a: None)


def test_numpy_backend_matches_numpy_and_guards_like_cpp():
    def f(x, y):
        z = np.sin(x) * y.T
        return z.sum(axis=1), z, x.reshape(-1)[:3], (x * 0).sum()

    g = cppcodegen.compile(f, backend="numpy")
    x = np.random.default_rng(0).standard_normal((3, 4))
    y = np.random.default_rng(1).standard_normal((4, 3))
    got = g(x, y)
    want = f(x, y)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    assert np.isscalar(got[3]) and got[1].flags.writeable and not np.shares_memory(got[2], x)
    g(x.astype(np.float32), y.astype(np.float32))
    assert len(g.variants) == 2                                 # new dtypes: a new variant


def test_import_is_lazy():
    code = ("import sys, cppcodegen; "
            "heavy = [m for m in ('sympy', 'cppcodegen.backend.program', 'cppcodegen.passes.lower', "
            "'cppcodegen.passes.schedule', 'cppcodegen.backend.cexpr', 'cppcodegen.checking.reference') if m in sys.modules]; "
            "assert cppcodegen.check and cppcodegen.hooks and cppcodegen.callback; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
