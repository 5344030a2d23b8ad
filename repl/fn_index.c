/* The evaluator's indexing family: subscripts x[...] and indexed
 * assignment, and the calls of the shape, indexing, constructor and file
 * ops (SPEC 5.3-5.7). Arguments are read here; everything that touches
 * tensor data is in src/. */
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "eval_int.h"

/* ---- argument helpers ---- */
static bool present(args *a, int i) { return a->v[i].kind != V_NONE; }

/* One integer (a 0-d integer tensor). */
static int arg_int(ctx *c, args *a, int i, int64_t *out) {
  tc_tensor *t;
  if (arg_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim != 0 || tc_dtype_class(t->dtype) != TC_CLASS_INT)
    return fail_node(c, a->at[i], TC_E_BAD_ARG, "argument %s must be an integer", a->g->names[i]);
  tc_tensor *w = tc_cast(t, TC_DT_I64, c->err);
  int rc = w ? tc_tensor_to_host(w, out, c->err) : -1;
  tc_tensor_free(w);
  return rc;
}

/* One number as f64 (integer, float or bool 0-d). */
static int arg_f64(ctx *c, args *a, int i, double *out) {
  tc_tensor *t;
  if (arg_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim != 0) return fail_node(c, a->at[i], TC_E_BAD_ARG, "argument %s must be a single number", a->g->names[i]);
  tc_tensor *w = tc_cast(t, TC_DT_F64, c->err);
  int rc = w ? tc_tensor_to_host(w, out, c->err) : -1;
  tc_tensor_free(w);
  return rc;
}

/* A shape: an integer, a list of integers, or [] (0-d). */
static int arg_shape(ctx *c, args *a, int i, int64_t *shape, int *nd) {
  tc_tensor *t;
  if (arg_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim == 1 && t->shape[0] == 0) { *nd = 0; return 0; }
  if (tc_dtype_class(t->dtype) != TC_CLASS_INT || t->ndim > 1)
    return fail_node(c, a->at[i], TC_E_BAD_ARG, "argument %s must be an integer or a list of integers", a->g->names[i]);
  if (tc_numel(t) > TC_MAX_DIMS)
    return fail_node(c, a->at[i], TC_E_BAD_ARG, "argument %s has more than 16 dimensions", a->g->names[i]);
  int n = 0;
  int rc = arg_ints(c, a, i, shape, &n, TC_MAX_DIMS);
  *nd = t->ndim == 0 ? 1 : n;
  return rc;
}

static int arg_opt_dtype(ctx *c, args *a, int i, int *out) {
  *out = -1;
  if (!present(a, i)) return 0;
  tc_dtype dt;
  if (arg_dtype(c, a, i, &dt) != 0) return -1;
  *out = (int)dt;
  return 0;
}

static int arg_mode(ctx *c, args *a, int i, tc_index_mode *out) {
  const char *s;
  if (arg_string(c, a, i, &s) != 0) return -1;
  int m = tc_index_mode_from_name(s);
  if (m < 0)
    return fail_node(c, a->at[i], TC_E_BAD_ARG, "unknown mode \"%s\" (error, clip, wrap, fill, drop)", s);
  *out = (tc_index_mode)m;
  return 0;
}

static int arg_reduce(ctx *c, args *a, int i, tc_scatter_red *out) {
  const char *s;
  if (arg_string(c, a, i, &s) != 0) return -1;
  int r = tc_scatter_red_from_name(s);
  if (r < 0) return fail_node(c, a->at[i], TC_E_BAD_ARG, "unknown reduce \"%s\" (set, add, mul, max, min)", s);
  *out = (tc_scatter_red)r;
  return 0;
}

static int arg_axis(ctx *c, args *a, int i, int64_t *out) { return arg_int(c, a, i, out); }

static int arg_seed(ctx *c, args *a, int i, uint64_t *out) {
  if (!present(a, i)) { *out = c->s->seed_counter++; return 0; }
  int64_t v;
  if (arg_int(c, a, i, &v) != 0) return -1;
  *out = (uint64_t)v;
  return 0;
}

/* The tensors of a "[xs]" parameter: the elements of a list literal, or
 * the slices along axis 0 of one tensor. */
