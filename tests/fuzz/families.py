"""Draws of issue 16's idioms for the graph fuzzer (``generator.Gen`` calls them as ops).

In: the generator (its random stream, its program so far), the NumPy values of the
variables and their names. Out: ``(template, args)`` like every ``op_*`` of the generator,
or None. Index arrays and masks are new *inputs* of the program (``Gen.add_input``), so the
compiled code sees their values only at run time:

* ``op_construct``: arrays made inside the function from the inputs' shapes: np.zeros /
  ones / full filled by slice assignments before they are read, np.empty only where every
  element is written first, np.arange, np.linspace, np.eye / np.identity (used as values of
  their own or combined with the array they take their shape from);
* ``op_gather``: ``x[idx]`` along an axis, ``x[i, j]``, np.take (an axis or flat),
  np.take_along_axis, boolean masks ``x[m]`` (returned or reduced; masks of all False);
  indices wrap, repeat, or are empty;
* ``op_scatter``: ``t[idx] = v`` (repeats: the last write), ``t[idx] += v`` (buffered:
  once per distinct index), np.add.at / subtract.at / multiply.at (every repeat; the other
  ufuncs' .at are refused by cppcodegen), ``t[m] = v``, np.put, on a copy or on the
  caller's array;
* ``op_complex``: complex values made of real ones (``x + 1j * y``, ``np.exp(1j * x)``) and
  expressions of them: arithmetic, abs, angle, real/imag/conj, exp/log/sqrt and
  trigonometric functions, reductions.

``oob_stmt`` draws a gather or scatter whose index input has one out-of-range element:
NumPy raises IndexError, so the compiled call must too (``Program.meta['expect']``).
"""
from __future__ import annotations

import numpy as np

from .inputs import InputSpec

_IDX_LENGTHS = (0, 1, 2, 3, 4, 5, 8, 13)
_CFUNCS = ("exp log sqrt sin cos tan sinh cosh tanh arcsin arccos arctan arcsinh arccosh "
           "arctanh log10 log2 expm1 log1p square reciprocal").split()


def index_input(gen, env, names, size, shape=None, domain=None):
    """A new integer input indexing an axis of length ``size``."""
    r = gen.r
    if shape is None:
        k = int(r.choice(_IDX_LENGTHS)) if size else 0
        shape = (k,) if r.random() < 0.85 else (2, k)
    if domain is None:
        domain = str(r.choice(["wrap", "wrap", "in", "rep"]))
    dt = "int64" if r.random() < 0.7 else "int32"
    return gen.add_input(env, names, InputSpec(dt, tuple(shape), f"{domain}:{size}",
                                               int(r.integers(0, 2**31))))


def mask_input(gen, env, names, shape):
    dom = str(gen.r.choice(["half", "half", "sparse", "none", "all"]))
    return gen.add_input(env, names, InputSpec("bool", tuple(shape), dom,
                                               int(gen.r.integers(0, 2**31))))


def _array(gen, env, names, want=lambda v: True):
    return gen.pick(env, names, lambda v: v.ndim >= 1 and want(v))


def _region(r, shape):
    """A basic index (string) of bounded and strided slices, one per axis."""
    parts = []
    for s in shape:
        u = r.random()
        if u < 0.3:
            parts.append(":")
        elif u < 0.7:
            lo = int(r.integers(0, s + 1))
            parts.append(f"{lo}:{int(r.integers(lo, s + 1))}")
        else:
            parts.append(f"{int(r.integers(0, 2))}::{int(r.choice([2, 3]))}")
    return ", ".join(parts)


