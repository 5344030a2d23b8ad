/* Text and JSON printing of values. Tensors are copied to the host once and
 * formatted from there; integers are written exactly, never via a double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "engine.h"
#include "print.h"

/* ---- numbers ---- */
static bool reads_back(const char *s, double v, tc_dtype dt) {
  switch (dt) {
  case TC_DT_F32: return strtof(s, NULL) == (float)v;
  case TC_DT_F16: return tc_f64_to_f16(strtod(s, NULL)).bits == tc_f64_to_f16(v).bits;
  case TC_DT_BF16: return tc_f64_to_bf16(strtod(s, NULL)).bits == tc_f64_to_bf16(v).bits;
  default: return strtod(s, NULL) == v;
  }
}

void fmt_float(char *buf, size_t n, double v, tc_dtype dt, int precision) {
  if (isnan(v)) { snprintf(buf, n, "nan"); return; }
  if (isinf(v)) { snprintf(buf, n, v < 0 ? "-inf" : "inf"); return; }
  char e[40];
  int p;
  if (precision > 0) {
    p = precision > 17 ? 17 : precision;
    snprintf(e, sizeof e, "%.*e", p - 1, v);
  } else {
    /* The fewest significant digits that read back: if p digits do, so do
     * p + 1 (printf rounds correctly), so binary search between 1 and the
     * most a dtype ever needs (bf16 4, f16 5, f32 9, f64 17). */
    int lo = 1, hi = dt == TC_DT_BF16 ? 4 : dt == TC_DT_F16 ? 5 : dt == TC_DT_F32 ? 9 : 17;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      snprintf(e, sizeof e, "%.*e", mid - 1, v);
      if (reads_back(e, v, dt)) hi = mid;
      else lo = mid + 1;
    }
    p = lo;
    snprintf(e, sizeof e, "%.*e", p - 1, v);
  }
  /* e is [-]d[.ddd]e[+-]xx: take the digits and the exponent */
  const char *s = e;
  bool neg = *s == '-';
  if (neg) s++;
  char digits[24];
  int nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s != '.') digits[nd++] = *s;
  int exp10 = atoi(s + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  char out[64];
  int o = 0;
  if (neg) out[o++] = '-';
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 >= 0) {
      for (int i = 0; i <= exp10; i++) out[o++] = i < nd ? digits[i] : '0';
      out[o++] = '.';
      if (nd > exp10 + 1) for (int i = exp10 + 1; i < nd; i++) out[o++] = digits[i];
      else out[o++] = '0';
    } else {
      out[o++] = '0';
      out[o++] = '.';
      for (int i = 0; i < -exp10 - 1; i++) out[o++] = '0';
      for (int i = 0; i < nd; i++) out[o++] = digits[i];
    }
    out[o] = 0;
  } else {
    out[o++] = digits[0];
    if (nd > 1) {
      out[o++] = '.';
      for (int i = 1; i < nd; i++) out[o++] = digits[i];
    }
    snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
  }
  snprintf(buf, n, "%s", out);
}

/* Reads element i of host data as text. */
static void fmt_elem(char *buf, size_t n, const void *data, int64_t i, tc_dtype dt, int precision) {
  const char *p = (const char *)data + (size_t)i * tc_dtype_size(dt);
  switch (dt) {
  case TC_DT_BOOL: snprintf(buf, n, "%s", *(const uint8_t *)p ? "true" : "false"); return;
  case TC_DT_I8: snprintf(buf, n, "%d", *(const int8_t *)p); return;
  case TC_DT_I16: snprintf(buf, n, "%d", *(const int16_t *)(const void *)p); return;
  case TC_DT_I32: snprintf(buf, n, "%d", *(const int32_t *)(const void *)p); return;
  case TC_DT_I64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)(const void *)p); return;
  case TC_DT_BF16: fmt_float(buf, n, tc_bf16_to_f32(*(const tc_bf16 *)(const void *)p), dt, precision); return;
  case TC_DT_F16: fmt_float(buf, n, tc_f16_to_f32(*(const tc_f16 *)(const void *)p), dt, precision); return;
  case TC_DT_F32: fmt_float(buf, n, *(const float *)(const void *)p, dt, precision); return;
  case TC_DT_F64: fmt_float(buf, n, *(const double *)(const void *)p, dt, precision); return;
  case TC_DT_COUNT: break;
  }
  snprintf(buf, n, "?");
}

