/* The vectorised math functions (backend/cpu/vmath.c, on SLEEF, and
 * vtrig.c's sin, cos and tan): every SIMD path the CPU has (AVX-512, AVX2,
 * scalar with FMA) gives the same bits for every function, dtype and input
 * (random bit patterns, special values, strided and contiguous, every tail
 * length), and so does every thread count through tc_unary; sin, cos and
 * tan also on the scalar path without FMA, whatever a lane's neighbours.
 * Their accuracy against mpmath is tests/accuracy/ulp.py (in make test). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu.h"
#include "tt.h"

static void setup(void) {
  tc_set_threads(0);
  cpu_matmul_isa(99);
}
TestSuite(vmath, .init = setup, .fini = setup);

static uint64_t seed = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { return tt_xorshift(&seed); }

/* n values of dt (4 or 8 bytes): specials, then random bit patterns and
 * values of moderate size, alternating */
static void fill(tc_dtype dt, void *buf, int64_t n) {
  static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 0.5, 1e-310, -1e-40,
                                    88.5, -89.2, 709.5, -710.2, 1e300, 1e30, 3.0e38, 1e-8, 6.5e-8, 1e22,
                                    0.984375, 1.03125, 1e308, 1.5e308, 2.2250738585072014e-308, 0x1p-53};
  int64_t ns = (int64_t)(sizeof specials / sizeof *specials);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double v = i < ns ? specials[i] : (double)(int64_t)(r >> 11) * 0x1p-50 - 4096.0 * (double)(r & 1);
    if (dt == TC_DT_F64) {
      if (i >= ns && i % 2) memcpy(&v, &r, 8);
      ((double *)buf)[i] = v;
    } else {
      float f = (float)v;
      uint32_t u = (uint32_t)r;
      if (i >= ns && i % 2) memcpy(&f, &u, 4);
      ((float *)buf)[i] = f;
    }
  }
}

/* Whether element i of o (f64 when d, else f32), a NaN, is the one quiet
 * NaN the kernels give (+NAN) */
static bool quiet_nan(const char *o, int64_t i, bool d) {
  uint64_t b = 0;
  memcpy(&b, o + i * (d ? 8 : 4), d ? 8 : 4);
  return b == (d ? 0x7ff8000000000000ull : 0x7fc00000u);
}

static int levels(int *out) {
  int n = 0;
  for (int l = CPU_ISA_BASE; l < CPU_ISA_COUNT; l++)
    if (cpu_matmul_isa(l) == l) out[n++] = l;
  cpu_matmul_isa(99);
  return n;
}

Test(vmath, every_path_gives_the_same_bits) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 4099, S = 3 };
  size_t cap = (size_t)N * S * 8;
  char *in = malloc(cap), *ref = malloc((size_t)N * 8), *got = malloc((size_t)N * 8);
  cr_assert(in && ref && got);
  int nops = 0, bad = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    for (int d = 0; d < 2; d++) {
      tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
      size_t es = d ? 8 : 4;
      cpu_matmul_isa(99);
      if (!cpu_vmath_kernel((tc_op)op, dt)) continue;
      nops++;
      fill(dt, in, (int64_t)N * S);
      for (int64_t stride = 1; stride <= S; stride += S - 1) {
        for (int64_t len = 1; len <= N; len = len < 40 ? len + 1 : len * 3 + 1) {
          for (int l = 0; l < nl; l++) {
            cpu_matmul_isa(lv[l]);
            cpu_vmath_fn fn = cpu_vmath_kernel((tc_op)op, dt);
            cr_assert(fn);
            fn(len, l ? got : ref, in, stride);
            for (int64_t i = 0; !l && i < len; i++) {
              double a = d ? ((double *)ref)[i] : ((float *)ref)[i];
              if (isnan(a) && !quiet_nan(ref, i, d) && ++bad <= 2000)
                cr_log_error("%s %s level %d: a NaN other than the quiet NaN", tc_op_name((tc_op)op), tt_name(dt), lv[0]);
            }
            if (!l) continue;
            for (int64_t i = 0; i < len; i++) {
              if (memcmp(got + i * (int64_t)es, ref + i * (int64_t)es, es) == 0) continue;
              double x = d ? ((double *)in)[i * stride] : ((float *)in)[i * stride];
              double a = d ? ((double *)ref)[i] : ((float *)ref)[i], b = d ? ((double *)got)[i] : ((float *)got)[i];
              if (++bad > 2000) continue;
              cr_log_error("%s %s x=%a: level %d gives %a, level %d (%s) %a (len %lld stride %lld)", tc_op_name((tc_op)op),
                      tt_name(dt), x, lv[0], a, lv[l], cpu_vmath_path_name(), b, (long long)len, (long long)stride);
            }
          }
        }
      }
    }
  }
  cr_assert_eq(bad, 0, "%d results differ between paths or are other NaNs", bad);
  cr_assert_geq(nops, 36, "%d (op, dtype) pairs have vector kernels", nops);
  free(in);
  free(ref);
  free(got);
}

