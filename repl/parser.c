/* A Pratt parser (SPEC 2): operator spellings and binding powers come from
 * the op table, so adding an operator never touches this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

/* ---- arena ---- */
struct arena_block { arena_block *next; size_t cap; max_align_t data[]; };

void *arena_alloc(arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (!a->head || a->used + n > a->head->cap) {
    size_t cap = n > 65536 ? n : 65536;
    arena_block *b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->next = a->head;
    b->cap = cap;
    a->head = b;
    a->used = 0;
  }
  void *p = (char *)a->head->data + a->used;
  a->used += n;
  a->bytes += n;
  return p;
}

/* Frees all blocks but one, which is kept for reuse. */
static void arena_reset(arena *a) {
  if (!a->head) return;
  arena_block *keep = a->head;
  a->head = keep->next;
  arena_free(a);
  keep->next = NULL;
  a->head = keep;
  a->used = a->bytes = 0;
}

void arena_free(arena *a) {
  for (node *n = a->lits; n; n = n->lit_next) {
    tc_tensor_free(n->lit);
    if (n->pk_own) free(n->pk_vals);
  }
  a->lits = NULL;
  while (a->head) {
    arena_block *n = a->head->next;
    free(a->head);
    a->head = n;
  }
  a->used = a->bytes = 0;
}

/* ---- helpers ---- */
static void advance(parser *p) { p->tok = lex_next(&p->lx); }

bool is_keyword(const char *s, size_t n) { return keyword_find(s, n) != KW_NOT; }

/* Whether the current token is the keyword k. */
static bool is_kw(const parser *p, keyword k) { return p->tok.kind == T_KW && p->tok.kw == k; }

void parser_init(parser *p, const char *src, int32_t len, arena *ar, tc_err *err) {
  memset(p, 0, sizeof *p);
  lex_init(&p->lx, src, len);
  p->ar = ar;
  p->err = err;
  advance(p);
}

int32_t parser_pos(const parser *p) { return p->tok.start; }

static node *fail_at(parser *p, int32_t start, int32_t end, const char *fmt, const char *arg) {
  if (p->err->code == TC_OK) {
    tc_err_set(p->err, TC_E_SYNTAX, -1, -1, fmt, arg);
    err_at(p->err, start, end > start ? end : start + 1);
  }
  return NULL;
}

/* An allocation that failed while parsing: out_of_memory, not a syntax error. */
static node *fail_oom(parser *p, int32_t start, int32_t end) {
  if (p->err->code == TC_OK) {
    tc_err_set(p->err, TC_E_OOM, -1, -1, "%s", "out of memory while parsing");
    err_at(p->err, start, end > start ? end : start + 1);
  }
  return NULL;
}

/* "number 2", "name x", "'+'": what the current token is, for messages. */
static const char *tok_desc(const parser *p, char *buf, size_t n) {
  const token *t = &p->tok;
  int len = t->end - t->start;
  if (len > 24) len = 24;
  const char *text = p->lx.src + t->start;
  switch (t->kind) {
  case T_EOF: return "end of input";
  case T_NEWLINE: return "end of line";
  case T_ERROR: return t->msg;
  case T_INT: case T_FLOAT: snprintf(buf, n, "number %.*s", len, text); return buf;
  case T_NAME: snprintf(buf, n, "name %.*s", len, text); return buf;
  case T_KW: snprintf(buf, n, "'%s'", keyword_name(t->kw)); return buf;
  case T_STRING: return "string";
  default: snprintf(buf, n, "'%.*s'", len, text); return buf;
  }
}

/* The text ended inside a bracket: the innermost open one. */
static node *bracket_open(parser *p) {
  int d = p->lx.depth <= 64 ? p->lx.depth - 1 : 63;
  int32_t at = p->lx.open_at[d];
  return fail_at(p, at, at + 1, "'%s' is never closed", p->lx.src[at] == '(' ? "(" : "[");
}

static node *unexpected(parser *p) {
  if (p->tok.kind == T_EOF && p->lx.depth > 0) return bracket_open(p);
  char buf[64];
  if (p->tok.kind == T_ERROR) {
    unsigned char ch = (unsigned char)p->lx.src[p->tok.start];
    if (p->tok.end - p->tok.start == 1 && ch > ' ' && ch < 0x7f && !strcmp(p->tok.msg, "unexpected character")) {
      snprintf(buf, sizeof buf, "unexpected character '%c'", ch);
      return fail_at(p, p->tok.start, p->tok.end, "%s", buf);
    }
    return fail_at(p, p->tok.start, p->tok.end, "%s", p->tok.msg);
  }
  return fail_at(p, p->tok.start, p->tok.end, "unexpected %s", tok_desc(p, buf, sizeof buf));
}

static node *new_node(parser *p, node_kind k, int32_t start, int32_t end) {
  node *n = arena_alloc(p->ar, sizeof *n);
  if (!n) return fail_oom(p, start, end);
  memset(n, 0, sizeof *n);
  n->kind = k;
  n->start = n->ostart = start;
  n->end = n->oend = end;
  n->op = -1;
  n->slot = -1;
  n->depth = 1;
  n->ar = p->ar;
  return n;
}

static char *copy_text(parser *p, int32_t start, int32_t end) {
  char *s = arena_alloc(p->ar, (size_t)(end - start) + 1);
  if (!s) return NULL;
  memcpy(s, p->lx.src + start, (size_t)(end - start));
  s[end - start] = 0;
  return s;
}

/* A growable child list, copied into the arena when done. A push that
 * cannot grow the list marks it, and set_kids() then fails. */
typedef struct { node **v; int n, cap; bool oom; } kids;

static bool kids_push(kids *k, node *n) {
  if (k->n == k->cap) {
    int cap = k->cap ? k->cap * 2 : 8;
    node **v = realloc(k->v, sizeof *v * (size_t)cap);
    if (!v) { k->oom = true; return false; }
    k->v = v;
    k->cap = cap;
  }
  k->v[k->n++] = n;
  return true;
}

