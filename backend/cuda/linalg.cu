/* CUDA linear algebra (TC_CALL_LINALG): f32/f64 on cuSOLVER's dense
 * routines (the LAPACK ones the CPU uses: getrf/getrs, potrf, syevd,
 * gesvd), loaded with dlopen on first ask like cuBLAS (TCALC_CUSOLVER
 * names the library, or "none" turns it off), one matrix of the stack at a
 * time on the default stream; and the exact integer det (Bareiss,
 * backend/bareiss.h, the CPU's code), one thread per matrix.
 *
 * The stacks are row-major; cuSOLVER is column-major, so it sees each
 * matrix transposed, as LAPACK does on the CPU (backend/cpu/lapack.c):
 * solve factors A^T and solves with op T, inv solves A^T Y = I (Y read
 * row-major is A^-1), cholesky factors the upper triangle of A^T and keeps
 * the lower of the row-major result. gesvd needs rows >= cols, so a wide
 * A^T is transposed first. cuSOLVER cannot run on the host: the emulation
 * has the integer det only (cuda.c says so for the rest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cusolverDn.h>
#include "kern.cuh"
#include "../bareiss.h"


/* ---- cuSOLVER, through dlopen ---- */
#define SV_FUNCS(X)                                                                                    \
  X(Sgetrf_bufferSize) X(Dgetrf_bufferSize) X(Sgetrf) X(Dgetrf) X(Sgetrs) X(Dgetrs)                     \
  X(Spotrf_bufferSize) X(Dpotrf_bufferSize) X(Spotrf) X(Dpotrf) X(Ssyevd_bufferSize) X(Dsyevd_bufferSize) \
  X(Ssyevd) X(Dsyevd) X(Sgesvd_bufferSize) X(Dgesvd_bufferSize) X(Sgesvd) X(Dgesvd)
static struct {
  tcu_lib l;
  cusolverDnHandle_t h;
  decltype(&cusolverDnCreate) create;
#define SV_FIELD_(f) decltype(&cusolverDn##f) f;
  SV_FUNCS(SV_FIELD_)
#undef SV_FIELD_
} sv;

static bool sv_syms(void *lib) {
  bool ok = tcu_sym(lib, "cusolverDnCreate", &sv.create);
#define SV_LOAD_(f) ok = ok && tcu_sym(lib, "cusolverDn" #f, &sv.f);
  SV_FUNCS(SV_LOAD_)
#undef SV_LOAD_
  return ok;
}

extern "C" int tcu_solver_load(char *why, size_t n) {
  return tcu_lib_load(&sv.l, "TCALC_CUSOLVER", "libcusolver.so.12", "cuSOLVER", sv_syms, why, n);
}

extern "C" const char *tcu_solver_strerror(int status) {
  static char buf[64];
  snprintf(buf, sizeof buf, "cuSOLVER status %d", status);
  return buf;
}

/* ---- helper kernels (items) ---- */
template <class T> struct la_plan {
  int64_t nb, rows, cols;   /* per matrix of the item kernels */
  T *dst;
  const T *src, *p, *q, *s;
  const int *ipiv, *info;
  int64_t pi, pr, qr, qj, mn;
  T rcond;
};
/* dst [nb, rows, cols] = src [nb, cols, rows] transposed */
template <class T> struct la_transpose {
  static TCU_HD void g(const la_plan<T> &p, int64_t i) {
    int64_t per = p.rows * p.cols, b = i / per, x = (i - b * per) / p.cols, y = i - b * per - x * p.cols;
    p.dst[i] = p.src[b * per + y * p.rows + x];
  }
};
template <class T> struct la_eye {
  static TCU_HD void g(const la_plan<T> &p, int64_t i) {
    int64_t per = p.rows * p.cols, x = (i % per) / p.cols, y = i % p.cols;
    p.dst[i] = x == y ? (T)1 : (T)0;
  }
};
template <class T> struct la_tril {   /* the lower triangle of src */
  static TCU_HD void g(const la_plan<T> &p, int64_t i) {
    int64_t per = p.rows * p.cols, x = (i % per) / p.cols, y = i % p.cols;
    p.dst[i] = y > x ? (T)0 : p.src[i];
  }
};
template <class T> struct la_det {    /* item: a matrix, LU-factored in src, pivots ipiv */
  static TCU_HD void g(const la_plan<T> &p, int64_t b) {
    const T *x = p.src + b * p.rows * p.rows;
    const int *ip = p.ipiv + b * p.rows;
    T d = 1;
    for (int64_t i = 0; i < p.rows; i++) d *= ip[i] != i + 1 ? -x[i * p.rows + i] : x[i * p.rows + i];
    p.dst[b] = d == 0 || p.info[b] > 0 ? (T)0 : d;   /* a singular matrix: +0, as on the CPU */
  }
};
/* pinv of one matrix: dst [rows, cols] = sum over r of P(i, r) s+[r] Q(r, j),
 * s+ the reciprocals of the singular values above rcond * s[0], else 0 */
