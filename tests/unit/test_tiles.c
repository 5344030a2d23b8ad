/* Transposed inputs are walked in tiles (backend/cpu/cpu.c) by elementwise
 * ops, copies and gathers, across threads: every element must still be
 * the one its position asks for. Checked against the index arithmetic for
 * shapes around the tile sizes (32 rows x 64 columns) and partial rows at
 * thread boundaries, with 1 to 3 threads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
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
  cr_assert(t, "%s", err.msg);
  tc_tensor *one = tt_fscalar(TC_DT_F64, 1.0);
  tc_tensor *sum = tc_binary(TC_OP_ADD, t, one, &err);            /* elementwise */
  tc_tensor *cp = tc_clone(t, &err);                               /* copy */
  int64_t n = R;
  tc_tensor *idx = tc_tensor_new(TC_DT_I64, 1, &n, &err);
  for (int64_t i = 0; i < R; i++) ((int64_t *)(void *)tc_tensor_data(idx))[i] = (i * 7919) % R;
  tc_tensor *g = tc_take(t, idx, 1, TC_MODE_ERROR, NULL, &err);    /* gather along axis 1 of the view */
  cr_assert(sum && cp && g, "%s", err.msg);
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
  static const int64_t sizes[][2] = {{128, 32}, {129, 33}, {300, 257}, {1000, 700}, {4097, 65}, {31, 5000}};
  int bad = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int t = 1; t <= 3; t++) bad += check(sizes[s][0], sizes[s][1], t);
  cr_assert_eq(bad, 0, "%d elements wrong", bad);
}
