/* Other systems' semantics (SPEC 19): which one is in force, what an
 * operator means under it, and its answers for integer division where
 * they differ from tcalc's own (zero divisors, MIN / -1), with NumPy's
 * RuntimeWarnings. Everything else is tcalc's own; see the man page's
 * SEMANTICS OF OTHER SYSTEMS for what is done so far. */
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
const char *tc_semantics_name(tc_semantics s) { return (unsigned)s < TC_SEM_COUNT ? sem_names[s] : "?"; }

int tc_semantics_from_name(const char *s) {
  for (int i = 0; i < TC_SEM_COUNT; i++)
    if (!strcmp(s, sem_names[i])) return i;
  return -1;
}

/* What each system decides by a parameter (its row): the default float;
 * how x[i] and x[i] = v read an index out of range (SPEC 19 item 7); the
 * defaults of take's and scatter's mode and of scatter's reduce. */
static const struct {
  tc_dtype float_dt;
  tc_sem_index index;
  const char *take_mode, *scatter_mode, *scatter_reduce;
} rows[TC_SEM_COUNT] = {
  [TC_SEM_TCALC] = {TC_DT_F64, TC_SEM_INDEX_ERROR, "error", "error", "set"},
  [TC_SEM_NUMPY] = {TC_DT_F64, TC_SEM_INDEX_ERROR, "error", "error", "set"},
  [TC_SEM_JAX] = {TC_DT_F64, TC_SEM_INDEX_JAX, "fill", "drop", "set"},
  [TC_SEM_TORCH] = {TC_DT_F32, TC_SEM_INDEX_ERROR, "error", "error", "set"},
  [TC_SEM_TENFERRO] = {TC_DT_F64, TC_SEM_INDEX_CLAMP, "clip", "clip", "add"},
};

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
  for (int k = 0; k < 2; k++) {
    tc_tensor *t = k ? b : a;
    if (!t->weak && tc_semantics_lacks(t->dtype, (int)op, err) != 0) return -1;
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
  /* an integer literal must fit the integer dtype it takes, except in torch, which wraps it */
  *check_literal = semantics != TC_SEM_TORCH && tc_dtype_class(w->dtype) != TC_CLASS_FLT &&
                   tc_dtype_class(*out) == TC_CLASS_INT;
  return 0;
}

tc_dtype tc_sum_dtype(tc_dtype dt) {
  tc_class c = tc_dtype_class(dt);
  if (c == TC_CLASS_BOOL) return TC_DT_I64;
  if (c != TC_CLASS_INT) return dt;
  switch (semantics) {   /* NumPy's and JAX's int_/uint accumulators; PyTorch's i64 */
  case TC_SEM_NUMPY: case TC_SEM_JAX: return tc_dtype_is_unsigned(dt) ? TC_DT_U64 : TC_DT_I64;
  case TC_SEM_TORCH: return TC_DT_I64;
  default: return dt;
  }
}

int tc_semantics_refuses(tc_op op, tc_dtype dt, tc_err *err) {
  tc_class c = tc_dtype_class(dt);
  if (semantics == TC_SEM_TORCH && op == TC_OP_MEAN && c != TC_CLASS_FLT)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "torch has no mean of %s (cast to a float first)", tc_dtype_name(dt));
  if (semantics == TC_SEM_TENFERRO && op == TC_OP_MATMUL && c != TC_CLASS_FLT)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "tenferro has no matmul of %s", tc_dtype_name(dt));
  return 0;
}

int tc_operator_op(tc_op op, tc_op *out, tc_err *err) {
  *out = op;
  switch (semantics) {
  case TC_SEM_NUMPY: case TC_SEM_JAX: case TC_SEM_TORCH:
    if (op == TC_OP_DIV) *out = TC_OP_TRUE_DIV;   /* true division to the default float */
    if (op == TC_OP_REM) *out = TC_OP_MOD;        /* % has the divisor's sign */
    return 0;
  case TC_SEM_TENFERRO:
    if (op == TC_OP_FLOOR_DIV)
      return tc_err_set(err, TC_E_OP_UNSUPPORTED, (int)op, -1, "tenferro has no // operator (its / truncates: use /)");
    return 0;
  default:
    return 0;
  }
}

