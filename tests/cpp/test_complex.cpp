// Test driver for cppcodegen/complex.h, built as a shared library by
// tests/test_complex_kernels.py (once per ISA mode) and called through ctypes:
//   int ccg_cx(op, dtype, lanes, a, b, out, n, stride)
// dtype "complex64" / "complex128" (a, b arrays of that dtype; "from_real" reads
// float32/float64); lanes 0: the scalar functions element by element, else a
// Vec<Complex<T>, lanes> loop with a masked tail (4, 8; 16 for complex64); stride (vector loops only): the
// operands are read as a[i * stride] (load_strided). Returns 0, or -1 for an unknown op.
#include <cstdint>
#include <string_view>

#include "cppcodegen/complex.h"

using namespace ccg;
using sv = std::string_view;

namespace {

// one element or one vector of lanes from a[i * s]
template <class T, int N> struct Io {
  using C = Complex<T>;
  static CVec<T, N> get(const C* a, int64_t i, int64_t s, int64_t m) {
    if (s == 1) return m >= N ? CVec<T, N>::load(a + i) : CVec<T, N>::load_partial(a + i, m);
    return m >= N ? CVec<T, N>::load_strided(a + i * s, s)
                  : CVec<T, N>::load_strided_partial(a + i * s, s, m);
  }
  template <class R, class P> static void put(const R& r, P* o, int64_t m) {
    if (m >= N) r.store(o);
    else r.store_partial(o, m);
  }
};

template <class T, int N, class Out, class F>
void map1(const Complex<T>* a, Out* o, int64_t n, int64_t s, F f) {
  if constexpr (N == 0) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(ld(a + i));
  } else {
    for (int64_t i = 0; i < n; i += N)
      Io<T, N>::put(f(Io<T, N>::get(a, i, s, n - i)), o + i, n - i);
  }
}
template <class T, int N, class Out, class F>
void map2(const Complex<T>* a, const Complex<T>* b, Out* o, int64_t n, int64_t s, F f) {
  if constexpr (N == 0) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(ld(a + i), ld(b + i));
  } else {
    for (int64_t i = 0; i < n; i += N)
      Io<T, N>::put(f(Io<T, N>::get(a, i, s, n - i), Io<T, N>::get(b, i, s, n - i)), o + i, n - i);
  }
}

#define C1(name, expr)                                                               \
  if (op == name) { map1<T, N>(a, (Complex<T>*)out, n, s, [](auto x) { return expr; }); return 0; }
#define R1(name, expr)                                                               \
  if (op == name) { map1<T, N>(a, (T*)out, n, s, [](auto x) { return expr; }); return 0; }
#define B1(name, expr)                                                               \
  if (op == name) { map1<T, N>(a, (bool*)out, n, s, [](auto x) { return expr; }); return 0; }
#define C2(name, expr)                                                               \
  if (op == name) { map2<T, N>(a, b, (Complex<T>*)out, n, s, [](auto x, auto y) { return expr; }); return 0; }
#define B2(name, expr)                                                               \
  if (op == name) { map2<T, N>(a, b, (bool*)out, n, s, [](auto x, auto y) { return expr; }); return 0; }

// logical ops as the renderers would write them: bool(x) in scalar code, to_mask(x) in vectors
template <class X> auto truth(const X& x) {
  if constexpr (is_complex_v<X>) return static_cast<bool>(x);
  else return to_mask(x);
}

inline bool lnot(bool b) { return !b; }
template <int N> Mask<N> lnot(Mask<N> m) { return ~m; }

