/* Text and JSON printing of values. Tensors are copied to the host once and
 * formatted from there; integers are written exactly, never via a double. */
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "lexer.h"
#include "plot.h"
#include "print.h"

/* ---- numbers ----
 * An element's text is at most 24 bytes ("-2.2250738585072014e-308",
 * "-9223372036854775808"); the writers store fixed-size blocks (no call to
 * memcpy per piece) and may write garbage up to ELEM_ROOM bytes from where
 * they start, which the next writes cover (src/shortest.c's TC_PUT_ROOM
 * after a sign and "0.000"). */
#define ELEM_ROOM 48
_Static_assert(ELEM_ROOM >= TC_PUT_ROOM + 6, "room for a float's digits after its sign and leading zeros");

/* How an element is read and written: the dtype's class, looked up once a
 * tensor rather than once an element. */
typedef enum { K_BOOL, K_INT, K_UINT, K_F64, K_FLT } elem_kind;

static elem_kind kind_of(tc_dtype dt) {
  switch (tc_dtype_class(dt)) {
  case TC_CLASS_BOOL: return K_BOOL;
  case TC_CLASS_INT: return tc_dtype_is_unsigned(dt) ? K_UINT : K_INT;
  case TC_CLASS_FLT: break;
  }
  return dt == TC_DT_F64 ? K_F64 : K_FLT;
}

