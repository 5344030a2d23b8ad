/* Reductions (SPEC 5.1) against a straightforward reference loop: every
 * claimed (op, dtype), every subset of axes of a 3-D tensor, negative axes,
 * keepdims, contiguous / transposed / broadcast inputs, empty tensors,
 * invalid axes, wrapping integer folds, float accuracy on 1e6 values,
 * argmax/argmin first occurrence and NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"

/* ---- the reference ---- */
typedef struct {
  int64_t i;      /* integer/bool results */
  double f;       /* float results */
  double tol;     /* absolute tolerance for float results (0 = exact) */
  bool anyzero;   /* +0 and -0 both accepted */
} rres;

static bool is_arg(tc_op op) {
  return op == TC_OP_ARGMAX || op == TC_OP_ARGMIN || op == TC_OP_NANARGMAX || op == TC_OP_NANARGMIN;
}
static bool is_nan_op(tc_op op) {
  return op == TC_OP_NANSUM || op == TC_OP_NANMEAN || op == TC_OP_NANMAX || op == TC_OP_NANMIN ||
         op == TC_OP_NANARGMAX || op == TC_OP_NANARGMIN;
}

/* SPEC 5.1: result dtype of a reduction of dtype dt. */
static tc_dtype red_dtype(tc_op op, tc_dtype dt) {
  if (is_arg(op)) return TC_DT_I64;
  if (op == TC_OP_ANY || op == TC_OP_ALL) return TC_DT_BOOL;
  if ((op == TC_OP_REDUCE_SUM || op == TC_OP_REDUCE_PROD || op == TC_OP_NANSUM) && dt == TC_DT_BOOL) return TC_DT_I64;
  if ((op == TC_OP_MEAN || op == TC_OP_LOGSUMEXP || op == TC_OP_NANMEAN) && !tt_is_flt(dt)) return TC_DT_F64;
  if (op == TC_OP_COUNT_NONZERO) return TC_DT_I64;
  return dt;
}

static bool known_op(tc_op op) {
  return op == TC_OP_REDUCE_SUM || op == TC_OP_REDUCE_PROD || op == TC_OP_REDUCE_MAX || op == TC_OP_REDUCE_MIN ||
         op == TC_OP_MEAN || is_arg(op) || op == TC_OP_ANY || op == TC_OP_ALL || op == TC_OP_LOGSUMEXP ||
         op == TC_OP_COUNT_NONZERO || is_nan_op(op);
}

/* The type floats are computed in: f32 for bf16/f16. */
static tc_dtype compute_dt(tc_dtype dt) { return dt == TC_DT_F64 ? TC_DT_F64 : TC_DT_F32; }
static double eps_of(tc_dtype dt) { return dt == TC_DT_F64 ? 0x1p-52 : 0x1p-23; }

/* log(sum(exp(x))) in long double, shifted by the largest element: -inf
 * over zero elements or only -inf, inf with any +inf, NaN with any NaN. */
static rres ref_logsumexp(tc_dtype dt, int64_t n, const int64_t *xi, const double *xf) {
  rres r = {0, -INFINITY, 0, false};
  bool flt = tt_is_flt(dt);
  long double m = -INFINITY, s = 0;
  for (int64_t k = 0; k < n; k++) {
    long double v = flt ? xf[k] : (long double)xi[k];
    if (isnan(v)) { r.f = NAN; return r; }
    if (v > m) m = v;
  }
  if (m == -INFINITY || m == INFINITY) { r.f = (double)m; return r; }
  for (int64_t k = 0; k < n; k++) s += expl((flt ? xf[k] : (long double)xi[k]) - m);
  tc_dtype rd = flt ? dt : TC_DT_F64;
  r.f = tt_round((double)(m + logl(s)), rd);
  r.tol = 2 * tt_ulp(r.f, rd) + 4 * (double)(n + 1) * eps_of(compute_dt(rd)) * (fabs((double)m) + 1);
  return r;
}

static rres fold(tc_op op, tc_dtype dt, int64_t n, const int64_t *xi, const double *xf);

/* The nan* reductions: the plain fold of the elements that are not NaN
 * (nansum: NaN as 0); an all-NaN nanmax/nanmin is NaN, nanargmax/min -1. */
static rres fold_nan(tc_op op, tc_dtype dt, int64_t n, const int64_t *xi, const double *xf) {
  tc_op plain = op == TC_OP_NANSUM ? TC_OP_REDUCE_SUM : op == TC_OP_NANMEAN ? TC_OP_MEAN :
                op == TC_OP_NANMAX ? TC_OP_REDUCE_MAX : op == TC_OP_NANMIN ? TC_OP_REDUCE_MIN :
                op == TC_OP_NANARGMAX ? TC_OP_ARGMAX : TC_OP_ARGMIN;
  if (!tt_is_flt(dt)) return fold(plain, dt, n, xi, xf);
  double *kept = malloc(sizeof(double) * (size_t)(n ? n : 1));
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)(n ? n : 1)), m = 0;
  for (int64_t k = 0; k < n; k++)
    if (!isnan(xf[k])) { kept[m] = xf[k]; pos[m++] = k; }
  rres r;
  if (m == 0 && n > 0 && op != TC_OP_NANSUM && op != TC_OP_NANMEAN) {
    r = (rres){0, 0, 0, false};
    if (is_arg(op)) r.i = -1; else r.f = NAN;
  } else {
    r = fold(plain, dt, m, xi, kept);
    if (is_arg(op) && m > 0) r.i = pos[r.i];
  }
  free(kept);
  free(pos);
  return r;
}

