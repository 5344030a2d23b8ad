/* Promotion (SPEC 3.1, 13) for all 169 dtype pairs and the weak-scalar table of
 * SPEC 3.2, checked through tc_promote, tc_result_dtype2 and the dtype and
 * value of real results. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tt.h"

/* The promotion rule of SPEC 3.1 and 13, written out: bool < every integer
 * < bf16 < f16 < f32 < f64; two signed or two unsigned integers give the
 * wider; uN with iM gives iM when M > N, else i(2N) when 2N <= 64, else no
 * common dtype (TC_DT_NONE). */
static const char *const lattice[] = {"bool", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64",
                                      "u8", "u16", "u32", "u64"};
#define NDT 13

static int rank_of(tc_dtype dt) {
  for (int k = 0; k < NDT; k++)
    if (strcmp(lattice[k], tc_dtype_name(dt)) == 0) return k;
  cr_assert_fail("dtype %s is not in the lattice", tc_dtype_name(dt));
  return -1;
}

static tc_dtype signed_of(int bits) {
  return bits == 8 ? TC_DT_I8 : bits == 16 ? TC_DT_I16 : bits == 32 ? TC_DT_I32 : TC_DT_I64;
}

static tc_dtype higher(tc_dtype a, tc_dtype b) {
  bool ua = tt_is_uint(a), ub = tt_is_uint(b);
  if (ua && ub) return tt_bits(a) >= tt_bits(b) ? a : b;
  if (ua || ub) {
    tc_dtype u = ua ? a : b, o = ua ? b : a;
    if (o == TC_DT_BOOL) return u;
    if (tt_is_flt(o)) return o;
    int n = tt_bits(u), m = tt_bits(o);
    if (m > n) return o;
    return 2 * n <= 64 ? signed_of(2 * n) : TC_DT_NONE;
  }
  return rank_of(a) >= rank_of(b) ? a : b;
}

static tc_tensor *val(tc_dtype dt, int64_t v) {
  double f = (double)v;
  return tt_tensor(dt, 0, NULL, &v, &f);
}

static double as_double(tc_tensor *t) {
  int64_t i = 0;
  double f = 0;
  tt_read(t, &i, &f);
  return tt_is_flt(t->dtype) ? f : (double)i;
}

Test(promote, lattice_has_every_dtype) {
  cr_assert_eq(TC_DT_COUNT, NDT);
  bool seen[NDT] = {0};
  for (int dt = 0; dt < TC_DT_COUNT; dt++) seen[rank_of((tc_dtype)dt)] = true;
  for (int k = 0; k < NDT; k++) cr_expect(seen[k], "%s missing", lattice[k]);
}

