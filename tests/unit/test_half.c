/* f16 and bf16: every one of the 65536 bit patterns of each, through the
 * casts and through the conversions of src/half.h, against independent
 * decoders (the compiler's _Float16; bf16 as the top half of an f32) and
 * the reference rounding; random f32/f64/i64 values; double-rounding traps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"
#include "half.h"

static bool is_nan_bits(uint16_t b, tc_dtype dt) {
  return dt == TC_DT_F16 ? (b & 0x7c00) == 0x7c00 && (b & 0x3ff) : (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

static double decode(uint16_t b, tc_dtype dt) {
  return dt == TC_DT_F16 ? tt_f16_bits_to_f64(b) : tt_bf16_bits_to_f64(b);
}

/* All patterns of a half type -> f32, f64, the other half type and back. */
static void exhaustive(tc_dtype half) {
  const int64_t n = 65536;
  uint16_t *bits = malloc(2 * (size_t)n), *back = malloc(2 * (size_t)n);
  for (int64_t k = 0; k < n; k++) bits[k] = (uint16_t)k;
  tc_err err = tt_err();
  tc_tensor *h = tc_tensor_from_host(half, 1, &n, bits, &err);
  cr_assert_not_null(h, "%s", tt_msg(&err));
  const tc_dtype wide[] = {TC_DT_F32, TC_DT_F64};
  for (int w = 0; w < 2; w++) {
    tc_tensor *x = tc_cast(h, wide[w], &err);
    cr_assert_not_null(x, "%s", tt_msg(&err));
    double *v = malloc(sizeof(double) * (size_t)n);
    tt_read(x, NULL, v);
    for (int64_t k = 0; k < n; k++) {
      double want = decode(bits[k], half);
      TT_CHECK(tt_close(v[k], want, wide[w], 0), "%s 0x%04x -> %s = %.17g, expected %.17g", tt_name(half),
               (unsigned)bits[k], tt_name(wide[w]), v[k], want);
      if (isnan(want)) TT_CHECK(signbit(v[k]) == signbit(want), "%s 0x%04x: NaN sign lost", tt_name(half), (unsigned)k);
    }
    free(v);
    tc_tensor *y = tc_cast(x, half, &err);
    cr_assert_not_null(y, "%s", tt_msg(&err));
    cr_assert_eq(tc_tensor_to_host(y, back, &err), 0);
    for (int64_t k = 0; k < n; k++) {
      if (is_nan_bits(bits[k], half))
        TT_CHECK(is_nan_bits(back[k], half) && (back[k] & 0x8000) == (bits[k] & 0x8000),
                 "%s NaN 0x%04x -> %s -> 0x%04x", tt_name(half), (unsigned)bits[k], tt_name(wide[w]), (unsigned)back[k]);
      else
        TT_CHECK(back[k] == bits[k], "%s 0x%04x -> %s -> 0x%04x", tt_name(half), (unsigned)bits[k], tt_name(wide[w]),
                 (unsigned)back[k]);
    }
    tc_tensor_free(y);
    tc_tensor_free(x);
  }
  /* to the other half type: one rounding of the exact value */
  tc_dtype other = half == TC_DT_F16 ? TC_DT_BF16 : TC_DT_F16;
  tc_tensor *o = tc_cast(h, other, &err);
  cr_assert_not_null(o);
  double *v = malloc(sizeof(double) * (size_t)n);
  tt_read(o, NULL, v);
  for (int64_t k = 0; k < n; k++) {
    double want = tt_round(decode(bits[k], half), other);
    TT_CHECK(tt_close(v[k], want, other, 0), "%s 0x%04x -> %s = %.17g, expected %.17g", tt_name(half), (unsigned)k,
             tt_name(other), v[k], want);
  }
  free(v);
  tc_tensor_free(o);
  tc_tensor_free(h);
  free(bits);
  free(back);
}

Test(half, f16_all_bit_patterns_round_trip) { exhaustive(TC_DT_F16); TT_DONE(); }
Test(half, bf16_all_bit_patterns_round_trip) { exhaustive(TC_DT_BF16); TT_DONE(); }

