// Test driver for cppcodegen/vec.h and cppcodegen/scalar.h.
// Built as a shared library by tests/test_headers.py (once per ISA mode)
// and called through ctypes:
//   int ccg_vec(op, dtype, N, a, b, out, n, param)   -- Vec<T,N> kernels
//   int ccg_scalar(op, dtype, a, b, out, n)          -- scalar.h functions
// Both return 0 on success, -1 for an unknown op/dtype.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "cppcodegen/scalar.h"
#include "cppcodegen/vec.h"

using namespace ccg;
using sv = std::string_view;

namespace {

// out[i] = f(a[i]) over the array, tail handled with partial load/store.
template <class T, int N, class R, class F>
void map1(const T* a, R* o, int64_t n, F f) {
  int64_t i = 0;
  for (; i + N <= n; i += N) f(Vec<T, N>::load(a + i)).store(o + i);
  if (i < n) f(Vec<T, N>::load_partial(a + i, n - i)).store_partial(o + i, n - i);
}
template <class T, int N, class R, class F>
void map2(const T* a, const T* b, R* o, int64_t n, F f) {
  int64_t i = 0;
  for (; i + N <= n; i += N) f(Vec<T, N>::load(a + i), Vec<T, N>::load(b + i)).store(o + i);
  if (i < n)
    f(Vec<T, N>::load_partial(a + i, n - i), Vec<T, N>::load_partial(b + i, n - i))
        .store_partial(o + i, n - i);
}
// out[j] = reduction of a[j*N .. j*N+N)
template <class T, int N, class F> void reduce(const T* a, T* o, int64_t n, F f) {
  for (int64_t j = 0; j * N + N <= n; ++j) o[j] = f(Vec<T, N>::load(a + j * N));
}

#define U1(name, expr) \
  if (op == name) { map1<T, N, T>(a, o, n, [](auto x) { return expr; }); return 0; }
#define U2(name, expr) \
  if (op == name) { map2<T, N, T>(a, b, o, n, [](auto x, auto y) { return expr; }); return 0; }
#define B1(name, expr) \
  if (op == name) { map1<T, N, bool>(a, (bool*)out, n, [](auto x) { return expr; }); return 0; }
#define B2(name, expr) \
  if (op == name) { map2<T, N, bool>(a, b, (bool*)out, n, [](auto x, auto y) { return expr; }); return 0; }
#define RED(name, fn) \
  if (op == name) { reduce<T, N>(a, o, n, [](auto x) { return fn(x); }); return 0; }
#define CVT(name, U) \
  if (op == name) { map1<T, N, U>(a, (U*)out, n, [](auto x) { return convert<U>(x); }); return 0; }

template <class T, int N>
int run_vec(sv op, const void* av, const void* bv, void* out, int64_t n, int64_t param) {
  using VT = Vec<T, N>;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  T* o = static_cast<T*>(out);
  U2("add", x + y) U2("sub", x - y) U2("mul", x * y) U1("neg", -x)
  U2("maximum", maximum(x, y)) U2("minimum", minimum(x, y))
  U2("fmax", fmax(x, y)) U2("fmin", fmin(x, y))
  U1("abs", abs(x)) U1("square", square(x)) U1("sign", sign(x))
  U2("floordiv", floordiv(x, y)) U2("mod", mod(x, y))
  B2("eq", x == y) B2("ne", x != y) B2("lt", x < y) B2("le", x <= y)
  B2("gt", x > y) B2("ge", x >= y)
  B1("isnan", isnan(x)) B1("isinf", isinf(x)) B1("isfinite", isfinite(x))
  B1("signbit", signbit(x)) B1("to_mask", to_mask(x))
  U2("select_lt", select(x < y, x, y))
  U1("from_mask", from_mask<T>(x > VT::broadcast(T(0))))
  U1("iota", VT::iota(T(3)) + x)
  RED("reduce_add", reduce_add) RED("reduce_mul", reduce_mul)
  RED("reduce_max", reduce_max) RED("reduce_min", reduce_min)
  RED("reduce_fmax", reduce_fmax) RED("reduce_fmin", reduce_fmin)
  CVT("cvt_float32", float) CVT("cvt_float64", double)
  CVT("cvt_int8", int8_t) CVT("cvt_int16", int16_t) CVT("cvt_int32", int32_t)
  CVT("cvt_int64", int64_t) CVT("cvt_uint8", uint8_t) CVT("cvt_uint16", uint16_t)
  CVT("cvt_uint32", uint32_t) CVT("cvt_uint64", uint64_t)
  if (op == "copy_partial") {  // one partial load/store of n <= N lanes
    VT::load_partial(a, n).store_partial(o, n);
    return 0;
  }
  if (op == "load_partial_full") {  // partial load, full store: lanes >= n are 0
    VT::load_partial(a, n).store(o);
    return 0;
  }
  if (op == "strided") {  // o[0..n) = a[i*param] (n <= N), a points mid-array
    if (n == N) VT::load_strided(a, param).store(o);
    else VT::load_strided_partial(a, param, n).store_partial(o, n);
    return 0;
  }
  if (op == "mask_roundtrip") {  // bool in a, stride param; out: bools + any/all/count
    const bool* m = static_cast<const bool*>(av);
    Mask<N> k = param == 1 ? (n == N ? Mask<N>::load(m) : Mask<N>::load_partial(m, n))
                           : (n == N ? Mask<N>::load_strided(m, param)
                                     : Mask<N>::load_strided_partial(m, param, n));
    bool* ob = static_cast<bool*>(out);
    if (n == N) k.store(ob); else k.store_partial(ob, n);
    int64_t* stats = reinterpret_cast<int64_t*>(ob + 64);
    stats[0] = k.any(); stats[1] = k.all(); stats[2] = k.count();
    Mask<N> inv = ~k;
    stats[3] = inv.count(); stats[4] = (k ^ inv).all(); stats[5] = (k == k).all();
    stats[6] = (k != k).any(); stats[7] = (k & inv).any(); stats[8] = (k | inv).all();
    for (int i = 0; i < N; ++i) stats[9 + i] = k.lane(i);
    return 0;
  }
  if constexpr (std::is_floating_point_v<T>) {
    U2("div", x / y) U1("sqrt", sqrt(x)) U1("floor", floor(x)) U1("ceil", ceil(x))
    U1("trunc", trunc(x)) U1("rint", rint(x)) U2("copysign", copysign(x, y))
    U1("exp", exp(x)) U1("exp2", exp2(x)) U1("expm1", expm1(x)) U1("log", log(x))
    U1("log2", log2(x)) U1("log10", log10(x)) U1("log1p", log1p(x))
    U1("sin", sin(x)) U1("cos", cos(x)) U1("tan", tan(x)) U1("arcsin", asin(x))
    U1("arccos", acos(x)) U1("arctan", atan(x)) U1("sinh", sinh(x))
    U1("cosh", cosh(x)) U1("tanh", tanh(x)) U1("arcsinh", asinh(x))
    U1("arccosh", acosh(x)) U1("arctanh", atanh(x))
    U2("arctan2", atan2(x, y)) U2("hypot", hypot(x, y)) U2("power", pow(x, y))
  } else {
    U2("bitwise_and", x & y) U2("bitwise_or", x | y) U2("bitwise_xor", x ^ y)
    U1("invert", ~x) U2("left_shift", left_shift(x, y)) U2("right_shift", right_shift(x, y))
  }
  return -1;
}

template <class T>
int run_vec_t(sv op, int N, const void* a, const void* b, void* o, int64_t n, int64_t p) {
  switch (N) {
    case 4: return run_vec<T, 4>(op, a, b, o, n, p);
    case 8: return run_vec<T, 8>(op, a, b, o, n, p);
    case 16: return run_vec<T, 16>(op, a, b, o, n, p);
  }
  return -1;
}

#define S1(name, expr) \
  if (op == name) { for (int64_t i = 0; i < n; ++i) { T x = a[i]; o[i] = expr; } return 0; }
#define S2(name, expr) \
  if (op == name) { for (int64_t i = 0; i < n; ++i) { T x = a[i], y = b[i]; o[i] = expr; } return 0; }
#define SB(name, expr) \
  if (op == name) { for (int64_t i = 0; i < n; ++i) { T x = a[i]; ((bool*)out)[i] = expr; } return 0; }
#define SCAST(name, U) \
  if (op == name) { for (int64_t i = 0; i < n; ++i) ((U*)out)[i] = ccg::cast<U>(a[i]); return 0; }

template <class T>
int run_scalar(sv op, const void* av, const void* bv, void* out, int64_t n) {
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  T* o = static_cast<T*>(out);
  S2("floordiv", ccg::floordiv(x, y)) S2("mod", ccg::mod(x, y)) S2("power", ccg::power(x, y))
  S2("maximum", ccg::maximum(x, y)) S2("minimum", ccg::minimum(x, y))
  S2("fmax", ccg::fmax(x, y)) S2("fmin", ccg::fmin(x, y))
  S1("sign", ccg::sign(x)) S1("abs", ccg::abs(x)) S1("rint", ccg::rint(x))
  S1("square", ccg::square(x))
  SB("isnan", ccg::isnan(x)) SB("isinf", ccg::isinf(x)) SB("isfinite", ccg::isfinite(x))
  SB("signbit", ccg::signbit(x))
  SCAST("cast_bool", bool) SCAST("cast_int8", int8_t) SCAST("cast_int16", int16_t)
  SCAST("cast_int32", int32_t) SCAST("cast_int64", int64_t) SCAST("cast_uint8", uint8_t)
  SCAST("cast_uint16", uint16_t) SCAST("cast_uint32", uint32_t) SCAST("cast_uint64", uint64_t)
  SCAST("cast_float32", float) SCAST("cast_float64", double)
  if constexpr (std::is_integral_v<T>) {
    S2("left_shift", ccg::left_shift(x, y)) S2("right_shift", ccg::right_shift(x, y))
  }
  return -1;
}

}  // namespace

