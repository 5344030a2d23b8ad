/* The test toolkit (see tt.h): independent reference conversions and
 * arithmetic, tensor builders and readers, failure accounting. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt.h"

/* ---- failures ---- */
static int nfail;

const char *tt_msg(const tc_err *e) {
  static _Thread_local char buf[8][TC_ERR_TEXT];
  static _Thread_local unsigned k;
  return tc_err_text(e, buf[k++ % 8]);
}

void tt_fail(const char *fmt, ...) {
  if (++nfail > 25) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cr_log_error("%s", buf);
}

bool tt_sampled(void) {
  const char *s = getenv("TT_SAMPLED");
  return s && *s && strcmp(s, "0") != 0;
}

int tt_failures(void) {
  int n = nfail;
  nfail = 0;
  return n;
}

/* ---- dtype facts ---- */
bool tt_is_int(tc_dtype dt) { return dt == TC_DT_I8 || dt == TC_DT_I16 || dt == TC_DT_I32 || dt == TC_DT_I64; }
bool tt_is_uint(tc_dtype dt) { return dt == TC_DT_U8 || dt == TC_DT_U16 || dt == TC_DT_U32 || dt == TC_DT_U64; }
bool tt_is_flt(tc_dtype dt) { return dt == TC_DT_BF16 || dt == TC_DT_F16 || dt == TC_DT_F32 || dt == TC_DT_F64; }

int tt_bits(tc_dtype dt) {
  switch (dt) {
  case TC_DT_BOOL: return 1;
  case TC_DT_I8: case TC_DT_U8: return 8;
  case TC_DT_I16: case TC_DT_U16: case TC_DT_BF16: case TC_DT_F16: return 16;
  case TC_DT_I32: case TC_DT_U32: case TC_DT_F32: return 32;
  default: return 64;
  }
}

int64_t tt_min(tc_dtype dt) {
  if (dt == TC_DT_BOOL) return 0;
  return tt_bits(dt) == 64 ? INT64_MIN : -((int64_t)1 << (tt_bits(dt) - 1));
}
int64_t tt_max(tc_dtype dt) {
  if (dt == TC_DT_BOOL) return 1;
  return tt_bits(dt) == 64 ? INT64_MAX : ((int64_t)1 << (tt_bits(dt) - 1)) - 1;
}

void tt_fmt(tc_dtype dt, int *mb, int *emin, int *emax) {
  switch (dt) {
  case TC_DT_F16: *mb = 10; *emin = -14; *emax = 15; break;
  case TC_DT_BF16: *mb = 7; *emin = -126; *emax = 127; break;
  case TC_DT_F32: *mb = 23; *emin = -126; *emax = 127; break;
  default: *mb = 52; *emin = -1022; *emax = 1023; break;
  }
}

double tt_maxf(tc_dtype dt) {
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  return ldexp(2.0 - ldexp(1.0, -mb), emax);
}

double tt_denorm_min(tc_dtype dt) {
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  return ldexp(1.0, emin - mb);
}

/* ---- reference arithmetic ---- */
int64_t tt_wrap(__int128 v, int bits) {
  uint64_t low = (uint64_t)(unsigned __int128)v;
  if (bits < 64) {
    uint64_t m = ((uint64_t)1 << bits) - 1;
    low &= m;
    if (low >> (bits - 1)) low |= ~m;
  }
  int64_t r;
  memcpy(&r, &low, sizeof r);
  return r;
}

double tt_round(double x, tc_dtype dt) {
  if (dt == TC_DT_F64 || isnan(x) || isinf(x) || x == 0) return x;
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  int e = ilogb(x);
  if (e < emin) e = emin;
  double ulp = ldexp(1.0, e - mb);
  double r = nearbyint(x / ulp) * ulp;   /* x / ulp is exact: a power-of-two scaling */
  if (fabs(r) > tt_maxf(dt)) return copysign(INFINITY, x);
  return r;
}

double tt_round_i64(int64_t v, tc_dtype dt) {
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  double r;
  int len = 0;
  while (len < 64 && (a >> len)) len++;
  if (len <= mb + 1) {
    r = (double)a;
  } else {
    int s = len - (mb + 1);
    uint64_t q = a >> s, rest = a & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
    if (rest > half || (rest == half && (q & 1))) q++;
    r = ldexp((double)q, s);
  }
  if (r > tt_maxf(dt)) r = INFINITY;
  return v < 0 ? -r : r;
}

double tt_ulp(double x, tc_dtype dt) {
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  int e = (x == 0 || !isfinite(x)) ? emin : ilogb(x);
  if (e < emin) e = emin;
  return ldexp(1.0, e - mb);
}

bool tt_close(double got, double want, tc_dtype dt, double tol) {
  if (isnan(want)) return isnan(got);
  if (isnan(got)) return false;
  if (tol == 0 || isinf(want) || isinf(got)) return got == want && signbit(got) == signbit(want);
  if (want == 0 && got == 0) return signbit(got) == signbit(want);
  return fabs(got - want) <= tol * tt_ulp(want, dt);
}

