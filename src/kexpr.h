/* Scalar helpers that kernel expressions (backend/ew.def) are written in.
 * Plain C17 and CUDA C++ alike: every helper is TC_HD, and integer helpers
 * never overflow a signed type (they go through the unsigned type). */
#ifndef TC_KEXPR_H
#define TC_KEXPR_H
#include <stdint.h>
#include "half.h"
#ifndef __CUDACC__
#include <tgmath.h>
#endif

#define TC_ID(x) (x)

/* The wide unsigned type integer arithmetic wraps through: at least
 * `unsigned int`, so that no operand is promoted back to a signed int. */
typedef uint32_t tc_u_BOOL;
typedef uint32_t tc_u_I8;
typedef uint32_t tc_u_I16;
typedef uint32_t tc_u_I32;
typedef uint64_t tc_u_I64;
typedef uint32_t tc_u_BF16;  /* unused by float kernels, present so every */
typedef uint32_t tc_u_F16;   /* dtype names one */
typedef uint32_t tc_u_F32;
typedef uint64_t tc_u_F64;
typedef uint32_t tc_u_U8;
typedef uint32_t tc_u_U16;
typedef uint32_t tc_u_U32;
typedef uint64_t tc_u_U64;

/* Wrapping power by squaring, mod 2^64 (narrower types truncate after). */
TC_HD uint64_t tc_ipow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

/* The integer quotient of a and b (b != 0) of up to 32 bits, truncated
 * toward zero, computed in float up to 16 bits and in double up to 32,
 * which is exact: the rounding error of a / b is at most |a / b| times
 * 2^-24 (float) or 2^-53 (double), below 1 / |b| (the least distance from
 * a non-integer quotient to an integer) while |a| < 2^24 (2^53), and an
 * integer quotient is exact; so truncation gives the integer quotient. A
 * float or double division vectorises where an integer one does not, and
 * float's runs twice the lanes (i16 / 7 of 10^5: 15.8 us in double). */
#define TC_NARROW_QUOT(T, a, b) (sizeof(T) <= 2 ? (T)((float)(a) / (float)(b)) : (T)((double)(a) / (double)(b)))

/* Integer division truncating toward zero, b != 0 (the pre-check saw to
 * it), MIN / -1 = MIN; up to 32 bits as TC_NARROW_QUOT. */
#define TC_IDIV(T, U, a, b) \
  ((b) == -1 ? (T)(0 - (U)(a)) : sizeof(T) <= 4 ? TC_NARROW_QUOT(T, a, b) : (T)((a) / (b)))

/* The truncated remainder a - TC_IDIV(a, b) * b, from the quotient (so up
 * to 32 bits TC_NARROW_QUOT's float or double division, which vectorises,
 * and no other); 0 for b == -1. */
#define TC_IREM(T, U, a, b) ((b) == -1 ? (T)0 : (T)((a) - TC_IDIV(T, U, a, b) * (b)))

/* u32 to and from double through i32 (offset by 2^31), whose conversions
 * vectorise where the unsigned ones do not (AVX2 has none): exact; the
 * way back takes an integral value in [0, 2^32). u32 / 7 of 10^5: 50 us
 * through the unsigned conversions, against i32's 16. */
TC_HD double tc_u32_to_d(uint32_t a) { return (double)(int32_t)(a ^ 0x80000000u) + 2147483648.0; }
TC_HD uint32_t tc_d_to_u32(double t) { return (uint32_t)(int32_t)(t - 2147483648.0) ^ 0x80000000u; }

/* Floor division from the quotient q truncated toward zero: one less when
 * the division was inexact and the operands' signs differ (neg_a, neg_b:
 * whether each is negative). The one statement of the rule every engine's
 * floor_div (and the overflow policy's exact value of it) is written in. */
#define TC_FLOOR_ADJ(q, inexact, neg_a, neg_b) ((q) - ((inexact) & ((neg_a) != (neg_b))))

