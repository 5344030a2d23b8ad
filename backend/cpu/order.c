/* CPU scans and sorting (TC_CALL_SCAN, TC_CALL_SORT), stamped per dtype
 * from the dtype table.
 *
 * Sorting is a stable radix sort on an order key: every dtype maps to an
 * unsigned integer whose order is the sort order (integers: the sign bit
 * flipped; floats: the IEEE bits made monotone, -0.0 keyed as 0.0 and every
 * NaN as the largest key), descending flips the key, and (key, position)
 * pairs (argsort) or the keys alone (sort) are sorted as the "radix sort"
 * section below says. Radix sorting is linear in n and independent of the
 * data's order, which is why it beats a comparison sort on 10^7 elements;
 * every pass is stable, so equal keys keep their input order in both
 * directions. A sort of values sorts keys that map back to the value and
 * then puts the zeros and the NaNs back in their input order, so -0.0, 0.0
 * and NaN payloads keep their bits and their input order. */
#include <math.h>
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

/* ---- radix sort ----
 * A row is keyed, each key less the row's smallest so that only the bits
 * that vary are sorted. A large row is then split once, through memory,
 * into groups of consecutive key prefixes (the top PBITS bits of the keys
 * that vary), each group about GROUP_BYTES: a histogram of the prefixes
 * says where the groups start, and each task moves its own part of the row
 * after the parts before it (so the split is stable). Each group, and a
 * small row, is then sorted in the cache: most significant digit first
 * while it is large, then least significant digit first, skipping a digit
 * where every key has the same, and its output written while it is there.
 * Parts and groups are tasks of the thread pool; a stable sort has one
 * result, so it does not depend on the thread count. */
#define RBITS 11
#define RBUCKETS (1 << RBITS)
#define LEAF_BYTES ((int64_t)512 << 10)   /* a bucket this small is sorted LSD: it and its scratch fit the L2 cache */
#define GROUP_BYTES LEAF_BYTES
#define SORT_TASKS 16                 /* parts of a row keyed and split by one task each, at most */
#define PBITS 16                      /* bits of the prefixes the groups are made of */
#define SMALL_ROW ((int64_t)1 << 17)  /* elements of a row sorted whole, without the split */

typedef struct sort_row sort_row;
typedef struct {
  size_t size;   /* of an element */
  int kbits;     /* of a key */
  void (*any)(void *a, void *t, int64_t n, int hi, const sort_row *r);
  void (*hist)(const void *k, int64_t n, uint64_t kmin, int s, uint32_t *h);
  void (*split)(const void *k, int64_t n, uint64_t kmin, int s, const uint16_t *gid, uint32_t *off, void *t);
  void (*rebase)(void *k, int64_t n, uint64_t kmin);
  int (*order)(const void *k, int64_t n);   /* 1: keys nondecreasing; -1: strictly decreasing; else 0 */
} radix_ops;
/* A sorted leaf of the row: its output, from where it lies in the keys or the scratch. */
static void sort_leaf(const sort_row *r, const void *s, int64_t n);

/* Per element type T (a key, or a key and a position) with the unsigned
 * key KEY(e) of type KT: the sort of a bucket, and a part's histogram of
 * the prefixes (key - kmin) >> s and its split into the groups gid[prefix]
 * (SETKEY stores the lesser key). Counts and positions fit 32 bits: a row
 * holds fewer than 2^32 elements. */