static bool set_kids(parser *p, node *n, kids *k) {
  n->nkids = k->n;
  n->kids = arena_alloc(p->ar, sizeof(node *) * (size_t)(k->n ? k->n : 1));
  if (n->kids) {
    if (k->n) memcpy(n->kids, k->v, sizeof(node *) * (size_t)k->n);
    /* A left-associative chain (1 + 1 + ... + 1) is not nesting: its left
     * operand does not count (SPEC 11); the evaluator walks such a chain in
     * a loop. Brackets, calls, unary and right-associative operators count. */
    bool chain = n->kind == N_BINOP && tc_op_assoc((tc_op)n->op) == TC_ASSOC_LEFT;
    for (int i = 0; i < k->n; i++) {
      if (!k->v[i]) continue;
      int d = k->v[i]->depth + (chain && i == 0 ? 0 : 1);
      if (d > n->depth) n->depth = d;
    }
  }
  free(k->v);
  k->v = NULL;
  if (!n->kids || k->oom) { fail_oom(p, n->start, n->end); return false; }
  if (n->depth > TC_MAX_DEPTH + 1) {   /* a leaf is depth 1, and nests nothing */
    fail_at(p, n->start, n->end, "expression nested too deeply (limit %s)", "1000");
    return false;
  }
  return true;
}

static bool is_op(const parser *p, const char *sym) {
  return p->tok.kind == T_OP && (size_t)(p->tok.end - p->tok.start) == strlen(sym) &&
         memcmp(p->lx.src + p->tok.start, sym, strlen(sym)) == 0;
}

/* The op whose symbol is the current token, as infix (arity 2) or prefix:
 * the lexer found it in the op table (^ is power, as in bc, Octave, Julia
 * and R). */
static int find_op(const parser *p, bool prefix) {
  if (p->tok.kind != T_OP) return -1;
  return prefix ? p->tok.prefix : p->tok.infix;
}

static node *parse_expr(parser *p, int rbp);

static node *enter(parser *p) {
  /* the statement's expression is depth 1: TC_MAX_DEPTH levels inside it */
  if (++p->depth > TC_MAX_DEPTH + 1) return fail_at(p, p->tok.start, p->tok.end, "expression nested too deeply (limit %s)", "1000");
  return (node *)p;   /* any non-NULL */
}

/* ---- packed lists: a list literal of numbers, read straight into one
 * array of values (a large literal costs its values, not a node each).
 * Anything else (a name, a call, true, a ragged or empty list, a number
 * that does not fit i64) gives up, and the list is read again element by
 * element, which reports what is wrong as before. ---- */
typedef struct {
  int ndim;                      /* lists around a number (-1: none seen yet) */
  int64_t shape[TC_MAX_DIMS];    /* each level's length (-1: not yet) */
  int64_t n, cap;
  int32_t end;                   /* where the outermost ']' ends */
  bool flt, own;                 /* own: v is a block from malloc (grown by realloc), not the arena's */
  union { double d; int64_t i; } *v;
} packing;

/* Room for one more value: the first 32 in the arena, then a block from
 * malloc of their own, doubled by realloc (in place for a large block, so
 * the values' memory is what they take, without a second copy). The
 * evaluator's tensor takes that block as its storage (tc_tensor_adopt). */
static bool pack_room(parser *p, packing *k) {
  if (k->n < k->cap) return true;
  size_t was = sizeof *k->v * (size_t)k->cap, bytes = k->cap ? 2 * was : sizeof *k->v * 32;
  void *v;
  if (!k->cap) v = arena_alloc(p->ar, bytes);
  else if (!k->own) {
    if ((v = malloc(bytes))) memcpy(v, k->v, was);
  } else {
    v = realloc(k->v, bytes);
  }
  if (!v) return false;
  k->own = k->cap > 0;
  k->v = v;
  k->cap = (int64_t)(bytes / sizeof *k->v);
  return true;
}

