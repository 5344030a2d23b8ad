/* CUDA scans and sorting (TC_CALL_SCAN, TC_CALL_SORT), on the CPU's
 * combines and order keys (backend/order.h), written as item kernels (one
 * thread per item, items independent) so that the host emulation runs the
 * very code the device runs and the parity suite can compare it with the
 * CPU bit for bit.
 *
 * Scans, per row of n:
 *   seq      one thread per row, in index order: float sums and products
 *            (the CPU's order: each step rounded to the dtype), and rows of
 *            at most SC_CHUNK elements
 *   chunked  the associative combines (integers wrap, bool or/and, max/min
 *            with their NaN and tie rules) on long rows: each chunk of
 *            SC_CHUNK is folded, one thread per row turns the folds into
 *            carries, and each chunk is rescanned from its carry, which
 *            gives the one-pass result exactly.
 * Sorting is a stable LSD radix sort of (order key, position) pairs, 8
 * bits a pass; SORT then gathers the values by position, which keeps -0.0,
 * 0.0 and NaN payloads in their input order as the CPU does. Rows of at
 * most SO_SHORT elements are each sorted by one thread (a counting sort a
 * pass); longer rows are cut into tiles of SO_TILE: a digit histogram per
 * tile, an exclusive scan of them per (row, digit) and per row, then each
 * tile's elements are written, in order, from its offsets.
 * SEARCHSORTED is a binary search on the keys, one thread per value. */
#include "kern.cuh"
#include "../order.h"

/* A scan or sort: op and dt as tc_op and tc_dtype; rows of n contiguous
 * elements of dt in in, out alike (ARGSORT: i64 positions). SEARCHSORTED:
 * in the sorted n, vals the m values, out their m i64 positions. */
struct tcu_oplan {
  int op, dt;
  int64_t rows, n, m;
  const char *in, *vals;
  char *out;
  bool desc, right;
};

#define SC_CHUNK 2048
#define SO_SHORT 4096
#define SO_TILE 2048
#define SO_BITS 8
#define SO_DIGITS (1 << SO_BITS)

/* ---- scans ---- */
struct sc_plan {
  int64_t rows, n, nch;   /* nch chunks of SC_CHUNK per row (chunked) */
  const char *in;
  char *out, *part;       /* part: rows * nch folds, then carries (S) */
};

/* One (op, dtype): S stored, C computed; step(acc, v) the next value,
 * rounded to S and read back as the CPU's scan does. */
