"""Elementwise ops: cppcodegen vs NumPy, batched (one compiled function per
(op group, dtype, input set)), one test per op so a failure names op + dtype.

Compilations in this module: ~60 (see the BATCHES lists below).
"""
import numpy as np
import pytest

from helpers import (ARITH, EXACT, TRANSCENDENTAL, Batch, bool_mixed, float_big,
                     float_mixed_1d, float_specials, int_mixed_1d, int_specials, rng)

F = {np.float32: "f32", np.float64: "f64"}
I = {np.int8: "i8", np.int16: "i16", np.uint8: "u8", np.int32: "i32", np.int64: "i64"}

# --------------------------------------------------------------------------
# unary float ops:  name -> (expression, tolerance)
# --------------------------------------------------------------------------
ZS = dict(ARITH, check_zero_sign=True)  # IEEE fixes the sign of zero results
UNARY_FLOAT = {
    "basic": {
        "neg_op": ("-x", ZS), "pos_op": ("+x", ZS), "abs_builtin": ("abs(x)", ZS),
        "negative": ("np.negative(x)", ZS), "positive": ("np.positive(x)", ZS),
        "abs": ("np.abs(x)", ZS), "absolute": ("np.absolute(x)", ZS),
        "sign": ("np.sign(x)", ARITH), "sqrt": ("np.sqrt(x)", ZS),
        "square": ("np.square(x)", ARITH), "reciprocal": ("np.reciprocal(x)", ZS),
        "floor": ("np.floor(x)", ZS), "ceil": ("np.ceil(x)", ZS),
        "trunc": ("np.trunc(x)", ZS), "rint": ("np.rint(x)", ZS),
        "modf_fraction": ("np.modf(x)[0]", ZS), "modf_whole": ("np.modf(x)[1]", ZS),
        "isnan": ("np.isnan(x)", EXACT), "isinf": ("np.isinf(x)", EXACT),
        "isfinite": ("np.isfinite(x)", EXACT), "signbit": ("np.signbit(x)", EXACT),
        "logical_not": ("np.logical_not(x)", EXACT),
    },
    "explog": {
        n: (f"np.{n}(x)", TRANSCENDENTAL) for n in
        ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sinh", "cosh", "tanh",
         "arcsinh", "arccosh", "arctanh"]
    },
    "trig": {
        n: (f"np.{n}(x)", TRANSCENDENTAL) for n in
        ["sin", "cos", "tan", "arcsin", "arccos", "arctan"]
    },
}


def _unary_float_batches():
    out = {}
    for dt, dn in F.items():
        for inp, make in [("1d131", lambda dt=dt: (float_mixed_1d(dt),)),
                          ("big", lambda dt=dt: (float_big(dt),))]:
            for group, ops in UNARY_FLOAT.items():
                key = f"unary-{group}-{dn}-{inp}"
                out[key] = (Batch(key, ["x"], {n: e for n, (e, _) in ops.items()}, make), ops)
    return out


UNARY_FLOAT_BATCHES = _unary_float_batches()


@pytest.mark.parametrize("batch,op,tol", [
    b.param(op, tol) for b, ops in UNARY_FLOAT_BATCHES.values() for op, (_, tol) in ops.items()])
def test_unary_float(batch, op, tol):
    batch.check(op, **tol)


# --------------------------------------------------------------------------
# unary ops over many input layouts / shapes (a few representative ops, each
# applied to every layout argument in one compiled function)
# --------------------------------------------------------------------------
LAYOUT_UNARY = {
    "neg": ("-{a}", ZS), "sqrt": ("np.sqrt({a})", ARITH), "sin": ("np.sin({a})", TRANSCENDENTAL),
    "floor": ("np.floor({a})", ARITH), "isnan": ("np.isnan({a})", EXACT),
    "affine": ("{a} * 2.0 + 1.0", ARITH), "mul_self": ("{a} * {a}", ARITH),
    "exp_neg": ("np.exp(-np.abs({a}))", TRANSCENDENTAL),
}


def _base(dt, shape, seed):
    x = rng(seed).uniform(-4, 4, shape).astype(dt)
    flat = x.reshape(-1)
    if flat.size >= 4:
        flat[:4] = np.array([np.nan, np.inf, -0.0, 0.25], dt)
    return x


