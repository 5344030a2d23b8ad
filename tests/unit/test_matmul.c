/* Matrix products (SPEC 5.2): matmul's shape rules, every dtype, the
 * integer kernel against a plain reference on random and edge values for
 * each instruction-set variant the machine has, and dot, outer, tensordot
 * and trace. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tcalc.h"
#include "cpu/cpu.h"
#include "tt.h"

static tc_err err;
static void setup(void) {
  tc_err_clear(&err);
  tc_set_threads(0);
  cpu_matmul_isa(99);
}
TestSuite(matmul, .init = setup);

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) { return tt_xorshift(&rng_state); }

/* A tensor of dtype dt from host values of dtype src (cast on the engine). */
static tc_tensor *from_host(tc_dtype dt, tc_dtype src, int ndim, const int64_t *shape, const void *v) {
  tc_tensor *t = tc_tensor_from_host(src, ndim, shape, v, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  tc_tensor *c = tc_cast(t, dt, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  tc_tensor_free(t);
  return c;
}
static tc_tensor *from_i64(tc_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
  return from_host(dt, TC_DT_I64, ndim, shape, v);
}
static tc_tensor *from_f64(tc_dtype dt, int ndim, const int64_t *shape, const double *v) {
  return from_host(dt, TC_DT_F64, ndim, shape, v);
}

/* The elements of t cast to dt (8-byte elements) in a malloc'd buffer. */
static void *to_host(tc_tensor *t, tc_dtype dt) {
  tc_tensor *c = tc_cast(t, dt, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  int64_t n = tc_numel(c);
  void *v = malloc(8 * (size_t)(n ? n : 1));
  cr_assert_eq(tc_tensor_to_host(c, v, &err), 0, "%s", tt_msg(&err));
  tc_tensor_free(c);
  return v;
}
static int64_t *to_i64(tc_tensor *t) { return to_host(t, TC_DT_I64); }
static double *to_f64(tc_tensor *t) { return to_host(t, TC_DT_F64); }

static void assert_shape(const tc_tensor *t, int ndim, const int64_t *shape) {
  cr_assert_eq(t->ndim, ndim, "ndim %d, expected %d", t->ndim, ndim);
  for (int i = 0; i < ndim; i++) cr_assert_eq(t->shape[i], shape[i], "dim %d is %lld, expected %lld", i,
                                               (long long)t->shape[i], (long long)shape[i]);
}

/* Sign-extends the low `bits` bits of x: the wrapped value in that width. */
static int64_t wrap_to(uint64_t x, int bits) {
  if (bits == 64) return (int64_t)x;
  uint64_t m = (uint64_t)1 << (bits - 1);
  x &= ((uint64_t)1 << bits) - 1;
  return (int64_t)(x ^ m) - (int64_t)m;
}

/* Plain reference for C[b] = A[b] @ B[b] over nb batches (batch strides in
 * elements, 0 for broadcast), integer semantics of width bits (0 = bool). */
static void ref_int(int64_t nb, const int64_t *A, int64_t sa, const int64_t *B, int64_t sb, int64_t M, int64_t K,
                    int64_t N, int bits, int64_t *C) {
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        uint64_t s = 0;
        for (int64_t k = 0; k < K; k++) {
          uint64_t x = (uint64_t)A[b * sa + i * K + k], y = (uint64_t)B[b * sb + k * N + j];
          s = bits ? s + x * y : (s | (x && y));
        }
        C[(b * M + i) * N + j] = bits ? wrap_to(s, bits) : (int64_t)(s != 0);
      }
}

/* Values that stress wrapping: MIN, MAX, -1, 0, 1 and random bits. */
static int64_t edge_value(int bits) {
  uint64_t r = rnd();
  int64_t mn = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), mx = bits == 64 ? INT64_MAX : -(mn + 1);
  switch (r % 8) {
  case 0: return mn;
  case 1: return mx;
  case 2: return -1;
  case 3: return 0;
  case 4: return 1;
  default: return wrap_to(rnd(), bits);
  }
}

static const tc_dtype int_dtypes[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64};

/* One integer product of the given sizes in dtype dt against the reference. */
static void check_int_product(tc_dtype dt, int64_t M, int64_t K, int64_t N) {
  int bits = tc_dtype_bits(dt);
  int64_t *a = malloc(sizeof *a * (size_t)(M * K + 1)), *b = malloc(sizeof *b * (size_t)(K * N + 1));
  int64_t *ref = malloc(sizeof *ref * (size_t)(M * N + 1));
  for (int64_t i = 0; i < M * K; i++) a[i] = edge_value(bits);
  for (int64_t i = 0; i < K * N; i++) b[i] = edge_value(bits);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N};
  tc_tensor *ta = from_i64(dt, 2, sa, a), *tb = from_i64(dt, 2, sb, b);
  tc_tensor *c = tc_matmul(ta, tb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  cr_assert_eq(c->dtype, dt);
  assert_shape(c, 2, so);
  int64_t *got = to_i64(c);
  ref_int(1, a, 0, b, 0, M, K, N, bits, ref);
  for (int64_t i = 0; i < M * N; i++)
    cr_assert_eq(got[i], ref[i], "%s %lldx%lldx%lld (%s kernel): element %lld is %lld, expected %lld",
                 tc_dtype_name(dt), (long long)M, (long long)K, (long long)N, cpu_matmul_isa_name(), (long long)i,
                 (long long)got[i], (long long)ref[i]);
  free(a); free(b); free(ref); free(got);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
}

/* Sizes around the micro-tile (MR up to 8, NR up to 32) and cache blocks
 * (KC 256, MC up to 128), small ones for the plain kernel, thin ones for
 * the matrix-vector path, and a wide one for more than one NC block. */
static const int64_t sizes[][3] = {
  {1, 1, 1}, {2, 3, 4}, {3, 1, 5}, {7, 9, 33}, {8, 16, 32}, {9, 17, 31}, {33, 65, 17}, {64, 64, 64},
  {65, 257, 33}, {130, 70, 129}, {37, 300, 41}, {200, 20, 3}, {2, 500, 200}, {5, 3, 4100}, {1, 4000, 1},
};

Test(matmul, integer_kernel_matches_reference_on_every_isa) {
  for (int isa = 0; isa <= 2; isa++) {
    if (cpu_matmul_isa(isa) != isa) continue;   /* the machine lacks it */
    for (size_t d = 0; d < sizeof int_dtypes / sizeof int_dtypes[0]; d++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        check_int_product(int_dtypes[d], sizes[s][0], sizes[s][1], sizes[s][2]);
  }
}

Test(matmul, integer_kernel_on_one_thread) {
  tc_set_threads(1);
  for (size_t d = 0; d < sizeof int_dtypes / sizeof int_dtypes[0]; d++) {
    check_int_product(int_dtypes[d], 130, 300, 70);
    check_int_product(int_dtypes[d], 9, 17, 31);
  }
}

Test(matmul, exact_beyond_double_precision) {
  int64_t s[2] = {1, 1}, a = 9007199254740993, one = 1;
  tc_tensor *ta = from_i64(TC_DT_I64, 2, s, &a), *tb = from_i64(TC_DT_I64, 2, s, &one);
  tc_tensor *c = tc_matmul(ta, tb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  int64_t *v = to_i64(c);
  cr_assert_eq(v[0], 9007199254740993);
  free(v);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
}

Test(matmul, wraps_in_the_result_dtype) {
  /* i32: MAX * 2 + MIN * MIN wraps to -2; i8: 100 * 3 + 100 * 3 = 600 -> 88 */
  int64_t s12[2] = {1, 2}, s21[2] = {2, 1};
  int64_t a32[2] = {INT32_MAX, INT32_MIN}, b32[2] = {2, INT32_MIN};
  tc_tensor *ta = from_i64(TC_DT_I32, 2, s12, a32), *tb = from_i64(TC_DT_I32, 2, s21, b32);
  tc_tensor *c = tc_matmul(ta, tb, &err);
  int64_t *v = to_i64(c);
  cr_assert_eq(c->dtype, TC_DT_I32);
  cr_assert_eq(v[0], -2);
  free(v);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
  int64_t a8[2] = {100, 100}, b8[2] = {3, 3};
  ta = from_i64(TC_DT_I8, 2, s12, a8);
  tb = from_i64(TC_DT_I8, 2, s21, b8);
  c = tc_matmul(ta, tb, &err);
  v = to_i64(c);
  cr_assert_eq(c->dtype, TC_DT_I8);
  cr_assert_eq(v[0], 88);
  free(v);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
}

Test(matmul, bool_is_or_of_ands) {
  /* sizes for the plain kernel and for the blocked one (K across blocks) */
  const int64_t bs[][3] = {{2, 3, 2}, {40, 600, 50}, {1, 5000, 1}};
  for (size_t s = 0; s < 3; s++) {
    int64_t M = bs[s][0], K = bs[s][1], N = bs[s][2];
    int64_t *a = malloc(sizeof *a * (size_t)(M * K)), *b = malloc(sizeof *b * (size_t)(K * N));
    int64_t *ref = malloc(sizeof *ref * (size_t)(M * N));
    /* sparse, so that some results are false */
    for (int64_t i = 0; i < M * K; i++) a[i] = rnd() % 97 == 0;
    for (int64_t i = 0; i < K * N; i++) b[i] = rnd() % 89 == 0;
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    tc_tensor *ta = from_i64(TC_DT_BOOL, 2, sa, a), *tb = from_i64(TC_DT_BOOL, 2, sb, b);
    tc_tensor *c = tc_matmul(ta, tb, &err);
    cr_assert_not_null(c, "%s", tt_msg(&err));
    cr_assert_eq(c->dtype, TC_DT_BOOL);
    int64_t *got = to_i64(c);
    ref_int(1, a, 0, b, 0, M, K, N, 0, ref);
    bool any_true = false, any_false = false;
    for (int64_t i = 0; i < M * N; i++) {
      cr_assert_eq(got[i], ref[i], "bool %lldx%lldx%lld element %lld", (long long)M, (long long)K, (long long)N,
                   (long long)i);
      any_true |= ref[i] != 0;
      any_false |= ref[i] == 0;
    }
    if (s == 1) cr_assert(any_true && any_false, "the test data should give both values");
    free(a); free(b); free(ref); free(got);
    tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
  }
}

/* Float products against a double reference, within a bound that scales
 * with the sum of |a||b| and the dtype's epsilon. */
static void check_float_product(tc_dtype dt, int64_t M, int64_t K, int64_t N, double eps) {
  double *a = malloc(sizeof *a * (size_t)(M * K)), *b = malloc(sizeof *b * (size_t)(K * N));
  double scale = dt == TC_DT_F16 ? 1024 : 64;   /* keep f16 sums below its largest value */
  for (int64_t i = 0; i < M * K; i++) a[i] = (double)(int64_t)(rnd() % 2001 - 1000) / scale;
  for (int64_t i = 0; i < K * N; i++) b[i] = (double)(int64_t)(rnd() % 2001 - 1000) / scale;
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  tc_tensor *ta = from_f64(dt, 2, sa, a), *tb = from_f64(dt, 2, sb, b);
  /* the reference multiplies the values as stored in dt */
  double *ra = to_f64(ta), *rb = to_f64(tb);
  tc_tensor *c = tc_matmul(ta, tb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  cr_assert_eq(c->dtype, dt);
  double *got = to_f64(c);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < K; k++) { s += ra[i * K + k] * rb[k * N + j]; mag += fabs(ra[i * K + k] * rb[k * N + j]); }
      double tol = eps * (mag + fabs(s)) * 2 + 1e-300;
      cr_assert(fabs(got[i * N + j] - s) <= tol, "%s %lldx%lldx%lld [%lld,%lld]: %.17g, expected %.17g",
                tc_dtype_name(dt), (long long)M, (long long)K, (long long)N, (long long)i, (long long)j,
                got[i * N + j], s);
    }
  free(a); free(b); free(ra); free(rb); free(got);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
}

Test(matmul, float_dtypes) {
  const int64_t fs[][3] = {{2, 3, 4}, {17, 33, 9}, {70, 130, 90}, {1, 300, 1}};
  for (size_t s = 0; s < 4; s++) {
    check_float_product(TC_DT_F64, fs[s][0], fs[s][1], fs[s][2], 0x1p-52 * (double)fs[s][1]);
    check_float_product(TC_DT_F32, fs[s][0], fs[s][1], fs[s][2], 0x1p-23 * (double)fs[s][1]);
    /* f32 accumulation, one rounding to the 16-bit format at the end */
    check_float_product(TC_DT_F16, fs[s][0], fs[s][1], fs[s][2], 0x1p-11 + 0x1p-23 * (double)fs[s][1]);
    check_float_product(TC_DT_BF16, fs[s][0], fs[s][1], fs[s][2], 0x1p-8 + 0x1p-23 * (double)fs[s][1]);
  }
}

Test(matmul, float_products_without_a_blas) {
  /* each test runs in its own process, so this one loads no CBLAS */
  setenv("TCALC_BLAS", "none", 1);
  cr_assert_null(cpu_matmul_blas());
  check_float_product(TC_DT_F64, 70, 130, 90, 0x1p-52 * 130);
  check_float_product(TC_DT_F32, 300, 40, 200, 0x1p-23 * 40);
  unsetenv("TCALC_BLAS");
}

Test(matmul, half_rounds_once_from_f32) {
  /* 1 + 2^-11 + 2^-11 is exact in f32 and rounds to 1 + 2^-10 in f16; rounding
   * after each addition would give 1 (ties to even, twice) */
  int64_t s13[2] = {1, 3}, s31[2] = {3, 1};
  double a[3] = {1, 0x1p-11, 0x1p-11}, b[3] = {1, 1, 1};
  tc_tensor *ta = from_f64(TC_DT_F32, 2, s13, a), *tb = from_f64(TC_DT_F32, 2, s31, b);
  tc_tensor *ha = tc_cast(ta, TC_DT_F16, &err), *hb = tc_cast(tb, TC_DT_F16, &err);
  tc_tensor *c = tc_matmul(ha, hb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  cr_assert_eq(c->dtype, TC_DT_F16);
  double *v = to_f64(c);
  cr_assert_eq(v[0], 1 + 0x1p-10, "got %.17g", v[0]);
  free(v);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(ha); tc_tensor_free(hb); tc_tensor_free(c);
}

Test(matmul, promotion) {
  int64_t s[2] = {2, 2}, v[4] = {1, 2, 3, 4};
  struct { tc_dtype a, b, out; } cases[] = {
    {TC_DT_I8, TC_DT_I64, TC_DT_I64}, {TC_DT_I32, TC_DT_F32, TC_DT_F32}, {TC_DT_BOOL, TC_DT_I16, TC_DT_I16},
    {TC_DT_BF16, TC_DT_F16, TC_DT_F16}, {TC_DT_I64, TC_DT_BF16, TC_DT_BF16}, {TC_DT_F32, TC_DT_F64, TC_DT_F64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_tensor *a = from_i64(cases[i].a, 2, s, v), *b = from_i64(cases[i].b, 2, s, v);
    tc_tensor *c = tc_matmul(a, b, &err);
    cr_assert_not_null(c, "%s", tt_msg(&err));
    cr_assert_eq(c->dtype, cases[i].out, "%s @ %s gave %s", tc_dtype_name(cases[i].a), tc_dtype_name(cases[i].b),
                 tc_dtype_name(c->dtype));
    int64_t *r = to_i64(c);
    if (cases[i].a != TC_DT_BOOL) {
      cr_assert_eq(r[0], 7);
      cr_assert_eq(r[3], 22);
    }
    free(r);
    tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c);
  }
}

/* ---- shape rules ---- */
/* matmul of a (shape sa) and b (shape sb) filled with small random ints,
 * checked against ref on the promoted, broadcast operands. */
static void check_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int nout, const int64_t *sout) {
  int64_t ka = 1, kb = 1;
  for (int i = 0; i < na; i++) ka *= sa[i];
  for (int i = 0; i < nb; i++) kb *= sb[i];
  int64_t *a = malloc(sizeof *a * (size_t)(ka + 1)), *b = malloc(sizeof *b * (size_t)(kb + 1));
  for (int64_t i = 0; i < ka; i++) a[i] = (int64_t)(rnd() % 21) - 10;
  for (int64_t i = 0; i < kb; i++) b[i] = (int64_t)(rnd() % 21) - 10;
  tc_tensor *ta = from_i64(TC_DT_I32, na, sa, a), *tb = from_i64(TC_DT_I32, nb, sb, b);
  tc_tensor *c = tc_matmul(ta, tb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  assert_shape(c, nout, sout);
  int64_t *got = to_i64(c);
  /* the reference: promote 1-D, then walk the broadcast batch by hand */
  int64_t pa[TC_MAX_DIMS + 1], pb[TC_MAX_DIMS + 1];
  int qa = na < 2 ? 2 : na, qb = nb < 2 ? 2 : nb;
  if (na == 1) { pa[0] = 1; pa[1] = sa[0]; } else memcpy(pa, sa, sizeof *sa * (size_t)na);
  if (nb == 1) { pb[0] = sb[0]; pb[1] = 1; } else memcpy(pb, sb, sizeof *sb * (size_t)nb);
  int64_t M = pa[qa - 2], K = pa[qa - 1], N = pb[qb - 1];
  int nbd = (qa > qb ? qa : qb) - 2;
  int64_t bshape[TC_MAX_DIMS], nbatch = 1;
  for (int d = 0; d < nbd; d++) {
    int da = d - (nbd - (qa - 2)), db = d - (nbd - (qb - 2));
    int64_t x = da >= 0 ? pa[da] : 1, y = db >= 0 ? pb[db] : 1;
    bshape[d] = x == 1 ? y : x;
    nbatch *= bshape[d];
  }
  int64_t total = 0;
  for (int64_t bi = 0; bi < nbatch; bi++) {
    int64_t rem = bi, oa = 0, ob = 0, sta = M * K, stb = K * N;
    for (int d = nbd - 1; d >= 0; d--) {
      int64_t i = rem % bshape[d];
      rem /= bshape[d];
      int da = d - (nbd - (qa - 2)), db = d - (nbd - (qb - 2));
      if (da >= 0) { oa += (pa[da] == 1 ? 0 : i) * sta; sta *= pa[da]; }
      if (db >= 0) { ob += (pb[db] == 1 ? 0 : i) * stb; stb *= pb[db]; }
    }
    int64_t *r = malloc(sizeof *r * (size_t)(M * N + 1));
    ref_int(1, a + oa, 0, b + ob, 0, M, K, N, 32, r);
    for (int64_t i = 0; i < M * N; i++, total++)
      cr_assert_eq(got[total], r[i], "batch %lld element %lld: %lld, expected %lld", (long long)bi, (long long)i,
                   (long long)got[total], (long long)r[i]);
    free(r);
  }
  cr_assert_eq(total, tc_numel(c));
  free(a); free(b); free(got);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(c);
}

#define SH(...) (int64_t[]){__VA_ARGS__}
Test(matmul, shape_rules) {
  check_shapes(2, SH(2, 3), 2, SH(3, 4), 2, SH(2, 4));
  check_shapes(1, SH(3), 1, SH(3), 0, SH(0));                           /* vector . vector: 0-d */
  check_shapes(1, SH(3), 2, SH(3, 4), 1, SH(4));                        /* row promoted, then removed */
  check_shapes(2, SH(2, 3), 1, SH(3), 1, SH(2));                        /* column promoted, then removed */
  check_shapes(1, SH(4), 3, SH(2, 4, 3), 2, SH(2, 3));                  /* 1-D against a stack */
  check_shapes(3, SH(2, 3, 4), 1, SH(4), 2, SH(2, 3));
  check_shapes(3, SH(5, 2, 3), 3, SH(5, 3, 4), 3, SH(5, 2, 4));         /* batched */
  check_shapes(4, SH(2, 1, 3, 4), 3, SH(5, 4, 2), 4, SH(2, 5, 3, 2));   /* batch dims broadcast */
  check_shapes(3, SH(1, 3, 4), 2, SH(4, 2), 3, SH(1, 3, 2));
  check_shapes(2, SH(3, 4), 4, SH(2, 2, 4, 5), 4, SH(2, 2, 3, 5));
  check_shapes(3, SH(40, 9, 7), 3, SH(40, 7, 11), 3, SH(40, 9, 11));    /* many small products */
  check_shapes(3, SH(3, 70, 90), 3, SH(1, 90, 80), 3, SH(3, 70, 80));   /* blocked, with a broadcast batch */
}

Test(matmul, empty_operands) {
  check_shapes(2, SH(0, 3), 2, SH(3, 4), 2, SH(0, 4));
  check_shapes(2, SH(2, 3), 2, SH(3, 0), 2, SH(2, 0));
  check_shapes(3, SH(0, 2, 3), 2, SH(3, 4), 3, SH(0, 2, 4));
  /* k = 0: sums over nothing are zeros */
  int64_t sa[2] = {2, 0}, sb[2] = {0, 3}, so[2] = {2, 3};
  const tc_dtype dts[] = {TC_DT_BOOL, TC_DT_I8, TC_DT_I64, TC_DT_F16, TC_DT_F32, TC_DT_F64};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    tc_tensor *a = tc_tensor_new(dts[d], 2, sa, &err), *b = tc_tensor_new(dts[d], 2, sb, &err);
    tc_tensor *c = tc_matmul(a, b, &err);
    cr_assert_not_null(c, "%s", tt_msg(&err));
    assert_shape(c, 2, so);
    double *v = to_f64(c);
    for (int i = 0; i < 6; i++) cr_assert_eq(v[i], 0.0, "%s", tc_dtype_name(dts[d]));
    free(v);
    tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c);
  }
}

static void expect_error(tc_tensor *r, tc_code code, const char *needle) {
  cr_assert_null(r);
  cr_assert_eq(err.code, code, "code %s: %s", tc_code_name(err.code), tt_msg(&err));
  cr_assert(strstr(tt_msg(&err), needle) != NULL, "message \"%s\" lacks \"%s\"", tt_msg(&err), needle);
  tc_err_clear(&err);
}

Test(matmul, shape_errors_name_both_shapes) {
  int64_t v[64] = {0};
  tc_tensor *a = from_i64(TC_DT_I64, 2, SH(2, 3), v), *b = from_i64(TC_DT_I64, 2, SH(4, 5), v);
  expect_error(tc_matmul(a, b, &err), TC_E_SHAPE, "matmul: shapes [2, 3] and [4, 5]");
  tc_tensor *c = from_i64(TC_DT_I64, 3, SH(2, 3, 4), v), *d = from_i64(TC_DT_I64, 3, SH(3, 4, 5), v);
  expect_error(tc_matmul(c, d, &err), TC_E_SHAPE, "shapes [2, 3, 4] and [3, 4, 5] do not match: batch");
  tc_tensor *e = from_i64(TC_DT_I64, 1, SH(2), v), *f = from_i64(TC_DT_I64, 1, SH(3), v);
  expect_error(tc_matmul(e, f, &err), TC_E_SHAPE, "[2] and [3]");
  tc_tensor *s = tc_scalar_i64(2, true, &err);
  expect_error(tc_matmul(s, e, &err), TC_E_BAD_ARG, "scalar");
  expect_error(tc_matmul(e, s, &err), TC_E_BAD_ARG, "scalar");
  /* the infix operator reaches the same rules */
  expect_error(tc_binary(TC_OP_MATMUL, a, b, &err), TC_E_SHAPE, "[2, 3] and [4, 5]");
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c); tc_tensor_free(d);
  tc_tensor_free(e); tc_tensor_free(f); tc_tensor_free(s);
}

