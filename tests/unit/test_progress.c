/* Progress (src/progress.c): jobs opened, reported and ended through a
 * recording hook; nesting, silent jobs, the delay, and the engines' and
 * the files' reports counting exactly their work; an interrupted job ends
 * and erases like any other. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcalc.h"
#include "tt.h"

#define MAXF 100000
typedef struct {
  int n;                       /* jobs shown; 0: an erase */
  char label[64], outer[64];   /* the innermost job's and the outermost's */
  tc_progress_unit unit;
  int64_t done, total;
} frame;
static frame *frames;
static int nframes;
/* the hook raises the interrupt flag once a frame shows this much done (0: never) */
static double interrupt_at;

static void record(const tc_progress_view *jobs, int n) {
  if (nframes >= MAXF) return;
  frame *f = &frames[nframes++];
  memset(f, 0, sizeof *f);
  f->n = n;
  if (n == 0) return;
  snprintf(f->label, sizeof f->label, "%s", jobs[n - 1].label);
  snprintf(f->outer, sizeof f->outer, "%s", jobs[0].label);
  f->unit = jobs[n - 1].unit;
  f->done = jobs[n - 1].done;
  f->total = jobs[n - 1].total;
  if (interrupt_at > 0 && f->total > 0 && (double)f->done >= interrupt_at * (double)f->total) tc_interrupt_signal();
}

static void setup(void) {
  frames = calloc(MAXF, sizeof *frames);
  nframes = 0;
  interrupt_at = 0;
  tc_interrupt_clear();
  tc_progress_set_hook(record, 0, 0);   /* a frame at every report */
}
static void teardown(void) {
  tc_progress_set_hook(NULL, 0, 0);
  tc_set_threads(0);
  free(frames);
}
TestSuite(progress, .init = setup, .fini = teardown);

/* The frames of the last job, checked: its label, unit and total, done
 * never going back and never past the total, the last frame at the total
 * (exact: one thread), and an erase after it. */
static void check_job(const char *label, tc_progress_unit unit, int64_t total, bool exact) {
  cr_assert_gt(nframes, 1, "%s: %d frames", label, nframes);
  cr_assert_eq(frames[nframes - 1].n, 0, "%s: the last call does not erase", label);
  int first = nframes - 2;
  while (first > 0 && frames[first - 1].n > 0) first--;
  int64_t prev = -1;
  for (int i = first; i < nframes - 1; i++) {
    frame *f = &frames[i];
    cr_assert_str_eq(f->label, label);
    cr_assert_eq(f->unit, unit, "%s: unit %d", label, (int)f->unit);
    cr_assert_eq(f->total, total, "%s: total %lld, not %lld", label, (long long)f->total, (long long)total);
    cr_assert_geq(f->done, prev, "%s: done went back from %lld to %lld", label, (long long)prev, (long long)f->done);
    cr_assert_leq(f->done, total, "%s: done %lld past the total %lld", label, (long long)f->done, (long long)total);
    prev = f->done;
  }
  if (exact) cr_assert_eq(prev, total, "%s: ends at %lld of %lld", label, (long long)prev, (long long)total);
}

Test(progress, a_job_draws_and_erases) {
  tc_progress_begin("work", 100, TC_PROGRESS_ELEMENTS);
  for (int i = 0; i < 10; i++) tc_progress_add(10);
  tc_progress_end();
  cr_assert_eq(nframes, 12, "%d calls: a frame a report, the count as it ended, the erase", nframes);
  check_job("work", TC_PROGRESS_ELEMENTS, 100, true);
  cr_assert_eq(frames[0].done, 10);
  cr_assert(!tc_progress_visible());
}

Test(progress, nothing_without_a_hook_or_before_the_delay) {
  tc_progress_set_hook(NULL, 0, 0);
  tc_progress_begin("work", 100, TC_PROGRESS_ELEMENTS);
  tc_progress_add(50);
  tc_progress_end();
  tc_progress_set_hook(record, 60, 0);   /* a job shorter than the delay: nothing drawn, nothing erased */
  tc_progress_begin("work", 100, TC_PROGRESS_ELEMENTS);
  tc_progress_add(50);
  tc_progress_clear();
  tc_progress_end();
  cr_assert_eq(nframes, 0);
}

Test(progress, frames_at_most_every_interval) {
  tc_progress_set_hook(record, 0, 60);
  tc_progress_begin("work", 1000, TC_PROGRESS_BYTES);
  for (int i = 0; i < 1000; i++) tc_progress_add(1);
  tc_progress_end();
  cr_assert_eq(nframes, 3, "%d calls: the first report's frame, the count as it ended, the erase", nframes);
  cr_assert_eq(frames[0].done, 1);
  cr_assert_eq(frames[1].done, 1000);
}

