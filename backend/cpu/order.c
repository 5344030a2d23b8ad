/* CPU scans and sorting (TC_CALL_SCAN, TC_CALL_SORT), stamped per dtype
 * from the dtype table.
 *
 * Sorting is a stable LSD radix sort on an order key: every dtype maps to
 * an unsigned integer whose order is the sort order (integers: the sign bit
 * flipped; floats: the IEEE bits made monotone, -0.0 keyed as 0.0 and every
 * NaN as the largest key), descending flips the key, and (key, position)
 * pairs (argsort) or the keys alone (sort) are sorted 11 bits a pass,
 * skipping a pass where every key has the same digit. Radix sorting is linear in n and its passes are independent
 * of the data's order, which is why it beats a comparison sort on 10^7
 * elements; being LSD it is stable in both directions for free. The values
 * are then gathered by position, so -0.0, 0.0 and NaN payloads keep their
 * bits and their input order. */
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../order.h"

#define PTR(S, p) ((S *)(void *)(p))
#define CPTR(S, p) ((const S *)(const void *)(p))

static int unsupported(const tc_call *c, tc_err *err) {
  return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cpu", tc_dtype_name(c->dtype));
}

/* ---- scans (the combines: backend/order.h) ---- */
/* One scan of a row: each output is stored (rounded to S) and read back, so
 * f16/bf16 round at every step as NumPy's accumulate does. */
#define SCAN_ONE(OPN, E, S, C, CLS, LD, ST)                                  \
  static void scan_##OPN##_##E(int64_t n, const S *x, S *o) {                 \
    C acc = LD(x[0]);                                                         \
    o[0] = x[0];                                                              \
    for (int64_t i = 1; i < n; i++) {                                         \
      C v = LD(x[i]);                                                         \
      o[i] = ST(SC_##OPN##_##CLS(C, tc_u_##E, acc, v));                       \
      acc = LD(o[i]);                                                         \
    }                                                                         \
  }
#define K_SCAN(E, n_, S, C, CLS, B, LD, ST, ...) TC_SCANS(SCAN_ONE, E, S, C, CLS, LD, ST)
TC_FOR_ALL(K_SCAN, _)
typedef void (*scan_fn)(int64_t, const void *, void *);
#define SCAN_FN_(OPN, E) (scan_fn)(void (*)(void))scan_##OPN##_##E,
#define SCAN_ENTRY(E, ...) [TC_DT_##E] = {TC_SCANS(SCAN_FN_, E)},
static const scan_fn scan_table[TC_DT_COUNT][4] = {TC_FOR_ALL(SCAN_ENTRY, _)};

static int run_scan(tc_call *c, tc_err *err) {
  const tc_tensor *x = c->in[0];
  int64_t n = x->ndim ? x->shape[x->ndim - 1] : 1, total = tc_numel(x);
  if (total == 0 || n == 0) return 0;
  scan_fn fn = scan_table[c->dtype][tc_scan_slot(c->op)];
  size_t es = tc_dtype_size(c->dtype);
  const char *in = tc_tensor_data(x);
  char *out = tc_tensor_data(c->out);
  for (int64_t r = 0; r < total / n; r++) {
    if (tc_interrupt_flag) return cpu_interrupted(err);
    fn(n, in + (size_t)(r * n) * es, out + (size_t)(r * n) * es);
  }
  return 0;
}

/* ---- order keys (KEY_<CLASS>: backend/order.h) ---- */
#define PASTE TC_PASTE
#define PAIR_T(B) PASTE(pair_, KT_OF(B))
#define RADIX_FN(B) PASTE(radix_, KT_OF(B))

/* Stable LSD radix sort of elements of type T by the unsigned key KEY(e)
 * of type KT, 11 bits a pass (3 passes for a 32-bit key: the 2048 counters
 * of a pass stay in the L1/L2 cache). */