def op_construct(gen, env, names):
    r = gen.r
    a = _array(gen, env, names)
    if a is None:
        return None
    v = np.asarray(env[a])
    nd, shape = v.ndim, v.shape
    k = str(r.choice(["fill", "fill", "pad", "empty", "empty", "arange", "linspace", "eye"]))
    dt = "{0}.dtype" if r.random() < 0.7 else f"np.{r.choice(['float64', 'float32', 'int64'])}"
    if k == "fill":
        ctor = str(r.choice(["zeros", "ones", "full"]))
        fill = f", {r.choice(['2.5', '-1', '7'])}" if ctor == "full" else ""
        idx = _region(r, shape)
        return f"np.{ctor}({{0}}.shape{fill}, dtype={dt}); {{t}}[{idx}] = {{0}}[{idx}]", (a,)
    if k == "pad":          # a halo of zeros around the array along axis 0
        return (f"np.zeros(({{0}}.shape[0] + 2,) + {{0}}.shape[1:], dtype={dt}); "
                f"{{t}}[1:-1] = {{0}}"), (a,)
    if k == "empty":        # every element written before anything reads it
        ax = int(r.integers(0, nd))
        cut = int(r.integers(0, shape[ax] + 1))
        lead = ":, " * ax
        same = [n for n in names if np.shape(env[n]) == shape and n != a]
        b = gen.pick(env, same) if same and r.random() < 0.6 else None
        src2 = "{1}" if b is not None else "{0}[" + lead + "::-1]"
        args = (a,) if b is None else (a, b)
        shp = "{0}.shape" if r.random() < 0.7 else f"{shape!r}"
        return (f"np.empty({shp}, dtype={dt}); {{t}}[{lead}:{cut}] = {{0}}[{lead}:{cut}]; "
                f"{{t}}[{lead}{cut}:] = {src2}[{lead}{cut}:]"), args
    if k == "arange":
        ax = int(r.integers(-nd, nd))
        u = r.random()
        if u < 0.3:
            return f"np.arange({{0}}.shape[{ax}])", (a,)
        if u < 0.5:
            return f"np.arange(1, {{0}}.size + 1, dtype={dt}).reshape({{0}}.shape)", (a,)
        op = "+" if v.dtype.kind != "b" else "*"
        return f"{{0}} {op} np.arange({{0}}.shape[-1])", (a,)
    if k == "linspace":
        lo, hi = (float(x) for x in r.choice([0.0, -1.0, 0.5, 2.0], 2))
        end = ", endpoint=False" if r.random() < 0.3 else ""
        ldt = ", dtype=np.float32" if r.random() < 0.2 else ""
        ls = f"np.linspace({lo!r}, {hi!r}, {{0}}.shape[-1]{end}{ldt})"
        if r.random() < 0.4:
            return ls, (a,)
        return f"{{0}} * {ls}", (a,)
    # eye / identity
    if nd >= 2 and r.random() < 0.6:
        kk = int(r.integers(-2, 3))
        return f"np.eye({{0}}.shape[-2], {{0}}.shape[-1], {kk}, dtype={dt}) * {{0}}", (a,)
    if r.random() < 0.5:
        return f"np.identity({{0}}.shape[-1], dtype={dt})", (a,)
    return f"np.eye({{0}}.shape[0], k={int(r.integers(-1, 2))})", (a,)


