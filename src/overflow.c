/* The integer overflow policy (SPEC 13): wrap (the engines' kernels), or
 * check / saturate, which judge the exact mathematical result of each output
 * element. Here, the core's part: the session's policy, which calls it
 * judges (src/ then sets the call's overflow field: the engine that holds
 * the data computes the exact values, each element's in 128 bits, so the
 * answer and the first overflowing index are the same on every engine and
 * thread count; an engine that judges nothing has its calls run on the CPU
 * engine), the error, and einsum's exact sums of products. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exact.h"

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

/* ---- which calls the policy judges ---- */
static bool judges_int(tc_dtype kdt) { return policy != TC_OVERFLOW_WRAP && tc_dtype_class(kdt) == TC_CLASS_INT; }

tc_overflow tc_overflow_judges(tc_op op, tc_dtype kdt) {
  if (!judges_int(kdt)) return TC_OVERFLOW_WRAP;
  switch (op) {
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: case TC_OP_POW: case TC_OP_NEG: case TC_OP_ABS:
    return (tc_overflow)policy;
  case TC_OP_DIV: case TC_OP_FLOOR_DIV:   /* MIN / -1 (SPEC 13) */
    return tc_dtype_is_unsigned(kdt) ? TC_OVERFLOW_WRAP : (tc_overflow)policy;
  default:
    return TC_OVERFLOW_WRAP;
  }
}

tc_overflow tc_overflow_judges_cast(tc_dtype from, tc_dtype to) {
  return from != to && tc_dtype_class(to) == TC_CLASS_INT && tc_dtype_class(from) != TC_CLASS_BOOL
             ? (tc_overflow)policy : TC_OVERFLOW_WRAP;
}

tc_overflow tc_overflow_judges_reduce(tc_op op, tc_dtype kdt) {
  /* an integer nansum (no NaN to skip) is a sum */
  return judges_int(kdt) && (op == TC_OP_REDUCE_SUM || op == TC_OP_NANSUM || op == TC_OP_REDUCE_PROD)
             ? (tc_overflow)policy : TC_OVERFLOW_WRAP;
}

tc_overflow tc_overflow_judges_scan(tc_op op, tc_dtype kdt) {
  return judges_int(kdt) && (op == TC_OP_CUMSUM || op == TC_OP_CUMPROD) ? (tc_overflow)policy : TC_OVERFLOW_WRAP;
}

int tc_overflow_error(tc_err *err, tc_overflow p, tc_op op, tc_dtype dt, int ndim, const int64_t *shape, int64_t flat,
                      const char *what) {
  int64_t idx[TC_MAX_DIMS] = {0};
  char where[TC_MAX_DIMS * 24 + 16];
  tc_unravel(flat, ndim, shape, idx);
  tc_index_text(where, sizeof where, ndim, idx);
  tc_err_set(err, TC_E_INT_OVERFLOW, (int)op, (int)dt, "%s does not fit %s%s (overflow %s)", what, tc_dtype_name(dt),
             where, tc_overflow_name(p));
  tc_err_set_index(err, ndim, idx);
  return -1;
}

/* ---- products: whether any can leave the dtype ---- */
/* The largest magnitude among t's elements (of integer dtype dt), from
 * its least and greatest (two reductions on t's engine), or -1 when they
 * cannot be had (the caller then judges every product). */
static i128 max_abs(tc_tensor *t, tc_dtype dt) {
  if (t->dtype != dt) return -1;
  if (tc_numel(t) == 0) return 0;
  tc_err e;
  tc_err_clear(&e);
  tc_axes all = {.all = true};
  _Alignas(8) char lo[8], hi[8];
  tc_tensor *mn = tc_reduce(TC_OP_REDUCE_MIN, t, &all, false, &e), *mx = mn ? tc_reduce(TC_OP_REDUCE_MAX, t, &all, false, &e) : NULL;
  bool ok = mx && tc_tensor_to_host(mn, lo, &e) == 0 && tc_tensor_to_host(mx, hi, &e) == 0;
  tc_tensor_free(mn);
  tc_tensor_free(mx);
  if (!ok) return -1;
  i128 a = load(dt, lo), b = load(dt, hi);
  return -a > b ? -a : b;
}

/* Whether no sum of n products of factors as large as the magnitudes
 * m[0..k) can leave kdt's range (their product times n within it, which
 * bounds every partial sum too): then the engine's wrapping kernel is exact,
 * and the common case runs at its speed. */
static bool products_fit(tc_dtype kdt, int k, tc_tensor *const *ts, u128 n) {
  u128 b = n;
  for (int i = 0; i < k && b; i++) {
    i128 m = max_abs(ts[i], kdt);
    if (m < 0 || __builtin_mul_overflow(b, (u128)m, &b)) return false;
  }
  return b <= (u128)hi_of(kdt);
}

