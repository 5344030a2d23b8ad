/* The everyday functions of SPEC 12 (the FN family): scans, sorting,
 * counting, statistics, comparison, building and ML helpers.
 *
 * Scans and sorting run on the engine's TC_CALL_SCAN and TC_CALL_SORT on a
 * contiguous stack with the axis moved last; everything else is built from
 * the elementwise, reduction, indexing and shape ops, so it runs on any
 * engine that has those. Shapes, dtypes and argument domains are settled
 * here. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Temporaries of one call, freed together. */
typedef struct { tc_tensor *t[48]; int n; } pool;

static tc_tensor *keep(pool *p, tc_tensor *t) {
  if (t && p->n < (int)(sizeof p->t / sizeof p->t[0])) p->t[p->n++] = t;
  return t;
}

static void drop(pool *p) {
  for (int i = 0; i < p->n; i++) tc_tensor_free(p->t[i]);
  p->n = 0;
}

/* The result r (a pool member or NULL) as its own reference; frees the pool. */
static tc_tensor *done(pool *p, tc_tensor *r) {
  if (r) r = tc_tensor_ref(r);
  drop(p);
  return r;
}

static int bad(tc_err *err, tc_op op, const tc_tensor *x, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(tc_err *err, tc_op op, const tc_tensor *x, const char *fmt, ...) {
  char msg[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tc_err_set(err, TC_E_BAD_ARG, (int)op, x ? (int)x->dtype : -1, "%s", msg);
}

static tc_tensor *wf(double v, tc_err *err) { return tc_scalar_f64(v, true, err); }
static tc_tensor *wi(int64_t v, tc_err *err) { return tc_scalar_i64(v, true, err); }

/* ---- engine calls ---- */
static bool call_ok(tc_engine_id eid, tc_call_kind kind, tc_op op, tc_dtype dt) {
  const tc_engine *e = tc_engines[eid];
  tc_call c = {.kind = kind, .op = op, .dtype = dt};
  return e && e->supports(&c);
}

/* The call on the current engine; one the overflow policy judges goes
 * where tc_run_call sends it (an engine that judges nothing: the CPU). */
static int run_call(tc_call *c, tc_op op, tc_err *err) {
  tc_engine_id e = tc_get_engine();
  if (tc_engine_check(e, err) != 0) return -1;
  tc_call w = *c;
  w.overflow = TC_OVERFLOW_WRAP;   /* whether the engine has the kernel at all */
  if (!tc_engines[e]->supports(&w))
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)c->dtype, "not supported for %s on %s", tc_dtype_name(c->dtype),
                      tc_engine_name(e));
  return tc_run_call(c, err);
}

/* A contiguous copy of x with axis a moved last. */
static tc_tensor *to_last(tc_tensor *x, int a, tc_err *err) {
  int64_t perm[TC_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != a) perm[k++] = i;
  perm[k] = a;
  tc_tensor *t = tc_transpose(x, x->ndim, perm, err);
  tc_tensor *c = t ? tc_contiguous(t, err) : NULL;
  tc_tensor_free(t);
  return c;
}

/* The inverse of to_last: a view of y with its last axis back at a. */
static tc_tensor *from_last(tc_tensor *y, int a, tc_err *err) {
  int64_t perm[TC_MAX_DIMS];
  for (int i = 0; i < y->ndim; i++) perm[i] = i < a ? i : i == a ? y->ndim - 1 : i - 1;
  return tc_transpose(y, y->ndim, perm, err);
}

/* A view of x narrowed to [lo, lo + len) along axis a. */
static tc_tensor *narrow(tc_tensor *x, int a, int64_t lo, int64_t len, tc_err *err) {
  int64_t shape[TC_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[a] = len;
  return tc_view(x, x->ndim, shape, x->strides, x->offset + (len > 0 ? lo * x->strides[a] : 0), err);
}

static int norm_axis(int64_t axis, int ndim, tc_op op, int *a, tc_err *err) {
  int64_t v;
  if (tc_norm_axis(axis, ndim, op, &v, err) != 0) return -1;
  *a = (int)v;
  return 0;
}

/* ---- the nan forms (TC_NAN_FORMS) ---- */
/* op's plain form (op itself when op is none of the nan forms) */
static tc_op plain_of(tc_op op) {
  double fill;
  int plain = tc_op_nan_form(op, &fill);
  return plain < 0 ? op : (tc_op)plain;
}

/* Whether op skips the NaNs of x: a nan form over floats (integers and
 * bool hold none, and take the plain form's way). */
static bool skips_nan(tc_op op, const tc_tensor *x) {
  return plain_of(op) != op && tc_dtype_class(x->dtype) == TC_CLASS_FLT;
}

/* x with each NaN read as fill, weak as x is: what a filling nan form runs
 * its plain form on (x itself where it holds no NaN). */
static tc_tensor *nan_filled(tc_op op, tc_tensor *x, tc_err *err) {
  double fill;
  if (tc_op_nan_form(op, &fill) < 0 || tc_dtype_class(x->dtype) != TC_CLASS_FLT) return tc_tensor_ref(x);
  pool p = {0};
  tc_tensor *isn = keep(&p, tc_unary(TC_OP_ISNAN, x, err)), *f = isn ? keep(&p, wf(fill, err)) : NULL;
  tc_tensor *r = f ? keep(&p, tc_where(isn, f, x, err)) : NULL;
  if (r) r->weak = x->weak;
  return done(&p, r);
}

/* The end of a filling nan form's call: its errors named for it, not
 * for the plain form that ran. */
static tc_tensor *filled_done(tc_op op, tc_tensor *filled, tc_tensor *r, tc_err *err) {
  tc_tensor_free(filled);
  if (!r) tc_reattribute(err, op);
  return r;
}

tc_tensor *tc_nanprod(tc_tensor *x, const tc_axes *axes, bool keepdims, tc_err *err) {
  tc_tensor *f = nan_filled(TC_OP_NANPROD, x, err);
  return filled_done(TC_OP_NANPROD, f, f ? tc_reduce(TC_OP_REDUCE_PROD, f, axes, keepdims, err) : NULL, err);
}

/* ---- scans ---- */
tc_tensor *tc_scan(tc_op op, tc_tensor *x, bool has_axis, int64_t axis, tc_err *err) {
  if (plain_of(op) != op) {
    tc_tensor *f = nan_filled(op, x, err);
    return filled_done(op, f, f ? tc_scan(plain_of(op), f, has_axis, axis, err) : NULL, err);
  }
  pool p = {0};
  tc_dtype k = tc_op_kernel_dtype(op, x->dtype);
  tc_tensor *src = has_axis ? x : keep(&p, tc_flatten(x, err));
  int a = 0;
  if (!src || norm_axis(has_axis ? axis : 0, src->ndim, op, &a, err) != 0) return done(&p, NULL);
  tc_tensor *m = keep(&p, tc_operand(src, k, err));
  tc_tensor *c = m ? keep(&p, to_last(m, a, err)) : NULL;
  tc_tensor *out = c ? keep(&p, tc_tensor_new(k, c->ndim, c->shape, err)) : NULL;
  if (!out) return done(&p, NULL);
  /* check / saturate (SPEC 13): exact running sums and products */
  tc_call call = {.kind = TC_CALL_SCAN, .op = op, .dtype = k, .nin = 1, .in = {c}, .out = out,
                  .overflow = tc_overflow_judges_scan(op, k), .axis = a};
  if (tc_numel(out) && run_call(&call, op, err) != 0)
    return done(&p, NULL);
  return done(&p, keep(&p, from_last(out, a, err)));
}

tc_tensor *tc_diff(tc_tensor *x, int64_t n, int64_t axis, tc_err *err) {
  int a;
  if (x->ndim == 0) { bad(err, TC_OP_DIFF, x, "x must have at least one dimension"); return NULL; }
  if (n < 0) { bad(err, TC_OP_DIFF, x, "n must be >= 0; it is %lld", (long long)n); return NULL; }
  if (norm_axis(axis, x->ndim, TC_OP_DIFF, &a, err) != 0) return NULL;
  tc_tensor *cur = tc_tensor_ref(x);
  tc_op sub = x->dtype == TC_DT_BOOL ? TC_OP_NOT_EQUAL : TC_OP_SUB;
  for (int64_t i = 0; i < n && cur; i++) {
    int64_t len = cur->shape[a] > 0 ? cur->shape[a] - 1 : 0;
    tc_tensor *hi = narrow(cur, a, 1, len, err), *lo = hi ? narrow(cur, a, 0, len, err) : NULL;
    tc_tensor *d = lo ? tc_binary(sub, hi, lo, err) : NULL;
    tc_tensor_free(hi);
    tc_tensor_free(lo);
    tc_tensor_free(cur);
    cur = d;
    if (len == 0) break;
  }
  if (cur && n == 0) {
    tc_tensor *c = tc_clone(cur, err);
    tc_tensor_free(cur);
    cur = c;
  }
  if (cur) cur->weak = false;
  return cur;
}

/* ---- sorting ---- */
/* positions asked of a sort at most 1 / SELECT_FEW of a row's: selected */
#define SELECT_FEW 16
/* x sorted (or argsorted) along axis a, moved last and contiguous; with
 * nkth > 0 only positions kth[0..nkth) (ascending, distinct) of each row
 * are sure to hold the sorted values (an engine may select instead of
 * sorting: src/engine.h). */
static tc_tensor *sort_last(tc_op op, tc_tensor *x, int a, bool desc, const int64_t *kth, int64_t nkth, tc_err *err) {
  pool p = {0};
  tc_tensor *m = keep(&p, tc_operand(x, x->dtype, err));
  tc_tensor *c = m ? keep(&p, to_last(m, a, err)) : NULL;
  tc_tensor *out = c ? keep(&p, tc_tensor_new(op == TC_OP_ARGSORT ? TC_DT_I64 : x->dtype, c->ndim, c->shape, err)) : NULL;
  if (!out) return done(&p, NULL);
  if (tc_numel(out) && c->ndim && c->shape[c->ndim - 1] > (int64_t)UINT32_MAX) {   /* the engines' positions are 32-bit */
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "cannot sort more than 2^32 - 1 elements along one axis");
    return done(&p, NULL);
  }
  tc_call call = {.kind = TC_CALL_SORT, .op = op, .dtype = x->dtype, .nin = 1, .in = {c}, .out = out,
                  .descending = desc, .kth = kth, .nkth = nkth};
  if (tc_numel(out) && run_call(&call, op, err) != 0) return done(&p, NULL);
  return done(&p, out);
}

