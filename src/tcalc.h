/* The public API of the tensor library: dtypes, ops, errors, tensors, and
 * the operations the language calls. Engine-independent; no parsing or
 * printing here. */
#ifndef TCALC_H
#define TCALC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "half.h"
#include "dtypes.def"
#include "ops.def"
#include "errors.def"
#include "tolerance.def"

#define TC_MAX_DIMS 16
#define TC_VERSION "0.1.0"

typedef enum {
#define TC_X_(E, ...) TC_DT_##E,
  TC_DTYPES(TC_X_, _)
#undef TC_X_
  TC_DT_COUNT,
  TC_DT_NONE = TC_DT_COUNT  /* tc_promote: no common dtype (u64 with a signed integer) */
} tc_dtype;

typedef enum { TC_CLASS_BOOL, TC_CLASS_INT, TC_CLASS_FLT } tc_class;

typedef enum {
#define TC_X_(E, ...) TC_OP_##E,
  TC_OPS(TC_X_, _)
#undef TC_X_
  TC_OP_COUNT
} tc_op;

/* The op table's columns (src/ops.def). */
typedef enum {
#define TC_X_(F, ...) TC_FAM_##F,
  TC_FAMILIES(TC_X_)
#undef TC_X_
} tc_family;

typedef enum {
#define TC_X_(R, ...) TC_RULE_##R,
  TC_RULES(TC_X_)
#undef TC_X_
} tc_rule;

typedef enum { TC_ASSOC_NONE, TC_ASSOC_LEFT, TC_ASSOC_RIGHT, TC_ASSOC_NONASSOC, TC_ASSOC_PREFIX } tc_assoc;

typedef enum { TC_CHECK_NONE, TC_CHECK_ZERO, TC_CHECK_NEGEXP, TC_CHECK_NEGSHIFT } tc_check;

typedef enum {
  TC_OK = 0,
#define TC_X_(E, ...) TC_E_##E,
  TC_ERRORS(TC_X_, _)
#undef TC_X_
  TC_E_COUNT
} tc_code;

/* The engines, in the order they are registered: X(ENUM, name, built).
 * An engine is a directory backend/<name>/ that defines tc_<name>_engine
 * (src/engine.h), built when the macro `built` is 1 (the Makefile defines
 * TC_HAVE_CUDA with CUDA=1); a row for an engine the build lacks is a NULL
 * slot in tc_engines[], so `--caps` says "not in this build". */
#define TC_ENGINES(X) \
  X(CPU,  cpu,  TC_ALWAYS) \
  X(CUDA, cuda, TC_HAVE_CUDA)

typedef enum {
#define TC_X_(E, ...) TC_ENGINE_##E,
  TC_ENGINES(TC_X_)
#undef TC_X_
  TC_ENGINE_COUNT
} tc_engine_id;

/* One error, threaded through every call that can fail; the first wins.
 * Fields that do not apply are -1 (op, dtype, engine) or 0 (index_ndim,
 * has_index false). The evaluator adds the source span. */
typedef struct tc_err {
  tc_code code;
  int op;              /* tc_op, or -1 */
  int dtype;           /* tc_dtype, or -1 */
  int engine;          /* tc_engine_id, or -1 */
  bool has_index;
  int index_ndim;
  int64_t index[TC_MAX_DIMS];
  int32_t start, end;  /* byte offsets in the statement source, -1 if unknown */
  char msg[320];       /* the detail, without the op: tc_err_text composes the message */
} tc_err;

typedef struct tc_storage tc_storage;

/* A tensor is a refcounted view: dtype, shape, strides (in elements),
 * offset (in elements) into storage owned by an engine. `weak` marks a
 * weak scalar (SPEC 3.2): an untyped literal or a value computed only
 * from such literals. */
typedef struct tc_tensor {
  int refcnt;
  tc_dtype dtype;
  bool weak;
  int ndim;
  int64_t shape[TC_MAX_DIMS];
  int64_t strides[TC_MAX_DIMS];
  int64_t offset;
  tc_storage *storage;
} tc_tensor;

/* ---- tables ---- */
const char *tc_dtype_name(tc_dtype dt);
int tc_dtype_from_name(const char *name);       /* -1 if none */
/* bytes per element; inline: every op on every tensor asks */
extern const unsigned char tc_dtype_sizes[];
static inline size_t tc_dtype_size(tc_dtype dt) { return tc_dtype_sizes[dt]; }
tc_class tc_dtype_class(tc_dtype dt);
int tc_dtype_bits(tc_dtype dt);
/* The values of integer dtype dt as i64: [MIN, MAX] (u64's capped at the i64 maximum). */
void tc_int_range(tc_dtype dt, int64_t *lo, int64_t *hi);
bool tc_dtype_is_unsigned(tc_dtype dt);
/* One stored element at p: as a double (exact, but for i64 beyond 2^53),
 * and, of bool and integer dtypes, as an int64 (exact; 0 for floats). */
double tc_dtype_load_f64(tc_dtype dt, const void *p);
int64_t tc_dtype_load_i64(tc_dtype dt, const void *p);
const char *tc_op_name(tc_op op);
const char *tc_op_symbol(tc_op op);
tc_family tc_op_family(tc_op op);
tc_rule tc_op_rule(tc_op op);
const char *tc_op_group(tc_op op);               /* :help's heading */
int tc_op_bp(tc_op op);
tc_assoc tc_op_assoc(tc_op op);
/* The tensor operands its kernel takes (TC_FAMILIES), and whether it is
 * elementwise (a kernel from backend/ew.def). */
