/* One typing function for binary results (issue 54): tc_binary_typing's
 * answer (result dtype, weakness, or the error) is what tc_binary gives on
 * its scalar path (two 0-d CPU operands) and on its eager path (operands of
 * shape [1], literals 0-d beside them), for every binary elementwise op,
 * every pair of the 13 dtypes and of the literal kinds (a weak integer, a
 * weak float, a weak integer above the i64 maximum). */
#include <stdio.h>
#include "tt.h"
#include "internal.h"

typedef struct { tc_dtype dt; bool weak; } kind;

static int kinds(kind *k) {
  int n = 0;
  for (int dt = 0; dt < TC_DT_COUNT; dt++) k[n++] = (kind){(tc_dtype)dt, false};
  k[n++] = (kind){TC_DT_I64, true};
  k[n++] = (kind){TC_DT_F64, true};
  k[n++] = (kind){TC_DT_U64, true};
  return n;
}

/* An operand of kind k: 0-d, or of shape [1] when vec (a literal stays
 * 0-d beside a tensor, as the language makes it). Value 1, or 2^63 for a
 * weak u64 (the only literal that is one). */
static tc_tensor *operand(kind k, bool vec) {
  int64_t shape[1] = {1}, v = k.weak && k.dt == TC_DT_U64 ? INT64_MIN : 1;
  double f = 1;
  tc_tensor *t = tt_tensor(k.dt, vec ? 1 : 0, shape, &v, &f);
  t->weak = k.weak;
  return t;
}

/* What a path gave: the dtype and weakness of its result, or its error code. */
typedef struct { tc_code code; tc_dtype dt; bool weak; } outcome;

static outcome run(tc_op op, kind ka, kind kb, bool vec) {
  bool both_weak = ka.weak && kb.weak;
  tc_tensor *a = operand(ka, vec && (!ka.weak || both_weak)), *b = operand(kb, vec && (!kb.weak || both_weak));
  tc_err err;
  tc_err_clear(&err);
  tc_tensor *r = tc_binary(op, a, b, &err);
  outcome o = {err.code, r ? r->dtype : TC_DT_NONE, r && r->weak};
  if (r) o.code = TC_OK;
  TT_FREE(r, a, b);
  return o;
}

static const char *kname(kind k) {
  static char buf[4][24];
  static int i;
  char *s = buf[i++ & 3];
  snprintf(s, 24, "%s%s", k.weak ? "weak " : "", tc_dtype_name(k.dt));
  return s;
}

Test(typing, one_function_for_scalar_and_eager_paths) {
  kind k[TC_DT_COUNT + 3];
  int nk = kinds(k), cases = 0, typed = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    if (!tc_op_is_ew((tc_op)op) || tc_op_arity((tc_op)op) != 2) continue;
    for (int i = 0; i < nk; i++)
      for (int j = 0; j < nk; j++) {
        tc_tensor *a = operand(k[i], false), *b = operand(k[j], false);
        tc_err err;
        tc_err_clear(&err);
        tc_btype ty;
        int rc = tc_binary_typing((tc_op)op, a, b, &ty, &err);
        TT_FREE(a, b);
        outcome s = run((tc_op)op, k[i], k[j], false), e = run((tc_op)op, k[i], k[j], true);
        const char *on = tc_op_name((tc_op)op);
        cases++;
        if (rc != 0) {   /* the typing's error is each path's */
          cr_expect(s.code == err.code && e.code == err.code, "%s(%s, %s): typing error %d, scalar %d, eager %d", on,
                    kname(k[i]), kname(k[j]), (int)err.code, (int)s.code, (int)e.code);
          continue;
        }
        /* an op the engine lacks for these dtypes fails on both paths alike */
        cr_expect(s.code == e.code, "%s(%s, %s): scalar path %d, eager path %d", on, kname(k[i]), kname(k[j]),
                  (int)s.code, (int)e.code);
        if (s.code != TC_OK || e.code != TC_OK) continue;
        typed++;
        cr_expect(s.dt == ty.odt && e.dt == ty.odt, "%s(%s, %s): typing %s, scalar %s, eager %s", on, kname(k[i]),
                  kname(k[j]), tc_dtype_name(ty.odt), tc_dtype_name(s.dt), tc_dtype_name(e.dt));
        cr_expect(s.weak == ty.weak && e.weak == ty.weak, "%s(%s, %s): weak: typing %d, scalar %d, eager %d", on,
                  kname(k[i]), kname(k[j]), ty.weak, s.weak, e.weak);
      }
  }
  /* the 26 binary elementwise ops (today) over 16 x 16 kinds, most of them computed */
  cr_expect(cases >= 26 * 16 * 16, "only %d cases", cases);
  cr_expect(typed >= cases / 2, "only %d of %d cases computed", typed, cases);
  printf("typing: %d cases, %d computed on both paths\n", cases, typed);
}
