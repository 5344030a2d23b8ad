/* The CPU engine's threads: results that do not depend on the thread count
 * (integers always; float sums too, since they split along the pairwise
 * tree), TCALC_THREADS, interrupts, and the allocation cache. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tcalc.h"
#include "cpu/cpu.h"
#include <stdatomic.h>
#include "tt.h"

static tc_err err;
static void setup(void) { tc_err_clear(&err); tc_set_threads(0); }
static void teardown(void) { tc_set_threads(0); unsetenv("TCALC_THREADS"); }
TestSuite(threads, .init = setup, .fini = teardown);

static const int counts[] = {1, 2, 3, 8};
#define NCOUNTS (sizeof counts / sizeof counts[0])

static uint64_t rng = 88172645463325252u;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static tc_tensor *random_tensor(tc_dtype dt, int ndim, const int64_t *shape, bool nonzero) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  tc_tensor *t;
  if (dt == TC_DT_F64 || dt == TC_DT_F32 || dt == TC_DT_BF16 || dt == TC_DT_F16) {
    double *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (double)(rnd() >> 11) * 0x1p-53 * 2 - 0.7;
    t = tc_tensor_from_host(TC_DT_F64, ndim, shape, v, &err);
    free(v);
  } else {
    int64_t *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
      v[i] = (int64_t)rnd();
      if (nonzero && (v[i] & 0xff) == 0) v[i] |= 1;
    }
    t = tc_tensor_from_host(TC_DT_I64, ndim, shape, v, &err);
    free(v);
  }
  cr_assert_not_null(t, "%s", tt_msg(&err));
  tc_tensor *c = tc_cast(t, dt, &err);
  tc_tensor_free(t);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  return c;
}

static void *bytes_of(tc_tensor *t, size_t *n) {
  *n = (size_t)tc_numel(t) * tc_dtype_size(t->dtype);
  void *v = malloc(*n ? *n : 1);
  cr_assert_eq(tc_tensor_to_host(t, v, &err), 0, "%s", tt_msg(&err));
  return v;
}

/* Runs f under every thread count and asserts the result bytes agree. */
typedef tc_tensor *(*op_fn)(tc_tensor *a, tc_tensor *b);
static void same_for_every_count(const char *what, op_fn f, tc_tensor *a, tc_tensor *b) {
  void *first = NULL;
  size_t n0 = 0;
  for (size_t i = 0; i < NCOUNTS; i++) {
    tc_set_threads(counts[i]);
    cr_assert_eq(tc_get_threads(), counts[i]);
    tc_tensor *r = f(a, b);
    cr_assert_not_null(r, "%s: %s", what, tt_msg(&err));
    size_t n;
    void *v = bytes_of(r, &n);
    tc_tensor_free(r);
    if (!first) { first = v; n0 = n; continue; }
    cr_assert_eq(n, n0);
    cr_assert(memcmp(first, v, n) == 0, "%s differs between 1 and %d threads", what, counts[i]);
    free(v);
  }
  free(first);
}

static tc_tensor *op_matmul(tc_tensor *a, tc_tensor *b) { return tc_matmul(a, b, &err); }
static tc_tensor *op_add(tc_tensor *a, tc_tensor *b) { return tc_binary(TC_OP_ADD, a, b, &err); }
static tc_tensor *op_mul(tc_tensor *a, tc_tensor *b) { return tc_binary(TC_OP_MUL, a, b, &err); }
static tc_tensor *op_div(tc_tensor *a, tc_tensor *b) { return tc_binary(TC_OP_DIV, a, b, &err); }
static tc_tensor *op_sum_all(tc_tensor *a, tc_tensor *b) {
  (void)b;
  tc_axes ax = {.all = true};
  return tc_reduce(TC_OP_REDUCE_SUM, a, &ax, false, &err);
}
static tc_tensor *op_mean_all(tc_tensor *a, tc_tensor *b) {
  (void)b;
  tc_axes ax = {.all = true};
  return tc_reduce(TC_OP_MEAN, a, &ax, false, &err);
}
static tc_tensor *op_sum_axis1(tc_tensor *a, tc_tensor *b) {
  (void)b;
  tc_axes ax = {.all = false, .n = 1, .axis = {1}};
  return tc_reduce(TC_OP_REDUCE_SUM, a, &ax, false, &err);
}
static tc_tensor *op_sum_axis0(tc_tensor *a, tc_tensor *b) {
  (void)b;
  tc_axes ax = {.all = false, .n = 1, .axis = {0}};
  return tc_reduce(TC_OP_REDUCE_SUM, a, &ax, false, &err);
}

