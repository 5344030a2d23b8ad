/* Linear algebra (SPEC 12): solve, inv, det, cholesky, eigvalsh, svdvals,
 * pinv on the engine's TC_CALL_LINALG; matrix_rank and norm built from
 * svdvals and the elementwise and reduction ops. Shapes and dtypes are
 * settled here: the engine sees a contiguous stack [B, m, n] in f32 or f64
 * (i64 for an exact integer det). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "linalg.h"

/* The dtype a matrix function computes in: f32/f64 as they are, f16/bf16
 * in f32, ints and bool in f64 (det: i64, exactly). */
static tc_dtype la_kernel_dtype(tc_op op, tc_dtype dt) {
  if (tc_dtype_class(dt) != TC_CLASS_FLT) return op == TC_OP_DET ? TC_DT_I64 : TC_DT_F64;
  return dt == TC_DT_F64 ? TC_DT_F64 : TC_DT_F32;
}

/* The dtype of the result: f16/bf16 round back, ints give f64 (det: i64). */
static tc_dtype la_result_dtype(tc_op op, tc_dtype dt) {
  return tc_dtype_class(dt) == TC_CLASS_FLT ? dt : la_kernel_dtype(op, dt);
}

static bool call_ok(const tc_engine *e, tc_op op, tc_dtype k) {
  tc_call c = {.kind = TC_CALL_LINALG, .op = op, .dtype = k};
  return e->supports(&c);
}

bool tc_matfn_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  const tc_engine *e = tc_engines[eid];
  if (!e) return false;
  tc_dtype k = la_kernel_dtype(op, dt);
  bool conv = tc_cast_supported(e, dt, k) && tc_cast_supported(e, k, la_result_dtype(op, dt));
  switch (op) {
  case TC_OP_EINSUM:   /* batched matmul, the reductions and copies */
    return tc_linalg_supported(TC_OP_MATMUL, dt == TC_DT_BOOL ? TC_DT_I64 : dt, eid) &&
           tc_op_supported(TC_OP_REDUCE_SUM, dt, eid);
  case TC_OP_MATRIX_RANK:
    return conv && call_ok(e, TC_OP_SVDVALS, k) && tc_op_supported(TC_OP_COUNT_NONZERO, TC_DT_BOOL, eid);
  case TC_OP_NORM:   /* abs, mul, sqrt, pow, sums and max/min; svdvals for ord 2, -2, nuc */
    return conv && call_ok(e, TC_OP_SVDVALS, k) && tc_op_supported(TC_OP_POW, k, eid) &&
           tc_op_supported(TC_OP_SQRT, k, eid) && tc_op_supported(TC_OP_REDUCE_MAX, k, eid);
  default:
    return conv && call_ok(e, op, k);
  }
}

/* dtype_unsupported, with the engine's reason when it has one for lacking
 * the linear algebra call (the CPU without LAPACKE). */
static tc_tensor *unsupported(tc_op op, tc_dtype dt, tc_err *err) {
  const tc_engine *e = tc_engines[tc_get_engine()];
  tc_call c = {.kind = TC_CALL_LINALG, .op = op == TC_OP_NORM || op == TC_OP_MATRIX_RANK ? TC_OP_SVDVALS : op,
               .dtype = la_kernel_dtype(op, dt)};
  const char *why = e && e->why_not && op != TC_OP_EINSUM ? e->why_not(&c) : NULL;
  tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "not supported for %s on %s%s%s%s", tc_dtype_name(dt),
             tc_engine_name(tc_get_engine()), why ? " (" : "", why ? why : "", why ? ")" : "");
  return NULL;
}

static bool need_matrix(tc_op op, const char *name, const tc_tensor *a, bool square, tc_err *err) {
  char s[256];
  tc_format_dims(s, sizeof s, a->ndim, a->shape);
  if (a->ndim < 2)
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)a->dtype, "%s must have at least 2 dimensions; it has shape %s", name, s);
  else if (square && a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)a->dtype, "%s must be square in its last two dimensions; it has shape %s",
               name, s);
  else return true;
  return false;
}

