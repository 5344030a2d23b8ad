/* Matrix products in the language: matmul, dot, outer and tensordot
 * (SPEC 5.2), reached from call_op() by their family (trace: its
 * TC_CALLS row). */
#include <string.h>
#include "eval_int.h"

/* tensordot's axes: an int n, a pair [i, j], or a pair of lists [[i...], [j...]]. */
static int arg_axes_pair(ctx *c, args *a, int i, int *n, int64_t *xa, int64_t *xb) {
  const char *usage = "axes must be an int n, a pair [i, j], or a pair of lists [[i, ...], [j, ...]]";
  if (a->v[i].kind != V_TENSOR) return fail_node(c, a->at[i], TC_E_BAD_ARG, "%s", usage);
  tc_tensor *t = a->v[i].t;
  int64_t numel = tc_numel(t);
  bool empty_pair = t->ndim == 2 && t->shape[0] == 2 && numel == 0;
  bool ok = empty_pair || (tc_dtype_class(t->dtype) == TC_CLASS_INT &&
                           (t->ndim == 0 || (t->ndim == 1 && t->shape[0] == 2) ||
                            (t->ndim == 2 && t->shape[0] == 2 && t->shape[1] <= TC_MAX_DIMS)));
  if (!ok) return fail_node(c, a->at[i], TC_E_BAD_ARG, "%s", usage);
  if (empty_pair) { *n = 0; return 0; }
  int64_t v[2 * TC_MAX_DIMS];
  tc_tensor *c64 = tc_cast(t, TC_DT_I64, c->err);
  if (!c64 || tc_tensor_to_host(c64, v, c->err) != 0) { tc_tensor_free(c64); return -1; }
  tc_tensor_free(c64);
  if (t->ndim == 0) {
    if (v[0] < 0 || v[0] > TC_MAX_DIMS)
      return fail_node(c, a->at[i], TC_E_BAD_ARG, "%s", "axes must be a count from 0 to the number of dimensions");
    *n = (int)v[0];
    /* the last n axes of a with the first n of b: filled in by the caller */
    return 1;
  }
  int k = t->ndim == 1 ? 1 : (int)t->shape[1];
  for (int j = 0; j < k; j++) { xa[j] = v[j]; xb[j] = v[k + j]; }
  *n = k;
  return 0;
}

int call_matmul(ctx *c, tc_op op, args *a, value *out) {
  tc_tensor *x = a->b[0].t, *y = a->n > 1 ? a->b[1].t : NULL;
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_TENSORDOT: {
    int n = 0;
    int64_t xa[TC_MAX_DIMS], xb[TC_MAX_DIMS];
    int r = arg_axes_pair(c, a, 2, &n, xa, xb);
    if (r < 0) return -1;
    if (r == 1 && n <= x->ndim && n <= y->ndim)   /* (a larger n is tensordot's error) */
      for (int j = 0; j < n; j++) { xa[j] = x->ndim - n + j; xb[j] = j; }
    return set_tensor(out, tc_tensordot(x, y, n, xa, xb, err));
  }
  default:
    return set_tensor(out, tc_binary(op, x, y, err));
  }
}
