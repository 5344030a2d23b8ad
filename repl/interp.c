/* The interpreter of blocks (SPEC 10): names in the current scope, the
 * statements of blocks (if, while, for, return, break, continue), user
 * functions and print().
 *
 * A user function is a value in the session's name table: its own copy of
 * its source and the AST parsed from it. A call binds its arguments with
 * the built-ins' binder (bind.c), pushes a frame (its locals) on the
 * session's frame stack, which has room for TC_MAX_CALL_DEPTH calls and no
 * more (recursion_limit), and runs the body; statements of a block never
 * print. An error inside a function keeps its position in the function's
 * text and gains one trace entry per call it leaves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "eval_int.h"

enum { X_OK = 0, X_BREAK = 1, X_CONTINUE = 2, X_RETURN = 3 };

/* ---- text positions ---- */
void text_linecol(const char *src, int32_t off, int line0, int *line, int *col) {
  *line = line0;
  *col = 1;
  if (!src) { *line = *col = 0; return; }
  for (int32_t i = 0; i < off; i++) {
    if (src[i] == '\n') { (*line)++; *col = 1; }
    else if (((unsigned char)src[i] & 0xC0) != 0x80) (*col)++;
  }
}

/* ---- names ---- */
/* Names are short: compared inline, not through a call of strcmp. */
static inline bool same_name(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}

static var *find_var(var *v, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (same_name(v[i].name, name)) return &v[i];
  return NULL;
}

ufunc *session_fn(session *s, const char *name) {
  var *v = find_var(s->vars, s->nvars, name);
  return v ? v->fn : NULL;
}

/* A name in a table, trying first where it was found last time (*slot):
 * a loop looks up the same few names again and again. */
static var *find_hinted(var *v, int n, const char *name, int *slot) {
  if (*slot >= 0 && *slot < n && same_name(v[*slot].name, name)) return &v[*slot];
  var *r = find_var(v, n, name);
  if (r) *slot = (int)(r - v);
  return r;
}

/* The variable name refers to here: a local of the current call, else a
 * top-level name; NULL if none. */
static var *scope_find(ctx *c, const char *name, int *slot, bool *local) {
  session *s = c->s;
  int dummy = -1;
  if (!slot) slot = &dummy;
  *local = false;
  if (s->nframes > 0) {
    frame *f = &s->frames[s->nframes - 1];
    var *v = find_hinted(f->locals, f->n, name, slot);
    if (v) { *local = true; return v; }
  }
  return find_hinted(s->vars, s->nvars, name, slot);
}

tc_tensor *scope_lookup(ctx *c, const char *name, int *slot, bool *is_fn) {
  bool local;
  var *v = scope_find(c, name, slot, &local);
  *is_fn = v && v->fn;
  return v ? v->t : NULL;
}

tc_tensor *scope_get(ctx *c, const char *name, bool *is_fn) { return scope_lookup(c, name, NULL, is_fn); }

int scope_set(ctx *c, const char *name, tc_tensor *t) {
  session *s = c->s;
  if (s->nframes > 0) {
    frame *f = &s->frames[s->nframes - 1];
    return vars_set(&f->locals, &f->n, &f->cap, name, t, c->err);
  }
  return session_set(s, name, t, c->err);
}

static void frame_pop(session *s) {
  frame *f = &s->frames[--s->nframes];
  for (int i = 0; i < f->n; i++) {
    free(f->locals[i].name);
    tc_tensor_free(f->locals[i].t);
  }
  f->n = 0;
}

/* ---- statements ---- */
static int exec_block(ctx *c, node *b) {
  for (int i = 0; i < b->nkids; i++) {
    int rc = exec_statement(c, b->kids[i]);
    if (rc != X_OK) return rc;
  }
  return X_OK;
}

