/* The CUDA runtime side of the engine: device discovery, memory (with a
 * small cache of freed blocks, since cudaFree synchronises and repeated ops
 * allocate the same sizes), copies, launches, the host emulation switch
 * the parity suite uses on machines without a GPU, and the plugin's one
 * export, the table tcalc reaches all of it through (tcu_api in tcu.h).
 * The runtime is linked statically into the plugin, so a machine without a
 * driver only makes tcu_init fail. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "kern.cuh"

static bool emulate;
static int state;            /* 0: not tried, 1: usable, -1: unusable */
static char why_not[256];

extern "C" void tcu_set_emulate(bool on) {
  emulate = on;
  state = 0;
}
extern "C" bool tcu_emulating(void) { return emulate; }

extern "C" int tcu_init(char *why, size_t n) {
  if (emulate) return 0;
  if (state == 0) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      snprintf(why_not, sizeof why_not, "no usable CUDA device (%s)", cudaGetErrorString(e));
    } else if (count == 0) {
      snprintf(why_not, sizeof why_not, "no CUDA device found");
    } else if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) {
      snprintf(why_not, sizeof why_not, "CUDA device 0 cannot be used (%s)", cudaGetErrorString(e));
    } else {
      state = 1;
    }
    if (state == 0) {
      state = -1;
      cudaGetLastError();   /* clear the error so it does not stick */
    }
  }
  if (state < 0 && why && n) snprintf(why, n, "%s", why_not);
  return state > 0 ? 0 : -1;
}

/* ---- memory ---- */
#define CACHE_SLOTS 64
#define CACHE_BYTES ((size_t)8 << 30)
static struct { void *p; size_t n; } cache[CACHE_SLOTS];
static int ncached;
static size_t cached_bytes;

static void cache_flush(void) {
  for (int i = 0; i < ncached; i++) cudaFree(cache[i].p);
  ncached = 0;
  cached_bytes = 0;
}

extern "C" void *tcu_malloc(size_t n) {
  if (emulate) return aligned_alloc(64, (n + 63) & ~(size_t)63);
  for (int i = ncached - 1; i >= 0; i--) {
    if (cache[i].n == n) {
      void *p = cache[i].p;
      cache[i] = cache[--ncached];
      cached_bytes -= n;
      return p;
    }
  }
  void *p = NULL;
  if (cudaMalloc(&p, n) != cudaSuccess) {
    cudaGetLastError();
    cache_flush();
    if (cudaMalloc(&p, n) != cudaSuccess) { cudaGetLastError(); return NULL; }
  }
  return p;
}

extern "C" void tcu_free(void *p, size_t n) {
  if (!p) return;
  if (emulate) { free(p); return; }
  if (ncached == CACHE_SLOTS || n > CACHE_BYTES - cached_bytes) {
    if (ncached) {   /* evict the oldest to make room */
      cudaFree(cache[0].p);
      cached_bytes -= cache[0].n;
      cache[0] = cache[--ncached];
    }
    if (ncached == CACHE_SLOTS || n > CACHE_BYTES - cached_bytes) { cudaFree(p); return; }
  }
  cache[ncached].p = p;
  cache[ncached].n = n;
  ncached++;
  cached_bytes += n;
}

extern "C" int tcu_h2d(void *dst, const void *src, size_t n) {
  if (emulate) { memcpy(dst, src, n); return 0; }
  return (int)cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
}

extern "C" int tcu_d2h(void *dst, const void *src, size_t n) {
  if (emulate) { memcpy(dst, src, n); return 0; }
  return (int)cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
}

extern "C" int tcu_sync(void) {
  if (emulate) return 0;
  return (int)cudaDeviceSynchronize();
}

extern "C" const char *tcu_blas_strerror(int status);
extern "C" const char *tcu_solver_strerror(int status);
extern "C" const char *tcu_strerror(int status) {
  if (status >= TCU_E_SOLVER) return tcu_solver_strerror(status - TCU_E_SOLVER);
  if (status >= TCU_E_BLAS) return tcu_blas_strerror(status - TCU_E_BLAS);
  return cudaGetErrorString((cudaError_t)status);
}
/* (cuBLAS status 3 is CUBLAS_STATUS_ALLOC_FAILED, cuSOLVER's 2 CUSOLVER_STATUS_ALLOC_FAILED) */
extern "C" bool tcu_is_oom(int status) {
  return status == (int)cudaErrorMemoryAllocation || status == TCU_E_BLAS + 3 || status == TCU_E_SOLVER + 2;
}

/* ---- launches ---- */
extern "C" int tcu_launch(const void *kernel, int64_t blocks, void **args) {
  if (blocks < 1) blocks = 1;
  if (blocks > INT32_MAX) blocks = INT32_MAX;
  return (int)cudaLaunchKernel(kernel, dim3((unsigned)blocks), dim3(TCU_THREADS), args, 0, 0);
}