int tc_op_arity(tc_op op);
bool tc_op_is_ew(tc_op op);
/* The dtype op's kernel computes in for operands of dtype dt, the dtype of
 * its result, and whether a result of weak operands stays weak (TC_RULES). */
tc_dtype tc_op_kernel_dtype(tc_op op, tc_dtype dt);
tc_dtype tc_op_result_dtype(tc_op op, tc_dtype kdt);
bool tc_op_keeps_weak(tc_op op);
tc_check tc_op_check(tc_op op);
const char *tc_op_signature(tc_op op);            /* as :help shows it */
const char *tc_op_params(tc_op op);               /* with types (src/ops.def) */
const char *tc_op_doc(tc_op op);
int tc_op_from_name(const char *name);          /* ops and aliases; -1 if none */
/* When op is a nan form (TC_NAN_FORMS), its plain form, and in *fill what
 * it reads a NaN as (TC_NAN_SKIP: it skips them); else -1. */
int tc_op_nan_form(tc_op op, double *fill);
const char *tc_code_name(tc_code code);
int tc_code_exit(tc_code code);
const char *tc_code_message(tc_code code);   /* errors.def's default message */
const char *tc_engine_name(tc_engine_id id);
int tc_engine_from_name(const char *name);      /* -1 if none */

/* ---- errors ---- */
/* The message printers show, at most TC_ERR_TEXT bytes with its end into
 * buf: "op: detail" when the error names an op, else the detail; the
 * detail is errors.def's default for the code where none was written. */
#define TC_ERR_TEXT 320
const char *tc_err_text(const tc_err *e, char *buf);
void tc_err_clear(tc_err *err);
/* Sets err (unless an error is already set) and returns -1. */
int tc_err_set(tc_err *err, tc_code code, int op, int dtype, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void tc_err_set_index(tc_err *err, int ndim, const int64_t *index);
/* Writes "[2, 3]" for a shape or index into buf. */
void tc_format_dims(char *buf, size_t n, int ndim, const int64_t *dims);

/* ---- session context ---- */
void tc_set_engine(tc_engine_id id);
tc_engine_id tc_get_engine(void);
/* 0 if the engine can be used now; otherwise fills err (engine_unavailable). */
int tc_engine_check(tc_engine_id id, tc_err *err);
/* Whether this build has the engine at all (TC_ENGINES). */
bool tc_engine_built(tc_engine_id id);
void tc_set_max_memory(uint64_t bytes);
uint64_t tc_get_max_memory(void);
uint64_t tc_mem_in_use(void);
uint64_t tc_physical_memory(void);
/* Set asynchronously (SIGINT); kernels poll it between blocks. */
extern volatile int tc_interrupt_flag;
void tc_interrupt_clear(void);
/* What a SIGINT handler calls (async-signal-safe): raises the flag, or,
 * while an interrupt is held, keeps it pending until tc_interrupt_release.
 * tc_interrupt_hold holds interrupts off so that a write in place is made
 * whole, never half (false, nothing held, when the flag is up already). */
void tc_interrupt_signal(void);
bool tc_interrupt_hold(void);
void tc_interrupt_release(void);

/* ---- tensors ---- */
/* Size arithmetic that cannot overflow silently: returns false on overflow. */
bool tc_shape_numel(int ndim, const int64_t *shape, int64_t *numel);
int64_t tc_numel(const tc_tensor *t);
tc_tensor *tc_tensor_new(tc_dtype dt, int ndim, const int64_t *shape, tc_err *err);
/* A tensor with the given host data copied in (contiguous, row-major). */
tc_tensor *tc_tensor_from_host(tc_dtype dt, int ndim, const int64_t *shape,
                               const void *data, tc_err *err);
/* A cpu tensor whose storage is data itself, a block from malloc of at
 * least the tensor's bytes (contiguous, row-major), with no copy: the
 * tensor owns it from then on and frees it with free() with its last
 * reference. It counts against the memory limit as any tensor does. On
 * failure (NULL) data stays the caller's. */
tc_tensor *tc_tensor_adopt(tc_dtype dt, int ndim, const int64_t *shape, void *data, tc_err *err);
/* Copies host data (numel * size bytes, row-major) into t, a tensor fresh
 * from tc_tensor_new (contiguous); bools are stored as 0 or 1. */
int tc_tensor_write(tc_tensor *t, const void *data, tc_err *err);
/* The elements of a contiguous tensor when they are in host memory (the
 * cpu engine), to read in place; NULL on other engines. */
const void *tc_tensor_host_data(const tc_tensor *t);
tc_tensor *tc_scalar_i64(int64_t v, bool weak, tc_err *err);
tc_tensor *tc_scalar_f64(double v, bool weak, tc_err *err);
tc_tensor *tc_scalar_bool(bool v, tc_err *err);
tc_tensor *tc_tensor_ref(tc_tensor *t);
void tc_tensor_free(tc_tensor *t);                /* drops one reference */
bool tc_is_contiguous(const tc_tensor *t);
tc_engine_id tc_tensor_engine(const tc_tensor *t);
/* Copies the elements, in row-major order, into host memory (numel * size bytes). */
int tc_tensor_to_host(tc_tensor *t, void *dst, tc_err *err);
/* A contiguous copy, or a new reference when already contiguous at offset 0. */
tc_tensor *tc_contiguous(tc_tensor *t, tc_err *err);
/* The same tensor moved (copied) to another engine. */
tc_tensor *tc_to_engine(tc_tensor *t, tc_engine_id id, tc_err *err);
/* Views (no copy). */
tc_tensor *tc_view_broadcast(tc_tensor *t, int ndim, const int64_t *shape, tc_err *err);
/* perm must list each axis once (invalid_axis otherwise). */
tc_tensor *tc_view_permute(tc_tensor *t, const int *perm, tc_err *err);
/* Broadcast shape of two shapes (NumPy rules); shape_mismatch names both. */
int tc_broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb,
                        int *nout, int64_t *out, tc_op op, tc_err *err);

