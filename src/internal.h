/* Helpers the op families of src/ share (api.c, shape.c, index.c, ctor.c,
 * io.c, linalg.c); not part of the public API. */
#ifndef TC_INTERNAL_H
#define TC_INTERNAL_H
#include "engine.h"

/* A CPU tensor over a read-only file mapping (src/tensor.c); takes the mapping. */
tc_tensor *tc_tensor_mapped(void *map, size_t map_len, size_t offset, tc_dtype dt, int ndim, const int64_t *shape,
                            tc_err *err);
/* Runs a call on the current engine (engine_unavailable if it cannot start). */
int tc_run_call(tc_call *c, tc_err *err);
/* x on the current engine with dtype dt (a new reference; cast if needed). */
tc_tensor *tc_operand(tc_tensor *x, tc_dtype dt, tc_err *err);
/* Prefixes err with op (and sets its dtype) when an inner call named none. */
void tc_annotate(tc_err *err, tc_op op, int dt);
/* dtype_unsupported for op at dt on the current engine; returns -1. */
int tc_unsupported(tc_op op, tc_dtype dt, tc_err *err);
/* 0 when the current engine supports op at dt, else tc_unsupported's -1. */
int tc_check_supported(tc_op op, tc_dtype dt, tc_err *err);
/* Whether engine e can cast from one dtype to another (always to itself). */
bool tc_cast_supported(const tc_engine *e, tc_dtype from, tc_dtype to);
/* Normalises one axis against ndim (invalid_axis names op); -1 on error. */
int tc_norm_axis(int64_t axis, int ndim, tc_op op, int64_t *out, tc_err *err);
/* The row-major positions of the true elements of a bool mask, i64 [count]
 * (src/index.c). */
tc_tensor *tc_mask_positions(tc_tensor *mask, tc_err *err);
/* The i64 value of a 0-d integer or bool tensor. */
int tc_scalar_to_i64(tc_tensor *t, int64_t *out, tc_err *err);
int tc_scalar_to_f64(tc_tensor *t, double *out, tc_err *err);
/* out[...] = v broadcast (v cast to out's dtype first): a COPY into a view. */
int tc_copy_into(tc_tensor *out, tc_tensor *v, tc_err *err);
/* Casts a fill or update value to dt by the weak-scalar rules: a weak int
 * that does not fit an integer dt is literal_overflow. */
tc_tensor *tc_value_as(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err);
/* tc_value_as's check alone: 0 when v may become a dt value (a weak
 * integer must fit an integer dt), else -1 with literal_overflow. */
int tc_value_fits(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err);
/* a OP b on the scalar path, written where a's value is (a: a 0-d CPU
 * tensor whose storage nothing else holds, not a file mapping): 0, -1 with
 * err set as the general path sets it, or 1 when it is the general path's
 * case (no short path, a result of another dtype or kind, or one the
 * memory limit would refuse: the general path reports that). */
int tc_scalar_into(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err);
/* The coordinates pos of row-major position flat in shape (error.c). */
void tc_unravel(int64_t flat, int ndim, const int64_t *shape, int64_t *pos);
/* " at index [i, j]" for the element idx of ndim axes (nothing for 0-d),
 * as errors that name an element say it (error.c). */
void tc_index_text(char *where, size_t n, int ndim, const int64_t *idx);
/* The dtype an op computes in for a and b under the semantics in force
 * (not tcalc): 0 with *out (and *check_literal: a weak integer must fit
 * *out, as tcalc's rule checks), -1 with err (a dtype it lacks), 1 where
 * tcalc's own rule gives its answer. */
int tc_semantics_typing(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype *out, bool *check_literal, tc_err *err);
/* Forgets the scalar path's remembered typings (the semantics changed). */
void tc_scalar_memo_clear(void);
/* tc_binary without the semantics' own answers (semantics.c computes them with it). */
tc_tensor *tc_binary_eager(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err);
/* a OP b as the semantics in force answers where it differs from tcalc
 * (integer division: zero divisors, MIN / -1): 0 with *out, -1 with err,
 * 1 when tcalc's own answer is the semantics' too. */
int tc_semantics_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_tensor **out, tc_err *err);
/* Whether the semantics in force may answer a OP b otherwise than tcalc
 * (then the scalar short path leaves it to tc_binary). */
