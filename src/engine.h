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
};

typedef enum {
  TC_CALL_EW,      /* elementwise op: out[i] = op(in[0][i], ...), inputs broadcast to out */
  TC_CALL_CAST,    /* out = cast(in[0]) (also a strided copy when dtypes match) */
  TC_CALL_REDUCE,  /* out[k] = fold of the last `nred` dims of in[0] */
  TC_CALL_FIND,    /* found = first row-major index of in[0] matching pred, or -1 */
  TC_CALL_ROW      /* supports() only: does the engine claim the capability row
                      (op, dtype)? (the CUDA engine claims only GPU-verified rows) */
} tc_call_kind;

typedef enum { TC_PRED_ZERO, TC_PRED_NEG } tc_pred;

typedef struct tc_call {
  tc_call_kind kind;
  tc_op op;
  tc_dtype dtype;          /* the dtype the kernel computes in (its input dtype) */
  int nin;
  tc_tensor *in[3];
  tc_tensor *out;          /* contiguous, allocated by src/ */
  int nred;                /* REDUCE */
  tc_pred pred;            /* FIND */
  int64_t found;           /* FIND result */
} tc_call;

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
} tc_engine;

extern const tc_engine *const tc_engines[TC_ENGINE_COUNT];
extern const tc_engine tc_cpu_engine;
#ifdef TC_HAVE_CUDA
extern const tc_engine tc_cuda_engine;
#endif

/* A contiguous tensor on a given engine (tc_tensor_new uses the current one). */
tc_tensor *tc_tensor_new_on(tc_engine_id eid, tc_dtype dt, int ndim, const int64_t *shape, tc_err *err);

/* Pointer to the first element of a tensor's view. */
static inline char *tc_tensor_data(const tc_tensor *t) {
  return (char *)t->storage->data + (size_t)t->offset * tc_dtype_size(t->dtype);
}
#endif
