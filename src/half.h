/* f16 and bf16 as their own types, with round-to-nearest-even conversions.
 * Shared by the CPU engine and the CUDA engine (TC_HD marks host+device). */
#ifndef TC_HALF_H
#define TC_HALF_H
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TC_HD __host__ __device__ static inline
#else
#define TC_HD static inline
#endif

typedef struct tc_f16 { uint16_t bits; } tc_f16;
typedef struct tc_bf16 { uint16_t bits; } tc_bf16;

TC_HD uint64_t tc_f64_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
TC_HD double tc_bits_f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
TC_HD uint32_t tc_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
TC_HD float tc_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Round a double to a binary format with `eb` exponent bits and `mb`
 * mantissa bits (f16: 5/10, bf16: 8/7), to nearest, ties to even, straight
 * from the double's bits so there is exactly one rounding. Overflow gives
 * inf; NaN stays a quiet NaN with the sign kept. */
TC_HD uint16_t tc_round_half(double d, int eb, int mb) {
  uint64_t u = tc_f64_bits(d);
  uint16_t sign = (uint16_t)((u >> 63) << (eb + mb));
  int e = (int)((u >> 52) & 0x7ff);
  uint64_t m = u & 0xfffffffffffffull;
  uint16_t expmask = (uint16_t)(((1u << eb) - 1) << mb);
  if (e == 0x7ff) /* inf or NaN */
    return (uint16_t)(sign | expmask | (m ? (1u << (mb - 1)) : 0));
  if (e == 0 && m == 0) return sign;
  int bias = (1 << (eb - 1)) - 1;
  /* value = 1.m * 2^(e-1023) (doubles' subnormals are far below any half) */
  int ue = e - 1023;
  uint64_t sig = m | (1ull << 52);   /* 53-bit significand */
  int shift;                          /* bits of sig to drop */
  uint32_t te;                        /* target biased exponent */
  if (ue + bias >= 1) {               /* normal in the target */
    te = (uint32_t)(ue + bias);
    shift = 52 - mb;
  } else {                            /* subnormal in the target */
    te = 0;
    shift = 52 - mb + (1 - bias - ue);
    if (shift > 62) return sign;      /* rounds to zero (below half the least subnormal) */
  }
  uint64_t kept = sig >> shift;
  uint64_t rest = sig & ((1ull << shift) - 1);
  uint64_t halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1))) kept++;
  /* kept now holds the significand with the implicit bit (for normals); a
   * carry into the next power of two moves the exponent up by one. */
  uint32_t r;
  if (te == 0) {
    r = (uint32_t)kept;               /* may carry into the smallest normal: correct as is */
  } else {
    if (kept >> (mb + 1)) { kept >>= 1; te++; }
    if (te >= (1u << eb) - 1) return (uint16_t)(sign | expmask);
    r = (te << mb) | (uint32_t)(kept & ((1u << mb) - 1));
  }
  return (uint16_t)(sign | r);
}

TC_HD double tc_half_to_f64(uint16_t h, int eb, int mb) {
  int sign = h >> (eb + mb);
  int e = (h >> mb) & ((1 << eb) - 1);
  uint32_t m = h & ((1u << mb) - 1);
  int bias = (1 << (eb - 1)) - 1;
  uint64_t u;
  if (e == (1 << eb) - 1) {
    u = (0x7ffull << 52) | ((uint64_t)m << (52 - mb));
    if (m) u |= 1ull << 51;
  } else if (e == 0) {
    if (m == 0) u = 0;
    else {
      int de = 1 - bias;  /* m * 2^(de - mb) */
      while (!(m & (1u << mb))) { m <<= 1; de--; }
      m &= (1u << mb) - 1;
      u = ((uint64_t)(de + 1023) << 52) | ((uint64_t)m << (52 - mb));
    }
  } else {
    u = ((uint64_t)(e - bias + 1023) << 52) | ((uint64_t)m << (52 - mb));
  }
  return tc_bits_f64(u | ((uint64_t)sign << 63));
}

/* Every half value is exact in f32, so these widen exactly. */
TC_HD float tc_f16_to_f32(tc_f16 h) { return (float)tc_half_to_f64(h.bits, 5, 10); }
TC_HD float tc_bf16_to_f32(tc_bf16 h) { return tc_bits_f32((uint32_t)h.bits << 16); }
TC_HD tc_f16 tc_f64_to_f16(double d) { tc_f16 h; h.bits = tc_round_half(d, 5, 10); return h; }
TC_HD tc_bf16 tc_f64_to_bf16(double d) { tc_bf16 h; h.bits = tc_round_half(d, 8, 7); return h; }
/* f32 -> f64 is exact, so this is still a single rounding. */
TC_HD tc_f16 tc_f32_to_f16(float f) { return tc_f64_to_f16((double)f); }
TC_HD tc_bf16 tc_f32_to_bf16(float f) {
  uint32_t u = tc_f32_bits(f);
  tc_bf16 h;
  if ((u & 0x7fffffffu) > 0x7f800000u) { h.bits = (uint16_t)((u >> 16) | 0x40); return h; }
  u += 0x7fffu + ((u >> 16) & 1u);   /* round to nearest even on the dropped 16 bits */
  h.bits = (uint16_t)(u >> 16);
  return h;
}

/* i64 -> double with round-to-odd, so that a second rounding to a narrower
 * format (f32, f16, bf16) gives the correctly rounded result. */
TC_HD double tc_u64_to_f64_odd(uint64_t a) {
  if (a < (1ull << 53)) return (double)a;
  int len = 64;
  while (!(a >> (len - 1))) len--;
  int s = len - 53;
  uint64_t m = (a >> s) | ((a & ((1ull << s) - 1)) != 0);
  return (double)m * (double)(1ull << s);
}
TC_HD double tc_i64_to_f64_odd(int64_t x) {
  double d = tc_u64_to_f64_odd(x < 0 ? 0 - (uint64_t)x : (uint64_t)x);
  return x < 0 ? -d : d;
}
#endif
