/* The one binder of call arguments: parses an op's typed signature
 * (src/ops.def, "name[:type][=default]"), matches positional and keyword
 * arguments to its parameters, fills defaults, and converts every argument
 * to its parameter's type, with errors that name the parameter and point
 * at the argument. A built-in then reads typed values (args->b[i]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

/* ---- signatures ---- */
static const struct { const char *name; ptype type; } type_names[] = {
  {"tensor", P_TENSOR}, {"opt", P_OPT}, {"axes", P_AXES}, {"int", P_INT}, {"ints", P_INTS},
  {"shape", P_SHAPE}, {"bool", P_BOOL}, {"num", P_NUM}, {"dtype", P_DTYPE}, {"str", P_STR},
  {"mode", P_MODE}, {"reduce", P_REDUCE}, {"seed", P_SEED}, {"tensors", P_TENSORS},
  {"any", P_ANY}, {"rest", P_REST}, {"kwargs", P_KWARGS},
};

static int type_from(const char *t, size_t n) {
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strlen(type_names[i].name) == n && !strncmp(type_names[i].name, t, n)) return (int)type_names[i].type;
  return -1;
}

static sig sigs[TC_OP_COUNT];
static bool sigs_ready[TC_OP_COUNT];

static void copy_part(char *dst, size_t cap, const char *src, size_t n) {
  if (n > cap - 1) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

const sig *get_sig(tc_op op) {
  if (sigs_ready[op]) return &sigs[op];
  sig *g = &sigs[op];
  const char *p = tc_op_params(op);
  g->n = 0;
  while (*p && g->n < MAX_PARAMS) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *name = p;
    while (*p && *p != ':' && *p != '=' && *p != ',') p++;
    copy_part(g->names[g->n], sizeof g->names[0], name, (size_t)(p - name));
    g->types[g->n] = P_TENSOR;
    if (*p == ':') {
      const char *t = ++p;
      while (*p && *p != '=' && *p != ',') p++;
      int ty = type_from(t, (size_t)(p - t));
      if (ty < 0) g->bad_type = true;   /* a table error: tests/unit/test_repl.c checks every row */
      else g->types[g->n] = (ptype)ty;
    }
    g->defs[g->n][0] = 0;
    if (*p == '=') {
      const char *d = ++p;
      if (*p == '"') for (p++; *p && *p != '"'; p++) {}   /* a string default may hold a comma */
      while (*p && *p != ',') p++;
      copy_part(g->defs[g->n], sizeof g->defs[0], d, (size_t)(p - d));
    }
    g->n++;
  }
  sigs_ready[op] = true;
  return g;
}

/* ---- converting one argument ---- */
static int fail_arg(ctx *c, args *a, int i, const char *what) {
  char fmt[160];
  snprintf(fmt, sizeof fmt, "argument %%s must be %s", what);
  return fail_node(c, a->at[i], TC_E_BAD_ARG, fmt, a->g->names[i]);
}

static int get_tensor(ctx *c, args *a, int i, tc_tensor **out) {
  if (a->v[i].kind != V_TENSOR) return fail_arg(c, a, i, "a tensor");
  *out = a->v[i].t;
  return 0;
}

static int get_string(ctx *c, args *a, int i, const char **out) {
  if (a->v[i].kind != V_STR) return fail_arg(c, a, i, "a string");
  *out = a->v[i].s;
  return 0;
}

/* A 0-d integer tensor, or (to_f64) any 0-d number, read as one value. */
static int get_scalar(ctx *c, args *a, int i, bool to_f64, void *out) {
  tc_tensor *t = NULL;
  if (get_tensor(c, a, i, &t) != 0) return -1;
  if (to_f64 ? t->ndim != 0 : t->ndim != 0 || tc_dtype_class(t->dtype) != TC_CLASS_INT)
    return fail_arg(c, a, i, to_f64 ? "a single number" : "an integer");
  tc_tensor *w = tc_cast(t, to_f64 ? TC_DT_F64 : TC_DT_I64, c->err);
  int rc = w ? tc_tensor_to_host(w, out, c->err) : -1;
  tc_tensor_free(w);
  return rc;
}

