/* An allocator shim (LD_PRELOAD) that makes one allocation fail:
 *   FAILMALLOC_N=n      the n-th allocation after start-up returns NULL
 *   FAILMALLOC_COUNT=f  at exit, writes the number of allocations to file f
 * Used by failmalloc.sh to check that every allocation tcalc makes is
 * checked: a failure anywhere is an out_of_memory error (or a quiet
 * degradation), never a crash. Forwards to glibc's own allocator. */
#define _GNU_SOURCE
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

__attribute__((constructor)) static void init(void) {
  const char *n = getenv("FAILMALLOC_N");
  if (n) fail_at = atol(n);
  count_file = getenv("FAILMALLOC_COUNT");
  if (count_file) atexit(report_count);
  armed = 1;
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
