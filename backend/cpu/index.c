/* CPU data movement: strided copy, gather, scatter, nonzero, triangles,
 * ranges and random numbers, stamped per dtype from the dtype table. The
 * iteration is the shared row plan (cpu.c); modes and reductions are chosen
 * once per row, never per element. */
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../index.h"
#include "../../src/kexpr.h"
#include "../../src/philox.h"

#define PTR(S, p) ((S *)(void *)(p))
#define CPTR(S, p) ((const S *)(const void *)(p))

/* Runs fn over the plan of out and ins, mapping an interrupt to its error. */
static int run_rows(tc_tensor *out, int nin, tc_tensor *const *ins, cpu_row_fn fn, void *ctx, tc_err *err) {
  if (tc_numel(out) == 0) return 0;
  cpu_plan plan;
  cpu_plan_init(&plan, out, nin, ins);
  int rc = cpu_plan_run(&plan, 0, tc_numel(out), fn, ctx);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

/* The same for a row function that writes each element of out once and
 * reads nothing it writes (copies, gathers): across threads, in tiles
 * where an input is transposed (tbuf: cpu_plan's). */
static int run_rows_par(tc_tensor *out, int nin, tc_tensor *const *ins, cpu_row_fn fn, void *ctx, bool tbuf,
                        tc_err *err) {
  if (tc_numel(out) == 0) return 0;
  cpu_plan plan;
  cpu_plan_init(&plan, out, nin, ins);
  plan.tiles = true;
  plan.tbuf = tbuf;
  int rc = cpu_plan_run_par(&plan, tc_numel(out), CPU_PAR_MIN / 2, fn, ctx);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

static int unsupported(const tc_call *c, tc_err *err) {
  return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cpu", tc_dtype_name(c->dtype));
}

/* ---- copy: out (any view) = in[0] (same dtype) ---- */
#define K_COPY(E, n_, S, ...) \
  CPU_CLONES static void copy_##E(int64_t n, char *o_, int64_t so, const char *a_, int64_t sa) { \
    S *o = PTR(S, o_); const S *a = CPTR(S, a_); \
    if (so == 1 && sa == 1) { for (int64_t i = 0; i < n; i++) o[i] = a[i]; } \
    else if (sa == 0) { const S v = a[0]; for (int64_t i = 0; i < n; i++) o[i * so] = v; } \
    else { for (int64_t i = 0; i < n; i++) o[i * so] = a[i * sa]; } \
  }
TC_FOR_ALL(K_COPY, _)
typedef void (*copy_fn)(int64_t, char *, int64_t, const char *, int64_t);
#define COPY_ENTRY(E, ...) [TC_DT_##E] = copy_##E,
static const copy_fn copy_table[TC_DT_COUNT] = {TC_FOR_ALL(COPY_ENTRY, _)};

typedef struct { copy_fn fn; } copy_ctx;

static int copy_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  (void)pos;
  ((copy_ctx *)ctx_)->fn(n, p[0], s[0], p[1], s[1]);
  return 0;
}

static int run_copy(tc_call *c, tc_err *err) {
  copy_ctx ctx = {copy_table[c->dtype]};
  return run_rows_par(c->out, 1, c->in, copy_row, &ctx, true, err);
}

/* ---- gather: out[p] = x[p + k * axis_stride] ---- */
/* One loop per mode so that the loop body has no mode test. */
#define GATHER_LOOP(S, MODE) \
  for (int64_t i = 0; i < n; i++) { \
    int64_t k = ix[i * si]; \
    if (tc_index_norm(&k, len, MODE)) o[i * so] = x[i * sx + k * ast]; \
    else o[i * so] = fill; \
  }
#define K_GATHER(E, n_, S, ...) \
  static void gather_##E(int64_t n, char *o_, int64_t so, const char *x_, int64_t sx, const char *i_, int64_t si, \
                         int64_t ast, int64_t len, int mode, const char *fill_) { \
    S *o = PTR(S, o_); const S *x = CPTR(S, x_); const int64_t *ix = CPTR(int64_t, i_); \
    S fill; \
    if (fill_) fill = *CPTR(S, fill_); else memset(&fill, 0, sizeof fill); \
    switch (mode) { \
    case TC_IM_WRAP: GATHER_LOOP(S, TC_IM_WRAP) break; \
    case TC_IM_FILL: GATHER_LOOP(S, TC_IM_FILL) break; \
    default: GATHER_LOOP(S, TC_IM_CLIP) break; \
    } \
  }
