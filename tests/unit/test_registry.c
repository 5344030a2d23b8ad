/* The capability registry (SPEC 7): every (op, dtype) claimed for cpu runs
 * and gives a result; every unclaimed one returns dtype_unsupported, never a
 * crash. Ops come from the op table, so rows added later are covered too;
 * the claims for the core's ops are also checked against the SPEC. */
#include <stdio.h>
#include <string.h>
#include "tt.h"

/* Three elements of dtype dt that are valid operands of every op (nonzero,
 * non-negative, inside every math domain that matters for "it runs"). */
static tc_tensor *operand(tc_dtype dt) {
  int64_t iv[3] = {1, 2, 1};
  double fv[3] = {0.5, 0.25, 1.0};
  if (dt == TC_DT_BOOL) iv[1] = 0;
  return tt_tensor(dt, 1, (const int64_t[]){3}, iv, fv);
}

/* Calls op on operands of dtype dt the way its kind is called. Returns 1 if
 * the kind is not one this suite knows (a row from another branch whose
 * calling convention lives elsewhere), else 0 with *out set. */
static int call(tc_op op, tc_dtype dt, tc_tensor **out, tc_err *err) {
  tc_tensor *a = operand(dt), *b = operand(dt);
  *out = NULL;
  int unknown = 0;
  switch (tc_op_family(op)) {
  case TC_FAM_BIN: case TC_FAM_CMP:
    *out = tc_binary(op, a, b, err);
    break;
  case TC_FAM_UN: case TC_FAM_PRED:
    *out = tc_unary(op, a, err);
    break;
  case TC_FAM_SEL: {
    tc_tensor *c = operand(TC_DT_BOOL);
    *out = tc_where(c, a, b, err);
    tc_tensor_free(c);
    break;
  }
  case TC_FAM_CLIP: {
    tc_tensor *lo = tt_tensor(dt, 0, NULL, (const int64_t[]){0}, (const double[]){0.3});
    *out = tc_clip(a, lo, b, err);
    tc_tensor_free(lo);
    break;
  }
  case TC_FAM_CAST:
    /* claimed means a cast from dt to every dtype */
    for (int to = 0; to < TT_NDT; to++) {
      tc_tensor_free(*out);
      *out = tc_cast(a, (tc_dtype)to, err);
      if (!*out) break;
      cr_expect_eq((*out)->dtype, to);
    }
    break;
  case TC_FAM_REDUCE: {
    tc_axes all = {.all = true};
    *out = tc_reduce(op, a, &all, false, err);
    break;
  }
  default:
    /* INFO (dtype, shape, ndim, size) is answered by the evaluator from the
     * tensor header, with no core call; kinds added by other branches
     * (indexing, matmul, ...) have their own suites. */
    unknown = 1;
    break;
  }
  tc_tensor_free(a);
  tc_tensor_free(b);
  return unknown;
}

Test(registry, claimed_run_unclaimed_are_dtype_unsupported) {
  int claimed = 0, unclaimed = 0, skipped = 0;
  for (int o = 0; o < TC_OP_COUNT; o++)
    for (int d = 0; d < TT_NDT; d++) {
      tc_op op = (tc_op)o;
      tc_dtype dt = (tc_dtype)d;
      bool yes = tc_op_supported(op, dt, TC_ENGINE_CPU);
      tc_err err = tt_err();
      uint64_t before = tc_mem_in_use();
      tc_tensor *out;
      if (call(op, dt, &out, &err)) { skipped++; continue; }
      if (yes) {
        claimed++;
        TT_CHECK(out != NULL, "%s(%s) is claimed for cpu but failed: %s", tc_op_name(op), tt_name(dt), tt_msg(&err));
      } else {
        unclaimed++;
        TT_CHECK(out == NULL, "%s(%s) is not claimed for cpu but ran", tc_op_name(op), tt_name(dt));
        TT_CHECK(err.code == TC_E_DTYPE, "%s(%s): code %s, expected dtype_unsupported (%s)", tc_op_name(op), tt_name(dt),
                 tc_code_name(err.code), tt_msg(&err));
        TT_CHECK(err.op == o, "%s(%s): err.op %d", tc_op_name(op), tt_name(dt), err.op);
        TT_CHECK(strstr(tt_msg(&err), tc_op_name(op)) && strstr(tt_msg(&err), tt_name(dt)) && strstr(tt_msg(&err), "cpu"),
                 "%s(%s): message should name op, dtype and engine: %s", tc_op_name(op), tt_name(dt), tt_msg(&err));
        TT_CHECK(tc_mem_in_use() == before, "%s(%s): memory left allocated", tc_op_name(op), tt_name(dt));
      }
      tc_tensor_free(out);
    }
  cr_log_info("%d claimed and %d unclaimed (op, dtype) pairs run; %d skipped (kinds without a core call)", claimed,
              unclaimed, skipped);
  cr_assert_gt(claimed, 0);
  cr_assert_gt(unclaimed, 0);
  TT_DONE();
}

