/* Structured errors: the domain pre-checks (zero divisors, negative
 * exponents and shift counts) with the index of the first offending result
 * position and no partial result; shape errors naming both shapes; the
 * memory limit; element counts that overflow; engines that are missing;
 * interrupts. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "tt.h"

static const tc_dtype ints[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64};

static tc_code check_code(tc_check chk) {
  return chk == TC_CHECK_ZERO ? TC_E_DIV_ZERO : chk == TC_CHECK_NEGEXP ? TC_E_NEG_EXP : TC_E_BAD_ARG;
}

/* Runs op(a, b), expecting the pre-check error of the op at index want. */
static void expect_index(tc_op op, tc_tensor *a, tc_tensor *b, int nd, const int64_t *want, const char *what) {
  tc_err err = tt_err();
  uint64_t before = tc_mem_in_use();
  tc_tensor *o = tc_binary(op, a, b, &err);
  TT_CHECK(o == NULL, "%s %s: a result was returned", tc_op_name(op), what);
  tc_tensor_free(o);
  TT_CHECK(tc_mem_in_use() == before, "%s %s: memory left allocated", tc_op_name(op), what);
  tc_code code = check_code(tc_op_check(op));
  TT_CHECK(err.code == code, "%s %s: code %s, expected %s (%s)", tc_op_name(op), what, tc_code_name(err.code),
           tc_code_name(code), tt_msg(&err));
  TT_CHECK(err.op == (int)op, "%s %s: err.op %d", tc_op_name(op), what, err.op);
  TT_CHECK(err.engine == TC_ENGINE_CPU, "%s %s: err.engine %d", tc_op_name(op), what, err.engine);
  TT_CHECK(err.has_index && err.index_ndim == nd, "%s %s: has_index %d ndim %d, expected %d", tc_op_name(op), what,
           err.has_index, err.index_ndim, nd);
  char ib[128];
  tc_format_dims(ib, sizeof ib, nd, want);
  for (int d = 0; d < nd && err.index_ndim == nd; d++)
    TT_CHECK(err.index[d] == want[d], "%s %s: index[%d] = %lld, expected %s", tc_op_name(op), what, d,
             (long long)err.index[d], ib);
  if (nd > 0) TT_CHECK(strstr(tt_msg(&err), ib) != NULL, "%s %s: message does not name %s: %s", tc_op_name(op), what, ib, tt_msg(&err));
  TT_CHECK(strncmp(tt_msg(&err), tc_op_name(op), strlen(tc_op_name(op))) == 0, "%s %s: message: %s", tc_op_name(op), what, tt_msg(&err));
}

/* The offending value an op's check rejects. */
static int64_t bad_value(tc_check chk, tc_dtype dt, int variant) {
  if (chk == TC_CHECK_ZERO) return 0;
  return variant ? tt_min(dt) : -1;
}

Test(errors, precheck_first_middle_last_position) {
  int ops = 0;
  for (int o = 0; o < TC_OP_COUNT; o++) {
    tc_check chk = tc_op_check((tc_op)o);
    if (chk == TC_CHECK_NONE) continue;
    ops++;
    for (int k = 0; k < 4; k++) {
      tc_dtype dt = ints[k];
      if (!tc_op_supported((tc_op)o, dt, TC_ENGINE_CPU)) continue;
      const int64_t n = 9;
      int64_t av[9], bv[9];
      for (int q = 0; q < n; q++) { av[q] = q + 1; bv[q] = 1 + q % 3; }
      tc_tensor *a = tt_ivec(dt, n, av);
      const int pos[][3] = {{0, -1, -1}, {4, -1, -1}, {8, -1, -1}, {3, 5, 8}, {2, 0, -1}};
      for (int p = 0; p < 5; p++)
        for (int variant = 0; variant < 2; variant++) {
          int64_t b2[9];
          memcpy(b2, bv, sizeof b2);
          int first = 99;
          for (int q = 0; q < 3; q++)
            if (pos[p][q] >= 0) { b2[pos[p][q]] = bad_value(chk, dt, variant); if (pos[p][q] < first) first = pos[p][q]; }
          tc_tensor *b = tt_ivec(dt, n, b2);
          int64_t want = first;
          char what[64];
          snprintf(what, sizeof what, "%s case %d.%d", tt_name(dt), p, variant);
          expect_index((tc_op)o, a, b, 1, &want, what);
          tc_tensor_free(b);
        }
      tc_tensor_free(a);
    }
  }
  cr_assert_geq(ops, 7, "div rem floor_div mod pow shift_left shift_right carry a check");
  TT_DONE();
}

