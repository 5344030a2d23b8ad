/* CUDA reductions and the pre-check scan.
 *
 * A reduction folds each row of n elements into one output with an
 * accumulator type A and an associative combine. Every strategy folds in a
 * fixed order, so results are deterministic and the host emulation repeats
 * them exactly:
 *   seq    one thread per row, elements in order (as the CPU folds them);
 *          used for short rows and for float products, whose rounding
 *          depends on the order
 *   block  one block per row: thread t folds elements t, t+T, ..., then a
 *          shared-memory tree combines the T partials
 *   split  few long rows: each row is cut into `parts` chunks folded like
 *          block into partials, which a second kernel combines per row.
 * Integer sums and products wrap (any order gives the CPU's result);
 * max/min/argmax/argmin keep the CPU's rule (the first NaN wins, ties go to
 * the lower index), so they are exact too; float sums accumulate in double
 * with Neumaier compensation, within a few ulps of the CPU's pairwise sum. */
#include "kern.cuh"
#include "../reduce.def"

/* ---- the ops, stamped from backend/reduce.def: A, O (output type), ident,
 * step (fold in element j at p), merge (two partial folds), store ---- */
#define RO_KEEP(S) S
#define RO_I64(S) int64_t
#define RO_BOOL(S) uint8_t
#define RO_F64(S) double
#define RSTORE_KEEP(ST, v) ST((T)(v))
#define RSTORE_I64(ST, v) (int64_t)(v)
#define RSTORE_BOOL(ST, v) (uint8_t)(v)
#define RSTORE_F64(ST, v) (double)(v)
#define RSEQ_TREE false
#define RSEQ_PAIRWISE false
#define RSEQ_SEQ true
#define R_OP(E, n_, S, C, CLS, B, LD, ST, OP, OUT, FOLD, A_, IDENT, STEP, MERGE, FIN, STOP) \
  struct r_##OP##_##E { \
    typedef C T; typedef tc_u_##E U; typedef A_ A; typedef RO_##OUT(S) O; \
    static constexpr bool seq = RSEQ_##FOLD; \
    static TCU_HD A ident() { return IDENT; } \
    static TCU_HD A step(A acc, const char *p, int64_t j) { T x = LD(*TCU_CPTR(S, p)); (void)j; return STEP; } \
    static TCU_HD A comb(A a, A b) { return MERGE; } \
    static TCU_HD void store(char *o, A a, int64_t n) { (void)n; *TCU_PTR(O, o) = RSTORE_##OUT(ST, FIN); } \
  };
#define R_OP_ROW(OP, CLS, ...) TC_FOR_##CLS(R_OP, OP, __VA_ARGS__)
TC_REDUCE_KERNELS(R_OP_ROW)

/* ---- offsets ---- */
TCU_HD int64_t tcu_nd_off(int nd, const int64_t *shape, const int64_t *stride, int64_t i) {
  int64_t off = 0;
  for (int d = nd - 1; d > 0; d--) {
    int64_t q = i / shape[d];
    off += (i - q * shape[d]) * stride[d];
    i = q;
  }
  return nd > 0 ? off + i * stride[0] : 0;
}
TCU_HD int64_t tcu_koff(const tcu_rplan &p, int64_t r) { return tcu_nd_off(p.kdim, p.kshape, p.kstride, r); }
TCU_HD int64_t tcu_roff(const tcu_rplan &p, int64_t j) {
  return p.rdim == 1 ? j * p.rstride[0] : tcu_nd_off(p.rdim, p.rshape, p.rstride, j);
}

/* Thread t's fold of elements j0 + t, j0 + t + T, ... below j1 of row r. */
template <class R>
TCU_HD typename R::A tcu_fold(const tcu_rplan &p, int64_t r, int64_t j0, int64_t j1, int t) {
  const char *base = p.in + tcu_koff(p, r);
  typename R::A acc = R::ident();
  for (int64_t j = j0 + t; j < j1; j += TCU_THREADS) acc = R::step(acc, base + tcu_roff(p, j), j);
  return acc;
}

