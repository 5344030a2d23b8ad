/* CPU reductions and the pre-check scan. A reduction sees its input with
 * the reduced dims last; each output element folds one (possibly strided)
 * run of n elements. Floats sum pairwise, integers fold with wrapping. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../../src/kexpr.h"
#include "../reduce.def"

#define CPTR(S, p) ((const S *)(const void *)(p))
#define PTR(S, p) ((S *)(void *)(p))

/* Pairwise summation: blocks of up to 128 summed with 8 accumulators,
 * halves combined recursively, so the error grows with log n. The unit
 * stride twin does the same additions in the same order. */
/* the left half of a run of n > 128 in the pairwise tree: a multiple of 8 */
static inline int64_t pw_half(int64_t n) { return n / 2 - n / 2 % 8; }
/* Progress: a node of the tree that looks at the interrupt flag (n >=
 * CPU_POLL) reports each half that does not, once summed: the whole run
 * once, in pieces of CPU_POLL / 2 to CPU_POLL. (l_ + r_ is the sum the
 * tree always made.) */
static inline void pw_progress(int64_t n, int64_t half) {
  if (n >= CPU_POLL && half < CPU_POLL) tc_progress_add(half);
}
#define K_PAIRWISE_GEN(E, S, C, LD) \
  static C pairwise1_##E(const S *x, int64_t n) { \
    if (n < 8) { if (n == 0) return 0; C r = LD(x[0]); for (int64_t i = 1; i < n; i++) r += LD(x[i]); return r; } \
    if (n <= 128) { \
      C r[8]; \
      for (int k = 0; k < 8; k++) r[k] = LD(x[k]); \
      int64_t i = 8; \
      for (; i + 8 <= n; i += 8) for (int k = 0; k < 8; k++) r[k] += LD(x[i + k]); \
      C t = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
      for (; i < n; i++) t += LD(x[i]); \
      return t; \
    } \
    if (n >= CPU_POLL && tc_interrupt_flag) return 0; \
    int64_t h = pw_half(n); \
    C l_ = pairwise1_##E(x, h); \
    pw_progress(n, h); \
    C r_ = pairwise1_##E(x + h, n - h); \
    pw_progress(n, n - h); \
    return l_ + r_; \
  } \
  static C pairwise_##E(const S *x, int64_t n, int64_t s) { \
    if (s == 1) return pairwise1_##E(x, n); \
    if (n < 8) { if (n == 0) return 0; C r = LD(x[0]); for (int64_t i = 1; i < n; i++) r += LD(x[i * s]); return r; } \
    if (n <= 128) { \
      C r[8]; \
      for (int k = 0; k < 8; k++) r[k] = LD(x[k * s]); \
      int64_t i = 8; \
      for (; i + 8 <= n; i += 8) for (int k = 0; k < 8; k++) r[k] += LD(x[(i + k) * s]); \
      C t = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
      for (; i < n; i++) t += LD(x[i * s]); \
      return t; \
    } \
    if (n >= CPU_POLL && tc_interrupt_flag) return 0; \
    int64_t h = pw_half(n); \
    C l_ = pairwise_##E(x, h, s); \
    pw_progress(n, h); \
    C r_ = pairwise_##E(x + h * s, n - h, s); \
    pw_progress(n, n - h); \
    return l_ + r_; \
  }
#define K_PAIRWISE(E, n_, S, C, CLS, B, LD, ST, ...) K_PAIRWISE_GEN(E, S, C, LD)
/* the mean of integers and bool sums them as f64 the same way, each element
 * converted as it is read (no f64 copy of the input) */
#define TC_TO_F64(x) ((double)(x))
#define K_PAIRWISE_D(E, n_, S, ...) K_PAIRWISE_GEN(d_##E, S, double, TC_TO_F64)
TC_FOR_FLT(K_PAIRWISE, _)
TC_FOR_INTB(K_PAIRWISE_D, _)
/* nansum of floats sums pairwise the same way with each NaN read as 0, as
 * NumPy's (the generic fold's compensated step, one element at a time,
 * took 157 us for 10^5 f64, NumPy 83) */
#define K_PAIRWISE_NZ(E, n_, S, C, CLS, B, LD, ST, ...) \
  static inline C nzld_##E(S v) { C c = LD(v); return c != c ? 0 : c + 0; } /* -0 as +0, as NumPy */ \
  K_PAIRWISE_GEN(nz_##E, S, C, nzld_##E) \
  static void nansum_##E(const char *x, int64_t n, int64_t s, char *o) { *PTR(S, o) = ST(pairwise_nz_##E(CPTR(S, x), n, s)); }
TC_FOR_FLT(K_PAIRWISE_NZ, _)

/* Wrapping integer sum; the unit-stride loop vectorises. */
#define K_ISUM(E, n_, S, C, CLS, B, LD, ST, ...) \
  static tc_u_##E isum_##E(const S *x, int64_t n, int64_t s) { \
    tc_u_##E acc = 0; \
    if (s == 1) { CPU_POLLED_FOR(i, 0, n) acc += (tc_u_##E)x[i]; } \
    else { CPU_POLLED_FOR(i, 0, n) acc += (tc_u_##E)x[i * s]; } \
    return acc; \
  }
TC_FOR_INT(K_ISUM, _)

/* Each kernel, stamped from backend/reduce.def: fold n elements at x with
 * stride s into *o, in index order. */
/* The run is read in blocks of RFOLD_BLK elements, each a plain loop that
 * vectorises; the early stop (STOP: no later element can change the
 * result) and Ctrl-C (every CPU_POLL elements, cpu.h) are tested between
 * blocks. */
#define RFOLD_BLK 256
#define RFOLD_TREE(E, CLS, LD, STEP, STOP) \
  for (int64_t lo = 0; lo < n && !(STOP) && !cpu_stop(lo); lo += RFOLD_BLK) { \
    int64_t hi = n - lo < RFOLD_BLK ? n : lo + RFOLD_BLK; \
    if (s == 1) { for (int64_t j = lo; j < hi; j++) { T x = LD(px[j]); acc = STEP; } } \
    else { for (int64_t j = lo; j < hi; j++) { T x = LD(px[j * s]); acc = STEP; } } \
  }
#define RFOLD_SEQ RFOLD_TREE
/* sums pairwise: floats in their compute type, integers and bool in f64 */
#define RFOLD_PAIRWISE(E, CLS, LD, STEP, STOP) acc = tc_nsum_make(PAIRWISE_##CLS(E)(px, n, s), 0);
#define PAIRWISE_FLT(E) pairwise_##E
#define PAIRWISE_INT(E) pairwise_d_##E
#define PAIRWISE_UINT(E) pairwise_d_##E
#define PAIRWISE_BOOL(E) pairwise_d_##E
#define RSTORE_KEEP(S, ST, o, v) *PTR(S, o) = ST((T)(v));
#define RSTORE_I64(S, ST, o, v) *PTR(int64_t, o) = (v);
#define RSTORE_BOOL(S, ST, o, v) *PTR(uint8_t, o) = (uint8_t)(v);
#define RSTORE_F64(S, ST, o, v) *PTR(double, o) = (v);
#define K_RED(E, n_, S, C, CLS, B, LD, ST, OP, OUT, FOLD, A_, IDENT, STEP, MERGE, FIN, STOP) \
  static void r_##OP##_##E(const char *x_, int64_t n, int64_t s, char *o) { \
    typedef C T; typedef tc_u_##E U; typedef A_ A; (void)sizeof(U); (void)sizeof(T); \
    const S *px = CPTR(S, x_); \
    A acc = IDENT; \
    RFOLD_##FOLD(E, CLS, LD, STEP, STOP) \
    { A a = acc; (void)n; RSTORE_##OUT(S, ST, o, FIN) } \
  }
#define K_RED_ROW(OP, CLS, ...) TC_FOR_##CLS(K_RED, OP, __VA_ARGS__)
TC_REDUCE_KERNELS(K_RED_ROW)

/* ---- reductions over a non-last axis, in memory order ----
 * m neighbouring outputs whose runs start one element apart (column c's
 * run at x + c, stride s) are folded together, a row of m elements at a
 * time, so the input is read in memory order rather than down each column.
 * Each column gets exactly the additions, comparisons and order of the
 * one-column kernels above (the same pairwise tree, the same 8
 * accumulators, the same first-NaN and first-occurrence rules): the same
 * bits. The sums halve the rows over strips of up to 16 KiB of columns
 * (COLW), and each block of at most 128 rows is read a whole row of the
 * strip at a time into its 8 accumulator rows (up to 128 KiB, in L2), so
 * the rows are read as long stretches the hardware prefetchers follow.
 * (Accumulators kept 2 KiB wide in L1, the strip's rows read 2 KiB at a
 * time with the rest of each row prefetched into L2: reduce_sum(X, 0) of
 * 3000 x 3000 f32 took 1.95-2.38 ms on two threads, now 1.48-1.82, and
 * 3.1-3.9 ms on one, now 2.3-2.7.)
 * The integer sums add a whole row of a strip of up to 64 KiB of columns
 * (ISUM_B) at a time into one accumulator row (in L2): reduce_sum(X, 0)
 * of 3000 x 3000 i32 on 2 threads took 1.3-2.1 ms in blocks of 128 rows
 * of 256 columns, now 0.82-1.35 (i64 3.5-3.9, now 2.8-3.4). The scans
 * (max, min, argmax, argmin) take strips of EXTW columns, a block of 128
 * rows at a time (COL_WALK). (Strips of 256 columns walked down all the
 * rows at once: half the speed, or less.) The interrupt flag is read
 * before each row or block; the caller reports `interrupted` and
 * discards the output. */
#define COLW_B 16384
#define ISUM_B 65536
#define COLW(C) ((int64_t)(COLW_B / sizeof(C)))
#define EXTW 2048
/* the levels of colpw's halving above its blocks of 128 */
static int colpw_depth(int64_t n) {
  int d = 0;
  for (; n > 128; d++) n -= pw_half(n);
  return d;
}
/* colpw: out[0..m) = the columns' sums; ws holds (depth + 8) m elements:
 * a level's right half, then the levels below it; a block's accumulators
 * (8 rows of m) at its start */
#define K_COLSUM_GEN(E, S, C, LD, OS, ST) \
  CPU_CLONES static void colpw_##E(const S *x, int64_t n, int64_t s, int64_t m, C *out, C *ws) { \
    if (tc_interrupt_flag) { for (int64_t c = 0; c < m; c++) out[c] = 0; return; } \
    if (n < 8) {   /* from the first element, as pairwise1: a sum of -0.0 stays -0.0 */ \
      for (int64_t c = 0; c < m; c++) out[c] = n ? LD(x[c]) : 0; \
      for (int64_t i = 1; i < n; i++) for (int64_t c = 0; c < m; c++) out[c] += LD(x[i * s + c]); \
      return; \
    } \
    if (n <= 128) { \
      C *r = ws; \
      for (int k = 0; k < 8; k++) for (int64_t c = 0; c < m; c++) r[k * m + c] = LD(x[k * s + c]); \
      int64_t i = 8; \
      for (; i + 8 <= n; i += 8) \
        for (int k = 0; k < 8; k++) for (int64_t c = 0; c < m; c++) r[k * m + c] += LD(x[(i + k) * s + c]); \
      for (int64_t c = 0; c < m; c++) \
        out[c] = ((r[c] + r[m + c]) + (r[2 * m + c] + r[3 * m + c])) + \
                 ((r[4 * m + c] + r[5 * m + c]) + (r[6 * m + c] + r[7 * m + c])); \
      for (; i < n; i++) for (int64_t c = 0; c < m; c++) out[c] += LD(x[i * s + c]); \
      return; \
    } \
    int64_t h = pw_half(n); \
    colpw_##E(x, h, s, m, out, ws + m); \
    pw_progress(n * m, h * m); \
    colpw_##E(x + h * s, n - h, s, m, ws, ws + m); \
    pw_progress(n * m, (n - h) * m); \
    for (int64_t c = 0; c < m; c++) out[c] += ws[c]; \
  } \
  static void colsum_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o, bool mean) { \
    /* strips of COLW columns, each with its sums and colpw's ws; without \
     * the memory for them, strips of 8 on the stack (the depth is at most 60) */ \
    int64_t d = colpw_depth(n), step = cols < COLW(C) ? cols : COLW(C); \
    int64_t need = step * (d + 9); \
    C few[8 * 69], *t = malloc((size_t)need * sizeof(C)), *buf = t ? t : few; \
    if (!t) step = 8; \
    for (int64_t c0 = 0; c0 < cols; c0 += step) { \
      int64_t m = cols - c0 < step ? cols - c0 : step; \
      colpw_##E(CPTR(S, x) + c0, n, s, m, buf, buf + m); \
      for (int64_t c = 0; c < m; c++) PTR(OS, o)[c0 + c] = ST(mean ? buf[c] / (C)n : buf[c]); \
    } \
    free(t); \
  } \
  /* rows split across threads (colsplit): one subtree's m sums, and the \
   * subtrees' sums combined as colpw combines its halves */ \
  static void colpart_##E(const char *x, int64_t n, int64_t s, int64_t m, void *out, void *ws) { \
    colpw_##E(CPTR(S, x), n, s, m, (C *)out, (C *)ws); \
  } \
  static C *colcomb_##E(C *v, int64_t n, int depth, int64_t m, int *idx) { \
    if (n <= 128 || depth == 0) return v + (int64_t)(*idx)++ * m; \
    int64_t h = pw_half(n); \
    C *l = colcomb_##E(v, h, depth - 1, m, idx), *r = colcomb_##E(v, n - h, depth - 1, m, idx); \
    for (int64_t c = 0; c < m; c++) l[c] += r[c]; \
    return l; \
  } \
  static void colfin_##E(void *v, int64_t n, int depth, int64_t m, bool mean, char *o) { \
    int idx = 0; \
    C *t = colcomb_##E((C *)v, n, depth, m, &idx); \
    for (int64_t c = 0; c < m; c++) PTR(OS, o)[c] = ST(mean ? t[c] / (C)n : t[c]); \
  }
