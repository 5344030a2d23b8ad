/* Other systems' semantics (SPEC 19): which one is in force and, for each,
 * its row of parameters (rows below) and its typing tables (semantics.def,
 * generated): what an operator means, how literals and tensors promote,
 * integer division's zero divisors and MIN / -1, floats' // and %, bools,
 * powers, reductions, indexing out of range, NumPy's RuntimeWarnings.
 * The kernels are tcalc's; a semantics chooses among them. What is not
 * done is in the man page's SEMANTICS OF OTHER SYSTEMS. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

static tc_semantics semantics = TC_SEM_TCALC;
static const char *const sem_names[TC_SEM_COUNT] = {"tcalc", "numpy", "jax", "torch", "tenferro"};

void tc_set_semantics(tc_semantics s) {
  if (s != semantics) tc_scalar_memo_clear();   /* the short path's typing depends on it */
  semantics = s;
}
tc_semantics tc_get_semantics(void) { return semantics; }

/* The scalar path's remembered typings carry the semantics they were made
 * under (api.c), so a suspension needs no clearing. */
tc_semantics tc_semantics_suspend(void) {
  tc_semantics s = semantics;
  semantics = TC_SEM_TCALC;
  return s;
}
void tc_semantics_resume(tc_semantics s) { semantics = s; }
const char *tc_semantics_name(tc_semantics s) { return (unsigned)s < TC_SEM_COUNT ? sem_names[s] : "?"; }

int tc_semantics_from_name(const char *s) {
  for (int i = 0; i < TC_SEM_COUNT; i++)
    if (!strcmp(s, sem_names[i])) return i;
  return -1;
}

/* What each system decides, as data: one row per system. */
typedef enum { SUM_OWN, SUM_WIDE, SUM_I64 } sum_rule;        /* integer sums: the input's dtype; i64 or u64; i64 */
typedef enum { ZERO_ERROR, ZERO_ZERO, ZERO_XLA } zero_rule;   /* an integer zero divisor: division_by_zero; 0; XLA's */
typedef enum { MIN_WRAPS, MIN_WARNS, MIN_STOPS } min_rule;    /* MIN / -1 wraps; and NumPy warns; PyTorch stops */
typedef enum { FDIV_OWN, FDIV_NUMPY, FDIV_TORCH, FDIV_JAX } fdiv_rule;   /* float // and %: tcalc's; npy_divmod; div_floor; jnp's */
typedef enum { POW_OWN, POW_C10, POW_JAX } pow_rule;   /* integer powers: tcalc's; PyTorch's powi; jnp's 6 steps */
/* two bools: none; + or, * and, - refused, and // % ** in i8 (NumPy) or i64 (JAX's promote_args_numeric); PyTorch's */
typedef enum { BOOLS_NONE, BOOLS_I8, BOOLS_I64, BOOLS_OR_AND } bool_rule;
static const struct {
  tc_dtype float_dt;           /* the default float */
  tc_sem_index index;          /* x[i] and x[i] = v out of range (item 7) */
  const char *take_mode, *scatter_mode, *scatter_reduce;   /* those functions' defaults */
  bool true_div, divisor_mod;  /* integer / is true division; % has the divisor's sign (MOD) */
  bool floor_div;              /* has // */
  sum_rule sum;
  bool int_mean, int_matmul;   /* has the mean of integers; integer matmul */
  zero_rule zero;
  min_rule min_div;
  fdiv_rule fdiv;
  bool_rule bools;
  pow_rule pow;
  bool warns;                  /* NumPy's RuntimeWarnings, and NumPy 2's exact comparison with a literal out of range */
  bool c10;                    /* PyTorch's scalars: literals wrap, after c10's check where it makes one; powi */
  bool rdiv_reciprocal;        /* a literal over a tensor is reciprocal(b) * a */
  bool half_mean_of_sum;       /* the mean of f16 / bf16 is its rounded sum, divided */
  bool matmul_same_dtype;      /* matmul neither promotes nor takes bool */
  bool scale_real;             /* a float literal meeting an integer tensor takes its dtype, rounded (tenferro) */
} rows[TC_SEM_COUNT] = {
  [TC_SEM_TCALC] = {TC_DT_F64, TC_SEM_INDEX_ERROR, "error", "error", "set", false, false, true, SUM_OWN, true, true,
                    ZERO_ERROR, MIN_WRAPS, FDIV_OWN, BOOLS_NONE, POW_OWN, false, false, false, false, false, false},
  [TC_SEM_NUMPY] = {TC_DT_F64, TC_SEM_INDEX_ERROR, "error", "error", "set", true, true, true, SUM_WIDE, true, true,
                    ZERO_ZERO, MIN_WARNS, FDIV_NUMPY, BOOLS_I8, POW_OWN, true, false, false, false, false, false},
  [TC_SEM_JAX] = {TC_DT_F64, TC_SEM_INDEX_JAX, "fill", "drop", "set", true, true, true, SUM_WIDE, true, true,
                  ZERO_XLA, MIN_WRAPS, FDIV_JAX, BOOLS_I64, POW_JAX, false, false, false, false, false, false},
  [TC_SEM_TORCH] = {TC_DT_F32, TC_SEM_INDEX_ERROR, "error", "error", "set", true, true, true, SUM_I64, false, true,
                    ZERO_ERROR, MIN_STOPS, FDIV_TORCH, BOOLS_OR_AND, POW_C10, false, true, true, true, true, false},
  [TC_SEM_TENFERRO] = {TC_DT_F64, TC_SEM_INDEX_CLAMP, "clip", "clip", "add", false, false, false, SUM_OWN, true, false,
                       ZERO_ERROR, MIN_WRAPS, FDIV_OWN, BOOLS_NONE, POW_OWN, false, false, false, false, false, true},
};
#define R (rows[semantics])

tc_dtype tc_default_float(void) { return rows[semantics].float_dt; }
tc_sem_index tc_semantics_index(void) { return rows[semantics].index; }

const char *tc_semantics_default(tc_op op, const char *param, const char *def) {
  if (!strcmp(param, "dtype") && !strcmp(def, "f64")) return tc_dtype_name(rows[semantics].float_dt);
  if (!strcmp(param, "mode") && !strcmp(def, "error"))
    return op == TC_OP_SCATTER ? rows[semantics].scatter_mode : rows[semantics].take_mode;
  if (!strcmp(param, "reduce") && !strcmp(def, "set")) return rows[semantics].scatter_reduce;
  return def;
}

/* ---- typing (items 1 and 2): the tables scripts/gen-semantics-tables.py
 * generated from NumPy, PyTorch and JAX's lattice ---- */
