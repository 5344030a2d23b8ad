/* Linear algebra on the CPU (TC_CALL_LINALG): LAPACK through Debian's
 * LAPACKE (the _work entry points, which do not scan the input for NaN,
 * so NaN propagates as in NumPy), and exact integer determinants by
 * fraction-free (Bareiss) elimination in 128-bit.
 *
 * Matrices arrive row-major. A row-major m x n matrix is the column-major
 * n x m matrix A^T, and every routine here is used on that reading, so no
 * transposed copy is made: LU of A^T with getrs('T') solves A x = b, the
 * inverse of A^T read row-major is the inverse of A, det(A^T) = det(A),
 * A^T has A's singular values, and column-major 'U' is row-major lower.
 *
 * LAPACKE is loaded with dlopen on first use, with every signal blocked
 * meanwhile: OpenBLAS (Debian's LAPACK) starts its worker threads when it
 * loads, and threads that accepted SIGINT would take Ctrl-C away from the
 * main thread, whose blocking read it must interrupt. Loading late also
 * keeps the libraries off the start of a run that never uses them. */
#include <dlfcn.h>
#include <lapacke.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../bareiss.h"

#define LA_ROUTINES(X) \
  X(sgetrf_work) X(dgetrf_work) X(sgetrs_work) X(dgetrs_work) X(sgetri_work) X(dgetri_work) \
  X(spotrf_work) X(dpotrf_work) X(ssyevd_work) X(dsyevd_work) X(sgesdd_work) X(dgesdd_work)

static struct {
  int state;   /* 0 not tried, 1 loaded, -1 missing */
  char why[160];
#define X(f) __typeof__(&LAPACKE_##f) f;
  LA_ROUTINES(X)
#undef X
} la;

static bool la_load(void) {
  if (la.state) return la.state > 0;
  la.state = -1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  void *h = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  snprintf(la.why, sizeof la.why, "liblapacke.so.3 (Debian's liblapacke) could not be loaded");
  if (!h) return false;
  void *p;
#define X(f) if (!(p = dlsym(h, "LAPACKE_" #f))) return false; memcpy(&la.f, &p, sizeof p);
  LA_ROUTINES(X)
#undef X
  la.state = 1;
  return true;
}

bool cpu_supports_linalg(const tc_call *c) {
  if (c->op == TC_OP_DET && c->dtype == TC_DT_I64) return true;
  return (c->dtype == TC_DT_F32 || c->dtype == TC_DT_F64) && la_load();
}

/* The failure of matrix b of the stack: found = b, and the code. */
static int fail_at(tc_call *c, int64_t b, tc_code code, tc_err *err) {
  c->found = b;
  return tc_err_set(err, code, (int)c->op, (int)c->dtype, "%s", code == TC_E_SINGULAR ? "singular matrix" : "overflow");
}

/* ---- exact integer determinant (backend/bareiss.h) ---- */
static int det_i64(tc_call *c, int64_t nb, int64_t n, tc_err *err) {
  int64_t *a = (int64_t *)tc_tensor_data(c->in[0]), *out = (int64_t *)tc_tensor_data(c->out);
  for (int64_t b = 0; b < nb; b++) {
    if (tc_interrupt_flag) return cpu_interrupted(err);
    if (tc_bareiss(a + b * n * n, n, &out[b]) != 0) return fail_at(c, b, TC_E_INT_OVERFLOW, err);
  }
  return 0;
}