Test(promote, all_169_pairs) {
  int n = 0;
  for (int a = 0; a < TC_DT_COUNT; a++)
    for (int b = 0; b < TC_DT_COUNT; b++) {
      tc_dtype da = (tc_dtype)a, db = (tc_dtype)b, want = higher(da, db);
      cr_expect_eq(tc_promote(da, db), want, "promote(%s, %s) = %s, expected %s", tt_name(da), tt_name(db),
                   tt_name(tc_promote(da, db)), tt_name(want));
      tc_tensor *x = val(da, 1), *y = val(db, 0);
      tc_err err = tt_err();
      tc_dtype rd;
      n++;
      if (want == TC_DT_NONE) {   /* u64 with a signed integer: no_common_dtype, for every op */
        cr_expect_eq(tc_result_dtype2(TC_OP_ADD, x, y, &rd, &err), -1);
        cr_expect_eq(err.code, TC_E_NO_COMMON, "%s + %s: %s", tt_name(da), tt_name(db), tt_msg(&err));
        cr_expect(strstr(tt_msg(&err), "cast") != NULL, "the error hints at a cast: %s", tt_msg(&err));
        err = tt_err();
        cr_expect_null(tc_binary(TC_OP_MAXIMUM, x, y, &err));
        cr_expect_eq(err.code, TC_E_NO_COMMON);
        tc_tensor_free(x); tc_tensor_free(y);
        continue;
      }
      cr_expect_eq(tc_result_dtype2(TC_OP_ADD, x, y, &rd, &err), 0);
      cr_expect_eq(rd, want);
      /* maximum is defined for every dtype: its result has the promoted dtype and value 1 */
      tc_tensor *m = tc_binary(TC_OP_MAXIMUM, x, y, &err);
      cr_assert_not_null(m, "maximum(%s, %s): %s", tt_name(da), tt_name(db), tt_msg(&err));
      cr_expect_eq(m->dtype, want, "maximum(%s, %s) is %s", tt_name(da), tt_name(db), tt_name(m->dtype));
      cr_expect_eq(as_double(m), 1.0);
      cr_expect(!m->weak);
      tc_tensor_free(m);
      /* arithmetic where it is defined (not bool with bool): 3 + 2 = 5 */
      if (want != TC_DT_BOOL) {
        tc_tensor *p = val(da, da == TC_DT_BOOL ? 1 : 3), *q = val(db, db == TC_DT_BOOL ? 1 : 2);
        tc_tensor *s = tc_binary(TC_OP_ADD, p, q, &err);
        cr_assert_not_null(s, "add(%s, %s): %s", tt_name(da), tt_name(db), tt_msg(&err));
        cr_expect_eq(s->dtype, want);
        double w = (da == TC_DT_BOOL ? 1 : 3) + (db == TC_DT_BOOL ? 1 : 2);
        cr_expect_eq(as_double(s), w, "add(%s, %s) = %g", tt_name(da), tt_name(db), as_double(s));
        tc_tensor_free(s); tc_tensor_free(p); tc_tensor_free(q);
      }
      /* comparisons promote, then give bool */
      tc_tensor *c = tc_binary(TC_OP_GREATER, x, y, &err);
      cr_assert_not_null(c, "%s", tt_msg(&err));
      cr_expect_eq(c->dtype, TC_DT_BOOL);
      cr_expect_eq(as_double(c), 1.0);
      tc_tensor_free(c);
      tc_tensor_free(x); tc_tensor_free(y);
    }
  cr_assert_eq(n, 169);
}

/* Promotion converts each operand before computing: i64 + f16 is f16 and
 * rounds the integer once. */
Test(promote, operands_are_converted_to_the_promoted_dtype) {
  tc_err err = tt_err();
  tc_tensor *a = val(TC_DT_I64, 2049), *b = val(TC_DT_F16, 0);
  tc_tensor *s = tc_binary(TC_OP_ADD, a, b, &err);
  cr_assert_not_null(s);
  cr_expect_eq(s->dtype, TC_DT_F16);
  cr_expect_eq(as_double(s), 2048.0);
  tc_tensor_free(s);
  tc_tensor *c = val(TC_DT_I8, -1), *d = val(TC_DT_I16, 300);
  s = tc_binary(TC_OP_MUL, c, d, &err);
  cr_expect_eq(s->dtype, TC_DT_I16);
  cr_expect_eq(as_double(s), -300.0);
  tc_tensor_free(s);
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c); tc_tensor_free(d);
}

/* ---- weak scalars (SPEC 3.2) ---- */
static tc_tensor *weak_i(int64_t v) {
  tc_err err = tt_err();
  tc_tensor *t = tc_scalar_i64(v, true, &err);
  cr_assert_not_null(t);
  return t;
}
static tc_tensor *weak_f(double v) {
  tc_err err = tt_err();
  tc_tensor *t = tc_scalar_f64(v, true, &err);
  cr_assert_not_null(t);
  return t;
}

