/* A block transposed into a buffer (cpu.c's tiles over a transposed view):
 * dst[j * rows + i] = src[i * ss + j] for i < rows, j < cols, elements of
 * es bytes (1, 2, 4 or 8), ss (elements) apart from one source row to the next. With AVX2,
 * 8 x 8 blocks of 4-byte elements and 4 x 4 of 8-byte ones go through
 * registers (unpacks, shuffles and lane permutes: bits moved, never
 * computed on); the edges and other sizes one element at a time. */
#include <string.h>
#include "cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TGT __attribute__((target("avx2")))

TGT static void blocks4(const float *src, int64_t ss, int64_t rows, int64_t cols, float *dst) {
  for (int64_t i = 0; i + 8 <= rows; i += 8)
    for (int64_t j = 0; j + 8 <= cols; j += 8) {
      __m256 r[8], t[8], u[8];
      for (int q = 0; q < 8; q++) r[q] = _mm256_loadu_ps(src + (i + q) * ss + j);
      for (int q = 0; q < 8; q += 2) {
        t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
        t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
      }
      for (int q = 0; q < 8; q += 4) {
        u[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
        u[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
        u[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
        u[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
      }
      for (int q = 0; q < 4; q++) {
        _mm256_storeu_ps(dst + (j + q) * rows + i, _mm256_permute2f128_ps(u[q], u[q + 4], 0x20));
        _mm256_storeu_ps(dst + (j + q + 4) * rows + i, _mm256_permute2f128_ps(u[q], u[q + 4], 0x31));
      }
    }
}

TGT static void blocks8(const double *src, int64_t ss, int64_t rows, int64_t cols, double *dst) {
  for (int64_t i = 0; i + 4 <= rows; i += 4)
    for (int64_t j = 0; j + 4 <= cols; j += 4) {
      __m256d r0 = _mm256_loadu_pd(src + i * ss + j), r1 = _mm256_loadu_pd(src + (i + 1) * ss + j);
      __m256d r2 = _mm256_loadu_pd(src + (i + 2) * ss + j), r3 = _mm256_loadu_pd(src + (i + 3) * ss + j);
      __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      _mm256_storeu_pd(dst + j * rows + i, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(dst + (j + 1) * rows + i, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(dst + (j + 2) * rows + i, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(dst + (j + 3) * rows + i, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
}
#define TR_X86 1
#else
#define TR_X86 0
#endif

/* elements [i0, rows) x [0, cols) and [0, i0) x [j0, cols), one at a time */
#define TR_EDGES(T)                                                                                 \
  static void edges_##T(const T *src, int64_t ss, int64_t rows, int64_t cols, T *dst, int64_t i0, int64_t j0) { \
    for (int64_t i = 0; j0 < cols && i < i0; i++)                                                   \
      for (int64_t j = j0; j < cols; j++) dst[j * rows + i] = src[i * ss + j];                      \
    for (int64_t i = i0; i < rows; i++)                                                             \
      for (int64_t j = 0; j < cols; j++) dst[j * rows + i] = src[i * ss + j];                       \
  }
TR_EDGES(uint8_t)
TR_EDGES(uint16_t)
TR_EDGES(uint32_t)
TR_EDGES(uint64_t)

static void edges(size_t es, const char *src, int64_t ss, int64_t rows, int64_t cols, char *dst, int64_t i0, int64_t j0) {
  const void *s = src;
  void *d = dst;
  switch (es) {
  case 1: edges_uint8_t(s, ss, rows, cols, d, i0, j0); break;
  case 2: edges_uint16_t(s, ss, rows, cols, d, i0, j0); break;
  case 4: edges_uint32_t(s, ss, rows, cols, d, i0, j0); break;
  default: edges_uint64_t(s, ss, rows, cols, d, i0, j0); break;
  }
}

void cpu_transpose(size_t es, const char *src, int64_t ss, int64_t rows, int64_t cols, char *dst) {
  int64_t i0 = 0, j0 = 0;
#if TR_X86
  if (cpu_matmul_isa(-1) >= CPU_ISA_AVX2 && (es == 4 || es == 8)) {
    int b = es == 4 ? 8 : 4;
    i0 = rows / b * b;
    j0 = cols / b * b;
    if (es == 4) blocks4((const float *)(const void *)src, ss, rows, cols, (float *)(void *)dst);
    else blocks8((const double *)(const void *)src, ss, rows, cols, (double *)(void *)dst);
  }
#endif
  edges(es, src, ss, rows, cols, dst, i0, j0);
}
