/* JSON input (SPEC 14): one tensor from tcalc's own JSON output
 * ({"dtype":"f16","shape":[2],"data":[0.1,"nan"]}, with or without its
 * "ok":true) or from a plain JSON number or array, read as a literal is.
 *
 * cJSON reads every number as a double, which loses integers beyond 2^53
 * and rounds f32 text twice; this parser keeps each number's text and
 * converts it once, into the dtype: integers exactly, f32 with strtof, f16
 * and bf16 from strtod's double as the printer's read-back test does (so
 * that what tcalc prints reads back to the same bits). It reads the text in
 * three walks: the syntax of the whole document (nesting at most
 * JSON_MAX_DEPTH deep), the data against the shape (or the shape and the
 * leaf kinds from the data, for a plain array), then the values into the
 * tensor in chunks, so the only large allocation is the tensor's own,
 * checked against the memory limit. Every failure names the line and
 * column in the JSON text. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define JSON_MAX_DEPTH 64
#define JSON_CHUNK ((size_t)1 << 20)

enum { LEAF_BOOL = 1, LEAF_INT = 2, LEAF_FLT = 4 };

typedef struct {
  const char *s;             /* NUL-terminated at n */
  size_t n;
  tc_op op;
  tc_err *err;
  /* the data walks */
  bool learn;                /* a plain array: the shape comes from the data */
  int ndim;                  /* -1 until a plain array's first leaf */
  int64_t shape[TC_MAX_DIMS];
  bool known[TC_MAX_DIMS + 1];
  unsigned kinds;            /* LEAF_* seen */
  int64_t leaves;
  /* the converting walk: values go to buf, then into the tensor */
  tc_tensor *t;
  tc_dtype dt;
  unsigned char *buf;
  size_t fill, chunk;
  uint64_t written;
} jp;