template <class T> struct la_pinv {
  static TCU_HD void g(const la_plan<T> &p, int64_t i) {
    int64_t x = i / p.cols, y = i - x * p.cols;
    T cut = p.mn ? p.rcond * p.s[0] : (T)0, acc = 0;
    for (int64_t r = 0; r < p.mn; r++) {
      T sr = p.s[r] > cut ? 1 / p.s[r] : (T)0;
      acc += p.p[x * p.pi + r * p.pr] * sr * p.q[r * p.qr + y * p.qj];
    }
    p.dst[i] = acc;
  }
};
/* the exact integer det, item: a matrix (overwritten); info[b] = 1 when it overflows */
struct la_bareiss_plan {
  int64_t n;
  int64_t *a, *out;
  int *fail;
};
struct la_bareiss {
  static TCU_HD void g(const la_bareiss_plan &p, int64_t b) {
    p.fail[b] = tc_bareiss(p.a + b * p.n * p.n, p.n, &p.out[b]) != 0;
  }
};

/* The first matrix whose info (on the device) is positive, or -1. */
static int first_failed(const int *info, int64_t nb, int64_t *found) {
  *found = -1;
  int *h = (int *)malloc(sizeof(int) * (size_t)(nb ? nb : 1));
  if (!h) return (int)cudaErrorMemoryAllocation;
  int st = tcu_d2h(h, info, sizeof(int) * (size_t)nb);
  for (int64_t b = 0; !st && b < nb; b++)
    if (h[b] > 0) { *found = b; break; }
  free(h);
  return st;
}

static int d2d(void *dst, const void *src, size_t n) {
  if (tcu_emulating()) { memcpy(dst, src, n); return 0; }
  return (int)cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice);
}

/* cuSOLVER's status as a tcu status */
#define SV_CALL(call) do { int s_ = (int)(call); if (s_) { st = TCU_E_SOLVER + s_; goto done; } } while (0)
#define RT_CALL(call) do { if ((st = (call)) != 0) goto done; } while (0)