def _layouts(dt):
    """name -> callable producing an array with that layout."""
    return {
        "strided": {
            "T": lambda: _base(dt, (5, 7), 10).T,
            "step": lambda: _base(dt, (9, 12), 11)[::2, 1:],
            "neg": lambda: _base(dt, (131,), 12)[::-1],
            "neg2d": lambda: _base(dt, (6, 8), 13)[::-1, ::-2],
            "bcast": lambda: np.broadcast_to(_base(dt, (7,), 14), (3, 7)),
            "bcast_col": lambda: np.broadcast_to(_base(dt, (4, 1), 15), (4, 6)),
            "bigT": lambda: _base(dt, (257, 1031), 16).T,
            "big_step": lambda: _base(dt, (257, 1031), 17)[1::3, ::-2],
        },
        "shapes": {
            "c2d": lambda: _base(dt, (3, 5), 20),
            "c3d": lambda: _base(dt, (2, 3, 4), 21),
            "one": lambda: _base(dt, (1,), 22)[:] + 0.5,
            "size1": lambda: _base(dt, (3, 1), 23),
            "size1_3d": lambda: _base(dt, (1, 5, 1), 24),
            "prime": lambda: _base(dt, (131,), 25),
        },
        "degenerate": {
            "d0": lambda: np.array(2.25, dt),
            "d0_neg": lambda: np.array(-0.0, dt),
            "empty": lambda: np.zeros((0,), dt),
            "empty2d": lambda: np.zeros((3, 0), dt),
            "empty3d": lambda: np.zeros((2, 0, 4), dt),
        },
    }


def _layout_batches():
    out = {}
    for dt, dn in F.items():
        for group, lay in _layouts(dt).items():
            names = list(lay)
            exprs, tols = {}, {}
            for ln in names:
                for op, (tmpl, tol) in LAYOUT_UNARY.items():
                    exprs[f"{op}[{ln}]"] = tmpl.format(a=ln)
                    tols[f"{op}[{ln}]"] = tol
            key = f"unary-layout-{group}-{dn}"
            make = (lambda lay=lay, names=names: tuple(lay[n]() for n in names))
            out[key] = (Batch(key, names, exprs, make), tols)
    return out


LAYOUT_BATCHES = _layout_batches()


@pytest.mark.parametrize("batch,op,tol", [
    b.param(op, tol) for b, tols in LAYOUT_BATCHES.values() for op, tol in tols.items()])
def test_unary_layouts(batch, op, tol):
    batch.check(op, **tol)


# --------------------------------------------------------------------------
# unary integer / bool ops
# --------------------------------------------------------------------------
def _unary_int_ops(dt):
    ops = {
        "neg_op": ("-x", EXACT), "negative": ("np.negative(x)", EXACT),
        "pos_op": ("+x", EXACT), "positive": ("np.positive(x)", EXACT),
        "abs": ("np.abs(x)", EXACT), "abs_builtin": ("abs(x)", EXACT),
        "sign": ("np.sign(x)", EXACT), "square": ("np.square(x)", EXACT),
        "invert_op": ("~x", EXACT), "invert": ("np.invert(x)", EXACT),
        "bitwise_not": ("np.bitwise_not(x)", EXACT),
        "logical_not": ("np.logical_not(x)", EXACT), "isfinite": ("np.isfinite(x)", EXACT),
        "isnan": ("np.isnan(x)", EXACT),
    }
    if np.dtype(dt).itemsize >= 2:  # int8/uint8 would compute in float16
        ops["sqrt"] = ("np.sqrt(x)", ARITH)
        ops["sin"] = ("np.sin(x)", TRANSCENDENTAL)
        ops["reciprocal_float"] = ("1.0 / x", ARITH)  # int / Python float -> float64
    return ops


