/* Session commands (repl/commands.c): Tab completion offers every command
 * the dispatcher accepts, the dispatcher accepts every command completion
 * offers, and :help lists them all. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lexer.h"
#include "runner_int.h"

/* Runs one line through a JSON runner; returns what it printed. */
static char *run_line(const char *line) {
  runner r;
  runner_init(&r);
  r.json = true;
  r.keep_going = true;
  char *out = NULL;
  size_t n = 0;
  r.out = open_memstream(&out, &n);
  r.errf = r.out;
  runner_text(&r, line);
  fclose(r.out);
  runner_free(&r);
  return out;
}

/* Whether Tab completion offers name: it is among the offered words. */
static bool completed(const char *name) {
  char all[512] = " ";
  for (int i = 0; runner_command_name(i); i++) {
    strncat(all, runner_command_name(i), sizeof all - strlen(all) - 2);
    strcat(all, " ");
  }
  char word[40];
  snprintf(word, sizeof word, " %s ", name);
  return strstr(all, word) != NULL;
}

Test(commands, completion_offers_every_command_the_dispatcher_accepts) {
  int rows = 0;
  for (const command *c = runner_commands; c->name; c++, rows++) {
    char name[32];
    snprintf(name, sizeof name, ":%s", c->name);
    cr_expect(completed(name), "%s is dispatched but not completed", name);
    /* the other spellings (:q, :exit) dispatch to a completed command */
    for (int k = 0; k < 3 && c->aliases[k]; k++) {
      snprintf(name, sizeof name, ":%s", c->aliases[k]);
      char *out = run_line(name);
      cr_expect(strstr(out, "unknown command") == NULL, "%s: %s", name, out);
      free(out);
    }
  }
  int offered = 0;
  for (const char *c; (c = runner_command_name(offered)); offered++) {
    char *out = run_line(c);   /* accepted: any outcome but "unknown command" */
    cr_expect(strstr(out, "unknown command") == NULL, "%s is completed but not dispatched: %s", c, out);
    free(out);
  }
  cr_expect_eq(offered, rows);
  cr_expect(completed(":verify"), ":verify is handled, so it must complete");
  char *out = run_line(":nosuch");
  cr_expect(strstr(out, "unknown command :nosuch") != NULL, "%s", out);
  free(out);
}

Test(commands, help_lists_every_command_and_argument_words_complete) {
  char *out = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&out, &n);
  cr_assert_eq(help_text(f, ""), 0);
  fclose(f);
  for (const command *c = runner_commands; c->name; c++)
    cr_expect(strstr(out, c->usage) != NULL, ":help does not list %s", c->usage);
  free(out);
  bool more;
  const char *const *w = runner_command_words(":engine ", &more);
  cr_assert_not_null(w);
  cr_expect_str_eq(w[0], "cpu");
  cr_expect(!more);
  w = runner_command_words("  :set pre", &more);
  cr_assert_not_null(w);
  cr_expect(more);
  cr_expect_null(runner_command_words(":set precision 3", &more));
  cr_expect_null(runner_command_words(":eng", &more));
}

/* A # at a command's argument's start or after a blank begins a comment;
 * inside a word (a file's name) it does not; :time and :verify leave the
 * statement's comment to its lexer. */
Test(commands, a_comment_ends_a_command_line) {
  char *out = run_line(":set precision 3   # three digits\n:set width 50 #\n:set max_memory 8G# x\n:set\n");
  cr_expect(strstr(out, "\"precision\":3") != NULL, "%s", out);
  cr_expect(strstr(out, "bad size '8G# x'") != NULL, "a # inside a word is the word's: %s", out);
  cr_expect(strstr(out, "\"line\":1,") == NULL && strstr(out, "\"line\":2,") == NULL, "%s", out);
  free(out);
  out = run_line(":run no_such_dir/a#b.tc # the file\n:help # all\n:time 1 + 1 # c\n");
  cr_expect(strstr(out, "cannot read no_such_dir/a#b.tc:") != NULL, "%s", out);
  cr_expect(strstr(out, "unknown") == NULL && strstr(out, "syntax") == NULL, "%s", out);
  cr_expect(strstr(out, "median") != NULL, "%s", out);
  free(out);
}

/* :help SUBJECT into a string; *rc its result */
static char *help_of(const char *subject, int *rc) {
  char *out = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&out, &n);
  cr_assert_not_null(f);
  *rc = help_text(f, subject);
  fclose(f);
  return out;
}

/* Every operator spelling (infix and prefix, ^ and the compound
 * assignments), every reserved word and every session command (with and
 * without its colon) has a :help entry, from the tables; no entry cites an
 * internal document. */
Test(commands, help_for_every_operator_word_and_command) {
  int rc, bad = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    const char *sym = tc_op_symbol((tc_op)op);
    char *out = help_of(tc_op_name((tc_op)op), &rc);
    cr_expect(rc == 0 && !strstr(out, "SPEC"), ":help %s: rc %d, or cites the SPEC: %s", tc_op_name((tc_op)op), rc, out);
    free(out);
    if (!*sym) continue;
    out = help_of(sym, &rc);
    if (rc != 0 || !strstr(out, tc_op_name((tc_op)op))) bad++, cr_log_error(":help %s: rc %d: %s", sym, rc, out);
    free(out);
    if (tc_op_assoc((tc_op)op) == TC_ASSOC_PREFIX) continue;
    char assign[16];
    snprintf(assign, sizeof assign, "%s=", sym);
    if (strcmp(sym, "==") && strcmp(sym, "!=") && strcmp(sym, "<") && strcmp(sym, ">") && strcmp(sym, "<=") &&
        strcmp(sym, ">=")) {
      char *a = help_of(assign, &rc);
      bool compound = rc == 0 && strstr(a, tc_op_name((tc_op)op));
      free(a);
      /* the compound assignments the lexer reads (T_OPASSIGN) are documented */
      lexer lx;
      lex_init(&lx, assign, (int32_t)strlen(assign));
      token t = lex_next(&lx);
      if (t.kind == T_OPASSIGN && t.end == (int32_t)strlen(assign) && !compound)
        bad++, cr_log_error(":help %s: no entry", assign);
    }
  }
  char *out = help_of("^", &rc);
  if (rc != 0 || !strstr(out, "pow")) bad++, cr_log_error(":help ^: %s", out);
  free(out);
  out = help_of("-", &rc);
  if (rc != 0 || !strstr(out, "sub(") || !strstr(out, "neg(")) bad++, cr_log_error(":help -: both ops: %s", out);
  free(out);
  for (int kw = KW_NOT + 1; kw < KW_COUNT; kw++) {
    out = help_of(keyword_name((keyword)kw), &rc);
    if (rc != 0 || !strstr(out, keyword_name((keyword)kw))) bad++, cr_log_error(":help %s: %s", keyword_name((keyword)kw), out);
    free(out);
  }
  for (const command *c = runner_commands; c->name; c++) {
    char colon[32];
    snprintf(colon, sizeof colon, ":%s", c->name);
    for (int k = 0; k < 2; k++) {
      out = help_of(k ? colon : c->name, &rc);
      if (rc != 0 || !strstr(out, c->usage) || !c->doc || !strstr(out, c->doc))
        bad++, cr_log_error(":help %s: %s", k ? colon : c->name, out);
      free(out);
    }
  }
  out = help_of("=", &rc);
  if (rc != 0 || !strstr(out, "NAME = EXPR")) bad++, cr_log_error(":help =: %s", out);
  free(out);
  cr_assert_eq(bad, 0, "%d subjects without a :help entry", bad);
}
