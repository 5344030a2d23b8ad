/* The memory limit, size overflow and interrupts (issue 7): results too
 * large for the limit, or whose element count overflows 64 bits, fail at
 * once with out_of_memory (or bad_argument for negative dimensions) and
 * allocate nothing; the limit is a budget over all live tensors; every
 * kernel family notices tc_interrupt_flag and fails with `interrupted`,
 * leaving no tensor behind. */
#include <criterion/criterion.h>
#include <stdio.h>
#include "tcalc.h"
#include "tt.h"

#define MiB ((uint64_t)1 << 20)

static void expect_fail(tc_tensor *r, tc_err *e, tc_code code, uint64_t in_use, const char *what) {
  cr_expect_null(r, "%s: expected %s, got a tensor", what, tc_code_name(code));
  cr_expect_eq(e->code, code, "%s: expected %s, got %s (%s)", what, tc_code_name(code), tc_code_name(e->code), tt_msg(e));
  cr_expect_eq(tc_mem_in_use(), in_use, "%s: %llu bytes allocated by a failed call", what,
               (unsigned long long)(tc_mem_in_use() - in_use));
  tc_tensor_free(r);
}

Test(limits, constructors_beyond_the_limit_allocate_nothing) {
  tc_set_max_memory(64 * MiB);
  uint64_t base = tc_mem_in_use();
  struct { int ndim; int64_t shape[3]; tc_code code; } cases[] = {
    {3, {100000, 100000, 100000}, TC_E_OOM},          /* 8e15 elements: over the limit */
    {2, {4294967296, 4294967296}, TC_E_OOM},          /* 2^64 elements: overflows */
    {2, {INT64_MAX, 2}, TC_E_OOM},
    {3, {INT64_MAX, INT64_MAX, INT64_MAX}, TC_E_OOM},
    {1, {INT64_MAX / 4}, TC_E_OOM},                   /* bytes overflow, elements do not */
    {2, {3, 8 * 1024 * 1024}, TC_E_OOM},              /* 192 MiB of f64 */
    {2, {-1, 5}, TC_E_BAD_ARG},
    {2, {5, INT64_MIN}, TC_E_BAD_ARG},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int dt = 0; dt < TT_NDT; dt++) {
      tc_err e = tt_err();
      char what[64];
      snprintf(what, sizeof what, "zeros case %zu, %s", i, tc_dtype_name((tc_dtype)dt));
      tc_code want = cases[i].code;
      /* a case over the limit only in f64 may fit for narrower dtypes */
      if (i == 5 && tc_dtype_size((tc_dtype)dt) <= 2) continue;
      expect_fail(tc_zeros(cases[i].ndim, cases[i].shape, (tc_dtype)dt, &e), &e, want, base, what);
      e = tt_err();
      expect_fail(tc_tensor_new((tc_dtype)dt, cases[i].ndim, cases[i].shape, &e), &e, want, base, what);
    }
  }
}

Test(limits, the_limit_is_a_budget_over_live_tensors) {
  tc_set_max_memory(64 * MiB);
  int64_t n[1] = {3 * 1024 * 1024};   /* 24 MiB of i64 */
  tc_err e = tt_err();
  tc_tensor *a = tc_zeros(1, n, TC_DT_I64, &e);
  tc_tensor *b = tc_zeros(1, n, TC_DT_I64, &e);
  cr_assert(a && b, "%s", tt_msg(&e));
  uint64_t used = tc_mem_in_use();
  /* a third does not fit beside them, nor does their sum */
  expect_fail(tc_zeros(1, n, TC_DT_I64, &e), &e, TC_E_OOM, used, "third tensor");
  e = tt_err();
  expect_fail(tc_binary(TC_OP_ADD, a, b, &e), &e, TC_E_OOM, used, "a + b");
  /* once one is freed, both fit again */
  tc_tensor_free(b);
  e = tt_err();
  tc_tensor *c = tc_binary(TC_OP_ADD, a, a, &e);
  cr_expect_not_null(c, "%s", tt_msg(&e));
  tc_tensor_free(c);
  tc_tensor_free(a);
  cr_expect_eq(tc_mem_in_use(), 0);
  /* a limit lowered under what is in use refuses new results, frees still work */
  tc_set_max_memory(1);
  e = tt_err();
  expect_fail(tc_scalar_i64(1, false, &e), &e, TC_E_OOM, 0, "scalar under a 1-byte limit");
}

