/* CPU elementwise and cast kernels, stamped per (op, dtype) from
 * backend/ew.def and the dtype table. Every loop has a contiguous branch
 * and stride-0 (scalar broadcast) branches with the same body, so the
 * compiler vectorises each; there is no per-element dispatch. */
#include "cpu.h"
#include "../../src/kexpr.h"

#define PTR(S, p) ((S *)(void *)(p))
#define CPTR(S, p) ((const S *)(const void *)(p))

/* ---- stamping ---- */
#define K_BIN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kb_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]), b = LD(pb[i]); o[i] = ST(EXPR); } } \
    else if (sa == 1 && sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = ST(EXPR); } } \
    else if (sa == 0 && sb == 1) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i]); o[i] = ST(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]), b = LD(pb[i * sb]); o[i] = ST(EXPR); } } \
  }
#define K_CMP(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kc_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    typedef C T; \
    uint8_t *restrict o = PTR(uint8_t, o_); const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    if (sa == 1 && sb == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]), b = LD(pb[i]); o[i] = (uint8_t)(EXPR); } } \
    else if (sa == 1 && sb == 0) { const T b = LD(pb[0]); for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = (uint8_t)(EXPR); } } \
    else if (sa == 0 && sb == 1) { const T a = LD(pa[0]); for (int64_t i = 0; i < len; i++) { T b = LD(pb[i]); o[i] = (uint8_t)(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]), b = LD(pb[i * sb]); o[i] = (uint8_t)(EXPR); } } \
  }
#define K_UN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void ku_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); o[i] = ST(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]); o[i] = ST(EXPR); } } \
  }
#define K_PRED(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void kp_##OP##_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    typedef C T; \
    uint8_t *restrict o = PTR(uint8_t, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i]); (void)a; o[i] = (uint8_t)(EXPR); } } \
    else { for (int64_t i = 0; i < len; i++) { T a = LD(pa[i * sa]); (void)a; o[i] = (uint8_t)(EXPR); } } \
  }
#define K_SEL(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  static void ks_##OP##_##E(int64_t len, char *o_, const char *c_, int64_t sc, const char *a_, int64_t sa, \
                            const char *b_, int64_t sb) { \
    S *restrict o = PTR(S, o_); const uint8_t *restrict pc = CPTR(uint8_t, c_); \
    const S *restrict pa = CPTR(S, a_), *restrict pb = CPTR(S, b_); \
    for (int64_t i = 0; i < len; i++) { uint8_t c = pc[i * sc]; S a = pa[i * sa], b = pb[i * sb]; o[i] = EXPR; } \
  }

#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(K_BIN, OP, EXPR)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(K_CMP, OP, EXPR)
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(K_UN, OP, EXPR)
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(K_PRED, OP, EXPR)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(K_SEL, OP, EXPR)
#include "../ew.def"
#undef EW_BIN
#undef EW_CMP
#undef EW_UN
#undef EW_PRED
#undef EW_SEL

/* ---- the kernel table: a NULL entry is an unsupported (op, dtype) ---- */
typedef void (*bin_fn)(int64_t, char *, const char *, int64_t, const char *, int64_t);
typedef void (*un_fn)(int64_t, char *, const char *, int64_t);
typedef void (*sel_fn)(int64_t, char *, const char *, int64_t, const char *, int64_t, const char *, int64_t);
typedef void (*any_fn)(void);   /* stored type; called through its family's type */

#define ENTRY(E, n, S, C, CLS, B, LD, ST, PFX, OP) [TC_OP_##OP][TC_DT_##E] = (any_fn)PFX##_##OP##_##E,
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kb, OP)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kc, OP)
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, ku, OP)
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, kp, OP)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(ENTRY, ks, OP)
static const any_fn ew_table[TC_OP_COUNT][TC_DT_COUNT] = {
#include "../ew.def"
};

/* ---- casts: all 81 (from, to) pairs ---- */
#define K_CAST(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, sn, SS, SC, SCLS, SB, SLD, SST) \
  static void kx_##SE##_##DE(int64_t len, char *o_, const char *a_, int64_t sa) { \
    DS *restrict o = PTR(DS, o_); const SS *restrict pa = CPTR(SS, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) o[i] = TC_CVT_##SCLS##_##DCLS(pa[i], SLD, DE, DS, DB); } \
    else { for (int64_t i = 0; i < len; i++) o[i] = TC_CVT_##SCLS##_##DCLS(pa[i * sa], SLD, DE, DS, DB); } \
  }
