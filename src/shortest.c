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

/* ---- decimal digits ----
 * Eight digits at a time in one 64-bit word (SWAR: each step splits every
 * lane of the word at once, 4 + 4 digits, then 2 + 2, then 1 + 1), the
 * first digit in the lowest byte, so that a word stored is the digits in
 * order. Digits come out as whole 16-byte stores, which a reader's wide
 * loads can take straight from the store buffer; built from one- and
 * two-byte stores they cost a store-forwarding stall each time a float's
 * text was laid out. Little-endian hosts (x86-64, AArch64). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "shortest.c lays digits out for a little-endian host"
#endif

static const uint64_t pow10_u64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u, 10000000000u,
    100000000000u, 1000000000000u, 10000000000000u, 100000000000000u, 1000000000000000u, 10000000000000000u,
    100000000000000000u, 1000000000000000000u, 10000000000000000000u};

/* How many decimal digits v has (1 for 0): from its bit length, 1233 / 4096
 * being just above log10(2). */
static int dec_len(uint64_t v) {
  int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
  return t + (v >= pow10_u64[t]) + (v == 0);
}

/* n < 10^8 as eight ASCII digits, the first in the lowest byte. */
static uint64_t swar8(uint32_t n) {
  uint64_t x = n / 10000 | (uint64_t)(n % 10000) << 32;        /* 2 lanes < 10^4 */
  uint64_t h = (x * 10486) >> 20 & 0x0000007F0000007Fu;          /* each / 100 */
  x = h | (x - h * 100) << 16;                                   /* 4 lanes < 100 */
  h = (x * 103) >> 10 & 0x000F000F000F000Fu;                    /* each / 10 */
  return (h | (x - h * 10) << 8) + 0x3030303030303030u;
}

/* v (< 10^16) in nd (1 to 16) digits, the first of them in the lowest byte. */
static u128 digits16(uint64_t v, int nd) {
  if (nd <= 8) return swar8((uint32_t)v) >> 8 * (8 - nd);   /* one word's work for most integers */
  u128 w = (u128)swar8((uint32_t)(v / 100000000)) | (u128)swar8((uint32_t)(v % 100000000)) << 64;
  return w >> 8 * (16 - nd);
}

char *tc_put_digits(char *p, uint64_t d, int nd, int point) {
  if (nd > 16) {   /* 17 to 20 digits: the k above the last 16 first */
    int k = nd - 16;
    uint64_t top = d / 10000000000000000u, w = swar8((uint32_t)top) >> 8 * (8 - k);
    d -= top * 10000000000000000u;
    memcpy(p, &w, 8);
    if (point > 0 && point <= k) {   /* the point falls among them */
      for (int i = k; i > point; i--) p[i] = p[i - 1];
      p[point] = '.';
      p++;
      point = 0;
    }
    p += k;
    point -= k;
    nd = 16;
  }
  u128 w = digits16(d, nd);
  memcpy(p, &w, 16);
  if (point <= 0 || point >= nd) return p + nd;
  w >>= 8 * point;   /* the digits after the point, one byte further on */
  memcpy(p + point + 1, &w, 16);
  p[point] = '.';
  return p + nd + 1;
}

char *tc_put_u64(char *p, uint64_t v) { return tc_put_digits(p, v, dec_len(v), 0); }

char *tc_put_exponent(char *p, int e) {
  int a = abs(e);
  *p++ = 'e';
  *p++ = e < 0 ? '-' : '+';
  if (a >= 100) *p++ = (char)('0' + a / 100);
  *p++ = (char)('0' + a / 10 % 10);
  *p++ = (char)('0' + a % 10);
  return p;
}

char *tc_put_i64(char *p, int64_t v) {
  if (v >= 0) return tc_put_u64(p, (uint64_t)v);
  *p = '-';
  return tc_put_u64(p + 1, 0 - (uint64_t)v);   /* INT64_MIN too */
}

uint64_t tc_shortest(double v, tc_dtype dt, int *nd, int *exp10) {
  if (v == 0) {
    *nd = 1;
    *exp10 = 0;
    return 0;
  }
  int32_t e;
  fields f = fields_of(fabs(v), dt);
  uint64_t out = ryu(f, &e);
  while (out >= 10 && out % 10 == 0) { out /= 10; e++; }
  if (out == 1 && f.exp == 0) {
    char digits[24];
    int n = by_definition(fabs(v), dt, digits, exp10);
    out = 0;
    for (int i = 0; i < n; i++) out = out * 10 + (uint64_t)(digits[i] - '0');
    *nd = n;
    return out;
  }
  *nd = dec_len(out);
  *exp10 = e + *nd - 1;
  return out;
}

int tc_shortest_digits(double v, tc_dtype dt, char *digits, int *exp10) {
  int nd;
  char t[48];
  uint64_t d = tc_shortest(v, dt, &nd, exp10);
  tc_put_digits(t, d, nd, 0);
  memcpy(digits, t, (size_t)nd);
  digits[nd] = 0;
  return nd;
}

