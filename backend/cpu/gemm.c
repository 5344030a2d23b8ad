/* The CPU engine's float matrix products (f32 and f64; bf16 and f16 arrive
 * as f32): a blocked, packed GEMM with a micro-kernel chosen at run time,
 * AVX-512, AVX2 with FMA, or portable vector code.
 *
 * Every element of C is its k products summed in k order, starting from 0,
 * one fused multiply-add per step (a multiply and then an add on the
 * portable path). Blocking, tiling and threads only decide which core
 * computes an element and when, never the operations or their order, so
 * the bits of a result do not depend on the thread count, the block sizes,
 * or which of the two FMA kernels ran; the plain kernel small products use
 * (matmul.c) does the same operations in the same order. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

#define CPTR(S, p) ((const S *)(const void *)(p))
#define PTR(S, p) ((S *)(void *)(p))

/* c[i*ldc + j] = (load ? c[i*ldc + j] : 0) + the sum over k ascending of
 * A[i][k] * b[k*NR + j], for an MR x NR tile, with A packed one of two
 * ways (below). */
typedef void (*fkr_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int load);

/* One micro-kernel: V is a vector of L elements of T, NV of them across a
 * row of the tile; A[i][k] is a[i*AI + k*AK]; LD/ST load and store
 * unaligned, SET1 broadcasts a scalar, MADD(s, b, acc) is acc + s * b. */
#define FKR_DEF(NAME, T, V, L, MR, NV, AI, AK, TGT, LD, ST, SET1, ZERO, MADD) \
  TGT static void NAME(int64_t kc, const void *a_, const void *b_, void *c_, int64_t ldc, int load) { \
    const T *a = a_, *b = b_; \
    T *c = c_; \
    V acc[MR][NV]; \
    if (load) { \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = LD(c + i * ldc + v * L); \
    } else { \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = ZERO(); \
    } \
    for (int64_t k = 0; k < kc; k++) { \
      V bv[NV]; \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = LD(b + v * L); \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) { \
        const V s = SET1(a[i * AI]); \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = MADD(s, bv[v], acc[i][v]); \
      } \
      a += AK; \
      b += NV * L; \
    } \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) ST(c + i * ldc + v * L, acc[i][v]); \
  }
/* Both layouts of A from one definition: rows at a fixed pitch (AP
 * elements: KC and a cache line, so the rows fall in different L1 sets), a
 * plain copy of A when its rows are contiguous; or k-major (MR elements
 * per k), a plain copy of a column-major A. */
