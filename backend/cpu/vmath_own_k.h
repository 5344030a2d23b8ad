/* The bodies of vmath_own.c's kernels, written once over a few vector
 * operations (v_*) and included three times: for AVX-512 (VD: 8 doubles),
 * AVX2 + FMA (4 doubles) and one double (the FMA and base paths).
 * Every operation is exact or rounded once by IEEE rules, so both builds
 * give the same bits. K(name) is this build's name for a kernel (VD, VM,
 * VI, K, OWN_FN and OWN_PRE are the includer's, undefined at the end); each
 * takes x and returns the result, setting *out for the lanes (x too large,
 * NaN, ...) that own_slow_* in vmath_own.c computes instead. */

/* 2^(k + b - 1023) and 2^(-k + b - 1023) for k the integer in kd's low
 * bits (kd = k + 1.5 * 2^52), k + b and -k + b within [1, 2046] */
OWN_FN VD K(pow2)(VD kd, int64_t b) { return v_from_bits(v_iadd(v_ishl52(v_bits(kd)), v_iset((uint64_t)b << 52))); }
OWN_FN VD K(pow2neg)(VD kd, int64_t b) { return v_from_bits(v_isub(v_iset((uint64_t)b << 52), v_ishl52(v_bits(kd)))); }

/* e^t = s + s p, e^t - 1 = s p + (s - 1), s = 2^k, for |t| < 700: k the
 * nearest integer to t / ln 2, r = t - k ln 2 (within ln 2 / 2), p = e^r - 1
 * within 2^-31 of it (Q relatively 2^-28.4: an f32 kernel's accuracy). */
OWN_FN VD K(em1_f)(VD t, VD *s) {
  VD kd = v_fma(t, v_set(0x1.71547652b82fep0), v_set(0x1.8p52)), k = v_sub(kd, v_set(0x1.8p52));
  VD r = v_fma(k, v_set(-0x1.62e42fefa39efp-1), t);
  VD q = v_fma(v_fma(v_fma(v_fma(v_fma(v_set(1.9857895290490445423e-4), r, v_set(1.3933856105921709957e-3)), r,
                                   v_set(8.333361031494303692e-3)), r, v_set(4.1666463196783279218e-2)), r,
                     v_set(1.6666666530028060088e-1)), r, v_set(5.0000000136125652083e-1));
  *s = K(pow2)(kd, 1023);
  return v_fma(v_mul(r, r), q, r);
}

OWN_FN VD K(expm1_f)(VD x, VM *out) {
  *out = v_not_lt(v_abs(x), v_set(89));
  VD s, p = K(em1_f)(x, &s);
  return v_copysign(v_fma(s, p, v_sub(s, v_set(1))), x);   /* -0 too */
}

/* tanh x = m / (m + 2), m = e^2x - 1: m + 2 lies in (1, inf), and m is
 * accurate near 0, so no cancellation on either side of 0. The odd
 * functions take x's sign at the end, for tanh(-0) = -0. */
OWN_FN VD K(tanh_f)(VD x, VM *out) {
  *out = v_not_lt(v_abs(x), v_set(9.5));
  VD s, p = K(em1_f)(v_add(x, x), &s);
  VD m = v_fma(s, p, v_sub(s, v_set(1)));
  return v_copysign(v_div(m, v_add(m, v_set(2))), x);
}

/* cosh and sinh of x = k ln 2 + r: with E = cosh r and O = sinh r,
 * cosh x = (s + s') E + (s - s') O and sinh x = (s - s') E + (s + s') O,
 * s = 2^(k-1), s' = 2^(-k-1). No division, and no cancellation: for
 * k = 0, s - s' is 0 exactly and sinh x is O. */
OWN_FN VD K(coshsinh_f)(VD x, bool sinh) {
  VD kd = v_fma(x, v_set(0x1.71547652b82fep0), v_set(0x1.8p52)), k = v_sub(kd, v_set(0x1.8p52));
  VD r = v_fma(k, v_set(-0x1.62e42fefa39efp-1), x), r2 = v_mul(r, r);
  VD e = v_fma(r2, v_fma(r2, v_fma(r2, v_set(1.3933737907230461041e-3), v_set(4.1666464230428478727e-2)),
                         v_set(5.0000000135158145647e-1)), v_set(1));
  VD o = v_fma(v_mul(r, r2), v_fma(r2, v_fma(r2, v_set(1.9891104095695478793e-4), v_set(8.3333108294808802779e-3)),
                                   v_set(1.6666666681707069959e-1)), r);
  VD s = K(pow2)(kd, 1022), s1 = K(pow2neg)(kd, 1022);
  VD sum = v_add(s, s1), dif = v_sub(s, s1);
  return sinh ? v_fma(dif, e, v_mul(sum, o)) : v_fma(sum, e, v_mul(dif, o));
}
OWN_FN VD K(cosh_f)(VD x, VM *out) {
  *out = v_not_lt(v_abs(x), v_set(100));
  return K(coshsinh_f)(x, false);
}
OWN_FN VD K(sinh_f)(VD x, VM *out) {
  *out = v_not_lt(v_abs(x), v_set(100));
  return v_copysign(K(coshsinh_f)(x, true), x);
}

/* cbrt |x| = 2^q c(rr) P(m): |x| = 2^e m, m in [1, 2), e = 3q + rr; c(rr)
 * = 2^(rr/3) through the quadratic that meets it at 0, 1, 2; P(m) = cbrt m
 * within 2^-28 (degree 8 in m - 1.5). Every f32 is normal as a double. */
