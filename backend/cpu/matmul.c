/* CPU matrix products. Integers and bool run a blocked, packed kernel in
 * wrapping unsigned arithmetic (exact mod 2^w, so i8/i16 accumulate in 32
 * bits and truncate once), with vector code chosen at run time: AVX-512,
 * AVX2 or portable. f32/f64 run tcalc's own blocked kernel (gemm.c), or a
 * CBLAS when $TCALC_BLAS names one. Small products of every dtype use a
 * plain kernel whose sums run in k order (for floats with the same fused
 * multiply-adds as gemm.c, so the bits do not depend on the size class). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

#define CPTR(S, p) ((const S *)(const void *)(p))
#define PTR(S, p) ((S *)(void *)(p))

/* ---- the plain kernel: C row by row in k order ----
 * nw_E is the type a row accumulates in: 32 bits for i8/i16/i32 (exact
 * mod 2^w after truncation), 64 for i64 and for bool (a count of k). */
typedef uint64_t nw_BOOL;
typedef uint32_t nw_I8;
typedef uint32_t nw_I16;
typedef uint32_t nw_I32;
typedef uint64_t nw_I64;
typedef float nw_BF16;   /* bf16/f16 never reach a kernel: src/ multiplies them in f32 */
typedef float nw_F16;
typedef float nw_F32;
typedef double nw_F64;
typedef uint32_t nw_U8;
typedef uint32_t nw_U16;
typedef uint32_t nw_U32;
typedef uint64_t nw_U64;
#define MM_OUT_BOOL(v) ((uint8_t)((v) != 0))
#define MM_OUT_INT(v) (v)
#define MM_OUT_UINT(v) (v)
#define MM_OUT_FLT(v) (v)
#define MM_IN_BOOL(x) ((x) != 0)
#define MM_IN_INT(x) (x)
#define MM_IN_UINT(x) (x)
#define MM_IN_FLT(x) (x)

/* acc + x * y: wrapping for the unsigned integer words, a multiply and then
 * an add for floats; MM_FMA_* fuse the float ones into one rounding. */
#define MM_MADD(acc, x, y) ((acc) + (x) * (y))
#define MM_FMA_F32(acc, x, y) __builtin_fmaf(x, y, acc)
#define MM_FMA_F64(acc, x, y) __builtin_fma(x, y, acc)

