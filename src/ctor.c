/* Constructors (SPEC 5.3): filled tensors (a COPY from a broadcast 0-d
 * value), ranges (TC_CALL_RANGE) and counter-based random numbers
 * (TC_CALL_RANDOM, src/philox.h). */
#include <math.h>
#include <stdio.h>
#include "internal.h"

static tc_tensor *full_impl(tc_op op, int ndim, const int64_t *shape, tc_tensor *value, int dtype, tc_err *err) {
  tc_dtype dt = dtype < 0 ? value->dtype : (tc_dtype)dtype;
  if (tc_check_supported(op, dt, err)) return NULL;
  tc_tensor *v = tc_value_as(value, dt, op, err), *out = NULL;
  if (v) out = tc_tensor_new(dt, ndim, shape, err);
  if (out && tc_copy_into(out, v, err) != 0) { tc_tensor_free(out); out = NULL; }
  tc_tensor_free(v);
  if (!out) tc_annotate(err, op, (int)dt);
  return out;
}

tc_tensor *tc_full(int ndim, const int64_t *shape, tc_tensor *value, int dtype, tc_err *err) {
  return full_impl(TC_OP_FULL, ndim, shape, value, dtype, err);
}

static tc_tensor *filled(tc_op op, int ndim, const int64_t *shape, int64_t v, tc_dtype dt, tc_err *err) {
  tc_tensor *s = tc_scalar_i64(v, true, err);
  tc_tensor *out = s ? full_impl(op, ndim, shape, s, (int)dt, err) : NULL;
  tc_tensor_free(s);
  return out;
}

tc_tensor *tc_zeros(int ndim, const int64_t *shape, tc_dtype dt, tc_err *err) {
  return filled(TC_OP_ZEROS, ndim, shape, 0, dt, err);
}

tc_tensor *tc_ones(int ndim, const int64_t *shape, tc_dtype dt, tc_err *err) {
  return filled(TC_OP_ONES, ndim, shape, 1, dt, err);
}

static tc_tensor *run_range(tc_op op, tc_call *c, int64_t n, tc_err *err) {
  tc_tensor *out = tc_tensor_new(c->dtype, 1, &n, err);
  if (out && n > 0) {
    c->kind = TC_CALL_RANGE;
    c->op = op;
    c->out = out;
    if (tc_run_call(c, err) != 0) { tc_tensor_free(out); out = NULL; }
  }
  if (!out) tc_annotate(err, op, (int)c->dtype);
  return out;
}

tc_tensor *tc_arange(tc_tensor *start, tc_tensor *stop, tc_tensor *step, int dtype, tc_err *err) {
  const tc_op op = TC_OP_ARANGE;
  tc_tensor *zero = NULL;
  if (!stop) {
    stop = start;
    start = zero = tc_scalar_i64(0, true, err);
    if (!zero) return NULL;
  }
  tc_tensor *args[3] = {start, stop, step};
  const char *names[3] = {"start", "stop", "step"};
  bool ints = true;
  tc_tensor *out = NULL;
  for (int i = 0; i < 3; i++) {
    if (!args[i]) continue;
    if (args[i]->ndim != 0 || args[i]->dtype == TC_DT_BOOL) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)args[i]->dtype, "%s must be a single number", names[i]);
      goto done;
    }
    ints &= tc_dtype_class(args[i]->dtype) == TC_CLASS_INT;
  }
  tc_dtype dt = dtype >= 0 ? (tc_dtype)dtype : ints ? TC_DT_I64 : tc_default_float();
  if (tc_check_supported(op, dt, err)) goto done;
  tc_call c = {.dtype = dt};
  if (tc_dtype_class(dt) == TC_CLASS_INT) {
    if (!ints) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "float bounds with the integer dtype %s (round them first)",
                 tc_dtype_name(dt));
      goto done;
    }
    int64_t a, b, s = 1;
    if (tc_scalar_to_i64(start, &a, err) || tc_scalar_to_i64(stop, &b, err) || (step && tc_scalar_to_i64(step, &s, err)))
      goto done;
    if (s == 0) { tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "step must not be zero"); goto done; }
    /* the count, in unsigned arithmetic so that no difference overflows */
    uint64_t n = 0;
    if (s > 0 && b > a) {
      uint64_t d = (uint64_t)b - (uint64_t)a;
      n = d / (uint64_t)s + (d % (uint64_t)s != 0);
    } else if (s < 0 && a > b) {
      uint64_t d = (uint64_t)a - (uint64_t)b, us = 0 - (uint64_t)s;
      n = d / us + (d % us != 0);
    }
    if (n > (uint64_t)INT64_MAX) {
      tc_err_set(err, TC_E_OOM, (int)op, (int)dt, "a range of %llu elements is too large", (unsigned long long)n);
      goto done;
    }
    c.istart = a;
    c.istep = s;
    out = run_range(op, &c, (int64_t)n, err);
  } else {
    double a, b, s = 1;
    if (tc_scalar_to_f64(start, &a, err) || tc_scalar_to_f64(stop, &b, err) || (step && tc_scalar_to_f64(step, &s, err)))
      goto done;
    if (s == 0) { tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "step must not be zero"); goto done; }
    if (!isfinite(a) || !isfinite(b) || !isfinite(s)) {
      tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "start, stop and step must be finite");
      goto done;
    }
    double len = ceil((b - a) / s);
    if (!(len > 0)) len = 0;
    if (len > 9.2e18) {
      tc_err_set(err, TC_E_OOM, (int)op, (int)dt, "a range of %g elements is too large", len);
      goto done;
    }
    /* As NumPy: element i is start + i * delta with delta = (start + step) - start. */
    c.fstart = a;
    c.fstep = (a + s) - a;
    out = run_range(op, &c, (int64_t)len, err);
  }