/* Broadcast divisors: the index is the first result position that reads the
 * offending element. */
Test(errors, precheck_index_under_broadcast) {
  tc_err err = tt_err();
  for (int o = 0; o < TC_OP_COUNT; o++) {
    tc_check chk = tc_op_check((tc_op)o);
    if (chk == TC_CHECK_NONE) continue;
    tc_op op = (tc_op)o;
    tc_dtype dt = TC_DT_I32;
    int64_t bad = bad_value(chk, dt, 0);
    int64_t ones[24];
    for (int q = 0; q < 24; q++) ones[q] = 1;
    const int64_t s34[2] = {3, 4}, s4[1] = {4}, s31[2] = {3, 1}, s14[2] = {1, 4}, s234[3] = {2, 3, 4};
    tc_tensor *a34 = tt_tensor(dt, 2, s34, ones, NULL);
    /* [3,4] op [4] with the bad value at 2 -> [0, 2] */
    int64_t v4[4] = {1, 1, bad, bad};
    tc_tensor *b4 = tt_tensor(dt, 1, s4, v4, NULL);
    expect_index(op, a34, b4, 2, (const int64_t[]){0, 2}, "[3,4] op [4]");
    /* [3,4] op [3,1] with the bad value at 1 -> [1, 0] */
    int64_t v31[3] = {1, bad, 1};
    tc_tensor *b31 = tt_tensor(dt, 2, s31, v31, NULL);
    expect_index(op, a34, b31, 2, (const int64_t[]){1, 0}, "[3,4] op [3,1]");
    /* [3,4] op 0-d -> [0, 0] */
    tc_tensor *b0 = tt_iscalar(dt, bad);
    expect_index(op, a34, b0, 2, (const int64_t[]){0, 0}, "[3,4] op scalar");
    /* 0-d op 0-d -> no index dims */
    tc_tensor *a0 = tt_iscalar(dt, 5);
    expect_index(op, a0, b0, 0, NULL, "scalar op scalar");
    /* 0-d op [3,4] with the bad value at (2,3) -> [2, 3] */
    int64_t v34[12];
    for (int q = 0; q < 12; q++) v34[q] = 1;
    v34[11] = bad;
    tc_tensor *b34 = tt_tensor(dt, 2, s34, v34, NULL);
    expect_index(op, a0, b34, 2, (const int64_t[]){2, 3}, "scalar op [3,4]");
    /* [2,3,4] op [1,4] with the bad value at 3 -> [0, 0, 3] */
    tc_tensor *a234 = tt_tensor(dt, 3, s234, ones, NULL);
    int64_t v14[4] = {1, 1, 1, bad};
    tc_tensor *b14 = tt_tensor(dt, 2, s14, v14, NULL);
    expect_index(op, a234, b14, 3, (const int64_t[]){0, 0, 3}, "[2,3,4] op [1,4]");
    /* a transposed divisor: storage [4,3], logical [3,4]; the bad value at logical (1,2) */
    int64_t t43[12];
    for (int q = 0; q < 12; q++) t43[q] = 1;
    t43[2 * 3 + 1] = bad;   /* storage (2, 1) is logical (1, 2) */
    const int64_t s43[2] = {4, 3};
    tc_tensor *bt = tt_tensor(dt, 2, s43, t43, NULL);
    int perm[2] = {1, 0};
    tc_tensor *btv = tc_view_permute(bt, perm, &err);
    expect_index(op, a34, btv, 2, (const int64_t[]){1, 2}, "transposed divisor");
    /* a weak literal divisor */
    tc_tensor *w = tc_scalar_i64(bad, true, &err);
    expect_index(op, a34, w, 2, (const int64_t[]){0, 0}, "weak literal");
    /* an empty result reads nothing: no error */
    int64_t z = 0;
    tc_tensor *e = tc_tensor_new(dt, 1, &z, &err);
    err = tt_err();
    tc_tensor *r = tc_binary(op, e, b0, &err);
    TT_CHECK(r != NULL && tc_numel(r) == 0, "%s: empty operand: %s", tc_op_name(op), tt_msg(&err));
    tc_tensor_free(r);
    tc_tensor_free(e); tc_tensor_free(w); tc_tensor_free(btv); tc_tensor_free(bt);
    tc_tensor_free(a234); tc_tensor_free(b14); tc_tensor_free(a0); tc_tensor_free(b34);
    tc_tensor_free(a34); tc_tensor_free(b4); tc_tensor_free(b31); tc_tensor_free(b0);
  }
  TT_DONE();
}

