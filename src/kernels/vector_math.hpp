#pragma once
// Internal: vectorized fp32 elementary functions, written once against a Simd traits type
// (avx2::Simd or avx512::Simd) and instantiated in the ISA-specific translation units. Every
// function here is a template on S, so ISA-specific code can never be merged into portable code.
//
// Accuracy (checked against <cmath> by tests/kernels_activation_test.cpp):
//   exp ~1 ulp (Cody-Waite reduction, degree-5 polynomial for (e^r - 1 - r) / r^2);
//   expm1_nonpositive, log1p_unit, tanh, erf: a few ulp, relative accuracy kept near 0
//   (tanh <= 2 ulp).
// IEEE specials: NaN in gives NaN out; exp(+inf) = inf, exp(-inf) = 0; tanh/erf saturate to +-1.
// The polynomial coefficients were fitted (least squares on Chebyshev nodes) for this project.

namespace tickinfer::kernels::vmath {

// Horner evaluation c[0] + c[1] t + ... + c[N-1] t^(N-1).
template <class S, int N>
inline typename S::V horner(typename S::V t, const float (&c)[N]) {
  typename S::V acc = S::set1(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) acc = S::fmadd(acc, t, S::set1(c[i]));
  return acc;
}

inline constexpr float kLog2e = 1.44269504088896341f;
// ln 2 split so that n * kLn2Hi is exact for |n| <= 2^15 (kLn2Hi has 9 significant bits).
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440054690583e-4f;
// (e^r - 1 - r) / r^2 on |r| <= ln2 / 2; max relative error of e^r 2.3e-10.
inline constexpr float kExpPoly[] = {0.50000000134710740f, 0.16666666719040610f,
                                     0.041666464887679375f, 0.0083332984657471680f,
                                     0.0013933653340272496f, 0.00019899288385651214f};

// e^r - 1 for the reduced argument r (|r| <= ln2/2): r + r^2 q(r), relatively accurate near 0.
template <class S>
inline typename S::V expm1_reduced(typename S::V r) {
  return S::fmadd(S::mul(r, r), horner<S>(r, kExpPoly), r);
}

// Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2 (n integral, as a float): the first step of
// every exponential here.
template <class S>
struct ReducedExp {
  typename S::V n, r;
};
template <class S>
inline ReducedExp<S> reduce_exp(typename S::V x) {
  const typename S::V n = S::round_nearest(S::mul(x, S::set1(kLog2e)));
  return {n, S::fnmadd(n, S::set1(kLn2Lo), S::fnmadd(n, S::set1(kLn2Hi), x))};
}

// e^x for every x. Results below FLT_MIN are subnormal (correctly scaled), above FLT_MAX inf.
template <class S>
inline typename S::V exp(typename S::V x) {
  x = S::min(S::set1(88.8f), x);    // > ln(FLT_MAX): still overflows to inf
  x = S::max(S::set1(-104.0f), x);  // < ln(smallest subnormal / 2): still underflows to 0
  const ReducedExp<S> e = reduce_exp<S>(x);
  return S::ldexp(S::add(expm1_reduced<S>(e.r), S::set1(1.0f)), e.n);
}

// (2^r - 1) / r on |r| <= 1/2 to degree 4, for exp2_nonpositive_flush: 2^r within 1.94 ulp (float
// evaluation, every 16th float of [-125, 0] against double exp2; the attention test checks it).
// Fitted for this project: least squares on Chebyshev nodes, reweighted towards the largest
// relative errors of 2^r.
inline constexpr float kExp2Poly[] = {0.69314688f, 0.24022238f, 0.055508584f, 0.0096717058f, 0.0013228679f};

// 2^x for x <= 0, where every result below 2^-125 may come out as about 2^-125 (2.4e-38): what a
// softmax in base 2 needs (attention folds log2 e into its queries' scale), whose sum is at least
// 1 (the max's 2^0), so such terms change nothing it returns. Base 2 needs no reduction
// constants: n = round(x) and r = x - n exactly, where e^x takes a multiply and a two-step
// Cody-Waite reduction; a degree-5 polynomial (1.94 ulp: a softmax's inputs and sum carry more
// rounding than that), in Estrin's form, and one exponent step. On a core that issues one
// 256-bit operation per cycle each operation saved is some 6 % of it. Positive inputs give
// garbage; callers mask them.
template <class S>
inline typename S::V exp2_nonpositive_flush(typename S::V x) {
  using V = typename S::V;
  x = S::max(S::set1(-125.0f), x);
  const V n = S::round_nearest(x);
  const V r = S::sub(x, n), r2 = S::mul(r, r);
  const V low = S::fmadd(S::set1(kExp2Poly[1]), r, S::set1(kExp2Poly[0]));
  const V high = S::fmadd(S::set1(kExp2Poly[3]), r, S::set1(kExp2Poly[2]));
  const V p = S::fmadd(r2, S::fmadd(S::set1(kExp2Poly[4]), r2, high), low);
  return S::ldexp_normal(S::fmadd(r, p, S::set1(1.0f)), n);
}

// e^x - 1 for x <= 0 (positive inputs are treated as 0: callers select x there, as elu does).
// 2^n e^r - 1 = 2^n (e^r - 1) + (2^n - 1): exact at n = 0, so small |x| keeps full relative
// accuracy; below -20 the result is -1 in float anyway, so n stays in [-29, 0].
template <class S>
inline typename S::V expm1_nonpositive(typename S::V x) {
  x = S::min(S::zero(), x);
  x = S::max(S::set1(-20.0f), x);
  const ReducedExp<S> e = reduce_exp<S>(x);
  const typename S::V scale = S::ldexp(S::set1(1.0f), e.n);
  return S::fmadd(scale, expm1_reduced<S>(e.r), S::sub(scale, S::set1(1.0f)));
}

// (log1p(z) - z + z^2/2) / z^3 on z in [sqrt(1/2) - 1, sqrt(2) - 1]; relative error 6.9e-9.
inline constexpr float kLog1pPoly[] = {
    0.33333354191856934f, -0.25000852664846310f, 0.19999817163586622f, -0.16621335195103400f,
    0.14227281869473800f, -0.13202627004746690f, 0.12619448874915182f, -0.073603695786415550f};

// log(1 + t) for t in [0, 1] (what softplus needs). For t <= sqrt(2) - 1 the polynomial takes t
// itself (no rounding of 1 + t); above, log(1 + t) = ln 2 + log1p(u/2 - 1) with u = fl(1 + t),
// and the rounding error of u is added back as (t - (u - 1)) / u.
template <class S>
inline typename S::V log1p_unit(typename S::V t) {
  using V = typename S::V;
  const V one = S::set1(1.0f);
  const V u = S::add(one, t);
  const auto big = S::gt(t, S::set1(0.41421356f));
  const V z = S::select(big, S::fmadd(u, S::set1(0.5f), S::neg(one)), t);
  const V poly = S::fmadd(z, horner<S>(z, kLog1pPoly), S::set1(-0.5f));
  const V lz = S::fmadd(S::mul(z, z), poly, z);
  const V corr = S::div(S::sub(t, S::sub(u, one)), u);
  return S::add(lz, S::select(big, S::add(S::set1(0.69314718055994531f), corr), S::zero()));
}

// tanh(x) = -t / (t + 2) with t = expm1(-2|x|) in (-1, 0], sign of x restored at the end (so
// tanh(-0) = -0). One branch-free path with one exp-like evaluation and one division: the
// expm1 keeps full relative accuracy near 0, so no separate small-|x| polynomial is needed
// (max error 2 ulp against double on a sweep of all floats in [1e-30, 12], both signs).
// Saturates to +-1 (expm1_nonpositive clamps at -20, where t rounds to -1); NaN stays NaN.
template <class S>
inline typename S::V tanh(typename S::V x) {
  using V = typename S::V;
  const V ax = S::abs(x);
  const V t = expm1_nonpositive<S>(S::mul(ax, S::set1(-2.0f)));
  const V r = S::abs(S::div(t, S::add(t, S::set1(2.0f))));  // abs: t = 0 gives -0 / 2
  return S::or_bits(r, S::sign_bits(x));
}

// erf(x) / x as a polynomial in x^2 for |x| < 1; relative error 1.6e-9.
inline constexpr float kErfSmallPoly[] = {1.1283791665915894f,    -0.37612629871729900f,
                                          0.11283625666094580f,   -0.026855397052025550f,
                                          0.0051912137596679770f, -0.00080348048195205130f,
                                          0.000079333502357680870f};
// erfc(x) * e^(x^2) as a polynomial in (x - 2) for 1 <= x <= 4; absolute error of erfc 7.3e-10.
inline constexpr float kErfcLargePoly[] = {
    0.25539556684131637f,   -0.10679764729045915f,  0.041803669875009185f,
    -0.015439831519897960f, 0.0054685103002556110f, -0.0018749121890926804f,
    0.00050003335313720830f, -0.00018917711139101973f, 0.00011422305215625895f};

// erf(x): x P(x^2) for |x| < 1, 1 - e^(-x^2) Q(|x| - 2) up to 4, +-1 beyond (erf(x) rounds to 1
// in float from x ~ 3.92).
template <class S>
inline typename S::V erf(typename S::V x) {
  using V = typename S::V;
  const V ax = S::abs(x);
  const V s = S::mul(ax, ax);
  const V small = S::mul(ax, horner<S>(s, kErfSmallPoly));
  const V xc = S::min(S::set1(4.0f), ax);  // NaN stays NaN
  const V erfc = S::mul(exp<S>(S::neg(S::mul(xc, xc))),
                        horner<S>(S::sub(xc, S::set1(2.0f)), kErfcLargePoly));
  const V large = S::sub(S::set1(1.0f), erfc);
  const V r = S::select(S::lt(ax, S::set1(1.0f)), small, large);
  return S::or_bits(r, S::sign_bits(x));
}

// 1 / (1 + e^-x) with a true division.
template <class S>
inline typename S::V sigmoid(typename S::V x) {
  const typename S::V one = S::set1(1.0f);
  return S::div(one, S::add(one, exp<S>(S::neg(x))));
}

}  // namespace tickinfer::kernels::vmath
