/* The binder (repl/bind.c): every typed signature of the op table parses
 * with known types and shows (for :help) without them; every default it
 * shows can be typed back; arguments convert to their parameters' types
 * with errors that name the parameter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "ast.h"
#include "eval_int.h"
#include "tt.h"

Test(bind, every_signature_has_known_types_and_shows_without_them) {
  for (int op = 0; op < TC_OP_COUNT; op++) {
    const sig *g = get_sig((tc_op)op);
    cr_expect(!g->bad_type, "%s(%s): a type the binder does not know", tc_op_name((tc_op)op), tc_op_params((tc_op)op));
    cr_expect(g->n > 0 && g->n <= MAX_PARAMS, "%s: %d parameters", tc_op_name((tc_op)op), g->n);
    /* the shown signature is the typed one with each ":type" removed */
    char shown[256] = "";
    for (int i = 0; i < g->n; i++) {
      size_t len = strlen(shown);
      snprintf(shown + len, sizeof shown - len, "%s%s%s%s", i ? ", " : "", g->names[i], g->defs[i][0] ? "=" : "",
               g->defs[i]);
    }
    cr_expect_str_eq(tc_op_signature((tc_op)op), shown, "%s", tc_op_name((tc_op)op));
    cr_expect(strchr(tc_op_signature((tc_op)op), ':') == NULL, "%s shows a type", tc_op_name((tc_op)op));
  }
}

/* Each argument of a TC_CALLS row (src/ops.def) reads a parameter of the
 * op's signature whose type gives what the argument takes, and every
 * parameter is read: a row that names the wrong position fails here. */
static bool arg_fits(call_arg_kind k, ptype t) {
  switch (k) {
  case CALL_ARG_T: return t == P_TENSOR || t == P_OPT;
  case CALL_ARG_INT: return t == P_INT;
  case CALL_ARG_GIVEN: return t == P_INT || t == P_NUM || t == P_OPT;
  case CALL_ARG_NUM: return t == P_NUM;
  case CALL_ARG_BOOL: return t == P_BOOL;
  case CALL_ARG_STR: return t == P_STR;
  case CALL_ARG_AXES: return t == P_AXES;
  case CALL_ARG_DT: return t == P_DTYPE;
  case CALL_ARG_MODE: return t == P_MODE;
  case CALL_ARG_RED: return t == P_REDUCE;
  case CALL_ARG_SEED: return t == P_SEED;
  case CALL_ARG_INTS: return t == P_INTS || t == P_SHAPE;
  case CALL_ARG_TS: return t == P_TENSORS || t == P_REST;
  case CALL_ARG_KW: return t == P_KWARGS;
  default: return false;
  }
}

Test(bind, every_call_row_reads_its_signature) {
  int rows = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    call_arg a[16];
    int n = call_row_args((tc_op)op, a, 16);
    if (n < 0) continue;
    rows++;
    const sig *g = get_sig((tc_op)op);
    bool read[MAX_PARAMS] = {false};
    cr_assert(n <= 16, "%s: %d arguments", tc_op_name((tc_op)op), n);
    for (int i = 0; i < n; i++) {
      if (a[i].kind == CALL_ARG_OP || a[i].kind == CALL_ARG_K) continue;
      int p = a[i].param;
      cr_assert(p >= 0 && p < g->n, "%s: argument %d reads parameter %d of %d", tc_op_name((tc_op)op), i + 1, p, g->n);
      cr_expect(arg_fits(a[i].kind, g->types[p]), "%s: argument %d does not fit parameter %s", tc_op_name((tc_op)op),
                i + 1, g->names[p]);
      read[p] = true;
    }
    for (int p = 0; p < g->n; p++) cr_expect(read[p], "%s: parameter %s is never passed", tc_op_name((tc_op)op), g->names[p]);
  }
  cr_expect(rows >= 60, "%d TC_CALLS rows", rows);
}

/* Runs one statement; returns the error code (TC_OK on success) and the
 * printed message in msg. */
static tc_code run(session *s, const char *src, char *msg, size_t cap) {
  arena ar = {0};
  parser p;
  tc_err err;
  tc_err_clear(&err);
  parser_init(&p, src, (int32_t)strlen(src), &ar, &err);
  node *n = NULL;
  value v = {0};
  if (parse_statement(&p, &n) == PARSE_OK) eval_statement(s, n, &v, &err);
  value_free(&v);
  arena_free(&ar);
  snprintf(msg, cap, "%s", tt_msg(&err));
  return err.code;
}

/* Each default a signature shows, typed as the argument, gives what
 * leaving the argument out gives. */
Test(bind, every_shown_default_can_be_typed) {
  session s;
  session_init(&s);
  int checked = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    const sig *g = get_sig((tc_op)op);
    for (int i = 0; i < g->n; i++) {
      if (!g->defs[i][0]) continue;
      char src[512], msg[400];
      snprintf(src, sizeof src, "%s(%s=%s)", tc_op_name((tc_op)op), g->names[i], g->defs[i]);
      tc_code code = run(&s, src, msg, sizeof msg);
      /* the default itself must bind: any error is about other arguments */
      cr_expect(code != TC_E_UNDEFINED && code != TC_E_SYNTAX && !strstr(msg, "is a function"),
                "%s: %s", src, msg);
      checked++;
    }
  }
  cr_assert_gt(checked, 20);
  session_free(&s);
}

Test(bind, none_means_not_given_and_errors_name_the_parameter) {
  session s;
  session_init(&s);
  char msg[400];
  cr_expect_eq(run(&s, "a = reduce_sum([[1, 2], [3, 4]], axis=none)", msg, sizeof msg), TC_OK, "%s", msg);
  cr_expect_eq(run(&s, "b = count_nonzero([[1, 0], [3, 4]], none)", msg, sizeof msg), TC_OK, "%s", msg);
  cr_expect_eq(run(&s, "c = eye(2, m=none)", msg, sizeof msg), TC_OK, "%s", msg);
  cr_expect_eq(run(&s, "reshape([1, 2], none)", msg, sizeof msg), TC_E_BAD_ARG);
  cr_expect(strstr(msg, "missing argument shape") != NULL, "%s", msg);
  cr_expect_eq(run(&s, "logsumexp([1.0], keepdims=1)", msg, sizeof msg), TC_E_BAD_ARG);
  cr_expect_str_eq(msg, "logsumexp: argument keepdims must be true or false");
  cr_expect_eq(run(&s, "take([1, 2], [0], mode=\"nope\")", msg, sizeof msg), TC_E_BAD_ARG);
  cr_expect_str_eq(msg, "take: unknown mode \"nope\" (error, clip, wrap, fill, drop)");
  cr_expect_eq(run(&s, "zeros([2], dtype=\"u7\")", msg, sizeof msg), TC_E_BAD_ARG);
  cr_expect(strstr(msg, "unknown dtype \"u7\"") != NULL, "%s", msg);
  cr_expect_eq(run(&s, "count_nonzero([1], keepdims=true)", msg, sizeof msg), TC_E_BAD_ARG);
  cr_expect(strstr(msg, "unknown keyword argument keepdims") != NULL, "%s", msg);
  session_free(&s);
}