/* A fresh contiguous copy of x, broadcast to shape, in dtype k, viewed as
 * [B, m, n] (the engine may overwrite it). */
static tc_tensor *stack_of(tc_tensor *x, tc_dtype k, int ndim, const int64_t *shape, tc_err *err) {
  tc_tensor *bx = tc_view_broadcast(x, ndim, shape, err);
  tc_tensor *cx = bx ? tc_cast(bx, k, err) : NULL;
  tc_tensor *fresh = cx ? tc_clone(cx, err) : NULL;
  tc_tensor_free(bx);
  tc_tensor_free(cx);
  if (!fresh) return NULL;
  int64_t B = 1;
  for (int i = 0; i < ndim - 2; i++) B *= shape[i];
  int64_t s3[3] = {B, shape[ndim - 2], shape[ndim - 1]};
  int64_t st[3] = {s3[1] * s3[2], s3[2], 1};
  tc_tensor *v = tc_view(fresh, 3, s3, st, 0, err);
  tc_tensor_free(fresh);
  return v;
}

/* Runs the engine's call; a singular matrix's (or overflow's) batch
 * position becomes the error's index over the batch dims. */
static int run_la(tc_call *c, int nbatch, const int64_t *bshape, tc_err *err) {
  if (tc_run_call(c, err) == 0) return 0;
  if (err->code != TC_E_SINGULAR && err->code != TC_E_INT_OVERFLOW) return -1;
  int64_t idx[TC_MAX_DIMS], rest = c->found;
  for (int i = nbatch - 1; i >= 0; i--) { idx[i] = bshape[i] ? rest % bshape[i] : 0; rest = bshape[i] ? rest / bshape[i] : 0; }
  char where[256] = "";
  if (nbatch) {
    char s[240];
    tc_format_dims(s, sizeof s, nbatch, idx);
    snprintf(where, sizeof where, " at batch index %s", s);
  }
  const char *what = err->code == TC_E_INT_OVERFLOW
                         ? "the exact determinant or an intermediate minor does not fit i64"
                         : c->op == TC_OP_CHOLESKY ? "matrix is not positive definite"
                         : c->op == TC_OP_EIGVALSH || c->op == TC_OP_SVDVALS || c->op == TC_OP_PINV
                             ? "the eigenvalue/SVD iteration did not converge"
                             : "matrix is singular";
  tc_code code = err->code;
  int dt = err->dtype;
  tc_err_clear(err);
  tc_err_set(err, code, (int)c->op, dt, "%s%s", what, where);
  tc_err_set_index(err, nbatch, idx);
  return -1;
}

/* op on the matrix stack a (and b for solve, already shaped [..., n, k]),
 * out of shape oshape; the result in the result dtype. */
static tc_tensor *la_call(tc_op op, tc_tensor *a, tc_tensor *b, int ndim, const int64_t *bshape_full,
                          int ondim, const int64_t *oshape, double rcond, tc_err *err) {
  tc_dtype pdt = a->dtype;
  if (b && tc_promote_err(a->dtype, b->dtype, (int)op, &pdt, err) != 0) return NULL;
  tc_dtype k = la_kernel_dtype(op, pdt), rdt = la_result_dtype(op, pdt);
  if (!tc_op_supported(op, pdt, tc_get_engine())) return unsupported(op, pdt, err);
  int64_t ashape[TC_MAX_DIMS];
  memcpy(ashape, bshape_full, sizeof(int64_t) * (size_t)(ndim - 2));
  ashape[ndim - 2] = a->shape[a->ndim - 2];
  ashape[ndim - 1] = a->shape[a->ndim - 1];
  tc_tensor *sa = stack_of(a, k, ndim, ashape, err), *sb = NULL, *out = NULL;
  if (sa && b) sb = stack_of(b, k, ndim, bshape_full, err);
  if (sa && (!b || sb)) out = tc_tensor_new(k, ondim, oshape, err);
  if (out && tc_numel(out) > 0) {
    tc_call c = {.kind = TC_CALL_LINALG, .op = op, .dtype = k, .nin = b ? 2 : 1, .in = {sa, sb}, .out = out,
                 .fstart = rcond};
    if (run_la(&c, ndim - 2, ashape, err) != 0) { tc_tensor_free(out); out = NULL; }
  }
  tc_tensor_free(sa);
  tc_tensor_free(sb);
  if (out && rdt != k) {
    tc_tensor *r = tc_cast(out, rdt, err);
    tc_tensor_free(out);
    out = r;
  }
  if (out) out->weak = false;
  return out;
}

