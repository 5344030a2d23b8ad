/* The integer overflow policy (SPEC 13): wrap (the engines' kernels), or
 * check / saturate, which judge the exact mathematical result of each output
 * element. Those two run here, on the host, whatever the engine: each
 * element's exact value is computed in 128 bits (with a count of 2^128
 * wraps where a dot product can exceed even that), so the answer and the
 * first overflowing index are the same on every engine and thread count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "kexpr.h"   /* the engines' integer quotient and power */
#include "cpu/cpu.h"   /* the CPU engine's thread pool, for the host's exact sums */

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
#define I128_MAX ((i128)(~(u128)0 >> 1))

static _Atomic int policy = TC_OVERFLOW_WRAP;

static const char *const names[] = {"wrap", "check", "saturate"};

void tc_set_overflow(tc_overflow p) { policy = (int)p; }
tc_overflow tc_get_overflow(void) { return (tc_overflow)policy; }
const char *tc_overflow_name(tc_overflow p) { return names[p]; }
int tc_overflow_from_name(const char *s) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, names[i])) return i;
  return -1;
}

/* ---- exact values ---- */
/* A value beyond every dtype's range keeps only its sign: big = +1 / -1. */
typedef struct { i128 v; int big; } exact;

static exact ex(i128 v) { exact e = {v, 0}; return e; }

static i128 lo_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? 0 : -((i128)1 << (b - 1));
}
static i128 hi_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? ((i128)1 << b) - 1 : ((i128)1 << (b - 1)) - 1;
}

static bool fits(exact e, tc_dtype dt) { return !e.big && e.v >= lo_of(dt) && e.v <= hi_of(dt); }

static i128 clamp(exact e, tc_dtype dt) {
  if (e.big) return e.big > 0 ? hi_of(dt) : lo_of(dt);
  return e.v < lo_of(dt) ? lo_of(dt) : e.v > hi_of(dt) ? hi_of(dt) : e.v;
}

static i128 load(tc_dtype dt, const char *p) {
  int64_t v = tc_dtype_load_i64(dt, p);
  return tc_dtype_is_unsigned(dt) ? (i128)(uint64_t)v : (i128)v;
}

static void store(tc_dtype dt, char *p, i128 v) {
  uint64_t u = (uint64_t)(u128)v;   /* the low bits; v is in range */
  size_t sz = tc_dtype_size(dt);
  switch (sz) {
  case 1: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
  default: memcpy(p, &u, 8); break;
  }
}

static exact mul(exact a, exact b) {
  if ((!a.big && a.v == 0) || (!b.big && b.v == 0)) return ex(0);
  int sa = a.big ? a.big : a.v < 0 ? -1 : 1, sb = b.big ? b.big : b.v < 0 ? -1 : 1;
  exact r;
  if (a.big || b.big || __builtin_mul_overflow(a.v, b.v, &r.v)) { r.v = 0; r.big = sa * sb; return r; }
  r.big = 0;
  return r;
}

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
  case TC_OP_FLOOR_DIV: return ex(a / b - ((a % b != 0) && ((a < 0) != (b < 0))));
  default: return ex(0);
  }
}

bool tc_overflow_judges(tc_op op, tc_dtype kdt) {
  if (policy == TC_OVERFLOW_WRAP || tc_dtype_class(kdt) != TC_CLASS_INT) return false;
  switch (op) {
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: case TC_OP_POW: case TC_OP_NEG: case TC_OP_ABS:
    return true;
  case TC_OP_DIV: case TC_OP_FLOOR_DIV:   /* MIN / -1 (SPEC 13) */
    return !tc_dtype_is_unsigned(kdt);
  default:
    return false;
  }
}

static int overflow_error(tc_err *err, tc_op op, tc_dtype dt, int ndim, const int64_t *shape, int64_t flat,
                          const char *what) {
  int64_t idx[TC_MAX_DIMS] = {0}, rem = flat;
  for (int i = ndim - 1; i >= 0; i--) {
    idx[i] = shape[i] ? rem % shape[i] : 0;
    rem = shape[i] ? rem / shape[i] : 0;
  }
  char where[300] = "";
  if (ndim > 0) {
    char ib[280];
    tc_format_dims(ib, sizeof ib, ndim, idx);
    snprintf(where, sizeof where, " at index %s", ib);
  }
  tc_err_set(err, TC_E_INT_OVERFLOW, (int)op, (int)dt, "%s does not fit %s%s (overflow %s)", what,
             tc_dtype_name(dt), where, tc_overflow_name(tc_get_overflow()));
  tc_err_set_index(err, ndim, idx);
  return -1;
}