/* An element's bits do not depend on its neighbours: on every path, each
 * function of the values of fill() gives the same bits for an element as
 * for the same value in the reversed vector (another lane, other
 * neighbours) and with every other element NaN or huge (neighbours that
 * leave the kernels' fast range). */
Test(vmath, an_element_does_not_depend_on_its_neighbours) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 4099 };
  char *in = malloc((size_t)N * 8), *rev = malloc((size_t)N * 8), *ref = malloc((size_t)N * 8),
       *got = malloc((size_t)N * 8);
  cr_assert(in && rev && ref && got);
  int bad = 0, runs = 0;
  for (int op = 0; op < TC_OP_COUNT; op++)
    for (int d = 0; d < 2; d++) {
      tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
      size_t es = d ? 8 : 4;
      if (!cpu_vmath_kernel((tc_op)op, dt)) continue;
      fill(dt, in, N);
      for (int l = 0; l < nl; l++) {
        cpu_matmul_isa(lv[l]);
        cpu_vmath_fn fn = cpu_vmath_kernel((tc_op)op, dt);
        fn(N, ref, in, 1);
        for (int form = 0; form < 3; form++) {
          /* 0: reversed; 1, 2: the odd elements NaN, or -3e38 */
          for (int64_t i = 0; i < N; i++) {
            int64_t src = form ? i : N - 1 - i;
            double far = form == 1 ? NAN : -3e38;
            if (form && i % 2) {
              if (d) memcpy(rev + i * 8, &far, 8); else memcpy(rev + i * 4, &(float){(float)far}, 4);
            } else {
              memcpy(rev + i * (int64_t)es, in + src * (int64_t)es, es);
            }
          }
          fn(N, got, rev, 1);
          runs++;
          for (int64_t i = 0; i < N; i++) {
            int64_t src = form ? i : N - 1 - i;
            if ((form && i % 2) || memcmp(got + i * (int64_t)es, ref + src * (int64_t)es, es) == 0) continue;
            if (++bad <= 20)
              cr_log_error("%s %s level %d: element %lld alone in form %d differs", tc_op_name((tc_op)op), tt_name(dt),
                           lv[l], (long long)src, form);
          }
        }
      }
    }
  cpu_matmul_isa(99);
  cr_log_info("%d runs", runs);
  cr_assert_eq(bad, 0, "%d results depend on their neighbours", bad);
  free(in);
  free(rev);
  free(ref);
  free(got);
}

/* The two-operand kernel of op at matrix level `level` run on len
 * elements into o; o. */
static char *bin_at(int level, tc_op op, tc_dtype dt, int64_t len, char *o, const char *a, int64_t sa, const char *b,
                    int64_t sb) {
  cpu_matmul_isa(level);
  cpu_vmath_bin_fn fn = cpu_vmath_bin_kernel(op, dt);
  cr_assert(fn, "no kernel for %s %s", tc_op_name(op), tt_name(dt));
  fn(len, o, a, sa, b, sb);
  return o;
}

