/* Internals of the CPU engine: the iteration plan every kernel family uses. */
#ifndef TC_CPU_H
#define TC_CPU_H
#include "../../src/engine.h"

#define CPU_MAX_OPS 4
/* Kernels whose results do not depend on the vector width (no sums
 * reassociated, no contraction: ISO C mode keeps -ffp-contract=off) may be
 * built for AVX-512 and AVX2 as well, picked by the loader (GCC's ifunc
 * clones); elsewhere they are built once for the baseline. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_CLONES
#endif

/* Elements per kernel call: long enough to amortise the call, short enough
 * that an interrupt is noticed quickly. */
#define CPU_CHUNK ((int64_t)1 << 16)
/* Elements per block of every elementwise loop that works in blocks (the
 * math kernels' gathered inputs, inputs converted to the kernel's dtype,
 * the overflow policy's judged blocks): a block of each operand stays in
 * L1. One size for all (a fused tape will run its ops on such blocks). */
#define CPU_EW_BLOCK 512
#define CPU_TILE_ROWS 32
#define CPU_TILE_COLS 128   /* 64 made twice the kernel calls: 316 x 316 f64 transposed + 0 was 28 us, 24 at 128 */
#define CPU_TILE_MIN 16     /* rows and columns from which a transposed input goes in tiles */
#define CPU_TILE_WIDE 512   /* columns of a whole row a tile may take with a transposed input */

/* Loops whose length has no bound (a reduction's run, a dot product's k)
 * look at the interrupt flag every CPU_POLL iterations, a few milliseconds
 * of work, so that Ctrl-C stops them within milliseconds whatever the size.
 * CPU_POLLED_FOR(i, lo, hi) is `for (int64_t i = lo; i < hi; i++)` in
 * blocks of CPU_POLL, leaving the loop (unfinished) once the flag is up;
 * each block is a plain counted loop, so it vectorises as before. Loops
 * that may stop early anyway add cpu_stop(i) to their condition. The
 * caller sees the flag and reports `interrupted`. */
/* The same places report progress (src/progress.c): each CPU_POLL
 * iterations done (elements of a reduction, multiply-adds of a product)
 * are added to the job the engine call opened; the caller of a loop adds
 * what is left of it at its end (tc_progress_mark, tc_progress_upto). */