/* the sums and means of floats; nansum of floats (a NaN read as 0, as
 * pairwise_nz); the mean of integers and bool (in f64, as pairwise_d) */
#define K_COLSUM_FLT(E, n_, S, C, CLS, B, LD, ST, ...) \
  K_COLSUM_GEN(E, S, C, LD, S, ST) \
  static void c_REDUCE_SUM_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o) { \
    colsum_##E(x, n, s, cols, o, false); \
  } \
  static void c_MEAN_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o) { colsum_##E(x, n, s, cols, o, true); }
#define K_COLSUM_NZ(E, n_, S, C, CLS, B, LD, ST, ...) \
  K_COLSUM_GEN(nz_##E, S, C, nzld_##E, S, ST) \
  static void c_NANSUM_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o) { \
    colsum_nz_##E(x, n, s, cols, o, false); \
  }
#define K_COLSUM_D(E, n_, S, ...) \
  K_COLSUM_GEN(d_##E, S, double, TC_TO_F64, double, TC_ID) \
  static void c_MEAN_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o) { colsum_d_##E(x, n, s, cols, o, true); }
/* rows i0 + 1 .. n - 1 of columns 0 .. m - 1 (BODY sees i and c), a block
 * of 128 rows at a time, across it 256 columns at a time: each column's
 * rows in order, read as stretches of rows */
#define COL_WALK(i0, n, m, BODY) \
  for (int64_t r0_ = (i0); r0_ < (n) && !tc_interrupt_flag; r0_ += 128) { \
    int64_t r1_ = (n) - r0_ < 128 ? (n) : r0_ + 128; \
    for (int64_t b0_ = 0; b0_ < (m); b0_ += 256) { \
      int64_t b1_ = (m) - b0_ < 256 ? (m) : b0_ + 256; \
      for (int64_t i = r0_; i < r1_; i++) \
        for (int64_t c = b0_; c < b1_; c++) { BODY } \
    } \
  }
#define K_COLSUM_INT(E, n_, S, C, CLS, B, LD, ST, ...) \
  CPU_CLONES static void c_REDUCE_SUM_##E(const char *x_, int64_t n, int64_t s, int64_t cols, char *o) { \
    const S *x = CPTR(S, x_); \
    enum { W = ISUM_B / sizeof(tc_u_##E) }; \
    tc_u_##E acc[W]; \
    for (int64_t c0 = 0; c0 < cols; c0 += W) { \
      int64_t m = cols - c0 < W ? cols - c0 : W; \
      for (int64_t c = 0; c < m; c++) acc[c] = 0; \
      for (int64_t i = 0; i < n && !tc_interrupt_flag; i++) \
        for (int64_t c = 0; c < m; c++) acc[c] += (tc_u_##E)x[i * s + c0 + c]; \
      for (int64_t c = 0; c < m; c++) PTR(S, o)[c0 + c] = (S)acc[c]; \
    } \
  }
/* max, min, argmax, argmin per column, over strips of EXTW columns: a NaN
 * ends the column's scan (its first NaN wins), else the first strictly
 * better value (argmax, argmin), or the last of the best (max, min: so
 * -0.0 after 0.0 is the maximum). With SKIP (the nan forms) a NaN is
 * passed over instead, the first number starting the scan, then the first
 * strictly better value (as tc_nvid_step); a column of NaNs alone gives
 * NaN, or the index -1. */
#define K_COLEXT_ONE(E, S, C, LD, ST, NAME, CMP, ARG, SKIP) \
  CPU_CLONES static void c_##NAME##_##E(const char *x_, int64_t n, int64_t s, int64_t cols, char *o) { \
    const S *x = CPTR(S, x_); \
    C mv[EXTW]; \
    int64_t mk[EXTW]; \
    for (int64_t c0 = 0; c0 < cols; c0 += EXTW) { \
      int64_t m = cols - c0 < EXTW ? cols - c0 : EXTW; \
      for (int64_t c = 0; c < m; c++) { mv[c] = LD(x[c0 + c]); mk[c] = 0; } \
      COL_WALK(1, n, m, \
        C v = LD(x[i * s + c0 + c]); \
        bool take = SKIP ? v CMP mv[c] || (mv[c] != mv[c] && v == v) : mv[c] == mv[c] && (v CMP mv[c] || v != v); \
        mv[c] = take ? v : mv[c]; \
        mk[c] = take ? i : mk[c];) \
      for (int64_t c = 0; c < m; c++) { \
        bool none = SKIP && mv[c] != mv[c]; \
        if (ARG) PTR(int64_t, o)[c0 + c] = none ? -1 : mk[c]; \
        else PTR(S, o)[c0 + c] = ST(none ? (C)TC_NAN : mv[c]); \
      } \
    } \
  }
#define K_COLEXT(E, n_, S, C, CLS, B, LD, ST, ...) \
  K_COLEXT_ONE(E, S, C, LD, ST, REDUCE_MAX, >=, 0, 0) K_COLEXT_ONE(E, S, C, LD, ST, REDUCE_MIN, <=, 0, 0) \
  K_COLEXT_ONE(E, S, C, LD, ST, ARGMAX, >, 1, 0) K_COLEXT_ONE(E, S, C, LD, ST, ARGMIN, <, 1, 0) \
  K_COLEXT_ONE(E, S, C, LD, ST, NANMAX, >, 0, 1) K_COLEXT_ONE(E, S, C, LD, ST, NANMIN, <, 0, 1) \
  K_COLEXT_ONE(E, S, C, LD, ST, NANARGMAX, >, 1, 1) K_COLEXT_ONE(E, S, C, LD, ST, NANARGMIN, <, 1, 1)
TC_FOR_FLT(K_COLSUM_FLT, _)
TC_FOR_FLT(K_COLSUM_NZ, _)
TC_FOR_INTB(K_COLSUM_D, _)
TC_FOR_INT(K_COLSUM_INT, _)
TC_FOR_NUM(K_COLEXT, _)

/* The table's other folds (prod, any, all, count_nonzero, nanmean) over a
 * non-last axis: each column steps through its elements in index order
 * exactly as the row kernel (RFOLD_TREE) does, the columns side by side
 * over strips of CF_W, a block of 128 rows at a time
 * (COL_WALK), so the input is read as stretches of rows. Column by column,
 * reduce_prod(X, 0) of 3000 x 3000 f32 took 6.1-6.5 ms, now 2.0-2.2 (NumPy
 * 2.05); any(B, 0) 5.9-7.3 ms, now 0.44-0.52 (NumPy 0.34). The fold
 * does not stop early (STOP is only a shortcut: later elements leave the
 * result as it is). Stamped only for the ops CF_<op>_<fold> names. */
#define CF_W 512
#define CF_ON(x) x, 1
#define CF_REDUCE_PROD_TREE CF_ON(~)
#define CF_REDUCE_PROD_SEQ CF_ON(~)
#define CF_ANY_TREE CF_ON(~)
#define CF_ALL_TREE CF_ON(~)
#define CF_COUNT_NONZERO_TREE CF_ON(~)
#define CF_NANMEAN_TREE CF_ON(~)
/* 1 where CF_<op>_<fold> is one of those, else 0 */
#define CF_SECOND(a, b, ...) b
#define CF_SECOND_(...) CF_SECOND(__VA_ARGS__)
#define CF_IS_ON(x) CF_SECOND_(x, 0, ~)
#define CF_CAT(a, b) CF_CAT_(a, b)
#define CF_CAT_(a, b) a##b
#define CF_PICK(OP, FOLD) CF_CAT(CF_SEL_, CF_IS_ON(CF_##OP##_##FOLD))
#define CF_SEL_0(...)
#define CF_SEL_1(M, ...) M(__VA_ARGS__)
#define RSIZE_KEEP(S) sizeof(S)
#define RSIZE_I64(S) sizeof(int64_t)
#define RSIZE_BOOL(S) sizeof(uint8_t)
#define RSIZE_F64(S) sizeof(double)
#define K_COLF(E, n_, S, C, CLS, B, LD, ST, OP, OUT, FOLD, A_, IDENT, STEP, MERGE, FIN, STOP) \
  static void cf_##OP##_##E(const char *x_, int64_t n, int64_t s, int64_t cols, char *o_) { \
    typedef C T; typedef tc_u_##E U; typedef A_ A; (void)sizeof(U); (void)sizeof(T); \
    const S *px = CPTR(S, x_); \
    A accs[CF_W]; \
    for (int64_t c0 = 0; c0 < cols; c0 += CF_W) { \
      int64_t m = cols - c0 < CF_W ? cols - c0 : CF_W; \
      for (int64_t c = 0; c < m; c++) accs[c] = IDENT; \
      COL_WALK(0, n, m, { A acc = accs[c]; int64_t j = i; T x = LD(px[i * s + c0 + c]); (void)j; accs[c] = STEP; }) \
      for (int64_t c = 0; c < m; c++) { \
        A a = accs[c]; \
        char *o = o_ + (c0 + c) * (int64_t)RSIZE_##OUT(S); \
        RSTORE_##OUT(S, ST, o, FIN) \
      } \
    } \
  }
#define K_COLF_ROW(OP, CLS, OUT, FOLD, ...) CF_PICK(OP, FOLD)(TC_FOR_##CLS, K_COLF, OP, OUT, FOLD, __VA_ARGS__)
TC_REDUCE_KERNELS(K_COLF_ROW)

/* ---- max, min, argmax, argmin of one contiguous run ----
 * The index of the answer: the first NaN if there is one, else the first
 * occurrence of the largest (smallest) value, as the one-element-at-a-time
 * scan finds it. Blocks of 256 are checked for NaN and folded in 16 lanes
 * (loops that vectorise); the first block whose extreme beats the best
 * so far is remembered, and at the end searched for the first element
 * equal to the extreme (which also settles -0 against +0: the first of
 * them wins, as in the scan).
 * For the value (val not NULL) the answer is the last element equal to
 * the extreme instead, as folding maximum (minimum) gives: that differs
 * only for a zero, whose sign is then the last zero's. */
#define K_EXT1(E, n_, S, C, CLS, B, LD, ST, ...) \
  static int64_t ext1_##E(const char *x_, int64_t n, bool want_max, char *val) { \
    const S *x = CPTR(S, x_); \
    int64_t k = ext1k_##E(x, n, want_max); \
    if (val && (C)0.5 != 0 && LD(x[k]) == 0)   /* floats only */ \
      for (k = n - 1; LD(x[k]) != 0; k--) {} \
    if (val) *PTR(S, val) = ST(LD(x[k])); \
    return k; \
  }
/* block helper: the largest (smallest) value of x[0..m) (of any sign of
 * zero; the caller takes the first element equal to it), and in *nan
 * whether there is a NaN, in one pass: 64 bytes of lanes in GCC's vector
 * types, blended through the compare's mask (a loop the compiler would not
 * vectorise with ?: on floats) */
#define EXT_ACC 4   /* vectors of lanes, each its own compare-and-blend chain */
/* the vector v of L elements at p, in C */
#define EXT_LOAD(S, C, LD, p, v) \
  if (sizeof(S) == sizeof(C)) memcpy(&v, p, sizeof v);   /* LD is the identity */ \
  else for (int k = 0; k < L; k++) v[k] = LD((p)[k]);
/* ln's lanes replaced by v's where v CMP ln */
#define EXT_BLEND(CMP, v, ln) \
  do { \
    __typeof__(v CMP ln) mk = v CMP ln; \
    ln = (vec)(((__typeof__(mk))v & mk) | ((__typeof__(mk))ln & ~mk)); \
  } while (0)
/* one vector of elements at p into the lanes ln, and their NaNs into nm */
#define EXT_STEP(S, C, LD, CMP, p, ln, nm) \
  vec v; \
  EXT_LOAD(S, C, LD, p, v) \
  EXT_BLEND(CMP, v, ln); \
  nm |= v != v;
#define K_EXTBLK(E, n_, S, C, CLS, B, LD, ST, ...) \
  BLK_EXT(E, S, C, LD, blk_max, >, LD(x[0]), 1) \
  BLK_EXT(E, S, C, LD, blk_min, <, LD(x[0]), 1)
/* NAME_E: lanes starting at INIT; with NANS, *nan says whether x holds a
 * NaN (without, nan is not read: NaN never replaces a lane) */
#define BLK_EXT(E, S, C, LD, NAME, CMP, INIT, NANS) \
  CPU_CLONES static C NAME##_##E(const S *x, int64_t m, int *nan) { \
    typedef C vec __attribute__((vector_size(64))); \
    enum { L = 64 / sizeof(C) }; \
    C bm = (C)(INIT); \
    int64_t i = 0; \
    vec ln[EXT_ACC]; \
    for (int u = 0; u < EXT_ACC; u++) \
      for (int k = 0; k < L; k++) ln[u][k] = bm; \
    __typeof__(ln[0] != ln[0]) nm[EXT_ACC]; \
    for (int u = 0; u < EXT_ACC; u++) nm[u] = ln[0] != ln[0]; \
    for (; i + EXT_ACC * L <= m; i += EXT_ACC * L) \
      for (int u = 0; u < EXT_ACC; u++) { EXT_STEP(S, C, LD, CMP, x + i + u * L, ln[u], nm[u]) } \
    for (; i + L <= m; i += L) { EXT_STEP(S, C, LD, CMP, x + i, ln[0], nm[0]) } \
    for (int u = 1; u < EXT_ACC; u++) { \
      nm[0] |= nm[u]; \
      EXT_BLEND(CMP, ln[u], ln[0]); \
    } \
    int any = 0; \
    for (int k = 0; k < L; k++) any |= nm[0][k] != 0; \
    for (; i < m; i++) { C v = LD(x[i]); any |= v != v; bm = v CMP bm ? v : bm; } \
    for (int k = 0; k < L; k++) bm = ln[0][k] CMP bm ? ln[0][k] : bm; \
    if (NANS) *nan = any; \
    return bm; \
  }
