/* The CPU's elementwise, cast and copy kernels, stamped per (op, dtype)
 * from backend/ew.def and the dtype table. Every loop has a contiguous
 * branch and stride-0 (scalar broadcast) branches with the same body, so
 * the compiler vectorises each; there is no per-element dispatch.
 *
 * Included twice: by ew.c (the portable build) and by ew_avx2.c, compiled
 * with -mavx2, where loops that the portable build cannot vectorise
 * (comparisons of 64-bit operands into bools, rounding, selects) are. Both
 * are IEEE arithmetic in the same order without contraction (C17's
 * default: no FMA is formed), so the two give the same bits, which
 * tests/unit/test_elementwise.c checks. EW_ISA names this copy's table. */
#include "ew_kern_types.h"
#include "../../src/kexpr.h"

#define PTR(S, p) ((S *)(void *)(p))
#define CPTR(S, p) ((const S *)(const void *)(p))

/* ---- stamping ---- */
/* A binary kernel named PFX_OP_E: o[i] = STORE(EXPR) of a and b, with a
 * loop for each layout of the two operands (contiguous, one broadcast,
 * strided) so that the compiler vectorises each. K_BIN stores in the
 * dtype, K_CMP a bool byte. */
#define K_BIN_LOOPS(PFX, OT, STORE, E, S, C, LD, OP, EXPR) \
  static void PFX##_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
    OT *restrict o = PTR(OT, o_); const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]), b = LD(pb[i]); o[i] = STORE(EXPR); } } \
    else if (sa == 1 && sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = STORE(EXPR); } } \
    else if (sa == 0 && sb == 1) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i]); o[i] = STORE(EXPR); } } \
    else if (sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]); o[i] = STORE(EXPR); } } \
    else if (sa == 0) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i * sb]); o[i] = STORE(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]), b = LD(pb[i * sb]); o[i] = STORE(EXPR); } } \
  }
#define K_BOOL_ST(x) ((uint8_t)(x))
#define K_BIN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) K_BIN_LOOPS(kb, S, ST, E, S, C, LD, OP, EXPR)
#define K_CMP(E, n, S, C, CLS, B, LD, ST, OP, EXPR) K_BIN_LOOPS(kc, uint8_t, K_BOOL_ST, E, S, C, LD, OP, EXPR)
#define K_UN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void ku_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = ST(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]); o[i] = ST(EXPR); } } \
  }
#define K_PRED(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kp_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    typedef C T; \
    uint8_t *restrict o = PTR(uint8_t, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); (void)a; o[i] = (uint8_t)(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]); (void)a; o[i] = (uint8_t)(EXPR); } } \
  }
#define K_SEL(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void ks_##OP##_##E(int64_t len, char *o_, const char *c_, int64_t sc, const char *a_, int64_t sa, \
                            const char *b_, int64_t sb) { \
    S *restrict o = PTR(S, o_); const uint8_t *restrict pc = CPTR(uint8_t, c_); \
    const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    for (int64_t i = 0; i < len; i++) { uint8_t c = pc[i * sc]; S a = pa[i * sa], b = pb[i * sb]; o[i] = EXPR; } \
  }

#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(K_BIN, OP, EXPR)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(K_CMP, OP, EXPR)
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(K_UN, OP, EXPR)
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(K_PRED, OP, EXPR)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(K_SEL, OP, EXPR)
#include "../ew.def"
#undef EW_BIN
#undef EW_CMP
#undef EW_UN
#undef EW_PRED
#undef EW_SEL

/* ---- the kernel table: a NULL entry is an unsupported (op, dtype) ---- */

#define ENTRY(E, n, S, C, CLS, B, LD, ST, PFX, OP) [TC_OP_##OP][TC_DT_##E] = (ew_any_fn)PFX##_##OP##_##E,
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kb, OP)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kc, OP)
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, ku, OP)
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kp, OP)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, ks, OP)
static const ew_any_fn ew_table[TC_OP_COUNT][TC_DT_COUNT] = {
#include "../ew.def"
};

/* ---- casts: all 81 (from, to) pairs ---- */
/* Float to a signed integer of 32 bits or fewer (or an unsigned one of 16
 * or fewer), TC_CVT_FLT_INT's (TC_CVT_FLT_UINT's) values (NaN 0, clamped to
 * the range, truncated) a vector at a time: NaN lanes
 * masked to 0, maxpd/minpd, cvttpd2dq. GCC vectorised the scalar form into
 * converts and blends, 4x slower. */