tc_tensor *tc_sort(tc_op op, tc_tensor *x, int64_t axis, bool descending, tc_err *err) {
  int a;
  if (norm_axis(axis, x->ndim, op, &a, err) != 0) return NULL;
  tc_tensor *s = sort_last(op, x, a, descending, NULL, 0, err);
  tc_tensor *r = s ? from_last(s, a, err) : NULL;
  tc_tensor_free(s);
  return r;
}

tc_tensor *tc_topk(tc_op op, tc_tensor *x, int64_t k, int64_t axis, tc_err *err) {
  int a;
  if (norm_axis(axis, x->ndim, op, &a, err) != 0) return NULL;
  if (k < 0 || k > x->shape[a]) {
    bad(err, op, x, "k must be in [0, %lld] (the length of axis %d); it is %lld", (long long)x->shape[a], a, (long long)k);
    return NULL;
  }
  pool p = {0};
  /* a few of many: positions 0..k-1 selected, not the whole row sorted */
  int64_t *kth = k > 0 && k * SELECT_FEW <= x->shape[a] ? malloc(sizeof(int64_t) * (size_t)k) : NULL;
  for (int64_t i = 0; kth && i < k; i++) kth[i] = i;
  tc_tensor *s = keep(&p, sort_last(op == TC_OP_TOPK ? TC_OP_SORT : TC_OP_ARGSORT, x, a, true, kth, kth ? k : 0, err));
  free(kth);
  tc_tensor *v = s ? keep(&p, narrow(s, s->ndim - 1, 0, k, err)) : NULL;
  return done(&p, v ? keep(&p, from_last(v, a, err)) : NULL);
}

tc_tensor *tc_searchsorted(tc_tensor *s, tc_tensor *v, bool right, tc_err *err) {
  tc_op op = TC_OP_SEARCHSORTED;
  if (s->ndim != 1) {
    bad(err, op, s, "sorted must be 1-D; it has %d dimensions", s->ndim);
    return NULL;
  }
  tc_dtype dt;
  if (tc_result_dtype2(op, s, v, &dt, err) != 0) return NULL;
  pool p = {0};
  tc_tensor *ms = keep(&p, tc_operand(s, dt, err)), *cs = ms ? keep(&p, tc_contiguous(ms, err)) : NULL;
  tc_tensor *mv = cs ? keep(&p, tc_operand(v, dt, err)) : NULL, *cv = mv ? keep(&p, tc_contiguous(mv, err)) : NULL;
  tc_tensor *out = cv ? keep(&p, tc_tensor_new(TC_DT_I64, v->ndim, v->shape, err)) : NULL;
  if (!out) return done(&p, NULL);
  tc_call call = {.kind = TC_CALL_SORT, .op = op, .dtype = dt, .nin = 2, .in = {cs, cv}, .out = out, .right = right};
  if (tc_numel(out) && run_call(&call, op, err) != 0) return done(&p, NULL);
  return done(&p, out);
}

/* The sorted, flattened x and the mask of the first element of each run of
 * equal values (NaNs equal each other, -0.0 equals 0.0). */
static int runs(tc_op op, tc_tensor *x, pool *p, tc_tensor **sorted, tc_tensor **mask, tc_err *err) {
  tc_tensor *f = keep(p, tc_flatten(x, err));
  tc_tensor *s = f ? keep(p, tc_sort(TC_OP_SORT, f, 0, false, err)) : NULL;
  if (!s) return -1;
  int64_t n = s->shape[0];
  tc_tensor *hi = keep(p, narrow(s, 0, 1, n - 1, err)), *lo = hi ? keep(p, narrow(s, 0, 0, n - 1, err)) : NULL;
  tc_tensor *neq = lo ? keep(p, tc_binary(TC_OP_NOT_EQUAL, hi, lo, err)) : NULL;
  if (neq && tc_dtype_class(s->dtype) == TC_CLASS_FLT) {
    tc_tensor *nh = keep(p, tc_unary(TC_OP_ISNAN, hi, err)), *nl = nh ? keep(p, tc_unary(TC_OP_ISNAN, lo, err)) : NULL;
    tc_tensor *both = nl ? keep(p, tc_binary(TC_OP_LOGICAL_AND, nh, nl, err)) : NULL;
    tc_tensor *nb = both ? keep(p, tc_binary(TC_OP_GREATER, neq, both, err)) : NULL;   /* neq and not both */
    neq = nb;
  }
  tc_tensor *first = neq ? keep(p, tc_scalar_bool(true, err)) : NULL;
  tc_tensor *first1 = first ? keep(p, tc_reshape(first, 1, (int64_t[]){1}, err)) : NULL;
  tc_tensor *parts[2] = {first1, neq};
  tc_tensor *m = first1 ? keep(p, tc_concat(2, parts, 0, err)) : NULL;
  (void)op;
  *sorted = s;
  *mask = m;
  return m ? 0 : -1;
}

static tc_tensor *select_mask(tc_tensor *x, tc_tensor *mask, tc_err *err) {
  tc_index_item it = {.kind = TC_IDX_TENSOR, .t = mask};
  return tc_getitem(x, 1, &it, err);
}

static tc_tensor *iota(int64_t n, tc_err *err) {
  pool p = {0};
  tc_tensor *a = keep(&p, tc_scalar_i64(0, false, err)), *b = keep(&p, tc_scalar_i64(n, false, err));
  tc_tensor *s = keep(&p, tc_scalar_i64(1, false, err));
  return done(&p, a && b && s ? keep(&p, tc_arange(a, b, s, TC_DT_I64, err)) : NULL);
}

tc_tensor *tc_unique(tc_op op, tc_tensor *x, tc_err *err) {
  pool p = {0};
  int64_t n = tc_numel(x);
  if (n == 0) return tc_zeros(1, (int64_t[]){0}, op == TC_OP_UNIQUE ? x->dtype : TC_DT_I64, err);
  tc_tensor *s, *m;
  if (runs(op, x, &p, &s, &m, err) != 0) return done(&p, NULL);
  if (op == TC_OP_UNIQUE) return done(&p, keep(&p, select_mask(s, m, err)));
  tc_tensor *pos = keep(&p, iota(n, err));
  tc_tensor *starts = pos ? keep(&p, select_mask(pos, m, err)) : NULL;
  tc_tensor *nn = starts ? keep(&p, tc_scalar_i64(n, false, err)) : NULL;
  tc_tensor *n1 = nn ? keep(&p, tc_reshape(nn, 1, (int64_t[]){1}, err)) : NULL;
  tc_tensor *rest = n1 ? keep(&p, narrow(starts, 0, 1, starts->shape[0] - 1, err)) : NULL;
  tc_tensor *parts[2] = {rest, n1};
  tc_tensor *ends = rest ? keep(&p, tc_concat(2, parts, 0, err)) : NULL;
  return done(&p, ends ? keep(&p, tc_binary(TC_OP_SUB, ends, starts, err)) : NULL);
}

/* ---- counting ---- */
tc_tensor *tc_argwhere(tc_tensor *x, tc_err *err) {
  pool p = {0};
  tc_tensor *nz = x;   /* the mask: x itself when it is bool */
  if (x->dtype != TC_DT_BOOL) {
    tc_tensor *z = keep(&p, wi(0, err));
    nz = z ? keep(&p, tc_binary(TC_OP_NOT_EQUAL, x, z, err)) : NULL;
  }
  if (!nz) return done(&p, NULL);
  if (x->ndim == 0) {
    bool v = false;
    if (tc_tensor_to_host(nz, &v, err) != 0) return done(&p, NULL);
    return done(&p, keep(&p, tc_zeros(2, (int64_t[]){v ? 1 : 0, 0}, TC_DT_I64, err)));
  }
  tc_tensor *flat = keep(&p, tc_mask_positions(nz, err));
  if (!flat) return done(&p, NULL);
  tc_tensor *cols[TC_MAX_DIMS];
  int64_t stride = 1;
  /* index d is (flat // stride) % shape[d]: no division for the last dim
   * (stride 1), no remainder for the first (the quotient is below it) */
  for (int d = x->ndim - 1; d >= 0; d--) {
    tc_tensor *st = keep(&p, wi(stride, err)), *sh = st ? keep(&p, wi(x->shape[d] ? x->shape[d] : 1, err)) : NULL;
    tc_tensor *q = !sh ? NULL : stride == 1 ? flat : keep(&p, tc_binary(TC_OP_FLOOR_DIV, flat, st, err));
    cols[d] = !q ? NULL : d == 0 ? q : keep(&p, tc_binary(TC_OP_MOD, q, sh, err));
    if (!cols[d]) return done(&p, NULL);
    stride *= x->shape[d] ? x->shape[d] : 1;
  }
  return done(&p, keep(&p, tc_stack(x->ndim, cols, 1, err)));
}

/* counts[i] += 1 for each i of the i64 vector idx (all in [0, n)). */
static tc_tensor *count_into(tc_tensor *idx, int64_t n, tc_err *err) {
  pool p = {0};
  tc_tensor *z = keep(&p, tc_zeros(1, &n, TC_DT_I64, err));
  tc_tensor *one = z ? keep(&p, tc_scalar_i64(1, false, err)) : NULL;   /* broadcast to every update */
  return done(&p, one ? keep(&p, tc_scatter(z, idx, one, 0, TC_SCATTER_ADD, TC_MODE_ERROR, err)) : NULL);
}

static int host_scalar(tc_tensor *t, tc_dtype dt, void *v, tc_err *err) {
  tc_tensor *c = tc_cast(t, dt, err);
  int rc = c ? tc_tensor_to_host(c, v, err) : -1;
  tc_tensor_free(c);
  return rc;
}

