"""Random NumPy programs of 1-12 ops, reproducible from (seed, index).

In: a seed and an index. Out: a ``Program`` whose statements were each checked by running
them with NumPy on the real inputs while generating (a value search): a candidate op is
thrown away and another drawn when NumPy raises, when the result has a dtype outside
bool/int32/int64/float32/float64/complex64/complex128 (e.g. float16 from exp(bool)), more than
MAX_SIZE elements,
or drowns in NaN/inf (more than a quarter of the new float elements non-finite where its
operands were finite).

Generated although NumPy's answer is "whatever x86 does" (tests/test_loop_matrix.py pins
these facts down, and NumPy gives them at every length and stride): float -> int casts of
NaN, +-inf and out-of-range values (INT_MIN), ``np.reciprocal`` of integers (1.0 / x
converted back: reciprocal(0) is INT_MIN for int32/int64).

Deliberately not generated (NumPy corners cppcodegen does not promise to match):
* the sign bit of a NaN (``np.signbit``, ``np.copysign`` with NaN operands): IEEE 754
  leaves the sign of a NaN produced by arithmetic unspecified, x86 makes it negative and
  NumPy's loops propagate the input's; not a promise cppcodegen makes;
* ``np.fmin``/``np.fmax`` of +0.0 against -0.0: NumPy returns either operand depending on
  the array's length (its SIMD and scalar loops differ), so there is no single answer;
* float16 and other dtypes: results of other dtypes are rejected.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import families
from .inputs import DOMAINS, DTYPES, InputSpec
from .program import Program, Stmt

SIZES = (0, 1, 1, 2, 3, 5, 7, 11, 13, 17, 31, 61, 127, 131)
MAX_SIZE = 20000
MAX_INPUT_SIZE = 6000
OK_DTYPES = {np.dtype(d) for d in DTYPES}

UNARY_FLOAT = ("exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh "
               "cosh tanh arcsinh arccosh arctanh sqrt floor ceil trunc rint reciprocal").split()
UNARY_ANY = "negative positive absolute sign square isnan isinf isfinite signbit logical_not".split()
UNARY_COMPLEX = ("np.conj({0})", "{0}.real", "{0}.imag", "np.angle({0})", "{0}.conj()",
                 "np.real({0})", "np.imag({0})")
UNARY_OPS = {"negative": "-{0}", "absolute": "abs({0})", "invert": "~{0}", "positive": "+{0}"}
BINARY_ARITH = "add subtract multiply divide floor_divide remainder fmod power".split()
BINARY_FLOAT = "arctan2 hypot copysign".split()
BINARY_MINMAX = "maximum minimum fmax fmin".split()
BINARY_LOGIC = "logical_and logical_or logical_xor".split()
BINARY_BITS = "bitwise_and bitwise_or bitwise_xor left_shift right_shift".split()
COMPARE = "equal not_equal less less_equal greater greater_equal".split()
BIN_OPS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
           "remainder": "%", "power": "**", "bitwise_and": "&", "bitwise_or": "|",
           "bitwise_xor": "^", "left_shift": "<<", "right_shift": ">>", "equal": "==",
           "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
           "greater_equal": ">="}
ALIASES = {"remainder": "mod", "divide": "true_divide", "absolute": "abs", "invert": "bitwise_not"}
REDUCE = "sum prod mean max min argmax argmin any all var std".split()
INT_LITERALS = (0, 1, 2, 3, 5, 7, -1, -2, -3, 31, 64, 100)
FLOAT_LITERALS = (0.5, 2.0, -1.5, 1.0, 0.0, -0.0, 3.25, 1e-3, 10.0, -7.0)
COMPLEX_LITERALS = ("1j", "(0.5-2j)", "-1j", "(2+0j)", "(-1.5+0.25j)")


# Substrings of statement templates never generated: known, already reported bugs (see
# KNOWN_BUGS in tests/test_fuzz.py) so that long runs look for new ones. Set by the CLI.
AVOID: set = set()


class Reject(Exception):
    pass


def _np_eval(line, env):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = dict(env)
        ns["np"] = np
        exec(line, ns)
        return ns


def _nonfinite_frac(a):
    a = np.asarray(a)
    if a.dtype.kind not in "fc" or a.size == 0:
        return 0.0
    return float((~np.isfinite(a)).mean())


def check_value(stmt: Stmt, env: dict, value, strict=True):
    """Raise Reject when ``value`` (NumPy's result of ``stmt``) is not one we want."""
    if not isinstance(value, (np.ndarray, np.generic)):
        raise Reject(f"result is {type(value).__name__}")
    v = np.asarray(value)
    if v.dtype not in OK_DTYPES:
        raise Reject(f"dtype {v.dtype}")
    if v.size > MAX_SIZE:
        raise Reject("too large")
    if ("np.fmin(" in stmt.template or "np.fmax(" in stmt.template) and len(stmt.args) == 2:
        a, b = (np.asarray(env[x]) for x in stmt.args)
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            with np.errstate(all="ignore"):
                tie = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
            if np.any(tie):
                raise Reject("fmin/fmax of +0.0 and -0.0")
    if "signbit" in stmt.template or "copysign" in stmt.template:
        for a in stmt.args:
            x = np.asarray(env[a])
            if x.dtype.kind == "f" and np.isnan(x).any():
                raise Reject("sign bit of a NaN")
    if strict and v.dtype.kind in "fc":
        before = max([_nonfinite_frac(env[a]) for a in stmt.args] + [0.0])
        if _nonfinite_frac(v) > max(0.25, before + 0.05):
            raise Reject("drowns in NaN/inf")


def evaluate(program: Program, args=None, strict=False, partial=False):
    """Run ``program`` statement by statement under NumPy, checking every value; returns
    the environment. Raises Reject (or NumPy's exception) for an invalid program; with
    ``partial``, the environment so far when a statement raises what the program expects
    (``meta['expect']``)."""
    args = program.args() if args is None else args
    env = dict(zip(program.params, args))
    for s in program.stmts:
        try:
            ns = _np_eval(s.render(), env)
        except Exception as e:
            if partial and type(e).__name__ == program.meta.get("expect"):
                return env
            raise
        check_value(s, env, ns[s.target], strict=strict)
        env[s.target] = ns[s.target]
    return env


def valid(program: Program) -> bool:
    """NumPy runs ``program`` (or raises the exception it expects)."""
    try:
        evaluate(program)
        return not program.meta.get("expect")
    except Exception as e:
        return type(e).__name__ == program.meta.get("expect")


# --------------------------------------------------------------------------- helpers

def _shape_for(r, base):
    """A shape broadcast-compatible with ``base``: drop leading dims or set some to 1."""
    nd = len(base)
    k = r.integers(0, nd + 1) if r.random() < 0.4 else nd
    s = list(base[nd - k:])
    for i in range(len(s)):
        if r.random() < 0.25:
            s[i] = 1
    return tuple(s)


def _random_shape(r):
    nd = int(r.choice([0, 1, 1, 2, 2, 2, 3, 3, 4], p=None))
    for _ in range(20):
        s = tuple(int(r.choice(SIZES)) for _ in range(nd))
        if math.prod(s) <= MAX_INPUT_SIZE:
            return s
    return tuple(1 for _ in range(nd))


def _factorizations(n, nd, r):
    """A random shape of ``nd`` dims with product ``n``."""
    if n == 0:
        s = [int(r.choice([1, 2, 3, 5])) for _ in range(nd)]
        if nd:
            s[r.integers(0, nd)] = 0
        return tuple(s)
    dims = [1] * nd
    m = n
    f = 2
    factors = []
    while f * f <= m:
        while m % f == 0:
            factors.append(f)
            m //= f
        f += 1
    if m > 1:
        factors.append(m)
    for f in factors:
        dims[r.integers(0, nd)] *= f
    return tuple(dims)


class Gen:
    def __init__(self, seed, index):
        self.r = np.random.default_rng([int(seed), int(index), 0x5eed])
        self.label = f"seed {seed} #{index}"
        self.seed, self.index = seed, index

    # -- inputs
    def make_inputs(self):
        r = self.r
        base = _random_shape(r)
        n_in = int(r.choice([1, 1, 2, 2, 2, 3]))
        inputs = []
        for j in range(n_in):
            dt = str(r.choice(DTYPES, p=[0.11, 0.16, 0.18, 0.22, 0.21, 0.05, 0.07]))
            shape = base if j == 0 or r.random() < 0.4 else _shape_for(r, base)
            if r.random() < 0.1:
                shape = _random_shape(r)
            kind = np.dtype(dt).kind
            spec = InputSpec(dt, shape, str(r.choice(DOMAINS[kind])),
                             int(r.integers(0, 2**31)))
            nd = len(shape)
            lay = r.random()
            if nd >= 2 and lay < 0.2:
                spec.perm = tuple(int(i) for i in r.permutation(nd))
            if nd >= 1 and r.random() < 0.2:
                spec.neg = (int(r.integers(0, nd)),)
            if nd >= 1 and r.random() < 0.2:
                spec.step = {int(r.integers(0, nd)): int(r.choice([2, 3]))}
            if r.random() < 0.1:
                spec.off = True
            if nd >= 1 and r.random() < 0.12:
                # broadcast: this array's shape gets 1s that are stretched
                small = list(shape)
                i = int(r.integers(0, nd))
                if small[i] != 0:
                    full = list(shape)
                    small[i] = 1
                    if full[i] == 1:
                        full[i] = int(r.choice([3, 7, 13]))
                    spec.shape = tuple(small)
                    spec.bcast = tuple(full)
            inputs.append((f"x{j}", spec))
        scalars = []
        if r.random() < 0.35:
            scalars.append(("s0", float(r.choice([0.5, 1.5, -2.0, 3.0, 0.25, -0.75]))))
        return inputs, scalars

    # -- operand choice
    def pick(self, env, names, want=None):
        """A variable name, biased to recent ones; ``want``: predicate on the value."""
        cands = [n for n in names if want is None or want(np.asarray(env[n]))]
        if not cands:
            return None
        w = np.array([1.0 + 2.0 * i for i in range(len(cands))])
        return cands[int(self.r.choice(len(cands), p=w / w.sum()))]

    def other_operand(self, env, names, a, allow_scalar=True):
        """Second operand: a broadcast-compatible variable, the runtime scalar, or a literal."""
        r = self.r
        sa = np.shape(env[a])
        u = r.random()
        if u < 0.55:
            comp = [n for n in names if n != a and not n.startswith("s")
                    and _bcast_ok(sa, np.shape(env[n]))]
            if comp:
                return self.pick(env, comp), None
        if u < 0.65:
            return a, None
        scal = self.scalar_names
        if allow_scalar and scal and u < 0.75:
            return scal[0], None
        kind = np.asarray(env[a]).dtype.kind
        if kind == "c" and r.random() < 0.5:
            return None, str(r.choice(COMPLEX_LITERALS))
        if kind in "fc" or r.random() < 0.3:
            return None, repr(float(r.choice(FLOAT_LITERALS)))
        if kind == "b" and r.random() < 0.5:
            return None, str(bool(r.random() < 0.5))
        return None, str(int(r.choice(INT_LITERALS)))

    # -- op generators: each returns (template, args)
    def op_unary(self, env, names):
        r = self.r
        a = self.pick(env, names, lambda v: v.ndim >= 0)
        kind = np.asarray(env[a]).dtype.kind
        if r.random() < (0.3 if kind == "c" else 0.02):
            return str(r.choice(UNARY_COMPLEX)), (a,)
        pool = UNARY_ANY + (UNARY_FLOAT if kind != "b" else []) + (["invert"] if kind in "bi" else [])
        if kind not in "fc" and r.random() < 0.7:
            pool = [p for p in pool if p not in UNARY_FLOAT]
        op = str(r.choice(pool))
        if op in UNARY_OPS and r.random() < 0.4:
            return UNARY_OPS[op], (a,)
        name = ALIASES[op] if op in ALIASES and r.random() < 0.2 else op
        return f"np.{name}({{0}})", (a,)

    def op_binary(self, env, names):
        r = self.r
        a = self.pick(env, names)
        kind = np.asarray(env[a]).dtype.kind
        pool = BINARY_ARITH * 2 + BINARY_MINMAX + COMPARE + BINARY_LOGIC
        if kind != "b":
            pool += BINARY_FLOAT
        if kind in "bi":
            pool += BINARY_BITS * 2
        op = str(r.choice(pool))
        b, lit = self.other_operand(env, names, a)
        args = (a,) if b is None else (a, b)
        rhs = lit if b is None else "{1}"
        lhs = "{0}"
        if r.random() < 0.2:
            lhs, rhs = rhs, lhs
        if op in BIN_OPS and r.random() < 0.6:
            return f"{lhs} {BIN_OPS[op]} {rhs}", args
        name = ALIASES[op] if op in ALIASES and r.random() < 0.2 else op
        if op == "remainder" and r.random() < 0.15:
            return f"np.divmod({lhs}, {rhs})[{int(r.integers(0, 2))}]", args
        return f"np.{name}({lhs}, {rhs})", args

    def op_where(self, env, names):
        r = self.r
        c = self.pick(env, names, lambda v: v.dtype == np.bool_)
        if c is None or r.random() < 0.3:
            x = self.pick(env, names)
            cond = f"{{0}} > {r.choice(['0', '0.5', '1'])}"
            args = [x]
        else:
            cond, args = "{0}", [c]
        sc = np.shape(env[args[0]])
        parts = []
        for _ in range(2):
            u = r.random()
            comp = [n for n in names if not n.startswith("s") and _bcast_ok(sc, np.shape(env[n]))]
            if u < 0.75 and comp:
                n = self.pick(env, comp)
                args.append(n)
                parts.append(f"{{{len(args) - 1}}}")
            elif u < 0.85 and self.scalar_names:
                args.append(self.scalar_names[0])
                parts.append(f"{{{len(args) - 1}}}")
            else:
                parts.append(str(r.choice(["0", "1", "-1.5", "2.0", "True"])))
        return f"np.where({cond}, {parts[0]}, {parts[1]})", tuple(args)

    def op_clip(self, env, names):
        r = self.r
        a = self.pick(env, names, lambda v: v.dtype.kind != "b")
        if a is None:
            return None
        kind = np.asarray(env[a]).dtype.kind
        if kind in "fc":
            lo, hi = sorted(float(x) for x in r.choice([-2.0, -0.5, 0.0, 0.25, 1.0, 2.5], 2, replace=False))
        else:
            lo, hi = sorted(int(x) for x in r.choice([-10, -3, 0, 1, 4, 9, 15], 2, replace=False))
        lo, hi = repr(lo), repr(hi)
        u = r.random()
        if u < 0.15:
            lo = "None"
        elif u < 0.3:
            hi = "None"
        if r.random() < 0.3:
            return f"{{0}}.clip({lo}, {hi})", (a,)
        return f"np.clip({{0}}, {lo}, {hi})", (a,)

    def op_astype(self, env, names):
        a = self.pick(env, names)
        dt = str(self.r.choice(DTYPES))
        return f"{{0}}.astype(np.{'bool_' if dt == 'bool' else dt})", (a,)

    def op_reduce(self, env, names):
        r = self.r
        a = self.pick(env, names)
        v = np.asarray(env[a])
        kind = str(r.choice(REDUCE))
        nd = v.ndim
        u = r.random()
        if nd == 0 or u < 0.25:
            axis = None
        elif u < 0.75 or kind in ("argmax", "argmin") or nd == 1:
            axis = int(r.integers(-nd, nd))
        else:
            k = int(r.integers(1, nd + 1))
            axis = tuple(int(x) for x in sorted(r.choice(nd, k, replace=False)))
        kw = []
        if axis is not None:
            kw.append(f"axis={axis!r}")
        if r.random() < 0.35:
            kw.append("keepdims=True")
        if kind in ("sum", "prod", "mean") and r.random() < 0.2:
            choices = (["float64", "float32"] if v.dtype.kind == "f" else
                       ["complex128", "complex64"] if v.dtype.kind == "c" else ["int64", "int32", "float64"])
            if kind == "mean":
                choices = ["float64", "float32"]
            kw.append(f"dtype=np.{r.choice(choices)}")
        if kind in ("var", "std") and r.random() < 0.4:
            kw.append("ddof=1")
        kws = ", ".join(kw)
        if kind in ("argmax", "argmin", "any", "all", "max", "min") or r.random() < 0.5:
            if r.random() < 0.5 and kind not in ("any", "all") or kind in ("argmax", "argmin") and r.random() < 0.5:
                return f"np.{kind}({{0}}{', ' + kws if kws else ''})", (a,)
        return f"{{0}}.{kind}({kws})", (a,)

    def op_matmul(self, env, names):
        """a @ b, np.matmul, np.dot: 1-D and 2-D (and batched) operands of numeric dtypes, the
        second an array whose shape fits or a transpose of the first."""
        r = self.r
        a = self.pick(env, names)
        va = np.asarray(env[a])
        if va.ndim == 0 or va.dtype.kind not in "fic":
            return None
        fits = [n for n in names if np.asarray(env[n]).ndim >= 1
                and np.asarray(env[n]).dtype.kind in "fic" and _matmul_ok(va, np.asarray(env[n]))]
        u = r.random()
        if va.ndim == 2 and (u < 0.35 or not fits):
            return ("{0} @ {0}.T" if r.random() < 0.5 else "{0}.T @ {0}"), (a,)
        if not fits:
            return None
        b = str(r.choice(fits))
        vb = np.asarray(env[b])
        if va.ndim <= 2 and vb.ndim <= 2 and r.random() < 0.3:
            return "np.dot({0}, {1})", (a, b)
        return ("{0} @ {1}" if r.random() < 0.6 else "np.matmul({0}, {1})"), (a, b)

    def op_scan(self, env, names):
        """np.cumsum / np.cumprod / the methods, over the flattened array or one axis."""
        r = self.r
        a = self.pick(env, names)
        nd = np.asarray(env[a]).ndim
        kind = "cumsum" if r.random() < 0.7 else "cumprod"
        kw = [] if nd == 0 or r.random() < 0.3 else [f"axis={int(r.integers(-nd, nd))}"]
        if r.random() < 0.15:
            kw.append(f"dtype=np.{r.choice(['float64', 'int64', 'float32'])}")
        if r.random() < 0.5:
            return f"np.{kind}({{0}}{''.join(', ' + k for k in kw)})", (a,)
        return f"{{0}}.{kind}({', '.join(kw)})", (a,)

    def op_view(self, env, names):
        r = self.r
        a = self.pick(env, names)
        v = np.asarray(env[a])
        nd, shape = v.ndim, v.shape
        kinds = ["reshape", "slice", "slice", "expand_dims", "ravel", "broadcast_to"]
        if nd >= 2:
            kinds += ["T", "transpose", "swapaxes", "moveaxis"] * 2
        if 1 in shape:
            kinds += ["squeeze"]
        k = str(r.choice(kinds))
        if k == "reshape":
            tgt = _factorizations(v.size, int(r.integers(0 if v.size == 1 else 1, 5)), r)
            if v.size == 0 and len(tgt) == 0:
                tgt = (0,)
            tl = list(tgt)
            if tl and v.size and r.random() < 0.3:
                tl[r.integers(0, len(tl))] = -1
            t = tuple(tl)
            if r.random() < 0.5:
                return f"{{0}}.reshape({t!r})", (a,)
            return f"np.reshape({{0}}, {t!r})", (a,)
        if k == "T":
            return "{0}.T", (a,)
        if k == "transpose":
            p = tuple(int(i) for i in r.permutation(nd))
            if r.random() < 0.5:
                return f"np.transpose({{0}}, {p!r})", (a,)
            return f"{{0}}.transpose{p!r}", (a,)
        if k == "swapaxes":
            i, j = (int(x) for x in r.choice(nd, 2, replace=False))
            return f"np.swapaxes({{0}}, {i}, {j - nd if r.random() < 0.3 else j})", (a,)
        if k == "moveaxis":
            i, j = (int(x) for x in r.integers(0, nd, 2))
            return f"np.moveaxis({{0}}, {i}, {j})", (a,)
        if k == "squeeze":
            ones = [i for i, s in enumerate(shape) if s == 1]
            if r.random() < 0.5:
                return "np.squeeze({0})" if r.random() < 0.5 else "{0}.squeeze()", (a,)
            return f"np.squeeze({{0}}, axis={int(r.choice(ones))})", (a,)
        if k == "expand_dims":
            return f"np.expand_dims({{0}}, {int(r.integers(-nd - 1, nd + 1))})", (a,)
        if k == "ravel":
            return ("np.ravel({0})" if r.random() < 0.5 else "{0}.ravel()"), (a,)
        if k == "broadcast_to":
            tgt = list(shape)
            for i, s in enumerate(tgt):
                if s == 1 and r.random() < 0.6:
                    tgt[i] = int(r.choice([2, 3, 7, 13]))
            if r.random() < 0.5 or tgt == list(shape):
                tgt.insert(0, int(r.choice([1, 2, 5])))
            return f"np.broadcast_to({{0}}, {tuple(tgt)!r})", (a,)
        idx = _basic_index(r, shape)
        return f"{{0}}[{', '.join(idx)}]", (a,)

    def op_update(self, env, names):
        """An in-place update of a fresh array ``t`` (a copy of ``{0}``, or zeros/ones like
        it) or of an argument (``t = x0``: the caller's array changes, and so do views of it
        taken earlier), all on one line: ``t[idx] = v``, ``t[idx] op= v``, ``np.<ufunc>(t[idx], v,
        out=t[idx])``, or ``t[1:] op= t[:-1]`` along one axis, where the operands overlap the
        target (NumPy reads the old values). ``{t}`` in the template is the target's name."""
        r = self.r
        writable = [n for n in names if n.startswith("x") and isinstance(env[n], np.ndarray)
                    and env[n].flags.writeable and env[n].size]
        if writable and r.random() < 0.3:       # the caller's array: t is x, x changes
            a, init = self.pick(env, writable), "{0}"
        else:
            a = self.pick(env, names, lambda v: v.ndim >= 1) or self.pick(env, names)
            u = r.random()
            init = ("{0}.copy()" if u < 0.6 else "np.zeros_like({0})" if u < 0.8
                    else "np.ones_like({0})")
        v = np.asarray(env[a])
        shape, kind = v.shape, v.dtype.kind
        aug = {"f": ["+", "-", "*", "/"], "c": ["+", "-", "*", "/"],
               "i": ["+", "-", "*", "//", "%", "&", "|", "^"], "b": ["&", "|", "^", "+", "*"]}[kind]
        form = r.random()
        if form < 0.2:
            axes = [i for i, n in enumerate(shape) if n > 1]
            if not axes:
                return None
            ax = int(r.choice(axes))
            w, rd = [":"] * len(shape), [":"] * len(shape)
            w[ax], rd[ax] = ("1:", ":-1") if r.random() < 0.5 else (":-1", "1:")
            opx = "" if r.random() < 0.25 else str(r.choice(aug))
            return f"{init}; {{t}}[{', '.join(w)}] {opx}= {{t}}[{', '.join(rd)}]", (a,)
        idx = ", ".join(_basic_index(r, shape, newaxis=False))
        tshape = np.empty(shape, np.bool_)[eval(f"np.s_[{idx}]", {"np": np})].shape
        fits = [n for n in names if not n.startswith("s") and np.ndim(env[n]) <= len(tshape)
                and _into(np.shape(env[n]), tshape)]
        if fits and r.random() < 0.7:
            b, rhs = self.pick(env, fits), "{1}"
        elif self.scalar_names and r.random() < 0.3:
            b, rhs = self.scalar_names[0], "{1}"
        else:
            b = None
            rhs = (repr(float(r.choice(FLOAT_LITERALS))) if kind in "fc" else
                   str(bool(r.random() < 0.5)) if kind == "b" else str(int(r.choice(INT_LITERALS))))
        args = (a,) if b is None else (a, b)
        if form < 0.5:
            return f"{init}; {{t}}[{idx}] = {rhs}", args
        if form < 0.85:
            return f"{init}; {{t}}[{idx}] {r.choice(aug)}= {rhs}", args
        uf = str(r.choice(["add", "subtract", "multiply", "maximum", "minimum"]))
        return f"{init}; np.{uf}({{t}}[{idx}], {rhs}, out={{t}}[{idx}])", args

    def op_misc(self, env, names):
        """Exact functions beyond ufuncs, reductions and views: flips, diagonals, tril/triu,
        concatenate/stack, sort, take and list gathers (negative indices too), roll, tile,
        repeat, pad, diff, and np.trace of integers (a float trace would need the oracle's
        summation-order bound)."""
        r = self.r
        a = self.pick(env, names, lambda v: v.ndim >= 1)
        if a is None:
            return None
        v = np.asarray(env[a])
        nd, shape = v.ndim, v.shape
        ax = int(r.integers(-nd, nd))
        kinds = ["flip", "concat", "stack", "sort", "take", "roll", "tile", "repeat", "pad",
                 "diff"]
        if nd >= 2:
            kinds += ["diagonal", "tril", "triu", "fliplr"] + (["trace"] if v.dtype.kind in "bi" else [])
        k = str(r.choice(kinds))
        if k == "flip":
            if r.random() < 0.3:
                return "np.flip({0})", (a,)
            return (f"np.flip({{0}}, axis={ax})" if r.random() < 0.7 else "np.flipud({0})"), (a,)
        if k == "fliplr":
            return "np.fliplr({0})", (a,)
        if k == "diagonal":
            i, j = (int(x) for x in r.choice(nd, 2, replace=False))
            off = int(r.integers(-2, 3))
            if r.random() < 0.3:
                return f"{{0}}.diagonal({off})", (a,)
            return f"np.diagonal({{0}}, {off}, {i}, {j})", (a,)
        if k == "trace":
            return f"np.trace({{0}}, {int(r.integers(-1, 2))})", (a,)
        if k in ("tril", "triu"):
            return f"np.{k}({{0}}, {int(r.integers(-2, 3))})", (a,)
        if k in ("concat", "stack"):
            same = [n for n in names if np.shape(env[n]) == shape]
            b = self.pick(env, same) if same and r.random() < 0.6 else a
            if k == "stack":
                return f"np.stack([{{0}}, {{1}}], axis={int(r.integers(-nd - 1, nd + 1))})", (a, b)
            return f"np.concatenate([{{0}}, {{1}}, {{0}}], axis={ax})", (a, b)
        if k == "sort":
            return f"np.sort({{0}}, axis={ax})", (a,)
        if k == "take":
            n = shape[ax]
            if n == 0:
                return None
            idx = [int(x) for x in r.integers(-n, n, int(r.integers(1, 5)))]
            if r.random() < 0.5:
                return f"np.take({{0}}, {idx}, axis={ax})", (a,)
            return f"{{0}}[{':, ' * (ax % nd)}{idx}]", (a,)
        if k == "roll":
            return f"np.roll({{0}}, {int(r.integers(-4, 5))}, axis={ax})", (a,)
        if k == "tile":
            reps = tuple(int(x) for x in r.integers(1, 3, nd))
            return f"np.tile({{0}}, {reps!r})", (a,)
        if k == "repeat":
            return f"np.repeat({{0}}, {int(r.integers(1, 4))}, axis={ax})", (a,)
        if k == "pad":
            return f"np.pad({{0}}, {int(r.integers(0, 3))})", (a,)
        return f"np.diff({{0}}, axis={ax})", (a,)

    # issue 16's idioms (tests/fuzz/families.py)
    def op_construct(self, env, names):
        return families.op_construct(self, env, names)

    def op_gather(self, env, names):
        return families.op_gather(self, env, names)

    def op_scatter(self, env, names):
        return families.op_scatter(self, env, names)

    def op_complex(self, env, names):
        return families.op_complex(self, env, names)

    def add_input(self, env, names, spec) -> str:
        """A new array input of the program (index arrays, masks), usable from now on."""
        name = f"x{len(self.prog.inputs)}"
        self.prog.inputs.append((name, spec))
        env[name] = spec.make()
        names.append(name)
        self.index_names.add(name)
        return name

    OPS = (("unary", 0.24), ("binary", 0.32), ("where", 0.05), ("clip", 0.04),
           ("astype", 0.05), ("reduce", 0.13), ("view", 0.17), ("matmul", 0.04),
           ("scan", 0.03), ("update", 0.06), ("misc", 0.06),
           ("construct", 0.05), ("gather", 0.06), ("scatter", 0.05), ("complex", 0.04))
    OOB = 0.01      # programs ending in an out-of-range gather/scatter (NumPy's IndexError)

    def program(self, n_ops=None) -> Program:
        r = self.r
        for _attempt in range(20):
            inputs, scalars = self.make_inputs()
            prog = Program(inputs, scalars, [], [], label=self.label,
                           meta={"seed": self.seed, "index": self.index})
            try:
                args = prog.args()
            except Exception:
                continue
            env = dict(zip(prog.params, args))
            self.prog, self.index_names = prog, set()
            self.scalar_names = [n for n, _ in scalars]
            arr_names = [n for n, _ in inputs]
            want = n_ops or int(r.integers(1, 13))
            tries = 0
            while len(prog.stmts) < want and tries < want * 15:
                tries += 1
                kinds, w = zip(*self.OPS)
                kind = str(r.choice(kinds, p=np.array(w) / sum(w)))
                try:
                    got = getattr(self, "op_" + kind)(env, arr_names)
                except (ValueError, IndexError):
                    continue
                if got is None:
                    continue
                template, a = got
                if any(pat in template for pat in AVOID):
                    continue
                stmt = Stmt(f"v{len(prog.stmts)}", template, tuple(a))
                # an update of an argument changes it (and views of it) in place: try it on
                # a replay of the program so far, so that a rejected one leaves env intact
                trial = _replay(prog, env) if stmt.writes_argument else env
                try:
                    ns = _np_eval(stmt.render(), trial)
                    check_value(stmt, trial, ns[stmt.target])
                except Exception:
                    continue
                if trial is not env:
                    env.clear()
                    env.update(trial)
                env[stmt.target] = ns[stmt.target]
                prog.stmts.append(stmt)
                arr_names.append(stmt.target)
            if not prog.stmts:
                continue
            if r.random() < self.OOB:
                self._add_oob(prog, env, arr_names)
            used = {a for s in prog.stmts for a in s.args}
            sinks = [s.target for s in prog.stmts[:-1] if s.target not in used]
            outs = [prog.stmts[-1].target]
            for t in reversed(sinks):
                if len(outs) < 3 and r.random() < 0.7:
                    outs.insert(0, t)
            prog.outputs = outs
            return prog.dead_code_eliminated().renumbered()
        raise RuntimeError(f"could not generate a program for {self.label}")


def _oob(self, prog, env, names):
        """Append a statement NumPy answers with IndexError (an index input with one element
        out of range); the program then expects that exception."""
        for _ in range(10):
            got = families.oob_stmt(self, env, names)
            if got is None:
                continue
            stmt = Stmt(f"v{len(prog.stmts)}", got[0], tuple(got[1]))
            try:
                _np_eval(stmt.render(), env)
            except IndexError:
                prog.stmts.append(stmt)
                prog.meta["expect"] = "IndexError"
                return
            except Exception:
                continue


Gen._add_oob = _oob


def _basic_index(r, shape, newaxis=True):
    """Index strings of a random basic index of an array of ``shape``: ``:``, reversals,
    integers (negative too), strided and bounded slices, an ``...`` and (if ``newaxis``)
    a ``None``."""
    idx = []
    for i, s in enumerate(shape):
        u = r.random()
        if u < 0.3:
            idx.append(":")
        elif u < 0.45:
            idx.append("::-1")
        elif u < 0.6 and s > 0:
            idx.append(str(int(r.integers(-s, s))))
        elif u < 0.8:
            st = int(r.choice([2, 3, -2, -3]))
            lo = int(r.integers(0, s + 1)) if s else 0
            idx.append(f"{lo}::{st}" if r.random() < 0.5 else f"::{st}")
        else:
            lo = int(r.integers(0, s + 1))
            hi = int(r.integers(lo, s + 1))
            idx.append(f"{lo}:{hi}" if r.random() < 0.7 else f"{lo - s}:{hi}")
    if idx and r.random() < 0.3:
        idx = idx[: int(r.integers(0, len(idx)))] + ["..."]
    if newaxis and r.random() < 0.2:
        idx.insert(int(r.integers(0, len(idx) + 1)), "None")
    if not idx:
        idx = ["..."] if r.random() < 0.5 or not newaxis else ["None"]
    return idx


def _replay(prog, env):
    """A fresh environment: the program's statements so far, run on new copies of its
    arguments (the same values), with the runtime scalars of ``env``."""
    fresh = dict(zip(prog.params, prog.args()))
    for s in prog.stmts:
        fresh[s.target] = _np_eval(s.render(), fresh)[s.target]
    return fresh


def _into(src, dst) -> bool:
    """``src`` broadcasts to exactly ``dst`` (as a value assigned into it)."""
    try:
        return np.broadcast_shapes(src, dst) == tuple(dst)
    except ValueError:
        return False


def _bcast_ok(a, b):
    try:
        s = np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return math.prod(s) <= MAX_SIZE


def _matmul_ok(a, b) -> bool:
    """np.matmul(a, b) is defined and small (output and work bounded)."""
    if b.shape[-2 if b.ndim >= 2 else -1] != a.shape[-1]:
        return False
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return False
    rows = a.shape[-2] if a.ndim >= 2 else 1
    cols = b.shape[-1] if b.ndim >= 2 else 1
    out = math.prod(batch) * rows * cols
    return out <= MAX_SIZE and out * a.shape[-1] <= 64 * MAX_SIZE


def generate(seed, index, n_ops=None) -> Program:
    return Gen(seed, index).program(n_ops)


def generate_many(seed, start, count):
    return [generate(seed, i) for i in range(start, start + count)]