/* Ctrl-C, checked on every loop's back-edge. */
static int check_interrupt(ctx *c, node *loop) {
  if (!tc_interrupt_flag) return 0;
  tc_err_set(c->err, TC_E_INTERRUPTED, -1, -1, "%s", "interrupted; variables keep the values they had when it stopped");
  err_at(c->err, loop->start, loop->oend);
  return -1;
}

/* A condition: exactly one element, true when nonzero (NaN is true), as the
 * cast to bool. */
static int truth(ctx *c, node *n, bool *out) {
  tc_tensor *t;
  if (n->kind == N_BINOP && tc_op_family((tc_op)n->op) == TC_FAM_CMP) {   /* i < n: its truth without a tensor */
    tc_tensor *a = NULL, *b = NULL;
    int rc = eval_operand(c, n->kids[0], &a);
    if (rc == 0) rc = eval_operand(c, n->kids[1], &b);
    if (rc == 0 && (rc = tc_scalar_truth((tc_op)n->op, a, b, out, c->err)) > 0)
      rc = tc_binary_inplace((tc_op)n->op, &a, b, c->err) == 0 ? 1 : -1;   /* as eval_chain computes it */
    if (rc < 0 && b) locate(c, n);
    tc_tensor_free(b);
    if (rc <= 0) {   /* read, or an error */
      tc_tensor_free(a);
      return rc;
    }
    t = a;
  } else if (eval_tensor(c, n, &t) != 0) return -1;
  if (t->ndim == 0 && t->dtype == TC_DT_BOOL && tc_tensor_host_data(t) && tc_scalar_fast()) {   /* a comparison's result: read it */
    *out = *(const uint8_t *)tc_tensor_host_data(t) != 0;
    tc_tensor_free(t);
    return 0;
  }
  if (tc_numel(t) != 1) {
    char shape[TC_MAX_DIMS * 24 + 4];
    tc_format_dims(shape, sizeof shape, t->ndim, t->shape);
    tc_tensor_free(t);
    return fail_node(c, n, TC_E_BAD_ARG, "a condition must have exactly one element, not shape %s; use any() or all()", shape);
  }
  tc_tensor *b = tc_cast(t, TC_DT_BOOL, c->err);
  tc_tensor_free(t);
  uint8_t v = 0;
  int rc = b ? tc_tensor_to_host(b, &v, c->err) : -1;
  tc_tensor_free(b);
  if (rc != 0) { locate(c, n); return -1; }
  *out = v != 0;
  return 0;
}

static int exec_if(ctx *c, node *n) {
  int i = 0;
  for (; i + 1 < n->nkids; i += 2) {
    bool b;
    if (truth(c, n->kids[i], &b) != 0) return -1;
    if (b) return exec_block(c, n->kids[i + 1]);
  }
  return i < n->nkids ? exec_block(c, n->kids[i]) : X_OK;
}

static int exec_while(ctx *c, node *n) {
  for (;;) {
    bool b;
    if (check_interrupt(c, n) != 0 || truth(c, n->kids[0], &b) != 0) return -1;
    if (!b) return X_OK;
    int rc = exec_block(c, n->kids[1]);
    if (rc == X_BREAK) return X_OK;
    if (rc != X_OK && rc != X_CONTINUE) return rc;
  }
}

static int check_var_name(ctx *c, const node *at, const char *name) {
  if (fn_find(name) || session_fn(c->s, name) || !strcmp(name, "print"))
    return fail_node(c, at, TC_E_BAD_ARG, "%s is a function name; choose another variable name", name);
  return 0;
}

/* name = t, where t is a new reference: straight into the variable when
 * it exists as a tensor in this scope (the loop's hot path), else checked
 * as a new variable name. */
static int bind_name(ctx *c, node *at, const char *name, tc_tensor *t) {
  bool local;
  var *v = scope_find(c, name, &at->slot, &local);
  if (v && !v->fn && (local || c->s->nframes == 0)) {
    tc_tensor_free(v->t);
    v->t = t;
    return 0;
  }
  if (check_var_name(c, at, name) != 0) { tc_tensor_free(t); return -1; }
  return scope_set(c, name, t);
}

