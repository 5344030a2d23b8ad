/* Text and JSON printing of values. Tensors are copied to the host once and
 * formatted from there; integers are written exactly, never via a double. */
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include "print.h"

/* ---- numbers ---- */
void fmt_float(char *buf, size_t n, double v, tc_dtype dt, int precision) {
  if (isnan(v)) { snprintf(buf, n, "nan"); return; }
  if (isinf(v)) { snprintf(buf, n, v < 0 ? "-inf" : "inf"); return; }
  char digits[24];
  int nd, exp10, p = 0;
  bool neg = signbit(v);
  if (precision > 0) {
    /* [-]d[.ddd]e[+-]xx: take the digits and the exponent */
    char e[40];
    p = precision > 17 ? 17 : precision;
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    const char *s = e + neg;
    nd = 0;
    for (; *s && *s != 'e'; s++)
      if (*s != '.') digits[nd++] = *s;
    exp10 = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
  } else {
    /* The fewest significant digits that read back in dt, the nearest of
     * them to v (src/shortest.c) */
    nd = tc_shortest_digits(v, dt, digits, &exp10);
  }
  char out[64];
  int o = 0;
  if (neg) out[o++] = '-';
  /* positional from 1e-4 up to 1e16, or with --precision N as C's %g does:
   * up to 10^N, so that no digit is shown that was not kept */
  if (exp10 >= -4 && exp10 < (precision > 0 ? p : 16)) {
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
    int a = abs(exp10);
    out[o++] = 'e';
    out[o++] = exp10 < 0 ? '-' : '+';
    if (a >= 100) out[o++] = (char)('0' + a / 100);
    out[o++] = (char)('0' + a / 10 % 10);
    out[o++] = (char)('0' + a % 10);
    out[o] = 0;
  }
  if ((size_t)o < n) memcpy(buf, out, (size_t)o + 1);
  else snprintf(buf, n, "%s", out);
}

void fmt_elem(char *buf, size_t n, const void *data, int64_t i, tc_dtype dt, int precision) {
  if ((unsigned)dt >= TC_DT_COUNT) { snprintf(buf, n, "?"); return; }
  const char *p = (const char *)data + (size_t)i * tc_dtype_size(dt);
  switch (tc_dtype_class(dt)) {
  case TC_CLASS_BOOL: snprintf(buf, n, "%s", *(const uint8_t *)p ? "true" : "false"); return;
  case TC_CLASS_INT:
    if (tc_dtype_is_unsigned(dt)) snprintf(buf, n, "%llu", (unsigned long long)(uint64_t)tc_dtype_load_i64(dt, p));
    else snprintf(buf, n, "%lld", (long long)tc_dtype_load_i64(dt, p));
    return;
  case TC_CLASS_FLT: fmt_float(buf, n, tc_dtype_load_f64(dt, p), dt, precision); return;
  }
}

/* The elements of t in row-major order in host memory. A contiguous tensor
 * of the CPU engine is read where it lies; a view becomes a contiguous
 * tensor first (an allocation under the memory limit like any result);
 * other engines download into a buffer that the limit also bounds. */
typedef struct hostbuf { tc_tensor *c; void *copy; } hostbuf;

static const void *host_data(tc_tensor *t, hostbuf *hb, tc_err *err) {
  hb->copy = NULL;
  tc_err e;
  tc_err_clear(&e);
  hb->c = tc_contiguous(t, &e);
  if (!hb->c) {
    if (e.code == TC_E_OOM) tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "printing this view needs a copy: %s", e.msg);
    else *err = e;
    return NULL;
  }
  const void *in_place = tc_tensor_host_data(hb->c);
  if (in_place) return in_place;
  uint64_t n, limit = tc_get_max_memory(), used = tc_mem_in_use();
  if (__builtin_mul_overflow((uint64_t)tc_numel(hb->c), (uint64_t)tc_dtype_size(hb->c->dtype), &n) || n > limit ||
      used > limit - n || !(hb->copy = malloc(n ? (size_t)n : 1))) {
    tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing (a host copy of %llu bytes; :set max_memory)",
               (unsigned long long)n);
  } else if (tc_tensor_to_host(hb->c, hb->copy, err) == 0) return hb->copy;
  free(hb->copy);
  tc_tensor_free(hb->c);
  hb->c = NULL;
  hb->copy = NULL;
  return NULL;
}

