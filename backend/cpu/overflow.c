/* The overflow policy's check and saturate (SPEC 13) on the CPU engine:
 * an elementwise op, cast, sum or product, matrix product or running sum
 * whose call has overflow set computes each element's exact value (in 128
 * bits, or its sign beyond) and judges it: under check the first element
 * that does not fit is an integer_overflow error naming its index, under
 * saturate it is clamped. The work is split in tasks whose ranges do not
 * depend on the thread count, so neither do the answer and the index.
 * src/overflow.c says which calls are judged; src/exact.h holds the exact
 * values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exact.h"
#include "kexpr.h"   /* the engines' integer quotient and power */
#include "cpu.h"

/* b ** e by squaring; exponents are never negative here (the pre-check).
 * mul() keeps the sign of a value that left the 128-bit range. */
static exact pow_exact(i128 b, i128 e) {
  exact r = ex(1), base = ex(b);
  while (e > 0) {
    if (e & 1) r = mul(r, base);
    e >>= 1;
    if (e) base = mul(base, base);
  }
  return r;
}

static exact ew_exact(tc_op op, i128 a, i128 b) {
  switch (op) {
  case TC_OP_ADD: return ex(a + b);
  case TC_OP_SUB: return ex(a - b);
  case TC_OP_MUL: return mul(ex(a), ex(b));
  case TC_OP_POW: return pow_exact(a, b);
  case TC_OP_NEG: return ex(-a);
  case TC_OP_ABS: return ex(a < 0 ? -a : a);
  case TC_OP_DIV: return ex(a / b);   /* b != 0 (the pre-check); only MIN / -1 leaves the range */
  case TC_OP_FLOOR_DIV: return ex(TC_FLOOR_ADJ(a / b, a % b != 0, a < 0, b < 0));
  default: return ex(0);
  }
}

/* t's elements in row-major order: in place when t is contiguous, else a
 * contiguous copy by the engine's copy kernel (*owned, to free). */
static const char *dense(tc_tensor *t, tc_tensor **owned, tc_err *err) {
  *owned = NULL;
  if (tc_is_contiguous(t)) return tc_tensor_data(t);
  tc_tensor *c = tc_tensor_new_on(TC_ENGINE_CPU, t->dtype, t->ndim, t->shape, err);
  tc_call cp = {.kind = TC_CALL_COPY, .dtype = t->dtype, .nin = 1, .in = {t}, .out = c};
  if (!c || (tc_numel(c) && cpu_run_index(&cp, err) != 0)) { tc_tensor_free(c); return NULL; }
  *owned = c;
  return tc_tensor_data(c);
}

static int interrupted(tc_err *err, tc_op op, tc_dtype dt) {
  return tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)dt, "interrupted");
}

static int oom(tc_err *err, tc_op op, tc_dtype dt) { return tc_err_set(err, TC_E_OOM, (int)op, (int)dt, "allocation failed"); }

/* ---- the range of a float operand ----
 * The least and greatest element of an f64 array, with any NaN noted, in
 * chunks on the CPU engine's threads: when every element of a float cast
 * truncates into the result's range, the engine's cast is exact and runs;
 * otherwise each element is judged. (Integer casts take the fused blocks
 * below.) */
