/* CUDA data movement: bit copies, gather, scatter, nonzero, triangles,
 * ranges and random numbers, with the same shared expressions as the CPU
 * (backend/index.h: index modes and scatter combines; src/philox.h: the
 * random numbers), so every engine gives the same bits. Copies, gathers
 * and triangles only move bytes, so they are stamped per element size. */
#include "kern.cuh"
#include "../index.h"
#include "../../src/philox.h"

template <int SZ> struct tcu_word;
template <> struct tcu_word<1> { typedef uint8_t T; };
template <> struct tcu_word<2> { typedef uint16_t T; };
template <> struct tcu_word<4> { typedef uint32_t T; };
template <> struct tcu_word<8> { typedef uint64_t T; };

static int size_slot(size_t esize) {
  switch (esize) {
  case 1: return 0;
  case 2: return 1;
  case 4: return 2;
  case 8: return 3;
  default: return -1;
  }
}

/* ---- copy: out (any view) = in (same dtype), bit for bit ---- */
template <int SZ> struct k_copy {
  typedef typename tcu_word<SZ>::T W;
  static TCU_HD void f(char *o, const char *x) { *TCU_PTR(W, o) = *TCU_CPTR(W, x); }
};

/* ---- gather: out[p] = x[p + k * ast]; base[3] is the fill value or NULL ---- */
template <int SZ> struct k_gather {
  typedef typename tcu_word<SZ>::T W;
  static TCU_HD void g(const tcu_plan &p, int64_t, const int64_t *off) {
    int64_t k = *TCU_CPTR(int64_t, p.base[2] + off[2]);
    W v = 0;
    if (tc_index_norm(&k, p.arg[1], (int)p.arg[2])) v = *TCU_CPTR(W, p.base[1] + off[1] + k * p.arg[0]);
    else if (p.base[3]) v = *TCU_CPTR(W, p.base[3]);
    *TCU_PTR(W, p.base[0] + off[0]) = v;
  }
};

/* ---- tril/triu over the last two dims (rows, cols) of the output ---- */
template <int SZ> struct k_tri {
  typedef typename tcu_word<SZ>::T W;
  static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) {
    int64_t cols = p.arg[1], c = i % cols, r = (i / cols) % p.arg[0];
    bool keep = p.arg[3] ? c - r <= p.arg[2] : c - r >= p.arg[2];
    *TCU_PTR(W, p.base[0] + off[0]) = keep ? *TCU_CPTR(W, p.base[1] + off[1]) : (W)0;
  }
};

/* ---- ranges into a contiguous out ---- */
#define K_RANGE_INT(E, n_, S, ...) \
  struct k_range_##E { \
    static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) { \
      *TCU_PTR(S, p.base[0] + off[0]) = (S)(int64_t)((uint64_t)p.arg[0] + (uint64_t)i * (uint64_t)p.arg[1]); \
    } \
  };
/* start + i * step, each operation rounded on its own as on the CPU (no
 * fused multiply-add); linspace's last element is stop itself. */
#define K_RANGE_FLT(E, n_, S, ...) \
  struct k_range_##E { \
    static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) { \
      *TCU_PTR(S, p.base[0] + off[0]) = tc_fromd_##E(TC_DADD(p.farg[0], TC_DMUL((double)i, p.farg[1]))); \
    } \
  }; \
  struct k_linspace_##E { \
    static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) { \
      double v = i == p.n - 1 ? p.farg[2] : TC_DADD(p.farg[0], TC_DMUL((double)i, p.farg[1])); \
      *TCU_PTR(S, p.base[0] + off[0]) = tc_fromd_##E(v); \
    } \
  };
TC_FOR_INT(K_RANGE_INT, _)
TC_FOR_FLT(K_RANGE_FLT, _)

/* ---- random numbers: element i from (seed, i) alone ---- */
struct k_rand_uniform {
  static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) {
    *TCU_PTR(double, p.base[0] + off[0]) = tc_rand_uniform((uint64_t)p.arg[0], (uint64_t)i);
  }
};
struct k_rand_normal {
  static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) {
    *TCU_PTR(double, p.base[0] + off[0]) = tc_rand_normal((uint64_t)p.arg[0], (uint64_t)i);
  }
};
struct k_rand_int {
  static TCU_HD void g(const tcu_plan &p, int64_t i, const int64_t *off) {
    *TCU_PTR(int64_t, p.base[0] + off[0]) = tc_rand_int((uint64_t)p.arg[0], (uint64_t)i, p.arg[1], (uint64_t)p.arg[2]);
  }
};

