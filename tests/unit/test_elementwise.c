/* Elementwise ops against independent references, for every (op, dtype)
 * the registry claims for cpu: edge values through the contiguous path,
 * the scalar-broadcast (stride-0) path, a 2-D broadcast and a strided
 * (transposed) path. Ops are taken from the op table by kind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"
#include "cpu/cpu.h"

#define MAXV 64
/* Compare zeros without their sign (maximum/minimum of +0 and -0). */
#define TOL_ANYZERO (-1.0)

typedef struct {
  bool known;
  int64_t i;
  double f;
  double tol;   /* ulps of the result dtype; 0 exact; TOL_ANYZERO */
} ref;

/* The suite's own grouping of elementwise ops, read from the table's
 * columns (family, dtype rule, help group). */
typedef enum { K_OTHER, K_ARITH, K_MATH2, K_BITS, K_CMP, K_UNARY, K_LOGICAL, K_MATH, K_ROUND, K_PRED } tkind;
static tkind kind_of(tc_op op) {
  tc_rule r = tc_op_rule(op);
  const char *g = tc_op_group(op);
  switch (tc_op_family(op)) {
  case TC_FAM_CMP: return K_CMP;
  case TC_FAM_BIN: return r == TC_RULE_FLOAT ? K_MATH2 : !strcmp(g, "bitwise") ? K_BITS : K_ARITH;
  case TC_FAM_UN: return r == TC_RULE_FLOAT ? K_MATH : r == TC_RULE_ROUNDING ? K_ROUND : K_UNARY;
  case TC_FAM_PRED: return !strcmp(g, "unary") ? K_LOGICAL : K_PRED;
  default: return K_OTHER;
  }
}

static bool is_binary_kind(tkind k) {
  return k == K_ARITH || k == K_BITS || k == K_CMP ||
         k == K_MATH2;
}
static bool is_unary_kind(tkind k) {
  return k == K_UNARY || k == K_LOGICAL || k == K_MATH || k == K_ROUND ||
         k == K_PRED;
}

/* SPEC 3-4: the dtype a result has for inputs of dtype dt. */
static tc_dtype expect_dtype(tc_op op, tc_dtype dt) {
  switch (kind_of(op)) {
  case K_CMP: case K_PRED: case K_LOGICAL: return TC_DT_BOOL;
  case K_MATH: case K_MATH2: return tt_is_flt(dt) ? dt : TC_DT_F64;
  case K_ROUND: return dt == TC_DT_BOOL ? TC_DT_F64 : dt;
  default: return dt;
  }
}

/* ---- references: binary ---- */
static int64_t ipow_ref(int64_t a, int64_t e, int bits) {
  /* left-to-right binary powering, wrapped after every step */
  int64_t r = 1;
  for (int k = 63; k >= 0; k--) {
    r = tt_wrap((__int128)r * r, bits);
    if ((e >> k) & 1) r = tt_wrap((__int128)r * a, bits);
  }
  return r;
}

static __int128 floordiv128(__int128 a, __int128 b) {
  __int128 q = a / b, r = a - q * b;
  if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
  return q;
}

static ref ref_int_bin(tc_op op, int64_t a, int64_t b, int bits) {
  ref r = {true, 0, 0, 0};
  __int128 A = a, B = b;
  switch (op) {
  case TC_OP_ADD: r.i = tt_wrap(A + B, bits); break;
  case TC_OP_SUB: r.i = tt_wrap(A - B, bits); break;
  case TC_OP_MUL: r.i = tt_wrap(A * B, bits); break;
  case TC_OP_DIV: r.i = tt_wrap(A / B, bits); break;
  case TC_OP_REM: r.i = tt_wrap(A - (A / B) * B, bits); break;
  case TC_OP_FLOOR_DIV: r.i = tt_wrap(floordiv128(A, B), bits); break;
  case TC_OP_MOD: r.i = tt_wrap(A - floordiv128(A, B) * B, bits); break;
  case TC_OP_POW: r.i = ipow_ref(a, b, bits); break;
  case TC_OP_MAXIMUM: r.i = a > b ? a : b; break;
  case TC_OP_MINIMUM: r.i = a < b ? a : b; break;
  case TC_OP_BITWISE_AND: r.i = a & b; break;
  case TC_OP_BITWISE_OR: r.i = a | b; break;
  case TC_OP_BITWISE_XOR: r.i = a ^ b; break;
  case TC_OP_SHIFT_LEFT: r.i = b >= bits ? 0 : tt_wrap(A * ((__int128)1 << b), bits); break;
  case TC_OP_SHIFT_RIGHT: r.i = b >= bits ? (a < 0 ? -1 : 0) : (int64_t)floordiv128(A, (__int128)1 << b); break;
  case TC_OP_EQUAL: r.i = a == b; break;
  case TC_OP_NOT_EQUAL: r.i = a != b; break;
  case TC_OP_LESS: r.i = a < b; break;
  case TC_OP_LESS_EQUAL: r.i = a <= b; break;
  case TC_OP_GREATER: r.i = a > b; break;
  case TC_OP_GREATER_EQUAL: r.i = a >= b; break;
  case TC_OP_LOGICAL_AND: r.i = a != 0 && b != 0; break;
  case TC_OP_LOGICAL_OR: r.i = a != 0 || b != 0; break;
  case TC_OP_LOGICAL_XOR: r.i = (a != 0) != (b != 0); break;
  case TC_OP_ATAN2: r.f = atan2((double)a, (double)b); r.tol = 1; break;
  case TC_OP_HYPOT: r.f = hypot((double)a, (double)b); r.tol = 1; break;
  case TC_OP_TRUE_DIV: r.f = (double)a / (double)b; break;   /* in f64: exact for |a|, |b| < 2^53, then one rounding */
  default: r.known = false;
  }
  return r;
}

static ref ref_bool_bin(tc_op op, int64_t a, int64_t b) {
  ref r = {true, 0, 0, 0};
  switch (op) {
  case TC_OP_MAXIMUM: case TC_OP_BITWISE_OR: r.i = a | b; break;
  case TC_OP_MINIMUM: case TC_OP_BITWISE_AND: r.i = a & b; break;
  case TC_OP_BITWISE_XOR: r.i = a ^ b; break;
  case TC_OP_EQUAL: case TC_OP_NOT_EQUAL: case TC_OP_LESS: case TC_OP_LESS_EQUAL: case TC_OP_GREATER:
  case TC_OP_GREATER_EQUAL: case TC_OP_ATAN2: case TC_OP_HYPOT: case TC_OP_LOGICAL_AND: case TC_OP_LOGICAL_OR:
  case TC_OP_LOGICAL_XOR: case TC_OP_TRUE_DIV:
    return ref_int_bin(op, a, b, 8);
  default: r.known = false;
  }
  return r;
}

static double math_tol(tc_dtype dt) { return dt == TC_DT_F32 ? 2 : 1; }

static ref ref_flt_bin(tc_op op, double a, double b, tc_dtype dt) {
  ref r = {true, 0, 0, 0};
  switch (op) {
  case TC_OP_ADD: r.f = tt_round(a + b, dt); break;
  case TC_OP_SUB: r.f = tt_round(a - b, dt); break;
  case TC_OP_MUL: r.f = tt_round(a * b, dt); break;
  case TC_OP_DIV: case TC_OP_TRUE_DIV: r.f = tt_round(a / b, dt); break;
  case TC_OP_REM: r.f = fmod(a, b); break;   /* exact */
  case TC_OP_FLOOR_DIV:
    /* floor of the quotient in the compute type (f32 for bf16/f16), then one rounding */
    r.f = tt_round(floor(tt_round(a / b, dt == TC_DT_F64 ? TC_DT_F64 : TC_DT_F32)), dt);
    break;
  case TC_OP_MOD: {
    /* NumPy's float %: fmod (exact), then moved into the divisor's sign */
    double m = fmod(a, b);
    if (m == 0) m = copysign(0.0, b);
    else if (!isnan(m) && ((m < 0) != (b < 0))) m = tt_round(m + b, dt);
    r.f = m;
    break;
  }
  case TC_OP_POW: r.f = tt_round(pow(a, b), dt); r.tol = math_tol(dt); break;
  case TC_OP_ATAN2: r.f = tt_round(atan2(a, b), dt); r.tol = math_tol(dt); break;
  case TC_OP_HYPOT: r.f = tt_round(hypot(a, b), dt); r.tol = math_tol(dt); break;
  case TC_OP_MAXIMUM:
    r.f = isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    if (a == b) r.tol = TOL_ANYZERO;
    break;
  case TC_OP_MINIMUM:
    r.f = isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    if (a == b) r.tol = TOL_ANYZERO;
    break;
  case TC_OP_EQUAL: r.i = a == b; break;
  case TC_OP_NOT_EQUAL: r.i = a != b; break;
  case TC_OP_LESS: r.i = a < b; break;
  case TC_OP_LESS_EQUAL: r.i = a <= b; break;
  case TC_OP_GREATER: r.i = a > b; break;
  case TC_OP_GREATER_EQUAL: r.i = a >= b; break;
  case TC_OP_LOGICAL_AND: r.i = a != 0 && b != 0; break;   /* NaN != 0 */
  case TC_OP_LOGICAL_OR: r.i = a != 0 || b != 0; break;
  case TC_OP_LOGICAL_XOR: r.i = (a != 0) != (b != 0); break;
  default: r.known = false;
  }
  return r;
}