/* One number literal, with a '-' written right before it. */
static bool pack_leaf(parser *p, packing *k) {
  bool neg = false;
  if (p->tok.kind == T_OP && p->tok.end - p->tok.start == 1 && p->lx.src[p->tok.start] == '-') {
    int32_t at = p->tok.end;
    advance(p);
    if (p->tok.start != at) return false;
    neg = true;
  }
  token t = p->tok;
  double d = 0;
  int64_t i = 0;
  bool flt;
  if (t.kind == T_INT) {
    if (t.overflow || t.mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return false;
    i = neg ? (int64_t)(0 - t.mag) : (int64_t)t.mag;
    flt = false;
  } else if (t.kind == T_FLOAT) {
    d = neg ? -t.fval : t.fval;
    flt = true;
  } else if (t.kind == T_NAME && t.end - t.start == 3 && (!memcmp(p->lx.src + t.start, "inf", 3) || !memcmp(p->lx.src + t.start, "nan", 3))) {
    d = p->lx.src[t.start] == 'i' ? __builtin_inf() : __builtin_nan("");
    if (neg) d = -d;
    flt = true;
  } else {
    return false;
  }
  if (!pack_room(p, k)) return false;
  if (flt && !k->flt) {   /* the list is f64: the integers so far become doubles, as a literal list makes them */
    for (int64_t j = 0; j < k->n; j++) k->v[j].d = (double)k->v[j].i;
    k->flt = true;
  }
  if (k->flt) k->v[k->n++].d = flt ? d : (double)i;
  else k->v[k->n++].i = i;
  advance(p);
  return true;
}

/* The list at the current '[', at nesting level `level`. */
static bool pack_list(parser *p, packing *k, int level) {
  advance(p);
  int64_t len = 0;
  while (p->tok.kind != T_RBRACK) {
    if (p->tok.kind == T_LBRACK) {
      if ((k->ndim >= 0 && level + 1 >= k->ndim) || level + 1 >= TC_MAX_DIMS || !pack_list(p, k, level + 1)) return false;
    } else {
      if (k->ndim < 0) k->ndim = level + 1;
      if (k->ndim != level + 1 || !pack_leaf(p, k)) return false;
    }
    len++;
    if (p->tok.kind == T_COMMA) { advance(p); continue; }
    if (p->tok.kind != T_RBRACK) return false;
  }
  if (len == 0) return false;
  if (k->shape[level] < 0) k->shape[level] = len;
  if (k->shape[level] != len) return false;
  k->end = p->tok.end;
  advance(p);
  return true;
}

/* The packed list at the current '[', or NULL with the parser where it was.
 * The node is on its arena's list of nodes to release (lits): its tensor
 * when it has been evaluated, else its own block of values. */
static node *parse_packed(parser *p) {
  lexer lx = p->lx;
  token tok = p->tok;
  packing k = {.ndim = -1};
  for (int d = 0; d < TC_MAX_DIMS; d++) k.shape[d] = -1;
  if (pack_list(p, &k, 0)) {
    node *n = new_node(p, N_LIST, tok.start, k.end);
    int64_t *shape = n ? arena_alloc(p->ar, sizeof(int64_t) * (size_t)k.ndim) : NULL;
    if (!shape) {
      if (k.own) free(k.v);
      return fail_oom(p, tok.start, k.end);
    }
    if (k.own && k.cap > k.n) {   /* give back the room grown for values that never came */
      void *fit = realloc(k.v, sizeof *k.v * (size_t)k.n);
      if (fit) k.v = fit;
    }
    n->oend = tok.end;   /* a caret under the '[', as for any list */
    memcpy(shape, k.shape, sizeof(int64_t) * (size_t)k.ndim);
    n->packed = true;
    n->pk_own = k.own;
    n->pk_float = k.flt;
    n->pk_ndim = k.ndim;
    n->pk_n = k.n;
    n->pk_shape = shape;
    n->pk_vals = k.v;
    n->depth = k.ndim + 1;
    n->lit_next = p->ar->lits;
    p->ar->lits = n;
    return n;
  }
  if (k.own) free(k.v);
  p->lx = lx;   /* read it again, element by element */
  p->tok = tok;
  return NULL;
}

/* [a, b, ...] */
static node *parse_list(parser *p) {
  if (!p->no_pack) {
    node *pk = parse_packed(p);
    if (pk || p->err->code) return pk;
  }
  node *n = new_node(p, N_LIST, p->tok.start, p->tok.end);
  if (!n) return NULL;
  advance(p);
  kids k = {0};
  p->no_pack++;
  while (p->tok.kind != T_RBRACK) {
    node *e = parse_expr(p, 0);
    if (!e || !kids_push(&k, e)) { free(k.v); p->no_pack--; return e ? fail_oom(p, n->start, n->end) : NULL; }
    if (p->tok.kind == T_COMMA) { advance(p); continue; }
    if (p->tok.kind != T_RBRACK) { free(k.v); p->no_pack--; return unexpected(p); }
  }
  p->no_pack--;
  n->end = p->tok.end;
  advance(p);
  return set_kids(p, n, &k) ? n : NULL;
}

/* A tuple (a, b, ...), (a,) or (): a list (N_LIST marked tuple) whose
 * first element, if any, is parsed; the current token is the ',' or ')'
 * after it. */
static node *parse_tuple(parser *p, int32_t open, node *first) {
  node *n = new_node(p, N_LIST, open, p->tok.end);
  if (!n) return NULL;
  n->tuple = true;
  kids k = {0};
  if (first && !kids_push(&k, first)) return fail_oom(p, n->start, n->end);
  while (first && p->tok.kind == T_COMMA) {
    advance(p);
    if (p->tok.kind == T_RPAREN) break;   /* (a,) and (a, b,) */
    node *e = parse_expr(p, 0);
    if (!e || !kids_push(&k, e)) { free(k.v); return e ? fail_oom(p, n->start, n->end) : NULL; }
  }
  if (p->tok.kind != T_RPAREN) { free(k.v); return unexpected(p); }
  n->end = p->tok.end;
  advance(p);
  return set_kids(p, n, &k) ? n : NULL;
}

/* A string literal, its backslash escapes undone. */
static node *parse_string(parser *p) {
  token t = p->tok;
  node *n = new_node(p, N_STR, t.start, t.end);
  if (!n) return NULL;
  char *s = copy_text(p, t.start + 1, t.end - 1);
  if (!s) return fail_oom(p, t.start, t.end);
  /* undo backslash escapes in place (the lexer checked them) */
  char *w = s;
  for (char *r = s; *r; r++) {
    int k = *r == '\\' ? string_escape(r, (int32_t)strlen(r), w) : 0;
    if (k > 0) { w++; r += k - 1; }
    else *w++ = *r;
  }
  *w = 0;
  n->str = s;
  advance(p);
  return n;
}

/* A name, or the literals true, false (also True, False, as Python spells
 * them), inf and nan. */
static node *parse_name(parser *p) {
  token t = p->tok;
  char *s = copy_text(p, t.start, t.end);
  if (!s) return fail_oom(p, t.start, t.end);
  node *n;
  if (!strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "True") || !strcmp(s, "False")) {
    n = new_node(p, N_BOOL, t.start, t.end);
    if (n) n->ival = s[0] == 't' || s[0] == 'T';
  } else if (!strcmp(s, "inf") || !strcmp(s, "nan")) {
    n = new_node(p, N_FLOAT, t.start, t.end);
    if (n) n->fval = s[0] == 'i' ? __builtin_inf() : __builtin_nan("");
  } else {
    n = new_node(p, N_NAME, t.start, t.end);
    if (n) n->str = s;
  }
  advance(p);
  return n;
}

/* A prefix operator and its operand; a minus written directly before an
 * integer literal is part of the literal. */
