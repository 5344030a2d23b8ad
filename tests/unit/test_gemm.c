/* tcalc's float matrix products (backend/cpu/gemm.c and the plain kernel
 * small products use): each element of C is its k products summed in k
 * order from 0, one fused multiply-add per step on the AVX2 and AVX-512
 * kernels, a multiply and then an add on the portable one. So every result
 * is compared bit for bit with a scalar loop doing exactly that, for every
 * instruction set the machine has, every operand layout and thread count,
 * and also with a long double sum within the error bound of a k-term
 * recursive sum, gamma(k+1) * sum |a||b|. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu.h"
#include "tt.h"

static tc_err err;
static void setup(void) {
  tc_err_clear(&err);
  tc_set_threads(0);
  cpu_matmul_isa(99);
}
TestSuite(gemm, .init = setup, .fini = setup);

static uint64_t seed = 0x243f6a8885a308d3u;
/* a value exact in dt, uniform-ish in [-1, 1) */
static double rval(tc_dtype dt) { return tt_round(tt_rand01(&seed) * 2 - 1, dt); }

/* ---- the reference ---- */
/* Element (i, j) of A @ B, A[i,k] = a[i*ars + k*acs], B[k,j] = b[k*brs + j*bcs],
 * summed as the kernel at the current level sums it (f32 or f64 arithmetic). */
static double chain(tc_dtype kd, bool fused, const double *a, int64_t acs, const double *b, int64_t brs, int64_t K) {
  if (kd == TC_DT_F64) {
    double s = 0;
    for (int64_t k = 0; k < K; k++) s = fused ? fma(a[k * acs], b[k * brs], s) : s + a[k * acs] * b[k * brs];
    return s;
  }
  float s = 0;
  for (int64_t k = 0; k < K; k++) {
    float x = (float)a[k * acs], y = (float)b[k * brs];
    s = fused ? fmaf(x, y, s) : s + x * y;
  }
  return s;
}

/* A product with fewer than 8 outputs, or one row or one column, sums each in the lane order of
 * backend/cpu/gemm.c instead: blocks of 2^14 terms, 32 lanes per block
 * (lane l takes k = l, l + 32, ... in k order from 0), the lanes folded in
 * halves (l += l + 16, 8, 4, 2, 1), the blocks added left to right. */
#define LANE_REF(T, NAME, FMA)                                                                          \
  static T NAME(bool fused, const double *a, int64_t acs, const double *b, int64_t brs, int64_t K) {    \
    T total = 0;                                                                                        \
    for (int64_t k0 = 0; k0 < K; k0 += 16384) {                                                         \
      T acc[32] = {0};                                                                                  \
      for (int64_t k = k0; k < K && k < k0 + 16384; k++) {                                              \
        T x = (T)a[k * acs], y = (T)b[k * brs];                                                         \
        int l = (int)((k - k0) % 32);                                                                   \
        acc[l] = fused ? FMA(x, y, acc[l]) : acc[l] + x * y;                                            \
      }                                                                                                 \
      for (int w = 16; w >= 1; w /= 2)                                                                  \
        for (int l = 0; l < w; l++) acc[l] = acc[l] + acc[l + w];                                       \
      total = k0 == 0 ? acc[0] : total + acc[0];                                                        \
    }                                                                                                   \
    return total;                                                                                       \
  }
LANE_REF(float, lanes_f32, fmaf)
LANE_REF(double, lanes_f64, fma)
static double lanes(tc_dtype kd, bool fused, const double *a, int64_t acs, const double *b, int64_t brs, int64_t K) {
  return kd == TC_DT_F64 ? lanes_f64(fused, a, acs, b, brs, K) : lanes_f32(fused, a, acs, b, brs, K);
}

/* |c - exact sum| <= gamma(K + 1) * sum |a||b| (+ K subnormals of slack) */
static bool within_bound(tc_dtype kd, double c, const double *a, int64_t acs, const double *b, int64_t brs, int64_t K) {
  long double s = 0, mag = 0;
  for (int64_t k = 0; k < K; k++) {
    long double p = (long double)a[k * acs] * b[k * brs];
    s += p;
    mag += fabsl(p);
  }
  double u = kd == TC_DT_F64 ? 0x1p-53 : 0x1p-24, tiny = kd == TC_DT_F64 ? 0x1p-1074 : 0x1p-149;
  long double g = (long double)(K + 1) * u / (1 - (long double)(K + 1) * u);
  return fabsl((long double)c - s) <= g * mag + (long double)(K + 1) * tiny;
}