tc_tensor *tc_bincount(tc_tensor *x, int64_t minlength, tc_err *err) {
  tc_op op = TC_OP_BINCOUNT;
  if (x->ndim != 1) { bad(err, op, x, "x must be 1-D; it has %d dimensions", x->ndim); return NULL; }
  if (tc_dtype_class(x->dtype) == TC_CLASS_FLT) {
    bad(err, op, x, "x must hold integers (or bools), not %s", tc_dtype_name(x->dtype));
    return NULL;
  }
  if (minlength < 0) { bad(err, op, x, "minlength must be >= 0; it is %lld", (long long)minlength); return NULL; }
  pool p = {0};
  int64_t n = minlength;
  tc_tensor *ix = keep(&p, tc_cast(x, TC_DT_I64, err));
  if (!ix) return done(&p, NULL);
  if (x->shape[0] > 0) {
    tc_axes all = {.all = true};
    int64_t lo, hi;
    tc_tensor *mn = keep(&p, tc_reduce(TC_OP_REDUCE_MIN, ix, &all, false, err));
    tc_tensor *mx = mn ? keep(&p, tc_reduce(TC_OP_REDUCE_MAX, ix, &all, false, err)) : NULL;
    if (!mx || host_scalar(mn, TC_DT_I64, &lo, err) != 0 || host_scalar(mx, TC_DT_I64, &hi, err) != 0)
      return done(&p, NULL);
    if (lo < 0) { bad(err, op, x, "x must not hold negative values; it holds %lld", (long long)lo); return done(&p, NULL); }
    if (hi == INT64_MAX) { bad(err, op, x, "%s", "the largest value leaves no room for a count"); return done(&p, NULL); }
    if (hi + 1 > n) n = hi + 1;
  }
  return done(&p, keep(&p, count_into(ix, n, err)));
}

tc_tensor *tc_histogram(tc_tensor *x, int64_t bins, bool has_lo, double lo, bool has_hi, double hi, tc_err *err) {
  tc_op op = TC_OP_HISTOGRAM;
  if (bins <= 0) { bad(err, op, x, "bins must be > 0; it is %lld", (long long)bins); return NULL; }
  if (x->dtype == TC_DT_BOOL) { bad(err, op, x, "%s", "x must hold numbers, not bools (cast first)"); return NULL; }
  pool p = {0};
  tc_axes all = {.all = true};
  tc_tensor *f = keep(&p, tc_flatten(x, err));
  tc_tensor *xf = f ? keep(&p, tc_cast(f, TC_DT_F64, err)) : NULL;
  if (!xf) return done(&p, NULL);
  if ((!has_lo || !has_hi) && tc_numel(xf) == 0) {   /* NumPy's range for no data: [0, 1] */
    if (!has_lo) lo = has_hi && hi < 0 ? hi - 1 : 0;
    if (!has_hi) hi = lo + 1 > 1 ? lo + 1 : 1;
  } else if (!has_lo || !has_hi) {
    double mn, mx;
    tc_tensor *a = keep(&p, tc_reduce(TC_OP_REDUCE_MIN, xf, &all, false, err));
    tc_tensor *b = a ? keep(&p, tc_reduce(TC_OP_REDUCE_MAX, xf, &all, false, err)) : NULL;
    if (!b || host_scalar(a, TC_DT_F64, &mn, err) != 0 || host_scalar(b, TC_DT_F64, &mx, err) != 0) return done(&p, NULL);
    if (!has_lo) lo = mn;
    if (!has_hi) hi = mx;
  }
  if (!isfinite(lo) || !isfinite(hi)) {
    bad(err, op, x, "the range [%g, %g] is not finite (NaN or inf in the data, or given)", lo, hi);
    return done(&p, NULL);
  }
  if (lo > hi) { bad(err, op, x, "lo (%g) must not be larger than hi (%g)", lo, hi); return done(&p, NULL); }
  if (lo == hi) { lo -= 0.5; hi += 0.5; }
  /* NumPy's binning: (x - lo) * bins / (hi - lo), truncated, then moved by
   * one where it disagrees with the edges linspace(lo, hi, bins + 1) */
  tc_tensor *tl = keep(&p, wf(lo, err)), *th = keep(&p, wf(hi, err));
  tc_tensor *ge = th ? keep(&p, tc_binary(TC_OP_GREATER_EQUAL, xf, tl, err)) : NULL;
  tc_tensor *le = ge ? keep(&p, tc_binary(TC_OP_LESS_EQUAL, xf, th, err)) : NULL;
  tc_tensor *in = le ? keep(&p, tc_binary(TC_OP_LOGICAL_AND, ge, le, err)) : NULL;
  tc_tensor *v = in ? keep(&p, select_mask(xf, in, err)) : NULL;
  tc_tensor *norm = v ? keep(&p, wf((double)bins / (hi - lo), err)) : NULL;
  tc_tensor *d = norm ? keep(&p, tc_binary(TC_OP_SUB, v, tl, err)) : NULL;
  tc_tensor *fi = d ? keep(&p, tc_binary(TC_OP_MUL, d, norm, err)) : NULL;
  tc_tensor *ii = fi ? keep(&p, tc_cast(fi, TC_DT_I64, err)) : NULL;
  tc_tensor *top = ii ? keep(&p, wi(bins - 1, err)) : NULL;
  tc_tensor *idx = top ? keep(&p, tc_binary(TC_OP_MINIMUM, ii, top, err)) : NULL;
  tc_tensor *edges = idx ? keep(&p, tc_linspace(lo, hi, bins + 1, TC_DT_F64, err)) : NULL;
  tc_tensor *el = edges ? keep(&p, tc_take(edges, idx, 0, TC_MODE_ERROR, NULL, err)) : NULL;
  tc_tensor *dec = el ? keep(&p, tc_binary(TC_OP_LESS, v, el, err)) : NULL;
  tc_tensor *decl = dec ? keep(&p, tc_cast(dec, TC_DT_I64, err)) : NULL;
  idx = decl ? keep(&p, tc_binary(TC_OP_SUB, idx, decl, err)) : NULL;
  tc_tensor *one = idx ? keep(&p, wi(1, err)) : NULL;
  tc_tensor *i1 = one ? keep(&p, tc_binary(TC_OP_ADD, idx, one, err)) : NULL;
  tc_tensor *eh = i1 ? keep(&p, tc_take(edges, i1, 0, TC_MODE_ERROR, NULL, err)) : NULL;
  tc_tensor *ge2 = eh ? keep(&p, tc_binary(TC_OP_GREATER_EQUAL, v, eh, err)) : NULL;
  tc_tensor *nl = ge2 ? keep(&p, tc_binary(TC_OP_NOT_EQUAL, idx, top, err)) : NULL;
  tc_tensor *inc = nl ? keep(&p, tc_binary(TC_OP_LOGICAL_AND, ge2, nl, err)) : NULL;
  tc_tensor *incl = inc ? keep(&p, tc_cast(inc, TC_DT_I64, err)) : NULL;
  idx = incl ? keep(&p, tc_binary(TC_OP_ADD, idx, incl, err)) : NULL;
  return done(&p, idx ? keep(&p, count_into(idx, bins, err)) : NULL);
}

/* ---- statistics ---- */
/* The count of elements each output of a reduction over axes folds. */
static int reduced_count(tc_op op, const tc_tensor *x, const tc_axes *axes, int64_t *n, tc_err *err) {
  bool mask[TC_MAX_DIMS];
  if (tc_axes_mask(axes, x->ndim, mask, op, err) != 0) return -1;
  *n = 1;
  for (int i = 0; i < x->ndim; i++)
    if (mask[i]) *n *= x->shape[i];
  return 0;
}

/* The nan forms take the mean and the squared deviations of the elements
 * that are not NaN, NumPy's way (a NaN's deviation read as 0; an inf's,
 * NaN, kept), and divide by their count less ddof, which varies by slice:
 * NaN where it is not positive (NumPy's nanvar; var refuses such a ddof).
 * Without NaNs they run var's operations on the same values: its bits. */
