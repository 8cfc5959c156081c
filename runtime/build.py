"""Compile C++ source to a shared object, once per content key, on disk.

In:  C++ source text, a file-name stem, the cache directory, the compiler
     (``cxx``), its flags, the header directory, link arguments, the package
     version and optional extra key items (see :func:`compile_cached`).
Out: a :class:`BuildResult` naming the ``.so`` to load, or :class:`CompileError`.

Content key: sha256 over named parts -- ``source``, ``name``, ``command``
(the full compiler command line with placeholder paths), ``compiler_version``
(first line of ``cxx --version``), ``include_dir`` (every file under the
header directory, recursively, skipping ``__pycache__`` and dot-files),
``package_version`` and one ``extra:<k>`` part per ``extra_key`` item.
``BuildResult.key_parts`` maps each part name to a short hash, so two results
can be diffed to explain a cache miss.

Layout::

    <cache_dir>/
      compilers/<hash>.json      `cxx --version`, keyed by binary path+mtime+size
      <key[:2]>/<key>.lock       flock()ed while building or removing the entry
      <key[:2]>/<key>/<name>.cpp the source (kept after a failed build, too)
      <key[:2]>/<key>/<name>.so  the library; only ever appears by os.replace
      <key[:2]>/<key>/build.json written last: command, key parts, compiler
                                 version, timestamps, .so size and sha256,
                                 completed=true
      <key[:2]>/<key>/ffi-<h>.py the parsed cffi declarations (loader.py)
      graphs/<key[:2]>/<key>.pkl graph-level entries (graphcache.py)
      pch/<key>/cppcodegen/kernel.h.gch  the precompiled header (pch.py; shared, in
                                 the user's cache directory, unless CPPCODEGEN_PCH_DIR=off)

An entry counts as built only when build.json says ``completed`` and the
.so has the size and sha256 recorded there (hashed once per process and
file version), so a truncated, garbage or half-written .so is never returned
or loaded. A damaged entry (bad .so, missing or corrupt build.json, files
left by a killed builder) is rebuilt under the lock with a
:class:`CacheWarning`. The warm path (entry intact) takes no lock and runs no
subprocess: the compiler version comes from a per-process memo or from
``compilers/``.

The compiler: ``cxx`` as given, or when it is empty g++, else clang++
(:func:`resolve_compiler`); a missing one gets a :class:`CompileError` that
names what was tried and how to install one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import warnings

from . import pch
from .cachedir import (CacheWarning, MemoDict, check_private_file, clear_on_fresh_cache,
                       ensure_cache_dir)
from .locks import exclusive_lock

FORMAT = 2
AUTO_COMPILERS = ("g++", "clang++")
STDERR_LIMIT = 6000
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\Z")
_TEMP_MARK = ".tmp-"

_ENSURED = clear_on_fresh_cache(MemoDict())        # str(cache_dir) -> True
_COMPILER_VERSIONS = clear_on_fresh_cache(MemoDict())  # cxx -> version line
_INCLUDE_HASHES = clear_on_fresh_cache(MemoDict())  # dir -> (stat sig, digest)
_RESOLVED = clear_on_fresh_cache(MemoDict())       # (cxx, PATH) -> compiler to run
_SO_HASHES = clear_on_fresh_cache(MemoDict())      # .so path -> (stat sig, sha256)


class CompileError(RuntimeError):
    """The compiler is missing or rejected the source.

    Attributes: ``source_path`` (Path kept on disk, or None if we never got
    that far), ``command`` (list[str]) and ``stderr`` (full compiler output).
    """

    def __init__(self, message, *, source_path=None, command=(), stderr=""):
        super().__init__(message)
        self.source_path = source_path
        self.command = list(command)
        self.stderr = stderr


@dataclass(frozen=True)
class BuildResult:
    key: str
    key_parts: dict       # part name -> short hash
    so_path: Path
    source_path: Path
    command: list         # the command that built the .so
    cached: bool          # True if this call did not compile
    build_seconds: float  # 0.0 when cached; build.json keeps the original


def _sha(data) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _trim(text: str, limit: int = STDERR_LIMIT) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return (text[:limit] + f"\n... [{len(text) - limit} more characters; "
            "see CompileError.stderr]")


_INSTALL_HINT = ("Install one (Debian/Ubuntu: `apt-get install g++`; Fedora/RHEL: `dnf install "
                 "gcc-c++`; macOS: `xcode-select --install`; conda: `conda install -c "
                 "conda-forge cxx-compiler`) or set CXX to the path of a C++ compiler.")


def _missing_compiler(cxx: str, command) -> CompileError:
    tried = (f"CXX / option cxx = {cxx!r}" if cxx else
             "CXX (not set), " + ", ".join(AUTO_COMPILERS))
    return CompileError(f"no C++ compiler found: tried {tried} (searched PATH). {_INSTALL_HINT}",
                        command=command)


def compiler_env() -> dict:
    """The environment the compiler runs in: ours, minus sanitizer runtimes preloaded into
    this process (``make sanitize`` preloads libasan so that Python can load sanitized
    kernels; the compiler itself is not instrumented and need not pay for it)."""
    env = dict(os.environ)
    preload = env.get("LD_PRELOAD")
    if preload:
        kept = [p for p in preload.replace(":", " ").split()
                if not re.search(r"lib(asan|ubsan|tsan|lsan)[^/]*$", p)]
        if kept:
            env["LD_PRELOAD"] = " ".join(kept)
        else:
            del env["LD_PRELOAD"]
    return env


def resolve_compiler(cxx: str) -> str:
    """The compiler to run: ``cxx`` if given (it must exist), else the first of
    g++, clang++ on PATH; else :class:`CompileError` naming what was tried."""
    memo_key = (cxx, os.environ.get("PATH", ""))
    found = _RESOLVED.get(memo_key)
    if found is not None:
        return found
    for candidate in ([cxx] if cxx else AUTO_COMPILERS):
        if shutil.which(candidate) is not None:
            _RESOLVED[memo_key] = candidate
            return candidate
    raise _missing_compiler(cxx, [cxx or AUTO_COMPILERS[0]])


def _atomic_write(path: Path, data) -> None:
    """Write ``data`` to ``path`` via a temp file, fsync and os.replace."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    tmp = path.with_name(f".{path.name}{_TEMP_MARK}{os.getpid()}-"
                         f"{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def cache_root(cache_dir) -> Path:
    """``cache_dir`` as a Path, created and checked (private, not noexec) once per process."""
    cache_dir = Path(cache_dir)
    if str(cache_dir) not in _ENSURED:
        ensure_cache_dir(cache_dir)
        _ENSURED[str(cache_dir)] = True
    return cache_dir


