/* The engine parity policy of src/tolerance.def: per-op tolerances and the
 * distance between two float results in units in the last place. */
#include <math.h>
#include "tcalc.h"
#include "reductions.def"

static const struct { int ulps32, ulps64; bool sum; } table[TC_OP_COUNT] = {
#define X(OP, u32, u64) [TC_OP_##OP] = {u32, u64, false},
  TC_TOLERANCES(X)
#undef X
#define SUM_EXACT false
#define SUM_SUM true
#define X(OP, empty, tol) [TC_OP_##OP] = {0, 0, SUM_##tol},
  TC_REDUCTIONS(X)
#undef X
};

tc_tolerance tc_op_tolerance(tc_op op, tc_dtype dt) {
  tc_tolerance t = {0, false};
  if (tc_dtype_class(dt) != TC_CLASS_FLT) return t;
  if (table[op].sum) { t.sum = true; return t; }   /* reductions (src/reductions.def) */
  switch (op) {   /* sums of products, added in engine-dependent orders */
  case TC_OP_MATMUL: case TC_OP_DOT: case TC_OP_TENSORDOT: case TC_OP_TRACE: case TC_OP_EINSUM:
    t.sum = true;
    return t;
  default: break;
  }
  if (dt == TC_DT_F64) t.ulps = table[op].ulps64;
  else if (dt == TC_DT_F32) t.ulps = table[op].ulps32;
  else t.ulps = table[op].ulps32 > 0;
  return t;
}

/* The value's position on a line where neighbouring floats of dt are one
 * apart (ordered, with -0 and +0 both at 0). v must be representable in dt. */
static int64_t ordinal(tc_dtype dt, double v) {
  int64_t mag;
  bool neg;
  switch (dt) {
  case TC_DT_F64: {
    uint64_t u = tc_f64_bits(v);
    neg = u >> 63;
    mag = (int64_t)(u & ~(1ull << 63));
    break;
  }
  case TC_DT_F32: {
    uint32_t u = tc_f32_bits((float)v);
    neg = u >> 31;
    mag = (int64_t)(u & 0x7fffffffu);
    break;
  }
  default: {
    uint16_t u = dt == TC_DT_F16 ? tc_f64_to_f16(v).bits : tc_f64_to_bf16(v).bits;
    neg = u >> 15;
    mag = (int64_t)(u & 0x7fffu);
    break;
  }
  }
  return neg ? -mag : mag;
}

int64_t tc_ulp_distance(tc_dtype dt, double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
  int64_t d = ordinal(dt, a) - ordinal(dt, b);
  return d < 0 ? -d : d;
}

double tc_unit_roundoff(tc_dtype dt) { return dt == TC_DT_F64 ? 0x1p-53 : 0x1p-24; }

bool tc_sum_close(tc_dtype dt, double a, double b, double abs_sum, int64_t n) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  double bound = (32 + log2((double)n + 1)) * tc_unit_roundoff(dt) * abs_sum;
  if (fabs(a - b) <= bound) return true;
  return tc_ulp_distance(dt, a, b) <= 1;
}
