"""Classify a call's arguments and build the guard key of a compiled variant.

In: the bound arguments of one call. Out: ``arg_specs`` (how the tracer sees each argument)
and a hashable ``key``: dtype, shape and strides of every array, the type of every runtime
scalar, and the value of every constant. Two calls with equal keys run the same variant.
No sympy, no compiler: this is on every call's path.
"""
from __future__ import annotations

import types
import weakref

import numpy as np

SUPPORTED_KINDS = "biufc"
FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, types.MethodType)
_F8 = np.dtype(np.float64)
_C16 = np.dtype(np.complex128)
_SUPPORTED = {}     # dtype -> bool, filled as dtypes are seen


def _attributes(f) -> tuple:
    """``(attributes_of(its object),)`` for a bound method, else ()."""
    state = attributes_of(f)
    return (state,) if state else ()


def attributes_of(f) -> tuple:
    """A bound method's object's attributes, which its calls read as constants of the build:
    numbers and strings by value, other objects (an array) by identity (``o.k = 2.0`` or
    ``o.w = new_array`` after a call: another build, not the old values); () for others."""
    obj = getattr(f, "__self__", None) if isinstance(f, types.MethodType) else None
    state = getattr(obj, "__dict__", None)
    if not state:
        return ()
    return tuple((k, v) if type(v) in (int, float, bool, str, complex) or v is None
                 else (k, type(v).__name__, id(v)) for k, v in state.items())


def classify(args) -> tuple:
    """One spec per argument:
    ('array', dtype, shape, strides)       traced input array
    ('scalar', dtype, weak)                runtime scalar (Python float: weak; NumPy scalar: strong)
    ('const', type name, value)            compile-time constant guarded by value (a
                                           function: by identity, its calls traced)
    """
    specs = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            dt = a.dtype
            ok = _SUPPORTED.get(dt)
            if ok is None:
                ok = _SUPPORTED[dt] = _supported(dt)
            if not ok:
                hint = (" (convert it with .astype(np.complex128))" if dt.kind == "c" else
                        " (convert it with .astype(np.float64))" if dt.kind == "f" else "")
                raise TypeError(f"cppcodegen supports native-byte-order bool, integer, float "
                                f"and complex64/complex128 arrays; got an array of dtype {dt}"
                                + hint)
            specs.append(("array", dt, a.shape, a.strides))
        elif t is float:
            specs.append(("scalar", _F8, True))
        elif t is complex:
            specs.append(("scalar", _C16, True))
        elif isinstance(a, np.generic) and _supported(a.dtype):
            specs.append(("scalar", a.dtype, False))
        elif t in (int, bool, str) or a is None:
            specs.append(("const", t.__name__, a))
        elif isinstance(a, np.dtype) or isinstance(a, type) and (
                issubclass(a, np.generic) or a in (int, float, bool, complex)):
            specs.append(("const", "dtype", a))     # (dtype=np.float32: guarded by value)
        elif isinstance(a, FUNCTIONS) or hasattr(a, "__wrapped__") and callable(a):
            specs.append(("const", "function", a) + _attributes(a))   # (a right-hand side
                                                    # passed to an integrator: called, so traced)
        elif isinstance(a, np.random.Generator):
            specs.append(("generator",))
        elif t in (tuple, list) and all(type(v) in (int, bool, str, float) for v in a):
            specs.append(("const", t.__name__, tuple(a)))   # (polynomial coefficients)
        elif isinstance(a, np.ndarray):      # subclasses: treat as plain arrays
            raise TypeError(f"cppcodegen: ndarray subclass {t.__name__} is not supported; "
                            "pass np.asarray(x)")
        else:
            raise TypeError(f"cppcodegen cannot take an argument of type {t.__name__}; "
                            "pass arrays, Python/NumPy scalars, ints, bools, strings, None, "
                            "dtypes, functions or tuples/lists of numbers")
    return tuple(specs)


def _supported(dt) -> bool:
    """bool, integers, floats and complex64/complex128 (not clongdouble) in native order."""
    return dt.kind in SUPPORTED_KINDS and dt.isnative and (dt.kind != "c" or dt.itemsize <= 16)


def describe(spec) -> str:
    if spec[0] == "darray":
        return f"array {np.dtype(spec[1])}[{', '.join(map(str, spec[2]))}] (dynamic)"
    if spec[0] == "array":
        return f"array {np.dtype(spec[1])}{list(spec[2])} strides={spec[3]}"
    if spec[0] == "scalar":
        return f"scalar {np.dtype(spec[1])}{' (weak)' if spec[2] else ''}"
    if len(spec) > 3:           # (a bound method: its object's attributes too)
        return f"constant {spec[2]!r} with attributes {dict((a[0], a[1]) for a in spec[3])}"
    return f"constant {spec[2]!r}"


