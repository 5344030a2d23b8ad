/* The CUDA engine's vtable: capability rows (only those in verified.def are
 * claimed), iteration plans built from tensor views, and dispatch to the
 * stamped kernels in the .cu files. Those are built as a plugin,
 * libtcalc-cuda.so, with the CUDA runtime linked into it statically; this
 * file loads it with dlopen the first time the engine is asked for, so a
 * start that never uses the engine pays nothing for it, and a machine
 * without the plugin, a GPU or a driver gets engine_unavailable saying why.
 * Plain C: no CUDA type crosses into this file or src/. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../src/engine.h"
#include "tcu.h"

/* ---- the plugin ---- */
#define PLUGIN_NAME "libtcalc-cuda.so"
static const tcu_api *T;        /* the plugin's table, once loaded */
static int plugin_state;        /* 0 not tried, 1 loaded, -1 unavailable */
static char plugin_why[600];
static bool emulate;

/* Where the plugin is: $TCALC_CUDA_LIB, else next to the executable, else
 * in ../lib/tcalc from it (an installed layout); the first that exists, or
 * the first of them, whose dlopen error then names it. */
static void plugin_path(char *path, size_t n) {
  const char *env = getenv("TCALC_CUDA_LIB");
  if (env && *env) { snprintf(path, n, "%s", env); return; }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) { snprintf(path, n, "%s", PLUGIN_NAME); return; }   /* the loader's search path */
  exe[len] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  const char *dir = slash ? exe : ".";
  snprintf(path, n, "%s/../lib/tcalc/" PLUGIN_NAME, dir);
  if (access(path, F_OK) == 0) {
    char here[PATH_MAX + 64];
    snprintf(here, sizeof here, "%s/" PLUGIN_NAME, dir);
    if (access(here, F_OK) != 0) return;
  }
  snprintf(path, n, "%s/" PLUGIN_NAME, dir);
}

static int plugin_load(void) {
  if (plugin_state) return plugin_state > 0 ? 0 : -1;
  plugin_state = -1;
  char path[PATH_MAX + 64];
  plugin_path(path, sizeof path);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(plugin_why, sizeof plugin_why, "cannot load its plugin: %.560s", e ? e : path);
    return -1;
  }
  const tcu_api *api = dlsym(h, TCU_API_SYMBOL);
  if (!api || api->abi != TCU_ABI || api->api_size != sizeof(tcu_api) || api->plan_size != sizeof(tcu_plan) ||
      api->splan_size != sizeof(tcu_splan) || api->rplan_size != sizeof(tcu_rplan) ||
      api->mplan_size != sizeof(tcu_mplan) || api->lplan_size != sizeof(tcu_lplan) ||
      api->call_size != sizeof(tc_call) || api->tcall_size != sizeof(tcu_call)) {
    snprintf(plugin_why, sizeof plugin_why, "%.480s is not the plugin of this build of tcalc (%s)", path,
             api ? "another interface version" : "no " TCU_API_SYMBOL);
    dlclose(h);
    return -1;
  }
  T = api;
  T->set_emulate(emulate);
  plugin_state = 1;
  return 0;
}

void tc_cuda_test_emulate(bool on) {
  emulate = on;
  if (T) T->set_emulate(on);
}

const char *tc_cuda_test_blas(void) {
  static char why[512];
  if (plugin_load() != 0) return plugin_why;
  if (T->blas_load(why, sizeof why) != 0) return why;
  return T->blas_name();
}

/* ---- capability rows ---- */
#include "verified.def"
/* verified[op][dt], stamped from the rows once (a row twice is an error:
 * -Woverride-init) and read in constant time on every call. */
static const bool verified[TC_OP_COUNT][TC_DT_COUNT] = {
#define TC_ROW_(OP, DT) [TC_OP_##OP][TC_DT_##DT] = true,
  TC_CUDA_VERIFIED(TC_ROW_)
#undef TC_ROW_
};