/* ---- warnings ---- */
#define MAX_WARNINGS 8
static char warnings[MAX_WARNINGS][96];
static int nwarnings;

int tc_warning_count(void) { return nwarnings; }
const char *tc_warning(int i) { return i >= 0 && i < nwarnings ? warnings[i] : ""; }
void tc_warnings_clear(void) { nwarnings = 0; }

static void warn(const char *what, tc_op op) {
  static const struct { tc_op op; const char *ufunc; } names[] = {
    {TC_OP_FLOOR_DIV, "floor_divide"}, {TC_OP_MOD, "remainder"}, {TC_OP_DIV, "divide"}, {TC_OP_REM, "fmod"}};
  const char *u = "divide";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].op == op) u = names[i].ufunc;
  char w[96];
  snprintf(w, sizeof w, "%s encountered in %s", what, u);
  for (int i = 0; i < nwarnings; i++)
    if (!strcmp(warnings[i], w)) return;
  if (nwarnings < MAX_WARNINGS) memcpy(warnings[nwarnings++], w, sizeof w);
}

/* ---- integer division ---- */
/* Owned temporaries, freed together (a function here makes fewer than 32). */
#define POOL 32
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

static tc_tensor *bin(pool *p, tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  return a && b ? keep(p, tc_binary_eager(op, a, b, err)) : NULL;
}
static tc_tensor *lit(pool *p, int64_t v, tc_err *err) { return keep(p, tc_scalar_i64(v, true, err)); }
/* v as a 0-d tensor of dtype dt (all ones for -1, whatever the signedness). */
static tc_tensor *typed(pool *p, int64_t v, tc_dtype dt, tc_err *err) {
  tc_tensor *z = keep(p, tc_scalar_i64(0, false, err)), *c = z ? keep(p, tc_cast(z, dt, err)) : NULL;
  if (!c || v == 0) return c;
  tc_tensor *ones = keep(p, tc_unary(TC_OP_BITWISE_NOT, c, err));   /* -1: every bit set */
  return v == -1 || !ones ? ones : bin(p, TC_OP_SUB, ones, lit(p, -1 - v, err), err);
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
    return keep(p, tc_where(bin(p, TC_OP_EQUAL, a, lit(p, 0, err), err), typed(p, -1, dt, err), typed(p, -2, dt, err), err));
  default: return typed(p, 0, dt, err);
  }
}

/* Integer DIV, REM, FLOOR_DIV and MOD under numpy, jax and torch. */
static int division(tc_op op, tc_tensor *a, tc_tensor *b, const tc_btype *ty, tc_tensor **out, tc_err *err) {
  pool p = {.n = 0};
  int rc = -1;
  bool sgn = !tc_dtype_is_unsigned(ty->kdt);
  int bits = 8 * (int)tc_dtype_size(ty->kdt);
  tc_tensor *zb = bin(&p, TC_OP_EQUAL, b, lit(&p, 0, err), err);   /* in b's shape */
  tc_tensor *zero_at = bin(&p, TC_OP_LOGICAL_AND, zb, bin(&p, TC_OP_EQUAL, a, a, err), err);   /* the result's shape */
  tc_tensor *min_at = NULL;
  if (!zero_at) goto done;
  /* MIN / -1 matters where it stops torch, or where NumPy warns of it (its quotients, not its remainders) */
  if (sgn && (semantics == TC_SEM_TORCH || (semantics == TC_SEM_NUMPY && (op == TC_OP_FLOOR_DIV || op == TC_OP_DIV)))) {
    tc_tensor *mn = lit(&p, bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), err);
    min_at = bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_EQUAL, a, mn, err), bin(&p, TC_OP_EQUAL, b, lit(&p, -1, err), err), err);
    if (!min_at) goto done;
  }
  int64_t z = -1, m = -1;
  if (first_true(&p, zero_at, &z, err) != 0 || (min_at && first_true(&p, min_at, &m, err) != 0)) goto done;
  if (semantics == TC_SEM_TORCH) {   /* the first offending element decides; a zero divisor is tcalc's division_by_zero */
    rc = m >= 0 && (z < 0 || m < z) ? torch_stops(op, a, b, ty->kdt, m, err) : 1;
    goto done;
  }
  if (z >= 0 && semantics == TC_SEM_NUMPY) warn("divide by zero", op);
  if (m >= 0) warn("overflow", op);   /* numpy's only, now that torch has answered */
  if (z < 0) {   /* no zero divisor: tcalc's values */
    rc = 1;
    goto done;
  }
  tc_tensor *one = b ? keep(&p, tc_cast(lit(&p, 1, err), b->dtype, err)) : NULL;
  tc_tensor *b1 = one ? keep(&p, tc_where(zb, one, b, err)) : NULL;   /* zero divisors made 1, then patched */
  if (!b1) goto done;
  b1->weak = b->weak;
  tc_tensor *r = bin(&p, op, a, b1, err);
  tc_tensor *fill = r ? (semantics == TC_SEM_JAX ? jax_fill(&p, op, a, r->dtype, err) : typed(&p, 0, r->dtype, err)) : NULL;
  *out = fill ? tc_where(zb, fill, r, err) : NULL;
  if (*out) {
    (*out)->weak = ty->weak;
    rc = 0;
  }
