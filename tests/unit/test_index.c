/* Indexing and scatter through the core API (src/index.c) on the CPU
 * engine: subscripts, take and its modes for every dtype, take_along_axis,
 * dynamic_slice, scatter's reductions, modes and duplicate order. */
#include "idx_util.h"
#include "tt.h"

static tc_err e;
static void setup(void) { tc_err_clear(&e); }
TestSuite(index, .init = setup);

static tc_tensor *x3(void) { return T_F64(10.0, 11.0, 12.0); }

static tc_tensor *m34(void) {
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  return t_f64(2, (int64_t[]){3, 4}, v);
}

static tc_index_item it_int(int64_t i) { return (tc_index_item){.kind = TC_IDX_INT, .i = i}; }
static tc_index_item it_slice(bool hl, int64_t lo, bool hh, int64_t hi, bool hs, int64_t st) {
  return (tc_index_item){.kind = TC_IDX_SLICE, .has_lo = hl, .lo = lo, .has_hi = hh, .hi = hi, .has_step = hs, .step = st};
}

/* ---- the seed examples of the issue ---- */
Test(index, seed_scalar_subscripts) {
  tc_tensor *x = x3();
  tc_index_item a = it_int(5), b = it_int(-4), c = it_int(-1);
  expect_err(tc_getitem(x, 1, &a, &e), &e, TC_E_INDEX);
  tc_getitem(x, 1, &a, &e);
  cr_assert(strstr(tt_msg(&e), "index 5 is out of bounds for axis 0 with size 3"), "%s", tt_msg(&e));
  cr_assert(e.has_index && e.index_ndim == 1 && e.index[0] == 5);
  tc_err_clear(&e);
  expect_err(tc_getitem(x, 1, &b, &e), &e, TC_E_INDEX);
  tc_tensor *r = tc_getitem(x, 1, &c, &e);
  expect_f64(r, 0, NULL, (double[]){12.0});
  tc_tensor_free(r);
  tc_tensor_free(x);
}

Test(index, seed_take_clip) {
  tc_tensor *x = x3(), *i = T_I64(1, 5, -1, -4);
  tc_tensor *r = tc_take(x, i, 0, TC_MODE_CLIP, NULL, &e);
  EXPECT_F64(r, SHAPE(4), 11, 12, 12, 10);
  TT_FREE(r, i, x);
}

Test(index, seed_dynamic_slice) {
  tc_tensor *x = x3();
  int64_t s1 = 5, s2 = -1, one = 1;
  tc_tensor *a = tc_dynamic_slice(x, 1, &s1, 1, &one, &e), *b = tc_dynamic_slice(x, 1, &s2, 1, &one, &e);
  EXPECT_F64(a, SHAPE(1), 12);
  EXPECT_F64(b, SHAPE(1), 12);
  TT_FREE(a, b, x);
}

Test(index, seed_scatter) {
  tc_tensor *x = x3(), *i11 = T_I64(1, 1), *i5 = T_I64(5), *u = tc_scalar_f64(99.0, true, &e);
  tc_tensor *r = tc_scatter(x, i11, u, 0, TC_SCATTER_ADD, TC_MODE_ERROR, &e);
  EXPECT_F64(r, SHAPE(3), 10, 209, 12);
  tc_tensor_free(r);
  expect_err(tc_scatter(x, i5, u, 0, TC_SCATTER_SET, TC_MODE_ERROR, &e), &e, TC_E_INDEX);
  r = tc_scatter(x, i5, u, 0, TC_SCATTER_SET, TC_MODE_DROP, &e);
  EXPECT_F64(r, SHAPE(3), 10, 11, 12);
  cr_assert_neq(r->storage, x->storage, "scatter returns a copy");
  TT_FREE(r, u, i5, i11, x);
}

