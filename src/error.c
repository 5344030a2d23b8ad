/* The error value: set once (the first error wins), formatted by printers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

void tc_err_clear(tc_err *err) {
  memset(err, 0, sizeof *err);
  err->code = TC_OK;
  err->op = err->dtype = err->engine = -1;
  err->start = err->end = -1;
}

/* Messages echo what the user typed (names, option strings, commands) and
 * are cut to the size of msg, possibly inside a UTF-8 sequence. Replaces
 * each byte of an invalid or cut UTF-8 sequence, and each control
 * character, with '?', so that a message is always valid UTF-8 that prints
 * safely on a terminal and in JSON. */
static void clean_message(char *s) {
  unsigned char *p = (unsigned char *)s;
  while (*p) {
    unsigned c = *p;
    int k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (k == 0) {
      if (c < 0x20 || c == 0x7F) *p = '?';
      p++;
      continue;
    }
    bool ok = k > 0;
    unsigned v = k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
    for (int j = 1; ok && j <= k; j++) {
      if ((p[j] & 0xC0) != 0x80) ok = false;   /* also stops at the terminator */
      else v = (v << 6) | (p[j] & 0x3F);
    }
    if (ok) {
      unsigned min = k == 1 ? 0x80 : k == 2 ? 0x800 : 0x10000;
      ok = v >= min && v <= 0x10FFFF && !(v >= 0xD800 && v <= 0xDFFF);
    }
    if (!ok) { *p++ = '?'; continue; }
    p += k + 1;
  }
}

int tc_err_set(tc_err *err, tc_code code, int op, int dtype, const char *fmt, ...) {
  if (!err || err->code != TC_OK) return -1;
  err->code = code;
  err->op = op;
  err->dtype = dtype;
  err->engine = (int)tc_get_engine();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  clean_message(err->msg);
  return -1;
}

const char *tc_err_text(const tc_err *e, char *buf) {
  const char *detail = e->msg[0] ? e->msg : tc_code_message(e->code);
  size_t n = 0, d = strlen(detail);
  if (e->op >= 0) {   /* an op name is far shorter than the text */
    const char *name = tc_op_name((tc_op)e->op);
    n = strlen(name);
    memcpy(buf, name, n);
    memcpy(buf + n, ": ", 2);
    n += 2;
  }
  if (d > TC_ERR_TEXT - 1 - n) d = TC_ERR_TEXT - 1 - n;
  memcpy(buf + n, detail, d);
  buf[n + d] = 0;
  clean_message(buf);   /* a sequence the length cut */
  return buf;
}

void tc_format_dims(char *buf, size_t n, int ndim, const int64_t *dims) {
  size_t len = 0;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, n - len, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", (long long)dims[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

void tc_unravel(int64_t flat, int ndim, const int64_t *shape, int64_t *pos) {
  for (int i = ndim - 1; i >= 0; i--) {
    pos[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
}

void tc_index_text(char *where, size_t n, int ndim, const int64_t *idx) {
  if (n) where[0] = 0;
  if (ndim <= 0) return;
  char ib[TC_MAX_DIMS * 24 + 4];
  tc_format_dims(ib, sizeof ib, ndim, idx);
  snprintf(where, n, " at index %s", ib);
}

void tc_err_set_index(tc_err *err, int ndim, const int64_t *index) {
  err->has_index = true;
  err->index_ndim = ndim;
  for (int i = 0; i < ndim; i++) err->index[i] = index[i];
}