/* ---- references: unary ---- */
static bool libm1(tc_op op, double x, double *r) {
  switch (op) {
  case TC_OP_EXP: *r = exp(x); break;
  case TC_OP_LOG: *r = log(x); break;
  case TC_OP_LOG2: *r = log2(x); break;
  case TC_OP_LOG10: *r = log10(x); break;
  case TC_OP_LOG1P: *r = log1p(x); break;
  case TC_OP_EXPM1: *r = expm1(x); break;
  case TC_OP_SQRT: *r = sqrt(x); break;
  case TC_OP_RSQRT: *r = 1.0 / sqrt(x); break;
  case TC_OP_CBRT: *r = cbrt(x); break;
  case TC_OP_SIN: *r = sin(x); break;
  case TC_OP_COS: *r = cos(x); break;
  case TC_OP_TAN: *r = tan(x); break;
  case TC_OP_ASIN: *r = asin(x); break;
  case TC_OP_ACOS: *r = acos(x); break;
  case TC_OP_ATAN: *r = atan(x); break;
  case TC_OP_SINH: *r = sinh(x); break;
  case TC_OP_COSH: *r = cosh(x); break;
  case TC_OP_TANH: *r = tanh(x); break;
  case TC_OP_ERF: *r = erf(x); break;
  case TC_OP_SIGMOID: *r = (double)(1 / (1 + expl(-(long double)x))); break;
  default: return false;
  }
  return true;
}

static bool round_ref(tc_op op, double x, double *r) {
  switch (op) {
  case TC_OP_FLOOR: *r = floor(x); break;
  case TC_OP_CEIL: *r = ceil(x); break;
  case TC_OP_TRUNC: *r = trunc(x); break;
  case TC_OP_ROUND: *r = tt_round_half_even(x); break;
  case TC_OP_SIGN: *r = isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x; break;
  default: return false;
  }
  return true;
}

/* x is xi for bool/int dtypes, xf for floats. */
static ref ref_unary(tc_op op, tc_dtype dt, int64_t xi, double xf) {
  ref r = {true, 0, 0, 0};
  bool flt = tt_is_flt(dt);
  double x = flt ? xf : (double)xi;
  int bits = tt_bits(dt);
  double m;
  switch (kind_of(op)) {
  case K_MATH:
    if (!libm1(op, x, &m)) { r.known = false; break; }
    r.f = flt ? tt_round(m, dt) : m;
    r.tol = op == TC_OP_SQRT ? 0 : math_tol(flt ? dt : TC_DT_F64);
    if (op == TC_OP_RSQRT && dt == TC_DT_F64) r.tol = 1;
    if (op == TC_OP_SIGMOID) r.tol = 3;   /* exp, an add and a divide, each rounded */
    /* the reference is glibc's, whose f64 cbrt is up to 3 ulp off; tcalc's
     * (SLEEF's) is within 1 of the exact value (tests/accuracy/ulp.py) */
    if (op == TC_OP_CBRT && (!flt || dt == TC_DT_F64)) r.tol = 4;
    return r;
  case K_PRED:
    if (op == TC_OP_ISNAN) r.i = flt && isnan(x);
    else if (op == TC_OP_ISINF) r.i = flt && isinf(x);
    else if (op == TC_OP_ISFINITE) r.i = !flt || isfinite(x);
    else r.known = false;
    return r;
  case K_LOGICAL:
    if (op == TC_OP_LOGICAL_NOT) r.i = flt ? x == 0 : xi == 0;
    else r.known = false;
    return r;
  default: break;
  }
  switch (op) {
  case TC_OP_NEG:
    if (flt) r.f = -xf; else r.i = tt_wrap(-(__int128)xi, bits);
    break;
  case TC_OP_ABS:
    if (flt) r.f = fabs(xf); else r.i = tt_wrap(xi < 0 ? -(__int128)xi : xi, bits);
    break;
  case TC_OP_BITWISE_NOT:
    if (dt == TC_DT_BOOL) r.i = !xi; else r.i = tt_wrap(-(__int128)xi - 1, bits);
    break;
  case TC_OP_RELU:   /* NaN stays, -0.0 gives 0.0 */
    if (flt) r.f = isnan(xf) ? xf : xf > 0 ? xf : 0.0; else r.i = xi > 0 ? xi : 0;
    break;
  default:
    if (!round_ref(op, x, &m)) { r.known = false; break; }
    if (flt || dt == TC_DT_BOOL) r.f = m;
    else if (op == TC_OP_SIGN) r.i = (xi > 0) - (xi < 0);
    else r.i = xi;   /* rounding an integer is the identity */
    break;
  }
  return r;
}

/* ---- operand sets (tt_vals of edge values, at most MAXV of them) ---- */
/* The divisors/exponents/counts an op accepts without a domain error. */
static void filter_rhs(tt_vals *v, tc_op op) {
  if (!tt_is_int(v->dt)) return;
  tc_check chk = tc_op_check(op);
  int w = 0;
  for (int k = 0; k < v->n; k++) {
    bool ok = chk == TC_CHECK_ZERO ? v->i[k] != 0 : (chk == TC_CHECK_NEGEXP || chk == TC_CHECK_NEGSHIFT) ? v->i[k] >= 0 : true;
    if (ok) v->i[w++] = v->i[k];
  }
  v->n = w;
  if (chk == TC_CHECK_NEGSHIFT) {  /* every count from 0 to past the width */
    for (int c = 0; c <= tt_bits(v->dt) + 1 && v->n < MAXV; c++) v->i[v->n++] = c;
  }
}

static void fmt_val(char *buf, size_t n, tc_dtype dt, int64_t i, double f) {
  if (tt_is_flt(dt)) snprintf(buf, n, "%.17g", f);
  else snprintf(buf, n, "%lld", (long long)i);
}

/* Compares out (of dtype rdt) with want[k] at each element. */
static void compare(tc_tensor *out, tc_dtype rdt, int64_t n, const ref *want, const char *what) {
  TT_CHECK(out->dtype == rdt, "%s: dtype %s, expected %s", what, tt_name(out->dtype), tt_name(rdt));
  if (out->dtype != rdt) return;
  int64_t *gi = calloc((size_t)n + 1, sizeof *gi);
  double *gf = calloc((size_t)n + 1, sizeof *gf);
  cr_assert_eq(tt_read(out, gi, gf), n, "%s: element count", what);
  for (int64_t k = 0; k < n; k++) {
    bool ok;
    if (tt_is_flt(rdt)) {
      if (want[k].tol == TOL_ANYZERO) ok = gf[k] == want[k].f || (isnan(gf[k]) && isnan(want[k].f));
      else ok = tt_close(gf[k], want[k].f, rdt, want[k].tol);
    } else {
      ok = gi[k] == want[k].i;
    }
    if (!ok) {
      char g[64], w[64];
      fmt_val(g, sizeof g, rdt, gi[k], gf[k]);
      fmt_val(w, sizeof w, rdt, want[k].i, want[k].f);
      tt_fail("%s: element %lld = %s, expected %s", what, (long long)k, g, w);
    }
  }
  free(gi);
  free(gf);
}

/* ---- binary ops ---- */
static ref ref_bin(tc_op op, const tt_vals *a, int ia, const tt_vals *b, int ib) {
  tc_dtype dt = a->dt;
  if (dt == TC_DT_BOOL) return ref_bool_bin(op, a->i[ia], b->i[ib]);
  if (tt_is_int(dt)) return ref_int_bin(op, a->i[ia], b->i[ib], tt_bits(dt));
  return ref_flt_bin(op, a->f[ia], b->f[ib], dt);
}

/* Each scalar of A op the vector vb (B's values in order), and the vector
 * va (A's) op each scalar of B, against want[i * nb + j]; kind names the
 * vectors in a failure. */
static void scalar_sides(tc_op op, tc_dtype rdt, const tt_vals *A, const tt_vals *B, tc_tensor *va, tc_tensor *vb,
                         const ref *want, const char *kind) {
  int na = A->n, nb = B->n;
  tc_err err = tt_err();
  char what[160];
  ref *w = malloc(sizeof(ref) * MAXV);
  for (int side = 0; side < 2; side++)   /* 0: scalar a[q] op vb, 1: va op scalar b[q] */
    for (int q = 0; q < (side ? nb : na); q++) {
      tc_tensor *s = tt_vals_tensor(side ? B : A, 0, NULL, &q);
      tc_tensor *o = side ? tc_binary(op, va, s, &err) : tc_binary(op, s, vb, &err);
      if (side) snprintf(what, sizeof what, "%s(%s) %s op scalar b[%d]", tc_op_name(op), tt_name(A->dt), kind, q);
      else snprintf(what, sizeof what, "%s(%s) scalar a[%d] op %s", tc_op_name(op), tt_name(A->dt), q, kind);
      cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
      int nv = side ? na : nb;
      for (int r = 0; r < nv; r++) w[r] = want[side ? (int64_t)r * nb + q : (int64_t)q * nb + r];
      compare(o, rdt, nv, w, what);
      tc_tensor_free(o); tc_tensor_free(s);
    }
  free(w);
}