static int exec_for(ctx *c, node *n) {
  node at = *n;
  at.ostart = n->start;   /* a name error points at the loop's head */
  if (check_var_name(c, &at, n->str) != 0) return -1;
  tc_tensor *t;
  if (eval_tensor(c, n->kids[0], &t) != 0) return -1;
  if (t->ndim == 0) {
    tc_tensor_free(t);
    return fail_node(c, n->kids[0], TC_E_BAD_ARG, "%s",
                     "for iterates over the first axis of a tensor; a 0-d value has none (use [x] for one pass)");
  }
  int rc = X_OK;
  tc_tensor *row = NULL;   /* the last row bound to the name; the loop holds a reference too */
  bool step_ok = tc_numel(t) > 0 && tc_scalar_fast();   /* an empty tensor's rows all have its offset */
  /* where the name's variable is: its table and index (a block neither removes nor reorders variables,
     but may grow the table, which moves it) */
  var *const *tabp = NULL, *tab = NULL;
  int idx = 0;
  for (int64_t k = 0; k < t->shape[0]; k++) {
    if (check_interrupt(c, n) != 0) { rc = -1; break; }
    if (step_ok && row && row->refcnt == 2 && *tabp == tab && tab[idx].t == row) {
      /* the name still holds the last row, and nothing else does: the same view, one row on */
      row->offset += t->strides[0];
    } else {
      tc_index_item it = {.kind = TC_IDX_INT, .i = k};
      tc_tensor_free(row);
      row = tc_getitem(t, 1, &it, c->err);
      if (!row) { locate(c, n->kids[0]); rc = -1; break; }
      if (bind_name(c, n, n->str, tc_tensor_ref(row)) != 0) { rc = -1; break; }
      bool local;
      var *v = scope_find(c, n->str, &n->slot, &local);
      tabp = local ? &c->s->frames[c->s->nframes - 1].locals : &c->s->vars;
      tab = *tabp;
      idx = (int)(v - tab);
    }
    rc = exec_block(c, n->kids[1]);
    if (rc == X_BREAK) { rc = X_OK; break; }
    if (rc == X_CONTINUE) rc = X_OK;
    if (rc != X_OK) break;
  }
  tc_tensor_free(row);
  tc_tensor_free(t);
  return rc;
}

/* x OP= e (and x = x OP e) on a variable x of this scope: x's value goes
 * into the op as the reference the variable holds, so that a scalar
 * nothing else holds is updated where it is (tc_binary_inplace); an error
 * points at `at`, the operator. 1: not that case. */
static int update_in_scope(ctx *c, node *at, tc_op op, node *target, node *e) {
  bool local;
  var *x = scope_find(c, target->str, &target->slot, &local);
  if (!x || x->fn || (!local && c->s->nframes > 0)) return 1;
  var *table = local ? c->s->frames[c->s->nframes - 1].locals : c->s->vars;
  tc_tensor *b;
  if (eval_operand(c, e, &b) != 0) return -1;
  if (table != (local ? c->s->frames[c->s->nframes - 1].locals : c->s->vars))   /* e grew the table */
    x = scope_find(c, target->str, &target->slot, &local);
  int rc = operator_op(c, at, (int)op, &op);
  if (rc == 0 && (rc = tc_binary_inplace(op, &x->t, b, c->err)) != 0) locate(c, at);
  tc_tensor_free(b);
  return rc;
}

/* x = e, x[i] = e, and the compound forms x OP= e, x[i] OP= e, which
 * evaluate x OP (e) (x[i] OP (e)) and assign that. */
