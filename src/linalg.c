/* Matrix products (SPEC 5.2): matmul's shape rules (1-D promotion, batch
 * broadcasting), dot, outer, tensordot and trace. Typing and shapes are
 * settled here; engines see one call, TC_CALL_MATMUL, on matrix stacks. */
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "linalg.h"

/* bf16/f16 multiply in f32 and round once at the end. */
static tc_dtype mm_kernel_dtype(tc_dtype dt) { return dt == TC_DT_BF16 || dt == TC_DT_F16 ? TC_DT_F32 : dt; }

static bool mm_supported(tc_dtype dt, const tc_engine *e) {
  tc_dtype k = mm_kernel_dtype(dt);
  tc_call c = {.kind = TC_CALL_MATMUL, .op = TC_OP_MATMUL, .dtype = k, .nin = 2};
  return e->supports(&c) && tc_cast_supported(e, dt, k) && tc_cast_supported(e, k, dt);
}

bool tc_linalg_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  const tc_engine *e = tc_engines[eid];
  if (!e) return false;
  /* The five ops are one capability of an engine, the matmul call: outer
   * and trace, though built from mul and reduce_sum, come with it, so that
   * an engine's parity suite covers them together. */
  switch (op) {
  case TC_OP_OUTER:
    return mm_supported(dt, e) && tc_op_supported(dt == TC_DT_BOOL ? TC_OP_BITWISE_AND : TC_OP_MUL, dt, eid);
  case TC_OP_TRACE:
    return mm_supported(dt, e) && tc_op_supported(TC_OP_REDUCE_SUM, dt, eid);
  case TC_OP_DOT:   /* a 0-d operand makes dot a multiply */
    return mm_supported(dt, e) && tc_op_supported(dt == TC_DT_BOOL ? TC_OP_BITWISE_AND : TC_OP_MUL, dt, eid);
  default:
    return mm_supported(dt, e);
  }
}

/* dtype_unsupported, with the engine's reason when it has one for lacking
 * the matmul call (the cuda engine without cuBLAS). */
static int unsupported(tc_op op, tc_dtype dt, tc_err *err) {
  const tc_engine *e = tc_engines[tc_get_engine()];
  const char *why = NULL;
  if (e && e->why_not) {
    tc_call c = {.kind = TC_CALL_MATMUL, .op = TC_OP_MATMUL, .dtype = mm_kernel_dtype(dt), .nin = 2};
    if (!e->supports(&c)) why = e->why_not(&c);
  }
  return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "not supported for %s on %s%s%s%s", tc_dtype_name(dt),
                    tc_engine_name(tc_get_engine()), why ? " (" : "", why ? why : "", why ? ")" : "");
}

/* A view of t's storage with the given shape and strides (not weak). */
static tc_tensor *restride(tc_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, tc_err *err) {
  return tc_view(t, ndim, shape, strides, t->offset, err);
}

/* A view of a contiguous tensor with another shape of the same size. */
static tc_tensor *reshape_contig(tc_tensor *t, int ndim, const int64_t *shape, tc_err *err) {
  int64_t strides[TC_MAX_DIMS], s = 1;
  for (int i = ndim - 1; i >= 0; i--) { strides[i] = s; s *= shape[i] ? shape[i] : 1; }
  return restride(t, ndim, shape, strides, err);
}

static int shape_err(tc_err *err, tc_op op, const tc_tensor *a, const tc_tensor *b, const char *why) {
  char sa[256], sb[256];
  tc_format_dims(sa, sizeof sa, a->ndim, a->shape);
  tc_format_dims(sb, sizeof sb, b->ndim, b->shape);
  return tc_err_set(err, TC_E_SHAPE, (int)op, -1, "shapes %s and %s do not match: %s", sa, sb, why);
}

/* x cast to dt (the result dtype, as promotion demands), then to k. */
static tc_tensor *cast2(tc_tensor *x, tc_dtype dt, tc_dtype k, tc_err *err) {
  tc_tensor *c = tc_cast(x, dt, err);
  if (!c || k == dt) return c;
  tc_tensor *r = tc_cast(c, k, err);
  tc_tensor_free(c);
  return r;
}