/* ---- typing ---- */
/* The integer overflow policy (SPEC 13): wrap (default), check or saturate. */
typedef enum { TC_OVERFLOW_WRAP, TC_OVERFLOW_CHECK, TC_OVERFLOW_SATURATE } tc_overflow;
void tc_set_overflow(tc_overflow p);
tc_overflow tc_get_overflow(void);
const char *tc_overflow_name(tc_overflow p);
int tc_overflow_from_name(const char *s);   /* -1 when unknown */
/* A cast as the user asks for it: under check or saturate a value the
 * target integer dtype cannot hold (or a NaN) is integer_overflow or
 * clamped; tc_cast itself always follows SPEC 3.3. */
tc_tensor *tc_cast_user(tc_tensor *x, tc_dtype dt, tc_err *err);
/* Other systems' semantics (SPEC 19): tcalc's own (the default), NumPy 2,
 * JAX (64-bit), PyTorch 2 on CPU, tenferro. */
typedef enum { TC_SEM_TCALC, TC_SEM_NUMPY, TC_SEM_JAX, TC_SEM_TORCH, TC_SEM_TENFERRO, TC_SEM_COUNT } tc_semantics;
#define TC_SEMANTICS_LIST "tcalc, numpy, jax, torch or tenferro"
void tc_set_semantics(tc_semantics s);
tc_semantics tc_get_semantics(void);
const char *tc_semantics_name(tc_semantics s);
int tc_semantics_from_name(const char *s);   /* -1 when unknown */
/* tcalc's own semantics until tc_semantics_resume(the value returned):
 * what a function built from ops computes inside is tcalc's (SPEC 19 names
 * the operators, literals, reductions, indexing and matmul, not them). */
tc_semantics tc_semantics_suspend(void);
void tc_semantics_resume(tc_semantics s);
/* The float that integers divide in and float constructors give: f64 (f32 under torch). */
tc_dtype tc_default_float(void);
/* How the semantics in force reads an index out of range in x[i] and
 * x[i] = v: an error (tcalc, numpy, torch); jax: negatives count from the
 * end, then reads clamp and writes out of range are dropped; tenferro:
 * clamped to [0, n-1], negatives too (x[-1] is the first element). */
typedef enum { TC_SEM_INDEX_ERROR, TC_SEM_INDEX_JAX, TC_SEM_INDEX_CLAMP } tc_sem_index;
tc_sem_index tc_semantics_index(void);
/* A parameter's default under the semantics in force, for a default the
 * signature shows as def (without quotes): dtype "f64" is the default
 * float; take's mode "error" is jax's "fill" and tenferro's "clip";
 * scatter's mode is jax's "drop" and tenferro's "clip", its reduce "set"
 * tenferro's "add". Other defaults are def. */
const char *tc_semantics_default(tc_op op, const char *param, const char *def);
/* Whether the semantics in force has dtype dt; tc_semantics_lacks is -1
 * with dtype_unsupported naming the semantics for op where it has not,
 * else 0 (torch has no u16, u32, u64; numpy no bf16; tenferro only i32,
 * i64, f32, f64). */
bool tc_semantics_has(tc_dtype dt);
int tc_semantics_lacks(tc_dtype dt, int op, tc_err *err);
/* The dtype sums and products of dt accumulate in and give: i64 for bool;
 * under numpy and jax i64 or u64 for integers, under torch i64; else dt. */
tc_dtype tc_sum_dtype(tc_dtype dt);
/* The op an operator symbol means under the semantics in force (/ is
 * true_divide and % mod in numpy, jax and torch; tenferro has no //): 0
 * with *out set, or -1 with err (op_unsupported). Named functions (div,
 * rem, ...) keep their meaning. */
int tc_operator_op(tc_op op, tc_op *out, tc_err *err);
/* NumPy's RuntimeWarnings the operations since the last clear gave, in
 * order, without repeats (under numpy only). */
int tc_warning_count(void);
const char *tc_warning(int i);
void tc_warnings_clear(void);
tc_dtype tc_promote(tc_dtype a, tc_dtype b);  /* TC_DT_NONE when there is no common dtype */
/* tc_promote, or no_common_dtype (with a hint to cast) set on err for op. */
int tc_promote_err(tc_dtype a, tc_dtype b, int op, tc_dtype *out, tc_err *err);
/* The dtype an op computes in for operands a and b (with weak flags), per
 * SPEC 3.1/3.2. Fills err (literal_overflow) when a weak int does not fit. */
int tc_result_dtype2(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype *out, tc_err *err);

/* ---- operations (borrow arguments, return a new reference or NULL) ---- */
tc_tensor *tc_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err);
/* *a = *a OP b, where the caller owns the reference *a: a 0-d result of
 * the same dtype and weakness goes into *a's storage when nothing else
 * holds it (a scalar loop's accumulator), else *a is replaced by
 * tc_binary's result. On error *a is unchanged. */
