/* Evaluation of statements: literals (weak scalars), list literals,
 * variables, operators and calls. Function arguments are bound and
 * converted by repl/bind.c from the op table's typed signatures. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval.h"
#include "eval_int.h"
#include "plot.h"

void value_free(value *v) {
  if (v->kind == V_TENSOR) tc_tensor_free(v->t);
  if (v->kind == V_STR) free(v->s);
  if (v->kind == V_PLOT) tc_plot_free(v->plot);
  v->kind = V_NONE;
  v->plot = NULL;
  v->t = NULL;
  v->s = NULL;
}

/* ---- variables ---- */
void session_init(session *s) { memset(s, 0, sizeof *s); }

void session_free(session *s) {
  session_clear(s, NULL);
  for (int i = 0; i < TC_MAX_CALL_DEPTH; i++) {   /* the frames' local tables, kept for reuse */
    free(s->frames[i].locals);
    s->frames[i] = (frame){0};
  }
  free(s->vars);
  s->vars = NULL;
  s->cap = 0;
}

tc_tensor *session_get(session *s, const char *name) {
  for (int i = 0; i < s->nvars; i++)
    if (!strcmp(s->vars[i].name, name)) return s->vars[i].fn ? NULL : s->vars[i].t;
  return NULL;
}

int vars_set(var **vars, int *n, int *cap, const char *name, tc_tensor *t, tc_err *err) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*vars)[i].name, name)) {
      tc_tensor_free((*vars)[i].t);
      (*vars)[i].t = t;
      return 0;
    }
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 8;
    var *v = realloc(*vars, sizeof *v * (size_t)c);
    if (!v) { tc_tensor_free(t); return tc_err_set(err, TC_E_OOM, -1, -1, "out of memory"); }
    *vars = v;
    *cap = c;
  }
  char *copy = strdup(name);
  if (!copy) { tc_tensor_free(t); return tc_err_set(err, TC_E_OOM, -1, -1, "out of memory"); }
  (*vars)[(*n)++] = (var){copy, t, NULL};
  return 0;
}

int session_set(session *s, const char *name, tc_tensor *t, tc_err *err) {
  return vars_set(&s->vars, &s->nvars, &s->cap, name, t, err);
}

/* --arg NAME JSON: a name the statement `NAME = ...` would accept. */
int session_bind(session *s, const char *name, tc_tensor *t, tc_err *err) {
  size_t n = strlen(name);
  bool ident = n > 0 && (isalpha((unsigned char)name[0]) || name[0] == '_');
  for (size_t i = 1; ident && i < n; i++) ident = isalnum((unsigned char)name[i]) || name[i] == '_';
  const char *why = !ident ? "is not a variable name (letters, digits and _, not starting with a digit)"
                    : is_keyword(name, n) || !strcmp(name, "true") || !strcmp(name, "false") || !strcmp(name, "inf") ||
                            !strcmp(name, "nan") ? "is a reserved word"
                    : fn_find(name) || !strcmp(name, "print") ? "is a function name; choose another variable name"
                    : NULL;
  if (why) {
    tc_tensor_free(t);
    return tc_err_set(err, TC_E_BAD_ARG, -1, -1, "'%.60s' %s", name, why);
  }
  return session_set(s, name, t, err);
}

void session_clear(session *s, const char *name) {
  int w = 0;
  for (int i = 0; i < s->nvars; i++) {
    if (!name || !strcmp(s->vars[i].name, name)) {
      free(s->vars[i].name);
      tc_tensor_free(s->vars[i].t);
      session_free_fn(s->vars[i].fn);
    } else s->vars[w++] = s->vars[i];
  }
  s->nvars = w;
}

/* ---- the function registry ---- */
static fn_entry fns[TC_OP_COUNT + 16 + TC_DT_COUNT];
static int nfns;
/* fn_find runs on every call and assignment (a loop's hot path): an open
 * addressing hash of the names, 1 + the entry's index (0: empty). */
#define FN_HASH 1024
static short fn_hash[FN_HASH];