static void host_done(hostbuf *hb) {
  free(hb->copy);
  tc_tensor_free(hb->c);
}

/* What printing t writes out: its elements, or, when it has none, the
 * empty lists that its leading dimensions nest (a [10^11, 0] tensor holds
 * no data and prints as 10^11 lists). */
static int64_t cells(const tc_tensor *t) {
  int64_t n = tc_numel(t);
  if (n > 0) return n;
  n = 1;   /* saturating: [2^62, 2^62, 0] nests 2^124 lists */
  for (int d = 0; d < t->ndim && t->shape[d] > 0; d++)
    if (__builtin_mul_overflow(n, t->shape[d], &n)) return INT64_MAX;
  return n;
}

/* An empty tensor's lists are bounded like elements: no more of them than
 * the memory limit would allow i64 elements. */
static int check_cells(const tc_tensor *t, tc_err *err) {
  int64_t n = cells(t);
  if (tc_numel(t) > 0 || (uint64_t)n <= tc_get_max_memory() / 8) return 0;
  char shape[256];
  tc_format_dims(shape, sizeof shape, t->ndim, t->shape);
  char lists[32] = "more than 2^63";
  if (n < INT64_MAX) snprintf(lists, sizeof lists, "%lld", (long long)n);
  return tc_err_set(err, TC_E_OOM, -1, (int)t->dtype,
                    "an empty tensor of shape %s would print as %s empty lists, more than the memory limit allows "
                    "elements (:set max_memory)", shape, lists);
}

/* ---- stopping a long output ----
 * Every PRINT_POLL elements a printer looks at its stream and the interrupt
 * flag: it stops at the first failed write (a closed pipe, a full disk;
 * the caller then ends the run with status 2) and on Ctrl-C (the statement
 * fails with `interrupted`).
 * A JSON line is first written to memory (json_hold), up to JSON_HOLD bytes
 * and what the memory limit leaves, and goes out whole when it is done: an
 * interrupt then leaves no partial line, only the error line. A longer line
 * is streamed from where it outgrew the buffer; interrupted, it ends where
 * it stopped (the man page says so). A text tensor's partial line is ended. */
#define PRINT_POLL 4096
#define JSON_HOLD ((size_t)64 << 20)
typedef struct {
  FILE *f;              /* where elements go: the output, or the memory buffer */
  FILE *out;            /* the output when f is the buffer, else NULL */
  char *buf;            /* the buffer's bytes (open_memstream) */
  size_t len, hold;     /* bytes in it; the most it may hold */
  int64_t n;
  int stop;             /* 1 write failed, 2 interrupted */
  bool dropped;         /* an interrupted line was dropped from memory */
} out_poll;

/* Ends the buffering: o->buf and o->len hold the line so far, and false
 * says the buffer could not hold it (memory ran out). */
static bool json_unhold(out_poll *o) {
  bool good = fflush(o->f) == 0 && !ferror(o->f);
  fclose(o->f);
  o->f = o->out;
  o->out = NULL;
  return good && o->buf;
}

/* The buffered line so far goes to the output, and the rest streams; if
 * the buffer failed, nothing went out and the print starts again (stop 3). */
static void json_spill(out_poll *o) {
  if (json_unhold(o)) fwrite(o->buf, 1, o->len, o->f);
  else o->stop = 3;
  free(o->buf);
  o->buf = NULL;
}

