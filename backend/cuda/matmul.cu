/* CUDA matrix products (TC_CALL_MATMUL). Integers and bool run a tiled
 * kernel in wrapping unsigned arithmetic (exact mod 2^w: i8/i16/i32
 * accumulate in 32 bits, i64 in 64, truncated once), which gives the CPU's
 * results bit for bit in any order; bool is or-of-ands. f32 and f64 go to
 * cuBLAS, loaded with dlopen when the engine starts (TCALC_CUBLAS names
 * another library, or "none"); the same tiled kernel takes floats where
 * cuBLAS cannot (a dimension beyond its int) and in the host emulation,
 * summing in k order. bf16/f16 never reach here: src/ multiplies them in
 * f32 and rounds once. */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include "kern.cuh"

/* ---- the element rules: input word, multiply-add, output ---- */
template <class S_, class W_> struct mm_int {
  typedef S_ S; typedef W_ W;
  static TCU_HD W zero() { return 0; }
  static TCU_HD W in(S x) { return (W)x; }
  static TCU_HD W madd(W acc, W a, W b) { return acc + a * b; }
  static TCU_HD S out(W acc) { return (S)acc; }
};
struct mm_bool {
  typedef uint8_t S; typedef uint32_t W;
  static TCU_HD W zero() { return 0; }
  static TCU_HD W in(S x) { return x != 0; }
  static TCU_HD W madd(W acc, W a, W b) { return acc | (a & b); }
  static TCU_HD S out(W acc) { return (S)(acc != 0); }
};
template <class S_> struct mm_flt {
  typedef S_ S; typedef S_ W;
  static TCU_HD W zero() { return 0; }
  static TCU_HD W in(S x) { return x; }
  static TCU_HD W madd(W acc, W a, W b) { return acc + a * b; }
  static TCU_HD S out(W acc) { return acc; }
};

/* Element offsets of product bi's A and B. */
TCU_HD void tcu_mm_batch(const tcu_mplan &p, int64_t bi, int64_t *oa, int64_t *ob) {
  int64_t a = 0, b = 0;
  for (int d = p.nbd - 1; d >= 0; d--) {
    int64_t q = bi / p.bshape[d], i = bi - q * p.bshape[d];
    bi = q;
    a += i * p.bstride[0][d];
    b += i * p.bstride[1][d];
  }
  *oa = a;
  *ob = b;
}

/* ---- the tiled kernel ----
 * A block computes a 64 x 64 tile of one product; each of its 256 threads
 * 4 x 4 outputs, 16 apart. K advances 16 at a time through shared memory;
 * each output's terms are added in k order. Grid-stride over the tiles of
 * every product. */
#define MM_T 64
#define MM_KT 16
template <class O>
__global__ void __launch_bounds__(TCU_THREADS) tcu_mm_kernel(const tcu_mplan p) {
  typedef typename O::S S;
  typedef typename O::W W;
  __shared__ W as[MM_KT][MM_T + 1];
  __shared__ W bs[MM_KT][MM_T];
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int64_t tm = (p.M + MM_T - 1) / MM_T, tn = (p.N + MM_T - 1) / MM_T, per = tm * tn;
  for (int64_t t = blockIdx.x; t < per * p.nbatch; t += gridDim.x) {
    int64_t bi = t / per, r = t - bi * per, m0 = r / tn * MM_T, n0 = r % tn * MM_T, oa, ob;
    tcu_mm_batch(p, bi, &oa, &ob);
    const S *A = TCU_CPTR(S, p.a) + oa, *B = TCU_CPTR(S, p.b) + ob;
    W acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[i][j] = O::zero();
    for (int64_t k0 = 0; k0 < p.K; k0 += MM_KT) {
      for (int i = threadIdx.x; i < MM_T * MM_KT; i += TCU_THREADS) {
        int mm = i / MM_KT, kk = i % MM_KT, kb = i / MM_T, nn = i % MM_T;
        int64_t gm = m0 + mm, gk = k0 + kk, gkb = k0 + kb, gn = n0 + nn;
        as[kk][mm] = gm < p.M && gk < p.K ? O::in(A[gm * p.ars + gk * p.acs]) : O::zero();
        bs[kb][nn] = gkb < p.K && gn < p.N ? O::in(B[gkb * p.brs + gn * p.bcs]) : O::zero();
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < MM_KT; kk++) {
        W a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; i++) a[i] = as[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; j++) b[j] = bs[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
          for (int j = 0; j < 4; j++) acc[i][j] = O::madd(acc[i][j], a[i], b[j]);
      }
      __syncthreads();
    }
    S *C = TCU_PTR(S, p.c) + bi * p.M * p.N;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int64_t gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
        if (gm < p.M && gn < p.N) C[gm * p.N + gn] = O::out(acc[i][j]);
      }
  }
}