#define RADIX(NAME, T, KT, KEY, SETKEY)                                                        \
  /* Sorts a[0, n) by bits [0, hi) of the keys (the bits above are equal)                      \
   * with t as scratch, handing each sorted leaf to sort_leaf. */                              \
  static void NAME##_any(void *a_, void *t_, int64_t n, int hi, const sort_row *r) {           \
    T *a = a_, *t = t_;                                                                        \
    if (hi == 0 || n < 2) {                                                                    \
      sort_leaf(r, a, n);                                                                      \
      return;                                                                                  \
    }                                                                                          \
    if (n < 32) {                                                                              \
      for (int64_t i = 1; i < n; i++) {                                                        \
        T e = a[i];                                                                            \
        int64_t j = i;                                                                         \
        for (; j > 0 && KEY(a[j - 1]) > KEY(e); j--) a[j] = a[j - 1];                          \
        a[j] = e;                                                                              \
      }                                                                                        \
      sort_leaf(r, a, n);                                                                      \
      return;                                                                                  \
    }                                                                                          \
    if (n * (int64_t)sizeof(T) <= LEAF_BYTES || hi <= RBITS) {                                 \
      /* np digits of w <= RBITS bits (the last may be narrower): the np whose \
       * passes and buckets cost least, np * (n + 2^w), so that a small bucket \
       * of many bits takes more, narrower digits */                           \
      enum { CMAX = 6 * RBUCKETS };                                                            \
      uint32_t cnt[CMAX];                                                                      \
      int np = (hi + RBITS - 1) / RBITS, w = (hi + np - 1) / np;                               \
      for (int q = np + 1, v; q <= hi; q++)                                                    \
        if (v = (hi + q - 1) / q, q << v <= CMAX && q * (n + (1 << v)) < np * (n + (1 << w))) { \
          np = q;                                                                              \
          w = v;                                                                               \
        }                                                                                      \
      KT dm = ((KT)1 << w) - 1;                                                                \
      memset(cnt, 0, ((size_t)np << w) * sizeof cnt[0]);                                       \
      for (int64_t i = 0; i < n; i++) {                                                        \
        KT k = KEY(a[i]);                                                                      \
        for (int p = 0; p < np; p++) cnt[(p << w) + ((k >> (w * p)) & dm)]++;                  \
      }                                                                                        \
      if (np == 1 && sizeof(T) == sizeof(KT)) { /* keys alone in one digit: each key counted,  \
                                                   * then written that many times, in order */ \
        KT top = KEY(a[0]) & ~dm;                                                              \
        T e = a[0];                                                                            \
        int64_t o = 0;                                                                         \
        for (KT d = 0; d <= dm; d++)                                                           \
          for (uint32_t j = 0; j < cnt[d]; j++) {                                              \
            SETKEY(e, top | d);                                                                \
            t[o++] = e;                                                                        \
          }                                                                                    \
        sort_leaf(r, t, n);                                                                    \
        return;                                                                                \
      }                                                                                        \
      T *src = a, *dst = t;                                                                    \
      for (int p = 0; p < np; p++) {                                                           \
        uint32_t *c = cnt + (p << w), sum = 0;                                                 \
        int sh = w * p;                                                                        \
        if (c[(KEY(src[0]) >> sh) & dm] == n) continue;                                        \
        for (KT d = 0; d <= dm; d++) { uint32_t x = c[d]; c[d] = sum; sum += x; }              \
        for (int64_t i = 0; i < n; i++) dst[c[(KEY(src[i]) >> sh) & dm]++] = src[i];           \
        T *x = src; src = dst; dst = x;                                                        \
      }                                                                                        \
      sort_leaf(r, src, n);                                                                    \
      return;                                                                                  \
    }                                                                                          \
    /* a large bucket: first drop the top bits that all its keys share (one \
     * pass, not one per bit); then split by the top wm bits, as few as make \
     * the buckets about leaf-sized (more would leave small buckets of many \
     * bits) */                                                                \
    KT dif = 0, k0 = KEY(a[0]);                                                                \
    for (int64_t i = 1; i < n; i++) dif |= KEY(a[i]) ^ k0;                                     \
    int top = dif ? 64 - __builtin_clzll((unsigned long long)dif) : 0;                         \
    if (top < hi) {                                                                            \
      NAME##_any(a, t, n, top, r);                                                             \
      return;                                                                                  \
    }                                                                                          \
    int wm = 1;                                                                                \
    while (wm < RBITS && (LEAF_BYTES / (int64_t)sizeof(T)) << wm < n) wm++;                    \
    int lo = hi - wm;                                                                          \
    KT dm = ((KT)1 << wm) - 1;                                                                 \
    uint32_t c[RBUCKETS], st[RBUCKETS + 1], sum = 0;                                           \
    memset(c, 0, sizeof c);                                                                    \
    for (int64_t i = 0; i < n; i++) c[(KEY(a[i]) >> lo) & dm]++;                               \
    for (KT d = 0; d <= dm; d++) { st[d] = sum; sum += c[d]; c[d] = st[d]; }                   \
    st[dm + 1] = sum;                                                                          \
    for (int64_t i = 0; i < n; i++) t[c[(KEY(a[i]) >> lo) & dm]++] = a[i];                     \
    for (KT d = 0; d <= dm; d++)                                                               \
      if (st[d + 1] > st[d]) NAME##_any(t + st[d], a + st[d], st[d + 1] - st[d], lo, r);       \
  }                                                                                            \
  static void NAME##_hist(const void *k_, int64_t n, uint64_t kmin, int s, uint32_t *h) {      \
    const T *k = k_;                                                                           \
    for (int64_t i = 0; i < n; i++) h[(KT)(KEY(k[i]) - (KT)kmin) >> s]++;                      \
  }                                                                                            \
  static void NAME##_split(const void *k_, int64_t n, uint64_t kmin, int s, const uint16_t *gid, \
                           uint32_t *off, void *t_) {                                          \
    const T *k = k_;                                                                           \
    T *t = t_;                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                          \
      T e = k[i];                                                                              \
      KT v = (KT)(KEY(e) - (KT)kmin);                                                          \
      SETKEY(e, v);                                                                            \
      t[off[gid[v >> s]]++] = e;                                                               \
    }                                                                                          \
  }                                                                                            \
  /* every key less kmin */                                                                    \
  static void NAME##_rebase(void *k_, int64_t n, uint64_t kmin) {                              \
    T *k = k_;                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                          \
      T e = k[i];                                                                              \
      SETKEY(e, (KT)(KEY(e) - (KT)kmin));                                                      \
      k[i] = e;                                                                                \
    }                                                                                          \
  }                                                                                            \
  /* stops at the first pair out of either order: at once on unordered keys */                   \
  static int NAME##_order(const void *k_, int64_t n) {                                          \
    const T *k = k_;                                                                            \
    int64_t i = 1;                                                                              \
    while (i < n && KEY(k[i - 1]) <= KEY(k[i])) i++;                                            \
    if (i == n) return 1;                                                                       \
    if (i > 1) return 0;                                                                        \
    while (i < n && KEY(k[i - 1]) > KEY(k[i])) i++;                                             \
    return i == n ? -1 : 0;                                                                     \
  }                                                                                             \
  static const radix_ops NAME##_ops = {sizeof(T), 8 * (int)sizeof(KT), NAME##_any, NAME##_hist, NAME##_split, \
                                       NAME##_rebase, NAME##_order};

typedef struct { uint32_t k; uint32_t i; } pair_uint32_t;
typedef struct { uint64_t k; uint32_t i; } pair_uint64_t;
#define PAIR_KEY(e) ((e).k)
#define PAIR_SET(e, v) ((e).k = (v))
#define SELF_KEY(e) (e)
#define SELF_SET(e, v) ((e) = (v))
RADIX(radix_uint32_t, pair_uint32_t, uint32_t, PAIR_KEY, PAIR_SET)
RADIX(radix_uint64_t, pair_uint64_t, uint64_t, PAIR_KEY, PAIR_SET)
RADIX(radixk_uint32_t, uint32_t, uint32_t, SELF_KEY, SELF_SET)
RADIX(radixk_uint64_t, uint64_t, uint64_t, SELF_KEY, SELF_SET)

/* One row being sorted: the dtype's keying and output (build, finish), the
 * element type's radix functions, and the state the tasks share. */
struct sort_row {
  const void *x;
  void *out;
  char *k, *t;                /* keys (or key-position pairs) and scratch */
  int64_t n, part;            /* elements; per task of the keying and split */
  bool arg, desc;
  int ntask, s, np, ngroup;   /* parts; prefix = key >> s, np of them; groups */
  uint64_t kmin;              /* subtracted from every key by the split */
  const radix_ops *ops;
  /* keys of x[lo, hi) into k: the task's smallest and largest key, zeros and NaNs */
  void (*build)(sort_row *r, int64_t lo, int64_t hi, int task);
  /* out[lo, hi) from the sorted elements at s */
  void (*finish)(const sort_row *r, const void *s, int64_t lo, int64_t hi);
  uint64_t tmin[SORT_TASKS], tmax[SORT_TASKS];
  int64_t tnz[SORT_TASKS], tnn[SORT_TASKS];
  uint32_t *cnt;              /* ntask rows of np: each part's histogram, then its offset in each group */
  uint16_t *gid;              /* np: the group of each prefix */
  uint32_t *gst;              /* np + 1: where each group starts */
  uint8_t *ghi;               /* np: the key bits that vary within each group */
};
/* Bytes of the scratch of cnt, gid, gst and ghi. */
#define SORT_AUX ((size_t)SORT_TASKS * 4 << PBITS) + ((size_t)2 << PBITS) + ((size_t)4 << PBITS) + 4 + ((size_t)1 << PBITS)

static void sort_leaf(const sort_row *r, const void *s, int64_t n) {
  size_t es = r->ops->size;
  uintptr_t p = (uintptr_t)s, k = (uintptr_t)r->k;
  int64_t lo = (int64_t)((p >= k && p < k + (size_t)r->n * es ? p - k : p - (uintptr_t)r->t) / es);
  r->finish(r, s, lo, lo + n);
}