static bool poll_stop(out_poll *o) {
  if (o->stop || ++o->n % PRINT_POLL) return o->stop != 0;
  FILE *dst = o->out ? o->out : o->f;
  /* a pipe whose reader has gone (POLLERR) fails before the first write,
   * which measuring a long tensor's column width comes well before:
   * writing to it (what, does not matter) sets the stream's error */
  struct pollfd p = {.fd = fileno(dst), .events = POLLOUT};
  if (p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) {
    fputc(' ', dst);
    fflush(dst);
  }
  if (o->out && (fflush(o->f) != 0 || ferror(o->f) || o->len > o->hold)) json_spill(o);
  if (!o->stop) o->stop = ferror(dst) ? 1 : tc_interrupt_flag ? 2 : 0;
  return o->stop != 0;
}

/* json_hold: elements go to memory when a buffer can be had within the
 * memory limit; json_done writes a finished line out, or drops it. */
static void json_hold(out_poll *o, FILE *f) {
  uint64_t limit = tc_get_max_memory(), used = tc_mem_in_use();
  o->f = f;
  o->hold = used < limit ? (size_t)(limit - used < JSON_HOLD ? limit - used : JSON_HOLD) : 0;
  if (!o->hold) return;
  FILE *m = open_memstream(&o->buf, &o->len);
  if (!m) return;
  o->out = f;
  o->f = m;
}

static void json_done(out_poll *o) {
  if (!o->out) return;
  if (!o->stop) {
    json_spill(o);
    return;
  }
  json_unhold(o);
  free(o->buf);
  o->buf = NULL;
  o->dropped = o->stop == 2;
}

static int poll_end(const out_poll *o, tc_err *err) {
  if (o->stop != 2) return 0;
  if (!o->dropped) fputc('\n', o->f);
  return tc_err_set(err, TC_E_INTERRUPTED, -1, -1, "interrupted while printing; variables are unchanged");
}

/* ---- text ---- */
#define EDGE 3                /* entries shown at each end of a long axis */
#define SUMMARY_MAX 100000    /* at most this many entries in a summary */
#define SUMMARY_THRESHOLD 1000

typedef struct tctx {
  FILE *f;
  const tc_tensor *t;
  const void *data;
  int64_t strides[TC_MAX_DIMS];   /* row-major strides of the host copy */
  bool summarise;
  int64_t edge;                   /* entries shown at each end of a long axis */
  int width, precision;
  int linewidth;                  /* wrap rows longer than this (0: never) */
  int col;                        /* the column the next character goes to */
  out_poll poll;
  const char *last;               /* measure(): the element measured last */
} tctx;

static bool skipped(const tctx *c, int d, int64_t i) {
  return c->summarise && c->t->shape[d] > 2 * c->edge && i >= c->edge && i < c->t->shape[d] - c->edge;
}

/* Entries shown at each end of a long axis: EDGE, or fewer when a tensor
 * of many long axes would otherwise show more than SUMMARY_MAX entries
 * (7^16 elements summarise to 6^16 with EDGE 3, to 2^16 with 1). Counts
 * the lists an empty tensor prints, down to its first empty axis. */
static int64_t summary_edge(const tc_tensor *t) {
  int64_t e = EDGE;
  for (; e > 1; e--) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim && t->shape[d] > 0 && n <= SUMMARY_MAX; d++)
      n *= t->shape[d] > 2 * e ? 2 * e : t->shape[d];
    if (n <= SUMMARY_MAX) break;
  }
  return e;
}

/* Where entry i along axis d lies in the data: a summary holds only the
 * first and last edge entries of each long axis (see gather()). */
static int64_t at(const tctx *c, int d, int64_t i) {
  return c->summarise && c->t->shape[d] > 2 * c->edge && i >= c->edge ? i - (c->t->shape[d] - 2 * c->edge) : i;
}

/* The entries a summary shows, gathered into dst (row-major over the
 * summary's shape, whose strides in elements are sst): along each axis
 * longer than 2 * edge, the first and last edge entries. Each corner of x
 * is read through a view of its own, on whatever engine holds x, so that
 * summarising a large tensor (or a broadcast view of 10^10 elements)
 * copies only what is shown. */
