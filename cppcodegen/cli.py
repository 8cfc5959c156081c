"""``python -m cppcodegen cache info|list|clear``: look at and empty the kernel cache.

In: the command line and the cache location (``--dir``, else the ``cache_dir`` option /
``CPPCODEGEN_CACHE_DIR``, else the per-user default). Out: text on stdout and an exit code.
``clear`` removes each kernel entry under its build lock (a build in progress finishes first),
then the graph entries and the compiler-version memos. Imports only the runtime: no sympy.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from . import config
from .runtime import build, cachedir, graphcache


def _size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def _location(args) -> tuple[Path, str]:
    if args.dir:
        return Path(args.dir), "--dir"
    explicit = config.cache_dir_setting(config.get_options())
    if explicit:
        return Path(explicit), cachedir.ENV_VAR
    return cachedir.default_cache_dir(), "per-user default"


def _kernel_row(entry: Path) -> dict:
    try:
        info = json.loads((entry / "build.json").read_text())
    except (OSError, ValueError):
        info = {}
    return {"key": entry.name, "name": info.get("name", "?"), "bytes": _size(entry),
            "built": info.get("finished"), "seconds": info.get("build_seconds"),
            "complete": info.get("completed") is True}


def cmd_info(root: Path, origin: str) -> int:
    print(f"location: {root} ({origin})")
    if not root.is_dir():
        print("entries:  0 (the directory does not exist yet)")
        return 0
    kernels, graphs = build.kernel_entries(root), graphcache.entries(root)
    pch = root / "pch"
    pch_count = len(list(pch.glob("*/cppcodegen/*.gch"))) if pch.is_dir() else 0
    pch_size = _size(pch) if pch.is_dir() else 0
    print(f"entries:  {len(kernels)} kernels, {len(graphs)} graphs, "
          f"{pch_count} precompiled headers")
    print(f"size:     {_human(_size(root) - pch_size)} (+ {_human(pch_size)} precompiled headers)")
    return 0


def cmd_list(root: Path, origin: str) -> int:
    print(f"# {root} ({origin})")
    for row in map(_kernel_row, build.kernel_entries(root)):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["built"])) if row["built"] else "?"
        secs = f"{row['seconds']:.2f}s" if isinstance(row["seconds"], (int, float)) else "?"
        state = "" if row["complete"] else "  (incomplete)"
        print(f"kernel {row['key'][:16]}  {row['name']:<24} {_human(row['bytes']):>10}  "
              f"built {when} in {secs}{state}")
    for path in graphcache.entries(root):
        print(f"graph  {path.stem[:16]}  {_human(path.stat().st_size):>35}")
    return 0


def cmd_clear(root: Path, origin: str) -> int:
    if not root.is_dir():
        print(f"nothing to clear: {root} does not exist")
        return 0
    before = _size(root)
    kernels, graphs = build.kernel_entries(root), graphcache.entries(root)
    for path in graphs:                      # graph entries first: they point at kernels
        path.unlink(missing_ok=True)
    for entry in kernels:
        build.remove_entry(entry)
    shutil.rmtree(root / "compilers", ignore_errors=True)
    shutil.rmtree(root / "pch", ignore_errors=True)
    cachedir.clear_caches()
    print(f"removed {len(kernels)} kernels and {len(graphs)} graphs "
          f"({_human(before - _size(root))}) from {root}")
    return 0


COMMANDS = {"info": cmd_info, "list": cmd_list, "clear": cmd_clear}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cppcodegen",
                                     description="cppcodegen command line")
    sub = parser.add_subparsers(dest="group", required=True)
    cache = sub.add_parser("cache", help="the on-disk kernel cache")
    cache.add_argument("action", choices=sorted(COMMANDS),
                       help="info: location, entries, size; list: every entry; "
                            "clear: remove every entry (safe while other processes run)")
    cache.add_argument("--dir", help=f"cache directory (default: ${cachedir.ENV_VAR} or the "
                                     "per-user default)")
    args = parser.parse_args(argv)
    root, origin = _location(args)
    try:
        return COMMANDS[args.action](root, origin)
    except (OSError, cachedir.CacheDirError) as e:
        print(f"python -m cppcodegen cache {args.action}: {e}", file=sys.stderr)
        return 1
