/* Plots (SPEC 17): what a plot keeps of its data, checked against the data
 * itself. hist's bins are histogram()'s; a line's columns hold the first,
 * last, smallest and largest value of their elements; the result is the
 * same on 1 or several threads; drawn lines have the width asked for. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tcalc.h"
#include "plot.h"
#include "tt.h"

static tc_err err;
static void setup(void) { tc_err_clear(&err); tc_set_threads(0); }
static void teardown(void) { tc_set_threads(0); }
TestSuite(plot, .init = setup, .fini = teardown);

static uint64_t rng = 0x9E3779B97F4A7C15u;
static double unit(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1p-53;
}

/* n values of a random walk, with some NaN and infinities when odd is set. */
static double *walk(int64_t n, bool odd) {
  double *v = malloc(sizeof *v * (size_t)n), s = 0;
  for (int64_t i = 0; i < n; i++) {
    s += unit() - 0.5;
    v[i] = s;
    if (odd && i % 977 == 5) v[i] = NAN;
    if (odd && i % 1999 == 7) v[i] = i % 2 ? INFINITY : -INFINITY;
  }
  return v;
}

static tc_tensor *vec(const double *v, int64_t n, tc_dtype dt) {
  tc_tensor *t = tc_tensor_from_host(TC_DT_F64, 1, &n, v, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  tc_tensor *c = tc_cast(t, dt, &err);
  tc_tensor_free(t);
  cr_assert_not_null(c, "%s", tt_msg(&err));
  return c;
}

Test(plot, hist_bins_are_histograms) {
  const tc_dtype dts[] = {TC_DT_F64, TC_DT_F32, TC_DT_I32, TC_DT_F16};
  const int64_t bins[] = {1, 7, 10, 64};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
      int64_t n = tt_sampled() ? 30001 : 300001;
      double *v = walk(n, false);
      for (int64_t i = 0; i < n; i++) v[i] *= 40;
      tc_tensor *x = vec(v, n, dts[d]);
      tc_plot_opts o = {0};
      tc_plot *p = tc_plot_hist(x, bins[b], &o, &err);
      cr_assert_not_null(p, "%s", tt_msg(&err));
      tc_tensor *h = tc_histogram(x, bins[b], false, 0, false, 0, &err);
      cr_assert_not_null(h, "%s", tt_msg(&err));
      int64_t *c = malloc(sizeof *c * (size_t)bins[b]);
      cr_assert_eq(tc_tensor_to_host(h, c, &err), 0);
      for (int64_t i = 0; i < bins[b]; i++)
        cr_assert_eq((int64_t)p->bar[i], c[i], "%s bins=%lld: bin %lld has %g, histogram %lld", tc_dtype_name(dts[d]),
                     (long long)bins[b], (long long)i, p->bar[i], (long long)c[i]);
      free(c);
      tc_tensor_free(h);
      tc_plot_free(p);
      tc_tensor_free(x);
      free(v);
    }
}

/* Column c of n values in TC_PLOT_COLS columns holds elements [ceil(c n / C), ceil((c + 1) n / C)). */
static void check_columns(const tc_plot *p, const double *v, int64_t n) {
  const tc_plot_series *s = &p->s[0];
  cr_assert_eq(s->n, TC_PLOT_COLS);
  for (int c = 0; c < s->n; c++) {
    int64_t a = ((int64_t)c * n + TC_PLOT_COLS - 1) / TC_PLOT_COLS, b = ((int64_t)(c + 1) * n + TC_PLOT_COLS - 1) / TC_PLOT_COLS;
    double lo = INFINITY, hi = -INFINITY, first = NAN, last = NAN;
    int64_t k = 0;
    for (int64_t i = a; i < b; i++)
      if (isfinite(v[i])) {
        if (!k++) first = v[i];
        last = v[i];
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
      }
    const tc_plot_pt *q = &s->pt[c];
    cr_assert_eq(q->n, k, "column %d: %lld values, want %lld", c, (long long)q->n, (long long)k);
    if (!k) continue;
    cr_assert(q->lo == lo && q->hi == hi && q->first == first && q->last == last,
              "column %d: [%g %g %g %g], want [%g %g %g %g]", c, q->first, q->last, q->lo, q->hi, first, last, lo, hi);
  }
}