TC_DTYPE_PAIRS(K_CAST)

#define K_CAST_ENTRY(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, ...) [TC_DT_##SE][TC_DT_##DE] = kx_##SE##_##DE,
static const un_fn cast_table[TC_DT_COUNT][TC_DT_COUNT] = {
  TC_DTYPE_PAIRS(K_CAST_ENTRY)
};

/* Same-dtype copies move the stored bits (NaN payloads, signalling NaNs
 * and all) instead of converting through a wider type. */
#define K_COPY(E, n, S, ...) \
  static void kcopy_##E(int64_t len, char *o_, const char *a_, int64_t sa) { \
    S *restrict o = PTR(S, o_); const S *restrict pa = CPTR(S, a_); \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) o[i] = pa[i]; } \
    else { for (int64_t i = 0; i < len; i++) o[i] = pa[i * sa]; } \
  }
TC_FOR_ALL(K_COPY, _)
#define K_COPY_ENTRY(E, ...) [TC_DT_##E] = kcopy_##E,
static const un_fn copy_table[TC_DT_COUNT] = {TC_FOR_ALL(K_COPY_ENTRY, _)};

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
static any_fn ew_kernel(tc_op op, tc_dtype dt) {
  if (family_of(op) == FAM_NONE) return NULL;
  cpu_vmath_fn v = ew_table[op][dt] ? cpu_vmath_kernel(op, dt) : NULL;
  return v ? (any_fn)v : ew_table[op][dt];
}

bool cpu_supports_ew(const tc_call *c) { return ew_kernel(c->op, c->dtype) != NULL; }
bool cpu_supports_cast(const tc_call *c) { return cast_table[c->dtype][c->out->dtype] != NULL; }

/* cvt[i]: the cast of input i to the kernel's dtype, when it has another
 * dtype (binary and unary families); size: each operand's element size. */
typedef struct {
  family fam;
  any_fn fn;
  un_fn cvt[CPU_MAX_OPS - 1];
  bool any_cvt;
  int nop;
  size_t size[CPU_MAX_OPS];
} ew_ctx;

static void ew_call(const ew_ctx *ctx, int64_t n, char *const *p, const int64_t *s) {
  switch (ctx->fam) {
  case FAM_BIN: case FAM_CMP: ((bin_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2]); break;
  case FAM_UN: case FAM_PRED: ((un_fn)ctx->fn)(n, p[0], p[1], s[1]); break;
  case FAM_SEL: ((sel_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2], p[3], s[3]); break;
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
      un_fn cv = ctx->cvt[i - 1];
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
  /* elements per task: 2^15 (some 10 us of adds), and 4096
   * for a transcendental function (one with a parity tolerance, 10 to 50
   * times an add per element); with the pool's workers spinning between
   * jobs, a task this size is worth a thread */
  int64_t min = tc_op_tolerance(c->op, c->dtype).ulps > 0 ? 4096 : CPU_PAR_MIN / 2;
  int rc = cpu_plan_run_par(&plan, tc_numel(c->out), min, ew_row, ctx);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

int cpu_run_ew(tc_call *c, tc_err *err) {
  ew_ctx ctx = {.fam = family_of(c->op), .fn = ew_kernel(c->op, c->dtype)};
  if (!ctx.fn)
    return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cpu", tc_dtype_name(c->dtype));
  for (int i = 0; i < c->nin && ctx.fam != FAM_SEL; i++)
    if (c->in[i]->dtype != c->dtype) {
      ctx.cvt[i] = cast_table[c->in[i]->dtype][c->dtype];
      if (!ctx.cvt[i]) return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->in[i]->dtype, "no conversion on cpu");
      ctx.any_cvt = true;
    }
  return run_plan(c, &ctx, err);
}

int cpu_run_cast(tc_call *c, tc_err *err) {
  un_fn fn = c->dtype == c->out->dtype ? copy_table[c->dtype] : cast_table[c->dtype][c->out->dtype];
  ew_ctx ctx = {.fam = FAM_UN, .fn = (any_fn)fn};
  return run_plan(c, &ctx, err);
}