TC_FOR_ALL(K_GATHER, _)
typedef void (*gather_fn)(int64_t, char *, int64_t, const char *, int64_t, const char *, int64_t, int64_t, int64_t,
                          int, const char *);
#define GATHER_ENTRY(E, ...) [TC_DT_##E] = gather_##E,
static const gather_fn gather_table[TC_DT_COUNT] = {TC_FOR_ALL(GATHER_ENTRY, _)};

typedef struct { gather_fn fn; int64_t ast, len; int mode; const char *fill; } gather_ctx;

static int gather_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const gather_ctx *g = ctx_;
  (void)pos;
  g->fn(n, p[0], s[0], p[1], s[1], p[2], s[2], g->ast, g->len, g->mode, g->fill);
  return 0;
}

static int run_gather(tc_call *c, tc_err *err) {
  gather_ctx g = {gather_table[c->dtype], c->axis_stride, c->axis_len, (int)c->mode,
                  c->mode == TC_MODE_FILL && c->in[2] ? tc_tensor_data(c->in[2]) : NULL};
  return run_rows_par(c->out, 2, c->in, gather_row, &g, false, err);
}

/* ---- scatter, in row-major order of the updates ---- */
/* A call updates only the positions k in [klo, khi) along the axis: the
 * threads each own such a range, read all the updates in order and apply
 * theirs, so every element sees its updates in the same order whatever the
 * thread count. */
#define SCATTER_LOOP(MODE, BODY) \
  for (int64_t i = 0; i < n; i++) { \
    int64_t k = ix[i * si]; \
    if (!tc_index_norm(&k, len, MODE) || k < klo || k >= khi) continue; \
    elem_t *d = o + i * so + k * ast; \
    BODY; \
  }
#define SCATTER_MODES(BODY) \
  if (mode == TC_IM_DROP) { SCATTER_LOOP(TC_IM_DROP, BODY) } \
  else { SCATTER_LOOP(TC_IM_CLIP, BODY) }
#define SCATTER_SIG(NAME) \
  static void NAME(int64_t n, char *o_, int64_t so, const char *i_, int64_t si, const char *u_, int64_t su, \
                   int64_t ast, int64_t len, int mode, int64_t klo, int64_t khi)
#define K_SCATTER_SET(E, n_, S, ...) \
  SCATTER_SIG(scatter_SET_##E) { \
    typedef S elem_t; \
    S *o = PTR(S, o_); const int64_t *ix = CPTR(int64_t, i_); const S *u = CPTR(S, u_); \
    SCATTER_MODES(*d = u[i * su]) \
  }
#define K_SCATTER_RED(E, n_, S, C, CLS, B, LD, ST, RED, EXPR) \
  SCATTER_SIG(scatter_##RED##_##E) { \
    typedef C T; typedef tc_u_##E U; typedef S elem_t; (void)sizeof(U); \
    S *o = PTR(S, o_); const int64_t *ix = CPTR(int64_t, i_); const S *u = CPTR(S, u_); \
    SCATTER_MODES(T a = LD(*d); T b = LD(u[i * su]); *d = ST(EXPR)) \
  }
TC_FOR_ALL(K_SCATTER_SET, _)
#define SC_STAMP(RED, CLS, EXPR, _) TC_FOR_##CLS(K_SCATTER_RED, RED, EXPR)
TC_SCATTER_COMBINES(SC_STAMP, _)

typedef void (*scatter_fn)(int64_t, char *, int64_t, const char *, int64_t, const char *, int64_t, int64_t, int64_t,
                           int, int64_t, int64_t);
#define SC_SET_ENTRY(E, ...) [TC_SCATTER_SET][TC_DT_##E] = scatter_SET_##E,
#define SC_RED_ENTRY(E, n_, S, C, CLS, B, LD, ST, RED) [TC_SCATTER_##RED][TC_DT_##E] = scatter_##RED##_##E,
#define SC_ENTRIES(RED, CLS, EXPR, _) TC_FOR_##CLS(SC_RED_ENTRY, RED)
static const scatter_fn scatter_table[TC_SCATTER_MIN + 1][TC_DT_COUNT] = {
  TC_FOR_ALL(SC_SET_ENTRY, _)
  TC_SCATTER_COMBINES(SC_ENTRIES, _)
};

typedef struct { scatter_fn fn; int64_t ast, len; int mode; int64_t klo, khi; } scatter_ctx;

