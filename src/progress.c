/* Progress of long work (SPEC 17): the jobs open, what each has done, and
 * when the front end's hook draws them. Reports come from any thread at the
 * places the work looks at the interrupt flag; a thread gathers small ones
 * and adds them to the job's count in batches, so a report is an addition
 * to a thread-local, now and then an atomic add and a look at a coarse
 * clock. The report that finds a frame due draws it unless another thread
 * is drawing (a try-lock), so no thread waits for the terminal but the one
 * that opened the job, at its end. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "tcalc.h"

/* A tick of a few milliseconds is fine for frames 0.1 s apart, and the
 * coarse clock costs a few nanoseconds to read. */
#ifdef CLOCK_MONOTONIC_COARSE
#define PG_CLOCK CLOCK_MONOTONIC_COARSE
#else
#define PG_CLOCK CLOCK_MONOTONIC
#endif

/* Units a thread gathers before it adds them to a job's count: at most
 * PG_BATCH, and at most a thousandth of the total. */
#define PG_BATCH ((int64_t)1 << 16)

typedef struct {
  _Atomic int64_t done, total, start_ns, batch;
  uint64_t gen;                 /* which job this is: jobs begun before it, and 1 */
  tc_progress_unit unit;
  bool silent;                  /* never shown, counts nothing */
  char label[64];
} pg_job;

static struct {
  pg_job job[TC_PROGRESS_DEPTH];
  atomic_int depth;             /* jobs open (deeper than the slots too) */
  uint64_t gen;                 /* jobs begun */
  atomic_flag drawing;          /* held by the thread drawing or erasing */
  _Atomic int64_t next_ns;      /* no frame before this */
  volatile sig_atomic_t shown;  /* a frame is on the screen */
  tc_progress_hook hook;
  int64_t delay_ns, interval_ns;
} pg = {.drawing = ATOMIC_FLAG_INIT};

/* This thread's begins not yet ended, a bit each (the first in bit 0): 1
 * where it opened a job, 0 where it opened none (no hook; or a job of
 * another thread open: a task's own calls). Units it reported; of those,
 * the ones not yet added to the count of job tl_gen. */
