/* Reductions in memory order (backend/cpu/reduce.c): a reduction over a
 * non-last axis folds rows of neighbouring outputs together, and max, min,
 * argmax and argmin of a contiguous run go by blocks and threads. Each must
 * give the bits of the one-element-at-a-time definition: the pairwise sum
 * (blocks of up to 128 in 8 accumulators, halves at multiples of 8), the
 * first NaN, else the first strictly better value for argmax/argmin (so -0
 * or +0, whichever comes first) and the last of the best for max/min (so
 * the last zero's sign, as folding maximum gives). Checked bit for bit against that definition written out
 * here, on data with NaNs, signed zeros and ties, for several shapes and
 * thread counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "tt.h"

static void setup(void) { tc_set_threads(0); }
static void teardown(void) { tc_set_threads(0); }
TestSuite(reduce_order, .init = setup, .fini = teardown);

static uint64_t seed = 0x2545f4914f6cdd1du;
static uint64_t next(void) { return tt_rand(&seed); }

/* the CPU's pairwise sum of x[0], x[s], ... in T */
#define PAIRWISE(T)                                                                             \
  static T pw_##T(const T *x, int64_t n, int64_t s) {                                          \
    if (n < 8) { if (!n) return 0; T r = x[0]; for (int64_t i = 1; i < n; i++) r += x[i * s]; return r; } \
    if (n <= 128) {                                                                             \
      T r[8];                                                                                   \
      for (int k = 0; k < 8; k++) r[k] = x[k * s];                                              \
      int64_t i = 8;                                                                            \
      for (; i + 8 <= n; i += 8) for (int k = 0; k < 8; k++) r[k] += x[(i + k) * s];           \
      T t = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                  \
      for (; i < n; i++) t += x[i * s];                                                         \
      return t;                                                                                 \
    }                                                                                           \
    int64_t h = n / 2; h -= h % 8;                                                              \
    return pw_##T(x, h, s) + pw_##T(x + h * s, n - h, s);                                       \
  }                                                                                             \
  /* index of the scan's answer: the first NaN, else the first strictly better (with last, \
   * the last of the best) */                                                                 \
  static int64_t scan_##T(const T *x, int64_t n, int64_t s, bool want_max, bool last) {        \
    T m = x[0];                                                                                 \
    int64_t k = 0;                                                                              \
    for (int64_t i = 1; i < n && m == m; i++) {                                                 \
      T v = x[i * s];                                                                           \
      if ((want_max ? v > m : v < m) || (last && v == m) || v != v) { m = v; k = i; }           \
    }                                                                                           \
    return k;                                                                                   \
  }
PAIRWISE(float)
PAIRWISE(double)

static double value(int64_t i) {
  uint64_t r = next();
  switch (r % 16) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return (double)(int64_t)(r >> 60);   /* small integers: ties */
  case 3: return r % 97 == 0 ? NAN : 1.5;
  default: return ((double)(r >> 11) * 0x1p-53 - 0.5) * (double)(1 + i % 7);
  }
}

static tc_tensor *reduce1(tc_op op, tc_tensor *x, int axis, tc_err *err) {
  tc_axes ax = {.all = axis < 0, .n = axis < 0 ? 0 : 1, .axis = {axis}};
  return tc_reduce(op, x, &ax, false, err);
}

static const tc_op ops[] = {TC_OP_REDUCE_SUM, TC_OP_MEAN, TC_OP_REDUCE_MAX, TC_OP_REDUCE_MIN, TC_OP_ARGMAX,
                            TC_OP_ARGMIN};