static void check_binary(tc_op op, tc_dtype dt) {
  tt_vals A, B;
  tt_vals_edges(&A, dt);
  tt_vals_edges(&B, dt);
  filter_rhs(&B, op);
  tc_dtype rdt = expect_dtype(op, dt);
  int na = A.n, nb = B.n;
  int64_t P = (int64_t)na * nb;
  int *ia = malloc(sizeof(int) * (size_t)P), *ib = malloc(sizeof(int) * (size_t)P);
  ref *want = malloc(sizeof(ref) * (size_t)P);
  char what[160];
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      int64_t k = (int64_t)i * nb + j;
      ia[k] = i;
      ib[k] = j;
      want[k] = ref_bin(op, &A, i, &B, j);
      if (!want[k].known) {
        tt_fail("%s(%s) is claimed for cpu but this suite has no reference for it", tc_op_name(op), tt_name(dt));
        goto done;
      }
    }
  tc_err err = tt_err();

  /* 1. contiguous: a[k] op b[k] */
  {
    tc_tensor *ta = tt_vals_tensor(&A, 1, &P, ia), *tb = tt_vals_tensor(&B, 1, &P, ib);
    tc_tensor *o = tc_binary(op, ta, tb, &err);
    snprintf(what, sizeof what, "%s(%s) contiguous", tc_op_name(op), tt_name(dt));
    cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
    compare(o, rdt, P, want, what);
    tc_tensor_free(o); tc_tensor_free(ta); tc_tensor_free(tb);
  }
  /* 2. scalar broadcast on either side (stride 0 in the kernel) */
  {
    int *seq = malloc(sizeof(int) * MAXV);
    for (int k = 0; k < MAXV; k++) seq[k] = k;
    int64_t n_b = nb, n_a = na;
    tc_tensor *vb = tt_vals_tensor(&B, 1, &n_b, seq), *va = tt_vals_tensor(&A, 1, &n_a, seq);
    scalar_sides(op, rdt, &A, &B, va, vb, want, "vector");
    free(seq);
    tc_tensor_free(va); tc_tensor_free(vb);
  }
  /* 3. 2-D broadcast: [na, 1] op [1, nb] -> [na, nb] */
  {
    int seq[MAXV];
    for (int k = 0; k < MAXV; k++) seq[k] = k;
    int64_t sa[2] = {na, 1}, sb[2] = {1, nb};
    tc_tensor *ta = tt_vals_tensor(&A, 2, sa, seq), *tb = tt_vals_tensor(&B, 2, sb, seq);
    tc_tensor *o = tc_binary(op, ta, tb, &err);
    snprintf(what, sizeof what, "%s(%s) [n,1] op [1,m]", tc_op_name(op), tt_name(dt));
    cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
    cr_assert(o->ndim == 2 && o->shape[0] == na && o->shape[1] == nb, "%s: shape", what);
    compare(o, rdt, P, want, what);
    tc_tensor_free(o); tc_tensor_free(ta); tc_tensor_free(tb);
  }
  /* 4. strided: both operands are transposed views (inner stride != 1) */
  {
    int64_t st[2] = {nb, na};
    int *ta_idx = malloc(sizeof(int) * (size_t)P), *tb_idx = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < nb; j++)
      for (int i = 0; i < na; i++) { ta_idx[j * na + i] = i; tb_idx[j * na + i] = j; }
    tc_tensor *ba = tt_vals_tensor(&A, 2, st, ta_idx), *bb = tt_vals_tensor(&B, 2, st, tb_idx);
    int perm[2] = {1, 0};
    tc_tensor *va = tc_view_permute(ba, perm, &err), *vb = tc_view_permute(bb, perm, &err);
    cr_assert(va && vb, "permute: %s", tt_msg(&err));
    cr_assert(!tc_is_contiguous(va) || na == 1 || nb == 1);
    tc_tensor *o = tc_binary(op, va, vb, &err);
    snprintf(what, sizeof what, "%s(%s) transposed operands", tc_op_name(op), tt_name(dt));
    cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
    compare(o, rdt, P, want, what);
    tc_tensor_free(o); tc_tensor_free(va); tc_tensor_free(vb); tc_tensor_free(ba); tc_tensor_free(bb);
    free(ta_idx); free(tb_idx);
  }
  /* 5. a strided vector (every other element, stride 2) op a scalar, and a
   * scalar op a strided vector (the kernel's strided-and-stride-0 loops) */
  {
    int *ia2 = malloc(sizeof(int) * 2 * MAXV), *ib2 = malloc(sizeof(int) * 2 * MAXV);
    for (int k = 0; k < 2 * MAXV; k++) { ia2[k] = k / 2 % na; ib2[k] = k / 2 % nb; }
    int64_t l2a = 2 * (int64_t)na, l2b = 2 * (int64_t)nb;
    tc_tensor *ba = tt_vals_tensor(&A, 1, &l2a, ia2), *bb = tt_vals_tensor(&B, 1, &l2b, ib2);
    tc_tensor *va = tc_view(ba, 1, (int64_t[]){na}, (int64_t[]){2}, 0, &err);
    tc_tensor *vb = tc_view(bb, 1, (int64_t[]){nb}, (int64_t[]){2}, 1, &err);
    cr_assert(va && vb, "view: %s", tt_msg(&err));
    scalar_sides(op, rdt, &A, &B, va, vb, want, "strided vector");
    free(ia2); free(ib2);
    tc_tensor_free(va); tc_tensor_free(vb); tc_tensor_free(ba); tc_tensor_free(bb);
  }
done:
  free(ia); free(ib); free(want);
}

/* ---- unary ops ---- */
static void check_unary(tc_op op, tc_dtype dt) {
  tt_vals X;
  tt_vals_edges(&X, dt);
  tc_dtype rdt = expect_dtype(op, dt);
  int n = X.n;
  ref want[MAXV * 2];
  char what[160];
  for (int k = 0; k < n; k++) {
    want[k] = ref_unary(op, dt, X.i[k], X.f[k]);
    if (!want[k].known) {
      tt_fail("%s(%s) is claimed for cpu but this suite has no reference for it", tc_op_name(op), tt_name(dt));
      return;
    }
  }
  tc_err err = tt_err();
  int seq[MAXV * 2];
  for (int k = 0; k < MAXV * 2; k++) seq[k] = k % n;
  /* contiguous */
  int64_t len = n;
  tc_tensor *t = tt_vals_tensor(&X, 1, &len, seq);
  tc_tensor *o = tc_unary(op, t, &err);
  snprintf(what, sizeof what, "%s(%s) contiguous", tc_op_name(op), tt_name(dt));
  cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
  compare(o, rdt, n, want, what);
  tc_tensor_free(o);
  tc_tensor_free(t);
  /* strided: a [n, 2] tensor transposed to [2, n], inner stride 2 */
  int64_t sh[2] = {n, 2};
  int idx2[MAXV * 2];
  for (int k = 0; k < n; k++) idx2[2 * k] = idx2[2 * k + 1] = k;
  tc_tensor *b = tt_vals_tensor(&X, 2, sh, idx2);
  int perm[2] = {1, 0};
  tc_tensor *v = tc_view_permute(b, perm, &err);
  cr_assert_not_null(v);
  o = tc_unary(op, v, &err);
  snprintf(what, sizeof what, "%s(%s) strided", tc_op_name(op), tt_name(dt));
  cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
  ref w2[MAXV * 2];
  for (int k = 0; k < 2 * n; k++) w2[k] = want[k % n];
  compare(o, rdt, 2 * n, w2, what);
  tc_tensor_free(o); tc_tensor_free(v); tc_tensor_free(b);
  /* stride 0: one element broadcast to [3] */
  for (int k = 0; k < n; k++) {
    tc_tensor *s = tt_vals_tensor(&X, 0, NULL, &k);
    int64_t three = 3;
    tc_tensor *bs = tc_view_broadcast(s, 1, &three, &err);
    cr_assert_not_null(bs);
    o = tc_unary(op, bs, &err);
    snprintf(what, sizeof what, "%s(%s) broadcast element %d", tc_op_name(op), tt_name(dt), k);
    cr_assert_not_null(o, "%s: %s", what, tt_msg(&err));
    ref w3[3] = {want[k], want[k], want[k]};
    compare(o, rdt, 3, w3, what);
    tc_tensor_free(o); tc_tensor_free(bs); tc_tensor_free(s);
  }
}

/* One test per kind family, looping over the op table and dtypes. */
static void run_family(bool (*pick)(tkind), void (*check)(tc_op, tc_dtype)) {
  int ran = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    if (!pick(kind_of((tc_op)op))) continue;
    for (int dt = 0; dt < TT_NDT; dt++) {
      if (!tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
      check((tc_op)op, (tc_dtype)dt);
      ran++;
    }
  }
  cr_log_info("%d (op, dtype) pairs checked", ran);
  cr_assert_gt(ran, 0);
  TT_DONE();
}

static bool pick_arith(tkind k) { return k == K_ARITH || k == K_MATH2; }
static bool pick_bits(tkind k) { return k == K_BITS; }
static bool pick_cmp(tkind k) { return k == K_CMP; }
static bool pick_un(tkind k) { return k == K_UNARY || k == K_LOGICAL || k == K_PRED; }
static bool pick_math(tkind k) { return k == K_MATH || k == K_ROUND; }

Test(elementwise, arithmetic_all_claimed_dtypes) { run_family(pick_arith, check_binary); }
Test(elementwise, bitwise_and_shifts_all_claimed_dtypes) { run_family(pick_bits, check_binary); }
Test(elementwise, comparisons_all_claimed_dtypes) { run_family(pick_cmp, check_binary); }
Test(elementwise, unary_logical_predicates_all_claimed_dtypes) { run_family(pick_un, check_unary); }
Test(elementwise, math_and_rounding_all_claimed_dtypes) { run_family(pick_math, check_unary); }