/* The one-matrix functions: out shape from a's. */
static tc_tensor *la_unary(tc_op op, tc_tensor *a, double rcond, tc_err *err) {
  bool square = op != TC_OP_SVDVALS && op != TC_OP_PINV;
  if (!need_matrix(op, "a", a, square, err)) return NULL;
  int nd = a->ndim, ond = nd;
  int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], oshape[TC_MAX_DIMS];
  memcpy(oshape, a->shape, sizeof(int64_t) * (size_t)nd);
  switch (op) {
  case TC_OP_DET: ond = nd - 2; break;
  case TC_OP_EIGVALSH: ond = nd - 1; break;
  case TC_OP_SVDVALS: ond = nd - 1; oshape[nd - 2] = m < n ? m : n; break;
  case TC_OP_PINV: oshape[nd - 2] = n; oshape[nd - 1] = m; break;
  default: break;
  }
  if (op == TC_OP_DET && m == 0) {   /* the determinant of a 0 x 0 matrix is 1 */
    if (!tc_op_supported(op, a->dtype, tc_get_engine())) return unsupported(op, a->dtype, err);
    tc_tensor *one = tc_ones(ond, oshape, la_result_dtype(op, a->dtype), err);
    return one;
  }
  return la_call(op, a, NULL, nd, a->shape, ond, oshape, rcond, err);
}

tc_tensor *tc_inv(tc_tensor *a, tc_err *err) { return la_unary(TC_OP_INV, a, 0, err); }
tc_tensor *tc_det(tc_tensor *a, tc_err *err) { return la_unary(TC_OP_DET, a, 0, err); }
tc_tensor *tc_cholesky(tc_tensor *a, tc_err *err) { return la_unary(TC_OP_CHOLESKY, a, 0, err); }
tc_tensor *tc_eigvalsh(tc_tensor *a, tc_err *err) { return la_unary(TC_OP_EIGVALSH, a, 0, err); }
tc_tensor *tc_svdvals(tc_tensor *a, tc_err *err) { return la_unary(TC_OP_SVDVALS, a, 0, err); }
tc_tensor *tc_pinv(tc_tensor *a, double rcond, tc_err *err) { return la_unary(TC_OP_PINV, a, rcond, err); }

/* NumPy 1.24: b is a vector (or a stack of them) when it has one dimension
 * fewer than a; else a stack of n x k matrices. Batch dims broadcast. */