static bool same(double got, double want) {
  if (isnan(want)) return isnan(got);
  return got == want && signbit(got) == signbit(want);
}

static bool fused_now(void) { return cpu_float_isa() > CPU_ISA_BASE; }

/* Checks c (M x N, read back) against logical A and B (row-major values). */
static void check_product(tc_dtype kd, const double *a, const double *b, const double *c, int64_t M, int64_t K,
                          int64_t N, const char *what) {
  bool fused = fused_now();
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      bool few = M * N < 8 || M == 1 || N == 1;
      double want = few ? lanes(kd, fused, a + i * K, 1, b + j, N, K) : chain(kd, fused, a + i * K, 1, b + j, N, K);
      double got = c[i * N + j];
      TT_CHECK(same(got, want), "%s %s %lldx%lldx%lld on %s: [%lld,%lld] is %a, the %s %s sum is %a", what,
               tt_name(kd), (long long)M, (long long)K, (long long)N, cpu_gemm_isa_name(), (long long)i,
               (long long)j, got, few ? "lane-order" : "k-order", fused ? "fused" : "plain", want);
      TT_CHECK(!isfinite(got) || within_bound(kd, got, a + i * K, 1, b + j, N, K), "%s %s: [%lld,%lld] = %a is off the bound",
               what, tt_name(kd), (long long)i, (long long)j, got);
    }
}

static double *rand_values(tc_dtype dt, int64_t n) {
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  cr_assert_not_null(v);
  for (int64_t i = 0; i < n; i++) v[i] = rval(dt);
  return v;
}

static double *read_all(tc_tensor *t) {
  int64_t n = tc_numel(t);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  cr_assert_not_null(v);
  tt_read(t, NULL, v);
  return v;
}

/* a (M x K) @ b (K x N) in dt, as doubles (malloc'd; free them): the
 * product's dtype and shape are checked on the way. */
static double *host_matmul(tc_dtype dt, const double *a, const double *b, int64_t M, int64_t K, int64_t N) {
  tc_tensor *ta = tt_tensor(dt, 2, (int64_t[]){M, K}, NULL, a), *tb = tt_tensor(dt, 2, (int64_t[]){K, N}, NULL, b);
  tc_tensor *tcm = tc_matmul(ta, tb, &err);
  cr_assert_not_null(tcm, "%s", tt_msg(&err));
  cr_assert_eq(tcm->dtype, dt);
  cr_assert(tcm->ndim == 2 && tcm->shape[0] == M && tcm->shape[1] == N);
  double *c = read_all(tcm);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(tcm);
  return c;
}

/* One product of plain contiguous operands against the reference. */
static void check_shape(tc_dtype dt, int64_t M, int64_t K, int64_t N) {
  double *a = rand_values(dt, M * K), *b = rand_values(dt, K * N);
  double *c = host_matmul(dt, a, b, M, K, N);
  check_product(dt, a, b, c, M, K, N, "plain");
  free(a); free(b); free(c);
}

/* The levels the machine has, from the best down. */
static int levels(int *out) {
  int n = 0;
  for (int l = CPU_ISA_COUNT - 1; l >= 0; l--)
    if (cpu_matmul_isa(l) == l) out[n++] = l;
  cpu_matmul_isa(99);
  return n;
}

/* Sizes around the micro-tiles (MR 4, 6, 14; NR 4 to 32), the plain
 * kernel's limit (32768 multiply-adds) and the k block (512). */
static const int64_t dims[] = {1, 7, 15, 17, 31, 33, 63, 65, 127, 129};
static const int64_t big_shapes[][3] = {
  {1031, 65, 47}, {45, 1100, 39}, {29, 70, 1043}, {3, 1500, 2100}, {1, 3000, 700}, {900, 2000, 1}, {14, 512, 32},
  {28, 1024, 64}, {15, 513, 33},
};

Test(gemm, fma_chain_on_every_isa_and_shape) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  const tc_dtype dts[] = {TC_DT_F32, TC_DT_F64};
  for (int l = 0; l < nl; l++) {
    cr_assert_eq(cpu_matmul_isa(lv[l]), lv[l]);
    for (size_t d = 0; d < 2; d++) {
      for (int t = 0; t < 30; t++) {
        int64_t M = dims[tt_rand(&seed) % 10], K = dims[tt_rand(&seed) % 10], N = dims[tt_rand(&seed) % 10];
        check_shape(dts[d], M, K, N);
      }
      for (size_t s = 0; s < sizeof big_shapes / sizeof big_shapes[0]; s++)
        check_shape(dts[d], big_shapes[s][0], big_shapes[s][1], big_shapes[s][2]);
    }
  }
  TT_DONE();
}

