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
 * (matmul.c) does the same operations in the same order. Products with
 * one row, one column or fewer than 8 outputs are summed in the lane order
 * below instead (vector products). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
#include <cpuid.h>
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
/* Under this many multiply-adds in all, the products run on the calling
 * thread alone: handing the packing and the tiles of a 128 x 128 x 128
 * product to the pool made it slower (f64 48 -> 63 us, f32 24 -> 32 on 2
 * threads of a Zen 5); from about 160^3 f64 and 200^3 f32 the threads win.
 * On a Zen 4 (AMD family 19h, 2 cores), whose AVX-512 multiply-adds take
 * two passes, the threads won from about 80^3 (SERIAL_MACS_FAM19, for the
 * whole family: Zen 3's AVX2 kernels are no faster a multiply-add): one
 * thread / two, medians of 5 rounds, f64 / f32: 100^3 49 / 36, 29 / 21 us
 * (NumPy 42 / 20 on one thread), 128^3 88 / 65, 44 / 34, 160^3 168 / 112,
 * 84 / 59; at 64^3 a wash (12.2 / 12.3 f64). */
#define SERIAL_MACS ((int64_t)1 << 22)
#define SERIAL_MACS_FAM19 ((int64_t)1 << 19)
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
    tc_progress_add(mrows * ncols * kb);
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

#define MV_MADD(acc, x, y) ((acc) + (x) * (y))
#if GM_X86
#define MV_FMA_F32(acc, x, y) __builtin_fmaf(x, y, acc)
#define MV_FMA_F64(acc, x, y) __builtin_fma(x, y, acc)
#endif

/* ---- vector products: the lane order ----
 * A product with one row or one column (a dot product, a matrix times a
 * vector, a vector times a matrix) or fewer than DOT_FEW outputs would be
 * one long chain of dependent multiply-adds per output if summed in k
 * order, and a matrix times a vector could not be vectorised along k. Each
 * output is summed instead in a fixed order that does not depend on the
 * machine's width, the layout or the thread count: the k terms go in
 * blocks of DOT_BLOCK; in a block, lane l (of DOT_LANES) adds the terms
 * k = l, l + 32, l + 64, ... in k order, starting from 0, one fused
 * multiply-add each (a multiply and an add without FMA); the lanes are
 * then folded in halves (lane l += lane l + 16, then l + 8, 4, 2, 1); the
 * blocks' sums are added left to right.
 * Two forms compute it: "rows" sums one output at a time along its row of
 * the matrix (the matrix contiguous along k: A @ x with A row-major), and
 * "columns" sums a span of neighbouring outputs at once, adding row k of
 * the matrix into the span's lane k mod 32 (the matrix contiguous along the
 * outputs: x @ B with B row-major, or A @ x with A transposed). Both do
 * the same operations on each output. Units (an output or a span) and
 * blocks of one long product run on different threads. */
#define DOT_FEW 8
/* outputs per unit of the rows form when rows_apply */
#define ROWS_SPAN 8
/* The rows form over contiguous operands that have left the L2 but fit in
 * half the last-level cache (DOT_PF_MIN bytes up to llc_bytes() / 2, all
 * the outputs' rows together) prefetches ahead of its long streams: the
 * hardware prefetchers alone left dot of two 10^7 f64 vectors (160 MB, in
 * a 480 MiB L3) 10% slower on one machine, and a 3000 x 3000 f32 matrix
 * times a vector 25-35% slower on another (Zen 5, 736 against 549 us);
 * from memory (2 x 10^7 and up) prefetching was 5-12% slower on the first
 * machine, so it stays off there. How far ahead: PF_NEAR bytes when the
 * operands fit in the cores' own L3 (l3_bytes), else PF_FAR. On the Zen 5
 * (32 MiB L3), medians of 24 interleaved runs of dot of two 10^6 f64
 * vectors: 2 KiB ahead 85.5 us, 4 KiB 87.4, 8 KiB 92.1; the 3000 x 3000
 * matrix times a vector (from memory), of 12: 2 KiB 767 us, 4 KiB 634,
 * 8 KiB 494, 16 KiB 458. The AVX-512 kernels prefetch only a matrix
 * larger than the L3: on the same machine, that dot took 83 us without
 * and 99 with, a 2000 x 2000 f32 matrix times a vector 118 against 130,
 * and dot of two 10^7 f64 vectors (from memory) 4000 against 4139 (24, 12
 * and 48 interleaved runs); the 3000 x 3000 matrix times a vector needs
 * it (422 us with, 642 without). On a Zen 4 (AMD family 19h, 32 MiB L3,
 * 2 cores) prefetching made that product slower at any distance, and the
 * rows form without it was the fastest: medians over 3 to 5 interleaved
 * rounds, 16 KiB ahead 1.1-1.8 ms, 64 KiB 1.0-1.3, none 0.81-0.99 (NumPy
 * 0.62-1.0 in the same rounds). So on family 19h the AVX-512 kernels do
 * not prefetch (amd_fam19). */
