/* Printers: text for people (SPEC 6.1) and JSON Lines for machines (6.2). */
#ifndef TC_PRINT_H
#define TC_PRINT_H
#include <stdio.h>
#include "eval.h"

typedef struct print_opts {
  int precision;
  bool full;
  int width;     /* text rows wrap at this column (0: never); JSON never wraps */
  char end;      /* what follows a value in text (0: a newline) */
  /* plots (SPEC 17): ANSI colours (stdout a terminal, NO_COLOR unset, not
     JSON); sized to the terminal at each print (stdout a terminal, no width
     given); plot_height: lines of a plot (0: 20, or the terminal's) */
  bool color, fit_terminal;
  int plot_height;
} print_opts;

/* Shortest text that reads back to the same value in dtype dt (Python's
 * repr style), or `precision` significant digits when > 0. */
void fmt_float(char *buf, size_t n, double v, tc_dtype dt, int precision);
/* Element i of row-major host data of dtype dt as text (integers exactly;
 * floats as fmt_float). */
void fmt_elem(char *buf, size_t n, const void *data, int64_t i, tc_dtype dt, int precision);
/* An upper bound on the length of float dtype dt's shortest text (sign
 * excluded) for values whose biased exponent field is x; 0 where there is
 * none (zero, subnormals, inf, nan; dt not a float). Exposed for tests. */
int fmt_len_bound(tc_dtype dt, int x);
/* Writes a value as text (with the dtype[shape] trailer for tensors). */
int print_text(FILE *f, const value *v, const print_opts *o, tc_err *err);
/* Writes a value as one JSON object line. */
int print_json(FILE *f, const value *v, tc_err *err);
/* A copy of s with every invalid UTF-8 sequence replaced by U+FFFD, so that
 * JSON output stays valid whatever bytes the user typed; NULL when out of memory. */
char *utf8_sanitize(const char *s);
/* Writes an error as one JSON object line. line/column are 1-based or 0;
 * tr: the trace through user functions (ntr entries, innermost first). */
/* Whether JSON outcomes carry "semantics" (SPEC 19; on unless :compare,
 * whose rows say the semantics, turns it off); "warnings" they always carry. */
void print_json_semantics(bool on);
void print_json_error(FILE *f, const tc_err *e, int line, int column, const trace_entry *tr, int ntr);
#endif