static int jfail(jp *p, tc_code code, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int jfail(jp *p, tc_code code, size_t at, const char *fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  long long line = 1, col = 1;
  for (size_t i = 0; i < at && i < p->n; i++) {
    if (p->s[i] == '\n') { line++; col = 1; }
    else col++;
  }
  return tc_err_set(p->err, code, (int)p->op, p->t ? (int)p->dt : -1, "%s at line %lld, column %lld of the JSON text",
                    why, line, col);
}

static size_t ws(const jp *p, size_t i) {
  while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t' || p->s[i] == '\n' || p->s[i] == '\r')) i++;
  return i;
}

/* What is at i, for messages. */
static const char *found(const jp *p, size_t i) {
  if (i >= p->n) return "the end of the text";
  switch (p->s[i]) {
  case '[': return "an array";
  case '{': return "an object";
  case '"': return "a string";
  case 't': case 'f': return "a bool";
  case 'n': return "null";
  default: return "a number";
  }
}

static bool digit(char c) { return c >= '0' && c <= '9'; }

/* A JSON number at *i (RFC 8259's grammar); *integer: no fraction or exponent. */
static int scan_number(jp *p, size_t *i, bool *integer) {
  size_t k = *i;
  const char *s = p->s;
  if (k < p->n && s[k] == '-') k++;
  if (k >= p->n || !digit(s[k])) return jfail(p, TC_E_BAD_ARG, *i, "malformed number");
  if (s[k] == '0') {
    k++;
    if (k < p->n && digit(s[k])) return jfail(p, TC_E_BAD_ARG, *i, "a number with a leading zero");
  } else {
    while (k < p->n && digit(s[k])) k++;
  }
  *integer = true;
  if (k < p->n && s[k] == '.') {
    *integer = false;
    if (++k >= p->n || !digit(s[k])) return jfail(p, TC_E_BAD_ARG, *i, "malformed number (a digit must follow '.')");
    while (k < p->n && digit(s[k])) k++;
  }
  if (k < p->n && (s[k] == 'e' || s[k] == 'E')) {
    *integer = false;
    k++;
    if (k < p->n && (s[k] == '+' || s[k] == '-')) k++;
    if (k >= p->n || !digit(s[k])) return jfail(p, TC_E_BAD_ARG, *i, "malformed number (a digit must follow 'e')");
    while (k < p->n && digit(s[k])) k++;
  }
  *i = k;
  return 0;
}

/* A JSON string at *i (the opening quote); *i ends past the closing one. */
static int scan_string(jp *p, size_t *i) {
  size_t k = *i + 1;
  while (k < p->n && p->s[k] != '"') {
    unsigned char c = (unsigned char)p->s[k];
    if (c < 0x20) return jfail(p, TC_E_BAD_ARG, k, "a control character in a string");
    if (c == '\\') {
      char e = k + 1 < p->n ? p->s[k + 1] : 0;
      if (e == 'u') {
        for (int h = 2; h < 6; h++) {
          char x = k + (size_t)h < p->n ? p->s[k + (size_t)h] : 0;
          if (!digit(x) && !((x | 0x20) >= 'a' && (x | 0x20) <= 'f'))
            return jfail(p, TC_E_BAD_ARG, k, "malformed \\u escape in a string");
        }
        k += 6;
        continue;
      }
      if (!e || !strchr("\"\\/bfnrt", e)) return jfail(p, TC_E_BAD_ARG, k, "unknown escape in a string");
      k += 2;
      continue;
    }
    k++;
  }
  if (k >= p->n) return jfail(p, TC_E_BAD_ARG, *i, "a string without its closing quote");
  *i = k + 1;
  return 0;
}

static bool word_at(const jp *p, size_t i, const char *w) {
  size_t n = strlen(w);
  return p->n - i >= n && !memcmp(p->s + i, w, n);
}

/* Walk 1: one JSON value of any kind at *i, its syntax checked. */
static int skip_value(jp *p, size_t *i, int depth) {
  size_t k = ws(p, *i);
  if (k >= p->n) return jfail(p, TC_E_BAD_ARG, k, "the text ends where a value should be");
  char c = p->s[k];
  if (c == '[' || c == '{') {
    if (depth >= JSON_MAX_DEPTH) return jfail(p, TC_E_BAD_ARG, k, "arrays and objects nested more than %d deep", JSON_MAX_DEPTH);
    char close = c == '[' ? ']' : '}';
    k = ws(p, k + 1);
    if (k < p->n && p->s[k] == close) { *i = k + 1; return 0; }
    for (;;) {
      if (c == '{') {
        k = ws(p, k);
        if (k >= p->n || p->s[k] != '"') return jfail(p, TC_E_BAD_ARG, k, "expected a key in quotes, found %s", found(p, k));
        if (scan_string(p, &k) != 0) return -1;
        k = ws(p, k);
        if (k >= p->n || p->s[k] != ':') return jfail(p, TC_E_BAD_ARG, k, "expected ':' after the key");
        k++;
      }
      if (skip_value(p, &k, depth + 1) != 0) return -1;
      k = ws(p, k);
      if (k < p->n && p->s[k] == ',') { k++; continue; }
      if (k < p->n && p->s[k] == close) { *i = k + 1; return 0; }
      return jfail(p, TC_E_BAD_ARG, k, "expected ',' or '%c', found %s", close, found(p, k));
    }
  }
  if (c == '"') { *i = k; return scan_string(p, i); }
  for (const char *const *w = (const char *const[]){"true", "false", "null", "NaN", "Infinity", "-Infinity", NULL}; *w;
       w++)
    if (word_at(p, k, *w)) { *i = k + strlen(*w); return 0; }
  if (c == '-' || digit(c)) {
    bool integer;
    *i = k;
    return scan_number(p, i, &integer);
  }
  return jfail(p, TC_E_BAD_ARG, k, "expected a JSON value");
}

/* ---- leaves ---- */
static int leaf_flush(jp *p) {
  if (!p->fill) return 0;
  int rc = tc_engines[p->t->storage->engine]->upload(tc_tensor_data(p->t) + p->written, p->buf, p->fill, p->err);
  p->written += p->fill;
  p->fill = 0;
  return rc;
}

/* Stores the integer (neg, mag) in dtype dt's storage at out. */
static int store_int(jp *p, size_t at, size_t len, bool neg, uint64_t mag, void *out) {
  int bits = tc_dtype_bits(p->dt);
  bool is_signed = !tc_dtype_is_unsigned(p->dt);
  uint64_t max = is_signed ? ((uint64_t)1 << (bits - 1)) - 1 : bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  uint64_t lim = neg ? (is_signed ? max + 1 : 0) : max;
  if (mag > lim)
    return jfail(p, TC_E_LITERAL, at, "%.*s does not fit %s", (int)(len > 40 ? 40 : len), p->s + at,
                 tc_dtype_name(p->dt));
  uint64_t v = neg ? (uint64_t)0 - mag : mag;   /* two's complement */
  switch (tc_dtype_size(p->dt)) {
  case 1: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
  case 2: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
  default: memcpy(out, &v, 8); break;
  }
  return 0;
}

/* Stores the float whose text is at s (a JSON number, or nan/inf/-inf). */
static int store_float(jp *p, size_t at, const char *s, bool finite_text, void *out) {
  double d = 0;
  bool inf = false;
  switch (p->dt) {
  case TC_DT_F32: { float x = strtof(s, NULL); inf = isinf(x); memcpy(out, &x, 4); break; }
  case TC_DT_F16: { d = strtod(s, NULL); tc_f16 x = tc_f64_to_f16(d); inf = isinf(tc_f16_to_f32(x)); memcpy(out, &x, 2); break; }
  case TC_DT_BF16: { d = strtod(s, NULL); tc_bf16 x = tc_f64_to_bf16(d); inf = isinf(tc_bf16_to_f32(x)); memcpy(out, &x, 2); break; }
  default: d = strtod(s, NULL); inf = isinf(d); memcpy(out, &d, 8); break;
  }
  if (inf && finite_text) {
    size_t len = strspn(s, "+-0123456789.eE");
    return jfail(p, TC_E_LITERAL, at, "%.*s does not fit %s", (int)(len > 40 ? 40 : len), s, tc_dtype_name(p->dt));
  }
  return 0;
}

/* One leaf at *i: classified (walk 2) or stored (walk 3). */
static int leaf(jp *p, size_t *i) {
  size_t at = *i;
  const char *s = p->s + at;
  unsigned kind;
  const char *special = NULL;
  bool integer = false;
  if (word_at(p, at, "true") || word_at(p, at, "false")) {
    kind = LEAF_BOOL;
    *i += *s == 't' ? 4 : 5;
  } else if (*s == '"') {
    if (scan_string(p, i) != 0) return -1;
    size_t len = *i - at - 2;
    for (const char *const *w = (const char *const[]){"nan", "inf", "-inf", NULL}; *w; w++)
      if (strlen(*w) == len && !memcmp(s + 1, *w, len)) special = *w;
    if (!special) return jfail(p, TC_E_BAD_ARG, at, "a string is not a number (only \"nan\", \"inf\" and \"-inf\" are)");
    kind = LEAF_FLT;
  } else if (word_at(p, at, "NaN") || word_at(p, at, "Infinity") || word_at(p, at, "-Infinity")) {
    /* Python's json writes these by default (allow_nan): read as nan, inf and -inf */
    special = *s == 'N' ? "nan" : *s == '-' ? "-inf" : "inf";
    *i += *s == 'N' ? 3 : *s == '-' ? 9 : 8;
    kind = LEAF_FLT;
  } else if (*s == '-' || digit(*s)) {
    if (scan_number(p, i, &integer) != 0) return -1;
    kind = integer ? LEAF_INT : LEAF_FLT;
  } else if (*s == 'n') {
    return jfail(p, TC_E_BAD_ARG, at, "null is not a number (tcalc writes NaN as \"nan\")");
  } else {
    return jfail(p, TC_E_BAD_ARG, at, "expected a number, found %s", found(p, at));
  }
  p->leaves++;
  if ((p->leaves & 0xffff) == 0 && tc_interrupt_flag)
    return tc_err_set(p->err, TC_E_INTERRUPTED, (int)p->op, -1, "interrupted");
  if (!p->t) { p->kinds |= kind; return 0; }
  /* walk 3: into the dtype */
  unsigned char *out = p->buf + p->fill;
  tc_class c = tc_dtype_class(p->dt);
  int rc;
  if (c == TC_CLASS_BOOL) {
    if (kind != LEAF_BOOL) return jfail(p, TC_E_BAD_ARG, at, "expected true or false for bool, found %s", found(p, at));
    *out = *s == 't';
    rc = 0;
  } else if (kind == LEAF_BOOL) {
    if (!p->learn) return jfail(p, TC_E_BAD_ARG, at, "expected a number for %s, found a bool", tc_dtype_name(p->dt));
    rc = c == TC_CLASS_FLT ? store_float(p, at, *s == 't' ? "1" : "0", true, out)
                           : store_int(p, at, 1, false, *s == 't', out);
  } else if (c == TC_CLASS_FLT) {
    rc = store_float(p, at, special ? special : s, !special, out);
  } else {
    if (kind != LEAF_INT) return jfail(p, TC_E_BAD_ARG, at, "%.*s is not an integer (dtype %s)", (int)(*i - at > 40 ? 40 : *i - at), s, tc_dtype_name(p->dt));
    bool neg = *s == '-';
    uint64_t mag = 0;
    bool over = false;
    for (const char *q = s + neg; digit(*q); q++)
      over |= __builtin_mul_overflow(mag, 10, &mag) || __builtin_add_overflow(mag, (uint64_t)(*q - '0'), &mag);
    rc = store_int(p, at, *i - at, neg, over ? UINT64_MAX : mag, out);
  }
  if (rc != 0) return -1;
  p->fill += tc_dtype_size(p->dt);
  return p->fill == p->chunk ? leaf_flush(p) : 0;
}

/* Walks 2 and 3: the data at *i, at dimension d, against the shape (or, when
 * learning, setting it from the first complete array at each depth). */
static int walk(jp *p, size_t *i, int d) {
  char sh[256];
  size_t k = ws(p, *i);
  bool array = k < p->n && p->s[k] == '[';
  if (p->learn && p->ndim < 0 && !array) p->ndim = d;
  if (!p->learn || p->ndim >= 0) {
    if (!array && d < p->ndim) {
      tc_format_dims(sh, sizeof sh, p->ndim, p->shape);
      return p->learn ? jfail(p, TC_E_BAD_ARG, k, "ragged array: a number where other rows have an array")
                      : jfail(p, TC_E_BAD_ARG, k, "data does not match shape %s: expected an array, found %s", sh, found(p, k));
    }
    if (array && d >= p->ndim) {
      tc_format_dims(sh, sizeof sh, p->ndim, p->shape);
      return p->learn ? jfail(p, TC_E_BAD_ARG, k, "ragged array: an array where other rows have a number")
                      : jfail(p, TC_E_BAD_ARG, k, "data does not match shape %s: expected a single value, found an array", sh);
    }
  }
  if (!array) { *i = k; return leaf(p, i); }
  if (d >= TC_MAX_DIMS) return jfail(p, TC_E_BAD_ARG, k, "more than %d dimensions", TC_MAX_DIMS);
  int64_t count = 0;
  k = ws(p, k + 1);
  if (k < p->n && p->s[k] == ']') {
    k++;
    if (p->learn && p->ndim < 0) p->ndim = d + 1;
    else if (p->learn && p->ndim != d + 1) return jfail(p, TC_E_BAD_ARG, k - 1, "ragged array: an empty array where other rows are deeper");
  } else {
    for (;;) {
      if (!p->learn && count == p->shape[d]) {
        tc_format_dims(sh, sizeof sh, p->ndim, p->shape);
        return jfail(p, TC_E_BAD_ARG, k, "data does not match shape %s: more than %lld values in dimension %d", sh,
                     (long long)p->shape[d], d);
      }
      if (walk(p, &k, d + 1) != 0) return -1;
      count++;
      k = ws(p, k);
      if (p->s[k] == ',') { k = ws(p, k + 1); continue; }
      k++;   /* ']': the syntax was checked */
      break;
    }
  }
  if (p->learn && !p->known[d]) {
    p->known[d] = true;
    p->shape[d] = count;
  } else if (count != p->shape[d]) {
    if (p->learn) return jfail(p, TC_E_BAD_ARG, k - 1, "ragged array: every row must have the same length");
    tc_format_dims(sh, sizeof sh, p->ndim, p->shape);
    return jfail(p, TC_E_BAD_ARG, k - 1, "data does not match shape %s: %lld values in dimension %d, not %lld", sh,
                 (long long)count, d, (long long)p->shape[d]);
  }
  *i = k;
  return 0;
}

/* ---- tcalc's object: "dtype", "shape", "data" (and "ok") ---- */
typedef struct { size_t dtype, shape, data; bool has[3]; } fields;

static bool key_is(const jp *p, size_t at, size_t end, const char *name) {
  return end - at - 2 == strlen(name) && !memcmp(p->s + at + 1, name, end - at - 2);
}

static int read_object(jp *p, size_t k, fields *f) {
  memset(f, 0, sizeof *f);
  k = ws(p, k + 1);
  if (p->s[k] == '}') return jfail(p, TC_E_BAD_ARG, k, "an empty object (expected \"dtype\", \"shape\" and \"data\")");
  for (;;) {
    size_t key = ws(p, k), end = key;
    scan_string(p, &end);   /* the syntax was checked */
    size_t v = ws(p, ws(p, end) + 1);
    int slot = key_is(p, key, end, "dtype") ? 0 : key_is(p, key, end, "shape") ? 1 : key_is(p, key, end, "data") ? 2 : -1;
    if (slot >= 0) {
      if (f->has[slot]) return jfail(p, TC_E_BAD_ARG, key, "the key %.*s appears twice", (int)(end - key), p->s + key);
      f->has[slot] = true;
      *(slot == 0 ? &f->dtype : slot == 1 ? &f->shape : &f->data) = v;
    } else if (key_is(p, key, end, "ok")) {
      if (word_at(p, v, "false")) return jfail(p, TC_E_BAD_ARG, v, "this is an error report (\"ok\":false), not a tensor");
      if (!word_at(p, v, "true")) return jfail(p, TC_E_BAD_ARG, v, "\"ok\" must be true");
    } else {
      return jfail(p, TC_E_BAD_ARG, key, "unknown key %.*s (a tensor has \"dtype\", \"shape\" and \"data\")",
                   (int)(end - key > 40 ? 40 : end - key), p->s + key);
    }
    k = v;
    skip_value(p, &k, 1);
    k = ws(p, k);
    if (p->s[k] == '}') break;
    k++;
  }
  for (int s = 0; s < 3; s++)
    if (!f->has[s]) return jfail(p, TC_E_BAD_ARG, k, "the object lacks \"%s\"", s == 0 ? "dtype" : s == 1 ? "shape" : "data");
  return 0;
}

static int read_dtype(jp *p, size_t at) {
  size_t end = at;
  if (p->s[at] != '"') return jfail(p, TC_E_BAD_ARG, at, "\"dtype\" must be a string, not %s", found(p, at));
  scan_string(p, &end);
  char name[16];
  size_t len = end - at - 2;
  int dt = -1;
  if (len < sizeof name) {
    memcpy(name, p->s + at + 1, len);
    name[len] = 0;
    dt = tc_dtype_from_name(name);
  }
  if (dt < 0) return jfail(p, TC_E_BAD_ARG, at, "unknown dtype %.*s", (int)(len + 2 > 40 ? 40 : len + 2), p->s + at);
  p->dt = (tc_dtype)dt;
  return 0;
}

static int read_shape(jp *p, size_t at) {
  if (p->s[at] != '[') return jfail(p, TC_E_BAD_ARG, at, "\"shape\" must be an array of sizes, not %s", found(p, at));
  size_t k = ws(p, at + 1);
  p->ndim = 0;
  if (p->s[k] == ']') return 0;
  for (;;) {
    bool integer;
    size_t v = k;
    if (p->s[v] == '-' || !digit(p->s[v]) || scan_number(p, &k, &integer) != 0 || !integer)
      return jfail(p, TC_E_BAD_ARG, v, "a size in \"shape\" must be an integer >= 0");
    if (p->ndim == TC_MAX_DIMS) return jfail(p, TC_E_BAD_ARG, v, "\"shape\" has more than %d dimensions", TC_MAX_DIMS);
    int64_t n = 0;
    for (size_t q = v; q < k; q++)
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, p->s[q] - '0', &n))
        return jfail(p, TC_E_BAD_ARG, v, "a size in \"shape\" is too large");
    p->shape[p->ndim++] = n;
    k = ws(p, k);
    if (p->s[k] == ']') return 0;
    if (p->s[k] != ',') return jfail(p, TC_E_BAD_ARG, k, "expected ',' or ']' in \"shape\"");
    k = ws(p, k + 1);
  }
}

