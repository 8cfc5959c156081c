"""The ufunc loop matrix: every ufunc the compiler supports, over every loop in
``np.<ufunc>.types`` whose operand types are bool/int32/int64/float32/float64, on inputs
that contain NaN, +-0.0, +-inf, INT_MIN, -1 and the type's extremes, through every code
path: AVX-512, AVX2, the portable scalar build (isa='scalar') and plain scalar loops
(vectorize=False). Also every cast between those five types.

NumPy's x86 results are the facts to reproduce (float->int of 1e20 or NaN gives INT_MIN,
left_shift(1, 64) gives 0, maximum(0.0, -0.0) gives -0.0 but maximum(-0.0, 0.0) gives
+0.0, INT_MIN // -1 gives INT_MIN, x // 0 gives 0, int reciprocal(0) gives INT_MIN, ...).

Comparison: integers and bools exact; floats within ``ULP[op]`` units in the last place
(the table below; 1 ULP for everything that IEEE 754 rounds correctly, 4 ULP for the
transcendental functions, whose NumPy and libmvec/libm implementations are each within a
few ULP of the true value), the sign of zero checked, NaN exactly where NumPy has NaN.

Cost: one compiled function per code path returns every loop's result (a dict of a few
hundred arrays), so the matrix costs four compilations. Unary inputs have 139 elements
and the all-pairs binary inputs n*n + k elements with the length not a multiple of 16:
every vector loop runs full vectors and a tail.
"""
import numpy as np
import pytest

from cppcodegen.runtime import cpu
from cppcodegen.ir.ufuncs import OPS, TRACEABLE
from helpers import Batch

TYPES = {"?": np.dtype(bool), "i": np.dtype(np.int32), "l": np.dtype(np.int64),
         "f": np.dtype(np.float32), "d": np.dtype(np.float64)}
TCHAR = {dt: c for c, dt in TYPES.items()}
VAR = {"?": "b", "i": "i", "l": "l", "f": "f", "d": "d"}     # argument-name suffixes

# ULP tolerance per float op (only float results are measured in ULP; ints/bools exact)
TRANSCENDENTAL_ULP = 4
ULP = dict.fromkeys(
    "exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh "
    "arcsinh arccosh arctanh power arctan2 hypot cbrt".split(), TRANSCENDENTAL_ULP)
# the sign of a zero result is checked except where NumPy's own answer depends on the path
# it takes: clip(x, lo, hi) at x == lo or x == hi with zeros of both signs gives x, lo or hi
# depending on the array length and on whether the bounds are scalars (NumPy 2.4)
ZERO_SIGN_FREE = {"clip"}
DEFAULT_ULP = 1       # add subtract multiply divide sqrt floor ... min/max copysign casts ...

CONFIGS = {
    "avx512": {"isa": "avx512"},
    "avx2": {"isa": "avx2"},
    "scalar_isa": {"isa": "scalar"},
    "no_vectorize": {"vectorize": False},
}
SUPPORTED = {name: opts for name, opts in CONFIGS.items()
             if "isa" not in opts or cpu.supports(opts["isa"])}


# ------------------------------------------------------------------ inputs
def specials(dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == bool:
        return np.array([False, True])
    if dt.kind == "i":
        ii = np.iinfo(dt)
        w = dt.itemsize * 8
        v = [ii.min, ii.min + 1, -100, -7, -3, -2, -1, 0, 1, 2, 3, 7, w - 1, w, w + 1, 100,
             ii.max - 1, ii.max]
        return np.array(v, dt)
    fi = np.finfo(dt)
    v = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, 0.1,
         -7.25, float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
         1e20, -1e20, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, -2.0 ** 63, 1e-3]
    return np.array(v, np.float64).astype(dt)