static unsigned name_hash(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void fns_init(void) {
  if (nfns) return;
  for (int op = 0; op < TC_OP_COUNT; op++) fns[nfns++] = (fn_entry){tc_op_name((tc_op)op), op, -1};
#define X(a, E, ...) fns[nfns++] = (fn_entry){#a, TC_OP_##E, -1};
  TC_ALIASES(X, _)
#undef X
  for (int dt = 0; dt < TC_DT_COUNT; dt++) fns[nfns++] = (fn_entry){tc_dtype_name((tc_dtype)dt), -1, dt};
  for (int i = 0; i < nfns; i++) {
    unsigned h = name_hash(fns[i].name) % FN_HASH;
    while (fn_hash[h]) h = (h + 1) % FN_HASH;
    fn_hash[h] = (short)(i + 1);
  }
}

int fn_count(void) { fns_init(); return nfns; }
const fn_entry *fn_get(int i) { fns_init(); return &fns[i]; }
const fn_entry *fn_find(const char *name) {
  fns_init();
  for (unsigned h = name_hash(name) % FN_HASH; fn_hash[h]; h = (h + 1) % FN_HASH)
    if (!strcmp(fns[fn_hash[h] - 1].name, name)) return &fns[fn_hash[h] - 1];
  return NULL;
}

/* ---- did you mean ...? (SPEC 11) ---- */
/* Other tools' names for our functions (repl/spellings.def). */
#include "spellings.def"
#define TC_SPELLING_ROW(NAME, OURS, TOOL, NOTE) {NAME, OURS, NOTE},
static const struct { const char *name, *ours, *note; } spellings[] = {TC_SPELLINGS(TC_SPELLING_ROW)};
#undef TC_SPELLING_ROW

static int edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 40 || m > 40) return 99;
  int d[41][41];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

/* Appends " (did you mean X?)" to the error's message: another tool's
 * spelling of one of our functions, or the names within edit distance 2
 * (functions if want_fn, else variables and functions), closest first. */
static bool did_you_mean(ctx *c, const char *name, bool want_fn) {
  const char *pick[3] = {NULL, NULL, NULL};
  int np = 0;
  if (!strcmp(name, "help") || !strcmp(name, "quit") || !strcmp(name, "exit")) {
    char hint[48];
    snprintf(hint, sizeof hint, " (type :%s)", name[0] == 'h' ? "help" : "quit");
    strncat(c->err->msg, hint, sizeof c->err->msg - strlen(c->err->msg) - 1);
    return true;
  }
  const char *note = "";
  for (size_t i = 0; i < sizeof spellings / sizeof spellings[0] && np < 3; i++)
    if (!strcmp(spellings[i].name, name)) {
      pick[np++] = spellings[i].ours;
      note = spellings[i].note;
    }
  /* short names have too many neighbours: distance 1 from 3 letters, 2 from 5 */
  size_t len = strlen(name);
  int maxd = len >= 5 ? 2 : len >= 3 ? 1 : 0;
  for (int dist = 1; dist <= maxd && np == 0; dist++) {
    for (int i = 0; i < fn_count() + c->s->nvars && np < 3; i++) {
      const char *cand = i < fn_count() ? fn_get(i)->name : c->s->vars[i - fn_count()].name;
      bool is_fn = i < fn_count() || c->s->vars[i - fn_count()].fn;
      if (want_fn && !is_fn) continue;
      if (edit_distance(name, cand) != dist) continue;
      bool dup = false;
      for (int k = 0; k < np; k++) dup |= !strcmp(pick[k], cand);
      if (!dup) pick[np++] = cand;
    }
  }
  if (np == 0) return false;
  char hint[240];
  snprintf(hint, sizeof hint, " (did you mean %s%s%s%s%s?%s%s)", pick[0], np > 1 ? (np > 2 ? ", " : " or ") : "",
           np > 1 ? pick[1] : "", np > 2 ? " or " : "", np > 2 ? pick[2] : "", *note ? " " : "", note);
  strncat(c->err->msg, hint, sizeof c->err->msg - strlen(c->err->msg) - 1);
  return true;
}

/* ---- evaluation ---- */
int fail_node(ctx *c, const node *n, tc_code code, const char *fmt, const char *arg) {
  tc_err_set(c->err, code, -1, -1, fmt, arg);
  c->err->engine = -1;
  if (c->err->start < 0) { c->err->start = n->ostart; c->err->end = n->oend; }
  return -1;
}

/* Point an error from the core at the node's operator or function name. */
void locate(ctx *c, const node *n) {
  if (c->err->code != TC_OK && c->err->start < 0) {
    c->err->start = n->ostart;
    c->err->end = n->oend;
  }
}

int operator_op(ctx *c, const node *n, int op, tc_op *out) {
  if (tc_operator_op((tc_op)op, out, c->err) == 0) return 0;
  return err_at(c->err, n->ostart, n->oend);
}

/* A literal above the i64 maximum (up to 2^64 - 1) is a weak u64, usable
 * only where a u64 is wanted (SPEC 13): as an operand of an operator or a
 * list element (the weak rules then require a u64 to meet it), or in
 * u64(...). Elsewhere eval() gives literal_overflow. */
