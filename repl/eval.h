/* The evaluator: values, variables, weak literals, and calls dispatched
 * through the op table. */
#ifndef TC_EVAL_H
#define TC_EVAL_H
#include "ast.h"

typedef enum { V_NONE, V_TENSOR, V_STR } vkind;
typedef struct value { vkind kind; tc_tensor *t; char *s; } value;
void value_free(value *v);

typedef struct var { char *name; tc_tensor *t; } var;

typedef struct session {
  var *vars;
  int nvars, cap;
  /* output options */
  bool json, full, color;
  int precision;               /* 0: shortest round-trip */
  uint64_t seed_counter;       /* seeds rand() & co. when no seed= is given */
} session;

void session_init(session *s);
void session_free(session *s);
tc_tensor *session_get(session *s, const char *name);
int session_set(session *s, const char *name, tc_tensor *t, tc_err *err);  /* takes a reference */
void session_clear(session *s, const char *name);                          /* NULL: all */

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
