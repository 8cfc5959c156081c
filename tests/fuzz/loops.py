"""Random *loop* programs (issue 15): Python control flow for cppcodegen's capture.

In: a seed and an index. Out: a ``LoopProgram``: module source text (helper functions and
``def f(...)`` with ``for``/``while``/``if``/``break``/``continue``/``return``), its
arguments, and a metamorphic twin of it (``twin``). Checked by ``loopcheck.py``, which
writes the source to a real module file (the capture re-reads the function's source),
runs it as plain Python (the oracle) and compiled with ``cppcodegen.compile``.

What is drawn (reproducibly from ``(seed, index)``):

* ``for`` over ``range(start, stop, step)``: bounds from int literals, sizes
  (``x.shape[0]``, ``len(x)``, a local ``n = x.shape[0]``), ``np.int64`` arguments, a Python
  int argument and the loop variable of an outer loop (triangular nests, ``range(i + 1)``,
  ``range(i, -1, -1)``); steps 1, 2, 3, -1, -2; 0, 1 or many iterations (sizes 0..200,
  trip counts up to ~300, at most ~3000 body runs in all);
* bodies: carried scalars (``s += x[i] * w``, ``m = max(m, x[i])``, counters, tuple
  swaps ``a, b = b, a + ...``), two local arrays exchanged after a step into one
  (``y, z = z, y``), carried arrays updated in place (``y[i] = ...``,
  ``Y[i, :i + 1] += ...``, ``acc += M[i]``), arrays rebound (``v = v * 0.5 + x``), argument
  arrays updated in place (a recurrence ``x[i] = ... x[i - 1]``), element reads with computed
  indices (``x[i - 1]``, ``x[n - 1 - i]``, ``x[-1 - i]``, ``x[(i * 7) % n]``; now and then one
  that runs past the end, so Python raises ``IndexError``), ``break``/``continue`` under value
  conditions, ``if``/``elif``/``else`` on elements, carried values and reductions
  (``x.sum() > 0``, ``(x > t).any()``), conditional expressions, ``and``/``or``/``not``,
  ``return`` inside a loop (the same tuple as the final return);
* ``while`` with counters (``while j < n and x[j] > t``), ``while True`` with a capped
  ``break``, and float convergence (Newton on a scalar, halving or a Jacobi sweep on an array:
  ``while err > tol and it < CAP``: Python always terminates);
* helper functions defined in the same module and called in loop bodies (a clip, a branch
  with an early return, one with its own loop, an escape-time loop returning inside it, an
  array helper);
* dtypes float64, float32, int64, int32 and bool for the main array; scalars whose Python
  type changes in the first iteration (``s = 0`` then ``s += x[i]`` with float ``x``).

The twin (``twin``): one top-level ``for`` loop rewritten into an equivalent one: unrolled
over a tuple of its constant iteration values (``for i in (4, 3, 2, 1):``, which Python
iterates while tracing) when its bounds are constants of the build, at most UNROLL_MAX
iterations and no ``break``/``return`` at its level (a value-dependent ``break`` in a loop
Python runs is not captured: KNOWN_LIMITS); otherwise a ``while`` loop over the same values.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import numpy as np

from .inputs import InputSpec

UNROLL_MAX = 24          # iterations of a loop the twin rewrites (Python runs it while tracing)
BODY_BUDGET = 3000       # body executions of one nest (Python runs the oracle 10 times)
MAX_TRIP = 300

# Constructs left out by default because they hit a known, already recorded limitation
# (tests/test_fuzz_loops_regressions.py). ``--known`` on the command line draws them anyway.
#   "wrap-index": element reads whose index may be negative or is a // or % of the loop
#                 variable (x[i - 1] at i = 0, x[i // 2], x[(i * 7) % n]), which a loop with a
#                 break or return does not compile with
# ("while-counter-bound", the twin's while counter used as a loop bound, compiles since loop
# bounds may come from array values: drawn by default.)
# ("unroll-break", the twin unrolling a loop with a value-dependent break/return at its level,
# compiles since such a loop over a tuple of numbers becomes a loop over a constant array.)
KNOWN_LIMITS = {"wrap-index"}
AVOID: set = set(KNOWN_LIMITS)


# ----------------------------------------------------------------------------- program tree
@dataclass
class Node:
    kind: str                      # line | for | while | if | return
    text: str = ""                 # line: the statement; for: loop variable; while: condition
    rng: tuple = ()                # for: range(...) argument expressions
    body: list = field(default_factory=list)
    branches: list = field(default_factory=list)   # if: [(condition, [Node])]
    orelse: list | None = None     # if: else body
    values: tuple | None = None    # for: iteration values when constants of the build
    tags: set = field(default_factory=set)         # "init": never removed by the shrinker

    def render(self, ind, ret):
        pad = "    " * ind
        if self.kind == "line":
            return [pad + self.text]
        if self.kind == "return":
            return [pad + f"return {ret}"]
        if self.kind == "for":
            if self.values is not None and "tuple" in self.tags:
                vals = ", ".join(str(v) for v in self.values)
                head = f"for {self.text} in ({vals}{',' if len(self.values) == 1 else ''}):"
            else:
                head = f"for {self.text} in range({', '.join(self.rng)}):"
            return [pad + head] + _render_block(self.body, ind + 1, ret)
        if self.kind == "while":
            return [pad + f"while {self.text}:"] + _render_block(self.body, ind + 1, ret)
        if self.kind == "if":
            out = []
            for k, (cond, body) in enumerate(self.branches):
                out.append(pad + ("if " if k == 0 else "elif ") + cond + ":")
                out += _render_block(body, ind + 1, ret)
            if self.orelse:
                out.append(pad + "else:")
                out += _render_block(self.orelse, ind + 1, ret)
            return out
        raise ValueError(self.kind)


def _render_block(nodes, ind, ret):
    out = []
    for n in nodes:
        out += n.render(ind, ret)
    return out or ["    " * ind + "pass"]


def walk(nodes):
    """Every node (pre-order), with the list that holds it."""
    for n in nodes:
        yield n
        for b in _children(n):
            yield from walk(b)


def _children(n):
    if n.kind in ("for", "while"):
        return [n.body]
    if n.kind == "if":
        return [b for _, b in n.branches] + ([n.orelse] if n.orelse else [])
    return []


@dataclass
class Arg:
    name: str
    kind: str                      # array | int64 | float | int
    spec: InputSpec | None = None
    value: object = None

    def make(self):
        if self.kind == "array":
            return self.spec.make()
        if self.kind == "int64":
            return np.int64(self.value)
        if self.kind == "float":
            return float(self.value)
        return int(self.value)

    def source(self):
        if self.kind == "array":
            return self.spec.source()
        if self.kind == "int64":
            return f"np.int64({int(self.value)})"
        if self.kind == "float":
            return repr(float(self.value))
        return repr(int(self.value))


@dataclass
class LoopProgram:
    args: list                     # [Arg]
    body: list                     # [Node]
    ret: list                      # names returned (a tuple), in order
    helpers: dict = field(default_factory=dict)    # name -> source
    label: str = ""
    features: set = field(default_factory=set)
    mixed: set = field(default_factory=set)        # returned names whose Python type may
                                                   # depend on the path (int 0 or a float)

    def copy(self):
        return copy.deepcopy(self)

    @property
    def ret_expr(self):
        return "(" + "".join(r + ", " for r in self.ret).rstrip() + ")"

    def function_source(self, name="f", rename=None):
        lines = [f"def {name}({', '.join(a.name for a in self.args)}):"]
        lines += _render_block(self.body, 1, self.ret_expr)
        lines.append(f"    return {self.ret_expr}")
        src = "\n".join(lines) + "\n"
        return _rename(src, rename) if rename else src

    def used_helpers(self):
        src = self.function_source()
        used, todo = [], [h for h in self.helpers if re.search(rf"\b{h}\(", src)]
        while todo:
            h = todo.pop(0)
            if h in used:
                continue
            used.append(h)
            todo += [g for g in self.helpers if g not in used and re.search(rf"\b{g}\(", self.helpers[g])]
        return [h for h in self.helpers if h in used]

    def helpers_source(self, rename=None):
        out = "".join(self.helpers[h] + "\n\n" for h in self.used_helpers())
        return _rename(out, rename) if rename else out

    def source(self, name="f"):
        """Helpers and the function (what a failure report shows)."""
        return self.helpers_source() + self.function_source(name)

    def module_source(self, names=("f",), twins=()):
        """A module defining the helpers, ``f`` (as each of ``names``) and the twins."""
        parts = ["import math\n\nimport numpy as np\n\n\n", self.helpers_source()]
        for n in names:
            parts.append(self.function_source(n) + "\n\n")
        for n, t in twins:
            parts.append(t.function_source(n) + "\n\n")
        return "".join(parts)

    def make_args(self):
        return [a.make() for a in self.args]

    def args_source(self):
        return "[" + ",\n            ".join(a.source() for a in self.args) + "]"

    def size(self):
        return (sum(1 for _ in walk(self.body)),
                sum(int(np.prod(a.spec.shape)) for a in self.args if a.kind == "array"))


def _rename(src, m):
    for a, b in m.items():
        src = re.sub(rf"\b{a}\b", b, src)
    return src


# ----------------------------------------------------------------------------- helpers
HELPERS = {
    "clip": ("def {h}(v, lo, hi):\n"
             "    return max(lo, min(v, hi))\n"),
    "blend": ("def {h}(a, b):\n"
              "    if a > b:\n"
              "        return a * 0.5 + b\n"
              "    return b - a\n"),
    "sumto": ("def {h}(a, m):\n"
              "    s = a[0] * 0\n"
              "    for j in range(m):\n"
              "        s += a[j]\n"
              "    return s\n"),
    "escape": ("def {h}(c, cap):\n"
               "    z = c * 0.0\n"
               "    for it in range(cap):\n"
               "        z = z * z + c\n"
               "        if abs(z) > 2.0:\n"
               "            return it\n"
               "    return cap\n"),
    "rowdot": ("def {h}(row, v):\n"
               "    return (row * v).sum()\n"),
    "smooth": ("def {h}(u, c):\n"
               "    v = u.copy()\n"
               "    v[1:-1] = u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:])\n"
               "    return v\n"),
}

SIZES = (0, 1, 2, 3, 4, 5, 7, 8, 13, 17, 24, 40, 64, 100, 150, 200)
SIZE_P = np.array([2, 4, 3, 3, 2, 4, 4, 3, 5, 5, 4, 6, 5, 4, 2, 2], float)
MAT_SIZES = (1, 2, 3, 5, 8, 12, 16, 24)


def _values(expr, env):
    """The iteration values of ``range(expr...)`` under ``env`` (names -> values)."""
    return list(eval(f"range({expr})", {"np": np, "len": len, "range": range}, dict(env)))


class Draws:
    """The small random draws of a program generator (``self.r``: its Generator)."""

    def p(self, prob):
        return self.r.random() < prob

    def choice(self, seq, p=None):
        if p is not None:
            p = np.asarray(p, float)
            p = p / p.sum()
        return seq[int(self.r.choice(len(seq), p=p))]

    def fresh(self, base):
        self.n_vars += 1
        return f"{base}{self.n_vars}"


class Gen(Draws):
    def __init__(self, seed, index, avoid=None):
        self.r = np.random.default_rng([int(seed), int(index), 0x100F])
        # draws that only change a statement's text (the main stream stays as it was, so
        # the programs of a seed stay the same but for those statements)
        self.r_text = np.random.default_rng([int(seed), int(index), 0x40E])
        self.seed, self.idx = seed, index
        self.avoid = AVOID if avoid is None else avoid
        self.args = []
        self.env = {}              # name -> stand-in value (arrays: zeros of the shape)
        self.static = {}           # int names usable in bounds -> value
        self.dtype = {}            # array name -> dtype str
        self.pre = []              # preamble nodes (inits)
        self.scalars = {}          # carried scalar -> kind: f | i | m
        self.sdtype = {}           # carried scalar -> "f" | "i" (value kind for expressions)
        self.arrays = {}           # local arrays -> (dtype, shape)
        self.ret = []
        self.helpers = {}
        self.features = set()
        self.mixed = set()
        self.n_vars = 0
        self.writes_arg = False
        self.n_loops = 0
        self.if_depth = 0

    # -- inputs
    def make_inputs(self):
        r = self.r
        dt = self.choice(["float64", "float32", "int64", "int32", "bool"], [10, 3, 3, 2, 2])
        n = int(self.choice(SIZES, SIZE_P))
        dom = {"f": self.choice(["mixed", "mixed", "pos", "unit", "int"]),
               "i": self.choice(["small", "small", "pos"]), "b": "half"}[np.dtype(dt).kind]
        self.add_array("x", dt, (n,), dom)
        self.main_dt = np.dtype(dt).kind
        if self.p(0.6):
            self.add_array("w", self.choice(["float64", dt]) if self.main_dt == "f" else "float64",
                           (n,), self.choice(["mixed", "unit", "pos"]))
        if self.p(0.4):
            rows = int(self.choice(MAT_SIZES))
            cols = rows if self.p(0.5) else int(self.choice(MAT_SIZES))
            self.add_array("M", self.choice(["float64", "float64", "float32"]), (rows, cols),
                           self.choice(["mixed", "unit", "int"]))
        self.args.append(Arg("t", "float", value=float(self.choice([0.0, 0.5, -0.5, 1.0, 2.0, 0.25]))))
        self.env["t"] = self.args[-1].value
        if self.p(0.6):
            k = int(r.integers(0, n + 1)) if self.p(0.8) else int(self.choice([0, 1, n]))
            self.args.append(Arg("k", "int64", value=k))
            self.static["k"] = k
        if self.p(0.25):
            c = int(self.choice([0, 1, 2, 3, 7, 12]))
            self.args.append(Arg("c", "int", value=c))
            self.static["c"] = c
        self.env.update(self.static)
        if self.p(0.5):
            self.pre.append(Node("line", "n = x.shape[0]", tags={"init"}))
            self.static["n"] = n
            self.env["n"] = n

    def add_array(self, name, dt, shape, dom):
        spec = InputSpec(dt, tuple(shape), dom, seed=int(self.r.integers(0, 10**6)))
        if self.p(0.1) and len(shape) == 1 and shape[0] > 1:
            spec.neg = (0,)
        elif self.p(0.1) and len(shape) == 2:
            spec.perm = (1, 0)
        self.args.append(Arg(name, "array", spec=spec))
        self.env[name] = np.zeros(shape)
        self.dtype[name] = dt

    def len_expr(self, a):
        L = self.env[a].shape[0]
        opts = [f"{a}.shape[0]", f"len({a})"]
        if a in ("x", "w") and "n" in self.static:
            opts += ["n", "n"]
        return self.choice(opts), L

    # -- carried values
    def scalar(self, kind):
        """A carried scalar of ``kind`` (f: float-ish accumulator of x's kind, i: counter,
        m: running max/min), created (init in the preamble) or reused."""
        have = [s for s, k in self.scalars.items() if k == kind]
        if have and self.p(0.5):
            return self.choice(have)
        name = self.fresh({"f": "s", "i": "c", "m": "m"}[kind])
        xdt = self.dtype["x"]
        if kind == "i":
            init = "0"
            self.sdtype[name] = "i"
        elif kind == "m":
            L = self.env["x"].shape[0]
            if L and self.p(0.7):
                init = "x[0]"
            elif xdt == "float64":
                init = self.choice(["-np.inf", "0.0"])
            elif xdt == "float32":
                init = self.choice(["np.float32(-np.inf)", "np.float32(0.0)"])
            elif xdt == "bool":
                init = "False"
            else:
                init = "0"
                if xdt == "int32":
                    self.mixed.add(name)
            self.sdtype[name] = "b" if xdt == "bool" else self.main_dt
        else:
            if self.main_dt == "f":
                if xdt == "float64":
                    init = self.choice(["0.0", "0.0", "0"])
                else:
                    init = self.choice(["0", "0.0", "np.float32(0.0)", "x.dtype.type(0)"])
                # a Python literal stays a Python scalar until a NumPy value is added; float32
                # reads (x, w or M) make it float32 then: its type depends on the path
                all64 = all(d == "float64" for d in self.dtype.values())
                if init in ("0", "0.0") and not (init == "0.0" and all64):
                    self.mixed.add(name)
                    self.features.add("type-changes")
                self.sdtype[name] = "f"
            else:           # ints/bools: an int accumulator (int32 promotes from 0); float
                init = self.choice(["0", "0", "0.0"])       # reads (w, M) make it a float
                self.sdtype[name] = "f" if init == "0.0" else "i"
                self.mixed.add(name)
                self.features.add("type-changes")
        dts = set(self.dtype.values())
        if len(dts) > 1 or dts - {"float64", "int64"} or init in ("0", "0.0", "False") \
                or kind == "f" and self.main_dt != "f":
            # mixed dtypes (or a Python literal start): Python's type of the value may depend
            # on which reads and branches ran (s - (M[i] if c else 1.5))
            self.mixed.add(name)
        self.scalars[name] = kind
        self.pre.append(Node("line", f"{name} = {init}", tags={"init"}))
        self.ret.append(name)
        return name

    def none_start(self, f, e):
        """``o = None`` before the loops, ``if o is None or e > o: o = e`` here (frontend/
        optionals.py), returned as ``-7 if o is None else o`` (a value on every path)."""
        o = self.fresh("o")
        self.pre.append(Node("line", f"{o} = None", tags={"init"}))
        test = self.r_text.choice([f"{o} is None or {e} {'>' if f == 'max' else '<'} {o}",
                                   f"not ({o} is not None and {e} {'<=' if f == 'max' else '>='} {o})"])
        ret = f"(-7 if {o} is None else {o})"
        self.ret.append(ret)
        self.mixed.add(ret)             # (a Python int -7 where the compiled one is a float)
        self.features.add("none-start")
        return Node("line", f"if {test}: {o} = {e}")

    def local_array(self, kind):
        """1: a 1-D float array of x's length; 2: square (r, r); acc: M's row length."""
        have = [a for a, (k, _) in self.arrays.items() if k == kind]
        if have and self.p(0.6):
            return self.choice(have)
        name = self.fresh({"1": "y", "2": "Y", "acc": "acc", "v": "v"}[kind])
        if kind == "1":
            L = self.env["x"].shape[0]
            init = self.choice([f"np.zeros({self.len_expr('x')[0]})", "np.zeros_like(x, dtype=np.float64)",
                                "x * 1.0", "np.full(x.shape[0], 0.5)"])
            shape = (L,)
        elif kind == "v":
            L = self.env["x"].shape[0]
            init = self.choice(["x * 1.0", "x * 0.5", "np.zeros(x.shape[0])"])
            shape = (L,)
        elif kind == "2":
            rr = self.env["M"].shape[0]
            init = self.choice(["np.zeros((M.shape[0], M.shape[0]))", "np.eye(M.shape[0])"])
            shape = (rr, rr)
        else:
            init = self.choice(["np.zeros(M.shape[1])", "M[0] * 0.0"])
            shape = (self.env["M"].shape[1],)
        self.arrays[name] = (kind, shape)
        self.env[name] = np.zeros(shape)
        self.pre.append(Node("line", f"{name} = {init}", tags={"init"}))
        self.ret.append(name)
        return name

    # -- indices and expressions
    def index(self, var, vals, a, extra=()):
        """An index expression into ``a``'s first axis from loop variable ``var``."""
        L = self.env[a].shape[0]
        if L == 0:
            return None
        lx = self.len_expr(a)[0]
        cands = [(var, lambda v: v), (f"{var} - 1", lambda v: v - 1), (f"{var} + 1", lambda v: v + 1),
                 (f"{lx} - 1 - {var}", lambda v: L - 1 - v), (f"-1 - {var}", lambda v: -1 - v),
                 (f"{var} // 2", lambda v: v // 2), (f"({var} * 7) % {lx}", lambda v: (v * 7) % L),
                 (f"{var} - 2", lambda v: v - 2)]
        if "wrap-index" in self.avoid:
            cands = [(e, f) for e, f in cands if "//" not in e and "%" not in e
                     and not e.startswith("-") and all(f(v) >= 0 for v in vals)]
        good = [(e, f) for e, f in cands if all(-L <= f(v) < L for v in vals)]
        bad = [(e, f) for e, f in cands if (e, f) not in good]
        if bad and self.p(0.012):
            self.features.add("oob")
            return self.choice(bad)[0]
        if not good:
            return None
        w = [6 if e == var else 1 for e, _ in good]
        e, f = self.choice(good, w)
        if "//" in e or "%" in e or any(f(v) < 0 for v in vals):
            self.features.add("wrap-index")
        return e

    def const(self):
        if self.main_dt == "f":
            return self.choice(["0.5", "2.0", "0.25", "1.5", "-1.0", "3.0"])
        return self.choice(["2", "3", "1", "-1"])

    def elem(self, ctx):
        """A scalar read of an array element indexed by the innermost loop variable."""
        if not ctx:
            return None
        var, vals, arr = ctx[-1]
        if arr == "M" and len(ctx) >= 2 and ctx[-2][2] == "M" and self.p(0.7):
            (rv, rvals, _), (cv, cvals, _) = ctx[-2], ctx[-1]
            R_, C_ = self.env["M"].shape
            if all(0 <= v < R_ for v in rvals) and all(0 <= v < C_ for v in cvals):
                return f"M[{rv}, {cv}]"
            if all(0 <= v < C_ for v in rvals) and all(0 <= v < R_ for v in cvals):
                return f"M[{cv}, {rv}]"
        cands = [a for a in ("x", "w") if a in self.env and self.env[a].shape[0]]
        if arr == "M" or (arr in ("x", "w") and "M" in self.env and self.p(0.15)):
            R_ = self.env["M"].shape[0]
            C_ = self.env["M"].shape[1]
            if all(0 <= v < R_ for v in vals) and C_:
                col = self.choice(["0", "-1"] + ([] if "wrap-index" in self.avoid else [f"{var} % M.shape[1]"]))
                return f"M[{var}, {col}]"
        if not cands:
            return None
        a = arr if arr in cands and self.p(0.7) else self.choice(cands)
        ix = self.index(var, vals, a)
        return None if ix is None else f"{a}[{ix}]"

    def fexpr(self, ctx, depth=0):
        """A scalar expression (of x's kind) for a loop body."""
        e = self.elem(ctx)
        if e is None:
            return self.const()
        if self.dtype.get(e.split("[")[0]) == "bool" or (e.startswith("x[") and self.main_dt == "b"):
            e = self.choice([f"({e} * 1.5)", f"int({e})", f"(1.0 if {e} else -0.5)"])
        if depth >= 1:
            return e
        k = int(self.r.integers(0, 10))
        if k <= 2:
            return e
        if k == 3:
            return f"{e} * {self.const()}"
        if k == 4:
            o = self.fexpr(ctx, depth + 1)
            return f"{e} * {o}" if self.main_dt != "i" else f"{e} - {o}"
        if k == 5:
            return f"abs({e} - {self.fexpr(ctx, depth + 1)})"
        if k == 6 and self.main_dt == "f":
            return self.choice([f"math.sqrt(abs({e}))", f"np.tanh({e})", f"np.exp(-abs({e}))",
                                f"{e} ** 2", f"np.floor({e})"])
        if k == 6:
            return self.choice([f"{e} // 3", f"{e} % 5", f"{e} * {e}"])
        if k == 7:
            return f"({e} if {self.cond(ctx, simple=True)} else {self.const()})"
        if k == 8 and self.main_dt == "f":
            s = self.choice([s for s in self.scalars] or [None])
            if s is not None and self.sdtype.get(s) == "f":
                return f"{e} * 0.5 + {s} * 0.25"
        return f"{e} + {self.const()}"

    def cond(self, ctx, simple=False, allow_reduce=True):
        e = self.elem(ctx) if ctx else None
        opts = []
        if e is not None:
            if self.main_dt == "b" and e.startswith("x["):
                opts += [e, f"not {e}"]
            else:
                opts += [f"{e} > t", f"{e} < 0", f"{e} >= {self.const()}"]
                e2 = self.elem(ctx)
                if e2 is not None and e2 != e and not (self.main_dt == "b" and e2.startswith("x[")):
                    opts.append(f"{e} > {e2}")
        fs = [s for s, k in self.scalars.items() if self.sdtype.get(s) in ("f", "i")]
        if fs:
            s = self.choice(fs)
            opts.append(f"{s} > t" if self.sdtype[s] == "f" else f"{s} % 2 == 0")
        if ctx:
            v = ctx[-1][0]
            opts.append(f"{v} % {self.choice(['2', '3'])} == 0")
        if allow_reduce and not simple:
            red = [f"x.sum() > {self.const()}", "(x > t).any()", "x.max() > t"] if self.main_dt != "b" \
                else ["x.any()", "x.sum() > 2"]
            if "w" in self.env:
                red.append("w.mean() > 0")
            if "M" in self.env and ctx and ctx[-1][2] == "M":
                red.append(f"M[{ctx[-1][0]}].sum() > 0")
            for a, (kind, shape) in self.arrays.items():
                if kind in ("v", "acc") and shape[0]:
                    red.append(f"{a}.sum() > t")
            opts.append(self.choice(red))
            self.features.add("cond-reduce") if opts[-1] in red else None
        if not opts:
            opts = ["t > 0"]
        c = self.choice(opts)
        if not simple and self.p(0.2) and len(opts) > 1:
            c2 = self.choice(opts)
            c = self.choice([f"{c} and {c2}", f"{c} or {c2}", f"not ({c})"])
            self.features.add("bool-ops")
        return c

    # -- statements
    def simple_stmt(self, ctx):
        """One non-control statement of a loop body."""
        r = int(self.r.integers(0, 14))
        if r <= 3:
            s = self.scalar("f")
            e = self.fexpr(ctx)
            ops = ["+=", "+=", "-="] + ([f"= 0.5 * {s} +"] if self.main_dt == "f" else [])
            return Node("line", f"{s} {self.choice(ops)} {e}")
        if r == 4:
            m = self.scalar("m")
            e = self.elem(ctx)
            if e is None or not e.startswith("x["):
                return Node("line", f"{self.scalar('i')} += 1")
            f = self.choice(["max", "min"])
            if self.r_text.random() < 0.6:      # the same running max / min from None
                return self.none_start(f, e)
            return Node("line", f"{m} = {f}({m}, {e})")
        if r == 5:
            return Node("line", f"{self.scalar('i')} += {self.choice(['1', '1', '2'])}")
        if r in (6, 7) and ctx and self.env["x"].shape[0]:
            y = self.local_array("1")
            var, vals, _ = ctx[-1]
            ix = self.index(var, vals, y)
            if ix is None:
                return Node("line", f"{self.scalar('i')} += 1")
            e = self.fexpr(ctx)
            op = self.choice(["=", "+=", "*=" if self.p(0.3) else "="])
            self.features.add("array-store")
            return Node("line", f"{y}[{ix}] {op} {e}")
        if r == 8 and "M" in self.env and ctx and ctx[-1][2] == "M":
            var, vals, _ = ctx[-1]
            R_, C_ = self.env["M"].shape
            if all(0 <= v < R_ for v in vals):
                self.features.add("row-update")
                k = self.choice(["acc", "acc", "2", "tot"])
                if k == "acc":
                    a = self.local_array("acc")
                    return Node("line", self.choice([f"{a} += M[{var}]", f"{a} = {a} * 0.5 + M[{var}]",
                                                     f"{a} += M[{var}] * {self.fexpr(ctx)}"]))
                if k == "2":
                    Y = self.local_array("2")
                    opts = [f"{Y}[{var}, :{var} + 1] *= 0.5", f"{Y}[{var}, :{var} + 1] -= 1.0"]
                    if all(v < C_ for v in vals):
                        opts.append(f"{Y}[{var}, :{var} + 1] += M[{var}, :{var} + 1] * 0.5")
                    if R_ <= C_:
                        opts.append(f"{Y}[{var}] = M[{var}, :M.shape[0]] * 2.0")
                    return Node("line", self.choice(opts))
                s = self.scalar("f")
                return Node("line", f"{s} += M[{var}].sum()" if self.main_dt == "f" else f"{s} += int(M[{var}].max() > 0)")
        if r == 9:
            v = self.local_array("v")
            self.features.add("rebind")
            if self.main_dt == "b":
                return Node("line", f"{v} = {v} * 0.5 + x")
            return Node("line", self.choice([f"{v} = {v} * 0.5 + x", f"{v} = np.maximum({v}, x) * 0.75",
                                             f"{v} = {v} - {v}.mean() * 0.5"]))
        if r == 10 and self.main_dt == "f" and ctx:
            return self.helper_call(ctx)
        if r == 11 and len([s for s in self.scalars if self.sdtype.get(s) == "f"]) >= 1:
            a = self.scalar("f")
            b = self.fresh("b")
            self.scalars[b] = "f"
            self.sdtype[b] = "f"
            self.pre.append(Node("line", f"{b} = {self.choice(['1.0', '0.5']) if self.main_dt == 'f' else '1'}",
                                 tags={"init"}))
            self.ret.append(b)
            if a in self.mixed or any(d != "float64" for d in self.dtype.values()):
                self.mixed.update({a, b})
            self.features.add("tuple-swap")
            e = self.fexpr(ctx)
            return Node("line", f"{a}, {b} = {b}, {a} + {e}" if self.main_dt != "f"
                        else f"{a}, {b} = {b}, {a} * 0.5 + {e}")
        if r == 12 and ctx and self.dtype["x"] in ("float64",) and self.env["x"].shape[0] > 1 \
                and not self.writes_arg and self.p(0.6):
            var, vals, arr = ctx[-1]
            if arr == "x" and all(0 <= v < self.env["x"].shape[0] for v in vals):
                self.writes_arg = True
                self.features.add("write-arg")
                return Node("line", f"x[{var}] = x[{var}] * 0.5 + x[{var} - 1] * 0.25")
        s = self.scalar("f")
        return Node("line", f"{s} += {self.fexpr(ctx)}")

    def helper(self, kind):
        for h, k in getattr(self, "_hkinds", {}).items():
            if k == kind:
                return h
        h = f"h{len(self.helpers)}"
        self.helpers[h] = HELPERS[kind].format(h=h)
        self.__dict__.setdefault("_hkinds", {})[h] = kind
        self.features.add("helper-" + kind)
        return h

    def helper_call(self, ctx):
        var, vals, arr = ctx[-1]
        e = self.elem(ctx)
        if e is None:
            return Node("line", f"{self.scalar('i')} += 1")
        k = self.choice(["clip", "blend", "sumto", "escape", "rowdot", "clip"])
        if k == "clip":
            s = self.scalar("f")
            if any(d != "float64" for d in self.dtype.values()):
                self.mixed.add(s)
            return Node("line", f"{s} = {self.helper('clip')}({s} + {e}, -2.0, 3.0)")
        if k == "blend":
            s = self.scalar("f")
            return Node("line", f"{s} = {self.helper('blend')}({e}, {s} * 0.5)")
        if k == "sumto" and arr in ("x", "w") and self.env[arr].shape[0] <= 64 and all(0 <= v < self.env[arr].shape[0] for v in vals):
            s = self.scalar("f")
            return Node("line", f"{s} += {self.helper('sumto')}({arr}, {var} + 1)")
        if k == "escape":
            c = self.scalar("i")
            return Node("line", f"{c} += {self.helper('escape')}({e} * 0.5, {self.choice(['8', '20'])})")
        if k == "rowdot" and arr == "M" and "M" in self.env and all(0 <= v < self.env["M"].shape[0] for v in vals):
            s = self.scalar("f")
            vec = "M[0]"
            return Node("line", f"{s} += {self.helper('rowdot')}(M[{var}], {vec})")
        s = self.scalar("f")
        if any(d != "float64" for d in self.dtype.values()):
            self.mixed.add(s)
        return Node("line", f"{s} = {self.helper('clip')}({s} * 0.5 + {e}, -1.0, 1.0)")

    def body(self, ctx, depth, n_stmts=None, loop_level="for"):
        """Statements of a loop body (``ctx``: enclosing loop variables, innermost last).
        ``loop_level``: "for" (break/continue/return allowed), "while" (no continue: the
        counter's increment ends the body) or None."""
        out = []
        n_stmts = n_stmts or int(self.choice([1, 2, 2, 3]))
        for _ in range(n_stmts):
            k = int(self.r.integers(0, 20))
            if k <= 9:
                out.append(self.simple_stmt(ctx))
            elif k <= 12 and self.if_depth < 2:
                self.if_depth += 1
                out.append(self.if_node(ctx, depth, loop_level))
                self.if_depth -= 1
            elif k <= 14 and loop_level:
                cond = self.cond(ctx)
                what = self.choice(["break", "continue", "return"], [3, 3, 2] if loop_level == "for" else [3, 0, 2])
                self.features.add(what)
                body = [Node("return")] if what == "return" else [Node("line", what)]
                if what != "return" and self.p(0.3):
                    body.insert(0, self.simple_stmt(ctx))
                pos = int(self.r.integers(0, len(out) + 1))
                out.insert(pos, Node("if", branches=[(cond, body)]))
            elif k == 15:
                s = self.scalar("f")
                e = self.fexpr(ctx)
                self.features.add("ifexp")
                out.append(Node("line", f"{s} += {e} if {self.cond(ctx, simple=True)} else {self.const()}"))
            elif k <= 17 and depth < 2 and self.n_loops < 3:
                n = self.loop(ctx, depth + 1)
                if isinstance(n, list):
                    out += n
                elif n is not None:
                    out.append(n)
            elif k == 18 and depth < 2 and self.main_dt == "f":
                out += self.inner_while(ctx)
            elif k == 19 and self.p(0.5):
                out += self.swap_stmts()
            else:
                out.append(self.simple_stmt(ctx))
        return out

    def swap_stmts(self):
        """A step stored into one local array from another, then the two names exchanged
        (``z[1:] = y[:-1] * 0.5 + y[1:]; y, z = z, y``: a time loop's two levels)."""
        a = self.local_array("1")
        b = self.fresh("z")             # (a copy: the same dtype, which a swap keeps)
        self.arrays[b] = self.arrays[a]
        self.env[b] = np.zeros(self.env[a].shape)
        self.pre.append(Node("line", f"{b} = {a}.copy()", tags={"init"}))
        self.ret.append(b)
        self.features.add("swap")
        step = self.choice([f"{b}[1:] = {a}[:-1] * 0.5 + {a}[1:]",
                            f"{b}[:] = {a} * {self.const()} + x" if self.main_dt == "f"
                            else f"{b}[:] = {a} * 0.5 + 1.0"])
        swap = self.choice([f"{a}, {b} = {b}, {a}", f"{b}, {a} = {a}, {b}"])
        return [Node("line", step, tags={"swap"}), Node("line", swap, tags={"swap"})]

    def if_node(self, ctx, depth, loop_level):
        self.features.add("if")
        branches = [(self.cond(ctx), self.body(ctx, depth, 1, loop_level))]
        if self.p(0.35):
            branches.append((self.cond(ctx), self.body(ctx, depth, 1, loop_level)))
            self.features.add("elif")
        orelse = self.body(ctx, depth, 1, loop_level) if self.p(0.5) else None
        return Node("if", branches=branches, orelse=orelse)

    # -- loops
    def range_for(self, ctx, arr, axis=0):
        """range(...) argument expressions for a loop over ``arr``'s axis ``axis``; inner
        loops may use the enclosing variable."""
        lx, L = self.len_expr(arr)
        if axis:
            lx, L = f"{arr}.shape[{axis}]", self.env[arr].shape[axis]
        forms = [([lx], 6), (["1", lx], 2), ([f"{lx} - 1", "-1", "-1"], 3), (["0", lx, "2"], 2),
                 (["1", lx, "3"], 1), ([f"{lx} - 1", "0", "-2"], 1),
                 ([str(int(self.r.integers(0, max(L, 1) + 1)))], 1),
                 ([str(int(self.r.integers(0, max(L, 1) + 1))), str(int(self.r.integers(0, max(L, 1) + 1)))], 1)]
        if "k" in self.static and arr in ("x", "w"):
            forms += [(["k"], 3), (["k", lx], 2), ([f"{lx} - 1", "k - 1", "-1"], 1)]
        if "c" in self.static and arr in ("x", "w"):
            forms += [([f"min(c, {lx})"], 1)]
        if L and arr in ("x", "w"):
            forms += [([str(int(self.choice([L + 1, 2 * L, 3 * L, 250, 300])))], 1)]    # many: index mod L
        if ctx:
            ov = ctx[-1][0]
            forms += [([f"{ov} + 1"], 5), ([ov], 3), ([ov, lx], 3), ([f"{ov} + 1", lx], 2),
                      (["0", ov, "2"], 1), ([ov, "-1", "-1"], 2)]
        return self.choice([f for f, _ in forms], [w for _, w in forms])

    def loop(self, ctx, depth):
        """A ``for`` loop (or now and then a ``while``) nested in ``ctx``."""
        if depth > 0 and self.p(0.15):
            return self.while_node(ctx, depth)
        arr_opts = ["x", "x", "x"] + (["w"] if "w" in self.env else []) + (["M", "M"] if "M" in self.env else [])
        if ctx and ctx[-1][2] == "M" and self.p(0.6):
            arr = "M"          # a nest over M's rows and columns
        else:
            arr = self.choice(arr_opts)
        axis = 1 if arr == "M" and ctx and ctx[-1][2] == "M" and self.p(0.5) else 0
        for _ in range(6):
            rng = self.range_for(ctx, arr, axis)
            vals = self.iter_values(ctx, rng)
            if vals is None:
                continue
            total, per = vals
            if total > BODY_BUDGET or (per and max(len(v) for v in per) > MAX_TRIP):
                continue
            break
        else:
            return None
        allv = sorted({v for vs in per for v in vs})
        var = "ijq"[depth] if depth < 3 else f"i{depth}"
        if arr == "M" and ctx and ctx[-1][2] == "M":
            index_arr = "M"
        else:
            index_arr = arr
        # a "many" loop over a short array reads with a wrapped index
        if arr in ("x", "w") and allv and max(allv) >= self.env[arr].shape[0]:
            index_arr = arr
        nctx = ctx + [(var, allv, index_arr)]
        self.n_loops += 1
        body = self.body(nctx, depth)
        node = Node("for", var, tuple(rng), body)
        if not ctx:
            node.values = tuple(per[0]) if all(isinstance(v, int) for v in per[0]) else None
        if depth:
            self.features.add("nested")
            if any(ctx[-1][0] in a for a in rng):
                self.features.add("triangular")
        if any(a in ("k",) or a.startswith("k ") or " k" in a for a in rng):
            self.features.add("bound-int64")
        if len(rng) == 3 and rng[2].startswith("-"):
            self.features.add("negative-step")
        n_it = [len(v) for v in per]
        self.features.update({"trip0"} if 0 in n_it else set())
        self.features.update({"trip1"} if 1 in n_it else set())
        return node

    def iter_values(self, ctx, rng):
        """(total body runs, [iteration values per combination of outer values])."""
        expr = ", ".join(rng)
        if ctx:     # the enclosing variable: every value it takes
            envs = [dict(self.env, **{ctx[-1][0]: v}) for v in ctx[-1][1]]
        else:
            envs = [dict(self.env)]
        try:
            per = [_values(expr, e) for e in envs]
        except Exception:
            return None
        outer = 1
        for _, vals, _ in ctx:
            outer *= max(len(vals), 1)
        total = outer * max((len(v) for v in per), default=0)
        return total, per

    def while_node(self, ctx, depth):
        """A counter ``while`` over x (guarded read), or ``while True`` with a capped break."""
        j = self.fresh("j")
        L = self.env["x"].shape[0]
        lx = self.len_expr("x")[0]
        self.features.add("while")
        if L == 0 or self.p(0.5):
            start = "0"
            guard = f"{j} < {lx}"
            extra = ""
            if L and self.p(0.6):
                e = "x[{}]".format(j)
                extra = f" and {e} > t" if self.main_dt != "b" else f" and not {e}"
                self.features.add("while-guarded-read")
            node = Node("while", guard + extra,
                        body=self.body([(j, list(range(L)), "x")], depth, int(self.choice([1, 2])), loop_level="while")
                        + [Node("line", f"{j} += {self.choice(['1', '1', '2'])}")])
            return [Node("line", f"{j} = {start}"), node]
        cap = int(self.choice([5, 17, 40]))
        body = self.body([(j, list(range(min(cap, L))), "x")], depth, 1, loop_level="while")
        node = Node("while", "True", body=[
            Node("if", branches=[(f"{j} >= {min(cap, L)}", [Node("line", "break")])])] + body + [
            Node("line", f"{j} += 1")])
        self.features.add("while-true")
        return [Node("line", f"{j} = 0"), node]

    def inner_while(self, ctx):
        """Float convergence on a scalar inside a loop: Newton's square root, capped."""
        e = self.elem(ctx)
        if e is None:
            return [self.simple_stmt(ctx)]
        g, it, a = self.fresh("g"), self.fresh("it"), self.fresh("a")
        s = self.scalar("f")
        self.features.add("while-converge")
        return [Node("line", f"{a} = abs({e}) + 0.5"), Node("line", f"{g} = {a} if {a} > 1.0 else 1.0"),
                Node("line", f"{it} = 0"),
                Node("while", f"abs({g} * {g} - {a}) > 1e-9 * {a} and {it} < 30", body=[
                    Node("line", f"{g} = 0.5 * ({g} + {a} / {g})"), Node("line", f"{it} += 1")]),
                Node("line", f"{s} += {g}")]

    def top_while(self):
        """A top-level convergence loop on arrays (capped)."""
        self.features.add("while")
        self.features.add("while-converge")
        it = self.fresh("it")
        self.pre.append(Node("line", f"{it} = 0", tags={"init"}))
        self.scalars[it] = "i"
        self.sdtype[it] = "i"
        self.ret.append(it)
        L = self.env["x"].shape[0]
        cap = int(self.choice([10, 40, 100]))
        if self.main_dt != "f" or L < 3 or self.p(0.4):
            v = self.local_array("v")
            tol = self.choice(["1e-3", "0.1", "t"])
            cond = f"np.abs({v}).max() > {tol} and {it} < {cap}" if L else f"{it} < {cap}"
            body = [Node("line", self.choice([f"{v} = {v} * 0.5", f"{v} = {v} * 0.5 + x * 0.01"]))]
            if self.p(0.3):
                body.append(Node("if", branches=[(f"{v}.sum() > 100.0", [Node("line", "break")])]))
            return Node("while", cond, body=body + [Node("line", f"{it} += 1")])
        u, err = self.fresh("u"), self.fresh("err")
        self.arrays[u] = ("v", (L,))
        self.pre.append(Node("line", f"{u} = np.zeros(x.shape[0])", tags={"init"}))
        self.pre.append(Node("line", f"{err} = 1.0", tags={"init"}))
        self.ret.append(u)
        return Node("while", f"{err} > 1e-6 and {it} < {cap}", body=[
            Node("line", f"un = {u}.copy()"),
            Node("line", f"{u}[1:-1] = 0.5 * (un[:-2] + un[2:]) + 0.05 * x[1:-1]"),
            Node("line", f"{err} = np.abs({u} - un).max()"),
            Node("line", f"{it} += 1")])

    def top_branch(self):
        """``if``/``elif``/``else`` on reductions at the top level."""
        self.features.add("if")
        self.features.add("cond-reduce")
        v = self.local_array("v")
        s = self.scalar("f")
        if self.main_dt != "f":
            self.mixed.add(s)

        def stmt():
            return Node("line", self.choice([f"{v} = {v} * 2.0", f"{v} = {v} - 1.0",
                                             f"{s} += {v}.sum()" if self.main_dt == "f" else f"{s} += 1",
                                             f"{s} = {s} * 2.0 if {v}.mean() > 0 else {s} - 1.0"]))
        branches = [(self.cond([], allow_reduce=True), [stmt()])]
        if self.p(0.5):
            branches.append((self.cond([], allow_reduce=True), [stmt()]))
        return Node("if", branches=branches, orelse=[stmt()] if self.p(0.6) else None)

    def program(self):
        self.make_inputs()
        segs = []
        n_seg = int(self.choice([1, 1, 1, 2]))
        for _ in range(n_seg):
            k = int(self.r.integers(0, 10))
            if k <= 6:
                n = self.loop([], 0)
                if n is not None:
                    segs.append(n)
            elif k <= 7:
                segs.append(self.top_while())
            elif k == 8:
                segs.append(self.top_branch())
            else:
                segs += self.while_node([], 0)
        if not any(n.kind in ("for", "while") for n in segs) and not any(
                n.kind in ("for", "while") for n in walk(segs)):
            n = self.loop([], 0)
            segs.append(n if n is not None else self.top_while())
        if not self.ret:
            self.scalar("i")
        body = self.pre + [n for n in segs if n is not None]
        _keep_swaps_countable(body)
        p = LoopProgram(self.args, body, list(self.ret), dict(self.helpers),
                        label=f"seed {self.seed} #{self.idx}", features=set(self.features),
                        mixed=set(self.mixed))
        return p

def _keep_swaps_countable(nodes):
    """Name exchanges only in ``for`` loops without break or return around them: the array a
    name holds after such a loop depends on how many iterations ran, which a loop that may
    stop early does not know when it starts (a refusal, README), nor a while loop."""
    for n in walk(nodes):
        if n.kind == "while" or n.kind == "for" and any(
                m.kind == "return" or m.kind == "line" and m.text == "break" for m in walk(n.body)):
            _drop_swaps(n.body)


def _drop_swaps(nodes):
    nodes[:] = [m for m in nodes if "swap" not in m.tags]
    for m in nodes:
        for b in _children(m):
            _drop_swaps(b)


def generate(seed, index, avoid=None) -> LoopProgram:
    return Gen(seed, index, avoid).program()


# ----------------------------------------------------------------------------- twins
def _level_has(nodes, kinds):
    """A break (at this loop's level) or a return anywhere below ``nodes``."""
    for n in nodes:
        if n.kind == "line" and n.text == "break" and "break" in kinds:
            return True
        if n.kind == "return" and "return" in kinds:
            return True
        if n.kind == "if":
            if _level_has([m for _, b in n.branches for m in b] + (n.orelse or []), kinds):
                return True
        if n.kind in ("for", "while") and _level_has(n.body, kinds - {"break"}):
            return True
    return False


def twin(p: LoopProgram, seed, index, avoid=None):
    """An equivalent program (``None`` when no top-level ``for`` has constant bounds and
    1..UNROLL_MAX iterations): such a loop unrolled over a tuple of its values, or turned into
    a ``while`` on a Python counter (both run by Python while tracing: the build holds every
    iteration, so the trip count is kept small)."""
    avoid = AVOID if avoid is None else avoid
    r = np.random.default_rng([int(seed), int(index), 0x7717])
    loops = [k for k, n in enumerate(p.body) if n.kind == "for" and n.values is not None
             and 0 < len(n.values) <= UNROLL_MAX]
    if not loops:
        return None
    k = loops[int(r.integers(0, len(loops)))]
    q = p.copy()
    node = q.body[k]
    breaks = _level_has(node.body, {"break", "return"})
    if (not breaks or "unroll-break" not in avoid) and r.random() < 0.75:
        node.tags.add("tuple")
        q.features = p.features | {"twin-unroll"} | ({"unroll-break"} if breaks else set())
    else:
        bound_use = any(re.search(rf"(range\(|\bh\d+\().*\b{node.text}\b", ln)
                        for ln in _render_block(node.body, 0, ""))
        if bound_use and "while-counter-bound" in avoid:
            return None
        # for i in range(a, b, s)  ->  i = a - s; while i + s < b: i += s; body
        a, b, s = (list(node.rng) + ["1"])[:3] if len(node.rng) >= 2 else ["0", node.rng[0], "1"]
        if len(node.rng) == 3:
            a, b, s = node.rng
        neg = s.strip().startswith("-")
        v = node.text
        cmp = ">" if neg else "<"
        init = Node("line", f"{v} = ({a}) - ({s})")
        loop = Node("while", f"{v} + ({s}) {cmp} ({b})",
                    body=[Node("line", f"{v} += {s}")] + node.body)
        q.body[k:k + 1] = [init, loop]
        q.features = p.features | {"twin-while"} | ({"while-counter-bound"} if bound_use else set())
    q.label = p.label + " (twin)"
    return q