/* The tensor: allocated, then filled by walk 3. */
static tc_tensor *fill_tensor(jp *p, size_t data) {
  if (!tc_op_supported(p->op, p->dt, tc_get_engine())) { tc_unsupported(p->op, p->dt, p->err); return NULL; }
  tc_tensor *t = tc_tensor_new(p->dt, p->ndim, p->shape, p->err);
  if (!t) { tc_annotate(p->err, p->op, (int)p->dt); return NULL; }
  p->chunk = JSON_CHUNK - JSON_CHUNK % tc_dtype_size(p->dt);
  p->buf = tc_numel(t) ? malloc(p->chunk) : NULL;
  if (tc_numel(t) && !p->buf) {
    tc_tensor_free(t);
    tc_err_set(p->err, TC_E_OOM, (int)p->op, (int)p->dt, "allocation failed");
    return NULL;
  }
  p->t = t;
  p->leaves = 0;
  size_t k = data;
  int rc = walk(p, &k, 0);
  if (rc == 0) rc = leaf_flush(p);
  free(p->buf);
  if (rc != 0) { tc_tensor_free(t); return NULL; }
  return t;
}

tc_tensor *tc_from_json(const char *text, size_t len, tc_op op, tc_err *err) {
  jp p = {.s = text, .n = len, .op = op, .err = err, .ndim = -1};
  uint64_t limit = tc_get_max_memory();
  if (len > limit) {
    tc_err_set(err, TC_E_OOM, (int)op, -1, "the JSON text (%llu bytes) is larger than the memory limit (%llu bytes; :set max_memory)",
               (unsigned long long)len, (unsigned long long)limit);
    return NULL;
  }
  size_t k = 0;
  if (skip_value(&p, &k, 0) != 0) return NULL;
  k = ws(&p, k);
  if (k < len) { jfail(&p, TC_E_BAD_ARG, k, "text after the JSON value (one tensor is read)"); return NULL; }
  k = ws(&p, 0);
  size_t data = k;
  if (text[k] == '{') {
    fields f;
    if (read_object(&p, k, &f) != 0 || read_dtype(&p, f.dtype) != 0 || read_shape(&p, f.shape) != 0) return NULL;
    data = f.data;
  } else {
    p.learn = true;
  }
  size_t w = data;
  if (walk(&p, &w, 0) != 0) return NULL;
  if (p.learn) {   /* as a literal: bool, i64 or f64; a plain number is a weak scalar */
    p.dt = p.kinds == LEAF_BOOL ? TC_DT_BOOL : p.kinds & LEAF_FLT || !p.kinds ? TC_DT_F64 : TC_DT_I64;
  }
  tc_tensor *t = fill_tensor(&p, data);
  if (t && p.learn && p.ndim == 0 && p.dt != TC_DT_BOOL) t->weak = true;
  return t;
}