static node *parse_unary(parser *p) {
  token t = p->tok;
  int op = find_op(p, true);
  bool plus = is_op(p, "+");
  if (op < 0 && !plus) return unexpected(p);
  int bp = op >= 0 ? tc_op_bp((tc_op)op) : tc_op_bp(TC_OP_NEG);
  advance(p);
  /* A minus written directly before an integer literal is part of it
   * (so the i64 minimum can be written), unless ** binds the literal. */
  if (op == TC_OP_NEG && p->tok.kind == T_INT && p->tok.start == t.end) {
    token lit = p->tok;
    lexer save = p->lx;
    advance(p);
    if (find_op(p, false) != TC_OP_POW) {   /* ** or ^ */
      node *n = new_node(p, N_INT, t.start, lit.end);
      if (!n) return NULL;
      n->overflow = lit.overflow || lit.mag > (uint64_t)INT64_MAX + 1;
      n->ival = n->overflow ? 0 : (int64_t)(0 - lit.mag);
      return n;
    }
    p->lx = save;
    p->tok = lit;
  }
  node *x = parse_expr(p, bp);
  if (!x) return NULL;
  node *n = new_node(p, N_UNOP, t.start, x->end);
  if (!n) return NULL;
  n->oend = t.end;
  n->op = op;
  kids k = {0};
  if (!kids_push(&k, x)) return fail_oom(p, t.start, t.end);
  return set_kids(p, n, &k) ? n : NULL;
}

static node *parse_prefix(parser *p) {
  token t = p->tok;
  switch (t.kind) {
  case T_INT: {
    node *n = new_node(p, N_INT, t.start, t.end);
    if (!n) return NULL;
    n->overflow = t.overflow || t.mag > (uint64_t)INT64_MAX;
    n->ubig = !t.overflow && n->overflow;
    n->uval = t.mag;
    n->ival = n->overflow ? 0 : (int64_t)t.mag;
    advance(p);
    return n;
  }
  case T_FLOAT: {
    node *n = new_node(p, N_FLOAT, t.start, t.end);
    if (!n) return NULL;
    n->fval = t.fval;
    advance(p);
    return n;
  }
  case T_STRING:
    return parse_string(p);
  case T_NAME:
    return parse_name(p);
  case T_KW: {
    if (t.kw != KW_NONE) return unexpected(p);
    node *n = new_node(p, N_NONE, t.start, t.end);
    if (!n) return NULL;
    if (!(n->str = copy_text(p, t.start, t.end))) return fail_oom(p, t.start, t.end);
    advance(p);
    return n;
  }
  case T_LPAREN: {
    int32_t open = t.start;
    advance(p);
    if (p->tok.kind == T_RPAREN) return parse_tuple(p, open, NULL);   /* () */
    node *e = parse_expr(p, 0);   /* one level of the depth limit, as each nesting below */
    if (!e) return NULL;
    if (p->tok.kind == T_COMMA) return parse_tuple(p, open, e);
    if (p->tok.kind != T_RPAREN) return unexpected(p);
    advance(p);
    e->paren = true;
    return e;
  }
  case T_LBRACK:
    return parse_list(p);
  case T_OP:
    return parse_unary(p);
  case T_ELLIPSIS:
  case T_COLON:
    return fail_at(p, t.start, t.end, "%s", t.kind == T_ELLIPSIS ? "'...' is only allowed inside an index" : "':' is only allowed inside an index");
  default:
    return unexpected(p);
  }
}

/* f(a, b, name=value) */
static node *parse_call(parser *p, node *callee) {
  if (callee->kind != N_NAME)
    return fail_at(p, p->tok.start, p->tok.end, "%s", "only a function name can be called");
  node *n = new_node(p, N_CALL, callee->start, callee->end);
  if (!n) return NULL;
  n->str = callee->str;
  advance(p);
  kids k = {0};
  bool seen_kw = false;
  while (p->tok.kind != T_RPAREN) {
    node *arg;
    if (p->tok.kind == T_NAME) {
      /* look ahead for name= */
      token name = p->tok;
      lexer save = p->lx;
      advance(p);
      if (p->tok.kind == T_ASSIGN) {
        advance(p);
        node *v = parse_expr(p, 0);
        if (!v) { free(k.v); return NULL; }
        arg = new_node(p, N_KWARG, name.start, v->end);
        if (!arg) { free(k.v); return NULL; }
        arg->str = copy_text(p, name.start, name.end);
        if (!arg->str) { free(k.v); return fail_oom(p, name.start, name.end); }
        arg->oend = name.end;
        kids kk = {0};
        kids_push(&kk, v);
        if (!set_kids(p, arg, &kk)) { free(k.v); return NULL; }
        seen_kw = true;
        goto push;
      }
      p->lx = save;
      p->tok = name;
    }
    if (seen_kw) { free(k.v); return fail_at(p, p->tok.start, p->tok.end, "%s", "positional argument after a keyword argument"); }
    arg = parse_expr(p, 0);
    if (!arg) { free(k.v); return NULL; }
  push:
    if (!kids_push(&k, arg)) { free(k.v); return fail_oom(p, n->start, n->end); }
    if (p->tok.kind == T_COMMA) { advance(p); continue; }
    if (p->tok.kind != T_RPAREN) { free(k.v); return unexpected(p); }
  }
  n->end = p->tok.end;   /* the span covers the arguments; ostart/oend stay on the name */
  advance(p);
  return set_kids(p, n, &k) ? n : NULL;
}

static bool index_item_end(const parser *p) {
  return p->tok.kind == T_COMMA || p->tok.kind == T_RBRACK || p->tok.kind == T_COLON;
}