#define PF_NEAR 4096
#define PF_FAR 16384
#define PF_A 1   /* the left operand: a row of the matrix (A @ x), or the first vector */
#define PF_B 2   /* the right: a column of the matrix (x @ B), or the second vector */
/* rows_*'s grouping (AVX-512), or'd into pf too: ROWS_BY4 or ROWS_BY8 rows
 * at a time against the vector, else one at a time (see rows_group) */
#define ROWS_BY4 4
#define ROWS_BY8 8
#define PF_DIST(pf) ((pf) & ~4095)
/* pf holds the distance (a multiple of 4096) or'd with PF_A and PF_B */
#define DOT_PF_MIN ((int64_t)8 << 20)
#define DOT_LANES 32
#define DOT_BLOCK ((int64_t)1 << 14)
/* the columns form's lane sums: as many outputs as fit in COLS_ACC_BYTES
 * (512 f32, 256 f64: r @ X of a 3000 x 3000 f32 X took 1052 us in spans
 * of 1024 outputs, 715 in spans of 512) */
#define COLS_ACC_BYTES ((int64_t)64 << 10)
/* rows a lane takes in one pass over its sums in the columns form (a
 * pass loads and stores its 2 KiB of sums once): r @ X of a 3000 x 3000
 * f32 X on 2 threads took 474-497 us four rows a pass (the last rows one
 * a pass), 418-462 eight; of a 100 x 100000 X, 2.3-2.6 ms, now 650-674 */
#define COLS_ROWS 8
_Static_assert(COLS_ROWS == 8, "cpassn_* has a case for each row count up to COLS_ROWS");
/* the prefetches of lanes_* for the DOT_LANES terms from k on */
#define LANES_PF(T, a, b, k, pf) \
  for (int q = 0; q < DOT_LANES * (int)sizeof(T); q += 64) { \
    if ((pf) & PF_A) __builtin_prefetch((const char *)((a) + (k)) + PF_DIST(pf) + q); \
    if ((pf) & PF_B) __builtin_prefetch((const char *)((b) + (k)) + PF_DIST(pf) + q); \
  }
/* The contiguous loop of lanes_*: whole rounds of DOT_LANES terms from k
 * on, added into acc[], k advanced past them. LANES_C is plain C, which
 * the compiler vectorises for the function's target; LANES_X512_* below
 * do the same fused multiply-adds in AVX-512 registers. */
#define LANES_C(T, MADD, a, b, n, pf, acc, k) \
  if (PF_DIST(pf)) \
    for (; k + DOT_LANES <= n; k += DOT_LANES) { \
      LANES_PF(T, a, b, k, pf) \
      for (int l = 0; l < DOT_LANES; l++) acc[l] = MADD(acc[l], a[k + l], b[k + l]); \
    } \
  else \
    for (; k + DOT_LANES <= n; k += DOT_LANES) \
      for (int l = 0; l < DOT_LANES; l++) acc[l] = MADD(acc[l], a[k + l], b[k + l]);