/* matmul of a and b in the result dtype dt, reported as op. */
static tc_tensor *mm_core(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype dt, tc_err *err) {
  tc_dtype k = mm_kernel_dtype(dt);
  int na = a->ndim < 2 ? 2 : a->ndim, nb = b->ndim < 2 ? 2 : b->ndim;
  int64_t sa[TC_MAX_DIMS], sb[TC_MAX_DIMS], ta[TC_MAX_DIMS], tb[TC_MAX_DIMS];
  /* 1-D a is a row [1, K]; 1-D b a column [K, 1] */
  if (a->ndim == 1) { sa[0] = 1; sa[1] = a->shape[0]; ta[0] = 0; ta[1] = a->strides[0]; }
  else for (int i = 0; i < na; i++) { sa[i] = a->shape[i]; ta[i] = a->strides[i]; }
  if (b->ndim == 1) { sb[0] = b->shape[0]; sb[1] = 1; tb[0] = b->strides[0]; tb[1] = 0; }
  else for (int i = 0; i < nb; i++) { sb[i] = b->shape[i]; tb[i] = b->strides[i]; }
  int64_t M = sa[na - 2], K = sa[na - 1], N = sb[nb - 1];
  if (K != sb[nb - 2]) {
    char why[96];
    snprintf(why, sizeof why, "inner dimensions %lld and %lld differ", (long long)K, (long long)sb[nb - 2]);
    return shape_err(err, op, a, b, why), NULL;
  }
  int nbatch;
  int64_t oshape[TC_MAX_DIMS + 2];
  tc_err tmp;
  tc_err_clear(&tmp);
  if (tc_broadcast_shapes(na - 2, sa, nb - 2, sb, &nbatch, oshape, op, &tmp) != 0)
    return shape_err(err, op, a, b, "batch dimensions do not broadcast"), NULL;
  int ond = nbatch + 2;
  oshape[nbatch] = M;
  oshape[nbatch + 1] = N;
  tc_tensor *out = NULL, *ca = NULL, *cb = NULL, *pa = NULL, *pb = NULL, *va = NULL, *vb = NULL;
  ca = cast2(a, dt, k, err);
  if (ca) cb = cast2(b, dt, k, err);
  /* the promoted operands, with a's and b's strides re-read after the cast */
  if (cb) {
    if (a->ndim == 1) ta[1] = ca->strides[0];
    else for (int i = 0; i < na; i++) ta[i] = ca->strides[i];
    if (b->ndim == 1) tb[0] = cb->strides[0];
    else for (int i = 0; i < nb; i++) tb[i] = cb->strides[i];
    pa = restride(ca, na, sa, ta, err);
  }
  if (pa) pb = restride(cb, nb, sb, tb, err);
  int64_t ashape[TC_MAX_DIMS], bshape[TC_MAX_DIMS];
  memcpy(ashape, oshape, sizeof(int64_t) * (size_t)nbatch);
  memcpy(bshape, oshape, sizeof(int64_t) * (size_t)nbatch);
  ashape[nbatch] = M; ashape[nbatch + 1] = K;
  bshape[nbatch] = K; bshape[nbatch + 1] = N;
  if (pb) va = tc_view_broadcast(pa, ond, ashape, err);
  if (va) vb = tc_view_broadcast(pb, ond, bshape, err);
  if (vb) out = tc_tensor_new(k, ond, oshape, err);
  if (out && tc_numel(out) > 0) {
    /* check / saturate (SPEC 13), unless no product can overflow */
    tc_call c = {.kind = TC_CALL_MATMUL, .op = op, .dtype = k, .nin = 2, .in = {va, vb}, .out = out,
                 .overflow = k == dt ? tc_overflow_judges_matmul(k, va, vb) : TC_OVERFLOW_WRAP};
    if (tc_run_call(&c, err) != 0) {
      tc_tensor_free(out);
      out = NULL;
    }
  }
  tc_tensor_free(vb); tc_tensor_free(va); tc_tensor_free(pb); tc_tensor_free(pa);
  tc_tensor_free(cb); tc_tensor_free(ca);
  if (out && k != dt) {
    tc_tensor *r = tc_cast(out, dt, err);
    tc_tensor_free(out);
    out = r;
  }
  if (out && (a->ndim == 1 || b->ndim == 1)) {
    /* drop the dimensions the promotion added */
    int64_t rs[TC_MAX_DIMS + 2];
    int rn = nbatch;
    memcpy(rs, oshape, sizeof(int64_t) * (size_t)nbatch);
    if (a->ndim != 1) rs[rn++] = M;
    if (b->ndim != 1) rs[rn++] = N;
    tc_tensor *r = reshape_contig(out, rn, rs, err);
    tc_tensor_free(out);
    out = r;
  }
  if (out) out->weak = false;
  return out;
}

/* The common dtype of a and b for op, checked for support. */
static int mm_dtype(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype *dt, tc_err *err) {
  if (tc_result_dtype2(op, a, b, dt, err) != 0) return -1;
  if (!tc_op_supported(op, *dt, tc_get_engine())) return unsupported(op, *dt, err);
  return 0;
}

