/* The CPU-vs-CUDA parity suite (make test-cuda): for every capability row
 * (op, dtype) the CPU claims, runs the same cases through the public API on
 * both engines and compares results (src/tolerance.def) and errors (same
 * code, index and message; engine "cpu" vs "cuda"). Prints PASS/FAIL per
 * row, then the passing rows in the form backend/cuda/verified.def takes.
 *
 *   cuda-check parity [--emulate] [--quick] [--brief] [--only OP]
 *   TCALC_CUDA_UNVERIFIED=1   test every row the CPU claims, not only the
 *                             rows the CUDA engine claims (verified.def)
 *   --emulate   run the CUDA engine's kernels as their host emulation (no
 *               GPU needed: checks plans, kernel tables, kernel bodies and
 *               the reduction strategies; implies every row). Passing rows
 *               from an emulated run must not go into verified.def.
 *   --quick     leave out the largest sizes
 *   --brief     print only failures and the summary
 *   --allow-missing   rows the CUDA engine has no kernels for are listed
 *               (MISSING) but do not fail the run (make test uses it, so that
 *               a new CPU op does not break the build before its CUDA kernel)
 *
 * A plain program (libc and the static CUDA runtime) so that it can be
 * carried to a bare GPU machine. Without a device it prints
 * "skipped: no CUDA device" and exits 0 (with --emulate under CI=true, a
 * plugin that cannot load fails instead). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"
#include "kexpr.h"
#include "cuda/tcu.h"
#include "check.h"

static bool quick, brief, allow_missing;
static const char *only;

/* ---- names ---- */
static const char *const op_enum[] = {
#define X(E, ...) #E,
  TC_OPS(X, _)
#undef X
};
static const char *const dt_enum[] = {
#define X(E, ...) #E,
  TC_DTYPES(X, _)
#undef X
};

/* ---- deterministic random numbers (xorshift64*) ---- */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dull;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* ---- host tensors ---- */
typedef struct spec {
  tc_dtype dt;
  int ndim;
  int64_t shape[4];
  unsigned char *data;     /* row-major, numel * size bytes */
  bool weak;
  bool transposed;         /* 2-D: made as a permuted view of its transpose */
  bool flipped;            /* made as a view with every stride negative */
  bool strided;            /* made as a view of every other element along the last dim */
  bool on_cpu;             /* given to the CUDA run as a CPU tensor (explicit copy) */
} spec;

static int64_t spec_numel(const spec *s) {
  int64_t n = 1;
  for (int i = 0; i < s->ndim; i++) n *= s->shape[i];
  return n;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) { fprintf(stderr, "cuda-check: out of memory\n"); exit(2); }
  return p;
}

/* Stores a value into element i: integers keep the low bits, floats round
 * to nearest even, bool is nonzero. */
static void put(tc_dtype dt, unsigned char *buf, int64_t i, bool is_int, int64_t iv, double fv) {
  unsigned char *p = buf + (size_t)i * tc_dtype_size(dt);
  double f = is_int ? (double)iv : fv;
  int64_t v = is_int ? iv : (isnan(fv) ? 0 : fv >= 0x1p63 ? INT64_MAX : fv < -0x1p63 ? INT64_MIN : (int64_t)fv);
  switch (dt) {
  case TC_DT_BOOL: *p = is_int ? iv != 0 : fv != 0; break;
#define PUT_INT(E, n_, S, ...) case TC_DT_##E: { S x = (S)(tc_u_##E)(uint64_t)v; memcpy(p, &x, sizeof x); break; }
#define PUT_FLT(E, n_, S, ...) case TC_DT_##E: { S x = tc_fromd_##E(f); memcpy(p, &x, sizeof x); break; }
  TC_FOR_INT(PUT_INT, _)
  TC_FOR_FLT(PUT_FLT, _)
  default: break;
  }
}

/* Element i as a double (exact for every dtype but the widest ints). */
static double get_f(tc_dtype dt, const unsigned char *buf, int64_t i) {
  return tc_dtype_load_f64(dt, buf + (size_t)i * tc_dtype_size(dt));
}

/* Element i as an integer: exact for bool and the ints, floats truncated. */
static int64_t get_i(tc_dtype dt, const unsigned char *buf, int64_t i) {
  if (tc_dtype_class(dt) == TC_CLASS_FLT) return (int64_t)get_f(dt, buf, i);
  return tc_dtype_load_i64(dt, buf + (size_t)i * tc_dtype_size(dt));
}

/* The range of an integer dtype as int64s; for u64 the top half is reached
 * through negative bit patterns (int_edges adds them). */
static int64_t imax(tc_dtype dt) {
  if (dt == TC_DT_BOOL) return 1;
  int b = tc_dtype_bits(dt);
  if (tc_dtype_is_unsigned(dt)) return b == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << b) - 1);
  return (int64_t)(((uint64_t)1 << (b - 1)) - 1);
}
static int64_t imin(tc_dtype dt) { return dt == TC_DT_BOOL || tc_dtype_is_unsigned(dt) ? 0 : -imax(dt) - 1; }

/* Edge values (SPEC 7): MIN, MAX, -1, 0, 1 and friends for integers;
 * +-0, +-inf, NaN, subnormals, halfway cases and range limits for floats
 * (stored in the dtype: a double beyond its range becomes inf there). */
static const double flt_edges[] = {
  0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-3, 100.0, -100.0, 1e5,
  65504.0, 70000.0, 1e30, -1e30, 3e38, 1.7976931348623157e308, -1.7976931348623157e308,
  INFINITY, -INFINITY, NAN, 4.9406564584124654e-324, 1e-310, 1e-40, 1.1754943508222875e-38,
  5.9604644775390625e-08, 6.1e-05, 1e-07, 9.3e18, -9.3e18, 2147483648.0, -2147483649.0,
  127.5, -128.5, 255.0, 0.1, 3.14159265358979, -0.75, 7.0, 1e10,
};
#define N_FLT_EDGES (int)(sizeof flt_edges / sizeof flt_edges[0])

static int int_edges(tc_dtype dt, int64_t *out) {
  int64_t lo = imin(dt), hi = imax(dt);
  int64_t v[] = {lo, lo + 1, lo / 2, -100, -7, -3, -2, -1, 0, 1, 2, 3, 7, 100, hi / 2, hi - 1, hi};
  int n = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] >= lo && v[i] <= hi) out[n++] = v[i];
  if (dt == TC_DT_U64) {   /* 2^64 - 1, 2^63 and 2^63 - 1 + 2 as bit patterns */
    out[n++] = -1;
    out[n++] = INT64_MIN;
    out[n++] = INT64_MIN + 1;
  }
  return n;
}

static void spec_init(spec *s, tc_dtype dt, int ndim, const int64_t *shape) {
  memset(s, 0, sizeof *s);
  s->dt = dt;
  s->ndim = ndim;
  for (int i = 0; i < ndim; i++) s->shape[i] = shape[i];
  s->data = xmalloc((size_t)spec_numel(s) * tc_dtype_size(dt));
}

static void spec_1d(spec *s, tc_dtype dt, int64_t n) { spec_init(s, dt, 1, &n); }

static void spec_free(spec *s) {
  free(s->data);
  s->data = NULL;
}

/* Value kinds for generated data. */
typedef enum {
  G_RANDOM,     /* ints over the whole range; floats in [-8, 8) */
  G_NONZERO,    /* as RANDOM, never 0 */
  G_SMALL,      /* 0 .. 20 (exponents, shift counts) */
  G_WIDE,       /* floats of every magnitude, with a few specials */
  G_POS,        /* floats in (0, 8) */
  G_BOOL,       /* 0/1 */
} gen_kind;

static void fill(spec *s, gen_kind g) {
  int64_t n = spec_numel(s);
  bool flt = tc_dtype_class(s->dt) == TC_CLASS_FLT;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rnd();
    int64_t iv;
    double fv;
    switch (g) {
    case G_SMALL: iv = (int64_t)(r % 21); fv = (double)iv; break;
    case G_BOOL: iv = (int64_t)(r & 1); fv = (double)iv; break;
    case G_POS: iv = (int64_t)(r % 7) + 1; fv = rnd_unit() * 8 + 0x1p-20; break;
    case G_WIDE: {
      iv = (int64_t)r;
      int k = (int)(r % 64);
      if (k == 0) fv = NAN;
      else if (k == 1) fv = INFINITY;
      else if (k == 2) fv = -0.0;
      else fv = (rnd_unit() * 2 - 1) * pow(2.0, (double)((int)(rnd() % 80) - 40));
      break;
    }
    default:
      iv = (int64_t)r;
      if (tc_dtype_bits(s->dt) < 64 && s->dt != TC_DT_BOOL) {
        int64_t span = imax(s->dt) - imin(s->dt) + 1;
        iv = imin(s->dt) + (int64_t)(r % (uint64_t)span);
      }
      if (s->dt == TC_DT_BOOL) iv &= 1;
      fv = rnd_unit() * 16 - 8;
      if (g == G_NONZERO && iv == 0) iv = 1;
      if (g == G_NONZERO && fv == 0) fv = 0.25;
      break;
    }
    put(s->dt, s->data, i, !flt, iv, fv);
  }
}

/* n edge values, cycling through the list. */
static void fill_edges(spec *s) {
  int64_t n = spec_numel(s), ie[32];
  int ni = int_edges(s->dt, ie);
  for (int64_t i = 0; i < n; i++) {
    if (tc_dtype_class(s->dt) == TC_CLASS_FLT) put(s->dt, s->data, i, false, 0, flt_edges[i % N_FLT_EDGES]);
    else put(s->dt, s->data, i, true, s->dt == TC_DT_BOOL ? (i & 1) : ie[i % ni], 0);
  }
}

/* The edge values of dt as a pair of vectors covering every (a, b). */
static int edge_values(tc_dtype dt, double *fv, int64_t *iv) {
  if (tc_dtype_class(dt) == TC_CLASS_FLT) {
    for (int i = 0; i < N_FLT_EDGES; i++) fv[i] = flt_edges[i];
    return N_FLT_EDGES;
  }
  if (dt == TC_DT_BOOL) { iv[0] = 0; iv[1] = 1; return 2; }
  return int_edges(dt, iv);
}

static void cross(spec *a, spec *b, tc_dtype dt) {
  double fv[64];
  int64_t iv[64];
  int n = edge_values(dt, fv, iv);
  spec_1d(a, dt, (int64_t)n * n);
  spec_1d(b, dt, (int64_t)n * n);
  bool isint = tc_dtype_class(dt) != TC_CLASS_FLT;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      put(dt, a->data, i * n + j, isint, iv[i], fv[i]);
      put(dt, b->data, i * n + j, isint, iv[j], fv[j]);
    }
}

/* ---- one case: an op on both engines ---- */
typedef struct pcase {
  const char *what;
  tc_op op;
  int nin;
  spec in[3];
  tc_dtype to;        /* cast; a constructor's or loader's dtype */
  tc_axes axes;       /* reductions, squeeze, flip */
  bool keepdims;
  int variant;        /* which API entry an op's case goes through */
  tc_overflow policy; /* the integer overflow policy the op runs under (SPEC 13) */
  int nd;             /* shape, perm, starts/sizes arguments */
  int64_t dims[8], dims2[8];
  int64_t iarg[4];    /* axis, k, n/m, ... */
  double farg[2];
  tc_index_mode mode;
  tc_scatter_red red;
  uint64_t seed;
  char path[64];      /* a file written on the CPU, for loaders */
  int64_t kred;       /* matrix products: terms per result (for the sum tolerance) */
  const char *spec;   /* einsum's subscripts */
} pcase;

/* A row's verdict: the first failure wins. */
typedef struct row {
  tc_op op;
  tc_dtype dt;
  int cases, errors;   /* cases run; of them, cases where both engines failed alike */
  bool failed;
  char why[600];
} row;

static void row_fail(row *r, const pcase *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row_fail(row *r, const pcase *c, const char *fmt, ...) {
  if (r->failed) return;
  r->failed = true;
  int n = snprintf(r->why, sizeof r->why, "%s: ", c->what);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why + n, sizeof r->why - (size_t)n, fmt, ap);
  va_end(ap);
}

