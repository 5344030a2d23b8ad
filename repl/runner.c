/* The runner: statements, read line by line until their brackets close,
 * parsed, evaluated and printed; a line starting with ':' is a session
 * command (commands.c). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "runner_int.h"

void runner_init(runner *r) {
  memset(r, 0, sizeof *r);
  session_init(&r->s);
  r->out = stdout;
  r->errf = stderr;
  r->po.width = 80;
  r->progress = true;
}

static void check_stop(runner *r) {
  if (!r->checking) return;
  parser_free(&r->chk);
  arena_free(&r->chk_ar);
  r->checking = false;
}

void runner_free(runner *r) {
  check_stop(r);
  session_free(&r->s);
  free(r->buf);
  free(r->doc);
  r->buf = r->doc = NULL;
}

void runner_begin(runner *r) {
  r->len = 0;
  r->depth = 0;
  r->line = 0;
  r->line0 = 1;
}

bool runner_pending(const runner *r) { return r->len > 0 && (r->bs.brackets > 0 || r->bs.blocks > 0); }

void runner_interrupted(runner *r) {
  if (!tc_interrupt_flag) return;
  tc_err e;
  tc_err_clear(&e);
  tc_err_set(&e, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
  e.engine = -1;
  runner_fail(r, &e, NULL, 0, 0);
}

void runner_catch_signal(int sig, void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* ---- statements ---- */
void check_output(runner *r) {
  if (fflush(r->out) == 0 && !ferror(r->out)) return;
  if (!r->write_errno) r->write_errno = errno ? errno : EIO;
  r->stop = true;
  r->quit = true;
}

/* Output of statements (values, print(), warnings, errors) erases a
 * progress bar first (a script's own job, drawn between its statements). */
static void show(runner *r, value *v) {
  tc_progress_clear();
  tc_err err;
  tc_err_clear(&err);
  int rc = r->json ? print_json(r->out, v, &err) : print_text(r->out, v, &r->po, &err);
  if (rc != 0) runner_fail(r, &err, NULL, 0, 0);
}

/* The warnings of the statement (under numpy) on stderr after its value,
 * in text mode; in JSON they are the result's own "warnings". */
static void show_warnings(runner *r) {
  if (!r->json && tc_warning_count() > 0) tc_progress_clear();
  if (!r->json)
    for (int i = 0; i < tc_warning_count(); i++) fprintf(stderr, "warning: %s\n", tc_warning(i));
  tc_warnings_clear();
}

/* print(): a value written now, as a top-level result; in text mode an
 * item with more after it ends with a space instead of the newline. */
static void emit(void *ud, value *v, bool more) {
  runner *r = ud;
  tc_progress_clear();
  if (!v) {
    if (!r->json) fputc('\n', r->out);
  } else {
    r->po.end = more && !r->json ? ' ' : '\n';
    show(r, v);
    r->po.end = '\n';
  }
  check_output(r);
}

/* A statement's error: in a user function it is located in the function's
 * own text (and source), with the trace of the calls it left. */
static void statement_failed(runner *r, const tc_err *err, const char *src, int32_t len, int line0) {
  ufunc *u = r->s.err_fn;
  r->trace = r->s.trace;
  r->ntrace = r->s.ntrace;
  if (u) {
    const char *label = r->source;
    r->source = u->label;
    runner_fail(r, err, u->text, u->len, u->line0);
    r->source = label;
  } else runner_fail(r, err, src, len, line0);
  r->trace = NULL;
  r->ntrace = 0;
}

