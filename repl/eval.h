/* The evaluator: values, variables, weak literals, and calls dispatched
 * through the op table. */
#ifndef TC_EVAL_H
#define TC_EVAL_H
#include "ast.h"

typedef enum { V_NONE, V_TENSOR, V_STR, V_PLOT } vkind;
struct tc_plot;
typedef struct value { vkind kind; tc_tensor *t; char *s; struct tc_plot *plot; } value;   /* plot: src/plot.h */
void value_free(value *v);

/* A user function (SPEC 10): its own copy of its source (from the start
 * of the line of its def, so positions in it are lines and columns of the
 * file), parsed into its own arena. */
typedef struct ufunc {
  char *name;
  char *text;
  int32_t len;
  int line0;                   /* the line of text's first byte */
  char *label;                 /* the source it came from ("<stdin>", a path), or NULL */
  arena ar;
  node *def;                   /* N_DEF */
  char *sig;                   /* "f(x, y=1)" */
  char *doc;                   /* the comment lines directly above the def, or NULL */
  void *bound_sig;             /* its signature for the binder (a sig, eval_int.h), made at the first call */
} ufunc;

/* A name: a tensor, or (top level only) a user function. */
typedef struct var { char *name; tc_tensor *t; ufunc *fn; } var;

/* A call of a user function: its locals. */
typedef struct frame { ufunc *fn; var *locals; int n, cap; } frame;

/* One entry of an error's trace: the function the error happened in (or
 * passed through) and where the call that entered it is; repeat: how many
 * times over (recursion that made the same call again). */
typedef struct trace_entry { char fn[64]; int line, col, repeat; } trace_entry;

typedef struct session {
  var *vars;
  int nvars, cap;
  frame frames[TC_MAX_CALL_DEPTH];
  int nframes;
  /* the top-level text being run: defs copy their source from it */
  const char *src;
  int32_t src_len;
  int line0;
  const char *label;
  const char *doc;             /* comment lines just before the statement, or NULL */
  /* where the last error happened: NULL (the statement) or in a function's text */
  ufunc *err_fn;
  bool err_claimed;
  trace_entry trace[TC_MAX_CALL_DEPTH];
  int ntrace;
  /* print(): writes a value as a top-level result would be; more: another
   * item of the same print follows (text mode: on the same line); v NULL:
   * print() of nothing */
  void (*emit)(void *ud, value *v, bool more);
  void *emit_ud;
  const char *stack_top;       /* for the C stack guard of deep calls */
  /* output options */
  bool json, full, color;
  int precision;               /* 0: shortest round-trip */
  uint64_t seed_counter;       /* seeds rand() & co. when no seed= is given */
} session;

void session_init(session *s);
void session_free(session *s);
tc_tensor *session_get(session *s, const char *name);
int session_set(session *s, const char *name, tc_tensor *t, tc_err *err);  /* takes a reference */
/* Binds name to t (its reference taken) in a list of *n variables (of
 * *cap): replaced where it is, else appended. The session's variables
 * and a call's locals. */
int vars_set(var **vars, int *n, int *cap, const char *name, tc_tensor *t, tc_err *err);
/* session_set for a name given outside a script (--arg): fails with
 * bad_argument for a name an assignment would refuse; takes t either way. */
int session_bind(session *s, const char *name, tc_tensor *t, tc_err *err);
void session_clear(session *s, const char *name);                          /* NULL: all */
ufunc *session_fn(session *s, const char *name);
/* Line and column (1-based, in characters) of byte off of a text whose
 * first byte is on line line0. */
void text_linecol(const char *src, int32_t off, int line0, int *line, int *col);

/* Evaluates a statement; for an expression statement *out holds the value
 * to print, for an assignment out->kind is V_NONE. Returns 0 or -1 with err
 * set (its span pointing into the statement's source). */
int eval_statement(session *s, node *stmt, value *out, tc_err *err);

/* ---- the function registry the evaluator dispatches through ---- */
/* Every callable name: ops, aliases and the dtype shorthands, in :help order. */
typedef struct fn_entry { const char *name; int op; int dtype; } fn_entry;  /* op -1: dtype cast */
int fn_count(void);
const fn_entry *fn_get(int i);
const fn_entry *fn_find(const char *name);
#endif