static tc_tensor *make(tc_engine_id e, const spec *s, tc_err *err) {
  tc_set_engine(s->on_cpu ? TC_ENGINE_CPU : e);
  tc_tensor *t;
  if (s->transposed && s->ndim == 2) {
    int64_t r = s->shape[0], c = s->shape[1], tshape[2] = {c, r};
    size_t es = tc_dtype_size(s->dt);
    unsigned char *tmp = xmalloc((size_t)(r * c) * es);
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++) memcpy(tmp + (size_t)(j * r + i) * es, s->data + (size_t)(i * c + j) * es, es);
    tc_tensor *base = tc_tensor_from_host(s->dt, 2, tshape, tmp, err);
    free(tmp);
    int perm[2] = {1, 0};
    t = base ? tc_view_permute(base, perm, err) : NULL;
    tc_tensor_free(base);
  } else if ((s->flipped || s->strided) && s->ndim > 0) {
    /* the same values, read through negative strides or a stride of 2 */
    size_t es = tc_dtype_size(s->dt);
    int64_t n = spec_numel(s), bshape[4], strides[4], off = 0, st = 1;
    for (int i = 0; i < s->ndim; i++) bshape[i] = s->shape[i];
    if (s->strided) bshape[s->ndim - 1] *= 2;
    for (int i = s->ndim - 1; i >= 0; i--) { strides[i] = st; st *= bshape[i] ? bshape[i] : 1; }
    unsigned char *tmp = xmalloc((size_t)(s->strided ? 2 * n : n) * es);
    for (int64_t i = 0; i < n; i++) {
      if (s->strided) {   /* element i at 2i; the gaps hold its neighbour */
        memcpy(tmp + (size_t)(2 * i) * es, s->data + (size_t)i * es, es);
        memcpy(tmp + (size_t)(2 * i + 1) * es, s->data + (size_t)(n - 1 - i) * es, es);
      } else {
        memcpy(tmp + (size_t)(n - 1 - i) * es, s->data + (size_t)i * es, es);
      }
    }
    tc_tensor *base = tc_tensor_from_host(s->dt, s->ndim, bshape, tmp, err);
    free(tmp);
    if (s->strided) strides[s->ndim - 1] = 2;
    else
      for (int i = 0; i < s->ndim; i++) { off += (s->shape[i] - 1) * strides[i]; strides[i] = -strides[i]; }
    t = base ? tc_view(base, s->ndim, s->shape, strides, off, err) : NULL;
    tc_tensor_free(base);
  } else {
    t = tc_tensor_from_host(s->dt, s->ndim, s->shape, s->data, err);
  }
  if (t) t->weak = s->weak;
  tc_set_engine(e);
  return t;
}

static tc_tensor *apply_family(const pcase *c, tc_tensor **in, tc_err *err);
static tc_tensor *apply_fn(const pcase *c, tc_tensor **in, tc_err *err);

static tc_tensor *apply(const pcase *c, tc_tensor **in, tc_err *err) {
  switch (tc_op_family(c->op)) {
  case TC_FAM_FN: return apply_fn(c, in, err);
  case TC_FAM_SHAPE: case TC_FAM_INDEX: case TC_FAM_CTOR: case TC_FAM_IO:
    return apply_family(c, in, err);
  case TC_FAM_BIN: case TC_FAM_CMP: return tc_binary(c->op, in[0], in[1], err);
  case TC_FAM_SEL: return tc_where(in[0], in[1], in[2], err);
  case TC_FAM_CLIP: return tc_clip(in[0], in[1], in[2], err);
  case TC_FAM_CAST: return tc_cast(in[0], c->to, err);
  case TC_FAM_REDUCE: return tc_reduce(c->op, in[0], &c->axes, c->keepdims, err);
  case TC_FAM_INFO: return tc_contiguous(in[0], err);   /* metadata and a round trip of the data */
  case TC_FAM_MATMUL:
    switch (c->op) {
    case TC_OP_DOT: return tc_dot(in[0], in[1], err);
    case TC_OP_OUTER: return tc_outer(in[0], in[1], err);
    case TC_OP_TENSORDOT: return tc_tensordot(in[0], in[1], c->nd, c->dims, c->dims2, err);
    case TC_OP_TRACE: return tc_trace(in[0], err);
    default: return tc_matmul(in[0], in[1], err);
    }
  case TC_FAM_LINALG:
    switch (c->op) {
    case TC_OP_EINSUM: return tc_einsum(c->spec, c->nin, in, err);
    case TC_OP_SOLVE: return tc_solve(in[0], in[1], err);
    case TC_OP_INV: return tc_inv(in[0], err);
    case TC_OP_DET: return tc_det(in[0], err);
    case TC_OP_CHOLESKY: return tc_cholesky(in[0], err);
    case TC_OP_EIGVALSH: return tc_eigvalsh(in[0], err);
    case TC_OP_SVDVALS: return tc_svdvals(in[0], err);
    case TC_OP_PINV: return tc_pinv(in[0], 1e-15, err);
    case TC_OP_MATRIX_RANK: return tc_matrix_rank(in[0], -1, err);
    default: {
      tc_axes all = {.all = true};
      return tc_norm(in[0], TC_NORM_NONE, 0, &all, false, err);
    }
    }
  default: return tc_unary(c->op, in[0], err);
  }
}

static void fmt_val(char *buf, size_t n, tc_dtype dt, const unsigned char *data, int64_t i) {
  if (tc_dtype_class(dt) == TC_CLASS_FLT) {
    double v = get_f(dt, data, i);
    snprintf(buf, n, "%.17g (0x%llx)", v, (unsigned long long)(dt == TC_DT_F64 ? tc_f64_bits(v) : dt == TC_DT_F32 ? tc_f32_bits((float)v) : dt == TC_DT_F16 ? tc_f64_to_f16(v).bits : tc_f64_to_bf16(v).bits));
  } else {
    snprintf(buf, n, "%lld", (long long)get_i(dt, data, i));
  }
}

static void fmt_index(char *buf, size_t n, const tc_tensor *t, int64_t flat) {
  int64_t idx[TC_MAX_DIMS];
  for (int d = t->ndim - 1; d >= 0; d--) {
    idx[d] = t->shape[d] ? flat % t->shape[d] : 0;
    flat = t->shape[d] ? flat / t->shape[d] : 0;
  }
  tc_format_dims(buf, n, t->ndim, idx);
}

/* sum(|x|) (or its mean) per output of a float sum/mean, on the CPU. */
static unsigned char *abs_sums(const pcase *c, tc_tensor *x) {
  tc_err err;
  tc_err_clear(&err);
  tc_set_engine(TC_ENGINE_CPU);
  tc_tensor *f = tc_cast(x, TC_DT_F64, &err);
  tc_tensor *a = f ? tc_unary(TC_OP_ABS, f, &err) : NULL;
  tc_tensor *s = a ? tc_reduce(c->op, a, &c->axes, c->keepdims, &err) : NULL;
  unsigned char *buf = NULL;
  if (s) {
    buf = xmalloc((size_t)tc_numel(s) * 8);
    if (tc_tensor_to_host(s, buf, &err) != 0) { free(buf); buf = NULL; }
  }
  tc_tensor_free(f);
  tc_tensor_free(a);
  tc_tensor_free(s);
  return buf;
}

/* The same product of the inputs' magnitudes, in f64 on the CPU: each
 * result's sum(|x|) for the sum tolerance of matrix products. */
static unsigned char *abs_products(const pcase *c, tc_tensor **in) {
  tc_err err;
  tc_err_clear(&err);
  tc_set_engine(TC_ENGINE_CPU);
  tc_tensor *a[3] = {0}, *s = NULL;
  bool ok = true;
  for (int i = 0; i < c->nin && ok; i++) {
    tc_tensor *f = tc_cast(in[i], TC_DT_F64, &err);
    a[i] = f ? tc_unary(TC_OP_ABS, f, &err) : NULL;
    tc_tensor_free(f);
    ok = a[i] != NULL;
  }
  if (ok) s = apply(c, a, &err);
  unsigned char *buf = NULL;
  if (s) {
    buf = xmalloc((size_t)tc_numel(s) * 8);
    if (tc_tensor_to_host(s, buf, &err) != 0) { free(buf); buf = NULL; }
  }
  for (int i = 0; i < 3; i++) tc_tensor_free(a[i]);
  tc_tensor_free(s);
  return buf;
}

/* The linear algebra tolerance: libraries (LAPACK on the CPU, cuSOLVER)
 * factor in different orders, so results on the well-conditioned matrices
 * of the suite agree normwise: within 4096 u of the largest result
 * magnitude (u = 2^-53 f64, 2^-24 f32), or 4 u for f16/bf16 results
 * (computed in f32, then rounded once). */
static double la_scale(tc_dtype dt, const unsigned char *b, int64_t n) {
  double mx = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = fabs(get_f(dt, b, i));
    if (isfinite(v) && v > mx) mx = v;
  }
  double u = dt == TC_DT_F64 ? 0x1p-53 : dt == TC_DT_F32 ? 0x1p-24 : dt == TC_DT_F16 ? 0x1p-11 : 0x1p-8;
  return (dt == TC_DT_F64 || dt == TC_DT_F32 ? 4096 : 4) * u * mx;
}

static void compare(row *r, const pcase *c, tc_tensor **in, tc_tensor *o1, tc_tensor *o2) {
  tc_tensor *x = in[0];
  if (tc_tensor_engine(o2) != TC_ENGINE_CUDA) { row_fail(r, c, "the cuda result lives on %s", tc_engine_name(tc_tensor_engine(o2))); return; }
  if (o1->dtype != o2->dtype || o1->ndim != o2->ndim || o1->weak != o2->weak ||
      memcmp(o1->shape, o2->shape, sizeof(int64_t) * (size_t)o1->ndim)) {
    char s1[200], s2[200];
    tc_format_dims(s1, sizeof s1, o1->ndim, o1->shape);
    tc_format_dims(s2, sizeof s2, o2->ndim, o2->shape);
    row_fail(r, c, "cpu gives %s%s%s, cuda %s%s%s", tc_dtype_name(o1->dtype), s1, o1->weak ? " weak" : "",
             tc_dtype_name(o2->dtype), s2, o2->weak ? " weak" : "");
    return;
  }
  int64_t n = tc_numel(o1);
  size_t es = tc_dtype_size(o1->dtype);
  unsigned char *b1 = xmalloc((size_t)n * es), *b2 = xmalloc((size_t)n * es), *sums = NULL;
  tc_err err;
  tc_err_clear(&err);
  if (tc_tensor_to_host(o1, b1, &err) != 0 || tc_tensor_to_host(o2, b2, &err) != 0) {
    row_fail(r, c, "reading results back: %s", err.msg);
    goto done;
  }
  tc_tolerance tol = tc_op_tolerance(c->op, o1->dtype);
  bool mm = tc_op_family(c->op) == TC_FAM_MATMUL || c->op == TC_OP_EINSUM;
  bool la = tc_op_family(c->op) == TC_FAM_LINALG && c->op != TC_OP_EINSUM;
  double lascale = la ? la_scale(o1->dtype, b1, n) : 0;
  int64_t nred = mm ? c->kred : x && n ? tc_numel(x) / n : 0;
  if (tol.sum) sums = mm ? abs_products(c, in) : abs_sums(c, x);
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    if (tc_dtype_class(o1->dtype) != TC_CLASS_FLT) ok = !memcmp(b1 + (size_t)i * es, b2 + (size_t)i * es, es);
    else {
      double v1 = get_f(o1->dtype, b1, i), v2 = get_f(o2->dtype, b2, i);
      if (la) ok = (isnan(v1) && isnan(v2)) || v1 == v2 || fabs(v1 - v2) <= lascale;
      else if (tol.sum) ok = tc_sum_close(o1->dtype, v1, v2, sums ? get_f(TC_DT_F64, sums, i) : INFINITY, nred);
      else if (tol.ulps) ok = tc_ulp_distance(o1->dtype, v1, v2) <= tol.ulps;
      else ok = (isnan(v1) && isnan(v2)) || !memcmp(b1 + (size_t)i * es, b2 + (size_t)i * es, es);
    }
    if (!ok) {
      char at[200], s1[80], s2[80];
      fmt_index(at, sizeof at, o1, i);
      fmt_val(s1, sizeof s1, o1->dtype, b1, i);
      fmt_val(s2, sizeof s2, o2->dtype, b2, i);
      row_fail(r, c, "element %s: cpu %s, cuda %s%s", at, s1, s2,
               la ? " (beyond the linear algebra tolerance)" : tol.ulps ? " (beyond the op's ulp tolerance)"
               : tol.sum ? " (beyond the sum tolerance)" : "");
      break;
    }
  }
done:
  free(b1);
  free(b2);
  free(sums);
}

static void run_case(row *r, pcase *c) {
  tc_tensor *t1[3] = {0}, *t2[3] = {0}, *o1 = NULL, *o2 = NULL;
  tc_err e1, e2;
  tc_err_clear(&e1);
  tc_err_clear(&e2);
  r->cases++;
  for (int i = 0; i < c->nin; i++) {
    t1[i] = make(TC_ENGINE_CPU, &c->in[i], &e1);
    t2[i] = make(TC_ENGINE_CUDA, &c->in[i], &e2);
    if (!t1[i] || !t2[i]) { row_fail(r, c, "making inputs: %s%s", e1.msg, e2.msg); goto done; }
  }
  tc_set_overflow(c->policy);
  tc_set_engine(TC_ENGINE_CPU);
  o1 = apply(c, t1, &e1);
  tc_set_engine(TC_ENGINE_CUDA);
  o2 = apply(c, t2, &e2);
  tc_set_engine(TC_ENGINE_CPU);
  tc_set_overflow(TC_OVERFLOW_WRAP);
  if (!o1 && !o2) {
    r->errors++;
    if (getenv("TCALC_PARITY_TRACE")) printf("  %s: both fail: %s\n", c->what, e1.msg);
    char i1[200] = "", i2[200] = "";
    if (e1.has_index) tc_format_dims(i1, sizeof i1, e1.index_ndim, e1.index);
    if (e2.has_index) tc_format_dims(i2, sizeof i2, e2.index_ndim, e2.index);
    if (e1.code != e2.code || e1.op != e2.op || e1.dtype != e2.dtype || strcmp(i1, i2) || strcmp(e1.msg, e2.msg))
      row_fail(r, c, "cpu fails with %s \"%s\" %s, cuda with %s \"%s\" %s", tc_code_name(e1.code), e1.msg, i1,
               tc_code_name(e2.code), e2.msg, i2);
    else if (e1.engine != TC_ENGINE_CPU || e2.engine != TC_ENGINE_CUDA)
      row_fail(r, c, "errors name engines %d and %d", e1.engine, e2.engine);
  } else if (!o1 || !o2) {
    row_fail(r, c, "only %s fails: %s: %s", o1 ? "cuda" : "cpu", tc_code_name(o1 ? e2.code : e1.code), o1 ? e2.msg : e1.msg);
  } else {
    compare(r, c, t1, o1, o2);
  }
done:
  tc_tensor_free(o1);
  tc_tensor_free(o2);
  for (int i = 0; i < 3; i++) {
    tc_tensor_free(t1[i]);
    tc_tensor_free(t2[i]);
  }
}