Test(gemm, every_edge_size_at_the_best_isa) {
  /* all 1000 triples of the edge sizes (the plain kernel takes the small ones) */
  for (size_t x = 0; x < 10; x++)
    for (size_t y = 0; y < 10; y++)
      for (size_t z = 0; z < 10; z++) check_shape(TC_DT_F32, dims[x], dims[y], dims[z]);
  TT_DONE();
}

/* ---- layouts ---- */
enum { LAY_PLAIN, LAY_TRANS, LAY_STRIDED, LAY_REVERSED, LAY_COUNT };
static const char *lay_name[] = {"contiguous", "transposed", "strided", "reversed"};

/* A view with the values v (rows x cols, row-major) in the given layout;
 * elements outside the view are NaN, so a kernel that reads them shows it. */
static tc_tensor *laid_out(tc_dtype dt, const double *v, int64_t rows, int64_t cols, int lay) {
  tc_tensor *base, *view;
  switch (lay) {
  case LAY_TRANS: {   /* stored cols x rows, viewed transposed */
    double *t = malloc(sizeof *t * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) t[j * rows + i] = v[i * cols + j];
    base = tt_tensor(dt, 2, (int64_t[]){cols, rows}, NULL, t);
    free(t);
    view = tc_view_permute(base, (int[]){1, 0}, &err);
    break;
  }
  case LAY_STRIDED: {   /* every other column of a wider matrix, rows 3 apart */
    int64_t w = 2 * cols + 1, h = 3 * rows;
    double *t = malloc(sizeof *t * (size_t)(w * h));
    for (int64_t i = 0; i < w * h; i++) t[i] = NAN;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) t[3 * i * w + 2 * j + 1] = v[i * cols + j];
    base = tt_tensor(dt, 2, (int64_t[]){h, w}, NULL, t);
    free(t);
    view = tc_view(base, 2, (int64_t[]){rows, cols}, (int64_t[]){3 * w, 2}, 1, &err);
    break;
  }
  case LAY_REVERSED: {   /* rows stored last to first: a negative row stride */
    double *t = malloc(sizeof *t * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows; i++) memcpy(t + (rows - 1 - i) * cols, v + i * cols, sizeof *t * (size_t)cols);
    base = tt_tensor(dt, 2, (int64_t[]){rows, cols}, NULL, t);
    free(t);
    view = tc_view(base, 2, (int64_t[]){rows, cols}, (int64_t[]){-cols, 1}, (rows - 1) * cols, &err);
    break;
  }
  default:
    return tt_tensor(dt, 2, (int64_t[]){rows, cols}, NULL, v);
  }
  cr_assert_not_null(view, "%s", tt_msg(&err));
  tc_tensor_free(base);
  return view;
}

Test(gemm, transposed_strided_and_reversed_operands) {
  const int64_t shapes[][3] = {{65, 129, 33}, {130, 17, 200}, {7, 600, 31}, {40, 50, 1}, {1, 50, 40}, {200, 130, 1}, {1, 300, 150}};
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  for (int l = 0; l < nl; l++) {
    cpu_matmul_isa(lv[l]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int la = 0; la < LAY_COUNT; la++)
        for (int lb = 0; lb < LAY_COUNT; lb++) {
          tc_dtype dt = (la + lb) % 2 ? TC_DT_F64 : TC_DT_F32;
          int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
          double *a = rand_values(dt, M * K), *b = rand_values(dt, K * N);
          tc_tensor *ta = laid_out(dt, a, M, K, la), *tb = laid_out(dt, b, K, N, lb);
          tc_tensor *tcm = tc_matmul(ta, tb, &err);
          cr_assert_not_null(tcm, "%s", tt_msg(&err));
          double *c = read_all(tcm);
          char what[64];
          snprintf(what, sizeof what, "%s @ %s", lay_name[la], lay_name[lb]);
          check_product(dt, a, b, c, M, K, N, what);
          free(a); free(b); free(c);
          tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(tcm);
        }
  }
  TT_DONE();
}

