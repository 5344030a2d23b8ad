/* Shape ops (SPEC 5.4): views where the data allows (reshape of contiguous
 * data, transpose, expand_dims, squeeze, broadcast_to, flip, the diagonal
 * of a matrix), copies by the engine otherwise (concat, stack, tril, triu,
 * the matrix of a diagonal). Also the small helpers every family shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* ---- shared helpers ---- */
int tc_norm_axis(int64_t axis, int ndim, tc_op op, int64_t *out, tc_err *err) {
  if (axis < -(int64_t)ndim || axis >= ndim)
    return tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld is out of range for a tensor of %d dimension%s",
                      (long long)axis, ndim, ndim == 1 ? "" : "s");
  *out = axis < 0 ? axis + ndim : axis;
  return 0;
}

int tc_scalar_to_i64(tc_tensor *t, int64_t *out, tc_err *err) {
  if (t->ndim != 0 || tc_dtype_class(t->dtype) == TC_CLASS_FLT)
    return tc_err_set(err, TC_E_BAD_ARG, -1, (int)t->dtype, "expected an integer, not a %s tensor of %d dimension%s",
                      tc_dtype_name(t->dtype), t->ndim, t->ndim == 1 ? "" : "s");
  const void *host = t->dtype == TC_DT_I64 ? tc_tensor_host_data(t) : NULL;
  if (host) {   /* an i64 in memory (a loop's index): read it where it is */
    memcpy(out, host, sizeof *out);
    return 0;
  }
  tc_tensor *c = tc_cast(t, TC_DT_I64, err);
  int rc = c ? tc_tensor_to_host(c, out, err) : -1;
  tc_tensor_free(c);
  return rc;
}

int tc_scalar_to_f64(tc_tensor *t, double *out, tc_err *err) {
  if (t->ndim != 0)
    return tc_err_set(err, TC_E_BAD_ARG, -1, (int)t->dtype, "expected a number, not a tensor of %d dimension%s",
                      t->ndim, t->ndim == 1 ? "" : "s");
  tc_tensor *c = tc_cast(t, TC_DT_F64, err);
  int rc = c ? tc_tensor_to_host(c, out, err) : -1;
  tc_tensor_free(c);
  return rc;
}

int tc_value_fits(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err) {
  int k = tc_semantics_value_fits(v, dt, op, err);
  if (k != 1) return k;
  if (!v->weak || tc_dtype_class(v->dtype) != TC_CLASS_INT || tc_dtype_class(dt) != TC_CLASS_INT) return 0;
  tc_tensor target = {.dtype = dt};
  tc_dtype rd;
  return tc_result_dtype2(op, v, &target, &rd, err);
}

tc_tensor *tc_value_as(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err) {
  return tc_value_fits(v, dt, op, err) == 0 ? tc_cast(v, dt, err) : NULL;
}

int tc_copy_into(tc_tensor *out, tc_tensor *v, tc_err *err) {
  tc_tensor *c = tc_operand(v, out->dtype, err);
  if (!c) return -1;
  tc_tensor *b = tc_view_broadcast(c, out->ndim, out->shape, err);
  tc_tensor_free(c);
  if (!b) return -1;
  int rc = 0;
  if (tc_numel(out) > 0) {
    tc_call call = {.kind = TC_CALL_COPY, .dtype = out->dtype, .nin = 1, .in = {b}, .out = out};
    rc = tc_run_call(&call, err);
  }
  tc_tensor_free(b);
  return rc;
}


