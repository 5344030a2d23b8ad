/* Index normalisation and scatter combine expressions, shared by every
 * engine so that gather, scatter and their modes mean the same bits on each.
 * Plain C17 and CUDA C++ alike (TC_HD). */
#ifndef TC_BACKEND_INDEX_H
#define TC_BACKEND_INDEX_H
#include <stdbool.h>
#include <stdint.h>
#include "../src/half.h"

/* Mode values are those of tc_index_mode (src/tcalc.h). */
#define TC_IM_ERROR 0
#define TC_IM_CLIP 1
#define TC_IM_WRAP 2
#define TC_IM_FILL 3
#define TC_IM_DROP 4

/* Normalises index k against an axis of n > 0 elements. Returns false when
 * the element is outside [-n, n) in modes FILL and DROP (it is filled or
 * skipped). ERROR was checked over the whole index before the kernel ran;
 * it clamps like CLIP so that no kernel ever reads outside the axis. */
TC_HD bool tc_index_norm(int64_t *k, int64_t n, int mode) {
  int64_t v = *k;
  if (mode == TC_IM_WRAP) {
    v %= n;
    if (v < 0) v += n;
  } else if (mode == TC_IM_FILL || mode == TC_IM_DROP) {
    if (v < -n || v >= n) return false;
    if (v < 0) v += n;
  } else {
    if (v < 0) v += n;     /* v >= INT64_MIN and n > 0: no overflow */
    if (v < 0) v = 0;
    if (v >= n) v = n - 1;
  }
  *k = v;
  return true;
}

/* Scatter reductions other than "set" (which assigns the stored value):
 * X(RED, CLASS, EXPR) with a the current element and b the update in the
 * compute type T (f32 for bf16/f16, which round once per combine), and U
 * the wide unsigned type integers wrap through. max/min propagate NaN like
 * maximum/minimum; on bool they are or/and; add/mul have no bool row. */
#define TC_SCATTER_COMBINES(X, ...) \
  X(ADD, INT,  (T)((U)a + (U)b), __VA_ARGS__) \
  X(ADD, FLT,  a + b, __VA_ARGS__) \
  X(MUL, INT,  (T)((U)a * (U)b), __VA_ARGS__) \
  X(MUL, FLT,  a * b, __VA_ARGS__) \
  X(MAX, INT,  a > b ? a : b, __VA_ARGS__) \
  X(MAX, FLT,  a != a ? a : b != b ? b : a > b ? a : b, __VA_ARGS__) \
  X(MAX, BOOL, (T)(a | b), __VA_ARGS__) \
  X(MIN, INT,  a < b ? a : b, __VA_ARGS__) \
  X(MIN, FLT,  a != a ? a : b != b ? b : a < b ? a : b, __VA_ARGS__) \
  X(MIN, BOOL, (T)(a & b), __VA_ARGS__)
#endif