/* Folds the elements of one output position, given in row-major order. */
static rres fold(tc_op op, tc_dtype dt, int64_t n, const int64_t *xi, const double *xf) {
  rres r = {0, 0, 0, false};
  bool flt = tt_is_flt(dt);
  if (is_nan_op(op)) return fold_nan(op, dt, n, xi, xf);
  int bits = dt == TC_DT_BOOL ? 64 : tt_bits(dt);
  switch (op) {
  case TC_OP_REDUCE_SUM: case TC_OP_MEAN: {
    if (!flt) {
      __int128 s = 0, sabs = 0;
      for (int64_t k = 0; k < n; k++) { s += xi[k]; sabs += xi[k] < 0 ? -(__int128)xi[k] : xi[k]; }
      if (op == TC_OP_REDUCE_SUM) { r.i = tt_wrap(s, bits); break; }
      r.f = n ? (double)s / (double)n : NAN;
      r.tol = n ? 4 * (double)(n + 2) * 0x1p-52 * (double)sabs / (double)n + tt_ulp(r.f, TC_DT_F64) : 0;
      break;
    }
    long double s = 0, sabs = 0;
    for (int64_t k = 0; k < n; k++) { s += xf[k]; sabs += fabsl((long double)xf[k]); }
    tc_dtype rd = red_dtype(op, dt), cd = compute_dt(dt);
    double exact = op == TC_OP_MEAN ? (n ? (double)(s / n) : NAN) : (double)s;
    double scale = op == TC_OP_MEAN && n ? (double)(sabs / n) : (double)sabs;
    r.f = tt_round(exact, rd);
    r.anyzero = true;
    if (isfinite(r.f)) r.tol = 2 * tt_ulp(r.f, rd) + 4 * (double)(n + 1) * eps_of(cd) * scale;
    break;
  }
  case TC_OP_REDUCE_PROD:
    if (!flt) {
      int64_t p = 1;
      for (int64_t k = 0; k < n; k++) p = tt_wrap((__int128)p * xi[k], bits);
      r.i = p;
    } else if (compute_dt(dt) == TC_DT_F32) {
      float p = 1;   /* the straightforward loop in the compute type */
      for (int64_t k = 0; k < n; k++) p *= (float)xf[k];
      r.f = tt_round(p, dt);
    } else {
      double p = 1;
      for (int64_t k = 0; k < n; k++) p *= xf[k];
      r.f = p;
    }
    break;
  case TC_OP_REDUCE_MAX: case TC_OP_REDUCE_MIN: case TC_OP_ARGMAX: case TC_OP_ARGMIN: {
    bool mx = op == TC_OP_REDUCE_MAX || op == TC_OP_ARGMAX;
    int64_t best = 0;
    for (int64_t k = 1; k < n; k++) {
      if (flt) {
        if (isnan(xf[best])) break;
        if (isnan(xf[k]) || (mx ? xf[k] > xf[best] : xf[k] < xf[best])) best = k;
      } else if (mx ? xi[k] > xi[best] : xi[k] < xi[best]) best = k;
    }
    if (is_arg(op)) r.i = best;
    else if (flt) { r.f = xf[best]; r.anyzero = true; }
    else r.i = xi[best];
    break;
  }
  case TC_OP_ANY: case TC_OP_ALL: {
    bool any = false, all = true;
    for (int64_t k = 0; k < n; k++) {
      bool nz = flt ? xf[k] != 0 || isnan(xf[k]) : xi[k] != 0;
      any |= nz;
      all &= nz;
    }
    r.i = op == TC_OP_ANY ? any : all;
    break;
  }
  case TC_OP_COUNT_NONZERO:
    for (int64_t k = 0; k < n; k++) r.i += flt ? xf[k] != 0 || isnan(xf[k]) : xi[k] != 0;
    break;
  case TC_OP_LOGSUMEXP: return ref_logsumexp(dt, n, xi, xf);
  default: break;
  }
  return r;
}

/* The whole reduction: mask[d] marks reduced dims; out has the kept dims. */
static int64_t ref_reduce(tc_op op, tc_dtype dt, int ndim, const int64_t *shape, const bool *mask,
                          const int64_t *xi, const double *xf, rres *out) {
  int64_t total = 1, nout = 1, nred = 1;
  for (int d = 0; d < ndim; d++) {
    total *= shape[d];
    if (mask[d]) nred *= shape[d]; else nout *= shape[d];
  }
  int64_t *gi = malloc(sizeof(int64_t) * (size_t)(nout * nred + 1));
  double *gf = malloc(sizeof(double) * (size_t)(nout * nred + 1));
  int64_t *cnt = calloc((size_t)nout + 1, sizeof(int64_t));
  for (int64_t k = 0; k < total; k++) {
    int64_t rem = k, o = 0, ostride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (!mask[d]) { o += c * ostride; ostride *= shape[d]; }
    }
    int64_t j = o * nred + cnt[o]++;
    gi[j] = xi ? xi[k] : 0;
    gf[j] = xf ? xf[k] : 0;
  }
  for (int64_t o = 0; o < nout; o++) out[o] = fold(op, dt, nred, gi + o * nred, gf + o * nred);
  free(gi); free(gf); free(cnt);
  return nout;
}

/* ---- comparing ---- */
static void compare(tc_tensor *o, tc_dtype rd, int64_t n, const rres *want, const char *what) {
  TT_CHECK(o->dtype == rd, "%s: dtype %s, expected %s", what, tt_name(o->dtype), tt_name(rd));
  if (o->dtype != rd) return;
  int64_t *gi = calloc((size_t)n + 1, sizeof *gi);
  double *gf = calloc((size_t)n + 1, sizeof *gf);
  tt_read(o, gi, gf);
  for (int64_t k = 0; k < n; k++) {
    if (tt_is_flt(rd)) {
      double g = gf[k], w = want[k].f;
      bool ok = isnan(w) ? isnan(g)
              : want[k].tol > 0 ? fabs(g - w) <= want[k].tol
              : want[k].anyzero ? g == w : tt_close(g, w, rd, 0);
      TT_CHECK(ok, "%s: element %lld = %.17g, expected %.17g (tolerance %g)", what, (long long)k, g, w, want[k].tol);
    } else {
      TT_CHECK(gi[k] == want[k].i, "%s: element %lld = %lld, expected %lld", what, (long long)k, (long long)gi[k],
               (long long)want[k].i);
    }
  }
  free(gi);
  free(gf);
}

/* ---- input values for a [2, 3, 4] tensor ---- */
#define N3 24
static const int64_t S3[3] = {2, 3, 4};

static void values(tc_dtype dt, int set, int64_t *xi, double *xf) {
  uint64_t s = 17 + (uint64_t)set * 31 + (uint64_t)dt;
  int64_t e[64];
  double f[64];
  int ne = tt_is_flt(dt) ? 0 : tt_edges_i(dt, e);
  for (int k = 0; k < N3; k++) {
    if (dt == TC_DT_BOOL) xi[k] = set == 0 ? (k % 3 == 0) : set == 1 ? (k % 5 != 0) : (k / 12);
    else if (!tt_is_flt(dt)) xi[k] = set == 0 ? tt_wrap((int64_t)(tt_rand(&s) % 21) - 10, tt_bits(dt))
                                   : set == 1 ? e[k % ne] : e[(k * 7 + 3) % ne];
    else xf[k] = tt_round((double)((int64_t)(tt_rand(&s) % 2001) - 1000) / 64.0, dt);
  }
  if (tt_is_flt(dt)) {
    xf[1] = 0.0; xf[2] = -0.0; xf[5] = tt_denorm_min(dt); xf[9] = xf[10];   /* a tie for argmax */
    if (set == 1) { xf[3] = NAN; xf[14] = INFINITY; xf[15] = -INFINITY; xf[21] = NAN; xf[22] = INFINITY; }
    if (set == 2) { xf[7] = -INFINITY; xf[13] = NAN; xf[19] = INFINITY; }
  }
  (void)f;
}

/* The tensor laid out as requested: 0 contiguous, 1 transposed storage,
 * 2 broadcast along axis 0 (values of row 0 repeated). */
static tc_tensor *layout(tc_dtype dt, int lay, int64_t *xi, double *xf) {
  tc_err err = tt_err();
  if (lay == 0) return tt_tensor(dt, 3, S3, xi, xf);
  if (lay == 1) {
    int64_t bs[3] = {4, 3, 2}, bi[N3];
    double bf[N3];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) { bi[k * 6 + j * 2 + i] = xi[i * 12 + j * 4 + k]; bf[k * 6 + j * 2 + i] = xf[i * 12 + j * 4 + k]; }
    tc_tensor *b = tt_tensor(dt, 3, bs, bi, bf);
    int perm[3] = {2, 1, 0};
    tc_tensor *v = tc_view_permute(b, perm, &err);
    tc_tensor_free(b);
    cr_assert_not_null(v);
    return v;
  }
  for (int k = 12; k < N3; k++) { xi[k] = xi[k - 12]; xf[k] = xf[k - 12]; }
  int64_t rs[3] = {1, 3, 4};
  tc_tensor *r = tt_tensor(dt, 3, rs, xi, xf);
  tc_tensor *v = tc_view_broadcast(r, 3, S3, &err);
  tc_tensor_free(r);
  cr_assert_not_null(v);
  return v;
}

