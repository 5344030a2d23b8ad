/* The exact integer determinant by fraction-free (Bareiss) elimination,
 * shared by the CPU engine (backend/cpu/lapack.c) and the CUDA engine
 * (backend/cuda/linalg.cu, one thread per matrix) so that both give the
 * same value and fail on the same matrices. Plain C17 and CUDA C++ alike. */
#ifndef TC_BACKEND_BAREISS_H
#define TC_BACKEND_BAREISS_H
#include <stdint.h>
#include "../src/half.h"

__extension__ typedef __int128 tc_i128;

/* det of the n x n row-major matrix m (overwritten); -1 when a minor
 * leaves i64. p * m[i][j] - q * m[k][j] cannot overflow 128 bits: each
 * product is at most 2^126 in magnitude, and not both can be. */
TC_HD int tc_bareiss(int64_t *m, int64_t n, int64_t *det) {
  int64_t prev = 1;
  int sign = 1;
  for (int64_t k = 0; k < n; k++) {
    if (m[k * n + k] == 0) {
      int64_t r = k + 1;
      while (r < n && m[r * n + k] == 0) r++;
      if (r == n) { *det = 0; return 0; }
      for (int64_t j = 0; j < n; j++) { int64_t t = m[k * n + j]; m[k * n + j] = m[r * n + j]; m[r * n + j] = t; }
      sign = -sign;
    }
    tc_i128 p = m[k * n + k];
    for (int64_t i = k + 1; i < n; i++) {
      tc_i128 q = m[i * n + k];
      for (int64_t j = k + 1; j < n; j++) {
        tc_i128 v = p * m[i * n + j] - q * m[k * n + j];
        v /= prev;   /* exact: v is a minor of the matrix times prev */
        if (v > INT64_MAX || v < INT64_MIN) return -1;
        m[i * n + j] = (int64_t)v;
      }
    }
    prev = m[k * n + k];
  }
  int64_t d = n ? m[n * n - 1] : 1;
  if (sign < 0 && d == INT64_MIN) return -1;
  *det = sign < 0 ? -d : d;
  return 0;
}
#endif