Test(matmul, strided_and_broadcast_operands) {
  /* a transposed view and a stride-0 broadcast view multiply as their values */
  int64_t v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  tc_tensor *a = from_i64(TC_DT_I64, 2, SH(4, 3), v);
  int perm[2] = {1, 0};
  tc_tensor *at = tc_view_permute(a, perm, &err);         /* [3, 4] */
  tc_tensor *row = from_i64(TC_DT_I64, 1, SH(4), v);
  tc_tensor *bc = tc_view_broadcast(row, 2, SH(3, 4), &err);  /* [3, 4], stride 0 rows */
  int perm2[2] = {1, 0};
  tc_tensor *bct = tc_view_permute(bc, perm2, &err);       /* [4, 3] */
  tc_tensor *c = tc_matmul(at, a, &err);                   /* [3, 3] = a^T a */
  cr_assert_not_null(c, "%s", tt_msg(&err));
  int64_t *g = to_i64(c);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int64_t s = 0;
      for (int k = 0; k < 4; k++) s += v[k * 3 + i] * v[k * 3 + j];
      cr_assert_eq(g[i * 3 + j], s);
    }
  free(g);
  tc_tensor *d = tc_matmul(at, bct, &err);                 /* [3, 3]: column j of bct is row */
  cr_assert_not_null(d, "%s", tt_msg(&err));
  g = to_i64(d);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int64_t s = 0;
      for (int k = 0; k < 4; k++) s += v[k * 3 + i] * v[k];
      cr_assert_eq(g[i * 3 + j], s);
    }
  free(g);
  /* the same through the float path (CBLAS or not) */
  tc_tensor *af = tc_cast(at, TC_DT_F64, &err), *bf = tc_cast(a, TC_DT_F64, &err);
  tc_tensor *af_t = tc_view_permute(af, perm, &err);
  tc_tensor *big = tc_matmul(af, bf, &err);
  double *gf = to_f64(big);
  cr_assert_eq(gf[0], 1 * 1 + 4 * 4 + 7 * 7 + 10 * 10);
  free(gf);
  tc_tensor *big2 = tc_matmul(af_t, af, &err);             /* [4,3] @ [3,4] */
  cr_assert_not_null(big2, "%s", tt_msg(&err));
  gf = to_f64(big2);
  cr_assert_eq(gf[0], 1 * 1 + 2 * 2 + 3 * 3);
  free(gf);
  tc_tensor_free(a); tc_tensor_free(at); tc_tensor_free(row); tc_tensor_free(bc); tc_tensor_free(bct);
  tc_tensor_free(c); tc_tensor_free(d); tc_tensor_free(af); tc_tensor_free(bf); tc_tensor_free(af_t);
  tc_tensor_free(big); tc_tensor_free(big2);
}