/* A case of row r's op (and dtype, for the kinds that take one) with nin
 * operands, to be filled in, then run on both engines and freed. */
static void case_begin(pcase *c, row *r, const char *what, int nin) {
  memset(c, 0, sizeof *c);
  c->what = what;
  c->op = r->op;
  c->nin = nin;
  c->to = r->dt;
}

static void case_free(pcase *c) {
  for (int i = 0; i < c->nin; i++) spec_free(&c->in[i]);
}

static void case_end(row *r, pcase *c) {
  run_case(r, c);
  case_free(c);
}

/* ---- the cases of each kind of row ---- */
static const int64_t sizes[] = {1, 31, 1023, ((int64_t)1 << 20) + 7};
static int nsizes(void) { return quick ? 3 : 4; }

static bool is_int_dt(tc_dtype dt) { return tc_dtype_class(dt) == TC_CLASS_INT; }

/* Makes b a valid right operand for op: no zero divisors, no negative
 * exponents or shift counts (those are the error cases, tested apart). */
static void tame_rhs(tc_op op, spec *b) {
  if (!is_int_dt(b->dt)) return;
  tc_check chk = tc_op_check(op);
  int64_t n = spec_numel(b);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = get_i(b->dt, b->data, i);
    if (chk == TC_CHECK_ZERO && v == 0) put(b->dt, b->data, i, true, 1, 0);
    if ((chk == TC_CHECK_NEGEXP || chk == TC_CHECK_NEGSHIFT) && v < 0 && !tc_dtype_is_unsigned(b->dt)) put(b->dt, b->data, i, true, v == imin(b->dt) ? 5 : -v, 0);
  }
}