#define SC_OP(OPN, E, S, C, CLS, LD, ST)                                                                  \
  struct sc_##OPN##_##E {                                                                                 \
    typedef S St;                                                                                         \
    static constexpr bool assoc = SC_ASSOC_##OPN##_##CLS;                                                 \
    static TCU_HD S step(S acc, S v) { return ST(SC_##OPN##_##CLS(C, tc_u_##E, LD(acc), LD(v))); }       \
  };
#define K_SCOPS(E, n_, S, C, CLS, B, LD, ST, ...) TC_SCANS(SC_OP, E, S, C, CLS, LD, ST)
TC_FOR_ALL(K_SCOPS, _)

/* o[j] for j in [lo, hi) of a row, from carry (when has) or x[lo]. */
template <class O>
TCU_HD void sc_run(const typename O::St *x, typename O::St *o, int64_t lo, int64_t hi, bool has, typename O::St carry) {
  typename O::St acc = has ? O::step(carry, x[lo]) : x[lo];
  o[lo] = acc;
  for (int64_t j = lo + 1; j < hi; j++) o[j] = acc = O::step(acc, x[j]);
}

template <class O> struct sc_seq {   /* item: a row */
  static TCU_HD void g(const sc_plan &p, int64_t r) {
    typedef typename O::St S;
    sc_run<O>(TCU_CPTR(S, p.in) + r * p.n, TCU_PTR(S, p.out) + r * p.n, 0, p.n, false, S());
  }
};
template <class O> struct sc_fold {  /* item: a chunk */
  static TCU_HD void g(const sc_plan &p, int64_t i) {
    typedef typename O::St S;
    int64_t r = i / p.nch, lo = (i - r * p.nch) * SC_CHUNK, hi = lo + SC_CHUNK < p.n ? lo + SC_CHUNK : p.n;
    const S *x = TCU_CPTR(S, p.in) + r * p.n;
    S acc = x[lo];
    for (int64_t j = lo + 1; j < hi; j++) acc = O::step(acc, x[j]);
    TCU_PTR(S, p.part)[i] = acc;
  }
};
template <class O> struct sc_carry { /* item: a row; part[c] becomes the fold of chunks before c */
  static TCU_HD void g(const sc_plan &p, int64_t r) {
    typedef typename O::St S;
    S *q = TCU_PTR(S, p.part) + r * p.nch, acc = q[0];
    for (int64_t c = 1; c < p.nch; c++) {
      S f = q[c];
      q[c] = acc;
      acc = O::step(acc, f);
    }
  }
};
template <class O> struct sc_chunk { /* item: a chunk */
  static TCU_HD void g(const sc_plan &p, int64_t i) {
    typedef typename O::St S;
    int64_t r = i / p.nch, c = i - r * p.nch, lo = c * SC_CHUNK, hi = lo + SC_CHUNK < p.n ? lo + SC_CHUNK : p.n;
    sc_run<O>(TCU_CPTR(S, p.in) + r * p.n, TCU_PTR(S, p.out) + r * p.n, lo, hi, c > 0, TCU_CPTR(S, p.part)[i]);
  }
};

template <class O>
static int sc_launch(const tcu_oplan *q) {
  typedef typename O::St S;
  sc_plan p = {q->rows, q->n, (q->n + SC_CHUNK - 1) / SC_CHUNK, q->in, q->out, NULL};
  if (!O::assoc || p.nch < 2) {   /* waited for, as every op is: its errors are its own, and timings true */
    int st = tcu_items<sc_seq<O> >(p, p.rows);
    return st ? st : tcu_sync();
  }
  size_t nb = sizeof(S) * (size_t)(p.rows * p.nch);
  p.part = (char *)tcu_malloc(nb);
  if (!p.part) return (int)cudaErrorMemoryAllocation;
  int st = tcu_items<sc_fold<O> >(p, p.rows * p.nch);
  if (!st) st = tcu_items<sc_carry<O> >(p, p.rows);
  if (!st) st = tcu_items<sc_chunk<O> >(p, p.rows * p.nch);
  if (!st) st = tcu_sync();
  tcu_free(p.part, nb);
  return st;
}

typedef int (*sc_fn)(const tcu_oplan *);
static sc_fn sc_table[TC_DT_COUNT][4];
static bool sc_ready;
static void sc_fill(void) {
#define SC_SET_(OPN, E) sc_table[TC_DT_##E][k++] = sc_launch<sc_##OPN##_##E>;
#define SC_ROW(E, ...) { int k = 0; TC_SCANS(SC_SET_, E) }
  TC_FOR_ALL(SC_ROW, _)
#undef SC_ROW
#undef SC_SET_
  sc_ready = true;
}

/* ---- sorting ---- */
/* The keys, positions and scratch of a sort: rows of n (key, position)
 * pairs, ping-ponged between [0] and [1]; hist: per row, SO_DIGITS x ntile
 * counts (digit-major), then their offsets; dsum: per row and digit. */
template <class KT> struct so_plan {
  int64_t rows, n, ntile;
  int shift;
  KT *key[2];
  uint32_t *pos[2];
  uint32_t *hist;
  int64_t *dsum;
  int src;                /* which of [0], [1] holds the pairs */
  const char *in;         /* the values (for the keys and SORT's gather) */
  char *out;
  KT flip;                /* all ones when descending */
  int esize;              /* SORT: the value size; 0 for ARGSORT */
};

/* One dtype's order key. */
#define SO_KEY(E, n_, S, C, CLS, B, LD, ST, ...)                                               \
  struct so_key_##E {                                                                          \
    typedef KT_OF(B) KT;                                                                       \
    typedef S St;                                                                              \
    static TCU_HD KT key(const char *base, int64_t i) { return KEY_##CLS(KT, B, LD, TCU_CPTR(S, base)[i]); } \
  };
TC_FOR_ALL(SO_KEY, _)

template <class K> struct so_init {   /* item: an element */
  static TCU_HD void g(const so_plan<typename K::KT> &p, int64_t i) {
    p.key[0][i] = K::key(p.in, i) ^ p.flip;
    p.pos[0][i] = (uint32_t)(i % p.n);
  }
};

/* A short row, by one thread: a stable counting sort a digit. */
template <class KT> struct so_row {
  static TCU_HD void g(const so_plan<KT> &p, int64_t r) {
    int64_t o = r * p.n;
    int s = 0;
    for (int sh = 0; sh < (int)(8 * sizeof(KT)); sh += SO_BITS) {
      uint32_t cnt[SO_DIGITS];
      for (int d = 0; d < SO_DIGITS; d++) cnt[d] = 0;
      const KT *k = p.key[s] + o;
      const uint32_t *q = p.pos[s] + o;
      for (int64_t j = 0; j < p.n; j++) cnt[(k[j] >> sh) & (SO_DIGITS - 1)]++;
      if (cnt[(k[0] >> sh) & (SO_DIGITS - 1)] == (uint32_t)p.n) continue;   /* one digit: order unchanged */
      uint32_t sum = 0;
      for (int d = 0; d < SO_DIGITS; d++) { uint32_t t = cnt[d]; cnt[d] = sum; sum += t; }
      KT *k2 = p.key[1 - s] + o;
      uint32_t *q2 = p.pos[1 - s] + o;
      for (int64_t j = 0; j < p.n; j++) {
        uint32_t at = cnt[(k[j] >> sh) & (SO_DIGITS - 1)]++;
        k2[at] = k[j];
        q2[at] = q[j];
      }
      s = 1 - s;
    }
    if (s) /* the pairs end in [0] */
      for (int64_t j = 0; j < p.n; j++) { p.key[0][o + j] = p.key[1][o + j]; p.pos[0][o + j] = p.pos[1][o + j]; }
  }
};

/* Long rows, one pass (digit at p.shift) from [src] to [1 - src]. */
template <class KT> struct so_hist {   /* item: a tile */
  static TCU_HD void g(const so_plan<KT> &p, int64_t i) {
    int64_t r = i / p.ntile, t = i - r * p.ntile, lo = t * SO_TILE, hi = lo + SO_TILE < p.n ? lo + SO_TILE : p.n;
    uint32_t cnt[SO_DIGITS];
    for (int d = 0; d < SO_DIGITS; d++) cnt[d] = 0;
    const KT *k = p.key[p.src] + r * p.n;
    for (int64_t j = lo; j < hi; j++) cnt[(k[j] >> p.shift) & (SO_DIGITS - 1)]++;
    uint32_t *h = p.hist + r * SO_DIGITS * p.ntile + t;
    for (int d = 0; d < SO_DIGITS; d++) h[d * p.ntile] = cnt[d];
  }
};
template <class KT> struct so_dscan {  /* item: (row, digit): tiles' offsets within the digit */
  static TCU_HD void g(const so_plan<KT> &p, int64_t i) {
    uint32_t *h = p.hist + i * p.ntile;
    int64_t sum = 0;
    for (int64_t t = 0; t < p.ntile; t++) { uint32_t c = h[t]; h[t] = (uint32_t)sum; sum += c; }
    p.dsum[i] = sum;
  }
};
template <class KT> struct so_rscan {  /* item: a row: digits' offsets within the row */
  static TCU_HD void g(const so_plan<KT> &p, int64_t r) {
    int64_t *d = p.dsum + r * SO_DIGITS, sum = 0;
    for (int k = 0; k < SO_DIGITS; k++) { int64_t c = d[k]; d[k] = sum; sum += c; }
  }
};
template <class KT> struct so_scatter {  /* item: a tile, its elements in order */
  static TCU_HD void g(const so_plan<KT> &p, int64_t i) {
    int64_t r = i / p.ntile, t = i - r * p.ntile, lo = t * SO_TILE, hi = lo + SO_TILE < p.n ? lo + SO_TILE : p.n;
    uint32_t at[SO_DIGITS];
    const uint32_t *h = p.hist + r * SO_DIGITS * p.ntile + t;
    for (int d = 0; d < SO_DIGITS; d++) at[d] = (uint32_t)p.dsum[r * SO_DIGITS + d] + h[d * p.ntile];
    const KT *k = p.key[p.src] + r * p.n;
    const uint32_t *q = p.pos[p.src] + r * p.n;
    KT *k2 = p.key[1 - p.src] + r * p.n;
    uint32_t *q2 = p.pos[1 - p.src] + r * p.n;
    for (int64_t j = lo; j < hi; j++) {
      uint32_t a = at[(k[j] >> p.shift) & (SO_DIGITS - 1)]++;
      k2[a] = k[j];
      q2[a] = q[j];
    }
  }
};

/* The result: positions (ARGSORT) or the values gathered by them. */
template <class KT> struct so_out {    /* item: an element */
  static TCU_HD void g(const so_plan<KT> &p, int64_t i) {
    int64_t r = i / p.n;
    uint32_t j = p.pos[p.src][i];
    switch (p.esize) {
    case 0: TCU_PTR(int64_t, p.out)[i] = j; break;
    case 1: TCU_PTR(uint8_t, p.out)[i] = TCU_CPTR(uint8_t, p.in)[r * p.n + j]; break;
    case 2: TCU_PTR(uint16_t, p.out)[i] = TCU_CPTR(uint16_t, p.in)[r * p.n + j]; break;
    case 4: TCU_PTR(uint32_t, p.out)[i] = TCU_CPTR(uint32_t, p.in)[r * p.n + j]; break;
    default: TCU_PTR(uint64_t, p.out)[i] = TCU_CPTR(uint64_t, p.in)[r * p.n + j]; break;
    }
  }
};

/* One pass over the long rows: every pass is run (no skipping), so the
 * work does not depend on the data. */
template <class KT>
static int so_long_pass(so_plan<KT> &p, int64_t tiles) {
  int st = tcu_items<so_hist<KT> >(p, tiles);
  if (!st) st = tcu_items<so_dscan<KT> >(p, p.rows * SO_DIGITS);
  if (!st) st = tcu_items<so_rscan<KT> >(p, p.rows);
  if (!st) st = tcu_items<so_scatter<KT> >(p, tiles);
  if (!st) p.src = 1 - p.src;
  return st;
}

template <class K>
static int so_launch(const tcu_oplan *q) {
  typedef typename K::KT KT;
  so_plan<KT> p;
  memset(&p, 0, sizeof p);
  p.rows = q->rows;
  p.n = q->n;
  p.ntile = (p.n + SO_TILE - 1) / SO_TILE;
  p.in = q->in;
  p.out = q->out;
  p.flip = q->desc ? (KT)~(KT)0 : (KT)0;
  p.esize = q->op == TC_OP_ARGSORT ? 0 : (int)sizeof(typename K::St);
  int64_t total = p.rows * p.n;
  bool longrows = p.n > SO_SHORT;
  size_t nk = sizeof(KT) * (size_t)total, np = sizeof(uint32_t) * (size_t)total;
  size_t nh = longrows ? sizeof(uint32_t) * (size_t)(p.rows * SO_DIGITS * p.ntile) : 0;
  size_t nd = longrows ? sizeof(int64_t) * (size_t)(p.rows * SO_DIGITS) : 0;
  p.key[0] = (KT *)tcu_malloc(nk);
  p.key[1] = (KT *)tcu_malloc(nk);
  p.pos[0] = (uint32_t *)tcu_malloc(np);
  p.pos[1] = (uint32_t *)tcu_malloc(np);
  if (longrows) {
    p.hist = (uint32_t *)tcu_malloc(nh);
    p.dsum = (int64_t *)tcu_malloc(nd);
  }
  int st = 0;
  if (!p.key[0] || !p.key[1] || !p.pos[0] || !p.pos[1] || (longrows && (!p.hist || !p.dsum))) st = (int)cudaErrorMemoryAllocation;
  if (!st) st = tcu_items<so_init<K> >(p, total);
  if (!st && !longrows) st = tcu_items<so_row<KT> >(p, p.rows);
  for (int sh = 0; longrows && !st && sh < (int)(8 * sizeof(KT)); sh += SO_BITS) {
    p.shift = sh;
    st = so_long_pass(p, p.rows * p.ntile);
  }
  if (!st) st = tcu_items<so_out<KT> >(p, total);
  if (!st) st = tcu_sync();
  tcu_free(p.key[0], nk);
  tcu_free(p.key[1], nk);
  tcu_free(p.pos[0], np);
  tcu_free(p.pos[1], np);
  tcu_free(p.hist, nh);
  tcu_free(p.dsum, nd);
  return st;
}

/* SEARCHSORTED: the first position whose key is >= the value's (> when right). */
struct ss_plan {
  int64_t n;
  const char *s, *v;
  int64_t *out;
  bool right;
};
template <class K> struct ss_item {   /* item: a value */
  static TCU_HD void g(const ss_plan &p, int64_t j) {
    typename K::KT kv = K::key(p.v, j);
    int64_t lo = 0, hi = p.n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      typename K::KT ks = K::key(p.s, mid);
      if (p.right ? ks <= kv : ks < kv) lo = mid + 1;
      else hi = mid;
    }
    p.out[j] = lo;
  }
};
template <class K>
static int ss_launch(const tcu_oplan *q) {
  ss_plan p = {q->n, q->in, q->vals, (int64_t *)(void *)q->out, q->right};
  int st = tcu_items<ss_item<K> >(p, q->m);
  return st ? st : tcu_sync();
}