def compiler_version(cxx: str, cache_dir=None) -> str:
    """First line of ``cxx --version``; memoized per process and, when
    ``cache_dir`` is given, on disk keyed by the binary's path+mtime+size."""
    version = _COMPILER_VERSIONS.get(cxx)
    if version is not None:
        return version
    exe = shutil.which(resolve_compiler(cxx))
    if exe is None:
        raise _missing_compiler(cxx, [cxx, "--version"])
    real = os.path.realpath(exe)
    st = os.stat(real)
    ident = f"{real}\0{st.st_mtime_ns}\0{st.st_size}"
    disk = None
    if cache_dir is not None:
        disk = Path(cache_dir) / "compilers" / (_sha(ident)[:32] + ".json")
        try:
            data = json.loads(disk.read_text())
            if data.get("ident") == ident:
                version = data["version"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    if version is None:
        command = [exe, "--version"]
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  errors="replace", timeout=120)
        except FileNotFoundError:
            raise _missing_compiler(cxx, command) from None
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CompileError(f"could not run {shlex.join(command)}: {e}",
                               command=command) from e
        if proc.returncode != 0:
            raise CompileError(
                f"{shlex.join(command)} failed with exit code "
                f"{proc.returncode}:\n{_trim(proc.stderr)}",
                command=command, stderr=proc.stderr)
        lines = proc.stdout.strip().splitlines() or proc.stderr.strip().splitlines()
        version = lines[0].strip() if lines else "unknown"
        if disk is not None:
            try:
                disk.parent.mkdir(mode=0o700, exist_ok=True)
                _atomic_write(disk, json.dumps({"ident": ident, "version": version}))
            except OSError:
                pass  # the on-disk memo is only an optimisation
    _COMPILER_VERSIONS[cxx] = version
    return version


