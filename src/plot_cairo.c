/* Plots as PNG, SVG or PDF files through cairo (SPEC 17): the layout of the
 * text plot (title, the area with its frame and tick labels at both ends
 * and the middle, x label, legend, notes) with anti-aliased lines and real
 * text. Written as every save is (src/io.c): a temporary file renamed over
 * the name. */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "io_int.h"
#include "plot.h"

typedef enum { F_PNG, F_SVG, F_PDF } file_kind;

static const double series_rgb[TC_PLOT_SERIES][3] = {
    {0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
    {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50}};
/* viridis at 0, 1/4, 1/2, 3/4, 1 */
static const double viridis[5][3] = {{0.267, 0.005, 0.329}, {0.230, 0.322, 0.546}, {0.128, 0.567, 0.551},
                                     {0.369, 0.789, 0.383}, {0.993, 0.906, 0.144}};

typedef struct {
  const tc_plot *p;
  cairo_t *cr;
  double L, T, W, H;         /* the plot area */
  double x0, x1, y0, y1;     /* its ranges (y on the axis' scale) */
} fig;

static double fx(const fig *f, double x) { return f->x1 > f->x0 ? f->L + tc_plot_frac(x, f->x0, f->x1) * f->W : f->L + f->W / 2; }
static double fy(const fig *f, double t) { return f->y1 > f->y0 ? f->T + tc_plot_frac(t, f->y1, f->y0) * f->H : f->T + f->H / 2; }
static double scale_y(const fig *f, double y) { return f->p->logy ? log10(y) : y; }

static void set_rgb(cairo_t *cr, const double *c) { cairo_set_source_rgb(cr, c[0], c[1], c[2]); }

static void text_at(cairo_t *cr, const char *s, double x, double y, double align) {   /* align 0 left, .5 centre, 1 right */
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_move_to(cr, x - align * e.x_advance, y);
  cairo_show_text(cr, s);
}

static void num(char *b, size_t n, double v, bool integer, bool mid) {
  if (v == 0 || (mid && fabs(v) < 1e-12)) v = 0;
  if (integer && v == floor(v) && fabs(v) < 1e15) snprintf(b, n, "%.0f", v);
  else snprintf(b, n, mid ? "%.3g" : "%.6g", v);
}

/* Frame and tick labels at both ends and the middle of each axis. */
static void axes(fig *f, bool xint, bool yint, bool rows) {
  cairo_t *cr = f->cr;
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, f->L, f->T, f->W, f->H);
  cairo_stroke(cr);
  cairo_set_font_size(cr, 11);
  char b[64];
  for (int i = 0; i < 3; i++) {
    double t = tc_plot_at(i / 2.0, f->y0, f->y1), x = tc_plot_at(i / 2.0, f->x0, f->x1);
    double shown = rows ? f->y1 - (t - f->y0) : f->p->logy ? pow(10, t) : t;
    num(b, sizeof b, shown, yint && (i != 1 || rows), i == 1);
    text_at(cr, b, f->L - 6, fy(f, t) + 4, 1);
    num(b, sizeof b, x, xint && (i != 1 || (f->x1 - f->x0) >= 4), i == 1);
    text_at(cr, b, fx(f, x), f->T + f->H + 16, i / 2.0);
  }
}

static void draw_series(fig *f, const tc_plot_series *s, int k, bool lines) {
  cairo_t *cr = f->cr;
  set_rgb(cr, series_rgb[k % TC_PLOT_SERIES]);
  cairo_set_line_width(cr, 1.5);
  bool prev = false;
  for (int i = 0; i < s->n; i++) {
    const tc_plot_pt *q = &s->pt[i];
    double x = fx(f, q->x);
    if (q->flags & TC_PT_PINF) text_at(cr, "\u25B2", x, f->T + 10, 0.5);
    if (q->flags & TC_PT_NINF) text_at(cr, "\u25BC", x, f->T + f->H - 2, 0.5);
    if ((q->flags & TC_PT_GAP) || ((q->flags & TC_PT_NONE) && (q->flags & (TC_PT_PINF | TC_PT_NINF)))) prev = false;
    if (q->flags & TC_PT_NONE) continue;
    if (!lines) {
      cairo_new_sub_path(cr);
      cairo_arc(cr, x, fy(f, scale_y(f, q->first)), 2, 0, 2 * M_PI);
      cairo_fill(cr);
      continue;
    }
    if (prev) cairo_line_to(cr, x, fy(f, scale_y(f, q->first)));
    else cairo_move_to(cr, x, fy(f, scale_y(f, q->first)));
    if (q->lo != q->hi) {
      cairo_line_to(cr, x, fy(f, scale_y(f, q->lo)));
      cairo_line_to(cr, x, fy(f, scale_y(f, q->hi)));
    }
    cairo_line_to(cr, x, fy(f, scale_y(f, q->last)));
    prev = true;
  }
  if (lines) cairo_stroke(cr);
}