def _unary_int_batches():
    out = {}
    for dt, dn in I.items():
        ops = _unary_int_ops(dt)
        key = f"unary-int-{dn}"
        out[key] = (Batch(key, ["x"], {n: e for n, (e, _) in ops.items()},
                          lambda dt=dt: (int_mixed_1d(dt),)), ops)
    ops = _unary_int_ops(np.int32)
    key = "unary-int-i32-big"
    out[key] = (Batch(key, ["x"], {n: e for n, (e, _) in ops.items()},
                      lambda: (rng(30).integers(-2**31, 2**31 - 1, (257, 1031),
                                                endpoint=True).astype(np.int32),)), ops)
    bops = {"invert_op": ("~x", EXACT), "invert": ("np.invert(x)", EXACT),
            "logical_not": ("np.logical_not(x)", EXACT), "abs": ("np.abs(x)", EXACT),
            "square": ("np.square(x)", EXACT), "isnan": ("np.isnan(x)", EXACT),
            "sqrt": ("np.sqrt(x)", ARITH), "not_not": ("~~x", EXACT)}
    key = "unary-bool"
    out[key] = (Batch(key, ["x"], {n: e for n, (e, _) in bops.items()},
                      lambda: (bool_mixed((131,)),)), bops)
    return out


UNARY_INT_BATCHES = _unary_int_batches()


@pytest.mark.parametrize("batch,op,tol", [
    b.param(op, tol) for b, ops in UNARY_INT_BATCHES.values() for op, (_, tol) in ops.items()])
def test_unary_int(batch, op, tol):
    batch.check(op, **tol)


# --------------------------------------------------------------------------
# binary float ops: every special value against every special value
# (x has shape (k,1), y shape (1,k): also exercises broadcasting)
# --------------------------------------------------------------------------
BINARY_FLOAT = {
    "arith": {
        "add_op": ("x + y", ZS), "sub_op": ("x - y", ZS), "mul_op": ("x * y", ZS),
        "div_op": ("x / y", ARITH), "floordiv_op": ("x // y", ARITH), "mod_op": ("x % y", ARITH),
        "add": ("np.add(x, y)", ARITH), "subtract": ("np.subtract(x, y)", ARITH),
        "multiply": ("np.multiply(x, y)", ARITH), "divide": ("np.divide(x, y)", ARITH),
        "true_divide": ("np.true_divide(x, y)", ARITH),
        "floor_divide": ("np.floor_divide(x, y)", ARITH),
        "remainder": ("np.remainder(x, y)", ARITH), "mod": ("np.mod(x, y)", ARITH),
        "maximum": ("np.maximum(x, y)", ARITH), "minimum": ("np.minimum(x, y)", ARITH),
        "fmax": ("np.fmax(x, y)", ARITH), "fmin": ("np.fmin(x, y)", ARITH),
        "copysign": ("np.copysign(x, y)", ZS),
    },
    "cmp": {
        "eq": ("x == y", EXACT), "ne": ("x != y", EXACT), "lt": ("x < y", EXACT),
        "le": ("x <= y", EXACT), "gt": ("x > y", EXACT), "ge": ("x >= y", EXACT),
        "equal": ("np.equal(x, y)", EXACT), "not_equal": ("np.not_equal(x, y)", EXACT),
        "less": ("np.less(x, y)", EXACT), "less_equal": ("np.less_equal(x, y)", EXACT),
        "greater": ("np.greater(x, y)", EXACT),
        "greater_equal": ("np.greater_equal(x, y)", EXACT),
        "logical_and": ("np.logical_and(x, y)", EXACT),
        "logical_or": ("np.logical_or(x, y)", EXACT),
        "logical_xor": ("np.logical_xor(x, y)", EXACT),
    },
    "transc": {
        "pow_op": ("x ** y", TRANSCENDENTAL), "power": ("np.power(x, y)", TRANSCENDENTAL),
        "hypot": ("np.hypot(x, y)", TRANSCENDENTAL),
        "arctan2": ("np.arctan2(x, y)", TRANSCENDENTAL),
    },
}


def _specials_pair(dt):
    s = float_specials(dt)
    extra = np.array([4.0, -4.0, 0.3, 2.0 / 3.0, 1e-3], dt)  # 1 // 0.1, 0.3 % 0.1 ...
    v = np.concatenate([s, extra])
    return v.reshape(-1, 1), v[::-1].reshape(1, -1).copy()


