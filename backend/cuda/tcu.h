/* The seam between the CUDA engine's C side (cuda.c, compiled into tcalc:
 * the vtable, plans, capability rows) and its CUDA side (*.cu: kernels, the
 * runtime, cuBLAS), which is built as a plugin, libtcalc-cuda.so, that
 * cuda.c loads with dlopen when the engine is first asked for. The plugin
 * hands over one table of functions, tcu_api, and exports nothing else.
 * Plain C types only, so that src/ and the C side never see a CUDA type.
 * Every function returning int returns 0 or a CUDA runtime error number
 * (strerror() names it; TCU_E_BLAS + n is cuBLAS status n). */
#ifndef TC_TCU_H
#define TC_TCU_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../src/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TCU_MAX_OPS 4
#define TCU_THREADS 256     /* threads per block for every kernel */

/* An elementwise iteration plan: operand 0 is the output, the others are
 * inputs viewed with its shape; dims of size 1 are dropped and adjacent
 * dims merged where every operand allows. Strides are in bytes. ndim == 1
 * takes the fast 1-D kernels. */
typedef struct tcu_plan {
  int ndim, nop;
  int64_t n;
  int64_t shape[TC_MAX_DIMS];
  int64_t bstride[TCU_MAX_OPS][TC_MAX_DIMS];
  char *base[TCU_MAX_OPS];
  int64_t arg[4];      /* per kernel family: FIND range (lo, hi); GATHER (axis byte
                          stride, axis length, mode); TRI (rows, cols, k, lower);
                          RANGE (start, step); RANDOM (seed, lo, range, dist) */
  double farg[3];      /* RANGE of floats: start, step, stop */
} tcu_plan;

/* A scatter plan: the selection's dims split into those where the output
 * view has stride 0 (the index dims: updates there may hit the same
 * element, so one thread walks them in row-major order) and the others
 * (distinct elements: one thread each). Operands: 0 the output view, 1 the
 * i64 index, 2 the updates; byte strides. */
typedef struct tcu_splan {
  int pdim, sdim;
  int64_t npar, nseq;
  int64_t pshape[TC_MAX_DIMS], sshape[TC_MAX_DIMS];
  int64_t pstride[3][TC_MAX_DIMS], sstride[3][TC_MAX_DIMS];
  char *base[3];
  int64_t ast, len;    /* the axis: byte stride and length */
  int mode;
} tcu_splan;

/* A reduction plan: m outputs (rows), each folding n input elements. The
 * input offset of element j of row r is koff(r) + roff(j), each from its
 * own (coalesced) dims; strides in bytes. */
typedef struct tcu_rplan {
  int64_t m, n;
  int kdim, rdim;
  int64_t kshape[TC_MAX_DIMS], kstride[TC_MAX_DIMS];
  int64_t rshape[TC_MAX_DIMS], rstride[TC_MAX_DIMS];
  const char *in;
  char *out;          /* contiguous, m elements */
  char *part;         /* split strategy: m * parts accumulators */
  int64_t parts, chunk;
} tcu_rplan;

/* One stamped kernel: device entry points (1-D and N-D plans) and the host
 * emulation of the same element code (tests only). */
typedef struct tcu_entry {
  const void *k1, *kn;
  void (*host)(const tcu_plan *p);
} tcu_entry;

/* One stamped scatter kernel and its emulation. */
typedef struct tcu_sentry {
  const void *k;
  void (*host)(const tcu_splan *p);
} tcu_sentry;

/* One stamped reduction: the kernels of each strategy and its emulation. */
typedef struct tcu_rentry {
  const void *seq, *block, *split1, *split2;
  void (*host)(const tcu_rplan *p, int strategy);
  size_t acc_size;    /* bytes per partial accumulator */
  bool sequential;    /* only the one-thread-per-row strategy keeps the CPU's result */
} tcu_rentry;

/* A matrix-product plan (TC_CALL_MATMUL): nbatch products C_b = A_b @ B_b
 * with A_b [M, K], B_b [K, N] at any element strides and C contiguous
 * ([nbatch, M, N]). Product b's operands start at a + offa(b), b + offb(b),
 * from the batch dims (size-1 dims dropped, adjacent ones merged; stride 0
 * where an operand is broadcast). Strides in elements, not bytes. */
