"""The one table of pointwise ops.

Each row: the op's name (NumPy's ufunc name), its NumPy reference, its scalar C++ spelling
and its ``ccg::Vec`` spelling (None when the vector renderer cannot write it; such loops
are emitted as scalar code). Templates take ``{0}``, ``{1}``, ... for the operands and
``{T}`` for the C++ type of the result. Every implementation (the NumPy reference
interpreter, the scalar and the vector C++ renderer) reads this table; a test checks that
every traceable op has every column.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OpDef:
    name: str
    nin: int
    numpy: object                 # reference implementation (works on arrays)
    scalar: str                   # C++ template for scalar code
    vector: str | None            # C++ template for ccg::Vec code (float types)
    vector_ints: bool = False     # the vector template is valid for integer lanes too
    vector_bool: str | None = None    # template on ccg::Mask operands (bool dtype)
    scalar_bool: str | None = None    # scalar template override for bool operands


def _unary_math(name, cname=None):
    cname = cname or name
    # ccg::{cname}(scalar) runs the vector loops' libmvec function (include/cppcodegen/vec.h)
    return OpDef(name, 1, getattr(np, name), f"ccg::{cname}({{0}})", f"ccg::{cname}({{0}})")


_ROWS = [
    OpDef("add", 2, np.add, "({0} + {1})", "({0} + {1})", True, "({0} | {1})", "({0} || {1})"),
    OpDef("subtract", 2, np.subtract, "({0} - {1})", "({0} - {1})", True),
    OpDef("multiply", 2, np.multiply, "({0} * {1})", "({0} * {1})", True, "({0} & {1})",
          "({0} && {1})"),
    OpDef("divide", 2, np.divide, "({0} / {1})", "({0} / {1})"),
    OpDef("floor_divide", 2, np.floor_divide, "ccg::floordiv({0}, {1})", "ccg::floordiv({0}, {1})",
          True),
    OpDef("remainder", 2, np.remainder, "ccg::mod({0}, {1})", "ccg::mod({0}, {1})",
          True),
    OpDef("fmod", 2, np.fmod, "ccg::fmod({0}, {1})", None),
    OpDef("cbrt", 1, np.cbrt, "std::cbrt({0})", None),     # (the C library's, as NumPy's)
    OpDef("power", 2, np.power, "ccg::power({0}, {1})", "ccg::pow({0}, {1})"),
    OpDef("negative", 1, np.negative, "(-{0})", "(-{0})", True),
    OpDef("positive", 1, np.positive, "(+{0})", "({0})", True),
    OpDef("absolute", 1, np.absolute, "ccg::abs({0})", "ccg::abs({0})", True),
    OpDef("sign", 1, np.sign, "ccg::sign({0})", "ccg::sign({0})", True),
    OpDef("sqrt", 1, np.sqrt, "std::sqrt({0})", "ccg::sqrt({0})"),
    OpDef("square", 1, np.square, "({0} * {0})", "({0} * {0})", True),
    OpDef("reciprocal", 1, np.reciprocal, "ccg::reciprocal({0})", "(ccg::Vec<{T}, L>::broadcast(1) / {0})"),
    _unary_math("exp"), _unary_math("exp2"), _unary_math("expm1"), _unary_math("log"),
    _unary_math("log2"), _unary_math("log10"), _unary_math("log1p"), _unary_math("sin"),
    _unary_math("cos"), _unary_math("tan"), _unary_math("arcsin", "asin"),
    _unary_math("arccos", "acos"), _unary_math("arctan", "atan"), _unary_math("sinh"),
    _unary_math("cosh"), _unary_math("tanh"), _unary_math("arcsinh", "asinh"),
    _unary_math("arccosh", "acosh"), _unary_math("arctanh", "atanh"),
    OpDef("floor", 1, np.floor, "std::floor({0})", "ccg::floor({0})"),
    OpDef("ceil", 1, np.ceil, "std::ceil({0})", "ccg::ceil({0})"),
    OpDef("trunc", 1, np.trunc, "std::trunc({0})", "ccg::trunc({0})"),
    OpDef("rint", 1, np.rint, "std::nearbyint({0})", "ccg::rint({0})"),
    OpDef("arctan2", 2, np.arctan2, "ccg::atan2({0}, {1})", "ccg::atan2({0}, {1})"),
    OpDef("hypot", 2, np.hypot, "ccg::hypot({0}, {1})", "ccg::hypot({0}, {1})"),
    OpDef("copysign", 2, np.copysign, "std::copysign({0}, {1})", "ccg::copysign({0}, {1})"),
    OpDef("maximum", 2, np.maximum, "ccg::maximum({0}, {1})", "ccg::maximum({0}, {1})", True,
          "({0} | {1})", "({0} || {1})"),
    OpDef("minimum", 2, np.minimum, "ccg::minimum({0}, {1})", "ccg::minimum({0}, {1})", True,
          "({0} & {1})", "({0} && {1})"),
    OpDef("fmax", 2, np.fmax, "ccg::fmax({0}, {1})", "ccg::fmax({0}, {1})", False,
          "({0} | {1})", "({0} || {1})"),
    OpDef("fmin", 2, np.fmin, "ccg::fmin({0}, {1})", "ccg::fmin({0}, {1})", False,
          "({0} & {1})", "({0} && {1})"),
    OpDef("logical_and", 2, np.logical_and, "({0} && {1})", None, False, "({0} & {1})"),
    OpDef("logical_or", 2, np.logical_or, "({0} || {1})", None, False, "({0} | {1})"),
    OpDef("logical_xor", 2, np.logical_xor, "({0} != {1})", None, False, "({0} ^ {1})"),
    OpDef("logical_not", 1, np.logical_not, "(!{0})", None, False, "(~{0})"),
    OpDef("bitwise_and", 2, np.bitwise_and, "({0} & {1})", "({0} & {1})", True, "({0} & {1})",
          "({0} && {1})"),
    OpDef("bitwise_or", 2, np.bitwise_or, "({0} | {1})", "({0} | {1})", True, "({0} | {1})",
          "({0} || {1})"),
    OpDef("bitwise_xor", 2, np.bitwise_xor, "({0} ^ {1})", "({0} ^ {1})", True, "({0} ^ {1})",
          "({0} != {1})"),
    OpDef("invert", 1, np.invert, "(~{0})", "(~{0})", True, "(~{0})", "(!{0})"),
    OpDef("left_shift", 2, np.left_shift, "ccg::left_shift({0}, {1})",
          "ccg::left_shift({0}, {1})", True),
    OpDef("right_shift", 2, np.right_shift, "ccg::right_shift({0}, {1})",
          "ccg::right_shift({0}, {1})", True),
    OpDef("isnan", 1, np.isnan, "ccg::isnan({0})", "ccg::isnan({0})"),
    OpDef("isinf", 1, np.isinf, "ccg::isinf({0})", "ccg::isinf({0})"),
    OpDef("isfinite", 1, np.isfinite, "ccg::isfinite({0})", "ccg::isfinite({0})"),
    OpDef("signbit", 1, np.signbit, "ccg::signbit({0})", "ccg::signbit({0})"),
    OpDef("equal", 2, np.equal, "({0} == {1})", "({0} == {1})", True, "({0} == {1})"),
    OpDef("not_equal", 2, np.not_equal, "({0} != {1})", "({0} != {1})", True, "({0} != {1})"),
    OpDef("less", 2, np.less, "({0} < {1})", "({0} < {1})", True),
    OpDef("less_equal", 2, np.less_equal, "({0} <= {1})", "({0} <= {1})", True),
    OpDef("greater", 2, np.greater, "({0} > {1})", "({0} > {1})", True),
    OpDef("greater_equal", 2, np.greater_equal, "({0} >= {1})", "({0} >= {1})", True),
    OpDef("clip", 3, np.clip, "ccg::clip({0}, {1}, {2})", "ccg::clip({0}, {1}, {2})", True),
    OpDef("where", 3, np.where, "({0} ? {1} : {2})", "ccg::select({0}, {1}, {2})", True,
          "(({0} & {1}) | (~{0} & {2}))"),
]

def _make_complex(re, im):
    """complex(re, im) part by part (re + 1j * im would multiply: 1j * inf is nan+infj)."""
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                   np.result_type(re.dtype, im.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


def _mul_naive(a, b):
    """The complex product with two roundings per part (NumPy's scalar ``*``, Python's)."""
    a, b = np.asarray(a), np.asarray(b)
    return _make_complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


def _power_by_scalar(a, b):
    """np.power of an array by one exponent, as NumPy's loop computes it for a scalar
    exponent (its square, sqrt and reciprocal for 2, 0.5 and -1)."""
    b = np.asarray(b)
    return np.power(a, b.dtype.type(b.flat[0])) if b.size else np.power(a, b)


def _div_py(a, b):
    """Python's complex quotient (CPython's _Py_c_quot), element by element."""
    a, b = np.broadcast_arrays(np.asarray(a, np.complex128), np.asarray(b, np.complex128))
    out = np.empty(a.shape, np.complex128)
    for k in np.ndindex(a.shape):
        x, y = complex(a[k]), complex(b[k])
        if abs(y.real) >= abs(y.imag):
            if y.real == 0.0:
                out[k] = complex(np.nan, np.nan)
                continue
            ratio = y.imag / y.real
            denom = y.real + y.imag * ratio
            out[k] = complex((x.real + x.imag * ratio) / denom, (x.imag - x.real * ratio) / denom)
        elif abs(y.imag) >= abs(y.real):
            ratio = y.real / y.imag
            denom = y.real * ratio + y.imag
            out[k] = complex((x.real * ratio + x.imag) / denom, (x.imag * ratio - x.real) / denom)
        else:
            out[k] = complex(np.nan, np.nan)
    return out


# complex parts (include/cppcodegen/complex.h): Re, Im, the conjugate, and the complex number
# of two parts (internal: what writing x.real / x.imag leaves in x); mul_naive: ``*`` of
# NumPy (and Python) complex scalars, which NumPy computes naively, while its array loop
# (multiply) rounds each part once (a fused multiply-add); div_py: ``/`` of Python numbers,
# one complex (CPython's quotient, not NumPy's reciprocal-multiply)
_ROWS += [
    OpDef("real", 1, np.real, "ccg::real({0})", "ccg::real({0})"),
    OpDef("imag", 1, np.imag, "ccg::imag({0})", "ccg::imag({0})"),
    OpDef("conjugate", 1, np.conjugate, "ccg::conj({0})", "ccg::conj({0})"),
    OpDef("complex", 2, _make_complex, "{T}({0}, {1})", "ccg::Vec<{T}, L>::from_parts({0}, {1})"),
    OpDef("mul_naive", 2, _mul_naive, "ccg::mul_naive({0}, {1})", "ccg::mul_naive({0}, {1})"),
    OpDef("div_py", 2, _div_py, "ccg::div_py({0}, {1})", "ccg::div_py({0}, {1})"),
    OpDef("power_by_scalar", 2, _power_by_scalar, "ccg::power_uniform({0}, {1})",
          "ccg::power_uniform({0}, {1})"),
]

# complex operands: (scalar, vector) templates where the row's real spelling does not fit
# (NumPy's complex loops: complex.h has every function under the vector names)
COMPLEX_TEMPLATES = {
    "sqrt": ("ccg::sqrt({0})", "ccg::sqrt({0})"),
    "rint": ("ccg::rint({0})", "ccg::rint({0})"),
    "power": ("ccg::power({0}, {1})", "ccg::power({0}, {1})"),
    "reciprocal": ("ccg::reciprocal({0})", "ccg::reciprocal({0})"),
}


def _random_reference(kind):
    """NumPy reference of the kernels' Philox draws for an array of element indices."""
    def draw(index, seed, offset):
        from ..runtime import random as rnd
        index = np.asarray(index, dtype=np.uint64)
        seed, offset = int(np.asarray(seed).reshape(-1)[0]), int(np.asarray(offset).reshape(-1)[0])
        flat = index.reshape(-1)
        out = np.empty(flat.shape, np.float64)
        for j, i in enumerate(flat):                      # slow, but only an oracle
            out[j] = getattr(rnd, kind)(seed, offset, 1, start=int(i))[0]
        return out.reshape(index.shape)
    return draw


