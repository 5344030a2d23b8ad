/* CPU elementwise ops and casts: the kernels are in ew_kern.h (this
 * file's portable build of them, and ew_avx2.c's); this file picks the
 * table for the CPU's level and runs a kernel over the row plan. */
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#define EW_ISA base
#include "ew_kern.h"

/* The AVX2 build where the CPU has it (and the level is not held below). */
static const ew_tables *tables(void) {
#if EW_HAVE_AVX2
  if (cpu_float_isa() >= CPU_ISA_AVX2) return &ew_tables_avx2;
#endif
  return &ew_tables_base;
}

/* ---- running ---- */
typedef enum { FAM_NONE, FAM_BIN, FAM_CMP, FAM_UN, FAM_PRED, FAM_SEL } family;

static family family_of(tc_op op) {
  switch (tc_op_family(op)) {   /* the families of src/ops.def with elementwise kernels */
  case TC_FAM_BIN: return FAM_BIN;
  case TC_FAM_CMP: return FAM_CMP;
  case TC_FAM_UN: return FAM_UN;
  case TC_FAM_PRED: return FAM_PRED;
  case TC_FAM_SEL: return FAM_SEL;
  default: return FAM_NONE;
  }
}

/* ---- 64-bit /, //, %, rem by one divisor (a broadcast scalar) ----
 * A 64-bit division is a slow instruction the compiler cannot vectorise;
 * by a divisor d fixed for the whole row it is a multiply by a magic
 * number instead (Granlund and Montgomery): q = trunc(n / d) exactly, for
 * every n. i64: the algorithm of Hacker's Delight, 10-1, for 64 bits;
 * divisors -1, 0, 1 and INT64_MIN take the plain kernel. u64: the
 * round-up method (Granlund and Montgomery 1994, figure 4.1), for every
 * divisor but 0. Short rows take the plain kernel. */

/* The high half of a b from 32-bit halves: four 32 x 32 -> 64 multiplies
 * the compiler vectorises (a 64 x 64 -> 128 multiply has no vector form). */
static inline uint64_t mulhi_u64(uint64_t a, uint64_t b) {
  uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
  uint64_t t = ah * bl + ((al * bl) >> 32), w = (uint32_t)t + al * bh;
  return ah * bh + (t >> 32) + (w >> 32);
}

/* signed: the unsigned product less 2^64 b when a < 0, and 2^64 a when b < 0 */
static inline int64_t mulhi_i64(int64_t a, int64_t b) {
  uint64_t h = mulhi_u64((uint64_t)a, (uint64_t)b);
  h -= (a < 0 ? (uint64_t)b : 0) + (b < 0 ? (uint64_t)a : 0);
  return (int64_t)h;
}

typedef struct { int64_t d, m; int s; } i64_magic;
__extension__ typedef unsigned __int128 ew_u128;

