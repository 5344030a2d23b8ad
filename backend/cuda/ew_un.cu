/* CUDA unary kernels (T -> T: negation, abs, bitwise not, sign, math,
 * rounding), stamped from backend/ew.def. */
#include "kern.cuh"

#define K_UN(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct ku_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x) { \
      typedef C T; typedef tc_u_##E U; (void)sizeof(U); \
      T a = LD(*TCU_CPTR(S, x)); \
      *TCU_PTR(S, o) = ST(EXPR); \
    } \
  };
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(K_UN, OP, EXPR)
#include "ew_rows.cuh"

static tcu_entry table[TC_OP_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_UN(E, n, S, C, CLS, B, LD, ST, OP) table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<ku_##OP##_##E, 2>();
#define EW_UN(OP, CLS, EXPR) TC_FOR_##CLS(E_UN, OP)
#include "ew_rows.cuh"
}

TCU_EW_LOOKUP(tcu_un_entry, table)
