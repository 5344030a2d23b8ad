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

static void unravel(int64_t flat, int ndim, const int64_t *shape, int64_t *pos) {
  for (int i = ndim - 1; i >= 0; i--) {
    pos[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
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
    unravel(c.found, m->ndim, m->shape, pos);
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

tc_tensor *tc_take(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill, tc_err *err) {
  tc_tensor *r = take_impl(TC_OP_TAKE, x, idx, axis, mode, fill, err);
  if (!r) tc_annotate(err, TC_OP_TAKE, (int)x->dtype);
  return r;
}

tc_tensor *tc_take_along_axis(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
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
    if (s < 0) s += n;          /* s >= INT64_MIN, n >= 0: no overflow */
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

/* Scatters updates into the view w (in place) along axis a. */
static int scatter_into(int op, tc_tensor *w, tc_tensor *idx, tc_tensor *updates, int64_t a, tc_scatter_red red,
                        tc_index_mode mode, bool checked, tc_err *err) {
  int64_t shape[TC_MAX_DIMS];
  int nd;
  if (selection_shape(op, w, a, idx, &nd, shape, err) != 0) return -1;
  int64_t n = w->shape[a], numel;
  if (!checked && mode == TC_MODE_ERROR && check_range(op, idx, a, n, (int)w->dtype, err) != 0) return -1;
  if (!can_broadcast(updates->ndim, updates->shape, nd, shape)) {
    char su[256], ss[256];
    tc_format_dims(su, sizeof su, updates->ndim, updates->shape);
    tc_format_dims(ss, sizeof ss, nd, shape);
    return tc_err_set(err, TC_E_SHAPE, op, (int)w->dtype, "updates of shape %s do not broadcast to the selection %s", su, ss);
  }
  tc_tensor *u = tc_value_as(updates, w->dtype, (tc_op)(op < 0 ? TC_OP_SCATTER : op), err), *ue = NULL, *uv = NULL;
  if (!u) return -1;
  ue = tc_operand(u, w->dtype, err);
  tc_tensor_free(u);
  if (!ue) return -1;
  uv = tc_view_broadcast(ue, nd, shape, err);
  tc_tensor_free(ue);
  if (!uv) return -1;
  tc_shape_numel(nd, shape, &numel);
  int rc = 0;
  if (numel > 0 && n == 0 && mode == TC_MODE_CLIP)
    rc = tc_err_set(err, TC_E_INDEX, op, (int)w->dtype, "cannot scatter into an empty axis (mode \"clip\")");
  tc_tensor *ie = NULL, *iv = NULL, *wv = NULL;
  if (rc == 0 && numel > 0) {
    ie = index_i64(idx, n, mode, err);
    if (ie) iv = idx_in_selection(ie, a, nd, shape, err);
    if (iv) wv = x_in_selection(w, a, idx->ndim, nd, shape, err);
    if (!wv) rc = -1;
    else {
      tc_call c = {.kind = TC_CALL_SCATTER, .dtype = w->dtype, .nin = 2, .in = {iv, uv}, .out = wv,
                   .axis_stride = w->strides[a], .axis_len = n, .mode = mode, .red = red};
      rc = tc_run_call(&c, err);
    }
  }
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

tc_tensor *tc_scatter(tc_tensor *x, tc_tensor *idx, tc_tensor *updates, int64_t axis, tc_scatter_red red,
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

typedef struct {
  int nconsume;            /* items that consume an axis */
  int ellipsis;            /* index of `...`, or -1 */
  tc_tensor *adv;          /* an integer tensor at item 0 (selects along axis 0) */
  tc_tensor *mask;         /* a bool mask (the only item) */
} sub_info;

static int classify(tc_tensor *x, int n, const tc_index_item *items, sub_info *si, tc_err *err) {
  memset(si, 0, sizeof *si);
  si->ellipsis = -1;
  for (int i = 0; i < n; i++) {
    const tc_index_item *it = &items[i];
    if (it->kind == TC_IDX_ELLIPSIS) {
      if (si->ellipsis >= 0) return bad(err, -1, -1, "an index can have only one '...'");
      si->ellipsis = i;
      continue;
    }
    if (it->kind == TC_IDX_TENSOR && it->t->ndim > 0) {
      tc_class c = tc_dtype_class(it->t->dtype);
      if (c == TC_CLASS_BOOL) {
        if (n != 1) return bad(err, -1, -1, "a bool mask must be the only index item");
        if (it->t->ndim != x->ndim || memcmp(it->t->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim)) {
          char sm[256], sx[256];
          tc_format_dims(sm, sizeof sm, it->t->ndim, it->t->shape);
          tc_format_dims(sx, sizeof sx, x->ndim, x->shape);
          return tc_err_set(err, TC_E_SHAPE, -1, -1, "a bool mask of shape %s does not match the tensor's shape %s", sm, sx);
        }
        si->mask = it->t;
        return 0;
      }
      if (c != TC_CLASS_INT && tc_numel(it->t) > 0)
        return tc_err_set(err, TC_E_BAD_ARG, -1, (int)it->t->dtype,
                          "an index must be an integer, a slice, '...', an integer tensor or a bool mask, not %s",
                          tc_dtype_name(it->t->dtype));
      if (i != 0)
        return bad(err, -1, -1, "an integer tensor index is only allowed as the first item (it selects along axis 0); "
                                "use take(x, idx, axis=k) for other axes");
      si->adv = it->t;
    } else if (it->kind == TC_IDX_TENSOR && tc_dtype_class(it->t->dtype) == TC_CLASS_FLT) {
      return tc_err_set(err, TC_E_BAD_ARG, -1, (int)it->t->dtype, "an index must be an integer, not %s",
                        tc_dtype_name(it->t->dtype));
    } else if (it->kind == TC_IDX_TENSOR && it->t->dtype == TC_DT_BOOL) {
      return bad(err, -1, -1, "a bool index must be a mask of the tensor's shape");
    }
    si->nconsume++;
  }
  if (si->nconsume > x->ndim)
    return tc_err_set(err, TC_E_BAD_ARG, -1, -1, "too many indices: %d for a tensor of %d dimension%s", si->nconsume,
                      x->ndim, x->ndim == 1 ? "" : "s");
  return 0;
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

/* The view x[items] for basic items (an integer tensor item counts as `:`). */
static tc_tensor *basic_view(tc_tensor *x, int n, const tc_index_item *items, const sub_info *si, tc_err *err) {
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS], off = x->offset;
  int d = 0, nd = 0;
  bool empty = tc_numel(x) == 0;   /* its strides may be saturated: no offset arithmetic */
  for (int i = 0; i < n; i++) {
    const tc_index_item *it = &items[i];
    if (it->kind == TC_IDX_ELLIPSIS) {
      for (int k = 0; k < x->ndim - si->nconsume; k++, d++) {
        shape[nd] = x->shape[d];
        strides[nd++] = x->strides[d];
      }
      continue;
    }
    int64_t sz = x->shape[d], s = x->strides[d];
    if (it->kind == TC_IDX_INT || (it->kind == TC_IDX_TENSOR && it->t->ndim == 0)) {
      int64_t k = it->i;
      if (it->kind == TC_IDX_TENSOR && tc_scalar_to_i64(it->t, &k, err) != 0) return NULL;
      if (it->kind == TC_IDX_TENSOR && tc_dtype_is_unsigned(it->t->dtype) && k < 0) {   /* a u64 above the i64 maximum */
        out_of_bounds(err, -1, (int)x->dtype, k, true, d, sz, 0, NULL);
        return NULL;
      }
      if (k < -sz || k >= sz) { out_of_bounds(err, -1, (int)x->dtype, k, false, d, sz, 0, NULL); return NULL; }
      if (!empty) off += (k < 0 ? k + sz : k) * s;
    } else if (it->kind == TC_IDX_SLICE) {
      int64_t start = 0, len = 0, step = 1;
      if (slice_bounds(it, sz, &start, &len, &step, err) != 0) return NULL;
      if (len > 0 && !empty) off += start * s;
      shape[nd] = len;
      strides[nd++] = len > 1 && !empty ? s * step : s;
    } else {   /* the integer tensor: keep the axis whole */
      shape[nd] = sz;
      strides[nd++] = s;
    }
    d++;
  }
  for (; d < x->ndim; d++) {
    shape[nd] = x->shape[d];
    strides[nd++] = x->strides[d];
  }
  int64_t numel;
  if (tc_shape_numel(nd, shape, &numel) && numel == 0) off = x->offset;
  return tc_view(x, nd, shape, strides, off, err);
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

tc_tensor *tc_getitem(tc_tensor *x, int n, const tc_index_item *items, tc_err *err) {
  sub_info si;
  if (classify(x, n, items, &si, err) != 0) return NULL;
  if (si.mask) {
    tc_tensor *xe = tc_operand(x, x->dtype, err), *f = NULL, *nz = NULL, *out = NULL;
    if (xe) f = flat(xe, err);
    if (f) nz = tc_mask_positions(si.mask, err);
    if (nz) out = take_impl(-1, f, nz, 0, TC_MODE_CLIP, NULL, err);   /* the positions are in range */
    tc_tensor_free(nz);
    tc_tensor_free(f);
    tc_tensor_free(xe);
    return out;
  }
  tc_tensor *v = basic_view(x, n, items, &si, err);
  if (!v || !si.adv) return v;
  tc_tensor *out = take_impl(-1, v, si.adv, 0, TC_MODE_ERROR, NULL, err);
  tc_tensor_free(v);
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
tc_tensor *tc_setitem(tc_tensor *x, int n, const tc_index_item *items, tc_tensor *val, tc_err *err) {
  sub_info si;
  if (classify(x, n, items, &si, err) != 0) return NULL;
  if (!tc_op_supported(TC_OP_SCATTER, x->dtype, tc_get_engine())) { tc_unsupported(TC_OP_SCATTER, x->dtype, err); return NULL; }
  tc_tensor *out = NULL, *w = NULL, *nz = NULL;
  bool inplace = writable_alone(x) && (!si.mask || tc_is_contiguous(x));   /* a mask writes through a flat view */
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
  int rc = 0;
  if (si.mask) {
    w = flat(out, err);
    if (w) nz = tc_mask_positions(si.mask, err);
    rc = nz ? scatter_into(-1, w, nz, val, 0, TC_SCATTER_SET, TC_MODE_CLIP, true, err) : -1;
  } else {
    w = basic_view(out, n, items, &si, err);
    if (!w) rc = -1;
    else if (si.adv) rc = scatter_into(-1, w, si.adv, val, 0, TC_SCATTER_SET, TC_MODE_ERROR, false, err);
    else if (!can_broadcast(val->ndim, val->shape, w->ndim, w->shape)) {
      char sv[256], sw[256];
      tc_format_dims(sv, sizeof sv, val->ndim, val->shape);
      tc_format_dims(sw, sizeof sw, w->ndim, w->shape);
      rc = tc_err_set(err, TC_E_SHAPE, -1, (int)x->dtype, "values of shape %s do not broadcast to the selection %s", sv, sw);
    } else {
      tc_tensor *v = tc_value_as(val, out->dtype, TC_OP_SCATTER, err);
      rc = v ? tc_copy_into(w, v, err) : -1;
      tc_tensor_free(v);
    }
  }
  tc_tensor_free(nz);
  tc_tensor_free(w);
  if (inplace) tc_interrupt_release();
  if (rc != 0) { tc_tensor_free(out); return NULL; }
  out->weak = false;
  return out;
}
