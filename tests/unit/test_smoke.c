/* A first end-to-end check of the core API: build tensors, divide, read back. */
#include <criterion/criterion.h>
#include "tcalc.h"
#include "tt.h"

Test(smoke, int_division_truncates) {
  tc_err err;
  tc_err_clear(&err);
  int64_t sa[1] = {4};
  int64_t a[4] = {-7, -7, 7, 7}, b[4] = {2, -2, 2, -2}, out[4];
  tc_tensor *ta = tc_tensor_from_host(TC_DT_I64, 1, sa, a, &err);
  tc_tensor *tb = tc_tensor_from_host(TC_DT_I64, 1, sa, b, &err);
  tc_tensor *q = tc_div(ta, tb, &err);
  cr_assert_not_null(q, "%s", tt_msg(&err));
  cr_assert_eq(tc_tensor_to_host(q, out, &err), 0);
  cr_assert_eq(out[0], -3);
  cr_assert_eq(out[1], 3);
  cr_assert_eq(out[2], 3);
  cr_assert_eq(out[3], -3);
  tc_tensor_free(q);
  tc_tensor_free(ta);
  tc_tensor_free(tb);
}