extern "C" int ccg_vec(const char* op, const char* dtype, int N, const void* a,
                       const void* b, void* out, int64_t n, int64_t param) {
  sv dt(dtype);
  if (dt == "float32") return run_vec_t<float>(op, N, a, b, out, n, param);
  if (dt == "float64") return run_vec_t<double>(op, N, a, b, out, n, param);
  if (dt == "int8") return run_vec_t<int8_t>(op, N, a, b, out, n, param);
  if (dt == "int16") return run_vec_t<int16_t>(op, N, a, b, out, n, param);
  if (dt == "int32") return run_vec_t<int32_t>(op, N, a, b, out, n, param);
  if (dt == "int64") return run_vec_t<int64_t>(op, N, a, b, out, n, param);
  if (dt == "uint8") return run_vec_t<uint8_t>(op, N, a, b, out, n, param);
  if (dt == "uint16") return run_vec_t<uint16_t>(op, N, a, b, out, n, param);
  if (dt == "uint32") return run_vec_t<uint32_t>(op, N, a, b, out, n, param);
  if (dt == "uint64") return run_vec_t<uint64_t>(op, N, a, b, out, n, param);
  return -1;
}

extern "C" int ccg_scalar(const char* op, const char* dtype, const void* a,
                          const void* b, void* out, int64_t n) {
  sv dt(dtype);
  if (dt == "int8") return run_scalar<int8_t>(op, a, b, out, n);
  if (dt == "int16") return run_scalar<int16_t>(op, a, b, out, n);
  if (dt == "int32") return run_scalar<int32_t>(op, a, b, out, n);
  if (dt == "int64") return run_scalar<int64_t>(op, a, b, out, n);
  if (dt == "uint8") return run_scalar<uint8_t>(op, a, b, out, n);
  if (dt == "uint16") return run_scalar<uint16_t>(op, a, b, out, n);
  if (dt == "uint32") return run_scalar<uint32_t>(op, a, b, out, n);
  if (dt == "uint64") return run_scalar<uint64_t>(op, a, b, out, n);
  if (dt == "float32") return run_scalar<float>(op, a, b, out, n);
  if (dt == "float64") return run_scalar<double>(op, a, b, out, n);
  return -1;
}
