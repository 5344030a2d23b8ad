/* An allocator shim (LD_PRELOAD) that makes one allocation fail:
 *   FAILMALLOC_N=n      the n-th allocation after start-up returns NULL
 *   FAILMALLOC_COUNT=f  at exit, writes the number of allocations to file f
 * Used by failmalloc.sh to check that every allocation tcalc makes is
 * checked: a failure anywhere is an out_of_memory error (or a quiet
 * degradation), never a crash. Forwards to glibc's own allocator. Only
 * allocations made once main() has started count. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

void *malloc(size_t n);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t n);
void *aligned_alloc(size_t align, size_t n);
int posix_memalign(void **out, size_t align, size_t n);
void *memalign(size_t align, size_t n);

static long armed, count, fail_at = -1;
static const char *count_file;

static void report_count(void) {
  if (!count_file) return;
  FILE *f = fopen(count_file, "w");
  if (f) {
    fprintf(f, "%ld\n", count);
    fclose(f);
  }
}

/* Armed when main() starts: what runs before it (libc, and the static
 * constructors of the CUDA runtime linked into tcalc) is not tcalc's code. */
typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
static main_fn real_main;

static int armed_main(int argc, char **argv, char **envp) {
  const char *n = getenv("FAILMALLOC_N");
  if (n) fail_at = atol(n);
  count_file = getenv("FAILMALLOC_COUNT");
  if (count_file) atexit(report_count);
  armed = 1;
  return real_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
  start_fn real;
  void *sym = dlsym(RTLD_NEXT, "__libc_start_main");
  memcpy(&real, &sym, sizeof real);
  real_main = main;
  return real(armed_main, argc, argv, init, fini, rtld_fini, stack_end);
}

static int fail_now(void) {
  if (!armed) return 0;
  if (++count == fail_at) {
    errno = ENOMEM;
    return 1;
  }
  return 0;
}

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fail_now() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }
void *memalign(size_t align, size_t n) { return fail_now() ? NULL : __libc_memalign(align, n); }
void *aligned_alloc(size_t align, size_t n) { return fail_now() ? NULL : __libc_memalign(align, n); }
int posix_memalign(void **out, size_t align, size_t n) {
  if (fail_now()) return ENOMEM;
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
