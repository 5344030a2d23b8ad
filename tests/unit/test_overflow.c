/* The overflow policy's blocked paths (backend/cpu/overflow.c): add, sub, mul, neg,
 * abs, div, floor_div, pow (operands of the kernel dtype, of narrower ones,
 * weak literals) and casts between integer dtypes under check and saturate, on
 * tensors of many blocks that the CPU engine splits across threads, for
 * every integer dtype, against exact references written here in __int128:
 * each element (the wrapping result where nothing overflows, the clamped
 * exact one under saturate), and under check the first overflowing index
 * wherever it lies (a block's first or last element, a later block, another
 * thread's part, with more overflows after it), for each thread count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"

typedef __int128 i128;

static const tc_dtype idts[] = {TC_DT_I8, TC_DT_I16, TC_DT_I32, TC_DT_I64, TC_DT_U8, TC_DT_U16, TC_DT_U32, TC_DT_U64};
#define NDT (sizeof idts / sizeof idts[0])
static const int counts[] = {1, 3};   /* one task; three tasks on three threads */
#define NCOUNTS (sizeof counts / sizeof counts[0])
/* three tasks of 66 blocks of 1024 (cpu_split: n / 2^16, at most twice the
 * threads), the last block ragged */
#define N 200003
static const int64_t TASK2 = 67584, TASK3 = 135168;   /* where the second and third task start */
#define NF 5003   /* data of the whole range (judged element by element): a few blocks, one task */

static void setup(void) { tc_set_threads(0); tc_set_overflow(TC_OVERFLOW_WRAP); }
static void teardown(void) { tc_set_threads(0); tc_set_overflow(TC_OVERFLOW_WRAP); }
TestSuite(overflow, .init = setup, .fini = teardown);

static bool uns(tc_dtype dt) { return tt_is_uint(dt); }
static i128 lo(tc_dtype dt) { return uns(dt) ? 0 : -((i128)1 << (tt_bits(dt) - 1)); }
static i128 hi(tc_dtype dt) { return uns(dt) ? ((i128)1 << tt_bits(dt)) - 1 : ((i128)1 << (tt_bits(dt) - 1)) - 1; }
static bool fits(i128 v, tc_dtype dt) { return v >= lo(dt) && v <= hi(dt); }
static i128 clampv(i128 v, tc_dtype dt) { return v < lo(dt) ? lo(dt) : v > hi(dt) ? hi(dt) : v; }
/* the value of the int64 bit pattern tt_read gives for dtype dt */
static i128 val(tc_dtype dt, int64_t raw) { return uns(dt) && tt_bits(dt) == 64 ? (i128)(uint64_t)raw : (i128)raw; }

/* The exact result (a u64 product beyond 2^127 coded as 2^126: beyond every dtype too). */
static i128 exact(tc_op op, i128 x, i128 y) {
  i128 r;
  switch (op) {
  case TC_OP_ADD: return x + y;
  case TC_OP_SUB: return x - y;
  case TC_OP_MUL: return __builtin_mul_overflow(x, y, &r) ? (i128)1 << 126 : r;
  case TC_OP_NEG: return -x;
  case TC_OP_ABS: return x < 0 ? -x : x;
  case TC_OP_DIV: return x / y;   /* truncated, as C */
  case TC_OP_FLOOR_DIV: return x / y - (x % y != 0 && (x < 0) != (y < 0));
  case TC_OP_POW: {   /* y >= 0; a power beyond 2^100 kept as +-2^100 */
    const i128 big = (i128)1 << 100;
    if (x == 0 || x == 1) return y == 0 ? 1 : x;
    if (x == -1) return y & 1 ? -1 : 1;
    r = 1;
    for (i128 k = 0; k < y; k++)
      if (__builtin_mul_overflow(r, x, &r) || r > big || r < -big) return x < 0 && (y & 1) ? -big : big;
    return r;
  }
  default: return x;   /* a cast */
  }
}

static uint64_t seed = 0x5eed0f10a7u;
/* a random value of dt: all of its range, or when small, of magnitude below 2^(bits/2 - 1) */
static i128 rnd(tc_dtype dt, bool small) {
  uint64_t r = tt_rand(&seed);
  int bits = tt_bits(dt);
  if (dt == TC_DT_BOOL) return (i128)(r & 1);
  if (small) {
    i128 m = (i128)(r >> (64 - (bits / 2 - 1)));
    return uns(dt) || (r & 1) ? m : -m;
  }
  return uns(dt) ? (i128)(r >> (64 - bits)) : (i128)((int64_t)r >> (64 - bits));
}

