"""NumPy as the oracle: reference results with per-element tolerances, and the comparator.

In: a program's source (any function whose statements call NumPy) and its arguments.
Out: for every output leaf the NumPy value, an absolute error bound per element and a mask
of *unstable* elements; ``compare`` checks a compiled result against that.

Why these tolerances. A correct compiler may differ from NumPy at exactly two kinds of
places: transcendental functions (exp, log, sin, power, arctan2, hypot, ...: both sides are
within a few ULP of the true value, not bit-equal; helpers.TRANSCENDENTAL allows 4 ULP) and
float reductions and matrix products (summation order; helpers.py bounds two orders by
(n-1)*eps*sum|x|, a product's element by K*eps*(|a| @ |b|)).
Everything else (+ - * / sqrt, comparisons, casts, min/max, integer ops) is correctly
rounded or exact, so bit-equal. A random program then propagates those local differences
through further ops (cancellation, comparisons, floor, astype to int, argmax ties ...).
We *measure* that propagation instead of guessing it: the program is re-run K times under
NumPy with every transcendental result and every float reduction perturbed by uniform noise
of exactly the allowed size (4 ULP; the reduction-order bound), and

* float elements may differ from NumPy by 2 ULP (helpers.ARITH) + SAFETY x the largest
  deviation any perturbed run showed (each injected error has a random sign and a size
  between 1/4 and all of its bound, so every run moves every sensitive element; random
  draws still under-sample the worst case, SAFETY=8 covers that for K=4 and <=12 ops, and
  a real bug, e.g. a wrong index, is O(1) off); two more runs put every injected error at
  +bound and at -bound, so that errors adding up along a chain cannot all cancel by chance;
* elements whose NaN-ness, infinity or (integer/bool) value changed in any perturbed run
  depend discontinuously on legitimate rounding differences; they are not compared;
* everything else is compared exactly: integers and bools bit-equal, NaN where NumPy has NaN.

Complex values: every complex function of cppcodegen is NumPy's own algorithm or glibc's
function NumPy calls (include/cppcodegen/complex.h), so complex results of transcendental
functions and scans are not perturbed; complex sums, means, products (another order) and
matrix products (NumPy's own BLAS call, but on operands laid out otherwise: a transposed view
may reach it as a contiguous copy, and BLAS rounds each layout its own way) are, each
component by the bound of its kind, and np.angle (NumPy's SIMD arctan2) as a transcendental;
so are complex in-place products (``t[a] *= t[b]``, ``np.multiply(.., out=..)``): where the
operands partly overlap in memory NumPy takes its naive scalar loop (two roundings per part),
elsewhere its fused SIMD loop, and cppcodegen computes the fused product (1 ULP a part). A complex element is unstable when NaN-ness or infinity of
either component changes, its bound the larger of its two components' measured deviations.

The perturbation is a source rewrite (``ast``), so it also works for pasted regression tests.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import warnings

import numpy as np

import helpers

K_RUNS = 4
SAFETY = 8.0
TRANSCENDENTAL = frozenset(
    "exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh "
    "arcsinh arccosh arctanh power float_power arctan2 hypot angle".split())
REDUCTIONS = frozenset("sum prod mean var std".split())


class _Perturb(ast.NodeTransformer):
    """np.<transcendental>(...) -> _tr(...); a ** b -> _tr(a ** b);
    np.<red>(X, **kw) and X.<red>(**kw) -> _red('<red>', X, **kw);
    t[i] *= v -> t[i] = _cmul(t[i], v); np.multiply(a, b, out=c) -> _cmul(a, b, out=c)."""

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Mult):
            return node
        load = ast.parse(ast.unparse(node.target), mode="eval").body
        return ast.Assign([node.target], ast.Call(ast.Name("_cmul", ast.Load()),
                                                  [load, node.value], []))

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.Call(ast.Name("_tr", ast.Load()), [node], [])
        if isinstance(node.op, ast.MatMult):
            return ast.Call(ast.Name("_mm", ast.Load()), [node.left, node.right], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not isinstance(f, ast.Attribute):
            return node
        is_np = isinstance(f.value, ast.Name) and f.value.id == "np"
        if is_np and f.attr in TRANSCENDENTAL:
            return ast.Call(ast.Name("_tr", ast.Load()), [node], [])
        if is_np and f.attr == "multiply" and any(k.arg == "out" for k in node.keywords):
            return ast.Call(ast.Name("_cmul", ast.Load()), node.args, node.keywords)
        if is_np and f.attr in ("matmul", "dot") and len(node.args) == 2 and not node.keywords:
            return ast.Call(ast.Name("_mm", ast.Load()), node.args, [])
        if f.attr in ("cumsum", "cumprod") and (not is_np or node.args):
            x, rest = (node.args[0], node.args[1:]) if is_np else (f.value, node.args)
            if not rest:
                return ast.Call(ast.Name("_scan", ast.Load()), [ast.Constant(f.attr), x],
                                node.keywords)
        if f.attr in REDUCTIONS:
            if is_np and node.args:
                x, rest = node.args[0], node.args[1:]
            elif not is_np:
                x, rest = f.value, node.args
            else:
                return node
            if rest:        # positional axis etc.: leave unperturbed (generator never does it)
                return node
            return ast.Call(ast.Name("_red", ast.Load()), [ast.Constant(f.attr), x],
                            node.keywords)
        return node


class Perturber:
    def __init__(self, seed, snap=False, sign=0):
        self.rng = np.random.default_rng(seed)
        self.snap = snap
        self.sign = sign        # 0: random signs and sizes; +1/-1: every error at +-its bound;
                                # "value"/"-value": sign and size from a hash of the value

    def _noise(self, v, amp):
        v = np.asarray(v)
        if v.dtype.kind == "c" and v.size:          # each component by the same bound
            out = np.empty_like(v)
            out.real = self._noise(np.ascontiguousarray(v.real), amp)
            out.imag = self._noise(np.ascontiguousarray(v.imag), amp)
            return out
        if v.dtype.kind != "f" or v.size == 0:
            return v
        amp = np.broadcast_to(np.nan_to_num(np.asarray(amp, np.float64), nan=0.0, posinf=0.0), v.shape)
        with np.errstate(all="ignore"):
            # |noise| in [amp/4, amp] with a random sign: never (almost) zero, so that with
            # only K runs no element's measured sensitivity is accidentally ~0
            if self.sign in ("value", "-value"):
                bits = v.view(np.int64 if v.dtype.itemsize == 8 else np.int32).astype(np.uint64)
                h = (bits * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)     # 24 bits
                u = h.astype(np.float64) / float(1 << 24)                      # [0, 1)
                noise = np.where(u < 0.5, -1.0, 1.0) * (0.25 + 1.5 * np.abs(u - 0.5))
                noise = noise if self.sign == "value" else -noise
            elif self.sign:
                noise = np.full(v.shape, float(self.sign))
            else:
                noise = self.rng.choice([-1.0, 1.0], v.shape) * self.rng.uniform(0.25, 1, v.shape)
            w = v.astype(np.float64) + noise * amp
            # zero is inside the allowed interval: an exact cancellation (e.g. the variance
            # of equal values) is as legitimate as any other value there
            # (only in every other run: a snapped element shows no deviation in that run)
            if self.snap:
                snap = np.abs(v.astype(np.float64)) <= amp
                if self.snap != "all":
                    snap &= self.rng.random(v.shape) < 0.5
                w = np.where(snap, 0.0, w)
            out = np.where(np.isfinite(v), w, v).astype(v.dtype)
        return out

    def tr(self, v):
        if not isinstance(v, (np.ndarray, np.generic)) or np.asarray(v).dtype.kind != "f":
            return v
        a = np.asarray(v)
        with np.errstate(all="ignore"):
            amp = 4.0 * np.spacing(np.abs(a)).astype(np.float64)
        return self._noise(a, amp)

    def cmul(self, a, b, out=None):
        """An in-place complex product: fused or naive as NumPy's loop choice goes, so each
        part within 2 eps * |a| * |b| (a real product: exact, as it stands)."""
        res = np.multiply(a, b) if out is None else np.multiply(a, b, out=out)
        r = np.asarray(res)
        if r.dtype.kind != "c" or r.size == 0:
            return res
        eps = float(np.finfo(r.dtype).eps)
        with np.errstate(all="ignore"):
            amp = np.broadcast_to(2 * eps * np.abs(np.asarray(a)).astype(np.float64)
                                  * np.abs(np.asarray(b)).astype(np.float64), r.shape)
        noisy = self._noise(r, amp)
        if out is None:
            return noisy
        out[...] = noisy
        return out

    def mm(self, a, b):
        """A matrix product: any summation order, so each element within K*eps*(|a| @ |b|)."""
        res = np.matmul(a, b)
        r = np.asarray(res)
        if r.dtype.kind not in "fc" or r.size == 0:
            return res
        aa, ba = np.asarray(a), np.asarray(b)
        k = aa.shape[-1]
        eps = float(np.finfo(r.dtype).eps)
        with np.errstate(all="ignore"):     # (|z|: the modulus of complex operands)
            bound = np.matmul(np.abs(aa).astype(np.float64), np.abs(ba).astype(np.float64))
            amp = k * eps * bound + 4.0 * np.spacing(np.abs(r)).astype(np.float64)
        return self._noise(r, np.reshape(amp, r.shape))

    def scan(self, kind, x, axis=None, dtype=None):
        """cumsum / cumprod: element i within i*eps*(running sum of |x|) (any order of a
        chunked scan), a running product within i*eps*|result|."""
        r = np.asarray(getattr(np, kind)(x, axis=axis, dtype=dtype))
        if r.dtype.kind != "f" or r.size == 0:
            return r
        xa = np.asarray(x, np.float64)
        flat = axis is None
        if flat:
            xa = xa.reshape(-1)
        ax = 0 if flat else axis % xa.ndim
        n = xa.shape[ax]
        eps = float(np.finfo(r.dtype).eps)
        with np.errstate(all="ignore"):
            base = np.cumsum(np.abs(xa), axis=ax) if kind == "cumsum" else np.abs(r.astype(np.float64)).reshape(xa.shape)
            amp = n * eps * base + 4.0 * np.spacing(np.abs(r)).astype(np.float64).reshape(xa.shape)
        return self._noise(r, np.reshape(amp, r.shape))

    def red(self, kind, x, axis=None, keepdims=False, dtype=None, ddof=0, **kw):
        fn = getattr(np, kind)
        extra = {"dtype": dtype} if kind in ("sum", "prod", "mean", "var", "std") else {}
        if kind in ("var", "std"):
            extra["ddof"] = ddof
        res = fn(x, axis=axis, keepdims=keepdims, **extra, **kw)
        r = np.asarray(res)
        if r.dtype.kind not in "fc" or r.size == 0:
            return res
        xa = np.asarray(x)
        x64 = xa.astype(np.complex128 if xa.dtype.kind == "c" else np.float64)  # (|z|: modulus)
        ax = tuple(range(xa.ndim)) if axis is None else (
            tuple(a % xa.ndim for a in axis) if isinstance(axis, tuple) else (axis % xa.ndim,))
        n = int(np.prod([xa.shape[a] for a in ax], dtype=np.int64))
        eps = float(np.finfo(r.dtype).eps)
        if xa.dtype.kind in "fc":
            eps = max(eps, float(np.finfo(xa.dtype).eps))
        with np.errstate(all="ignore"):
            ab = np.abs(x64)
            mabs = np.mean(ab, axis=axis, keepdims=keepdims) if n else np.zeros(r.shape)
            if kind == "sum":
                amp = n * eps * np.sum(ab, axis=axis, keepdims=keepdims)
            elif kind == "mean":
                amp = n * eps * mabs
            elif kind == "prod":
                amp = n * eps * np.abs(r).astype(np.float64)
            else:
                v64 = np.var(x64, axis=axis, keepdims=keepdims, ddof=ddof)
                scale = n / max(n - ddof, 1)
                amp = 2 * n * eps * np.abs(v64) * scale + 2 * (n * eps * mabs) ** 2 * scale
                if kind == "std":
                    s = np.sqrt(np.abs(v64))
                    amp = np.where(s > np.sqrt(amp), amp / (2 * np.where(s > 0, s, 1)), np.sqrt(amp))
            amp = np.reshape(amp, r.shape) + 4.0 * np.spacing(np.abs(r)).astype(np.float64)
        return self._noise(r, amp)


def perturbed_source(src: str) -> str:
    tree = ast.parse(textwrap.dedent(src))
    tree = ast.fix_missing_locations(_Perturb().visit(tree))
    return ast.unparse(tree)


def _exec(src, name, extra):
    ns = {"np": np, "__name__": "fuzz_oracle", **extra}
    exec(compile(src, f"<fuzz-oracle {name}>", "exec"), ns)
    return ns[name]


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        out = []
        for t in tree:
            out += _leaves(t)
        return out
    return [tree]


def _copy(args):
    """Fresh copies of the array arguments; a read-only one (a broadcast input) stays
    read-only, so NumPy refuses to write into the copy as it would into the original."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            c = a.copy()
            c.flags.writeable = a.flags.writeable
            a = c
        out.append(a)
    return out


