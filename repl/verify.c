/* :verify STMT — runs an expression on the CPU and on the CUDA engine and
 * reports whether the results agree: identical for integers and bools,
 * within the tolerance of the ops in the statement (src/tolerance.def) for
 * floats, with the first differing element otherwise. A difference counts
 * as a failure (exit status 1), as cmp(1) does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "runner.h"

static void failed(runner *r) {
  if (!r->exit_status) r->exit_status = 1;
  if (!r->keep_going && !r->interactive) r->stop = true;
}

static void report_err(runner *r, const tc_err *e, const char *src, int32_t len) {
  runner_report(r, e, src, len, r->cmd_line);
  if (!r->exit_status) r->exit_status = tc_code_exit(e->code);
  if (!r->keep_going && !r->interactive) r->stop = true;
}

/* The loosest tolerance of the ops a statement uses, for result dtype dt. */
static void tolerance_of(const node *n, tc_dtype dt, tc_tolerance *t) {
  if (!n) return;
  int op = -1;
  if (n->kind == N_BINOP || n->kind == N_UNOP) op = n->op;
  else if (n->kind == N_CALL) {
    const fn_entry *f = fn_find(n->str);
    if (f) op = f->op >= 0 ? f->op : TC_OP_CAST;
  }
  if (op >= 0) {
    tc_tolerance o = tc_op_tolerance((tc_op)op, dt);
    if (o.ulps > t->ulps) t->ulps = o.ulps;
    t->sum |= o.sum;
  }
  for (int i = 0; i < n->nkids; i++) tolerance_of(n->kids[i], dt, t);
}

typedef struct outcome {
  bool match, identical;
  const char *why;         /* a mismatch of type, shape or value */
  const tc_err *err;       /* both engines failed with this error */
  const char *str;         /* both gave this string */
  int64_t at;              /* first differing element, or -1 */
  int64_t max_ulps;
  char cpu[64], cuda[64];
} outcome;

/* Compares two tensors element by element. */
static int compare(tc_tensor *a, tc_tensor *b, tc_tolerance tol, outcome *o, tc_err *err) {
  o->at = -1;
  if (a->dtype != b->dtype) { o->why = "dtypes differ"; return 0; }
  if (a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim)) { o->why = "shapes differ"; return 0; }
  int64_t n = tc_numel(a);
  size_t es = tc_dtype_size(a->dtype);
  unsigned char *x = malloc((size_t)n * es + 1), *y = malloc((size_t)n * es + 1);
  int rc = -1;
  if (!x || !y) { tc_err_set(err, TC_E_OOM, -1, -1, ":verify: out of memory"); goto done; }
  if (tc_tensor_to_host(a, x, err) != 0 || tc_tensor_to_host(b, y, err) != 0) goto done;
  rc = 0;
  o->match = o->identical = true;
  bool flt = tc_dtype_class(a->dtype) == TC_CLASS_FLT;
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *p = x + (size_t)i * es, *q = y + (size_t)i * es;
    if (!memcmp(p, q, es)) continue;
    bool ok = false;
    if (flt) {
      double u = tc_dtype_load_f64(a->dtype, p), v = tc_dtype_load_f64(a->dtype, q);
      int64_t d = tc_ulp_distance(a->dtype, u, v);
      if (isnan(u) && isnan(v)) { ok = true; d = 0; }
      else if (tol.sum) ok = tc_sum_close(a->dtype, u, v, fmax(fabs(u), fabs(v)), (int64_t)1 << 31);
      else ok = d <= tol.ulps;
      if (d > o->max_ulps) o->max_ulps = d;
      if (d) o->identical = false;
    } else {
      o->identical = false;
    }
    if (!ok) {
      o->match = false;
      o->at = i;
      fmt_elem(o->cpu, sizeof o->cpu, x, i, a->dtype, 0);
      fmt_elem(o->cuda, sizeof o->cuda, y, i, a->dtype, 0);
      break;
    }
  }
done:
  free(x);
  free(y);
  return rc;
}