/* A contiguous host copy of t (numel elements). */
static char *host_copy(tc_tensor *t, tc_err *err) {
  int64_t n = tc_numel(t);
  tc_tensor *c = tc_contiguous(t, err);   /* views (broadcast, strided) in row-major order */
  char *buf = c ? malloc((size_t)(n ? n : 1) * tc_dtype_size(t->dtype)) : NULL;
  if (c && !buf) tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "allocation failed");
  if (buf && tc_tensor_to_host(c, buf, err) != 0) { free(buf); buf = NULL; }
  tc_tensor_free(c);
  return buf;
}

/* Element flat of a result of dtype dt: e clamped into o, or under check,
 * when e does not fit, integer_overflow at flat's index of shape. */
static int put_judged(exact e, tc_dtype dt, char *o, int64_t flat, tc_op op, int ndim, const int64_t *shape,
                      const char *what, tc_err *err) {
  if (!fits(e, dt) && policy == TC_OVERFLOW_CHECK) return overflow_error(err, op, dt, ndim, shape, flat, what);
  store(dt, o + (size_t)flat * tc_dtype_size(dt), clamp(e, dt));
  return 0;
}

/* t's elements in row-major order: read in place when t is a contiguous
 * tensor in host memory, else a copy (*owned, to free). */
static const char *host_read(tc_tensor *t, char **owned, tc_err *err) {
  *owned = NULL;
  const char *p = tc_tensor_host_data(t);
  if (p && tc_is_contiguous(t)) return p;
  return *owned = host_copy(t, err);
}

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
 * A job is split in tasks of whole blocks of OVF_BLOCK elements. For
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
#define OVF_BLOCK 1024
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
    case TC_OP_FLOOR_DIV: /* less one when inexact and the signs differ */ \
      FUSED_BIN(S q = OVF_DIV_##CLS(S, U, x, y); o[i] = (S)(q - ((S)((U)q * (U)y) != x && FUSED_NEG(x) != FUSED_NEG(y))); \
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
  _Alignas(64) char buf[2][OVF_BLOCK * 8];   /* an operand of another dtype, converted to kdt */
  size_t sza = tc_dtype_size(j->da), szb = tc_dtype_size(j->db);
  bool cva = j->op != TC_OP_CAST && j->da != j->kdt, cvb = j->b && j->db != j->kdt;
  int64_t lo = (int64_t)task * j->per, hi = j->n - lo < j->per ? j->n : lo + j->per;
  j->bad[task] = -1;
  for (int64_t i0 = lo; i0 < hi; i0 += OVF_BLOCK) {
    if (tc_interrupt_flag) return -1;
    int64_t m = hi - i0 < OVF_BLOCK ? hi - i0 : OVF_BLOCK;
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
  j->per = (j->per + OVF_BLOCK - 1) / OVF_BLOCK * OVF_BLOCK;
  int nt = (int)((j->n + j->per - 1) / j->per);
  j->bad = first;
  int rc = nt <= 1 ? fused_task(j, 0, 0) : cpu_parallel(nt, fused_task, j);
  for (int t = 0; rc == 0 && t < nt && *bad < 0; t++) *bad = first[t];
  return rc == 0 ? 0 : -1;
}

static bool int_or_bool(tc_dtype dt) { return tc_dtype_class(dt) == TC_CLASS_INT || dt == TC_DT_BOOL; }

/* An operand for the block loops: contiguous in host memory (stride 1) or
 * one element broadcast (stride 0); NULL when it is neither. */
static const char *fused_operand(tc_tensor *t, int64_t *stride) {
  const char *p = tc_tensor_host_data(t);
  if (!p) return NULL;
  bool one = true;
  for (int d = 0; d < t->ndim; d++) one &= t->shape[d] == 1 || t->strides[d] == 0;
  *stride = one ? 0 : 1;
  return one || tc_is_contiguous(t) ? p : NULL;
}

int tc_overflow_ew(tc_op op, tc_dtype kdt, int nin, tc_tensor *const *in, tc_tensor *out, tc_err *err) {
  if (op == TC_OP_ABS && tc_dtype_is_unsigned(kdt) && in[0]->dtype == kdt) return 1;   /* the identity: the engine's kernel */
  int64_t n = tc_numel(out), bad;
  char *oa = NULL, *ob = NULL, *o = NULL, *direct = NULL;
  fjob j = {.op = op, .da = in[0]->dtype, .db = nin > 1 ? in[1]->dtype : kdt, .kdt = kdt, .n = n,
            .check = policy == TC_OVERFLOW_CHECK};
  j.a = fused_operand(in[0], &j.sa);
  if (nin > 1) j.b = fused_operand(in[1], &j.sb);
  /* otherwise (another engine's memory, a strided view, a lone broadcast operand) a contiguous host copy */
  if (!j.a || (n > 1 && j.sa == 0 && (nin == 1 || j.sb == 0))) { j.a = host_read(in[0], &oa, err); j.sa = 1; }
  if (nin > 1 && j.a && !j.b) { j.b = host_read(in[1], &ob, err); j.sb = 1; }
  int rc = -1;
  if (!j.a || (nin > 1 && !j.b)) goto done;
  /* a broadcast element of another dtype is converted once (the value is the same: a weak literal
     was checked to fit kdt, a promotion only widens); a tensor of another dtype, a block at a time */
  _Alignas(8) char sca[8], scb[8];
  if (j.sa == 0 && j.da != kdt && int_or_bool(j.da)) { store(kdt, sca, load(j.da, j.a)); j.a = sca; j.da = kdt; }
  if (j.b && j.sb == 0 && j.db != kdt && int_or_bool(j.db)) { store(kdt, scb, load(j.db, j.b)); j.b = scb; j.db = kdt; }
  /* the result is written in place when it lies in host memory (the CPU
   * engine's), else in a buffer copied to it at the end */
  direct = tc_tensor_host_data(out) ? tc_tensor_data(out) : NULL;
  o = direct ? direct : malloc((size_t)(n ? n : 1) * tc_dtype_size(kdt));
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  j.o = o;
  /* every op tc_overflow_judges names: add, sub, mul, pow, neg, abs, and div, floor_div of signed dtypes */
  j.fused = int_or_bool(j.da) && int_or_bool(j.db);
  if (fused_run(&j, &bad) != 0) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
  if (bad >= 0) {
    char what[96];
    snprintf(what, sizeof what, "the exact result of %s", tc_op_name(op));
    rc = overflow_error(err, op, kdt, out->ndim, out->shape, bad, what);
    goto done;
  }
  rc = direct ? 0 : tc_tensor_write(out, o, err);
done:
  free(oa);
  free(ob);
  if (!direct) free(o);
  return rc;
}

/* ---- casts ---- */
bool tc_overflow_judges_cast(tc_dtype from, tc_dtype to) {
  return policy != TC_OVERFLOW_WRAP && from != to && tc_dtype_class(to) == TC_CLASS_INT &&
         tc_dtype_class(from) != TC_CLASS_BOOL;
}

/* A cast between integer dtypes: the block loops (their least and greatest
 * value) on the CPU engine's threads. */
static tc_tensor *int_cast(tc_tensor *x, tc_dtype to, tc_err *err) {
  int64_t n = tc_numel(x), bad;
  char *owned = NULL, *o = NULL, *direct = NULL;
  tc_tensor *out = tc_tensor_new(to, x->ndim, x->shape, err);
  fjob j = {.op = TC_OP_CAST, .da = x->dtype, .db = x->dtype, .kdt = to, .n = n, .check = policy == TC_OVERFLOW_CHECK,
            .fused = true};
  j.a = fused_operand(x, &j.sa);
  if (!j.a || (n > 1 && j.sa == 0)) { j.a = host_read(x, &owned, err); j.sa = 1; }
  if (!out || !j.a) goto fail;
  direct = tc_tensor_host_data(out) ? tc_tensor_data(out) : NULL;
  o = direct ? direct : malloc((size_t)(n ? n : 1) * tc_dtype_size(to));
  if (!o) { tc_err_set(err, TC_E_OOM, TC_OP_CAST, (int)x->dtype, "allocation failed"); goto fail; }
  j.o = o;
  if (fused_run(&j, &bad) != 0) { tc_err_set(err, TC_E_INTERRUPTED, TC_OP_CAST, (int)x->dtype, "interrupted"); goto fail; }
  if (bad >= 0) {
    char what[96];
    snprintf(what, sizeof what, "a %s value cast to %s", tc_dtype_name(x->dtype), tc_dtype_name(to));
    overflow_error(err, TC_OP_CAST, to, x->ndim, x->shape, bad, what);
    goto fail;
  }
  if (direct || tc_tensor_write(out, o, err) == 0) goto done;
fail:
  tc_tensor_free(out);
  out = NULL;
done:
  free(owned);
  if (!direct) free(o);
  return out;
}

tc_tensor *tc_overflow_cast(tc_tensor *x, tc_dtype to, tc_err *err) {
  const tc_op op = TC_OP_CAST;
  tc_dtype from = x->dtype;
  if (tc_dtype_class(from) != TC_CLASS_FLT) {
    if (lo_of(from) >= lo_of(to) && hi_of(from) <= hi_of(to)) return tc_cast(x, to, err);   /* every value fits */
    return int_cast(x, to, err);
  }
  /* floats are read as f64 (exact for every float dtype) */
  tc_tensor *src = tc_cast(x, TC_DT_F64, err);
  if (!src) return NULL;
  int64_t n = tc_numel(x);
  char *a = NULL, *o = NULL;
  const char *in = host_read(src, &a, err);
  tc_tensor *out = NULL;
  if (in && n > 0 && range_fits((const double *)(const void *)in, n, lo_of(to), hi_of(to))) {   /* the engine's cast is exact */
    out = tc_cast(x, to, err);
    goto done;
  }
  size_t osz = tc_dtype_size(to);
  if (!in) goto done;
  o = malloc((size_t)(n ? n : 1) * osz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)from, "allocation failed"); goto done; }
  char what[96];
  snprintf(what, sizeof what, "a %s value cast to %s", tc_dtype_name(from), tc_dtype_name(to));
  for (int64_t i = 0; i < n; i++) {
    exact e;
    double d;
    memcpy(&d, in + (size_t)i * 8, 8);
    if (d != d) {
      if (policy == TC_OVERFLOW_CHECK) {
        overflow_error(err, op, to, x->ndim, x->shape, i, "NaN");
        goto done;
      }
      e = ex(0);
    } else if (d >= 18446744073709551616.0) e = (exact){0, 1};           /* 2^64 and above, +inf */
    else if (d < -9223372036854775808.0) e = (exact){0, -1};             /* below -2^63, -inf */
    else e = ex((i128)d);   /* truncated toward zero, as the cast does */
    if (put_judged(e, to, o, i, op, x->ndim, x->shape, what, err) != 0) goto done;
  }
  out = tc_tensor_new(to, x->ndim, x->shape, err);
  if (out && tc_tensor_write(out, o, err) != 0) { tc_tensor_free(out); out = NULL; }
