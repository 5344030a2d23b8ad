/* Shape ops through the core API (src/shape.c): which results are views
 * (shared storage, no copy) and which are copies, and their values on
 * every dtype, including views with negative strides. */
#include "idx_util.h"
#include "tt.h"

static tc_err e;
static void setup(void) { tc_err_clear(&e); }
TestSuite(shape, .init = setup);

static tc_tensor *iota(int n, int ndim, const int64_t *shape) {
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) v[i] = i;
  tc_tensor *t = t_f64(ndim, shape, v);
  free(v);
  return t;
}

Test(shape, reshape_views_contiguous_data_and_copies_the_rest) {
  tc_tensor *m = iota(6, 2, (int64_t[]){2, 3});
  int64_t s[2] = {3, -1};
  tc_tensor *r = tc_reshape(m, 2, s, &e);
  cr_assert_eq(r->storage, m->storage, "a reshape of contiguous data is a view");
  EXPECT_F64(r, SHAPE(3, 2), 0, 1, 2, 3, 4, 5);
  tc_tensor *t = tc_transpose(m, -1, NULL, &e);
  cr_assert_eq(t->storage, m->storage, "transpose is a view");
  tc_tensor *rt = tc_reshape(t, 2, s, &e);
  cr_assert_neq(rt->storage, m->storage, "a reshape of a transposed view copies");
  EXPECT_F64(rt, SHAPE(3, 2), 0, 3, 1, 4, 2, 5);
  int64_t two[2] = {-1, -1}, bad[1] = {4}, neg[2] = {-2, -3};
  expect_err(tc_reshape(m, 2, two, &e), &e, TC_E_BAD_ARG);
  expect_err(tc_reshape(m, 1, bad, &e), &e, TC_E_SHAPE);
  expect_err(tc_reshape(m, 2, neg, &e), &e, TC_E_BAD_ARG);
  int64_t huge[3] = {INT64_MAX, INT64_MAX, 0};
  expect_err(tc_reshape(m, 2, huge, &e), &e, TC_E_SHAPE);
  TT_FREE(rt, t, r, m);
}

Test(shape, flip_is_a_view_with_negative_strides) {
  tc_tensor *m = iota(6, 2, (int64_t[]){2, 3});
  tc_axes ax = {.n = 1, .axis = {-1}};
  tc_tensor *f = tc_flip(m, &ax, &e);
  cr_assert_eq(f->storage, m->storage);
  cr_assert_lt(f->strides[1], 0);
  EXPECT_F64(f, SHAPE(2, 3), 2, 1, 0, 5, 4, 3);
  /* elementwise ops, reductions and copies read the negative strides */
  tc_tensor *s = tc_add(f, m, &e);
  EXPECT_F64(s, SHAPE(2, 3), 2, 2, 2, 8, 8, 8);
  tc_axes a1 = {.n = 1, .axis = {1}};
  tc_tensor *mx = tc_argmax(f, &a1, false, &e);
  EXPECT_I64(mx, SHAPE(2), 0, 0);
  tc_tensor *c = tc_clone(f, &e);
  EXPECT_F64(c, SHAPE(2, 3), 2, 1, 0, 5, 4, 3);
  TT_FREE(c, mx, s, f, m);
}

Test(shape, expand_squeeze_broadcast) {
  tc_tensor *v = iota(3, 1, (int64_t[]){3});
  tc_tensor *a = tc_expand_dims(v, -1, &e), *b = tc_expand_dims(a, 0, &e);
  cr_assert_eq(b->ndim, 3);
  cr_assert(b->shape[0] == 1 && b->shape[1] == 3 && b->shape[2] == 1);
  tc_axes all = {.all = true}, one = {.n = 1, .axis = {1}};
  tc_tensor *s = tc_squeeze(b, &all, &e);
  EXPECT_F64(s, SHAPE(3), 0, 1, 2);
  expect_err(tc_squeeze(b, &one, &e), &e, TC_E_BAD_ARG);
  expect_err(tc_expand_dims(v, 2, &e), &e, TC_E_AXIS);
  int64_t to[2] = {2, 3};
  tc_tensor *bc = tc_broadcast_to(v, 2, to, &e);
  cr_assert_eq(bc->storage, v->storage);
  cr_assert_eq(bc->strides[0], 0);
  EXPECT_F64(bc, SHAPE(2, 3), 0, 1, 2, 0, 1, 2);
  int64_t bad[1] = {4};
  expect_err(tc_broadcast_to(v, 1, bad, &e), &e, TC_E_SHAPE);
  TT_FREE(bc, s, b, a, v);
}

