/* The nan forms (src/ops.def's TC_NAN_FORMS) against their plain forms,
 * row by row of the table: without NaN, on every dtype and axis, the plain
 * form's dtype, shape and bits; with NaN, slice by slice, the plain form of
 * x with each NaN read as the fill, or of the slice's numbers alone (NaN
 * where there are none, or no more than ddof). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"

typedef struct { tc_op nan, plain; double fill; } form;
static const form forms[] = {
#define X(N, P, f) {TC_OP_##N, TC_OP_##P, f},
  TC_NAN_FORMS(X)
#undef X
};
#define NFORMS (int)(sizeof forms / sizeof forms[0])

static const char *const methods[] = {"linear", "lower", "higher", "nearest", "midpoint"};

/* op (a nan form or a plain one, of kind `plain`) over axis a (-1: all);
 * arg: ddof, or q in [0, 1] (percentile's scaled). */
static tc_tensor *call(tc_op op, tc_op plain, tc_tensor *x, int a, double arg, const char *method, tc_err *err) {
  tc_axes ax = {.all = a < 0, .n = a < 0 ? 0 : 1, .axis = {a < 0 ? 0 : a}};
  switch (plain) {
  case TC_OP_CUMSUM: case TC_OP_CUMPROD: return tc_scan(op, x, a >= 0, a, err);
  case TC_OP_REDUCE_PROD: return op == TC_OP_NANPROD ? tc_nanprod(x, &ax, false, err) : tc_reduce(op, x, &ax, false, err);
  case TC_OP_VAR: case TC_OP_STD: return tc_var(op, x, &ax, (int64_t)arg, false, err);
  default: {
    tc_tensor *q = tc_scalar_f64(plain == TC_OP_PERCENTILE ? 100 * arg : arg, true, err);
    tc_tensor *r = q ? tc_quantile(op, x, q, &ax, method, false, err) : NULL;
    tc_tensor_free(q);
    return r;
  }
  }
}

/* The arguments each kind is tried with: ddof 0..2, or q and a method. */
static int nargs(tc_op plain) {
  return plain == TC_OP_VAR || plain == TC_OP_STD ? 3 : plain == TC_OP_MEDIAN ? 1
         : plain == TC_OP_QUANTILE || plain == TC_OP_PERCENTILE ? 3 * 5 : 1;
}
static double arg_of(tc_op plain, int i) {
  static const double qs[3] = {0.0, 0.3, 1.0};
  return plain == TC_OP_VAR || plain == TC_OP_STD ? i : qs[i / 5];
}

static bool same_bits(tc_tensor *a, tc_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
    return false;
  size_t bytes = (size_t)tc_numel(a) * tc_dtype_size(a->dtype);
  char *p = malloc(bytes + 1), *q = malloc(bytes + 1);
  tc_err err = tt_err();
  bool same = p && q && tc_tensor_to_host(a, p, &err) == 0 && tc_tensor_to_host(b, q, &err) == 0 && !memcmp(p, q, bytes);
  free(q);
  free(p);
  return same;
}