Test(progress, nested_jobs_and_silent_ones) {
  tc_progress_begin("run s.tc", 3, TC_PROGRESS_LINES);
  tc_progress_add(1);
  cr_assert_eq(frames[nframes - 1].n, 1);
  tc_progress_begin("load big.npy", 1000, TC_PROGRESS_BYTES);
  tc_progress_add(500);
  frame *f = &frames[nframes - 1];
  cr_assert_eq(f->n, 2);
  cr_assert_str_eq(f->outer, "run s.tc");
  cr_assert_str_eq(f->label, "load big.npy");
  cr_assert_eq(f->done, 500);
  tc_progress_end();                       /* an inner job's end erases too */
  cr_assert_eq(frames[nframes - 1].n, 0);
  int before = nframes;
  tc_progress_begin(NULL, 1000, TC_PROGRESS_ELEMENTS);   /* silent: counts nowhere, draws nothing */
  tc_progress_add(700);
  int64_t m = tc_progress_mark();
  tc_progress_upto(m, 1000);
  tc_progress_end();
  cr_assert_eq(nframes, before, "a silent job drew or erased");
  tc_progress_add(1);                      /* the script's job again */
  f = &frames[nframes - 1];
  cr_assert_eq(f->n, 1);
  cr_assert_str_eq(f->label, "run s.tc");
  cr_assert_eq(f->done, 2);
  tc_progress_end();
  cr_assert_eq(frames[nframes - 1].n, 0);
  tc_progress_add(5);                      /* no job: nothing */
  cr_assert_eq(frames[nframes - 1].n, 0);
}

Test(progress, mark_and_upto_add_what_is_left) {
  tc_progress_begin("work", 100, TC_PROGRESS_ELEMENTS);
  int64_t m = tc_progress_mark();
  tc_progress_add(30);
  tc_progress_upto(m, 50);   /* 20 more */
  cr_assert_eq(frames[nframes - 1].done, 50);
  m = tc_progress_mark();
  tc_progress_upto(m, 50);
  cr_assert_eq(frames[nframes - 1].done, 100);
  tc_progress_reset(10);
  tc_progress_add(4);
  cr_assert_eq(frames[nframes - 1].done, 4);
  cr_assert_eq(frames[nframes - 1].total, 10);
  tc_progress_end();
}

static tc_tensor *ramp(int64_t n, tc_dtype dt) {
  tc_err err = tt_err();
  tc_tensor *t = tc_linspace(0, 1, n, dt, &err);
  cr_assert_not_null(t, "%s", tt_msg(&err));
  return t;
}

static tc_tensor *as_shape(tc_tensor *t, int64_t r, int64_t c) {
  tc_err err = tt_err();
  int64_t shape[2] = {r, c};
  tc_tensor *v = tc_reshape(t, 2, shape, &err);
  cr_assert_not_null(v, "%s", tt_msg(&err));
  return v;
}

/* Reductions on one thread: each reports exactly the elements it reads. */
Test(progress, reductions_count_their_elements) {
  tc_set_threads(1);
  int64_t n = (int64_t)1 << 23;   /* CPU_POLL (2^22) and more: a job that is shown */
  tc_tensor *x = ramp(n, TC_DT_F64), *m = as_shape(x, 2048, 4096), *t = as_shape(x, 1 << 7, 1 << 16);
  static const tc_op ops[] = {TC_OP_REDUCE_SUM, TC_OP_REDUCE_PROD, TC_OP_REDUCE_MAX, TC_OP_ARGMIN, TC_OP_LOGSUMEXP,
                              TC_OP_COUNT_NONZERO, TC_OP_NANMAX, TC_OP_ANY};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (int a = -1; a < 2; a++) {
      tc_axes ax = {.all = a < 0, .n = a < 0 ? 0 : 1, .axis = {a}};
      for (int s = 0; s < 2; s++) {
        tc_err err = tt_err();
        tc_tensor *o = tc_reduce(ops[k], s ? t : m, &ax, false, &err);
        cr_assert_not_null(o, "%s: %s", tc_op_name(ops[k]), tt_msg(&err));
        tc_tensor_free(o);
        check_job(tc_op_name(ops[k]), TC_PROGRESS_ELEMENTS, n, true);
      }
    }
  tc_err err = tt_err();
  tc_axes all = {.all = true};
  tc_tensor *o = tc_reduce(TC_OP_NANMEAN, x, &all, false, &err);   /* two passes */
  cr_assert_not_null(o, "%s", tt_msg(&err));
  tc_tensor_free(o);
  check_job("nanmean", TC_PROGRESS_ELEMENTS, 2 * n, true);
  tc_tensor_free(t);
  tc_tensor_free(m);
  tc_tensor_free(x);
}

/* Across threads the frames never go back or past the total, the count
 * as the job ends is its total (every thread's reports counted), and
 * small work opens only silent jobs. */
