/* The operations: typing (promotion, weak scalars), broadcasting, domain
 * pre-checks, and dispatch to the current engine. Engines only compute. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "linalg.h"
#include "reductions.def"

/* ---- typing ---- */
/* The smallest and largest value of an i64 tensor (a weak literal: one
 * element, or a view broadcast from one); false when it has none. */
static bool i64_range(tc_tensor *t, int64_t *lo, int64_t *hi, tc_err *err) {
  int64_t n = tc_numel(t), one;
  if (n == 0) return false;
  int64_t *v = n == 1 ? &one : malloc(sizeof(int64_t) * (size_t)n);
  if (!v) { tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "allocation failed"); return false; }
  bool ok = tc_tensor_to_host(t, v, err) == 0;
  *lo = *hi = v[0];
  for (int64_t i = 1; ok && i < n; i++) {
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
  if (v != &one) free(v);
  return ok;
}

/* 0 when the weak integer w fits the integer dtype dt, else -1 with literal_overflow. */
static int weak_fits(tc_op op, tc_tensor *w, tc_dtype dt, tc_err *err) {
  int bits = tc_dtype_bits(dt);
  bool uns = tc_dtype_is_unsigned(dt);
  int64_t vlo, vhi;
  tc_err rerr;
  tc_err_clear(&rerr);
  if (w->dtype == TC_DT_U64) {   /* a literal above the i64 maximum meeting a u64 (checked by the caller) */
  } else if ((bits < 64 || uns) && i64_range(w, &vlo, &vhi, &rerr)) {
    int64_t lo, hi;
    tc_int_range(dt, &lo, &hi);
    if (vlo < lo || vhi > hi) {
      char range[64];
      if (uns && bits == 64) snprintf(range, sizeof range, "0 to %llu", (unsigned long long)UINT64_MAX);
      else snprintf(range, sizeof range, "%lld to %lld", (long long)lo, (long long)hi);
      return tc_err_set(err, TC_E_LITERAL, (int)op, (int)dt, "literal %lld does not fit %s (range %s); cast one side first",
                        (long long)(vlo < lo ? vlo : vhi), tc_dtype_name(dt), range);
    }
  }
  if (rerr.code != TC_OK) {
    if (err && err->code == TC_OK) *err = rerr;
    return -1;
  }
  return 0;
}

int tc_result_dtype2(tc_op op, tc_tensor *a, tc_tensor *b, tc_dtype *out, tc_err *err) {
  if (tc_get_semantics() != TC_SEM_TCALC) {   /* another system's tables (semantics.c) */
    bool check = false;
    int k = tc_semantics_typing(op, a, b, out, &check, err);
    if (k <= 0) return k < 0 || !check ? k : weak_fits(op, a->weak ? a : b, *out, err);
  }
  /* a weak u64 is a literal above the i64 maximum: only a u64 tensor takes it */
  for (int k = 0; k < 2; k++) {
    tc_tensor *w = k ? b : a, *o = k ? a : b;
    if (w->weak && w->dtype == TC_DT_U64 && (o->weak || o->dtype != TC_DT_U64))
      return tc_err_set(err, TC_E_LITERAL, (int)op, (int)o->dtype,
                        "an integer literal above %lld fits only u64, not %s%s; write u64(...)", (long long)INT64_MAX,
                        o->weak ? "another literal" : tc_dtype_name(o->dtype), "");
  }
  if (a->weak && b->weak) {
    *out = (a->dtype == TC_DT_F64 || b->dtype == TC_DT_F64) ? TC_DT_F64 : TC_DT_I64;
    return 0;
  }
  if (!a->weak && !b->weak) return tc_promote_err(a->dtype, b->dtype, (int)op, out, err);
  tc_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
  tc_class sc = tc_dtype_class(s->dtype);
  if (w->dtype == TC_DT_F64) {
    *out = sc == TC_CLASS_FLT ? s->dtype : TC_DT_F64;
  } else if (sc == TC_CLASS_INT) {
    if (weak_fits(op, w, s->dtype, err) != 0) return -1;
    *out = s->dtype;
  } else {
    *out = sc == TC_CLASS_FLT ? s->dtype : TC_DT_I64;
  }
  return 0;
}

static tc_dtype kernel_dtype(tc_op op, tc_dtype dt) { return tc_op_kernel_dtype(op, dt); }
static tc_dtype result_dtype(tc_op op, tc_dtype kdt) { return tc_op_result_dtype(op, kdt); }

int tc_binary_typing(tc_op op, tc_tensor *a, tc_tensor *b, tc_btype *t, tc_err *err) {
  if (tc_result_dtype2(op, a, b, &t->dt, err) != 0) return -1;
  t->kdt = kernel_dtype(op, t->dt);
  t->odt = result_dtype(op, t->kdt);
  t->weak = a->weak && b->weak && tc_op_keeps_weak(op) && t->odt != TC_DT_BOOL;
  return 0;
}

/* Ops of the ROUNDING rule are the identity on integers unless a kernel exists. */
static bool round_is_identity(tc_op op, tc_dtype dt, const tc_engine *e) {
  if (tc_op_rule(op) != TC_RULE_ROUNDING || tc_dtype_class(dt) != TC_CLASS_INT) return false;
  tc_call c = {.kind = TC_CALL_EW, .op = op, .dtype = dt, .nin = 1};
  return !e->supports(&c);
}