def _include_digest(include_dir: Path) -> str:
    """Hash of every file under include_dir, revalidated by (mtime, size)."""
    root = str(include_dir)
    sig = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        for f in files:
            if not f.startswith("."):
                p = os.path.join(dirpath, f)
                st = os.stat(p)
                sig.append((os.path.relpath(p, root), st.st_mtime_ns, st.st_size))
    sig.sort()
    sig = tuple(sig)
    memo = _INCLUDE_HASHES.get(root)
    if memo is not None and memo[0] == sig:
        return memo[1]
    h = hashlib.sha256()
    for rel, _mtime, _size in sig:
        with open(os.path.join(root, rel), "rb") as fh:
            h.update(f"{rel}\0{_sha(fh.read())}\n".encode())
    digest = h.hexdigest()
    _INCLUDE_HASHES[root] = (sig, digest)
    return digest


def _lib_args(libs) -> list[str]:
    """'m' -> '-lm'; anything starting with '-' or naming a file passes through."""
    return [lib if lib.startswith("-") or "/" in lib else f"-l{lib}" for lib in libs]


def _command(cxx, flags, include_dir, libs, source, output, pch_dir=None) -> list[str]:
    extra = [f for f in ("-shared", "-fPIC") if f not in flags]
    first = [f"-I{pch_dir}"] if pch_dir else []
    return [cxx, *flags, *extra, *first, f"-I{include_dir}", str(source),
            "-o", str(output), *_lib_args(libs)]


def _run_compiler(cxx, flags, include_dir, libs, source, output, pch_dir):
    """(command, completed process) of one compile of ``source`` into ``output``."""
    command = _command(cxx, flags, include_dir, libs, source, output, pch_dir)
    try:
        return command, subprocess.run(command, capture_output=True, text=True,
                                       errors="replace", env=compiler_env())
    except FileNotFoundError:
        raise _missing_compiler(cxx, command) from None
    except OSError as e:
        raise CompileError(f"could not run {shlex.join(command)}: {e}",
                           source_path=source, command=command) from e


def precompiled_header(cxx: str, flags: list, include_dir: Path, cache_dir: Path,
                       start: bool = True):
    """A directory holding ``cppcodegen/kernel.h.gch`` built with exactly these flags, or
    None (its build is started in the background when ``start``: runtime/pch.py); with
    ``start=False``, ``(directory or None, where to build it or None)``. Put first on the
    include path, it lets g++ skip parsing the headers (~0.3 s of a ~0.45 s kernel build)."""
    version = compiler_version(cxx, cache_dir)
    digest = _include_digest(Path(include_dir))
    if not start:
        return pch.locate(cxx, flags, include_dir, cache_dir, version=version,
                          include_digest=digest)
    return pch.find_or_start(cxx, flags, include_dir, cache_dir, version=version,
                             include_digest=digest, env=compiler_env())


def file_sha256(path, st=None) -> str:
    """sha256 of a file, memoized per process by path, inode, size and mtime."""
    st = st or os.stat(path)
    sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    memo = _SO_HASHES.get(str(path))
    if memo is not None and memo[0] == sig:
        return memo[1]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    digest = h.hexdigest()
    _SO_HASHES[str(path)] = (sig, digest)
    return digest