double tt_round_half_even(double x) {
  if (!isfinite(x)) return x;
  double f = floor(x), d = x - f;   /* exact: d in [0, 1) */
  double r;
  if (d > 0.5) r = f + 1;
  else if (d < 0.5) r = f;
  else r = fmod(f, 2) == 0 ? f : f + 1;
  return r == 0 ? copysign(0.0, x) : r;
}

/* ---- raw element access ---- */
double tt_f16_bits_to_f64(uint16_t b) {
  _Float16 h;
  memcpy(&h, &b, 2);
  return (double)h;
}

double tt_bf16_bits_to_f64(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return (double)f;
}

int64_t tt_get_i(tc_dtype dt, const void *buf, int64_t i) {
  const char *p = (const char *)buf;
  switch (dt) {
  case TC_DT_BOOL: { uint8_t v; memcpy(&v, p + i, 1); return v; }
  case TC_DT_I8: { int8_t v; memcpy(&v, p + i, 1); return v; }
  case TC_DT_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case TC_DT_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case TC_DT_I64: case TC_DT_U64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
  case TC_DT_U8: { uint8_t v; memcpy(&v, p + i, 1); return v; }
  case TC_DT_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case TC_DT_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  default: cr_assert_fail("tt_get_i on %s", tt_name(dt)); return 0;
  }
}

double tt_get_f(tc_dtype dt, const void *buf, int64_t i) {
  const char *p = (const char *)buf;
  switch (dt) {
  case TC_DT_BF16: { uint16_t b; memcpy(&b, p + 2 * i, 2); return tt_bf16_bits_to_f64(b); }
  case TC_DT_F16: { uint16_t b; memcpy(&b, p + 2 * i, 2); return tt_f16_bits_to_f64(b); }
  case TC_DT_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
  case TC_DT_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
  default: cr_assert_fail("tt_get_f on %s", tt_name(dt)); return 0;
  }
}

void tt_put_i(tc_dtype dt, void *buf, int64_t i, int64_t v) {
  char *p = (char *)buf;
  uint64_t u = (uint64_t)v;
  switch (dt) {
  case TC_DT_BOOL: { uint8_t b = v != 0; memcpy(p + i, &b, 1); break; }
  case TC_DT_I8: case TC_DT_U8: { uint8_t b = (uint8_t)u; memcpy(p + i, &b, 1); break; }
  case TC_DT_I16: case TC_DT_U16: { uint16_t b = (uint16_t)u; memcpy(p + 2 * i, &b, 2); break; }
  case TC_DT_I32: case TC_DT_U32: { uint32_t b = (uint32_t)u; memcpy(p + 4 * i, &b, 4); break; }
  case TC_DT_I64: case TC_DT_U64: memcpy(p + 8 * i, &u, 8); break;
  default: cr_assert_fail("tt_put_i on %s", tt_name(dt));
  }
}

void tt_put_f(tc_dtype dt, void *buf, int64_t i, double v) {
  char *p = (char *)buf;
  double r = tt_round(v, dt);
  switch (dt) {
  case TC_DT_BF16: {
    uint16_t b;
    if (isnan(r)) b = signbit(r) ? 0xffc0 : 0x7fc0;
    else { float f = (float)r; uint32_t u; memcpy(&u, &f, 4); b = (uint16_t)(u >> 16); }
    memcpy(p + 2 * i, &b, 2);
    break;
  }
  case TC_DT_F16: { _Float16 h = (_Float16)r; memcpy(p + 2 * i, &h, 2); break; }
  case TC_DT_F32: { float f = (float)r; memcpy(p + 4 * i, &f, 4); break; }
  case TC_DT_F64: memcpy(p + 8 * i, &r, 8); break;
  default: cr_assert_fail("tt_put_f on %s", tt_name(dt));
  }
}

/* ---- tensors ---- */
tc_err tt_err(void) {
  tc_err e;
  tc_err_clear(&e);
  return e;
}

const char *tt_name(tc_dtype dt) { return tc_dtype_name(dt); }

tc_tensor *tt_tensor(tc_dtype dt, int ndim, const int64_t *shape, const int64_t *iv, const double *fv) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  size_t esize = (size_t)tt_bits(dt) / 8;
  if (esize == 0) esize = 1;
  char *buf = malloc((size_t)n * esize + 1);
  cr_assert_not_null(buf);
  for (int64_t i = 0; i < n; i++) {
    if (tt_is_flt(dt)) tt_put_f(dt, buf, i, fv[i]);
    else tt_put_i(dt, buf, i, iv[i]);
  }
  tc_err err = tt_err();
  tc_tensor *t = tc_tensor_from_host(dt, ndim, shape, buf, &err);
  free(buf);
  cr_assert_not_null(t, "tc_tensor_from_host(%s): %s", tt_name(dt), tt_msg(&err));
  return t;
}