Test(threads, integer_matmul_is_the_same_for_every_count) {
  const tc_dtype dts[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64, TC_DT_BOOL};
  for (size_t d = 0; d < 5; d++) {
    tc_tensor *a = random_tensor(dts[d], 2, (int64_t[]){300, 270}, false);
    tc_tensor *b = random_tensor(dts[d], 2, (int64_t[]){270, 190}, false);
    same_for_every_count(tc_dtype_name(dts[d]), op_matmul, a, b);
    tc_tensor_free(a);
    tc_tensor_free(b);
  }
  /* a batch of small products, split across threads by batch */
  tc_tensor *a = random_tensor(TC_DT_I64, 3, (int64_t[]){500, 6, 7}, false);
  tc_tensor *b = random_tensor(TC_DT_I64, 3, (int64_t[]){500, 7, 5}, false);
  same_for_every_count("batched i64", op_matmul, a, b);
  tc_tensor_free(a);
  tc_tensor_free(b);
}

Test(threads, elementwise_and_sums_are_the_same_for_every_count) {
  int64_t shape[2] = {1000, 1031};   /* above the split threshold, not a round size */
  const tc_dtype ints[] = {TC_DT_I8, TC_DT_I32, TC_DT_I64};
  for (size_t d = 0; d < 3; d++) {
    tc_tensor *a = random_tensor(ints[d], 2, shape, false), *b = random_tensor(ints[d], 2, shape, true);
    same_for_every_count("add", op_add, a, b);
    same_for_every_count("mul", op_mul, a, b);
    same_for_every_count("div", op_div, a, b);
    same_for_every_count("reduce_sum", op_sum_all, a, NULL);
    same_for_every_count("reduce_sum axis 1", op_sum_axis1, a, NULL);
    same_for_every_count("reduce_sum axis 0", op_sum_axis0, a, NULL);
    tc_tensor_free(a);
    tc_tensor_free(b);
  }
}

Test(threads, float_sums_are_the_same_for_every_count) {
  const tc_dtype flts[] = {TC_DT_F64, TC_DT_F32, TC_DT_BF16};
  const int64_t lens[] = {1 << 20, 3000017};
  for (size_t d = 0; d < 3; d++)
    for (size_t l = 0; l < 2; l++) {
      tc_tensor *a = random_tensor(flts[d], 1, &lens[l], false);
      same_for_every_count("float reduce_sum", op_sum_all, a, NULL);
      same_for_every_count("float mean", op_mean_all, a, NULL);
      same_for_every_count("float add", op_add, a, a);
      tc_tensor_free(a);
    }
}

Test(threads, float_sum_is_accurate) {
  /* 0.1 added 3M times in f64: pairwise keeps the error near 1 ulp of the sum */
  int64_t n = 3000017;
  tc_tensor *one = tc_scalar_f64(0.1, false, &err);
  tc_tensor *v = tc_view_broadcast(one, 1, &n, &err);
  tc_tensor *c = tc_contiguous(v, &err);
  tc_set_threads(3);
  tc_axes ax = {.all = true};
  tc_tensor *s = tc_reduce(TC_OP_REDUCE_SUM, c, &ax, false, &err);
  double got;
  tc_tensor_to_host(s, &got, &err);
  double exact = 300001.7;
  cr_assert(got > exact * (1 - 1e-14) && got < exact * (1 + 1e-14), "sum %.17g", got);
  tc_tensor_free(one); tc_tensor_free(v); tc_tensor_free(c); tc_tensor_free(s);
}