#include "semantics.def"
static const tc_dtype promote[TC_SEM_COUNT][TC_DT_COUNT][TC_DT_COUNT] = {
#define X(S, A, ...) [TC_SEM_##S][TC_DT_##A] = {__VA_ARGS__},
  TC_SEM_PROMOTE(X)
#undef X
};
static const tc_dtype zero_dim[TC_SEM_COUNT][TC_DT_COUNT][TC_DT_COUNT] = {
#define X(S, A, ...) [TC_SEM_##S][TC_DT_##A] = {__VA_ARGS__},
  TC_SEM_ZERO_DIM(X)
#undef X
};
enum { W_INT, W_FLOAT };
static const tc_dtype weak_with[TC_SEM_COUNT][2][TC_DT_COUNT] = {
#define X(S, K, ...) [TC_SEM_##S][W_##K] = {__VA_ARGS__},
  TC_SEM_WEAK(X)
#undef X
};

bool tc_semantics_has(tc_dtype dt) {
  return semantics == TC_SEM_TCALC || promote[semantics][dt][dt] != TC_DT_NONE;
}

int tc_semantics_lacks(tc_dtype dt, int op, tc_err *err) {
  if (tc_semantics_has(dt)) return 0;
  return tc_err_set(err, TC_E_DTYPE, op, (int)dt, "%s has no %s dtype", sem_names[semantics], tc_dtype_name(dt));
}

int tc_semantics_typing(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype *out, bool *check_literal, tc_err *err) {
  for (int k = 0; k < 2; k++) {   /* a comparison's bools are every system's (tenferro has no bool dtype to make) */
    tc_tensor *t = k ? b : a;
    bool mask = t->dtype == TC_DT_BOOL && tc_op_rule(op) == TC_RULE_TOBOOL;
    if (!t->weak && !mask && tc_semantics_lacks(t->dtype, (int)op, err) != 0) return -1;
  }
  if (a->weak && b->weak) return 1;   /* two Python scalars: a float if either is one, as tcalc's */
  if (!a->weak && !b->weak) {
    /* PyTorch: a 0-d tensor does not widen a dimensioned one of its kind (the table says how it combines) */
    bool za = a->ndim == 0, zb = b->ndim == 0;
    *out = za == zb ? promote[semantics][a->dtype][b->dtype]
                    : za ? zero_dim[semantics][b->dtype][a->dtype] : zero_dim[semantics][a->dtype][b->dtype];
    return 0;
  }
  tc_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
  if (w->dtype == TC_DT_U64) return 1;   /* a literal above the i64 maximum: tcalc's rule (u64 only) */
  *out = weak_with[semantics][tc_dtype_class(w->dtype) == TC_CLASS_FLT ? W_FLOAT : W_INT][s->dtype];
  /* an integer literal must fit the integer dtype it takes, except in torch, which wraps it (pow's exponent
     is checked by torch_pow) */
  *check_literal = !R.c10 && tc_dtype_class(w->dtype) != TC_CLASS_FLT &&
                   tc_dtype_class(*out) == TC_CLASS_INT &&
                   tc_dtype_class(tc_op_kernel_dtype(op, *out)) == TC_CLASS_INT;   /* u8 / 70000 divides in floats */
  return 0;
}

tc_dtype tc_sum_dtype(tc_dtype dt) {
  tc_class c = tc_dtype_class(dt);
  if (c == TC_CLASS_BOOL) return TC_DT_I64;
  if (c != TC_CLASS_INT) return dt;
  switch (R.sum) {   /* NumPy's and JAX's int_/uint accumulators; PyTorch's i64 */
  case SUM_WIDE: return tc_dtype_is_unsigned(dt) ? TC_DT_U64 : TC_DT_I64;
  case SUM_I64: return TC_DT_I64;
  default: return dt;
  }
}

bool tc_semantics_mean_of_sum(tc_dtype dt) {   /* PyTorch's f16 and bf16 means */
  return R.half_mean_of_sum && tc_dtype_class(dt) == TC_CLASS_FLT && tc_dtype_bits(dt) == 16;
}

int tc_semantics_matmul(tc_tensor *a, tc_tensor *b, tc_err *err) {
  if (!R.matmul_same_dtype) return 0;   /* PyTorch's matmul neither promotes nor has a bool kernel */
  if (a->dtype != b->dtype)
    return tc_err_set(err, TC_E_DTYPE, TC_OP_MATMUL, (int)a->dtype, "%s's matmul needs one dtype, not %s and %s (cast one)",
                      sem_names[semantics], tc_dtype_name(a->dtype), tc_dtype_name(b->dtype));
  if (a->dtype == TC_DT_BOOL)
    return tc_err_set(err, TC_E_DTYPE, TC_OP_MATMUL, TC_DT_BOOL, "%s has no matmul of bool", sem_names[semantics]);
  return 0;
}

int tc_semantics_refuses(tc_op op, tc_dtype dt, tc_err *err) {
  tc_class c = tc_dtype_class(dt);
  if (!R.int_mean && op == TC_OP_MEAN && c != TC_CLASS_FLT)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "%s has no mean of %s (cast to a float first)", sem_names[semantics],
                      tc_dtype_name(dt));
  if (!R.int_matmul && op == TC_OP_MATMUL && c != TC_CLASS_FLT)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "%s has no matmul of %s", sem_names[semantics], tc_dtype_name(dt));
  return 0;
}

int tc_operator_op(tc_op op, tc_op *out, tc_err *err) {
  *out = op;
  if (op == TC_OP_DIV && R.true_div) *out = TC_OP_TRUE_DIV;   /* true division to the default float */
  if (op == TC_OP_REM && R.divisor_mod) *out = TC_OP_MOD;     /* % has the divisor's sign */
  if (op == TC_OP_FLOOR_DIV && !R.floor_div)
    return tc_err_set(err, TC_E_OP_UNSUPPORTED, (int)op, -1, "%s has no // operator (its / truncates: use /)",
                      sem_names[semantics]);
  return 0;
}

/* ---- warnings ---- */
#define MAX_WARNINGS 8
static char warnings[MAX_WARNINGS][96];
static int nwarnings;

int tc_warning_count(void) { return nwarnings; }
const char *tc_warning(int i) { return i >= 0 && i < nwarnings ? warnings[i] : ""; }
void tc_warnings_clear(void) { nwarnings = 0; }

static void warn_text(const char *w) {
  for (int i = 0; i < nwarnings; i++)
    if (!strcmp(warnings[i], w)) return;
  if (nwarnings < MAX_WARNINGS) snprintf(warnings[nwarnings++], sizeof warnings[0], "%s", w);
}