OWN_FN VD K(cbrt_f)(VD x, VM *out) {
  VD a = v_abs(x);
  *out = v_mor(v_not_lt(a, v_set(INFINITY)), v_eq(a, v_set(0)));
  VD e = v_getexp(a), m = v_sub(v_getmant(a), v_set(1.5));
  /* (e - 1) / 3 is q, or a third off it */
  VD q = v_sub(v_add(v_fma(e, v_set(1.0 / 3), v_set(-1.0 / 3)), v_set(0x1.8p52)), v_set(0x1.8p52));
  VD rr = v_fma(q, v_set(-3), e);
  VD c = v_fma(rr, v_fma(rr, v_set(0.033779476089226572609), v_set(0.22614157380564659216)), v_set(1));
  VD p = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(-9.1074676623476675592e-4), m,
                                                         v_set(1.5314908397686346874e-3)), m,
                                                   v_set(-2.3027065274236675088e-3)), m, v_set(4.4986722696500625864e-3)),
                                       m, v_set(-9.3114646159346512155e-3)), m, v_set(2.0940280473647914975e-2)), m,
                           v_set(-5.6528850036756878976e-2)), m, v_set(2.5438087511332240986e-1)), m,
                 v_set(1.1447142409232542399));
  return v_copysign(v_scalef(v_mul(c, p), q), x);
}

/* x^y = 2^t, t = y log2 x, for x > 0: log2 x = e + u P(u^2), x = 2^e m, m
 * in [0.75, 1.5), u = (m - 1) / (m + 1) (P within 2^-42); 2^t = 2^k (1 + f
 * Q(f)), k = round(t), f = t - k exactly (Q within 2^-32). t is within
 * 2^-45 of y log2 x while 2^t is finite in f32 (|t| < 150), so the f64
 * result is within 2^-31 of x^y. x <= 0, NaN, the infinities and the
 * exponents 2, -1 and 0.5 (which pow rounds correctly) go to
 * own_slow_pow_f. */
OWN_FN VD K(pow_f)(VD x, VD y, VM *out) {
  VD m = v_getmant75(x), e = v_add(v_getexp(x), v_sel(v_lt(m, v_set(1)), v_set(1), v_set(0)));
  VD u = v_div(v_sub(m, v_set(1)), v_add(m, v_set(1))), w = v_mul(u, u);
  VD p = v_fma(v_fma(v_fma(v_fma(v_fma(v_set(0.29079811259567899985), w, v_set(0.3192880397353773542)), w,
                                 v_set(0.41222607937799162143)), w, v_set(0.57707775677926023248)), w,
                     v_set(0.9617966948202954578)), w, v_set(2.8853900817774280844));
  VD t = v_mul(y, v_fma(u, p, e));
  *out = v_mor(v_mor(v_not_gt(x, v_set(0)), v_not_lt(v_abs(t), v_set(1000))),
               v_mor(v_mor(v_eq(y, v_set(2)), v_eq(y, v_set(-1))), v_eq(y, v_set(0.5))));
  VD k = v_sub(v_add(t, v_set(0x1.8p52)), v_set(0x1.8p52)), f = v_sub(t, k);
  VD q = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(1.5252719625220146446e-5), f, v_set(1.5461329900435447159e-4)), f,
                                       v_set(1.3333669452295855837e-3)), f, v_set(9.6180570369954743732e-3)), f,
                           v_set(5.5504107275963250134e-2)), f, v_set(2.4022650920051753046e-1)), f,
                 v_set(6.9314718058156937398e-1));
  return v_scalef(v_fma(f, q, v_set(1)), k);
}

/* ---- f64: results carried as hi + lo where one rounding would cost
 * more than the last ulp can take ---- */
/* a + b = *h + *e exactly (Knuth's TwoSum: no order of size needed) */
OWN_FN void K(two_sum)(VD a, VD b, VD *h, VD *e) {
  VD s = v_add(a, b), bb = v_sub(s, a);
  *h = s;
  *e = v_add(v_sub(a, v_sub(s, bb)), v_sub(b, bb));
}

/* x + xl = k ln2/16 + r, r = rh + rl (x - k ln2/16 exact in r0, k's
 * product with the rest of ln2/16, up to 2^-46 for large k, and xl (small)
 * in r1), e^r = 1 + r + r^2 Q(r), *q = Q(rh); returns k + 1.5 * 2^52 (k in
 * its low bits). */
OWN_FN VD K(exp16_red)(VD x, VD xl, VD *rh, VD *rl, VD *q) {
  VD kd = v_fma(x, v_set(0x1.71547652b82fep+4), v_set(0x1.8p52)), k = v_sub(kd, v_set(0x1.8p52));
  VD r0 = v_fma(k, v_set(-0x1.62e42fefa39efp-5), x), r1 = v_fma(k, v_set(-0x1.abc9e3b39803fp-60), xl);
  *rh = v_add(r0, r1);
  *rl = v_sub(r1, v_sub(*rh, r0));
  *q = v_fma(v_fma(v_fma(v_fma(v_fma(v_set(1.9841335695051261854e-4), *rh, v_set(1.3889066678239643745e-3)), *rh,
                                 v_set(8.3333333337659723003e-3)), *rh, v_set(4.1666666663480495998e-2)), *rh,
                     v_set(1.6666666666666658209e-1)), *rh, v_set(5.0000000000000008459e-1));
  return kd;
}
/* e^x - 1 as *hi + *lo, within 2^-60 of it, for |x| < 708: e^x = 2^m T
 * e^r, m = k >> 4, T = 2^((k & 15)/16) from own_exp16 (hi and lo). The
 * parts that round (2^m T - 1, 2^m T rh) are kept exactly, the rest is
 * small. */