Test(threads, first_zero_divisor_is_found_whatever_the_count) {
  int64_t n = 1 << 20;
  int64_t *v = malloc(sizeof *v * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = 3;
  /* zeros late in the last thread's range and early in a later one */
  v[n - 5] = 0;
  v[700001] = 0;
  v[400003] = 0;
  tc_tensor *b = tc_tensor_from_host(TC_DT_I64, 1, &n, v, &err);
  tc_tensor *a = tc_tensor_from_host(TC_DT_I64, 1, &n, v, &err);
  for (size_t i = 0; i < NCOUNTS; i++) {
    tc_set_threads(counts[i]);
    tc_err_clear(&err);
    tc_tensor *r = tc_binary(TC_OP_DIV, a, b, &err);
    cr_assert_null(r);
    cr_assert_eq(err.code, TC_E_DIV_ZERO);
    cr_assert(err.has_index && err.index[0] == 400003, "%d threads: index %lld", counts[i],
              (long long)err.index[0]);
  }
  free(v);
  tc_tensor_free(a);
  tc_tensor_free(b);
}

Test(threads, tcalc_threads_sets_the_default) {
  setenv("TCALC_THREADS", "3", 1);
  tc_set_threads(0);
  cr_assert_eq(tc_get_threads(), 3);
  tc_set_threads(5);
  cr_assert_eq(tc_get_threads(), 5, "an explicit count wins");
  setenv("TCALC_THREADS", "junk", 1);
  tc_set_threads(0);
  cr_assert_geq(tc_get_threads(), 1, "a bad value falls back to the CPUs");
}

Test(threads, interrupt_stops_every_thread) {
  int64_t n = 1 << 22;
  tc_tensor *a = random_tensor(TC_DT_I32, 1, &n, true);
  tc_set_threads(4);
  tc_interrupt_flag = 1;
  tc_tensor *r = tc_binary(TC_OP_ADD, a, a, &err);
  cr_assert_null(r);
  cr_assert_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  tc_err_clear(&err);
  tc_axes ax = {.all = true};
  r = tc_reduce(TC_OP_REDUCE_SUM, a, &ax, false, &err);
  cr_assert_null(r);
  cr_assert_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  tc_interrupt_clear();
  tc_err_clear(&err);
  r = tc_binary(TC_OP_ADD, a, a, &err);
  cr_assert_not_null(r, "works again after the interrupt: %s", tt_msg(&err));
  tc_tensor_free(r);
  tc_tensor_free(a);
}

Test(threads, reused_blocks_hold_new_results) {
  /* c = a + b in a loop: the cache hands back the last result's block */
  int64_t n = 1 << 20;
  tc_tensor *a = random_tensor(TC_DT_I32, 1, &n, false);
  uint64_t base = tc_mem_in_use();
  tc_tensor *c = NULL;
  for (int k = 1; k <= 4; k++) {
    tc_tensor *s = tc_scalar_i64(k, true, &err);
    tc_tensor *r = tc_binary(TC_OP_ADD, a, s, &err);
    cr_assert_not_null(r, "%s", tt_msg(&err));
    tc_tensor_free(c);
    c = r;
    tc_tensor_free(s);
    tc_tensor *d = tc_binary(TC_OP_SUB, c, a, &err);
    tc_axes ax = {.all = true};
    tc_tensor *m = tc_reduce(TC_OP_REDUCE_MIN, d, &ax, false, &err), *x = tc_reduce(TC_OP_REDUCE_MAX, d, &ax, false, &err);
    int32_t lo, hi;
    tc_tensor_to_host(m, &lo, &err);
    tc_tensor_to_host(x, &hi, &err);
    cr_assert(lo == k && hi == k, "round %d: c - a in [%d, %d]", k, lo, hi);
    tc_tensor_free(d); tc_tensor_free(m); tc_tensor_free(x);
  }
  tc_tensor_free(c);
  cr_assert_eq(tc_mem_in_use(), base, "cached blocks are not counted as results");
  tc_tensor_free(a);
}

Test(threads, split_sum_has_the_bits_of_the_serial_sum) {
  /* reduce_sum(x) splits x along the pairwise tree; the rows of [x, x]
   * summed along axis 1 are two outputs, each summed serially */
  const tc_dtype flts[] = {TC_DT_F64, TC_DT_F32, TC_DT_F16};
  int64_t n = 3000017;
  for (size_t d = 0; d < 3; d++) {
    tc_tensor *x = random_tensor(flts[d], 1, &n, false);
    int64_t shape2[2] = {2, n};
    tc_tensor *xx = tc_view_broadcast(x, 2, shape2, &err);
    for (size_t i = 0; i < NCOUNTS; i++) {
      tc_set_threads(counts[i]);
      tc_tensor *whole = op_sum_all(x, NULL), *rows = op_sum_axis1(xx, NULL);
      cr_assert_not_null(whole, "%s", tt_msg(&err));
      cr_assert_not_null(rows, "%s", tt_msg(&err));
      size_t n1, n2;
      unsigned char *a = bytes_of(whole, &n1), *b = bytes_of(rows, &n2);
      cr_assert_eq(n2, 2 * n1);
      cr_assert(memcmp(a, b, n1) == 0 && memcmp(a, b + n1, n1) == 0, "%s: %d threads",
                tc_dtype_name(flts[d]), counts[i]);
      free(a); free(b);
      tc_tensor_free(whole); tc_tensor_free(rows);
    }
    tc_tensor_free(xx);
    tc_tensor_free(x);
  }
}

/* ---- the pool itself ---- */
/* Jobs end when their claimed tasks are done, without waiting for workers
 * that have not woken; a worker waking late must claim nothing from a job
 * that has ended, nor from the next one with the old job's function. */
static _Atomic int pool_hits[64], pool_late;
static atomic_int pool_open;
static int pool_job;   /* the job a task belongs to (written by the caller only) */
typedef struct { int job, fail_at; } pool_ctx;
static int pool_task(void *ctx, int task, int worker) {
  const pool_ctx *c = ctx;
  if (!atomic_load(&pool_open) || c->job != pool_job || worker < 0 || worker >= 8) atomic_fetch_add(&pool_late, 1);
  atomic_fetch_add(&pool_hits[task], 1);
  if ((c->job * 31 + task) % 8 == 0) { volatile int spin = 0; for (int i = 0; i < 2000; i++) spin += i; }
  return task == c->fail_at ? -1 : 0;
}

Test(threads, pool_runs_each_task_once_and_waits_for_every_claimed_one) {
  const int tcounts[] = {2, 3, 8};
  for (size_t t = 0; t < 3; t++) {
    tc_set_threads(tcounts[t]);
    for (int rep = 0; rep < 3000; rep++) {
      int n = 1 + rep % 40;
      pool_ctx c = {rep, rep % 5 == 0 ? rep % n : -1};
      for (int i = 0; i < n; i++) atomic_store(&pool_hits[i], 0);
      pool_job = rep;
      atomic_store(&pool_open, 1);
      int rc = cpu_parallel(n, pool_task, &c);
      atomic_store(&pool_open, 0);
      cr_assert_eq(rc, c.fail_at >= 0 ? -1 : 0, "job %d: rc %d", rep, rc);
      for (int i = 0; i < n; i++) {
        int h = atomic_load(&pool_hits[i]);
        /* a failed job may skip tasks, never run one twice */
        cr_assert(c.fail_at >= 0 ? h <= 1 : h == 1, "job %d (%d threads): task %d ran %d times", rep, tcounts[t], i, h);
      }
    }
  }
  cr_assert_eq(atomic_load(&pool_late), 0, "a task ran outside its job, or with a bad worker index");
}

/* scatter: each thread owns a range of the axis and applies its updates in
 * index order, so duplicates combine in the same order for every count,
 * the order of the serial definition */
static tc_tensor *scat_idx, *scat_u;
static tc_tensor *op_scatter_add(tc_tensor *a, tc_tensor *b) {
  (void)b;
  return tc_scatter(a, scat_idx, scat_u, 0, TC_SCATTER_ADD, TC_MODE_ERROR, &err);
}
static tc_tensor *op_scatter_set(tc_tensor *a, tc_tensor *b) {
  (void)b;
  return tc_scatter(a, scat_idx, scat_u, 0, TC_SCATTER_SET, TC_MODE_ERROR, &err);
}

Test(threads, scatter_is_the_same_for_every_count_and_in_index_order) {
  enum { LEN = 5003, N = 200000 };   /* N above the split threshold, some 40 updates per element */
  int64_t *iv = malloc(sizeof *iv * N);
  for (int i = 0; i < N; i++) iv[i] = (int64_t)(rnd() % (2 * LEN)) - LEN;   /* negative ones too */
  scat_idx = tc_tensor_from_host(TC_DT_I64, 1, (int64_t[]){N}, iv, &err);
  cr_assert_not_null(scat_idx, "%s", tt_msg(&err));
  scat_u = random_tensor(TC_DT_F32, 1, (int64_t[]){N}, false);
  tc_tensor *x = random_tensor(TC_DT_F32, 1, (int64_t[]){LEN}, false);
  same_for_every_count("scatter add", op_scatter_add, x, NULL);
  same_for_every_count("scatter set", op_scatter_set, x, NULL);
  size_t nb;
  float *want_add = bytes_of(x, &nb), *want_set = bytes_of(x, &nb), *u = bytes_of(scat_u, &nb);
  for (int i = 0; i < N; i++) {
    int64_t k = iv[i] < 0 ? iv[i] + LEN : iv[i];
    want_add[k] = want_add[k] + u[i];
    want_set[k] = u[i];
  }
  tc_set_threads(3);
  tc_tensor *ra = op_scatter_add(x, NULL), *rs = op_scatter_set(x, NULL);
  cr_assert(ra && rs, "%s", tt_msg(&err));
  float *ga = bytes_of(ra, &nb), *gs = bytes_of(rs, &nb);
  cr_assert(memcmp(ga, want_add, nb) == 0, "scatter add on 3 threads differs from adding in index order");
  cr_assert(memcmp(gs, want_set, nb) == 0, "scatter set on 3 threads differs from the last update in index order");
  free(ga), free(gs), free(want_add), free(want_set), free(u), free(iv);
  tc_tensor *const done[] = {ra, rs, x, scat_idx, scat_u};
  for (size_t i = 0; i < sizeof done / sizeof done[0]; i++) tc_tensor_free(done[i]);
}

/* argmax/argmin/max/min of one long run, split across threads from 2^16
 * elements: against a one-element-at-a-time scan (the first NaN; else the
 * first occurrence of the extreme), with no NaN and with NaNs planted in
 * a block's vector part, a block's tail and across the chunk boundaries */
static int64_t scan_arg(const double *x, int64_t n, bool mx) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (x[i] != x[i]) return i;
    if (mx ? x[i] > x[k] : x[i] < x[k]) k = i;
  }
  return k;
}