/* The kinds above must cover every elementwise kind in the table. */
Test(elementwise, every_elementwise_op_is_in_a_family) {
  for (int op = 0; op < TC_OP_COUNT; op++) {
    tkind k = kind_of((tc_op)op);
    if (is_binary_kind(k)) cr_assert(pick_arith(k) || pick_bits(k) || pick_cmp(k));
    if (is_unary_kind(k)) cr_assert(pick_un(k) || pick_math(k));
  }
}

/* ---- spot checks of the integer contract, stated literally ---- */
static int64_t bin_i(tc_op op, tc_dtype dt, int64_t a, int64_t b) {
  tc_err err = tt_err();
  tc_tensor *ta = tt_iscalar(dt, a), *tb = tt_iscalar(dt, b);
  tc_tensor *o = tc_binary(op, ta, tb, &err);
  cr_assert_not_null(o, "%s: %s", tc_op_name(op), tt_msg(&err));
  cr_assert_eq(o->dtype, dt);
  int64_t r;
  tt_read(o, &r, NULL);
  tc_tensor_free(o); tc_tensor_free(ta); tc_tensor_free(tb);
  return r;
}

static int64_t un_i(tc_op op, tc_dtype dt, int64_t a) {
  tc_err err = tt_err();
  tc_tensor *ta = tt_iscalar(dt, a);
  tc_tensor *o = tc_unary(op, ta, &err);
  cr_assert_not_null(o, "%s: %s", tc_op_name(op), tt_msg(&err));
  cr_assert_eq(o->dtype, dt);
  int64_t r;
  tt_read(o, &r, NULL);
  tc_tensor_free(o); tc_tensor_free(ta);
  return r;
}

Test(elementwise, integer_contract_spec_4_1) {
  const tc_dtype ints[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64};
  for (int k = 0; k < 4; k++) {
    tc_dtype dt = ints[k];
    int64_t lo = tt_min(dt), hi = tt_max(dt);
    cr_expect_eq(bin_i(TC_OP_DIV, dt, lo, -1), lo, "%s MIN / -1", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_REM, dt, lo, -1), 0, "%s MIN %% -1", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, lo, -1), lo, "%s MIN // -1", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_MOD, dt, lo, -1), 0, "%s mod(MIN, -1)", tt_name(dt));
    cr_expect_eq(un_i(TC_OP_NEG, dt, lo), lo, "%s neg(MIN)", tt_name(dt));
    cr_expect_eq(un_i(TC_OP_ABS, dt, lo), lo, "%s abs(MIN)", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_ADD, dt, hi, 1), lo, "%s MAX + 1", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_MUL, dt, hi, 2), -2, "%s MAX * 2", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_SUB, dt, lo, 1), hi, "%s MIN - 1", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, 0, 0), 1, "%s 0 ** 0", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, 2, tt_bits(dt)), 0, "%s 2 ** width", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, 2, tt_bits(dt) - 1), lo, "%s 2 ** (width-1)", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, -1, hi), -1, "%s -1 ** MAX", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, hi, 2), 1, "%s MAX ** 2", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, lo, 2), 0, "%s MIN ** 2", tt_name(dt));
    /* 3 has order 2^(w-2) modulo 2^w */
    int64_t ord = (int64_t)1 << (tt_bits(dt) - 2);
    cr_expect_eq(bin_i(TC_OP_POW, dt, 3, ord), 1, "%s 3 ** 2^(w-2)", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, 3, ord + 1), 3, "%s 3 ** (2^(w-2)+1)", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_POW, dt, -3, 3), -27, "%s -3 ** 3", tt_name(dt));
    /* floor division and modulo signs */
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, 7, 2), 3);
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, -7, 2), -4);
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, 7, -2), -4);
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, -7, -2), 3);
    cr_expect_eq(bin_i(TC_OP_MOD, dt, 7, 2), 1);
    cr_expect_eq(bin_i(TC_OP_MOD, dt, -7, 2), 1);
    cr_expect_eq(bin_i(TC_OP_MOD, dt, 7, -2), -1);
    cr_expect_eq(bin_i(TC_OP_MOD, dt, -7, -2), -1);
    cr_expect_eq(bin_i(TC_OP_REM, dt, -7, 2), -1);
    cr_expect_eq(bin_i(TC_OP_REM, dt, 7, -2), 1);
    cr_expect_eq(bin_i(TC_OP_DIV, dt, -7, 2), -3);
    cr_expect_eq(bin_i(TC_OP_MOD, dt, lo, hi), hi - 1, "%s mod(MIN, MAX)", tt_name(dt));
    cr_expect_eq(bin_i(TC_OP_FLOOR_DIV, dt, lo, hi), -2, "%s MIN // MAX", tt_name(dt));
    /* shifts */
    cr_expect_eq(bin_i(TC_OP_SHIFT_LEFT, dt, 1, tt_bits(dt)), 0);
    cr_expect_eq(bin_i(TC_OP_SHIFT_LEFT, dt, 1, tt_bits(dt) - 1), lo);
    cr_expect_eq(bin_i(TC_OP_SHIFT_LEFT, dt, -1, hi), 0);
    cr_expect_eq(bin_i(TC_OP_SHIFT_RIGHT, dt, -5, tt_bits(dt)), -1);
    cr_expect_eq(bin_i(TC_OP_SHIFT_RIGHT, dt, 5, hi), 0);
    cr_expect_eq(bin_i(TC_OP_SHIFT_RIGHT, dt, -5, 1), -3);
    cr_expect_eq(bin_i(TC_OP_SHIFT_RIGHT, dt, lo, tt_bits(dt) - 1), -1);
  }
}

/* Naive repeated multiplication agrees with the kernel for small exponents. */
Test(elementwise, integer_pow_matches_repeated_multiply) {
  const tc_dtype ints[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64};
  for (int k = 0; k < 4; k++) {
    tc_dtype dt = ints[k];
    int bits = tt_bits(dt);
    int64_t bases[] = {0, 1, -1, 2, -2, 3, -3, 7, 10, 123, -123, tt_max(dt), tt_min(dt), tt_min(dt) + 1};
    int nb = sizeof bases / sizeof bases[0];
    int ne = tt_max(dt) < 100 ? (int)tt_max(dt) + 1 : 100;
    int64_t n = (int64_t)nb * ne;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)n), *e = malloc(sizeof(int64_t) * (size_t)n),
            *got = malloc(sizeof(int64_t) * (size_t)n);
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < ne; j++) { a[i * ne + j] = tt_wrap(bases[i], bits); e[i * ne + j] = j; }
    tc_tensor *ta = tt_ivec(dt, n, a), *te = tt_ivec(dt, n, e);
    tc_err err = tt_err();
    tc_tensor *o = tc_binary(TC_OP_POW, ta, te, &err);
    cr_assert_not_null(o, "%s", tt_msg(&err));
    tt_read(o, got, NULL);
    for (int64_t q = 0; q < n; q++) {
      int64_t r = 1;
      for (int64_t m = 0; m < e[q]; m++) r = tt_wrap((__int128)r * a[q], bits);
      TT_CHECK(got[q] == r, "%s: %lld ** %lld = %lld, expected %lld", tt_name(dt), (long long)a[q],
               (long long)e[q], (long long)got[q], (long long)r);
    }
    tc_tensor_free(o); tc_tensor_free(ta); tc_tensor_free(te);
    free(a); free(e); free(got);
  }
  TT_DONE();
}

/* ---- floats: IEEE specials and NaN propagation ---- */
static double bin_f(tc_op op, tc_dtype dt, double a, double b) {
  tc_err err = tt_err();
  tc_tensor *ta = tt_fscalar(dt, a), *tb = tt_fscalar(dt, b);
  tc_tensor *o = tc_binary(op, ta, tb, &err);
  cr_assert_not_null(o, "%s: %s", tc_op_name(op), tt_msg(&err));
  double r;
  tt_read(o, NULL, &r);
  tc_tensor_free(o); tc_tensor_free(ta); tc_tensor_free(tb);
  return r;
}

Test(elementwise, float_specials_spec_4_2) {
  const tc_dtype flts[] = {TC_DT_BF16, TC_DT_F16, TC_DT_F32, TC_DT_F64};
  for (int k = 0; k < 4; k++) {
    tc_dtype dt = flts[k];
    cr_expect(isinf(bin_f(TC_OP_DIV, dt, 1, 0)) && bin_f(TC_OP_DIV, dt, 1, 0) > 0, "%s 1/0", tt_name(dt));
    cr_expect(isinf(bin_f(TC_OP_DIV, dt, 1, -0.0)) && bin_f(TC_OP_DIV, dt, 1, -0.0) < 0, "%s 1/-0", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_DIV, dt, 0, 0)), "%s 0/0", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_REM, dt, 1, 0)), "%s rem(1, 0)", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_REM, dt, -7, 2), -1, "%s rem sign of dividend", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_MOD, dt, -7, 2), 1, "%s mod sign of divisor", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_MOD, dt, 7, -2), -1, "%s mod sign of divisor", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_FLOOR_DIV, dt, -7, 2), -4, "%s floor_div", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_MAXIMUM, dt, NAN, 1)), "%s maximum(NaN, 1)", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_MAXIMUM, dt, 1, NAN)), "%s maximum(1, NaN)", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_MINIMUM, dt, NAN, 1)), "%s minimum(NaN, 1)", tt_name(dt));
    cr_expect(isnan(bin_f(TC_OP_MINIMUM, dt, -INFINITY, NAN)), "%s minimum(-inf, NaN)", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_POW, dt, 0, 0), 1, "%s 0 ** 0", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_POW, dt, NAN, 0), 1, "%s NaN ** 0", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_POW, dt, 2, -1), 0.5, "%s 2 ** -1", tt_name(dt));
    double big = tt_maxf(dt);
    cr_expect(isinf(bin_f(TC_OP_ADD, dt, big, big)), "%s MAX + MAX overflows to inf", tt_name(dt));
    double dm = tt_denorm_min(dt);
    cr_expect_eq(bin_f(TC_OP_ADD, dt, dm, dm), 2 * dm, "%s subnormal sum", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_MUL, dt, dm, 0.5), 0, "%s half the least subnormal ties to 0", tt_name(dt));
    cr_expect_eq(bin_f(TC_OP_MUL, dt, 3 * dm, 0.5), 2 * dm, "%s 1.5 subnormals ties to even", tt_name(dt));
  }
}