static void warn(const char *what, tc_op op) {
  static const struct { tc_op op; const char *ufunc; } names[] = {
    {TC_OP_FLOOR_DIV, "floor_divide"}, {TC_OP_MOD, "remainder"}, {TC_OP_DIV, "divide"}, {TC_OP_REM, "fmod"},
    {TC_OP_ADD, "add"}, {TC_OP_SUB, "subtract"}, {TC_OP_MUL, "multiply"}, {TC_OP_POW, "power"},
    {TC_OP_CAST, "cast"}, {TC_OP_REDUCE_SUM, "reduce"}};
  const char *u = "divide";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].op == op) u = names[i].ufunc;
  char w[96];
  snprintf(w, sizeof w, "%s encountered in %s", what, u);
  warn_text(w);
}

/* ---- integer division ---- */
/* Owned temporaries, freed together (a function here makes fewer than 192). */
#define POOL 192
typedef struct { tc_tensor *t[POOL]; int n; } pool;
static tc_tensor *keep(pool *p, tc_tensor *t) {
  if (t && p->n == POOL) {   /* cannot happen: fail the computation rather than leak */
    tc_tensor_free(t);
    return NULL;
  }
  if (t) p->t[p->n++] = t;
  return t;
}
static void drain(pool *p) {
  for (int i = 0; i < p->n; i++) tc_tensor_free(p->t[i]);
}
/* A function's answer r, one of the pool's (NULL: it failed, err set), as
 * *out with the typing's weakness, the pool drained: 0 or -1. */
static int deliver(pool *p, tc_tensor *r, bool weak, tc_tensor **out) {
  *out = r ? tc_tensor_ref(r) : NULL;
  if (*out) (*out)->weak = weak;
  drain(p);
  return *out ? 0 : -1;
}

static tc_tensor *bin(pool *p, tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  return a && b ? keep(p, tc_binary_eager(op, a, b, err)) : NULL;
}
static tc_tensor *sel(pool *p, tc_tensor *c, tc_tensor *a, tc_tensor *b, tc_err *err) {
  return c && a && b ? keep(p, tc_where(c, a, b, err)) : NULL;
}
static tc_tensor *lit(pool *p, int64_t v, tc_err *err) { return keep(p, tc_scalar_i64(v, true, err)); }
/* v as a 0-d tensor of dtype dt (a cast, so -1 is all ones whatever the signedness). */
static tc_tensor *typed(pool *p, int64_t v, tc_dtype dt, tc_err *err) {
  tc_tensor *k = keep(p, tc_scalar_i64(v, false, err));
  return k ? keep(p, tc_cast(k, dt, err)) : NULL;
}

/* The row-major position of the first true element of a bool mask, -1 if none. */
static int first_true(pool *p, tc_tensor *mask, int64_t *at, tc_err *err) {
  tc_tensor *not = mask ? keep(p, tc_unary(TC_OP_LOGICAL_NOT, mask, err)) : NULL;
  tc_tensor *ok = not ? keep(p, tc_cast(not, TC_DT_I8, err)) : NULL;   /* FIND reads integers */
  if (!ok) return -1;
  *at = -1;
  if (tc_numel(ok) == 0) return 0;
  tc_call c = {.kind = TC_CALL_FIND, .dtype = TC_DT_I8, .nin = 1, .in = {ok}, .pred = TC_PRED_ZERO, .found = -1};
  if (tc_run_call(&c, err) != 0) return -1;
  *at = c.found;
  return 0;
}

/* PyTorch's CPU kernels stop the process on MIN / -1 (x86's idiv traps):
 * undefined_behavior at m, the first such element in the result's order. */
static int torch_stops(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype dt, int64_t m, tc_err *err) {
  int ndim;
  int64_t shape[TC_MAX_DIMS], idx[TC_MAX_DIMS] = {0};
  if (tc_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &ndim, shape, op, err) != 0) return -1;
  char where[TC_MAX_DIMS * 24 + 16];
  tc_unravel(m, ndim, shape, idx);
  tc_index_text(where, sizeof where, ndim, idx);
  tc_err_set(err, TC_E_UNDEFINED_BEHAVIOR, (int)op, (int)dt,
             "MIN divided by -1%s: PyTorch's CPU kernel stops the whole process with SIGFPE here", where);
  tc_err_set_index(err, ndim, idx);
  return -1;
}

/* The value jax gives where the divisor is zero (XLA: div(x, 0) = -1, rem(x, 0) = x; jnp's // and % from them). */
static tc_tensor *jax_fill(pool *p, tc_op op, tc_tensor *a, tc_dtype dt, tc_err *err) {
  switch (op) {
  case TC_OP_DIV: return typed(p, -1, dt, err);
  case TC_OP_REM: return keep(p, tc_cast(a, dt, err));
  case TC_OP_FLOOR_DIV:   /* -1 - 1 where the signs differ and the remainder (x) is not zero */
    if (tc_dtype_is_unsigned(dt)) return typed(p, -1, dt, err);
    return sel(p, bin(p, TC_OP_EQUAL, a, lit(p, 0, err), err), typed(p, -1, dt, err), typed(p, -2, dt, err), err);
  default: return typed(p, 0, dt, err);
  }
}

