/* The integer overflow policy (SPEC 13): wrap (the engines' kernels), or
 * check / saturate, which judge the exact mathematical result of each output
 * element. Those two run here, on the host, whatever the engine: each
 * element's exact value is computed in 128 bits (with a count of 2^128
 * wraps where a dot product can exceed even that), so the answer and the
 * first overflowing index are the same on every engine and thread count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static _Atomic int policy = TC_OVERFLOW_WRAP;

static const char *const names[] = {"wrap", "check", "saturate"};

void tc_set_overflow(tc_overflow p) { policy = (int)p; }
tc_overflow tc_get_overflow(void) { return (tc_overflow)policy; }
const char *tc_overflow_name(tc_overflow p) { return names[p]; }
int tc_overflow_from_name(const char *s) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, names[i])) return i;
  return -1;
}

/* ---- exact values ---- */
/* A value beyond every dtype's range keeps only its sign: big = +1 / -1. */
typedef struct { i128 v; int big; } exact;

static exact ex(i128 v) { exact e = {v, 0}; return e; }

static i128 lo_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? 0 : -((i128)1 << (b - 1));
}
static i128 hi_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? ((i128)1 << b) - 1 : ((i128)1 << (b - 1)) - 1;
}

static bool fits(exact e, tc_dtype dt) { return !e.big && e.v >= lo_of(dt) && e.v <= hi_of(dt); }

static i128 clamp(exact e, tc_dtype dt) {
  if (e.big) return e.big > 0 ? hi_of(dt) : lo_of(dt);
  return e.v < lo_of(dt) ? lo_of(dt) : e.v > hi_of(dt) ? hi_of(dt) : e.v;
}

static i128 load(tc_dtype dt, const char *p) {
  int64_t v = tc_dtype_load_i64(dt, p);
  return tc_dtype_is_unsigned(dt) ? (i128)(uint64_t)v : (i128)v;
}

static void store(tc_dtype dt, char *p, i128 v) {
  uint64_t u = (uint64_t)(u128)v;   /* the low bits; v is in range */
  size_t sz = tc_dtype_size(dt);
  switch (sz) {
  case 1: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
  default: memcpy(p, &u, 8); break;
  }
}

static exact mul(exact a, exact b) {
  if ((!a.big && a.v == 0) || (!b.big && b.v == 0)) return ex(0);
  int sa = a.big ? a.big : a.v < 0 ? -1 : 1, sb = b.big ? b.big : b.v < 0 ? -1 : 1;
  exact r;
  if (a.big || b.big || __builtin_mul_overflow(a.v, b.v, &r.v)) { r.v = 0; r.big = sa * sb; return r; }
  r.big = 0;
  return r;
}

/* b ** e by squaring; exponents are never negative here (the pre-check).
 * mul() keeps the sign of a value that left the 128-bit range. */
static exact pow_exact(i128 b, i128 e) {
  exact r = ex(1), base = ex(b);
  while (e > 0) {
    if (e & 1) r = mul(r, base);
    e >>= 1;
    if (e) base = mul(base, base);
  }
  return r;
}

static exact ew_exact(tc_op op, i128 a, i128 b) {
  switch (op) {
  case TC_OP_ADD: return ex(a + b);
  case TC_OP_SUB: return ex(a - b);
  case TC_OP_MUL: return mul(ex(a), ex(b));
  case TC_OP_POW: return pow_exact(a, b);
  case TC_OP_NEG: return ex(-a);
  case TC_OP_ABS: return ex(a < 0 ? -a : a);
  case TC_OP_DIV: return ex(a / b);   /* b != 0 (the pre-check); only MIN / -1 leaves the range */
  case TC_OP_FLOOR_DIV: return ex(a / b - ((a % b != 0) && ((a < 0) != (b < 0))));
  default: return ex(0);
  }
}

