/* The unsigned dtypes (SPEC 13) against a reference written here in
 * uint64_t arithmetic masked to the width: every elementwise integer op on
 * all pairs of edge values, casts from and to every dtype class, and the
 * reductions, for u8, u16, u32 and u64. */
#include <math.h>
#include <stdlib.h>
#include "tt.h"

static const tc_dtype udts[] = {TC_DT_U8, TC_DT_U16, TC_DT_U32, TC_DT_U64};

static uint64_t mask(int bits) { return bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1; }

/* Edge values of an unsigned dtype: 0, 1, 2, small ones, the top, around
 * the sign bit of the same width, and some random ones. */
static int edges(tc_dtype dt, uint64_t *v) {
  int bits = tt_bits(dt), n = 0;
  uint64_t m = mask(bits), half = (uint64_t)1 << (bits - 1);
  const uint64_t small[] = {0, 1, 2, 3, 5, 7, 10, 13};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) v[n++] = small[i];
  v[n++] = m; v[n++] = m - 1; v[n++] = half; v[n++] = half - 1; v[n++] = half + 1; v[n++] = m / 3;
  v[n++] = (uint64_t)bits - 1; v[n++] = (uint64_t)bits; v[n++] = (uint64_t)bits + 1;
  uint64_t s = 0xabcdu + (uint64_t)bits;
  for (int i = 0; i < 5; i++) v[n++] = tt_rand(&s) & m;
  return n;
}

static uint64_t upow(uint64_t b, uint64_t e, uint64_t m) {
  uint64_t r = 1;
  while (e--) r *= b;   /* exponents here are edge values: bounded below */
  return r & m;
}

/* The reference of op on (a, b) at width bits; false where the op fails (a zero divisor). */
static bool ref_bin(tc_op op, uint64_t a, uint64_t b, int bits, uint64_t *r) {
  uint64_t m = mask(bits);
  switch (op) {
  case TC_OP_ADD: *r = (a + b) & m; return true;
  case TC_OP_SUB: *r = (a - b) & m; return true;
  case TC_OP_MUL: *r = (a * b) & m; return true;
  case TC_OP_DIV: case TC_OP_FLOOR_DIV: if (!b) return false; *r = a / b; return true;
  case TC_OP_REM: case TC_OP_MOD: if (!b) return false; *r = a % b; return true;
  case TC_OP_MAXIMUM: *r = a > b ? a : b; return true;
  case TC_OP_MINIMUM: *r = a < b ? a : b; return true;
  case TC_OP_BITWISE_AND: *r = a & b; return true;
  case TC_OP_BITWISE_OR: *r = a | b; return true;
  case TC_OP_BITWISE_XOR: *r = a ^ b; return true;
  case TC_OP_SHIFT_LEFT: *r = b >= (uint64_t)bits ? 0 : (a << b) & m; return true;
  case TC_OP_SHIFT_RIGHT: *r = b >= (uint64_t)bits ? 0 : a >> b; return true;
  case TC_OP_EQUAL: *r = a == b; return true;
  case TC_OP_LESS: *r = a < b; return true;
  case TC_OP_GREATER_EQUAL: *r = a >= b; return true;
  default: cr_assert_fail("no reference for %s", tc_op_name(op)); return false;
  }
}

static tc_tensor *uvec(tc_dtype dt, int n, const uint64_t *v) {
  int64_t iv[64];
  for (int i = 0; i < n; i++) iv[i] = (int64_t)v[i];
  return tt_ivec(dt, n, iv);
}

/* Runs a test's body once for each unsigned dtype, with its width and its
 * edge values, then asserts that no check failed. */
typedef void udtype_body(tc_dtype dt, int bits, const uint64_t *ev, int ne);
static void for_each_udtype(udtype_body *body) {
  for (size_t d = 0; d < 4; d++) {
    uint64_t ev[64];
    int ne = edges(udts[d], ev);
    body(udts[d], tt_bits(udts[d]), ev, ne);
  }
  TT_DONE();
}