/* Unsigned division (b != 0), up to 32 bits as TC_NARROW_QUOT (u32: its
 * double quotient truncated first, then converted). */
#define TC_UDIV(T, a, b) \
  (sizeof(T) <= 2 ? TC_NARROW_QUOT(T, a, b) \
   : sizeof(T) == 4 ? (T)tc_d_to_u32(trunc(tc_u32_to_d((uint32_t)(a)) / tc_u32_to_d((uint32_t)(b)))) \
                    : (T)((a) / (b)))

/* The pre-check predicates by signedness (every engine's find scans): an
 * unsigned value is never negative, and meets a range [lo, hi] of int64s
 * as an unsigned number (a u64 above the i64 maximum is outside every
 * index range, not a negative index). */
#define TC_FIND_NEG_INT(v) ((v) < 0)
#define TC_FIND_NEG_UINT(v) ((void)(v), 0)
#define TC_FIND_OUT_INT(v, lo, hi) (((int64_t)(v) < (lo)) | ((int64_t)(v) > (hi)))
#define TC_FIND_OUT_UINT(v, lo, hi) \
  (((hi) < 0) | ((uint64_t)(v) > (uint64_t)(hi)) | (((lo) > 0) & ((uint64_t)(v) < (uint64_t)(lo))))

/* Float -> int: truncate, NaN -> 0, saturate beyond the range. */
TC_HD int64_t tc_sat_i64(double d, int64_t lo, int64_t hi) {
  if (d != d) return 0;
  if (d < (double)lo) return lo;
  if (d >= -(double)lo) return hi;   /* -(double)MIN is exactly MAX + 1 */
  return (int64_t)d;
}

/* Float -> unsigned: truncate, NaN -> 0, saturate beyond [0, hi]. */
TC_HD uint64_t tc_sat_u64(double d, uint64_t hi) {
  if (d != d || d <= -1) return 0;
  if (d >= (double)hi + 1.0 || d >= 18446744073709551616.0) return hi;
  return d < 0 ? 0 : (uint64_t)d;
}

/* NumPy's float %: the sign of the divisor. */
#define TC_DEF_FMOD_FLOOR(T, SUF) \
  TC_HD T tc_fmod_floor##SUF(T a, T b) { \
    T r = fmod(a, b); \
    if (r != 0) { if ((b < 0) != (r < 0)) r += b; } \
    else r = copysign((T)0, b); \
    return r; \
  }
TC_DEF_FMOD_FLOOR(float, _f)
TC_DEF_FMOD_FLOOR(double, _d)
#ifdef __CUDACC__
TC_HD float tc_fmod_floor(float a, float b) { return tc_fmod_floor_f(a, b); }
TC_HD double tc_fmod_floor(double a, double b) { return tc_fmod_floor_d(a, b); }
#else
#define tc_fmod_floor(a, b) _Generic((a), float: tc_fmod_floor_f, default: tc_fmod_floor_d)(a, b)
#endif

/* floor, ceil, trunc and rint (ties to even) written so that the CPU's
 * loops vectorise instead of calling libm per element: below 2^52 (2^23 for
 * float), adding and subtracting that power rounds |x| to an integer,
 * exactly, in the default (nearest) mode; from there up x is an integer
 * already, or inf or NaN, and is the result. Every result takes x's sign,
 * as the C functions' do (floor(-0.3) = -1, ceil(-0.3) = -0.0). The same
 * bits as the C functions; CUDA, and a build for SSE4.1 or above (the CPU's
 * AVX2 kernels), call those: they are instructions there. */
#if defined(__CUDACC__)
#define TC_DEF_ROUNDING(T, SUF, BIG) \
  TC_HD T tc_rint(T x) { return rint(x); } \
  TC_HD T tc_floor(T x) { return floor(x); } \
  TC_HD T tc_ceil(T x) { return ceil(x); } \
  TC_HD T tc_trunc(T x) { return trunc(x); }
