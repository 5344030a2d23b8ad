/* Plots (SPEC 17): a plot is a value of its own. It holds the data reduced
 * to a fixed resolution in one pass over the input (per column the first,
 * last, smallest and largest value; bins; a grid of cell sums), never the
 * input tensor, so any size draws at once. Renderers draw one plot as text
 * lines (braille, blocks, ASCII; src/plot_draw.c) or as a PNG, SVG or PDF
 * file through cairo (src/plot_cairo.c). */
#ifndef TC_PLOT_H
#define TC_PLOT_H
#include "tcalc.h"

typedef enum { TC_PLOT_LINE, TC_PLOT_SCATTER, TC_PLOT_BARS, TC_PLOT_HEAT, TC_PLOT_SPY, TC_PLOT_SPARK } tc_plot_kind;

#define TC_PLOT_COLS 2048       /* columns a line plot keeps (its finest resolution) */
#define TC_PLOT_POINTS 4096     /* a scatter of at most this many points keeps them all */
#define TC_PLOT_GRID 512        /* cells a side a grid keeps (scatter beyond the points, heatmap, spy) */
#define TC_PLOT_SERIES 8        /* series one plot draws */
#define TC_PLOT_BARS_MAX 2048   /* bars one bar chart keeps */

/* A column of a line (or a point of a scatter or small line): x, and the y
 * values it covers: first and last in input order, smallest and largest.
 * flags: GAP, a NaN (or a value a log scale cannot show) since the previous
 * column's last value; PINF/NINF, +inf/-inf among its values; NONE, no
 * finite value (lo, hi, first, last are then meaningless). */
enum { TC_PT_GAP = 1, TC_PT_PINF = 2, TC_PT_NINF = 4, TC_PT_NONE = 8 };
typedef struct { double x, lo, hi, first, last, sum; int64_t n; unsigned char flags; } tc_plot_pt;   /* n, sum: its finite values */

typedef struct {
  int n;                  /* columns or points */
  tc_plot_pt *pt;
} tc_plot_series;

typedef struct tc_plot {
  tc_plot_kind kind;
  tc_op op;                    /* the function that made it */
  char *title, *xlabel, *ylabel;
  bool logy;
  int width, height;           /* asked for (0: the renderer's default) */
  tc_dtype xdt, ydt;           /* the inputs' dtypes, for tick labels */
  bool xindex;                 /* x is the position 0..n-1 */
  int64_t count;               /* the input's elements (of y) */
  int64_t nan, pinf, ninf, nonpos;   /* NaNs, infinities, values <= 0 on a log scale */
  double xmin, xmax, ymin, ymax;     /* the finite data's range; ymin > ymax: none */
  int nseries;
  tc_plot_series s[TC_PLOT_SERIES];
  /* scatter beyond TC_PLOT_POINTS: gw x gh cells, bit k set where series k has a point;
     spy: a nonzero element in the cell */
  int gw, gh;
  unsigned char *grid;
  /* heatmap: each cell's sum and count of finite values, and NaN count */
  double *sum;
  int64_t *cnt, *nans;
  int64_t rows, cols;          /* heatmap and spy: the matrix's shape */
  /* bars: values (hist: counts), and hist's edges lo..hi */
  int nbars;
  double *bar;
  double lo, hi;
  int64_t bar_count;           /* bar: values given (more than nbars: each bar the largest of its run) */
} tc_plot;

/* Where v lies in [lo, hi] (0 at lo, 1 at hi), and the value at fraction f
 * of it, without overflow for the widest finite range (-DBL_MAX, DBL_MAX). */
static inline double tc_plot_frac(double v, double lo, double hi) { return (v * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5); }
static inline double tc_plot_at(double f, double lo, double hi) { return lo * (1 - f) + hi * f; }

/* Options common to every plot function; NULL strings: none. */
typedef struct {
  const char *title, *xlabel, *ylabel;
  bool logy;
  int width, height;
} tc_plot_opts;

/* The plot functions: y (and x) checked and reduced; NULL with err set. */
tc_plot *tc_plot_line(tc_op op, tc_tensor *x, tc_tensor *y, const tc_plot_opts *o, tc_err *err);   /* plot, scatter, spark */
tc_plot *tc_plot_hist(tc_tensor *x, int64_t bins, const tc_plot_opts *o, tc_err *err);
tc_plot *tc_plot_bar(tc_tensor *v, const tc_plot_opts *o, tc_err *err);
tc_plot *tc_plot_grid(tc_op op, tc_tensor *m, const tc_plot_opts *o, tc_err *err);   /* heatmap, imshow, spy */
void tc_plot_free(tc_plot *p);

/* Text: lines (each a NUL-terminated UTF-8 or ASCII string, no newline),
 * *n of them; free with tc_plot_lines_free. width: columns in all (0: 80),
 * height: lines in all (0: the plot's own or 20); color: ANSI colours;
 * utf8: braille and blocks, else ASCII. */
typedef struct { int width, height; bool color, utf8; } tc_plot_text;
char **tc_plot_lines(const tc_plot *p, const tc_plot_text *t, int *n, tc_err *err);
void tc_plot_lines_free(char **lines, int n);

/* Writes the plot to path as PNG, SVG or PDF (by the extension), w x h
 * (0: 800 x 500; PNG pixels at 96 dpi, scaled by dpi / 96), atomically as
 * every save. */
int tc_plot_save(const tc_plot *p, const char *path, int w, int h, double dpi, tc_err *err);
/* Frees what cairo and fontconfig keep once a file was drawn (their font
 * caches), for leak checkers; at exit. */
void tc_plot_release(void);
#endif
