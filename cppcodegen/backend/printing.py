"""C++ for the user's print calls (``print`` stages, ``frontend/printing.py``).

In: a print stage's control: the buffers of its values and its spec (JSON). Out: a block
that copies each value into 8-byte slots and calls ``ccg::print`` with the spec as a string
literal (``include/cppcodegen/print.h``); the module's ``ccg_use_print`` entry, which the
runtime calls once after loading with Python's callback (``runtime/printing.py``), and its
cffi declaration.
"""
from __future__ import annotations

from ..runtime.printing import slots_of

USE_PRINT = "ccg_use_print"
PRINT_CDEF = ("typedef void (*ccg_print_fn)(const char*, const uint64_t*);\n"
              f"void {USE_PRINT}(ccg_print_fn);")
PRINT_ENTRY = (f'extern "C" void {USE_PRINT}(ccg::print_detail::Fn f) {{   // Python\'s print\n'
               "  ccg::print_detail::g_print = f;\n}\n")


def print_lines(program, control) -> list:
    puts, at = [], 0
    for b in control["values"]:
        puts.append(f"    ccg::put(ccg_pv + {at}, {b}[0]);")
        at += slots_of(program.buffers[b].dtype)
    spec = control["spec"].replace("\\", "\\\\").replace('"', '\\"')
    return ["{", f"    uint64_t ccg_pv[{max(at, 1)}] = {{}};", *puts,
            f'    ccg::print("{spec}", ccg_pv);', "}"]
