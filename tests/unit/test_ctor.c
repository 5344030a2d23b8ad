/* Constructors and the random numbers (src/ctor.c, src/philox.h): the
 * Philox-4x32-10 known answers of Random123, the documented mapping from
 * words to values, element independence from the shape, the accuracy of
 * the engine-independent log and cos, and that the capability registry
 * tells the truth for every constructor and dtype. */
#include "idx_util.h"
#include "philox.h"
#include "cpu/cpu.h"
#include "tt.h"

static tc_err e;
static void setup(void) { tc_err_clear(&e); }
TestSuite(ctor, .init = setup);

Test(ctor, philox_known_answers) {
  struct { uint32_t c[4], k[2], want[4]; } kat[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
    tc_philox4 c = {{kat[i].c[0], kat[i].c[1], kat[i].c[2], kat[i].c[3]}};
    tc_philox4 r = tc_philox4x32_10(c, kat[i].k[0], kat[i].k[1]);
    for (int w = 0; w < 4; w++) cr_assert_eq(r.w[w], kat[i].want[w], "vector %zu word %d: %08x", i, w, r.w[w]);
  }
}

Test(ctor, word_mappings) {
  cr_assert_eq(tc_u53(0, 0), 0.0);
  cr_assert_eq(tc_u53(0xffffffff, 0xffffffff), 1.0 - 0x1p-53);
  cr_assert_eq(tc_u53(0x800, 0), 0x1p-53);
  cr_assert_eq(tc_u53(0, 0x80000000), 0.5);
  cr_assert_eq(tc_mulhi64(UINT64_MAX, UINT64_MAX), UINT64_MAX - 1);
  cr_assert_eq(tc_mulhi64(1ull << 63, 10), 5);
  cr_assert_eq(tc_mulhi64(0x123456789abcdef0ull, 0xfedcba9876543210ull), 0x121fa00ad77d7422ull);
  /* element i uses counter (i mod 2^32, i >> 32, 0, 0) and key (seed mod 2^32, seed >> 32) */
  uint64_t seed = 0x0123456789abcdefull, i = 0x100000002ull;
  tc_philox4 c = {{2, 1, 0, 0}};
  tc_philox4 w = tc_philox4x32_10(c, 0x89abcdefu, 0x01234567u);
  cr_assert_eq(tc_rand_uniform(seed, i), tc_u53(w.w[0], w.w[1]));
  cr_assert_eq(tc_rand_int(seed, i, -5, 10), -5 + (int64_t)tc_mulhi64(((uint64_t)w.w[1] << 32) | w.w[0], 10));
}

Test(ctor, deterministic_log_and_cos_are_accurate) {
  /* against the C library on a spread of 53-bit grid points: within 4 ulps */
  for (int k = 1; k <= 20000; k++) {
    double u = (double)((uint64_t)k * 0x9E3779B97F4A7C15ull >> 11) * 0x1p-53;
    if (u == 0) continue;
    double l = tc_det_log(u), lr = log(u);
    cr_assert(fabs(l - lr) <= 4 * nextafter(fabs(lr), INFINITY) - 4 * fabs(lr) + 1e-300, "log(%.17g): %.17g vs %.17g", u,
              l, lr);
    double c = tc_det_cos_turns(u), cr = cos(2 * M_PI * u);
    cr_assert(fabs(c - cr) <= 1e-15, "cos(2 pi %.17g): %.17g vs %.17g", u, c, cr);
  }
  cr_assert_eq(tc_det_log(1.0), 0.0);
  cr_assert_eq(tc_det_cos_turns(0.0), 1.0);
  cr_assert_eq(tc_det_cos_turns(0.5), -1.0);
  cr_assert(fabs(tc_det_log(0x1p-53) - log(0x1p-53)) < 1e-13);
}

Test(ctor, random_elements_depend_only_on_seed_and_index) {
  int64_t s6 = 6, s23[2] = {2, 3};
  tc_tensor *a = tc_random(TC_DIST_NORMAL, 1, &s6, 42, 0, 0, &e), *b = tc_random(TC_DIST_NORMAL, 2, s23, 42, 0, 0, &e);
  double *va = vals_f64(a), *vb = vals_f64(b);
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(va[i], vb[i]);
    cr_assert_eq(va[i], tc_rand_normal(42, (uint64_t)i));
  }
  tc_tensor *c = tc_random(TC_DIST_NORMAL, 1, &s6, 43, 0, 0, &e);
  double *vc = vals_f64(c);
  cr_assert_neq(va[0], vc[0], "another seed gives other numbers");
  free(vc);
  free(vb);
  free(va);
  TT_FREE(c, b, a);
}

/* The CPU's vectorised, threaded loops (backend/cpu/index.c) give the
 * shared scalar functions' bits (the CUDA engine's) at every level and
 * thread count, ragged tails and block edges included; the inputs reach
 * every quadrant of the cosine and both halves of the log's reduction. */