done:
  tc_tensor_free(zero);
  return out;
}

tc_tensor *tc_linspace(double start, double stop, int64_t num, tc_dtype dt, tc_err *err) {
  const tc_op op = TC_OP_LINSPACE;
  if (tc_check_supported(op, dt, err)) return NULL;
  if (num < 0) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "num must not be negative, not %lld", (long long)num);
    return NULL;
  }
  /* As NumPy: element i is start + i * step, and the last one is stop. */
  tc_call c = {.dtype = dt, .fstart = start, .fstop = stop, .endpoint = num > 1};
  c.fstep = num > 1 ? (stop - start) / (double)(num - 1) : 0;
  return run_range(op, &c, num, err);
}

tc_tensor *tc_eye(int64_t n, int64_t m, int64_t k, tc_dtype dt, tc_err *err) {
  const tc_op op = TC_OP_EYE;
  if (n < 0 || m < 0) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "n and m must not be negative");
    return NULL;
  }
  int64_t shape[2] = {n, m};
  tc_tensor *out = filled(op, 2, shape, 0, dt, err);
  if (!out) return NULL;
  int64_t len = k >= 0 ? (m - k < n ? m - k : n) : (n + k < m ? n + k : m);
  if (len > 0) {
    int64_t off = k >= 0 ? k : -k * m, stride = m + 1;
    tc_tensor *d = tc_view(out, 1, &len, &stride, off, err), *one = tc_scalar_i64(1, true, err);
    int rc = d && one ? tc_copy_into(d, one, err) : -1;
    tc_tensor_free(d);
    tc_tensor_free(one);
    if (rc != 0) { tc_tensor_free(out); tc_annotate(err, op, (int)dt); return NULL; }
  }
  return out;
}

/* The generator's call: element i of a fresh tensor of dtype dt; for
 * integers lo + mulhi(x, range), in 64-bit wrapping arithmetic. */
static tc_tensor *random_run(tc_op op, tc_dist dist, tc_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
                             int64_t lo, uint64_t range, tc_err *err) {
  tc_tensor *out = tc_tensor_new(dt, ndim, shape, err);
  if (out && tc_numel(out) > 0) {
    tc_call c = {.kind = TC_CALL_RANDOM, .op = op, .dtype = dt, .out = out, .dist = dist, .seed = seed, .rlo = lo,
                 .rrange = range};
    if (tc_run_call(&c, err) != 0) { tc_tensor_free(out); out = NULL; }
  }
  if (!out) tc_annotate(err, op, (int)dt);
  return out;
}

