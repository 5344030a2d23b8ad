/* The CPU engine's thread pool: workers started on first use, watching for
 * the next job for 0.2 ms after each and then sleeping on a condition
 * variable. A job is a count of tasks that threads
 * claim in order; every task's work is fixed by its index, never by the
 * thread that runs it, so results do not depend on scheduling. A job ends
 * when its claimed tasks are done, without waiting for workers that took
 * none. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "cpu.h"

#define POOL_MAX 256

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int nstarted;              /* worker threads running */
static int requested;             /* tc_set_threads; 0 = default */
static int default_threads;       /* $TCALC_THREADS or the online CPUs */
static _Thread_local bool in_task;

static struct {
  unsigned long gen;              /* bumped for each job */
  cpu_task_fn fn;
  void *ctx;
  int ntasks, nworkers;           /* workers 1..nworkers-1 take part */
  /* tasks are claimed from `claim`: the job's tag (the low 32 bits of gen)
   * above the next task's index, so that a worker waking after its job has
   * ended claims nothing from the next one */
  _Atomic uint64_t claim;
  atomic_int done;                /* claimed tasks finished */
  atomic_int waiting;             /* the caller sleeps on done_cv */
  atomic_int stop, failed;        /* failed: bit 0 a task returned >0, bit 1 <0 */
} job;

static int env_threads(void) {
  const char *s = getenv("TCALC_THREADS");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 0 && v >= 1) return v > POOL_MAX ? POOL_MAX : (int)v;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > POOL_MAX ? POOL_MAX : (int)n;
}

void tc_set_threads(int n) {
  requested = n < 0 ? 0 : n > POOL_MAX ? POOL_MAX : n;
  if (!requested) default_threads = 0;   /* read $TCALC_THREADS again */
}

int tc_get_threads(void) {
  if (requested) return requested;
  if (!default_threads) default_threads = env_threads();
  return default_threads;
}

int cpu_threads(void) { return in_task ? 1 : tc_get_threads(); }

/* Claims and runs tasks of the job tagged `tag` until none are left. */
static void run_tasks(int worker, uint32_t tag, cpu_task_fn fn, void *ctx, int ntasks) {
  in_task = true;
  for (;;) {
    if (atomic_load(&job.stop)) break;
    uint64_t v = atomic_load(&job.claim);
    do {
      if ((uint32_t)(v >> 32) != tag || (uint32_t)v >= (uint32_t)ntasks) goto out;
    } while (!atomic_compare_exchange_weak(&job.claim, &v, v + 1));
    int r = fn(ctx, (int)(uint32_t)v, worker);
    tc_progress_flush();   /* the task's progress counts before the job ends */
    if (r) {
      atomic_fetch_or(&job.failed, r < 0 ? 2 : 1);
      atomic_store(&job.stop, 1);
    }
    atomic_fetch_add(&job.done, 1);
    if (atomic_load(&job.waiting)) {
      pthread_mutex_lock(&mu);
      pthread_cond_signal(&done_cv);
      pthread_mutex_unlock(&mu);
    }
  }
out:
  in_task = false;
}

/* After a job, a worker (and the caller waiting for its tasks) watches
 * for the next event for up to SPIN_NS before sleeping: operations on
 * 10^4 to 10^6 elements come tens of microseconds apart in a script, and
 * waking a sleeping thread costs as much as the work (exp of 10^5 f64 on
 * two threads was slower than on one). */
#define SPIN_NS 200000

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Spins until cond holds or SPIN_NS have passed. */
#define SPIN_UNTIL(cond) \
  do { \
    int64_t t0_ = now_ns(); \
    for (int i_ = 1; !(cond); i_++) { \
      cpu_relax(); \
      if (i_ % 64 == 0 && now_ns() - t0_ > SPIN_NS) break; \
    } \
  } while (0)

/* Takes mu. A worker that has seen the next job takes it while the caller
 * is still publishing it (a few hundred ns): sleeping on the mutex there
 * would cost a futex wake-up (2 us of a 5 us job), so it tries for a while
 * first. */
static void lock_spinning(void) {
  for (int i = 0; i < 4096; i++) {
    if (pthread_mutex_trylock(&mu) == 0) return;
    cpu_relax();
  }
  pthread_mutex_lock(&mu);
}

static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (job.gen == seen) pthread_cond_wait(&work_cv, &mu);
    seen = job.gen;
    if (id >= job.nworkers) continue;
    cpu_task_fn fn = job.fn;
    void *ctx = job.ctx;
    int ntasks = job.ntasks;
    pthread_mutex_unlock(&mu);
    run_tasks(id, (uint32_t)seen, fn, ctx, ntasks);
    SPIN_UNTIL(__atomic_load_n(&job.gen, __ATOMIC_ACQUIRE) != seen);
    lock_spinning();
  }
  return NULL;
}