static bool i64_magic_of(int64_t d, i64_magic *g) {
  if (d == 0 || d == 1 || d == -1 || d == INT64_MIN) return false;
  const uint64_t two63 = (uint64_t)1 << 63;
  uint64_t ad = d < 0 ? 0 - (uint64_t)d : (uint64_t)d, t = two63 + ((uint64_t)d >> 63);
  uint64_t anc = t - 1 - t % ad;   /* |nc| */
  uint64_t q1 = two63 / anc, r1 = two63 - q1 * anc, q2 = two63 / ad, r2 = two63 - q2 * ad, delta;
  int p = 63;
  do {
    p++;
    q1 *= 2; r1 *= 2;
    if (r1 >= anc) { q1++; r1 -= anc; }
    q2 *= 2; r2 *= 2;
    if (r2 >= ad) { q2++; r2 -= ad; }
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  uint64_t m = q2 + 1;
  g->d = d;
  g->m = (int64_t)(d < 0 ? 0 - m : m);
  g->s = p - 64;
  return true;
}

static inline int64_t i64_quot(int64_t n, const i64_magic *g) {
  int64_t q = mulhi_i64(g->m, n);
  if (g->d > 0 && g->m < 0) q = (int64_t)((uint64_t)q + (uint64_t)n);
  if (g->d < 0 && g->m > 0) q = (int64_t)((uint64_t)q - (uint64_t)n);
  q >>= g->s;
  return q + (int64_t)((uint64_t)q >> 63);
}

/* l = ceil(log2 d), m = floor(2^64 (2^l - d) / d) + 1 (below 2^64), and with
 * t = the high half of m n: q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0). */
typedef struct { uint64_t m; int s1, s2; } u64_magic;

static bool u64_magic_of(uint64_t d, u64_magic *g) {
  if (d == 0) return false;
  int l = d == 1 ? 0 : 64 - __builtin_clzll(d - 1);
  g->m = (uint64_t)(((((ew_u128)1 << l) - d) << 64) / d + 1);
  g->s1 = l < 1 ? l : 1;
  g->s2 = l > 1 ? l - 1 : 0;
  return true;
}

static inline uint64_t u64_quot(uint64_t n, const u64_magic *g) {
  uint64_t t = mulhi_u64(g->m, n);
  return (t + ((n - t) >> g->s1)) >> g->s2;
}

/* what each op makes of n, the quotient q and the remainder r (unsigned:
 * floor is trunc, and mod is rem) */
#define DIVBY_I64_DIV(n, q, r, d) (q)
#define DIVBY_I64_REM(n, q, r, d) (r)
#define DIVBY_I64_FLOOR_DIV(n, q, r, d) TC_FLOOR_ADJ(q, (r) != 0, (n) < 0, (d) < 0)
#define DIVBY_I64_MOD(n, q, r, d) ((r) + ((((r) != 0) & (((r) < 0) != ((d) < 0))) ? (d) : 0))
#define DIVBY_U64_DIV(n, q, r, d) (q)
#define DIVBY_U64_REM(n, q, r, d) (r)
#define DIVBY_U64_FLOOR_DIV(n, q, r, d) (q)
#define DIVBY_U64_MOD(n, q, r, d) (r)
#define DIVBY_OPS(X, E, T, M) X(E, T, M, DIV) X(E, T, M, REM) X(E, T, M, FLOOR_DIV) X(E, T, M, MOD)
#define DIVBY_TYPES(X) DIVBY_OPS(X, I64, int64_t, i64) DIVBY_OPS(X, U64, uint64_t, u64)
#define DIVBY_KERNEL(E, T, M, OP) \
  static void divby_##E##_##OP(int64_t len, char *o_, const char *a_, int64_t sa, const char *b_, int64_t sb) { \
    M##_magic g; \
    T d; \
    memcpy(&d, b_, sizeof d); \
    if (sb != 0 || len < 64 || !M##_magic_of(d, &g)) { \
      ((ew_bin_fn)tables()->ew[TC_OP_##OP][TC_DT_##E])(len, o_, a_, sa, b_, sb); \
      return; \
    } \
    divby_rows_##E##_##OP(len, (T *)(void *)o_, (const T *)(const void *)a_, sa, d, g); \
  }
#define DIVBY_ROWS(E, T, M, OP) \
  static inline T divby_one_##E##_##OP(T n, T d, const M##_magic *g) { \
    T q = M##_quot(n, g), r = (T)((uint64_t)n - (uint64_t)q * (uint64_t)d); \
    (void)r; \
    return DIVBY_##E##_##OP(n, q, r, d); \
  } \
  CPU_CLONES static void divby_rows_##E##_##OP(int64_t len, T *o, const T *a, int64_t sa, T d, M##_magic g) { \
    if (sa == 1) { for (int64_t i = 0; i < len; i++) o[i] = divby_one_##E##_##OP(a[i], d, &g); } /* vectorised */ \
    else { for (int64_t i = 0; i < len; i++) o[i] = divby_one_##E##_##OP(a[i * sa], d, &g); } \
  }
DIVBY_TYPES(DIVBY_ROWS)
DIVBY_TYPES(DIVBY_KERNEL)

/* Math functions on f32 and f64 come from vmath.c (SLEEF) instead; 64-bit
 * division by a broadcast divisor from the kernels above. */
static ew_any_fn ew_kernel(tc_op op, tc_dtype dt) {
  if (family_of(op) == FAM_NONE) return NULL;
  ew_any_fn k = tables()->ew[op][dt];
  if (k && (dt == TC_DT_I64 || dt == TC_DT_U64)) {
#define DIVBY_CASE(E, T, M, OP) if (dt == TC_DT_##E && op == TC_OP_##OP) return (ew_any_fn)divby_##E##_##OP;
    DIVBY_TYPES(DIVBY_CASE)
#undef DIVBY_CASE
  }
  cpu_vmath_bin_fn v2 = k ? cpu_vmath_bin_kernel(op, dt) : NULL;
  if (v2) return (ew_any_fn)v2;
  cpu_vmath_fn v = k ? cpu_vmath_kernel(op, dt) : NULL;
  return v ? (ew_any_fn)v : k;
}

bool cpu_supports_ew(const tc_call *c) { return ew_kernel(c->op, c->dtype) != NULL; }

tc_scalar_fn cpu_scalar_kernel(tc_op op, tc_dtype dt) {
  family f = family_of(op);
  return f == FAM_BIN || f == FAM_CMP ? (tc_scalar_fn)ew_kernel(op, dt) : NULL;
}

/* Float to i64 at the AVX-512 level, contiguous: vcvttpd2qq, whose lanes
 * out of range (and NaN) come out as INT64_MIN, then NaN lanes set to 0
 * and lanes at or above 2^63 to INT64_MAX: tc_sat_i64's values 8 at a
 * time (the portable loop tests and converts one element at a time: 10^5
 * f64 took 55 us on 2 threads, NumPy's unchecked astype 37). */
#if EW_HAVE_AVX2
#define SAT64_TGT __attribute__((target("avx512f,avx512dq")))
SAT64_TGT static inline __m512i sat64_lanes(__m512d v) {
  __m512i r = _mm512_cvttpd_epi64(v);
  r = _mm512_mask_mov_epi64(r, _mm512_cmp_pd_mask(v, _mm512_set1_pd(9223372036854775808.0), _CMP_GE_OQ),
                            _mm512_set1_epi64(INT64_MAX));
  return _mm512_maskz_mov_epi64(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), r);
}
#define SAT64_KERNEL(SE, ST, LOAD) \
  SAT64_TGT static void kx512_##SE##_I64(int64_t len, char *o_, const char *a_, int64_t sa) { \
    if (sa != 1) { tables()->cast[TC_DT_##SE][TC_DT_I64](len, o_, a_, sa); return; } \
    const ST *a = (const ST *)(const void *)a_; \
    int64_t *o = (int64_t *)(void *)o_, i = 0; \
    for (; i + 8 <= len; i += 8) _mm512_storeu_si512(o + i, sat64_lanes(LOAD(0xff, a + i))); \
    if (i < len) { \
      __mmask8 m = (__mmask8)((1u << (len - i)) - 1); \
      _mm512_mask_storeu_epi64(o + i, m, sat64_lanes(LOAD(m, a + i))); \
    } \
  }
#define SAT64_LOAD_F64(m, p) _mm512_maskz_loadu_pd((m), (p))
#define SAT64_LOAD_F32(m, p) _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)(m), (p))))
SAT64_KERNEL(F64, double, SAT64_LOAD_F64)
SAT64_KERNEL(F32, float, SAT64_LOAD_F32)
#endif

/* f32 <-> f16 with F16C, 8 at a time, contiguous: vcvtps2ph rounds to
 * nearest even as tc_f32_to_f16 does (subnormals, overflow to inf), and
 * NaN lanes are then made its quiet NaN (the sign kept, the payload
 * dropped, where the instruction keeps the payload's top bits); vcvtph2ps
 * is exact and quiets a NaN keeping its payload, as tc_f16_to_f32. The
 * portable loops round in software one element at a time: 10^5 f32 to f16
 * took 228 us, NumPy's astype 148. */
#if EW_HAVE_AVX2
#define F16C_TGT __attribute__((target("avx2,f16c")))
F16C_TGT static inline __m128i f16c_from_f32(__m256 v) {
  __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  __m256i q = _mm256_or_si256(_mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(INT32_MIN)), 16),
                              _mm256_set1_epi32(0x7e00));
  /* the NaN lanes' 16-bit values, packed from 32-bit lanes (each below 2^16) */
  __m128i qn = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  __m128i m = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
  return _mm_blendv_epi8(h, qn, m);
}
F16C_TGT static void kxf16c_F32_F16(int64_t len, char *o_, const char *a_, int64_t sa) {
  if (sa != 1) { tables()->cast[TC_DT_F32][TC_DT_F16](len, o_, a_, sa); return; }
  const float *a = (const float *)(const void *)a_;
  uint16_t *o = (uint16_t *)(void *)o_;
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) _mm_storeu_si128((__m128i *)(void *)(o + i), f16c_from_f32(_mm256_loadu_ps(a + i)));
  if (i < len) {
    float t[8] = {0};
    uint16_t r[8];
    memcpy(t, a + i, (size_t)(len - i) * sizeof *t);
    _mm_storeu_si128((__m128i *)(void *)r, f16c_from_f32(_mm256_loadu_ps(t)));
    memcpy(o + i, r, (size_t)(len - i) * sizeof *r);
  }
}
F16C_TGT static void kxf16c_F16_F32(int64_t len, char *o_, const char *a_, int64_t sa) {
  if (sa != 1) { tables()->cast[TC_DT_F16][TC_DT_F32](len, o_, a_, sa); return; }
  const uint16_t *a = (const uint16_t *)(const void *)a_;
  float *o = (float *)(void *)o_;
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(a + i))));
  if (i < len) {
    uint16_t t[8] = {0};
    float r[8];
    memcpy(t, a + i, (size_t)(len - i) * sizeof *t);
    _mm256_storeu_ps(r, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)t)));
    memcpy(o + i, r, (size_t)(len - i) * sizeof *r);
  }
}
/* F16C is not part of the levels' tests (cpu_matmul_isa): asked once */
static bool has_f16c(void) {
  static int has = -1;
  if (has < 0) {
    unsigned a, b, c, d;
    has = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
  }
  return has;
}
#endif

