/* The language front end: lexer tokens, parse trees and their spans,
 * statuses the REPL relies on, the float printer and the UTF-8 guard. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ast.h"
#include "print.h"
#include "tt.h"

/* Writes a parse tree as a fully parenthesised string, e.g. "(neg (pow 2 2))". */
static void show(const node *n, char *buf, size_t cap);

/* " kid1 kid2 ...)" after what buf holds. */
static void show_kids(const node *n, char *buf, size_t cap) {
  for (int i = 0; i < n->nkids; i++) {
    strncat(buf, " ", cap - strlen(buf) - 1);
    show(n->kids[i], buf, cap);
  }
  strncat(buf, ")", cap - strlen(buf) - 1);
}

static void show(const node *n, char *buf, size_t cap) {
  size_t len = strlen(buf);
  switch (n->kind) {
  case N_INT: snprintf(buf + len, cap - len, "%lld", (long long)n->ival); return;
  case N_FLOAT: snprintf(buf + len, cap - len, "%g", n->fval); return;
  case N_NAME: snprintf(buf + len, cap - len, "%s", n->str); return;
  case N_BOOL: snprintf(buf + len, cap - len, "%s", n->ival ? "true" : "false"); return;
  case N_BINOP: case N_UNOP:
    snprintf(buf + len, cap - len, "(%s", n->op >= 0 ? tc_op_name((tc_op)n->op) : "plus");
    show_kids(n, buf, cap);
    return;
  case N_CALL:
    snprintf(buf + len, cap - len, "(call %s", n->str);
    show_kids(n, buf, cap);
    return;
  case N_KWARG:
    snprintf(buf + len, cap - len, "%s=", n->str);
    show(n->kids[0], buf, cap);
    return;
  case N_LIST:
    strncat(buf, "[", cap - len - 1);
    for (int i = 0; i < n->nkids; i++) {
      if (i) strncat(buf, " ", cap - strlen(buf) - 1);
      show(n->kids[i], buf, cap);
    }
    strncat(buf, "]", cap - strlen(buf) - 1);
    return;
  case N_ASSIGN:
    strncat(buf, "(= ", cap - len - 1);
    show(n->kids[0], buf, cap);
    strncat(buf, " ", cap - strlen(buf) - 1);
    show(n->kids[1], buf, cap);
    strncat(buf, ")", cap - strlen(buf) - 1);
    return;
  default: snprintf(buf + len, cap - len, "?"); return;
  }
}

typedef struct parsed { parse_status st; char tree[512]; tc_err err; } parsed;

static parsed parse1(const char *src) {
  parsed r;
  memset(&r, 0, sizeof r);
  arena ar = {0};
  parser p;
  tc_err_clear(&r.err);
  parser_init(&p, src, (int32_t)strlen(src), &ar, &r.err);
  node *n = NULL;
  r.st = parse_statement(&p, &n);
  if (r.st == PARSE_OK) show(n, r.tree, sizeof r.tree);
  arena_free(&ar);
  return r;
}

static void tree_is(const char *src, const char *want) {
  parsed r = parse1(src);
  cr_assert_eq(r.st, PARSE_OK, "%s: status %d (%s)", src, r.st, tt_msg(&r.err));
  cr_assert_str_eq(r.tree, want, "%s", src);
}

Test(parser, precedence_follows_the_table) {
  tree_is("1 + 2 * 3", "(add 1 (mul 2 3))");
  tree_is("7 - 2 - 1", "(sub (sub 7 2) 1)");
  tree_is("2 ** 3 ** 2", "(pow 2 (pow 3 2))");
  tree_is("-2 ** 2", "(neg (pow 2 2))");
  tree_is("-x ** 2", "(neg (pow x 2))");
  tree_is("2 ** -1", "(pow 2 -1)");
  tree_is("1 + 2 << 1", "(shift_left (add 1 2) 1)");
  tree_is("6 ^ 3 & 1", "(bitwise_and (pow 6 3) 1)");   /* ^ is power (SPEC 11) */
  tree_is("2 ^ 3 ^ 2", "(pow 2 (pow 3 2))");
  tree_is("-2 ^ 2", "(neg (pow 2 2))");
  tree_is("1 | xor(2, 3)", "(bitwise_or 1 (call xor 2 3))");
  tree_is("a == b + 1", "(equal a (add b 1))");
  tree_is("~a * b", "(mul (bitwise_not a) b)");
  tree_is("+a", "(plus a)");
}