/* Float zero divisors are IEEE, not errors; an int tensor with a weak float
 * computes in f64. */
Test(errors, float_division_by_zero_is_not_an_error) {
  tc_err err = tt_err();
  for (int dt = TC_DT_BF16; dt <= TC_DT_F64; dt++) {
    tc_tensor *a = tt_fscalar((tc_dtype)dt, 1), *b = tt_fscalar((tc_dtype)dt, 0);
    const tc_op ops[] = {TC_OP_DIV, TC_OP_REM, TC_OP_FLOOR_DIV, TC_OP_MOD};
    for (int q = 0; q < 4; q++) {
      tc_tensor *o = tc_binary(ops[q], a, b, &err);
      cr_expect_not_null(o, "%s(%s) by zero: %s", tc_op_name(ops[q]), tt_name((tc_dtype)dt), tt_msg(&err));
      tc_tensor_free(o);
    }
    tc_tensor *m = tt_fscalar((tc_dtype)dt, -2);
    tc_tensor *p = tc_binary(TC_OP_POW, a, m, &err);
    cr_expect_not_null(p);
    tc_tensor_free(p); tc_tensor_free(m); tc_tensor_free(a); tc_tensor_free(b);
  }
  tc_tensor *i = tt_iscalar(TC_DT_I32, 7), *z = tc_scalar_f64(0.0, true, &err);
  tc_tensor *o = tc_binary(TC_OP_DIV, i, z, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  cr_expect_eq(o->dtype, TC_DT_F64);
  double v;
  tt_read(o, NULL, &v);
  cr_expect(isinf(v) && v > 0);
  tc_tensor_free(o); tc_tensor_free(i); tc_tensor_free(z);
}

/* The check runs before anything is computed: a big dividend with one zero
 * divisor at the end allocates nothing that survives. */
Test(errors, no_partial_result) {
  const int64_t n = 300000;
  tc_err err = tt_err();
  tc_tensor *a = tc_tensor_new(TC_DT_I64, 1, &n, &err), *b = tc_tensor_new(TC_DT_I64, 1, &n, &err);
  int64_t *bv = malloc(sizeof(int64_t) * (size_t)n);
  for (int64_t k = 0; k < n; k++) bv[k] = 3;
  bv[n - 1] = 0;
  tc_tensor_free(b);
  b = tt_ivec(TC_DT_I64, n, bv);
  uint64_t before = tc_mem_in_use();
  cr_expect_null(tc_binary(TC_OP_REM, a, b, &err));
  cr_expect_eq(err.code, TC_E_DIV_ZERO);
  cr_expect_eq(err.index[0], n - 1);
  cr_expect_eq(tc_mem_in_use(), before);
  /* also when the divisor is converted first (i8 / i64 computes in i64) */
  tc_tensor *c = tt_iscalar(TC_DT_I8, 5);
  before = tc_mem_in_use();
  err = tt_err();
  cr_expect_null(tc_binary(TC_OP_DIV, c, b, &err));
  cr_expect_eq(err.code, TC_E_DIV_ZERO);
  cr_expect_eq(err.dtype, TC_DT_I64);
  cr_expect_eq(tc_mem_in_use(), before);
  tc_tensor_free(c); tc_tensor_free(a); tc_tensor_free(b);
  free(bv);
}

/* ---- shapes ---- */
Test(errors, shape_mismatch_names_both_shapes) {
  tc_err err = tt_err();
  int64_t v[24] = {0};
  const int64_t s23[2] = {2, 3}, s4[1] = {4}, s324[3] = {3, 2, 4}, s54[2] = {5, 4};
  tc_tensor *a = tt_tensor(TC_DT_F32, 2, s23, NULL, (double[24]){0}), *b = tt_tensor(TC_DT_I32, 1, s4, v, NULL);
  uint64_t before = tc_mem_in_use();
  cr_expect_null(tc_binary(TC_OP_ADD, a, b, &err));
  cr_expect_eq(err.code, TC_E_SHAPE);
  cr_expect_eq(err.op, TC_OP_ADD);
  cr_expect(strstr(tt_msg(&err), "[2, 3]") && strstr(tt_msg(&err), "[4]") && strstr(tt_msg(&err), "add"), "%s", tt_msg(&err));
  cr_expect_eq(tc_mem_in_use(), before);
  tc_tensor *c = tt_tensor(TC_DT_I32, 3, s324, v, NULL), *d = tt_tensor(TC_DT_I32, 2, s54, v, NULL);
  err = tt_err();
  cr_expect_null(tc_binary(TC_OP_LESS, c, d, &err));
  cr_expect(strstr(tt_msg(&err), "[3, 2, 4]") && strstr(tt_msg(&err), "[5, 4]"), "%s", tt_msg(&err));
  tc_tensor *cond = tt_ivec(TC_DT_BOOL, 4, v);
  err = tt_err();
  cr_expect_null(tc_where(cond, a, a, &err));
  cr_expect_eq(err.code, TC_E_SHAPE);
  cr_expect(strstr(tt_msg(&err), "[4]") && strstr(tt_msg(&err), "[2, 3]") && strstr(tt_msg(&err), "where"), "%s", tt_msg(&err));
  /* broadcasting a view to a shape it does not fit */
  err = tt_err();
  cr_expect_null(tc_view_broadcast(a, 1, s4, &err));
  cr_expect_eq(err.code, TC_E_SHAPE);
  cr_expect(strstr(tt_msg(&err), "[2, 3]") && strstr(tt_msg(&err), "[4]"), "%s", tt_msg(&err));
  /* compatible shapes: [3,1] + [1,4] -> [3,4]; [5] + [3,5] -> [3,5] */
  int nd;
  int64_t out[TC_MAX_DIMS];
  err = tt_err();
  cr_expect_eq(tc_broadcast_shapes(2, (const int64_t[]){3, 1}, 2, (const int64_t[]){1, 4}, &nd, out, TC_OP_ADD, &err), 0);
  cr_expect(nd == 2 && out[0] == 3 && out[1] == 4);
  cr_expect_eq(tc_broadcast_shapes(1, (const int64_t[]){5}, 2, (const int64_t[]){3, 5}, &nd, out, TC_OP_ADD, &err), 0);
  cr_expect(nd == 2 && out[0] == 3 && out[1] == 5);
  cr_expect_eq(tc_broadcast_shapes(1, (const int64_t[]){0}, 2, (const int64_t[]){3, 1}, &nd, out, TC_OP_ADD, &err), 0);
  cr_expect(nd == 2 && out[0] == 3 && out[1] == 0);
  tc_tensor_free(cond); tc_tensor_free(a); tc_tensor_free(b); tc_tensor_free(c); tc_tensor_free(d);
}

Test(errors, permute_rejects_a_bad_permutation) {
  tc_err err = tt_err();
  int64_t v[6] = {0};
  tc_tensor *a = tt_tensor(TC_DT_I32, 2, (const int64_t[]){2, 3}, v, NULL);
  const int bad[][2] = {{0, 0}, {1, 1}, {0, 2}, {-1, 0}};
  for (int k = 0; k < 4; k++) {
    err = tt_err();
    cr_expect_null(tc_view_permute(a, bad[k], &err), "perm %d %d", bad[k][0], bad[k][1]);
    cr_expect_eq(err.code, TC_E_AXIS);
  }
  tc_tensor_free(a);
}

/* ---- memory ---- */
Test(errors, memory_limit) {
  tc_set_max_memory(4096);
  tc_err err = tt_err();
  uint64_t before = tc_mem_in_use();
  int64_t n = 1000;
  cr_expect_null(tc_tensor_new(TC_DT_F64, 1, &n, &err));
  cr_expect_eq(err.code, TC_E_OOM);
  cr_expect(strstr(tt_msg(&err), "memory limit") != NULL, "%s", tt_msg(&err));
  cr_expect_eq(tc_mem_in_use(), before);
  /* an op whose result does not fit fails as a whole */
  n = 300;
  tc_tensor *a = tc_tensor_new(TC_DT_F64, 1, &n, &err);
  cr_assert_not_null(a, "%s", tt_msg(&err));
  uint64_t mid = tc_mem_in_use();
  err = tt_err();
  cr_expect_null(tc_binary(TC_OP_ADD, a, a, &err));
  cr_expect_eq(err.code, TC_E_OOM);
  cr_expect_eq(err.op, TC_OP_ADD);
  cr_expect_eq(tc_mem_in_use(), mid);
  /* a promotion converts in the kernel, a block at a time: i32 + i64 needs
   * room for the result only (800 + 1600 + 1600 bytes fit 4096; a whole
   * converted copy of the i32 operand would not), and still fails as a
   * whole when the result does not fit */
  tc_tensor_free(a);
  n = 200;
  tc_tensor *b = tc_tensor_new(TC_DT_I32, 1, &n, &err);
  tc_tensor *c = tc_tensor_new(TC_DT_I64, 1, &n, &err);
  cr_assert(b && c, "%s", tt_msg(&err));
  for (int64_t i = 0; i < n; i++) {
    ((int32_t *)(void *)tc_tensor_data(b))[i] = (int32_t)(i - 100);
    ((int64_t *)(void *)tc_tensor_data(c))[i] = (int64_t)3000000000 * i;
  }
  mid = tc_mem_in_use();
  err = tt_err();
  tc_tensor *bc = tc_binary(TC_OP_ADD, b, c, &err);
  cr_assert_not_null(bc, "%s", tt_msg(&err));
  cr_expect_eq(bc->dtype, TC_DT_I64);
  cr_expect_eq(tc_mem_in_use(), mid + 1600);
  for (int64_t i = 0; i < n; i++)
    cr_expect_eq(((int64_t *)(void *)tc_tensor_data(bc))[i], (int64_t)3000000000 * i + i - 100);
  err = tt_err();
  cr_expect_null(tc_binary(TC_OP_ADD, b, c, &err));   /* a second result does not fit */
  cr_expect_eq(err.code, TC_E_OOM);
  cr_expect_eq(tc_mem_in_use(), mid + 1600);
  tc_tensor_free(bc);
  tc_tensor_free(b); tc_tensor_free(c);
  cr_expect_eq(tc_mem_in_use(), before);
  /* freeing gives the room back */
  n = 500;
  tc_tensor *d = tc_tensor_new(TC_DT_F64, 1, &n, &err);
  cr_expect_not_null(d, "%s", tt_msg(&err));
  tc_tensor_free(d);
}

Test(errors, element_count_overflow_is_an_error) {
  tc_err err = tt_err();
  uint64_t before = tc_mem_in_use();
  const int64_t huge[][3] = {{(int64_t)1 << 40, (int64_t)1 << 40, 1}, {INT64_MAX, 2, 1}, {(int64_t)1 << 62, 1, 1},
                             {(int64_t)1 << 61, 1, 1}, {3, INT64_MAX / 2, 5}};
  for (int k = 0; k < 5; k++) {
    err = tt_err();
    tc_tensor *t = tc_tensor_new(TC_DT_F64, 3, huge[k], &err);
    cr_expect_null(t, "case %d", k);
    cr_expect(err.code == TC_E_OOM, "case %d: %s", k, tt_msg(&err));
    cr_expect_eq(tc_mem_in_use(), before);
  }
  bool ok;
  int64_t numel;
  ok = tc_shape_numel(2, (const int64_t[]){(int64_t)1 << 32, (int64_t)1 << 31}, &numel);
  cr_expect(!ok);
  ok = tc_shape_numel(2, (const int64_t[]){(int64_t)1 << 32, (int64_t)1 << 30}, &numel);
  cr_expect(ok && numel == (int64_t)1 << 62);
  /* negative dims and too many dims are bad arguments */
  err = tt_err();
  cr_expect_null(tc_tensor_new(TC_DT_I8, 2, (const int64_t[]){2, -1}, &err));
  cr_expect_eq(err.code, TC_E_BAD_ARG);
  int64_t many[TC_MAX_DIMS + 1];
  for (int d = 0; d <= TC_MAX_DIMS; d++) many[d] = 1;
  err = tt_err();
  cr_expect_null(tc_tensor_new(TC_DT_I8, TC_MAX_DIMS + 1, many, &err));
  cr_expect_eq(err.code, TC_E_BAD_ARG);
  err = tt_err();
  cr_expect_null(tc_tensor_new(TC_DT_I8, -1, many, &err));
  cr_expect_eq(err.code, TC_E_BAD_ARG);
  /* the highest rank works */
  err = tt_err();
  tc_tensor *t = tc_tensor_new(TC_DT_I8, TC_MAX_DIMS, many, &err);
  cr_expect_not_null(t, "%s", tt_msg(&err));
  tc_tensor_free(t);
  cr_expect_eq(tc_mem_in_use(), before);
}

/* An empty tensor whose other dims are huge: no overflow anywhere. */
Test(errors, empty_tensor_with_huge_dims) {
  tc_err err = tt_err();
  const int64_t sh[3] = {0, (int64_t)1 << 62, (int64_t)1 << 62};
  tc_tensor *t = tc_tensor_new(TC_DT_I32, 3, sh, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  cr_expect_eq(tc_numel(t), 0);
  tc_tensor *n = tc_unary(TC_OP_NEG, t, &err);
  cr_expect_not_null(n, "%s", tt_msg(&err));
  cr_expect(n && tc_numel(n) == 0);
  tc_tensor_free(n);
  tc_axes all = {.all = true};
  tc_tensor *s = tc_reduce(TC_OP_REDUCE_SUM, t, &all, false, &err);
  cr_assert_not_null(s, "%s", tt_msg(&err));
  int64_t v = -1;
  tt_read(s, &v, NULL);
  cr_expect_eq(v, 0);
  tc_tensor_free(s);
  /* reducing the empty axis leaves [2^62, 2^62] elements: too many */
  tc_axes a0 = {.n = 1, .axis = {0}};
  err = tt_err();
  uint64_t before = tc_mem_in_use();
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, t, &a0, false, &err));
  cr_expect_eq(err.code, TC_E_OOM, "%s", tt_msg(&err));
  err = tt_err();
  cr_expect_null(tc_reduce(TC_OP_REDUCE_MAX, t, &a0, true, &err));
  cr_expect(err.code == TC_E_OOM || err.code == TC_E_EMPTY, "%s", tt_msg(&err));
  cr_expect_eq(tc_mem_in_use(), before);
  /* a transposed and a cast view of it */
  int perm[3] = {2, 0, 1};
  tc_tensor *p = tc_view_permute(t, perm, &err);
  cr_assert_not_null(p);
  tc_tensor *c = tc_cast(p, TC_DT_F64, &err);
  cr_expect_not_null(c, "%s", tt_msg(&err));
  TT_FREE(c, p, t);
}