tc_tensor *tc_var(tc_op op, tc_tensor *x, const tc_axes *axes, int64_t ddof, bool keepdims, tc_err *err) {
  bool nan = plain_of(op) != op;
  int64_t n;
  if (reduced_count(op, x, axes, &n, err) != 0) return NULL;
  if (ddof >= n && !nan) {
    bad(err, op, x, "ddof (%lld) must be less than the count of elements (%lld)", (long long)ddof, (long long)n);
    return NULL;
  }
  pool p = {0};
  tc_dtype k = tc_op_kernel_dtype(op, x->dtype);
  tc_dtype c = k == TC_DT_F16 || k == TC_DT_BF16 ? TC_DT_F32 : k;   /* half floats compute in f32 */
  tc_tensor *xf = keep(&p, tc_cast(x, c, err));
  tc_tensor *m = xf ? keep(&p, tc_reduce(nan ? TC_OP_NANMEAN : TC_OP_MEAN, xf, axes, true, err)) : NULL;
  tc_tensor *d = m ? keep(&p, tc_binary(TC_OP_SUB, xf, m, err)) : NULL;
  tc_tensor *isn = NULL, *zero = NULL;
  if (nan && d) {
    zero = keep(&p, wf(0, err));
    isn = zero ? keep(&p, tc_unary(TC_OP_ISNAN, xf, err)) : NULL;
    d = isn ? keep(&p, tc_where(isn, zero, d, err)) : NULL;
  }
  tc_tensor *sq = d ? keep(&p, tc_binary(TC_OP_MUL, d, d, err)) : NULL;
  tc_tensor *s = sq ? keep(&p, tc_reduce(TC_OP_REDUCE_SUM, sq, axes, keepdims, err)) : NULL;
  /* in f64: n - ddof of a ddof far below zero leaves int64 */
  tc_tensor *dn = s ? keep(&p, wf((double)n - (double)ddof, err)) : NULL, *nodof = NULL;
  if (nan && dn) {
    tc_tensor *nnan = keep(&p, tc_reduce(TC_OP_COUNT_NONZERO, isn, axes, keepdims, err));
    tc_tensor *nf = nnan ? keep(&p, tc_cast(nnan, TC_DT_F64, err)) : NULL;
    tc_tensor *dof = nf ? keep(&p, tc_binary(TC_OP_SUB, dn, nf, err)) : NULL;
    nodof = dof ? keep(&p, tc_binary(TC_OP_LESS_EQUAL, dof, zero, err)) : NULL;
    dn = nodof ? keep(&p, tc_cast(dof, c, err)) : NULL;   /* divided in c, as var's weak count */
  }
  tc_tensor *v = dn ? keep(&p, tc_binary(TC_OP_DIV, s, dn, err)) : NULL;
  if (v && nodof) {   /* no degrees of freedom left */
    tc_tensor *nanv = keep(&p, wf(NAN, err));
    v = nanv ? keep(&p, tc_where(nodof, nanv, v, err)) : NULL;
  }
  if (v && plain_of(op) == TC_OP_STD) v = keep(&p, tc_unary(TC_OP_SQRT, v, err));
  if (v && v->dtype != k) v = keep(&p, tc_cast(v, k, err));
  if (v) v->weak = false;
  return done(&p, v);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int method_id(const char *m) {
  static const char *const names[] = {"linear", "lower", "higher", "nearest", "midpoint"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(m, names[i])) return i;
  return -1;
}

/* Methods that select an element (the result keeps x's dtype, as NumPy). */
static bool method_selects(int method) { return method == 1 || method == 2 || method == 3; }

static bool is_median(tc_op op) { return plain_of(op) == TC_OP_MEDIAN; }

/* (a + b) / 2: the median's middle of two, as NumPy's */
static tc_tensor *middle(pool *p, tc_tensor *a, tc_tensor *b, tc_err *err) {
  tc_tensor *sum = a && b ? keep(p, tc_binary(TC_OP_ADD, a, b, err)) : NULL;
  tc_tensor *two = sum ? keep(p, wf(2, err)) : NULL;
  return two ? keep(p, tc_binary(TC_OP_DIV, sum, two, err)) : NULL;
}

/* One quantile q of the rows of s (sorted along its last axis, n long). */
static tc_tensor *quantile_rows(pool *p, tc_tensor *s, double q, int method, bool median, tc_err *err) {
  int last = s->ndim - 1;
  int64_t n = s->shape[last];
  double v = q * (double)(n - 1);
  int64_t lo = (int64_t)floor(v), hi = lo + 1 < n ? lo + 1 : n - 1;
  double t = v - (double)lo;
  if (median) {
    tc_tensor *a = keep(p, narrow(s, last, (n - 1) / 2, 1, err)), *b = a ? keep(p, narrow(s, last, n / 2, 1, err)) : NULL;
    return middle(p, a, b, err);
  }
  if (method == 1) return keep(p, narrow(s, last, lo, 1, err));
  if (method == 2) return keep(p, narrow(s, last, t > 0 ? hi : lo, 1, err));
  if (method == 3) return keep(p, narrow(s, last, (int64_t)nearbyint(v), 1, err));
  if (method == 4) t = t > 0 ? 0.5 : 0;   /* midpoint: halfway between floor(i) and ceil(i) */
  /* linear and midpoint, as NumPy's _lerp: b - a in s's dtype, then in f64
   * a + (b - a) t, or b - (b - a)(1 - t) from t = 0.5 on */
  tc_tensor *a = keep(p, narrow(s, last, lo, 1, err)), *b = a ? keep(p, narrow(s, last, hi, 1, err)) : NULL;
  tc_tensor *d = b ? keep(p, tc_binary(TC_OP_SUB, b, a, err)) : NULL;
  tc_tensor *df = d ? keep(p, tc_cast(d, TC_DT_F64, err)) : NULL;
  tc_tensor *ab = df ? keep(p, tc_cast(t < 0.5 ? a : b, TC_DT_F64, err)) : NULL;
  tc_tensor *w = ab ? keep(p, wf(t < 0.5 ? t : 1 - t, err)) : NULL;
  tc_tensor *dw = w ? keep(p, tc_binary(TC_OP_MUL, df, w, err)) : NULL;
  return dw ? keep(p, tc_binary(t < 0.5 ? TC_OP_ADD : TC_OP_SUB, ab, dw, err)) : NULL;
}

/* Ops whose result joins the pool, of operands that may be NULL (a step
 * before failed, its error set): NULL then. */
static tc_tensor *kbin(pool *p, tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  return a && b ? keep(p, tc_binary(op, a, b, err)) : NULL;
}
static tc_tensor *kun(pool *p, tc_op op, tc_tensor *x, tc_err *err) { return x ? keep(p, tc_unary(op, x, err)) : NULL; }
static tc_tensor *kcast(pool *p, tc_tensor *x, tc_dtype dt, tc_err *err) { return x ? keep(p, tc_cast(x, dt, err)) : NULL; }
static tc_tensor *kwhere(pool *p, tc_tensor *c, tc_tensor *a, tc_tensor *b, tc_err *err) {
  return c && a && b ? keep(p, tc_where(c, a, b, err)) : NULL;
}

/* Each row's element of s at pos (a whole number, f64 or i64, [..., 1]);
 * clipped into the row (a row of NaN alone reads its first, and gives
 * NaN later). */
static tc_tensor *at_rows(pool *p, tc_tensor *s, tc_tensor *pos, tc_err *err) {
  tc_tensor *i = kcast(p, pos, TC_DT_I64, err);
  return i ? keep(p, tc_take_along_axis(s, i, s->ndim - 1, TC_MODE_CLIP, NULL, err)) : NULL;
}

/* quantile_rows over the first cnt (i64, [..., 1]) elements of each row
 * of s, those that are not NaN (NaN sorts last): the nan forms. The same
 * positions and operations, but the positions vary by row: tensors, their
 * elements gathered, and t's choice of formula a where. */
static tc_tensor *quantile_counted(pool *p, tc_tensor *s, tc_tensor *cnt, double q, int method, bool median,
                                   tc_err *err) {
  if (median) {
    tc_tensor *one = keep(p, wi(1, err)), *two = one ? keep(p, wi(2, err)) : NULL;
    tc_tensor *lo = kbin(p, TC_OP_FLOOR_DIV, kbin(p, TC_OP_SUB, cnt, one, err), two, err);
    tc_tensor *hi = kbin(p, TC_OP_FLOOR_DIV, lo ? cnt : NULL, two, err);
    tc_tensor *a = at_rows(p, s, hi ? lo : NULL, err), *b = at_rows(p, s, a ? hi : NULL, err);
    return middle(p, a, b, err);
  }
  /* v = q (cnt - 1), lo = floor(v), hi = min(lo + 1, cnt - 1), t = v - lo */
  tc_tensor *one = keep(p, wf(1, err)), *zero = one ? keep(p, wf(0, err)) : NULL;
  tc_tensor *half = zero ? keep(p, wf(0.5, err)) : NULL, *qs = half ? keep(p, wf(q, err)) : NULL;
  tc_tensor *n1 = kbin(p, TC_OP_SUB, kcast(p, qs ? cnt : NULL, TC_DT_F64, err), one, err);
  tc_tensor *v = kbin(p, TC_OP_MUL, n1, qs, err);
  tc_tensor *lo = kun(p, TC_OP_FLOOR, v, err);
  tc_tensor *hi = kbin(p, TC_OP_MINIMUM, kbin(p, TC_OP_ADD, lo, one, err), n1, err);
  tc_tensor *t = kbin(p, TC_OP_SUB, hi ? v : NULL, lo, err);
  tc_tensor *tpos = kbin(p, TC_OP_GREATER, t, zero, err);
  if (!tpos) return NULL;
  if (method == 1) return at_rows(p, s, lo, err);
  if (method == 2) return at_rows(p, s, kwhere(p, tpos, hi, lo, err), err);
  if (method == 3) return at_rows(p, s, kun(p, TC_OP_ROUND, v, err), err);   /* half to even, as nearbyint */
  if (method == 4 && !(t = kwhere(p, tpos, half, zero, err))) return NULL;
  tc_tensor *a = at_rows(p, s, lo, err), *b = at_rows(p, s, a ? hi : NULL, err);
  tc_tensor *df = kcast(p, kbin(p, TC_OP_SUB, b, a, err), TC_DT_F64, err);
  tc_tensor *af = kcast(p, df ? a : NULL, TC_DT_F64, err), *bf = kcast(p, af ? b : NULL, TC_DT_F64, err);
  tc_tensor *up = kbin(p, TC_OP_ADD, af, kbin(p, TC_OP_MUL, df, bf ? t : NULL, err), err);
  tc_tensor *down = kbin(p, TC_OP_SUB, bf, kbin(p, TC_OP_MUL, df, kbin(p, TC_OP_SUB, up ? one : NULL, t, err), err), err);
  return kwhere(p, kbin(p, TC_OP_GREATER_EQUAL, down ? t : NULL, half, err), down, up, err);
}

/* One quantile of the rows of s: of all n elements, or (cnt) of the
 * first cnt of each. */
static tc_tensor *quantile_of(tc_tensor *s, tc_tensor *cnt, double q, int method, bool median, tc_err *err) {
  pool p = {0};
  tc_tensor *r = cnt ? quantile_counted(&p, s, cnt, q, method, median, err) : quantile_rows(&p, s, q, method, median, err);
  return done(&p, r);
}

/* The quantiles asked for, scaled to [0, 1] (0.5 for the median), in *qv:
 * buf, or memory the caller frees when there are more than 64. */
static int quantile_qs(pool *p, tc_op op, tc_tensor *x, tc_tensor *q, double *buf, double **qv, int64_t *nq,
                       tc_err *err) {
  bool median = is_median(op);
  double scale = plain_of(op) == TC_OP_PERCENTILE ? 100 : 1;
  *nq = median ? 1 : tc_numel(q);
  tc_tensor *qh = median ? NULL : keep(p, tc_cast(q, TC_DT_F64, err));
  if (!median && !qh) return -1;
  *qv = *nq <= 64 ? buf : malloc(sizeof(double) * (size_t)*nq);
  if (!*qv) { *qv = buf; return tc_err_set(err, TC_E_OOM, (int)op, -1, "out of memory"); }
  double *v = *qv;
  if (median) v[0] = 0.5;
  else if (*nq && tc_tensor_to_host(qh, v, err) != 0) return -1;
  for (int64_t i = 0; i < *nq; i++) {
    if (!(v[i] >= 0 && v[i] <= scale)) return bad(err, op, x, "q must be in [0, %g]; it holds %g", scale, v[i]);
    v[i] /= scale;
  }
  return 0;
}

/* The kept axes of x (not in mask) and the shape they make: what a
 * quantile's reduction leaves. */
typedef struct { int nk; int64_t n, perm[TC_MAX_DIMS], kshape[TC_MAX_DIMS]; } kept_axes;

static kept_axes kept_of(const tc_tensor *x, const bool *mask) {
  kept_axes k = {.nk = 0, .n = 1};
  for (int i = 0; i < x->ndim; i++)
    if (!mask[i]) { k.perm[k.nk] = i; k.kshape[k.nk] = x->shape[i]; k.nk++; }
  for (int i = 0, j = k.nk; i < x->ndim; i++)
    if (mask[i]) { k.perm[j++] = i; k.n *= x->shape[i]; }
  return k;
}

/* x in dtype dt with the reduced axes moved last and merged into one of n
 * elements: [kshape..., n]. */
static tc_tensor *reduced_last(pool *p, tc_tensor *x, const kept_axes *ka, tc_dtype dt, tc_err *err) {
  tc_tensor *xf = keep(p, tc_cast(x, dt, err));
  tc_tensor *tp = xf ? keep(p, tc_transpose(xf, x->ndim, ka->perm, err)) : NULL;
  tc_tensor *cp = tp ? keep(p, tc_contiguous(tp, err)) : NULL;
  int64_t rshape[TC_MAX_DIMS + 1];
  memcpy(rshape, ka->kshape, sizeof(int64_t) * (size_t)ka->nk);
  rshape[ka->nk] = ka->n;
  return cp ? keep(p, tc_reshape(cp, ka->nk + 1, rshape, err)) : NULL;
}

/* The result's shape, q's then the kept dims (the median has no q), in
 * oshape; its dims, or -1 (the error set) when they are too many. */
static int result_dims(tc_op op, tc_tensor *x, tc_tensor *q, const kept_axes *ka, int64_t *oshape, tc_err *err) {
  int on = 0;
  if (!is_median(op))
    for (int i = 0; i < q->ndim; i++) oshape[on++] = q->shape[i];
  for (int i = 0; i < ka->nk; i++) oshape[on++] = ka->kshape[i];
  return on > TC_MAX_DIMS ? bad(err, op, x, "%s", "q and the kept dimensions make too many dimensions") : on;
}

/* The quantiles qv of the rows of rs (n > 0 long), stacked first, with
 * q's shape then the kept dims; a row holding NaN gives NaN, and of the
 * nan forms a row of NaN alone. */
static tc_tensor *quantiles_of_rows(pool *p, tc_op op, tc_tensor *x, tc_tensor *q, tc_tensor *rs, const kept_axes *ka,
                                    int meth, const double *qv, int64_t nq, tc_err *err) {
  bool median = is_median(op), skip = skips_nan(op, x);
  int nk = ka->nk;
  /* the positions read: each quantile's (quantile_rows) and the last (NaN);
   * the nan forms' vary by row, and sort the rows whole */
  int64_t n = ka->n, kb[64], *kth = 3 * nq + 1 <= 64 ? kb : malloc(sizeof(int64_t) * (size_t)(3 * nq + 1)), nkth = 0;
  for (int64_t i = 0; kth && i < nq; i++) {
    double v = qv[i] * (double)(n - 1);
    int64_t lo = (int64_t)floor(v);
    kth[nkth++] = median ? (n - 1) / 2 : lo;
    kth[nkth++] = median ? n / 2 : lo + 1 < n ? lo + 1 : n - 1;
    kth[nkth++] = median ? n / 2 : (int64_t)nearbyint(v);
  }
  if (kth) kth[nkth++] = n - 1;
  if (kth) qsort(kth, (size_t)nkth, sizeof *kth, cmp_i64);
  int64_t u = 0;
  for (int64_t i = 0; i < nkth; i++)
    if (u == 0 || kth[i] != kth[u - 1]) kth[u++] = kth[i];
  nkth = u * SELECT_FEW <= n && !skip ? u : 0;
  tc_tensor *s = keep(p, sort_last(TC_OP_SORT, rs, nk, false, kth, nkth, err));
  if (kth != kb) free(kth);
  /* the nan forms: each row's count of numbers */
  tc_tensor *cnt = NULL;
  if (s && skip) {
    tc_axes last = {.n = 1, .axis = {nk}};
    tc_tensor *isn = keep(p, tc_unary(TC_OP_ISNAN, s, err));
    tc_tensor *nnan = isn ? keep(p, tc_reduce(TC_OP_COUNT_NONZERO, isn, &last, true, err)) : NULL;
    cnt = kbin(p, TC_OP_SUB, nnan ? keep(p, wi(n, err)) : NULL, nnan, err);
    if (!cnt) return NULL;
  }
  tc_tensor **pp = s ? calloc((size_t)(nq ? nq : 1), sizeof(tc_tensor *)) : NULL;
  if (!pp) {
    if (s) tc_err_set(err, TC_E_OOM, (int)op, -1, "out of memory");
    return NULL;
  }
  bool ok = true;
  for (int64_t i = 0; i < nq && ok; i++) ok = (pp[i] = quantile_of(s, cnt, qv[i], meth, median, err)) != NULL;
  tc_tensor *st = ok && nq > INT32_MAX ? NULL : ok ? keep(p, tc_stack((int)nq, pp, 0, err)) : NULL;
  for (int64_t i = 0; i < nq; i++) tc_tensor_free(pp[i]);
  free(pp);
  /* the rows without an answer: NaN sorts last, so a row holds one when
   * its last element is; of the nan forms, a row whose count is 0 */
  tc_tensor *res = st;
  if (st && tc_dtype_class(rs->dtype) == TC_CLASS_FLT) {
    tc_tensor *none = skip ? kbin(p, TC_OP_EQUAL, cnt, keep(p, wi(0, err)), err)
                           : kun(p, TC_OP_ISNAN, keep(p, narrow(s, nk, ka->n - 1, 1, err)), err);
    res = kwhere(p, none, none ? keep(p, tc_scalar_f64(NAN, true, err)) : NULL, st, err);
  }
  /* [nq, ..., 1] to q's shape and the kept dims */
  int64_t oshape[2 * TC_MAX_DIMS];
  int on = res ? result_dims(op, x, q, ka, oshape, err) : -1;
  return on >= 0 ? keep(p, tc_reshape(res, on, oshape, err)) : NULL;
}

/* res with the reduced axes back as size 1, after q's dims. */
static tc_tensor *keep_reduced_dims(pool *p, tc_op op, tc_tensor *x, tc_tensor *q, const bool *mask, tc_tensor *res,
                                    tc_err *err) {
  int qd = is_median(op) ? 0 : q->ndim, on = 0;
  int64_t oshape[2 * TC_MAX_DIMS];
  for (int i = 0; i < qd; i++) oshape[on++] = q->shape[i];
  for (int i = 0; i < x->ndim; i++) oshape[on++] = mask[i] ? 1 : x->shape[i];
  if (on > TC_MAX_DIMS) { bad(err, op, x, "%s", "q and the kept dimensions make too many dimensions"); return NULL; }
  return keep(p, tc_reshape(res, on, oshape, err));
}

static tc_tensor *quantile_in(pool *p, tc_op op, tc_tensor *x, tc_tensor *q, const bool *mask, int meth,
                              const double *qv, int64_t nq, bool keepdims, tc_err *err) {
  bool median = is_median(op);
  kept_axes ka = kept_of(x, mask);
  /* sorted in x's dtype for the selecting methods, else in the op's
   * (floats their own, integers and bool f64) */
  tc_dtype k = !median && method_selects(meth) ? x->dtype : tc_op_kernel_dtype(op, x->dtype);
  /* zero elements: NaN for the median (as NumPy) and, as for a slice of
   * NaN alone, for the nan forms, in a dtype that holds NaN */
  if (ka.n == 0 && !((median || plain_of(op) != op) && tc_dtype_class(k) == TC_CLASS_FLT)) {
    bad(err, op, x, "%s", "cannot take a quantile of zero elements");
    return NULL;
  }
  tc_tensor *rs = reduced_last(p, x, &ka, k, err), *res;
  if (!rs) return NULL;
  if (ka.n == 0) {
    int64_t oshape[2 * TC_MAX_DIMS];
    int on = result_dims(op, x, q, &ka, oshape, err);
    tc_tensor *nan = on >= 0 ? keep(p, tc_scalar_f64(NAN, false, err)) : NULL;
    res = nan ? keep(p, tc_full(on, oshape, nan, (int)k, err)) : NULL;
  } else {
    res = quantiles_of_rows(p, op, x, q, rs, &ka, meth, qv, nq, err);
  }
  return res && keepdims ? keep_reduced_dims(p, op, x, q, mask, res, err) : res;
}

tc_tensor *tc_quantile(tc_op op, tc_tensor *x, tc_tensor *q, const tc_axes *axes, const char *method, bool keepdims,
                       tc_err *err) {
  bool mask[TC_MAX_DIMS];
  if (tc_axes_mask(axes, x->ndim, mask, op, err) != 0) return NULL;
  int meth = method_id(method);
  if (meth < 0) {
    bad(err, op, x, "method must be linear, lower, higher, nearest or midpoint, not \"%s\"", method);
    return NULL;
  }
  pool p = {0};
  double qbuf[64], *qv = qbuf;
  int64_t nq = 0;
  tc_tensor *res = NULL;
  if (quantile_qs(&p, op, x, q, qbuf, &qv, &nq, err) == 0)
    res = quantile_in(&p, op, x, q, mask, meth, qv, nq, keepdims, err);
  if (qv != qbuf) free(qv);
  if (res) res->weak = false;
  return done(&p, res);
}

/* ---- comparison ---- */
tc_tensor *tc_isclose(tc_op op, tc_tensor *a, tc_tensor *b, double rtol, double atol, bool equal_nan, tc_err *err) {
  tc_dtype dt;
  if (tc_result_dtype2(op, a, b, &dt, err) != 0) return NULL;
  tc_dtype k = tc_op_kernel_dtype(TC_OP_SQRT, dt);   /* the FLOAT rule: ints and bool in f64 */
  pool p = {0};
  tc_tensor *x = keep(&p, tc_cast(a, k, err)), *y = x ? keep(&p, tc_cast(b, k, err)) : NULL;
  tc_tensor *d = y ? keep(&p, tc_binary(TC_OP_SUB, x, y, err)) : NULL;
  tc_tensor *ad = d ? keep(&p, tc_unary(TC_OP_ABS, d, err)) : NULL;
  tc_tensor *ay = ad ? keep(&p, tc_unary(TC_OP_ABS, y, err)) : NULL;
  tc_tensor *rt = ay ? keep(&p, wf(rtol, err)) : NULL, *at = rt ? keep(&p, wf(atol, err)) : NULL;
  tc_tensor *ry = at ? keep(&p, tc_binary(TC_OP_MUL, rt, ay, err)) : NULL;
  tc_tensor *tol = ry ? keep(&p, tc_binary(TC_OP_ADD, at, ry, err)) : NULL;
  tc_tensor *close = tol ? keep(&p, tc_binary(TC_OP_LESS_EQUAL, ad, tol, err)) : NULL;
  tc_tensor *fx = close ? keep(&p, tc_unary(TC_OP_ISFINITE, x, err)) : NULL;
  tc_tensor *fy = fx ? keep(&p, tc_unary(TC_OP_ISFINITE, y, err)) : NULL;
  tc_tensor *fin = fy ? keep(&p, tc_binary(TC_OP_LOGICAL_AND, fx, fy, err)) : NULL;
  tc_tensor *eq = fin ? keep(&p, tc_binary(TC_OP_EQUAL, x, y, err)) : NULL;
  tc_tensor *r = eq ? keep(&p, tc_where(fin, close, eq, err)) : NULL;
  if (r && equal_nan) {
    tc_tensor *nx = keep(&p, tc_unary(TC_OP_ISNAN, x, err)), *ny = nx ? keep(&p, tc_unary(TC_OP_ISNAN, y, err)) : NULL;
    tc_tensor *both = ny ? keep(&p, tc_binary(TC_OP_LOGICAL_AND, nx, ny, err)) : NULL;
    r = both ? keep(&p, tc_binary(TC_OP_LOGICAL_OR, r, both, err)) : NULL;
  }
  if (r && op == TC_OP_ALLCLOSE) {
    tc_axes all = {.all = true};
    r = keep(&p, tc_reduce(TC_OP_ALL, r, &all, false, err));
  }
  if (r) r->weak = false;
  return done(&p, r);
}

tc_tensor *tc_array_equal(tc_tensor *a, tc_tensor *b, tc_err *err) {
  bool same = a->ndim == b->ndim;
  for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
  if (!same) return tc_scalar_bool(false, err);
  pool p = {0};
  tc_axes all = {.all = true};
  tc_tensor *eq = keep(&p, tc_binary(TC_OP_EQUAL, a, b, err));
  return done(&p, eq ? keep(&p, tc_reduce(TC_OP_ALL, eq, &all, false, err)) : NULL);
}

/* ---- ML helpers ---- */
tc_tensor *tc_softmax(tc_op op, tc_tensor *x, int64_t axis, tc_err *err) {
  int a;
  if (norm_axis(axis, x->ndim, op, &a, err) != 0) return NULL;
  pool p = {0};
  tc_dtype k = tc_op_kernel_dtype(op, x->dtype);
  tc_tensor *xf = keep(&p, tc_cast(x, k, err));
  if (!xf || x->shape[a] == 0) {
    tc_tensor *r = xf ? keep(&p, tc_clone(xf, err)) : NULL;
    if (r) r->weak = false;
    return done(&p, r);
  }
  tc_axes ax = {.all = false, .n = 1, .axis = {a}};
  tc_tensor *m = keep(&p, tc_reduce(TC_OP_REDUCE_MAX, xf, &ax, true, err));
  /* an infinite max (a row of -inf, or a +inf) shifts by 0: inf - inf would be NaN */
  tc_tensor *fm = m ? keep(&p, tc_unary(TC_OP_ISFINITE, m, err)) : NULL;
  tc_tensor *z = fm ? keep(&p, wf(0, err)) : NULL;
  tc_tensor *mm = z ? keep(&p, tc_where(fm, m, z, err)) : NULL;
  tc_tensor *d = mm ? keep(&p, tc_binary(TC_OP_SUB, xf, mm, err)) : NULL;
  tc_tensor *e = d ? keep(&p, tc_unary(TC_OP_EXP, d, err)) : NULL;
  tc_tensor *r = NULL;
  if (e && op == TC_OP_SOFTMAX) {
    tc_tensor *s = keep(&p, tc_reduce(TC_OP_REDUCE_SUM, e, &ax, true, err));
    r = s ? keep(&p, tc_binary(TC_OP_DIV, e, s, err)) : NULL;
  } else if (e) {
    /* log(sum) as log(c) + log1p(t / c): c the count of terms exp(0) = 1
     * (the largest), t the sum of the others, so the largest element's
     * result, -log1p(t / c) when it is alone, keeps its relative accuracy
     * however small it is (log(1 + t) would leave only t's absolute one) */
    tc_tensor *z0 = keep(&p, wf(0, err));
    tc_tensor *top = z0 ? keep(&p, tc_binary(TC_OP_EQUAL, d, z0, err)) : NULL;
    tc_tensor *rest = top ? keep(&p, tc_where(top, z0, e, err)) : NULL;
    tc_tensor *t = rest ? keep(&p, tc_reduce(TC_OP_REDUCE_SUM, rest, &ax, true, err)) : NULL;
    tc_tensor *ci = t ? keep(&p, tc_reduce(TC_OP_COUNT_NONZERO, top, &ax, false, err)) : NULL;
    tc_tensor *ck = ci ? keep(&p, tc_expand_dims(ci, a, err)) : NULL;
    tc_tensor *c = ck ? keep(&p, tc_cast(ck, k, err)) : NULL;
    tc_tensor *lc = c ? keep(&p, tc_unary(TC_OP_LOG, c, err)) : NULL;
    tc_tensor *tc = lc ? keep(&p, tc_binary(TC_OP_DIV, t, c, err)) : NULL;
    tc_tensor *l1 = tc ? keep(&p, tc_unary(TC_OP_LOG1P, tc, err)) : NULL;
    tc_tensor *ls = l1 ? keep(&p, tc_binary(TC_OP_ADD, lc, l1, err)) : NULL;
    r = ls ? keep(&p, tc_binary(TC_OP_SUB, d, ls, err)) : NULL;
  }
  if (r) r->weak = false;
  return done(&p, r);
}

/* ---- building ---- */
tc_tensor *tc_like(tc_op op, tc_tensor *x, tc_tensor *value, int dtype, tc_err *err) {
  tc_dtype dt = dtype >= 0 ? (tc_dtype)dtype : x->dtype;
  if (op == TC_OP_ZEROS_LIKE) return tc_zeros(x->ndim, x->shape, dt, err);
  if (op == TC_OP_ONES_LIKE) return tc_ones(x->ndim, x->shape, dt, err);
  return tc_full(x->ndim, x->shape, value, (int)dt, err);
}

tc_tensor *tc_repeat(tc_tensor *x, int64_t n, bool has_axis, int64_t axis, tc_err *err) {
  tc_op op = TC_OP_REPEAT;
  if (n < 0) { bad(err, op, x, "n must be >= 0; it is %lld", (long long)n); return NULL; }
  pool p = {0};
  tc_tensor *src = has_axis ? x : keep(&p, tc_flatten(x, err));
  int a;
  if (!src || norm_axis(has_axis ? axis : 0, src->ndim, op, &a, err) != 0) return done(&p, NULL);
  int64_t len = src->shape[a], total;
  if (__builtin_mul_overflow(len, n, &total)) {
    bad(err, op, x, "%s", "the result would have more than 2^63 elements");
    return done(&p, NULL);
  }
  tc_tensor *pos = keep(&p, iota(total, err)), *nn = pos ? keep(&p, wi(n ? n : 1, err)) : NULL;
  tc_tensor *idx = nn ? keep(&p, tc_binary(TC_OP_FLOOR_DIV, pos, nn, err)) : NULL;
  return done(&p, idx ? keep(&p, tc_take(src, idx, a, TC_MODE_ERROR, NULL, err)) : NULL);
}

tc_tensor *tc_tile(tc_tensor *x, int nreps, const int64_t *reps, tc_err *err) {
  tc_op op = TC_OP_TILE;
  int d = x->ndim > nreps ? x->ndim : nreps;
  if (2 * d > TC_MAX_DIMS) { bad(err, op, x, "tile works on at most %d dimensions", TC_MAX_DIMS / 2); return NULL; }
  int64_t r[TC_MAX_DIMS], xs[TC_MAX_DIMS], shp[TC_MAX_DIMS], str[TC_MAX_DIMS], out[TC_MAX_DIMS];
  for (int i = 0; i < d; i++) {
    int ri = i - (d - nreps), xi = i - (d - x->ndim);
    r[i] = ri >= 0 ? reps[ri] : 1;
    xs[i] = xi >= 0 ? x->shape[xi] : 1;
    if (r[i] < 0) { bad(err, op, x, "reps must be >= 0; one is %lld", (long long)r[i]); return NULL; }
    if (__builtin_mul_overflow(r[i], xs[i], &out[i])) { bad(err, op, x, "%s", "the result is too large"); return NULL; }
  }
  pool p = {0};
  tc_tensor *m = keep(&p, tc_operand(x, x->dtype, err));
  tc_tensor *c = m ? keep(&p, tc_contiguous(m, err)) : NULL;
  if (!c) return done(&p, NULL);
  int64_t st = 1;
  for (int i = d - 1; i >= 0; i--) {
    shp[2 * i] = r[i];
    str[2 * i] = 0;
    shp[2 * i + 1] = xs[i];
    str[2 * i + 1] = st;
    st *= xs[i] ? xs[i] : 1;
  }
  tc_tensor *v = keep(&p, tc_view(c, 2 * d, shp, str, c->offset, err));
  tc_tensor *cc = v ? keep(&p, tc_contiguous(v, err)) : NULL;
  return done(&p, cc ? keep(&p, tc_reshape(cc, d, out, err)) : NULL);
}

tc_tensor *tc_pad_pairs(tc_tensor *x, int nw, const int64_t *w, tc_tensor *value, tc_err *err) {
  tc_op op = TC_OP_PAD;
  if (nw != 2 && nw != 2 * x->ndim) {
    bad(err, op, x, "widths must be [before, after] or one such pair per axis (%d numbers); it has %d", 2 * x->ndim, nw);
    return NULL;
  }
  int64_t shape[TC_MAX_DIMS], lo[TC_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    int64_t b = w[nw == 2 ? 0 : 2 * i], e = w[nw == 2 ? 1 : 2 * i + 1];
    if (b < 0 || e < 0) { bad(err, op, x, "widths must be >= 0; one is %lld", (long long)(b < 0 ? b : e)); return NULL; }
    if (__builtin_add_overflow(x->shape[i], b, &shape[i]) || __builtin_add_overflow(shape[i], e, &shape[i])) {
      bad(err, op, x, "%s", "the result is too large");
      return NULL;
    }
    lo[i] = b;
  }
  pool p = {0};
  tc_tensor *out = keep(&p, tc_full(x->ndim, shape, value, (int)x->dtype, err));
  tc_tensor *m = out ? keep(&p, tc_operand(x, x->dtype, err)) : NULL;
  if (!m) return done(&p, NULL);
  int64_t off = out->offset;
  for (int i = 0; i < x->ndim; i++) off += lo[i] * out->strides[i];
  tc_tensor *in = keep(&p, tc_view(out, x->ndim, x->shape, out->strides, off, err));
  if (!in) return done(&p, NULL);
  tc_call call = {.kind = TC_CALL_COPY, .op = op, .dtype = x->dtype, .nin = 1, .in = {m}, .out = in};
  if (tc_numel(x) && run_call(&call, op, err) != 0) return done(&p, NULL);
  out->weak = false;
  return done(&p, out);
}

/* numpy.pad's pad_width: integers that broadcast to [ndim, 2] (n; [n];
 * [before, after]; [[before, after]]; one [n] or [before, after] per axis),
 * or tcalc's flat list of one pair per axis ([b0, a0, b1, a1, ...]). Into
 * w[2 * axis + 0 before, 1 after]. */
static int pad_widths(const tc_tensor *x, tc_tensor *widths, int64_t *w, tc_err *err) {
  tc_op op = TC_OP_PAD;
  int nd = x->ndim, wn = widths->ndim;
  const int64_t *ws = widths->shape;
  bool flat = wn == 1 && ws[0] == 2 * nd && nd > 1;
  bool fits = flat || wn == 0 || (wn == 1 && (ws[0] == 1 || ws[0] == 2)) ||
              (wn == 2 && (ws[0] == 1 || ws[0] == nd) && (ws[1] == 1 || ws[1] == 2));
  if (tc_dtype_class(widths->dtype) != TC_CLASS_INT || !fits) {
    char sh[64] = "";
    for (int i = 0, k = 0; i < wn && k < (int)sizeof sh - 24; i++)
      k += snprintf(sh + k, sizeof sh - (size_t)k, "%s%lld", i ? "," : "", (long long)ws[i]);
    return bad(err, op, x,
               "widths must be integers that broadcast to [%d, 2]: n, [before, after], or one [before, after] "
               "per axis; they are %s[%s]", nd, tc_dtype_name(widths->dtype), sh);
  }
  int64_t v[2 * TC_MAX_DIMS];
  tc_tensor *c = tc_cast(widths, TC_DT_I64, err);
  int rc = c ? tc_tensor_to_host(c, v, err) : -1;
  tc_tensor_free(c);
  if (rc != 0) return -1;
  for (int i = 0; i < nd; i++)
    for (int j = 0; j < 2; j++) {
      int64_t cols = wn == 0 ? 1 : ws[wn - 1], row = wn == 2 && ws[0] > 1 ? i : 0, col = cols == 1 ? 0 : j;
      int64_t e = flat ? v[2 * i + j] : v[row * cols + col];
      if (e < 0 && tc_dtype_is_unsigned(widths->dtype)) return bad(err, op, x, "%s", "the result is too large");
      if (e < 0) return bad(err, op, x, "widths must be >= 0; one is %lld", (long long)e);
      w[2 * i + j] = e;
    }
  return 0;
}

/* numpy.pad's modes beyond constant: each axis read through an index of
 * its padded positions j - before (j from 0), folded into [0, n). */
typedef enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC, PAD_WRAP, PAD_MODES } pad_mode;
static const char *const pad_mode_names[PAD_MODES] = {"constant", "edge", "reflect", "symmetric", "wrap"};

