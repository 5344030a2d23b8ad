/* Lookups generated from dtypes.def, ops.def and errors.def. */
#include <math.h>
#include <string.h>
#include "engine.h"
#include "kexpr.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct { const char *name; size_t size; tc_class cls; int bits; } dtype_info[] = {
#define X(E, n, S, C, CLS, B, ...) {n, sizeof(S), TC_CLASS_##CLS, B},
  TC_DTYPES(X, _)
#undef X
};

const char *tc_dtype_name(tc_dtype dt) { return dtype_info[dt].name; }
size_t tc_dtype_size(tc_dtype dt) { return dtype_info[dt].size; }
tc_class tc_dtype_class(tc_dtype dt) { return dtype_info[dt].cls; }
int tc_dtype_bits(tc_dtype dt) { return dtype_info[dt].bits; }

double tc_dtype_load_f64(tc_dtype dt, const void *p) {
  switch (dt) {
#define X(E, n, S, C, CLS, B, LD, ...) case TC_DT_##E: { S x; memcpy(&x, p, sizeof x); return (double)LD(x); }
  TC_DTYPES(X, _)
#undef X
  case TC_DT_COUNT: break;
  }
  return NAN;
}

int64_t tc_dtype_load_i64(tc_dtype dt, const void *p) {
  switch (dt) {
#define X(E, n, S, ...) case TC_DT_##E: { S x; memcpy(&x, p, sizeof x); return x; }
  TC_FOR_INTB(X, _)
#undef X
  default: return 0;
  }
}

int tc_dtype_from_name(const char *name) {
  for (int i = 0; i < TC_DT_COUNT; i++)
    if (strcmp(dtype_info[i].name, name) == 0) return i;
  return -1;
}

static const struct {
  const char *name, *sym, *sig, *doc;
  tc_kind kind;
  int bp;
  tc_check check;
} op_info[] = {
#define X(E, n, sym, kind, bp, check, sig, doc, ...) {#n, sym, sig, doc, TC_KIND_##kind, bp, TC_CHECK_##check},
  TC_OPS(X, _)
#undef X
};

const char *tc_op_name(tc_op op) { return op_info[op].name; }
const char *tc_op_symbol(tc_op op) { return op_info[op].sym; }
tc_kind tc_op_kind(tc_op op) { return op_info[op].kind; }
int tc_op_bp(tc_op op) { return op_info[op].bp; }
tc_check tc_op_check(tc_op op) { return op_info[op].check; }
const char *tc_op_signature(tc_op op) { return op_info[op].sig; }
const char *tc_op_doc(tc_op op) { return op_info[op].doc; }

static const struct { const char *name; tc_op op; } aliases[] = {
#define X(a, E, ...) {#a, TC_OP_##E},
  TC_ALIASES(X, _)
#undef X
};

int tc_op_from_name(const char *name) {
  for (int i = 0; i < TC_OP_COUNT; i++)
    if (strcmp(op_info[i].name, name) == 0) return i;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i].name, name) == 0) return (int)aliases[i].op;
  return -1;
}

static const struct { const char *name; int exit_status; const char *msg; } code_info[] = {
  {"ok", 0, "ok"},
#define X(E, n, ex, msg, ...) {#n, ex, msg},
  TC_ERRORS(X, _)
#undef X
};

const char *tc_code_name(tc_code code) { return code_info[code].name; }
int tc_code_exit(tc_code code) { return code_info[code].exit_status; }

static const char *const engine_names[TC_ENGINE_COUNT] = {"cpu", "cuda"};
const char *tc_engine_name(tc_engine_id id) { return engine_names[id]; }
int tc_engine_from_name(const char *name) {
  for (int i = 0; i < TC_ENGINE_COUNT; i++)
    if (strcmp(engine_names[i], name) == 0) return i;
  return -1;
}
