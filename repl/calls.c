/* The built-ins' calls. A built-in with a TC_CALLS row (src/ops.def) is
 * called from its row: the arguments the binder converted (repl/bind.c)
 * go to its C function in the row's order. The few below need more than a
 * row (a default taken from another argument, an argument checked here, a
 * choice of function). */
#include <string.h>
#include "eval_int.h"

#define A_OP op
#define A_T(p) b[p].t
#define A_INT(p) b[p].i
#define A_GIVEN(p) b[p].given
#define A_NUM(p) b[p].f
#define A_BOOL(p) b[p].b
#define A_STR(p) b[p].s
#define A_AXES(p) &b[p].axes
#define A_DT(p) (tc_dtype)b[p].dt
#define A_DTN(p) b[p].dt
#define A_MODE(p) (tc_index_mode)b[p].mode
#define A_RED(p) (tc_scatter_red)b[p].mode
#define A_SEED(p) b[p].seed
#define A_K(type, value) value
#define A_INTS(p) b[p].n, b[p].ints
#define A_TS(p) b[p].nts, b[p].ts
#define A_KW(p) b[p].nts, b[p].names, b[p].ts
#define CALL_TENSOR(call) set_tensor(out, call)
#define CALL_STATUS(call) (call)
#define CALL_ARGS_(...) (__VA_ARGS__, err)

bool call_row(ctx *c, tc_op op, const barg *b, value *out, int *rc) {
  tc_err *err = c->err;
  switch (op) {
#define X(E, fn, result, params) case TC_OP_##E: *rc = CALL_##result(fn CALL_ARGS_ params); return true;
    TC_CALLS(X)
#undef X
  default: return false;
  }
}
#include "calls_undef.h"

/* The kinds of argument of each TC_CALLS row, for the test that checks
 * them against the signatures (tests/unit/test_repl.c). */
#define A_OP {CALL_ARG_OP, -1}
#define A_T(i) {CALL_ARG_T, i}
#define A_INT(i) {CALL_ARG_INT, i}
#define A_GIVEN(i) {CALL_ARG_GIVEN, i}
#define A_NUM(i) {CALL_ARG_NUM, i}
#define A_BOOL(i) {CALL_ARG_BOOL, i}
#define A_STR(i) {CALL_ARG_STR, i}
#define A_AXES(i) {CALL_ARG_AXES, i}
#define A_DT(i) {CALL_ARG_DT, i}
#define A_DTN(i) {CALL_ARG_DT, i}
#define A_MODE(i) {CALL_ARG_MODE, i}
#define A_RED(i) {CALL_ARG_RED, i}
#define A_SEED(i) {CALL_ARG_SEED, i}
#define A_K(type, value) {CALL_ARG_K, -1}
#define A_INTS(i) {CALL_ARG_INTS, i}
#define A_TS(i) {CALL_ARG_TS, i}
#define A_KW(i) {CALL_ARG_KW, i}
#define UNPAREN_(...) __VA_ARGS__
int call_row_args(tc_op op, call_arg *out, int cap) {
  switch (op) {
#define X(E, fn, result, params) \
  case TC_OP_##E: { \
    const call_arg a[] = {UNPAREN_ params}; \
    int n = (int)(sizeof a / sizeof a[0]); \
    memcpy(out, a, sizeof(call_arg) * (size_t)(n < cap ? n : cap)); \
    return n; \
  }
    TC_CALLS(X)
#undef X
  default: return -1;
  }
}
#include "calls_undef.h"

/* ---- the built-ins that need more than a row ---- */
int call_special(ctx *c, tc_op op, args *a, value *out) {
  barg *b = a->b;
  tc_err *err = c->err;
  switch (op) {
  case TC_OP_EYE: return set_tensor(out, tc_eye(b[0].i, b[1].given ? b[1].i : b[0].i, b[2].i, (tc_dtype)b[3].dt, err));
  case TC_OP_LOAD: return set_tensor(out, b[1].b ? tc_map_npy(b[0].s, err) : tc_load_npy(b[0].s, err));
  case TC_OP_FROM_JSON: return set_tensor(out, tc_from_json(b[0].s, strlen(b[0].s), op, err));
  case TC_OP_SEARCHSORTED:
    if (strcmp(b[2].s, "left") && strcmp(b[2].s, "right"))
      return fail_node(c, a->at[2], TC_E_BAD_ARG, "side must be \"left\" or \"right\", not \"%s\"", b[2].s);
    return set_tensor(out, tc_searchsorted(b[0].t, b[1].t, !strcmp(b[2].s, "right"), err));
  default: return tc_err_set(err, TC_E_DTYPE, (int)op, -1, "%s", "not implemented");
  }
}