static void binary_rows(row *r) {
  tc_op op = r->op;
  tc_dtype dt = r->dt;
  bool is_int = is_int_dt(dt);
  tc_check chk = tc_op_check(op);
  pcase c;
  /* every pair of edge values */
  case_begin(&c, r, "edge x edge", 2);
  cross(&c.in[0], &c.in[1], dt);
  tame_rhs(op, &c.in[1]);
  case_end(r, &c);
  /* the overflow policies (SPEC 13): the same clamped results, or the same first overflowing index */
  if (is_int && (op == TC_OP_ADD || op == TC_OP_SUB || op == TC_OP_MUL || op == TC_OP_POW || op == TC_OP_DIV))
    for (int p = TC_OVERFLOW_CHECK; p <= TC_OVERFLOW_SATURATE; p++) {
      case_begin(&c, r, p == TC_OVERFLOW_CHECK ? "edge x edge, overflow check" : "edge x edge, overflow saturate", 2);
      cross(&c.in[0], &c.in[1], dt);
      tame_rhs(op, &c.in[1]);
      c.policy = (tc_overflow)p;
      case_end(r, &c);
    }
  /* exponents and shift counts over their whole interesting range */
  if (is_int && (chk == TC_CHECK_NEGEXP || chk == TC_CHECK_NEGSHIFT)) {
    int64_t ie[32];
    int ni = int_edges(dt, ie), nb = 70;
    case_begin(&c, r, "edge x count 0..69", 2);
    spec_1d(&c.in[0], dt, (int64_t)ni * nb);
    spec_1d(&c.in[1], dt, (int64_t)ni * nb);
    for (int i = 0; i < ni; i++)
      for (int j = 0; j < nb; j++) {
        put(dt, c.in[0].data, i * nb + j, true, ie[i], 0);
        put(dt, c.in[1].data, i * nb + j, true, j, 0);
      }
    case_end(r, &c);
  }
  /* random data across block boundaries */
  for (int k = 0; k < nsizes(); k++) {
    case_begin(&c, r, k == 3 ? "random, (1<<20)+7 elements" : k == 2 ? "random, 1023 elements" : k == 1 ? "random, 31 elements" : "random, 1 element", 2);
    spec_1d(&c.in[0], dt, sizes[k]);
    spec_1d(&c.in[1], dt, sizes[k]);
    fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
    fill(&c.in[1], dt == TC_DT_BOOL ? G_BOOL : is_int && chk != TC_CHECK_ZERO && chk != TC_CHECK_NONE ? G_SMALL : G_NONZERO);
    tame_rhs(op, &c.in[1]);
    case_end(r, &c);
  }
  /* scalar broadcast both ways (stride 0), weak scalars, and N-D broadcast */
  for (int side = 0; side < 2; side++) {
    case_begin(&c, r, side ? "0-d scalar op tensor" : "tensor op 0-d scalar", 2);
    spec_1d(&c.in[side], dt, 1023);
    fill(&c.in[side], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
    spec_init(&c.in[1 - side], dt, 0, NULL);
    put(dt, c.in[1 - side].data, 0, is_int || dt == TC_DT_BOOL, 3, 2.5);
    if (side) tame_rhs(op, &c.in[1]);
    case_end(r, &c);
  }
  if (dt != TC_DT_BOOL) {
    case_begin(&c, r, "tensor op weak literal 3", 2);
    spec_1d(&c.in[0], dt, 257);
    fill(&c.in[0], G_RANDOM);
    spec_init(&c.in[1], is_int ? TC_DT_I64 : TC_DT_F64, 0, NULL);
    put(c.in[1].dt, c.in[1].data, 0, is_int, 3, 3.0);
    c.in[1].weak = true;
    case_end(r, &c);
  }
  {
    int64_t sa[2] = {37, 1}, sb[2] = {1, 29};
    case_begin(&c, r, "[37,1] op [1,29] broadcast", 2);
    spec_init(&c.in[0], dt, 2, sa);
    spec_init(&c.in[1], dt, 2, sb);
    fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
    fill(&c.in[1], dt == TC_DT_BOOL ? G_BOOL : G_NONZERO);
    tame_rhs(op, &c.in[1]);
    case_end(r, &c);
  }
  {
    int64_t s[2] = {33, 65};
    case_begin(&c, r, "transposed view op contiguous, a CPU operand copied", 2);
    spec_init(&c.in[0], dt, 2, s);
    spec_init(&c.in[1], dt, 2, s);
    fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
    fill(&c.in[1], dt == TC_DT_BOOL ? G_BOOL : G_NONZERO);
    tame_rhs(op, &c.in[1]);
    c.in[0].transposed = true;
    c.in[1].on_cpu = true;
    case_end(r, &c);
  }
  {
    int64_t s0 = 0, s2[2] = {3, 0};
    case_begin(&c, r, "empty [3,0] op [0]", 2);
    spec_init(&c.in[0], dt, 2, s2);
    spec_init(&c.in[1], dt, 1, &s0);
    case_end(r, &c);
  }
  /* the domain pre-check: first, middle and last positions, and through a
   * broadcast (the index is the first result position that reads it) */
  if (is_int && chk != TC_CHECK_NONE) {
    int64_t bad = chk == TC_CHECK_ZERO ? 0 : -1;
    int64_t pos[3] = {0, 511, 1022};
    for (int k = 0; k < 3; k++) {
      case_begin(&c, r, k == 0 ? "pre-check, first element" : k == 1 ? "pre-check, middle element" : "pre-check, last element", 2);
      spec_1d(&c.in[0], dt, 1023);
      spec_1d(&c.in[1], dt, 1023);
      fill(&c.in[0], G_RANDOM);
      fill(&c.in[1], G_SMALL);
      tame_rhs(op, &c.in[1]);
      put(dt, c.in[1].data, pos[k], true, bad, 0);
      if (pos[k] < 1022) put(dt, c.in[1].data, pos[k] + (1023 - pos[k]) / 2, true, bad, 0);   /* a later one must not win */
      case_end(r, &c);
    }
    int64_t sa[2] = {31, 33}, sb[2] = {1, 33};
    case_begin(&c, r, "pre-check through a broadcast", 2);
    spec_init(&c.in[0], dt, 2, sa);
    spec_init(&c.in[1], dt, 2, sb);
    fill(&c.in[0], G_RANDOM);
    fill(&c.in[1], G_SMALL);
    tame_rhs(op, &c.in[1]);
    put(dt, c.in[1].data, 17, true, bad, 0);
    c.in[1].transposed = false;
    case_end(r, &c);
  }
}

static void unary_rows(row *r) {
  pcase c;
  tc_dtype dt = r->dt;
  case_begin(&c, r, "edge values", 1);
  spec_1d(&c.in[0], dt, 200);
  fill_edges(&c.in[0]);
  case_end(r, &c);
  if (is_int_dt(dt) && (r->op == TC_OP_NEG || r->op == TC_OP_ABS))
    for (int p = TC_OVERFLOW_CHECK; p <= TC_OVERFLOW_SATURATE; p++) {
      case_begin(&c, r, p == TC_OVERFLOW_CHECK ? "edge values, overflow check" : "edge values, overflow saturate", 1);
      spec_1d(&c.in[0], dt, 200);
      fill_edges(&c.in[0]);
      c.policy = (tc_overflow)p;
      case_end(r, &c);
    }
  for (int k = 0; k < nsizes(); k++) {
    case_begin(&c, r, k == 3 ? "random, (1<<20)+7 elements" : k == 2 ? "random, 1023 elements" : k == 1 ? "random, 31 elements" : "random, 1 element", 1);
    spec_1d(&c.in[0], dt, sizes[k]);
    fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : k == 2 && tc_dtype_class(dt) == TC_CLASS_FLT ? G_WIDE : G_RANDOM);
    case_end(r, &c);
  }
  if (tc_dtype_class(dt) == TC_CLASS_FLT) {
    case_begin(&c, r, "positive values", 1);
    spec_1d(&c.in[0], dt, 1000);
    fill(&c.in[0], G_POS);
    case_end(r, &c);
  }
  int64_t s[2] = {33, 65}, s0 = 0;
  case_begin(&c, r, "transposed view", 1);
  spec_init(&c.in[0], dt, 2, s);
  fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
  c.in[0].transposed = true;
  case_end(r, &c);
  case_begin(&c, r, "0-d", 1);
  spec_init(&c.in[0], dt, 0, NULL);
  fill(&c.in[0], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
  case_end(r, &c);
  case_begin(&c, r, "empty", 1);
  spec_init(&c.in[0], dt, 1, &s0);
  case_end(r, &c);
}

static void select_rows(row *r) {
  pcase c;
  tc_dtype dt = r->dt;
  bool where = r->op == TC_OP_WHERE;
  for (int k = 0; k < nsizes(); k++) {
    case_begin(&c, r, k == 3 ? "random, (1<<20)+7 elements" : "random", 3);
    for (int i = 0; i < 3; i++) {
      spec_1d(&c.in[i], where && i == 0 ? TC_DT_BOOL : dt, sizes[k]);
      fill(&c.in[i], where && i == 0 ? G_BOOL : dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
    }
    case_end(r, &c);
  }
  int64_t s1[2] = {37, 1}, s2[2] = {1, 29};
  case_begin(&c, r, "[37,1], [1,29], 0-d broadcast", 3);
  spec_init(&c.in[0], where ? TC_DT_BOOL : dt, 2, s1);
  spec_init(&c.in[1], dt, 2, s2);
  spec_init(&c.in[2], dt, 0, NULL);
  for (int i = 0; i < 3; i++) fill(&c.in[i], (where && i == 0) || dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
  case_end(r, &c);
  case_begin(&c, r, "edge values", 3);
  spec_1d(&c.in[0], where ? TC_DT_BOOL : dt, 200);
  spec_1d(&c.in[1], dt, 200);
  spec_1d(&c.in[2], dt, 200);
  if (where) fill(&c.in[0], G_BOOL); else fill_edges(&c.in[0]);
  fill_edges(&c.in[1]);
  fill(&c.in[2], dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
  case_end(r, &c);
}

static void cast_rows(row *r) {
  pcase c;
  for (int to = 0; to < TC_DT_COUNT; to++) {
    for (int k = 0; k < 3; k++) {
      if (k == 1 && quick) continue;
      case_begin(&c, r, k == 0 ? "edge values" : k == 1 ? "random (1<<20)+7" : "transposed view", 1);
      c.to = (tc_dtype)to;
      if (k == 2) {
        int64_t s[2] = {33, 65};
        spec_init(&c.in[0], r->dt, 2, s);
        c.in[0].transposed = true;
      } else {
        spec_1d(&c.in[0], r->dt, k == 0 ? 300 : sizes[3]);
      }
      if (k == 0) fill_edges(&c.in[0]);
      else fill(&c.in[0], r->dt == TC_DT_BOOL ? G_BOOL : tc_dtype_class(r->dt) == TC_CLASS_FLT ? G_WIDE : G_RANDOM);
      case_end(r, &c);
      if (r->failed) return;
    }
  }
}

static void reduce_case(row *r, const char *what, int ndim, const int64_t *shape, int naxes, const int *axes,
                        gen_kind g, bool edges, bool transposed) {
  pcase c;
  case_begin(&c, r, what, 1);
  spec_init(&c.in[0], r->dt, ndim, shape);
  if (edges) fill_edges(&c.in[0]);
  else fill(&c.in[0], r->dt == TC_DT_BOOL ? G_BOOL : g);
  c.in[0].transposed = transposed;
  c.axes.all = naxes < 0;
  c.axes.n = naxes < 0 ? 0 : naxes;
  for (int i = 0; i < c.axes.n; i++) c.axes.axis[i] = axes[i];
  case_end(r, &c);
}

static void reduce_rows(row *r) {
  bool flt = tc_dtype_class(r->dt) == TC_CLASS_FLT;
  bool sum = tc_op_tolerance(r->op, r->dt).sum;   /* reduce_sum, mean, logsumexp (src/reductions.def) */
  /* Float sums overflow differently in different orders, so their edge
   * case keeps to the values whose sums do not depend on the order. */
  if (!(flt && sum)) {
    int64_t n = 97;
    reduce_case(r, "edge values", 1, &n, -1, NULL, G_RANDOM, true, false);
  } else {
    int64_t n = 301;
    reduce_case(r, "wide values with inf, nan, -0", 1, &n, -1, NULL, G_WIDE, false, false);
  }
  for (int k = 0; k < nsizes(); k++) {
    const char *w[] = {"random, 1 element", "random, 31 elements (one thread per row)", "random, 1023 elements (one block per row)",
                       "random, (1<<20)+7 elements (split rows)"};
    reduce_case(r, w[k], 1, &sizes[k], -1, NULL, G_RANDOM, false, false);
  }
  {
    int64_t n = 70001;
    reduce_case(r, "random, 70001 elements (split rows)", 1, &n, -1, NULL, flt ? G_WIDE : G_RANDOM, false, false);
  }
  int64_t s2[2] = {37, 1029}, s3[3] = {4, 5, 6}, sl[2] = {3, quick ? 70001 : 100003}, sm[2] = {1000, 8};
  int a0[1] = {0}, a1[1] = {1}, a2[1] = {2}, a02[2] = {0, 2}, am1[1] = {-1};
  reduce_case(r, "[37,1029] axis 0", 2, s2, 1, a0, G_RANDOM, false, false);
  reduce_case(r, "[37,1029] axis 1", 2, s2, 1, a1, G_RANDOM, false, false);
  reduce_case(r, "[37,1029] all axes", 2, s2, -1, NULL, G_RANDOM, false, false);
  reduce_case(r, "[37,1029] transposed, axis 1", 2, s2, 1, a1, G_RANDOM, false, true);
  reduce_case(r, "[4,5,6] axis 0", 3, s3, 1, a0, G_RANDOM, false, false);
  reduce_case(r, "[4,5,6] axis 1", 3, s3, 1, a1, G_RANDOM, false, false);
  reduce_case(r, "[4,5,6] axis 2", 3, s3, 1, a2, G_RANDOM, false, false);
  reduce_case(r, "[4,5,6] axes (0,2)", 3, s3, 2, a02, G_RANDOM, false, false);
  reduce_case(r, "[3,n] axis -1 (split rows)", 2, sl, 1, am1, G_RANDOM, false, false);
  reduce_case(r, "[1000,8] axis 1 (one thread per row)", 2, sm, 1, a1, G_RANDOM, false, false);
  if (flt) {
    /* where the first NaN and ties land decides max/min/argmax/argmin */
    pcase c;
    case_begin(&c, r, "NaN at 700 and 900 of 1023, ties", 1);
    spec_1d(&c.in[0], r->dt, 1023);
    for (int64_t i = 0; i < 1023; i++) put(r->dt, c.in[0].data, i, false, 0, (double)(i % 5));
    put(r->dt, c.in[0].data, 700, false, 0, NAN);
    put(r->dt, c.in[0].data, 900, false, 0, -NAN);
    c.axes.all = true;
    case_end(r, &c);
    case_begin(&c, r, "+0 and -0 ties", 1);
    spec_1d(&c.in[0], r->dt, 64);
    for (int64_t i = 0; i < 64; i++) put(r->dt, c.in[0].data, i, false, 0, i % 2 ? 0.0 : -0.0);
    c.axes.all = true;
    case_end(r, &c);
  }
  int64_t e0 = 0, e30[2] = {3, 0}, e03[2] = {0, 3};
  reduce_case(r, "empty [0]", 1, &e0, -1, NULL, G_RANDOM, false, false);
  reduce_case(r, "empty [3,0] axis 1", 2, e30, 1, a1, G_RANDOM, false, false);
  reduce_case(r, "empty [0,3] axis 0", 2, e03, 1, a0, G_RANDOM, false, false);
  reduce_case(r, "empty [0,3] axis 1", 2, e03, 1, a1, G_RANDOM, false, false);
}

static void info_rows(row *r) {
  int64_t s[2] = {33, 65}, s0 = 0;
  pcase c;
  case_begin(&c, r, "upload, view, download", 1);
  spec_init(&c.in[0], r->dt, 2, s);
  fill(&c.in[0], r->dt == TC_DT_BOOL ? G_BOOL : G_RANDOM);
  c.in[0].transposed = true;
  case_end(r, &c);
  case_begin(&c, r, "empty", 1);
  spec_init(&c.in[0], r->dt, 1, &s0);
  case_end(r, &c);
}

/* ---- shape ops, indexing, constructors, files ---- */
enum { V_PLAIN, V_GETITEM_INT, V_GETITEM_MASK, V_SETITEM_INT, V_SETITEM_MASK };

static tc_tensor *apply_family(const pcase *c, tc_tensor **in, tc_err *err) {
  tc_tensor *fill = c->nin > 2 ? in[2] : NULL;
  tc_index_item it = {.kind = TC_IDX_TENSOR, .t = c->nin > 1 ? in[1] : NULL};
  switch (c->op) {
  case TC_OP_RESHAPE: return tc_reshape(in[0], c->nd, c->dims, err);
  case TC_OP_TRANSPOSE: return tc_transpose(in[0], c->nd, c->dims, err);
  case TC_OP_EXPAND_DIMS: return tc_expand_dims(in[0], c->iarg[0], err);
  case TC_OP_SQUEEZE: return tc_squeeze(in[0], &c->axes, err);
  case TC_OP_FLATTEN: return tc_flatten(in[0], err);
  case TC_OP_BROADCAST_TO: return tc_broadcast_to(in[0], c->nd, c->dims, err);
  case TC_OP_CONCAT: return tc_concat(c->nin, in, c->iarg[0], err);
  case TC_OP_STACK: return tc_stack(c->nin, in, c->iarg[0], err);
  case TC_OP_FLIP: return tc_flip(in[0], &c->axes, err);
  case TC_OP_TRIL: case TC_OP_TRIU: return tc_tri(c->op, in[0], c->iarg[0], err);
  case TC_OP_DIAG: return tc_diag(in[0], c->iarg[0], err);
  case TC_OP_TAKE:
    if (c->variant == V_GETITEM_INT || c->variant == V_GETITEM_MASK) return tc_getitem(in[0], 1, &it, err);
    return tc_take(in[0], in[1], c->iarg[0], c->mode, fill, err);
  case TC_OP_TAKE_ALONG_AXIS: return tc_take_along_axis(in[0], in[1], c->iarg[0], c->mode, fill, err);
  case TC_OP_DYNAMIC_SLICE: return tc_dynamic_slice(in[0], c->nd, c->dims, c->nd, c->dims2, err);
  case TC_OP_SCATTER:
    if (c->variant == V_SETITEM_INT || c->variant == V_SETITEM_MASK) return tc_setitem(in[0], 1, &it, in[2], err);
    return tc_scatter(in[0], in[1], in[2], c->iarg[0], c->red, c->mode, err);
  case TC_OP_ZEROS: return tc_zeros(c->nd, c->dims, c->to, err);
  case TC_OP_ONES: return tc_ones(c->nd, c->dims, c->to, err);
  case TC_OP_FULL: return tc_full(c->nd, c->dims, in[0], (int)c->to, err);
  case TC_OP_ARANGE: return tc_arange(in[0], c->nin > 1 ? in[1] : NULL, c->nin > 2 ? in[2] : NULL, (int)c->to, err);
  case TC_OP_LINSPACE: return tc_linspace(c->farg[0], c->farg[1], c->iarg[0], c->to, err);
  case TC_OP_EYE: return tc_eye(c->iarg[0], c->iarg[1], c->iarg[2], c->to, err);
  case TC_OP_RAND: return tc_random(TC_DIST_UNIFORM, c->nd, c->dims, c->seed, 0, 0, err);
  case TC_OP_RANDN: return tc_random(TC_DIST_NORMAL, c->nd, c->dims, c->seed, 0, 0, err);
  case TC_OP_RANDINT: return tc_random(TC_DIST_INT, c->nd, c->dims, c->seed, c->iarg[0], c->iarg[1], err);
  case TC_OP_LOAD: return tc_load_npy(c->path, err);
  case TC_OP_LOAD_NPZ: return tc_load_npz(c->path, "x", err);
  case TC_OP_LOAD_CSV: return tc_load_csv(c->path, c->to, err);
  case TC_OP_LOAD_JSON: return tc_load_json(c->path, err);
  case TC_OP_FROM_JSON: {   /* the text of the same file */
    FILE *f = fopen(c->path, "rb");
    char *text = NULL;
    size_t n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = (size_t)ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc(n + 1)) && fread(text, 1, n, f) == n) {
      text[n] = 0;
      tc_tensor *t = tc_from_json(text, n, TC_OP_FROM_JSON, err);
      free(text);
      fclose(f);
      return t;
    }
    free(text);
    if (f) fclose(f);
    tc_err_set(err, TC_E_IO, (int)c->op, -1, "cannot read %s", c->path);
    return NULL;
  }
  case TC_OP_SAVE: case TC_OP_SAVE_CSV: case TC_OP_SAVE_NPZ: {
    /* written from this engine, read back on the CPU */
    char path[sizeof c->path + 8];
    snprintf(path, sizeof path, "%s.%s", c->path, tc_engine_name(tc_get_engine()));
    const char *name = "x";
    int rc = c->op == TC_OP_SAVE ? tc_save_npy(path, in[0], err)
             : c->op == TC_OP_SAVE_NPZ ? tc_save_npz(path, 1, &name, &in[0], err) : tc_save_csv(path, in[0], err);
    if (rc != 0) return NULL;
    tc_engine_id e = tc_get_engine();
    tc_set_engine(TC_ENGINE_CPU);
    tc_tensor *back = c->op == TC_OP_SAVE ? tc_load_npy(path, err)
                      : c->op == TC_OP_SAVE_NPZ ? tc_load_npz(path, name, err) : tc_load_csv(path, in[0]->dtype, err);
    tc_set_engine(e);
    remove(path);
    tc_tensor *moved = back ? tc_to_engine(back, e, err) : NULL;
    tc_tensor_free(back);
    return moved;
  }
  default:
    tc_err_set(err, TC_E_DTYPE, (int)c->op, -1, "the parity suite has no case for %s", tc_op_name(c->op));
    return NULL;
  }
}

static void x_spec(spec *s, tc_dtype dt, int ndim, const int64_t *shape, bool transposed) {
  spec_init(s, dt, ndim, shape);
  fill(s, dt == TC_DT_BOOL ? G_BOOL : tc_dtype_class(dt) == TC_CLASS_FLT ? G_WIDE : G_RANDOM);
  s->transposed = transposed;
}

/* An index tensor of dtype dt with values in [lo, hi). */
static void idx_spec(spec *s, tc_dtype dt, int ndim, const int64_t *shape, int64_t lo, int64_t hi) {
  spec_init(s, dt, ndim, shape);
  int64_t n = spec_numel(s);
  for (int64_t i = 0; i < n; i++) put(dt, s->data, i, true, lo + (int64_t)(rnd() % (uint64_t)(hi - lo)), 0);
}

static void shape_rows(row *r) {
  tc_dtype dt = r->dt;
  pcase c;
  int64_t s2[2] = {6, 35}, s3[3] = {4, 5, 6}, s0 = 0, col[2] = {3, 1}, m[2] = {5, 7}, b3[3] = {2, 5, 7};
  switch (r->op) {
  case TC_OP_RESHAPE:
    case_begin(&c, r, "transposed [6,35] to [5,42]", 1);
    x_spec(&c.in[0], dt, 2, s2, true);
    c.nd = 2; c.dims[0] = 5; c.dims[1] = -1;
    case_end(r, &c);
    case_begin(&c, r, "empty [0] to [0,3]", 1);
    x_spec(&c.in[0], dt, 1, &s0, false);
    c.nd = 2; c.dims[0] = 0; c.dims[1] = 3;
    case_end(r, &c);
    break;
  case TC_OP_TRANSPOSE:
    case_begin(&c, r, "[4,5,6] perm (2,0,1)", 1);
    x_spec(&c.in[0], dt, 3, s3, false);
    c.nd = 3; c.dims[0] = 2; c.dims[1] = 0; c.dims[2] = 1;
    case_end(r, &c);
    case_begin(&c, r, "[6,35] reversed", 1);
    x_spec(&c.in[0], dt, 2, s2, false);
    c.nd = -1;
    case_end(r, &c);
    break;
  case TC_OP_EXPAND_DIMS:
    case_begin(&c, r, "[4,5,6] axis -2", 1);
    x_spec(&c.in[0], dt, 3, s3, false);
    c.iarg[0] = -2;
    case_end(r, &c);
    break;
  case TC_OP_SQUEEZE:
    case_begin(&c, r, "[3,1] all", 1);
    x_spec(&c.in[0], dt, 2, col, false);
    c.axes.all = true;
    case_end(r, &c);
    break;
  case TC_OP_FLATTEN:
    case_begin(&c, r, "transposed [6,35]", 1);
    x_spec(&c.in[0], dt, 2, s2, true);
    case_end(r, &c);
    break;
  case TC_OP_BROADCAST_TO:
    case_begin(&c, r, "[3,1] to [4,3,5]", 1);
    x_spec(&c.in[0], dt, 2, col, false);
    c.nd = 3; c.dims[0] = 4; c.dims[1] = 3; c.dims[2] = 5;
    case_end(r, &c);
    break;
  case TC_OP_CONCAT: case TC_OP_STACK:
    for (int axis = 0; axis < 2; axis++) {
      case_begin(&c, r, axis ? "three [6,35] along axis 1, one transposed" : "three [6,35] along axis 0, one transposed", 3);
      for (int i = 0; i < 3; i++) x_spec(&c.in[i], dt, 2, s2, i == 1);
      c.iarg[0] = axis;
      case_end(r, &c);
    }
    break;
  case TC_OP_FLIP:
    case_begin(&c, r, "[4,5,6] all axes (negative strides)", 1);
    x_spec(&c.in[0], dt, 3, s3, false);
    c.axes.all = true;
    case_end(r, &c);
    case_begin(&c, r, "[4,5,6] axis 1", 1);
    x_spec(&c.in[0], dt, 3, s3, false);
    c.axes.n = 1; c.axes.axis[0] = 1;
    case_end(r, &c);
    break;
  case TC_OP_TRIL: case TC_OP_TRIU: {
    int64_t ks[3] = {0, 2, -1};
    for (int k = 0; k < 3; k++) {
      case_begin(&c, r, k == 0 ? "[5,7] k=0" : k == 1 ? "[2,5,7] k=2" : "transposed [5,7] k=-1", 1);
      x_spec(&c.in[0], dt, k == 1 ? 3 : 2, k == 1 ? b3 : m, k == 2);
      c.iarg[0] = ks[k];
      case_end(r, &c);
    }
    break;
  }
  case TC_OP_DIAG: {
    int64_t v = 9;
    case_begin(&c, r, "1-D [9] k=1 (a matrix)", 1);
    x_spec(&c.in[0], dt, 1, &v, false);
    c.iarg[0] = 1;
    case_end(r, &c);
    case_begin(&c, r, "transposed [5,7] k=-1 (a diagonal)", 1);
    x_spec(&c.in[0], dt, 2, m, true);
    c.iarg[0] = -1;
    case_end(r, &c);
    break;
  }
  default: break;
  }
}

static void index_rows(row *r) {
  tc_dtype dt = r->dt;
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT;
  pcase c;
  int64_t xs[2] = {7, 9}, ns = 40, big = 100, many = 5000, is2[2] = {7, 4}, is0[2] = {4, 9}, us[2] = {7, 40};
  const tc_dtype idts[4] = {TC_DT_I64, TC_DT_I32, TC_DT_I16, TC_DT_I8};
  switch (r->op) {
  case TC_OP_TAKE: {
    const tc_index_mode modes[4] = {TC_MODE_ERROR, TC_MODE_CLIP, TC_MODE_WRAP, TC_MODE_FILL};
    const char *w[4] = {"axis 1, mode error", "axis 1, mode clip", "axis 1, mode wrap", "axis 1, mode fill"};
    for (int k = 0; k < 4; k++) {
      case_begin(&c, r, w[k], k == 3 ? 3 : 2);
      x_spec(&c.in[0], dt, 2, xs, k == 1);
      if (k == 0) idx_spec(&c.in[1], idts[k], 1, &ns, -9, 9);
      else idx_spec(&c.in[1], idts[k], 1, &ns, -20, 20);
      if (k == 3) {
        spec_init(&c.in[2], dt, 0, NULL);
        put(dt, c.in[2].data, 0, !flt, 1, -7.5);
      }
      c.iarg[0] = 1;
      c.mode = modes[k];
      case_end(r, &c);
    }
    case_begin(&c, r, "mode error, out of bounds at [23]", 2);
    x_spec(&c.in[0], dt, 2, xs, false);
    idx_spec(&c.in[1], TC_DT_I64, 1, &ns, -7, 7);
    put(TC_DT_I64, c.in[1].data, 23, true, 7, 0);
    case_end(r, &c);
    case_begin(&c, r, "x[idx] with an i32 index", 2);
    c.variant = V_GETITEM_INT;
    x_spec(&c.in[0], dt, 2, xs, false);
    idx_spec(&c.in[1], TC_DT_I32, 1, &ns, -7, 7);
    case_end(r, &c);
    case_begin(&c, r, "x[mask] (nonzero)", 2);
    c.variant = V_GETITEM_MASK;
    x_spec(&c.in[0], dt, 2, xs, false);
    spec_init(&c.in[1], TC_DT_BOOL, 2, xs);
    fill(&c.in[1], G_BOOL);
    case_end(r, &c);
    if (!quick) {
      int64_t n = ((int64_t)1 << 20) + 7;
      case_begin(&c, r, "x[mask] over (1<<20)+7 elements", 2);
      c.variant = V_GETITEM_MASK;
      x_spec(&c.in[0], dt, 1, &n, false);
      spec_init(&c.in[1], TC_DT_BOOL, 1, &n);
      fill(&c.in[1], G_BOOL);
      case_end(r, &c);
    }
    break;
  }
  case TC_OP_TAKE_ALONG_AXIS:
    case_begin(&c, r, "[7,9] with [7,4] along axis 1", 2);
    x_spec(&c.in[0], dt, 2, xs, true);
    idx_spec(&c.in[1], TC_DT_I64, 2, is2, -9, 9);
    c.iarg[0] = 1;
    case_end(r, &c);
    case_begin(&c, r, "mode wrap, axis 0", 2);
    x_spec(&c.in[0], dt, 2, xs, false);
    idx_spec(&c.in[1], TC_DT_I16, 2, is0, -30, 30);
    c.mode = TC_MODE_WRAP;
    case_end(r, &c);
    break;
  case TC_OP_DYNAMIC_SLICE:
    case_begin(&c, r, "[7,9] starts (-3, 5) sizes (4, 6)", 1);
    x_spec(&c.in[0], dt, 2, xs, true);
    c.nd = 2; c.dims[0] = -3; c.dims[1] = 5; c.dims2[0] = 4; c.dims2[1] = 6;
    case_end(r, &c);
    break;
  case TC_OP_SCATTER: {
    for (int red = 0; red <= TC_SCATTER_MIN; red++) {
      if (dt == TC_DT_BOOL && (red == TC_SCATTER_ADD || red == TC_SCATTER_MUL)) continue;
      const tc_index_mode modes[3] = {TC_MODE_ERROR, TC_MODE_DROP, TC_MODE_CLIP};
      for (int k = 0; k < 3; k++) {
        static char what[3][TC_SCATTER_MIN + 1][80];
        snprintf(what[k][red], sizeof what[k][red], "[7,9] along axis 1, 40 duplicate indices, %s, mode %s",
                 tc_scatter_red_name((tc_scatter_red)red), tc_index_mode_name(modes[k]));
        case_begin(&c, r, what[k][red], 3);
        x_spec(&c.in[0], dt, 2, xs, k == 2);
        idx_spec(&c.in[1], idts[k], 1, &ns, k ? -12 : -9, k ? 12 : 9);
        x_spec(&c.in[2], dt, 2, us, false);
        c.iarg[0] = 1;
        c.red = (tc_scatter_red)red;
        c.mode = modes[k];
        case_end(r, &c);
      }
      static char what1[TC_SCATTER_MIN + 1][80];
      snprintf(what1[red], sizeof what1[red], "1-D [100], 5000 duplicate indices, %s", tc_scatter_red_name((tc_scatter_red)red));
      case_begin(&c, r, what1[red], 3);
      x_spec(&c.in[0], dt, 1, &big, false);
      idx_spec(&c.in[1], TC_DT_I64, 1, &many, -100, 100);
      x_spec(&c.in[2], dt, 1, &many, false);
      c.red = (tc_scatter_red)red;
      case_end(r, &c);
    }
    case_begin(&c, r, "mode error, out of bounds at [17]", 3);
    x_spec(&c.in[0], dt, 2, xs, false);
    idx_spec(&c.in[1], TC_DT_I64, 1, &ns, 0, 9);
    put(TC_DT_I64, c.in[1].data, 17, true, -10, 0);
    x_spec(&c.in[2], dt, 0, NULL, false);
    c.iarg[0] = 1;
    case_end(r, &c);
    case_begin(&c, r, "x[idx] = 0-d value", 3);
    c.variant = V_SETITEM_INT;
    x_spec(&c.in[0], dt, 2, xs, false);
    idx_spec(&c.in[1], TC_DT_I64, 1, &ns, -7, 7);
    x_spec(&c.in[2], dt, 0, NULL, false);
    case_end(r, &c);
    case_begin(&c, r, "x[mask] = 0-d value", 3);
    c.variant = V_SETITEM_MASK;
    x_spec(&c.in[0], dt, 2, xs, false);
    spec_init(&c.in[1], TC_DT_BOOL, 2, xs);
    fill(&c.in[1], G_BOOL);
    x_spec(&c.in[2], dt, 0, NULL, false);
    case_end(r, &c);
    break;
  }
  default: break;
  }
}

static void ctor_rows(row *r) {
  tc_dtype dt = r->dt;
  bool isint = tc_dtype_class(dt) != TC_CLASS_FLT;
  pcase c;
  switch (r->op) {
  case TC_OP_ZEROS: case TC_OP_ONES:
    case_begin(&c, r, "[3,1000]", 0);
    c.nd = 2; c.dims[0] = 3; c.dims[1] = 1000;
    case_end(r, &c);
    break;
  case TC_OP_FULL:
    case_begin(&c, r, "[3,1000] of a weak 3", 1);
    c.nd = 2; c.dims[0] = 3; c.dims[1] = 1000;
    spec_init(&c.in[0], TC_DT_I64, 0, NULL);
    put(TC_DT_I64, c.in[0].data, 0, true, 3, 0);
    c.in[0].weak = true;
    case_end(r, &c);
    case_begin(&c, r, "[4,5] broadcast from a [5] of the dtype", 1);
    c.nd = 2; c.dims[0] = 4; c.dims[1] = 5;
    c.to = (tc_dtype)-1;
    x_spec(&c.in[0], dt, 1, &c.dims[1], false);
    case_end(r, &c);
    break;
  case TC_OP_ARANGE:
    for (int k = 0; k < 2; k++) {
      case_begin(&c, r, k ? "start, stop, step of the dtype's class" : "arange(1000)", k ? 3 : 1);
      for (int i = 0; i < c.nin; i++) {
        spec_init(&c.in[i], isint ? TC_DT_I64 : TC_DT_F64, 0, NULL);
        c.in[i].weak = true;
      }
      put(c.in[0].dt, c.in[0].data, 0, isint, k ? -37 : 1000, k ? -3.25 : 1000.0);
      if (k) {
        put(c.in[1].dt, c.in[1].data, 0, isint, 100000, 700.5);
        put(c.in[2].dt, c.in[2].data, 0, isint, 3, 0.375);
      }
      case_end(r, &c);
    }
    break;
  case TC_OP_LINSPACE:
    for (int k = 0; k < 2; k++) {
      case_begin(&c, r, k ? "(-3, 7, 1)" : "(0.1, 1e3, 1001)", 0);
      c.farg[0] = k ? -3 : 0.1;
      c.farg[1] = k ? 7 : 1e3;
      c.iarg[0] = k ? 1 : 1001;
      case_end(r, &c);
    }
    break;
  case TC_OP_EYE:
    case_begin(&c, r, "7 x 9, k=1", 0);
    c.iarg[0] = 7; c.iarg[1] = 9; c.iarg[2] = 1;
    case_end(r, &c);
    break;
  case TC_OP_RAND: case TC_OP_RANDN: case TC_OP_RANDINT:
    for (int k = 0; k < 2; k++) {
      if (k && quick) continue;
      case_begin(&c, r, k ? "(1<<20)+7 values, seed 2^40+3" : "[3,333], seed 42", 0);
      c.nd = k ? 1 : 2;
      c.dims[0] = k ? ((int64_t)1 << 20) + 7 : 3;
      c.dims[1] = 333;
      c.seed = k ? ((uint64_t)1 << 40) + 3 : 42;
      c.iarg[0] = k ? INT64_MIN : -5;
      c.iarg[1] = k ? INT64_MAX : 17;
      case_end(r, &c);
    }
    break;
  default: break;
  }
}

/* t (CPU, contiguous) as tcalc's JSON object: the parity suite has no printer. */
static void json_nest(FILE *f, const tc_tensor *t, const unsigned char *p, int d, int64_t *k) {
  if (d == t->ndim) {
    const void *e = p + (size_t)(*k)++ * tc_dtype_size(t->dtype);
    tc_class cl = tc_dtype_class(t->dtype);
    double v = tc_dtype_load_f64(t->dtype, e);
    if (cl == TC_CLASS_BOOL) fputs(*(const uint8_t *)e ? "true" : "false", f);
    else if (cl == TC_CLASS_INT && tc_dtype_is_unsigned(t->dtype))   /* u64 above the i64 maximum */
      fprintf(f, "%llu", (unsigned long long)(uint64_t)tc_dtype_load_i64(t->dtype, e));
    else if (cl == TC_CLASS_INT) fprintf(f, "%lld", (long long)tc_dtype_load_i64(t->dtype, e));
    else if (isnan(v)) fputs("\"nan\"", f);
    else if (isinf(v)) fputs(v < 0 ? "\"-inf\"" : "\"inf\"", f);
    else fprintf(f, "%.17g", v);   /* exact for every float dtype */
    return;
  }
  fputc('[', f);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (i) fputc(',', f);
    json_nest(f, t, p, d + 1, k);
  }
  fputc(']', f);
}

static int write_json(const char *path, tc_tensor *t, tc_err *err) {
  tc_tensor *c = tc_contiguous(t, err);
  FILE *f = c ? fopen(path, "w") : NULL;
  if (!f) { tc_tensor_free(c); return tc_err_set(err, TC_E_IO, -1, -1, "cannot write %s", path); }
  fprintf(f, "{\"dtype\":\"%s\",\"shape\":[", tc_dtype_name(c->dtype));
  for (int d = 0; d < c->ndim; d++) fprintf(f, d ? ",%lld" : "%lld", (long long)c->shape[d]);
  fputs("],\"data\":", f);
  int64_t k = 0;
  json_nest(f, c, tc_tensor_host_data(c), 0, &k);
  fputs("}\n", f);
  tc_tensor_free(c);
  return fclose(f) == 0 ? 0 : tc_err_set(err, TC_E_IO, -1, -1, "cannot write %s", path);
}

static void io_rows(row *r) {
  pcase c;
  int64_t s[2] = {33, 65};
  bool json = r->op == TC_OP_LOAD_JSON || r->op == TC_OP_FROM_JSON;
  bool npz = r->op == TC_OP_LOAD_NPZ || r->op == TC_OP_SAVE_NPZ;
  bool load = r->op == TC_OP_LOAD || r->op == TC_OP_LOAD_CSV || r->op == TC_OP_LOAD_NPZ || json;
  case_begin(&c, r, load ? "a file written on the CPU" : "written from each engine, read on the CPU", load ? 0 : 1);
  snprintf(c.path, sizeof c.path, "/tmp/tcalc-parity-%d.%s", (int)getpid(),
           json ? "json" : npz ? "npz" : r->op == TC_OP_LOAD || r->op == TC_OP_SAVE ? "npy" : "csv");
  spec x;
  x_spec(&x, r->dt, 2, s, true);
  if (load) {
    tc_err err;
    tc_err_clear(&err);
    tc_tensor *t = make(TC_ENGINE_CPU, &x, &err);
    const char *name = "x";
    int rc = !t ? -1 : json ? write_json(c.path, t, &err) : npz ? tc_save_npz(c.path, 1, &name, &t, &err)
             : r->op == TC_OP_LOAD ? tc_save_npy(c.path, t, &err) : tc_save_csv(c.path, t, &err);
    tc_tensor_free(t);
    spec_free(&x);
    if (rc != 0) { row_fail(r, &c, "writing the file: %s", err.msg); return; }
  } else {
    c.in[0] = x;
  }
  case_end(r, &c);
  if (load) remove(c.path);
}

/* ---- matrix products ---- */
enum { MM_T = 1, MM_FLIP = 2, MM_STEP = 4, MM_EDGE = 8, MM_WIDE = 16 };

/* An operand: random values of the dtype (ints over their whole range),
 * edge values, or floats of every magnitude with NaN, inf and -0; made as a
 * transposed, flipped or strided view when asked. */
static void mm_spec(spec *s, tc_dtype dt, int nd, const int64_t *shape, int flags) {
  spec_init(s, dt, nd, shape);
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT;
  if ((flags & MM_EDGE) && !flt) fill_edges(s);
  else fill(s, dt == TC_DT_BOOL ? G_BOOL : flt && (flags & (MM_EDGE | MM_WIDE)) ? G_WIDE : G_RANDOM);
  s->transposed = (flags & MM_T) && nd == 2;
  s->flipped = (flags & MM_FLIP) != 0;
  s->strided = (flags & MM_STEP) != 0;
}

/* a (shape sa) op b (shape sb); kred: terms per result. */
static void mm_case(row *r, const char *what, int nda, const int64_t *sa, int fa, int ndb, const int64_t *sb, int fb,
                    int64_t kred) {
  pcase c;
  case_begin(&c, r, what, 2);
  mm_spec(&c.in[0], r->dt, nda, sa, fa);
  mm_spec(&c.in[1], r->dt, ndb, sb, fb);
  c.kred = kred;
  case_end(r, &c);
}

static void tensordot_case(row *r, const char *what, int nda, const int64_t *sa, int ndb, const int64_t *sb, int n,
                           const int64_t *xa, const int64_t *xb, int64_t kred) {
  pcase c;
  case_begin(&c, r, what, 2);
  mm_spec(&c.in[0], r->dt, nda, sa, 0);
  mm_spec(&c.in[1], r->dt, ndb, sb, MM_T);
  c.nd = n;
  for (int i = 0; i < n; i++) { c.dims[i] = xa[i]; c.dims2[i] = xb[i]; }
  c.kred = kred;
  case_end(r, &c);
}

static void trace_case(row *r, const char *what, int nd, const int64_t *shape, int flags) {
  pcase c;
  case_begin(&c, r, what, 1);
  mm_spec(&c.in[0], r->dt, nd, shape, flags);
  c.kred = shape[0] < shape[1] ? shape[0] : shape[1];
  case_end(r, &c);
}

/* Shapes cross the CUDA kernel's 64 x 64 tiles and 16-deep k steps; views
 * (transposed, flipped, strided) reach cuBLAS as its transposes or are
 * packed first; batch dims broadcast with stride 0 and do not merge. */
static void matmul_rows(row *r) {
  bool flt = tc_dtype_class(r->dt) == TC_CLASS_FLT;
  switch (r->op) {
  case TC_OP_MATMUL: {
    int64_t a1[2] = {17, 23}, b1[2] = {23, 19}, a2[2] = {65, 17}, b2[2] = {17, 130}, one[2] = {1, 1};
    int64_t a3[2] = {130, 70}, b3[2] = {70, 66}, a4[2] = {3, 1000}, b4[2] = {1000, 5}, v[1] = {37};
    int64_t m5[2] = {5, 37}, b5[2] = {37, 5}, a6[4] = {3, 1, 5, 7}, b6[3] = {4, 7, 6}, a7[4] = {2, 3, 4, 5}, v7[1] = {5};
    int64_t a8[3] = {500, 3, 4}, b8[3] = {500, 4, 2}, a9[2] = {3, 0}, b9[2] = {0, 4}, a10[2] = {0, 5}, b10[2] = {5, 3};
    int64_t e1[2] = {2, 3}, e2[2] = {4, 5}, a11[3] = {3, 33, 40}, b11[2] = {40, 65};
    mm_case(r, flt ? "[17,23] @ [23,19], wide values with inf, nan, -0" : "[17,23] @ [23,19], edge values", 2, a1,
            MM_EDGE, 2, b1, MM_EDGE, 23);
    mm_case(r, "[65,17] @ [17,130]", 2, a2, 0, 2, b2, 0, 17);
    mm_case(r, "[1,1] @ [1,1]", 2, one, 0, 2, one, 0, 1);
    mm_case(r, "[130,70] @ [70,66]", 2, a3, 0, 2, b3, 0, 70);
    mm_case(r, "[130,70] transposed @ [70,66]", 2, a3, MM_T, 2, b3, 0, 70);
    mm_case(r, "[130,70] @ [70,66] transposed", 2, a3, 0, 2, b3, MM_T, 70);
    mm_case(r, "[130,70] transposed @ [70,66] transposed", 2, a3, MM_T, 2, b3, MM_T, 70);
    mm_case(r, "[130,70] flipped @ [70,66] strided (packed for cuBLAS)", 2, a3, MM_FLIP, 2, b3, MM_STEP, 70);
    mm_case(r, "[3,1000] @ [1000,5] (long k)", 2, a4, 0, 2, b4, 0, 1000);
    mm_case(r, "[37] @ [37,5]", 1, v, 0, 2, b5, 0, 37);
    mm_case(r, "[5,37] @ [37]", 2, m5, 0, 1, v, 0, 37);
    mm_case(r, "[37] @ [37] flipped", 1, v, 0, 1, v, MM_FLIP, 37);
    mm_case(r, "[3,1,5,7] @ [4,7,6] (batch broadcast)", 4, a6, 0, 3, b6, 0, 7);
    mm_case(r, "[2,3,4,5] @ [5]", 4, a7, 0, 1, v7, 0, 5);
    mm_case(r, "[3,33,40] flipped @ [40,65] (batch over a flipped stack)", 3, a11, MM_FLIP, 2, b11, 0, 40);
    mm_case(r, "[500,3,4] @ [500,4,2] (many small products)", 3, a8, 0, 3, b8, 0, 4);
    mm_case(r, "[3,0] @ [0,4] (k = 0: zeros)", 2, a9, 0, 2, b9, 0, 0);
    mm_case(r, "[0,5] @ [5,3] (empty)", 2, a10, 0, 2, b10, 0, 5);
    mm_case(r, "[2,3] @ [4,5] (inner dimensions differ)", 2, e1, 0, 2, e2, 0, 3);
    if (!quick) {
      int64_t al[2] = {257, 1031}, bl[2] = {1031, 263};
      mm_case(r, "[257,1031] @ [1031,263]", 2, al, 0, 2, bl, 0, 1031);
      mm_case(r, "[257,1031] transposed @ [1031,263]", 2, al, MM_T, 2, bl, MM_WIDE, 1031);
    }
    break;
  }
  case TC_OP_DOT: {
    int64_t v[1] = {37}, m[2] = {5, 37}, mt[2] = {37, 5}, a[2] = {4, 5}, b[2] = {5, 6}, a3[3] = {2, 3, 4}, b3[3] = {5, 4, 6};
    mm_case(r, "[37] . [37]", 1, v, 0, 1, v, 0, 37);
    mm_case(r, "[5,37] . [37]", 2, m, 0, 1, v, 0, 37);
    mm_case(r, "[37] . [37,5] transposed", 1, v, 0, 2, mt, MM_T, 37);
    mm_case(r, flt ? "[4,5] . [5,6], wide values" : "[4,5] . [5,6], edge values", 2, a, MM_EDGE, 2, b, MM_EDGE, 5);
    mm_case(r, "[2,3,4] . [5,4,6] (over a's last and b's second-to-last axis)", 3, a3, 0, 3, b3, 0, 4);
    mm_case(r, "0-d . [37] (a multiply)", 0, v, 0, 1, v, 0, 1);
    break;
  }
  case TC_OP_OUTER: {
    int64_t v[1] = {37}, w[1] = {29}, m[2] = {3, 4}, e[1] = {0};
    mm_case(r, flt ? "[37] x [29], wide values" : "[37] x [29], edge values", 1, v, MM_EDGE, 1, w, MM_EDGE, 1);
    mm_case(r, "[3,4] transposed x [29] (flattened)", 2, m, MM_T, 1, w, 0, 1);
    mm_case(r, "[37] flipped x [0]", 1, v, MM_FLIP, 1, e, 0, 1);
    break;
  }
  case TC_OP_TENSORDOT: {
    int64_t a[3] = {3, 4, 5}, b[3] = {4, 5, 6}, a2[3] = {4, 3, 5}, b2[3] = {5, 4, 6}, m[2] = {6, 7}, n[2] = {8, 9};
    int64_t xa[2] = {1, 2}, xb[2] = {0, 1}, xa2[2] = {0, 2}, xb2[2] = {1, 0};
    tensordot_case(r, "[3,4,5] . [4,5,6] over 2 axes", 3, a, 3, b, 2, xa, xb, 20);
    tensordot_case(r, "[4,3,5] . [5,4,6] over a (0, 2) with b (1, 0)", 3, a2, 3, b2, 2, xa2, xb2, 20);
    tensordot_case(r, "[6,7] . [8,9] over 0 axes (an outer product)", 2, m, 2, n, 0, xa, xb, 1);
    break;
  }
  case TC_OP_TRACE: {
    int64_t s1[2] = {7, 7}, s2[2] = {5, 9}, s3[3] = {4, 4, 3}, s4[2] = {0, 3}, s5[2] = {200, 200};
    trace_case(r, flt ? "[7,7], wide values" : "[7,7], edge values", 2, s1, MM_EDGE);
    trace_case(r, "[5,9] transposed", 2, s2, MM_T);
    trace_case(r, "[4,4,3] flipped", 3, s3, MM_FLIP);
    trace_case(r, "[0,3] (empty)", 2, s4, 0);
    trace_case(r, "[200,200]", 2, s5, 0);
    break;
  }
  default: break;
  }
}

/* einsum: one to three operands of the given shapes; kred: the products
 * summed into each result (for the sum tolerance). */
static void einsum_case(row *r, const char *subs, int nin, const int64_t (*shapes)[4], const int *nds, int flags,
                        int64_t kred) {
  pcase c;
  char what[96];
  snprintf(what, sizeof what, "einsum \"%s\"%s", subs, flags & MM_EDGE ? ", edge values" : "");
  case_begin(&c, r, what, nin);
  for (int i = 0; i < nin; i++) mm_spec(&c.in[i], r->dt, nds[i], shapes[i], i == 0 ? flags : flags & MM_EDGE);
  c.spec = subs;
  c.kred = kred;
  case_end(r, &c);
}

/* ---- linear algebra (src/matfn.c): matrices made to be well conditioned
 * (or singular on purpose), compared within the linear algebra tolerance
 * (la_close) ---- */
enum { LA_GEN, LA_SPD, LA_SYM, LA_RAND };

/* A stack of matrices of the given kind; the matrix at batch position zb
 * (-1: none) all zeros (singular, not positive definite, rank 0). */
static void la_spec(spec *s, tc_dtype dt, int nd, const int64_t *shape, int kind, int64_t zb) {
  spec_init(s, dt, nd, shape);
  int64_t r = shape[nd - 2], c = shape[nd - 1], per = r * c, nb = spec_numel(s) / (per ? per : 1);
  bool flt = tc_dtype_class(dt) == TC_CLASS_FLT, b = dt == TC_DT_BOOL;
  bool sgn = flt || (tc_dtype_class(dt) == TC_CLASS_INT && !tc_dtype_is_unsigned(dt));
  double *m = xmalloc(sizeof(double) * (size_t)(per ? per : 1)), *w = xmalloc(sizeof(double) * (size_t)(per ? per : 1));
  for (int64_t k = 0; k < nb; k++) {
    for (int64_t i = 0; i < per; i++) {
      int span = kind == LA_SPD ? 5 : 9;
      double v = (double)(rnd() % (b ? 2 : (uint64_t)span)) - (sgn ? span / 2 : 0);
      w[i] = flt ? v + (double)(rnd() % 4) * 0.25 : v;
    }
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++) {
        double v = w[i * c + j];
        if (kind == LA_GEN) v = b ? (i == j ? 1 : j > i ? v : 0) : v + (i == j ? 4.0 * (double)c : 0);
        else if (kind == LA_SYM) v = w[i * c + j] + w[j * c + i];
        else if (kind == LA_SPD) {
          v = i == j ? (double)c : 0;
          for (int64_t t = 0; t < c && !b; t++) v += w[i * c + t] * w[j * c + t];
        }
        m[i * c + j] = k == zb ? 0 : v;
      }
    for (int64_t i = 0; i < per; i++) put(dt, s->data, k * per + i, !flt, (int64_t)m[i], m[i]);
  }
  free(m);
  free(w);
}