int eval_operand(ctx *c, node *n, tc_tensor **out) {
  if (n->kind == N_NAME) {   /* a variable (a loop's common operand): its tensor, without a value around it */
    bool is_fn;
    tc_tensor *t = scope_lookup(c, n->str, &n->slot, &is_fn);
    if (t) { *out = tc_tensor_ref(t); return 0; }
  }
  if (n->kind != N_INT || !n->ubig) return eval_tensor(c, n, out);
  tc_tensor *t = tc_scalar_i64((int64_t)n->uval, true, c->err), *u = t ? tc_cast(t, TC_DT_U64, c->err) : NULL;
  tc_tensor_free(t);
  if (!u) return fail_node(c, n, c->err->code, "%s", c->err->msg);
  u->weak = true;
  *out = u;
  return 0;
}

int eval_tensor(ctx *c, node *n, tc_tensor **out) {
  value v = {0};
  if (eval(c, n, &v) != 0) return -1;
  if (v.kind == V_NONE)   /* a user function that returned nothing */
    return fail_node(c, n, TC_E_BAD_ARG, "%s gives no value (the function returned nothing)", n->str ? n->str : "this");
  if (v.kind != V_TENSOR) {
    bool plot = v.kind == V_PLOT;
    value_free(&v);
    if (plot)
      return fail_node(c, n, TC_E_BAD_ARG, "%s", "a plot is not a tensor: show it, or write it with save_plot(path, plot(...)) or file=");
    return fail_node(c, n, TC_E_BAD_ARG, "%s", "a string is only allowed as an option value (e.g. mode=\"clip\")");
  }
  *out = v.t;
  return 0;
}

/* A list literal whose leaves are all number or bool literals is built
 * straight from the tree, without a tensor per element. */
typedef struct {
  int ndim;
  int64_t shape[TC_MAX_DIMS];
  bool any_float, all_bool, any_bool, any_ubig, any_neg;   /* ubig: a literal above the i64 maximum */
  int64_t count;
} lit_info;

static bool literal_leaf(const node *n, double *f, int64_t *i, int *kind) {
  if (n->kind == N_INT && !n->overflow) { *i = n->ival; *f = (double)n->ival; *kind = 0; return true; }
  if (n->kind == N_INT && n->ubig) { *i = (int64_t)n->uval; *f = (double)n->uval; *kind = 3; return true; }
  if (n->kind == N_FLOAT) { *f = n->fval; *kind = 1; return true; }
  if (n->kind == N_BOOL) { *i = n->ival; *f = (double)n->ival; *kind = 2; return true; }
  if (n->kind == N_UNOP && n->op == TC_OP_NEG && n->kids[0]->kind == N_FLOAT) {
    *f = -n->kids[0]->fval; *kind = 1; return true;
  }
  return false;
}

/* 1: all literals with a regular shape; 0: not all literals; -1: ragged;
 * -2: too many dimensions. */
static int lit_scan(const node *n, int level, lit_info *li) {
  if (n->kind != N_LIST) {
    double f; int64_t i; int k;
    if (!literal_leaf(n, &f, &i, &k)) return 0;
    if (level != li->ndim) return -1;
    li->any_float |= k == 1;
    li->any_ubig |= k == 3;
    li->any_neg |= k == 0 && i < 0;
    li->any_bool |= k == 2;
    li->all_bool &= k == 2;
    li->count++;
    return 1;
  }
  if (level >= li->ndim) {
    if (level > 0 && li->count > 0) return -1;   /* a list where scalars were seen */
    if (level >= TC_MAX_DIMS) return -2;
    li->ndim = level + 1;
    li->shape[level] = n->nkids;
  }
  if (li->shape[level] != n->nkids) return -1;
  for (int i = 0; i < n->nkids; i++) {
    int r = lit_scan(n->kids[i], level + 1, li);
    if (r != 1) return r;
  }
  return 1;
}

static void lit_fill(const node *n, tc_dtype dt, char *buf, int64_t *pos) {
  if (n->kind == N_LIST) {
    for (int i = 0; i < n->nkids; i++) lit_fill(n->kids[i], dt, buf, pos);
    return;
  }
  double f; int64_t i; int k;
  literal_leaf(n, &f, &i, &k);
  if (dt == TC_DT_F64) ((double *)(void *)buf)[*pos] = f;
  else if (dt == TC_DT_I64 || dt == TC_DT_U64) ((int64_t *)(void *)buf)[*pos] = i;
  else ((uint8_t *)buf)[*pos] = (uint8_t)i;
  (*pos)++;
}

static int ragged(ctx *c, node *n) {
  tc_err_set(c->err, TC_E_SYNTAX, -1, -1, "%s", "ragged list literal: every row must have the same length");
  err_at(c->err, n->start, n->start + 1);
  return -1;
}