/* The host emulation: the same element rules, each output's terms in k
 * order as on the device. */
template <class O>
static void tcu_mm_host(const tcu_mplan *pp) {
  typedef typename O::S S;
  typedef typename O::W W;
  const tcu_mplan &p = *pp;
  for (int64_t bi = 0; bi < p.nbatch; bi++) {
    int64_t oa, ob;
    tcu_mm_batch(p, bi, &oa, &ob);
    const S *A = TCU_CPTR(S, p.a) + oa, *B = TCU_CPTR(S, p.b) + ob;
    S *C = TCU_PTR(S, p.c) + bi * p.M * p.N;
    for (int64_t i = 0; i < p.M; i++)
      for (int64_t j = 0; j < p.N; j++) {
        W acc = O::zero();
        for (int64_t k = 0; k < p.K; k++) acc = O::madd(acc, O::in(A[i * p.ars + k * p.acs]), O::in(B[k * p.brs + j * p.bcs]));
        C[i * p.N + j] = O::out(acc);
      }
  }
}

template <class O>
static tcu_mentry tcu_make_mentry(int dt) {
  tcu_mentry e;
  e.k = (const void *)tcu_mm_kernel<O>;
  e.host = tcu_mm_host<O>;
  e.dt = dt;
  e.esize = sizeof(typename O::S);
  return e;
}

/* Words: 32 bits for i8/i16/i32 (exact mod 2^w after truncation), 64 for i64. */
typedef uint32_t mmw_I8;
typedef uint32_t mmw_I16;
typedef uint32_t mmw_I32;
typedef uint64_t mmw_I64;
typedef uint32_t mmw_U8;
typedef uint32_t mmw_U16;
typedef uint32_t mmw_U32;
typedef uint64_t mmw_U64;

static tcu_mentry mtable[TC_DT_COUNT];
static bool mready;

static void mfill(void) {
#define ME_INT(E, n_, S, ...) mtable[TC_DT_##E] = tcu_make_mentry<mm_int<S, mmw_##E> >(TC_DT_##E);
  TC_FOR_INT(ME_INT, _)
  mtable[TC_DT_BOOL] = tcu_make_mentry<mm_bool>(TC_DT_BOOL);
  mtable[TC_DT_F32] = tcu_make_mentry<mm_flt<float> >(TC_DT_F32);
  mtable[TC_DT_F64] = tcu_make_mentry<mm_flt<double> >(TC_DT_F64);
}

extern "C" const tcu_mentry *tcu_mm_entry(int dt) {
  if (!mready) { mfill(); mready = true; }
  return dt >= 0 && dt < TC_DT_COUNT && mtable[dt].k ? &mtable[dt] : NULL;
}

/* ---- cuBLAS, through dlopen ---- */
enum { BLAS_OP_N = 0, BLAS_OP_T = 1, BLAS_DEFAULT_MATH = 0 };
typedef int (*blas_create_fn)(void **handle);
typedef int (*blas_math_fn)(void *handle, int mode);
typedef const char *(*blas_status_fn)(int status);
typedef int (*blas_sgemm_fn)(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                             long long sa, const float *b, int ldb, long long sb, const float *beta, float *c, int ldc,
                             long long sc, int count);
typedef int (*blas_dgemm_fn)(void *h, int ta, int tb, int m, int n, int k, const double *alpha, const double *a, int lda,
                             long long sa, const double *b, int ldb, long long sb, const double *beta, double *c,
                             int ldc, long long sc, int count);
static struct {
  tcu_lib l;
  void *handle;
  blas_create_fn create;
  blas_math_fn set_math;
  blas_status_fn status;
  blas_sgemm_fn sgemm;
  blas_dgemm_fn dgemm;
} blas;

static bool blas_syms(void *lib) {
  if (!tcu_sym(lib, "cublasCreate_v2", &blas.create) || !tcu_sym(lib, "cublasSetMathMode", &blas.set_math) ||
      !tcu_sym(lib, "cublasSgemmStridedBatched", &blas.sgemm) || !tcu_sym(lib, "cublasDgemmStridedBatched", &blas.dgemm))
    return false;
  tcu_sym(lib, "cublasGetStatusString", &blas.status);
  return true;
}

extern "C" int tcu_blas_load(char *why, size_t n) {
  return tcu_lib_load(&blas.l, "TCALC_CUBLAS", "libcublas.so.13", "cuBLAS", blas_syms, why, n);
}

