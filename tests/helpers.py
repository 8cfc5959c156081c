"""Shared machinery for the differential (cppcodegen vs NumPy) test suite.

NumPy (2.x) is the oracle.  Everything here is plain NumPy + pytest; the only
cppcodegen entry points used are ``cppcodegen.compile`` and, in a few tests,
``cppcodegen.explain`` / ``cppcodegen.UnsupportedError``.

Tolerances (all of them are *absolute per element* after being turned into a
bound; a float element passes when ``|got - expected| <= bound``):

* ``ulp=k``: ``k * spacing(max(|expected|, tiny))`` in the result dtype.  The
  default for float results when no tolerance is given is ``ulp=2``: IEEE 754
  requires + - * / sqrt, rounding, min/max, abs, copysign ... to be correctly
  rounded, so a correct kernel matches NumPy bit-for-bit; 2 ULP leaves room for
  one extra rounding (e.g. a float32 op carried out in float64 and rounded
  back), nothing more.
* transcendental functions use ``ulp=4`` (``TRANSCENDENTAL``): measured on this
  machine, NumPy's own float32 SIMD kernels are up to ~2.8 ULP away from the
  correctly rounded result (log, tan, arcsin), glibc's scalar libm is <= 1 ULP,
  float64 is <= ~1.1 ULP on both sides.  For float32 results an element also
  passes when it is within 4 ULP of the float64 computation rounded to float32
  (an accurate kernel can sit ~3 ULP on the other side of the true value than
  NumPy's own kernel does).
* reductions: summation order is implementation defined (NumPy sums pairwise,
  a vectorised/threaded kernel sums in lanes/chunks).  For any summation order
  the rounding error is bounded by ``(n-1) * u * sum(|terms|)``, so two orders
  differ by at most ``(n-1) * eps * sum(|terms|)``; ``reduction_atol`` computes
  exactly that bound per output element.  Where that bound would be too loose
  to catch a dropped element (float32, huge n) the inputs are small dyadic
  numbers whose sums are exact in every order and the tolerance is ~0.
* integers and bools are always compared exactly.
"""
from __future__ import annotations

import linecache
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cppcodegen

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))

ARITH = {"ulp": 2}
TRANSCENDENTAL = {"ulp": 4, "alt_f64": True}  # alt_f64: see Batch.check
EXACT = {"ulp": 0}

FLOAT_DTYPES = (np.float32, np.float64)
INT_DTYPES = (np.int8, np.int16, np.uint8, np.int32, np.int64)


def dtname(dt) -> str:
    return np.dtype(dt).name


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------
def _fmt_mismatches(idx, g, e, limit=6):
    lines = []
    for i in list(zip(*idx))[:limit]:
        i = tuple(int(k) for k in i)
        lines.append(f"    at {i}: got {g[i]!r}, expected {e[i]!r}")
    return "\n".join(lines)


