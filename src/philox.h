/* The random numbers of rand, randn and randint: Philox-4x32-10 (Salmon et
 * al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11) keyed by the
 * seed and counted by the element index, then mapped to values with IEEE
 * operations in a fixed order. Shared by the CPU and CUDA engines (TC_HD),
 * so element i is the same bits on every engine:
 *
 *   key     = (seed mod 2^32, seed >> 32)
 *   counter = (i mod 2^32, i >> 32, 0, 0)          -> words w0, w1, w2, w3
 *   u(a, b) = ((b * 2^32 + a) >> 11) * 2^-53       (53 random bits, [0, 1))
 *   rand    = u(w0, w1)
 *   randn   = sqrt(-2 log(1 - u(w0, w1))) * cos(2 pi u(w2, w3))   (Box-Muller, cosine half)
 *   randint = lo + floor((w1 * 2^32 + w0) * (hi - lo) / 2^64)       (64-bit multiply-high)
 *
 * log and cos are computed here (not by the C or CUDA math library, whose
 * last bits differ) from +, -, *, / and sqrt only, which IEEE 754 rounds
 * exactly; on CUDA the _rn intrinsics keep nvcc from fusing them into FMAs.
 * On the host this relies on C's default of no contraction in ISO mode
 * (-std=c17), which GCC honours. */
#ifndef TC_PHILOX_H
#define TC_PHILOX_H
#include <stdint.h>
#include "half.h"   /* TC_HD */

#if defined(__CUDA_ARCH__)
#define TC_DADD(a, b) __dadd_rn((a), (b))
#define TC_DSUB(a, b) __dsub_rn((a), (b))
#define TC_DMUL(a, b) __dmul_rn((a), (b))
#define TC_DDIV(a, b) __ddiv_rn((a), (b))
#define TC_DSQRT(a) __dsqrt_rn(a)
#else
#include <math.h>
#define TC_DADD(a, b) ((a) + (b))
#define TC_DSUB(a, b) ((a) - (b))
#define TC_DMUL(a, b) ((a) * (b))
#define TC_DDIV(a, b) ((a) / (b))
#define TC_DSQRT(a) sqrt(a)
#endif

typedef struct tc_philox4 { uint32_t w[4]; } tc_philox4;

TC_HD void tc_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
  uint64_t p = (uint64_t)a * b;
  *hi = (uint32_t)(p >> 32);
  *lo = (uint32_t)p;
}

/* Philox-4x32 with 10 rounds on counter c and key k. */
TC_HD tc_philox4 tc_philox4x32_10(tc_philox4 c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    uint32_t hi0, lo0, hi1, lo1;
    tc_mulhilo32(0xD2511F53u, c.w[0], &hi0, &lo0);
    tc_mulhilo32(0xCD9E8D57u, c.w[2], &hi1, &lo1);
    tc_philox4 n;
    n.w[0] = hi1 ^ c.w[1] ^ k0;
    n.w[1] = lo1;
    n.w[2] = hi0 ^ c.w[3] ^ k1;
    n.w[3] = lo0;
    c = n;
  }
  return c;
}

/* The four words for element i of a tensor drawn with seed. */
TC_HD tc_philox4 tc_philox_at(uint64_t seed, uint64_t i) {
  tc_philox4 c;
  c.w[0] = (uint32_t)i;
  c.w[1] = (uint32_t)(i >> 32);
  c.w[2] = 0;
  c.w[3] = 0;
  return tc_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* 53 random bits as a double in [0, 1): exact, no rounding. */
TC_HD double tc_u53(uint32_t lo, uint32_t hi) {
  uint64_t x = (((uint64_t)hi << 32) | lo) >> 11;
  return (double)x * (1.0 / 9007199254740992.0);
}

/* log(x) for x in (0, 1] written with +, -, *, / only: x = m * 2^e with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) with s = (m - 1) / (m + 1),
 * |s| < 0.1716, summed to s^23 (relative error a few ulps). */
TC_HD double tc_det_log(double x) {
  uint64_t u = tc_f64_bits(x);
  int e = (int)((u >> 52) & 0x7ff);
  /* a subnormal is scaled by 2^54 into the normals (exact); selects, not
   * branches, here and below, so that the CPU's loops vectorise */
  uint64_t us = tc_f64_bits(TC_DMUL(x, 18014398509481984.0));
  u = e == 0 ? us : u;
  e = e == 0 ? (int)((us >> 52) & 0x7ff) - 54 : e;
  e -= 1023;
  double m = tc_bits_f64((u & 0xfffffffffffffull) | 0x3ff0000000000000ull);  /* [1, 2) */
  int big = m > 1.4142135623730951;
  m = big ? TC_DMUL(m, 0.5) : m;
  e += big;
  double f = TC_DSUB(m, 1.0);            /* exact (Sterbenz) */
  double s = TC_DDIV(f, TC_DADD(2.0, f));
  double s2 = TC_DMUL(s, s);
  double t = 1.0 / 23;
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 21);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 19);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 17);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 15);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 13);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 11);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 9);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 7);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 5);
  t = TC_DADD(TC_DMUL(t, s2), 1.0 / 3);
  /* log m = 2s + 2s * s2 * t */
  double s_2 = TC_DMUL(s, 2.0);
  double logm = TC_DADD(s_2, TC_DMUL(TC_DMUL(s_2, s2), t));
  /* e * log 2 in two parts: the high part is 45426 / 2^16 (16 bits), so
   * e * hi is exact; the low part is log 2 minus that, rounded */
  double de = (double)e;
  return TC_DADD(TC_DMUL(de, 0.693145751953125), TC_DADD(TC_DMUL(de, 1.4286068203094173e-06), logm));
}