/* Integer DIV, REM, FLOOR_DIV and MOD under numpy, jax and torch. */
static int division(tc_op op, tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  pool p = {.n = 0};
  int rc = -1;
  bool sgn = !tc_dtype_is_unsigned(ty->kdt);
  int bits = 8 * (int)tc_dtype_size(ty->kdt);
  /* the operands in the dtype the kernel divides in (a literal as the semantics typed it: torch's wrapped) */
  a = keep(&p, tc_cast(a, ty->kdt, err));
  b = a ? keep(&p, tc_cast(b, ty->kdt, err)) : NULL;
  tc_tensor *zb = bin(&p, TC_OP_EQUAL, b, lit(&p, 0, err), err);   /* in b's shape */
  tc_tensor *zero_at = bin(&p, TC_OP_LOGICAL_AND, zb, bin(&p, TC_OP_EQUAL, a, a, err), err);   /* the result's shape */
  tc_tensor *min_at = NULL;
  if (!zero_at) goto done;
  /* MIN / -1 matters where it stops torch (its 32- and 64-bit kernels: i8 and i16 divide in int and wrap), or
     where NumPy warns of it (its quotients, not its remainders) */
  if (sgn && ((R.min_div == MIN_STOPS && bits >= 32) ||
              (R.min_div == MIN_WARNS && (op == TC_OP_FLOOR_DIV || op == TC_OP_DIV)))) {
    int64_t lo, hi;
    tc_int_range(ty->kdt, &lo, &hi);
    tc_tensor *mn = lit(&p, lo, err);
    min_at = bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_EQUAL, a, mn, err), bin(&p, TC_OP_EQUAL, b, lit(&p, -1, err), err), err);
    if (!min_at) goto done;
  }
  int64_t z = -1, m = -1;
  if (first_true(&p, zero_at, &z, err) != 0 || (min_at && first_true(&p, min_at, &m, err) != 0)) goto done;
  if (R.min_div == MIN_STOPS && m >= 0 && (z < 0 || m < z)) {   /* the first offending element decides */
    rc = torch_stops(op, a, b, ty->kdt, m, err);
    goto done;
  }
  if (z >= 0 && R.warns) warn("divide by zero", op);
  if (m >= 0 && R.warns) warn("overflow", op);
  if (z < 0 || R.zero == ZERO_ERROR)   /* tcalc's values (or division_by_zero) of the operands as typed (wrapped) */
    return deliver(&p, keep(&p, tc_binary_eager(op, a, b, err)), ty->weak, out);
  tc_tensor *one = b ? keep(&p, tc_cast(lit(&p, 1, err), b->dtype, err)) : NULL;
  tc_tensor *b1 = one ? keep(&p, tc_where(zb, one, b, err)) : NULL;   /* zero divisors made 1, then patched */
  if (!b1) goto done;
  b1->weak = b->weak;
  tc_tensor *r = bin(&p, op, a, b1, err);
  tc_tensor *fill = r ? (R.zero == ZERO_XLA ? jax_fill(&p, op, a, r->dtype, err) : typed(&p, 0, r->dtype, err)) : NULL;
  return deliver(&p, sel(&p, zb, fill, r, err), ty->weak, out);
done:
  drain(&p);
  return rc;
}

/* ---- floats: NumPy's and PyTorch's // and %, NumPy's RuntimeWarnings ---- */
static tc_tensor *un(pool *p, tc_op op, tc_tensor *x, tc_err *err) { return x ? keep(p, tc_unary(op, x, err)) : NULL; }
static tc_tensor *flt(pool *p, double v, tc_err *err) { return keep(p, tc_scalar_f64(v, true, err)); }
static tc_tensor *and3(pool *p, tc_tensor *x, tc_tensor *y, tc_tensor *z, tc_err *err) {
  return bin(p, TC_OP_LOGICAL_AND, x, z ? bin(p, TC_OP_LOGICAL_AND, y, z, err) : y, err);
}
static tc_tensor *not_nan(pool *p, tc_tensor *x, tc_err *err) { return bin(p, TC_OP_EQUAL, x, x, err); }

/* The flags an op raised, reported together by flush in NumPy's order. */
enum { F_DIVIDE, F_OVERFLOW, F_INVALID, F_COUNT };
static const char *const flag_names[F_COUNT] = {"divide by zero", "overflow", "invalid value"};
static unsigned raised;

/* NumPy's flag f raised where mask has a true element (-1 when mask could not be made). */
static int flag(pool *p, int f, tc_tensor *mask, tc_err *err) {
  int64_t at = -1;
  if (first_true(p, mask, &at, err) != 0) return -1;
  if (at >= 0) raised |= 1u << f;
  return 0;
}

static void flush(tc_op op) {
  for (int f = 0; f < F_COUNT; f++)
    if (raised & 1u << f) warn(flag_names[f], op);
  raised = 0;
}

/* The IEEE flags of r = x OP y that NumPy reports: an infinity from finite
 * operands (overflow; a zero divisor's or 0 ** -y's is divide by zero
 * instead), a NaN from numbers (invalid value). */
static int ieee_flags(pool *p, tc_op op, tc_tensor *x, tc_tensor *y, tc_tensor *r, tc_err *err) {
  bool pw = op == TC_OP_POW, dv = op == TC_OP_DIV || op == TC_OP_TRUE_DIV;
  tc_tensor *fin = bin(p, TC_OP_LOGICAL_AND, un(p, TC_OP_ISFINITE, x, err), un(p, TC_OP_ISFINITE, y, err), err);
  /* pow(0, -y); pow(0, -inf) too, except in f16 and bf16 (NumPy's half power raises nothing there) */
  tc_tensor *half_ok = pw && tc_dtype_bits(x->dtype) == 16 ? un(p, TC_OP_ISFINITE, y, err) : NULL;
  tc_tensor *pole = pw ? and3(p, bin(p, TC_OP_EQUAL, x, flt(p, 0, err), err), bin(p, TC_OP_LESS, y, flt(p, 0, err), err),
                              half_ok, err)
                  : dv ? bin(p, TC_OP_LOGICAL_AND, bin(p, TC_OP_EQUAL, y, flt(p, 0, err), err),
                         bin(p, TC_OP_LOGICAL_AND, un(p, TC_OP_ISFINITE, x, err), bin(p, TC_OP_NOT_EQUAL, x, flt(p, 0, err), err), err), err)
                       : NULL;
  tc_tensor *inf = bin(p, TC_OP_LOGICAL_AND, un(p, TC_OP_ISINF, r, err), fin, err);
  tc_tensor *over = pole ? bin(p, TC_OP_LOGICAL_AND, inf, un(p, TC_OP_LOGICAL_NOT, pole, err), err) : inf;
  tc_tensor *nan = and3(p, un(p, TC_OP_ISNAN, r, err), not_nan(p, x, err), not_nan(p, y, err), err);
  if (!over || !nan || flag(p, F_OVERFLOW, over, err) || flag(p, F_INVALID, nan, err)) return -1;
  return pole ? flag(p, F_DIVIDE, pole, err) : 0;
}

/* A weak operand cast to a float dtype: NumPy warns where a finite literal becomes an infinity. */
static tc_tensor *float_operand(pool *p, tc_tensor *t, tc_dtype dt, tc_err *err) {
  tc_tensor *c = keep(p, tc_cast(t, dt, err));
  if (c && t->weak && R.warns && tc_dtype_class(t->dtype) != TC_CLASS_BOOL &&
      flag(p, F_OVERFLOW, bin(p, TC_OP_LOGICAL_AND, un(p, TC_OP_ISINF, c, err), un(p, TC_OP_ISFINITE, t, err), err), err))
    return NULL;
  flush(TC_OP_CAST);
  return c;
}

/* copysign(0, v): -0.0 where v is negative or -0.0, else +0.0. */
static tc_tensor *zero_signed(pool *p, tc_tensor *v, tc_err *err) {
  return sel(p, bin(p, TC_OP_LESS, v, flt(p, 0, err), err), flt(p, -0.0, err),
             sel(p, bin(p, TC_OP_EQUAL, v, flt(p, 0, err), err), v, flt(p, 0, err), err), err);
}

