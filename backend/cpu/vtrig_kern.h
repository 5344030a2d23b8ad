/* The sine, cosine and tangent kernels of one vmath path, included by
 * vtrig.c once per path (see there for the method and its error budget).
 *
 * The includer defines VT_P (the path's name), VT_TGT (its target
 * attribute) and VT_OPS, the suffix of the lane count, types and
 * operations vtrig.c defines for it (named here as they are used): VT_W
 * lanes; VD (VT_W doubles), VU (uint64), VF (floats), VM (a mask of lanes);
 * the operations the C operators do not give on every one of those types:
 * VT_FMA(a, b, c) (a b + c rounded once), VT_FNMA(a, b, c) (c - a b),
 * VT_D(c) and VT_U(c) (a constant in every lane), VT_ASU(d) and VT_ASD(u)
 * (the same bits as the other type), VT_MAXU(u, v) (the larger, lane by
 * lane, of values below 2^63), VT_ODD(u) (the mask of u's odd lanes),
 * VT_IF(m, a, b) (a where m, else b), VT_TOD(f) and VT_TOF(d) (float <->
 * double, rounding to nearest), VT_LANE(u, l) (lane l of u). It undefines
 * VT_P, VT_TGT and VT_OPS. Everything else is + - * / and bit operations
 * lane by lane, no contraction (C17's default), so a lane's bits depend on
 * that lane's input alone, whatever the path. */
#define VT_CAT_(a, b) a##_##b
#define VT_CAT(a, b) VT_CAT_(a, b)
#define VT_N(name) VT_CAT(name, VT_P)
#define VT_O(name) VT_CAT(name, VT_OPS)
#define VT_W VT_O(vt_w)
#define VD VT_O(vt_d)
#define VU VT_O(vt_u)
#define VF VT_O(vt_f)
#define VM VT_O(vt_m)
#define VT_FMA VT_O(vt_fma)
#define VT_FNMA VT_O(vt_fnma)
#define VT_D VT_O(vt_set)
#define VT_U VT_O(vt_setu)
#define VT_ASU VT_O(vt_asu)
#define VT_ASD VT_O(vt_asd)
#define VT_MAXU VT_O(vt_maxu)
#define VT_ODD VT_O(vt_odd)
#define VT_IF VT_O(vt_if)
#define VT_TOD VT_O(vt_tod)
#define VT_TOF VT_O(vt_tof)
#define VT_LANE VT_O(vt_lane)

/* The fast reduction of ax (>= 0, at most VT_BIG): rh + rl = ax - q pi/2
 * to some 2^-120 absolute, q = rint(ax * 2/pi) (its low bits in *qb). ax -
 * q P1 is exact (both are multiples of 2^-53 and it is below 1), q P2 is
 * split exactly by FMA, and the subtraction of its high part is a TwoSum,
 * so no cancellation (ax within 2^-60 of a multiple of pi/2) loses bits. */
VT_TGT static inline VD VT_N(vt_reduce)(VD ax, VD *rl, VU *qb) {
  VD v = VT_FMA(ax, VT_D(VT_2_PI), VT_D(VT_ROUND)), q = v - VT_ROUND;
  VD r0 = VT_FNMA(q, VT_D(VT_PIO2_1), ax);
  VD t = q * VT_PIO2_2, te = VT_FMA(q, VT_D(VT_PIO2_2), -t);
  VD s = r0 - t, bb = s - r0, se = (r0 - (s - bb)) - (t + bb);
  *rl = VT_FNMA(q, VT_D(VT_PIO2_3), se - te);
  *qb = VT_ASU(v);
  return s;
}

/* cos r where (VT_BY_MASK) m is set or (VT_ALL_COS) everywhere, else sin r */
VT_TGT static inline VD VT_N(vt_pick)(int which, VM m, VD c, VD s) {
  if (which == VT_BY_MASK) return VT_IF(m, c, s);
  return which == VT_ALL_COS ? c : s;
}

/* sin r or cos r (vt_pick's choice) = *a + *t for r = rh + rl, |r| <= pi/4:
 * the leading part exact (rh; 1 - rh^2/2 with its rounding error kept in
 * the tail), the small tail (below 0.12 of the result) to a few 2^-53 of
 * itself, rl's first-order terms included. One polynomial evaluation, its
 * coefficients chosen lane by lane (VT_BY_MASK: for sin and cos, within
 * 0.82 ulp all told). For tan's sin r (VT_ALL_SIN), whose error the
 * quotient adds to cos r's, the tail's leading term takes two roundings
 * fewer: rh^3 with rh^2's rounding error, times the constant coefficient
 * in one FMA (tan within 0.83 ulp all told, where it would be 1.05 near
 * |tan| = 1). */