static tc_tensor *pad_index(pool *p, pad_mode m, int64_t n, int64_t before, int64_t total, tc_err *err) {
  tc_tensor *j0 = keep(p, iota(total, err)), *b = j0 ? keep(p, wi(before, err)) : NULL;
  tc_tensor *j = b ? keep(p, tc_binary(TC_OP_SUB, j0, b, err)) : NULL;
  if (!j) return NULL;
  if (m == PAD_WRAP) return keep(p, tc_binary(TC_OP_MOD, j, keep(p, wi(n, err)), err));
  if (m == PAD_EDGE || n == 1) return keep(p, tc_clip(j, keep(p, wi(0, err)), keep(p, wi(n - 1, err)), err));
  /* reflect: period 2(n - 1), k -> (n - 1) - |k - (n - 1)|; symmetric:
     period 2n, k -> ((2n - 1) - |2k - (2n - 1)|) / 2 (exact: odd - odd) */
  bool sym = m == PAD_SYMMETRIC;
  int64_t period = sym ? 2 * n : 2 * (n - 1), mid = sym ? 2 * n - 1 : n - 1;
  tc_tensor *k = keep(p, tc_binary(TC_OP_MOD, j, keep(p, wi(period, err)), err));
  if (k && sym) k = keep(p, tc_binary(TC_OP_MUL, k, keep(p, wi(2, err)), err));
  tc_tensor *d = k ? keep(p, tc_binary(TC_OP_SUB, k, keep(p, wi(mid, err)), err)) : NULL;
  tc_tensor *ad = d ? keep(p, tc_unary(TC_OP_ABS, d, err)) : NULL;
  tc_tensor *r = ad ? keep(p, tc_binary(TC_OP_SUB, keep(p, wi(mid, err)), ad, err)) : NULL;
  return r && sym ? keep(p, tc_binary(TC_OP_FLOOR_DIV, r, keep(p, wi(2, err)), err)) : r;
}