typedef struct gather_ctx {
  int64_t edge;
  const int64_t *sst;
  char *dst;
  size_t es;
} gather_ctx;

static int gather(const gather_ctx *g, tc_tensor *x, int d, int64_t off, tc_err *err) {
  if (d < x->ndim && x->shape[d] <= 2 * g->edge) return gather(g, x, d + 1, off, err);
  if (d < x->ndim) {
    int64_t shape[TC_MAX_DIMS], n = x->shape[d];
    memcpy(shape, x->shape, sizeof shape);
    shape[d] = g->edge;
    int rc = -1;
    tc_tensor *lo = tc_view(x, x->ndim, shape, x->strides, x->offset, err);
    tc_tensor *hi = lo ? tc_view(x, x->ndim, shape, x->strides, x->offset + (n - g->edge) * x->strides[d], err) : NULL;
    if (hi && gather(g, lo, d + 1, off, err) == 0) rc = gather(g, hi, d + 1, off + g->edge * g->sst[d], err);
    tc_tensor_free(lo);
    tc_tensor_free(hi);
    return rc;
  }
  /* a corner: read it, then place each entry */
  int64_t n = tc_numel(x);
  char *box = malloc((size_t)n * g->es);
  if (!box) return tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing");
  if (tc_tensor_to_host(x, box, err) != 0) { free(box); return -1; }
  int64_t idx[TC_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t o = off;
    for (int k = 0; k < x->ndim; k++) o += idx[k] * g->sst[k];
    memcpy(g->dst + (size_t)o * g->es, box + (size_t)i * g->es, g->es);
    for (int k = x->ndim - 1; k >= 0 && ++idx[k] == x->shape[k]; k--) idx[k] = 0;
  }
  free(box);
  return 0;
}

static void measure(tctx *c, int d, int64_t off) {
  for (int64_t i = 0; i < c->t->shape[d] && !poll_stop(&c->poll); i++) {
    if (skipped(c, d, i)) { i = c->t->shape[d] - c->edge - 1; continue; }
    int64_t o = off + at(c, d, i) * c->strides[d];
    if (d == c->t->ndim - 1) {
      /* an element with the bits of the one before has its width (a
       * broadcast's copies, runs of zeros) */
      size_t es = tc_dtype_size(c->t->dtype);
      const char *e = (const char *)c->data + o * (int64_t)es;
      if (c->last && !memcmp(c->last, e, es)) continue;
      c->last = e;
      char b[64];
      fmt_elem(b, sizeof b, c->data, o, c->t->dtype, c->precision);
      int w = (int)strlen(b);
      if (w > c->width) c->width = w;
    } else measure(c, d + 1, o);
  }
}

/* A row wraps, as NumPy's linewidth does, before an entry that would end
 * past the line width (with its ',' or closing brackets); the next line
 * starts under the row's first entry. */
static void emit(tctx *c, int d, int64_t off) {
  int nd = c->t->ndim;
  fputc('[', c->f);
  c->col++;
  for (int64_t i = 0; i < c->t->shape[d] && !poll_stop(&c->poll); i++) {
    bool skip = skipped(c, d, i);
    if (i > 0) {
      fputc(',', c->f);
      c->col++;
      if (d == nd - 1) {
        int w = skip ? 3 : c->width;
        bool last = i == c->t->shape[d] - 1;
        if (c->linewidth > 0 && c->col + 1 + w + (last ? d + 1 : 1) > c->linewidth) {
          fprintf(c->f, "\n%*s", d + 1, "");
          c->col = d + 1;
        } else {
          fputc(' ', c->f);
          c->col++;
        }
      } else {
        for (int k = 0; k < nd - 1 - d; k++) fputc('\n', c->f);
        for (int k = 0; k <= d; k++) fputc(' ', c->f);
        c->col = d + 1;
      }
    }
    if (skip) {
      fputs("...", c->f);
      c->col += 3;
      i = c->t->shape[d] - c->edge - 1;
      continue;
    }
    int64_t o = off + at(c, d, i) * c->strides[d];
    if (d == nd - 1) {
      char b[64];
      fmt_elem(b, sizeof b, c->data, o, c->t->dtype, c->precision);
      int w = (int)strlen(b);   /* right-aligned in the column's width */
      for (int k = w; k < c->width; k++) fputc(' ', c->f);
      fputs(b, c->f);
      c->col += w > c->width ? w : c->width;
    } else emit(c, d + 1, o);
  }
  fputc(']', c->f);
  c->col++;
}