/* One case: a of shape sa (kind ka, zero matrix za) and, for solve, b of
 * shape sb (random values). */
static void la_case(row *r, const char *what, int nda, const int64_t *sa, int ka, int64_t za, int ndb, const int64_t *sb) {
  pcase c;
  case_begin(&c, r, what, ndb ? 2 : 1);
  la_spec(&c.in[0], r->dt, nda, sa, ka, za);
  if (ndb) la_spec(&c.in[1], r->dt, ndb, sb, LA_RAND, -1);
  case_end(r, &c);
}

/* The exact det's failure: entries whose minors leave i64. */
static void det_overflow_case(row *r) {
  pcase c;
  case_begin(&c, r, "det [2,4,4] edge values (i64 overflow at [1])", 1);
  int64_t shape[3] = {2, 4, 4};
  la_spec(&c.in[0], r->dt, 3, shape, LA_GEN, -1);
  for (int64_t i = 16; i < 32; i++) put(r->dt, c.in[0].data, i, true, (int64_t)(rnd() | 1) >> (i % 3), 0);
  case_end(r, &c);
}

/* The cases of each function; op -1: svdvals, pinv, matrix_rank and norm
 * (tall, wide and batched). */
static const struct la_row {
  int op;
  const char *what;
  int nda;
  int64_t sa[4];
  int kind;
  int64_t zb;     /* the zero matrix's batch position, or -1 */
  int ndb;        /* solve: b's dims and shape */
  int64_t sb[4];
} la_rows[] = {
  {TC_OP_SOLVE, "solve [5,5] [5]", 2, {5, 5}, LA_GEN, -1, 1, {5}},
  {TC_OP_SOLVE, "solve [3,6,6] [3,6,2]", 3, {3, 6, 6}, LA_GEN, -1, 3, {3, 6, 2}},
  {TC_OP_SOLVE, "solve [4,4] [2,4,3] (a broadcast)", 2, {4, 4}, LA_GEN, -1, 3, {2, 4, 3}},
  {TC_OP_SOLVE, "solve [3,4,4] singular at [1]", 3, {3, 4, 4}, LA_GEN, 1, 3, {3, 4, 1}},
  {TC_OP_INV, "inv [6,6]", 2, {6, 6}, LA_GEN, -1, 0, {0}},
  {TC_OP_INV, "inv [2,3,5,5]", 4, {2, 3, 5, 5}, LA_GEN, -1, 0, {0}},
  {TC_OP_INV, "inv [1,1]", 2, {1, 1}, LA_GEN, -1, 0, {0}},
  {TC_OP_INV, "inv [3,4,4] singular at [2]", 3, {3, 4, 4}, LA_GEN, 2, 0, {0}},
  {TC_OP_DET, "det [6,6]", 2, {6, 6}, LA_GEN, -1, 0, {0}},
  {TC_OP_DET, "det [3,5,5]", 3, {3, 5, 5}, LA_GEN, -1, 0, {0}},
  {TC_OP_DET, "det [9,9]", 2, {9, 9}, LA_GEN, -1, 0, {0}},
  {TC_OP_DET, "det [3,4,4] singular at [1] (0)", 3, {3, 4, 4}, LA_GEN, 1, 0, {0}},
  {TC_OP_CHOLESKY, "cholesky [5,5]", 2, {5, 5}, LA_SPD, -1, 0, {0}},
  {TC_OP_CHOLESKY, "cholesky [2,4,4]", 3, {2, 4, 4}, LA_SPD, -1, 0, {0}},
  {TC_OP_CHOLESKY, "cholesky [3,4,4] not positive definite at [1]", 3, {3, 4, 4}, LA_SPD, 1, 0, {0}},
  {TC_OP_EIGVALSH, "eigvalsh [6,6]", 2, {6, 6}, LA_SYM, -1, 0, {0}},
  {TC_OP_EIGVALSH, "eigvalsh [3,5,5]", 3, {3, 5, 5}, LA_SYM, -1, 0, {0}},
  {TC_OP_EIGVALSH, "eigvalsh [3,4,4] one zero matrix", 3, {3, 4, 4}, LA_SYM, 0, 0, {0}},
  {-1, "[6,9]", 2, {6, 9}, LA_RAND, -1, 0, {0}},
  {-1, "[9,6]", 2, {9, 6}, LA_RAND, -1, 0, {0}},
  {-1, "[2,5,3]", 3, {2, 5, 3}, LA_RAND, -1, 0, {0}},
  {-1, "[3,7]", 2, {3, 7}, LA_RAND, -1, 0, {0}},
  {-1, "[2,5,5] zero matrix at [1]", 3, {2, 5, 5}, LA_RAND, 1, 0, {0}},
};