tc_tensor *tc_pad(tc_tensor *x, tc_tensor *widths, tc_tensor *value, const char *mode, tc_err *err) {
  tc_op op = TC_OP_PAD;
  int m = 0;
  while (m < PAD_MODES && strcmp(mode, pad_mode_names[m])) m++;
  if (m == PAD_MODES) {
    bad(err, op, x, "mode must be \"constant\", \"edge\", \"reflect\", \"symmetric\" or \"wrap\"; it is \"%.40s\"", mode);
    return NULL;
  }
  if (m != PAD_CONSTANT && value) {
    bad(err, op, x, "value= is only for mode=\"constant\" (mode is \"%s\")", mode);
    return NULL;
  }
  int64_t w[2 * TC_MAX_DIMS];
  if (pad_widths(x, widths, w, err) != 0) return NULL;
  pool p = {0};
  if (m == PAD_CONSTANT) {
    tc_tensor *zero = value ? value : keep(&p, wi(0, err));
    return done(&p, zero ? keep(&p, tc_pad_pairs(x, 2 * x->ndim, w, zero, err)) : NULL);
  }
  tc_tensor *r = x;
  for (int i = 0; i < x->ndim && r; i++) {
    int64_t n = x->shape[i], total;
    if (w[2 * i] == 0 && w[2 * i + 1] == 0) continue;
    if (n == 0) {
      bad(err, op, x, "axis %d is empty: only mode=\"constant\" can pad it", i);
      return done(&p, NULL);
    }
    if (__builtin_add_overflow(n, w[2 * i], &total) || __builtin_add_overflow(total, w[2 * i + 1], &total)) {
      bad(err, op, x, "%s", "the result is too large");
      return done(&p, NULL);
    }
    tc_tensor *idx = pad_index(&p, (pad_mode)m, n, w[2 * i], total, err);
    r = idx ? keep(&p, tc_take(r, idx, i, TC_MODE_ERROR, NULL, err)) : NULL;
  }
  if (r == x) r = keep(&p, tc_clone(x, err));
  if (r) r->weak = false;
  return done(&p, r);
}