#if defined(__x86_64__)
#include <immintrin.h>
#endif
static inline void ew_sat32(int64_t n, const double *d, int32_t *o, double lo, double hi) {
  int64_t i = 0;
#if defined(__x86_64__) && defined(__AVX2__)
  const __m256d vl = _mm256_set1_pd(lo), vh = _mm256_set1_pd(hi);
  for (; i + 4 <= n; i += 4) {
    __m256d v = _mm256_loadu_pd(d + i);
    v = _mm256_and_pd(v, _mm256_cmp_pd(v, v, _CMP_ORD_Q));
    v = _mm256_min_pd(_mm256_max_pd(v, vl), vh);
    _mm_storeu_si128((__m128i *)(void *)(o + i), _mm256_cvttpd_epi32(v));
  }
#elif defined(__x86_64__)
  const __m128d vl = _mm_set1_pd(lo), vh = _mm_set1_pd(hi);
  for (; i + 2 <= n; i += 2) {
    __m128d v = _mm_loadu_pd(d + i);
    v = _mm_and_pd(v, _mm_cmpord_pd(v, v));
    v = _mm_min_pd(_mm_max_pd(v, vl), vh);
    _mm_storel_epi64((__m128i *)(void *)(o + i), _mm_cvttpd_epi32(v));
  }
#endif
  for (; i < n; i++) {   /* the same steps, one element */
    double v = d[i] != d[i] ? 0 : d[i];
    v = v < lo ? lo : v;
    o[i] = (int32_t)(v > hi ? hi : v);
  }
}
#define EW_SAT_BLOCK 256
#define EW_ID(x) (x)
/* The casts ew_sat32 runs: float to int of 32 bits or fewer, and to uint
 * of 16 or fewer (the classes' pairs marked `~, 1`), with their ranges. */
#define EW_SAT_PAIR_FLT_INT ~, 1
#define EW_SAT_PAIR_FLT_UINT ~, 1
#define EW_SAT_BITS_INT 32
#define EW_SAT_BITS_UINT 16
#define EW_SAT_LO_INT(DB) INT##DB##_MIN
#define EW_SAT_HI_INT(DB) INT##DB##_MAX
#define EW_SAT_LO_UINT(DB) 0
#define EW_SAT_HI_UINT(DB) UINT##DB##_MAX
#define EW_SAT_IF(PAIR) TC_IF_PROBE(EW_SAT_PAIR_##PAIR)
#define EW_SAT32(PAIR, DCLS, DB) (EW_SAT_IF(PAIR)((DB) <= EW_SAT_BITS_##DCLS, 0))
#define EW_SAT_LO(PAIR, DCLS, DB) EW_SAT_IF(PAIR)(EW_SAT_LO_##DCLS(DB), 0)
#define EW_SAT_HI(PAIR, DCLS, DB) EW_SAT_IF(PAIR)(EW_SAT_HI_##DCLS(DB), 0)
#define K_CAST(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, sn, SS, SC, SCLS, SB, SLD, SST) \
  static void kx_##SE##_##DE(int64_t len, char *o_, const char *a_, int64_t sa) { \
    DS *restrict o = PTR(DS, o_); const SS *restrict pa = CPTR(SS, a_); \
    if (EW_SAT32(SCLS##_##DCLS, DCLS, DB) && sa == 1) { \
      double d[EW_SAT_BLOCK]; \
      int32_t w[EW_SAT_BLOCK]; \
      for (int64_t i0 = 0; i0 < len; i0 += EW_SAT_BLOCK) { \
        int64_t m = len - i0 < EW_SAT_BLOCK ? len - i0 : EW_SAT_BLOCK; \
        /* f64 in place, and i32 straight out; other widths through the buffers */ \
        const double *src = sizeof(SS) == sizeof(double) ? CPTR(double, pa + i0) : d; \
        int32_t *dst = sizeof(DS) == sizeof(int32_t) ? PTR(int32_t, o + i0) : w; \
        if (src == d) for (int64_t i = 0; i < m; i++) d[i] = (double)SLD(pa[i0 + i]); \
        ew_sat32(m, src, dst, (double)EW_SAT_LO(SCLS##_##DCLS, DCLS, DB), (double)EW_SAT_HI(SCLS##_##DCLS, DCLS, DB)); \
        if (dst == w) for (int64_t i = 0; i < m; i++) o[i0 + i] = TC_CVT_INT_##DCLS(w[i], EW_ID, DE, DS, DB); \
      } \
      return; \
    } \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) o[i] = TC_CVT_##SCLS##_##DCLS(pa[i], SLD, DE, DS, DB); } \
    else { for (int64_t i = 0; i < len; i++) o[i] = TC_CVT_##SCLS##_##DCLS(pa[i * sa], SLD, DE, DS, DB); } \
  }
TC_DTYPE_PAIRS(K_CAST)

#define K_CAST_ENTRY(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, ...) [TC_DT_##SE][TC_DT_##DE] = kx_##SE##_##DE,
static const ew_un_fn cast_table[TC_DT_COUNT][TC_DT_COUNT] = {
  TC_DTYPE_PAIRS(K_CAST_ENTRY)
};

/* Same-dtype copies move the stored bits (NaN payloads, signalling NaNs
 * and all) instead of converting through a wider type. */
#define K_COPY(E, n, S, ...) \
  static void kcopy_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) o[i] = pa[i]; } \
    else { for (int64_t i = 0; i < len; i++) o[i] = pa[i * sa]; } \
  }
TC_FOR_ALL(K_COPY, _)
#define K_COPY_ENTRY(E, ...) [TC_DT_##E] = kcopy_##E,
static const ew_un_fn copy_table[TC_DT_COUNT] = {TC_FOR_ALL(K_COPY_ENTRY, _)};

#define EW_TABLES_NAME_(isa) ew_tables_##isa
#define EW_TABLES_NAME(isa) EW_TABLES_NAME_(isa)
const ew_tables EW_TABLES_NAME(EW_ISA) = {ew_table, cast_table, copy_table};
