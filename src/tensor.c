/* Tensors and storage: refcounting, memory accounting against the limit,
 * views (broadcast, permute), host transfer, and the session context. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "internal.h"

/* Scalars made and dropped on every iteration of a script's loop are the
 * interpreter's hot path: tensor headers and storage records that are
 * freed are kept (up to CACHE_N of each) for the next allocation instead
 * of going back to malloc. tcalc allocates tensors on one thread. */
#define CACHE_N 64
static tc_tensor *shell_cache[CACHE_N];
static int nshell;
static tc_storage *storage_cache[CACHE_N];
static int nstorage;

static void cache_put(void **cache, int *n, void *p) {
  if (*n < CACHE_N) cache[(*n)++] = p;
  else free(p);
}

const tc_engine *const tc_engines[TC_ENGINE_COUNT] = {
#define X(E, name, built) [TC_ENGINE_##E] = TC_IF_BUILT(built, &tc_##name##_engine, NULL),
  TC_ENGINES(X)
#undef X
};

/* ---- session context ---- */
static tc_engine_id current_engine = TC_ENGINE_CPU;
static uint64_t max_memory;       /* 0 = not yet set: default on first use */
static uint64_t mem_in_use;
volatile int tc_interrupt_flag;

void tc_set_engine(tc_engine_id id) { current_engine = id; }
tc_engine_id tc_get_engine(void) { return current_engine; }
/* seq_cst atomics: the handler may run on another thread, and each side
 * stores then loads (the store must be seen before the other's load) */
static atomic_int interrupt_holding, interrupt_pending;
void tc_interrupt_clear(void) {
  atomic_store(&interrupt_pending, 0);
  tc_interrupt_flag = 0;
}
void tc_interrupt_signal(void) {
  atomic_store(&interrupt_pending, 1);
  if (!atomic_load(&interrupt_holding)) tc_interrupt_flag = 1;
}
void tc_interrupt_release(void) {
  atomic_store(&interrupt_holding, 0);
  if (atomic_load(&interrupt_pending)) tc_interrupt_flag = 1;
}
bool tc_interrupt_hold(void) {
  atomic_store(&interrupt_holding, 1);
  if (!tc_interrupt_flag) return true;
  tc_interrupt_release();
  return false;
}

int tc_engine_check(tc_engine_id id, tc_err *err) {
  const tc_engine *e = tc_engines[id];
  if (!e) {
    tc_err_set(err, TC_E_ENGINE, -1, -1, "engine %s: this build of tcalc has no %s engine",
               tc_engine_name(id), tc_engine_name(id));
    if (err) err->engine = (int)id;
    return -1;
  }
  if (e->init(err) != 0) {
    if (err) err->engine = (int)id;
    return -1;
  }
  return 0;
}

/* Asked once: sysconf's count of pages is a sysinfo call, and the CPU
 * engine's block cache asks on every release (6% of zeros([10000])). */
uint64_t tc_physical_memory(void) {
  static uint64_t bytes;
  uint64_t b = __atomic_load_n(&bytes, __ATOMIC_RELAXED);
  if (b) return b;
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  b = pages <= 0 || psize <= 0 ? (uint64_t)8 << 30 : (uint64_t)pages * (uint64_t)psize;
  __atomic_store_n(&bytes, b, __ATOMIC_RELAXED);
  return b;
}

uint64_t tc_get_max_memory(void) {
  if (!max_memory) max_memory = tc_physical_memory() / 10 * 8;
  return max_memory;
}
void tc_set_max_memory(uint64_t bytes) { max_memory = bytes ? bytes : 1; }
uint64_t tc_mem_in_use(void) { return mem_in_use; }

/* ---- sizes ---- */
bool tc_shape_numel(int ndim, const int64_t *shape, int64_t *numel) {
  int64_t n = 1;
  bool zero = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return false;
    if (shape[i] == 0) zero = true;
  }
  if (zero) { *numel = 0; return true; }
  for (int i = 0; i < ndim; i++) {
    if (__builtin_mul_overflow(n, shape[i], &n)) return false;
  }
  *numel = n;
  return true;
}

/* An existing tensor's count always fits: tc_tensor_new checked it, and an
 * empty tensor may have huge other dims, which tc_shape_numel skips. */
int64_t tc_numel(const tc_tensor *t) {
  int64_t n = 0;
  return tc_shape_numel(t->ndim, t->shape, &n) ? n : 0;
}

static void human_size(char *buf, size_t n, uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 6) { v /= 1024; u++; }
  snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* ---- storage ---- */