OWN_FN void K(expm1_dd)(VD x, VD *hi, VD *lo) {
  VD rh, rl, q, kd = K(exp16_red)(x, v_set(0), &rh, &rl, &q), r2 = v_mul(rh, rh);
  VI kb = v_bits(kd);
  VD th = v_lut16(own_exp16[0], kb), tl = v_lut16(own_exp16[1], kb);
  VD s = v_from_bits(v_iadd(v_iand(v_ishl(kb, 48), v_iset(0xfff0000000000000u)), v_iset((uint64_t)1023 << 52)));
  VD a = v_mul(s, th), h, e;
  K(two_sum)(a, v_set(-1), &h, &e);
  VD p1 = v_mul(a, rh), p1e = v_fma(a, rh, v_neg(p1));
  VD small = v_mul(s, v_fma(th, v_fma(r2, q, rl), v_fma(tl, rh, tl)));
  VD u = v_add(h, p1), w = v_add(v_add(v_add(v_sub(p1, v_sub(u, h)), e), p1e), small);
  *hi = v_add(u, w);   /* normalised: w may be r^2/2 next to u = r where k = 0 */
  *lo = v_sub(w, v_sub(*hi, u));
}

/* (nh + nl) / (dh + dl) as *qh + *ql, for dh >= 1 and nh + nl within
 * 2^-60 of what it stands for: q0 = nh / dh rounded, then the remainder
 * (exact in its first part) over dh */
OWN_FN void K(div_dd)(VD nh, VD nl, VD dh, VD dl, VD *qh, VD *ql) {
  VD inv = v_div(v_set(1), dh), q0 = v_mul(nh, inv);
  VD rem = v_add(v_fma(v_neg(q0), dh, nh), v_fma(v_neg(q0), dl, nl));
  *qh = q0;
  *ql = v_mul(rem, inv);
}

OWN_FN VD K(expm1_d)(VD x, VM *out) {
  *out = v_not_lt(v_abs(x), v_set(708));
  VD h, l;
  K(expm1_dd)(x, &h, &l);
  return v_copysign(v_add(h, l), x);   /* -0 too */
}

/* tanh |x| = m / (m + 2), m = e^2|x| - 1: m + 2 >= 2, no cancellation */
OWN_FN VD K(tanh_d)(VD x, VM *out) {
  VD a = v_abs(x), nh, nl, dh, de, qh, ql;
  *out = v_not_lt(a, v_set(22));
  K(expm1_dd)(v_add(a, a), &nh, &nl);
  K(two_sum)(nh, v_set(2), &dh, &de);
  K(div_dd)(nh, nl, dh, v_add(de, nl), &qh, &ql);
  return v_copysign(v_add(qh, ql), x);
}

/* With m = e^|x| - 1 and q = m / (m + 1) = 1 - e^-|x|: sinh |x| =
 * (m + q) / 2, two terms >= 0; cosh x = 1 + (m - q) / 2, where m - q =
 * m q is small when it cancels, and 1 + it is then exact enough. */
OWN_FN void K(mq_d)(VD a, VD *mh, VD *ml, VD *qh, VD *ql) {
  VD dh, de;
  K(expm1_dd)(a, mh, ml);
  K(two_sum)(*mh, v_set(1), &dh, &de);
  K(div_dd)(*mh, *ml, dh, v_add(de, *ml), qh, ql);
}
OWN_FN VD K(sinh_d)(VD x, VM *out) {
  VD a = v_abs(x), mh, ml, qh, ql;
  *out = v_not_lt(a, v_set(708));
  K(mq_d)(a, &mh, &ml, &qh, &ql);
  VD sh = v_add(mh, qh), sl = v_add(v_add(v_sub(qh, v_sub(sh, mh)), ml), ql);   /* mh >= qh */
  return v_copysign(v_mul(v_add(sh, sl), v_set(0.5)), x);
}
/* 2^(b - 1023) e^(x + xl) as *hi + *lo, normalised, for |x| < 708 and
 * |xl| < 2^-40: e^x = 2^m T (1 + p) (the rounding of T p is 2^-58 of the
 * sum) */
OWN_FN void K(exp_dd)(VD x, VD xl, int64_t b, VD *hi, VD *lo) {
  VD rh, rl, q, kd = K(exp16_red)(x, xl, &rh, &rl, &q);
  VD p = v_add(v_fma(v_mul(rh, rh), q, rh), rl);
  VI kb = v_bits(kd);
  VD th = v_lut16(own_exp16[0], kb), tl = v_lut16(own_exp16[1], kb);
  VD s = v_from_bits(v_iadd(v_iand(v_ishl(kb, 48), v_iset(0xfff0000000000000u)), v_iset((uint64_t)b << 52)));
  VD e0 = v_mul(s, th), e1 = v_mul(s, v_fma(th, p, tl));
  *hi = v_add(e0, e1);
  *lo = v_sub(e1, v_sub(*hi, e0));
}

/* cosh x = (E + 1/E) / 2, E = e^|x| as hi + lo, 1/E as 1/E_hi refined
 * once (E_hi the rounded sum, so that the step leaves 2^-106): no
 * cancellation, so no expm1 */
OWN_FN VD K(cosh_d)(VD x, VM *out) {
  VD a = v_abs(x), eh, el;
  *out = v_not_lt(a, v_set(708));
  K(exp_dd)(a, v_set(0), 1022, &eh, &el);   /* E / 2 */
  VD inv = v_div(v_set(0.25), eh);   /* 1 / (2E) */
  VD il = v_mul(inv, v_sub(v_fma(v_neg(eh), v_mul(inv, v_set(4)), v_set(1)), v_mul(v_mul(el, inv), v_set(4))));
  VD h = v_add(eh, inv), e = v_sub(inv, v_sub(h, eh));   /* eh >= inv */
  return v_add(h, v_add(v_add(e, el), il));
}

/* sigmoid: e = e^-|x| as hi + lo, then 1 / (1 + e) for x >= 0 and
 * e / (1 + e) below, the quotient as q0 + remainder / d */
OWN_FN VD K(sigmoid_d)(VD x, VM *out) {
  VD a = v_abs(x), eh, el, dh, de, qh, ql;
  *out = v_not_lt(a, v_set(708));
  K(exp_dd)(v_neg(a), v_set(0), 1023, &eh, &el);
  K(two_sum)(v_set(1), eh, &dh, &de);
  VM neg = v_lt(x, v_set(0));
  K(div_dd)(v_sel(neg, eh, v_set(1)), v_sel(neg, el, v_set(0)), dh, v_add(de, el), &qh, &ql);
  return v_add(qh, ql);
}

