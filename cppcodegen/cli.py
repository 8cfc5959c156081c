"""``python -m cppcodegen cache info|list|clear``: look at and empty the kernel cache;
``python -m cppcodegen tune``: measure the common matrix-product classes now (autotune).

In: the command line and the cache location (``--dir``, else the ``cache_dir`` option /
``CPPCODEGEN_CACHE_DIR``, else the per-user default). Out: text on stdout and an exit code.
``clear`` removes each kernel entry under its build lock (a build in progress finishes first),
then the graph entries, the compiler-version memos and the tuning decisions. ``info`` lists
the decisions (runtime/tuning.py). Imports only the runtime (``tune``: the compiler).
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
from .runtime import build, cachedir, graphcache, tuning


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
    decisions = tuning.describe(root)
    print("tuning:   " + ("\n          ".join(decisions) if decisions else
                          "no measured decisions (python -m cppcodegen tune measures them)"))
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
    shutil.rmtree(root / tuning.SUBDIR, ignore_errors=True)
    cachedir.clear_caches()
    print(f"removed {len(kernels)} kernels and {len(graphs)} graphs "
          f"({_human(before - _size(root))}) from {root}")
    return 0


COMMANDS = {"info": cmd_info, "list": cmd_list, "clear": cmd_clear}


def cmd_tune(args) -> int:
    """Measure (or, already decided, show) the common shape classes; print the table."""
    from . import autotune
    opts = config.get_options({"cache_dir": args.dir} if args.dir else None)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else autotune.SWEEP_SIZES
    print(f"# {opts.resolved_isa()}, {tuning.threads()} threads; ccg::gemm unless NumPy's "
          f"matmul takes < {autotune.MARGIN:.0%} of its time")
    print(f"{'class':<48} {'path':<5} {'ccg::gemm ms':>12} {'BLAS ms':>10}  timed at")

    def row(key, d):
        if d is None:
            print(f"{key:<48} (not measured: the decisions file stayed locked)")
            return
        print(f"{key:<48} {d['path']:<5} {d.get('gemm_ms', float('nan')):>12.4g} "
              f"{d.get('blas_ms', float('nan')):>10.4g}  {d.get('shape', '')}", flush=True)
    autotune.sweep(opts, dtypes=tuple(args.dtypes.split(",")), sizes=sizes,
                   shapes=() if args.sizes else autotune.SWEEP_SHAPES, force=args.force,
                   progress=row)
    return 0


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
    tune = sub.add_parser("tune", help="measure which path computes matrix products fastest "
                                       "on this machine (stored in the cache directory)")
    tune.add_argument("--dtypes", default="float32,float64", help="comma-separated dtypes")
    tune.add_argument("--sizes", default="",
                      help="comma-separated square sizes (default: 32 ... 2048 and a few "
                           "rectangular and batched classes)")
    tune.add_argument("--force", action="store_true", help="measure again what is decided")
    tune.add_argument("--dir", help=f"cache directory (default: ${cachedir.ENV_VAR} or the "
                                    "per-user default)")
    args = parser.parse_args(argv)
    if args.group == "tune":
        return cmd_tune(args)
    root, origin = _location(args)
    try:
        return COMMANDS[args.action](root, origin)
    except (OSError, cachedir.CacheDirError) as e:
        print(f"python -m cppcodegen cache {args.action}: {e}", file=sys.stderr)
        return 1