/* ---- batches ---- */
/* a (shape sa) @ b (shape sb) with the leading dims broadcast; checks every
 * product of the batch against the reference. */
static void check_batched(tc_dtype dt, int na, const int64_t *sa, int nb, const int64_t *sb) {
  int64_t ka = 1, kb = 1;
  for (int i = 0; i < na; i++) ka *= sa[i];
  for (int i = 0; i < nb; i++) kb *= sb[i];
  double *a = rand_values(dt, ka), *b = rand_values(dt, kb);
  tc_tensor *ta = tt_tensor(dt, na, sa, NULL, a), *tb = tt_tensor(dt, nb, sb, NULL, b);
  tc_tensor *tcm = tc_matmul(ta, tb, &err);
  cr_assert_not_null(tcm, "%s", tt_msg(&err));
  double *c = read_all(tcm);
  int64_t M = sa[na - 2], K = sa[na - 1], N = sb[nb - 1];
  int nd = tcm->ndim - 2;
  int64_t nbatch = 1;
  for (int d = 0; d < nd; d++) nbatch *= tcm->shape[d];
  for (int64_t bi = 0; bi < nbatch; bi++) {
    /* the operands' matrices for this batch index, broadcasting size-1 dims */
    int64_t rem = bi, oa = 0, ob = 0, sta = M * K, stb = K * N;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t i = rem % tcm->shape[d];
      rem /= tcm->shape[d];
      int da = d - (nd - (na - 2)), db = d - (nd - (nb - 2));
      if (da >= 0) { oa += (sa[da] == 1 ? 0 : i) * sta; sta *= sa[da]; }
      if (db >= 0) { ob += (sb[db] == 1 ? 0 : i) * stb; stb *= sb[db]; }
    }
    check_product(dt, a + oa, b + ob, c + bi * M * N, M, K, N, "batched");
  }
  free(a); free(b); free(c);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(tcm);
}

Test(gemm, broadcast_batches) {
  const int counts[] = {1, 2, 3};
  for (size_t t = 0; t < 3; t++) {
    tc_set_threads(counts[t]);
    check_batched(TC_DT_F32, 3, (int64_t[]){5, 33, 65}, 2, (int64_t[]){65, 47});            /* b broadcast */
    check_batched(TC_DT_F64, 3, (int64_t[]){1, 70, 40}, 3, (int64_t[]){3, 40, 50});         /* a broadcast */
    check_batched(TC_DT_F32, 3, (int64_t[]){9, 40, 50}, 3, (int64_t[]){9, 50, 30});         /* whole products per thread */
    check_batched(TC_DT_F64, 4, (int64_t[]){2, 1, 20, 70}, 3, (int64_t[]){3, 70, 40});      /* both broadcast */
    check_batched(TC_DT_F32, 3, (int64_t[]){2, 300, 200}, 3, (int64_t[]){2, 200, 100});     /* products split across threads */
    check_batched(TC_DT_F32, 3, (int64_t[]){7, 1, 300}, 3, (int64_t[]){7, 300, 200});       /* row vectors */
    check_batched(TC_DT_F64, 3, (int64_t[]){6, 90, 80}, 3, (int64_t[]){1, 80, 1});          /* column vectors */
  }
  TT_DONE();
}