int tc_binary_inplace(tc_op op, tc_tensor **a, tc_tensor *b, tc_err *err);
/* The truth of a comparison a OP b of two scalars (a loop's condition)
 * on the scalar short path, without a result tensor: 0 with *truth set;
 * -1 with err set as tc_binary sets it; 1 when tc_binary must compute it
 * (no short path for these operands). */
int tc_scalar_truth(tc_op op, tc_tensor *a, tc_tensor *b, bool *truth, tc_err *err);
/* Whether the short paths for scalars are on (TCALC_SCALAR_FAST=0 turns
 * them off, to compare their output with the general path's). */
bool tc_scalar_fast(void);
tc_tensor *tc_unary(tc_op op, tc_tensor *x, tc_err *err);
tc_tensor *tc_cast(tc_tensor *x, tc_dtype dt, tc_err *err);
tc_tensor *tc_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b, tc_err *err);
tc_tensor *tc_clip(tc_tensor *x, tc_tensor *lo, tc_tensor *hi, tc_err *err);

/* Axes for reductions: all when `all`; otherwise n axes, negatives allowed. */
typedef struct tc_axes { bool all; int n; int64_t axis[TC_MAX_DIMS]; } tc_axes;
tc_tensor *tc_reduce(tc_op op, tc_tensor *x, const tc_axes *axes, bool keepdims, tc_err *err);
/* Normalises axes against ndim (invalid_axis on out of range or repeats);
 * fills mask[d] = true for reduced dims. */
int tc_axes_mask(const tc_axes *axes, int ndim, bool *mask, tc_op op, tc_err *err);

/* ---- shape ops (SPEC 5.4): views where the data allows, else copies ---- */
/* A view of t's storage with the given geometry (no checks beyond ndim). */
tc_tensor *tc_view(tc_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, tc_err *err);
/* A contiguous copy in new storage, always (unlike tc_contiguous). */
tc_tensor *tc_clone(tc_tensor *t, tc_err *err);
tc_tensor *tc_reshape(tc_tensor *x, int ndim, const int64_t *shape, tc_err *err);   /* one -1 allowed */
tc_tensor *tc_transpose(tc_tensor *x, int nperm, const int64_t *perm, tc_err *err); /* nperm < 0: reverse */
tc_tensor *tc_expand_dims(tc_tensor *x, int64_t axis, tc_err *err);
tc_tensor *tc_squeeze(tc_tensor *x, const tc_axes *axes, tc_err *err);             /* all: every size-1 dim */
tc_tensor *tc_flatten(tc_tensor *x, tc_err *err);
tc_tensor *tc_broadcast_to(tc_tensor *x, int ndim, const int64_t *shape, tc_err *err);
tc_tensor *tc_concat(int n, tc_tensor *const *xs, int64_t axis, tc_err *err);
tc_tensor *tc_stack(int n, tc_tensor *const *xs, int64_t axis, tc_err *err);
tc_tensor *tc_flip(tc_tensor *x, const tc_axes *axes, tc_err *err);
tc_tensor *tc_tri(tc_op op, tc_tensor *x, int64_t k, tc_err *err);                 /* op TRIL or TRIU */
tc_tensor *tc_diag(tc_tensor *x, int64_t k, tc_err *err);

/* ---- indexing and scatter (SPEC 5.5, 5.6) ---- */
typedef enum { TC_MODE_ERROR, TC_MODE_CLIP, TC_MODE_WRAP, TC_MODE_FILL, TC_MODE_DROP } tc_index_mode;
typedef enum { TC_SCATTER_SET, TC_SCATTER_ADD, TC_SCATTER_MUL, TC_SCATTER_MAX, TC_SCATTER_MIN } tc_scatter_red;
const char *tc_index_mode_name(tc_index_mode m);
int tc_index_mode_from_name(const char *name);        /* -1 if none */
const char *tc_scatter_red_name(tc_scatter_red r);
int tc_scatter_red_from_name(const char *name);       /* -1 if none */

/* One item of x[...], as NumPy reads it: an integer, a slice (absent
 * bounds use Python's defaults), `...`, None (NEWAXIS: a new axis of
 * length 1), or a tensor (a 0-d integer acts as an integer; an integer
 * tensor selects along its axis; a k-d bool tensor is a mask over the next
 * k axes). Several index tensors broadcast together (src/index.c). */
typedef enum { TC_IDX_INT, TC_IDX_SLICE, TC_IDX_ELLIPSIS, TC_IDX_TENSOR, TC_IDX_NEWAXIS } tc_idx_kind;
typedef struct tc_index_item {
  tc_idx_kind kind;
  int64_t i;
  bool has_lo, has_hi, has_step;
  int64_t lo, hi, step;
  tc_tensor *t;
} tc_index_item;
tc_tensor *tc_getitem(tc_tensor *x, int n, const tc_index_item *items, tc_err *err);
/* x with x[items] replaced by v: scatter "set", mode "error"; x itself,
 * written in place, where nothing else holds x or its storage (else a copy).
 * On failure x is unchanged. */
tc_tensor *tc_setitem(tc_tensor *x, int n, const tc_index_item *items, tc_tensor *v, tc_err *err);
/* x[items] OP= v for one element, as x[items] = x[items] OP v gives it,
 * without the view and the new value: tc_element_offset finds the element
 * (items: one integer per axis; 1 when they are not that, -1 with the
 * getitem's index error), tc_update_element computes the element OP v
 * where the element is when x is a CPU tensor nothing else holds and the
 * result keeps x's dtype (0, or -1 with the op's error), else 1: the
 * caller takes the general path. */