/* cbrt: y = 2^(rr/3) P(m) as for f32 but P of degree 9 (2^-30.8), then one
 * Newton step on v = m 2^rr: y + (v - y^3) / (3 y^2), with y^2 split
 * exactly so that v - y^3 is its own small value (error 2^-61 after the
 * step); 2^q and x's sign last. Zeros, subnormals, infinities and NaN go
 * to own_slow_cbrt_d. */
OWN_FN VD K(cbrt_d)(VD x, VM *out) {
  VD a = v_abs(x);
  *out = v_mor(v_not_lt(a, v_set(INFINITY)), v_lt(a, v_set(0x1p-1022)));
  VD e = v_getexp(a), g = v_getmant(a), m = v_sub(g, v_set(1.5));
  VD q = v_sub(v_add(v_fma(e, v_set(1.0 / 3), v_set(-1.0 / 3)), v_set(0x1.8p52)), v_set(0x1.8p52));
  VD rr = v_fma(q, v_set(-3), e);
  VD c = v_fma(rr, v_fma(rr, v_set(0.033779476089226572609), v_set(0.22614157380564659216)), v_set(1));
  VD p = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(5.3289090543240122634e-4), m,
                                                                v_set(-8.7569517054971089526e-4)), m,
                                                          v_set(1.2321870704564372435e-3)), m,
                                                    v_set(-2.3202342600933453973e-3)), m,
                                              v_set(4.5546799121313322064e-3)), m, v_set(-9.3087254857591894018e-3)),
                                  m, v_set(2.0936401920713996584e-2)), m, v_set(-5.6528987024761983205e-2)), m,
                      v_set(2.5438094753077528474e-1)), m, v_set(1.1447142419938782548));
  VD y = v_mul(c, p), v = v_scalef(g, rr);
  VD y2 = v_mul(y, y), y2l = v_fma(y, y, v_neg(y2));
  VD r = v_fma(v_neg(y2l), y, v_fma(v_neg(y2), y, v));
  VD y1 = v_add(y, v_div(r, v_mul(y2, v_set(3))));
  return v_copysign(v_scalef(y1, q), x);
}

/* log2 of an f32 x > 0 in f64: x = 2^e m, m in [0.75, 1.5), m c - 1 = r
 * with c from own_log2c by m's top 4 bits (c = 1 within 1/32 of 1, so that
 * the result keeps its relative accuracy near x = 1), log2 x = e - log2 c
 * + r P(r), P within 2^-34. */
OWN_FN VD K(log2_core_f)(VD x, VM *out) {
  *out = v_mor(v_not_gt(x, v_set(0)), v_not_lt(x, v_set(INFINITY)));
  VD m = v_getmant75(x), e = v_add(v_getexp(x), v_sel(v_lt(m, v_set(1)), v_set(1), v_set(0)));
  VI j = v_ishr(v_bits(m), 48);
  VD r = v_fma(m, v_lut16(own_log2c[0], j), v_set(-1));
  VD p = v_fma(v_fma(v_fma(v_fma(v_fma(v_set(-0.22260194555430708615), r, v_set(0.28849692583213958497)), r,
                                 v_set(-0.36069875560773988189)), r, v_set(0.4808985666937762971)), r,
                     v_set(-0.72134751269147963734)), r, v_set(1.4426950408612818498));
  return v_fma(r, p, v_add(v_lut16(own_log2c[1], j), e));
}
OWN_FN VD K(log2_f)(VD x, VM *out) { return K(log2_core_f)(x, out); }
OWN_FN VD K(log10_f)(VD x, VM *out) { return v_mul(K(log2_core_f)(x, out), v_set(0x1.34413509f79ffp-2)); }

/* sigmoid of an f32: e = e^-|x| by em1_f's core (2^-31), then 1 / (1 + e)
 * for x >= 0 and e / (1 + e) below, one division: within 2^-30 before
 * the rounding to f32 */
OWN_FN VD K(sigmoid_f)(VD x, VM *out) {
  VD a = v_abs(x), s;
  *out = v_not_lt(a, v_set(110));
  VD p = K(em1_f)(v_neg(a), &s), e = v_fma(s, p, s);
  return v_div(v_sel(v_lt(x, v_set(0)), e, v_set(1)), v_add(e, v_set(1)));
}

/* ---- f64 logarithms ---- */
/* x = 2^e z for normal x > 0, by x's bits u = bits(x) + 0x0008800000000000
 * (e + 1023 is u's exponent field): z in [0.734375, 1.46875), whose 16
 * intervals of equal width in z's bits (1/32 below 1, 1/16 above) are
 * told by the top 4 bits of u's significand, the eighth [0.984375,
 * 1.03125) around 1. log z = log c + log1p(r), r = z / c - 1 =
 * z invc - 1 carried exactly as *r + *rl (z invc rounded, 1 off it
 * exactly, and the product's rounding error by FMA), c the interval's
 * centre and 1 on the one around 1 (so that log x keeps its relative
 * accuracy there): |r| < 0.0316. *e is e as a double, *j the table index
 * (its low 4 bits), *inv 2^-e invc (0 for e > 1022). */