Test(matmul, large_float_strided_operands) {
  /* big enough for the CBLAS path: a transposed A, a broadcast batch of B */
  int64_t M = 70, K = 90, N = 80;
  double *a = malloc(sizeof *a * (size_t)(K * M)), *b = malloc(sizeof *b * (size_t)(K * N));
  for (int64_t i = 0; i < K * M; i++) a[i] = (double)(int64_t)(rnd() % 17) - 8;
  for (int64_t i = 0; i < K * N; i++) b[i] = (double)(int64_t)(rnd() % 17) - 8;
  tc_tensor *ta = from_f64(TC_DT_F32, 2, SH(K, M), a), *tb = from_f64(TC_DT_F32, 2, SH(K, N), b);
  int perm[2] = {1, 0};
  tc_tensor *at = tc_view_permute(ta, perm, &err);
  tc_tensor *bb = tc_view_broadcast(tb, 3, SH(2, K, N), &err);
  tc_tensor *c = tc_matmul(at, bb, &err);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  assert_shape(c, 3, SH(2, M, N));
  double *g = to_f64(c);
  for (int64_t bi = 0; bi < 2; bi++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += a[k * M + i] * b[k * N + j];
        cr_assert_eq(g[(bi * M + i) * N + j], s);   /* small integers: exact in f32 */
      }
  free(g);
  /* strides CBLAS cannot take (a stride-0 column): copied first */
  tc_tensor *row = from_f64(TC_DT_F64, 1, SH(K), b);
  tc_tensor *rows = tc_view_broadcast(row, 2, SH(N, K), &err);
  tc_tensor *cols = tc_view_permute(rows, perm, &err);     /* [K, N], strides (1, 0) */
  tc_tensor *at64 = tc_cast(at, TC_DT_F64, &err);
  tc_tensor *d = tc_matmul(at64, cols, &err);
  cr_assert_not_null(d, "%s", tt_msg(&err));
  g = to_f64(d);
  for (int64_t i = 0; i < M; i++) {
    double s = 0;
    for (int64_t k = 0; k < K; k++) s += a[k * M + i] * b[k];
    for (int64_t j = 0; j < N; j++) cr_assert_eq(g[i * N + j], s);
  }
  free(a); free(b); free(g);
  tc_tensor_free(row); tc_tensor_free(rows); tc_tensor_free(cols); tc_tensor_free(at64); tc_tensor_free(d);
  tc_tensor_free(ta); tc_tensor_free(tb); tc_tensor_free(at); tc_tensor_free(bb); tc_tensor_free(c);
}