static char *put_str(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

static char *put_float(char *p, double v, tc_dtype dt, int precision) {
  if (isnan(v)) return put_str(p, "nan", 3);
  if (isinf(v)) return v < 0 ? put_str(p, "-inf", 4) : put_str(p, "inf", 3);
  uint64_t d;
  int nd, exp10, p10 = 16;
  if (precision > 0) {
    /* [-]d[.ddd]e[+-]xx: take the digits and the exponent */
    char e[40];
    p10 = precision > 17 ? 17 : precision;
    snprintf(e, sizeof e, "%.*e", p10 - 1, fabs(v));
    const char *s = e;
    for (d = 0, nd = 0; *s && *s != 'e'; s++)
      if (*s != '.') d = d * 10 + (uint64_t)(*s - '0'), nd++;
    exp10 = atoi(s + 1);
    for (; nd > 1 && d % 10 == 0; nd--) d /= 10;
  } else {
    /* The fewest significant digits that read back in dt, the nearest of
     * them to v (src/shortest.c) */
    d = tc_shortest(v, dt, &nd, &exp10);
  }
  if (signbit(v)) *p++ = '-';
  /* positional from 1e-4 up to 1e16, or with --precision N as C's %g does:
   * up to 10^N, so that no digit is shown that was not kept; nd <= 17 */
  if (exp10 >= -4 && exp10 < p10) {
    if (exp10 < 0) {
      memcpy(p, "0.000", 6);
      return tc_put_digits(p + 1 - exp10, d, nd, 0);
    }
    int whole = exp10 + 1;   /* <= 17 */
    if (nd > whole) return tc_put_digits(p, d, nd, whole);
    p = tc_put_digits(p, d, nd, 0);
    memset(p, '0', 16);
    memcpy(p + whole - nd, ".0", 2);
    return p + whole - nd + 2;
  }
  return tc_put_exponent(tc_put_digits(p, d, nd, 1), exp10);
}

static double load_float(const char *e, tc_dtype dt, elem_kind k) {
  double v;
  if (k == K_F64) memcpy(&v, e, sizeof v);
  else v = tc_dtype_load_f64(dt, e);
  return v;
}

/* The element at e as text (integers exactly, never via a double). */
static char *put_elem(char *p, const char *e, tc_dtype dt, elem_kind k, int precision) {
  switch (k) {
  case K_BOOL: return *(const uint8_t *)e ? put_str(p, "true", 4) : put_str(p, "false", 5);
  case K_INT: return tc_put_i64(p, tc_dtype_load_i64(dt, e));
  case K_UINT: return tc_put_u64(p, (uint64_t)tc_dtype_load_i64(dt, e));
  case K_F64:
  case K_FLT: break;
  }
  return put_float(p, load_float(e, dt, k), dt, precision);
}

/* JSON's form of the element: NaN and the infinities as strings. */
static char *put_json_elem(char *p, const char *e, tc_dtype dt, elem_kind k) {
  if (k < K_F64) return put_elem(p, e, dt, k, 0);
  double v = load_float(e, dt, k);
  if (isnan(v)) return put_str(p, "\"nan\"", 5);
  if (isinf(v)) return v < 0 ? put_str(p, "\"-inf\"", 6) : put_str(p, "\"inf\"", 5);
  return put_float(p, v, dt, 0);
}

/* Copies the text from t to end into buf (n bytes), cut as snprintf cuts. */
static void fmt_done(char *buf, size_t n, const char *t, const char *end) {
  if (n) snprintf(buf, n, "%.*s", (int)(end - t), t);
}

void fmt_float(char *buf, size_t n, double v, tc_dtype dt, int precision) {
  char t[ELEM_ROOM];
  fmt_done(buf, n, t, put_float(t, v, dt, precision));
}

void fmt_elem(char *buf, size_t n, const void *data, int64_t i, tc_dtype dt, int precision) {
  if ((unsigned)dt >= TC_DT_COUNT) { snprintf(buf, n, "?"); return; }
  char t[ELEM_ROOM];
  const char *e = (const char *)data + (size_t)i * tc_dtype_size(dt);
  fmt_done(buf, n, t, put_elem(t, e, dt, kind_of(dt), precision));
}

/* An upper bound on the length of the text of a float whose biased
 * exponent field is x (without its sign), for text mode's shortest digits:
 * a tensor's column width is measured over every element, and an element
 * whose bound is no wider than the widest so far need not be formatted.
 * Its value lies in [2^e, 2^(e+1)), so the decimal exponent of its digits
 * lies within one of floor(e log10 2) .. floor((e+1) log10 2), and it has
 * at most 17 (f64), 9 (f32), 5 (f16) or 4 (bf16) digits; 0 says "no bound"
 * (zero, subnormals, inf, nan: rare, formatted). */
static int layout_len(int nd, int e) {
  if (e >= -4 && e < 16) return e < 0 ? 1 - e + nd : nd > e + 1 ? nd + 1 : e + 3;
  return 1 + (nd > 1 ? nd : 0) + 2 + (abs(e) >= 100 ? 3 : 2);
}

int fmt_len_bound(tc_dtype dt, int x) {
  int ebits, nd;
  switch (dt) {
  case TC_DT_F64: ebits = 11; nd = 17; break;
  case TC_DT_F32: ebits = 8; nd = 9; break;
  case TC_DT_F16: ebits = 5; nd = 5; break;
  case TC_DT_BF16: ebits = 8; nd = 4; break;
  default: return 0;
  }
  int bias = (1 << (ebits - 1)) - 1;
  if (x <= 0 || x >= (1 << ebits) - 1) return 0;
  int e2 = x - bias, lo = (int)floor(e2 * 0.30102999566398120) - 1, hi = (int)floor((e2 + 1) * 0.30102999566398120) + 1;
  int most = 0;
  for (int e = lo; e <= hi; e++)
    if (layout_len(nd, e) > most) most = layout_len(nd, e);
  return most;
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
    char text[TC_ERR_TEXT];
    if (e.code == TC_E_OOM) tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "printing this view needs a copy: %s", tc_err_text(&e, text));
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

/* ---- the output ----
 * Printers write into one fixed buffer in front of the stream, which goes
 * out in chunks of OUT_CHUNK bytes, one fwrite each: no text of the whole
 * tensor in memory, no stdio call per character. Between chunks (and
 * every PRINT_POLL elements of measuring, which writes nothing) a printer
 * looks at the interrupt flag and at its stream: it stops at the first
 * failed write (a closed pipe, a full disk; the caller then ends the run
 * with status 2) and on Ctrl-C (the statement fails with `interrupted`).
 * A JSON line is held in the buffer up to OUT_HOLD bytes and goes out when
 * it is done, so that an interrupt leaves no partial line, only the error
 * line; a longer line streams from where it outgrew the hold and,
 * interrupted, is ended where it stopped (the man page says so), as a text
 * tensor's partial line is. The buffer is static: writing allocates
 * nothing, and printing needs no memory but this buffer and the tensor's
 * host data (read in place, or a copy of a view or another engine's). */
#define OUT_CHUNK ((size_t)64 << 10)
#define OUT_HOLD ((size_t)1 << 20)
/* What a printer may write past the mark before it looks again: an element
 * with its separators and the brackets around it (some 100 bytes), or a
 * dtype[shape] trailer or a JSON header of up to 16 dimensions. */
#define OUT_SLACK 1024
#define PRINT_POLL 4096
static char out_buf[OUT_HOLD + OUT_SLACK];

typedef struct {
  FILE *f;
  char *p;      /* where the next byte goes */
  char *mark;   /* past it, the buffer goes out before more is written */
  bool sent;    /* part of the current line went out */
  int stop;     /* 1 write failed, 2 interrupted */
} sink;

static void sink_open(sink *s, FILE *f, bool hold) {
  *s = (sink){.f = f, .p = out_buf, .mark = out_buf + (hold ? OUT_HOLD : OUT_CHUNK)};
}

/* Writes the buffer out, or drops it on an interrupt; false when the
 * printer is to stop. Once stopped, the mark stays at the buffer's start,
 * so that every later look comes here and answers false. */
static bool sink_drain(sink *s) {
  if (!s->stop && tc_interrupt_flag) s->stop = 2;
  if (!s->stop) {
    size_t n = (size_t)(s->p - out_buf);
    if (fwrite(out_buf, 1, n, s->f) != n || ferror(s->f)) s->stop = 1;
    s->sent |= n > 0;
    s->mark = out_buf + OUT_CHUNK;   /* a held line streams from here on */
  }
  if (s->stop) s->mark = out_buf;
  s->p = out_buf;
  return !s->stop;
}

/* True while the printer may go on writing (up to OUT_SLACK bytes). */
static inline bool sink_room(sink *s) { return s->p < s->mark || sink_drain(s); }

/* "[d0,d1,...]" as the text trailer and the JSON header write a shape. */
static void sink_dims(sink *s, const tc_tensor *t) {
  *s->p++ = '[';
  for (int d = 0; d < t->ndim && sink_room(s); d++) {
    if (d) *s->p++ = ',';
    s->p = tc_put_i64(s->p, t->shape[d]);
  }
  *s->p++ = ']';
}

/* Ends the print: what is left in the buffer goes out (a held line whole);
 * an interrupted print ends the part of its line that went out. */
static int sink_close(sink *s, tc_err *err) {
  if (!s->stop) {
    size_t n = (size_t)(s->p - out_buf);
    if (fwrite(out_buf, 1, n, s->f) != n) s->stop = 1;
  }
  s->p = out_buf;
  if (s->stop != 2) return 0;
  if (s->sent) fputc('\n', s->f);
  return tc_err_set(err, TC_E_INTERRUPTED, -1, -1, "interrupted while printing; variables are unchanged");
}

/* Measuring writes nothing: every PRINT_POLL elements it looks at the
 * interrupt flag, and at the stream, as writing would. A pipe whose reader
 * has gone (POLLERR) fails before the first write, which measuring a long
 * tensor's column width comes well before: writing to it (what, does not
 * matter) sets the stream's error. */
static bool measure_stop(sink *s, int64_t *n) {
  if (s->stop || ++*n % PRINT_POLL) return s->stop != 0;
  struct pollfd p = {.fd = fileno(s->f), .events = POLLOUT};
  if (p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) {
    fputc(' ', s->f);
    fflush(s->f);
  }
  s->stop = ferror(s->f) ? 1 : tc_interrupt_flag ? 2 : 0;
  if (s->stop) s->mark = out_buf;
  return s->stop != 0;
}

/* ---- text ---- */
#define EDGE 3                /* entries shown at each end of a long axis */
#define SUMMARY_MAX 100000    /* at most this many entries in a summary */
#define SUMMARY_THRESHOLD 1000

typedef struct tctx {
  sink out;
  const tc_tensor *t;
  const char *data;
  size_t es;                      /* bytes an element */
  elem_kind kind;
  const uint8_t *bounds;          /* fmt_len_bound by exponent field, or NULL */
  int64_t strides[TC_MAX_DIMS];   /* row-major strides of the host copy */
  bool summarise;
  int64_t edge;                   /* entries shown at each end of a long axis */
  int width, precision;
  int linewidth;                  /* wrap rows longer than this (0: never) */
  int col;                        /* the column the next character goes to */
  int64_t polled;                 /* elements measured */
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

/* fmt_len_bound for every exponent field of dt, or NULL where dt has no
 * bound (not a float); computed once a process. No bound reads 255. */
static const uint8_t *len_bounds(tc_dtype dt) {
  static uint8_t f64[2048], f32[256], f16[32], bf16[256];
  static bool done[4];
  uint8_t *b;
  int n, i;
  switch (dt) {
  case TC_DT_F64: b = f64, n = 2048, i = 0; break;
  case TC_DT_F32: b = f32, n = 256, i = 1; break;
  case TC_DT_F16: b = f16, n = 32, i = 2; break;
  case TC_DT_BF16: b = bf16, n = 256, i = 3; break;
  default: return NULL;
  }
  if (!done[i]) {
    for (int x = 0; x < n; x++) b[x] = fmt_len_bound(dt, x) ? (uint8_t)fmt_len_bound(dt, x) : 255;
    done[i] = true;
  }
  return b;
}

/* The bound of the float at e (its sign included). */
static int len_bound(const tctx *c, const char *e) {
  switch (c->es) {
  case 8: { uint64_t b; memcpy(&b, e, 8); return c->bounds[b >> 52 & 0x7ff] + (int)(b >> 63); }
  case 4: { uint32_t b; memcpy(&b, e, 4); return c->bounds[b >> 23 & 0xff] + (int)(b >> 31); }
  default: {
    uint16_t b;
    memcpy(&b, e, 2);
    return c->bounds[c->t->dtype == TC_DT_F16 ? b >> 10 & 0x1f : b >> 7 & 0xff] + (b >> 15);
  }
  }
}

static bool same_bits(const char *a, const char *b, size_t es) {
  switch (es) {
  case 8: { uint64_t x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x == y; }
  case 4: { uint32_t x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x == y; }
  case 2: { uint16_t x, y; memcpy(&x, a, 2); memcpy(&y, b, 2); return x == y; }
  default: return *a == *b;
  }
}

static void measure(tctx *c, int d, int64_t off) {
  for (int64_t i = 0; i < c->t->shape[d] && !measure_stop(&c->out, &c->polled); i++) {
    if (skipped(c, d, i)) { i = c->t->shape[d] - c->edge - 1; continue; }
    int64_t o = off + at(c, d, i) * c->strides[d];
    if (d == c->t->ndim - 1) {
      /* an element no wider than the widest so far, whatever its digits,
       * or with the bits of the one before (a broadcast's copies, runs of
       * zeros), leaves the width as it is */
      const char *e = c->data + o * (int64_t)c->es;
      if (c->bounds && len_bound(c, e) <= c->width) continue;
      if (c->last && same_bits(c->last, e, c->es)) continue;
      c->last = e;
      char b[ELEM_ROOM];
      int w = (int)(put_elem(b, e, c->t->dtype, c->kind, c->precision) - b);
      if (w > c->width) c->width = w;
    } else measure(c, d + 1, o);
  }
}

/* A row wraps, as NumPy's linewidth does, before an entry that would end
 * past the line width (with its ',' or closing brackets); the next line
 * starts under the row's first entry. */
static void emit(tctx *c, int d, int64_t off) {
  sink *s = &c->out;
  int nd = c->t->ndim;
  *s->p++ = '[';
  c->col++;
  for (int64_t i = 0; i < c->t->shape[d] && sink_room(s); i++) {
    bool skip = skipped(c, d, i);
    if (i > 0) {
      *s->p++ = ',';
      c->col++;
      if (d == nd - 1) {
        int w = skip ? 3 : c->width;
        bool last = i == c->t->shape[d] - 1;
        if (c->linewidth > 0 && c->col + 1 + w + (last ? d + 1 : 1) > c->linewidth) {
          *s->p++ = '\n';
          memset(s->p, ' ', (size_t)d + 1);
          s->p += d + 1;
          c->col = d + 1;
        } else {
          *s->p++ = ' ';
          c->col++;
        }
      } else {
        memset(s->p, '\n', (size_t)(nd - 1 - d));
        s->p += nd - 1 - d;
        memset(s->p, ' ', (size_t)d + 1);
        s->p += d + 1;
        c->col = d + 1;
      }
    }
    if (skip) {
      s->p = put_str(s->p, "...", 3);
      c->col += 3;
      i = c->t->shape[d] - c->edge - 1;
      continue;
    }
    int64_t o = off + at(c, d, i) * c->strides[d];
    if (d == nd - 1) {
      char b[ELEM_ROOM];
      int w = (int)(put_elem(b, c->data + o * (int64_t)c->es, c->t->dtype, c->kind, c->precision) - b);
      int pad = w < c->width ? c->width - w : 0;   /* right-aligned in the column's width (<= 24) */
      memset(s->p, ' ', 32);
      memcpy(s->p + pad, b, 32);
      s->p += pad + w;
      c->col += pad + w;
    } else emit(c, d + 1, o);
  }
  *s->p++ = ']';
  c->col++;
}

/* ---- plots ---- */
/* Braille and blocks when the locale's character set is UTF-8 (the first
 * of LC_ALL, LC_CTYPE and LANG that is set says), else ASCII. */
static bool locale_utf8(void) {
  const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    if (!v || !*v) continue;
    char low[64];
    size_t k = 0;
    for (; v[k] && k < sizeof low - 1; k++) low[k] = (char)(v[k] >= 'A' && v[k] <= 'Z' ? v[k] + 32 : v[k]);
    low[k] = 0;
    return strstr(low, "utf-8") || strstr(low, "utf8");
  }
  return false;
}

static char **plot_lines(const value *v, const print_opts *o, bool json, int *n, tc_err *err) {
  tc_plot_text t = {o->width ? o->width : 80, o->plot_height, o->color && !json, locale_utf8()};
  struct winsize ws;
  if (o->fit_terminal && !json && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    t.width = ws.ws_col;
    if (!t.height && ws.ws_row > 0) t.height = ws.ws_row * 2 / 3 < 10 ? 10 : ws.ws_row * 2 / 3 > 40 ? 40 : ws.ws_row * 2 / 3;
  }
  return tc_plot_lines(v->plot, &t, n, err);
}

static int print_plot(FILE *f, const value *v, const print_opts *o, tc_err *err) {
  int n;
  char **l = plot_lines(v, o, false, &n, err);
  if (!l) return -1;
  for (int i = 0; i < n; i++) fprintf(f, "%s\n", l[i]);
  tc_plot_lines_free(l, n);
  return 0;
}

int print_text(FILE *f, const value *v, const print_opts *o, tc_err *err) {
  char end = o->end ? o->end : '\n';
  if (v->kind == V_STR) { fprintf(f, "%s%c", v->s, end); return 0; }
  if (v->kind == V_PLOT) return print_plot(f, v, o, err);
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
  tctx c = {.t = t, .data = h, .es = tc_dtype_size(t->dtype), .kind = kind_of(t->dtype), .precision = o->precision,
            .summarise = summarise, .edge = edge, .linewidth = o->width};
  /* only worth its table where there are many elements to measure */
  if (o->precision <= 0 && s > PRINT_POLL) c.bounds = len_bounds(t->dtype);
  sink_open(&c.out, f, false);
  memcpy(c.strides, sst, sizeof c.strides);
  sink *out = &c.out;
  if (t->ndim == 0) out->p = put_elem(out->p, h, t->dtype, c.kind, o->precision);
  else {
    if (!empty) measure(&c, 0, 0);
    if (!out->stop) emit(&c, 0, 0);
    if (sink_room(out)) {
      out->p = put_str(out->p, "  ", 2);
      out->p = put_str(out->p, tc_dtype_name(t->dtype), strlen(tc_dtype_name(t->dtype)));
      sink_dims(out, t);
    }
  }
  *out->p++ = end;
  host_done(&hb);
  return sink_close(out, err);
}

/* ---- JSON ---- */
char *utf8_sanitize(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int k = utf8_len(p, SIZE_MAX);
    if (k) { memcpy(out + o, p, (size_t)k); o += (size_t)k; p += k; }
    else { memcpy(out + o, "\xEF\xBF\xBD", 3); o += 3; p++; }
  }
  out[o] = 0;
  return out;
}