OWN_FN void K(log_red)(VD x, VD *e, VI *j, VD *r, VD *rl, VD *inv) {
  VI u = v_iadd(v_bits(x), v_iset(0x0008800000000000u)), eb = v_ishr(u, 52);
  *j = v_ishr(u, 48);
  *e = v_sub(v_from_bits(v_iadd(eb, v_iset(0x4330000000000000u))), v_set(0x1p52 + 1023));
  VD z = v_from_bits(v_iadd(v_isub(v_bits(x), v_ishl52(eb)), v_iset((uint64_t)1023 << 52)));
  VD invc = v_lut16(own_logc[0], *j), p = v_mul(z, invc);
  *inv = v_mul(invc, v_from_bits(v_isub(v_iset((uint64_t)2046 << 52), v_ishl52(eb))));   /* 2^-e invc */
  *rl = v_fms(z, invc, p);
  *r = v_sub(p, v_set(1));
}
/* log1p(r) - r = r^2 (T(r) r - 1/2), T within 2^-50.6 for |r| <= 0.0316 */
OWN_FN VD K(log_t)(VD r) {
  VD t = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(-0x1.9813e3c36ef7ap-4), r, v_set(0x1.c7cfd68390935p-4)), r,
                                             v_set(-0x1.000056a423bd6p-3)), r, v_set(0x1.24923b9cd9972p-3)), r,
                                 v_set(-0x1.5555554c289acp-3)), r, v_set(0x1.9999999a4136fp-3)), r,
                     v_set(-0x1.00000000001cbp-2)), r, v_set(0x1.555555555554bp-2));
  return v_mul(v_mul(r, r), v_fma(r, t, v_set(-0.5)));
}
/* the lanes a logarithm of x leaves to own_slow_*: x <= 0, subnormal,
 * infinite or NaN (or x >= top) */
OWN_FN VM K(log_out)(VD x, double top) { return v_mor(v_not_lt(x, v_set(top)), v_not_gt(x, v_set(0x1p-1022))); }
/* log_b x = e a + log_b c + log1p(r) b (log_b c = ch + cl: own_logc[1 + 2 f],
 * [2 + 2 f]; a = ah + al = log_b 2, b = bh + bl = log_b e): ah and ch are
 * multiples of 2^-42, so that w = e ah + ch is exact, and where c != 1 or
 * e != 0, |w| > |r b|: hi = w + r bh rounded once, whose error is kept,
 * the rest small. With ul (log1p: x is 1 + x' rounded, ul what that
 * left), ul / x = ul 2^-e invc / (1 + r) is added. */
OWN_FN VD K(log_b)(VD x, VD ul, bool p1, int f, double ah, double al, double bh, double bl) {
  VD e, r, rl, inv;
  VI j;
  K(log_red)(x, &e, &j, &r, &rl, &inv);
  VD ch = v_lut16(own_logc[1 + 2 * f], j), cl = v_lut16(own_logc[2 + 2 * f], j);
  VD w = ah == 1 ? v_add(e, ch) : v_fma(e, v_set(ah), ch);
  VD t = v_add(K(log_t)(r), v_fma(rl, v_mul(r, r), v_fnma(rl, r, rl))), rb = r, lo = v_add(cl, v_mul(e, v_set(al)));
  if (bh != 1) {
    rb = v_mul(r, v_set(bh));
    lo = v_add(lo, v_fma(r, v_set(bl), v_fms(r, v_set(bh), rb)));
    t = v_mul(t, v_set(bh));
  }
  VD hi = v_add(w, rb);
  lo = v_add(v_sub(rb, v_sub(hi, w)), lo);
  if (p1) {   /* |hi| >= |c1| (or hi = 0), and hi + c1 is kept exactly too */
    VD c1 = v_mul(ul, inv), h1 = v_add(hi, c1);
    lo = v_add(lo, v_fnma(c1, r, v_sub(c1, v_sub(h1, hi))));
    hi = h1;
  }
  return v_add(hi, v_add(lo, t));
}
OWN_FN VD K(log_d)(VD x, VM *out) {
  *out = K(log_out)(x, INFINITY);
  return K(log_b)(x, x, false, 0, 0x1.62e42fefa3800p-1, 0x1.ef35793c76730p-45, 1, 0);
}
OWN_FN VD K(log2_d)(VD x, VM *out) {
  *out = K(log_out)(x, INFINITY);
  return K(log_b)(x, x, false, 1, 1, 0, 0x1.71547652b82fep+0, 0x1.777d0ffda0d24p-56);
}
OWN_FN VD K(log10_d)(VD x, VM *out) {
  *out = K(log_out)(x, INFINITY);
  return K(log_b)(x, x, false, 2, 0x1.34413509f7800p-2, 0x1.fef311f12b358p-46, 0x1.bcb7b1526e50ep-2,
                  0x1.95355baaafad3p-57);
}
/* log1p x = log u + ul / u, u + ul = 1 + x exactly; x's sign at the
 * end, for log1p(-0) = -0. Beyond 1e308, 2^-e is no double. */
OWN_FN VD K(log1p_d)(VD x, VM *out) {
  VD uh, ul;
  *out = v_mor(v_not_lt(x, v_set(1e308)), v_not_gt(x, v_set(-1)));
  K(two_sum)(v_set(1), x, &uh, &ul);
  return v_copysign(K(log_b)(uh, ul, true, 0, 0x1.62e42fefa3800p-1, 0x1.ef35793c76730p-45, 1, 0), x);
}

/* log x as *lh + the return value, within 2^-66 of it relatively, for
 * pow: log_b's sum with -r^2/2 exact too (r^2 split by FMA), each of
 * w + r and + (-r^2/2) a Fast2Sum (|w| >= |r| or w = 0; |w + r| > r^2/2),
 * and T one degree more (2^-55). */
