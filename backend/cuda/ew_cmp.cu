/* CUDA comparison kernels ((T, T) -> bool), stamped from backend/ew.def. */
#include "kern.cuh"

#define K_CMP(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct kc_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x, const char *y) { \
      typedef C T; \
      T a = LD(*TCU_CPTR(S, x)), b = LD(*TCU_CPTR(S, y)); \
      *TCU_PTR(uint8_t, o) = (uint8_t)(EXPR); \
    } \
  };
#define EW_BIN(OP, CLS, EXPR)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(K_CMP, OP, EXPR)
#define EW_UN(OP, CLS, EXPR)
#define EW_PRED(OP, CLS, EXPR)
#define EW_SEL(OP, CLS, EXPR)
#include "../ew.def"
#undef EW_CMP

static tcu_entry table[TC_OP_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_CMP(E, n, S, C, CLS, B, LD, ST, OP) table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<kc_##OP##_##E, 3>();
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(E_CMP, OP)
#include "../ew.def"
}

extern "C" const tcu_entry *tcu_cmp_entry(int op, int dt) {
  if (!ready) { fill(); ready = true; }
  return table[op][dt].k1 ? &table[op][dt] : NULL;
}
