/* The engine vtable: what src/ asks of an engine (cpu, cuda). Engines
 * register in tc_engines[]; a NULL slot is an engine this build lacks.
 * src/ validates, types and shapes everything before calling run(), so an
 * engine only computes. */
#ifndef TC_ENGINE_H
#define TC_ENGINE_H
#include "tcalc.h"

struct tc_storage {
  int refcnt;
  tc_engine_id engine;
  void *data;
  size_t nbytes;
  void *map;        /* a read-only file mapping holding data (load(path, mmap=true)), or NULL */
  size_t map_len;
  bool heap;        /* data is a block from malloc the storage took (tc_tensor_adopt), freed with free(),
                       not the engine's memory */
};

/* What src/ asks an engine to run: TC_CALL_<KIND> for each row of
 * TC_ENGINE_CALLS (src/ops.def, which also says what each computes). */
typedef enum {
#define TC_X_(K, ...) TC_CALL_##K,
  TC_ENGINE_CALLS(TC_X_, ~)
#undef TC_X_
} tc_call_kind;

typedef enum { TC_PRED_ZERO, TC_PRED_NEG, TC_PRED_RANGE } tc_pred;

typedef struct tc_call {
  tc_call_kind kind;
  tc_op op;
  tc_dtype dtype;          /* the dtype the kernel computes in (its input dtype) */
  int nin;
  tc_tensor *in[3];
  tc_tensor *out;          /* contiguous, allocated by src/ */
  /* EW, CAST, REDUCE, MATMUL, SCAN: the overflow policy (SPEC 13) that
   * judges this call's integer results, set by src/ where the session's
   * policy judges the op (src/overflow.c); TC_OVERFLOW_WRAP (0): the
   * kernel's wrapping bits. An engine that judges nothing says it does not
   * support a call with it set, and src/ runs that call on the CPU engine. */
  tc_overflow overflow;
  int axis;                /* SCAN: the axis of the original the last dim is (for an overflow error's index) */
  int nred;                /* REDUCE */
  tc_pred pred;            /* FIND */
  int64_t found;           /* FIND result */
  int64_t lo, hi;          /* FIND with TC_PRED_RANGE: matches an element outside [lo, hi] */
  int64_t axis_stride, axis_len;   /* GATHER, SCATTER */
  tc_index_mode mode;              /* GATHER (ERROR, CLIP, WRAP, FILL), SCATTER (ERROR, CLIP, DROP) */
  tc_scatter_red red;              /* SCATTER */
  int64_t k;                       /* TRI: the diagonal */
  int64_t istart, istep;           /* RANGE, integer dtypes */
  double fstart, fstep, fstop;     /* RANGE, float dtypes */
  bool endpoint;                   /* RANGE */
  bool descending, right;          /* SORT: descending order; SEARCHSORTED: side right */
  /* SORT, ARGSORT: when nkth > 0, the caller reads only positions kth[0..nkth)
   * (ascending, distinct) of each row: each must hold what the stable sort
   * puts there, the other positions some elements (positions) of the row.
   * An engine may sort the rows whole instead. */
  const int64_t *kth;
  int64_t nkth;
  tc_dist dist;                    /* RANDOM */
  uint64_t seed;                   /* RANDOM */
  int64_t rlo;                     /* RANDOM INT: the low end */
  uint64_t rrange;                 /* RANDOM INT: hi - lo, at least 1 */
} tc_call;

/* out = a OP b over len elements, a and b sa and sb elements apart (0: one
 * element for all), all of one dtype (out: bool for a comparison). */
typedef void (*tc_scalar_fn)(int64_t len, char *out, const char *a, int64_t sa, const char *b, int64_t sb);

/* out = a converted to another dtype, len elements, a sa elements apart. */
typedef void (*tc_cast_fn)(int64_t len, char *out, const char *a, int64_t sa);

