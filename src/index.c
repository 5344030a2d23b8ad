/* Indexing and scatter (SPEC 5.5, 5.6): subscripts x[...] (basic items are
 * views; an integer tensor along axis 0 and a bool mask gather), take,
 * take_along_axis, dynamic_slice, scatter and indexed assignment.
 *
 * Gather and scatter share one geometry. For take along axis a, the
 * selection has shape x.shape[:a] + idx.shape + x.shape[a+1:]; x and idx
 * are both described in those coordinates (x with stride 0 along the index
 * dims, idx with stride 0 along the others), so element p of the selection
 * is x's element at x_view[p] + k * x.strides[a] with k = idx_view[p].
 * Scatter walks the selection in row-major order, which is "index order":
 * for "set" the last update to an element wins, the other reductions
 * combine every update in that order (bitwise reproducible on any engine
 * that keeps the order per element). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static const char *const mode_names[] = {"error", "clip", "wrap", "fill", "drop"};
static const char *const red_names[] = {"set", "add", "mul", "max", "min"};

const char *tc_index_mode_name(tc_index_mode m) { return mode_names[m]; }
const char *tc_scatter_red_name(tc_scatter_red r) { return red_names[r]; }
int tc_index_mode_from_name(const char *name) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(mode_names[i], name)) return i;
  return -1;
}
int tc_scatter_red_from_name(const char *name) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(red_names[i], name)) return i;
  return -1;
}

/* ---- helpers ---- */
static int bad(tc_err *err, int op, int dt, const char *msg) {
  return tc_err_set(err, TC_E_BAD_ARG, op, dt, "%s", msg);
}

/* Index errors name the axis, the index and the size, as NumPy does; for
 * an index tensor also the position in it (which is err's index field),
 * for a scalar subscript the index itself. */
static int out_of_bounds(tc_err *err, int op, int dt, int64_t value, bool uns, int64_t axis, int64_t n, int posnd,
                         const int64_t *pos) {
  char where[320] = "";
  if (pos && posnd > 0) {
    char b[280];
    tc_format_dims(b, sizeof b, posnd, pos);
    snprintf(where, sizeof where, " (at position %s of the index)", b);
  }
  char v[32];
  if (uns) snprintf(v, sizeof v, "%llu", (unsigned long long)(uint64_t)value);   /* an unsigned index tensor's element */
  else snprintf(v, sizeof v, "%lld", (long long)value);
  tc_err_set(err, TC_E_INDEX, op, dt, "index %s is out of bounds for axis %lld with size %lld%s", v, (long long)axis,
             (long long)n, where);
  if (err && err->code == TC_E_INDEX) {
    if (pos) tc_err_set_index(err, posnd, pos);
    else tc_err_set_index(err, 1, &value);
  }
  return -1;
}

/* Mode "error": every index must lie in [-n, n); checked over the whole
 * index tensor on its engine before anything is computed. */
static int check_range(int op, tc_tensor *idx, int64_t axis, int64_t n, int dt, tc_err *err) {
  if (tc_numel(idx) == 0) return 0;
  tc_tensor *m = tc_to_engine(idx, tc_get_engine(), err);
  if (!m) return -1;
  tc_call c = {.kind = TC_CALL_FIND, .dtype = m->dtype, .nin = 1, .in = {m}, .pred = TC_PRED_RANGE, .found = -1,
               .lo = -n, .hi = n - 1};
  int rc = tc_run_call(&c, err);
  if (rc == 0 && c.found >= 0) {
    int64_t pos[TC_MAX_DIMS], off = m->offset, value = 0;
    tc_unravel(c.found, m->ndim, m->shape, pos);
    for (int i = 0; i < m->ndim; i++) off += pos[i] * m->strides[i];
    tc_tensor *one = tc_view(m, 0, NULL, NULL, off, err);
    rc = one ? tc_scalar_to_i64(one, &value, err) : -1;
    tc_tensor_free(one);
    if (rc == 0) rc = out_of_bounds(err, op, dt, value, tc_dtype_is_unsigned(m->dtype), axis, n, m->ndim, pos);
  }
  tc_tensor_free(m);
  return rc;
}

/* The selection shape of take/scatter along axis a with index shape idx. */
static int selection_shape(int op, tc_tensor *x, int64_t a, tc_tensor *idx, int *nd, int64_t *shape, tc_err *err) {
  *nd = x->ndim - 1 + idx->ndim;
  if (*nd > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_BAD_ARG, op, (int)x->dtype, "the result would have %d dimensions (at most %d)", *nd,
                      TC_MAX_DIMS);
  int j = 0;
  for (int d = 0; d < a; d++) shape[j++] = x->shape[d];
  for (int d = 0; d < idx->ndim; d++) shape[j++] = idx->shape[d];
  for (int d = (int)a + 1; d < x->ndim; d++) shape[j++] = x->shape[d];
  return 0;
}

/* x and idx in selection coordinates (see the top of the file). */
static tc_tensor *x_in_selection(tc_tensor *x, int64_t a, int idxnd, int nd, const int64_t *shape, tc_err *err) {
  int64_t st[TC_MAX_DIMS];
  int j = 0;
  for (int d = 0; d < a; d++) st[j++] = x->strides[d];
  for (int d = 0; d < idxnd; d++) st[j++] = 0;
  for (int d = (int)a + 1; d < x->ndim; d++) st[j++] = x->strides[d];
  return tc_view(x, nd, shape, st, x->offset, err);
}

static tc_tensor *idx_in_selection(tc_tensor *idx, int64_t a, int nd, const int64_t *shape, tc_err *err) {
  int64_t st[TC_MAX_DIMS] = {0};
  for (int d = 0; d < idx->ndim; d++) st[a + d] = idx->strides[d];
  return tc_view(idx, nd, shape, st, idx->offset, err);
}

static int check_index_dtype(int op, tc_tensor *idx, tc_err *err) {
  /* an empty index of any dtype (the literal [] is f64) selects nothing */
  if (tc_dtype_class(idx->dtype) == TC_CLASS_INT || (tc_numel(idx) == 0 && idx->ndim > 0)) return 0;
  return tc_err_set(err, TC_E_BAD_ARG, op, (int)idx->dtype, "indices must be integers, not %s",
                    tc_dtype_name(idx->dtype));
}

/* The fill value of mode "fill" in x's dtype (NaN by default for floats). */
static tc_tensor *fill_value(int op, tc_dtype dt, tc_tensor *fill, tc_err *err) {
  tc_class c = tc_dtype_class(dt);
  if (!fill) {
    if (c == TC_CLASS_FLT) {
      tc_tensor *nan = tc_scalar_f64(__builtin_nan(""), true, err);
      tc_tensor *r = nan ? tc_cast(nan, dt, err) : NULL;
      tc_tensor_free(nan);
      return r;
    }
    if (tc_semantics_index() == TC_SEM_INDEX_JAX) {   /* jnp.take's fills: the most negative integer, the largest unsigned, true */
      int64_t lo, hi;
      tc_int_range(dt, &lo, &hi);   /* -1 cast to an unsigned dtype is its largest value, 1 to bool true */
      tc_tensor *k = tc_scalar_i64(c == TC_CLASS_BOOL ? 1 : tc_dtype_is_unsigned(dt) ? -1 : lo, false, err);
      tc_tensor *r = k ? tc_cast(k, dt, err) : NULL;
      tc_tensor_free(k);
      return r;
    }
    tc_err_set(err, TC_E_BAD_ARG, op, (int)dt, "mode \"fill\" on %s needs fill_value= (there is no NaN for %s)",
               tc_dtype_name(dt), c == TC_CLASS_BOOL ? "bool" : "integers");
    return NULL;
  }
  tc_class fc = tc_dtype_class(fill->dtype);
  if (fill->ndim != 0 || (c == TC_CLASS_INT && fc == TC_CLASS_FLT) || (c == TC_CLASS_BOOL && fc != TC_CLASS_BOOL)) {
    tc_err_set(err, TC_E_BAD_ARG, op, (int)dt, "fill_value must be a single %s for a %s tensor, not %s%s",
               c == TC_CLASS_BOOL ? "bool" : c == TC_CLASS_INT ? "integer" : "number", tc_dtype_name(dt),
               fill->ndim ? "a tensor of " : "", tc_dtype_name(fill->dtype));
    return NULL;
  }
  return tc_value_as(fill, dt, (tc_op)(op < 0 ? TC_OP_TAKE : op), err);
}