CPU_CLONES static void range_f64(const double *x, int64_t n, double *mn, double *mx, bool *nan) {
  double lo = x[0], hi = x[0];
  bool any = false;
  for (int64_t i = 0; i < n; i++) {
    any |= x[i] != x[i];
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  *mn = lo;
  *mx = hi;
  *nan = any || lo != lo || hi != hi;
}

typedef struct {
  const double *a;
  int64_t n, per;
  double *fmn, *fmx;
  bool *nan;
} range_job;

static int range_task(void *ctx, int task, int worker) {
  const range_job *j = ctx;
  (void)worker;
  int64_t lo = (int64_t)task * j->per, len = j->n - lo < j->per ? j->n - lo : j->per;
  range_f64(j->a + lo, len, &j->fmn[task], &j->fmx[task], &j->nan[task]);
  return 0;
}

/* Whether every element of a (n > 0 f64 values in host memory) truncated
 * toward zero lies in [lo, hi]. */
static bool range_fits(const double *a, int64_t n, i128 lo, i128 hi) {
  enum { MAXT = 512 };
  double fmn[MAXT], fmx[MAXT];
  bool nan[MAXT] = {false};
  int64_t tasks = cpu_split(n, CPU_PAR_MIN);
  if (tasks > MAXT) tasks = MAXT;
  range_job j = {a, n, (n + tasks - 1) / tasks, fmn, fmx, nan};
  int nt = (int)((n + j.per - 1) / j.per);
  if (nt <= 1) range_task(&j, 0, 0);
  else if (cpu_parallel(nt, range_task, &j) != 0) return false;
  for (int t = 0; t < nt; t++)   /* trunc(d) in [lo, hi] when lo - 1 < d < hi + 1 */
    if (nan[t] || !(fmn[t] > (double)(lo - 1)) || !(fmx[t] < (double)(hi + 1))) return false;
  return true;
}

/* ---- elementwise ops and integer casts, on the CPU engine's threads ----
 * A job is split in tasks of whole blocks of CPU_EW_BLOCK elements. For
 * integer operands (an operand of another dtype than the kernel's is
 * converted a block at a time into a buffer; a broadcast one once) one
 * loop per block, which the compiler vectorises where the op allows,
 * computes the wrapping result and folds a flag that is clear when no
 * element of the block can have left the dtype: add/sub the sign test of
 * two's complement (the carry when unsigned); mul of 32 bits or fewer and
 * neg/abs of those the result in 64 bits; 64-bit mul the operands' bit
 * lengths, whose sum bounds the product's; 64-bit neg/abs no MIN (no
 * non-zero when unsigned); div/floor_div MIN / -1; pow the bases' bit
 * length times the exponents' bound; a cast between integer dtypes the
 * block's least and greatest value. Only a flagged block (and every block of a float operand) is
 * judged element by element on its exact results (judge_range): its first
 * overflowing index under check, its clamped values under saturate. Each
 * task's range is fixed by its index and under check the least index over
 * the tasks is reported: nothing depends on the thread count. */
#define OVF_MAXT 512   /* cpu_split's most tasks: twice the pool's most threads */

typedef struct {
  tc_op op;              /* TC_OP_CAST for a cast */
  tc_dtype da, db, kdt;  /* the operands' dtypes (a cast's source), the result's */
  const char *a, *b;     /* b: NULL for unary ops and casts */
  int64_t sa, sb;        /* 1, or 0 for an operand broadcast from one element */
  char *o;
  int64_t n, per;
  bool check, fused;     /* fused: the block loops below apply */
  int64_t *bad;          /* per task: its first overflowing index, or -1 */
} fjob;

/* The exact result of each element of [i0, i1), clamped into o; under
 * check, the first that does not fit (o then unfinished), else -1. The CPU
 * engine hands operands over unconverted (it converts inside its kernels):
 * each is read in its own dtype; a weak literal was checked to fit kdt, a
 * promotion only widens, so the value is the same. */
static int64_t judge_range(const fjob *j, int64_t i0, int64_t i1) {
  size_t sza = tc_dtype_size(j->da), szb = tc_dtype_size(j->db), sz = tc_dtype_size(j->kdt);
  for (int64_t i = i0; i < i1; i++) {
    i128 x = load(j->da, j->a + (size_t)(i * j->sa) * sza), y = j->b ? load(j->db, j->b + (size_t)(i * j->sb) * szb) : 0;
    exact e = j->op == TC_OP_CAST ? ex(x) : ew_exact(j->op, x, y);
    if (!fits(e, j->kdt) && j->check) return i;
    store(j->kdt, j->o + (size_t)i * sz, clamp(e, j->kdt));
  }
  return -1;
}

/* The block loops, stamped per dtype S of the operands (W: 64 bits of S's
 * signedness), on operands a and b already at the block (converted to S).
 * Each returns true when the block [i0, i0 + m) is computed and none of its
 * elements can have overflowed. */
#define OVF_W_INT int64_t
#define OVF_W_UINT uint64_t
#define OVF_DIV_INT(S, U, x, y) TC_IDIV(S, U, x, y)
#define OVF_DIV_UINT(S, U, x, y) TC_UDIV(S, x, y)   /* (not reached: unsigned quotients never overflow) */
/* a binary loop over x = a[i], y = b[i] (either one broadcast), folding f */
#define FUSED_BIN(...) \
  if (j->sa && j->sb) { for (int64_t i = 0; i < m; i++) { S x = a[i], y = b[i]; __VA_ARGS__ } } \
  else if (j->sa) { const S y = b[0]; for (int64_t i = 0; i < m; i++) { S x = a[i]; __VA_ARGS__ } } \
  else { const S x = a[0]; for (int64_t i = 0; i < m; i++) { S y = b[i]; __VA_ARGS__ } }   /* b contiguous, or m == 1 */
#define FUSED_UN(...) for (int64_t i = 0; i < m; i++) { S x = a[i]; __VA_ARGS__ }
/* r in 64 bits, stored in S; f notes whether it fits */
#define FUSED_NARROW(R) { W r = (R); o[i] = (S)r; f |= (U)(r ^ (W)(S)r); }
/* (x >> (width - 1)): x < 0, written so that it compiles for the unsigned types too */
#define FUSED_NEG(x) ((x) >> (sizeof(S) * 8 - 1))
#define K_FUSED(E, n_, S_, C_, CLS, ...) \
  CPU_CLONES static bool fused_##E(const fjob *j, const char *a_, const char *b_, int64_t i0, int64_t m) { \
    typedef S_ S; \
    typedef OVF_W_##CLS W; \
    typedef uint64_t U; \
    const bool uns = (S)-1 > 0, narrow = sizeof(S) < 8; \
    const S mn = uns ? 0 : (S)((U)1 << (sizeof(S) * 8 - 1)); \
    const S *a = (const S *)(const void *)a_, *b = (const S *)(const void *)b_; \
    S *o = (S *)(void *)j->o + i0; \
    U f = 0, va = 0, vb = 0; \
    switch (j->op) { \
    case TC_OP_ADD: \
      if (narrow) { FUSED_BIN(FUSED_NARROW((W)x + (W)y)) } \
      else { FUSED_BIN(S r = (S)((U)x + (U)y); o[i] = r; f |= uns ? (U)(r < x) : (U)((x ^ r) & (y ^ r)) >> 63;) } \
      return f == 0; \
    case TC_OP_SUB: \
      if (narrow) { FUSED_BIN(FUSED_NARROW((W)x - (W)y)) } \
      else { FUSED_BIN(S r = (S)((U)x - (U)y); o[i] = r; f |= uns ? (U)(x < y) : (U)((x ^ y) & (x ^ r)) >> 63;) } \
      return f == 0; \
    case TC_OP_MUL: \
      if (narrow) { FUSED_BIN(FUSED_NARROW((W)x * (W)y)) return f == 0; } \
      /* |x| <= 2^la, |y| <= 2^lb: the product fits in la + lb bits (and a sign) */ \
      FUSED_BIN(o[i] = (S)((U)x * (U)y); va |= uns ? (U)x : (U)((W)x ^ ((W)x >> 63)); vb |= uns ? (U)y : (U)((W)y ^ ((W)y >> 63));) \
      return (va ? 64 - __builtin_clzll(va) : 0) + (vb ? 64 - __builtin_clzll(vb) : 0) <= (uns ? 64 : 62); \
    case TC_OP_NEG: \
      if (narrow) { FUSED_UN(FUSED_NARROW(-(W)x)) } \
      else { FUSED_UN(o[i] = (S)(0 - (U)x); f |= uns ? (U)(x != 0) : (U)(x == mn);) } \
      return f == 0; \
    case TC_OP_ABS: \
      if (uns) { FUSED_UN(o[i] = x;) } \
      else if (narrow) { FUSED_UN(FUSED_NARROW(FUSED_NEG(x) ? -(W)x : (W)x)) } \
      else { FUSED_UN(o[i] = FUSED_NEG(x) ? (S)(0 - (U)x) : x; f |= (U)(x == mn);) } \
      return f == 0; \
    /* signed only (no zero divisor: the pre-check): MIN / -1; the quotient as the engine's kernel */ \
    case TC_OP_DIV: \
      FUSED_BIN(o[i] = OVF_DIV_##CLS(S, U, x, y); f |= (U)(x == mn && y == (S)-1);) \
      return f == 0; \
    case TC_OP_FLOOR_DIV: \
      FUSED_BIN(S q = OVF_DIV_##CLS(S, U, x, y); o[i] = (S)TC_FLOOR_ADJ(q, (S)((U)q * (U)y) != x, FUSED_NEG(x), FUSED_NEG(y)); \
                f |= (U)(x == mn && y == (S)-1);) \
      return f == 0; \
    case TC_OP_POW: /* exponents are never negative (the pre-check); |x| <= 2^la and y <= vb: |x ** y| <= 2^(la * vb) */ \
      FUSED_BIN(o[i] = (S)tc_ipow((uint64_t)(W)x, (uint64_t)(W)y); va |= uns ? (U)x : (U)((W)x ^ ((W)x >> 63)); vb |= (U)y;) \
      return va == 0 || (vb <= 64 && (64 - __builtin_clzll(va)) * (int)vb <= (int)sizeof(S) * 8 - (uns ? 0 : 2)); \
    default: { /* a cast to kdt: the block's range, then its low bits */ \
      S lo = a[0], hi = a[0]; \
      FUSED_UN(lo = x < lo ? x : lo; hi = x > hi ? x : hi;) \
      if ((i128)lo < lo_of(j->kdt) || (i128)hi > hi_of(j->kdt)) return false; \
      convert_##E(a_, m, j->o + (size_t)i0 * tc_dtype_size(j->kdt), j->kdt); \
      return true; \
    } \
    } \
  }
/* m values of S (each in to's range) stored in dtype to: their low bits */
#define K_CONVERT(E, n_, S_, ...) \
  CPU_CLONES static void convert_##E(const char *a_, int64_t m, char *o, tc_dtype to) { \
    typedef S_ S; \
    const S *a = (const S *)(const void *)a_; \
    switch (tc_dtype_size(to)) { \
    case 1: { uint8_t *d = (uint8_t *)o; FUSED_UN(d[i] = (uint8_t)x;) break; } \
    case 2: { uint16_t *d = (uint16_t *)(void *)o; FUSED_UN(d[i] = (uint16_t)x;) break; } \
    case 4: { uint32_t *d = (uint32_t *)(void *)o; FUSED_UN(d[i] = (uint32_t)x;) break; } \
    default: { uint64_t *d = (uint64_t *)(void *)o; FUSED_UN(d[i] = (uint64_t)x;) break; } \
    } \
  }
