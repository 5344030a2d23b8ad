/* The evaluator's subscripts: x[...] and indexed assignment (SPEC 5.4).
 * The items are read here; everything that touches tensor data is in src/.
 * (The shape, indexing, constructor and file built-ins are called from
 * their TC_CALLS rows, repl/calls.c.) */
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

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

/* Whether the name newaxis is a variable of the user's (else NumPy's). */
static bool newaxis_bound(ctx *c, const char *name) {
  bool is_fn;
  return scope_get(c, name, &is_fn) != NULL;
}

static void items_free(item_list *l) {
  for (int i = 0; i < l->n; i++) tc_tensor_free(l->items[i].t);
  l->n = 0;
}

static int eval_items(ctx *c, node *n, item_list *l) {
  l->n = 0;
  node **kids = n->kids + 1;
  int nk = n->nkids - 1;
  if (nk == 1 && kids[0]->kind == N_LIST && kids[0]->tuple) {   /* x[(i, j)] is x[i, j], as in Python */
    nk = kids[0]->nkids;
    kids = kids[0]->kids;
  }
  if (nk > TC_MAX_DIMS + 1)
    return fail_node(c, n, TC_E_BAD_ARG, "%s", "too many index items");
  for (int i = 0; i < nk; i++) {
    node *k = kids[i];
    tc_index_item *it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    if (k->kind == N_ELLIPSIS) it->kind = TC_IDX_ELLIPSIS;
    else if (k->kind == N_NONE || (k->kind == N_NAME && k->str[0] == 'n' && !strcmp(k->str, "newaxis") && !newaxis_bound(c, k->str)))
      it->kind = TC_IDX_NEWAXIS;   /* None, none, newaxis: NumPy's newaxis */
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

/* A node whose evaluation has no effect but its value: a name or a number
 * that fits i64. */
static bool plain(const node *k) {
  return k->kind == N_NAME || k->kind == N_FLOAT || (k->kind == N_INT && !k->ubig && !k->overflow);
}

int eval_index_update(ctx *c, node *n, node *target, node *val) {
  node *name = target->kids[0];
  if (name->kind != N_NAME || target->nkids < 2 || !plain(val)) return 1;
  for (int i = 1; i < target->nkids; i++)
    if (target->kids[i]->kind != N_NAME && target->kids[i]->kind != N_INT) return 1;
  bool is_fn;
  tc_tensor *x = scope_get(c, name->str, &is_fn), *v = NULL;
  if (!x) return 1;
  item_list l;
  int64_t off;
  /* the items, the element (its index error as x[i]'s), then the value: the general path's order */
  int rc = eval_items(c, target, &l);
  if (rc == 0 && (rc = tc_element_offset(x, l.n, l.items, &off, c->err)) < 0) locate(c, target);
  items_free(&l);
  if (rc == 0) rc = eval_tensor(c, val, &v);
  tc_op op;
  if (rc == 0) rc = operator_op(c, n, n->op, &op);
  if (rc == 0 && (rc = tc_update_element(op, x, off, v, c->err)) < 0) locate(c, n);
  tc_tensor_free(v);
  return rc;
}

int eval_index_assign(ctx *c, node *target, node *val) {
  node *name = target->kids[0];
  bool is_fn;
  tc_tensor *x = scope_get(c, name->str, &is_fn);
  if (!x) {
    tc_err_set(c->err, TC_E_UNDEFINED, -1, -1, "%s is not defined (assign it before assigning into it)", name->str);
    err_at(c->err, name->start, name->end);
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
  if (r == x) {   /* written in place: the variable holds it already */
    tc_tensor_free(r);
    return 0;
  }
  return scope_set(c, name->str, r);
}
