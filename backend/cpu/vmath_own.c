/* tcalc's own vector math kernels, used instead of SLEEF's (vmath.c) where
 * SLEEF's were slow: the f32 functions computed in f64 arithmetic and
 * rounded once, each within 0.5 ulp and a little of the exact value.
 *
 * A kernel's body (vmath_own_k.h) is written once over a few operations
 * that are exact or rounded once: built with AVX-512 intrinsics, with AVX2
 * + FMA ones, and for one double (plain C and fma()) for the FMA and base
 * paths, so every path gives the same bits (tests/unit/test_vmath.c). The
 * few elements outside a kernel's range (NaN, infinities, overflow) are
 * computed by its own_slow_* function, the same on every path; an
 * element's result never depends on its neighbours. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include "cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OWN_X86 1
#include <immintrin.h>
#define OWN_TGT_512 __attribute__((target("avx512f,fma")))
#define OWN_TGT_256 __attribute__((target("avx2,fma")))
#define OWN_TGT_FMA __attribute__((target("fma")))
#else
#define OWN_X86 0
#endif

/* ---- the results outside the kernels' ranges ---- */
/* Each returns the result for x where the kernel set *out (and may be
 * called for any x): NaN is the one quiet NaN. */
static double own_slow_expm1_f(double x) { return x != x ? NAN : x > 0 ? INFINITY : -1.0; }
static double own_slow_tanh_f(double x) { return x != x ? NAN : copysign(1.0, x); }
static double own_slow_cosh_f(double x) { return x != x ? NAN : INFINITY; }
static double own_slow_sinh_f(double x) { return x != x ? NAN : copysign(INFINITY, x); }
static double own_slow_cbrt_f(double x) { return x != x ? NAN : x; }   /* 0, -0, inf, -inf */
/* f64: beyond |x| = 708 e^x comes from the C library's long double exp
 * (64 significant bits), rounded once; sinh and cosh of |x| - ln 2, where
 * e^|x| overflows before they do */
static double own_slow_expm1_d(double x) { return x != x ? NAN : x < 0 ? -1.0 : (double)expl((long double)x); }
static double own_slow_tanh_d(double x) { return x != x ? NAN : copysign(1.0, x); }
static double own_slow_cosh_d(double x) {
  return x != x ? NAN : (double)expl(fabsl((long double)x) - 0.693147180559945309417232121458176568L);
}
/* cbrt of 0, a subnormal, an infinity or NaN: the C library's long double
 * cbrt rounded once (0, inf and NaN as they are) */
static double own_slow_cbrt_d(double x) { return x != x ? NAN : (double)cbrtl((long double)x); }
static double own_slow_sinh_d(double x) { return x != x ? NAN : copysign(own_slow_cosh_d(x), x); }
/* sigmoid beyond |x| = 110: 1, or +0 (e^x is below the f32 subnormals) */
static double own_slow_sigmoid_f(double x) { return x != x ? NAN : x > 0 ? 1.0 : 0.0; }
/* f64 sigmoid beyond |x| = 708: 1, or e^x (e^x / (1 + e^x) within 2^-1000
 * of it) from the C library's long double exp, rounded once */
static double own_slow_sigmoid_d(double x) { return x != x ? NAN : x > 0 ? 1.0 : (double)expl((long double)x); }
/* log2 and log10 of 0 (-inf), x < 0 and NaN (NaN), +inf */
static double own_slow_log2_f(double x) { return x == 0 ? -INFINITY : x > 0 ? x : NAN; }
#define own_slow_log10_f own_slow_log2_f
/* f64 logarithms of 0 (-inf), x < 0 and NaN (NaN), +inf, and of the
 * subnormals: the C library's long double functions, rounded once */
static double own_slow_log_d(double x) { return x == 0 ? -INFINITY : x > 0 ? (double)logl(x) : NAN; }
static double own_slow_log2_d(double x) { return x == 0 ? -INFINITY : x > 0 ? (double)log2l(x) : NAN; }
static double own_slow_log10_d(double x) { return x == 0 ? -INFINITY : x > 0 ? (double)log10l(x) : NAN; }
/* log1p of x <= -1 (-inf, NaN), of x >= 1e308 and NaN */
static double own_slow_log1p_d(double x) { return x == -1 ? -INFINITY : x > -1 ? (double)log1pl(x) : NAN; }
/* atan of NaN and +-inf; atan2 where an operand is 0, infinite or NaN,
 * the larger magnitude is 2^1020 or more, the smaller 2^-969 or less, or
 * |y / x| is below 2^-1020: the C library's
 * long double functions rounded once (C99's special values) */
static double own_slow_atan_d(double x) { return x != x ? NAN : (double)atanl(x); }
static double own_slow_atan2_d(double y, double x) {
  double r = (double)atan2l(y, x);
  return r != r ? NAN : r;
}
/* f32 atan of NaN and +-inf, atan2 of zeros, infinities and NaN: the C
 * library's f32 functions (C99's special values); asin and acos of |x| > 1
 * and NaN: NaN; log1p of x <= -1, +inf and NaN */