template <class R>
TCU_HD void tcu_fold_seq(const tcu_rplan &p, int64_t r) {
  const char *base = p.in + tcu_koff(p, r);
  typename R::A acc = R::ident();
  for (int64_t j = 0; j < p.n; j++) acc = R::step(acc, base + tcu_roff(p, j), j);
  R::store(p.out + r * (int64_t)sizeof(typename R::O), acc, p.n);
}

/* ---- kernels ---- */
template <class R>
__global__ void __launch_bounds__(TCU_THREADS) tcu_r_seq(const tcu_rplan p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t r = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; r < p.m; r += step) tcu_fold_seq<R>(p, r);
}

/* The tree over the block's T partials in sh[]; the result lands in sh[0]. */
template <class R>
__device__ void tcu_block_tree(typename R::A *sh) {
  const int t = threadIdx.x;
  __syncthreads();
  for (int s = TCU_THREADS / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] = R::comb(sh[t], sh[t + s]);
    __syncthreads();
  }
}

template <class R>
__global__ void __launch_bounds__(TCU_THREADS) tcu_r_block(const tcu_rplan p) {
  __shared__ typename R::A sh[TCU_THREADS];
  for (int64_t r = blockIdx.x; r < p.m; r += gridDim.x) {
    sh[threadIdx.x] = tcu_fold<R>(p, r, 0, p.n, threadIdx.x);
    tcu_block_tree<R>(sh);
    if (threadIdx.x == 0) R::store(p.out + r * (int64_t)sizeof(typename R::O), sh[0], p.n);
    __syncthreads();
  }
}

/* Block b folds chunk b % parts of row b / parts into part[b]. */
template <class R>
__global__ void __launch_bounds__(TCU_THREADS) tcu_r_split1(const tcu_rplan p) {
  __shared__ typename R::A sh[TCU_THREADS];
  typename R::A *part = (typename R::A *)(void *)p.part;
  for (int64_t b = blockIdx.x; b < p.m * p.parts; b += gridDim.x) {
    int64_t r = b / p.parts, q = b - r * p.parts;
    int64_t j0 = q * p.chunk, j1 = j0 + p.chunk < p.n ? j0 + p.chunk : p.n;
    sh[threadIdx.x] = tcu_fold<R>(p, r, j0, j1, threadIdx.x);
    tcu_block_tree<R>(sh);
    if (threadIdx.x == 0) part[b] = sh[0];
    __syncthreads();
  }
}

/* Row r combines its parts (parts <= T: thread t takes part t). */
template <class R>
__global__ void __launch_bounds__(TCU_THREADS) tcu_r_split2(const tcu_rplan p) {
  __shared__ typename R::A sh[TCU_THREADS];
  const typename R::A *part = (const typename R::A *)(const void *)p.part;
  for (int64_t r = blockIdx.x; r < p.m; r += gridDim.x) {
    sh[threadIdx.x] = threadIdx.x < p.parts ? part[r * p.parts + threadIdx.x] : R::ident();
    tcu_block_tree<R>(sh);
    if (threadIdx.x == 0) R::store(p.out + r * (int64_t)sizeof(typename R::O), sh[0], p.n);
    __syncthreads();
  }
}

/* ---- strategies ---- */
enum { TCU_SEQ, TCU_BLOCK, TCU_SPLIT };
#define TCU_SPLIT_ROWS 64           /* at most this many rows ... */
#define TCU_SPLIT_MIN ((int64_t)1 << 16)  /* ... of at least this many elements split */
#define TCU_SPLIT_CHUNK ((int64_t)1 << 14)