/* jnp.floor_divide of floats (its _float_divmod, from JAX's source): div =
 * (y == 0 ? x : x - fmod(x, y)) / y, one less where the remainder is
 * nonzero and its lax.sign differs from y's, rounded half away from zero
 * (lax.round). */
static tc_tensor *jax_floor_div(pool *p, tc_tensor *x, tc_tensor *y, tc_err *err) {
  tc_tensor *mod = bin(p, TC_OP_REM, x, y, err), *zb = bin(p, TC_OP_EQUAL, y, flt(p, 0, err), err);
  tc_tensor *div = bin(p, TC_OP_DIV, sel(p, zb, x, bin(p, TC_OP_SUB, x, mod, err), err), y, err);
  tc_tensor *ind = bin(p, TC_OP_LOGICAL_AND, bin(p, TC_OP_NOT_EQUAL, mod, flt(p, 0, err), err),
                       bin(p, TC_OP_NOT_EQUAL, un(p, TC_OP_SIGN, y, err), un(p, TC_OP_SIGN, mod, err), err), err);
  tc_tensor *d2 = sel(p, ind, bin(p, TC_OP_SUB, div, flt(p, 1, err), err), div, err);
  tc_tensor *t = un(p, TC_OP_TRUNC, d2, err);
  tc_tensor *half = bin(p, TC_OP_GREATER_EQUAL, un(p, TC_OP_ABS, bin(p, TC_OP_SUB, d2, t, err), err), flt(p, 0.5, err), err);
  return sel(p, half, bin(p, TC_OP_ADD, t, un(p, TC_OP_SIGN, d2, err), err), t, err);
}

/* x // y and x % y of floats as NumPy's npy_divmod and PyTorch's
 * div_floor / remainder compute them (NumPy f16 and bf16 in f32): mod =
 * fmod(x, y), div = (x - mod) / y, both moved one step where mod and y
 * differ in sign, div rounded to the nearest integer from its floor (a
 * zero quotient keeps x / y's sign); a zero divisor gives x / y and
 * fmod's NaN. NumPy gives a zero remainder y's sign, PyTorch (and
 * jnp.remainder) fmod's; JAX's // is jax_floor_div. The flags NumPy
 * raises on the way are its warnings. */
static tc_tensor *float_divmod(pool *p, tc_op op, tc_tensor *x, tc_tensor *y, tc_err *err) {
  if (op == TC_OP_FLOOR_DIV && R.fdiv == FDIV_JAX) return jax_floor_div(p, x, y, err);
  tc_tensor *zb = bin(p, TC_OP_EQUAL, y, flt(p, 0, err), err), *nz = un(p, TC_OP_LOGICAL_NOT, zb, err);
  tc_tensor *q = bin(p, TC_OP_DIV, x, y, err), *mod = bin(p, TC_OP_REM, x, y, err);
  tc_tensor *div = bin(p, TC_OP_DIV, bin(p, TC_OP_SUB, x, mod, err), y, err);
  tc_tensor *mneg = bin(p, TC_OP_LESS, mod, flt(p, 0, err), err);
  tc_tensor *fix = bin(p, TC_OP_LOGICAL_AND, bin(p, TC_OP_NOT_EQUAL, mod, flt(p, 0, err), err),
                       bin(p, TC_OP_NOT_EQUAL, bin(p, TC_OP_LESS, y, flt(p, 0, err), err), mneg, err), err);
  tc_tensor *div2 = sel(p, fix, bin(p, TC_OP_SUB, div, flt(p, 1, err), err), div, err);
  tc_tensor *fl = un(p, TC_OP_FLOOR, div2, err);
  tc_tensor *up = bin(p, TC_OP_GREATER, bin(p, TC_OP_SUB, div2, fl, err), flt(p, 0.5, err), err);
  tc_tensor *fl2 = sel(p, up, bin(p, TC_OP_ADD, fl, flt(p, 1, err), err), fl, err);
  tc_tensor *dz = bin(p, TC_OP_EQUAL, div2, flt(p, 0, err), err);
  tc_tensor *res = sel(p, dz, zero_signed(p, q, err), fl2, err);
  tc_tensor *mod2 = sel(p, fix, bin(p, TC_OP_ADD, mod, y, err), mod, err);
  if (R.fdiv == FDIV_NUMPY)   /* a zero remainder has y's sign */
    mod2 = sel(p, bin(p, TC_OP_EQUAL, mod, flt(p, 0, err), err), zero_signed(p, y, err), mod2, err);
  tc_tensor *r = op == TC_OP_FLOOR_DIV ? sel(p, zb, q, res, err) : sel(p, zb, mod, mod2, err);
  if (!r || !R.warns) return r;
  tc_tensor *xnum = not_nan(p, x, err);
  if (op == TC_OP_FLOOR_DIV) {   /* a zero divisor: x / 0's flags, invalid for 0 / 0, divide by zero for a finite x */
    tc_tensor *x0 = bin(p, TC_OP_EQUAL, x, flt(p, 0, err), err);
    if (flag(p, F_INVALID, bin(p, TC_OP_LOGICAL_AND, zb, x0, err), err) ||
        flag(p, F_DIVIDE, and3(p, zb, un(p, TC_OP_LOGICAL_NOT, x0, err), un(p, TC_OP_ISFINITE, x, err), err), err))
      return NULL;
  } else if (flag(p, F_INVALID, bin(p, TC_OP_LOGICAL_AND, zb, xnum, err), err)) {   /* fmod(x, 0) */
    return NULL;
  }
  /* fmod of an infinity; for // also (x - mod) / y out of range, then div - floor(div) of an infinite div
     (NumPy's remainder computes no quotient) */
  tc_tensor *num = bin(p, TC_OP_SUB, x, mod, err);
  tc_tensor *fmod_nan = and3(p, nz, un(p, TC_OP_ISNAN, mod, err), bin(p, TC_OP_LOGICAL_AND, xnum, not_nan(p, y, err), err), err);
  if (op == TC_OP_MOD) return fmod_nan && flag(p, F_INVALID, fmod_nan, err) == 0 ? r : NULL;
  tc_tensor *div_inf = and3(p, nz, un(p, TC_OP_ISINF, div, err), un(p, TC_OP_ISFINITE, num, err), err);
  tc_tensor *inf_sub = and3(p, nz, un(p, TC_OP_LOGICAL_NOT, dz, err), un(p, TC_OP_ISINF, div2, err), err);
  if (!fmod_nan || !div_inf || !inf_sub || flag(p, F_INVALID, fmod_nan, err) ||
      flag(p, F_OVERFLOW, div_inf, err) || flag(p, F_INVALID, inf_sub, err))
    return NULL;
  return r;
}