static int scatter_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const scatter_ctx *g = ctx_;
  (void)pos;
  g->fn(n, p[0], s[0], p[1], s[1], p[2], s[2], g->ast, g->len, g->mode, g->klo, g->khi);
  return 0;
}

typedef struct { tc_call *c; scatter_ctx g; int tasks; } scatter_job;

/* Task t owns the t-th of `tasks` near-equal ranges of the axis. */
static int scatter_task(void *ctx_, int task, int worker) {
  const scatter_job *j = ctx_;
  (void)worker;
  scatter_ctx g = j->g;
  int64_t q = g.len / j->tasks, r = g.len % j->tasks;
  g.klo = q * task + (task < r ? task : r);
  g.khi = g.klo + q + (task < r);
  cpu_plan plan;
  cpu_plan_init(&plan, j->c->out, 2, j->c->in);
  return cpu_plan_run(&plan, 0, tc_numel(j->c->out), scatter_row, &g);
}

/* Integer scatter-add of many updates into one short axis (bincount, a
 * histogram): wrapping addition is associative and commutative, so each
 * thread adds its share of the updates into its own zeroed copy of the
 * axis, and the copies are then added into the axis: the bits of the
 * one-thread order. (Float sums and the other combines keep the order of
 * the updates: scatter_task.) The add keeps its own loop: through the
 * scatter kernel (its range check and stride products per update) the
 * scatter-add of 10^5 into 1000 bins took 70 us against 56-58, in two
 * runs of 8 and 12 interleaved rounds. */
#define PRIV_MAX_BYTES ((int64_t)256 << 10)   /* an axis copied per thread, at most */
#define SCADD_LOOP(MODE) \
  for (int64_t i = 0; i < n; i++) { \
    int64_t k = ix[i * si]; \
    if (tc_index_norm(&k, len, MODE)) p[k] = (elem_t)((U)p[k] + (U)u[i * su]); \
  }
#define K_SCADD(E, n_, S, ...) \
  static void scadd_##E(int64_t n, char *p_, const char *i_, int64_t si, const char *u_, int64_t su, int64_t len, \
                        int mode) { \
    typedef tc_u_##E U; \
    typedef S elem_t; \
    S *p = PTR(S, p_); \
    const int64_t *ix = CPTR(int64_t, i_); \
    const S *u = CPTR(S, u_); \
    if (mode == TC_IM_DROP) { SCADD_LOOP(TC_IM_DROP) } \
    else { SCADD_LOOP(TC_IM_CLIP) } \
  } \
  static void scsum_##E(int64_t len, char *o_, int64_t so, const char *p_) { \
    typedef tc_u_##E U; \
    S *o = PTR(S, o_); \
    const S *p = CPTR(S, p_); \
    for (int64_t k = 0; k < len; k++) o[k * so] = (S)((U)o[k * so] + (U)p[k]); \
  }
TC_FOR_INT(K_SCADD, _)
typedef struct {
  void (*add)(int64_t, char *, const char *, int64_t, const char *, int64_t, int64_t, int);
  void (*sum)(int64_t, char *, int64_t, const char *);
} scadd_fns;
#define SCADD_ENTRY(E, ...) [TC_DT_##E] = {scadd_##E, scsum_##E},
static const scadd_fns scadd_table[TC_DT_COUNT] = {TC_FOR_INT(SCADD_ENTRY, _)};

typedef struct { const tc_call *c; const scadd_fns *f; int64_t n, per; size_t es; char *priv; } scadd_job;

static int scadd_task(void *ctx, int t, int w) {
  const scadd_job *j = ctx;
  (void)w;
  const tc_call *c = j->c;
  char *p = j->priv + (size_t)t * (size_t)c->axis_len * j->es;
  memset(p, 0, (size_t)c->axis_len * j->es);
  int64_t si = c->in[0]->strides[0], su = c->in[1]->strides[0];
  for (int64_t lo = t * j->per, hi = lo + j->per < j->n ? lo + j->per : j->n; lo < hi; lo += CPU_CHUNK) {
    if (tc_interrupt_flag) return -1;
    int64_t m = hi - lo < CPU_CHUNK ? hi - lo : CPU_CHUNK;
    j->f->add(m, p, tc_tensor_data(c->in[0]) + (size_t)(lo * si) * sizeof(int64_t), si, tc_tensor_data(c->in[1]) + (size_t)(lo * su) * j->es, su,
              c->axis_len, (int)c->mode);
  }
  return 0;
}

