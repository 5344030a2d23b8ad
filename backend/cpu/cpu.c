/* The CPU engine: memory, the vtable, and the row iterator all kernel
 * families share. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cpu.h"

static int cpu_init(tc_err *err) { (void)err; return 0; }

/* Blocks of CACHE_MIN bytes and more come from mmap (2 MiB-aligned from
 * 2 MiB up, so transparent huge pages can back them) and go back to a
 * small cache when released, sized in classes of eight per power of two:
 * `c = a + b` in a loop then reuses the pages of the last result instead
 * of faulting in fresh ones every time, at every size (malloc'd blocks of
 * 64 KiB to 1 MiB were trimmed off the heap top at each free and faulted
 * in again at each op: 40-60x slower than NumPy between 30 000 and
 * 250 000 elements). Smaller blocks come from malloc, whose free lists
 * keep them. Results do not depend on any of it. */
#define CACHE_MIN ((size_t)64 << 10)
#define HUGE_ALIGN ((size_t)2 << 20)
#define CACHE_SLOTS 32
typedef struct { void *p; size_t n; } kept_block;
static kept_block cache[CACHE_SLOTS];
static int ncached;
static size_t cached_bytes;

/* A list of kept blocks, oldest first. Takes the newest of exactly n
 * bytes out of it (NULL if none), keeping the others' order. */
static void *kept_take(kept_block *list, int *count, size_t n) {
  for (int i = *count - 1; i >= 0; i--)
    if (list[i].n == n) {
      void *p = list[i].p;
      memmove(list + i, list + i + 1, sizeof *list * (size_t)(*count - i - 1));
      (*count)--;
      return p;
    }
  return NULL;
}

/* Takes the oldest block out of a non-empty list. */
static kept_block kept_oldest(kept_block *list, int *count) {
  kept_block b = list[0];
  memmove(list, list + 1, sizeof *list * (size_t)(--*count));
  return b;
}

/* The class a block of nbytes >= CACHE_MIN is mapped at: nbytes rounded up
 * to an eighth of its power of two (so at most 12.5% more address space,
 * and page-aligned); 0 on overflow. */
static size_t class_size(size_t nbytes) {
  int k = 63 - __builtin_clzll((unsigned long long)(nbytes - 1));
  size_t step = (size_t)1 << (k - 3);
  size_t n = (nbytes + step - 1) & ~(step - 1);
  return n < nbytes ? 0 : n;
}

/* At most 1 GiB, an eighth of RAM, or half the memory limit for results. */
static size_t cache_limit(void) {
  uint64_t lim = tc_physical_memory() / 8, half = tc_get_max_memory() / 2;
  if (lim > half) lim = half;
  return lim > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)lim;
}

static void cache_drop_oldest(void) {
  kept_block b = kept_oldest(cache, &ncached);
  munmap(b.p, b.n);
  cached_bytes -= b.n;
}

