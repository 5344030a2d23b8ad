/* sin, cos and tan of f32 and f64 on the CPU, for vmath.c's table: one
 * argument reduction for every lane below VT_BIG, Payne-Hanek above it,
 * the same bits on every path (AVX-512, AVX2, scalar with and without FMA).
 *
 * SLEEF's functions choose their reduction once per vector (a cheap one
 * when every lane is small), so an element's last bit could depend on its
 * neighbours, and vmath.c computed every vector with a lane above 15 one
 * lane at a time: sin of 10^7 f64 in [0, 100) took 93 ms against NumPy's
 * 24. Here every lane below 2^30 takes the same code whatever the others
 * hold, and a lane above it (and NaN, inf) is marked and redone alone.
 *
 * f64: x = q pi/2 + r with pi/2 in three parts (P1 + P2 + P3, 163 bits),
 * ax - q P1 exact and q P2 split by FMA, r carried as rh + rl to some
 * 2^-120 (the nearest a double comes to a multiple of pi/2 is 2^-61);
 * sin r and cos r are the exact leading part plus a tail below 0.12 of the
 * result, with minimax polynomials (Remez in mpmath, coefficients rounded
 * one at a time and the rest refitted) within 2^-57.9 (sin) and 2^-62
 * (cos) of relative error; the sum is rounded once (sin and cos), or the
 * quotient of the two normalised pairs is taken with one correction step
 * (tan). Every step is IEEE arithmetic with correctly rounded FMA (libm's
 * fma() on a CPU without it), so each path gives the same bits.
 *
 * f32 is computed in f64 and rounded once: sin and cos reduce by
 * multiples of pi (cos by odd multiples of pi/2) to |r| <= pi/2 with pi
 * in two parts, and one polynomial (2^-35.3) gives sin r; tan reduces by
 * pi/2 and takes r P(z)/Q(z), or -Q/(r P) for odd q (2^-32.9). The result
 * before its rounding is within 2^-8 of an f32 ulp of the exact value.
 *
 * Above 2^30 (where the three-part reduction would still hold, but nothing
 * needs the speed), for f32 too, a lane's x is reduced exactly with 192
 * bits of 2/pi taken at its exponent (integer arithmetic), then finished
 * by the scalar path's code (f32: the f64 result rounded once). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VT_X86 1
#include <immintrin.h>
#else
#define VT_X86 0
#endif

enum { VT_SIN, VT_COS, VT_TAN };
/* which of sin and cos vt_sin_or_cos computes: every lane the same one, or
 * each lane its own by a mask */
enum { VT_ALL_SIN, VT_ALL_COS, VT_BY_MASK };
#define VT_BIG 0x1p30
#define VT_SIGN 0x8000000000000000u
/* adding 1.5 * 2^52 rounds to an integer, left in the low bits */
#define VT_ROUND 0x1.8p52
#define VT_2_PI 0x1.45f306dc9c883p-1
#define VT_1_PI 0x1.45f306dc9c883p-2
#define VT_PIO2_1 0x1.921fb54442d18p+0
#define VT_PIO2_2 0x1.1a62633145c07p-54
#define VT_PIO2_3 -0x1.f1976b7ed8fbcp-110
/* f64: sin r = r + r^3 (S0 + S1 z + ... + S5 z^5), z = r^2, |r| <= pi/4 */
#define VT_S0 -0x1.5555555555548p-3
#define VT_S1 0x1.111111110f730p-7
#define VT_S2 -0x1.a01a019be9217p-13
#define VT_S3 0x1.71de35552b52cp-19
#define VT_S4 -0x1.ae5e4b83e4772p-26
#define VT_S5 0x1.5d8b5594a0ab9p-33
/* f64: cos r = 1 - z/2 + z^2 (C0 + C1 z + ... + C5 z^5) */
#define VT_C0 0x1.5555555555537p-5
#define VT_C1 -0x1.6c16c16c12690p-10
#define VT_C2 0x1.a01a0198a99fep-16
#define VT_C3 -0x1.27e4f53b01332p-22
#define VT_C4 0x1.1ee813bfb4dbbp-29
#define VT_C5 -0x1.8ec1f6b35a406p-37
/* f32 sin and cos: sin r = r + r^3 (FP0 + ... + FP4 z^4), |r| <= pi/2 */
#define VT_FP0 -0x1.55555547695eep-3
#define VT_FP1 0x1.11110c49fecc6p-7
#define VT_FP2 -0x1.a017d99f83391p-13
#define VT_FP3 0x1.7170800a9f910p-19
#define VT_FP4 -0x1.9a688563f6048p-26
/* f32 tan: tan r = r (FT0 + FT1 z + FT2 z^2) / (1 + FU1 z + FU2 z^2), |r| <=
 * pi/4 (minimax relative error, by linear programming: 2^-32.9) */