Test(threads, extremes_match_the_scan_for_every_count) {
  enum { N = 100003 };
  double *v = malloc(sizeof *v * N);
  const int64_t nan_at[] = {-1, 70001, 50002, 33339, 1023, 1024, 99999};
  for (size_t c = 0; c < sizeof nan_at / sizeof nan_at[0]; c++) {
    for (int64_t i = 0; i < N; i++) v[i] = (double)(rnd() % 1000) - 500;   /* many ties */
    if (nan_at[c] >= 0) { v[nan_at[c]] = NAN; v[N - 2] = NAN; }
    tc_tensor *x = tc_tensor_from_host(TC_DT_F64, 1, (int64_t[]){N}, v, &err);
    cr_assert_not_null(x, "%s", tt_msg(&err));
    for (size_t t = 0; t < NCOUNTS; t++) {
      tc_set_threads(counts[t]);
      for (int mx = 0; mx < 2; mx++) {
        tc_axes all = {.all = true};
        tc_tensor *a = tc_reduce(mx ? TC_OP_ARGMAX : TC_OP_ARGMIN, x, &all, false, &err);
        tc_tensor *m = tc_reduce(mx ? TC_OP_REDUCE_MAX : TC_OP_REDUCE_MIN, x, &all, false, &err);
        cr_assert(a && m, "%s", tt_msg(&err));
        int64_t got;
        double val;
        cr_assert_eq(tc_tensor_to_host(a, &got, &err), 0);
        cr_assert_eq(tc_tensor_to_host(m, &val, &err), 0);
        int64_t want = scan_arg(v, N, mx);
        cr_assert_eq(got, want, "arg%s with NaN at %lld on %d threads: %lld, the scan %lld", mx ? "max" : "min",
                     (long long)nan_at[c], counts[t], (long long)got, (long long)want);
        cr_assert(val == v[want] || (val != val && v[want] != v[want]), "%s value on %d threads", mx ? "max" : "min",
                  counts[t]);
        tc_tensor_free(a);
        tc_tensor_free(m);
      }
    }
    tc_tensor_free(x);
  }
  free(v);
}