_Static_assert((int)TC_PRED_ZERO == TCU_PRED_ZERO && (int)TC_PRED_NEG == TCU_PRED_NEG &&
               (int)TC_PRED_RANGE == TCU_PRED_RANGE, "tcu.h mirrors tc_pred");

static bool allow_unverified;
void tc_cuda_test_unverified(bool on) { allow_unverified = on; }

static bool row_verified(int op, int dt) {
  return op >= 0 && op < TC_OP_COUNT && dt >= 0 && dt < TC_DT_COUNT && verified[op][dt];
}

/* ---- the vtable ---- */
static int cuda_init(tc_err *err) {
  char why[256] = "";
  if (plugin_load() != 0) return tc_err_set(err, TC_E_ENGINE, -1, -1, "engine cuda: %s", plugin_why);
  if (T->init(why, sizeof why) != 0) return tc_err_set(err, TC_E_ENGINE, -1, -1, "engine cuda: %s", why);
  /* cuBLAS is loaded when an f32/f64 product is first asked for (supports):
   * its dlopen takes half a second, which a session without one should not
   * pay; if it is missing, only those products are unsupported. */
  return 0;
}

/* src/ checks the engine before it runs anything on it, but storage may be
 * asked for first (tensors made on the current engine); the rest needs
 * storage, so T is set there. */
static void *cuda_alloc(size_t nbytes) { return plugin_load() == 0 ? T->malloc(nbytes) : NULL; }
static void cuda_release(void *p, size_t nbytes) { T->free(p, nbytes); }

/* A runtime status as a tc_err: memory, or the device failing. */
static int status_err(int st, tc_err *err, int op, int dt, const char *what) {
  if (!st) return 0;
  if (T->is_oom(st)) return tc_err_set(err, TC_E_OOM, op, dt, "cuda: out of device memory during %s", what);
  return tc_err_set(err, TC_E_ENGINE, op, dt, "cuda: %s failed: %s", what, T->strerror(st));
}

static int cuda_upload(void *dst, const void *src, size_t n, tc_err *err) {
  return status_err(T->h2d(dst, src, n), err, -1, -1, "copy to the device");
}
static int cuda_download(void *dst, const void *src, size_t n, tc_err *err) {
  return status_err(T->d2h(dst, src, n), err, -1, -1, "copy from the device");
}
static int cuda_sync(tc_err *err) { return status_err(T->sync(), err, -1, -1, "synchronisation"); }

static const tcu_entry *ew_entry(tc_op op, tc_dtype dt) {
  switch (tc_op_family(op)) {
  case TC_FAM_BIN: return T->bin_entry(op, dt);
  case TC_FAM_CMP: return T->cmp_entry(op, dt);
  case TC_FAM_UN: return T->un_entry(op, dt);
  case TC_FAM_PRED: return T->pred_entry(op, dt);
  case TC_FAM_SEL: return T->sel_entry(op, dt);
  default: return NULL;
  }
}

/* Same-dtype casts move the stored bits, as on the CPU. */
static const tcu_entry *cast_entry(tc_dtype from, tc_dtype to) {
  return from == to ? T->copy_entry(tc_dtype_size(from)) : T->cast_entry((int)from, (int)to);
}

static bool is_blas_dtype(tc_dtype dt) { return dt == TC_DT_F32 || dt == TC_DT_F64; }

/* Beyond the claimed rows, what the engine can do is what its plugin has
 * kernels for: asking loads the plugin (not the device). */