static void check_op_dtype(tc_op op, tc_dtype dt) {
  if (!known_op(op)) {
    tt_fail("%s(%s) is claimed for cpu but this suite has no reference for it", tc_op_name(op), tt_name(dt));
    return;
  }
  tc_dtype rd = red_dtype(op, dt);
  for (int set = 0; set < 3; set++)
    for (int lay = 0; lay < 3; lay++) {
      int64_t xi[N3] = {0};
      double xf[N3] = {0};
      values(dt, set, xi, xf);
      tc_tensor *x = layout(dt, lay, xi, xf);
      for (int sub = 0; sub < 8 + 1; sub++)   /* the 8 subsets as lists, then "all" */
        for (int neg = 0; neg < 2; neg++)
          for (int keep = 0; keep < 2; keep++) {
            tc_axes ax = {.all = sub == 8, .n = 0};
            bool mask[3];
            for (int d = 0; d < 3; d++) {
              mask[d] = sub == 8 || (sub >> d) & 1;
              if (sub < 8 && mask[d]) ax.axis[ax.n++] = neg ? d - 3 : d;
            }
            if (neg && sub < 8 && ax.n > 1) {   /* and in another order */
              int64_t t = ax.axis[0]; ax.axis[0] = ax.axis[ax.n - 1]; ax.axis[ax.n - 1] = t;
            }
            rres want[N3];
            int64_t nout = ref_reduce(op, dt, 3, S3, mask, xi, xf, want);
            tc_err err = tt_err();
            tc_tensor *o = tc_reduce(op, x, &ax, keep, &err);
            char what[160];
            snprintf(what, sizeof what, "%s(%s) set %d layout %d axes 0x%x%s%s", tc_op_name(op), tt_name(dt), set, lay,
                     sub, neg ? " negative" : "", keep ? " keepdims" : "");
            cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
            /* shape */
            int want_nd = keep ? 3 : 0;
            if (!keep) for (int d = 0; d < 3; d++) want_nd += !mask[d];
            TT_CHECK(o->ndim == want_nd, "%s: ndim %d, expected %d", what, o->ndim, want_nd);
            for (int d = 0, q = 0; d < 3 && o->ndim == want_nd; d++) {
              if (keep) TT_CHECK(o->shape[d] == (mask[d] ? 1 : S3[d]), "%s: shape[%d]", what, d);
              else if (!mask[d]) { TT_CHECK(o->shape[q] == S3[d], "%s: shape[%d]", what, q); q++; }
            }
            compare(o, rd, nout, want, what);
            tc_tensor_free(o);
          }
      tc_tensor_free(x);
    }
}

Test(reduce, every_claimed_op_dtype_axes_layouts) {
  int ran = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    if (tc_op_family((tc_op)op) != TC_FAM_REDUCE) continue;
    for (int dt = 0; dt < TT_NDT; dt++)
      if (tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CPU)) { check_op_dtype((tc_op)op, (tc_dtype)dt); ran++; }
  }
  cr_log_info("%d (op, dtype) pairs", ran);
  cr_assert_gt(ran, 0);
  TT_DONE();
}

/* ---- empty tensors ---- */
Test(reduce, empty_tensors) {
  const int64_t shapes[3][2] = {{0, 0}, {2, 0}, {0, 3}};
  const int nds[3] = {1, 2, 2};
  for (int op = 0; op < TC_OP_COUNT; op++) {
    if (tc_op_family((tc_op)op) != TC_FAM_REDUCE || !known_op((tc_op)op)) continue;
    for (int dt = 0; dt < TT_NDT; dt++) {
      if (!tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
      for (int s = 0; s < 3; s++)
        for (int a = -1; a < nds[s]; a++) {   /* -1: all axes */
          tc_axes ax = {.all = a < 0, .n = a < 0 ? 0 : 1, .axis = {a}};
          bool mask[2] = {a < 0 || a == 0, a < 0 || a == 1};
          int64_t nout = 1, nred = 1;
          for (int d = 0; d < nds[s]; d++) { if (mask[d]) nred *= shapes[s][d]; else nout *= shapes[s][d]; }
          tc_err err = tt_err();
          tc_tensor *x = tc_tensor_new((tc_dtype)dt, nds[s], shapes[s], &err);
          cr_assert_not_null(x);
          uint64_t before = tc_mem_in_use();
          tc_tensor *o = tc_reduce((tc_op)op, x, &ax, false, &err);
          bool needs = op == TC_OP_REDUCE_MAX || op == TC_OP_REDUCE_MIN || op == TC_OP_NANMAX || op == TC_OP_NANMIN ||
                       is_arg((tc_op)op);
          char what[96];
          snprintf(what, sizeof what, "%s(%s) shape %d axis %d", tc_op_name((tc_op)op), tt_name((tc_dtype)dt), s, a);
          if (needs && nred == 0 && nout > 0) {
            TT_CHECK(o == NULL && err.code == TC_E_EMPTY, "%s: expected empty_reduction, got code %d", what, err.code);
            TT_CHECK(tc_mem_in_use() == before, "%s: memory left allocated", what);
          } else {
            cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
            TT_CHECK(tc_numel(o) == nout, "%s: %lld elements, expected %lld", what, (long long)tc_numel(o), (long long)nout);
            rres want[8];
            for (int64_t k = 0; k < nout; k++) want[k] = fold((tc_op)op, (tc_dtype)dt, 0, NULL, NULL);
            compare(o, red_dtype((tc_op)op, (tc_dtype)dt), nout, want, what);
            tc_tensor_free(o);
          }
          tc_tensor_free(x);
        }
    }
  }
  TT_DONE();
}

Test(reduce, empty_values_literal) {
  tc_err err = tt_err();
  int64_t z = 0;
  tc_tensor *e = tc_tensor_new(TC_DT_F64, 1, &z, &err), *ei = tc_tensor_new(TC_DT_I32, 1, &z, &err);
  tc_axes all = {.all = true};
  tc_tensor *s = tc_reduce(TC_OP_REDUCE_SUM, e, &all, false, &err), *p = tc_reduce(TC_OP_REDUCE_PROD, ei, &all, false, &err);
  tc_tensor *m = tc_reduce(TC_OP_MEAN, ei, &all, false, &err);
  double sv, mv;
  int64_t pv;
  tt_read(s, NULL, &sv);
  tt_read(p, &pv, NULL);
  tt_read(m, NULL, &mv);
  cr_expect_eq(sv, 0.0);
  cr_expect_eq(pv, 1);
  cr_expect(isnan(mv));
  cr_expect_eq(m->dtype, TC_DT_F64);
  cr_expect_null(tc_reduce(TC_OP_ARGMAX, e, &all, false, &err));
  cr_expect_eq(err.code, TC_E_EMPTY);
  cr_expect(strstr(tt_msg(&err), "argmax") != NULL, "%s", tt_msg(&err));
  tc_tensor_free(s); tc_tensor_free(p); tc_tensor_free(m); tc_tensor_free(e); tc_tensor_free(ei);
}

/* ---- axes ---- */
Test(reduce, invalid_axes) {
  tc_err err;
  int64_t xi[N3] = {0};
  tc_tensor *x = tt_tensor(TC_DT_I32, 3, S3, xi, NULL);
  const tc_axes bad[] = {
    {.n = 1, .axis = {3}}, {.n = 1, .axis = {-4}}, {.n = 2, .axis = {0, 0}}, {.n = 2, .axis = {1, -2}},
    {.n = 3, .axis = {0, 1, 2 + 64}}, {.n = 1, .axis = {INT64_MIN}}, {.n = 1, .axis = {INT64_MAX}},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    for (int op = 0; op < TC_OP_COUNT; op++) {
      if (tc_op_family((tc_op)op) != TC_FAM_REDUCE || !tc_op_supported((tc_op)op, TC_DT_I32, TC_ENGINE_CPU)) continue;
      err = tt_err();
      cr_expect_null(tc_reduce((tc_op)op, x, &bad[k], false, &err));
      cr_expect_eq(err.code, TC_E_AXIS, "case %zu %s: code %d", k, tc_op_name((tc_op)op), err.code);
      cr_expect_eq(err.op, op);
    }
  /* more axes than any tensor has */
  tc_axes many = {.n = TC_MAX_DIMS + 1};
  err = tt_err();
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, x, &many, false, &err));
  cr_expect_eq(err.code, TC_E_AXIS);
  many.n = -1;
  err = tt_err();
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, x, &many, false, &err));
  cr_expect_eq(err.code, TC_E_AXIS);
  /* a 0-d tensor has no axis 0 */
  tc_tensor *s = tt_iscalar(TC_DT_I32, 4);
  tc_axes a0 = {.n = 1, .axis = {0}};
  err = tt_err();
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, s, &a0, false, &err));
  cr_expect_eq(err.code, TC_E_AXIS);
  /* but all axes of a 0-d tensor is the value itself */
  tc_axes all = {.all = true};
  tc_tensor *o = tc_reduce(TC_OP_REDUCE_SUM, s, &all, true, &err);
  cr_assert_not_null(o);
  int64_t v;
  tt_read(o, &v, NULL);
  cr_expect_eq(v, 4);
  cr_expect_eq(o->ndim, 0);
  TT_FREE(o, s, x);
}

