// Segment reductions (np.<ufunc>.reduceat) as NumPy computes them.
//
// np.add.reduceat(a, idx) gives, per segment [lo, hi), a[lo] + S where S is NumPy's pairwise
// sum of a[lo+1:hi] (its reduce loop: fewer than 8 values summed in order from -0.0; up to
// 128 with 8 running sums combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) and the rest added
// in order; more split in two at a multiple of 8 below the half). pairwise_sum reproduces it
// bit for bit. segment_index checks an index as reduceat does (0 <= i < n, no wrapping) and
// reports the first bad one in the program's error buffer (code: which ufunc, for the message).
#pragma once
#include <cstdint>

namespace ccg {

template <class T> inline T pairwise_sum(const T* a, int64_t n) {
  if (n < 8) {
    T res = T(-0.0);
    for (int64_t i = 0; i < n; ++i) res = res + a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] = r[j] + a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res = res + a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

// err: int64[4] (loopir.STATUS): flag, index, size, -1 - code (reduceat's, not an axis)
inline bool segment_index_ok(int64_t i, int64_t n, int64_t* err, int64_t code) {
  if (__builtin_expect(static_cast<uint64_t>(i) < static_cast<uint64_t>(n), 1)) return true;
  if (err[0] == 0) {
    err[0] = 1;
    err[1] = i;
    err[2] = n;
    err[3] = -1 - code;
  }
  return false;
}

}  // namespace ccg