def op_gather(gen, env, names):
    r = gen.r
    a = _array(gen, env, names)
    if a is None:
        return None
    v = np.asarray(env[a])
    nd, shape = v.ndim, v.shape
    kinds = ["idx", "idx", "take", "take_flat", "along", "mask", "mask", "mask_rows"]
    if nd >= 2:
        kinds += ["idx_axis1", "ij", "ij"]
    k = str(r.choice(kinds))
    red = str(r.choice(["", "", ".sum()", ".max(initial=0)", ".sum(axis=0)"]))
    if k in ("mask", "mask_rows"):
        m = mask_input(gen, env, names, shape if k == "mask" else shape[:1])
        u = r.random()
        if u < 0.3:
            return "{0}[{1}]", (a, m)
        if u < 0.6:
            return "{0}[{1}].sum()", (a, m)
        if u < 0.8:
            return "np.sum({0}[{1}] * 2)", (a, m)
        return "len({0}[{1}]) + np.zeros(1, np.int64)", (a, m)
    if k == "ij":
        i = index_input(gen, env, names, shape[0])
        ishape = np.shape(env[i])
        jshape = ishape if r.random() < 0.6 else ishape[-1:]
        j = index_input(gen, env, names, shape[1], shape=jshape)
        return "{0}[{1}, {2}]" + red, (a, i, j)
    if k == "along":
        ax = int(r.integers(-nd, nd))
        ishape = list(shape)
        ishape[ax] = int(r.choice([0, 1, 2, 3, 5]))
        i = index_input(gen, env, names, shape[ax], shape=ishape)
        return f"np.take_along_axis({{0}}, {{1}}, axis={ax})", (a, i)
    if k == "take_flat":
        i = index_input(gen, env, names, v.size)
        return "np.take({0}, {1})" + red, (a, i)
    ax = {"idx": 0, "idx_axis1": 1}.get(k, int(r.integers(-nd, nd)))
    i = index_input(gen, env, names, shape[ax])
    if k == "take":
        return f"np.take({{0}}, {{1}}, axis={ax})" + red, (a, i)
    return f"{{0}}[{':, ' * ax}{{1}}]" + red, (a, i)


def _value_for(gen, env, names, tshape, kind):
    """(template piece, extra arg or None): a value to store into a region of ``tshape``."""
    r = gen.r
    fits = [n for n in names if not n.startswith("s") and np.ndim(env[n]) <= len(tshape)
            and np.asarray(env[n]).dtype.kind in ("bif" if kind in "fc" else "bi" if kind == "i" else "b")
            and _into(np.shape(env[n]), tshape)]
    if fits and r.random() < 0.5:
        return "{V}", gen.pick(env, fits)
    lit = {"b": ["True", "False"], "i": ["1", "-3", "7"], "f": ["1.5", "-2.0", "0.25"],
           "c": ["1.5", "(1-2j)", "-1j"]}[kind]
    return str(r.choice(lit)), None


def _into(src, dst):
    try:
        return np.broadcast_shapes(tuple(src), tuple(dst)) == tuple(dst)
    except ValueError:
        return False


def op_scatter(gen, env, names, oob=False):
    r = gen.r
    writable = [n for n in names if n.startswith("x") and isinstance(env[n], np.ndarray)
                and env[n].flags.writeable and env[n].ndim >= 1 and env[n].size
                and n not in gen.index_names]
    if writable and not oob and r.random() < 0.2:
        a, init = gen.pick(env, writable), "{0}"
    else:
        a = _array(gen, env, names, lambda v: v.size > 0)
        if a is None:
            return None
        init = "{0}.copy()" if r.random() < 0.7 else "np.zeros_like({0})"
    v = np.asarray(env[a])
    shape, kind = v.shape, v.dtype.kind
    k = str(r.choice(["set", "set", "aug", "at", "at", "mask", "put"]))
    if oob and k == "mask":
        k = "set"
    dom = "oob" if oob else None
    if k == "mask":
        m = mask_input(gen, env, names, shape if r.random() < 0.7 else shape[:1])
        same = [n for n in names if np.shape(env[n]) == shape and n != a]
        if same and r.random() < 0.4:
            return f"{init}; {{t}}[{{1}}] = {{2}}[{{1}}]", (a, m, gen.pick(env, same))
        val, _ = _value_for(gen, env, [], (), kind)
        return f"{init}; {{t}}[{{1}}] = {val}", (a, m)
    if k == "put":
        i = index_input(gen, env, names, v.size, shape=(int(r.choice(_IDX_LENGTHS[1:])),),
                        domain=dom)
        val, _ = _value_for(gen, env, [], (), kind)
        return f"{init}; np.put({{t}}, {{1}}, {val})", (a, i)
    i = index_input(gen, env, names, shape[0], domain=dom or str(r.choice(["wrap", "rep", "rep"])))
    tshape = np.shape(env[i]) + shape[1:]
    val, b = _value_for(gen, env, names, tshape, kind)
    args = (a, i) if b is None else (a, i, b)
    val = val.replace("{V}", "{2}")
    if k == "set":
        return f"{init}; {{t}}[{{1}}] = {val}", args
    if k == "aug":
        op = str(r.choice(["+", "*"] if kind != "b" else ["|", "&"]))
        return f"{init}; {{t}}[{{1}}] {op}= {val}", args
    uf = str(r.choice(["add", "add", "subtract", "multiply"]))
    if b is not None and np.ndim(env[i]) > 1 and np.shape(env[b]) != tshape:
        # NumPy's ufunc.at broadcasts a value array against a multi-dimensional index wrongly
        # (numpy 2.4: np.add.at(t, idx of shape (2, 5), v of shape (5,)) adds v once, or adds
        # uninitialized memory: 1e21), so the oracle would be wrong: a scalar value instead
        val, _ = _value_for(gen, env, [], (), kind)
        args = (a, i)
    return f"{init}; np.{uf}.at({{t}}, {{1}}, {val})", args