/* bf16/f16 compute in f32 and round once: the result of each op is the
 * correctly rounded exact result, even where rounding the exact value to
 * f32 first would land on a bf16/f16 tie. */
Test(elementwise, half_types_round_once) {
  /* bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7; (1 + 2^-8) * (1 + 2^-16)
   * is just above it. Its f32 rounding is 1 + 2^-8 + 2^-16 (exact), so one
   * rounding gives 1 + 2^-7. */
  double a = 1 + 0x1p-7, b = 1 + 0x1p-7;  /* exact product 1 + 2^-6 + 2^-14 */
  double p = bin_f(TC_OP_MUL, TC_DT_BF16, a, b);
  cr_expect_eq(p, tt_round(a * b, TC_DT_BF16), "bf16 mul %.17g", p);
  cr_expect_eq(p, 1 + 0x1p-6, "bf16 mul rounds the exact product");
  /* f16: 2049 is not representable (ulp 2 above 2048); 2048 + 1 ties to
   * even (2048); 2048 + 3 rounds to 2052. */
  cr_expect_eq(bin_f(TC_OP_ADD, TC_DT_F16, 2048, 1), 2048);
  cr_expect_eq(bin_f(TC_OP_ADD, TC_DT_F16, 2048, 3), 2052);
  /* division: 1/3 in f16 is the nearest f16 to the exact quotient */
  cr_expect_eq(bin_f(TC_OP_DIV, TC_DT_F16, 1, 3), tt_round(1.0 / 3.0, TC_DT_F16));
  cr_expect_eq(bin_f(TC_OP_DIV, TC_DT_BF16, 1, 3), tt_round(1.0 / 3.0, TC_DT_BF16));
  /* an intermediate beyond the format's range is not kept: each op rounds */
  cr_expect(isinf(bin_f(TC_OP_MUL, TC_DT_F16, 65504, 2)));
  cr_expect(isinf(bin_f(TC_OP_ADD, TC_DT_BF16, tt_maxf(TC_DT_BF16), tt_maxf(TC_DT_BF16))));
  /* f16 subnormal results */
  cr_expect_eq(bin_f(TC_OP_DIV, TC_DT_F16, 0x1p-14, 4), 0x1p-16);
  cr_expect_eq(bin_f(TC_OP_MUL, TC_DT_F16, 0x1p-12, 0x1p-12), 0x1p-24);
}

/* Random operands against the reference: the kernels' vector paths. */
Test(elementwise, random_operands_long_vectors) {
  const tc_op ops[] = {TC_OP_ADD, TC_OP_SUB, TC_OP_MUL, TC_OP_DIV, TC_OP_REM, TC_OP_FLOOR_DIV, TC_OP_MOD,
                       TC_OP_MAXIMUM, TC_OP_MINIMUM, TC_OP_LESS};
  uint64_t s = 42;
  const int64_t n = 5003;   /* not a multiple of any vector width */
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (dt == TC_DT_BOOL) continue;
    int64_t *ai = malloc(sizeof(int64_t) * (size_t)n), *bi = malloc(sizeof(int64_t) * (size_t)n);
    double *af = malloc(sizeof(double) * (size_t)n), *bf = malloc(sizeof(double) * (size_t)n);
    for (int64_t k = 0; k < n; k++) {
      int bits = tt_bits((tc_dtype)dt);
      ai[k] = tt_wrap((__int128)(int64_t)tt_rand(&s), bits);
      bi[k] = tt_wrap((__int128)(int64_t)(tt_rand(&s) >> (tt_rand(&s) % 64)), bits);
      if (bi[k] == 0) bi[k] = 1;
      af[k] = tt_round((tt_rand01(&s) - 0.5) * 1e3, (tc_dtype)dt);
      bf[k] = tt_round((tt_rand01(&s) - 0.5) * 10, (tc_dtype)dt);
    }
    tc_tensor *ta = tt_tensor((tc_dtype)dt, 1, &n, ai, af), *tb = tt_tensor((tc_dtype)dt, 1, &n, bi, bf);
    for (size_t q = 0; q < sizeof ops / sizeof ops[0]; q++) {
      tc_err err = tt_err();
      tc_tensor *o = tc_binary(ops[q], ta, tb, &err);
      cr_assert_not_null(o, "%s(%s): %s", tc_op_name(ops[q]), tt_name((tc_dtype)dt), tt_msg(&err));
      ref *want = malloc(sizeof(ref) * (size_t)n);
      for (int64_t k = 0; k < n; k++)
        want[k] = tt_is_flt((tc_dtype)dt) ? ref_flt_bin(ops[q], af[k], bf[k], (tc_dtype)dt)
                                          : ref_int_bin(ops[q], ai[k], bi[k], tt_bits((tc_dtype)dt));
      char what[96];
      snprintf(what, sizeof what, "%s(%s) random", tc_op_name(ops[q]), tt_name((tc_dtype)dt));
      compare(o, expect_dtype(ops[q], (tc_dtype)dt), n, want, what);
      free(want);
      tc_tensor_free(o);
    }
    tc_tensor_free(ta); tc_tensor_free(tb);
    free(ai); free(bi); free(af); free(bf);
  }
  TT_DONE();
}

/* ---- result dtypes of SPEC 4.3 ---- */
Test(elementwise, math_on_int_and_bool_is_f64_rounding_keeps_ints) {
  tc_err err = tt_err();
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (tt_is_flt((tc_dtype)dt)) continue;
    tc_tensor *x = tt_iscalar((tc_dtype)dt, 1);
    for (int op = 0; op < TC_OP_COUNT; op++) {
      tkind k = kind_of((tc_op)op);
      if (k != K_MATH && k != K_ROUND) continue;
      tc_tensor *o = tc_unary((tc_op)op, x, &err);
      cr_assert_not_null(o, "%s(%s): %s", tc_op_name((tc_op)op), tt_name((tc_dtype)dt), tt_msg(&err));
      tc_dtype want = k == K_MATH || dt == TC_DT_BOOL ? TC_DT_F64 : (tc_dtype)dt;
      cr_expect_eq(o->dtype, want, "%s(%s) gives %s", tc_op_name((tc_op)op), tt_name((tc_dtype)dt),
                   tt_name(o->dtype));
      tc_tensor_free(o);
    }
    tc_tensor_free(x);
  }
  /* sign keeps integer dtypes (SPEC 4.3), including for MIN */
  for (int dt = TC_DT_I8; dt <= TC_DT_I64; dt++) {
    cr_expect_eq(un_i(TC_OP_SIGN, (tc_dtype)dt, tt_min((tc_dtype)dt)), -1);
    cr_expect_eq(un_i(TC_OP_SIGN, (tc_dtype)dt, 0), 0);
  }
  /* exp(i64 1) is computed in f64 */
  tc_tensor *one = tt_iscalar(TC_DT_I64, 1);
  tc_tensor *e = tc_unary(TC_OP_EXP, one, &err);
  double v;
  tt_read(e, NULL, &v);
  cr_expect_eq(v, exp(1.0));
  tc_tensor_free(e);
  tc_tensor_free(one);
}

Test(elementwise, round_is_half_to_even) {
  const double x[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999999999999994, 4503599627370495.5, -0.0};
  const double want[] = {0, 2, 2, -0.0, -2, -2, 4, 0, 4503599627370496, -0.0};
  int n = sizeof x / sizeof x[0];
  tc_tensor *t = tt_fvec(TC_DT_F64, n, x);
  tc_err err = tt_err();
  tc_tensor *o = tc_unary(TC_OP_ROUND, t, &err);
  cr_assert_not_null(o);
  double got[16];
  tt_read(o, NULL, got);
  for (int k = 0; k < n; k++)
    cr_expect(tt_close(got[k], want[k], TC_DT_F64, 0), "round(%.17g) = %.17g, expected %.17g", x[k], got[k], want[k]);
  tc_tensor_free(o);
  tc_tensor_free(t);
}

/* Runs case on the edge values of every dtype for which the CPU claims op,
 * and asserts that is all of them. */