/* ---- tables ---- */
static tcu_entry copy_tab[4], gather_tab[4], tri_tab[4], range_tab[TC_DT_COUNT], linspace_tab[TC_DT_COUNT], rand_tab[3];
static bool ready;

static void fill(void) {
  copy_tab[0] = tcu_make_entry<k_copy<1>, 2>();
  copy_tab[1] = tcu_make_entry<k_copy<2>, 2>();
  copy_tab[2] = tcu_make_entry<k_copy<4>, 2>();
  copy_tab[3] = tcu_make_entry<k_copy<8>, 2>();
  gather_tab[0] = tcu_make_ix_entry<k_gather<1>, 3>();
  gather_tab[1] = tcu_make_ix_entry<k_gather<2>, 3>();
  gather_tab[2] = tcu_make_ix_entry<k_gather<4>, 3>();
  gather_tab[3] = tcu_make_ix_entry<k_gather<8>, 3>();
  tri_tab[0] = tcu_make_ix_entry<k_tri<1>, 2>();
  tri_tab[1] = tcu_make_ix_entry<k_tri<2>, 2>();
  tri_tab[2] = tcu_make_ix_entry<k_tri<4>, 2>();
  tri_tab[3] = tcu_make_ix_entry<k_tri<8>, 2>();
#define RANGE_ENTRY(E, ...) range_tab[TC_DT_##E] = tcu_make_ix_entry<k_range_##E, 1>();
#define LINSPACE_ENTRY(E, ...) linspace_tab[TC_DT_##E] = tcu_make_ix_entry<k_linspace_##E, 1>();
  TC_FOR_NUM(RANGE_ENTRY, _)
  TC_FOR_FLT(LINSPACE_ENTRY, _)
  rand_tab[TC_DIST_UNIFORM] = tcu_make_ix_entry<k_rand_uniform, 1>();
  rand_tab[TC_DIST_NORMAL] = tcu_make_ix_entry<k_rand_normal, 1>();
  rand_tab[TC_DIST_INT] = tcu_make_ix_entry<k_rand_int, 1>();
}

static const tcu_entry *get(tcu_entry *tab, int i, int n) {
  if (!ready) { fill(); ready = true; }
  return i >= 0 && i < n && tab[i].k1 ? &tab[i] : NULL;
}

extern "C" const tcu_entry *tcu_copy_entry(size_t esize) { return get(copy_tab, size_slot(esize), 4); }
extern "C" const tcu_entry *tcu_gather_entry(size_t esize) { return get(gather_tab, size_slot(esize), 4); }
extern "C" const tcu_entry *tcu_tri_entry(size_t esize) { return get(tri_tab, size_slot(esize), 4); }
extern "C" const tcu_entry *tcu_range_entry(int dt, bool endpoint) {
  return get(endpoint ? linspace_tab : range_tab, dt, TC_DT_COUNT);
}
extern "C" const tcu_entry *tcu_random_entry(int dist) { return get(rand_tab, dist, 3); }

/* ---- scatter ---- */
/* One thread per position of the parallel dims walks the index dims in
 * row-major order: updates that land on one element combine in the order
 * the CPU applies them (the contract of TC_CALL_SCATTER). */
template <class F>
TCU_HD void tcu_scatter_column(const tcu_splan &p, int64_t t) {
  int64_t po[3] = {0, 0, 0};
  for (int d = p.pdim - 1; d >= 0; d--) {
    int64_t q = t / p.pshape[d], c = t - q * p.pshape[d];
    t = q;
    for (int k = 0; k < 3; k++) po[k] += c * p.pstride[k][d];
  }
  for (int64_t j = 0; j < p.nseq; j++) {
    int64_t so[3] = {po[0], po[1], po[2]}, r = j;
    for (int d = p.sdim - 1; d >= 0; d--) {
      int64_t q = r / p.sshape[d], c = r - q * p.sshape[d];
      r = q;
      for (int k = 0; k < 3; k++) so[k] += c * p.sstride[k][d];
    }
    int64_t k = *TCU_CPTR(int64_t, p.base[1] + so[1]);
    if (!tc_index_norm(&k, p.len, p.mode)) continue;
    F::f(p.base[0] + so[0] + k * p.ast, p.base[2] + so[2]);
  }
}