/* A float operation under numpy (its warnings) or torch (its // and %),
 * computed in the kernel dtype; f16 and bf16 // and % in f32, rounded once. */
static int float_op(tc_op op, tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  bool dm = op == TC_OP_FLOOR_DIV || op == TC_OP_MOD;
  if (tc_dtype_class(ty->kdt) != TC_CLASS_FLT || (!R.warns && !(dm && R.fdiv != FDIV_OWN))) return 1;
  pool p = {.n = 0};
  tc_tensor *x = float_operand(&p, a, ty->kdt, err), *y = x ? float_operand(&p, b, ty->kdt, err) : NULL, *r = NULL;
  if (dm && y) {
    /* NumPy computes f16 and bf16 in f32, rounding once; PyTorch rounds each step (c10::Half arithmetic) */
    tc_dtype c = tc_dtype_bits(ty->kdt) < 32 && R.fdiv == FDIV_NUMPY ? TC_DT_F32 : ty->kdt;
    tc_tensor *xc = keep(&p, tc_cast(x, c, err)), *yc = xc ? keep(&p, tc_cast(y, c, err)) : NULL;
    tc_tensor *rc = yc ? float_divmod(&p, op, xc, yc, err) : NULL;
    r = rc ? keep(&p, tc_cast(rc, ty->kdt, err)) : NULL;
    if (r && c != ty->kdt && R.warns &&   /* rounding to f16 overflowed */
        flag(&p, F_OVERFLOW, bin(&p, TC_OP_LOGICAL_AND, un(&p, TC_OP_ISINF, r, err), un(&p, TC_OP_ISFINITE, rc, err), err), err))
      r = NULL;
  } else if (y) {
    r = keep(&p, tc_binary_eager(op, x, y, err));
    if (r && ieee_flags(&p, op, x, y, r, err) != 0) r = NULL;
  }
  if (r) flush(op);
  raised = 0;
  return deliver(&p, r, ty->weak, out);
}

/* tenferro's scale_real: a float scalar meeting an integer tensor takes its
 * dtype rounded half away from zero (i64([-7, 7]) * 0.5 is [-7, 7]). */
static int scale_real(tc_op op, tc_tensor *a, tc_tensor *b, tc_tensor **out, tc_err *err) {
  tc_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
  double v;
  if (!w->weak || s->weak || w->ndim != 0 || tc_dtype_class(w->dtype) != TC_CLASS_FLT ||
      tc_dtype_class(s->dtype) != TC_CLASS_INT)
    return 1;
  if (tc_scalar_to_f64(w, &v, err) != 0) return -1;
  double r = round(v);
  if (!(fabs(r) < 0x1p63)) return 1;   /* NaN, inf or beyond i64: the cast's own answer */
  tc_tensor *k = tc_scalar_i64((int64_t)r, true, err);
  *out = !k ? NULL : a->weak ? tc_binary_eager(op, k, b, err) : tc_binary_eager(op, a, k, err);
  tc_tensor_free(k);
  return *out ? 0 : -1;
}

/* Arithmetic of two bools (numpy, jax, torch): + and maximum are or, * and
 * minimum and; - is refused (torch: with any bool operand); NumPy computes
 * //, % and ** in i8, JAX in i64, PyTorch has no kernel for them. */
static int bool_arith(tc_op op, tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  if (R.bools == BOOLS_NONE) return 1;
  bool torch = R.bools == BOOLS_OR_AND;
  if (op == TC_OP_SUB && (ty->dt == TC_DT_BOOL || (torch && (a->dtype == TC_DT_BOOL || b->dtype == TC_DT_BOOL))))
    return tc_err_set(err, TC_E_DTYPE, (int)op, TC_DT_BOOL, "%s has no - of %s (use ^ or logical_xor)", sem_names[semantics],
                      ty->dt == TC_DT_BOOL ? "bools" : "a bool tensor");
  if (ty->dt != TC_DT_BOOL) return 1;
  tc_op as = op == TC_OP_ADD || op == TC_OP_MAXIMUM ? TC_OP_LOGICAL_OR
             : op == TC_OP_MUL || op == TC_OP_MINIMUM ? TC_OP_LOGICAL_AND : op;
  if (as != op) {
    *out = tc_binary_eager(as, a, b, err);
    if (*out) (*out)->weak = ty->weak;
    return *out ? 0 : -1;
  }
  if (torch || (op != TC_OP_FLOOR_DIV && op != TC_OP_MOD && op != TC_OP_POW)) return 1;   /* tcalc's dtype_unsupported */
  pool p = {.n = 0};
  tc_dtype k = R.bools == BOOLS_I8 ? TC_DT_I8 : TC_DT_I64;
  tc_tensor *ai = keep(&p, tc_cast(a, k, err)), *bi = ai ? keep(&p, tc_cast(b, k, err)) : NULL;
  *out = bi ? tc_binary(op, ai, bi, err) : NULL;
  drain(&p);
  return *out ? 0 : -1;
}

/* PyTorch's check of pow's Python scalar w meeting a tensor of dtype dt
 * (c10's overflows): an integer dtype takes [MIN, MAX], an unsigned one
 * [-MAX, MAX] (negatives wrap), a float one any value it does not round
 * to an infinity. 0, or -1 with literal_overflow. */
static int torch_scalar_fits(tc_tensor *w, tc_dtype dt, tc_op op, tc_err *err) {
  double e;
  int64_t v;
  if (tc_dtype_class(dt) == TC_CLASS_INT && tc_dtype_class(w->dtype) == TC_CLASS_INT) {
    if (w->dtype == TC_DT_U64 || tc_scalar_to_i64(w, &v, err) != 0) return w->dtype == TC_DT_U64 ? 0 : -1;
    int64_t lo, hi;
    tc_int_range(dt, &lo, &hi);
    if (tc_dtype_is_unsigned(dt)) lo = -hi;
    if (v >= lo && v <= hi) return 0;
    return tc_err_set(err, TC_E_LITERAL, (int)op, (int)dt, "value %lld cannot be converted to %s without overflow",
                      (long long)v, tc_dtype_name(dt));
  }
  if (tc_dtype_class(dt) != TC_CLASS_FLT || tc_scalar_to_f64(w, &e, err) != 0) return tc_dtype_class(dt) != TC_CLASS_FLT ? 0 : -1;
  pool p = {.n = 0};
  tc_tensor *c = keep(&p, tc_cast(w, dt, err));
  double got = 0;
  int rc = c && tc_scalar_to_f64(c, &got, err) == 0 ? 0 : -1;
  drain(&p);
  if (rc == 0 && isinf(got) && isfinite(e))
    return tc_err_set(err, TC_E_LITERAL, (int)op, (int)dt, "value %.17g cannot be converted to %s without overflow", e,
                      tc_dtype_name(dt));
  return rc;
}

