/* backend/ew.def with only the families the includer defined stamped
 * (EW_BIN, EW_CMP, EW_UN, EW_PRED, EW_SEL); the others expand to nothing.
 * Included once for the kernels and once for the table of each family
 * file (ew_bin.cu, ew_un.cu, ew_pred.cu). */
#ifndef EW_BIN
#define EW_BIN(OP, CLS, EXPR)
#endif
#ifndef EW_CMP
#define EW_CMP(OP, CLS, EXPR)
#endif
#ifndef EW_UN
#define EW_UN(OP, CLS, EXPR)
#endif
#ifndef EW_PRED
#define EW_PRED(OP, CLS, EXPR)
#endif
#ifndef EW_SEL
#define EW_SEL(OP, CLS, EXPR)
#endif
#include "../ew.def"
#undef EW_BIN
#undef EW_CMP
#undef EW_UN
#undef EW_PRED
#undef EW_SEL