#define K_LANES(T, SUF, TGT, CTGT, MADD, CONTIG, ROWS) \
  /* the terms from k to n into the lanes, then the lanes folded */ \
  TGT static T lanes_end_##SUF(T *acc, const T *a, int64_t as, const T *b, int64_t bs, int64_t k, int64_t n) { \
    for (int l = 0; k + l < n; l++) acc[l] = MADD(acc[l], a[(k + l) * as], b[(k + l) * bs]); \
    for (int w = DOT_LANES / 2; w >= 1; w /= 2) \
      for (int l = 0; l < w; l++) acc[l] = acc[l] + acc[l + w]; \
    return acc[0]; \
  } \
  TGT static T lanes_##SUF(const T *a, int64_t as, const T *b, int64_t bs, int64_t n, int pf) { \
    T acc[DOT_LANES]; \
    for (int l = 0; l < DOT_LANES; l++) acc[l] = 0; \
    int64_t k = 0; \
    if (as == 1 && bs == 1) { CONTIG(T, MADD, a, b, n, pf, acc, k) } \
    else \
      for (; k + DOT_LANES <= n; k += DOT_LANES) \
        for (int l = 0; l < DOT_LANES; l++) acc[l] = MADD(acc[l], a[(k + l) * as], b[(k + l) * bs]); \
    return lanes_end_##SUF(acc, a, as, b, bs, k, n); \
  } \
  /* w outputs out[r * os] (add: added to out's): the lane sums of rows m + r * rs against v, \
   * all contiguous along k; vfirst: v is each product's left operand */ \
  TGT static void rows_##SUF(const T *m, int64_t rs, const T *v, bool vfirst, int64_t n, int64_t w, T *out, \
                             int64_t os, bool add, int pf) { \
    int64_t r = 0; \
    ROWS(T, SUF, m, rs, v, vfirst, n, w, out, os, add, pf, r) \
    for (; r < w; r++) { \
      T s = vfirst ? lanes_##SUF(v, 1, m + r * rs, 1, n, pf) : lanes_##SUF(m + r * rs, 1, v, 1, n, pf); \
      out[r * os] = add ? out[r * os] + s : s; \
    } \
  } \
  /* one pass of the columns form over lane sums ac[0..w): the C rows r[j] \
   * (their outputs st apart; C and st constants once inlined) with their \
   * values x[j], in row order */ \
  CTGT static inline __attribute__((always_inline)) void cpass_##SUF(T *restrict ac, const T *const *r, const T *x, \
                                                                     int C, bool vfirst, int64_t w, int64_t st) { \
    if (vfirst) \
      for (int64_t o = 0; o < w; o++) { \
        T s = ac[o]; \
        for (int j = 0; j < C; j++) s = MADD(s, x[j], r[j][o * st]); \
        ac[o] = s; \
      } \
    else \
      for (int64_t o = 0; o < w; o++) { \
        T s = ac[o]; \
        for (int j = 0; j < C; j++) s = MADD(s, r[j][o * st], x[j]); \
        ac[o] = s; \
      } \
  } \
  /* the same for c rows (1 to COLS_ROWS), outputs mcs apart */ \
  CTGT static void cpassn_##SUF(T *restrict ac, const T *const *r, const T *x, int c, bool vfirst, int64_t w, \
                                int64_t mcs) { \
    switch (mcs != 1 ? 0 : c) { \
    case 0: cpass_##SUF(ac, r, x, c, vfirst, w, mcs); break; \
    case 1: cpass_##SUF(ac, r, x, 1, vfirst, w, 1); break; \
    case 2: cpass_##SUF(ac, r, x, 2, vfirst, w, 1); break; \
    case 3: cpass_##SUF(ac, r, x, 3, vfirst, w, 1); break; \
    case 4: cpass_##SUF(ac, r, x, 4, vfirst, w, 1); break; \
    case 5: cpass_##SUF(ac, r, x, 5, vfirst, w, 1); break; \
    case 6: cpass_##SUF(ac, r, x, 6, vfirst, w, 1); break; \
    case 7: cpass_##SUF(ac, r, x, 7, vfirst, w, 1); break; \
    default: cpass_##SUF(ac, r, x, COLS_ROWS, vfirst, w, 1); break; \
    } \
  } \
  /* w outputs: out[o * os] = (add: out[o * os] +) the lane sum of sum over \
   * k of x(k) m(k, o), m(k, o) = m[k * mrs + o * mcs], x(k) = v[k * vs]; \
   * vfirst: v is the left operand of each product (kept so that NaN \
   * payloads do not swap) */ \
  CTGT static void cols_##SUF(const T *m, int64_t mrs, int64_t mcs, const T *v, int64_t vs, bool vfirst, int64_t n, \
                             int64_t w, T *out, int64_t os, bool add) { \
    T acc[DOT_LANES][COLS_ACC_BYTES / DOT_LANES / sizeof(T)]; \
    const T *rp[COLS_ROWS]; \
    T xs[COLS_ROWS]; \
    for (int l = 0; l < DOT_LANES; l++) \
      for (int64_t o = 0; o < w; o++) acc[l][o] = 0; \
    /* rows k + l, + 32, + 64, ... (COLS_ROWS of them, fewer at the end) are \
     * lane l's next terms: one pass over the lane's sums adds them in k \
     * order */ \
    for (int64_t k = 0; k < n; k += COLS_ROWS * DOT_LANES) \
      for (int l = 0; l < DOT_LANES && k + l < n; l++) { \
        const int64_t q = k + l; \
        const int c = (int)min64(COLS_ROWS, (n - q + DOT_LANES - 1) / DOT_LANES); \
        for (int j = 0; j < c; j++) { \
          xs[j] = v[(q + j * DOT_LANES) * vs]; \
          rp[j] = m + (q + j * DOT_LANES) * mrs; \
        } \
        if (mcs == 1) { /* the rows of two steps on, which the prefetchers do not foresee */ \
          const int64_t pq = l + 2 < DOT_LANES ? q + 2 : q + COLS_ROWS * DOT_LANES + 2 - DOT_LANES; \
          for (int rr = 0; rr < COLS_ROWS && pq + rr * DOT_LANES < n; rr++) \
            for (int64_t o = 0; o < w; o += 64 / (int64_t)sizeof(T)) \
              __builtin_prefetch(m + (pq + rr * DOT_LANES) * mrs + o); \
        } \
        cpassn_##SUF(acc[l], rp, xs, c, vfirst, w, mcs); \
      } \
    for (int h = DOT_LANES / 2; h >= 1; h /= 2) \
      for (int l = 0; l < h; l++) \
        for (int64_t o = 0; o < w; o++) acc[l][o] = acc[l][o] + acc[l + h][o]; \
    for (int64_t o = 0; o < w; o++) out[o * os] = add ? out[o * os] + acc[0][o] : acc[0][o]; \
  } \
  /* one block of output o (rows) or of outputs o .. o + w - 1 (columns), \
   * stored to out or (add) added to what out holds: the blocks of an \
   * output added left to right */ \
  static void block_##SUF(const mm_prob *p, bool cols, int64_t o, int64_t w, int64_t blk, void *out, int64_t os, \
                          bool add, int pf) { \
    int64_t k0 = blk * DOT_BLOCK, n = p->K - k0 < DOT_BLOCK ? p->K - k0 : DOT_BLOCK; \
    const T *a = (const T *)(const void *)p->a + k0 * p->acs, *b = (const T *)(const void *)p->b + k0 * p->brs; \
    T *y = out; \
    if (!cols && w > 1) { /* rows_apply */ \
      if (p->N == 1) rows_##SUF(a + o * p->ars, p->ars, b, false, n, w, y, os, add, pf); \
      else rows_##SUF(b + o * p->bcs, p->bcs, a, true, n, w, y, os, add, pf); \
      return; \
    } \
    if (!cols) { \
      int64_t i = o / p->N, j = o % p->N; \
      T s = lanes_##SUF(a + i * p->ars, p->acs, b + j * p->bcs, p->brs, n, pf); \
      *y = add ? *y + s : s; \
      return; \
    } \
    if (p->N == 1) cols_##SUF(a + o * p->ars, p->acs, p->ars, b, p->brs, false, n, w, y, os, add); \
    else cols_##SUF(b + o * p->bcs, p->brs, p->bcs, a, p->acs, true, n, w, y, os, add); \
  } \
  static void fold_##SUF(const void *parts, int64_t nblk, void *out) { \
    const T *v = parts; \
    T s = v[0]; \
    for (int64_t q = 1; q < nblk; q++) s = s + v[q]; \
    *(T *)out = s; \
  }
