/* The CUDA engine's vtable: capability rows (only those in verified.def are
 * claimed), iteration plans built from tensor views, and dispatch to the
 * stamped kernels in the .cu files through tcu.h. Plain C: no CUDA type
 * crosses into this file or src/. */
#include <stdio.h>
#include <string.h>
#include "../../src/engine.h"
#include "tcu.h"

/* ---- capability rows ---- */
#include "verified.def"
static const struct { int op, dt; } verified[] = {
#define TC_ROW_(OP, DT) {TC_OP_##OP, TC_DT_##DT},
  TC_CUDA_VERIFIED(TC_ROW_)
#undef TC_ROW_
  {-1, -1}
};

_Static_assert((int)TC_PRED_ZERO == TCU_PRED_ZERO && (int)TC_PRED_NEG == TCU_PRED_NEG, "tcu.h mirrors tc_pred");

static bool allow_unverified;
void tc_cuda_test_unverified(bool on) { allow_unverified = on; }

static bool row_verified(int op, int dt) {
  for (size_t i = 0; verified[i].op >= 0; i++)
    if (verified[i].op == op && verified[i].dt == dt) return true;
  return false;
}

/* ---- the vtable ---- */
static int cuda_init(tc_err *err) {
  char why[256] = "";
  if (tcu_init(why, sizeof why) == 0) return 0;
  return tc_err_set(err, TC_E_ENGINE, -1, -1, "engine cuda: %s", why);
}

static void *cuda_alloc(size_t nbytes) { return tcu_malloc(nbytes); }
static void cuda_release(void *p, size_t nbytes) { tcu_free(p, nbytes); }

/* A runtime status as a tc_err: memory, or the device failing. */
static int status_err(int st, tc_err *err, int op, int dt, const char *what) {
  if (!st) return 0;
  if (tcu_is_oom(st)) return tc_err_set(err, TC_E_OOM, op, dt, "cuda: out of device memory during %s", what);
  return tc_err_set(err, TC_E_ENGINE, op, dt, "cuda: %s failed: %s", what, tcu_strerror(st));
}

static int cuda_upload(void *dst, const void *src, size_t n, tc_err *err) {
  return status_err(tcu_h2d(dst, src, n), err, -1, -1, "copy to the device");
}
static int cuda_download(void *dst, const void *src, size_t n, tc_err *err) {
  return status_err(tcu_d2h(dst, src, n), err, -1, -1, "copy from the device");
}
static int cuda_sync(tc_err *err) { return status_err(tcu_sync(), err, -1, -1, "synchronisation"); }

static const tcu_entry *ew_entry(tc_op op, tc_dtype dt) {
  switch (tc_op_kind(op)) {
  case TC_KIND_BINARY: case TC_KIND_BITWISE: case TC_KIND_SHIFT: case TC_KIND_MATH2: return tcu_bin_entry(op, dt);
  case TC_KIND_COMPARE: return tcu_cmp_entry(op, dt);
  case TC_KIND_UNARY: case TC_KIND_MATH: case TC_KIND_ROUND: return tcu_un_entry(op, dt);
  case TC_KIND_LOGICAL: case TC_KIND_PRED: return tcu_pred_entry(op, dt);
  case TC_KIND_WHERE: return tcu_sel_entry(op, dt);
  default: return NULL;
  }
}

static bool cuda_supports(const tc_call *c) {
  switch (c->kind) {
  case TC_CALL_ROW: return allow_unverified || row_verified((int)c->op, (int)c->dtype);
  case TC_CALL_EW: return ew_entry(c->op, c->dtype) != NULL;
  case TC_CALL_CAST: return tcu_cast_entry((int)c->dtype, (int)c->out->dtype) != NULL;
  case TC_CALL_REDUCE: return tcu_red_entry((int)c->op, (int)c->dtype) != NULL;
  case TC_CALL_FIND: return tcu_find_entry((int)c->dtype, (int)c->pred) != NULL;
  }
  return false;
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
  for (int d = 0; d < out->ndim; d++) {
    if (out->shape[d] == 1) continue;
    int j = p->ndim;
    bool merge = j > 0;
    for (int k = 0; k < p->nop && merge; k++) merge = st[k][j - 1] == ops[k]->strides[d] * out->shape[d];
    if (merge) {
      p->shape[j - 1] *= out->shape[d];
      for (int k = 0; k < p->nop; k++) st[k][j - 1] = ops[k]->strides[d];
    } else {
      p->shape[j] = out->shape[d];
      for (int k = 0; k < p->nop; k++) st[k][j] = ops[k]->strides[d];
      p->ndim++;
    }
  }
  if (p->ndim == 0) {
    p->ndim = 1;
    p->shape[0] = 1;
    for (int k = 0; k < p->nop; k++) st[k][0] = 0;
  }
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

static int interrupted(int rc, tc_err *err) {
  if (rc == 0 && tc_interrupt_flag)
    return tc_err_set(err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
  return rc;
}

static int unsupported(const tc_call *c, tc_err *err) {
  return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cuda",
                    tc_dtype_name(c->dtype));
}

static int cuda_run(tc_call *c, tc_err *err) {
  tcu_plan p;
  int st;
  switch (c->kind) {
  case TC_CALL_EW: {
    const tcu_entry *e = ew_entry(c->op, c->dtype);
    if (!e) return unsupported(c, err);
    plan_init(&p, c->out, c->nin, c->in);
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_CAST: {
    const tcu_entry *e = tcu_cast_entry((int)c->dtype, (int)c->out->dtype);
    if (!e) return unsupported(c, err);
    plan_init(&p, c->out, 1, c->in);
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_FIND: {
    const tcu_entry *e = tcu_find_entry((int)c->dtype, (int)c->pred);
    if (!e) return unsupported(c, err);
    plan_init(&p, c->in[0], 0, NULL);
    st = tcu_find(e, &p, &c->found);
    break;
  }
  case TC_CALL_REDUCE: {
    const tcu_rentry *e = tcu_red_entry((int)c->op, (int)c->dtype);
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
    st = tcu_reduce(e, &r);
    break;
  }
  default:
    return unsupported(c, err);
  }
  return interrupted(status_err(st, err, (int)c->op, (int)c->dtype, "a kernel"), err);
}

const tc_engine tc_cuda_engine = {
  .name = "cuda",
  .init = cuda_init,
  .alloc = cuda_alloc,
  .release = cuda_release,
  .upload = cuda_upload,
  .download = cuda_download,
  .supports = cuda_supports,
  .run = cuda_run,
  .sync = cuda_sync,
};