/* pow: every path gives the same bits for random and special pairs
 * (strided, contiguous, a broadcast exponent, every tail length), and the
 * exponents 2, -1 and 0.5 give x * x, 1 / x and sqrt(x) (+0 for -0, +inf
 * for -inf) whether the exponent is broadcast or an element. */
static double pow_exact(double x, double y, bool f32) {
  double r = y == 2 ? x * x : y == -1 ? 1 / x : x == -INFINITY ? INFINITY : sqrt(x) + 0;
  return f32 ? (double)(float)r : r;
}

Test(vmath, pow_paths_agree_and_exact_exponents) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 1031, S = 3 };
  static const double ys[] = {2, -1, 0.5, 3.3};
  char *a = malloc((size_t)N * S * 8), *b = malloc((size_t)N * S * 8), *ref = malloc((size_t)N * 8),
       *got = malloc((size_t)N * 8);
  cr_assert(a && b && ref && got);
  int bad = 0;
  for (int d = 0; d < 2; d++) {
    tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
    size_t es = d ? 8 : 4;
    fill(dt, a, (int64_t)N * S);
    for (int yk = -1; yk < 4; yk++) {   /* -1: random exponents, with the three exact ones among them */
      fill(dt, b, (int64_t)N * S);
      for (int64_t i = 0; i < (int64_t)N * S; i++) {
        double y = yk >= 0 ? ys[yk] : i % 7 < 3 ? ys[i % 7] : (double)(int64_t)(next() % 2001 - 1000) / 64;
        if (yk >= 0 || i % 7 != 6) { if (d) ((double *)b)[i] = y; else ((float *)b)[i] = (float)y; }
      }
      for (int64_t stride = 1; stride <= S; stride += S - 1)
        for (int64_t len = 1; len <= N; len = len < 40 ? len + 1 : len * 3 + 1)
          for (int l = 0; l < nl; l++) {
            char *o = bin_at(lv[l], TC_OP_POW, dt, len, l ? got : ref, a, stride, b, yk >= 0 && stride == S ? 0 : stride);
            for (int64_t i = 0; i < len; i++) {
              double x = d ? ((double *)a)[i * stride] : ((float *)a)[i * stride];
              double y = d ? ((double *)b)[i * stride] : ((float *)b)[i * stride];
              double r = d ? ((double *)o)[i] : ((float *)o)[i];
              if ((y == 2 || y == -1 || y == 0.5) && memcmp(&r, &(double){pow_exact(x, y, !d)}, 8) != 0 &&
                  !(isnan(r) && isnan(pow_exact(x, y, !d))) && ++bad <= 50)
                cr_log_error("pow %s(%a, %g) = %a, expected %a", tt_name(dt), x, y, r, pow_exact(x, y, !d));
              if (isnan(r) && !quiet_nan(o, i, d) && ++bad <= 50)
                cr_log_error("pow %s(%a, %a): a NaN other than the quiet NaN", tt_name(dt), x, y);
              if (l && memcmp(got + i * (int64_t)es, ref + i * (int64_t)es, es) != 0 && ++bad <= 50)
                cr_log_error("pow %s(%a, %a): level %d and level %d differ (len %lld stride %lld)", tt_name(dt), x, y,
                             lv[0], lv[l], (long long)len, (long long)stride);
            }
          }
    }
  }
  cpu_matmul_isa(99);
  cr_assert_eq(bad, 0, "%d pow results wrong or differing between paths", bad);
  free(a);
  free(b);
  free(ref);
  free(got);
}

/* atan2: every path gives the same bits for random and special pairs
 * (each operand strided or contiguous, or x broadcast, every tail length),
 * a NaN result is the quiet NaN, and C99's special values hold. */