#elif defined(__SSE4_1__)   /* <tgmath.h>: float or double by the argument */
#define TC_DEF_ROUNDING(T, SUF, BIG)
#define tc_rint(x) rint(x)
#define tc_floor(x) floor(x)
#define tc_ceil(x) ceil(x)
#define tc_trunc(x) trunc(x)
#else
#define TC_DEF_ROUNDING(T, SUF, BIG) \
  static inline T tc_rint##SUF(T x) { T a = fabs(x), r = (a + BIG) - BIG; return a < BIG ? copysign(r, x) : x; } \
  static inline T tc_floor##SUF(T x) { T r = tc_rint##SUF(x); return copysign(r > x ? r - 1 : r, x); } \
  static inline T tc_ceil##SUF(T x) { T r = tc_rint##SUF(x); return copysign(r < x ? r + 1 : r, x); } \
  static inline T tc_trunc##SUF(T x) { T a = fabs(x), r = tc_rint##SUF(a); return copysign(r > a ? r - 1 : r, x); }
#define tc_rint(x) _Generic((x), float: tc_rint_f, default: tc_rint_d)(x)
#define tc_floor(x) _Generic((x), float: tc_floor_f, default: tc_floor_d)(x)
#define tc_ceil(x) _Generic((x), float: tc_ceil_f, default: tc_ceil_d)(x)
#define tc_trunc(x) _Generic((x), float: tc_trunc_f, default: tc_trunc_d)(x)
#endif
TC_DEF_ROUNDING(float, _f, 0x1p23f)
TC_DEF_ROUNDING(double, _d, 0x1p52)

/* Exact conversions between a float dtype and double, and the one rounding
 * from double (or from an integer) into a dtype. */
TC_HD tc_bf16 tc_fromd_BF16(double d) { return tc_f64_to_bf16(d); }
TC_HD tc_f16 tc_fromd_F16(double d) { return tc_f64_to_f16(d); }
TC_HD float tc_fromd_F32(double d) { return (float)d; }
TC_HD double tc_fromd_F64(double d) { return d; }
TC_HD tc_bf16 tc_fromi_BF16(int64_t x) { return tc_f64_to_bf16(tc_i64_to_f64_odd(x)); }
TC_HD tc_f16 tc_fromi_F16(int64_t x) { return tc_f64_to_f16(tc_i64_to_f64_odd(x)); }
TC_HD float tc_fromi_F32(int64_t x) { return (float)x; }
TC_HD double tc_fromi_F64(int64_t x) { return (double)x; }
TC_HD tc_bf16 tc_fromu_BF16(uint64_t x) { return tc_f64_to_bf16(tc_u64_to_f64_odd(x)); }
TC_HD tc_f16 tc_fromu_F16(uint64_t x) { return tc_f64_to_f16(tc_u64_to_f64_odd(x)); }
TC_HD float tc_fromu_F32(uint64_t x) { return (float)x; }
TC_HD double tc_fromu_F64(uint64_t x) { return (double)x; }

/* Cast expressions by (source class, destination class); x is the stored
 * source value, LD its load, E/S the destination enum and storage type,
 * B the destination width. */