/* An integer tensor argument (0-d or 1-D, at most max values) into vals. */
static int get_ints(ctx *c, args *a, int i, int64_t *vals, int *n, int max) {
  tc_tensor *t = a->v[i].kind == V_TENSOR ? a->v[i].t : NULL;
  if (!t || tc_dtype_class(t->dtype) != TC_CLASS_INT || t->ndim > 1 || tc_numel(t) > max)
    return fail_arg(c, a, i, "an integer or a list of integers");
  tc_tensor *i64 = tc_cast(t, TC_DT_I64, c->err);
  if (!i64) return -1;
  int rc = tc_tensor_to_host(i64, vals, c->err);
  *n = (int)tc_numel(t);
  tc_tensor_free(i64);
  return rc;
}

/* A shape: an integer, a list of integers, or [] (0-d). */
static int get_shape(ctx *c, args *a, int i, barg *b) {
  tc_tensor *t = NULL;
  if (get_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim == 1 && t->shape[0] == 0) { b->n = 0; return 0; }
  if (tc_dtype_class(t->dtype) != TC_CLASS_INT || t->ndim > 1) return fail_arg(c, a, i, "an integer or a list of integers");
  if (tc_numel(t) > TC_MAX_DIMS)
    return fail_node(c, a->at[i], TC_E_BAD_ARG, "argument %s has more than 16 dimensions", a->g->names[i]);
  int rc = get_ints(c, a, i, b->ints, &b->n, TC_MAX_DIMS);
  if (t->ndim == 0) b->n = 1;
  return rc;
}

static int get_bool(ctx *c, args *a, int i, bool *out) {
  tc_tensor *t = NULL;
  if (get_tensor(c, a, i, &t) != 0) return -1;
  if (t->dtype != TC_DT_BOOL || t->ndim != 0) return fail_arg(c, a, i, "true or false");
  uint8_t v = 0;
  if (tc_tensor_to_host(t, &v, c->err) != 0) return -1;
  *out = v != 0;
  return 0;
}

/* A name from a fixed list (dtype, mode, reduce): its index, or an error
 * listing the choices. */
static int get_word(ctx *c, args *a, int i, int (*lookup)(const char *), const char *what, const char *choices,
                    int *out) {
  const char *s = NULL;
  if (get_string(c, a, i, &s) != 0) return -1;
  *out = lookup(s);
  if (*out >= 0) return 0;
  char fmt[160];
  snprintf(fmt, sizeof fmt, "unknown %s \"%%s\" (%s)", what, choices);
  return fail_node(c, a->at[i], TC_E_BAD_ARG, fmt, s);
}

/* The tensors of a "[xs]" parameter: the elements of a list literal, or
 * the slices along axis 0 of one tensor. */
static int get_tensor_list(ctx *c, args *a, int i, barg *b) {
  node *ln = a->at[i];
  if (a->v[i].kind == V_NONE && ln->kind == N_LIST && !ln->packed) {
    b->ts = calloc((size_t)(ln->nkids ? ln->nkids : 1), sizeof *b->ts);
    if (!b->ts) return fail_node(c, ln, TC_E_OOM, "%s", "out of memory");
    for (b->nts = 0; b->nts < ln->nkids; b->nts++)
      if (eval_tensor(c, ln->kids[b->nts], &b->ts[b->nts]) != 0) return -1;
    return 0;
  }
  tc_tensor *t = NULL;
  if (get_tensor(c, a, i, &t) != 0) return -1;
  if (t->ndim == 0) return fail_node(c, ln, TC_E_BAD_ARG, "argument %s must be a list of tensors", a->g->names[i]);
  int64_t rows = t->shape[0];
  b->ts = calloc((size_t)(rows ? rows : 1), sizeof *b->ts);
  if (!b->ts) return fail_node(c, ln, TC_E_OOM, "%s", "out of memory");
  for (; b->nts < rows; b->nts++) {
    tc_index_item it = {.kind = TC_IDX_INT, .i = b->nts};
    b->ts[b->nts] = tc_getitem(t, 1, &it, c->err);
    if (!b->ts[b->nts]) return -1;
  }
  return 0;
}