#define FKR_PAIR(NAME, T, V, L, MR, NV, AP, ...) \
  FKR_DEF(NAME##_rows, T, V, L, MR, NV, AP, 1, __VA_ARGS__) \
  FKR_DEF(NAME##_kmaj, T, V, L, MR, NV, 1, MR, __VA_ARGS__)

#define FKR_KC 512
#define AP_F32 (FKR_KC + 16)
#define AP_F64 (FKR_KC + 8)

/* portable: 16-byte vectors in GCC's vector extension, multiply then add
 * (ISO C mode keeps the compiler from fusing them) */
typedef float gv_f32 __attribute__((vector_size(16)));
typedef double gv_f64 __attribute__((vector_size(16)));
static inline gv_f32 ld_f32(const float *p) { gv_f32 v; memcpy(&v, p, sizeof v); return v; }
static inline gv_f64 ld_f64(const double *p) { gv_f64 v; memcpy(&v, p, sizeof v); return v; }
static inline void st_f32(float *p, gv_f32 v) { memcpy(p, &v, sizeof v); }
static inline void st_f64(double *p, gv_f64 v) { memcpy(p, &v, sizeof v); }
#define GV_SET1_F32(x) ((gv_f32){x, x, x, x})
#define GV_SET1_F64(x) ((gv_f64){x, x})
#define GV_ZERO_F32() ((gv_f32){0})
#define GV_ZERO_F64() ((gv_f64){0})
#define GV_MADD(s, b, acc) ((acc) + (b) * (s))
FKR_PAIR(fkr_f32_base, float, gv_f32, 4, 4, 2, AP_F32, , ld_f32, st_f32, GV_SET1_F32, GV_ZERO_F32, GV_MADD)
FKR_PAIR(fkr_f64_base, double, gv_f64, 2, 4, 2, AP_F64, , ld_f64, st_f64, GV_SET1_F64, GV_ZERO_F64, GV_MADD)

#if defined(__x86_64__) && defined(__GNUC__)
#define GM_X86 1
#include <immintrin.h>
#define TGT_512 __attribute__((target("avx512f")))
#define TGT_256 __attribute__((target("avx2,fma")))
#define FMA512_PS(s, b, acc) _mm512_fmadd_ps(s, b, acc)
#define FMA512_PD(s, b, acc) _mm512_fmadd_pd(s, b, acc)
#define FMA256_PS(s, b, acc) _mm256_fmadd_ps(s, b, acc)
#define FMA256_PD(s, b, acc) _mm256_fmadd_pd(s, b, acc)
FKR_PAIR(fkr_f32_avx512, float, __m512, 16, 14, 2, AP_F32, TGT_512, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps,
         _mm512_setzero_ps, FMA512_PS)
FKR_PAIR(fkr_f64_avx512, double, __m512d, 8, 14, 2, AP_F64, TGT_512, _mm512_loadu_pd, _mm512_storeu_pd,
         _mm512_set1_pd, _mm512_setzero_pd, FMA512_PD)
FKR_PAIR(fkr_f32_avx2, float, __m256, 8, 6, 2, AP_F32, TGT_256, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps,
         _mm256_setzero_ps, FMA256_PS)
FKR_PAIR(fkr_f64_avx2, double, __m256d, 4, 6, 2, AP_F64, TGT_256, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd,
         _mm256_setzero_pd, FMA256_PD)
#else
#define GM_X86 0
#endif

/* A kernel and its blocking. One call of the micro-kernel reads an MR x KC
 * sliver of A (28 KB for AVX-512 f32) and a KC x NR sliver of B (64 KB);
 * a task runs the kernel down its block of at most MC rows of A (in L2, up
 * to 512 KB) for each sliver of B in turn, so the B sliver is reused from
 * L1/L2 by MC / MR calls. KC = 512 for all: C is loaded and stored once
 * per 512 steps of k. These sizes were measured on the AMD EPYC (Zen 5,
 * 48 KB L1d, 1 MB L2) build machines, where a shorter KC that keeps the
 * B sliver in L1 was slower: L2 feeds the kernel fast enough, and C's
 * traffic doubles. */
typedef struct {
  const char *isa;
  int mr, nr;
  int64_t mc, nc;
  fkr_fn rows, kmaj;
} fkr_desc;

/* [isa][0 f32, 1 f64] */
#define FKR_ENTRY(ISA, NAME, MR, NR, MC, NC) {ISA, MR, NR, MC, NC, NAME##_rows, NAME##_kmaj}
static const fkr_desc fkr_table[CPU_ISA_COUNT][2] = {
  [CPU_ISA_BASE] = {FKR_ENTRY("portable", fkr_f32_base, 4, 8, 256, 4096),
                    FKR_ENTRY("portable", fkr_f64_base, 4, 4, 128, 2048)},
#if GM_X86
  [CPU_ISA_AVX2] = {FKR_ENTRY("avx2", fkr_f32_avx2, 6, 16, 252, 4096), FKR_ENTRY("avx2", fkr_f64_avx2, 6, 8, 126, 2048)},
  [CPU_ISA_AVX512] = {FKR_ENTRY("avx512", fkr_f32_avx512, 14, 32, 252, 4096),
                      FKR_ENTRY("avx512", fkr_f64_avx512, 14, 16, 126, 2048)},
#endif
};
enum { FKR_MAX_TILE = 14 * 32 };   /* the largest MR x NR */

/* ---- packing ----
 * A, in slivers of MR rows: each row of a sliver at a pitch of AP (rows
 * layout), or k-major, MR elements per k (kmaj layout). B, in slivers of
 * NR columns, k-major. Rows and columns past the edge are zeros (their
 * results are never stored). */
#define KMAJ_COPY(MR) \
  case MR: \
    for (int64_t k = 0; k < kc; k++) \
      for (int r = 0; r < MR; r++) dst[k * MR + r] = src[k * acs + r]; \
    break;
#define K_FPACK(T, SUF, AP) \
  static void pack_a_rows_##SUF(const mm_prob *p, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int mr, \
                                void *dst_) { \
    T *dst = dst_; \
    const T *a = CPTR(T, p->a); \
    const int64_t ars = p->ars, acs = p->acs; \
    for (int64_t s = 0; s < mc; s += mr, dst += (int64_t)mr * AP) \
      for (int64_t r = 0; r < mr; r++) { \
        T *d = dst + r * AP; \
        const T *src = a + (i0 + s + r) * ars + k0 * acs; \
        if (s + r >= mc) memset(d, 0, sizeof(T) * (size_t)kc); \
        else if (acs == 1) memcpy(d, src, sizeof(T) * (size_t)kc); \
        else for (int64_t k = 0; k < kc; k++) d[k] = src[k * acs]; \
      } \
  } \
  static void pack_a_kmaj_##SUF(const mm_prob *p, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int mr, \
                                void *dst_) { \
    T *dst = dst_; \
    const T *a = CPTR(T, p->a); \
    const int64_t ars = p->ars, acs = p->acs; \
    for (int64_t s = 0; s < mc; s += mr, dst += (int64_t)mr * kc) { \
      int64_t rows = mc - s < mr ? mc - s : mr; \
      const T *src = a + (i0 + s) * ars + k0 * acs; \
      if (ars == 1 && rows == mr) { \
        /* a whole sliver of a column-major A: MR contiguous elements per k */ \
        switch (mr) { \
        KMAJ_COPY(14) KMAJ_COPY(6) KMAJ_COPY(4) \
        default: \
          for (int64_t k = 0; k < kc; k++) \
            for (int64_t r = 0; r < mr; r++) dst[k * mr + r] = src[k * acs + r]; \
        } \
        continue; \
      } \
      for (int64_t k = 0; k < kc; k++) { \
        int64_t r = 0; \
        for (; r < rows; r++) dst[k * mr + r] = src[r * ars + k * acs]; \
        for (; r < mr; r++) dst[k * mr + r] = 0; \
      } \
    } \
  } \
  static void pack_b_##SUF(const mm_prob *p, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int nr, void *dst_) { \
    T *dst = dst_; \
    const T *src = CPTR(T, p->b) + k0 * p->brs + j0 * p->bcs; \
    const int64_t brs = p->brs, bcs = p->bcs; \
    if (bcs == 1) { \
      for (int64_t k = 0; k < kc; k++) { \
        memcpy(dst + k * nr, src + k * brs, sizeof(T) * (size_t)cols); \
        for (int64_t j = cols; j < nr; j++) dst[k * nr + j] = 0; \
      } \
    } else { \
      for (int64_t j = 0; j < cols; j++) \
        for (int64_t k = 0; k < kc; k++) dst[k * nr + j] = src[k * brs + j * bcs]; \
      if (cols < nr) \
        for (int64_t k = 0; k < kc; k++) \
          for (int64_t j = cols; j < nr; j++) dst[k * nr + j] = 0; \
    } \
  }
