/* tc_shortest_digits (src/shortest.c, Ryu) against its definition, the
 * search printing used before it, with the neighbours taken exactly from
 * the value's full decimal expansion (not src/'s own search): the fewest
 * significant digits p whose nearest p-digit decimal, or the p-digit
 * decimal on its other side, reads back to the value in its dtype (strtof
 * for f32, strtod, rounded to the format for f16/bf16). Every f16 and bf16 bit pattern, 200 000 random f32 and f64
 * bit patterns, the first 5000 subnormals of each, every power of two, and
 * edge values. (The old search stepped to the neighbours in double
 * arithmetic, which is inexact below 1e-292: it printed 17 digits for
 * 7.120236347223045e-307, where 16 read back.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"
#include "half.h"

/* Whether the text s reads back as v in dt: strtof for f32, strtod for
 * f64, strtod and then rounding to the format (tt_round) for f16/bf16. */
static bool reads_back(const char *s, double v, tc_dtype dt) {
  if (dt == TC_DT_F32) return strtof(s, NULL) == (float)v;
  double r = strtod(s, NULL);
  return (dt == TC_DT_F64 ? r : tt_round(r, dt)) == v;
}

/* Whether the p digits d (value d.ddd * 10^x) read back as v in dt. */
static bool candidate_reads_back(const char *d, int p, int x, double v, tc_dtype dt) {
  char t[48];
  snprintf(t, sizeof t, "%c.%.*se%d", d[0], p - 1, d + 1, x);
  return reads_back(t, v, dt);
}

/* The definition: the fewest significant digits p such that the p-digit
 * decimal nearest to |v| (ties to even), or failing that the p-digit
 * decimal on its other side, reads back; digits without trailing zeros,
 * and the exponent of the first. The two candidates come from the exact
 * decimal expansion of |v| (glibc prints all of it: at most 767
 * significant digits): its first p digits (below) and those plus one unit
 * in the last place (above), the digits after them deciding which is
 * nearer. (When below is exact it is v and reads back.) */
static void reference(double v, tc_dtype dt, char *digits, int *exp10) {
  char ex[820], all[810];
  snprintf(ex, sizeof ex, "%.800e", fabs(v));
  int na = 0;
  const char *s = ex;
  for (; *s != 'e'; s++)
    if (*s != '.') all[na++] = *s;
  int x = atoi(s + 1);
  for (int p = 1; p <= 17; p++) {
    char below[24], above[24];
    memcpy(below, all, (size_t)p);
    memcpy(above, all, (size_t)p);
    int xa = x, i = p - 1;
    for (; i >= 0 && above[i] == '9'; i--) above[i] = '0';
    if (i < 0) { above[0] = '1'; xa++; }
    else above[i]++;
    /* the rest after p digits against half a unit in the last place */
    int half = all[p] - '5';
    for (int j = p + 1; j < na && half == 0; j++) half = all[j] != '0';
    bool up = half > 0 || (half == 0 && (below[p - 1] - '0') % 2);
    const char *c = NULL;
    if (candidate_reads_back(up ? above : below, p, up ? xa : x, fabs(v), dt)) c = up ? above : below;
    else if (candidate_reads_back(up ? below : above, p, up ? x : xa, fabs(v), dt)) c = up ? below : above;
    if (c) {
      int nd = p;
      while (nd > 1 && c[nd - 1] == '0') nd--;
      memcpy(digits, c, (size_t)nd);
      digits[nd] = 0;
      *exp10 = c == above ? xa : x;
      return;
    }
  }
  cr_assert_fail("%.17g: no digits read back", v);
}

static int64_t checked;