/* ---- integer folds wrap ---- */
Test(reduce, integer_sums_and_products_wrap) {
  uint64_t s = 3;
  const int64_t n = 200003;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  for (int dt = TC_DT_I8; dt <= TC_DT_I64; dt++) {
    int bits = tt_bits((tc_dtype)dt);
    __int128 sum = 0;
    for (int64_t k = 0; k < n; k++) { v[k] = tt_wrap((__int128)(int64_t)tt_rand(&s), bits); sum += v[k]; }
    tc_tensor *x = tt_ivec((tc_dtype)dt, n, v);
    tc_axes all = {.all = true};
    tc_err err = tt_err();
    tc_tensor *o = tc_reduce(TC_OP_REDUCE_SUM, x, &all, false, &err);
    int64_t got;
    tt_read(o, &got, NULL);
    cr_expect_eq(o->dtype, dt);
    cr_expect_eq(got, tt_wrap(sum, bits), "%s sum %lld, expected %lld", tt_name((tc_dtype)dt), (long long)got,
                 (long long)tt_wrap(sum, bits));
    tc_tensor_free(o);
    /* product of odd values (even ones would make it 0 quickly) */
    int64_t p = 1;
    for (int64_t k = 0; k < n; k++) { v[k] |= 1; p = tt_wrap((__int128)p * v[k], bits); }
    tc_tensor_free(x);
    x = tt_ivec((tc_dtype)dt, n, v);
    o = tc_reduce(TC_OP_REDUCE_PROD, x, &all, false, &err);
    tt_read(o, &got, NULL);
    cr_expect_eq(got, p, "%s prod", tt_name((tc_dtype)dt));
    tc_tensor_free(o);
    tc_tensor_free(x);
  }
  int64_t lit[2] = {100, 100};
  tc_tensor *x = tt_ivec(TC_DT_I8, 2, lit);
  tc_axes all = {.all = true};
  tc_err err = tt_err();
  tc_tensor *o = tc_reduce(TC_OP_REDUCE_SUM, x, &all, false, &err);
  int64_t got;
  tt_read(o, &got, NULL);
  cr_expect_eq(got, -56);
  tc_tensor_free(o);
  tc_tensor_free(x);
  free(v);
}

/* Large reductions along each axis: several kernel chunks, strided runs. */
Test(reduce, large_along_each_axis) {
  const int64_t sh[2] = {517, 389};
  const int64_t n = sh[0] * sh[1];
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  uint64_t s = 11;
  for (int64_t k = 0; k < n; k++) v[k] = (int64_t)(tt_rand(&s) % 2000001) - 1000000;
  tc_tensor *x = tt_tensor(TC_DT_I64, 2, sh, v, NULL);
  for (int a = 0; a < 2; a++) {
    tc_axes ax = {.n = 1, .axis = {a}};
    bool mask[2] = {a == 0, a == 1};
    rres *want = malloc(sizeof(rres) * 600);
    const tc_op ops[] = {TC_OP_REDUCE_SUM, TC_OP_REDUCE_MAX, TC_OP_ARGMIN, TC_OP_MEAN};
    for (int q = 0; q < 4; q++) {
      int64_t nout = ref_reduce(ops[q], TC_DT_I64, 2, sh, mask, v, NULL, want);
      tc_err err = tt_err();
      tc_tensor *o = tc_reduce(ops[q], x, &ax, false, &err);
      cr_assert_not_null(o);
      char what[64];
      snprintf(what, sizeof what, "%s axis %d", tc_op_name(ops[q]), a);
      compare(o, red_dtype(ops[q], TC_DT_I64), nout, want, what);
      tc_tensor_free(o);
    }
    free(want);
  }
  tc_tensor_free(x);
  free(v);
  TT_DONE();
}

/* ---- float accuracy: 1e6 values against a long double Kahan sum ---- */
static long double kahan(const double *x, int64_t n, long double *sabs) {
  long double s = 0, c = 0;
  *sabs = 0;
  for (int64_t k = 0; k < n; k++) {
    long double y = (long double)x[k] - c, t = s + y;
    c = (t - s) - y;
    s = t;
    *sabs += fabsl((long double)x[k]);
  }
  return s;
}

Test(reduce, float_sums_are_accurate) {
  const int64_t n = 1000000;
  double *x = malloc(sizeof(double) * (size_t)n);
  uint64_t s = 2024;
  const tc_dtype dts[] = {TC_DT_F32, TC_DT_F64, TC_DT_BF16, TC_DT_F16};
  for (int w = 0; w < 4; w++)
    for (int dist = 0; dist < 3; dist++) {
      tc_dtype dt = dts[w];
      for (int64_t k = 0; k < n; k++) {
        double u = tt_rand01(&s);
        double v = dist == 0 ? u : dist == 1 ? u - 0.5 : (u - 0.5) * ldexp(1.0, (int)(tt_rand(&s) % 20) - 10);
        x[k] = tt_round(dt == TC_DT_F16 ? v / 64 : v, dt);   /* f16: keep the sum in range */
      }
      long double sabs;
      long double ref = kahan(x, n, &sabs);
      tc_tensor *t = tt_fvec(dt, n, x);
      tc_axes all = {.all = true};
      tc_err err = tt_err();
      tc_tensor *o = tc_reduce(TC_OP_REDUCE_SUM, t, &all, false, &err), *m = tc_reduce(TC_OP_MEAN, t, &all, false, &err);
      double got, mean;
      tt_read(o, NULL, &got);
      tt_read(m, NULL, &mean);
      /* a few ulps of the compute type, scaled by the magnitude of the terms,
       * plus the final rounding to the dtype */
      double eps = dt == TC_DT_F64 ? 0x1p-52 : 0x1p-23;
      double tol = 4 * eps * (double)sabs + tt_ulp((double)ref, dt);
      double err_abs = fabs(got - (double)ref);
      cr_log_info("%s dist %d: |error| = %g = %.3g * eps * sum|x|", tt_name(dt), dist, err_abs, err_abs / (eps * (double)sabs));
      cr_expect(err_abs <= tol, "%s dist %d: sum %.17g, exact %.17Lg, error %g > %g", tt_name(dt), dist, got, ref, err_abs, tol);
      double mtol = tol / (double)n + tt_ulp((double)(ref / n), dt);
      cr_expect(fabs(mean - (double)(ref / n)) <= mtol, "%s mean %.17g, exact %.17Lg", tt_name(dt), mean, ref / n);
      tc_tensor_free(o); tc_tensor_free(m); tc_tensor_free(t);
    }
  free(x);
}