/* ---- thread counts and kernels ---- */
static double *product_bits(tc_tensor *a, tc_tensor *b) {
  tc_tensor *c = tc_matmul(a, b, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  double *v = read_all(c);
  tc_tensor_free(c);
  return v;
}

Test(gemm, same_bits_for_every_thread_count) {
  const int counts[] = {1, 2, 3, 8};
  const int64_t shapes[][4] = {{1, 300, 270, 190}, {1, 700, 300, 100}, {12, 40, 50, 60}, {1, 5, 3000, 300},
                               {1, 4000, 300, 1}, {8, 1, 500, 700}, {1, 1, 600, 5000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int w = 0; w < 2; w++) {
      tc_dtype dt = w ? TC_DT_F64 : TC_DT_F32;
      int64_t nb = shapes[s][0], M = shapes[s][1], K = shapes[s][2], N = shapes[s][3];
      double *a = rand_values(dt, nb * M * K), *b = rand_values(dt, nb * K * N);
      tc_tensor *ta = tt_tensor(dt, 3, (int64_t[]){nb, M, K}, NULL, a), *tb = tt_tensor(dt, 3, (int64_t[]){nb, K, N}, NULL, b);
      double *first = NULL;
      for (size_t t = 0; t < 4; t += tt_sampled() ? 2 : 1) {
        tc_set_threads(counts[t]);
        double *c = product_bits(ta, tb);
        if (!first) {
          for (int64_t bi = 0; bi < nb; bi++)
            check_product(dt, a + bi * M * K, b + bi * K * N, c + bi * M * N, M, K, N, "threads");
          first = c;
          continue;
        }
        cr_assert(memcmp(first, c, sizeof *c * (size_t)(nb * M * N)) == 0,
                  "%s [%lld, %lld, %lld] @ [.., %lld]: 1 and %d threads differ", tt_name(dt), (long long)nb,
                  (long long)M, (long long)K, (long long)N, counts[t]);
        free(c);
      }
      free(first); free(a); free(b);
      tc_tensor_free(ta); tc_tensor_free(tb);
    }
  TT_DONE();
}

Test(gemm, both_fma_kernels_give_the_same_bits) {
  if (cpu_float_isa() < CPU_ISA_AVX512) cr_skip_test("this CPU has one FMA kernel only (%s)", cpu_gemm_isa_name());
  const int64_t M = 333, K = 777, N = 111;
  double *a = rand_values(TC_DT_F32, M * K), *b = rand_values(TC_DT_F32, K * N);
  tc_tensor *ta = tt_tensor(TC_DT_F32, 2, (int64_t[]){M, K}, NULL, a), *tb = tt_tensor(TC_DT_F32, 2, (int64_t[]){K, N}, NULL, b);
  double *c512 = product_bits(ta, tb);
  cpu_matmul_isa(CPU_ISA_AVX2);
  cr_assert_str_eq(cpu_gemm_isa_name(), "avx2");
  double *c256 = product_bits(ta, tb);
  cr_assert(memcmp(c512, c256, sizeof *c512 * (size_t)(M * N)) == 0);
  free(a); free(b); free(c512); free(c256);
  tc_tensor_free(ta); tc_tensor_free(tb);
}

Test(gemm, packed_b_in_chunks) {
  /* B larger than the limit packs in column chunks, and in k chunks when
   * even one sliver of columns is too tall; the limit comes down for the
   * test (16 MiB by default) */
  cr_assert_eq(cpu_gemm_chunk_bytes(64 << 10), 16 << 20);
  const int64_t shapes[][3] = {{37, 300, 200}, {70, 2000, 65}, {5, 9000, 20}, {130, 1100, 129}};
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  for (int l = 0; l < nl; l++) {
    cpu_matmul_isa(lv[l]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      check_shape(TC_DT_F32, shapes[s][0], shapes[s][1], shapes[s][2]);
      check_shape(TC_DT_F64, shapes[s][0], shapes[s][1], shapes[s][2]);
    }
  }
  tc_set_threads(1);
  check_shape(TC_DT_F32, 130, 1100, 129);
  cpu_gemm_chunk_bytes(0);
  check_shape(TC_DT_F32, 3, 4500, 1000);   /* 18 MB of B: two chunks at the default */
  TT_DONE();
}

/* ---- NaN, inf, overflow ---- */
/* B is positive, A finite but for: row 3 has +inf (row 3 is +inf), row 5
 * has +inf where B's row has a 0 in column `zc` (that element is NaN, the
 * rest +inf), row 8 has +inf and -inf (all NaN); B has a NaN in column
 * `nc` (all NaN). Compared with what a plain sum gives. */
static void check_specials(tc_dtype dt, int64_t M, int64_t K, int64_t N) {
  double *a = rand_values(dt, M * K), *b = malloc(sizeof *b * (size_t)(K * N));
  for (int64_t i = 0; i < K * N; i++) b[i] = tt_round(0.5 + tt_rand01(&seed) / 2, dt);
  int64_t zc = N - 2, nc = 1;
  a[3 * K + K - 2] = INFINITY;
  a[5 * K + 2] = INFINITY;
  b[2 * N + zc] = 0;
  a[8 * K + 1] = INFINITY;
  a[8 * K + K - 1] = -INFINITY;
  b[(K - 1) * N + nc] = NAN;
  double *c = host_matmul(dt, a, b, M, K, N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double got = c[i * N + j];
      const char *want = j == nc || i == 8 || (i == 5 && j == zc) ? "nan" : i == 3 || i == 5 ? "+inf" : "finite";
      bool ok = !strcmp(want, "nan") ? isnan(got) : !strcmp(want, "+inf") ? got == INFINITY : isfinite(got);
      TT_CHECK(ok, "%s %lldx%lldx%lld on %s: [%lld,%lld] is %g, expected %s", tt_name(dt), (long long)M, (long long)K,
               (long long)N, cpu_gemm_isa_name(), (long long)i, (long long)j, got, want);
    }
  /* and the NaNs and infs are the reference's bits too */
  if (dt == TC_DT_F32 || dt == TC_DT_F64) check_product(dt, a, b, c, M, K, N, "specials");
  free(a); free(b); free(c);
}

Test(gemm, nan_and_inf_propagate) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  for (int l = 0; l < nl; l++) {
    cpu_matmul_isa(lv[l]);
    const tc_dtype dts[] = {TC_DT_F32, TC_DT_F64, TC_DT_F16, TC_DT_BF16};
    for (size_t d = 0; d < 4; d++) {
      check_specials(dts[d], 10, 5, 6);       /* the plain kernel */
      check_specials(dts[d], 40, 50, 60);     /* the blocked kernel */
      check_specials(dts[d], 30, 1100, 70);   /* across k blocks */
    }
  }
  TT_DONE();
}

Test(gemm, overflow_is_inf_and_underflow_is_zero) {
  const int64_t M = 33, K = 40, N = 35;
  for (int w = 0; w < 2; w++) {
    tc_dtype dt = w ? TC_DT_F64 : TC_DT_F32;
    /* big * big overflows, small * small rounds to 0, big * small = 2^-10 */
    double big = w ? 0x1p600 : 0x1p70, small = w ? 0x1p-610 : 0x1p-80;
    double *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N);
    for (int64_t i = 0; i < M * K; i++) a[i] = i / K % 2 ? -big : small;   /* odd rows huge and negative */
    for (int64_t i = 0; i < K * N; i++) b[i] = i % N % 2 ? big : small;     /* odd columns huge */
    double *c = host_matmul(dt, a, b, M, K, N);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double got = c[i * N + j];
        double want = i % 2 && j % 2 ? -INFINITY : i % 2 ? -0x1p-10 * K : j % 2 ? 0x1p-10 * K : 0.0;
        TT_CHECK(got == want && signbit(got) == signbit(want), "%s [%lld,%lld] is %g, expected %g", tt_name(dt),
                 (long long)i, (long long)j, got, want);
      }
    free(a); free(b); free(c);
  }
  TT_DONE();
}

