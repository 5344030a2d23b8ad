/* The evaluator's indexing family: subscripts x[...] and indexed
 * assignment, and the calls of the shape, indexing, constructor and file
 * ops (SPEC 5.3-5.7). Arguments are read here; everything that touches
 * tensor data is in src/. */
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

/* ---- calls: one line each, the arguments bound and typed (repl/bind.c) ---- */
static int call_shape(ctx *c, tc_op op, barg *b, value *out) {
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_RESHAPE: return set_tensor(out, tc_reshape(b[0].t, b[1].n, b[1].ints, err));
  case TC_OP_BROADCAST_TO: return set_tensor(out, tc_broadcast_to(b[0].t, b[1].n, b[1].ints, err));
  case TC_OP_TRANSPOSE: return set_tensor(out, tc_transpose(b[0].t, b[1].n, b[1].ints, err));
  case TC_OP_EXPAND_DIMS: return set_tensor(out, tc_expand_dims(b[0].t, b[1].i, err));
  case TC_OP_SQUEEZE: return set_tensor(out, tc_squeeze(b[0].t, &b[1].axes, err));
  case TC_OP_FLIP: return set_tensor(out, tc_flip(b[0].t, &b[1].axes, err));
  case TC_OP_FLATTEN: return set_tensor(out, tc_flatten(b[0].t, err));
  case TC_OP_CONCAT: return set_tensor(out, tc_concat(b[0].nts, b[0].ts, b[1].i, err));
  case TC_OP_STACK: return set_tensor(out, tc_stack(b[0].nts, b[0].ts, b[1].i, err));
  case TC_OP_TRIL: case TC_OP_TRIU: return set_tensor(out, tc_tri(op, b[0].t, b[1].i, err));
  case TC_OP_DIAG: return set_tensor(out, tc_diag(b[0].t, b[1].i, err));
  case TC_OP_TAKE: return set_tensor(out, tc_take(b[0].t, b[1].t, b[2].i, b[3].mode, b[4].t, err));
  case TC_OP_TAKE_ALONG_AXIS:
    return set_tensor(out, tc_take_along_axis(b[0].t, b[1].t, b[2].i, b[3].mode, b[4].t, err));
  case TC_OP_DYNAMIC_SLICE: return set_tensor(out, tc_dynamic_slice(b[0].t, b[1].n, b[1].ints, b[2].n, b[2].ints, err));
  case TC_OP_SCATTER:
    return set_tensor(out, tc_scatter(b[0].t, b[1].t, b[2].t, b[3].i, b[4].mode, b[5].mode, err));
  default: return tc_err_set(err, TC_E_DTYPE, (int)op, -1, "%s", "not implemented");
  }
}

int call_family(ctx *c, tc_op op, args *a, value *out) {
  barg *b = a->b;
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_ZEROS: return set_tensor(out, tc_zeros(b[0].n, b[0].ints, (tc_dtype)b[1].dt, err));
  case TC_OP_ONES: return set_tensor(out, tc_ones(b[0].n, b[0].ints, (tc_dtype)b[1].dt, err));
  case TC_OP_FULL: return set_tensor(out, tc_full(b[0].n, b[0].ints, b[1].t, b[2].dt, err));
  case TC_OP_ARANGE: return set_tensor(out, tc_arange(b[0].t, b[1].t, b[2].t, b[3].dt, err));
  case TC_OP_LINSPACE: return set_tensor(out, tc_linspace(b[0].f, b[1].f, b[2].i, (tc_dtype)b[3].dt, err));
  case TC_OP_EYE: return set_tensor(out, tc_eye(b[0].i, b[1].given ? b[1].i : b[0].i, b[2].i, (tc_dtype)b[3].dt, err));
  case TC_OP_RAND: return set_tensor(out, tc_random(TC_DIST_UNIFORM, b[0].n, b[0].ints, b[1].seed, 0, 0, err));
  case TC_OP_RANDN: return set_tensor(out, tc_random(TC_DIST_NORMAL, b[0].n, b[0].ints, b[1].seed, 0, 0, err));
  case TC_OP_RANDINT: return set_tensor(out, tc_randint(b[0].t, b[1].t, b[2].n, b[2].ints, b[3].seed, (tc_dtype)b[4].dt, err));
  case TC_OP_LOAD: return set_tensor(out, b[1].b ? tc_map_npy(b[0].s, err) : tc_load_npy(b[0].s, err));
  case TC_OP_LOAD_NPZ: return set_tensor(out, tc_load_npz(b[0].s, b[1].s, err));
  case TC_OP_SAVE_NPZ: return tc_save_npz(b[0].s, b[1].nts, b[1].names, b[1].ts, err);
  case TC_OP_LOAD_CSV: return set_tensor(out, tc_load_csv_with(b[0].s, (tc_dtype)b[1].dt, b[2].s, b[3].i, err));
  case TC_OP_SAVE: return tc_save_npy(b[0].s, b[1].t, err);
  case TC_OP_SAVE_CSV: return tc_save_csv(b[0].s, b[1].t, err);
  case TC_OP_FROM_JSON: return set_tensor(out, tc_from_json(b[0].s, strlen(b[0].s), op, err));
  case TC_OP_LOAD_JSON: return set_tensor(out, tc_load_json(b[0].s, err));
  default: return call_shape(c, op, b, out);
  }
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
  bool is_fn;
  tc_tensor *x = scope_get(c, name->str, &is_fn);
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
  if (rc == 0) x = scope_get(c, name->str, &is_fn);
  if (rc == 0 && x) r = tc_setitem(x, l.n, l.items, v, c->err);
  items_free(&l);
  tc_tensor_free(v);
  if (!r) { if (rc == 0) locate(c, target); return -1; }
  return scope_set(c, name->str, r);
}