static double own_slow_atan_f(double x) { return x != x ? NAN : (double)atanf((float)x); }
static double own_slow_atan2_f(double y, double x) {
  float r = atan2f((float)y, (float)x);
  return r != r ? NAN : r;
}
static double own_slow_asin_f(double x) { (void)x; return NAN; }
#define own_slow_acos_f own_slow_asin_f
#define own_slow_asin_d own_slow_asin_f
#define own_slow_acos_d own_slow_asin_f
static double own_slow_log1p_f(double x) { return x == -1 ? -INFINITY : x > -1 ? x : NAN; }
/* x * x, 1 / x and sqrt(x) are rounded once more to f32 as they are, and
 * so rounded correctly (a quotient or root of f32 operands rounded to f64
 * and then to f32 is their value rounded to f32; the square is exact in
 * f64); pow's own +0 for -0 and +inf for -inf; C99's pow elsewhere */
static double own_slow_pow_f(double x, double y) {
  double r = y == 2 ? x * x : y == -1 ? 1 / x : y == 0.5 ? (x == -INFINITY ? INFINITY : sqrt(x) + 0) : pow(x, y);
  return r != r ? NAN : r;
}
/* f64 the same: those three exponents rounded correctly, and the C
 * library's pow for zeros, x < 0, subnormals, infinities, NaN and results
 * near or past overflow and underflow */
#define own_slow_pow_d own_slow_pow_f
#define OWN_EXACT_pow_d OWN_EXACT_pow_f
/* a broadcast exponent that own_slow_pow_f computes for every element */
#define OWN_EXACT_pow_f(y) ((y) == 2 || (y) == -1 || (y) == 0.5)
#define OWN_EXACT_atan2_d(x) 0
#define OWN_EXACT_atan2_f(x) 0

/* 2^(j/16), j = 0..15: the values rounded to f64, and what that leaves */
static const double own_exp16[2][16] = {
  {0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0,
   0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0,
   0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0, 0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0,
   0x1.ea4afa2a490dap+0},
  {0x0.0p+0, 0x1.8a62e4adc610bp-54, -0x1.19041b9d78a76p-55, 0x1.9b07eb6c70573p-54, 0x1.6f46ad23182e4p-55,
   0x1.ada0911f09ebcp-55, 0x1.d4397afec42e2p-56, 0x1.6324c054647adp-54, -0x1.bdd3413b26456p-54, -0x1.41577ee04992fp-55,
   0x1.6e9f156864b27p-54, 0x1.c7c46b071f2bep-56, 0x1.7a1cd345dcc81p-54, 0x1.11065895048ddp-55, 0x1.2ed02d75b3707p-55,
   -0x1.e9c23179c2893p-54},
};

/* 1/c and -log2 c for log2_core_f's 16 intervals of m in [0.75, 1.5) by
 * its top 4 bits (1 + j/16 up, from 1 + 8/16 = 0.75 * 2 halved): c the
 * interval's centre, 1 for the two next to 1 */
static const double own_log2c[2][16] = {
  {0x1.0000000000000p+0, 0x1.d41d41d41d41dp-1, 0x1.bacf914c1bad0p-1, 0x1.a41a41a41a41ap-1, 0x1.8f9c18f9c18fap-1,
   0x1.7d05f417d05f4p-1, 0x1.6c16c16c16c17p-1, 0x1.5c9882b931057p-1, 0x1.4e5e0a72f0539p+0, 0x1.4141414141414p+0,
   0x1.3521cfb2b78c1p+0, 0x1.29e4129e4129ep+0, 0x1.1f7047dc11f70p+0, 0x1.15b1e5f75270dp+0, 0x1.0c9714fbcda3bp+0,
   0x1.0000000000000p+0},
  {0x0.0p+0, 0x1.08c588cda79e5p-3, 0x1.acf5e2db4ec91p-3, 0x1.24407ab0e073ap-2, 0x1.6e221cd9d0cddp-2,
   0x1.b47ebf73882a1p-2, 0x1.f7a8568cb06cep-2, 0x1.1bf311e95d00ep-1, -0x1.8a8980abfbd30p-2, -0x1.4f6fbb2cec598p-2,
   -0x1.169c05363f157p-2, -0x1.bfc67a7fff4cap-3, -0x1.563dc29ffacafp-3, -0x1.e0b1ae8f2fd56p-4, -0x1.1bb32a60054a2p-4,
   0x0.0p+0},
};

/* log_red's table: 1/c for its 16 intervals of z in [0.734375, 1.46875)
 * (c the interval's centre, 1 on the eighth, around 1), then log c, log2 c
 * and log10 c, each -log_b(1/c) as hi, a multiple of 2^-42, and lo */
