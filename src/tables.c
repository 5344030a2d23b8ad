/* Lookups generated from dtypes.def, ops.def and errors.def. */
#include <math.h>
#include <string.h>
#include "engine.h"
#include "kexpr.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define TC_CLASS_OF_BOOL TC_CLASS_BOOL, false
#define TC_CLASS_OF_INT TC_CLASS_INT, false
#define TC_CLASS_OF_UINT TC_CLASS_INT, true
#define TC_CLASS_OF_FLT TC_CLASS_FLT, false
static const struct { const char *name; tc_class cls; bool uns; int bits; } dtype_info[] = {
#define X(E, n, S, C, CLS, B, ...) {n, TC_CLASS_OF_##CLS, B},
  TC_DTYPES(X, _)
#undef X
};

const char *tc_dtype_name(tc_dtype dt) { return dtype_info[dt].name; }
const unsigned char tc_dtype_sizes[] = {
#define X(E, n, S, ...) sizeof(S),
  TC_DTYPES(X, _)
#undef X
};
tc_class tc_dtype_class(tc_dtype dt) { return dtype_info[dt].cls; }
int tc_dtype_bits(tc_dtype dt) { return dtype_info[dt].bits; }
bool tc_dtype_is_unsigned(tc_dtype dt) { return dtype_info[dt].uns; }

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

void tc_int_range(tc_dtype dt, int64_t *lo, int64_t *hi) {
  int bits = tc_dtype_bits(dt);
  bool uns = tc_dtype_is_unsigned(dt);
  *lo = uns ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  *hi = bits == 64 || (uns && bits >= 63) ? INT64_MAX : uns ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
}

int tc_dtype_from_name(const char *name) {
  for (int i = 0; i < TC_DT_COUNT; i++)
    if (strcmp(dtype_info[i].name, name) == 0) return i;
  return -1;
}

/* The promotion table of dtypes.def: each cell prefixed with TC_DT_ (for
 * rows of up to 16 dtypes). */
#define PR_1(a) TC_DT_##a
#define PR_2(a, ...) TC_DT_##a, PR_1(__VA_ARGS__)
#define PR_3(a, ...) TC_DT_##a, PR_2(__VA_ARGS__)
#define PR_4(a, ...) TC_DT_##a, PR_3(__VA_ARGS__)
#define PR_5(a, ...) TC_DT_##a, PR_4(__VA_ARGS__)
#define PR_6(a, ...) TC_DT_##a, PR_5(__VA_ARGS__)
#define PR_7(a, ...) TC_DT_##a, PR_6(__VA_ARGS__)
#define PR_8(a, ...) TC_DT_##a, PR_7(__VA_ARGS__)
#define PR_9(a, ...) TC_DT_##a, PR_8(__VA_ARGS__)
#define PR_10(a, ...) TC_DT_##a, PR_9(__VA_ARGS__)
#define PR_11(a, ...) TC_DT_##a, PR_10(__VA_ARGS__)
#define PR_12(a, ...) TC_DT_##a, PR_11(__VA_ARGS__)
#define PR_13(a, ...) TC_DT_##a, PR_12(__VA_ARGS__)
#define PR_14(a, ...) TC_DT_##a, PR_13(__VA_ARGS__)
#define PR_15(a, ...) TC_DT_##a, PR_14(__VA_ARGS__)
#define PR_16(a, ...) TC_DT_##a, PR_15(__VA_ARGS__)
#define PR_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define PR_ROW(...) PR_PICK(__VA_ARGS__, PR_16, PR_15, PR_14, PR_13, PR_12, PR_11, PR_10, PR_9, PR_8, PR_7, \
                            PR_6, PR_5, PR_4, PR_3, PR_2, PR_1, )(__VA_ARGS__)
static const tc_dtype promotion[TC_DT_COUNT][TC_DT_COUNT] = {
#define X(A, ...) [TC_DT_##A] = {PR_ROW(__VA_ARGS__)},
  TC_PROMOTIONS(X)
#undef X
};

tc_dtype tc_promote(tc_dtype a, tc_dtype b) { return promotion[a][b]; }