/* An index tensor as i64 for the kernels. A u64 index above the i64
 * maximum would read as a negative one (counting from the end): where the
 * mode lets an index be out of range it becomes n instead (past the end:
 * clipped, filled or dropped), and under wrap its remainder mod n. */
static tc_tensor *index_i64(tc_tensor *iv, int64_t n, tc_index_mode mode, tc_err *err) {
  if (iv->dtype != TC_DT_U64 || mode == TC_MODE_ERROR || (mode == TC_MODE_WRAP && n == 0))
    return tc_operand(iv, TC_DT_I64, err);
  tc_tensor *k = tc_scalar_i64(n, true, err);
  tc_tensor *r = k ? tc_binary(mode == TC_MODE_WRAP ? TC_OP_REM : TC_OP_MINIMUM, iv, k, err) : NULL;
  tc_tensor *out = r ? tc_operand(r, TC_DT_I64, err) : NULL;
  tc_tensor_free(k);
  tc_tensor_free(r);
  return out;
}

/* Gather into a new tensor of the selection's shape: xv and iv are in
 * selection coordinates (iv any integer dtype), x's axis has length n and
 * stride ast. */
static tc_tensor *gather(int op, tc_tensor *xv, tc_tensor *iv, int64_t ast, int64_t n, tc_index_mode mode,
                         tc_tensor *fill, tc_err *err) {
  tc_tensor *out = tc_tensor_new(xv->dtype, xv->ndim, xv->shape, err);
  if (!out || tc_numel(out) == 0) return out;
  if (n == 0 && mode != TC_MODE_FILL) {
    tc_tensor_free(out);
    tc_err_set(err, TC_E_INDEX, op, (int)xv->dtype, "cannot take elements from an empty axis (mode \"%s\")",
               tc_index_mode_name(mode));
    return NULL;
  }
  tc_tensor *i64 = index_i64(iv, n, mode, err);
  tc_call c = {.kind = TC_CALL_GATHER, .dtype = xv->dtype, .nin = fill ? 3 : 2, .in = {xv, i64, fill}, .out = out,
               .axis_stride = ast, .axis_len = n, .mode = mode};
  if (!i64 || tc_run_call(&c, err) != 0) { tc_tensor_free(out); out = NULL; }
  tc_tensor_free(i64);
  return out;
}

/* ---- take, take_along_axis ---- */
static int check_take_mode(int op, tc_index_mode mode, tc_tensor *fill, tc_err *err) {
  if (mode == TC_MODE_DROP) return bad(err, op, -1, "mode must be \"error\", \"clip\", \"wrap\" or \"fill\"");
  if (fill && mode != TC_MODE_FILL) return bad(err, op, -1, "fill_value is only used with mode=\"fill\"");
  return 0;
}

static tc_tensor *take_impl(int op, tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
                            tc_err *err) {
  int64_t a = 0, shape[TC_MAX_DIMS];
  int nd;
  if (check_index_dtype(op, idx, err) || check_take_mode(op, mode, fill, err)) return NULL;
  if (tc_norm_axis(axis, x->ndim, (tc_op)(op < 0 ? TC_OP_TAKE : op), &a, err) != 0) return NULL;
  tc_op sop = op < 0 ? TC_OP_TAKE : (tc_op)op;
  if (!tc_op_supported(sop, x->dtype, tc_get_engine())) { tc_unsupported(sop, x->dtype, err); return NULL; }
  if (selection_shape(op, x, a, idx, &nd, shape, err) != 0) return NULL;
  int64_t n = x->shape[a];
  if (mode == TC_MODE_ERROR && check_range(op, idx, a, n, (int)x->dtype, err) != 0) return NULL;
  tc_tensor *fv = mode == TC_MODE_FILL ? fill_value(op, x->dtype, fill, err) : NULL;
  if (mode == TC_MODE_FILL && !fv) return NULL;
  tc_tensor *xe = tc_operand(x, x->dtype, err), *xv = NULL, *iv = NULL, *out = NULL;
  if (xe) xv = x_in_selection(xe, a, idx->ndim, nd, shape, err);
  if (xv) iv = idx_in_selection(idx, a, nd, shape, err);
  if (iv) out = gather(op, xv, iv, xe->strides[a], n, mode, fv, err);
  tc_tensor_free(iv);
  tc_tensor_free(xv);
  tc_tensor_free(xe);
  tc_tensor_free(fv);
  return out;
}

/* Mode "clip" as tenferro clamps, without counting negatives from the end
 * (SPEC 19 item 7): idx with its negatives made 0 (else idx itself, a new reference). */
static tc_tensor *clamp_negatives(tc_tensor *idx, tc_index_mode mode, tc_err *err) {
  if (mode != TC_MODE_CLIP || tc_semantics_index() != TC_SEM_INDEX_CLAMP || tc_dtype_class(idx->dtype) != TC_CLASS_INT ||
      tc_dtype_is_unsigned(idx->dtype))
    return tc_tensor_ref(idx);
  tc_tensor *zero = tc_scalar_i64(0, true, err), *r = zero ? tc_binary(TC_OP_MAXIMUM, idx, zero, err) : NULL;
  tc_tensor_free(zero);
  return r;
}

tc_tensor *tc_take(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill, tc_err *err) {
  tc_tensor *k = clamp_negatives(idx, mode, err);
  tc_tensor *r = k ? take_impl(TC_OP_TAKE, x, k, axis, mode, fill, err) : NULL;
  tc_tensor_free(k);
  if (!r) tc_annotate(err, TC_OP_TAKE, (int)x->dtype);
  return r;
}

static tc_tensor *take_along(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
                             tc_err *err);
tc_tensor *tc_take_along_axis(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
                              tc_err *err) {
  tc_tensor *k = clamp_negatives(idx, mode, err);
  tc_tensor *r = k ? take_along(x, k, axis, mode, fill, err) : NULL;
  tc_tensor_free(k);
  return r;
}