static const double own_logc[7][16] = {
  {0x1.5555555555555p+0, 0x1.47ae147ae147bp+0, 0x1.3b13b13b13b14p+0, 0x1.2f684bda12f68p+0, 0x1.2492492492492p+0,
   0x1.1a7b9611a7b96p+0, 0x1.1111111111111p+0, 0x1.0842108421084p+0, 0x1.0000000000000p+0, 0x1.e1e1e1e1e1e1ep-1,
   0x1.c71c71c71c71cp-1, 0x1.af286bca1af28p-1, 0x1.999999999999ap-1, 0x1.8618618618618p-1, 0x1.745d1745d1746p-1,
   0x1.642c8590b2164p-1},
  {-0x1.269621134e000p-2, -0x1.f991c6cb3c000p-3, -0x1.a93ed3c8ae000p-3, -0x1.5bf406b544000p-3, -0x1.1178e8227e000p-3,
   -0x1.9335e5d594000p-4, -0x1.08598b59e4000p-4, -0x1.0415d89e78000p-5, 0x0.0p+0, 0x1.f0a30c0118000p-5,
   0x1.e27076e2b0000p-4, 0x1.5ff3070a7a000p-3, 0x1.c8ff7c79aa000p-3, 0x1.1675cababa000p-2, 0x1.4618bc21c6000p-2,
   0x1.739d7f6bbd000p-2},
  {0x1.1ba1f10522625p-44, 0x1.90b84cd7cc834p-44, 0x1.86a4350562169p-45, 0x1.28023eb68981cp-46, -0x1.1e778ce2d07f2p-45,
   -0x1.30f5c3abd47dap-45, 0x1.7e9dd7009902cp-46, 0x1.ddfc7f461c516p-44, 0x0.0p+0, -0x1.d579e83368e91p-45,
   -0x1.a2c2c2af0003cp-45, -0x1.8546f183bebf2p-44, -0x1.7814f689f8434p-45, 0x1.83c0e731f55c4p-44, -0x1.3e02f484c84ccp-46,
   0x1.c7389314feb50p-52},
  {-0x1.a8ff971811000p-2, -0x1.6cb0f6865d000p-2, -0x1.32bfee370f000p-2, -0x1.f5fd8a9064000p-3, -0x1.8a8980abfc000p-3,
   -0x1.22dadc2ab4000p-3, -0x1.7d60496cfc000p-4, -0x1.77394c9d98000p-5, 0x0.0p+0, 0x1.663f6fac90000p-4,
   0x1.5c01a39fbe000p-3, 0x1.fbc16b9026000p-3, 0x1.49a784bcd2000p-2, 0x1.91bba891f1000p-2, 0x1.d6753e032f000p-2,
   0x1.0c10500d63800p-1},
  {0x1.68d64f1e45cebp-44, 0x1.c55c84aae3be6p-44, 0x1.962909403469ap-46, 0x1.ce5218fd407f7p-47, 0x1.683e1f2893a13p-46,
   0x1.6d3cbb0006c6ap-44, 0x1.2d42864c502fep-46, 0x1.39833b60ae4f1p-44, 0x0.0p+0, 0x1.317ee20c9d519p-44,
   -0x1.2eafb6e10910bp-44, 0x1.01a0ca38c7c30p-44, -0x1.1d9cc2d296ee4p-44, 0x1.c28981cad608fp-44, -0x1.7c6e9adf43f2fp-44,
   0x1.535a6bba73a4bp-44},
  {-0x1.ffbfc2bbc8000p-4, -0x1.b721cd1714000p-4, -0x1.715d0ce368000p-4, -0x1.2e3a740b78000p-4, -0x1.db11ed7668000p-5,
   -0x1.5e3966b7e8000p-5, -0x1.cb38fccd90000p-6, -0x1.c3d0837780000p-7, 0x0.0p+0, 0x1.af5f92b010000p-6,
   0x1.a30a9d60a0000p-5, 0x1.31b3055c48000p-4, 0x1.8cf1838864000p-4, 0x1.e3bc1ab0e0000p-4, 0x1.1b3e71ec94000p-3,
   0x1.42c7e7fe40000p-3},
  {0x1.ff91cd0d41d8bp-46, -0x1.7e33cbb4338c4p-44, 0x1.40a56a54960abp-46, -0x1.9af15fdc3bc70p-53, -0x1.5f85cb66cbb6cp-44,
   -0x1.2943d5df48680p-45, 0x1.00994d322030ep-44, -0x1.30e6a783022c9p-45, 0x0.0p+0, -0x1.9ee9c6a443feap-46,
   -0x1.012c40f052da5p-45, -0x1.dcc83285be7bfp-45, 0x1.015bce2014e1fp-45, 0x1.9fffa0ddba65fp-44, 0x1.ef4991a8da00bp-44,
   -0x1.fee58bb5ae5e1p-46},
};

/* atan_q's 16 intervals of q in [0, 1]: [0, b0) and 15 of equal width
 * from b0 = 2^-5 + 2^-12 to 1; by rows, c (a multiple of 2^-10 near the
 * interval's centre, 0 for the first) and atan c as hi and lo */