TC_FOR_NUM(K_EXTBLK, _)

/* ---- logsumexp of float runs ----
 * A run is cut, from its start, into blocks of LSE_BLK elements and chunks
 * of LSE_CHUNK. A block's largest element m comes first (a NaN makes the
 * block NaN, +inf makes it +inf, all -inf adds nothing); then exp(x - m)
 * in f64 through vmath.c's exp (SLEEF, 1 ulp) and the pairwise sum of those
 * terms, (m, sum) merged into the chunk's with tc_lse_merge (src/kexpr.h);
 * the chunks merge the same way in index order. One long run's chunks are
 * computed in parallel and merged in order, so every thread count gives
 * the same bits. (The generic fold called libm's exp for each element:
 * 10^5 f64 took 821 us, NumPy's log(sum(exp(x - max))) 141.) */
#define LSE_BLK 256
#define LSE_CHUNK ((int64_t)16 * LSE_BLK)
#define K_LSE(E, n_, S, C, CLS, B, LD, ST, ...) \
  CPU_CLONES static tc_lse lse_chunk_##E(const char *x_, int64_t n, int64_t s, cpu_vmath_fn ex) { \
    tc_lse acc = tc_lse_make(-TC_INF, 0); \
    S g[LSE_BLK]; \
    double t[LSE_BLK], e[LSE_BLK]; \
    for (int64_t lo = 0; lo < n; lo += LSE_BLK) { \
      int64_t cnt = n - lo < LSE_BLK ? n - lo : LSE_BLK; \
      const S *x = CPTR(S, x_) + lo * s; \
      if (s != 1) { \
        for (int64_t k = 0; k < cnt; k++) g[k] = x[k * s]; \
        x = g; \
      } \
      int nan; \
      double m = (double)blk_max_##E(x, cnt, &nan); \
      if (nan || m == TC_INF) { acc = tc_lse_merge(acc, tc_lse_make(nan ? TC_NAN : TC_INF, 1)); continue; } \
      if (m == -TC_INF) continue; \
      for (int64_t k = 0; k < cnt; k++) t[k] = (double)LD(x[k]) - m; \
      ex(cnt, (char *)e, (const char *)t, 1); \
      acc = tc_lse_merge(acc, tc_lse_make(m, pairwise1_F64(e, cnt))); \
    } \
    return acc; \
  } \
  static void lse_store_##E(tc_lse a, char *o) { *PTR(S, o) = ST((C)tc_lse_value(a)); } \
  static void lse_##E(const char *x, int64_t n, int64_t s, char *o) { \
    cpu_vmath_fn ex = cpu_vmath_kernel(TC_OP_EXP, TC_DT_F64); \
    tc_lse acc = tc_lse_make(-TC_INF, 0); \
    for (int64_t lo = 0; lo < n && !cpu_stop(lo); lo += LSE_CHUNK) \
      acc = tc_lse_merge(acc, lse_chunk_##E(x + lo * s * (int64_t)sizeof(S), n - lo < LSE_CHUNK ? n - lo : LSE_CHUNK, s, ex)); \
    lse_store_##E(acc, o); \
  }
TC_FOR_FLT(K_LSE, _)

/* logsumexp over a non-last axis, in memory order: m neighbouring columns
 * (row stride s) a strip of LSE_COLW at a time, each block of LSE_BLK rows
 * read as stretches of rows. Every column gets the operations of lse_chunk
 * on its own run: the block's largest element (its NaN and +inf rules; a
 * zero's sign does not reach the answer), exp(x - m) in f64 by the same
 * kernel (elementwise, so a block of columns at once gives each element
 * the same bits), the block's terms summed by colpw_F64 (pairwise1_F64's
 * tree for each column), merged into the chunk's accumulator and the
 * chunks' into the column's in order. Column by column, logsumexp(X, 0) of
 * a [100000, 90] f32 X took 21-32 ms on 2 threads, now 9.3-15 (the rows
 * split, lse_split; NumPy's log(sum(exp(x - max))) 24); of [3000, 3000]
 * f32, 15-20 ms, now 11-15 (NumPy 22-27). */
#define LSE_COLW 256
#define LSE_SUBW 32
typedef struct { double *t, *sum, *ws, *mx; int *nan; cpu_vmath_fn ex; } lse_colbuf;