#define ROWS_C(T, SUF, m, rs, v, vfirst, n, w, out, os, add, pf, r)
K_LANES(float, f32, , , MV_MADD, LANES_C, ROWS_C)
K_LANES(double, f64, , , MV_MADD, LANES_C, ROWS_C)
typedef void (*dblock_fn)(const mm_prob *, bool, int64_t, int64_t, int64_t, void *, int64_t, bool, int);
typedef void (*dfold_fn)(const void *, int64_t, void *);
#if GM_X86
/* AVX-512: the 32 lane sums of a product in VN vectors of E lanes each.
 * end_x512_*: the last rem (< 32) terms into their lanes (masked), then
 * the lanes folded in halves, all in registers: the same additions as
 * lanes_end_*, on the same lanes. */
#define K_END_X512(T, SUF, V, E, VN, MASK, MLD, FMA3, ADD, FOLD1) \
  TGT_512 static inline T end_##SUF(V *s, const T *a, const T *b, int64_t rem) { \
    for (int v = 0; v < VN && rem > v * E; v++) { \
      int64_t c = rem - v * E; \
      MASK mk = (MASK)(c >= E ? ~0u : (1u << c) - 1); \
      s[v] = FMA3(MLD(mk, a + v * E), MLD(mk, b + v * E), s[v], mk); \
    } \
    for (int h = VN / 2; h >= 1; h /= 2) \
      for (int v = 0; v < h; v++) s[v] = ADD(s[v], s[v + h]); \
    return FOLD1(s[0]); \
  }
TGT_512 static inline double fold1_f64(__m512d x) {   /* 8 lanes: halves, quarters, then lanes 0 + 1 */
  __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(x), _mm512_extractf64x4_pd(x, 1));
  __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
  return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}
TGT_512 static inline float fold1_f32(__m512 x) {   /* 16 lanes */
  __m256 h = _mm256_add_ps(_mm512_castps512_ps256(x), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 1)));
}
K_END_X512(float, x512_f32, __m512, 16, 2, __mmask16, _mm512_maskz_loadu_ps, _mm512_mask3_fmadd_ps, _mm512_add_ps,
           fold1_f32)
K_END_X512(double, x512_f64, __m512d, 8, 4, __mmask8, _mm512_maskz_loadu_pd, _mm512_mask3_fmadd_pd, _mm512_add_pd,
           fold1_f64)
/* the contiguous product in registers (GCC left a plain-C loop's sums in
 * memory: a store and a load on each multiply-add's chain) */
#define LANES_X512(V, E, VN, LD, FMA, ZERO, SUF, T, a, b, n, pf, k) { \
    V s_[VN]; \
    for (int v_ = 0; v_ < VN; v_++) s_[v_] = ZERO(); \
    for (; k + DOT_LANES <= n; k += DOT_LANES) { \
      if (PF_DIST(pf)) { LANES_PF(T, a, b, k, pf) } \
      for (int v_ = 0; v_ < VN; v_++) s_[v_] = FMA(LD(a + k + v_ * E), LD(b + k + v_ * E), s_[v_]); \
    } \
    return end_##SUF(s_, a + k, b + k, n - k); \
  }