def _compare_arrays(g, e, rtol, atol, ulp, check_zero_sign, path, alt=None):
    assert g.shape == e.shape, f"{path}: shape {g.shape} != expected {e.shape}"
    if e.dtype.kind in "biuSU":
        bad = g != e
        if np.any(bad):
            raise AssertionError(
                f"{path}: {int(bad.sum())}/{bad.size} elements differ (exact "
                f"comparison, dtype {e.dtype})\n" + _fmt_mismatches(np.nonzero(bad), g, e)
            )
        return
    if e.dtype.kind == "c":
        # complex: each component as a float of the part's dtype, under the same tolerance
        # (a NaN has to be a NaN in the same component; ulp counts in that component)
        for part in ("real", "imag"):
            a = None if alt is None else getattr(np.asarray(alt), part)
            _compare_arrays(np.ascontiguousarray(getattr(g, part)),
                            np.ascontiguousarray(getattr(e, part)), rtol, atol, ulp,
                            check_zero_sign, f"{path}.{part}", alt=a)
        return
    if e.dtype.kind != "f":
        raise TypeError(f"{path}: unsupported dtype {e.dtype} in comparison")
    fi = np.finfo(e.dtype)
    if rtol is None and atol is None and ulp is None:
        ulp = ARITH["ulp"]
    g64 = g.astype(np.float64)
    e64 = e.astype(np.float64)
    gnan, enan = np.isnan(g), np.isnan(e)
    bad = gnan != enan
    both = ~gnan & ~enan
    einf = np.isinf(e) & both
    bad |= einf & (g64 != e64)
    fin = both & ~np.isinf(e)
    bad |= fin & ~np.isfinite(g)
    with np.errstate(all="ignore"):
        diff = np.abs(g64 - e64)
        bound = np.zeros(e.shape, np.float64)
        if atol is not None:
            bound = np.maximum(bound, np.broadcast_to(np.asarray(atol, np.float64), e.shape))
        if rtol is not None:
            bound = np.maximum(bound, rtol * np.abs(e64))
        if ulp:        # (not 0 * spacing: the spacing of the largest float is inf)
            mag = np.maximum(np.abs(e), fi.tiny).astype(e.dtype)
            bound = np.maximum(bound, ulp * np.spacing(mag).astype(np.float64))
        ok = diff <= bound
        if alt is not None:
            # element also accepted when within the same tolerance of `alt`
            # (the correctly rounded value, see Batch.check(alt_f64=True))
            a64 = np.broadcast_to(np.asarray(alt).astype(np.float64), e.shape)
            amag = np.maximum(np.abs(a64), fi.tiny).astype(e.dtype)
            abound = np.zeros(e.shape, np.float64)
            if ulp:
                abound = np.maximum(abound, ulp * np.spacing(amag).astype(np.float64))
            if rtol is not None:
                abound = np.maximum(abound, rtol * np.abs(a64))
            ok |= np.abs(g64 - a64) <= abound
        bad |= fin & np.isfinite(g) & ~ok
        if check_zero_sign:
            z = both & (e == 0) & (g == 0)
            bad |= z & (np.signbit(g) != np.signbit(e))
    if np.any(bad):
        with np.errstate(all="ignore"):
            ulps = diff / np.spacing(np.maximum(np.abs(e), fi.tiny).astype(e.dtype)).astype(np.float64)
            worst = np.nanmax(np.where(fin & np.isfinite(g), ulps, 0)) if e.size else 0
        raise AssertionError(
            f"{path}: {int(bad.sum())}/{bad.size} elements differ (dtype {e.dtype}, "
            f"rtol={rtol}, atol={'array' if np.ndim(atol) else atol}, ulp={ulp}, "
            f"zero-sign={'checked' if check_zero_sign else 'ignored'}; worst finite "
            f"error {worst:.3g} ULP)\n" + _fmt_mismatches(
                np.nonzero(np.atleast_1d(bad)), np.atleast_1d(g), np.atleast_1d(e))
        )


