/* Errors and outcomes: the text report with its source line and caret
 * (columns in characters), the JSON error line, the failure's effect on
 * the run, and JSON outcome lines built with cJSON. */
#include <stdlib.h>
#include <string.h>
#include "lexer.h"
#include "runner_int.h"

/* ---- error reports ---- */
/* Columns count characters, not bytes: a valid UTF-8 sequence is one
 * column, and so is each byte of invalid UTF-8 (shown as '?'). The bytes
 * of the unit at src[i], the line ending at le. */
static int32_t unit_len(const char *src, int32_t i, int32_t le) {
  int k = utf8_len((const unsigned char *)src + i, (size_t)(le - i));
  return k ? k : 1;
}

/* Where e lies in src (len bytes, its first line line0): its line and
 * column (*line 0 when it has none), and the bounds [ls, le) of its line.
 * Counted from where the last report in this chunk stopped, so that many
 * errors in one long chunk (or one long line) cost linear time. */
static void locate(runner *r, const tc_err *e, const char *src, int32_t len, int line0, int *pline, int *pcol,
                   int32_t *pls, int32_t *ple) {
  int line = 0, col = 0;
  int32_t ls = 0, le = len;
  if (src && e->start >= 0 && e->start <= len) {
    int32_t from = 0;
    line = line0;
    bool cached = src == r->loc_src && len == r->loc_len && line0 == r->loc_line0 && e->start >= r->loc_pos;
    if (cached) {
      from = r->loc_pos;
      line = r->loc_line;
      ls = r->loc_ls;
    }
    for (const char *q = src + from; (q = memchr(q, '\n', (size_t)(e->start - (q - src)))); q++) {
      line++;
      ls = (int32_t)(q - src) + 1;
    }
    int32_t cfrom = ls;
    col = 1;
    if (cached && ls == r->loc_ls) {   /* the same line as the last report */
      cfrom = r->loc_pos;
      col = r->loc_col;
      le = r->loc_le;
    } else {
      const char *nl = memchr(src + ls, '\n', (size_t)(len - ls));
      le = nl ? (int32_t)(nl - src) : len;
    }
    for (int32_t i = cfrom; i < e->start; i += unit_len(src, i, le)) col++;
    r->loc_src = src;
    r->loc_len = len;
    r->loc_line0 = line0;
    r->loc_pos = e->start;
    r->loc_line = line;
    r->loc_ls = ls;
    r->loc_le = le;
    r->loc_col = col;
  } else if (!src && r->cmd_line > 0) {
    line = r->cmd_line;   /* a session command: its line, column 1 */
    col = 1;
  }
  *pline = line;
  *pcol = col;
  *pls = ls;
  *ple = le;
}

void runner_position(runner *r, const tc_err *e, const char *src, int32_t len, int line0, int *line, int *col) {
  int32_t ls, le;
  locate(r, e, src, len, line0, line, col, &ls, &le);
}