TC_FOR_INTB(K_CONVERT, _)
TC_FOR_INT(K_FUSED, _)

static void convert_block(tc_dtype from, const char *a, int64_t m, char *o, tc_dtype to) {
  switch (from) {
#define CONVERT_CASE(E, ...) case TC_DT_##E: convert_##E(a, m, o, to); break;
  TC_FOR_INTB(CONVERT_CASE, _)
#undef CONVERT_CASE
  default: break;
  }
}

static bool fused_block(const fjob *j, const char *a, const char *b, int64_t i0, int64_t m) {
  switch (j->op == TC_OP_CAST ? j->da : j->kdt) {
#define FUSED_CASE(E, ...) case TC_DT_##E: return fused_##E(j, a, b, i0, m);
  TC_FOR_INT(FUSED_CASE, _)
#undef FUSED_CASE
  default: return false;
  }
}

static int fused_task(void *ctx, int task, int worker) {
  fjob *j = ctx;
  (void)worker;
  _Alignas(64) char buf[2][CPU_EW_BLOCK * 8];   /* an operand of another dtype, converted to kdt */
  size_t sza = tc_dtype_size(j->da), szb = tc_dtype_size(j->db);
  bool cva = j->op != TC_OP_CAST && j->da != j->kdt, cvb = j->b && j->db != j->kdt;
  int64_t lo = (int64_t)task * j->per, hi = j->n - lo < j->per ? j->n : lo + j->per;
  j->bad[task] = -1;
  for (int64_t i0 = lo; i0 < hi; i0 += CPU_EW_BLOCK) {
    if (tc_interrupt_flag) return -1;
    int64_t m = hi - i0 < CPU_EW_BLOCK ? hi - i0 : CPU_EW_BLOCK;
    if (j->fused) {
      const char *a = j->a + (size_t)(i0 * j->sa) * sza, *b = j->b ? j->b + (size_t)(i0 * j->sb) * szb : NULL;
      if (cva) { convert_block(j->da, a, m, buf[0], j->kdt); a = buf[0]; }
      if (cvb) { convert_block(j->db, b, m, buf[1], j->kdt); b = buf[1]; }
      if (fused_block(j, a, b, i0, m)) continue;
    }
    if ((j->bad[task] = judge_range(j, i0, i0 + m)) >= 0) return 0;
  }
  return 0;
}