/* ---- engines and interrupts ---- */
Test(errors, missing_engine_is_engine_unavailable) {
  tc_err err = tt_err();
  if (tc_engine_check(TC_ENGINE_CUDA, &err) == 0) {
    cr_log_info("a CUDA device is usable here: nothing to check");
    return;
  }
  tc_tensor *a = tt_iscalar(TC_DT_I32, 1);
  tc_set_engine(TC_ENGINE_CUDA);
  err = tt_err();
  cr_expect_null(tc_binary(TC_OP_ADD, a, a, &err));
  cr_expect_eq(err.code, TC_E_ENGINE, "%s: %s", tc_code_name(err.code), tt_msg(&err));
  cr_expect_eq(err.engine, TC_ENGINE_CUDA);
  err = tt_err();
  tc_axes all = {.all = true};
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, a, &all, false, &err));
  cr_expect_eq(err.code, TC_E_ENGINE, "%s", tt_msg(&err));
  err = tt_err();
  cr_expect_null(tc_cast(a, TC_DT_F32, &err));
  cr_expect_eq(err.code, TC_E_ENGINE, "%s", tt_msg(&err));
  err = tt_err();
  cr_expect_null(tc_unary(TC_OP_EXP, a, &err));
  cr_expect_eq(err.code, TC_E_ENGINE, "%s", tt_msg(&err));
  tc_set_engine(TC_ENGINE_CPU);
  tc_tensor_free(a);
}