extern "C" int64_t tcu_grid_threads(int64_t items) {
  int64_t b = (items + TCU_THREADS - 1) / TCU_THREADS;
  return b > ((int64_t)1 << 16) ? (int64_t)1 << 16 : b;
}

extern "C" int64_t tcu_grid_blocks(int64_t items) { return items > ((int64_t)1 << 20) ? (int64_t)1 << 20 : items; }

extern "C" int tcu_run(const tcu_entry *e, const tcu_plan *p) {
  if (emulate) { e->host(p); return 0; }
  void *args[1] = {(void *)p};
  int st = tcu_launch(p->ndim == 1 ? e->k1 : e->kn, tcu_grid_threads(p->n), args);
  return st ? st : tcu_sync();
}

extern "C" int tcu_find(const tcu_entry *e, const tcu_plan *p, int64_t *found) {
  uint64_t none = ~(uint64_t)0, res = none;
  void *cell = tcu_malloc(sizeof res);
  if (!cell) return (int)cudaErrorMemoryAllocation;
  tcu_plan q = *p;
  q.base[1] = (char *)cell;
  int st = tcu_h2d(cell, &none, sizeof none);
  if (!st) st = tcu_run(e, &q);
  if (!st) st = tcu_d2h(&res, cell, sizeof res);
  tcu_free(cell, sizeof res);
  *found = res == none ? -1 : (int64_t)res;
  return st;
}

/* ---- libraries loaded with dlopen ---- */
#ifndef TCU_CUDA_HOME
#define TCU_CUDA_HOME "/usr/local/cuda"
#endif
extern "C" void *tcu_lib_sym(void *lib, const char *name) { return dlsym(lib, name); }

extern "C" int tcu_lib_load(tcu_lib *l, const char *env, const char *soname, const char *what, bool (*syms)(void *lib),
                            char *why, size_t n) {
  if (!l->state) {
    l->state = -1;
    const char *e = getenv(env);
    if (e && !strcmp(e, "none")) {
      snprintf(l->why, sizeof l->why, "%.40s is turned off (%.60s=none)", what, env);
    } else {
      char names[3][200];
      snprintf(names[0], sizeof names[0], "%s", e && *e ? e : soname);
      snprintf(names[1], sizeof names[1], "%s/lib64/%s", TCU_CUDA_HOME, soname);
      snprintf(names[2], sizeof names[2], "/usr/local/cuda/lib64/%s", soname);
      int count = e && *e ? 1 : 3;
      char first[400] = "";
      for (int i = 0; i < count && l->state < 0; i++) {
        void *lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
        if (!lib) {
          const char *de = dlerror();
          if (!first[0]) snprintf(first, sizeof first, "%.390s", de ? de : names[i]);
          continue;
        }
        if (!syms(lib)) {
          if (!first[0]) snprintf(first, sizeof first, "%.199s lacks the %.40s functions tcalc uses", names[i], what);
          dlclose(lib);
          continue;
        }
        l->lib = lib;
        snprintf(l->name, sizeof l->name, "%.199s", names[i]);
        l->state = 1;
      }
      if (l->state < 0) snprintf(l->why, sizeof l->why, "%.40s could not be loaded: %s", what, first);
    }
  }
  if (l->state < 0 && why && n) snprintf(why, n, "%s", l->why);
  return l->state > 0 ? 0 : -1;
}

/* ---- the calls the plugin takes whole: each PLUGIN row of TC_ENGINE_CALLS ---- */
#define TCU_OK_HOST(K, f)
#define TCU_OK_PLUGIN(K, f) case TC_CALL_##K: return tcu_##f##_ok(c);
#define TCU_RUN_HOST(K, f)
#define TCU_RUN_PLUGIN(K, f) case TC_CALL_##K: return tcu_##f##_run(a);
extern "C" bool tcu_call_ok(const tc_call *c) {
  switch (c->kind) {
#define X(K, cpu, how, f, ...) TCU_OK_##how(K, f)
    TC_ENGINE_CALLS(X, ~)
#undef X
  default: return false;
  }
}

extern "C" int tcu_call_run(const tcu_call *a) {
  switch (a->c->kind) {
#define X(K, cpu, how, f, ...) TCU_RUN_##how(K, f)
    TC_ENGINE_CALLS(X, ~)
#undef X
  default: return (int)cudaErrorInvalidValue;
  }
}

/* ---- the plugin's export ---- */
extern "C" __attribute__((visibility("default"))) const tcu_api tcu_api_v1;
const tcu_api tcu_api_v1 = {
  TCU_ABI,
  sizeof(tcu_api), sizeof(tcu_plan), sizeof(tcu_splan), sizeof(tcu_rplan), sizeof(tcu_mplan), sizeof(tcu_lplan),
  sizeof(tc_call), sizeof(tcu_call),
#define TCU_INIT_(ret, name, params) tcu_##name,
  TCU_API(TCU_INIT_)
#undef TCU_INIT_
};