/* Runs j over its n elements into j->o: 0, or under check the first
 * overflowing index (*bad), or -1 when interrupted. */
static int fused_run(fjob *j, int64_t *bad) {
  *bad = -1;
  if (j->n == 0) return 0;
  int64_t first[OVF_MAXT], tasks = cpu_split(j->n, CPU_PAR_MIN);
  if (tasks > OVF_MAXT) tasks = OVF_MAXT;
  j->per = (j->n + tasks - 1) / tasks;
  j->per = (j->per + CPU_EW_BLOCK - 1) / CPU_EW_BLOCK * CPU_EW_BLOCK;
  int nt = (int)((j->n + j->per - 1) / j->per);
  j->bad = first;
  int rc = nt <= 1 ? fused_task(j, 0, 0) : cpu_parallel(nt, fused_task, j);
  for (int t = 0; rc == 0 && t < nt && *bad < 0; t++) *bad = first[t];
  return rc == 0 ? 0 : -1;
}

static bool int_or_bool(tc_dtype dt) { return tc_dtype_class(dt) == TC_CLASS_INT || dt == TC_DT_BOOL; }

/* Whether t's elements are all one element (size-1 or broadcast dims). */
static bool one_element(const tc_tensor *t) {
  bool one = true;
  for (int d = 0; d < t->ndim; d++) one &= t->shape[d] == 1 || t->strides[d] == 0;
  return one;
}

/* An operand for the block loops: contiguous (stride 1) or one element
 * broadcast (stride 0, unless whole: a lone broadcast operand of a longer
 * result); else a contiguous copy (*owned). */
static const char *fused_operand(tc_tensor *t, bool whole, int64_t *stride, tc_tensor **owned, tc_err *err) {
  bool one = one_element(t) && !whole;
  *stride = one ? 0 : 1;
  *owned = NULL;
  return one || tc_is_contiguous(t) ? tc_tensor_data(t) : dense(t, owned, err);
}

/* Runs j (its operands set) over its n elements into c's output; 0, or -1
 * with err set: interrupted, or under check integer_overflow at the first
 * element that does not fit (`what` it is, of shape). */
static int fused_judge(fjob *j, const tc_call *c, const int64_t *shape, const char *what, tc_err *err) {
  int64_t bad;
  j->o = tc_tensor_data(c->out);
  j->n = tc_numel(c->out);
  j->check = c->overflow == TC_OVERFLOW_CHECK;
  if (fused_run(j, &bad) != 0) return interrupted(err, j->op, j->op == TC_OP_CAST ? c->dtype : j->kdt);
  if (bad < 0) return 0;
  return tc_overflow_error(err, c->overflow, j->op, j->kdt, c->out->ndim, shape, bad, what);
}

/* An elementwise call; 1 when the engine's kernel is exact for it. */
static int ovf_ew(tc_call *c, tc_err *err) {
  tc_op op = c->op;
  tc_dtype kdt = c->dtype;
  tc_tensor **in = c->in;
  int nin = c->nin;
  if (op == TC_OP_ABS && tc_dtype_is_unsigned(kdt) && in[0]->dtype == kdt) return 1;   /* the identity */
  int64_t n = tc_numel(c->out);
  tc_tensor *oa = NULL, *ob = NULL;
  fjob j = {.op = op, .da = in[0]->dtype, .db = nin > 1 ? in[1]->dtype : kdt, .kdt = kdt};
  /* a lone broadcast operand (every operand one element of a longer result) is copied whole */
  bool lone = n > 1 && one_element(in[0]) && (nin == 1 || one_element(in[1]));
  j.a = fused_operand(in[0], lone, &j.sa, &oa, err);
  if (nin > 1 && j.a) j.b = fused_operand(in[1], false, &j.sb, &ob, err);
  int rc = -1;
  if (!j.a || (nin > 1 && !j.b)) goto done;
  /* a broadcast element of another dtype is converted once (the value is the same: a weak literal
     was checked to fit kdt, a promotion only widens); a tensor of another dtype, a block at a time */
  _Alignas(8) char sca[8], scb[8];
  if (j.sa == 0 && j.da != kdt && int_or_bool(j.da)) { store(kdt, sca, load(j.da, j.a)); j.a = sca; j.da = kdt; }
  if (j.b && j.sb == 0 && j.db != kdt && int_or_bool(j.db)) { store(kdt, scb, load(j.db, j.b)); j.b = scb; j.db = kdt; }
  /* every op tc_overflow_judges names: add, sub, mul, pow, neg, abs, and div, floor_div of signed dtypes */
  j.fused = int_or_bool(j.da) && int_or_bool(j.db);
  char what[96];
  snprintf(what, sizeof what, "the exact result of %s", tc_op_name(op));
  rc = fused_judge(&j, c, c->out->shape, what, err);
done:
  tc_tensor_free(oa);
  tc_tensor_free(ob);
  return rc;
}

/* ---- casts ---- */
/* A cast from an integer dtype: 1 (the engine's kernel) when every value
 * of the source dtype fits, else the block loops (each block's least and
 * greatest value). */
