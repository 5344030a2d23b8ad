/* Casts (SPEC 3.3) for all 81 (from, to) pairs: integer narrowing keeps
 * the low bits, float -> int truncates with NaN -> 0 and saturation, ->
 * bf16/f16/f32 rounds to nearest even with overflow to inf (with no double
 * rounding on the way), anything -> bool is x != 0. Contiguous, strided and
 * broadcast sources. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"

/* Edge values of `from`, plus values around every integer range and the
 * double-rounding traps, all representable in `from`. */
static void cast_sources(tt_vals *v, tc_dtype from) {
  tt_vals_edges(v, from);
  if (tt_is_flt(from)) {
    const int widths[] = {8, 16, 32, 64};
    for (int k = 0; k < 4; k++) {
      double p = ldexp(1.0, widths[k] - 1);
      const double near[] = {p, p - 1, p + 1, -p, -p - 1, -p + 1, p - 0.5, -p - 0.5, 2 * p, -2 * p};
      for (int q = 0; q < 10; q++) v->f[v->n++] = tt_round(near[q], from);
    }
    const double more[] = {0.99, -0.99, 1e30, -1e30, 9.75, -9.75, 255.5, 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-11 + 0x1p-30,
                           1 + 0x1p-8 + 0x1p-20, 1 + 0x1p-24 + 0x1p-60, 65519.0, 65520.0, -65520.0, 0x1p-25,
                           0x1p-25 + 0x1p-40, 0x1.8p-24, 5e-324, -5e-324, 0x1p-134, 0x1.8p-133, 1e-40};
    for (size_t q = 0; q < sizeof more / sizeof more[0]; q++) v->f[v->n++] = tt_round(more[q], from);
  } else if (from != TC_DT_BOOL) {
    const int64_t more[] = {255, 256, -129, 128, 32768, 65535, 65519, 65520, 65536, -65520, (1 << 24) + 1,
                            ((int64_t)1 << 53) + 1, ((int64_t)1 << 62) + ((int64_t)1 << 54) + 1,
                            ((int64_t)1 << 62) + ((int64_t)1 << 54), ((int64_t)1 << 62) + ((int64_t)1 << 38) + 1,
                            -(((int64_t)1 << 62) + ((int64_t)1 << 38) + 1), ((int64_t)1 << 40) + ((int64_t)1 << 32) + 1,
                            INT64_MAX - 511, INT64_MIN + 1};
    for (size_t q = 0; q < sizeof more / sizeof more[0]; q++)
      v->i[v->n++] = tt_wrap(more[q], tt_bits(from));
  }
}

/* The reference: value of element k of `from` cast to `to`. */
static void cast_ref(tc_dtype from, tc_dtype to, int64_t xi, double xf, int64_t *ri, double *rf) {
  if (to == TC_DT_BOOL) { *ri = tt_is_flt(from) ? xf != 0 || isnan(xf) : xi != 0; return; }
  if (tt_is_int(to)) {
    if (!tt_is_flt(from)) { *ri = tt_wrap(xi, tt_bits(to)); return; }
    if (isnan(xf)) *ri = 0;
    else if (xf <= (double)tt_min(to)) *ri = tt_min(to);
    else if (xf >= ldexp(1.0, tt_bits(to) - 1)) *ri = tt_max(to);
    else *ri = (int64_t)trunc(xf);
    return;
  }
  *rf = tt_is_flt(from) ? tt_round(xf, to) : tt_round_i64(xi, to);
}

static void check_out(tc_tensor *o, tc_dtype from, tc_dtype to, const tt_vals *v, const int *idx, int64_t n,
                      const char *path) {
  TT_CHECK(o->dtype == to, "cast %s->%s %s: dtype %s", tt_name(from), tt_name(to), path, tt_name(o->dtype));
  int64_t *gi = calloc((size_t)n + 1, sizeof *gi);
  double *gf = calloc((size_t)n + 1, sizeof *gf);
  tt_read(o, gi, gf);
  for (int64_t k = 0; k < n; k++) {
    int64_t wi = 0;
    double wf = 0;
    int s = idx[k];
    cast_ref(from, to, v->i[s], v->f[s], &wi, &wf);
    if (tt_is_flt(to)) {
      TT_CHECK(tt_close(gf[k], wf, to, 0), "cast %s->%s %s: %.17g (%lld) -> %.17g, expected %.17g", tt_name(from),
               tt_name(to), path, v->f[s], (long long)v->i[s], gf[k], wf);
    } else {
      TT_CHECK(gi[k] == wi, "cast %s->%s %s: %.17g (%lld) -> %lld, expected %lld", tt_name(from), tt_name(to), path,
               v->f[s], (long long)v->i[s], (long long)gi[k], (long long)wi);
    }
  }
  free(gi);
  free(gf);
}