/* Starts workers up to n - 1; returns how many threads can take part. */
static int ensure_workers(int n) {
  while (nstarted < n - 1) {
    pthread_t th;
    pthread_attr_t at;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* signals (Ctrl-C) stay with the main thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &at, worker_main, (void *)(intptr_t)(nstarted + 1));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) break;
    nstarted++;
  }
  return nstarted + 1 < n ? nstarted + 1 : n;
}

int cpu_parallel(int ntasks, cpu_task_fn fn, void *ctx) {
  int n = cpu_threads();
  if (n > ntasks) n = ntasks;
  if (n <= 1) {
    bool was = in_task;
    in_task = true;
    int rc = 0;
    for (int t = 0; t < ntasks && rc == 0; t++) {
      rc = fn(ctx, t, 0);
      tc_progress_flush();
    }
    in_task = was;
    return rc < 0 ? -1 : rc > 0 ? 1 : 0;
  }
  pthread_mutex_lock(&mu);
  n = ensure_workers(n);
  job.fn = fn;
  job.ctx = ctx;
  job.ntasks = ntasks;
  job.nworkers = n;
  atomic_store(&job.stop, 0);
  atomic_store(&job.failed, 0);
  atomic_store(&job.done, 0);
  __atomic_store_n(&job.gen, job.gen + 1, __ATOMIC_RELEASE);   /* spinning workers read it unlocked */
  uint32_t tag = (uint32_t)job.gen;
  atomic_store(&job.claim, (uint64_t)tag << 32);
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&mu);
  run_tasks(0, tag, fn, ctx, ntasks);
  /* close the job, then wait for the tasks that were claimed only: a
   * worker that has not woken yet (its core busy with another program)
   * is not waited for */
  uint64_t last = atomic_exchange(&job.claim, ((uint64_t)tag << 32) | (uint32_t)ntasks);
  int claimed = (uint32_t)last < (uint32_t)ntasks ? (int)(uint32_t)last : ntasks;
  SPIN_UNTIL(atomic_load(&job.done) >= claimed);
  pthread_mutex_lock(&mu);
  atomic_store(&job.waiting, 1);
  while (atomic_load(&job.done) < claimed) pthread_cond_wait(&done_cv, &mu);
  atomic_store(&job.waiting, 0);
  pthread_mutex_unlock(&mu);
  int f = atomic_load(&job.failed);
  return f & 2 ? -1 : f & 1 ? 1 : 0;
}

int64_t cpu_even_min(int64_t n, int64_t min_per_task) {
  int64_t k = n / min_per_task, t = cpu_threads();
  return k >= 2 && k < 2 * t ? n / (k < t ? k : t) : min_per_task;
}

int64_t cpu_split(int64_t n, int64_t min_per_task) {
  int t = cpu_threads();
  if (t <= 1 || n < 2 * min_per_task) return 1;
  int64_t tasks = n / min_per_task;
  return tasks > 2 * t ? 2 * t : tasks;
}

/* ---- the row iterator across threads ---- */
typedef struct {
  const cpu_plan *p;
  int64_t n, per, units;
  cpu_row_fn fn;
  void *ctx;
} plan_job;

/* Operand-0 elements [lo, hi); with units, a progress report of units
 * each, less what the rows reported themselves. */
static int plan_part(const plan_job *j, int64_t lo, int64_t hi) {
  int64_t mark = tc_progress_mark();
  int rc = cpu_plan_run(j->p, lo, hi, j->fn, j->ctx);
  if (j->units) tc_progress_upto(mark, (hi - lo) * j->units);
  return rc;
}

static int plan_task(void *ctx_, int task, int worker) {
  const plan_job *j = ctx_;
  (void)worker;
  int64_t lo = (int64_t)task * j->per, hi = lo + j->per;
  if (hi > j->n) hi = j->n;
  return lo < hi ? plan_part(j, lo, hi) : 0;
}

int cpu_plan_run_par(const cpu_plan *p, int64_t n, int64_t min_per_task, cpu_row_fn fn, void *ctx) {
  return cpu_plan_run_units(p, n, min_per_task, fn, ctx, 0);
}

int cpu_plan_run_units(const cpu_plan *p, int64_t n, int64_t min_per_task, cpu_row_fn fn, void *ctx, int64_t units) {
  int64_t tasks = cpu_split(n, min_per_task);
  if (tasks <= 1) return plan_part(&(plan_job){p, n, n, units, fn, ctx}, 0, n);
  /* task boundaries on multiples of 64 elements keep threads off each other's
   * cache lines; tasks of few elements (each a long reduction) are left
   * even instead (100 rows in 2 tasks: 50 and 50, not 64 and 36) */
  int64_t per = (n + tasks - 1) / tasks;
  if (per >= 1024) per = (per + 63) & ~(int64_t)63;
  plan_job j = {p, n, per, units, fn, ctx};
  return cpu_parallel((int)((n + per - 1) / per), plan_task, &j);
}