/* arange and linspace split into spans across threads: element i is
 * start + i * step whatever the count, and linspace ends at stop */
static tc_tensor *op_arange(tc_tensor *a, tc_tensor *b) {
  (void)a, (void)b;
  tc_tensor *s = tc_scalar_i64(-7, false, &err), *e = tc_scalar_i64(3 * 300001 - 7, false, &err),
            *st = tc_scalar_i64(3, false, &err);
  tc_tensor *r = tc_arange(s, e, st, TC_DT_I64, &err);
  tc_tensor_free(s), tc_tensor_free(e), tc_tensor_free(st);
  return r;
}
static tc_tensor *op_linspace(tc_tensor *a, tc_tensor *b) {
  (void)a, (void)b;
  return tc_linspace(-1.5, 2.25, 300001, TC_DT_F64, &err);
}

Test(threads, ranges_are_the_same_for_every_count) {
  same_for_every_count("arange", op_arange, NULL, NULL);
  same_for_every_count("linspace", op_linspace, NULL, NULL);
  tc_set_threads(3);
  tc_tensor *r = op_arange(NULL, NULL), *l = op_linspace(NULL, NULL);
  cr_assert(r && l, "%s", tt_msg(&err));
  size_t nb;
  int64_t *iv = bytes_of(r, &nb);
  double *lv = bytes_of(l, &nb);
  for (int64_t i = 0; i < 300001; i++) {
    cr_assert_eq(iv[i], -7 + 3 * i, "arange element %lld", (long long)i);
    if (i < 300000) cr_assert_eq(lv[i], -1.5 + (double)i * (3.75 / 300000), "linspace element %lld", (long long)i);
  }
  cr_assert_eq(lv[300000], 2.25);
  free(iv), free(lv);
  tc_tensor_free(r), tc_tensor_free(l);
}