static tc_tensor *tensor_of(tc_dtype dt, int64_t n, const i128 *v) {
  int64_t *iv = malloc(sizeof *iv * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) iv[i] = (int64_t)v[i];   /* the low bits */
  tc_tensor *t = n == 1 ? tt_iscalar(dt, iv[0]) : tt_ivec(dt, n, iv);
  free(iv);
  return t;
}

/* op on xa of dtype dt (and xb of dtype db, each of n or 1 elements; NULL
 * for unary ops), or a cast of xa to rdt, checked under both policies and
 * every thread count against the exact results in rdt; returns the first
 * overflowing index (or -1). */
static bool weak_b;   /* b is a weak integer literal (one element) */
static int64_t judge(tc_op op, tc_dtype dt, tc_dtype db, tc_dtype rdt, const i128 *xa, int64_t na, const i128 *xb,
                     int64_t nb, const char *what) {
  int64_t n = na > nb ? na : nb, first = -1;
  tc_dtype to = rdt;
  tc_err e0 = tt_err();
  tc_tensor *a = tensor_of(dt, na, xa), *b = !xb ? NULL : weak_b ? tc_scalar_i64((int64_t)xb[0], true, &e0) : tensor_of(db, nb, xb);
  i128 *want = malloc(sizeof *want * (size_t)n);
  int64_t *got = malloc(sizeof *got * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    want[i] = exact(op, xa[na == 1 ? 0 : i], xb ? xb[nb == 1 ? 0 : i] : 0);
    if (first < 0 && !fits(want[i], rdt)) first = i;
  }
  for (int pol = TC_OVERFLOW_CHECK; pol <= TC_OVERFLOW_SATURATE; pol++) {
    tc_set_overflow((tc_overflow)pol);
    for (size_t c = 0; c < NCOUNTS; c++) {
      tc_set_threads(counts[c]);
      tc_err err = tt_err();
      tc_tensor *r = op == TC_OP_CAST ? tc_cast_user(a, to, &err) : b ? tc_binary(op, a, b, &err) : tc_unary(op, a, &err);
      const char *pn = tc_overflow_name((tc_overflow)pol);
      if (pol == TC_OVERFLOW_CHECK && first >= 0) {
        TT_CHECK(!r && err.code == TC_E_INT_OVERFLOW && err.has_index && err.index_ndim == (n == 1 ? 0 : 1) &&
                     (n == 1 || err.index[0] == first),
                 "%s %s %s, %d threads: want integer_overflow at %lld, got %s (code %d, index %lld)", what, tt_name(dt),
                 pn, counts[c], (long long)first, r ? "a result" : tt_msg(&err), (int)err.code,
                 (long long)(err.has_index ? err.index[0] : -1));
        tc_tensor_free(r);
        continue;
      }
      if (!r) { TT_CHECK(false, "%s %s %s, %d threads: %s", what, tt_name(dt), pn, counts[c], tt_msg(&err)); continue; }
      TT_CHECK(r->dtype == rdt && tt_read(r, got, NULL) == n, "%s %s: result dtype or size", what, tt_name(dt));
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 3; i++) {
        i128 w = clampv(want[i], rdt);
        if (val(rdt, got[i]) == w) continue;
        bad++;
        TT_CHECK(false, "%s %s %s, %d threads: element %lld is %lld, want %lld", what, tt_name(dt), pn, counts[c],
                 (long long)i, (long long)got[i], (long long)w);
      }
      tc_tensor_free(r);
    }
  }
  tc_set_overflow(TC_OVERFLOW_WRAP);
  tc_set_threads(0);
  tc_tensor_free(a);
  tc_tensor_free(b);
  free(want);
  free(got);
  return first;
}

/* A pair (x, y) whose op overflows dt: add MAX + 1, sub MIN - 1, mul MAX * 2, neg and abs MIN (neg of
 * an unsigned 1), div and floor_div MIN / -1, pow 2 ** bits; false when op cannot overflow dt (abs of
 * an unsigned) or is not judged (an unsigned quotient). */
