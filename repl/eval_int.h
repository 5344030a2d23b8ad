/* Internals shared by the evaluator's files: the evaluation context,
 * bound call arguments, and helpers that read arguments with errors that
 * point at the argument in the source. Function families that need their
 * their own calls (indexing, files, ...) live in repl/fn_*.c and are
 * reached from call_op() in eval.c by their op family. */
#ifndef TC_EVAL_INT_H
#define TC_EVAL_INT_H
#include "eval.h"

#define MAX_PARAMS 12   /* of a built-in; a user function has at most 8 (the parser's MAX_USER_PARAMS) */
#define MAX_REST 64
/* Parameter types of the op table's signatures (repl/bind.c). */
typedef enum {
  P_TENSOR, P_OPT, P_AXES, P_INT, P_INTS, P_SHAPE, P_BOOL, P_NUM, P_DTYPE, P_STR, P_MODE, P_REDUCE, P_SEED,
  P_TENSORS, P_ANY, P_REST, P_KWARGS
} ptype;

typedef struct sig {
  int n;
  bool bad_type;               /* a type name the binder does not know */
  char names[MAX_PARAMS][24];
  char defs[MAX_PARAMS][24];   /* "" = required; "none" or "all" = absent */
  ptype types[MAX_PARAMS];
} sig;

typedef struct ctx {
  session *s;
  tc_err *err;
  value ret;                   /* what a return statement gave */
  bool exact_list;             /* the list about to be evaluated has a dtype applied: f64([0.1]) */
} ctx;

#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)

/* One bound argument, converted to its parameter's type. */
typedef struct barg {
  bool given;                  /* false: an optional left out (or none) */
  tc_tensor *t;                /* TENSOR, OPT (NULL when absent); owned by args.v */
  int64_t i;                   /* INT */
  double f;                    /* NUM */
  bool b;                      /* BOOL */
  int dt;                      /* DTYPE: -1 when absent */
  int mode;                    /* MODE (tc_index_mode), REDUCE (tc_scatter_red) */
  const char *s;               /* STR */
  union {                      /* a parameter has one type: a call's frame holds MAX_PARAMS of these */
    tc_axes axes;              /* AXES: all when absent */
    struct {
      int n;                   /* INTS, SHAPE: the count (-1 when absent) */
      int64_t ints[TC_MAX_DIMS];
    };
  };
  uint64_t seed;               /* SEED: the session's next when absent */
  int nts;                     /* TENSORS, REST, KWARGS */
  tc_tensor **ts;
  const char *const *names;    /* KWARGS: the keyword of each of ts */
} barg;

typedef struct args {
  int n;
  value v[MAX_PARAMS];           /* V_NONE for an absent optional */
  node *at[MAX_PARAMS];          /* the argument's node, for error carets */
  barg b[MAX_PARAMS];            /* the converted arguments */
  const sig *g;
  int nrest;                     /* a "*name:rest" parameter's arguments: */
  node *rest[MAX_REST];          /* every positional argument from its place on; */
  const char *restname[MAX_REST];   /* or a "**name:kwargs" one's: every keyword argument
                                       that names no other parameter, and its keyword */
} args;

/* Binds call's arguments to op's signature (evaluating them), then
 * converts each to its parameter's type (repl/bind.c). */
const sig *get_sig(tc_op op);
int bind_args(ctx *c, node *call, tc_op op, args *a);
int convert_args(ctx *c, args *a);
void args_free(args *a);

/* Binds a user function's call to its signature (P_ANY parameters, a
 * default "=" evaluated by the caller): given[i] says which were passed. */
int bind_user(ctx *c, node *call, const sig *g, const char *sigtext, args *a, bool *given);

/* The interpreter (interp.c): names in the current scope, statements of
 * blocks, user functions and print(). */
tc_tensor *scope_get(ctx *c, const char *name, bool *is_fn);
tc_tensor *scope_lookup(ctx *c, const char *name, int *slot, bool *is_fn);   /* slot: a hint kept in the node */
int scope_set(ctx *c, const char *name, tc_tensor *t);   /* takes the reference */
int exec_statement(ctx *c, node *n);                      /* a statement whose value is not printed */
int call_user(ctx *c, ufunc *u, node *call, value *out);
int call_print(ctx *c, node *call);
int define_function(ctx *c, node *def);
void session_free_fn(ufunc *u);

int eval(ctx *c, node *n, value *out);
int eval_tensor(ctx *c, node *n, tc_tensor **out);
/* eval_tensor for an operand of an operator, where a literal above the
 * i64 maximum is a weak u64. */
int eval_operand(ctx *c, node *n, tc_tensor **out);
/* Sets an error of the given code at node n (if none is set yet); returns -1. */
int fail_node(ctx *c, const node *n, tc_code code, const char *fmt, const char *arg);
/* Points an error from the core at n's operator or function name. */
void locate(ctx *c, const node *n);
/* The op that operator op of node n means under the semantics in force
 * (tc_operator_op); -1 with the error at n's operator. */
int operator_op(ctx *c, const node *n, int op, tc_op *out);
int set_tensor(value *out, tc_tensor *t);   /* -1 when t is NULL */

/* Subscripts (fn_index.c). */
int eval_index(ctx *c, node *n, value *out);                          /* x[...] */
int eval_index_assign(ctx *c, node *target, node *val);               /* name[...] = val */
/* name[i, ...] OP= val (n) with integer items and a plain value, in place
 * where the element is (tc_update_element): 0, -1, or 1 when it is the
 * general path's case (nothing evaluated that has an effect). */
int eval_index_update(ctx *c, node *n, node *target, node *val);

/* The built-ins' calls (calls.c). call_row: false when op has no TC_CALLS
 * row (src/ops.def); else true, and *rc is the call's outcome. */
bool call_row(ctx *c, tc_op op, const barg *b, value *out, int *rc);
/* The arguments of op's TC_CALLS row, for tests: their count (-1: no row),
 * the first cap of them in out. */
typedef enum {
  CALL_ARG_OP, CALL_ARG_K, CALL_ARG_T, CALL_ARG_INT, CALL_ARG_GIVEN, CALL_ARG_NUM, CALL_ARG_BOOL, CALL_ARG_STR,
  CALL_ARG_AXES, CALL_ARG_DT, CALL_ARG_MODE, CALL_ARG_RED, CALL_ARG_SEED, CALL_ARG_INTS, CALL_ARG_TS, CALL_ARG_KW
} call_arg_kind;
typedef struct call_arg { call_arg_kind kind; int param; } call_arg;
int call_row_args(tc_op op, call_arg *out, int cap);
int call_special(ctx *c, tc_op op, args *a, value *out);   /* eye, load, from_json, searchsorted */
/* Function families in their own files (repl/fn_*.c). */
int call_matmul(ctx *c, tc_op op, args *a, value *out);   /* TC_FAM_MATMUL */
int call_linalg(ctx *c, tc_op op, args *a, value *out);   /* TC_FAM_LINALG (fn_linalg.c) */
int call_plot(ctx *c, tc_op op, args *a, value *out);     /* TC_FAM_PLOT (fn_plot.c) */
#endif