static bool cuda_supports(const tc_call *c) {
  if (c->overflow != TC_OVERFLOW_WRAP) return false;   /* judged on the CPU engine (src/api.c) */
  if (c->kind == TC_CALL_ROW) return allow_unverified || row_verified((int)c->op, (int)c->dtype);
  if (plugin_load() != 0) return false;
  switch (c->kind) {
  case TC_CALL_EW: return ew_entry(c->op, c->dtype) != NULL;
  case TC_CALL_CAST: return cast_entry(c->dtype, c->out->dtype) != NULL;
  case TC_CALL_REDUCE: return T->red_entry((int)c->op, (int)c->dtype) != NULL;
  case TC_CALL_FIND: return T->find_entry((int)c->dtype, (int)c->pred) != NULL;
  case TC_CALL_COPY: return T->copy_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_GATHER: return T->gather_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_SCATTER: return T->scatter_entry((int)c->red, (int)c->dtype) != NULL;
  case TC_CALL_NONZERO: return c->dtype == TC_DT_BOOL;
  case TC_CALL_TRI: return T->tri_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_RANGE: return T->range_entry((int)c->dtype, c->endpoint) != NULL;
  case TC_CALL_RANDOM:
    return c->dtype == (c->dist == TC_DIST_INT ? TC_DT_I64 : TC_DT_F64) && T->random_entry((int)c->dist) != NULL;
  case TC_CALL_MATMUL:
    return T->mm_entry((int)c->dtype) != NULL && (!is_blas_dtype(c->dtype) || T->blas_load(NULL, 0) == 0);
  case TC_CALL_LINALG: return T->linalg_ok((int)c->op, (int)c->dtype);
  default:   /* a call the plugin takes whole, or one it has no kernels for */
    return T->call_ok(c);
  }
}

/* Why supports() said no, where there is more to say than the row. */
static const char *cuda_why_not(const tc_call *c) {
  static char why[512];
  if (c->kind == TC_CALL_ROW) return NULL;
  if (plugin_load() != 0) {
    snprintf(why, sizeof why, "the CUDA engine %.480s", plugin_why);
    return why;
  }
  if (c->kind == TC_CALL_MATMUL && is_blas_dtype(c->dtype) && T->blas_load(why, sizeof why) != 0) return why;
  if (c->kind == TC_CALL_LINALG && is_blas_dtype(c->dtype)) {
    if (emulate) return "cuSOLVER cannot be emulated: the host emulation runs no library";
    if (T->solver_load(why, sizeof why) != 0) return why;
  }
  return NULL;
}

/* ---- plans ---- */
/* Operand 0 is the output (or the scanned tensor); inputs are viewed with
 * its shape. Size-1 dims drop out; adjacent dims merge where every operand
 * allows, so a contiguous op is one 1-D run. */
static void plan_init(tcu_plan *p, const tc_tensor *out, int nin, tc_tensor *const *in) {
  const tc_tensor *ops[TCU_MAX_OPS] = {out};
  int64_t st[TCU_MAX_OPS][TC_MAX_DIMS];
  for (int i = 0; i < nin; i++) ops[i + 1] = in[i];
  memset(p, 0, sizeof *p);
  p->nop = nin + 1;
  p->n = tc_numel(out);
  p->ndim = tc_plan_dims(p->nop, ops, p->shape, st);
  for (int k = 0; k < p->nop; k++) {
    int64_t es = (int64_t)tc_dtype_size(ops[k]->dtype);
    p->base[k] = tc_tensor_data(ops[k]);
    for (int d = 0; d < p->ndim; d++) p->bstride[k][d] = st[k][d] * es;
  }
}

/* Dims [lo, hi) of t without the size-1 ones, merged where contiguous;
 * byte strides. Returns the number of dims kept. */
static int coalesce(const tc_tensor *t, int lo, int hi, int64_t *shape, int64_t *bstride) {
  int n = 0;
  int64_t es = (int64_t)tc_dtype_size(t->dtype);
  for (int d = lo; d < hi; d++) {
    if (t->shape[d] == 1) continue;
    if (n > 0 && bstride[n - 1] == t->strides[d] * t->shape[d] * es) {
      shape[n - 1] *= t->shape[d];
      bstride[n - 1] = t->strides[d] * es;
    } else {
      shape[n] = t->shape[d];
      bstride[n] = t->strides[d] * es;
      n++;
    }
  }
  return n;
}

