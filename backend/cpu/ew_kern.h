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
#define K_BIN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kb_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]), b = LD(pb[i]); o[i] = ST(EXPR); } } \
    else if (sa == 1 && sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = ST(EXPR); } } \
    else if (sa == 0 && sb == 1) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i]); o[i] = ST(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]), b = LD(pb[i * sb]); o[i] = ST(EXPR); } } \
  }
#define K_CMP(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kc_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    typedef C T; \
    uint8_t *restrict o = PTR(uint8_t, o_); const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]), b = LD(pb[i]); o[i] = (uint8_t)(EXPR); } } \
    else if (sa == 1 && sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = (uint8_t)(EXPR); } } \
    else if (sa == 0 && sb == 1) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i]); o[i] = (uint8_t)(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]), b = LD(pb[i * sb]); o[i] = (uint8_t)(EXPR); } } \
  }
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
#define K_CAST(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, sn, SS, SC, SCLS, SB, SLD, SST) \
  static void kx_##SE##_##DE(int64_t len, char *o_, const char *a_, int64_t sa) { \
    DS *restrict o = PTR(DS, o_); const SS *restrict pa = CPTR(SS, a_); \
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