/* ---- argmax/argmin and NaN ---- */
Test(reduce, arg_first_occurrence_and_nan) {
  tc_err err = tt_err();
  tc_axes all = {.all = true};
  const double v1[] = {1, 3, 3, -2, -2, 3};
  tc_tensor *t = tt_fvec(TC_DT_F32, 6, v1);
  tc_tensor *a = tc_reduce(TC_OP_ARGMAX, t, &all, false, &err), *b = tc_reduce(TC_OP_ARGMIN, t, &all, false, &err);
  int64_t ia, ib;
  tt_read(a, &ia, NULL);
  tt_read(b, &ib, NULL);
  cr_expect_eq(ia, 1);
  cr_expect_eq(ib, 3);
  cr_expect_eq(a->dtype, TC_DT_I64);
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(t);
  const double v2[] = {1, INFINITY, NAN, -INFINITY, NAN, 7};
  for (int dt = TC_DT_BF16; dt <= TC_DT_F64; dt++) {
    t = tt_fvec((tc_dtype)dt, 6, v2);
    a = tc_reduce(TC_OP_ARGMAX, t, &all, false, &err);
    b = tc_reduce(TC_OP_ARGMIN, t, &all, false, &err);
    tc_tensor *mx = tc_reduce(TC_OP_REDUCE_MAX, t, &all, false, &err), *mn = tc_reduce(TC_OP_REDUCE_MIN, t, &all, false, &err);
    tt_read(a, &ia, NULL);
    tt_read(b, &ib, NULL);
    double fx, fn;
    tt_read(mx, NULL, &fx);
    tt_read(mn, NULL, &fn);
    cr_expect_eq(ia, 2, "%s argmax with NaN", tt_name((tc_dtype)dt));
    cr_expect_eq(ib, 2, "%s argmin with NaN", tt_name((tc_dtype)dt));
    cr_expect(isnan(fx) && isnan(fn), "%s max/min propagate NaN", tt_name((tc_dtype)dt));
    tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(mx); tc_tensor_free(mn); tc_tensor_free(t);
  }
  /* NaN after the largest value, along an axis */
  const double v3[] = {5, NAN, 1, 2, 9, 3};
  int64_t sh[2] = {2, 3};
  t = tt_tensor(TC_DT_F64, 2, sh, NULL, v3);
  tc_axes ax1 = {.n = 1, .axis = {-1}};
  a = tc_reduce(TC_OP_ARGMAX, t, &ax1, true, &err);
  int64_t r[2];
  tt_read(a, r, NULL);
  cr_expect(r[0] == 1 && r[1] == 1);
  cr_expect(a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 1);
  tc_tensor_free(a); tc_tensor_free(t);
}

/* Several blocks (of 1024): rising data beats the best in every block, and
 * the largest value comes again in a later block; zeros of both signs. */
Test(reduce, arg_first_occurrence_across_blocks) {
  tc_err err = tt_err();
  tc_axes all = {.all = true};
  enum { N = 5000 };
  int64_t n = N, *isaw = malloc(sizeof *isaw * N), *irise = malloc(sizeof *irise * N);
  double *saw = malloc(sizeof *saw * N), *rise = malloc(sizeof *rise * N), *z = malloc(sizeof *z * N);
  cr_assert(isaw && irise && saw && rise && z);
  for (int i = 0; i < N; i++) {
    isaw[i] = i < 2500 ? i : i - 2500;   /* largest 2499 at 2499 and 4999, least 0 at 0 and 2500 */
    irise[i] = i;
    saw[i] = (double)isaw[i];
    rise[i] = i;
    z[i] = -1 - i % 7;
  }
  z[1500] = -0.0;
  z[2600] = 0.0;
  const tc_dtype dts[] = {TC_DT_I32, TC_DT_I64, TC_DT_F32, TC_DT_F64};
  for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
    const int64_t *iin[2] = {isaw, irise};
    const double *fin[2] = {saw, rise};
    const int64_t want[2][2] = {{2499, 0}, {N - 1, 0}};
    for (int c = 0; c < 2; c++) {
      tc_tensor *t = tt_tensor(dts[d], 1, &n, iin[c], fin[c]);
      tc_tensor *a = tc_reduce(TC_OP_ARGMAX, t, &all, false, &err), *b = tc_reduce(TC_OP_ARGMIN, t, &all, false, &err);
      tc_tensor *mx = tc_reduce(TC_OP_REDUCE_MAX, t, &all, false, &err);
      cr_assert(a && b && mx, "%s: %s", tt_name(dts[d]), tt_msg(&err));
      int64_t ia, ib, ix = -1;
      double fx = -1;
      tt_read(a, &ia, NULL);
      tt_read(b, &ib, NULL);
      tt_read(mx, &ix, &fx);
      cr_expect(ia == want[c][0] && ib == want[c][1], "%s case %d: argmax %lld, argmin %lld", tt_name(dts[d]), c,
                (long long)ia, (long long)ib);
      cr_expect(ix == iin[c][want[c][0]] || fx == fin[c][want[c][0]], "%s case %d: max %lld / %g", tt_name(dts[d]), c,
                (long long)ix, fx);
      tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(mx); tc_tensor_free(t);
    }
  }
  tc_tensor *t = tt_fvec(TC_DT_F64, N, z);
  tc_tensor *a = tc_reduce(TC_OP_ARGMAX, t, &all, false, &err), *mx = tc_reduce(TC_OP_REDUCE_MAX, t, &all, false, &err);
  int64_t ia;
  double fx;
  tt_read(a, &ia, NULL);
  tt_read(mx, NULL, &fx);
  cr_expect_eq(ia, 1500, "argmax: the first zero (-0.0), not %lld", (long long)ia);
  cr_expect(fx == 0 && !signbit(fx), "max: the last zero's sign (0.0), not %g", fx);
  tc_tensor_free(a); tc_tensor_free(mx); tc_tensor_free(t);
  free(isaw); free(irise); free(saw); free(rise); free(z);
}