/* Runs every statement of a complete chunk. */
static void run_chunk(runner *r, const char *src, int32_t len, int line0) {
  arena ar = {0};
  tc_err err;
  parser p;
  tc_err_clear(&err);
  parser_init(&p, src, len, &ar, &err);
  r->loc_src = NULL;
  session *s = &r->s;
  s->src = src;
  s->src_len = len;
  s->line0 = line0;
  s->label = r->source;
  s->doc = r->doc;
  s->emit = emit;
  s->emit_ud = r;
  while (!r->stop) {
    node *stmt;
    tc_err_clear(&err);
    parse_status st = parse_statement(&p, &stmt);
    if (st == PARSE_END) break;
    if (st == PARSE_EMPTY) continue;
    if (st != PARSE_OK) {
      runner_fail(r, &err, src, len, line0);
      parser_skip(&p);
      continue;
    }
    value v = {0};
    if (tc_interrupt_flag) {
      /* Ctrl-C between statements: the rest of the chunk is dropped too */
      tc_err_set(&err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
      err.start = stmt->start;
      err.end = stmt->end;
      runner_fail(r, &err, src, len, line0);
      break;
    }
    tc_warnings_clear();
    int rc = eval_statement(&r->s, stmt, &v, &err);
    if (rc != 0) statement_failed(r, &err, src, len, line0);
    else if (v.kind != V_NONE) show(r, &v);
    value_free(&v);
    check_output(r);
    show_warnings(r);
    if (rc != 0 && err.code == TC_E_INTERRUPTED) break;
  }
  s->src = NULL;
  s->doc = NULL;
  s->label = NULL;
  arena_free(&ar);
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

/* Runs the statement text src (a complete chunk) and starts afresh. */
static void run_text(runner *r, const char *src, int32_t len) {
  check_stop(r);
  r->bs.blocks = 0;
  if (len) run_chunk(r, src, len, r->line0);
  r->len = 0;
  r->depth = 0;
  r->doclen = 0;
  if (r->doc) r->doc[0] = 0;
}

static void flush_chunk(runner *r) { run_text(r, r->buf, (int32_t)r->len); }

/* Whether the statement text in buf leaves a block open, as the parser
 * reads it: a block whose header did not parse opens nothing, and an
 * error inside a block keeps it open to its 'end'. The parser keeps its
 * place between lines (parser_resume), so a long block is read once. */
static bool block_open(runner *r) {
  parser *p = &r->chk;
  if (!r->checking) {
    r->chk_ar = (arena){0};
    tc_err_clear(&r->chk_err);
    parser_init(p, r->buf, (int32_t)r->len, &r->chk_ar, &r->chk_err);
    p->resumable = true;
    r->checking = true;
  } else {
    parser_resume(p, r->buf, (int32_t)r->len);
  }
  for (;;) {
    if (p->nframes == 0) tc_err_clear(&r->chk_err);
    node *stmt;
    parse_status st = parse_statement(p, &stmt);
    if (st == PARSE_INCOMPLETE && p->nframes > 0) {
      r->bs.blocks = p->nframes;
      return true;
    }
    if (st == PARSE_END || st == PARSE_INCOMPLETE) return false;
    if (st == PARSE_ERROR) parser_skip(p);
  }
}

/* A line that is only a comment, before a statement: kept for the :help
 * of a def that follows directly. */
static void keep_comment(runner *r, const char *c, size_t n) {
  c++, n--;   /* the # */
  if (n && *c == ' ') c++, n--;
  char *d = realloc(r->doc, r->doclen + n + 2);
  if (!d) return;
  r->doc = d;
  if (r->doclen) r->doc[r->doclen++] = '\n';
  memcpy(r->doc + r->doclen, c, n);
  r->doclen += n;
  r->doc[r->doclen] = 0;
}

static void line_in(runner *r, const char *line, size_t n, bool nl_follows);

void runner_line(runner *r, const char *line, size_t n) { line_in(r, line, n, false); }
void runner_text_line(runner *r, const char *line, size_t n) { line_in(r, line, n, true); }

static void line_in(runner *r, const char *line, size_t n, bool nl_follows) {
  if (r->stop) return;
  if (r->line == 0 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {   /* a UTF-8 byte-order mark opening a source */
    line += 3;
    n -= 3;
  }
  r->line++;
  if (r->len == 0) {
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    r->line0 = r->line;
    r->bs = (block_scan){0};
    check_stop(r);
    if (i == n) {   /* a blank line ends the comment block above a def */
      r->doclen = 0;
      if (r->doc) r->doc[0] = 0;
      return;
    }
    if (line[i] == '#') {
      keep_comment(r, line + i, n - i);
      return;
    }
    if (i < n && line[i] == ':') {
      char *c = strndup(line + i, n - i);
      if (c) run_command(r, c);
      else cmd_error(r, TC_E_OOM, "%s", "out of memory");
      free(c);
      return;
    }
  }
  if (nl_follows && r->len == 0 && n < INT32_MAX / 2 && line[n] == '\n') {
    /* a statement on one line of its own runs from the line itself, its
       newline included: a large literal is not copied (the common case: no
       bracket left open, no block keyword) */
    block_scan bs = {0};
    block_scan_line(&bs, line, (int32_t)n);
    if (bs.brackets == 0 && !bs.openers) {
      run_text(r, line, (int32_t)n + 1);
      return;
    }
  }
  if (n > INT32_MAX / 2 || r->len + n > INT32_MAX / 2 || !append(r, line, n) || !append(r, "\n", 1)) {
    tc_err e;
    tc_err_clear(&e);
    tc_err_set(&e, TC_E_OOM, -1, -1, n > INT32_MAX / 2 || r->len + n > INT32_MAX / 2 ? "statement text too large"
                                                                                   : "out of memory reading the statement");
    runner_fail(r, &e, NULL, 0, 0);
    r->len = 0;
    r->depth = 0;
    r->bs = (block_scan){0};
    check_stop(r);
    return;
  }
  /* Brackets open after this line: lex just the new line, carrying what
   * was open. */
  block_scan_line(&r->bs, line, (int32_t)n);
  r->depth = r->bs.brackets;
  if (r->bs.brackets > 0) return;
  if (!r->bs.openers || !block_open(r)) flush_chunk(r);
}

void runner_end(runner *r) {
  if (r->len && !r->stop) flush_chunk(r);  /* reports the unclosed bracket or block */
  check_stop(r);
  r->len = 0;
  r->depth = 0;
  r->bs = (block_scan){0};
}

void runner_text(runner *r, const char *text) {
  runner_begin(r);
  const char *p = text;
  while (*p && !r->stop) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    runner_text_line(r, p, n);   /* NUL-terminated: p[n] is '\n' or the NUL */
    tc_progress_add(1);          /* a script's job (runner_file): a line read */
    p += n + (nl ? 1 : 0);
  }
  runner_end(r);
}

int runner_file(runner *r, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char *text = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&text, &n);
  char chunk[65536];
  size_t got;
  bool ok = m != NULL;
  while (ok && (got = fread(chunk, 1, sizeof chunk, f)) > 0) ok = fwrite(chunk, 1, got, m) == got;
  ok = ok && !ferror(f);
  fclose(f);
  if (m && fclose(m) != 0) ok = false;
  if (!ok) { free(text); errno = errno ? errno : EIO; return -1; }
  /* the file is a source of its own: save what the current one had open */
  runner saved = *r;
  r->buf = NULL;
  r->cap = 0;
  r->doc = NULL;
  r->doclen = 0;
  r->source = path;
  r->run_depth++;
  bool job = r->progress && r->progress_ok;   /* a job of its lines, where a bar may be drawn */
  if (job) runner_progress_script(path, runner_count_lines(text, strlen(text)));
  runner_text(r, text);
  if (job) tc_progress_end();
  free(r->buf);
  free(r->doc);
  r->buf = saved.buf;
  r->cap = saved.cap;
  r->len = saved.len;
  r->doc = saved.doc;
  r->doclen = saved.doclen;
  r->source = saved.source;
  r->line = saved.line;
  r->line0 = saved.line0;
  r->depth = saved.depth;
  r->bs = saved.bs;
  r->loc_src = NULL;
  r->run_depth--;
  free(text);
  return 0;
}