#define RBITS 11
#define RBUCKETS (1 << RBITS)
#define RADIX(NAME, T, KT, KEY)                                                               \
  static void NAME(T *a, T *tmp, int64_t n) {                                                 \
    if (n < 48) {                                                                             \
      for (int64_t i = 1; i < n; i++) {                                                       \
        T e = a[i];                                                                           \
        int64_t j = i;                                                                        \
        for (; j > 0 && KEY(a[j - 1]) > KEY(e); j--) a[j] = a[j - 1];                         \
        a[j] = e;                                                                             \
      }                                                                                       \
      return;                                                                                 \
    }                                                                                         \
    enum { P = (8 * sizeof(KT) + RBITS - 1) / RBITS };                                        \
    static _Thread_local int64_t cnt[P][RBUCKETS];                                            \
    memset(cnt, 0, sizeof cnt);                                                               \
    for (int64_t i = 0; i < n; i++) {                                                         \
      KT k = KEY(a[i]);                                                                       \
      for (int p = 0; p < P; p++) cnt[p][(k >> (RBITS * p)) & (RBUCKETS - 1)]++;              \
    }                                                                                         \
    T *src = a, *dst = tmp;                                                                   \
    for (int p = 0; p < P; p++) {                                                             \
      int64_t *c = cnt[p], sum = 0;                                                           \
      int sh = RBITS * p;                                                                     \
      if (c[(KEY(src[0]) >> sh) & (RBUCKETS - 1)] == n) continue;                             \
      for (int d = 0; d < RBUCKETS; d++) { int64_t t = c[d]; c[d] = sum; sum += t; }          \
      for (int64_t i = 0; i < n; i++) dst[c[(KEY(src[i]) >> sh) & (RBUCKETS - 1)]++] = src[i]; \
      T *t = src; src = dst; dst = t;                                                         \
    }                                                                                         \
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);                                      \
  }
typedef struct { uint32_t k; uint32_t i; } pair_uint32_t;
typedef struct { uint64_t k; uint32_t i; } pair_uint64_t;
#define PAIR_KEY(e) ((e).k)
#define SELF_KEY(e) (e)
RADIX(radix_uint32_t, pair_uint32_t, uint32_t, PAIR_KEY)
RADIX(radix_uint64_t, pair_uint64_t, uint64_t, PAIR_KEY)
RADIX(radixk_uint32_t, uint32_t, uint32_t, SELF_KEY)
RADIX(radixk_uint64_t, uint64_t, uint64_t, SELF_KEY)

/* Keys that map back to the value: the monotone bits as they are (-0.0
 * before 0.0; a NaN by its sign), so a sort of values alone sorts these
 * and then puts the zeros and the NaNs back in their input order. */
