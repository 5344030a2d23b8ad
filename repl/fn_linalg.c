/* einsum, norm and matrix_rank in the language (SPEC 12), reached from
 * call_op() by their family, TC_FAM_LINALG; the other linear algebra
 * built-ins are called from their TC_CALLS rows (repl/calls.c). */
#include <math.h>
#include <string.h>
#include "eval_int.h"

/* norm's ord: none, a number (inf and -inf included), "fro" or "nuc". */
static int arg_ord(ctx *c, args *a, int i, tc_norm_kind *kind, double *ord) {
  const value *v = &a->v[i];
  *kind = TC_NORM_NONE;
  if (v->kind == V_NONE) return 0;
  if (v->kind == V_STR) {
    if (!strcmp(v->s, "fro")) { *kind = TC_NORM_FRO; return 0; }
    if (!strcmp(v->s, "nuc")) { *kind = TC_NORM_NUC; return 0; }
  } else if (v->kind == V_TENSOR && v->t->ndim == 0 && v->t->dtype != TC_DT_BOOL) {
    tc_tensor *f = tc_cast(v->t, TC_DT_F64, c->err);
    int rc = f ? tc_tensor_to_host(f, ord, c->err) : -1;
    tc_tensor_free(f);
    if (rc != 0) return -1;
    if (isnan(*ord)) return fail_node(c, a->at[i], TC_E_BAD_ARG, "%s", "ord must not be NaN");
    *kind = TC_NORM_NUM;
    return 0;
  }
  return fail_node(c, a->at[i], TC_E_BAD_ARG, "%s", "ord must be a number (inf and -inf too), \"fro\" or \"nuc\"");
}

int call_linalg(ctx *c, tc_op op, args *a, value *out) {
  barg *b = a->b;
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_EINSUM: {
    tc_tensor *r = tc_einsum(b[0].s, b[1].nts, b[1].ts, err);
    if (!r && err->start >= 0 && a->at[0]->kind == N_STR) {
      /* a position in the subscripts: shift past the string's opening quote */
      err->engine = -1;
      err->start += a->at[0]->start + 1;
      err->end += a->at[0]->start + 1;
    }
    return set_tensor(out, r);
  }
  case TC_OP_MATRIX_RANK:
    if (b[1].given && !(b[1].f >= 0))
      return fail_node(c, a->at[1], TC_E_BAD_ARG, "%s", "tol must be a number >= 0");
    return set_tensor(out, tc_matrix_rank(b[0].t, b[1].given ? b[1].f : -1, err));
  case TC_OP_NORM: {
    tc_norm_kind kind;
    double ord = 0;
    if (arg_ord(c, a, 1, &kind, &ord) != 0) return -1;
    return set_tensor(out, tc_norm(b[0].t, kind, ord, &b[2].axes, b[3].b, err));
  }
  default:
    return fail_node(c, a->at[0], TC_E_BAD_ARG, "%s", "not a linear algebra function");
  }
}