/* x[i, a:b:c, ..., idx] */
static node *parse_index(parser *p, node *target) {
  node *n = new_node(p, N_INDEX, target->start, p->tok.end);
  if (!n) return NULL;
  n->ostart = p->tok.start;
  advance(p);
  kids k = {0};
  kids_push(&k, target);
  while (p->tok.kind != T_RBRACK) {
    node *item;
    if (p->tok.kind == T_ELLIPSIS) {
      item = new_node(p, N_ELLIPSIS, p->tok.start, p->tok.end);
      advance(p);
    } else {
      node *parts[3] = {NULL, NULL, NULL};
      int np = 0;
      int32_t s0 = p->tok.start;
      if (p->tok.kind != T_COLON) {
        parts[0] = parse_expr(p, 0);
        if (!parts[0]) { free(k.v); return NULL; }
      }
      if (p->tok.kind == T_COLON) {
        while (p->tok.kind == T_COLON && np < 2) {
          np++;
          advance(p);
          if (!index_item_end(p)) {
            parts[np] = parse_expr(p, 0);
            if (!parts[np]) { free(k.v); return NULL; }
          }
        }
        if (p->tok.kind == T_COLON) { free(k.v); return unexpected(p); }
        item = new_node(p, N_SLICE, s0, p->tok.start);
        if (item) {
          kids sk = {0};
          for (int i = 0; i < 3; i++) kids_push(&sk, parts[i]);
          if (!set_kids(p, item, &sk)) { free(k.v); return NULL; }
        }
      } else item = parts[0];
    }
    if (!item || !kids_push(&k, item)) { free(k.v); return item ? fail_oom(p, n->start, n->end) : NULL; }
    if (p->tok.kind == T_COMMA) { advance(p); continue; }
    if (p->tok.kind != T_RBRACK) { free(k.v); return unexpected(p); }
  }
  n->end = p->tok.end;
  n->oend = n->ostart + 1;
  advance(p);
  return set_kids(p, n, &k) ? n : NULL;
}

/* A node of kind k over a and b (a binary operator, an assignment), its
 * caret on the token t, its op op. */
static node *pair_node(parser *p, node_kind k, node *a, node *b, const token *t, int op) {
  node *n = new_node(p, k, a->start, b->end);
  if (!n) return NULL;
  n->ostart = t->start;
  n->oend = t->end;
  n->op = op;
  kids ks = {0};
  kids_push(&ks, a);
  kids_push(&ks, b);
  return set_kids(p, n, &ks) ? n : NULL;
}

/* NumPy's read-only attributes, each the function it calls. */
static const struct { const char *attr, *fn; } attributes[] = {
  {"T", "transpose"}, {"shape", "shape"}, {"ndim", "ndim"}, {"size", "size"}, {"dtype", "dtype"},
};

/* x.attr: the call fn(x) of its attributes[] row. */
static node *parse_attr(parser *p, node *x) {
  advance(p);   /* the '.' (the lexer made one only before a letter or '_') */
  token t = p->tok;
  const char *fn = NULL;
  for (size_t i = 0; i < sizeof attributes / sizeof attributes[0] && t.kind == T_NAME; i++)
    if ((size_t)(t.end - t.start) == strlen(attributes[i].attr) &&
        !memcmp(p->lx.src + t.start, attributes[i].attr, strlen(attributes[i].attr)))
      fn = attributes[i].fn;
  if (!fn)
    return fail_at(p, t.start, t.end, "%s",
                   "unknown attribute: a tensor has .T, .shape, .ndim, .size and .dtype (call functions as f(x))");
  node *n = new_node(p, N_CALL, x->start, t.end);
  if (!n) return NULL;
  n->ostart = t.start;
  n->oend = t.end;
  n->str = fn;
  advance(p);
  kids k = {0};
  if (!kids_push(&k, x)) return fail_oom(p, n->start, n->end);
  return set_kids(p, n, &k) ? n : NULL;
}

static node *parse_expr(parser *p, int rbp) {
  if (!enter(p)) return NULL;
  node *left = parse_prefix(p);
  while (left) {
    if (p->tok.kind == T_DOT) { left = parse_attr(p, left); continue; }
    if (p->tok.kind == T_LPAREN) { left = parse_call(p, left); continue; }
    if (p->tok.kind == T_LBRACK) { left = parse_index(p, left); continue; }
    int op = find_op(p, false);
    if (op < 0) break;
    int lbp = tc_op_bp((tc_op)op);
    if (lbp <= rbp) break;
    bool nonassoc = tc_op_assoc((tc_op)op) == TC_ASSOC_NONASSOC;
    if (nonassoc && !left->paren && left->kind == N_BINOP && tc_op_assoc((tc_op)left->op) == TC_ASSOC_NONASSOC) {
      /* x > 1 & x < 5 parses as x > (1 & x) < 5: the & was written, the brackets were not */
      node *mid = left->kids[1];
      bool bitop = mid->kind == N_BINOP && !mid->paren && (mid->op == TC_OP_BITWISE_AND || mid->op == TC_OP_BITWISE_OR);
      left = fail_at(p, p->tok.start, p->tok.end, "%s",
                     bitop ? "& and | bind tighter than comparisons: write (x > 1) & (x < 5) with brackets"
                           : "comparisons do not chain; combine them with &");
      break;
    }
    token t = p->tok;
    advance(p);
    bool right = tc_op_assoc((tc_op)op) == TC_ASSOC_RIGHT;
    node *rhs = parse_expr(p, right ? lbp - 1 : lbp);
    left = rhs ? pair_node(p, N_BINOP, left, rhs, &t, op) : NULL;
  }
  p->depth--;
  return left;
}

static bool at_end(const parser *p) {
  return p->tok.kind == T_EOF || p->tok.kind == T_NEWLINE || p->tok.kind == T_SEMI;
}

/* ---- statements and blocks ----
 * Blocks are read with an explicit stack of open frames, not by recursion.
 * So the parser can stop at the end of the text with its frames kept and
 * read on when the text grows (parser_resume): the line reader asks it,
 * line by line, whether a block is open, and a header that did not parse
 * opens nothing, exactly as for the statement that runs. A statement that
 * fails inside a block is skipped to its end and the block read on to its
 * 'end': the first error stands for the whole block (tc_err keeps the
 * first), and nothing of the block is run or bound. */
