"""Where compiled artifacts live, and how in-memory caches are reset.

In:  the environment (``CPPCODEGEN_CACHE_DIR``, ``CPPCODEGEN_PCH_DIR``, ``XDG_CACHE_HOME``,
     ``HOME``), read only by :func:`default_cache_dir`, :func:`pch_dir_setting` and
     :func:`fresh_cache`, at call time.
Out: :func:`default_cache_dir` -> a ``Path`` (not created yet);
     :func:`pch_dir_setting` -> where precompiled headers are shared (by default in
     :func:`user_cache_dir`), or None (each cache directory keeps its own, runtime/pch.py);
     :func:`ensure_cache_dir` -> the same path, created 0o700 and checked to be
     private to the current user, else :class:`CacheDirError`;
     :func:`clear_on_fresh_cache` / :func:`clear_caches` -> a registry of
     in-process memo tables (anything with ``cache_clear()``);
     :func:`fresh_cache` -> a context manager giving an empty, private cache
     directory for tests and benchmarks.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

ENV_VAR = "CPPCODEGEN_CACHE_DIR"
PCH_ENV_VAR = "CPPCODEGEN_PCH_DIR"
_OFF = frozenset({"0", "off", "no", "false", "none"})


class CacheDirError(RuntimeError):
    """The cache directory cannot be created or is not safe to use."""


class CacheWarning(RuntimeWarning):
    """A damaged cache entry was found and is being rebuilt."""


def _fallback_dir() -> Path:
    """``<tempdir>/cppcodegen_<uid>``; when the temp directory is mounted noexec (common
    for a hardened /tmp), the first of /var/tmp, /dev/shm that is writable and allows
    execution instead."""
    name = f"cppcodegen_{os.getuid()}"
    first = Path(tempfile.gettempdir())
    for base in (first, Path("/var/tmp"), Path("/dev/shm")):
        if _writable_base(base) and not is_noexec(base):
            return base / name
    return first / name


def _writable_base(path: Path) -> bool:
    """True if ``path`` exists and is writable, or could be created under
    its nearest existing ancestor."""
    p = path
    while not p.exists():
        if p.parent == p:
            return False
        p = p.parent
    return p.is_dir() and os.access(p, os.W_OK | os.X_OK)


def default_cache_dir() -> Path:
    """The cache directory to use, from the environment (evaluated now)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    return user_cache_dir()


def user_cache_dir() -> Path:
    """This user's own cache directory, whatever ``$CPPCODEGEN_CACHE_DIR`` says:
    ``$XDG_CACHE_HOME/cppcodegen``, else ``~/.cache/cppcodegen``, else a private directory
    under the temp directory."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg) and _writable_base(Path(xdg)):
        return Path(xdg) / "cppcodegen"
    home = os.environ.get("HOME")
    if not home:
        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:  # uid without a passwd entry (common in containers)
            return _fallback_dir()
    home_path = Path(home)
    if not home_path.is_dir() or not _writable_base(home_path / ".cache"):
        return _fallback_dir()
    return home_path / ".cache" / "cppcodegen"


def pch_dir_setting() -> Path | None:
    """Where precompiled headers are shared (evaluated now): ``$CPPCODEGEN_PCH_DIR`` when it
    names a directory; None when it is one of ``0 off no false none`` (then each cache
    directory keeps its own ``pch/``); unset or empty: ``pch/`` of :func:`user_cache_dir`,
    so every cache directory of this user (an explicit ``CPPCODEGEN_CACHE_DIR``, a
    :func:`fresh_cache`) compiles with the header built once for this compiler, flags and
    headers (runtime/pch.py keys them)."""
    value = os.environ.get(PCH_ENV_VAR, "").strip()
    if value.lower() in _OFF:
        return None
    if not value:
        return user_cache_dir() / "pch"
    return Path(value).expanduser()


def pch_dir_explicit() -> bool:
    """True when ``$CPPCODEGEN_PCH_DIR`` names a directory (a problem with it is worth a
    warning; the implicit default falls back quietly)."""
    value = os.environ.get(PCH_ENV_VAR, "").strip()
    return bool(value) and value.lower() not in _OFF


def make_private_dirs(path: Path) -> None:
    """mkdir -p, giving every directory we create mode 0o700."""
    missing = []
    p = path
    while not p.exists() and not p.is_symlink():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass  # a concurrent process made it; checked below


def ensure_cache_dir(path, need_exec: bool = True) -> Path:
    """Create ``path`` if needed and check it is private to this user (and, with
    ``need_exec``, that shared objects in it can be mapped)."""
    path = Path(path)
    hint = f"use `chmod 700 {path}` or set {ENV_VAR} to a directory you own"
    try:
        make_private_dirs(path)
        st = os.stat(path)
    except OSError as e:
        raise CacheDirError(
            f"cppcodegen cache directory {path} cannot be created: {e}; "
            f"set {ENV_VAR} to a writable directory") from e
    if not stat.S_ISDIR(st.st_mode):
        raise CacheDirError(f"cppcodegen cache directory {path} is not a "
                            f"directory; set {ENV_VAR} to a directory you own")
    if st.st_uid != os.geteuid():
        raise CacheDirError(
            f"cppcodegen cache directory {path} is owned by uid {st.st_uid}, "
            f"not by you (uid {os.geteuid()}); another user could plant code "
            f"there. Set {ENV_VAR} to a directory you own")
    if st.st_mode & 0o022:
        raise CacheDirError(
            f"cppcodegen cache directory {path} is writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):o}); another user could plant "
            f"code there. Fix: {hint}")
    if need_exec:
        check_exec(path)
    return path


def noexec_message(path) -> str:
    return (f"cppcodegen cache directory {path} is on a filesystem mounted noexec, so compiled "
            f"kernels cannot be loaded from it. Set {ENV_VAR} to a directory on a filesystem "
            f"that allows execution (e.g. {ENV_VAR}=~/.cache/cppcodegen)")


def is_noexec(path) -> bool:
    """True if ``path`` lies on a filesystem mounted noexec (unknown = False)."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_NOEXEC", 8))
    except OSError:
        return False