static int exec_assign(ctx *c, node *n) {
  node *target = n->kids[0], *val = n->kids[1];
  if (target->kind == N_NAME && tc_scalar_fast()) {
    int rc = 1;
    if (n->op >= 0) rc = update_in_scope(c, n, (tc_op)n->op, target, val);
    else if (val->kind == N_BINOP && val->kids[0]->kind == N_NAME && !strcmp(val->kids[0]->str, target->str))
      rc = update_in_scope(c, val, (tc_op)val->op, target, val->kids[1]);   /* x = x OP e: the same */
    if (rc <= 0) return rc;
  }
  if (target->kind == N_INDEX && n->op >= 0 && tc_scalar_fast()) {
    int rc = eval_index_update(c, n, target, val);
    if (rc <= 0) return rc;
  }
  node op_node, *pair[2] = {target, val};
  if (n->op >= 0) {
    op_node = (node){.kind = N_BINOP, .start = n->start, .end = n->end, .ostart = n->ostart, .oend = n->oend,
                     .op = n->op, .depth = 2, .nkids = 2, .kids = pair};
    val = &op_node;
  }
  if (target->kind == N_INDEX) return eval_index_assign(c, target, val);
  tc_tensor *v;
  if (eval_tensor(c, val, &v) != 0) return -1;
  return bind_name(c, target, target->str, v);
}

int exec_statement(ctx *c, node *n) {
  switch (n->kind) {
  case N_IF: return exec_if(c, n);
  case N_WHILE: return exec_while(c, n);
  case N_FOR: return exec_for(c, n);
  case N_BREAK: return X_BREAK;
  case N_CONTINUE: return X_CONTINUE;
  case N_RETURN: {
    value v = {0};   /* not straight into c->ret: a call in the expression uses it */
    if (n->nkids && eval(c, n->kids[0], &v) != 0) return -1;
    value_free(&c->ret);
    c->ret = v;
    return X_RETURN;
  }
  case N_ASSIGN: return exec_assign(c, n);
  case N_DEF: return define_function(c, n);
  case N_BLOCK: return exec_block(c, n);
  case N_STR:   /* SPEC 2.1: a string is only an option value */
    return fail_node(c, n, TC_E_BAD_ARG, "%s", "a string is only allowed as an option value (e.g. mode=\"clip\")");
  default: {
    value v = {0};
    int rc = eval(c, n, &v);
    value_free(&v);
    return rc;
  }
  }
}

/* ---- user functions ---- */
static void ufunc_free(ufunc *u) {
  if (!u) return;
  free(u->name);
  free(u->text);
  free(u->label);
  free(u->sig);
  free(u->doc);
  free(u->bound_sig);
  arena_free(&u->ar);
  free(u);
}

void session_free_fn(ufunc *u) { ufunc_free(u); }

/* "f(x, y=1)": the def's text from the name to ')', with each run of
 * blanks and newlines as one space. */