/* The scatter plan: the output view's stride-0 dims are walked in order by
 * one thread; the others go to separate threads. */
static void splan_init(tcu_splan *s, const tc_call *c) {
  const tc_tensor *ops[3] = {c->out, c->in[0], c->in[1]};
  memset(s, 0, sizeof *s);
  s->npar = s->nseq = 1;
  for (int d = 0; d < c->out->ndim; d++) {
    if (c->out->shape[d] == 1) continue;
    bool seq = c->out->strides[d] == 0;
    int j = seq ? s->sdim++ : s->pdim++;
    (seq ? s->sshape : s->pshape)[j] = c->out->shape[d];
    for (int k = 0; k < 3; k++)
      (seq ? s->sstride[k] : s->pstride[k])[j] = ops[k]->strides[d] * (int64_t)tc_dtype_size(ops[k]->dtype);
    if (seq) s->nseq *= c->out->shape[d];
    else s->npar *= c->out->shape[d];
  }
  for (int k = 0; k < 3; k++) s->base[k] = tc_tensor_data(ops[k]);
  s->ast = c->axis_stride * (int64_t)tc_dtype_size(c->out->dtype);
  s->len = c->axis_len;
  s->mode = (int)c->mode;
}

static int interrupted(int rc, tc_err *err) {
  if (rc == 0 && tc_interrupt_flag)
    return tc_err_set(err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
  return rc;
}

static int unsupported(const tc_call *c, tc_err *err) {
  const char *why = cuda_why_not(c);
  return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cuda%s%s%s",
                    tc_dtype_name(c->dtype), why ? " (" : "", why ? why : "", why ? ")" : "");
}

/* The matrix-product plan: one product's geometry from the last two dims,
 * the batch dims without size-1 ones, merged where A, B (and the
 * contiguous C) allow. */
static void mplan_init(tcu_mplan *p, const tc_call *c) {
  const tc_tensor *A = c->in[0], *B = c->in[1], *C = c->out;
  int nb = C->ndim - 2;
  memset(p, 0, sizeof *p);
  TC_MM_GEOMETRY(p, A, B, C, nb);
  p->nbatch = 1;
  for (int d = 0; d < nb; d++) {
    int64_t n = C->shape[d];
    p->nbatch *= n;
    if (n == 1) continue;
    int j = p->nbd;
    if (j > 0 && p->bstride[0][j - 1] == A->strides[d] * n && p->bstride[1][j - 1] == B->strides[d] * n) {
      p->bshape[j - 1] *= n;
      p->bstride[0][j - 1] = A->strides[d];
      p->bstride[1][j - 1] = B->strides[d];
    } else {
      p->bshape[j] = n;
      p->bstride[0][j] = A->strides[d];
      p->bstride[1][j] = B->strides[d];
      p->nbd++;
    }
  }
  p->a = tc_tensor_data(A);
  p->b = tc_tensor_data(B);
  p->c = tc_tensor_data(C);
}

/* A call as the plugin takes it whole: with each operand's first element
 * and element count (0 the output, 1 + i the input i). */
static tcu_call whole_call(tc_call *c) {
  tcu_call a = {.c = c};
  for (int k = 0; k < 4; k++) {
    const tc_tensor *t = k == 0 ? c->out : k <= c->nin ? c->in[k - 1] : NULL;
    if (!t) continue;
    a.data[k] = tc_tensor_data(t);
    a.numel[k] = tc_numel(t);
  }
  return a;
}

/* ---- the calls, one function per kind (the cuda column of
 * TC_ENGINE_CALLS in src/ops.def names them: HOST rows cu_<KIND>, PLUGIN
 * rows the plugin's whole-call entry) ---- */