def _binary_float_batches():
    out = {}
    for dt, dn in F.items():
        inputs = [("specials", lambda dt=dt: _specials_pair(dt)),
                  ("big", lambda dt=dt: (float_big(dt, seed=40), float_big(dt, seed=41)))]
        for inp, make in inputs:
            for group, ops in BINARY_FLOAT.items():
                if inp == "big" and group == "cmp":
                    continue
                key = f"binary-{group}-{dn}-{inp}"
                out[key] = (Batch(key, ["x", "y"], {n: e for n, (e, _) in ops.items()}, make),
                            ops)
    return out


BINARY_FLOAT_BATCHES = _binary_float_batches()


@pytest.mark.parametrize("batch,op,tol", [
    b.param(op, tol) for b, ops in BINARY_FLOAT_BATCHES.values() for op, (_, tol) in ops.items()])
def test_binary_float(batch, op, tol):
    batch.check(op, **tol)


# binary ops over mixed layouts: (left layout, right layout) pairs
LAYOUT_BINARY = {
    "add": ("{a} + {b}", ARITH), "mul": ("{a} * {b}", ARITH), "div": ("{a} / {b}", ARITH),
    "maximum": ("np.maximum({a}, {b})", ARITH), "lt": ("{a} < {b}", EXACT),
    "arctan2": ("np.arctan2({a}, {b})", TRANSCENDENTAL),
}


def _binary_layout_pairs(dt):
    b = lambda shape, seed: _base(dt, shape, seed)  # noqa: E731
    return {
        "strided": {
            "T_c": (lambda: b((7, 5), 50).T, lambda: b((5, 7), 51)),
            "step_neg": (lambda: b((10, 9), 52)[::2, ::-2], lambda: b((5, 5), 53)[::-1]),
            "col_row": (lambda: b((3, 1), 54), lambda: b((1, 4), 55)),
            "bcast_T": (lambda: np.broadcast_to(b((6,), 56), (4, 6)), lambda: b((6, 4), 57).T),
            "big_T_c": (lambda: b((1031, 257), 58).T, lambda: b((257, 1031), 59)),
            "big_row": (lambda: b((257, 1031), 60)[:, ::-1], lambda: b((1031,), 61)),
            "rank3": (lambda: b((2, 1, 4), 62), lambda: b((3, 1), 63)),
        },
        "degenerate": {
            "d0_1d": (lambda: np.array(1.75, dt), lambda: b((7,), 64)),
            "d0_d0": (lambda: np.array(-3.5, dt), lambda: np.array(0.5, dt)),
            "empty_1": (lambda: np.zeros((0,), dt), lambda: b((1,), 65)),
            "empty2d": (lambda: np.zeros((3, 0), dt), lambda: np.zeros((1, 0), dt)),
            "empty_bcast": (lambda: np.zeros((0, 1), dt), lambda: b((1, 5), 66)),
            "one_one": (lambda: b((1,), 67), lambda: b((1, 1), 68)),
        },
    }


def _binary_layout_batches():
    out = {}
    for dt, dn in F.items():
        for group, pairs in _binary_layout_pairs(dt).items():
            params, makers, exprs, tols = [], [], {}, {}
            for pn, (ma, mb) in pairs.items():
                a, bb = f"{pn}_a", f"{pn}_b"
                params += [a, bb]
                makers += [ma, mb]
                for op, (tmpl, tol) in LAYOUT_BINARY.items():
                    exprs[f"{op}[{pn}]"] = tmpl.format(a=a, b=bb)
                    tols[f"{op}[{pn}]"] = tol
            key = f"binary-layout-{group}-{dn}"
            out[key] = (Batch(key, params, exprs,
                              lambda makers=makers: tuple(m() for m in makers)), tols)
    return out


BINARY_LAYOUT_BATCHES = _binary_layout_batches()


@pytest.mark.parametrize("batch,op,tol", [
    b.param(op, tol) for b, tols in BINARY_LAYOUT_BATCHES.values() for op, tol in tols.items()])
def test_binary_layouts(batch, op, tol):
    batch.check(op, **tol)