#define K_NAIVE_GEN(NAME, E, S, CLS, TGT, MADD) \
  TGT static void NAME(const mm_prob *p, void *scratch) { \
    typedef nw_##E W; \
    W *restrict row = scratch; \
    const S *a = CPTR(S, p->a), *b = CPTR(S, p->b); \
    S *c = PTR(S, p->c); \
    if (p->N == 1) { \
      for (int64_t i = 0; i < p->M && !tc_interrupt_flag; i++) { \
        W acc = 0; \
        const S *ai = a + i * p->ars; \
        if (p->acs == 1 && p->brs == 1) { CPU_POLLED_FOR(k, 0, p->K) acc = MADD(acc, (W)MM_IN_##CLS(ai[k]), (W)MM_IN_##CLS(b[k])); } \
        else { CPU_POLLED_FOR(k, 0, p->K) acc = MADD(acc, (W)MM_IN_##CLS(ai[k * p->acs]), (W)MM_IN_##CLS(b[k * p->brs])); } \
        c[i] = (S)MM_OUT_##CLS(acc); \
      } \
      return; \
    } \
    int64_t done = 0; \
    for (int64_t i = 0; i < p->M && !tc_interrupt_flag; i++) { \
      for (int64_t j = 0; j < p->N; j++) row[j] = 0; \
      for (int64_t k = 0; k < p->K && !cpu_poll(&done, p->N); k++) { \
        const W av = (W)MM_IN_##CLS(a[i * p->ars + k * p->acs]); \
        const S *bk = b + k * p->brs; \
        if (p->bcs == 1) { for (int64_t j = 0; j < p->N; j++) row[j] = MADD(row[j], av, (W)MM_IN_##CLS(bk[j])); } \
        else { for (int64_t j = 0; j < p->N; j++) row[j] = MADD(row[j], av, (W)MM_IN_##CLS(bk[j * p->bcs])); } \
      } \
      for (int64_t j = 0; j < p->N; j++) c[i * p->N + j] = (S)MM_OUT_##CLS(row[j]); \
    } \
  }
#define K_NAIVE(E, n_, S, C, CLS, B, LD, ST, ...) K_NAIVE_GEN(naive_##E, E, S, CLS, , MM_MADD)
/* float rows: f32 and f64 only (bf16/f16 arrive as f32) */
#define NAIVE_ONLY_BF16(M, ...)
#define NAIVE_ONLY_F16(M, ...)
#define NAIVE_ONLY_F32(M, ...) M(__VA_ARGS__)
#define NAIVE_ONLY_F64(M, ...) M(__VA_ARGS__)
#define K_NAIVE_FLT(E, ...) NAIVE_ONLY_##E(K_NAIVE, E, __VA_ARGS__)
TC_FOR_INTB(K_NAIVE, _)
TC_FOR_FLT(K_NAIVE_FLT, _)

typedef void (*naive_fn)(const mm_prob *, void *);
#define NV_ENTRY(E, ...) [TC_DT_##E] = naive_##E,
#define NV_ENTRY_FLT(E, ...) NAIVE_ONLY_##E(NV_ENTRY, E, __VA_ARGS__)
static const naive_fn naive_table[TC_DT_COUNT] = {TC_FOR_INTB(NV_ENTRY, _) TC_FOR_FLT(NV_ENTRY_FLT, _)};

#if defined(__x86_64__) && defined(__GNUC__)
#define MM_X86 1
#include <cpuid.h>
/* The float plain kernel with fused multiply-adds, for CPUs with FMA: the
 * same operations as gemm.c's FMA micro-kernels. */
#define K_NAIVE_FMA(E, n_, S, C, CLS, ...) \
  K_NAIVE_GEN(naive_fma_##E, E, S, CLS, __attribute__((target("avx2,fma"))), MM_FMA_##E)
#define K_NAIVE_FMA_FLT(E, ...) NAIVE_ONLY_##E(K_NAIVE_FMA, E, __VA_ARGS__)
TC_FOR_FLT(K_NAIVE_FMA_FLT, _)
#define NVF_ENTRY(E, ...) [TC_DT_##E] = naive_fma_##E,
#define NVF_ENTRY_FLT(E, ...) NAIVE_ONLY_##E(NVF_ENTRY, E, __VA_ARGS__)
static const naive_fn naive_fma_table[TC_DT_COUNT] = {TC_FOR_FLT(NVF_ENTRY_FLT, _)};
#else
#define MM_X86 0
static const naive_fn naive_fma_table[TC_DT_COUNT];
#endif

/* ---- the blocked integer kernel ----
 * C is computed in tiles of MR x NR by a micro-kernel over packed slivers
 * of A (MR rows, k-major) and B (NR columns, k-major); blocks of KC x NC of
 * B and MC x KC of A are packed once and reused from cache. Words are
 * uint32_t (bool, i8, i16, i32) or uint64_t (i64). */
typedef uint32_t bw_BOOL;
typedef uint32_t bw_I8;
typedef uint32_t bw_I16;
typedef uint32_t bw_I32;
typedef uint64_t bw_I64;
typedef uint32_t bw_U8;
typedef uint32_t bw_U16;
typedef uint32_t bw_U32;
typedef uint64_t bw_U64;

typedef void (*ukr_fn)(int64_t kc, const void *a, const void *b, void *tile);
typedef struct {
  const char *isa;
  int mr, nr;
  int64_t kc, mc, nc;
  ukr_fn ukr;
} ukr_desc;

#define TGT_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#define TGT_AVX2 __attribute__((target("avx2")))
#define TGT_BASE

/* tile[i][j] = sum over k of a[k][i] * b[k][j], in wrapping W arithmetic. */
#define UKR_DEF(NAME, W, VB, MR, NR, TGT) \
  TGT static void NAME(int64_t kc, const void *a_, const void *b_, void *tile) { \
    typedef W V __attribute__((vector_size(VB))); \
    enum { L = VB / (int)sizeof(W), NV = NR / L }; \
    const W *a = a_; \
    const V *b = b_; \
    V acc[MR][NV]; \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = (V){0}; \
    for (int64_t k = 0; k < kc; k++) { \
      V bv[NV]; \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = b[k * NV + v]; \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) { \
        const W s = a[k * MR + i]; \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] += bv[v] * s; \
      } \
    } \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) memcpy((W *)tile + i * NR + v * L, &acc[i][v], VB); \
  }

#if MM_X86
UKR_DEF(ukr64_avx512, uint64_t, 64, 8, 16, TGT_AVX512)
UKR_DEF(ukr32_avx512, uint32_t, 64, 8, 32, TGT_AVX512)
UKR_DEF(ukr64_avx2, uint64_t, 32, 4, 8, TGT_AVX2)
UKR_DEF(ukr32_avx2, uint32_t, 32, 6, 16, TGT_AVX2)
#endif
UKR_DEF(ukr64_base, uint64_t, 16, 4, 4, TGT_BASE)
UKR_DEF(ukr32_base, uint32_t, 16, 4, 8, TGT_BASE)

/* [isa][word: 0 = 32 bits, 1 = 64 bits] */
enum { ISA_BASE = CPU_ISA_BASE, ISA_AVX2 = CPU_ISA_AVX2, ISA_AVX512 = CPU_ISA_AVX512, ISA_COUNT = CPU_ISA_COUNT };
static const ukr_desc ukr_table[ISA_COUNT][2] = {
  [ISA_BASE] = {{"portable", 4, 8, 256, 96, 4096, ukr32_base}, {"portable", 4, 4, 256, 96, 4096, ukr64_base}},
#if MM_X86
  [ISA_AVX2] = {{"avx2", 6, 16, 256, 96, 4096, ukr32_avx2}, {"avx2", 4, 8, 256, 96, 4096, ukr64_avx2}},
  [ISA_AVX512] = {{"avx512", 8, 32, 256, 128, 4096, ukr32_avx512}, {"avx512", 8, 16, 256, 128, 4096, ukr64_avx512}},
#endif
};

static int isa_forced = -1;
static bool has_fma;

/* The CPU's vector units, asked lazily with cpuid (libgcc's
 * __builtin_cpu_supports would add a constructor to every start-up):
 * the instructions, and the OS saving their registers (xgetbv). */
static int isa_detect(void) {
#if MM_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) return ISA_BASE;
  has_fma = (c & bit_FMA) != 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  if ((lo & 0x6) != 0x6 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return ISA_BASE;
  unsigned need512 = bit_AVX512F | bit_AVX512DQ | bit_AVX512BW | bit_AVX512VL;
  if ((b & need512) == need512 && (lo & 0xe6) == 0xe6) return ISA_AVX512;
  if (b & bit_AVX2) return ISA_AVX2;
#endif
  return ISA_BASE;
}

static int isa_best(void) {
  static int detected = -1;
  if (detected < 0) detected = isa_detect();
  return detected;
}

static int isa_now(void) {
  int best = isa_best();
  return isa_forced >= 0 && isa_forced <= best ? isa_forced : best;
}

/* A negative level only reads (the pool's workers ask, from the transposing
 * tiles: it once cleared and restored the forced level around the read,
 * and two threads doing so could lose a level a test had set). */
int cpu_matmul_isa(int level) {
  if (level >= 0) isa_forced = level < isa_best() ? level : isa_best();
  return isa_now();
}

const char *cpu_matmul_isa_name(void) { return ukr_table[isa_now()][0].isa; }

bool cpu_has_fma(void) {
  (void)isa_now();
  return has_fma;
}

/* Float kernels above the portable one fuse multiply-adds: they need FMA
 * (every CPU with AVX-512 or AVX2 that tcalc knows of has it). */
int cpu_float_isa(void) {
  int l = isa_now();
  return l > ISA_BASE && !has_fma ? ISA_BASE : l;
}

/* Packing, converting each element to the kernel word: strips of w
 * elements (rows of A, columns of B) at each of kc steps along K, element e
 * of a strip at step k being src[e * es + k * ks]; past the n elements,
 * zeros. */
#define K_PACK(E, n_, S, C, CLS, B, LD, ST, ...) \
  static void pack_##E(const S *src, int64_t es, int64_t ks, int64_t n, int64_t kc, int w, void *dst_) { \
    typedef bw_##E W; W *dst = dst_; \
    for (int64_t s = 0; s < n; s += w) { \
      int64_t len = n - s < w ? n - s : w; \
      for (int64_t k = 0; k < kc; k++) { \
        const S *v = src + s * es + k * ks; \
        int64_t e = 0; \
        if (es == 1) { for (; e < len; e++) dst[e] = (W)MM_IN_##CLS(v[e]); } \
        else { for (; e < len; e++) dst[e] = (W)MM_IN_##CLS(v[e * es]); } \
        for (; e < w; e++) dst[e] = 0; \
        dst += w; \
      } \
    } \
  } \
  static void pack_a_##E(const mm_prob *p, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int mr, void *dst) { \
    pack_##E(CPTR(S, p->a) + i0 * p->ars + k0 * p->acs, p->ars, p->acs, mc, kc, mr, dst); \
  } \
  static void pack_b_##E(const mm_prob *p, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr, void *dst) { \
    pack_##E(CPTR(S, p->b) + k0 * p->brs + j0 * p->bcs, p->bcs, p->brs, nc, kc, nr, dst); \
  } \
  /* C[i0.., j0..] = (first ? 0 : C) + tile, truncated to S (bool: or of nonzero) */ \
  static void store_##E(const void *tile_, int nr, int64_t rows, int64_t cols, char *c_, int64_t ldc, bool first) { \
    typedef bw_##E W; const W *tile = tile_; \
    S *c = PTR(S, c_); \
    for (int64_t i = 0; i < rows; i++) \
      for (int64_t j = 0; j < cols; j++) { \
        W v = tile[i * nr + j]; \
        STORE_##CLS(c[i * ldc + j], v, W, S); \
      } \
  }
#define STORE_INT(dst, v, W, S) dst = (S)(first ? (v) : (W)((W)(dst) + (v)))
#define STORE_UINT STORE_INT
#define STORE_BOOL(dst, v, W, S) dst = (S)((first ? 0 : (dst)) | ((v) != 0))
TC_FOR_INTB(K_PACK, _)

typedef void (*pack_a_fn)(const mm_prob *, int64_t, int64_t, int64_t, int64_t, int, void *);
typedef void (*pack_b_fn)(const mm_prob *, int64_t, int64_t, int64_t, int64_t, int, void *);
typedef void (*store_fn)(const void *, int, int64_t, int64_t, char *, int64_t, bool);
typedef struct { pack_a_fn pa; pack_b_fn pb; store_fn st; int wide; } int_impl;
#define II_ENTRY(E, ...) [TC_DT_##E] = {pack_a_##E, pack_b_##E, store_##E, sizeof(bw_##E) == 8},
static const int_impl int_table[TC_DT_COUNT] = {TC_FOR_INTB(II_ENTRY, _)};

typedef struct {
  const mm_prob *p;
  const int_impl *im;
  const ukr_desc *u;
  size_t wsize, osize;
  int64_t jc, nc, pc, kc, mc;
  const char *bpack;
  char *apack;           /* one MC x KC block per worker */
  size_t apack_each;
} blk_job;

static int blk_task(void *ctx, int task, int worker) {
  const blk_job *j = ctx;
  const mm_prob *p = j->p;
  const ukr_desc *u = j->u;
  if (tc_interrupt_flag) return -1;
  int64_t ic = (int64_t)task * j->mc, mc = p->M - ic < j->mc ? p->M - ic : j->mc;
  char *ap = j->apack + j->apack_each * (size_t)worker;
  j->im->pa(p, ic, mc, j->pc, j->kc, u->mr, ap);
  _Alignas(64) unsigned char tile[8 * 32 * 8];
  for (int64_t jr = 0; jr < j->nc; jr += u->nr) {
    int64_t cols = j->nc - jr < u->nr ? j->nc - jr : u->nr;
    const char *bs = j->bpack + (size_t)(jr * j->kc) * j->wsize;
    for (int64_t ir = 0; ir < mc; ir += u->mr) {
      int64_t rows = mc - ir < u->mr ? mc - ir : u->mr;
      u->ukr(j->kc, ap + (size_t)(ir * j->kc) * j->wsize, bs, tile);
      char *c = p->c + (size_t)((ic + ir) * p->N + j->jc + jr) * j->osize;
      j->im->st(tile, u->nr, rows, cols, c, p->N, j->pc == 0);
    }
  }
  tc_progress_add(mc * j->nc * j->kc);
  return 0;
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* One product through the blocked kernel; -1 if interrupted, -2 out of memory. */
static int blocked_int(const mm_prob *p, tc_dtype dt) {
  const int_impl *im = &int_table[dt];
  const ukr_desc *u = &ukr_table[isa_now()][im->wide];
  size_t ws = im->wide ? 8 : 4;
  int64_t kc = p->K < u->kc ? p->K : u->kc;
  int64_t nc = round_up(p->N < u->nc ? p->N : u->nc, u->nr);
  /* enough row blocks to keep every thread busy */
  int threads = cpu_threads();
  int64_t mc = u->mc;
  if (threads > 1 && (p->M + mc - 1) / mc < 2 * threads) mc = round_up((p->M + 2 * threads - 1) / (2 * threads), u->mr);
  if (mc > round_up(p->M, u->mr)) mc = round_up(p->M, u->mr);
  size_t a_each = ((size_t)(mc * kc) * ws + 63) & ~(size_t)63;
  char *bpack = aligned_alloc(64, ((size_t)(nc * kc) * ws + 63) & ~(size_t)63);
  char *apack = aligned_alloc(64, a_each * (size_t)threads);
  if (!bpack || !apack) { free(bpack); free(apack); return -2; }
  blk_job j = {p, im, u, ws, tc_dtype_size(dt), 0, 0, 0, kc, mc, bpack, apack, a_each};
  int rc = 0;
  int ntasks = (int)((p->M + mc - 1) / mc);
  for (int64_t jc = 0; jc < p->N && rc == 0; jc += nc) {
    j.jc = jc;
    j.nc = p->N - jc < nc ? p->N - jc : nc;
    for (int64_t pc = 0; pc < p->K && rc == 0; pc += kc) {
      j.pc = pc;
      j.kc = p->K - pc < kc ? p->K - pc : kc;
      im->pb(p, pc, j.kc, jc, j.nc, u->nr, bpack);
      rc = cpu_parallel(ntasks, blk_task, &j);
    }
  }
  free(bpack);
  free(apack);
  return rc < 0 ? -1 : 0;
}

/* ---- CBLAS, loaded on first use ---- */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                         double *, int);
static struct {
  int state;            /* 0 not tried, 1 loaded, -1 none */
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  void (*set_threads)(int);
  int threads;
  char name[64];
} blas;

static void *sym(void *h, const char *name) {
  return dlsym(h, name);
}

/* Only when $TCALC_BLAS names a library: by default f32/f64 products run
 * tcalc's own kernel (gemm.c), which is as fast here and gives the same
 * bits for any thread count. */
static bool blas_load(void) {
  if (blas.state) return blas.state > 0;
  blas.state = -1;
  const char *env = getenv("TCALC_BLAS");
  if (!env || !*env || !strcmp(env, "none")) return false;
  void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  void *s = sym(h, "cblas_sgemm"), *d = sym(h, "cblas_dgemm"), *t = sym(h, "openblas_set_num_threads");
  if (!s || !d) { dlclose(h); return false; }
  memcpy(&blas.sgemm, &s, sizeof s);
  memcpy(&blas.dgemm, &d, sizeof d);
  if (t) memcpy(&blas.set_threads, &t, sizeof t);
  snprintf(blas.name, sizeof blas.name, "%s", env);
  blas.state = 1;
  return true;
}

const char *cpu_matmul_blas(void) { return blas_load() ? blas.name : NULL; }

/* A CBLAS operand: a matrix with unit stride along one of its dims. */
static bool blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int *ld) {
  if (rows > INT_MAX || cols > INT_MAX) return false;
  if (cs == 1 && (rows == 1 || (rs >= cols && rs <= INT_MAX))) {
    *trans = CBLAS_NO_TRANS;
    *ld = rows == 1 ? (int)(cols > 1 ? cols : 1) : (int)rs;
    return true;
  }
  if (rs == 1 && (cols == 1 || (cs >= rows && cs <= INT_MAX))) {
    *trans = CBLAS_TRANS;
    *ld = cols == 1 ? (int)(rows > 1 ? rows : 1) : (int)cs;
    return true;
  }
  return false;
}

/* 1 if done through CBLAS, 0 if the caller must use its own kernel. */
static int blas_gemm(const mm_prob *p, tc_dtype dt) {
  int ta, tb, lda, ldb;
  if (p->N > INT_MAX || !blas_operand(p->M, p->K, p->ars, p->acs, &ta, &lda) ||
      !blas_operand(p->K, p->N, p->brs, p->bcs, &tb, &ldb) || !blas_load())
    return 0;
  int t = cpu_threads();
  if (blas.set_threads && blas.threads != t) { blas.set_threads(t); blas.threads = t; }
  int m = (int)p->M, n = (int)p->N, k = (int)p->K;
  /* A CBLAS call cannot be interrupted: a large product runs as panels of
   * rows of about 2^28 multiply-adds (at least 256 rows, which keeps the
   * library efficient; tens of milliseconds each), with the interrupt
   * flag checked between them (the caller reports it). */
  int64_t nk = (int64_t)n * k;
  int64_t rows = nk > 0 ? ((int64_t)1 << 28) / nk : m;
  int mb = rows >= m ? m : rows < 256 ? 256 : (int)rows;
  size_t es = tc_dtype_size(dt);
  for (int i = 0; i < m && !tc_interrupt_flag; i += mb) {
    int mi = m - i < mb ? m - i : mb;
    const char *a = p->a + (size_t)i * (ta == CBLAS_NO_TRANS ? (size_t)lda : 1) * es;
    char *c = p->c + (size_t)i * (size_t)n * es;
    if (dt == TC_DT_F32)
      blas.sgemm(CBLAS_ROW_MAJOR, ta, tb, mi, n, k, 1.0f, CPTR(float, a), lda, CPTR(float, p->b), ldb, 0.0f,
                 PTR(float, c), n);
    else
      blas.dgemm(CBLAS_ROW_MAJOR, ta, tb, mi, n, k, 1.0, CPTR(double, a), lda, CPTR(double, p->b), ldb, 0.0,
                 PTR(double, c), n);
    tc_progress_add((int64_t)mi * nk);
  }
  return 1;
}

/* A CBLAS product of operands copied to contiguous row-major first. */
#define K_COPYM(S) \
  static void copym_##S(const char *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, char *dst) { \
    const S *x = CPTR(S, src); S *y = PTR(S, dst); \
    for (int64_t i = 0; i < rows; i++) for (int64_t j = 0; j < cols; j++) y[i * cols + j] = x[i * rs + j * cs]; \
  }
K_COPYM(float)
K_COPYM(double)

static int gemm_copied(const mm_prob *p, tc_dtype dt) {
  size_t es = tc_dtype_size(dt);
  char *a = malloc((size_t)(p->M * p->K) * es + 1), *b = malloc((size_t)(p->K * p->N) * es + 1);
  if (!a || !b) { free(a); free(b); return -2; }
  void (*cp)(const char *, int64_t, int64_t, int64_t, int64_t, char *) = dt == TC_DT_F32 ? copym_float : copym_double;
  cp(p->a, p->M, p->K, p->ars, p->acs, a);
  cp(p->b, p->K, p->N, p->brs, p->bcs, b);
  mm_prob q = *p;
  q.a = a; q.b = b;
  q.ars = p->K; q.acs = 1; q.brs = p->N; q.bcs = 1;
  blas_gemm(&q, dt);   /* the caller saw that the dims fit CBLAS's int */
  free(a);
  free(b);
  return 0;
}

/* ---- the call: a batch of products ---- */
/* Products up to this many multiply-adds use the plain kernel. */
#define SMALL_MACS ((int64_t)1 << 15)

bool cpu_supports_matmul(const tc_call *c) {
  return c->dtype != TC_DT_BF16 && c->dtype != TC_DT_F16;
}

void cpu_matmul_prob(const tc_call *call, int64_t bi, mm_prob *p) {
  const tc_tensor *A = call->in[0], *B = call->in[1], *C = call->out;
  int nb = C->ndim - 2;
  int64_t offa = 0, offb = 0, rem = bi;
  for (int d = nb - 1; d >= 0; d--) {
    int64_t i = rem % C->shape[d];
    rem /= C->shape[d];
    offa += i * A->strides[d];
    offb += i * B->strides[d];
  }
  size_t es = tc_dtype_size(call->dtype);
  TC_MM_GEOMETRY(p, A, B, C, nb);
  p->a = tc_tensor_data(A) + offa * (int64_t)es;
  p->b = tc_tensor_data(B) + offb * (int64_t)es;
  p->c = tc_tensor_data(C) + bi * p->M * p->N * (int64_t)es;
}

/* The plain kernel across threads: each task is a run of whole products
 * (when they are small) or a block of rows of one product. */
#define PLAIN_TASK_MACS ((int64_t)1 << 16)
typedef struct {
  const tc_call *call;
  naive_fn fn;
  int64_t nbatch, per_task, nrb, rows_per;   /* per_task products, or nrb row blocks per product */
  size_t esize, scratch_each;
  char *scratch;
} plain_job;

static int plain_task(void *ctx, int task, int worker) {
  const plain_job *j = ctx;
  char *scratch = j->scratch + j->scratch_each * (size_t)worker;
  mm_prob p;
  int64_t mark = tc_progress_mark();
  if (j->nrb == 0) {
    int64_t lo = (int64_t)task * j->per_task, hi = lo + j->per_task < j->nbatch ? lo + j->per_task : j->nbatch;
    for (int64_t bi = lo; bi < hi && !tc_interrupt_flag; bi++) {
      cpu_matmul_prob(j->call, bi, &p);
      j->fn(&p, scratch);
      tc_progress_upto(mark, p.M * p.N * p.K);
      mark = tc_progress_mark();
    }
  } else {
    int64_t bi = task / j->nrb, r0 = task % j->nrb * j->rows_per;
    cpu_matmul_prob(j->call, bi, &p);
    int64_t r1 = r0 + j->rows_per < p.M ? r0 + j->rows_per : p.M;
    p.a += r0 * p.ars * (int64_t)j->esize;
    p.c += r0 * p.N * (int64_t)j->esize;
    p.M = r1 - r0;
    j->fn(&p, scratch);
    tc_progress_upto(mark, p.M * p.N * p.K);
  }
  return tc_interrupt_flag ? -1 : 0;
}

static int run_plain(const tc_call *c, int64_t nbatch, const mm_prob *p0, tc_err *err) {
  naive_fn fn = naive_table[c->dtype];
  if (tc_dtype_class(c->dtype) == TC_CLASS_FLT && cpu_float_isa() > CPU_ISA_BASE) fn = naive_fma_table[c->dtype];
  plain_job j = {c, fn, nbatch, 1, 0, 0, tc_dtype_size(c->dtype), 0, NULL};
  int64_t row_macs = p0->N * p0->K > 0 ? p0->N * p0->K : 1, macs;
  if (__builtin_mul_overflow(row_macs, p0->M, &macs) || macs >= 2 * PLAIN_TASK_MACS) {
    j.rows_per = PLAIN_TASK_MACS / row_macs > 1 ? PLAIN_TASK_MACS / row_macs : 1;
    j.nrb = (p0->M + j.rows_per - 1) / j.rows_per;
  } else {
    j.per_task = PLAIN_TASK_MACS / (macs > 0 ? macs : 1);
    if (j.per_task < 1) j.per_task = 1;
  }
  int64_t ntasks = j.nrb ? nbatch * j.nrb : (nbatch + j.per_task - 1) / j.per_task;
  if (ntasks > INT_MAX) {
    if (j.nrb) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "too many products");
    j.per_task = (nbatch + INT_MAX - 1) / INT_MAX;
    ntasks = (nbatch + j.per_task - 1) / j.per_task;
  }
  int threads = cpu_threads();
  j.scratch_each = ((size_t)p0->N * sizeof(uint64_t) + 63) & ~(size_t)63;
  j.scratch = malloc(j.scratch_each * (size_t)threads);
  if (!j.scratch) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "allocation failed");
  int rc = cpu_parallel((int)ntasks, plain_task, &j);
  free(j.scratch);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

static int matmul_run(tc_call *c, tc_err *err) {
  tc_dtype dt = c->dtype;
  if (!cpu_supports_matmul(c))
    return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)dt, "not supported for %s on cpu", tc_dtype_name(dt));
  int nb = c->out->ndim - 2;
  int64_t nbatch = 1;
  for (int d = 0; d < nb; d++) nbatch *= c->out->shape[d];
  mm_prob p0;
  cpu_matmul_prob(c, 0, &p0);
  if (p0.K == 0) {
    memset(tc_tensor_data(c->out), 0, (size_t)tc_numel(c->out) * tc_dtype_size(dt));
    return 0;
  }
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT;
  if (flt && !cpu_matmul_blas() && cpu_dot_lanes_applies(c, &p0)) return cpu_dot_lanes(c, nbatch, err);
  int64_t macs = p0.M * p0.N;
  bool small = __builtin_mul_overflow(macs, p0.K, &macs) ? false : macs <= SMALL_MACS;
  /* integer matrix-vector products are memory-bound: the plain kernel streams them */
  if (small || (!flt && (p0.N < 4 || p0.M < 4))) return run_plain(c, nbatch, &p0, err);
  if (flt && (p0.M > INT_MAX || p0.N > INT_MAX || p0.K > INT_MAX || !blas_load())) return cpu_gemm(c, nbatch, err);
  for (int64_t bi = 0; bi < nbatch; bi++) {
    mm_prob p;
    cpu_matmul_prob(c, bi, &p);
    if (flt) {
      if (!blas_gemm(&p, dt)) {   /* strides CBLAS cannot take: copy to contiguous */
        int rc = gemm_copied(&p, dt);
        if (rc == -2) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)dt, "allocation failed");
      }
    } else {
      int rc = blocked_int(&p, dt);
      if (rc == -2) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)dt, "allocation failed");
      if (rc < 0) return cpu_interrupted(err);
    }
    if (tc_interrupt_flag) return cpu_interrupted(err);
  }
  return 0;
}

/* A matrix product is a progress job (src/progress.c) of its multiply-adds;
 * one of fewer than 2^26 opens a silent one, which is never shown and keeps
 * its reports from counting in a job around it. */
int cpu_run_matmul(tc_call *c, tc_err *err) {
  mm_prob p0;
  cpu_matmul_prob(c, 0, &p0);
  int64_t macs = p0.M;
  for (int d = 0; d < c->out->ndim - 2; d++)
    if (__builtin_mul_overflow(macs, c->out->shape[d], &macs)) macs = INT64_MAX;
  if (__builtin_mul_overflow(macs, p0.N, &macs) || __builtin_mul_overflow(macs, p0.K, &macs)) macs = INT64_MAX;
  tc_progress_begin(macs >= (int64_t)1 << 26 ? tc_op_name(c->op) : NULL, macs, TC_PROGRESS_MADDS);
  int rc = matmul_run(c, err);
  tc_progress_end();
  return rc;
}