int tc_promote_err(tc_dtype a, tc_dtype b, int op, tc_dtype *out, tc_err *err) {
  *out = promotion[a][b];
  if (*out != TC_DT_NONE) return 0;
  tc_dtype u = tc_dtype_is_unsigned(a) ? a : b, s = u == a ? b : a;
  return tc_err_set(err, TC_E_NO_COMMON, op, (int)u,
                    "%s and %s have no common integer dtype; cast one (say i64(x) or u64(x)) first",
                    tc_dtype_name(u), tc_dtype_name(s));
}

static const struct {
  const char *name, *sym, *sig, *doc, *group;
  tc_family fam;
  tc_rule rule;
  int bp;
  tc_assoc assoc;
  tc_check check;
} op_info[] = {
#define X(E, n, sym, fam, rule, group, bp, assoc, check, sig, doc, ...) \
  {#n, sym, sig, doc, group, TC_FAM_##fam, TC_RULE_##rule, bp, TC_ASSOC_##assoc, TC_CHECK_##check},
  TC_OPS(X, _)
#undef X
};

static const struct { int arity; bool ew; } fam_info[] = {
#define X(F, arity, ew, ...) {arity, ew},
  TC_FAMILIES(X)
#undef X
};

const char *tc_op_name(tc_op op) { return op_info[op].name; }
const char *tc_op_symbol(tc_op op) { return op_info[op].sym; }
tc_family tc_op_family(tc_op op) { return op_info[op].fam; }
tc_rule tc_op_rule(tc_op op) { return op_info[op].rule; }
const char *tc_op_group(tc_op op) { return op_info[op].group; }
int tc_op_bp(tc_op op) { return op_info[op].bp; }
tc_assoc tc_op_assoc(tc_op op) { return op_info[op].assoc; }
tc_check tc_op_check(tc_op op) { return op_info[op].check; }
const char *tc_op_params(tc_op op) { return op_info[op].sig; }

/* The signature without its types: "x, axis:axes=all" reads "x, axis=all". */
const char *tc_op_signature(tc_op op) {
  static char shown[TC_OP_COUNT][128];
  static bool ready[TC_OP_COUNT];
  if (!ready[op]) {
    const char *p = op_info[op].sig;
    size_t k = 0;
    bool in_name = true;
    for (; *p && k < sizeof shown[op] - 1; p++) {
      if (*p == ',') in_name = true;
      else if (*p == '=') in_name = false;
      if (in_name && *p == ':') {   /* skip the type */
        while (p[1] && p[1] != '=' && p[1] != ',') p++;
        continue;
      }
      shown[op][k++] = *p;
    }
    shown[op][k] = 0;
    ready[op] = true;
  }
  return shown[op];
}
const char *tc_op_doc(tc_op op) { return op_info[op].doc; }
int tc_op_arity(tc_op op) { return fam_info[op_info[op].fam].arity; }
bool tc_op_is_ew(tc_op op) { return fam_info[op_info[op].fam].ew; }

tc_dtype tc_op_kernel_dtype(tc_op op, tc_dtype dt) {
  tc_class c = tc_dtype_class(dt);
  switch (op_info[op].rule) {
#define X(R, kernel, result, weak) case TC_RULE_##R: return kernel;
    TC_RULES(X)
#undef X
  default: (void)c; return dt;
  }
}

tc_dtype tc_op_result_dtype(tc_op op, tc_dtype kdt) {
  switch (op_info[op].rule) {
#define X(R, kernel, result, weak) case TC_RULE_##R: return result;
    TC_RULES(X)
#undef X
  default: return kdt;
  }
}

bool tc_op_keeps_weak(tc_op op) {
  static const bool keeps[] = {
#define X(R, kernel, result, weak) weak,
    TC_RULES(X)
#undef X
  };
  return keeps[op_info[op].rule];
}

int tc_op_nan_form(tc_op op, double *fill) {
  switch (op) {
#define X(N, P, f) case TC_OP_##N: *fill = f; return TC_OP_##P;
    TC_NAN_FORMS(X)
#undef X
  default: return -1;
  }
}

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
const char *tc_code_message(tc_code code) { return code_info[code].msg; }

static const char *const engine_names[TC_ENGINE_COUNT] = {
#define X(E, name, built) #name,
  TC_ENGINES(X)
#undef X
};
const char *tc_engine_name(tc_engine_id id) { return engine_names[id]; }
int tc_engine_from_name(const char *name) {
  for (int i = 0; i < TC_ENGINE_COUNT; i++)
    if (strcmp(engine_names[i], name) == 0) return i;
  return -1;
}