Test(unsigned_, binary_ops_all_edge_pairs) {
  const tc_op ops[] = {TC_OP_ADD, TC_OP_SUB, TC_OP_MUL, TC_OP_DIV, TC_OP_FLOOR_DIV, TC_OP_REM, TC_OP_MOD,
                       TC_OP_MAXIMUM, TC_OP_MINIMUM, TC_OP_BITWISE_AND, TC_OP_BITWISE_OR, TC_OP_BITWISE_XOR,
                       TC_OP_SHIFT_LEFT, TC_OP_SHIFT_RIGHT, TC_OP_EQUAL, TC_OP_LESS, TC_OP_GREATER_EQUAL};
  int checked = 0;
  for (size_t d = 0; d < 4; d++) {
    tc_dtype dt = udts[d];
    int bits = tt_bits(dt);
    uint64_t ev[64];
    int ne = edges(dt, ev);
    /* all pairs as two vectors of ne * ne elements */
    int64_t *av = malloc(sizeof(int64_t) * (size_t)(ne * ne)), *bv = malloc(sizeof(int64_t) * (size_t)(ne * ne));
    int64_t *got = malloc(sizeof(int64_t) * (size_t)(ne * ne));
    cr_assert(av && bv && got);
    for (int i = 0; i < ne; i++)
      for (int j = 0; j < ne; j++) { av[i * ne + j] = (int64_t)ev[i]; bv[i * ne + j] = (int64_t)ev[j]; }
    tc_tensor *a = tt_ivec(dt, ne * ne, av), *b = tt_ivec(dt, ne * ne, bv);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      tc_op op = ops[o];
      bool zero_fails = op == TC_OP_DIV || op == TC_OP_FLOOR_DIV || op == TC_OP_REM || op == TC_OP_MOD;
      tc_err err = tt_err();
      tc_tensor *r = tc_binary(op, a, b, &err);
      if (zero_fails) {   /* the edges include 0 as a divisor: the whole op fails first */
        TT_CHECK(r == NULL && err.code == TC_E_DIV_ZERO, "%s(%s) with a zero divisor: %s", tc_op_name(op),
                 tt_name(dt), tt_msg(&err));
        tc_tensor_free(r);
        /* and without zero divisors it computes */
        int64_t *bz = malloc(sizeof(int64_t) * (size_t)(ne * ne));
        cr_assert(bz);
        for (int k = 0; k < ne * ne; k++) bz[k] = bv[k] ? bv[k] : 1;
        tc_tensor *b2 = tt_ivec(dt, ne * ne, bz);
        err = tt_err();
        r = tc_binary(op, a, b2, &err);
        tc_tensor_free(b2);
        memcpy(bv, bz, sizeof(int64_t) * (size_t)(ne * ne));
        free(bz);
      }
      cr_assert_not_null(r, "%s(%s): %s", tc_op_name(op), tt_name(dt), tt_msg(&err));
      bool cmp = op == TC_OP_EQUAL || op == TC_OP_LESS || op == TC_OP_GREATER_EQUAL;
      TT_CHECK(r->dtype == (cmp ? TC_DT_BOOL : dt), "%s(%s) is %s", tc_op_name(op), tt_name(dt), tt_name(r->dtype));
      tt_read(r, got, NULL);
      for (int k = 0; k < ne * ne; k++) {
        uint64_t want = 0, x = (uint64_t)av[k], y = (uint64_t)bv[k];
        ref_bin(op, x, y, bits, &want);
        uint64_t g = (uint64_t)got[k] & (cmp ? 1 : mask(bits));
        TT_CHECK(g == want, "%s(%s): %llu, %llu gives %llu, expected %llu", tc_op_name(op), tt_name(dt),
                 (unsigned long long)x, (unsigned long long)y, (unsigned long long)g, (unsigned long long)want);
        checked++;
      }
      if (zero_fails)   /* restore the divisors with zeros for the next op */
        for (int i = 0; i < ne; i++)
          for (int j = 0; j < ne; j++) bv[i * ne + j] = (int64_t)ev[j];
      tc_tensor_free(r);
    }
    /* pow on small exponents */
    for (int i = 0; i < ne; i++)
      for (uint64_t e = 0; e < 6; e++) {
        tc_tensor *x = uvec(dt, 1, &ev[i]), *y = uvec(dt, 1, &e);
        tc_err err = tt_err();
        tc_tensor *r = tc_binary(TC_OP_POW, x, y, &err);
        cr_assert_not_null(r, "%s", tt_msg(&err));
        int64_t g;
        tt_read(r, &g, NULL);
        TT_CHECK(((uint64_t)g & mask(bits)) == upow(ev[i], e, mask(bits)), "pow(%s): %llu ** %llu", tt_name(dt),
                 (unsigned long long)ev[i], (unsigned long long)e);
        tc_tensor_free(r); tc_tensor_free(x); tc_tensor_free(y);
        checked++;
      }
    tc_tensor_free(a); tc_tensor_free(b);
    free(av); free(bv); free(got);
  }
  cr_log_info("%d unsigned results checked", checked);
  TT_DONE();
}