int print_text(FILE *f, const value *v, const print_opts *o, tc_err *err) {
  if (v->kind == V_STR) { fprintf(f, "%s\n", v->s); return 0; }
  if (v->kind != V_TENSOR) return 0;
  tc_tensor *t = v->t;
  bool summarise = !o->full && cells(t) > SUMMARY_THRESHOLD;
  if (!summarise && check_cells(t, err) != 0) return -1;
  bool empty = tc_numel(t) == 0;   /* no data to read */
  int64_t edge = summary_edge(t);
  /* the summary's shape: long axes cut to 2 * edge entries */
  int64_t sshape[TC_MAX_DIMS], sst[TC_MAX_DIMS], s = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    sshape[d] = summarise && t->shape[d] > 2 * edge ? 2 * edge : t->shape[d];
    sst[d] = empty ? 0 : s;   /* an empty tensor's axes after its 0 may be 2^62 long: no data, no strides */
    if (!empty) s *= sshape[d];   /* at most SUMMARY_MAX when summarising */
  }
  hostbuf hb = {0};
  const void *h = NULL;
  if (!empty && summarise) {
    gather_ctx g = {edge, sst, malloc((size_t)s * tc_dtype_size(t->dtype)), tc_dtype_size(t->dtype)};
    hb.copy = g.dst;
    if (!g.dst) return tc_err_set(err, TC_E_OOM, -1, -1, "out of memory while printing");
    if (gather(&g, t, 0, 0, err) != 0) { free(g.dst); return -1; }
    h = g.dst;
  } else if (!empty && !(h = host_data(t, &hb, err))) return -1;
  if (t->ndim == 0) {
    char b[64];
    fmt_elem(b, sizeof b, h, 0, t->dtype, o->precision);
    fprintf(f, "%s\n", b);
  } else {
    tctx c = {.f = f, .t = t, .data = h, .precision = o->precision, .summarise = summarise, .edge = edge,
              .linewidth = o->width, .poll = {.f = f}};
    memcpy(c.strides, sst, sizeof c.strides);
    if (!empty) measure(&c, 0, 0);
    c.poll.n = 0;
    if (!c.poll.stop) emit(&c, 0, 0);
    if (c.poll.stop) {
      host_done(&hb);
      return poll_end(&c.poll, err);
    }
    fprintf(f, "  %s[", tc_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) fprintf(f, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    fputs("]\n", f);
  }
  host_done(&hb);
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


static void json_elem(FILE *f, const void *data, int64_t i, tc_dtype dt) {
  char t[64];
  fmt_elem(t, sizeof t, data, i, dt, 0);
  if (!strcmp(t, "nan") || !strcmp(t, "inf") || !strcmp(t, "-inf")) fprintf(f, "\"%s\"", t);
  else fputs(t, f);
}

/* o->f is read afresh after each poll: the line may move from memory to
 * the output (json_spill) */
static void json_nest(out_poll *o, const tc_tensor *t, const void *data, int d, int64_t *pos) {
  if (d == t->ndim) { json_elem(o->f, data, (*pos)++, t->dtype); return; }
  fputc('[', o->f);
  for (int64_t i = 0; i < t->shape[d] && !poll_stop(o); i++) {
    if (i) fputc(',', o->f);
    json_nest(o, t, data, d + 1, pos);
  }
  fputc(']', o->f);
}


static void json_tensor(out_poll *o, const tc_tensor *t, const void *h) {
  fprintf(o->f, "{\"ok\":true,\"dtype\":\"%s\",\"shape\":[", tc_dtype_name(t->dtype));
  for (int d = 0; d < t->ndim; d++) fprintf(o->f, d ? ",%lld" : "%lld", (long long)t->shape[d]);
  fputs("],\"data\":", o->f);
  int64_t pos = 0;
  json_nest(o, t, h, 0, &pos);
  if (!o->stop) fputs("}\n", o->f);
  json_done(o);
}

/* A JSON string, escaped as cJSON escapes (so that output does not depend
 * on which wrote it), with invalid UTF-8 as U+FFFD. Allocates nothing:
 * reporting an error, out_of_memory included, must not need memory. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int k = utf8_len(p);
    if (!k) { fputs("\xEF\xBF\xBD", f); p++; continue; }   /* U+FFFD */
    if (k > 1) { fwrite(p, 1, (size_t)k, f); p += k; continue; }
    unsigned c = *p++;
    switch (c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\b': fputs("\\b", f); break;
    case '\f': fputs("\\f", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (c < 0x20) fprintf(f, "\\u%04x", c);
      else fputc((int)c, f);
    }
  }
  fputc('"', f);
}

