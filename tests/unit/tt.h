/* Test toolkit shared by the unit suites: tensors built from plain values and
 * read back, and reference arithmetic written independently of src/ (the
 * compiler's _Float16 for f16, the top half of an f32 for bf16, rounding by
 * scaling and nearbyint, wrapping through __int128). Expected values in the
 * suites come from these references, never from a run of the code. */
#ifndef TT_H
#define TT_H
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include "tcalc.h"

/* ---- failure accounting: log the first failures, assert at the end ---- */
void tt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tt_failures(void);
/* e's message as the printers show it (tc_err_text: "op: detail"), in one
 * of a few rotating buffers (several in one expression). */
const char *tt_msg(const tc_err *e);
/* Whether the heaviest tests run a sample of their cases (every kind of
 * case, fewer sizes and thread counts): under valgrind, where
 * scripts/valgrind.sh sets TT_SAMPLED=1; make test and make check run
 * them all. */
bool tt_sampled(void);
#define TT_CHECK(cond, ...) do { if (!(cond)) tt_fail(__VA_ARGS__); } while (0)
#define TT_DONE() do { int n_ = tt_failures(); cr_assert_eq(n_, 0, "%d failed checks (the first are logged above)", n_); } while (0)

/* ---- dtype facts, stated here rather than read from src/ ---- */
/* The reference model below covers the nine dtypes of part one (bool, the
 * signed integers, the floats: the first TT_NDT of tc_dtype); the suites
 * loop over those. The unsigned dtypes (SPEC 13) have their own reference
 * in test_unsigned.c. */
#define TT_NDT 9
bool tt_is_uint(tc_dtype dt);
bool tt_is_int(tc_dtype dt);
bool tt_is_flt(tc_dtype dt);
int tt_bits(tc_dtype dt);                 /* integer width; 1 for bool */
int64_t tt_min(tc_dtype dt);
int64_t tt_max(tc_dtype dt);
/* Float formats: fraction bits, least and greatest normal exponent. */
void tt_fmt(tc_dtype dt, int *mb, int *emin, int *emax);
double tt_maxf(tc_dtype dt);              /* largest finite value */
double tt_denorm_min(tc_dtype dt);

/* ---- reference arithmetic ---- */
/* The low `bits` bits of v as a signed number (two's complement). */
int64_t tt_wrap(__int128 v, int bits);
/* x rounded to float dtype dt, nearest with ties to even, overflow to inf. */
double tt_round(double x, tc_dtype dt);
/* The integer v rounded to float dtype dt (exact integer arithmetic). */
double tt_round_i64(int64_t v, tc_dtype dt);
/* One ulp of dtype dt at x. */
double tt_ulp(double x, tc_dtype dt);
/* got equals want (NaN matches NaN, zeros must have the same sign) when
 * tol == 0; otherwise within tol ulps of dt at want. */
bool tt_close(double got, double want, tc_dtype dt, double tol);
/* Round half to even, written out. */
double tt_round_half_even(double x);

/* ---- tensors ---- */
/* Values are int64 for bool and integer dtypes (stored as their low bits),
 * double for float dtypes (rounded with tt_round first). */
tc_tensor *tt_tensor(tc_dtype dt, int ndim, const int64_t *shape, const int64_t *iv, const double *fv);
tc_tensor *tt_ivec(tc_dtype dt, int64_t n, const int64_t *v);
tc_tensor *tt_fvec(tc_dtype dt, int64_t n, const double *v);
tc_tensor *tt_iscalar(tc_dtype dt, int64_t v);
tc_tensor *tt_fscalar(tc_dtype dt, double v);
/* Frees the tensors of a list in its order (NULL allowed): TT_FREE(r, x, idx). */
void tt_free_n(tc_tensor *const *ts, size_t n);
#define TT_FREE(...) \
  tt_free_n((tc_tensor *const[]){__VA_ARGS__}, sizeof((tc_tensor *const[]){__VA_ARGS__}) / sizeof(tc_tensor *))
/* Reads every element in row-major order; iv for bool/int, fv for floats
 * (the other may be NULL). Returns the element count. */
int64_t tt_read(tc_tensor *t, int64_t *iv, double *fv);
/* Element i of a raw host buffer of dtype dt, as int64 or double. */
int64_t tt_get_i(tc_dtype dt, const void *buf, int64_t i);
double tt_get_f(tc_dtype dt, const void *buf, int64_t i);
void tt_put_i(tc_dtype dt, void *buf, int64_t i, int64_t v);
void tt_put_f(tc_dtype dt, void *buf, int64_t i, double v);
/* Raw 16-bit patterns of the half formats, decoded independently. */
double tt_f16_bits_to_f64(uint16_t b);
double tt_bf16_bits_to_f64(uint16_t b);

/* Edge values of a dtype (ints: MIN, MAX, -1, 0, 1, ...; floats: +-0,
 * +-inf, NaN, subnormals, ...; bool: 0, 1); returns the count (<= 64). */
int tt_edges_i(tc_dtype dt, int64_t *v);
int tt_edges_f(tc_dtype dt, double *v);

/* A set of operand values of one dtype, in the form tt_tensor takes (i for
 * bool and integers, f for floats; the other zero). */
#define TT_MAXV 160
typedef struct {
  tc_dtype dt;
  int n;
  int64_t i[TT_MAXV];
  double f[TT_MAXV];
} tt_vals;
/* v := the edge values of dt (tt_edges_i or tt_edges_f). */
void tt_vals_edges(tt_vals *v, tc_dtype dt);
/* A tensor of v's dtype and the given shape whose element k is v's value idx[k]. */
tc_tensor *tt_vals_tensor(const tt_vals *v, int ndim, const int64_t *shape, const int *idx);

/* A deterministic generator (splitmix64). */
uint64_t tt_rand(uint64_t *state);
double tt_rand01(uint64_t *state);
/* Marsaglia's xorshift64 (13, 7, 17): the next state, which is the value. */
uint64_t tt_xorshift(uint64_t *state);

tc_err tt_err(void);
const char *tt_name(tc_dtype dt);
#endif
