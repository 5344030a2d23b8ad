/* Plots (SPEC 17): the inputs checked and reduced, in one pass over the
 * data, to what a plot keeps (src/plot.h). Values are read as f64 a block
 * at a time, so any dtype and any size takes the memory of one block a
 * thread. Large inputs are split into parts run on their own threads, each
 * writing its own columns, bins or grid rows; only counts are merged. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "plot.h"

#define RD_BLOCK ((int64_t)1 << 14)   /* elements a cursor converts at once: 128 KiB of f64 */
#define PAR_MIN ((int64_t)1 << 20)    /* elements below which one thread reads them all */
#define MAX_PARTS 64
/* a * b / c without overflow for any element count (GCC and Clang) */
__extension__ typedef __int128 i128;

/* ---- reading values as f64 ---- */
typedef struct {
  const char *base;             /* element 0 of a contiguous cpu tensor */
  tc_dtype dt;
  int64_t n;
} source;

/* One thread's reading position: a block of the source converted to f64. */
typedef struct {
  const source *s;
  double *buf;                  /* NULL for f64, read in place */
  int64_t lo, hi;
} cursor;

/* The contiguous cpu tensor of t (in *keep, the caller's to free) as a source. */
static int src_open(source *s, tc_tensor **keep, tc_tensor *t, tc_err *err) {
  tc_tensor *c = tc_to_engine(t, TC_ENGINE_CPU, err);
  *keep = c ? tc_contiguous(c, err) : NULL;
  tc_tensor_free(c);
  if (!*keep) return -1;
  *s = (source){tc_tensor_host_data(*keep), (*keep)->dtype, tc_numel(*keep)};
  return 0;
}

static bool cur_init(cursor *c, const source *s) {
  *c = (cursor){s, NULL, 0, 0};
  return s->dt == TC_DT_F64 || (c->buf = malloc(sizeof *c->buf * RD_BLOCK));
}

static void cur_free(cursor *c) { free(c->buf); }

/* A pointer to element i, and in *end the end (exclusive) of the elements
 * readable from it. */
static const double *cur_at(cursor *c, int64_t i, int64_t *end) {
  const source *s = c->s;
  if (!c->buf) {
    *end = s->n;
    return (const double *)(const void *)s->base + i;
  }
  if (i < c->lo || i >= c->hi) {
    int64_t len = s->n - i < RD_BLOCK ? s->n - i : RD_BLOCK;
    if (s->dt == TC_DT_F32) {   /* the usual case, converted in a loop the compiler vectorises */
      const float *f = (const float *)(const void *)s->base + i;
      for (int64_t j = 0; j < len; j++) c->buf[j] = f[j];
    } else {
      size_t es = tc_dtype_size(s->dt);
      for (int64_t j = 0; j < len; j++) c->buf[j] = tc_dtype_load_f64(s->dt, s->base + (size_t)(i + j) * es);
    }
    c->lo = i;
    c->hi = i + len;
  }
  *end = c->hi;
  return c->buf + (i - c->lo);
}

/* ---- what a part counts ---- */
typedef struct {
  int64_t nan, pinf, ninf, nonpos;
  double lo, hi;                /* finite values (positive ones on a log scale) */
  bool oom;
} stats;

static void stats_init(stats *s) { *s = (stats){0, 0, 0, 0, INFINITY, -INFINITY, false}; }

static void widen(double *lo, double *hi, double v) {
  if (v < *lo) *lo = v;
  if (v > *hi) *hi = v;
}

static void stats_merge(stats *d, const stats *s) {
  d->nan += s->nan;
  d->pinf += s->pinf;
  d->ninf += s->ninf;
  d->nonpos += s->nonpos;
  d->oom |= s->oom;
  if (s->lo <= s->hi) widen(&d->lo, &d->hi, s->lo), widen(&d->lo, &d->hi, s->hi);
}

/* A value that is not finite, counted; false for a finite one. */
static bool odd(stats *s, double v) {
  if (v - v == 0) return false;
  if (v != v) s->nan++;
  else if (v > 0) s->pinf++;
  else s->ninf++;
  return true;
}

/* ---- parts on threads ---- */
typedef void (*part_fn)(void *ctx, int part, int parts);
typedef struct { part_fn fn; void *ctx; int part, parts; } job;

