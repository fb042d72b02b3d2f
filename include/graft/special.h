// graft::special: the special functions of jax.scipy.special. Arguments
// broadcast against each other and promote as JAX's; a C++ number is weakly
// typed (it takes the arrays' float dtype), and integer arguments compute in
// the default float dtype. f32 results are the f64 computation rounded once.
// Accuracy against mpmath, per function and range: docs/SPECIAL_FUNCTIONS.md.
// Derivatives are JAX's; those JAX does not define (polygamma in n, zeta in
// s, betainc in a and b) raise an UnsupportedError when asked for.
#pragma once

#include <type_traits>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft::special {

using Loc = std::source_location;

// An argument of the functions of two or three arguments: an Array, or a C++
// number (weakly typed, as with the arithmetic operators).
class Operand {
 public:
  Operand(const Array& a) : array_(a), is_array_(true) {}  // NOLINT: implicit, as a number is
  template <Scalar S>
  Operand(S value) : value_(static_cast<double>(value)) {}  // NOLINT

  bool is_array() const { return is_array_; }
  const Array& array() const { return array_; }
  double value() const { return value_; }

 private:
  Array array_;
  double value_ = 0;
  bool is_array_ = false;
};

Array erfinv(ArrayAt x);    // the inverse error function (lax.erf_inv): +-inf at +-1, NaN beyond
Array erfc(ArrayAt x);      // 1 - erf(x), accurate where erf(x) is near 1
Array gammaln(ArrayAt x);   // log |Gamma(x)|; +inf at the poles (0, -1, -2, ...)
Array digamma(ArrayAt x);   // Gamma'(x) / Gamma(x); NaN at the poles
Array i0e(ArrayAt x);       // e^-|x| I0(x), the exponentially scaled modified Bessel function of order 0
Array i1e(ArrayAt x);       // e^-|x| I1(x), order 1 (odd in x)
Array i0(ArrayAt x);        // I0(x) = e^|x| i0e(x); overflows to inf beyond ~713 (f64)
Array i1(ArrayAt x);        // I1(x) = e^|x| i1e(x)
Array ndtr(ArrayAt x);      // the standard normal CDF
Array ndtri(ArrayAt p);     // the inverse of ndtr: -inf at 0, +inf at 1, NaN outside [0, 1]
Array log_ndtr(ArrayAt x);  // log(ndtr(x)), accurate far into both tails
Array entr(ArrayAt x);      // -x log(x); 0 at 0, -inf below
Array logit(ArrayAt x);     // log(x / (1 - x))
Array expit(ArrayAt x);     // 1 / (1 + e^-x) (lax.logistic)

// psi^(n)(x), the n-th derivative of digamma; n a nonnegative integer (NaN
// otherwise; an integer Array or number)
Array polygamma(Operand n, Operand x, Loc loc = Loc::current());
// The Hurwitz zeta function sum_k (q + k)^-s, s > 1 (NaN below, inf at 1)
Array zeta(Operand s, Operand q, Loc loc = Loc::current());
// The regularized lower incomplete gamma function P(a, x) (lax.igamma)
Array gammainc(Operand a, Operand x, Loc loc = Loc::current());
// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (lax.igammac)
Array gammaincc(Operand a, Operand x, Loc loc = Loc::current());
// The regularized incomplete beta function I_x(a, b)
Array betainc(Operand a, Operand b, Operand x, Loc loc = Loc::current());
// log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)
Array betaln(Operand a, Operand b, Loc loc = Loc::current());
// x log(y), 0 where x == 0 (unless y is NaN); its derivative as JAX's, finite at x == 0
Array xlogy(Operand x, Operand y, Loc loc = Loc::current());
// x log(1 + y), 0 where x == 0 (unless y is NaN)
Array xlog1py(Operand x, Operand y, Loc loc = Loc::current());

}  // namespace graft::special