/* checks every op along axis 0, axis 1 and all axes of an R x C tensor */
#define CHECK_SHAPE(T, DT)                                                                              \
  static int check_##T(int64_t R, int64_t C, int threads) {                                            \
    tc_err err;                                                                                         \
    tc_err_clear(&err);                                                                                 \
    int64_t shape[2] = {R, C};                                                                          \
    tc_tensor *x = tc_tensor_new(DT, 2, shape, &err);                                                   \
    cr_assert(x);                                                                                       \
    T *d = (T *)(void *)tc_tensor_data(x);                                                              \
    for (int64_t i = 0; i < R * C; i++) d[i] = (T)value(i);                                             \
    tc_set_threads(threads);                                                                            \
    int bad = 0;                                                                                        \
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {                                             \
      tc_op op = ops[o];                                                                                \
      bool arg = op == TC_OP_ARGMAX || op == TC_OP_ARGMIN;                                              \
      bool mx = op == TC_OP_REDUCE_MAX || op == TC_OP_ARGMAX;                                           \
      for (int axis = -1; axis < 2; axis++) {                                                           \
        tc_tensor *r = reduce1(op, x, axis, &err);                                                      \
        cr_assert(r, "%s: %s", tc_op_name(op), tt_msg(&err));                                                \
        int64_t nout = axis < 0 ? 1 : axis == 0 ? C : R, n = axis < 0 ? R * C : axis == 0 ? R : C;      \
        int64_t s = axis == 0 ? C : 1;                                                                  \
        for (int64_t j = 0; j < nout; j++) {                                                            \
          const T *run = axis == 0 ? d + j : d + j * C;                                                 \
          if (axis < 0) run = d;                                                                        \
          T want = 0;                                                                                   \
          int64_t wk = 0;                                                                               \
          if (op == TC_OP_REDUCE_SUM) want = pw_##T(run, n, s);                                         \
          else if (op == TC_OP_MEAN) want = pw_##T(run, n, s) / (T)n;                                   \
          else { wk = scan_##T(run, n, s, mx, !arg); want = run[wk * s]; }                              \
          bool ok;                                                                                      \
          if (arg) ok = ((int64_t *)(void *)tc_tensor_data(r))[j] == wk;                                \
          else {                                                                                        \
            T got = ((T *)(void *)tc_tensor_data(r))[j];                                                \
            ok = memcmp(&got, &want, sizeof got) == 0 || (got != got && want != want);                 \
          }                                                                                             \
          if (!ok && ++bad <= 5)                                                                        \
            cr_log_error("%s %s [%lld, %lld] axis %d threads %d: output %lld differs", tc_op_name(op),  \
                         #T, (long long)R, (long long)C, axis, threads, (long long)j);                  \
        }                                                                                               \
        tc_tensor_free(r);                                                                              \
      }                                                                                                 \
    }                                                                                                   \
    tc_tensor_free(x);                                                                                  \
    return bad;                                                                                         \
  }
CHECK_SHAPE(float, TC_DT_F32)
CHECK_SHAPE(double, TC_DT_F64)

Test(reduce_order, same_bits_as_the_definition) {
  static const int64_t rows[] = {1, 2, 7, 8, 9, 127, 128, 129, 300, 1031};
  static const int64_t cols[] = {1, 3, 64, 65, 257, 700};
  int bad = 0;
  for (size_t a = 0; a < sizeof rows / sizeof *rows; a++)
    for (size_t b = 0; b < sizeof cols / sizeof *cols; b++)
      for (int t = 1; t <= 3; t += 2) {
        bad += check_float(rows[a], cols[b], t);
        bad += check_double(rows[a], cols[b], t);
      }
  cr_assert_eq(bad, 0, "%d outputs differ from the definition", bad);
}

/* long runs: the threaded max/min/argmax/argmin and the blocked scans */
Test(reduce_order, long_runs_any_thread_count) {
  int bad = 0;
  for (int t = 1; t <= 4; t += tt_sampled() ? 2 : 1) {
    bad += check_float(3, 400003, t);
    bad += check_double(1, 1000003, t);
    bad += check_float(2000, 513, t);
    /* wider than a strip of the sums (4096 f32, 2048 f64 columns) */
    bad += check_float(300, 4100, t);
    bad += check_double(261, 2053, t);
    /* tall and narrow: the rows split across threads, the pairwise tree's
     * subtrees (sums) or runs of rows (scans) combined */
    bad += check_float(100003, 9, t);
    bad += check_double(40001, 33, t);
    bad += check_float(5003, 2048, t);
  }
  cr_assert_eq(bad, 0, "%d outputs differ from the definition", bad);
}

/* integer sums over a non-last axis (strips of 2048 columns, blocks of 128
 * rows) wrap as the one-at-a-time sum does, at any thread count */
Test(reduce_order, integer_column_sums_wrap) {
  static const int64_t shapes[][2] = {{1, 5}, {129, 2049}, {300, 4100}, {2, 70000}, {20001, 40}};
  int bad = 0;
  for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++) {
    int64_t R = shapes[q][0], C = shapes[q][1];
    tc_err err;
    tc_err_clear(&err);
    tc_tensor *x = tc_tensor_new(TC_DT_I32, 2, shapes[q], &err);
    cr_assert(x);
    int32_t *d = (int32_t *)(void *)tc_tensor_data(x);
    for (int64_t i = 0; i < R * C; i++) d[i] = (int32_t)(uint32_t)(next() >> 32);
    for (int t = 1; t <= 3; t++) {
      tc_set_threads(t);
      tc_tensor *r = reduce1(TC_OP_REDUCE_SUM, x, 0, &err);
      cr_assert(r, "%s", tt_msg(&err));
      const int32_t *got = (const int32_t *)(const void *)tc_tensor_data(r);
      for (int64_t c = 0; c < C; c++) {
        uint32_t want = 0;
        for (int64_t i = 0; i < R; i++) want += (uint32_t)d[i * C + c];
        if ((uint32_t)got[c] != want && ++bad <= 5)
          cr_log_error("i32 [%lld, %lld] threads %d: column %lld differs", (long long)R, (long long)C, t,
                       (long long)c);
      }
      tc_tensor_free(r);
    }
    tc_tensor_free(x);
  }
  cr_assert_eq(bad, 0, "%d column sums differ", bad);
}

