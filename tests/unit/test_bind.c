/* The binder (repl/bind.c): every typed signature of the op table parses
 * with known types and shows (for :help) without them; every default it
 * shows can be typed back; arguments convert to their parameters' types
 * with errors that name the parameter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "ast.h"
#include "eval_int.h"

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
  snprintf(msg, cap, "%s", err.msg);
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