Test(vmath, atan2_paths_agree) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 1031, S = 3 };
  char *a = malloc((size_t)N * S * 8), *b = malloc((size_t)N * S * 8), *ref = malloc((size_t)N * 8),
       *got = malloc((size_t)N * 8);
  cr_assert(a && b && ref && got);
  int bad = 0, runs = 0;
  for (int d = 0; d < 2; d++) {
    tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
    size_t es = d ? 8 : 4;
    fill(dt, a, (int64_t)N * S);
    fill(dt, b, (int64_t)N * S);
    for (int64_t sa = 1; sa <= S; sa += S - 1)
      for (int64_t sb = 0; sb <= S; sb += sb ? S - 1 : 1)
        for (int64_t len = 1; len <= N; len = len < 40 ? len + 1 : len * 3 + 1)
          for (int l = 0; l < nl; l++) {
            char *o = bin_at(lv[l], TC_OP_ATAN2, dt, len, l ? got : ref, a, sa, b, sb);
            runs++;
            for (int64_t i = 0; i < len; i++) {
              double y = d ? ((double *)a)[i * sa] : ((float *)a)[i * sa];
              double x = d ? ((double *)b)[i * sb] : ((float *)b)[i * sb];
              double r = d ? ((double *)o)[i] : ((float *)o)[i];
              double c = d ? atan2(y, x) : (double)atan2f((float)y, (float)x);
              bool special = isnan(x) || isnan(y) || isinf(x) || isinf(y) || x == 0 || y == 0;
              if (isnan(r) && !quiet_nan(o, i, d) && ++bad <= 50)
                cr_log_error("atan2 %s(%a, %a): a NaN other than the quiet NaN", tt_name(dt), y, x);
              if (special && !(isnan(r) && isnan(c)) && (r != c || signbit(r) != signbit(c)) && ++bad <= 50)
                cr_log_error("atan2 %s(%a, %a) = %a, C99 gives %a", tt_name(dt), y, x, r, c);
              if (l && memcmp(got + i * (int64_t)es, ref + i * (int64_t)es, es) != 0 && ++bad <= 50)
                cr_log_error("atan2 %s(%a, %a): level %d and level %d differ (len %lld)", tt_name(dt), y, x, lv[0],
                             lv[l], (long long)len);
            }
          }
  }
  cpu_matmul_isa(99);
  cr_log_info("%d atan2 runs over %d paths", runs, nl);
  cr_assert_eq(bad, 0, "%d atan2 results wrong or differing between paths", bad);
  free(a);
  free(b);
  free(ref);
  free(got);
}

Test(vmath, thread_count_does_not_change_bits) {
  tc_err err;
  tc_err_clear(&err);
  const int64_t n = 300001;
  static const tc_op ops[] = {TC_OP_EXP, TC_OP_SIN, TC_OP_COS, TC_OP_TAN, TC_OP_TANH, TC_OP_LOG1P, TC_OP_RSQRT, TC_OP_SINH};
  for (int d = 0; d < 2; d++) {
    tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
    tc_tensor *x = tc_tensor_new(dt, 1, &n, &err);
    cr_assert(x);
    fill(dt, tc_tensor_data(x), n);
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
      tc_set_threads(1);
      tc_tensor *a = tc_unary(ops[k], x, &err);
      tc_set_threads(2);
      tc_tensor *b = tc_unary(ops[k], x, &err);
      tc_set_threads(5);
      tc_tensor *c = tc_unary(ops[k], x, &err);
      cr_assert(a && b && c, "%s", tt_msg(&err));
      size_t bytes = (size_t)n * (d ? 8 : 4);
      cr_assert(memcmp(tc_tensor_data(a), tc_tensor_data(b), bytes) == 0, "%s %s: 1 and 2 threads differ",
                tc_op_name(ops[k]), tt_name(dt));
      cr_assert(memcmp(tc_tensor_data(a), tc_tensor_data(c), bytes) == 0, "%s %s: 1 and 5 threads differ",
                tc_op_name(ops[k]), tt_name(dt));
      TT_FREE(a, b, c);
    }
    tc_tensor_free(x);
  }
}

/* sigmoid (vmath_own.c) is within 1 ulp of a long double reference in
 * f32 and f64 on every path (vmath.c's f64 form, 1 / (1 + e) of SLEEF's
 * exp, was 1.39 ulp off and fails this) */