bool tc_cast_supported(const tc_engine *e, tc_dtype from, tc_dtype to) {
  if (from == to) return true;
  tc_tensor out;   /* only its dtype is read (zeroing the whole tensor was 12% of an x[i] = i loop) */
  out.dtype = to;
  tc_call c = {.kind = TC_CALL_CAST, .dtype = from, .nin = 1, .out = &out};
  return e->supports(&c);
}

static bool kernel_supported(const tc_engine *e, tc_op op, tc_dtype kdt) {
  tc_call c = {.kind = tc_op_is_ew(op) ? TC_CALL_EW : TC_CALL_REDUCE, .op = op, .dtype = kdt, .nin = tc_op_arity(op)};
  return e->supports(&c);
}

static bool family_supported(const tc_engine *e, tc_op op, tc_dtype dt);

static bool op_supported(tc_op op, tc_dtype dt, tc_engine_id eid);

/* Asked before every op (a scalar loop asks millions of times): the CPU
 * engine's answers never change, and are remembered. (The CUDA engine's
 * depend on its plugin and on TCALC_CUDA_UNVERIFIED; they are asked.) */
bool tc_op_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  static uint8_t known[TC_OP_COUNT][TC_DT_COUNT];   /* 0 unknown, 1 no, 2 yes */
  if (eid != TC_ENGINE_CPU || (unsigned)op >= TC_OP_COUNT || (unsigned)dt >= TC_DT_COUNT)
    return op_supported(op, dt, eid);
  if (!known[op][dt]) known[op][dt] = op_supported(op, dt, eid) ? 2 : 1;
  return known[op][dt] == 2;
}

/* The families that answer in their own src/ file (BY(f) in TC_FAMILIES). */
#define SUPPORTED_NONE NULL,
#define SUPPORTED_BY(f) f,
static bool (*const fam_supported[])(tc_op, tc_dtype, tc_engine_id) = {
#define X(F, arity, ew, supported) SUPPORTED_##supported
  TC_FAMILIES(X)
#undef X
};

static bool op_supported(tc_op op, tc_dtype dt, tc_engine_id eid) {
  const tc_engine *e = tc_engines[eid];
  if (!e) return false;
  tc_call row = {.kind = TC_CALL_ROW, .op = op, .dtype = dt};
  if (!e->supports(&row)) return false;
  tc_family fam = tc_op_family(op);
  if (fam_supported[fam]) return fam_supported[fam](op, dt, eid);
  switch (fam) {
  case TC_FAM_INFO:
    return true;
  case TC_FAM_SHAPE: case TC_FAM_INDEX: case TC_FAM_CTOR: case TC_FAM_IO:
    return family_supported(e, op, dt);
  case TC_FAM_CAST:
    for (int t = 0; t < TC_DT_COUNT; t++)
      if (!tc_cast_supported(e, dt, (tc_dtype)t)) return false;
    return true;
  case TC_FAM_CLIP:
    return kernel_supported(e, TC_OP_MAXIMUM, dt) && kernel_supported(e, TC_OP_MINIMUM, dt);
  default:
    if (round_is_identity(op, dt, e)) return true;
    tc_dtype k = kernel_dtype(op, dt);
    return tc_cast_supported(e, dt, k) && kernel_supported(e, op, k);
  }
}

/* ---- helpers ---- */
/* Prefixes err with the op when an inner call failed without naming one. */
static void annotate(tc_err *err, tc_op op, int dt) {
  if (!err || err->code == TC_OK) return;
  if (err->op < 0) err->op = (int)op;
  if (err->dtype < 0) err->dtype = dt;
}

static int unsupported(tc_op op, tc_dtype dt, tc_err *err) {
  tc_engine_id e = tc_get_engine();
  /* an engine that cannot run at all supports nothing: say why */
  if (tc_engine_check(e, err) != 0) { annotate(err, op, (int)dt); return -1; }
  return tc_err_set(err, TC_E_DTYPE, (int)op, (int)dt, "not supported for %s on %s%s", tc_dtype_name(dt),
                    tc_engine_name(e),
                    tc_dtype_class(dt) == TC_CLASS_BOOL && tc_op_rule(op) == TC_RULE_ARITH
                        ? " (cast bool to a number first)" : "");
}

/* A call the current engine does not judge under its overflow policy, run
 * on the CPU engine: the operands copied there, the result copied back. */
static int run_on_cpu(tc_call *c, tc_err *err) {
  tc_call h = *c;
  tc_tensor *in[3] = {0};
  int rc = -1;
  for (int i = 0; i < c->nin; i++)
    if (!(h.in[i] = in[i] = tc_to_engine(c->in[i], TC_ENGINE_CPU, err))) goto done;
  h.out = tc_tensor_new_on(TC_ENGINE_CPU, c->out->dtype, c->out->ndim, c->out->shape, err);
  if (h.out && tc_engine_check(TC_ENGINE_CPU, err) == 0 && tc_engines[TC_ENGINE_CPU]->run(&h, err) == 0)
    rc = tc_tensor_write(c->out, tc_tensor_data(h.out), err);
  tc_tensor_free(h.out);
done:
  for (int i = 0; i < c->nin; i++) tc_tensor_free(in[i]);
  return rc;
}