Test(ctor, random_bits_are_the_scalar_functions_at_every_level_and_thread_count) {
  int64_t n = 3 * 16384 + 37;
  const uint64_t seeds[2] = {0, 0x123456789abcdefull};
  int threads = tc_get_threads();
  for (int l = CPU_ISA_BASE; l < CPU_ISA_COUNT; l++) {
    if (cpu_matmul_isa(l) != l) continue;
    for (int t = 1; t <= 2; t++) {
      tc_set_threads(t);
      for (int si = 0; si < 2; si++)
        for (int d = 0; d < 3; d++) {
          tc_dist dist = d == 0 ? TC_DIST_UNIFORM : d == 1 ? TC_DIST_NORMAL : TC_DIST_INT;
          tc_tensor *r = tc_random(dist, 1, &n, seeds[si], -5, 1000003, &e);
          cr_assert_not_null(r, "%s", tt_msg(&e));
          const char *p = tc_tensor_data(r);
          for (int64_t i = 0; i < n; i++) {
            if (dist == TC_DIST_INT) {
              int64_t want = tc_rand_int(seeds[si], (uint64_t)i, -5, 1000008), got;
              memcpy(&got, p + 8 * i, 8);
              cr_assert_eq(got, want, "randint level %d, %d threads, element %lld", l, t, (long long)i);
            } else {
              double want = dist == TC_DIST_UNIFORM ? tc_rand_uniform(seeds[si], (uint64_t)i) : tc_rand_normal(seeds[si], (uint64_t)i), got;
              memcpy(&got, p + 8 * i, 8);
              cr_assert(!memcmp(&got, &want, 8), "dist %d level %d, %d threads, element %lld: %a, not %a", d, l, t,
                        (long long)i, got, want);
            }
          }
          tc_tensor_free(r);
        }
    }
  }
  cpu_matmul_isa(99);
  tc_set_threads(threads);
}

Test(ctor, random_ranges_and_moments) {
  int64_t n = 50000;
  tc_tensor *u = tc_random(TC_DIST_UNIFORM, 1, &n, 1, 0, 0, &e), *z = tc_random(TC_DIST_NORMAL, 1, &n, 2, 0, 0, &e);
  tc_tensor *k = tc_random(TC_DIST_INT, 1, &n, 3, -3, 4, &e);
  cr_assert_eq(u->dtype, TC_DT_F64);
  cr_assert_eq(k->dtype, TC_DT_I64);
  double *vu = vals_f64(u), *vz = vals_f64(z);
  int64_t *vk = vals_i64(k);
  double su = 0, sz = 0, sz2 = 0;
  int64_t counts[7] = {0};
  for (int64_t i = 0; i < n; i++) {
    cr_assert(vu[i] >= 0 && vu[i] < 1);
    cr_assert(vk[i] >= -3 && vk[i] < 4);
    cr_assert(isfinite(vz[i]));
    su += vu[i];
    sz += vz[i];
    sz2 += vz[i] * vz[i];
    counts[vk[i] + 3]++;
  }
  cr_assert(fabs(su / n - 0.5) < 0.01, "uniform mean %g", su / n);
  cr_assert(fabs(sz / n) < 0.02, "normal mean %g", sz / n);
  cr_assert(fabs(sz2 / n - 1) < 0.03, "normal variance %g", sz2 / n);
  for (int i = 0; i < 7; i++) cr_assert(fabs(counts[i] / (double)n - 1 / 7.0) < 0.01, "randint bucket %d", i);
  int64_t full = 4;
  tc_tensor *w = tc_random(TC_DIST_INT, 1, &full, 5, INT64_MIN, INT64_MAX, &e);
  cr_assert_not_null(w, "%s", tt_msg(&e));
  expect_err(tc_random(TC_DIST_INT, 1, &full, 5, 3, 3, &e), &e, TC_E_BAD_ARG);
  tc_tensor_free(w);
  free(vk);
  free(vz);
  free(vu);
  TT_FREE(k, z, u);
}

Test(ctor, fills_and_ranges) {
  int64_t s[2] = {2, 2};
  tc_tensor *v = tc_scalar_f64(2.5, true, &e);
  tc_tensor *f = tc_full(2, s, v, TC_DT_F16, &e);
  cr_assert_eq(f->dtype, TC_DT_F16);
  EXPECT_F64(f, SHAPE(2, 2), 2.5, 2.5, 2.5, 2.5);
  tc_tensor *z = tc_zeros(2, s, TC_DT_BOOL, &e), *o = tc_ones(2, s, TC_DT_I8, &e);
  EXPECT_I64(z, SHAPE(2, 2), 0, 0, 0, 0);
  EXPECT_I64(o, SHAPE(2, 2), 1, 1, 1, 1);
  tc_tensor *a = tc_scalar_i64(2, true, &e), *b = tc_scalar_i64(11, true, &e), *st = tc_scalar_i64(3, true, &e);
  tc_tensor *r = tc_arange(a, b, st, -1, &e);
  cr_assert_eq(r->dtype, TC_DT_I64);
  EXPECT_I64(r, SHAPE(3), 2, 5, 8);
  tc_tensor *r16 = tc_arange(a, b, st, TC_DT_I16, &e);
  cr_assert_eq(r16->dtype, TC_DT_I16);
  tc_tensor *fstep = tc_scalar_f64(0.5, true, &e), *rf = tc_arange(a, NULL, fstep, -1, &e);
  cr_assert_eq(rf->dtype, TC_DT_F64);
  EXPECT_F64(rf, SHAPE(4), 0, 0.5, 1, 1.5);
  tc_tensor *l = tc_linspace(1, 2, 5, TC_DT_F32, &e);
  EXPECT_F64(l, SHAPE(5), 1, 1.25, 1.5, 1.75, 2);
  tc_tensor *ey = tc_eye(2, 3, 1, TC_DT_I32, &e);
  EXPECT_I64(ey, SHAPE(2, 3), 0, 1, 0, 0, 0, 1);
  TT_FREE(ey, l, rf, fstep, r16, r, st, b, a, o, z, f, v);
}