static int strategy(const tcu_rentry *e, tcu_rplan *p) {
  if (e->sequential || p->n <= 32) return TCU_SEQ;
  if (p->m <= TCU_SPLIT_ROWS && p->n >= TCU_SPLIT_MIN) {
    int64_t parts = (p->n + TCU_SPLIT_CHUNK - 1) / TCU_SPLIT_CHUNK;
    if (parts > TCU_THREADS) parts = TCU_THREADS;
    p->parts = parts;
    p->chunk = (p->n + parts - 1) / parts;
    return TCU_SPLIT;
  }
  return TCU_BLOCK;
}

/* The host emulation: the same folds and trees, in the same order. */
template <class R>
static void tcu_tree_host(typename R::A *sh) {
  for (int s = TCU_THREADS / 2; s > 0; s >>= 1)
    for (int t = 0; t < s; t++) sh[t] = R::comb(sh[t], sh[t + s]);
}

template <class R>
static void tcu_r_host(const tcu_rplan *pp, int strat) {
  const tcu_rplan &p = *pp;
  typedef typename R::A A;
  A sh[TCU_THREADS];
  const int64_t osz = (int64_t)sizeof(typename R::O);
  if (strat == TCU_SEQ) {
    for (int64_t r = 0; r < p.m; r++) tcu_fold_seq<R>(p, r);
  } else if (strat == TCU_BLOCK) {
    for (int64_t r = 0; r < p.m; r++) {
      for (int t = 0; t < TCU_THREADS; t++) sh[t] = tcu_fold<R>(p, r, 0, p.n, t);
      tcu_tree_host<R>(sh);
      R::store(p.out + r * osz, sh[0], p.n);
    }
  } else {
    A *part = (A *)(void *)p.part;
    for (int64_t b = 0; b < p.m * p.parts; b++) {
      int64_t r = b / p.parts, q = b - r * p.parts;
      int64_t j0 = q * p.chunk, j1 = j0 + p.chunk < p.n ? j0 + p.chunk : p.n;
      for (int t = 0; t < TCU_THREADS; t++) sh[t] = tcu_fold<R>(p, r, j0, j1, t);
      tcu_tree_host<R>(sh);
      part[b] = sh[0];
    }
    for (int64_t r = 0; r < p.m; r++) {
      for (int t = 0; t < TCU_THREADS; t++) sh[t] = t < p.parts ? part[r * p.parts + t] : R::ident();
      tcu_tree_host<R>(sh);
      R::store(p.out + r * osz, sh[0], p.n);
    }
  }
}

template <class R>
static tcu_rentry tcu_make_rentry() {
  tcu_rentry e;
  e.seq = (const void *)tcu_r_seq<R>;
  e.block = (const void *)tcu_r_block<R>;
  e.split1 = (const void *)tcu_r_split1<R>;
  e.split2 = (const void *)tcu_r_split2<R>;
  e.host = tcu_r_host<R>;
  e.acc_size = sizeof(typename R::A);
  e.sequential = R::seq;
  return e;
}

static tcu_rentry rtable[TC_OP_COUNT][TC_DT_COUNT];
static bool rready;

static void rfill(void) {
#define RE(E, n_, S, C, CLS, B, LD, ST, OP, ...) rtable[TC_OP_##OP][TC_DT_##E] = tcu_make_rentry<r_##OP##_##E>();
#define RE_ROW(OP, CLS, ...) TC_FOR_##CLS(RE, OP, __VA_ARGS__)
  TC_REDUCE_KERNELS(RE_ROW)
}

extern "C" const tcu_rentry *tcu_red_entry(int op, int dt) {
  if (!rready) { rfill(); rready = true; }
  return rtable[op][dt].seq ? &rtable[op][dt] : NULL;
}