/* A list of literals only (lit_scan found li), built straight from the tree. */
static int literal_list(ctx *c, node *n, const lit_info *li, value *out) {
  /* an empty list, or lists ending in empty ones, has no leaves to type it */
  tc_dtype dt = li->any_float || li->count == 0 ? TC_DT_F64 : li->all_bool ? TC_DT_BOOL : TC_DT_I64;
  if (li->any_ubig) dt = TC_DT_U64;   /* all non-negative integers (eval_list saw to it) */
  int64_t numel;
  tc_shape_numel(li->ndim, li->shape, &numel);
  char *buf = malloc((size_t)(numel ? numel : 1) * 8);
  if (!buf) return fail_node(c, n, TC_E_OOM, "%s", "out of memory");
  int64_t pos = 0;
  lit_fill(n, dt, buf, &pos);
  tc_tensor *t = tc_tensor_from_host(dt, li->ndim, li->shape, buf, c->err);
  free(buf);
  if (!t) { locate(c, n); return -1; }
  return set_tensor(out, t);
}

/* Evaluates the k elements of list n into el (one shape), and the index of
 * the strongest typed one (-1: all weak). */
static int list_elements(ctx *c, node *n, tc_tensor **el, int k, int *strong) {
  *strong = -1;
  for (int i = 0; i < k; i++) {
    if (eval_operand(c, n->kids[i], &el[i]) != 0) return -1;
    if (i > 0 && (el[i]->ndim != el[0]->ndim || memcmp(el[i]->shape, el[0]->shape, sizeof(int64_t) * (size_t)el[0]->ndim)))
      return ragged(c, n);
    if (el[0]->ndim + 1 > TC_MAX_DIMS) return fail_node(c, n, TC_E_BAD_ARG, "%s", "a tensor has at most 16 dimensions");
    if (!el[i]->weak && (*strong < 0 || tc_promote(el[i]->dtype, el[*strong]->dtype) != el[*strong]->dtype)) *strong = i;
  }
  return 0;
}

/* The elements are typed as operands of one op: weak scalars take the
 * dtype of the typed elements they meet (SPEC 3.2), typed elements promote. */
static int list_dtype(ctx *c, node *n, tc_tensor **el, int k, int strong, tc_dtype *dt) {
  *dt = TC_DT_BOOL;
  /* a literal above the i64 maximum (a weak u64) types a list of literals as u64 */
  tc_tensor u64t = {.dtype = TC_DT_U64}, *ref = strong >= 0 ? el[strong] : NULL;
  for (int i = 0; i < k && !ref; i++)
    if (el[i]->weak && el[i]->dtype == TC_DT_U64) ref = &u64t;
  for (int i = 0; i < k; i++) {
    tc_dtype pair = el[i]->dtype;
    if (el[i]->weak && ref && tc_result_dtype2(TC_OP_ADD, el[i], ref, &pair, c->err) != 0) {
      c->err->op = -1;   /* not an add: report it as the list's own */
      err_at(c->err, n->kids[i]->start, n->kids[i]->end);
      return -1;
    }
    if (tc_promote_err(*dt, pair, -1, dt, c->err) != 0) {
      err_at(c->err, n->kids[i]->start, n->kids[i]->end);
      return -1;
    }
  }
  return 0;
}

/* The k elements cast to dt and stacked along a new first axis. */
static tc_tensor *stack_list(ctx *c, node *n, tc_tensor **el, int k, tc_dtype dt) {
  int64_t shape[TC_MAX_DIMS];
  shape[0] = k;
  memcpy(shape + 1, el[0]->shape, sizeof(int64_t) * (size_t)el[0]->ndim);
  tc_tensor *t = tc_tensor_new(dt, el[0]->ndim + 1, shape, c->err);
  size_t each = (size_t)tc_numel(el[0]) * tc_dtype_size(dt);
  char *host = t ? malloc(each * (size_t)k + 1) : NULL;
  if (t && !host) tc_err_set(c->err, TC_E_OOM, -1, -1, "out of memory");
  for (int i = 0; i < k && host; i++) {
    tc_tensor *ci = tc_cast(el[i], dt, c->err);
    if (!ci || tc_tensor_to_host(ci, host + each * (size_t)i, c->err) != 0) {
      free(host);
      host = NULL;
    }
    tc_tensor_free(ci);
  }
  if (host && each * (size_t)k != 0 && tc_tensor_write(t, host, c->err) != 0) {
    free(host);
    host = NULL;
  }
  if (!host) { tc_tensor_free(t); t = NULL; locate(c, n); }
  free(host);
  return t;
}

/* A packed list's tensor, made at its first evaluation on the engine in
 * use and kept in the node until its arena is freed (as a number literal's
 * is, literal()): a loop reads it by reference, and a large list's values
 * are in memory once, the parser's block taken by the cpu tensor as its
 * storage (tc_tensor_adopt) instead of copied. Nothing writes a tensor
 * another reference holds, so the kept one never changes. */