struct frame {
  node *n;            /* the statement the block belongs to (N_DEF, N_IF, N_WHILE,
                         N_FOR); NULL while only checking (p->resumable) */
  token opener;       /* its keyword, for "never closed" */
  kids k;             /* its children so far: DEF params; IF cond, block, ...; a loop's cond */
  node *blk;          /* the block being read */
  kids body;          /* that block's statements */
  bool in_else;       /* IF: its else block is being read */
  bool outer_def;     /* in_def and loops around the block, restored at its end */
  int outer_loops;
};

/* A statement read and checked while nothing is kept (p->resumable). */
static node not_kept;

/* The end of a statement: a separator, or inside a block the word that
 * ends or divides it (if c then x = 1 else x = 2 end). */
static bool stmt_end(const parser *p) {
  return at_end(p) || (p->nframes > 0 && (is_kw(p, KW_END) || is_kw(p, KW_ELSE) || is_kw(p, KW_ELIF)));
}

static node *expect_kw(parser *p, keyword w) {
  if (is_kw(p, w)) { advance(p); return (node *)p; }
  char buf[64], msg[96];
  snprintf(msg, sizeof msg, "expected '%s', found %s", keyword_name(w), tok_desc(p, buf, sizeof buf));
  return fail_at(p, p->tok.start, p->tok.end, "%s", msg);
}

static struct frame *top(const parser *p) { return &p->frames[p->nframes - 1]; }

/* The word that ends or divides the innermost block: 'end', and 'else' or
 * 'elif' in an if before its else. */
static bool frame_stop(const parser *p) {
  if (is_kw(p, KW_END)) return true;
  const struct frame *f = top(p);
  return (is_kw(p, KW_ELSE) || is_kw(p, KW_ELIF)) && f->opener.kw == KW_IF && !f->in_else;
}

/* A new block's statements start at the current token. */
static void block_begin(parser *p, struct frame *f) {
  f->body = (kids){0};
  f->blk = f->n ? new_node(p, N_BLOCK, p->tok.start, p->tok.start) : NULL;
  if (f->n && !f->blk) f->body.oom = true;
}

/* Opens the block of statement n (NULL while checking), whose keyword is
 * opener, with its children so far k; its statements start at the current
 * token. Blocks nest without limit here (no recursion), but the evaluator
 * recurses: beyond TC_MAX_BLOCKS the statement is an error. */
static bool frame_open(parser *p, node *n, const token *opener, kids *k) {
  if (p->nframes == p->fcap) {
    int cap = p->fcap ? p->fcap * 2 : 8;
    struct frame *fs = realloc(p->frames, sizeof *fs * (size_t)cap);
    if (!fs) { free(k->v); fail_oom(p, opener->start, opener->end); return false; }
    p->frames = fs;
    p->fcap = cap;
  }
  if (p->nframes >= TC_MAX_BLOCKS)
    fail_at(p, opener->start, opener->end, "blocks nested too deeply (limit %s)", TC_STR_BLOCKS);
  struct frame *f = &p->frames[p->nframes++];
  *f = (struct frame){.n = p->resumable ? NULL : n, .opener = *opener, .k = *k,
                      .outer_def = p->in_def, .outer_loops = p->loops};
  if (p->resumable) free(k->v), f->k = (kids){0};
  if (opener->kw == KW_DEF) {
    p->in_def = true;
    p->loops = 0;
  } else if (opener->kw != KW_IF) {
    p->loops++;
  }
  block_begin(p, f);
  return true;
}

/* The block being read ends at the current token ('end', 'else' or
 * 'elif'): its node joins the statement's children. */
static void block_close(parser *p, struct frame *f) {
  if (!f->n) return;
  if (!f->blk) return;
  f->blk->end = p->tok.start;
  if (!set_kids(p, f->blk, &f->body)) f->k.oom = true;
  else kids_push(&f->k, f->blk);
  f->blk = NULL;
}

/* Leaves the innermost block, at its 'end' (consumed): its statement is
 * complete (&not_kept while checking; NULL on an error). */
static node *frame_end(parser *p) {
  struct frame *f = top(p);
  block_close(p, f);
  p->in_def = f->outer_def;
  p->loops = f->outer_loops;
  node *n = f->n;
  kids k = f->k;
  p->nframes--;
  if (n) {
    n->end = p->tok.end;
    if (!set_kids(p, n, &k)) n = NULL;
  } else {
    free(k.v);
    n = &not_kept;
  }
  advance(p);
  return n;
}

/* Every open block dropped (an error, the end of the text). */
static void frames_drop(parser *p) {
  while (p->nframes > 0) {
    struct frame *f = top(p);
    free(f->k.v);
    free(f->body.v);
    p->in_def = f->outer_def;
    p->loops = f->outer_loops;
    p->nframes--;
  }
}

/* 'else' or 'elif' in an if: its block so far ends, the next begins. */
static void frame_divide(parser *p) {
  struct frame *f = top(p);
  block_close(p, f);
  if (is_kw(p, KW_ELSE)) {
    advance(p);
    f->in_else = true;
  } else {
    advance(p);
    node *c = parse_expr(p, 0);
    if (c && !expect_kw(p, KW_THEN)) c = NULL;
    if (f->n) kids_push(&f->k, c);
    /* a condition that did not parse: its line is skipped, and the
       statements after it still belong to the if */
    if (!c)
      while (!at_end(p) && !(p->lx.depth == 0 && frame_stop(p))) advance(p);
  }
  block_begin(p, f);
}

/* A name that a statement binds (a function, parameter or loop variable). */
static char *bound_name(parser *p, const char *what) {
  if (p->tok.kind != T_NAME) {
    char buf[64], msg[128];
    snprintf(msg, sizeof msg, "expected %s, found %s%s", what, tok_desc(p, buf, sizeof buf),
             p->tok.kind == T_KW ? " (a reserved word)" : "");
    fail_at(p, p->tok.start, p->tok.end, "%s", msg);
    return NULL;
  }
  char *s = copy_text(p, p->tok.start, p->tok.end);
  if (!s) { fail_oom(p, p->tok.start, p->tok.end); return NULL; }
  advance(p);
  return s;
}