def op_complex(gen, env, names):
    r = gen.r
    cplx = [n for n in names if np.asarray(env[n]).dtype.kind == "c"]
    real = [n for n in names if np.asarray(env[n]).dtype.kind in "fi"]
    if not cplx or r.random() < 0.4:
        if not real:
            return None
        a = gen.pick(env, real)
        sa = np.shape(env[a])
        others = [n for n in real if _bcast(sa, np.shape(env[n]))]
        b = gen.pick(env, others)
        u = r.random()
        if u < 0.4:
            return "{0} + 1j * {1}", (a, b)
        if u < 0.6:
            return "np.exp(1j * {0})", (a,)
        if u < 0.8:
            return f"{{0}} * {r.choice(['(0.5-2j)', '1j', '(-1.5+0.25j)'])} - {{1}}", (a, b)
        return "np.abs({0} - 1j * {1})", (a, b)
    a = gen.pick(env, cplx)
    u = r.random()
    if u < 0.35:
        f = str(r.choice(_CFUNCS))
        return f"np.{f}({{0}})", (a,)
    if u < 0.5:
        return str(r.choice(["np.abs({0})", "np.angle({0})", "{0}.real", "{0}.imag",
                             "np.conj({0})", "({0} * np.conj({0})).real"])), (a,)
    if u < 0.75:
        sa = np.shape(env[a])
        others = [n for n in names if n != a and np.asarray(env[n]).dtype.kind in "bifc"
                  and _bcast(sa, np.shape(env[n]))]
        if not others:
            return None
        b = gen.pick(env, others)
        return f"{{0}} {r.choice(['+', '-', '*', '/'])} {{1}}", (a, b)
    nd = np.ndim(env[a])
    red = str(r.choice(["sum", "mean", "prod"]))
    ax = "" if nd == 0 or r.random() < 0.5 else f"axis={int(r.integers(-nd, nd))}"
    if r.random() < 0.3:
        return f"np.abs({{0}}).max({ax})", (a,)
    return f"np.{red}({{0}}{', ' + ax if ax else ''})", (a,)


def _bcast(a, b):
    try:
        return int(np.prod(np.broadcast_shapes(a, b))) <= 20000
    except ValueError:
        return False


def oob_stmt(gen, env, names):
    """A gather or scatter with one out-of-range index: (template, args) or None."""
    r = gen.r
    if r.random() < 0.5:
        return op_scatter(gen, env, names, oob=True)
    a = _array(gen, env, names, lambda v: True)
    if a is None:
        return None
    v = np.asarray(env[a])
    ax = int(r.integers(0, v.ndim))
    i = index_input(gen, env, names, v.shape[ax], shape=(int(r.choice([1, 2, 5])),),
                    domain="oob")
    u = r.random()
    if u < 0.5:
        return f"{{0}}[{':, ' * ax}{{1}}]", (a, i)
    if u < 0.75:
        return f"np.take({{0}}, {{1}}, axis={ax})", (a, i)
    return f"{{0}}[{':, ' * ax}{{1}}].sum()", (a, i)