static bool overflowing(tc_op op, tc_dtype dt, i128 *x, i128 *y) {
  switch (op) {
  case TC_OP_DIV: case TC_OP_FLOOR_DIV: *x = lo(dt); *y = -1; return !uns(dt);   /* MIN / -1 */
  case TC_OP_POW: *x = 2; *y = tt_bits(dt); return true;
  case TC_OP_ADD: *x = hi(dt); *y = 1; return true;
  case TC_OP_SUB: *x = lo(dt); *y = 1; return true;
  case TC_OP_MUL: *x = hi(dt); *y = 2; return true;
  case TC_OP_NEG: *x = uns(dt) ? 1 : lo(dt); *y = 0; return true;
  default: *x = lo(dt); *y = 0; return !uns(dt);
  }
}

static const tc_op ew_ops[] = {TC_OP_ADD, TC_OP_SUB, TC_OP_MUL, TC_OP_NEG, TC_OP_ABS, TC_OP_DIV, TC_OP_FLOOR_DIV, TC_OP_POW};
static bool binary(tc_op op) { return op != TC_OP_NEG && op != TC_OP_ABS; }
/* a divisor is never zero, an exponent never negative (those are other errors) */
static i128 fix_y(tc_op op, i128 y) {
  if ((op == TC_OP_DIV || op == TC_OP_FLOOR_DIV) && y == 0) return 1;
  if (op == TC_OP_POW) return (y < 0 ? -y : y) % 70;
  return y;
}

/* Quiet data (nothing overflows) for op: small values (an unsigned a - b with b > a swapped, exponents
 * below 6 on bases below 4), each pair whose exact result does not fit dt replaced by (0, 1). */
static void quiet(tc_op op, tc_dtype dt, i128 *x, i128 *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    x[i] = rnd(dt, true);
    y[i] = fix_y(op, rnd(dt, true));
    if (op == TC_OP_POW) { x[i] %= 4; y[i] %= 6; }   /* blocks the bit-length bound passes (from i16) */
    if (op == TC_OP_SUB && uns(dt) && x[i] < y[i]) { i128 t = x[i]; x[i] = y[i]; y[i] = t; }
    if (!fits(exact(op, x[i], y[i]), dt)) { x[i] = 0; y[i] = 1; }
  }
}