static int run(tc_call *c, tc_err *err) {
  tc_engine_id id = tc_get_engine();
  if (tc_engine_check(id, err) != 0) return -1;
  const tc_engine *e = tc_engines[id];
  if (c->overflow != TC_OVERFLOW_WRAP && id != TC_ENGINE_CPU && !e->supports(c)) return run_on_cpu(c, err);
  return e->run(c, err);
}

/* A contiguous cast of x (already on the current engine) to dt, its
 * integer results judged under ovf (TC_OVERFLOW_WRAP: the kernel's bits). */
static tc_tensor *cast_raw(tc_tensor *x, tc_dtype dt, tc_overflow ovf, tc_err *err) {
  tc_tensor *out = tc_tensor_new(dt, x->ndim, x->shape, err);
  if (!out || tc_numel(x) == 0) return out;
  tc_call c = {.kind = TC_CALL_CAST, .dtype = x->dtype, .nin = 1, .in = {x}, .out = out, .overflow = ovf};
  if (run(&c, err) != 0) { tc_tensor_free(out); return NULL; }
  return out;
}

/* x on the current engine with dtype dt (a new reference). */
static tc_tensor *operand(tc_tensor *x, tc_dtype dt, tc_err *err) {
  tc_tensor *m = tc_to_engine(x, tc_get_engine(), err);
  if (!m || m->dtype == dt) return m;
  tc_tensor *c = cast_raw(m, dt, TC_OVERFLOW_WRAP, err);
  tc_tensor_free(m);
  return c;
}

/* An elementwise operand: as operand(), except that the CPU engine converts
 * elementwise inputs itself, a block at a time inside the kernel, so no
 * whole converted copy is made (peak memory: inputs, output and a small
 * buffer). Not for ops with an integer pre-check, which reads the
 * converted divisor or exponent. */
static tc_tensor *ew_operand(tc_op op, tc_tensor *x, tc_dtype dt, tc_err *err) {
  if (tc_get_engine() == TC_ENGINE_CPU && tc_op_check(op) == TC_CHECK_NONE && x->dtype != dt)
    return tc_to_engine(x, TC_ENGINE_CPU, err);
  return operand(x, dt, err);
}

static void release(tc_tensor **ts, int n) {
  for (int i = 0; i < n; i++) tc_tensor_free(ts[i]);
}

/* The pre-check of SPEC 4.1: scan the divisor/exponent over its own shape
 * (before broadcasting) for the first offending element, and report it at
 * the first result position that reads it. */
static int precheck(tc_op op, tc_tensor *b, int ondim, const int64_t *oshape, tc_err *err) {
  tc_check chk = tc_op_check(op);
  int64_t n;
  if (chk == TC_CHECK_NONE || tc_dtype_class(b->dtype) != TC_CLASS_INT) return 0;
  if (!tc_shape_numel(ondim, oshape, &n) || n == 0) return 0;
  tc_call c = {.kind = TC_CALL_FIND, .dtype = b->dtype, .nin = 1, .in = {b},
               .pred = chk == TC_CHECK_ZERO ? TC_PRED_ZERO : TC_PRED_NEG, .found = -1};
  if (run(&c, err) != 0) return -1;
  if (c.found < 0) return 0;
  int64_t idx[TC_MAX_DIMS] = {0}, rem = c.found;
  int lead = ondim - b->ndim;
  for (int i = b->ndim - 1; i >= 0; i--) {
    idx[lead + i] = b->shape[i] ? rem % b->shape[i] : 0;
    rem = b->shape[i] ? rem / b->shape[i] : 0;
  }
  char where[TC_MAX_DIMS * 24 + 16];
  tc_index_text(where, sizeof where, ondim, idx);
  if (chk == TC_CHECK_ZERO)
    tc_err_set(err, TC_E_DIV_ZERO, (int)op, (int)b->dtype, "integer divisor is zero%s", where);
  else if (chk == TC_CHECK_NEGEXP)
    tc_err_set(err, TC_E_NEG_EXP, (int)op, (int)b->dtype, "integer exponent is negative%s", where);
  else
    tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)b->dtype, "shift count is negative%s", where);
  tc_err_set_index(err, ondim, idx);
  return -1;
}

/* Broadcast n operands (already converted) to their common shape and run
 * an elementwise kernel into a new tensor of dtype odt. */