/* Whether nbytes more fit the memory limit; the error says why not. */
static bool fits_limit(uint64_t nbytes, tc_err *err) {
  uint64_t limit = tc_get_max_memory();
  if (nbytes <= limit && mem_in_use <= limit - nbytes) return true;
  char need[32], lim[32];
  human_size(need, sizeof need, nbytes);
  human_size(lim, sizeof lim, limit);
  tc_err_set(err, TC_E_OOM, -1, -1, "a result of %s does not fit the memory limit of %s (%s in use; :set max_memory)",
             need, lim, mem_in_use ? "some" : "none");
  return false;
}

static tc_storage *storage_new(tc_engine_id eid, uint64_t nbytes, tc_err *err) {
  if (!fits_limit(nbytes, err)) return NULL;
  const tc_engine *e = tc_engines[eid];
  tc_storage *s = nstorage ? storage_cache[--nstorage] : malloc(sizeof *s);
  if (!s) { tc_err_set(err, TC_E_OOM, -1, -1, "allocation failed"); return NULL; }
  s->refcnt = 1;
  s->engine = eid;
  s->nbytes = (size_t)nbytes;
  s->map = NULL;
  s->heap = false;
  s->data = e->alloc(s->nbytes ? s->nbytes : 1);
  if (!s->data) {
    cache_put((void **)storage_cache, &nstorage, s);
    char need[32];
    human_size(need, sizeof need, nbytes);
    tc_err_set(err, TC_E_OOM, -1, -1, "allocation of %s failed on %s", need, e->name);
    return NULL;
  }
  mem_in_use += nbytes;
  return s;
}

static void storage_release(tc_storage *s) {
  if (!s || --s->refcnt > 0) return;
  if (s->map) munmap(s->map, s->map_len);
  else {
    if (s->heap) free(s->data);
    else tc_engines[s->engine]->release(s->data, s->nbytes ? s->nbytes : 1);
    mem_in_use -= s->nbytes;
  }
  cache_put((void **)storage_cache, &nstorage, s);
}

/* ---- tensors ---- */
/* Row-major strides. Those of an empty tensor are never used to address
 * anything and may be huge, so they saturate instead of overflowing. */
void tc_set_contiguous_strides(tc_tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    t->strides[i] = s;
    if (__builtin_mul_overflow(s, t->shape[i] ? t->shape[i] : 1, &s)) s = INT64_MAX;
  }
}

/* A shape a new tensor or a view may have: at most TC_MAX_DIMS
 * dimensions, none negative, and an element count that fits in int64 (a
 * view of 2^64 elements would read as empty and print as nothing). */
static bool shape_ok(tc_dtype dt, int ndim, const int64_t *shape, int64_t *numel, tc_err *err) {
  if (ndim < 0 || ndim > TC_MAX_DIMS) {
    tc_err_set(err, TC_E_BAD_ARG, -1, (int)dt, "a tensor may have at most %d dimensions, not %d", TC_MAX_DIMS, ndim);
    return false;
  }
  if (tc_shape_numel(ndim, shape, numel)) return true;
  char buf[256];
  tc_format_dims(buf, sizeof buf, ndim, shape);
  bool neg = false;
  for (int i = 0; i < ndim; i++) neg |= shape[i] < 0;
  if (neg) tc_err_set(err, TC_E_BAD_ARG, -1, (int)dt, "shape %s has a negative dimension", buf);
  else tc_err_set(err, TC_E_OOM, -1, (int)dt, "shape %s has more elements than can be counted", buf);
  return false;
}

/* A tensor struct of a shape shape_ok passed, without storage. */
static tc_tensor *tensor_shell(tc_dtype dt, int ndim, const int64_t *shape, tc_err *err) {
  tc_tensor *t = nshell ? shell_cache[--nshell] : malloc(sizeof *t);
  if (!t) { tc_err_set(err, TC_E_OOM, -1, -1, "allocation failed"); return NULL; }
  /* the header and the dimensions in use; the rest of shape and strides is never read */
  t->weak = false;
  t->offset = 0;
  t->storage = NULL;
  memset(t->strides, 0, sizeof(int64_t) * (size_t)ndim);
  t->refcnt = 1;
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  return t;
}