K_FPACK(float, f32, AP_F32)
K_FPACK(double, f64, AP_F64)

typedef void (*pack_a_fn)(const mm_prob *, int64_t, int64_t, int64_t, int64_t, int, void *);
typedef void (*pack_b_fn)(const mm_prob *, int64_t, int64_t, int64_t, int64_t, int, void *);
/* [0 f32, 1 f64] */
static const struct { pack_a_fn rows, kmaj; pack_b_fn pb; int64_t ap; } fpack[2] = {
  {pack_a_rows_f32, pack_a_kmaj_f32, pack_b_f32, AP_F32}, {pack_a_rows_f64, pack_a_kmaj_f64, pack_b_f64, AP_F64}};

/* ---- the plan for a batch of same-shaped products ---- */
/* Most bytes of packed B held at once: a chunk of KS x NS of B is packed,
 * then all of C's rows are computed against it. */
#define B_CHUNK_BYTES ((int64_t)16 << 20)
static int64_t chunk_bytes = B_CHUNK_BYTES;

int64_t cpu_gemm_chunk_bytes(int64_t n) {
  int64_t old = chunk_bytes;
  chunk_bytes = n > 0 ? n : B_CHUNK_BYTES;
  return old;
}
/* Products up to this many multiply-adds run whole on one thread, several
 * products at a time, when the batch has enough of them. */
#define BATCH_PAR_MACS ((int64_t)1 << 24)
/* Tasks per thread for one chunk: more than one, so that a thread slowed
 * by another process on its core leaves its share to the others. */
#define TASKS_PER_THREAD 4

