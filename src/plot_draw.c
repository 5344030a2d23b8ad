/* Plots as text lines (SPEC 17): braille dots (2 x 4 a character) for
 * lines, points and nonzero patterns, block eighths for bars and
 * sparklines, half blocks for heatmaps; ASCII when the locale is not UTF-8.
 * Each kind draws its plot area (rows of exactly the area's width), then
 * frame() puts the axes, tick labels, title, legend and notes around it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot.h"

/* ---- a growing string ---- */
typedef struct { char *s; size_t n, cap; bool oom; } sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = (b->n + n + 1) * 2;
    char *g = realloc(b->s, cap);
    if (!g) { b->oom = true; return; }
    b->s = g;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_rep(sbuf *b, const char *s, int k) { for (int i = 0; i < k; i++) sb_str(b, s); }
static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...) {
  char t[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t, sizeof t, fmt, ap);
  va_end(ap);
  sb_put(b, t, n < 0 ? 0 : (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
}

/* The end of an ANSI colour sequence starting at s (s itself when there is none). */
static const char *skip_sgr(const char *s) {
  if (*s != '\x1b') return s;
  const char *m = strchr(s, 'm');
  return m ? m + 1 : s + strlen(s);
}

/* Display columns of UTF-8 text (one a code point; colour sequences none). */
static int cols_of(const char *s) {
  int n = 0;
  while (*s) {
    const char *e = skip_sgr(s);
    if (e != s) { s = e; continue; }
    n += ((unsigned char)*s++ & 0xC0) != 0x80;
  }
  return n;
}

/* s cut to at most w columns, into b. */
static void sb_cut(sbuf *b, const char *s, int w) {
  const char *p = s;
  for (int n = 0; *p;) {
    const char *e = skip_sgr(p);
    if (e != p) { p = e; continue; }
    if (((unsigned char)*p & 0xC0) != 0x80 && n++ == w) break;
    p++;
  }
  sb_put(b, s, (size_t)(p - s));
}

/* ---- the lines ---- */
typedef struct {
  char **l;
  int n, cap;
  bool oom;
} lines;

static void add_line(lines *ls, sbuf *b) {
  if (b->oom || (!b->s && !(b->s = calloc(1, 1)))) ls->oom = true;
  if (!ls->oom && ls->n == ls->cap) {
    int cap = ls->cap ? ls->cap * 2 : 32;
    char **g = realloc(ls->l, sizeof *g * (size_t)cap);
    if (!g) ls->oom = true;
    else { ls->l = g; ls->cap = cap; }
  }
  if (ls->oom) { free(b->s); *b = (sbuf){0}; return; }
  ls->l[ls->n++] = b->s;
  *b = (sbuf){0};
}

static void add_text(lines *ls, const char *s, int w) {
  sbuf b = {0};
  sb_cut(&b, s, w);
  add_line(ls, &b);
}

void tc_plot_lines_free(char **l, int n) {
  for (int i = 0; i < n; i++) free(l[i]);
  free(l);
}

/* ---- labels ---- */
/* v as the shortest text that reads back to it in dtype dt, at most 6
 * significant digits (integers as integers). */
static void label(char *buf, size_t n, double v, tc_dtype dt) {
  if (v == 0) v = 0;   /* no -0 on an axis */
  if (tc_dtype_class(dt) != TC_CLASS_FLT && v == floor(v) && fabs(v) < 9.2e18) {
    snprintf(buf, n, "%lld", (long long)v);
    return;
  }
  bool narrow = dt != TC_DT_F64 && tc_dtype_class(dt) == TC_CLASS_FLT;
  bool plain = fabs(v) >= 1e-4 && fabs(v) < 1e6;   /* written without an exponent */
  for (int p = 1; p <= 6; p++) {
    snprintf(buf, n, "%.*g", p, v);
    double r = strtod(buf, NULL);
    if ((narrow ? (float)r == (float)v : r == v) && !(plain && strchr(buf, 'e'))) return;
  }
}

static void label_mid(char *buf, size_t n, double v) {
  if (v == 0) v = 0;
  snprintf(buf, n, "%.3g", v);
}

/* ---- glyphs ---- */
typedef struct {
  bool utf8, color;
} style;

static const char *const series_ascii = "*+ox#@%&";
static const int series_color[TC_PLOT_SERIES] = {34, 33, 32, 31, 35, 36, 94, 91};

static void color_on(sbuf *b, const style *st, int k) {
  if (st->color && k >= 0) sb_fmt(b, "\x1b[%dm", series_color[k % TC_PLOT_SERIES]);
}
static void color_off(sbuf *b, const style *st, int k) {
  if (st->color && k >= 0) sb_str(b, "\x1b[0m");
}

static void put_cp(sbuf *b, unsigned cp) {
  char u[4];
  if (cp < 0x80) { u[0] = (char)cp; sb_put(b, u, 1); return; }
  if (cp < 0x800) {
    u[0] = (char)(0xC0 | cp >> 6);
    u[1] = (char)(0x80 | (cp & 0x3F));
    sb_put(b, u, 2);
    return;
  }
  u[0] = (char)(0xE0 | cp >> 12);
  u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
  u[2] = (char)(0x80 | (cp & 0x3F));
  sb_put(b, u, 3);
}

/* ---- a braille canvas ---- */
typedef struct {
  int w, h;               /* characters */
  unsigned char *dots;    /* bits of each character's 2 x 4 dots */
  signed char *color;     /* the series last drawn in it, -1 none */
  unsigned short *mark;   /* a character drawn over it (a code point), 0 none */
} canvas;

static int canvas_init(canvas *c, int w, int h) {
  size_t n = (size_t)w * (size_t)h;
  c->w = w;
  c->h = h;
  c->dots = calloc(n ? n : 1, 1);
  c->color = malloc(n ? n : 1);
  c->mark = calloc(n ? n : 1, sizeof *c->mark);
  if (!c->dots || !c->color || !c->mark) return -1;
  memset(c->color, -1, n);
  return 0;
}

static void canvas_free(canvas *c) {
  free(c->dots);
  free(c->color);
  free(c->mark);
}

static void dot(canvas *c, int x, int y, int k) {
  static const unsigned char bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
  if (x < 0 || y < 0 || x >= 2 * c->w || y >= 4 * c->h) return;
  size_t i = (size_t)(y / 4) * (size_t)c->w + (size_t)(x / 2);
  c->dots[i] |= bit[y % 4][x % 2];
  c->color[i] = (signed char)k;
}

static void seg(canvas *c, int x0, int y0, int x1, int y1, int k) {
  int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
  for (int guard = 0; guard < 100000; guard++) {
    dot(c, x0, y0, k);
    if (x0 == x1 && y0 == y1) break;
    int e2 = 2 * e;
    if (e2 >= dy) { e += dy; x0 += sx; }
    if (e2 <= dx) { e += dx; y0 += sy; }
  }
}

/* Row r of the canvas as text, exactly w columns. */
static void canvas_row(sbuf *b, const canvas *c, int r, const style *st) {
  for (int x = 0; x < c->w; x++) {
    size_t i = (size_t)r * (size_t)c->w + (size_t)x;
    int k = c->color[i];
    if (c->mark[i]) {
      color_on(b, st, k);
      if (st->utf8) put_cp(b, c->mark[i]);
      else sb_str(b, c->mark[i] == 0x25B2 ? "^" : "v");
      color_off(b, st, k);
    } else if (!c->dots[i]) {
      if (st->utf8) put_cp(b, 0x2800);   /* BRAILLE PATTERN BLANK: as wide as a dot pattern in every font */
      else sb_str(b, " ");
    } else {
      color_on(b, st, k);
      if (st->utf8) put_cp(b, 0x2800u + c->dots[i]);
      else sb_put(b, series_ascii + (k < 0 ? 0 : k % TC_PLOT_SERIES), 1);
      color_off(b, st, k);
    }
  }
}

/* ---- the frame around a plot area ---- */
typedef struct {
  const tc_plot *p;
  style st;
  int W, H;                /* all of it: columns, lines */
  int pw, ph, lw;          /* the plot area, and the tick labels' column left of it */
  bool minimal;            /* narrower than 20 columns: no tick labels, legend or notes */
  double x0, x1, y0, y1;   /* the axes' ranges (y1 at the top; log10 on a log scale) */
  tc_dtype ydt;            /* the y axis' values */
  char yl[3][48], xl[3][48];   /* tick labels: top, middle, bottom; left, middle, right */
  const char *empty;       /* the area's message when there is nothing to draw */
  char notes[4][512];
  int nnotes;
  bool legend;
} view;

static int count_lines(const view *v) {
  return (v->p->title ? 1 : 0) + (v->p->ylabel ? 1 : 0) + 1 + (v->minimal ? 0 : 1) + (v->p->xlabel ? 1 : 0) +
         (v->legend && !v->minimal ? 1 : 0) + (v->minimal ? 0 : v->nnotes);
}

static void note(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(view *v, const char *fmt, ...) {
  if (v->nnotes == 4) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->notes[v->nnotes++], sizeof v->notes[0], fmt, ap);
  va_end(ap);
}

/* The notes every kind may have: values not drawn and where. */
static void common_notes(view *v) {
  const tc_plot *p = v->p;
  const char *up = v->st.utf8 ? "\u25B2" : "^", *down = v->st.utf8 ? "\u25BC" : "v";
  bool counted = p->kind == TC_PLOT_BARS && p->op == TC_OP_HIST;
  if (p->nan) note(v, "NaN: %lld value%s %s", (long long)p->nan, p->nan == 1 ? "" : "s", counted ? "not counted" : "not drawn (gaps)");
  int64_t inf = p->pinf + p->ninf;
  if (inf && (counted || p->kind == TC_PLOT_HEAT))
    note(v, "inf: %lld value%s not %s", (long long)inf, inf == 1 ? "" : "s", counted ? "counted" : "drawn");
  else if (p->pinf && p->ninf)
    note(v, "inf: %lld +inf clipped at the top (%s), %lld -inf at the bottom (%s)", (long long)p->pinf, up, (long long)p->ninf, down);
  else if (inf)
    note(v, "inf: %lld %s clipped at the %s (%s)", (long long)inf, p->pinf ? "+inf" : "-inf", p->pinf ? "top" : "bottom", p->pinf ? up : down);
  if (p->nonpos) note(v, "log scale: %lld value%s <= 0 not drawn", (long long)p->nonpos, p->nonpos == 1 ? "" : "s");
}

/* Sizes the area once the labels are known. */
static void layout(view *v) {
  v->minimal = v->W < 20;
  v->lw = 0;
  if (!v->minimal)
    for (int i = 0; i < 3; i++) {
      int w = cols_of(v->yl[i]) + 1;
      if (w > v->lw) v->lw = w;
    }
  v->pw = v->W - v->lw - 1;
  if (v->pw < 2) v->pw = 2;
  v->ph = v->H - count_lines(v);
  if (v->ph < 2) v->ph = 2;
}

static void pad_to(sbuf *b, int have, int want) {
  for (; have < want; have++) sb_str(b, " ");
}

/* One line with text centred over the plot area. */
static void centred(lines *ls, const view *v, const char *s) {
  sbuf b = {0};
  int w = cols_of(s), room = v->pw + 1, pad = v->lw + (w < room ? (room - w) / 2 : 0);
  if (pad + w > v->W) pad = w < v->W ? v->W - w : 0;   /* a long title: as far left as it needs */
  pad_to(&b, 0, pad);
  sb_cut(&b, s, v->W - pad);
  add_line(ls, &b);
}

static void axis_line(lines *ls, const view *v) {
  sbuf b = {0};
  const char *h = v->st.utf8 ? "\u2500" : "-", *t = v->st.utf8 ? "\u252C" : "+";
  pad_to(&b, 0, v->lw);
  sb_str(&b, v->st.utf8 ? "\u2514" : "+");
  for (int x = 0; x < v->pw; x++) sb_str(&b, x == 0 || x == v->pw - 1 || x == v->pw / 2 ? t : h);
  add_line(ls, &b);
  if (v->minimal) return;
  /* left label under the first column, right one ending under the last, the middle one centred if it fits */
  int n = v->lw + 1 + v->pw;
  char *row = malloc((size_t)n + 1);
  if (!row) { ls->oom = true; return; }
  memset(row, ' ', (size_t)n);
  row[n] = 0;
  int l = (int)strlen(v->xl[0]), r = (int)strlen(v->xl[2]), m = (int)strlen(v->xl[1]);
  int ls0 = v->lw + 1, rs = n - r < ls0 + l + 1 ? ls0 + l + 1 : n - r, ms = v->lw + 1 + v->pw / 2 - m / 2;
  memcpy(row + ls0, v->xl[0], (size_t)(ls0 + l <= n ? l : n - ls0));
  if (rs + r <= n) memcpy(row + rs, v->xl[2], (size_t)r);
  if (m && ms > ls0 + l && ms + m < rs) memcpy(row + ms, v->xl[1], (size_t)m);
  while (n > 0 && row[n - 1] == ' ') row[--n] = 0;
  add_text(ls, row, v->W + 64);
  free(row);
}

static void legend_line(lines *ls, const view *v) {
  sbuf b = {0};
  pad_to(&b, 0, v->lw + 1);
  for (int k = 0; k < v->p->nseries; k++) {
    if (k) sb_str(&b, "  ");
    color_on(&b, &v->st, k);
    if (v->st.utf8) sb_str(&b, "\u2501\u2501");
    else sb_rep(&b, (char[]){series_ascii[k], 0}, 2);
    color_off(&b, &v->st, k);
    sb_fmt(&b, " y[%d]", k);
  }
  add_line(ls, &b);
}

/* The lines around the area's ph rows (each exactly pw columns). */
static void frame(lines *ls, const view *v, char **area) {
  if (v->p->title) centred(ls, v, v->p->title);
  if (v->p->ylabel) add_text(ls, v->p->ylabel, v->W);
  int mid = (v->ph - 1) / 2;
  for (int r = 0; r < v->ph; r++) {
    sbuf b = {0};
    const char *lab = v->minimal ? "" : r == 0 ? v->yl[0] : r == v->ph - 1 ? v->yl[2] : r == mid ? v->yl[1] : "";
    pad_to(&b, 0, v->lw - 1 - cols_of(lab));
    sb_str(&b, lab);
    if (v->lw) sb_str(&b, " ");
    sb_str(&b, *lab ? (v->st.utf8 ? "\u2524" : "+") : (v->st.utf8 ? "\u2502" : "|"));
    sb_str(&b, area[r] ? area[r] : "");
    add_line(ls, &b);
  }
  axis_line(ls, v);
  if (v->p->xlabel) centred(ls, v, v->p->xlabel);
  if (v->minimal) return;
  if (v->legend) legend_line(ls, v);
  for (int i = 0; i < v->nnotes; i++) add_text(ls, v->notes[i], 1 << 20);   /* whole: they say what is not drawn */
}

/* The area's rows when there is nothing to draw: blank, the message in the middle. */
static void empty_area(const view *v, char **area) {
  for (int r = 0; r < v->ph; r++) {
    sbuf b = {0};
    int w = r == (v->ph - 1) / 2 ? cols_of(v->empty) : 0;
    if (w > v->pw) w = 0;
    int at = (v->pw - w) / 2;
    for (int x = 0; x < v->pw; x++) {
      if (w && x == at) { sb_str(&b, v->empty); x += w - 1; continue; }
      if (v->st.utf8) put_cp(&b, 0x2800);
      else sb_str(&b, " ");
    }
    area[r] = b.s;
  }
}

/* The area's rows from a canvas. */
static void canvas_area(const canvas *c, const view *v, char **area) {
  for (int r = 0; r < v->ph; r++) {
    sbuf b = {0};
    canvas_row(&b, c, r, &v->st);
    area[r] = b.s;
  }
}

/* Frames the area (when rc is 0), then frees it. */
static int finish(lines *ls, const view *v, char **area, int rc) {
  if (rc == 0) frame(ls, v, area);
  for (int r = 0; area && r < v->ph; r++) free(area[r]);
  free(area);
  return rc;
}

/* ---- lines and points ---- */
static double ty(const view *v, double y) { return v->p->logy ? log10(y) : y; }

static int dot_x(const view *v, double x) {
  if (!(v->x1 > v->x0)) return v->pw;   /* one x: the middle */
  return (int)lround(tc_plot_frac(x, v->x0, v->x1) * (2 * v->pw - 1));
}
static int dot_y(const view *v, double t) {   /* t already on the axis' scale */
  if (!(v->y1 > v->y0)) return 2 * v->ph;
  return (int)lround(tc_plot_frac(t, v->y1, v->y0) * (4 * v->ph - 1));
}

/* The y range and its labels (in the data's units); false when no value is finite. */
static bool y_axis(view *v, double lo, double hi, tc_dtype dt) {
  const tc_plot *p = v->p;
  v->ydt = dt;
  if (lo > hi) return false;
  v->y0 = p->logy ? log10(lo) : lo;
  v->y1 = p->logy ? log10(hi) : hi;
  if (v->y0 == v->y1) { v->y0 -= p->logy ? 0.5 : 1; v->y1 += p->logy ? 0.5 : 1; }   /* a constant: in the middle */
  double top = p->logy ? pow(10, v->y1) : v->y1, bot = p->logy ? pow(10, v->y0) : v->y0;
  label(v->yl[0], sizeof v->yl[0], lo == hi ? top : hi, dt);
  label(v->yl[2], sizeof v->yl[2], lo == hi ? bot : lo, dt);
  return true;
}

/* The middle row's label, once the area's height is known. */
static void y_mid(view *v) {
  int mid = (v->ph - 1) / 2;
  double t = tc_plot_at((4.0 * mid + 1.5) / (4 * v->ph - 1), v->y1, v->y0);
  t = v->p->logy ? pow(10, t) : t;
  if (tc_dtype_class(v->ydt) == TC_CLASS_FLT) label_mid(v->yl[1], sizeof v->yl[1], t);
  else if (v->y1 - v->y0 >= 4 || v->p->logy) label(v->yl[1], sizeof v->yl[1], round(t), v->ydt);   /* counts, integers: whole */
  else v->yl[1][0] = 0;   /* between two whole numbers */
}

static void x_axis(view *v, double lo, double hi, tc_dtype dt) {
  v->x0 = lo;
  v->x1 = hi;
  if (!(lo <= hi)) { v->x0 = 0; v->x1 = 1; return; }
  if (lo == hi) { v->x0 -= 1; v->x1 += 1; }
  label(v->xl[0], sizeof v->xl[0], v->x0, lo == hi ? TC_DT_F64 : dt);
  label(v->xl[2], sizeof v->xl[2], v->x1, lo == hi ? TC_DT_F64 : dt);
  double m = tc_plot_at((double)(v->pw / 2) / (v->pw - 1), v->x0, v->x1);
  if (tc_dtype_class(dt) != TC_CLASS_FLT) {
    if (v->x1 - v->x0 >= 4) label(v->xl[1], sizeof v->xl[1], round(m), dt);   /* a position, not between two */
  }
  else label_mid(v->xl[1], sizeof v->xl[1], m);
}

static void draw_series(canvas *c, const view *v, const tc_plot_series *s, int k, bool joined) {
  int px = 0, py = 0;
  bool prev = false;
  for (int i = 0; i < s->n; i++) {
    const tc_plot_pt *q = &s->pt[i];
    int x = dot_x(v, q->x);
    if (q->flags & (TC_PT_PINF | TC_PT_NINF)) {
      int cx = x / 2 < c->w ? x / 2 : c->w - 1;
      if (q->flags & TC_PT_PINF) c->mark[cx] = 0x25B2, c->color[cx] = (signed char)k;
      if (q->flags & TC_PT_NINF) c->mark[(size_t)(c->h - 1) * (size_t)c->w + (size_t)cx] = 0x25BC,
                                 c->color[(size_t)(c->h - 1) * (size_t)c->w + (size_t)cx] = (signed char)k;
    }
    if (q->flags & TC_PT_NONE) {
      if (q->flags & (TC_PT_PINF | TC_PT_NINF | TC_PT_GAP)) prev = false;
      continue;
    }
    if (q->flags & TC_PT_GAP) prev = false;
    int yf = dot_y(v, ty(v, q->first)), ylo = dot_y(v, ty(v, q->lo)), yhi = dot_y(v, ty(v, q->hi));
    if (joined && prev) seg(c, px, py, x, yf, k);
    if (joined || q->lo != q->hi) seg(c, x, yhi, x, ylo, k);
    else dot(c, x, yf, k);
    px = x;
    py = dot_y(v, ty(v, q->last));
    prev = true;
  }
}

static void draw_grid_points(canvas *c, const view *v) {
  const tc_plot *p = v->p;
  for (int gy = 0; gy < p->gh; gy++)
    for (int gx = 0; gx < p->gw; gx++) {
      unsigned bits = p->grid[(size_t)gy * (size_t)p->gw + (size_t)gx];
      if (!bits) continue;
      int k = 0;
      while (!(bits & 1u << k)) k++;
      double x = tc_plot_at((gx + 0.5) / p->gw, p->xmin, p->xmax), t = tc_plot_at((gy + 0.5) / p->gh, v->y0, v->y1);
      if (p->ymin == p->ymax) t = (v->y0 + v->y1) / 2;
      dot(c, dot_x(v, x), dot_y(v, t), k);
    }
}

static int draw_lines(lines *ls, view *v) {
  const tc_plot *p = v->p;
  bool any = y_axis(v, p->ymin, p->ymax, p->ydt);
  v->legend = p->nseries > 1;
  common_notes(v);
  layout(v);
  if (any) {
    y_mid(v);
    layout(v);   /* the middle label may be the widest */
  } else v->empty = p->count == 0 ? "no data (empty)" : "no finite values";
  x_axis(v, p->xmin, p->xmax, p->xindex ? TC_DT_I64 : p->xdt);
  char **area = calloc((size_t)v->ph, sizeof *area);
  canvas c = {0};
  int rc = area && canvas_init(&c, v->pw, v->ph) == 0 ? 0 : -1;
  if (rc == 0 && !any) empty_area(v, area);
  else if (rc == 0) {
    if (p->grid) draw_grid_points(&c, v);
    for (int k = 0; k < p->nseries && !p->grid; k++) draw_series(&c, v, &p->s[k], k, p->kind == TC_PLOT_LINE);
    canvas_area(&c, v, area);
  }
  canvas_free(&c);
  return finish(ls, v, area, rc);
}

/* ---- bars ---- */
/* The cell of rows [8r, 8r + 8) (in eighths from the top) a bar covering [a, b) fills. */
static void bar_cell(sbuf *b, const style *st, int r, double a, double e) {
  int top = 8 * r, lo = (int)lround(a), hi = (int)lround(e);
  if (lo < top) lo = top;
  if (hi > top + 8) hi = top + 8;
  int h = hi - lo;
  if (h <= 0) { sb_str(b, " "); return; }
  if (!st->utf8) { sb_str(b, h >= 4 ? "#" : "."); return; }
  if (h == 8) sb_str(b, "\u2588");
  else if (hi == top + 8) put_cp(b, 0x2580u + (unsigned)h);   /* lower h eighths: U+2581..U+2587 */
  else sb_str(b, h >= 4 ? "\u2580" : "\u2594");                /* hanging from the top: upper half, upper eighth */
}

/* The height of value y on the bar axis, in eighths from the top. */
static double bar_pos(const view *v, double y) {
  double t = v->p->logy ? (y >= 1 ? log10(y) : v->y0) : y;
  if (t > v->y1) t = v->y1;
  if (t < v->y0) t = v->y0;
  return tc_plot_frac(t, v->y1, v->y0) * 8 * v->ph;
}

/* Bar for column x of the area: the largest value of the bars it shows. */
static double bar_at(const view *v, int x, bool *drawn) {
  const tc_plot *p = v->p;
  int nb = p->nbars, b0, b1;
  if (nb <= v->pw) {   /* bar b takes columns [b * pw / nb, (b + 1) * pw / nb), the last one empty when all have 3 or more */
    b0 = (int)((int64_t)x * nb / v->pw);
    int end = (int)(((int64_t)(b0 + 1) * v->pw + nb - 1) / nb);
    *drawn = v->pw / nb < 3 || x < end - 1;
    b1 = b0 + 1;
  } else {
    b0 = (int)((int64_t)x * nb / v->pw);
    b1 = (int)((int64_t)(x + 1) * nb / v->pw);
    *drawn = true;
  }
  double m = NAN;
  for (int i = b0; i < b1 && i < nb; i++)
    if (m != m || p->bar[i] > m) m = p->bar[i];
  if (m != m) *drawn = false;
  return m;
}

static void bar_row(sbuf *b, const view *v, int r, double zero) {
  for (int x = 0; x < v->pw; x++) {
    bool drawn;
    double m = bar_at(v, x, &drawn);
    if (!drawn) { sb_str(b, " "); continue; }
    double e = bar_pos(v, m);
    if (m != 0 && fabs(e - zero) < 1) e = m > 0 ? zero - 1 : zero + 1;   /* a nonzero bar shows at least an eighth */
    if (m - m != 0 && r == (m > 0 ? 0 : v->ph - 1)) {   /* an infinity: clipped and marked */
      color_on(b, &v->st, 0);
      sb_str(b, v->st.utf8 ? (m > 0 ? "\u25B2" : "\u25BC") : (m > 0 ? "^" : "v"));
      color_off(b, &v->st, 0);
      continue;
    }
    color_on(b, &v->st, 0);
    bar_cell(b, &v->st, r, e < zero ? e : zero, e < zero ? zero : e);
    color_off(b, &v->st, 0);
  }
}

static int draw_bars(lines *ls, view *v) {
  const tc_plot *p = v->p;
  bool hist = p->op == TC_OP_HIST;
  double lo = 0, hi = 0;
  for (int i = 0; i < p->nbars; i++)
    if (p->bar[i] - p->bar[i] == 0) { if (p->bar[i] < lo) lo = p->bar[i]; if (p->bar[i] > hi) hi = p->bar[i]; }
  bool any = p->nbars > 0 && (hist ? p->count > p->nan + p->pinf + p->ninf : p->ymin <= p->ymax);
  if (p->logy) lo = 1;
  if (hi <= lo) hi = lo + 1;
  y_axis(v, lo, hi, hist ? TC_DT_I64 : p->ydt);
  common_notes(v);
  if (!hist && p->bar_count > p->nbars) note(v, "%lld values: each bar the largest of its run", (long long)p->bar_count);
  layout(v);
  y_mid(v);
  layout(v);   /* the middle label may be the widest */
  if (hist) x_axis(v, p->lo, p->hi, p->xdt);
  else x_axis(v, 0, (double)(p->bar_count ? p->bar_count - 1 : 0), TC_DT_I64);
  if (!any) {
    v->empty = p->count == 0 ? "no data (empty)" : "no finite values";
    memset(v->yl, 0, sizeof v->yl);
    layout(v);
  }
  char **area = calloc((size_t)v->ph, sizeof *area);
  if (!area) return -1;
  if (!any) empty_area(v, area);
  else
    for (int r = 0; r < v->ph; r++) {
      sbuf b = {0};
      bar_row(&b, v, r, bar_pos(v, p->logy ? 1 : 0));
      area[r] = b.s;
    }
  return finish(ls, v, area, 0);
}

/* ---- grids: heatmaps and nonzero patterns ---- */
/* xterm's 256 colours from dark purple through blue and green to yellow (after viridis). */
static const int heat_color[16] = {53, 54, 55, 61, 62, 25, 31, 30, 36, 35, 71, 77, 113, 149, 184, 226};
static const char heat_ramp[] = ".:-=+*#%@";

/* The cells of the grid one shown cell covers: [*a, *b) of n for cell i of m. */
static void cover(int i, int m, int n, int *a, int *b) {
  *a = (int)((int64_t)i * n / m);
  *b = (int)((int64_t)(i + 1) * n / m);
  if (*b <= *a) *b = *a + 1;
}

/* Shown cell (i, j) of an m x w grid: the mean of the finite values it covers; NaN when none. */
static double heat_value(const tc_plot *p, int i, int m, int j, int w) {
  int r0, r1, c0, c1;
  cover(i, m, p->gh, &r0, &r1);
  cover(j, w, p->gw, &c0, &c1);
  double s = 0;
  int64_t n = 0;
  for (int r = r0; r < r1; r++)
    for (int c = c0; c < c1; c++) {
      s += p->sum[(size_t)r * (size_t)p->gw + (size_t)c];
      n += p->cnt[(size_t)r * (size_t)p->gw + (size_t)c];
    }
  return n ? s / (double)n : NAN;
}

static int heat_level(const view *v, double x, int levels) {
  if (x != x) return -1;
  if (!(v->y1 > v->y0)) return levels / 2;
  int l = (int)(tc_plot_frac(x, v->y0, v->y1) * levels);
  return l < 0 ? 0 : l >= levels ? levels - 1 : l;
}

/* Shown cells for an r x c matrix in at most w x h cells, each element square
 * (sx cells wide for one tall): whole multiples when it is small. */
static void fit(int64_t r, int64_t c, int w, int h, int sx, int *cw, int *ch) {
  double s = fmin((double)w / (double)(c * sx), (double)h / (double)r);
  if (s >= 1) s = floor(s);
  *cw = (int)fmax(1, round((double)c * sx * s));
  *ch = (int)fmax(1, round((double)r * s));
  if (*cw > w) *cw = w;
  if (*ch > h) *ch = h;
}

static void heat_row(sbuf *b, const view *v, int r, int cw, int ch) {
  const tc_plot *p = v->p;
  for (int x = 0; x < cw; x++) {
    if (!v->st.color) {
      int l = heat_level(v, heat_value(p, r, ch, x, cw), 9);
      sb_put(b, l < 0 ? " " : heat_ramp + l, 1);
      continue;
    }
    int up = heat_level(v, heat_value(p, 2 * r, ch, x, cw), 16);
    int lo = 2 * r + 1 < ch ? heat_level(v, heat_value(p, 2 * r + 1, ch, x, cw), 16) : -1;
    if (up < 0 && lo < 0) { sb_str(b, " "); continue; }
    if (up >= 0) sb_fmt(b, "\x1b[38;5;%dm", heat_color[up]);
    if (lo >= 0) sb_fmt(b, "\x1b[48;5;%dm", heat_color[lo]);
    sb_str(b, up >= 0 ? (v->st.utf8 ? "\u2580" : "#") : (v->st.utf8 ? "\u2584" : "#"));
    sb_str(b, "\x1b[0m");
  }
}

/* The colour scale: the smallest value, the colours (or the ramp), the largest. */
static void heat_scale(const view *v, const char *lo, const char *hi, char *out, size_t n) {
  sbuf b = {0};
  sb_fmt(&b, "%s ", lo);
  for (int i = 0; i < (v->st.color ? 16 : 9); i++) {
    if (v->st.color) sb_fmt(&b, "\x1b[38;5;%dm%s\x1b[0m", heat_color[i], v->st.utf8 ? "\u2588" : "#");
    else sb_put(&b, heat_ramp + i, 1);
  }
  sb_fmt(&b, " %s", hi);
  snprintf(out, n, "%s", b.s ? b.s : "");
  free(b.s);
}

/* Heatmap and spy: the area is as wide as the matrix needs, labelled by row and column. */
static void grid_axes(view *v) {
  const tc_plot *p = v->p;
  snprintf(v->yl[0], sizeof v->yl[0], "0");
  snprintf(v->yl[2], sizeof v->yl[2], "%lld", (long long)(p->rows ? p->rows - 1 : 0));
  snprintf(v->xl[0], sizeof v->xl[0], "0");
  snprintf(v->xl[2], sizeof v->xl[2], "%lld", (long long)(p->cols ? p->cols - 1 : 0));
}

static int draw_heat(lines *ls, view *v) {
  const tc_plot *p = v->p;
  bool any = p->ymin <= p->ymax;
  grid_axes(v);
  common_notes(v);
  v->nnotes++;   /* the scale, made below */
  layout(v);
  int cw, ch;
  fit(p->rows, p->cols, v->pw, v->st.color ? 2 * v->ph : v->ph, v->st.color ? 1 : 2, &cw, &ch);
  if (any) {
    v->y0 = p->ymin;
    v->y1 = p->ymax;
    char top[48], bot[48];
    label(top, sizeof top, p->ymax, p->ydt);
    label(bot, sizeof bot, p->ymin, p->ydt);
    heat_scale(v, bot, top, v->notes[v->nnotes - 1], sizeof v->notes[0]);
  } else snprintf(v->notes[v->nnotes - 1], sizeof v->notes[0], "%s", p->count ? "no finite values" : "no data (empty)");
  v->yl[1][0] = 0;
  v->ph = v->st.color ? (ch + 1) / 2 : ch;
  v->pw = cw;
  char **area = calloc((size_t)v->ph, sizeof *area);
  if (!area) return -1;
  for (int r = 0; r < v->ph; r++) {
    sbuf b = {0};
    if (any && p->count) heat_row(&b, v, r, cw, ch);
    else sb_rep(&b, " ", cw);
    area[r] = b.s;
  }
  return finish(ls, v, area, 0);
}

static int draw_spy(lines *ls, view *v) {
  const tc_plot *p = v->p;
  grid_axes(v);
  layout(v);
  int dw, dh;
  fit(p->rows, p->cols, 2 * v->pw, 4 * v->ph, 1, &dw, &dh);
  v->pw = (dw + 1) / 2;
  v->ph = (dh + 3) / 4;
  canvas c = {0};
  char **area = calloc((size_t)v->ph, sizeof *area);
  int rc = area && canvas_init(&c, v->pw, v->ph) == 0 ? 0 : -1;
  for (int gy = 0; rc == 0 && p->count && gy < p->gh; gy++)
    for (int gx = 0; gx < p->gw; gx++) {
      if (!p->grid[(size_t)gy * (size_t)p->gw + (size_t)gx]) continue;
      int x0 = (int)((int64_t)gx * dw / p->gw), x1 = (int)((int64_t)(gx + 1) * dw / p->gw);
      int y0 = (int)((int64_t)gy * dh / p->gh), y1 = (int)((int64_t)(gy + 1) * dh / p->gh);
      for (int y = y0; y < (y1 > y0 ? y1 : y0 + 1); y++)
        for (int x = x0; x < (x1 > x0 ? x1 : x0 + 1); x++) dot(&c, x, y, 0);
    }
  if (rc == 0) canvas_area(&c, v, area);
  canvas_free(&c);
  return finish(ls, v, area, rc);
}

/* ---- sparklines ---- */
static const char spark_ascii[] = "_.-=+*#@";

static int draw_spark(lines *ls, const view *v) {
  const tc_plot *p = v->p;
  const tc_plot_series *s = &p->s[0];
  int w = s->n < v->W ? s->n : v->W;
  sbuf b = {0};
  if (w == 0) sb_str(&b, "(empty)");
  for (int x = 0; x < w; x++) {
    int a, e;
    cover(x, w, s->n, &a, &e);
    double sum = 0;
    int64_t n = 0;
    unsigned fl = 0;
    for (int i = a; i < e; i++) { sum += s->pt[i].sum; n += s->pt[i].n; fl |= s->pt[i].flags; }
    double m = n ? sum / (double)n : NAN;
    int l = !n ? ((fl & TC_PT_PINF) ? 7 : (fl & TC_PT_NINF) ? 0 : -1)
               : p->ymax > p->ymin ? (int)lround(tc_plot_frac(m, p->ymin, p->ymax) * 7) : 3;
    if (l < 0) sb_str(&b, " ");
    else if (v->st.utf8) put_cp(&b, 0x2581u + (unsigned)(l < 0 ? 0 : l > 7 ? 7 : l));
    else sb_put(&b, &spark_ascii[l > 7 ? 7 : l], 1);
  }
  add_line(ls, &b);
  return 0;
}

/* ---- the entry ---- */
char **tc_plot_lines(const tc_plot *p, const tc_plot_text *t, int *n, tc_err *err) {
  view v = {.p = p, .st = {t->utf8, t->color}};
  v.W = p->width > 0 ? p->width : t->width > 0 ? t->width : 80;
  v.H = p->height > 0 ? p->height : t->height > 0 ? t->height : 20;
  if (v.W < 4) v.W = 4;
  if (v.H < 4) v.H = 4;
  lines ls = {0};
  int rc;
  switch (p->kind) {
  case TC_PLOT_LINE: case TC_PLOT_SCATTER: rc = draw_lines(&ls, &v); break;
  case TC_PLOT_BARS: rc = draw_bars(&ls, &v); break;
  case TC_PLOT_HEAT: rc = draw_heat(&ls, &v); break;
  case TC_PLOT_SPY: rc = draw_spy(&ls, &v); break;
  default: rc = draw_spark(&ls, &v); break;
  }
  if (rc != 0 || ls.oom) {
    tc_plot_lines_free(ls.l, ls.n);
    tc_err_set(err, TC_E_OOM, (int)p->op, -1, "out of memory");
    return NULL;
  }
  *n = ls.n;
  return ls.l;
}