static int build_task(void *ctx, int task, int worker) {
  sort_row *r = ctx;
  (void)worker;
  int64_t lo = task * r->part, hi = lo + r->part < r->n ? lo + r->part : r->n;
  r->build(r, lo, hi, task);
  if (r->ntask > 1) tc_progress_add(hi - lo);   /* a small row's whole sort is counted by run_sort */
  return tc_interrupt_flag ? -1 : 0;
}
static int hist_task(void *ctx, int task, int worker) {
  sort_row *r = ctx;
  (void)worker;
  int64_t lo = task * r->part, hi = lo + r->part < r->n ? lo + r->part : r->n;
  uint32_t *h = r->cnt + (size_t)task * r->np;
  memset(h, 0, (size_t)r->np * sizeof *h);
  r->ops->hist(r->k + (size_t)lo * r->ops->size, hi - lo, r->kmin, r->s, h);
  tc_progress_add(hi - lo);
  return tc_interrupt_flag ? -1 : 0;
}
static int split_task(void *ctx, int task, int worker) {
  sort_row *r = ctx;
  (void)worker;
  int64_t lo = task * r->part, hi = lo + r->part < r->n ? lo + r->part : r->n;
  r->ops->split(r->k + (size_t)lo * r->ops->size, hi - lo, r->kmin, r->s, r->gid, r->cnt + (size_t)task * r->np, r->t);
  tc_progress_add(hi - lo);
  return tc_interrupt_flag ? -1 : 0;
}
static int group_task(void *ctx, int g, int worker) {
  sort_row *r = ctx;
  (void)worker;
  int64_t lo = r->gst[g], m = r->gst[g + 1] - lo;
  size_t es = r->ops->size;
  if (m) r->ops->any(r->t + lo * es, r->k + lo * es, m, r->ghi[g], r);
  tc_progress_add(m);
  return tc_interrupt_flag ? -1 : 0;
}

/* The groups: consecutive prefixes while a group holds at most GROUP_BYTES
 * (a prefix larger than that is a group of its own), and each part's
 * offset in each group, written over its histogram (a group's index is at
 * most its first prefix's, whose count is read before it is written). */
static void make_groups(sort_row *r) {
  int64_t target = GROUP_BYTES / (int64_t)r->ops->size, acc = 0;
  int g = -1, first = 0;
  for (int p = 0; p < r->np; p++) {
    int64_t c = 0;
    for (int i = 0; i < r->ntask; i++) c += r->cnt[(size_t)i * r->np + p];
    if (c && (g < 0 || acc + c > target)) {
      g++;
      acc = 0;
      first = p;
    }
    if (c) {   /* the key bits that vary within the group: s and those of its prefixes */
      acc += c;
      r->ghi[g] = (uint8_t)(r->s + (first == p ? 0 : 32 - __builtin_clz((unsigned)(first ^ p))));
    }
    r->gid[p] = (uint16_t)(g < 0 ? 0 : g);
  }
  r->ngroup = g + 1;
  for (int i = 0; i < r->ntask; i++) {
    uint32_t *row = r->cnt + (size_t)i * r->np;
    for (int p = 0; p < r->np; p++) {
      uint32_t v = row[p];
      if (p == 0 || r->gid[p] != r->gid[p - 1]) row[r->gid[p]] = v;
      else row[r->gid[p]] += v;
    }
  }
  uint32_t pos = 0;
  for (g = 0; g < r->ngroup; g++) {
    r->gst[g] = pos;
    for (int i = 0; i < r->ntask; i++) {
      uint32_t c = r->cnt[(size_t)i * r->np + g];
      r->cnt[(size_t)i * r->np + g] = pos;
      pos += c;
    }
  }
  r->gst[r->ngroup] = pos;
}

/* A short row (one task) whose keys vary in more bits than VSORT_BITS(n)
 * (more than three radix passes, or four from 2049 elements, six from
 * 4097), or VSORT_BITS32(n) for a value sort of 32-bit keys, is sorted by
 * vsort.c instead. 1000 elements, radix / vsort / NumPy, us: f64 in
 * [-1, 1] 14.9 / 6.8 / 5.0, f32 10.5 / 3.5 / 4.0, i64 of 40 bits 12.7 /
 * 7.4; f32 of 4096 36 / 17 / 11; f64 of 16384 230 / 170 / 865. Value
 * sorts go as their keys; an argsort's 32-bit key and position as key <<
 * 32 | position; a 64-bit key less the least, its top 64 - ib bits, as
 * key << ib | position (ib: the bits of a position). Packed keys are
 * unique where positions are, so their order is the stable sort's, except
 * within a run of 64-bit keys equal in the bits kept: such runs are put in
 * (key, position) order after (by insertion: a run longer than VSORT_RUN,
 * which needs keys within 2^(bits + ib - 64) of each other in a row whose
 * keys span more than 2^(64 - ib), hands the row back to the radix sort).
 * Returns whether it sorted (r->k and r->t, n elements each, serve as
 * the packed keys and the scratch). An argsort's output reads only the
 * positions. */
#define VSORT_BITS(n) ((n) <= 2048 ? 24 : (n) <= 4096 ? 32 : 48)
#define VSORT_BITS32(n) ((n) <= 4096 ? 16 : 24)
#define VSORT_RUN 32
static bool vsort_row(sort_row *r, uint64_t mn, int bits) {
  int64_t n = r->n;
  size_t es = r->ops->size;
  int most = !r->arg && es == 4 ? VSORT_BITS32(n) : VSORT_BITS(n);
  if (bits <= most || !cpu_vsort_applies(n)) return false;
  uint64_t *t = (uint64_t *)(void *)r->t, *k = (uint64_t *)(void *)r->k;
  if (!r->arg && es == 8) return cpu_vsort_u64(k, t, n);   /* 64-bit keys, sorted where they are */
  if (!r->arg) return cpu_vsort_u32((uint32_t *)(void *)r->k, (uint32_t *)(void *)r->t, n);
  if (es == sizeof(pair_uint32_t)) {
    pair_uint32_t *p = (pair_uint32_t *)(void *)r->k;
    for (int64_t i = 0; i < n; i++) t[i] = (uint64_t)p[i].k << 32 | p[i].i;
    cpu_vsort_u64(t, k, n);
    for (int64_t i = 0; i < n; i++) p[i].i = (uint32_t)t[i];
    return true;
  }
  /* 64-bit keys and positions: t's second half (it holds 16 bytes an element) is the scratch, and the pairs
   * stay as built (p[i] is position i's) for the runs */
  pair_uint64_t *p = (pair_uint64_t *)(void *)r->k;
  int ib = n > 1 ? 64 - __builtin_clzll((unsigned long long)(n - 1)) : 1, sh = bits + ib > 64 ? bits + ib - 64 : 0;
  uint64_t low = ((uint64_t)1 << ib) - 1;
  for (int64_t i = 0; i < n; i++) t[i] = (p[i].k - mn) >> sh << ib | p[i].i;
  cpu_vsort_u64(t, t + n, n);
  for (int64_t i = 0, j; sh && i < n; i = j) {
    for (j = i + 1; j < n && t[j] >> ib == t[i] >> ib;) j++;
    if (j - i > VSORT_RUN) return false;
    for (int64_t q = i + 1; q < j; q++) {   /* by the whole key; positions ascend already */
      uint64_t e = t[q], ke = p[e & low].k;
      int64_t m = q;
      for (; m > i && p[t[m - 1] & low].k > ke; m--) t[m] = t[m - 1];
      t[m] = e;
    }
  }
  for (int64_t i = 0; i < n; i++) p[i].i = (uint32_t)(t[i] & low);
  return true;
}