extern "C" const char *tcu_blas_name(void) { return blas.l.state > 0 ? blas.l.name : NULL; }

extern "C" const char *tcu_blas_strerror(int status) {
  static char buf[128];
  const char *s = blas.status ? blas.status(status) : NULL;
  snprintf(buf, sizeof buf, "cuBLAS: %s", s ? s : "error");
  if (!s) snprintf(buf, sizeof buf, "cuBLAS status %d", status);
  return buf;
}

/* How cuBLAS (column-major) can read a row-major rows x cols operand with
 * element strides rs, cs: as its transpose with leading dimension rs (op N),
 * or as itself with leading dimension cs (op T). false: it cannot. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *op, int *ld) {
  if ((cols == 1 || cs == 1) && (rows == 1 || (rs >= cols && rs <= INT32_MAX))) {
    *op = BLAS_OP_N;
    *ld = (int)(rows == 1 ? cols : rs);
    return true;
  }
  if ((rows == 1 || rs == 1) && (cols == 1 || (cs >= rows && cs <= INT32_MAX))) {
    *op = BLAS_OP_T;
    *ld = (int)(cols == 1 ? rows : cs);
    return true;
  }
  return false;
}

/* Packs one operand (rows x cols at strides rs, cs; batch dims where its
 * stride is nonzero) into contiguous memory. */
struct tcu_pack {
  const char *src;
  char *dst;
  int64_t n, rows, cols, rs, cs;
  int nd;
  int64_t shape[TC_MAX_DIMS], st[TC_MAX_DIMS];
};

template <class W>
__global__ void __launch_bounds__(TCU_THREADS) tcu_pack_kernel(const tcu_pack p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t i = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; i < p.n; i += step) {
    int64_t c = i % p.cols, q = i / p.cols, r = q % p.rows, b = q / p.rows, off = r * p.rs + c * p.cs;
    for (int d = p.nd - 1; d >= 0; d--) {
      int64_t qb = b / p.shape[d];
      off += (b - qb * p.shape[d]) * p.st[d];
      b = qb;
    }
    TCU_PTR(W, p.dst)[i] = TCU_CPTR(W, p.src)[off];
  }
}

/* Operand x (0: A, 1: B) of p into new memory *buf, p rewritten to read it. */
static int pack(tcu_mplan *p, int x, size_t es, char **buf, size_t *bytes) {
  tcu_pack k;
  memset(&k, 0, sizeof k);
  k.rows = x ? p->K : p->M;
  k.cols = x ? p->N : p->K;
  k.rs = x ? p->brs : p->ars;
  k.cs = x ? p->bcs : p->acs;
  k.src = x ? p->b : p->a;
  k.n = k.rows * k.cols;
  for (int d = 0; d < p->nbd; d++)
    if (p->bstride[x][d]) {
      k.shape[k.nd] = p->bshape[d];
      k.st[k.nd++] = p->bstride[x][d];
      k.n *= p->bshape[d];
    }
  *bytes = (size_t)k.n * es;
  *buf = (char *)tcu_malloc(*bytes);
  if (!*buf) return (int)cudaErrorMemoryAllocation;
  k.dst = *buf;
  void *args[1] = {&k};
  int st = tcu_launch(es == 4 ? (const void *)tcu_pack_kernel<uint32_t> : (const void *)tcu_pack_kernel<uint64_t>,
                      tcu_grid_threads(k.n), args);
  if (st) return st;
  int64_t s = k.rows * k.cols;
  for (int d = p->nbd - 1; d >= 0; d--)
    if (p->bstride[x][d]) {
      p->bstride[x][d] = s;
      s *= p->bshape[d];
    }
  if (x) { p->b = *buf; p->brs = k.cols; p->bcs = 1; }
  else { p->a = *buf; p->ars = k.cols; p->acs = 1; }
  return 0;
}