static tc_tensor *packed_list(ctx *c, node *n) {
  tc_engine_id e = tc_get_engine();
  if (n->lit && tc_tensor_engine(n->lit) == e) return tc_tensor_ref(n->lit);
  tc_dtype dt = n->pk_float ? TC_DT_F64 : TC_DT_I64;
  tc_tensor *t;
  if (!n->pk_vals) t = tc_to_engine(n->lit, e, c->err);   /* the kept cpu tensor took the values; now another engine */
  else if (n->pk_own && e == TC_ENGINE_CPU) {
    if ((t = tc_tensor_adopt(dt, n->pk_ndim, n->pk_shape, n->pk_vals, c->err))) {
      n->pk_own = false;
      n->pk_vals = NULL;
    }
  } else t = tc_tensor_from_host(dt, n->pk_ndim, n->pk_shape, n->pk_vals, c->err);
  if (!t) return NULL;
  tc_tensor_free(n->lit);   /* the parser put the node on its arena's list */
  n->lit = tc_tensor_ref(t);
  return t;
}

/* A list typed by its float literals alone has the semantics' default
 * float (torch: f32), unless a dtype is applied to it: f64([0.1]) is made
 * from the text (SPEC 19 item 1). t is consumed. */
static int float_list(ctx *c, node *n, bool exact, tc_tensor *t, value *out) {
  if (!t) { locate(c, n); return -1; }
  tc_dtype dt = tc_default_float();
  if (exact || t->dtype != TC_DT_F64 || dt == TC_DT_F64) return set_tensor(out, t);
  tc_tensor *r = tc_cast(t, dt, c->err);
  tc_tensor_free(t);
  if (!r) locate(c, n);
  return set_tensor(out, r);
}

static int eval_list(ctx *c, node *n, value *out) {
  bool exact = c->exact_list;   /* for this list, not for lists inside its elements */
  c->exact_list = false;
  if (n->packed) return float_list(c, n, exact, packed_list(c, n), out);   /* numbers only, read by the parser */
  lit_info li = {.all_bool = true};
  int r = lit_scan(n, 0, &li);
  if (r == -1) return ragged(c, n);
  if (r == -2) return fail_node(c, n, TC_E_BAD_ARG, "%s", "a tensor has at most 16 dimensions");
  /* a literal above the i64 maximum types the list u64, with only non-negative integers beside it; otherwise
     the general case below reports what does not fit */
  if (r > 0 && (!li.any_ubig || !(li.any_float || li.any_bool || li.any_neg))) {
    value v = {.kind = V_NONE};
    return literal_list(c, n, &li, &v) != 0 ? -1 : float_list(c, n, exact, v.t, out);
  }
  /* General case: evaluate each element and stack them. */
  int k = n->nkids, strong;
  tc_tensor **el = calloc((size_t)k, sizeof *el);
  if (!el) return fail_node(c, n, TC_E_OOM, "%s", "out of memory");
  tc_dtype dt;
  int rc = list_elements(c, n, el, k, &strong);
  if (rc == 0) rc = list_dtype(c, n, el, k, strong, &dt);
  if (rc == 0) rc = set_tensor(out, stack_list(c, n, el, k, dt));
  for (int i = 0; i < k; i++) tc_tensor_free(el[i]);
  free(el);
  return rc;
}

int set_tensor(value *out, tc_tensor *t) {
  if (!t) return -1;
  out->kind = V_TENSOR;
  out->t = t;
  return 0;
}

/* dtype, shape, ndim, size and len: answered from the tensor header. */
static int call_info(ctx *c, tc_op op, tc_tensor *x, value *out) {
  if (op == TC_OP_DTYPE) {
    out->kind = V_STR;
    out->s = strdup(tc_dtype_name(x->dtype));
    return out->s ? 0 : tc_err_set(c->err, TC_E_OOM, -1, -1, "out of memory");
  }
  if (op == TC_OP_SHAPE) {
    int64_t n = x->ndim;
    return set_tensor(out, tc_tensor_from_host(TC_DT_I64, 1, &n, x->shape, c->err));
  }
  if (op == TC_OP_LEN && x->ndim == 0)
    return tc_err_set(c->err, TC_E_BAD_ARG, op, (int)x->dtype, "a 0-d tensor has no length (its size is 1)");
  return set_tensor(out, tc_scalar_i64(op == TC_OP_NDIM ? x->ndim : op == TC_OP_LEN ? x->shape[0] : tc_numel(x), false,
                                       c->err));
}

/* clip(x, lo, hi): an absent lo is x itself (maximum(x, x) is x), an
 * absent hi is maximum(x, lo) (its minimum with that is the same). */