static char *signature_text(const char *src, int32_t from, int32_t to) {
  char *s = malloc((size_t)(to - from) + 1);
  if (!s) return NULL;
  size_t n = 0;
  bool space = false;
  for (int32_t i = from; i < to; i++) {
    char ch = src[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') { space = true; continue; }
    if (ch == '#') {   /* a comment inside the parameter list */
      while (i < to && src[i] != '\n') i++;
      space = true;
      continue;
    }
    if (space && n && s[n - 1] != '(' && ch != ')' && ch != ',') s[n++] = ' ';
    space = false;
    s[n++] = ch;
  }
  s[n] = 0;
  return s;
}

int define_function(ctx *c, node *def) {
  session *s = c->s;
  node name_at = *def;   /* errors point at the name */
  name_at.ostart = def->ostart;
  if (fn_find(def->str) || !strcmp(def->str, "print"))
    return fail_node(c, &name_at, TC_E_BAD_ARG, "%s is a built-in function; choose another name", def->str);
  var *old = find_var(s->vars, s->nvars, def->str);
  if (old && !old->fn)
    return fail_node(c, &name_at, TC_E_BAD_ARG, "%s is a variable; :clear it before defining a function of that name", def->str);
  if (!s->src) return fail_node(c, &name_at, TC_E_BAD_ARG, "%s", "def is only allowed as a statement of its own");
  ufunc *u = calloc(1, sizeof *u);
  if (!u) return fail_node(c, &name_at, TC_E_OOM, "%s", "out of memory");
  int32_t ls = def->start;
  while (ls > 0 && s->src[ls - 1] != '\n') ls--;
  int line, col;
  text_linecol(s->src, ls, s->line0, &line, &col);
  u->line0 = line;
  u->len = def->end - ls;
  /* every byte, a NUL in a comment included: strndup stopped there, and the
     parser then read u->len bytes past the copy's end (found by fuzz_stmt) */
  u->text = malloc((size_t)u->len + 1);
  if (u->text) {
    memcpy(u->text, s->src + ls, (size_t)u->len);
    u->text[u->len] = 0;
  }
  u->name = strdup(def->str);
  u->label = s->label ? strdup(s->label) : NULL;
  u->doc = s->doc ? strdup(s->doc) : NULL;
  u->sig = signature_text(s->src, def->ostart, (int32_t)def->ival);
  tc_err e;
  tc_err_clear(&e);
  if (u->text && u->name && u->sig && (!s->label || u->label) && (!s->doc || u->doc))
    u->def = parse_def_at(u->text, u->len, def->start - ls, &u->ar, &e);
  if (!u->def) {
    ufunc_free(u);
    return fail_node(c, &name_at, TC_E_OOM, "%s", "out of memory");
  }
  if (old) {   /* redefining replaces */
    ufunc_free(old->fn);
    old->fn = u;
    return 0;
  }
  if (session_set(s, def->str, NULL, c->err) != 0) { ufunc_free(u); return -1; }
  find_var(s->vars, s->nvars, def->str)->fn = u;
  return 0;
}

/* How deep the C stack may grow under nested calls: half its limit, at
 * most 64 MB (calls are bounded by TC_MAX_CALL_DEPTH anyway; this guards
 * a small stack). */
static bool stack_deep(const session *s) {
  static uintptr_t limit;
  if (!limit) {
    struct rlimit rl;
    uintptr_t cur = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (uintptr_t)rl.rlim_cur : 8u << 20;
    limit = cur / 2 < (64u << 20) ? cur / 2 : (64u << 20);
  }
  char here;
  uintptr_t top = (uintptr_t)s->stack_top, at = (uintptr_t)&here;
  return s->stack_top && top > at && top - at > limit;
}

/* Records the error leaving a call of u made at call (in the caller's
 * text): the first function it leaves is where it happened. */
static void add_trace(ctx *c, ufunc *u, node *call) {
  session *s = c->s;
  if (!s->err_claimed) {
    s->err_claimed = true;
    s->err_fn = u;
    if (c->err->start < 0) {
      c->err->start = u->def->ostart;
      c->err->end = u->def->oend;
    }
  }
  if (s->ntrace >= TC_MAX_CALL_DEPTH) return;
  trace_entry e = {.repeat = 1};
  snprintf(e.fn, sizeof e.fn, "%s", u->name);
  if (s->nframes > 0) {
    ufunc *caller = s->frames[s->nframes - 1].fn;
    text_linecol(caller->text, call->ostart, caller->line0, &e.line, &e.col);
  } else text_linecol(s->src, call->ostart, s->line0, &e.line, &e.col);
  /* deep recursion: one entry for the same call made again and again */
  trace_entry *last = s->ntrace ? &s->trace[s->ntrace - 1] : NULL;
  if (last && !strcmp(last->fn, e.fn) && last->line == e.line && last->col == e.col) last->repeat++;
  else s->trace[s->ntrace++] = e;
}

int call_user(ctx *c, ufunc *u, node *call, value *out) {
  session *s = c->s;
  if (s->nframes >= TC_MAX_CALL_DEPTH || stack_deep(s)) {
    tc_err_set(c->err, TC_E_RECURSION, -1, -1, "%s: calls nested deeper than the limit of " TC_STR(TC_MAX_CALL_DEPTH), u->name);
    err_at(c->err, call->ostart, call->oend);
    return -1;
  }
  node *def = u->def;
  int np = def->nkids - 1;
  if (!u->bound_sig) {
    sig *ng = calloc(1, sizeof *ng);
    if (!ng) return fail_node(c, call, TC_E_OOM, "%s", "out of memory");
    ng->n = np;
    for (int i = 0; i < np; i++) {
      snprintf(ng->names[i], sizeof ng->names[i], "%s", def->kids[i]->str);
      ng->types[i] = P_ANY;
      strcpy(ng->defs[i], def->kids[i]->kind == N_KWARG ? "=" : "");
    }
    u->bound_sig = ng;
  }
  const sig *gp = u->bound_sig;
  const sig g = *gp;
  args a;
  a.n = 0;   /* the binder clears the slots it uses */
  bool given[MAX_PARAMS] = {0};
  if (bind_user(c, call, &g, u->sig, &a, given) != 0) { args_free(&a); return -1; }
  for (int i = 0; i < np; i++)
    if (a.v[i].kind == V_STR) {
      args_free(&a);
      return fail_node(c, a.at[i], TC_E_BAD_ARG, "argument %s must be a tensor (a string is only an option value of a built-in)",
                       g.names[i]);
    }
  frame *f = &s->frames[s->nframes++];
  f->fn = u;
  f->n = 0;
  int rc = 0;
  for (int i = 0; i < np && rc == 0; i++) {
    node *par = def->kids[i];
    if (given[i]) {
      rc = vars_set(&f->locals, &f->n, &f->cap, par->str, a.v[i].t, c->err);
      a.v[i].kind = V_NONE;
    } else if (par->kind == N_KWARG && par->kids[0]->kind != N_NONE) {
      tc_tensor *t;   /* a default, evaluated in the function's own scope */
      rc = eval_tensor(c, par->kids[0], &t);
      if (rc == 0) rc = vars_set(&f->locals, &f->n, &f->cap, par->str, t, c->err);
    }
  }
  args_free(&a);
  node *body = def->kids[np];
  if (rc == 0) rc = exec_statement(c, body);
  if (rc == X_RETURN || rc == X_OK) {
    *out = c->ret;
    c->ret = (value){0};
    rc = 0;
  } else rc = -1;
  frame_pop(s);
  if (rc != 0) add_trace(c, u, call);
  return rc;
}

/* print(a, b, ...): every argument evaluated first (an error prints
 * nothing), then written as Python's print writes them: in text mode on one
 * line, separated by a space; print() writes an empty line. */
int call_print(ctx *c, node *call) {
  int n = call->nkids, rc = 0;
  value *vs = calloc((size_t)(n ? n : 1), sizeof *vs);
  if (!vs) return fail_node(c, call, TC_E_OOM, "%s", "out of memory");
  for (int i = 0; i < n && rc == 0; i++) {
    node *k = call->kids[i];
    if (k->kind == N_KWARG) rc = fail_node(c, k, TC_E_BAD_ARG, "%s", "print takes no keyword arguments");
    else if (eval(c, k, &vs[i]) != 0) rc = -1;
    else if (vs[i].kind == V_NONE) rc = fail_node(c, k, TC_E_BAD_ARG, "%s", "print: the argument gives no value");
  }
  if (rc == 0 && c->s->emit) {
    if (!n) c->s->emit(c->s->emit_ud, NULL, false);
    for (int i = 0; i < n; i++) c->s->emit(c->s->emit_ud, &vs[i], i + 1 < n);
  }
  for (int i = 0; i < n; i++) value_free(&vs[i]);
  free(vs);
  return rc;
}