/* A kernel's status as the call's answer. */
static int finish(const tc_call *c, int st, tc_err *err) {
  return interrupted(status_err(st, err, (int)c->op, (int)c->dtype, "a kernel"), err);
}

/* A kernel's arguments beyond the plan's operands (tcu_plan's arg, farg
 * and the fourth base). */
typedef struct { int64_t arg[4]; double farg[3]; char *base3; } kargs;

/* A one-entry kernel over out and the inputs' plan (nin of them), with
 * arguments k (NULL: none). */
static int run_entry(tc_call *c, const tcu_entry *e, int nin, const kargs *k, tc_err *err) {
  if (!e) return unsupported(c, err);
  if (tc_numel(c->out) == 0) return 0;
  tcu_plan p;
  plan_init(&p, c->out, nin, c->in);
  if (k) {
    memcpy(p.arg, k->arg, sizeof k->arg);
    memcpy(p.farg, k->farg, sizeof k->farg);
    p.base[3] = k->base3;
  }
  return finish(c, T->run(e, &p), err);
}

static int cu_EW(tc_call *c, tc_err *err) { return run_entry(c, ew_entry(c->op, c->dtype), c->nin, NULL, err); }

static int cu_CAST(tc_call *c, tc_err *err) { return run_entry(c, cast_entry(c->dtype, c->out->dtype), 1, NULL, err); }

static int cu_COPY(tc_call *c, tc_err *err) {
  return run_entry(c, T->copy_entry(tc_dtype_size(c->dtype)), 1, NULL, err);
}

static int cu_GATHER(tc_call *c, tc_err *err) {
  kargs k = {{c->axis_stride * (int64_t)tc_dtype_size(c->dtype), c->axis_len, (int64_t)c->mode, 0}, {0, 0, 0},
             c->nin > 2 && c->in[2] ? tc_tensor_data(c->in[2]) : NULL};
  return run_entry(c, T->gather_entry(tc_dtype_size(c->dtype)), 2, &k, err);
}

static int cu_SCATTER(tc_call *c, tc_err *err) {
  const tcu_sentry *e = T->scatter_entry((int)c->red, (int)c->dtype);
  if (!e) return unsupported(c, err);
  if (tc_numel(c->out) == 0) return 0;
  tcu_splan s;
  splan_init(&s, c);
  return finish(c, T->scatter(e, &s), err);
}

static int cu_NONZERO(tc_call *c, tc_err *err) {
  bool mismatch = false;
  tcu_plan p;
  plan_init(&p, c->in[0], 0, NULL);
  int st = T->nonzero(&p, (int64_t *)(void *)tc_tensor_data(c->out), tc_numel(c->out), &mismatch);
  if (!st && mismatch) return tc_err_set(err, TC_E_BAD_ARG, (int)c->op, TC_DT_BOOL, "the mask changed while it was read");
  return finish(c, st, err);
}

static int cu_TRI(tc_call *c, tc_err *err) {
  const tc_tensor *o = c->out;
  kargs k = {{o->shape[o->ndim - 2], o->shape[o->ndim - 1], c->k, c->op == TC_OP_TRIL}, {0, 0, 0}, NULL};
  return run_entry(c, T->tri_entry(tc_dtype_size(c->dtype)), 1, &k, err);
}

/* RANGE and RANDOM: a kernel of the output alone, its arguments from the call */
static int cu_RANGE(tc_call *c, tc_err *err) {
  if (!cuda_supports(c)) return unsupported(c, err);
  kargs k = {{c->istart, c->istep, 0, 0}, {c->fstart, c->fstep, c->fstop}, NULL};
  return run_entry(c, T->range_entry((int)c->dtype, c->endpoint), 0, &k, err);
}

static int cu_RANDOM(tc_call *c, tc_err *err) {
  if (!cuda_supports(c)) return unsupported(c, err);
  kargs k = {{(int64_t)c->seed, c->rlo, (int64_t)c->rrange, (int64_t)c->dist}, {0, 0, 0}, NULL};
  return run_entry(c, T->random_entry((int)c->dist), 0, &k, err);
}

