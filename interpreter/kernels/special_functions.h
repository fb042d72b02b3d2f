// The scalar semantics of graft's special functions (jax.scipy.special and
// the lax primitives under it): gcg_<ident> for the ops of ir/ops.def that
// are not one call of the C library. Part of scalar_ops.h's text (it
// includes this file at its end, and the code generators splice both into
// their modules), so the interpreter, the generated C++ and the generated
// CUDA compute one definition. The same rules apply: no standard headers.
//
// Each function is computed in double, and an f32 result is the double one
// rounded once: within an ulp of the f64 value wherever that is accurate
// (docs/SPECIAL_FUNCTIONS.md has the table, measured against mpmath). On a
// GPU whose doubles are slow this costs speed, which we take for accuracy.
//
// The constants are facts computed by scripts/make_special_coeffs.py with
// mpmath: Chebyshev expansions of the scaled Bessel functions, the Taylor
// series of digamma about its root, Bernoulli numbers.
#ifndef GRAFT_SPECIAL_FUNCTIONS_H
#define GRAFT_SPECIAL_FUNCTIONS_H

// ---- helpers

// A function too long to inline everywhere: the CUDA prelude makes it a call.
#ifndef GCG_FN_OUTLINE
#define GCG_FN_OUTLINE GCG_FN
#endif

GCG_FN double gcg_nan_f64() { return gcg_infinity<double>() - gcg_infinity<double>(); }
GCG_FN constexpr double gcg_eps_f64() { return 2.220446049250313e-16; }

// c[0] / 2 + sum_k c[k] T_k(t), the coefficients given highest degree first
// (Clenshaw's recurrence).
GCG_FN double gcg_chebyshev(const double* c, int n, double t) {
  double b0 = 0, b1 = 0, b2 = 0;
  for (int i = 0; i < n; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = 2 * t * b1 - b2 + c[i];
  }
  return 0.5 * (b0 - b2);
}

// erfc(x / sqrt 2) with the quotient carried in two doubles: its rounding
// alone would cost x^2 / 2 ulps far in the tails, where erfc(z) falls by
// 2z per unit of relative change in z. First order in the low part.
GCG_FN_OUTLINE double gcg_erfc_over_sqrt2(double x) {
  const double c_hi = 0.7071067811865476, c_lo = -4.833646656726457e-17;
  const double z = x * c_hi;
  if (!(gcg_fabs(z) < gcg_infinity<double>())) return gcg_erfc(z);
  const double z_lo = gcg_fma(x, c_hi, -z) + x * c_lo;
  return gcg_erfc(z) - z_lo * 1.1283791670955126 * gcg_exp(-z * z);
}

// log(Gamma(x)) by the C library's reentrant lgamma (the plain lgamma writes
// the global signgam: a data race across threads); CUDA's, which has no
// such global, where the module defines GCG_LIBM_LGAMMA.
#ifndef GCG_LIBM_LGAMMA
extern "C" double lgamma_r(double, int*) noexcept;
#endif
template <class T>
GCG_FN T gcg_lgamma(T x) {
#ifdef GCG_LIBM_LGAMMA
  return T(GCG_LIBM(lgamma)(double(x)));
#else
  int sign;
  if constexpr (gcg_same<T, float>::value)
    return T(lgamma_r(double(x), &sign));  // f32 rounded once from f64, as the other functions here
  else
    return lgamma_r(x, &sign);
#endif
}