/* ---- reshape, flatten ---- */
static tc_tensor *reshape_op(tc_op op, tc_tensor *x, int ndim, const int64_t *shape_in, tc_err *err) {
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  if (ndim > TC_MAX_DIMS) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "a tensor may have at most %d dimensions", TC_MAX_DIMS);
    return NULL;
  }
  int64_t shape[TC_MAX_DIMS], known = 1, numel = tc_numel(x);
  int infer = -1;
  for (int d = 0; d < ndim; d++) {
    shape[d] = shape_in[d];
    if (shape[d] == -1) {
      if (infer >= 0) {
        tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "only one dimension can be -1");
        return NULL;
      }
      infer = d;
    } else if (shape[d] < 0) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "dimension %lld is negative", (long long)shape[d]);
      return NULL;
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      known = -1;   /* more than any tensor holds: a mismatch below */
    }
  }
  char a[256], b[256];
  tc_format_dims(a, sizeof a, x->ndim, x->shape);
  if (infer >= 0) {
    if (known > 0 && numel % known == 0) shape[infer] = numel / known;
    else {
      tc_format_dims(b, sizeof b, ndim, shape_in);
      tc_err_set(err, TC_E_SHAPE, (int)op, (int)x->dtype, "cannot reshape %s (%lld element%s) into %s", a,
                 (long long)numel, numel == 1 ? "" : "s", b);
      return NULL;
    }
  } else if (known != numel) {
    tc_format_dims(b, sizeof b, ndim, shape);
    if (known < 0)   /* the product overflowed */
      tc_err_set(err, TC_E_SHAPE, (int)op, (int)x->dtype, "cannot reshape %s (%lld element%s) into %s (more elements "
                 "than can be counted)", a, (long long)numel, numel == 1 ? "" : "s", b);
    else
      tc_err_set(err, TC_E_SHAPE, (int)op, (int)x->dtype, "cannot reshape %s (%lld element%s) into %s (%lld element%s)",
                 a, (long long)numel, numel == 1 ? "" : "s", b, (long long)known, known == 1 ? "" : "s");
    return NULL;
  }
  tc_tensor *c = tc_is_contiguous(x) ? tc_tensor_ref(x) : tc_contiguous(x, err);
  if (!c) { tc_annotate(err, op, (int)x->dtype); return NULL; }
  int64_t strides[TC_MAX_DIMS] = {0};
  tc_tensor *v = tc_view(c, ndim, shape, strides, c->offset, err);
  if (v) tc_set_contiguous_strides(v);
  tc_tensor_free(c);
  return v;
}

tc_tensor *tc_reshape(tc_tensor *x, int ndim, const int64_t *shape, tc_err *err) {
  return reshape_op(TC_OP_RESHAPE, x, ndim, shape, err);
}

tc_tensor *tc_flatten(tc_tensor *x, tc_err *err) {
  int64_t n = tc_numel(x);
  return reshape_op(TC_OP_FLATTEN, x, 1, &n, err);
}

/* ---- transpose, expand_dims, squeeze, broadcast_to, flip ---- */
tc_tensor *tc_transpose(tc_tensor *x, int nperm, const int64_t *perm, tc_err *err) {
  const tc_op op = TC_OP_TRANSPOSE;
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  int p[TC_MAX_DIMS];
  bool seen[TC_MAX_DIMS] = {0};
  if (nperm < 0) {
    for (int i = 0; i < x->ndim; i++) p[i] = x->ndim - 1 - i;
  } else {
    if (nperm != x->ndim) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "perm has %d axes for a tensor of %d dimension%s", nperm,
                 x->ndim, x->ndim == 1 ? "" : "s");
      return NULL;
    }
    for (int i = 0; i < nperm; i++) {
      int64_t a = 0;
      if (tc_norm_axis(perm[i], x->ndim, op, &a, err) != 0) return NULL;
      if (seen[a]) {
        tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld is repeated in perm", (long long)perm[i]);
        return NULL;
      }
      seen[a] = true;
      p[i] = (int)a;
    }
  }
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    shape[i] = x->shape[p[i]];
    strides[i] = x->strides[p[i]];
  }
  return tc_view(x, x->ndim, shape, strides, x->offset, err);
}

tc_tensor *tc_expand_dims(tc_tensor *x, int64_t axis, tc_err *err) {
  const tc_op op = TC_OP_EXPAND_DIMS;
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  int64_t a = 0;
  if (tc_norm_axis(axis, x->ndim + 1, op, &a, err) != 0) return NULL;
  if (x->ndim + 1 > TC_MAX_DIMS) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "a tensor may have at most %d dimensions", TC_MAX_DIMS);
    return NULL;
  }
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  for (int i = 0, j = 0; i <= x->ndim; i++) {
    if (i == a) { shape[i] = 1; strides[i] = 0; continue; }
    shape[i] = x->shape[j];
    strides[i] = x->strides[j++];
  }
  return tc_view(x, x->ndim + 1, shape, strides, x->offset, err);
}

tc_tensor *tc_squeeze(tc_tensor *x, const tc_axes *axes, tc_err *err) {
  const tc_op op = TC_OP_SQUEEZE;
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  bool drop[TC_MAX_DIMS];
  if (tc_axes_mask(axes, x->ndim, drop, op, err) != 0) return NULL;
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (drop[i] && x->shape[i] == 1) continue;
    if (drop[i] && !axes->all) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "axis %d has size %lld; only size-1 axes can be squeezed", i,
                 (long long)x->shape[i]);
      return NULL;
    }
    shape[n] = x->shape[i];
    strides[n++] = x->strides[i];
  }
  return tc_view(x, n, shape, strides, x->offset, err);
}