Test(overflow, elementwise_results_and_first_index_for_every_dtype_and_thread_count) {
  i128 *x = malloc(sizeof *x * N), *y = malloc(sizeof *y * N);
  for (size_t d = 0; d < NDT; d++) {
    tc_dtype dt = idts[d];
    for (size_t k = 0; k < sizeof ew_ops / sizeof ew_ops[0]; k++) {
      tc_op op = ew_ops[k];
      bool bin = binary(op);
      if ((op == TC_OP_DIV || op == TC_OP_FLOOR_DIV) && uns(dt)) continue;   /* never judged */
      char what[64];
      snprintf(what, sizeof what, "%s quiet", tc_op_name(op));
      quiet(op, dt, x, y, N);
      TT_CHECK(judge(op, dt, dt, dt, x, N, bin ? y : NULL, N, what) == -1, "%s: quiet data overflowed", what);
      i128 ox, oy;
      if (!overflowing(op, dt, &ox, &oy)) continue;
      /* overflows planted: the first one wins wherever it lies */
      static const int64_t sets[][3] = {
          {N - 1, -1, -1},              /* the last element: the last task's ragged block */
          {1023, 1024, N - 1},          /* the last element of the first block */
          {TASK2, TASK3 + 7, N - 2},    /* the second task's first element, the third's too */
          {TASK3 + 1500, TASK2 + 3000, 1024},   /* the first of the second block */
      };
      /* (the quiet data of the run above, planted and restored; the ops after abs take sets 1 and 2) */
      for (size_t s = k < 5 ? 0 : 1; s < (k < 5 ? sizeof sets / sizeof sets[0] : 3); s++) {
        int64_t want = N;
        i128 keep[3][2];
        for (int p = 0; p < 3; p++) {
          int64_t at = sets[s][p];
          if (at < 0) continue;
          keep[p][0] = x[at];
          keep[p][1] = y[at];
          x[at] = ox;
          y[at] = oy;
          if (at < want) want = at;
        }
        snprintf(what, sizeof what, "%s planted set %zu", tc_op_name(op), s);
        TT_CHECK(judge(op, dt, dt, dt, x, N, bin ? y : NULL, N, what) == want, "%s: reference first index", what);
        for (int p = 2; p >= 0; p--)
          if (sets[s][p] >= 0) { x[sets[s][p]] = keep[p][0]; y[sets[s][p]] = keep[p][1]; }
      }
      /* values of the whole range: most blocks overflow, saturate clamps each element (MIN/MAX edges included) */
      int e = 0;
      int64_t ev[64];
      e = uns(dt) ? 0 : tt_edges_i(dt, ev);
      for (int64_t i = 0; i < NF; i++) { x[i] = rnd(dt, false); y[i] = fix_y(op, rnd(dt, false)); }
      for (int i = 0; i < e; i++)
        for (int j = 0; j < e; j++) { x[i * e + j] = ev[i]; y[i * e + j] = fix_y(op, ev[j]); }
      if (uns(dt)) {   /* 0, 1, 2, MAX - 1, MAX pairwise */
        i128 u[5] = {0, 1, 2, hi(dt) - 1, hi(dt)};
        for (int i = 0; i < 5; i++)
          for (int j = 0; j < 5; j++) { x[i * 5 + j] = u[i]; y[i * 5 + j] = fix_y(op, u[j]); }
      }
      snprintf(what, sizeof what, "%s full range", tc_op_name(op));
      judge(op, dt, dt, dt, x, NF, bin ? y : NULL, NF, what);
      if (!bin) continue;
      /* a broadcast scalar operand on either side, and two 0-d operands */
      quiet(op, dt, x, y, N);
      x[TASK2 + 9] = ox;
      i128 one = oy;
      snprintf(what, sizeof what, "%s tensor with scalar", tc_op_name(op));
      judge(op, dt, dt, dt, x, N, &one, 1, what);
      snprintf(what, sizeof what, "%s scalar with tensor", tc_op_name(op));
      judge(op, dt, dt, dt, &ox, 1, y, N, what);
      snprintf(what, sizeof what, "%s two scalars", tc_op_name(op));
      TT_CHECK(judge(op, dt, dt, dt, &ox, 1, &oy, 1, what) == 0, "%s", what);
    }
  }
  free(x);
  free(y);
  TT_DONE();
}

/* 64-bit mul: a block whose operands' bit lengths could overflow (2^40 in a, 2^40 in b) but whose
 * products all fit is judged exactly and gives the wrapping (= exact) result; pow at the block bound. */
Test(overflow, wide_operands_and_the_bounds_of_the_block_tests) {
  i128 *x = malloc(sizeof *x * N), *y = malloc(sizeof *y * N);
  for (int u = 0; u < 2; u++) {
    tc_dtype dt = u ? TC_DT_U64 : TC_DT_I64;
    for (int64_t i = 0; i < N; i++) {
      x[i] = i % 3 == 0 ? (i128)1 << 40 : (i % 7) - (u ? 0 : 3);
      y[i] = i % 3 == 1 ? (u ? (i128)1 << 40 : -((i128)1 << 40)) : (i % 5) + 1;
    }
    TT_CHECK(judge(TC_OP_MUL, dt, dt, dt, x, N, y, N, "mul of wide operands") == -1, "no product overflows");
    x[TASK3 + 3] = (i128)1 << 40;   /* 2^80: the first overflow */
    y[TASK3 + 3] = (i128)1 << 40;
    TT_CHECK(judge(TC_OP_MUL, dt, dt, dt, x, N, y, N, "mul of wide operands") == TASK3 + 3, "2^40 * 2^40 overflows");
  }
  /* pow at its block bound (|x| <= 2^la, exponents <= vb: fits when la * vb <= bits - 2): (-2^((bits-2)/2))^2
   * fits everywhere, (-2^(bits/4))^4 = 2^bits does not */
  for (int s = 0; s < 4; s++) {
    tc_dtype dt = idts[s];
    int b = tt_bits(dt);
    for (int64_t i = 0; i < N; i++) { x[i] = -((i128)1 << ((b - 2) / 2)); y[i] = 2; }
    TT_CHECK(judge(TC_OP_POW, dt, dt, dt, x, N, y, N, "pow at the bound") == -1, "pow at the bound fits");
    for (int64_t i = TASK2; i < TASK2 + 1024; i++) { x[i] = -((i128)1 << (b / 4)); y[i] = 4; }   /* a whole block */
    TT_CHECK(judge(TC_OP_POW, dt, dt, dt, x, N, y, N, "pow past the bound") == TASK2, "pow past the bound");
  }
  free(x);
  free(y);
  TT_DONE();
}