tc_tensor *tc_solve(tc_tensor *a, tc_tensor *b, tc_err *err) {
  const tc_op op = TC_OP_SOLVE;
  if (!need_matrix(op, "a", a, true, err)) return NULL;
  int64_t n = a->shape[a->ndim - 1];
  bool vec = b->ndim == a->ndim - 1;
  char sa[256], sb[256];
  tc_format_dims(sa, sizeof sa, a->ndim, a->shape);
  tc_format_dims(sb, sizeof sb, b->ndim, b->shape);
  if (b->ndim < 1 || (!vec && b->ndim < 2) || b->shape[vec ? b->ndim - 1 : b->ndim - 2] != n) {
    tc_err_set(err, TC_E_SHAPE, (int)op, -1,
               "shapes %s and %s do not match: b must be [..., %lld] or [..., %lld, k] for a of shape %s", sa, sb,
               (long long)n, (long long)n, sa);
    return NULL;
  }
  /* b as [..., n, k] */
  int64_t bs[TC_MAX_DIMS + 1], bt[TC_MAX_DIMS + 1];
  int bnd = b->ndim + (vec ? 1 : 0);
  if (bnd > TC_MAX_DIMS) return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "b has too many dimensions"), NULL;
  for (int i = 0; i < b->ndim; i++) { bs[i] = b->shape[i]; bt[i] = b->strides[i]; }
  if (vec) { bs[b->ndim] = 1; bt[b->ndim] = 0; }
  tc_tensor *bm = tc_view(b, bnd, bs, bt, b->offset, err);
  if (!bm) return NULL;
  int nbatch = 0;
  int64_t batch[TC_MAX_DIMS];
  tc_err tmp;
  tc_err_clear(&tmp);
  if (tc_broadcast_shapes(a->ndim - 2, a->shape, bnd - 2, bs, &nbatch, batch, op, &tmp) != 0) {
    tc_tensor_free(bm);
    tc_err_set(err, TC_E_SHAPE, (int)op, -1, "shapes %s and %s do not match: batch dimensions do not broadcast", sa, sb);
    return NULL;
  }
  int64_t full[TC_MAX_DIMS + 2], oshape[TC_MAX_DIMS + 2];
  memcpy(full, batch, sizeof(int64_t) * (size_t)nbatch);
  full[nbatch] = n;
  full[nbatch + 1] = bs[bnd - 1];
  memcpy(oshape, full, sizeof full);
  tc_tensor *r = la_call(op, a, bm, nbatch + 2, full, nbatch + (vec ? 1 : 2), oshape, 0, err);
  tc_tensor_free(bm);
  return r;
}

/* ---- built from svdvals and elementwise ops ---- */
static tc_tensor *scalar(double v, tc_err *err) { return tc_scalar_f64(v, true, err); }

/* f(x, s) for a weak scalar s, consuming x. */
static tc_tensor *with_scalar(tc_op op, tc_tensor *x, double s, tc_err *err) {
  tc_tensor *c = x ? scalar(s, err) : NULL;
  tc_tensor *r = c ? tc_binary(op, x, c, err) : NULL;
  tc_tensor_free(c);
  tc_tensor_free(x);
  return r;
}

static tc_tensor *unary_own(tc_op op, tc_tensor *x, tc_err *err) {
  tc_tensor *r = x ? tc_unary(op, x, err) : NULL;
  tc_tensor_free(x);
  return r;
}

static tc_tensor *reduce_own(tc_op op, tc_tensor *x, int n, const int64_t *axes, tc_err *err) {
  tc_axes ax = {.all = n < 0, .n = n < 0 ? 0 : n};
  for (int i = 0; i < n; i++) ax.axis[i] = axes[i];
  tc_tensor *r = x ? tc_reduce(op, x, &ax, false, err) : NULL;
  tc_tensor_free(x);
  return r;
}

tc_tensor *tc_matrix_rank(tc_tensor *a, double tol, tc_err *err) {
  const tc_op op = TC_OP_MATRIX_RANK;
  if (!tc_op_supported(op, a->dtype, tc_get_engine())) return unsupported(op, a->dtype, err);
  if (a->ndim < 2) {   /* NumPy: 1 unless every element is 0 */
    tc_axes all = {.all = true};
    tc_tensor *nz = tc_reduce(TC_OP_ANY, a, &all, false, err);
    tc_tensor *r = nz ? tc_cast(nz, TC_DT_I64, err) : NULL;
    tc_tensor_free(nz);
    return r;
  }
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  tc_tensor *s = tc_svdvals(a, err);
  if (!s) return NULL;
  tc_tensor *t = NULL;
  if (tol >= 0) t = scalar(tol, err);
  else {
    double eps = la_kernel_dtype(op, a->dtype) == TC_DT_F32 ? FLT_EPSILON : DBL_EPSILON;
    tc_axes last = {.all = false, .n = 1, .axis = {-1}};
    tc_tensor *mx = tc_numel(s) ? tc_reduce(TC_OP_REDUCE_MAX, s, &last, true, err) : scalar(0, err);
    t = with_scalar(TC_OP_MUL, mx, eps * (double)(m > n ? m : n), err);
  }
  tc_tensor *big = t ? tc_binary(TC_OP_GREATER, s, t, err) : NULL;
  tc_tensor_free(s);
  tc_tensor_free(t);
  int64_t last = -1;
  tc_tensor *r = reduce_own(TC_OP_COUNT_NONZERO, big, 1, &last, err);
  if (r) r->weak = false;
  return r;
}