/* f32 to bf16, contiguous: round to nearest even on the dropped 16 bits
 * (a carry into the exponent is the right rounding, inf included; bf16's
 * exponent is f32's, so subnormals round alike), and NaN to the quiet NaN
 * tc_round_half gives (the sign kept, the payload dropped), written
 * without branches so that it vectorises: the cast through double took
 * 118 us for 10^5 elements. */
static void kx_f32_bf16(int64_t len, char *o_, const char *a_, int64_t sa) {
  if (sa != 1) { tables()->cast[TC_DT_F32][TC_DT_BF16](len, o_, a_, sa); return; }
  const uint32_t *restrict a = (const uint32_t *)(const void *)a_;
  uint16_t *restrict o = (uint16_t *)(void *)o_;
  for (int64_t i = 0; i < len; i++) {
    uint32_t u = a[i], r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    o[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? ((u >> 16) & 0x8000u) | 0x7fc0u : r);
  }
}

/* The cast kernel from one dtype to another at the CPU's level. */
static ew_un_fn cast_kernel(tc_dtype from, tc_dtype to) {
  if (from == TC_DT_F32 && to == TC_DT_BF16) return kx_f32_bf16;
#if EW_HAVE_AVX2
  if (to == TC_DT_I64 && (from == TC_DT_F64 || from == TC_DT_F32) && cpu_float_isa() >= CPU_ISA_AVX512)
    return from == TC_DT_F64 ? kx512_F64_I64 : kx512_F32_I64;
  if (cpu_float_isa() >= CPU_ISA_AVX2 && has_f16c()) {
    if (from == TC_DT_F32 && to == TC_DT_F16) return kxf16c_F32_F16;
    if (from == TC_DT_F16 && to == TC_DT_F32) return kxf16c_F16_F32;
  }
#endif
  return tables()->cast[from][to];
}