def check_entry(so) -> tuple:
    """``(build.json contents, None)`` if the entry holding ``so`` is complete and
    its .so has the recorded size and sha256; else ``(None, why)``, with ``why``
    None when the entry simply does not exist. Raises CacheDirError if the .so
    belongs to another user or others could have written it."""
    so = Path(so)
    meta = so.parent / "build.json"
    try:
        with open(meta, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        if so.exists():
            return None, "build.json is missing"
        left = sorted(p.name for p in so.parent.iterdir()
                      if _TEMP_MARK in p.name) if so.parent.is_dir() else []
        if left:
            pid = left[0].split(_TEMP_MARK)[1].split("-")[0]
            return None, (f"a build by process {pid} was interrupted (killed?) and left "
                          f"{', '.join(left)}")
        return None, None
    except OSError as e:
        return None, f"build.json cannot be read ({e})"
    try:
        info = json.loads(raw)
        done, size, digest = info.get("completed"), info["so_size"], info["so_sha256"]
    except (ValueError, KeyError, AttributeError, TypeError):
        return None, "build.json is corrupt"
    if done is not True:
        return None, "build.json does not say the build completed"
    try:
        st = os.stat(so)
    except OSError:
        return None, f"{so.name} is missing"
    check_private_file(so, st)
    if st.st_size != size:
        return None, f"{so.name} has {st.st_size} bytes, build.json recorded {size}"
    if file_sha256(so, st) != digest:
        return None, f"{so.name} does not match the sha256 recorded in build.json"
    return info, None


def _completed(meta: Path, so: Path):
    """build.json contents if the entry is fully built and intact, else None."""
    return check_entry(so)[0]


def _paths(cache_dir: Path, key: str, name: str):
    entry = cache_dir / key[:2] / key
    return entry, entry / f"{name}.cpp", entry / f"{name}.so", entry / "build.json"


def _remove_temps(entry: Path) -> None:
    """Drop temp files left by a killed builder (caller holds the lock)."""
    for p in entry.iterdir():
        if p.name.startswith(".") and _TEMP_MARK in p.name:
            p.unlink(missing_ok=True)


def _warn_damaged(entry: Path, why: str) -> None:
    warnings.warn(f"cppcodegen: cache entry {entry} is damaged ({why}); rebuilding it",
                  CacheWarning, stacklevel=3)


def compile_cached(source: str, *, name: str, cache_dir: Path, cxx: str,
                   flags: list[str], include_dir: Path, libs: list[str],
                   package_version: str,
                   extra_key: dict[str, str] | None = None) -> BuildResult:
    """Return the built library for this exact input, compiling it if needed.

    Runs ``cxx *flags [-shared -fPIC] -I<include_dir> <name>.cpp -o <tmp>
    *libs`` (bare lib names become ``-l<name>``). Safe to call concurrently
    from threads and processes: one of them compiles, the others wait for it.
    """
    if not _NAME_RE.match(name):
        raise ValueError(f"compile_cached: name {name!r} is not a safe file "
                         "name (letters, digits, '_', '.', '-')")
    extra_key = dict(extra_key or {})
    for k, v in extra_key.items():
        if not (isinstance(k, str) and isinstance(v, str)):
            raise TypeError(f"compile_cached: extra_key items must be str: "
                            f"{k!r}: {v!r}")
    cache_dir = cache_root(cache_dir)
    include_dir = Path(include_dir)
    flags, libs = list(flags), list(libs)

    cxx = resolve_compiler(cxx)
    template = _command(cxx, flags, "<include_dir>", libs, "<source>", "<output>")
    version = compiler_version(cxx, cache_dir)
    full = {
        "source": _sha(source),
        "name": _sha(name),
        "command": _sha("\0".join(template)),
        "compiler_version": _sha(version),
        "include_dir": _include_digest(include_dir),
        "package_version": _sha(package_version),
    }
    for k, v in extra_key.items():
        full[f"extra:{k}"] = _sha(v)
    key = _sha("".join(f"{n}={d}\n" for n, d in sorted(full.items())))
    key_parts = {n: d[:12] for n, d in full.items()}
    entry, src, so, meta = _paths(cache_dir, key, name)

    def cached(info):
        return BuildResult(key, key_parts, so, src, list(info["command"]),
                           True, 0.0)

    info = _completed(meta, so)          # fast path: no lock, no subprocess
    if info is not None:
        return cached(info)

    ensure_cache_dir(cache_dir)          # recheck: it may have been removed
    entry.parent.mkdir(mode=0o700, exist_ok=True)
    with exclusive_lock(entry.parent / f"{key}.lock"):
        info, why = check_entry(so)      # someone else built it meanwhile?
        if info is not None:
            return cached(info)
        if why is not None:              # no builder is running: it is damaged
            _warn_damaged(entry, why)
            meta.unlink(missing_ok=True)
            so.unlink(missing_ok=True)
        entry.mkdir(mode=0o700, exist_ok=True)
        _remove_temps(entry)
        marker = entry / f".building{_TEMP_MARK}{os.getpid()}"   # gone unless we are killed
        marker.touch(mode=0o600)
        _atomic_write(src, source)
        tmp_so = entry / f".{name}.so{_TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        pch_dir, pch_target = precompiled_header(cxx, flags, include_dir, cache_dir, start=False)
        started, t0 = time.time(), time.perf_counter()
        try:
            args = (cxx, flags, include_dir, libs, src, tmp_so)
            command, proc = _run_compiler(*args, pch_dir)
            if proc.returncode != 0 and pch_dir is not None and pch.unreadable(proc.stderr):
                pch.discard(pch_dir, proc.stderr)      # damaged: once more without it
                command, proc = _run_compiler(*args, None)
            if proc.returncode != 0:
                output = proc.stderr or proc.stdout
                raise CompileError(
                    f"C++ compilation failed (exit code {proc.returncode}).\n"
                    f"command: {shlex.join(command)}\n"
                    f"source:  {src}\n"
                    f"compiler output:\n{_trim(output)}",
                    source_path=src, command=command, stderr=output)
            seconds = time.perf_counter() - t0
            os.chmod(tmp_so, 0o700)
            with open(tmp_so, "rb") as f:
                os.fsync(f.fileno())
            size = os.stat(tmp_so).st_size
            digest = file_sha256(tmp_so)
            os.replace(tmp_so, so)
        finally:
            tmp_so.unlink(missing_ok=True)
            marker.unlink(missing_ok=True)
        _atomic_write(meta, json.dumps({
            "format": FORMAT,
            "completed": True,
            "name": name,
            "key": key,
            "key_parts": full,
            "command": command,
            "compiler_version": version,
            "package_version": package_version,
            "extra_key": extra_key,
            "so_size": size,
            "so_sha256": digest,
            "started": started,
            "finished": time.time(),
            "build_seconds": seconds,
        }, indent=1))
        _fsync_dir(entry)
    if pch_target is not None:      # missing: built now, after this kernel, for the next ones
        pch.start(cxx, flags, include_dir, pch_target, compiler_env())
    return BuildResult(key, key_parts, so, src, command, False, seconds)


def invalidate(result: BuildResult) -> None:
    """Remove a (corrupted) entry under its lock; the next
    :func:`compile_cached` with the same inputs rebuilds it."""
    remove_entry(Path(result.so_path).parent)


def remove_entry(entry: Path) -> None:
    """Remove one kernel entry directory and its lock file, holding the lock
    (so never while it is being built; see locks.py for why the lock file may go)."""
    entry = Path(entry)
    if not entry.parent.is_dir():
        return                                           # nothing to remove
    lock = entry.parent / f"{entry.name}.lock"
    with exclusive_lock(lock):
        (entry / "build.json").unlink(missing_ok=True)   # un-publish first
        shutil.rmtree(entry, ignore_errors=True)
        lock.unlink(missing_ok=True)


_HEX = frozenset("0123456789abcdef")


def kernel_entries(cache_dir) -> list[Path]:
    """Every kernel entry directory (``<key[:2]>/<key>``) under ``cache_dir``."""
    root = Path(cache_dir)
    if not root.is_dir():
        return []
    return sorted(p for shard in root.iterdir()
                  if len(shard.name) == 2 and set(shard.name) <= _HEX and shard.is_dir()
                  for p in shard.iterdir()
                  if p.is_dir() and len(p.name) == 64 and p.name.startswith(shard.name))


def explain_miss(old: BuildResult, new: BuildResult) -> list[str]:
    """Names of key parts that differ between two results."""
    names = sorted(set(old.key_parts) | set(new.key_parts))
    return [n for n in names if old.key_parts.get(n) != new.key_parts.get(n)]
