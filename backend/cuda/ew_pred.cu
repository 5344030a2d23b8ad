/* CUDA predicate kernels (T -> bool) and where (bool, T, T) -> T, stamped
 * from backend/ew.def. */
#include "kern.cuh"

#define K_PRED(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct kp_##OP##_##E { \
    static TCU_HD void f(char *o, const char *x) { \
      typedef C T; \
      [[maybe_unused]] T a = LD(*TCU_CPTR(S, x)); \
      *TCU_PTR(uint8_t, o) = (uint8_t)(EXPR); \
    } \
  };
#define K_SEL(E, n, S, C, CLS, B, LD, ST, OP, EXPR) \
  struct ks_##OP##_##E { \
    static TCU_HD void f(char *o, const char *cp, const char *x, const char *y) { \
      uint8_t c = *TCU_CPTR(uint8_t, cp); \
      S a = *TCU_CPTR(S, x), b = *TCU_CPTR(S, y); \
      *TCU_PTR(S, o) = EXPR; \
    } \
  };
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(K_PRED, OP, EXPR)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(K_SEL, OP, EXPR)
#include "ew_rows.cuh"

static tcu_entry pred_table[TC_OP_COUNT][TC_DT_COUNT], sel_table[TC_OP_COUNT][TC_DT_COUNT];
static bool ready;

static void fill(void) {
#define E_PRED(E, n, S, C, CLS, B, LD, ST, OP) pred_table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<kp_##OP##_##E, 2>();
#define E_SEL(E, n, S, C, CLS, B, LD, ST, OP) sel_table[TC_OP_##OP][TC_DT_##E] = tcu_make_entry<ks_##OP##_##E, 4>();
#define EW_PRED(OP, CLS, EXPR) TC_FOR_##CLS(E_PRED, OP)
#define EW_SEL(OP, CLS, EXPR) TC_FOR_##CLS(E_SEL, OP)
#include "ew_rows.cuh"
}

TCU_EW_LOOKUP(tcu_pred_entry, pred_table)

TCU_EW_LOOKUP(tcu_sel_entry, sel_table)