Test(progress, threads_report_safely) {
  tc_set_threads(4);
  int64_t n = (int64_t)1 << 24;
  tc_tensor *x = ramp(n, TC_DT_F32), *m = as_shape(x, 1 << 12, 1 << 12);
  tc_axes ax[3] = {{.all = true}, {.n = 1, .axis = {0}}, {.n = 1, .axis = {1}}}, all = {.all = true};
  static const tc_op ops[] = {TC_OP_REDUCE_SUM, TC_OP_REDUCE_MAX, TC_OP_LOGSUMEXP, TC_OP_ARGMAX, TC_OP_COUNT_NONZERO,
                              TC_OP_REDUCE_PROD};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (int a = 0; a < 3; a++) {
      tc_err err = tt_err();
      tc_tensor *o = tc_reduce(ops[k], a ? m : x, &ax[a], false, &err);
      cr_assert_not_null(o, "%s", tt_msg(&err));
      tc_tensor_free(o);
      check_job(tc_op_name(ops[k]), TC_PROGRESS_ELEMENTS, n, true);   /* end() draws the last count */
    }
  int before = nframes;
  tc_tensor *s = ramp(1000, TC_DT_F64);
  tc_err err = tt_err();
  tc_tensor *o = tc_reduce(TC_OP_REDUCE_SUM, s, &all, false, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  cr_assert_eq(nframes, before, "a small reduction drew");
  tc_tensor_free(o);
  tc_tensor_free(s);
  tc_tensor_free(m);
  tc_tensor_free(x);
}

Test(progress, products_and_sorts_count_their_work) {
  tc_set_threads(1);
  tc_tensor *x = ramp((int64_t)1 << 20, TC_DT_F64), *a = as_shape(x, 1024, 1024);
  for (int dt = 0; dt < 2; dt++) {
    tc_err err = tt_err();
    tc_tensor *b = dt ? tc_cast(a, TC_DT_I32, &err) : tc_tensor_ref(a);
    cr_assert_not_null(b, "%s", tt_msg(&err));
    tc_tensor *p = tc_matmul(b, b, &err);
    cr_assert_not_null(p, "%s", tt_msg(&err));
    check_job("matmul", TC_PROGRESS_MADDS, (int64_t)1 << 30, true);
    tc_tensor_free(p);
    tc_tensor_free(b);
  }
  for (int op = 0; op < 4; op++) {   /* one long row, then 1024 short ones */
    tc_err err = tt_err();
    tc_tensor *s = tc_sort(op % 2 ? TC_OP_ARGSORT : TC_OP_SORT, op < 2 ? x : a, -1, true, &err);
    cr_assert_not_null(s, "%s", tt_msg(&err));
    check_job(op % 2 ? "argsort" : "sort", TC_PROGRESS_ELEMENTS, (int64_t)4 << 20, true);
    tc_tensor_free(s);
  }
  tc_tensor_free(a);
  tc_tensor_free(x);
}

Test(progress, loads_and_saves_count_their_bytes) {
  char path[] = "/tmp/tcalc-progress-XXXXXX.npy";
  int fd = mkstemps(path, 4);
  cr_assert_geq(fd, 0);
  close(fd);
  int64_t n = (int64_t)1 << 21;
  tc_tensor *x = ramp(n, TC_DT_F64);
  tc_err err = tt_err();
  cr_assert_eq(tc_save_npy(path, x, &err), 0, "%s", tt_msg(&err));
  const char *base = strrchr(path, '/') + 1;
  char label[80];
  snprintf(label, sizeof label, "save %s", base);
  check_job(label, TC_PROGRESS_BYTES, 8 * n, true);
  tc_tensor *y = tc_load_npy(path, &err);
  cr_assert_not_null(y, "%s", tt_msg(&err));
  snprintf(label, sizeof label, "load %s", base);
  check_job(label, TC_PROGRESS_BYTES, 8 * n + 128, true);   /* the file: its header's 128 bytes too */
  tc_tensor_free(y);
  tc_tensor_free(x);
  unlink(path);
}

/* Ctrl-C in the middle: the work stops, its job ends and erases, and the
 * next job is drawn alone (nothing of the first left open). */
Test(progress, an_interrupted_job_ends) {
  tc_set_threads(2);
  tc_tensor *x = ramp((int64_t)1 << 23, TC_DT_F64);
  tc_axes all = {.all = true};
  tc_err err = tt_err();
  interrupt_at = 0.3;
  tc_tensor *o = tc_reduce(TC_OP_REDUCE_PROD, x, &all, false, &err);
  cr_assert_null(o);
  cr_assert_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  cr_assert_eq(frames[nframes - 1].n, 0, "the interrupted job did not erase");
  cr_assert_lt(frames[nframes - 2].done, frames[nframes - 2].total);
  interrupt_at = 0;
  tc_interrupt_clear();
  tc_progress_begin("next", 10, TC_PROGRESS_ELEMENTS);
  tc_progress_add(1);
  cr_assert_eq(frames[nframes - 1].n, 1, "a job was left open");
  tc_progress_end();
  tc_tensor_free(x);
}