int tc_element_offset(const tc_tensor *x, int n, const tc_index_item *items, int64_t *off, tc_err *err);
int tc_update_element(tc_op op, tc_tensor *x, int64_t off, tc_tensor *v, tc_err *err);
/* fill: the value for mode FILL (NULL: NaN for floats; required for other dtypes). */
tc_tensor *tc_take(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill, tc_err *err);
tc_tensor *tc_take_along_axis(tc_tensor *x, tc_tensor *idx, int64_t axis, tc_index_mode mode, tc_tensor *fill,
                              tc_err *err);
tc_tensor *tc_dynamic_slice(tc_tensor *x, int nstarts, const int64_t *starts, int nsizes, const int64_t *sizes,
                            tc_err *err);
tc_tensor *tc_scatter(tc_tensor *x, tc_tensor *idx, tc_tensor *updates, int64_t axis, tc_scatter_red red,
                      tc_index_mode mode, tc_err *err);

/* ---- constructors (SPEC 5.3) ---- */
/* value broadcasts to shape; dtype < 0 keeps value's dtype (weak int -> i64, weak float -> f64). */
tc_tensor *tc_full(int ndim, const int64_t *shape, tc_tensor *value, int dtype, tc_err *err);
tc_tensor *tc_zeros(int ndim, const int64_t *shape, tc_dtype dt, tc_err *err);
tc_tensor *tc_ones(int ndim, const int64_t *shape, tc_dtype dt, tc_err *err);
/* start/stop/step are 0-d; stop NULL: [0, start); step NULL: 1; dtype < 0: i64 for ints, else f64. */
tc_tensor *tc_arange(tc_tensor *start, tc_tensor *stop, tc_tensor *step, int dtype, tc_err *err);
tc_tensor *tc_linspace(double start, double stop, int64_t num, tc_dtype dt, tc_err *err);
tc_tensor *tc_eye(int64_t n, int64_t m, int64_t k, tc_dtype dt, tc_err *err);
/* Counter-based random numbers (src/philox.h): element i depends only on (seed, i).
 * UNIFORM: f64 in [0, 1); NORMAL: f64; INT: i64 in [lo, hi). */
typedef enum { TC_DIST_UNIFORM, TC_DIST_NORMAL, TC_DIST_INT } tc_dist;
tc_tensor *tc_random(tc_dist dist, int ndim, const int64_t *shape, uint64_t seed, int64_t lo, int64_t hi,
                     tc_err *err);
/* randint with dtype= (SPEC 13): lo and hi 0-d integer tensors (a u64 above
 * the i64 maximum too), [lo, hi) within dt's range (an integer dtype or
 * bool); the numbers are those of the i64 call, in dt. */
tc_tensor *tc_randint(tc_tensor *lo, tc_tensor *hi, int ndim, const int64_t *shape, uint64_t seed, tc_dtype dt,
                      tc_err *err);

/* ---- files (SPEC 5.7) ---- */
tc_tensor *tc_load_npy(const char *path, tc_err *err);
/* Whether the loads may read standard input for the path "-" (the caller
 * says so when the statements do not come from it; default false). Pipes,
 * FIFOs and /dev/stdin are read whole into a temporary file first. */
void tc_io_stdin_is_data(bool yes);
/* The .npy file mapped read-only (its data is never copied or written; an
 * op's result is a new tensor). Little-endian files only. */
tc_tensor *tc_map_npy(const char *path, tc_err *err);
/* One array of a .npz archive (name with or without ".npy"); writing n
 * tensors as members names[i].npy (stored). */
tc_tensor *tc_load_npz(const char *path, const char *name, tc_err *err);
int tc_save_npz(const char *path, int n, const char *const *names, tc_tensor *const *xs, tc_err *err);
int tc_save_npy(const char *path, tc_tensor *x, tc_err *err);
tc_tensor *tc_load_csv(const char *path, tc_dtype dt, tc_err *err);
/* numpy.loadtxt's options: delimiter one punctuation character, a tab,
 * " " (runs of blanks) or NULL (a comma if the first data line has one,
 * else runs of blanks); skip_header + skiprows lines skipped first (a
 * UTF-8 byte-order mark always); usecols (NULL: all) an integer or a list
 * of column numbers (negative: from the end); fill (NULL: NaN, floats
 * only) the value of an empty field. */
tc_tensor *tc_load_csv_with(const char *path, tc_dtype dt, const char *delimiter, int64_t skip_header,
                            int64_t skiprows, tc_tensor *usecols, tc_tensor *fill, tc_err *err);
int tc_save_csv(const char *path, tc_tensor *x, tc_err *err);
/* JSON input (SPEC 14): one tensor from text (NUL-terminated at len), as
 * tcalc's own JSON object or a plain JSON number or array; errors name
 * the line and column in the text. op: the op errors are reported for. */
tc_tensor *tc_from_json(const char *text, size_t len, tc_op op, tc_err *err);
tc_tensor *tc_load_json(const char *path, tc_err *err);
/* For a SIGTERM handler: removes the temporary file of a save in progress
 * (the old file under the name stays as it was). Async-signal-safe. */
void tc_io_signal_cleanup(void);