# random numbers: operands (flat element index, seed, offset), in scalar and vector code
# (include/cppcodegen/random.h; normal ones with libmvec's log and cos in both)
_ROWS += [
    OpDef("random_uniform", 3, _random_reference("uniform"),
          "ccg::random_uniform<{T}>({0}, {1}, {2})",
          "ccg::random_uniform_lanes<{T}>({0}, {1}, {2})", True),
    OpDef("random_normal", 3, _random_reference("normal"),
          "ccg::random_normal<{T}>({0}, {1}, {2})",
          "ccg::random_normal_lanes<{T}>({0}, {1}, {2})", True),
]

_MUL_FITS = np.frompyfunc(lambda a, b: -2 ** 63 <= int(a) * int(b) < 2 ** 63, 2, 1)

# does the product of two Python ints fit int64 (frontend/pyints.py's check; internal)
_ROWS.append(OpDef("mul_fits", 2, lambda a, b: np.asarray(_MUL_FITS(a, b), dtype=bool),
                   "ccg::mul_fits({0}, {1})", None))


def _python_math(fn):
    """NumPy reference of a ``math`` function NumPy has no ufunc for (element by element)."""
    each = np.frompyfunc(fn, 1, 1)
    return lambda x: np.asarray(each(np.asarray(x, dtype=np.float64)), dtype=np.float64)