tc_cast_fn cpu_scalar_cast(tc_dtype from, tc_dtype to) { return cast_kernel(from, to); }

bool cpu_supports_cast(const tc_call *c) { return cast_kernel(c->dtype, c->out->dtype) != NULL; }

void cpu_f32_to_f16(int64_t n, char *out, const char *a) { cast_kernel(TC_DT_F32, TC_DT_F16)(n, out, a, 1); }
void cpu_f16_to_f32(int64_t n, char *out, const char *a) { cast_kernel(TC_DT_F16, TC_DT_F32)(n, out, a, 1); }

/* cvt[i]: the cast of input i to the kernel's dtype, when it has another
 * dtype (binary and unary families); size: each operand's element size. */
typedef struct {
  family fam;
  ew_any_fn fn;
  ew_un_fn cvt[CPU_MAX_OPS - 1];
  ew_un_fn ocvt;   /* the kernel writes f32 into a buffer, which this casts to the output (f16_through_f32) */
  bool any_cvt;
  int nop;
  size_t size[CPU_MAX_OPS];
} ew_ctx;

static void ew_call(const ew_ctx *ctx, int64_t n, char *const *p, const int64_t *s) {
  switch (ctx->fam) {
  case FAM_BIN: case FAM_CMP: ((ew_bin_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2]); break;
  case FAM_UN: case FAM_PRED: ((ew_un_fn)ctx->fn)(n, p[0], p[1], s[1]); break;
  case FAM_SEL: ((ew_sel_fn)ctx->fn)(n, p[0], p[1], s[1], p[2], s[2], p[3], s[3]); break;
  default: break;
  }
}