static int arg_tensor_list(ctx *c, args *a, int i, tc_tensor ***out, int *n) {
  node *ln = a->at[i];
  *out = NULL;
  *n = 0;
  if (!present(a, i) && ln->kind == N_LIST) {
    tc_tensor **ts = calloc((size_t)(ln->nkids ? ln->nkids : 1), sizeof *ts);
    if (!ts) return fail_node(c, ln, TC_E_OOM, "%s", "out of memory");
    for (int k = 0; k < ln->nkids; k++) {
      if (eval_tensor(c, ln->kids[k], &ts[k]) != 0) {
        for (int j = 0; j < k; j++) tc_tensor_free(ts[j]);
        free(ts);
        return -1;
      }
    }
    *out = ts;
    *n = ln->nkids;
    return 0;
  }
  tc_tensor *t;
  if (arg_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim == 0) return fail_node(c, ln, TC_E_BAD_ARG, "argument %s must be a list of tensors", a->g->names[i]);
  int64_t rows = t->shape[0];
  tc_tensor **ts = calloc((size_t)(rows ? rows : 1), sizeof *ts);
  if (!ts) return fail_node(c, ln, TC_E_OOM, "%s", "out of memory");
  for (int64_t k = 0; k < rows; k++) {
    tc_index_item it = {.kind = TC_IDX_INT, .i = k};
    ts[k] = tc_getitem(t, 1, &it, c->err);
    if (!ts[k]) {
      for (int64_t j = 0; j < k; j++) tc_tensor_free(ts[j]);
      free(ts);
      return -1;
    }
  }
  *out = ts;
  *n = (int)rows;
  return 0;
}

static void free_list(tc_tensor **ts, int n) {
  for (int i = 0; i < n; i++) tc_tensor_free(ts[i]);
  free(ts);
}