OWN_FN VD K(log_dd)(VD x, VD *lh) {
  VD e, r, rl, inv;
  VI j;
  K(log_red)(x, &e, &j, &r, &rl, &inv);
  VD w = v_fma(e, v_set(0x1.62e42fefa3800p-1), v_lut16(own_logc[1], j));
  VD r2 = v_mul(r, r), r2l = v_fms(r, r, r2), h = v_mul(r2, v_set(-0.5));
  VD s1 = v_add(w, r), s2 = v_add(s1, h);
  VD t = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(0x1.72c6b1c278e61p-4), r, v_set(-0x1.9a52601999629p-4)), r,
                                                   v_set(0x1.c71d44668fc7fp-4)), r, v_set(-0x1.ffffde98c9594p-4)), r,
                                       v_set(0x1.2492491631653p-3)), r, v_set(-0x1.555555567451bp-3)), r,
                           v_set(0x1.999999999a309p-3)), r, v_set(-0x1.fffffffffffadp-3)), r,
               v_set(0x1.5555555555555p-2));
  VD lo = v_add(v_sub(r, v_sub(s1, w)), v_sub(h, v_sub(s2, s1)));
  lo = v_add(lo, v_fma(e, v_set(0x1.ef35793c76730p-45), v_lut16(own_logc[2], j)));
  lo = v_add(lo, v_fma(r2l, v_set(-0.5), v_fma(rl, r2, v_fnma(rl, r, rl))));   /* rl / (1 + r) */
  *lh = s2;
  return v_fma(v_mul(r2, r), t, lo);
}

/* x^y = e^(y log x) for normal x > 0: y log x as th + tl (the product
 * with log x's high part split by FMA), e^(th + tl) by exp_dd (tl joins
 * its reduced argument), rounded once from hi + lo. th outside (-660,
 * 708) (below, lo would fall among the subnormals: 0.75 ulp at -707), x <=
 * 0, subnormal or not finite, y not finite and the exponents 2, -1 and 0.5
 * (rounded correctly there) go to own_slow_pow_d. */
OWN_FN VD K(pow_d)(VD x, VD y, VM *out) {
  VD lh, ll = K(log_dd)(x, &lh), th = v_mul(y, lh), tl = v_fma(y, ll, v_fms(y, lh, th)), hi, lo;
  *out = v_mor(v_mor(K(log_out)(x, INFINITY), v_mor(v_not_lt(th, v_set(708)), v_not_gt(th, v_set(-660)))),
               v_mor(v_mor(v_eq(y, v_set(2)), v_eq(y, v_set(-1))), v_eq(y, v_set(0.5))));
  K(exp_dd)(th, tl, 1023, &hi, &lo);
  return v_add(hi, lo);
}

/* ---- f64 arctangents ---- */
/* atan(q + ql) for q in [0, 1] (|ql| <= 2^-52 q) as the return value +
 * *lo: q's interval by q s + o (s a little below 1 / its width, so that
 * q = 1 is in the last), atan q = atan c + atan u, u = (q - c) / (1 + q c)
 * with q - c exact (c a multiple of 2^-10, and q >= 2^-5 where c != 0)
 * and 1 + q c as dh + dl exactly (the FMA's error is a 14-bit multiple of
 * 2^-67), u + ul by one division and its remainder (ql in it too),
 * |u| < 0.0323: atan u = u + u^3 P(u^2), P Taylor's to u^11 (2^-53);
 * atan c (hi and lo) + u a Fast2Sum (|atan c| > |u| where c != 0). */
OWN_FN VD K(atan_q)(VD q, VD ql, VD *lo) {
  VI j = v_bits(v_add(v_fma(q, v_set(0x1.ef9bd88192cfbp+3), v_set(0x1.909df9ad02e80p-7)), v_set(0x1.8p52)));
  VD c = v_lut16(own_atanc[0], j), a0 = v_lut16(own_atanc[1], j);
  VD d = v_sub(q, c), dh = v_fma(q, c, v_set(1)), dl = v_fma(q, c, v_sub(v_set(1), dh));
  VD inv = v_div(v_set(1), dh), u = v_mul(d, inv);
  VD ul = v_mul(v_sub(v_add(v_fnma(u, dh, d), ql), v_mul(u, dl)), inv);
  VD t = v_mul(u, u);
  VD p = v_fma(v_fma(v_fma(v_fma(v_set(-1.0 / 11), t, v_set(1.0 / 9)), t, v_set(-1.0 / 7)), t, v_set(0.2)), t,
               v_set(-0x1.5555555555555p-2));
  VD hi = v_add(a0, u);
  *lo = v_add(v_add(v_sub(u, v_sub(hi, a0)), v_lut16(own_atanc[2], j)), v_fma(v_mul(u, t), p, ul));
  return hi;
}
/* n / den (0 <= n <= den) as q + *ql, ql = (n - q den) / den with the
 * remainder exact (n >= 2^-969, so that it is no subnormal) */
OWN_FN VD K(ratio)(VD n, VD den, VD *ql) {
  VD inv = v_div(v_set(1), den), q = v_mul(n, inv);
  *ql = v_mul(v_fnma(q, den, n), inv);
  return q;
}
/* b + s (hi + lo), b = bh + bl a multiple of pi/2 (0, pi/2 or pi), s = +-1,
 * |hi| <= pi/4: bh + s hi a Fast2Sum */
OWN_FN VD K(atan_fold)(VD bh, VD bl, VD s, VD hi, VD lo) {
  VD sh = v_mul(s, hi), r = v_add(bh, sh);
  return v_add(r, v_add(v_sub(sh, v_sub(r, bh)), v_fma(s, lo, bl)));
}
/* atan x = atan q for |x| <= 1, pi/2 - atan q for |x| > 1, q = min(|x|,
 * 1/|x|); x's sign at the end (-0 too). NaN and +-inf go to own_slow. */
OWN_FN VD K(atan_d)(VD x, VM *out) {
  VD a = v_abs(x), ql, lo;
  VM big = v_lt(v_set(1), a);
  *out = v_not_lt(a, v_set(INFINITY));
  VD q = K(ratio)(v_sel(big, v_set(1), a), v_sel(big, a, v_set(1)), &ql), hi = K(atan_q)(q, ql, &lo);
  VD r = K(atan_fold)(v_sel(big, v_set(0x1.921fb54442d18p+0), v_set(0)), v_sel(big, v_set(0x1.1a62633145c07p-54), v_set(0)),
                      v_sel(big, v_set(-1), v_set(1)), hi, lo);
  return v_copysign(r, x);
}
/* atan2(y, x) = b + s atan q, q = min(|x|, |y|) / max(|x|, |y|): b = 0,
 * s = 1 where |y| <= |x|, x > 0; pi/2, -1 where |y| > |x|, x > 0; pi, -1
 * where |y| <= |x|, x < 0; pi/2, 1 where |y| > |x|, x < 0; y's sign at the
 * end. */