static void for_claimed(tc_op op, void (*run)(const tt_vals *X)) {
  int ran = 0;
  for (int dt = 0; dt < TT_NDT; dt++) {
    if (!tc_op_supported(op, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
    ran++;
    tt_vals X;
    tt_vals_edges(&X, (tc_dtype)dt);
    run(&X);
  }
  cr_assert_eq(ran, TT_NDT);
  TT_DONE();
}

/* ---- where and clip ---- */
static void where_case(const tt_vals *X) {
  tc_err err = tt_err();
  tc_dtype dt = X->dt;
  int n = X->n;
  int ia[MAXV] = {0}, ib[MAXV] = {0};
  int64_t cv[MAXV];
  for (int k = 0; k < n; k++) { ia[k] = k; ib[k] = n - 1 - k; cv[k] = (k * 7 + 3) % 3 == 0; }
  int64_t len = n;
  tc_tensor *a = tt_vals_tensor(X, 1, &len, ia), *b = tt_vals_tensor(X, 1, &len, ib), *c = tt_ivec(TC_DT_BOOL, n, cv);
  ref want[MAXV];
  for (int k = 0; k < n; k++) {
    int src = cv[k] ? ia[k] : ib[k];
    want[k] = (ref){true, X->i[src], X->f[src], 0};
  }
  tc_tensor *o = tc_where(c, a, b, &err);
  cr_assert_not_null(o, "where(%s): %s", tt_name(dt), tt_msg(&err));
  compare(o, dt, n, want, "where full");
  tc_tensor_free(o);
  /* scalar condition and scalar b, broadcast against a */
  for (int cval = 0; cval < 2; cval++) {
    tc_tensor *cs = tt_iscalar(TC_DT_BOOL, cval);
    int zero = 0;
    tc_tensor *bs = tt_vals_tensor(X, 0, NULL, &zero);
    o = tc_where(cs, a, bs, &err);
    cr_assert_not_null(o, "%s", tt_msg(&err));
    for (int k = 0; k < n; k++) {
      int src = cval ? k : 0;
      want[k] = (ref){true, X->i[src], X->f[src], 0};
    }
    compare(o, dt, n, want, "where scalar cond");
    tc_tensor_free(o); tc_tensor_free(cs); tc_tensor_free(bs);
  }
  /* [n,1] condition against [1,n] values */
  int64_t sc[2] = {n, 1}, sa[2] = {1, n};
  tc_tensor *c2 = tt_tensor(TC_DT_BOOL, 2, sc, cv, NULL), *a2 = tt_vals_tensor(X, 2, sa, ia);
  o = tc_where(c2, a2, b, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  ref *w2 = malloc(sizeof(ref) * (size_t)(n * n));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int src = cv[i] ? ia[j] : ib[j];
      w2[i * n + j] = (ref){true, X->i[src], X->f[src], 0};
    }
  compare(o, dt, (int64_t)n * n, w2, "where 2-D broadcast");
  free(w2);
  tc_tensor_free(o); tc_tensor_free(c2); tc_tensor_free(a2);
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c);
}

Test(elementwise, where_all_claimed_dtypes) { for_claimed(TC_OP_WHERE, where_case); }

Test(elementwise, where_needs_bool_condition) {
  tc_err err = tt_err();
  tc_tensor *c = tt_iscalar(TC_DT_I32, 1), *a = tt_iscalar(TC_DT_I32, 2);
  cr_assert_null(tc_where(c, a, a, &err));
  cr_expect_eq(err.code, TC_E_BAD_ARG);
  tc_tensor_free(c);
  tc_tensor_free(a);
}

static void clip_case(const tt_vals *X) {
  tc_err err = tt_err();
  tc_dtype dt = X->dt;
  int n = X->n, seq[MAXV];
  for (int k = 0; k < n; k++) seq[k] = k;
  int64_t len = n;
  tc_tensor *x = tt_vals_tensor(X, 1, &len, seq);
  /* (lo, hi) bounds, as indices into a small table of the dtype's values */
  double lf[] = {-1, 0, -INFINITY, 2, NAN}, hf[] = {1, 0, INFINITY, -2, 1};
  int64_t li[] = {-1, 0, tt_min(dt), 2, 0}, hi[] = {1, 0, tt_max(dt), -2, 1};
  if (dt == TC_DT_BOOL) { li[0] = 0; li[3] = 1; hi[3] = 0; }
  int nb = tt_is_flt(dt) ? 5 : 4;
  for (int q = 0; q < nb; q++) {
    tc_tensor *lo = tt_tensor(dt, 0, NULL, &li[q], &lf[q]);
    tc_tensor *hi_t = tt_tensor(dt, 0, NULL, &hi[q], &hf[q]);
    tc_tensor *o = tc_clip(x, lo, hi_t, &err);
    cr_assert_not_null(o, "clip(%s): %s", tt_name(dt), tt_msg(&err));
    ref want[MAXV];
    for (int k = 0; k < n; k++) {
      want[k] = (ref){true, 0, 0, 0};
      if (tt_is_flt(dt)) {
        double v = X->f[k], l = tt_round(lf[q], dt), h = tt_round(hf[q], dt);
        double m = isnan(v) || isnan(l) ? NAN : v > l ? v : l;
        want[k].f = isnan(m) || isnan(h) ? NAN : m < h ? m : h;
        if (want[k].f == 0) want[k].tol = TOL_ANYZERO;
      } else {
        int64_t m = X->i[k] > li[q] ? X->i[k] : li[q];
        want[k].i = m < hi[q] ? m : hi[q];
      }
    }
    char what[64];
    snprintf(what, sizeof what, "clip(%s) bounds %d", tt_name(dt), q);
    compare(o, dt, n, want, what);
    tc_tensor_free(o); tc_tensor_free(lo); tc_tensor_free(hi_t);
  }
  tc_tensor_free(x);
}

Test(elementwise, clip_all_claimed_dtypes) { for_claimed(TC_OP_CLIP, clip_case); }

Test(elementwise, clip_errors_name_clip) {
  tc_err err = tt_err();
  int64_t s2 = 2, s3 = 3;
  int64_t v[3] = {1, 2, 3};
  tc_tensor *x = tt_tensor(TC_DT_I32, 1, &s3, v, NULL), *lo = tt_tensor(TC_DT_I32, 1, &s2, v, NULL);
  tc_tensor *hi = tt_iscalar(TC_DT_I32, 2);
  cr_assert_null(tc_clip(x, lo, hi, &err));
  cr_expect_eq(err.code, TC_E_SHAPE);
  cr_expect_eq(err.op, TC_OP_CLIP);
  cr_expect(strncmp(tt_msg(&err), "clip: ", 6) == 0, "message: %s", tt_msg(&err));
  tc_tensor_free(x); tc_tensor_free(lo); tc_tensor_free(hi);
}

/* High rank with axes that cannot be merged, and rows longer than the
 * kernel's chunk, split in the middle. */
static int64_t coord_value(const int64_t *c, int nd) {
  int64_t v = 0;
  for (int d = 0; d < nd; d++) v = v * 3 + c[d] + d;
  return v;
}

Test(elementwise, high_rank_unmergeable_views) {
  enum { ND = 12 };
  int64_t shape[ND], bshape[ND], n = 1, nb = 1;
  for (int d = 0; d < ND; d++) { shape[d] = 2; bshape[d] = d % 3 == 1 ? 1 : 2; n *= 2; nb *= bshape[d]; }
  /* a: storage in reversed axis order, viewed through a reversing permutation */
  int64_t *av = malloc(sizeof(int64_t) * (size_t)n), *bv = malloc(sizeof(int64_t) * (size_t)nb);
  for (int64_t k = 0; k < n; k++) {
    int64_t c[ND], r = k;   /* k is the storage index of the reversed layout */
    for (int d = 0; d < ND; d++) { c[d] = r % 2; r /= 2; }   /* c[d] is logical coordinate d */
    av[k] = coord_value(c, ND);
  }
  for (int64_t k = 0; k < nb; k++) bv[k] = k * 7 - 100;
  tc_tensor *base = tt_tensor(TC_DT_I32, ND, shape, av, NULL), *b = tt_tensor(TC_DT_I32, ND, bshape, bv, NULL);
  int perm[ND];
  for (int d = 0; d < ND; d++) perm[d] = ND - 1 - d;
  tc_err err = tt_err();
  tc_tensor *a = tc_view_permute(base, perm, &err);
  cr_assert_not_null(a);
  tc_tensor *o = tc_binary(TC_OP_SUB, a, b, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  cr_assert_eq(o->ndim, ND);
  int64_t *got = malloc(sizeof(int64_t) * (size_t)n);
  tt_read(o, got, NULL);
  for (int64_t k = 0; k < n; k++) {
    int64_t c[ND], r = k, bk = 0;
    for (int d = ND - 1; d >= 0; d--) { c[d] = r % 2; r /= 2; }
    for (int d = 0; d < ND; d++) bk = bk * bshape[d] + (bshape[d] == 1 ? 0 : c[d]);
    TT_CHECK(got[k] == coord_value(c, ND) - bv[bk], "element %lld", (long long)k);
  }
  tc_tensor_free(o); tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(base);
  free(av); free(bv); free(got);
  TT_DONE();
}

Test(elementwise, rows_longer_than_a_chunk) {
  const int64_t rows = 3, cols = 200003;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(rows * cols));
  for (int64_t k = 0; k < rows * cols; k++) v[k] = k % 1000003;
  /* storage [cols, rows], viewed as [rows, cols]: inner stride 3 */
  const int64_t sh[2] = {cols, rows};
  tc_tensor *base = tt_tensor(TC_DT_I64, 2, sh, v, NULL);
  int perm[2] = {1, 0};
  tc_err err = tt_err();
  tc_tensor *a = tc_view_permute(base, perm, &err);
  tc_tensor *two = tt_iscalar(TC_DT_I64, 2);
  tc_tensor *o = tc_binary(TC_OP_MUL, a, two, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  int64_t *got = malloc(sizeof(int64_t) * (size_t)(rows * cols));
  tt_read(o, got, NULL);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      TT_CHECK(got[i * cols + j] == 2 * v[j * rows + i], "(%lld, %lld)", (long long)i, (long long)j);
  tc_tensor_free(o); tc_tensor_free(two); tc_tensor_free(a); tc_tensor_free(base);
  free(v); free(got);
  TT_DONE();
}

/* ---- the CPU's instruction-set builds of the kernels ---- */
/* Whether a and b hold the same element: the same bits, or both NaN (a
 * vectorised loop may return the other operand's NaN). */
static bool same_elem(tc_dtype dt, const unsigned char *a, const unsigned char *b) {
  size_t es = tc_dtype_size(dt);
  if (memcmp(a, b, es) == 0) return true;
  if (!tt_is_flt(dt)) return false;
  uint64_t u = 0, v = 0;
  memcpy(&u, a, es);
  memcpy(&v, b, es);
  uint64_t exp = es == 8 ? 0x7ff0000000000000u : es == 4 ? 0x7f800000u : dt == TC_DT_F16 ? 0x7c00u : 0x7f80u;
  return (u & exp) == exp && (u & ~exp & ~(1ull << (8 * es - 1))) && (v & exp) == exp &&
         (v & ~exp & ~(1ull << (8 * es - 1)));
}

/* n random elements of dt: any bit pattern for floats, any value for
 * integers (small, odd and positive when `divisor`: a valid divisor,
 * shift count and exponent), 0/1 for bool. */
static tc_tensor *random_bits(tc_dtype dt, int64_t n, bool divisor, uint64_t *s) {
  size_t es = tc_dtype_size(dt);
  unsigned char *buf = malloc((size_t)n * es);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = tt_xorshift(s);
    if (dt == TC_DT_BOOL) r &= 1;
    else if (divisor && !tt_is_flt(dt)) r = (r & 0x3f) | 1;
    memcpy(buf + (size_t)i * es, &r, es);   /* little-endian: the low bytes */
  }
  tc_err err = tt_err();
  tc_tensor *t = tc_tensor_from_host(dt, 1, &n, buf, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  free(buf);
  return t;
}

static tc_tensor *run_ew_op(tc_op op, tc_tensor *const *in, tc_err *err) {
  switch (tc_op_family(op)) {
  case TC_FAM_BIN: case TC_FAM_CMP: return tc_binary(op, in[0], in[1], err);
  case TC_FAM_UN: case TC_FAM_PRED: return tc_unary(op, in[0], err);
  default: return tc_where(in[2], in[0], in[1], err);
  }
}

/* i64 /, //, % and mod by one divisor (a broadcast scalar) take a multiply
 * by a magic number (backend/cpu/ew.c): every quotient and remainder must
 * be the exact one, for divisors of every size and sign (each power of two,
 * the extremes, random ones) and numerators at the edges, near multiples
 * of the divisor and random, in rows long enough to take that path. */
Test(elementwise, i64_division_by_one_divisor) {
  int64_t divs[200];
  int nd = 0;
  const int64_t fixed[] = {2, -2, 3, -3, 5, 7, -7, 10, 641, -1000, 6700417, INT64_MAX, -INT64_MAX, INT64_MIN + 2,
                           (int64_t)1 << 32 | 1, 4052555153018976267, -4052555153018976267, 0, 1, -1, INT64_MIN};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) divs[nd++] = fixed[i];
  for (int k = 1; k < 63; k++) { divs[nd++] = (int64_t)1 << k; divs[nd++] = -((int64_t)1 << k); }
  uint64_t seed = 2024;
  for (int i = 0; i < 30; i++) {
    int64_t v = (int64_t)tt_rand(&seed);
    divs[nd++] = i % 2 ? v : v % 100000;
  }
  enum { N = 300 };
  static const tc_op ops[] = {TC_OP_DIV, TC_OP_REM, TC_OP_FLOOR_DIV, TC_OP_MOD};
  int64_t num[N];
  int bad = 0, checked = 0;
  for (int di = 0; di < nd; di++) {
    int64_t d = divs[di];
    if (d == 0) continue;   /* division_by_zero, before any kernel */
    int n = 0;
    const int64_t edge[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, 0, 1, -1, 2, -2};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) num[n++] = edge[i];
    for (int k = -3; k <= 3; k++)
      for (int o = -1; o <= 1; o++) {
        __int128 v = (__int128)d * k + o;
        if (v >= INT64_MIN && v <= INT64_MAX) num[n++] = (int64_t)v;
      }
    for (; n < N; n++) num[n] = n % 3 ? (int64_t)tt_rand(&seed) : (int64_t)(tt_rand(&seed) % 20001) - 10000;
    int64_t len = N;
    tc_tensor *x = tt_tensor(TC_DT_I64, 1, &len, num, NULL), *y = tt_iscalar(TC_DT_I64, d);
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      tc_err err = tt_err();
      tc_tensor *r = tc_binary(ops[o], x, y, &err);
      cr_assert_not_null(r, "%s by %lld: %s", tc_op_name(ops[o]), (long long)d, tt_msg(&err));
      int64_t got[N];
      tt_read(r, got, NULL);
      for (int i = 0; i < N; i++, checked++) {
        int64_t want = ref_int_bin(ops[o], num[i], d, 64).i;
        if (got[i] != want && ++bad <= 5)
          cr_log_error("%lld %s %lld = %lld, expected %lld", (long long)num[i], tc_op_name(ops[o]), (long long)d,
                       (long long)got[i], (long long)want);
      }
      tc_tensor_free(r);
    }
    tc_tensor_free(x);
    tc_tensor_free(y);
  }
  cr_assert_eq(bad, 0, "%d of %d wrong", bad, checked);
}

