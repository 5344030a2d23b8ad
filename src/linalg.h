/* Internal to src/: capability rules of the matrix-product ops. */
#ifndef TC_LINALG_H
#define TC_LINALG_H
#include "tcalc.h"
/* a @ b, dot(a, b), outer(a, b) through tc_binary (the evaluator's infix path). */
tc_tensor *tc_linalg_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err);
#endif