static void *job_main(void *a) {
  job *j = a;
  j->fn(j->ctx, j->part, j->parts);
  return NULL;
}

/* fn for each part of work units, on as many threads as tc_get_threads()
 * says (one below PAR_MIN); a part whose thread cannot start runs here.
 * The number of parts. */
static int parts_for(int64_t work) {
  int t = work < PAR_MIN ? 1 : tc_get_threads();
  return t < 1 ? 1 : t > MAX_PARTS ? MAX_PARTS : t;
}

static void run_parts(int parts, part_fn fn, void *ctx) {
  pthread_t th[MAX_PARTS];
  job jobs[MAX_PARTS];
  bool started[MAX_PARTS] = {false};
  for (int k = 1; k < parts; k++) {
    jobs[k] = (job){fn, ctx, k, parts};
    started[k] = pthread_create(&th[k], NULL, job_main, &jobs[k]) == 0;
  }
  fn(ctx, 0, parts);
  for (int k = 1; k < parts; k++) {
    if (started[k]) pthread_join(th[k], NULL);
    else fn(ctx, k, parts);
  }
}

/* Part k of parts of [0, n) split evenly. */
static void split(int64_t n, int k, int parts, int64_t *lo, int64_t *hi) {
  *lo = (int64_t)((i128)n * k / parts);
  *hi = (int64_t)((i128)n * (k + 1) / parts);
}

/* The first element of column c of n elements in cols columns (element e is in e * cols / n). */
static int64_t col_start(int64_t c, int64_t n, int64_t cols) { return (int64_t)(((i128)c * n + cols - 1) / cols); }

/* After the parts: err for an interrupt or a part out of memory. */
static int parts_done(const stats *s, tc_op op, tc_err *err) {
  if (s->oom) return tc_err_set(err, TC_E_OOM, (int)op, -1, "out of memory");
  if (tc_interrupt_flag) return tc_err_set(err, TC_E_INTERRUPTED, (int)op, -1, "interrupted");
  return 0;
}