VT_TGT static inline void VT_N(vt_sin_or_cos)(VD rh, VD rl, int which, VM m, VD *a, VD *t) {
#define VT_PICK(c, s) VT_N(vt_pick)(which, m, c, s)
  VD z = rh * rh, ze = VT_FMA(rh, rh, -z), w = VT_FNMA(VT_D(0.5), z, VT_D(1.0));
  VD p = VT_FMA(z, VT_PICK(VT_D(VT_C5), VT_D(VT_S5)), VT_PICK(VT_D(VT_C4), VT_D(VT_S4)));
  p = VT_FMA(z, p, VT_PICK(VT_D(VT_C3), VT_D(VT_S3)));
  p = VT_FMA(z, p, VT_PICK(VT_D(VT_C2), VT_D(VT_S2)));
  p = VT_FMA(z, p, VT_PICK(VT_D(VT_C1), VT_D(VT_S1)));
  /* sin: rh + rh z p + rl w; cos: w + z^2 p + (1 - z/2 - w) - ze/2 - rh rl, w =
     1 - z/2 rounded and its rounding error exact (z/2 is) */
  VD bs = rl * w, bc = VT_FNMA(rh, rl, VT_FNMA(VT_D(0.5), ze, VT_FNMA(VT_D(0.5), z, 1.0 - w)));
  VD c0 = VT_PICK(VT_D(VT_C0), VT_D(VT_S0)), u = VT_PICK(z, rh);
  *a = VT_PICK(w, rh);
  if (which == VT_ALL_SIN) {
    VD r3 = VT_FMA(rh, z, rh * ze);
    *t = VT_FMA(r3, c0, VT_FMA(r3 * z, p, bs));
  } else {
    *t = VT_FMA(u * z, VT_FMA(z, p, c0), VT_PICK(bc, bs));
  }
#undef VT_PICK
}

/* fn (VT_SIN, VT_COS, VT_TAN) of ax = q pi/2 + rh + rl (q's low bits in
 * qb) with the sign bit sg xored in: the fast path's and the huge one's
 * last step. tan is sin/cos (or -cos/sin for odd q), each first made a
 * normalised pair, divided by a reciprocal and one correction step. */
VT_TGT static inline VD VT_N(vt_finish)(int fn, VU qb, VD rh, VD rl, VU sg) {
  VD a, t, y;
  if (fn == VT_TAN) {
    VD ac, tc;
    VM none = VT_ODD(VT_U(0));
    VT_N(vt_sin_or_cos)(rh, rl, VT_ALL_SIN, none, &a, &t);
    VT_N(vt_sin_or_cos)(rh, rl, VT_ALL_COS, none, &ac, &tc);
    VD sh = a + t, sl = (a - sh) + t, ch = ac + tc, cl = (ac - ch) + tc;
    VM odd = VT_ODD(qb);
    VD nh = VT_IF(odd, ch, sh), nl = VT_IF(odd, cl, sl), dh = VT_IF(odd, sh, ch), dl = VT_IF(odd, sl, cl);
    VD inv = 1.0 / dh, y0 = nh * inv;
    VD e = VT_FNMA(y0, dh, nh);
    y = VT_FMA(e + VT_FNMA(y0, dl, nl), inv, y0);
    sg ^= (qb & 1) << 63;
  } else {
    /* sin: sin r, cos r, -sin r, -cos r by q mod 4; cos: one quadrant on */
    VU qc = fn == VT_COS ? qb + 1 : qb;
    VT_N(vt_sin_or_cos)(rh, rl, VT_BY_MASK, VT_ODD(qc), &a, &t);
    y = a + t;
    sg ^= (qc & 2) << 62;
  }
  return VT_ASD(VT_ASU(y) ^ sg);
}

/* fn of x in f64, |x|'s bits folded into *big by their maximum: a lane
 * above VT_BIG (NaN and inf among them) gives anything, the caller redoes
 * it */
VT_TGT static inline VD VT_N(vt_fast_d)(int fn, VD x, VU *big) {
  VU sg = VT_ASU(x) & VT_U(VT_SIGN), qb;
  VD ax = VT_ASD(VT_ASU(x) ^ sg), rl;
  *big = VT_MAXU(*big, VT_ASU(ax));
  VD rh = VT_N(vt_reduce)(ax, &rl, &qb);
  return VT_N(vt_finish)(fn, qb, rh, rl, fn == VT_COS ? VT_U(0) : sg);
}

/* fn of an f32 x widened to f64, to be rounded once to f32, *big as in
 * vt_fast_d. sin and cos reduce by multiples of pi (cos by odd multiples
 * of pi/2) to |r| <= pi/2 and take one polynomial for sin r; tan reduces by
 * pi/2 and takes a rational function. Each step errs by some 2^-50 of the
 * result and the approximations by 2^-33 at most, 2^-9 of an f32 ulp.
 * x's sign needs no handling: the reductions are odd in x, and so is each
 * step (-0 stays -0). */