/* R rows at a time against one vector, which is loaded once for all of
 * them (R a constant: the sums stay in registers) */
#define ROWS_X512(V, E, VN, LD, FMA, ZERO, SUF, T, m, rs, v, n, w, out, os, add, r, R) \
  for (; r + (R) <= w; r += (R)) { \
    const T *m_ = m + r * rs; \
    V s_[R][VN]; \
    for (int q_ = 0; q_ < (R); q_++) \
      for (int v_ = 0; v_ < VN; v_++) s_[q_][v_] = ZERO(); \
    int64_t k_ = 0; \
    for (; k_ + DOT_LANES <= n; k_ += DOT_LANES) { \
      for (int v_ = 0; v_ < VN; v_++) { \
        const V x_ = LD(v + k_ + v_ * E); \
        for (int q_ = 0; q_ < (R); q_++) s_[q_][v_] = FMA(LD(m_ + q_ * rs + k_ + v_ * E), x_, s_[q_][v_]); \
      } \
    } \
    for (int q_ = 0; q_ < (R); q_++) { \
      T t_ = end_##SUF(s_[q_], m_ + q_ * rs + k_, v + k_, n - k_); \
      out[(r + q_) * os] = add ? out[(r + q_) * os] + t_ : t_; \
    } \
  }
#define X512_F32 __m512, 16, 2, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_setzero_ps, x512_f32
#define X512_F64 __m512d, 8, 4, _mm512_loadu_pd, _mm512_fmadd_pd, _mm512_setzero_pd, x512_f64
#define LANES_X512_F32(T, MADD, a, b, n, pf, acc, k) LANES_X512_(X512_F32, T, a, b, n, pf, k)
#define LANES_X512_F64(T, MADD, a, b, n, pf, acc, k) LANES_X512_(X512_F64, T, a, b, n, pf, k)
#define LANES_X512_(...) LANES_X512(__VA_ARGS__)
/* the rows' grouping as pf says (ROWS_BY4, ROWS_BY8; neither: one at a time) */
#define ROWS_X512_BY(X, T, m, rs, v, n, w, out, os, add, pf, r) \
  if ((pf) & ROWS_BY8) { ROWS_X512_(X, T, m, rs, v, n, w, out, os, add, r, 8) } \
  else if ((pf) & ROWS_BY4) { ROWS_X512_(X, T, m, rs, v, n, w, out, os, add, r, 4) }
#define ROWS_X512_F32(T, SUF, m, rs, v, vfirst, n, w, out, os, add, pf, r) \
  ROWS_X512_BY(X512_F32, T, m, rs, v, n, w, out, os, add, pf, r)
#define ROWS_X512_F64(T, SUF, m, rs, v, vfirst, n, w, out, os, add, pf, r) \
  ROWS_X512_BY(X512_F64, T, m, rs, v, n, w, out, os, add, pf, r)
#define ROWS_X512_(...) ROWS_X512(__VA_ARGS__)
K_LANES(float, fma_f32, TGT_256, TGT_256, MV_FMA_F32, LANES_C, ROWS_C)
K_LANES(double, fma_f64, TGT_256, TGT_256, MV_FMA_F64, LANES_C, ROWS_C)
K_LANES(float, x512_f32, TGT_512, TGT_256, MV_FMA_F32, LANES_X512_F32, ROWS_X512_F32)
K_LANES(double, x512_f64, TGT_512, TGT_256, MV_FMA_F64, LANES_X512_F64, ROWS_X512_F64)
static const dblock_fn dblock_table[CPU_ISA_COUNT][2] = {
    {block_f32, block_f64}, {block_fma_f32, block_fma_f64}, {block_x512_f32, block_x512_f64}};
static const dfold_fn dfold_table[CPU_ISA_COUNT][2] = {
    {fold_f32, fold_f64}, {fold_fma_f32, fold_fma_f64}, {fold_x512_f32, fold_x512_f64}};
#else
static const dblock_fn dblock_table[CPU_ISA_COUNT][2] = {
    {block_f32, block_f64}, {block_f32, block_f64}, {block_f32, block_f64}};
static const dfold_fn dfold_table[CPU_ISA_COUNT][2] = {{fold_f32, fold_f64}, {fold_f32, fold_f64}, {fold_f32, fold_f64}};
#endif

bool cpu_dot_lanes_applies(const tc_call *call, const mm_prob *p0) {
  return (call->dtype == TC_DT_F32 || call->dtype == TC_DT_F64) &&
         (p0->M * p0->N < DOT_FEW || p0->M == 1 || p0->N == 1);
}

static int64_t absi(int64_t v) { return v < 0 ? -v : v; }

/* The last-level cache's size in bytes (0 when the system does not say);
 * any thread may ask, and all compute the same value. */