def _arrays(args):
    return [a for a in args if isinstance(a, np.ndarray)]


def _run(fn, args):
    """``fn``'s result on copies of ``args``, and those array arguments after the call."""
    copies = _copy(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*copies), _arrays(copies)


def _components(e, p):
    """(expected, perturbed) pairs of float arrays: the arrays, or their real and imaginary
    parts."""
    if e.dtype.kind != "c":
        return [(e, p)]
    return [(e.real, p.real), (e.imag, p.imag)]


class Reference:
    """NumPy results of one program with their tolerances (see the module docstring)."""

    def __init__(self, src: str, name: str, args, k_runs: int = K_RUNS, seed: int = 0):
        from .inputs import make_input
        src = textwrap.dedent(src)
        self.expected, after = _run(_exec(src, name, {"make_input": make_input}), args)
        # the leaves: the result's, then every array argument as the call leaves it (a
        # program may update its arguments in place; the caller must see NumPy's writes)
        self.n_results = len(_leaves(self.expected))
        self.leaves = [np.asarray(x) for x in _leaves(self.expected)] + after
        self.written = [not helpers._same_bits(a, b) for a, b in zip(_arrays(args), after)]
        psrc = perturbed_source(src)
        runs = []
        for k in range(k_runs + 5):
            # K random runs, then every error at +bound and at -bound (errors that add up
            # along a smooth chain can cancel by chance in the random runs), then a run where
            # every value whose interval holds 0 is exactly 0 (the variance of equal values
            # is 0 in one summation order and 1e-32 in another; the random runs snap only
            # half of the elements, and a single such value can decide a whole output)
            # ... and two runs whose error is a fixed function of the value (sign and size from
            # a hash of its bits), as a libm's is: sin(a) - sin(b) of two different values then moves
            # by up to two bounds, which the +bound/-bound runs cancel and random draws can
            # miss, while sin(a) - sin(a) stays exactly 0
            sign = (1, -1, 0, "value", "-value")[k - k_runs] if k >= k_runs else 0
            snap = "all" if k == k_runs + 2 else (k % 2 == 1 and not sign)
            p = Perturber([seed, k], snap=snap, sign=sign)
            fn = _exec(psrc, name, {"_tr": p.tr, "_red": p.red, "_mm": p.mm, "_scan": p.scan,
                                    "_cmul": p.cmul})
            out, after = _run(fn, args)
            runs.append([np.asarray(x) for x in _leaves(out)] + after)
        self.bounds, self.unstable = [], []
        for i, e in enumerate(self.leaves):
            unstable = np.zeros(e.shape, bool)
            dev = np.zeros(e.shape, np.float64)
            for r in runs:
                p = r[i]
                if p.shape != e.shape or p.dtype != e.dtype:
                    raise AssertionError("perturbed run changed shape/dtype (oracle bug)")
                if e.dtype.kind in "fc":
                    for ep, pp in _components(e, p):
                        with np.errstate(all="ignore"):
                            en, pn = np.isnan(ep), np.isnan(pp)
                            unstable |= en != pn
                            inf = (np.isinf(ep) | np.isinf(pp)) & ~en & ~pn
                            unstable |= inf & (ep != pp)
                            d = np.abs(pp.astype(np.float64) - ep.astype(np.float64))
                            dev = np.maximum(dev, np.where(np.isfinite(d), d, 0.0))
                else:
                    unstable |= p != e
            self.bounds.append(SAFETY * dev if e.dtype.kind in "fc" else None)
            self.unstable.append(unstable)

    @property
    def n_unstable(self):
        return sum(int(u.sum()) for u in self.unstable)

    @property
    def n_elements(self):
        return sum(int(e.size) for e in self.leaves)