static const double own_atanc[3][16] = {
  {0x0.0p+0, 0x1.0400000000000p-4, 0x1.0600000000000p-3, 0x1.8c00000000000p-3, 0x1.0800000000000p-2,
   0x1.4a00000000000p-2, 0x1.8c00000000000p-2, 0x1.ce00000000000p-2, 0x1.0800000000000p-1, 0x1.2900000000000p-1,
   0x1.4a00000000000p-1, 0x1.6b00000000000p-1, 0x1.8c80000000000p-1, 0x1.ad80000000000p-1, 0x1.ce80000000000p-1,
   0x1.ef80000000000p-1},
  {0x0.0p+0, 0x1.03a6d1c06693dp-4, 0x1.0495a6bb1c022p-3, 0x1.872c322f0a8ccp-3, 0x1.025fa510665b6p-2,
   0x1.3f3d2a6967464p-2, 0x1.79dc6899118d1p-2, 0x1.b1fff9aec98c4p-2, 0x1.e77eb7f175a34p-2, 0x1.0d20fb29b4a33p-1,
   0x1.25217dd17e501p-1, 0x1.3bc413ee20537p-1, 0x1.5161182aee55bp-1, 0x1.655fa336c5e5bp-1, 0x1.782396204c702p-1,
   0x1.89bd4fb5edc0dp-1},
  {0x0.0p+0, -0x1.28a02d4e7f128p-59, 0x1.0b5d7d6052b80p-57, 0x1.3c6ab3a279db5p-57, -0x1.672df6832fa48p-56,
   -0x1.acb4238e9b952p-56, 0x1.b7413a0ef606dp-61, 0x1.9def31e8d05d0p-56, 0x1.0e53dc1bf3435p-56,
   -0x1.e0009a16dbbd6p-55, 0x1.56aa88c1b679cp-55, 0x1.7e2b5dee49a59p-55, -0x1.f9dc142a3af1cp-56,
   -0x1.187e7bd7fd489p-55, -0x1.34013790e4da8p-57, -0x1.430f3badcf8d2p-55},
};

/* The kernels' operations: v_add is o1_add in the one-double build and
 * o8_add in the AVX-512 one (OWN_PRE names the build being included). */
#define OWN_CAT(a, b) a##b
#define OWN_CAT2(a, b) OWN_CAT(a, b)
#define OWN_OP(name) OWN_CAT2(OWN_PRE, name)
#define v_abs OWN_OP(abs)
#define v_add OWN_OP(add)
#define v_bits OWN_OP(bits)
#define v_copysign OWN_OP(copysign)
#define v_div OWN_OP(div)
#define v_eq OWN_OP(eq)
#define v_fma OWN_OP(fma)
#define v_fms OWN_OP(fms)
#define v_fnma OWN_OP(fnma)
#define v_from_bits OWN_OP(from_bits)
#define v_getexp OWN_OP(getexp)
#define v_getmant OWN_OP(getmant)
#define v_getmant75 OWN_OP(getmant75)
#define v_iadd OWN_OP(iadd)
#define v_iand OWN_OP(iand)
#define v_iset OWN_OP(iset)
#define v_ishl OWN_OP(ishl)
#define v_ishl52 OWN_OP(ishl52)
#define v_ishr OWN_OP(ishr)
#define v_isub OWN_OP(isub)
#define v_lt OWN_OP(lt)
#define v_lut16 OWN_OP(lut16)
#define v_mor OWN_OP(mor)
#define v_mul OWN_OP(mul)
#define v_neg OWN_OP(neg)
#define v_not_gt OWN_OP(not_gt)
#define v_not_lt OWN_OP(not_lt)
#define v_scalef OWN_OP(scalef)
#define v_sel OWN_OP(sel)
#define v_set OWN_OP(set)
#define v_sqrt OWN_OP(sqrt)
#define v_sub OWN_OP(sub)

/* ---- one double ---- */
#define VD double
#define VM bool
#define VI uint64_t
#define OWN_FN static inline __attribute__((always_inline))
#define K(name) own1_##name
#define OWN_PRE o1_
OWN_FN VD o1_set(double c) { return c; }
OWN_FN VD o1_add(VD a, VD b) { return a + b; }
OWN_FN VD o1_sub(VD a, VD b) { return a - b; }
OWN_FN VD o1_mul(VD a, VD b) { return a * b; }
OWN_FN VD o1_div(VD a, VD b) { return a / b; }
OWN_FN VD o1_sqrt(VD a) { return sqrt(a); }
OWN_FN VD o1_fma(VD a, VD b, VD c) { return fma(a, b, c); }
/* a b - c and c - a b, rounded once */
OWN_FN VD o1_fms(VD a, VD b, VD c) { return fma(a, b, -c); }
OWN_FN VD o1_fnma(VD a, VD b, VD c) { return fma(-a, b, c); }
OWN_FN VD o1_abs(VD a) { return fabs(a); }
OWN_FN VD o1_copysign(VD a, VD b) { return copysign(a, b); }
OWN_FN VM o1_not_lt(VD a, VD b) { return !(a < b); }
OWN_FN VM o1_eq(VD a, VD b) { return a == b; }
OWN_FN VM o1_mor(VM a, VM b) { return a | b; }
OWN_FN VM o1_lt(VD a, VD b) { return a < b; }
OWN_FN VM o1_not_gt(VD a, VD b) { return !(a > b); }
OWN_FN VD o1_sel(VM m, VD a, VD b) { return m ? a : b; }
OWN_FN VI o1_bits(VD a) { VI u; memcpy(&u, &a, sizeof u); return u; }
OWN_FN VD o1_from_bits(VI u) { VD a; memcpy(&a, &u, sizeof a); return a; }
OWN_FN VI o1_iset(uint64_t c) { return c; }
OWN_FN VI o1_iadd(VI a, VI b) { return a + b; }
OWN_FN VI o1_isub(VI a, VI b) { return a - b; }
OWN_FN VI o1_ishl52(VI a) { return a << 52; }
OWN_FN VI o1_ishl(VI a, int n) { return a << n; }
OWN_FN VI o1_ishr(VI a, int n) { return a >> n; }
OWN_FN VI o1_iand(VI a, VI b) { return a & b; }
OWN_FN VD o1_neg(VD a) { return -a; }
/* t[the low 4 bits of i] */
OWN_FN VD o1_lut16(const double *t, VI i) { return t[i & 15]; }
/* for normal a > 0: its exponent as a double, and its significand in [1, 2) */
OWN_FN VD o1_getexp(VD a) { return (double)(int64_t)(o1_bits(a) >> 52) - 1023; }
OWN_FN VD o1_getmant(VD a) { return o1_from_bits((o1_bits(a) & 0xfffffffffffffu) | 0x3ff0000000000000u); }
/* the same in [0.75, 1.5): halved from 1.5 up */
OWN_FN VD o1_getmant75(VD a) { VD m = o1_getmant(a); return m >= 1.5 ? m * 0.5 : m; }
/* a * 2^q, rounded once, for an integer q in [-1022, 1023] */
OWN_FN VD o1_scalef(VD a, VD q) { return a * o1_from_bits((o1_bits(q + 0x1.8p52) << 52) + ((uint64_t)1023 << 52)); }
#include "vmath_own_k.h"