/* The inline conversions of half.h, used by every engine, on all patterns. */
Test(half, half_h_conversions_all_patterns) {
  for (uint32_t k = 0; k < 65536; k++) {
    uint16_t b = (uint16_t)k;
    tc_f16 h = {b};
    tc_bf16 g = {b};
    double vf = tt_f16_bits_to_f64(b), vb = tt_bf16_bits_to_f64(b);
    TT_CHECK(tt_close(tc_f16_to_f32(h), vf, TC_DT_F32, 0), "tc_f16_to_f32(0x%04x)", (unsigned)k);
    TT_CHECK(tt_close(tc_bf16_to_f32(g), vb, TC_DT_F32, 0), "tc_bf16_to_f32(0x%04x)", (unsigned)k);
    if (!isnan(vf)) {
      TT_CHECK(tc_f32_to_f16((float)vf).bits == b, "tc_f32_to_f16 round trip 0x%04x", (unsigned)k);
      TT_CHECK(tc_f64_to_f16(vf).bits == b, "tc_f64_to_f16 round trip 0x%04x", (unsigned)k);
    } else {
      TT_CHECK(is_nan_bits(tc_f32_to_f16((float)vf).bits, TC_DT_F16), "f16 NaN 0x%04x", (unsigned)k);
    }
    if (!isnan(vb)) {
      TT_CHECK(tc_f32_to_bf16((float)vb).bits == b, "tc_f32_to_bf16 round trip 0x%04x", (unsigned)k);
      TT_CHECK(tc_f64_to_bf16(vb).bits == b, "tc_f64_to_bf16 round trip 0x%04x", (unsigned)k);
    } else {
      TT_CHECK(is_nan_bits(tc_f32_to_bf16((float)vb).bits, TC_DT_BF16), "bf16 NaN 0x%04x", (unsigned)k);
      TT_CHECK(is_nan_bits(tc_f64_to_bf16(vb).bits, TC_DT_BF16), "bf16 NaN 0x%04x via f64", (unsigned)k);
    }
  }
  TT_DONE();
}

static uint16_t ref_bits(double r, tc_dtype dt) {
  uint16_t b;
  char buf[2];
  tt_put_f(dt, buf, 0, r);
  memcpy(&b, buf, 2);
  return b;
}

/* Random f32 bit patterns (every exponent) -> f16 and bf16. */
Test(half, random_f32_to_half) {
  uint64_t s = 99;
  const int64_t n = 1 << 20;
  float *f = malloc(sizeof(float) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    uint32_t u = (uint32_t)tt_rand(&s);
    /* half the values near the f16 range, so its rounding is exercised */
    if (k & 1) u = (u & 0x807fffffu) | ((uint32_t)(100 + tt_rand(&s) % 50) << 23);
    memcpy(&f[k], &u, 4);
  }
  tc_err err = tt_err();
  tc_tensor *x = tc_tensor_from_host(TC_DT_F32, 1, &n, f, &err);
  cr_assert_not_null(x);
  uint16_t *out = malloc(2 * (size_t)n);
  const tc_dtype halves[] = {TC_DT_F16, TC_DT_BF16};
  for (int w = 0; w < 2; w++) {
    tc_tensor *o = tc_cast(x, halves[w], &err);
    cr_assert_not_null(o);
    tc_tensor_to_host(o, out, &err);
    for (int64_t k = 0; k < n; k++) {
      if (isnan(f[k])) { TT_CHECK(is_nan_bits(out[k], halves[w]), "NaN"); continue; }
      uint16_t want = ref_bits(tt_round(f[k], halves[w]), halves[w]);
      TT_CHECK(out[k] == want, "f32 %a -> %s 0x%04x, expected 0x%04x", (double)f[k], tt_name(halves[w]),
               (unsigned)out[k], (unsigned)want);
      if (halves[w] == TC_DT_F16) {
        _Float16 c = (_Float16)f[k];   /* the compiler's own conversion agrees */
        uint16_t cb;
        memcpy(&cb, &c, 2);
        TT_CHECK(cb == want, "reference disagrees with _Float16 at %a", (double)f[k]);
      }
    }
    tc_tensor_free(o);
  }
  tc_tensor_free(x);
  free(f);
  free(out);
  TT_DONE();
}