/* 1 when done, 0 when the call is not such a scatter-add. */
static int scatter_add_private(tc_call *c, int t, tc_err *err) {
  const tc_tensor *o = c->out;
  size_t es = tc_dtype_size(c->dtype);
  int64_t n = tc_numel(o);
  if (c->red != TC_SCATTER_ADD || !scadd_table[c->dtype].add || o->ndim != 1 || o->strides[0] != 0 ||
      n < CPU_PAR_MIN || c->axis_len * (int64_t)es > PRIV_MAX_BYTES)
    return 0;
  int64_t tasks = cpu_split(n, CPU_PAR_MIN / 2);
  tasks = tasks > t ? t : tasks;
  scadd_job j = {c, &scadd_table[c->dtype], n, (n + tasks - 1) / tasks, es, malloc((size_t)tasks * (size_t)c->axis_len * es)};
  if (!j.priv) return 0;
  int rc = cpu_parallel((int)tasks, scadd_task, &j);
  for (int64_t k = 0; k < tasks && rc >= 0; k++)
    j.f->sum(c->axis_len, tc_tensor_data(c->out), c->axis_stride, j.priv + (size_t)k * (size_t)c->axis_len * es);
  free(j.priv);
  return rc < 0 ? cpu_interrupted(err) : 1;
}

static int run_scatter(tc_call *c, tc_err *err) {
  scatter_fn fn = scatter_table[c->red][c->dtype];
  if (!fn) return unsupported(c, err);
  scatter_ctx g = {fn, c->axis_stride, c->axis_len, (int)c->mode, 0, c->axis_len};
  int t = cpu_threads();
  int rc = t > 1 ? scatter_add_private(c, t, err) : 0;
  if (rc != 0) return rc < 0 ? -1 : 0;
  if (t <= 1 || tc_numel(c->out) < CPU_PAR_MIN || c->axis_len < t) return run_rows(c->out, 2, c->in, scatter_row, &g, err);
  scatter_job j = {c, g, t};
  return cpu_parallel(t, scatter_task, &j) < 0 ? cpu_interrupted(err) : 0;
}

/* ---- nonzero: positions of the true elements, in row-major order ---- */
typedef struct { int64_t *out, cap, count; } nz_ctx;

/* A block's positions are written to buf one after another, the count
 * moving on only past the true ones (no branch to mispredict), then
 * copied out. */
#define NZ_BLOCK 256
static int nonzero_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  nz_ctx *z = ctx_;
  const uint8_t *m = CPTR(uint8_t, p[0]);
  int64_t buf[NZ_BLOCK];
  for (int64_t i0 = 0; i0 < n; i0 += NZ_BLOCK) {
    int64_t b = n - i0 < NZ_BLOCK ? n - i0 : NZ_BLOCK, c = 0;
    for (int64_t i = 0; i < b; i++) {
      buf[c] = pos + i0 + i;
      c += m[(i0 + i) * s[0]] != 0;
    }
    if (c > z->cap - z->count) return 1;
    memcpy(z->out + z->count, buf, sizeof *buf * (size_t)c);
    z->count += c;
  }
  return 0;
}

static int run_nonzero(tc_call *c, tc_err *err) {
  tc_tensor *m = c->in[0];
  nz_ctx z = {PTR(int64_t, tc_tensor_data(c->out)), tc_numel(c->out), 0};
  if (tc_numel(m) == 0) return 0;
  cpu_plan plan;
  cpu_plan_init(&plan, m, 0, NULL);
  int rc = cpu_plan_run(&plan, 0, tc_numel(m), nonzero_row, &z);
  if (rc < 0) return cpu_interrupted(err);
  if (rc > 0 || z.count != z.cap)
    return tc_err_set(err, TC_E_BAD_ARG, (int)c->op, TC_DT_BOOL, "the mask changed while it was read");
  return 0;
}

/* ---- tril / triu ---- */
#define K_TRI(E, n_, S, ...) \
  static void tri_##E(int64_t n, char *o_, int64_t so, const char *a_, int64_t sa, int64_t r, int64_t col, \
                      int64_t rows, int64_t cols, int64_t k, bool lower) { \
    S *o = PTR(S, o_); const S *a = CPTR(S, a_); \
    S zero; memset(&zero, 0, sizeof zero); \
    for (int64_t i = 0; i < n; i++) { \
      bool keep = lower ? col - r <= k : col - r >= k; \
      o[i * so] = keep ? a[i * sa] : zero; \
      if (++col == cols) { col = 0; if (++r == rows) r = 0; } \
    } \
  }
