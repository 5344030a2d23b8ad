/* CPU elementwise ops and casts: the kernels are in ew_kern.h (this
 * file's portable build of them, and ew_avx2.c's); this file picks the
 * table for the CPU's level and runs a kernel over the row plan. */
#include <string.h>
#define EW_ISA base
#include "ew_kern.h"

/* The AVX2 build where the CPU has it (and the level is not held below). */
static const ew_tables *tables(void) {
#if EW_HAVE_AVX2
  if (cpu_float_isa() >= CPU_ISA_AVX2) return &ew_tables_avx2;
#endif
  return &ew_tables_base;
}

/* ---- running ---- */
typedef enum { FAM_NONE, FAM_BIN, FAM_CMP, FAM_UN, FAM_PRED, FAM_SEL } family;

static family family_of(tc_op op) {
  switch (tc_op_family(op)) {   /* the families of src/ops.def with elementwise kernels */
  case TC_FAM_BIN: return FAM_BIN;
  case TC_FAM_CMP: return FAM_CMP;
  case TC_FAM_UN: return FAM_UN;
  case TC_FAM_PRED: return FAM_PRED;
  case TC_FAM_SEL: return FAM_SEL;
  default: return FAM_NONE;
  }
}

/* ---- i64 /, //, %, rem by one divisor (a broadcast scalar) ----
 * A 64-bit division is a slow instruction the compiler cannot vectorise;
 * by a divisor d fixed for the whole row it is a multiply by a magic
 * number instead (Granlund and Montgomery; the algorithm of Hacker's
 * Delight, 10-1, for 64 bits): q = trunc(n / d) exactly, for every n.
 * Divisors -1, 0, 1 and INT64_MIN, and short rows, take the plain kernel. */
typedef struct { int64_t d, m; int s; } i64_magic;
__extension__ typedef __int128 ew_i128;