#define TC_CVT_BOOL_BOOL(x, LD, E, S, B) ((S)((x) != 0))
#define TC_CVT_INT_BOOL(x, LD, E, S, B)  ((S)((x) != 0))
#define TC_CVT_FLT_BOOL(x, LD, E, S, B)  ((S)(LD(x) != 0))
#define TC_CVT_BOOL_INT(x, LD, E, S, B)  ((S)(x))
#define TC_CVT_INT_INT(x, LD, E, S, B)   ((S)(x))
#define TC_CVT_FLT_INT(x, LD, E, S, B)   ((S)tc_sat_i64((double)LD(x), INT##B##_MIN, INT##B##_MAX))
#define TC_CVT_BOOL_FLT(x, LD, E, S, B)  (tc_fromi_##E((int64_t)(x)))
#define TC_CVT_INT_FLT(x, LD, E, S, B)   (tc_fromi_##E((int64_t)(x)))
#define TC_CVT_FLT_FLT(x, LD, E, S, B)   (tc_fromd_##E((double)LD(x)))
#define TC_CVT_UINT_BOOL(x, LD, E, S, B) ((S)((x) != 0))
#define TC_CVT_BOOL_UINT(x, LD, E, S, B) ((S)(x))
#define TC_CVT_INT_UINT(x, LD, E, S, B)  ((S)(x))
#define TC_CVT_UINT_INT(x, LD, E, S, B)  ((S)(x))
#define TC_CVT_UINT_UINT(x, LD, E, S, B) ((S)(x))
#define TC_CVT_FLT_UINT(x, LD, E, S, B)  ((S)tc_sat_u64((double)LD(x), UINT##B##_MAX))
#define TC_CVT_UINT_FLT(x, LD, E, S, B)  (tc_fromu_##E((uint64_t)(x)))
/* ---- reduction accumulators (backend/reduce.def) ---- */
/* A sum in double with Neumaier compensation: s + c. */
typedef struct { double s, c; } tc_nsum;
TC_HD tc_nsum tc_nsum_make(double s, double c) { tc_nsum r; r.s = s; r.c = c; return r; }
TC_HD tc_nsum tc_nsum_add(tc_nsum x, tc_nsum y) {
  double t = x.s + y.s;
  double e = fabs(x.s) >= fabs(y.s) ? (x.s - t) + y.s : (y.s - t) + x.s;
  if (!isfinite(t)) e = 0;   /* inf and NaN carry no rounding error */
  return tc_nsum_make(t, x.c + y.c + e);
}

/* The value of a compensated sum; without compensation the sum itself, so
 * that a sum of only -0.0 stays -0.0 (adding a +0.0 would make it +0.0). */
TC_HD double tc_nsum_value(tc_nsum x) { return x.c == 0 ? x.s : x.s + x.c; }

/* A value and its index, for max/min/argmax/argmin: the first NaN wins,
 * else the first of the largest (smallest); with `last`, the last of them
 * (reduce_max/reduce_min: folding maximum in index order, whose ties take
 * the later element, so that max([0.0, -0.0]) is -0.0). _step folds
 * element j (j growing); the merge decides ties by index, so partial folds
 * may combine in any grouping. The identity is the lowest (highest) value
 * at index 0: it loses to every element but an equal one, and then all
 * elements are equal to it. Doubles hold every float dtype exactly, int64s
 * every integer. */
#define TC_DEF_VI(SUF, V, ISNAN) \
  typedef struct { V v; int64_t i; } tc_vi##SUF; \
  TC_HD tc_vi##SUF tc_vi##SUF##_make(V v, int64_t i) { tc_vi##SUF r; r.v = v; r.i = i; return r; } \
  TC_HD tc_vi##SUF tc_vi##SUF##_step_ex(tc_vi##SUF a, V x, int64_t j, int max, int last) { \
    if (!ISNAN(a.v) && (ISNAN(x) || (max ? x > a.v : x < a.v) || (last && x == a.v))) return tc_vi##SUF##_make(x, j); \
    return a; \
  } \
  TC_HD tc_vi##SUF tc_vi##SUF##_merge_ex(tc_vi##SUF x, tc_vi##SUF y, int max, int last) { \
    int xn = ISNAN(x.v), yn = ISNAN(y.v); \
    if (xn || yn) { \
      if (xn && yn) return x.i < y.i ? x : y; \
      return xn ? x : y; \
    } \
    if (max ? x.v > y.v : x.v < y.v) return x; \
    if (max ? y.v > x.v : y.v < x.v) return y; \
    return (x.i < y.i) != (last != 0) ? x : y; \
  } \
  TC_HD tc_vi##SUF tc_vi##SUF##_step(tc_vi##SUF a, V x, int64_t j, int max) { return tc_vi##SUF##_step_ex(a, x, j, max, 0); } \
  TC_HD tc_vi##SUF tc_vi##SUF##_merge(tc_vi##SUF x, tc_vi##SUF y, int max) { return tc_vi##SUF##_merge_ex(x, y, max, 0); }