Test(plot, columns_keep_first_last_min_max) {
  int64_t n = tt_sampled() ? 300007 : 3000017;
  double *v = walk(n, true);
  tc_tensor *y = vec(v, n, TC_DT_F64);
  tc_plot_opts o = {0};
  tc_plot *p = tc_plot_line(TC_OP_PLOT, NULL, y, &o, &err);
  cr_assert_not_null(p, "%s", tt_msg(&err));
  check_columns(p, v, n);
  int64_t nan = 0, pinf = 0, ninf = 0;
  for (int64_t i = 0; i < n; i++) nan += isnan(v[i]), pinf += v[i] == INFINITY, ninf += v[i] == -INFINITY;
  cr_assert(p->nan == nan && p->pinf == pinf && p->ninf == ninf, "counts %lld %lld %lld, want %lld %lld %lld",
            (long long)p->nan, (long long)p->pinf, (long long)p->ninf, (long long)nan, (long long)pinf, (long long)ninf);
  tc_plot_free(p);
  tc_tensor_free(y);
  free(v);
}

/* The text of a plot made with t threads. */
static char *drawn(tc_op op, tc_tensor *y, int threads) {
  tc_set_threads(threads);
  tc_plot_opts o = {.title = "t", .width = 70, .height = 16};
  tc_plot *p = op == TC_OP_HIST ? tc_plot_hist(y, 33, &o, &err)
               : op == TC_OP_HEATMAP || op == TC_OP_SPY ? tc_plot_grid(op, y, &o, &err)
                                                       : tc_plot_line(op, NULL, y, &o, &err);
  cr_assert_not_null(p, "%s", tt_msg(&err));
  tc_plot_text t = {80, 20, true, true};
  int n;
  char **l = tc_plot_lines(p, &t, &n, &err);
  cr_assert_not_null(l, "%s", tt_msg(&err));
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(l[i]) + 1;
  char *s = calloc(len, 1);
  for (int i = 0; i < n; i++) strcat(strcat(s, l[i]), "\n");
  tc_plot_lines_free(l, n);
  tc_plot_free(p);
  return s;
}

Test(plot, same_on_any_thread_count) {
  int64_t n = tt_sampled() ? 1200000 : 4000000;   /* more than one part's worth (PAR_MIN, 2^20) either way */
  double *v = walk(n, true);
  tc_tensor *y = vec(v, n, TC_DT_F32);
  int64_t shape[2] = {n / 2000, 2000};
  tc_tensor *m = tc_reshape(y, 2, shape, &err);
  cr_assert_not_null(m, "%s", tt_msg(&err));
  const tc_op ops[] = {TC_OP_PLOT, TC_OP_HIST, TC_OP_SPARK, TC_OP_HEATMAP, TC_OP_SPY};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    tc_tensor *in = ops[k] == TC_OP_HEATMAP || ops[k] == TC_OP_SPY ? m : y;
    char *one = drawn(ops[k], in, 1), *three = drawn(ops[k], in, 3);
    cr_assert_str_eq(one, three, "%s differs on 1 and 3 threads", tc_op_name(ops[k]));
    free(one);
    free(three);
  }
  tc_tensor_free(m);
  tc_tensor_free(y);
  free(v);
}

/* Display columns of a line, colour sequences left out. */
static int width_of(const char *s) {
  int n = 0;
  while (*s) {
    if (*s == '\x1b') { s = strchr(s, 'm') + 1; continue; }
    n += ((unsigned char)*s++ & 0xC0) != 0x80;
  }
  return n;
}

Test(plot, lines_fit_the_width) {
  double v[] = {1, 4, 2, 8, 5, 7};
  tc_tensor *y = vec(v, 6, TC_DT_F64);
  const int widths[] = {4, 12, 19, 20, 40, 133};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
    for (int color = 0; color < 2; color++) {
      tc_plot_opts o = {.title = "a title longer than a narrow plot", .xlabel = "x", .ylabel = "y", .height = 12};
      tc_plot *p = tc_plot_line(TC_OP_PLOT, NULL, y, &o, &err);
      cr_assert_not_null(p);
      tc_plot_text t = {widths[w], 0, color, true};
      int n;
      char **l = tc_plot_lines(p, &t, &n, &err);
      cr_assert_not_null(l);
      cr_assert_eq(n, 12, "width %d: %d lines, not the 12 asked for", widths[w], n);
      for (int i = 0; i < n; i++)
        cr_assert_leq(width_of(l[i]), widths[w] < 4 ? 4 : widths[w], "width %d, line %d: \"%s\"", widths[w], i, l[i]);
      tc_plot_lines_free(l, n);
      tc_plot_free(p);
    }
  tc_tensor_free(y);
}