static int int_cast(tc_call *c, const char *what, tc_err *err) {
  tc_tensor *x = c->in[0], *owned = NULL;
  tc_dtype to = c->out->dtype;
  if (lo_of(x->dtype) >= lo_of(to) && hi_of(x->dtype) <= hi_of(to)) return 1;
  fjob j = {.op = TC_OP_CAST, .da = x->dtype, .db = x->dtype, .kdt = to, .fused = true};
  j.a = fused_operand(x, tc_numel(c->out) > 1, &j.sa, &owned, err);   /* a lone element: whole */
  int rc = j.a ? fused_judge(&j, c, x->shape, what, err) : -1;
  tc_tensor_free(owned);
  return rc;
}

/* A cast call: 1 when the engine's kernel is exact for it. Floats are read
 * as f64 (exact for every float dtype). */
static int ovf_cast(tc_call *c, tc_err *err) {
  tc_tensor *x = c->in[0], *src = NULL, *owned = NULL;
  tc_dtype from = c->dtype, to = c->out->dtype;
  char what[96];
  snprintf(what, sizeof what, "a %s value cast to %s", tc_dtype_name(from), tc_dtype_name(to));
  if (tc_dtype_class(from) != TC_CLASS_FLT) return int_cast(c, what, err);
  int64_t n = tc_numel(x);
  const char *in = NULL;
  if (from == TC_DT_F64) {
    in = dense(x, &owned, err);
  } else if ((src = tc_tensor_new_on(TC_ENGINE_CPU, TC_DT_F64, x->ndim, x->shape, err))) {
    tc_call f = {.kind = TC_CALL_CAST, .dtype = from, .nin = 1, .in = {x}, .out = src};
    if (cpu_run_cast(&f, err) == 0) in = tc_tensor_data(src);
  }
  int rc = -1;
  if (!in) goto done;
  rc = 1;   /* every element truncates into the range: the engine's cast is exact */
  if (n == 0 || range_fits((const double *)(const void *)in, n, lo_of(to), hi_of(to))) goto done;
  char *o = tc_tensor_data(c->out);
  for (int64_t i = 0; i < n; i++) {
    exact e;
    double d;
    memcpy(&d, in + (size_t)i * 8, 8);
    if (d != d) {
      if (c->overflow == TC_OVERFLOW_CHECK) {
        rc = tc_overflow_error(err, c->overflow, TC_OP_CAST, to, x->ndim, x->shape, i, "NaN");
        goto done;
      }
      e = ex(0);
    } else if (d >= 18446744073709551616.0) e = (exact){0, 1};           /* 2^64 and above, +inf */
    else if (d < -9223372036854775808.0) e = (exact){0, -1};             /* below -2^63, -inf */
    else e = ex((i128)d);   /* truncated toward zero, as the cast does */
    if ((rc = put_judged(c->overflow, e, to, o, i, TC_OP_CAST, x->ndim, x->shape, what, err)) != 0) goto done;
  }
done:
  tc_tensor_free(src);
  tc_tensor_free(owned);
  return rc;
}

/* ---- sums and products ----
 * x is contiguous with its reduced axes last: m outputs of n elements each. */
/* The exact sum of a row of n values of one integer dtype, stamped per
 * dtype, in loops that vectorise: blocks of up to 2^16 elements of 32 bits
 * or fewer sum in an int64; a 64-bit element x is read as unsigned,
 * hi * 2^32 + lo, its halves summed apart in int64s (2^30 of them at most)
 * and 2^64 taken back per negative one. */
#define K_XSUM(E, n_, S, ...) \
  static i128 xsum_##E(const void *x_, int64_t n) { \
    const S *x = x_; \
    i128 s = 0; \
    if (sizeof(S) > 4) { \
      for (int64_t j0 = 0; j0 < n; j0 += (int64_t)1 << 30) { \
        int64_t m = n - j0 < ((int64_t)1 << 30) ? n - j0 : (int64_t)1 << 30; \
        uint64_t hi = 0, lo = 0, neg = 0; \
        for (int64_t j = j0; j < j0 + m; j++) { \
          uint64_t u = (uint64_t)x[j]; \
          hi += u >> 32; \
          lo += u & 0xffffffffu; \
          neg += u >> 63; \
        } \
        s += ((i128)hi << 32) + (i128)lo - (tc_dtype_is_unsigned(TC_DT_##E) ? 0 : (i128)neg << 64); \
      } \
      return s; \
    } \
    for (int64_t j0 = 0; j0 < n; j0 += 65536) { \
      int64_t m = n - j0 < 65536 ? n - j0 : 65536, t = 0; \
      for (int64_t j = j0; j < j0 + m; j++) t += (int64_t)x[j]; \
      s += t; \
    } \
    return s; \
  }
TC_FOR_INT(K_XSUM, _)

/* The product of a row of n values, stamped per dtype: four running
 * products in S with their overflow flags (a product of some of the values,
 * none zero, is no larger than the product of all). PROD_UNSURE when a flag
 * is set: the caller then computes the exact product (a zero after an
 * overflow makes it 0). */
#define PROD_UNSURE I128_MAX
#define K_XPROD(E, n_, S, ...) \
  static i128 xprod_##E(const void *x_, int64_t n) { \
    const S *x = x_; \
    S p[4] = {1, 1, 1, 1}; \
    bool of = false; \
    int64_t j = 0; \
    for (; j + 4 <= n; j += 4) \
      for (int l = 0; l < 4; l++) of |= __builtin_mul_overflow(p[l], x[j + l], &p[l]); \
    for (; j < n; j++) of |= __builtin_mul_overflow(p[0], x[j], &p[0]); \
    for (int l = 1; l < 4; l++) of |= __builtin_mul_overflow(p[0], p[l], &p[0]); \
    return of ? PROD_UNSURE : (i128)p[0]; \
  }
