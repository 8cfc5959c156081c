"""Input arrays for fuzz programs: value domains and memory layouts.

In: a dtype, a logical shape, a value domain and a seed (or literal values), plus a layout
(transposed memory order, negative strides, steps, a misaligned offset, broadcasting).
Out: an ``ndarray`` whose *values* depend only on (dtype, shape, domain, seed) or the
literal data, and whose *strides* follow the layout. ``InputSpec.source()`` prints the
``make_input(...)`` call that rebuilds it, so a failing program prints as runnable code.

Domains keep most programs out of NaN/inf land: floats are mostly in [-3, 3] (``mixed``),
(0.05, 4] (``pos``, for log/sqrt/power), (-0.99, 0.99) (``unit``, for arcsin/arctanh),
small integers as floats (``int``, exact arithmetic, ties for rint/floor) or log-uniform
magnitudes (``wide``); ``mixed`` sprinkles in a few specials (0, -0, +-inf, NaN, 0.5).
Integers are small (``small``: [-20, 20]), shift amounts (``shift``: [0, 70]), positive
(``pos``: [1, 20]) or anything including the type's extremes (``wide``); index arrays into
an axis of length N take ``wrap:N``, ``in:N``, ``rep:N`` or ``oob:N`` (``index_values``).
Booleans are half True (``half``), a tenth (``sparse``), none or all (masks). Complex values take
their real and imaginary parts from the float domains (``mixed``: specials in either part).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
DOMAINS = {"b": ("half",),
           "i": ("small", "small", "small", "pos", "shift", "wide"),
           "f": ("mixed", "mixed", "mixed", "pos", "unit", "int", "wide"),
           "c": ("mixed", "mixed", "pos", "unit", "int", "wide")}
_FLOAT_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.0])


def gen_values(dtype, shape, domain="mixed", seed=0) -> np.ndarray:
    """Deterministic C-contiguous values of ``dtype``/``shape`` drawn from ``domain``."""
    dt = np.dtype(dtype)
    if dt.kind == "c":          # the parts: floats of the domain, from two seeds
        part = np.dtype(f"f{dt.itemsize // 2}")
        z = np.empty(tuple(shape), dt)
        z.real = gen_values(part, shape, domain, seed)
        z.imag = gen_values(part, shape, domain, int(seed) + 104729)
        return z
    r = np.random.default_rng([7919, int(seed)])
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        frac = {"none": 0.0, "all": 1.0, "sparse": 0.1}.get(domain, 0.5)
        return (r.random(n) < frac).reshape(shape)
    if dt.kind in "iu" and ":" in domain:
        return index_values(dt, shape, domain, r)
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        if domain == "pos":
            v = r.integers(1, 21, n)
        elif domain == "shift":
            v = r.integers(0, 71, n)
        elif domain == "wide":
            v = r.integers(ii.min, ii.max, n, endpoint=True, dtype=dt)
            k = min(n, max(1, n // 8))
            v[r.choice(n, k, replace=False) if n else []] = r.choice(
                np.array([ii.min, ii.max, -1, 0, 1, ii.min + 1], dtype=dt), k)
        else:
            v = r.integers(-20, 21, n)
        return np.asarray(v).astype(dt).reshape(shape)
    if domain == "pos":
        v = r.uniform(0.05, 4.0, n)
    elif domain == "unit":
        v = r.uniform(-0.99, 0.99, n)
    elif domain == "int":
        v = r.integers(-6, 7, n).astype(np.float64)
    elif domain == "wide":
        v = r.choice([-1.0, 1.0], n) * 10.0 ** r.uniform(-3, 3, n)
    else:
        v = r.uniform(-3.0, 3.0, n)
        if n:
            k = r.binomial(n, 0.03)
            v[r.choice(n, k, replace=False)] = r.choice(_FLOAT_SPECIALS, k)
    return v.astype(dt).reshape(shape)


def index_values(dt, shape, domain, r) -> np.ndarray:
    """Index arrays into an axis of length N (``domain`` is ``kind:N``): ``wrap`` anywhere
    in [-N, N) (negatives wrap), ``in`` in [0, N), ``rep`` a few values repeated (at most
    3 distinct), ``oob`` in [-N, N) but one element N or -N-1 (NumPy's IndexError)."""
    kind, size = domain.split(":")
    size = int(size)
    n = int(np.prod(shape, dtype=np.int64))
    if kind == "rep":
        v = r.integers(0, max(1, min(size, 3)), n) - (size if r.random() < 0.5 else 0)
    elif kind == "in":
        v = r.integers(0, max(size, 1), n)
    else:
        v = r.integers(-size, max(size, 1), n)
    if kind == "oob" and n:
        v[r.integers(0, n)] = size if r.random() < 0.5 else -size - 1
    return np.asarray(v).astype(dt).reshape(shape)


def make_input(data, shape=None, *, domain="mixed", seed=0, perm=None, neg=(), step=None,
               off=False, bcast=None) -> np.ndarray:
    """An array with the values of ``data`` (a dtype name: generated values of ``shape``;
    or a literal array) laid out in memory as asked:

    perm   memory order of the axes (e.g. (1, 0): stored transposed, read as a view)
    neg    axes read with a negative stride
    step   {axis: k}: every k-th element of a larger buffer along that axis
    off    start one element into the allocation (misaligned for SIMD)
    bcast  finally ``np.broadcast_to`` this shape (zero strides)
    """
    if isinstance(data, str):
        values = gen_values(data, shape, domain, seed)
    else:
        values = np.asarray(data)
    shape, nd = values.shape, values.ndim
    step = {int(a) % max(nd, 1): int(k) for a, k in (step or {}).items()}
    perm = tuple(perm) if perm is not None else tuple(range(nd))
    ext = [shape[i] * step.get(i, 1) for i in range(nd)]
    phys = [ext[p] for p in perm]
    count = int(np.prod(phys, dtype=np.int64))
    flat = np.zeros(count + (1 if off else 0), dtype=values.dtype)
    base = flat[1:] if off else flat
    v = base.reshape(phys).transpose(np.argsort(perm))
    idx = []
    for i in range(nd):
        k = step.get(i, 1)
        idx.append(slice(None, None, -k) if i in set(int(a) % nd for a in neg) else slice(None, None, k))
    v = v[tuple(idx)]
    assert v.shape == shape, (v.shape, shape)
    v[...] = values
    if bcast is not None:
        v = np.broadcast_to(v, tuple(bcast))
    return v


@dataclass
class InputSpec:
    """One array argument of a program: how to build it, and how to print that."""
    dtype: str
    shape: tuple                   # shape before broadcasting
    domain: str = "mixed"
    seed: int = 0
    data: np.ndarray | None = None  # literal values (after shrinking) instead of generated ones
    perm: tuple | None = None
    neg: tuple = ()
    step: dict = field(default_factory=dict)
    off: bool = False
    bcast: tuple | None = None

    @property
    def final_shape(self):
        return tuple(self.bcast) if self.bcast is not None else tuple(self.shape)

    def layout_kwargs(self) -> dict:
        kw = {}
        if self.perm is not None and tuple(self.perm) != tuple(range(len(self.shape))):
            kw["perm"] = tuple(self.perm)
        if self.neg:
            kw["neg"] = tuple(self.neg)
        if self.step:
            kw["step"] = dict(self.step)
        if self.off:
            kw["off"] = True
        if self.bcast is not None:
            kw["bcast"] = tuple(self.bcast)
        return kw

    def values(self) -> np.ndarray:
        if self.data is not None:
            return np.asarray(self.data)
        return gen_values(self.dtype, self.shape, self.domain, self.seed)

    def make(self) -> np.ndarray:
        return make_input(self.values(), **self.layout_kwargs())

    def source(self) -> str:
        kw = self.layout_kwargs()
        if self.data is not None:
            head = literal_source(np.asarray(self.data))
        else:
            head = f"{self.dtype!r}, {tuple(self.shape)!r}, domain={self.domain!r}, seed={self.seed}"
        tail = "".join(f", {k}={v!r}" for k, v in kw.items())
        return f"make_input({head}{tail})"


def _lit(x, kind):
    if kind == "c":
        return f"complex({_lit(x.real, 'f')}, {_lit(x.imag, 'f')})"
    if kind == "b":
        return "True" if x else "False"
    if kind in "iu":
        return str(int(x))
    x = float(x)
    if np.isnan(x):
        return "np.nan"
    if np.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def literal_source(a: np.ndarray) -> str:
    """``np.array([...], dtype=np.<dtype>)`` (reshaped) that rebuilds ``a`` exactly."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.size > 8 and (flat == flat[0]).all():
        return f"np.full({tuple(a.shape)!r}, {_lit(flat[0], a.dtype.kind)}, dtype=np.{a.dtype.name})"
    items = ", ".join(_lit(x, a.dtype.kind) for x in a.reshape(-1))
    src = f"np.array([{items}], dtype=np.{a.dtype.name})"
    if a.ndim != 1:
        src += f".reshape({tuple(a.shape)!r})"
    return src