static _Thread_local uint64_t tl_opened;
static _Thread_local int tl_begins;
static _Thread_local int64_t tl_added, tl_pending;
static _Thread_local uint64_t tl_gen;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(PG_CLOCK, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void lock(void) {
  while (atomic_flag_test_and_set_explicit(&pg.drawing, memory_order_acquire)) {}
}
static void unlock(void) { atomic_flag_clear_explicit(&pg.drawing, memory_order_release); }

static void erase(void) {
  if (pg.shown) pg.hook(NULL, 0);
  pg.shown = 0;
}

/* Jobs open when the hook changes (:set progress inside a script) are
 * neither shown nor counted from then on. */
void tc_progress_set_hook(tc_progress_hook hook, double delay_s, double interval_s) {
  lock();
  if (pg.hook) erase();
  int d = atomic_load(&pg.depth);
  for (int i = 0; i < d && i < TC_PROGRESS_DEPTH && hook != pg.hook; i++) pg.job[i].silent = true;
  pg.hook = hook;
  pg.delay_ns = (int64_t)(delay_s * 1e9);
  pg.interval_ns = (int64_t)(interval_s * 1e9);
  unlock();
}

static void set_total(pg_job *j, int64_t total) {
  total = total > 0 ? total : 0;
  atomic_store_explicit(&j->total, total, memory_order_relaxed);
  atomic_store_explicit(&j->batch, total && total / 1024 < PG_BATCH ? total / 1024 : PG_BATCH, memory_order_relaxed);
}

/* The innermost job that has a slot, or NULL. */
static pg_job *innermost(void) {
  int d = atomic_load_explicit(&pg.depth, memory_order_acquire);
  return d == 0 || d > TC_PROGRESS_DEPTH ? NULL : &pg.job[d - 1];
}

/* The innermost job if it counts, with what this thread gathered for an
 * earlier job dropped; NULL when none. */
static pg_job *counting(void) {
  pg_job *j = innermost();
  if (!j || j->silent) return NULL;
  if (tl_gen != j->gen) {
    tl_gen = j->gen;
    tl_pending = 0;
  }
  return j;
}

/* Draws the open jobs that are shown; the caller holds the lock. */
static void draw(int64_t now) {
  tc_progress_view v[TC_PROGRESS_DEPTH];
  int d = atomic_load_explicit(&pg.depth, memory_order_acquire), n = 0;
  for (int i = 0; i < d && i < TC_PROGRESS_DEPTH; i++) {
    pg_job *j = &pg.job[i];
    if (j->silent) continue;
    int64_t t = now - atomic_load_explicit(&j->start_ns, memory_order_relaxed);
    v[n++] = (tc_progress_view){j->label, j->unit, atomic_load_explicit(&j->done, memory_order_relaxed),
                                atomic_load_explicit(&j->total, memory_order_relaxed), t > 0 ? (double)t * 1e-9 : 0};
  }
  if (n == 0 || !pg.hook) return;
  pg.hook(v, n);
  pg.shown = 1;
  atomic_store_explicit(&pg.next_ns, now + pg.interval_ns, memory_order_relaxed);
}

/* A count's look at the clock: a frame if one is due and no other thread
 * is drawing. */
static void tick(void) {
  int64_t now = now_ns();
  if (now < atomic_load_explicit(&pg.next_ns, memory_order_relaxed)) return;
  if (atomic_flag_test_and_set_explicit(&pg.drawing, memory_order_acquire)) return;
  if (now >= atomic_load_explicit(&pg.next_ns, memory_order_relaxed)) draw(now);
  unlock();
}

/* This thread's gathered units added to j's count. */
static void flush(pg_job *j) {
  atomic_fetch_add_explicit(&j->done, tl_pending, memory_order_relaxed);
  tl_pending = 0;
  tick();
}

static void fill(pg_job *j, const char *label, int64_t total, tc_progress_unit unit, int64_t now) {
  size_t n = label ? strlen(label) : 0;
  if (n >= sizeof j->label) n = sizeof j->label - 1;
  if (n) memcpy(j->label, label, n);
  j->label[n] = 0;
  j->silent = !label;
  j->unit = unit;
  j->gen = ++pg.gen;
  atomic_store_explicit(&j->done, 0, memory_order_relaxed);
  set_total(j, total);
  atomic_store_explicit(&j->start_ns, now, memory_order_relaxed);
}

void tc_progress_begin(const char *label, int64_t total, tc_progress_unit unit) {
  if (tl_begins >= 64) {   /* begins nested deeper than anything tcalc makes: no jobs */
    tl_begins++;
    return;
  }
  int d = atomic_load(&pg.depth);
  bool opens = pg.hook && (d == 0 || tl_opened != 0);
  tl_opened |= (uint64_t)opens << tl_begins++;
  if (!opens) return;
  bool shown_below = false;
  for (int i = 0; i < d && i < TC_PROGRESS_DEPTH; i++) shown_below |= !pg.job[i].silent;
  int64_t now = label ? now_ns() : 0;
  if (d < TC_PROGRESS_DEPTH) fill(&pg.job[d], label, total, unit, now);
  /* the bar waits for delay_s from the first job that may be shown */
  if (label && !shown_below) atomic_store_explicit(&pg.next_ns, now + pg.delay_ns, memory_order_relaxed);
  atomic_store_explicit(&pg.depth, d + 1, memory_order_release);
}

void tc_progress_end(void) {
  if (tl_begins == 0) return;
  if (--tl_begins >= 64) return;
  uint64_t bit = (uint64_t)1 << tl_begins;
  if (!(tl_opened & bit)) return;
  tl_opened &= ~bit;
  pg_job *j = counting();
  if (j && tl_pending) {
    atomic_fetch_add_explicit(&j->done, tl_pending, memory_order_relaxed);
    tl_pending = 0;
  }
  lock();
  int d = atomic_load(&pg.depth);
  bool silent = d > TC_PROGRESS_DEPTH || pg.job[d - 1].silent;
  /* the count as it ends, then the erase; an inner job's end erases too:
   * the outer ones come back at their next report, so that output written
   * between two reports (a script's results) never lands on a bar */
  if (!silent && pg.shown) draw(now_ns());
  atomic_store_explicit(&pg.depth, d - 1, memory_order_release);
  if (!silent) erase();
  unlock();
}

void tc_progress_add(int64_t units) {
  pg_job *j = counting();
  if (!j) return;
  tl_added += units;
  if ((tl_pending += units) >= atomic_load_explicit(&j->batch, memory_order_relaxed)) flush(j);
}

void tc_progress_flush(void) {
  if (!tl_pending) return;
  pg_job *j = counting();
  if (j && tl_pending) flush(j);
}

void tc_progress_set(int64_t done) {
  pg_job *j = counting();
  if (!j) return;
  tl_pending = 0;
  atomic_store_explicit(&j->done, done, memory_order_relaxed);
  tick();
}

void tc_progress_total(int64_t total) {
  pg_job *j = innermost();
  if (j) set_total(j, total);
}

void tc_progress_reset(int64_t total) {
  pg_job *j = counting();
  if (!j) return;
  tl_pending = 0;
  atomic_store_explicit(&j->done, 0, memory_order_relaxed);
  set_total(j, total);
  atomic_store_explicit(&j->start_ns, now_ns(), memory_order_relaxed);
}

int64_t tc_progress_mark(void) { return tl_added; }

void tc_progress_upto(int64_t mark, int64_t whole) {
  if (tc_interrupt_flag) return;   /* the loop stopped short */
  int64_t more = whole - (tl_added - mark);
  if (more > 0) tc_progress_add(more);
}

void tc_progress_clear(void) {
  if (!pg.shown) return;
  lock();
  if (pg.shown) {
    erase();
    int64_t next = now_ns() + pg.interval_ns;
    if (next > atomic_load_explicit(&pg.next_ns, memory_order_relaxed))
      atomic_store_explicit(&pg.next_ns, next, memory_order_relaxed);
  }
  unlock();
}

bool tc_progress_visible(void) { return pg.shown != 0; }
