/* Internals every .cu kernel family shares: the element loop over a plan
 * (1-D and N-D), kernel entries, and their host emulation. A kernel body is
 * a __host__ __device__ function, so the emulation runs the very code the
 * device runs, in the same order. */
#ifndef TC_KERN_CUH
#define TC_KERN_CUH
#include <string.h>
#include "tcu.h"
#include "../../src/kexpr.h"

#define TCU_HD __host__ __device__ __forceinline__

extern "C" int tcu_launch(const void *kernel, int64_t blocks, void **args);
/* Grid sizes for the two kinds of grid-stride kernel: one thread per item
 * (enough blocks to fill the device, each thread then loops over the rest),
 * and one block per item. */
extern "C" int64_t tcu_grid_threads(int64_t items);
extern "C" int64_t tcu_grid_blocks(int64_t items);

/* Byte offsets of element i of the plan's output in each operand. */
template <int NOP, bool ND>
TCU_HD void tcu_offsets(const tcu_plan &p, int64_t i, int64_t (&off)[NOP]) {
  if constexpr (!ND) {
    for (int k = 0; k < NOP; k++) off[k] = i * p.bstride[k][0];
  } else {
    for (int k = 0; k < NOP; k++) off[k] = 0;
    for (int d = p.ndim - 1; d > 0; d--) {
      int64_t s = p.shape[d], q = i / s, c = i - q * s;
      i = q;
      for (int k = 0; k < NOP; k++) off[k] += c * p.bstride[k][d];
    }
    for (int k = 0; k < NOP; k++) off[k] += i * p.bstride[k][0];
  }
}

/* F::f takes the output pointer, then one pointer per input. */
template <class F, int NOP, bool ND>
TCU_HD void tcu_elem(const tcu_plan &p, int64_t i) {
  int64_t off[NOP];
  tcu_offsets<NOP, ND>(p, i, off);
  if constexpr (NOP == 2) F::f(p.base[0] + off[0], p.base[1] + off[1]);
  else if constexpr (NOP == 3) F::f(p.base[0] + off[0], p.base[1] + off[1], p.base[2] + off[2]);
  else F::f(p.base[0] + off[0], p.base[1] + off[1], p.base[2] + off[2], p.base[3] + off[3]);
}

template <class F, int NOP, bool ND>
__global__ void __launch_bounds__(TCU_THREADS) tcu_ew_kernel(const tcu_plan p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t i = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; i < p.n; i += step)
    tcu_elem<F, NOP, ND>(p, i);
}

template <class F, int NOP>
void tcu_ew_host(const tcu_plan *p) {
  if (p->ndim == 1) for (int64_t i = 0; i < p->n; i++) tcu_elem<F, NOP, false>(*p, i);
  else for (int64_t i = 0; i < p->n; i++) tcu_elem<F, NOP, true>(*p, i);
}

/* Kernels whose element needs its position or the plan's arguments:
 * F::g(plan, i, off) with off the operands' byte offsets. */
template <class F, int NOP, bool ND>
__global__ void __launch_bounds__(TCU_THREADS) tcu_ix_kernel(const tcu_plan p) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t i = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; i < p.n; i += step) {
    int64_t off[NOP];
    tcu_offsets<NOP, ND>(p, i, off);
    F::g(p, i, off);
  }
}

template <class F, int NOP>
void tcu_ix_host(const tcu_plan *p) {
  for (int64_t i = 0; i < p->n; i++) {
    int64_t off[NOP];
    if (p->ndim == 1) tcu_offsets<NOP, false>(*p, i, off);
    else tcu_offsets<NOP, true>(*p, i, off);
    F::g(*p, i, off);
  }
}

template <class F, int NOP>
tcu_entry tcu_make_ix_entry() {
  tcu_entry e;
  e.k1 = (const void *)tcu_ix_kernel<F, NOP, false>;
  e.kn = (const void *)tcu_ix_kernel<F, NOP, true>;
  e.host = tcu_ix_host<F, NOP>;
  return e;
}

template <class F, int NOP>
tcu_entry tcu_make_entry() {
  tcu_entry e;
  e.k1 = (const void *)tcu_ew_kernel<F, NOP, false>;
  e.kn = (const void *)tcu_ew_kernel<F, NOP, true>;
  e.host = tcu_ew_host<F, NOP>;
  return e;
}

/* The exported lookup NAME(op, dt) of an elementwise family's table
 * (tcu_entry table[TC_OP_COUNT][TC_DT_COUNT]), which the file's fill()
 * stamps once, on first use (its `ready` flag): NULL where no kernel. */
#define TCU_EW_LOOKUP(NAME, table) \
  extern "C" const tcu_entry *NAME(int op, int dt) { \
    if (!ready) { fill(); ready = true; } \
    return table[op][dt].k1 ? &table[op][dt] : NULL; \
  }

/* Item kernels, for families whose work is not one element of a plan
 * (scans, sorting, linear algebra helpers): F::g(p, i) for each item i in
 * [0, items), items independent of each other; tcu_items launches one (on
 * the default stream, not waited for) or runs it on the host when
 * emulating. */
template <class F, class P>
__global__ void __launch_bounds__(TCU_THREADS) tcu_item_kernel(const P p, int64_t items) {
  const int64_t step = (int64_t)gridDim.x * TCU_THREADS;
  for (int64_t i = (int64_t)blockIdx.x * TCU_THREADS + threadIdx.x; i < items; i += step) F::g(p, i);
}

template <class F, class P>
static int tcu_items(const P &p, int64_t items) {
  if (items <= 0) return 0;
  if (tcu_emulating()) {
    for (int64_t i = 0; i < items; i++) F::g(p, i);
    return 0;
  }
  int64_t n = items;
  void *args[2] = {(void *)&p, (void *)&n};
  return tcu_launch((const void *)tcu_item_kernel<F, P>, tcu_grid_threads(items), args);
}

/* A CUDA library loaded with dlopen (cuBLAS, cuSOLVER): state 0 not
 * tried, 1 loaded (lib, name), -1 unavailable (why says why). */
struct tcu_lib {
  int state;
  void *lib;
  char name[256], why[512];
};
/* Loads l once: the library $env names (a file name or path; "none" turns
 * it off), else soname from the loader's path, then from the CUDA toolkit
 * tcalc was built with, then from /usr/local/cuda/lib64; syms resolves its
 * functions (false: the library lacks them). what names it in messages.
 * 0 when loaded, else -1 with why (when given) saying why. */
extern "C" int tcu_lib_load(tcu_lib *l, const char *env, const char *soname, const char *what, bool (*syms)(void *lib),
                            char *why, size_t n);
extern "C" void *tcu_lib_sym(void *lib, const char *name);
template <class F> static bool tcu_sym(void *lib, const char *name, F *f) {
  void *s = tcu_lib_sym(lib, name);
  memcpy(f, &s, sizeof s);
  return s != NULL;
}

#define TCU_CPTR(S, p) ((const S *)(const void *)(p))
#define TCU_PTR(S, p) ((S *)(void *)(p))

#endif