tc_tensor *tc_tensor_new_on(tc_engine_id eid, tc_dtype dt, int ndim, const int64_t *shape, tc_err *err) {
  int64_t n;
  if (!shape_ok(dt, ndim, shape, &n, err)) return NULL;
  uint64_t bytes;
  if (__builtin_mul_overflow((uint64_t)n, (uint64_t)tc_dtype_size(dt), &bytes)) {
    tc_err_set(err, TC_E_OOM, -1, (int)dt, "a result of %lld elements is too large", (long long)n);
    return NULL;
  }
  tc_storage *s = storage_new(eid, bytes, err);
  if (!s) { if (err && err->dtype < 0) err->dtype = (int)dt; return NULL; }
  tc_tensor *t = tensor_shell(dt, ndim, shape, err);
  if (!t) { storage_release(s); return NULL; }
  t->storage = s;
  tc_set_contiguous_strides(t);
  return t;
}

/* A CPU tensor over a read-only mapping of map_len bytes at map, its data
 * from byte offset: the mapping is not counted against the memory limit
 * (the file holds it) and is unmapped with the last reference. Takes the
 * mapping, also on failure. */
tc_tensor *tc_tensor_mapped(void *map, size_t map_len, size_t offset, tc_dtype dt, int ndim, const int64_t *shape,
                            tc_err *err) {
  int64_t n;
  tc_storage *s = NULL;
  tc_tensor *t = shape_ok(dt, ndim, shape, &n, err) ? tensor_shell(dt, ndim, shape, err) : NULL;
  if (t && !(s = nstorage ? storage_cache[--nstorage] : malloc(sizeof *s)))
    tc_err_set(err, TC_E_OOM, -1, -1, "allocation failed");
  if (!s) {
    if (t) cache_put((void **)shell_cache, &nshell, t);
    munmap(map, map_len);
    return NULL;
  }
  *s = (tc_storage){1, TC_ENGINE_CPU, (char *)map + offset, (size_t)n * tc_dtype_size(dt), map, map_len, false};
  t->storage = s;
  tc_set_contiguous_strides(t);
  return t;
}

tc_tensor *tc_tensor_new(tc_dtype dt, int ndim, const int64_t *shape, tc_err *err) {
  return tc_tensor_new_on(tc_get_engine(), dt, ndim, shape, err);
}

tc_tensor *tc_tensor_adopt(tc_dtype dt, int ndim, const int64_t *shape, void *data, tc_err *err) {
  int64_t n;
  if (!shape_ok(dt, ndim, shape, &n, err)) return NULL;
  uint64_t bytes = (uint64_t)n * tc_dtype_size(dt);   /* data holds them: no overflow */
  if (!fits_limit(bytes, err)) { if (err) err->dtype = (int)dt; return NULL; }
  tc_storage *s = nstorage ? storage_cache[--nstorage] : malloc(sizeof *s);
  tc_tensor *t = s ? tensor_shell(dt, ndim, shape, err) : NULL;
  if (!t) {
    if (s) cache_put((void **)storage_cache, &nstorage, s);
    else tc_err_set(err, TC_E_OOM, -1, -1, "allocation failed");
    return NULL;
  }
  if (dt == TC_DT_BOOL)   /* stored as 0 or 1, as tc_tensor_write stores them */
    for (uint8_t *b = data; b < (uint8_t *)data + bytes; b++) *b = *b != 0;
  *s = (tc_storage){.refcnt = 1, .engine = TC_ENGINE_CPU, .data = data, .nbytes = (size_t)bytes, .heap = true};
  mem_in_use += bytes;
  t->storage = s;
  tc_set_contiguous_strides(t);
  return t;
}

int tc_tensor_write(tc_tensor *t, const void *data, tc_err *err) {
  size_t n = (size_t)tc_numel(t) * tc_dtype_size(t->dtype);
  /* A bool is stored as 0 or 1 (kernels such as & rely on it); other
   * nonzero bytes from outside are true. */
  uint8_t *norm = NULL;
  if (t->dtype == TC_DT_BOOL && n) {
    const uint8_t *b = data;
    bool odd = false;
    for (size_t i = 0; i < n && !odd; i++) odd = b[i] > 1;
    if (odd) {
      norm = malloc(n);
      if (!norm) return tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "allocation failed");
      for (size_t i = 0; i < n; i++) norm[i] = b[i] != 0;
      data = norm;
    }
  }
  int rc = n ? tc_engines[t->storage->engine]->upload(tc_tensor_data(t), data, n, err) : 0;
  free(norm);
  return rc;
}

tc_tensor *tc_tensor_from_host(tc_dtype dt, int ndim, const int64_t *shape, const void *data, tc_err *err) {
  tc_tensor *t = tc_tensor_new(dt, ndim, shape, err);
  if (t && tc_tensor_write(t, data, err) != 0) { tc_tensor_free(t); return NULL; }
  return t;
}

const void *tc_tensor_host_data(const tc_tensor *t) {
  return t->storage->engine == TC_ENGINE_CPU ? tc_tensor_data(t) : NULL;
}