/* The buffers of one strip (NULL without the memory): 72 KB, under
 * malloc's mmap threshold, so that they come from the heap and not as
 * fresh pages each time (in buffers of 270 KB, half the time went to
 * clearing them). A block's largest elements are found over the strip's
 * LSE_COLW columns (1 KB of f32 a row, which the hardware prefetchers
 * follow; in strips of 128 bytes two thirds of the time went to waiting
 * for memory), the terms then made and summed LSE_SUBW columns at a time
 * (the rows again, from L2). The differences t are replaced by their exps
 * in place: the exp kernel reads each vector before it writes it. */
static double *lse_colbuf_new(lse_colbuf *b) {
  size_t blk = (size_t)LSE_BLK * LSE_SUBW, w = LSE_COLW;
  double *p = malloc(sizeof(double) * (blk + 9 * LSE_SUBW + 2 * w) + sizeof(int) * w);
  if (!p) return NULL;
  b->t = p;
  b->ws = p + blk;   /* colpw's for blocks of up to 256 rows: depth 1, 9 columns' worth */
  b->sum = b->ws + 9 * LSE_SUBW;
  b->mx = b->sum + w;
  b->nan = (int *)(void *)(b->mx + w);
  b->ex = cpu_vmath_kernel(TC_OP_EXP, TC_DT_F64);
  return p;
}

#define K_LSE_COL(E, n_, S, C, CLS, B, LD, ST, ...) \
  /* a[0..m) = the accumulators of cnt rows (at most one chunk) of m <= LSE_COLW columns */ \
  CPU_CLONES static void lse_colchunk_##E(const char *x_, int64_t cnt, int64_t s, int64_t m, tc_lse *a, const lse_colbuf *b) { \
    for (int64_t c = 0; c < m; c++) a[c] = tc_lse_make(-TC_INF, 0); \
    for (int64_t lo = 0; lo < cnt; lo += LSE_BLK) { \
      int64_t r, c, nr = cnt - lo < LSE_BLK ? cnt - lo : LSE_BLK; \
      const S *y = CPTR(S, x_) + lo * s; \
      for (c = 0; c < m; c++) { C v = LD(y[c]); b->mx[c] = (double)v; b->nan[c] = v != v; } \
      for (r = 1; r < nr; r++) \
        for (c = 0; c < m; c++) { \
          double v = (double)LD(y[r * s + c]); \
          b->nan[c] |= v != v; \
          b->mx[c] = v > b->mx[c] ? v : b->mx[c]; \
        } \
      for (int64_t c0 = 0; c0 < m; c0 += LSE_SUBW) { \
        int64_t w = m - c0 < LSE_SUBW ? m - c0 : LSE_SUBW; \
        /* the next block's rows into L2, a share with each sub-strip (hints, \
         * past the run's end too) */ \
        int64_t ns = (m + LSE_SUBW - 1) / LSE_SUBW, q = c0 / LSE_SUBW; \
        for (r = q * LSE_BLK / ns; r < (q + 1) * LSE_BLK / ns; r++) \
          for (c = 0; c < m; c += 64 / (int64_t)sizeof(S)) __builtin_prefetch(y + (LSE_BLK + r) * s + c, 0, 2); \
        for (r = 0; r < nr; r++) \
          for (c = 0; c < w; c++) b->t[r * w + c] = (double)LD(y[r * s + c0 + c]) - b->mx[c0 + c]; \
        b->ex(nr * w, (char *)b->t, (const char *)b->t, 1); \
        colpw_F64(b->t, nr, w, w, b->sum + c0, b->ws); \
      } \
      for (c = 0; c < m; c++) { \
        double mc = b->mx[c]; \
        if (b->nan[c] || mc == TC_INF) a[c] = tc_lse_merge(a[c], tc_lse_make(b->nan[c] ? TC_NAN : TC_INF, 1)); \
        else if (mc != -TC_INF) a[c] = tc_lse_merge(a[c], tc_lse_make(mc, b->sum[c])); \
      } \
    } \
  }
TC_FOR_FLT(K_LSE_COL, _)
typedef struct {
  tc_lse (*chunk)(const char *x, int64_t n, int64_t s, cpu_vmath_fn ex);
  void (*store)(tc_lse a, char *o);
  void (*run)(const char *x, int64_t n, int64_t s, char *o);
  void (*colchunk)(const char *x, int64_t cnt, int64_t s, int64_t m, tc_lse *a, const lse_colbuf *b);
  size_t es;
} lse_fns;
#define LSE_ENTRY(E, n_, S, ...) [TC_DT_##E] = {lse_chunk_##E, lse_store_##E, lse_##E, lse_colchunk_##E, sizeof(S)},
static const lse_fns lse_table[TC_DT_COUNT] = {TC_FOR_FLT(LSE_ENTRY, _)};

/* n accumulators v[0], v[step], ... merged in order from nothing: a run's
 * chunks, as lse_##E merges them */
static tc_lse lse_fold(const tc_lse *v, int64_t n, int64_t step) {
  tc_lse acc = tc_lse_make(-TC_INF, 0);
  for (int64_t k = 0; k < n; k++) acc = tc_lse_merge(acc, v[k * step]);
  return acc;
}

/* The accumulators of chunks [k0, k1) of cols columns: chunk k's of column
 * c to a[(k - k0) * cols + c] (each), or all merged in order into a[c].
 * Without the memory for a strip's buffers, false. */
static bool lse_colchunks(const lse_fns *f, const char *x, int64_t n, int64_t s, int64_t cols, int64_t k0, int64_t k1,
                          tc_lse *a, bool each) {
  lse_colbuf b;
  double *mem = lse_colbuf_new(&b);
  if (!mem) return false;
  tc_lse t[LSE_COLW];
  for (int64_t c0 = 0; c0 < cols; c0 += LSE_COLW) {
    int64_t m = cols - c0 < LSE_COLW ? cols - c0 : LSE_COLW;
    for (int64_t k = k0; k < k1 && !tc_interrupt_flag; k++) {
      int64_t lo = k * LSE_CHUNK;
      tc_lse *dst = each ? a + (k - k0) * cols + c0 : t;
      f->colchunk(x + (lo * s + c0) * (int64_t)f->es, n - lo < LSE_CHUNK ? n - lo : LSE_CHUNK, s, m, dst, &b);
      for (int64_t c = 0; !each && c < m; c++)
        a[c0 + c] = tc_lse_merge(k == k0 ? tc_lse_make(-TC_INF, 0) : a[c0 + c], t[c]);
    }
  }
  free(mem);
  return true;
}

/* the col_fn of logsumexp: each column's chunks merged in order (without
 * the memory for a strip, column by column) */
static void lse_cols(const lse_fns *f, const char *x, int64_t n, int64_t s, int64_t cols, char *o) {
  tc_lse *a = malloc(sizeof *a * (size_t)cols);
  if (!a || !lse_colchunks(f, x, n, s, cols, 0, (n + LSE_CHUNK - 1) / LSE_CHUNK, a, false)) {
    for (int64_t c = 0; c < cols && !tc_interrupt_flag; c++) f->run(x + c * (int64_t)f->es, n, s, o + c * (int64_t)f->es);
  } else {
    for (int64_t c = 0; c < cols; c++) f->store(a[c], o + c * (int64_t)f->es);
  }
  free(a);
}
#define K_LSE_COLS(E, ...) \
  static void c_LOGSUMEXP_##E(const char *x, int64_t n, int64_t s, int64_t cols, char *o) { \
    lse_cols(&lse_table[TC_DT_##E], x, n, s, cols, o); \
  }
TC_FOR_FLT(K_LSE_COLS, _)

/* logsumexp's chunks across threads, each chunk's accumulators kept and
 * then merged in order (the one-thread bits): of one run (cols 0), or of
 * columns too few to go round the threads in strips (the rows' chunks go
 * round instead). */
typedef struct {
  const lse_fns *f;
  const char *x;
  int64_t n, s, cols, nch, per;   /* per: chunks a task */
  tc_lse *a;                      /* each chunk's accumulators: nch of max(cols, 1) */
  cpu_vmath_fn ex;
  _Atomic int oom;
} lse_job;

static int lse_task(void *ctx, int t, int w) {
  lse_job *j = ctx;
  (void)w;
  int64_t k0 = t * j->per, k1 = k0 + j->per < j->nch ? k0 + j->per : j->nch;
  int64_t mark = tc_progress_mark(), hi = k1 * LSE_CHUNK < j->n ? k1 * LSE_CHUNK : j->n;
  if (j->cols == 0) {
    int64_t pending = 0;
    for (int64_t k = k0; k < k1 && !tc_interrupt_flag; k++) {
      int64_t lo = k * LSE_CHUNK, m = j->n - lo < LSE_CHUNK ? j->n - lo : LSE_CHUNK;
      j->a[k] = j->f->chunk(j->x + lo * j->s * (int64_t)j->f->es, m, j->s, j->ex);
      cpu_progress_note(&pending, m);
    }
  } else if (!lse_colchunks(j->f, j->x, j->n, j->s, j->cols, k0, k1, j->a + k0 * j->cols, true)) {
    atomic_store(&j->oom, 1);
    return -1;
  }
  tc_progress_upto(mark, (hi - k0 * LSE_CHUNK) * (j->cols ? j->cols : 1));
  return tc_interrupt_flag ? -1 : 0;
}

/* in at most `tasks` tasks, and at most 4 a thread */
static int lse_split(tc_call *c, const lse_fns *f, const char *x, int64_t n, int64_t s, int64_t cols, int64_t tasks,
                     tc_err *err) {
  int64_t nch = (n + LSE_CHUNK - 1) / LSE_CHUNK, w = cols ? cols : 1;
  if (tasks > 4 * cpu_threads()) tasks = 4 * cpu_threads();
  lse_job j = {f, x, n, s, cols, nch, (nch + tasks - 1) / tasks, malloc(sizeof(tc_lse) * (size_t)(nch * w)),
               cpu_vmath_kernel(TC_OP_EXP, TC_DT_F64), 0};
  if (!j.a) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "allocation failed");
  int rc = cpu_parallel((int)((nch + j.per - 1) / j.per), lse_task, &j);
  if (rc == 0) {
    char *o = tc_tensor_data(c->out);
    for (int64_t q = 0; q < w; q++) f->store(lse_fold(j.a + q, nch, w), o + q * (int64_t)f->es);
  }
  free(j.a);
  if (atomic_load(&j.oom)) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "allocation failed");
  return rc < 0 ? cpu_interrupted(err) : 0;
}

/* A run of up to EXT_SHORT elements is scanned one element at a time, the
 * same answer: the blocks' setup and the search cost more there (argmax
 * over the rows of a [100000, 10] f32 took 1.8 ms on 2 threads, now 0.42-
 * 0.77; NumPy 1.1; rows of 100 were slower scanned so: [10000, 100] on one
 * thread 850 us against 550). */