/* Every other reduction over axis 0 (the memory-order kernels: the table's
 * folds in index order, the pairwise nansum and integer mean, and the rows
 * split across threads) gives, bit for bit, what the same reduction over
 * the last axis of the transposed copy gives (each run folded alone). */
static const tc_op other_ops[] = {TC_OP_REDUCE_PROD, TC_OP_ANY,     TC_OP_ALL,       TC_OP_COUNT_NONZERO,
                                  TC_OP_NANMEAN,     TC_OP_NANMAX,  TC_OP_NANMIN,    TC_OP_NANARGMAX,
                                  TC_OP_NANARGMIN,   TC_OP_NANSUM,  TC_OP_MEAN,      TC_OP_REDUCE_SUM};

static double other_value(tc_dtype dt) {
  uint64_t r = next();
  if (dt == TC_DT_BOOL) return (double)(r % 3 == 0);
  if (dt == TC_DT_U8) return (double)(r % 5 == 0 ? 0 : 1 + r % 200);
  if (dt == TC_DT_I32) return (double)(int64_t)(r % 7 == 0 ? 0 : (int64_t)(r >> 33) - (1 << 30));
  switch (r % 32) {
  case 0: return NAN;
  case 1: return -0.0;
  case 2: return 0.0;
  default: return 0.5 + (double)(r >> 11) * 0x1p-53;   /* products stay finite for a while */
  }
}

/* 1 when op over axis 0 of a ([R, C]) differs from op over axis 1 of b (its
 * transposed copy), logged while bad (the differences so far) is under
 * five; 0 when they agree, or with may_fail when both fail (an op the dtype
 * lacks, nanmean of bool say) */
static int axis0_differs(tc_op op, tc_tensor *a, tc_tensor *b, int threads, int bad, bool may_fail) {
  tc_err err;
  tc_err_clear(&err);
  tc_tensor *r0 = reduce1(op, a, 0, &err);
  tc_tensor *r1 = r0 ? reduce1(op, b, 1, &err) : NULL;
  if (!r0 || !r1) {
    cr_assert(may_fail, "%s %s: %s", tc_op_name(op), tc_dtype_name(a->dtype), tt_msg(&err));
    cr_assert(!r0 && !r1, "%s: only one axis failed", tc_op_name(op));
    tc_tensor_free(r0);
    return 0;
  }
  size_t nb = (size_t)tc_numel(r0) * tc_dtype_size(r0->dtype);
  int differs = r0->dtype != r1->dtype || memcmp(tc_tensor_data(r0), tc_tensor_data(r1), nb) != 0;
  if (differs && bad < 5)
    cr_log_error("%s %s [%lld, %lld] threads %d: axis 0 differs from the runs", tc_op_name(op), tc_dtype_name(a->dtype),
                 (long long)a->shape[0], (long long)a->shape[1], threads);
  tc_tensor_free(r0);
  tc_tensor_free(r1);
  return differs;
}