TC_FOR_INT(K_XPROD, _)

CPU_CLONES static i128 xsum(tc_dtype dt, bool prod, const void *x, int64_t n) {
  switch (dt) {
#define XSUM_CASE(E, ...) case TC_DT_##E: return prod ? xprod_##E(x, n) : xsum_##E(x, n);
  TC_FOR_INT(XSUM_CASE, _)
#undef XSUM_CASE
  default: return 0;
  }
}

/* Exact sums of m rows of n elements on the CPU engine's threads: each row
 * in nc chunks, part[r * nc + c] the exact sum of chunk c of row r (exact,
 * so the split does not change a bit). */
typedef struct {
  tc_dtype dt;
  const char *a;
  int64_t n, nc, clen, units, per;
  i128 *part;
  bool prod;   /* products (xprod) instead of sums */
} xsum_job;

static int xsum_task(void *ctx, int task, int worker) {
  const xsum_job *j = ctx;
  (void)worker;
  size_t sz = tc_dtype_size(j->dt);
  for (int64_t u = (int64_t)task * j->per; u < j->units && u < ((int64_t)task + 1) * j->per; u++) {
    if (tc_interrupt_flag) return -1;
    int64_t r = u / j->nc, c0 = (u % j->nc) * j->clen, len = j->n - c0 < j->clen ? j->n - c0 : j->clen;
    j->part[u] = xsum(j->dt, j->prod, j->a + (size_t)(r * j->n + c0) * sz, len);
  }
  return 0;
}

/* sums[r] = the exact sum of row r; -1 when interrupted or out of memory. */
static int xsum_rows(tc_dtype dt, bool prod, const char *a, int64_t m, int64_t n, i128 *sums) {
  int64_t total = m * n, tasks = cpu_split(total, CPU_PAR_MIN);
  if (tasks <= 1) {
    for (int64_t r = 0; r < m; r++) {
      if (tc_interrupt_flag) return -1;
      sums[r] = xsum(dt, prod, a + (size_t)(r * n) * tc_dtype_size(dt), n);
    }
    return 0;
  }
  /* rows split in chunks when there are fewer rows than tasks */
  int64_t nc = m >= tasks ? 1 : (tasks + m - 1) / m;
  if (nc > n / 4096 + 1) nc = n / 4096 + 1;
  xsum_job j = {dt, a, n, nc, (n + nc - 1) / nc, m * nc, 0, NULL, prod};
  j.per = (j.units + tasks - 1) / tasks;
  j.part = nc == 1 ? sums : malloc((size_t)j.units * sizeof(i128));
  if (!j.part) return -1;
  int rc = cpu_parallel((int)((j.units + j.per - 1) / j.per), xsum_task, &j);
  for (int64_t r = 0; rc == 0 && nc > 1 && r < m; r++) {
    sums[r] = prod ? 1 : 0;
    for (int64_t c = 0; c < nc; c++) {
      i128 v = j.part[r * nc + c];
      if (!prod) sums[r] += v;
      else if (sums[r] != PROD_UNSURE && (v == PROD_UNSURE || __builtin_mul_overflow(sums[r], v, &sums[r])))
        sums[r] = PROD_UNSURE;   /* a chunk's product, or theirs, overflowed: the caller computes it exactly */
    }
  }
  if (nc > 1) free(j.part);
  return rc == 0 ? 0 : -1;
}

static int ovf_reduce(tc_call *c, tc_err *err) {
  tc_op op = c->op;
  tc_dtype kdt = c->dtype;
  tc_tensor *owned = NULL;
  int64_t m = tc_numel(c->out), total = tc_numel(c->in[0]), n = m ? total / m : 0;
  size_t sz = tc_dtype_size(kdt);
  char *o = tc_tensor_data(c->out);
  i128 *sums = NULL;
  const char *a = dense(c->in[0], &owned, err);
  int rc = -1;
  if (!a) goto done;
  /* n < 2^62 values of at most 2^64 each: a sum is exact in 128 bits; a product, unless PROD_UNSURE */
  bool prod = op == TC_OP_REDUCE_PROD;
  sums = malloc((size_t)(m ? m : 1) * sizeof(i128));
  if (!sums) { oom(err, op, kdt); goto done; }
  if (xsum_rows(kdt, prod, a, m, n, sums) != 0) {
    if (tc_interrupt_flag) interrupted(err, op, kdt);
    else oom(err, op, kdt);
    goto done;
  }
  for (int64_t r = 0; r < m; r++) {
    if (tc_interrupt_flag) { interrupted(err, op, kdt); goto done; }
    const char *row = a + (size_t)(r * n) * sz;
    exact e;
    if (!prod || sums[r] != PROD_UNSURE) {
      e = ex(sums[r]);
    } else {
      e = ex(1);
      int neg = 0;
      bool zero = false;
      for (int64_t j = 0; j < n; j++) {
        i128 v = load(kdt, row + (size_t)j * sz);
        if (v == 0) { zero = true; break; }
        neg ^= v < 0;
        if (!e.big) e = mul(e, ex(v));
      }
      if (zero) e = ex(0);
      else if (e.big) e.big = neg ? -1 : 1;
    }
    if (put_judged(c->overflow, e, kdt, o, r, op, c->out->ndim, c->out->shape,
                   prod ? "the exact product" : "the exact sum", err) != 0)
      goto done;
  }
  rc = 0;
done:
  tc_tensor_free(owned);
  free(sums);
  return rc;
}