done:
  tc_tensor_free(src);
  free(a);
  free(o);
  return out;
}

/* ---- sums and products ----
 * x is contiguous with its reduced axes last: m outputs of n elements each. */
bool tc_overflow_judges_reduce(tc_op op, tc_dtype kdt) {
  /* an integer nansum (no NaN to skip) is a sum */
  return tc_overflow_judges_matmul(kdt) && (op == TC_OP_REDUCE_SUM || op == TC_OP_NANSUM || op == TC_OP_REDUCE_PROD);
}

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

int tc_overflow_reduce(tc_op op, tc_dtype kdt, tc_tensor *px, tc_tensor *out, tc_err *err) {
  int64_t m = tc_numel(out), total = tc_numel(px), n = m ? total / m : 0;
  size_t sz = tc_dtype_size(kdt);
  char *owned = NULL, *o = NULL;
  i128 *sums = NULL;
  const char *a = host_read(px, &owned, err);
  int rc = -1;
  if (!a) goto done;
  o = malloc((size_t)(m ? m : 1) * sz);
  /* n < 2^62 values of at most 2^64 each: a sum is exact in 128 bits; a product, unless PROD_UNSURE */
  bool prod = op == TC_OP_REDUCE_PROD;
  sums = malloc((size_t)(m ? m : 1) * sizeof(i128));
  if (!o || !sums) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  if (xsum_rows(kdt, prod, a, m, n, sums) != 0) {
    if (tc_interrupt_flag) tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted");
    else tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed");
    goto done;
  }
  for (int64_t r = 0; r < m; r++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
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
    if (put_judged(e, kdt, o, r, op, out->ndim, out->shape, prod ? "the exact product" : "the exact sum",
                   err) != 0)
      goto done;
  }
  rc = tc_tensor_write(out, o, err);
done:
  free(owned);
  free(o);
  free(sums);
  return rc;
}