Test(cast, all_81_pairs) {
  int pairs = 0;
  for (int f = 0; f < TT_NDT; f++)
    for (int t = 0; t < TT_NDT; t++) {
      tc_dtype from = (tc_dtype)f, to = (tc_dtype)t;
      tt_vals v;
      cast_sources(&v, from);
      int n = v.n;
      int seq[2 * TT_MAXV];
      for (int k = 0; k < 2 * TT_MAXV; k++) seq[k] = k % n;
      tc_err err = tt_err();
      /* contiguous */
      int64_t len = n;
      tc_tensor *x = tt_vals_tensor(&v, 1, &len, seq);
      tc_tensor *o = tc_cast(x, to, &err);
      cr_assert_not_null(o, "cast %s->%s: %s", tt_name(from), tt_name(to), tt_msg(&err));
      check_out(o, from, to, &v, seq, n, "contiguous");
      tc_tensor_free(o);
      tc_tensor_free(x);
      /* strided: [n, 2] transposed to [2, n] */
      int64_t sh[2] = {n, 2};
      int idx2[2 * TT_MAXV], want_idx[2 * TT_MAXV];
      for (int k = 0; k < n; k++) { idx2[2 * k] = idx2[2 * k + 1] = k; want_idx[k] = want_idx[n + k] = k; }
      tc_tensor *b = tt_vals_tensor(&v, 2, sh, idx2);
      int perm[2] = {1, 0};
      tc_tensor *tv = tc_view_permute(b, perm, &err);
      cr_assert_not_null(tv);
      o = tc_cast(tv, to, &err);
      cr_assert_not_null(o, "%s", tt_msg(&err));
      check_out(o, from, to, &v, want_idx, 2 * n, "strided");
      tc_tensor_free(o); tc_tensor_free(tv); tc_tensor_free(b);
      /* broadcast: element 2 viewed as [4] with stride 0 */
      int two = 2, twos[4] = {2, 2, 2, 2};
      tc_tensor *s = tt_vals_tensor(&v, 0, NULL, &two);
      int64_t four = 4;
      tc_tensor *bs = tc_view_broadcast(s, 1, &four, &err);
      o = tc_cast(bs, to, &err);
      cr_assert_not_null(o, "%s", tt_msg(&err));
      check_out(o, from, to, &v, twos, 4, "broadcast");
      tc_tensor_free(o); tc_tensor_free(bs); tc_tensor_free(s);
      pairs++;
    }
  cr_assert_eq(pairs, 81);
  TT_DONE();
}

/* Float to narrow ints runs vectors then a scalar tail (backend/cpu/
 * ew_kern.h's ew_sat32), and to i64 at the AVX-512 level vectors of 8 then
 * a masked tail (ew.c's kx512_*): rows of 1 to 9 elements put every edge
 * value in the tail as well as in a vector. */
Test(cast, narrow_int_vector_tails) {
  const double edge[] = {NAN,  -NAN,    INFINITY, -INFINITY, 3e9,   -3e9,    300.7,  -0.5,
                         -1.5, 65535.9, -129.0,   0x1p63,    -0x1p63, 0x1p62, 9.3e18, -9.3e18};
  const int ne = sizeof edge / sizeof *edge;
  const tc_dtype from[] = {TC_DT_F64, TC_DT_F32}, to[] = {TC_DT_I32, TC_DT_I16, TC_DT_I8, TC_DT_U16, TC_DT_U8, TC_DT_I64};
  const int64_t lo[] = {INT32_MIN, INT16_MIN, INT8_MIN, 0, 0, INT64_MIN},
                hi[] = {INT32_MAX, INT16_MAX, INT8_MAX, UINT16_MAX, UINT8_MAX, INT64_MAX};
  for (size_t f = 0; f < 2; f++)
    for (size_t t = 0; t < sizeof to / sizeof *to; t++)
      for (int64_t len = 1; len <= 9; len++)
        for (int rot = 0; rot < ne; rot++) {
          double x[9];
          for (int64_t i = 0; i < len; i++) x[i] = tt_round(edge[(rot + i) % ne], from[f]);
          tc_err err = tt_err();
          tc_tensor *a = tt_fvec(from[f], len, x), *o = tc_cast(a, to[t], &err);
          cr_assert_not_null(o, "%s", tt_msg(&err));
          int64_t got[9];
          tt_read(o, got, NULL);
          for (int64_t i = 0; i < len; i++) {
            /* SPEC 3.3: NaN 0, beyond the range its end, else truncated */
            /* (double)INT64_MAX is 2^63 */
            int64_t want = isnan(x[i]) ? 0 : x[i] <= (double)lo[t] ? lo[t] : x[i] >= (double)hi[t] ? hi[t] : (int64_t)trunc(x[i]);
            TT_CHECK(got[i] == want, "%s -> %s, row of %lld: %g -> %lld, expected %lld", tt_name(from[f]),
                     tt_name(to[t]), (long long)len, x[i], (long long)got[i], (long long)want);
          }
          tc_tensor_free(o);
          tc_tensor_free(a);
        }
  TT_DONE();
}