# --------------------------------------------------------------------------
# binary integer ops.  Divisors never contain 0, and INT_MIN is never divided
# by -1, so a wrong kernel can't SIGFPE the worker; those cases live in
# test_semantics.py (run in a subprocess).
# --------------------------------------------------------------------------
BINARY_INT = {
    "arith": {
        "add_op": "x + y", "sub_op": "x - y", "mul_op": "x * y",
        "add": "np.add(x, y)", "subtract": "np.subtract(x, y)", "multiply": "np.multiply(x, y)",
        "floordiv_op": "x // d", "floordiv_neg1": "xn // dn", "mod_op": "x % d",
        "mod_neg1": "xn % dn", "floor_divide": "np.floor_divide(x, d)",
        "remainder": "np.remainder(x, d)", "mod": "np.mod(x, d)", "divmod": "np.divmod(x, d)",
        "truediv_op": "x / d", "divide": "np.divide(xn, dn)",
        "maximum": "np.maximum(x, y)", "minimum": "np.minimum(x, y)",
        "fmax": "np.fmax(x, y)", "fmin": "np.fmin(x, y)",
        "pow_op": "x ** e", "power": "np.power(x, e)", "pow_const2": "x ** 2",
        "pow_const3": "x ** 3",
    },
    "bits": {
        "and_op": "x & y", "or_op": "x | y", "xor_op": "x ^ y",
        "bitwise_and": "np.bitwise_and(x, y)", "bitwise_or": "np.bitwise_or(x, y)",
        "bitwise_xor": "np.bitwise_xor(x, y)",
        "lshift_op": "x << s", "rshift_op": "x >> s", "left_shift": "np.left_shift(x, s)",
        "right_shift": "np.right_shift(x, s)",
        "left_shift_oversize": "np.left_shift(x, so)", "right_shift_oversize": "np.right_shift(x, so)",
        "eq": "x == y", "ne": "x != y", "lt": "x < y", "le": "x <= y", "gt": "x > y",
        "ge": "x >= y", "logical_and": "np.logical_and(x, y)",
        "logical_or": "np.logical_or(x, y)", "logical_xor": "np.logical_xor(x, y)",
    },
}
INT_PARAMS = ["x", "y", "d", "xn", "dn", "e", "s", "so"]