template <class F>
__global__ void __launch_bounds__(TCU_THREADS) tcu_scatter_kernel(const tcu_splan p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t t = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; t < p.npar; t += step) tcu_scatter_column<F>(p, t);
}

template <class F>
static void tcu_scatter_host(const tcu_splan *p) {
  for (int64_t t = 0; t < p->npar; t++) tcu_scatter_column<F>(*p, t);
}

template <class F>
static tcu_sentry tcu_make_sentry() {
  tcu_sentry e;
  e.k = (const void *)tcu_scatter_kernel<F>;
  e.host = tcu_scatter_host<F>;
  return e;
}

#define K_SC_SET(E, n_, S, ...) \
  struct ksc_SET_##E { static TCU_HD void f(char *d, const char *u) { *TCU_PTR(S, d) = *TCU_CPTR(S, u); } };
#define K_SC_RED(E, n_, S, C, CLS, B, LD, ST, RED, EXPR) \
  struct ksc_##RED##_##E { \
    static TCU_HD void f(char *d, const char *u) { \
      typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
      T a = LD(*TCU_CPTR(S, d)), b = LD(*TCU_CPTR(S, u)); \
      *TCU_PTR(S, d) = ST(EXPR); \
    } \
  };
TC_FOR_ALL(K_SC_SET, _)
#define SC_STAMP(RED, CLS, EXPR, _) TC_FOR_##CLS(K_SC_RED, RED, EXPR)
TC_SCATTER_COMBINES(SC_STAMP, _)

static tcu_sentry sc_tab[TC_SCATTER_MIN + 1][TC_DT_COUNT];
static bool sc_ready;

static void sc_fill(void) {
#define SC_SET_ENTRY(E, ...) sc_tab[TC_SCATTER_SET][TC_DT_##E] = tcu_make_sentry<ksc_SET_##E>();
#define SC_RED_ENTRY(E, n_, S, C, CLS, B, LD, ST, RED) sc_tab[TC_SCATTER_##RED][TC_DT_##E] = tcu_make_sentry<ksc_##RED##_##E>();
#define SC_ENTRIES(RED, CLS, EXPR, _) TC_FOR_##CLS(SC_RED_ENTRY, RED)
  TC_FOR_ALL(SC_SET_ENTRY, _)
  TC_SCATTER_COMBINES(SC_ENTRIES, _)
}

extern "C" const tcu_sentry *tcu_scatter_entry(int red, int dt) {
  if (!sc_ready) { sc_fill(); sc_ready = true; }
  if (red < 0 || red > TC_SCATTER_MIN || dt < 0 || dt >= TC_DT_COUNT) return NULL;
  return sc_tab[red][dt].k ? &sc_tab[red][dt] : NULL;
}

extern "C" int tcu_scatter(const tcu_sentry *e, const tcu_splan *p) {
  if (tcu_emulating()) { e->host(p); return 0; }
  void *args[1] = {(void *)p};
  int st = tcu_launch(e->k, tcu_grid_threads(p->npar), args);
  return st ? st : tcu_sync();
}

/* ---- nonzero: count per chunk, prefix on the host, then write ---- */
#define NZ_PER_THREAD 16
#define NZ_CHUNK ((int64_t)TCU_THREADS * NZ_PER_THREAD)

template <bool ND>
TCU_HD bool tcu_mask_at(const tcu_plan &p, int64_t i) {
  int64_t off[1];
  tcu_offsets<1, ND>(p, i, off);
  return *TCU_CPTR(uint8_t, p.base[0] + off[0]) != 0;
}

/* Thread t of chunk b: its elements and how many are true. */
template <bool ND>
TCU_HD int64_t tcu_nz_count(const tcu_plan &p, int64_t b, int t) {
  int64_t lo = b * NZ_CHUNK + (int64_t)t * NZ_PER_THREAD, hi = lo + NZ_PER_THREAD, c = 0;
  if (hi > p.n) hi = p.n;
  for (int64_t i = lo; i < hi; i++) c += tcu_mask_at<ND>(p, i);
  return c;
}