Test(overflow, integer_casts_for_every_pair_and_thread_count) {
  i128 *x = malloc(sizeof *x * N);
  for (size_t f = 0; f < NDT; f++) {
    for (size_t t = 0; t < NDT; t++) {
      tc_dtype from = idts[f], to = idts[t];
      if (from == to) continue;
      char what[64];
      snprintf(what, sizeof what, "cast to %s, quiet", tt_name(to));
      for (int64_t i = 0; i < N; i++) x[i] = clampv(rnd(from, false) >> 1, to);   /* in both ranges */
      TT_CHECK(judge(TC_OP_CAST, from, from, to, x, N, NULL, 0, what) == -1, "%s", what);
      /* the first value out of range in the second task, another after it */
      i128 out = hi(from) > hi(to) ? hi(to) + 1 : lo(from) < lo(to) ? lo(to) - 1 : 0;
      if (out == 0) continue;   /* every value fits: the engine's cast */
      x[TASK2 + 1023] = out;
      x[N - 1] = out;
      snprintf(what, sizeof what, "cast to %s, planted", tt_name(to));
      TT_CHECK(judge(TC_OP_CAST, from, from, to, x, N, NULL, 0, what) == TASK2 + 1023, "%s", what);
      /* the whole range: each element clamped (the edges first) */
      for (int64_t i = 0; i < NF; i++) x[i] = rnd(from, false);
      i128 e[] = {lo(from), lo(from) + 1, -1, 0, 1, hi(from) - 1, hi(from), lo(to), hi(to), lo(to) - 1, hi(to) + 1};
      for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) x[i] = clampv(e[i], from);
      snprintf(what, sizeof what, "cast to %s, full range", tt_name(to));
      judge(TC_OP_CAST, from, from, to, x, NF, NULL, 0, what);
    }
  }
  free(x);
  TT_DONE();
}

/* Operands of another dtype than the kernel's (converted a block at a time, or once when broadcast):
 * tensors of two dtypes, and a weak literal against a tensor of each integer dtype. */
Test(overflow, operands_of_another_dtype) {
  static const tc_dtype pairs[][3] = {{TC_DT_I32, TC_DT_I64, TC_DT_I64}, {TC_DT_I8, TC_DT_U8, TC_DT_I16},
                                      {TC_DT_U8, TC_DT_U16, TC_DT_U16}, {TC_DT_U32, TC_DT_I64, TC_DT_I64},
                                      {TC_DT_BOOL, TC_DT_I16, TC_DT_I16}, {TC_DT_I64, TC_DT_I16, TC_DT_I64}};
  static const tc_op ops[] = {TC_OP_ADD, TC_OP_SUB, TC_OP_MUL, TC_OP_FLOOR_DIV, TC_OP_POW};
  i128 *x = malloc(sizeof *x * N), *y = malloc(sizeof *y * N);
  char what[80];
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      tc_op op = ops[k];
      tc_dtype da = pairs[p][0], db = pairs[p][1], kd = pairs[p][2];
      if (op == TC_OP_FLOOR_DIV && uns(kd)) continue;
      for (int small = 1; small >= 0; small--) {   /* small values on N elements, the whole range on NF */
        int64_t n = small ? N : NF;
        for (int64_t i = 0; i < n; i++) {
          x[i] = rnd(da, small);
          y[i] = rnd(db, small);
          y[i] = fix_y(op, op == TC_OP_POW && small ? y[i] % 4 : y[i]);
        }
        if (small) x[TASK2 + 77] = da == TC_DT_BOOL ? 1 : hi(da);   /* in the second task: MAX of a with b's value */
        snprintf(what, sizeof what, "%s %s with %s (%s)", tc_op_name(op), tt_name(da), tt_name(db), small ? "small" : "all");
        judge(op, da, db, kd, x, n, y, n, what);
        for (int64_t i = 0; i < n; i++) { i128 t = fix_y(op, x[i]); x[i] = y[i]; y[i] = t; }
        judge(op, db, da, kd, x, n, y, n, what);
      }
    }
  static const int64_t lits[] = {1, 2, -1};
  weak_b = true;
  for (size_t d = 0; d < NDT; d++)
    for (size_t l = 0; l < 3; l++) {
      tc_dtype dt = idts[d];
      if (lits[l] < 0 && uns(dt)) continue;   /* a negative literal does not fit an unsigned dtype */
      for (size_t k = 0; k < 3; k++) {
        tc_op op = ops[k];
        quiet(op, dt, x, y, N);
        x[TASK3 + 2] = lits[l] < 0 ? lo(dt) : hi(dt);
        i128 lit = lits[l];
        snprintf(what, sizeof what, "%s %s with the literal %d", tc_op_name(op), tt_name(dt), (int)lits[l]);
        judge(op, dt, TC_DT_I64, dt, x, N, &lit, 1, what);
      }
    }
  weak_b = false;
  free(x);
  free(y);
  TT_DONE();
}

