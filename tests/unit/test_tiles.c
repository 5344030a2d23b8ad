/* Transposed inputs are walked in tiles (backend/cpu/cpu.c) by elementwise
 * ops, copies and gathers, across threads: every element must still be
 * the one its position asks for. Checked against the index arithmetic for
 * shapes around the tile sizes (32 rows x 128 columns) and partial rows at
 * thread boundaries, with 1 to 3 threads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu.h"
#include "engine.h"
#include "tt.h"

static void setup(void) { tc_set_threads(0); }
static void teardown(void) { tc_set_threads(0); }
TestSuite(tiles, .init = setup, .fini = teardown);

static int check(int64_t R, int64_t C, int threads) {
  tc_err err;
  tc_err_clear(&err);
  tc_set_threads(threads);
  int64_t shape[2] = {R, C};
  tc_tensor *x = tc_tensor_new(TC_DT_F64, 2, shape, &err);
  cr_assert(x);
  double *d = (double *)(void *)tc_tensor_data(x);
  for (int64_t i = 0; i < R * C; i++) d[i] = (double)i;
  tc_tensor *t = tc_transpose(x, -1, NULL, &err);                 /* [C, R] view */
  cr_assert(t, "%s", tt_msg(&err));
  tc_tensor *one = tt_fscalar(TC_DT_F64, 1.0);
  tc_tensor *sum = tc_binary(TC_OP_ADD, t, one, &err);            /* elementwise */
  tc_tensor *cp = tc_clone(t, &err);                               /* copy */
  int64_t n = R;
  tc_tensor *idx = tc_tensor_new(TC_DT_I64, 1, &n, &err);
  for (int64_t i = 0; i < R; i++) ((int64_t *)(void *)tc_tensor_data(idx))[i] = (i * 7919) % R;
  tc_tensor *g = tc_take(t, idx, 1, TC_MODE_ERROR, NULL, &err);    /* gather along axis 1 of the view */
  cr_assert(sum && cp && g, "%s", tt_msg(&err));
  int bad = 0;
  const double *ps = (const double *)(const void *)tc_tensor_data(sum);
  const double *pc = (const double *)(const void *)tc_tensor_data(cp);
  const double *pg = (const double *)(const void *)tc_tensor_data(g);
  for (int64_t i = 0; i < C; i++)
    for (int64_t j = 0; j < R; j++) {
      double want = (double)(j * C + i), wg = (double)(((j * 7919) % R) * C + i);
      if (ps[i * R + j] != want + 1 || pc[i * R + j] != want || pg[i * R + j] != wg) {
        if (++bad <= 3)
          cr_log_error("[%lld, %lld] threads %d: at [%lld, %lld] add %g copy %g take %g", (long long)R, (long long)C,
                       threads, (long long)i, (long long)j, ps[i * R + j], pc[i * R + j], pg[i * R + j]);
      }
    }
  tc_tensor_free(sum); tc_tensor_free(cp); tc_tensor_free(g); tc_tensor_free(idx);
  tc_tensor_free(one); tc_tensor_free(t); tc_tensor_free(x);
  return bad;
}

Test(tiles, transposed_inputs_any_threads) {
  static const int64_t sizes[][2] = {{16, 16}, {17, 40}, {50, 20}, {128, 32}, {129, 33}, {256, 40}, {257, 33},
                                     {300, 257}, {520, 100}, {1000, 700}, {4097, 65}, {31, 5000}, {1030, 9}};
  int bad = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int t = 1; t <= 3; t++) bad += check(sizes[s][0], sizes[s][1], t);
  cr_assert_eq(bad, 0, "%d elements wrong", bad);
}

/* A batch of transposed matrices ([B, R, C] viewed as [B, C, R]): tiles
 * of rows that cross from one matrix to the next (a row pointer is
 * stepped by the row stride only within a matrix). */
Test(tiles, batched_transposes_cross_matrices) {
  static const int64_t sizes[][3] = {{3, 300, 40}, {5, 260, 33}, {2, 1000, 70}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int th = 1; th <= 3; th++) {
      tc_err err;
      tc_err_clear(&err);
      tc_set_threads(th);
      int64_t B = sizes[s][0], R = sizes[s][1], C = sizes[s][2], shape[3] = {B, R, C};
      tc_tensor *x = tc_tensor_new(TC_DT_F64, 3, shape, &err);
      cr_assert(x);
      double *d = (double *)(void *)tc_tensor_data(x);
      for (int64_t i = 0; i < B * R * C; i++) d[i] = (double)i;
      int perm[3] = {0, 2, 1};
      tc_tensor *t = tc_view_permute(x, perm, &err);   /* [B, C, R] */
      tc_tensor *one = tt_fscalar(TC_DT_F64, 1.0);
      tc_tensor *sum = tc_binary(TC_OP_ADD, t, one, &err);
      cr_assert(t && sum, "%s", tt_msg(&err));
      const double *ps = (const double *)(const void *)tc_tensor_data(sum);
      int bad = 0;
      for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < C; i++)
          for (int64_t j = 0; j < R; j++)
            bad += ps[(b * C + i) * R + j] != (double)((b * R + j) * C + i) + 1;
      cr_expect_eq(bad, 0, "[%lld, %lld, %lld] threads %d: %d elements wrong", (long long)B, (long long)R, (long long)C, th, bad);
      tc_tensor_free(sum); tc_tensor_free(one); tc_tensor_free(t); tc_tensor_free(x);
    }
}

/* Mixed dtypes convert inside the kernel, a block at a time (backend/cpu/
 * ew.c): every result must equal the op on whole converted copies, for
 * every pair of dtypes, contiguous, transposed and broadcast inputs, across
 * block edges and threads. */