/* ---- calls ---- */
int call_family(ctx *c, tc_op op, args *a, value *out) {
  tc_err *err = c->err;
  tc_tensor *x = NULL, *y = NULL, *z = NULL;
  int64_t shape[TC_MAX_DIMS], vals[TC_MAX_DIMS], k = 0, axis = 0;
  int nd = 0, nv = 0, dt = -1;
  tc_dtype dtv;
  const char *path;
  tc_axes ax;
  tc_index_mode mode = TC_MODE_ERROR;
  switch (op) {
  /* shape */
  case TC_OP_RESHAPE: case TC_OP_BROADCAST_TO:
    if (arg_tensor(c, a, 0, &x) || arg_shape(c, a, 1, shape, &nd)) return -1;
    return set_tensor(out, op == TC_OP_RESHAPE ? tc_reshape(x, nd, shape, err) : tc_broadcast_to(x, nd, shape, err));
  case TC_OP_TRANSPOSE:
    if (arg_tensor(c, a, 0, &x)) return -1;
    if (present(a, 1) && arg_ints(c, a, 1, vals, &nv, TC_MAX_DIMS)) return -1;
    return set_tensor(out, tc_transpose(x, present(a, 1) ? nv : -1, vals, err));
  case TC_OP_EXPAND_DIMS:
    if (arg_tensor(c, a, 0, &x) || arg_axis(c, a, 1, &axis)) return -1;
    return set_tensor(out, tc_expand_dims(x, axis, err));
  case TC_OP_SQUEEZE: case TC_OP_FLIP:
    if (arg_tensor(c, a, 0, &x) || arg_axes(c, a, 1, &ax)) return -1;
    return set_tensor(out, op == TC_OP_SQUEEZE ? tc_squeeze(x, &ax, err) : tc_flip(x, &ax, err));
  case TC_OP_FLATTEN:
    if (arg_tensor(c, a, 0, &x)) return -1;
    return set_tensor(out, tc_flatten(x, err));
  case TC_OP_CONCAT: case TC_OP_STACK: {
    tc_tensor **ts;
    int n;
    if (arg_axis(c, a, 1, &axis) || arg_tensor_list(c, a, 0, &ts, &n)) return -1;
    tc_tensor *r = op == TC_OP_CONCAT ? tc_concat(n, ts, axis, err) : tc_stack(n, ts, axis, err);
    free_list(ts, n);
    return set_tensor(out, r);
  }
  case TC_OP_TRIL: case TC_OP_TRIU: case TC_OP_DIAG:
    if (arg_tensor(c, a, 0, &x) || arg_int(c, a, 1, &k)) return -1;
    return set_tensor(out, op == TC_OP_DIAG ? tc_diag(x, k, err) : tc_tri(op, x, k, err));
  /* indexing */
  case TC_OP_TAKE: case TC_OP_TAKE_ALONG_AXIS:
    if (arg_tensor(c, a, 0, &x) || arg_tensor(c, a, 1, &y) || arg_axis(c, a, 2, &axis) || arg_mode(c, a, 3, &mode))
      return -1;
    if (present(a, 4) && arg_tensor(c, a, 4, &z)) return -1;
    return set_tensor(out, op == TC_OP_TAKE ? tc_take(x, y, axis, mode, z, err)
                                            : tc_take_along_axis(x, y, axis, mode, z, err));
  case TC_OP_DYNAMIC_SLICE: {
    int64_t sizes[TC_MAX_DIMS];
    int ns = 0;
    if (arg_tensor(c, a, 0, &x) || arg_ints(c, a, 1, vals, &nv, TC_MAX_DIMS) || arg_ints(c, a, 2, sizes, &ns, TC_MAX_DIMS))
      return -1;
    return set_tensor(out, tc_dynamic_slice(x, nv, vals, ns, sizes, err));
  }
  case TC_OP_SCATTER: {
    tc_scatter_red red = TC_SCATTER_SET;
    if (arg_tensor(c, a, 0, &x) || arg_tensor(c, a, 1, &y) || arg_tensor(c, a, 2, &z) || arg_axis(c, a, 3, &axis) ||
        arg_reduce(c, a, 4, &red) || arg_mode(c, a, 5, &mode))
      return -1;
    return set_tensor(out, tc_scatter(x, y, z, axis, red, mode, err));
  }
  /* construction */
  case TC_OP_ZEROS: case TC_OP_ONES:
    if (arg_shape(c, a, 0, shape, &nd) || arg_dtype(c, a, 1, &dtv)) return -1;
    return set_tensor(out, op == TC_OP_ZEROS ? tc_zeros(nd, shape, dtv, err) : tc_ones(nd, shape, dtv, err));
  case TC_OP_FULL:
    if (arg_shape(c, a, 0, shape, &nd) || arg_tensor(c, a, 1, &x) || arg_opt_dtype(c, a, 2, &dt)) return -1;
    return set_tensor(out, tc_full(nd, shape, x, dt, err));
  case TC_OP_ARANGE:
    if (arg_tensor(c, a, 0, &x) || (present(a, 1) && arg_tensor(c, a, 1, &y)) || arg_tensor(c, a, 2, &z) ||
        arg_opt_dtype(c, a, 3, &dt))
      return -1;
    return set_tensor(out, tc_arange(x, y, z, dt, err));
  case TC_OP_LINSPACE: {
    double lo, hi;
    if (arg_f64(c, a, 0, &lo) || arg_f64(c, a, 1, &hi) || arg_int(c, a, 2, &k) || arg_dtype(c, a, 3, &dtv)) return -1;
    return set_tensor(out, tc_linspace(lo, hi, k, dtv, err));
  }
  case TC_OP_EYE: {
    int64_t n, m;
    if (arg_int(c, a, 0, &n) || (present(a, 1) && arg_int(c, a, 1, &m)) || arg_int(c, a, 2, &k) ||
        arg_dtype(c, a, 3, &dtv))
      return -1;
    return set_tensor(out, tc_eye(n, present(a, 1) ? m : n, k, dtv, err));
  }
  case TC_OP_RAND: case TC_OP_RANDN: {
    uint64_t seed;
    if (arg_shape(c, a, 0, shape, &nd) || arg_seed(c, a, 1, &seed)) return -1;
    return set_tensor(out, tc_random(op == TC_OP_RAND ? TC_DIST_UNIFORM : TC_DIST_NORMAL, nd, shape, seed, 0, 0, err));
  }
  case TC_OP_RANDINT: {
    int64_t lo, hi;
    uint64_t seed;
    if (arg_int(c, a, 0, &lo) || arg_int(c, a, 1, &hi) || arg_shape(c, a, 2, shape, &nd) || arg_seed(c, a, 3, &seed))
      return -1;
    return set_tensor(out, tc_random(TC_DIST_INT, nd, shape, seed, lo, hi, err));
  }
  /* files */
  case TC_OP_LOAD:
    if (arg_string(c, a, 0, &path)) return -1;
    return set_tensor(out, tc_load_npy(path, err));
  case TC_OP_LOAD_CSV:
    if (arg_string(c, a, 0, &path) || arg_dtype(c, a, 1, &dtv)) return -1;
    return set_tensor(out, tc_load_csv(path, dtv, err));
  case TC_OP_SAVE: case TC_OP_SAVE_CSV:
    if (arg_string(c, a, 0, &path) || arg_tensor(c, a, 1, &x)) return -1;
    return op == TC_OP_SAVE ? tc_save_npy(path, x, err) : tc_save_csv(path, x, err);
  default:
    break;
  }
  return tc_err_set(err, TC_E_DTYPE, (int)op, -1, "%s", "not implemented");
}