tc_tensor *tc_matmul(tc_tensor *a, tc_tensor *b, tc_err *err) {
  if (a->ndim == 0 || b->ndim == 0) {
    tc_err_set(err, TC_E_BAD_ARG, TC_OP_MATMUL, -1,
               "operand %s is a scalar (0-d); matmul needs at least one dimension (use * to scale)",
               a->ndim == 0 ? "a" : "b");
    return NULL;
  }
  tc_dtype dt;
  if (mm_dtype(TC_OP_MATMUL, a, b, &dt, err) != 0 || tc_semantics_refuses(TC_OP_MATMUL, dt, err) != 0 ||
      tc_semantics_matmul(a, b, err) != 0)
    return NULL;
  return mm_core(TC_OP_MATMUL, a, b, dt, err);
}

/* Elementwise product (and for bool) of a and b as op. */
static tc_tensor *scaled(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype dt, tc_err *err) {
  tc_tensor *r = tc_binary(dt == TC_DT_BOOL ? TC_OP_BITWISE_AND : TC_OP_MUL, a, b, err);
  if (!r) tc_reattribute(err, op);
  return r;
}

tc_tensor *tc_dot(tc_tensor *a, tc_tensor *b, tc_err *err) {
  tc_dtype dt;
  if (mm_dtype(TC_OP_DOT, a, b, &dt, err) != 0) return NULL;
  if (a->ndim == 0 || b->ndim == 0) return scaled(TC_OP_DOT, a, b, dt, err);
  if (b->ndim == 1 || a->ndim == 1 || (a->ndim == 2 && b->ndim == 2)) {
    /* here dot and matmul agree (1-D promotion covers N-D . 1-D and 1-D . N-D) */
    tc_tensor *ca = tc_cast(a, dt, err), *cb = ca ? tc_cast(b, dt, err) : NULL;
    tc_tensor *r = cb ? mm_core(TC_OP_DOT, ca, cb, dt, err) : NULL;
    tc_tensor_free(ca);
    tc_tensor_free(cb);
    return r;
  }
  int64_t ax = a->ndim - 1, bx = b->ndim - 2;
  tc_tensor *r = tc_tensordot(a, b, 1, &ax, &bx, err);
  if (!r) tc_reattribute(err, TC_OP_DOT);
  return r;
}

/* A contiguous copy of t (or t itself) viewed with the given shape. */
static tc_tensor *flat_view(tc_tensor *t, int ndim, const int64_t *shape, tc_err *err) {
  tc_tensor *c = tc_contiguous(t, err);
  if (!c) return NULL;
  tc_tensor *v = reshape_contig(c, ndim, shape, err);
  tc_tensor_free(c);
  return v;
}

tc_tensor *tc_outer(tc_tensor *a, tc_tensor *b, tc_err *err) {
  tc_dtype dt;
  if (mm_dtype(TC_OP_OUTER, a, b, &dt, err) != 0) return NULL;
  int64_t sa[2] = {tc_numel(a), 1}, sb[2] = {1, tc_numel(b)};
  tc_tensor *ca = tc_cast(a, dt, err), *cb = ca ? tc_cast(b, dt, err) : NULL;
  tc_tensor *va = cb ? flat_view(ca, 2, sa, err) : NULL, *vb = va ? flat_view(cb, 2, sb, err) : NULL;
  tc_tensor *r = vb ? scaled(TC_OP_OUTER, va, vb, dt, err) : NULL;
  tc_tensor_free(va); tc_tensor_free(vb); tc_tensor_free(ca); tc_tensor_free(cb);
  return r;
}