static int call_clip(barg *b, value *out, tc_err *err) {
  tc_tensor *lo = b[1].t ? b[1].t : b[0].t, *hi = b[2].t, *own = NULL;
  if (!hi && !(hi = own = tc_binary(TC_OP_MAXIMUM, b[0].t, lo, err))) return -1;
  int rc = set_tensor(out, tc_clip(b[0].t, lo, hi, err));
  tc_tensor_free(own);
  return rc;
}

/* One call per family; the binder has checked and converted the arguments. */
static int call_by_family(ctx *c, tc_op op, args *a, value *out) {
  barg *b = a->b;
  tc_err *err = c->err;
  switch (tc_op_family(op)) {
  case TC_FAM_BIN: case TC_FAM_CMP: return set_tensor(out, tc_binary(op, b[0].t, b[1].t, err));
  case TC_FAM_UN: case TC_FAM_PRED:
    if (op == TC_OP_ROUND && a->n > 1 && b[1].i != 0) return set_tensor(out, tc_round_decimals(b[0].t, b[1].i, err));
    return set_tensor(out, tc_unary(op, b[0].t, err));
  case TC_FAM_SEL: return set_tensor(out, tc_where(b[0].t, b[1].t, b[2].t, err));
  case TC_FAM_CLIP: return call_clip(b, out, err);
  case TC_FAM_CAST: return set_tensor(out, tc_cast_user(b[0].t, (tc_dtype)b[1].dt, err));
  case TC_FAM_REDUCE: return set_tensor(out, tc_reduce(op, b[0].t, &b[1].axes, a->n > 2 && b[2].b, err));
  case TC_FAM_SHAPE: case TC_FAM_INDEX: case TC_FAM_CTOR: case TC_FAM_IO: case TC_FAM_FN: return call_special(c, op, a, out);
  case TC_FAM_MATMUL: return call_matmul(c, op, a, out);
  case TC_FAM_LINALG: return call_linalg(c, op, a, out);
  case TC_FAM_INFO: return call_info(c, op, b[0].t, out);
  case TC_FAM_PLOT: return call_plot(c, op, a, out);
  default: break;   /* a family whose built-ins are all TC_CALLS rows needs no case */
  }
  return tc_err_set(err, TC_E_DTYPE, (int)op, -1, "%s", "not implemented");
}

/* A built-in's call: its TC_CALLS row (src/ops.def), else by its family. An
 * error of an op an everyday function is built from names the function. */
static int call_op(ctx *c, tc_op op, args *a, value *out) {
  int rc;
  /* a function built from ops (statistics, sorting, comparison helpers, linear algebra) computes inside as
     tcalc does under every semantics; the scans keep the semantics' sum dtype (SPEC 19 item 6) */
  bool own = (tc_op_family(op) == TC_FAM_FN && tc_op_rule(op) != TC_RULE_SUM) || tc_op_family(op) == TC_FAM_LINALG;
  tc_semantics sem = own ? tc_semantics_suspend() : tc_get_semantics();
  if (!call_row(c, op, a->b, out, &rc)) rc = call_by_family(c, op, a, out);
  if (own) tc_semantics_resume(sem);
  if (rc != 0 && tc_op_family(op) == TC_FAM_FN) tc_reattribute(c->err, op);
  return rc;
}

/* scatter(y) and scatter(x, y): fewer than three tensors and none of the
 * indexing scatter's idx, updates, axis, reduce or mode is the plot (SPEC 17). */
static bool scatter_plot(const node *n) {
  int pos = 0;
  for (int i = 0; i < n->nkids; i++) {
    const node *k = n->kids[i];
    if (k->kind != N_KWARG) { pos++; continue; }
    static const char *const idx[] = {"idx", "updates", "axis", "reduce", "mode"};
    for (int j = 0; j < 5; j++)
      if (!strcmp(k->str, idx[j])) return false;
  }
  return pos < 3;
}