/* ---- f16 and bf16: f32 sums, rounded once ---- */
Test(gemm, half_formats_multiply_in_f32_and_round_once) {
  const int64_t shapes[][3] = {{5, 6, 7}, {40, 70, 33}, {129, 600, 65}};
  const tc_dtype dts[] = {TC_DT_F16, TC_DT_BF16};
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  for (int l = 0; l < nl; l++) {
    cpu_matmul_isa(lv[l]);
    bool fused = fused_now();
    for (size_t d = 0; d < 2; d++)
      for (size_t s = 0; s < 3; s++) {
        int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
        double *a = rand_values(dts[d], M * K), *b = rand_values(dts[d], K * N);
        tc_tensor *ta = tt_tensor(dts[d], 2, (int64_t[]){M, K}, NULL, a), *tb = tt_tensor(dts[d], 2, (int64_t[]){K, N}, NULL, b);
        tc_tensor *tcm = tc_matmul(ta, tb, &err);
        cr_assert_not_null(tcm, "%s", tt_msg(&err));
        cr_assert_eq(tcm->dtype, dts[d]);
        double *c = read_all(tcm);
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            double want = tt_round(chain(TC_DT_F32, fused, a + i * K, 1, b + j, N, K), dts[d]);
            TT_CHECK(same(c[i * N + j], want), "%s %lldx%lldx%lld on %s: [%lld,%lld] is %a, expected %a",
                     tt_name(dts[d]), (long long)M, (long long)K, (long long)N, cpu_gemm_isa_name(), (long long)i,
                     (long long)j, c[i * N + j], want);
          }
        free(a); free(b); free(c);
        tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(tcm);
      }
  }
  TT_DONE();
}

