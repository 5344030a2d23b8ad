/* The kernel types and tables of backend/cpu/ew_kern.h, one set per
 * instruction-set build (ew.c, ew_avx2.c). */
#ifndef TC_CPU_EW_KERN_TYPES_H
#define TC_CPU_EW_KERN_TYPES_H
#include "cpu.h"

typedef void (*ew_bin_fn)(int64_t, char *, const char *, int64_t, const char *, int64_t);
typedef void (*ew_un_fn)(int64_t, char *, const char *, int64_t);
typedef void (*ew_sel_fn)(int64_t, char *, const char *, int64_t, const char *, int64_t, const char *, int64_t);
typedef void (*ew_any_fn)(void);   /* stored type; called through its family's type */

typedef struct {
  const ew_any_fn (*ew)[TC_DT_COUNT];   /* [op][dtype] */
  const ew_un_fn (*cast)[TC_DT_COUNT];  /* [from][to] */
  const ew_un_fn *copy;                 /* [dtype] */
} ew_tables;

extern const ew_tables ew_tables_base;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EW_HAVE_AVX2 1
extern const ew_tables ew_tables_avx2;
#else
#define EW_HAVE_AVX2 0
#endif
#endif