Test(parser, directly_negated_literal_is_one_token) {
  tree_is("-9223372036854775808", "-9223372036854775808");
  tree_is("x - 1", "(sub x 1)");
  tree_is("[-1, - 2]", "[-1 (neg 2)]");
  parsed r = parse1("- 9223372036854775808");
  cr_assert_eq(r.st, PARSE_OK);
  cr_assert_str_eq(r.tree, "(neg 0)");   /* the literal alone overflows: flagged, evaluated as an error */
}

Test(parser, calls_and_keywords) {
  tree_is("sum(x, axis=0, keepdims=true)", "(call sum x axis=0 keepdims=true)");
  tree_is("f()", "(call f)");
  tree_is("y = f(g(1), 2)", "(= y (call f (call g 1) 2))");
}

Test(parser, comparisons_do_not_chain_but_parentheses_allow_it) {
  parsed r = parse1("1 < 2 < 3");
  cr_assert_eq(r.st, PARSE_ERROR);
  cr_assert_eq(r.err.code, TC_E_SYNTAX);
  cr_assert_eq(r.err.start, 6, "caret at the second comparison, not %d", r.err.start);
  tree_is("(1 < 2) < 3", "(less (less 1 2) 3)");
}

Test(parser, open_brackets_are_incomplete_and_name_the_bracket) {
  parsed r = parse1("[1, (2 +");
  cr_assert_eq(r.st, PARSE_INCOMPLETE);
  cr_assert_eq(r.err.start, 4);
  cr_assert(strstr(tt_msg(&r.err), "'(' is never closed"), "%s", tt_msg(&r.err));
  r = parse1("sum([1,\n 2]");
  cr_assert_eq(r.st, PARSE_INCOMPLETE);
  cr_assert_eq(r.err.start, 3);
}

Test(parser, spans_point_at_operators_and_names) {
  arena ar = {0};
  tc_err err;
  parser p;
  const char *src = "abc + sum(x)";
  tc_err_clear(&err);
  parser_init(&p, src, (int32_t)strlen(src), &ar, &err);
  node *n;
  cr_assert_eq(parse_statement(&p, &n), PARSE_OK);
  cr_assert_eq(n->kind, N_BINOP);
  cr_assert_eq(n->start, 0);
  cr_assert_eq(n->end, 12);
  cr_assert_eq(n->ostart, 4);
  cr_assert_eq(n->oend, 5);
  cr_assert_eq(n->kids[1]->kind, N_CALL);
  cr_assert_eq(n->kids[1]->ostart, 6);
  cr_assert_eq(n->kids[1]->oend, 9);
  arena_free(&ar);
}

Test(parser, nesting_limit_is_a_syntax_error) {
  static char src[8192];
  memset(src, '(', 3000);
  src[3000] = '1';
  memset(src + 3001, ')', 3000);
  src[6001] = 0;
  parsed r = parse1(src);
  cr_assert_eq(r.st, PARSE_ERROR);
  cr_assert_eq(r.err.code, TC_E_SYNTAX);
  cr_assert(strstr(tt_msg(&r.err), "nested too deeply"), "%s", tt_msg(&r.err));
}

Test(parser, several_statements_and_blank_ones) {
  arena ar = {0};
  tc_err err;
  parser p;
  const char *src = "1; ;2\n\n3 # comment\n";
  tc_err_clear(&err);
  parser_init(&p, src, (int32_t)strlen(src), &ar, &err);
  int ok = 0, empty = 0;
  node *n;
  for (parse_status st; (st = parse_statement(&p, &n)) != PARSE_END;) {
    cr_assert(st == PARSE_OK || st == PARSE_EMPTY, "status %d", st);
    ok += st == PARSE_OK;
    empty += st == PARSE_EMPTY;
  }
  cr_assert_eq(ok, 3);
  cr_assert_geq(empty, 1);
  arena_free(&ar);
}

static void lexes_as(const char *src, tok_kind kind, uint64_t mag, bool overflow) {
  lexer lx;
  lex_init(&lx, src, (int32_t)strlen(src));
  token t = lex_next(&lx);
  cr_assert_eq(t.kind, kind, "%s: kind %d", src, t.kind);
  if (kind == T_INT) {
    cr_assert_eq(t.overflow, overflow, "%s", src);
    if (!overflow) cr_assert_eq(t.mag, mag, "%s", src);
  }
  cr_assert_eq(lex_next(&lx).kind, T_EOF, "%s: one token", src);
}