Test(vmath, sigmoid_within_one_ulp) {
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 20011 };
  double *in = malloc(N * 8), *out = malloc(N * 8);
  cr_assert(in && out);
  for (int d = 0; d < 2; d++) {
    tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
    fill(dt, in, N);
    for (int l = 0; l < nl; l++) {
      cpu_matmul_isa(lv[l]);
      cpu_vmath_kernel(TC_OP_SIGMOID, dt)(N, (char *)out, (const char *)in, 1);
      for (int64_t i = 0; i < N; i++) {
        long double x = d ? in[i] : ((float *)in)[i];
        double got = d ? out[i] : ((float *)out)[i];
        if (isnan(x)) { cr_assert(isnan(got)); continue; }
        long double e = expl(-fabsl(x)), want = x >= 0 ? 1 / (1 + e) : e / (1 + e);
        double ulp = d ? nextafter(fabs((double)want), INFINITY) - fabs((double)want)
                       : nextafterf(fabsf((float)want), INFINITY) - fabsf((float)want);
        if (want == 0) ulp = d ? 0x1p-1074 : 0x1p-149;
        cr_assert(fabsl(got - want) <= (long double)ulp, "sigmoid %s (%s) of %La: %a, want %La",
                  tt_name(dt), cpu_vmath_path_name(), x, got, want);
      }
    }
  }
  free(in);
  free(out);
}

/* ---- sin, cos and tan (vtrig.c) ---- */
/* The paths the CPU has, by vmath.c's numbering: the scalar one without FMA
 * always (a CPU with FMA never picks it, so it is asked for by number). */
static int trig_paths(int *out) {
  int n = 0;
  cpu_matmul_isa(99);
  out[n++] = CPU_VM_BASE;
  if (cpu_has_fma()) out[n++] = CPU_VM_FMA;
  if (cpu_float_isa() >= CPU_ISA_AVX2) out[n++] = CPU_VM_AVX2;
  if (cpu_float_isa() >= CPU_ISA_AVX512) out[n++] = CPU_VM_AVX512;
  return n;
}

/* Values where a lane's code could differ: small, around SLEEF's old bounds
 * (15, 125) and the fast path's (2^30), huge up to the largest finite (the
 * double nearest a multiple of pi/2 among them), doubles next to multiples
 * of pi/2 (cancellation in the reduction), subnormals, zeros, inf, NaN. */
static int trig_probes(double *p) {
  static const double fixed[] = {0.0, -0.0, 0x1p-1074, -1e-310, 1e-300, 0x1p-30, 0.5, -0.7853981633974483, 1.0, 3.0,
                                 14.999, 15.0001, -124.9, 125.2, 100.5, -9999.7, 123456.789, 1e6, -999999.9,
                                 0x1p30, -0x1.0000000000001p30, 0x1p31, 1e10, -1e15, 1e22, 0x1.6ac5b262ca1ffp+849,
                                 1e300, DBL_MAX, -DBL_MAX, 3.4e38, INFINITY, -INFINITY, NAN, -NAN};
  int n = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) p[n++] = fixed[i];
  static const long long ks[] = {1, 2, 3, 4, 7, 355, 1000003, 70000001, 536870911};
  for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) p[n++] = (double)((long double)ks[i] * 1.5707963267948966192313216916397514L);
  return n;
}

static void trig_put(char *buf, int64_t i, bool d, double v) {
  if (d) ((double *)buf)[i] = v;
  else ((float *)buf)[i] = (float)v;
}

static uint64_t trig_bits(const char *buf, int64_t i, bool d) {
  uint64_t b = 0;
  memcpy(&b, buf + i * (d ? 8 : 4), d ? 8 : 4);
  return b;
}

/* Each probe's result alone on the scalar path without FMA is the
 * reference; on every path, each probe placed at every position of runs
 * of several lengths (in the vector body and in the tail), contiguous and
 * strided, among neighbours all small, all huge, all NaN or mixed, must
 * give the same bits. So no lane's result depends on another's, on the
 * vector width or on where the run ends. */