/* Every (constructor, dtype) the registry marks supported builds; every
 * other one fails with dtype_unsupported. */
Test(ctor, registry_is_truthful) {
  int64_t n = 3;
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    struct { tc_op op; tc_tensor *r; } got[4];
    tc_tensor *one = tc_scalar_i64(1, true, &e), *five = tc_scalar_i64(5, true, &e);
    got[0].op = TC_OP_ARANGE; got[0].r = tc_arange(five, NULL, NULL, (int)dt, &e);
    if (!got[0].r) { cr_assert_eq(e.code, TC_E_DTYPE, "arange %s: %s", tc_dtype_name(dt), tt_msg(&e)); tc_err_clear(&e); }
    got[1].op = TC_OP_LINSPACE; got[1].r = tc_linspace(0, 1, 3, dt, &e);
    if (!got[1].r) { cr_assert_eq(e.code, TC_E_DTYPE, "linspace %s: %s", tc_dtype_name(dt), tt_msg(&e)); tc_err_clear(&e); }
    got[2].op = TC_OP_ZEROS; got[2].r = tc_zeros(1, &n, dt, &e);
    if (!got[2].r) { cr_assert_eq(e.code, TC_E_DTYPE); tc_err_clear(&e); }
    got[3].op = TC_OP_EYE; got[3].r = tc_eye(2, 2, 0, dt, &e);
    if (!got[3].r) { cr_assert_eq(e.code, TC_E_DTYPE); tc_err_clear(&e); }
    for (int k = 0; k < 4; k++) {
      bool sup = tc_op_supported(got[k].op, dt, TC_ENGINE_CPU);
      cr_assert_eq(got[k].r != NULL, sup, "%s on %s: registry says %d", tc_op_name(got[k].op), tc_dtype_name(dt), sup);
      if (got[k].r) cr_assert_eq(got[k].r->dtype, dt);
      tc_tensor_free(got[k].r);
    }
    tc_tensor_free(five);
    tc_tensor_free(one);
    cr_assert_eq(tc_op_supported(TC_OP_RAND, dt, TC_ENGINE_CPU), dt == TC_DT_F64);
    cr_assert_eq(tc_op_supported(TC_OP_RANDN, dt, TC_ENGINE_CPU), dt == TC_DT_F64);
    /* randint's dtype= (SPEC 13): every integer dtype and bool, and the registry says so */
    bool intlike = tc_dtype_class(dt) == TC_CLASS_INT || dt == TC_DT_BOOL;
    cr_assert_eq(tc_op_supported(TC_OP_RANDINT, dt, TC_ENGINE_CPU), intlike);
    tc_tensor *zero = tc_scalar_i64(0, true, &e), *two = tc_scalar_i64(2, true, &e);
    tc_tensor *ri = tc_randint(zero, two, 1, &n, 7, dt, &e);
    cr_assert_eq(ri != NULL, intlike, "randint dtype=%s: %s", tc_dtype_name(dt), tt_msg(&e));
    if (ri) cr_assert_eq(ri->dtype, dt);
    else cr_assert_eq(e.code, TC_E_BAD_ARG);
    tc_err_clear(&e);
    TT_FREE(ri, zero, two);
    cr_assert_eq(tc_op_supported(TC_OP_SAVE, dt, TC_ENGINE_CPU), dt != TC_DT_BF16);
    cr_assert_eq(tc_op_supported(TC_OP_LOAD, dt, TC_ENGINE_CPU), dt != TC_DT_BF16);
    cr_assert(tc_op_supported(TC_OP_TAKE, dt, TC_ENGINE_CPU));
    cr_assert(tc_op_supported(TC_OP_SCATTER, dt, TC_ENGINE_CPU));
    cr_assert(tc_op_supported(TC_OP_CONCAT, dt, TC_ENGINE_CPU));
#ifndef TC_HAVE_CUDA
    cr_assert(!tc_op_supported(TC_OP_TAKE, dt, TC_ENGINE_CUDA), "no CUDA engine in this build");
#endif
  }
}
