/* Internals of the CPU engine: the iteration plan every kernel family uses. */
#ifndef TC_CPU_H
#define TC_CPU_H
#include "../../src/engine.h"

#define CPU_MAX_OPS 4
/* Elements per kernel call: long enough to amortise the call, short enough
 * that an interrupt is noticed quickly. */
#define CPU_CHUNK ((int64_t)1 << 16)

/* Operand 0 is the (contiguous) output; the rest are inputs viewed with the
 * output's shape. Size-1 dims are dropped and adjacent dims merged where
 * every operand allows, so a contiguous op becomes one long row. */
typedef struct cpu_plan {
  int ndim, nop;
  int64_t shape[TC_MAX_DIMS];
  int64_t strides[CPU_MAX_OPS][TC_MAX_DIMS];
  char *base[CPU_MAX_OPS];
  size_t esize[CPU_MAX_OPS];
} cpu_plan;

/* One call per row segment: pos is the row-major index of its first element
 * in operand 0, n elements, pointers to each operand's first element, and
 * each operand's stride (in elements) along the row. Nonzero stops the run. */
typedef int (*cpu_row_fn)(void *ctx, int64_t pos, int64_t n, char *const *ptrs, const int64_t *strides);

void cpu_plan_init(cpu_plan *p, const tc_tensor *out, int nin, tc_tensor *const *in);
/* Runs rows covering operand-0 elements [lo, hi); -1 if interrupted, 1 if fn stopped it. */
int cpu_plan_run(const cpu_plan *p, int64_t lo, int64_t hi, cpu_row_fn fn, void *ctx);

int cpu_run_ew(tc_call *call, tc_err *err);
int cpu_run_cast(tc_call *call, tc_err *err);
int cpu_run_reduce(tc_call *call, tc_err *err);
int cpu_run_find(tc_call *call, tc_err *err);
bool cpu_supports_ew(const tc_call *call);
bool cpu_supports_cast(const tc_call *call);
bool cpu_supports_reduce(const tc_call *call);
/* copy, gather, scatter, nonzero, tri, range, random (index.c) */
int cpu_run_index(tc_call *call, tc_err *err);
bool cpu_supports_index(const tc_call *call);
int cpu_interrupted(tc_err *err);
#endif