Test(vmath, trig_lane_alone_whatever_neighbours_and_path) {
  static const tc_op ops[] = {TC_OP_SIN, TC_OP_COS, TC_OP_TAN};
  enum { L = 48, S = 2 };
  int paths[4], np = trig_paths(paths);
  double probe[64];
  int npr = trig_probes(probe), runs = 0;
  char in[L * S * 8], out[L * 8], one_in[8], one_out[8];
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
    for (int d = 0; d < 2; d++) {
      for (int pi = 0; pi < npr; pi++) {
        trig_put(one_in, 0, d, probe[pi]);
        cpu_vtrig_kernel(ops[k], d, CPU_VM_BASE)(1, one_out, one_in, 1);
        uint64_t want = trig_bits(one_out, 0, d);
        for (int nb = 0; nb < 4; nb++)
          for (int64_t pos = 0; pos < 20; pos++)
            for (int64_t extra = 0; extra <= 9; extra += 3)
              for (int64_t stride = 1; stride <= S; stride++) {
                int64_t len = pos + 1 + extra;
                for (int64_t i = 0; i < L * S; i++)
                  trig_put(in, i, d, nb == 0 ? 0.5 + (double)i / 64 : nb == 1 ? 1e300 : nb == 2 ? NAN
                                                                                  : probe[(i * 7 + 3) % npr]);
                trig_put(in, pos * stride, d, probe[pi]);
                for (int l = 0; l < np; l++) {
                  cpu_vtrig_kernel(ops[k], d, paths[l])(len, out, in, stride);
                  runs++;
                  uint64_t got = trig_bits(out, pos, d);
                  TT_CHECK(got == want, "%s %s(%a) on path %d at %lld of %lld (stride %lld, neighbours %d): %llx, alone %llx",
                           tc_op_name(ops[k]), d ? "f64" : "f32", probe[pi], paths[l], (long long)pos, (long long)len,
                           (long long)stride, nb, (unsigned long long)got, (unsigned long long)want);
                }
              }
      }
    }
  cr_log_info("%d runs over %d paths", runs, np);
  TT_DONE();
}

/* (x, sin x, cos x, tan x), the exact values rounded to nearest (mpmath at
 * 3000 bits): arguments the fast reduction leaves to 2/pi's bits, the
 * double nearest a multiple of pi/2 among them (where the C library's cos
 * and tan are 8 ulps off); f32 ones rounded to f32. */
static const double trig_huge[2][6][4] = {
  {{0x1.0f0cf00000000p+73, -0x1.77d9880000000p-1, 0x1.5badee0000000p-1, -0x1.14bdfc0000000p+0},
   {0x1.ff933c0000000p+127, -0x1.f3e2c60000000p-3, 0x1.f083940000000p-1, -0x1.01bd0e0000000p-2},
   {0x1.2a05f20000000p+33, -0x1.f334c80000000p-2, 0x1.bf098a0000000p-1, -0x1.1de0000000000p-1},
   {0x1.0000000000000p+31, -0x1.f14f920000000p-1, 0x1.e70c2e0000000p-3, -0x1.0565000000000p+2},
   {-0x1.c6bf520000000p+49, -0x1.fd267e0000000p-1, 0x1.af8c600000000p-4, -0x1.2e08d60000000p+3},
   {0x1.fffffe0000000p+127, -0x1.0b33660000000p-1, 0x1.b4bf2c0000000p-1, -0x1.393d940000000p-1}},
  {{0x1.0f0cf064dd592p+73, -0x1.b453ab76bf397p-1, 0x1.0be2cef01c8f4p-1, -0x1.a0f79c1b6b257p+0},
   {0x1.6ac5b262ca1ffp+849, 0x1.0000000000000p+0, -0x1.14ae72e6ba22fp-61, -0x1.d9ba9a7975636p+60},
   {0x1.7e43c8800759cp+996, -0x1.a2c16b010e385p-1, -0x1.2699022adc4c1p-1, 0x1.6be411f37ac77p+0},
   {0x1.fffffffffffffp+1023, 0x1.452fc98b34e97p-8, -0x1.fffe62ecfab75p-1, -0x1.4530cfe729484p-8},
   {0x1.0000000000000p+31, -0x1.f14f913e9af98p-1, 0x1.e70c2d5131e55p-3, -0x1.0564ff9979ed5p+2},
   {-0x1.c6bf526340000p+49, -0x1.b76f88136cebap-1, -0x1.06c154609d33fp-1, 0x1.ac23600a95be4p+0}}};