static int eval_call(ctx *c, node *n, value *out) {
  if (!strcmp(n->str, "print")) return call_print(c, n);
  ufunc *u = session_fn(c->s, n->str);
  if (u) return call_user(c, u, n, out);
  const fn_entry *f = fn_find(n->str);
  if (f && f->op == TC_OP_SCATTER && scatter_plot(n)) f = fn_find("scatterplot");
  if (!f) {
    bool is_fn;
    bool is_var = scope_get(c, n->str, &is_fn) != NULL;
    tc_err_set(c->err, TC_E_UNKNOWN_FN, -1, -1, is_var ? "%s is a variable, not a function" : "no function named %s", n->str);
    if (!is_var && !did_you_mean(c, n->str, true))
      strncat(c->err->msg, " (:help lists them)", sizeof c->err->msg - strlen(c->err->msg) - 1);
    err_at(c->err, n->ostart, n->oend);
    return -1;
  }
  if (f->op < 0) {  /* dtype shorthand: i32(x) */
    if (n->nkids != 1 || n->kids[0]->kind == N_KWARG) {
      tc_err_set(c->err, TC_E_BAD_ARG, TC_OP_CAST, -1, "%s(x) takes exactly one argument", f->name);
      err_at(c->err, n->ostart, n->oend);
      return -1;
    }
    tc_tensor *x;
    c->exact_list = n->kids[0]->kind == N_LIST;   /* f64([0.1]) from the text, whatever the default float */
    int rc = (f->dtype == TC_DT_U64 ? eval_operand : eval_tensor)(c, n->kids[0], &x);
    c->exact_list = false;
    if (rc != 0) return -1;
    tc_tensor *r = tc_cast_user(x, (tc_dtype)f->dtype, c->err);
    tc_tensor_free(x);
    if (!r) { locate(c, n); return -1; }
    out->kind = V_TENSOR;
    out->t = r;
    return 0;
  }
  args a;
  a.n = 0;   /* the binder clears the slots it uses */
  int rc = bind_args(c, n, (tc_op)f->op, &a);
  if (rc == 0) {
    rc = convert_args(c, &a);
    if (rc == 0) rc = call_op(c, (tc_op)f->op, &a, out);
    if (rc != 0 && c->err->op < 0 && (c->err->code == TC_E_BAD_ARG || c->err->code == TC_E_DTYPE))
      c->err->op = f->op;   /* an argument the function rejected: name the function */
  }
  args_free(&a);
  if (rc != 0 && c->err->code == TC_E_AXIS && (f->op == TC_OP_REDUCE_MAX || f->op == TC_OP_REDUCE_MIN) &&
      n->nkids == 2 && n->kids[1]->kind != N_KWARG)   /* min(3, 4): the elementwise one was meant */
    strncat(c->err->msg, f->op == TC_OP_REDUCE_MAX ? " (the larger of two values is maximum(a, b))"
                                                   : " (the smaller of two values is minimum(a, b))",
            sizeof c->err->msg - strlen(c->err->msg) - 1);
  if (rc != 0) locate(c, n);
  return rc;
}

/* A binary operator, and the left-associative chain below it (a + b - c
 * ...) in a loop rather than by recursion: such a chain does not count
 * toward the nesting limit (SPEC 11), however long it is. */
static int eval_chain(ctx *c, node *n, value *out) {
  node *small[32], **spine = small;
  int ns = 0, cap = 32;
  for (node *m = n;; m = m->kids[0]) {
    if (ns == cap) {
      node **g = malloc(sizeof *g * (size_t)cap * 2);
      if (!g) { if (spine != small) free(spine); return fail_node(c, n, TC_E_OOM, "%s", "out of memory"); }
      memcpy(g, spine, sizeof *g * (size_t)ns);
      if (spine != small) free(spine);
      spine = g;
      cap *= 2;
    }
    spine[ns++] = m;
    node *l = m->kids[0];
    if (tc_op_assoc((tc_op)m->op) != TC_ASSOC_LEFT || l->kind != N_BINOP || tc_op_assoc((tc_op)l->op) != TC_ASSOC_LEFT) break;
  }
  tc_tensor *acc = NULL;
  int rc = eval_operand(c, spine[ns - 1]->kids[0], &acc);
  for (int i = ns - 1; i >= 0 && rc == 0; i--) {
    tc_tensor *b;
    if (eval_operand(c, spine[i]->kids[1], &b) != 0) { rc = -1; break; }
    /* acc = acc OP b: in acc's own storage when it is a scalar nothing else holds (the chain's temporary) */
    tc_op op;
    rc = operator_op(c, spine[i], spine[i]->op, &op);
    if (rc == 0 && (rc = tc_binary_inplace(op, &acc, b, c->err)) != 0) locate(c, spine[i]);
    tc_tensor_free(b);
  }
  if (rc != 0) tc_tensor_free(acc);
  if (spine != small) free(spine);
  return rc == 0 ? set_tensor(out, acc) : -1;
}

/* A number or bool literal's 0-d tensor (weak for numbers). With the
 * scalar fast path on, it is made once per node on the engine in use and
 * kept in the node until its arena is freed: a loop then reads the
 * literal as it reads a variable, by reference. Nothing writes a tensor
 * another reference holds, so the kept one never changes. */
