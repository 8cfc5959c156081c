// cppcodegen/print.h -- the user's print() calls, written by Python when the program runs.
//
// Provides, in namespace ccg:
//   put(slot, v): the value v copied into slot (8 bytes; a complex one fills two)
//   print(spec, slots): the print whose arguments `spec` describes (JSON, frontend/printing.py)
//     with the values in `slots`, handed to the Python function the module's exported
//     ccg_use_print (backend/program.py) set once after loading (runtime/printing.py). It
//     formats and writes the line with Python's print, so the text is Python's own.
// The pointer is per module (internal linkage), like blas.h's.
#pragma once

#include <cstdint>
#include <cstring>

namespace ccg {
namespace print_detail {
using Fn = void (*)(const char*, const uint64_t*);
static Fn g_print = nullptr;
}  // namespace print_detail

template <class T>
inline void put(uint64_t* slot, const T& v) {
  std::memcpy(slot, &v, sizeof(T));
}

inline void print(const char* spec, const uint64_t* slots) {
  if (print_detail::g_print != nullptr) print_detail::g_print(spec, slots);
}
}  // namespace ccg
