"""C++ spellings of the small things: types, literals, index expressions, and the
expression renderer (one class, two modes: scalar C++ and ``ccg::Vec`` code).

In: loop-IR expressions. Out: C++ statements written through a CodeWriter, each
sub-expression once (common subexpressions become named temporaries).
"""
from __future__ import annotations

import contextvars
import math
from fractions import Fraction

import numpy as np
import sympy

from ..ir.loopir import SEARCH_VAR, STATUS, Const, FloorDiv, Gather, Index, Load, Op, Scalar, Search, walk
from ..ir.ufuncs import COMPLEX_TEMPLATES, OPS

CTYPES = {
    np.dtype("bool"): "bool", np.dtype("int8"): "int8_t", np.dtype("int16"): "int16_t",
    np.dtype("int32"): "int32_t", np.dtype("int64"): "int64_t", np.dtype("uint8"): "uint8_t",
    np.dtype("uint16"): "uint16_t", np.dtype("uint32"): "uint32_t", np.dtype("uint64"): "uint64_t",
    np.dtype("float16"): "_Float16", np.dtype("float32"): "float", np.dtype("float64"): "double",
    np.dtype("complex64"): "ccg::c64", np.dtype("complex128"): "ccg::c128",
}
HALF = np.dtype("float16")
VEC_TYPES = frozenset(np.dtype(t) for t in (
    "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
COMPLEX_TYPES = frozenset(np.dtype(t) for t in ("complex64", "complex128"))  # ccg::Vec<ccg::c128, L> too
BOOL = np.dtype(bool)


# float64 functions that scalar code outside vector loops takes from the C library (Python's
# math module and NumPy's scalar loops do: a scalar loop integrating a chaotic system gives
# Python's bits), not from libmvec, whose vector lanes and their scalar tails agree instead
LIBM = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                  "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                  "arctanh", "arctan2", "hypot"})


def _bit_test(e) -> str | None:
    """``(x & m) != 0`` / ``== 0`` of a non-negative constant mask as ``> 0`` / ``<= 0`` (the
    same truth: the and is then never negative). GCC 12 does not vectorize a loop holding the
    bool of ``(x & 1) != 0`` of int64 (its bool pattern finds no vector type), and such a
    test of a bit (``if x[i] & 1:``, ``(x >> b) & 1``) kept a proved loop out of the SIMD
    lanes: 7.8 -> 0.5 ms for 10^6 elements, measured."""
    if e.name not in ("not_equal", "equal") or len(e.args) != 2:
        return None
    a, b = e.args
    if isinstance(a, Const):
        a, b = b, a
    if not (isinstance(b, Const) and b.value == 0 and isinstance(a, Op) and
            a.name == "bitwise_and" and a.dtype.kind in "iu" and
            any(isinstance(m, Const) and 0 <= int(m.value) for m in a.args)):
        return None
    zero = "{1}" if isinstance(e.args[0], Op) else "{0}"
    value = "{0}" if zero == "{1}" else "{1}"
    return f"({value} > {zero})" if e.name == "not_equal" else f"({value} <= {zero})"


def ctype(dtype) -> str:
    try:
        return CTYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"cppcodegen has no C++ type for dtype {dtype}") from None


def literal(value, dtype) -> str:
    dtype = np.dtype(dtype)
    t = ctype(dtype)
    if dtype == BOOL:
        return "true" if value else "false"
    if dtype.kind == "c":           # ccg::c128(re, im), each part a literal of the part type
        part = np.dtype(f"f{dtype.itemsize // 2}")
        z = complex(value)
        return f"{t}({literal(z.real, part)}, {literal(z.imag, part)})"
    if dtype.kind == "f":
        v = float(value)
        if math.isnan(v):
            return f"std::numeric_limits<{t}>::quiet_NaN()"
        if math.isinf(v):
            return f"{'-' if v < 0 else ''}std::numeric_limits<{t}>::infinity()"
        return f"{t}({v!r})"
    v = int(value)
    if dtype.kind == "i" and v == np.iinfo(dtype).min:
        return f"std::numeric_limits<{t}>::min()"
    return f"{t}({v}{'ULL' if dtype.kind == 'u' else 'LL'})"


# ----------------------------------------------------------------- index expressions

def simplify_offset(expr):
    """Rewrite Mod(a, m) as a - m*floor(a/m) when that cancels terms (reshape round trips)."""
    expr = sympy.expand(expr)
    if not expr.has(sympy.Mod):
        return expr
    alt = sympy.expand(expr.replace(sympy.Mod, lambda a, m: a - m * (
        sympy.floor(a / m) if m.is_Integer else FloorDiv(a, m))))
    return alt if sympy.count_ops(alt) <= sympy.count_ops(expr) else expr


def cindex(expr) -> str:
    """C++ for a non-negative integer index expression."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return str(int(expr))
    if expr.is_Symbol:
        return expr.name
    if isinstance(expr, sympy.Add):
        parts = [cindex(a) for a in sorted(expr.args, key=sympy.default_sort_key)]
        return "(" + " + ".join(parts) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(cindex(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.floor):
        arg = sympy.expand(expr.args[0])
        den = 1
        for t in sympy.Add.make_args(arg):
            c, _ = t.as_coeff_Mul()
            den = math.lcm(den, Fraction(str(c)).denominator)
        return f"ccg_idx_div({cindex(sympy.expand(arg * den))}, {den})"
    if isinstance(expr, (sympy.Min, sympy.Max)):
        fn = "std::min" if isinstance(expr, sympy.Min) else "std::max"
        out = cindex(expr.args[0])
        for a in expr.args[1:]:
            out = f"{fn}<int64_t>({out}, {cindex(a)})"
        return out
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        return "(" + " * ".join([cindex(expr.base)] * int(expr.exp)) + ")"
    if isinstance(expr, sympy.Mod):
        return f"ccg_idx_mod({cindex(expr.args[0])}, {cindex(expr.args[1])})"
    if isinstance(expr, FloorDiv):               # a symbolic divisor (dynamic shapes)
        return f"ccg_idx_div({cindex(expr.args[0])}, {cindex(expr.args[1])})"
    raise NotImplementedError(f"index expression {expr}")


def linear_coefficient(expr, var):
    """The coefficient of ``var`` if ``expr`` is affine in it, else None: an int, or (a
    symbolic stride of a dynamic-shape input) an expression of size symbols."""
    expr = sympy.expand(expr)
    if var not in expr.free_symbols:
        return 0
    for f in expr.atoms(sympy.Function, sympy.Mod, sympy.Min, sympy.Max):
        if var in f.free_symbols:
            return None
    c = expr.diff(var)
    if c.is_Integer:
        return int(c)
    return c if var not in c.free_symbols else None


# ----------------------------------------------------------------- expressions

def _operand_dtype(e: Op):
    return e.args[1].dtype if e.name == "where" else e.args[0].dtype


FLOATS = frozenset(np.dtype(t) for t in ("float32", "float64"))


def const_power(e: Op):
    """``ccg::powc<P>({0})`` (x ** (P / 2) by multiplies, include/cppcodegen/vec.h) for
    np.power of a float32/float64 array by a constant integer or half-integer exponent up to
    8 in magnitude; ``ccg::cpowi<E>({0})`` for a complex one by E in 1..8; else None. The one
    place that picks it, for both renderers."""
    p = _doubled_exponent(e)
    if p is None:
        return None
    return f"ccg::cpowi<{p // 2}>({{0}})" if e.dtype.kind == "c" else f"ccg::powc<{p}>({{0}})"


def _doubled_exponent(e: Op) -> int | None:
    """Twice the constant exponent of a power ``const_power`` writes out, else None."""
    if e.name != "power" or e.args[0].dtype != e.dtype or \
            e.dtype not in FLOATS and e.dtype.kind != "c":
        return None
    y = e.args[1]
    while isinstance(y, Op) and y.name == "cast":
        y = y.args[0]
    if not isinstance(y, Const) or y.dtype == BOOL:
        return None
    if e.dtype.kind == "c":     # z ** 3: npy_cpow's products (include/cppcodegen/complex.h)
        v = complex(y.value)
        return 2 * int(v.real) if v.imag == 0 and v.real in range(1, 9) else None
    p = 2 * float(y.value)
    return int(p) if p.is_integer() and abs(p) <= 16 else None


def _whole_power(e: Op) -> bool:
    """Is ``e`` powc's power by a constant positive integer (multiplies only)?"""
    p = _doubled_exponent(e)
    return p is not None and p > 0 and p % 2 == 0


def pow2_divisor(e: Op, vector: bool = False):
    """Integer ``x % 2**k`` as ``x & (2**k - 1)`` and ``x // 2**k`` as ``x >> k`` (scalar
    code only: the vector table has no shift), else None. Both are NumPy's floor semantics
    for a positive power-of-two divisor in two's complement, where ``ccg::mod``'s sign fix-up
    kept GCC from seeing it: a linear congruential generator's ``% 2**31`` carried through a
    loop cost 10 cycles a step, measured 1.66 -> 0.6 ms for 5*10^5 steps."""
    if e.name not in ("remainder", "floor_divide") or e.dtype.kind not in "iu" or \
            any(a.dtype != e.dtype for a in e.args):
        return None
    m = e.args[1]
    if not isinstance(m, Const) or int(m.value) <= 1 or int(m.value) & (int(m.value) - 1):
        return None
    m = int(m.value)
    if e.name == "remainder":
        mask = literal(m - 1, e.dtype)
        return f"({{0}} & ccg::Vec<{{T}}, L>::broadcast({mask}))" if vector else f"({{0}} & {mask})"
    return None if vector else f"({{0}} >> {m.bit_length() - 1})"


def vector_template(e: Op):
    """The ccg::Vec template for op ``e``, or None if the vector renderer cannot write it."""
    if special := const_power(e) or pow2_divisor(e, vector=True):   # (each None if not its op)
        return special
    if e.name == "group":
        return "group"
    if e.name == "cast":
        src, dst = e.args[0].dtype, e.dtype
        ok = {src, dst} <= VEC_TYPES | COMPLEX_TYPES | {BOOL}
        return "cast" if ok else None
    opdef = OPS[e.name]
    dt = _operand_dtype(e)
    if dt in COMPLEX_TYPES:
        return COMPLEX_TEMPLATES[e.name][1] if e.name in COMPLEX_TEMPLATES else opdef.vector
    if dt == BOOL:
        return opdef.vector_bool
    if dt not in VEC_TYPES:
        return None
    if dt.kind in "iu" and not opdef.vector_ints:
        return None
    return opdef.vector


class ExprRenderer:
    """Writes the statements computing an expression; remembers what it already wrote.

    mode 'scalar': plain C++ values. mode 'vector': ccg::Vec<T, L> / ccg::Mask<L> values
    for the lanes ``var .. var+L-1`` of the vector loop variable ``var`` (a sympy Symbol).
    ``locals_`` maps buffers held in local variables to their C++ names; ``tail`` is the
    C++ name of the lane count for partial vectors (None = full vectors).
    """

    def __init__(self, w, buffers, locals_: dict, mode: str = "scalar", var=None, reuse=None,
                 exact: bool = False):
        self.w, self.buffers, self.locals = w, buffers, locals_
        self.mode, self.var = mode, var
        self.exact = exact  # scalar code of no vector loop: float64 math from the C library
        self.reuse = reuse or {}     # id(expr) -> (scratch array, 'store'|'load', index)
        self.names: dict[int, str] = {}
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def __call__(self, expr) -> str:
        reuse = self.reuse
        stop = {k for k, (_, mode, _) in reuse.items() if mode == "load"}
        hoist = invariant_roots(expr, self.var, set(reuse)) if self.mode == "vector" else set()
        for e in walk(expr, stop | hoist):
            if id(e) in self.names:
                continue
            if id(e) in hoist:        # the same in every lane: scalar code, broadcast
                scalar = ExprRenderer(self.w, self.buffers, self.locals, exact=True)
                scalar.count = self.count
                value = scalar(e)
                self.count = scalar.count
                self.names[id(e)] = self._bind(f"{self.vtype(e.dtype)}::broadcast({value})")
                continue
            entry = reuse.get(id(e))
            if entry is not None and entry[1] == "load":
                arr, _, idx = entry
                vt = self.vtype(e.dtype)
                text = f"{vt}::load({arr} + {idx})" if self.mode == "vector" else f"{arr}[{idx}]"
                self.names[id(e)] = self._bind(text)
                continue
            self.names[id(e)] = self._emit(e)
            if entry is not None:            # the first stage computing it keeps it
                arr, _, idx = entry
                name = self.names[id(e)]
                self.w.line(f"{name}.store({arr} + {idx});" if self.mode == "vector"
                            else f"{arr}[{idx}] = {name};")
        return self.names[id(expr)]

    def _bind(self, text: str) -> str:
        name = self.fresh()
        self.w.line(f"auto {name} = {text};")
        return name

    # -- scalar mode
    def _emit(self, e) -> str:
        if isinstance(e, Op) and e.name == "group":      # several outputs of one loop
            return ""
        if self.mode == "vector":
            return self._emit_vector(e)
        if isinstance(e, Const):
            return literal(e.value, e.dtype)
        if isinstance(e, Scalar):
            return e.name
        if isinstance(e, Index):
            return f"{ctype(e.dtype)}({cindex(e.expr)})"
        if isinstance(e, Search):       # a binary search of a sorted 1-D buffer
            buf = self.buffers[e.buf]
            off = sympy.expand(sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0)))
            side = "true" if e.right else "false"
            return self._bind(f"ccg::search_sorted<{side}>({e.buf} + {cindex(off.subs(SEARCH_VAR, 0))}, "
                              f"{cindex(e.length)}, {cindex(off.coeff(SEARCH_VAR))}, "
                              f"{self.names[id(e.value)]})")
        if isinstance(e, Gather):       # NumPy's checks on each index, then the load
            guard = "false" if not e.checked else \
                None if e.guard is None else self.names[id(e.guard)]
            return self._bind(f"ccg::ld({e.buf} + {self.offset(e, self.checked(e.binds, guard))})")
        if isinstance(e, Load):
            if e.buf in self.locals:
                return self.locals[e.buf]
            buf = self.buffers.get(e.buf)
            if buf is not None and buf.shape == () and buf.role not in ("input", "constant"):
                # a value of the program's own (a loop's scalar, a lane's private): aligned,
                # and read as itself so the compiler keeps it in a register (through the
                # packed struct it stays in memory, and a SIMD loop of it does not vectorize)
                return self._bind(f"{e.buf}[0]")
            # ccg::ld: NumPy arrays may be misaligned (include/cppcodegen/scalar.h)
            return self._bind(f"ccg::ld({e.buf} + {self.offset(e)})")
        args = [self.names[id(a)] for a in e.args]
        # float16 is stored as _Float16 and computed in float, as NumPy does
        args = [f"static_cast<float>({n})" if a.dtype == HALF else n for n, a in zip(args, e.args)]
        if e.name == "cast":
            src = np.dtype("float32") if e.args[0].dtype == HALF else e.args[0].dtype
            return self._bind(self.scalar_cast(args[0], src, e.dtype))
        opdef = OPS[e.name]
        dt = _operand_dtype(e)
        template = opdef.scalar_bool if dt == BOOL and opdef.scalar_bool else opdef.scalar
        if dt in COMPLEX_TYPES and e.name in COMPLEX_TEMPLATES:
            template = COMPLEX_TEMPLATES[e.name][0]
        template = const_power(e) or template
        template = _bit_test(e) or pow2_divisor(e) or template
        if self.exact and e.name in LIBM and e.dtype == np.float64:
            template = template.replace("ccg::", "std::", 1)
        elif self.exact and e.name == "power" and e.dtype == np.float64 and \
                not _whole_power(e):
            template = "ccg::libm_pow({0}, {1})"    # (Python's float ** is the C library's
            # pow, whose x ** 2 is not always x * x: 1.885376393636725 ** 2 ends in ...225;
            # a constant positive integer exponent is powc's multiplies, rounded once: within
            # a unit in the last place of pow's, at the cost of the multiplies; a half or
            # negative one is pow itself, exact and cheaper than powc's double-double root:
            # r2 ** 1.5 in a pair loop, 26 -> 11 ms for 10^6 pairs)
        text = template.format(*args, T="float" if e.dtype == HALF else ctype(e.dtype))
        text = miscompiled(e, text)
        if e.dtype == HALF:
            text = f"static_cast<_Float16>({text})"
        if e.dtype.kind in "iu":
            text = f"static_cast<{ctype(e.dtype)}>({text})"
        return self._bind(text)

    def checked(self, binds, guard: str | None = None, store: bool = False) -> dict:
        """Each bound index (``Gather.binds``, a scatter's) wrapped and checked as NumPy does
        (``ccg::checked_index``: with ``guard``, an error counts only where it holds; a
        ``store``'s is -1 where out of range), named: {its symbol: the C++ variable}. The
        values must be rendered already."""
        tail = "" if guard is None else f", {guard}"
        fn = "ccg::checked_store_index" if store else "ccg::checked_index"
        return {sympy.Symbol(name, integer=True): sympy.Symbol(self._bind(
            f"{fn}({self.names[id(v)]}, {cindex(size)}, {STATUS}, {axis}{tail})"),
            integer=True) for name, size, v, axis in binds}

    @staticmethod
    def scalar_cast(x: str, src, dst) -> str:
        if src.kind == "c":         # NumPy's casts from complex (complex.h): the real part
            return f"static_cast<bool>({x})" if dst == BOOL else f"ccg::cast<{ctype(dst)}>({x})"
        if dst == BOOL:
            return f"({x} != 0)"
        if src.kind == "f" and dst.kind in "iu":
            return f"ccg::cast<{ctype(dst)}>({x})"
        return f"static_cast<{ctype(dst)}>({x})"

    def offset(self, e: Load, rename=None) -> str:
        buf = self.buffers[e.buf]
        off = sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0))
        return cindex(simplify_offset(off if rename is None else off.xreplace(rename)))

    # -- vector mode
    def vtype(self, dtype) -> str:
        return "ccg::Mask<L>" if dtype == BOOL else f"ccg::Vec<{ctype(dtype)}, L>"

    def _bytes(self, e, dst):
        """The pointer of a contiguous bool load as ``dst`` bytes (a 1-byte integer), else
        None."""
        if np.dtype(dst).itemsize != 1 or type(e) is not Load or e.buf in self.locals:
            return None
        buf = self.buffers[e.buf]
        off = simplify_offset(sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0)))
        if linear_coefficient(off, self.var) != 1:
            return None
        return f"reinterpret_cast<const {ctype(dst)}*>({e.buf} + {cindex(off)})"

    def _emit_vector(self, e) -> str:
        if isinstance(e, (Const, Scalar)):
            scalar = literal(e.value, e.dtype) if isinstance(e, Const) else e.name
            return self._bind(f"{self.vtype(e.dtype)}::broadcast({scalar})")
        if isinstance(e, Index):
            c = linear_coefficient(e.expr, self.var)
            start = cindex(e.expr)
            if c == 0:
                return self._bind(f"{self.vtype(e.dtype)}::broadcast({start})")
            return self._bind(f"{self.vtype(e.dtype)}::iota({start})")
        if isinstance(e, Load):
            vt = self.vtype(e.dtype)
            if e.buf in self.locals:
                return self._bind(f"{vt}::broadcast({self.locals[e.buf]})")
            buf = self.buffers[e.buf]
            off = simplify_offset(sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0)))
            c = linear_coefficient(off, self.var)
            ptr = f"{e.buf} + {cindex(off)}"
            if buf.dtype != e.dtype:        # a bool buffer's bytes (passes/bool_bytes.py)
                ptr = f"reinterpret_cast<const {ctype(e.dtype)}*>({ptr})"
            if c == 0:
                return self._bind(f"{vt}::broadcast(ccg::ld({ptr}))")
            if c == 1:
                return self._bind(f"{vt}::load({ptr})")
            return self._bind(f"{vt}::load_strided({ptr}, {cindex(c)})")
        args = [self.names[id(a)] for a in e.args]
        template = vector_template(e)
        if template == "cast":
            src, dst = e.args[0].dtype, e.dtype
            if dst == BOOL:
                return self._bind(f"ccg::to_mask({args[0]})")
            if src == BOOL:
                ptr = self._bytes(e.args[0], dst)
                if ptr is not None:     # bools are 0/1 bytes: loaded as the byte type itself
                    return self._bind(f"{self.vtype(dst)}::load({ptr})")
                return self._bind(f"ccg::from_mask<{ctype(dst)}>({args[0]})")
            return self._bind(f"ccg::convert<{ctype(dst)}>({args[0]})")
        return self._bind(miscompiled(e, template.format(*args, T=ctype(e.dtype)), self.vtype(e.dtype)))


