/* Small helpers for the indexing, shape, constructor and file suites:
 * tensors from literals, values back as f64/i64, and error checks. */
#ifndef TC_IDX_UTIL_H
#define TC_IDX_UTIL_H
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tcalc.h"

static inline tc_tensor *t_f64(int ndim, const int64_t *shape, const double *v) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *t = tc_tensor_from_host(TC_DT_F64, ndim, shape, v, &e);
  cr_assert_not_null(t, "%s", e.msg);
  return t;
}

static inline tc_tensor *t_i64(int ndim, const int64_t *shape, const int64_t *v) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *t = tc_tensor_from_host(TC_DT_I64, ndim, shape, v, &e);
  cr_assert_not_null(t, "%s", e.msg);
  return t;
}

#define T_F64(...) t_f64(1, (int64_t[]){sizeof((double[]){__VA_ARGS__}) / sizeof(double)}, (double[]){__VA_ARGS__})
#define T_I64(...) t_i64(1, (int64_t[]){sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)}, (int64_t[]){__VA_ARGS__})

/* t cast to dt (t is consumed). */
static inline tc_tensor *t_as(tc_tensor *t, tc_dtype dt) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *r = tc_cast(t, dt, &e);
  cr_assert_not_null(r, "%s", e.msg);
  tc_tensor_free(t);
  return r;
}

/* The elements of t as doubles / int64 (malloc'd; free them). */
static inline double *vals_f64(tc_tensor *t) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *c = tc_cast(t, TC_DT_F64, &e);
  cr_assert_not_null(c, "%s", e.msg);
  double *v = malloc(sizeof(double) * (size_t)(tc_numel(c) + 1));
  cr_assert_eq(tc_tensor_to_host(c, v, &e), 0, "%s", e.msg);
  tc_tensor_free(c);
  return v;
}

static inline int64_t *vals_i64(tc_tensor *t) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *c = tc_cast(t, TC_DT_I64, &e);
  cr_assert_not_null(c, "%s", e.msg);
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(tc_numel(c) + 1));
  cr_assert_eq(tc_tensor_to_host(c, v, &e), 0, "%s", e.msg);
  tc_tensor_free(c);
  return v;
}

/* Asserts t has this shape and these values (compared as doubles; NaN equals NaN). */
static inline void expect_f64(tc_tensor *t, int ndim, const int64_t *shape, const double *want) {
  cr_assert_not_null(t);
  cr_assert_eq(t->ndim, ndim, "ndim %d, want %d", t->ndim, ndim);
  for (int i = 0; i < ndim; i++) cr_assert_eq(t->shape[i], shape[i], "dim %d is %lld, want %lld", i, (long long)t->shape[i], (long long)shape[i]);
  double *v = vals_f64(t);
  for (int64_t i = 0; i < tc_numel(t); i++)
    cr_assert(v[i] == want[i] || (isnan(v[i]) && isnan(want[i])), "element %lld is %g, want %g", (long long)i, v[i], want[i]);
  free(v);
}

static inline void expect_i64(tc_tensor *t, int ndim, const int64_t *shape, const int64_t *want) {
  cr_assert_not_null(t);
  cr_assert_eq(t->ndim, ndim, "ndim %d, want %d", t->ndim, ndim);
  for (int i = 0; i < ndim; i++) cr_assert_eq(t->shape[i], shape[i], "dim %d is %lld, want %lld", i, (long long)t->shape[i], (long long)shape[i]);
  int64_t *v = vals_i64(t);
  for (int64_t i = 0; i < tc_numel(t); i++)
    cr_assert_eq(v[i], want[i], "element %lld is %lld, want %lld", (long long)i, (long long)v[i], (long long)want[i]);
  free(v);
}

#define SHAPE(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define EXPECT_F64(t, shp, ...) expect_f64(t, shp, (double[]){__VA_ARGS__})
#define EXPECT_I64(t, shp, ...) expect_i64(t, shp, (int64_t[]){__VA_ARGS__})

/* Asserts that r is NULL and e holds code; then clears e. */
static inline void expect_err(tc_tensor *r, tc_err *e, tc_code code) {
  cr_assert_null(r, "expected %s, got a result", tc_code_name(code));
  cr_assert_eq(e->code, code, "code %s, want %s: %s", tc_code_name(e->code), tc_code_name(code), e->msg);
  tc_err_clear(e);
}
#endif