OWN_FN VD K(atan2_d)(VD y, VD x, VM *out) {
  VD ay = v_abs(y), ax = v_abs(x), ql, lo;
  VM swap = v_lt(ax, ay), neg = v_lt(x, v_set(0));
  VD n = v_sel(swap, ax, ay), den = v_sel(swap, ay, ax), q = K(ratio)(n, den, &ql), hi = K(atan_q)(q, ql, &lo);
  *out = v_mor(v_mor(v_not_lt(den, v_set(0x1p1020)), v_not_gt(n, v_set(0x1p-969))), v_not_gt(q, v_set(0x1p-1020)));
  VD bh = v_sel(swap, v_set(0x1.921fb54442d18p+0), v_sel(neg, v_set(0x1.921fb54442d18p+1), v_set(0)));
  VD bl = v_sel(swap, v_set(0x1.1a62633145c07p-54), v_sel(neg, v_set(0x1.1a62633145c07p-53), v_set(0)));
  VD s = v_sel(swap, v_sel(neg, v_set(1), v_set(-1)), v_sel(neg, v_set(-1), v_set(1)));
  return v_copysign(K(atan_fold)(bh, bl, s, hi, lo), y);
}

/* ---- f64 arcsine and arccosine ---- */
/* asin and acos = B + S asin(v + vl), |v| <= 1/2: |x| <= 1/2: v = |x| (asin,
 * B = 0, S = 1) or x (acos, pi/2, -1); above, v + vl = sqrt(z) exactly
 * enough, z = (1 - |x|) / 2 (exact), v = sqrt(z) rounded and vl = (z -
 * v^2) / (2v) by a reciprocal good to 2^-12 (the bits' estimate and two
 * Newton steps, the same on every path), asin |x| = pi/2 - 2 asin v, acos
 * x = 2 asin v or pi - 2 asin v. asin v = v + v^3 P(v^2), P of degree 12
 * (2^-55.6), + vl (1 + v^2/2); B + S v is a Fast2Sum (|B| >= |S v| or B =
 * 0), the rest small. asin takes x's sign last. */
OWN_FN VD K(asinacos_d)(VD x, VM *out, bool acos) {
  VD a = v_abs(x);
  VM big = v_lt(v_set(0.5), a), neg = v_lt(x, v_set(0));
  *out = v_not_lt(a, v_set(0x1.0000000000001p0));
  VD z = v_mul(v_sub(v_set(1), a), v_set(0.5)), s = v_sqrt(z);
  VD y = v_from_bits(v_isub(v_iset(0x7fde623822fc16e6u), v_bits(v_add(s, v_set(0x1p-600)))));
  y = v_fma(y, v_fnma(s, y, v_set(1)), y);
  y = v_fma(y, v_fnma(s, y, v_set(1)), y);
  VD v = v_sel(big, s, acos ? x : a), vl = v_sel(big, v_mul(v_mul(v_fnma(s, s, z), y), v_set(0.5)), v_set(0));
  VD t = v_mul(v, v);
  VD p = v_set(0x1.dc483ead73e0ap-6);
  static const double c[12] = {-0x1.f5fe0ebfdd593p-7, 0x1.221e941817888p-6, 0x1.5e18cf8cbdec8p-8, 0x1.5329467c6e02bp-7,
                               0x1.7801dc43493e9p-7, 0x1.c9d2dceb300d5p-7, 0x1.1c4d13d8c6351p-6, 0x1.6e8bb3457af37p-6,
                               0x1.f1c71c13d2e33p-6, 0x1.6db6db6e42cfdp-5, 0x1.3333333332e15p-4, 0x1.5555555555556p-3};
  for (int k = 0; k < 12; k++) p = v_fma(p, t, v_set(c[k]));
  VD w = v_fma(v_mul(v, t), p, v_fma(vl, v_mul(t, v_set(0.5)), vl));
  VD bh, bl, sg;
  if (!acos) {
    bh = v_sel(big, v_set(0x1.921fb54442d18p+0), v_set(0));
    bl = v_sel(big, v_set(0x1.1a62633145c07p-54), v_set(0));
    sg = v_sel(big, v_set(-2), v_set(1));
  } else {
    bh = v_sel(big, v_sel(neg, v_set(0x1.921fb54442d18p+1), v_set(0)), v_set(0x1.921fb54442d18p+0));
    bl = v_sel(big, v_sel(neg, v_set(0x1.1a62633145c07p-53), v_set(0)), v_set(0x1.1a62633145c07p-54));
    sg = v_sel(big, v_sel(neg, v_set(-2), v_set(2)), v_set(-1));
  }
  VD sv = v_mul(sg, v), hi = v_add(bh, sv);
  VD r = v_add(hi, v_add(v_sub(sv, v_sub(hi, bh)), v_fma(sg, w, bl)));
  return acos ? r : v_copysign(r, x);
}
OWN_FN VD K(asin_d)(VD x, VM *out) { return K(asinacos_d)(x, out, false); }
OWN_FN VD K(acos_d)(VD x, VM *out) { return K(asinacos_d)(x, out, true); }