int tc_semantics_value_fits(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err) {
  if (!R.c10 || !v->weak || v->ndim != 0 || tc_dtype_class(dt) == TC_CLASS_BOOL) return 1;
  return torch_scalar_fits(v, dt, op, err);   /* x[i] = v, fills: c10's checked conversion, then it wraps */
}

/* PyTorch's integer powers: a negative literal exponent is refused (as
 * tcalc's), a negative element of an exponent tensor gives 1 for a base of
 * 1, +-1 for -1 and 0 otherwise (its powi). */
static int torch_pow(tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  if ((b->weak && !a->weak && b->ndim == 0) || (a->weak && !b->weak && a->ndim == 0)) {
    double e;
    if (tc_scalar_to_f64(b->weak ? b : a, &e, err) != 0) return -1;
    if (b->weak && tc_dtype_class(ty->kdt) == TC_CLASS_INT && e < 0)
      return tc_err_set(err, TC_E_NEG_EXP, TC_OP_POW, (int)ty->kdt,
                        "integers to negative integer powers are not allowed (exponent %.17g)", e);
    /* then it wraps; a float tensor's base is not checked */
    if (b->weak || tc_dtype_class(ty->kdt) == TC_CLASS_INT)
      if (torch_scalar_fits(b->weak ? b : a, ty->kdt, TC_OP_POW, err) != 0) return -1;
    if (b->weak) return 1;
  }
  if (tc_dtype_class(ty->kdt) != TC_CLASS_INT || tc_dtype_is_unsigned(b->dtype) || b->weak) return 1;
  pool p = {.n = 0};
  int rc = -1;
  tc_tensor *ac = keep(&p, tc_cast(a, ty->kdt, err)), *bc = ac ? keep(&p, tc_cast(b, ty->kdt, err)) : NULL;
  tc_tensor *neg = bin(&p, TC_OP_LESS, bc, lit(&p, 0, err), err);
  tc_tensor *any = neg ? keep(&p, tc_reduce(TC_OP_ANY, neg, &(tc_axes){.all = true}, false, err)) : NULL;
  int64_t k = 0;
  if (!any || tc_scalar_to_i64(any, &k, err) != 0) goto done;
  if (!k) {
    rc = 1;
    goto done;
  }
  tc_tensor *pos = bin(&p, TC_OP_MAXIMUM, bc, lit(&p, 0, err), err);
  tc_tensor *r = bin(&p, TC_OP_POW, ac, pos, err);
  tc_tensor *odd = bin(&p, TC_OP_NOT_EQUAL, bin(&p, TC_OP_BITWISE_AND, bc, lit(&p, 1, err), err), lit(&p, 0, err), err);
  tc_tensor *sign = sel(&p, odd, typed(&p, -1, ty->kdt, err), typed(&p, 1, ty->kdt, err), err);
  tc_tensor *m1 = sel(&p, bin(&p, TC_OP_EQUAL, ac, lit(&p, -1, err), err), sign, typed(&p, 0, ty->kdt, err), err);
  tc_tensor *small = sel(&p, bin(&p, TC_OP_EQUAL, ac, lit(&p, 1, err), err), typed(&p, 1, ty->kdt, err), m1, err);
  return deliver(&p, sel(&p, neg, small, r, err), ty->weak, out);
done:
  drain(&p);
  return rc;
}

/* jnp.power of integers with an exponent tensor (its _pow_int_int, from
 * JAX's source): 0 for a zero base with a nonzero exponent, else the
 * product of the base's squares at the exponent's six lowest bits, the
 * exponent shifted as unsigned (a negative or 64 or more reads as its low
 * bits). A literal exponent is lax.integer_pow: tcalc's own. */
static int jax_pow(tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  if (tc_dtype_class(ty->kdt) != TC_CLASS_INT || b->weak) return 1;
  static const tc_dtype unsigned_of[] = {[1] = TC_DT_U8, [2] = TC_DT_U16, [4] = TC_DT_U32, [8] = TC_DT_U64};
  pool p = {.n = 0};
  tc_tensor *x = keep(&p, tc_cast(a, ty->kdt, err)), *e = x ? keep(&p, tc_cast(b, ty->kdt, err)) : NULL;
  tc_tensor *u = e ? keep(&p, tc_cast(e, unsigned_of[tc_dtype_size(ty->kdt)], err)) : NULL;
  tc_tensor *acc = sel(&p, bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_EQUAL, x, lit(&p, 0, err), err),
                               bin(&p, TC_OP_NOT_EQUAL, e, lit(&p, 0, err), err), err),
                       typed(&p, 0, ty->kdt, err), typed(&p, 1, ty->kdt, err), err);
  for (int i = 0; i < 6 && acc; i++) {
    tc_tensor *bit = bin(&p, TC_OP_NOT_EQUAL, bin(&p, TC_OP_BITWISE_AND, u, lit(&p, 1, err), err), lit(&p, 0, err), err);
    acc = sel(&p, bit, bin(&p, TC_OP_MUL, acc, x, err), acc, err);
    x = bin(&p, TC_OP_MUL, x, x, err);
    u = bin(&p, TC_OP_SHIFT_RIGHT, u, lit(&p, 1, err), err);
  }
  return deliver(&p, acc, ty->weak, out);
}

/* NumPy 2 compares an integer tensor with an integer literal out of its
 * range exactly: every element is below a literal above the range. */
static int exact_compare(tc_op op, tc_tensor *a, tc_tensor *b, tc_tensor **out, tc_err *err) {
  tc_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
  int64_t v;
  if (!w->weak || s->weak || w->ndim != 0 || tc_dtype_class(w->dtype) != TC_CLASS_INT || w->dtype == TC_DT_U64 ||
      tc_dtype_class(s->dtype) != TC_CLASS_INT || tc_scalar_to_i64(w, &v, NULL) != 0)
    return 1;
  int64_t lo, hi;
  tc_int_range(s->dtype, &lo, &hi);
  if (v >= lo && v <= hi) return 1;
  bool above = v > hi, lit_left = a == w;   /* the literal is above every element, or below */
  bool less = above != lit_left;            /* a < b holds for every element */
  bool r;
  switch (op) {
  case TC_OP_EQUAL: r = false; break;
  case TC_OP_NOT_EQUAL: r = true; break;
  case TC_OP_LESS: case TC_OP_LESS_EQUAL: r = less; break;
  case TC_OP_GREATER: case TC_OP_GREATER_EQUAL: r = !less; break;
  default: return 1;
  }
  int nd;
  int64_t shape[TC_MAX_DIMS];
  if (tc_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &nd, shape, op, err) != 0) return -1;
  tc_tensor *one = tc_scalar_bool(r, err);
  *out = one ? tc_full(nd, shape, one, TC_DT_BOOL, err) : NULL;
  tc_tensor_free(one);
  return *out ? 0 : -1;
}