#define EXT_SHORT 64
#define K_EXT1K(E, n_, S, C, CLS, B, LD, ST, ...) \
  CPU_CLONES static int64_t ext1k_##E(const S *x, int64_t n, bool want_max) { \
    C best = LD(x[0]); \
    int64_t bb = 0;   /* the first block holding best */ \
    if (best != best) return 0; \
    if (n <= EXT_SHORT) { \
      for (int64_t j = 1; j < n; j++) { \
        C v = LD(x[j]); \
        if (v != v) return j; \
        if (want_max ? v > best : v < best) { best = v; bb = j; } \
      } \
      return bb; \
    } \
    for (int64_t i0 = 0; i0 < n && !tc_interrupt_flag; i0 += 1024) { \
      int64_t m = n - i0 < 1024 ? n - i0 : 1024; \
      int nan; \
      C bm = want_max ? blk_max_##E(x + i0, m, &nan) : blk_min_##E(x + i0, m, &nan); \
      if (nan) \
        for (int64_t j = 0;; j++) { C v = LD(x[i0 + j]); if (v != v) return i0 + j; } \
      if (want_max ? bm > best : bm < best) { best = bm; bb = i0; } \
      cpu_progress_at(i0 + 1024); \
    } \
    /* searched once, at the end (rising data beats the best in every block), \
     * a vector at a time up to the one that holds it */ \
    typedef C vec __attribute__((vector_size(64))); \
    enum { L = 64 / sizeof(C) }; \
    vec bv; \
    for (int k = 0; k < L; k++) bv[k] = best; \
    int64_t j = bb; \
    for (; j + L <= n; j += L) { \
      vec v; \
      EXT_LOAD(S, C, LD, x + j, v) \
      __typeof__(v == bv) eq = v == bv; \
      int hit = 0; \
      for (int k = 0; k < L; k++) hit |= eq[k] != 0; \
      if (hit) break; \
    } \
    for (; j < n; j++) if (LD(x[j]) == best) return j; \
    return bb; \
  }
TC_FOR_NUM(K_EXT1K, _)
TC_FOR_NUM(K_EXT1, _)
/* index of the answer in x[0..n); the answer's value stored at val if not NULL */
typedef int64_t (*ext1_fn)(const char *, int64_t, bool, char *);
#define EXT1_ENTRY(E, ...) [TC_DT_##E] = ext1_##E,
static const ext1_fn ext1_table[TC_DT_COUNT] = {TC_FOR_NUM(EXT1_ENTRY, _)};

/* ---- nanmax, nanmin, nanargmax, nanargmin of one contiguous float run ----
 * The first occurrence of the largest (smallest) element that is not NaN,
 * as tc_nvid_step's scan finds it, or -1 when every element is NaN (the
 * value is then NaN). Blocks of 1024 are folded by BLK_EXT in lanes that
 * start at -inf (+inf) and take an element where it compares greater
 * (less), which a NaN never does; the first block whose extreme beats the best so far is
 * searched at the end for the first element equal to it. The value is
 * that element's, so a zero keeps the first zero's sign. */
#define K_NEXT1(E, n_, S, C, CLS, B, LD, ST, ...) \
  BLK_EXT(E, S, C, LD, nblk_max, >, -TC_INF, 0) \
  BLK_EXT(E, S, C, LD, nblk_min, <, TC_INF, 0) \
  static int64_t next1_##E(const char *x_, int64_t n, bool want_max, char *val) { \
    const S *x = CPTR(S, x_); \
    C best = want_max ? (C)-TC_INF : (C)TC_INF; \
    int64_t bb = 0, k = -1; \
    for (int64_t i0 = 0; i0 < n && !tc_interrupt_flag; i0 += 1024) { \
      int64_t m = n - i0 < 1024 ? n - i0 : 1024; \
      C bm = want_max ? nblk_max_##E(x + i0, m, NULL) : nblk_min_##E(x + i0, m, NULL); \
      if (want_max ? bm > best : bm < best) { best = bm; bb = i0; } \
      cpu_progress_at(i0 + 1024); \
    } \
    for (int64_t j = bb; j < n; j++) \
      if (LD(x[j]) == best) { k = j; break; } \
    if (val) { \
      if (k >= 0) memcpy(val, &x[k], sizeof(S)); \
      else *PTR(S, val) = ST((C)TC_NAN); \
    } \
    return k; \
  }
TC_FOR_FLT(K_NEXT1, _)
#define NEXT1_ENTRY(E, ...) [TC_DT_##E] = next1_##E,
static const ext1_fn next1_table[TC_DT_COUNT] = {TC_FOR_FLT(NEXT1_ENTRY, _)};

typedef void (*col_fn)(const char *, int64_t, int64_t, int64_t, char *);
#define C_ENTRY(E, n, S, C, CLS, B, LD, ST, OP) [TC_OP_##OP][TC_DT_##E] = c_##OP##_##E,
#define C_SUM_(E, n, S, C, CLS, B, LD, ST, _) C_ENTRY(E, n, S, C, CLS, B, LD, ST, REDUCE_SUM)
#define C_MEAN_(E, n, S, C, CLS, B, LD, ST, _) C_ENTRY(E, n, S, C, CLS, B, LD, ST, MEAN)
#define C_EXT_(E, n, S, C, CLS, B, LD, ST, _) C_ENTRY(E, n, S, C, CLS, B, LD, ST, REDUCE_MAX) \
  C_ENTRY(E, n, S, C, CLS, B, LD, ST, REDUCE_MIN) C_ENTRY(E, n, S, C, CLS, B, LD, ST, ARGMAX) \
  C_ENTRY(E, n, S, C, CLS, B, LD, ST, ARGMIN) C_ENTRY(E, n, S, C, CLS, B, LD, ST, NANMAX) \
  C_ENTRY(E, n, S, C, CLS, B, LD, ST, NANMIN) C_ENTRY(E, n, S, C, CLS, B, LD, ST, NANARGMAX) \
  C_ENTRY(E, n, S, C, CLS, B, LD, ST, NANARGMIN)
#define C_NANSUM_(E, n, S, C, CLS, B, LD, ST, _) C_ENTRY(E, n, S, C, CLS, B, LD, ST, NANSUM)
static const col_fn col_table[TC_OP_COUNT][TC_DT_COUNT] = {
  TC_FOR_NUM(C_SUM_, _)
  TC_FOR_FLT(C_MEAN_, _)
  TC_FOR_INTB(C_MEAN_, _)
  TC_FOR_FLT(C_NANSUM_, _)
  TC_FOR_NUM(C_EXT_, _)
};

/* the column kernels whose answers for runs of rows do not fold into the
 * whole column's: the table's folds in index order, and logsumexp's */
#define CF_ENTRY(E, n, S, C, CLS, B, LD, ST, OP, ...) [TC_OP_##OP][TC_DT_##E] = cf_##OP##_##E,
#define CF_ENTRY_ROW(OP, CLS, OUT, FOLD, ...) CF_PICK(OP, FOLD)(TC_FOR_##CLS, CF_ENTRY, OP, OUT, FOLD, __VA_ARGS__)
#define CF_LSE_ENTRY(E, ...) [TC_OP_LOGSUMEXP][TC_DT_##E] = c_LOGSUMEXP_##E,
static const col_fn colfold_table[TC_OP_COUNT][TC_DT_COUNT] = {TC_REDUCE_KERNELS(CF_ENTRY_ROW)
                                                                 TC_FOR_FLT(CF_LSE_ENTRY, _)};

typedef void (*red_fn)(const char *, int64_t, int64_t, char *);
#define R_ENTRY(E, n, S, C, CLS, B, LD, ST, OP, ...) [TC_OP_##OP][TC_DT_##E] = r_##OP##_##E,
#define R_ENTRY_ROW(OP, CLS, ...) TC_FOR_##CLS(R_ENTRY, OP, __VA_ARGS__)
static const red_fn red_table[TC_OP_COUNT][TC_DT_COUNT] = {TC_REDUCE_KERNELS(R_ENTRY_ROW)};

bool cpu_supports_reduce(const tc_call *c) { return red_table[c->op][c->dtype] != NULL; }

/* ---- one long run across threads ----
 * A sum to a single element splits its run along the pairwise tree: the
 * subtrees below depth d are summed in parallel and combined in the tree's
 * own order, so the bits are those of the one-thread sum whatever the
 * thread count. Integer sums wrap, so they may combine in any order. */
#define TREE_MAX_DEPTH 6
typedef struct { int64_t off, n; } span;

static void tree_leaves(int64_t off, int64_t n, int depth, span *out, int *cnt) {
  if (n <= 128 || depth == 0) { out[(*cnt)++] = (span){off, n}; return; }
  int64_t h = pw_half(n);
  tree_leaves(off, h, depth - 1, out, cnt);
  tree_leaves(off + h, n - h, depth - 1, out, cnt);
}

typedef struct { const char *x; int64_t s; const span *leaf; void *vals; } tree_job;
typedef struct {
  cpu_task_fn task;                                                 /* vals[t] = fold of leaf t */
  void (*finish)(void *vals, int nleaves, int64_t n, int depth, bool mean, char *o);
} tree_fns;

#define K_TREE_GEN(E, S, C) \
  static int tree_task_##E(void *ctx, int t, int w) { \
    const tree_job *j = ctx; (void)w; \
    int64_t mark_ = tc_progress_mark(); \
    ((C *)j->vals)[t] = pairwise_##E(CPTR(S, j->x) + j->leaf[t].off * j->s, j->leaf[t].n, j->s); \
    tc_progress_upto(mark_, j->leaf[t].n); \
    return tc_interrupt_flag ? -1 : 0; \
  } \
  /* the leaves combined in the tree's order: the column sums' combine, one column */ \
  static void tree_fin_##E(void *v, int nl, int64_t n, int depth, bool mean, char *o) { \
    (void)nl; \
    colfin_##E(v, n, depth, 1, mean, o); \
  }