/* ---- subscripts ---- */
/* One integer from a slice bound. */
static int slice_int(ctx *c, node *n, int64_t *out) {
  tc_tensor *t;
  if (eval_tensor(c, n, &t) != 0) return -1;
  int rc = 0;
  if (t->ndim != 0 || tc_dtype_class(t->dtype) != TC_CLASS_INT)
    rc = fail_node(c, n, TC_E_BAD_ARG, "%s", "a slice bound must be an integer");
  tc_tensor *w = rc ? NULL : tc_cast(t, TC_DT_I64, c->err);
  if (!rc) rc = w ? tc_tensor_to_host(w, out, c->err) : -1;
  tc_tensor_free(w);
  tc_tensor_free(t);
  return rc;
}

typedef struct { int n; tc_index_item items[TC_MAX_DIMS + 1]; } item_list;

static void items_free(item_list *l) {
  for (int i = 0; i < l->n; i++) tc_tensor_free(l->items[i].t);
  l->n = 0;
}

static int eval_items(ctx *c, node *n, item_list *l) {
  l->n = 0;
  if (n->nkids - 1 > TC_MAX_DIMS + 1)
    return fail_node(c, n, TC_E_BAD_ARG, "%s", "too many index items");
  for (int i = 1; i < n->nkids; i++) {
    node *k = n->kids[i];
    tc_index_item *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    if (k->kind == N_ELLIPSIS) it->kind = TC_IDX_ELLIPSIS;
    else if (k->kind == N_SLICE) {
      it->kind = TC_IDX_SLICE;
      if (k->kids[0] && slice_int(c, k->kids[0], &it->lo)) return -1;
      if (k->kids[1] && slice_int(c, k->kids[1], &it->hi)) return -1;
      if (k->kids[2] && slice_int(c, k->kids[2], &it->step)) return -1;
      it->has_lo = k->kids[0] != NULL;
      it->has_hi = k->kids[1] != NULL;
      it->has_step = k->kids[2] != NULL;
    } else {
      it->kind = TC_IDX_TENSOR;
      if (eval_tensor(c, k, &it->t) != 0) return -1;
    }
    l->n++;
  }
  return 0;
}

int eval_index(ctx *c, node *n, value *out) {
  tc_tensor *x;
  if (eval_tensor(c, n->kids[0], &x) != 0) return -1;
  item_list l;
  int rc = eval_items(c, n, &l);
  tc_tensor *r = rc ? NULL : tc_getitem(x, l.n, l.items, c->err);
  items_free(&l);
  tc_tensor_free(x);
  if (!r) { locate(c, n); return -1; }
  return set_tensor(out, r);
}

int eval_index_assign(ctx *c, node *target, node *val) {
  node *name = target->kids[0];
  tc_tensor *x = session_get(c->s, name->str);
  if (!x) {
    tc_err_set(c->err, TC_E_UNDEFINED, -1, -1, "%s is not defined (assign it before assigning into it)", name->str);
    c->err->engine = -1;
    c->err->start = name->start;
    c->err->end = name->end;
    return -1;
  }
  item_list l;
  tc_tensor *v = NULL, *r = NULL;
  int rc = eval_items(c, target, &l);
  if (rc == 0) rc = eval_tensor(c, val, &v);
  /* the variable may have been rebound while the items were evaluated */
  if (rc == 0) x = session_get(c->s, name->str);
  if (rc == 0 && x) r = tc_setitem(x, l.n, l.items, v, c->err);
  items_free(&l);
  tc_tensor_free(v);
  if (!r) { if (rc == 0) locate(c, target); return -1; }
  return session_set(c->s, name->str, r, c->err);
}