/* ---- result dtypes ---- */
Test(reduce, bool_sum_prod_give_i64_mean_of_ints_is_f64) {
  tc_err err = tt_err();
  tc_axes all = {.all = true};
  int64_t b[5] = {1, 1, 0, 1, 1};
  tc_tensor *t = tt_ivec(TC_DT_BOOL, 5, b);
  tc_tensor *s = tc_reduce(TC_OP_REDUCE_SUM, t, &all, false, &err), *p = tc_reduce(TC_OP_REDUCE_PROD, t, &all, false, &err);
  tc_tensor *m = tc_reduce(TC_OP_MEAN, t, &all, false, &err);
  int64_t sv, pv;
  double mv;
  tt_read(s, &sv, NULL);
  tt_read(p, &pv, NULL);
  tt_read(m, NULL, &mv);
  cr_expect_eq(s->dtype, TC_DT_I64);
  cr_expect_eq(p->dtype, TC_DT_I64);
  cr_expect_eq(m->dtype, TC_DT_F64);
  cr_expect_eq(sv, 4);
  cr_expect_eq(pv, 0);
  cr_expect_eq(mv, 0.8);
  tc_tensor_free(s); tc_tensor_free(p); tc_tensor_free(m); tc_tensor_free(t);
  for (int dt = TC_DT_I8; dt <= TC_DT_I64; dt++) {
    int64_t v[4] = {1, 2, 3, 5};
    t = tt_ivec((tc_dtype)dt, 4, v);
    m = tc_reduce(TC_OP_MEAN, t, &all, false, &err);
    cr_expect_eq(m->dtype, TC_DT_F64);
    tt_read(m, NULL, &mv);
    cr_expect_eq(mv, 2.75);
    tc_tensor_free(m);
    tc_tensor_free(t);
  }
  /* the mean of ints near the i64 limits does not overflow */
  int64_t big[2] = {INT64_MAX, INT64_MAX};
  t = tt_ivec(TC_DT_I64, 2, big);
  m = tc_reduce(TC_OP_MEAN, t, &all, false, &err);
  tt_read(m, NULL, &mv);
  cr_expect_eq(mv, 0x1p63);
  tc_tensor_free(m);
  tc_tensor_free(t);
}

/* ---- logsumexp and count_nonzero (SPEC 12) ---- */
static double scalar_f64(tc_tensor *t) {
  int64_t i = 0;
  double f = 0;
  tt_read(t, &i, &f);
  return f;
}

Test(reduce, logsumexp_is_stable_where_exp_overflows_or_underflows) {
  tc_err err = tt_err();
  const double big[2] = {1000, 1000}, small[2] = {-1000, -1000};
  tc_axes all = {.all = true};
  tc_tensor *a = tt_tensor(TC_DT_F64, 1, (const int64_t[]){2}, NULL, big);
  tc_tensor *b = tt_tensor(TC_DT_F64, 1, (const int64_t[]){2}, NULL, small);
  tc_tensor *ra = tc_reduce(TC_OP_LOGSUMEXP, a, &all, false, &err), *rb = tc_reduce(TC_OP_LOGSUMEXP, b, &all, false, &err);
  cr_assert_not_null(ra, "%s", tt_msg(&err));
  cr_assert_not_null(rb, "%s", tt_msg(&err));
  cr_expect_eq(scalar_f64(ra), 1000 + log(2.0), "%.17g", scalar_f64(ra));
  cr_expect_eq(scalar_f64(rb), -1000 + log(2.0), "%.17g", scalar_f64(rb));
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(ra); tc_tensor_free(rb);
}

/* A rising run (the running maximum changes at every element) and a random
 * one of 10^6 values, within 2 ulps of the long double result. */
Test(reduce, logsumexp_accuracy_on_long_runs) {
  const int64_t n = 1000000;
  double *x = malloc(sizeof(double) * (size_t)n);
  uint64_t st = 7;
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t k = 0; k < n; k++)
      x[k] = pass == 0 ? (double)k / 1000.0 : (double)((int64_t)(tt_rand(&st) % 2000001) - 1000000) / 1e4;
    /* compensated, so that the reference holds where long double is only
     * double (under valgrind) */
    long double m = -INFINITY, s = 0, c = 0;
    for (int64_t k = 0; k < n; k++) if (x[k] > m) m = x[k];
    for (int64_t k = 0; k < n; k++) {
      long double y = expl(x[k] - m), t = s + y;
      c += fabsl(s) >= fabsl(y) ? (s - t) + y : (y - t) + s;
      s = t;
    }
    double want = (double)(m + logl(s + c));
    tc_err err = tt_err();
    tc_axes all = {.all = true};
    tc_tensor *t = tt_tensor(TC_DT_F64, 1, &n, NULL, x);
    tc_tensor *r = tc_reduce(TC_OP_LOGSUMEXP, t, &all, false, &err);
    cr_assert_not_null(r, "%s", tt_msg(&err));
    double got = scalar_f64(r);
    cr_expect(fabs(got - want) <= 2 * tt_ulp(want, TC_DT_F64), "pass %d: %.17g, expected %.17g", pass, got, want);
    tc_tensor_free(t);
    tc_tensor_free(r);
  }
  free(x);
}

/* One run of 70013 (blocks of 256, chunks of 4096, one partial of each)
 * per float dtype, with NaN, +inf and -inf placed across blocks: the result
 * is the reference's, and its bits are the same at 1, 2 and 3 threads,
 * as a row of a [2, n] tensor and as a strided column of an [n, 2] one. */