#define TC_INF tc_bits_f64(0x7ff0000000000000ull)
#define TC_ISNAN_D(v) ((v) != (v))
#define TC_ISNAN_L(v) 0
TC_DEF_VI(d, double, TC_ISNAN_D)
TC_DEF_VI(l, int64_t, TC_ISNAN_L)
TC_DEF_VI(u, uint64_t, TC_ISNAN_L)

/* log(sum(exp(x))) without overflow: (m, s + c) stands for (s + c) * exp(m),
 * s + c a Neumaier-compensated sum, m an element within 64 of the largest
 * folded so far (so no term exceeds e^64, and an increasing run is not
 * rescaled at every element); s == 0 is the identity (nothing folded).
 * Merging scales the part with the smaller m down to the larger. NaN wins;
 * +inf dominates; -inf adds nothing. */
typedef struct { double m, s, c; } tc_lse;
TC_HD tc_lse tc_lse_make(double m, double s) { tc_lse r; r.m = m; r.s = s; r.c = 0; return r; }
TC_HD tc_lse tc_lse_sum(tc_lse a, double y) {
  double t = a.s + y;
  a.c += a.s >= y ? (a.s - t) + y : (y - t) + a.s;
  a.s = t;
  return a;
}
TC_HD tc_lse tc_lse_merge(tc_lse a, tc_lse b) {
  if (b.s == 0 || a.m != a.m) return a;
  if (a.s == 0 || b.m != b.m) return b;
  if (a.m < b.m) { tc_lse t = a; a = b; b = t; }
  double f = a.m == b.m ? 1 : exp(b.m - a.m);
  a = tc_lse_sum(a, b.s * f);
  a.c += b.c * f;
  return a;
}
TC_HD tc_lse tc_lse_step(tc_lse a, double x) {
  if (a.m != a.m) return a;
  if (a.s == 0 || x != x || x > a.m + 64) return tc_lse_merge(a, tc_lse_make(x, 1));
  return tc_lse_sum(a, x == a.m ? 1 : exp(x - a.m));
}
/* NaN-skipping folds: tc_nmean is a compensated sum of the elements that
 * are not NaN and their count (nanmean); nanmax and friends fold into a
 * tc_vid whose index -1 means "no element yet" (only NaNs so far). */
#define TC_NAN tc_bits_f64(0x7ff8000000000000ull)
typedef struct { tc_nsum s; int64_t n; } tc_nmean;
TC_HD tc_nmean tc_nmean_make(void) { tc_nmean r; r.s = tc_nsum_make(0, 0); r.n = 0; return r; }
TC_HD tc_nmean tc_nmean_step(tc_nmean a, double x) {
  if (x == x) { a.s = tc_nsum_add(a.s, tc_nsum_make(x, 0)); a.n++; }
  return a;
}
TC_HD tc_nmean tc_nmean_merge(tc_nmean a, tc_nmean b) { a.s = tc_nsum_add(a.s, b.s); a.n += b.n; return a; }
TC_HD double tc_nmean_value(tc_nmean a) { return a.n ? tc_nsum_value(a.s) / (double)a.n : TC_NAN; }
TC_HD tc_vid tc_nvid_step(tc_vid a, double x, int64_t j, int max) {
  if (x != x) return a;
  if (a.i < 0 || (max ? x > a.v : x < a.v)) return tc_vid_make(x, j);
  return a;
}
TC_HD tc_vid tc_nvid_merge(tc_vid a, tc_vid b, int max) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  if (max ? a.v > b.v : a.v < b.v) return a;
  if (max ? b.v > a.v : b.v < a.v) return b;
  return a.i < b.i ? a : b;
}
TC_HD double tc_lse_value(tc_lse a) { return a.s == 0 ? -TC_INF : a.m + log(a.s + a.c); }
#endif