/* ---- printing floats ---- */
/* The shortest decimal that reads back to v in float dtype dt (v finite and
 * a value of dt; its sign is ignored): its significant digits, without
 * trailing zeros, into digits (room for 18), and the decimal exponent of
 * the first digit; returns how many digits. Of the shortest, the nearest
 * to v (ties to even). */
int tc_shortest_digits(double v, tc_dtype dt, char *digits, int *exp10);
/* The same as a number: v (a value of dt, finite; sign ignored) is the
 * returned significand (*nd digits, none of them trailing zeros) times
 * 10^(*exp10 - *nd + 1). */
uint64_t tc_shortest(double v, tc_dtype dt, int *nd, int *exp10);
/* The printers' digit writers, which write whole 16-byte blocks: they may
 * write garbage up to TC_PUT_ROOM bytes from p (past the text, for the
 * caller's next writes to cover), and return the text's end; no NUL.
 * tc_put_digits: d in nd digits (d < 10^nd; a shorter d gets leading
 * zeros), with a '.' after the first `point` of them when 0 < point < nd. */
#define TC_PUT_ROOM 40
char *tc_put_digits(char *p, uint64_t d, int nd, int point);
/* The double nearest the decimal number at s (n bytes: an optional sign,
 * digits with an optional '.' and fraction, an optional exponent; '_'
 * between digits is skipped), rounded once, as strtod in the C locale
 * rounds it; *used: the bytes read (0: no digits, or no memory to read a
 * number of more than 127 bytes). Ryu's tables for up to
 * 17 significant digits, strtod beyond. */
double tc_read_decimal(const char *s, size_t n, size_t *used);
/* v in decimal (at most 20 characters, 21 with a sign). */
char *tc_put_u64(char *p, uint64_t v);
char *tc_put_i64(char *p, int64_t v);
/* A decimal exponent as C's %e writes it: e+05, e-310 (writes only that). */
char *tc_put_exponent(char *p, int e);

/* ---- matrix products (SPEC 5.2) ---- */
/* NumPy matmul: 1-D operands promoted to matrices and the added dimension
 * removed; batch dimensions broadcast; integers exact with wrapping in the
 * result dtype; bf16/f16 multiply in f32 and round once; bool is or-of-ands. */
tc_tensor *tc_matmul(tc_tensor *a, tc_tensor *b, tc_err *err);
tc_tensor *tc_dot(tc_tensor *a, tc_tensor *b, tc_err *err);
tc_tensor *tc_outer(tc_tensor *a, tc_tensor *b, tc_err *err);
/* Sums products over n axis pairs (axes_a[i] of a with axes_b[i] of b;
 * negatives count from the end); the result has a's free axes, then b's. */
tc_tensor *tc_tensordot(tc_tensor *a, tc_tensor *b, int n, const int64_t *axes_a, const int64_t *axes_b,
                        tc_err *err);
/* Sum of the diagonal over axes 0 and 1 (reduce_sum's dtype rules). */
tc_tensor *tc_trace(tc_tensor *x, tc_err *err);

/* ---- einsum and linear algebra (SPEC 12) ---- */
/* NumPy's einsum over n operands. A malformed spec is bad_argument with
 * err->start/end set to the byte range in spec (the caller shifts it to
 * the statement); sizes that disagree are shape_mismatch. */
tc_tensor *tc_einsum(const char *spec, int n, tc_tensor *const *ops, tc_err *err);
/* Batched over leading dims; f32/f64 native, ints and bool in f64, f16/bf16
 * in f32 rounded back. singular_matrix carries the batch index. */
tc_tensor *tc_solve(tc_tensor *a, tc_tensor *b, tc_err *err);
tc_tensor *tc_inv(tc_tensor *a, tc_err *err);
tc_tensor *tc_det(tc_tensor *a, tc_err *err);      /* ints/bool: exact i64 (integer_overflow) */
tc_tensor *tc_cholesky(tc_tensor *a, tc_err *err);
tc_tensor *tc_eigvalsh(tc_tensor *a, tc_err *err);
tc_tensor *tc_svdvals(tc_tensor *a, tc_err *err);
tc_tensor *tc_pinv(tc_tensor *a, double rcond, tc_err *err);
/* tol < 0: the default, largest singular value * max(m, n) * eps. */
tc_tensor *tc_matrix_rank(tc_tensor *a, double tol, tc_err *err);
/* numpy.linalg.norm. ord_kind: 0 none, 1 a number (ord), 2 "fro", 3 "nuc". */
typedef enum { TC_NORM_NONE, TC_NORM_NUM, TC_NORM_FRO, TC_NORM_NUC } tc_norm_kind;
tc_tensor *tc_norm(tc_tensor *x, tc_norm_kind kind, double ord, const tc_axes *axes, bool keepdims, tc_err *err);

/* An error an inner op set (its op and message prefix), renamed to the op
 * the caller was asked for. */
void tc_reattribute(tc_err *err, tc_op outer);