/* What SPEC 2-5 says each core op accepts: B bool, I integers, F floats. */
static const struct { const char *op, *classes; } spec_caps[] = {
  {"add", "IF"}, {"sub", "IF"}, {"mul", "IF"}, {"div", "IF"}, {"rem", "IF"}, {"floor_div", "IF"}, {"mod", "IF"},
  {"pow", "IF"}, {"maximum", "BIF"}, {"minimum", "BIF"}, {"atan2", "BIF"},
  {"bitwise_and", "BI"}, {"bitwise_or", "BI"}, {"bitwise_xor", "BI"}, {"shift_left", "I"}, {"shift_right", "I"},
  {"equal", "BIF"}, {"not_equal", "BIF"}, {"less", "BIF"}, {"less_equal", "BIF"}, {"greater", "BIF"},
  {"greater_equal", "BIF"},
  {"neg", "IF"}, {"abs", "IF"}, {"bitwise_not", "BI"}, {"logical_not", "BIF"}, {"sign", "BIF"},
  {"exp", "BIF"}, {"log", "BIF"}, {"log2", "BIF"}, {"log10", "BIF"}, {"log1p", "BIF"}, {"expm1", "BIF"},
  {"sqrt", "BIF"}, {"rsqrt", "BIF"}, {"cbrt", "BIF"}, {"sin", "BIF"}, {"cos", "BIF"}, {"tan", "BIF"},
  {"asin", "BIF"}, {"acos", "BIF"}, {"atan", "BIF"}, {"sinh", "BIF"}, {"cosh", "BIF"}, {"tanh", "BIF"},
  {"erf", "BIF"}, {"floor", "BIF"}, {"ceil", "BIF"}, {"round", "BIF"}, {"trunc", "BIF"},
  {"isnan", "BIF"}, {"isinf", "BIF"}, {"isfinite", "BIF"}, {"where", "BIF"}, {"clip", "BIF"}, {"cast", "BIF"},
  {"reduce_sum", "BIF"}, {"reduce_prod", "BIF"}, {"reduce_max", "BIF"}, {"reduce_min", "BIF"}, {"mean", "BIF"},
  {"argmax", "BIF"}, {"argmin", "BIF"}, {"any", "BIF"}, {"all", "BIF"},
  {"dtype", "BIF"}, {"shape", "BIF"}, {"ndim", "BIF"}, {"size", "BIF"},
};

Test(registry, core_claims_match_the_spec) {
  for (size_t k = 0; k < sizeof spec_caps / sizeof spec_caps[0]; k++) {
    int op = tc_op_from_name(spec_caps[k].op);
    cr_assert_geq(op, 0, "op %s is missing from the table", spec_caps[k].op);
    for (int d = 0; d < TT_NDT; d++) {
      char cls = d == TC_DT_BOOL ? 'B' : tt_is_int((tc_dtype)d) ? 'I' : 'F';
      bool want = strchr(spec_caps[k].classes, cls) != NULL;
      TT_CHECK(tc_op_supported((tc_op)op, (tc_dtype)d, TC_ENGINE_CPU) == want, "%s(%s): claimed %d, SPEC says %d",
               spec_caps[k].op, tt_name((tc_dtype)d), !want, want);
    }
  }
  TT_DONE();
}

/* Every op has a CPU capability row, at least one dtype the CPU engine
 * runs it for (the rows are printed; run with --verbose to see them). */
Test(registry, print_cpu_rows) {
  for (int o = 0; o < TC_OP_COUNT; o++) {
    char line[256];
    int n = snprintf(line, sizeof line, "%-14s", tc_op_name((tc_op)o)), dtypes = 0;
    for (int d = 0; d < TT_NDT; d++)
      if (tc_op_supported((tc_op)o, (tc_dtype)d, TC_ENGINE_CPU)) {
        dtypes++;
        if (n < (int)sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, " %s", tt_name((tc_dtype)d));
      }
    cr_log_info("%s", line);
    cr_expect_gt(dtypes, 0, "%s: the CPU engine runs it for no dtype", tc_op_name((tc_op)o));
  }
}

/* An engine this build lacks claims nothing. */
Test(registry, missing_engine_claims_nothing) {
  tc_err err = tt_err();
  if (tc_engine_check(TC_ENGINE_CUDA, &err) == 0) {
    cr_log_info("a CUDA device is usable here; its claims are checked by the parity suites");
    return;
  }
  cr_expect_eq(err.code, TC_E_ENGINE);
#ifndef TC_HAVE_CUDA
  for (int o = 0; o < TC_OP_COUNT; o++)
    for (int d = 0; d < TT_NDT; d++)
      cr_expect(!tc_op_supported((tc_op)o, (tc_dtype)d, TC_ENGINE_CUDA));
#endif
}

/* Names, kinds and lookups generated from the tables agree. */
Test(registry, table_lookups) {
  for (int o = 0; o < TC_OP_COUNT; o++) {
    cr_expect_eq(tc_op_from_name(tc_op_name((tc_op)o)), o);
    cr_expect(tc_op_doc((tc_op)o)[0] != 0, "%s has no doc", tc_op_name((tc_op)o));
  }
  for (int d = 0; d < TC_DT_COUNT; d++) {
    cr_expect_eq(tc_dtype_from_name(tc_dtype_name((tc_dtype)d)), d);
    cr_expect_eq(tc_dtype_size((tc_dtype)d) * 8, (size_t)(d == TC_DT_BOOL ? 8 : tt_bits((tc_dtype)d)));
  }
  cr_expect_eq(tc_op_from_name("sum"), TC_OP_REDUCE_SUM);
  cr_expect_eq(tc_op_from_name("nosuchop"), -1);
  cr_expect_eq(tc_dtype_from_name("u8"), TC_DT_U8);
  cr_expect_eq(tc_dtype_from_name("u128"), -1);
  for (int c = 1; c < TC_E_COUNT; c++) cr_expect(tc_code_exit((tc_code)c) == 1 || tc_code_exit((tc_code)c) == 3);
  cr_expect_str_eq(tc_code_name(TC_E_DIV_ZERO), "division_by_zero");
  cr_expect_str_eq(tc_code_name(TC_E_DTYPE), "dtype_unsupported");
}