static tc_tensor *run_ew(tc_op op, tc_dtype kdt, tc_dtype odt, int n, tc_tensor **ops, tc_err *err) {
  int ndim = 0;
  int64_t shape[TC_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int64_t tmp[TC_MAX_DIMS];
    int nd;
    if (tc_broadcast_shapes(ndim, shape, ops[i]->ndim, ops[i]->shape, &nd, tmp, op, err) != 0) return NULL;
    ndim = nd;
    memcpy(shape, tmp, sizeof tmp);
  }
  if (n == 2 && precheck(op, ops[1], ndim, shape, err) != 0) return NULL;
  tc_tensor *out = tc_tensor_new(odt, ndim, shape, err);
  if (!out) return NULL;
  if (tc_numel(out) == 0) return out;
  tc_tensor *views[3] = {0};
  tc_call c = {.kind = TC_CALL_EW, .op = op, .dtype = kdt, .nin = n, .out = out};
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    /* an operand of the result's shape is its own broadcast view */
    if (ops[i]->ndim == ndim && !memcmp(ops[i]->shape, shape, sizeof(int64_t) * (size_t)ndim)) {
      c.in[i] = ops[i];
      continue;
    }
    views[i] = tc_view_broadcast(ops[i], ndim, shape, err);
    if (!views[i]) rc = -1;
    c.in[i] = views[i];
  }
  c.overflow = tc_overflow_judges(op, kdt);   /* check / saturate (SPEC 13) */
  if (rc == 0) rc = run(&c, err);
  release(views, n);
  if (rc != 0) { tc_tensor_free(out); return NULL; }
  return out;
}

/* ---- scalars ----
 * A script's loop runs scalar statements millions of times. Two 0-d
 * operands held by the CPU engine, when it is the current one, take a
 * short path: the same typing, supported check, pre-check and kernel (or
 * overflow judgement) as the general path, in the same order, without its
 * broadcasting, views and operand references; operands of the kernel's
 * dtype go straight to the engine's kernel (its scalar hook), which run()
 * would pick for the call: the kernels an engine picks do not change
 * while it runs, and all of them give the same bits. TCALC_SCALAR_FAST=0 turns
 * it off, with the interpreter's own shortcuts (tests/scalar compares the
 * output of both). */
bool tc_scalar_fast(void) {
  static int on = -1;
  if (on < 0) {
    const char *v = getenv("TCALC_SCALAR_FAST");
    on = !(v && !strcmp(v, "0"));
  }
  return on;
}

/* ty: tc_binary_typing's answer; fn: the engine's kernel for its kdt (NULL: run() finds it); ca, cb: the
 * engine's casts of a and b to kdt, where they have another dtype (NULL: run() converts them) */
typedef struct { tc_btype ty; tc_scalar_fn fn; tc_cast_fn ca, cb; } scalar_type;

/* The typing of a OP b, remembered for each (op, dtypes, weakness) whose
 * typing does not read the values (all but a weak integer literal meeting
 * a typed integer: whether it fits is judged each time). general: the
 * general path's case (no kernel, an operand to convert first, matmul). */
typedef struct { unsigned key; scalar_type st; bool general, check; } scalar_memo;
#define SCALAR_MEMO 256
static scalar_memo scalar_memos[SCALAR_MEMO];

void tc_scalar_memo_clear(void) { memset(scalar_memos, 0, sizeof scalar_memos); }

static int scalar_memo_fill(tc_op op, tc_tensor *a, tc_tensor *b, scalar_memo *m, tc_err *err) {
  m->general = true;
  if (tc_op_family(op) == TC_FAM_MATMUL) return 0;
  if (tc_binary_typing(op, a, b, &m->st.ty, err) != 0) return -1;
  tc_dtype dt = m->st.ty.dt;
  const tc_engine *cpu = tc_engines[TC_ENGINE_CPU];
  tc_dtype kdt = m->st.ty.kdt;
  m->st.fn = cpu->scalar ? cpu->scalar(op, kdt) : NULL;
  m->st.ca = a->dtype != kdt && cpu->scalar_cast ? cpu->scalar_cast(a->dtype, kdt) : NULL;
  m->st.cb = b->dtype != kdt && cpu->scalar_cast ? cpu->scalar_cast(b->dtype, kdt) : NULL;
  m->check = tc_op_check(op) != TC_CHECK_NONE;
  /* an op with a pre-check reads converted operands: the general path converts them; an op the engine
     lacks: the general path says why */
  m->general = !tc_op_supported(op, dt, TC_ENGINE_CPU) || (m->check && (a->dtype != m->st.ty.kdt || b->dtype != m->st.ty.kdt));
  return 0;
}

/* 1: a OP b takes the short path (typed in *st, its pre-check passed);
 * 0: the general path's case; -1: an error, as the general path gives it. */
static int scalar_typing(tc_op op, tc_tensor *a, tc_tensor *b, scalar_type *st, tc_err *err) {
  if (a->ndim != 0 || b->ndim != 0 || tc_get_engine() != TC_ENGINE_CPU || a->storage->engine != TC_ENGINE_CPU ||
      b->storage->engine != TC_ENGINE_CPU || !tc_scalar_fast() ||
      tc_semantics_answers(op))   /* semantics.c answers those */
    return 0;
  unsigned key = ((unsigned)tc_get_semantics() << 20 | (unsigned)op << 10 | (unsigned)a->dtype << 6 |
                  (unsigned)b->dtype << 2 | (unsigned)a->weak << 1 | (unsigned)b->weak) + 1;
  scalar_memo *m = &scalar_memos[(key ^ key >> 8) % SCALAR_MEMO], fresh;
  if (m->key != key) {
    tc_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
    bool by_value = a->weak != b->weak && w->dtype != TC_DT_F64 && tc_dtype_class(s->dtype) == TC_CLASS_INT;
    if (by_value) m = &fresh;
    if (scalar_memo_fill(op, a, b, m, err) != 0) { m->key = 0; return -1; }
    m->key = by_value ? 0 : key;
  }
  if (m->general) return 0;
  *st = m->st;
  if (m->check && precheck(op, b, 0, NULL, err) != 0) { annotate(err, op, (int)st->ty.kdt); return -1; }
  return 1;
}