/* Inputs of another dtype are converted a block at a time into a buffer
 * (with the cast kernels, so the values are those of a converted copy); a
 * broadcast (stride 0) input is converted once. */
static int ew_row(void *ctx_, int64_t pos, int64_t n, char *const *p, const int64_t *s) {
  const ew_ctx *ctx = ctx_;
  (void)pos;
  if (!ctx->any_cvt) { ew_call(ctx, n, p, s); return 0; }
  _Alignas(64) char buf[CPU_MAX_OPS - 1][CPU_EW_BLOCK * 8];
  for (int64_t j = 0; j < n; j += CPU_EW_BLOCK) {
    int64_t m = n - j < CPU_EW_BLOCK ? n - j : CPU_EW_BLOCK;
    char *q[CPU_MAX_OPS] = {0};   /* (GCC cannot see that nop entries are set) */
    int64_t qs[CPU_MAX_OPS];
    q[0] = p[0] + j * (int64_t)ctx->size[0];
    qs[0] = 1;
    for (int i = 1; i < ctx->nop; i++) {
      ew_un_fn cv = ctx->cvt[i - 1];
      char *src = p[i] + j * s[i] * (int64_t)ctx->size[i];
      if (!cv) { q[i] = src; qs[i] = s[i]; continue; }
      cv(s[i] == 0 ? 1 : m, buf[i - 1], src, s[i]);
      q[i] = buf[i - 1];
      qs[i] = s[i] == 0 ? 0 : 1;
    }
    if (ctx->ocvt) {
      _Alignas(64) float ob[CPU_EW_BLOCK];
      char *o = q[0];
      q[0] = (char *)ob;
      ew_call(ctx, m, q, qs);
      ctx->ocvt(m, o, (const char *)ob, 1);
    } else {
      ew_call(ctx, m, q, qs);
    }
  }
  return 0;
}

/* a transcendental function's elements per task (see run_plan) */
#define EW_MATH_MIN 1536
static int run_plan(tc_call *c, ew_ctx *ctx, tc_err *err) {
  if (c->out->ndim == 0 || tc_numel(c->out) == 1) {   /* one element (a scalar loop's statement): no plan to make */
    char *p[CPU_MAX_OPS];
    int64_t s[CPU_MAX_OPS] = {0};
    ctx->nop = c->nin + 1;
    for (int k = 0; k < ctx->nop; k++) {
      const tc_tensor *t = k ? c->in[k - 1] : c->out;
      p[k] = (char *)tc_tensor_data(t);
      ctx->size[k] = tc_dtype_size(t->dtype);
    }
    return ew_row(ctx, 0, 1, p, s);
  }
  cpu_plan plan;
  cpu_plan_init(&plan, c->out, c->nin, c->in);
  ctx->nop = plan.nop;
  for (int k = 0; k < plan.nop; k++) ctx->size[k] = plan.esize[k];
  plan.tiles = plan.tbuf = true;
  /* elements per task: 2^15 (some 10 us of adds), and EW_MATH_MIN
   * for a transcendental function (one with a parity tolerance, 10 to 50
   * times an add per element); with the pool's workers spinning between
   * jobs, a task this size is worth a thread (cpu_even_min evens it out). */
  int64_t n = tc_numel(c->out), min = tc_op_tolerance(c->op, c->dtype).ulps > 0 ? EW_MATH_MIN : CPU_PAR_MIN / 2;
  int rc = cpu_plan_run_par(&plan, n, cpu_even_min(n, min), ew_row, ctx);
  return rc < 0 ? cpu_interrupted(err) : 0;
}

/* An f16 op whose results are exact (no parity tolerance: + - * /, rem,
 * floor_div, mod, maximum, minimum, sqrt, rounding, comparisons, ...) on
 * f16 inputs, with F16C: the f32 kernel between F16C conversions a block
 * at a time. The f16 kernel computes the same expression in f32 and rounds
 * it with tc_f32_to_f16, so the bits are the same; its software
 * conversions made 10^5 f16 + f16 some 20 times slower than f32 + f32.
 * Whether the op and the CPU allow it (the inputs are seen to below): */