bool tc_overflow_judges(tc_op op, tc_dtype kdt) {
  if (policy == TC_OVERFLOW_WRAP || tc_dtype_class(kdt) != TC_CLASS_INT) return false;
  switch (op) {
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: case TC_OP_POW: case TC_OP_NEG: case TC_OP_ABS:
    return true;
  case TC_OP_DIV: case TC_OP_FLOOR_DIV:   /* MIN / -1 (SPEC 13) */
    return !tc_dtype_is_unsigned(kdt);
  default:
    return false;
  }
}

static int overflow_error(tc_err *err, tc_op op, tc_dtype dt, int ndim, const int64_t *shape, int64_t flat,
                          const char *what) {
  int64_t idx[TC_MAX_DIMS] = {0}, rem = flat;
  for (int i = ndim - 1; i >= 0; i--) {
    idx[i] = shape[i] ? rem % shape[i] : 0;
    rem = shape[i] ? rem / shape[i] : 0;
  }
  char where[300] = "";
  if (ndim > 0) {
    char ib[280];
    tc_format_dims(ib, sizeof ib, ndim, idx);
    snprintf(where, sizeof where, " at index %s", ib);
  }
  tc_err_set(err, TC_E_INT_OVERFLOW, (int)op, (int)dt, "%s does not fit %s%s (overflow %s)", what,
             tc_dtype_name(dt), where, tc_overflow_name(tc_get_overflow()));
  tc_err_set_index(err, ndim, idx);
  return -1;
}

/* A contiguous host copy of t (numel elements). */
static char *host_copy(tc_tensor *t, tc_err *err) {
  int64_t n = tc_numel(t);
  tc_tensor *c = tc_contiguous(t, err);   /* views (broadcast, strided) in row-major order */
  char *buf = c ? malloc((size_t)(n ? n : 1) * tc_dtype_size(t->dtype)) : NULL;
  if (c && !buf) tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "allocation failed");
  if (buf && tc_tensor_to_host(c, buf, err) != 0) { free(buf); buf = NULL; }
  tc_tensor_free(c);
  return buf;
}

/* The common case, add/sub/mul of two operands already of the kernel
 * dtype: a typed loop over __builtin_*_overflow, stamped per integer dtype.
 * Blocks of OVF_BLOCK are computed wrapping with the overflow flags ORed
 * (a loop without exits, which the compiler vectorises); only a block whose
 * flag is set is gone over again for its first overflowing index (check)
 * or its clamped values (saturate). Returns the first overflowing index
 * under check, else -1 (o filled, clamped). */
#define OVF_BLOCK 1024
#define OVF_LOOP(BUILTIN, SAT) \
  for (int64_t i0 = 0; i0 < n; i0 += OVF_BLOCK) { \
    int64_t m = n - i0 < OVF_BLOCK ? n - i0 : OVF_BLOCK; \
    bool any = false; \
    for (int64_t i = i0; i < i0 + m; i++) { \
      S r; \
      any |= BUILTIN(a[i], b[i], &r); \
      o[i] = r; \
    } \
    if (!any) continue; \
    for (int64_t i = i0; i < i0 + m; i++) { \
      S r, x = a[i], y = b[i]; \
      if (!BUILTIN(x, y, &r)) continue; \
      if (check) return i; \
      o[i] = (SAT); \
    } \
  } \
  return -1;
#define K_OVF(E, n_, S_, ...) \
  static int64_t ovf_##E(tc_op op, const void *a_, const void *b_, void *o_, int64_t n, bool check, S_ lo, S_ hi) { \
    typedef S_ S; \
    const S *a = a_, *b = b_; \
    S *o = o_; \
    switch (op) { \
    case TC_OP_ADD: OVF_LOOP(__builtin_add_overflow, y > 0 ? hi : lo) \
    case TC_OP_SUB: OVF_LOOP(__builtin_sub_overflow, x >= y ? hi : lo) \
    default: OVF_LOOP(__builtin_mul_overflow, (x > 0) == (y > 0) ? hi : lo) \
    } \
  }
