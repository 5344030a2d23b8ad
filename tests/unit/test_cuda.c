/* The CUDA engine as seen from the core and the session, on any machine:
 * without a device it is engine_unavailable; it never claims a row the CPU
 * does not; in a CUDA build its kernels run (as their host emulation) with
 * the CPU's results and errors, and :verify compares the engines. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "runner.h"
#include "tt.h"
#ifdef TC_HAVE_CUDA
#include "cuda/tcu.h"
#endif

Test(cuda, unavailable_or_usable) {
  tc_err err;
  tc_err_clear(&err);
  if (tc_engine_check(TC_ENGINE_CUDA, &err) != 0) {
    cr_assert_eq(err.code, TC_E_ENGINE);
    cr_assert_eq(err.engine, TC_ENGINE_CUDA);
    cr_assert(!strncmp(tt_msg(&err), "engine cuda: ", 13), "%s", tt_msg(&err));
  } else {
    cr_assert_not_null(tc_engines[TC_ENGINE_CUDA]);
    cr_assert_eq(err.code, TC_OK);
  }
}

Test(cuda, claims_no_row_the_cpu_lacks) {
  for (int op = 0; op < TC_OP_COUNT; op++)
    for (int dt = 0; dt < TC_DT_COUNT; dt++) {
      if (tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CUDA))
        cr_assert(tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CPU), "%s %s", tc_op_name((tc_op)op),
                  tc_dtype_name((tc_dtype)dt));
#ifndef TC_HAVE_CUDA
      cr_assert(!tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CUDA));
#endif
    }
}

/* Runs text through a session; returns what it printed (caller frees). */
static char *run(const char *text, bool json, int *status) {
  runner r;
  runner_init(&r);
  char *out = NULL;
  size_t n = 0;
  r.out = open_memstream(&out, &n);
  r.errf = r.out;
  r.json = json;
  r.keep_going = true;
  runner_text(&r, text);
  fclose(r.out);
  *status = r.exit_status;
  runner_free(&r);
  return out;
}