static void linalg_fn_rows(row *r) {
  bool listed = false;
  for (size_t i = 0; i < sizeof la_rows / sizeof la_rows[0]; i++) listed |= la_rows[i].op == (int)r->op;
  for (size_t i = 0; i < sizeof la_rows / sizeof la_rows[0]; i++) {
    const struct la_row *l = &la_rows[i];
    if (l->op == (listed ? (int)r->op : -1))
      la_case(r, l->what, l->nda, l->sa, l->kind, l->zb, l->ndb, l->ndb ? l->sb : NULL);
  }
  if (r->op == TC_OP_DET && r->dt == TC_DT_I64) det_overflow_case(r);
}

/* einsum runs on an engine's matmul, copies and reduce_sum; the other
 * linear algebra rows on its TC_CALL_LINALG (cuSOLVER on CUDA, which the
 * emulation cannot run: the integer det is the one row it checks). */
static void linalg_rows(row *r) {
  if (r->op != TC_OP_EINSUM) {
    linalg_fn_rows(r);
    return;
  }
  static const int64_t mm[2][4] = {{17, 23}, {23, 19}}, bmm[2][4] = {{5, 7, 9}, {5, 9, 4}}, sq[1][4] = {{7, 7}};
  static const int64_t bc[2][4] = {{3, 1, 4, 5}, {2, 5, 6}}, ch[3][4] = {{4, 5}, {5, 6}, {6, 3}};
  static const int64_t vv[2][4] = {{37}, {29}}, same[2][4] = {{5, 9}, {5, 9}}, big[2][4] = {{130, 70}, {70, 66}};
  static const int64_t diag3[1][4] = {{4, 4, 6}};
  einsum_case(r, "ij,jk->ik", 2, mm, (const int[]){2, 2}, MM_EDGE, 23);
  einsum_case(r, "ij,jk->ik", 2, big, (const int[]){2, 2}, MM_T, 70);
  einsum_case(r, "bij,bjk->bik", 2, bmm, (const int[]){3, 3}, 0, 9);
  einsum_case(r, "...ij,...jk->...ik", 2, bc, (const int[]){4, 3}, MM_FLIP, 5);
  einsum_case(r, "ij,jk,kl->il", 3, ch, (const int[]){2, 2, 2}, 0, 30);
  einsum_case(r, "ii->i", 1, sq, (const int[]){2}, MM_EDGE, 1);
  einsum_case(r, "ii", 1, sq, (const int[]){2}, MM_T, 7);
  einsum_case(r, "iij->j", 1, diag3, (const int[]){3}, 0, 4);
  einsum_case(r, "ij->", 1, same, (const int[]){2}, MM_STEP, 45);
  einsum_case(r, "ij->ji", 1, same, (const int[]){2}, MM_EDGE, 1);
  einsum_case(r, "i,j->ij", 2, vv, (const int[]){1, 1}, MM_EDGE, 1);
  einsum_case(r, "ij,ij->ij", 2, same, (const int[]){2, 2}, MM_EDGE, 1);
  einsum_case(r, "ij,ij", 2, same, (const int[]){2, 2}, 0, 45);
}