tc_tensor *tc_tensordot(tc_tensor *a, tc_tensor *b, int n, const int64_t *axes_a, const int64_t *axes_b,
                        tc_err *err) {
  const tc_op op = TC_OP_TENSORDOT;
  if (n < 0 || n > a->ndim || n > b->ndim)
    return tc_err_set(err, TC_E_AXIS, (int)op, -1, "cannot contract %d axes of tensors with %d and %d dimensions", n,
                      a->ndim, b->ndim), NULL;
  bool ca_[TC_MAX_DIMS] = {0}, cb_[TC_MAX_DIMS] = {0};
  int xa[TC_MAX_DIMS], xb[TC_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int64_t x = axes_a[i], y = axes_b[i];
    if (x < -a->ndim || x >= a->ndim || y < -b->ndim || y >= b->ndim) {
      bool bad_a = x < -a->ndim || x >= a->ndim;
      return tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld is out of range for %s, which has %d dimension%s",
                        (long long)(bad_a ? x : y), bad_a ? "a" : "b", bad_a ? a->ndim : b->ndim,
                        (bad_a ? a->ndim : b->ndim) == 1 ? "" : "s"), NULL;
    }
    xa[i] = (int)(x < 0 ? x + a->ndim : x);
    xb[i] = (int)(y < 0 ? y + b->ndim : y);
    if (ca_[xa[i]] || cb_[xb[i]])
      return tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld of %s is repeated",
                        (long long)(ca_[xa[i]] ? x : y), ca_[xa[i]] ? "a" : "b"), NULL;
    ca_[xa[i]] = cb_[xb[i]] = true;
    if (a->shape[xa[i]] != b->shape[xb[i]]) {
      char why[160];
      snprintf(why, sizeof why, "axis %d of a has size %lld, axis %d of b has size %lld", xa[i],
               (long long)a->shape[xa[i]], xb[i], (long long)b->shape[xb[i]]);
      return shape_err(err, op, a, b, why), NULL;
    }
  }
  int nfa = a->ndim - n, nfb = b->ndim - n;
  if (nfa + nfb > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "the result would have %d dimensions (at most %d)", nfa + nfb,
                      TC_MAX_DIMS), NULL;
  tc_dtype dt;
  if (mm_dtype(op, a, b, &dt, err) != 0) return NULL;
  /* a -> [free a..., contracted...], b -> [contracted..., free b...] */
  int pa[TC_MAX_DIMS], pb[TC_MAX_DIMS], fa = 0, fb = 0;
  int64_t rshape[2 * TC_MAX_DIMS], M = 1, N = 1, K = 1;
  for (int i = 0; i < a->ndim; i++)
    if (!ca_[i]) { pa[fa] = i; rshape[fa++] = a->shape[i]; M *= a->shape[i]; }
  for (int i = 0; i < n; i++) { pa[nfa + i] = xa[i]; pb[i] = xb[i]; K *= a->shape[xa[i]]; }
  for (int i = 0; i < b->ndim; i++)
    if (!cb_[i]) { pb[n + fb] = i; rshape[nfa + fb++] = b->shape[i]; N *= b->shape[i]; }
  tc_tensor *r = NULL, *ta = tc_cast(a, dt, err), *tb = ta ? tc_cast(b, dt, err) : NULL;
  tc_tensor *qa = tb ? tc_view_permute(ta, pa, err) : NULL, *qb = qa ? tc_view_permute(tb, pb, err) : NULL;
  int64_t s2a[2] = {M, K}, s2b[2] = {K, N};
  tc_tensor *ma = qb ? flat_view(qa, 2, s2a, err) : NULL, *mb = ma ? flat_view(qb, 2, s2b, err) : NULL;
  tc_tensor *m = mb ? mm_core(op, ma, mb, dt, err) : NULL;
  if (m) r = reshape_contig(m, nfa + nfb, rshape, err);
  tc_tensor_free(m); tc_tensor_free(mb); tc_tensor_free(ma); tc_tensor_free(qb); tc_tensor_free(qa);
  tc_tensor_free(tb); tc_tensor_free(ta);
  return r;
}

tc_tensor *tc_trace(tc_tensor *x, tc_err *err) {
  if (x->ndim < 2) {
    char s[256];
    tc_format_dims(s, sizeof s, x->ndim, x->shape);
    tc_err_set(err, TC_E_BAD_ARG, TC_OP_TRACE, (int)x->dtype, "needs at least 2 dimensions; x has shape %s", s);
    return NULL;
  }
  if (!tc_op_supported(TC_OP_TRACE, x->dtype, tc_get_engine())) { unsupported(TC_OP_TRACE, x->dtype, err); return NULL; }
  /* the diagonal as a strided view [min(n0, n1), rest...] */
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  shape[0] = x->shape[0] < x->shape[1] ? x->shape[0] : x->shape[1];
  strides[0] = x->strides[0] + x->strides[1];
  for (int i = 2; i < x->ndim; i++) { shape[i - 1] = x->shape[i]; strides[i - 1] = x->strides[i]; }
  tc_tensor *d = restride(x, x->ndim - 1, shape, strides, err);
  if (!d) return NULL;
  tc_axes ax = {.all = false, .n = 1, .axis = {0}};
  tc_tensor *r = tc_reduce(TC_OP_REDUCE_SUM, d, &ax, false, err);
  tc_tensor_free(d);
  if (!r) tc_reattribute(err, TC_OP_TRACE);
  return r;
}

tc_tensor *tc_linalg_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  switch (op) {
  case TC_OP_MATMUL: return tc_matmul(a, b, err);
  case TC_OP_DOT: return tc_dot(a, b, err);
  case TC_OP_OUTER: return tc_outer(a, b, err);
  default:
    tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "is not a binary operation");
    return NULL;
  }
}