/* Sorts a row into r->out: -1 if interrupted. */
static int radix_row(sort_row *r) {
  int64_t n = r->n;
  r->ntask = n >= SMALL_ROW ? (int)(n / (SMALL_ROW / 2) < SORT_TASKS ? n / (SMALL_ROW / 2) : SORT_TASKS) : 1;
  r->part = (n + r->ntask - 1) / r->ntask;
  r->kmin = 0;
  if (cpu_parallel(r->ntask, build_task, r) < 0) return -1;
  uint64_t mn = r->tmin[0], mx = r->tmax[0];
  for (int i = 1; i < r->ntask; i++) {
    mn = r->tmin[i] < mn ? r->tmin[i] : mn;
    mx = r->tmax[i] > mx ? r->tmax[i] : mx;
  }
  int ord = mn == mx ? 1 : r->ops->order(r->k, n);
  if (ord > 0) {   /* keys already in order (all equal included): a stable sort keeps the input order */
    sort_leaf(r, r->k, n);
    return 0;
  }
  if (ord < 0) {   /* strictly decreasing (no equal keys whose order to keep): the input reversed */
    size_t es = r->ops->size;
    for (int64_t i = 0; i < n; i++) memcpy(r->t + (size_t)i * es, r->k + (size_t)(n - 1 - i) * es, es);
    sort_leaf(r, r->t, n);
    return 0;
  }
  int bits = 64 - __builtin_clzll(mx - mn);   /* that the keys less the least vary in */
  if (r->ntask == 1) {   /* small: sorted whole, in the cache, by the bits below */
    /* the highest where the least and greatest key differ (every key between
     * them has the same bits above it); when fewer bits hold the keys less
     * the least (a range across a power of two: integers of both signs),
     * those */
    int hi = 64 - __builtin_clzll(mn ^ mx);
    if (vsort_row(r, mn, bits)) {
      sort_leaf(r, r->k, n);
      return 0;
    }
    if (bits < hi) {
      r->ops->rebase(r->k, n, mn);
      r->kmin = mn;
      hi = bits;
    }
    r->ops->any(r->k, r->t, n, hi, r);
    return 0;
  }
  r->kmin = mn;
  r->s = bits > PBITS ? bits - PBITS : 0;
  r->np = 1 << (bits - r->s);
  if (cpu_parallel(r->ntask, hist_task, r) < 0) return -1;
  make_groups(r);
  if (cpu_parallel(r->ntask, split_task, r) < 0) return -1;
  return cpu_parallel(r->ngroup, group_task, r) < 0 ? -1 : 0;
}

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
/* without branches, so that the keying and output loops vectorise */
static inline uint32_t raw_flt_uint32_t(double d) {
  float f = (float)d;
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t k = b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u);
  return f != f ? UINT32_MAX : k;
}
static inline uint64_t raw_flt_uint64_t(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  uint64_t k = b ^ ((uint64_t)((int64_t)b >> 63) | 0x8000000000000000ull);
  return d != d ? UINT64_MAX : k;
}
static inline float back_flt_uint32_t(uint32_t k) {
  uint32_t b = k ^ (((k >> 31) - 1) | 0x80000000u);
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline double back_flt_uint64_t(uint64_t k) {
  uint64_t b = k ^ (((k >> 63) - 1) | 0x8000000000000000ull);
  double d;
  memcpy(&d, &b, 8);
  return d;
}

/* Per dtype: a part's keys, a bucket's output, the NaN and zero runs of a
 * sort of values, and the search of a sorted row. A sort of values sorts
 * the RAW keys, which map back to the value, so these put the zeros (-0.0
 * and 0.0, equal) and the NaNs back in their input order afterwards. */
#define K_SORT(E, n_, S, C, CLS, B, LD, ST, ...)                                                         \
  CPU_CLONES static void build_##E(sort_row *r, int64_t lo, int64_t hi, int task) {                               \
    typedef KT_OF(B) KT;                                                                                 \
    const S *x = r->x;                                                                                   \
    KT flip = r->desc ? (KT)~(KT)0 : 0, mn = (KT)~(KT)0, mx = 0;                                         \
    int64_t nz = 0, nn = 0;                                                                              \
    if (r->arg) {                                                                                        \
      PAIR_T(B) *p = (void *)r->k;                                                                       \
      for (int64_t i = lo; i < hi; i++) {                                                                \
        KT k = KEY_##CLS(KT, B, LD, x[i]) ^ flip;                                                        \
        p[i].k = k;                                                                                      \
        p[i].i = (uint32_t)i;                                                                            \
        mn = k < mn ? k : mn;                                                                            \
        mx = k > mx ? k : mx;                                                                            \
      }                                                                                                  \
    } else {                                                                                             \
      KT *kp = (void *)r->k;                                                                             \
      for (int64_t i = lo; i < hi; i++) {                                                                \
        C v = LD(x[i]);                                                                                  \
        (void)v;                                                                                         \
        nz += ISZERO_##CLS(C, v);                                                                        \
        nn += ISNAN_##CLS(C, v);                                                                         \
        KT k = RAW_##CLS(KT, B, LD, x[i]) ^ flip;                                                        \
        kp[i] = k;                                                                                       \
        mn = k < mn ? k : mn;                                                                            \
        mx = k > mx ? k : mx;                                                                            \
      }                                                                                                  \
    }                                                                                                    \
    r->tmin[task] = mn;                                                                                  \
    r->tmax[task] = mx;                                                                                  \
    r->tnz[task] = nz;                                                                                   \
    r->tnn[task] = nn;                                                                                   \
  }                                                                                                      \
  static void finish_##E(const sort_row *r, const void *s, int64_t lo, int64_t hi) {                     \
    typedef KT_OF(B) KT;                                                                                 \
    if (r->arg) {                                                                                        \
      const PAIR_T(B) *p = s;                                                                            \
      int64_t *o = (int64_t *)r->out + lo;                                                               \
      for (int64_t i = 0; i < hi - lo; i++) o[i] = p[i].i;                                               \
      return;                                                                                            \
    }                                                                                                    \
    const KT *k = s;                                                                                     \
    KT flip = r->desc ? (KT)~(KT)0 : 0, kmin = (KT)r->kmin;                                              \
    S *o = (S *)r->out + lo;                                                                             \
    for (int64_t i = 0; i < hi - lo; i++) o[i] = BACK_##CLS(S, KT, B, ST, (KT)((KT)(k[i] + kmin) ^ flip)); \
  }                                                                                                      \
  static void fix_##E(const sort_row *r, int64_t nz, int64_t nn) {                                       \
    const S *x = r->x;                                                                                   \
    S *o = r->out;                                                                                       \
    int64_t n = r->n;                                                                                    \
    if (nn) { /* the NaN run (last, or first descending) in input order */                              \
      int64_t j = r->desc ? 0 : n - nn;                                                                  \
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

/* ---- selection: a sort call with kth positions (src/engine.h) ----
 * When the caller reads only some positions of each sorted row (quantiles,
 * topk), the row's (order key, position) pairs are partitioned around
 * those positions alone: quickselect in the pairs' order, which is the
 * stable sort's (equal keys by position), so each asked position holds
 * what the stable sort puts there; the other positions hold positions
 * (argsort) or values (sort: the row as it was there) of the row. Median-of-three pivots; a range still
 * unsettled after 2 log2(n) + 8 rounds is sorted whole (qsort). */
#define PAIR_LESS(a, b) ((a).k < (b).k || ((a).k == (b).k && (a).i < (b).i))
#define SEL_SMALL 16
#define K_MSEL(KT)                                                                               \
  static int pcmp_##KT(const void *a_, const void *b_) {                                         \
    const pair_##KT *a = a_, *b = b_;                                                            \
    return PAIR_LESS(*a, *b) ? -1 : PAIR_LESS(*b, *a) ? 1 : 0;                                   \
  }                                                                                              \
  static void psort_##KT(pair_##KT *a, int64_t n) {                                              \
    if (n > SEL_SMALL) {                                                                         \
      qsort(a, (size_t)n, sizeof *a, pcmp_##KT);                                                 \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t i = 1; i < n; i++) {                                                            \
      pair_##KT e = a[i];                                                                        \
      int64_t j = i;                                                                             \
      for (; j > 0 && PAIR_LESS(e, a[j - 1]); j--) a[j] = a[j - 1];                              \
      a[j] = e;                                                                                  \
    }                                                                                            \
  }                                                                                              \
  /* a[lo, hi) settled at the positions ks[0, nk) (ascending, in range) */                       \
  static void msel_##KT(pair_##KT *a, int64_t lo, int64_t hi, const int64_t *ks, int64_t nk, int depth) { \
    pair_##KT t;                                                                                 \
    for (int end = 0; end < 2 && nk > 0 && hi - lo > 1; end++) {   /* an end asked: one scan */  \
      bool last = end == 0;                                                                      \
      if (last ? ks[nk - 1] != hi - 1 : ks[0] != lo) continue;                                   \
      int64_t b = last ? hi - 1 : lo;                                                            \
      for (int64_t q = lo; q < hi; q++)                                                          \
        if (last ? PAIR_LESS(a[b], a[q]) : PAIR_LESS(a[q], a[b])) b = q;                         \
      int64_t d = last ? hi - 1 : lo;                                                            \
      t = a[b]; a[b] = a[d]; a[d] = t;                                                           \
      if (last) { hi--; nk--; } else { lo++; ks++; nk--; }                                       \
    }                                                                                            \
    while (nk > 0) {                                                                             \
      if (hi - lo <= SEL_SMALL || depth-- <= 0) {                                                \
        psort_##KT(a + lo, hi - lo);                                                             \
        return;                                                                                  \
      }                                                                                          \
      int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 2;                                      \
      if (PAIR_LESS(a[mid], a[lo])) { t = a[mid]; a[mid] = a[lo]; a[lo] = t; }                   \
      if (PAIR_LESS(a[hi - 1], a[lo])) { t = a[hi - 1]; a[hi - 1] = a[lo]; a[lo] = t; }          \
      if (PAIR_LESS(a[hi - 1], a[mid])) { t = a[hi - 1]; a[hi - 1] = a[mid]; a[mid] = t; }       \
      pair_##KT pv = a[mid];                                                                     \
      a[mid] = a[hi - 2];                                                                        \
      a[hi - 2] = pv;                                                                            \
      for (;;) {   /* a[lo] and a[hi - 1] stop the scans */                                      \
        do i++; while (PAIR_LESS(a[i], pv));                                                     \
        do j--; while (PAIR_LESS(pv, a[j]));                                                     \
        if (i >= j) break;                                                                       \
        t = a[i]; a[i] = a[j]; a[j] = t;                                                         \
      }                                                                                          \
      a[hi - 2] = a[i];                                                                          \
      a[i] = pv;                                                                                 \
      int64_t m = 0;                                                                             \
      while (m < nk && ks[m] < i) m++;                                                           \
      int64_t e = m < nk && ks[m] == i ? m + 1 : m;                                              \
      msel_##KT(a, lo, i, ks, m, depth);                                                         \
      lo = i + 1;                                                                                \
      ks += e;                                                                                   \
      nk -= e;                                                                                   \
    }                                                                                            \
  }