/* x's element in the kernel's dtype kdt: its own, or converted by cv into buf; NULL when neither. */
static const char *scalar_operand(const tc_tensor *x, tc_dtype kdt, tc_cast_fn cv, char *buf) {
  if (x->dtype == kdt) return tc_tensor_data(x);
  if (!cv) return NULL;
  cv(1, buf, tc_tensor_data(x), 1);
  return buf;
}

/* The kernel of a short-path a OP b into out, a 0-d CPU tensor of st's dtype. */
static int scalar_kernel(tc_op op, const scalar_type *st, tc_tensor *a, tc_tensor *b, tc_tensor *out, tc_err *err) {
  tc_overflow judged = tc_overflow_judges(op, st->ty.kdt);
  if (st->fn && !judged) {   /* the kernel itself, as run() finds it, after the casts run() would make */
    _Alignas(16) char ba[16], bb[16];
    const char *pa = scalar_operand(a, st->ty.kdt, st->ca, ba), *pb = scalar_operand(b, st->ty.kdt, st->cb, bb);
    if (pa && pb) {
      st->fn(1, tc_tensor_data(out), pa, 0, pb, 0);
      return 0;
    }
  }
  tc_call c;   /* the fields an elementwise call has (zeroing all of them is a cost of its own here) */
  c.kind = TC_CALL_EW;
  c.op = op;
  c.dtype = st->ty.kdt;
  c.nin = 2;
  c.in[0] = a;
  c.in[1] = b;
  c.in[2] = NULL;
  c.out = out;
  c.overflow = judged;
  int rc = run(&c, err);
  if (rc != 0) annotate(err, op, (int)st->ty.kdt);
  return rc;
}

/* Whether a result of size bytes fits the memory limit (the general path's allocation would fail otherwise). */
static bool scalar_fits(size_t size) {
  uint64_t lim = tc_get_max_memory();
  return size <= lim && tc_mem_in_use() <= lim - size;
}

/* out: a 0-d CPU tensor of dtype dt over bits, its storage s (all on the caller's stack). */
static void scalar_shell(tc_tensor *out, tc_storage *s, char *bits, tc_dtype dt) {
  s->refcnt = 1;   /* field by field: an initializer's zeroing compiled to a slow rep stos here */
  s->engine = TC_ENGINE_CPU;
  s->data = bits;
  s->nbytes = tc_dtype_size(dt);
  s->map = NULL;
  s->map_len = 0;
  s->heap = false;
  out->refcnt = 1;
  out->dtype = dt;
  out->weak = false;
  out->ndim = 0;
  out->offset = 0;
  out->storage = s;
}

int tc_scalar_into(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  scalar_type st;
  int k = scalar_typing(op, a, b, &st, err);
  if (k <= 0) return k < 0 ? -1 : 1;
  size_t size = tc_dtype_size(st.ty.odt);
  if (st.ty.odt != a->dtype || st.ty.weak != a->weak || !scalar_fits(size)) return 1;
  _Alignas(8) char bits[8];   /* the kernel writes here first: an error leaves a as it was */
  tc_storage s;
  tc_tensor out;
  scalar_shell(&out, &s, bits, st.ty.odt);
  if (scalar_kernel(op, &st, a, b, &out, err) != 0) return -1;
  char *to = tc_tensor_data(a);
  switch (size) {   /* fixed sizes: a memcpy of a variable size is a slow string move here */
  case 1: memcpy(to, bits, 1); break;
  case 2: memcpy(to, bits, 2); break;
  case 4: memcpy(to, bits, 4); break;
  default: memcpy(to, bits, 8); break;
  }
  return 0;
}

int tc_scalar_truth(tc_op op, tc_tensor *a, tc_tensor *b, bool *truth, tc_err *err) {
  scalar_type st;
  int k = scalar_typing(op, a, b, &st, err);
  if (k <= 0) return k < 0 ? -1 : 1;
  if (st.ty.odt != TC_DT_BOOL || !scalar_fits(1)) return 1;
  _Alignas(8) char bits[8];
  tc_storage s;
  tc_tensor out;
  scalar_shell(&out, &s, bits, TC_DT_BOOL);
  if (scalar_kernel(op, &st, a, b, &out, err) != 0) return -1;
  *truth = bits[0] != 0;
  return 0;
}

int tc_binary_inplace(tc_op op, tc_tensor **pa, tc_tensor *b, tc_err *err) {
  tc_tensor *a = *pa;
  if (a->ndim == 0 && a->refcnt == 1 && a->storage->refcnt == 1 && !a->storage->map) {
    int k = tc_scalar_into(op, a, b, err);
    if (k <= 0) return k;
  }
  tc_tensor *r = tc_binary(op, a, b, err);
  if (!r) return -1;
  tc_tensor_free(a);
  *pa = r;
  return 0;
}