/* The SPEC 3.3 table, stated literally. */
static int64_t cast_f64_to_int(double d, tc_dtype to) {
  tc_err err = tt_err();
  tc_tensor *x = tt_fscalar(TC_DT_F64, d);
  tc_tensor *o = tc_cast(x, to, &err);
  cr_assert_not_null(o);
  int64_t r;
  tt_read(o, &r, NULL);
  tc_tensor_free(o);
  tc_tensor_free(x);
  return r;
}

Test(cast, spec_table_literal_cases) {
  cr_expect_eq(cast_f64_to_int(NAN, TC_DT_I32), 0);
  cr_expect_eq(cast_f64_to_int(-NAN, TC_DT_I64), 0);
  cr_expect_eq(cast_f64_to_int(INFINITY, TC_DT_I8), 127);
  cr_expect_eq(cast_f64_to_int(-INFINITY, TC_DT_I8), -128);
  cr_expect_eq(cast_f64_to_int(1e300, TC_DT_I64), INT64_MAX);
  cr_expect_eq(cast_f64_to_int(-1e300, TC_DT_I64), INT64_MIN);
  cr_expect_eq(cast_f64_to_int(0x1p63, TC_DT_I64), INT64_MAX);
  cr_expect_eq(cast_f64_to_int(-0x1p63, TC_DT_I64), INT64_MIN);
  cr_expect_eq(cast_f64_to_int(0x1p63 - 1024, TC_DT_I64), INT64_MAX - 1023);
  cr_expect_eq(cast_f64_to_int(-2.9, TC_DT_I16), -2);
  cr_expect_eq(cast_f64_to_int(2.9, TC_DT_I16), 2);
  cr_expect_eq(cast_f64_to_int(128.0, TC_DT_I8), 127);
  cr_expect_eq(cast_f64_to_int(127.9, TC_DT_I8), 127);
  cr_expect_eq(cast_f64_to_int(-128.9, TC_DT_I8), -128);
  cr_expect_eq(cast_f64_to_int(-129.0, TC_DT_I8), -128);
  cr_expect_eq(cast_f64_to_int(NAN, TC_DT_BOOL), 1);
  cr_expect_eq(cast_f64_to_int(-0.0, TC_DT_BOOL), 0);
  cr_expect_eq(cast_f64_to_int(5e-324, TC_DT_BOOL), 1);
  /* narrowing keeps the low bits */
  tc_err err = tt_err();
  int64_t v[4] = {300, -129, 65535, INT64_MIN + 255};
  tc_tensor *x = tt_ivec(TC_DT_I64, 4, v);
  tc_tensor *o = tc_cast(x, TC_DT_I8, &err);
  int64_t r[4];
  tt_read(o, r, NULL);
  cr_expect_eq(r[0], 44);
  cr_expect_eq(r[1], 127);
  cr_expect_eq(r[2], -1);
  cr_expect_eq(r[3], -1);
  tc_tensor_free(o);
  tc_tensor_free(x);
}

/* Casting a weak scalar gives a strong value and leaves the input weak. */
Test(cast, weak_scalar_becomes_strong) {
  tc_err err = tt_err();
  tc_tensor *w = tc_scalar_i64(5, true, &err);
  tc_tensor *o = tc_cast(w, TC_DT_I64, &err);
  cr_assert_not_null(o);
  cr_expect(!o->weak);
  cr_expect(w->weak);
  tc_tensor *f = tc_cast(w, TC_DT_F32, &err);
  cr_expect(!f->weak);
  cr_expect_eq(f->dtype, TC_DT_F32);
  TT_FREE(f, o, w);
}

