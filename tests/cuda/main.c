/* cuda-check parity [...] | cuda-check bench [...] (see parity.c, bench.c). */
#include <stdio.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "parity")) return parity_main(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "bench")) return bench_main(argc - 1, argv + 1);
  fprintf(stderr, "usage: cuda-check parity [--emulate] [--quick] [--brief] [--allow-missing] [--only OP]\n"
                  "       cuda-check bench [--emulate] [--small]\n");
  return 2;
}