/* ---- matrix products ----
 * C[i, j] = sum_k A[i, k] B[k, j] exactly: 128-bit products, and a count of
 * 2^128 wraps of the running sum (a sum that wrapped is beyond every dtype). */
bool tc_overflow_judges_matmul(tc_dtype kdt) {
  return policy != TC_OVERFLOW_WRAP && tc_dtype_class(kdt) == TC_CLASS_INT;
}

/* The least and greatest of n > 0 elements of an integer dtype, in a loop
 * the compiler vectorises (the element-by-element i128 loads it replaced
 * made check 2x wrap on a 512^2 i64 product). */
#define K_IRANGE(E, n_, S, ...) \
  CPU_CLONES static void irange_##E(const void *p_, int64_t n, i128 *mn, i128 *mx) { \
    const S *p = p_; \
    S lo = p[0], hi = p[0]; \
    for (int64_t i = 1; i < n; i++) { \
      lo = p[i] < lo ? p[i] : lo; \
      hi = p[i] > hi ? p[i] : hi; \
    } \
    *mn = (i128)lo; \
    *mx = (i128)hi; \
  }
TC_FOR_INT(K_IRANGE, _)

typedef void (*irange_fn)(const void *, int64_t, i128 *, i128 *);
static const irange_fn irange_table[TC_DT_COUNT] = {
#define IRANGE_ENTRY(E, ...) [TC_DT_##E] = irange_##E,
    TC_FOR_INT(IRANGE_ENTRY, _)
#undef IRANGE_ENTRY
};