typedef struct tcu_mplan {
  int64_t M, N, K;
  int64_t ars, acs, brs, bcs;
  int64_t nbatch;
  int nbd;
  int64_t bshape[TC_MAX_DIMS];
  int64_t bstride[2][TC_MAX_DIMS];   /* [0] A, [1] B */
  const char *a, *b;
  char *c;
} tcu_mplan;

/* One stamped matrix-product kernel (integers, bool, and the floats where
 * cuBLAS is not used) and its host emulation. */
typedef struct tcu_mentry {
  const void *k;
  void (*host)(const tcu_mplan *p);
  int dt;
  size_t esize;
} tcu_mentry;

/* A call the plugin takes whole (a PLUGIN row of TC_ENGINE_CALLS in
 * src/ops.def; backend/cuda/<plugin>.cu reads it): the call, and what the
 * plugin cannot work out without tcalc's own functions: each operand's
 * first element (device memory) and element count. Operand 0 is the
 * output, 1 + i the call's in[i]; an absent one is NULL and 0. */
typedef struct tcu_call {
  tc_call *c;
  char *data[4];
  int64_t numel[4];
} tcu_call;

/* A linear algebra call (TC_CALL_LINALG; backend/cuda/linalg.cu) on a
 * contiguous stack a [nb, m, n] (and b [nb, n, k] for SOLVE), both scratch,
 * into out, as engine.h describes; rcond for PINV. */
typedef struct tcu_lplan {
  int op, dt;
  int64_t nb, m, n, k;
  char *a, *b, *out;
  double rcond;
} tcu_lplan;

/* The pre-check scans' predicates, as tc_pred in engine.h (RANGE: an
 * element outside [arg[0], arg[1]]). */
enum { TCU_PRED_ZERO = 0, TCU_PRED_NEG = 1, TCU_PRED_RANGE = 2 };

#define TCU_E_BLAS 100000   /* status TCU_E_BLAS + n: cuBLAS failed with status n */
#define TCU_E_SOLVER 200000 /* status TCU_E_SOLVER + n: cuSOLVER failed with status n */

/* The plugin's table (one exported data symbol, TCU_API_SYMBOL). abi and
 * the sizes let tcalc refuse a plugin from another build. */
#define TCU_ABI 3
#define TCU_API_SYMBOL "tcu_api_v1"
/* The plugin's functions: X(return type, name, parameters), each the
 * plugin's tcu_<name> and the table's field <name>. The table's struct, the
 * prototypes and the exported initializer (runtime.cu) are generated from
 * this one list, so they cannot disagree on the order. */