def check_exec(path) -> None:
    """Raise :class:`CacheDirError` if shared objects under ``path`` cannot be mapped."""
    if is_noexec(path):
        raise CacheDirError(noexec_message(path))


def check_private_file(path, st) -> None:
    """Refuse a cache file (``st`` = its stat) another user owns or could have written."""
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise CacheDirError(
            f"refusing to load cppcodegen cache file {path}: it is owned by uid {st.st_uid} "
            f"with mode {stat.S_IMODE(st.st_mode):o}, but must be owned by you (uid "
            f"{os.geteuid()}) and not writable by group or others. Remove it (python -m "
            f"cppcodegen cache clear) or set {ENV_VAR} to a directory you own")


# -- registry of in-memory caches ---------------------------------------------

_REGISTERED: list = []


def clear_on_fresh_cache(obj):
    """Register ``obj`` (anything with a callable ``cache_clear``) so that
    :func:`clear_caches` and :func:`fresh_cache` empty it. Returns ``obj``,
    so it works as a decorator on top of ``functools.lru_cache``."""
    if not callable(getattr(obj, "cache_clear", None)):
        raise TypeError(f"clear_on_fresh_cache: {obj!r} has no callable "
                        f"cache_clear() method")
    _REGISTERED.append(obj)
    return obj


def clear_caches() -> None:
    """Empty every registered in-memory cache."""
    for obj in list(_REGISTERED):
        obj.cache_clear()


class MemoDict(dict):
    """A plain dict that can be registered with :func:`clear_on_fresh_cache`."""

    def cache_clear(self) -> None:
        self.clear()


def _list_files(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            with contextlib.suppress(OSError):
                out[p.relative_to(root).as_posix()] = p.lstat().st_size
    return out


@contextlib.contextmanager
def fresh_cache(cache_entries=None, dir=None, delete=True):
    """Run the body with ``$CPPCODEGEN_CACHE_DIR`` pointing at a new empty
    directory (yielded as a Path) and all registered caches cleared.

    The precompiled header is not rebuilt for every fresh cache: it is shared
    (:func:`pch_dir_setting`).

    If ``cache_entries`` is an (empty) dict it is filled afterwards with
    ``{relative path: size in bytes}`` of every file created. The directory
    is removed when ``delete`` is true, unless the body raised: then it is
    kept for inspection and a warning names it.
    """
    if cache_entries is not None:
        if not isinstance(cache_entries, dict):
            raise TypeError("fresh_cache: cache_entries must be a dict or None")
        if cache_entries:
            raise ValueError("fresh_cache: cache_entries must be passed empty")
    path = Path(tempfile.mkdtemp(prefix="cppcodegen_fresh_", dir=dir))
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(path)
    failed = False
    try:
        clear_caches()
        yield path
    except BaseException:
        failed = True
        raise
    finally:
        try:
            clear_caches()
        finally:
            if previous is None:
                os.environ.pop(ENV_VAR, None)
            else:
                os.environ[ENV_VAR] = previous
            if cache_entries is not None:
                cache_entries.update(_list_files(path))
            if failed:
                warnings.warn(f"fresh_cache: the body raised; keeping cache "
                              f"directory {path} for inspection", stacklevel=3)
            elif delete:
                shutil.rmtree(path, ignore_errors=True)
