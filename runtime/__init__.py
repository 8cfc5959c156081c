"""cppcodegen's execution side: cache directory, build driver, cffi loading, compiled calls.

Installed as ``cppcodegen.runtime``. It never imports the compiler (no sympy), so code that
was compiled once can be found, loaded and run with this package alone.
"""
from .cachedir import (CacheDirError, clear_caches, clear_on_fresh_cache, default_cache_dir,
                       ensure_cache_dir, fresh_cache)
from .build import BuildResult, CompileError, compile_cached, explain_miss, invalidate
from .loader import Library, LoadError, load_built, load_library
from .compiled import CompiledVariant, Plan
from .compiled import HookedVariant, make_variant
from .device import (CPUHooks, Device, DeviceHooks, HostAllocator, get_device_hooks,
                     register_device_hooks, use_device_hooks)
from .random import Generator
from .device import manual_seed
