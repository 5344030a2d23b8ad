/* The error value: set once (the first error wins), formatted by printers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "tcalc.h"

void tc_err_clear(tc_err *err) {
  memset(err, 0, sizeof *err);
  err->code = TC_OK;
  err->op = err->dtype = err->engine = -1;
  err->start = err->end = -1;
}

int tc_err_set(tc_err *err, tc_code code, int op, int dtype, const char *fmt, ...) {
  if (!err || err->code != TC_OK) return -1;
  err->code = code;
  err->op = op;
  err->dtype = dtype;
  err->engine = (int)tc_get_engine();
  va_list ap;
  va_start(ap, fmt);
  int n = 0;
  if (op >= 0) n = snprintf(err->msg, sizeof err->msg, "%s: ", tc_op_name((tc_op)op));
  if (n < 0) n = 0;
  vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

void tc_format_dims(char *buf, size_t n, int ndim, const int64_t *dims) {
  size_t len = 0;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, n - len, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", (long long)dims[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

void tc_err_set_index(tc_err *err, int ndim, const int64_t *index) {
  err->has_index = true;
  err->index_ndim = ndim;
  for (int i = 0; i < ndim; i++) err->index[i] = index[i];
}
