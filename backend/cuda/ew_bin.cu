/* CUDA binary elementwise kernels ((T, T) -> T: arithmetic, bitwise,
 * shifts, atan2) and comparisons ((T, T) -> bool), stamped per (op, dtype)
 * from backend/ew.def. */
#include "kern.cuh"

#define K_BIN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct kb_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x, const char *y) { \
      typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
      T a = LD(*TCU_CPTR(S, x)), b = LD(*TCU_CPTR(S, y)); \
      *TCU_PTR(S, o) = ST(EXPR); \
    } \
  };
#define K_CMP(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct kc_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x, const char *y) { \
      typedef C T; \
      T a = LD(*TCU_CPTR(S, x)), b = LD(*TCU_CPTR(S, y)); \
      *TCU_PTR(uint8_t, o) = (uint8_t)(EXPR); \
    } \
  };
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(K_BIN, OP, EXPR)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(K_CMP, OP, EXPR)
#include "ew_rows.cuh"

static tcu_entry bin_table[TC_OP_COUNT][TC_DT_COUNT], cmp_table[TC_OP_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_BIN(E, n, S, C, CLS, B, LD, ST, OP) bin_table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<kb_##OP##_##E, 3>();
#define E_CMP(E, n, S, C, CLS, B, LD, ST, OP) cmp_table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<kc_##OP##_##E, 3>();
#define EW_BIN(OP, CLS, EXPR) TC_FOR_##CLS(E_BIN, OP)
#define EW_CMP(OP, CLS, EXPR) TC_FOR_##CLS(E_CMP, OP)
#include "ew_rows.cuh"
}

TCU_EW_LOOKUP(tcu_bin_entry, bin_table)

TCU_EW_LOOKUP(tcu_cmp_entry, cmp_table)