static void *map_block(size_t n) {
  if (n < HUGE_ALIGN) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  size_t span = n + HUGE_ALIGN;
  if (span < n) return NULL;
  char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  size_t head = (HUGE_ALIGN - (uintptr_t)p % HUGE_ALIGN) % HUGE_ALIGN;
  if (head) munmap(p, head);
  if (span - head > n) munmap(p + head + n, span - head - n);
  p += head;
#ifdef MADV_HUGEPAGE
  madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

/* Blocks of one cache line (0-d tensors, small vectors), kept when
 * released for the next allocation: a script's loop makes and drops
 * scalars on every iteration. Allocation happens on the main thread. */
#define SMALL_CACHE 64
static void *small[SMALL_CACHE];
static int nsmall;

/* Blocks between a cache line and CACHE_MIN (vectors of 10 to 8000
 * elements), the last MID_SLOTS released kept by exact size: `y = exp(x)`
 * in a loop then takes the block it just gave back, instead of a trip
 * through malloc that consolidates its free lists each time (5-8% of an
 * op on 1000 elements). At most MID_SLOTS * CACHE_MIN bytes are held. */
#define MID_SLOTS 16
static kept_block mid[MID_SLOTS];
static int nmid;

static void *cpu_alloc(size_t nbytes) {
  if (nbytes >= CACHE_MIN) {
    size_t n = class_size(nbytes);
    if (!n) return NULL;
    void *p = kept_take(cache, &ncached, n);
    if (p) {
      cached_bytes -= n;
      return p;
    }
    p = map_block(n);
    while (!p && ncached) { cache_drop_oldest(); p = map_block(n); }
    return p;
  }
  size_t n = (nbytes + 63) & ~(size_t)63;
  if (n < nbytes) return NULL;
  if (n == 64 && nsmall) return small[--nsmall];
  void *p = n > 64 ? kept_take(mid, &nmid, n) : NULL;
  return p ? p : aligned_alloc(64, n);
}

static void cpu_release(void *p, size_t nbytes) {
  if (nbytes <= 64 && nsmall < SMALL_CACHE) { small[nsmall++] = p; return; }   /* a scalar's block, for the next one */
  if (nbytes < CACHE_MIN) {
    if (nbytes <= 64) { free(p); return; }
    if (nmid == MID_SLOTS) free(kept_oldest(mid, &nmid).p);
    mid[nmid++] = (kept_block){p, (nbytes + 63) & ~(size_t)63};
    return;
  }
  size_t n = class_size(nbytes);
  if (n > cache_limit()) { munmap(p, n); return; }
  /* make room: the oldest blocks go first */
  while (ncached > 0 && (ncached == CACHE_SLOTS || cached_bytes + n > cache_limit())) cache_drop_oldest();
  cache[ncached++] = (kept_block){p, n};
  cached_bytes += n;
}

static int cpu_copy(void *dst, const void *src, size_t n, tc_err *err) {
  (void)err;
  memcpy(dst, src, n);
  return 0;
}

static int cpu_sync(tc_err *err) { (void)err; return 0; }

int cpu_interrupted(tc_err *err) {
  return tc_err_set(err, TC_E_INTERRUPTED, -1, -1, "interrupted; variables are unchanged");
}

/* The capability row: every row the CPU engine has kernels for is claimed. */
bool cpu_supports_row(const tc_call *c) { (void)c; return true; }
int cpu_run_row(tc_call *c, tc_err *err) {
  return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported on cpu");
}

static bool cpu_supports(const tc_call *c) {
  switch (c->kind) {
#define X(K, cpu, ...) case TC_CALL_##K: return cpu_supports_##cpu(c);
    TC_ENGINE_CALLS(X, ~)
#undef X
  }
  return false;
}

static int cpu_run(tc_call *c, tc_err *err) {
  if (c->overflow != TC_OVERFLOW_WRAP) {
    int rc = cpu_run_overflow(c, err);
    if (rc <= 0) return rc;
  }
  switch (c->kind) {
#define X(K, cpu, ...) case TC_CALL_##K: return cpu_run_##cpu(c, err);
    TC_ENGINE_CALLS(X, ~)
#undef X
  }
  return cpu_run_row(c, err);
}

static const char *cpu_why_not(const tc_call *c) {
  return c->kind == TC_CALL_LINALG ? cpu_why_not_linalg(c) : NULL;
}

TC_ENGINE_DEFINE(cpu, .upload = cpu_copy, .download = cpu_copy, .why_not = cpu_why_not, .scalar = cpu_scalar_kernel,
                 .scalar_cast = cpu_scalar_cast);

/* ---- the row iterator ---- */
void cpu_plan_init(cpu_plan *p, const tc_tensor *out, int nin, tc_tensor *const *in) {
  const tc_tensor *ops[CPU_MAX_OPS] = {out};
  for (int i = 0; i < nin; i++) ops[i + 1] = in[i];
  p->nop = nin + 1;
  p->tiles = p->tbuf = false;
  for (int k = 0; k < p->nop; k++) {
    p->base[k] = tc_tensor_data(ops[k]);
    p->esize[k] = tc_dtype_size(ops[k]->dtype);
  }
  p->ndim = tc_plan_dims(p->nop, ops, p->shape, p->strides);
}

/* Each operand's pointer at row-major position pos of operand 0. */
static void plan_ptrs(const cpu_plan *p, int64_t pos, char **ptrs) {
  int64_t idx[TC_MAX_DIMS];
  for (int i = p->ndim - 1; i >= 0; i--) { idx[i] = pos % p->shape[i]; pos /= p->shape[i]; }
  for (int k = 0; k < p->nop; k++) {
    int64_t off = 0;
    for (int i = 0; i < p->ndim; i++) off += idx[i] * p->strides[k][i];
    ptrs[k] = p->base[k] + off * (int64_t)p->esize[k];
  }
}

/* An input whose tiles are transposed into a buffer before the row
 * function sees them: strided along the last dim and contiguous along the
 * one before (a transposed view), of 4 or 8 bytes an element. */
static bool plan_transposed(const cpu_plan *p, int k) {
  int d = p->ndim;
  int64_t s = p->strides[k][d - 1];
  return p->tbuf && k > 0 && d >= 2 && p->strides[k][d - 2] == 1 && (s > 1 || s < -1) &&
         (p->esize[k] == 4 || p->esize[k] == 8);
}

/* Whether to walk in tiles: some input strided along the last dim, and
 * enough rows and columns for tiles to pay (fewer when such an input is
 * transposed a tile at a time). */
static bool plan_tiled(const cpu_plan *p) {
  int d = p->ndim;
  if (!p->tiles || d < 2) return false;
  bool strided = false, tr = false;
  for (int k = 1; k < p->nop; k++) {
    int64_t s = p->strides[k][d - 1];
    strided |= s > 1 || s < -1;
    tr |= plan_transposed(p, k);
  }
  if (tr) return p->shape[d - 1] >= CPU_TILE_MIN && p->shape[d - 2] >= CPU_TILE_MIN;
  return strided && p->shape[d - 1] >= 2 * CPU_TILE_COLS && p->shape[d - 2] >= CPU_TILE_ROWS;
}

/* Rows [r0, r1) of the last dim, whole, in tiles: for each block of
 * CPU_TILE_ROWS rows, CPU_TILE_COLS columns of each row in turn. A
 * transposed input's part of a tile is first transposed into a buffer, when
 * the tile's rows share their outer index, and the rows read it from
 * there (contiguous). */
static int plan_run_tiles(const cpu_plan *p, int64_t r0, int64_t r1, cpu_row_fn fn, void *ctx) {
  int d = p->ndim;
  int64_t inner = p->shape[d - 1];
  int64_t istr[CPU_MAX_OPS], rstr[CPU_MAX_OPS], rows = p->shape[d - 2];
  bool tr[CPU_MAX_OPS];
  int slot[CPU_MAX_OPS], ntr = 0;   /* a transposed input's buffer */
  for (int k = 0; k < p->nop; k++) {
    istr[k] = p->strides[k][d - 1];
    rstr[k] = p->strides[k][d - 2] * (int64_t)p->esize[k];
    tr[k] = plan_transposed(p, k);
    slot[k] = tr[k] ? ntr++ : 0;
  }
  bool any = ntr > 0;
  /* with a transposed input, rows of up to CPU_TILE_WIDE columns go whole
   * (fewer of them), and a tile all of whose operands are then contiguous
   * (or one broadcast element) is one call */
  int64_t cols = any && inner <= CPU_TILE_WIDE ? inner : CPU_TILE_COLS;
  int64_t trows = CPU_TILE_ROWS * CPU_TILE_COLS / cols / 8 * 8;   /* whole blocks of the transposition */
  trows = !any ? CPU_TILE_ROWS : trows < 8 ? 8 : trows;
  bool whole = cols == inner;
  for (int k = 0; k < p->nop; k++)
    whole &= tr[k] || (istr[k] == 0 && rstr[k] == 0) || (istr[k] == 1 && rstr[k] == inner * (int64_t)p->esize[k]);
  const size_t each = (size_t)(trows * cols) * 8;
  char *buf = any ? malloc(each * (size_t)ntr) : NULL;   /* none: the inputs read where they are */
  int rc = 0;
  for (int64_t rb = r0; rb < r1 && rc == 0; rb += trows) {
    int64_t re = rb + trows < r1 ? rb + trows : r1;
    bool flat = buf && rb / rows == (re - 1) / rows;
    for (int64_t c0 = 0; c0 < inner && rc == 0; c0 += cols) {
      int64_t n = inner - c0 < cols ? inner - c0 : cols, s[CPU_MAX_OPS];
      char *ptrs[CPU_MAX_OPS], *row[CPU_MAX_OPS];
      for (int k = 0; k < p->nop; k++) s[k] = istr[k];
      for (int64_t r = rb; r < re; r++) {
        /* the next row of the same outer index is one row stride on */
        if (r == rb || r % rows == 0) plan_ptrs(p, r * inner + c0, ptrs);
        else
          for (int k = 0; k < p->nop; k++) ptrs[k] += rstr[k];
        for (int k = 0; k < p->nop; k++) {
          row[k] = ptrs[k];
          if (!flat || !tr[k]) continue;
          char *t = buf + each * (size_t)slot[k];
          if (r == rb) cpu_transpose(p->esize[k], ptrs[k], istr[k], n, re - rb, t);
          row[k] = t + (size_t)((r - rb) * n) * p->esize[k];
          s[k] = 1;
        }
        if (flat && whole) {   /* the tile's rows in one call */
          if (fn(ctx, r * inner, (re - rb) * inner, row, s)) rc = 1;
          break;
        }
        if (fn(ctx, r * inner + c0, n, row, s)) { rc = 1; break; }
      }
    }
    if (rc == 0 && tc_interrupt_flag) rc = -1;
  }
  free(buf);
  return rc;
}

static int plan_run_rows(const cpu_plan *p, int64_t lo, int64_t hi, cpu_row_fn fn, void *ctx);

int cpu_plan_run(const cpu_plan *p, int64_t lo, int64_t hi, cpu_row_fn fn, void *ctx) {
  if (!plan_tiled(p)) return plan_run_rows(p, lo, hi, fn, ctx);
  /* a partial first and last row as they are, the whole rows between in tiles */
  int64_t inner = p->shape[p->ndim - 1];
  int64_t r0 = (lo + inner - 1) / inner, r1 = hi / inner;
  if (r0 >= r1) return plan_run_rows(p, lo, hi, fn, ctx);
  int rc = lo < r0 * inner ? plan_run_rows(p, lo, r0 * inner, fn, ctx) : 0;
  if (rc == 0) rc = plan_run_tiles(p, r0, r1, fn, ctx);
  if (rc == 0 && r1 * inner < hi) rc = plan_run_rows(p, r1 * inner, hi, fn, ctx);
  return rc;
}

static int plan_run_rows(const cpu_plan *p, int64_t lo, int64_t hi, cpu_row_fn fn, void *ctx) {
  int d = p->ndim;
  int64_t inner = p->shape[d - 1];
  int64_t idx[TC_MAX_DIMS];
  int64_t r = lo;
  for (int i = d - 1; i >= 0; i--) { idx[i] = r % p->shape[i]; r /= p->shape[i]; }
  int64_t istr[CPU_MAX_OPS];
  for (int k = 0; k < p->nop; k++) istr[k] = p->strides[k][d - 1];
  while (lo < hi) {
    char *ptrs[CPU_MAX_OPS];
    for (int k = 0; k < p->nop; k++) {
      int64_t off = 0;
      for (int i = 0; i < d; i++) off += idx[i] * p->strides[k][i];
      ptrs[k] = p->base[k] + off * (int64_t)p->esize[k];
    }
    int64_t n = inner - idx[d - 1];
    if (n > hi - lo) n = hi - lo;
    if (n > CPU_CHUNK) n = CPU_CHUNK;
    if (fn(ctx, lo, n, ptrs, istr)) return 1;
    lo += n;
    idx[d - 1] += n;
    for (int i = d - 1; i > 0 && idx[i] == p->shape[i]; i--) { idx[i] = 0; idx[i - 1]++; }
    if (tc_interrupt_flag) return -1;
  }
  return 0;
}
