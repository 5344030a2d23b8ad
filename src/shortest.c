/* The shortest decimal that reads back to a float, for every float dtype:
 * Ryu (Ulf Adams, PLDI 2018), written for any IEEE binary format whose
 * significand fits 53 bits, with the 125-bit tables of its double version
 * (src/ryu_tables.h, from scripts/gen-ryu-tables.py). Of the shortest
 * digit strings inside the value's rounding interval (its bounds included
 * when the significand is even, as round-half-even reading includes them)
 * it returns the one nearest the value, ties to even: the digits that
 * printing used to find by trying "%.*e" at each precision and reading it
 * back, at a small fraction of the cost. Also the decimal text of
 * integers, which the printers and save_csv write without stdio. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "ryu_tables.h"

__extension__ typedef unsigned __int128 u128;

static int32_t pow5bits(int32_t e) { return (int32_t)(((uint32_t)e * 1217359) >> 19) + 1; }
static uint32_t log10_pow2(int32_t e) { return ((uint32_t)e * 78913) >> 18; }
static uint32_t log10_pow5(int32_t e) { return ((uint32_t)e * 732923) >> 20; }

static uint32_t pow5_factor(uint64_t v) {
  uint32_t n = 0;
  while (v % 5 == 0) { v /= 5; n++; }
  return n;
}

static bool multiple_of_pow5(uint64_t v, uint32_t p) { return pow5_factor(v) >= p; }
static bool multiple_of_pow2(uint64_t v, uint32_t p) { return (v & (((uint64_t)1 << p) - 1)) == 0; }

static uint64_t mul_shift(uint64_t m, const uint64_t *mul, int32_t j) {
  u128 b0 = (u128)m * mul[0], b2 = (u128)m * mul[1];
  return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/* The value (-1)^s * mant * 2^e of a finite nonzero float, from its fields:
 * the stored significand `frac` (mbits wide), the biased exponent and the bias. */
typedef struct { uint64_t frac; int32_t exp, mbits, bias; } fields;

/* Ryu's d2d for any format: the shortest output with value out * 10^*e10. */
static uint64_t ryu(fields f, int32_t *e10out) {
  int32_t e2;
  uint64_t m2;
  if (f.exp == 0) { e2 = 1 - f.bias - f.mbits - 2; m2 = f.frac; }
  else { e2 = f.exp - f.bias - f.mbits - 2; m2 = ((uint64_t)1 << f.mbits) | f.frac; }
  bool accept = (m2 & 1) == 0;
  uint64_t mv = 4 * m2, vr, vp, vm;
  uint32_t mm_shift = f.frac != 0 || f.exp <= 1;
  int32_t e10;
  bool vm_zeros = false, vr_zeros = false;
  if (e2 >= 0) {
    uint32_t q = log10_pow2(e2) - (e2 > 3);
    e10 = (int32_t)q;
    int32_t i = -e2 + (int32_t)q + TC_POW5_INV_BITCOUNT + pow5bits((int32_t)q) - 1;
    vr = mul_shift(4 * m2, TC_POW5_INV_SPLIT[q], i);
    vp = mul_shift(4 * m2 + 2, TC_POW5_INV_SPLIT[q], i);
    vm = mul_shift(4 * m2 - 1 - mm_shift, TC_POW5_INV_SPLIT[q], i);
    if (q <= 21) {
      if (mv % 5 == 0) vr_zeros = multiple_of_pow5(mv, q);
      else if (accept) vm_zeros = multiple_of_pow5(mv - 1 - mm_shift, q);
      else vp -= multiple_of_pow5(mv + 2, q);
    }
  } else {
    uint32_t q = log10_pow5(-e2) - (-e2 > 1);
    e10 = (int32_t)q + e2;
    int32_t i = -e2 - (int32_t)q, j = (int32_t)q - (pow5bits(i) - TC_POW5_BITCOUNT);
    vr = mul_shift(4 * m2, TC_POW5_SPLIT[i], j);
    vp = mul_shift(4 * m2 + 2, TC_POW5_SPLIT[i], j);
    vm = mul_shift(4 * m2 - 1 - mm_shift, TC_POW5_SPLIT[i], j);
    if (q <= 1) {
      vr_zeros = true;
      if (accept) vm_zeros = mm_shift == 1;
      else vp--;
    } else if (q < 63) {
      vr_zeros = multiple_of_pow2(mv, q);
    }
  }
  int32_t removed = 0;
  uint64_t out;
  if (vm_zeros || vr_zeros) {   /* the general case: trailing zeros matter */
    uint32_t last = 0;
    while (vp / 10 > vm / 10) {
      vm_zeros &= vm % 10 == 0;
      vr_zeros &= last == 0;
      last = (uint32_t)(vr % 10);
      vr /= 10; vp /= 10; vm /= 10;
      removed++;
    }
    if (vm_zeros)
      while (vm % 10 == 0) {
        vr_zeros &= last == 0;
        last = (uint32_t)(vr % 10);
        vr /= 10; vp /= 10; vm /= 10;
        removed++;
      }
    if (vr_zeros && last == 5 && vr % 2 == 0) last = 4;   /* exactly halfway: round to even */
    out = vr + ((vr == vm && (!accept || !vm_zeros)) || last >= 5);
  } else {
    bool up = false;
    /* most values lose two digits or more: the first two in one step */
    if (vp / 100 > vm / 100) {
      uint64_t r = vr / 100;
      up = vr - 100 * r >= 50;
      vr = r; vp /= 100; vm /= 100;
      removed += 2;
    }
    while (vp / 10 > vm / 10) {
      up = vr % 10 >= 5;
      vr /= 10; vp /= 10; vm /= 10;
      removed++;
    }
    out = vr + (vr == vm || up);
  }
  *e10out = e10 + removed;
  return out;
}