tc_tensor *tc_roll(tc_tensor *x, int64_t shift, bool has_axis, int64_t axis, tc_err *err) {
  tc_op op = TC_OP_ROLL;
  pool p = {0};
  tc_tensor *src = has_axis ? x : keep(&p, tc_flatten(x, err));
  int a;
  if (!src || norm_axis(has_axis ? axis : 0, src->ndim, op, &a, err) != 0) return done(&p, NULL);
  int64_t len = src->shape[a];
  tc_tensor *r;
  if (len == 0) r = keep(&p, tc_clone(src, err));
  else {
    int64_t s = shift % len;
    if (s < 0) s += len;
    tc_tensor *tail = keep(&p, narrow(src, a, len - s, s, err));
    tc_tensor *head = tail ? keep(&p, narrow(src, a, 0, len - s, err)) : NULL;
    tc_tensor *parts[2] = {tail, head};
    r = head ? keep(&p, tc_concat(2, parts, a, err)) : NULL;
  }
  if (r && !has_axis) r = keep(&p, tc_reshape(r, x->ndim, x->shape, err));
  if (r) r->weak = false;
  return done(&p, r);
}

/* NumPy's around: floats rint(x * 10^d) / 10^d (d < 0: rint(x / 10^-d) *
 * 10^-d) in their own dtype; integers are the identity for d > 0 and for d
 * < 0 go through f64 and back, as NumPy's; bool computes in f64 (as round). */