/* A long random vector through each int -> float cast (exact reference). */
Test(cast, random_int_to_float) {
  uint64_t s = 7;
  const int64_t n = 100000;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  double *got = malloc(sizeof(double) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    uint64_t r = tt_rand(&s);
    v[k] = (int64_t)(r >> (tt_rand(&s) % 63));
    if (k & 1) v[k] = -v[k];
  }
  tc_tensor *x = tt_ivec(TC_DT_I64, n, v);
  for (int dt = TC_DT_BF16; dt <= TC_DT_F64; dt++) {
    tc_err err = tt_err();
    tc_tensor *o = tc_cast(x, (tc_dtype)dt, &err);
    cr_assert_not_null(o);
    tt_read(o, NULL, got);
    for (int64_t k = 0; k < n; k++)
      TT_CHECK(got[k] == tt_round_i64(v[k], (tc_dtype)dt), "i64 %lld -> %s = %.17g, expected %.17g",
               (long long)v[k], tt_name((tc_dtype)dt), got[k], tt_round_i64(v[k], (tc_dtype)dt));
    tc_tensor_free(o);
  }
  tc_tensor_free(x);
  free(v);
  free(got);
  TT_DONE();
}

/* A same-dtype copy (making a view contiguous, reading it back) moves the
 * stored bits: NaN payloads and signalling NaNs survive. */
Test(cast, same_dtype_copies_are_bit_exact) {
  uint64_t s = 77;
  const int64_t rows = 5, cols = 7, n = rows * cols;
  for (int d = 0; d < TT_NDT; d++) {
    tc_dtype dt = (tc_dtype)d;
    size_t es = tc_dtype_size(dt);
    unsigned char buf[8 * 35], got[8 * 35];
    for (size_t k = 0; k < es * (size_t)n; k++) buf[k] = (unsigned char)tt_rand(&s);
    if (dt == TC_DT_BOOL) for (int64_t k = 0; k < n; k++) buf[k] &= 1;
    /* a few NaNs with payloads, signalling ones among them */
    const uint16_t h[4] = {0x7c01, 0x7e55, 0xfe00, 0xfd01}, g[4] = {0x7f81, 0x7fc5, 0xffc0, 0xff81};
    if (dt == TC_DT_F16) memcpy(buf, h, 8);
    if (dt == TC_DT_BF16) memcpy(buf, g, 8);
    if (dt == TC_DT_F32) { uint32_t u = 0x7f800001u; memcpy(buf, &u, 4); }
    if (dt == TC_DT_F64) { uint64_t u = 0x7ff0000000000001ull; memcpy(buf, &u, 8); }
    tc_err err = tt_err();
    const int64_t sh[2] = {rows, cols};
    tc_tensor *x = tc_tensor_from_host(dt, 2, sh, buf, &err);
    int perm[2] = {1, 0};
    tc_tensor *v = tc_view_permute(x, perm, &err);
    cr_assert_eq(tc_tensor_to_host(v, got, &err), 0);
    for (int64_t i = 0; i < cols; i++)
      for (int64_t j = 0; j < rows; j++)
        TT_CHECK(memcmp(got + (size_t)(i * rows + j) * es, buf + (size_t)(j * cols + i) * es, es) == 0,
                 "%s: element (%lld, %lld) changed in a copy", tt_name(dt), (long long)i, (long long)j);
    tc_tensor *c = tc_cast(v, dt, &err);
    cr_assert_not_null(c);
    cr_assert_eq(tc_tensor_to_host(c, got, &err), 0);
    TT_CHECK(memcmp(got, buf, es) == 0 || d == TC_DT_BOOL, "%s: cast to itself changed bits", tt_name(dt));
    tc_tensor_free(c); tc_tensor_free(v); tc_tensor_free(x);
  }
  TT_DONE();
}

/* Bools coming from outside as other nonzero bytes are stored as 1. */
Test(cast, bool_bytes_are_normalised) {
  const uint8_t raw[5] = {2, 0, 255, 1, 0x80};
  tc_err err = tt_err();
  int64_t n = 5;
  tc_tensor *b = tc_tensor_from_host(TC_DT_BOOL, 1, &n, raw, &err);
  int64_t v[5];
  tt_read(b, v, NULL);
  for (int k = 0; k < 5; k++) cr_expect_eq(v[k], raw[k] != 0);
  tc_tensor *t = tt_iscalar(TC_DT_BOOL, 1);
  tc_tensor *a = tc_binary(TC_OP_BITWISE_AND, b, t, &err);
  tt_read(a, v, NULL);
  for (int k = 0; k < 5; k++) cr_expect_eq(v[k], raw[k] != 0, "true & byte %d", raw[k]);
  tc_tensor_free(a); tc_tensor_free(t); tc_tensor_free(b);
}