Test(promote, weak_int_with_each_dtype) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_dtype want = dt == TC_DT_BOOL ? TC_DT_I64 : dt;
    tc_tensor *x = val(dt, 1), *w = weak_i(2);
    for (int side = 0; side < 2; side++) {
      tc_err err = tt_err();
      tc_dtype rd;
      tc_tensor *l = side ? w : x, *r = side ? x : w;
      cr_expect_eq(tc_result_dtype2(TC_OP_MAXIMUM, l, r, &rd, &err), 0);
      cr_expect_eq(rd, want, "weak int with %s: %s", tt_name(dt), tt_name(rd));
      tc_tensor *m = tc_binary(TC_OP_MAXIMUM, l, r, &err);
      cr_assert_not_null(m, "%s", tt_msg(&err));
      cr_expect_eq(m->dtype, want);
      cr_expect(!m->weak, "a result involving a %s tensor is not weak", tt_name(dt));
      cr_expect_eq(as_double(m), 2.0);
      tc_tensor_free(m);
    }
    tc_tensor_free(x);
    tc_tensor_free(w);
  }
}

Test(promote, weak_float_with_each_dtype) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_dtype want = tt_is_flt(dt) ? dt : TC_DT_F64;
    tc_tensor *x = val(dt, 1), *w = weak_f(0.1);
    for (int side = 0; side < 2; side++) {
      tc_err err = tt_err();
      tc_tensor *l = side ? w : x, *r = side ? x : w;
      tc_tensor *m = tc_binary(TC_OP_ADD, l, r, &err);
      cr_assert_not_null(m, "%s", tt_msg(&err));
      cr_expect_eq(m->dtype, want, "weak float with %s: %s", tt_name(dt), tt_name(m->dtype));
      cr_expect(!m->weak);
      /* the weak value is converted to the dtype first, then one op rounds */
      double wv = tt_round(1.0 + tt_round(0.1, want), want);
      cr_expect_eq(as_double(m), wv, "1 + 0.1 in %s = %.17g, expected %.17g", tt_name(want), as_double(m), wv);
      tc_tensor_free(m);
    }
    tc_tensor_free(x);
    tc_tensor_free(w);
  }
}

Test(promote, weak_int_must_fit_the_integer_dtype) {
  for (int d = TC_DT_I8; d <= TC_DT_I64; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_tensor *x = val(dt, 0);
    int64_t fits[] = {tt_min(dt), tt_max(dt), -1, 0};
    for (int k = 0; k < 4; k++) {
      tc_tensor *w = weak_i(fits[k]);
      tc_err err = tt_err();
      tc_tensor *s = tc_binary(TC_OP_ADD, x, w, &err);
      cr_assert_not_null(s, "%s + %lld: %s", tt_name(dt), (long long)fits[k], tt_msg(&err));
      cr_expect_eq(s->dtype, dt);
      tc_tensor_free(s);
      tc_tensor_free(w);
    }
    if (dt != TC_DT_I64) {
      int64_t over[] = {tt_max(dt) + 1, tt_min(dt) - 1, INT64_MAX, INT64_MIN};
      const tc_op ops[] = {TC_OP_ADD, TC_OP_LESS, TC_OP_SHIFT_LEFT, TC_OP_MAXIMUM};
      for (int k = 0; k < 4; k++)
        for (int q = 0; q < 4; q++) {
          tc_tensor *w = weak_i(over[k]);
          tc_err err = tt_err();
          size_t before = tc_mem_in_use();
          cr_expect_null(tc_binary(ops[q], w, x, &err));
          cr_expect_eq(err.code, TC_E_LITERAL, "%s %s %lld: code %d", tt_name(dt), tc_op_name(ops[q]),
                       (long long)over[k], err.code);
          char lit[32];
          snprintf(lit, sizeof lit, "%lld", (long long)over[k]);
          cr_expect(strstr(tt_msg(&err), lit) && strstr(tt_msg(&err), tt_name(dt)), "message names literal and dtype: %s",
                    tt_msg(&err));
          cr_expect_eq(tc_mem_in_use(), before);
          tc_tensor_free(w);
        }
    }
    tc_tensor_free(x);
  }
}