Test(reduce, logsumexp_blocks_threads_and_layouts_agree) {
  const int64_t n = 70013;
  double *x = malloc(sizeof(double) * (size_t)n), *x2 = malloc(sizeof(double) * 2 * (size_t)n);
  static const char *const cases[] = {"random", "NaN late", "+inf", "+inf and NaN", "-inf but the last", "-inf block"};
  tc_axes all = {.all = true}, ax0 = {.n = 1, .axis = {0}}, ax1 = {.n = 1, .axis = {1}};
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (!tt_is_flt((tc_dtype)dt) || !tc_op_supported(TC_OP_LOGSUMEXP, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
    for (int c = 0; c < 6; c++) {
      uint64_t st = 5 + (uint64_t)c;
      for (int64_t k = 0; k < n; k++) x[k] = tt_round((double)((int64_t)(tt_rand(&st) % 10001) - 5000) / 100, (tc_dtype)dt);
      if (c == 1 || c == 3) x[n - 7] = NAN;
      if (c == 2 || c == 3) x[300] = INFINITY;
      if (c == 4) for (int64_t k = 0; k < n - 1; k++) x[k] = -INFINITY;
      if (c == 5) for (int64_t k = 4000; k < 9000; k++) x[k] = -INFINITY;
      rres want = ref_logsumexp((tc_dtype)dt, n, NULL, x);
      double got[5];
      for (int v = 0; v < 5; v++) {
        tc_err err = tt_err();
        tc_tensor *t, *r;
        if (v < 3) {
          tc_set_threads(v + 1);
          t = tt_tensor((tc_dtype)dt, 1, &n, NULL, x);
          r = tc_reduce(TC_OP_LOGSUMEXP, t, &all, false, &err);
          tc_set_threads(0);
        } else {
          for (int64_t k = 0; k < n; k++) {
            x2[v == 3 ? k : 2 * k] = x[k];
            x2[v == 3 ? n + k : 2 * k + 1] = 0;
          }
          int64_t sh[2] = {v == 3 ? 2 : n, v == 3 ? n : 2};
          t = tt_tensor((tc_dtype)dt, 2, sh, NULL, x2);
          r = tc_reduce(TC_OP_LOGSUMEXP, t, v == 3 ? &ax1 : &ax0, false, &err);
        }
        cr_assert_not_null(r, "%s", tt_msg(&err));
        double f[2];
        tt_read(r, NULL, f);
        got[v] = f[0];
        tc_tensor_free(t);
        tc_tensor_free(r);
      }
      char what[96];
      snprintf(what, sizeof what, "logsumexp(%s) %s", tt_name((tc_dtype)dt), cases[c]);
      bool ok = isnan(want.f) ? isnan(got[0]) : isinf(want.f) ? got[0] == want.f : fabs(got[0] - want.f) <= want.tol;
      TT_CHECK(ok, "%s: %.17g, expected %.17g", what, got[0], want.f);
      for (int v = 1; v < 5; v++)
        TT_CHECK(memcmp(&got[v], &got[0], sizeof got[0]) == 0 || (isnan(got[v]) && isnan(got[0])),
                 "%s: way %d gave %.17g, the one-thread run %.17g", what, v, got[v], got[0]);
    }
  }
  free(x);
  free(x2);
  TT_DONE();
}

/* nansum of floats is reduce_sum with each NaN read as 0, bit for bit: one
 * long run (the parallel tree) at 1, 2 and 3 threads, and rows of a matrix;
 * -0.0 counts as 0.0, so nansum([-0.0, NaN]) is +0.0 as in NumPy. */
Test(reduce, nansum_is_the_pairwise_sum_with_nan_as_zero) {
  const int64_t n = 70013, sh[2] = {7, 10001};   /* 70007 of the n values */
  double *x = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
  tc_axes all = {.all = true}, ax1 = {.n = 1, .axis = {1}};
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (!tt_is_flt((tc_dtype)dt)) continue;
    uint64_t st = 3;
    for (int64_t k = 0; k < n; k++) {
      x[k] = tt_round((double)((int64_t)(tt_rand(&st) % 20001) - 10000) / 7, (tc_dtype)dt);
      if (k % 97 == 5) x[k] = NAN;
      z[k] = isnan(x[k]) ? 0 : x[k];
    }
    for (int v = 0; v < 4; v++) {
      tc_err err = tt_err();
      if (v < 3) tc_set_threads(v + 1);
      tc_tensor *tx = v < 3 ? tt_tensor((tc_dtype)dt, 1, &n, NULL, x) : tt_tensor((tc_dtype)dt, 2, sh, NULL, x);
      tc_tensor *tz = v < 3 ? tt_tensor((tc_dtype)dt, 1, &n, NULL, z) : tt_tensor((tc_dtype)dt, 2, sh, NULL, z);
      tc_tensor *a = tc_reduce(TC_OP_NANSUM, tx, v < 3 ? &all : &ax1, false, &err);
      tc_tensor *b = tc_reduce(TC_OP_REDUCE_SUM, tz, v < 3 ? &all : &ax1, false, &err);
      tc_set_threads(0);
      cr_assert(a && b, "%s", tt_msg(&err));
      double fa[8], fb[8];
      int64_t m = tt_read(a, NULL, fa);
      tt_read(b, NULL, fb);
      for (int64_t k = 0; k < m; k++)
        TT_CHECK(fa[k] == fb[k], "nansum(%s) way %d element %lld: %.17g, the sum with NaN as 0 %.17g",
                 tt_name((tc_dtype)dt), v, (long long)k, fa[k], fb[k]);
      TT_FREE(tx, tz, a, b);
    }
    const double mz[2] = {-0.0, NAN};
    tc_tensor *t = tt_tensor((tc_dtype)dt, 1, (const int64_t[]){2}, NULL, mz);
    tc_err err = tt_err();
    tc_tensor *r = tc_reduce(TC_OP_NANSUM, t, &all, false, &err);
    cr_assert_not_null(r, "%s", tt_msg(&err));
    double f[1];
    tt_read(r, NULL, f);
    TT_CHECK(f[0] == 0 && !signbit(f[0]), "nansum(%s [-0.0, NaN]) = %g", tt_name((tc_dtype)dt), f[0]);
    TT_FREE(t, r);
  }
  free(x);
  free(z);
  TT_DONE();
}

/* count_nonzero of one long run (chunks across threads) and of a strided
 * one: the count, at 1, 2 and 3 threads, for every dtype. */
Test(reduce, count_nonzero_long_runs) {
  const int64_t n = 200003;
  double *fv = malloc(sizeof(double) * (size_t)n);
  int64_t *iv = malloc(sizeof(int64_t) * (size_t)n);
  uint64_t st = 9;
  int64_t want = 0, want3 = 0;
  for (int64_t k = 0; k < n; k++) {
    bool nz = tt_rand(&st) % 3 == 0;
    iv[k] = nz;
    fv[k] = nz ? (k % 5 == 0 ? NAN : 1.5) : (k % 2 ? -0.0 : 0.0);
    want += nz;
    want3 += nz && k % 3 == 0;
  }
  tc_axes all = {.all = true};
  for (int dt = 0; dt < TT_NDT; dt++) {
    tc_tensor *x = tt_tensor((tc_dtype)dt, 1, &n, iv, fv);
    tc_err err = tt_err();
    int64_t n3 = (n + 2) / 3, s3 = 3 * x->strides[0];
    tc_tensor *v = tc_view(x, 1, &n3, &s3, 0, &err);
    cr_assert_not_null(v, "%s", tt_msg(&err));
    for (int t = 1; t <= 3; t++) {
      tc_set_threads(t);
      tc_tensor *r = tc_reduce(TC_OP_COUNT_NONZERO, x, &all, false, &err), *r3 = tc_reduce(TC_OP_COUNT_NONZERO, v, &all, false, &err);
      tc_set_threads(0);
      cr_assert(r && r3, "%s", tt_msg(&err));
      int64_t got[1], got3[1];
      tt_read(r, got, NULL);
      tt_read(r3, got3, NULL);
      TT_CHECK(got[0] == want && got3[0] == want3, "count_nonzero(%s) at %d threads: %lld and %lld, expected %lld and %lld",
               tt_name((tc_dtype)dt), t, (long long)got[0], (long long)got3[0], (long long)want, (long long)want3);
      TT_FREE(r, r3);
    }
    TT_FREE(x, v);
  }
  free(fv);
  free(iv);
  TT_DONE();
}

Test(reduce, count_nonzero_counts_nan_and_not_negative_zero) {
  tc_err err = tt_err();
  const double v[6] = {0.0, -0.0, NAN, INFINITY, 1e-300, 0.0};
  tc_axes all = {.all = true}, ax1 = {.n = 1, .axis = {1}};
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (!tt_is_flt((tc_dtype)dt)) continue;
    tc_tensor *t = tt_tensor((tc_dtype)dt, 2, (const int64_t[]){2, 3}, NULL, v);
    tc_tensor *r = tc_reduce(TC_OP_COUNT_NONZERO, t, &all, false, &err);
    tc_tensor *r1 = tc_reduce(TC_OP_COUNT_NONZERO, t, &ax1, false, &err);
    cr_assert_not_null(r, "%s", tt_msg(&err));
    cr_assert_not_null(r1, "%s", tt_msg(&err));
    int64_t got[2] = {0}, want1 = tt_denorm_min((tc_dtype)dt) > 1e-300 ? 1 : 2;
    double f[2];
    cr_expect_eq(r->dtype, TC_DT_I64);
    tt_read(r, got, f);
    cr_expect_eq(got[0], 1 + want1, "%s: %lld", tt_name((tc_dtype)dt), (long long)got[0]);   /* NaN, inf, (1e-300) */
    tt_read(r1, got, f);
    cr_expect(got[0] == 1 && got[1] == want1, "%s: [%lld, %lld]", tt_name((tc_dtype)dt), (long long)got[0],
              (long long)got[1]);
    tc_tensor_free(t); tc_tensor_free(r); tc_tensor_free(r1);
  }
}