static tc_tensor *take_along(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
                             tc_err *err) {
  const int op = TC_OP_TAKE_ALONG_AXIS;
  int64_t a = 0, shape[TC_MAX_DIMS], xst[TC_MAX_DIMS];
  if (check_index_dtype(op, idx, err) || check_take_mode(op, mode, fill, err)) return NULL;
  if (tc_norm_axis(axis, x->ndim, (tc_op)op, &a, err) != 0) return NULL;
  if (!tc_op_supported((tc_op)op, x->dtype, tc_get_engine())) { tc_unsupported((tc_op)op, x->dtype, err); return NULL; }
  if (idx->ndim != x->ndim) {
    tc_err_set(err, TC_E_BAD_ARG, op, (int)x->dtype, "idx has %d dimension%s and x has %d; they must be equal", idx->ndim,
               idx->ndim == 1 ? "" : "s", x->ndim);
    return NULL;
  }
  for (int d = 0; d < x->ndim; d++) {
    if (d == a) { shape[d] = idx->shape[d]; continue; }
    int64_t xs = x->shape[d], is = idx->shape[d];
    if (xs != is && xs != 1 && is != 1) {
      char sx[256], si[256];
      tc_format_dims(sx, sizeof sx, x->ndim, x->shape);
      tc_format_dims(si, sizeof si, idx->ndim, idx->shape);
      tc_err_set(err, TC_E_SHAPE, op, (int)x->dtype, "idx of shape %s does not broadcast against x of shape %s outside axis %lld",
                 si, sx, (long long)a);
      return NULL;
    }
    shape[d] = xs == 1 ? is : xs;
  }
  int64_t n = x->shape[a];
  if (mode == TC_MODE_ERROR && check_range(op, idx, a, n, (int)x->dtype, err) != 0) return NULL;
  tc_tensor *fv = mode == TC_MODE_FILL ? fill_value(op, x->dtype, fill, err) : NULL;
  if (mode == TC_MODE_FILL && !fv) return NULL;
  tc_tensor *xe = tc_operand(x, x->dtype, err), *xv = NULL, *iv = NULL, *out = NULL;
  if (xe) {
    for (int d = 0; d < x->ndim; d++) xst[d] = d == a || xe->shape[d] != shape[d] ? 0 : xe->strides[d];
    xv = tc_view(xe, x->ndim, shape, xst, xe->offset, err);
  }
  if (xv) iv = tc_view_broadcast(idx, x->ndim, shape, err);
  if (iv) out = gather(op, xv, iv, xe->strides[a], n, mode, fv, err);
  tc_tensor_free(iv);
  tc_tensor_free(xv);
  tc_tensor_free(xe);
  tc_tensor_free(fv);
  if (!out) tc_annotate(err, (tc_op)op, (int)x->dtype);
  return out;
}

/* ---- dynamic_slice ---- */
tc_tensor *tc_dynamic_slice(tc_tensor *x, int nstarts, const int64_t *starts, int nsizes, const int64_t *sizes,
                            tc_err *err) {
  const int op = TC_OP_DYNAMIC_SLICE;
  if (!tc_op_supported((tc_op)op, x->dtype, tc_get_engine())) { tc_unsupported((tc_op)op, x->dtype, err); return NULL; }
  if (nstarts != x->ndim || nsizes != x->ndim) {
    tc_err_set(err, TC_E_BAD_ARG, op, (int)x->dtype, "needs one start and one size per dimension (%d), got %d and %d",
               x->ndim, nstarts, nsizes);
    return NULL;
  }
  int64_t shape[TC_MAX_DIMS], off = x->offset;
  bool empty = tc_numel(x) == 0;   /* its strides may be saturated: no offset arithmetic */
  for (int d = 0; d < x->ndim; d++) {
    int64_t n = x->shape[d], sz = sizes[d], s = starts[d];
    if (sz < 0 || sz > n) {
      tc_err_set(err, TC_E_BAD_ARG, op, (int)x->dtype, "size %lld does not fit axis %d of size %lld", (long long)sz, d,
                 (long long)n);
      return NULL;
    }
    if (s < 0 && tc_semantics_index() != TC_SEM_INDEX_CLAMP) s += n;   /* no overflow: s >= INT64_MIN, n >= 0 */
    if (s < 0) s = 0;
    if (s > n - sz) s = n - sz;
    shape[d] = sz;
    off += sz > 0 && !empty ? s * x->strides[d] : 0;
  }
  int64_t numel;
  if (tc_shape_numel(x->ndim, shape, &numel) && numel == 0) off = x->offset;
  return tc_view(x, x->ndim, shape, x->strides, off, err);
}