/* The tensors of a "*name:rest" or "**name:kwargs" parameter, in order. */
static int get_rest(ctx *c, args *a, barg *b) {
  b->names = a->restname;
  b->ts = calloc((size_t)(a->nrest ? a->nrest : 1), sizeof *b->ts);
  if (!b->ts) return fail_node(c, a->rest[0], TC_E_OOM, "%s", "out of memory");
  for (b->nts = 0; b->nts < a->nrest; b->nts++)
    if (eval_tensor(c, a->rest[b->nts], &b->ts[b->nts]) != 0) return -1;
  return 0;
}

/* Converts argument i (present: given or a default other than none). */
static int convert(ctx *c, args *a, int i) {
  barg *b = &a->b[i];
  switch (a->g->types[i]) {
  case P_TENSOR: case P_OPT: return get_tensor(c, a, i, &b->t);
  case P_AXES: return get_ints(c, a, i, b->axes.axis, &b->axes.n, TC_MAX_DIMS);
  case P_INT: return get_scalar(c, a, i, false, &b->i);
  case P_NUM: return get_scalar(c, a, i, true, &b->f);
  case P_INTS: return get_ints(c, a, i, b->ints, &b->n, TC_MAX_DIMS);
  case P_SHAPE: return get_shape(c, a, i, b);
  case P_BOOL: return get_bool(c, a, i, &b->b);
  case P_STR: return get_string(c, a, i, &b->s);
  case P_DTYPE:
    if (get_word(c, a, i, tc_dtype_from_name, "dtype", "bool, i8, i16, i32, i64, u8, u16, u32, u64, bf16, f16, f32, f64",
                 &b->dt) != 0)
      return -1;
    if (tc_semantics_lacks((tc_dtype)b->dt, -1, c->err) == 0) return 0;   /* zeros(2, dtype=u64) under torch */
    err_at(c->err, a->at[i]->start, a->at[i]->end);
    return -1;
  case P_MODE: return get_word(c, a, i, tc_index_mode_from_name, "mode", "error, clip, wrap, fill, drop", &b->mode);
  case P_REDUCE: return get_word(c, a, i, tc_scatter_red_from_name, "reduce", "set, add, mul, max, min", &b->mode);
  case P_SEED: {
    int64_t v;
    if (get_scalar(c, a, i, false, &v) != 0) return -1;
    b->seed = (uint64_t)v;
    return 0;
  }
  case P_TENSORS: return get_tensor_list(c, a, i, b);
  case P_REST: case P_KWARGS: return get_rest(c, a, b);
  case P_ANY: return 0;   /* read by the built-in from args.v */
  }
  return 0;
}

/* What an absent optional (default none) reads as. */
static void absent(ctx *c, args *a, int i) {
  barg *b = &a->b[i];
  b->given = false;
  b->dt = -1;
  if (a->g->types[i] == P_AXES) b->axes.all = true;   /* axes and ints share their room */
  else b->n = -1;
  if (a->g->types[i] == P_SEED) b->seed = c->s->seed_counter++;
}

/* ---- binding ---- */
/* A default from the signature text: none or all (absent), true/false, a
 * number, "string". */
static int default_value(ctx *c, const char *d, value *v, node *at) {
  if (!strcmp(d, "all") || !strcmp(d, "none")) { v->kind = V_NONE; return 0; }
  tc_tensor *t = NULL;
  if (!strcmp(d, "true") || !strcmp(d, "false")) t = tc_scalar_bool(d[0] == 't', c->err);
  else if (d[0] == '"') {
    v->kind = V_STR;
    v->s = strdup(d + 1);
    if (!v->s) return fail_node(c, at, TC_E_OOM, "%s", "out of memory");
    v->s[strlen(v->s) - 1] = 0;
    return 0;
  } else if (strchr(d, '.') || !strcmp(d, "nan")) t = tc_scalar_f64(strtod(d, NULL), true, c->err);
  else t = tc_scalar_i64(strtoll(d, NULL, 10), true, c->err);
  if (!t) return -1;
  v->kind = V_TENSOR;
  v->t = t;
  return 0;
}