bool tc_semantics_answers(tc_op op) {
  if (semantics == TC_SEM_TCALC) return false;
  return R.scale_real || op == TC_OP_TRUE_DIV || tc_op_check(op) == TC_CHECK_ZERO || tc_op_rule(op) == TC_RULE_ARITH ||
         (R.warns && tc_op_rule(op) == TC_RULE_TOBOOL);
}

int tc_semantics_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_tensor **out, tc_err *err) {
  if (!tc_semantics_answers(op)) return 1;
  if (R.scale_real) return scale_real(op, a, b, out, err);
  if (R.warns && tc_op_rule(op) == TC_RULE_TOBOOL) {
    int k = exact_compare(op, a, b, out, err);
    tc_btype ty;
    if (k != 1 || !(a->weak || b->weak)) return k;
    if (tc_binary_typing(op, a, b, &ty, err) != 0) return -1;
    if (tc_dtype_class(ty.kdt) != TC_CLASS_FLT) return 1;
    pool p = {.n = 0};   /* a literal made a float: NumPy warns where it overflows */
    tc_tensor *x = float_operand(&p, a, ty.kdt, err), *y = x ? float_operand(&p, b, ty.kdt, err) : NULL;
    *out = y ? tc_binary_eager(op, x, y, err) : NULL;
    drain(&p);
    return *out ? 0 : -1;
  }
  if (op == TC_OP_TRUE_DIV && R.rdiv_reciprocal && a->weak && !b->weak) {
    /* PyTorch divides a Python scalar by a tensor as reciprocal(b) * a (Tensor.__rtruediv__) */
    tc_tensor *one = tc_scalar_i64(1, true, err), *rb = one ? tc_binary_eager(TC_OP_TRUE_DIV, one, b, err) : NULL;
    *out = rb ? tc_binary_eager(TC_OP_MUL, rb, a, err) : NULL;
    tc_tensor_free(one);
    tc_tensor_free(rb);
    return *out ? 0 : -1;
  }
  tc_btype ty;   /* the rest: true division (NumPy's warnings) and the ARITH ops, typed once */
  if (tc_binary_typing(op, a, b, &ty, err) != 0) return -1;
  if (op == TC_OP_TRUE_DIV) return float_op(op, a, b, &ty, out, err);
  int k = bool_arith(op, a, b, &ty, out, err);
  if (k == 1) k = float_op(op, a, b, &ty, out, err);
  if (k != 1) return k;
  if (op == TC_OP_POW && R.pow == POW_C10) return torch_pow(a, b, &ty, out, err);
  if (op == TC_OP_POW && R.pow == POW_JAX) return jax_pow(a, b, &ty, out, err);
  if (tc_op_check(op) != TC_CHECK_ZERO || tc_dtype_class(ty.kdt) != TC_CLASS_INT) return 1;
  return division(op, a, b, &ty, out, err);
}

/* NumPy's warnings of a reduction r of x: the mean of nothing; a sum or
 * product of floats that overflowed (an infinity, or a NaN, from finite
 * elements) or made a NaN from numbers. */
int tc_semantics_reduced(tc_op op, tc_tensor *x, tc_tensor *r, tc_err *err) {
  if (!R.warns) return 0;
  if ((op == TC_OP_MEAN || op == TC_OP_NANMEAN) && tc_numel(x) == 0 && tc_numel(r) > 0) {
    warn_text("Mean of empty slice.");
    /* its f64 scalar divides as a Python float does */
    warn_text(r->ndim == 0 && r->dtype == TC_DT_F64 ? "invalid value encountered in scalar divide"
                                                    : "invalid value encountered in divide");
    return 0;
  }
  if ((op != TC_OP_REDUCE_SUM && op != TC_OP_REDUCE_PROD && op != TC_OP_MEAN) || tc_dtype_class(r->dtype) != TC_CLASS_FLT ||
      tc_dtype_class(x->dtype) != TC_CLASS_FLT || tc_numel(x) == 0)
    return 0;
  pool p = {.n = 0};
  int64_t nonfinite = -1, nan_in = -1, inf_out = -1, nan_out = -1, inf_run = -1;
  int rc = first_true(&p, un(&p, TC_OP_LOGICAL_NOT, un(&p, TC_OP_ISFINITE, x, err), err), &nonfinite, err) ||
           first_true(&p, un(&p, TC_OP_ISNAN, x, err), &nan_in, err) || first_true(&p, un(&p, TC_OP_ISINF, r, err), &inf_out, err) ||
           first_true(&p, un(&p, TC_OP_ISNAN, r, err), &nan_out, err) ? -1 : 0;
  int64_t nan_run = -1;
  if (rc == 0 && op == TC_OP_REDUCE_PROD) {
    /* a product's flags come from its running product (in order, flattened; f16 and bf16 multiply in f32): an
       infinity before an infinite element, a NaN (inf * 0) before a NaN element */
    tc_tensor *xs = tc_dtype_bits(x->dtype) == 16 ? keep(&p, tc_cast(x, TC_DT_F32, err)) : x;
    tc_tensor *run = xs ? keep(&p, tc_scan(TC_OP_CUMPROD, xs, false, 0, err)) : NULL;
    rc = first_true(&p, un(&p, TC_OP_ISINF, run, err), &inf_run, err) || first_true(&p, un(&p, TC_OP_ISNAN, run, err), &nan_run, err);
    bool over = inf_run >= 0 && (nonfinite < 0 || inf_run < nonfinite), nan = nan_run >= 0 && (nan_in < 0 || nan_run < nan_in);
    if (rc == 0 && (over || (nonfinite < 0 && inf_out >= 0))) warn_text("overflow encountered in reduce");
    if (rc == 0 && nan) warn_text("invalid value encountered in reduce");
  } else if (rc == 0) {
    if (nonfinite < 0 && (inf_out >= 0 || nan_out >= 0)) warn_text("overflow encountered in reduce");
    if (nan_in < 0 && nan_out >= 0) warn_text("invalid value encountered in reduce");
  }
  drain(&p);
  return rc;
}