def assert_matches_numpy(got, expected, rtol=None, atol=None, ulp=None,
                         check_zero_sign=False, _path="result", alt=None):
    """Compare a cppcodegen result pytree with the NumPy one, leaf by leaf.

    Containers (tuple/list/dict) must have the same type and keys/length.
    Array leaves: same dtype, same shape, equal values (see module docstring for
    the tolerance rules).  A 0-d ndarray and a NumPy scalar are interchangeable
    when dtype and value agree.  Python scalars returned by NumPy must come back
    as Python or NumPy scalars of the same kind and value.
    """
    kw = dict(rtol=rtol, atol=atol, ulp=ulp, check_zero_sign=check_zero_sign)
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{_path}: expected a dict, got {type(got).__name__}"
        assert set(got) == set(expected), (
            f"{_path}: dict keys {sorted(map(repr, got))} != {sorted(map(repr, expected))}")
        for k in expected:
            assert_matches_numpy(got[k], expected[k], _path=f"{_path}[{k!r}]", **kw)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected), (
            f"{_path}: expected {type(expected).__name__}, got {type(got).__name__}")
        assert len(got) == len(expected), f"{_path}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_matches_numpy(g, e, _path=f"{_path}[{i}]", **kw)
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert isinstance(got, (np.ndarray, np.generic)), (
            f"{_path}: expected a NumPy {type(expected).__name__} of dtype {expected.dtype}, "
            f"got {type(got).__name__}: {got!r}")
        if isinstance(expected, np.ndarray) and expected.ndim > 0:
            assert isinstance(got, np.ndarray), (
                f"{_path}: expected ndarray, got {type(got).__name__}")
        assert got.dtype == expected.dtype, (
            f"{_path}: dtype {got.dtype} != expected {expected.dtype}")
        _compare_arrays(np.asarray(got), np.asarray(expected), rtol, atol, ulp,
                        check_zero_sign, _path, alt=alt)
        return
    if expected is None:
        assert got is None, f"{_path}: expected None, got {got!r}"
        return
    if isinstance(expected, bool):
        assert isinstance(got, (bool, np.bool_)), f"{_path}: expected bool, got {type(got).__name__}"
        assert bool(got) == expected, f"{_path}: {got!r} != {expected!r}"
        return
    if isinstance(expected, int):
        assert isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_)), (
            f"{_path}: expected int, got {type(got).__name__}")
        assert int(got) == expected, f"{_path}: {got!r} != {expected!r}"
        return
    if isinstance(expected, float):
        assert isinstance(got, (float, np.floating)), (
            f"{_path}: expected float, got {type(got).__name__}")
        _compare_arrays(np.asarray(float(got)), np.asarray(expected), rtol, atol, ulp,
                        check_zero_sign, _path)
        return
    raise TypeError(f"{_path}: don't know how to compare {type(expected).__name__}")


# --------------------------------------------------------------------------
# running things
# --------------------------------------------------------------------------
def _copy_tree(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, tuple):
        return tuple(_copy_tree(x) for x in a)
    if isinstance(a, list):
        return [_copy_tree(x) for x in a]
    if isinstance(a, dict):
        return {k: _copy_tree(v) for k, v in a.items()}
    return a


def _same_bits(a, b):
    """Exact equality including NaN payload positions and signed zeros."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _leaves(tree, path):
    if isinstance(tree, np.ndarray):
        yield path, tree
    elif isinstance(tree, (tuple, list)):
        for i, x in enumerate(tree):
            yield from _leaves(x, f"{path}[{i}]")
    elif isinstance(tree, dict):
        for k, x in tree.items():
            yield from _leaves(x, f"{path}[{k!r}]")


def assert_inputs_unchanged(args, pristine, what="compiled call", writes=()):
    """Every array in ``args`` (also inside tuples, lists and dicts) is bit-identical to its
    copy in ``pristine``, except the arguments whose positions are in ``writes`` (those the
    function writes to on purpose)."""
    for i, (a, p) in enumerate(zip(args, pristine)):
        if i in writes:
            continue
        for (path, x), (_, y) in zip(_leaves(a, f"#{i}"), _leaves(p, f"#{i}")):
            assert _same_bits(x, y), f"{what} modified its input argument {path}"


def run_numpy(fn, *args):
    """Run fn eagerly on copies of args with warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*_copy_tree(list(args)))


def run_compiled(compiled, *args, writes=()):
    """Call ``compiled(*args)`` with warnings silenced, and check that the call left every
    input array unchanged (bit for bit) except those at the positions in ``writes``."""
    pristine = _copy_tree(list(args))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = compiled(*args)
    assert_inputs_unchanged(args, pristine, f"compiled {getattr(compiled, '__name__', 'call')}",
                            writes)
    return out


_COMPILED = {}


def compiled_version(fn):
    """cppcodegen.compile(fn), memoised per process so a function used by
    several tests is wrapped (and therefore built) once."""
    c = _COMPILED.get(fn)
    if c is None:
        c = _COMPILED[fn] = cppcodegen.compile(fn)
    return c