/* ---- the plot ---- */
static int fail(tc_err *err, tc_op op, const tc_tensor *t, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(tc_err *err, tc_op op, const tc_tensor *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char msg[sizeof err->msg];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tc_err_set(err, TC_E_BAD_ARG, (int)op, t ? (int)t->dtype : -1, "%s", msg);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void tc_plot_free(tc_plot *p) {
  if (!p) return;
  for (int i = 0; i < p->nseries; i++) free(p->s[i].pt);
  free(p->title);
  free(p->xlabel);
  free(p->ylabel);
  free(p->grid);
  free(p->sum);
  free(p->cnt);
  free(p->nans);
  free(p->bar);
  free(p);
}

static tc_plot *plot_new(tc_plot_kind kind, tc_op op, const tc_plot_opts *o, tc_err *err) {
  tc_plot *p = calloc(1, sizeof *p);
  if (p) {
    *p = (tc_plot){.kind = kind, .op = op, .logy = o->logy, .width = o->width, .height = o->height,
                   .xdt = TC_DT_I64, .ydt = TC_DT_F64, .xindex = true,
                   .ymin = INFINITY, .ymax = -INFINITY, .xmin = INFINITY, .xmax = -INFINITY};
    p->title = dup_or_null(o->title);
    p->xlabel = dup_or_null(o->xlabel);
    p->ylabel = dup_or_null(o->ylabel);
    if ((o->title && !p->title) || (o->xlabel && !p->xlabel) || (o->ylabel && !p->ylabel)) {
      tc_plot_free(p);
      p = NULL;
    }
  }
  if (!p) tc_err_set(err, TC_E_OOM, (int)op, -1, "out of memory");
  return p;
}

/* The plot's counts from the merged stats s. */
static void take_stats(tc_plot *p, const stats *s) {
  p->nan += s->nan;
  p->pinf += s->pinf;
  p->ninf += s->ninf;
  p->nonpos += s->nonpos;
  if (s->lo <= s->hi) widen(&p->ymin, &p->ymax, s->lo), widen(&p->ymin, &p->ymax, s->hi);
}

static void shape_text(char *buf, size_t n, const tc_tensor *t) { tc_format_dims(buf, n, t->ndim, t->shape); }

/* A numeric input: bool (and, later, complex) makes no sense on an axis. */
static int check_numeric(tc_op op, const tc_tensor *t, const char *name, tc_err *err) {
  if (t->dtype != TC_DT_BOOL) return 0;
  return fail(err, op, t, "%s is bool: plot numbers (cast first, e.g. i64(%s))", name, name);
}

static int oom(tc_plot *p, tc_err *err) { return tc_err_set(err, TC_E_OOM, (int)p->op, -1, "out of memory"); }

/* ---- lines, points, sparklines ---- */
/* What one value does to the column it falls in. */
static void pt_add(stats *st, bool logy, tc_plot_pt *c, double v, bool *gap) {
  if (logy && !(v > 0)) {
    if (v == v) st->nonpos++;
    else st->nan++;
    *gap = true;
    return;
  }
  if (v - v == 0) {
    if (c->flags & TC_PT_NONE) {
      c->flags &= (unsigned char)~TC_PT_NONE;
      c->first = c->lo = c->hi = v;
      if (*gap) c->flags |= TC_PT_GAP;
    } else widen(&c->lo, &c->hi, v);
    c->last = v;
    c->sum += v;
    c->n++;
    *gap = false;
    widen(&st->lo, &st->hi, v);
  } else if (v != v) {
    st->nan++;
    *gap = true;
  } else if (v > 0) {
    st->pinf++;
    c->flags |= TC_PT_PINF;
  } else {
    st->ninf++;
    c->flags |= TC_PT_NINF;
  }
}

static int64_t col_of(const tc_plot *p, double x, int64_t cols) {
  if (p->xmax <= p->xmin) return 0;
  double f = tc_plot_frac(x, p->xmin, p->xmax) * (double)cols;
  int64_t c = (int64_t)f;
  return c < 0 ? 0 : c >= cols ? cols - 1 : c;
}

/* One series: y's row (elements [off, off + n) of y) into columns, or one
 * point each (keep); x NULL: the position. Parts take columns in order
 * (position only: each column is a run of elements). */
typedef struct {
  tc_plot *p;
  tc_plot_series *s;
  const source *y, *x;
  int64_t off, n;
  bool keep;
  stats st[MAX_PARTS];
  bool trail[MAX_PARTS];        /* the part ended in a gap */
} line_job;

/* Elements [e0, e1) of the row, all in column c. */
static void column_run(line_job *j, cursor *cy, tc_plot_pt *c, int64_t e0, int64_t e1, stats *st, bool *gap) {
  for (int64_t i = e0, end; i < e1; i = end) {
    const double *v = cur_at(cy, j->off + i, &end);
    end = end - j->off < e1 ? end - j->off : e1;
    for (int64_t m = 0; m < end - i; m++) pt_add(st, j->p->logy, c, v[m], gap);
  }
}

static void line_values(line_job *j, cursor *cy, cursor *cx, int64_t e0, int64_t e1, stats *st, bool *gap) {
  int64_t cols = j->s->n;
  if (!j->keep && !cx) {   /* against the position: each column a run of elements */
    for (int64_t c = (int64_t)((i128)e0 * cols / j->n); c < cols && !tc_interrupt_flag; c++) {
      int64_t a = col_start(c, j->n, cols), b = col_start(c + 1, j->n, cols);
      if (a >= e1) break;
      column_run(j, cy, &j->s->pt[c], a, b, st, gap);
    }
    return;
  }
  for (int64_t i = e0, end; i < e1 && !tc_interrupt_flag; i = end) {
    const double *v = cur_at(cy, j->off + i, &end), *xv = NULL;
    end = end - j->off < e1 ? end - j->off : e1;
    if (cx) {
      int64_t xe;
      xv = cur_at(cx, i, &xe);
      if (xe < end) end = xe;
    }
    for (int64_t m = 0; m < end - i; m++) {
      int64_t e = i + m;
      if (xv && !(xv[m] - xv[m] == 0)) { *gap = true; continue; }   /* no place on the axis */
      int64_t c = j->keep ? e : col_of(j->p, xv[m], cols);
      if (j->keep && xv) j->s->pt[c].x = xv[m];
      pt_add(st, j->p->logy, &j->s->pt[c], v[m], gap);
    }
  }
}

static void line_part(void *ctx, int k, int parts) {
  line_job *j = ctx;
  int64_t cols = j->s->n, c0, c1;
  split(cols, k, parts, &c0, &c1);
  stats *st = &j->st[k];
  stats_init(st);
  cursor cy, cx;
  bool gap = false, oky = cur_init(&cy, j->y), okx = !j->x || cur_init(&cx, j->x);
  if (oky && okx)
    line_values(j, &cy, j->x ? &cx : NULL, j->keep ? c0 : col_start(c0, j->n, cols), j->keep ? c1 : col_start(c1, j->n, cols), st, &gap);
  st->oom = !oky || !okx;
  j->trail[k] = gap;
  cur_free(&cy);
  if (j->x) cur_free(&cx);
}

/* A NaN at the end of a part is a gap before the next part's first value. */
static void join_gaps(line_job *j, int parts) {
  bool carry = false;
  for (int k = 0; k < parts; k++) {
    int64_t c0, c1;
    split(j->s->n, k, parts, &c0, &c1);
    bool found = false;
    for (int64_t c = c0; carry && c < c1 && !found; c++)
      if (!(j->s->pt[c].flags & TC_PT_NONE)) j->s->pt[c].flags |= TC_PT_GAP, found = true;
    for (int64_t c = c0; !found && c < c1; c++) found = !(j->s->pt[c].flags & TC_PT_NONE);
    carry = found ? j->trail[k] : carry || j->trail[k];
  }
}

static int reduce_series(tc_plot *p, int k, const source *y, int64_t off, int64_t n, const source *x, bool keep,
                         tc_err *err) {
  int cols = keep ? (int)n : TC_PLOT_COLS;
  tc_plot_series *s = &p->s[k];
  if (!(s->pt = calloc((size_t)(cols ? cols : 1), sizeof *s->pt))) return oom(p, err);
  s->n = cols;
  for (int c = 0; c < cols; c++) {
    s->pt[c].flags = TC_PT_NONE;
    s->pt[c].x = keep ? (double)c : x ? tc_plot_at((c + 0.5) / cols, p->xmin, p->xmax)
                                      : ((double)col_start(c, n, cols) + (double)col_start(c + 1, n, cols) - 1) / 2;
  }
  line_job *j = calloc(1, sizeof *j);
  if (!j) return oom(p, err);
  *j = (line_job){.p = p, .s = s, .y = y, .x = x, .off = off, .n = n, .keep = keep};
  int parts = x || keep ? 1 : parts_for(n);
  run_parts(parts, line_part, j);
  join_gaps(j, parts);
  stats all;
  stats_init(&all);
  for (int q = 0; q < parts; q++) stats_merge(&all, &j->st[q]);
  free(j);
  take_stats(p, &all);
  return parts_done(&all, p->op, err);
}

/* The finite range of x (all of it: a point whose y is NaN still spans the axis). */
static int x_range(tc_plot *p, const source *x, tc_err *err) {
  cursor c;
  if (!cur_init(&c, x)) return oom(p, err);
  for (int64_t i = 0, end; i < x->n && !tc_interrupt_flag; i = end) {
    const double *v = cur_at(&c, i, &end);
    for (int64_t j = 0; j < end - i; j++)
      if (v[j] - v[j] == 0) widen(&p->xmin, &p->xmax, v[j]);
  }
  cur_free(&c);
  stats none;
  stats_init(&none);
  return parts_done(&none, p->op, err);
}

/* The range of y's finite values (positive ones on a log scale), counting the others. */
static void y_range(const tc_plot *p, cursor *c, stats *st) {
  for (int64_t i = 0, end; i < c->s->n && !tc_interrupt_flag; i = end) {
    const double *v = cur_at(c, i, &end);
    for (int64_t j = 0; j < end - i; j++) {
      double e = v[j];
      if (p->logy && !(e > 0)) {
        if (e == e) st->nonpos++;
        else st->nan++;
      } else if (!odd(st, e)) widen(&st->lo, &st->hi, e);
    }
  }
}

/* Cell of y value e of a scatter grid (rows from the bottom). */
static int64_t grid_row(const tc_plot *p, double e) {
  if (!(p->ymax > p->ymin)) return TC_PLOT_GRID / 2;
  double f = p->logy ? tc_plot_frac(log10(e), log10(p->ymin), log10(p->ymax)) : tc_plot_frac(e, p->ymin, p->ymax);
  int64_t g = (int64_t)(f * TC_PLOT_GRID);
  return g < 0 ? 0 : g >= TC_PLOT_GRID ? TC_PLOT_GRID - 1 : g;
}

/* A scatter of more points than it keeps: a grid of cells, bit k set
 * where series k has a point, over the finite range of x and y. */
static int scatter_grid(tc_plot *p, const source *y, int64_t rows, int64_t n, const source *x, tc_err *err) {
  cursor cy, cx;
  stats st;
  stats_init(&st);
  bool ok = cur_init(&cy, y), okx = !x || cur_init(&cx, x);
  if (ok && okx) y_range(p, &cy, &st);
  take_stats(p, &st);
  p->gw = p->gh = TC_PLOT_GRID;
  p->nseries = (int)rows;
  if (ok && okx && !(p->grid = calloc((size_t)TC_PLOT_GRID * TC_PLOT_GRID, 1))) ok = false;
  for (int64_t k = 0; ok && okx && k < rows; k++)
    for (int64_t i = 0, end; i < n && !tc_interrupt_flag; i = end) {
      const double *v = cur_at(&cy, k * n + i, &end), *xv = NULL;
      end = end - k * n < n ? end - k * n : n;
      int64_t xe;
      if (x && ((xv = cur_at(&cx, i, &xe)), xe < end)) end = xe;
      for (int64_t j = 0; j < end - i; j++) {
        double e = v[j], xe2 = x ? xv[j] : (double)(i + j);
        if (!(e - e == 0) || !(xe2 - xe2 == 0) || (p->logy && !(e > 0))) continue;
        p->grid[(size_t)grid_row(p, e) * TC_PLOT_GRID + (size_t)col_of(p, xe2, TC_PLOT_GRID)] |= (unsigned char)(1u << k);
      }
    }
  cur_free(&cy);
  if (x) cur_free(&cx);
  st.oom = !ok || !okx;
  return parts_done(&st, p->op, err);
}

static int line_shapes(tc_op op, tc_tensor *x, tc_tensor *y, tc_err *err) {
  char sh[TC_MAX_DIMS * 24];
  if (check_numeric(op, y, "y", err) || (x && check_numeric(op, x, "x", err))) return -1;
  if (y->ndim < 1 || y->ndim > 2 || (op == TC_OP_SPARK && y->ndim != 1)) {
    shape_text(sh, sizeof sh, y);
    return fail(err, op, y, op == TC_OP_SPARK ? "y must be 1-D, not shape %s" : "y must be 1-D or 2-D (one series a row), not shape %s", sh);
  }
  if (y->ndim == 2 && y->shape[0] > TC_PLOT_SERIES)
    return fail(err, op, y, "y has %lld rows: at most %d series", (long long)y->shape[0], TC_PLOT_SERIES);
  if (!x) return 0;
  if (x->ndim != 1) {
    shape_text(sh, sizeof sh, x);
    return fail(err, op, x, "x must be 1-D, not shape %s", sh);
  }
  if (x->shape[0] != y->shape[y->ndim - 1])
    return fail(err, op, y, "x has %lld values and y %lld: they must be the same length", (long long)x->shape[0],
                (long long)y->shape[y->ndim - 1]);
  return 0;
}

static int line_series(tc_plot *p, const source *y, int64_t rows, int64_t n, const source *x, tc_err *err) {
  bool keep = n <= (p->kind == TC_PLOT_SCATTER ? TC_PLOT_POINTS : TC_PLOT_COLS);
  if (!keep && p->kind == TC_PLOT_SCATTER) return scatter_grid(p, y, rows, n, x, err);
  int rc = 0;
  for (int64_t k = 0; k < rows && rc == 0; k++) {
    p->nseries++;
    rc = reduce_series(p, (int)k, y, k * n, n, x, keep, err);
  }
  return rc;
}

tc_plot *tc_plot_line(tc_op op, tc_tensor *x, tc_tensor *y, const tc_plot_opts *o, tc_err *err) {
  if (line_shapes(op, x, y, err)) return NULL;
  tc_plot *p = plot_new(op == TC_OP_SCATTER_PLOT ? TC_PLOT_SCATTER : op == TC_OP_SPARK ? TC_PLOT_SPARK : TC_PLOT_LINE, op, o, err);
  if (!p) return NULL;
  source sy, sx;
  tc_tensor *ky = NULL, *kx = NULL;
  int64_t n = y->shape[y->ndim - 1], rows = y->ndim == 2 ? y->shape[0] : 1;
  int rc = src_open(&sy, &ky, y, err);
  if (rc == 0 && x) rc = src_open(&sx, &kx, x, err);
  p->ydt = y->dtype;
  p->count = tc_numel(y);
  if (x) {
    p->xdt = x->dtype;
    p->xindex = false;
    if (rc == 0) rc = x_range(p, &sx, err);
  } else if (n > 0) {
    p->xmin = 0;
    p->xmax = (double)(n - 1);
  }
  if (rc == 0) rc = line_series(p, &sy, rows, n, x ? &sx : NULL, err);
  tc_tensor_free(ky);
  tc_tensor_free(kx);
  if (rc != 0) { tc_plot_free(p); return NULL; }
  return p;
}

/* ---- bars ---- */
/* NumPy's bin of v (finite, in [lo, hi]): (v - lo) * bins / (hi - lo)
 * truncated, then moved by one where it disagrees with the edges
 * linspace(lo, hi, bins + 1), as histogram() bins (src/fn.c). */
static int64_t bin_of(double v, double lo, double hi, int64_t bins, double norm, double step) {
  int64_t b = (int64_t)((v - lo) * norm);
  if (b > bins - 1) b = bins - 1;
  if (b < 0) b = 0;
  if (v < lo + (double)b * step) b--;
  else if (b != bins - 1 && v >= (b + 1 == bins ? hi : lo + (double)(b + 1) * step)) b++;
  return b;
}

/* hist's two passes over x: its finite range, then each part's counts. */
typedef struct {
  const source *x;
  bool range;                  /* the first pass */
  int64_t bins;
  double lo, hi, norm, step;
  int64_t *counts;             /* parts x bins */
  stats st[MAX_PARTS];
} hist_job;

static void hist_part(void *ctx, int k, int parts) {
  hist_job *j = ctx;
  int64_t e0, e1;
  split(j->x->n, k, parts, &e0, &e1);
  stats *st = &j->st[k];
  stats_init(st);
  cursor c;
  if (!cur_init(&c, j->x)) { st->oom = true; return; }
  int64_t *cnt = j->counts ? j->counts + (size_t)k * (size_t)j->bins : NULL;
  for (int64_t i = e0, end; i < e1 && !tc_interrupt_flag; i = end) {
    const double *v = cur_at(&c, i, &end);
    if (end > e1) end = e1;
    for (int64_t m = 0; m < end - i; m++) {
      double e = v[m];
      if (j->range) {
        if (!odd(st, e)) widen(&st->lo, &st->hi, e);
      } else if (e - e == 0) cnt[bin_of(e, j->lo, j->hi, j->bins, j->norm, j->step)]++;
    }
  }
  cur_free(&c);
}

static int hist_bins(tc_plot *p, hist_job *j, tc_err *err) {
  int parts = parts_for(j->x->n);
  run_parts(parts, hist_part, j);
  stats all;
  stats_init(&all);
  for (int k = 0; k < parts; k++) stats_merge(&all, &j->st[k]);
  if (parts_done(&all, p->op, err) != 0) return -1;
  p->nan = all.nan, p->pinf = all.pinf, p->ninf = all.ninf;
  p->lo = all.lo, p->hi = all.hi;
  if (p->lo > p->hi) p->lo = 0, p->hi = 1;   /* NumPy's range for no data */
  if (p->lo == p->hi) p->lo -= 0.5, p->hi += 0.5;
  *j = (hist_job){.x = j->x, .bins = j->bins, .lo = p->lo, .hi = p->hi};
  j->norm = (double)j->bins / (p->hi - p->lo);
  j->step = (p->hi - p->lo) / (double)j->bins;
  if (!(j->counts = calloc((size_t)parts * (size_t)j->bins, sizeof *j->counts))) return oom(p, err);
  run_parts(parts, hist_part, j);
  for (int k = 0; k < parts; k++) {
    all.oom |= j->st[k].oom;
    for (int64_t b = 0; b < j->bins; b++) p->bar[b] += (double)j->counts[(size_t)k * (size_t)j->bins + (size_t)b];
  }
  free(j->counts);
  return parts_done(&all, p->op, err);
}

tc_plot *tc_plot_hist(tc_tensor *x, int64_t bins, const tc_plot_opts *o, tc_err *err) {
  const tc_op op = TC_OP_HIST;
  if (check_numeric(op, x, "x", err)) return NULL;
  if (bins <= 0 || bins > TC_PLOT_BARS_MAX) {
    fail(err, op, x, "bins must be 1 to %d, not %lld", TC_PLOT_BARS_MAX, (long long)bins);
    return NULL;
  }
  tc_plot *p = plot_new(TC_PLOT_BARS, op, o, err);
  source s;
  tc_tensor *keep = NULL;
  hist_job *j = p ? calloc(1, sizeof *j) : NULL;
  int rc = !p ? -1 : !j || !(p->bar = calloc((size_t)bins, sizeof *p->bar)) ? oom(p, err) : src_open(&s, &keep, x, err);
  if (rc == 0) {
    p->ydt = TC_DT_I64;
    p->xdt = x->dtype;
    p->xindex = false;
    p->count = s.n;
    p->nbars = (int)bins;
    *j = (hist_job){.x = &s, .range = true, .bins = bins};
    rc = hist_bins(p, j, err);
  }
  free(j);
  tc_tensor_free(keep);
  if (rc != 0) { tc_plot_free(p); return NULL; }
  return p;
}

tc_plot *tc_plot_bar(tc_tensor *v, const tc_plot_opts *o, tc_err *err) {
  const tc_op op = TC_OP_BAR;
  char sh[TC_MAX_DIMS * 24];
  if (check_numeric(op, v, "v", err)) return NULL;
  if (v->ndim != 1) {
    shape_text(sh, sizeof sh, v);
    fail(err, op, v, "v must be 1-D, not shape %s", sh);
    return NULL;
  }
  tc_plot *p = plot_new(TC_PLOT_BARS, op, o, err);
  source s;
  tc_tensor *keep = NULL;
  cursor c = {0};
  if (!p || src_open(&s, &keep, v, err) != 0) { tc_plot_free(p); return NULL; }
  p->ydt = v->dtype;
  p->count = p->bar_count = s.n;
  p->nbars = s.n < TC_PLOT_BARS_MAX ? (int)s.n : TC_PLOT_BARS_MAX;
  stats st;
  stats_init(&st);
  st.oom = !(p->bar = malloc(sizeof *p->bar * (size_t)(p->nbars ? p->nbars : 1))) || !cur_init(&c, &s);
  for (int b = 0; !st.oom && b < p->nbars; b++) p->bar[b] = NAN;
  for (int b = 0; !st.oom && b < p->nbars && !tc_interrupt_flag; b++)   /* bar b: a run of values */
    for (int64_t i = col_start(b, s.n, p->nbars), e1 = col_start(b + 1, s.n, p->nbars), end; i < e1; i = end) {
      const double *x = cur_at(&c, i, &end);
      if (end > e1) end = e1;
      for (int64_t j = 0; j < end - i; j++) {
        double e = x[j];
        if (e != e) { st.nan++; continue; }
        if (!odd(&st, e)) widen(&st.lo, &st.hi, e);
        if (p->bar[b] != p->bar[b] || e > p->bar[b]) p->bar[b] = e;   /* a run's largest */
      }
    }
  cur_free(&c);
  tc_tensor_free(keep);
  take_stats(p, &st);
  if (parts_done(&st, op, err) != 0) { tc_plot_free(p); return NULL; }
  return p;
}

/* ---- grids: heatmaps and nonzero patterns ---- */
/* Parts take grid rows in order, so each writes cells of its own. */
typedef struct {
  tc_plot *p;
  const source *m;
  bool heat;
  int *colmap;                 /* each matrix column's grid column, when not too many */
  stats st[MAX_PARTS];
} grid_job;

static void grid_add(tc_plot *p, bool heat, stats *st, size_t cell, double v) {
  if (!heat) {
    if (v != 0) p->grid[cell] = 1;   /* NaN is nonzero, as in count_nonzero */
  } else if (!odd(st, v)) {
    p->sum[cell] += v;
    p->cnt[cell]++;
    widen(&st->lo, &st->hi, v);
  } else p->nans[cell]++;
}

static void grid_part(void *ctx, int k, int parts) {
  grid_job *j = ctx;
  tc_plot *p = j->p;
  int64_t g0, g1, C = p->cols;
  split(p->gh, k, parts, &g0, &g1);
  int64_t e0 = col_start(g0, p->rows, p->gh) * C, e1 = col_start(g1, p->rows, p->gh) * C;
  stats *st = &j->st[k];
  stats_init(st);
  cursor c;
  if (!cur_init(&c, j->m)) { st->oom = true; return; }
  int64_t row = e0 / (C ? C : 1), col = 0;
  for (int64_t i = e0, end; i < e1 && !tc_interrupt_flag; i = end) {
    const double *v = cur_at(&c, i, &end);
    if (end > e1) end = e1;
    for (int64_t m = 0; m < end - i; m++) {
      size_t gc = j->colmap ? (size_t)j->colmap[col] : (size_t)((i128)col * p->gw / C);
      grid_add(p, j->heat, st, (size_t)(row * p->gh / p->rows) * (size_t)p->gw + gc, v[m]);
      if (++col == C) col = 0, row++;
    }
  }
  cur_free(&c);
}

static int grid_fill(tc_plot *p, const source *m, bool heat, tc_err *err) {
  size_t cells = (size_t)p->gw * (size_t)p->gh + 1;
  if (heat ? !(p->sum = calloc(cells, sizeof *p->sum)) || !(p->cnt = calloc(cells, sizeof *p->cnt)) ||
                 !(p->nans = calloc(cells, sizeof *p->nans))
           : !(p->grid = calloc(cells, 1)))
    return oom(p, err);
  if (m->n == 0) return 0;   /* no rows or no columns */
  grid_job *j = calloc(1, sizeof *j);
  if (!j) return oom(p, err);
  *j = (grid_job){.p = p, .m = m, .heat = heat};
  if (p->cols <= ((int64_t)1 << 22) && (j->colmap = malloc(sizeof *j->colmap * (size_t)(p->cols + 1))))
    for (int64_t c = 0; c < p->cols; c++) j->colmap[c] = (int)(c * p->gw / p->cols);
  int parts = parts_for(m->n);
  if (parts > p->gh) parts = p->gh > 0 ? p->gh : 1;
  run_parts(parts, grid_part, j);
  stats all;
  stats_init(&all);
  for (int k = 0; k < parts; k++) stats_merge(&all, &j->st[k]);
  free(j->colmap);
  free(j);
  take_stats(p, &all);
  return parts_done(&all, p->op, err);
}

tc_plot *tc_plot_grid(tc_op op, tc_tensor *m, const tc_plot_opts *o, tc_err *err) {
  char sh[TC_MAX_DIMS * 24];
  bool heat = op != TC_OP_SPY;
  if (heat && check_numeric(op, m, "M", err)) return NULL;
  if (m->ndim != 2) {
    shape_text(sh, sizeof sh, m);
    fail(err, op, m, "M must be 2-D, not shape %s", sh);
    return NULL;
  }
  tc_plot *p = plot_new(heat ? TC_PLOT_HEAT : TC_PLOT_SPY, op, o, err);
  source s;
  tc_tensor *keep = NULL;
  if (!p || src_open(&s, &keep, m, err) != 0) { tc_plot_free(p); return NULL; }
  p->ydt = m->dtype;
  p->rows = m->shape[0];
  p->cols = m->shape[1];
  p->count = s.n;
  p->gh = (int)(p->rows < TC_PLOT_GRID ? p->rows : TC_PLOT_GRID);
  p->gw = (int)(p->cols < TC_PLOT_GRID ? p->cols : TC_PLOT_GRID);
  int rc = grid_fill(p, &s, heat, err);
  tc_tensor_free(keep);
  if (rc != 0) { tc_plot_free(p); return NULL; }
  return p;
}

/* Plots are drawn on the cpu whatever the engine (another engine's tensor
 * is copied to it first), so only the cpu claims their rows: no other
 * engine runs them, and there is nothing of theirs to compare. Every dtype
 * but bool, which only spy takes (its nonzero pattern). */
bool tc_plot_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  return eid == TC_ENGINE_CPU && (dt != TC_DT_BOOL || op == TC_OP_SPY);
}