static void draw_grid_cells(fig *f, bool heat) {
  const tc_plot *p = f->p;
  double cw = f->W / p->gw, ch = f->H / p->gh;
  for (int r = 0; r < p->gh; r++)
    for (int c = 0; c < p->gw; c++) {
      size_t i = (size_t)r * (size_t)p->gw + (size_t)c;
      /* a scatter's grid counts rows from the bottom; heatmap and spy from the top */
      double top = p->kind == TC_PLOT_SCATTER ? f->T + f->H - (r + 1) * ch : f->T + r * ch;
      if (heat) {
        if (!p->cnt[i]) continue;
        double t = p->ymax > p->ymin ? tc_plot_frac(p->sum[i] / (double)p->cnt[i], p->ymin, p->ymax) : 0.5;
        int j = t >= 1 ? 3 : (int)(t * 4);
        double u = t * 4 - j, rgb[3];
        for (int m = 0; m < 3; m++) rgb[m] = viridis[j][m] + (viridis[j + 1][m] - viridis[j][m]) * u;
        set_rgb(f->cr, rgb);
      } else if (!p->grid[i]) continue;
      else {
        int k = 0;
        while (!(p->grid[i] & 1u << k)) k++;
        set_rgb(f->cr, series_rgb[p->kind == TC_PLOT_SCATTER ? k : 0]);
      }
      cairo_rectangle(f->cr, f->L + c * cw, top, cw + (heat ? 0.5 : 0), ch + (heat ? 0.5 : 0));
      cairo_fill(f->cr);
    }
}

static void draw_bars(fig *f) {
  const tc_plot *p = f->p;
  double bw = f->W / p->nbars, zero = fy(f, 0);   /* log scale: log10(1), the axis' foot */
  set_rgb(f->cr, series_rgb[0]);
  for (int i = 0; i < p->nbars; i++) {
    double v = p->bar[i];
    if (v != v) continue;
    double t = p->logy ? (v >= 1 ? log10(v) : 0) : v;
    t = t > f->y1 ? f->y1 : t < f->y0 ? f->y0 : t;
    double y = fy(f, t);
    cairo_rectangle(f->cr, f->L + i * bw + bw * 0.05, y < zero ? y : zero, bw * 0.9, fabs(zero - y));
    cairo_fill(f->cr);
  }
}

/* The axes' ranges, as the text plot sets them. */
static void ranges(fig *f) {
  const tc_plot *p = f->p;
  f->x0 = p->xmin, f->x1 = p->xmax;
  f->y0 = p->logy ? log10(p->ymin) : p->ymin, f->y1 = p->logy ? log10(p->ymax) : p->ymax;
  if (p->kind == TC_PLOT_HEAT || p->kind == TC_PLOT_SPY) {
    f->x0 = 0, f->x1 = (double)(p->cols > 1 ? p->cols - 1 : 1);
    f->y0 = 0, f->y1 = (double)(p->rows > 1 ? p->rows - 1 : 1);
  } else if (p->kind == TC_PLOT_BARS) {
    double lo = 0, hi = 0;
    for (int i = 0; i < p->nbars; i++)
      if (p->bar[i] - p->bar[i] == 0) lo = fmin(lo, p->bar[i]), hi = fmax(hi, p->bar[i]);
    f->y0 = p->logy ? 0 : lo;
    f->y1 = p->logy ? (hi > 1 ? log10(hi) : 1) : hi > lo ? hi : lo + 1;
    f->x0 = p->op == TC_OP_HIST ? p->lo : 0;
    f->x1 = p->op == TC_OP_HIST ? p->hi : (double)p->nbars;
  }
  if (!(f->x0 <= f->x1)) f->x0 = 0, f->x1 = 1;
  if (f->x0 == f->x1) f->x0 -= 1, f->x1 += 1;
  if (!(f->y0 <= f->y1)) f->y0 = 0, f->y1 = 1;
  if (f->y0 == f->y1) f->y0 -= p->logy ? 0.5 : 1, f->y1 += p->logy ? 0.5 : 1;
}

static void words(fig *f, double h) {
  const tc_plot *p = f->p;
  cairo_t *cr = f->cr;
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 15);
  if (p->title) text_at(cr, p->title, f->L + f->W / 2, 24, 0.5);
  cairo_set_font_size(cr, 12);
  if (p->xlabel) text_at(cr, p->xlabel, f->L + f->W / 2, f->T + f->H + 34, 0.5);
  if (p->ylabel) {
    cairo_save(cr);
    cairo_translate(cr, 16, f->T + f->H / 2);
    cairo_rotate(cr, -M_PI / 2);
    text_at(cr, p->ylabel, 0, 0, 0.5);
    cairo_restore(cr);
  }
  for (int k = 0; k < p->nseries && p->nseries > 1; k++) {   /* the legend, top right */
    char b[16];
    snprintf(b, sizeof b, "y[%d]", k);
    set_rgb(cr, series_rgb[k]);
    cairo_rectangle(cr, f->L + f->W - 70, f->T + 8 + 16 * k, 14, 3);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, b, f->L + f->W - 50, f->T + 14 + 16 * k, 0);
  }
  char note[160] = "";
  int64_t inf = p->pinf + p->ninf;
  if (p->nan || inf || p->nonpos)
    snprintf(note, sizeof note, "not drawn: %lld NaN, %lld inf (clipped, marked), %lld <= 0 on the log scale", (long long)p->nan,
             (long long)inf, (long long)p->nonpos);
  if (!(p->ymin <= p->ymax) && p->kind != TC_PLOT_SPY && p->kind != TC_PLOT_BARS)
    snprintf(note, sizeof note, "%s", p->count ? "no finite values" : "no data (empty)");
  cairo_set_font_size(cr, 10);
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  if (*note) text_at(cr, note, 8, h - 6, 0);
}