/* ---- the everyday functions (src/fn.c) ---- */
/* One call of an FN op: axis c->iarg[0] (or none when c->iarg[1]), k or n
 * c->iarg[2]; descending/keepdims c->keepdims; reductions over c->axes. */
static tc_tensor *apply_fn(const pcase *c, tc_tensor **in, tc_err *err) {
  bool none = c->iarg[1] != 0;
  int64_t axis = c->iarg[0], k = c->iarg[2];
  switch (c->op) {
  case TC_OP_CUMSUM: case TC_OP_CUMPROD: case TC_OP_CUMMAX: case TC_OP_CUMMIN: case TC_OP_NANCUMSUM:
  case TC_OP_NANCUMPROD:
    return tc_scan(c->op, in[0], !none, axis, err);
  case TC_OP_DIFF: return tc_diff(in[0], k, axis, err);
  case TC_OP_SORT: case TC_OP_ARGSORT: return tc_sort(c->op, in[0], axis, c->keepdims, err);
  case TC_OP_TOPK: case TC_OP_ARGTOPK: return tc_topk(c->op, in[0], k, axis, err);
  case TC_OP_UNIQUE: case TC_OP_UNIQUE_COUNTS: return tc_unique(c->op, in[0], err);
  case TC_OP_SEARCHSORTED: {
    tc_tensor *s = tc_sort(TC_OP_SORT, in[0], 0, false, err);
    tc_tensor *o = s ? tc_searchsorted(s, in[1], c->keepdims, err) : NULL;
    tc_tensor_free(s);
    return o;
  }
  case TC_OP_ARGWHERE: return tc_argwhere(in[0], err);
  case TC_OP_BINCOUNT: return tc_bincount(in[0], k, err);
  case TC_OP_HISTOGRAM: return tc_histogram(in[0], k, false, 0, false, 0, err);
  case TC_OP_VAR: case TC_OP_STD: case TC_OP_NANVAR: case TC_OP_NANSTD:
    return tc_var(c->op, in[0], &c->axes, k, c->keepdims, err);
  case TC_OP_NANPROD: return tc_nanprod(in[0], &c->axes, c->keepdims, err);
  case TC_OP_MEDIAN: case TC_OP_QUANTILE: case TC_OP_PERCENTILE: case TC_OP_NANMEDIAN: case TC_OP_NANQUANTILE:
  case TC_OP_NANPERCENTILE: {
    tc_tensor *q = tc_scalar_f64(c->farg[0], true, err);
    tc_tensor *o = q ? tc_quantile(c->op, in[0], q, &c->axes, "linear", c->keepdims, err) : NULL;
    tc_tensor_free(q);
    return o;
  }
  case TC_OP_ISCLOSE: case TC_OP_ALLCLOSE: return tc_isclose(c->op, in[0], in[1], 1e-5, 1e-8, c->keepdims, err);
  case TC_OP_ARRAY_EQUAL: return tc_array_equal(in[0], in[1], err);
  case TC_OP_SOFTMAX: case TC_OP_LOG_SOFTMAX: return tc_softmax(c->op, in[0], axis, err);
  case TC_OP_ZEROS_LIKE: case TC_OP_ONES_LIKE: case TC_OP_FULL_LIKE: {
    tc_tensor *v = tc_scalar_i64(3, true, err);
    tc_tensor *o = v ? tc_like(c->op, in[0], v, -1, err) : NULL;
    tc_tensor_free(v);
    return o;
  }
  case TC_OP_REPEAT: return tc_repeat(in[0], k, !none, axis, err);
  case TC_OP_TILE: return tc_tile(in[0], c->nd, c->dims, err);
  case TC_OP_PAD: {
    tc_tensor *v = tc_scalar_i64(1, true, err);
    tc_tensor *o = v ? tc_pad_pairs(in[0], c->nd, c->dims, v, err) : NULL;
    tc_tensor_free(v);
    return o;
  }
  case TC_OP_ROLL: return tc_roll(in[0], k, !none, axis, err);
  default:
    tc_err_set(err, TC_E_DTYPE, (int)c->op, -1, "the parity suite has no case for %s", tc_op_name(c->op));
    return NULL;
  }
}