Test(promote, weak_with_weak) {
  tc_err err = tt_err();
  tc_tensor *i1 = weak_i(3), *i2 = weak_i(4), *f1 = weak_f(0.5);
  tc_tensor *s = tc_binary(TC_OP_ADD, i1, i2, &err);
  cr_assert_not_null(s);
  cr_expect_eq(s->dtype, TC_DT_I64);
  cr_expect(s->weak, "weak int + weak int stays weak");
  cr_expect_eq(as_double(s), 7.0);
  tc_tensor *t = tc_binary(TC_OP_MUL, i1, f1, &err);
  cr_expect_eq(t->dtype, TC_DT_F64);
  cr_expect(t->weak);
  cr_expect_eq(as_double(t), 1.5);
  tc_tensor *u = tc_binary(TC_OP_ADD, f1, i2, &err);
  cr_expect_eq(u->dtype, TC_DT_F64);
  cr_expect(u->weak);
  /* weakness carries: (3 + 4) with i8 stays i8 */
  tc_tensor *x = val(TC_DT_I8, 100);
  tc_tensor *v = tc_binary(TC_OP_ADD, x, s, &err);
  cr_expect_eq(v->dtype, TC_DT_I8);
  cr_expect_eq(as_double(v), 107.0);
  /* a comparison of weak values is a plain bool */
  tc_tensor *c = tc_binary(TC_OP_LESS, i1, i2, &err);
  cr_expect_eq(c->dtype, TC_DT_BOOL);
  cr_expect(!c->weak);
  /* weak int + weak int wraps as i64 */
  tc_tensor *mx = weak_i(INT64_MAX), *one = weak_i(1);
  tc_tensor *o = tc_binary(TC_OP_ADD, mx, one, &err);
  int64_t r;
  tt_read(o, &r, NULL);
  cr_expect_eq(r, INT64_MIN);
  /* unary ops keep weakness */
  tc_tensor *n = tc_unary(TC_OP_NEG, i1, &err);
  cr_expect(n->weak);
  tc_tensor *x8 = tc_binary(TC_OP_MUL, x, n, &err);
  cr_expect_eq(x8->dtype, TC_DT_I8);
  tc_tensor_free(x8); tc_tensor_free(n);
  tc_tensor_free(o); tc_tensor_free(mx); tc_tensor_free(one);
  tc_tensor_free(c); tc_tensor_free(v); tc_tensor_free(x);
  tc_tensor_free(s); tc_tensor_free(t); tc_tensor_free(u);
  tc_tensor_free(i1); tc_tensor_free(i2); tc_tensor_free(f1);
}

/* A weak int meets an int tensor in its own dtype: i8 100 + 27 = 127, + 28 wraps. */
Test(promote, weak_int_computes_in_the_tensor_dtype) {
  tc_err err = tt_err();
  tc_tensor *x = val(TC_DT_I8, 100), *a = weak_i(27), *b = weak_i(28);
  tc_tensor *s = tc_binary(TC_OP_ADD, x, a, &err), *t = tc_binary(TC_OP_ADD, x, b, &err);
  cr_expect_eq(as_double(s), 127.0);
  cr_expect_eq(as_double(t), -128.0);
  /* bool with a weak int is i64 */
  tc_tensor *tr = tt_iscalar(TC_DT_BOOL, 1);
  tc_tensor *u = tc_binary(TC_OP_ADD, tr, a, &err);
  cr_assert_not_null(u, "%s", tt_msg(&err));
  cr_expect_eq(u->dtype, TC_DT_I64);
  cr_expect_eq(as_double(u), 28.0);
  /* where and clip follow the same rules */
  tc_tensor *c = tt_iscalar(TC_DT_BOOL, 0);
  tc_tensor *w = tc_where(c, x, a, &err);
  cr_assert_not_null(w, "%s", tt_msg(&err));
  cr_expect_eq(w->dtype, TC_DT_I8);
  cr_expect_eq(as_double(w), 27.0);
  tc_tensor *lo = weak_i(0), *hi = weak_i(50);
  tc_tensor *cl = tc_clip(x, lo, hi, &err);
  cr_assert_not_null(cl, "%s", tt_msg(&err));
  cr_expect_eq(cl->dtype, TC_DT_I8);
  cr_expect_eq(as_double(cl), 50.0);
  tc_tensor *big = weak_i(1000);
  cr_expect_null(tc_where(c, x, big, &err));
  cr_expect_eq(err.code, TC_E_LITERAL);
  tc_tensor_free(big); tc_tensor_free(lo); tc_tensor_free(hi); tc_tensor_free(cl);
  tc_tensor_free(w); tc_tensor_free(c); tc_tensor_free(u); tc_tensor_free(tr);
  tc_tensor_free(s); tc_tensor_free(t); tc_tensor_free(x); tc_tensor_free(a); tc_tensor_free(b);
}