tc_tensor *tc_broadcast_to(tc_tensor *x, int ndim, const int64_t *shape, tc_err *err) {
  const tc_op op = TC_OP_BROADCAST_TO;
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  if (ndim > TC_MAX_DIMS) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "a tensor may have at most %d dimensions", TC_MAX_DIMS);
    return NULL;
  }
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "dimension %lld is negative", (long long)shape[i]);
      return NULL;
    }
  tc_tensor *v = tc_view_broadcast(x, ndim, shape, err);
  if (!v) { tc_annotate(err, op, (int)x->dtype); return NULL; }
  v->weak = false;
  return v;
}

tc_tensor *tc_flip(tc_tensor *x, const tc_axes *axes, tc_err *err) {
  const tc_op op = TC_OP_FLIP;
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  bool mask[TC_MAX_DIMS];
  if (tc_axes_mask(axes, x->ndim, mask, op, err) != 0) return NULL;
  int64_t strides[TC_MAX_DIMS], offset = x->offset;
  bool empty = tc_numel(x) == 0;
  for (int i = 0; i < x->ndim; i++) {
    strides[i] = x->strides[i];
    if (!mask[i] || empty) continue;
    offset += (x->shape[i] - 1) * x->strides[i];
    strides[i] = -x->strides[i];
  }
  return tc_view(x, x->ndim, x->shape, strides, offset, err);
}

/* ---- concat, stack ---- */
/* Joining (op) needs one tensor at least. */
static bool join_has_operands(int n, tc_op op, tc_err *err) {
  if (n < 1) tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "needs at least one tensor");
  return n >= 1;
}

/* Tensor i of a join (op) has a shape that does not fit tensor 0's; rule
 * says what must match. */
static void join_shape_error(tc_tensor *const *xs, int i, tc_op op, const char *rule, tc_err *err) {
  char s0[256], si[256];
  tc_format_dims(s0, sizeof s0, xs[0]->ndim, xs[0]->shape);
  tc_format_dims(si, sizeof si, xs[i]->ndim, xs[i]->shape);
  tc_err_set(err, TC_E_SHAPE, (int)op, -1, "tensor %d has shape %s, tensor 0 has %s: %s", i, si, s0, rule);
}

tc_tensor *tc_concat(int n, tc_tensor *const *xs, int64_t axis, tc_err *err) {
  const tc_op op = TC_OP_CONCAT;
  if (!join_has_operands(n, op, err)) return NULL;
  int nd = xs[0]->ndim;
  if (nd == 0) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)xs[0]->dtype, "cannot join 0-d tensors along an axis (use stack)");
    return NULL;
  }
  int64_t a = 0;
  if (tc_norm_axis(axis, nd, op, &a, err) != 0) return NULL;
  tc_dtype dt = xs[0]->dtype;
  int64_t shape[TC_MAX_DIMS];
  memcpy(shape, xs[0]->shape, sizeof(int64_t) * (size_t)nd);
  shape[a] = 0;
  for (int i = 0; i < n; i++) {
    bool ok = xs[i]->ndim == nd;
    for (int d = 0; ok && d < nd; d++) ok = d == a || xs[i]->shape[d] == xs[0]->shape[d];
    if (!ok) {
      char rule[64];
      snprintf(rule, sizeof rule, "all dimensions but axis %lld must match", (long long)a);
      join_shape_error(xs, i, op, rule, err);
      return NULL;
    }
    if (__builtin_add_overflow(shape[a], xs[i]->shape[a], &shape[a])) {
      tc_err_set(err, TC_E_OOM, (int)op, -1, "the result has more elements than can be counted");
      return NULL;
    }
    if (tc_promote_err(dt, xs[i]->dtype, (int)op, &dt, err) != 0) return NULL;
  }
  if (tc_check_supported(op, dt, err)) return NULL;
  tc_tensor *out = tc_tensor_new(dt, nd, shape, err);
  if (!out) { tc_annotate(err, op, (int)dt); return NULL; }
  int64_t pos = 0;
  for (int i = 0; i < n; i++) {
    if (tc_numel(xs[i]) > 0) {
      tc_tensor *v = tc_view(out, nd, xs[i]->shape, out->strides, pos * out->strides[a], err);
      int rc = v ? tc_copy_into(v, xs[i], err) : -1;
      tc_tensor_free(v);
      if (rc != 0) { tc_tensor_free(out); tc_annotate(err, op, (int)dt); return NULL; }
    }
    pos += xs[i]->shape[a];
  }
  return out;
}