/* ---- matrix products ----
 * C[i, j] = sum_k A[i, k] B[k, j] exactly: 128-bit products, and a count of
 * 2^128 wraps of the running sum (a sum that wrapped is beyond every dtype). */
/* One output row of a product, stamped per dtype, in i-k-j order (b's rows
 * streamed): 128-bit products (unsigned ones as u128: (2^64 - 1)^2 does not
 * fit an i128) summed with a count of 2^128 wraps per element. Each exact
 * value goes to v[j], one beyond every dtype's range coded as the i128
 * extreme of its sign. */
#define K_XMM(E, n_, S, ...) \
  static void xmm_##E(const void *a_, const void *b_, int64_t K, int64_t N, u128 *acc, int64_t *wr, i128 *v) { \
    const S *a = a_, *b = b_; \
    for (int64_t j = 0; j < N; j++) { acc[j] = 0; wr[j] = 0; } \
    bool uns = tc_dtype_is_unsigned(TC_DT_##E); \
    for (int64_t k = 0; k < K; k++) { \
      const S *br = b + k * N; \
      if (a[k] == 0) continue; \
      if (uns) { \
        u128 av = (u128)a[k]; \
        for (int64_t j = 0; j < N; j++) { \
          u128 p = av * (u128)br[j], r = acc[j] + p; \
          wr[j] += r < p; \
          acc[j] = r; \
        } \
      } else { \
        i128 av = (i128)a[k]; \
        for (int64_t j = 0; j < N; j++) { \
          i128 p = av * (i128)br[j], r; \
          if (__builtin_add_overflow((i128)acc[j], p, &r)) wr[j] += p > 0 ? 1 : -1; \
          acc[j] = (u128)r; \
        } \
      } \
    } \
    for (int64_t j = 0; j < N; j++) { \
      if (uns) v[j] = wr[j] || acc[j] > (u128)I128_MAX ? I128_MAX : (i128)acc[j]; \
      else v[j] = wr[j] > 0 ? I128_MAX : wr[j] < 0 ? -I128_MAX - 1 : (i128)acc[j]; \
    } \
  }
TC_FOR_INT(K_XMM, _)

typedef void (*xmm_fn)(const void *, const void *, int64_t, int64_t, u128 *, int64_t *, i128 *);
static const xmm_fn xmm_table[TC_DT_COUNT] = {
#define XMM_ENTRY(E, ...) [TC_DT_##E] = xmm_##E,
    TC_FOR_INT(XMM_ENTRY, _)
#undef XMM_ENTRY
};

typedef struct {
  xmm_fn fn;
  const char *a, *b;
  size_t sz;
  int64_t M, K, N, rows, per;
  i128 *v;
} xmm_job;

static int xmm_task(void *ctx, int task, int worker) {
  const xmm_job *j = ctx;
  (void)worker;
  u128 *acc = malloc((size_t)(j->N ? j->N : 1) * sizeof *acc);
  int64_t *wr = malloc((size_t)(j->N ? j->N : 1) * sizeof *wr);
  int rc = acc && wr ? 0 : -1;
  for (int64_t r = (int64_t)task * j->per; rc == 0 && r < j->rows && r < ((int64_t)task + 1) * j->per; r++) {
    if (tc_interrupt_flag) { rc = -1; break; }
    int64_t t = r / j->M;   /* the batch */
    j->fn(j->a + (size_t)(r * j->K) * j->sz, j->b + (size_t)(t * j->K * j->N) * j->sz, j->K, j->N, acc, wr,
          j->v + r * j->N);
  }
  free(acc);
  free(wr);
  return rc;
}

static int ovf_matmul(tc_call *c, tc_err *err) {
  /* a: [..., M, K], b: [..., K, N], out: [..., M, N], batch dims already equal (broadcast views) */
  tc_op op = c->op;
  tc_dtype kdt = c->dtype;
  tc_tensor *a = c->in[0], *b = c->in[1], *out = c->out, *oa = NULL, *ob = NULL;
  int nd = out->ndim;
  int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
  int64_t batch = 1, total = tc_numel(out);
  for (int d = 0; d < nd - 2; d++) batch *= out->shape[d];
  size_t sz = tc_dtype_size(kdt);
  const char *ha = dense(a, &oa, err), *hb = ha ? dense(b, &ob, err) : NULL;
  char *o = tc_tensor_data(out);
  i128 *v = NULL;
  int rc = -1;
  if (!hb) goto done;
  v = malloc((size_t)(total ? total : 1) * sizeof *v);
  if (!v) { oom(err, op, kdt); goto done; }
  /* the exact values, rows on the engine's threads; then judged in order */
  xmm_job j = {xmm_table[kdt], ha, hb, sz, M, K, N, batch * M, 0, v};
  int64_t macs, tasks;
  if (__builtin_mul_overflow(j.rows * N, K, &macs)) macs = INT64_MAX;
  tasks = cpu_split(macs, (int64_t)1 << 18);
  if (tasks > j.rows) tasks = j.rows;
  if (tasks < 1) tasks = 1;
  j.per = (j.rows + tasks - 1) / tasks;
  if (cpu_parallel((int)((j.rows + j.per - 1) / j.per), xmm_task, &j) != 0) {
    if (tc_interrupt_flag) interrupted(err, op, kdt);
    else oom(err, op, kdt);
    goto done;
  }
  for (int64_t f = 0; f < total; f++) {
    i128 x = v[f];
    exact e = x == I128_MAX ? (exact){0, 1} : x == -I128_MAX - 1 ? (exact){0, -1} : ex(x);
    if (put_judged(c->overflow, e, kdt, o, f, op, nd, out->shape, "the exact dot product", err) != 0) goto done;
  }
  rc = 0;
done:
  tc_tensor_free(oa);
  tc_tensor_free(ob);
  free(v);
  return rc;
}