/* ---- scatter ---- */
static bool can_broadcast(int nf, const int64_t *sf, int nt, const int64_t *st) {
  if (nf > nt) return false;
  for (int i = 0; i < nf; i++) {
    int64_t a = sf[nf - 1 - i], b = st[nt - 1 - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

/* updates (what) cast to dt by the weak rules and broadcast to a
 * selection of shape shape[nd], on the current engine. */
static tc_tensor *updates_view(int op, tc_dtype dt, tc_tensor *updates, int nd, const int64_t *shape, const char *what,
                               tc_err *err) {
  int lead = 0;   /* leading axes of length 1 beyond the selection's go, as in NumPy (a[:] = [[1, 2, 3]]) */
  while (updates->ndim - lead > nd && updates->shape[lead] == 1) lead++;
  if (!can_broadcast(updates->ndim - lead, updates->shape + lead, nd, shape)) {
    char su[256], ss[256];
    tc_format_dims(su, sizeof su, updates->ndim, updates->shape);
    tc_format_dims(ss, sizeof ss, nd, shape);
    tc_err_set(err, TC_E_SHAPE, op, (int)dt, "%s of shape %s do not broadcast to the selection %s", what, su, ss);
    return NULL;
  }
  tc_tensor *u = tc_value_as(updates, dt, (tc_op)(op < 0 ? TC_OP_SCATTER : op), err);
  tc_tensor *ue = u ? tc_operand(u, dt, err) : NULL;
  tc_tensor *ul = ue ? tc_view(ue, ue->ndim - lead, ue->shape + lead, ue->strides + lead, ue->offset, err) : NULL;
  tc_tensor *uv = ul ? tc_view_broadcast(ul, nd, shape, err) : NULL;
  tc_tensor_free(u);
  tc_tensor_free(ue);
  tc_tensor_free(ul);
  return uv;
}

/* The scatter kernel over operands in selection coordinates: element p of
 * the selection is wv's element p + k * ast, k = iv[p] along an axis of
 * length len. */
static int scatter_run(int op, tc_tensor *wv, tc_tensor *iv, tc_tensor *uv, int64_t ast, int64_t len,
                       tc_scatter_red red, tc_index_mode mode, tc_err *err) {
  if (tc_numel(wv) == 0) return 0;
  if (len == 0 && mode == TC_MODE_CLIP)
    return tc_err_set(err, TC_E_INDEX, op, (int)wv->dtype, "cannot scatter into an empty axis (mode \"clip\")");
  tc_call c = {.kind = TC_CALL_SCATTER, .dtype = wv->dtype, .nin = 2, .in = {iv, uv}, .out = wv,
               .axis_stride = ast, .axis_len = len, .mode = mode, .red = red};
  return tc_run_call(&c, err);
}

/* Scatters updates into the view w (in place) along axis a. */
static int scatter_into(int op, tc_tensor *w, tc_tensor *idx, tc_tensor *updates, int64_t a, tc_scatter_red red,
                        tc_index_mode mode, bool checked, tc_err *err) {
  int64_t shape[TC_MAX_DIMS];
  int nd;
  if (selection_shape(op, w, a, idx, &nd, shape, err) != 0) return -1;
  int64_t n = w->shape[a];
  if (!checked && mode == TC_MODE_ERROR && check_range(op, idx, a, n, (int)w->dtype, err) != 0) return -1;
  tc_tensor *uv = updates_view(op, w->dtype, updates, nd, shape, "updates", err);
  if (!uv) return -1;
  int rc = -1;
  tc_tensor *ie = index_i64(idx, n, mode, err), *iv = NULL, *wv = NULL;
  if (ie) iv = idx_in_selection(ie, a, nd, shape, err);
  if (iv) wv = x_in_selection(w, a, idx->ndim, nd, shape, err);
  if (wv) rc = scatter_run(op, wv, iv, uv, w->strides[a], n, red, mode, err);
  tc_tensor_free(wv);
  tc_tensor_free(iv);
  tc_tensor_free(ie);
  tc_tensor_free(uv);
  return rc;
}

static int check_scatter_red(int op, tc_dtype dt, tc_scatter_red red, tc_err *err) {
  tc_call c = {.kind = TC_CALL_SCATTER, .dtype = dt, .nin = 2, .red = red};
  const tc_engine *e = tc_engines[tc_get_engine()];
  if (e && e->supports(&c)) return 0;
  return tc_err_set(err, TC_E_DTYPE, op, (int)dt, "reduce=\"%s\" is not supported for %s on %s%s", tc_scatter_red_name(red),
                    tc_dtype_name(dt), tc_engine_name(tc_get_engine()),
                    dt == TC_DT_BOOL ? " (use \"max\" for or, \"min\" for and)" : "");
}

static tc_tensor *scatter(tc_tensor *x, tc_tensor *idx, tc_tensor *updates, int64_t axis, tc_scatter_red red,
                          tc_index_mode mode, tc_err *err);
tc_tensor *tc_scatter(tc_tensor *x, tc_tensor *idx, tc_tensor *updates, int64_t axis, tc_scatter_red red,
                      tc_index_mode mode, tc_err *err) {
  tc_tensor *k = check_index_dtype(TC_OP_SCATTER, idx, err) ? NULL : clamp_negatives(idx, mode, err);
  tc_tensor *r = k ? scatter(x, k, updates, axis, red, mode, err) : NULL;
  tc_tensor_free(k);
  return r;
}

static tc_tensor *scatter(tc_tensor *x, tc_tensor *idx, tc_tensor *updates, int64_t axis, tc_scatter_red red,
                          tc_index_mode mode, tc_err *err) {
  const int op = TC_OP_SCATTER;
  int64_t a = 0;
  if (check_index_dtype(op, idx, err)) return NULL;
  if (mode != TC_MODE_ERROR && mode != TC_MODE_DROP && mode != TC_MODE_CLIP) {
    bad(err, op, -1, "mode must be \"error\", \"drop\" or \"clip\"");
    return NULL;
  }
  if (tc_norm_axis(axis, x->ndim, (tc_op)op, &a, err) != 0) return NULL;
  if (!tc_op_supported((tc_op)op, x->dtype, tc_get_engine())) { tc_unsupported((tc_op)op, x->dtype, err); return NULL; }
  if (check_scatter_red(op, x->dtype, red, err) != 0) return NULL;
  tc_tensor *xe = tc_operand(x, x->dtype, err), *out = NULL;
  if (xe) out = tc_clone(xe, err);
  tc_tensor_free(xe);
  if (out && scatter_into(op, out, idx, updates, a, red, mode, false, err) != 0) {
    tc_tensor_free(out);
    out = NULL;
  }
  if (out) out->weak = false;
  else tc_annotate(err, (tc_op)op, (int)x->dtype);
  return out;
}

/* ---- subscripts ---- */
/* The positions of the true elements of a bool mask, as an i64 tensor. */
tc_tensor *tc_mask_positions(tc_tensor *mask, tc_err *err) {
  tc_axes all = {.all = true};
  tc_tensor *cnt = tc_reduce(TC_OP_COUNT_NONZERO, mask, &all, false, err);
  int64_t n = 0;
  int rc = cnt ? tc_scalar_to_i64(cnt, &n, err) : -1;
  tc_tensor_free(cnt);
  if (rc != 0) return NULL;
  tc_tensor *out = tc_tensor_new(TC_DT_I64, 1, &n, err), *m = NULL;
  if (!out || n == 0) return out;
  m = tc_to_engine(mask, tc_get_engine(), err);
  tc_call c = {.kind = TC_CALL_NONZERO, .dtype = TC_DT_BOOL, .nin = 1, .in = {m}, .out = out};
  if (!m || tc_run_call(&c, err) != 0) { tc_tensor_free(out); out = NULL; }
  tc_tensor_free(m);
  return out;
}

/* ---- subscripts, as NumPy reads them ----
 * x[items] is first a basic view v: integers pick (and drop) an axis,
 * slices narrow one, None adds one of length 1, '...' stands for the
 * axes no item names. An index tensor (integers, or a bool mask, read as
 * the integer coordinates of its true elements) keeps its axis whole in v
 * and is an advanced item; once there is one, integers are advanced items
 * too (0-d index tensors), as in NumPy. The advanced items broadcast
 * together to a shape B, which replaces their axes: where the advanced
 * axes are next to each other B stands where they stood, else B comes
 * first. The selection is then a gather (read) or scatter (write) of
 * one index tensor K in selection coordinates: with one advanced axis K is
 * that item (stride ast, length len along its axis); with several K is the
 * element offset sum_j idx_j * stride_j, shifted to be >= 0, so that one
 * gather or scatter with ast = 1 serves every combination. */
typedef struct {
  int vaxis, xaxis;     /* the axis it indexes in v, and in x (-1: a 0-d bool's new axis) */
  int item;             /* the index item it comes from */
  tc_tensor *idx;       /* i64 (owned), or the item's tensor before the range check */
  bool checked;         /* known to be in [0, n) */
} adv_item;

typedef struct {
  tc_tensor *v;                 /* the basic view */
  int nadv;
  adv_item adv[TC_MAX_DIMS];
  int nd;                       /* the selection's shape */
  int64_t shape[TC_MAX_DIMS];
  tc_tensor *xv, *kv;           /* gather/scatter operands in selection coordinates (advanced items only) */
  int64_t ast, len;
  int item;                     /* the item being read */
} selection;

static void sel_free(selection *s) {
  for (int i = 0; i < s->nadv; i++) tc_tensor_free(s->adv[i].idx);
  tc_tensor_free(s->v);
  tc_tensor_free(s->xv);
  tc_tensor_free(s->kv);
}

/* Python's slice.indices(n): bounds clamped, never an error. */
static int slice_bounds(const tc_index_item *it, int64_t n, int64_t *start, int64_t *len, int64_t *step, tc_err *err) {
  int64_t st = it->has_step ? it->step : 1;
  if (st == 0) return bad(err, -1, -1, "slice step cannot be zero");
  int64_t lo, hi;
  if (st > 0) {
    lo = 0;
    hi = n;
    if (it->has_lo) { lo = it->lo < 0 ? it->lo + n : it->lo; lo = lo < 0 ? 0 : lo > n ? n : lo; }
    if (it->has_hi) { hi = it->hi < 0 ? it->hi + n : it->hi; hi = hi < 0 ? 0 : hi > n ? n : hi; }
    *len = lo < hi ? (int64_t)(((uint64_t)(hi - lo) - 1) / (uint64_t)st + 1) : 0;
  } else {
    lo = n - 1;
    hi = -1;
    if (it->has_lo) { lo = it->lo < 0 ? it->lo + n : it->lo; lo = lo < -1 ? -1 : lo > n - 1 ? n - 1 : lo; }
    if (it->has_hi) { hi = it->hi < 0 ? it->hi + n : it->hi; hi = hi < -1 ? -1 : hi > n - 1 ? n - 1 : hi; }
    *len = lo > hi ? (int64_t)(((uint64_t)(lo - hi) - 1) / (0 - (uint64_t)st) + 1) : 0;
  }
  *start = lo;
  *step = st;
  return 0;
}

/* The items' first reading: the axes they consume and add, whether one is
 * advanced, and every item a valid kind. */
static int classify(tc_tensor *x, int n, const tc_index_item *items, int *consume, bool *any_adv, tc_err *err) {
  int ell = -1, added = 0;
  *consume = 0;
  *any_adv = false;
  for (int i = 0; i < n; i++) {
    const tc_index_item *it = &items[i];
    if (it->kind == TC_IDX_ELLIPSIS) {
      if (ell >= 0) return bad(err, -1, -1, "an index can have only one '...'");
      ell = i;
    } else if (it->kind == TC_IDX_NEWAXIS) added++;
    else if (it->kind != TC_IDX_TENSOR) ++*consume;
    else {
      tc_tensor *t = it->t;
      tc_class c = tc_dtype_class(t->dtype);
      if (c == TC_CLASS_BOOL) {
        *any_adv = true;
        if (t->ndim == 0) added++;
        *consume += t->ndim;
      } else if (t->ndim == 0) {
        if (c != TC_CLASS_INT)
          return tc_err_set(err, TC_E_BAD_ARG, -1, (int)t->dtype, "an index must be an integer, not %s",
                            tc_dtype_name(t->dtype));
        ++*consume;
      } else {
        /* an empty index of any dtype (the literal [] is f64) selects nothing */
        if (c != TC_CLASS_INT && tc_numel(t) > 0)
          return tc_err_set(err, TC_E_BAD_ARG, -1, (int)t->dtype,
                            "an index must be an integer, a slice, '...', None, an integer tensor or a bool mask, not %s",
                            tc_dtype_name(t->dtype));
        *any_adv = true;
        ++*consume;
      }
    }
  }
  if (*consume > x->ndim) {
    for (int i = 0; i < n; i++) {   /* a mask with more axes than are left: the shapes differ */
      const tc_tensor *t = items[i].kind == TC_IDX_TENSOR ? items[i].t : NULL;
      if (t && t->dtype == TC_DT_BOOL && t->ndim > 0) {
        char sm[256], sx[256];
        tc_format_dims(sm, sizeof sm, t->ndim, t->shape);
        tc_format_dims(sx, sizeof sx, x->ndim, x->shape);
        return tc_err_set(err, TC_E_SHAPE, -1, -1, "a bool mask of shape %s does not fit a tensor of shape %s (%d index%s for %d dimension%s)",
                          sm, sx, *consume, *consume == 1 ? "" : "es", x->ndim, x->ndim == 1 ? "" : "s");
      }
    }
    return tc_err_set(err, TC_E_BAD_ARG, -1, -1, "too many indices: %d for a tensor of %d dimension%s", *consume,
                      x->ndim, x->ndim == 1 ? "" : "s");
  }
  if (x->ndim + added > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_BAD_ARG, -1, -1, "the result would have %d dimensions (at most %d)", x->ndim + added,
                      TC_MAX_DIMS);
  return 0;
}

static int add_adv(selection *s, int vaxis, int xaxis, tc_tensor *idx, bool checked) {
  if (!idx) return -1;
  s->adv[s->nadv++] = (adv_item){vaxis, xaxis, s->item, idx, checked};
  return 0;
}

/* The integer at a scalar item, in [0, sz) (index_out_of_bounds else). */
static int scalar_item(const tc_index_item *it, tc_dtype dt, int d, int64_t sz, int64_t *out, tc_err *err) {
  int64_t k = it->i;
  if (it->kind == TC_IDX_TENSOR && tc_scalar_to_i64(it->t, &k, err) != 0) return -1;
  if (it->kind == TC_IDX_TENSOR && tc_dtype_is_unsigned(it->t->dtype) && k < 0)   /* a u64 above the i64 maximum */
    return out_of_bounds(err, -1, (int)dt, k, true, d, sz, 0, NULL);
  if (k < -sz || k >= sz) return out_of_bounds(err, -1, (int)dt, k, false, d, sz, 0, NULL);
  *out = k < 0 ? k + sz : k;
  return 0;
}

/* The coordinates along its k axes of a k-d mask's true elements, as k
 * advanced items (of one length each: they broadcast together). */
static int mask_items(selection *s, tc_tensor *mask, int vaxis, int xaxis, tc_err *err) {
  tc_tensor *pos = tc_mask_positions(mask, err);
  if (!pos) return -1;
  int64_t inner = 1;
  for (int j = mask->ndim - 1; j >= 0 && inner > 0; j--) inner *= mask->shape[j];
  int rc = 0;
  for (int j = 0; j < mask->ndim && rc == 0; j++) {
    inner /= mask->shape[j];   /* the mask has true elements: no axis is 0 */
    if (mask->ndim == 1) { rc = add_adv(s, vaxis, xaxis, tc_tensor_ref(pos), true); break; }
    tc_tensor *p = tc_scalar_i64(inner, true, err), *m = tc_scalar_i64(mask->shape[j], true, err);
    tc_tensor *q = p && m ? tc_binary(TC_OP_FLOOR_DIV, pos, p, err) : NULL;
    rc = add_adv(s, vaxis + j, xaxis + j, q ? tc_binary(TC_OP_MOD, q, m, err) : NULL, true);
    tc_tensor_free(q);
    tc_tensor_free(p);
    tc_tensor_free(m);
  }
  tc_tensor_free(pos);
  return rc;
}

/* The basic view and the advanced items (see above). */
/* shape_mismatch: the bool mask t does not match x's axes from d on. */
static int mask_mismatch(const tc_tensor *x, const tc_tensor *t, int d, tc_err *err) {
  char sm[256], sx[256], sa[256], axes[64];
  int last = d + t->ndim - 1 < x->ndim ? d + t->ndim - 1 : x->ndim - 1;
  tc_format_dims(sm, sizeof sm, t->ndim, t->shape);
  tc_format_dims(sx, sizeof sx, x->ndim, x->shape);
  tc_format_dims(sa, sizeof sa, last - d + 1, x->shape + d);
  if (last == d) snprintf(axes, sizeof axes, "axis %d", d);
  else snprintf(axes, sizeof axes, "axes %d to %d", d, last);
  return tc_err_set(err, TC_E_SHAPE, -1, -1, "a bool mask of shape %s does not match the shape %s of %s (the tensor's shape is %s)",
                    sm, sa, axes, sx);
}

static int basic_view(tc_tensor *x, int n, const tc_index_item *items, int consume, bool any_adv, selection *s,
                      tc_err *err) {
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS], off = x->offset;
  int d = 0, nd = 0;
  bool empty = tc_numel(x) == 0;   /* its strides may be saturated: no offset arithmetic */
  for (int i = 0; i < n; i++) {
    const tc_index_item *it = &items[i];
    tc_tensor *t = it->kind == TC_IDX_TENSOR ? it->t : NULL;
    s->item = i;
    if (it->kind == TC_IDX_ELLIPSIS) {
      for (int k = 0; k < x->ndim - consume; k++, d++) {
        shape[nd] = x->shape[d];
        strides[nd++] = x->strides[d];
      }
      continue;
    }
    if (it->kind == TC_IDX_NEWAXIS || (t && t->dtype == TC_DT_BOOL && t->ndim == 0)) {
      if (t) {   /* x[True] adds an axis and takes its one element ([0]), x[False] takes none ([]) */
        int64_t b = 0, zero = 0;
        if (tc_scalar_to_i64(t, &b, err) != 0) return -1;
        int64_t len = b ? 1 : 0;
        if (add_adv(s, nd, -1, tc_tensor_from_host(TC_DT_I64, 1, &len, &zero, err), true) != 0) return -1;
      }
      shape[nd] = 1;
      strides[nd++] = 0;
      continue;
    }
    if (t && t->dtype == TC_DT_BOOL) {   /* a mask over the next t->ndim axes */
      if (d + t->ndim > x->ndim || memcmp(t->shape, x->shape + d, sizeof(int64_t) * (size_t)t->ndim))
        return mask_mismatch(x, t, d, err);
      if (tc_numel(t) > 0 && mask_items(s, t, nd, d, err) != 0) return -1;
      if (tc_numel(t) == 0) {   /* no true element: an empty index on each axis */
        int64_t zero = 0;
        for (int j = 0; j < t->ndim; j++)
          if (add_adv(s, nd + j, d + j, tc_tensor_new(TC_DT_I64, 1, &zero, err), true) != 0) return -1;
      }
      for (int j = 0; j < t->ndim; j++, d++) {
        shape[nd] = x->shape[d];
        strides[nd++] = x->strides[d];
      }
      continue;
    }
    int64_t sz = x->shape[d], st = x->strides[d];
    if (it->kind == TC_IDX_INT || (t && t->ndim == 0)) {
      int64_t k = 0;
      if (scalar_item(it, x->dtype, d, sz, &k, err) != 0) return -1;
      if (any_adv) {   /* an advanced item of its own: keep the axis */
        if (add_adv(s, nd, d, tc_scalar_i64(k, false, err), true) != 0) return -1;
        shape[nd] = sz;
        strides[nd++] = st;
      } else if (!empty) off += k * st;
    } else if (it->kind == TC_IDX_SLICE) {
      int64_t start = 0, len = 0, step = 1;
      if (slice_bounds(it, sz, &start, &len, &step, err) != 0) return -1;
      if (len > 0 && !empty) off += start * st;
      shape[nd] = len;
      strides[nd++] = len > 1 && !empty ? st * step : st;
    } else {   /* an integer tensor: keep the axis whole */
      if (add_adv(s, nd, d, tc_tensor_ref(t), false) != 0) return -1;
      shape[nd] = sz;
      strides[nd++] = st;
    }
    d++;
  }
  for (; d < x->ndim; d++) {
    shape[nd] = x->shape[d];
    strides[nd++] = x->strides[d];
  }
  int64_t numel;
  if (tc_shape_numel(nd, shape, &numel) && numel == 0) off = x->offset;
  s->v = tc_view(x, nd, shape, strides, off, err);
  return s->v ? 0 : -1;
}

/* The broadcast shape of the advanced items (tc_broadcast_shapes, one at
 * a time), or shape_mismatch naming all their shapes, as NumPy does. */
static int adv_shape(const selection *s, int *nb, int64_t *b, tc_err *err) {
  *nb = 0;
  for (int i = 0; i < s->nadv; i++) {
    const tc_tensor *t = s->adv[i].idx;
    int64_t r[TC_MAX_DIMS];
    if (tc_broadcast_shapes(*nb, b, t->ndim, t->shape, nb, r, (tc_op)-1, NULL) != 0) {
      char all[1024] = "", one[256];
      for (int j = 0; j < s->nadv; j++) {
        tc_format_dims(one, sizeof one, s->adv[j].idx->ndim, s->adv[j].idx->shape);
        size_t l = strlen(all);
        snprintf(all + l, sizeof all - l, "%s%s", j ? " " : "", one);
      }
      return tc_err_set(err, TC_E_SHAPE, -1, -1, "index tensors of shapes %s do not broadcast together", all);
    }
    memcpy(b, r, sizeof(int64_t) * (size_t)*nb);
  }
  return 0;
}

/* K = sum_j idx_j * stride_j - lo, lo the lowest such offset, i64. */
static tc_tensor *offsets(const selection *s, int64_t lo, tc_err *err) {
  tc_tensor *acc = tc_scalar_i64(-lo, true, err);
  for (int i = 0; i < s->nadv && acc; i++) {
    const adv_item *a = &s->adv[i];
    int64_t n = s->v->shape[a->vaxis];
    tc_tensor *k = tc_scalar_i64(n, true, err), *st = tc_scalar_i64(s->v->strides[a->vaxis], true, err);
    tc_tensor *norm = k && !a->checked ? tc_binary(TC_OP_MOD, a->idx, k, err) : k ? tc_tensor_ref(a->idx) : NULL;
    tc_tensor *term = norm && st ? tc_binary(TC_OP_MUL, norm, st, err) : NULL;
    tc_tensor *sum = term ? tc_binary(TC_OP_ADD, acc, term, err) : NULL;
    tc_tensor_free(k);
    tc_tensor_free(st);
    tc_tensor_free(norm);
    tc_tensor_free(term);
    tc_tensor_free(acc);
    acc = sum;
  }
  return acc;
}

/* x[items] read as a selection (the items as classify read them): the
 * basic view, and for advanced items the gather/scatter operands. On
 * return s->nadv == 0 means s->v is the whole answer. */
static int select_items(tc_tensor *x, int n, const tc_index_item *items, int consume, bool any_adv, selection *s,
                        tc_err *err) {
  memset(s, 0, sizeof *s);
  if (basic_view(x, n, items, consume, any_adv, s, err) != 0) return -1;
  tc_tensor *v = s->v;
  s->nd = v->ndim;
  memcpy(s->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  if (!s->nadv) return 0;
  for (int i = 0; i < s->nadv; i++) {
    adv_item *a = &s->adv[i];
    if (!a->checked && check_range(-1, a->idx, a->xaxis, v->shape[a->vaxis], (int)x->dtype, err) != 0) return -1;
    tc_tensor *w = tc_operand(a->idx, TC_DT_I64, err);
    if (!w) return -1;
    tc_tensor_free(a->idx);
    a->idx = w;
  }
  int nb;
  int64_t b[TC_MAX_DIMS];
  if (adv_shape(s, &nb, b, err) != 0) return -1;
  int total = v->ndim - s->nadv + nb;
  if (total > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_BAD_ARG, -1, (int)x->dtype, "the result would have %d dimensions (at most %d)", total,
                      TC_MAX_DIMS);
  /* the selection: v's other axes, with B where the advanced items stood
     when they follow each other in the index, else first (NumPy: any item
     between them, even a '...' of no axes or a None, puts B first) */
  bool adjacent = true;
  for (int i = 1; i < s->nadv; i++) adjacent &= s->adv[i].item - s->adv[i - 1].item <= 1;
  int bpos = adjacent ? s->adv[0].vaxis : 0;
  int nd = 0, r = 0;
  int64_t xst[TC_MAX_DIMS], kst[TC_MAX_DIMS] = {0};
  bool is_adv[TC_MAX_DIMS] = {false};
  for (int i = 0; i < s->nadv; i++) is_adv[s->adv[i].vaxis] = true;
  for (int d = 0; d <= v->ndim; d++) {
    if (r == bpos) {
      for (int j = 0; j < nb; j++) { s->shape[nd] = b[j]; xst[nd++] = 0; }
      r = -1;   /* placed */
    }
    if (d == v->ndim) break;
    if (is_adv[d]) continue;
    s->shape[nd] = v->shape[d];
    xst[nd++] = v->strides[d];
    if (r >= 0) r++;
  }
  s->nd = nd;
  int64_t numel;
  if (!tc_shape_numel(nd, s->shape, &numel) || numel == 0) return 0;   /* nothing to gather or scatter */
  int64_t base = v->offset;
  tc_tensor *k;
  if (s->nadv == 1) {
    k = tc_tensor_ref(s->adv[0].idx);
    s->ast = v->strides[s->adv[0].vaxis];
    s->len = v->shape[s->adv[0].vaxis];
  } else {
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < s->nadv; i++) {
      int64_t reach = v->strides[s->adv[i].vaxis] * (v->shape[s->adv[i].vaxis] - 1);
      if (reach < 0) lo += reach; else hi += reach;
    }
    k = offsets(s, lo, err);
    base += lo;
    s->ast = 1;
    s->len = hi - lo + 1;
  }
  tc_tensor *kb = k ? tc_view_broadcast(k, nb, b, err) : NULL;
  tc_tensor_free(k);
  if (!kb) return -1;
  for (int j = 0; j < nb; j++) kst[bpos + j] = kb->strides[j];
  s->kv = tc_view(kb, nd, s->shape, kst, kb->offset, err);
  tc_tensor_free(kb);
  if (s->kv) s->xv = tc_view(v, nd, s->shape, xst, base, err);
  return s->xv ? 0 : -1;
}

/* A flat (1-D) view of a contiguous tensor, or a copy. */
static tc_tensor *flat(tc_tensor *x, tc_err *err) {
  tc_tensor *c = tc_is_contiguous(x) ? tc_tensor_ref(x) : tc_contiguous(x, err);
  if (!c) return NULL;
  int64_t n = tc_numel(c), one = 1;
  tc_tensor *v = tc_view(c, 1, &n, &one, c->offset, err);
  tc_tensor_free(c);
  return v;
}

/* Whether the items are one bool mask of x's shape (read through a flat view). */
static bool whole_mask(tc_tensor *x, int n, const tc_index_item *items) {
  const tc_tensor *t = n == 1 && items[0].kind == TC_IDX_TENSOR ? items[0].t : NULL;
  return t && t->dtype == TC_DT_BOOL && t->ndim == x->ndim && t->ndim > 1 &&
         !memcmp(t->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
}

/* x[i, j, ...] with one integer per axis (a loop's element access): the
 * element's offset into x's storage in *off (0), 1 for any other form, or
 * -1 with index_out_of_bounds, as the general path says it. */
int tc_element_offset(const tc_tensor *x, int n, const tc_index_item *items, int64_t *off, tc_err *err) {
  if (n != x->ndim || tc_semantics_index() != TC_SEM_INDEX_ERROR) return 1;   /* another system's: the general path */
  int64_t o = x->offset;
  for (int d = 0; d < n; d++) {
    const tc_index_item *it = &items[d];
    int64_t k = it->i, sz = x->shape[d];
    if (it->kind == TC_IDX_TENSOR) {
      if (it->t->ndim != 0 || tc_dtype_class(it->t->dtype) != TC_CLASS_INT) return 1;
      if (tc_scalar_to_i64(it->t, &k, err) != 0) return -1;
      if (tc_dtype_is_unsigned(it->t->dtype) && k < 0) return out_of_bounds(err, -1, (int)x->dtype, k, true, d, sz, 0, NULL);
    } else if (it->kind != TC_IDX_INT) {
      return 1;
    }
    if (k < -sz || k >= sz) return out_of_bounds(err, -1, (int)x->dtype, k, false, d, sz, 0, NULL);
    o += (k < 0 ? k + sz : k) * x->strides[d];
  }
  *off = o;
  return 0;
}

static tc_tensor *getitem(tc_tensor *x, int n, const tc_index_item *items, tc_err *err) {
  int64_t off;
  int e = tc_element_offset(x, n, items, &off, err);
  if (e <= 0) return e ? NULL : tc_view(x, 0, NULL, NULL, off, err);
  if (whole_mask(x, n, items)) {
    tc_tensor *xe = tc_operand(x, x->dtype, err), *f = NULL, *nz = NULL, *out = NULL;
    if (xe) f = flat(xe, err);
    if (f) nz = tc_mask_positions(items[0].t, err);
    if (nz) out = take_impl(-1, f, nz, 0, TC_MODE_CLIP, NULL, err);   /* the positions are in range */
    tc_tensor_free(nz);
    tc_tensor_free(f);
    tc_tensor_free(xe);
    return out;
  }
  selection s;
  tc_tensor *out = NULL;
  int consume;
  bool any_adv;
  if (classify(x, n, items, &consume, &any_adv, err) != 0) return NULL;
  tc_tensor *xe = any_adv ? tc_operand(x, x->dtype, err) : tc_tensor_ref(x);
  if (xe && select_items(xe, n, items, consume, any_adv, &s, err) == 0) {
    if (!s.nadv) out = tc_tensor_ref(s.v);
    else if (!s.xv) out = tc_tensor_new(x->dtype, s.nd, s.shape, err);
    else out = gather(-1, s.xv, s.kv, s.ast, s.len, TC_MODE_CLIP, NULL, err);   /* in range: checked */
  }
  if (xe) sel_free(&s);
  tc_tensor_free(xe);
  return out;
}

/* Whether x can be written in place: nothing else holds it or its storage
 * (no other name, view or value), the storage is writable memory (not a
 * file mapping) on the engine in use. */
static bool writable_alone(const tc_tensor *x) {
  return x->refcnt == 1 && x->storage->refcnt == 1 && !x->storage->map && x->storage->engine == tc_get_engine();
}

/* x with the selected elements replaced by val: x itself, written in place,
 * where nothing else can see it (writable_alone), so that setting one
 * element costs that element, not a copy of x; else a copy (copy on
 * write). Everything that can fail is checked before the first write, and
 * interrupts are held off while writing in place (tc_interrupt_hold), so
 * a failed assignment leaves x as it was. */
/* x's element at offset off, as a 0-d view would show it, without a view's
 * allocation (the fields a 0-d tensor has; its storage stays x's). */
static tc_tensor element_at(const tc_tensor *x, int64_t off) {
  tc_tensor el;
  el.refcnt = 1;
  el.dtype = x->dtype;
  el.weak = false;
  el.ndim = 0;
  el.offset = off;
  el.storage = x->storage;
  return el;
}

/* One element of a CPU tensor nothing else holds, set from a 0-d value:
 * written directly (1), or 0 for the general path. */
static int set_element(tc_tensor *x, int n, const tc_index_item *items, tc_tensor *val, tc_err *err) {
  int64_t off;
  if (val->ndim != 0 || !writable_alone(x) || x->storage->engine != TC_ENGINE_CPU || !tc_tensor_host_data(val) ||
      tc_interrupt_flag)   /* the general path reports it */
    return 0;
  int e = tc_element_offset(x, n, items, &off, err);
  if (e) return e < 0 ? -1 : 0;
  size_t es = tc_dtype_size(x->dtype);
  char *to = (char *)x->storage->data + off * (int64_t)es;
  if (val->dtype == x->dtype && !val->weak) {
    memcpy(to, tc_tensor_host_data(val), es);
    return 1;
  }
  /* the value in x's dtype (as tc_value_as makes it), cast by the engine's kernel straight into the element */
  if (tc_value_fits(val, x->dtype, TC_OP_SCATTER, err) != 0) return -1;
  const tc_engine *cpu = tc_engines[TC_ENGINE_CPU];
  if (tc_get_engine() != TC_ENGINE_CPU) return 0;
  if (val->dtype == x->dtype) {
    memcpy(to, tc_tensor_host_data(val), es);
    return 1;
  }
  tc_cast_fn cv = cpu->scalar_cast ? cpu->scalar_cast(val->dtype, x->dtype) : NULL;
  if (!cv) return 0;
  cv(1, to, tc_tensor_host_data(val), 1);
  return 1;
}

int tc_update_element(tc_op op, tc_tensor *x, int64_t off, tc_tensor *v, tc_err *err) {
  if (!writable_alone(x) || x->storage->engine != TC_ENGINE_CPU) return 1;
  tc_tensor el = element_at(x, off);
  return tc_scalar_into(op, &el, v, err);
}

static tc_tensor *setitem(tc_tensor *x, int n, const tc_index_item *items, tc_tensor *val, tc_err *err) {
  if (!tc_op_supported(TC_OP_SCATTER, x->dtype, tc_get_engine())) { tc_unsupported(TC_OP_SCATTER, x->dtype, err); return NULL; }
  int done = set_element(x, n, items, val, err);
  if (done < 0) return NULL;
  if (done) {
    x->weak = false;
    return tc_tensor_ref(x);
  }
  int consume;
  bool any_adv;
  if (classify(x, n, items, &consume, &any_adv, err) != 0) return NULL;
  tc_tensor *out = NULL;
  bool inplace = writable_alone(x);
  if (inplace && !tc_interrupt_hold()) {
    tc_err_set(err, TC_E_INTERRUPTED, TC_OP_SCATTER, (int)x->dtype, "interrupted; variables are unchanged");
    return NULL;
  }
  if (inplace) out = tc_tensor_ref(x);
  else {
    tc_tensor *xe = tc_operand(x, x->dtype, err);
    if (xe) out = tc_clone(xe, err);
    tc_tensor_free(xe);
    if (!out) return NULL;
  }
  int rc = -1;
  if (whole_mask(out, n, items) && tc_is_contiguous(out)) {   /* through a flat view */
    tc_tensor *w = flat(out, err), *nz = w ? tc_mask_positions(items[0].t, err) : NULL;
    if (nz) rc = scatter_into(-1, w, nz, val, 0, TC_SCATTER_SET, TC_MODE_CLIP, true, err);
    tc_tensor_free(nz);
    tc_tensor_free(w);
  } else {
    selection s;
    tc_tensor *u = NULL;
    if (select_items(out, n, items, consume, any_adv, &s, err) == 0) u = updates_view(-1, out->dtype, val, s.nd, s.shape, "values", err);
    if (u && !s.nadv) rc = tc_copy_into(s.v, u, err);
    else if (u) rc = s.xv ? scatter_run(-1, s.xv, s.kv, u, s.ast, s.len, TC_SCATTER_SET, TC_MODE_CLIP, err) : 0;
    tc_tensor_free(u);
    sel_free(&s);
  }
  if (inplace) tc_interrupt_release();
  if (rc != 0) { tc_tensor_free(out); return NULL; }
  out->weak = false;
  return out;
}

/* ---- other systems' subscripts (SPEC 19 item 7) ----
 * x[i] and x[i] = v as jax and tenferro read an integer index out of
 * range, rewritten into tcalc's in-range items: jax counts negatives from
 * the end, then a read clamps to [0, n-1] and a write out of range goes to
 * a slot past the end that is cut off afterwards (dropped); tenferro clamps
 * to [0, n-1] without counting negatives from the end. */
typedef struct {
  tc_index_item *it;
  tc_tensor *own[192];   /* at most 10 for each of at most 16 index tensors */
  int nown;
  int64_t pad[TC_MAX_DIMS];   /* 1 on an axis a dropped write goes to */
  bool any_pad;
} sem_items;

static tc_tensor *sem_keep(sem_items *s, tc_tensor *t) {
  if (t) s->own[s->nown++] = t;
  return t;
}

static tc_tensor *sem_bin(sem_items *s, tc_op op, tc_tensor *a, int64_t k, tc_err *err) {
  tc_tensor *b = a ? tc_scalar_i64(k, true, err) : NULL;
  tc_tensor *r = b ? tc_binary(op, a, b, err) : NULL;
  tc_tensor_free(b);
  return r ? sem_keep(s, r) : NULL;
}

/* The index tensor t on an axis of size sz, as the semantics reads it. */
static tc_tensor *sem_index_tensor(sem_items *s, tc_tensor *t, int64_t sz, bool write, int d, tc_err *err) {
  tc_tensor *w = sem_keep(s, tc_operand(t, TC_DT_I64, err));
  if (tc_semantics_index() == TC_SEM_INDEX_JAX) {   /* negatives from the end */
    tc_tensor *neg = sem_bin(s, TC_OP_LESS, w, 0, err);
    w = neg ? sem_keep(s, tc_where(neg, sem_bin(s, TC_OP_ADD, w, sz, err), w, err)) : NULL;
    if (write) {   /* out of range: the slot past the end */
      tc_tensor *lo = sem_bin(s, TC_OP_LESS, w, 0, err), *hi = sem_bin(s, TC_OP_GREATER_EQUAL, w, sz, err);
      tc_tensor *out = lo && hi ? sem_keep(s, tc_binary(TC_OP_LOGICAL_OR, lo, hi, err)) : NULL;
      tc_tensor *any = out ? sem_keep(s, tc_reduce(TC_OP_ANY, out, &(tc_axes){.all = true}, false, err)) : NULL;
      int64_t k = 0;
      if (!any || tc_scalar_to_i64(any, &k, err) != 0) return NULL;
      if (!k) return w;
      s->pad[d] = 1;
      s->any_pad = true;
      tc_tensor *past = sem_keep(s, tc_scalar_i64(sz, true, err));
      return past ? sem_keep(s, tc_where(out, past, w, err)) : NULL;
    }
  }
  return sem_bin(s, TC_OP_MINIMUM, sem_bin(s, TC_OP_MAXIMUM, w, 0, err), sz - 1, err);
}

/* The items rewritten into s->it: 0, or 1 where the semantics reads them
 * as tcalc does, or -1 with err. */
static int sem_rewrite(tc_tensor *x, int n, const tc_index_item *items, bool write, sem_items *s, tc_err *err) {
  int consume;
  bool any_adv;
  if (tc_semantics_index() == TC_SEM_INDEX_ERROR) return 1;
  if (classify(x, n, items, &consume, &any_adv, err) != 0) return -1;
  if (!(s->it = malloc(sizeof *s->it * (size_t)(n ? n : 1))))
    return tc_err_set(err, TC_E_OOM, -1, (int)x->dtype, "out of memory");
  memcpy(s->it, items, sizeof *s->it * (size_t)n);
  bool jax = tc_semantics_index() == TC_SEM_INDEX_JAX;
  for (int i = 0, d = 0; i < n; i++) {
    tc_index_item *it = &s->it[i];
    tc_tensor *t = it->kind == TC_IDX_TENSOR ? it->t : NULL;
    if (it->kind == TC_IDX_ELLIPSIS) d += x->ndim - consume;
    else if (t && t->dtype == TC_DT_BOOL) d += t->ndim;
    else if (it->kind == TC_IDX_SLICE) d++;
    else if (it->kind == TC_IDX_INT || t) {
      int64_t sz = x->shape[d];
      if (sz > 0 && it->kind == TC_IDX_INT) {
        int64_t k = jax && it->i < 0 ? it->i + sz : it->i;   /* no overflow: i >= INT64_MIN, sz > 0 */
        if (jax && write && (k < 0 || k >= sz)) {
          k = sz;
          s->pad[d] = 1;
          s->any_pad = true;
        } else k = k < 0 ? 0 : k >= sz ? sz - 1 : k;
        it->i = k;
      } else if (sz > 0 && tc_numel(t) > 0 && !(it->t = sem_index_tensor(s, t, sz, write, d, err))) {
        return -1;
      }
      d++;
    }
  }
  return 0;
}

static void sem_free(sem_items *s) {
  for (int i = 0; i < s->nown; i++) tc_tensor_free(s->own[i]);
  free(s->it);
}

tc_tensor *tc_getitem(tc_tensor *x, int n, const tc_index_item *items, tc_err *err) {
  sem_items s = {.nown = 0};
  int k = sem_rewrite(x, n, items, false, &s, err);
  tc_tensor *out = k < 0 ? NULL : getitem(x, n, k ? items : s.it, err);
  sem_free(&s);
  return out;
}

/* x padded by one slot past the end on the axes a dropped write goes to,
 * written there, and cut back to x's shape. */
static tc_tensor *set_dropping(tc_tensor *x, const sem_items *s, int n, tc_tensor *val, tc_err *err) {
  int64_t w[TC_MAX_DIMS][2], two[2] = {x->ndim, 2};
  for (int d = 0; d < x->ndim; d++) w[d][0] = 0, w[d][1] = s->pad[d];
  tc_tensor *widths = tc_tensor_from_host(TC_DT_I64, 2, two, w, err);
  tc_tensor *p = widths ? tc_pad(x, widths, NULL, "constant", err) : NULL;
  tc_tensor *r = p ? setitem(p, n, s->it, val, err) : NULL;
  tc_tensor *v = r ? tc_view(r, x->ndim, x->shape, r->strides, r->offset, err) : NULL;
  tc_tensor *out = v ? tc_contiguous(v, err) : NULL;
  tc_tensor_free(v);
  tc_tensor_free(r);
  tc_tensor_free(p);
  tc_tensor_free(widths);
  return out;
}

tc_tensor *tc_setitem(tc_tensor *x, int n, const tc_index_item *items, tc_tensor *val, tc_err *err) {
  sem_items s = {.nown = 0};
  int k = sem_rewrite(x, n, items, true, &s, err);
  tc_tensor *out = k < 0 ? NULL : k ? setitem(x, n, items, val, err)
                             : s.any_pad ? set_dropping(x, &s, n, val, err) : setitem(x, n, s.it, val, err);
  sem_free(&s);
  return out;
}