/* k[0] z^10 - k[1] z^9 + ... + k[10] by Horner: x = k[i] - x z, from the top. */
TC_HD double tc_det_alt_series(const double k[11], double z) {
  double x = k[0];
  for (int i = 1; i < 11; i++) x = TC_DSUB(k[i], TC_DMUL(x, z));
  return x;
}

/* cos(2 pi t) for t in [0, 1) a multiple of 2^-53: the quadrant comes from
 * 4t exactly; the rest is a Taylor series on |theta| <= pi/4. */
TC_HD double tc_det_cos_turns(double t) {
  double q4 = TC_DMUL(t, 4.0);            /* exact */
  double qn = (double)(int)TC_DADD(q4, 0.5);   /* nearest quadrant, 0..4 */
  double r = TC_DSUB(q4, qn);             /* exact, in [-0.5, 0.5] */
  double th = TC_DMUL(r, 1.5707963267948966);
  double z = TC_DMUL(th, th);
  int quad = ((int)qn) & 3;
  /* cos: sum of (-1)^n z^n / (2n)! for n <= 10; sin: theta * sum of
   * (-1)^n z^n / (2n+1)! for n <= 10; both by Horner from the top term */
  const double cos_k[] = {
    1.0 / 2432902008176640000.0, 1.0 / 6402373705728000.0, 1.0 / 20922789888000.0,
    1.0 / 87178291200.0, 1.0 / 479001600.0, 1.0 / 3628800.0, 1.0 / 40320.0, 1.0 / 720.0,
    1.0 / 24.0, 1.0 / 2.0, 1.0};
  const double sin_k[] = {
    1.0 / 51090942171709440000.0, 1.0 / 121645100408832000.0, 1.0 / 355687428096000.0,
    1.0 / 1307674368000.0, 1.0 / 6227020800.0, 1.0 / 39916800.0, 1.0 / 362880.0,
    1.0 / 5040.0, 1.0 / 120.0, 1.0 / 6.0, 1.0};
  double c = tc_det_alt_series(cos_k, z), s = tc_det_alt_series(sin_k, z);
  s = TC_DMUL(s, th);
  return quad == 0 ? c : quad == 1 ? -s : quad == 2 ? -c : s;
}

/* The value of element i for each distribution. */
TC_HD double tc_rand_uniform(uint64_t seed, uint64_t i) {
  tc_philox4 r = tc_philox_at(seed, i);
  return tc_u53(r.w[0], r.w[1]);
}

TC_HD double tc_rand_normal(uint64_t seed, uint64_t i) {
  tc_philox4 r = tc_philox_at(seed, i);
  double u1 = TC_DSUB(1.0, tc_u53(r.w[0], r.w[1]));   /* (0, 1], exact */
  double u2 = tc_u53(r.w[2], r.w[3]);
  double rad = TC_DSQRT(TC_DMUL(-2.0, tc_det_log(u1)));
  return TC_DMUL(rad, tc_det_cos_turns(u2));
}

/* High 64 bits of a * b, from 32-bit halves. */
TC_HD uint64_t tc_mulhi64(uint64_t a, uint64_t b) {
  uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* lo + an integer in [0, range): range is hi - lo as an unsigned number. */
TC_HD int64_t tc_rand_int(uint64_t seed, uint64_t i, int64_t lo, uint64_t range) {
  tc_philox4 r = tc_philox_at(seed, i);
  uint64_t x = ((uint64_t)r.w[1] << 32) | r.w[0];
  return (int64_t)((uint64_t)lo + tc_mulhi64(x, range));
}
#endif
