/* libFuzzer harness for the binary file readers (SPEC 5.7, 14): the input
 * is written to a file, which load_npz reads as an archive (array "x"),
 * and load reads as a .npy, read and mapped, under a small memory limit.
 * Besides the sanitizers it checks that
 *   - a failure is io_error, out_of_memory or dtype_unsupported;
 *   - the read and the mapped .npy are the same tensor, bit for bit;
 *   - every tensor is freed (memory accounting is 0).
 * Seeds: tests/data/npz and tests/data/npy. Built by `make fuzz`. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcalc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_npz"
#include "fuzz_check.h"

static void expect_error(const tc_err *e) {
  CHECK(e->code == TC_E_IO || e->code == TC_E_OOM || e->code == TC_E_DTYPE, "unexpected error %s: %s",
        tc_code_name(e->code), e->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_npz.%ld", (long)getpid());
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
  tc_set_engine(TC_ENGINE_CPU);
  tc_set_max_memory(FUZZ_MAX_MEMORY);
  tc_interrupt_clear();
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *z = tc_load_npz(path, "x", &e);
  if (!z) expect_error(&e);
  tc_tensor_free(z);
  tc_err_clear(&e);
  tc_tensor *t = tc_load_npy(path, &e);
  if (!t) expect_error(&e);
  tc_err_clear(&e);
  tc_tensor *m = tc_map_npy(path, &e);
  if (!m) expect_error(&e);
  if (t && m) {
    tc_tensor *c = tc_contiguous(m, &e);
    CHECK(c != NULL, "a mapped tensor cannot be copied: %s", e.msg);
    size_t n = (size_t)tc_numel(t) * tc_dtype_size(t->dtype);
    CHECK(c->dtype == t->dtype && c->ndim == t->ndim && !memcmp(c->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) &&
          (!n || !memcmp(tc_tensor_host_data(c), tc_tensor_host_data(t), n)), "mapped and read tensors differ");
    tc_tensor_free(c);
  }
  tc_tensor_free(t);
  tc_tensor_free(m);
  unlink(path);
  CHECK(tc_mem_in_use() == 0, "%llu bytes of tensors not freed", (unsigned long long)tc_mem_in_use());
  return 0;
}