/* u64 /, //, % and mod by one divisor take the round-up magic number
 * (backend/cpu/ew.c, its high product from 32-bit halves in vector lanes):
 * every quotient and remainder exact, for divisors 1 to 2^64 - 1 (each power
 * of two, those just beside 2^32, 2^63 and 2^64, random ones) and
 * numerators at the edges, near multiples of the divisor and random. */
Test(elementwise, u64_division_by_one_divisor) {
  uint64_t divs[200];
  int nd = 0;
  const uint64_t fixed[] = {1, 3, 5, 6, 7, 10, 641, 1000, 6700417, UINT64_MAX, UINT64_MAX - 1, ((uint64_t)1 << 63) + 1,
                            ((uint64_t)1 << 63) - 1, ((uint64_t)1 << 32) + 1, ((uint64_t)1 << 32) - 1, 4052555153018976267u,
                            14757395258967641293u};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) divs[nd++] = fixed[i];
  for (int k = 1; k < 64; k++) divs[nd++] = (uint64_t)1 << k;
  uint64_t seed = 2026;
  for (int i = 0; i < 40; i++) {
    uint64_t v = tt_rand(&seed) >> (i % 4 * 16);   /* 64, 48, 32 and 16 bits */
    divs[nd++] = v ? v : 9;
  }
  enum { N = 300 };
  static const tc_op ops[] = {TC_OP_DIV, TC_OP_REM, TC_OP_FLOOR_DIV, TC_OP_MOD};
  int64_t num[N];
  int bad = 0, checked = 0;
  for (int di = 0; di < nd; di++) {
    uint64_t d = divs[di];
    int n = 0;
    const uint64_t edge[] = {0, 1, 2, UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, ((uint64_t)1 << 63) - 1};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) num[n++] = (int64_t)edge[i];
    for (uint64_t k = 0; k <= 3; k++)
      for (int o = -1; o <= 1; o++) {
        unsigned __int128 v = (unsigned __int128)d * k + (unsigned __int128)(o + 1);
        if (v >= 1 && v - 1 <= UINT64_MAX) num[n++] = (int64_t)(uint64_t)(v - 1);
      }
    for (; n < N; n++) num[n] = (int64_t)(n % 3 ? tt_rand(&seed) : tt_rand(&seed) % 100000);
    int64_t len = N;
    tc_tensor *x = tt_tensor(TC_DT_U64, 1, &len, num, NULL), *y = tt_iscalar(TC_DT_U64, (int64_t)d);
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      tc_err err = tt_err();
      tc_tensor *r = tc_binary(ops[o], x, y, &err);
      cr_assert_not_null(r, "%s by %llu: %s", tc_op_name(ops[o]), (unsigned long long)d, tt_msg(&err));
      int64_t got[N];
      tt_read(r, got, NULL);
      for (int i = 0; i < N; i++, checked++) {
        uint64_t a = (uint64_t)num[i], want = ops[o] == TC_OP_DIV || ops[o] == TC_OP_FLOOR_DIV ? a / d : a % d;
        if ((uint64_t)got[i] != want && ++bad <= 5)
          cr_log_error("%llu %s %llu = %llu, expected %llu", (unsigned long long)a, tc_op_name(ops[o]),
                       (unsigned long long)d, (unsigned long long)got[i], (unsigned long long)want);
      }
      tc_tensor_free(r);
    }
    tc_tensor_free(x);
    tc_tensor_free(y);
  }
  cr_assert_eq(bad, 0, "%d of %d wrong", bad, checked);
}

