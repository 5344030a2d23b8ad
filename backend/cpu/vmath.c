/* Vectorised math functions for f32 and f64 on the CPU: SLEEF's 1.0-ulp
 * (u10) functions, 16 or 8 lanes with AVX-512, 8 or 4 with AVX2 and FMA,
 * one at a time otherwise, chosen at run time with the matrix kernels'
 * level (cpu_matmul_isa). SLEEF computes the same algorithm in every
 * width, and the FMA variants agree bit for bit (tests/unit/test_vmath.c
 * checks every path the CPU has against the others), so results depend
 * neither on the level nor on the thread count. On a CPU without FMA the
 * scalar path is SLEEF's non-FMA one.
 *
 * Where a SLEEF function leaves its 1-ulp range (sinh and cosh overflow
 * early, log1p of huge x is inf, and a few tiny arguments are 1 ulp off),
 * the few elements out there are redone in wider precision, the
 * same way on every path. sin, cos and tan are vtrig.c's (one argument
 * reduction for every lane, where SLEEF's depends on the whole vector), in
 * this file's table and paths. rsqrt is 1/sqrt with one Newton step computed
 * exactly with FMA (f64), or 1/sqrt in f64 rounded once to f32. The
 * unvectorised functions (hypot and the rest) stay in backend/ew.def; pow
 * and atan2 have two-operand kernels below. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VM_X86 1
#include <immintrin.h>
#define TGT_512 __attribute__((target("avx512f,fma")))
#define TGT_256 __attribute__((target("avx2,fma")))
#define TGT_FMA __attribute__((target("fma")))
#else
#define VM_X86 0
#endif
#define TGT_BASE

/* op, SLEEF's name stem; every one is its u10 (1.0 ulp) variant */
#define VM_FUNCS(X) \
  X(EXP, exp) X(LOG, log) X(LOG2, log2) X(LOG10, log10) X(LOG1P, log1p) X(EXPM1, expm1) X(CBRT, cbrt) \
  X(ASIN, asin) X(ACOS, acos) X(ATAN, atan) X(SINH, sinh) X(COSH, cosh) X(TANH, tanh) X(ERF, erf)
/* vtrig.c's (cpu_vtrig_kernel) */
#define VM_TRIG(X) X(SIN, sin) X(COS, cos) X(TAN, tan)

/* SLEEF's prototypes, declared here with the target each needs (sleef.h
 * declares the wide ones only when the whole file is built for them). */
#if VM_X86
#define VM_DECL(OP, F) \
  TGT_512 __m512d Sleef_##F##d8_u10avx512f(__m512d); TGT_512 __m512 Sleef_##F##f16_u10avx512f(__m512); \
  TGT_256 __m256d Sleef_##F##d4_u10avx2(__m256d); TGT_256 __m256 Sleef_##F##f8_u10avx2(__m256); \
  double Sleef_##F##d1_u10purecfma(double); float Sleef_##F##f1_u10purecfma(float);
VM_FUNCS(VM_DECL)
#endif
#define VM_DECL1(OP, F) double Sleef_##F##d1_u10purec(double); float Sleef_##F##f1_u10purec(float);
VM_FUNCS(VM_DECL1)

/* ---- fix-ups outside SLEEF's 1-ulp range ---- */
/* The x vm_fix replaces are 0 < |x| < tiny and finite |x| > huge (NaN is
 * neither); the kernels test a whole block against the same bounds first. */
static inline void vm_fix_range(tc_op op, bool f32, double *tiny, double *huge) {
  *tiny = 0;
  *huge = INFINITY;
  switch (op) {
  case TC_OP_SINH: *tiny = f32 ? 0x1p-12 : 0x1p-27; *huge = f32 ? 88.0 : 709.0; break;
  case TC_OP_COSH: *huge = f32 ? 88.0 : 709.0; break;
  case TC_OP_TANH: *tiny = f32 ? 0x1p-12 : 0x1p-27; break;
  case TC_OP_ERF: *tiny = f32 ? 0x1p-14 : 0; break;
  case TC_OP_LOG1P: *tiny = f32 ? 0x1p-25 : 0x1p-54; *huge = f32 ? 1e30 : 1e300; break;
  default: break;
  }
}