static int cu_FIND(tc_call *c, tc_err *err) {
  const tcu_entry *e = T->find_entry((int)c->dtype, (int)c->pred);
  if (!e) return unsupported(c, err);
  tcu_plan p;
  plan_init(&p, c->in[0], 0, NULL);
  p.arg[0] = c->lo;
  p.arg[1] = c->hi;
  return finish(c, T->find(e, &p, &c->found), err);
}

static int cu_MATMUL(tc_call *c, tc_err *err) {
  if (!cuda_supports(c)) return unsupported(c, err);
  if (tc_numel(c->out) == 0) return 0;
  tcu_mplan mp;
  mplan_init(&mp, c);
  return finish(c, T->matmul(T->mm_entry((int)c->dtype), &mp), err);
}

static int cu_LINALG(tc_call *c, tc_err *err) {
  if (!cuda_supports(c)) return unsupported(c, err);
  const tc_tensor *a = c->in[0];
  tcu_lplan l = {.op = (int)c->op, .dt = (int)c->dtype, .nb = a->shape[0], .m = a->shape[1], .n = a->shape[2],
                 .k = c->op == TC_OP_SOLVE ? c->in[1]->shape[2] : 0, .a = tc_tensor_data(a),
                 .b = c->op == TC_OP_SOLVE ? tc_tensor_data(c->in[1]) : NULL, .out = tc_tensor_data(c->out),
                 .rcond = c->fstart};
  c->found = -1;
  int st = T->linalg(&l, &c->found);
  if (!st && c->found >= 0) {   /* src/ words the message; the code as the CPU's */
    bool ov = c->dtype == TC_DT_I64;
    return tc_err_set(err, ov ? TC_E_INT_OVERFLOW : TC_E_SINGULAR, (int)c->op, (int)c->dtype, "%s",
                      ov ? "overflow" : "singular matrix");
  }
  return finish(c, st, err);
}

static int cu_REDUCE(tc_call *c, tc_err *err) {
  const tcu_rentry *e = T->red_entry((int)c->op, (int)c->dtype);
  if (!e) return unsupported(c, err);
  const tc_tensor *x = c->in[0];
  int nk = x->ndim - c->nred;
  tcu_rplan r;
  memset(&r, 0, sizeof r);
  r.m = tc_numel(c->out);
  r.n = 1;
  for (int d = nk; d < x->ndim; d++) r.n *= x->shape[d];
  r.kdim = coalesce(x, 0, nk, r.kshape, r.kstride);
  r.rdim = coalesce(x, nk, x->ndim, r.rshape, r.rstride);
  r.in = tc_tensor_data(x);
  r.out = tc_tensor_data(c->out);
  return finish(c, T->reduce(e, &r), err);
}

/* A PLUGIN row of TC_ENGINE_CALLS (and ROW): the plugin takes the call whole. */
static int cu_whole(tc_call *c, tc_err *err) {
  if (!T->call_ok(c)) return unsupported(c, err);
  tcu_call a = whole_call(c);
  return finish(c, T->call_run(&a), err);
}
#define cu_ROW cu_whole

static int cuda_run(tc_call *c, tc_err *err) {
  typedef int (*run_fn)(tc_call *, tc_err *);
#define CU_RUN_HOST(K) cu_##K
#define CU_RUN_PLUGIN(K) cu_whole
#define X(K, cpu, where, ...) [TC_CALL_##K] = CU_RUN_##where(K),
  static const run_fn runs[] = {TC_ENGINE_CALLS(X, ~)};
#undef X
  return runs[c->kind](c, err);
}

TC_ENGINE_DEFINE(cuda, .upload = cuda_upload, .download = cuda_download, .why_not = cuda_why_not);