static int64_t llc_bytes(void) {
  static int64_t size = -1;
  int64_t v = __atomic_load_n(&size, __ATOMIC_RELAXED);
  if (v < 0) {
    long c = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    c = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (c <= 0) c = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    v = c > 0 ? c : 0;
    __atomic_store_n(&size, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* The L3 that the first CPU shares with its neighbours, in bytes (sysfs),
 * or llc_bytes() when the system does not say: on a machine whose CPUs sit
 * in several core complexes, glibc counts all their L3s (384 MiB on a Zen
 * 5 whose cores each see 32 MiB). */
static int64_t l3_bytes(void) {
  static int64_t size = -1;
  int64_t v = __atomic_load_n(&size, __ATOMIC_RELAXED);
  if (v < 0) {
    v = 0;
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (f) {
      long long n = 0;
      char unit = 0;
      if (fscanf(f, "%lld%c", &n, &unit) >= 1 && n > 0 && n < ((long long)1 << 40))
        v = n << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0);
      fclose(f);
    }
    if (v <= 0) v = llc_bytes();
    __atomic_store_n(&size, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* The rows form on whole rows at a time (rows_*): a matrix times a
 * vector, the matrix's rows (A @ x) or columns (x @ B) and the vector
 * contiguous along k. */
static bool rows_apply(const mm_prob *p) {
  return p->acs == 1 && p->brs == 1 && ((p->N == 1 && p->M > 1) || (p->M == 1 && p->N > 1));
}

/* The columns form, where the matrix's stride along the outputs is
 * shorter than along k (a matrix times or by a vector only). */
static bool lanes_by_cols(const mm_prob *p) {
  if (p->M * p->N < 2) return false;
  if (p->N == 1) return absi(p->ars) < absi(p->acs);
  return p->M == 1 && absi(p->bcs) < absi(p->brs);
}

typedef struct {
  const tc_call *call;
  dblock_fn block;
  bool cols;            /* the columns form */
  int64_t nout, nunit;  /* outputs and units (outputs or spans) per product */
  int64_t span;         /* outputs per unit of the columns form */
  int64_t nblk;         /* blocks per output */
  int64_t per;          /* whole units: units per task */
  int64_t units;        /* units of all products */
  char *parts;          /* split units: nblk sums for each output; else NULL */
  size_t es;
  int pf;               /* the rows form's prefetching: PF_A, PF_B and the distance, or 0 */
} dot_job;

/* Unit u of product bi, block blk: its sums to dst, os apart (add: added
 * to dst's); its multiply-adds counted in *pending (progress). */
static void dot_unit(const dot_job *j, int64_t bi, int64_t u, int64_t blk, char *dst, int64_t os, bool add,
                     int64_t *pending) {
  mm_prob p;
  cpu_matmul_prob(j->call, bi, &p);
  int64_t o = u * j->span, w = min64(j->span, j->nout - o);
  j->block(&p, j->cols, o, w, blk, dst, os, add, j->pf);
  cpu_progress_note(pending, w * min64(DOT_BLOCK, p.K - blk * DOT_BLOCK));
}

static int dot_task(void *ctx, int task, int worker) {
  const dot_job *j = ctx;
  (void)worker;
  int64_t pending = 0;
  if (tc_interrupt_flag) return -1;
  if (j->parts) {   /* split units: j->per consecutive blocks of the units' blocks in a row */
    int64_t all = j->units * j->nblk, hi = (task + 1) * j->per < all ? (task + 1) * j->per : all;
    for (int64_t q = task * j->per; q < hi; q++) {
      int64_t ub = q / j->nblk, blk = q % j->nblk, bi = ub / j->nunit, u = ub % j->nunit;
      int64_t o = bi * j->nout + u * j->span;
      if (q > task * j->per && tc_interrupt_flag) return -1;
      dot_unit(j, bi, u, blk, j->parts + (size_t)(o * j->nblk + blk) * j->es, j->nblk, false, &pending);
    }
    tc_progress_add(pending);
    return 0;
  }
  /* whole units: each unit's blocks in order, added into the output */
  char *out = tc_tensor_data(j->call->out);
  int64_t lo = task * j->per, hi = lo + j->per < j->units ? lo + j->per : j->units;
  for (int64_t ub = lo; ub < hi; ub++) {
    if (ub > lo && tc_interrupt_flag) return -1;
    int64_t bi = ub / j->nunit, u = ub % j->nunit;
    char *dst = out + (size_t)(bi * j->nout + u * j->span) * j->es;
    for (int64_t blk = 0; blk < j->nblk; blk++) {
      if (blk > 0 && tc_interrupt_flag) return -1;
      dot_unit(j, bi, u, blk, dst, 1, blk > 0, &pending);
    }
  }
  tc_progress_add(pending);
  return 0;
}

/* Units are split into blocks across threads when there are too few of
 * them to go round and their partial sums fit in DOT_PARTS_MAX. */
#define DOT_PARTS_MAX ((int64_t)1 << 20)
#define DOT_TASK_CACHE ((int64_t)1 << 20)
#define DOT_TASKS_PER 2

/* The columns form's span: the most outputs whose lane sums fit in
 * COLS_ACC_BYTES, or fewer when there are few spans, so that they go
 * evenly round th threads (3000 outputs in two threads' spans of 1024 left
 * one thread two thirds of the work). Each output's sum is the same
 * whatever the span. */
static int64_t cols_span(int64_t nout, int64_t nbatch, int64_t es, int64_t th) {
  int64_t most = COLS_ACC_BYTES / (DOT_LANES * es);
  int64_t want = cdiv(nout, most);
  if (nbatch >= 8 * th || want * nbatch >= 8 * th) return most;
  while ((want * nbatch) % th) want++;
  return min64(most, (cdiv(nout, want) + 15) / 16 * 16);
}

/* How the AVX-512 rows form groups the rows of a matrix of `bytes`. In
 * the L1 and L2, four rows share each load of the vector; in the L3, one
 * row at a time is one stream the L2 prefetcher keeps ahead of; beyond
 * half the L3, most of the matrix comes from memory, and eight rows at a
 * time keep more of its lines in flight. Each output is summed the same
 * way in every grouping. Zen 5, 32 MiB L3, f32 matrices times a vector,
 * medians of 5 interleaved rounds on 2 threads (on 1), four / one / eight
 * rows at a time: 300 x 300 4.5 / 4.1 / 4.5 us; 1000 x 1000 25.0 / 24.4 /
 * 29.4; 2500 x 2500 174 / 213 / 169 (423 / 568 / 335); 3000 x 3000 237 /
 * 353 / 231 (642 / 935 / 548); 10000 x 1000 365 / 420 / 308 (935 / 973 /
 * 812); 3000 x 3000 f64 673 / 881 / 671 (1871 / 1654 / 1270); 64
 * products of 128 x 128 by 128 x 1 30.3 / 31.2 / 37.3. Eight rows of f64
 * are 32 vectors of sums, more than the registers hold, and still the
 * fastest from memory. On a family 19h core (a Zen 4) only four at a time
 * was measured (the fastest form there; see PF_NEAR's note). */
#define ROWS_BY4_MAX ((int64_t)128 << 10)
static int rows_forced;   /* cpu_dot_rows_group's, or 0 */
void cpu_dot_rows_group(int rows) {
  __atomic_store_n(&rows_forced, rows == 1 ? -1 : rows == 4 ? ROWS_BY4 : rows == 8 ? ROWS_BY8 : 0, __ATOMIC_RELAXED);
}
static bool amd_fam19(void);
static int rows_group(int64_t bytes) {
  int f = __atomic_load_n(&rows_forced, __ATOMIC_RELAXED);
  if (f) return f < 0 ? 0 : f;
  if (bytes <= ROWS_BY4_MAX || amd_fam19()) return ROWS_BY4;   /* four at a time was the fastest measured there */
  return bytes <= l3_bytes() / 2 ? 0 : ROWS_BY8;
}

/* Whether the CPU is an AMD family 19h core (Zen 3, Zen 4). Any thread
 * may ask; all compute the same. */
static bool amd_fam19(void) {
  static int v = -1;
  int r = __atomic_load_n(&v, __ATOMIC_RELAXED);
  if (r < 0) {
    r = 0;
#if GM_X86
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u &&
        __get_cpuid(1, &a, &b, &c, &d))   /* "AuthenticAMD"; the family, extended when the base is 0xf */
      r = ((a >> 8) & 0xf) + ((a >> 8 & 0xf) == 0xf ? (a >> 20) & 0xff : 0) == 0x19;
#endif
    __atomic_store_n(&v, r, __ATOMIC_RELAXED);
  }
  return r;
}

int cpu_dot_lanes(const tc_call *call, int64_t nbatch, tc_err *err) {
  int w = call->dtype == TC_DT_F64, isa = cpu_float_isa();
  mm_prob p0;
  cpu_matmul_prob(call, 0, &p0);
  bool cols = lanes_by_cols(&p0);
  int64_t nout = p0.M * p0.N, total, macs, ntasks, nparts;
  if (__builtin_mul_overflow(nbatch, nout, &total))
    return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "too many products");
  /* under 2^15 multiply-adds, handing work to the pool costs more than it saves */
  bool small = !__builtin_mul_overflow(total, p0.K, &macs) && macs < ((int64_t)1 << 15);
  int64_t es = w ? 8 : 4, streamed;   /* the rows form reads each output's row and the vector */
  int pf = 0, which = p0.M > 1 ? PF_A : p0.N > 1 ? PF_B : PF_A | PF_B;   /* a vector read again for each output stays in L1 */
  if (!cols && !__builtin_mul_overflow(p0.K * es, nout + 1, &streamed) && streamed >= DOT_PF_MIN &&
      streamed <= llc_bytes() / 2) {
    bool far = streamed > l3_bytes();
    if (isa != CPU_ISA_AVX512) pf = which | (far ? PF_FAR : PF_NEAR);
    else if (far && which != (PF_A | PF_B) && !amd_fam19())   /* AVX-512: only a matrix from memory, not on family 19h */
      pf = which | PF_FAR;
  }
  if (!cols && rows_apply(&p0) && isa == CPU_ISA_AVX512) pf |= rows_group(p0.K * es * nout);
  /* rows_apply: ROWS_SPAN rows a unit, but one at a time with its prefetches when streaming from memory */
  int64_t span = cols ? cols_span(nout, nbatch, es, small ? 1 : cpu_threads())
                      : rows_apply(&p0) && PF_DIST(pf) != PF_FAR ? ROWS_SPAN : 1;
  dot_job j = {call, dblock_table[isa][w], cols, nout, cdiv(nout, span), span, cdiv(p0.K, DOT_BLOCK), 1, 0, NULL,
               (size_t)es, pf};
  if (__builtin_mul_overflow(nbatch, j.nunit, &j.units))
    return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "too many products");
  int64_t bytes = p0.K * es * 2;
  if (j.nblk > 1 && j.units < 2 * cpu_threads() && !__builtin_mul_overflow(total, j.nblk, &nparts) &&
      nparts <= DOT_PARTS_MAX) {
    /* runs of blocks, some 8 per thread: each thread streams long stretches. Operands that fit the
       threads' own caches (DOT_TASK_CACHE each) go in one run a thread: the caller takes the first,
       the workers the others, and so each core reads the same part again in the next product, from
       its own cache (16 runs of 10^5 f64 went round the cores and came from L3: 7.4 us, not 6) */
    int64_t runs = bytes <= DOT_TASK_CACHE * cpu_threads() ? 1 : 8;
    j.per = max64(1, j.units * j.nblk / (runs * cpu_threads()));
    ntasks = cdiv(j.units * j.nblk, j.per);
    j.parts = malloc((size_t)nparts * j.es);
    if (!j.parts) return tc_err_set(err, TC_E_OOM, (int)call->op, (int)call->dtype, "allocation failed");
  } else {
    /* some 2^16 multiply-adds a task, but tasks no smaller than the units over DOT_TASKS_PER a
       thread (rounded down, so that spans cols_span made to go evenly round the threads keep a
       task each): each thread then streams long stretches of the matrix. A 3000 x 3000 f32
       matrix (36 MB, a 32 MiB L3) times a vector on 2 threads, 15 interleaved rounds: in tasks
       of 16 rows (the threads taking turns) 318-351 us; in 1, 2 or 4 tasks a thread about
       305-335 while other programs use the L3 and 238-275 when they leave it alone (the matrix
       then stays in it in part), in 16 a thread 258-298 then */
    int64_t work = p0.K > INT64_MAX / span ? INT64_MAX : p0.K * span;
    j.per = max64(max64(1, ((int64_t)1 << 16) / max64(work, 1)), j.units / (DOT_TASKS_PER * cpu_threads()));
    ntasks = cdiv(j.units, j.per);
    if (ntasks > INT_MAX) { j.per = cdiv(j.units, INT_MAX); ntasks = cdiv(j.units, j.per); }
  }
  bool one = ntasks == 1 || small;
  int rc = 0;
  if (one)
    for (int64_t t = 0; t < ntasks && rc == 0; t++) rc = dot_task(&j, (int)t, 0);
  else
    rc = cpu_parallel((int)ntasks, dot_task, &j);
  if (rc == 0 && j.parts) {
    char *out = tc_tensor_data(call->out);
    dfold_fn fold = dfold_table[isa][w];
    for (int64_t o = 0; o < total; o++)
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

typedef struct {
  const tc_call *call;
  int64_t nbatch;
  tc_err *err;
  int rc;
} gemm_serial;

/* cpu_gemm as one task of the pool: inside it, cpu_threads() is 1 */
static int gemm_serial_task(void *ctx, int task, int worker) {
  gemm_serial *s = ctx;
  (void)task;
  (void)worker;
  s->rc = cpu_gemm(s->call, s->nbatch, s->err);
  return s->rc != 0 ? -1 : 0;
}

int cpu_gemm(const tc_call *call, int64_t nbatch, tc_err *err) {
  tc_dtype dt = call->dtype;
  mm_prob p0;
  cpu_matmul_prob(call, 0, &p0);
  if (cpu_dot_lanes_applies(call, &p0)) return cpu_dot_lanes(call, nbatch, err);
  int threads = cpu_threads();
  int64_t macs, all;
  bool fits = !__builtin_mul_overflow(p0.M * p0.N, p0.K, &macs);
  if (threads > 1 && fits && !__builtin_mul_overflow(macs, nbatch, &all) &&
      all < (amd_fam19() ? SERIAL_MACS_FAM19 : SERIAL_MACS)) {
    gemm_serial s = {call, nbatch, err, 0};
    cpu_parallel(1, gemm_serial_task, &s);
    return s.rc;
  }
  bool whole = nbatch >= 2 * threads && threads > 1 && nbatch <= INT_MAX && fits && macs <= BATCH_PAR_MACS;
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