VT_TGT static inline VD VT_N(vt_fast_f)(int fn, VD x, VU *big) {
  VD y;
  *big = VT_MAXU(*big, VT_ASU(x) & VT_U(~VT_SIGN));
  if (fn == VT_TAN) {
    /* x = q pi/2 + r: tan x = r P/Q, or -Q/(r P) for odd q */
    VD v = VT_FMA(x, VT_D(VT_2_PI), VT_D(VT_ROUND)), q = v - VT_ROUND;
    VD r = VT_FNMA(q, VT_D(VT_PIO2_2), VT_FNMA(q, VT_D(VT_PIO2_1), x)), z = r * r;
    VD n = r * VT_FMA(z, VT_FMA(z, VT_D(VT_FT2), VT_D(VT_FT1)), VT_D(VT_FT0));
    VD d = VT_FMA(z, VT_FMA(z, VT_D(VT_FU2), VT_D(VT_FU1)), VT_D(1.0));
    VM odd = VT_ODD(VT_ASU(v));
    y = VT_IF(odd, -d, n) / VT_IF(odd, n, d);
  } else {
    /* sin: k = rint(x/pi), r = x - k pi, sin x = (-1)^k sin r; cos: k =
       rint(x/pi - 1/2), r = x - (k + 1/2) pi, cos x = (-1)^(k+1) sin r */
    VD v = VT_FMA(x, VT_D(VT_1_PI), VT_D(fn == VT_COS ? -0.5 : VT_ROUND)), k;
    if (fn == VT_COS) v += VT_ROUND;
    k = v - VT_ROUND;
    if (fn == VT_COS) k += 0.5;
    VD r = VT_FNMA(k, VT_D(2 * VT_PIO2_2), VT_FNMA(k, VT_D(2 * VT_PIO2_1), x)), z = r * r;
    VD p = VT_FMA(z, VT_D(VT_FP4), VT_D(VT_FP3));
    p = VT_FMA(z, p, VT_D(VT_FP2));
    p = VT_FMA(z, p, VT_D(VT_FP1));
    p = VT_FMA(z, p, VT_D(VT_FP0));
    y = r * VT_FMA(z, p, VT_D(1.0));
    y = VT_ASD(VT_ASU(y) ^ ((VT_ASU(v) + (fn == VT_COS)) & 1) << 63);
  }
  return y;
}

/* The kernel of fn on dtype T (double: _d, float: _f): blocks of
 * CPU_EW_BLOCK elements (a strided input gathered first), VT_W at a time, the
 * tail padded with zeros; then, where a block had lanes above VT_BIG, those
 * redone one by one: NaN for NaN and inf, vt_huge for the finite ones. */
#define VT_BEGIN(FN, SUF) VU big = VT_U(0);
#define VT_STEP(d, s, FN, SUF) VT_STEP_##SUF(FN, d, s, big)
#define VT_END(T, FN, SUF) \
  bool any = false; \
  for (int l = 0; l < VT_W; l++) any |= VT_LANE(big, l) > vt_asu_s(VT_BIG); \
  for (int64_t k = 0; any && k < n; k++) \
    if (!(fabs((double)src[k]) <= VT_BIG)) o[i0 + k] = (T)vt_huge(FN, src[k]);
#define VT_KERNEL(NAME, FN, T, SUF) \
  VT_TGT static void VT_N(NAME##_##SUF)(int64_t len, char *o_, const char *a_, int64_t sa) { \
    CPU_VM_BLOCKS(T, CPU_EW_BLOCK, VT_W, 0, VT_BEGIN, VT_STEP, VT_END, FN, SUF) \
  }
#define VT_STEP_d(FN, d, s, big) \
  do { \
    VD x_; \
    memcpy(&x_, s, sizeof x_); \
    x_ = VT_N(vt_fast_d)(FN, x_, &big); \
    memcpy(d, &x_, sizeof x_); \
  } while (0)
#define VT_STEP_f(FN, d, s, big) \
  do { \
    VF x_; \
    memcpy(&x_, s, sizeof x_); \
    x_ = VT_TOF(VT_N(vt_fast_f)(FN, VT_TOD(x_), &big)); \
    memcpy(d, &x_, sizeof x_); \
  } while (0)
VT_KERNEL(vt_sin, VT_SIN, double, d)
VT_KERNEL(vt_sin, VT_SIN, float, f)
VT_KERNEL(vt_cos, VT_COS, double, d)
VT_KERNEL(vt_cos, VT_COS, float, f)
VT_KERNEL(vt_tan, VT_TAN, double, d)
VT_KERNEL(vt_tan, VT_TAN, float, f)

/* [VT_SIN, VT_COS, VT_TAN][0 f32, 1 f64] */
static const cpu_vmath_fn VT_N(vt_table)[3][2] = {
  {VT_N(vt_sin_f), VT_N(vt_sin_d)}, {VT_N(vt_cos_f), VT_N(vt_cos_d)}, {VT_N(vt_tan_f), VT_N(vt_tan_d)}};

#undef VT_KERNEL
#undef VT_BEGIN
#undef VT_STEP
#undef VT_END
#undef VT_STEP_d
#undef VT_STEP_f
#undef VT_P
#undef VT_TGT
#undef VT_OPS