def compare_leaf(got, expected, bound, unstable, path="result", bound2=None):
    """Compiled leaf vs NumPy leaf (helpers.assert_matches_numpy does the work)."""
    if not isinstance(got, (np.ndarray, np.generic)):
        raise AssertionError(f"{path}: expected a NumPy array/scalar, got {type(got).__name__}")
    g = np.array(got, copy=True)
    e = np.asarray(expected)
    if g.dtype != e.dtype:
        raise AssertionError(f"{path}: dtype {g.dtype} != expected {e.dtype}")
    if g.shape != e.shape:
        raise AssertionError(f"{path}: shape {g.shape} != expected {e.shape}")
    if unstable is not None and unstable.any():
        g[unstable] = e[unstable]
    if e.ndim == 0:         # helpers' mismatch report cannot index 0-d arrays
        g, e = g.reshape(1), e.reshape(1)
        bound = None if bound is None else np.reshape(bound, 1)
        bound2 = None if bound2 is None else np.reshape(bound2, 1)
    atol = None
    if e.dtype.kind in "fc":
        atol = bound if bound is not None else np.zeros(e.shape)
        if bound2 is not None:
            atol = atol + bound2
    helpers.assert_matches_numpy(g, e, atol=atol, ulp=2 if e.dtype.kind in "fc" else None,
                                 _path=path)