def check_against_numpy(fn, *args, writes=(), **tol):
    """Eager NumPy on copies vs ``cppcodegen.compile(fn)(*args)``; the compiled
    call must not modify its inputs (except the argument positions in ``writes``).
    Returns (got, expected)."""
    expected = run_numpy(fn, *args)
    got = run_compiled(compiled_version(fn), *args, writes=writes)
    assert_matches_numpy(got, expected, **tol)
    return got, expected


def cppcodegen_error_classes():
    """Exception classes defined by cppcodegen (for 'any cppcodegen error')."""
    return tuple(v for v in vars(cppcodegen).values()
                 if isinstance(v, type) and issubclass(v, BaseException)
                 and getattr(v, "__module__", "").startswith("cppcodegen"))


def is_cppcodegen_error(exc) -> bool:
    return any(getattr(c, "__module__", "").startswith("cppcodegen") for c in type(exc).__mro__)


def assert_compiled_raises(fn, args, patterns, exc_types=(Exception,)):
    """The compiled fn must raise (at compile or run time) an exception of one of
    exc_types whose message matches one of the regex patterns (case-insensitive)."""
    with pytest.raises(exc_types) as info:
        run_compiled(compiled_version(fn), *args)
    msg = str(info.value)
    assert any(re.search(p, msg, re.I) for p in patterns), (
        f"compiled {fn.__name__} raised {type(info.value).__name__}: {msg!r}; expected the "
        f"message to match one of {patterns}")
    return info.value


def run_isolated(code: str, timeout=600):
    """Run a snippet in a fresh interpreter (for cases where a wrong kernel could
    kill the process, e.g. SIGFPE on integer division).  The snippet can import
    helpers.  Fails the test with the output if the process does not exit 0."""
    src = "import sys; sys.path.insert(0, %r)\n" % TESTS_DIR + textwrap.dedent(code)
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ))
    if p.returncode != 0:
        sig = f" (killed by signal {-p.returncode})" if p.returncode < 0 else ""
        raise AssertionError(f"isolated check failed with exit code {p.returncode}{sig}\n"
                             f"--- stdout\n{p.stdout[-4000:]}\n--- stderr\n{p.stderr[-6000:]}")
    return p.stdout


# --------------------------------------------------------------------------
# batched compilation: one compiled function computes many ops
# --------------------------------------------------------------------------
class BatchError(AssertionError):
    pass


_BATCH_RESULTS = {}


def _make_function(key, params, exprs):
    fname = "batch_" + re.sub(r"\W", "_", key)
    body = "".join(f"        {name!r}: {expr},\n" for name, expr in exprs.items())
    src = f"def {fname}({', '.join(params)}):\n    return {{\n{body}    }}\n"
    filename = f"<cppcodegen-test-batch {key}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np, "__name__": "cppcodegen_test_batches"}
    exec(compile(src, filename, "exec"), ns)
    return ns[fname]