static void unary_ops_of(tc_dtype dt, int bits, const uint64_t *ev, int ne) {
  tc_tensor *x = uvec(dt, ne, ev);
  const tc_op ops[] = {TC_OP_NEG, TC_OP_ABS, TC_OP_BITWISE_NOT, TC_OP_SIGN};
  for (size_t o = 0; o < 4; o++) {
    tc_err err = tt_err();
    tc_tensor *r = tc_unary(ops[o], x, &err);
    cr_assert_not_null(r, "%s(%s): %s", tc_op_name(ops[o]), tt_name(dt), tt_msg(&err));
    TT_CHECK(r->dtype == dt, "%s(%s) is %s", tc_op_name(ops[o]), tt_name(dt), tt_name(r->dtype));
    int64_t got[64];
    tt_read(r, got, NULL);
    for (int i = 0; i < ne; i++) {
      uint64_t v = ev[i], want = ops[o] == TC_OP_NEG ? (0 - v) & mask(bits)
                               : ops[o] == TC_OP_ABS ? v
                               : ops[o] == TC_OP_BITWISE_NOT ? ~v & mask(bits)
                               : v != 0;
      TT_CHECK(((uint64_t)got[i] & mask(bits)) == want, "%s(%s %llu) = %llu, expected %llu", tc_op_name(ops[o]),
               tt_name(dt), (unsigned long long)v, (unsigned long long)((uint64_t)got[i] & mask(bits)),
               (unsigned long long)want);
    }
    tc_tensor_free(r);
  }
  tc_tensor_free(x);
}

Test(unsigned_, unary_ops) { for_each_udtype(unary_ops_of); }

/* Casts: integer to integer keeps the low bits; float to unsigned
 * truncates, NaN and negatives give 0, beyond the range the maximum;
 * unsigned to float rounds once to nearest even. */