Test(lexer, integer_literals) {
  lexes_as("42", T_INT, 42, false);
  lexes_as("0x2a", T_INT, 42, false);
  lexes_as("0B101", T_INT, 5, false);
  lexes_as("1_000", T_INT, 1000, false);
  lexes_as("18446744073709551615", T_INT, UINT64_MAX, false);
  lexes_as("18446744073709551616", T_INT, 0, true);
  lexes_as("0x1_0000_0000_0000_0000", T_INT, 0, true);
  lexes_as("1__0", T_ERROR, 0, false);
  lexes_as("1_", T_ERROR, 0, false);
  lexes_as("0x", T_ERROR, 0, false);
  lexes_as("0b2", T_ERROR, 0, false);
  lexes_as("12abc", T_ERROR, 0, false);
}

Test(lexer, float_literals_and_operators) {
  lexes_as("1.5", T_FLOAT, 0, false);
  lexes_as(".5", T_FLOAT, 0, false);
  lexes_as("1e-3", T_FLOAT, 0, false);
  lexes_as("1.2.3", T_ERROR, 0, false);
  lexes_as("**", T_OP, 0, false);
  lexes_as("//", T_OP, 0, false);
  lexes_as("<=", T_OP, 0, false);
  lexes_as("=", T_ASSIGN, 0, false);
  lexes_as("...", T_ELLIPSIS, 0, false);
  lexes_as("\"a\\\"b\"", T_STRING, 0, false);
  lexes_as("\"open", T_ERROR, 0, false);
  lexes_as("$", T_ERROR, 0, false);
}

Test(lexer, newlines_inside_brackets_are_not_separators) {
  lexer lx;
  const char *src = "[1,\n2]\n";
  lex_init(&lx, src, (int32_t)strlen(src));
  tok_kind want[] = {T_LBRACK, T_INT, T_COMMA, T_INT, T_RBRACK, T_NEWLINE, T_EOF};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) cr_assert_eq(lex_next(&lx).kind, want[i], "token %zu", i);
}

static void prints(double v, tc_dtype dt, int precision, const char *want) {
  char buf[64];
  fmt_float(buf, sizeof buf, v, dt, precision);
  cr_assert_str_eq(buf, want, "%.17g as %s", v, tc_dtype_name(dt));
}

Test(print, shortest_round_trip_per_dtype) {
  prints(0.1, TC_DT_F64, 0, "0.1");
  prints(1.0 / 3, TC_DT_F64, 0, "0.3333333333333333");
  prints(0.1 + 0.2, TC_DT_F64, 0, "0.30000000000000004");
  prints(1e16, TC_DT_F64, 0, "1e+16");
  prints(1e15, TC_DT_F64, 0, "1000000000000000.0");
  prints(1e-4, TC_DT_F64, 0, "0.0001");
  prints(1e-5, TC_DT_F64, 0, "1e-05");
  prints(5e-324, TC_DT_F64, 0, "5e-324");
  prints(-0.0, TC_DT_F64, 0, "-0.0");
  prints(2.0, TC_DT_F64, 0, "2.0");
  prints(NAN, TC_DT_F64, 0, "nan");
  prints(-INFINITY, TC_DT_F64, 0, "-inf");
  prints((float)(1.0 / 3), TC_DT_F32, 0, "0.33333334");
  prints((float)0.1, TC_DT_F32, 0, "0.1");
  prints(16777216.0, TC_DT_F32, 0, "16777216.0");
  prints(tc_f16_to_f32(tc_f64_to_f16(0.1)), TC_DT_F16, 0, "0.1");
  prints(65504.0, TC_DT_F16, 0, "65500.0");
  prints(tc_bf16_to_f32(tc_f64_to_bf16(1.0 / 3)), TC_DT_BF16, 0, "0.334");
  prints(1.0 / 3, TC_DT_F64, 3, "0.333");
  prints(1234.5678, TC_DT_F64, 3, "1.23e+03");   /* %g-like (SPEC 11): never 1230.0, which looks exact */
  prints(123.5, TC_DT_F64, 3, "124.0");
  prints(0.015625, TC_DT_F16, 0, "0.01563");     /* a power of two: the gap below is half the gap above */
  prints(0.0009765625, TC_DT_F16, 0, "0.000977");
}

Test(print, sanitised_text_is_valid_utf8) {
  char *s = utf8_sanitize("ok \xc3\xa9 \xff \xed\xa0\x80 \xc0\xaf end");
  cr_assert_not_null(s);
  cr_assert_str_eq(s, "ok \xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd end");
  free(s);
}
