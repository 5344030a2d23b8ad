/* Exact integer values for the overflow policy (SPEC 13): 128 bits, and a
 * sign for a value beyond even that. Shared by the core (src/overflow.c:
 * einsum's exact sums, the error) and the engine that judges (the CPU
 * engine's backend/cpu/overflow.c). */
#ifndef TC_EXACT_H
#define TC_EXACT_H
#include <string.h>
#include "internal.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
#define I128_MAX ((i128)(~(u128)0 >> 1))

/* A value beyond every dtype's range keeps only its sign: big = +1 / -1. */
typedef struct { i128 v; int big; } exact;

static inline exact ex(i128 v) { exact e = {v, 0}; return e; }

static inline i128 lo_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? 0 : -((i128)1 << (b - 1));
}
static inline i128 hi_of(tc_dtype dt) {
  int b = tc_dtype_bits(dt);
  return tc_dtype_is_unsigned(dt) ? ((i128)1 << b) - 1 : ((i128)1 << (b - 1)) - 1;
}

static inline bool fits(exact e, tc_dtype dt) { return !e.big && e.v >= lo_of(dt) && e.v <= hi_of(dt); }

static inline i128 clamp(exact e, tc_dtype dt) {
  if (e.big) return e.big > 0 ? hi_of(dt) : lo_of(dt);
  return e.v < lo_of(dt) ? lo_of(dt) : e.v > hi_of(dt) ? hi_of(dt) : e.v;
}

static inline i128 load(tc_dtype dt, const char *p) {
  int64_t v = tc_dtype_load_i64(dt, p);
  return tc_dtype_is_unsigned(dt) ? (i128)(uint64_t)v : (i128)v;
}

static inline void store(tc_dtype dt, char *p, i128 v) {
  uint64_t u = (uint64_t)(u128)v;   /* the low bits; v is in range */
  switch (tc_dtype_size(dt)) {
  case 1: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
  default: memcpy(p, &u, 8); break;
  }
}

static inline exact mul(exact a, exact b) {
  if ((!a.big && a.v == 0) || (!b.big && b.v == 0)) return ex(0);
  int sa = a.big ? a.big : a.v < 0 ? -1 : 1, sb = b.big ? b.big : b.v < 0 ? -1 : 1;
  exact r;
  if (a.big || b.big || __builtin_mul_overflow(a.v, b.v, &r.v)) { r.v = 0; r.big = sa * sb; return r; }
  r.big = 0;
  return r;
}

/* integer_overflow under policy p: `what` does not fit dt at flat's index
 * of shape. Returns -1. */
int tc_overflow_error(tc_err *err, tc_overflow p, tc_op op, tc_dtype dt, int ndim, const int64_t *shape, int64_t flat,
                      const char *what);

/* Element flat of a result of dtype dt: e clamped into o, or under check,
 * when e does not fit, integer_overflow at flat's index of shape. */
static inline int put_judged(tc_overflow p, exact e, tc_dtype dt, char *o, int64_t flat, tc_op op, int ndim,
                             const int64_t *shape, const char *what, tc_err *err) {
  if (!fits(e, dt) && p == TC_OVERFLOW_CHECK) return tc_overflow_error(err, p, op, dt, ndim, shape, flat, what);
  store(dt, o + (size_t)flat * tc_dtype_size(dt), clamp(e, dt));
  return 0;
}
#endif