done:
  drain(&p);
  return rc;
}

/* NumPy's floating-point warnings of a / b (true division) with result r:
 * a finite nonzero over zero, then a NaN made from numbers (0 / 0, inf / inf). */
static int true_div_warnings(tc_tensor *a, tc_tensor *b, tc_tensor *r, tc_err *err) {
  pool p = {.n = 0};
  int64_t z = -1, nan = -1;
  tc_tensor *fin = keep(&p, tc_unary(TC_OP_ISFINITE, a, err));
  tc_tensor *zero = bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_EQUAL, b, lit(&p, 0, err), err),
                        bin(&p, TC_OP_LOGICAL_AND, fin, bin(&p, TC_OP_NOT_EQUAL, a, lit(&p, 0, err), err), err), err);
  tc_tensor *made = bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_NOT_EQUAL, r, r, err),
                        bin(&p, TC_OP_LOGICAL_AND, bin(&p, TC_OP_EQUAL, a, a, err), bin(&p, TC_OP_EQUAL, b, b, err), err), err);
  int rc = made && first_true(&p, zero, &z, err) == 0 && first_true(&p, made, &nan, err) == 0 ? 0 : -1;
  if (rc == 0 && z >= 0) warn("divide by zero", TC_OP_DIV);
  if (rc == 0 && nan >= 0) warn("invalid value", TC_OP_DIV);
  drain(&p);
  return rc;
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

bool tc_semantics_answers(tc_op op) {
  switch (semantics) {
  case TC_SEM_NUMPY: return op == TC_OP_TRUE_DIV || tc_op_check(op) == TC_CHECK_ZERO;
  case TC_SEM_JAX: case TC_SEM_TORCH: return tc_op_check(op) == TC_CHECK_ZERO;
  case TC_SEM_TENFERRO: return true;   /* scale_real */
  default: return false;
  }
}

int tc_semantics_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_tensor **out, tc_err *err) {
  if (!tc_semantics_answers(op)) return 1;
  if (semantics == TC_SEM_TENFERRO) return scale_real(op, a, b, out, err);
  if (op == TC_OP_TRUE_DIV) {
    *out = tc_binary_eager(op, a, b, err);
    if (*out && true_div_warnings(a, b, *out, err) != 0) {
      tc_tensor_free(*out);
      *out = NULL;
    }
    return *out ? 0 : -1;
  }
  tc_btype ty;
  if (tc_binary_typing(op, a, b, &ty, err) != 0) return -1;
  if (tc_dtype_class(ty.kdt) != TC_CLASS_INT) return 1;
  return division(op, a, b, &ty, out, err);
}