typedef struct {
  const fkr_desc *u;
  fkr_fn kr;
  pack_a_fn pa;
  pack_b_fn pb;
  size_t es;
  int64_t ap;              /* A's row pitch in the rows layout, 0 for k-major */
  int64_t kc;              /* k block */
  int64_t ks, ns;          /* the B chunk: k rows (a multiple of kc), columns (of nr) */
  int64_t msl, nib;        /* slivers of C's rows; row ranges of tasks */
  int64_t ncsl;            /* most slivers of columns in a task */
  int64_t want;            /* tasks wanted per chunk */
  size_t bbytes, abytes;   /* one packed B chunk; one packed A block */
} gemm_plan;

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static int64_t cdiv(int64_t x, int64_t m) { return (x + m - 1) / m; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static void plan_init(gemm_plan *g, tc_dtype dt, const mm_prob *p, int threads) {
  int64_t M = p->M, N = p->N, K = p->K;
  int w = dt == TC_DT_F64;
  g->u = &fkr_table[cpu_float_isa()][w];
  /* A as it lies: k-major when it is column-major, else by rows */
  bool kmaj = p->ars == 1 && p->acs != 1;
  g->kr = kmaj ? g->u->kmaj : g->u->rows;
  g->pa = kmaj ? fpack[w].kmaj : fpack[w].rows;
  g->ap = kmaj ? 0 : fpack[w].ap;
  g->pb = fpack[w].pb;
  g->es = w ? 8 : 4;
  const fkr_desc *u = g->u;
  /* k blocks of equal length, none much shorter than the others */
  int64_t nkb = cdiv(K, FKR_KC);
  g->kc = min64(round_up(cdiv(K, nkb), 8), K);
  /* rows: blocks of at most MC rows, and at least `want` of them */
  g->want = threads > 1 ? TASKS_PER_THREAD * threads : 1;
  g->msl = cdiv(M, u->mr);
  g->nib = max64(cdiv(g->msl, max64(u->mc / u->mr, 1)), min64(g->want, g->msl));
  g->ncsl = max64(u->nc / u->nr, 1);
  /* the B chunk: all of B when it fits, else fewer columns, then fewer k */
  int64_t cap = chunk_bytes / (int64_t)g->es;
  g->ks = K;
  g->ns = round_up(N, u->nr);
  if (g->ks * g->ns > cap) {
    g->ns = max64(u->nr, cap / g->ks / u->nr * u->nr);
    if (g->ks * g->ns > cap) g->ks = max64(g->kc, cap / g->ns / g->kc * g->kc);
  }
  /* the task count must fit an int */
  int64_t njb_max = max64(cdiv(g->ns / u->nr, g->ncsl), g->want);
  if (g->nib > INT_MAX / 2 / njb_max) g->nib = INT_MAX / 2 / njb_max;
  g->bbytes = align64((size_t)(g->ks * g->ns) * g->es);
  g->abytes = align64((size_t)(cdiv(g->msl, g->nib) * u->mr * (kmaj ? g->kc : g->ap)) * g->es);
}

/* One chunk of one product: columns [j0, j0 + ncols), k in [k0, k0 + klen). */
typedef struct {
  const gemm_plan *g;
  const mm_prob *p;
  int64_t j0, ncols, ncols_pad, k0, klen;
  int64_t nsl, njb;        /* slivers of B per k block; column ranges of tasks */
  char *bpack, *apack;     /* apack: one A block per worker */
} gemm_job;

static int packb_task(void *ctx, int task, int worker) {
  const gemm_job *j = ctx;
  const gemm_plan *g = j->g;
  (void)worker;
  int nr = g->u->nr;
  int64_t q = task / j->nsl, s = task % j->nsl;
  int64_t pc = j->k0 + q * g->kc, kb = min64(g->kc, j->k0 + j->klen - pc);
  int64_t js = s * nr, cols = min64(nr, j->ncols - js);
  g->pb(j->p, pc, kb, j->j0 + js, cols, nr, j->bpack + (size_t)((pc - j->k0) * j->ncols_pad + js * kb) * g->es);
  return tc_interrupt_flag ? -1 : 0;
}

static int compute_task(void *ctx, int task, int worker) {
  const gemm_job *j = ctx;
  const gemm_plan *g = j->g;
  const mm_prob *p = j->p;
  const fkr_desc *u = g->u;
  const size_t es = g->es;
  int64_t jb = task / g->nib, ib = task % g->nib;
  /* rows and columns: whole slivers, split evenly */
  int64_t ic = ib * g->msl / g->nib * u->mr, ie = min64((ib + 1) * g->msl / g->nib * u->mr, p->M);
  int64_t jn = jb * j->nsl / j->njb * u->nr, je = min64((jb + 1) * j->nsl / j->njb * u->nr, j->ncols);
  int64_t mrows = ie - ic, ncols = je - jn;
  char *ap = j->apack + g->abytes * (size_t)worker;
  _Alignas(64) unsigned char tile[FKR_MAX_TILE * 8];
  for (int64_t pc = j->k0; pc < j->k0 + j->klen; pc += g->kc) {
    if (tc_interrupt_flag) return -1;
    int64_t kb = min64(g->kc, j->k0 + j->klen - pc);
    int load = pc > 0;
    g->pa(p, ic, mrows, pc, kb, u->mr, ap);
    const char *bblock = j->bpack + (size_t)((pc - j->k0) * j->ncols_pad + jn * kb) * es;
    for (int64_t jr = 0; jr < ncols; jr += u->nr) {
      int64_t cols = min64(u->nr, ncols - jr);
      const char *bs = bblock + (size_t)(jr * kb) * es;
      char *cc = p->c + (size_t)(ic * p->N + j->j0 + jn + jr) * es;
      for (int64_t ir = 0; ir < mrows; ir += u->mr) {
        int64_t rows = min64(u->mr, mrows - ir);
        const char *as = ap + (size_t)(ir * (g->ap ? g->ap : kb)) * es;
        char *c = cc + (size_t)(ir * p->N) * es;
        if (rows == u->mr && cols == u->nr) {
          g->kr(kb, as, bs, c, p->N, load);
          continue;
        }
        /* an edge tile: through a full-size copy */
        size_t rowb = (size_t)cols * es, tileb = (size_t)u->nr * es;
        memset(tile, 0, tileb * (size_t)u->mr);
        if (load)
          for (int64_t r = 0; r < rows; r++) memcpy(tile + tileb * (size_t)r, c + (size_t)(r * p->N) * es, rowb);
        g->kr(kb, as, bs, tile, u->nr, load);
        for (int64_t r = 0; r < rows; r++) memcpy(c + (size_t)(r * p->N) * es, tile + tileb * (size_t)r, rowb);
      }
    }
  }
  return 0;
}

/* One product with the plan's buffers: B chunk by chunk, each packed and
 * then multiplied across the pool (inline when called inside a task). */
static int run_product(const gemm_plan *g, const mm_prob *p, char *bpack, char *apack) {
  int nr = g->u->nr;
  for (int64_t j0 = 0; j0 < p->N; j0 += g->ns) {
    for (int64_t k0 = 0; k0 < p->K; k0 += g->ks) {
      gemm_job j = {g, p, j0, min64(g->ns, p->N - j0), 0, k0, min64(g->ks, p->K - k0), 0, 0, bpack, apack};
      j.ncols_pad = round_up(j.ncols, nr);
      j.nsl = j.ncols_pad / nr;
      /* columns: blocks of at most NC, and enough of them for `want` tasks */
      j.njb = max64(cdiv(j.nsl, g->ncsl), min64(cdiv(g->want, g->nib), j.nsl));
      int64_t nkb = cdiv(j.klen, g->kc);
      if (cpu_parallel((int)(nkb * j.nsl), packb_task, &j) < 0) return -1;
      if (cpu_parallel((int)(g->nib * j.njb), compute_task, &j) < 0) return -1;
    }
  }
  return 0;
}

/* ---- matrix-vector products (M or N is 1) ----
 * Packing would cost more than the arithmetic here, so they stream the
 * matrix once, with the same chains: the "dot" form, y[i] = the sum of
 * A[i,k] x[k] over k with rows of A contiguous, interleaves 8 rows' chains;
 * the "axpy" form, y[j] = the sum of s[k] X[k,j], adds one row of X at a
 * time into y, vectorised along j. */
typedef struct {
  bool dot;
  const char *m, *v;   /* the matrix (A or X), the vector (x or s) */
  int64_t mrs, mcs;    /* dot: rows of A (k stride 1); axpy: rows k of X, along j */
  int64_t vs, len, K;  /* vector stride; outputs; terms */
  char *y;             /* the outputs, contiguous */
} mv_form;

/* The form of a product with M == 1 or N == 1 (C is then a contiguous
 * vector): the dot form where the matrix is contiguous along k. */
static void mv_of(const mm_prob *p, mv_form *f) {
  if (p->N == 1 && p->acs == 1) {          /* A @ x */
    *f = (mv_form){true, p->a, p->b, p->ars, 1, p->brs, p->M, p->K, p->c};
  } else if (p->M == 1 && p->brs == 1) {   /* x @ B with B's columns contiguous: B^T @ x */
    *f = (mv_form){true, p->b, p->a, p->bcs, 1, p->acs, p->N, p->K, p->c};
  } else if (p->M == 1) {                  /* row of A times the rows of B */
    *f = (mv_form){false, p->b, p->a, p->brs, p->bcs, p->acs, p->N, p->K, p->c};
  } else {                                 /* N == 1: columns of A times b */
    *f = (mv_form){false, p->a, p->b, p->acs, p->ars, p->brs, p->M, p->K, p->c};
  }
}

#define K_MV(T, SUF, TGT, MADD) \
  TGT static void dot_##SUF(const void *a_, int64_t ars, const void *x_, int64_t xs, int64_t K, void *y_, \
                            int64_t lo, int64_t hi) { \
    const T *a = a_, *x = x_; \
    T *y = y_; \
    int64_t i = lo, done = 0; \
    for (; i + 8 <= hi && !cpu_poll(&done, 8 * K); i += 8) { \
      const T *r = a + i * ars; \
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0; \
      CPU_POLLED_FOR(k, 0, K) { \
        const T xv = x[k * xs]; \
        s0 = MADD(s0, r[k], xv); \
        s1 = MADD(s1, r[ars + k], xv); \
        s2 = MADD(s2, r[2 * ars + k], xv); \
        s3 = MADD(s3, r[3 * ars + k], xv); \
        s4 = MADD(s4, r[4 * ars + k], xv); \
        s5 = MADD(s5, r[5 * ars + k], xv); \
        s6 = MADD(s6, r[6 * ars + k], xv); \
        s7 = MADD(s7, r[7 * ars + k], xv); \
      } \
      y[i] = s0; y[i + 1] = s1; y[i + 2] = s2; y[i + 3] = s3; \
      y[i + 4] = s4; y[i + 5] = s5; y[i + 6] = s6; y[i + 7] = s7; \
    } \
    for (; i < hi; i++) { \
      const T *r = a + i * ars; \
      T s = 0; \
      CPU_POLLED_FOR(k, 0, K) s = MADD(s, r[k], x[k * xs]); \
      y[i] = s; \
    } \
  } \
  TGT static void axpy_##SUF(const void *x_, int64_t xrs, int64_t xcs, const void *s_, int64_t ss, int64_t K, \
                             void *y_, int64_t lo, int64_t hi) { \
    const T *X = x_, *s = s_; \
    T *y = y_; \
    for (int64_t j = lo; j < hi; j++) y[j] = 0; \
    int64_t k = 0, done = 0; \
    if (xcs == 1) /* four rows of X per pass over y, each element still in k order */ \
      for (; k + 4 <= K && !cpu_poll(&done, 4 * (hi - lo)); k += 4) { \
        const T s0 = s[k * ss], s1 = s[(k + 1) * ss], s2 = s[(k + 2) * ss], s3 = s[(k + 3) * ss]; \
        const T *x0 = X + k * xrs, *x1 = x0 + xrs, *x2 = x1 + xrs, *x3 = x2 + xrs; \
        for (int64_t j = lo; j < hi; j++) \
          y[j] = MADD(MADD(MADD(MADD(y[j], s0, x0[j]), s1, x1[j]), s2, x2[j]), s3, x3[j]); \
      } \
    for (; k < K && !cpu_poll(&done, hi - lo); k++) { \
      const T sv = s[k * ss], *xr = X + k * xrs; \
      if (xcs == 1) { for (int64_t j = lo; j < hi; j++) y[j] = MADD(y[j], sv, xr[j]); } \
      else { for (int64_t j = lo; j < hi; j++) y[j] = MADD(y[j], sv, xr[j * xcs]); } \
    } \
  }