static void *host_copy(tc_tensor *t, tc_err *err) {
  size_t n = (size_t)tc_numel(t) * tc_dtype_size(t->dtype);
  void *h = malloc(n ? n : 1);
  if (!h) { tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing"); return NULL; }
  if (tc_tensor_to_host(t, h, err) != 0) { free(h); return NULL; }
  return h;
}

/* ---- text ---- */
#define EDGE 3
#define SUMMARY_THRESHOLD 1000

typedef struct tctx {
  FILE *f;
  const tc_tensor *t;
  const void *data;
  int64_t strides[TC_MAX_DIMS];   /* row-major strides of the host copy */
  bool summarise;
  int width, precision;
} tctx;

static bool skipped(const tctx *c, int d, int64_t i) {
  return c->summarise && c->t->shape[d] > 2 * EDGE && i >= EDGE && i < c->t->shape[d] - EDGE;
}

static void measure(tctx *c, int d, int64_t off) {
  for (int64_t i = 0; i < c->t->shape[d]; i++) {
    if (skipped(c, d, i)) { i = c->t->shape[d] - EDGE - 1; continue; }
    int64_t o = off + i * c->strides[d];
    if (d == c->t->ndim - 1) {
      char b[64];
      fmt_elem(b, sizeof b, c->data, o, c->t->dtype, c->precision);
      int w = (int)strlen(b);
      if (w > c->width) c->width = w;
    } else measure(c, d + 1, o);
  }
}

static void emit(tctx *c, int d, int64_t off) {
  int nd = c->t->ndim;
  fputc('[', c->f);
  for (int64_t i = 0; i < c->t->shape[d]; i++) {
    if (i > 0) {
      fputc(',', c->f);
      if (d == nd - 1) fputc(' ', c->f);
      else {
        for (int k = 0; k < nd - 1 - d; k++) fputc('\n', c->f);
        for (int k = 0; k <= d; k++) fputc(' ', c->f);
      }
    }
    if (skipped(c, d, i)) {
      fputs("...", c->f);
      i = c->t->shape[d] - EDGE - 1;
      continue;
    }
    int64_t o = off + i * c->strides[d];
    if (d == nd - 1) {
      char b[64];
      fmt_elem(b, sizeof b, c->data, o, c->t->dtype, c->precision);
      fprintf(c->f, "%*s", c->width, b);
    } else emit(c, d + 1, o);
  }
  fputc(']', c->f);
}

int print_text(FILE *f, const value *v, const print_opts *o, tc_err *err) {
  if (v->kind == V_STR) { fprintf(f, "%s\n", v->s); return 0; }
  if (v->kind != V_TENSOR) return 0;
  tc_tensor *t = v->t;
  void *h = host_copy(t, err);
  if (!h) return -1;
  if (t->ndim == 0) {
    char b[64];
    fmt_elem(b, sizeof b, h, 0, t->dtype, o->precision);
    fprintf(f, "%s\n", b);
  } else {
    tctx c = {.f = f, .t = t, .data = h, .precision = o->precision};
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { c.strides[d] = s; s *= t->shape[d]; }
    c.summarise = !o->full && tc_numel(t) > SUMMARY_THRESHOLD;
    if (tc_numel(t) > 0) measure(&c, 0, 0);
    emit(&c, 0, 0);
    fprintf(f, "  %s[", tc_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) fprintf(f, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    fputs("]\n", f);
  }
  free(h);
  return 0;
}

/* ---- JSON ---- */
/* Length of the valid UTF-8 sequence at s, or 0 (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF). */
static int utf8_len(const unsigned char *s) {
  if (s[0] < 0x80) return 1;
  int n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
  if (!n) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0;
  if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0;
  return n;
}

char *utf8_sanitize(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int k = utf8_len(p);
    if (k) { memcpy(out + o, p, (size_t)k); o += (size_t)k; p += k; }
    else { memcpy(out + o, "\xEF\xBF\xBD", 3); o += 3; p++; }
  }
  out[o] = 0;
  return out;
}

static void add_string(cJSON *o, const char *key, const char *val) {
  char *v = utf8_sanitize(val);
  cJSON_AddStringToObject(o, key, v ? v : "");
  free(v);
}

typedef struct jbuf { char *s; size_t n, cap; bool oom; } jbuf;

static void jput(jbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) { b->oom = true; return; }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}
static void jputs(jbuf *b, const char *s) { jput(b, s, strlen(s)); }