#define K_TREE_FLT(E, n_, S, C, ...) K_TREE_GEN(E, S, C)
#define K_TREE_D(E, n_, S, ...) K_TREE_GEN(d_##E, S, double)
#define K_TREE_INT(E, n_, S, C, CLS, B, LD, ST, ...) \
  static int tree_task_##E(void *ctx, int t, int w) { \
    const tree_job *j = ctx; (void)w; \
    int64_t mark_ = tc_progress_mark(); \
    ((tc_u_##E *)j->vals)[t] = isum_##E(CPTR(S, j->x) + j->leaf[t].off * j->s, j->leaf[t].n, j->s); \
    tc_progress_upto(mark_, j->leaf[t].n); \
    return tc_interrupt_flag ? -1 : 0; \
  } \
  static void tree_fin_##E(void *v, int nl, int64_t n, int depth, bool mean, char *o) { \
    tc_u_##E acc = 0; (void)n; (void)depth; (void)mean; \
    for (int i = 0; i < nl; i++) acc += ((const tc_u_##E *)v)[i]; \
    *PTR(S, o) = (S)acc; \
  }
TC_FOR_FLT(K_TREE_FLT, _)
#define K_TREE_NZ(E, n_, S, C, ...) K_TREE_GEN(nz_##E, S, C)
TC_FOR_FLT(K_TREE_NZ, _)
TC_FOR_INT(K_TREE_INT, _)
TC_FOR_INTB(K_TREE_D, _)
#define T_ENTRY(E, ...) [TC_DT_##E] = {tree_task_##E, tree_fin_##E},
#define T_ENTRY_D(E, ...) [TC_DT_##E] = {tree_task_d_##E, tree_fin_d_##E},
static const tree_fns tree_table[TC_DT_COUNT] = {TC_FOR_NUM(T_ENTRY, _)};
static const tree_fns mean_d_table[TC_DT_COUNT] = {TC_FOR_INTB(T_ENTRY_D, _)};
#define T_ENTRY_NZ(E, ...) [TC_DT_##E] = {tree_task_nz_##E, tree_fin_nz_##E},
static const tree_fns nansum_table[TC_DT_COUNT] = {TC_FOR_FLT(T_ENTRY_NZ, _)};
#define NANSUM_ENTRY(E, ...) [TC_DT_##E] = nansum_##E,
static void (*const nansum_run[TC_DT_COUNT])(const char *, int64_t, int64_t, char *) = {TC_FOR_FLT(NANSUM_ENTRY, _)};

/* The tree functions of a sum, mean or float nansum of dtype dt (the mean
 * of integers in f64; an integer nansum is a sum). */
static const tree_fns *tree_of(tc_op op, tc_dtype dt) {
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT;
  return op == TC_OP_MEAN && !flt ? &mean_d_table[dt] : op == TC_OP_NANSUM && flt ? &nansum_table[dt] : &tree_table[dt];
}

static int tree_sum(tc_call *c, const char *x, int64_t n, int64_t s, tc_err *err) {
  const tree_fns *tf = tree_of(c->op, c->dtype);
  int depth = 0;
  while (depth < TREE_MAX_DEPTH && (n >> (depth + 1)) >= CPU_PAR_MIN / 2) depth++;   /* leaves of 2^15 and more */
  span leaves[1 << TREE_MAX_DEPTH];
  int nl = 0;
  tree_leaves(0, n, depth, leaves, &nl);
  void *vals = malloc(sizeof(uint64_t) * (size_t)nl);
  if (!vals) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "allocation failed");
  tree_job j = {x, s, leaves, vals};
  int rc = cpu_parallel(nl, tf->task, &j);
  if (rc == 0) tf->finish(vals, nl, n, depth, c->op == TC_OP_MEAN, tc_tensor_data(c->out));
  free(vals);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

/* ---- a column reduction's rows across threads ----
 * The outputs are m neighbouring columns of an [n, m] block (row stride s).
 * Split by columns, threads share every row's cache lines and read short
 * stretches of each (100 f32 columns: 64 and 36 a thread), so two threads
 * took twice one thread's time; here each thread takes whole rows: the
 * pairwise tree's subtrees below depth d (float sums and means, combined
 * in the tree's order: the one-thread bits), or for the integer sums and
 * the scans any run of rows, the runs' answers then folded in row order by
 * the same kernel (a wrapping sum; the scans' rules give the first NaN and
 * the first or last best of the whole column). */
typedef void (*colpart_fn)(const char *, int64_t, int64_t, int64_t, void *, void *);
typedef struct {
  colpart_fn part;
  void (*fin)(void *, int64_t, int, int64_t, bool, char *);
  size_t csize;
} colsplit_fns;
#define CS_ENTRY(E, n_, S, C, ...) [TC_DT_##E] = {colpart_##E, colfin_##E, sizeof(C)},
#define CS_ENTRY_NZ(E, n_, S, C, ...) [TC_DT_##E] = {colpart_nz_##E, colfin_nz_##E, sizeof(C)},
#define CS_ENTRY_D(E, ...) [TC_DT_##E] = {colpart_d_##E, colfin_d_##E, sizeof(double)},
static const colsplit_fns colsplit_table[TC_DT_COUNT] = {TC_FOR_FLT(CS_ENTRY, _)};
static const colsplit_fns colsplit_nz_table[TC_DT_COUNT] = {TC_FOR_FLT(CS_ENTRY_NZ, _)};
static const colsplit_fns colsplit_d_table[TC_DT_COUNT] = {TC_FOR_INTB(CS_ENTRY_D, _)};

/* the subtree functions of a float sum, mean or nansum, or of the mean of
 * integers; NULL for the other column kernels */
static const colsplit_fns *colsplit_sum(const tc_call *c) {
  bool flt = tc_dtype_class(c->dtype) == TC_CLASS_FLT;
  const colsplit_fns *f = c->op == TC_OP_REDUCE_SUM || (c->op == TC_OP_MEAN && flt) ? &colsplit_table[c->dtype]
                          : c->op == TC_OP_MEAN ? &colsplit_d_table[c->dtype]
                          : c->op == TC_OP_NANSUM && flt ? &colsplit_nz_table[c->dtype] : NULL;
  return f && f->part ? f : NULL;
}

typedef struct {
  const char *x;
  int64_t s, m, wsn;
  size_t es;
  const span *leaf;
  col_fn col;                /* the integer sums and the scans */
  const colsplit_fns *cs;    /* the float sums and means */
  char *vals, *ws;
  size_t vsize;              /* bytes of one leaf's m answers */
} colsplit_job;

static int colsplit_task(void *ctx, int t, int w) {
  const colsplit_job *j = ctx;
  (void)w;
  const char *x = j->x + j->leaf[t].off * j->s * (int64_t)j->es;
  char *v = j->vals + (size_t)t * j->vsize;
  int64_t mark = tc_progress_mark();
  if (j->cs) j->cs->part(x, j->leaf[t].n, j->s, j->m, v, j->ws + (size_t)t * (size_t)j->wsn * j->cs->csize);
  else j->col(x, j->leaf[t].n, j->s, j->m, v);
  tc_progress_upto(mark, j->leaf[t].n * j->m);
  return tc_interrupt_flag ? -1 : 0;
}

/* Whether the kept dims of x (the first nk) are m = nout elements in a
 * row: then the outputs are neighbouring columns of an [n, m] block. */
static bool kept_is_row(const tc_tensor *x, int nk) {
  int64_t want = 1;
  for (int d = nk - 1; d >= 0; d--) {
    if (x->shape[d] == 1) continue;
    if (x->strides[d] != want) return false;
    want *= x->shape[d];
  }
  return true;
}

/* The widest block split so: one strip of its kernel (COLW, ISUM_B, EXTW); wider
 * blocks are split by columns, each thread's stretches of a row long
 * enough (3000 f32 columns: argmax 2.4 ms by columns, 3.0 by rows; a sum
 * 1.9 by columns, 1.5 by rows). */
static int64_t colsplit_cols(const tc_call *c) {
  const colsplit_fns *f = colsplit_sum(c);
  bool isum = (c->op == TC_OP_REDUCE_SUM || c->op == TC_OP_NANSUM) && tc_dtype_class(c->dtype) != TC_CLASS_FLT;
  return f ? COLW_B / (int64_t)f->csize : isum ? ISUM_B / (int64_t)tc_dtype_size(c->dtype) : EXTW;
}

static int colsplit(tc_call *c, col_fn col, const char *x, int64_t n, int64_t s, int64_t m, tc_err *err) {
  tc_op op = c->op;
  const colsplit_fns *cs = colsplit_sum(c);
  bool fsum = cs != NULL;
  bool arg = op == TC_OP_ARGMAX || op == TC_OP_ARGMIN;
  size_t es = tc_dtype_size(c->dtype);
  int depth = 0, nth = cpu_threads();
  while (depth < TREE_MAX_DEPTH && (1 << depth) < 4 * nth && (n >> (depth + 1)) >= 128 &&
         (n >> (depth + 1)) * m >= CPU_PAR_MIN / 2)
    depth++;
  span leaves[1 << TREE_MAX_DEPTH];
  int nl = 0;
  tree_leaves(0, n, depth, leaves, &nl);
  colsplit_job j = {x, s, m, 0, es, leaves, col, cs, NULL, NULL, 0};
  j.vsize = (size_t)m * (fsum ? j.cs->csize : arg ? sizeof(int64_t) : es);
  int64_t most = 0;
  for (int t = 0; t < nl; t++) most = leaves[t].n > most ? leaves[t].n : most;
  if (fsum) j.wsn = (colpw_depth(most) + 8) * m;
  /* the leaves' answers; for argmax and argmin also their values, then the
   * leaf each column's answer is in */
  size_t extra = arg ? (size_t)nl * (size_t)m * es + (size_t)m * sizeof(int64_t) : 0;
  j.vals = malloc((size_t)nl * j.vsize + (fsum ? (size_t)nl * (size_t)j.wsn * j.cs->csize : 0) + extra);
  if (!j.vals) return tc_err_set(err, TC_E_OOM, (int)op, (int)c->dtype, "allocation failed");
  j.ws = j.vals + (size_t)nl * j.vsize;
  int rc = cpu_parallel(nl, colsplit_task, &j);
  char *o = tc_tensor_data(c->out);
  if (rc == 0 && fsum) {
    j.cs->fin(j.vals, n, depth, m, op == TC_OP_MEAN, o);
  } else if (rc == 0 && !arg) {
    col(j.vals, nl, m, m, o);
  } else if (rc == 0) {
    char *g = j.vals + (size_t)nl * j.vsize;
    int64_t *which = (int64_t *)(void *)(g + (size_t)nl * (size_t)m * es);
    const int64_t *k = (const int64_t *)(const void *)j.vals;
    for (int t = 0; t < nl; t++)
      for (int64_t q = 0; q < m; q++)
        memcpy(g + ((size_t)t * (size_t)m + (size_t)q) * es, x + ((leaves[t].off + k[t * m + q]) * s + q) * (int64_t)es, es);
    col(g, nl, m, m, (char *)which);
    for (int64_t q = 0; q < m; q++) PTR(int64_t, o)[q] = leaves[which[q]].off + k[which[q] * m + q];
  }
  free(j.vals);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

/* ---- running ---- */
typedef struct {
  red_fn fn;
  col_fn col;           /* the memory-order kernel for neighbouring runs, or NULL */
  ext1_fn ext;          /* max/min/argmax/argmin of a contiguous run, or NULL */
  bool want_max, arg;
  int64_t n, rstride;   /* the reduced run: length and stride in elements */
  size_t esize, osize;
} red_ctx;

static int red_row(void *ctx_, int64_t pos, int64_t cnt, char *const *p, const int64_t *s) {
  const red_ctx *ctx = ctx_;
  (void)pos;
  if (ctx->col && s[1] == 1 && ctx->rstride != 1 && cnt > 1 && ctx->n > 0) {
    ctx->col(p[1], ctx->n, ctx->rstride, cnt, p[0]);
    return tc_interrupt_flag ? 1 : 0;
  }
  /* progress: runs shorter than CPU_POLL report nothing themselves, so
   * they are counted here, some millions of elements at a time (the task
   * reports the rest: cpu_plan_run_units) */
  int64_t pending = 0, each = ctx->n < CPU_POLL ? ctx->n : 0;
  for (int64_t j = 0; j < cnt && !tc_interrupt_flag; j++) {
    const char *x = p[1] + j * s[1] * (int64_t)ctx->esize;
    char *o = p[0] + j * (int64_t)ctx->osize;
    if (ctx->ext && ctx->rstride == 1 && ctx->n > 1) {
      int64_t k = ctx->ext(x, ctx->n, ctx->want_max, ctx->arg ? NULL : o);
      if (ctx->arg) *PTR(int64_t, o) = k;
    } else {
      ctx->fn(x, ctx->n, ctx->rstride, o);
    }
    cpu_progress_note(&pending, each);
  }
  return tc_interrupt_flag ? 1 : 0;
}

/* count_nonzero of 1-byte elements (bool, i8, u8): counted a block at a
 * time in 32-bit lanes, which vectorise where 64-bit ones from bytes do
 * not; the same count. */
static void count_bytes(const char *x_, int64_t n, int64_t s, char *o) {
  const uint8_t *x = CPTR(uint8_t, x_);
  int64_t total = 0;
  for (int64_t lo = 0; lo < n && !cpu_stop(lo); lo += 1 << 16) {
    int64_t hi = n - lo < (1 << 16) ? n : lo + (1 << 16);
    uint32_t c = 0;
    if (s == 1) { for (int64_t j = lo; j < hi; j++) c += x[j] != 0; }
    else { for (int64_t j = lo; j < hi; j++) c += x[j * s] != 0; }
    total += c;
  }
  *PTR(int64_t, o) = total;
}

/* any and all of 1-byte elements: blocks of byte lanes, stopping after the
 * first block that settles the answer. */
#define K_ANYALL_BYTES(NAME, INIT, OP, DONE) \
  static void NAME(const char *x_, int64_t n, int64_t s, char *o) { \
    const uint8_t *x = CPTR(uint8_t, x_); \
    uint8_t acc = INIT; \
    for (int64_t lo = 0; lo < n && !(DONE) && !cpu_stop(lo); lo += 4096) { \
      int64_t hi = n - lo < 4096 ? n : lo + 4096; \
      if (s == 1) { for (int64_t j = lo; j < hi; j++) acc OP (uint8_t)(x[j] != 0); } \
      else { for (int64_t j = lo; j < hi; j++) acc OP (uint8_t)(x[j * s] != 0); } \
    } \
    *PTR(uint8_t, o) = acc; \
  }
K_ANYALL_BYTES(any_bytes, 0, |=, acc)
K_ANYALL_BYTES(all_bytes, 1, &=, !acc)

/* ---- max, min, argmax, argmin of one long contiguous run across threads:
 * each task finds its chunk's answer; they combine in chunk order with the
 * scan's rules (the first chunk with a NaN wins, else the first strictly
 * better value), so any thread count gives the one-thread answer. */
typedef struct { const red_ctx *r; const char *x; int64_t per; int64_t *k; } ext_job;

static int ext_task(void *ctx, int t, int w) {
  const ext_job *j = ctx;
  (void)w;
  int64_t lo = t * j->per, n = j->r->n - lo < j->per ? j->r->n - lo : j->per;
  _Alignas(8) char val[8];   /* for max/min, the chunk's value rule (its last zero) */
  int64_t mark = tc_progress_mark();
  int64_t k = j->r->ext(j->x + lo * (int64_t)j->r->esize, n, j->r->want_max, j->r->arg ? NULL : val);
  tc_progress_upto(mark, n);
  j->k[t] = k < 0 ? -1 : lo + k;
  return tc_interrupt_flag ? -1 : 0;
}

/* One long run of n elements cut for the threads: at most 64 chunks of
 * *per elements (a multiple of align), one round of equal chunks when there
 * would be fewer than two a thread; the number of chunks. */
static int long_run_chunks(int64_t n, int64_t align, int64_t *per) {
  int64_t tasks = cpu_split(n, CPU_PAR_MIN / 2), nth = cpu_threads();
  if (tasks > nth && tasks < 2 * nth) tasks = nth;
  if (tasks > 64) tasks = 64;
  *per = ((n + tasks - 1) / tasks + align - 1) / align * align;
  return (int)((n + *per - 1) / *per);
}

static int ext_par(tc_call *c, const red_ctx *r, const char *x, tc_err *err) {
  int64_t per, ks[64];
  int nt = long_run_chunks(r->n, 256, &per);
  ext_job j = {r, x, per, ks};
  if (cpu_parallel(nt, ext_task, &j) < 0) return cpu_interrupted(err);
  /* the chunks' answers, as a run of their own: its answer is the answer */
  _Alignas(8) char vals[64 * 8];
  for (int t = 0; t < nt; t++)   /* a chunk of NaN alone (the nan forms: -1) gives its first, a NaN */
    memcpy(vals + t * (int64_t)r->esize, x + (ks[t] < 0 ? t * per : ks[t]) * (int64_t)r->esize, r->esize);
  char *o = tc_tensor_data(c->out);
  int64_t t = r->ext(vals, nt, r->want_max, r->arg ? NULL : o);
  if (r->arg) *PTR(int64_t, o) = t < 0 ? -1 : ks[t];
  return 0;
}

/* ---- count_nonzero of one long run: chunks across threads, the counts
 * added (an integer sum: any grouping gives the one count) ---- */
typedef struct { red_fn fn; const char *x; int64_t n, s, per; size_t es; int64_t *cnt; } count_job;

static int count_task(void *ctx, int t, int w) {
  const count_job *j = ctx;
  (void)w;
  int64_t lo = t * j->per, m = j->n - lo < j->per ? j->n - lo : j->per, mark = tc_progress_mark();
  j->fn(j->x + lo * j->s * (int64_t)j->es, m, j->s, (char *)&j->cnt[t]);
  tc_progress_upto(mark, m);
  return tc_interrupt_flag ? -1 : 0;
}

static int count_par(tc_call *c, red_fn fn, const char *x, int64_t n, int64_t s, tc_err *err) {
  int64_t per, cnt[64];
  int nt = long_run_chunks(n, 1, &per);
  count_job j = {fn, x, n, s, per, tc_dtype_size(c->dtype), cnt};
  if (cpu_parallel(nt, count_task, &j) < 0) return cpu_interrupted(err);
  int64_t total = 0;
  for (int t = 0; t < nt; t++) total += cnt[t];
  memcpy(tc_tensor_data(c->out), &total, sizeof total);
  return 0;
}

/* nanmean of f32 and f64: the nansum (pairwise, a NaN read as 0, as
 * above) of each output over the count of its elements that are not NaN
 * (an isnan pass counted), divided in f64 and rounded once: NumPy's
 * definition (nansum / count), and without NaNs the bits of mean. The
 * table's fold, a compensated sum and a count one element at a time,
 * took 177 us for 10^5 f64 (now 22), NumPy 127; it stays for bf16 and f16, whose
 * nansum would be rounded to 16 bits before the division. */
#define K_NMEAN_DIV(E, n_, S, C, CLS, B, LD, ST, ...) \
  static void nmean_div_##E(char *o_, const int64_t *nan, int64_t m, int64_t n) { \
    S *o = PTR(S, o_); \
    for (int64_t i = 0; i < m; i++) o[i] = tc_fromd_##E((double)LD(o[i]) / (double)(n - nan[i])); \
  }
K_NMEAN_DIV(F32, 0, float, float, FLT, 32, TC_ID, TC_ID, _)
K_NMEAN_DIV(F64, 0, double, double, FLT, 64, TC_ID, TC_ID, _)
static void (*const nmean_div[TC_DT_COUNT])(char *, const int64_t *, int64_t, int64_t) = {
    [TC_DT_F32] = nmean_div_F32, [TC_DT_F64] = nmean_div_F64};

static int reduce_run(tc_call *c, tc_err *err);
static int nanmean_flt(tc_call *c, tc_err *err) {
  tc_tensor *x = c->in[0];
  int64_t n = 0;
  if (!tc_shape_numel(c->nred, x->shape + (x->ndim - c->nred), &n)) n = 0;
  tc_call sum = *c;
  sum.op = TC_OP_NANSUM;
  if (reduce_run(&sum, err) != 0) return -1;
  tc_tensor *isnan_ = tc_tensor_new(TC_DT_BOOL, x->ndim, x->shape, err);
  tc_tensor *cnt = isnan_ ? tc_tensor_new(TC_DT_I64, c->out->ndim, c->out->shape, err) : NULL;
  int rc = -1;
  if (cnt) {
    tc_call e = {.kind = TC_CALL_EW, .op = TC_OP_ISNAN, .dtype = c->dtype, .nin = 1, .in = {x}, .out = isnan_};
    tc_call k = {.kind = TC_CALL_REDUCE, .op = TC_OP_COUNT_NONZERO, .dtype = TC_DT_BOOL, .nin = 1, .in = {isnan_},
                 .out = cnt, .nred = c->nred};
    if (n == 0) memset(tc_tensor_data(cnt), 0, sizeof(int64_t) * (size_t)tc_numel(cnt));   /* 0 / 0: NaN */
    if (n == 0 || (cpu_run_ew(&e, err) == 0 && reduce_run(&k, err) == 0)) {
      nmean_div[c->dtype](tc_tensor_data(c->out), CPTR(int64_t, tc_tensor_data(cnt)), tc_numel(c->out), n);
      rc = 0;
    }
  }
  tc_tensor_free(cnt);
  tc_tensor_free(isnan_);
  return rc;
}

/* The reduced dims of c's input as one strided run of *n elements
 * (*rstride apart), or of a contiguous copy (*tmp, to free) when they do
 * not merge into one. NULL on failure. */
static tc_tensor *reduce_input(tc_call *c, tc_tensor **tmp, int64_t *n, int64_t *rstride, tc_err *err) {
  tc_tensor *x = c->in[0];
  int nk = x->ndim - c->nred, last = -1;
  bool single = true;
  *tmp = NULL;
  *rstride = 1;
  /* when some reduced dim is 0 the others may be huge: n is 0 then */
  if (!tc_shape_numel(c->nred, x->shape + nk, n)) *n = 0;
  for (int d = nk; d < x->ndim && *n > 0; d++) {
    if (x->shape[d] == 1) continue;
    if (last >= 0 && x->strides[last] != x->strides[d] * x->shape[d]) single = false;
    last = d;
  }
  if (last >= 0) *rstride = x->strides[last];
  if (single || *n == 0) return x;
  *rstride = 1;
  return *tmp = tc_contiguous(x, err);
}

/* A reduction to few outputs split across threads in its own way (a
 * pairwise tree, logsumexp's chunks, counts, extremes, column strips), or
 * 1 when none applies and the rows are to be folded apart. */
static int reduce_split(tc_call *c, const red_ctx *ctx, col_fn split_col, bool next, tc_tensor *x, tc_err *err) {
  tc_op op = c->op;
  int64_t nout = tc_numel(c->out), n = ctx->n, rstride = ctx->rstride;
  int nk = x->ndim - c->nred;
  bool par = cpu_threads() > 1;
  const char *data = tc_tensor_data(x);
  if (nout == 1 && n >= CPU_PAR_MIN && (op == TC_OP_REDUCE_SUM || op == TC_OP_MEAN || op == TC_OP_NANSUM) &&
      tree_of(op, c->dtype)->task)
    return tree_sum(c, data, n, rstride, err);
  if (op == TC_OP_LOGSUMEXP && lse_table[c->dtype].run && nout == 1 && n >= CPU_PAR_MIN && par)
    return lse_split(c, &lse_table[c->dtype], data, n, rstride, 0, cpu_split(n, CPU_PAR_MIN / 2), err);
  if (nout == 1 && op == TC_OP_COUNT_NONZERO && n >= CPU_PAR_MIN && par) return count_par(c, ctx->fn, data, n, rstride, err);
  if (nout == 1 && ctx->ext && rstride == 1 && n >= CPU_PAR_MIN && par) return ext_par(c, ctx, data, err);
  /* logsumexp of columns fewer than a strip a thread, rows of 2 chunks or more (at most 2^22 chunks' answers) */
  if (op == TC_OP_LOGSUMEXP && ctx->col && rstride != 1 && par && n > LSE_CHUNK && n * nout >= CPU_PAR_MIN &&
      nout < LSE_COLW * cpu_threads() && (n / LSE_CHUNK + 1) * nout <= ((int64_t)1 << 22) && kept_is_row(x, nk))
    return lse_split(c, &lse_table[c->dtype], data, n, rstride, nout, INT64_MAX, err);
  if (split_col && !next && rstride != 1 && n >= 256 && par && n * nout >= CPU_PAR_MIN && kept_is_row(x, nk) &&
      nout >= 8 && nout <= colsplit_cols(c))
    return colsplit(c, split_col, data, n, rstride, nout, err);
  return 1;
}

/* Each output's run folded apart, outputs shared across threads. */
static int reduce_rows(tc_call *c, red_ctx *ctx, tc_tensor *x, tc_err *err) {
  int64_t nout = tc_numel(c->out), n = ctx->n;
  tc_tensor kept = *x;
  kept.ndim = x->ndim - c->nred;
  tc_tensor *ins[1] = {&kept};
  cpu_plan plan;
  cpu_plan_init(&plan, c->out, 1, ins);
  /* outputs per task: 2^15 elements' worth, as an elementwise op's (logsumexp's
   * column kernel: a strip, or the columns shared evenly when fewer) */
  int64_t per = n > 0 ? CPU_PAR_MIN / 2 / n : CPU_PAR_MIN / 2;
  if (c->op == TC_OP_LOGSUMEXP && ctx->rstride != 1) {
    int64_t even = (nout + cpu_threads() - 1) / cpu_threads();
    per = per > LSE_COLW || per > even ? per : even < LSE_COLW ? even : LSE_COLW;
  }
  int rc = cpu_plan_run_units(&plan, nout, cpu_even_min(nout, per > 0 ? per : 1), red_row, ctx, n);
  return rc != 0 && tc_interrupt_flag ? cpu_interrupted(err) : 0;
}

static int reduce_run(tc_call *c, tc_err *err) {
  tc_op op = c->op;
  red_fn fn = red_table[op][c->dtype];
  if (!fn) return tc_err_set(err, TC_E_DTYPE, (int)op, (int)c->dtype, "not supported on cpu");
  tc_tensor *tmp;
  int64_t n, rstride;
  tc_tensor *x = reduce_input(c, &tmp, &n, &rstride, err);
  if (!x) return -1;
  if (op == TC_OP_NANSUM && nansum_run[c->dtype]) fn = nansum_run[c->dtype];
  if (op == TC_OP_LOGSUMEXP && lse_table[c->dtype].run) fn = lse_table[c->dtype].run;
  bool ext = op == TC_OP_REDUCE_MAX || op == TC_OP_REDUCE_MIN || op == TC_OP_ARGMAX || op == TC_OP_ARGMIN;
  bool next = op == TC_OP_NANMAX || op == TC_OP_NANMIN || op == TC_OP_NANARGMAX || op == TC_OP_NANARGMIN;
  /* integers hold no NaN: their nan forms are the plain ones */
  ext1_fn extf = ext ? ext1_table[c->dtype] : next ? (next1_table[c->dtype] ? next1_table[c->dtype] : ext1_table[c->dtype]) : NULL;
  if (tc_dtype_size(x->dtype) == 1)   /* bool, i8, u8: byte lanes */
    fn = op == TC_OP_COUNT_NONZERO ? count_bytes : op == TC_OP_ANY ? any_bytes : op == TC_OP_ALL ? all_bytes : fn;
  /* the memory-order kernel: one whose answers for runs of rows fold into
   * the whole column's (split_col: an integer nansum is the sum), else the
   * table's fold in index order */
  col_fn split_col = col_table[op == TC_OP_NANSUM && tc_dtype_class(c->dtype) != TC_CLASS_FLT ? TC_OP_REDUCE_SUM : op][c->dtype];
  red_ctx ctx = {fn, split_col ? split_col : colfold_table[op][c->dtype], extf,
                 op == TC_OP_REDUCE_MAX || op == TC_OP_ARGMAX || op == TC_OP_NANMAX || op == TC_OP_NANARGMAX,
                 op == TC_OP_ARGMAX || op == TC_OP_ARGMIN || op == TC_OP_NANARGMAX || op == TC_OP_NANARGMIN,
                 n, rstride, tc_dtype_size(x->dtype), tc_dtype_size(c->out->dtype)};
  int rc = reduce_split(c, &ctx, split_col, next, x, err);
  if (rc == 1) rc = reduce_rows(c, &ctx, x, err);
  tc_tensor_free(tmp);
  return rc;
}

/* A reduction is a progress job (src/progress.c) of the elements it reads;
 * one of fewer than 2^22 elements opens a silent one, which is never shown
 * and keeps its reports from counting in a job around it. */
int cpu_run_reduce(tc_call *c, tc_err *err) {
  int64_t n = tc_numel(c->in[0]);
  bool nanmean = c->op == TC_OP_NANMEAN && nmean_div[c->dtype];   /* two reductions: n elements each */
  tc_progress_begin(n >= CPU_POLL ? tc_op_name(c->op) : NULL, nanmean && n < INT64_MAX / 2 ? 2 * n : n,
                    TC_PROGRESS_ELEMENTS);
  int rc = nanmean ? nanmean_flt(c, err) : reduce_run(c, err);
  tc_progress_end();
  return rc;
}

/* ---- pre-check scan ---- */
/* Unit stride: blocks are tested whole (a loop that vectorises), and only a
 * block with a hit is scanned for its first one. */
/* NEG and RANGE by signedness: src/kexpr.h */
#define FIND_NEG_INT(v) TC_FIND_NEG_INT(v)
#define FIND_NEG_UINT(v) TC_FIND_NEG_UINT(v)
#define FIND_OUT_INT(v) TC_FIND_OUT_INT(v, lo, hi)
#define FIND_OUT_UINT(v) TC_FIND_OUT_UINT(v, lo, hi)
#define FIND_HIT(CLS, v) (pred == TC_PRED_ZERO ? (v) == 0 : pred == TC_PRED_NEG ? FIND_NEG_##CLS(v) : FIND_OUT_##CLS(v))
#define K_FIND(E, n_, S, C, CLS, ...) \
  CPU_CLONES static int64_t find_##E(const char *x_, int64_t n, int64_t s, tc_pred pred, int64_t lo, int64_t hi) { \
    const S *x = CPTR(S, x_); \
    if (s == 1) { \
      for (int64_t i0 = 0; i0 < n; i0 += 256) { \
        int64_t m = n - i0 < 256 ? n - i0 : 256; \
        int hit = 0; \
        if (pred == TC_PRED_ZERO) { for (int64_t i = 0; i < m; i++) hit |= x[i0 + i] == 0; } \
        else if (pred == TC_PRED_NEG) { for (int64_t i = 0; i < m; i++) hit |= FIND_NEG_##CLS(x[i0 + i]); } \
        else { for (int64_t i = 0; i < m; i++) hit |= FIND_OUT_##CLS(x[i0 + i]); } \
        if (!hit) continue; \
        for (int64_t i = 0; i < m; i++) \
          if (FIND_HIT(CLS, x[i0 + i])) return i0 + i; \
      } \
      return -1; \
    } \
    for (int64_t i = 0; i < n; i++) if (FIND_HIT(CLS, x[i * s])) return i; \
    return -1; \
  }
TC_FOR_INT(K_FIND, _)
typedef int64_t (*find_fn)(const char *, int64_t, int64_t, tc_pred, int64_t, int64_t);
#define F_ENTRY(E, ...) [TC_DT_##E] = find_##E,
static const find_fn find_table[TC_DT_COUNT] = {TC_FOR_INT(F_ENTRY, _)};

/* Threads scan their own ranges; the smallest index found wins. A hit stops
 * the tasks after it that have not started, never those before. */
typedef struct { find_fn fn; tc_pred pred; _Atomic int64_t found; int64_t lo, hi; } find_ctx;

static int find_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  find_ctx *ctx = ctx_;
  int64_t i = ctx->fn(p[0], n, s[0], ctx->pred, ctx->lo, ctx->hi);
  if (i < 0) return 0;
  int64_t at = pos + i, cur = atomic_load(&ctx->found);
  while ((cur < 0 || at < cur) && !atomic_compare_exchange_weak(&ctx->found, &cur, at)) {}
  return 1;
}

/* The pre-check scans run over the signed integer dtypes. */
bool cpu_supports_find(const tc_call *c) { return tc_dtype_class(c->dtype) == TC_CLASS_INT; }

int cpu_run_find(tc_call *c, tc_err *err) {
  find_ctx ctx = {find_table[c->dtype], c->pred, -1, c->lo, c->hi};
  if (!ctx.fn) return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported on cpu");
  cpu_plan plan;
  cpu_plan_init(&plan, c->in[0], 0, NULL);
  int rc = cpu_plan_run_par(&plan, tc_numel(c->in[0]), CPU_PAR_MIN / 2, find_row, &ctx);
  if (rc < 0) return cpu_interrupted(err);
  c->found = atomic_load(&ctx.found);
  return 0;
}