/* Random f64 values in and around each half range -> f16 and bf16. */
Test(half, random_f64_to_half) {
  uint64_t s = 1234;
  const int64_t n = 1 << 19;
  double *d = malloc(sizeof(double) * (size_t)n);
  uint16_t *out = malloc(2 * (size_t)n);
  const tc_dtype halves[] = {TC_DT_F16, TC_DT_BF16};
  for (int w = 0; w < 2; w++) {
    int mb, emin, emax;
    tt_fmt(halves[w], &mb, &emin, &emax);
    for (int64_t k = 0; k < n; k++) {
      uint64_t u = tt_rand(&s);
      int e = emin - mb - 3 + (int)(tt_rand(&s) % (uint64_t)(emax - emin + mb + 6));
      uint64_t m = u & 0xfffffffffffffull;
      /* some values exactly on or next to a tie of the half format */
      if (k % 4 == 1) m = (m & ~((1ull << (52 - mb)) - 1)) | (1ull << (51 - mb));
      if (k % 4 == 2) m = (m & ~((1ull << (52 - mb)) - 1)) | (1ull << (51 - mb)) | 1;
      d[k] = ldexp(1.0 + (double)m * 0x1p-52, e) * ((u >> 63) ? -1 : 1);
    }
    tc_err err = tt_err();
    tc_tensor *x = tc_tensor_from_host(TC_DT_F64, 1, &n, d, &err);
    tc_tensor *o = tc_cast(x, halves[w], &err);
    cr_assert_not_null(o);
    tc_tensor_to_host(o, out, &err);
    for (int64_t k = 0; k < n; k++) {
      uint16_t want = ref_bits(tt_round(d[k], halves[w]), halves[w]);
      TT_CHECK(out[k] == want, "f64 %a -> %s 0x%04x, expected 0x%04x", d[k], tt_name(halves[w]), (unsigned)out[k],
               (unsigned)want);
    }
    tc_tensor_free(o);
    tc_tensor_free(x);
  }
  free(d);
  free(out);
  TT_DONE();
}