/* ---- reading: decimal text to the nearest double ----
 * Ryu's reading direction (s2d) with the same tables: for a significand
 * m10 of at most 17 digits and any exponent, m10 * 10^e10 scaled into a
 * 64-bit m2 * 2^e2 with enough bits that rounding to 53 can be decided,
 * exactly, from whether the bits cut off are all zero (trailing_zeros:
 * the product is exact) and the first of them. Longer significands go to
 * strtod (correctly rounded too), as does anything this does not read. */
static int32_t floor_log2(uint64_t v) { return 63 - __builtin_clzll(v); }
static int32_t log2pow5(int32_t e) { return (int32_t)(((uint32_t)e * 1217359) >> 19); }

static double decimal_to_f64(uint64_t m10, int32_t e10, int m10digits) {
  if (m10 == 0 || m10digits + e10 <= -324) return 0.0;
  if (m10digits + e10 >= 310) return __builtin_inf();
  int32_t e2;
  uint64_t m2;
  bool exact;
  if (e10 >= 0) {
    e2 = floor_log2(m10) + e10 + log2pow5(e10) - 53;
    int32_t j = e2 - e10 - (log2pow5(e10) + 1) + TC_POW5_BITCOUNT;
    m2 = mul_shift(m10, TC_POW5_SPLIT[e10], j);
    exact = e2 < e10 || (e2 - e10 < 64 && multiple_of_pow2(m10, (uint32_t)(e2 - e10)));
  } else {
    e2 = floor_log2(m10) + e10 - (log2pow5(-e10) + 1) - 53;
    int32_t j = e2 - e10 + (log2pow5(-e10) + 1) - 1 + TC_POW5_INV_BITCOUNT;
    m2 = mul_shift(m10, TC_POW5_INV_SPLIT[-e10], j);
    exact = multiple_of_pow5(m10, (uint32_t)-e10);
  }
  if (m2 == 0) return -1.0;   /* not reached for valid input: strtod decides */
  int32_t be = e2 + 1023 + floor_log2(m2);
  uint32_t ieee_e2 = be > 0 ? (uint32_t)be : 0;
  int32_t shift = (ieee_e2 == 0 ? 1 : (int32_t)ieee_e2) - e2 - 1023 - 52;
  if (shift <= 0 || shift >= 64) return -1.0;   /* the caller reads it with strtod */
  exact &= (m2 & (((uint64_t)1 << (shift - 1)) - 1)) == 0;
  uint64_t last = (m2 >> (shift - 1)) & 1;
  bool up = last && (!exact || ((m2 >> shift) & 1));
  uint64_t m = ((m2 >> shift) + up) & (((uint64_t)1 << 52) - 1);
  if (m == 0 && up) ieee_e2++;   /* rounded up to the next power of two (or from subnormal to normal) */
  if (ieee_e2 > 2046) return __builtin_inf();
  uint64_t bits = ((uint64_t)ieee_e2 << 52) | m;
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

double tc_read_decimal(const char *s, size_t n, size_t *used) {
  size_t i = 0;
  bool neg = i < n && s[i] == '-';
  if (i < n && (s[i] == '-' || s[i] == '+')) i++;
  uint64_t m10 = 0;
  int digits = 0, dropped = 0;   /* significant digits kept, and those past 19 */
  int32_t e10 = 0;
  bool any = false, point = false;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '_') continue;
    if (c == '.' && !point) { point = true; continue; }
    if (c < '0' || c > '9') break;
    any = true;
    if (digits == 0 && c == '0') { if (point) e10--; continue; }   /* leading zeros */
    if (digits < 19) { m10 = m10 * 10 + (uint64_t)(c - '0'); digits++; if (point) e10--; }
    else { dropped++; if (!point) e10++; }
  }
  if (any && i < n && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    bool eneg = k < n && s[k] == '-';
    if (k < n && (s[k] == '-' || s[k] == '+')) k++;
    if (k < n && s[k] >= '0' && s[k] <= '9') {
      int32_t x = 0;
      for (; k < n && ((s[k] >= '0' && s[k] <= '9') || s[k] == '_'); k++)
        if (s[k] != '_' && x < 100000) x = x * 10 + (s[k] - '0');
      e10 += eneg ? -x : x;
      i = k;
    }
  }
  *used = any ? i : 0;
  if (!any) return 0.0;
  double d = -1.0;
  if (digits <= 17 && !dropped) d = decimal_to_f64(m10, e10, digits);
  if (d < 0) {   /* many digits, or a corner: C's correctly rounded reading */
    char small[128];
    char *buf = i < sizeof small ? small : malloc(i + 1);
    if (!buf) { *used = 0; return 0.0; }   /* out of memory: read as nothing */
    size_t w = 0;
    for (size_t k = 0; k < i; k++)
      if (s[k] != '_') buf[w++] = s[k];
    buf[w] = 0;
    d = strtod(buf, NULL);
    if (buf != small) free(buf);
    return d;
  }
  return neg ? -d : d;
}