/* ---- scans ----
 * Each output element is the exact prefix sum (in 128 bits: fewer than
 * 2^62 values of at most 2^64) or prefix product (mul(): a value that left
 * 128 bits keeps its sign until a zero) of its row, judged alone: under
 * saturate a clamped element does not change the next one. */
/* One row of n elements, stamped per dtype; returns the first position
 * whose exact value does not fit under check (the row is then left
 * unfinished), else -1. */
#define K_XSCAN(E, n_, S_, ...) \
  static int64_t xscan_##E(bool prod, const void *x_, void *o_, int64_t n, bool check, i128 lo, i128 hi) { \
    typedef S_ S; \
    const S *x = x_; \
    S *o = o_; \
    if (!prod) { \
      /* in the dtype while no sum leaves it (one add and its flag an \
       * element), then exactly from the first that does */ \
      S q = 0; \
      int64_t i = 0; \
      for (; i < n && !__builtin_add_overflow(q, x[i], &q); i++) o[i] = q; \
      i128 s = i > 0 ? (i128)o[i - 1] : 0; \
      for (; i < n; i++) { \
        s += x[i]; \
        if (s >= lo && s <= hi) { o[i] = (S)s; continue; } \
        if (check) return i; \
        o[i] = (S)(s < lo ? lo : hi); \
      } \
      return -1; \
    } \
    /* a running product of the dtype with its overflow flag; exactly only when the flag is set */ \
    S q = 1; \
    bool of = false; \
    for (int64_t i = 0; i < n; i++) { \
      of |= __builtin_mul_overflow(q, x[i], &q); \
      o[i] = q; \
    } \
    if (!of) return -1; \
    exact p = ex(1); \
    for (int64_t i = 0; i < n; i++) { \
      p = mul(p, ex(x[i])); \
      if (!p.big && p.v >= lo && p.v <= hi) { o[i] = (S)p.v; continue; } \
      if (check) return i; \
      o[i] = (S)clamp(p, TC_DT_##E); \
    } \
    return -1; \
  }
TC_FOR_INT(K_XSCAN, _)

static int64_t xscan(tc_dtype dt, bool prod, const void *x, void *o, int64_t n, bool check) {
  switch (dt) {
#define XSCAN_CASE(E, ...) case TC_DT_##E: return xscan_##E(prod, x, o, n, check, lo_of(dt), hi_of(dt));
  TC_FOR_INT(XSCAN_CASE, _)
#undef XSCAN_CASE
  default: return -1;
  }
}

static int ovf_scan(tc_call *c, tc_err *err) {
  /* in: of dtype kdt, with the scanned axis (axis of the original) moved last; out: its shape */
  tc_op op = c->op;
  tc_dtype kdt = c->dtype;
  tc_tensor *x = c->in[0], *owned = NULL;
  int nd = x->ndim, axis = c->axis;
  int64_t n = nd ? x->shape[nd - 1] : 1, total = tc_numel(x), rows = n ? total / n : 0;
  size_t sz = tc_dtype_size(kdt);
  bool check = c->overflow == TC_OVERFLOW_CHECK;
  char *o = tc_tensor_data(c->out);
  const char *a = dense(x, &owned, err);
  int rc = -1;
  if (!a) goto done;
  /* the original shape, and under check the least row-major index there of
   * an element that does not fit (rows are x's order, not the original's) */
  int64_t shape[TC_MAX_DIMS], first = -1;
  for (int d = 0; d < nd; d++) shape[d] = x->shape[d < axis ? d : d == axis ? nd - 1 : d - 1];
  for (int64_t r = 0; r < rows; r++) {
    if (tc_interrupt_flag) { interrupted(err, op, kdt); goto done; }
    int64_t p = xscan(kdt, op == TC_OP_CUMPROD, a + (size_t)(r * n) * sz, o + (size_t)(r * n) * sz, n, check);
    if (p < 0) continue;
    int64_t idx[TC_MAX_DIMS], rem = r, flat = 0;   /* row r's index in x, then in the original */
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rem % x->shape[d]; rem /= x->shape[d]; }
    for (int d = 0; d < nd; d++) flat = flat * shape[d] + (d < axis ? idx[d] : d == axis ? p : idx[d - 1]);
    if (first < 0 || flat < first) first = flat;
    if (axis == nd - 1) break;   /* rows in the original's order: the first found is the least */
  }
  rc = first < 0 ? 0 : tc_overflow_error(err, c->overflow, op, kdt, nd, shape, first,
                                         op == TC_OP_CUMSUM ? "the exact running sum" : "the exact running product");
done:
  tc_tensor_free(owned);
  return rc;
}

/* The CPU engine's run of a call with overflow set (check or saturate):
 * 0 (computed and judged), -1 (err set), or 1 when the engine's wrapping
 * kernel is exact for it and runs instead. */
int cpu_run_overflow(tc_call *c, tc_err *err) {
  switch (c->kind) {
  case TC_CALL_EW: return ovf_ew(c, err);
  case TC_CALL_CAST: return ovf_cast(c, err);
  case TC_CALL_REDUCE: return ovf_reduce(c, err);
  case TC_CALL_MATMUL: return ovf_matmul(c, err);
  case TC_CALL_SCAN: return ovf_scan(c, err);
  default: return 1;
  }
}
