"""Classify a call's arguments and build the guard key of a compiled variant.

In: the bound arguments of one call. Out: ``arg_specs`` (how the tracer sees each argument)
and a hashable ``key``: dtype, shape and strides of every array, the type of every runtime
scalar, and the value of every constant. Two calls with equal keys run the same variant.
No sympy, no compiler: this is on every call's path.
"""
from __future__ import annotations

import numpy as np

SUPPORTED_KINDS = "biuf"
_F8 = np.dtype(np.float64)
_SUPPORTED = {}     # dtype -> bool, filled as dtypes are seen


def classify(args) -> tuple:
    """One spec per argument:
    ('array', dtype, shape, strides)       traced input array
    ('scalar', dtype, weak)                runtime scalar (Python float: weak; NumPy scalar: strong)
    ('const', type name, value)            compile-time constant guarded by value
    """
    specs = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            dt = a.dtype
            ok = _SUPPORTED.get(dt)
            if ok is None:
                ok = _SUPPORTED[dt] = dt.kind in SUPPORTED_KINDS and dt.isnative
            if not ok:
                raise TypeError(f"cppcodegen supports native-byte-order bool, integer and float "
                                f"arrays; got an array of dtype {dt}")
            specs.append(("array", dt, a.shape, a.strides))
        elif t is float:
            specs.append(("scalar", _F8, True))
        elif isinstance(a, np.generic) and a.dtype.kind in SUPPORTED_KINDS:
            specs.append(("scalar", a.dtype, False))
        elif t in (int, bool, str) or a is None:
            specs.append(("const", t.__name__, a))
        elif isinstance(a, np.random.Generator):
            specs.append(("generator",))
        elif isinstance(a, tuple) and all(type(v) in (int, bool, str, float) for v in a):
            specs.append(("const", "tuple", a))
        elif isinstance(a, np.ndarray):      # subclasses: treat as plain arrays
            raise TypeError(f"cppcodegen: ndarray subclass {t.__name__} is not supported; "
                            "pass np.asarray(x)")
        else:
            raise TypeError(f"cppcodegen cannot take an argument of type {t.__name__}; "
                            "pass arrays, Python/NumPy scalars, ints, bools, strings or None")
    return tuple(specs)


def describe(spec) -> str:
    if spec[0] == "array":
        return f"array {np.dtype(spec[1])}{list(spec[2])} strides={spec[3]}"
    if spec[0] == "scalar":
        return f"scalar {np.dtype(spec[1])}{' (weak)' if spec[2] else ''}"
    return f"constant {spec[2]!r}"
