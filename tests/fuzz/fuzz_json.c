/* libFuzzer harness for JSON input (SPEC 14): the input is the text of
 * from_json, read under a small memory limit. Besides the sanitizers it
 * checks that
 *   - a failure is bad_argument, literal_overflow or out_of_memory, and
 *     names the line and column in the text (but for the memory limit);
 *   - a tensor read prints as one valid JSON object (cJSON parses it) that
 *     reads back to the same dtype, shape and bits (NaN as NaN: the output
 *     has no NaN sign or payload), and prints the same the second time;
 *   - every tensor is freed (memory accounting is 0).
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_json"
#include "fuzz_check.h"

/* t as a JSON line (malloc'd). */
static char *to_json(tc_tensor *t, size_t *n) {
  char *out = NULL;
  FILE *f = open_memstream(&out, n);
  CHECK(f != NULL, "open_memstream failed");
  value v = {.kind = V_TENSOR, .t = t};
  tc_err e;
  tc_err_clear(&e);
  int rc = print_json(f, &v, &e);
  fclose(f);
  CHECK(rc == 0, "printing a tensor read failed: %s", e.msg);
  return out;
}

/* Element i of a and b (same dtype): identical bits, or both NaN. */
static bool same_elem(const tc_tensor *a, const unsigned char *pa, const unsigned char *pb, int64_t i) {
  size_t es = tc_dtype_size(a->dtype);
  if (!memcmp(pa + (size_t)i * es, pb + (size_t)i * es, es)) return true;
  if (tc_dtype_class(a->dtype) != TC_CLASS_FLT) return false;
  return isnan(tc_dtype_load_f64(a->dtype, pa + (size_t)i * es)) && isnan(tc_dtype_load_f64(a->dtype, pb + (size_t)i * es));
}

static void round_trip(tc_tensor *t) {
  size_t n1, n2;
  char *j1 = to_json(t, &n1);
  cJSON *doc = cJSON_ParseWithLength(j1, n1);
  CHECK(doc && cJSON_IsObject(doc), "the output is not a JSON object: %.200s", j1);
  cJSON_Delete(doc);
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *u = tc_from_json(j1, n1, TC_OP_FROM_JSON, &e);
  CHECK(u != NULL, "tcalc's own output does not read back (%s): %.200s", e.msg, j1);
  CHECK(u->dtype == t->dtype && u->ndim == t->ndim && !memcmp(u->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim),
        "read back as another dtype or shape: %.200s", j1);
  const unsigned char *pa = tc_tensor_host_data(t), *pb = tc_tensor_host_data(u);
  for (int64_t i = 0; i < tc_numel(t); i++)
    CHECK(same_elem(t, pa, pb, i), "element %lld differs after a round trip: %.200s", (long long)i, j1);
  char *j2 = to_json(u, &n2);
  CHECK(n1 == n2 && !memcmp(j1, j2, n1), "prints differently the second time: %.200s / %.200s", j1, j2);
  free(j1);
  free(j2);
  tc_tensor_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tc_set_engine(TC_ENGINE_CPU);
  tc_set_max_memory(FUZZ_MAX_MEMORY);
  tc_interrupt_clear();
  char *text = malloc(size + 1);
  CHECK(text != NULL, "malloc failed");
  memcpy(text, data, size);
  text[size] = 0;
  size_t len = strlen(text);   /* from_json's text is a string: it ends at a NUL */
  tc_err e;
  tc_err_clear(&e);
  tc_tensor *t = tc_from_json(text, len, TC_OP_FROM_JSON, &e);
  if (!t) {
    CHECK(e.code == TC_E_BAD_ARG || e.code == TC_E_LITERAL || e.code == TC_E_OOM, "unexpected error %s: %s",
          tc_code_name(e.code), e.msg);
    CHECK(e.code == TC_E_OOM || strstr(e.msg, " of the JSON text"), "an error without its position: %s", e.msg);
  } else {
    round_trip(t);
    tc_tensor_free(t);
  }
  free(text);
  CHECK(tc_mem_in_use() == 0, "%llu bytes of tensors not freed", (unsigned long long)tc_mem_in_use());
  return 0;
}
