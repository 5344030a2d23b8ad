/* Small helpers for the indexing, shape, constructor and file suites:
 * tensors from literals, values back as f64/i64, and error checks. */
#ifndef TC_IDX_UTIL_H
#define TC_IDX_UTIL_H
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tcalc.h"
#include "tt.h"

static inline tc_tensor *t_host(tc_dtype dt, int ndim, const int64_t *shape, const void *v) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *t = tc_tensor_from_host(dt, ndim, shape, v, &e);
  cr_assert_not_null(t, "%s", tt_msg(&e));
  return t;
}
static inline tc_tensor *t_f64(int ndim, const int64_t *shape, const double *v) { return t_host(TC_DT_F64, ndim, shape, v); }
static inline tc_tensor *t_i64(int ndim, const int64_t *shape, const int64_t *v) { return t_host(TC_DT_I64, ndim, shape, v); }

#define T_F64(...) t_f64(1, (int64_t[]){sizeof((double[]){__VA_ARGS__}) / sizeof(double)}, (double[]){__VA_ARGS__})
#define T_I64(...) t_i64(1, (int64_t[]){sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)}, (int64_t[]){__VA_ARGS__})

/* t cast to dt (t is consumed). */
static inline tc_tensor *t_as(tc_tensor *t, tc_dtype dt) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *r = tc_cast(t, dt, &e);
  cr_assert_not_null(r, "%s", tt_msg(&e));
  tc_tensor_free(t);
  return r;
}

/* The elements of t cast to dt, copied to a malloc'd host buffer of
 * elements of elsize bytes (free it). */
static inline void *vals_as(tc_tensor *t, tc_dtype dt, size_t elsize) {
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *c = tc_cast(t, dt, &e);
  cr_assert_not_null(c, "%s", tt_msg(&e));
  void *v = malloc(elsize * (size_t)(tc_numel(c) + 1));
  cr_assert_eq(tc_tensor_to_host(c, v, &e), 0, "%s", tt_msg(&e));
  tc_tensor_free(c);
  return v;
}

/* The elements of t as doubles / int64 (malloc'd; free them). */
static inline double *vals_f64(tc_tensor *t) { return vals_as(t, TC_DT_F64, sizeof(double)); }
static inline int64_t *vals_i64(tc_tensor *t) { return vals_as(t, TC_DT_I64, sizeof(int64_t)); }

/* Asserts t is a tensor of this shape. */
static inline void expect_shape(const tc_tensor *t, int ndim, const int64_t *shape) {
  cr_assert_not_null(t);
  cr_assert_eq(t->ndim, ndim, "ndim %d, want %d", t->ndim, ndim);
  for (int i = 0; i < ndim; i++) cr_assert_eq(t->shape[i], shape[i], "dim %d is %lld, want %lld", i, (long long)t->shape[i], (long long)shape[i]);
}

/* Asserts t has this shape and these values (compared as doubles; NaN equals NaN). */
static inline void expect_f64(tc_tensor *t, int ndim, const int64_t *shape, const double *want) {
  expect_shape(t, ndim, shape);
  double *v = vals_f64(t);
  for (int64_t i = 0; i < tc_numel(t); i++)
    cr_assert(v[i] == want[i] || (isnan(v[i]) && isnan(want[i])), "element %lld is %g, want %g", (long long)i, v[i], want[i]);
  free(v);
}

static inline void expect_i64(tc_tensor *t, int ndim, const int64_t *shape, const int64_t *want) {
  expect_shape(t, ndim, shape);
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
  cr_assert_eq(e->code, code, "code %s, want %s: %s", tc_code_name(e->code), tc_code_name(code), tt_msg(e));
  tc_err_clear(e);
}
#endif