void runner_report(runner *r, const tc_err *e, const char *src, int32_t len, int line0) {
  tc_progress_clear();   /* no report on top of a progress bar */
  bool took_ctrl_c = runner_progress_took_ctrl_c();
  int line, col;
  int32_t ls, le;
  locate(r, e, src, len, line0, &line, &col, &ls, &le);
  if (r->json) {
    print_json_error(r->out, e, line, col, r->trace, r->ntrace);
    return;
  }
  fflush(r->out);
  FILE *f = r->errf;
  if (r->interactive && e->code == TC_E_INTERRUPTED && !took_ctrl_c) fputc('\n', f);   /* after the terminal's ^C */
  if (r->color) fputs("\033[1;31merror\033[0m", f);
  else fputs("error", f);
  char text[TC_ERR_TEXT];
  fprintf(f, "[%s]: %s", tc_code_name(e->code), tc_err_text(e, text));
  if (e->dtype >= 0 && e->engine >= 0)
    fprintf(f, " (%s, %s)", tc_dtype_name((tc_dtype)e->dtype), tc_engine_name((tc_engine_id)e->engine));
  else if (e->engine >= 0 && e->code != TC_E_SYNTAX)
    fprintf(f, " (%s)", tc_engine_name((tc_engine_id)e->engine));
  fputc('\n', f);
  if (line > 0 && r->source) fprintf(f, "  --> %s:%d:%d\n", r->source, line, col);
  if (src && line > 0 && le - ls < 4096) {
    fputs("  ", f);
    for (int32_t i = ls; i < le;) {   /* tabs as spaces; control characters and invalid UTF-8 as '?' */
      int k = utf8_len((const unsigned char *)src + i, (size_t)(le - i));
      unsigned char c = (unsigned char)src[i];
      if (k > 1) fwrite(src + i, 1, (size_t)k, f);
      else fputc(c == '\t' ? ' ' : !k || c < 0x20 || c == 0x7f ? '?' : c, f);
      i += k ? k : 1;
    }
    fputs("\n  ", f);
    for (int32_t i = ls; i < e->start && i < le; i += unit_len(src, i, le)) fputc(' ', f);
    int32_t end = e->end > e->start ? e->end : e->start + 1;
    if (end > le) end = le > e->start ? le : e->start + 1;
    if (r->color) fputs("\033[1;31m", f);
    for (int32_t i = e->start; i < end; i += i < le ? unit_len(src, i, le) : 1) fputc('^', f);
    if (r->color) fputs("\033[0m", f);
    fputc('\n', f);
  }
  /* each call, innermost first: the function called, and the function
   * that made the call (the next entry's) at the line of the call */
  for (int i = 0; i < r->ntrace; i++) {
    const char *caller = i + 1 < r->ntrace ? r->trace[i + 1].fn : "the top level";
    fprintf(f, "  in %s, called from %s at line %d", r->trace[i].fn, caller, r->trace[i].line);
    if (r->trace[i].repeat > 1) fprintf(f, " (%d times)", r->trace[i].repeat);
    fputc('\n', f);
  }
}

/* The failure's effect on the run: the exit status of the first, and the
 * end of the run unless -k (always for an interrupt outside the REPL). */
static void fail(runner *r, tc_code code) {
  if (!r->exit_status) r->exit_status = tc_code_exit(code);
  if (!r->keep_going && !r->interactive) r->stop = true;
  if (code == TC_E_INTERRUPTED) {
    /* Reported once; outside the REPL an interrupt ends the run, even with -k. */
    tc_interrupt_clear();
    if (!r->interactive) r->stop = true;
  }
}

void runner_fail(runner *r, const tc_err *e, const char *src, int32_t len, int line0) {
  runner_report(r, e, src, len, line0);
  fail(r, e->code);
}

/* ---- session commands' errors and JSON outcomes ---- */
void cmd_error(runner *r, tc_code code, const char *fmt, const char *arg) {
  tc_err e;
  tc_err_clear(&e);
  tc_err_set(&e, code, -1, -1, fmt, arg);
  e.engine = -1;
  runner_fail(r, &e, NULL, 0, 0);
}

/* cJSON leaves out, without a word, whatever it cannot allocate: its
 * allocations go through a hook that remembers a failure, so that an
 * outcome line is printed whole or replaced by out_of_memory. */
static bool cjson_oom;
static void *cjson_alloc(size_t n) {
  void *p = malloc(n);
  if (!p) cjson_oom = true;
  return p;
}

void cjson_begin(void) {
  static bool hooked;
  if (!hooked) {
    cJSON_Hooks h = {cjson_alloc, free};
    cJSON_InitHooks(&h);
    hooked = true;
  }
  cjson_oom = false;
}

/* Prints o (built since cjson_begin) as one line and frees it; -1 when
 * anything in it could not be allocated (nothing is printed). */
int cjson_emit(FILE *f, cJSON *o) {
  char *s = o && !cjson_oom ? cJSON_PrintUnformatted(o) : NULL;
  int rc = s && !cjson_oom ? 0 : -1;
  if (rc == 0) fprintf(f, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(o);
  return rc;
}

void emit_outcome(runner *r, cJSON *o) {
  if (cjson_emit(r->out, o) != 0) cmd_error(r, TC_E_OOM, "%s", "out of memory while printing");
}

void json_text(runner *r, const char *type, const char *text) {
  cjson_begin();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddTrueToObject(o, "ok");
  cJSON_AddStringToObject(o, "type", type);
  char *t = utf8_sanitize(text);
  if (!t) cjson_oom = true;
  cJSON_AddStringToObject(o, "text", t ? t : "");
  free(t);
  emit_outcome(r, o);
}