/* nanmax, nanmin, nanargmax, nanargmin of float runs (blocks of 1024 in
 * lanes, one long run across threads, rows): the first occurrence of the
 * extreme that is not NaN, as the one-element scan finds it (so a zero
 * keeps the first zero's sign), and -1 / NaN for NaN alone: runs with NaN
 * spread, zeros of both signs as the extreme, -inf as the extreme, and
 * whole chunks of NaN before the values. */
Test(reduce, nan_extremes_first_occurrence_across_blocks_and_threads) {
  const int64_t n = 200004, rows = 4, rshape[2] = {rows, n / rows};
  const tc_op ops[4] = {TC_OP_NANMAX, TC_OP_NANMIN, TC_OP_NANARGMAX, TC_OP_NANARGMIN};
  double *fv = malloc(sizeof(double) * (size_t)n), *dv = malloc(sizeof(double) * (size_t)n);
  uint64_t st = 23;
  tc_axes all = {.all = true}, ax1 = {.n = 1, .axis = {1}};
  int checked = 0;
  for (int kind = 0; kind < 7; kind++) {
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = tt_rand(&st);
      double v = (double)((int64_t)(r >> 20) % 20001) / 16 - 625;
      fv[k] = kind == 0 ? (r % 7 == 0 ? NAN : v)
            : kind == 1 || kind == 6 ? (r % 3 == 0 ? NAN : r % 3 == 1 ? (r & 64 ? -0.0 : 0.0) : -fabs(v) - 1)   /* max: a zero */
            : kind == 2 ? (r % 1000 == 0 ? v : NAN)
            : kind == 3 ? NAN
            : kind == 4 ? (k < 150000 ? NAN : v)
                        : (r % 2 ? NAN : -INFINITY);
      if (kind == 6) fv[k] = -fv[k];   /* min: a zero */
    }
    for (int dt = 0; dt < TT_NDT; dt++) {
      if (!tt_is_flt((tc_dtype)dt)) continue;
      tc_tensor *x = tt_tensor((tc_dtype)dt, 1, &n, NULL, fv);
      tc_err err = tt_err();
      tc_tensor *xm = tc_reshape(x, 2, rshape, &err);
      cr_assert_not_null(xm, "%s", tt_msg(&err));
      tt_read(x, NULL, dv);
      for (int o = 0; o < 4; o++) {
        bool mx = o % 2 == 0, arg = o >= 2;
        for (int t = 1; t <= 3; t++) {
          tc_set_threads(t);
          tc_tensor *r = tc_reduce(ops[o], x, &all, false, &err), *rr = r ? tc_reduce(ops[o], xm, &ax1, false, &err) : NULL;
          tc_set_threads(0);
          cr_assert(r && rr, "%s", tt_msg(&err));
          double got[rows];
          int64_t igot[rows];
          for (int64_t row = -1; row < rows; row++) {   /* -1: the whole run */
            int64_t lo = row < 0 ? 0 : row * (n / rows), len = row < 0 ? n : n / rows, want = -1;
            for (int64_t k = lo; k < lo + len; k++)
              if (dv[k] == dv[k] && (want < 0 || (mx ? dv[k] > dv[want] : dv[k] < dv[want]))) want = k;
            tt_read(row < 0 ? r : rr, igot, got);
            int64_t gi = igot[row < 0 ? 0 : row];
            double gv = got[row < 0 ? 0 : row], wv = want < 0 ? NAN : dv[want];
            if (arg)
              TT_CHECK(gi == (want < 0 ? -1 : want - lo), "%s %s kind %d row %lld threads %d: %lld, expected %lld",
                       tc_op_name(ops[o]), tt_name((tc_dtype)dt), kind, (long long)row, t, (long long)gi,
                       (long long)(want < 0 ? -1 : want - lo));
            else
              TT_CHECK(gv != gv ? wv != wv : gv == wv && signbit(gv) == signbit(wv),
                       "%s %s kind %d row %lld threads %d: %g, expected %g", tc_op_name(ops[o]), tt_name((tc_dtype)dt),
                       kind, (long long)row, t, gv, wv);
            checked++;
          }
          TT_FREE(r, rr);
        }
      }
      TT_FREE(x, xm);
    }
  }
  cr_log_info("%d nan extremes checked", checked);
  free(fv);
  free(dv);
  TT_DONE();
}

/* nanmean of f32 and f64 is nansum over the count of the others (the CPU's
 * backend/cpu/reduce.c): without NaNs, the bits of mean, over every axis;
 * with them, the mean of the others, NaN where there are none. */
Test(reduce, nanmean_is_nansum_over_the_count) {
  const int64_t shape[2] = {203, 331}, n = 203 * 331;
  double *v = malloc(sizeof(double) * (size_t)n);
  uint64_t s = 11;
  for (int64_t k = 0; k < n; k++) v[k] = (double)(int64_t)(tt_rand(&s) % 2000003) / 1000 - 1000;
  for (int dt = TC_DT_F32; dt <= TC_DT_F64; dt++) {
    tc_tensor *x = tt_tensor((tc_dtype)dt, 2, shape, NULL, v);
    for (int a = -1; a < 2; a++) {
      tc_axes ax = {.all = a < 0, .n = a < 0 ? 0 : 1, .axis = {a < 0 ? 0 : a}};
      tc_err err = tt_err();
      tc_tensor *m = tc_reduce(TC_OP_MEAN, x, &ax, false, &err), *nm = tc_reduce(TC_OP_NANMEAN, x, &ax, false, &err);
      cr_assert_not_null(nm, "%s", tt_msg(&err));
      int64_t cnt = tc_numel(m);
      cr_assert_eq(tc_numel(nm), cnt);
      size_t bytes = (size_t)cnt * tc_dtype_size((tc_dtype)dt);
      char *b1 = malloc(bytes), *b2 = malloc(bytes);
      cr_assert(tc_tensor_to_host(m, b1, &err) == 0 && tc_tensor_to_host(nm, b2, &err) == 0, "%s", tt_msg(&err));
      cr_expect(!memcmp(b1, b2, bytes), "%s axis %d: nanmean is not mean without NaNs", tt_name((tc_dtype)dt), a);
      free(b2);
      free(b1);
      TT_FREE(nm, m);
    }
    tc_tensor_free(x);
  }
  /* rows of 3: the middle one all NaN */
  const int64_t s3[2] = {3, 3};
  const double w[9] = {1, NAN, 4, NAN, NAN, NAN, -2, 0.5, NAN};
  tc_tensor *x = tt_tensor(TC_DT_F64, 2, s3, NULL, w);
  tc_axes ax = {.n = 1, .axis = {1}};
  tc_err err = tt_err();
  tc_tensor *nm = tc_reduce(TC_OP_NANMEAN, x, &ax, false, &err);
  double got[3];
  cr_assert(tc_tensor_to_host(nm, got, &err) == 0, "%s", tt_msg(&err));
  cr_expect_eq(got[0], 2.5);
  cr_expect(isnan(got[1]));
  cr_expect_eq(got[2], -0.75);
  TT_FREE(nm, x);
  free(v);
}