/* The largest magnitude among t's elements (of integer dtype dt), or -1
 * when t cannot be read (the caller then judges every product). */
static i128 max_abs(tc_tensor *t, tc_dtype dt) {
  tc_err e;
  tc_err_clear(&e);
  char *owned = NULL;
  int64_t n = tc_numel(t);
  if (n == 0) return 0;
  const char *p = t->dtype == dt && irange_table[dt] ? host_read(t, &owned, &e) : NULL;
  if (!p) return -1;
  i128 mn, mx;
  irange_table[dt](p, n, &mn, &mx);
  free(owned);
  return -mn > mx ? -mn : mx;
}

/* Whether no sum of K products of a's and b's elements can leave kdt's
 * range (max|a| * max|b| * K within it, which bounds every partial sum
 * too): then the engine's wrapping product is the exact one, and the
 * common case runs at the kernel's speed. */
bool tc_overflow_matmul_fits(tc_dtype kdt, tc_tensor *a, tc_tensor *b) {
  int64_t K = a->shape[a->ndim - 1];
  i128 ma = max_abs(a, kdt), mb = ma >= 0 ? max_abs(b, kdt) : -1;
  if (ma < 0 || mb < 0) return false;
  if (ma == 0 || mb == 0 || K == 0) return true;
  u128 p = (u128)ma * (u128)mb, q;   /* each at most 2^64 */
  if (__builtin_mul_overflow(p, (u128)K, &q)) return false;
  return q <= (u128)hi_of(kdt);
}

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

