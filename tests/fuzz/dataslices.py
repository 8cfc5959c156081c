"""The loop fuzzer's *dataslice* family: loops whose slices take their bounds from array values.

In: a seed and an index. Out: a ``loops.LoopProgram`` (the same program tree, arguments and
checker as the loop fuzzer: ``loopcheck.check`` runs it as plain Python, the oracle, and
compiled). ``python -m tests.fuzz --loops --family dataslice --seed S --start I --count 1``
reproduces and shrinks one.

Every program is one (now and then two) compiled ``for`` loops over ``i`` whose bodies slice
1-D arrays with bounds read from integer arrays in the loop (``a[lo[i]:hi[i]]``,
``vals[p[i]:p[i + 1]]``), and NumPy clamps them: the family draws bound arrays (int64 or
int32) whose values are negative (counting from the end, or past the start), past the end,
reversed (start > stop: empty), equal (empty), huge (``2**62``, the type's extremes), CSR
``indptr`` rows (some empty, some running past the array), counts accumulated in a carried
``pos`` (``a[pos:pos + cnt[i]]``), bounds computed from values (``lo[i] // 2``,
``max(lo[i], 0)``, ``-hi[i]``, ``lo[i] * 2`` (wrapping as NumPy's int32/int64 does),
``int(fb[i])`` of a float), and bounds mixed with the loop index (``a[g[i]:i + 1]``,
``a[i - 1:g[i]]``), a literal or an ``np.int64`` argument, or left out (``a[lo[i]:]``).
Steps None, 1, 2 and 3. The sliced arrays are float64/float32/int64/int32, some read with a
negative stride, and rows of a 2-D array (``M[i, lo[i]:hi[i]]``, ``M[lo[i]:hi[i]]``,
``M[s, s]``, ``M[:, s]``; stored in ``Z[i, s]``). The slices are

* read: ``.sum()``, ``np.sum``, ``.mean()`` (NaN for an empty one), ``.max/.min(initial=)``,
  ``.prod()``, ``(A > t).sum()``, ``A @ B`` / ``np.dot(A, B)``, elementwise combinations of
  two slices with the *same bounds* on arrays of the same length (``(a[s] * b[s]).sum()``,
  ``np.maximum(a[s], b[s]).min(initial=..)``) and slices with the same bounds on an array of
  another length (clamped on their own); results stored in ``out[i]``, accumulated in
  carried scalars, in branches (``if a[s].sum() > t:``), before a ``break``/``continue``;
* written: ``acc[s] = v`` and ``acc[s] += v`` / ``-=`` / ``*=`` with a scalar, the loop
  index, a reduction or a slice of the same bounds (``acc[s] += a[s] * 2.0``), into a local
  array, an array of another length or an argument (``b[s] += 1.0``); through a view
  (``v = acc[s]; v += 1.0``);
* used in ``prange`` loops (independent ``out[i] = ...`` and reductions), nested loops
  (``a[lo[i] + j:hi[i]]``) and an inner loop over the slice (``for j in range(seg.shape[0])``).

The result is a tuple of everything the loop writes (``out``, ``acc``, scalars of fixed
dtypes: ``np.float64(0.0)``, ``np.float32(0.0)`` for float32 values, ``np.int64(0)``: their
Python type does not depend on the path) and the arguments as the call leaves them. Half the
programs carry further argument lists (``DataSliceProgram.calls``: other sizes, 0 and 1
included) for the same compiled function, whose new build (then one with symbolic sizes)
loopcheck.check judges call by call. No twin (``twin`` returns None): the loop fuzzer's
twins run the loop in Python while tracing, where a slice of run-time length cannot be built.

KNOWN_LIMITS (left out unless ``--known``): constructs of recorded bugs (the strict xfails
in tests/test_fuzz_data_slices.py).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from .inputs import InputSpec
from .loops import Arg, Draws, LoopProgram, Node, _render_block, walk

KNOWN_LIMITS: set = set()     # (none left: "reslice", "slice-element" ... compile now)

SIZES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13)
SIZE_P = (1, 2, 2, 3, 3, 3, 2, 2, 2, 1, 1)
TRIPS = (0, 1, 2, 3, 4, 5, 6, 8, 12)
TRIP_P = (1, 2, 2, 3, 3, 3, 2, 2, 1)
_I64 = np.iinfo(np.int64)
BOUND_NAMES = ("lo", "hi", "p", "g", "cnt", "fb")


@dataclass
class Slice:
    """One slice ``[start:stop:step]``: texts, and a Python evaluator of its raw bounds."""
    start: str | None
    stop: str | None
    step: int | None
    kind: str                  # the pattern drawn (features)
    ev: object = None          # (i, env) -> (start, stop) raw values (None: open), or None

    def text(self):
        s = f"{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}"
        return s + (f":{self.step}" if self.step is not None else "")


@dataclass
class PNode(Node):
    """A ``for`` loop over ``prange(...)`` (cppcodegen's parallel range)."""

    def render(self, ind, ret):
        if self.kind == "for" and "prange" in self.tags:
            pad = "    " * ind
            return ([pad + f"for {self.text} in prange({', '.join(self.rng)}):"]
                    + _render_block(self.body, ind + 1, ret))
        return super().render(ind, ret)


@dataclass
class DataSliceProgram(LoopProgram):
    """A loop program that may import ``prange``; ``calls``: further argument lists ([Arg])
    the same compiled function is called with (other sizes: loopcheck.check judges each)."""
    calls: list = field(default_factory=list)

    def calls_source(self):
        return "".join(f"\nargs{k + 2} = [" + ", ".join(a.source() for a in c) + "]"
                       for k, c in enumerate(self.calls))

    def module_source(self, names=("f",), twins=()):
        src = super().module_source(names, twins)
        if "prange(" in src:
            src = src.replace("import numpy as np\n",
                              "import numpy as np\n\nfrom cppcodegen import prange\n", 1)
        return src


class Gen(Draws):
    """One program's draws (``program()``), reproducible from (seed, index)."""

    def __init__(self, seed, index, avoid=None):
        self.r = np.random.default_rng([int(seed), int(index), 0xD5])
        self.seed, self.idx = seed, index
        self.avoid = set(KNOWN_LIMITS) if avoid is None else set(avoid)
        self.args = []
        self.vals = {}             # argument name -> its values (arrays) or value
        self.pre = []              # initializations before the loop
        self.ret = []
        self.features = set()
        self.locals = {}           # local array -> length
        self.n_vars = 0

    # -- arguments
    def add_array(self, name, values, dt=None):
        values = np.asarray(values, dtype=dt)
        spec = InputSpec(values.dtype.name, values.shape, "lit", seed=0, data=values)
        if values.ndim == 1 and values.shape[0] > 1 and self.p(0.1):
            spec.neg = (0,)         # read with a negative stride
        self.args.append(Arg(name, "array", spec=spec))
        self.vals[name] = values
        return name

    def data_array(self, name, shape, dt, dom=None, layout=True):
        kind = np.dtype(dt).kind
        if dom is None:
            dom = (self.choice(["mixed", "int", "int", "pos"]) if kind == "f" else "small")
        shape = shape if isinstance(shape, tuple) else (shape,)
        spec = InputSpec(dt, shape, dom, seed=int(self.r.integers(0, 10**6)))
        if layout and len(shape) == 2 and self.p(0.2):
            spec.perm = (1, 0)
        elif layout and shape[0] > 1 and self.p(0.1):
            spec.neg = (0,)
        arg = Arg(name, "array", spec=spec)
        self.args.append(arg)
        self.vals[name] = spec.values()
        return name

    def resized_args(self, N, T, N2):
        """The program's arguments drawn again for sizes ``N`` (a, b, M's rows), ``T`` (the
        bound arrays' rows) and ``N2`` (c): the same names, dtypes and kinds of values, for
        another call of the same compiled function (a build for the new shapes, or one
        with symbolic sizes, serves it)."""
        out = []
        vals = {}
        for a in self.args:
            if a.kind != "array":
                if a.name == "k":
                    v = int(self.r.integers(-N - 2, N + 3))
                    out.append(Arg("k", "int64", value=v))
                else:
                    out.append(Arg(a.name, a.kind, value=a.value))
                continue
            sp = a.spec
            if a.name in BOUND_NAMES:
                raw = self.bound_raw(a.name, N, T, vals.get("lo"))
                vals[a.name] = raw
                if np.dtype(sp.dtype).kind == "f":
                    v = np.asarray(raw, dtype=sp.dtype)
                else:
                    info = np.iinfo(np.dtype(sp.dtype))
                    v = np.clip(np.asarray(raw, dtype=object), info.min, info.max).astype(sp.dtype)
                spec = InputSpec(sp.dtype, v.shape, "lit", seed=0, data=v, neg=sp.neg if len(v) > 1 else ())
            else:
                shape = {"c": (N2,), "M": (T, N)}.get(a.name, (N,))
                spec = InputSpec(sp.dtype, shape, sp.domain, seed=int(self.r.integers(0, 10**6)),
                                 perm=sp.perm, neg=sp.neg if shape[0] > 1 else ())
            out.append(Arg(a.name, "array", spec=spec))
        return out

    def bound_values(self, n, size):
        """``n`` raw slice bounds for an axis of ``size``: in range, negative, past the end,
        now and then huge."""
        out = []
        for _ in range(n):
            u = self.r.random()
            if u < 0.5:
                out.append(int(self.r.integers(0, size + 1)))
            elif u < 0.75:
                out.append(int(self.r.integers(-size - 3, 0)))
            elif u < 0.95:
                out.append(int(self.r.integers(size + 1, size + 6)))
            else:
                out.append(int(self.choice([2**31 - 1, -2**31, 2**62, -2**62])))
        return out

    def bound_dtype(self, vals):
        dt = "int64" if self.p(0.7) else "int32"
        if dt == "int32" and any(abs(v) > 2**31 - 1 for v in vals if v != -2**31):
            dt = "int64"
        if dt == "int32":
            self.features.add("int32-bounds")
        if self.p(0.03) and dt == "int64":         # the type's extremes
            vals = list(vals)
            if vals:
                vals[int(self.r.integers(0, len(vals)))] = int(self.choice([_I64.min, _I64.max]))
                self.features.add("extreme-bound")
        if any(abs(v) >= 2**31 - 1 for v in vals):
            self.features.add("huge-bound")
        return vals, dt

    def make_inputs(self):
        dt = self.choice(["float64", "float32", "int64", "int32"], [6, 2, 2, 1])
        self.N = N = int(self.choice(SIZES, SIZE_P))
        self.T = int(self.choice(TRIPS, TRIP_P))
        self.kind = np.dtype(dt).kind
        self.data_array("a", N, dt)
        if self.p(0.65):
            bdt = self.choice(["float64", dt]) if self.kind == "f" else self.choice(["float64", dt])
            self.data_array("b", N, bdt)
        if self.p(0.35):
            self.N2 = int(self.choice([v for v in SIZES if v != N]))
            self.data_array("c", self.N2, self.choice(["float64", dt]))
        if self.p(0.3):             # rows M[i] of a's length: M[i, lo[i]:hi[i]]
            self.data_array("M", (self.T, N), self.choice(["float64", dt]))
        self.args.append(Arg("t", "float", value=float(self.choice([0.0, 0.5, -0.5, 1.0]))))
        self.vals["t"] = self.args[-1].value
        if self.p(0.25):
            k = int(self.r.integers(-N - 2, N + 3))
            self.args.append(Arg("k", "int64", value=k))
            self.vals["k"] = k

    def bound_array(self, name):
        """The integer array ``name`` (lo, hi, p, g, cnt), drawn on first use."""
        if name in self.vals:
            return name
        v = self.bound_raw(name, self.N, self.T, self.vals.get("lo"))
        v, dt = self.bound_dtype(v) if name != "fb" else (v, "float64")
        return self.add_array(name, v, dt)

    def bound_raw(self, name, N, T, lo=None):
        """Values of bound array ``name`` for arrays of length ``N`` and ``T`` loop rows."""
        if name == "lo":
            v = self.bound_values(T, N)
        elif name == "fb":                           # floats: int(fb[i]) truncates
            v = [float(x) for x in np.round(self.r.uniform(-N - 3, N + 3, T), 2)]
        elif name == "hi":
            if lo is not None and self.p(0.5):         # lo + a small delta: reversed/empty
                d = [int(self.choice([-2, -1, 0, 0, 1, 2, 3, 5])) for _ in range(T)]
                v = [int(max(min(int(x) + e, 2**62), -2**62)) for x, e in zip(lo, d)]
            else:
                v = self.bound_values(T, N)
        elif name == "p":                            # CSR row pointers (T rows)
            s0 = int(self.choice([0, 0, 0, 0, -1, 1, N]))
            cnt = self.r.integers(0, 4, T)
            cnt[self.r.random(T) < 0.25] = 0
            v = [s0] + [int(s0 + c) for c in np.cumsum(cnt)]
            if self.p(0.15):
                v = list(self.r.permutation(v))
                self.features.add("unsorted-indptr")
        elif name == "g":
            v = [int(self.r.integers(-N - 2, N + 3)) for _ in range(T)]
        else:                                        # cnt: counts for a carried position
            v = [int(x) for x in self.r.integers(0, 4, T)]
            if T and self.p(0.2):
                v[int(self.r.integers(0, T))] = -1   # a step back
        return v

    # -- slices
    def slice_(self, reuse=True):
        """A slice with at least one bound computed from array values (``reuse``: now and
        then one drawn before in this loop, the same bounds again)."""
        if reuse and self.slices and self.p(0.4):
            self.features.add("same-bounds-reused")
            return self.choice(self.slices)
        r = self.r
        forms = [("lohi", 6), ("csr", 4), ("mixed", 4), ("open", 2), ("reversed", 2),
                 ("fixed", 2), ("literal", 2), ("local", 2), ("offset", 1)]
        if self.carry_ok and not self.parallel:
            forms.append(("carried", 1))
        if "k" in self.vals:
            forms.append(("karg", 1))
        forms += [("arith", 2), ("intfloat", 1)]
        kind = self.choice([f for f, _ in forms], [w for _, w in forms])
        if kind == "lohi":
            self.bound_array("lo"), self.bound_array("hi")
            s = Slice("lo[i]", "hi[i]", None, kind, lambda i, e: (int(e["lo"][i]), int(e["hi"][i])))
        elif kind == "csr":
            self.bound_array("p")
            s = Slice("p[i]", "p[i + 1]", None, kind, lambda i, e: (int(e["p"][i]), int(e["p"][i + 1])))
        elif kind == "mixed":
            self.bound_array("g")
            f = self.choice([("g[i]", "i + 1"), ("i", "g[i]"), ("g[i]", "i"), ("i - 1", "g[i]"),
                             ("g[i]", "-1 - i"), ("i + 1", "g[i] + 1")])
            fs = {"i": lambda i: i, "i + 1": lambda i: i + 1, "i - 1": lambda i: i - 1,
                  "-1 - i": lambda i: -1 - i}

            def ev(i, e, f=f):
                def one(x):
                    if x.startswith("g[i]"):
                        return int(e["g"][i]) + (1 if x.endswith("+ 1") else 0)
                    return fs[x](i)
                return one(f[0]), one(f[1])
            s = Slice(f[0], f[1], None, kind, ev)
        elif kind == "open":
            name = self.bound_array(self.choice(["lo", "hi", "g"]))
            if self.p(0.5):
                s = Slice(f"{name}[i]", None, None, kind, lambda i, e, n=name: (int(e[n][i]), None))
                self.features.add("open-stop")
            else:
                s = Slice(None, f"{name}[i]", None, kind, lambda i, e, n=name: (None, int(e[n][i])))
                self.features.add("open-start")
        elif kind == "reversed":
            self.bound_array("lo"), self.bound_array("hi")
            s = Slice("hi[i]", "lo[i]", None, kind, lambda i, e: (int(e["hi"][i]), int(e["lo"][i])))
        elif kind == "fixed":
            name = self.bound_array(self.choice(["lo", "g", "p"]))
            d = int(self.choice([0, 1, 2, 3, -1]))
            stop = f"{name}[i]" + ("" if d == 0 else f" + {d}" if d > 0 else f" - {-d}")
            s = Slice(f"{name}[i]", stop, None, kind,
                      lambda i, e, n=name, d=d: (int(e[n][i]), int(e[n][i]) + d))
        elif kind == "literal":
            name = self.bound_array(self.choice(["lo", "hi", "g"]))
            c = int(r.integers(-self.N - 2, self.N + 3))
            if self.p(0.5):
                s = Slice(f"{name}[i]", str(c), None, kind, lambda i, e, n=name, c=c: (int(e[n][i]), c))
            else:
                s = Slice(str(c), f"{name}[i]", None, kind, lambda i, e, n=name, c=c: (c, int(e[n][i])))
        elif kind == "karg":
            name = self.bound_array(self.choice(["lo", "hi", "g"]))
            if self.p(0.5):
                s = Slice("k", f"{name}[i]", None, kind, lambda i, e, n=name: (int(e["k"]), int(e[n][i])))
            else:
                s = Slice(f"{name}[i]", "k", None, kind, lambda i, e, n=name: (int(e[n][i]), int(e["k"])))
        elif kind == "carried":
            self.bound_array("cnt")
            if "pos" not in self.carried:
                self.carried.add("pos")
                self.pre.append(Node("line", f"pos = {self.choice(['0', 'np.int64(0)'])}", tags={"init"}))
                self.post.append(Node("line", "pos += cnt[i]"))
                self.ret.append("pos")
            s = Slice("pos", "pos + cnt[i]", None, kind, None)
        elif kind == "local":
            src = self.choice(["lohi", "csr"])
            if src == "lohi":
                self.bound_array("lo"), self.bound_array("hi")
                line, ev = "l_, h_ = lo[i], hi[i]", lambda i, e: (int(e["lo"][i]), int(e["hi"][i]))
            else:
                self.bound_array("p")
                line, ev = "l_, h_ = p[i], p[i + 1]", lambda i, e: (int(e["p"][i]), int(e["p"][i + 1]))
            if self.local_line not in (None, line):
                return self.slice_(reuse=False)
            self.local_line = line
            s = Slice("l_", "h_", None, kind, ev)
        elif kind == "arith":                   # bounds computed from the values
            self.bound_array("lo"), self.bound_array("hi")
            c = int(r.integers(0, self.N + 2))
            f = self.choice([("lo[i] // 2", "hi[i] % 7", lambda l, h: (l // 2, h % 7)),
                             ("max(lo[i], 0)", f"min(hi[i], {c})", lambda l, h: (max(l, 0), min(h, c))),
                             ("-hi[i]", "abs(lo[i])", None),
                             ("lo[i] * 2", "hi[i] + lo[i]", None),
                             ("hi[i] - lo[i]", None, None),
                             ("min(lo[i], hi[i])", "max(lo[i], hi[i])", lambda l, h: (min(l, h), max(l, h)))])
            ev = None
            if f[2] is not None:
                ev = (lambda i, e, g=f[2]: g(int(e["lo"][i]), int(e["hi"][i])))
            s = Slice(f[0], f[1], None, kind, ev)
        elif kind == "intfloat":                # int() of a float value: toward zero
            self.bound_array("fb")
            if "lo" in self.vals and self.p(0.5):
                s = Slice("int(fb[i])", "lo[i]", None, kind,
                          lambda i, e: (int(e["fb"][i]), int(e["lo"][i])))
            else:
                s = Slice("int(fb[i] * 0.5)", "int(fb[i]) + 3", None, kind,
                          lambda i, e: (int(e["fb"][i] * 0.5), int(e["fb"][i]) + 3))
        else:                                   # offset: lo[i] + 1 : hi[i] - 1
            self.bound_array("lo"), self.bound_array("hi")
            s = Slice("lo[i] + 1", "hi[i] - 1", None, kind,
                      lambda i, e: (int(e["lo"][i]) + 1, int(e["hi"][i]) - 1))
        u = r.random()
        s.step = None if u < 0.55 else 2 if u < 0.85 else 1 if u < 0.93 else 3
        self.features.add(f"step{s.step or 1}")
        self.features.add(f"bounds-{kind}")
        self.slices.append(s)
        return s

    def classify(self, s, size, ivals):
        """Features of the values slice ``s`` takes over the loop (negative, past-end, ...)."""
        if s.ev is None:
            return
        env = dict(self.vals)
        for i in ivals:
            try:
                lo, hi = s.ev(i, env)
            except (IndexError, KeyError):
                continue
            for b in (lo, hi):
                if b is not None and b < 0:
                    self.features.add("negative-bound")
                if b is not None and b > size:
                    self.features.add("past-end")
            if lo is not None and hi is not None and lo > hi:
                self.features.add("reversed")
            if len(range(*slice(lo, hi, s.step).indices(size))) == 0:
                self.features.add("empty")

    # -- expressions
    def sl(self, arr, s):
        return f"{arr}[{s.text()}]"

    def fconst(self):
        return self.choice(["0.5", "2.0", "-1.0", "1.5"])

    def initial(self, kind):
        if kind == "f":
            return self.choice(["-np.inf", "np.inf", "0.0", "-1.0", "1.0", "100.0"])
        return self.choice(["-100", "100", "0", "-1"])

    def partner(self):
        """The other array of the same length as ``a`` (None if there is none)."""
        return "b" if "b" in self.vals else None

    def reduce(self, s=None):
        """(a scalar expression reading data slices, its kind "f" | "i")."""
        s = s or self.slice_()
        A = self.sl("a", s)
        b = self.partner()
        B = self.sl(b, s) if b else None
        kb = np.asarray(self.vals[b]).dtype.kind if b else None
        k2 = "f" if self.kind == "f" or kb == "f" else "i"
        opts = [("sum", 5), ("npsum", 2), ("mean", 2), ("max", 3), ("min", 3), ("npmax", 1),
                ("count", 2), ("prod", 1)]
        if "reslice" not in self.avoid:
            opts.append(("reslice", 2))
        if "slice-element" not in self.avoid:
            opts.append(("element", 2))
        if B:
            opts += [("dot", 3), ("matmul", 3), ("mulsum", 3), ("diffmax", 2), ("maxmin", 2),
                     ("abssum", 2)]
        if "c" in self.vals:
            opts += [("other", 3)]
        if "M" in self.vals:
            opts += [("row", 2), ("rowmul", 3), ("block", 2), ("colsum", 1)]
            opts += [("col", 1)] if self.N else []
        if "length-value" not in self.avoid:
            opts += [("length", 3)]
        k = self.choice([o for o, _ in opts], [w for _, w in opts])
        self.features.add(f"read-{k}")
        ka = self.kind
        if k == "sum":
            return f"{A}.sum()", ka
        if k == "npsum":
            return f"np.sum({A} * {self.fconst()})", "f"
        if k == "mean":
            return f"{A}.mean()", "f"
        if k in ("max", "min"):
            self.features.add(f"{k}-initial")
            return f"{A}.{k}(initial={self.initial(ka)})", ka
        if k == "npmax":
            self.features.add("max-initial")
            return f"np.max(np.abs({A}), initial={self.initial(ka)})", ka
        if k == "count":
            return f"({A} > t).sum()", "i"
        if k == "prod":
            return f"({A} * 0.5).prod()", "f"
        if k == "element":
            self.features.add("slice-element")
            return f"{A}[{self.choice(['0', '-1'])}]", ka
        if k == "reslice":
            self.features.add("reslice")
            return f"{A}[{self.choice(['1:', ':-1', '::-1', '::2'])}].sum()", ka
        if k == "dot":
            self.features.add("elementwise")
            return f"np.dot({A}, {B})", k2
        if k == "matmul":
            self.features.add("elementwise")
            return f"{A} @ {B}", k2
        if k == "mulsum":
            self.features.add("elementwise")
            return f"({A} * {B} - {A}).sum()", k2
        if k == "diffmax":
            self.features.add("elementwise")
            self.features.add("max-initial")
            return f"({A} - {B}).max(initial={self.initial(k2)})", k2
        if k == "maxmin":
            self.features.add("elementwise")
            self.features.add("min-initial")
            return f"np.maximum({A}, {B} * 2).min(initial={self.initial(k2)})", k2
        if k == "abssum":
            self.features.add("elementwise")
            return f"np.abs({A} + {B}).sum()", k2
        if k in ("row", "rowmul", "col", "block", "colsum"):
            self.features.add("2d")
            km = np.asarray(self.vals["M"]).dtype.kind
            k3 = "f" if "f" in (ka, km) else "i"
            R = f"M[i, {s.text()}]"
            if k == "row":
                if self.p(0.5):
                    self.features.add("max-initial")
                    return f"{R}.max(initial={self.initial(km)})", km
                return f"{R}.sum()", km
            if k == "rowmul":
                self.features.add("elementwise")
                return self.choice([f"({R} * {A}).sum()", f"{R} @ {A}"]), k3
            if k == "block":                    # rows (T of them) and columns (N)
                self.features.add("other-length")
                st = s.text()
                return self.choice([f"M[{st}].sum()", f"M[{st}, {st}].max(initial={self.initial(km)})",
                                    f"M[{st}, ::2].min(initial={self.initial(km)})"]), km
            if k == "colsum":
                self.features.add("elementwise")
                return f"(M[:, {s.text()}].sum(axis=0) * {A}).sum()", k3
            self.features.add("other-length")          # rows: T of them, not N
            return f"M[{s.text()}, 0].sum()", km
        if k == "other":          # the same bounds on an array of another length
            self.features.add("other-length")
            C = self.sl("c", s)
            kc = np.asarray(self.vals["c"]).dtype.kind
            return f"{A}.sum() + {C}.sum()", "f" if "f" in (ka, kc) else "i"
        # length
        self.features.add("length-value")
        return self.choice([f"{A}.shape[0]", f"len({A})"]), "i"

    def dtype_of(self, e):
        """NumPy's dtype of expression ``e`` (evaluated on the arguments at stand-in bounds)."""
        env = {"np": np, "i": 0, "j": 0, "l_": 0, "h_": 1, "pos": 0, "t": 0.5, "k": 0}
        for n, v in self.vals.items():
            if n in BOUND_NAMES:
                env[n] = np.zeros(self.T + 2, np.asarray(v).dtype)
            elif n == "M":
                env[n] = np.zeros((self.T + 2, self.N), np.asarray(v).dtype)
            else:
                env[n] = v
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return np.asarray(eval(e, env)).dtype
        except Exception:
            return np.dtype(np.float64)

    # -- statements
    def scalar(self, kind, dt=np.dtype(np.float64)):
        """A carried scalar accumulating values of dtype ``dt`` (``kind`` f: a sum, m: a
        running maximum, i: an integer sum), of a fixed NumPy dtype: Python's type of it does
        not depend on the path taken."""
        dt = np.dtype(dt)
        if dt == np.float32 and "float32-into-float64" in self.avoid:
            sfx, ty = "32", "np.float32"           # (float64 += float32: a known bug)
        elif dt.kind == "f" or kind != "i":
            sfx, ty = "", "np.float64"
            if dt == np.float32:
                self.features.add("float32-into-float64")
        else:
            sfx, ty = "", "np.int64"
        if kind == "f":
            name, init = "s" + sfx, f"{ty}(0.0)"
        elif kind == "m":
            name, init = "m" + sfx, f"{ty}(-np.inf)"
        else:
            name, init = "cnt_", "np.int64(0)"
        if name not in self.ret:
            self.pre.append(Node("line", f"{name} = {init}", tags={"init"}))
            self.ret.append(name)
        return name

    def out(self):
        if "out" not in self.ret:
            self.pre.append(Node("line", "out = np.zeros(" + self.trip_expr + ")", tags={"init"}))
            self.ret.append("out")
        return "out"

    def acc(self, same=True):
        """A local array to store into: of a's length (``same``) or of another length."""
        if same:
            have = [n for n, L in self.locals.items() if L == self.N]
            if have and self.p(0.6):
                return self.choice(have)
            name = self.fresh("acc")
            init = self.choice(["np.zeros(a.shape[0])", "np.zeros_like(a, dtype=np.float64)",
                                "a * 1.0", "np.full(len(a), 0.5)"]
                               + (["a.copy()"] if self.kind == "f" else []))
            L = self.N
        else:
            name = self.fresh("z")
            L = int(self.choice([v for v in (0, 1, 2, 3, 5, 9, 16) if v != self.N]))
            init = f"np.zeros({L})"
            self.features.add("other-length")
        self.locals[name] = L
        self.pre.append(Node("line", f"{name} = {init}", tags={"init"}))
        self.ret.append(name)
        return name

    def value(self, s, target_same):
        """A value for ``target[s] op= value`` (``target_same``: the target has a's length,
        so a slice with the same bounds fits)."""
        opts = [("lit", 3), ("index", 2), ("reduce", 2)]
        if target_same:
            opts += [("slice", 4), ("slice2", 2)]
        k = self.choice([o for o, _ in opts], [w for _, w in opts])
        if k == "lit":
            return self.fconst()
        if k == "index":
            return self.choice(["i", "i * 0.5"])
        if k == "reduce":
            return self.reduce()[0]
        self.features.add("store-slice")
        A = self.sl("a", s)
        b = self.partner()
        if k == "slice2" and b:
            self.features.add("elementwise")
            return f"{A} * 0.5 + {self.sl(b, s)}"
        return self.choice([A, f"{A} * 2.0", f"np.abs({A}) - t"])

    def store(self):
        same = self.p(0.8)
        if same and "M" in self.vals and self.p(0.3):  # a row of a 2-D array: Z[i, lo:hi]
            if "Z" not in self.ret:
                self.pre.append(Node("line", f"Z = {self.choice(['np.zeros(M.shape)', 'M * 0.5'])}",
                                     tags={"init"}))
                self.ret.append("Z")
            s = self.slice_()
            op = self.choice(["=", "+=", "-="])
            self.features.update({"2d", "store" if op == "=" else "aug-store"})
            return [Node("line", f"Z[i, {s.text()}] {op} {self.value(s, True)}")]
        target = self.acc(same)
        if same and "b" in self.vals and np.asarray(self.vals["b"]).dtype == np.float64 \
                and self.p(0.1):
            target = "b"                       # the caller's array, written in place
            self.features.add("write-arg")
        s = self.slice_()
        op = self.choice(["=", "+=", "-=", "*="], [4, 4, 1, 1])
        self.features.add("store" if op == "=" else "aug-store")
        v = self.value(s, same) if op != "*=" else self.fconst()
        # through a view (not *=: the oracle's perturbed run rewrites ``v *= c`` as
        # ``v = _cmul(v, c)``, which rebinds a name instead of writing through it)
        if self.p(0.3) and op in ("+=", "-=") and self.names_ok:
            self.features.add("view-update")
            vn = self.fresh("v")
            return [Node("line", f"{vn} = {self.sl(target, s)}"), Node("line", f"{vn} {op} {v}")]
        return [Node("line", f"{self.sl(target, s)} {op} {v}")]

    def read_stmt(self):
        """A reduction of data slices stored in ``out[i]`` or accumulated in a scalar (in a
        prange body each of them updated once: twice is refused, a known limitation)."""
        e, k = self.reduce()
        dt = self.dtype_of(e)
        u = self.r.random()
        for _ in range(4):
            if u < 0.45 or not self.carry_ok:
                target = (self.out(), "out")
            elif u < 0.75:
                target = (self.scalar("f", dt), "s")
            elif u < 0.85 and k == "i" and dt.kind in "iu":
                target = (self.scalar("i", dt), "c")
            else:           # (prange: max(m, float(v)), a Python float into np.float64)
                target = (self.scalar("m", np.float64 if self.parallel else dt), "m")
            if not self.parallel or target[0] not in self.updated:
                break
            u = self.r.random()
        else:
            return []
        self.updated.add(target[0])
        name, what = target
        if what == "out":
            return [Node("line", f"{name}[i] {self.choice(['=', '=', '+='])} {e}")]
        if what == "s":
            return [Node("line", f"{name} {self.choice(['+=', '-='])} {e}")]
        if what == "c":
            return [Node("line", f"{name} += {e}")]
        if self.parallel:
            return [Node("line", f"{name} = max({name}, float({e}))")]
        return [Node("line", f"{name} = np.maximum({name}, {e})")]

    def stmt(self, depth=0):
        u = self.r.random()
        if self.parallel:
            return self.read_stmt()
        if u < 0.42:
            return self.read_stmt()
        if u < 0.78:
            return self.store()
        if u < 0.85 and depth == 0:
            e, _ = self.reduce()
            self.features.add("branch")
            then = self.stmt(depth + 1)
            orelse = self.stmt(depth + 1) if self.p(0.5) else None
            cond = self.choice([f"{e} > t", f"{e} < 0"])
            if self.p(0.3) and "lo" in self.vals and "hi" in self.vals:
                cond = "hi[i] > lo[i]"
            elif "length-value" not in self.avoid and self.p(0.3):
                self.features.add("length-value")
                A = self.sl("a", self.slice_())
                cond = self.choice([f"{A}.shape[0] > 1", f"{A}.size == 0"])
            return [Node("if", branches=[(cond, then)], orelse=orelse)]
        if u < 0.89 and depth == 0:
            e, _ = self.reduce()
            what = self.choice(["break", "continue"])
            self.features.add(what)
            return [Node("if", branches=[(f"{e} > t + 2.0", [Node("line", what)])])]
        if u < 0.96 and depth == 0 and self.names_ok:       # a loop over a slice's elements
            s = self.slice_()
            seg = self.fresh("seg")
            self.features.add("inner-loop")
            head = Node("line", f"{seg} = {self.sl('a', s)}")
            if self.carry_ok and self.p(0.5):     # (named-slice-carried: not by default)
                sc = self.scalar("f", self.dtype_of("a[0:1][0] * 1"))
                self.features.add("inner-carried")
                return [head, Node("for", "j", (f"{seg}.shape[0]",),
                                   [Node("line", f"{sc} += {seg}[j] * (j + 1)")])]
            sj = self.fresh("sj")
            return [head, Node("line", f"{sj} = 0.0"),
                    Node("for", "j", (f"{seg}.shape[0]",),
                         [Node("line", f"{sj} += {seg}[j] * (j + 1)")]),
                    Node("line", f"{self.out()}[i] += {sj}")]
        if depth == 0:                          # a nested loop moving a bound
            s = self.slice_(reuse=False)
            if s.kind in ("carried", "local") or s.start is None:
                return self.read_stmt()
            self.slices.remove(s)
            s2 = Slice(f"{s.start} + j", s.stop, s.step, s.kind, None)
            self.features.add("nested")
            o = self.out()
            return [Node("for", "j", (self.choice(["2", "3"]),),
                         [Node("line", f"{o}[i] += {self.sl('a', s2)}.sum()")])]
        return self.read_stmt()

    # -- the loop
    def loop(self):
        self.slices = []
        self.carried = set()
        self.post = []
        self.local_line = None
        T = self.T
        self.parallel = "prange" not in self.avoid and self.p(0.12)
        self.updated = set()            # out / scalars a prange body updates (once each)
        # a slice bound to a name, and a carried scalar: not both (unless --known)
        if self.parallel:               # (a prange body: reductions into out[i] and scalars)
            self.names_ok, self.carry_ok = False, True
        elif "named-slice-carried" in self.avoid:
            self.names_ok = self.p(0.35)
            self.carry_ok = not self.names_ok
        else:
            self.names_ok = self.carry_ok = True
        self.trip_expr = "0"
        body = []
        for _ in range(int(self.choice([1, 2, 2, 3]))):
            body += self.stmt()
        if self.local_line:
            body.insert(0, Node("line", self.local_line))
        body += self.post
        # the loop runs over the bound arrays' rows (T of them)
        have = [n for n in ("lo", "hi", "g", "cnt", "fb") if n in self.vals]
        if have:
            n0 = self.choice(have)
            lx = self.choice([f"{n0}.shape[0]", f"len({n0})"])
        elif "p" in self.vals:
            lx = "p.shape[0] - 1"
        else:
            lx = str(T)
        self.trip_expr = lx
        for n in walk_lines(self.pre):
            if n.text == "out = np.zeros(0)":
                n.text = f"out = np.zeros({lx})"
        forms = [([lx], 8), (["1", lx], 1), ([f"{lx} - 1", "-1", "-1"], 2), (["0", lx, "2"], 1)]
        if self.post:                            # pos += cnt[i] needs every row in order
            forms = forms[:1]
        rng = self.choice([f for f, _ in forms], [w for _, w in forms])
        ivals = list(eval(f"range({', '.join(rng)})", {"len": len},
                          {k: np.asarray(v) for k, v in self.vals.items()}))
        for s in self.slices:
            self.classify(s, self.N, ivals)
        if self.parallel:
            self.features.add("prange")
            node = PNode("for", "i", tuple(rng), body, tags={"prange"})
        else:
            node = Node("for", "i", tuple(rng), body)
        if "while" not in self.avoid and not self.parallel and rng == [lx] and self.p(0.2) \
                and not any(n.kind == "line" and n.text == "continue" for n in walk(body)):
            self.features.add("while")
            return [Node("line", "i = 0"),
                    Node("while", f"i < {lx}", body=body + [Node("line", "i += 1")])]
        if len(ivals) == 0:
            self.features.add("trip0")
        lines = [n.text for n in walk(body) if n.kind == "line"]
        if any(re.match(r"(seg|v)\d+ = ", t) for t in lines) and any(
                re.match(r"(s|s32|m|m32|cnt_|pos) (\+|-)?= ", t) for t in lines):
            self.features.add("named-slice-carried")
        return [node]

    def program(self):
        self.make_inputs()
        body = self.loop()
        if self.p(0.15):                        # a second loop over other slices
            body += self.loop()
        if not self.ret:
            self.scalar("f")
        p = DataSliceProgram(self.args, self.pre + body, list(self.ret), {},
                             label=f"dataslice seed {self.seed} #{self.idx}",
                             features=set(self.features), mixed=set())
        if self.p(0.5):     # the same build called again with other sizes (0 and 1 are
            p.features.add("resized-calls")         # specialized; others become symbolic)
            for _ in range(int(self.choice([1, 2]))):
                N = int(self.choice(SIZES, SIZE_P))
                T = int(self.choice(TRIPS, TRIP_P))
                N2 = int(self.choice(SIZES, SIZE_P))
                p.calls.append(self.resized_args(N, T, N2))
        return p


def walk_lines(nodes):
    for n in nodes:
        if n.kind == "line":
            yield n


def generate(seed, index, avoid=None) -> LoopProgram:
    return Gen(seed, index, avoid).program()


def twin(p, seed, index, avoid=None):
    """No metamorphic twin: the loop fuzzer's (unrolled, or a while on a Python counter) run
    the loop in Python while tracing, where a slice of run-time length cannot be built."""
    return None