int print_json(FILE *f, const value *v, tc_err *err) {
  if (v->kind == V_STR) {
    fputs("{\"ok\":true,\"type\":\"string\",\"value\":", f);
    json_str(f, v->s);
    fputs("}\n", f);
    return 0;
  }
  /* A tensor is written as it is read, element by element, into memory
   * (json_hold) and out when whole; a line too long to hold streams. */
  tc_tensor *t = v->t;
  if (check_cells(t, err) != 0) return -1;
  hostbuf hb = {0};
  const void *h = tc_numel(t) ? host_data(t, &hb, err) : NULL;
  if (!h && tc_numel(t)) return -1;
  out_poll o = {0};
  json_hold(&o, f);
  json_tensor(&o, t, h);
  if (o.stop == 3) {   /* no memory for the buffer: the line streams */
    o = (out_poll){.f = f};
    json_tensor(&o, t, h);
  }
  host_done(&hb);
  return o.stop ? poll_end(&o, err) : 0;
}

void print_json_error(FILE *f, const tc_err *e, int line, int column, const trace_entry *tr, int ntr) {
  fputs("{\"ok\":false,\"error\":{\"code\":", f);
  json_str(f, tc_code_name(e->code));
  fputs(",\"message\":", f);
  json_str(f, e->msg);
  if (e->op >= 0) fprintf(f, ",\"op\":\"%s\"", tc_op_name((tc_op)e->op));
  if (e->dtype >= 0) fprintf(f, ",\"dtype\":\"%s\"", tc_dtype_name((tc_dtype)e->dtype));
  if (e->engine >= 0) fprintf(f, ",\"engine\":\"%s\"", tc_engine_name((tc_engine_id)e->engine));
  if (line > 0) fprintf(f, ",\"line\":%d,\"column\":%d", line, column);
  if (e->has_index && e->index_ndim > 0) {   /* a 0-d operand has no position to name */
    char buf[TC_MAX_DIMS * 24 + 4];
    tc_format_dims(buf, sizeof buf, e->index_ndim, e->index);
    fprintf(f, ",\"index\":%s", buf);   /* "[1, 2]" is valid JSON as it stands */
  }
  if (ntr > 0) {   /* the calls of user functions the error left, innermost first */
    fputs(",\"trace\":[", f);
    for (int i = 0; i < ntr; i++) {
      fprintf(f, "%s{\"function\":", i ? "," : "");
      json_str(f, tr[i].fn);
      fprintf(f, ",\"line\":%d,\"column\":%d", tr[i].line, tr[i].col);
      if (tr[i].repeat > 1) fprintf(f, ",\"repeat\":%d", tr[i].repeat);
      fputc('}', f);
    }
    fputs("]", f);
  }
  fputs("}}\n", f);
}