/* Division of 8- and 16-bit integers runs in float, of 32-bit ones in
 * double (src/kexpr.h's TC_NARROW_QUOT, TC_UDIV): every numerator of each
 * 8- and 16-bit dtype by every divisor (8 bits) or by divisors at the
 * edges, beside powers of two and random (16 bits), broadcast and
 * elementwise, and samples of i32 and u32, for /, %, // and mod, against
 * C's integer division. */
static int64_t narrow_want(tc_op op, int64_t a, int64_t d, int64_t lo, int64_t span) {
  int64_t q = a / d, r = a % d;
  bool down = r != 0 && ((r < 0) != (d < 0));
  int64_t v = op == TC_OP_DIV ? q : op == TC_OP_REM ? r : op == TC_OP_FLOOR_DIV ? q - down : r + (down ? d : 0);
  return ((v - lo) % span + span) % span + lo;   /* wrapped into the dtype (MIN / -1) */
}

/* The four ops on x (numerators num) and y (divisors den, or d for all):
 * the elements that differ from C's (the first 5 logged); *checked counts. */
static int narrow_ops(tc_dtype dt, tc_tensor *x, tc_tensor *y, const int64_t *num, const int64_t *den, int64_t d,
                      int64_t len, int64_t lo, int64_t span, long *checked) {
  static const tc_op ops[] = {TC_OP_DIV, TC_OP_REM, TC_OP_FLOOR_DIV, TC_OP_MOD};
  static int64_t got[65536];
  int bad = 0;
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
    tc_err err = tt_err();
    tc_tensor *r = tc_binary(ops[o], x, y, &err);
    cr_assert_not_null(r, "%s %s: %s", tt_name(dt), tc_op_name(ops[o]), tt_msg(&err));
    tt_read(r, got, NULL);
    for (int64_t i = 0; i < len; i++, (*checked)++) {
      int64_t di = den ? den[i] : d, want = narrow_want(ops[o], num[i], di, lo, span);
      if (got[i] != want && ++bad <= 5)
        cr_log_error("%s: %lld %s %lld = %lld, expected %lld", tt_name(dt), (long long)num[i], tc_op_name(ops[o]),
                     (long long)di, (long long)got[i], (long long)want);
    }
    tc_tensor_free(r);
  }
  return bad;
}

Test(elementwise, narrow_division_is_exact) {
  static const tc_dtype dts[] = {TC_DT_I8, TC_DT_U8, TC_DT_I16, TC_DT_U16};
  static int64_t num[65536], den[65536];
  uint64_t seed = 16;
  int bad = 0;
  long checked = 0;
  for (size_t t = 0; t < sizeof dts / sizeof *dts; t++) {
    tc_dtype dt = dts[t];
    bool sgn = dt == TC_DT_I8 || dt == TC_DT_I16;
    int bits = dt == TC_DT_I8 || dt == TC_DT_U8 ? 8 : 16;
    int64_t span = (int64_t)1 << bits, lo = sgn ? -span / 2 : 0;
    for (int64_t i = 0; i < span; i++) num[i] = lo + i;
    int64_t divs[400];
    int nd = 0;
    if (bits == 8)
      for (int64_t i = 0; i < span; i++) { if (lo + i) divs[nd++] = lo + i; }
    else {
      for (int k = 0; k < bits - (sgn ? 1 : 0); k++)
        for (int o = -1; o <= 1; o++) {
          int64_t v = ((int64_t)1 << k) + o;
          if (v > 0 && v < lo + span) { divs[nd++] = v; if (sgn) divs[nd++] = -v; }
        }
      divs[nd++] = lo + span - 1;
      if (sgn) divs[nd++] = lo;
      for (int i = 0; i < 40; i++) {
        int64_t v = (int64_t)(tt_rand(&seed) % (uint64_t)span) + lo;
        if (v) divs[nd++] = v;
      }
    }
    int64_t len = span;
    tc_tensor *x = tt_tensor(dt, 1, &len, num, NULL);
    for (int di = 0; di <= nd; di++) {   /* di == nd: a vector of divisors, each numerator its own */
      tc_tensor *y;
      if (di < nd) y = tt_iscalar(dt, divs[di]);
      else {
        for (int64_t i = 0; i < span; i++) den[i] = divs[(i * 7) % nd];
        y = tt_tensor(dt, 1, &len, den, NULL);
      }
      bad += narrow_ops(dt, x, y, num, di < nd ? NULL : den, di < nd ? divs[di] : 0, span, lo, span, &checked);
      tc_tensor_free(y);
    }
    tc_tensor_free(x);
  }
  /* 32 bits, in double (u32 through i32's conversions): numerators at the edges, near multiples of the
     divisor and random, by divisors at the edges and random */
  for (int t = 0; t < 2; t++) {
    tc_dtype dt = t ? TC_DT_U32 : TC_DT_I32;
    int64_t lo = t ? 0 : INT32_MIN, span = (int64_t)1 << 32, hi = lo + span - 1;
    const int64_t fixed[] = {1, 2, 3, 7, 10, 641, 65535, 65536, 65537, hi, hi - 1, hi / 2, hi / 2 + 1, -1, -2, -7, lo, lo + 1};
    int64_t divs[64];
    int nd = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
      if (fixed[i] && fixed[i] >= lo && fixed[i] <= hi) divs[nd++] = fixed[i];
    while (nd < 60) {
      int64_t v = (int64_t)(tt_rand(&seed) % (uint64_t)span) + lo;
      v >>= nd % 4 * 8;   /* 32, 24, 16 and 8 bits */
      if (v) divs[nd++] = v;
    }
    for (int di = 0; di < nd; di++) {
      int64_t d = divs[di], len = 2048;
      for (int64_t i = 0; i < len; i++) {
        int64_t v = i < 8 ? (i % 2 ? hi - i / 2 : lo + i / 2) : i < 1024 ? d * (i / 3 % 50) + i % 3 - 1
                                                                          : (int64_t)(tt_rand(&seed) % (uint64_t)span) + lo;
        num[i] = v < lo || v > hi ? lo : v;
      }
      tc_tensor *x = tt_tensor(dt, 1, &len, num, NULL), *y = tt_iscalar(dt, d);
      bad += narrow_ops(dt, x, y, num, NULL, d, len, lo, span, &checked);
      tc_tensor_free(x);
      tc_tensor_free(y);
    }
  }
  cr_assert_eq(bad, 0, "%d of %ld wrong", bad, checked);
}

/* Every elementwise op and cast on every dtype gives the same elements at
 * each instruction-set level the CPU has (the portable kernels, the AVX2
 * build, and the SLEEF paths of the math functions). */
Test(elementwise, every_isa_level_gives_the_same_bits) {
  int lv[CPU_ISA_COUNT], nl = 0;
  for (int l = CPU_ISA_BASE; l < CPU_ISA_COUNT; l++)
    if (cpu_matmul_isa(l) == l) lv[nl++] = l;
  cpu_matmul_isa(99);
  const int64_t n = 1037;   /* a ragged tail for every vector width */
  uint64_t s = 77;
  int checked = 0;
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_tensor *in[3] = {random_bits(dt, n, false, &s), random_bits(dt, n, true, &s), random_bits(TC_DT_BOOL, n, false, &s)};
    for (int op = 0; op <= TC_OP_COUNT; op++) {   /* TC_OP_COUNT: the casts to every dtype */
      bool cast = op == TC_OP_COUNT;
      if (!cast && tc_op_family((tc_op)op) != TC_FAM_BIN && tc_op_family((tc_op)op) != TC_FAM_CMP &&
          tc_op_family((tc_op)op) != TC_FAM_UN && tc_op_family((tc_op)op) != TC_FAM_PRED && op != TC_OP_WHERE)
        continue;
      for (int to = 0; to < (cast ? TC_DT_COUNT : 1); to++) {
        unsigned char *first = NULL;
        tc_dtype rdt = TC_DT_BOOL;
        for (int l = 0; l < nl; l++) {
          cpu_matmul_isa(lv[l]);
          tc_err err = tt_err();
          tc_tensor *o = cast ? tc_cast(in[0], (tc_dtype)to, &err) : run_ew_op((tc_op)op, in, &err);
          if (!o) {   /* unsupported, or a domain error: the same at every level */
            cr_assert(!first, "%s %s fails at level %d only: %s", cast ? "cast" : tc_op_name((tc_op)op), tt_name(dt), lv[l], tt_msg(&err));
            break;
          }
          size_t es = tc_dtype_size(o->dtype);
          unsigned char *got = malloc((size_t)n * es);
          cr_assert_eq(tc_tensor_to_host(o, got, &err), 0, "%s", tt_msg(&err));
          if (!first) { first = got; rdt = o->dtype; tc_tensor_free(o); continue; }
          for (int64_t i = 0; i < n; i++)
            cr_assert(same_elem(rdt, first + (size_t)i * es, got + (size_t)i * es), "%s %s%s%s element %lld differs at level %d",
                      cast ? "cast" : tc_op_name((tc_op)op), tt_name(dt), cast ? " to " : "", cast ? tt_name((tc_dtype)to) : "",
                      (long long)i, lv[l]);
          checked++;
          free(got);
          tc_tensor_free(o);
        }
        free(first);
      }
    }
    for (int k = 0; k < 3; k++) tc_tensor_free(in[k]);
  }
  cpu_matmul_isa(99);
  cr_assert_geq(checked, nl > 1 ? 500 : 0, "%d (op, dtype) results compared across %d levels", checked, nl);
  TT_DONE();
}