static sc_fn so_table[TC_DT_COUNT][2];
static bool so_ready;
static void so_fill(void) {
#define SO_ROW(E, ...)                                 \
  so_table[TC_DT_##E][0] = so_launch<so_key_##E>;      \
  so_table[TC_DT_##E][1] = ss_launch<so_key_##E>;
  TC_FOR_ALL(SO_ROW, _)
#undef SO_ROW
  so_ready = true;
}

static sc_fn order_fn(bool scan, int op, int dt) {
  if (dt < 0 || dt >= TC_DT_COUNT) return NULL;
  if (scan) {
    if (!sc_ready) sc_fill();
    int s = tc_scan_slot(op);
    return s < 0 ? NULL : sc_table[dt][s];
  }
  if (!so_ready) so_fill();
  if (op == TC_OP_SORT || op == TC_OP_ARGSORT) return so_table[dt][0];
  return op == TC_OP_SEARCHSORTED ? so_table[dt][1] : NULL;
}

extern "C" bool tcu_order_ok(const tc_call *c) { return order_fn(c->kind == TC_CALL_SCAN, (int)c->op, (int)c->dtype) != NULL; }

/* SEARCHSORTED: the sorted n and the m values; the others: rows of the
 * last dim (n < 2^32 when sorting: src/fn.c checks). */
extern "C" int tcu_order_run(const tcu_call *a) {
  const tc_call *c = a->c;
  const tc_tensor *x = c->in[0];
  bool scan = c->kind == TC_CALL_SCAN;
  sc_fn f = order_fn(scan, (int)c->op, (int)c->dtype);
  if (!f) return (int)cudaErrorInvalidValue;
  tcu_oplan o;
  memset(&o, 0, sizeof o);
  o.op = (int)c->op;
  o.dt = (int)c->dtype;
  o.in = a->data[1];
  o.out = a->data[0];
  o.desc = c->descending;
  o.right = c->right;
  if (c->op == TC_OP_SEARCHSORTED) {
    o.n = a->numel[1];
    o.m = a->numel[2];
    o.vals = a->data[2];
    return f(&o);
  }
  o.n = x->ndim ? x->shape[x->ndim - 1] : 1;
  o.rows = o.n ? a->numel[1] / o.n : 0;
  return o.rows == 0 || o.n == 0 ? 0 : f(&o);
}
