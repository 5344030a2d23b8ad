/* CUDA binary elementwise kernels ((T, T) -> T: arithmetic, bitwise,
 * shifts, atan2), stamped per (op, dtype) from backend/ew.def. */
#include "kern.cuh"

#define K_BIN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct kb_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x, const char *y) { \
      typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
      T a = LD(*TCU_CPTR(S, x)), b = LD(*TCU_CPTR(S, y)); \
      *TCU_PTR(S, o) = ST(EXPR); \
    } \
  };
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(K_BIN, OP, EXPR)
#define EW_CMP(OP, CLS, EXPR)
#define EW_UN(OP, CLS, EXPR)
#define EW_PRED(OP, CLS, EXPR)
#define EW_SEL(OP, CLS, EXPR)
#include "../ew.def"
#undef EW_BIN

static tcu_entry table[TC_OP_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_BIN(E, n, S, C, CLS, B, LD, ST, OP) table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<kb_##OP##_##E, 3>();
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(E_BIN, OP)
#include "../ew.def"
}

extern "C" const tcu_entry *tcu_bin_entry(int op, int dt) {
  if (!ready) { fill(); ready = true; }
  return table[op][dt].k1 ? &table[op][dt] : NULL;
}
