/* :compare EXPR (SPEC 19): the expression evaluated under each system's
 * semantics in turn (tcalc numpy jax torch tenferro), one row each: the
 * value or the error, its warnings, and a mark where it differs from
 * tcalc's own row (dtype, shape, values or error code). Binds nothing;
 * the semantics in force is restored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runner.h"
#include "runner_int.h"

typedef struct {
  int rc;
  value v;
  tc_err e;
} row;

/* Whether row b's answer differs from a's: the error code, or the
 * tensor's dtype, shape and bytes. */
static bool differs(const row *a, const row *b) {
  if ((a->rc != 0) != (b->rc != 0)) return true;
  if (a->rc != 0) return a->e.code != b->e.code;
  if (a->v.kind != b->v.kind) return true;
  if (a->v.kind != V_TENSOR) return a->v.kind == V_STR && strcmp(a->v.s, b->v.s);
  tc_tensor *x = a->v.t, *y = b->v.t;
  if (x->dtype != y->dtype || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim)) return true;
  size_t n = (size_t)tc_numel(x) * tc_dtype_size(x->dtype);
  char *p = malloc(n + 1), *q = malloc(n + 1);
  tc_err e;
  tc_err_clear(&e);
  bool d = !p || !q || tc_tensor_to_host(x, p, &e) != 0 || tc_tensor_to_host(y, q, &e) != 0 || memcmp(p, q, n);
  free(p);
  free(q);
  return d;
}

/* One row's result as --semantics S prints it (its JSON object without
 * "semantics", or its text), into a string the caller frees. */
static char *render(runner *r, row *w, const char *src, int32_t len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return NULL;
  print_json_semantics(false);
  if (w->rc != 0) {
    if (r->json) {
      int line = 0, col = 0;
      runner_position(r, &w->e, src, len, r->cmd_line, &line, &col);
      print_json_error(f, &w->e, line, col, NULL, 0);
    } else {
      char text[TC_ERR_TEXT];
      fprintf(f, "error[%s]: %s\n", tc_code_name(w->e.code), tc_err_text(&w->e, text));
    }
  } else {
    tc_err e;
    tc_err_clear(&e);
    print_opts po = r->po;
    if ((r->json ? print_json(f, &w->v, &e) : print_text(f, &w->v, &po, &e)) != 0) {
      char text[TC_ERR_TEXT];
      fprintf(f, "error[%s]: %s\n", tc_code_name(e.code), tc_err_text(&e, text));
    }
  }
  print_json_semantics(true);
  if (!r->json)
    for (int i = 0; i < tc_warning_count(); i++) fprintf(f, "warning: %s\n", tc_warning(i));
  tc_warnings_clear();
  fclose(f);
  return buf;
}

static void emit_rows(runner *r, row *rows, char **out) {
  if (r->json) fputs("{\"ok\":true,\"type\":\"compare\",\"rows\":[", r->out);
  for (int s = 0; s < TC_SEM_COUNT; s++) {
    bool d = s > 0 && differs(&rows[0], &rows[s]);
    const char *name = tc_semantics_name((tc_semantics)s);
    char none[1] = "", *text = out[s] ? out[s] : none;
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n') text[--n] = 0;
    if (r->json) {
      fprintf(r->out, "%s{\"semantics\":\"%s\",\"result\":%s,\"differs\":%s}", s ? "," : "", name, text, d ? "true" : "false");
      continue;
    }
    /* the name, a mark where it differs from tcalc's, then the answer (its later lines indented alike) */
    fprintf(r->out, "%-9s%c ", name, d ? '*' : ' ');
    for (const char *p = text; *p; p++) {
      fputc(*p, r->out);
      if (*p == '\n') fputs("           ", r->out);
    }
    fputc('\n', r->out);
  }
  if (r->json) fputs("]}\n", r->out);
}

void runner_compare(runner *r, const char *full, size_t off) {
  arena ar = {0};
  int32_t len = (int32_t)strlen(full);
  char *src;
  node *stmt = runner_command_stmt(r, full, off, &ar, &src, true, ":compare needs an expression (it binds nothing)");
  if (!stmt) return;
  tc_semantics cur = tc_get_semantics();
  row rows[TC_SEM_COUNT];
  char *out[TC_SEM_COUNT] = {0};
  for (int s = 0; s < TC_SEM_COUNT; s++) {
    tc_set_semantics((tc_semantics)s);
    tc_warnings_clear();
    tc_err_clear(&rows[s].e);
    memset(&rows[s].v, 0, sizeof rows[s].v);
    rows[s].rc = eval_statement(&r->s, stmt, &rows[s].v, &rows[s].e);
    out[s] = render(r, &rows[s], src, len);
  }
  tc_set_semantics(cur);
  emit_rows(r, rows, out);
  for (int s = 0; s < TC_SEM_COUNT; s++) {
    value_free(&rows[s].v);
    free(out[s]);
  }
  arena_free(&ar);
  free(src);
}