def classify_dynamic(args, dims=None) -> tuple:
    """``classify`` with chosen array dimensions symbolic: ``dims`` maps an argument index to
    the dimensions to make symbolic (None: every dimension of every array). Sizes 0 and 1 stay
    fixed. Each symbolic dimension gets its own name (n0, n1, ... in order of appearance);
    equalities that broadcasting or a matrix product needs become guards of the trace, so a
    square matrix compiled once also serves non-square ones.
    A dynamic array's spec is ('darray', dtype, shape pattern, stride pattern): the shape
    pattern has ints and size names, the stride pattern per dimension 'c' (contiguous over the
    inner dimensions), 0 (a dimension of size 0 or 1) or a stride name ``t<arg>_<dim>``."""
    specs = list(classify(args))
    count = 0
    for i, (spec, a) in enumerate(zip(specs, args)):
        if spec[0] != "array":
            continue
        chosen = range(a.ndim) if dims is None else dims.get(i, ())
        chosen = [d for d in chosen if a.shape[d] >= 2]
        if not chosen:
            continue
        shape = list(a.shape)
        for d in chosen:
            shape[d] = f"n{count}"
            count += 1
        strides, inner = [], a.itemsize
        for d in range(a.ndim - 1, -1, -1):
            size, st = a.shape[d], a.strides[d]
            strides.append(0 if size < 2 else "c" if st == inner else f"t{i}_{d}")
            inner *= size
        specs[i] = ("darray", a.dtype, tuple(shape), tuple(reversed(strides)))
    return tuple(specs)


# a Python int argument read at each call (weak int64): what a Python int's spec becomes
# once a call passes another value than the variant it was compiled for ("automatic
# dynamic", as for sizes)
DYNAMIC_INT = ("scalar", np.dtype(np.int64), True)


def python_int(spec) -> bool:
    """Is ``spec`` a Python int argument that int64 holds?"""
    return spec[0] == "const" and spec[1] == "int" and -2 ** 63 <= spec[2] < 2 ** 63


def same_structure(old, new) -> bool:
    """Two specs that differ at most in array sizes and strides, and Python ints' values
    (automatic dynamic shapes and ints)."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if a[0] in ("array", "darray") and b[0] in ("array", "darray"):
            if a[1] != b[1] or len(a[2]) != len(b[2]):
                return False
        elif a != b and not (python_int(b) and (python_int(a) or a == DYNAMIC_INT)):
            return False
    return True


def dynamic_ints(old, new) -> set:
    """The Python int arguments of ``new`` whose value differs from variant ``old``'s (or
    that ``old`` reads at each call already)."""
    return {i for i, (a, b) in enumerate(zip(old, new))
            if python_int(b) and (a == DYNAMIC_INT or python_int(a) and a[2] != b[2])}


def describe_change(old, new, first: int = 0) -> str:
    """Why ``new`` does not fit the variant compiled for static specs ``old`` (argument
    numbers counted from ``first``)."""
    if len(old) != len(new):
        return f"{len(new)} arguments, compiled for {len(old)}"
    for i, (a, b) in enumerate(zip(old, new), first):
        if a == b:
            continue
        if a[0] == b[0] == "array" and a[1] == b[1] and len(a[2]) == len(b[2]):
            for d, (x, y) in enumerate(zip(a[2], b[2])):
                if x != y:
                    return f"argument {i} dim {d}: size {y}, compiled for {x}"
            return f"argument {i}: strides {b[3]}, compiled for {a[3]}"
        return f"argument {i}: {describe(b)}, compiled for {describe(a)}"
    return "no difference"


_MARKED: dict = {}            # id(array) -> dims marked dynamic (dropped when the array dies)


def mark_dynamic(array, dim) -> None:
    """Compile ``array``'s dimension(s) ``dim`` symbolically the first time it is passed."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"mark_dynamic expects a numpy.ndarray, got {type(array).__name__}")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not -array.ndim <= d < array.ndim:
            raise IndexError(f"mark_dynamic: dim {d} out of range for a {array.ndim}-d array")
    key = id(array)
    if key not in _MARKED:
        weakref.finalize(array, _MARKED.pop, key, None)
    _MARKED.setdefault(key, set()).update(d % array.ndim for d in dims)


def marked_dims(a) -> set:
    return _MARKED.get(id(a), set()) if _MARKED and isinstance(a, np.ndarray) else set()


def layout_key(args):
    """``key(*args)``: the flat tuple (type, dtype, shape, strides) of each array argument
    (AttributeError for anything else), of the Python floats and complexes of ``args``
    (run-time values) their type only, of Python ints and bools, dtypes and types (np.float32)
    their value: the fast path's lookup key, made by one function
    without a loop (a loop over the arguments cost a third of a small call). ``key.scalars``:
    the positions keyed by type (a key is complete when floats or complexes are there);
    ``key.ints``: those keyed by value; ``key.arrays``: by layout (a key is complete when
    arrays or NumPy scalars are there: a class has a dtype and a shape attribute too)."""
    names = [f"a{i}" for i in range(len(args))]
    scalars = tuple(i for i, a in enumerate(args) if type(a) in (float, complex))
    ints = tuple(i for i, a in enumerate(args) if type(a) in (int, bool))
    consts = tuple(i for i, a in enumerate(args) if isinstance(a, (type, np.dtype)))
    fields = "".join(f"{a}.__class__, " if i in scalars else
                     f"{a}.__class__, {a}, " if i in ints + consts else     # (its value)
                     f"{a}.__class__, {a}.dtype, {a}.shape, {a}.strides, "
                     for i, a in enumerate(names))
    env: dict = {}
    exec(f"def key({', '.join(names)}):\n    return ({fields})", env)
    env["key"].scalars, env["key"].ints = scalars, ints
    env["key"].arrays = tuple(i for i in range(len(args)) if i not in scalars + ints + consts)
    return env["key"]