K_MSEL(uint32_t)
K_MSEL(uint64_t)
/* ---- selection narrowed by a sample ----
 * A row of SAMPLE_MIN or more is narrowed before it is selected: the keys of about
 * 4 sqrt(n) elements (at most 65536) at fixed pseudo-random positions are selected at the ranks a
 * few standard deviations below and above each asked position's expected
 * rank, which gives a key bracket [lo, hi] (the row's smallest or largest
 * key where a rank falls outside the sample) that most likely holds the
 * key at that position. One scan of the row (across threads when it is
 * the only row) counts the keys below each bracket and gathers the
 * (key, position) pairs inside it. A pair sorts before every pair of a
 * greater key, so the pairs of bracket j fill the stable order's positions
 * [below_j, below_j + count_j): an asked position p there is position
 * p - below_j + (the pairs of the brackets before) of the gathered pairs,
 * which msel settles. A bracket that does not hold its positions (an
 * unlucky sample, or a row the sample misjudges) hands the row back to the
 * plain selection; the result is the same, only the time differs. */
#define SEL_BR 16                        /* brackets at most */
#define SAMPLE_MIN ((int64_t)1 << 9)     /* rows shorter are selected plainly (topk of 600 f64: 1.9 us, plainly 2.3) */
#define SCAN_BLOCK 256
typedef struct { uint64_t lo, hi; int64_t k0, k1; } sbracket;   /* keys [lo, hi]; asked ks[k0, k1) */
typedef struct { int64_t n, below[SEL_BR], cnt[SEL_BR]; } sscan_acc;
typedef struct {
  uint64_t (*key)(const void *x, int64_t i, uint64_t flip);
  void (*scan)(const void *x, int64_t lo, int64_t hi, uint64_t flip, const sbracket *br, int nbr, sscan_acc *acc,
               void *cand);
} ssel_ops;