# Python's math.erf/erfc/gamma/lgamma of traced values (frontend/pymath.py; float64, as the
# C library computes them for math); scalar code only
PYTHON_MATH = {"erf": math.erf, "erfc": math.erfc, "gamma": math.gamma, "lgamma": math.lgamma}
_ROWS += [OpDef(name, 1, _python_math(fn), f"std::{'tgamma' if name == 'gamma' else name}({{0}})",
                None) for name, fn in PYTHON_MATH.items()]



def _python_round(x, n):
    try:
        return round(float(x), int(n))
    except OverflowError:       # (frontend/ndarray.py raises it after the op, as Python)
        return math.copysign(math.inf, x)


# Python's round(x, ndigits) of a Python float (include/cppcodegen/pyround.h): not NumPy's
_PY_ROUND = np.frompyfunc(_python_round, 2, 1)
_ROWS.append(OpDef("python_round", 2, lambda x, n: np.asarray(_PY_ROUND(x, n), dtype=np.float64),
                   "ccg::python_round({0}, {1})", None))

OPS: dict[str, OpDef] = {row.name: row for row in _ROWS}

# NumPy names that are the same op under another name
ALIASES = {"true_divide": "divide", "mod": "remainder", "abs": "absolute",
           "bitwise_not": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "power": "power"}

TRACEABLE = (set(OPS) - {"where", "random_uniform", "random_normal", "real", "imag", "complex",
                         "mul_naive", "div_py", "python_round", "mul_fits",
                         "power_by_scalar"} - set(PYTHON_MATH)) \
    | set(ALIASES) | {"divmod"}
LOGICAL = frozenset({"logical_and", "logical_or", "logical_xor", "logical_not"})
COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                         "isnan", "isinf", "isfinite", "signbit"})
# an ordering comparison with its operands swapped (a < b is b > a); others are symmetric
MIRRORED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
            "greater_equal": "less_equal"}
# ops whose result dtype differs from their operands' (the rest: result dtype == operand dtype)
BOOL_RESULT = COMPARISONS | LOGICAL
# ops costing tens of cycles per element (a call into libm or its vector twin): worth a
# buffer of their own rather than being computed again for every element they are spread to
EXPENSIVE = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                       "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                       "arccosh", "arctanh", "power", "hypot", "arctan2"})