/* The axes of x moved so that row and col come last (a view). */
static tc_tensor *move_last2(tc_tensor *x, int row, int col, tc_err *err) {
  int perm[TC_MAX_DIMS], k = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != row && i != col) perm[k++] = i;
  perm[k++] = row;
  perm[k] = col;
  return tc_view_permute(x, perm, err);
}

static tc_tensor *norm_fail(tc_err *err, const char *msg) {
  tc_err_set(err, TC_E_BAD_ARG, TC_OP_NORM, -1, "%s", msg);
  return NULL;
}

/* sqrt of the sum of squares over nax axes ax (all of them for nax < 0).
 * Over every axis it is sqrt(v @ v) of x flattened, as NumPy's norm: the
 * dot product's fixed lane order (same bits at any thread count), read once
 * (x * x then a sum took 33 us for 10^5 f64, NumPy 10). */
static tc_tensor *norm_l2(tc_tensor *xf, int nax, const int64_t *ax, tc_err *err) {
  if ((nax < 0 || nax == xf->ndim) && xf->ndim > 0 && tc_op_supported(TC_OP_MATMUL, xf->dtype, tc_get_engine())) {
    tc_tensor *v = tc_flatten(xf, err), *d = v ? tc_matmul(v, v, err) : NULL;
    tc_tensor_free(v);
    return unary_own(TC_OP_SQRT, d, err);
  }
  tc_tensor *sq = tc_binary(TC_OP_MUL, xf, xf, err);   /* x * x is |x| * |x|, bit for bit */
  return unary_own(TC_OP_SQRT, reduce_own(TC_OP_REDUCE_SUM, sq, nax < 0 ? -1 : nax, ax, err), err);
}

/* A vector norm of ord other than 2 over axis ax of xf (in dtype k). */
static tc_tensor *vector_norm(tc_tensor *xf, tc_norm_kind kind, double ord, int64_t ax, tc_dtype k, tc_err *err) {
  if (kind != TC_NORM_NUM) return norm_fail(err, "ord \"fro\" and \"nuc\" are matrix norms; axis names one axis");
  tc_tensor *a = tc_unary(TC_OP_ABS, xf, err);
  if (isinf(ord)) return reduce_own(ord > 0 ? TC_OP_REDUCE_MAX : TC_OP_REDUCE_MIN, a, 1, &ax, err);
  if (ord == 0) {
    tc_tensor *c = reduce_own(TC_OP_COUNT_NONZERO, a, 1, &ax, err);
    tc_tensor *r = c ? tc_cast(c, k, err) : NULL;
    tc_tensor_free(c);
    return r;
  }
  if (ord == 1) return reduce_own(TC_OP_REDUCE_SUM, a, 1, &ax, err);
  return with_scalar(TC_OP_POW, reduce_own(TC_OP_REDUCE_SUM, with_scalar(TC_OP_POW, a, ord, err), 1, &ax, err),
                     1.0 / ord, err);
}