TESTING_MISCOMPILE = contextvars.ContextVar("cppcodegen_testing_miscompile", default="")
"""Testing only (option ``_testing_miscompile``, set by the driver around ``generate``)."""


def miscompiled(e: Op, text: str, vtype: str | None = None) -> str:
    """``text``, or for the op named by TESTING_MISCOMPILE a wrong value: ``text * 1.001``."""
    if e.name != TESTING_MISCOMPILE.get():
        return text
    k = f"{'float' if e.dtype == HALF else ctype(e.dtype)}(1.001)"
    return f"(({text}) * {vtype + '::broadcast(' + k + ')' if vtype else k})"


def vectorizable(expr, var, buffers, locals_) -> bool:
    """Can ExprRenderer write ``expr`` in vector mode along ``var``?"""
    for e in walk(expr):
        if e.dtype not in VEC_TYPES | COMPLEX_TYPES and e.dtype != BOOL or isinstance(e, Gather):
            return False
        if isinstance(e, Op) and vector_template(e) is None:
            return False
        if isinstance(e, Index) and linear_coefficient(e.expr, var) not in (0, 1):
            return False
        if isinstance(e, Load) and e.buf not in locals_:
            buf = buffers[e.buf]
            off = simplify_offset(sum((i * s for i, s in zip(e.index, buf.strides)), sympy.Integer(0)))
            if linear_coefficient(off, var) is None:
                return False
    return True