int tc_overflow_matmul(tc_op op, tc_dtype kdt, tc_tensor *a, tc_tensor *b, tc_tensor *out, tc_err *err) {
  /* a: [..., M, K], b: [..., K, N], out: [..., M, N], batch dims already equal (broadcast views) */
  int nd = out->ndim;
  int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
  int64_t batch = 1, total = tc_numel(out);
  for (int d = 0; d < nd - 2; d++) batch *= out->shape[d];
  size_t sz = tc_dtype_size(kdt);
  char *ha = host_copy(a, err), *hb = ha ? host_copy(b, err) : NULL, *o = NULL;
  i128 *v = NULL;
  int rc = -1;
  if (!hb) goto done;
  o = malloc((size_t)(total ? total : 1) * sz);
  v = malloc((size_t)(total ? total : 1) * sizeof *v);
  if (!o || !v) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  /* the exact values, rows on the CPU engine's threads; then judged in order */
  xmm_job j = {xmm_table[kdt], ha, hb, sz, M, K, N, batch * M, 0, v};
  int64_t macs, tasks;
  if (__builtin_mul_overflow(j.rows * N, K, &macs)) macs = INT64_MAX;
  tasks = cpu_split(macs, (int64_t)1 << 18);
  if (tasks > j.rows) tasks = j.rows;
  if (tasks < 1) tasks = 1;
  j.per = (j.rows + tasks - 1) / tasks;
  if (cpu_parallel((int)((j.rows + j.per - 1) / j.per), xmm_task, &j) != 0) {
    if (tc_interrupt_flag) tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted");
    else tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed");
    goto done;
  }
  for (int64_t f = 0; f < total; f++) {
    i128 x = v[f];
    exact e = x == I128_MAX ? (exact){0, 1} : x == -I128_MAX - 1 ? (exact){0, -1} : ex(x);
    if (put_judged(e, kdt, o, f, op, nd, out->shape, "the exact dot product", err) != 0) goto done;
  }
  rc = tc_tensor_write(out, o, err);
done:
  free(ha);
  free(hb);
  free(o);
  free(v);
  return rc;
}

/* ---- scans ----
 * Each output element is the exact prefix sum (in 128 bits: fewer than
 * 2^62 values of at most 2^64) or prefix product (mul(): a value that left
 * 128 bits keeps its sign until a zero) of its row, judged alone: under
 * saturate a clamped element does not change the next one. */
bool tc_overflow_judges_scan(tc_op op, tc_dtype kdt) {
  return tc_overflow_judges_matmul(kdt) && (op == TC_OP_CUMSUM || op == TC_OP_CUMPROD);
}

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