#define TCU_API(X) \
  /* the runtime */ \
  X(int, init, (char *why, size_t n))            /* 0 when a device is usable; else why says why */ \
  X(void, set_emulate, (bool on))                /* host emulation (tests): see tc_cuda_test_emulate */ \
  X(void *, malloc, (size_t n))                  /* NULL on failure */ \
  X(void, free, (void *p, size_t n)) \
  X(int, h2d, (void *dst, const void *src, size_t n)) \
  X(int, d2h, (void *dst, const void *src, size_t n)) \
  X(int, sync, (void)) \
  X(const char *, strerror, (int status)) \
  X(bool, is_oom, (int status)) \
  /* kernel tables (NULL: no kernel) and their launches */ \
  X(const tcu_entry *, bin_entry, (int op, int dt)) \
  X(const tcu_entry *, cmp_entry, (int op, int dt)) \
  X(const tcu_entry *, un_entry, (int op, int dt)) \
  X(const tcu_entry *, pred_entry, (int op, int dt)) \
  X(const tcu_entry *, sel_entry, (int op, int dt)) \
  X(const tcu_entry *, cast_entry, (int from, int to)) \
  X(const tcu_rentry *, red_entry, (int op, int dt)) \
  X(const tcu_entry *, find_entry, (int dt, int pred))       /* the pre-check scan for integer dtype dt */ \
  X(const tcu_entry *, copy_entry, (size_t esize))           /* data movement (index.cu): by element size, */ \
  X(const tcu_entry *, gather_entry, (size_t esize))         /* dtype, tc_dist or (tc_scatter_red, dtype) */ \
  X(const tcu_entry *, tri_entry, (size_t esize)) \
  X(const tcu_entry *, range_entry, (int dt, bool endpoint)) \
  X(const tcu_entry *, random_entry, (int dist)) \
  X(const tcu_sentry *, scatter_entry, (int red, int dt)) \
  X(const tcu_mentry *, mm_entry, (int dt))                  /* the plain matmul kernel by dtype */ \
  X(int, run, (const tcu_entry *e, const tcu_plan *p))       /* an elementwise entry over a plan, waited for */ \
  X(int, find, (const tcu_entry *e, const tcu_plan *p, int64_t *found))   /* *found: first match or -1 */ \
  X(int, reduce, (const tcu_rentry *e, tcu_rplan *p))        /* strategy chosen from (m, n) */ \
  X(int, scatter, (const tcu_sentry *e, const tcu_splan *p)) \
  /* row-major positions of the true elements of the bool plan p (nop 1) into out (i64, count of \
   * them); *mismatch when the mask holds another count */ \
  X(int, nonzero, (const tcu_plan *p, int64_t *out, int64_t count, bool *mismatch)) \
  X(int, matmul, (const tcu_mentry *e, const tcu_mplan *p))  /* cuBLAS (f32, f64 on a device) or the kernel */ \
  /* cuBLAS (f32/f64 products): loaded on first ask; 0 when usable, else why says why; its name (path) */ \
  X(int, blas_load, (char *why, size_t n)) \
  X(const char *, blas_name, (void)) \
  /* the calls the plugin takes whole (runtime.cu sends each to its PLUGIN row's functions): \
   * whether there is a kernel, and a run, waited for */ \
  X(bool, call_ok, (const tc_call *c)) \
  X(int, call_run, (const tcu_call *a)) \
  /* linear algebra: whether the plugin can run (op, dt) (f32/f64 need cuSOLVER, which the emulation \
   * cannot run; the integer det is a kernel); a run, *found = the first singular (or overflowing) \
   * matrix or -1; cuSOLVER loaded on first ask (0 when usable, else why says why) */ \
  X(bool, linalg_ok, (int op, int dt)) \
  X(int, linalg, (const tcu_lplan *p, int64_t *found)) \
  X(int, solver_load, (char *why, size_t n))

typedef struct tcu_api {
  int abi;
  size_t api_size, plan_size, splan_size, rplan_size, mplan_size, lplan_size, call_size, tcall_size;
#define TCU_FIELD_(ret, name, params) ret (*name) params;
  TCU_API(TCU_FIELD_)
#undef TCU_FIELD_
} tcu_api;

/* ---- inside the plugin (the .cu files) ---- */
#ifdef __CUDACC__
/* The functions of TCU_API, and the emulation switch. */
#define TCU_PROTO_(ret, name, params) ret tcu_##name params;
TCU_API(TCU_PROTO_)
#undef TCU_PROTO_
/* The PLUGIN rows' functions (backend/cuda/<plugin>.cu). */
#define TCU_CALL_PROTO_HOST(f)
#define TCU_CALL_PROTO_PLUGIN(f) bool tcu_##f##_ok(const tc_call *c); int tcu_##f##_run(const tcu_call *a);
#define TCU_X_(K, cpu, how, f, ...) TCU_CALL_PROTO_##how(f)
TC_ENGINE_CALLS(TCU_X_, ~)
#undef TCU_X_
#undef TCU_CALL_PROTO_HOST
#undef TCU_CALL_PROTO_PLUGIN
bool tcu_emulating(void);
#endif /* __CUDACC__ */

/* ---- test hooks in cuda.c (the parity suite, unit tests; never reached
 * from tcalc itself) ---- */
/* Runs every kernel's host emulation on host memory instead of a device, so
 * the engine's plans, tables and kernel bodies can be checked on a machine
 * without a GPU (float products take the emulated plain kernel, not
 * cuBLAS). Set before the engine is first used. */
void tc_cuda_test_emulate(bool on);
/* Lets the engine claim every row it has kernels for, verified or not. */
void tc_cuda_test_unverified(bool on);
/* The cuBLAS the engine uses (loading it), or why there is none. */
const char *tc_cuda_test_blas(void);

#ifdef __cplusplus
}
#endif
#endif