static void check(double v, tc_dtype dt) {
  if (!isfinite(v)) return;
  char want[24], got[24];
  int we, ge;
  reference(v, dt, want, &we);
  int n = tc_shortest_digits(v, dt, got, &ge);
  cr_assert(n == (int)strlen(got) && !strcmp(want, got) && (we == ge || !strcmp(want, "0")),
            "%s %.17g: shortest %se%d, reference %se%d", tc_dtype_name(dt), v, got, ge, want, we);
  checked++;
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) {   /* splitmix64 */
  uint64_t z = (rnd_state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

Test(shortest, every_half_pattern) {
  for (uint32_t b = 0; b < 65536; b++) {
    check(tt_f16_bits_to_f64((uint16_t)b), TC_DT_F16);
    check(tt_bf16_bits_to_f64((uint16_t)b), TC_DT_BF16);
  }
  cr_assert(checked > 120000);
}

Test(shortest, random_f32_f64_and_edges) {
  for (int i = 0; i < 30000; i++) {
    uint64_t r = rnd();
    double d;
    memcpy(&d, &r, 8);
    check(d, TC_DT_F64);
    uint32_t r32 = (uint32_t)r;
    float f;
    memcpy(&f, &r32, 4);
    check(f, TC_DT_F32);
  }
  const double edge[] = {5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, 0.1, 0.3,
                         1.0 / 3, 2.0 / 3, 1e23, 9007199254740993.0, 9007199254740992.0, 123456789012345680.0,
                         1e-5, 1e-4, 1e15, 1e16, 1e17, 5e-5, 0.015625, 4.35, 2.5, 1.5, 100.0, 65504.0, 65520.0,
                         3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38, 16777217.0};
  const tc_dtype flt[] = {TC_DT_BF16, TC_DT_F16, TC_DT_F32, TC_DT_F64};
  for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
    for (int k = 0; k < 4; k++) {
      tc_dtype dt = flt[k];
      double v = dt == TC_DT_F32 ? (double)(float)edge[i] : dt == TC_DT_F16 ? tc_f16_to_f32(tc_f64_to_f16(edge[i]))
                 : dt == TC_DT_BF16 ? tc_bf16_to_f32(tc_f64_to_bf16(edge[i])) : edge[i];
      check(v, dt);
      check(-v, dt);
    }
  /* powers of two, where the interval below is half the one above */
  for (int e = -1074; e <= 1023; e++) check(ldexp(1.0, e), TC_DT_F64);
  for (int e = -149; e <= 127; e++) check(ldexpf(1.0f, e), TC_DT_F32);
  for (int k = 1; k <= 5000; k++) {
    check(k * 4.9406564584124654e-324, TC_DT_F64);
    check((double)(k * 1.40129846e-45f), TC_DT_F32);
  }
}

/* The digit writers against snprintf: every length of 1 to 20 digits at
 * its ends and in between, both ends of i64 and u64, and a point after
 * each position. They may write past the text (up to TC_PUT_ROOM bytes):
 * the bytes after that must be untouched. */
static void check_digits(uint64_t v, int nd, int point) {
  char want[48], buf[TC_PUT_ROOM + 8];
  snprintf(want, sizeof want, "%0*llu", nd, (unsigned long long)v);
  if (point > 0 && point < nd) {
    memmove(want + point + 1, want + point, strlen(want + point) + 1);
    want[point] = '.';
  }
  memset(buf, '#', sizeof buf);
  char *end = tc_put_digits(buf, v, nd, point);
  cr_assert(end - buf == (ptrdiff_t)strlen(want) && !memcmp(buf, want, strlen(want)),
            "%llu in %d digits, point %d: %.*s, want %s", (unsigned long long)v, nd, point, (int)(end - buf), buf, want);
  for (size_t i = TC_PUT_ROOM; i < sizeof buf; i++) cr_assert(buf[i] == '#', "%llu: wrote byte %zu", (unsigned long long)v, i);
}

Test(shortest, integer_digits) {
  for (int k = 0; k < 20; k++) {
    uint64_t p = 1;
    for (int i = 0; i < k; i++) p *= 10;
    uint64_t vals[] = {p, p + 1, p - 1, p + rnd() % (p * 9 > p ? p * 9 : 1), p * 5 - 1};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
      uint64_t v = vals[i];
      char want[32], got[TC_PUT_ROOM + 8];
      snprintf(want, sizeof want, "%llu", (unsigned long long)v);
      *tc_put_u64(got, v) = 0;
      cr_assert_str_eq(got, want);
      int n = (int)strlen(want);
      for (int nd = n; nd <= 20; nd++)
        for (int point = 0; point <= nd + 1; point++) check_digits(v, nd, point);
    }
  }
  const int64_t ints[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX, -1000000000000000000, 999999999999999999};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
    char want[32], got[TC_PUT_ROOM + 8];
    snprintf(want, sizeof want, "%lld", (long long)ints[i]);
    *tc_put_i64(got, ints[i]) = 0;
    cr_assert_str_eq(got, want);
  }
  char got[TC_PUT_ROOM + 8];
  *tc_put_u64(got, UINT64_MAX) = 0;
  cr_assert_str_eq(got, "18446744073709551615");
}