static void print_outcome(runner *r, const outcome *o, const tc_tensor *t, tc_tolerance tol) {
  char shape[300], at[300] = "";
  tc_format_dims(shape, sizeof shape, t ? t->ndim : 0, t ? t->shape : NULL);
  if (o->at >= 0) {
    int64_t idx[TC_MAX_DIMS], f = o->at;
    for (int d = t->ndim - 1; d >= 0; d--) { idx[d] = f % t->shape[d]; f /= t->shape[d]; }
    tc_format_dims(at, sizeof at, t->ndim, idx);
  }
  if (r->json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddTrueToObject(j, "ok");
    cJSON_AddStringToObject(j, "type", "verify");
    cJSON_AddBoolToObject(j, "match", o->match);
    cJSON_AddBoolToObject(j, "identical", o->identical);
    if (t) {
      cJSON_AddStringToObject(j, "dtype", tc_dtype_name(t->dtype));
      cJSON *s = cJSON_AddArrayToObject(j, "shape");
      for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(s, cJSON_CreateNumber((double)t->shape[d]));
      if (tc_dtype_class(t->dtype) == TC_CLASS_FLT) {
        cJSON_AddNumberToObject(j, "max_ulps", (double)o->max_ulps);
        if (tol.sum) cJSON_AddStringToObject(j, "tolerance", "sum");
        else cJSON_AddNumberToObject(j, "tolerance_ulps", tol.ulps);
      }
    }
    if (o->why) cJSON_AddStringToObject(j, "reason", o->why);
    if (o->err) cJSON_AddStringToObject(j, "error", tc_code_name(o->err->code));
    if (o->at >= 0) {
      cJSON *ix = cJSON_AddArrayToObject(j, "index");
      int64_t f = o->at, idx[TC_MAX_DIMS];
      for (int d = t->ndim - 1; d >= 0; d--) { idx[d] = f % t->shape[d]; f /= t->shape[d]; }
      for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(ix, cJSON_CreateNumber((double)idx[d]));
      cJSON_AddStringToObject(j, "cpu", o->cpu);
      cJSON_AddStringToObject(j, "cuda", o->cuda);
    }
    char *s = cJSON_PrintUnformatted(j);
    if (s) fprintf(r->out, "%s\n", s);
    free(s);
    cJSON_Delete(j);
    return;
  }
  const char *dt = t ? tc_dtype_name(t->dtype) : "";
  if (o->why) fprintf(r->out, "verify: cpu and cuda differ: %s\n", o->why);
  else if (o->err) {
    char et[TC_ERR_TEXT];
    fprintf(r->out, "verify: cpu and cuda fail alike: %s: %s\n", tc_code_name(o->err->code), tc_err_text(o->err, et));
  }
  else if (o->str) fprintf(r->out, "verify: identical on cpu and cuda (\"%s\")\n", o->str);
  else if (o->at >= 0)
    fprintf(r->out, "verify: cpu and cuda differ at %s: cpu %s, cuda %s (%s%s; tolerance %s)\n", at, o->cpu, o->cuda, dt, shape,
            tol.sum ? "of a sum" : tol.ulps ? "in ulps" : "exact");
  else if (o->identical) fprintf(r->out, "verify: identical on cpu and cuda (%s%s)\n", dt, shape);
  else fprintf(r->out, "verify: within tolerance on cpu and cuda (%s%s, at most %lld ulp apart)\n", dt, shape,
               (long long)o->max_ulps);
}

/* Runs stmt on the cpu engine, then on cuda; the current engine is kept. */
static void run_both(runner *r, node *stmt, value *v, tc_err *e, int *rc) {
  tc_engine_id cur = tc_get_engine();
  for (int k = 0; k < 2; k++) {
    tc_err_clear(&e[k]);
    tc_interrupt_clear();
    tc_set_engine(k ? TC_ENGINE_CUDA : TC_ENGINE_CPU);
    rc[k] = eval_statement(&r->s, stmt, &v[k], &e[k]);
  }
  tc_set_engine(cur);
}

void runner_verify(runner *r, const char *full, size_t off) {
  arena ar = {0};
  tc_err err;
  tc_err_clear(&err);
  int32_t len = (int32_t)strlen(full);
  const char *text = full;
  char *src;
  node *stmt;
  parse_status st = runner_parse_command(full, off, &ar, &err, &src, &stmt);
  if (!src) {
    err.engine = -1;
    report_err(r, &err, NULL, 0);
    return;
  }
  if (st != PARSE_OK || stmt->kind == N_ASSIGN) {
    if (st == PARSE_OK || st == PARSE_END || st == PARSE_EMPTY) {
      tc_err_clear(&err);
      tc_err_set(&err, TC_E_BAD_ARG, -1, -1, "%s", ":verify needs an expression (not an assignment)");
      err.engine = -1;
      report_err(r, &err, NULL, 0);
    } else {
      report_err(r, &err, text, len);
    }
    arena_free(&ar);
    free(src);
    return;
  }
  tc_err_clear(&err);
  if (tc_engine_check(TC_ENGINE_CUDA, &err) != 0) {
    report_err(r, &err, NULL, 0);
    arena_free(&ar);
    free(src);
    return;
  }
  value v[2] = {{0}, {0}};
  tc_err e[2];
  int rc[2];
  run_both(r, stmt, v, e, rc);
  outcome o;
  memset(&o, 0, sizeof o);
  o.at = -1;
  tc_tolerance tol = {0, false};
  tc_tensor *t = NULL;
  if (rc[0] != 0 && rc[1] != 0) {
    bool same = e[0].code == e[1].code && e[0].op == e[1].op && !strcmp(e[0].msg, e[1].msg) && e[0].has_index == e[1].has_index &&
                e[0].index_ndim == e[1].index_ndim &&
                !memcmp(e[0].index, e[1].index, sizeof(int64_t) * (size_t)e[0].index_ndim);
    if (!same) report_err(r, &e[0], text, len);
    else {
      o.match = o.identical = true;
      o.err = &e[0];
      print_outcome(r, &o, NULL, tol);
    }
  } else if (rc[0] != 0 || rc[1] != 0) {
    report_err(r, &e[rc[0] != 0 ? 0 : 1], text, len);
  } else if (v[0].kind != v[1].kind || v[0].kind != V_TENSOR) {
    o.identical = o.match = v[0].kind == v[1].kind && (v[0].kind != V_STR || !strcmp(v[0].s, v[1].s));
    if (!o.match) o.why = "the values differ";
    else if (v[0].kind == V_STR) o.str = v[0].s;
    print_outcome(r, &o, NULL, tol);
  } else {
    t = v[0].t;
    tolerance_of(stmt, t->dtype, &tol);
    tc_err_clear(&err);
    if (compare(v[0].t, v[1].t, tol, &o, &err) != 0) report_err(r, &err, NULL, 0);
    else print_outcome(r, &o, t, tol);
  }
  if (!o.match && rc[0] == 0 && rc[1] == 0) failed(r);
  value_free(&v[0]);
  value_free(&v[1]);
  arena_free(&ar);
  free(src);
}
