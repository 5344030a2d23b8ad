/* The everyday functions of SPEC 12 (scans, sorting, counting, statistics,
 * comparison, building, ML helpers), reached from call_op() by their
 * family, TC_FAM_FN; the computations are src/fn.c's. */
#include <string.h>
#include "eval_int.h"

static int call_fn_(ctx *c, tc_op op, args *a, value *out) {
  barg *b = a->b;
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_CUMSUM: case TC_OP_CUMPROD: case TC_OP_CUMMAX: case TC_OP_CUMMIN:
    return set_tensor(out, tc_scan(op, b[0].t, b[1].given, b[1].i, err));
  case TC_OP_DIFF: return set_tensor(out, tc_diff(b[0].t, b[1].i, b[2].i, err));
  case TC_OP_SORT: case TC_OP_ARGSORT: return set_tensor(out, tc_sort(op, b[0].t, b[1].i, b[2].b, err));
  case TC_OP_TOPK: case TC_OP_ARGTOPK: return set_tensor(out, tc_topk(op, b[0].t, b[1].i, b[2].i, err));
  case TC_OP_UNIQUE: case TC_OP_UNIQUE_COUNTS: return set_tensor(out, tc_unique(op, b[0].t, err));
  case TC_OP_SEARCHSORTED:
    if (strcmp(b[2].s, "left") && strcmp(b[2].s, "right"))
      return fail_node(c, a->at[2], TC_E_BAD_ARG, "side must be \"left\" or \"right\", not \"%s\"", b[2].s);
    return set_tensor(out, tc_searchsorted(b[0].t, b[1].t, !strcmp(b[2].s, "right"), err));
  case TC_OP_ARGWHERE: return set_tensor(out, tc_argwhere(b[0].t, err));
  case TC_OP_BINCOUNT: return set_tensor(out, tc_bincount(b[0].t, b[1].i, err));
  case TC_OP_HISTOGRAM:
    return set_tensor(out, tc_histogram(b[0].t, b[1].i, b[2].given, b[2].f, b[3].given, b[3].f, err));
  case TC_OP_VAR: case TC_OP_STD: return set_tensor(out, tc_var(op, b[0].t, &b[1].axes, b[2].i, b[3].b, err));
  case TC_OP_MEDIAN: return set_tensor(out, tc_quantile(op, b[0].t, NULL, &b[1].axes, "linear", b[2].b, err));
  case TC_OP_QUANTILE: case TC_OP_PERCENTILE:
    return set_tensor(out, tc_quantile(op, b[0].t, b[1].t, &b[2].axes, b[3].s, b[4].b, err));
  case TC_OP_ISCLOSE: case TC_OP_ALLCLOSE:
    return set_tensor(out, tc_isclose(op, b[0].t, b[1].t, b[2].f, b[3].f, b[4].b, err));
  case TC_OP_ARRAY_EQUAL: return set_tensor(out, tc_array_equal(b[0].t, b[1].t, err));
  case TC_OP_SOFTMAX: case TC_OP_LOG_SOFTMAX: return set_tensor(out, tc_softmax(op, b[0].t, b[1].i, err));
  case TC_OP_ZEROS_LIKE: case TC_OP_ONES_LIKE: return set_tensor(out, tc_like(op, b[0].t, NULL, b[1].dt, err));
  case TC_OP_FULL_LIKE: return set_tensor(out, tc_like(op, b[0].t, b[1].t, b[2].dt, err));
  case TC_OP_REPEAT: return set_tensor(out, tc_repeat(b[0].t, b[1].i, b[2].given, b[2].i, err));
  case TC_OP_TILE: return set_tensor(out, tc_tile(b[0].t, b[1].n, b[1].ints, err));
  case TC_OP_PAD: return set_tensor(out, tc_pad(b[0].t, b[1].n, b[1].ints, b[2].t, err));
  case TC_OP_ROLL: return set_tensor(out, tc_roll(b[0].t, b[1].i, b[2].given, b[2].i, err));
  default:
    return fail_node(c, a->at[0], TC_E_BAD_ARG, "%s", "not an everyday function");
  }
}

/* An error of an op the function is built from names the function. */
int call_fn(ctx *c, tc_op op, args *a, value *out) {
  int rc = call_fn_(c, op, a, out);
  if (rc != 0) tc_reattribute(c->err, op);
  return rc;
}