/* The storage fields of v held in dtype dt (v is a value of dt). */
static fields fields_of(double v, tc_dtype dt) {
  uint64_t bits;
  int32_t ebits, mbits;
  switch (dt) {
  case TC_DT_F32: { float x = (float)v; uint32_t b; memcpy(&b, &x, 4); bits = b; ebits = 8; mbits = 23; break; }
  case TC_DT_F16: bits = tc_f64_to_f16(v).bits; ebits = 5; mbits = 10; break;
  case TC_DT_BF16: bits = tc_f64_to_bf16(v).bits; ebits = 8; mbits = 7; break;
  default: memcpy(&bits, &v, 8); ebits = 11; mbits = 52; break;
  }
  return (fields){bits & (((uint64_t)1 << mbits) - 1), (int32_t)((bits >> mbits) & (((uint64_t)1 << ebits) - 1)), mbits,
                  (1 << (ebits - 1)) - 1};
}

/* ---- the definition, for the one case Ryu answers differently ----
 * Ryu finds the shortest digits at the coarsest scale, so where a
 * subnormal's interval (its precision a few bits) holds both 10^E and
 * 9 * 10^(E-1), it answers 1eE even when 9e(E-1), as short, is nearer.
 * There the digits come from the definition: the fewest p whose correctly
 * rounded "%.*e" text, or that text one unit in the last digit away
 * (counted in decimal, exactly), reads back in dt. */
static bool reads_back(const char *s, double v, tc_dtype dt) {
  switch (dt) {
  case TC_DT_F32: return strtof(s, NULL) == (float)v;
  case TC_DT_F16: return tc_f64_to_f16(strtod(s, NULL)).bits == tc_f64_to_f16(v).bits;
  case TC_DT_BF16: return tc_f64_to_bf16(strtod(s, NULL)).bits == tc_f64_to_bf16(v).bits;
  default: return strtod(s, NULL) == v;
  }
}

/* digits (nd of them, value d.ddd * 10^e) plus k (+1 or -1) in the last digit. */
static int step_digits(char *d, int nd, int *e, int k) {
  int i = nd - 1;
  if (k > 0) {
    while (i >= 0 && d[i] == '9') d[i--] = '0';
    if (i < 0) { d[0] = '1'; (*e)++; }   /* 9.99 + 0.01 = 1.00e+1 */
    else d[i]++;
  } else {
    while (i >= 0 && d[i] == '0') d[i--] = '9';
    if (i < 0) return -1;
    d[i]--;
    if (d[0] == '0') {   /* 1.00 - 0.01 = 9.99e-1: one digit more at the end */
      memmove(d, d + 1, (size_t)nd - 1);
      d[nd - 1] = '9';
      (*e)--;
    }
  }
  return 0;
}