def invariant_roots(expr, var, variant=frozenset()) -> set:
    """ids of the largest ops of ``expr`` whose value is the same in every lane of ``var``
    (``i0 >= 1 and i0 <= 1998`` in a loop over i1): the vector renderer computes each once,
    as scalar code, and broadcasts it. ``variant``: ids never treated as invariant."""
    inv = {}
    for e in walk(expr):
        if id(e) in variant:
            inv[id(e)] = False
        elif isinstance(e, (Const, Scalar)):
            inv[id(e)] = True
        elif isinstance(e, Index):
            inv[id(e)] = var not in e.expr.free_symbols
        elif isinstance(e, Load):
            inv[id(e)] = not any(var in sympy.sympify(i).free_symbols for i in e.index)
        else:
            inv[id(e)] = isinstance(e, Op) and e.name != "group" and all(inv[id(a)] for a in e.args)
    roots = {id(a) for e in walk(expr) if isinstance(e, Op) and not inv[id(e)]
             for a in e.args if isinstance(a, Op) and inv[id(a)]}
    return roots | ({id(expr)} if isinstance(expr, Op) and inv[id(expr)] else set())


def lanes_itemsize(expr, var=None) -> int:
    """The widest element of ``expr`` in bytes: a complex lane counts its part (a
    ccg::Vec<ccg::c128, L> holds a Vec<double, L> per part). With ``var``, the inside of
    parts the same in every lane (invariant_roots) does not count."""
    stop = set() if var is None else invariant_roots(expr, var)
    sizes = [e.dtype.itemsize // (2 if e.dtype.kind == "c" else 1) for e in walk(expr, stop)
             if e.dtype != BOOL]
    # 8- and 16-bit lanes alone: twice the lanes of 32-bit ones (a register of uint8 on
    # AVX2 is 16 of them; 8 would be a half-register vector GCC lowers lane by lane)
    return max(sizes + [2 if sizes and max(sizes) <= 2 else 4])
