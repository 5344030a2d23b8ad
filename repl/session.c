/* Statements, session commands (SPEC 8), and error reporting. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "engine.h"
#include "session.h"

void runner_init(runner *r) {
  memset(r, 0, sizeof *r);
  session_init(&r->s);
  r->out = stdout;
  r->errf = stderr;
}

void runner_free(runner *r) {
  session_free(&r->s);
  free(r->buf);
  r->buf = NULL;
}

void runner_begin(runner *r) {
  r->len = 0;
  r->depth = 0;
  r->line = 0;
  r->line0 = 1;
}

bool runner_pending(const runner *r) { return r->len > 0 && r->depth > 0; }

static void fail(runner *r, tc_code code) {
  if (!r->exit_status) r->exit_status = tc_code_exit(code);
  if (!r->keep_going && !r->interactive) r->stop = true;
  if (code == TC_E_INTERRUPTED) {
    /* Reported once; outside the REPL an interrupt ends the run, even with -k. */
    tc_interrupt_clear();
    if (!r->interactive) r->stop = true;
  }
}

void runner_interrupted(runner *r) {
  if (!tc_interrupt_flag) return;
  tc_err e;
  tc_err_clear(&e);
  tc_err_set(&e, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
  e.engine = -1;
  runner_report(r, &e, NULL, 0, 0);
  fail(r, e.code);
}

/* ---- error reports ---- */
/* Columns count characters, not bytes: UTF-8 continuation bytes are skipped. */
static bool utf8_cont(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

void runner_report(runner *r, const tc_err *e, const char *src, int32_t len, int line0) {
  int line = 0, col = 0;
  int32_t ls = 0, le = len;
  if (src && e->start >= 0 && e->start <= len) {
    /* Count lines and columns from where the last report in this chunk
     * stopped, so that many errors in one long chunk (or one long line)
     * cost linear time. */
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
    for (int32_t i = cfrom; i < e->start; i++) col += !utf8_cont(src[i]);
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
  if (r->json) {
    print_json_error(r->out, e, line, col);
    return;
  }
  fflush(r->out);
  FILE *f = r->errf;
  if (r->interactive && e->code == TC_E_INTERRUPTED) fputc('\n', f);   /* after the terminal's ^C */
  if (r->color) fputs("\033[1;31merror\033[0m", f);
  else fputs("error", f);
  fprintf(f, "[%s]: %s", tc_code_name(e->code), e->msg);
  if (e->dtype >= 0 && e->engine >= 0)
    fprintf(f, " (%s, %s)", tc_dtype_name((tc_dtype)e->dtype), tc_engine_name((tc_engine_id)e->engine));
  else if (e->engine >= 0 && e->code != TC_E_SYNTAX)
    fprintf(f, " (%s)", tc_engine_name((tc_engine_id)e->engine));
  fputc('\n', f);
  if (line > 0 && r->source) fprintf(f, "  --> %s:%d:%d\n", r->source, line, col);
  if (src && line > 0 && le - ls < 4096) {
    fputs("  ", f);
    for (int32_t i = ls; i < le; i++) fputc(src[i] == '\t' ? ' ' : (unsigned char)src[i] < 0x20 ? '?' : src[i], f);
    fputs("\n  ", f);
    for (int32_t i = ls; i < e->start; i++)
      if (!utf8_cont(src[i])) fputc(' ', f);
    int32_t end = e->end > e->start ? e->end : e->start + 1;
    if (end > le) end = le > e->start ? le : e->start + 1;
    if (r->color) fputs("\033[1;31m", f);
    for (int32_t i = e->start; i < end; i++)
      if (i >= le || !utf8_cont(src[i])) fputc('^', f);
    if (r->color) fputs("\033[0m", f);
    fputc('\n', f);
  }
}

static void report(runner *r, const tc_err *e, const char *src, int32_t len, int line0) {
  runner_report(r, e, src, len, line0);
  fail(r, e->code);
}

/* ---- statements ---- */
/* Output that cannot be written (a closed pipe, a full disk) ends the run. */
static void check_output(runner *r) {
  if (fflush(r->out) == 0 && !ferror(r->out)) return;
  if (!r->write_errno) r->write_errno = errno ? errno : EIO;
  r->stop = true;
  r->quit = true;
}

static void show(runner *r, value *v) {
  tc_err err;
  tc_err_clear(&err);
  int rc = r->json ? print_json(r->out, v, &err) : print_text(r->out, v, &r->po, &err);
  if (rc != 0) report(r, &err, NULL, 0, 0);
}

/* Runs every statement of a complete chunk. */
static void run_chunk(runner *r, const char *src, int32_t len, int line0) {
  arena ar = {0};
  tc_err err;
  parser p;
  tc_err_clear(&err);
  parser_init(&p, src, len, &ar, &err);
  r->loc_src = NULL;
  while (!r->stop) {
    node *stmt;
    tc_err_clear(&err);
    parse_status st = parse_statement(&p, &stmt);
    if (st == PARSE_END) break;
    if (st == PARSE_EMPTY) continue;
    if (st != PARSE_OK) {
      report(r, &err, src, len, line0);
      parser_skip(&p);
      continue;
    }
    value v = {0};
    if (tc_interrupt_flag) {
      /* Ctrl-C between statements: the rest of the chunk is dropped too */
      tc_err_set(&err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
      err.start = stmt->start;
      err.end = stmt->end;
      report(r, &err, src, len, line0);
      break;
    }
    int rc = eval_statement(&r->s, stmt, &v, &err);
    if (rc != 0) report(r, &err, src, len, line0);
    else if (v.kind != V_NONE) show(r, &v);
    value_free(&v);
    check_output(r);
    if (rc != 0 && err.code == TC_E_INTERRUPTED) break;
  }
  arena_free(&ar);
}

/* ---- session commands ---- */
static void cmd_error(runner *r, tc_code code, const char *fmt, const char *arg) {
  tc_err e;
  tc_err_clear(&e);
  tc_err_set(&e, code, -1, -1, fmt, arg);
  e.engine = -1;
  report(r, &e, NULL, 0, 0);
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

static void cjson_begin(void) {
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
static int cjson_emit(FILE *f, cJSON *o) {
  char *s = o && !cjson_oom ? cJSON_PrintUnformatted(o) : NULL;
  int rc = s && !cjson_oom ? 0 : -1;
  if (rc == 0) fprintf(f, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(o);
  return rc;
}

static void emit_outcome(runner *r, cJSON *o) {
  if (cjson_emit(r->out, o) != 0) cmd_error(r, TC_E_OOM, "%s", "out of memory while printing");
}

static void json_text(runner *r, const char *type, const char *text) {
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

static const char *kind_title(tc_kind k) {
  switch (k) {
  case TC_KIND_BINARY: return "arithmetic";
  case TC_KIND_BITWISE: case TC_KIND_SHIFT: return "bitwise";
  case TC_KIND_COMPARE: return "comparison";
  case TC_KIND_UNARY: case TC_KIND_LOGICAL: return "unary";
  case TC_KIND_MATH: case TC_KIND_MATH2: return "math";
  case TC_KIND_ROUND: return "rounding";
  case TC_KIND_PRED: return "predicates";
  case TC_KIND_WHERE: case TC_KIND_CLIP: return "selection";
  case TC_KIND_CAST: return "casts";
  case TC_KIND_REDUCE: return "reductions";
  case TC_KIND_INFO: return "information";
  case TC_KIND_SHAPE: return "shape";
  case TC_KIND_INDEX: return "indexing";
  case TC_KIND_CTOR: return "construction";
  case TC_KIND_IO: return "files";
  case TC_KIND_MATMUL: return "matrix products";
  }
  return "other";
}

/* Writes :help (all) or :help NAME. Everything comes from the tables. */
static int help_text(FILE *f, const char *name) {
  if (!name || !*name) {
    fputs("Functions by family (:help NAME describes one; its operator in parentheses):\n", f);
    /* families in the order their first op appears in the table */
    const char *titles[TC_OP_COUNT];
    int nt = 0;
    for (int op = 0; op < TC_OP_COUNT; op++) {
      const char *t = kind_title(tc_op_kind((tc_op)op));
      int j = 0;
      while (j < nt && strcmp(titles[j], t)) j++;
      if (j == nt) titles[nt++] = t;
    }
    for (int j = 0; j < nt; j++) {
      int col = fprintf(f, "  %-12s", titles[j]);
      for (int op = 0; op < TC_OP_COUNT; op++) {
        if (strcmp(kind_title(tc_op_kind((tc_op)op)), titles[j])) continue;
        char item[64];
        const char *sym = tc_op_symbol((tc_op)op);
        int w = snprintf(item, sizeof item, *sym ? " %s (%s)" : " %s", tc_op_name((tc_op)op), sym);
        if (col + w > 78) col = fprintf(f, "\n  %-12s", "");
        fputs(item, f);
        col += w;
      }
      fputc('\n', f);
    }
    int col = fprintf(f, "  %-12s", "aliases");
    for (int i = 0; i < fn_count(); i++) {
      const fn_entry *e = fn_get(i);
      if (e->op < 0 || !strcmp(e->name, tc_op_name((tc_op)e->op))) continue;
      char item[64];
      int w = snprintf(item, sizeof item, " %s = %s", e->name, tc_op_name((tc_op)e->op));
      if (col + w > 78) col = fprintf(f, "\n  %-12s", "");
      fputs(item, f);
      col += w;
    }
    fprintf(f, "\n  %-12s", "casts");
    for (int dt = 0; dt < TC_DT_COUNT; dt++) fprintf(f, " %s(x)", tc_dtype_name((tc_dtype)dt));
    fputs("\nOperators, tightest first:", f);
    for (int bp = 100; bp > 0; bp--) {
      bool any = false;
      for (int op = 0; op < TC_OP_COUNT; op++) {
        if (tc_op_bp((tc_op)op) != bp || !*tc_op_symbol((tc_op)op)) continue;
        fprintf(f, "%s%s", any ? " " : "\n  ", tc_op_symbol((tc_op)op));
        tc_kind k = tc_op_kind((tc_op)op);
        if (k == TC_KIND_UNARY || k == TC_KIND_LOGICAL) fputs("x", f);
        any = true;
      }
    }
    fputs("\nSession commands:\n"
          "  :help [NAME]  :vars  :clear [NAME]  :engine [cpu|cuda]  :caps\n"
          "  :set [precision N | max_memory SIZE]  :time STMT  :verify STMT  :quit\n", f);
    return 0;
  }
  const fn_entry *e = fn_find(name);
  if (!e) return -1;
  if (e->op < 0) {
    fprintf(f, "%s(x)\n  cast x (a tensor or a list literal) to %s: same as cast(x, \"%s\")\n", e->name, e->name, e->name);
    e = fn_find("cast");
    if (!e) return 0;
  } else if (strcmp(e->name, tc_op_name((tc_op)e->op)))
    fprintf(f, "%s is another name for %s\n", e->name, tc_op_name((tc_op)e->op));
  tc_op op = (tc_op)e->op;
  fprintf(f, "%s(%s)", tc_op_name(op), tc_op_signature(op));
  if (*tc_op_symbol(op)) {
    tc_kind k = tc_op_kind(op);
    fprintf(f, k == TC_KIND_UNARY || k == TC_KIND_LOGICAL ? "    operator: %sx" : "    operator: a %s b", tc_op_symbol(op));
  }
  fprintf(f, "\n  %s\n", tc_op_doc(op));
  for (int eng = 0; eng < TC_ENGINE_COUNT; eng++) {
    fprintf(f, "  %-5s", tc_engine_name((tc_engine_id)eng));
    int any = 0;
    for (int dt = 0; dt < TC_DT_COUNT; dt++)
      if (tc_op_supported(op, (tc_dtype)dt, (tc_engine_id)eng)) { fprintf(f, " %s", tc_dtype_name((tc_dtype)dt)); any = 1; }
    if (!any) fputs(tc_engines[eng] ? " (no dtype)" : " (not in this build)", f);
    fputc('\n', f);
  }
  return 0;
}

void print_function_list(FILE *f) {
  for (int i = 0; i < fn_count(); i++) fprintf(f, "%s\n", fn_get(i)->name);
}

/* The capability table as one JSON line; as the outcome of :caps in a
 * session it is marked like every other outcome ("ok", "type"). */
static int print_caps_json(FILE *f, bool outcome) {
  cjson_begin();
  cJSON *o = cJSON_CreateObject();
  if (outcome) {
    cJSON_AddTrueToObject(o, "ok");
    cJSON_AddStringToObject(o, "type", "caps");
  }
  cJSON *engines = cJSON_AddArrayToObject(o, "engines"), *ops = cJSON_AddArrayToObject(o, "ops");
  for (int e = 0; e < TC_ENGINE_COUNT; e++) cJSON_AddItemToArray(engines, cJSON_CreateString(tc_engine_name((tc_engine_id)e)));
  for (int op = 0; op < TC_OP_COUNT; op++) {
    cJSON *row = cJSON_CreateObject(), *d = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "op", tc_op_name((tc_op)op));
    cJSON_AddItemToObject(row, "dtypes", d);
    for (int e = 0; e < TC_ENGINE_COUNT; e++) {
      cJSON *list = cJSON_AddArrayToObject(d, tc_engine_name((tc_engine_id)e));
      for (int dt = 0; dt < TC_DT_COUNT; dt++)
        if (tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e))
          cJSON_AddItemToArray(list, cJSON_CreateString(tc_dtype_name((tc_dtype)dt)));
    }
    cJSON_AddItemToArray(ops, row);
  }
  return cjson_emit(f, o);
}

int print_caps(FILE *f, bool json) {
  if (json) return print_caps_json(f, false);
  int w = 2;
  for (int op = 0; op < TC_OP_COUNT; op++)
    if ((int)strlen(tc_op_name((tc_op)op)) > w) w = (int)strlen(tc_op_name((tc_op)op));
  fputs("Dtypes each op accepts, per engine (yes: implemented; -: dtype_unsupported).\n", f);
  for (int e = 0; e < TC_ENGINE_COUNT; e++) {
    fprintf(f, "\n%s engine", tc_engine_name((tc_engine_id)e));
    if (!tc_engines[e]) { fputs(": not in this build\n", f); continue; }
    bool any = false;   /* the CUDA engine claims only rows verified on a GPU */
    for (int op = 0; op < TC_OP_COUNT && !any; op++)
      for (int dt = 0; dt < TC_DT_COUNT && !any; dt++) any = tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e);
    if (!any) { fputs(": no op supported yet\n", f); continue; }
    fprintf(f, "\n%-*s", w, "op");
    for (int dt = 0; dt < TC_DT_COUNT; dt++) fprintf(f, " %4s", tc_dtype_name((tc_dtype)dt));
    fputc('\n', f);
    for (int op = 0; op < TC_OP_COUNT; op++) {
      fprintf(f, "%-*s", w, tc_op_name((tc_op)op));
      for (int dt = 0; dt < TC_DT_COUNT; dt++)
        fprintf(f, " %4s", tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e) ? "yes" : "-");
      fputc('\n', f);
    }
  }
  return 0;
}

uint64_t parse_size(const char *s) {
  __extension__ typedef unsigned __int128 u128;
  const char *p = s;
  u128 whole = 0, frac = 0, scale = 1;
  if (*p < '0' || *p > '9') return 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((whole = whole * 10 + (unsigned)(*p - '0')) > INT64_MAX) return 0;
  bool decimal = *p == '.';
  if (decimal) {
    if (*++p < '0' || *p > '9') return 0;
    for (; *p >= '0' && *p <= '9'; p++)
      if (scale <= (u128)INT64_MAX) { frac = frac * 10 + (unsigned)(*p - '0'); scale *= 10; }   /* later digits cannot matter */
  }
  while (*p == ' ') p++;
  int shift = 0;
  switch (toupper((unsigned char)*p)) {
  case 'K': shift = 10; break;
  case 'M': shift = 20; break;
  case 'G': shift = 30; break;
  case 'T': shift = 40; break;
  default: break;
  }
  if (shift) {
    p++;
    if (toupper((unsigned char)*p) == 'I') p++;
  } else if (decimal) return 0;   /* a fraction of a byte */
  if (toupper((unsigned char)*p) == 'B') p++;
  if (*p) return 0;
  /* whole.frac * 2^shift, rounded to the nearest byte */
  u128 v = (whole << shift) + (((frac << shift) + scale / 2) / scale);
  return v == 0 || v > INT64_MAX ? 0 : (uint64_t)v;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

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

/* :time STMT. `full` is the whole command line and STMT starts at `off`. */
static void cmd_time(runner *r, const char *full, size_t off) {
  arena ar = {0};
  tc_err err;
  tc_err_clear(&err);
  int32_t len = (int32_t)strlen(full);
  char *text;
  node *stmt;
  parse_status st = runner_parse_command(full, off, &ar, &err, &text, &stmt);
  if (!text) { cmd_error(r, TC_E_OOM, "%s", "out of memory"); return; }
  const char *shown = full;
  if (st != PARSE_OK) {
    if (st == PARSE_END || st == PARSE_EMPTY) cmd_error(r, TC_E_BAD_ARG, "%s", ":time needs a statement");
    else report(r, &err, shown, len, r->cmd_line);
    arena_free(&ar);
    free(text);
    return;
  }
  double *times = NULL;
  int runs = 0, cap = 0;
  double start = now_s();
  while (runs < 5 || now_s() - start < 0.2) {
    value v = {0};
    tc_err_clear(&err);
    if (tc_interrupt_flag) {
      tc_err_set(&err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
      err.start = stmt->start;
      err.end = stmt->end;
    }
    double t0 = now_s();
    int rc = err.code != TC_OK ? -1 : eval_statement(&r->s, stmt, &v, &err);
    double dt = now_s() - t0;
    value_free(&v);
    if (rc != 0) { report(r, &err, shown, len, r->cmd_line); free(times); arena_free(&ar); free(text); return; }
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
  qsort(times, (size_t)runs, sizeof *times, cmp_double);
  double med = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
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

static void run_command(runner *r, char *line) {
  r->cmd_line = r->line;
  char *full = strdup(line);
  if (!full) { cmd_error(r, TC_E_OOM, "%s", "out of memory"); return; }
  char *p = line + 1;
  while (*p == ' ') p++;
  char *cmd = p;
  while (*p && *p != ' ') p++;
  if (*p) *p++ = 0;
  while (*p == ' ') p++;
  char *arg = p;
  for (char *e = arg + strlen(arg); e > arg && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'); e--) e[-1] = 0;
  if (!strcmp(cmd, "quit") || !strcmp(cmd, "q") || !strcmp(cmd, "exit")) {
    r->quit = r->stop = true;
  } else if (!strcmp(cmd, "help")) {
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    int rc = m ? help_text(m, arg) : -1;
    bool written = m && !ferror(m);
    if (m && fclose(m) != 0) written = false;
    if (!written || !text) cmd_error(r, TC_E_OOM, "%s", ":help: out of memory");
    else if (rc != 0) cmd_error(r, TC_E_UNKNOWN_FN, "no function named %s (:help lists them)", arg);
    else if (r->json) json_text(r, "help", text);
    else fputs(text, r->out);
    free(text);
  } else if (!strcmp(cmd, "vars")) {
    if (r->json) {
      cjson_begin();
      cJSON *o = cJSON_CreateObject(), *vs;
      cJSON_AddTrueToObject(o, "ok");
      cJSON_AddStringToObject(o, "type", "vars");
      vs = cJSON_AddArrayToObject(o, "vars");
      for (int i = 0; i < r->s.nvars; i++) {
        cJSON *v = cJSON_CreateObject(), *sh;
        tc_tensor *t = r->s.vars[i].t;
        cJSON_AddStringToObject(v, "name", r->s.vars[i].name);
        cJSON_AddStringToObject(v, "dtype", tc_dtype_name(t->dtype));
        sh = cJSON_AddArrayToObject(v, "shape");
        for (int d = 0; d < t->ndim; d++) {   /* exact: a dimension may exceed 2^53 */
          char dim[24];
          snprintf(dim, sizeof dim, "%lld", (long long)t->shape[d]);
          cJSON_AddItemToArray(sh, cJSON_CreateRaw(dim));
        }
        cJSON_AddBoolToObject(v, "weak", t->weak);
        cJSON_AddItemToArray(vs, v);
      }
      emit_outcome(r, o);
    } else {
      for (int i = 0; i < r->s.nvars; i++) {
        tc_tensor *t = r->s.vars[i].t;
        fprintf(r->out, "%-12s %s[", r->s.vars[i].name, tc_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) fprintf(r->out, d ? ",%lld" : "%lld", (long long)t->shape[d]);
        fprintf(r->out, "]%s\n", t->weak ? " (weak)" : "");
      }
    }
  } else if (!strcmp(cmd, "clear")) {
    if (*arg && !session_get(&r->s, arg)) cmd_error(r, TC_E_UNDEFINED, "%s is not defined", arg);
    else session_clear(&r->s, *arg ? arg : NULL);
  } else if (!strcmp(cmd, "engine")) {
    if (!*arg) {
      if (r->json) fprintf(r->out, "{\"ok\":true,\"type\":\"engine\",\"engine\":\"%s\"}\n", tc_engine_name(tc_get_engine()));
      else fprintf(r->out, "%s\n", tc_engine_name(tc_get_engine()));
    } else {
      int id = tc_engine_from_name(arg);
      tc_err e;
      tc_err_clear(&e);
      if (id < 0) cmd_error(r, TC_E_BAD_ARG, "unknown engine %s (cpu or cuda)", arg);
      else if (tc_engine_check((tc_engine_id)id, &e) != 0) report(r, &e, NULL, 0, 0);
      else tc_set_engine((tc_engine_id)id);
    }
  } else if (!strcmp(cmd, "caps")) {
    if (r->json ? print_caps_json(r->out, true) : print_caps(r->out, false))
      cmd_error(r, TC_E_OOM, "%s", "out of memory while printing");
  } else if (!strcmp(cmd, "set") && !*arg) {
    uint64_t mm = tc_get_max_memory();
    if (r->json)
      fprintf(r->out, "{\"ok\":true,\"type\":\"settings\",\"precision\":%d,\"max_memory\":%llu,\"engine\":\"%s\"}\n",
              r->po.precision, (unsigned long long)mm, tc_engine_name(tc_get_engine()));
    else
      fprintf(r->out, "precision   %d%s\nmax_memory  %llu bytes\nengine      %s\n", r->po.precision,
              r->po.precision ? "" : " (shortest round-trip)", (unsigned long long)mm, tc_engine_name(tc_get_engine()));
  } else if (!strcmp(cmd, "set")) {
    char *what = arg;
    char *val = arg;
    while (*val && *val != ' ') val++;
    if (*val) *val++ = 0;
    while (*val == ' ') val++;
    if (!strcmp(what, "precision")) {
      char *end;
      long n = strtol(val, &end, 10);
      if (!*val || *end || n < 0 || n > 17) cmd_error(r, TC_E_BAD_ARG, "precision must be 0 (shortest) to 17, not '%s'", val);
      else r->po.precision = (int)n;
    } else if (!strcmp(what, "max_memory")) {
      uint64_t b = parse_size(val);
      if (!b) cmd_error(r, TC_E_BAD_ARG, "bad size '%s' (e.g. 2G, 512M)", val);
      else tc_set_max_memory(b);
    } else cmd_error(r, TC_E_BAD_ARG, "unknown setting '%s' (precision, max_memory)", what);
  } else if (!strcmp(cmd, "time")) {
    cmd_time(r, full, (size_t)(arg - line));
  } else if (!strcmp(cmd, "verify")) {
    runner_verify(r, full, (size_t)(arg - line));
  } else {
    cmd_error(r, TC_E_BAD_ARG, "unknown command :%s (:help lists them)", cmd);
  }
  r->cmd_line = 0;
  free(full);
  check_output(r);
}

/* ---- line accumulation ---- */
static bool append(runner *r, const char *s, size_t n) {
  if (r->len + n + 2 > r->cap) {
    size_t cap = r->cap ? r->cap : 256;
    while (cap < r->len + n + 2) cap *= 2;
    char *b = realloc(r->buf, cap);
    if (!b) return false;
    r->buf = b;
    r->cap = cap;
  }
  memcpy(r->buf + r->len, s, n);
  r->len += n;
  r->buf[r->len] = 0;
  return true;
}

static void flush_chunk(runner *r) {
  if (r->len) run_chunk(r, r->buf, (int32_t)r->len, r->line0);
  r->len = 0;
  r->depth = 0;
}

void runner_line(runner *r, const char *line, size_t n) {
  if (r->stop) return;
  r->line++;
  if (r->len == 0) {
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    r->line0 = r->line;
    if (i < n && line[i] == ':') {
      char *c = strndup(line + i, n - i);
      if (c) run_command(r, c);
      else cmd_error(r, TC_E_OOM, "%s", "out of memory");
      free(c);
      return;
    }
  }
  if (n > INT32_MAX / 2 || r->len + n > INT32_MAX / 2 || !append(r, line, n) || !append(r, "\n", 1)) {
    tc_err e;
    tc_err_clear(&e);
    tc_err_set(&e, TC_E_OOM, -1, -1, n > INT32_MAX / 2 || r->len + n > INT32_MAX / 2 ? "statement text too large"
                                                                                   : "out of memory reading the statement");
    report(r, &e, NULL, 0, 0);
    r->len = 0;
    r->depth = 0;
    return;
  }
  /* Brackets open after this line: lex just the new line, carrying the depth. */
  lexer lx;
  lex_init(&lx, line, (int32_t)n);
  lx.depth = r->depth;
  while (lex_next(&lx).kind != T_EOF) {}
  r->depth = lx.depth;
  if (r->depth == 0) flush_chunk(r);
}

void runner_end(runner *r) {
  if (r->len && !r->stop) flush_chunk(r);  /* reports the unclosed bracket */
  r->len = 0;
  r->depth = 0;
}

void runner_text(runner *r, const char *text) {
  runner_begin(r);
  const char *p = text;
  while (*p && !r->stop) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    runner_line(r, p, n);
    p += n + (nl ? 1 : 0);
  }
  runner_end(r);
}