static int margin_sd = 4;              /* a bracket's margin, in standard deviations of a sample rank */
static int64_t bsel_counts[2];         /* rows settled, handed back (cpu_select_margin) */

int cpu_select_margin(int sd, int64_t counts[2]) {
  int old = margin_sd;
  margin_sd = sd > 0 ? sd : 4;
  if (counts)
    for (int i = 0; i < 2; i++) counts[i] = __atomic_exchange_n(&bsel_counts[i], 0, __ATOMIC_RELAXED);
  return old;
}

/* The s-th sample position of a row of n (< 2^32) elements: splitmix64. */
static int64_t sample_pos(uint64_t s, int64_t n) {
  uint64_t z = (s + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (int64_t)(((z >> 32) * (uint64_t)n) >> 32);
}

/* One part of the row's scan: its pairs gathered at cand + lo, and its
 * part of the output filled (the row's values, or positions). */
typedef struct {
  const ssel_ops *o;
  const char *x;
  char *out, *cand;
  size_t es, ps;
  int64_t n, per;
  uint64_t flip;
  const sbracket *br;
  int nbr;
  bool arg;
  sscan_acc *acc;
} sscan_job;

static int sscan_task(void *ctx, int t, int w) {
  (void)w;
  const sscan_job *j = ctx;
  int64_t lo = t * j->per, hi = lo + j->per < j->n ? lo + j->per : j->n;
  sscan_acc *a = &j->acc[t];
  memset(a, 0, sizeof *a);
  for (int64_t b = lo; b < hi; b += CPU_CHUNK) {
    if (tc_interrupt_flag) return -1;
    int64_t e = hi - b < CPU_CHUNK ? hi - b : CPU_CHUNK;
    j->o->scan(j->x, b, b + e, j->flip, j->br, j->nbr, a, j->cand + (size_t)lo * j->ps);
    if (j->arg)
      for (int64_t i = b; i < b + e; i++) ((int64_t *)(void *)j->out)[i] = i;
    else memcpy(j->out + (size_t)b * j->es, j->x + (size_t)b * j->es, (size_t)e * j->es);
  }
  return 0;
}

/* Brackets from the sample for the asked ks[0, nk) of a row of n: their
 * count, 0 when there would be more than SEL_BR or they would gather more
 * than half the row. r receives the sample ranks to select (nr of them),
 * in order; a bracket's lo and hi hold its ranks for now (m: none). */
static int sample_brackets(int64_t n, int64_t m, const int64_t *ks, int64_t nk, sbracket *br, int64_t *r, int *nr) {
  int64_t g = margin_sd * (int64_t)sqrt((double)m) / 2 + 1, width = 0;   /* a rank's sd is at most sqrt(m) / 2 */
  int nbr = 0;
  for (int64_t q = 0; q < nk; q++) {
    int64_t c = (int64_t)((double)ks[q] * (double)m / (double)n), lo = c - g, hi = c + 1 + g;
    if (nbr && lo <= (int64_t)br[nbr - 1].hi) {
      br[nbr - 1].hi = (uint64_t)hi;
      br[nbr - 1].k1 = q + 1;
      continue;
    }
    if (nbr == SEL_BR) return 0;
    br[nbr++] = (sbracket){(uint64_t)(lo < 0 ? -1 : lo), (uint64_t)hi, q, q + 1};
  }
  *nr = 0;
  for (int b = 0; b < nbr; b++) {
    int64_t lo = (int64_t)br[b].lo, hi = (int64_t)br[b].hi;
    if (hi >= m) br[b].hi = (uint64_t)(hi = m);
    width += hi - (lo < 0 ? 0 : lo);
    if (lo >= 0) r[(*nr)++] = lo;
    if (hi < m) r[(*nr)++] = hi;
  }
  return width * 2 > m ? 0 : nbr;
}

/* The sampled selection of a row (above): 1 done, 0 not (the row goes to
 * the plain selection), -1 interrupted. buf holds n pairs. */
#define K_BSEL(KT)                                                                                               \
  static int bsel_##KT(const ssel_ops *o, const void *x, size_t es, int64_t n, bool desc, bool arg,              \
                       const int64_t *ks, int64_t nk, void *out, void *buf) {                                    \
    if (n < SAMPLE_MIN) return 0;                                                                                \
    pair_##KT *a = buf;                                                                                          \
    uint64_t flip = desc ? (uint64_t)(KT)~(KT)0 : 0;                                                             \
    int64_t m = (int64_t)(4 * sqrt((double)n)), r[2 * SEL_BR];                                                   \
    m = m > 65536 ? 65536 : m;                                                                                   \
    sbracket br[SEL_BR];                                                                                         \
    int nr, nbr = sample_brackets(n, m, ks, nk, br, r, &nr);                                                     \
    if (nbr == 0) return 0;                                                                                      \
    for (int64_t s = 0; s < m; s++) a[s] = (pair_##KT){(KT)o->key(x, sample_pos((uint64_t)s, n), flip), (uint32_t)s}; \
    msel_##KT(a, 0, m, r, nr, cpu_sort_depth(m));                                                                   \
    int w = 0;                                                                                                   \
    for (int b = 0; b < nbr; b++) {   /* ranks to keys; brackets that touch merge */                             \
      sbracket e = br[b];                                                                                        \
      e.lo = (int64_t)e.lo < 0 ? 0 : a[e.lo].k;                                                                  \
      e.hi = (int64_t)e.hi >= m ? (uint64_t)(KT)~(KT)0 : a[e.hi].k;                                              \
      if (w && e.lo <= br[w - 1].hi) {                                                                           \
        br[w - 1].hi = e.hi;                                                                                     \
        br[w - 1].k1 = e.k1;                                                                                     \
      } else br[w++] = e;                                                                                        \
    }                                                                                                            \
    nbr = w;                                                                                                     \
    int64_t tasks = cpu_threads() > 1 ? cpu_split(n, CPU_PAR_MIN) : 1;                                           \
    sscan_acc acc1, *acc = tasks > 1 ? malloc(sizeof *acc * (size_t)tasks) : &acc1;                              \
    if (!acc) tasks = 1, acc = &acc1;                                                                            \
    sscan_job j = {o, x, out, buf, es, sizeof *a, n, (n + tasks - 1) / tasks, flip, br, nbr, arg, acc};          \
    int rc = tasks > 1 ? cpu_parallel((int)tasks, sscan_task, &j) : sscan_task(&j, 0, 0);                        \
    int64_t below[SEL_BR] = {0}, cnt[SEL_BR] = {0}, total = 0;                                                   \
    for (int64_t t = 0; t < tasks && rc >= 0; t++) {   /* the parts' pairs together */                           \
      memmove(a + total, a + t * j.per, sizeof *a * (size_t)acc[t].n);                                          \
      total += acc[t].n;                                                                                         \
      for (int b = 0; b < nbr; b++) below[b] += acc[t].below[b], cnt[b] += acc[t].cnt[b];                        \
    }                                                                                                            \
    if (acc != &acc1) free(acc);                                                                                 \
    if (rc < 0) return -1;                                                                                       \
    int64_t kb[64], *k2 = nk <= 64 ? kb : malloc(sizeof *k2 * (size_t)nk), off = 0;                              \
    if (!k2) return 0;                                                                                           \
    bool held = true;                                                                                            \
    for (int b = 0; b < nbr; b++) {                                                                              \
      held = held && below[b] <= ks[br[b].k0] && below[b] + cnt[b] > ks[br[b].k1 - 1];                           \
      for (int64_t q = br[b].k0; q < br[b].k1; q++) k2[q] = ks[q] - below[b] + off;                              \
      off += cnt[b];                                                                                             \
    }                                                                                                            \
    if (held) {                                                                                                  \
      msel_##KT(a, 0, total, k2, nk, cpu_sort_depth(total));                                                         \
      for (int64_t q = 0; q < nk; q++)                                                                           \
        if (arg) ((int64_t *)out)[ks[q]] = a[k2[q]].i;                                                           \
        else memcpy((char *)out + (size_t)ks[q] * es, (const char *)x + (size_t)a[k2[q]].i * es, es);            \
    }                                                                                                            \
    if (k2 != kb) free(k2);                                                                                      \
    __atomic_fetch_add(&bsel_counts[held ? 0 : 1], 1, __ATOMIC_RELAXED);                                         \
    return held;                                                                                                 \
  }
K_BSEL(uint32_t)
K_BSEL(uint64_t)
#define K_SELECT(E, n_, S, C, CLS, B, LD, ST, ...)                                                         \
  static uint64_t skey_##E(const void *x, int64_t i, uint64_t flip) {                                    \
    typedef KT_OF(B) KT;                                                                                 \
    return (KT)(KEY_##CLS(KT, B, LD, ((const S *)x)[i]) ^ (KT)flip);                                     \
  }                                                                                                      \
  CPU_CLONES static void sscan_##E(const void *x_, int64_t lo, int64_t hi, uint64_t flip, const sbracket *br, int nbr, \
                        sscan_acc *acc, void *cand_) {                                                   \
    typedef KT_OF(B) KT;                                                                                 \
    const S *x = x_;                                                                                     \
    PAIR_T(B) *cand = cand_;                                                                             \
    KT f = (KT)flip, kl[SEL_BR], kw[SEL_BR], kb[SCAN_BLOCK];                                             \
    KT in[SCAN_BLOCK];                                                                                    \
    for (int b = 0; b < nbr; b++) kl[b] = (KT)br[b].lo, kw[b] = (KT)(br[b].hi - br[b].lo);               \
    int64_t nc = acc->n;                                                                                 \
    for (int64_t i0 = lo; i0 < hi; i0 += SCAN_BLOCK) {                                                   \
      int m = hi - i0 < SCAN_BLOCK ? (int)(hi - i0) : SCAN_BLOCK;                                        \
      for (int t = 0; t < m; t++) kb[t] = (KT)(KEY_##CLS(KT, B, LD, x[i0 + t]) ^ f), in[t] = 0;          \
      for (int b = 0; b < nbr; b++) {                                                                    \
        int64_t below = 0, inside = 0;                                                                   \
        for (int t = 0; t < m; t++) {                                                                    \
          KT h = (KT)(kb[t] - kl[b]) <= kw[b];                                                           \
          below += kb[t] < kl[b];                                                                        \
          inside += h;                                                                                   \
          in[t] |= h;                                                                                    \
        }                                                                                                \
        acc->below[b] += below;                                                                          \
        acc->cnt[b] += inside;                                                                           \
      }                                                                                                  \
      /* every key is stored, and the count moves past those inside: the                              \
       * store at nc is inside this part's own place (nc <= i0 + t - lo) */                             \
      for (int t = 0; t < m; t++) {                                                                      \
        cand[nc].k = kb[t];                                                                              \
        cand[nc].i = (uint32_t)(i0 + t);                                                                 \
        nc += in[t];                                                                                     \
      }                                                                                                  \
    }                                                                                                    \
    acc->n = nc;                                                                                         \
  }                                                                                                      \
  static const ssel_ops ssel_##E = {skey_##E, sscan_##E};                                                \
  static void select_##E(const void *x_, int64_t n, bool desc, bool arg, const int64_t *ks, int64_t nk, \
                         void *out, void *buf) {                                                          \
    typedef KT_OF(B) KT;                                                                                 \
    const S *x = x_;                                                                                     \
    if (PASTE(bsel_, KT_OF(B))(&ssel_##E, x, sizeof(S), n, desc, arg, ks, nk, out, buf) != 0) return;          \
    PAIR_T(B) *a = buf;                                                                                  \
    KT flip = desc ? (KT)~(KT)0 : 0;                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                                    \
      a[i].k = KEY_##CLS(KT, B, LD, x[i]) ^ flip;                                                        \
      a[i].i = (uint32_t)i;                                                                              \
    }                                                                                                    \
    PASTE(msel_, KT_OF(B))(a, 0, n, ks, nk, cpu_sort_depth(n));                                              \
    if (arg) for (int64_t i = 0; i < n; i++) ((int64_t *)out)[i] = a[i].i;                               \
    else {   /* the row as it is, then the asked positions */                                            \
      memcpy(out, x, sizeof(S) * (size_t)n);                                                             \
      for (int64_t q = 0; q < nk; q++) ((S *)out)[ks[q]] = x[a[ks[q]].i];                                \
    }                                                                                                    \
  }
TC_FOR_ALL(K_SELECT, _)
typedef void (*select_fn)(const void *, int64_t, bool, bool, const int64_t *, int64_t, void *, void *);
#define SELECT_ENTRY(E, ...) [TC_DT_##E] = select_##E,
static const select_fn select_table[TC_DT_COUNT] = {TC_FOR_ALL(SELECT_ENTRY, _)};

/* Rows go across threads in tasks of consecutive rows, each worker with
 * its own pairs buffer. */
typedef struct { const tc_call *c; int64_t n, rows, per; size_t nb; char *buf; } select_job;

static int select_task(void *ctx, int t, int w) {
  const select_job *j = ctx;
  const tc_call *c = j->c;
  bool arg = c->op == TC_OP_ARGSORT;
  size_t es = tc_dtype_size(c->dtype), os = arg ? 8 : es;
  int64_t pending = 0;
  for (int64_t i = t * j->per; i < (t + 1) * j->per && i < j->rows && !tc_interrupt_flag; i++) {
    select_table[c->dtype](tc_tensor_data(c->in[0]) + (size_t)(i * j->n) * es, j->n, c->descending, arg, c->kth,
                           c->nkth, tc_tensor_data(c->out) + (size_t)(i * j->n) * os, j->buf + (size_t)w * j->nb);
    cpu_progress_note(&pending, j->n);
  }
  tc_progress_add(pending);
  return tc_interrupt_flag ? -1 : 0;
}

static int run_select(tc_call *c, int64_t n, tc_err *err) {
  const tc_engine *e = &tc_cpu_engine;
  int64_t rows = tc_numel(c->in[0]) / n, tasks = cpu_split(rows * n, CPU_PAR_MIN / 4);
  tasks = tasks > rows ? rows : tasks < 1 ? 1 : tasks;
  size_t nb = (size_t)n * (tc_dtype_size(c->dtype) > 4 ? sizeof(pair_uint64_t) : sizeof(pair_uint32_t));
  size_t all = nb * (size_t)(tasks > 1 ? cpu_threads() : 1);
  select_job j = {c, n, rows, (rows + tasks - 1) / tasks, nb, e->alloc(all)};
  if (!j.buf) return tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "out of memory sorting %lld elements", (long long)n);
  int rc = tasks > 1 ? cpu_parallel((int)((rows + j.per - 1) / j.per), select_task, &j) : select_task(&j, 0, 0);
  e->release(j.buf, all);
  return rc < 0 ? cpu_interrupted(err) : 0;
}
typedef struct {
  void (*build)(sort_row *, int64_t, int64_t, int);
  void (*finish)(const sort_row *, const void *, int64_t, int64_t);
  void (*fix)(const sort_row *, int64_t, int64_t);
  bool wide;   /* 64-bit keys */
} sort_fns;
typedef void (*search_fn)(int64_t, const void *, int64_t, const void *, int64_t *, bool);
#define SORT_ENTRY(E, n_, S, C, CLS, B, ...) [TC_DT_##E] = {build_##E, finish_##E, fix_##E, B > 32},
#define SEARCH_ENTRY(E, ...) [TC_DT_##E] = (search_fn)(void (*)(void))search_##E,
static const sort_fns sort_table[TC_DT_COUNT] = {TC_FOR_ALL(SORT_ENTRY, _)};
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
  if (c->nkth > 0) return run_select(c, n, err);
  const sort_fns *f = &sort_table[c->dtype];
  bool arg = c->op == TC_OP_ARGSORT;
  static const radix_ops *const ops[2][2] = {{&radixk_uint32_t_ops, &radixk_uint64_t_ops},
                                             {&radix_uint32_t_ops, &radix_uint64_t_ops}};
  sort_row r = {.n = n, .arg = arg, .desc = c->descending, .ops = ops[arg][f->wide],
                .build = f->build, .finish = f->finish};
  /* scratch from the engine's block cache: fresh pages would be zeroed by
   * the kernel on every call, a quarter of the time of a large sort */
  const tc_engine *e = &tc_cpu_engine;
  size_t nb = (size_t)n * r.ops->size, cb = n >= SMALL_ROW ? SORT_AUX : 0;
  r.k = e->alloc(nb);
  r.t = e->alloc(nb);
  r.cnt = cb ? e->alloc(cb) : NULL;
  if (r.cnt) {
    r.gst = r.cnt + ((size_t)SORT_TASKS << PBITS);
    r.gid = (uint16_t *)(r.gst + ((size_t)1 << PBITS) + 1);
    r.ghi = (uint8_t *)(r.gid + ((size_t)1 << PBITS));
  }
  int rc = 0;
  if (!r.k || !r.t || (cb && !r.cnt)) rc = tc_err_set(err, TC_E_OOM, (int)c->op, (int)c->dtype, "out of memory sorting %lld elements", (long long)n);
  size_t es = tc_dtype_size(c->dtype), os = arg ? 8 : es;
  /* progress: at each row's end the phases a small or ordered row skipped
   * too, short rows a million elements at a time */
  int64_t rows = total / n, every = n < CPU_POLL / 4 ? CPU_POLL / 4 / n : 1, left = every;
  for (int64_t i = 0; i < rows && rc == 0; i++) {
    r.x = tc_tensor_data(x) + (size_t)(i * n) * es;
    r.out = tc_tensor_data(c->out) + (size_t)(i * n) * os;
    if (radix_row(&r) < 0 || tc_interrupt_flag) {
      rc = cpu_interrupted(err);
      break;
    }
    int64_t nz = 0, nn = 0;
    for (int t = 0; t < r.ntask; t++) {
      nz += r.tnz[t];
      nn += r.tnn[t];
    }
    if (!arg && (nn || nz > 1)) f->fix(&r, nz, nn);
    if (--left == 0 || i + 1 == rows) {
      tc_progress_set(4 * (i + 1) * n);
      left = every;
    }
  }
  if (r.k) e->release(r.k, nb);
  if (r.t) e->release(r.t, nb);
  if (r.cnt) e->release(r.cnt, cb);
  return rc;
}

bool cpu_supports_order(const tc_call *c) {
  if ((unsigned)c->dtype >= TC_DT_COUNT) return false;
  if (c->kind == TC_CALL_SCAN) return tc_scan_slot(c->op) >= 0;
  return c->op == TC_OP_SORT || c->op == TC_OP_ARGSORT || c->op == TC_OP_SEARCHSORTED;
}

/* A sort is a progress job (src/progress.c) of four passes over its
 * elements (radix_row's phases; a selection's one), reported as each
 * phase's tasks end; under 2^20 elements a silent one. */
int cpu_run_order(tc_call *c, tc_err *err) {
  if (!cpu_supports_order(c)) return unsupported(c, err);
  if (c->kind == TC_CALL_SCAN || c->op == TC_OP_SEARCHSORTED) return c->kind == TC_CALL_SCAN ? run_scan(c, err) : run_sort(c, err);
  int64_t n = tc_numel(c->in[0]), units = c->nkth > 0 || n > INT64_MAX / 4 ? n : 4 * n;
  tc_progress_begin(n >= (int64_t)1 << 20 ? tc_op_name(c->op) : NULL, units, TC_PROGRESS_ELEMENTS);
  int rc = run_sort(c, err);
  tc_progress_end();
  return rc;
}