Test(nan_forms, without_nan_they_are_the_plain_forms) {
  const int64_t shape[2] = {5, 7};
  int64_t iv[35];
  double fv[35];
  uint64_t s = 5;
  int checked = 0;
  for (int k = 0; k < 35; k++) {
    iv[k] = (int64_t)(tt_rand(&s) % 41) - 20;
    fv[k] = (double)iv[k] / 8;
  }
  for (int f = 0; f < NFORMS; f++)
    for (int dt = 0; dt < TT_NDT; dt++) {
      if (!tc_op_supported(forms[f].nan, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
      int64_t bv[35];
      for (int k = 0; k < 35; k++) bv[k] = iv[k] > 0;
      tc_tensor *x = tt_tensor((tc_dtype)dt, 2, shape, dt == TC_DT_BOOL ? bv : iv, fv);
      for (int a = -1; a < 2; a++)
        for (int i = 0; i < nargs(forms[f].plain); i++) {
          tc_err e1 = tt_err(), e2 = tt_err();
          double arg = arg_of(forms[f].plain, i);
          tc_tensor *p = call(forms[f].plain, forms[f].plain, x, a, arg, methods[i % 5], &e1);
          tc_tensor *n = call(forms[f].nan, forms[f].plain, x, a, arg, methods[i % 5], &e2);
          TT_CHECK(p && n, "%s %s axis %d: %s / %s", tc_op_name(forms[f].nan), tt_name((tc_dtype)dt), a, tt_msg(&e1), tt_msg(&e2));
          TT_CHECK(!p || !n || same_bits(p, n), "%s %s axis %d arg %g %s: not the bits of %s", tc_op_name(forms[f].nan),
                   tt_name((tc_dtype)dt), a, arg, methods[i % 5], tc_op_name(forms[f].plain));
          checked++;
          TT_FREE(n, p);
        }
      tc_tensor_free(x);
    }
  cr_log_info("%d calls compared", checked);
  TT_DONE();
}

Test(nan_forms, with_nan_each_slice_is_the_plain_form_of_its_numbers) {
  enum { R = 4, C = 9 };
  const int64_t shape[2] = {R, C};
  double v[R * C];
  uint64_t s = 9;
  for (int k = 0; k < R * C; k++) {
    v[k] = (double)((int64_t)(tt_rand(&s) % 41) - 20) / 8;
    if (k / C == 1 || tt_rand(&s) % 3 == 0) v[k] = NAN;   /* row 1 NaN alone */
  }
  v[2 * C] = -0.0;
  int checked = 0;
  for (int dt = TC_DT_BF16; dt <= TC_DT_F64; dt++) {
    tc_tensor *x = tt_tensor((tc_dtype)dt, 2, shape, NULL, v);
    for (int f = 0; f < NFORMS; f++)
      for (int i = 0; i < nargs(forms[f].plain); i++) {
        const form *fm = &forms[f];
        tc_op plain = fm->plain;
        double arg = arg_of(plain, i);
        tc_err err = tt_err();
        tc_tensor *n = call(fm->nan, plain, x, 1, arg, methods[i % 5], &err);
        TT_CHECK(n, "%s %s: %s", tc_op_name(fm->nan), tt_name((tc_dtype)dt), tt_msg(&err));
        if (!n) continue;
        if (fm->fill != TC_NAN_SKIP) {   /* the plain form of x filled */
          double w[R * C];
          for (int k = 0; k < R * C; k++) w[k] = isnan(v[k]) ? fm->fill : v[k];
          tc_tensor *xf = tt_tensor((tc_dtype)dt, 2, shape, NULL, w), *p = call(plain, plain, xf, 1, arg, "", &err);
          TT_CHECK(p && same_bits(p, n), "%s %s: not %s of x filled", tc_op_name(fm->nan), tt_name((tc_dtype)dt),
                   tc_op_name(plain));
          TT_FREE(p, xf, n);
          checked++;
          continue;
        }
        double got[R];
        TT_CHECK(tt_read(n, NULL, got) == R, "%s: %d results", tc_op_name(fm->nan), (int)tc_numel(n));
        for (int r = 0; r < R; r++) {   /* each row against the plain form of its numbers */
          double nums[C];
          int c = 0;
          for (int k = 0; k < C; k++)
            if (!isnan(v[r * C + k])) nums[c++] = v[r * C + k];
          bool var = plain == TC_OP_VAR || plain == TC_OP_STD;
          double want = NAN;
          if (c > (var ? (int)arg : 0)) {
            tc_tensor *y = tt_fvec((tc_dtype)dt, c, nums), *p = call(plain, plain, y, -1, arg, methods[i % 5], &err);
            double pw[1];
            TT_CHECK(p && tt_read(p, NULL, pw) == 1, "%s of row %d: %s", tc_op_name(plain), r, tt_msg(&err));
            want = p ? pw[0] : NAN;
            TT_FREE(p, y);
          }
          /* the pairwise sums of var group a row with NaNs read as 0 apart from its numbers alone */
          TT_CHECK(tt_close(got[r], want, n->dtype, var ? 4 : 0), "%s %s arg %g %s row %d: %.17g, want %.17g",
                   tc_op_name(fm->nan), tt_name((tc_dtype)dt), arg, methods[i % 5], r, got[r], want);
          checked++;
        }
        tc_tensor_free(n);
      }
    tc_tensor_free(x);
  }
  cr_log_info("%d slices compared", checked);
  TT_DONE();
}
