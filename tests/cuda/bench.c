/* The CUDA device benchmark that scripts/cuda-device-check.sh runs on a GPU
 * machine: elementwise and reduction throughput through the public API
 * (plan, launch and wait included), as a fraction of the H200's HBM
 * bandwidth, scans and sorts of 10^7 elements, solve and inv of 1000 x 1000
 * f64 (cuSOLVER), and matrix products at 4096 (i64: the wrapping kernel;
 * f32: cuBLAS) in operations per second. A plain program, like the parity suite;
 * without a device it prints "skipped: no CUDA device" and exits 0. Timings
 * are printed, never checked: this is not a test.
 *
 *   cuda-check bench [--emulate] [--small]   (--small: 1M elements, for trying it out) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "engine.h"
#include "cuda/tcu.h"
#include "check.h"

#define HBM_BYTES_PER_S 4.8e12   /* H200 */


static tc_tensor *filled(tc_engine_id e, tc_dtype dt, int ndim, const int64_t *shape) {
  tc_err err;
  tc_err_clear(&err);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  size_t es = tc_dtype_size(dt);
  unsigned char *buf = malloc((size_t)n * es);
  if (!buf) { fprintf(stderr, "cuda-check bench: out of host memory\n"); exit(2); }
  for (int64_t i = 0; i < n; i++) {
    int32_t v = (int32_t)(i % 1000) - 500;
    if (dt == TC_DT_F32) { float f = (float)(i % 1000) * 0.001f; memcpy(buf + i * 4, &f, 4); }
    else if (dt == TC_DT_F64) { double d = (double)((i * 7919) % 1000) * 0.001; memcpy(buf + i * 8, &d, 8); }
    else if (dt == TC_DT_I64) { int64_t w = v; memcpy(buf + i * 8, &w, 8); }
    else { memcpy(buf + (size_t)i * es, &v, es < 4 ? es : 4); }
  }
  tc_set_engine(e);
  tc_tensor *t = tc_tensor_from_host(dt, ndim, shape, buf, &err);
  free(buf);
  if (!t) { fprintf(stderr, "cuda-check bench: %s\n", err.msg); exit(2); }
  return t;
}

typedef tc_tensor *(*bench_fn)(tc_tensor *a, tc_tensor *b, tc_err *err);

static tc_tensor *op_add(tc_tensor *a, tc_tensor *b, tc_err *err) { return tc_binary(TC_OP_ADD, a, b, err); }
static tc_tensor *op_exp(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return tc_unary(TC_OP_EXP, a, err); }
/* reduce_sum over every axis (axis < 0) or over one */
static tc_tensor *sum_over(tc_tensor *a, int axis, tc_err *err) {
  tc_axes ax = {.all = axis < 0, .n = axis >= 0, .axis = {axis < 0 ? 0 : axis}};
  return tc_reduce(TC_OP_REDUCE_SUM, a, &ax, false, err);
}
static tc_tensor *op_sum_all(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return sum_over(a, -1, err); }
static tc_tensor *op_sum_rows(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return sum_over(a, 1, err); }
static tc_tensor *op_sum_cols(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return sum_over(a, 0, err); }

static tc_tensor *op_matmul(tc_tensor *a, tc_tensor *b, tc_err *err) { return tc_matmul(a, b, err); }
static tc_tensor *op_sort(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return tc_sort(TC_OP_SORT, a, -1, false, err); }
static tc_tensor *op_argsort(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return tc_sort(TC_OP_ARGSORT, a, -1, false, err); }
static tc_tensor *op_cumsum(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return tc_scan(TC_OP_CUMSUM, a, true, -1, err); }
static tc_tensor *op_solve(tc_tensor *a, tc_tensor *b, tc_err *err) { return tc_solve(a, b, err); }
static tc_tensor *op_inv(tc_tensor *a, tc_tensor *b, tc_err *err) { (void)b; return tc_inv(a, err); }

/* Median seconds of `runs` calls (after one warm-up). */
static double timeit(tc_engine_id e, bench_fn f, tc_tensor *a, tc_tensor *b, int runs) {
  double t[32];
  tc_set_engine(e);
  for (int i = -1; i < runs; i++) {
    tc_err err;
    tc_err_clear(&err);
    double t0 = tc_now_s();
    tc_tensor *r = f(a, b, &err);
    double dt = tc_now_s() - t0;
    if (!r) { printf("  failed: %s\n", err.msg); return -1; }
    tc_tensor_free(r);
    if (i >= 0) t[i] = dt;
  }
  qsort(t, (size_t)runs, sizeof t[0], tc_cmp_double);
  return t[runs / 2];
}