#define MV_MADD(acc, x, y) ((acc) + (x) * (y))
K_MV(float, f32, , MV_MADD)
K_MV(double, f64, , MV_MADD)
typedef void (*dot_fn)(const void *, int64_t, const void *, int64_t, int64_t, void *, int64_t, int64_t);
typedef void (*axpy_fn)(const void *, int64_t, int64_t, const void *, int64_t, int64_t, void *, int64_t, int64_t);
#if GM_X86
#define MV_FMA_F32(acc, x, y) __builtin_fmaf(x, y, acc)
#define MV_FMA_F64(acc, x, y) __builtin_fma(x, y, acc)
K_MV(float, fma_f32, TGT_256, MV_FMA_F32)
K_MV(double, fma_f64, TGT_256, MV_FMA_F64)
/* [fused][0 f32, 1 f64] */
static const dot_fn dot_table[2][2] = {{dot_f32, dot_f64}, {dot_fma_f32, dot_fma_f64}};
static const axpy_fn axpy_table[2][2] = {{axpy_f32, axpy_f64}, {axpy_fma_f32, axpy_fma_f64}};
#else
static const dot_fn dot_table[2][2] = {{dot_f32, dot_f64}, {dot_f32, dot_f64}};
static const axpy_fn axpy_table[2][2] = {{axpy_f32, axpy_f64}, {axpy_f32, axpy_f64}};
#endif