/* def NAME(P, Q=DEFAULT) = EXPR (the whole statement), or the header of
 * def NAME(P) NEWLINE-or-; STMTS end (its block is opened: *opened). */
static node *parse_def(parser *p, bool *opened) {
  token opener = p->tok;
  /* read whole all the same, so that its own 'end' closes it */
  if (p->nframes > 0) fail_at(p, opener.start, opener.end, "%s", "def is only allowed at top level, not inside a block");
  advance(p);
  node *n = new_node(p, N_DEF, opener.start, opener.end);
  if (!n) return NULL;
  n->ostart = p->tok.start;
  n->oend = p->tok.end;
  if (!(n->str = bound_name(p, "a function name"))) return NULL;
  if (p->tok.kind != T_LPAREN) return unexpected(p);
  advance(p);
  kids k = {0};
  while (p->tok.kind != T_RPAREN) {
    int32_t at = p->tok.start;
    char *name = bound_name(p, "a parameter name");
    if (!name) { free(k.v); return NULL; }
    node *par;
    if (p->tok.kind == T_ASSIGN) {
      advance(p);
      node *v = parse_expr(p, 0);
      if (!v) { free(k.v); return NULL; }
      par = new_node(p, N_KWARG, at, v->end);
      if (par) {
        kids kk = {0};
        kids_push(&kk, v);
        if (!set_kids(p, par, &kk)) par = NULL;
      }
    } else {
      for (int i = 0; i < k.n; i++)
        if (k.v[i]->kind == N_KWARG) { free(k.v); return fail_at(p, at, p->tok.start, "%s", "a parameter without a default after one with a default"); }
      par = new_node(p, N_NAME, at, p->lx.pos);
    }
    if (!par) { free(k.v); return NULL; }
    par->str = name;
    par->oend = at + (int32_t)strlen(name);
    for (int i = 0; i < k.n; i++)
      if (!strcmp(k.v[i]->str, name)) { free(k.v); return fail_at(p, at, par->oend, "parameter %s appears twice", name); }
    if (k.n == MAX_USER_PARAMS) { free(k.v); return fail_at(p, at, par->oend, "%s", "a function has at most 8 parameters"); }
    if (!kids_push(&k, par)) { free(k.v); return fail_oom(p, at, at + 1); }
    if (p->tok.kind == T_COMMA) { advance(p); continue; }
    if (p->tok.kind != T_RPAREN) { free(k.v); return unexpected(p); }
  }
  n->ival = p->tok.end;
  advance(p);
  if (p->tok.kind == T_ASSIGN) {   /* one-line: the body returns the expression */
    int32_t at = p->tok.start;
    advance(p);
    node *e = parse_expr(p, 0);
    node *body = e ? new_node(p, N_RETURN, at, e->end) : NULL;
    if (body) {
      kids kk = {0};
      kids_push(&kk, e);
      if (!set_kids(p, body, &kk)) body = NULL;
    }
    if (!body) { free(k.v); return NULL; }
    kids_push(&k, body);
    n->end = body->end;
    return set_kids(p, n, &k) ? n : NULL;
  }
  if (!at_end(p)) { free(k.v); return unexpected(p); }
  *opened = frame_open(p, n, &opener, &k);
  return *opened ? n : NULL;
}

/* if C then, while C do, for NAME in EXPR do: the header; the block is opened. */
static node *parse_header(parser *p, bool *opened) {
  token opener = p->tok;
  node_kind kind = opener.kw == KW_IF ? N_IF : opener.kw == KW_WHILE ? N_WHILE : N_FOR;
  node *n = new_node(p, kind, opener.start, opener.end);
  if (!n) return NULL;
  advance(p);
  if (kind == N_FOR && (!(n->str = bound_name(p, "a loop variable name")) || !expect_kw(p, KW_IN))) return NULL;
  node *c = parse_expr(p, 0);
  if (!c || !expect_kw(p, kind == N_IF ? KW_THEN : KW_DO)) return NULL;
  kids k = {0};
  kids_push(&k, c);
  *opened = frame_open(p, n, &opener, &k);
  return *opened ? n : NULL;
}

/* x = e, x[i] = e, x += e, x[i] += e */
static node *parse_assign(parser *p, node *e) {
  token t = p->tok;
  if (e->kind == N_CALL && e->ostart > 0 && p->lx.src[e->ostart - 1] == '.')   /* x.shape = ... */
    return fail_at(p, e->ostart, e->oend, "%s", "attributes are read-only (use reshape, transpose or a cast to change them)");
  if (e->kind != N_NAME && !(e->kind == N_INDEX && e->kids[0]->kind == N_NAME))
    return fail_at(p, t.start, t.end, "%s", "only a name or name[index] can be assigned to");
  int op = -1;
  if (t.kind == T_OPASSIGN) {
    token o = t;   /* the operator alone, without its '=' */
    o.kind = T_OP;
    o.end--;
    token keep = p->tok;
    p->tok = o;
    op = find_op(p, false);
    p->tok = keep;
  }
  advance(p);
  node *v = parse_expr(p, 0);
  return v ? pair_node(p, N_ASSIGN, e, v, &t, op) : NULL;
}

/* One statement at the current token: a whole one, or the header of a
 * block statement, whose block is then open (*opened). */