/* the plain arithmetic of a vector build: prefix P, intrinsics M, N bits */
#define OWN_ARITH(P, M, N) \
  OWN_FN VD P##set(double c) { return M##_set1_pd(c); } \
  OWN_FN VD P##add(VD a, VD b) { return M##_add_pd(a, b); } \
  OWN_FN VD P##sub(VD a, VD b) { return M##_sub_pd(a, b); } \
  OWN_FN VD P##mul(VD a, VD b) { return M##_mul_pd(a, b); } \
  OWN_FN VD P##div(VD a, VD b) { return M##_div_pd(a, b); } \
  OWN_FN VD P##sqrt(VD a) { return M##_sqrt_pd(a); } \
  OWN_FN VD P##fma(VD a, VD b, VD c) { return M##_fmadd_pd(a, b, c); } \
  OWN_FN VD P##fms(VD a, VD b, VD c) { return M##_fmsub_pd(a, b, c); } \
  OWN_FN VD P##fnma(VD a, VD b, VD c) { return M##_fnmadd_pd(a, b, c); } \
  OWN_FN VI P##bits(VD a) { return M##_castpd_si##N(a); } \
  OWN_FN VD P##from_bits(VI u) { return M##_castsi##N##_pd(u); }

/* ---- AVX-512: 8 doubles ---- */
#if OWN_X86
#define VD __m512d
#define VM __mmask8
#define VI __m512i
#define OWN_FN OWN_TGT_512 static inline __attribute__((always_inline))
#define K(name) own8_##name
#define OWN_PRE o8_
OWN_ARITH(o8_, _mm512, 512)
OWN_FN VD o8_abs(VD a) { return _mm512_abs_pd(a); }
OWN_FN VD o8_copysign(VD a, VD b) {
  /* 0xca: the first operand (the sign bit) ? the second : the third, bit by bit */
  return o8_from_bits(_mm512_ternarylogic_epi64(_mm512_set1_epi64(INT64_MIN), o8_bits(b), o8_bits(a), 0xca));
}
OWN_FN VM o8_not_lt(VD a, VD b) { return _mm512_cmp_pd_mask(a, b, _CMP_NLT_UQ); }
OWN_FN VM o8_eq(VD a, VD b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
OWN_FN VM o8_mor(VM a, VM b) { return a | b; }
OWN_FN VM o8_lt(VD a, VD b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
OWN_FN VM o8_not_gt(VD a, VD b) { return _mm512_cmp_pd_mask(a, b, _CMP_NGT_UQ); }
OWN_FN VD o8_sel(VM m, VD a, VD b) { return _mm512_mask_blend_pd(m, b, a); }
OWN_FN VI o8_iset(uint64_t c) { return _mm512_set1_epi64((long long)c); }
OWN_FN VI o8_iadd(VI a, VI b) { return _mm512_add_epi64(a, b); }
OWN_FN VI o8_isub(VI a, VI b) { return _mm512_sub_epi64(a, b); }
OWN_FN VI o8_ishl52(VI a) { return _mm512_slli_epi64(a, 52); }
OWN_FN VI o8_ishl(VI a, int n) { return _mm512_slli_epi64(a, (unsigned)n); }
OWN_FN VI o8_ishr(VI a, int n) { return _mm512_srli_epi64(a, (unsigned)n); }
OWN_FN VI o8_iand(VI a, VI b) { return _mm512_and_epi64(a, b); }
OWN_FN VD o8_neg(VD a) { return o8_from_bits(_mm512_xor_epi64(o8_bits(a), _mm512_set1_epi64(INT64_MIN))); }
OWN_FN VD o8_lut16(const double *t, VI i) { return _mm512_permutex2var_pd(_mm512_loadu_pd(t), i, _mm512_loadu_pd(t + 8)); }
OWN_FN VD o8_getexp(VD a) { return _mm512_getexp_pd(a); }
OWN_FN VD o8_getmant(VD a) { return _mm512_getmant_pd(a, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero); }
OWN_FN VD o8_getmant75(VD a) { return _mm512_getmant_pd(a, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_zero); }
OWN_FN VD o8_scalef(VD a, VD q) { return _mm512_scalef_pd(a, q); }
#include "vmath_own_k.h"

/* ---- AVX2 + FMA: 4 doubles; what AVX-512 has in one instruction is the
 * one-double build's bit operations, and the table a gather ---- */
#define VD __m256d
#define VM __m256d
#define VI __m256i
#define OWN_FN OWN_TGT_256 static inline __attribute__((always_inline))
#define K(name) own4_##name
#define OWN_PRE o4_
OWN_ARITH(o4_, _mm256, 256)
OWN_FN VI o4_iset(uint64_t c) { return _mm256_set1_epi64x((long long)c); }
OWN_FN VD o4_abs(VD a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
OWN_FN VD o4_neg(VD a) { return _mm256_xor_pd(_mm256_set1_pd(-0.0), a); }
OWN_FN VD o4_copysign(VD a, VD b) {
  return _mm256_or_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), a), _mm256_and_pd(_mm256_set1_pd(-0.0), b));
}
OWN_FN VM o4_not_lt(VD a, VD b) { return _mm256_cmp_pd(a, b, _CMP_NLT_UQ); }
OWN_FN VM o4_not_gt(VD a, VD b) { return _mm256_cmp_pd(a, b, _CMP_NGT_UQ); }
OWN_FN VM o4_lt(VD a, VD b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
OWN_FN VM o4_eq(VD a, VD b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
OWN_FN VM o4_mor(VM a, VM b) { return _mm256_or_pd(a, b); }
OWN_FN VD o4_sel(VM m, VD a, VD b) { return _mm256_blendv_pd(b, a, m); }
OWN_FN VI o4_iadd(VI a, VI b) { return _mm256_add_epi64(a, b); }
OWN_FN VI o4_isub(VI a, VI b) { return _mm256_sub_epi64(a, b); }
OWN_FN VI o4_iand(VI a, VI b) { return _mm256_and_si256(a, b); }
OWN_FN VI o4_ishl52(VI a) { return _mm256_slli_epi64(a, 52); }
OWN_FN VI o4_ishl(VI a, int n) { return _mm256_slli_epi64(a, n); }
OWN_FN VI o4_ishr(VI a, int n) { return _mm256_srli_epi64(a, n); }
OWN_FN VD o4_lut16(const double *t, VI i) { return _mm256_i64gather_pd(t, _mm256_and_si256(i, _mm256_set1_epi64x(15)), 8); }
/* as o1_getexp and o1_getmant, for normal a > 0: the exponent field made a
 * double through 2^52's significand */
OWN_FN VD o4_getexp(VD a) {
  VI e = _mm256_or_si256(_mm256_srli_epi64(o4_bits(a), 52), _mm256_set1_epi64x(0x4330000000000000));
  return _mm256_sub_pd(o4_from_bits(e), _mm256_set1_pd(0x1p52 + 1023));
}
OWN_FN VD o4_getmant(VD a) {
  return o4_from_bits(_mm256_or_si256(_mm256_and_si256(o4_bits(a), _mm256_set1_epi64x(0xfffffffffffff)),
                                      _mm256_set1_epi64x(0x3ff0000000000000)));
}
OWN_FN VD o4_getmant75(VD a) {
  VD m = o4_getmant(a);
  return o4_sel(_mm256_cmp_pd(m, _mm256_set1_pd(1.5), _CMP_GE_OQ), _mm256_mul_pd(m, _mm256_set1_pd(0.5)), m);
}
OWN_FN VD o4_scalef(VD a, VD q) {
  VI b = _mm256_slli_epi64(o4_bits(_mm256_add_pd(q, _mm256_set1_pd(0x1.8p52))), 52);
  return _mm256_mul_pd(a, o4_from_bits(_mm256_add_epi64(b, _mm256_set1_epi64x((long long)1023 << 52))));
}
#include "vmath_own_k.h"
#endif

/* ---- the loops ---- */
/* Blocks of CPU_EW_BLOCK elements; a strided input is gathered into a buffer
 * first; long runs prefetched as vmath.c's are (CPU_VM_PREFETCH). */

/* One double at a time: a
 * block's results, then the elements whose *out was set redone by the
 * slow function. The block's inputs are copied first, so that an output
 * over its input is no matter. */
#define OWN_LOOP1(NAME, TGT, T, F) \
  TGT static void NAME(int64_t len, char *o_, const char *a_, int64_t sa) { \
    T *o = (T *)(void *)o_; \
    const T *a = (const T *)(const void *)a_; \
    T in[CPU_EW_BLOCK]; \
    for (int64_t i0 = 0; i0 < len; i0 += CPU_EW_BLOCK) { \
      int64_t n = len - i0 < CPU_EW_BLOCK ? len - i0 : CPU_EW_BLOCK; \
      for (int64_t k = 0; k < n; k++) in[k] = a[(i0 + k) * sa]; \
      bool any = false; \
      for (int64_t k = 0; k < n; k++) { \
        bool out; \
        o[i0 + k] = (T)own1_##F((double)in[k], &out); \
        any |= out; \
      } \
      for (int64_t k = 0; any && k < n; k++) { \
        bool out; \
        (void)own1_##F((double)in[k], &out); \
        if (out) o[i0 + k] = (T)own_slow_##F((double)in[k]); \
      } \
    } \
  }

#if OWN_X86
/* W elements of T at p as doubles, and back (rounded once for f32), by
 * the build's width W (8: AVX-512, 4: AVX2); a mask's lanes as bits */
#define OWN_LD_8_double(p) _mm512_loadu_pd(p)
#define OWN_ST_8_double(p, v) _mm512_storeu_pd(p, v)
#define OWN_LD_8_float(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define OWN_ST_8_float(p, v) _mm256_storeu_ps(p, _mm512_cvtpd_ps(v))
#define OWN_LD_4_double(p) _mm256_loadu_pd(p)
#define OWN_ST_4_double(p, v) _mm256_storeu_pd(p, v)
#define OWN_LD_4_float(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define OWN_ST_4_float(p, v) _mm_storeu_ps(p, _mm256_cvtpd_ps(v))
#define OWN_BITS_8(m) ((unsigned)(m))
#define OWN_BITS_4(m) ((unsigned)_mm256_movemask_pd(m))
#define OWN_VD_8 __m512d
#define OWN_VD_4 __m256d
#define OWN_VM_8 __mmask8
#define OWN_VM_4 __m256d
#define OWN_TGT_8 OWN_TGT_512
#define OWN_TGT_4 OWN_TGT_256
/* d[0..2W) = F(s[0..2W)): two vectors in flight; the lanes out of range
 * redone one by one from the inputs kept in registers (d may be s) */
#define OWN_VEC2(W, T, F, d, s) \
  do { \
    OWN_VD_##W x0_ = OWN_LD_##W##_##T(s), x1_ = OWN_LD_##W##_##T((s) + W); \
    OWN_VM_##W o0_, o1_; \
    OWN_VD_##W r0_ = own##W##_##F(x0_, &o0_), r1_ = own##W##_##F(x1_, &o1_); \
    OWN_ST_##W##_##T(d, r0_); \
    OWN_ST_##W##_##T((d) + W, r1_); \
    unsigned om_ = OWN_BITS_##W(o0_) | OWN_BITS_##W(o1_) << W; \
    if (om_) { \
      double xs_[2 * W]; \
      OWN_ST_##W##_double(xs_, x0_); \
      OWN_ST_##W##_double(xs_ + W, x1_); \
      for (int l_ = 0; l_ < 2 * W; l_++) \
        if (om_ >> l_ & 1) (d)[l_] = (T)own_slow_##F(xs_[l_]); \
    } \
  } while (0)
/* a block's last elements: through the same vectors, zeros after them */
#define OWN_STEPV(d, s, W, T, F) OWN_VEC2(W, T, F, d, s)
#define OWN_LOOPV(NAME, W, T, F) \
  OWN_TGT_##W static void NAME(int64_t len, char *o_, const char *a_, int64_t sa) { \
    CPU_VM_BLOCKS(T, CPU_EW_BLOCK, 2 * W, 1, CPU_VM_NONE, OWN_STEPV, CPU_VM_NONE, W, T, F) \
  }
#endif

/* Two operands: as the loops above, the blocks of a strided or broadcast
 * operand gathered first (a broadcast one once); a broadcast second
 * operand y with OWN_EXACT_F(y) is the slow function's for every element. */
#define OWN_BIN_EXACT(T, F) \
  if (sb == 0 && OWN_EXACT_##F((double)b[0])) { \
    for (int64_t i = 0; i < len; i++) o[i] = (T)own_slow_##F((double)a[i * sa], (double)b[0]); \
    return; \
  }
#define OWN_BIN_LOOP1(NAME, TGT, T, F) \
  TGT static void NAME(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    T *o = (T *)(void *)o_; \
    const T *a = (const T *)(const void *)a_, *b = (const T *)(const void *)b_; \
    T ia[CPU_EW_BLOCK], ib[CPU_EW_BLOCK]; \
    OWN_BIN_EXACT(T, F) \
    for (int64_t i0 = 0; i0 < len; i0 += CPU_EW_BLOCK) { \
      int64_t n = len - i0 < CPU_EW_BLOCK ? len - i0 : CPU_EW_BLOCK; \
      for (int64_t k = 0; k < n; k++) ia[k] = a[(i0 + k) * sa], ib[k] = b[(i0 + k) * sb]; \
      bool any = false; \
      for (int64_t k = 0; k < n; k++) { \
        bool out; \
        o[i0 + k] = (T)own1_##F((double)ia[k], (double)ib[k], &out); \
        any |= out; \
      } \
      for (int64_t k = 0; any && k < n; k++) { \
        bool out; \
        (void)own1_##F((double)ia[k], (double)ib[k], &out); \
        if (out) o[i0 + k] = (T)own_slow_##F((double)ia[k], (double)ib[k]); \
      } \
    } \
  }
#if OWN_X86
#define OWN_BVEC(W, T, F, d, s, t) \
  do { \
    OWN_VD_##W x_ = OWN_LD_##W##_##T(s), y_ = OWN_LD_##W##_##T(t); \
    OWN_VM_##W out_; \
    OWN_VD_##W r_ = own##W##_##F(x_, y_, &out_); \
    OWN_ST_##W##_##T(d, r_); \
    unsigned om_ = OWN_BITS_##W(out_); \
    if (om_) { \
      double xs_[W], ys_[W]; \
      OWN_ST_##W##_double(xs_, x_); \
      OWN_ST_##W##_double(ys_, y_); \
      for (int l_ = 0; l_ < W; l_++) \
        if (om_ >> l_ & 1) (d)[l_] = (T)own_slow_##F(xs_[l_], ys_[l_]); \
    } \
  } while (0)
#define OWN_BSTEP(d, x, y, W, T, F) OWN_BVEC(W, T, F, d, x, y)
#define OWN_BIN_LOOPV(NAME, W, T, F) \
  OWN_TGT_##W static void NAME(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    T *o = (T *)(void *)o_; \
    const T *a = (const T *)(const void *)a_, *b = (const T *)(const void *)b_; \
    T ga[CPU_EW_BLOCK], gb[CPU_EW_BLOCK]; \
    OWN_BIN_EXACT(T, F) \
    if (sb == 0) \
      for (int k = 0; k < CPU_EW_BLOCK; k++) gb[k] = b[0]; \
    CPU_VM_BIN_BLOCKS(T, CPU_EW_BLOCK, W, OWN_BSTEP, CPU_VM_NONE, W, T, F) \
  }