Test(limits, broadcasts_of_huge_views) {
  tc_set_max_memory(64 * MiB);
  tc_err e = tt_err();
  tc_tensor *one = tt_iscalar(TC_DT_I64, 1);
  int64_t big[2] = {100000, 100000}, huge[2] = {INT64_MAX, INT64_MAX}, over[2] = {4294967296, 4294967296};
  tc_tensor *v = tc_broadcast_to(one, 2, big, &e);
  cr_assert_not_null(v, "%s", tt_msg(&e));   /* a view: no data */
  uint64_t used = tc_mem_in_use();
  e = tt_err();
  expect_fail(tc_binary(TC_OP_ADD, v, one, &e), &e, TC_E_OOM, used, "view + 1");
  e = tt_err();
  expect_fail(tc_unary(TC_OP_SIN, v, &e), &e, TC_E_OOM, used, "sin(view)");
  e = tt_err();
  expect_fail(tc_cast(v, TC_DT_F32, &e), &e, TC_E_OOM, used, "f32(view)");
  e = tt_err();
  expect_fail(tc_clone(v, &e), &e, TC_E_OOM, used, "clone(view)");
  e = tt_err();
  expect_fail(tc_flatten(v, &e), &e, TC_E_OOM, used, "flatten(view)");
  e = tt_err();
  expect_fail(tc_broadcast_to(one, 2, huge, &e), &e, TC_E_OOM, used, "broadcast_to 2^126");
  e = tt_err();
  expect_fail(tc_broadcast_to(one, 2, over, &e), &e, TC_E_OOM, used, "broadcast_to 2^64");
  tc_tensor_free(v);
  /* a reduction of a view (160 MiB of elements) needs no copy of it */
  int64_t mid[2] = {20000, 1000};
  e = tt_err();
  v = tc_broadcast_to(one, 2, mid, &e);
  cr_assert_not_null(v, "%s", tt_msg(&e));
  tc_axes all = {.all = true};
  tc_tensor *s = tc_reduce(TC_OP_REDUCE_MAX, v, &all, false, &e);
  cr_expect_not_null(s, "%s", tt_msg(&e));
  TT_FREE(s, v, one);
  cr_expect_eq(tc_mem_in_use(), 0);
}

Test(limits, ranges_that_cannot_be_counted) {
  tc_set_max_memory(64 * MiB);
  tc_err e = tt_err();
  tc_tensor *lo = tt_iscalar(TC_DT_I64, -INT64_MAX), *hi = tt_iscalar(TC_DT_I64, INT64_MAX);
  lo->weak = hi->weak = true;
  uint64_t used = tc_mem_in_use();
  expect_fail(tc_arange(lo, hi, NULL, -1, &e), &e, TC_E_OOM, used, "arange(-MAX, MAX)");
  e = tt_err();
  expect_fail(tc_arange(hi, NULL, NULL, -1, &e), &e, TC_E_OOM, used, "arange(MAX)");
  e = tt_err();
  expect_fail(tc_linspace(0, 1, INT64_MAX, TC_DT_F64, &e), &e, TC_E_OOM, used, "linspace(0, 1, MAX)");
  e = tt_err();
  expect_fail(tc_eye(3037000500, 3037000500, 0, TC_DT_F64, &e), &e, TC_E_OOM, used, "eye(3037000500)");
  tc_tensor_free(lo);
  tc_tensor_free(hi);
}

/* ---- interrupts ---- */
/* Each call runs with the flag already raised, on operands of several
 * kernel chunks: the kernel must notice it and fail as a whole. */
typedef tc_tensor *(*op_fn)(tc_tensor *x, tc_tensor *y, tc_err *e);