static double cast1(tc_dtype from, int64_t iv, double fv, tc_dtype to) {
  tc_err err = tt_err();
  tc_tensor *x = tt_tensor(from, 0, NULL, &iv, &fv);
  tc_tensor *o = tc_cast(x, to, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  double r;
  tt_read(o, NULL, &r);
  tc_tensor_free(o);
  tc_tensor_free(x);
  return r;
}

/* Values just above a bf16/f16 tie, where rounding first to f64 or f32 would
 * land on the tie and then round to even, the wrong way. */
Test(half, double_rounding_traps) {
  const int64_t p62 = (int64_t)1 << 62;
  /* i64 -> bf16: 2^62 + 2^54 is a bf16 tie; +1 makes it round up */
  cr_expect_eq(cast1(TC_DT_I64, p62 + ((int64_t)1 << 54) + 1, 0, TC_DT_BF16), 0x1p62 + 0x1p55);
  cr_expect_eq(cast1(TC_DT_I64, -(p62 + ((int64_t)1 << 54) + 1), 0, TC_DT_BF16), -(0x1p62 + 0x1p55));
  cr_expect_eq(cast1(TC_DT_I64, p62 + ((int64_t)1 << 54), 0, TC_DT_BF16), 0x1p62);
  /* i64 -> f32: 2^62 + 2^38 is an f32 tie */
  cr_expect_eq(cast1(TC_DT_I64, p62 + ((int64_t)1 << 38) + 1, 0, TC_DT_F32), 0x1p62 + 0x1p39);
  cr_expect_eq(cast1(TC_DT_I64, p62 + ((int64_t)1 << 38), 0, TC_DT_F32), 0x1p62);
  /* i64 -> f16: the overflow threshold 65520 is a tie that rounds to inf */
  cr_expect_eq(cast1(TC_DT_I64, 65519, 0, TC_DT_F16), 65504);
  cr_expect(isinf(cast1(TC_DT_I64, 65520, 0, TC_DT_F16)));
  cr_expect(isinf(cast1(TC_DT_I64, INT64_MIN, 0, TC_DT_F16)) && cast1(TC_DT_I64, INT64_MIN, 0, TC_DT_F16) < 0);
  cr_expect_eq(cast1(TC_DT_I64, INT64_MAX, 0, TC_DT_BF16), 0x1p63);
  /* f64 -> bf16: 1 + 2^-8 is a tie; f32 would drop the 2^-40 */
  cr_expect_eq(cast1(TC_DT_F64, 0, 1 + 0x1p-8 + 0x1p-40, TC_DT_BF16), 1 + 0x1p-7);
  cr_expect_eq(cast1(TC_DT_F64, 0, 1 + 0x1p-8, TC_DT_BF16), 1);
  cr_expect_eq(cast1(TC_DT_F64, 0, 1 + 0x1p-8 * 3, TC_DT_BF16), 1 + 0x1p-6);
  /* f64 -> f16: 1 + 2^-11 is a tie */
  cr_expect_eq(cast1(TC_DT_F64, 0, 1 + 0x1p-11 + 0x1p-30, TC_DT_F16), 1 + 0x1p-10);
  cr_expect_eq(cast1(TC_DT_F64, 0, -(1 + 0x1p-11 + 0x1p-50), TC_DT_F16), -(1 + 0x1p-10));
  cr_expect_eq(cast1(TC_DT_F64, 0, 1 + 0x1p-11, TC_DT_F16), 1);
  /* subnormal ties: half the least f16 subnormal goes to 0, a bit more to it */
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1p-25, TC_DT_F16), 0);
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1p-25 + 0x1p-60, TC_DT_F16), 0x1p-24);
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1.8p-24, TC_DT_F16), 0x1p-23);
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1p-134, TC_DT_BF16), 0);
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1p-134 + 0x1p-160, TC_DT_BF16), 0x1p-133);
  /* overflow */
  cr_expect(isinf(cast1(TC_DT_F64, 0, 65520, TC_DT_F16)));
  cr_expect_eq(cast1(TC_DT_F64, 0, 65519.99, TC_DT_F16), 65504);
  cr_expect(isinf(cast1(TC_DT_F64, 0, 0x1.ffp127, TC_DT_BF16)));
  cr_expect_eq(cast1(TC_DT_F64, 0, 0x1.fefffffp127, TC_DT_BF16), 0x1.fep127);
  cr_expect(isinf(cast1(TC_DT_F32, 0, 0x1.ffp127, TC_DT_BF16)));
  /* a sign survives underflow */
  double z = cast1(TC_DT_F64, 0, -1e-300, TC_DT_BF16);
  cr_expect(z == 0 && signbit(z));
  z = cast1(TC_DT_F64, 0, -5e-324, TC_DT_F16);
  cr_expect(z == 0 && signbit(z));
}

/* Random i64 of every bit length -> bf16/f16/f32, checked exactly. */
Test(half, random_i64_to_half_and_f32) {
  uint64_t s = 5;
  const int64_t n = 1 << 18;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  double *got = malloc(sizeof(double) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    uint64_t r = (tt_rand(&s) >> (tt_rand(&s) % 64)) >> 1;
    /* ties of the target formats with a sticky bit below them */
    if (k % 3 == 0) {
      int len = 0, p = (k / 3) % 2 ? 24 : 8;   /* f32 or bf16 significand bits */
      while (len < 64 && (r >> len)) len++;
      if (len > p + 2) r = (r & ~((1ull << (len - p)) - 1)) | (1ull << (len - p - 1)) | 1;
    }
    if (k % 3 == 1) r |= 1;
    v[k] = (int64_t)r * ((k & 1) ? -1 : 1);
  }
  tc_err err = tt_err();
  tc_tensor *x = tt_ivec(TC_DT_I64, n, v);
  const tc_dtype to[] = {TC_DT_BF16, TC_DT_F16, TC_DT_F32};
  for (int w = 0; w < 3; w++) {
    tc_tensor *o = tc_cast(x, to[w], &err);
    cr_assert_not_null(o);
    tt_read(o, NULL, got);
    for (int64_t k = 0; k < n; k++)
      TT_CHECK(got[k] == tt_round_i64(v[k], to[w]), "i64 %lld -> %s = %.17g, expected %.17g", (long long)v[k],
               tt_name(to[w]), got[k], tt_round_i64(v[k], to[w]));
    tc_tensor_free(o);
  }
  tc_tensor_free(x);
  free(v);
  free(got);
  TT_DONE();
}