def _int_binary_args(dt):
    ii = np.iinfo(dt)
    bits = 8 * np.dtype(dt).itemsize
    s = int_specials(dt)
    r = rng(70)
    extra = r.integers(max(ii.min, -50), min(ii.max, 50), 6, endpoint=True).astype(dt)
    xv = np.concatenate([s, extra])
    x = xv.reshape(-1, 1)
    y = xv[::-1].reshape(1, -1).copy()
    d = y[(y != 0) & (y != -1)].reshape(1, -1)          # x may hold INT_MIN
    xn = x[x != ii.min].reshape(-1, 1)                 # no INT_MIN ...
    dn = y[y != 0].reshape(1, -1)                      # ... so -1 is fine
    e = np.array([0, 1, 2, 3, 5, 7, 8, 13, bits - 1], dt).reshape(1, -1)
    sh = np.array(sorted({0, 1, 2, 3, bits // 2, bits - 2, bits - 1}), dt).reshape(1, -1)
    over = [bits, bits + 1, min(100, ii.max)] + ([-1, -bits] if ii.min < 0 else [ii.max])
    so = np.array(over, dt).reshape(1, -1)
    return x, y, d, xn, dn, e, sh, so


def _binary_int_batches():
    out = {}
    for dt, dn_ in I.items():
        for group, ops in BINARY_INT.items():
            key = f"binary-int-{group}-{dn_}"
            out[key] = (Batch(key, INT_PARAMS, ops, lambda dt=dt: _int_binary_args(dt)), ops)

    def big_args():
        r = rng(71)
        x = r.integers(-2**31, 2**31 - 1, (257, 1031), endpoint=True).astype(np.int32)
        y = r.integers(-1000, 1000, (257, 1031), endpoint=True).astype(np.int32)
        y[y == 0] = 7
        y[y == -1] = 3
        s = r.integers(0, 31, (1, 1031), endpoint=True).astype(np.int32)
        return x, y, s

    ops = {"add": "x + y", "sub": "x - y", "mul": "x * y", "floordiv": "x // y", "mod": "x % y",
           "truediv": "x / y", "and": "x & y", "xor": "x ^ y", "lshift": "x << s",
           "rshift": "x >> s", "maximum": "np.maximum(x, y)", "lt": "x < y",
           "T_add": "x.T + y.T", "neg_stride": "x[::-1] - y"}
    out["binary-int-i32-big"] = (Batch("binary-int-i32-big", ["x", "y", "s"], ops, big_args), ops)

    bops = {"and_op": "x & y", "or_op": "x | y", "xor_op": "x ^ y", "eq": "x == y",
            "ne": "x != y", "lt": "x < y", "ge": "x >= y", "add": "x + y", "mul": "x * y",
            "logical_and": "np.logical_and(x, y)", "logical_or": "np.logical_or(x, y)",
            "logical_xor": "np.logical_xor(x, y)", "maximum": "np.maximum(x, y)",
            "minimum": "np.minimum(x, y)", "bitwise_and": "np.bitwise_and(x, y)",
            "add_int": "x + 1", "mul_float": "x * 1.5", "and_int8": "x & i8",
            "add_T": "x.T + y.T[::-1]"}
    out["binary-bool"] = (Batch("binary-bool", ["x", "y", "i8"], bops,
                                lambda: (bool_mixed((5, 7), 72), bool_mixed((5, 7), 73),
                                         np.arange(-3, 4, dtype=np.int8))), bops)
    return out


BINARY_INT_BATCHES = _binary_int_batches()


@pytest.mark.parametrize("batch,op", [
    b.param(op) for b, ops in BINARY_INT_BATCHES.values() for op in ops])
def test_binary_int(batch, op):
    batch.check(op)  # integer/bool results: exact (float ones, e.g. x / d: 2 ULP)


# --------------------------------------------------------------------------
# where / clip
# --------------------------------------------------------------------------
WHERE_CLIP = {
    "where": "np.where(c, x, y)", "where_scalar_f": "np.where(c, x, 0.5)",
    "where_scalar_i": "np.where(c, x, 3)", "where_cond_expr": "np.where(x > y, x, -y)",
    "where_consts": "np.where(c, 1, 2)", "where_bcast": "np.where(c[:, :1], x, y[0])",
    "where_nan": "np.where(c, x, np.nan)", "where_T": "np.where(c.T, x.T, y.T)",
    "clip_scalars": "np.clip(x, -2, 5)", "clip_float_scalars": "np.clip(x, -1.5, 2.5)",
    "clip_arrays": "np.clip(x, lo, hi)", "clip_method": "x.clip(-3, 3)",
    "clip_lo_only": "np.clip(x, -1, None)", "clip_hi_only": "np.clip(x, None, 2)",
    "clip_crossed": "np.clip(x, 2, -2)",
}


def _where_args(dt):
    r = rng(80)
    if np.dtype(dt).kind == "f":
        x = r.uniform(-6, 6, (6, 9)).astype(dt)
        x.flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 2.0]
        y = r.uniform(-6, 6, (6, 9)).astype(dt)
        lo = r.uniform(-3, 0, (1, 9)).astype(dt)
        lo[0, 0] = np.nan
        hi = r.uniform(0, 3, (6, 1)).astype(dt)
    else:
        x = r.integers(-8, 8, (6, 9)).astype(dt)
        y = r.integers(-8, 8, (6, 9)).astype(dt)
        lo = r.integers(-4, 0, (1, 9)).astype(dt)
        hi = r.integers(0, 4, (6, 1)).astype(dt)
    return bool_mixed((6, 9), 81), x, y, lo, hi


WHERE_BATCHES = {
    f"where-clip-{dn}": Batch(f"where-clip-{dn}", ["c", "x", "y", "lo", "hi"], WHERE_CLIP,
                              lambda dt=dt: _where_args(dt))
    for dt, dn in [(np.float32, "f32"), (np.float64, "f64"), (np.int32, "i32"), (np.int8, "i8")]
}


@pytest.mark.parametrize("batch,op", [b.param(op) for b in WHERE_BATCHES.values()
                                      for op in WHERE_CLIP])
def test_where_clip(batch, op):
    batch.check(op, check_zero_sign=False, **ARITH)


# --------------------------------------------------------------------------
# astype: every source dtype to every target dtype, values chosen where the
# C++ conversion is defined (no NaN/inf/out-of-range float -> int)
# --------------------------------------------------------------------------
TARGETS = ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _astype_args():
    r = rng(90)
    fl = np.concatenate([r.uniform(-120, 120, 40), [-2.7, -2.5, -0.5, -0.0, 0.0, 0.5, 2.5, 2.7,
                                                     127.9, -128.9, 1e-30, 3.0]])
    f64 = fl.astype(np.float64)
    f32 = fl.astype(np.float32)
    f64wide = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 3.4e38, 3.5e38, 1e-320,
                        1.0000000596046448, 0.1, -0.0], np.float64)  # -> float32 / float64 / bool
    ints = {dt: int_mixed_1d(dt, n=37, seed=91) for dt in (np.int8, np.uint8, np.int32, np.int64)}
    b = bool_mixed((17,), 92)
    return f32, f64, f64wide, ints[np.int8], ints[np.uint8], ints[np.int32], ints[np.int64], b


