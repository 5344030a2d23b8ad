/* The elementwise kernels (ew_kern.h) built for AVX2: the Makefile
 * compiles this file with -mavx2 on x86-64; ew.c uses its table only on a
 * CPU with AVX2. Elsewhere it is empty. */
#include "ew_kern_types.h"
#if EW_HAVE_AVX2 && defined(__AVX2__)
#define EW_ISA avx2
#include "ew_kern.h"
#elif EW_HAVE_AVX2
#error "backend/cpu/ew_avx2.c must be compiled with -mavx2 (see the Makefile)"
#endif