def compare(got, ref: Reference, args_after=None, path="result"):
    """The compiled result against NumPy's, and (given the compiled call's arguments as it
    left them) every array argument: NumPy's in-place writes, and nothing else."""
    g_leaves = _leaves(got)
    if len(g_leaves) != ref.n_results:
        raise AssertionError(f"{path}: {len(g_leaves)} outputs, expected {ref.n_results}")
    for i, g in enumerate(g_leaves):
        compare_leaf(g, ref.leaves[i], ref.bounds[i], ref.unstable[i], f"{path}[{i}]")
    for j, g in enumerate(_arrays(args_after or [])):
        i = ref.n_results + j
        compare_leaf(g, ref.leaves[i], ref.bounds[i], ref.unstable[i],
                     f"array argument {j} after the call")


def expected_exception(src: str, name: str, args):
    """The exception NumPy raises running ``src`` on copies of ``args``, or None."""
    from .inputs import make_input
    fn = _exec(textwrap.dedent(src), name, {"make_input": make_input})
    try:
        _run(fn, args)
    except Exception as e:
        return e
    return None


def check_program(fn, args):
    """For regression tests: run ``fn`` under NumPy (with the tolerance analysis above) and
    compiled; assert they agree, arguments after the call included (an argument NumPy does
    not write stays bit-identical). Where NumPy raises (an out-of-range index), the compiled
    call must raise the same exception type."""
    import cppcodegen
    src = textwrap.dedent(inspect.getsource(fn))
    want = expected_exception(src, fn.__name__, args)
    if want is not None:
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cppcodegen.compile(fn)(*args)
        except type(want):
            return
        raise AssertionError(f"NumPy raises {type(want).__name__}: {want}; the compiled "
                             "call returned")
    ref = Reference(src, fn.__name__, args)
    pristine = _copy(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cppcodegen.compile(fn)(*args)
    kept = [k for k, w in enumerate(ref.written) if not w]
    helpers.assert_inputs_unchanged([_arrays(args)[k] for k in kept],
                                    [_arrays(pristine)[k] for k in kept])
    compare(got, ref, args)