static ew_any_fn f16_through_f32(const tc_call *c, family fam) {
#if EW_HAVE_AVX2
  if (c->dtype != TC_DT_F16 || fam == FAM_SEL || cpu_float_isa() < CPU_ISA_AVX2 || !has_f16c() ||
      tc_op_tolerance(c->op, TC_DT_F16).ulps || tc_op_tolerance(c->op, TC_DT_F16).sum)
    return NULL;
  return ew_kernel(c->op, TC_DT_F32);
#else
  (void)c;
  (void)fam;
  return NULL;
#endif
}

/* Runs c by f16_through_f32's f32 kernel f when every input is f16 or one
 * element of another dtype (a weak literal: h * 2), which is made f16
 * first with the cast the f16 kernel's inputs get (h * 2 of 10^5 took
 * 318 us, h * f16(2) 19); 1 where an input is neither (or its copy could
 * not be made), for the portable path. */
static int run_f16_through_f32(tc_call *c, ew_ctx *ctx, ew_any_fn f, tc_err *err) {
#if EW_HAVE_AVX2
  tc_call h = *c;
  tc_tensor *own[CPU_MAX_OPS - 1] = {0}, view[CPU_MAX_OPS - 1];
  bool ok = true;
  for (int i = 0; i < c->nin && ok; i++) {
    const tc_tensor *x = c->in[i];
    if (x->dtype == TC_DT_F16) continue;
    bool one = true;   /* one element, broadcast (every dim of more than one has stride 0) */
    for (int d = 0; d < x->ndim; d++) one = one && (x->shape[d] == 1 || x->strides[d] == 0);
    ew_un_fn cv = one ? cast_kernel(x->dtype, TC_DT_F16) : NULL;
    own[i] = cv ? tc_tensor_new(TC_DT_F16, 0, NULL, err) : NULL;
    ok = own[i] != NULL;
    if (ok) {
      cv(1, tc_tensor_data(own[i]), tc_tensor_data(x), 1);
      view[i] = *x;   /* x's shape and strides over the f16 element */
      view[i].dtype = TC_DT_F16;
      view[i].storage = own[i]->storage;
      view[i].offset = own[i]->offset;
      h.in[i] = &view[i];
    }
  }
  int rc = 1;
  if (ok) {
    ctx->fn = f;
    for (int i = 0; i < c->nin; i++) ctx->cvt[i] = kxf16c_F16_F32;
    ctx->any_cvt = true;
    ctx->ocvt = ctx->fam == FAM_BIN || ctx->fam == FAM_UN ? kxf16c_F32_F16 : NULL;
    rc = run_plan(&h, ctx, err);
  } else {
    tc_err_clear(err);   /* a refused scalar copy only means the portable path */
  }
  for (int i = 0; i < c->nin; i++) tc_tensor_free(own[i]);
  return rc;
#else
  (void)c;
  (void)ctx;
  (void)f;
  (void)err;
  return 1;
#endif
}

int cpu_run_ew(tc_call *c, tc_err *err) {
  ew_ctx ctx = {.fam = family_of(c->op), .fn = ew_kernel(c->op, c->dtype)};
  if (!ctx.fn)
    return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->dtype, "not supported for %s on cpu", tc_dtype_name(c->dtype));
  ew_any_fn f32 = f16_through_f32(c, ctx.fam);
  if (f32) {
    int rc = run_f16_through_f32(c, &ctx, f32, err);
    if (rc != 1) return rc;
  }
  for (int i = 0; i < c->nin && ctx.fam != FAM_SEL; i++)
    if (c->in[i]->dtype != c->dtype) {
      ctx.cvt[i] = cast_kernel(c->in[i]->dtype, c->dtype);
      if (!ctx.cvt[i]) return tc_err_set(err, TC_E_DTYPE, (int)c->op, (int)c->in[i]->dtype, "no conversion on cpu");
      ctx.any_cvt = true;
    }
  return run_plan(c, &ctx, err);
}

int cpu_run_cast(tc_call *c, tc_err *err) {
  const ew_tables *t = tables();
  ew_un_fn fn = c->dtype == c->out->dtype ? t->copy[c->dtype] : cast_kernel(c->dtype, c->out->dtype);
  ew_ctx ctx = {.fam = FAM_UN, .fn = (ew_any_fn)fn};
  return run_plan(c, &ctx, err);
}