int tc_overflow_scan(tc_op op, tc_dtype kdt, tc_tensor *c, int axis, tc_tensor *out, tc_err *err) {
  /* c: contiguous, of dtype kdt, with the scanned axis (axis of the
   * original) moved last; out: c's shape */
  int nd = c->ndim;
  int64_t n = nd ? c->shape[nd - 1] : 1, total = tc_numel(c), rows = n ? total / n : 0;
  size_t sz = tc_dtype_size(kdt);
  bool check = policy == TC_OVERFLOW_CHECK;
  char *owned = NULL, *direct = tc_tensor_host_data(out) ? tc_tensor_data(out) : NULL, *o = NULL;
  const char *a = host_read(c, &owned, err);
  int rc = -1;
  if (!a) goto done;
  o = direct ? direct : malloc((size_t)(total ? total : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  /* the original shape, and under check the least row-major index there of
   * an element that does not fit (rows are c's order, not the original's) */
  int64_t shape[TC_MAX_DIMS], first = -1;
  for (int d = 0; d < nd; d++) shape[d] = c->shape[d < axis ? d : d == axis ? nd - 1 : d - 1];
  for (int64_t r = 0; r < rows; r++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    int64_t p = xscan(kdt, op == TC_OP_CUMPROD, a + (size_t)(r * n) * sz, o + (size_t)(r * n) * sz, n, check);
    if (p < 0) continue;
    int64_t idx[TC_MAX_DIMS], rem = r, flat = 0;   /* row r's index in c, then in the original */
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rem % c->shape[d]; rem /= c->shape[d]; }
    for (int d = 0; d < nd; d++) flat = flat * shape[d] + (d < axis ? idx[d] : d == axis ? p : idx[d - 1]);
    if (first < 0 || flat < first) first = flat;
    if (axis == nd - 1) break;   /* rows in the original's order: the first found is the least */
  }
  if (first >= 0) {
    rc = overflow_error(err, op, kdt, nd, shape, first, op == TC_OP_CUMSUM ? "the exact running sum" : "the exact running product");
    goto done;
  }
  rc = direct ? 0 : tc_tensor_write(out, o, err);
done:
  free(owned);
  if (!direct) free(o);
  return rc;
}

/* ---- einsum ----
 * When no output can leave the dtype (the product of the operands' largest
 * magnitudes and the count of summed terms fits it), the wrapping lowering
 * is exact and runs as usual. Otherwise each output element is computed
 * here as the exact sum of its products: a product of up to 64 operands
 * needs 64 bits each, so the terms and their sum are kept in nops + 2 words
 * (two's complement for the sum). */
bool tc_overflow_judges_einsum(tc_dtype kdt) { return tc_overflow_judges_matmul(kdt); }

bool tc_overflow_einsum_fits(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nsum,
                             const int *sumlab) {
  u128 b = 1;
  for (int s = 0; s < nsum; s++)
    if (__builtin_mul_overflow(b, (u128)gsize[sumlab[s]], &b)) return false;
  for (int i = 0; i < nops && b; i++) {
    i128 m = max_abs(ops[i].t, kdt);
    if (m < 0 || __builtin_mul_overflow(b, (u128)m, &b)) return false;
  }
  return b <= (u128)hi_of(kdt);
}

#define XW_MAX (64 + 2)
/* acc (nw words, two's complement) += m, or -= m when neg (m: len words, unsigned) */
static void words_add(uint64_t *acc, int nw, const uint64_t *m, int len, bool neg) {
  uint64_t c = 0;
  for (int j = 0; j < nw && (j < len || c); j++) {
    uint64_t w = j < len ? m[j] : 0, r;
    uint64_t c1 = neg ? __builtin_sub_overflow(acc[j], w, &r) : __builtin_add_overflow(acc[j], w, &r);
    uint64_t c2 = neg ? __builtin_sub_overflow(r, c, &r) : __builtin_add_overflow(r, c, &r);
    c = c1 | c2;
    acc[j] = r;
  }
}

/* The exact einsum's operands: each one's host copy, the stride of each
 * output and summed label in it (0: absent or broadcast), and its offset
 * at the current term. */
typedef struct {
  tc_dtype kdt;
  size_t sz;
  int nops, nw, nsum;
  const int64_t *gsize;
  const int *sumlab;
  char **h;
  int64_t (*ost)[TC_MAX_DIMS];
  int64_t (*sst)[TC_EINSUM_LABELS];
  int64_t *off;
} xein;

static void xein_free(xein *e) {
  for (int i = 0; e->h && i < e->nops; i++) free(e->h[i]);
  free(e->h);
  free(e->ost);
  free(e->sst);
  free(e->off);
}

static int xein_init(xein *e, const tc_einsum_opnd *ops, int nout, const int *outlab, tc_err *err) {
  int nops = e->nops;
  e->h = calloc((size_t)nops, sizeof *e->h);
  e->ost = calloc((size_t)nops, sizeof *e->ost);
  e->sst = calloc((size_t)nops, sizeof *e->sst);
  e->off = calloc((size_t)nops, sizeof *e->off);
  if (!e->h || !e->ost || !e->sst || !e->off)
    return tc_err_set(err, TC_E_OOM, TC_OP_EINSUM, (int)e->kdt, "allocation failed");
  for (int i = 0; i < nops; i++) {
    const tc_einsum_opnd *p = &ops[i];
    if (!(e->h[i] = host_copy(p->t, err))) return -1;
    int64_t st = 1;
    for (int d = p->n - 1; d >= 0; d--) {
      int64_t s = p->t->shape[d] == e->gsize[p->lab[d]] ? st : 0;
      st *= p->t->shape[d] ? p->t->shape[d] : 1;
      for (int x = 0; x < nout; x++)
        if (outlab[x] == p->lab[d]) e->ost[i][x] = s;
      for (int x = 0; x < e->nsum; x++)
        if (e->sumlab[x] == p->lab[d]) e->sst[i][x] = s;
    }
  }
  return 0;
}

/* acc (words) += the current term, a product too wide for 128 bits: its
 * magnitude m (len words) and sign, then acc += or -= m. */
static void xein_add_wide(const xein *e, uint64_t *acc) {
  uint64_t m[XW_MAX];
  int len = 1;
  bool neg = false;
  m[0] = 1;
  for (int i = 0; i < e->nops; i++) {
    i128 v = load(e->kdt, e->h[i] + (size_t)e->off[i] * e->sz);
    neg ^= v < 0;
    uint64_t u = (uint64_t)(v < 0 ? -v : v), carry = 0;
    for (int w = 0; w < len; w++) {
      u128 q = (u128)m[w] * u + carry;
      m[w] = (uint64_t)q;
      carry = (uint64_t)(q >> 64);
    }
    if (carry) m[len++] = carry;
  }
  words_add(acc, e->nw, m, len, neg);
}

/* The exact sum of products of the output element at oidx. */
static exact xein_element(const xein *e, int nout, const int64_t *oidx, int64_t terms) {
  int64_t sidx[TC_EINSUM_LABELS] = {0};
  uint64_t acc[XW_MAX] = {0};
  int nops = e->nops;
  for (int i = 0; i < nops; i++) {
    e->off[i] = 0;
    for (int x = 0; x < nout; x++) e->off[i] += oidx[x] * e->ost[i][x];
  }
  /* terms whose product fits 128 bits add into fs, counting its 2^128
   * wraps in fw; the others, in words, into acc */
  i128 fs = 0;
  int64_t fw = 0;
  for (int64_t t = 0; t < terms; t++) {
    i128 p = 1;
    bool zero = false, wide = false;
    for (int i = 0; i < nops; i++) {
      i128 v = load(e->kdt, e->h[i] + (size_t)e->off[i] * e->sz);
      if (v == 0) { zero = true; break; }
      if (!wide && __builtin_mul_overflow(p, v, &p)) wide = true;
    }
    if (!zero && !wide) {
      i128 r;
      if (__builtin_add_overflow(fs, p, &r)) fw += p > 0 ? 1 : -1;
      fs = r;
    } else if (!zero) {
      xein_add_wide(e, acc);
    }
    /* the next term: the summed labels as an odometer, last fastest */
    for (int s = e->nsum - 1; s >= 0; s--) {
      for (int i = 0; i < nops; i++) e->off[i] += e->sst[i][s];
      if (++sidx[s] < e->gsize[e->sumlab[s]]) break;
      for (int i = 0; i < nops; i++) e->off[i] -= e->sst[i][s] * sidx[s];
      sidx[s] = 0;
    }
  }
  /* acc += fs + fw * 2^128 */
  u128 mag = fs < 0 ? -(u128)fs : (u128)fs;
  uint64_t m[3] = {(uint64_t)mag, (uint64_t)(mag >> 64), 0}, w[3] = {0, 0, fw < 0 ? -(uint64_t)fw : (uint64_t)fw};
  words_add(acc, e->nw, m, 2, fs < 0);
  words_add(acc, e->nw, w, 3, fw < 0);
  uint64_t ext = acc[1] >> 63 ? UINT64_MAX : 0;
  bool small = true;
  for (int j = 2; j < e->nw; j++) small &= acc[j] == ext;
  return small ? ex((i128)(((u128)acc[1] << 64) | acc[0])) : (exact){0, acc[e->nw - 1] >> 63 ? -1 : 1};
}

tc_tensor *tc_overflow_einsum(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nout,
                              const int *outlab, int nsum, const int *sumlab, tc_err *err) {
  const tc_op op = TC_OP_EINSUM;
  xein e = {.kdt = kdt, .sz = tc_dtype_size(kdt), .nops = nops, .nw = nops + 2, .nsum = nsum, .gsize = gsize,
            .sumlab = sumlab};
  int64_t oshape[TC_MAX_DIMS], nout_el = 1, oidx[TC_MAX_DIMS] = {0}, terms = 1;
  for (int d = 0; d < nout; d++) nout_el *= oshape[d] = gsize[outlab[d]];
  for (int s = 0; s < nsum; s++) terms *= gsize[sumlab[s]];
  char *o = NULL;
  tc_tensor *out = NULL;
  if (xein_init(&e, ops, nout, outlab, err) != 0) goto done;
  o = malloc((size_t)(nout_el ? nout_el : 1) * e.sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int64_t f = 0; f < nout_el; f++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    exact v = xein_element(&e, nout, oidx, terms);
    if (put_judged(v, kdt, o, f, op, nout, oshape, "the exact sum of products", err) != 0) goto done;
    for (int x = nout - 1; x >= 0; x--) {   /* the next output element */
      if (++oidx[x] < oshape[x]) break;
      oidx[x] = 0;
    }
  }
  out = tc_tensor_new(kdt, nout, oshape, err);
  if (out && tc_tensor_write(out, o, err) != 0) { tc_tensor_free(out); out = NULL; }
done:
  xein_free(&e);
  free(o);
  return out;
}
