/* CUDA casts: all 81 (from, to) dtype pairs, with the conversion rules of
 * SPEC 3.3 from src/kexpr.h (the same expressions the CPU uses). A cast to
 * the same dtype is the strided copy that makes views contiguous. */
#include "kern.cuh"

#define K_CAST(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, sn, SS, SC, SCLS, SB, SLD, SST) \
  struct kx_##SE##_##DE { \
    static TCU_HD void f(char *o, const char *x) { \
      *TCU_PTR(DS, o) = TC_CVT_##SCLS##_##DCLS(*TCU_CPTR(SS, x), SLD, DE, DS, DB); \
    } \
  };
TC_DTYPE_PAIRS(K_CAST)

static tcu_entry table[TC_DT_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_CAST(DE, dn, DS, DC, DCLS, DB, DLD, DST, SE, ...) table[TC_DT_##SE][TC_DT_##DE] = tcu_make_entry<kx_##SE##_##DE, 2>();
  TC_DTYPE_PAIRS(E_CAST)
}

extern "C" const tcu_entry *tcu_cast_entry(int from, int to) {
  if (!ready) { fill(); ready = true; }
  return table[from][to].k1 ? &table[from][to] : NULL;
}
