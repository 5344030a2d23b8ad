/* The plot functions in the language (SPEC 17), reached from call_op() by
 * their family, TC_FAM_PLOT: each makes a plot value (src/plot.h) that the
 * printer draws; with file= (or through save_plot) it is written as a PNG,
 * SVG or PDF file instead, and the call's value is none. */
#include <string.h>
#include "eval_int.h"
#include "plot.h"

/* The position of op's parameter name, -1 when it has none. */
static int param(const args *a, const char *name) {
  for (int i = 0; i < a->g->n; i++)
    if (!strcmp(a->g->names[i], name)) return i;
  return -1;
}

static const char *str_arg(const args *a, const char *name) {
  int i = param(a, name);
  return i >= 0 && a->b[i].given ? a->b[i].s : NULL;
}

/* width= or height=: absent (0), else lo..hi. */
static int size_arg(ctx *c, const args *a, const char *name, int hi, int *out) {
  int i = param(a, name);
  *out = 0;
  if (i < 0 || !a->b[i].given) return 0;
  int64_t v = a->b[i].i;
  if (v < 1 || v > hi) {
    tc_err_set(c->err, TC_E_BAD_ARG, -1, -1, "%s must be 1 to %d, not %lld", name, hi, (long long)v);
    err_at(c->err, a->at[i]->start, a->at[i]->end);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static tc_plot *make(ctx *c, tc_op op, args *a) {
  barg *b = a->b;
  tc_plot_opts o = {str_arg(a, "title"), str_arg(a, "xlabel"), str_arg(a, "ylabel"), false, 0, 0};
  int lg = param(a, "logy");
  o.logy = lg >= 0 && b[lg].b;
  if (size_arg(c, a, "width", 10000, &o.width) != 0 || size_arg(c, a, "height", 1000, &o.height) != 0) return NULL;
  switch (op) {
  case TC_OP_PLOT: case TC_OP_SCATTER_PLOT:
    return b[1].t ? tc_plot_line(op, b[0].t, b[1].t, &o, c->err) : tc_plot_line(op, NULL, b[0].t, &o, c->err);
  case TC_OP_SPARK: return tc_plot_line(op, NULL, b[0].t, &o, c->err);
  case TC_OP_HIST: return tc_plot_hist(b[0].t, b[1].i, &o, c->err);
  case TC_OP_BAR: return tc_plot_bar(b[0].t, &o, c->err);
  default: return tc_plot_grid(op, b[0].t, &o, c->err);   /* heatmap, spy */
  }
}

/* save_plot(path, plot, size=[w, h], dpi=96) */
static int save_plot(ctx *c, args *a) {
  barg *b = a->b;
  if (a->v[1].kind != V_PLOT)
    return fail_node(c, a->at[1], TC_E_BAD_ARG, "%s", "argument plot must be a plot: save_plot(path, plot(...))");
  int w = 0, h = 0;
  if (b[2].n >= 0) {
    if (b[2].n != 2)
      return fail_node(c, a->at[2], TC_E_BAD_ARG, "%s", "size must be [width, height]");
    if (b[2].ints[0] < 40 || b[2].ints[0] > 20000 || b[2].ints[1] < 40 || b[2].ints[1] > 20000)
      return fail_node(c, a->at[2], TC_E_BAD_ARG, "%s", "size must be [width, height], each 40 to 20000");
    w = (int)b[2].ints[0];
    h = (int)b[2].ints[1];
  }
  return tc_plot_save(a->v[1].plot, b[0].s, w, h, b[3].f, c->err);
}

int call_plot(ctx *c, tc_op op, args *a, value *out) {
  if (op == TC_OP_SAVE_PLOT) return save_plot(c, a);
  tc_plot *p = make(c, op, a);
  if (!p) return -1;
  const char *file = str_arg(a, "file");
  if (file) {
    int rc = tc_plot_save(p, file, 0, 0, 96, c->err);
    tc_plot_free(p);
    return rc;
  }
  out->kind = V_PLOT;
  out->plot = p;
  return 0;
}