#define CPU_POLL ((int64_t)1 << 22)
/* Whether to stop before iteration i (CPU_POLL after the last look). */
static inline bool cpu_poll_at(int64_t i) {
  if (i) tc_progress_add(CPU_POLL);
  return tc_interrupt_flag;
}
#define CPU_POLLED_FOR(i, lo, hi) \
  for (int64_t i##_l = (lo), i##_b = i##_l, i##_h = (hi); i##_b < i##_h && !cpu_poll_at(i##_b - i##_l); i##_b += CPU_POLL) \
    for (int64_t i = i##_b, i##_e = i##_h - i##_b > CPU_POLL ? i##_b + CPU_POLL : i##_h; i < i##_e; i++)
static inline bool cpu_stop(int64_t i) { return (i & (CPU_POLL - 1)) == 0 && cpu_poll_at(i); }
/* After a step of a loop (a divisor of CPU_POLL) that ends at i: a report
 * each time i reaches a multiple of CPU_POLL. */
static inline void cpu_progress_at(int64_t i) {
  if ((i & (CPU_POLL - 1)) == 0) tc_progress_add(CPU_POLL);
}
/* For a loop of small steps: units counted in *pending, reported once
 * there are CPU_POLL / 4 of them (the rest by the loop's end). */
static inline void cpu_progress_note(int64_t *pending, int64_t units) {
  if ((*pending += units) < CPU_POLL / 4) return;
  tc_progress_add(*pending);
  *pending = 0;
}
/* For loops whose steps differ in size: counts work units in *count and,
 * once CPU_POLL have passed, reports them and says whether the flag is up. */
static inline bool cpu_poll(int64_t *count, int64_t work) {
  if ((*count += work) < CPU_POLL) return false;
  tc_progress_add(*count);
  *count = 0;
  return tc_interrupt_flag;
}

/* Operand 0 is the (contiguous) output; the rest are inputs viewed with the
 * output's shape. Size-1 dims are dropped and adjacent dims merged where
 * every operand allows, so a contiguous op becomes one long row. */
typedef struct cpu_plan {
  int ndim, nop;
  /* Set by callers whose row function does not care in which order rows
   * are visited (elementwise ops, copies, gathers): an input strided along
   * the last dim (a transposed view) is then walked in tiles of
   * CPU_TILE_ROWS rows x CPU_TILE_COLS columns, so its columns stay in
   * cache. cpu_plan_init leaves it false. */
  bool tiles;
  /* Set, with tiles, by callers whose row function reads each input only
   * at its pointer and stride (elementwise ops, copies; not gathers, which
   * reach along an axis from it): a transposed input of 4 or 8 bytes an
   * element is then transposed a tile at a time into a buffer, and a tile
   * of whole rows may come in one call that spans them. */
  bool tbuf;
  int64_t shape[TC_MAX_DIMS];
  int64_t strides[CPU_MAX_OPS][TC_MAX_DIMS];
  char *base[CPU_MAX_OPS];
  size_t esize[CPU_MAX_OPS];
} cpu_plan;

/* One call per row segment: pos is the row-major index of its first element
 * in operand 0, n elements, pointers to each operand's first element, and
 * each operand's stride (in elements) along the row. Nonzero stops the run. */
typedef int (*cpu_row_fn)(void *ctx, int64_t pos, int64_t n, char *const *ptrs, const int64_t *strides);

void cpu_plan_init(cpu_plan *p, const tc_tensor *out, int nin, tc_tensor *const *in);
/* Runs rows covering operand-0 elements [lo, hi); -1 if interrupted, 1 if fn stopped it. */
int cpu_plan_run(const cpu_plan *p, int64_t lo, int64_t hi, cpu_row_fn fn, void *ctx);

/* A call with overflow set (overflow.c): 0 or -1 (err set) when judged,
 * 1 when the wrapping kernel is exact for it and is to run. */
int cpu_run_overflow(tc_call *c, tc_err *err);

/* dst[j * rows + i] = src[i * ss + j], i < rows, j < cols, elements of es
 * bytes: 1, 2, 4 or 8 (transpose.c). */
void cpu_transpose(size_t es, const char *src, int64_t ss, int64_t rows, int64_t cols, char *dst);

/* ---- threads (pool.c) ---- */
/* Elements below which an op stays on one thread. */
#define CPU_PAR_MIN ((int64_t)1 << 16)
/* One task of a parallel job: worker is the running thread's index in
 * [0, cpu_threads()), for per-thread scratch; nonzero stops the job. */
typedef int (*cpu_task_fn)(void *ctx, int task, int worker);
/* Threads a job may use now (1 inside a task: jobs do not nest). */
int cpu_threads(void);
/* Runs tasks 0..ntasks-1, claimed in order; -1 if a task returned < 0,
 * else 1 if one returned > 0 (tasks not yet started are then skipped). */
int cpu_parallel(int ntasks, cpu_task_fn fn, void *ctx);
/* How many tasks to split n units of work into, each at least min_per_task. */
int64_t cpu_split(int64_t n, int64_t min_per_task);
/* min_per_task for n units raised so that work of 2 to 2t - 1 such tasks
 * (t threads) is cut into one task a thread instead: 3 tasks on 2 threads
 * would leave one thread the third alone. */
int64_t cpu_even_min(int64_t n, int64_t min_per_task);
/* cpu_plan_run over [0, n) split across threads at multiples of 64 elements. */
int cpu_plan_run_par(const cpu_plan *p, int64_t n, int64_t min_per_task, cpu_row_fn fn, void *ctx);
/* The same, each operand-0 element `units` of progress (src/progress.c):
 * each task reports what its rows did not. */
int cpu_plan_run_units(const cpu_plan *p, int64_t n, int64_t min_per_task, cpu_row_fn fn, void *ctx, int64_t units);

/* Each engine call's answer and run, by the cpu column of TC_ENGINE_CALLS
 * (src/ops.def): ew.c, cast (ew.c), reduce.c, find (reduce.c), index.c
 * (copy, gather, scatter, nonzero, tri, range, random), matmul.c, lapack.c
 * (linalg), order.c (scans, sorting), row (cpu.c). */
#define CPU_CALL_PROTO_(K, cpu, ...) \
  bool cpu_supports_##cpu(const tc_call *call); \
  int cpu_run_##cpu(tc_call *call, tc_err *err);
TC_ENGINE_CALLS(CPU_CALL_PROTO_, ~)
#undef CPU_CALL_PROTO_
const char *cpu_why_not_linalg(const tc_call *call);   /* LAPACKE missing */
tc_scalar_fn cpu_scalar_kernel(tc_op op, tc_dtype dt);   /* the engine's scalar hook (ew.c) */
tc_cast_fn cpu_scalar_cast(tc_dtype from, tc_dtype to);   /* its cast hook (ew.c) */
/* One product of a matmul call's batch: A[i,k] = a[i*ars + k*acs],
 * B[k,j] = b[k*brs + j*bcs] (strides in elements), C contiguous M x N. */
typedef struct {
  const char *a, *b;
  char *c;
  int64_t M, N, K, ars, acs, brs, bcs;
} mm_prob;
void cpu_matmul_prob(const tc_call *call, int64_t bi, mm_prob *p);
/* f32/f64 products of the call's nbatch products through tcalc's blocked
 * kernel (gemm.c); each element is its products summed in k order. */
int cpu_gemm(const tc_call *call, int64_t nbatch, tc_err *err);
const char *cpu_gemm_isa_name(void);
/* f32/f64 products with one row, one column or fewer than 8 outputs, each summed in the fixed
 * lane order of gemm.c (not k order); whether a call takes that path. */
bool cpu_dot_lanes_applies(const tc_call *call, const mm_prob *p0);
int cpu_dot_lanes(const tc_call *call, int64_t nbatch, tc_err *err);
/* Test hook: the most bytes of packed B gemm.c holds at once (0 or less:
 * the default, 16 MiB); returns the previous limit. */
int64_t cpu_gemm_chunk_bytes(int64_t n);
/* Test hook: the margin of the sampled selection's brackets (order.c), in
 * standard deviations of a sample rank (0 or less: the default, 4);
 * returns the previous margin. With counts, the rows it settled and the
 * rows it handed back to the plain selection since the last such call. */
int cpu_select_margin(int sd, int64_t counts[2]);
/* Rounds a quicksort or quickselect of n elements may take before a range
 * still unsplit is sorted otherwise: 2 log2(n) + 8 (order.c, vsort.c). */
static inline int cpu_sort_depth(int64_t n) {
  int depth = 8;
  for (int64_t m = n; m > 1; m >>= 1) depth += 2;
  return depth;
}
/* Sorts a[0, n) of 64- or 32-bit keys ascending with AVX-512 (vsort.c),
 * t[0, n) scratch: false, leaving both as they were, where
 * cpu_vsort_applies(n) does not hold (the level, cpu_matmul_isa, below
 * AVX-512, or n over CPU_VSORT_MAX). */
#define CPU_VSORT_MAX 16384
bool cpu_vsort_applies(int64_t n);
bool cpu_vsort_u64(uint64_t *a, uint64_t *t, int64_t n);
bool cpu_vsort_u32(uint32_t *a, uint32_t *t, int64_t n);
/* Instruction-set levels of the matrix kernels. */
enum { CPU_ISA_BASE, CPU_ISA_AVX2, CPU_ISA_AVX512, CPU_ISA_COUNT };
/* The integer kernel's instruction set: level 0 portable, 1 AVX2, 2 AVX-512,
 * capped at what the CPU has; a negative level only reads it. Tests use
 * this to run every variant the machine supports. */
int cpu_matmul_isa(int level);
const char *cpu_matmul_isa_name(void);
/* The float kernels' level: as cpu_matmul_isa, but portable without FMA. */
int cpu_float_isa(void);
/* How many rows at a time the AVX-512 form of a matrix times a vector
 * takes (1, 4 or 8; other values: by the matrix's size, the default).
 * Tests use this to run every grouping; each gives the same bits. */
void cpu_dot_rows_group(int rows);
/* The CBLAS library large float products use, or NULL for tcalc's own
 * kernel ($TCALC_BLAS: a library for dlopen; unset, empty or "none": none). */
const char *cpu_matmul_blas(void);
/* Whether the CPU has FMA (asked with the matrix kernels' level). */
bool cpu_has_fma(void);
/* The vectorised math kernel (vmath.c, on SLEEF) for a unary math op on
 * f32 or f64 at the current level, or NULL: out[i] = f(a[i * sa]). */
typedef void (*cpu_vmath_fn)(int64_t len, char *out, const char *a, int64_t sa);
/* f32 to f16 and f16 to f32 of n contiguous elements at the CPU's level
 * (F16C with AVX2, else one at a time): tc_f32_to_f16's and
 * tc_f16_to_f32's values (ew.c). */
void cpu_f32_to_f16(int64_t n, char *out, const char *a);
void cpu_f16_to_f32(int64_t n, char *out, const char *a);
cpu_vmath_fn cpu_vmath_kernel(tc_op op, tc_dtype dt);
/* The same for the binary ones (pow of f32 and f64), or NULL. */
typedef void (*cpu_vmath_bin_fn)(int64_t len, char *out, const char *a, int64_t sa, const char *b, int64_t sb);
cpu_vmath_bin_fn cpu_vmath_bin_kernel(tc_op op, tc_dtype dt);
/* tcalc's own kernel for op on f32 or f64 (vmath_own.c) at vmath.c's path
 * (0 base, 1 FMA, 2 AVX2 + FMA, 3 AVX-512), or NULL where SLEEF's is used. */
cpu_vmath_fn cpu_vmath_own(tc_op op, tc_dtype dt, int path);
cpu_vmath_bin_fn cpu_vmath_own_bin(tc_op op, tc_dtype dt, int path);
/* The SLEEF variant cpu_vmath_kernel uses now ("sleef-avx512f", ...). */
const char *cpu_vmath_path_name(void);
/* vmath.c's paths: scalar without FMA, scalar with FMA, AVX2 + FMA, AVX-512. */
enum { CPU_VM_BASE, CPU_VM_FMA, CPU_VM_AVX2, CPU_VM_AVX512 };
/* sin, cos or tan of f32 or f64 on a path (vtrig.c), NULL for other ops. */
cpu_vmath_fn cpu_vtrig_kernel(tc_op op, bool f64, int path);
/* In a math kernel's runs of CPU_VM_PF_MIN bytes or more, the input and
 * output CPU_VM_PF_AHEAD bytes ahead of the vector in hand are prefetched
 * (a hint: it never faults, past the end included): between calls of tens
 * of cycles the hardware prefetchers fell behind, and tanh of 10^7 f64 ran
 * at 4.2 ns an element against 2.9 from the caches. A shorter run is
 * usually in the caches already (the result of the op before), and there
 * the prefetches were some 3% of exp of 1000 f64. len is the run's. */
#define CPU_VM_PF_AHEAD 2048
#define CPU_VM_PF_MIN ((int64_t)64 << 10)
#define CPU_VM_PREFETCH(s, d) \
  do { \
    if (len * (int64_t)sizeof *(s) >= CPU_VM_PF_MIN) { \
      __builtin_prefetch((const char *)(s) + CPU_VM_PF_AHEAD); \
      __builtin_prefetch((char *)(d) + CPU_VM_PF_AHEAD, 1); \
    } \
  } while (0)
/* The body of a unary math kernel (vmath.c, vmath_own.c, vtrig_kern.h),
 * void NAME(int64_t len, char *o_, const char *a_, int64_t sa): the input
 * in blocks of BLOCK elements of T, a strided one gathered into a buffer
 * first; in each block BEGIN(...), then STEP(dst, src, ...) on W elements
 * at a time (prefetched where PF), the block's last ones through a buffer of W padded with
 * zeros, then END(T, ...), where o + i0 and src hold the block's n
 * results and arguments. */
#define CPU_VM_BLOCKS(T, BLOCK, W, PF, BEGIN, STEP, END, ...) \
  T *o = (T *)(void *)o_; \
  const T *a = (const T *)(const void *)a_; \
  T buf[BLOCK]; \
  for (int64_t i0 = 0; i0 < len; i0 += (BLOCK)) { \
    int64_t n = len - i0 < (BLOCK) ? len - i0 : (BLOCK), j = 0; \
    const T *src = a + i0 * sa; \
    if (sa != 1) { \
      for (int64_t k = 0; k < n; k++) buf[k] = a[(i0 + k) * sa]; \
      src = buf; \
    } \
    BEGIN(__VA_ARGS__) \
    for (; j + (W) <= n; j += (W)) { \
      if (PF) CPU_VM_PREFETCH(src + j, o + i0 + j); \
      STEP(o + i0 + j, src + j, __VA_ARGS__); \
    } \
    if (j < n) { \
      T t_[W] = {0}; \
      memcpy(t_, src + j, sizeof(T) * (size_t)(n - j)); \
      STEP(t_, t_, __VA_ARGS__); \
      memcpy(o + i0 + j, t_, sizeof(T) * (size_t)(n - j)); \
    } \
    END(T, __VA_ARGS__) \
  }
#define CPU_VM_NONE(...)
/* The loop of a two-operand math kernel (pow, atan2), after it has set
 * T *o and const T *a, *b, and buffers ga and gb of BLOCK (gb holding b[0]
 * where sb is 0): each block's strided operands gathered, STEP(dst, x,
 * y, ...) on W elements at a time (prefetched), the last ones through
 * buffers of W padded with ones, then END(T, ...), where o + i0, pa and pb
 * hold the block's n results and operands. */
#define CPU_VM_BIN_BLOCKS(T, BLOCK, W, STEP, END, ...) \
  for (int64_t i0 = 0; i0 < len; i0 += (BLOCK)) { \
    int64_t n = len - i0 < (BLOCK) ? len - i0 : (BLOCK), j = 0; \
    const T *pa = a + i0 * sa, *pb = sb == 0 ? gb : b + i0 * sb; \
    if (sa != 1) { \
      for (int64_t k = 0; k < n; k++) ga[k] = a[(i0 + k) * sa]; \
      pa = ga; \
    } \
    if (sb != 0 && sb != 1) { \
      for (int64_t k = 0; k < n; k++) gb[k] = b[(i0 + k) * sb]; \
      pb = gb; \
    } \
    for (; j + (W) <= n; j += (W)) { \
      CPU_VM_PREFETCH(pa + j, o + i0 + j); \
      STEP(o + i0 + j, pa + j, pb + j, __VA_ARGS__); \
    } \
    if (j < n) { \
      T ta_[W], tb_[W]; \
      for (int l = 0; l < (W); l++) ta_[l] = tb_[l] = 1; \
      memcpy(ta_, pa + j, sizeof(T) * (size_t)(n - j)); \
      memcpy(tb_, pb + j, sizeof(T) * (size_t)(n - j)); \
      STEP(ta_, ta_, tb_, __VA_ARGS__); \
      memcpy(o + i0 + j, ta_, sizeof(T) * (size_t)(n - j)); \
    } \
    END(T, __VA_ARGS__) \
  }
int cpu_interrupted(tc_err *err);
#endif
