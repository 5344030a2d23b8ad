/* What the libFuzzer harnesses share: the memory limit they run under and
 * CHECK, which names the harness (FUZZ_NAME) and aborts on a failed check. */
#ifndef TC_FUZZ_CHECK_H
#define TC_FUZZ_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_MAX_MEMORY ((uint64_t)16 << 20)

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, FUZZ_NAME ": check failed: %s: ", #cond); \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr); \
      abort(); \
    } \
  } while (0)
#endif