class Batch:
    """Many NumPy expressions over the same arguments compiled as ONE function
    returning a dict {name: expr}.  Built lazily, once per process (xdist groups
    keep all tests of a batch on one worker).

    exprs: {name: python expression over the parameter names and ``np``}
    make_args: () -> tuple of arguments (deterministic)

    If the whole batch fails, it is bisected so each working op is still
    checked and each failing op reports its own error.  Bisection stops as soon
    as both halves fail with the same error as their parent (a global failure,
    e.g. the C++ build itself; costs 2 extra attempts) and is capped at
    BISECT_BUDGET extra compile attempts per batch.
    """

    def __init__(self, key, params, exprs, make_args, options=None):
        self.key = key
        self.options = options
        self.params = tuple(params)
        self.exprs = dict(exprs)
        self.make_args = make_args

    def __repr__(self):
        return f"Batch({self.key})"

    def args(self):
        return self.make_args()

    def _build(self):
        args = tuple(self.make_args())
        expected = {}
        for name, expr in self.exprs.items():
            f = eval(f"lambda {', '.join(self.params)}: {expr}", {"np": np})
            try:
                expected[name] = run_numpy(f, *args)
            except Exception as e:  # a bug in the test itself
                expected[name] = BatchError(f"test bug: NumPy raised for {name} = {expr}: {e!r}")
        ok = [n for n in self.exprs if not isinstance(expected[n], BaseException)]
        got = {}
        self._compile_into(ok, args, got)
        return args, expected, got

    BISECT_BUDGET = 16

    def _attempt(self, names, args, got):
        """Compile+run the sub-batch `names`; fill got and return None, or
        return the exception (got untouched)."""
        fn = _make_function(self.key + ("" if len(names) == len(self.exprs) else
                                        f"__{names[0]}_{len(names)}"),
                            self.params, {n: self.exprs[n] for n in names})
        pristine = _copy_tree(list(args))
        try:
            res = run_compiled(cppcodegen.compile(fn, options=self.options), *args)
        except Exception as e:
            return e
        try:
            assert_inputs_unchanged(args, pristine, f"compiled batch {self.key}")
        except AssertionError as e:
            return e
        if not isinstance(res, dict) or set(res) != set(names):
            return BatchError(f"compiled batch {self.key} returned {type(res).__name__} "
                              f"with keys {sorted(res) if isinstance(res, dict) else '-'}; "
                              f"expected a dict with keys {sorted(names)}")
        got.update(res)
        return None

    @staticmethod
    def _same_error(a, b):
        # ignore paths, addresses, generated batch names and line numbers
        norm = lambda e: re.sub(  # noqa: E731
            r"/[^\s:'\"]+|0x[0-9a-fA-F]+|<cppcodegen-test-batch [^>]*>|batch_\w+|\d+", "", str(e))
        return type(a) is type(b) and norm(a) == norm(b)

    def _compile_into(self, names, args, got):
        if not names:
            return
        self._budget = self.BISECT_BUDGET
        err = self._attempt(names, args, got)
        if err is not None:
            self._resolve(names, err, args, got)

    def _resolve(self, names, err, args, got):
        if len(names) == 1 or self._budget < 2:
            for n in names:
                got[n] = err
            return
        h = len(names) // 2
        left, right = names[:h], names[h:]
        self._budget -= 2
        el = self._attempt(left, args, got)
        er = self._attempt(right, args, got)
        if el is not None and er is not None and self._same_error(el, err) \
                and self._same_error(er, err):
            for n in names:  # global failure: stop bisecting
                got[n] = err
            return
        if el is not None:
            self._resolve(left, el, args, got)
        if er is not None:
            self._resolve(right, er, args, got)

    def results(self):
        r = _BATCH_RESULTS.get(self.key)
        if r is None:
            r = _BATCH_RESULTS[self.key] = self._build()
        return r

    def get(self, name):
        """(got, expected) for one op; raises if NumPy or cppcodegen failed for it."""
        _, expected, got = self.results()
        e = expected[name]
        if isinstance(e, BaseException):
            raise e
        g = got[name]
        if isinstance(g, BaseException):
            raise BatchError(f"[{self.key}] {name} = {self.exprs[name]}: compiled batch failed "
                             f"with {type(g).__name__}: {g}") from g
        return g, e

    def check(self, name, alt_f64=False, **tol):
        """Compare one op.  alt_f64=True (float32 transcendentals): an element
        also passes when within the tolerance of the float64 computation
        rounded to float32, i.e. of the (nearly) correctly rounded result.
        NumPy's own float32 SIMD log/tan/... are up to ~3 ULP off, so a kernel
        that is 3 ULP off the other way is accurate but 6 ULP from NumPy."""
        g, e = self.get(name)
        alt = None
        if alt_f64 and isinstance(e, (np.ndarray, np.generic)) and e.dtype == np.float32:
            args = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32
                    else a for a in self.results()[0]]
            f = eval(f"lambda {', '.join(self.params)}: {self.exprs[name]}", {"np": np})
            with np.errstate(all="ignore"):
                alt = np.asarray(run_numpy(f, *args)).astype(np.float32)
        assert_matches_numpy(g, e, _path=f"{self.key}:{name} = {self.exprs[name]}", alt=alt,
                             **tol)

    def param(self, name, *extra, id=None):
        """pytest.param(self, name, *extra) grouped on one xdist worker."""
        return pytest.param(self, name, *extra, id=id or f"{self.key}-{name}",
                            marks=pytest.mark.xdist_group(self.key))