/* Who is being called: a built-in (op >= 0) or a user function; its name
 * and signature text for messages. */
typedef struct callee { int op; const char *name, *sigtext; } callee;

/* A binding error of the callee, at [start, end), followed by its signature. */
static int sig_error(ctx *c, const callee *f, int start, int end, const char *what) {
  if (f->op >= 0) tc_err_set(c->err, TC_E_BAD_ARG, f->op, -1, "%s (signature: %s(%s))", what, f->name, f->sigtext);
  else tc_err_set(c->err, TC_E_BAD_ARG, -1, -1, "%s: %s (signature: %s)", f->name, what, f->sigtext);
  err_at(c->err, start, end);
  return -1;
}

static int twice(ctx *c, const callee *f, node *k) {
  tc_err_set(c->err, TC_E_BAD_ARG, f->op, -1, "argument %s given twice", k->str);
  err_at(c->err, k->start, k->oend);
  return -1;
}

/* The parameter a call argument fills, or -1 with err set. */
static int slot_of(ctx *c, node *call, const callee *f, const sig *g, node *k, int *npos, const bool *given) {
  if (k->kind != N_KWARG) {
    if (*npos < g->n && g->types[*npos] == P_REST) return *npos;   /* it takes every one from here */
    if (*npos < g->n && g->types[*npos] == P_KWARGS)
      return sig_error(c, f, k->start, k->end, "takes tensors as keyword arguments only (name=x)");
    if (*npos < g->n) return (*npos)++;
    char what[80];
    snprintf(what, sizeof what, "takes at most %d argument%s, %d given", g->n, g->n == 1 ? "" : "s", call->nkids);
    return sig_error(c, f, call->ostart, call->oend, what);
  }
  for (int j = 0; j < g->n; j++) {
    if (strcmp(g->names[j], k->str)) continue;
    return given[j] ? twice(c, f, k) : j;
  }
  if (g->n && g->types[g->n - 1] == P_KWARGS) return g->n - 1;   /* "**name:kwargs" takes the rest */
  char what[sizeof c->err->msg];
  snprintf(what, sizeof what, "unknown keyword argument %s", k->str);
  return sig_error(c, f, k->start, k->oend, what);
}

/* A keyword a "**name:kwargs" parameter already took. */
static int given_twice(ctx *c, const callee *f, args *a, node *k) {
  for (int i = 0; i < a->nrest; i++)
    if (!strcmp(a->restname[i], k->str)) return twice(c, f, k);
  return 0;
}

/* `none` passed for an optional parameter means not given, and so does
 * the word a default shows ("all"): every default :help shows can be typed. */
static bool is_absent(const node *n, const char *def) {
  return n->kind == N_NONE || (n->kind == N_NAME && def[0] && !strcmp(n->str, def));
}

/* A built-in's default as the semantics in force has it (the default
 * float, take's and scatter's modes: tc_semantics_default), quoted as the
 * signature writes it, in d. */
static void semantics_default(const callee *f, int type, const char *def, char *d, size_t n) {
  static const char *const params[] = {[P_DTYPE] = "dtype", [P_MODE] = "mode", [P_REDUCE] = "reduce"};
  size_t len = strlen(def);
  snprintf(d, n, "%s", def);
  if (f->op < 0 || def[0] != '"' || len < 2 || len >= n || (type != P_DTYPE && type != P_MODE && type != P_REDUCE))
    return;
  char inner[40];
  snprintf(inner, sizeof inner, "%.*s", (int)(len - 2), def + 1);
  snprintf(d, n, "\"%s\"", tc_semantics_default((tc_op)f->op, params[type], inner));
}

/* Evaluates the call's arguments into their parameters' slots. A default
 * "=" (a user function's expression) is left to the caller. */
