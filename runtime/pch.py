"""The precompiled header of everything kernels include (``include/cppcodegen/kernel.h``).

In:  the compiler and its flags, the header directory, the kernel cache directory, the
     compiler's version line and the headers' digest (build.py computes both for its own
     key), and ``$CPPCODEGEN_PCH_DIR`` (:func:`cachedir.pch_dir_setting`).
Out: :func:`locate` -> a directory to put first on the include path (it holds
     ``cppcodegen/kernel.h.gch``) or None: build this kernel without, and where to build the
     header then (:func:`start`, in the background; :func:`find_or_start` does both);
     :func:`unreadable` / :func:`discard` -> build.py drops a .gch the compiler could not
     read and builds the kernel again without it.

Where::

    <root>/<key>/cppcodegen/kernel.h.gch   the header, only ever appears by rename
    <root>/<key>/.building                 a builder is at work: its pid (dead: stale)
    <root>/<key>/cppcodegen/.kernel.h.gch.tmp-<pid>   its output until then

``<root>`` is ``$CPPCODEGEN_PCH_DIR`` when set, ``<cache dir>/pch`` when that says off, else
the ``pch/`` of the user's own cache directory (``~/.cache/cppcodegen/pch``: shared by every
cache directory, an explicit ``CPPCODEGEN_CACHE_DIR`` or a ``fresh_cache()`` too, and quietly
replaced by ``<cache dir>/pch`` when it is not usable); a header already in the cache's own
``pch/`` is used either way. ``<key>`` hashes the compiler
version, the flags (with the CPU's identity when they say ``-march=native``) and every
header. A root is used only when it is private to this user, like the cache directory, and
only a .gch that is ours and not writable by others is put on the include path.

Built in the background, by a detached ``sh`` that outlives this process, at idle CPU
priority (``nice -n 19``), and started only once the kernel build that found it missing is
done (build.py): that build does not share the CPU with it, the following ones are faster.
The header takes ~1.6 s of CPU (g++ 12, AVX-512 flags) and saves ~0.3 s per kernel, so it is
shared: by default every cache directory of the user finds it in one place
(:func:`cachedir.pch_dir_setting`). The output goes to a temp file
that is fsynced before it is renamed into place, so a .gch is never seen half-written, not
even after a crash. One that the compiler cannot read anyway (truncated later) is removed,
with a :class:`CacheWarning`, and the kernel is built without it. Starting a build prunes
the root to the KEEP most recently used headers and those used in the last two days
(:func:`prune`)."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import time
import warnings
from pathlib import Path

from . import cpu
from .cachedir import (CacheDirError, CacheWarning, MemoDict, clear_on_fresh_cache,
                       ensure_cache_dir, make_private_dirs, pch_dir_explicit,
                       pch_dir_setting)

HEADER = "cppcodegen/kernel.h"
STALE_SECONDS = 600          # a marker this old is a dead builder's, whatever its pid
KEEP = 8                     # headers kept per root (the newest), with the one being built,
UNUSED_S = 2 * 86400         # and any other used in the last two days
_HEX = frozenset("0123456789abcdef")
_TEMP_MARK = ".tmp-"
_ROOTS = clear_on_fresh_cache(MemoDict())       # str(path) -> the checked root, or None
_USED = clear_on_fresh_cache(MemoDict())        # str(.gch) -> touched by this process


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def pch_flags(flags) -> list:
    return [f for f in flags if f != "-shared"]


def key(version: str, flags, include_digest: str) -> str:
    parts = [version, *pch_flags(flags), include_digest]
    if "-march=native" in flags:      # g++ would ignore a .gch made for another CPU
        cpu_flags, model = cpu.cpu_info()
        parts.append(f"{model}\0{' '.join(sorted(cpu_flags))}")
    return _sha("\0".join(parts))[:24]


def _root(path: Path, why: str, quiet: bool = False) -> Path | None:
    """``path`` created and checked private (once per process), or None, with a warning
    unless ``quiet``."""
    memo = _ROOTS.get(str(path), False)
    if memo is not False:
        return memo
    try:
        root = ensure_cache_dir(path, need_exec=False)
    except (CacheDirError, OSError) as e:
        if not quiet:
            warnings.warn(f"cppcodegen: cannot use {path} for precompiled headers ({why}): "
                          f"{e}; building them in the cache directory instead", CacheWarning,
                          stacklevel=4)
        root = None
    _ROOTS[str(path)] = root
    return root


def _usable(gch: Path) -> bool:
    """True if ``gch`` exists, is a regular file of ours and not writable by others."""
    try:
        st = os.lstat(gch)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        why = "not a regular file"
    elif st.st_uid != os.geteuid() or st.st_mode & 0o022:
        why = (f"owned by uid {st.st_uid} with mode {stat.S_IMODE(st.st_mode):o}, it must be "
               "yours and not writable by others")
    else:
        return True
    warnings.warn(f"cppcodegen: ignoring precompiled header {gch}: {why}", CacheWarning,
                  stacklevel=4)
    return False


def locate(cxx: str, flags: list, include_dir: Path, cache_dir: Path, *, version: str,
           include_digest: str) -> tuple:
    """``(root, target)``: the directory holding a usable ``cppcodegen/kernel.h.gch`` for
    these flags, or None; and where to build one when there is none (None: never, e.g. clang)."""
    header = Path(include_dir) / HEADER
    if not header.exists() or "clang" in os.path.basename(cxx):
        return None, None
    k = key(version, flags, include_digest)
    local = Path(cache_dir) / "pch"
    setting = pch_dir_setting()
    shared = (_root(setting, "CPPCODEGEN_PCH_DIR", quiet=not pch_dir_explicit())
              if setting is not None else None)
    roots = [local / k] + ([shared / k] if shared is not None and shared != local else [])
    for root in roots:
        gch = root / (HEADER + ".gch")
        if _usable(gch):
            if str(gch) not in _USED:            # its mtime says when it was last used
                _USED[str(gch)] = True
                try:
                    os.utime(gch)
                except OSError:
                    pass
            return root, None
    return None, roots[-1]


def find_or_start(cxx: str, flags: list, include_dir: Path, cache_dir: Path, *,
                  version: str, include_digest: str, env: dict) -> Path | None:
    """The directory holding a usable ``cppcodegen/kernel.h.gch`` for these flags, or None
    (then a background build of it is started unless one is running)."""
    root, target = locate(cxx, flags, include_dir, cache_dir, version=version,
                          include_digest=include_digest)
    if target is not None:
        start(cxx, flags, include_dir, target, env)
    return root


def start(cxx, flags, include_dir, root: Path, env: dict) -> None:
    """Build ``root/cppcodegen/kernel.h.gch`` in the background (see :func:`_start`), unless
    another process has published it meanwhile."""
    if not (root / (HEADER + ".gch")).exists():
        _start(cxx, flags, include_dir, root, env)


def _builder_alive(marker: Path) -> bool:
    """Is the builder that made ``marker`` still at work? Its ``sh`` writes its pid there
    first; an empty marker is one being written. Older than STALE_SECONDS: dead anyway."""
    try:
        age = time.time() - marker.stat().st_mtime
        text = marker.read_text().strip()
    except OSError:
        return False
    if age > STALE_SECONDS:
        return False
    if not text.isdigit():
        return True
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return False
    except OSError:                                  # alive, someone else's process
        return True
    return True


def _start(cxx, flags, include_dir, root: Path, env: dict) -> None:
    """Build ``root/cppcodegen/kernel.h.gch`` in a detached process, unless a live
    builder's marker is there."""
    gch = root / (HEADER + ".gch")
    marker = root / ".building"
    try:
        make_private_dirs(gch.parent)
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            if _builder_alive(marker):
                return                               # someone is building it
            marker.write_text("")                    # a builder died: take over
            for p in gch.parent.glob(f".{gch.name}{_TEMP_MARK}*"):
                p.unlink(missing_ok=True)            # its output, half-written
        tmp = gch.with_name(f".{gch.name}{_TEMP_MARK}{os.getpid()}")
        cmd = [cxx, *pch_flags(flags), "-x", "c++-header", f"-I{include_dir}",
               str(Path(include_dir) / HEADER), "-o", str(tmp)]
        nice = shutil.which("nice", path=env.get("PATH"))
        if nice:                    # idle priority: it never slows the compiles that wait
            cmd = [nice, "-n", "19", *cmd]
        t, g, m = (shlex.quote(str(p)) for p in (tmp, gch, marker))
        # the marker names the builder; the header is on disk before it gets its name (`sync
        # FILE` fsyncs it; an old sync syncs all); the marker goes if it is still ours
        script = (f"echo $$ > {m}; {shlex.join(cmd)} >/dev/null 2>&1 && chmod 600 {t} && "
                  f"{{ sync {t} 2>/dev/null || sync; }} && mv -f {t} {g}; rm -f {t}; "
                  f'[ "$(cat {m} 2>/dev/null)" = "$$" ] && rm -f {m}')
        # a session of its own: it goes on after this process exits (not waited for)
        subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
        prune(root.parent, keep=root)
    except OSError:
        pass                                         # no header this time: only slower