#endif

/* the kernels: op, the kernel's name, its element type */
#define OWN_FUNCS(X) \
  X(EXPM1, expm1_f, float) X(TANH, tanh_f, float) X(COSH, cosh_f, float) X(SINH, sinh_f, float) X(CBRT, cbrt_f, float) \
  X(EXPM1, expm1_d, double) X(TANH, tanh_d, double) X(COSH, cosh_d, double) X(SINH, sinh_d, double) \
  X(CBRT, cbrt_d, double) X(LOG2, log2_f, float) X(LOG10, log10_f, float) \
  X(SIGMOID, sigmoid_f, float) X(SIGMOID, sigmoid_d, double) X(LOG, log_d, double) X(LOG2, log2_d, double) \
  X(LOG10, log10_d, double) X(LOG1P, log1p_d, double) \
  X(ATAN, atan_d, double) X(ATAN, atan_f, float) X(ASIN, asin_f, float) X(ACOS, acos_f, float) \
  X(LOG1P, log1p_f, float) X(ASIN, asin_d, double) X(ACOS, acos_d, double)

#if OWN_X86
#define OWN_IF_X86(...) __VA_ARGS__
#else
#define OWN_IF_X86(...)
#endif
/* a kernel on each path: OWN_LOOP1 and OWN_LOOPV, or (K = BIN_) their
 * two-operand forms */