static void fill_any(tc_tensor *t, uint64_t seed) {
  char *d = tc_tensor_data(t);
  size_t es = tc_dtype_size(t->dtype);
  for (int64_t i = 0; i < tc_numel(t); i++) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    double v = (double)(int64_t)(seed >> 40) / 4096.0 - 1000.0;
    if (t->dtype == TC_DT_BOOL) d[i * (int64_t)es] = (char)(seed >> 63);
    else if (tt_is_flt(t->dtype)) tt_put_f(t->dtype, d, i, v);
    else tt_put_i(t->dtype, d, i, (int64_t)(seed >> 50) - 4000);
  }
}

Test(tiles, mixed_dtypes_equal_converted_copies) {
  tc_err err;
  tc_err_clear(&err);
  static const tc_op ops[] = {TC_OP_ADD, TC_OP_MUL, TC_OP_LESS, TC_OP_MAXIMUM};
  int64_t shape[2] = {130, 67}, one = 1;
  int bad = 0, ran = 0;
  for (int da = 0; da < TT_NDT; da++)
    for (int db = 0; db < TT_NDT; db++) {
      tc_tensor *a = tc_tensor_new((tc_dtype)da, 2, shape, &err), *b0 = tc_tensor_new((tc_dtype)db, 2, shape, &err);
      tc_tensor *s = tc_tensor_new((tc_dtype)db, 1, &one, &err);
      cr_assert(a && b0 && s);
      fill_any(a, 1 + (uint64_t)da);
      fill_any(b0, 99 + (uint64_t)db);
      fill_any(s, 7);
      int64_t tshape[2] = {67, 130};
      tc_tensor *bt = tc_reshape(b0, 2, tshape, &err);
      tc_tensor *b = tc_transpose(bt, -1, NULL, &err);   /* [130, 67], transposed */
      cr_assert(b, "%s", tt_msg(&err));
      for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (int form = 0; form < 2; form++) {
          tc_tensor *rhs = form ? s : b;
          if (!tc_op_supported(ops[o], tc_promote((tc_dtype)da, (tc_dtype)db), TC_ENGINE_CPU)) continue;
          tc_set_threads(1 + form);
          tc_tensor *got = tc_binary(ops[o], a, rhs, &err);
          tc_dtype k = tc_promote((tc_dtype)da, (tc_dtype)db);
          tc_tensor *ca = tc_cast(a, k, &err), *cb = tc_cast(rhs, k, &err);
          tc_tensor *want = ca && cb ? tc_binary(ops[o], ca, cb, &err) : NULL;
          if (!got || !want) { cr_log_error("%s: %s", tc_op_name(ops[o]), tt_msg(&err)); bad++; }
          else if (got->dtype != want->dtype ||
                   memcmp(tc_tensor_data(got), tc_tensor_data(want), (size_t)tc_numel(got) * tc_dtype_size(got->dtype))) {
            if (++bad <= 5) cr_log_error("%s %s %s form %d differs", tc_op_name(ops[o]), tt_name((tc_dtype)da), tt_name((tc_dtype)db), form);
          }
          ran++;
          tc_tensor_free(got); tc_tensor_free(want); tc_tensor_free(ca); tc_tensor_free(cb);
        }
      tc_tensor_free(a); tc_tensor_free(b0); tc_tensor_free(bt); tc_tensor_free(b); tc_tensor_free(s);
    }
  cr_assert_gt(ran, 200, "%d cases", ran);
  cr_assert_eq(bad, 0, "%d of %d mixed-dtype results differ from converted copies", bad, ran);
}

/* The tiles' transposition (backend/cpu/transpose.c) against the index
 * arithmetic: elements of 1, 2, 4 and 8 bytes, blocks and edges of every
 * size, source rows further apart than a row and in reverse, at every
 * instruction-set level the CPU has. */
Test(tiles, block_transposes_move_every_element) {
  static const int64_t dims[] = {1, 3, 4, 7, 8, 9, 16, 17, 33, 130};
  int top = cpu_matmul_isa(-1), bad = 0, ran = 0;
  const int64_t most = 130 * 136;
  unsigned char *src = malloc((size_t)most * 8), *dst = malloc((size_t)most * 8);
  cr_assert(src && dst);
  for (int64_t i = 0; i < most * 8; i++) src[i] = (unsigned char)(i * 131 + (i >> 8));
  for (int level = 0; level <= top; level++) {
    cpu_matmul_isa(level);
    for (size_t es = 1; es <= 8; es *= 2)
      for (size_t a = 0; a < sizeof dims / sizeof *dims; a++)
        for (size_t b = 0; b < sizeof dims / sizeof *dims; b++)
          for (int form = 0; form < 3; form++) {
            int64_t rows = dims[a], cols = dims[b], ss = form == 0 ? cols : cols + 5;
            const unsigned char *s0 = src + (form == 2 ? (size_t)((rows - 1) * ss) * es : 0);
            if (form == 2) ss = -ss;   /* the last source row first */
            memset(dst, 0xEE, (size_t)(rows * cols) * es);
            cpu_transpose(es, (const char *)s0, ss, rows, cols, (char *)dst);
            for (int64_t i = 0; i < rows; i++)
              for (int64_t j = 0; j < cols; j++)
                if (memcmp(dst + (size_t)(j * rows + i) * es, s0 + (i * ss + j) * (int64_t)es, es) != 0 && ++bad <= 3)
                  cr_log_error("level %d, %zu bytes, %lld x %lld, stride %lld: [%lld, %lld] wrong", level, es,
                               (long long)rows, (long long)cols, (long long)ss, (long long)i, (long long)j);
            ran++;
          }
  }
  cpu_matmul_isa(99);
  free(src);
  free(dst);
  cr_assert_eq(bad, 0, "%d elements wrong in %d transposes", bad, ran);
}