Test(errors, interrupt_stops_a_computation) {
  tc_err err = tt_err();
  const int64_t n = (int64_t)1 << 20;
  tc_tensor *a = tc_tensor_new(TC_DT_F32, 1, &n, &err);
  cr_assert_not_null(a);
  uint64_t before = tc_mem_in_use();
  tc_interrupt_flag = 1;
  cr_expect_null(tc_binary(TC_OP_ADD, a, a, &err));
  cr_expect_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  cr_expect_eq(tc_mem_in_use(), before);
  err = tt_err();
  tc_axes all = {.all = true};
  cr_expect_null(tc_reduce(TC_OP_REDUCE_SUM, a, &all, false, &err));
  cr_expect_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  tc_interrupt_clear();
  err = tt_err();
  tc_tensor *o = tc_binary(TC_OP_ADD, a, a, &err);
  cr_expect_not_null(o);
  tc_tensor_free(o);
  tc_tensor_free(a);
}

/* The first error wins; later ones do not overwrite it. */
Test(errors, first_error_wins) {
  tc_err err = tt_err();
  tc_err_set(&err, TC_E_AXIS, TC_OP_MEAN, TC_DT_F32, "first %d", 1);
  tc_err_set(&err, TC_E_SHAPE, TC_OP_ADD, TC_DT_I8, "second");
  cr_expect_eq(err.code, TC_E_AXIS);
  cr_expect_str_eq(tt_msg(&err), "mean: first 1");
  cr_expect_eq(err.dtype, TC_DT_F32);
  /* formatting never overruns */
  char small[8];
  const int64_t dims[4] = {123456, 7, 8, 9};
  tc_format_dims(small, sizeof small, 4, dims);
  cr_expect(strlen(small) < sizeof small);
}