# --------------------------------------------------------------------------
# deterministic inputs
# --------------------------------------------------------------------------
def rng(seed):
    return np.random.default_rng(seed)


def float_specials(dtype):
    """NaN, +-inf, +-0, +-1, halves (rounding ties), subnormals, tiny, max,
    eps, values near exp overflow/underflow, pi-ish, 0.1 (1 // 0.1 == 9)."""
    fi = np.finfo(dtype)
    big_exp = 88.0 if np.dtype(dtype) == np.float32 else 709.0
    v = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
         3.0, -3.0, 7.0, -7.0, 0.1, -0.1, 0.999, -0.999, 1.001, 2.0, 10.0, -10.0, 100.0,
         1e4, -1e4, float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal),
         -float(fi.smallest_subnormal), float(fi.max), -float(fi.max), float(fi.eps),
         big_exp, big_exp + 1.0, -big_exp - 20.0, np.pi, -np.pi, np.pi / 2, 1e-5, -1e-5]
    return np.array(v, dtype=np.float64).astype(dtype)


def float_mixed_1d(dtype, n=131, seed=0):
    """n (prime) values: the specials, then uniform(-1,1), uniform(-10,10) and
    log-uniform magnitudes with random sign; shuffled deterministically."""
    r = rng(seed)
    s = float_specials(dtype)
    m = n - len(s)
    a, b = m // 3, m // 3
    c = m - a - b
    rest = np.concatenate([r.uniform(-1, 1, a), r.uniform(-10, 10, b),
                           r.choice([-1.0, 1.0], c) * 10.0 ** r.uniform(-6, 6, c)])
    v = np.concatenate([s, rest.astype(dtype)])
    return v[r.permutation(n)].astype(dtype)


def float_big(dtype, shape=(257, 1031), seed=1, specials=True, lo=-3.0, hi=3.0):
    r = rng(seed)
    x = r.uniform(lo, hi, shape).astype(dtype)
    if specials:
        flat = x.reshape(-1)
        pos = r.choice(flat.size, 64, replace=False)
        flat[pos] = np.resize(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.0, -1.0]), 64)
    return x


def dyadic(dtype, shape, seed=2, k=32):
    """Values j/4 with |j| <= k: sums of up to ~500k of them are exact in float32."""
    return (rng(seed).integers(-k, k + 1, shape) / 4.0).astype(dtype)


def int_specials(dtype):
    ii = np.iinfo(dtype)
    v = [0, 1, 2, 3, 5, 7, 10, 13, 100, ii.max, ii.max - 1, ii.max // 2, ii.max // 2 + 1]
    if ii.min < 0:
        v += [-1, -2, -3, -5, -7, -10, -13, -100, ii.min, ii.min + 1, ii.min // 2]
    else:
        v += [128, 200, 254]
    return np.array(sorted(set(v)), dtype=dtype)


def int_mixed_1d(dtype, n=131, seed=3):
    r = rng(seed)
    s = int_specials(dtype)
    ii = np.iinfo(dtype)
    lo, hi = max(ii.min, -1000), min(ii.max, 1000)
    rest = np.concatenate([r.integers(lo, hi, (n - len(s)) // 2, endpoint=True),
                           r.integers(ii.min, ii.max, n - len(s) - (n - len(s)) // 2,
                                      endpoint=True, dtype=np.int64 if ii.max < 2**63 - 1 else dtype)])
    v = np.concatenate([s, rest.astype(dtype)])
    return v[r.permutation(n)].astype(dtype)


def bool_mixed(shape, seed=4, p=0.5):
    return rng(seed).random(shape) < p