#define VT_FT0 0x1.0000000000008p+0
#define VT_FT1 -0x1.c7ebcbca29b05p-4
#define VT_FT2 0x1.18e497f2ea2bep-10
#define VT_FU1 -0x1.c7504847b7036p-2
#define VT_FU2 0x1.055c9355c3247p-6

static double vt_huge(int fn, double x);

/* ---- the paths (vmath.c's, CPU_VM_*): lanes, types and operations ---- */
/* scalar, for the paths base and fma alike: FMA is libm's fma(), an
 * instruction where the path's target has it */
#define vt_w_s 1
typedef double vt_d_s;
typedef uint64_t vt_u_s;
typedef float vt_f_s;
typedef uint64_t vt_m_s;
static inline double vt_fma_s(double a, double b, double c) { return fma(a, b, c); }
static inline double vt_fnma_s(double a, double b, double c) { return fma(-a, b, c); }
static inline double vt_set_s(double c) { return c; }
static inline uint64_t vt_setu_s(uint64_t c) { return c; }
static inline uint64_t vt_asu_s(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
static inline double vt_asd_s(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}
static inline uint64_t vt_maxu_s(uint64_t u, uint64_t v) { return u > v ? u : v; }
static inline uint64_t vt_odd_s(uint64_t u) { return (uint64_t)0 - (u & 1); }
static inline double vt_if_s(uint64_t m, double a, double b) { return vt_asd_s((vt_asu_s(a) & m) | (vt_asu_s(b) & ~m)); }
static inline double vt_tod_s(float f) { return f; }
static inline float vt_tof_s(double d) { return (float)d; }
static inline uint64_t vt_lane_s(uint64_t u, int l) { return (void)l, u; }
#define VT_P base
#define VT_TGT
#define VT_OPS s
#include "vtrig_kern.h"
#if VT_X86
#define VT_P fma
#define VT_TGT __attribute__((target("fma")))
#define VT_OPS s
#include "vtrig_kern.h"

/* The vector paths' operations named alike: path P's lanes of type VD (GCC
 * vectors, as the intrinsics' types are), uint64 VU, float VF, by the
 * intrinsics of prefix MM */
#define VT_VECTOR_OPS(P, TGT, VD, VU, VF, MM) \
  TGT static inline VD vt_fma_##P(VD a, VD b, VD c) { return MM##_fmadd_pd(a, b, c); } \
  TGT static inline VD vt_fnma_##P(VD a, VD b, VD c) { return MM##_fnmadd_pd(a, b, c); } \
  TGT static inline VD vt_set_##P(double c) { return MM##_set1_pd(c); } \
  TGT static inline VU vt_setu_##P(uint64_t c) { return (VU){0} + c; } \
  TGT static inline VU vt_asu_##P(VD d) { return (VU)d; } \
  TGT static inline VD vt_asd_##P(VU u) { return (VD)u; } \
  TGT static inline VD vt_tod_##P(VF f) { return MM##_cvtps_pd(f); } \
  TGT static inline VF vt_tof_##P(VD d) { return MM##_cvtpd_ps(d); } \
  TGT static inline uint64_t vt_lane_##P(VU u, int l) { return u[l]; }

/* AVX2: 4 doubles; a mask is blendv's, each lane's sign bit */
#define VT_AVX2 __attribute__((target("avx2,fma")))
#define vt_w_avx2 4
typedef __m256d vt_d_avx2;
typedef uint64_t vt_u_avx2 __attribute__((vector_size(32)));
typedef __m128 vt_f_avx2;
typedef __m256d vt_m_avx2;
typedef int64_t vt_i_avx2 __attribute__((vector_size(32)));
VT_VECTOR_OPS(avx2, VT_AVX2, __m256d, vt_u_avx2, __m128, _mm256)
/* no unsigned 64-bit max in AVX2; the values are below 2^63 */
VT_AVX2 static inline vt_u_avx2 vt_maxu_avx2(vt_u_avx2 u, vt_u_avx2 v) {
  vt_u_avx2 m = (vt_u_avx2)((vt_i_avx2)u > (vt_i_avx2)v);
  return (u & m) | (v & ~m);
}
VT_AVX2 static inline __m256d vt_odd_avx2(vt_u_avx2 u) { return (__m256d)(u << 63); }
VT_AVX2 static inline __m256d vt_if_avx2(__m256d m, __m256d a, __m256d b) { return _mm256_blendv_pd(b, a, m); }
#define VT_P avx2
#define VT_TGT VT_AVX2
#define VT_OPS avx2
#include "vtrig_kern.h"

/* AVX-512: 8 doubles; a mask is a mask register */
#define VT_AVX512 __attribute__((target("avx512f,fma")))
#define vt_w_avx512 8
typedef __m512d vt_d_avx512;
typedef uint64_t vt_u_avx512 __attribute__((vector_size(64)));
typedef __m256 vt_f_avx512;
typedef __mmask8 vt_m_avx512;
VT_VECTOR_OPS(avx512, VT_AVX512, __m512d, vt_u_avx512, __m256, _mm512)
VT_AVX512 static inline vt_u_avx512 vt_maxu_avx512(vt_u_avx512 u, vt_u_avx512 v) {
  return (vt_u_avx512)_mm512_max_epu64((__m512i)u, (__m512i)v);
}
VT_AVX512 static inline __mmask8 vt_odd_avx512(vt_u_avx512 u) {
  return _mm512_test_epi64_mask((__m512i)u, _mm512_set1_epi64(1));
}
VT_AVX512 static inline __m512d vt_if_avx512(__mmask8 m, __m512d a, __m512d b) { return _mm512_mask_blend_pd(m, b, a); }
#define VT_P avx512
#define VT_TGT VT_AVX512
#define VT_OPS avx512
#include "vtrig_kern.h"
#endif

/* ---- lanes above VT_BIG ---- */
/* 2/pi's bits: bit j of this array (from the top of word 0) is its bit
 * j - 63 after the point (the first word is the zeros before it), 1216
 * bits: enough for the window vt_reduce_huge takes at the largest
 * exponent. */
static const uint64_t vt_2_pi_bits[20] = {
  0,                  0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
  0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484, 0xe99c7026b45f7e41,
  0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f, 0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7,
  0x4f463f669e5fea2d, 0x7527bac7ebe5f17b, 0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab};

/* a * b = *hi 2^64 + the result */
static uint64_t vt_mul64(uint64_t a, uint64_t b, uint64_t *hi) {
  uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
  return (mid << 32) | (ll & 0xffffffffu);
}

/* q mod 4 and rh + rl = ax - q pi/2, |rh + rl| <= pi/4, for finite ax >=
 * 2^30. ax = m 2^e (m of 53 bits); 2/pi's bits before e - 1 give
 * multiples of 4 and are left out, 192 bits from there on give ax * 2/pi
 * mod 4 to 2^-137; its fraction, normalised, is made a pair of doubles
 * (106 bits) and multiplied by pi/2. */
static int vt_reduce_huge(double ax, double *rh, double *rl) {
  uint64_t b = vt_asu_s(ax), m = (b & 0xfffffffffffffu) | (uint64_t)1 << 52, w[3], h[3], l[3];
  int j0 = (int)(b >> 52) - 1075 + 62, w0 = j0 / 64, o = j0 % 64;
  for (int k = 0; k < 3; k++) {
    w[k] = vt_2_pi_bits[w0 + k];
    if (o) w[k] = w[k] << o | vt_2_pi_bits[w0 + k + 1] >> (64 - o);
    l[k] = vt_mul64(m, w[k], &h[k]);
  }
  /* m * w = p0 2^192 + p1 2^128 + p2 2^64 + p3, ax * 2/pi = that * 2^-190
     (mod 4): the integer part's low bits are p1's top two */
  uint64_t p3 = l[2], p2 = h[2] + l[1], p1 = h[1] + l[0] + (p2 < l[1]);
  int q = (int)(p1 >> 62);
  uint64_t f[3] = {p1 << 2 | p2 >> 62, p2 << 2 | p3 >> 62, p3 << 2};
  bool neg = f[0] >> 63;
  if (neg) {   /* a fraction of 1/2 or more: the next multiple, 1 - f below it */
    q++;
    f[2] = ~f[2] + 1;
    f[1] = ~f[1] + (f[2] == 0);
    f[0] = ~f[0] + (f[1] == 0 && f[2] == 0);
  }
  int s = 0;
  while (f[0] == 0 && s < 128) {
    f[0] = f[1];
    f[1] = f[2];
    f[2] = 0;
    s += 64;
  }
  int lz = f[0] ? __builtin_clzll(f[0]) : 0;
  uint64_t hi = lz ? f[0] << lz | f[1] >> (64 - lz) : f[0], lo = lz ? f[1] << lz | f[2] >> (64 - lz) : f[1];
  /* fraction = (hi 2^64 + lo) 2^-(128 + s + lz) */
  double fh = ldexp((double)(hi & ~(uint64_t)0x7ff), -(64 + s + lz));
  double fl = ldexp((double)(hi & 0x7ff) * 0x1p64 + (double)lo, -(128 + s + lz));
  double r = fh * VT_PIO2_1, re = fma(fh, VT_PIO2_1, -r) + fma(fh, VT_PIO2_2, fl * VT_PIO2_1);
  *rh = neg ? -r : r;
  *rl = neg ? -re : re;
  return q & 3;
}

/* fn of x, |x| > VT_BIG or NaN: the quiet NaN for NaN and inf, else the
 * scalar path's last step on the exact reduction, so every path gives the
 * same bits */
static double vt_huge(int fn, double x) {
  if (!(fabs(x) <= DBL_MAX)) return NAN;
  double rh, rl;
  uint64_t q = (uint64_t)vt_reduce_huge(fabs(x), &rh, &rl), sg = fn == VT_COS ? 0 : vt_asu_s(x) & VT_SIGN;
  return vt_finish_base(fn, q, rh, rl, sg);
}

cpu_vmath_fn cpu_vtrig_kernel(tc_op op, bool f64, int path) {
  int fn = op == TC_OP_SIN ? VT_SIN : op == TC_OP_COS ? VT_COS : op == TC_OP_TAN ? VT_TAN : -1;
  if (fn < 0) return NULL;
  switch (path) {
#if VT_X86
  case CPU_VM_AVX512: return vt_table_avx512[fn][f64];
  case CPU_VM_AVX2: return vt_table_avx2[fn][f64];
  case CPU_VM_FMA: return vt_table_fma[fn][f64];
#endif
  default: return vt_table_base[fn][f64];
  }
}
