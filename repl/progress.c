/* The progress bar (SPEC 17): the library's progress jobs (src/progress.c)
 * drawn as one line on standard error, redrawn in place ("\r", the text,
 * erase to the end of the line) at most 10 times a second once the work
 * has run for a second, and erased, leaving nothing, when it ends. Only on
 * a terminal, never with --json or --quiet or after :set progress off.
 * TCALC_PROGRESS_TEST (for the tests and make bench) draws on any standard
 * error, from the first report: =1 at every report, =paced at most 10
 * times a second. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "runner.h"

#define BAR_DELAY_S 1.0
#define BAR_INTERVAL_S 0.1
#define BAR_MAX 40   /* columns of the bar itself, at most */
#define BAR_MIN 8    /* fewer left: no bar, the numbers only */

static void put(const char *s, size_t n) {
  while (n > 0) {
    ssize_t k = write(STDERR_FILENO, s, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;   /* nothing to be done about a terminal that is gone */
    s += k;
    n -= (size_t)k;
  }
}

static int term_width(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

/* v in units of u: bytes in powers of 1024, multiply-adds as flops (two
 * each), elements and lines in powers of 1000 ("1.2 G"). */
static void amount(char *buf, size_t n, double v, tc_progress_unit u, const char *per) {
  static const char *const iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}, *const si[] = {"", " k", " M", " G", " T", " P"};
  double step = u == TC_PROGRESS_BYTES ? 1024 : 1000;
  if (u == TC_PROGRESS_MADDS) v *= 2;
  int k = 0;
  while (v >= step * 0.9995 && k < 5) {
    v /= step;
    k++;
  }
  const char *name = u == TC_PROGRESS_BYTES ? "" : u == TC_PROGRESS_MADDS ? "FLOP" : u == TC_PROGRESS_LINES ? " lines" : " elements";
  if (u == TC_PROGRESS_BYTES) snprintf(buf, n, "%.*f %s%s", k && v < 100 ? 1 : 0, v, iec[k], per);
  else snprintf(buf, n, "%.*f%s%s%s", k && v < 100 ? 1 : 0, v, si[k], name, per);
}

static void time_left(char *buf, size_t n, double s) {
  long t = s < 1e9 ? (long)s + (s > (double)(long)s) : 999999999L;   /* rounded up: never "0s" while work is left */
  if (t < 60) snprintf(buf, n, "%lds left", t);
  else if (t < 3600) snprintf(buf, n, "%ldm%02lds left", t / 60, t % 60);
  else snprintf(buf, n, "%ldh%02ldm left", t / 3600, t / 60 % 60);
}

/* An outer job, as a prefix: its label and how far it is. */
static size_t outer(char *buf, size_t n, const tc_progress_view *j) {
  int k;
  if (j->total <= 0) k = snprintf(buf, n, "%s > ", j->label);
  else if (j->unit == TC_PROGRESS_LINES)
    k = snprintf(buf, n, "%s %lld/%lld > ", j->label, (long long)j->done, (long long)j->total);
  else k = snprintf(buf, n, "%s %d%% > ", j->label, (int)(100.0 * (double)j->done / (double)j->total));
  return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

/* The innermost job: "label  45% [#####.....]  12.3 MiB/s  3s left" (a
 * script's job: its lines, "12/40 lines"); without a total, what is done
 * and the rate. */
static void inner(char *line, size_t cap, size_t at, int width, const tc_progress_view *j) {
  char right[128] = "", rate[56] = "", left[48] = "", done[64];
  double frac = j->total > 0 ? (double)j->done / (double)j->total : 0;
  frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
  bool timed = j->seconds >= 0.1 && j->done > 0;
  if (timed) amount(rate, sizeof rate, (double)j->done / j->seconds, j->unit, "/s");
  if (timed && j->total > j->done) time_left(left, sizeof left, (double)(j->total - j->done) * j->seconds / (double)j->done);
  if (j->total <= 0) amount(done, sizeof done, (double)j->done, j->unit, "");
  else if (j->unit == TC_PROGRESS_LINES) snprintf(done, sizeof done, "%lld/%lld lines", (long long)j->done, (long long)j->total);
  else snprintf(done, sizeof done, "%3d%%", (int)(frac * 100));
  snprintf(right, sizeof right, "%s%s%s", rate, *rate && *left ? "  " : "", left);
  int k = snprintf(line + at, cap - at, "%s  %s", j->label, done);
  at += k < 0 ? 0 : (size_t)k;
  if (at >= cap) return;
  int room = width - 1 - (int)at - (int)strlen(right) - 6;
  if (j->total > 0 && j->unit != TC_PROGRESS_LINES && room >= BAR_MIN) {
    int w = room < BAR_MAX ? room : BAR_MAX, full = (int)(frac * w);
    char bar[BAR_MAX + 1];
    memset(bar, '#', (size_t)full);
    memset(bar + full, '.', (size_t)(w - full));
    bar[w] = 0;
    k = snprintf(line + at, cap - at, " [%s]", bar);
    at += k < 0 ? 0 : (size_t)k;
  }
  if (*right && at < cap) snprintf(line + at, cap - at, "  %s", right);
}

/* Whether the last erase was an interrupted job's: it took the terminal's
 * "^C" with the bar, and the cursor is at the start of an empty line. */
static atomic_bool erased_ctrl_c;

/* The hook: jobs[n - 1] is the one reporting; n == 0 erases. */
static void draw(const tc_progress_view *jobs, int n) {
  erased_ctrl_c = n == 0 && tc_interrupt_flag;
  if (n == 0) {
    put("\r\033[K", 4);
    return;
  }
  char line[512];
  int width = term_width();
  size_t at = 1;
  line[0] = '\r';
  for (int i = 0; i + 1 < n; i++) at += outer(line + at, sizeof line - at - 8, &jobs[i]);
  inner(line, sizeof line - 8, at, width + 1, &jobs[n - 1]);
  /* one line on the screen: bytes other than printable ASCII (a file's
   * name) as '?', and cut at the terminal's width */
  size_t len = strlen(line);
  for (size_t i = 1; i < len; i++)
    if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f) line[i] = '?';
  if (len > (size_t)width) len = (size_t)width;
  memcpy(line + len, "\033[K", 3);
  put(line, len + 3);
}

bool runner_progress_took_ctrl_c(void) {
  bool took = erased_ctrl_c;
  erased_ctrl_c = 0;
  return took;
}

/* TCALC_PROGRESS_TEST: 1, a frame at every report; "paced", at most 10 a
 * second as on a terminal; either from the first report, on any stderr. */
static int test_mode(void) {
  const char *s = getenv("TCALC_PROGRESS_TEST");
  return !s ? 0 : !strcmp(s, "1") ? 1 : !strcmp(s, "paced") ? 2 : 0;
}

void runner_progress_setup(runner *r, bool quiet) {
  r->progress_ok = !r->json && !quiet && (isatty(STDERR_FILENO) || test_mode());
  runner_progress_apply(r);
}

void runner_progress_apply(const runner *r) {
  int test = test_mode();
  tc_progress_set_hook(r->progress && r->progress_ok ? draw : NULL, test ? 0 : BAR_DELAY_S,
                       test == 1 ? 0 : BAR_INTERVAL_S);
}

void runner_progress_script(const char *path, int64_t lines) {
  const char *base = strrchr(path, '/');
  char label[64];
  snprintf(label, sizeof label, "run %s", base && base[1] ? base + 1 : path);
  tc_progress_begin(label, lines, TC_PROGRESS_LINES);
}

int64_t runner_count_lines(const char *text, size_t n) {
  int64_t lines = 0;
  for (const char *p = text, *e = text + n; p < e && (p = memchr(p, '\n', (size_t)(e - p))); p++) lines++;
  return lines + (n > 0 && text[n - 1] != '\n');
}