ASTYPE_PARAMS = ["f32", "f64", "f64w", "i8", "u8", "i32", "i64", "b"]


def _astype_exprs(sources):
    ex = {}
    for src in sources:
        for t in TARGETS:
            if src in ("f32", "f64") and t == "uint8":
                ex[f"{src}->{t}"] = f"np.abs({src}).astype(np.uint8)"
            else:
                ex[f"{src}->{t}"] = f"{src}.astype(np.{t})"
    return ex


ASTYPE_FLOAT = _astype_exprs(["f32", "f64"])
ASTYPE_FLOAT.update({"f64w->float32": "f64w.astype(np.float32)",
                     "f64w->bool": "f64w.astype(bool)",
                     "f64w->float64": "f64w.astype(np.float64)",
                     "f32->float64_mul": "f32.astype(np.float64) * 3.0",
                     "f64->int32_add": "f64.astype(np.int32) + 1",
                     "astype_T": "f64.reshape(4, 13).T.astype(np.float32)",
                     "astype_copy_false": "f32.astype(np.float32, copy=False) + 0"})
ASTYPE_INT = _astype_exprs(["i8", "u8", "i32", "i64", "b"])
ASTYPE_INT.update({"i32->int8_wrap_add": "(i32.astype(np.int8) + 100).astype(np.int16)",
                   "b->float32_sum": "b.astype(np.float32) + b"})
ASTYPE_BATCHES = {
    "astype-from-float": (Batch("astype-from-float", ASTYPE_PARAMS, ASTYPE_FLOAT, _astype_args),
                          ASTYPE_FLOAT),
    "astype-from-int": (Batch("astype-from-int", ASTYPE_PARAMS, ASTYPE_INT, _astype_args),
                        ASTYPE_INT),
}


@pytest.mark.parametrize("batch,op", [b.param(op) for b, ops in ASTYPE_BATCHES.values()
                                      for op in ops])
def test_astype(batch, op):
    batch.check(op, **EXACT)  # conversions are exact / correctly rounded


def _int_quotients(a, b):
    return np.floor_divide(a, b), np.remainder(a, b), np.fmod(a, b), a // 7, a % 7


@pytest.mark.parametrize("dt", [np.int64, np.uint64])
def test_64_bit_quotients_on_both_sides_of_32_bits(dt):
    """64-bit quotients and remainders take a 32-bit divide where both operands fit 32
    unsigned bits (include/cppcodegen/scalar.h ``detail::divide``): NumPy's values for
    operands below, at and above 2**32, negative ones, the minimum over -1 and zero."""
    import cppcodegen
    info = np.iinfo(dt)
    edges = [0, 1, 2, 3, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1,
             2 ** 40 + 3, int(info.max)]
    if dt == np.int64:
        edges += [-1, -2, -7, -2 ** 32, -2 ** 32 - 1, int(info.min)]
    a, b = np.meshgrid(np.array(edges, dtype=dt), np.array(edges, dtype=dt))
    with np.errstate(all="ignore"):
        want = _int_quotients(a.ravel(), b.ravel())
    got = cppcodegen.compile(_int_quotients)(a.ravel(), b.ravel())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