static void draw(const tc_plot *p, cairo_t *cr, double w, double h) {
  fig f = {.p = p, .cr = cr, .L = 80, .T = 36, .W = w - 100, .H = h - 36 - 58};
  if (f.W < 10) f.W = 10;
  if (f.H < 10) f.H = 10;
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  ranges(&f);
  cairo_save(cr);
  cairo_rectangle(cr, f.L, f.T, f.W, f.H);
  cairo_clip(cr);
  switch (p->kind) {
  case TC_PLOT_BARS: draw_bars(&f); break;
  case TC_PLOT_HEAT: draw_grid_cells(&f, true); break;
  case TC_PLOT_SPY: draw_grid_cells(&f, false); break;
  default:
    if (p->grid) draw_grid_cells(&f, false);
    for (int k = 0; k < p->nseries && !p->grid; k++) draw_series(&f, &p->s[k], k, p->kind != TC_PLOT_SCATTER);
  }
  cairo_restore(cr);
  bool grid = p->kind == TC_PLOT_HEAT || p->kind == TC_PLOT_SPY;
  axes(&f, grid || p->xindex || tc_dtype_class(p->xdt) != TC_CLASS_FLT || (p->kind == TC_PLOT_BARS && p->op != TC_OP_HIST),
       grid || (p->kind == TC_PLOT_BARS && p->op == TC_OP_HIST), grid);
  words(&f, h);
}

/* Whether a file was drawn: cairo and fontconfig then hold caches. */
static bool drawn;

void tc_plot_release(void) {
  if (!drawn) return;
  cairo_debug_reset_static_data();
  FcFini();
  drawn = false;
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int n) {
  return fwrite(data, 1, n, closure) == n ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static int file_kind_of(const char *path, file_kind *k) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return -1;
  if (!strcasecmp(dot, ".png")) *k = F_PNG;
  else if (!strcasecmp(dot, ".svg")) *k = F_SVG;
  else if (!strcasecmp(dot, ".pdf")) *k = F_PDF;
  else return -1;
  return 0;
}

/* Draws on a surface of the file's kind writing to f; a cairo status. */
static cairo_status_t render(const tc_plot *p, file_kind k, FILE *f, int w, int h, double dpi) {
  cairo_surface_t *s;
  double z = k == F_PNG ? dpi / 96 : 1;
  if (k == F_PNG) s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)lround(w * z), (int)lround(h * z));
  else if (k == F_SVG) s = cairo_svg_surface_create_for_stream(to_file, f, w, h);
  else s = cairo_pdf_surface_create_for_stream(to_file, f, w, h);
  cairo_t *cr = cairo_create(s);
  drawn = true;
  cairo_scale(cr, z, z);
  draw(p, cr, w, h);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  if (st == CAIRO_STATUS_SUCCESS && k == F_PNG) st = cairo_surface_write_to_png_stream(s, to_file, f);
  cairo_surface_finish(s);
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
  cairo_surface_destroy(s);
  return st;
}

int tc_plot_save(const tc_plot *p, const char *path, int w, int h, double dpi, tc_err *err) {
  const tc_op op = TC_OP_SAVE_PLOT;
  file_kind k;
  if (file_kind_of(path, &k) != 0)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "'%s': unknown extension; save_plot writes .png, .svg or .pdf", path);
  if (w <= 0) w = 800;
  if (h <= 0) h = 500;
  if (w < 40 || h < 40 || w > 20000 || h > 20000 || !(dpi >= 10 && dpi <= 1200) || (double)w * h * (dpi / 96) * (dpi / 96) > 4e8)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "size must be 40 to 20000 a side and dpi 10 to 1200 (at most 4e8 pixels), not [%d, %d] at %g", w, h, dpi);
  tc_writer wr;
  if (tc_open_write(&wr, path, op, err) != 0) return -1;
  cairo_status_t st = render(p, k, wr.f, w, h, dpi);
  int rc = st == CAIRO_STATUS_SUCCESS ? 0 : tc_io_fail(err, op, -1, path, "cannot draw: %s", cairo_status_to_string(st));
  return tc_close_write(&wr, rc, err);
}