/* The values the probes must have: sin and tan of +-0 are +-0, cos 1; inf
 * and NaN give the quiet NaN; each finite probe at most 2^30 within 2 ulps
 * of the C library's (within 1 ulp of the exact value itself; f32 against
 * the library's f64 rounded); the arguments of trig_huge within 1 ulp of
 * the exact value, among small neighbours and alone. */
Test(vmath, trig_special_and_huge_values) {
  static const tc_op ops[] = {TC_OP_SIN, TC_OP_COS, TC_OP_TAN};
  double probe[64];
  int npr = trig_probes(probe);
  char in[64 * 8], out[64 * 8];
  cpu_matmul_isa(99);
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
    for (int d = 0; d < 2; d++) {
      tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
      const char *name = tc_op_name(ops[k]);
      for (int i = 0; i < npr; i++) trig_put(in, i, d, probe[i]);
      cpu_vmath_kernel(ops[k], dt)(npr, out, in, 1);
      for (int i = 0; i < npr; i++) {
        double x = d ? ((double *)in)[i] : ((float *)in)[i], y = d ? ((double *)out)[i] : ((float *)out)[i];
        double c = ops[k] == TC_OP_SIN ? sin(x) : ops[k] == TC_OP_COS ? cos(x) : tan(x);
        if (isnan(x) || isinf(x))
          TT_CHECK(quiet_nan(out, i, d), "%s %s(%a) = %a, not the quiet NaN", name, tt_name(dt), x, y);
        else if (x == 0)
          TT_CHECK(ops[k] == TC_OP_COS ? y == 1 : y == 0 && signbit(y) == signbit(x), "%s %s(%a) = %a", name,
                   tt_name(dt), x, y);
        else if (fabs(x) <= 0x1p30)
          TT_CHECK(tt_close(y, d ? c : (double)(float)c, dt, 2), "%s %s(%a) = %a, the C library's %a", name,
                   tt_name(dt), x, y, c);
      }
      for (int h = 0; h < 6; h++) {
        double want = trig_huge[d][h][1 + k];
        for (int i = 0; i < 11; i++) trig_put(in, i, d, i == 5 ? trig_huge[d][h][0] : 0.25 * i);
        for (int64_t len = 1; len <= 11; len += 10) {
          const char *at = in + (len == 1 ? 5 * (d ? 8 : 4) : 0);
          cpu_vmath_kernel(ops[k], dt)(len, out, at, 1);
          double y = d ? ((double *)out)[len == 1 ? 0 : 5] : ((float *)out)[len == 1 ? 0 : 5];
          TT_CHECK(tt_close(y, want, dt, 1), "%s %s(%a) = %a, exactly %a", name, tt_name(dt), trig_huge[d][h][0], y,
                   want);
        }
      }
    }
  TT_DONE();
}

/* The error of got against want (long double) in ulps of want's binade in
 * f64 or f32 (the subnormals' spacing below the normal range); 0 where
 * both are NaN, or equal (infinities, zeros of either sign) */
static double ulps(double got, long double want, bool d) {
  if (isnan(got) && isnan(want)) return 0;
  if ((long double)got == want) return 0;
  if (isnan(got) || isnan(want) || isinf(got) || isinf(want)) return INFINITY;
  int e;
  frexpl(fabsl(want), &e);
  int lo = d ? -1021 : -125;
  long double u = ldexpl(1, (e < lo ? lo : e) - (d ? 53 : 24));
  return (double)(fabsl((long double)got - want) / u);
}