static void mm_line(const char *what, double s, double ops) {
  if (s < 0) return;
  printf("%-44s %9.3f ms  %8.1f Gop/s (a multiply-add is 2 ops)\n", what, s * 1e3, ops / s * 1e-9);
  fflush(stdout);
}

static void line(const char *what, double s, double bytes) {
  if (s < 0) return;
  printf("%-44s %9.3f ms  %8.1f GB/s  %5.1f%% of HBM\n", what, s * 1e3, bytes / s * 1e-9, bytes / s / HBM_BYTES_PER_S * 100);
  fflush(stdout);
}

int bench_main(int argc, char **argv) {
  bool emulate = false, small = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--emulate")) emulate = true;
    else if (!strcmp(argv[i], "--small")) small = true;
    else { fprintf(stderr, "usage: cuda-check bench [--emulate] [--small]\n"); return 2; }
  }
  tc_cuda_test_emulate(emulate);
  tc_cuda_test_unverified(true);   /* a benchmark, not a claim: time the kernels whatever verified.def says */
  tc_err err;
  tc_err_clear(&err);
  if (tc_engine_check(TC_ENGINE_CUDA, &err) != 0) {
    printf("skipped: no CUDA device (%s)\n", err.msg);
    return 0;
  }
  tc_set_max_memory((uint64_t)64 << 30);
  int64_t n = small ? (int64_t)1 << 20 : (int64_t)1 << 28, side = small ? 1024 : 16384;
  int runs = small ? 5 : 10;
  printf("cuda-check bench: %s; %lld elements; median of %d runs through the API; HBM %.1f TB/s\n",
         emulate ? "host emulation (timings meaningless)" : "CUDA device", (long long)n, runs, HBM_BYTES_PER_S * 1e-12);
  tc_tensor *a = filled(TC_ENGINE_CUDA, TC_DT_I32, 1, &n), *b = filled(TC_ENGINE_CUDA, TC_DT_I32, 1, &n);
  double i32 = 4.0 * (double)n;
  line("add i32 [n] + [n]", timeit(TC_ENGINE_CUDA, op_add, a, b, runs), 3 * i32);
  tc_tensor *s = filled(TC_ENGINE_CUDA, TC_DT_I32, 0, NULL);
  line("add i32 [n] + 0-d (stride-0 broadcast)", timeit(TC_ENGINE_CUDA, op_add, a, s, runs), 2 * i32);
  line("reduce_sum i32 over all n (split rows)", timeit(TC_ENGINE_CUDA, op_sum_all, a, NULL, runs), i32);
  tc_tensor_free(s);
  int64_t sq[2] = {side, side};
  tc_tensor *m = filled(TC_ENGINE_CUDA, TC_DT_I32, 2, sq);
  line("reduce_sum i32 [side,side] axis 1", timeit(TC_ENGINE_CUDA, op_sum_rows, m, NULL, runs), i32);
  line("reduce_sum i32 [side,side] axis 0 (strided)", timeit(TC_ENGINE_CUDA, op_sum_cols, m, NULL, runs), i32);
  tc_tensor_free(m);
  tc_tensor *f = filled(TC_ENGINE_CUDA, TC_DT_F32, 1, &n);
  line("exp f32 [n]", timeit(TC_ENGINE_CUDA, op_exp, f, NULL, runs), 2 * i32);
  line("reduce_sum f32 over all n", timeit(TC_ENGINE_CUDA, op_sum_all, f, NULL, runs), i32);
  tc_tensor_free(f);
  tc_tensor_free(a);
  tc_tensor_free(b);
  /* The same add on the CPU engine, for scale. */
  a = filled(TC_ENGINE_CPU, TC_DT_I32, 1, &n);
  b = filled(TC_ENGINE_CPU, TC_DT_I32, 1, &n);
  line("cpu engine: add i32 [n] + [n]", timeit(TC_ENGINE_CPU, op_add, a, b, 3), 3 * i32);
  tc_tensor_free(a);
  tc_tensor_free(b);
  /* Scans and sorting (the sizes of make bench's NumPy rows), and linear
   * algebra on cuSOLVER: seconds, as bandwidth of one read and one write.
   * A float cumsum runs one thread per row (the CPU's order), so it is
   * timed on 1000 rows, not one long one. */
  int64_t ns = small ? (int64_t)1 << 16 : 10000000, rows[2] = {1000, ns / 1000};
  runs = small ? 3 : 5;
  const struct { const char *what; tc_dtype dt; int nd; const int64_t *shape; bench_fn f; double bytes; } ord[] = {
    {"sort f32 [1e7]", TC_DT_F32, 1, &ns, op_sort, 8.0 * (double)ns},
    {"argsort f32 [1e7]", TC_DT_F32, 1, &ns, op_argsort, 12.0 * (double)ns},
    {"sort i32 [1e7]", TC_DT_I32, 1, &ns, op_sort, 8.0 * (double)ns},
    {"argsort i32 [1e7]", TC_DT_I32, 1, &ns, op_argsort, 12.0 * (double)ns},
    {"cumsum i64 [1e7] (chunked)", TC_DT_I64, 1, &ns, op_cumsum, 16.0 * (double)ns},
    {"cumsum f64 [1000, 1e4] (a thread a row)", TC_DT_F64, 2, rows, op_cumsum, 16.0 * (double)ns},
  };
  for (size_t i = 0; i < sizeof ord / sizeof ord[0]; i++) {
    a = filled(TC_ENGINE_CUDA, ord[i].dt, ord[i].nd, ord[i].shape);
    line(ord[i].what, timeit(TC_ENGINE_CUDA, ord[i].f, a, NULL, runs), ord[i].bytes);
    tc_tensor_free(a);
  }
  int64_t la = small ? 128 : 1000, sq2[2] = {la, la}, rhs[1] = {la};
  a = filled(TC_ENGINE_CUDA, TC_DT_F64, 2, sq2);
  b = filled(TC_ENGINE_CUDA, TC_DT_F64, 1, rhs);
  tc_tensor *eye = NULL, *ad = NULL;
  tc_set_engine(TC_ENGINE_CUDA);
  eye = tc_eye(la, la, 0, TC_DT_F64, &err);   /* a + 1000 I: well conditioned */
  tc_tensor *k = eye ? tc_scalar_f64(1000, true, &err) : NULL, *ke = k ? tc_binary(TC_OP_MUL, eye, k, &err) : NULL;
  ad = ke ? tc_binary(TC_OP_ADD, a, ke, &err) : NULL;
  if (!ad) printf("  linear algebra inputs failed: %s\n", err.msg);
  else {
    double la3 = (double)la * (double)la * (double)la;
    mm_line("solve f64 [n,n] [n], n = 1000 (cuSOLVER)", timeit(TC_ENGINE_CUDA, op_solve, ad, b, 3), 2.0 / 3.0 * la3);
    mm_line("inv f64 [n,n], n = 1000 (cuSOLVER)", timeit(TC_ENGINE_CUDA, op_inv, ad, NULL, 3), 2.0 * la3);
  }
  tc_tensor_free(k);
  tc_tensor_free(ke);
  tc_tensor_free(eye);
  tc_tensor_free(ad);
  tc_tensor_free(a);
  tc_tensor_free(b);
  /* Matrix products: 2 * m * n * k operations each. */
  printf("cuBLAS: %s\n", tc_cuda_test_blas());
  int64_t side_mm = small ? 512 : 4096, mm[2] = {side_mm, side_mm};
  double ops = 2.0 * (double)side_mm * (double)side_mm * (double)side_mm;
  char what[64];
  const tc_dtype mdt[2] = {TC_DT_I64, TC_DT_F32};
  for (int i = 0; i < 2; i++) {
    a = filled(TC_ENGINE_CUDA, mdt[i], 2, mm);
    b = filled(TC_ENGINE_CUDA, mdt[i], 2, mm);
    snprintf(what, sizeof what, "matmul %s [%lld,%lld] @ [%lld,%lld]%s", tc_dtype_name(mdt[i]), (long long)side_mm,
             (long long)side_mm, (long long)side_mm, (long long)side_mm, !i ? "" : emulate ? " (emulated kernel)" : " (cuBLAS)");
    mm_line(what, timeit(TC_ENGINE_CUDA, op_matmul, a, b, small ? 3 : 5), ops);
    tc_tensor_free(a);
    tc_tensor_free(b);
  }
  return 0;
}