static int by_definition(double v, tc_dtype dt, char *digits, int *exp10) {
  for (int p = 1; p <= 17; p++) {
    char e[40], t[48];
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    int nd = 0;
    const char *s = e;
    for (; *s && *s != 'e'; s++)
      if (*s != '.') digits[nd++] = *s;
    int x = atoi(s + 1);
    for (int k = 0; k < 3; k++) {
      char d[24];
      int xe = x;
      memcpy(d, digits, (size_t)nd);
      if (k && step_digits(d, nd, &xe, k == 1 ? -1 : 1) != 0) continue;
      snprintf(t, sizeof t, "%c.%.*se%d", d[0], nd - 1, d + 1, xe);
      if (reads_back(t, v, dt)) {
        memcpy(digits, d, (size_t)nd);
        while (nd > 1 && digits[nd - 1] == '0') nd--;
        digits[nd] = 0;
        *exp10 = xe;
        return nd;
      }
    }
  }
  return 0;   /* not reached: 17 digits read back in every dtype */
}

int tc_shortest_digits(double v, tc_dtype dt, char *digits, int *exp10) {
  if (v == 0) {
    digits[0] = '0';
    digits[1] = 0;
    *exp10 = 0;
    return 1;
  }
  int32_t e;
  fields f = fields_of(fabs(v), dt);
  uint64_t out = ryu(f, &e);
  while (out >= 10 && out % 10 == 0) { out /= 10; e++; }
  if (out == 1 && f.exp == 0) return by_definition(fabs(v), dt, digits, exp10);
  int n = (int)(tc_put_u64(digits, out) - digits);
  digits[n] = 0;
  *exp10 = e + n - 1;
  return n;
}

/* ---- integers ---- */
/* Two digits at a time, from a table: the digits of one number are a
 * short chain of divisions by 100 (by 10^8 first for long ones, whose two
 * halves then go in parallel), where a digit at a time was a chain of 20. */
static const char two_digits[] = "0001020304050607080910111213141516171819"
                                 "2021222324252627282930313233343536373839"
                                 "4041424344454647484950515253545556575859"
                                 "6061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static void put8(char *p, uint32_t v) {
  uint32_t hi = v / 10000, lo = v - hi * 10000;
  memcpy(p, two_digits + 2 * (hi / 100), 2);
  memcpy(p + 2, two_digits + 2 * (hi % 100), 2);
  memcpy(p + 4, two_digits + 2 * (lo / 100), 2);
  memcpy(p + 6, two_digits + 2 * (lo % 100), 2);
}

char *tc_put_u64(char *p, uint64_t v) {
  static const uint64_t pow10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                     1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
                                     100000000000000u, 1000000000000000u, 10000000000000000u,
                                     100000000000000000u, 1000000000000000000u, 10000000000000000000u};
  /* the digit count from the bit length: 1233 / 4096 is just above log10(2) */
  int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12, n = t + (v >= pow10[t]);
  char *end = p + (n ? n : 1), *q = end;
  while (v >= 100000000) {
    uint64_t hi = v / 100000000;
    put8(q -= 8, (uint32_t)(v - hi * 100000000));
    v = hi;
  }
  uint32_t w = (uint32_t)v;
  for (; w >= 100; w /= 100) memcpy(q -= 2, two_digits + 2 * (w % 100), 2);
  if (w >= 10) memcpy(q - 2, two_digits + 2 * w, 2);
  else q[-1] = (char)('0' + w);
  return end;
}

char *tc_put_i64(char *p, int64_t v) {
  if (v >= 0) return tc_put_u64(p, (uint64_t)v);
  *p = '-';
  return tc_put_u64(p + 1, 0 - (uint64_t)v);   /* INT64_MIN too */
}