tc_tensor *tt_ivec(tc_dtype dt, int64_t n, const int64_t *v) { return tt_tensor(dt, 1, &n, v, NULL); }
tc_tensor *tt_fvec(tc_dtype dt, int64_t n, const double *v) { return tt_tensor(dt, 1, &n, NULL, v); }
tc_tensor *tt_iscalar(tc_dtype dt, int64_t v) { return tt_tensor(dt, 0, NULL, &v, NULL); }
tc_tensor *tt_fscalar(tc_dtype dt, double v) { return tt_tensor(dt, 0, NULL, NULL, &v); }

int64_t tt_read(tc_tensor *t, int64_t *iv, double *fv) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  size_t esize = tc_dtype_size(t->dtype);
  char *buf = malloc((size_t)n * esize + 1);
  cr_assert_not_null(buf);
  tc_err err = tt_err();
  cr_assert_eq(tc_tensor_to_host(t, buf, &err), 0, "tc_tensor_to_host: %s", tt_msg(&err));
  for (int64_t i = 0; i < n; i++) {
    if (tt_is_flt(t->dtype)) { if (fv) fv[i] = tt_get_f(t->dtype, buf, i); }
    else if (iv) iv[i] = tt_get_i(t->dtype, buf, i);
  }
  free(buf);
  return n;
}

/* ---- edge values ---- */
int tt_edges_i(tc_dtype dt, int64_t *v) {
  int n = 0;
  if (dt == TC_DT_BOOL) { v[n++] = 0; v[n++] = 1; return n; }
  int64_t lo = tt_min(dt), hi = tt_max(dt);
  int bits = tt_bits(dt);
  const int64_t small[] = {0, 1, -1, 2, -2, 3, -3, 5, -7, 7, 10, -10, 13};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) v[n++] = small[i];
  v[n++] = lo; v[n++] = lo + 1; v[n++] = lo + 2; v[n++] = hi; v[n++] = hi - 1;
  v[n++] = lo / 2; v[n++] = hi / 2; v[n++] = hi / 2 + 1; v[n++] = lo / 2 - 1;
  v[n++] = bits - 1; v[n++] = bits; v[n++] = bits + 1;
  /* a few arbitrary values of the full width */
  uint64_t s = 0x1234u + (uint64_t)bits;
  for (int i = 0; i < 6; i++) v[n++] = tt_wrap((__int128)(int64_t)tt_rand(&s), bits);
  return n;
}

int tt_edges_f(tc_dtype dt, double *v) {
  int n = 0;
  const double base[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 7.0,
                         0.1, -0.3, 1e-3, 100.0, -100.5, 1.0 / 3.0, 6.25, -1e4};
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) v[n++] = tt_round(base[i], dt);
  v[n++] = INFINITY; v[n++] = -INFINITY; v[n++] = NAN;
  double dm = tt_denorm_min(dt);
  int mb, emin, emax;
  tt_fmt(dt, &mb, &emin, &emax);
  v[n++] = dm; v[n++] = -dm;
  v[n++] = ldexp(1.0, emin) - dm;        /* largest subnormal */
  v[n++] = ldexp(1.0, emin);             /* smallest normal */
  v[n++] = -ldexp(1.0, emin);
  v[n++] = tt_maxf(dt); v[n++] = -tt_maxf(dt);
  uint64_t s = 0x5eedu + (uint64_t)dt;
  for (int i = 0; i < 6; i++) v[n++] = tt_round((tt_rand01(&s) - 0.5) * 200.0, dt);
  return n;
}

void tt_vals_edges(tt_vals *v, tc_dtype dt) {
  memset(v, 0, sizeof *v);
  v->dt = dt;
  v->n = tt_is_flt(dt) ? tt_edges_f(dt, v->f) : tt_edges_i(dt, v->i);
}

tc_tensor *tt_vals_tensor(const tt_vals *v, int ndim, const int64_t *shape, const int *idx) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  int64_t *iv = calloc((size_t)n + 1, sizeof *iv);
  double *fv = calloc((size_t)n + 1, sizeof *fv);
  for (int64_t k = 0; k < n; k++) { iv[k] = v->i[idx[k]]; fv[k] = v->f[idx[k]]; }
  tc_tensor *t = tt_tensor(v->dt, ndim, shape, iv, fv);
  free(iv);
  free(fv);
  return t;
}

/* ---- random ---- */
uint64_t tt_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t tt_xorshift(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

double tt_rand01(uint64_t *state) { return (double)(tt_rand(state) >> 11) * 0x1p-53; }

void tt_free_n(tc_tensor *const *ts, size_t n) {
  for (size_t i = 0; i < n; i++) tc_tensor_free(ts[i]);
}