#define OWN_STAMP(K, F, T) \
  OWN_##K##LOOP1(own_##F##_base, , T, F) \
  OWN_IF_X86(OWN_##K##LOOP1(own_##F##_fma, OWN_TGT_FMA, T, F) OWN_##K##LOOPV(own_##F##_avx2, 4, T, F) \
               OWN_##K##LOOPV(own_##F##_avx512, 8, T, F))
#define OWN_STAMP_UN(OP, F, T) OWN_STAMP(, F, T)
#define OWN_STAMP_BIN(OP, F, T) OWN_STAMP(BIN_, F, T)
OWN_FUNCS(OWN_STAMP_UN)

/* [path][op][0 f32, 1 f64] of the kernels FUNCS stamps, paths as
 * vmath.c's: base, FMA, AVX2, AVX-512 */
#define OWN_ENTRY(OP, F, T, P) [TC_OP_##OP][sizeof(T) == 8] = own_##F##_##P,
#define OWN_ENTRY_BASE(OP, F, T) OWN_ENTRY(OP, F, T, base)
#define OWN_ENTRY_FMA(OP, F, T) OWN_ENTRY(OP, F, T, fma)
#define OWN_ENTRY_AVX2(OP, F, T) OWN_ENTRY(OP, F, T, avx2)
#define OWN_ENTRY_AVX512(OP, F, T) OWN_ENTRY(OP, F, T, avx512)
#define OWN_TABLE(NAME, FN_T, FUNCS) \
  static const FN_T NAME[4][TC_OP_COUNT][2] = { \
    {FUNCS(OWN_ENTRY_BASE)}, \
    OWN_IF_X86({FUNCS(OWN_ENTRY_FMA)}, {FUNCS(OWN_ENTRY_AVX2)}, {FUNCS(OWN_ENTRY_AVX512)})};
OWN_TABLE(own_table, cpu_vmath_fn, OWN_FUNCS)

/* pow and atan2 */
#define OWN_BIN_FUNCS(X) X(POW, pow_f, float) X(POW, pow_d, double) X(ATAN2, atan2_f, float) X(ATAN2, atan2_d, double)
OWN_BIN_FUNCS(OWN_STAMP_BIN)
OWN_TABLE(own_bin_table, cpu_vmath_bin_fn, OWN_BIN_FUNCS)

cpu_vmath_bin_fn cpu_vmath_own_bin(tc_op op, tc_dtype dt, int path) {
  if ((op != TC_OP_POW && op != TC_OP_ATAN2) || (dt != TC_DT_F32 && dt != TC_DT_F64) || path < 0 || path >= 4)
    return NULL;
  return own_bin_table[path][op][dt == TC_DT_F64];
}

cpu_vmath_fn cpu_vmath_own(tc_op op, tc_dtype dt, int path) {
  if (op < 0 || op >= TC_OP_COUNT || (dt != TC_DT_F32 && dt != TC_DT_F64) || path < 0 || path >= 4) return NULL;
  return own_table[path][op][dt == TC_DT_F64];
}