/* A weak literal broadcast to a shape is still weak; each of its elements
 * must fit the other operand's dtype. */
Test(promote, weak_broadcast_view) {
  tc_err err = tt_err();
  int64_t three = 3, v[3] = {1, 2, 3};
  tc_tensor *x = tt_ivec(TC_DT_I8, 3, v);
  tc_tensor *w = weak_i(300), *ok = weak_i(-7);
  tc_tensor *bw = tc_view_broadcast(w, 1, &three, &err), *bok = tc_view_broadcast(ok, 1, &three, &err);
  cr_assert(bw && bok);
  cr_expect(bw->weak && bok->weak);
  cr_expect_null(tc_binary(TC_OP_ADD, x, bw, &err));
  cr_expect_eq(err.code, TC_E_LITERAL);
  err = tt_err();
  tc_tensor *s = tc_binary(TC_OP_ADD, x, bok, &err);
  cr_assert_not_null(s, "%s", tt_msg(&err));
  cr_expect_eq(s->dtype, TC_DT_I8);
  int64_t r[3];
  tt_read(s, r, NULL);
  cr_expect(r[0] == -6 && r[1] == -5 && r[2] == -4);
  tc_tensor_free(s); tc_tensor_free(bw); tc_tensor_free(bok); tc_tensor_free(w); tc_tensor_free(ok); tc_tensor_free(x);
}

/* The table in src/dtypes.def is a join: symmetric, idempotent, and
 * associative, so the order operands meet in does not matter. */
Test(promote, table_is_a_join_where_defined) {
  for (int a = 0; a < TC_DT_COUNT; a++) {
    cr_expect_eq(tc_promote((tc_dtype)a, (tc_dtype)a), a, "promote(%s, itself)", tt_name((tc_dtype)a));
    for (int b = 0; b < TC_DT_COUNT; b++) {
      tc_dtype ab = tc_promote((tc_dtype)a, (tc_dtype)b);
      cr_expect_eq(ab, tc_promote((tc_dtype)b, (tc_dtype)a), "promote(%s, %s) is not symmetric", tt_name((tc_dtype)a),
                   tt_name((tc_dtype)b));
      for (int c = 0; c < TC_DT_COUNT; c++) {
        tc_dtype bc = tc_promote((tc_dtype)b, (tc_dtype)c);
        if (ab == TC_DT_NONE || bc == TC_DT_NONE) continue;   /* no common dtype: an error, not a join */
        /* with mixed signedness the order can matter (u8, i8, u64: i16 then none, or u64 then none) but
           only between a dtype and no_common_dtype */
        tc_dtype l = tc_promote(ab, (tc_dtype)c), r = tc_promote((tc_dtype)a, bc);
        if (l == TC_DT_NONE || r == TC_DT_NONE) continue;
        cr_expect_eq(l, r,
                     "promotion of %s, %s, %s depends on the order", tt_name((tc_dtype)a), tt_name((tc_dtype)b),
                     tt_name((tc_dtype)c));
      }
    }
  }
}