TC_FOR_INT(K_OVF, _)

static int64_t ovf_typed(tc_op op, tc_dtype dt, const void *a, const void *b, void *o, int64_t n, bool check) {
  switch (dt) {
#define OVF_CASE(E, n_, S, ...) case TC_DT_##E: return ovf_##E(op, a, b, o, n, check, (S)lo_of(dt), (S)hi_of(dt));
  TC_FOR_INT(OVF_CASE, _)
#undef OVF_CASE
  default: return -2;
  }
}

/* Element flat of a result of dtype dt: e clamped into o, or under check,
 * when e does not fit, integer_overflow at flat's index of shape. */
static int put_judged(exact e, tc_dtype dt, char *o, int64_t flat, tc_op op, int ndim, const int64_t *shape,
                      const char *what, tc_err *err) {
  if (!fits(e, dt) && policy == TC_OVERFLOW_CHECK) return overflow_error(err, op, dt, ndim, shape, flat, what);
  store(dt, o + (size_t)flat * tc_dtype_size(dt), clamp(e, dt));
  return 0;
}

/* t's elements in row-major order: read in place when t is a contiguous
 * tensor in host memory, else a copy (*owned, to free). */
static const char *host_read(tc_tensor *t, char **owned, tc_err *err) {
  *owned = NULL;
  const char *p = tc_tensor_host_data(t);
  if (p && tc_is_contiguous(t)) return p;
  return *owned = host_copy(t, err);
}