static void casts_of(tc_dtype dt, int bits, const uint64_t *ev, int ne) {
  tc_tensor *x = uvec(dt, ne, ev);
  for (int t = 0; t < TC_DT_COUNT; t++) {
    tc_dtype to = (tc_dtype)t;
    tc_err err = tt_err();
    tc_tensor *r = tc_cast(x, to, &err);
    cr_assert_not_null(r, "%s -> %s: %s", tt_name(dt), tt_name(to), tt_msg(&err));
    int64_t gi[64];
    double gf[64];
    tt_read(r, gi, gf);
    for (int i = 0; i < ne; i++) {
      uint64_t v = ev[i];
      if (to == TC_DT_BOOL) {
        TT_CHECK(gi[i] == (v != 0), "%s %llu -> bool", tt_name(dt), (unsigned long long)v);
      } else if (tt_is_flt(to)) {
        /* exact in double below 2^53; above, f64 is the long double (64-bit significand) rounded once,
           and narrower floats are left to test_cast's signed model (no exact reference here) */
        if (v >= ((uint64_t)1 << 53) && to != TC_DT_F64) continue;
        double want = v < ((uint64_t)1 << 53) ? tt_round((double)v, to) : (double)(long double)v;
        TT_CHECK(gf[i] == want, "%s %llu -> %s: %.17g, expected %.17g", tt_name(dt), (unsigned long long)v,
                 tt_name(to), gf[i], want);
      } else {
        int tb = tt_bits(to);
        uint64_t low = v & mask(tb);
        uint64_t g = (uint64_t)gi[i] & mask(tb);
        TT_CHECK(g == low, "%s %llu -> %s: %llu", tt_name(dt), (unsigned long long)v, tt_name(to),
                 (unsigned long long)g);
      }
    }
    tc_tensor_free(r);
  }
  tc_tensor_free(x);
  /* float -> unsigned */
  const double fv[] = {-1e30, -1.5, -0.5, -0.0, 0.0, 0.5, 1.9, 254.9, 255.5, 65535.2, 4294967295.0, 4294967296.0,
                       1e19, 18446744073709551616.0, 1e30, INFINITY, -INFINITY, NAN};
  int nf = (int)(sizeof fv / sizeof fv[0]);
  tc_tensor *f = tt_fvec(TC_DT_F64, nf, fv);
  tc_err err = tt_err();
  tc_tensor *r = tc_cast(f, dt, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  int64_t gi[32];
  tt_read(r, gi, NULL);
  for (int i = 0; i < nf; i++) {
    double v = fv[i];
    uint64_t want = isnan(v) || v <= 0 ? 0 : v >= ldexp(1.0, bits) ? mask(bits) : (uint64_t)v;
    TT_CHECK(((uint64_t)gi[i] & mask(bits)) == want, "f64 %.17g -> %s: %llu, expected %llu", v, tt_name(dt),
             (unsigned long long)((uint64_t)gi[i] & mask(bits)), (unsigned long long)want);
  }
  tc_tensor_free(r);
  tc_tensor_free(f);
}

Test(unsigned_, casts) { for_each_udtype(casts_of); }

static void reductions_of(tc_dtype dt, int bits, const uint64_t *ev, int ne) {
  int rows = ne / 4;
  int64_t shape[2] = {rows, 4}, iv[64];
  for (int i = 0; i < rows * 4; i++) iv[i] = (int64_t)ev[i];
  tc_tensor *x = tt_tensor(dt, 2, shape, iv, NULL);
  for (int axis = 0; axis < 2; axis++) {
    /* the nan forms are the plain ones on integers (nanmax of u64 compared as i64 before) */
    const tc_op ops[] = {TC_OP_REDUCE_SUM, TC_OP_REDUCE_PROD, TC_OP_REDUCE_MAX, TC_OP_REDUCE_MIN, TC_OP_ARGMAX,
                         TC_OP_ARGMIN, TC_OP_NANMAX, TC_OP_NANMIN, TC_OP_NANARGMAX, TC_OP_NANARGMIN};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      tc_op po = ops[o] == TC_OP_NANMAX ? TC_OP_REDUCE_MAX : ops[o] == TC_OP_NANMIN ? TC_OP_REDUCE_MIN
               : ops[o] == TC_OP_NANARGMAX ? TC_OP_ARGMAX : ops[o] == TC_OP_NANARGMIN ? TC_OP_ARGMIN : ops[o];
      tc_axes ax = {.n = 1, .axis = {axis}};
      tc_err err = tt_err();
      tc_tensor *r = tc_reduce(ops[o], x, &ax, false, &err);
      cr_assert_not_null(r, "%s(%s): %s", tc_op_name(ops[o]), tt_name(dt), tt_msg(&err));
      bool arg = po == TC_OP_ARGMAX || po == TC_OP_ARGMIN;
      TT_CHECK(r->dtype == (arg ? TC_DT_I64 : dt), "%s(%s) is %s", tc_op_name(ops[o]), tt_name(dt),
               tt_name(r->dtype));
      int64_t got[64];
      int nout = axis == 0 ? 4 : rows, nin = axis == 0 ? rows : 4;
      tt_read(r, got, NULL);
      for (int k = 0; k < nout; k++) {
        uint64_t acc = po == TC_OP_REDUCE_PROD ? 1 : po == TC_OP_REDUCE_MIN ? mask(bits) : 0;
        int64_t best = 0;
        for (int j = 0; j < nin; j++) {
          uint64_t v = (uint64_t)iv[axis == 0 ? j * 4 + k : k * 4 + j];
          if (po == TC_OP_REDUCE_SUM) acc = (acc + v) & mask(bits);
          else if (po == TC_OP_REDUCE_PROD) acc = (acc * v) & mask(bits);
          else if (po == TC_OP_REDUCE_MAX || po == TC_OP_ARGMAX) { if (j == 0 || v > acc) { acc = v; best = j; } }
          else if (j == 0 || v < acc) { acc = v; best = j; }
        }
        uint64_t g = (uint64_t)got[k] & (arg ? UINT64_MAX : mask(bits));
        uint64_t want = arg ? (uint64_t)best : acc;
        TT_CHECK(g == want, "%s(%s, axis %d)[%d] = %llu, expected %llu", tc_op_name(ops[o]), tt_name(dt), axis, k,
                 (unsigned long long)g, (unsigned long long)want);
      }
      tc_tensor_free(r);
    }
  }
  tc_tensor_free(x);
}

Test(unsigned_, reductions_along_each_axis) { for_each_udtype(reductions_of); }
