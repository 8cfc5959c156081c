"""Measured choices, remembered per machine: the decisions file of a cache directory.

In:  a cache directory, a description of this machine (:func:`machine`: CPU model, resolved
     ISA, cores, compiler, package and NumPy versions) and decision keys
     (:func:`matmul_key`: dtype, M, N, K and batch bucketed to powers of 2, thread count).
Out: :class:`Decisions`, the decisions measured on this machine so far
     (``<cache_dir>/tuning/<machine hash>.json``): :meth:`Decisions.get` reads one,
     :meth:`Decisions.measure_once` returns the stored one or runs a measurement under the
     file's lock and publishes it; :func:`describe` lists every decisions file as text;
     :func:`busy`: is the machine too loaded for a timing to be final?

The file is JSON ``{"format", "machine": {...}, "decisions": {key: {"path", ...}}}``, mode
0600, replaced atomically (written to a temporary name, then renamed), so a reader never sees
half a file; writers hold ``<file>.lock`` and re-read before adding, so concurrent processes
keep each other's decisions and measure a class once. A file that does not parse, or not as
decisions, is ignored with a :class:`CacheWarning` and rewritten on the next decision. The
measurement itself is the compiler's (cppcodegen/autotune.py): this module never imports it.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
import warnings
from pathlib import Path

from . import cpu
from .cachedir import CacheWarning, MemoDict, check_private_file, clear_on_fresh_cache
from .locks import LockTimeout, exclusive_lock

FORMAT = 1
SUBDIR = "tuning"
LOCK_TIMEOUT_S = 120.0      # longer than any measurement; then the caller's default applies


def threads() -> int:
    """The threads a kernel (and NumPy's BLAS) runs on in this process: the CPUs this
    process may use, or fewer when ``OMP_NUM_THREADS`` says so."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) > 0:
        n = min(n, int(omp))
    return max(n, 1)


BUSY_LOAD = 1.5     # runnable threads per usable core above which a measurement is provisional


def load() -> float:
    """The 1-minute load average per CPU this process may use (0.0 where unknown)."""
    try:
        return round(os.getloadavg()[0] / len(os.sched_getaffinity(0)), 2)
    except (AttributeError, OSError):
        return 0.0


def busy() -> bool:
    """Is the machine so loaded that timings say more about the load than about the code?
    A decision measured then is provisional: measured again by a later process, when quiet."""
    return load() > BUSY_LOAD


def machine(isa: str, compiler: str, package_version: str) -> dict:
    """What a decision depends on besides its own key: the CPU, the ISA the code is built for,
    the cores, the compiler, our version and NumPy's (whose BLAS is the other candidate), and
    how idle OpenMP threads wait (a sleeping thread costs a wake-up: openmp.prepare)."""
    import numpy
    from . import openmp
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return {"cpu": cpu.cpu_info()[1] or "unknown", "isa": isa, "isa_key": cpu.isa_key(isa),
            "cores": cores, "compiler": compiler, "package": package_version,
            "numpy": numpy.__version__, "openmp_wait": openmp.prepare()}


def machine_hash(desc: dict) -> str:
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()[:16]


def bucket(n: int) -> int:
    """The power of 2 nearest ``n`` (in log scale; 0 and 1 stay): 300 -> 256, 2000 -> 2048."""
    n = int(n)
    if n <= 1:
        return max(n, 0)
    lo = 1 << (n.bit_length() - 1)
    return lo if n * n < 2 * lo * lo else lo * 2     # n < lo * sqrt(2): round down


def matmul_key(dtype: str, m: int, n: int, k: int, batch: int, nthreads: int) -> str:
    """The shape class of a product: ``matmul float32 256x256x256 batch=0 threads=2``
    (``batch`` = the number of products, bucketed; 0 = one product without batch axes)."""
    b = 0 if batch <= 1 else bucket(batch)
    return (f"matmul {dtype} {bucket(m)}x{bucket(n)}x{bucket(k)} batch={b} "
            f"threads={nthreads}")


def valid(decision) -> bool:
    """Is ``decision`` one this version writes: a matmul path ('gemm'/'blas'), or a parallel
    threshold ('threshold' with a positive int 'elements', autotune_threshold.py)?"""
    if not isinstance(decision, dict):
        return False
    if decision.get("path") == "threshold":
        n = decision.get("elements")
        return isinstance(n, int) and not isinstance(n, bool) and n > 0
    return decision.get("path") in ("gemm", "blas")


def _empty(desc: dict) -> dict:
    return {"format": FORMAT, "machine": desc, "decisions": {}}


class Decisions:
    """The decisions file of one machine in one cache directory (see the module docstring)."""

    def __init__(self, cache_dir, desc: dict):
        self.desc = desc
        self.path = Path(cache_dir) / SUBDIR / f"{machine_hash(desc)}.json"
        self.data = self._read()
        self._lock = threading.Lock()

    def _read(self) -> dict:
        try:
            with open(self.path, "rb") as fh:
                check_private_file(self.path, os.fstat(fh.fileno()))
                data = json.loads(fh.read().decode("utf-8"))
        except FileNotFoundError:
            return _empty(self.desc)
        except (ValueError, UnicodeDecodeError) as e:
            return self._corrupt(f"{type(e).__name__}: {e}")
        if not (isinstance(data, dict) and data.get("format") == FORMAT
                and isinstance(data.get("decisions"), dict)
                and all(valid(v) for v in data["decisions"].values())):
            return self._corrupt("not a decisions file of this version")
        data["machine"] = self.desc
        return data

    def _corrupt(self, why: str) -> dict:
        warnings.warn(f"cppcodegen: tuning decisions file {self.path} is damaged ({why}); "
                      "ignoring it: decisions are measured again and the file rewritten",
                      CacheWarning, stacklevel=4)
        return _empty(self.desc)

    def get(self, key: str):
        """The stored decision for ``key`` (a dict with ``path`` and the times), or None."""
        return self.data["decisions"].get(key)

    def items(self) -> list:
        return sorted(self.data["decisions"].items())

    def measure_once(self, key: str, measure):
        """The decision for ``key``: stored, or ``measure()`` (-> dict with ``path``) run under
        the file's lock (so concurrent processes measure a class once, one at a time) and
        published. A lock held past LOCK_TIMEOUT_S gives None (the caller's default)."""
        found = self.get(key)
        if found is not None:
            return found
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._lock:
            try:
                with exclusive_lock(self.path.with_name(self.path.name + ".lock"),
                                    timeout=LOCK_TIMEOUT_S):
                    self.data = self._merge(self._read())      # another process's news
                    found = self.get(key)
                    if found is not None:
                        return found
                    decision = dict(measure(), when=round(time.time(), 1))
                    self.data["decisions"][key] = decision
                    self._write()
                    return decision
            except LockTimeout:
                return None

    def put(self, key: str, decision: dict) -> None:
        """Store ``decision`` for ``key`` (tests inject decisions this way)."""
        if not valid(decision):
            raise ValueError(f"a decision's path is 'gemm' or 'blas', or 'threshold' with an int "
                             f"'elements', not {decision!r}")
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._lock, exclusive_lock(self.path.with_name(self.path.name + ".lock")):
            self.data = self._merge(self._read())
            self.data["decisions"][key] = dict(decision)
            self._write()

    def _merge(self, disk: dict) -> dict:
        """The file's decisions plus ours that it lacks (measured while it was unreadable)."""
        for k, v in self.data["decisions"].items():
            disk["decisions"].setdefault(k, v)
        return disk

    def _write(self) -> None:
        text = json.dumps(self.data, indent=1, sort_keys=True)
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with open(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


_OPEN: MemoDict = clear_on_fresh_cache(MemoDict())      # (cache dir, machine hash) -> Decisions
_OPEN_LOCK = threading.Lock()


def decisions(cache_dir, desc: dict) -> Decisions:
    """The decisions of machine ``desc`` in ``cache_dir``, read once per process."""
    key = (str(cache_dir), machine_hash(desc))
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is None:
            found = _OPEN[key] = Decisions(cache_dir, desc)
        return found


def format_decision(key: str, d: dict) -> str:
    """``matmul float32 256x256x256 batch=0 threads=2: blas (BLAS 0.31 ms, ccg::gemm 0.52 ms)``."""
    times = ""
    if d.get("path") == "threshold":
        table = d.get("times_us") if isinstance(d.get("times_us"), dict) else {}
        shown = ", ".join(f"{n}: {t[0]:.3g}/{t[1]:.3g} us" for n, t in table.items()
                          if isinstance(t, list) and len(t) == 2)
        busy = f", provisional: measured at load {d.get('load')} per core" if d.get("busy") else ""
        return (f"{key}: loops of >= {d.get('elements')} elements run on all threads"
                + (f" (parallel/serial a*b+a float32 at {shown}{busy})" if shown else ""))
    if isinstance(d.get("blas_ms"), (int, float)) and isinstance(d.get("gemm_ms"), (int, float)):
        times = f" (BLAS {d['blas_ms']:.4g} ms, ccg::gemm {d['gemm_ms']:.4g} ms"
        if d.get("shape"):
            times += f" at {d['shape']}"
        times += ")"
        if d.get("busy"):
            times += f" provisional: measured at load {d.get('load')} per core"
    elif d.get("why"):
        times = f" ({d['why']})"
    return f"{key}: {d.get('path')}{times}"


def files(cache_dir) -> list[Path]:
    root = Path(cache_dir) / SUBDIR
    return sorted(root.glob("*.json")) if root.is_dir() else []


def describe(cache_dir) -> list[str]:
    """Text lines: each decisions file of ``cache_dir``, its machine and its decisions."""
    lines = []
    for path in files(cache_dir):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            m, ds = data["machine"], data["decisions"]
            head = (f"{m.get('cpu')}, {m.get('isa')}, {m.get('cores')} cores, "
                    f"{m.get('compiler')}, cppcodegen {m.get('package')}, "
                    f"numpy {m.get('numpy')}"
                    + (f", {m['openmp_wait']}" if m.get("openmp_wait") else ""))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            lines.append(f"{path.name}: unreadable (measured again when needed)")
            continue
        lines.append(f"{path.name}: {len(ds)} decisions for {head}")
        lines += [f"  {format_decision(k, v)}" for k, v in sorted(ds.items())
                  if isinstance(v, dict)]
    return lines