/* Where SLEEF's result for x is replaced, *r is the replacement (in the
 * element's precision or better) and the answer true. Each case is a
 * scalar computation, the same on every path:
 * - sinh, cosh where e^|x| overflows but the result does not (SLEEF
 *   returns inf beyond |x| = 709 in f64, 88 in f32): e^(|x| - ln 2), in
 *   long double (64-bit significand) for f64, in f64 for f32;
 * - log1p of huge x (SLEEF returns inf): log(x), which differs by 1/x;
 * - sinh, tanh of tiny x (SLEEF's f32 sinh and tanh are 1 ulp off near
 *   2^-24): x, within x^2/3;
 *   log1p of tiny x (flushed): x, within x/2; f32 erf of tiny x (1.05
 *   ulp off near the subnormals): 2x/sqrt(pi) in f64. */
static inline bool vm_fix(tc_op op, double x, bool f32, double *r) {
  double ax = fabs(x), tiny, huge;
  vm_fix_range(op, f32, &tiny, &huge);
  if (ax < tiny && x != 0) {
    *r = op == TC_OP_ERF ? x * 1.1283791670955125739 : x;
    return true;
  }
  if (!(ax > huge && ax <= DBL_MAX)) return false;
  if (op == TC_OP_LOG1P) {
    if (x < 0) return false;
    *r = log(x);
    return true;
  }
  /* sinh, cosh */
  double e = f32 ? exp(ax - 0.693147180559945309417232121458176568)
                 : (double)expl((long double)ax - 0.693147180559945309417232121458176568L);
  *r = op == TC_OP_SINH && x < 0 ? -e : e;
  return true;
}

/* ---- kernels ---- */
/* d[0..W) = f(s[0..W)) */
#define VM_VEC(VT, CALL, d, s) \
  do { \
    VT v_, r_; \
    memcpy(&v_, s, sizeof v_); \
    r_ = vm_canon_##VT(CALL(v_)); \
    memcpy(d, &r_, sizeof r_); \
  } while (0)

/* A vector of SLEEF's results with every NaN made the one quiet NaN
 * (+NAN), in registers: SLEEF's paths differ in NaN signs. Named by the
 * vector type, for the kernels' VT. */