/* The elements of the nest below axis d, from *pos on. */
static void json_nest(sink *s, const tc_tensor *t, elem_kind k, const char **pos, int d) {
  if (d == t->ndim) {   /* a 0-d tensor */
    s->p = put_json_elem(s->p, *pos, t->dtype, k);
    return;
  }
  *s->p++ = '[';
  if (d == t->ndim - 1) {
    size_t es = tc_dtype_size(t->dtype);
    const char *e = *pos;
    for (int64_t i = 0; i < t->shape[d] && sink_room(s); i++, e += es) {
      if (i) *s->p++ = ',';
      s->p = put_json_elem(s->p, e, t->dtype, k);
    }
    *pos = e;
  } else {
    for (int64_t i = 0; i < t->shape[d] && sink_room(s); i++) {
      if (i) *s->p++ = ',';
      json_nest(s, t, k, pos, d + 1);
    }
  }
  *s->p++ = ']';
}

/* A JSON string, escaped as cJSON escapes (so that output does not depend
 * on which wrote it), with invalid UTF-8 as U+FFFD. Allocates nothing:
 * reporting an error, out_of_memory included, must not need memory. */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int k = utf8_len(p, SIZE_MAX);
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

/* What a JSON outcome made under another system's semantics carries
 * (SPEC 19): ,"semantics":"S" and the warnings given since they were last
 * written, which this clears. */