/* ---- everyday functions (SPEC 12; src/fn.c) ---- */
/* cumsum, cumprod, cummax, cummin along axis (has_axis false: flattened). */
tc_tensor *tc_scan(tc_op op, tc_tensor *x, bool has_axis, int64_t axis, tc_err *err);
tc_tensor *tc_diff(tc_tensor *x, int64_t n, int64_t axis, tc_err *err);
/* op SORT or ARGSORT, stable both ways; NaN last ascending, first descending. */
tc_tensor *tc_sort(tc_op op, tc_tensor *x, int64_t axis, bool descending, tc_err *err);
tc_tensor *tc_topk(tc_op op, tc_tensor *x, int64_t k, int64_t axis, tc_err *err);   /* TOPK, ARGTOPK */
tc_tensor *tc_searchsorted(tc_tensor *sorted, tc_tensor *v, bool right, tc_err *err);
tc_tensor *tc_unique(tc_op op, tc_tensor *x, tc_err *err);                          /* UNIQUE, UNIQUE_COUNTS */
tc_tensor *tc_argwhere(tc_tensor *x, tc_err *err);
tc_tensor *tc_bincount(tc_tensor *x, int64_t minlength, tc_err *err);
tc_tensor *tc_histogram(tc_tensor *x, int64_t bins, bool has_lo, double lo, bool has_hi, double hi, tc_err *err);
tc_tensor *tc_var(tc_op op, tc_tensor *x, const tc_axes *axes, int64_t ddof, bool keepdims, tc_err *err); /* VAR, STD */
/* MEDIAN (q unused), QUANTILE, PERCENTILE; method linear|lower|higher|nearest|midpoint. */
tc_tensor *tc_quantile(tc_op op, tc_tensor *x, tc_tensor *q, const tc_axes *axes, const char *method, bool keepdims,
                       tc_err *err);
tc_tensor *tc_isclose(tc_op op, tc_tensor *a, tc_tensor *b, double rtol, double atol, bool equal_nan, tc_err *err);
tc_tensor *tc_array_equal(tc_tensor *a, tc_tensor *b, tc_err *err);
tc_tensor *tc_softmax(tc_op op, tc_tensor *x, int64_t axis, tc_err *err);            /* SOFTMAX, LOG_SOFTMAX */
tc_tensor *tc_like(tc_op op, tc_tensor *x, tc_tensor *value, int dtype, tc_err *err); /* dtype -1: x's */
tc_tensor *tc_repeat(tc_tensor *x, int64_t n, bool has_axis, int64_t axis, tc_err *err);
tc_tensor *tc_tile(tc_tensor *x, int nreps, const int64_t *reps, tc_err *err);
/* numpy.pad's widths (a tensor that broadcasts to [ndim, 2], or one pair
 * per axis flattened); mode "constant" with value (NULL: 0), or "edge",
 * "reflect", "symmetric" or "wrap" (with a value: an error). */
tc_tensor *tc_pad(tc_tensor *x, tc_tensor *widths, tc_tensor *value, const char *mode, tc_err *err);
/* The constant mode with widths as [before, after] or one pair per axis. */
tc_tensor *tc_pad_pairs(tc_tensor *x, int nwidths, const int64_t *widths, tc_tensor *value, tc_err *err);
tc_tensor *tc_roll(tc_tensor *x, int64_t shift, bool has_axis, int64_t axis, tc_err *err);
/* round(x, decimals) for decimals != 0, as NumPy: rint(x * 10^d) / 10^d. */
tc_tensor *tc_round_decimals(tc_tensor *x, int64_t decimals, tc_err *err);

/* ---- CPU threads ---- */
/* Threads the CPU engine splits large operations across. n > 0 sets the
 * count; 0 restores the default: $TCALC_THREADS, else the online CPUs.
 * Integer results are the same for every count, and float sums too. */
void tc_set_threads(int n);
int tc_get_threads(void);

/* ---- progress (SPEC 17; src/progress.c) ----
 * Long work opens a job (begin ... end, on the thread that runs the
 * statement) and reports what it has done at the places it looks at the
 * interrupt flag, from any thread (add). The library draws nothing: a
 * front end installs a hook, which is called from one thread at a time,
 * at most every interval_s, once delay_s has passed since the outermost
 * job began, with the jobs open (outermost first, jobs[n - 1] the one
 * reporting), and with n == 0 to erase what it drew: when the outermost
 * job ends, when an inner one ends (the outer ones are drawn again at
 * their next report), and on tc_progress_clear. Without a hook every call
 * returns at once. Jobs nest up to TC_PROGRESS_DEPTH deep; deeper ones
 * are not shown. */
typedef enum { TC_PROGRESS_BYTES, TC_PROGRESS_ELEMENTS, TC_PROGRESS_MADDS, TC_PROGRESS_LINES } tc_progress_unit;
typedef struct {
  const char *label;
  tc_progress_unit unit;
  int64_t done, total;   /* total 0: not known (yet) */
  double seconds;        /* since the job (or its phase, tc_progress_reset) began */
} tc_progress_view;
typedef void (*tc_progress_hook)(const tc_progress_view *jobs, int n);
#define TC_PROGRESS_DEPTH 8
/* Installs the hook (NULL: none). Jobs open when it changes are neither
 * shown nor counted from then on. */
void tc_progress_set_hook(tc_progress_hook hook, double delay_s, double interval_s);
/* Opens a job of total units (0: not known); label NULL opens a silent
 * one, never shown, that only keeps the reports of work too small to show
 * from counting in the job around it. The label is copied. Each begin is
 * matched by an end on the same thread, nested. */
void tc_progress_begin(const char *label, int64_t total, tc_progress_unit unit);
void tc_progress_end(void);
/* The innermost job's work: units more done (any thread; a thread gathers
 * small reports and adds them in batches: flush adds what it gathered now,
 * as the thread pool does after each task); done so far (set: only while
 * no other thread reports); a total learnt later; and a new phase (done 0,
 * the total, the clock restarted). */