/* ---- TCALC_BLAS ---- */
Test(gemm, own_kernel_by_default_and_for_a_missing_blas) {
  /* each test runs in its own process: the library is looked up once */
  setenv("TCALC_BLAS", "/nonexistent/libnoblas.so", 1);
  cr_assert_null(cpu_matmul_blas());
  check_shape(TC_DT_F32, 100, 200, 150);   /* still tcalc's kernel, bit for bit */
  unsetenv("TCALC_BLAS");
  TT_DONE();
}

Test(gemm, a_named_cblas_is_used) {
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {   /* under CI a missing dependency fails rather than skips */
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) cr_assert_fail("libopenblas.so.0 is not installed (scripts/install-deps.sh installs libopenblas-dev)");
    cr_skip_test("libopenblas.so.0 is not installed");
  }
  dlclose(h);
  setenv("TCALC_BLAS", "libopenblas.so.0", 1);
  cr_assert_str_eq(cpu_matmul_blas(), "libopenblas.so.0");
  const int64_t M = 100, K = 300, N = 150;
  for (int w = 0; w < 2; w++) {
    tc_dtype dt = w ? TC_DT_F64 : TC_DT_F32;
    double *a = rand_values(dt, M * K), *b = rand_values(dt, K * N);
    double *c = host_matmul(dt, a, b, M, K, N);
    /* the BLAS sums in its own order: only the error bound holds */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        TT_CHECK(within_bound(dt, c[i * N + j], a + i * K, 1, b + j, N, K), "%s via CBLAS: [%lld,%lld] off the bound",
                 tt_name(dt), (long long)i, (long long)j);
    free(a); free(b); free(c);
  }
  unsetenv("TCALC_BLAS");
  TT_DONE();
}

/* check_shape in f64 and f32 on each of n shapes, at 1 to maxt threads
 * (sampled: 1 and maxt, shapes of 2 * 10^6 multiplications at most) */
static void check_shapes_threads(const int64_t (*shapes)[3], size_t n, int maxt) {
  for (int t = 1; t <= maxt; t = t == 1 && tt_sampled() && maxt > 2 ? maxt : t + 1) {
    tc_set_threads(t);
    for (size_t s = 0; s < n; s++) {
      if (tt_sampled() && shapes[s][0] * shapes[s][1] * shapes[s][2] > 2000000) continue;
      check_shape(TC_DT_F64, shapes[s][0], shapes[s][1], shapes[s][2]);
      check_shape(TC_DT_F32, shapes[s][0], shapes[s][1], shapes[s][2]);
    }
  }
}

/* Products with fewer than 8 outputs, one row or one column: the lane
 * order over one and several blocks, in both forms (rows: the matrix
 * contiguous along k; columns: along the outputs, in spans whose width
 * follows the dtype and the thread count, and a part span), on every level
 * and thread count. */
Test(gemm, few_outputs_lane_order_any_threads) {
  /* {1, 1100003, 1}: runs of several blocks a task, and past DOT_PF_MIN (prefetching); {300, 17000, 1}:
     a matrix times a vector past DOT_PF_MIN; {1, 300, 1500}: 1500 outputs in 3 to 6 spans */
  const int64_t shapes[][3] = {{1, 100003, 1}, {3, 40000, 2}, {1, 50000, 5}, {7, 16385, 1}, {1, 31, 1},
                               {1, 20000, 300}, {300, 17000, 1}, {1, 3, 1000}, {129, 45, 1}, {1, 33, 257},
                               {1, 1100003, 1}, {1, 300, 1500}, {1500, 300, 1}};
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  for (int l = 0; l < nl; l++) {
    cpu_matmul_isa(lv[l]);
    check_shapes_threads(shapes, sizeof shapes / sizeof *shapes, 3);
  }
  /* the AVX-512 rows form's groupings (1, 4 or 8 rows at a time), each on
     every shape, whatever the size would choose: units of 8 rows, and the
     rows past the last whole group (7, 129 and 300 outputs) */
  const int64_t rows_shapes[][3] = {{7, 16385, 1}, {129, 45, 1}, {300, 1700, 1}, {1500, 300, 1}, {64, 33, 1}};
  const int groups[] = {1, 4, 8};
  cpu_matmul_isa(99);
  for (int g = 0; g < 3; g++) {
    cpu_dot_rows_group(groups[g]);
    check_shapes_threads(rows_shapes, sizeof rows_shapes / sizeof *rows_shapes, 2);
  }
  cpu_dot_rows_group(0);
  TT_DONE();
}
