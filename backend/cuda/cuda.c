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

_Static_assert((int)TC_PRED_ZERO == TCU_PRED_ZERO && (int)TC_PRED_NEG == TCU_PRED_NEG &&
               (int)TC_PRED_RANGE == TCU_PRED_RANGE, "tcu.h mirrors tc_pred");

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

/* Same-dtype casts move the stored bits, as on the CPU. */
static const tcu_entry *cast_entry(tc_dtype from, tc_dtype to) {
  return from == to ? tcu_copy_entry(tc_dtype_size(from)) : tcu_cast_entry((int)from, (int)to);
}

static bool cuda_supports(const tc_call *c) {
  switch (c->kind) {
  case TC_CALL_ROW: return allow_unverified || row_verified((int)c->op, (int)c->dtype);
  case TC_CALL_EW: return ew_entry(c->op, c->dtype) != NULL;
  case TC_CALL_CAST: return cast_entry(c->dtype, c->out->dtype) != NULL;
  case TC_CALL_REDUCE: return tcu_red_entry((int)c->op, (int)c->dtype) != NULL;
  case TC_CALL_FIND: return tcu_find_entry((int)c->dtype, (int)c->pred) != NULL;
  case TC_CALL_COPY: return tcu_copy_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_GATHER: return tcu_gather_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_SCATTER: return tcu_scatter_entry((int)c->red, (int)c->dtype) != NULL;
  case TC_CALL_NONZERO: return c->dtype == TC_DT_BOOL;
  case TC_CALL_TRI: return tcu_tri_entry(tc_dtype_size(c->dtype)) != NULL;
  case TC_CALL_RANGE: return tcu_range_entry((int)c->dtype, c->endpoint) != NULL;
  case TC_CALL_RANDOM:
    return c->dtype == (c->dist == TC_DIST_INT ? TC_DT_I64 : TC_DT_F64) && tcu_random_entry((int)c->dist) != NULL;
  default:   /* a call kind this engine has no kernels for yet (matmul: TODO) */
    return false;
  }
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
  case TC_CALL_CAST: case TC_CALL_COPY: {
    const tcu_entry *e = c->kind == TC_CALL_COPY ? tcu_copy_entry(tc_dtype_size(c->dtype)) : cast_entry(c->dtype, c->out->dtype);
    if (!e) return unsupported(c, err);
    if (tc_numel(c->out) == 0) return 0;
    plan_init(&p, c->out, 1, c->in);
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_GATHER: {
    const tcu_entry *e = tcu_gather_entry(tc_dtype_size(c->dtype));
    if (!e) return unsupported(c, err);
    if (tc_numel(c->out) == 0) return 0;
    plan_init(&p, c->out, 2, c->in);
    p.base[3] = c->nin > 2 && c->in[2] ? tc_tensor_data(c->in[2]) : NULL;
    p.arg[0] = c->axis_stride * (int64_t)tc_dtype_size(c->dtype);
    p.arg[1] = c->axis_len;
    p.arg[2] = (int64_t)c->mode;
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_SCATTER: {
    const tcu_sentry *e = tcu_scatter_entry((int)c->red, (int)c->dtype);
    if (!e) return unsupported(c, err);
    if (tc_numel(c->out) == 0) return 0;
    tcu_splan s;
    splan_init(&s, c);
    st = tcu_scatter(e, &s);
    break;
  }
  case TC_CALL_NONZERO: {
    bool mismatch = false;
    plan_init(&p, c->in[0], 0, NULL);
    st = tcu_nonzero(&p, (int64_t *)(void *)tc_tensor_data(c->out), tc_numel(c->out), &mismatch);
    if (!st && mismatch)
      return tc_err_set(err, TC_E_BAD_ARG, (int)c->op, TC_DT_BOOL, "the mask changed while it was read");
    break;
  }
  case TC_CALL_TRI: {
    const tcu_entry *e = tcu_tri_entry(tc_dtype_size(c->dtype));
    if (!e) return unsupported(c, err);
    if (tc_numel(c->out) == 0) return 0;
    plan_init(&p, c->out, 1, c->in);
    p.arg[0] = c->out->shape[c->out->ndim - 2];
    p.arg[1] = c->out->shape[c->out->ndim - 1];
    p.arg[2] = c->k;
    p.arg[3] = c->op == TC_OP_TRIL;
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_RANGE: case TC_CALL_RANDOM: {
    const tcu_entry *e = c->kind == TC_CALL_RANGE ? tcu_range_entry((int)c->dtype, c->endpoint)
                                                  : tcu_random_entry((int)c->dist);
    if (!e || !cuda_supports(c)) return unsupported(c, err);
    if (tc_numel(c->out) == 0) return 0;
    plan_init(&p, c->out, 0, NULL);
    if (c->kind == TC_CALL_RANGE) {
      p.arg[0] = c->istart;
      p.arg[1] = c->istep;
      p.farg[0] = c->fstart;
      p.farg[1] = c->fstep;
      p.farg[2] = c->fstop;
    } else {
      p.arg[0] = (int64_t)c->seed;
      p.arg[1] = c->rlo;
      p.arg[2] = (int64_t)c->rrange;
      p.arg[3] = (int64_t)c->dist;
    }
    st = tcu_run(e, &p);
    break;
  }
  case TC_CALL_FIND: {
    const tcu_entry *e = tcu_find_entry((int)c->dtype, (int)c->pred);
    if (!e) return unsupported(c, err);
    plan_init(&p, c->in[0], 0, NULL);
    p.arg[0] = c->lo;
    p.arg[1] = c->hi;
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