static void json_elem(jbuf *b, const void *data, int64_t i, tc_dtype dt) {
  char t[64];
  fmt_elem(t, sizeof t, data, i, dt, 0);
  if (!strcmp(t, "nan") || !strcmp(t, "inf") || !strcmp(t, "-inf")) {
    jputs(b, "\"");
    jputs(b, t);
    jputs(b, "\"");
  } else jputs(b, t);
}

static void json_nest(jbuf *b, const tc_tensor *t, const void *data, int d, int64_t *pos) {
  if (d == t->ndim) { json_elem(b, data, (*pos)++, t->dtype); return; }
  jputs(b, "[");
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (i) jputs(b, ",");
    json_nest(b, t, data, d + 1, pos);
  }
  jputs(b, "]");
}

static void emit_json(FILE *f, cJSON *o) {
  char *s = cJSON_PrintUnformatted(o);
  if (s) { fputs(s, f); fputc('\n', f); free(s); }
  else fputs("{\"ok\":false,\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory while printing\"}}\n", f);
}

int print_json(FILE *f, const value *v, tc_err *err) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing");
  cJSON_AddTrueToObject(o, "ok");
  int rc = 0;
  if (v->kind == V_STR) {
    cJSON_AddStringToObject(o, "type", "string");
    add_string(o, "value", v->s);
  } else {
    tc_tensor *t = v->t;
    void *h = host_copy(t, err);
    if (!h) { cJSON_Delete(o); return -1; }
    cJSON_AddStringToObject(o, "dtype", tc_dtype_name(t->dtype));
    jbuf sb = {0}, db = {0};
    jputs(&sb, "[");
    for (int d = 0; d < t->ndim; d++) {
      char x[32];
      snprintf(x, sizeof x, d ? ",%lld" : "%lld", (long long)t->shape[d]);
      jputs(&sb, x);
    }
    jputs(&sb, "]");
    int64_t pos = 0;
    json_nest(&db, t, h, 0, &pos);
    free(h);
    if (sb.oom || db.oom) rc = tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing");
    else {
      cJSON_AddRawToObject(o, "shape", sb.s);
      cJSON_AddRawToObject(o, "data", db.s);
    }
    free(sb.s);
    free(db.s);
  }
  if (rc == 0) emit_json(f, o);
  cJSON_Delete(o);
  return rc;
}

void print_json_error(FILE *f, const tc_err *e, int line, int column) {
  cJSON *o = cJSON_CreateObject(), *x = cJSON_CreateObject();
  if (!o || !x) {
    cJSON_Delete(o);
    cJSON_Delete(x);
    fputs("{\"ok\":false,\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory\"}}\n", f);
    return;
  }
  cJSON_AddFalseToObject(o, "ok");
  cJSON_AddItemToObject(o, "error", x);
  cJSON_AddStringToObject(x, "code", tc_code_name(e->code));
  add_string(x, "message", e->msg);
  if (e->op >= 0) cJSON_AddStringToObject(x, "op", tc_op_name((tc_op)e->op));
  if (e->dtype >= 0) cJSON_AddStringToObject(x, "dtype", tc_dtype_name((tc_dtype)e->dtype));
  if (e->engine >= 0) cJSON_AddStringToObject(x, "engine", tc_engine_name((tc_engine_id)e->engine));
  if (line > 0) {
    cJSON_AddNumberToObject(x, "line", line);
    cJSON_AddNumberToObject(x, "column", column);
  }
  if (e->has_index && e->index_ndim > 0) {   /* a 0-d operand has no position to name */
    char buf[TC_MAX_DIMS * 24 + 4];
    tc_format_dims(buf, sizeof buf, e->index_ndim, e->index);
    /* "[1, 2]" is valid JSON as it stands */
    cJSON_AddRawToObject(x, "index", buf);
  }
  emit_json(f, o);
  cJSON_Delete(o);
}