def unary_input(dt, n=139) -> np.ndarray:
    """The specials, then values spread over the type's useful range; 139 = 8*16 + 11."""
    dt = np.dtype(dt)
    s = specials(dt)
    r = np.random.default_rng(1000 + dt.num)
    m = n - len(s)
    if dt == bool:
        rest = r.random(m) < 0.5
    elif dt.kind == "i":
        rest = np.concatenate([r.integers(-1000, 1000, m // 2),
                               r.integers(np.iinfo(dt).min, np.iinfo(dt).max, m - m // 2,
                                          dtype=dt)])
    else:
        rest = np.concatenate([r.uniform(-1, 1, m // 3), r.uniform(-12, 12, m // 3),
                               r.choice([-1.0, 1.0], m - 2 * (m // 3))
                               * 10.0 ** r.uniform(-8, 8, m - 2 * (m // 3))])
    return np.concatenate([s, rest.astype(dt)]).astype(dt)


def pairs(a, b):
    """All pairs (a[i], b[j]), padded so that the length is 7 more than a multiple of 16."""
    x, y = np.repeat(a, len(b)), np.tile(b, len(a))
    pad = (7 - len(x)) % 16
    return np.concatenate([x, x[:pad]]), np.concatenate([y, y[:pad]])


def make_args():
    args = {}
    for t, dt in TYPES.items():
        c = VAR[t]
        args[f"u_{c}"] = unary_input(dt)
        a, b = pairs(specials(dt), specials(dt))
        args[f"a_{c}"], args[f"b_{c}"] = a, b
        if dt.kind == "i":    # NumPy raises for negative integer exponents
            e = np.array([0, 1, 2, 3, 7, 31, 32, 62, 63, 64, 70], dt)
            args[f"pa_{c}"], args[f"pb_{c}"] = pairs(specials(dt), e)
    return args


ARGS = make_args()
PARAMS = tuple(ARGS)


# ------------------------------------------------------------------ the loops
def ufunc_loops():
    """{(ufunc name, loop 'ii->i'): expression}; every supported ufunc, every loop."""
    names = sorted({n for n in TRACEABLE if isinstance(getattr(np, n, None), np.ufunc)}
                   & (set(OPS) | {"divmod"}))
    out = {}
    for name in names:
        uf = getattr(np, name)
        seen = set()
        for loop in uf.types:
            ins, outs = loop.split("->")
            if not set(ins + outs) <= set(TYPES):
                continue
            key = tuple(TYPES[c] for c in ins)
            if key in seen:              # 'l' and 'q' are both int64 here; duplicate loops
                continue
            seen.add(key)
            c = VAR[TCHAR[key[0]]]
            if len(ins) == 1:
                expr = f"np.{name}(u_{c})"
            elif name == "power" and TYPES[c].kind == "i":
                expr = f"np.{name}(pa_{c}, pb_{c})"
            else:
                expr = f"np.{name}(a_{c}, b_{c})"
            out[f"{name}[{ins}->{outs}]"] = expr
    return out


def cast_loops():
    out = {}
    for c, src in TYPES.items():
        for d, dst in TYPES.items():
            if c != d:
                out[f"astype[{c}->{d}]"] = f"u_{VAR[c]}.astype(np.{dst.name})"
    return out


def other_loops():
    """The non-ufunc pointwise functions of the op table: clip and where."""
    out = {}
    for t, dt in TYPES.items():
        c = VAR[t]
        if dt != bool:
            out[f"clip[{c}]"] = f"np.clip(a_{c}, b_{c}, a_{c}[::-1])"
        cond = f"a_{c} > b_{c}" if dt != bool else "a_b ^ b_b"
        out[f"where[{c}]"] = f"np.where({cond}, a_{c}, b_{c})"
    return out


EXPRS = {**ufunc_loops(), **cast_loops(), **other_loops()}
BATCHES = {cfg: Batch(f"loop_matrix_{cfg}", PARAMS, EXPRS, lambda: tuple(ARGS.values()),
                      options=opts)
           for cfg, opts in SUPPORTED.items()}


def tolerance(name: str) -> int:
    return ULP.get(name.split("[")[0], DEFAULT_ULP)


def test_matrix_covers_every_supported_ufunc():
    """Every pointwise op of the table with a NumPy ufunc of that name has loops here."""
    ufuncs = {n for n in OPS if isinstance(getattr(np, n, None), np.ufunc)}
    covered = {k.split("[")[0] for k in EXPRS}
    assert ufuncs <= covered, sorted(ufuncs - covered)
    # and the loops of every ufunc over the five types are all there (ii, ll, ff, dd, ??)
    assert "left_shift[ll->l]" in EXPRS and "add[??->?]" in EXPRS and "sin[d->d]" in EXPRS


@pytest.mark.parametrize("batch,name", [b.param(name, id=f"{cfg}-{name}")
                                        for cfg, b in BATCHES.items() for name in EXPRS])
def test_loop(batch, name):
    batch.check(name, ulp=tolerance(name), check_zero_sign=name.split("[")[0] not in ZERO_SIGN_FREE,
                alt_f64=tolerance(name) == TRANSCENDENTAL_ULP)


def _at(batch, name, **where):
    """(got, expected) of loop ``name`` at the first element whose inputs equal ``where``."""
    got, exp = batch.get(name)
    got, exp = (got[0], exp[0]) if isinstance(exp, tuple) else (got, exp)
    mask = np.ones(len(exp), bool)
    for arg, value in where.items():
        a = ARGS[arg]
        mask &= (np.isnan(a) if isinstance(value, float) and np.isnan(value) else
                 (a == value) & (np.signbit(a) == np.signbit(value)) if a.dtype.kind == "f"
                 else a == value)
    i = int(np.argmax(mask))
    assert mask[i], f"no element of {name} with inputs {where}"
    return got[i], exp[i]


I64, I32 = np.iinfo(np.int64), np.iinfo(np.int32)
# the values named in the issue: (loop, inputs, NumPy's x86 answer)
FACTS = [
    ("astype[d->l]", dict(u_d=1e20), I64.min),
    ("astype[d->l]", dict(u_d=np.nan), I64.min),
    ("astype[f->l]", dict(u_f=-1e20), I64.min),
    ("astype[d->i]", dict(u_d=2.0 ** 31), I32.min),
    ("left_shift[ll->l]", dict(a_l=1, b_l=64), 0),
    ("left_shift[ii->i]", dict(a_i=1, b_i=32), 0),
    ("right_shift[ll->l]", dict(a_l=-7, b_l=64), -1),
    ("maximum[dd->d]", dict(a_d=0.0, b_d=-0.0), -0.0),
    ("maximum[dd->d]", dict(a_d=-0.0, b_d=0.0), 0.0),
    ("minimum[ff->f]", dict(a_f=-0.0, b_f=0.0), 0.0),
    ("floor_divide[ll->l]", dict(a_l=I64.min, b_l=-1), I64.min),
    ("floor_divide[ii->i]", dict(a_i=7, b_i=0), 0),
    ("remainder[ll->l]", dict(a_l=7, b_l=0), 0),
    ("fmod[ii->i]", dict(a_i=I32.min, b_i=-1), 0),
    ("reciprocal[l->l]", dict(u_l=0), I64.min),
    ("absolute[i->i]", dict(u_i=I32.min), I32.min),
    ("negative[l->l]", dict(u_l=I64.min), I64.min),
    ("add[ii->i]", dict(a_i=I32.max, b_i=1), I32.min),
    ("power[ll->l]", dict(pa_l=2, pb_l=64), 0),
]


@pytest.mark.parametrize("batch", [pytest.param(b, id=cfg, marks=pytest.mark.xdist_group(b.key))
                                   for cfg, b in BATCHES.items()])
def test_issue_facts(batch):
    """The x86 facts the issue names: NumPy gives them, and so does every code path."""
    for name, where, value in FACTS:
        got, exp = _at(batch, name, **where)
        assert exp == value and np.signbit(exp) == np.signbit(value), \
            f"NumPy changed: {name} at {where} is {exp!r}, documented {value!r}"
        assert got == exp and np.signbit(got) == np.signbit(exp), \
            f"{batch.key}: {name} at {where} gave {got!r}, NumPy {exp!r}"