int tc_overflow_ew(tc_op op, tc_dtype kdt, int nin, tc_tensor *const *in, tc_tensor *out, tc_err *err) {
  int64_t n = tc_numel(out);
  size_t sz = tc_dtype_size(kdt);
  char *oa = NULL, *ob = NULL, *o = NULL, *direct = NULL;
  const char *a = host_read(in[0], &oa, err), *b = nin > 1 && a ? host_read(in[1], &ob, err) : NULL;
  int rc = -1;
  if (!a || (nin > 1 && !b)) goto done;
  /* the result is written in place when it lies in host memory (the CPU
   * engine's), else in a buffer copied to it at the end */
  direct = tc_tensor_host_data(out) ? tc_tensor_data(out) : NULL;
  o = direct ? direct : malloc((size_t)(n ? n : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  bool check = policy == TC_OVERFLOW_CHECK;
  tc_dtype da = in[0]->dtype, db = nin > 1 ? in[1]->dtype : kdt;
  size_t sza = tc_dtype_size(da), szb = tc_dtype_size(db);
  char what[96];
  snprintf(what, sizeof what, "the exact result of %s", tc_op_name(op));
  if ((op == TC_OP_ADD || op == TC_OP_SUB || op == TC_OP_MUL) && da == kdt && db == kdt) {
    int64_t bad = ovf_typed(op, kdt, a, b, o, n, check);
    if (bad >= 0) {
      rc = overflow_error(err, op, kdt, out->ndim, out->shape, bad, what);
      goto done;
    }
    n = 0;   /* done: skip the general loop */
  }
  for (int64_t i = 0; i < n; i++) {
    if ((i & 0xffff) == 0 && tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    /* the CPU engine hands operands over unconverted (it converts inside its kernels): read each in its
       own dtype; a weak literal was checked to fit kdt, a promotion only widens, so the value is the same */
    i128 x = load(da, a + (size_t)i * sza), y = b ? load(db, b + (size_t)i * szb) : 0;
    if (put_judged(ew_exact(op, x, y), kdt, o, i, op, out->ndim, out->shape, what, err) != 0) goto done;
  }
  rc = direct ? 0 : tc_tensor_write(out, o, err);
done:
  free(oa);
  free(ob);
  if (!direct) free(o);
  return rc;
}

/* ---- casts ---- */
bool tc_overflow_judges_cast(tc_dtype from, tc_dtype to) {
  return policy != TC_OVERFLOW_WRAP && from != to && tc_dtype_class(to) == TC_CLASS_INT &&
         tc_dtype_class(from) != TC_CLASS_BOOL;
}

tc_tensor *tc_overflow_cast(tc_tensor *x, tc_dtype to, tc_err *err) {
  const tc_op op = TC_OP_CAST;
  tc_dtype from = x->dtype;
  bool flt = tc_dtype_class(from) == TC_CLASS_FLT;
  /* floats are read as f64 (exact for every float dtype), integers as they are */
  tc_tensor *src = flt ? tc_cast(x, TC_DT_F64, err) : tc_tensor_ref(x);
  if (!src) return NULL;
  char *a = host_copy(src, err), *o = NULL;
  tc_tensor *out = NULL;
  int64_t n = tc_numel(x);
  size_t ssz = tc_dtype_size(src->dtype), osz = tc_dtype_size(to);
  if (!a) goto done;
  o = malloc((size_t)(n ? n : 1) * osz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)from, "allocation failed"); goto done; }
  char what[96];
  snprintf(what, sizeof what, "a %s value cast to %s", tc_dtype_name(from), tc_dtype_name(to));
  for (int64_t i = 0; i < n; i++) {
    exact e;
    const char *p = a + (size_t)i * ssz;
    if (flt) {
      double d;
      memcpy(&d, p, 8);
      if (d != d) {
        if (policy == TC_OVERFLOW_CHECK) {
          overflow_error(err, op, to, x->ndim, x->shape, i, "NaN");
          goto done;
        }
        e = ex(0);
      } else if (d >= 18446744073709551616.0) e = (exact){0, 1};           /* 2^64 and above, +inf */
      else if (d < -9223372036854775808.0) e = (exact){0, -1};             /* below -2^63, -inf */
      else e = ex((i128)d);   /* truncated toward zero, as the cast does */
    } else {
      e = ex(load(from, p));
    }
    if (put_judged(e, to, o, i, op, x->ndim, x->shape, what, err) != 0) goto done;
  }
  out = tc_tensor_new(to, x->ndim, x->shape, err);
  if (out && tc_tensor_write(out, o, err) != 0) { tc_tensor_free(out); out = NULL; }
done:
  tc_tensor_free(src);
  free(a);
  free(o);
  return out;
}

/* ---- sums and products ----
 * x is contiguous with its reduced axes last: m outputs of n elements each. */
bool tc_overflow_judges_reduce(tc_op op, tc_dtype kdt) {
  return policy != TC_OVERFLOW_WRAP && tc_dtype_class(kdt) == TC_CLASS_INT &&
         (op == TC_OP_REDUCE_SUM || op == TC_OP_REDUCE_PROD);
}

/* The exact sum of a row of n values of one integer dtype, stamped per
 * dtype: blocks of up to 2^16 elements of 32 bits or fewer sum in an int64
 * (a loop that vectorises), 64-bit elements in 128 bits. */
#define K_XSUM(E, n_, S, ...) \
  static i128 xsum_##E(const void *x_, int64_t n) { \
    const S *x = x_; \
    i128 s = 0; \
    if (sizeof(S) > 4) { \
      for (int64_t j = 0; j < n; j++) s += x[j]; \
      return s; \
    } \
    for (int64_t j0 = 0; j0 < n; j0 += 65536) { \
      int64_t m = n - j0 < 65536 ? n - j0 : 65536, t = 0; \
      for (int64_t j = j0; j < j0 + m; j++) t += (int64_t)x[j]; \
      s += t; \
    } \
    return s; \
  }
TC_FOR_INT(K_XSUM, _)

static i128 xsum(tc_dtype dt, const void *x, int64_t n) {
  switch (dt) {
#define XSUM_CASE(E, ...) case TC_DT_##E: return xsum_##E(x, n);
  TC_FOR_INT(XSUM_CASE, _)
#undef XSUM_CASE
  default: return 0;
  }
}