static node *parse_item(parser *p, bool *opened) {
  token t = p->tok;
  *opened = false;
  p->depth = 0;
  if (t.kind == T_KW) {
    if (t.kw == KW_DEF) return parse_def(p, opened);
    if (t.kw == KW_IF || t.kw == KW_WHILE || t.kw == KW_FOR) return parse_header(p, opened);
    if (t.kw == KW_BREAK || t.kw == KW_CONTINUE) {
      bool brk = t.kw == KW_BREAK;
      if (p->loops == 0)
        return fail_at(p, t.start, t.end, "%s", brk ? "break outside a loop" : "continue outside a loop");
      node *n = new_node(p, brk ? N_BREAK : N_CONTINUE, t.start, t.end);
      advance(p);
      return n;
    }
    if (t.kw == KW_RETURN) {
      if (!p->in_def) return fail_at(p, t.start, t.end, "%s", "return outside a function");
      node *n = new_node(p, N_RETURN, t.start, t.end);
      if (!n) return NULL;
      advance(p);
      kids k = {0};
      if (!stmt_end(p)) {
        node *v = parse_expr(p, 0);
        if (!v) return NULL;
        kids_push(&k, v);
      }
      if (!set_kids(p, n, &k)) return NULL;
      if (n->nkids) n->end = n->kids[0]->end;
      return n;
    }
  }
  node *e = parse_expr(p, 0);
  if (e && (p->tok.kind == T_ASSIGN || p->tok.kind == T_OPASSIGN)) e = parse_assign(p, e);
  return e;
}

/* A statement st of the innermost block has been read (NULL: it failed).
 * It must end there; a failed one is skipped to its end, which is a
 * separator or the word that ends or divides the block (at bracket depth
 * 0), so that the block is read on to its 'end'. */
static void block_item(parser *p, node *st) {
  if (st && !stmt_end(p)) st = unexpected(p);
  if (st) {
    struct frame *f = top(p);
    if (f->n) kids_push(&f->body, st);
    return;
  }
  while (!at_end(p) && !(p->lx.depth == 0 && frame_stop(p))) advance(p);
}

/* Reads until the top-level statement is complete. NULL on an error at
 * top level; *eof when the text ended inside a block (the frames are
 * kept). */
static node *parse_top(parser *p, bool *eof) {
  *eof = false;
  for (;;) {
    if (p->nframes > 0) {
      while (p->tok.kind == T_NEWLINE || p->tok.kind == T_SEMI) advance(p);
      if (p->tok.kind == T_EOF) {
        *eof = true;
        return NULL;
      }
      if (frame_stop(p)) {
        if (!is_kw(p, KW_END)) {
          frame_divide(p);
          continue;
        }
        node *n = frame_end(p);
        if (p->nframes == 0) return n;
        block_item(p, n);
        continue;
      }
      /* while checking, nothing is kept: each statement's nodes go */
      if (p->resumable) arena_reset(p->ar);
    }
    bool opened;
    node *st = parse_item(p, &opened);
    if (opened) continue;
    if (p->nframes == 0) return st;
    block_item(p, st);
  }
}

static parse_status statement(parser *p, node **out);

/* A parser that is not resumable keeps nothing outside its arena between
 * statements: its callers need not free it. */
parse_status parse_statement(parser *p, node **out) {
  parse_status st = statement(p, out);
  if (!p->resumable && p->nframes == 0) parser_free(p);
  return st;
}

static parse_status statement(parser *p, node **out) {
  *out = NULL;
  if (p->nframes == 0) {
    p->depth = 0;
    p->loops = 0;
    p->in_def = false;
    /* The previous statement's nodes are dead: a chunk of a million
     * statements parses in the memory of one. */
    arena_reset(p->ar);
    if (p->tok.kind == T_EOF) return PARSE_END;
    if (p->tok.kind == T_NEWLINE || p->tok.kind == T_SEMI) { advance(p); return PARSE_EMPTY; }
  }
  bool eof;
  node *e = parse_top(p, &eof);
  if (eof) {
    if (p->resumable) return PARSE_INCOMPLETE;
    /* the bracket or block left open is the error to see, rather than one
       inside it: it is why the lines after it did not run */
    const token *o = &top(p)->opener;
    int len = o->end - o->start;
    char msg[96];
    snprintf(msg, sizeof msg, "'%.*s' is never closed (no matching 'end')", len > 16 ? 16 : len, p->lx.src + o->start);
    tc_err_clear(p->err);
    if (p->lx.depth > 0) bracket_open(p);
    else fail_at(p, o->start, o->end, "%s", msg);
    frames_drop(p);
    return PARSE_INCOMPLETE;
  }
  if (e && !at_end(p)) e = unexpected(p);
  /* an error inside a block fails the whole statement */
  if (p->err->code != TC_OK) e = NULL;
  if (!e) {
    frames_drop(p);
    if (p->tok.kind == T_EOF && p->lx.depth > 0) return PARSE_INCOMPLETE;
    return PARSE_ERROR;
  }
  if (p->tok.kind != T_EOF) advance(p);
  *out = e == &not_kept ? NULL : e;
  return PARSE_OK;
}

void parser_resume(parser *p, const char *src, int32_t len) {
  p->lx.src = src;
  p->lx.len = len;
  p->lx.pos = p->tok.start;
  advance(p);
}

void parser_free(parser *p) {
  frames_drop(p);
  free(p->frames);
  p->frames = NULL;
  p->fcap = 0;
}

node *parse_def_at(const char *src, int32_t len, int32_t pos, arena *ar, tc_err *err) {
  parser p;
  parser_init(&p, src, len, ar, err);
  p.lx.pos = pos;
  p.lx.depth = 0;
  advance(&p);
  node *n = NULL;
  if (parse_statement(&p, &n) != PARSE_OK) n = NULL;
  parser_free(&p);
  return n;
}

/* ---- the line reader's look at a line ---- */
void block_scan_line(block_scan *b, const char *line, int32_t n) {
  lexer lx;
  lex_init(&lx, line, n);
  lx.depth = b->brackets;
  lx.kinds_only = true;   /* brackets and keywords are all it looks for */
  for (token t; (t = lex_next(&lx)).kind != T_EOF;)
    b->openers |= t.kind == T_KW && (t.kw == KW_DEF || t.kw == KW_IF || t.kw == KW_WHILE || t.kw == KW_FOR);
  b->brackets = lx.depth;
}

void parser_skip(parser *p) {
  while (!at_end(p)) advance(p);
  if (p->tok.kind != T_EOF) advance(p);
  p->lx.depth = 0;
}
