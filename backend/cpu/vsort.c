/* Sorting short arrays of unsigned keys, 64 or 32 bits, with AVX-512
 * (order.c's rows of at most CPU_VSORT_MAX elements, whose keys, or keys
 * and positions, it packs into these). A quicksort: each range is split
 * around the median of three keys into the other array, a vector (8 or 16
 * keys) at a time: the keys less than the pivot compressed and stored up
 * from the range's start, the others behind the keys already read, then
 * moved after the lesser. A range of at most four vectors' keys is sorted
 * in four registers by bitonic networks and stored where the result
 * belongs. Keys all equal to a pivot that is the least of its range are
 * done at once. Sorting keys has one result, so the order of the work does
 * not matter; equal keys are equal bits. A range still unsplit after
 * 2 log2(n) + 8 rounds (inputs that defeat the pivot) is sorted with qsort.
 *
 * Below the AVX-512 level (cpu_matmul_isa) the functions decline and
 * order.c sorts by radix. */
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
bool cpu_vsort_applies(int64_t n) { return n <= CPU_VSORT_MAX && cpu_matmul_isa(-1) >= CPU_ISA_AVX512; }
#define TGT __attribute__((target("avx512f,popcnt")))

/* The lanes whose index has bit b set, for b = 1, 2, 4, 8 (none for b of
 * 16 or more: the networks' "ascending everywhere"). */
static inline unsigned lanes_with(int b) {
  return b == 1 ? 0xAAAAu : b == 2 ? 0xCCCCu : b == 4 ? 0xF0F0u : b == 8 ? 0xFF00u : 0u;
}

/* Per key width (S: u64 or u32, T, L lanes, M their mask; I and U the
 * intrinsics' signed and unsigned infixes, SET the iota's constructor):
 *   cx_S    one layer: each lane against lane index ^ j, the lanes of hi keeping the greater
 *   sortv_S a vector sorted (bitonic: blocks of k = 2, 4, ... L, lanes j = k / 2 ... 1 apart, a block
 *           descending where index & k)
 *   clean_S a bitonic vector sorted (lanes L / 2 ... 1 apart)
 *   base_S  at most 4 L keys sorted: each vector, then pairs merged (the second reversed against the
 *           first: the lesser half and the greater, each bitonic, cleaned), then the two runs of 2 L
 *   split_S a range split around a pivot (C: the type _mm512_set1 takes)
 *   vs_S    the quicksort */