int tc_overflow_reduce(tc_op op, tc_dtype kdt, tc_tensor *px, tc_tensor *out, tc_err *err) {
  int64_t m = tc_numel(out), total = tc_numel(px), n = m ? total / m : 0;
  size_t sz = tc_dtype_size(kdt);
  char *owned = NULL, *o = NULL;
  const char *a = host_read(px, &owned, err);
  int rc = -1;
  if (!a) goto done;
  o = malloc((size_t)(m ? m : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int64_t r = 0; r < m; r++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    const char *row = a + (size_t)(r * n) * sz;
    exact e;
    if (op == TC_OP_REDUCE_SUM) {   /* n < 2^62 values of at most 2^64 each: exact in 128 bits */
      e = ex(xsum(kdt, row, n));
    } else {
      e = ex(1);
      int neg = 0;
      bool zero = false;
      for (int64_t j = 0; j < n; j++) {
        i128 v = load(kdt, row + (size_t)j * sz);
        if (v == 0) { zero = true; break; }
        neg ^= v < 0;
        if (!e.big) e = mul(e, ex(v));
      }
      if (zero) e = ex(0);
      else if (e.big) e.big = neg ? -1 : 1;
    }
    if (put_judged(e, kdt, o, r, op, out->ndim, out->shape, op == TC_OP_REDUCE_SUM ? "the exact sum" : "the exact product",
                   err) != 0)
      goto done;
  }
  rc = tc_tensor_write(out, o, err);
done:
  free(owned);
  free(o);
  return rc;
}

/* ---- matrix products ----
 * C[i, j] = sum_k A[i, k] B[k, j] exactly: 128-bit products, and a count of
 * 2^128 wraps of the running sum (a sum that wrapped is beyond every dtype). */
bool tc_overflow_judges_matmul(tc_dtype kdt) {
  return policy != TC_OVERFLOW_WRAP && tc_dtype_class(kdt) == TC_CLASS_INT;
}

/* The largest magnitude among t's elements (of integer dtype dt), or -1
 * when t cannot be read (the caller then judges every product). */
static i128 max_abs(tc_tensor *t, tc_dtype dt) {
  tc_err e;
  tc_err_clear(&e);
  char *owned = NULL;
  const char *p = t->dtype == dt ? host_read(t, &owned, &e) : NULL;
  if (!p) return -1;
  i128 m = 0;
  size_t sz = tc_dtype_size(dt);
  for (int64_t i = 0, n = tc_numel(t); i < n; i++) {
    i128 v = load(dt, p + (size_t)i * sz);
    if (v < 0) v = -v;
    if (v > m) m = v;
  }
  free(owned);
  return m;
}

/* Whether no sum of K products of a's and b's elements can leave kdt's
 * range (max|a| * max|b| * K within it, which bounds every partial sum
 * too): then the engine's wrapping product is the exact one, and the
 * common case runs at the kernel's speed. */
bool tc_overflow_matmul_fits(tc_dtype kdt, tc_tensor *a, tc_tensor *b) {
  int64_t K = a->shape[a->ndim - 1];
  i128 ma = max_abs(a, kdt), mb = ma >= 0 ? max_abs(b, kdt) : -1;
  if (ma < 0 || mb < 0) return false;
  if (ma == 0 || mb == 0 || K == 0) return true;
  u128 p = (u128)ma * (u128)mb, q;   /* each at most 2^64 */
  if (__builtin_mul_overflow(p, (u128)K, &q)) return false;
  return q <= (u128)hi_of(kdt);
}

int tc_overflow_matmul(tc_op op, tc_dtype kdt, tc_tensor *a, tc_tensor *b, tc_tensor *out, tc_err *err) {
  /* a: [..., M, K], b: [..., K, N], out: [..., M, N], batch dims already equal (broadcast views) */
  int nd = out->ndim;
  int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; d++) batch *= out->shape[d];
  size_t sz = tc_dtype_size(kdt);
  char *ha = host_copy(a, err), *hb = ha ? host_copy(b, err) : NULL, *o = NULL;
  int rc = -1;
  if (!hb) goto done;
  o = malloc((size_t)(tc_numel(out) ? tc_numel(out) : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int64_t t = 0; t < batch; t++)
    for (int64_t i = 0; i < M; i++) {
      if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
      for (int64_t j = 0; j < N; j++) {
        i128 s = 0;
        int64_t wraps = 0;
        for (int64_t k = 0; k < K; k++) {
          i128 p = load(kdt, ha + (size_t)((t * M + i) * K + k) * sz) * load(kdt, hb + (size_t)((t * K + k) * N + j) * sz);
          i128 r;
          if (__builtin_add_overflow(s, p, &r)) wraps += p > 0 ? 1 : -1;
          s = r;
        }
        exact e = wraps ? (exact){0, wraps > 0 ? 1 : -1} : ex(s);
        int64_t flat = (t * M + i) * N + j;
        if (put_judged(e, kdt, o, flat, op, nd, out->shape, "the exact dot product", err) != 0) goto done;
      }
    }
  rc = tc_tensor_write(out, o, err);
done:
  free(ha);
  free(hb);
  free(o);
  return rc;
}

/* ---- scans ----
 * Each output element is the exact prefix sum (in 128 bits: fewer than
 * 2^62 values of at most 2^64) or prefix product (mul(): a value that left
 * 128 bits keeps its sign until a zero) of its row, judged alone: under
 * saturate a clamped element does not change the next one. */
bool tc_overflow_judges_scan(tc_op op, tc_dtype kdt) {
  return policy != TC_OVERFLOW_WRAP && tc_dtype_class(kdt) == TC_CLASS_INT &&
         (op == TC_OP_CUMSUM || op == TC_OP_CUMPROD);
}

/* One row of n elements, stamped per dtype; returns the first position
 * whose exact value does not fit under check (the row is then left
 * unfinished), else -1. */
#define K_XSCAN(E, n_, S_, ...) \
  static int64_t xscan_##E(bool prod, const void *x_, void *o_, int64_t n, bool check, i128 lo, i128 hi) { \
    typedef S_ S; \
    const S *x = x_; \
    S *o = o_; \
    if (!prod) { \
      i128 s = 0; \
      for (int64_t i = 0; i < n; i++) { \
        s += x[i]; \
        if (s >= lo && s <= hi) { o[i] = (S)s; continue; } \
        if (check) return i; \
        o[i] = (S)(s < lo ? lo : hi); \
      } \
      return -1; \
    } \
    exact p = ex(1); \
    for (int64_t i = 0; i < n; i++) { \
      p = mul(p, ex(x[i])); \
      if (!p.big && p.v >= lo && p.v <= hi) { o[i] = (S)p.v; continue; } \
      if (check) return i; \
      o[i] = (S)clamp(p, TC_DT_##E); \
    } \
    return -1; \
  }
TC_FOR_INT(K_XSCAN, _)

static int64_t xscan(tc_dtype dt, bool prod, const void *x, void *o, int64_t n, bool check) {
  switch (dt) {
#define XSCAN_CASE(E, ...) case TC_DT_##E: return xscan_##E(prod, x, o, n, check, lo_of(dt), hi_of(dt));
  TC_FOR_INT(XSCAN_CASE, _)
#undef XSCAN_CASE
  default: return -1;
  }
}

int tc_overflow_scan(tc_op op, tc_dtype kdt, tc_tensor *c, int axis, tc_tensor *out, tc_err *err) {
  /* c: contiguous, of dtype kdt, with the scanned axis (axis of the
   * original) moved last; out: c's shape */
  int nd = c->ndim;
  int64_t n = nd ? c->shape[nd - 1] : 1, total = tc_numel(c), rows = n ? total / n : 0;
  size_t sz = tc_dtype_size(kdt);
  bool check = policy == TC_OVERFLOW_CHECK;
  char *owned = NULL, *direct = tc_tensor_host_data(out) ? tc_tensor_data(out) : NULL, *o = NULL;
  const char *a = host_read(c, &owned, err);
  int rc = -1;
  if (!a) goto done;
  o = direct ? direct : malloc((size_t)(total ? total : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  /* the original shape, and under check the least row-major index there of
   * an element that does not fit (rows are c's order, not the original's) */
  int64_t shape[TC_MAX_DIMS], first = -1;
  for (int d = 0; d < nd; d++) shape[d] = c->shape[d < axis ? d : d == axis ? nd - 1 : d - 1];
  for (int64_t r = 0; r < rows; r++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    int64_t p = xscan(kdt, op == TC_OP_CUMPROD, a + (size_t)(r * n) * sz, o + (size_t)(r * n) * sz, n, check);
    if (p < 0) continue;
    int64_t idx[TC_MAX_DIMS], rem = r, flat = 0;   /* row r's index in c, then in the original */
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rem % c->shape[d]; rem /= c->shape[d]; }
    for (int d = 0; d < nd; d++) flat = flat * shape[d] + (d < axis ? idx[d] : d == axis ? p : idx[d - 1]);
    if (first < 0 || flat < first) first = flat;
    if (axis == nd - 1) break;   /* rows in the original's order: the first found is the least */
  }
  if (first >= 0) {
    rc = overflow_error(err, op, kdt, nd, shape, first, op == TC_OP_CUMSUM ? "the exact running sum" : "the exact running product");
    goto done;
  }
  rc = direct ? 0 : tc_tensor_write(out, o, err);
done:
  free(owned);
  if (!direct) free(o);
  return rc;
}

/* ---- einsum ----
 * When no output can leave the dtype (the product of the operands' largest
 * magnitudes and the count of summed terms fits it), the wrapping lowering
 * is exact and runs as usual. Otherwise each output element is computed
 * here as the exact sum of its products: a product of up to 64 operands
 * needs 64 bits each, so the terms and their sum are kept in nops + 2 words
 * (two's complement for the sum). */
bool tc_overflow_judges_einsum(tc_dtype kdt) { return tc_overflow_judges_matmul(kdt); }

bool tc_overflow_einsum_fits(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nsum,
                             const int *sumlab) {
  u128 b = 1;
  for (int s = 0; s < nsum; s++)
    if (__builtin_mul_overflow(b, (u128)gsize[sumlab[s]], &b)) return false;
  for (int i = 0; i < nops && b; i++) {
    i128 m = max_abs(ops[i].t, kdt);
    if (m < 0 || __builtin_mul_overflow(b, (u128)m, &b)) return false;
  }
  return b <= (u128)hi_of(kdt);
}

#define XW_MAX (64 + 2)
tc_tensor *tc_overflow_einsum(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nout,
                              const int *outlab, int nsum, const int *sumlab, tc_err *err) {
  const tc_op op = TC_OP_EINSUM;
  size_t sz = tc_dtype_size(kdt);
  int nw = nops + 2;
  int64_t oshape[TC_MAX_DIMS], nout_el = 1, sidx[TC_EINSUM_LABELS] = {0}, oidx[TC_MAX_DIMS] = {0};
  for (int d = 0; d < nout; d++) nout_el *= oshape[d] = gsize[outlab[d]];
  /* per operand: its host copy and the stride of each output and summed label in it (0: absent or broadcast) */
  char **h = calloc((size_t)nops, sizeof *h), *o = NULL;
  int64_t (*ost)[TC_MAX_DIMS] = calloc((size_t)nops, sizeof *ost);
  int64_t (*sst)[TC_EINSUM_LABELS] = calloc((size_t)nops, sizeof *sst);
  int64_t *off = calloc((size_t)nops, sizeof *off);
  tc_tensor *out = NULL;
  if (!h || !ost || !sst || !off) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int i = 0; i < nops; i++) {
    const tc_einsum_opnd *p = &ops[i];
    if (!(h[i] = host_copy(p->t, err))) goto done;
    int64_t st = 1;
    for (int d = p->n - 1; d >= 0; d--) {
      int64_t s = p->t->shape[d] == gsize[p->lab[d]] ? st : 0;
      st *= p->t->shape[d] ? p->t->shape[d] : 1;
      for (int x = 0; x < nout; x++)
        if (outlab[x] == p->lab[d]) ost[i][x] = s;
      for (int x = 0; x < nsum; x++)
        if (sumlab[x] == p->lab[d]) sst[i][x] = s;
    }
  }
  int64_t terms = 1;
  for (int s = 0; s < nsum; s++) terms *= gsize[sumlab[s]];
  o = malloc((size_t)(nout_el ? nout_el : 1) * sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int64_t f = 0; f < nout_el; f++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    uint64_t acc[XW_MAX] = {0};
    for (int i = 0; i < nops; i++) {
      off[i] = 0;
      for (int x = 0; x < nout; x++) off[i] += oidx[x] * ost[i][x];
    }
    for (int64_t t = 0; t < terms; t++) {
      /* the term's magnitude m (len words) and sign */
      uint64_t m[XW_MAX] = {1};
      int len = 1;
      bool neg = false, zero = false;
      for (int i = 0; i < nops && !zero; i++) {
        i128 v = load(kdt, h[i] + (size_t)off[i] * sz);
        if (v == 0) { zero = true; break; }
        neg ^= v < 0;
        uint64_t u = (uint64_t)(v < 0 ? -v : v), carry = 0;
        for (int j = 0; j < len; j++) {
          u128 q = (u128)m[j] * u + carry;
          m[j] = (uint64_t)q;
          carry = (uint64_t)(q >> 64);
        }
        if (carry) m[len++] = carry;
      }
      if (!zero) {   /* acc += m or acc -= m, carries through the words */
        uint64_t c = 0;
        for (int j = 0; j < nw && (j < len || c); j++) {
          uint64_t w = j < len ? m[j] : 0, r;
          if (!neg) {
            uint64_t c1 = __builtin_add_overflow(acc[j], w, &r), c2 = __builtin_add_overflow(r, c, &r);
            c = c1 | c2;
          } else {
            uint64_t c1 = __builtin_sub_overflow(acc[j], w, &r), c2 = __builtin_sub_overflow(r, c, &r);
            c = c1 | c2;
          }
          acc[j] = r;
        }
      }
      /* the next term: the summed labels as an odometer, last fastest */
      for (int s = nsum - 1; s >= 0; s--) {
        for (int i = 0; i < nops; i++) off[i] += sst[i][s];
        if (++sidx[s] < gsize[sumlab[s]]) break;
        for (int i = 0; i < nops; i++) off[i] -= sst[i][s] * sidx[s];
        sidx[s] = 0;
      }
    }
    uint64_t ext = acc[1] >> 63 ? UINT64_MAX : 0;
    bool small = true;
    for (int j = 2; j < nw; j++) small &= acc[j] == ext;
    exact e = small ? ex((i128)(((u128)acc[1] << 64) | acc[0])) : (exact){0, acc[nw - 1] >> 63 ? -1 : 1};
    if (put_judged(e, kdt, o, f, op, nout, oshape, "the exact sum of products", err) != 0) goto done;
    for (int x = nout - 1; x >= 0; x--) {   /* the next output element */
      if (++oidx[x] < oshape[x]) break;
      oidx[x] = 0;
    }
  }
  out = tc_tensor_new(kdt, nout, oshape, err);
  if (out && tc_tensor_write(out, o, err) != 0) { tc_tensor_free(out); out = NULL; }
done:
  for (int i = 0; h && i < nops; i++) free(h[i]);
  free(h);
  free(ost);
  free(sst);
  free(off);
  free(o);
  return out;
}