/* Outputs per unit of splitting (dot: one interleaved group; axpy: a few
 * vectors), and most outputs an axpy task keeps in L1. */
#define MV_DOT_UNIT 8
#define MV_AXPY_UNIT 64
#define MV_AXPY_SPAN 4096

typedef struct {
  const tc_call *call;
  int64_t parts;       /* tasks per product */
  dot_fn dot;
  axpy_fn axpy;
} mv_job;

static int mv_part(const mv_job *j, int64_t bi, int64_t part) {
  if (tc_interrupt_flag) return -1;
  mm_prob p;
  cpu_matmul_prob(j->call, bi, &p);
  mv_form f;
  mv_of(&p, &f);
  int64_t unit = f.dot ? MV_DOT_UNIT : MV_AXPY_UNIT, nu = cdiv(f.len, unit);
  int64_t lo = min64(part * nu / j->parts * unit, f.len), hi = min64((part + 1) * nu / j->parts * unit, f.len);
  if (f.dot) j->dot(f.m, f.mrs, f.v, f.vs, f.K, f.y, lo, hi);
  else j->axpy(f.m, f.mrs, f.mcs, f.v, f.vs, f.K, f.y, lo, hi);
  return 0;
}

static int mv_task(void *ctx, int task, int worker) {
  const mv_job *j = ctx;
  (void)worker;
  return mv_part(j, task / j->parts, task % j->parts);
}

static int run_mv(const tc_call *call, int64_t nbatch, const mm_prob *p0) {
  int threads = cpu_threads(), w = call->dtype == TC_DT_F64, fused = cpu_float_isa() > CPU_ISA_BASE;
  mv_form f;
  mv_of(p0, &f);
  int64_t unit = f.dot ? MV_DOT_UNIT : MV_AXPY_UNIT, nu = cdiv(f.len, unit);
  /* enough tasks for the threads when the batch is short, and axpy spans in L1 */
  int64_t parts = 1, macs = f.len * f.K;
  if (threads > 1 && nbatch < 2 * threads && macs >= ((int64_t)1 << 16)) parts = TASKS_PER_THREAD * threads;
  if (!f.dot) parts = max64(parts, cdiv(f.len, MV_AXPY_SPAN));
  parts = min64(parts, nu);
  if (parts < 1) parts = 1;
  mv_job j = {call, parts, dot_table[fused][w], axpy_table[fused][w]};
  if (nbatch > INT_MAX / parts) {   /* more tasks than an int counts: one thread */
    for (int64_t bi = 0; bi < nbatch; bi++)
      for (int64_t part = 0; part < parts; part++)
        if (mv_part(&j, bi, part) < 0) return -1;
    return 0;
  }
  return cpu_parallel((int)(nbatch * parts), mv_task, &j);
}