/* ---- operations ---- */
tc_tensor *tc_binary(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  if (tc_semantics_answers(op)) {
    tc_tensor *out = NULL;
    int k = tc_semantics_binary(op, a, b, &out, err);
    if (k <= 0) {
      if (k < 0) annotate(err, op, -1);
      return out;
    }
  }
  return tc_binary_eager(op, a, b, err);
}

tc_tensor *tc_binary_eager(tc_op op, tc_tensor *a, tc_tensor *b, tc_err *err) {
  scalar_type st;
  int k = scalar_typing(op, a, b, &st, err);
  if (k < 0) return NULL;
  if (k > 0) {
    tc_tensor *out = tc_tensor_new(st.ty.odt, 0, NULL, err);
    if (!out) { annotate(err, op, (int)st.ty.kdt); return NULL; }
    if (scalar_kernel(op, &st, a, b, out, err) != 0) { tc_tensor_free(out); return NULL; }
    out->weak = st.ty.weak;
    return out;
  }
  if (tc_op_family(op) == TC_FAM_MATMUL) return tc_linalg_binary(op, a, b, err);   /* a @ b */
  tc_btype ty;
  if (tc_binary_typing(op, a, b, &ty, err) != 0) return NULL;
  if (!tc_op_supported(op, ty.dt, tc_get_engine())) { unsupported(op, ty.dt, err); return NULL; }
  tc_tensor *ops[2] = {ew_operand(op, a, ty.kdt, err), NULL};
  if (ops[0]) ops[1] = ew_operand(op, b, ty.kdt, err);
  tc_tensor *out = ops[1] ? run_ew(op, ty.kdt, ty.odt, 2, ops, err) : NULL;
  release(ops, 2);
  if (out) out->weak = ty.weak;
  else annotate(err, op, (int)ty.kdt);
  return out;
}

tc_tensor *tc_unary(tc_op op, tc_tensor *x, tc_err *err) {
  if (!tc_op_supported(op, x->dtype, tc_get_engine())) { unsupported(op, x->dtype, err); return NULL; }
  if (round_is_identity(op, x->dtype, tc_engines[tc_get_engine()])) return tc_tensor_ref(x);
  tc_dtype kdt = kernel_dtype(op, x->dtype);
  tc_tensor *ops[1] = {ew_operand(op, x, kdt, err)};
  tc_tensor *out = ops[0] ? run_ew(op, kdt, result_dtype(op, kdt), 1, ops, err) : NULL;
  release(ops, 1);
  if (out) out->weak = x->weak && tc_op_keeps_weak(op) && out->dtype != TC_DT_BOOL;
  else annotate(err, op, (int)kdt);
  return out;
}

tc_tensor *tc_cast(tc_tensor *x, tc_dtype dt, tc_err *err) {
  if (!tc_op_supported(TC_OP_CAST, x->dtype, tc_get_engine()) ||
      !tc_cast_supported(tc_engines[tc_get_engine()], x->dtype, dt)) {
    unsupported(TC_OP_CAST, x->dtype, err);
    return NULL;
  }
  tc_tensor *out = operand(x, dt, err);
  if (out && out->weak) {
    /* the same data, no longer weak: a fresh view so x keeps its flag */
    tc_tensor *v = tc_view_broadcast(out, out->ndim, out->shape, err);
    tc_tensor_free(out);
    out = v;
    if (out) out->weak = false;
  }
  if (!out) annotate(err, TC_OP_CAST, (int)x->dtype);
  return out;
}

tc_tensor *tc_cast_user(tc_tensor *x, tc_dtype dt, tc_err *err) {
  if (tc_semantics_lacks(dt, TC_OP_CAST, err) != 0) return NULL;   /* u64(x) under torch */
  tc_overflow judged = tc_overflow_judges_cast(x->dtype, dt);
  if (!judged) return tc_cast(x, dt, err);
  if (!tc_op_supported(TC_OP_CAST, x->dtype, tc_get_engine()) ||
      !tc_cast_supported(tc_engines[tc_get_engine()], x->dtype, dt)) {
    unsupported(TC_OP_CAST, x->dtype, err);
    return NULL;
  }
  tc_tensor *m = tc_to_engine(x, tc_get_engine(), err);
  tc_tensor *out = m ? cast_raw(m, dt, judged, err) : NULL;
  tc_tensor_free(m);
  if (!out) annotate(err, TC_OP_CAST, (int)x->dtype);
  return out;
}

tc_tensor *tc_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b, tc_err *err) {
  if (cond->dtype != TC_DT_BOOL) {
    tc_err_set(err, TC_E_BAD_ARG, TC_OP_WHERE, (int)cond->dtype, "cond must be bool, not %s (compare first, e.g. x != 0)",
               tc_dtype_name(cond->dtype));
    return NULL;
  }
  tc_dtype dt;
  if (tc_result_dtype2(TC_OP_WHERE, a, b, &dt, err) != 0) return NULL;
  if (!tc_op_supported(TC_OP_WHERE, dt, tc_get_engine())) { unsupported(TC_OP_WHERE, dt, err); return NULL; }
  tc_tensor *ops[3] = {operand(cond, TC_DT_BOOL, err), NULL, NULL};
  if (ops[0]) ops[1] = operand(a, dt, err);
  if (ops[1]) ops[2] = operand(b, dt, err);
  tc_tensor *out = ops[2] ? run_ew(TC_OP_WHERE, dt, dt, 3, ops, err) : NULL;
  release(ops, 3);
  if (!out) annotate(err, TC_OP_WHERE, (int)dt);
  return out;
}