/* reduce_prod: each row's product in running products of the dtype, in chunks on the threads; a
 * product that may have overflowed computed exactly. Rows of N / 2 (chunks in several tasks) of ones
 * with twos, minus ones and zeros planted in different chunks, for every integer dtype. */
static void prod_case(tc_dtype dt, int rows, const int *twos, const int *negs, const bool *zero, const char *what) {
  int64_t len = N / 2, n = len * rows;
  int64_t *v = malloc(sizeof *v * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = 1;
  i128 want[4];
  int first = -1;
  for (int r = 0; r < rows; r++) {
    int64_t *row = v + r * len;
    /* twos and minus ones spread over the row (every 9973rd element from a row-dependent start), a zero last */
    int64_t at = 17 + r;
    for (int k = 0; k < twos[r]; k++, at = (at + 9973) % len) row[at] = 2;
    for (int k = 0; k < negs[r]; k++, at = (at + 9973) % len) row[at] = -1;
    if (zero[r]) row[len - 1] = 0;
    i128 p = zero[r] ? 0 : (negs[r] & 1 ? -1 : 1) * ((i128)1 << (twos[r] < 100 ? twos[r] : 100));   /* 2^100: beyond every dtype */
    want[r] = p;
    if (first < 0 && !fits(p, dt)) first = r;
  }
  int64_t shape[2] = {rows, len};
  tc_tensor *x = tt_tensor(dt, 2, shape, v, NULL);
  tc_axes ax = {.all = false, .n = 1, .axis = {1}};
  for (int pol = TC_OVERFLOW_CHECK; pol <= TC_OVERFLOW_SATURATE; pol++) {
    tc_set_overflow((tc_overflow)pol);
    for (size_t c = 0; c < NCOUNTS; c++) {
      tc_set_threads(counts[c]);
      tc_err err = tt_err();
      tc_tensor *r = tc_reduce(TC_OP_REDUCE_PROD, x, &ax, false, &err);
      if (pol == TC_OVERFLOW_CHECK && first >= 0) {
        TT_CHECK(!r && err.code == TC_E_INT_OVERFLOW && err.has_index && err.index[0] == first,
                 "%s %s check, %d threads: want integer_overflow at row %d, got %s", what, tt_name(dt), counts[c], first,
                 r ? "a result" : tt_msg(&err));
        tc_tensor_free(r);
        continue;
      }
      int64_t got[4];
      TT_CHECK(r && tt_read(r, got, NULL) == rows, "%s %s: %s", what, tt_name(dt), r ? "size" : tt_msg(&err));
      for (int k = 0; r && k < rows; k++)
        TT_CHECK(val(dt, got[k]) == clampv(want[k], dt), "%s %s %s, %d threads: row %d is %lld, want %lld", what, tt_name(dt),
                 tc_overflow_name((tc_overflow)pol), counts[c], k, (long long)got[k], (long long)clampv(want[k], dt));
      tc_tensor_free(r);
    }
  }
  tc_set_overflow(TC_OVERFLOW_WRAP);
  tc_set_threads(0);
  tc_tensor_free(x);
  free(v);
}

Test(overflow, reduce_prod_for_every_dtype_and_thread_count) {
  for (size_t d = 0; d < NDT; d++) {
    tc_dtype dt = idts[d];
    int b = tt_bits(dt), top = uns(dt) ? b - 1 : b - 2;   /* 2^top fits, 2^(top + 1) may not */
    const int n0[] = {0, 0, 0, 0}, one[] = {1, 1, 1, 1};
    const bool nz[] = {false, false, false, false}, z[] = {false, true, false, false};
    int fit[] = {top, top, 2, 0}, past[] = {top, top + 1, top + 2, 1};
    prod_case(dt, 4, fit, uns(dt) ? n0 : one, nz, "products that fit");
    prod_case(dt, 4, past, n0, nz, "products past MAX");
    if (!uns(dt)) {
      int minv[] = {b - 1, b - 1, b, 0};   /* -2^(b-1) is MIN: it fits */
      prod_case(dt, 4, minv, one, nz, "products at and past MIN");
    }
    int big[] = {3, 200, 200, 1};
    prod_case(dt, 4, big, n0, z, "a zero after an overflow");
  }
  TT_DONE();
}

/* cumprod: a running product of the dtype per row; a row whose product may have overflowed is done
 * again exactly, each element judged alone (a zero after an overflow gives zeros). Two rows of 5000:
 * twos, minus ones and a zero at known places; the reference is the exact prefix product. */
Test(overflow, cumprod_for_every_dtype) {
  enum { LEN = 5000 };
  static int64_t v[2 * LEN], got[2 * LEN];
  static i128 want[2 * LEN];
  for (size_t d = 0; d < NDT; d++) {
    tc_dtype dt = idts[d];
    int b = tt_bits(dt);
    for (int fitting = 0; fitting < 2; fitting++) {
      int64_t first = -1;
      for (int64_t i = 0; i < 2 * LEN; i++) v[i] = 1;
      /* row 0: b - 2 twos (fits) then, unless fitting, b more; row 1: a -1 (signed), twos, a zero */
      for (int k = 0; k < b - 2 + (fitting ? 0 : b); k++) v[100 + 37 * k] = 2;
      if (!uns(dt)) v[LEN + 3] = -1;
      for (int k = 0; k < (fitting ? b - 2 : b + 3); k++) v[LEN + 200 + 41 * k] = 2;
      v[LEN + 4000] = 0;
      for (int r = 0; r < 2; r++) {
        i128 p = 1;
        bool big = false;
        for (int64_t i = r * LEN; i < (r + 1) * LEN; i++) {
          if (v[i] == 0) { p = 0; big = false; }
          else if (!big && __builtin_mul_overflow(p, (i128)v[i], &p)) big = true;   /* never at these sizes */
          want[i] = p;
          if (first < 0 && !fits(p, dt)) first = i;
        }
      }
      int64_t shape[2] = {2, LEN};
      tc_tensor *x = tt_tensor(dt, 2, shape, v, NULL);
      for (int pol = TC_OVERFLOW_CHECK; pol <= TC_OVERFLOW_SATURATE; pol++) {
        tc_set_overflow((tc_overflow)pol);
        tc_err err = tt_err();
        tc_tensor *r = tc_scan(TC_OP_CUMPROD, x, true, 1, &err);
        if (pol == TC_OVERFLOW_CHECK && first >= 0) {
          TT_CHECK(!r && err.code == TC_E_INT_OVERFLOW && err.has_index && err.index[0] * LEN + err.index[1] == first,
                   "cumprod %s check: want integer_overflow at flat %lld, got %s", tt_name(dt), (long long)first,
                   r ? "a result" : tt_msg(&err));
        } else {
          TT_CHECK(r && tt_read(r, got, NULL) == 2 * LEN, "cumprod %s: %s", tt_name(dt), r ? "size" : tt_msg(&err));
          for (int64_t i = 0, bad = 0; r && i < 2 * LEN && bad < 3; i++)
            if (val(dt, got[i]) != clampv(want[i], dt)) {
              bad++;
              TT_CHECK(false, "cumprod %s %s: element %lld is %lld, want %lld", tt_name(dt), tc_overflow_name((tc_overflow)pol),
                       (long long)i, (long long)got[i], (long long)clampv(want[i], dt));
            }
        }
        tc_tensor_free(r);
      }
      tc_set_overflow(TC_OVERFLOW_WRAP);
      TT_CHECK(fitting ? first < 0 : first >= 0, "cumprod %s: the reference %s", tt_name(dt), fitting ? "fits" : "overflows");
      tc_tensor_free(x);
    }
  }
  TT_DONE();
}