#define RAW_BOOL(KT, B, LD, v) ((KT)(v))
#define RAW_INT(KT, B, LD, v) KEY_INT(KT, B, LD, v)
#define RAW_FLT(KT, B, LD, v) PASTE(raw_flt_, KT_OF(B))((double)LD(v))
#define BACK_BOOL(S, KT, B, ST, k) ((S)(k))
#define BACK_INT(S, KT, B, ST, k) ((S)((k) ^ ((KT)1 << ((B) - 1))))
#define BACK_FLT(S, KT, B, ST, k) ST(PASTE(back_flt_, KT_OF(B))(k))
#define ISZERO_BOOL(C, v) 0
#define ISZERO_INT(C, v) 0
#define ISZERO_FLT(C, v) ((v) == 0)
#define ISNAN_BOOL(C, v) 0
#define ISNAN_INT(C, v) 0
#define ISNAN_FLT(C, v) ((v) != (v))
#define RAW_UINT(KT, B, LD, v) ((KT)(v))
#define BACK_UINT(S, KT, B, ST, k) ((S)(k))
#define ISZERO_UINT(C, v) 0
#define ISNAN_UINT(C, v) 0
static inline uint32_t raw_flt_uint32_t(double d) {
  float f = (float)d;
  uint32_t b;
  memcpy(&b, &f, 4);
  if (f != f) return UINT32_MAX;
  return b >> 31 ? ~b : b | 0x80000000u;
}
static inline uint64_t raw_flt_uint64_t(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  if (d != d) return UINT64_MAX;
  return b >> 63 ? ~b : b | 0x8000000000000000ull;
}
static inline float back_flt_uint32_t(uint32_t k) {
  uint32_t b = k >> 31 ? k & 0x7fffffffu : ~k;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline double back_flt_uint64_t(uint64_t k) {
  uint64_t b = k >> 63 ? k & 0x7fffffffffffffffull : ~k;
  double d;
  memcpy(&d, &b, 8);
  return d;
}

typedef struct { void *pairs, *tmp; } sort_buf;

/* Per dtype: sort a row (values or positions) and search a sorted row. */
#define K_SORT(E, n_, S, C, CLS, B, LD, ST, ...)                                                         \
  static void sort_##E(int64_t n, const S *x, void *out, bool arg, bool desc, sort_buf *b) {             \
    typedef KT_OF(B) KT;                                                                                 \
    KT flip = desc ? (KT)~(KT)0 : 0;                                                                     \
    if (arg) {                                                                                           \
      PAIR_T(B) *p = b->pairs;                                                                           \
      for (int64_t i = 0; i < n; i++) { p[i].k = KEY_##CLS(KT, B, LD, x[i]) ^ flip; p[i].i = (uint32_t)i; } \
      RADIX_FN(B)(p, b->tmp, n);                                                                         \
      int64_t *o = out;                                                                                  \
      for (int64_t i = 0; i < n; i++) o[i] = p[i].i;                                                     \
      return;                                                                                            \
    }                                                                                                    \
    /* values alone: half the bytes a pass, no gather */                                                 \
    KT *k = b->pairs;                                                                                    \
    int64_t nz = 0, nn = 0;                                                                              \
    for (int64_t i = 0; i < n; i++) {                                                                    \
      C v = LD(x[i]);                                                                                    \
      (void)v;                                                                                           \
      nz += ISZERO_##CLS(C, v);                                                                          \
      nn += ISNAN_##CLS(C, v);                                                                           \
      k[i] = RAW_##CLS(KT, B, LD, x[i]) ^ flip;                                                          \
    }                                                                                                    \
    PASTE(radixk_, KT_OF(B))(k, b->tmp, n);                                                              \
    S *o = out;                                                                                          \
    for (int64_t i = 0; i < n; i++) o[i] = BACK_##CLS(S, KT, B, ST, k[i] ^ flip);                        \
    if (nn) { /* the NaN run (last, or first descending) in input order */                              \
      int64_t j = desc ? 0 : n - nn;                                                                     \
      for (int64_t i = 0; i < n; i++)                                                                    \
        if (ISNAN_##CLS(C, LD(x[i]))) o[j++] = x[i];                                                     \
    }                                                                                                    \
    if (nz > 1) { /* the zeros, -0.0 and 0.0 equal: one run, in input order */                           \
      int64_t j = 0;                                                                                     \
      while (!ISZERO_##CLS(C, LD(o[j])) || ISNAN_##CLS(C, LD(o[j]))) j++;                                \
      for (int64_t i = 0; i < n; i++)                                                                    \
        if (ISZERO_##CLS(C, LD(x[i]))) o[j++] = x[i];                                                    \
    }                                                                                                    \
  }                                                                                                      \
  static void search_##E(int64_t n, const S *s, int64_t m, const S *v, int64_t *o, bool right) {         \
    typedef KT_OF(B) KT;                                                                                 \
    for (int64_t j = 0; j < m; j++) {                                                                    \
      KT kv = KEY_##CLS(KT, B, LD, v[j]);                                                                \
      int64_t lo = 0, hi = n;                                                                            \
      while (lo < hi) {                                                                                  \
        int64_t mid = lo + (hi - lo) / 2;                                                                \
        KT ks = KEY_##CLS(KT, B, LD, s[mid]);                                                            \
        if (right ? ks <= kv : ks < kv) lo = mid + 1;                                                    \
        else hi = mid;                                                                                   \
      }                                                                                                  \
      o[j] = lo;                                                                                         \
    }                                                                                                    \
  }
TC_FOR_ALL(K_SORT, _)
typedef void (*sort_fn)(int64_t, const void *, void *, bool, bool, sort_buf *);
typedef void (*search_fn)(int64_t, const void *, int64_t, const void *, int64_t *, bool);
#define SORT_ENTRY(E, ...) [TC_DT_##E] = (sort_fn)(void (*)(void))sort_##E,
#define SEARCH_ENTRY(E, ...) [TC_DT_##E] = (search_fn)(void (*)(void))search_##E,
static const sort_fn sort_table[TC_DT_COUNT] = {TC_FOR_ALL(SORT_ENTRY, _)};
static const search_fn search_table[TC_DT_COUNT] = {TC_FOR_ALL(SEARCH_ENTRY, _)};

static int run_sort(tc_call *c, tc_err *err) {
  const tc_tensor *x = c->in[0];
  if (c->op == TC_OP_SEARCHSORTED) {
    int64_t m = tc_numel(c->in[1]);
    const char *v = tc_tensor_data(c->in[1]);
    size_t es = tc_dtype_size(c->dtype);
    for (int64_t j = 0; j < m; j += CPU_CHUNK) {   /* blocks, so Ctrl-C is seen */
      if (tc_interrupt_flag) return cpu_interrupted(err);
      int64_t k = m - j < CPU_CHUNK ? m - j : CPU_CHUNK;
      search_table[c->dtype](tc_numel(x), tc_tensor_data(x), k, v + (size_t)j * es,
                             PTR(int64_t, tc_tensor_data(c->out)) + j, c->right);
    }
    return 0;
  }
  int64_t n = x->ndim ? x->shape[x->ndim - 1] : 1, total = tc_numel(x);
  if (total == 0 || n == 0) return 0;
  if (n > (int64_t)UINT32_MAX)
    return tc_err_set(err, TC_E_BAD_ARG, (int)c->op, (int)c->dtype, "cannot sort more than 2^32 - 1 elements along one axis");
  size_t ps = tc_dtype_bits(c->dtype) > 32 ? sizeof(pair_uint64_t) : sizeof(pair_uint32_t);
  /* scratch from the engine's block cache: fresh pages would be zeroed by
   * the kernel on every call, a quarter of the time of a large sort */
  const tc_engine *e = &tc_cpu_engine;
  size_t nb = (size_t)n * ps;
  sort_buf b = {e->alloc(nb), e->alloc(nb)};
  if (!b.pairs || !b.tmp) {
    if (b.pairs) e->release(b.pairs, nb);
    if (b.tmp) e->release(b.tmp, nb);
    return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "out of memory sorting %lld elements", (long long)n);
  }
  bool arg = c->op == TC_OP_ARGSORT;
  size_t es = tc_dtype_size(c->dtype), os = arg ? 8 : es;
  int rc = 0;
  for (int64_t r = 0; r < total / n; r++) {
    if (tc_interrupt_flag) { rc = cpu_interrupted(err); break; }
    sort_table[c->dtype](n, tc_tensor_data(x) + (size_t)(r * n) * es, tc_tensor_data(c->out) + (size_t)(r * n) * os,
                         arg, c->descending, &b);
  }
  e->release(b.pairs, nb);
  e->release(b.tmp, nb);
  return rc;
}

bool cpu_supports_order(const tc_call *c) {
  if ((unsigned)c->dtype >= TC_DT_COUNT) return false;
  if (c->kind == TC_CALL_SCAN) return tc_scan_slot(c->op) >= 0;
  return c->op == TC_OP_SORT || c->op == TC_OP_ARGSORT || c->op == TC_OP_SEARCHSORTED;
}

int cpu_run_order(tc_call *c, tc_err *err) {
  if (!cpu_supports_order(c)) return unsupported(c, err);
  return c->kind == TC_CALL_SCAN ? run_scan(c, err) : run_sort(c, err);
}