void tc_reattribute(tc_err *err, tc_op outer) {
  if (!err || err->code == TC_OK || err->op < 0) return;
  err->op = (int)outer;
}

tc_tensor *tc_clip(tc_tensor *x, tc_tensor *lo, tc_tensor *hi, tc_err *err) {
  if (!tc_op_supported(TC_OP_CLIP, x->dtype, tc_get_engine())) { unsupported(TC_OP_CLIP, x->dtype, err); return NULL; }
  tc_tensor *m = tc_binary(TC_OP_MAXIMUM, x, lo, err);
  if (!m) { tc_reattribute(err, TC_OP_CLIP); return NULL; }
  tc_tensor *out = tc_binary(TC_OP_MINIMUM, m, hi, err);
  tc_tensor_free(m);
  if (!out) tc_reattribute(err, TC_OP_CLIP);
  return out;
}

/* ---- reductions ---- */
int tc_axes_mask(const tc_axes *axes, int ndim, bool *mask, tc_op op, tc_err *err) {
  for (int i = 0; i < ndim; i++) mask[i] = axes->all;
  if (axes->all) return 0;
  if (axes->n < 0 || axes->n > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_AXIS, (int)op, -1, "%d axes given; a tensor has at most %d", axes->n, TC_MAX_DIMS);
  for (int i = 0; i < axes->n; i++) {
    int64_t a = axes->axis[i];
    if (a < -ndim || a >= ndim)
      return tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld is out of range for a tensor of %d dimension%s",
                        (long long)a, ndim, ndim == 1 ? "" : "s");
    if (a < 0) a += ndim;
    if (mask[a]) return tc_err_set(err, TC_E_AXIS, (int)op, -1, "axis %lld is repeated", (long long)axes->axis[i]);
    mask[a] = true;
  }
  return 0;
}

tc_tensor *tc_reduce(tc_op op, tc_tensor *x, const tc_axes *axes, bool keepdims, tc_err *err) {
  bool mask[TC_MAX_DIMS];
  if (tc_axes_mask(axes, x->ndim, mask, op, err) != 0) return NULL;
  if (!tc_op_supported(op, x->dtype, tc_get_engine())) { unsupported(op, x->dtype, err); return NULL; }
  if (tc_semantics_refuses(op, x->dtype, err) != 0) return NULL;
  if (op == TC_OP_MEAN && tc_semantics_mean_of_sum(x->dtype)) {   /* the sum rounded to x's dtype, then divided */
    tc_tensor *sum = tc_reduce(TC_OP_REDUCE_SUM, x, axes, keepdims, err);
    int64_t n = sum && tc_numel(sum) ? tc_numel(x) / tc_numel(sum) : 0;
    tc_tensor *k = sum ? tc_scalar_i64(n, true, err) : NULL, *r = k ? tc_binary_eager(TC_OP_DIV, sum, k, err) : NULL;
    tc_tensor_free(sum);
    tc_tensor_free(k);
    if (!r) annotate(err, op, (int)x->dtype);
    return r;
  }
  tc_dtype kdt = kernel_dtype(op, x->dtype), odt = result_dtype(op, kdt);
  int perm[TC_MAX_DIMS], nk = 0, nred = 0;
  int64_t kshape[TC_MAX_DIMS], kdshape[TC_MAX_DIMS], rshape[TC_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++)
    if (!mask[i]) { perm[nk] = i; kshape[nk++] = x->shape[i]; }
  for (int i = 0; i < x->ndim; i++) {
    kdshape[i] = mask[i] ? 1 : x->shape[i];
    if (mask[i]) { rshape[nred] = x->shape[i]; perm[nk + nred++] = i; }
  }
  /* Only emptiness matters here; the counts of an empty tensor's other
   * dims may not fit an int64 (tc_tensor_new reports the output's). */
  int64_t m, n;
  bool m_empty = tc_shape_numel(nk, kshape, &m) && m == 0;
  bool n_empty = tc_shape_numel(nred, rshape, &n) && n == 0;
  static const char *const lacks[TC_OP_COUNT] = {   /* what zero elements lack, if anything */
#define X(OP, empty, tol) [TC_OP_##OP] = empty,
    TC_REDUCTIONS(X)
#undef X
  };
  if (lacks[op] && *lacks[op] && n_empty && !m_empty) {
    tc_err_set(err, TC_E_EMPTY, (int)op, (int)x->dtype, "reduction over zero elements has no %s", lacks[op]);
    return NULL;
  }
  /* The mean of integers sums in f64 (the FLOAT rule): an engine whose kernel reads the
   * integers directly (converting each as it is read) needs no f64 copy. */
  tc_dtype in_dt = kdt;
  if (tc_op_rule(op) == TC_RULE_FLOAT && kdt != x->dtype && kernel_supported(tc_engines[tc_get_engine()], op, x->dtype))
    in_dt = x->dtype;
  tc_tensor *cx = operand(x, in_dt, err), *px = NULL, *out = NULL;
  if (cx) px = tc_view_permute(cx, perm, err);
  if (px) out = tc_tensor_new(odt, nk, kshape, err);
  if (out && !m_empty) {
    tc_call c = {.kind = TC_CALL_REDUCE, .op = op, .dtype = in_dt, .nin = 1, .in = {px}, .out = out, .nred = nred,
                 .overflow = tc_overflow_judges_reduce(op, in_dt)};   /* check / saturate (SPEC 13) */
    if (run(&c, err) != 0) {
      tc_tensor_free(out);
      out = NULL;
    }
  }
  tc_tensor_free(px);
  tc_tensor_free(cx);
  if (!out) { annotate(err, op, (int)kdt); return NULL; }
  if (keepdims) {
    out->ndim = x->ndim;
    memcpy(out->shape, kdshape, sizeof(int64_t) * (size_t)x->ndim);
    tc_set_contiguous_strides(out);
  }
  out->weak = x->weak && tc_op_keeps_weak(op) && odt == kdt && odt != TC_DT_BOOL;
  if (tc_semantics_reduced(op, x, out, err) != 0) {   /* NumPy's warnings */
    tc_tensor_free(out);
    return NULL;
  }
  return out;
}