template <bool ND>
TCU_HD void tcu_nz_write(const tcu_plan &p, int64_t b, int t, int64_t *out, int64_t at) {
  int64_t lo = b * NZ_CHUNK + (int64_t)t * NZ_PER_THREAD, hi = lo + NZ_PER_THREAD;
  if (hi > p.n) hi = p.n;
  for (int64_t i = lo; i < hi; i++)
    if (tcu_mask_at<ND>(p, i)) out[at++] = i;
}

template <bool ND>
__global__ void __launch_bounds__(TCU_THREADS) tcu_nz_count_kernel(const tcu_plan p, int64_t *counts) {
  __shared__ int64_t sh[TCU_THREADS];
  sh[threadIdx.x] = tcu_nz_count<ND>(p, blockIdx.x, threadIdx.x);
  __syncthreads();
  for (int s = TCU_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = sh[0];
}

/* starts[b]: where chunk b's first position goes. */
template <bool ND>
__global__ void __launch_bounds__(TCU_THREADS) tcu_nz_write_kernel(const tcu_plan p, const int64_t *starts, int64_t *out) {
  __shared__ int64_t sh[TCU_THREADS];
  sh[threadIdx.x] = tcu_nz_count<ND>(p, blockIdx.x, threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {   /* exclusive prefix over the block's threads */
    int64_t run = starts[blockIdx.x];
    for (int t = 0; t < TCU_THREADS; t++) { int64_t c = sh[t]; sh[t] = run; run += c; }
  }
  __syncthreads();
  tcu_nz_write<ND>(p, blockIdx.x, threadIdx.x, out, sh[threadIdx.x]);
}

template <bool ND>
static void tcu_nz_host(const tcu_plan &p, int64_t nblk, int64_t *counts, const int64_t *starts, int64_t *out) {
  for (int64_t b = 0; b < nblk; b++) {
    int64_t run = starts ? starts[b] : 0, c = 0;
    for (int t = 0; t < TCU_THREADS; t++) {
      int64_t k = tcu_nz_count<ND>(p, b, t);
      if (starts) tcu_nz_write<ND>(p, b, t, out, run);
      run += k;
      c += k;
    }
    if (counts) counts[b] = c;
  }
}

extern "C" int tcu_nonzero(const tcu_plan *p, int64_t *out, int64_t count, bool *mismatch) {
  if (p->n == 0) { *mismatch = count != 0; return 0; }
  int64_t nblk = (p->n + NZ_CHUNK - 1) / NZ_CHUNK;
  size_t bytes = (size_t)nblk * sizeof(int64_t);
  int64_t *counts = (int64_t *)malloc(bytes ? bytes : 1), *dcounts = (int64_t *)tcu_malloc(bytes ? bytes : 1);
  int st = 0;
  bool nd = p->ndim != 1;
  *mismatch = false;
  if (!counts || !dcounts) { st = 2; goto done; }   /* cudaErrorMemoryAllocation */
  if (tcu_emulating()) {
    if (nd) tcu_nz_host<true>(*p, nblk, counts, NULL, NULL);
    else tcu_nz_host<false>(*p, nblk, counts, NULL, NULL);
  } else {
    void *args[2] = {(void *)p, (void *)&dcounts};
    st = tcu_launch(nd ? (const void *)tcu_nz_count_kernel<true> : (const void *)tcu_nz_count_kernel<false>, nblk, args);
    if (!st) st = tcu_sync();
    if (!st) st = tcu_d2h(counts, dcounts, bytes);
  }
  if (st) goto done;
  {
    int64_t run = 0;
    for (int64_t b = 0; b < nblk; b++) { int64_t c = counts[b]; counts[b] = run; run += c; }
    if (run != count) { *mismatch = true; goto done; }
  }
  if (tcu_emulating()) {
    if (nd) tcu_nz_host<true>(*p, nblk, NULL, counts, out);
    else tcu_nz_host<false>(*p, nblk, NULL, counts, out);
  } else {
    st = tcu_h2d(dcounts, counts, bytes);
    void *args[3] = {(void *)p, (void *)&dcounts, (void *)&out};
    if (!st) st = tcu_launch(nd ? (const void *)tcu_nz_write_kernel<true> : (const void *)tcu_nz_write_kernel<false>, nblk, args);
    if (!st) st = tcu_sync();
  }
done:
  free(counts);
  tcu_free(dcounts, bytes ? bytes : 1);
  return st;
}