extern "C" int tcu_reduce(const tcu_rentry *e, tcu_rplan *p) {
  int strat = strategy(e, p);
  int st = 0;
  size_t pbytes = strat == TCU_SPLIT ? (size_t)(p->m * p->parts) * e->acc_size : 0;
  if (pbytes) {
    p->part = (char *)tcu_malloc(pbytes);
    if (!p->part) return 2; /* cudaErrorMemoryAllocation */
  }
  if (tcu_emulating()) {
    e->host(p, strat);
  } else {
    void *args[1] = {(void *)p};
    if (strat == TCU_SEQ) st = tcu_launch(e->seq, tcu_grid_threads(p->m), args);
    else if (strat == TCU_BLOCK) st = tcu_launch(e->block, tcu_grid_blocks(p->m), args);
    else {
      st = tcu_launch(e->split1, tcu_grid_blocks(p->m * p->parts), args);
      if (!st) st = tcu_launch(e->split2, tcu_grid_blocks(p->m), args);
    }
    if (!st) st = tcu_sync();
  }
  if (pbytes) tcu_free(p->part, pbytes);
  p->part = NULL;
  return st;
}

/* ---- the pre-check scans: the first element that is zero, negative, or
 * outside [arg[0], arg[1]] (index bounds) ---- */
/* base[1] of the plan is the result cell: the smallest matching index, or
 * all ones when none matches. Each thread's indices grow, so a thread stops
 * at its first match. */
#define K_FIND(E, n_, S, C, CLS, ...) \
  struct kf_ZERO_##E { static TCU_HD bool f(const tcu_plan &, const char *x) { return *TCU_CPTR(S, x) == 0; } }; \
  struct kf_NEG_##E { static TCU_HD bool f(const tcu_plan &, const char *x) { return TC_FIND_NEG_##CLS(*TCU_CPTR(S, x)); } }; \
  struct kf_RANGE_##E { \
    static TCU_HD bool f(const tcu_plan &p, const char *x) { return TC_FIND_OUT_##CLS(*TCU_CPTR(S, x), p.arg[0], p.arg[1]); } \
  };
TC_FOR_INT(K_FIND, _)

template <class F, bool ND>
__global__ void __launch_bounds__(TCU_THREADS) tcu_find_kernel(const tcu_plan p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t i = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; i < p.n; i += step) {
    int64_t off[1];
    tcu_offsets<1, ND>(p, i, off);
    if (F::f(p, p.base[0] + off[0])) {
      atomicMin((unsigned long long *)(void *)p.base[1], (unsigned long long)i);
      break;
    }
  }
}

template <class F>
static void tcu_find_host(const tcu_plan *p) {
  uint64_t *res = (uint64_t *)(void *)p->base[1];
  for (int64_t i = 0; i < p->n; i++) {
    int64_t off[1];
    if (p->ndim == 1) tcu_offsets<1, false>(*p, i, off);
    else tcu_offsets<1, true>(*p, i, off);
    if (F::f(*p, p->base[0] + off[0])) { *res = (uint64_t)i; return; }
  }
}

template <class F>
static tcu_entry tcu_make_find() {
  tcu_entry e;
  e.k1 = (const void *)tcu_find_kernel<F, false>;
  e.kn = (const void *)tcu_find_kernel<F, true>;
  e.host = tcu_find_host<F>;
  return e;
}

static tcu_entry ftable[TC_DT_COUNT][3];
static bool fready;

static void ffill(void) {
#define FE(E, ...) ftable[TC_DT_##E][TCU_PRED_ZERO] = tcu_make_find<kf_ZERO_##E>(); \
                   ftable[TC_DT_##E][TCU_PRED_NEG] = tcu_make_find<kf_NEG_##E>(); \
                   ftable[TC_DT_##E][TCU_PRED_RANGE] = tcu_make_find<kf_RANGE_##E>();
  TC_FOR_INT(FE, _)
}

extern "C" const tcu_entry *tcu_find_entry(int dt, int pred) {
  if (!fready) { ffill(); fready = true; }
  if (pred < 0 || pred > 2) return NULL;
  return ftable[dt][pred].k1 ? &ftable[dt][pred] : NULL;
}