typedef struct tc_engine {
  const char *name;
  int (*init)(tc_err *err);                 /* 0 when usable, else engine_unavailable */
  void *(*alloc)(size_t nbytes);            /* NULL on failure */
  void (*release)(void *p, size_t nbytes);
  int (*upload)(void *dst, const void *src, size_t nbytes, tc_err *err);
  int (*download)(void *dst, const void *src, size_t nbytes, tc_err *err);
  bool (*supports)(const tc_call *call);    /* kind, op, dtype (and out dtype) */
  int (*run)(tc_call *call, tc_err *err);
  int (*sync)(tc_err *err);
  /* Optional: why supports(call) is false, when the engine can say more
   * than "not supported" (the cuda engine: its plugin or cuBLAS is
   * missing); NULL otherwise. */
  const char *(*why_not)(const tc_call *call);
  /* Optional, an engine whose memory the host reads (the CPU): the kernel
   * of a binary or comparison op on dtype dt, or NULL. The scalar short
   * path (api.c) calls it on one element, as run() would for that call. */
  tc_scalar_fn (*scalar)(tc_op op, tc_dtype dt);
  /* Optional, beside scalar: the cast kernel from one dtype to another
   * that run() would convert an operand of another dtype with, or NULL. */
  tc_cast_fn (*scalar_cast)(tc_dtype from, tc_dtype to);
} tc_engine;

extern const tc_engine *const tc_engines[TC_ENGINE_COUNT];

/* An engine's vtable, from the functions its directory names <id>_init,
 * _alloc, _release, _supports, _run and _sync; the transfers (and an
 * optional why_not) are given as designated initializers. */
#define TC_ENGINE_DEFINE(id, ...)                                                          \
  const tc_engine tc_##id##_engine = {.name = #id, .init = id##_init, .alloc = id##_alloc,   \
                                      .release = id##_release, .supports = id##_supports,    \
                                      .run = id##_run, .sync = id##_sync, __VA_ARGS__}

/* TC_IF_BUILT(M, a, b): a when the macro M is defined as 1, else b (through
 * tcalc.h's TC_IF_PROBE). */
#define TC_ALWAYS 1
#define TC_IF_BUILT(M, a, b) TC_IF_BUILT_(M, a, b)
#define TC_IF_BUILT_(M, a, b) TC_IF_PROBE(TC_BUILT_PROBE_##M)(a, b)
#define TC_BUILT_PROBE_1 ~, 1
#define TC_X_(E, name, built) TC_IF_BUILT(built, extern const tc_engine tc_##name##_engine;, )
TC_ENGINES(TC_X_)
#undef TC_X_

/* A contiguous tensor on a given engine (tc_tensor_new uses the current one). */
tc_tensor *tc_tensor_new_on(tc_engine_id eid, tc_dtype dt, int ndim, const int64_t *shape, tc_err *err);

/* The iteration space an elementwise kernel walks, for operand 0 (the
 * output, its shape the space) and the others viewed with its shape: size-1
 * dims dropped and adjacent dims merged where every operand allows, so a
 * contiguous op becomes one long row. Fills shape and strides[k] (in
 * elements) and returns the dims (at least 1). Every engine plans so. */
int tc_plan_dims(int nop, const tc_tensor *const *ops, int64_t *shape, int64_t (*strides)[TC_MAX_DIMS]);

/* A TC_CALL_MATMUL's matrix geometry (the last two dims; batch dims
 * before them, nb of them) into an engine's plan p with fields M, N, K and
 * the row and column strides ars, acs (of A) and brs, bcs (of B). */
#define TC_MM_GEOMETRY(p, A, B, C, nb)                                                            \
  ((p)->M = (C)->shape[nb], (p)->N = (C)->shape[(nb) + 1], (p)->K = (A)->shape[(nb) + 1],       \
   (p)->ars = (A)->strides[nb], (p)->acs = (A)->strides[(nb) + 1], (p)->brs = (B)->strides[nb], \
   (p)->bcs = (B)->strides[(nb) + 1])

/* Sets t's strides to row-major (saturating for empty tensors). */
void tc_set_contiguous_strides(tc_tensor *t);

/* Pointer to the first element of a tensor's view. */
static inline char *tc_tensor_data(const tc_tensor *t) {
  return (char *)t->storage->data + (size_t)t->offset * tc_dtype_size(t->dtype);
}
#endif
