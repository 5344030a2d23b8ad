/* CPU elementwise ops and casts: the kernels are in ew_kern.h (this
 * file's portable build of them, and ew_avx2.c's); this file picks the
 * table for the CPU's level and runs a kernel over the row plan. */
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

/* Math functions on f32 and f64 come from vmath.c (SLEEF) instead. */
static ew_any_fn ew_kernel(tc_op op, tc_dtype dt) {
  if (family_of(op) == FAM_NONE) return NULL;
  ew_any_fn k = tables()->ew[op][dt];
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