#ifdef TC_HAVE_CUDA
static tc_tensor *i64s(int n, const int64_t *v) {
  tc_err err;
  tc_err_clear(&err);
  int64_t s = n;
  tc_tensor *t = tc_tensor_from_host(TC_DT_I64, 1, &s, v, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  return t;
}

Test(cuda_emulated, unverified_rows_are_dtype_unsupported) {
  tc_cuda_test_emulate(true);
  tc_set_engine(TC_ENGINE_CUDA);
  int64_t v[2] = {1, 2};
  tc_tensor *a = i64s(2, v);
  cr_assert_eq(tc_tensor_engine(a), TC_ENGINE_CUDA);
  tc_err err;
  tc_err_clear(&err);
  bool claimed = tc_op_supported(TC_OP_ADD, TC_DT_I64, TC_ENGINE_CUDA);
  tc_tensor *s = tc_add(a, a, &err);
  if (claimed) {
    cr_assert_not_null(s);
  } else {
    cr_assert_null(s);
    cr_assert_eq(err.code, TC_E_DTYPE);
    cr_assert_eq(err.engine, TC_ENGINE_CUDA);
    cr_assert_str_eq(tt_msg(&err), "add: not supported for i64 on cuda");
  }
  tc_tensor_free(s);
  tc_tensor_free(a);
}

Test(cuda_emulated, division_by_zero_found_on_the_device) {
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  tc_set_engine(TC_ENGINE_CUDA);
  int64_t a[5] = {7, 7, 7, 7, 7}, b[5] = {1, 2, 0, 3, 0}, q[5];
  tc_tensor *ta = i64s(5, a), *tb = i64s(5, b);
  tc_err err;
  tc_err_clear(&err);
  tc_tensor *r = tc_div(ta, tb, &err);
  cr_assert_null(r);
  cr_assert_eq(err.code, TC_E_DIV_ZERO);
  cr_assert_eq(err.engine, TC_ENGINE_CUDA);
  cr_assert(err.has_index);
  cr_assert_eq(err.index[0], 2);
  b[2] = b[4] = -1;
  tc_tensor_free(tb);
  tb = i64s(5, b);
  tc_err_clear(&err);
  r = tc_div(ta, tb, &err);
  cr_assert_not_null(r, "%s", tt_msg(&err));
  cr_assert_eq(tc_tensor_engine(r), TC_ENGINE_CUDA);
  cr_assert_eq(tc_tensor_to_host(r, q, &err), 0);
  cr_assert_eq(q[0], 7);
  cr_assert_eq(q[1], 3);
  cr_assert_eq(q[2], -7);
  cr_assert_eq(q[3], 2);
  tc_tensor_free(r);
  tc_tensor_free(ta);
  tc_tensor_free(tb);
}

Test(cuda_emulated, session_moves_operands_and_verifies) {
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  int st;
  char *out = run("x = [1, -2, 3]\n:engine cuda\n:engine\nx * 2\nsum(x)\n:verify x // 2\n:verify exp(f32(x))\n"
                  ":verify x / [1, 0, 1]\n:verify dtype(x)\n",
                  false, &st);
  cr_assert_str_eq(out,
                   "cuda\n"
                   "[ 2, -4,  6]  i64[3]\n"
                   "2\n"
                   "verify: identical on cpu and cuda (i64[3])\n"
                   "verify: identical on cpu and cuda (f32[3])\n"
                   "verify: cpu and cuda fail alike: division_by_zero: div: integer divisor is zero at index [1]\n"
                   "verify: identical on cpu and cuda (\"i64\")\n");
  cr_assert_eq(st, 0);
  free(out);
  out = run("x = [1.5, 2]\n:engine cuda\n:verify x + 1\n", true, &st);
  cr_assert_str_eq(out, "{\"ok\":true,\"type\":\"verify\",\"match\":true,\"identical\":true,\"dtype\":\"f64\","
                        "\"shape\":[2],\"max_ulps\":0,\"tolerance_ulps\":0}\n");
  free(out);
}

/* A list literal of more than 32 numbers is read into a block of its own
 * that its first cpu tensor takes as storage; the node keeps that tensor,
 * and a def's body evaluated later on another engine moves it there (and
 * back), or makes it from the values where no cpu tensor took them. */
Test(cuda_emulated, packed_list_kept_across_engines) {
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  int st;
  char *out = run("def f() = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]\n"
                  "def g() = [0.5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]\n"
                  "sum(f())\nx = f()\nx[0] = 100\n:engine cuda\nsum(f())\ny = f()\nsum(g())\n"
                  ":engine cpu\nsum(f())\nsum(g())\nsum(x)\nsum(y)\n",
                  false, &st);
  cr_assert_str_eq(out, "780\n780\n780.5\n780\n780.5\n880\n780\n");
  cr_assert_eq(st, 0);
  free(out);
}
#endif

Test(cuda, missing_plugin_is_engine_unavailable_with_the_reason) {
  setenv("TCALC_CUDA_LIB", "/nonexistent/libtcalc-cuda.so", 1);
  tc_err err;
  tc_err_clear(&err);
  cr_assert_neq(tc_engine_check(TC_ENGINE_CUDA, &err), 0);
  cr_assert_eq(err.code, TC_E_ENGINE);
  cr_assert_eq(err.engine, TC_ENGINE_CUDA);
#ifdef TC_HAVE_CUDA
  cr_assert(strstr(tt_msg(&err), "engine cuda: cannot load its plugin: /nonexistent/libtcalc-cuda.so: "), "%s", tt_msg(&err));
  /* and the capability questions answer no instead of loading anything */
  tc_call c = {.kind = TC_CALL_MATMUL, .op = TC_OP_MATMUL, .dtype = TC_DT_I64, .nin = 2};
  cr_assert(!tc_engines[TC_ENGINE_CUDA]->supports(&c));
  cr_assert(strstr(tc_engines[TC_ENGINE_CUDA]->why_not(&c), "/nonexistent/libtcalc-cuda.so"));
#else
  cr_assert_str_eq(tt_msg(&err), "engine cuda: this build of tcalc has no cuda engine");
#endif
}

#ifdef TC_HAVE_CUDA
/* [r, c] of 0, 1, 2, ... (i64) on the cuda engine. */
static tc_tensor *counting(int64_t r, int64_t c) {
  tc_err err;
  tc_err_clear(&err);
  int64_t shape[2] = {r, c}, v[64];
  for (int64_t i = 0; i < r * c; i++) v[i] = i;
  tc_set_engine(TC_ENGINE_CUDA);
  tc_tensor *t = tc_tensor_from_host(TC_DT_I64, 2, shape, v, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  return t;
}

/* Without cuBLAS only the float products are missing, saying why. */
static void products_without_cublas(const char *setting, const char *why) {
  setenv("TCALC_CUBLAS", setting, 1);
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  tc_set_engine(TC_ENGINE_CUDA);
  tc_err err;
  tc_err_clear(&err);
  cr_assert_eq(tc_engine_check(TC_ENGINE_CUDA, &err), 0, "%s", tt_msg(&err));
  tc_tensor *a = counting(3, 4), *b = counting(4, 2);
  tc_tensor *p = tc_matmul(a, b, &err);
  cr_assert_not_null(p, "%s", tt_msg(&err));
  int64_t got[6], want[6] = {28, 34, 76, 98, 124, 162};
  cr_assert_eq(tc_tensor_to_host(p, got, &err), 0);
  cr_assert_arr_eq(got, want, sizeof want);
  tc_tensor_free(p);
  const tc_dtype flts[3] = {TC_DT_F32, TC_DT_F64, TC_DT_BF16};
  for (int i = 0; i < 3; i++) {
    tc_tensor *fa = tc_cast(a, flts[i], &err), *fb = fa ? tc_cast(b, flts[i], &err) : NULL;
    cr_assert_not_null(fb, "%s", tt_msg(&err));
    tc_err_clear(&err);
    cr_assert_null(tc_matmul(fa, fb, &err));
    cr_assert_eq(err.code, TC_E_DTYPE);
    cr_assert(strstr(tt_msg(&err), why), "%s", tt_msg(&err));
    cr_assert(!strncmp(tt_msg(&err), "matmul: not supported for ", 26), "%s", tt_msg(&err));
    tc_err_clear(&err);
    tc_tensor *s = tc_add(fa, fb, &err);   /* the rest of the engine works */
    cr_assert_null(s);   /* [3,4] + [4,2] do not broadcast: the add ran its checks on cuda */
    cr_assert_eq(err.code, TC_E_SHAPE, "%s", tt_msg(&err));
    tc_tensor_free(fa);
    tc_tensor_free(fb);
  }
  tc_tensor_free(a);
  tc_tensor_free(b);
}

Test(cuda_emulated, products_without_cublas) {
  products_without_cublas("/nonexistent/libcublas.so.13", "(cuBLAS could not be loaded: /nonexistent/libcublas.so.13: ");
}

Test(cuda_emulated, products_with_cublas_turned_off) {
  products_without_cublas("none", "(cuBLAS is turned off (TCALC_CUBLAS=none))");
}

/* The overflow policy judges on the CPU engine: under check and saturate,
 * a judged call on cuda data (elementwise, cast, sum, product, running sum
 * and product, matrix product) gives the CPU's answer or its error. */
Test(cuda_emulated, overflow_policy_judged_calls) {
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  const char *stmts = ":verify cumsum(x, 0)\n:verify cumprod(x, 1)\n:verify reduce_sum(x, 0)\n:verify reduce_prod(x, 1)\n"
                      ":verify i8(i16(x) * 3)\n:verify x @ transpose(x)\n:verify x + x\n";
  char script[1024];
  snprintf(script, sizeof script, "x = i8([[100, 100, 1], [1, 2, 127]])\n:engine cuda\n:set overflow check\n%s"
           ":set overflow saturate\n%s", stmts, stmts);
  int st;
  char *out = run(script, false, &st);
  cr_assert_str_eq(out,
                   "verify: cpu and cuda fail alike: integer_overflow: cumsum: the exact running sum does not fit i8 at index [1, 2] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: cumprod: the exact running product does not fit i8 at index [0, 1] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: reduce_sum: the exact sum does not fit i8 at index [2] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: reduce_prod: the exact product does not fit i8 at index [0] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: cast: a i16 value cast to i8 does not fit i8 at index [0, 0] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: matmul: the exact dot product does not fit i8 at index [0, 0] (overflow check)\n"
                   "verify: cpu and cuda fail alike: integer_overflow: add: the exact result of add does not fit i8 at index [0, 0] (overflow check)\n"
                   "verify: identical on cpu and cuda (i8[2, 3])\n"
                   "verify: identical on cpu and cuda (i8[2, 3])\n"
                   "verify: identical on cpu and cuda (i8[3])\n"
                   "verify: identical on cpu and cuda (i8[2])\n"
                   "verify: identical on cpu and cuda (i8[2, 3])\n"
                   "verify: identical on cpu and cuda (i8[2, 2])\n"
                   "verify: identical on cpu and cuda (i8[2, 3])\n");
  cr_assert_eq(st, 0);
  free(out);
}

Test(cuda_emulated, session_matmul) {
  tc_cuda_test_emulate(true);
  tc_cuda_test_unverified(true);
  unsetenv("TCALC_CUBLAS");
  int st;
  char *out = run("a = i64([[9007199254740993, 2], [3, -4]])\nb = f32([[1.5, 2], [3, 4]])\n:engine cuda\n"
                  "a @ [[1, 0], [0, 1]]\n:verify a @ a\n:verify b @ b\n:verify trace(b)\n:verify dot([1, 2], [3, 4])\n",
                  false, &st);
  cr_assert_str_eq(out,
                   "[[9007199254740993,                2],\n"
                   " [               3,               -4]]  i64[2,2]\n"
                   "verify: identical on cpu and cuda (i64[2, 2])\n"
                   "verify: identical on cpu and cuda (f32[2, 2])\n"
                   "verify: identical on cpu and cuda (f32[])\n"
                   "verify: identical on cpu and cuda (i64[])\n");
  cr_assert_eq(st, 0);
  free(out);
}
#endif

Test(cuda, verify_needs_both_engines) {
  int st;
  char *out = run(":verify 1 + 1\n", true, &st);
  tc_err err;
  tc_err_clear(&err);
  if (tc_engine_check(TC_ENGINE_CUDA, &err) != 0) {
    cr_assert(strstr(out, "\"code\":\"engine_unavailable\""), "%s", out);
    cr_assert_eq(st, 1);
  } else {
    cr_assert(strstr(out, "\"type\":\"verify\""), "%s", out);
  }
  free(out);
  out = run(":verify y = 1\n", false, &st);
  cr_assert_str_eq(out, "error[bad_argument]: :verify needs an expression (not an assignment)\n");
  cr_assert_eq(st, 1);
  free(out);
}