#define VSORT_DEFINE(S, T, L, M, I, U, C, SET)                                                                  \
  TGT static inline __m512i cx_##S(__m512i v, __m512i iota, int j, unsigned hi) {                           \
    __m512i p = _mm512_permutexvar_##I(_mm512_xor_si512(iota, _mm512_set1_##I(j)), v);                     \
    return _mm512_mask_blend_##I((M)hi, _mm512_min_##U(v, p), _mm512_max_##U(v, p));                        \
  }                                                                                                          \
  TGT static inline __m512i sortv_##S(__m512i v, __m512i iota) {                                             \
    _Pragma("GCC unroll 8") for (int k = 2; k <= L; k *= 2)                                                  \
      _Pragma("GCC unroll 8") for (int j = k / 2; j >= 1; j /= 2)                                            \
        v = cx_##S(v, iota, j, lanes_with(j) ^ lanes_with(k));                                               \
    return v;                                                                                                \
  }                                                                                                          \
  TGT static inline __m512i clean_##S(__m512i v, __m512i iota) {                                             \
    _Pragma("GCC unroll 8") for (int j = L / 2; j >= 1; j /= 2) v = cx_##S(v, iota, j, lanes_with(j));      \
    return v;                                                                                                \
  }                                                                                                          \
  TGT static inline __m512i rev_##S(__m512i v, __m512i iota) {                                               \
    return _mm512_permutexvar_##I(_mm512_xor_si512(iota, _mm512_set1_##I(L - 1)), v);                      \
  }                                                                                                          \
  TGT static inline void merge_##S(__m512i *a, __m512i *b, __m512i iota) {                                   \
    __m512i r = rev_##S(*b, iota), lo = _mm512_min_##U(*a, r), hi = _mm512_max_##U(*a, r);                 \
    *a = clean_##S(lo, iota);                                                                                \
    *b = clean_##S(hi, iota);                                                                                \
  }                                                                                                          \
  TGT static void base_##S(const T *x, T *out, int64_t n) {                                                  \
    const __m512i top = _mm512_set1_epi32(-1), iota = SET;                                                   \
    __m512i v[4];                                                                                            \
    int nv = (int)((n + L - 1) / L);                                                                         \
    for (int j = 0; j < nv; j++) {                                                                           \
      int64_t c = n - L * j;                                                                                 \
      M m = (M)(c >= L ? ~0u : (1u << c) - 1);                                                               \
      v[j] = sortv_##S(_mm512_mask_loadu_##I(top, m, x + L * j), iota);                                      \
    }                                                                                                        \
    if (nv == 2) merge_##S(&v[0], &v[1], iota);                                                              \
    if (nv > 2) {                                                                                            \
      if (nv == 3) v[3] = top;                                                                               \
      merge_##S(&v[0], &v[1], iota);                                                                         \
      merge_##S(&v[2], &v[3], iota);                                                                         \
      __m512i r0 = rev_##S(v[3], iota), r1 = rev_##S(v[2], iota);                                            \
      __m512i l0 = _mm512_min_##U(v[0], r0), h0 = _mm512_max_##U(v[0], r0);                                 \
      __m512i l1 = _mm512_min_##U(v[1], r1), h1 = _mm512_max_##U(v[1], r1);                                 \
      v[0] = clean_##S(_mm512_min_##U(l0, l1), iota);                                                        \
      v[1] = clean_##S(_mm512_max_##U(l0, l1), iota);                                                        \
      v[2] = clean_##S(_mm512_min_##U(h0, h1), iota);                                                        \
      v[3] = clean_##S(_mm512_max_##U(h0, h1), iota);                                                        \
    }                                                                                                        \
    for (int j = 0; j < nv; j++) {                                                                           \
      int64_t c = n - L * j;                                                                                 \
      _mm512_mask_storeu_##I(out + L * j, (M)(c >= L ? ~0u : (1u << c) - 1), v[j]);                          \
    }                                                                                                        \
  }                                                                                                          \
  /* x[0, n) split into y: the keys less than pv (or at most pv, with le) at y[0, nl), the others after    \
   * them; returns nl. Whole vectors are stored whole: the lesser keys compressed at y + nl (the lanes     \
   * past them land in the part of y not yet written, as many keys as are still to read), the others at   \
   * x + nr (behind the keys already read); the last few keys go under masks, and the greater ones then    \
   * move after the lesser. */                                                                               \
  TGT static int64_t split_##S(T *x, T *y, int64_t n, T pv, bool le) {                                       \
    const __m512i p = _mm512_set1_##I((C)pv);                                                        \
    int64_t nl = 0, nr = 0, i = 0;                                                                           \
    for (; i + L <= n; i += L) {                                                                             \
      __m512i v = _mm512_loadu_si512(x + i);                                                                 \
      M lt = le ? _mm512_cmple_##U##_mask(v, p) : _mm512_cmplt_##U##_mask(v, p);                             \
      int a = __builtin_popcount(lt);                                                                        \
      _mm512_storeu_si512(y + nl, _mm512_maskz_compress_##I(lt, v));                                         \
      _mm512_storeu_si512(x + nr, _mm512_maskz_compress_##I((M)~lt, v));                                     \
      nl += a;                                                                                               \
      nr += L - a;                                                                                           \
    }                                                                                                        \
    if (i < n) {                                                                                             \
      M all = (M)((1u << (n - i)) - 1);                                                                      \
      __m512i v = _mm512_maskz_loadu_##I(all, x + i);                                                        \
      M lt = (M)((le ? _mm512_cmple_##U##_mask(v, p) : _mm512_cmplt_##U##_mask(v, p)) & all);                \
      int a = __builtin_popcount(lt), b = (int)(n - i) - a;                                                  \
      _mm512_mask_storeu_##I(y + nl, (M)((1u << a) - 1), _mm512_maskz_compress_##I(lt, v));                  \
      _mm512_mask_storeu_##I(x + nr, (M)((1u << b) - 1), _mm512_maskz_compress_##I((M)(all & ~lt), v));      \
      nl += a;                                                                                               \
      nr += b;                                                                                               \
    }                                                                                                        \
    memcpy(y + nl, x, sizeof *x * (size_t)nr);                                                               \
    return nl;                                                                                               \
  }                                                                                                          \
  static int cmp_##S(const void *a, const void *b) {                                                         \
    T x = *(const T *)a, y = *(const T *)b;                                                                  \
    return (x > y) - (x < y);                                                                                \
  }                                                                                                          \
  static inline T med3_##S(T a, T b, T c) {                                                                  \
    if (a > b) { T t = a; a = b; b = t; }                                                                    \
    return c < a ? a : c > b ? b : c;                                                                        \
  }                                                                                                          \
  /* x[0, n) sorted into out (x or y, at the same place); y is scratch */                                   \
  TGT static void vs_##S(T *x, T *y, T *out, int64_t n, int depth) {                                         \
    while (n > 4 * L) {                                                                                      \
      if (depth-- <= 0) {                                                                                    \
        if (out != x) memcpy(out, x, sizeof *x * (size_t)n);                                                 \
        qsort(out, (size_t)n, sizeof *out, cmp_##S);                                                         \
        return;                                                                                              \
      }                                                                                                      \
      T pv = med3_##S(x[n / 4], x[n / 2], x[n - 1 - n / 4]);                                                 \
      int64_t nl = split_##S(x, y, n, pv, false);                                                            \
      if (nl == 0) {   /* pv is the least: the keys equal to it are done where they land */                 \
        nl = split_##S(x, y, n, pv, true);                                                                   \
        if (out != y) memcpy(out, y, sizeof *y * (size_t)nl);                                                \
      } else vs_##S(y, x, out, nl, depth);                                                                   \
      T *t = x;                                                                                              \
      x = y + nl;                                                                                            \
      y = t + nl;                                                                                            \
      out += nl;                                                                                             \
      n -= nl;                                                                                               \
    }                                                                                                        \
    base_##S(x, out, n);                                                                                     \
  }                                                                                                          \
  bool cpu_vsort_##S(T *a, T *t, int64_t n) {                                                                \
    if (!cpu_vsort_applies(n)) return false;                                                                 \
    vs_##S(a, t, a, n, cpu_sort_depth(n));                                                                   \
    return true;                                                                                             \
  }
VSORT_DEFINE(u64, uint64_t, 8, __mmask8, epi64, epu64, long long, _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0))
VSORT_DEFINE(u32, uint32_t, 16, __mmask16, epi32, epu32, int,
             _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
#else
bool cpu_vsort_applies(int64_t n) {
  (void)n;
  return false;
}
bool cpu_vsort_u64(uint64_t *a, uint64_t *t, int64_t n) {
  (void)a, (void)t, (void)n;
  return false;
}
bool cpu_vsort_u32(uint32_t *a, uint32_t *t, int64_t n) {
  (void)a, (void)t, (void)n;
  return false;
}
#endif