tc_tensor *tc_random(tc_dist dist, int ndim, const int64_t *shape, uint64_t seed, int64_t lo, int64_t hi,
                     tc_err *err) {
  tc_op op = dist == TC_DIST_UNIFORM ? TC_OP_RAND : dist == TC_DIST_NORMAL ? TC_OP_RANDN : TC_OP_RANDINT;
  tc_dtype dt = dist == TC_DIST_INT ? TC_DT_I64 : TC_DT_F64;
  if (tc_check_supported(op, dt, err)) return NULL;
  if (dist == TC_DIST_INT && hi <= lo) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "needs lo < hi, got lo=%lld and hi=%lld", (long long)lo, (long long)hi);
    return NULL;
  }
  tc_tensor *r = random_run(op, dist, dt, ndim, shape, seed, lo, (uint64_t)hi - (uint64_t)lo, err);
  if (!r || dt != TC_DT_F64 || tc_default_float() == TC_DT_F64) return r;
  /* the semantics' default float (torch: f32): the same draws, rounded to it */
  tc_tensor *f = tc_cast(r, tc_default_float(), err);
  tc_tensor_free(r);
  return f;
}

/* A bound of randint: a 0-d integer tensor's value, exact (a u64 above the
 * i64 maximum included). */
__extension__ typedef __int128 i128;
static int rand_bound(tc_tensor *t, const char *name, tc_dtype dt, i128 *v, tc_err *err) {
  const tc_op op = TC_OP_RANDINT;
  if (t->ndim != 0 || tc_dtype_class(t->dtype) != TC_CLASS_INT)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "%s must be an integer", name);
  int64_t x;   /* the bits; u64 read back as unsigned below */
  if (tc_scalar_to_i64(t, &x, err) != 0) return -1;
  *v = tc_dtype_is_unsigned(t->dtype) ? (i128)(uint64_t)x : (i128)x;
  return 0;
}

static void fmt_i128(char *b, size_t n, i128 v) {
  if (v < 0) snprintf(b, n, "%lld", (long long)v);
  else snprintf(b, n, "%llu", (unsigned long long)v);
}

tc_tensor *tc_randint(tc_tensor *lo_t, tc_tensor *hi_t, int ndim, const int64_t *shape, uint64_t seed, tc_dtype dt,
                      tc_err *err) {
  const tc_op op = TC_OP_RANDINT;
  if (tc_dtype_class(dt) != TC_CLASS_INT && dt != TC_DT_BOOL) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "dtype must be an integer dtype or bool, not %s", tc_dtype_name(dt));
    return NULL;
  }
  if (tc_check_supported(op, dt, err)) return NULL;
  i128 lo, hi;
  if (rand_bound(lo_t, "lo", dt, &lo, err) != 0 || rand_bound(hi_t, "hi", dt, &hi, err) != 0) return NULL;
  char sl[24], sh[24];
  fmt_i128(sl, sizeof sl, lo);
  fmt_i128(sh, sizeof sh, hi);
  if (hi <= lo) {
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "needs lo < hi, got lo=%s and hi=%s", sl, sh);
    return NULL;
  }
  int b = dt == TC_DT_BOOL ? 1 : tc_dtype_bits(dt);
  bool u = dt == TC_DT_BOOL || tc_dtype_is_unsigned(dt);
  i128 min = u ? 0 : -((i128)1 << (b - 1)), max = u ? ((i128)1 << b) - 1 : ((i128)1 << (b - 1)) - 1;
  if (lo < min || hi - 1 > max) {
    char smin[24], smax[24];
    fmt_i128(smin, sizeof smin, min);
    fmt_i128(smax, sizeof smax, max);
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "[lo, hi) = [%s, %s) must lie in %s's range [%s, %s]", sl, sh,
               tc_dtype_name(dt), smin, smax);
    return NULL;
  }
  /* the numbers of the i64 call (bit for bit, read as u64 for a u64), in dt */
  tc_tensor *r = random_run(op, TC_DIST_INT, TC_DT_I64, ndim, shape, seed, (int64_t)(uint64_t)lo,
                            (uint64_t)(hi - lo), err);
  if (!r || dt == TC_DT_I64) return r;
  tc_tensor *c = tc_cast(r, dt, err);
  tc_tensor_free(r);
  if (!c) tc_annotate(err, op, (int)dt);
  return c;
}