static int fill(ctx *c, node *call, const callee *f, args *a, bool *given) {
  const sig *g = a->g;
  int npos = 0;
  for (int i = 0; i < call->nkids; i++) {
    node *k = call->kids[i];
    int slot = slot_of(c, call, f, g, k, &npos, given);
    if (slot < 0) return -1;
    node *vn = k->kind == N_KWARG ? k->kids[0] : k;
    if (g->types[slot] == P_REST || g->types[slot] == P_KWARGS) {
      if (a->nrest == MAX_REST) return sig_error(c, f, vn->start, vn->end, "takes at most 64 operands");
      if (!a->nrest) a->at[slot] = vn;
      if (g->types[slot] == P_KWARGS) {
        if (given_twice(c, f, a, k) != 0) return -1;
        a->restname[a->nrest] = k->str;
      }
      a->rest[a->nrest++] = vn;
      given[slot] = true;
      continue;
    }
    a->at[slot] = vn;
    given[slot] = !is_absent(vn, g->defs[slot]);
    if (!given[slot]) a->at[slot] = call;
    /* a "[name]" parameter takes a list literal as separate tensors, evaluated when converted */
    else if (g->names[slot][0] == '[' && vn->kind == N_LIST && !vn->packed) a->v[slot].kind = V_NONE;
    else if (g->types[slot] == P_DTYPE && vn->kind == N_NAME && tc_dtype_from_name(vn->str) >= 0) {
      /* a bare dtype name where a dtype is expected: zeros([2], dtype=i32) (SPEC 11) */
      a->v[slot].kind = V_STR;
      if (!(a->v[slot].s = strdup(vn->str))) return fail_node(c, vn, TC_E_OOM, "%s", "out of memory");
    } else if (eval(c, vn, &a->v[slot]) != 0) return -1;
  }
  for (int j = 0; j < g->n; j++) {
    if (given[j]) continue;
    a->at[j] = call;
    if (g->types[j] == P_REST || g->types[j] == P_KWARGS) continue;   /* none: an empty list */
    if (!g->defs[j][0]) {
      char what[64];
      snprintf(what, sizeof what, "missing argument %s", g->names[j]);
      return sig_error(c, f, call->ostart, call->oend, what);
    }
    char d[40];
    semantics_default(f, g->types[j], g->defs[j], d, sizeof d);
    if (strcmp(d, "=") && default_value(c, d, &a->v[j], call) != 0) return -1;
  }
  return 0;
}

/* Clears the slots of g's parameters only: a whole args is 4 KiB, and
 * zeroing it was a fifth of a small call's time. */
static void args_start(args *a, const sig *g) {
  a->g = g;
  a->n = g->n;
  a->nrest = 0;
  memset(a->v, 0, sizeof a->v[0] * (size_t)g->n);
  memset(a->at, 0, sizeof a->at[0] * (size_t)g->n);
  memset(a->b, 0, sizeof a->b[0] * (size_t)g->n);
}

int bind_user(ctx *c, node *call, const sig *g, const char *sigtext, args *a, bool *given) {
  callee f = {-1, call->str, sigtext};
  args_start(a, g);
  return fill(c, call, &f, a, given);
}

int bind_args(ctx *c, node *call, tc_op op, args *a) {
  const sig *g = get_sig(op);
  callee f = {(int)op, tc_op_name(op), tc_op_signature(op)};
  args_start(a, g);
  bool given[MAX_PARAMS] = {0};
  return fill(c, call, &f, a, given);
}

int convert_args(ctx *c, args *a) {
  const sig *g = a->g;
  /* in order, a list of tensors last (its elements are evaluated then) */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < g->n; i++) {
      bool list = g->types[i] == P_TENSORS || g->types[i] == P_REST || g->types[i] == P_KWARGS;
      if (list != (pass == 1)) continue;
      a->b[i].given = true;
      if (a->v[i].kind == V_NONE && !list) absent(c, a, i);
      else if (convert(c, a, i) != 0) return -1;
    }
  return 0;
}

void args_free(args *a) {
  for (int i = 0; i < a->n; i++) {
    value_free(&a->v[i]);
    for (int k = 0; k < a->b[i].nts; k++) tc_tensor_free(a->b[i].ts[k]);
    free(a->b[i].ts);
  }
}