bool tc_semantics_answers(tc_op op);
/* Whether the semantics in force lets the Python scalar v become a dt
 * value (x[i] = v, fill values): 0, -1 with literal_overflow, or 1 where
 * tcalc's own check decides (all but torch, whose c10 check takes an
 * unsigned dtype's [-MAX, MAX] and wraps). */
int tc_semantics_value_fits(tc_tensor *v, tc_dtype dt, tc_op op, tc_err *err);
/* Whether the semantics' mean of dt is its sum (rounded to dt) divided by
 * the count: PyTorch's of f16 and bf16. */
bool tc_semantics_mean_of_sum(tc_dtype dt);
/* -1 with dtype_unsupported where the semantics in force has no a @ b of
 * these dtypes (torch: two dtypes, or bool), else 0. */
int tc_semantics_matmul(tc_tensor *a, tc_tensor *b, tc_err *err);
/* The warnings NumPy gives for the reduction r of x (under numpy): 0, or -1 with err. */
int tc_semantics_reduced(tc_op op, tc_tensor *x, tc_tensor *r, tc_err *err);
/* -1 with dtype_unsupported where the semantics in force has no op for dt
 * (torch: mean of integers; tenferro: integer matmul), else 0. */
int tc_semantics_refuses(tc_op op, tc_dtype dt, tc_err *err);
/* Whether engine eid can run op at dt, for the families that answer in
 * their own src/ file (a BY(f) in TC_FAMILIES: tc_fn_supported in fn.c,
 * tc_linalg_supported in linalg.c, tc_matfn_supported in matfn.c). */
#define TC_FAM_SUPPORTED_NONE
#define TC_FAM_SUPPORTED_BY(f) bool f(tc_op op, tc_dtype dt, tc_engine_id eid);
#define TC_X_(F, arity, ew, supported) TC_FAM_SUPPORTED_##supported
TC_FAMILIES(TC_X_)
#undef TC_X_
#undef TC_FAM_SUPPORTED_NONE
#undef TC_FAM_SUPPORTED_BY

/* The one typing of a binary elementwise op's result (SPEC 3): the
 * operands' common dtype dt (promotion, weak literals: tc_result_dtype2),
 * the dtype the kernel computes in, the result's dtype, and whether the
 * result is weak. tc_binary's eager path asks it each time; its scalar path
 * remembers the answers that do not depend on the values. -1 with err set
 * (no_common_dtype, a literal that does not fit). */
typedef struct { tc_dtype dt, kdt, odt; bool weak; } tc_btype;
int tc_binary_typing(tc_op op, tc_tensor *a, tc_tensor *b, tc_btype *t, tc_err *err);

/* The check and saturate policies (src/overflow.c): the policy an engine
 * call of op at kernel dtype kdt is to carry in its overflow field (the
 * session's, where it judges the call; else TC_OVERFLOW_WRAP). A matrix
 * product is judged only when some sum of products could leave kdt (the
 * operands' largest magnitudes say). */
tc_overflow tc_overflow_judges(tc_op op, tc_dtype kdt);
tc_overflow tc_overflow_judges_cast(tc_dtype from, tc_dtype to);
tc_overflow tc_overflow_judges_reduce(tc_op op, tc_dtype kdt);
tc_overflow tc_overflow_judges_matmul(tc_dtype kdt, tc_tensor *a, tc_tensor *b);
tc_overflow tc_overflow_judges_scan(tc_op op, tc_dtype kdt);
/* einsum (src/einsum.c): an operand is a view with one dim per distinct
 * label (a dim of size 1 broadcasts against its label's size); labels are
 * the 52 letters, then the broadcast ("...") dims. */
#define TC_EINSUM_LABELS (52 + TC_MAX_DIMS)
#define TC_EINSUM_OPS 64   /* operands at most */
typedef struct {
  tc_tensor *t;
  int n;
  int lab[TC_MAX_DIMS];
} tc_einsum_opnd;
bool tc_overflow_judges_einsum(tc_dtype kdt);
bool tc_overflow_einsum_fits(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nsum,
                             const int *sumlab);
tc_tensor *tc_overflow_einsum(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nout,
                              const int *outlab, int nsum, const int *sumlab, tc_err *err);
#endif
