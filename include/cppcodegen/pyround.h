// Python's round(x, ndigits) of a float (frontend/ndarray.py ``_round`` of a Python float):
// the exact binary value of x rounded half-even at ndigits decimal digits, then the double
// nearest that decimal (CPython's double_round works on dtoa's digits). NumPy's round
// multiplies, rints and divides, so np.round(2.675, 2) is 2.68 and round(2.675, 2) is 2.67.
//
// The usual case is exact in double arithmetic: with f = 10^|ndigits| (exact up to 10^22),
// p = x * f and its rounding error e = fma(x, f, -p) hold x * f exactly; while |p| < 2^52,
// p lies within ulp(p)/2 of the exact product, so rint(p) is the answer unless p is itself
// a half-way value, where e's sign says on which side the exact product lies. r / f (or
// r * f) of the exact integer r is then the correctly rounded quotient: the double nearest
// the decimal, as strtod gives it. Larger values go through the C library's exact
// decimal conversion.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ccg {
namespace detail {

// half-even rounding of the exact value p + e, e being p's rounding error (|p| < 2^52)
inline double rint_exact(double p, double e) {
  double r = std::nearbyint(p);
  const double d = p - r;
  if (d == 0.5 && e > 0) r += 1;
  else if (d == -0.5 && e < 0) r -= 1;
  return r;
}

// |x| >= 2^52 (an integer) rounded half-even to a multiple of 10^k, k >= 1, exactly: on
// its decimal digits
inline double round_integer_digits(double x, int64_t k) {
  char buf[400];               // (|x| < 2^1024: at most 309 digits)
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(x));
  const int64_t len = int64_t(std::strlen(buf));
  if (k > len) return std::copysign(0.0, x);
  const int64_t keep = len - k;              // digits kept (the last one may go up)
  bool up = false;
  if (buf[keep] > '5') {
    up = true;
  } else if (buf[keep] == '5') {
    bool rest = false;
    for (int64_t i = keep + 1; i < len; ++i) rest |= buf[i] != '0';
    up = rest || (keep > 0 && (buf[keep - 1] - '0') % 2 == 1);
  }
  std::memset(buf + keep, '0', size_t(k));
  char* digits = buf;
  if (up) {                     // add one at the kept digits' end, carrying
    int64_t i = keep - 1;
    for (; i >= 0 && buf[i] == '9'; --i) buf[i] = '0';
    if (i >= 0) {
      ++buf[i];
    } else {                    // all nines (or none kept): a new leading 1
      std::memmove(buf + 1, buf, size_t(len) + 1);
      buf[0] = '1';
    }
  }
  const double r = std::strtod(digits, nullptr);
  return std::copysign(r, x);
}

}  // namespace detail

inline double python_round(double x, int64_t n) {
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (!std::isfinite(x) || x == 0.0 || n > 323) return x;   // (CPython: ndigits past any
  if (n < -308) return 0.0 * x;                               // digit of a double)
  if (n >= 0) {
    if (n <= 22) {
      const double f = pow10[n], p = x * f;
      if (std::fabs(p) < 0x1p52)
        return std::copysign(detail::rint_exact(p, std::fma(x, f, -p)) / f, x);
    }
    char buf[700];              // 309 integer digits, the point, 323 decimals
    std::snprintf(buf, sizeof buf, "%.*f", int(n), x);
    return std::strtod(buf, nullptr);
  }
  const int64_t k = -n;
  if (std::fabs(x) >= 0x1p52) return detail::round_integer_digits(x, k);
  if (k > 22) return std::copysign(0.0, x);        // |x| < 2^52 < 10^22 / 2
  const double f = pow10[k], q = x / f;             // |q| < 2^52: x - q * f is exact
  return std::copysign(detail::rint_exact(q, std::fma(-q, f, x)) * f, x);
}

}  // namespace ccg