Test(shape, transpose_with_perm) {
  tc_tensor *x = iota(24, 3, (int64_t[]){2, 3, 4});
  int64_t p[3] = {2, 0, -2};
  tc_tensor *t = tc_transpose(x, 3, p, &e);
  cr_assert(t->shape[0] == 4 && t->shape[1] == 2 && t->shape[2] == 3);
  tc_index_item it[3] = {{.kind = TC_IDX_INT, .i = 3}, {.kind = TC_IDX_INT, .i = 1}, {.kind = TC_IDX_INT, .i = 2}};
  tc_tensor *el = tc_getitem(t, 3, it, &e);
  expect_f64(el, 0, NULL, (double[]){1 * 12 + 2 * 4 + 3});
  int64_t rep[3] = {0, 0, 1}, shortp[2] = {0, 1};
  expect_err(tc_transpose(x, 3, rep, &e), &e, TC_E_AXIS);
  expect_err(tc_transpose(x, 2, shortp, &e), &e, TC_E_BAD_ARG);
  TT_FREE(el, t, x);
}

Test(shape, concat_and_stack_promote_and_copy) {
  tc_tensor *a = t_as(iota(4, 2, (int64_t[]){2, 2}), TC_DT_I8), *b = t_as(T_F64(7.5, 8.5), TC_DT_F32);
  int64_t s12[2] = {1, 2};
  tc_tensor *b2 = tc_reshape(b, 2, s12, &e);
  tc_tensor *xs[2] = {a, b2};
  tc_tensor *c = tc_concat(2, xs, 0, &e);
  cr_assert_eq(c->dtype, TC_DT_F32);
  EXPECT_F64(c, SHAPE(3, 2), 0, 1, 2, 3, 7.5, 8.5);
  expect_err(tc_concat(2, xs, 1, &e), &e, TC_E_SHAPE);
  expect_err(tc_concat(0, xs, 0, &e), &e, TC_E_BAD_ARG);
  tc_tensor *ys[2] = {b, b};
  tc_tensor *s0 = tc_stack(2, ys, 0, &e), *s1 = tc_stack(2, ys, -1, &e);
  EXPECT_F64(s0, SHAPE(2, 2), 7.5, 8.5, 7.5, 8.5);
  EXPECT_F64(s1, SHAPE(2, 2), 7.5, 7.5, 8.5, 8.5);
  expect_err(tc_stack(2, xs, 0, &e), &e, TC_E_SHAPE);
  TT_FREE(s1, s0, c, b2, b, a);
}

Test(shape, tri_every_dtype) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_tensor *m = t_as(t_f64(2, (int64_t[]){2, 3}, (double[]){1, 1, 1, 1, 1, 1}), (tc_dtype)d);
    tc_tensor *l = tc_tri(TC_OP_TRIL, m, 0, &e), *u = tc_tri(TC_OP_TRIU, m, 1, &e);
    cr_assert_not_null(l, "%s: %s", tc_dtype_name((tc_dtype)d), tt_msg(&e));
    cr_assert_eq(l->dtype, (tc_dtype)d);
    EXPECT_F64(l, SHAPE(2, 3), 1, 0, 0, 1, 1, 0);
    EXPECT_F64(u, SHAPE(2, 3), 0, 1, 1, 0, 0, 1);
    TT_FREE(u, l, m);
  }
  tc_tensor *v = T_F64(1, 2);
  expect_err(tc_tri(TC_OP_TRIL, v, 0, &e), &e, TC_E_BAD_ARG);
  tc_tensor_free(v);
}

Test(shape, tri_of_a_batched_strided_view) {
  tc_tensor *x = iota(18, 3, (int64_t[]){2, 3, 3});
  tc_tensor *t = tc_transpose(x, 3, (int64_t[]){0, 2, 1}, &e);
  tc_tensor *l = tc_tri(TC_OP_TRIL, t, -1, &e);
  EXPECT_F64(l, SHAPE(2, 3, 3), 0, 0, 0, 1, 0, 0, 2, 5, 0, 0, 0, 0, 10, 0, 0, 11, 14, 0);
  TT_FREE(l, t, x);
}

Test(shape, diag_both_ways) {
  tc_tensor *m = iota(6, 2, (int64_t[]){2, 3});
  tc_tensor *d0 = tc_diag(m, 0, &e), *d1 = tc_diag(m, 1, &e), *dm = tc_diag(m, -1, &e), *dx = tc_diag(m, 5, &e);
  cr_assert_eq(d0->storage, m->storage, "the diagonal of a matrix is a view");
  EXPECT_F64(d0, SHAPE(2), 0, 4);
  EXPECT_F64(d1, SHAPE(2), 1, 5);
  EXPECT_F64(dm, SHAPE(1), 3);
  cr_assert_eq(tc_numel(dx), 0);
  tc_tensor *v = t_as(T_I64(4, 5), TC_DT_I32);
  tc_tensor *mv = tc_diag(v, -1, &e);
  cr_assert_eq(mv->dtype, TC_DT_I32);
  EXPECT_I64(mv, SHAPE(3, 3), 0, 0, 0, 4, 0, 0, 0, 5, 0);
  expect_err(tc_diag(v, INT64_MIN, &e), &e, TC_E_OOM);
  TT_FREE(mv, v, dx, dm, d1, d0, m);
}