static bool i64_magic_of(int64_t d, i64_magic *g) {
  if (d == 0 || d == 1 || d == -1 || d == INT64_MIN) return false;
  const uint64_t two63 = (uint64_t)1 << 63;
  uint64_t ad = d < 0 ? 0 - (uint64_t)d : (uint64_t)d, t = two63 + ((uint64_t)d >> 63);
  uint64_t anc = t - 1 - t % ad;   /* |nc| */
  uint64_t q1 = two63 / anc, r1 = two63 - q1 * anc, q2 = two63 / ad, r2 = two63 - q2 * ad, delta;
  int p = 63;
  do {
    p++;
    q1 *= 2; r1 *= 2;
    if (r1 >= anc) { q1++; r1 -= anc; }
    q2 *= 2; r2 *= 2;
    if (r2 >= ad) { q2++; r2 -= ad; }
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  uint64_t m = q2 + 1;
  g->d = d;
  g->m = (int64_t)(d < 0 ? 0 - m : m);
  g->s = p - 64;
  return true;
}

static inline int64_t i64_quot(int64_t n, const i64_magic *g) {
  int64_t q = (int64_t)(((ew_i128)g->m * n) >> 64);
  if (g->d > 0 && g->m < 0) q = (int64_t)((uint64_t)q + (uint64_t)n);
  if (g->d < 0 && g->m > 0) q = (int64_t)((uint64_t)q - (uint64_t)n);
  q >>= g->s;
  return q + (int64_t)((uint64_t)q >> 63);
}

/* what each op makes of n, the quotient q and the remainder r */
#define DIVBY_DIV(n, q, r, d) (q)
#define DIVBY_REM(n, q, r, d) (r)
#define DIVBY_FLOOR_DIV(n, q, r, d) ((q) - (((r) != 0) & (((n) < 0) != ((d) < 0))))
#define DIVBY_MOD(n, q, r, d) ((r) + ((((r) != 0) & (((r) < 0) != ((d) < 0))) ? (d) : 0))
#define DIVBY_OPS(X) X(DIV) X(REM) X(FLOOR_DIV) X(MOD)
#define DIVBY_KERNEL(OP) \
  static void divby_##OP(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    i64_magic g; \
    int64_t d; \
    memcpy(&d, b_, sizeof d); \
    if (sb != 0 || len < 64 || !i64_magic_of(d, &g)) { \
      ((ew_bin_fn)tables()->ew[TC_OP_##OP][TC_DT_I64])(len, o_, a_, sa, b_, sb); \
      return; \
    } \
    int64_t *o = (int64_t *)(void *)o_; \
    const int64_t *a = (const int64_t *)(const void *)a_; \
    for (int64_t i = 0; i < len; i++) { \
      int64_t n = a[i * sa], q = i64_quot(n, &g), r = (int64_t)((uint64_t)n - (uint64_t)q * (uint64_t)d); \
      (void)r; \
      o[i] = DIVBY_##OP(n, q, r, d); \
    } \
  }
DIVBY_OPS(DIVBY_KERNEL)

/* Math functions on f32 and f64 come from vmath.c (SLEEF) instead; i64
 * division by a broadcast divisor from the kernels above. */
static ew_any_fn ew_kernel(tc_op op, tc_dtype dt) {
  if (family_of(op) == FAM_NONE) return NULL;
  ew_any_fn k = tables()->ew[op][dt];
  if (k && dt == TC_DT_I64) {
#define DIVBY_CASE(OP) if (op == TC_OP_##OP) return (ew_any_fn)divby_##OP;
    DIVBY_OPS(DIVBY_CASE)
#undef DIVBY_CASE
  }
  cpu_vmath_fn v = k ? cpu_vmath_kernel(op, dt) : NULL;
  return v ? (ew_any_fn)v : k;
}

bool cpu_supports_ew(const tc_call *c) { return ew_kernel(c->op, c->dtype) != NULL; }
bool cpu_supports_cast(const tc_call *c) { return tables()->cast[c->dtype][c->out->dtype] != NULL; }

/* cvt[i]: the cast of input i to the kernel's dtype, when it has another
 * dtype (binary and unary families); size: each operand's element size. */
typedef struct {
  family fam;
  ew_any_fn fn;
  ew_un_fn cvt[CPU_MAX_OPS - 1];
  bool any_cvt;
  int nop;
  size_t size[CPU_MAX_OPS];
} ew_ctx;

static void ew_call(const ew_ctx *ctx, int64_t n, char *const *p, const int64_t *s) {
  switch (ctx->fam) {
  case FAM_BIN: case FAM_CMP: ((ew_bin_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2]); break;
  case FAM_UN: case FAM_PRED: ((ew_un_fn)ctx->fn)(n, p[0], p[1], s[1]); break;
  case FAM_SEL: ((ew_sel_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2], p[3], s[3]); break;
  default: break;
  }
}

/* Inputs of another dtype are converted a block at a time into a buffer
 * (with the cast kernels, so the values are those of a converted copy); a
 * broadcast (stride 0) input is converted once. */
#define EW_CVT_BLOCK 512
static int ew_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const ew_ctx *ctx = ctx_;
  (void)pos;
  if (!ctx->any_cvt) { ew_call(ctx, n, p, s); return 0; }
  _Alignas(64) char buf[CPU_MAX_OPS - 1][EW_CVT_BLOCK * 8];
  for (int64_t j = 0; j < n; j += EW_CVT_BLOCK) {
    int64_t m = n - j < EW_CVT_BLOCK ? n - j : EW_CVT_BLOCK;
    char *q[CPU_MAX_OPS];
    int64_t qs[CPU_MAX_OPS];
    q[0] = p[0] + j * (int64_t)ctx->size[0];
    qs[0] = 1;
    for (int i = 1; i < ctx->nop; i++) {
      ew_un_fn cv = ctx->cvt[i - 1];
      char *src = p[i] + j * s[i] * (int64_t)ctx->size[i];
      if (!cv) { q[i] = src; qs[i] = s[i]; continue; }
      cv(s[i] == 0 ? 1 : m, buf[i - 1], src, s[i]);
      q[i] = buf[i - 1];
      qs[i] = s[i] == 0 ? 0 : 1;
    }
    ew_call(ctx, m, q, qs);
  }
  return 0;
}

/* a transcendental function's elements per task (see run_plan) */
#define EW_MATH_MIN 1536
static int run_plan(tc_call *c, ew_ctx *ctx, tc_err *err) {
  if (c->out->ndim == 0 || tc_numel(c->out) == 1) {   /* one element (a scalar loop's statement): no plan to make */
    char *p[CPU_MAX_OPS];
    int64_t s[CPU_MAX_OPS] = {0};
    ctx->nop = c->nin + 1;
    for (int k = 0; k < ctx->nop; k++) {
      const tc_tensor *t = k ? c->in[k - 1] : c->out;
      p[k] = (char *)tc_tensor_data(t);
      ctx->size[k] = tc_dtype_size(t->dtype);
    }
    return ew_row(ctx, 0, 1, p, s);
  }
  cpu_plan plan;
  cpu_plan_init(&plan, c->out, c->nin, c->in);
  ctx->nop = plan.nop;
  for (int k = 0; k < plan.nop; k++) ctx->size[k] = plan.esize[k];
  plan.tiles = true;
  /* elements per task: 2^15 (some 10 us of adds), and EW_MATH_MIN
   * for a transcendental function (one with a parity tolerance, 10 to 50
   * times an add per element); with the pool's workers spinning between
   * jobs, a task this size is worth a thread. Up to two tasks a thread,
   * the work is cut into one task a thread (3 tasks on 2 threads would
   * leave one thread the third alone). */
  int64_t n = tc_numel(c->out), min = tc_op_tolerance(c->op, c->dtype).ulps > 0 ? EW_MATH_MIN : CPU_PAR_MIN / 2;
  int64_t k = n / min, t = cpu_threads();
  if (k >= 2 && k < 2 * t) min = n / (k < t ? k : t);
  int rc = cpu_plan_run_par(&plan, n, min, ew_row, ctx);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

int cpu_run_ew(tc_call *c, tc_err *err) {
  ew_ctx ctx = {.fam = family_of(c->op), .fn = ew_kernel(c->op, c->dtype)};
  if (!ctx.fn)
    return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cpu", tc_dtype_name(c->dtype));
  for (int i = 0; i < c->nin && ctx.fam != FAM_SEL; i++)
    if (c->in[i]->dtype != c->dtype) {
      ctx.cvt[i] = tables()->cast[c->in[i]->dtype][c->dtype];
      if (!ctx.cvt[i]) return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->in[i]->dtype, "no conversion on cpu");
      ctx.any_cvt = true;
    }
  return run_plan(c, &ctx, err);
}

int cpu_run_cast(tc_call *c, tc_err *err) {
  const ew_tables *t = tables();
  ew_un_fn fn = c->dtype == c->out->dtype ? t->copy[c->dtype] : t->cast[c->dtype][c->out->dtype];
  ew_ctx ctx = {.fam = FAM_UN, .fn = (ew_any_fn)fn};
  return run_plan(c, &ctx, err);
}