/* ---- the routines, stamped for float (S) and double (D) ---- */
#define LA_FUNCS(T, P)                                                                                          \
  static int la_##P(const tcu_lplan *q, int64_t *found) {                                                      \
    int64_t nb = q->nb, m64 = q->m, n64 = q->n, k64 = q->k;                                                     \
    int n = (int)n64, m = (int)m64, k = (int)k64, mn = m < n ? m : n;                                           \
    T *a = (T *)(void *)q->a, *bm = (T *)(void *)q->b, *out = (T *)(void *)q->out;                             \
    bool tall = n >= m;   /* A^T (n x m) has rows >= cols: gesvd takes it as it is */                           \
    int rows = tall ? n : m, cols = tall ? m : n;                                                               \
    int lwork = 0, *info = NULL, *ipiv = NULL, *info2 = NULL;                                                   \
    T *work = NULL, *scr = NULL;                                                                                \
    size_t nwork = 0, nscr = 0, ninfo = sizeof(int) * (size_t)(nb + 1), nipiv = 0;                              \
    int st = 0;                                                                                                 \
    la_plan<T> lp;                                                                                              \
    memset(&lp, 0, sizeof lp);                                                                                  \
    *found = -1;                                                                                                \
    if (!sv.h) SV_CALL(sv.create(&sv.h));                                                                       \
    info = (int *)tcu_malloc(ninfo);                                                                            \
    info2 = (int *)tcu_malloc(sizeof(int));                                                                     \
    if (!info || !info2) { st = (int)cudaErrorMemoryAllocation; goto done; }                                   \
    RT_CALL((int)cudaMemset(info, 0, ninfo));                                                                   \
    switch (q->op) {                                                                                            \
    case TC_OP_SOLVE: case TC_OP_INV: case TC_OP_DET:                                                           \
      SV_CALL(sv.P##getrf_bufferSize(sv.h, n, n, a, n, &lwork));                                                \
      nipiv = sizeof(int) * (size_t)(nb * n64 + 1);                                                             \
      ipiv = (int *)tcu_malloc(nipiv);                                                                          \
      break;                                                                                                    \
    case TC_OP_CHOLESKY: SV_CALL(sv.P##potrf_bufferSize(sv.h, CUBLAS_FILL_MODE_UPPER, n, a, n, &lwork)); break;  \
    case TC_OP_EIGVALSH:                                                                                        \
      SV_CALL(sv.P##syevd_bufferSize(sv.h, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, n, a, n, out,    \
                                     &lwork));                                                                  \
      break;                                                                                                    \
    default: /* SVDVALS, PINV: the transposed stack when wide; pinv's U, VT, S and rwork */                     \
      SV_CALL(sv.P##gesvd_bufferSize(sv.h, rows, cols, &lwork));                                                \
      nscr = sizeof(T) * (size_t)((tall ? 0 : nb * m64 * n64) + (int64_t)mn * (rows + cols + 2) + 1);           \
      scr = (T *)tcu_malloc(nscr);                                                                              \
      if (!scr) { st = (int)cudaErrorMemoryAllocation; goto done; }                                            \
      break;                                                                                                    \
    }                                                                                                           \
    nwork = sizeof(T) * (size_t)(lwork + 1);                                                                    \
    work = (T *)tcu_malloc(nwork);                                                                              \
    if (!work || (nipiv && !ipiv)) { st = (int)cudaErrorMemoryAllocation; goto done; }                         \
    lp.nb = nb;                                                                                                 \
    switch (q->op) {                                                                                            \
    case TC_OP_SOLVE: {                                                                                         \
      T *col = out;   /* b as column-major n x k matrices */                                                    \
      if (k > 1) {                                                                                              \
        lp.rows = k64; lp.cols = n64; lp.dst = out; lp.src = bm;                                                \
        RT_CALL(tcu_items<la_transpose<T> >(lp, nb * n64 * k64));                                               \
      } else {                                                                                                  \
        RT_CALL(d2d(out, bm, sizeof(T) * (size_t)(nb * n64 * k64)));                                            \
      }                                                                                                         \
      for (int64_t b = 0; b < nb; b++) {                                                                        \
        SV_CALL(sv.P##getrf(sv.h, n, n, a + b * n64 * n64, n, work, ipiv + b * n64, info + b));                 \
        if (k) SV_CALL(sv.P##getrs(sv.h, CUBLAS_OP_T, n, k, a + b * n64 * n64, n, ipiv + b * n64,                \
                                   col + b * n64 * k64, n, info2));                                             \
      }                                                                                                         \
      if (k > 1) {                                                                                              \
        lp.rows = n64; lp.cols = k64; lp.dst = bm; lp.src = out;                                                \
        RT_CALL(tcu_items<la_transpose<T> >(lp, nb * n64 * k64));                                               \
        RT_CALL(d2d(out, bm, sizeof(T) * (size_t)(nb * n64 * k64)));                                            \
      }                                                                                                         \
      break;                                                                                                    \
    }                                                                                                           \
    case TC_OP_INV:                                                                                             \
      lp.rows = lp.cols = n64; lp.dst = out;                                                                    \
      RT_CALL(tcu_items<la_eye<T> >(lp, nb * n64 * n64));                                                       \
      for (int64_t b = 0; b < nb; b++) {                                                                        \
        SV_CALL(sv.P##getrf(sv.h, n, n, a + b * n64 * n64, n, work, ipiv + b * n64, info + b));                 \
        SV_CALL(sv.P##getrs(sv.h, CUBLAS_OP_N, n, n, a + b * n64 * n64, n, ipiv + b * n64, out + b * n64 * n64, \
                            n, info2));                                                                         \
      }                                                                                                         \
      break;                                                                                                    \
    case TC_OP_DET:                                                                                             \
      for (int64_t b = 0; b < nb; b++)                                                                          \
        SV_CALL(sv.P##getrf(sv.h, n, n, a + b * n64 * n64, n, work, ipiv + b * n64, info + b));                 \
      lp.rows = n64; lp.src = a; lp.ipiv = ipiv; lp.info = info; lp.dst = out;                                  \
      RT_CALL(tcu_items<la_det<T> >(lp, nb));                                                                   \
      RT_CALL(tcu_sync());                                                                                      \
      goto done;   /* a singular matrix has det 0: not a failure */                                             \
    case TC_OP_CHOLESKY:                                                                                        \
      for (int64_t b = 0; b < nb; b++)                                                                          \
        SV_CALL(sv.P##potrf(sv.h, CUBLAS_FILL_MODE_UPPER, n, a + b * n64 * n64, n, work, lwork, info + b));     \
      lp.rows = lp.cols = n64; lp.src = a; lp.dst = out;                                                        \
      RT_CALL(tcu_items<la_tril<T> >(lp, nb * n64 * n64));                                                      \
      break;                                                                                                    \
    case TC_OP_EIGVALSH:                                                                                        \
      for (int64_t b = 0; b < nb; b++)                                                                          \
        SV_CALL(sv.P##syevd(sv.h, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, n, a + b * n64 * n64, n,  \
                            out + b * n64, work, lwork, info + b));                                             \
      break;                                                                                                    \
    default: { /* SVDVALS, PINV */                                                                              \
      T *mat = a, *u = scr + (tall ? 0 : nb * m64 * n64), *vt = u + (int64_t)rows * mn, *s = vt + (int64_t)mn * cols; \
      T *rw = s + mn;                                                                                           \
      if (!tall) { /* A itself, column-major m x n: the row-major n x m transpose */                            \
        lp.rows = n64; lp.cols = m64; lp.dst = scr; lp.src = a;                                                 \
        RT_CALL(tcu_items<la_transpose<T> >(lp, nb * m64 * n64));                                               \
        mat = scr;                                                                                              \
      }                                                                                                         \
      bool pinv = q->op == TC_OP_PINV;                                                                          \
      for (int64_t b = 0; b < nb; b++) {                                                                        \
        T *sb = pinv ? s : out + b * mn;                                                                        \
        SV_CALL(sv.P##gesvd(sv.h, pinv ? 'S' : 'N', pinv ? 'S' : 'N', rows, cols, mat + b * m64 * n64, rows, sb, \
                            u, rows, vt, mn ? mn : 1, work, lwork, rw, info + b));                              \
        if (!pinv) continue;                                                                                    \
        /* A^T = U S VT gives pinv(A) = U S+ VT; A = U S VT gives VT^T S+ U^T */                                 \
        lp.rows = n64; lp.cols = m64; lp.dst = out + b * n64 * m64; lp.s = s; lp.mn = mn;                        \
        lp.rcond = (T)q->rcond;                                                                                 \
        if (tall) { lp.p = u; lp.pi = 1; lp.pr = rows; lp.q = vt; lp.qr = 1; lp.qj = mn; }                      \
        else { lp.p = vt; lp.pi = mn; lp.pr = 1; lp.q = u; lp.qr = rows; lp.qj = 1; }                           \
        RT_CALL(tcu_items<la_pinv<T> >(lp, n64 * m64));                                                         \
      }                                                                                                         \
      break;                                                                                                    \
    }                                                                                                           \
    }                                                                                                           \
    RT_CALL(tcu_sync());                                                                                        \
    st = first_failed(info, nb, found);                                                                         \
  done:                                                                                                         \
    tcu_free(info, ninfo);                                                                                      \
    tcu_free(info2, sizeof(int));                                                                               \
    tcu_free(ipiv, nipiv);                                                                                      \
    tcu_free(work, nwork);                                                                                      \
    tcu_free(scr, nscr);                                                                                        \
    return st;                                                                                                  \
  }
LA_FUNCS(float, S)
LA_FUNCS(double, D)

extern "C" bool tcu_linalg_ok(int op, int dt) {
  if (op == TC_OP_DET && dt == TC_DT_I64) return true;
  return (dt == TC_DT_F32 || dt == TC_DT_F64) && !tcu_emulating() && tcu_solver_load(NULL, 0) == 0;
}

extern "C" int tcu_linalg(const tcu_lplan *q, int64_t *found) {
  *found = -1;
  if (q->op == TC_OP_DET && q->dt == TC_DT_I64) {
    size_t nf = sizeof(int) * (size_t)(q->nb + 1);
    la_bareiss_plan p = {q->n, (int64_t *)(void *)q->a, (int64_t *)(void *)q->out, (int *)tcu_malloc(nf)};
    if (!p.fail) return (int)cudaErrorMemoryAllocation;
    int st = tcu_items<la_bareiss>(p, q->nb);
    if (!st) st = tcu_sync();
    if (!st) st = first_failed(p.fail, q->nb, found);
    tcu_free(p.fail, nf);
    return st;
  }
  if (!tcu_linalg_ok(q->op, q->dt)) return (int)cudaErrorNotSupported;
  if (q->m > INT32_MAX || q->n > INT32_MAX || q->k > INT32_MAX || q->m * q->n > INT32_MAX || q->n * q->k > INT32_MAX)
    return (int)cudaErrorInvalidValue;
  return q->dt == TC_DT_F32 ? la_S(q, found) : la_D(q, found);
}