/* ---- LAPACK, stamped for float (s) and double (d) ---- */
#define LA_FUNCS(T, P)                                                                                            \
  static int la_##P(tc_call *c, int64_t nb, int64_t m, int64_t n, tc_err *err) {                                  \
    T *a = (T *)tc_tensor_data(c->in[0]), *out = (T *)tc_tensor_data(c->out);                                     \
    lapack_int ln = (lapack_int)n, lm = (lapack_int)m, mn = (lapack_int)(m < n ? m : n);                          \
    lapack_int *ipiv = NULL, lwork = 1, liwork = 0, info = 0, iq = 0;                                             \
    T *work = NULL, *scr = NULL, q = 0;                                                                            \
    int rc = 0;                                                                                                   \
    int64_t k = c->op == TC_OP_SOLVE ? c->in[1]->shape[2] : 0;                                                    \
    /* workspace sizes (queries read no matrix) */                                                                \
    if (c->op == TC_OP_INV) info = la.P##getri_work(LAPACK_COL_MAJOR, ln, a, ln, &iq, &q, -1);             \
    if (c->op == TC_OP_EIGVALSH) {                                                                                \
      info = la.P##syevd_work(LAPACK_COL_MAJOR, 'N', 'U', ln, a, ln, out, &q, -1, &iq, -1);                \
      liwork = iq;                                                                                                \
    }                                                                                                             \
    if (c->op == TC_OP_SVDVALS || c->op == TC_OP_PINV)                                                            \
      info = la.P##gesdd_work(LAPACK_COL_MAJOR, c->op == TC_OP_PINV ? 'S' : 'N', ln, lm, a, ln, out, a,    \
                                     ln, a, mn ? mn : 1, &q, -1, &iq);                                            \
    lwork = (lapack_int)q + 1;                                                                                    \
    size_t niw = (size_t)(n + 1);                                                                                 \
    if ((size_t)(8 * mn + 1) > niw) niw = (size_t)(8 * mn + 1);                                                   \
    if ((size_t)(liwork + 1) > niw) niw = (size_t)(liwork + 1);                                                   \
    ipiv = malloc(sizeof(lapack_int) * niw);                                                                      \
    work = malloc(sizeof(T) * (size_t)lwork);                                                                     \
    bool need_scr = c->op == TC_OP_PINV || k > 1;                                                                 \
    if (c->op == TC_OP_PINV) scr = malloc(sizeof(T) * (size_t)(mn * (n + 2 * m) + mn + 1));                       \
    if (k > 1) scr = malloc(sizeof(T) * (size_t)(n * k + 1));                                                     \
    if (!ipiv || !work || (need_scr && !scr) || info < 0) {                                                       \
      rc = tc_err_set(err, info < 0 ? TC_E_BAD_ARG : TC_E_OOM, (int)c->op, (int)c->dtype, "%s",                   \
                      info < 0 ? "LAPACK rejected the sizes" : "out of memory");                                  \
      goto done;                                                                                                  \
    }                                                                                                             \
    for (int64_t b = 0; b < nb && rc == 0; b++) {                                                                 \
      T *x = a + b * m * n;                                                                                       \
      if (tc_interrupt_flag) { /* between matrices: one LAPACK call cannot be stopped */                          \
        rc = cpu_interrupted(err);                                                                                \
        break;                                                                                                    \
      }                                                                                                           \
      switch (c->op) {                                                                                            \
      case TC_OP_SOLVE: {                                                                                         \
        T *rhs = (T *)tc_tensor_data(c->in[1]) + b * n * k, *o = out + b * n * k;                                 \
        if (n && la.P##getrf_work(LAPACK_COL_MAJOR, ln, ln, x, ln, ipiv) > 0) {                            \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
          break;                                                                                                  \
        }                                                                                                         \
        T *col = k > 1 ? scr : o;                                                                                 \
        for (int64_t i = 0; i < n; i++)                                                                           \
          for (int64_t j = 0; j < k; j++) col[j * n + i] = rhs[i * k + j];                                        \
        if (n && k) la.P##getrs_work(LAPACK_COL_MAJOR, 'T', ln, (lapack_int)k, x, ln, ipiv, col, ln);      \
        if (k > 1)                                                                                                \
          for (int64_t i = 0; i < n; i++)                                                                         \
            for (int64_t j = 0; j < k; j++) o[i * k + j] = col[j * n + i];                                        \
        break;                                                                                                    \
      }                                                                                                           \
      case TC_OP_INV:                                                                                             \
        if (n && (la.P##getrf_work(LAPACK_COL_MAJOR, ln, ln, x, ln, ipiv) > 0 ||                           \
                  la.P##getri_work(LAPACK_COL_MAJOR, ln, x, ln, ipiv, work, lwork) > 0)) {                 \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
          break;                                                                                                  \
        }                                                                                                         \
        memcpy(out + b * n * n, x, sizeof(T) * (size_t)(n * n));                                                  \
        break;                                                                                                    \
      case TC_OP_DET: {                                                                                           \
        T d = 1;                                                                                                  \
        if (n) la.P##getrf_work(LAPACK_COL_MAJOR, ln, ln, x, ln, ipiv);                                    \
        for (int64_t i = 0; i < n; i++) d *= ipiv[i] != i + 1 ? -x[i * n + i] : x[i * n + i];                     \
        out[b] = d == 0 ? 0 : d; /* a singular matrix: +0, as NumPy */                                           \
        break;                                                                                                    \
      }                                                                                                           \
      case TC_OP_CHOLESKY:                                                                                        \
        if (n && la.P##potrf_work(LAPACK_COL_MAJOR, 'U', ln, x, ln) > 0) {                                 \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
          break;                                                                                                  \
        }                                                                                                         \
        for (int64_t i = 0; i < n; i++)                                                                           \
          for (int64_t j = 0; j < n; j++) out[b * n * n + i * n + j] = j > i ? 0 : x[i * n + j];                  \
        break;                                                                                                    \
      case TC_OP_EIGVALSH:                                                                                        \
        if (n && la.P##syevd_work(LAPACK_COL_MAJOR, 'N', 'U', ln, x, ln, out + b * n, work, lwork, ipiv,   \
                                         liwork > 0 ? liwork : 1) > 0)                                            \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
        break;                                                                                                    \
      case TC_OP_SVDVALS:                                                                                         \
        if (mn && la.P##gesdd_work(LAPACK_COL_MAJOR, 'N', ln, lm, x, ln, out + b * mn, NULL, 1, NULL, 1,   \
                                          work, lwork, ipiv) > 0)                                                 \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
        break;                                                                                                    \
      case TC_OP_PINV: {                                                                                          \
        /* A^T (n x m) = U S Vt, so pinv(A) = U S+ Vt, n x m */                                                   \
        T *u = scr, *vt = scr + mn * n, *s = vt + mn * m, *w = s + mn, *o = out + b * n * m;                      \
        if (mn && la.P##gesdd_work(LAPACK_COL_MAJOR, 'S', ln, lm, x, ln, s, u, ln, vt, mn, work, lwork,    \
                                          ipiv) > 0) {                                                            \
          rc = fail_at(c, b, TC_E_SINGULAR, err);                                                                 \
          break;                                                                                                  \
        }                                                                                                         \
        T cut = mn ? (T)c->fstart * s[0] : 0;                                                                     \
        for (lapack_int r = 0; r < mn; r++) s[r] = s[r] > cut ? 1 / s[r] : 0;                                     \
        /* o[i, j] = sum over r, in order, of (u[i, r] s[r]) vt[r, j]: with vt's rows made contiguous (w), */     \
        /* a row of o at a time, vectorised along j (the same operations in the same order per element; */       \
        /* a 200 x 200 f64 pinv took 11 ms reading vt across its columns, now 7.4; NumPy 6.3) */                 \
        for (lapack_int r = 0; r < mn; r++)                                                                       \
          for (int64_t j = 0; j < m; j++) w[r * m + j] = vt[r + j * mn];                                          \
        for (int64_t i = 0; i < n; i++) {                                                                         \
          T *oi = o + i * m;                                                                                      \
          for (int64_t j = 0; j < m; j++) oi[j] = 0;                                                              \
          for (lapack_int r = 0; r < mn; r++) {                                                                   \
            T us = u[i + r * n] * s[r];                                                                           \
            const T *wr = w + r * m;                                                                              \
            for (int64_t j = 0; j < m; j++) oi[j] += us * wr[j];                                                  \
          }                                                                                                       \
        }                                                                                                         \
        break;                                                                                                    \
      }                                                                                                           \
      default:                                                                                                    \
        rc = tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not a linear algebra call");                 \
      }                                                                                                           \
    }                                                                                                             \
  done:                                                                                                           \
    free(ipiv);                                                                                                   \
    free(work);                                                                                                   \
    free(scr);                                                                                                    \
    return rc;                                                                                                    \
  }
LA_FUNCS(float, s)
LA_FUNCS(double, d)

const char *cpu_why_not_linalg(const tc_call *c) {
  return !cpu_supports_linalg(c) && la.state < 0 ? la.why : NULL;
}

int cpu_run_linalg(tc_call *c, tc_err *err) {
  const tc_tensor *a = c->in[0];
  int64_t m = a->shape[1], n = a->shape[2], nb = a->shape[0];
  c->found = -1;
  if (c->op == TC_OP_DET && c->dtype == TC_DT_I64) return det_i64(c, nb, n, err);
  return c->dtype == TC_DT_F32 ? la_s(c, nb, m, n, err) : la_d(c, nb, m, n, err);
}