static void fn_case(row *r, const char *what, int ndim, const int64_t *shape, bool edges, bool transposed, int64_t axis,
                    bool none, int64_t k, bool flag) {
  pcase c;
  bool two = r->op == TC_OP_SEARCHSORTED || r->op == TC_OP_ISCLOSE || r->op == TC_OP_ALLCLOSE ||
             r->op == TC_OP_ARRAY_EQUAL;
  case_begin(&c, r, what, two ? 2 : 1);
  if (r->op == TC_OP_BINCOUNT) idx_spec(&c.in[0], r->dt, ndim, shape, 0, r->dt == TC_DT_BOOL ? 2 : 50);
  else if (edges) { spec_init(&c.in[0], r->dt, ndim, shape); fill_edges(&c.in[0]); }
  else x_spec(&c.in[0], r->dt, ndim, shape, false);
  double nan_fill;
  bool nan_form = tc_op_nan_form(r->op, &nan_fill) >= 0;
  if (r->op == TC_OP_HISTOGRAM || r->op == TC_OP_MEDIAN || r->op == TC_OP_QUANTILE || r->op == TC_OP_PERCENTILE ||
      r->op == TC_OP_SOFTMAX || r->op == TC_OP_LOG_SOFTMAX || r->op == TC_OP_VAR || r->op == TC_OP_STD || nan_form)
    if (!edges && tc_dtype_class(r->dt) == TC_CLASS_FLT) fill(&c.in[0], G_RANDOM);   /* finite, so a range exists */
  if (nan_form && !edges && tc_dtype_class(r->dt) == TC_CLASS_FLT)   /* and NaNs for the nan forms */
    for (int64_t i = 0; i < spec_numel(&c.in[0]); i += 7) put(r->dt, c.in[0].data, i, false, 0, NAN);
  c.in[0].transposed = transposed && ndim == 2;
  if (two) {
    if (r->op == TC_OP_SEARCHSORTED) x_spec(&c.in[1], r->dt, 1, (int64_t[]){37}, false);
    else {   /* b: a, nearly a, or other values */
      spec_init(&c.in[1], r->dt, ndim, shape);
      memcpy(c.in[1].data, c.in[0].data, (size_t)spec_numel(&c.in[0]) * tc_dtype_size(r->dt));
      if (!edges)
        for (int64_t i = 0; i < spec_numel(&c.in[1]); i += 3)
          put(r->dt, c.in[1].data, i, tc_dtype_class(r->dt) != TC_CLASS_FLT, (int64_t)(rnd() & 1),
              get_f(r->dt, c.in[0].data, i) * (1 + 1e-6));
    }
  }
  c.iarg[0] = axis;
  c.iarg[1] = none;
  c.iarg[2] = k;
  c.keepdims = flag;
  c.farg[0] = r->op == TC_OP_PERCENTILE || r->op == TC_OP_NANPERCENTILE ? 30 : 0.3;
  if (none) c.axes.all = true;
  else { c.axes.n = 1; c.axes.axis[0] = axis; }
  c.nd = 2;
  c.dims[0] = r->op == TC_OP_TILE ? 2 : 1;
  c.dims[1] = 2;
  case_end(r, &c);
}

static void fn_rows(row *r) {
  int64_t n1 = 1023, nbig = quick ? 70001 : (1 << 20) + 7, s2[2] = {37, 129}, e0 = 0, e30[2] = {3, 0}, ne = 97;
  int64_t k = r->op == TC_OP_TOPK || r->op == TC_OP_ARGTOPK ? 5 : r->op == TC_OP_HISTOGRAM ? 10 :
              r->op == TC_OP_REPEAT ? 2 : r->op == TC_OP_ROLL ? 7 : r->op == TC_OP_DIFF ? 1 : 0;
  bool both = r->op == TC_OP_SORT || r->op == TC_OP_ARGSORT || r->op == TC_OP_SEARCHSORTED;
  fn_case(r, "edge values (NaN, +-0, inf, MIN/MAX)", 1, &ne, true, false, -1, false, k, false);
  if (both) fn_case(r, "edge values, descending (right)", 1, &ne, true, false, -1, false, k, true);
  fn_case(r, "random, 1023", 1, &n1, false, false, -1, false, k, false);
  fn_case(r, "random, large", 1, &nbig, false, false, 0, false, k, false);
  fn_case(r, "[37,129] axis 0", 2, s2, false, false, 0, false, k, true);
  fn_case(r, "[37,129] transposed, axis -1", 2, s2, false, true, -1, false, k, false);
  fn_case(r, "[37,129] axis none", 2, s2, false, false, 0, true, k, false);
  fn_case(r, "empty [0]", 1, &e0, false, false, -1, false, 0, false);
  fn_case(r, "empty [3,0] axis -1", 2, e30, false, false, -1, false, 0, false);
}

static void test_row(row *r) {
  switch (tc_op_family(r->op)) {
  case TC_FAM_FN: fn_rows(r); break;
  case TC_FAM_BIN: case TC_FAM_CMP: binary_rows(r); break;
  case TC_FAM_UN: case TC_FAM_PRED: unary_rows(r); break;
  case TC_FAM_SEL: case TC_FAM_CLIP: select_rows(r); break;
  case TC_FAM_CAST: cast_rows(r); break;
  case TC_FAM_REDUCE: reduce_rows(r); break;
  case TC_FAM_INFO: info_rows(r); break;
  case TC_FAM_SHAPE: shape_rows(r); break;
  case TC_FAM_INDEX: index_rows(r); break;
  case TC_FAM_CTOR: ctor_rows(r); break;
  case TC_FAM_IO: io_rows(r); break;
  case TC_FAM_MATMUL: matmul_rows(r); break;
  case TC_FAM_LINALG: linalg_rows(r); break;
  default: {
    pcase c;
    case_begin(&c, r, "-", 0);
    row_fail(r, &c, "the parity suite has no cases for this kind of op yet");
    break;
  }
  }
  /* a row whose every case errored alike on both engines proved nothing */
  if (!r->failed && r->cases > 0 && r->errors == r->cases) {
    pcase c;
    case_begin(&c, r, "all cases", 0);
    row_fail(r, &c, "every case failed on both engines; nothing was compared");
  }
}

/* Rows whose CUDA path is cuSOLVER (the float linear algebra): a library
 * the host emulation cannot run, so an emulated run reports them apart. */
static bool needs_solver(tc_op op, tc_dtype dt) {
  if (tc_op_family(op) != TC_FAM_LINALG || op == TC_OP_EINSUM) return false;
  return !(op == TC_OP_DET && tc_dtype_class(dt) != TC_CLASS_FLT);
}

int parity_main(int argc, char **argv) {
  bool emulate = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--emulate")) emulate = true;
    else if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--brief")) brief = true;
    else if (!strcmp(argv[i], "--allow-missing")) allow_missing = true;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else {
      fprintf(stderr, "usage: cuda-check parity [--emulate] [--quick] [--brief] [--allow-missing] [--only OP]\n");
      return 2;
    }
  }
  const char *env = getenv("TCALC_CUDA_UNVERIFIED");
  bool unverified = emulate || (env && *env && strcmp(env, "0"));
  tc_cuda_test_emulate(emulate);
  tc_cuda_test_unverified(unverified);
  tc_err err;
  tc_err_clear(&err);
  if (tc_engine_check(TC_ENGINE_CUDA, &err) != 0) {
    /* the emulation needs the plugin, not a device: under CI a plugin that
     * cannot load must not pass as a skip */
    const char *ci = getenv("CI");
    if (emulate && ci && !strcmp(ci, "true")) {
      printf("FAIL: the CUDA engine cannot run its emulation: %s\n", err.msg);
      return 1;
    }
    printf("skipped: no CUDA device (%s)\n", err.msg);
    return 0;
  }
  printf("cuda-check parity: %s, %s rows%s\n", emulate ? "host emulation of the CUDA kernels (not a GPU run)" : "CUDA device",
         unverified ? "all CPU" : "claimed", quick ? ", quick" : "");
  row *rows = xmalloc(sizeof(row) * TC_OP_COUNT * TC_DT_COUNT);
  int nrows = 0, npass = 0, nskip = 0, nmissing = 0, nnoemu = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    if (only && strcmp(only, tc_op_name((tc_op)op))) continue;
    for (int dt = 0; dt < TC_DT_COUNT; dt++) {
      if (!tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CPU)) continue;
      bool claimed = tc_op_supported((tc_op)op, (tc_dtype)dt, TC_ENGINE_CUDA);
      if (!claimed && !unverified) { nskip++; continue; }
      if (!claimed && emulate && needs_solver((tc_op)op, (tc_dtype)dt)) {
        printf("NOEMU %s %s: cuSOLVER cannot be emulated (a GPU run checks it)\n", tc_op_name((tc_op)op),
               tc_dtype_name((tc_dtype)dt));
        nnoemu++;
        continue;
      }
      if (!claimed && allow_missing) {
        printf("MISSING %s %s: no CUDA kernel\n", tc_op_name((tc_op)op), tc_dtype_name((tc_dtype)dt));
        nmissing++;
        continue;
      }
      row *r = &rows[nrows++];
      memset(r, 0, sizeof *r);
      r->op = (tc_op)op;
      r->dt = (tc_dtype)dt;
      if (claimed) test_row(r);
      else { r->failed = true; snprintf(r->why, sizeof r->why, "no CUDA kernel"); }
      if (!r->failed) npass++;
      if (r->failed) printf("FAIL %s %s: %s\n", tc_op_name(r->op), tc_dtype_name(r->dt), r->why);
      else if (!brief) printf("PASS %s %s (%d cases, %d of them errors on both)\n", tc_op_name(r->op), tc_dtype_name(r->dt), r->cases, r->errors);
      fflush(stdout);
    }
  }
  printf("summary: %d rows, %d passed, %d failed", nrows, npass, nrows - npass);
  if (nskip) printf(", %d not claimed by the cuda engine (TCALC_CUDA_UNVERIFIED=1 tests them)", nskip);
  if (nmissing) printf(", %d without a CUDA kernel", nmissing);
  if (nnoemu) printf(", %d on cuSOLVER, which cannot be emulated (not run)", nnoemu);
  printf("\n");
  if (!emulate && npass) {
    printf("rows for backend/cuda/verified.def:\n");
    for (int i = 0; i < nrows; i++)
      if (!rows[i].failed && rows[i].cases) printf("  X(%s, %s) \\\n", op_enum[rows[i].op], dt_enum[rows[i].dt]);
  }
  free(rows);
  return npass == nrows ? 0 : 1;
}