/* tcalc's own kernels (vmath_own.c) are within 1 ulp of the C library's
 * long double functions on every path, for fill()'s values and values
 * where each does its work: the paths' agreement alone would pass a
 * formula wrong the same way on all of them. */
static long double l_rsqrt(long double x) { return 1 / sqrtl(x); }
Test(vmath, own_kernels_within_one_ulp) {
  static const struct { tc_op op; long double (*f)(long double); double lo, hi; } fs[] = {
    {TC_OP_LOG, logl, 0.5, 2}, {TC_OP_LOG2, log2l, 0.5, 2}, {TC_OP_LOG10, log10l, 0.5, 2},
    {TC_OP_LOG1P, log1pl, -0.5, 1}, {TC_OP_ATAN, atanl, -4, 4}, {TC_OP_ASIN, asinl, -1, 1},
    {TC_OP_ACOS, acosl, -1, 1}, {TC_OP_RSQRT, l_rsqrt, 0, 4},
  };
  int lv[CPU_ISA_COUNT], nl = levels(lv);
  enum { N = 20011 };
  double *in = malloc(N * 8), *in2 = malloc(N * 8), *out = malloc(N * 8);
  cr_assert(in && in2 && out);
  int bad = 0;
  for (int d = 0; d < 2; d++) {
    tc_dtype dt = d ? TC_DT_F64 : TC_DT_F32;
    for (size_t k = 0; k < sizeof fs / sizeof *fs + 2; k++) {
      bool pair = k >= sizeof fs / sizeof *fs;   /* pow, then atan2 */
      tc_op op = !pair ? fs[k].op : k == sizeof fs / sizeof *fs ? TC_OP_POW : TC_OP_ATAN2;
      fill(dt, in, N);
      fill(dt, in2, N);
      for (int64_t i = 0; i < N; i += 2) {   /* every other value in the range of interest */
        double u = (double)(next() >> 11) * 0x1p-53, v = (double)(next() >> 11) * 0x1p-53;
        double x = pair ? (op == TC_OP_POW ? 0.25 + 4 * u : 8 * u - 4) : fs[k].lo + (fs[k].hi - fs[k].lo) * u;
        double y = op == TC_OP_POW ? 40 * v - 20 : 8 * v - 4;
        if (d) in[i] = x, in2[i] = y; else ((float *)in)[i] = (float)x, ((float *)in2)[i] = (float)y;
      }
      for (int l = 0; l < nl; l++) {
        cpu_matmul_isa(lv[l]);
        if (pair) cpu_vmath_bin_kernel(op, dt)(N, (char *)out, (const char *)in, 1, (const char *)in2, 1);
        else cpu_vmath_kernel(op, dt)(N, (char *)out, (const char *)in, 1);
        for (int64_t i = 0; i < N; i++) {
          long double x = d ? in[i] : ((float *)in)[i], y = d ? in2[i] : ((float *)in2)[i];
          double got = d ? out[i] : ((float *)out)[i];
          long double want = op == TC_OP_POW ? powl(x, y) : op == TC_OP_ATAN2 ? atan2l(x, y) : fs[k].f(x);
          /* beyond the dtype's range: its zero or infinity */
          if (d && ((double)want == 0 || isinf((double)want))) want = (double)want;
          if (!d && ((float)want == 0 || isinf((float)want))) want = (float)want;
          double e = ulps(got, want, d);
          if (e > 1 && ++bad <= 20)
            cr_log_error("%s %s (%s) of %La, %La: %a, want %La (%.3f ulp)", tc_op_name(op), tt_name(dt),
                         cpu_vmath_path_name(), x, y, got, want, e);
        }
      }
    }
  }
  cpu_matmul_isa(99);
  cr_assert_eq(bad, 0, "%d results more than 1 ulp off", bad);
  free(in);
  free(in2);
  free(out);
}