/* ---- helpers for the other op families (src/internal.h) ---- */
int tc_run_call(tc_call *c, tc_err *err) { return run(c, err); }
tc_tensor *tc_operand(tc_tensor *x, tc_dtype dt, tc_err *err) { return operand(x, dt, err); }
void tc_annotate(tc_err *err, tc_op op, int dt) { annotate(err, op, dt); }
int tc_unsupported(tc_op op, tc_dtype dt, tc_err *err) { return unsupported(op, dt, err); }
int tc_check_supported(tc_op op, tc_dtype dt, tc_err *err) {
  return tc_op_supported(op, dt, tc_get_engine()) ? 0 : unsupported(op, dt, err);
}

/* What the shape, indexing, constructor and file ops need of an engine at
 * dtype dt (for constructors and load: the result's dtype). */
static bool call_ok(const tc_engine *e, tc_call c) { return e->supports(&c); }

static bool index_casts_ok(const tc_engine *e) {
  for (int t = 0; t < TC_DT_COUNT; t++) {
    if (tc_dtype_class((tc_dtype)t) != TC_CLASS_INT) continue;
    if (!tc_cast_supported(e, (tc_dtype)t, TC_DT_I64)) return false;
    if (!call_ok(e, (tc_call){.kind = TC_CALL_FIND, .dtype = (tc_dtype)t, .nin = 1, .pred = TC_PRED_RANGE}))
      return false;
  }
  return true;
}

static bool family_supported(const tc_engine *e, tc_op op, tc_dtype dt) {
  bool copy = call_ok(e, (tc_call){.kind = TC_CALL_COPY, .dtype = dt, .nin = 1});
  switch (op) {
  case TC_OP_TRIL: case TC_OP_TRIU:
    return copy && call_ok(e, (tc_call){.kind = TC_CALL_TRI, .op = op, .dtype = dt, .nin = 1});
  case TC_OP_TAKE: case TC_OP_TAKE_ALONG_AXIS:
    return copy && index_casts_ok(e) && call_ok(e, (tc_call){.kind = TC_CALL_GATHER, .dtype = dt, .nin = 2});
  case TC_OP_SCATTER:
    return copy && index_casts_ok(e) &&
           call_ok(e, (tc_call){.kind = TC_CALL_SCATTER, .dtype = dt, .nin = 2, .red = TC_SCATTER_SET});
  case TC_OP_ARANGE:
    return call_ok(e, (tc_call){.kind = TC_CALL_RANGE, .dtype = dt});
  case TC_OP_LINSPACE:
    return call_ok(e, (tc_call){.kind = TC_CALL_RANGE, .dtype = dt, .endpoint = true});
  case TC_OP_RAND:
    return call_ok(e, (tc_call){.kind = TC_CALL_RANDOM, .dtype = dt, .dist = TC_DIST_UNIFORM});
  case TC_OP_RANDN:
    return call_ok(e, (tc_call){.kind = TC_CALL_RANDOM, .dtype = dt, .dist = TC_DIST_NORMAL});
  case TC_OP_RANDINT:   /* made in i64, then cast */
    return (tc_dtype_class(dt) == TC_CLASS_INT || dt == TC_DT_BOOL) &&
           call_ok(e, (tc_call){.kind = TC_CALL_RANDOM, .dtype = TC_DT_I64, .dist = TC_DIST_INT}) &&
           (dt == TC_DT_I64 || tc_cast_supported(e, TC_DT_I64, dt));
  case TC_OP_LOAD: case TC_OP_SAVE: case TC_OP_LOAD_NPZ: case TC_OP_SAVE_NPZ:
    return copy && dt != TC_DT_BF16;   /* NumPy has no bfloat16 */
  default:
    return copy;
  }
}