/* ---- products with few outputs: the lane order ----
 * A product with fewer than DOT_FEW outputs (a dot product, a matrix times
 * a vector with under 8 rows) would be one long chain of dependent
 * multiply-adds per output if summed in k order. Each output is summed
 * instead in a fixed order that does not depend on the machine's width or
 * the thread count: the k terms go in blocks of DOT_BLOCK; in a block, lane
 * l (of DOT_LANES) adds the terms k = l, l + 32, l + 64, ... in k order,
 * starting from 0, one fused multiply-add each (a multiply and an add
 * without FMA); the lanes are then folded in halves (lane l += lane l + 16,
 * then l + 8, 4, 2, 1); the blocks' sums are added left to right. Blocks
 * of one long product run on different threads. */
#define DOT_FEW 8
#define DOT_LANES 32
#define DOT_BLOCK ((int64_t)1 << 14)
#define K_LANES(T, SUF, TGT, MADD) \
  TGT static T lanes_##SUF(const T *a, int64_t as, const T *b, int64_t bs, int64_t n) { \
    T acc[DOT_LANES]; \
    for (int l = 0; l < DOT_LANES; l++) acc[l] = 0; \
    int64_t k = 0; \
    if (as == 1 && bs == 1) \
      for (; k + DOT_LANES <= n; k += DOT_LANES) \
        for (int l = 0; l < DOT_LANES; l++) acc[l] = MADD(acc[l], a[k + l], b[k + l]); \
    else \
      for (; k + DOT_LANES <= n; k += DOT_LANES) \
        for (int l = 0; l < DOT_LANES; l++) acc[l] = MADD(acc[l], a[(k + l) * as], b[(k + l) * bs]); \
    for (int l = 0; k + l < n; l++) acc[l] = MADD(acc[l], a[(k + l) * as], b[(k + l) * bs]); \
    for (int w = DOT_LANES / 2; w >= 1; w /= 2) \
      for (int l = 0; l < w; l++) acc[l] = acc[l] + acc[l + w]; \
    return acc[0]; \
  } \
  static void block_##SUF(const mm_prob *p, int64_t o, int64_t blk, void *out) { \
    int64_t i = o / p->N, j = o % p->N, k0 = blk * DOT_BLOCK; \
    int64_t n = p->K - k0 < DOT_BLOCK ? p->K - k0 : DOT_BLOCK; \
    const T *a = (const T *)(const void *)p->a + i * p->ars + k0 * p->acs; \
    const T *b = (const T *)(const void *)p->b + k0 * p->brs + j * p->bcs; \
    *(T *)out = lanes_##SUF(a, p->acs, b, p->brs, n); \
  } \
  static void fold_##SUF(const void *parts, int64_t nblk, void *out) { \
    const T *v = parts; \
    T s = v[0]; \
    for (int64_t q = 1; q < nblk; q++) s = s + v[q]; \
    *(T *)out = s; \
  }
K_LANES(float, f32, , MV_MADD)
K_LANES(double, f64, , MV_MADD)
typedef void (*dblock_fn)(const mm_prob *, int64_t, int64_t, void *);
typedef void (*dfold_fn)(const void *, int64_t, void *);
#if GM_X86
K_LANES(float, fma_f32, TGT_256, MV_FMA_F32)
K_LANES(double, fma_f64, TGT_256, MV_FMA_F64)
static const dblock_fn dblock_table[2][2] = {{block_f32, block_f64}, {block_fma_f32, block_fma_f64}};
static const dfold_fn dfold_table[2][2] = {{fold_f32, fold_f64}, {fold_fma_f32, fold_fma_f64}};
#else
static const dblock_fn dblock_table[2][2] = {{block_f32, block_f64}, {block_f32, block_f64}};
static const dfold_fn dfold_table[2][2] = {{fold_f32, fold_f64}, {fold_f32, fold_f64}};
#endif

bool cpu_dot_lanes_applies(const tc_call *call, const mm_prob *p0) {
  return (call->dtype == TC_DT_F32 || call->dtype == TC_DT_F64) && p0->M * p0->N < DOT_FEW;
}

typedef struct {
  const tc_call *call;
  dblock_fn block;
  int64_t nout, nblk;   /* outputs per product, blocks per output */
  int64_t per;          /* one block each: outputs per task */
  int64_t total;        /* outputs of all products */
  char *parts;          /* several blocks: nblk sums for each output; else NULL */
  size_t es;
} dot_job;

static int dot_task(void *ctx, int task, int worker) {
  const dot_job *j = ctx;
  (void)worker;
  if (tc_interrupt_flag) return -1;
  mm_prob p;
  if (j->parts) {   /* one block of one output */
    int64_t per = j->nout * j->nblk, r = task % per;
    cpu_matmul_prob(j->call, task / per, &p);
    j->block(&p, r / j->nblk, r % j->nblk, j->parts + (size_t)task * j->es);
    return 0;
  }
  char *out = tc_tensor_data(j->call->out);
  int64_t lo = task * j->per, hi = lo + j->per < j->total ? lo + j->per : j->total;
  for (int64_t o = lo; o < hi; o++) {
    cpu_matmul_prob(j->call, o / j->nout, &p);
    j->block(&p, o % j->nout, 0, out + (size_t)o * j->es);
  }
  return 0;
}