Test(matmul, interrupt_stops_the_kernel) {
  const tc_dtype dts[] = {TC_DT_I64, TC_DT_I32, TC_DT_F32, TC_DT_F64};
  for (size_t d = 0; d < 4; d++) {
    int64_t *z = calloc(300 * 300, sizeof *z);
    tc_tensor *a = from_i64(dts[d], 2, SH(300, 300), z);
    free(z);
    tc_interrupt_flag = 1;
    tc_tensor *c = tc_matmul(a, a, &err);
    tc_interrupt_clear();
    expect_error(c, TC_E_INTERRUPTED, "interrupted");
    /* and nothing is left broken */
    c = tc_matmul(a, a, &err);
    cr_assert_not_null(c, "%s", tt_msg(&err));
    tc_tensor_free(c);
    tc_tensor_free(a);
  }
}

/* ---- dot, outer, tensordot, trace ---- */
Test(matmul, dot_semantics) {
  int64_t v[24];
  for (int i = 0; i < 24; i++) v[i] = i - 7;
  /* a 0-d operand scales */
  tc_tensor *s = tc_scalar_i64(3, true, &err), *x = from_i64(TC_DT_I32, 1, SH(3), v);
  tc_tensor *r = tc_dot(s, x, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(r->dtype, TC_DT_I32, "a weak scalar keeps the tensor's dtype");
  assert_shape(r, 1, SH(3));
  int64_t *g = to_i64(r);
  cr_assert(g[0] == -21 && g[1] == -18 && g[2] == -15);
  free(g); tc_tensor_free(r);
  /* vector . vector */
  r = tc_dot(x, x, &err);
  assert_shape(r, 0, SH(0));
  g = to_i64(r);
  cr_assert_eq(g[0], 49 + 36 + 25);
  free(g); tc_tensor_free(r);
  /* N-D . M-D: the last axis of a with the second-to-last of b, no broadcasting:
   * dot(a[2,3,4], b[5,4,6]) has shape [2,3,5,6] */
  tc_tensor *a = from_i64(TC_DT_I64, 3, SH(2, 3, 4), v);
  int64_t bv[120];
  for (int i = 0; i < 120; i++) bv[i] = (i * 7) % 11 - 5;
  tc_tensor *b = from_i64(TC_DT_I64, 3, SH(5, 4, 6), bv);
  r = tc_dot(a, b, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  assert_shape(r, 4, SH(2, 3, 5, 6));
  g = to_i64(r);
  for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) for (int k = 0; k < 5; k++) for (int m = 0; m < 6; m++) {
    int64_t e = 0;
    for (int t = 0; t < 4; t++) e += v[(i * 3 + j) * 4 + t] * bv[(k * 4 + t) * 6 + m];
    cr_assert_eq(g[((i * 3 + j) * 5 + k) * 6 + m], e);
  }
  free(g); tc_tensor_free(r);
  /* N-D . 1-D sums over the last axis */
  tc_tensor *w = from_i64(TC_DT_I64, 1, SH(4), v);
  r = tc_dot(a, w, &err);
  assert_shape(r, 2, SH(2, 3));
  tc_tensor_free(r);
  /* mismatches are errors of dot */
  expect_error(tc_dot(a, a, &err), TC_E_SHAPE, "dot: shapes [2, 3, 4] and [2, 3, 4]");
  /* bool . bool is or-of-ands, also for a scalar */
  tc_tensor *t = tc_scalar_bool(true, &err);
  int64_t bb[2] = {1, 0};
  tc_tensor *bvec = from_i64(TC_DT_BOOL, 1, SH(2), bb);
  r = tc_dot(t, bvec, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(r->dtype, TC_DT_BOOL);
  tc_tensor_free(r);
  r = tc_dot(bvec, bvec, &err);
  g = to_i64(r);
  cr_assert_eq(g[0], 1);
  free(g); tc_tensor_free(r);
  tc_tensor_free(s); tc_tensor_free(x); tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(w);
  tc_tensor_free(t); tc_tensor_free(bvec);
}

Test(matmul, outer_flattens) {
  int64_t v[4] = {1, 2, 3, 4}, u[3] = {10, -1, 0};
  tc_tensor *a = from_i64(TC_DT_I16, 2, SH(2, 2), v), *b = from_i64(TC_DT_I64, 1, SH(3), u);
  tc_tensor *r = tc_outer(a, b, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(r->dtype, TC_DT_I64);
  assert_shape(r, 2, SH(4, 3));
  int64_t *g = to_i64(r);
  for (int i = 0; i < 4; i++) for (int j = 0; j < 3; j++) cr_assert_eq(g[i * 3 + j], v[i] * u[j]);
  free(g); tc_tensor_free(r);
  /* a scalar is a vector of one; a weak one takes the other's dtype */
  tc_tensor *s = tc_scalar_i64(2, true, &err);
  r = tc_outer(s, b, &err);
  assert_shape(r, 2, SH(1, 3));
  tc_tensor_free(r);
  r = tc_outer(s, a, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(r->dtype, TC_DT_I16);
  assert_shape(r, 2, SH(1, 4));
  g = to_i64(r);
  cr_assert(g[0] == 2 && g[3] == 8);
  free(g);
  tc_tensor_free(r);
  tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(s);
}

Test(matmul, tensordot_axes) {
  int64_t v[24], w[24];
  for (int i = 0; i < 24; i++) { v[i] = i % 7 - 3; w[i] = i % 5 - 2; }
  tc_tensor *a = from_i64(TC_DT_I64, 3, SH(2, 3, 4), v), *b = from_i64(TC_DT_I64, 3, SH(3, 4, 2), w);
  /* n = 2: the last two of a with the first two of b -> [2, 2] */
  int64_t xa[2] = {1, 2}, xb[2] = {0, 1};
  tc_tensor *r = tc_tensordot(a, b, 2, xa, xb, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  assert_shape(r, 2, SH(2, 2));
  int64_t *g = to_i64(r);
  for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++) {
    int64_t e = 0;
    for (int p = 0; p < 3; p++) for (int q = 0; q < 4; q++) e += v[(i * 3 + p) * 4 + q] * w[(p * 4 + q) * 2 + j];
    cr_assert_eq(g[i * 2 + j], e);
  }
  free(g); tc_tensor_free(r);
  /* axes in another order, and negative: a axis 0 with b axis -1 -> [3, 4, 3, 4] */
  int64_t ya[1] = {0}, yb[1] = {-1};
  r = tc_tensordot(a, b, 1, ya, yb, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  assert_shape(r, 4, SH(3, 4, 3, 4));
  g = to_i64(r);
  for (int p = 0; p < 3; p++) for (int q = 0; q < 4; q++) for (int s = 0; s < 3; s++) for (int t = 0; t < 4; t++) {
    int64_t e = 0;
    for (int i = 0; i < 2; i++) e += v[(i * 3 + p) * 4 + q] * w[(s * 4 + t) * 2 + i];
    cr_assert_eq(g[((p * 4 + q) * 3 + s) * 4 + t], e);
  }
  free(g); tc_tensor_free(r);
  /* n = 0: the outer product, shape a + b */
  r = tc_tensordot(a, b, 0, NULL, NULL, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  assert_shape(r, 6, SH(2, 3, 4, 3, 4, 2));
  tc_tensor_free(r);
  /* errors */
  int64_t bad1[1] = {3}, bad2[2] = {1, 1}, bad3[2] = {0, 1}, ok2[2] = {0, 1};
  expect_error(tc_tensordot(a, b, 1, bad1, xb, &err), TC_E_AXIS, "out of range");
  expect_error(tc_tensordot(a, b, 2, bad2, ok2, &err), TC_E_AXIS, "repeated");
  expect_error(tc_tensordot(a, b, 2, bad3, ok2, &err), TC_E_SHAPE, "axis 0 of a has size 2, axis 0 of b has size 3");
  tc_tensor_free(a); tc_tensor_free(b);
}

Test(matmul, trace_semantics) {
  int64_t v[24];
  for (int i = 0; i < 24; i++) v[i] = i;
  tc_tensor *m = from_i64(TC_DT_I32, 2, SH(3, 4), v);   /* non-square: min(3, 4) diagonal */
  tc_tensor *r = tc_trace(m, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(r->dtype, TC_DT_I32);
  assert_shape(r, 0, SH(0));
  int64_t *g = to_i64(r);
  cr_assert_eq(g[0], 0 + 5 + 10);
  free(g); tc_tensor_free(r);
  tc_tensor *t3 = from_i64(TC_DT_I64, 3, SH(2, 3, 4), v);   /* the rest of the dims stay */
  r = tc_trace(t3, &err);
  assert_shape(r, 1, SH(4));
  g = to_i64(r);
  for (int k = 0; k < 4; k++) cr_assert_eq(g[k], v[0 * 12 + 0 * 4 + k] + v[1 * 12 + 1 * 4 + k]);
  free(g); tc_tensor_free(r);
  int64_t bv[4] = {1, 1, 1, 1};
  tc_tensor *bm = from_i64(TC_DT_BOOL, 2, SH(2, 2), bv);
  r = tc_trace(bm, &err);
  cr_assert_eq(r->dtype, TC_DT_I64, "bool sums to i64, as reduce_sum");
  g = to_i64(r);
  cr_assert_eq(g[0], 2);
  free(g); tc_tensor_free(r);
  int64_t w8[4] = {100, 0, 0, 100};
  tc_tensor *m8 = from_i64(TC_DT_I8, 2, SH(2, 2), w8);
  r = tc_trace(m8, &err);
  g = to_i64(r);
  cr_assert_eq(g[0], -56, "i8 wraps");
  free(g); tc_tensor_free(r);
  tc_tensor *vec = from_i64(TC_DT_I64, 1, SH(3), v);
  expect_error(tc_trace(vec, &err), TC_E_BAD_ARG, "trace: needs at least 2 dimensions");
  tc_tensor_free(m); tc_tensor_free(t3); tc_tensor_free(bm); tc_tensor_free(m8); tc_tensor_free(vec);
}

Test(matmul, capability_table) {
  for (int dt = 0; dt < TC_DT_COUNT; dt++) {
    cr_assert(tc_op_supported(TC_OP_MATMUL, (tc_dtype)dt, TC_ENGINE_CPU), "matmul %s", tc_dtype_name((tc_dtype)dt));
    cr_assert(tc_op_supported(TC_OP_DOT, (tc_dtype)dt, TC_ENGINE_CPU));
    cr_assert(tc_op_supported(TC_OP_OUTER, (tc_dtype)dt, TC_ENGINE_CPU));
    cr_assert(tc_op_supported(TC_OP_TENSORDOT, (tc_dtype)dt, TC_ENGINE_CPU));
    cr_assert(tc_op_supported(TC_OP_TRACE, (tc_dtype)dt, TC_ENGINE_CPU));
  }
  cr_assert_eq(tc_op_from_name("matmul"), TC_OP_MATMUL);
  cr_assert_str_eq(tc_op_symbol(TC_OP_MATMUL), "@");
  cr_assert_eq(tc_op_bp(TC_OP_MATMUL), tc_op_bp(TC_OP_MUL));
}