TC_FOR_ALL(K_TRI, _)
typedef void (*tri_fn)(int64_t, char *, int64_t, const char *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       bool);
#define TRI_ENTRY(E, ...) [TC_DT_##E] = tri_##E,
static const tri_fn tri_table[TC_DT_COUNT] = {TC_FOR_ALL(TRI_ENTRY, _)};

typedef struct { tri_fn fn; int64_t rows, cols, k; bool lower; } tri_ctx;

static int tri_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const tri_ctx *t = ctx_;
  t->fn(n, p[0], s[0], p[1], s[1], (pos / t->cols) % t->rows, pos % t->cols, t->rows, t->cols, t->k, t->lower);
  return 0;
}

static int run_tri(tc_call *c, tc_err *err) {
  tc_tensor *o = c->out;
  tri_ctx t = {tri_table[c->dtype], o->shape[o->ndim - 2], o->shape[o->ndim - 1], c->k, c->op == TC_OP_TRIL};
  return run_rows(o, 1, c->in, tri_row, &t, err);
}

/* ---- ranges (arange, linspace) into a contiguous out ---- */
#define K_RANGE_INT(E, n_, S, ...) \
  static void range_##E(char *o_, int64_t lo, int64_t hi, const tc_call *c) { \
    S *o = PTR(S, o_); \
    const uint64_t start = (uint64_t)c->istart, step = (uint64_t)c->istep;   /* not reloaded past stores to o */ \
    for (int64_t i = lo; i < hi; i++) o[i] = (S)(int64_t)(start + (uint64_t)i * step); \
  }
#define K_RANGE_FLT(E, n_, S, ...) \
  static void range_##E(char *o_, int64_t lo, int64_t hi, const tc_call *c) { \
    S *o = PTR(S, o_); \
    const double start = c->fstart, step = c->fstep; \
    for (int64_t i = lo; i < hi; i++) o[i] = tc_fromd_##E(start + (double)i * step); \
  }
TC_FOR_INT(K_RANGE_INT, _)
TC_FOR_FLT(K_RANGE_FLT, _)
typedef void (*range_fn)(char *, int64_t, int64_t, const tc_call *);
#define RANGE_ENTRY(E, ...) [TC_DT_##E] = range_##E,
static const range_fn range_table[TC_DT_COUNT] = {TC_FOR_NUM(RANGE_ENTRY, _)};

/* The last element of a linspace is stop itself. */
#define K_RANGE_LAST(E, n_, S, ...) \
  static void range_last_##E(char *o_, int64_t i, double v) { PTR(S, o_)[i] = tc_fromd_##E(v); }
TC_FOR_FLT(K_RANGE_LAST, _)
typedef void (*last_fn)(char *, int64_t, double);
#define LAST_ENTRY(E, ...) [TC_DT_##E] = range_last_##E,
static const last_fn last_table[TC_DT_COUNT] = {TC_FOR_FLT(LAST_ENTRY, _)};

/* Element i depends on i alone: the row plan of the (contiguous) result
 * splits it across threads, a chunk at a time. */
typedef struct { range_fn fn; char *o; const tc_call *c; } range_ctx;

static int range_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const range_ctx *r = ctx_;
  (void)p, (void)s;
  r->fn(r->o, pos, pos + n, r->c);
  return 0;
}

static int run_range(tc_call *c, tc_err *err) {
  range_fn fn = range_table[c->dtype];
  if (!fn || (c->endpoint && !last_table[c->dtype])) return unsupported(c, err);
  range_ctx r = {fn, tc_tensor_data(c->out), c};
  int64_t n = tc_numel(c->out);
  if (n == 0) return 0;
  cpu_plan plan;
  cpu_plan_init(&plan, c->out, 0, NULL);
  if (cpu_plan_run_par(&plan, n, CPU_PAR_MIN / 2, range_row, &r) < 0) return cpu_interrupted(err);
  if (c->endpoint) last_table[c->dtype](r.o, n - 1, c->fstop);
  return 0;
}

/* ---- random numbers into a contiguous out ---- */
/* Element i depends on the seed and i alone (src/philox.h), so blocks of
 * RAND_TASK (some 25 us of work each) run on any thread, and each block's loop is vectorised for
 * the CPU's level (cpu_matmul_isa): Philox is integer arithmetic and the
 * values are +, -, *, / and sqrt in a fixed order, never contracted into
 * FMAs (ISO C), so every width gives the scalar loop's bits, and the
 * CUDA engine's (tests/unit/test_ctor.c checks each level and thread count). */