/* ---- f32 arctangents, arcsines and log1p, in f64 ---- */
/* atan u for |u| <= tan(pi/8) within 2^-33 relatively */
OWN_FN VD K(atan_u_f)(VD u) {
  VD t = v_mul(u, u);
  VD q = v_fma(v_fma(v_fma(v_fma(v_fma(v_set(0x1.9ed44be5cfb1fp-5), t, v_set(-0x1.618af7ea3c8a1p-4)), t,
                                 v_set(0x1.c5864e462b937p-4)), t, v_set(-0x1.248a6ac09de6ap-3)), t,
                     v_set(0x1.99997cdff6a82p-3)), t, v_set(-0x1.5555554cd6128p-2));
  return v_fma(v_mul(u, t), q, u);
}
/* atan of an f32: u = |x| (|x| <= tan(pi/8)), (|x| - 1) / (|x| + 1) (up to
 * tan(3pi/8)), -1 / |x| (above), one division, and atan |x| = 0, pi/4 or
 * pi/2 + atan u; x's sign last */
OWN_FN VD K(atan_f)(VD x, VM *out) {
  VD a = v_abs(x);
  VM mid = v_lt(v_set(0.41421356237309503), a), big = v_lt(v_set(2.414213562373095), a);
  *out = v_not_lt(a, v_set(INFINITY));
  VD u = v_div(v_sel(big, v_set(-1), v_sel(mid, v_sub(a, v_set(1)), a)),
               v_sel(big, a, v_sel(mid, v_add(a, v_set(1)), v_set(1))));
  VD b = v_sel(big, v_set(0x1.921fb54442d18p+0), v_sel(mid, v_set(0x1.921fb54442d18p-1), v_set(0)));
  return v_copysign(v_add(b, K(atan_u_f)(u)), x);
}
/* atan2 of f32s: q = n / den, the smaller magnitude over the larger, by u
 * = q or (n - den) / (n + den) (q > tan(pi/8)), one division; then b + s
 * atan q as for f64, y's sign last */
OWN_FN VD K(atan2_f)(VD y, VD x, VM *out) {
  VD ay = v_abs(y), ax = v_abs(x);
  VM swap = v_lt(ax, ay), neg = v_lt(x, v_set(0));
  VD n = v_sel(swap, ax, ay), den = v_sel(swap, ay, ax);
  VM mid = v_lt(v_mul(den, v_set(0.41421356237309503)), n);
  *out = v_mor(v_mor(v_not_lt(den, v_set(INFINITY)), v_eq(n, v_set(0))), v_not_lt(ay, v_set(INFINITY)));
  VD u = v_div(v_sel(mid, v_sub(n, den), n), v_sel(mid, v_add(n, den), den));
  VD a = v_add(v_sel(mid, v_set(0x1.921fb54442d18p-1), v_set(0)), K(atan_u_f)(u));
  VD bh = v_sel(swap, v_set(0x1.921fb54442d18p+0), v_sel(neg, v_set(0x1.921fb54442d18p+1), v_set(0)));
  VD s = v_sel(swap, v_sel(neg, v_set(1), v_set(-1)), v_sel(neg, v_set(-1), v_set(1)));
  return v_copysign(v_fma(s, a, bh), y);
}
/* asin v for |v| <= 1/2 within 2^-34 relatively */
OWN_FN VD K(asin_v_f)(VD v) {
  VD t = v_mul(v, v);
  VD p = v_fma(v_fma(v_fma(v_fma(v_fma(v_fma(v_set(0x1.0019dd82be97cp-5), t, v_set(0x1.5371612718b57p-7)), t,
                                       v_set(0x1.83d8b505b35aep-6)), t, v_set(0x1.efcd31008cb5fp-6)), t,
                           v_set(0x1.6dc1e5002db3dp-5)), t, v_set(0x1.33331c32b3db5p-4)), t,
               v_set(0x1.5555555d28dfap-3));
  return v_fma(v_mul(v, t), p, v);
}
/* asin and acos of an f32: |x| <= 1/2 by the polynomial (acos x = pi/2 -
 * asin x); above, s = sqrt((1 - |x|) / 2) (exact to the square root) and
 * asin |x| = pi/2 - 2 asin s, acos x = 2 asin s (x > 0) or pi - 2 asin s.
 * |x| > 1 and NaN go to own_slow (NaN). */
OWN_FN VD K(asinacos_f)(VD x, VM *out, bool acos) {
  VD a = v_abs(x);
  VM big = v_lt(v_set(0.5), a);
  *out = v_not_lt(a, v_set(0x1.0000001p0));
  VD s = v_sqrt(v_mul(v_sub(v_set(1), a), v_set(0.5)));
  VD w = K(asin_v_f)(v_sel(big, s, acos ? x : a));
  if (!acos) return v_copysign(v_sel(big, v_fma(w, v_set(-2), v_set(0x1.921fb54442d18p+0)), w), x);
  VD b = v_sel(big, v_sel(v_lt(x, v_set(0)), v_set(0x1.921fb54442d18p+1), v_set(0)), v_set(0x1.921fb54442d18p+0));
  return v_fma(w, v_sel(big, v_sel(v_lt(x, v_set(0)), v_set(-2), v_set(2)), v_set(-1)), b);
}
OWN_FN VD K(asin_f)(VD x, VM *out) { return K(asinacos_f)(x, out, false); }
OWN_FN VD K(acos_f)(VD x, VM *out) { return K(asinacos_f)(x, out, true); }
/* log1p of an f32: v = 1 + x in f64 (exact unless |x| < 2^-29, where vl
 * = x - (v - 1) is what it left, and 1 / v within 2^-29 of 1), log v by
 * log2_core_f times ln 2, + vl; x's sign last (log1p(-0) = -0) */
OWN_FN VD K(log1p_f)(VD x, VM *out) {
  VD v = v_add(v_set(1), x), vl = v_sub(x, v_sub(v, v_set(1)));
  return v_copysign(v_fma(K(log2_core_f)(v, out), v_set(0x1.62e42fefa39efp-1), vl), x);
}

/* this build's parameters, for the next */
#undef VD
#undef VM
#undef VI
#undef K
#undef OWN_FN
#undef OWN_PRE