bool tc_engine_built(tc_engine_id id) { return tc_engines[id] != NULL; }

tc_tensor *tc_scalar_i64(int64_t v, bool weak, tc_err *err) {
  tc_tensor *t = tc_tensor_from_host(TC_DT_I64, 0, NULL, &v, err);
  if (t) t->weak = weak;
  return t;
}
tc_tensor *tc_scalar_f64(double v, bool weak, tc_err *err) {
  tc_tensor *t = tc_tensor_from_host(TC_DT_F64, 0, NULL, &v, err);
  if (t) t->weak = weak;
  return t;
}
tc_tensor *tc_scalar_bool(bool v, tc_err *err) {
  uint8_t b = v;
  return tc_tensor_from_host(TC_DT_BOOL, 0, NULL, &b, err);
}

tc_tensor *tc_tensor_ref(tc_tensor *t) {
  if (t) t->refcnt++;
  return t;
}

void tc_tensor_free(tc_tensor *t) {
  if (!t || --t->refcnt > 0) return;
  storage_release(t->storage);
  cache_put((void **)shell_cache, &nshell, t);
}

tc_engine_id tc_tensor_engine(const tc_tensor *t) { return t->storage->engine; }

bool tc_is_contiguous(const tc_tensor *t) {
  for (int i = 0; i < t->ndim; i++)
    if (t->shape[i] == 0) return true;
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->strides[i] != s) return false;
    s *= t->shape[i];   /* bounded by the element count, which fits */
  }
  return true;
}

/* A new tensor struct sharing t's storage. */
static tc_tensor *view_of(tc_tensor *t, tc_err *err) {
  tc_tensor *v = tensor_shell(t->dtype, t->ndim, t->shape, err);
  if (!v) return NULL;
  memcpy(v->strides, t->strides, sizeof v->strides);
  v->offset = t->offset;
  v->weak = t->weak;
  v->storage = t->storage;
  v->storage->refcnt++;
  return v;
}

tc_tensor *tc_view_broadcast(tc_tensor *t, int ndim, const int64_t *shape, tc_err *err) {
  if (ndim < t->ndim) goto bad;
  int64_t n;
  if (!shape_ok(t->dtype, ndim, shape, &n, err)) return NULL;
  tc_tensor *v = view_of(t, err);
  if (!v) return NULL;
  v->ndim = ndim;
  int lead = ndim - t->ndim;
  for (int i = ndim - 1; i >= 0; i--) {
    int j = i - lead;
    v->shape[i] = shape[i];
    if (j < 0) v->strides[i] = 0;
    else if (t->shape[j] == shape[i]) v->strides[i] = t->strides[j];
    else if (t->shape[j] == 1) v->strides[i] = 0;
    else { tc_tensor_free(v); goto bad; }
  }
  return v;
bad:;
  char sa[256], sb[256];
  tc_format_dims(sa, sizeof sa, t->ndim, t->shape);
  tc_format_dims(sb, sizeof sb, ndim, shape);
  tc_err_set(err, TC_E_SHAPE, -1, (int)t->dtype, "cannot broadcast shape %s to %s", sa, sb);
  return NULL;
}

tc_tensor *tc_view(tc_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, tc_err *err) {
  int64_t n;
  if (!shape_ok(t->dtype, ndim, shape, &n, err)) return NULL;
  tc_tensor *v = view_of(t, err);
  if (!v) return NULL;
  v->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    v->shape[i] = shape[i];
    v->strides[i] = strides[i];
  }
  v->offset = offset;
  v->weak = false;
  return v;
}

tc_tensor *tc_clone(tc_tensor *t, tc_err *err) {
  tc_tensor *out = tc_tensor_new_on(t->storage->engine, t->dtype, t->ndim, t->shape, err);
  if (!out || tc_numel(t) == 0) return out;
  tc_call call = {.kind = TC_CALL_CAST, .dtype = t->dtype, .nin = 1, .in = {t}, .out = out};
  if (tc_engines[t->storage->engine]->run(&call, err) != 0) { tc_tensor_free(out); return NULL; }
  return out;
}