tc_tensor *tc_stack(int n, tc_tensor *const *xs, int64_t axis, tc_err *err) {
  const tc_op op = TC_OP_STACK;
  if (!join_has_operands(n, op, err)) return NULL;
  int nd = xs[0]->ndim;
  int64_t a = 0;
  if (nd + 1 > TC_MAX_DIMS) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)xs[0]->dtype,
               "stacking %d-dimensional tensors would make %d dimensions; a tensor may have at most %d", nd, nd + 1,
               TC_MAX_DIMS);
    return NULL;
  }
  if (tc_norm_axis(axis, nd + 1, op, &a, err) != 0) return NULL;
  for (int i = 1; i < n; i++)
    if (xs[i]->ndim != nd || memcmp(xs[i]->shape, xs[0]->shape, sizeof(int64_t) * (size_t)nd)) {
      join_shape_error(xs, i, op, "stacked tensors must match", err);
      return NULL;
    }
  tc_tensor *ex[64], **e = n <= 64 ? ex : calloc((size_t)n, sizeof *e);
  if (!e) { tc_err_set(err, TC_E_OOM, (int)op, -1, "out of memory"); return NULL; }
  tc_tensor *out = NULL;
  int made = 0;
  for (; made < n; made++) {
    e[made] = tc_expand_dims(xs[made], a, err);
    if (!e[made]) break;
  }
  if (made == n) out = tc_concat(n, e, a, err);
  for (int i = 0; i < made; i++) tc_tensor_free(e[i]);
  if (e != ex) free(e);
  if (!out && err) err->op = (int)op;
  return out;
}

/* ---- tril, triu, diag ---- */
tc_tensor *tc_tri(tc_op op, tc_tensor *x, int64_t k, tc_err *err) {
  if (x->ndim < 2) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "needs a tensor of at least 2 dimensions, not %d", x->ndim);
    return NULL;
  }
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  tc_tensor *in = tc_operand(x, x->dtype, err), *out = NULL;
  if (in) out = tc_tensor_new(x->dtype, x->ndim, x->shape, err);
  if (out && tc_numel(out) > 0) {
    tc_call c = {.kind = TC_CALL_TRI, .op = op, .dtype = x->dtype, .nin = 1, .in = {in}, .out = out, .k = k};
    if (tc_run_call(&c, err) != 0) { tc_tensor_free(out); out = NULL; }
  }
  tc_tensor_free(in);
  if (!out) tc_annotate(err, op, (int)x->dtype);
  return out;
}

/* Length and offset (in elements of a row-major [rows, cols] grid with
 * strides s0, s1) of diagonal k; 0 and 0 when it is empty. */
static void diag_extent(int64_t rows, int64_t cols, int64_t s0, int64_t s1, int64_t k, int64_t *len, int64_t *off) {
  int64_t n = k >= 0 ? (cols - k < rows ? cols - k : rows) : (rows + k < cols ? rows + k : cols);
  *len = n > 0 ? n : 0;
  *off = *len == 0 ? 0 : k >= 0 ? k * s1 : -k * s0;
}

tc_tensor *tc_diag(tc_tensor *x, int64_t k, tc_err *err) {
  const tc_op op = TC_OP_DIAG;
  if (x->ndim != 1 && x->ndim != 2) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "needs a 1-D or 2-D tensor, not %d-D", x->ndim);
    return NULL;
  }
  if (tc_check_supported(op, x->dtype, err)) return NULL;
  int64_t len, off;
  if (x->ndim == 2) {
    diag_extent(x->shape[0], x->shape[1], x->strides[0], x->strides[1], k, &len, &off);
    int64_t stride = len > 0 ? x->strides[0] + x->strides[1] : 1;
    return tc_view(x, 1, &len, &stride, x->offset + off, err);
  }
  uint64_t uk = k < 0 ? 0 - (uint64_t)k : (uint64_t)k, un = (uint64_t)x->shape[0] + uk;
  if (un > (uint64_t)INT64_MAX / 2) {
    tc_err_set(err, TC_E_OOM, (int)op, (int)x->dtype, "a matrix with diagonal %lld is too large", (long long)k);
    return NULL;
  }
  int64_t shape[2] = {(int64_t)un, (int64_t)un};
  tc_tensor *zero = tc_scalar_i64(0, true, err), *out = NULL;
  if (zero) out = tc_full(2, shape, zero, (int)x->dtype, err);
  tc_tensor_free(zero);
  if (!out) { if (err) err->op = (int)op; return NULL; }
  diag_extent(shape[0], shape[1], out->strides[0], out->strides[1], k, &len, &off);
  int64_t stride = out->strides[0] + out->strides[1];
  tc_tensor *v = tc_view(out, 1, &len, &stride, off, err);
  if (!v || tc_copy_into(v, x, err) != 0) {
    tc_tensor_free(out);
    out = NULL;
    tc_annotate(err, op, (int)x->dtype);
  }
  tc_tensor_free(v);
  return out;
}