#define RAND_LOOPS(SFX, TGT)                                                                                  \
  TGT static void rand_block_##SFX(const tc_call *c, char *o, int64_t lo, int64_t hi) {                       \
    uint64_t seed = c->seed;                                                                                  \
    switch (c->dist) {                                                                                        \
    case TC_DIST_UNIFORM:                                                                                     \
      for (int64_t i = lo; i < hi; i++) PTR(double, o)[i] = tc_rand_uniform(seed, (uint64_t)i);               \
      break;                                                                                                  \
    case TC_DIST_NORMAL:                                                                                      \
      for (int64_t i = lo; i < hi; i++) PTR(double, o)[i] = tc_rand_normal(seed, (uint64_t)i);                \
      break;                                                                                                  \
    case TC_DIST_INT: {                                                                                       \
      int64_t rlo = c->rlo;                                                                                   \
      uint64_t range = c->rrange;                                                                             \
      for (int64_t i = lo; i < hi; i++) PTR(int64_t, o)[i] = tc_rand_int(seed, (uint64_t)i, rlo, range);      \
      break;                                                                                                  \
    }                                                                                                         \
    }                                                                                                         \
  }
RAND_LOOPS(base, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
RAND_LOOPS(avx2, __attribute__((target("avx2"))))
RAND_LOOPS(avx512, __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl"))))
static void (*const rand_blocks[CPU_ISA_COUNT])(const tc_call *, char *, int64_t, int64_t) = {
    rand_block_base, rand_block_avx2, rand_block_avx512};
#else
static void (*const rand_blocks[CPU_ISA_COUNT])(const tc_call *, char *, int64_t, int64_t) = {
    rand_block_base, rand_block_base, rand_block_base};
#endif

#define RAND_TASK ((int64_t)1 << 14)
typedef struct {
  const tc_call *c;
  char *o;
  int64_t n, per;
  int isa;
} rand_job;

static int rand_task(void *ctx, int task, int worker) {
  (void)worker;
  const rand_job *j = ctx;
  int64_t lo = (int64_t)task * j->per, hi = j->n - lo < j->per ? j->n : lo + j->per;
  rand_blocks[j->isa](j->c, j->o, lo, hi);
  return tc_interrupt_flag ? -1 : 0;
}

static int run_random(tc_call *c, tc_err *err) {
  rand_job j = {c, tc_tensor_data(c->out), tc_numel(c->out), RAND_TASK, cpu_matmul_isa(-1)};
  if (j.n / j.per >= INT32_MAX) j.per = j.n / (INT32_MAX / 2);
  int64_t ntasks = (j.n + j.per - 1) / j.per;
  if (ntasks && cpu_parallel((int)ntasks, rand_task, &j) < 0) return cpu_interrupted(err);
  return 0;
}

/* ---- the family's entry points ---- */
bool cpu_supports_index(const tc_call *c) {
  switch (c->kind) {
  case TC_CALL_COPY: case TC_CALL_GATHER: case TC_CALL_TRI: return true;
  case TC_CALL_SCATTER: return (unsigned)c->red <= TC_SCATTER_MIN && scatter_table[c->red][c->dtype] != NULL;
  case TC_CALL_NONZERO: return c->dtype == TC_DT_BOOL;
  case TC_CALL_RANGE: return range_table[c->dtype] != NULL && (!c->endpoint || last_table[c->dtype] != NULL);
  case TC_CALL_RANDOM: return c->dtype == (c->dist == TC_DIST_INT ? TC_DT_I64 : TC_DT_F64);
  default: return false;
  }
}

int cpu_run_index(tc_call *c, tc_err *err) {
  if (!cpu_supports_index(c)) return unsupported(c, err);
  switch (c->kind) {
  case TC_CALL_COPY: return run_copy(c, err);
  case TC_CALL_GATHER: return run_gather(c, err);
  case TC_CALL_SCATTER: return run_scatter(c, err);
  case TC_CALL_NONZERO: return run_nonzero(c, err);
  case TC_CALL_TRI: return run_tri(c, err);
  case TC_CALL_RANGE: return run_range(c, err);
  case TC_CALL_RANDOM: return run_random(c, err);
  default: return unsupported(c, err);
  }
}