void tc_progress_add(int64_t units);
void tc_progress_flush(void);
void tc_progress_set(int64_t done);
void tc_progress_total(int64_t total);
void tc_progress_reset(int64_t total);
/* For a loop that reports a part of its work from inside and knows the
 * whole of it at its end: mark before it, upto(mark, whole) after it
 * adds what this thread has not reported since the mark. */
int64_t tc_progress_mark(void);
void tc_progress_upto(int64_t mark, int64_t whole);
/* Erases the bar now (output is about to be written); it is drawn again
 * at the next report. */
void tc_progress_clear(void);
/* Whether a bar is on the screen (async-signal-safe: for a handler that
 * ends the process). */
bool tc_progress_visible(void);

/* ---- capabilities ---- */
/* Whether op accepts inputs of dtype dt on engine e (the dtype its operands
 * have after promotion); this is what the dispatcher itself consults. */
bool tc_op_supported(tc_op op, tc_dtype dt, tc_engine_id e);

/* ---- engine parity (src/tolerance.def) ---- */
/* How far a result of op in dtype dt may differ between engines: ulps > 0
 * allows that many units in the last place; sum: the reduce_sum/mean rule
 * (tc_sum_close); neither: identical (any NaN equals any NaN). */
typedef struct tc_tolerance { int ulps; bool sum; } tc_tolerance;
tc_tolerance tc_op_tolerance(tc_op op, tc_dtype dt);
/* Units in the last place of float dtype dt between a and b (values of dt
 * held in doubles); 0 when both are NaN, INT64_MAX when only one is. */
int64_t tc_ulp_distance(tc_dtype dt, double a, double b);
/* u: 2^-53 for f64, 2^-24 for the dtypes that compute in f32. */
double tc_unit_roundoff(tc_dtype dt);
/* The reduce_sum/mean rule: |a - b| <= (32 + log2 n) * u * abs_sum, or 1 ulp;
 * NaN and infinities must match exactly. */
bool tc_sum_close(tc_dtype dt, double a, double b, double abs_sum, int64_t n);

/* TC_IF_PROBE(p)(a, b): a when the macro p is defined as `~, 1`, else b
 * (the preprocessor test of Linux's IS_ENABLED). */
#define TC_IF_PROBE(p) TC_IF_PROBE_(p, 0, ~)
#define TC_IF_PROBE_(x, v, ...) TC_PICK_##v
#define TC_PICK_0(a, b) b
#define TC_PICK_1(a, b) a

/* Convenience wrappers generated from the op table: tc_add(a, b, err), ... */
#define TC_X_(E, name, sym, fam, ...) TC_IF_PROBE(TC_WRAPS_##fam)(TC_WRAP_##fam, TC_WRAP_NONE)(E, name)
/* Only the families marked here (TC_WRAPS_<family> defined as `~, 1`) have
 * wrappers; any other, a new one included, needs nothing here. */
#define TC_WRAPS_BIN ~, 1
#define TC_WRAPS_CMP ~, 1
#define TC_WRAPS_UN ~, 1
#define TC_WRAPS_PRED ~, 1
#define TC_WRAPS_REDUCE ~, 1
#define TC_WRAP_NONE(E, name)
#define TC_WRAP_BIN(E, name) static inline tc_tensor *tc_##name(tc_tensor *a, tc_tensor *b, tc_err *err) { return tc_binary(TC_OP_##E, a, b, err); }
#define TC_WRAP_CMP TC_WRAP_BIN
#define TC_WRAP_UN(E, name) static inline tc_tensor *tc_##name(tc_tensor *x, tc_err *err) { return tc_unary(TC_OP_##E, x, err); }
#define TC_WRAP_PRED TC_WRAP_UN
#define TC_WRAP_REDUCE(E, name) static inline tc_tensor *tc_##name(tc_tensor *x, const tc_axes *axes, bool keepdims, tc_err *err) { return tc_reduce(TC_OP_##E, x, axes, keepdims, err); }
TC_OPS(TC_X_, _)
#undef TC_X_
/* The built-ins' functions, declared from their TC_CALLS rows (src/ops.def):
 * a function the table calls needs no declaration of its own (those above
 * must agree with these, or the build fails). */
#define A_OP tc_op
#define A_T(i) tc_tensor *
#define A_INT(i) int64_t
#define A_GIVEN(i) bool
#define A_NUM(i) double
#define A_BOOL(i) bool
#define A_STR(i) const char *
#define A_AXES(i) const tc_axes *
#define A_DT(i) tc_dtype
#define A_DTN(i) int
#define A_MODE(i) tc_index_mode
#define A_RED(i) tc_scatter_red
#define A_SEED(i) uint64_t
#define A_K(type, value) type
#define A_INTS(i) int, const int64_t *
#define A_TS(i) int, tc_tensor *const *
#define A_KW(i) int, const char *const *, tc_tensor *const *
#define TC_CALL_TENSOR tc_tensor *
#define TC_CALL_STATUS int
#define TC_CALL_PARAMS_(...) (__VA_ARGS__, tc_err *)
#define TC_X_(E, fn, result, params) TC_CALL_##result fn TC_CALL_PARAMS_ params;
TC_CALLS(TC_X_)
#undef TC_X_
#undef TC_CALL_TENSOR
#undef TC_CALL_STATUS
#undef TC_CALL_PARAMS_
#include "calls_undef.h"
#endif