#define VM_CANON(T, r) ((r) != (r) ? (T)NAN : (r))
static inline double vm_canon_double(double r) { return VM_CANON(double, r); }
static inline float vm_canon_float(float r) { return VM_CANON(float, r); }
#if VM_X86
TGT_512 static inline __m512d vm_canon___m512d(__m512d r) {
  return _mm512_mask_mov_pd(r, _mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q), _mm512_set1_pd((double)NAN));
}
TGT_512 static inline __m512 vm_canon___m512(__m512 r) {
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_set1_ps((float)NAN));
}
TGT_256 static inline __m256d vm_canon___m256d(__m256d r) {
  return _mm256_blendv_pd(r, _mm256_set1_pd((double)NAN), _mm256_cmp_pd(r, r, _CMP_UNORD_Q));
}
TGT_256 static inline __m256 vm_canon___m256(__m256 r) {
  return _mm256_blendv_ps(r, _mm256_set1_ps((float)NAN), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
#endif

/* Blocks of CPU_EW_BLOCK elements: a strided input is gathered into a buffer
 * first; the tail of a block goes through the same vector function with
 * its unused lanes zero, so every element sees the same code. Results
 * pass through vm_canon_* as they leave SLEEF. */
#define VM_STEP(d, s, VT, CALL, OP) VM_VEC(VT, CALL, d, s)
/* after a block, its elements in vm_fix_range's bounds redone by vm_fix */
#define VM_FIX(T, VT, CALL, OP) \
  double tiny_, huge_; \
  vm_fix_range(TC_OP_##OP, sizeof(T) == 4, &tiny_, &huge_); \
  int fix_ = 0; \
  for (int64_t k = 0; (tiny_ > 0 || huge_ < INFINITY) && k < n; k++) { \
    T x_ = src[k], ax_ = x_ < 0 ? -x_ : x_; \
    fix_ |= ((ax_ < (T)tiny_) & (x_ != 0)) | (ax_ > (T)huge_); \
  } \
  for (int64_t k = 0; fix_ && k < n; k++) { \
    double r; \
    if (vm_fix(TC_OP_##OP, (double)src[k], sizeof(T) == 4, &r)) o[i0 + k] = (T)r; \
  }
#define VM_KERNEL(NAME, TGT, T, W, VT, CALL, OP) \
  TGT static void NAME(int64_t len, char *o_, const char *a_, int64_t sa) { \
    CPU_VM_BLOCKS(T, CPU_EW_BLOCK, W, 1, CPU_VM_NONE, VM_STEP, VM_FIX, VT, CALL, OP) \
  }

#if VM_X86
#define VM_STAMP(OP, F) \
  VM_KERNEL(vm_##F##_d_avx512, TGT_512, double, 8, __m512d, Sleef_##F##d8_u10avx512f, OP) \
  VM_KERNEL(vm_##F##_f_avx512, TGT_512, float, 16, __m512, Sleef_##F##f16_u10avx512f, OP) \
  VM_KERNEL(vm_##F##_d_avx2, TGT_256, double, 4, __m256d, Sleef_##F##d4_u10avx2, OP) \
  VM_KERNEL(vm_##F##_f_avx2, TGT_256, float, 8, __m256, Sleef_##F##f8_u10avx2, OP) \
  VM_KERNEL(vm_##F##_d_fma, TGT_FMA, double, 1, double, Sleef_##F##d1_u10purecfma, OP) \
  VM_KERNEL(vm_##F##_f_fma, TGT_FMA, float, 1, float, Sleef_##F##f1_u10purecfma, OP)
VM_FUNCS(VM_STAMP)
#endif
#define VM_STAMP1(OP, F) \
  VM_KERNEL(vm_##F##_d_base, TGT_BASE, double, 1, double, Sleef_##F##d1_u10purec, OP) \
  VM_KERNEL(vm_##F##_f_base, TGT_BASE, float, 1, float, Sleef_##F##f1_u10purec, OP)
VM_FUNCS(VM_STAMP1)

/* rsqrt: y = 1/sqrt(x), then y + y/2 * (1 - x*y*y) with x*y split
 * exactly into p + q by FMA, so that the correction is computed to far
 * below an ulp and the result is rounded once more; 0, inf, NaN and
 * negative x keep 1/sqrt(x). f32 the same in f32 (16 lanes with AVX-512,
 * where 1/sqrt in f64 rounded to f32 had 8). Without FMA the same formula
 * runs through libm's fma (exact, so the same bits).
 * A NaN (of NaN or negative x) is the quiet NaN, as SLEEF's are made. */
/* T the type, S its sqrt, F its fma */
#define RSQRT(TGT, NAME, T, S, F) \
  TGT static void NAME(int64_t len, char *o_, const char *a_, int64_t sa) { \
    T *o = (T *)(void *)o_; \
    const T *a = (const T *)(const void *)a_; \
    for (int64_t i = 0; i < len; i++) { \
      T x = a[i * sa], y = 1 / S(x); \
      T p = x * y, q = F(x, y, -p); \
      T r = F(-p, y, 1) - q * y; \
      T z = F(y / 2, r, y); \
      o[i] = y != 0 && y - y == 0 ? z : vm_canon_##T(y); \
    } \
  }
#define RSQRT_D(TGT, NAME) RSQRT(TGT, NAME, double, sqrt, fma)
#define RSQRT_F(TGT, NAME) RSQRT(TGT, NAME, float, sqrtf, fmaf)
#if VM_X86
RSQRT_D(TGT_512, rsqrt_d_avx512)
RSQRT_F(TGT_512, rsqrt_f_avx512)
RSQRT_D(TGT_256, rsqrt_d_avx2)
RSQRT_F(TGT_256, rsqrt_f_avx2)
RSQRT_D(TGT_FMA, rsqrt_d_fma)
RSQRT_F(TGT_FMA, rsqrt_f_fma)
#endif
RSQRT_D(TGT_BASE, rsqrt_d_base)
RSQRT_F(TGT_BASE, rsqrt_f_base)

/* sigmoid: backend/ew.def's formula, 1 / (1 + e) for x >= 0 and e / (1 + e)
 * below, e = exp(-|x|), in f64 (rounded once for f32) with the path's f64
 * exp kernel on a block at a time (the scalar one called libm's exp for
 * each element: 10^5 f64 took 345 us, NumPy's 1 / (1 + exp(-x)) 126). */
#define SIGMOID_K(TGT, P, S, SUF) \
  TGT static void sigmoid_##SUF##_##P(int64_t len, char *o_, const char *a_, int64_t sa) { \
    S *o = (S *)(void *)o_; \
    const S *a = (const S *)(const void *)a_; \
    double t[CPU_EW_BLOCK], e[CPU_EW_BLOCK]; \
    for (int64_t i0 = 0; i0 < len; i0 += CPU_EW_BLOCK) { \
      int64_t n = len - i0 < CPU_EW_BLOCK ? len - i0 : CPU_EW_BLOCK; \
      for (int64_t k = 0; k < n; k++) { \
        double x = a[(i0 + k) * sa]; \
        t[k] = x < 0 ? x : -x; \
      } \
      vm_exp_d_##P(n, (char *)e, (const char *)t, 1); \
      for (int64_t k = 0; k < n; k++) { \
        double x = a[(i0 + k) * sa]; \
        o[i0 + k] = (S)(x >= 0 ? 1 / (1 + e[k]) : e[k] / (1 + e[k])); \
      } \
    } \
  }
#define SIGMOID_PATH(TGT, P) SIGMOID_K(TGT, P, double, d) SIGMOID_K(TGT, P, float, f)
#if VM_X86
SIGMOID_PATH(TGT_512, avx512)
SIGMOID_PATH(TGT_256, avx2)
SIGMOID_PATH(TGT_FMA, fma)
#endif
SIGMOID_PATH(TGT_BASE, base)

/* Two-operand functions: SLEEF's u10 function of two blocks (a strided or
 * broadcast operand is gathered first; a tail goes through the same
 * vector function with its unused lanes 1 and 1). BCAST(T, y) may answer
 * a broadcast second operand y itself (and return); FIX(T, q, pa, pb, n,
 * sb) then mends a block's results q of operands pa, pb. A NaN result is
 * the one quiet NaN, as elsewhere.
 *
 * pow: SLEEF's pow overflows early (f64 results above 1.797690e308, f32's
 * largest finite): an infinite result of finite operands is redone by the
 * C library's f64 pow (rounded once for f32). Three exponents take the
 * correctly rounded value instead, element by element, whatever the
 * operands' layout: 2 is x * x (as backend/ew.def has it), -1 is 1 / x,
 * 0.5 is sqrt(x) (+0 for -0, +inf for -inf, as pow has them). A broadcast
 * exponent of one of those skips SLEEF altogether.
 * atan2: SLEEF's as it is (C99's special values, 1.0 ulp). */
#define VM_SQRT(T, x) (sizeof(T) == 4 ? (T)sqrtf((float)(x)) : (T)sqrt((double)(x)))
#define VM_POW_HALF(T, x) ((x) == -(T)INFINITY ? (T)INFINITY : VM_SQRT(T, x) + 0)
#define VM_POW_EXACT(T, x, y, r) ((y) == 2 ? (x) * (x) : (y) == -1 ? 1 / (x) : (y) == (T)0.5 ? VM_POW_HALF(T, x) : (r))
/* a broadcast exponent Y of the three, a constant in each loop */
#define VM_POW_EACH(T, Y) \
  { for (int64_t i = 0; i < len; i++) o[i] = VM_CANON(T, VM_POW_EXACT(T, a[i * sa], (T)(Y), (T)(Y))); return; }
#define VM_POW_BCAST(T, y) \
  if (y == 2) VM_POW_EACH(T, 2) \
  if (y == -1) VM_POW_EACH(T, -1) \
  if (y == (T)0.5) VM_POW_EACH(T, 0.5)
#define VM_POW_FIX(T, q, pa, pb, n, sb) \
  int hit = 0, big = 0; \
  for (int64_t k = 0; sb != 0 && k < n; k++) hit |= (pb[k] == 2) | (pb[k] == -1) | (pb[k] == (T)0.5); \
  for (int64_t k = 0; k < n; k++) big |= (q[k] == (T)INFINITY) | (q[k] == -(T)INFINITY); \
  for (int64_t k = 0; big && k < n; k++) \
    if ((q[k] == (T)INFINITY || q[k] == -(T)INFINITY) && pa[k] - pa[k] == 0 && pb[k] - pb[k] == 0) \
      q[k] = (T)pow((double)pa[k], (double)pb[k]); \
  for (int64_t k = 0; hit && k < n; k++) q[k] = VM_CANON(T, VM_POW_EXACT(T, pa[k], pb[k], q[k]));
#define VM_NO_BCAST(T, y)
#define VM_NO_FIX(T, q, pa, pb, n, sb)
#define VM_BSTEP(d, x, y, VT, CALL, FIX) \
  do { \
    VT va_, vb_, r_; \
    memcpy(&va_, x, sizeof va_); \
    memcpy(&vb_, y, sizeof vb_); \
    r_ = vm_canon_##VT(CALL(va_, vb_)); \
    memcpy(d, &r_, sizeof r_); \
  } while (0)
#define VM_BEND(T, VT, CALL, FIX) FIX(T, (o + i0), pa, pb, n, sb)
#define VM_BIN_KERNEL(NAME, TGT, T, W, VT, CALL, BCAST, FIX) \
  TGT static void NAME(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    T *o = (T *)(void *)o_; \
    const T *a = (const T *)(const void *)a_, *b = (const T *)(const void *)b_; \
    T ga[CPU_EW_BLOCK], gb[CPU_EW_BLOCK]; \
    if (sb == 0) { \
      T y = b[0]; \
      BCAST(T, y) \
      for (int k = 0; k < CPU_EW_BLOCK; k++) gb[k] = y; \
    } \
    CPU_VM_BIN_BLOCKS(T, CPU_EW_BLOCK, W, VM_BSTEP, VM_BEND, VT, CALL, FIX) \
  }
/* pow and atan2 of one path P: its target, the f64 lanes and vector type,
 * the f32 lanes and vector type, SLEEF's suffixes (f64, f32) */
#define VM_BIN_PATH(P, TGT, WD, VD, WF, VF, SD, SF) \
  VM_BIN_KERNEL(pow_d_##P, TGT, double, WD, VD, Sleef_powd##SD, VM_POW_BCAST, VM_POW_FIX) \
  VM_BIN_KERNEL(pow_f_##P, TGT, float, WF, VF, Sleef_powf##SF, VM_POW_BCAST, VM_POW_FIX) \
  VM_BIN_KERNEL(atan2_d_##P, TGT, double, WD, VD, Sleef_atan2d##SD, VM_NO_BCAST, VM_NO_FIX) \
  VM_BIN_KERNEL(atan2_f_##P, TGT, float, WF, VF, Sleef_atan2f##SF, VM_NO_BCAST, VM_NO_FIX)
#define VM_BIN_DECL(TGT, VD, VF, SD, SF) \
  TGT VD Sleef_powd##SD(VD, VD); \
  TGT VF Sleef_powf##SF(VF, VF); \
  TGT VD Sleef_atan2d##SD(VD, VD); \
  TGT VF Sleef_atan2f##SF(VF, VF);
#if VM_X86
VM_BIN_DECL(TGT_512, __m512d, __m512, 8_u10avx512f, 16_u10avx512f)
VM_BIN_DECL(TGT_256, __m256d, __m256, 4_u10avx2, 8_u10avx2)
VM_BIN_DECL(, double, float, 1_u10purecfma, 1_u10purecfma)
VM_BIN_PATH(avx512, TGT_512, 8, __m512d, 16, __m512, 8_u10avx512f, 16_u10avx512f)
VM_BIN_PATH(avx2, TGT_256, 4, __m256d, 8, __m256, 4_u10avx2, 8_u10avx2)
VM_BIN_PATH(fma, TGT_FMA, 1, double, 1, float, 1_u10purecfma, 1_u10purecfma)
#endif
VM_BIN_DECL(, double, float, 1_u10purec, 1_u10purec)
VM_BIN_PATH(base, TGT_BASE, 1, double, 1, float, 1_u10purec, 1_u10purec)

/* ---- the table: [path][op][0 f32, 1 f64] ---- */
typedef void (*vm_fn)(int64_t, char *, const char *, int64_t);
enum { VM_BASE = CPU_VM_BASE, VM_FMA = CPU_VM_FMA, VM_AVX2 = CPU_VM_AVX2, VM_AVX512 = CPU_VM_AVX512, VM_PATHS };
#define VM_ENTRY(OP, F, P) [TC_OP_##OP] = {vm_##F##_f_##P, vm_##F##_d_##P},
#define VM_ENTRIES(P) \
  VM_FUNCS_P(VM_ENTRY, P)[TC_OP_RSQRT] = {rsqrt_f_##P, rsqrt_d_##P}, [TC_OP_SIGMOID] = {sigmoid_f_##P, sigmoid_d_##P},
#define VM_FUNCS_P(M, P) \
  M(EXP, exp, P) M(LOG, log, P) M(LOG2, log2, P) M(LOG10, log10, P) M(LOG1P, log1p, P) M(EXPM1, expm1, P) \
  M(CBRT, cbrt, P) M(ASIN, asin, P) M(ACOS, acos, P) \
  M(ATAN, atan, P) M(SINH, sinh, P) M(COSH, cosh, P) M(TANH, tanh, P) M(ERF, erf, P)
static const vm_fn vm_table[VM_PATHS][TC_OP_COUNT][2] = {
  [VM_BASE] = {VM_ENTRIES(base)},
#if VM_X86
  [VM_FMA] = {VM_ENTRIES(fma)},
  [VM_AVX2] = {VM_ENTRIES(avx2)},
  [VM_AVX512] = {VM_ENTRIES(avx512)},
#endif
};
typedef void (*vm_fn2)(int64_t, char *, const char *, int64_t, const char *, int64_t);
/* [path][0 pow, 1 atan2][0 f32, 1 f64] */
#define VM_BIN_ENTRY(P) {{pow_f_##P, pow_d_##P}, {atan2_f_##P, atan2_d_##P}}
static const vm_fn2 vm_bin_table[VM_PATHS][2][2] = {
  [VM_BASE] = VM_BIN_ENTRY(base),
#if VM_X86
  [VM_FMA] = VM_BIN_ENTRY(fma),
  [VM_AVX2] = VM_BIN_ENTRY(avx2),
  [VM_AVX512] = VM_BIN_ENTRY(avx512),
#endif
};
static const char *const vm_names[VM_PATHS] = {"sleef-purec", "sleef-purecfma", "sleef-avx2", "sleef-avx512f"};

/* The path for the current level: the vector path of the matrix kernels'
 * level when it has FMA, else scalar (with FMA when the CPU has it). */
static int vm_path(void) {
#if VM_X86
  int l = cpu_matmul_isa(-1), f = cpu_float_isa();
  if (f == CPU_ISA_AVX512) return VM_AVX512;
  if (f == CPU_ISA_AVX2) return VM_AVX2;
  (void)l;
  return cpu_has_fma() ? VM_FMA : VM_BASE;
#else
  return VM_BASE;
#endif
}

/* f16 and bf16 go through the f32 kernel of the current path: a block is
 * widened to f32 (exactly), computed, and rounded once to the dtype, so the
 * result is within 0.5 ulp of the dtype plus the f32 kernel's 1 ulp of f32. */
/* f16 converts whole blocks with cpu_f16_to_f32 and cpu_f32_to_f16 (F16C
 * where the CPU has it: the same values; 10^5 f16 exp took 320 us in the
 * one-element conversions). */
#define VM_HALF_RUN(E, S, TOF, FROMF, BLOCK_TOF, BLOCK_FROMF) \
  static void vm_half_##E(tc_op op, int64_t len, char *o_, const char *a_, int64_t sa) { \
    S *o = (S *)(void *)o_; \
    const S *a = (const S *)(const void *)a_; \
    vm_fn f = cpu_vmath_kernel(op, TC_DT_F32); \
    void (*btof)(int64_t, char *, const char *) = BLOCK_TOF, (*bfromf)(int64_t, char *, const char *) = BLOCK_FROMF; \
    float in[CPU_EW_BLOCK], out[CPU_EW_BLOCK]; \
    for (int64_t i0 = 0; i0 < len; i0 += CPU_EW_BLOCK) { \
      int64_t n = len - i0 < CPU_EW_BLOCK ? len - i0 : CPU_EW_BLOCK; \
      if (btof && sa == 1) btof(n, (char *)in, (const char *)(a + i0)); \
      else for (int64_t k = 0; k < n; k++) in[k] = TOF(a[(i0 + k) * sa]); \
      f(n, (char *)out, (const char *)in, 1); \
      if (bfromf) bfromf(n, (char *)(o + i0), (const char *)out); \
      else for (int64_t k = 0; k < n; k++) o[i0 + k] = FROMF(out[k]); \
    } \
  }
VM_HALF_RUN(f16, tc_f16, tc_f16_to_f32, tc_f32_to_f16, cpu_f16_to_f32, cpu_f32_to_f16)
VM_HALF_RUN(bf16, tc_bf16, tc_bf16_to_f32, tc_f32_to_bf16, NULL, NULL)
#define VM_HALF_OP(OP, F) \
  static void vm_##F##_h16(int64_t len, char *o, const char *a, int64_t sa) { vm_half_f16(TC_OP_##OP, len, o, a, sa); } \
  static void vm_##F##_b16(int64_t len, char *o, const char *a, int64_t sa) { vm_half_bf16(TC_OP_##OP, len, o, a, sa); }
VM_FUNCS(VM_HALF_OP)
VM_TRIG(VM_HALF_OP)
#define VM_HALF_ENTRY(OP, F) [TC_OP_##OP] = {vm_##F##_h16, vm_##F##_b16},
static const vm_fn vm_half_table[TC_OP_COUNT][2] = {VM_FUNCS(VM_HALF_ENTRY) VM_TRIG(VM_HALF_ENTRY)};

cpu_vmath_fn cpu_vmath_kernel(tc_op op, tc_dtype dt) {
  if (op < 0 || op >= TC_OP_COUNT) return NULL;
  if (dt == TC_DT_F16 || dt == TC_DT_BF16) return vm_half_table[op][dt == TC_DT_BF16];
  if (dt != TC_DT_F32 && dt != TC_DT_F64) return NULL;
  /* tcalc's own kernel, where it has one: sin, cos and tan (vtrig.c), the
     others of vmath_own.c */
  cpu_vmath_fn own = cpu_vtrig_kernel(op, dt == TC_DT_F64, vm_path());
  if (!own) own = cpu_vmath_own(op, dt, vm_path());
  return own ? own : vm_table[vm_path()][op][dt == TC_DT_F64];
}

cpu_vmath_bin_fn cpu_vmath_bin_kernel(tc_op op, tc_dtype dt) {
  if ((op != TC_OP_POW && op != TC_OP_ATAN2) || (dt != TC_DT_F32 && dt != TC_DT_F64)) return NULL;
  cpu_vmath_bin_fn own = cpu_vmath_own_bin(op, dt, vm_path());
  return own ? own : vm_bin_table[vm_path()][op == TC_OP_ATAN2][dt == TC_DT_F64];
}

const char *cpu_vmath_path_name(void) { return vm_names[vm_path()]; }