/* tc_read_decimal (the lexer's reading of float literals) gives strtod's
 * double, bit for bit: the corners (2^53 + 1 ties to even, the largest
 * subnormal and the smallest normal, rounding up from subnormal to normal,
 * halfway below the smallest subnormal, DBL_MAX and just past it, 10^-400
 * and 10^400, more than 17 and more than 19 digits, '_' between digits),
 * every exponent from -350 to 320 with short and 16-digit significands,
 * and random doubles printed with 1 to 17 digits and halfway between
 * neighbours (200 000, or 20 000 sampled). */
static void read_same(const char *s) {
  char clean[160];
  size_t w = 0, used;
  for (const char *p = s; *p && w < sizeof clean - 1; p++)
    if (*p != '_') clean[w++] = *p;
  clean[w] = 0;
  double a = tc_read_decimal(s, strlen(s), &used), b = strtod(clean, NULL);
  cr_assert(memcmp(&a, &b, 8) == 0 && used == strlen(s), "%s: read %.17g, strtod %.17g (used %zu)", s, a, b, used);
}

Test(shortest, read_decimal_is_strtod) {
  static const char *const corners[] = {
    "9007199254740993", "9007199254740995", "9007199254740994", "72057594037927945", "99999999999999999",
    "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308", "4.4501477170144017e-308",
    "2.225073858507201136057409796709131975934819546351645648e-308", "4.9406564584124654e-324",
    "2.4703282292062328e-324", "2.4703282292062327e-324", "1e-320", "3.2378839133029012e-319",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e-400", "1e400", "0e999999",
    "123456789012345678", "12345678901234567890123", "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203124", "0.1", "-0.0", "1_000.5", "1e1_0", "1e22", "1e23",
    "1e-22", ".5", "5.", "0.000000000000000000000000000001", "8.98846567431158e307", "6.631236846766476e-316"};
  for (size_t i = 0; i < sizeof corners / sizeof corners[0]; i++) read_same(corners[i]);
  char buf[96];
  for (int e = -350; e <= 320; e++)
    for (uint64_t m = 1; m < 2000; m += 97) {
      snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)m, e);
      read_same(buf);
      snprintf(buf, sizeof buf, "%llu.%llue%d", (unsigned long long)m, 99999999999999ull - m, e);
      read_same(buf);
    }
  uint64_t s = 0x9e3779b97f4a7c15ull;
  int n = tt_sampled() ? 20000 : 200000;
  for (int k = 0; k < n; k++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint64_t bits = s & 0x7fefffffffffffffull;
    if (k % 4 == 0) bits = (s & 0x001fffffffffffffull) | ((s >> 60) << 50 & 0x0030000000000000ull);   /* near 2^-1022 */
    double d, e;
    memcpy(&d, &bits, 8);
    e = nextafter(d, INFINITY);
    snprintf(buf, sizeof buf, "%.*g", (int)(s % 17) + 1, d);
    read_same(buf);
    snprintf(buf, sizeof buf, "%.17g", d);
    read_same(buf);
    snprintf(buf, sizeof buf, "%.16e", d / 2 + e / 2);   /* about halfway */
    read_same(buf);
  }
}