// ---- digamma: reflection below 0, a Taylor series about the positive root
// x0 = 1.4616... within 1/2 of it (where the recurrence's absolute error
// would be a large relative one), else the recurrence psi(x) = psi(x + 1) -
// 1/x up to 12 and the asymptotic series there. NaN at 0 and the negative
// integers (the poles), as JAX.
GCG_FN_OUTLINE double gcg_digamma_f64(double x) {
  if (__builtin_isnan(x) || x == gcg_infinity<double>()) return x;
  double result = 0;
  if (x <= 0) {
    if (x == gcg_floor(x)) return gcg_nan_f64();
    // psi(x) = psi(1 - x) - pi / tan(pi x); tan has period pi, so reduce first
    const double r = x - gcg_round(x);
    result = -3.141592653589793 / gcg_tan(3.141592653589793 * r);
    x = 1 - x;
  }
  if (x >= 1.96 && x < 2.96) {
    // psi(x) = psi(x - 1) + 1/(x - 1): the Taylor series below, without the
    // recurrence's cancellation against log(12) where psi is still small
    result += 1 / (x - 1);
    x -= 1;
  }
  if (x > 0.96 && x < 1.96) {
    const double a[39] = {
        2.5496265520215542567e-7, -3.7266161283438229589e-7, 5.4469419306694452785e-7, -7.9614254312419704004e-7,
        1.1636675363548842703e-6, -1.7008538854332606582e-6, 2.4860227331295379489e-6, -3.6336507898010456684e-6,
        5.3110609208898633873e-6, -7.7628176684620944253e-6, 1.1346384584663849807e-5, -1.6584242271854133375e-5,
        2.4240066118601317653e-5, -3.5430070947659606316e-5, 5.178575795222080869e-5,  -7.5691795821950659192e-5,
        1.1063372768747410904e-4, -1.6170622091974803449e-4, 2.3635601564027052792e-4, -3.4546802510630769956e-4,
        5.0495326583460203518e-4, -7.3807093899600512957e-4, 1.0788252019162965807e-3, -1.5769367714301972593e-3,
        2.3051263267349278369e-3, -3.3698016554393280828e-3, 4.9267813957298534464e-3, -7.204534386356868241e-3,
        1.0538791616612175388e-2, -1.5424765904948959139e-2, 2.259764823221810466e-2,  -3.3161126474847359292e-2,
        4.8804288164143107225e-2, -7.2199561256454710926e-2, 1.0782405069126236576e-1, -1.639427054424065275e-1,
        2.5849976095565101062e-1, -4.4276316898359210609e-1, 9.6767224544762117043e-1};
    const double h = (x - 1.4616321449683622) - 9.549995429965697e-17;  // the first difference is exact
    double p = 0;
    for (int i = 0; i < 39; ++i) p = p * h + a[i];
    return result + p * h;
  }
  while (x < 12) {
    result -= 1 / x;
    x += 1;
  }
  const double z = 1 / (x * x);
  const double tail =
      z *
      (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + gcg_log(x) - 0.5 / x - tail;
}

// ---- the Hurwitz zeta function zeta(s, q) = sum_k (q + k)^-s, s > 1: the
// first terms summed until q + k > 9, then the Euler-Maclaurin tail. For
// q <= 0 only integer s is defined (q^-s); a pole where q is a nonpositive
// integer. NaN for s < 1 (as JAX's), +inf at s = 1.
GCG_FN_OUTLINE double gcg_zeta_f64(double s, double q) {
  if (__builtin_isnan(s) || __builtin_isnan(q)) return s + q;
  if (s == 1) return gcg_infinity<double>();
  if (s < 1) return gcg_nan_f64();
  if (q <= 0) {
    if (q == gcg_floor(q)) return gcg_infinity<double>();
    if (s != gcg_floor(s)) return gcg_nan_f64();
    if (q < -1e6) return gcg_nan_f64();  // a million terms before the tail: not computed
  }
  if (q == gcg_infinity<double>()) return 0;
  double sum = 0, w = q;
  for (int k = 0; k < 9 || w <= 9; ++k) {
    const double term = gcg_pow(w, -s);
    sum += term;
    w += 1;
    if (w > 0 && gcg_fabs(term) < gcg_eps_f64() * gcg_fabs(sum)) return sum;
  }
  const double bernoulli[13] = {8.3333333333333333333e-2,  -1.3888888888888888889e-3,  3.3068783068783068783e-5,
                                -8.2671957671957671958e-7, 2.0876756987868098979e-8,   -5.2841901386874931848e-10,
                                1.3382536530684678833e-11, -3.3896802963225828668e-13, 8.5860620562778445641e-15,
                                -2.174868698558061873e-16, 5.5090028283602295152e-18,  -1.3954464685812523341e-19,
                                3.5347070396294674717e-21};  // B_2j / (2j)!
  const double p = gcg_pow(w, -s);
  double tail = w * p / (s - 1) + 0.5 * p;
  double factor = s * p / w;  // s (s+1) ... (s+2j-2) w^(-s-2j+1)
  for (int j = 0; j < 13; ++j) {
    const double term = bernoulli[j] * factor;
    tail += term;
    if (gcg_fabs(term) < gcg_eps_f64() * gcg_fabs(sum + tail)) break;
    factor *= (s + 2 * j + 1) * (s + 2 * j + 2) / (w * w);
  }
  return sum + tail;
}

// ---- polygamma(n, x): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x);
// NaN unless n is a nonnegative integer.
GCG_FN_OUTLINE double gcg_polygamma_f64(double n, double x) {
  if (__builtin_isnan(n) || __builtin_isnan(x)) return n + x;
  if (n < 0 || n != gcg_floor(n)) return gcg_nan_f64();
  if (n == 0) return gcg_digamma_f64(x);
  double factorial = 1;
  for (double k = 2; k <= n && factorial < gcg_infinity<double>(); k += 1) factorial *= k;
  const double z = gcg_zeta_f64(n + 1, x);
  const bool odd = gcg_fmod(n, 2.0) == 1;
  return (odd ? factorial : -factorial) * z;
}

// ---- the regularized incomplete gamma functions P(a, x) (igamma) and
// Q(a, x) (igammac), dP/da (igamma_grad_a) and the derivative of a Gamma(a,
// 1) sample with respect to a, -(dP/da) / (dP/dx) (random_gamma_grad): JAX's
// algorithm (the power series of P, the continued fraction of Q), each
// carrying its derivative in a when asked.
enum { gcg_igamma_value = 0, gcg_igamma_derivative = 1, gcg_igamma_sample_derivative = 2 };

// d - log(1 + d), accurate near 0: with u = d / (2 + d), log(1 + d) =
// 2 (u + u^3/3 + u^5/5 + ...) and d - 2u = d u.
GCG_FN double gcg_log1p_deficit(double d) {
  if (!(gcg_fabs(d) < 0.5)) return d - gcg_log1p(d);
  const double u = d / (2 + d), u2 = u * u;
  double power = u * u2, sum = 0;
  for (int k = 3; k < 60; k += 2) {
    const double term = power / k;
    sum += term;
    if (gcg_fabs(term) <= gcg_eps_f64() * gcg_fabs(sum)) break;
    power *= u2;
  }
  return d * u - 2 * sum;
}

// lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), Stirling's series for
// a >= 10.
GCG_FN double gcg_stirling_remainder(double a) {
  const double z = 1 / (a * a);
  return (1.0 / 12 -
          z * (1.0 / 360 - z * (1.0 / 1260 - z * (1.0 / 1680 - z * (1.0 / 1188 - z * (691.0 / 360360 - z / 156)))))) /
         a;
}

// x^a e^-x / Gamma(a) in log form, the prefactor of both expansions. For
// a >= 10 the terms are of size a log a and cancel; Stirling's formula turns
// them into a log(x / a) + a - x + log(a) / 2 - log(2 pi) / 2 - remainder,
// whose first two terms are -a (d - log(1 + d)), d = (x - a) / a, near x = a.
GCG_FN_OUTLINE double gcg_igamma_log_prefactor(double a, double x) {
  if (a < 10 || x == gcg_infinity<double>()) return a * gcg_log(x) - x - gcg_lgamma(a);
  const double d = (x - a) / a;  // far from 0, log(x / a) keeps what 1 + d would round away
  const double power = gcg_fabs(d) < 0.5 ? -a * gcg_log1p_deficit(d) : a * gcg_log(x / a) + (a - x);
  return power + 0.5 * gcg_log(a) - 0.9189385332046728 - gcg_stirling_remainder(a);
}

// The power series: P = ax/a (1 + x/(a+1) + x^2/((a+1)(a+2)) + ...).
GCG_FN_OUTLINE double gcg_igamma_series(double a, double x, double ax, int mode) {
  double r = a, c = 1, sum = 1, dc_da = 0, dsum_da = 0;
  for (int i = 0; i < 2000; ++i) {
    r += 1;
    dc_da = dc_da * (x / r) - c * x / (r * r);
    dsum_da += dc_da;
    c *= x / r;
    sum += c;
    const bool more = mode == gcg_igamma_value ? c / sum > gcg_eps_f64() : gcg_fabs(dc_da / dsum_da) > gcg_eps_f64();
    if (!more) break;
  }
  if (mode == gcg_igamma_value) return sum * ax / a;
  const double dlogax_da = gcg_log(x) - gcg_digamma_f64(a + 1);
  if (mode == gcg_igamma_derivative) return ax * (sum * dlogax_da + dsum_da) / a;
  return -(dsum_da + sum * dlogax_da) * x / a;
}

// The continued fraction of Q = ax * (1/(x + 1 - a - ...)), its convergents
// p/q and their derivatives in a carried along, rescaled when they grow.
GCG_FN_OUTLINE double gcg_igammac_fraction(double a, double x, double ax, int mode) {
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double ans = pkm1 / qkm1;
  double dans = (dpkm1 - ans * dqkm1) / qkm1;
  for (int i = 0; i < 2000; ++i) {
    c += 1;
    y += 1;
    z += 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    const double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    double change = 1, dchange = 1;
    if (qk != 0) {
      const double r = pk / qk;
      change = gcg_fabs((ans - r) / r);
      ans = r;
      const double next = (dpk - ans * dqk) / qk;
      dchange = gcg_fabs(next - dans);
      dans = next;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    dpkm2 = dpkm1;
    dpkm1 = dpk;
    dqkm2 = dqkm1;
    dqkm1 = dqk;
    if (gcg_fabs(pk) > 1 / gcg_eps_f64()) {
      const double e = gcg_eps_f64();
      pkm2 *= e, pkm1 *= e, qkm2 *= e, qkm1 *= e;
      dpkm2 *= e, dpkm1 *= e, dqkm2 *= e, dqkm1 *= e;
    }
    if (!((mode == gcg_igamma_value ? change : dchange) > gcg_eps_f64())) break;
  }
  if (mode == gcg_igamma_value) return ans * ax;
  const double dlogax_da = gcg_log(x) - gcg_digamma_f64(a);
  if (mode == gcg_igamma_derivative) return ax * (ans * dlogax_da + dans);
  return -(dans + ans * dlogax_da) * x;
}

// A prefactor whose log is below -this underflows to 0.
GCG_FN constexpr double gcg_log_max_f64() { return 745.2; }

GCG_FN_OUTLINE double gcg_igamma_f64(double a, double x) {
  if (__builtin_isnan(a) || __builtin_isnan(x)) return a + x;
  if (x < 0 || a < 0 || (a == 0 && x == 0)) return gcg_nan_f64();
  if (x == 0) return 0;
  if (a == 0 || x == gcg_infinity<double>()) return 1;
  const bool use_fraction = x >= 1 && x > a;
  const double log_ax = gcg_igamma_log_prefactor(a, x);
  if (log_ax < -gcg_log_max_f64()) return use_fraction ? 1 : 0;
  const double ax = gcg_exp(log_ax);
  return use_fraction ? 1 - gcg_igammac_fraction(a, x, ax, gcg_igamma_value)
                      : gcg_igamma_series(a, x, ax, gcg_igamma_value);
}

GCG_FN_OUTLINE double gcg_igammac_f64(double a, double x) {
  if (__builtin_isnan(a) || __builtin_isnan(x)) return a + x;
  if (x < 0 || a < 0 || (a == 0 && x == 0)) return gcg_nan_f64();
  if (x == 0) return 1;
  if (a == 0 || x == gcg_infinity<double>()) return 0;
  const bool use_series = x < 1 || x < a;
  const double log_ax = gcg_igamma_log_prefactor(a, x);
  if (log_ax < -gcg_log_max_f64()) return use_series ? 1 : 0;
  const double ax = gcg_exp(log_ax);
  return use_series ? 1 - gcg_igamma_series(a, x, ax, gcg_igamma_value)
                    : gcg_igammac_fraction(a, x, ax, gcg_igamma_value);
}

// dP/da (mode gcg_igamma_derivative) or the sample derivative; 0 at x = 0
// and at x = inf, NaN for a <= 0 or x < 0.
GCG_FN_OUTLINE double gcg_igamma_a_derivative_f64(double a, double x, int mode) {
  if (__builtin_isnan(a) || __builtin_isnan(x)) return a + x;
  if (x < 0 || a <= 0) return gcg_nan_f64();
  if (x == 0 || x == gcg_infinity<double>()) return 0;
  const bool use_fraction = x > 1 && x > a;
  const double log_ax = gcg_igamma_log_prefactor(a, x);
  if (log_ax < -gcg_log_max_f64()) return 0;
  const double ax = gcg_exp(log_ax);
  return use_fraction ? -gcg_igammac_fraction(a, x, ax, mode) : gcg_igamma_series(a, x, ax, mode);
}

// log(x^a (1 - x)^b / B(a, b)). With large parameters its terms, of size
// a log a, cancel; Stirling's formula for each log Gamma turns them into
// terms of the result's size (as in gcg_igamma_log_prefactor), with
// d = x (a + b) - a:
//   a, b >= 10: a log(x (a+b) / a) + b log((1-x) (a+b) / b) + log(ab / (a+b)) / 2
//               - log(2 pi) / 2 - R(a) - R(b) + R(a+b),
//               the first two -a (da - log(1+da)) - b (db - log(1+db)) near the
//               mode, da = d/a, db = -d/b;
//   a >= 10 > b: lgamma(a) - lgamma(a+b) = -(a - 1/2) log(1 + b/a) - b log(a+b)
//               + b + R(a) - R(a+b); likewise with a and b exchanged.
GCG_FN_OUTLINE double gcg_betainc_log_prefactor(double a, double b, double x) {
  const double lx = gcg_log(x), l1mx = gcg_log1p(-x);
  if (a >= 10 && b >= 10) {
    const double s = a + b, d = gcg_fma(x, s, -a);
    const double da = d / a, db = -d / b;
    const double ta = gcg_fabs(da) < 0.5 ? -a * gcg_log1p_deficit(da) : a * (lx + gcg_log(s / a)) - d;
    const double tb = gcg_fabs(db) < 0.5 ? -b * gcg_log1p_deficit(db) : b * (l1mx + gcg_log(s / b)) + d;
    return ta + tb + 0.5 * gcg_log(a / s * b) - 0.9189385332046728 - gcg_stirling_remainder(a) -
           gcg_stirling_remainder(b) + gcg_stirling_remainder(s);
  }
  if (a >= 10 || b >= 10) {
    const double big = a >= 10 ? a : b, small = a >= 10 ? b : a;
    const double s = a + b;
    // lgamma(big) - lgamma(big + small), without its cancellation
    const double diff = -(big - 0.5) * gcg_log1p(small / big) - small * gcg_log(s) + small +
                        gcg_stirling_remainder(big) - gcg_stirling_remainder(s);
    return a * lx + b * l1mx - gcg_lgamma(small) - diff;
  }
  return a * lx + b * l1mx - (gcg_lgamma(a) + gcg_lgamma(b) - gcg_lgamma(a + b));
}

// ---- the regularized incomplete beta function I_x(a, b): its continued
// fraction (DLMF 8.17.22) by the modified Lentz method, in x where it
// converges quickly (x < (a + 1) / (a + b + 2)) and through I_x(a, b) = 1 -
// I_{1-x}(b, a) elsewhere. a = 0 (or b = inf) makes it 1 for x > 0; b = 0 (or
// a = inf) 0 for x < 1, as JAX.
GCG_FN_OUTLINE double gcg_betainc_f64(double a, double b, double x) {
  if (__builtin_isnan(a) || __builtin_isnan(b) || __builtin_isnan(x)) return a + b + x;
  if (a < 0 || b < 0 || x < 0 || x > 1) return gcg_nan_f64();
  const double inf = gcg_infinity<double>();
  const bool a_zero = a == 0 || b == inf, b_zero = b == 0 || a == inf;
  if (a_zero && b_zero) return gcg_nan_f64();
  if (a_zero) return x == 0 ? 0 : 1;
  if (b_zero) return x == 1 ? 1 : 0;
  if (x == 0 || x == 1) return x;
  const double log_front = gcg_betainc_log_prefactor(a, b, x);  // symmetric under the swap
  const bool swap = !(x < (a + 1) / (a + b + 2));
  if (swap) {
    const double t = a;
    a = b;
    b = t;
    x = 1 - x;
  }
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (gcg_fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 600; ++m) {
    // the even step, then the odd one
    double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + num * d;
    c = 1 + num / c;
    if (gcg_fabs(d) < tiny) d = tiny;
    if (gcg_fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (gcg_fabs(d) < tiny) d = tiny;
    if (gcg_fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (gcg_fabs(delta - 1) < gcg_eps_f64()) break;
  }
  const double r = gcg_exp(log_front) * h / a;
  return swap ? 1 - r : r;
}

// ---- the exponentially scaled modified Bessel functions of the first kind,
// e^-|x| I0(x) and e^-|x| I1(x): Chebyshev expansions of i0e(x) and
// i1e(x) / x on [0, 8] (NEAR, in t = x/4 - 1) and of sqrt(x) i0e(x),
// sqrt(x) i1e(x) beyond (FAR, in t = 16/x - 1), highest degree first. The
// vectorised CPU versions (float_math_isa.h) run the same recurrence on
// the same coefficients.
#define GCG_I0E_NEAR                                                                                                \
  5.6691780069214961571e-19, -4.4153416464793393795e-18, 3.3307945188222380978e-17, -2.4312798465479546936e-16,     \
      1.7153912855551330306e-15, -1.1685332877993451681e-14, 7.6761854986049356169e-14, -4.8564467831119294609e-13, \
      2.9550526631296398346e-12, -1.7268262914415557072e-11, 9.6758090353732369122e-11, -5.1897956016352629067e-10, \
      2.6598237246823866503e-9, -1.3000250099862480421e-8, 6.0469950225419189493e-8, -2.6707938539406117339e-7,     \
      1.1173875391201037182e-6, -4.4167383584587505636e-6, 1.6448448070728897089e-5, -5.754195010082103704e-5,      \
      1.8850288509584165573e-4, -5.7637557453858236588e-4, 1.6394756169413357984e-3, -4.3243099950505759443e-3,     \
      1.0546460394594998318e-2, -2.3737414805899468816e-2, 4.9305284239670708488e-2, -9.4901097048047644421e-2,     \
      1.7162090152220877535e-1, -3.0468267234319839868e-1, 6.76795274409476085e-1
#define GCG_I0E_FAR                                                                                                  \
  -1.938426454160905929e-19, -2.4887098371508072357e-19, 1.1936508908459820855e-18, 9.9214754121736985989e-19,       \
      -7.2331804878747539546e-18, -4.8305044859441820713e-18, 4.465621420296759999e-17, 3.4612228676974610931e-17,   \
      -2.8276239805165834849e-16, -3.4254856196772191346e-16, 1.7725601330565263836e-15, 3.8116806693526224207e-15,  \
      -9.5548466988283076487e-15, -4.1505693472872220866e-14, 1.5400862175214098269e-14, 3.8527783827421427011e-13,  \
      7.1801244513836662337e-13, -1.7941785315068061178e-12, -1.3215811840447713119e-11, -3.1499165279632413645e-11, \
      1.1889147107846438342e-11, 4.9406023882249695891e-10, 3.3962320257083863452e-9, 2.2666689904981780646e-8,      \
      2.0489185894690637418e-7, 2.891370520834756483e-6, 6.8897583469168239843e-5, 3.3691164782556940899e-3,         \
      8.0449041101410883161e-1
#define GCG_I1E_NEAR                                                                                               \
  -3.5415817725421362052e-19, 2.7779141127610463705e-18, -2.1114212143581660782e-17, 1.5536319577362004689e-16,    \
      -1.105596947735386308e-15, 7.6006842947354069341e-15, -5.0421855047279116871e-14, 3.2237933659455747098e-13, \
      -1.9839743977649437152e-12, 1.1736186298890901631e-11, -6.6634897235020277422e-11, 3.625590281552117037e-10, \
      -1.8872497517228292879e-9, 9.3815373864957717839e-9, -4.4450591287963280807e-8, 2.0032947535521352623e-7,    \
      -8.5687202646954547407e-7, 3.4702513081376784767e-6, -1.3273163656039435828e-5, 4.7815651075500542264e-5,    \
      -1.6176081582589674559e-4, 5.122859561685757729e-4, -1.513572450631253149e-3, 4.1564229443128881567e-3,      \
      -1.0564084894626198156e-2, 2.4726449030626516828e-2, -5.2945981208094991427e-2, 1.0264365868984709538e-1,    \
      -1.7641651835783405515e-1, 2.5258718644363365482e-1
#define GCG_I1E_FAR                                                                                                 \
  2.026944384053285179e-19, 2.414276719454848469e-19, -1.2421932751948909561e-18, -9.3141788673268833757e-19,       \
      7.5172963108421048054e-18, 4.4143483230717079499e-18, -4.6503053684893583256e-17, -3.2095259219934239588e-17, \
      2.9626289976459501391e-16, 3.3082023109209282827e-16, -1.8803547755107824485e-15, -3.8144030724370078048e-15, \
      1.0420276984128802764e-14, 4.2724400167119513543e-14, -2.101541842772664313e-14, -4.0835511110921973182e-13,  \
      -7.1985517762459085121e-13, 2.0356285441470895072e-12, 1.4125807436613781332e-11, 3.2526035830154882386e-11,  \
      -1.8974958123505412345e-11, -5.5897434621965838069e-10, -3.835380385964237022e-9, -2.6314688468895195068e-8,  \
      -2.5122362378702089253e-7, -3.8825648088776903935e-6, -1.1058893876262371629e-4, -9.7610974913614684078e-3,   \
      7.7857623501828012047e-1

GCG_FN_OUTLINE double gcg_bessel_i0e_f64(double x) {
  const double z = gcg_fabs(x);
  if (z <= 8) {
    const double c[31] = {GCG_I0E_NEAR};
    return gcg_chebyshev(c, 31, z / 4 - 1);
  }
  const double c[29] = {GCG_I0E_FAR};
  return gcg_chebyshev(c, 29, 16 / z - 1) / gcg_sqrt(z);
}

GCG_FN_OUTLINE double gcg_bessel_i1e_f64(double x) {
  const double z = gcg_fabs(x);
  double r;
  if (z <= 8) {
    const double c[30] = {GCG_I1E_NEAR};
    r = z * gcg_chebyshev(c, 30, z / 4 - 1);
  } else {
    const double c[29] = {GCG_I1E_FAR};
    r = gcg_chebyshev(c, 29, 16 / z - 1) / gcg_sqrt(z);
  }
  return x < 0 ? -r : (x == 0 ? x : r);
}

// ---- the standard normal distribution: ndtr (its CDF), log_ndtr (the
// log of the CDF, accurate where the CDF underflows: an asymptotic series
// below -37) and ndtri (the CDF's inverse: erf_inv in the middle refined by
// one Newton step on erf; in the tails, Newton steps on log_ndtr from
// Abramowitz and Stegun's 26.2.23).
GCG_FN double gcg_ndtr_f64(double x) { return 0.5 * gcg_erfc_over_sqrt2(-x); }

GCG_FN_OUTLINE double gcg_log_ndtr_f64(double x) {
  if (__builtin_isnan(x)) return x;
  if (x > 0) return gcg_log1p(-0.5 * gcg_erfc_over_sqrt2(x));
  if (x > -37) return gcg_log(0.5 * gcg_erfc_over_sqrt2(-x));
  // log(phi(x) / -x (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...))
  const double z = 1 / (x * x);
  double term = 1, series = 1;
  for (int k = 1; k <= 8; ++k) {
    term *= -(2 * k - 1) * z;
    series += term;
  }
  return -0.5 * x * x - gcg_log(-x) - 0.9189385332046728 + gcg_log(series);
}

GCG_FN_OUTLINE double gcg_ndtri_f64(double p) {
  if (!(p > 0 && p < 1)) {
    if (p == 0) return -gcg_infinity<double>();
    if (p == 1) return gcg_infinity<double>();
    return gcg_nan_f64();
  }
  if (p >= 0.25 && p <= 0.75) {
    double x = 1.4142135623730951 * gcg_erf_inv(2 * p - 1);  // 2p - 1 is exact here
    const double residual = 0.5 * gcg_erf(x * 0.7071067811865476) - (p - 0.5);
    return x - residual * 2.5066282746310007 * gcg_exp(0.5 * x * x);
  }
  const double q = p < 0.5 ? p : 1 - p;  // 1 - p is exact for p >= 1/2
  const double t = gcg_sqrt(-2 * gcg_log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_q = gcg_log(q);
  for (int i = 0; i < 4; ++i) {
    const double log_cdf = gcg_log_ndtr_f64(x);
    // d log_ndtr / dx = phi(x) / ndtr(x)
    const double slope = gcg_exp(-0.5 * x * x - 0.9189385332046728 - log_cdf);
    x -= (log_cdf - log_q) / slope;
  }
  return p < 0.5 ? x : -x;
}

// ---- the ops: f32 goes through the f64 functions, rounded once
template <class T>
GCG_FN T gcg_digamma(T x) {
  return T(gcg_digamma_f64(double(x)));
}
template <class T>
GCG_FN T gcg_polygamma(T n, T x) {
  return T(gcg_polygamma_f64(double(n), double(x)));
}
template <class T>
GCG_FN T gcg_zeta(T s, T q) {
  return T(gcg_zeta_f64(double(s), double(q)));
}
template <class T>
GCG_FN T gcg_igamma(T a, T x) {
  return T(gcg_igamma_f64(double(a), double(x)));
}
template <class T>
GCG_FN T gcg_igammac(T a, T x) {
  return T(gcg_igammac_f64(double(a), double(x)));
}
template <class T>
GCG_FN T gcg_igamma_grad_a(T a, T x) {
  return T(gcg_igamma_a_derivative_f64(double(a), double(x), gcg_igamma_derivative));
}
template <class T>
GCG_FN T gcg_random_gamma_grad(T a, T x) {
  return T(gcg_igamma_a_derivative_f64(double(a), double(x), gcg_igamma_sample_derivative));
}
template <class T>
GCG_FN T gcg_betainc(T a, T b, T x) {
  return T(gcg_betainc_f64(double(a), double(b), double(x)));
}
template <class T>
GCG_FN T gcg_bessel_i0e(T x) {
  return T(gcg_bessel_i0e_f64(double(x)));
}
template <class T>
GCG_FN T gcg_bessel_i1e(T x) {
  return T(gcg_bessel_i1e_f64(double(x)));
}
template <class T>
GCG_FN T gcg_ndtr(T x) {
  return T(gcg_ndtr_f64(double(x)));
}
template <class T>
GCG_FN T gcg_log_ndtr(T x) {
  return T(gcg_log_ndtr_f64(double(x)));
}
template <class T>
GCG_FN T gcg_ndtri(T p) {
  return T(gcg_ndtri_f64(double(p)));
}

#endif  // GRAFT_SPECIAL_FUNCTIONS_H