static int gemm(int dt, const tcu_mplan *p0) {
  if (!blas.handle) {
    int bs = blas.create(&blas.handle);
    if (bs) { blas.handle = NULL; return TCU_E_BLAS + bs; }
    blas.set_math(blas.handle, BLAS_DEFAULT_MATH);   /* no TF32: full f32 products */
  }
  tcu_mplan p = *p0;
  size_t es = dt == TC_DT_F32 ? 4 : 8;
  char *buf[2] = {NULL, NULL};
  size_t bytes[2] = {0, 0};
  int op[2], ld[2], st = 0;
  for (int x = 0; x < 2 && !st; x++) {
    int64_t rows = x ? p.K : p.M, cols = x ? p.N : p.K;
    if (!blas_layout(rows, cols, x ? p.brs : p.ars, x ? p.bcs : p.acs, &op[x], &ld[x])) {
      st = pack(&p, x, es, &buf[x], &bytes[x]);
      if (!st) blas_layout(rows, cols, x ? p.brs : p.ars, x ? p.bcs : p.acs, &op[x], &ld[x]);
    }
  }
  /* the batch dims cuBLAS strides over: the last one after merging those
   * every operand allows (C is contiguous); the others loop here */
  int nd = 0;
  int64_t shape[TC_MAX_DIMS], sa[TC_MAX_DIMS], sb[TC_MAX_DIMS], sc[TC_MAX_DIMS], cs = p.M * p.N;
  for (int d = p.nbd - 1; d >= 0; d--) {   /* innermost first */
    int64_t n = p.bshape[d], a = p.bstride[0][d], b = p.bstride[1][d];
    if (nd && sa[nd - 1] * shape[nd - 1] == a && sb[nd - 1] * shape[nd - 1] == b && sc[nd - 1] * shape[nd - 1] == cs &&
        a >= 0 && b >= 0) {
      shape[nd - 1] *= n;
    } else {
      shape[nd] = n;
      sa[nd] = a;
      sb[nd] = b;
      sc[nd] = cs;
      nd++;
    }
    cs *= n;
  }
  int64_t inner = nd ? shape[0] : 1, ia = nd ? sa[0] : 0, ib = nd ? sb[0] : 0, ic = p.M * p.N;
  if (ia < 0 || ib < 0) { inner = 1; ia = ib = 0; }   /* cuBLAS steps forwards only: loop here */
  int64_t outer = p.nbatch / inner;
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  for (int64_t o = 0; o < outer && !st; o++) {
    /* offsets of this run's first product: outer index o over the dims past
     * the inner one (or over all, when the inner one loops too) */
    int64_t oa = 0, ob = 0, rem = o;
    int first = inner > 1 || !nd ? 1 : 0;
    for (int d = first; d < nd; d++) {
      int64_t i = rem % shape[d];
      rem /= shape[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    for (int64_t done = 0; done < inner && !st; done += (int64_t)1 << 30) {
      int count = (int)(inner - done < ((int64_t)1 << 30) ? inner - done : (int64_t)1 << 30);
      int64_t ea = oa + done * ia, eb = ob + done * ib;
      char *c = p.c + (size_t)((o * inner + done) * ic) * es;
      /* C^T = B^T A^T in cuBLAS's column-major terms */
      if (dt == TC_DT_F32)
        st = blas.sgemm(blas.handle, op[1], op[0], (int)p.N, (int)p.M, (int)p.K, &onef, TCU_CPTR(float, p.b) + eb, ld[1],
                        ib, TCU_CPTR(float, p.a) + ea, ld[0], ia, &zerof, TCU_PTR(float, c), (int)p.N, ic, count);
      else
        st = blas.dgemm(blas.handle, op[1], op[0], (int)p.N, (int)p.M, (int)p.K, &one, TCU_CPTR(double, p.b) + eb, ld[1],
                        ib, TCU_CPTR(double, p.a) + ea, ld[0], ia, &zero, TCU_PTR(double, c), (int)p.N, ic, count);
      if (st) st += TCU_E_BLAS;
    }
  }
  int sst = tcu_sync();
  if (!st) st = sst;
  for (int x = 0; x < 2; x++) tcu_free(buf[x], bytes[x]);
  return st;
}

extern "C" int tcu_matmul(const tcu_mentry *e, const tcu_mplan *p) {
  size_t cbytes = (size_t)(p->nbatch * p->M * p->N) * e->esize;
  bool emulate = tcu_emulating();
  if (p->K == 0) {   /* empty sums */
    if (emulate) { memset(p->c, 0, cbytes); return 0; }
    int st = (int)cudaMemset(p->c, 0, cbytes);
    return st ? st : tcu_sync();
  }
  if (emulate) { e->host(p); return 0; }
  bool flt = e->dt == TC_DT_F32 || e->dt == TC_DT_F64;
  if (flt && p->M <= INT32_MAX && p->N <= INT32_MAX && p->K <= INT32_MAX && tcu_blas_load(NULL, 0) == 0)
    return gemm(e->dt, p);
  int64_t per = ((p->M + MM_T - 1) / MM_T) * ((p->N + MM_T - 1) / MM_T);
  void *args[1] = {(void *)p};
  int st = tcu_launch(e->k, tcu_grid_blocks(per * p->nbatch), args);
  return st ? st : tcu_sync();
}