Test(index, seed_take_along_axis) {
  tc_tensor *x = t_f64(2, (int64_t[]){3, 2}, (double[]){10, 20, 11, 21, 12, 22});
  tc_tensor *i = t_i64(2, (int64_t[]){1, 2}, (int64_t[]){5, -1});
  expect_err(tc_take_along_axis(x, i, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_INDEX);
  tc_take_along_axis(x, i, 0, TC_MODE_ERROR, NULL, &e);
  cr_assert(e.has_index && e.index_ndim == 2 && e.index[0] == 0 && e.index[1] == 0, "the position in idx");
  tc_err_clear(&e);
  tc_tensor *r = tc_take_along_axis(x, i, 0, TC_MODE_CLIP, NULL, &e);
  EXPECT_F64(r, SHAPE(1, 2), 12, 22);
  TT_FREE(r, i, x);
}

/* ---- subscripts ---- */
Test(index, basic_items_are_views) {
  tc_tensor *m = m34();
  tc_index_item items[2] = {it_slice(false, 0, false, 0, true, -1), it_slice(true, 1, true, 3, false, 0)};
  tc_tensor *v = tc_getitem(m, 2, items, &e);
  cr_assert_eq(v->storage, m->storage, "a slice shares storage");
  EXPECT_F64(v, SHAPE(3, 2), 9, 10, 5, 6, 1, 2);
  tc_tensor_free(v);
  tc_tensor_free(m);
}

Test(index, python_slice_clamping) {
  tc_tensor *x = T_F64(0, 1, 2, 3, 4);
  struct { tc_index_item it; int64_t n; double first; } cases[] = {
    {it_slice(true, -100, true, 100, false, 0), 5, 0},
    {it_slice(true, 3, true, 1, false, 0), 0, 0},
    {it_slice(true, 100, false, 0, true, -1), 5, 4},
    {it_slice(true, -2, false, 0, false, 0), 2, 3},
    {it_slice(false, 0, true, -100, true, -1), 5, 4},
    {it_slice(true, 1, false, 0, true, 3), 2, 1},
    {it_slice(true, 4, true, 0, true, -3), 2, 4},
    {it_slice(false, 0, false, 0, true, INT64_MIN), 1, 4},
    {it_slice(false, 0, false, 0, true, INT64_MAX), 1, 0},
    {it_slice(true, INT64_MIN, true, INT64_MAX, false, 0), 5, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tc_tensor *r = tc_getitem(x, 1, &cases[k].it, &e);
    cr_assert_not_null(r, "case %zu: %s", k, tt_msg(&e));
    cr_assert_eq(r->shape[0], cases[k].n, "case %zu: length %lld", k, (long long)r->shape[0]);
    if (cases[k].n) {
      double *v = vals_f64(r);
      cr_assert_eq(v[0], cases[k].first, "case %zu", k);
      free(v);
    }
    tc_tensor_free(r);
  }
  tc_index_item zero = it_slice(false, 0, false, 0, true, 0);
  expect_err(tc_getitem(x, 1, &zero, &e), &e, TC_E_BAD_ARG);
  tc_tensor_free(x);
}

Test(index, ellipsis_and_errors) {
  tc_tensor *m = m34();
  tc_index_item a[2] = {{.kind = TC_IDX_ELLIPSIS}, it_int(-1)};
  tc_tensor *r = tc_getitem(m, 2, a, &e);
  EXPECT_F64(r, SHAPE(3), 3, 7, 11);
  tc_tensor_free(r);
  tc_index_item two[2] = {{.kind = TC_IDX_ELLIPSIS}, {.kind = TC_IDX_ELLIPSIS}};
  expect_err(tc_getitem(m, 2, two, &e), &e, TC_E_BAD_ARG);
  tc_index_item three[3] = {it_int(0), it_int(0), it_int(0)};
  expect_err(tc_getitem(m, 3, three, &e), &e, TC_E_BAD_ARG);
  tc_index_item bad[2] = {it_int(0), it_int(4)};
  expect_err(tc_getitem(m, 2, bad, &e), &e, TC_E_INDEX);
  tc_getitem(m, 2, bad, &e);
  cr_assert(strstr(tt_msg(&e), "axis 1 with size 4"), "%s", tt_msg(&e));
  tc_tensor_free(m);
}

Test(index, integer_tensor_and_mask) {
  tc_tensor *m = m34(), *idx = t_as(T_I64(2, -3), TC_DT_I8);
  tc_index_item a[2] = {{.kind = TC_IDX_TENSOR, .t = idx}, it_int(1)};
  tc_tensor *r = tc_getitem(m, 2, a, &e);
  EXPECT_F64(r, SHAPE(2), 9, 1);
  tc_tensor_free(r);
  tc_index_item late[2] = {it_int(1), {.kind = TC_IDX_TENSOR, .t = idx}};   /* any axis, as NumPy */
  r = tc_getitem(m, 2, late, &e);
  EXPECT_F64(r, SHAPE(2), 6, 5);
  tc_tensor_free(r);
  /* two index tensors pair up; separated by a slice, their axes go first */
  tc_index_item pair[2] = {{.kind = TC_IDX_TENSOR, .t = idx}, {.kind = TC_IDX_TENSOR, .t = idx}};
  r = tc_getitem(m, 2, pair, &e);   /* m[2, 2], m[-3, -3] = m[0, 1] */
  EXPECT_F64(r, SHAPE(2), 10, 1);
  tc_tensor_free(r);
  tc_index_item na[3] = {{.kind = TC_IDX_NEWAXIS}, {.kind = TC_IDX_SLICE}, {.kind = TC_IDX_NEWAXIS}};
  r = tc_getitem(m, 3, na, &e);
  cr_assert(r && r->ndim == 4 && r->shape[0] == 1 && r->shape[1] == 3 && r->shape[2] == 1 && r->shape[3] == 4);
  tc_tensor_free(r);
  tc_tensor *mask = NULL, *five = tc_scalar_f64(5, true, &e);
  mask = tc_greater(m, five, &e);
  tc_index_item mk = {.kind = TC_IDX_TENSOR, .t = mask};
  r = tc_getitem(m, 1, &mk, &e);
  EXPECT_F64(r, SHAPE(6), 6, 7, 8, 9, 10, 11);
  tc_tensor_free(r);
  tc_tensor *x = T_F64(1, 2, 3);
  expect_err(tc_getitem(x, 1, &mk, &e), &e, TC_E_SHAPE);
  TT_FREE(x, five, mask, idx, m);
}

Test(index, setitem_copies_and_keeps_dtype) {
  tc_tensor *x = t_as(T_I64(1, 2, 3), TC_DT_I16), *v = tc_scalar_i64(-7, true, &e);
  tc_tensor *keep = tc_tensor_ref(x);   /* held twice: copied on write */
  tc_index_item it = it_int(-1);
  tc_tensor *r = tc_setitem(x, 1, &it, v, &e);
  cr_assert_eq(r->dtype, TC_DT_I16);
  EXPECT_I64(r, SHAPE(3), 1, 2, -7);
  EXPECT_I64(x, SHAPE(3), 1, 2, 3);
  tc_tensor_free(r);
  tc_tensor *big = tc_scalar_i64(40000, true, &e);
  expect_err(tc_setitem(x, 1, &it, big, &e), &e, TC_E_LITERAL);
  tc_index_item out = it_int(3);
  expect_err(tc_setitem(x, 1, &out, v, &e), &e, TC_E_INDEX);
  TT_FREE(big, v, x, keep);
}

/* Held by nothing else, x is written in place (the same tensor back);
 * held by a view, copied; failed or interrupted, unchanged. A SIGINT while
 * interrupts are held is raised when they are released. */
Test(index, setitem_in_place_alone_whole_or_not_at_all) {
  tc_tensor *x = T_I64(1, 2, 3), *v = tc_scalar_i64(9, true, &e), *big = tc_scalar_i64(1, true, &e);
  tc_index_item it = it_int(-1), all = {.kind = TC_IDX_SLICE};
  tc_tensor *r = tc_setitem(x, 1, &it, v, &e);
  cr_assert(r == x, "not written in place");
  tc_tensor_free(r);
  EXPECT_I64(x, SHAPE(3), 1, 2, 9);
  tc_tensor *view = tc_getitem(x, 1, &all, &e);
  cr_assert_not_null(view);
  tc_index_item first = it_int(0);
  r = tc_setitem(x, 1, &first, v, &e);
  cr_assert(r && r != x, "a tensor a view shares was written in place");
  EXPECT_I64(x, SHAPE(3), 1, 2, 9);
  EXPECT_I64(view, SHAPE(3), 1, 2, 9);
  EXPECT_I64(r, SHAPE(3), 9, 2, 9);
  TT_FREE(r, view);
  tc_index_item idx2 = {.kind = TC_IDX_TENSOR, .t = T_I64(0, 3)};
  expect_err(tc_setitem(x, 1, &idx2, big, &e), &e, TC_E_INDEX);
  EXPECT_I64(x, SHAPE(3), 1, 2, 9);
  tc_interrupt_signal();
  expect_err(tc_setitem(x, 1, &first, big, &e), &e, TC_E_INTERRUPTED);
  EXPECT_I64(x, SHAPE(3), 1, 2, 9);
  tc_interrupt_clear();
  cr_assert(tc_interrupt_hold());
  tc_interrupt_signal();
  cr_assert_eq(tc_interrupt_flag, 0, "an interrupt held off raised the flag");
  tc_interrupt_release();
  cr_assert_eq(tc_interrupt_flag, 1, "a held interrupt was lost");
  cr_assert(!tc_interrupt_hold(), "held with the flag up");
  tc_interrupt_clear();
  cr_assert(tc_interrupt_hold());
  tc_interrupt_release();
  cr_assert_eq(tc_interrupt_flag, 0, "release raised an interrupt that never came");
  TT_FREE(idx2.t, big, v, x);
}

Test(index, setitem_with_duplicates_keeps_last) {
  tc_tensor *x = T_F64(0, 0, 0), *idx = T_I64(2, 0, 2, -1), *v = T_F64(1, 2, 3, 4);
  tc_index_item it = {.kind = TC_IDX_TENSOR, .t = idx};
  tc_tensor *r = tc_setitem(x, 1, &it, v, &e);
  EXPECT_F64(r, SHAPE(3), 2, 0, 4);
  TT_FREE(r, v, idx, x);
}

/* ---- take: every mode on every dtype ---- */
Test(index, take_modes_every_dtype) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_tensor *x = t_as(T_I64(1, 0, 1), dt), *idx = T_I64(-1, 3, -4, 0, 7);
    tc_tensor *wrap = tc_take(x, idx, 0, TC_MODE_WRAP, NULL, &e);
    cr_assert_not_null(wrap, "%s: %s", tc_dtype_name(dt), tt_msg(&e));
    cr_assert_eq(wrap->dtype, dt);
    EXPECT_F64(wrap, SHAPE(5), 1, 1, 1, 1, 0);
    tc_tensor *clip = tc_take(x, idx, 0, TC_MODE_CLIP, NULL, &e);
    EXPECT_F64(clip, SHAPE(5), 1, 1, 1, 1, 1);
    expect_err(tc_take(x, idx, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_INDEX);
    tc_tensor *fv = NULL;
    if (tc_dtype_class(dt) == TC_CLASS_FLT) {
      tc_tensor *fill = tc_take(x, idx, 0, TC_MODE_FILL, NULL, &e);
      EXPECT_F64(fill, SHAPE(5), 1, NAN, NAN, 1, NAN);
      tc_tensor_free(fill);
    } else {
      expect_err(tc_take(x, idx, 0, TC_MODE_FILL, NULL, &e), &e, TC_E_BAD_ARG);
      bool uns = tc_dtype_is_unsigned(dt);   /* a weak -1 does not fit an unsigned dtype: fill with 2 */
      fv = dt == TC_DT_BOOL ? tc_scalar_bool(false, &e) : tc_scalar_i64(uns ? 2 : -1, true, &e);
      tc_tensor *fill = tc_take(x, idx, 0, TC_MODE_FILL, fv, &e);
      cr_assert_not_null(fill, "%s: %s", tc_dtype_name(dt), tt_msg(&e));
      double f = dt == TC_DT_BOOL ? 0 : uns ? 2 : -1;
      EXPECT_F64(fill, SHAPE(5), 1, f, f, 1, f);
      tc_tensor_free(fill);
    }
    TT_FREE(fv, clip, wrap, idx, x);
  }
}

Test(index, take_index_dtypes_and_extremes) {
  tc_tensor *x = T_F64(10, 11, 12);
  for (int d = 0; d < TC_DT_COUNT; d++) {
    if (tc_dtype_class((tc_dtype)d) != TC_CLASS_INT) continue;
    /* unsigned indices are never negative: -1 as a u64 is 2^64 - 1, out of bounds */
    bool uns = tc_dtype_is_unsigned((tc_dtype)d);
    tc_tensor *idx = t_as(uns ? T_I64(0, 2, 2) : T_I64(-3, 2, -1), (tc_dtype)d);
    tc_tensor *r = tc_take(x, idx, 0, TC_MODE_ERROR, NULL, &e);
    EXPECT_F64(r, SHAPE(3), 10, 12, 12);
    tc_tensor_free(r);
    tc_tensor_free(idx);
    if (uns) {
      tc_tensor *big = t_as(T_I64(1, -1), (tc_dtype)d);
      expect_err(tc_take(x, big, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_INDEX);
      tc_tensor_free(big);
    }
  }
  tc_tensor *ext = T_I64(INT64_MIN, INT64_MAX, INT64_MIN + 1);
  tc_tensor *w = tc_take(x, ext, 0, TC_MODE_WRAP, NULL, &e);
  /* floor modulo 3: MIN = -9223372036854775808 -> 1, MAX -> 1, MIN + 1 -> 2 */
  EXPECT_F64(w, SHAPE(3), 11, 11, 12);
  tc_tensor *c = tc_take(x, ext, 0, TC_MODE_CLIP, NULL, &e);
  EXPECT_F64(c, SHAPE(3), 10, 12, 10);
  expect_err(tc_take(x, ext, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_INDEX);
  tc_tensor *fl = T_F64(1.0);
  expect_err(tc_take(x, fl, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_BAD_ARG);
  TT_FREE(fl, c, w, ext, x);
}

Test(index, take_reads_strided_and_flipped_views) {
  tc_tensor *m = m34();
  tc_axes all = {.all = true};
  tc_tensor *f = tc_flip(m, &all, &e), *t = tc_transpose(f, -1, NULL, &e);
  tc_tensor *idx = T_I64(0, 3);
  /* t[i, j] = m[2 - j, 3 - i]; rows 0 and 3 of t */
  tc_tensor *r = tc_take(t, idx, 0, TC_MODE_ERROR, NULL, &e);
  EXPECT_F64(r, SHAPE(2, 3), 11, 7, 3, 8, 4, 0);
  tc_tensor *r1 = tc_take(t, idx, 1, TC_MODE_WRAP, NULL, &e);
  EXPECT_F64(r1, SHAPE(4, 2), 11, 11, 10, 10, 9, 9, 8, 8);
  TT_FREE(r1, r, idx, t, f, m);
}

Test(index, take_empty_axis) {
  int64_t z = 0;
  tc_tensor *x = tc_zeros(1, &z, TC_DT_F64, &e), *idx = T_I64(0), *none = t_i64(1, &z, NULL);
  expect_err(tc_take(x, idx, 0, TC_MODE_CLIP, NULL, &e), &e, TC_E_INDEX);
  expect_err(tc_take(x, idx, 0, TC_MODE_WRAP, NULL, &e), &e, TC_E_INDEX);
  expect_err(tc_take(x, idx, 0, TC_MODE_ERROR, NULL, &e), &e, TC_E_INDEX);
  tc_tensor *r = tc_take(x, idx, 0, TC_MODE_FILL, NULL, &e);
  EXPECT_F64(r, SHAPE(1), NAN);
  tc_tensor *r0 = tc_take(x, none, 0, TC_MODE_WRAP, NULL, &e);
  cr_assert_eq(tc_numel(r0), 0);
  TT_FREE(r0, r, none, idx, x);
}

/* ---- dynamic_slice ---- */
Test(index, dynamic_slice_clamps_like_stablehlo) {
  tc_tensor *m = m34();
  struct { int64_t s[2], z[2]; double first; } cases[] = {
    {{0, 0}, {2, 2}, 0}, {{-1, -1}, {2, 2}, 6}, {{100, 100}, {1, 1}, 11}, {{INT64_MIN, INT64_MAX}, {3, 4}, 0},
    {{-3, -4}, {1, 1}, 0}, {{-4, 0}, {1, 1}, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tc_tensor *r = tc_dynamic_slice(m, 2, cases[k].s, 2, cases[k].z, &e);
    cr_assert_not_null(r, "case %zu: %s", k, tt_msg(&e));
    double *v = vals_f64(r);
    cr_assert_eq(v[0], cases[k].first, "case %zu: %g", k, v[0]);
    free(v);
    tc_tensor_free(r);
  }
  int64_t s[2] = {0, 0}, big[2] = {4, 1}, neg[2] = {-1, 1};
  expect_err(tc_dynamic_slice(m, 2, s, 2, big, &e), &e, TC_E_BAD_ARG);
  expect_err(tc_dynamic_slice(m, 2, s, 2, neg, &e), &e, TC_E_BAD_ARG);
  expect_err(tc_dynamic_slice(m, 1, s, 2, s, &e), &e, TC_E_BAD_ARG);
  tc_tensor_free(m);
}

/* ---- scatter ---- */
Test(index, scatter_duplicates_follow_index_order) {
  tc_tensor *x = T_F64(1, 1, 1), *idx = T_I64(0, 2, 0, 0, -1), *u = T_F64(2, 3, 5, 7, 11);
  struct { tc_scatter_red r; double want[3]; } cases[] = {
    {TC_SCATTER_SET, {7, 1, 11}},
    {TC_SCATTER_ADD, {15, 1, 15}},
    {TC_SCATTER_MUL, {70, 1, 33}},
    {TC_SCATTER_MAX, {7, 1, 11}},
    {TC_SCATTER_MIN, {1, 1, 1}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tc_tensor *r = tc_scatter(x, idx, u, 0, cases[k].r, TC_MODE_ERROR, &e);
    expect_f64(r, SHAPE(3), cases[k].want);
    tc_tensor_free(r);
  }
  TT_FREE(u, idx, x);
}

Test(index, scatter_float_add_order_is_index_order) {
  /* (1e16 + 1) + 1 = 1e16 in f64 each time, but 1e16 + (1 + 1) would not be */
  tc_tensor *x = T_F64(1e16), *idx = T_I64(0, 0), *u = T_F64(1, 1);
  tc_tensor *r = tc_scatter(x, idx, u, 0, TC_SCATTER_ADD, TC_MODE_ERROR, &e);
  EXPECT_F64(r, SHAPE(1), 1e16);
  TT_FREE(r, u, idx, x);
}

Test(index, scatter_every_dtype_and_reduction) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_tensor *x = t_as(T_I64(1, 0, 1), dt), *idx = T_I64(1, 1, 5), *u = t_as(T_I64(1, 1, 1), dt);
    for (int red = 0; red <= TC_SCATTER_MIN; red++) {
      tc_tensor *r = tc_scatter(x, idx, u, 0, (tc_scatter_red)red, TC_MODE_DROP, &e);
      if (dt == TC_DT_BOOL && (red == TC_SCATTER_ADD || red == TC_SCATTER_MUL)) {
        expect_err(r, &e, TC_E_DTYPE);
        continue;
      }
      cr_assert_not_null(r, "%s %s: %s", tc_dtype_name(dt), tc_scatter_red_name((tc_scatter_red)red), tt_msg(&e));
      cr_assert_eq(r->dtype, dt);
      double want = red == TC_SCATTER_ADD ? 2 : red == TC_SCATTER_MUL ? 0 : red == TC_SCATTER_MIN ? 0 : 1;
      EXPECT_F64(r, SHAPE(3), 1, want, 1);
      tc_tensor_free(r);
    }
    TT_FREE(u, idx, x);
  }
}

Test(index, scatter_integers_wrap_and_nan_propagates) {
  tc_tensor *x = t_as(T_I64(127), TC_DT_I8), *idx = T_I64(0, 0), *u = t_as(T_I64(1, 1), TC_DT_I8);
  tc_tensor *r = tc_scatter(x, idx, u, 0, TC_SCATTER_ADD, TC_MODE_ERROR, &e);
  EXPECT_I64(r, SHAPE(1), -127);
  tc_tensor_free(r);
  tc_tensor *f = T_F64(1), *nu = T_F64(NAN, 5);
  r = tc_scatter(f, idx, nu, 0, TC_SCATTER_MAX, TC_MODE_ERROR, &e);
  EXPECT_F64(r, SHAPE(1), NAN);
  tc_tensor_free(r);
  r = tc_scatter(f, idx, nu, 0, TC_SCATTER_MIN, TC_MODE_ERROR, &e);
  EXPECT_F64(r, SHAPE(1), NAN);
  TT_FREE(r, nu, f, u, idx, x);
}

Test(index, scatter_axes_modes_and_broadcast) {
  tc_tensor *m = m34(), *idx = T_I64(-1, 9), *u = T_F64(100, 200, 300);
  /* axis 1: selection [3, 2]; updates [3] do not broadcast, [3, 1] do */
  expect_err(tc_scatter(m, idx, u, 1, TC_SCATTER_SET, TC_MODE_DROP, &e), &e, TC_E_SHAPE);
  int64_t s31[2] = {3, 1};
  tc_tensor *u31 = tc_reshape(u, 2, s31, &e);
  tc_tensor *r = tc_scatter(m, idx, u31, 1, TC_SCATTER_SET, TC_MODE_DROP, &e);
  EXPECT_F64(r, SHAPE(3, 4), 0, 1, 2, 100, 4, 5, 6, 200, 8, 9, 10, 300);
  tc_tensor_free(r);
  r = tc_scatter(m, idx, u31, 1, TC_SCATTER_ADD, TC_MODE_CLIP, &e);
  EXPECT_F64(r, SHAPE(3, 4), 0, 1, 2, 203, 4, 5, 6, 407, 8, 9, 10, 611);
  tc_tensor_free(r);
  expect_err(tc_scatter(m, idx, u31, 1, TC_SCATTER_SET, TC_MODE_ERROR, &e), &e, TC_E_INDEX);
  tc_scatter(m, idx, u31, 1, TC_SCATTER_SET, TC_MODE_ERROR, &e);
  cr_assert(e.has_index && e.index_ndim == 1 && e.index[0] == 1, "position 1 of idx");
  tc_err_clear(&e);
  expect_err(tc_scatter(m, idx, u31, 1, TC_SCATTER_SET, TC_MODE_WRAP, &e), &e, TC_E_BAD_ARG);
  expect_err(tc_scatter(m, idx, u31, 2, TC_SCATTER_SET, TC_MODE_DROP, &e), &e, TC_E_AXIS);
  TT_FREE(u31, u, idx, m);
}

Test(index, mode_names) {
  cr_assert_eq(tc_index_mode_from_name("fill"), TC_MODE_FILL);
  cr_assert_eq(tc_index_mode_from_name("nope"), -1);
  cr_assert_str_eq(tc_index_mode_name(TC_MODE_DROP), "drop");
  cr_assert_eq(tc_scatter_red_from_name("min"), TC_SCATTER_MIN);
  cr_assert_eq(tc_scatter_red_from_name("avg"), -1);
  cr_assert_str_eq(tc_scatter_red_name(TC_SCATTER_MUL), "mul");
}

/* argwhere and mask indexing: the nonzero positions come out of blocks of
 * 256 written without branches (backend/cpu/index.c); every position, in
 * row-major order, for masks dense, sparse, empty and full, of lengths
 * around the block, contiguous and transposed. */
Test(index, argwhere_positions_across_blocks_and_layouts) {
  const int64_t lens[] = {1, 255, 256, 257, 1000, 70001};
  uint64_t st = 5;
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int dens = 0; dens < 4; dens++) {
      int64_t n = lens[li], rows = n % 7 == 0 ? 7 : 1, cols = n / rows, shape[2] = {rows, cols};
      int64_t *v = malloc(sizeof(int64_t) * (size_t)n), *want = malloc(sizeof(int64_t) * 2 * (size_t)n);
      for (int64_t k = 0; k < n; k++) {
        uint64_t r = tt_rand(&st);
        v[k] = dens == 0 ? 0 : dens == 1 ? r % 50 == 0 : dens == 2 ? r % 2 : 1;
      }
      tc_tensor *x = t_i64(2, shape, v);
      for (int tr = 0; tr < 2; tr++) {
        tc_tensor *xt = tr ? tc_transpose(x, -1, NULL, &e) : x;
        cr_assert_not_null(xt, "%s", tt_msg(&e));
        int64_t R = tr ? cols : rows, C = tr ? rows : cols, cnt = 0;
        for (int64_t i = 0; i < R; i++)   /* the reference, row-major over xt */
          for (int64_t j = 0; j < C; j++)
            if (v[tr ? j * cols + i : i * cols + j]) want[2 * cnt] = i, want[2 * cnt + 1] = j, cnt++;
        tc_tensor *w = tc_argwhere(xt, &e);
        cr_assert_not_null(w, "%s", tt_msg(&e));
        cr_assert(w->ndim == 2 && w->shape[0] == cnt && w->shape[1] == 2, "n %lld density %d: %lld positions, expected %lld",
                  (long long)n, dens, (long long)w->shape[0], (long long)cnt);
        int64_t *got = malloc(sizeof(int64_t) * 2 * (size_t)(cnt + 1));
        tt_read(w, got, NULL);
        for (int64_t k = 0; k < 2 * cnt; k++)
          TT_CHECK(got[k] == want[k], "n %lld density %d transposed %d: entry %lld is %lld, expected %lld", (long long)n,
                   dens, tr, (long long)k, (long long)got[k], (long long)want[k]);
        free(got);
        tc_tensor_free(w);
        if (tr) tc_tensor_free(xt);
      }
      tc_tensor_free(x);
      free(v);
      free(want);
    }
  TT_DONE();
}

/* Integer scatter-add of many updates into a short axis goes across
 * threads, each into its own copy of the axis (backend/cpu/index.c):
 * every integer dtype, modes error, clip and drop (negative and
 * out-of-range indices), updates broadcast from a scalar, axes of 1 to
 * 30000: at 1, 2 and 3 threads, the wrapped sum computed here. */
Test(index, scatter_add_across_threads_is_the_wrapped_sum) {
  const int64_t n = 150001, lens[] = {1, 13, 1000, 30000};
  const tc_index_mode modes[] = {TC_MODE_ERROR, TC_MODE_CLIP, TC_MODE_DROP};
  int64_t *iv = malloc(sizeof(int64_t) * (size_t)n), *uv = malloc(sizeof(int64_t) * (size_t)n);
  int64_t *want = malloc(sizeof(int64_t) * 30000), *got = malloc(sizeof(int64_t) * 30000);
  uint64_t st = 77;
  int checked = 0;
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int mi = 0; mi < 3; mi++)
      for (int dt = 0; dt < TT_NDT; dt++) {
        if (!tt_is_int((tc_dtype)dt)) continue;
        int64_t len = lens[li], lo = mi == 0 ? -len : -len - 3, span = mi == 0 ? 2 * len : 2 * len + 6;
        for (int64_t i = 0; i < n; i++) {
          uint64_t r = tt_rand(&st);
          iv[i] = lo + (int64_t)(r % (uint64_t)span);
          uv[i] = (int64_t)(r >> 20) % 2000001 - 1000000;
        }
        for (int bc = 0; bc < 2; bc++) {
          for (int64_t k = 0; k < len; k++) want[k] = k * 37 % 101 - 50;   /* x */
          tc_tensor *x = tt_tensor((tc_dtype)dt, 1, &len, want, NULL), *ix = tt_tensor(TC_DT_I64, 1, &n, iv, NULL);
          tc_tensor *u = bc ? tc_scalar_i64(-3, false, &e) : tt_tensor((tc_dtype)dt, 1, &n, uv, NULL);
          cr_assert(x && ix && u);
          tc_tensor *r[3];
          for (int t = 1; t <= 3; t++) {
            tc_set_threads(t);
            r[t - 1] = tc_scatter(x, ix, u, 0, TC_SCATTER_ADD, modes[mi], &e);
            tc_set_threads(0);
            cr_assert_not_null(r[t - 1], "%s", tt_msg(&e));
          }
          int bits = tt_bits((tc_dtype)dt);
          uint64_t m = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
          tt_read(x, want, NULL);   /* x as stored in its dtype */
          for (int64_t i = 0; i < n; i++) {
            int64_t k = iv[i] < 0 ? iv[i] + len : iv[i];
            if (mi == 2 && (k < 0 || k >= len)) continue;
            k = k < 0 ? 0 : k >= len ? len - 1 : k;
            int64_t v = bc ? -3 : uv[i];
            want[k] = (int64_t)(((uint64_t)want[k] + (uint64_t)v) & m);
          }
          for (int t = 0; t < 3; t++) {
            tt_read(r[t], got, NULL);
            for (int64_t k = 0; k < len; k++) {
              uint64_t g = (uint64_t)got[k] & m, w = (uint64_t)want[k] & m;
              TT_CHECK(g == w, "%s scatter-add len %lld mode %d %s at %d threads: [%lld] = %llu, expected %llu",
                       tt_name((tc_dtype)dt), (long long)len, mi, bc ? "broadcast" : "updates", t + 1, (long long)k,
                       (unsigned long long)g, (unsigned long long)w);
            }
          }
          checked++;
          TT_FREE(x, ix, u, r[0], r[1], r[2]);
        }
      }
  cr_log_info("%d scatter-adds checked", checked);
  free(iv);
  free(uv);
  free(want);
  free(got);
  TT_DONE();
}