tc_tensor *tc_view_permute(tc_tensor *t, const int *perm, tc_err *err) {
  bool seen[TC_MAX_DIMS] = {false};
  for (int i = 0; i < t->ndim; i++) {
    if (perm[i] < 0 || perm[i] >= t->ndim || seen[perm[i]]) {
      if (perm[i] < 0 || perm[i] >= t->ndim)
        tc_err_set(err, TC_E_AXIS, -1, (int)t->dtype, "permutation axis %d is out of range for a tensor of %d dimension%s",
                   perm[i], t->ndim, t->ndim == 1 ? "" : "s");
      else
        tc_err_set(err, TC_E_AXIS, -1, (int)t->dtype, "permutation axis %d is repeated", perm[i]);
      return NULL;
    }
    seen[perm[i]] = true;
  }
  tc_tensor *v = view_of(t, err);
  if (!v) return NULL;
  for (int i = 0; i < t->ndim; i++) {
    v->shape[i] = t->shape[perm[i]];
    v->strides[i] = t->strides[perm[i]];
  }
  return v;
}

int tc_broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout, int64_t *out,
                        tc_op op, tc_err *err) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t da = i < n - na ? 1 : sa[i - (n - na)];
    int64_t db = i < n - nb ? 1 : sb[i - (n - nb)];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else {
      char ba[256], bb[256];
      tc_format_dims(ba, sizeof ba, na, sa);
      tc_format_dims(bb, sizeof bb, nb, sb);
      return tc_err_set(err, TC_E_SHAPE, (int)op, -1, "shapes %s and %s do not broadcast", ba, bb);
    }
  }
  *nout = n;
  return 0;
}

/* A contiguous copy made by the engine that holds t (a same-dtype cast). */
tc_tensor *tc_contiguous(tc_tensor *t, tc_err *err) {
  if (tc_is_contiguous(t) && t->offset == 0 && (size_t)tc_numel(t) * tc_dtype_size(t->dtype) == t->storage->nbytes)
    return tc_tensor_ref(t);
  tc_tensor *out = tc_tensor_new_on(t->storage->engine, t->dtype, t->ndim, t->shape, err);
  if (!out) return NULL;
  out->weak = t->weak;
  if (tc_numel(t) == 0) return out;
  tc_call call = {.kind = TC_CALL_CAST, .dtype = t->dtype, .nin = 1, .in = {t}, .out = out};
  if (tc_engines[t->storage->engine]->run(&call, err) != 0) { tc_tensor_free(out); return NULL; }
  return out;
}

int tc_tensor_to_host(tc_tensor *t, void *dst, tc_err *err) {
  tc_tensor *c = tc_contiguous(t, err);
  if (!c) return -1;
  size_t n = (size_t)tc_numel(c) * tc_dtype_size(c->dtype);
  int rc = n ? tc_engines[c->storage->engine]->download(dst, tc_tensor_data(c), n, err) : 0;
  tc_tensor_free(c);
  return rc;
}

tc_tensor *tc_to_engine(tc_tensor *t, tc_engine_id id, tc_err *err) {
  if (t->storage->engine == id) return tc_tensor_ref(t);
  if (tc_engine_check(id, err) != 0) return NULL;
  tc_tensor *c = tc_contiguous(t, err);
  if (!c) return NULL;
  size_t n = (size_t)tc_numel(c) * tc_dtype_size(c->dtype);
  void *host = malloc(n ? n : 1);
  tc_tensor *out = NULL;
  if (!host) tc_err_set(err, TC_E_OOM, -1, (int)t->dtype, "allocation failed");
  else if (!n || tc_engines[c->storage->engine]->download(host, tc_tensor_data(c), n, err) == 0) {
    out = tc_tensor_new_on(id, c->dtype, c->ndim, c->shape, err);
    if (out && n && tc_engines[id]->upload(out->storage->data, host, n, err) != 0) {
      tc_tensor_free(out);
      out = NULL;
    }
    if (out) out->weak = t->weak;
  }
  free(host);
  tc_tensor_free(c);
  return out;
}

int tc_plan_dims(int nop, const tc_tensor *const *ops, int64_t *shape, int64_t (*strides)[TC_MAX_DIMS]) {
  const tc_tensor *out = ops[0];
  int ndim = 0;
  for (int d = 0; d < out->ndim; d++) {
    if (out->shape[d] == 1) continue;
    int j = ndim;
    bool merge = j > 0;
    for (int k = 0; k < nop && merge; k++) merge = strides[k][j - 1] == ops[k]->strides[d] * out->shape[d];
    if (merge) {
      shape[j - 1] *= out->shape[d];
      for (int k = 0; k < nop; k++) strides[k][j - 1] = ops[k]->strides[d];
    } else {
      shape[j] = out->shape[d];
      for (int k = 0; k < nop; k++) strides[k][j] = ops[k]->strides[d];
      ndim++;
    }
  }
  if (ndim == 0) {   /* one element */
    shape[0] = 1;
    for (int k = 0; k < nop; k++) strides[k][0] = 1;
    ndim = 1;
  }
  return ndim;
}
