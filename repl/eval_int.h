/* Internals shared by the evaluator's files: the evaluation context,
 * bound call arguments, and helpers that read arguments with errors that
 * point at the argument in the source. Function families that need their
 * own argument handling (indexing, files, ...) live in repl/fn_*.c and are
 * reached from call_op() in eval.c by their op kind. */
#ifndef TC_EVAL_INT_H
#define TC_EVAL_INT_H
#include "eval.h"

#define MAX_PARAMS 8
typedef struct sig {
  int n;
  char names[MAX_PARAMS][24];
  char defs[MAX_PARAMS][24];   /* "" = required; "all" = absent (V_NONE) */
} sig;

typedef struct ctx { session *s; tc_err *err; } ctx;

typedef struct args {
  int n;
  value v[MAX_PARAMS];           /* V_NONE for an absent optional ("all") */
  node *at[MAX_PARAMS];          /* the argument's node, for error carets */
  const sig *g;
} args;

int eval(ctx *c, node *n, value *out);
int eval_tensor(ctx *c, node *n, tc_tensor **out);
/* Sets an error of the given code at node n (if none is set yet); returns -1. */
int fail_node(ctx *c, const node *n, tc_code code, const char *fmt, const char *arg);
/* Points an error from the core at n's operator or function name. */
void locate(ctx *c, const node *n);
int set_tensor(value *out, tc_tensor *t);   /* -1 when t is NULL */

int arg_tensor(ctx *c, args *a, int i, tc_tensor **out);
int arg_string(ctx *c, args *a, int i, const char **out);
int arg_ints(ctx *c, args *a, int i, int64_t *vals, int *n, int max);  /* int scalar or 1-D list */
int arg_bool(ctx *c, args *a, int i, bool *out);
int arg_axes(ctx *c, args *a, int i, tc_axes *ax);
int arg_dtype(ctx *c, args *a, int i, tc_dtype *out);

/* Indexing, shape ops, constructors and files (fn_index.c). */
int eval_index(ctx *c, node *n, value *out);                          /* x[...] */
int eval_index_assign(ctx *c, node *target, node *val);               /* name[...] = val */
int call_family(ctx *c, tc_op op, args *a, value *out);               /* SHAPE, INDEX, CTOR, IO kinds */
/* Function families in their own files (repl/fn_*.c). */
int call_matmul(ctx *c, tc_op op, args *a, value *out);   /* TC_KIND_MATMUL */
#endif