template <class T, int N>
int run(sv op, const void* av, const void* bv, void* out, int64_t n, int64_t s) {
  using C = Complex<T>;
  using O = std::conditional_t<std::is_same_v<T, float>, c128, c64>;   // the other precision
  using OT = typename O::value_type;
  const C* a = static_cast<const C*>(av);
  const C* b = static_cast<const C*>(bv);
  // arithmetic
  C2("add", x + y) C2("subtract", x - y) C2("multiply", x * y) C2("divide", x / y)
  C2("power", power(x, y)) C2("mul_naive", mul_naive(x, y))
  C1("negative", -x) C1("positive", +x) C1("conjugate", conj(x)) C1("square", square(x))
  C1("reciprocal", reciprocal(x)) C1("sign", sign(x)) C1("rint", rint(x))
  R1("real", real(x)) R1("imag", imag(x)) R1("absolute", abs(x)) R1("angle", arg(x))
  // transcendental
  C1("exp", exp(x)) C1("exp2", exp2(x)) C1("expm1", expm1(x))
  C1("log", log(x)) C1("log2", log2(x)) C1("log10", log10(x)) C1("log1p", log1p(x))
  C1("sqrt", sqrt(x)) C1("sin", sin(x)) C1("cos", cos(x)) C1("tan", tan(x))
  C1("sinh", sinh(x)) C1("cosh", cosh(x)) C1("tanh", tanh(x))
  C1("arcsin", asin(x)) C1("arccos", acos(x)) C1("arctan", atan(x))
  C1("arcsinh", asinh(x)) C1("arccosh", acosh(x)) C1("arctanh", atanh(x))
  // comparisons and classification
  B2("equal", x == y) B2("not_equal", x != y) B2("less", x < y) B2("less_equal", x <= y)
  B2("greater", x > y) B2("greater_equal", x >= y)
  C2("maximum", maximum(x, y)) C2("minimum", minimum(x, y))
  C2("fmax", fmax(x, y)) C2("fmin", fmin(x, y))
  B1("isnan", isnan(x)) B1("isinf", isinf(x)) B1("isfinite", isfinite(x))
  B2("logical_and", truth(x) & truth(y)) B2("logical_or", truth(x) | truth(y))
  B2("logical_xor", truth(x) ^ truth(y)) B1("logical_not", lnot(truth(x)))
  // casts, spelled as the renderers spell them
  if constexpr (N == 0) {
    B1("astype_bool", cast<bool>(x))
    R1("astype_real", cast<T>(x))
    if (op == "astype_other") { map1<T, N>(a, (O*)out, n, s, [](auto x) { return cast<O>(x); }); return 0; }
    if (op == "astype_int64") { map1<T, N>(a, (int64_t*)out, n, s, [](auto x) { return cast<int64_t>(x); }); return 0; }
    if (op == "astype_int32") { map1<T, N>(a, (int32_t*)out, n, s, [](auto x) { return cast<int32_t>(x); }); return 0; }
    if (op == "from_real") {
      const T* r = static_cast<const T*>(av);
      for (int64_t i = 0; i < n; ++i) static_cast<C*>(out)[i] = cast<C>(r[i]);
      return 0;
    }
    if (op == "from_other_real") {   // float64 -> complex64 / float32 -> complex128
      const OT* r = static_cast<const OT*>(av);
      for (int64_t i = 0; i < n; ++i) static_cast<C*>(out)[i] = cast<C>(r[i]);
      return 0;
    }
  } else {
    B1("astype_bool", to_mask(x))
    R1("astype_real", convert<T>(x))
    if (op == "astype_other") { map1<T, N>(a, (O*)out, n, s, [](auto x) { return convert<O>(x); }); return 0; }
    if (op == "astype_int64" || op == "astype_int32") return -1;   // no int Vec of these lanes
    if (op == "from_real" || op == "from_other_real") {
      const bool other = op == "from_other_real";
      for (int64_t i = 0; i < n; i += N) {
        const int64_t m = n - i;
        CVec<T, N> z;
        if (other) {
          const OT* r = static_cast<const OT*>(av) + i;
          auto v = m >= N ? Vec<OT, N>::load(r) : Vec<OT, N>::load_partial(r, m);
          z = convert<C>(v);
        } else {
          const T* r = static_cast<const T*>(av) + i;
          auto v = m >= N ? Vec<T, N>::load(r) : Vec<T, N>::load_partial(r, m);
          z = convert<C>(v);
        }
        Io<T, N>::put(z, static_cast<C*>(out) + i, m);
      }
      return 0;
    }
    if (op == "from_mask") {   // bool -> complex
      const bool* m8 = static_cast<const bool*>(av);
      for (int64_t i = 0; i < n; i += N) {
        const int64_t m = n - i;
        auto k = m >= N ? Mask<N>::load(m8 + i) : Mask<N>::load_partial(m8 + i, m);
        Io<T, N>::put(from_mask<C>(k), static_cast<C*>(out) + i, m);
      }
      return 0;
    }
    if (op == "reduce_add") {   // out[j] = sum of lanes of a[j*N .. j*N+N)
      for (int64_t j = 0; j * N + N <= n; ++j) static_cast<C*>(out)[j] = reduce_add(CVec<T, N>::load(a + j * N));
      return 0;
    }
  }
  return -1;
}

template <class T> int by_lanes(sv op, int lanes, const void* a, const void* b, void* o, int64_t n, int64_t s) {
  switch (lanes) {
    case 0: return run<T, 0>(op, a, b, o, n, s);
    case 4: return run<T, 4>(op, a, b, o, n, s);
    case 8: return run<T, 8>(op, a, b, o, n, s);
  }
  // 16 lanes only for complex64: a loop's lane count is the register width over its widest
  // element (float parts: 16 on AVX-512), so Vec<Complex<double>, 16> never occurs
  if constexpr (std::is_same_v<T, float>)
    if (lanes == 16) return run<T, 16>(op, a, b, o, n, s);
  return -1;
}

}  // namespace

extern "C" int ccg_cx(const char* op, const char* dtype, int lanes, const void* a,
                      const void* b, void* out, int64_t n, int64_t stride) {
  const sv dt(dtype);
  if (dt == "complex64") return by_lanes<float>(op, lanes, a, b, out, n, stride);
  if (dt == "complex128") return by_lanes<double>(op, lanes, a, b, out, n, stride);
  return -1;
}

extern "C" int ccg_cx_vec_bytes() { return CCG_VEC_BYTES; }