static tc_tensor *literal(ctx *c, node *n) {
  if (n->lit && tc_tensor_engine(n->lit) == tc_get_engine()) return tc_tensor_ref(n->lit);
  tc_tensor *t = n->kind == N_INT ? tc_scalar_i64(n->ival, true, c->err)
                 : n->kind == N_FLOAT ? tc_scalar_f64(n->fval, true, c->err)
                                      : tc_scalar_bool(n->ival != 0, c->err);
  if (!t || !n->ar || !tc_scalar_fast()) return t;
  if (n->lit) tc_tensor_free(n->lit);
  else {
    n->lit_next = n->ar->lits;
    n->ar->lits = n;
  }
  n->lit = tc_tensor_ref(t);
  return t;
}

int eval(ctx *c, node *n, value *out) {
  out->kind = V_NONE;
  switch (n->kind) {
  case N_INT:
    if (n->ubig) {
      tc_err_set(c->err, TC_E_LITERAL, -1, TC_DT_U64, "%s",
                 "integer literal above the i64 maximum: only a u64 holds it (write u64(...))");
      err_at(c->err, n->start, n->end);
      return -1;
    }
    if (n->overflow) {
      int len = n->end - n->start;
      (void)len;
      tc_err_set(c->err, TC_E_LITERAL, -1, TC_DT_I64, "%s", "integer literal does not fit i64 (-9223372036854775808 to 9223372036854775807)");
      err_at(c->err, n->start, n->end);
      return -1;
    }
    return set_tensor(out, literal(c, n));
  case N_FLOAT: case N_BOOL:
    return set_tensor(out, literal(c, n));
  case N_STR:
    out->kind = V_STR;
    out->s = strdup(n->str);
    return out->s ? 0 : fail_node(c, n, TC_E_OOM, "%s", "out of memory");
  case N_NAME: {
    bool is_fn;
    tc_tensor *t = scope_lookup(c, n->str, &n->slot, &is_fn);
    if (!t && !is_fn && (!strcmp(n->str, "pi") || !strcmp(n->str, "e")))   /* predefined, rebindable (SPEC 11) */
      return set_tensor(out, tc_scalar_f64(n->str[0] == 'p' ? 3.141592653589793 : 2.718281828459045, true, c->err));
    if (!t) {
      is_fn |= fn_find(n->str) != NULL || !strcmp(n->str, "print");
      const char *fmt = is_fn ? "%s is a function; call it with ()" : "%s is not defined";
      tc_err_set(c->err, is_fn ? TC_E_BAD_ARG : TC_E_UNDEFINED, -1, -1, fmt, n->str);
      if (!is_fn) did_you_mean(c, n->str, false);
      err_at(c->err, n->start, n->end);
      return -1;
    }
    return set_tensor(out, tc_tensor_ref(t));
  }
  case N_LIST:
    return eval_list(c, n, out);
  case N_CALL:
    return eval_call(c, n, out);
  case N_BINOP:
    return eval_chain(c, n, out);
  case N_UNOP: {
    tc_tensor *x;
    if (eval_tensor(c, n->kids[0], &x) != 0) return -1;
    if (n->op < 0) return set_tensor(out, x);   /* unary plus */
    tc_tensor *r = tc_unary((tc_op)n->op, x, c->err);
    tc_tensor_free(x);
    if (!r) { locate(c, n); return -1; }
    return set_tensor(out, r);
  }
  case N_INDEX:
    return eval_index(c, n, out);
  case N_SLICE: case N_ELLIPSIS:
    return fail_node(c, n, TC_E_SYNTAX, "%s", "a slice is only allowed inside an index");
  case N_KWARG:
    return fail_node(c, n, TC_E_SYNTAX, "%s", "a keyword argument is only allowed in a call");
  case N_NONE:
    return fail_node(c, n, TC_E_BAD_ARG, "%s", "none means \"not given\": it is only an argument's value");
  case N_ASSIGN: case N_DEF: case N_IF: case N_WHILE: case N_FOR: case N_BLOCK: case N_RETURN: case N_BREAK:
  case N_CONTINUE:
    break;
  }
  return fail_node(c, n, TC_E_SYNTAX, "%s", "unexpected statement");
}

int eval_statement(session *s, node *stmt, value *out, tc_err *err) {
  ctx c = {s, err, {0}, false};
  char top;
  out->kind = V_NONE;
  s->err_fn = NULL;
  s->err_claimed = false;
  s->ntrace = 0;
  s->stack_top = &top;
  int rc;
  switch (stmt->kind) {
  case N_ASSIGN: case N_IF: case N_WHILE: case N_FOR: case N_DEF: case N_STR:
    rc = exec_statement(&c, stmt);   /* prints nothing */
    break;
  default:
    rc = eval(&c, stmt, out);
  }
  value_free(&c.ret);
  s->stack_top = NULL;
  return rc < 0 ? -1 : 0;
}