def prune(root: Path, keep: Path, limit: int = KEEP, unused_s: float = UNUSED_S) -> list:
    """Remove the headers of ``root`` (each one of another compiler, flag set or header
    version: ~45 MB) beyond the ``limit`` most recently used that no process has used for
    ``unused_s`` (:func:`locate` touches one when a process first uses it); never ``keep`` nor
    one being built. Safe while in use: a compiler that has one open keeps reading it, and one
    that looks for a removed one parses the headers instead. Returns the directories removed."""
    entries = []
    for d in root.iterdir():
        gch = d / (HEADER + ".gch")
        ours = len(d.name) == 24 and set(d.name) <= _HEX and (d / "cppcodegen").is_dir()
        if d == keep or not ours or d.is_symlink() or (d / ".building").exists():
            continue
        try:
            entries.append((os.lstat(gch).st_mtime, d))
        except OSError:
            continue                                 # empty: a build that failed; small
    entries.sort(reverse=True)
    now = time.time()
    removed = [d for used, d in entries[max(limit - 1, 0):] if now - used > unused_s]
    for d in removed:
        shutil.rmtree(d, ignore_errors=True)
    return removed


def unreadable(compiler_output: str) -> bool:
    """True if a failed compile says it could not read a precompiled header."""
    text = compiler_output or ""
    return "PCH file" in text or ".gch" in text


def discard(root: Path, compiler_output: str) -> None:
    """Remove ``root``'s .gch (the compiler could not read it), with a warning."""
    gch = root / (HEADER + ".gch")
    first = next((line for line in (compiler_output or "").splitlines()
                  if "PCH" in line or ".gch" in line), "").strip()
    warnings.warn(f"cppcodegen: precompiled header {gch} is damaged ({first}); removing it "
                  "and building without it", CacheWarning, stacklevel=3)
    try:
        gone = gch.with_name(f".{gch.name}{_TEMP_MARK}bad-{os.getpid()}")
        os.replace(gch, gone)                        # no one opens it by its name again
        gone.unlink(missing_ok=True)
    except OSError:
        pass