tc_tensor *tc_round_decimals(tc_tensor *x, int64_t decimals, tc_err *err) {
  tc_op op = TC_OP_ROUND;
  tc_class cls = tc_dtype_class(x->dtype);
  if (decimals > 308 || (cls == TC_CLASS_INT && decimals > 0)) {   /* nothing to round (NumPy: NaN past 308) */
    tc_tensor *c = tc_cast(x, tc_op_kernel_dtype(op, x->dtype), err);
    tc_tensor *r = c ? tc_clone(c, err) : NULL;
    tc_tensor_free(c);
    if (r) r->weak = x->weak;
    return r;
  }
  if (decimals < -308) decimals = -308;   /* 10^309 overflows; every finite value rounds to 0 from here */
  pool p = {0};
  tc_dtype k = cls == TC_CLASS_FLT ? x->dtype : TC_DT_F64;
  tc_tensor *xf = keep(&p, tc_cast(x, k, err));
  tc_tensor *f = xf ? keep(&p, tc_scalar_f64(pow(10.0, (double)(decimals > 0 ? decimals : -decimals)), true, err)) : NULL;
  tc_tensor *y = f ? keep(&p, tc_binary(decimals > 0 ? TC_OP_MUL : TC_OP_DIV, xf, f, err)) : NULL;
  tc_tensor *ry = y ? keep(&p, tc_unary(op, y, err)) : NULL;
  tc_tensor *r = ry ? keep(&p, tc_binary(decimals > 0 ? TC_OP_DIV : TC_OP_MUL, ry, f, err)) : NULL;
  if (r && cls == TC_CLASS_INT) {   /* back through i64, so a small dtype wraps as NumPy's cast does */
    r = keep(&p, tc_cast(r, TC_DT_I64, err));
    if (r) r = keep(&p, tc_cast(r, x->dtype, err));
  }
  if (r) r->weak = x->weak;
  return done(&p, r);
}

/* ---- capabilities ---- */
/* A nan form needs its plain form and, where NaN is looked for (floats;
 * every dtype of nanvar and nanstd, which compute in floats), what it
 * adds: the NaN test and where, the count of NaNs (the forms that skip
 * them), and of the quantiles the gather at positions computed in f64. */
static bool nan_form_supported(tc_op op, tc_op plain, double fill, tc_dtype dt, tc_engine_id eid) {
  const tc_engine *e = tc_engines[eid];
  tc_dtype k = tc_op_kernel_dtype(op, dt), c = k == TC_DT_F16 || k == TC_DT_BF16 ? TC_DT_F32 : k;
  bool var = plain == TC_OP_VAR || plain == TC_OP_STD;
  tc_dtype m = var ? c : dt;   /* the dtype NaN is looked for in */
  if (!tc_op_supported(plain, dt, eid)) return false;
  if (!var && tc_dtype_class(dt) != TC_CLASS_FLT) return true;   /* the plain form's way */
  if (!tc_op_supported(TC_OP_ISNAN, m, eid) || !tc_op_supported(TC_OP_WHERE, m, eid)) return false;
  if (fill != TC_NAN_SKIP) return true;
  if (!tc_op_supported(TC_OP_COUNT_NONZERO, TC_DT_BOOL, eid) || !tc_cast_supported(e, TC_DT_I64, TC_DT_F64)) return false;
  if (var)
    return tc_op_supported(TC_OP_NANMEAN, c, eid) && tc_op_supported(TC_OP_LESS_EQUAL, TC_DT_F64, eid) &&
           tc_cast_supported(e, TC_DT_F64, c);
  return tc_op_supported(TC_OP_TAKE_ALONG_AXIS, dt, eid) && tc_op_supported(TC_OP_FLOOR, TC_DT_F64, eid) &&
         tc_op_supported(TC_OP_ROUND, TC_DT_F64, eid) && tc_op_supported(TC_OP_MINIMUM, TC_DT_F64, eid) &&
         tc_op_supported(TC_OP_FLOOR_DIV, TC_DT_I64, eid) && tc_cast_supported(e, TC_DT_F64, TC_DT_I64);
}

/* What each function needs of an engine: the ops it is built from (in the
 * operand's dtype, or in the dtype the function computes in) and its calls. */
bool tc_fn_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  const tc_engine *e = tc_engines[eid];
  if (!e) return false;
  double fill;
  int plain = tc_op_nan_form(op, &fill);
  if (plain >= 0) return nan_form_supported(op, (tc_op)plain, fill, dt, eid);
  tc_dtype k = tc_op_kernel_dtype(op, dt);
  tc_dtype f = tc_op_kernel_dtype(TC_OP_SQRT, dt);
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT, conv = tc_cast_supported(e, dt, k);
  switch (op) {
  case TC_OP_CUMSUM: case TC_OP_CUMPROD: case TC_OP_CUMMAX: case TC_OP_CUMMIN:
    return conv && call_ok(eid, TC_CALL_SCAN, op, k);
  case TC_OP_DIFF:
    return tc_op_supported(dt == TC_DT_BOOL ? TC_OP_NOT_EQUAL : TC_OP_SUB, dt, eid);
  case TC_OP_SORT: case TC_OP_ARGSORT: case TC_OP_TOPK: case TC_OP_ARGTOPK:
    return call_ok(eid, TC_CALL_SORT, TC_OP_SORT, dt) && tc_op_supported(TC_OP_TRANSPOSE, dt, eid);
  case TC_OP_SEARCHSORTED:
    return call_ok(eid, TC_CALL_SORT, op, dt);
  case TC_OP_UNIQUE: case TC_OP_UNIQUE_COUNTS:
    return call_ok(eid, TC_CALL_SORT, TC_OP_SORT, dt) && tc_op_supported(TC_OP_NOT_EQUAL, dt, eid) &&
           tc_op_supported(TC_OP_TAKE, dt, eid) && tc_op_supported(TC_OP_CONCAT, TC_DT_BOOL, eid);
  case TC_OP_ARGWHERE:
    return tc_op_supported(TC_OP_NOT_EQUAL, dt, eid) && tc_op_supported(TC_OP_FLOOR_DIV, TC_DT_I64, eid) &&
           tc_op_supported(TC_OP_TAKE, TC_DT_I64, eid);
  case TC_OP_BINCOUNT:
    return !flt && tc_op_supported(TC_OP_SCATTER, TC_DT_I64, eid) && tc_cast_supported(e, dt, TC_DT_I64);
  case TC_OP_HISTOGRAM:
    return dt != TC_DT_BOOL && tc_cast_supported(e, dt, TC_DT_F64) && tc_op_supported(TC_OP_SCATTER, TC_DT_I64, eid) &&
           tc_op_supported(TC_OP_TAKE, TC_DT_F64, eid);
  case TC_OP_VAR: case TC_OP_STD:
    return tc_cast_supported(e, dt, f) && tc_op_supported(TC_OP_MEAN, f, eid) && tc_op_supported(TC_OP_SQRT, f, eid);
  case TC_OP_MEDIAN:
    return conv && call_ok(eid, TC_CALL_SORT, TC_OP_SORT, k) && tc_op_supported(TC_OP_WHERE, k, eid);
  case TC_OP_QUANTILE: case TC_OP_PERCENTILE:   /* the selecting methods sort dt, the others k and finish in f64 */
    return conv && call_ok(eid, TC_CALL_SORT, TC_OP_SORT, k) && call_ok(eid, TC_CALL_SORT, TC_OP_SORT, dt) &&
           tc_op_supported(TC_OP_WHERE, k, eid) && tc_op_supported(TC_OP_SUB, k, eid) &&
           tc_cast_supported(e, k, TC_DT_F64) && tc_op_supported(TC_OP_MUL, TC_DT_F64, eid) &&
           tc_op_supported(TC_OP_WHERE, TC_DT_F64, eid);
  case TC_OP_ISCLOSE: case TC_OP_ALLCLOSE:
    return tc_cast_supported(e, dt, f) && tc_op_supported(TC_OP_LESS_EQUAL, f, eid) &&
           tc_op_supported(TC_OP_WHERE, TC_DT_BOOL, eid) && tc_op_supported(TC_OP_ISFINITE, f, eid);
  case TC_OP_ARRAY_EQUAL:
    return tc_op_supported(TC_OP_EQUAL, dt, eid) && tc_op_supported(TC_OP_ALL, TC_DT_BOOL, eid);
  case TC_OP_SOFTMAX: case TC_OP_LOG_SOFTMAX:
    return conv && tc_op_supported(TC_OP_EXP, k, eid) && tc_op_supported(TC_OP_LOG, k, eid) &&
           tc_op_supported(TC_OP_REDUCE_MAX, k, eid) && tc_op_supported(TC_OP_REDUCE_SUM, k, eid);
  case TC_OP_ZEROS_LIKE: case TC_OP_ONES_LIKE: case TC_OP_FULL_LIKE:
    return tc_op_supported(TC_OP_FULL, dt, eid);
  case TC_OP_REPEAT:
    return tc_op_supported(TC_OP_TAKE, dt, eid);
  case TC_OP_TILE: case TC_OP_PAD: case TC_OP_ROLL:
    return tc_op_supported(TC_OP_CONCAT, dt, eid) && tc_op_supported(TC_OP_FULL, dt, eid);
  default:
    return false;
  }
}