tc_overflow tc_overflow_judges_matmul(tc_dtype kdt, tc_tensor *a, tc_tensor *b) {
  if (!judges_int(kdt)) return TC_OVERFLOW_WRAP;
  tc_tensor *ab[2] = {a, b};
  return products_fit(kdt, 2, ab, (u128)a->shape[a->ndim - 1]) ? TC_OVERFLOW_WRAP : (tc_overflow)policy;
}

/* ---- einsum ----
 * When no output can leave the dtype (the product of the operands' largest
 * magnitudes and the count of summed terms fits it), the wrapping lowering
 * is exact and runs as usual. Otherwise each output element is computed
 * here as the exact sum of its products: a product of up to 64 operands
 * needs 64 bits each, so the terms and their sum are kept in nops + 2 words
 * (two's complement for the sum). */
bool tc_overflow_judges_einsum(tc_dtype kdt) { return judges_int(kdt); }

bool tc_overflow_einsum_fits(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nsum,
                             const int *sumlab) {
  u128 n = 1;
  for (int s = 0; s < nsum; s++)
    if (__builtin_mul_overflow(n, (u128)gsize[sumlab[s]], &n)) return false;
  tc_tensor *ts[TC_EINSUM_OPS];
  for (int i = 0; i < nops; i++) ts[i] = ops[i].t;
  return products_fit(kdt, nops, ts, n);
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

#define XW_MAX (64 + 2)
/* acc (nw words, two's complement) += m, or -= m when neg (m: len words, unsigned) */
static void words_add(uint64_t *acc, int nw, const uint64_t *m, int len, bool neg) {
  uint64_t c = 0;
  for (int j = 0; j < nw && (j < len || c); j++) {
    uint64_t w = j < len ? m[j] : 0, r;
    uint64_t c1 = neg ? __builtin_sub_overflow(acc[j], w, &r) : __builtin_add_overflow(acc[j], w, &r);
    uint64_t c2 = neg ? __builtin_sub_overflow(r, c, &r) : __builtin_add_overflow(r, c, &r);
    c = c1 | c2;
    acc[j] = r;
  }
}

/* The exact einsum's operands: each one's host copy, the stride of each
 * output and summed label in it (0: absent or broadcast), and its offset
 * at the current term. */
typedef struct {
  tc_dtype kdt;
  size_t sz;
  int nops, nw, nsum;
  const int64_t *gsize;
  const int *sumlab;
  char **h;
  int64_t (*ost)[TC_MAX_DIMS];
  int64_t (*sst)[TC_EINSUM_LABELS];
  int64_t *off;
} xein;

static void xein_free(xein *e) {
  for (int i = 0; e->h && i < e->nops; i++) free(e->h[i]);
  free(e->h);
  free(e->ost);
  free(e->sst);
  free(e->off);
}

static int xein_init(xein *e, const tc_einsum_opnd *ops, int nout, const int *outlab, tc_err *err) {
  int nops = e->nops;
  e->h = calloc((size_t)nops, sizeof *e->h);
  e->ost = calloc((size_t)nops, sizeof *e->ost);
  e->sst = calloc((size_t)nops, sizeof *e->sst);
  e->off = calloc((size_t)nops, sizeof *e->off);
  if (!e->h || !e->ost || !e->sst || !e->off)
    return tc_err_set(err, TC_E_OOM, TC_OP_EINSUM, (int)e->kdt, "allocation failed");
  for (int i = 0; i < nops; i++) {
    const tc_einsum_opnd *p = &ops[i];
    if (!(e->h[i] = host_copy(p->t, err))) return -1;
    int64_t st = 1;
    for (int d = p->n - 1; d >= 0; d--) {
      int64_t s = p->t->shape[d] == e->gsize[p->lab[d]] ? st : 0;
      st *= p->t->shape[d] ? p->t->shape[d] : 1;
      for (int x = 0; x < nout; x++)
        if (outlab[x] == p->lab[d]) e->ost[i][x] = s;
      for (int x = 0; x < e->nsum; x++)
        if (e->sumlab[x] == p->lab[d]) e->sst[i][x] = s;
    }
  }
  return 0;
}

/* acc (words) += the current term, a product too wide for 128 bits: its
 * magnitude m (len words) and sign, then acc += or -= m. */
static void xein_add_wide(const xein *e, uint64_t *acc) {
  uint64_t m[XW_MAX];
  int len = 1;
  bool neg = false;
  m[0] = 1;
  for (int i = 0; i < e->nops; i++) {
    i128 v = load(e->kdt, e->h[i] + (size_t)e->off[i] * e->sz);
    neg ^= v < 0;
    uint64_t u = (uint64_t)(v < 0 ? -v : v), carry = 0;
    for (int w = 0; w < len; w++) {
      u128 q = (u128)m[w] * u + carry;
      m[w] = (uint64_t)q;
      carry = (uint64_t)(q >> 64);
    }
    if (carry) m[len++] = carry;
  }
  words_add(acc, e->nw, m, len, neg);
}

/* The exact sum of products of the output element at oidx. */
static exact xein_element(const xein *e, int nout, const int64_t *oidx, int64_t terms) {
  int64_t sidx[TC_EINSUM_LABELS] = {0};
  uint64_t acc[XW_MAX] = {0};
  int nops = e->nops;
  for (int i = 0; i < nops; i++) {
    e->off[i] = 0;
    for (int x = 0; x < nout; x++) e->off[i] += oidx[x] * e->ost[i][x];
  }
  /* terms whose product fits 128 bits add into fs, counting its 2^128
   * wraps in fw; the others, in words, into acc */
  i128 fs = 0;
  int64_t fw = 0;
  for (int64_t t = 0; t < terms; t++) {
    i128 p = 1;
    bool zero = false, wide = false;
    for (int i = 0; i < nops; i++) {
      i128 v = load(e->kdt, e->h[i] + (size_t)e->off[i] * e->sz);
      if (v == 0) { zero = true; break; }
      if (!wide && __builtin_mul_overflow(p, v, &p)) wide = true;
    }
    if (!zero && !wide) {
      i128 r;
      if (__builtin_add_overflow(fs, p, &r)) fw += p > 0 ? 1 : -1;
      fs = r;
    } else if (!zero) {
      xein_add_wide(e, acc);
    }
    /* the next term: the summed labels as an odometer, last fastest */
    for (int s = e->nsum - 1; s >= 0; s--) {
      for (int i = 0; i < nops; i++) e->off[i] += e->sst[i][s];
      if (++sidx[s] < e->gsize[e->sumlab[s]]) break;
      for (int i = 0; i < nops; i++) e->off[i] -= e->sst[i][s] * sidx[s];
      sidx[s] = 0;
    }
  }
  /* acc += fs + fw * 2^128 */
  u128 mag = fs < 0 ? -(u128)fs : (u128)fs;
  uint64_t m[3] = {(uint64_t)mag, (uint64_t)(mag >> 64), 0}, w[3] = {0, 0, fw < 0 ? -(uint64_t)fw : (uint64_t)fw};
  words_add(acc, e->nw, m, 2, fs < 0);
  words_add(acc, e->nw, w, 3, fw < 0);
  uint64_t ext = acc[1] >> 63 ? UINT64_MAX : 0;
  bool small = true;
  for (int j = 2; j < e->nw; j++) small &= acc[j] == ext;
  return small ? ex((i128)(((u128)acc[1] << 64) | acc[0])) : (exact){0, acc[e->nw - 1] >> 63 ? -1 : 1};
}

tc_tensor *tc_overflow_einsum(tc_dtype kdt, int nops, const tc_einsum_opnd *ops, const int64_t *gsize, int nout,
                              const int *outlab, int nsum, const int *sumlab, tc_err *err) {
  const tc_op op = TC_OP_EINSUM;
  xein e = {.kdt = kdt, .sz = tc_dtype_size(kdt), .nops = nops, .nw = nops + 2, .nsum = nsum, .gsize = gsize,
            .sumlab = sumlab};
  int64_t oshape[TC_MAX_DIMS], nout_el = 1, oidx[TC_MAX_DIMS] = {0}, terms = 1;
  for (int d = 0; d < nout; d++) nout_el *= oshape[d] = gsize[outlab[d]];
  for (int s = 0; s < nsum; s++) terms *= gsize[sumlab[s]];
  char *o = NULL;
  tc_tensor *out = NULL;
  if (xein_init(&e, ops, nout, outlab, err) != 0) goto done;
  o = malloc((size_t)(nout_el ? nout_el : 1) * e.sz);
  if (!o) { tc_err_set(err, TC_E_OOM, (int)op, (int)kdt, "allocation failed"); goto done; }
  for (int64_t f = 0; f < nout_el; f++) {
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, (int)kdt, "interrupted"); goto done; }
    exact v = xein_element(&e, nout, oidx, terms);
    if (put_judged((tc_overflow)policy, v, kdt, o, f, op, nout, oshape, "the exact sum of products", err) != 0) goto done;
    for (int x = nout - 1; x >= 0; x--) {   /* the next output element */
      if (++oidx[x] < oshape[x]) break;
      oidx[x] = 0;
    }
  }
  out = tc_tensor_new(kdt, nout, oshape, err);
  if (out && tc_tensor_write(out, o, err) != 0) { tc_tensor_free(out); out = NULL; }
done:
  xein_free(&e);
  free(o);
  return out;
}
