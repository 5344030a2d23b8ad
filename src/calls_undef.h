/* Ends the argument macros of a TC_CALLS expansion (src/ops.def): tcalc.h
 * defines them as types for the prototypes, repl/calls.c as the bound
 * values for the calls. */
#undef A_OP
#undef A_T
#undef A_INT
#undef A_GIVEN
#undef A_NUM
#undef A_BOOL
#undef A_STR
#undef A_AXES
#undef A_DT
#undef A_DTN
#undef A_MODE
#undef A_RED
#undef A_SEED
#undef A_K
#undef A_INTS
#undef A_TS
#undef A_KW