static tc_tensor *f_add(tc_tensor *x, tc_tensor *y, tc_err *e) { return tc_binary(TC_OP_ADD, x, y, e); }
static tc_tensor *f_div(tc_tensor *x, tc_tensor *y, tc_err *e) { return tc_binary(TC_OP_DIV, x, y, e); }
static tc_tensor *f_sin(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return tc_unary(TC_OP_SIN, x, e); }
static tc_tensor *f_cast(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return tc_cast(x, TC_DT_F16, e); }
static tc_tensor *f_where(tc_tensor *x, tc_tensor *y, tc_err *e) {
  tc_tensor *c = tc_binary(TC_OP_LESS, y, x, e);
  tc_tensor *r = c ? tc_where(c, x, y, e) : NULL;
  tc_tensor_free(c);
  return r;
}
static tc_tensor *reduce_all(tc_op op, tc_tensor *x, tc_err *e) {
  tc_axes all = {.all = true};
  return tc_reduce(op, x, &all, false, e);
}
static tc_tensor *f_sum_all(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return reduce_all(TC_OP_REDUCE_SUM, x, e); }
static tc_tensor *f_argmax_all(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return reduce_all(TC_OP_ARGMAX, x, e); }
static tc_tensor *f_clone(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return tc_clone(x, e); }
static tc_tensor *f_flip(tc_tensor *x, tc_tensor *y, tc_err *e) {
  (void)y;
  tc_axes all = {.all = true};
  tc_tensor *v = tc_flip(x, &all, e);
  tc_tensor *r = v ? tc_clone(v, e) : NULL;
  tc_tensor_free(v);
  return r;
}
static tc_tensor *f_take(tc_tensor *x, tc_tensor *y, tc_err *e) {
  tc_tensor *idx = tc_cast(y, TC_DT_I64, e);
  tc_tensor *r = idx ? tc_take(x, idx, 0, TC_MODE_WRAP, NULL, e) : NULL;
  tc_tensor_free(idx);
  return r;
}
static tc_tensor *f_full(tc_tensor *x, tc_tensor *y, tc_err *e) { return tc_full(x->ndim, x->shape, y, -1, e); }
static tc_tensor *f_rand(tc_tensor *x, tc_tensor *y, tc_err *e) {
  (void)y;
  return tc_random(TC_DIST_NORMAL, x->ndim, x->shape, 7, 0, 0, e);
}
static tc_tensor *f_matmul(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return tc_matmul(x, x, e); }
static tc_tensor *f_zeros(tc_tensor *x, tc_tensor *y, tc_err *e) { (void)y; return tc_zeros(x->ndim, x->shape, TC_DT_F32, e); }

Test(limits, every_kernel_family_notices_an_interrupt) {
  tc_set_max_memory(512 * MiB);
  int64_t n = 4 << 20;   /* 64 chunks of CPU_CHUNK */
  tc_err e = tt_err();
  int64_t shape[1] = {n};
  tc_tensor *x = tc_zeros(1, shape, TC_DT_F64, &e);
  tc_tensor *y = tc_zeros(1, shape, TC_DT_I32, &e);
  tc_tensor *one = tt_iscalar(TC_DT_I32, 1);
  tc_tensor *y1 = y && one ? tc_binary(TC_OP_ADD, y, one, &e) : NULL;   /* nonzero divisors */
  cr_assert(x && y1, "%s", tt_msg(&e));
  /* square matrices of 1024: products of 2^30 multiply-adds */
  int64_t sq[2] = {1024, 1024}, st[2] = {1024, 1};
  tc_tensor *v = tc_view(x, 2, sq, st, 0, &e);
  tc_tensor *m64 = v ? tc_clone(v, &e) : NULL, *m32 = v ? tc_cast(v, TC_DT_I32, &e) : NULL;
  tc_tensor_free(v);
  cr_assert(m64 && m32, "%s", tt_msg(&e));
  struct { const char *name; op_fn fn; tc_tensor *a, *b; } ops[] = {
    {"add", f_add, x, x},         {"div (int, with its divisor scan)", f_div, y1, y1},
    {"sin", f_sin, x, NULL},      {"cast", f_cast, x, NULL},
    {"where", f_where, x, x},     {"reduce_sum over everything", f_sum_all, x, NULL},
    {"argmax over everything", f_argmax_all, x, NULL},
    {"clone", f_clone, x, NULL},  {"flip", f_flip, x, NULL},
    {"take", f_take, x, y1},      {"full", f_full, x, one},
    {"zeros", f_zeros, x, NULL},   {"randn", f_rand, x, NULL},
    {"matmul f64 (CBLAS when present)", f_matmul, m64, NULL}, {"matmul i32", f_matmul, m32, NULL},
  };
  uint64_t used = tc_mem_in_use();
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    e = tt_err();
    tc_interrupt_flag = 1;
    tc_tensor *r = ops[i].fn(ops[i].a, ops[i].b, &e);
    cr_expect_null(r, "%s: ran to the end despite the interrupt", ops[i].name);
    cr_expect_eq(e.code, TC_E_INTERRUPTED, "%s: %s (%s)", ops[i].name, tc_code_name(e.code), tt_msg(&e));
    cr_expect_eq(tc_mem_in_use(), used, "%s: an interrupted call left memory behind", ops[i].name);
    tc_tensor_free(r);
    /* and with the flag down, the same call works */
    tc_interrupt_clear();
    e = tt_err();
    r = ops[i].fn(ops[i].a, ops[i].b, &e);
    cr_expect_not_null(r, "%s: %s", ops[i].name, tt_msg(&e));
    tc_tensor_free(r);
  }
  TT_FREE(m64, m32, x, y, y1, one);
}
