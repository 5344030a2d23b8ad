/* :time STMT (SPEC 8): the statement parsed once, run at least 5 times and
 * 0.2 s, the median of one run printed; and the parsing of a command's
 * statement that :time and :verify share. */
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "runner_int.h"


parse_status runner_parse_command(const char *full, size_t off, arena *ar, tc_err *err, char **copy, node **stmt) {
  int32_t len = (int32_t)strlen(full);
  *copy = strdup(full);
  if (!*copy) {
    tc_err_set(err, TC_E_OOM, -1, -1, "%s", "out of memory");
    return PARSE_ERROR;
  }
  memset(*copy, ' ', off);
  parser p;
  parser_init(&p, *copy, len, ar, err);
  return parse_statement(&p, stmt);
}

node *runner_command_stmt(runner *r, const char *full, size_t off, arena *ar, char **text, bool expr_only,
                          const char *needs) {
  tc_err err;
  tc_err_clear(&err);
  node *stmt;
  parse_status st = runner_parse_command(full, off, ar, &err, text, &stmt);
  if (!*text) {
    cmd_error(r, TC_E_OOM, "%s", "out of memory");
    return NULL;
  }
  bool stmt_kind = st == PARSE_OK && (stmt->kind == N_ASSIGN || stmt->kind == N_DEF || stmt->kind == N_IF ||
                                      stmt->kind == N_WHILE || stmt->kind == N_FOR);
  if (st == PARSE_OK && !(expr_only && stmt_kind)) return stmt;
  if (st == PARSE_OK || st == PARSE_END || st == PARSE_EMPTY) cmd_error(r, TC_E_BAD_ARG, "%s", needs);
  else runner_fail(r, &err, full, (int32_t)strlen(full), r->cmd_line);
  arena_free(ar);
  free(*text);
  *text = NULL;
  return NULL;
}

/* :time STMT. `full` is the whole command line and STMT starts at `off`. */
void cmd_time(runner *r, const char *full, size_t off) {
  arena ar = {0};
  tc_err err;
  tc_err_clear(&err);
  int32_t len = (int32_t)strlen(full);
  char *text;
  node *stmt = runner_command_stmt(r, full, off, &ar, &text, false, ":time needs a statement");
  if (!stmt) return;
  const char *shown = full;
  double *times = NULL;
  int runs = 0, cap = 0;
  double start = tc_now_s();
  while (runs < 5 || tc_now_s() - start < 0.2) {
    value v = {0};
    tc_err_clear(&err);
    if (tc_interrupt_flag) {
      tc_err_set(&err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
      err.start = stmt->start;
      err.end = stmt->end;
    }
    double t0 = tc_now_s();
    int rc = err.code != TC_OK ? -1 : eval_statement(&r->s, stmt, &v, &err);
    double dt = tc_now_s() - t0;
    value_free(&v);
    if (rc != 0) { runner_fail(r, &err, shown, len, r->cmd_line); free(times); arena_free(&ar); free(text); return; }
    if (runs == cap) {
      cap = cap ? cap * 2 : 64;
      double *nt = realloc(times, sizeof *nt * (size_t)cap);
      if (!nt && runs == 0) {   /* no run to take a median of */
        cmd_error(r, TC_E_OOM, "%s", ":time: out of memory");
        arena_free(&ar);
        free(text);
        return;
      }
      if (!nt) break;
      times = nt;
    }
    times[runs++] = dt;
    if (runs >= 100000) break;
  }
  double med = tc_median(times, runs);
  const char *eng = tc_engine_name(tc_get_engine());
  if (r->json)
    fprintf(r->out, "{\"ok\":true,\"type\":\"time\",\"median_s\":%.9g,\"runs\":%d,\"engine\":\"%s\"}\n", med, runs, eng);
  else if (med >= 1) fprintf(r->out, "median %.3f s over %d runs (%s)\n", med, runs, eng);
  else if (med >= 1e-3) fprintf(r->out, "median %.3f ms over %d runs (%s)\n", med * 1e3, runs, eng);
  else fprintf(r->out, "median %.3f us over %d runs (%s)\n", med * 1e6, runs, eng);
  free(times);
  arena_free(&ar);
  free(text);
}