/* A matrix norm other than Frobenius over axes (row, col) of xf. */
static tc_tensor *matrix_norm(tc_tensor *xf, tc_norm_kind kind, double ord, int64_t row, int64_t col, tc_err *err) {
  if (row == col) return norm_fail(err, "the two axes must differ");
  if (kind == TC_NORM_NUC || (kind == TC_NORM_NUM && (ord == 2 || ord == -2))) {
    tc_tensor *mv = move_last2(xf, (int)row, (int)col, err);
    tc_tensor *s = mv ? tc_svdvals(mv, err) : NULL;
    tc_tensor_free(mv);
    int64_t last = -1;
    if (s && tc_numel(s) == 0 && kind != TC_NORM_NUC) {
      tc_tensor_free(s);
      tc_err_set(err, TC_E_EMPTY, TC_OP_NORM, -1, "ord %g of an empty matrix", ord);
      return NULL;
    }
    return reduce_own(kind == TC_NORM_NUC ? TC_OP_REDUCE_SUM : ord > 0 ? TC_OP_REDUCE_MAX : TC_OP_REDUCE_MIN, s, 1,
                      &last, err);
  }
  if (kind == TC_NORM_NUM && (ord == 1 || ord == -1 || isinf(ord))) {
    /* 1: max over columns of the column sums; inf: max over rows of the row sums */
    bool cols = !isinf(ord);
    int64_t first = cols ? row : col, second = cols ? col : row;
    if (second > first) second--;
    tc_tensor *a = tc_unary(TC_OP_ABS, xf, err);
    tc_tensor *s = reduce_own(TC_OP_REDUCE_SUM, a, 1, &first, err);
    return reduce_own(ord > 0 ? TC_OP_REDUCE_MAX : TC_OP_REDUCE_MIN, s, 1, &second, err);
  }
  return norm_fail(err, "invalid ord for a matrix norm (1, -1, 2, -2, inf, -inf, \"fro\", \"nuc\")");
}

tc_tensor *tc_norm(tc_tensor *x, tc_norm_kind kind, double ord, const tc_axes *axes, bool keepdims, tc_err *err) {
  const tc_op op = TC_OP_NORM;
  if (!tc_op_supported(op, x->dtype, tc_get_engine())) return unsupported(op, x->dtype, err);
  bool mask[TC_MAX_DIMS] = {0};
  int64_t ax[2];
  int nax = 0;
  if (axes->all) {
    if (kind != TC_NORM_NONE && x->ndim != 1 && x->ndim != 2)
      return norm_fail(err, "an ord needs a 1-D or 2-D x, or axis");
    nax = kind == TC_NORM_NONE ? -1 : x->ndim;
    for (int i = 0; i < x->ndim; i++) { mask[i] = true; if (i < 2) ax[i] = i; }
  } else {
    if (axes->n < 1 || axes->n > 2) return norm_fail(err, "axis must name 1 or 2 axes");
    if (tc_axes_mask(axes, x->ndim, mask, op, err) != 0) return NULL;
    for (int i = 0; i < axes->n; i++) ax[i] = axes->axis[i] < 0 ? axes->axis[i] + x->ndim : axes->axis[i];
    nax = axes->n;
  }
  tc_dtype k = la_kernel_dtype(op, x->dtype), rdt = la_result_dtype(op, x->dtype);
  tc_tensor *xf = tc_cast(x, k, err);
  if (!xf) return NULL;
  tc_tensor *r = nax == -1 || ((nax == 1 && (kind == TC_NORM_NONE || ord == 2)) ||
                                (nax == 2 && (kind == TC_NORM_NONE || kind == TC_NORM_FRO)))
                   ? norm_l2(xf, nax, ax, err)
               : nax == 1 ? vector_norm(xf, kind, ord, ax[0], k, err)
                          : matrix_norm(xf, kind, ord, ax[0], ax[1], err);
  tc_tensor_free(xf);
  if (r && keepdims) {
    int64_t ks[TC_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) ks[i] = mask[i] ? 1 : x->shape[i];
    tc_tensor *v = tc_reshape(r, x->ndim, ks, err);
    tc_tensor_free(r);
    r = v;
  }
  if (r && r->dtype != rdt) {
    tc_tensor *c = tc_cast(r, rdt, err);
    tc_tensor_free(r);
    r = c;
  }
  if (r) r->weak = false;
  else tc_reattribute(err, op);   /* an inner op's error (reduce_max of nothing) as norm's */
  return r;
}