static bool with_semantics = true;
void print_json_semantics(bool on) { with_semantics = on; }

static void json_semantics(FILE *f) {
  if (tc_get_semantics() == TC_SEM_TCALC) return;
  if (with_semantics) fprintf(f, ",\"semantics\":\"%s\"", tc_semantics_name(tc_get_semantics()));
  if (!tc_warning_count()) return;
  fputs(",\"warnings\":[", f);
  for (int i = 0; i < tc_warning_count(); i++) {
    if (i) fputc(',', f);
    json_str(f, tc_warning(i));
  }
  fputc(']', f);
  tc_warnings_clear();
}

int print_json(FILE *f, const value *v, tc_err *err) {
  if (v->kind == V_PLOT) {   /* the text lines, without colour: a golden file can hold them */
    int n;
    print_opts o = {.width = 80};
    char **l = plot_lines(v, &o, true, &n, err);
    if (!l) return -1;
    fputs("{\"ok\":true,\"type\":\"plot\",\"lines\":[", f);
    for (int i = 0; i < n; i++) {
      if (i) fputc(',', f);
      json_str(f, l[i]);
    }
    fputc(']', f);
    tc_plot_lines_free(l, n);
    json_semantics(f);
    fputs("}\n", f);
    return 0;
  }
  if (v->kind == V_STR) {
    fputs("{\"ok\":true,\"type\":\"string\",\"value\":", f);
    json_str(f, v->s);
    json_semantics(f);
    fputs("}\n", f);
    return 0;
  }
  tc_tensor *t = v->t;
  if (check_cells(t, err) != 0) return -1;
  hostbuf hb = {0};
  const char *h = tc_numel(t) ? host_data(t, &hb, err) : NULL;
  if (!h && tc_numel(t)) return -1;
  sink s;
  sink_open(&s, f, true);
  s.p = put_str(s.p, "{\"ok\":true,\"dtype\":\"", 20);
  s.p = put_str(s.p, tc_dtype_name(t->dtype), strlen(tc_dtype_name(t->dtype)));
  s.p = put_str(s.p, "\",\"shape\":", 10);
  sink_dims(&s, t);
  s.p = put_str(s.p, ",\"data\":", 8);
  json_nest(&s, t, kind_of(t->dtype), &h, 0);
  host_done(&hb);
  int rc = sink_close(&s, err);
  if (rc == 0) {
    json_semantics(f);
    fputs("}\n", f);
  }
  return rc;
}

void print_json_error(FILE *f, const tc_err *e, int line, int column, const trace_entry *tr, int ntr) {
  fputs("{\"ok\":false,\"error\":{\"code\":", f);
  json_str(f, tc_code_name(e->code));
  fputs(",\"message\":", f);
  char text[TC_ERR_TEXT];
  json_str(f, tc_err_text(e, text));
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
  fputs("}", f);
  json_semantics(f);
  fputs("}\n", f);
}