int cpu_dot_lanes(const tc_call *call, int64_t nbatch, tc_err *err) {
  int w = call->dtype == TC_DT_F64, fused = cpu_float_isa() > CPU_ISA_BASE;
  mm_prob p0;
  cpu_matmul_prob(call, 0, &p0);
  dot_job j = {call, dblock_table[fused][w], p0.M * p0.N, cdiv(p0.K, DOT_BLOCK), 1, 0, NULL, w ? 8 : 4};
  if (__builtin_mul_overflow(nbatch, j.nout, &j.total))
    return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "too many products");
  int64_t ntasks;
  if (j.nblk > 1) {
    if (__builtin_mul_overflow(j.total, j.nblk, &ntasks) || ntasks > INT_MAX)
      return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "too many products");
    j.parts = malloc((size_t)ntasks * j.es);
    if (!j.parts) return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "allocation failed");
  } else {
    j.per = max64(1, ((int64_t)1 << 16) / max64(p0.K, 1));
    ntasks = cdiv(j.total, j.per);
    if (ntasks > INT_MAX) { j.per = cdiv(j.total, INT_MAX); ntasks = cdiv(j.total, j.per); }
  }
  /* under 2^18 multiply-adds, waking the pool costs more than it saves */
  int64_t macs;
  bool one = ntasks == 1 || (!__builtin_mul_overflow(j.total, p0.K, &macs) && macs < ((int64_t)1 << 18));
  int rc = 0;
  if (one)
    for (int64_t t = 0; t < ntasks && rc == 0; t++) rc = dot_task(&j, (int)t, 0);
  else
    rc = cpu_parallel((int)ntasks, dot_task, &j);
  if (rc == 0 && j.parts) {
    char *out = tc_tensor_data(call->out);
    dfold_fn fold = dfold_table[fused][w];
    for (int64_t o = 0; o < j.total; o++)
      fold(j.parts + (size_t)(o * j.nblk) * j.es, j.nblk, out + (size_t)o * j.es);
  }
  free(j.parts);
  return rc < 0 || tc_interrupt_flag ? cpu_interrupted(err) : 0;
}

/* ---- buffers ----
 * Packing space is kept from one call to the next (up to WS_KEEP bytes),
 * so a loop of products does not fault in fresh pages every time. Only the
 * engine's calling thread runs cpu_gemm. */
#define WS_KEEP ((size_t)64 << 20)
static char *ws;
static size_t ws_size;

static char *ws_get(size_t n) {
  if (n <= ws_size) return ws;
  free(ws);
  ws = aligned_alloc(64, align64(n));
  ws_size = ws ? n : 0;
  return ws;
}

static void ws_trim(void) {
  if (ws_size > WS_KEEP) { free(ws); ws = NULL; ws_size = 0; }
}

typedef struct {
  const gemm_plan *g;
  const tc_call *call;
  int64_t nbatch;
  char *buf;
  size_t each;   /* one worker's B chunk and A block */
} batch_job;

static int batch_task(void *ctx, int task, int worker) {
  const batch_job *b = ctx;
  mm_prob p;
  cpu_matmul_prob(b->call, task, &p);
  char *mine = b->buf + b->each * (size_t)worker;
  return run_product(b->g, &p, mine, mine + b->g->bbytes) < 0 ? -1 : 0;
}

int cpu_gemm(const tc_call *call, int64_t nbatch, tc_err *err) {
  tc_dtype dt = call->dtype;
  mm_prob p0;
  cpu_matmul_prob(call, 0, &p0);
  if (p0.M == 1 || p0.N == 1)
    return run_mv(call, nbatch, &p0) < 0 || tc_interrupt_flag ? cpu_interrupted(err) : 0;
  int threads = cpu_threads();
  int64_t macs;
  bool whole = nbatch >= 2 * threads && threads > 1 && nbatch <= INT_MAX &&
               !__builtin_mul_overflow(p0.M * p0.N, p0.K, &macs) && macs <= BATCH_PAR_MACS;
  gemm_plan g;
  plan_init(&g, dt, &p0, whole ? 1 : threads);
  /* whole products per task: each worker has its own B chunk and A block;
   * else one B chunk and an A block per worker */
  size_t need = whole ? (g.bbytes + g.abytes) * (size_t)threads : g.bbytes + g.abytes * (size_t)threads;
  char *buf = ws_get(need);
  if (!buf) return tc_err_set(err, TC_E_OOM, (int)call->op, (int)dt, "allocation failed");
  int rc = 0;
  if (whole) {
    batch_job b = {&g, call, nbatch, buf, g.bbytes + g.abytes};
    rc = cpu_parallel((int)nbatch, batch_task, &b);
  } else {
    for (int64_t bi = 0; bi < nbatch && rc == 0; bi++) {
      mm_prob p;
      cpu_matmul_prob(call, bi, &p);
      rc = run_product(&g, &p, buf, buf + g.bbytes);
    }
  }
  ws_trim();
  return rc < 0 || tc_interrupt_flag ? cpu_interrupted(err) : 0;
}

const char *cpu_gemm_isa_name(void) { return fkr_table[cpu_float_isa()][0].isa; }