static int check_other(tc_dtype dt, int64_t R, int64_t C, int threads) {
  tc_err err;
  tc_err_clear(&err);
  int64_t shape[2] = {R, C}, tshape[2] = {C, R};
  tc_tensor *x = tc_tensor_new(TC_DT_F64, 2, shape, &err), *xt = tc_tensor_new(TC_DT_F64, 2, tshape, &err);
  cr_assert(x && xt);
  double *d = (double *)(void *)tc_tensor_data(x), *dt_ = (double *)(void *)tc_tensor_data(xt);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) dt_[j * R + i] = d[i * C + j] = other_value(dt);
  if (C > 1 && (dt == TC_DT_F32 || dt == TC_DT_F64))   /* a column of NaNs alone, one of them negative */
    for (int64_t i = 0; i < R; i++) dt_[R + i] = d[i * C + 1] = i == R / 2 ? -NAN : NAN;
  tc_tensor *a = tc_cast(x, dt, &err), *b = tc_cast(xt, dt, &err);
  cr_assert(a && b, "%s", tt_msg(&err));
  tc_set_threads(threads);
  int bad = 0;
  for (size_t o = 0; o < sizeof other_ops / sizeof *other_ops; o++) bad += axis0_differs(other_ops[o], a, b, threads, bad, true);
  tc_tensor_free(a);
  tc_tensor_free(b);
  tc_tensor_free(x);
  tc_tensor_free(xt);
  return bad;
}

Test(reduce_order, other_reductions_over_axis_0_match_the_runs) {
  static const tc_dtype dts[] = {TC_DT_F32, TC_DT_F64, TC_DT_I32, TC_DT_U8, TC_DT_BOOL};
  static const int64_t shapes[][2] = {{1, 9}, {9, 3}, {300, 700}, {20001, 40}, {2100, 1030}};
  int bad = 0;
  for (size_t q = 0; q < sizeof dts / sizeof *dts; q++)
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
      for (int t = 1; t <= 3; t++) bad += check_other(dts[q], shapes[k][0], shapes[k][1], t);
  cr_assert_eq(bad, 0, "%d reductions differ", bad);
}

/* logsumexp over axis 0 (strips of columns, or the rows' chunks across
 * threads) gives, bit for bit, what it gives over the last axis of the
 * transposed copy: the same blocks' largest elements, exps, pairwise sums
 * and merges, in order. Data spread over [-100, 100] (blocks' largest
 * elements far apart), with a NaN in column 1, +inf in column 2, column 3
 * all -inf, a block of -inf in column 4, zeros of both signs alone in
 * column 5 and +inf then NaN in column 6. */
static double lse_value(int64_t i, int64_t j, int64_t R) {
  uint64_t r = next();
  switch (j) {
  case 1: if (i == R / 3) return NAN; break;
  case 2: if (i == R - 1) return INFINITY; break;
  case 3: return -INFINITY;
  case 4: if (i >= 256 && i < 512) return -INFINITY; break;
  case 5: return r % 2 ? -0.0 : 0.0;
  case 6: if (i == R / 2) return INFINITY; if (i == R / 2 + 1) return NAN; break;
  default: break;
  }
  double v = (double)(r >> 11) * 0x1p-53 * 60 - 30;
  return r % 50 == 0 ? v * 3.3 : v;
}

Test(reduce_order, logsumexp_over_axis_0_matches_the_runs) {
  static const tc_dtype dts[] = {TC_DT_F32, TC_DT_F64, TC_DT_F16, TC_DT_BF16};
  static const int64_t shapes[][2] = {{1, 9}, {9, 3}, {300, 700}, {20001, 40}, {9000, 600}, {4097, 6}, {257, 300}};
  int bad = 0;
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    int64_t R = shapes[k][0], C = shapes[k][1], shape[2] = {R, C}, tshape[2] = {C, R};
    if (tt_sampled() && R * C > 1000000) continue;
    tc_err err;
    tc_err_clear(&err);
    tc_tensor *x = tc_tensor_new(TC_DT_F64, 2, shape, &err), *xt = tc_tensor_new(TC_DT_F64, 2, tshape, &err);
    cr_assert(x && xt);
    double *d = (double *)(void *)tc_tensor_data(x), *dt_ = (double *)(void *)tc_tensor_data(xt);
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < C; j++) dt_[j * R + i] = d[i * C + j] = lse_value(i, j, R);
    for (size_t q = 0; q < sizeof dts / sizeof *dts; q++) {
      tc_tensor *a = tc_cast(x, dts[q], &err), *b = tc_cast(xt, dts[q], &err);
      cr_assert(a && b, "%s", tt_msg(&err));
      for (int t = 1; t <= 3; t++) {
        tc_set_threads(t);
        bad += axis0_differs(TC_OP_LOGSUMEXP, a, b, t, bad, false);
      }
      tc_tensor_free(a);
      tc_tensor_free(b);
    }
    tc_tensor_free(x);
    tc_tensor_free(xt);
  }
  cr_assert_eq(bad, 0, "%d logsumexps differ", bad);
}
