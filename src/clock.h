/* The monotonic clock and the median of run times, for :time (repl/timing.c)
 * and the device benchmark (tests/cuda/bench.c). */
#ifndef TC_CLOCK_H
#define TC_CLOCK_H
#include <stdlib.h>
#include <time.h>

static inline double tc_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int tc_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts t[0..n) (n >= 1) and returns its median. */
static inline double tc_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, tc_cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}
#endif
