/* Scan combines and sort order keys, shared by the CPU engine
 * (backend/cpu/order.c) and the CUDA engine (backend/cuda/order.cu) so that
 * cumsum/cummax and the sort order mean the same bits on each.
 * Plain C17 and CUDA C++ alike (TC_HD). */
#ifndef TC_BACKEND_ORDER_H
#define TC_BACKEND_ORDER_H
#include <stdint.h>
#include <string.h>
#include "../src/kexpr.h"
#include "../src/tcalc.h"

/* ---- scans: SC_<OP>_<CLASS>(C, U, acc, v), the next running value ---- */
#define SC_ADD_INT(C, U, a, v) (C)((U)(a) + (U)(v))
#define SC_ADD_FLT(C, U, a, v) ((a) + (v))
#define SC_ADD_BOOL(C, U, a, v) (C)((a) | (v))
#define SC_MUL_INT(C, U, a, v) (C)((U)(a) * (U)(v))
#define SC_MUL_FLT(C, U, a, v) ((a) * (v))
#define SC_MUL_BOOL(C, U, a, v) (C)((a) & (v))
#define SC_MAX_INT(C, U, a, v) ((v) > (a) ? (v) : (a))
#define SC_MAX_BOOL SC_MAX_INT
#define SC_MAX_FLT(C, U, a, v) ((a) != (a) ? (a) : ((v) != (v) || (v) >= (a)) ? (v) : (a))   /* ties: the later, as NumPy */
#define SC_MIN_INT(C, U, a, v) ((v) < (a) ? (v) : (a))
#define SC_MIN_BOOL SC_MIN_INT
#define SC_MIN_FLT(C, U, a, v) ((a) != (a) ? (a) : ((v) != (v) || (v) <= (a)) ? (v) : (a))
/* unsigned integers scan as the signed ones do (wrapping in U) */
#define SC_ADD_UINT SC_ADD_INT
#define SC_MUL_UINT SC_MUL_INT
#define SC_MAX_UINT SC_MAX_INT
#define SC_MIN_UINT SC_MIN_INT
/* The scans, in the slot order of tc_scan_slot: X(OPN, ...) */
#define TC_SCANS(X, ...) X(ADD, __VA_ARGS__) X(MUL, __VA_ARGS__) X(MAX, __VA_ARGS__) X(MIN, __VA_ARGS__)
/* op's slot in TC_SCANS, or -1 when it is not a scan */
TC_HD int tc_scan_slot(int op) {
  return op == TC_OP_CUMSUM ? 0 : op == TC_OP_CUMPROD ? 1 : op == TC_OP_CUMMAX ? 2 : op == TC_OP_CUMMIN ? 3 : -1;
}

/* Whether the combine is associative on the stored bits, so that a scan
 * cut into chunks (each folded, the folds combined, each chunk rescanned
 * from its carry) gives the one-pass result exactly: wrapping integer
 * arithmetic, or/and, and max/min with their NaN and tie rules (the first
 * NaN; else the last of the largest). Float sums and products are not. */
#define SC_ASSOC_ADD_INT 1
#define SC_ASSOC_ADD_UINT 1
#define SC_ASSOC_ADD_BOOL 1
#define SC_ASSOC_ADD_FLT 0
#define SC_ASSOC_MUL_INT 1
#define SC_ASSOC_MUL_UINT 1
#define SC_ASSOC_MUL_BOOL 1
#define SC_ASSOC_MUL_FLT 0
#define SC_ASSOC_MAX_INT 1
#define SC_ASSOC_MAX_UINT 1
#define SC_ASSOC_MAX_BOOL 1
#define SC_ASSOC_MAX_FLT 1
#define SC_ASSOC_MIN_INT 1
#define SC_ASSOC_MIN_UINT 1
#define SC_ASSOC_MIN_BOOL 1
#define SC_ASSOC_MIN_FLT 1

/* ---- order keys: KEY_<CLASS>(KT, B, LD, v), an unsigned KT whose order
 * is the sort order (integers: the sign bit flipped; floats: the IEEE bits
 * made monotone, -0.0 keyed as 0.0 and every NaN as the largest key) ---- */
#define KEY_BOOL(KT, B, LD, v) ((KT)(v))
#define KEY_INT(KT, B, LD, v) ((KT)(((KT)(v) ^ ((KT)1 << ((B) - 1))) & (KT)(~(KT)0 >> (8 * sizeof(KT) - (B)))))
#define KEY_FLT(KT, B, LD, v) TC_PASTE(key_flt_, KT_OF(B))((double)LD(v))
#define KEY_UINT(KT, B, LD, v) ((KT)(v))   /* already in order: no sign bit to flip */
#define KT_OF_8 uint32_t
#define KT_OF_16 uint32_t
#define KT_OF_32 uint32_t
#define KT_OF_64 uint64_t
#define KT_OF(B) KT_OF_##B
#define TC_PASTE_(a, b) a##b
#define TC_PASTE(a, b) TC_PASTE_(a, b)

/* Without branches, so that loops of keys vectorise: the magnitude bits
 * tell zero (keyed as +0.0's key) and NaN (the largest key) apart; else
 * the sign bit set flips every bit, and clear sets it. */
TC_HD uint32_t key_flt_uint32_t(double d) {
  float f = (float)d;   /* exact: the float dtypes of 32 bits or fewer are floats */
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t mag = b & 0x7fffffffu, k = mag == 0 ? 0x80000000u : b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u);
  return mag > 0x7f800000u ? UINT32_MAX : k;
}
TC_HD uint64_t key_flt_uint64_t(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  uint64_t mag = b & 0x7fffffffffffffffull;
  uint64_t k = mag == 0 ? 0x8000000000000000ull : b ^ ((uint64_t)((int64_t)b >> 63) | 0x8000000000000000ull);
  return mag > 0x7ff0000000000000ull ? UINT64_MAX : k;
}
#endif
