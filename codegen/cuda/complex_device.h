// complex<T> for generated CUDA modules. NVRTC has no standard library, and
// interpreter/kernels/complex_ops.h (whose text follows this one in a module
// that computes on complex values) is written against std::complex: this
// file gives device code a std::complex with what those functions use (the
// parts, arithmetic, comparison, abs and conj), exp, log, sqrt and the
// circular and hyperbolic functions (kComplexDeviceFunctions below); the
// inverse ones are only declared: complex_ops.h names them, the CUDA emitter
// never calls them (their nodes run on the host).
//
// The functions are the textbook formulas over CUDA's real functions, with
// log near |z| = 1 through log1p and tanh by Kahan's form; for finite
// arguments within a few ulps of |f(z)| of glibc's (tests/cuda/
// complex_device_test.cpp), but without C's Annex G rules for infinite and
// NaN parts.
//
// Layout: two T, aligned to their pair (a c64 loads as one 8-byte word),
// as a std::complex element in memory. Products are (ac - bd, ad + bc), as
// GCC's for finite values; quotients use Smith's algorithm (within a few
// ulps of GCC's, which also rescales near overflow); neither recovers
// infinities from NaN results as C's Annex G does.
//
// Under the emulated driver (GCG_EMULATED) the module is host C++ and uses
// <complex> itself, so emulated results have the interpreter's bits. A host
// test compiles this text into another namespace (GCG_COMPLEX_DEVICE_NS)
// and checks it against std::complex (tests/cuda/complex_device_test.cpp).
#ifndef GRAFT_COMPLEX_DEVICE_H
#define GRAFT_COMPLEX_DEVICE_H

#ifndef GCG_COMPLEX_DEVICE_NS
#define GCG_COMPLEX_DEVICE_NS std
#endif

namespace GCG_COMPLEX_DEVICE_NS {

// The real functions complex_ops.h calls as std:: ones: CUDA's (or the host's) global overloads.
using ::atan2;
using ::cos;
using ::exp;
using ::expm1;
using ::log1p;
using ::sin;
template <class T>
GCG_FN T abs(T x) {
  return ::fabs(x);
}

template <class T>
struct alignas(2 * sizeof(T)) complex {
  T re_, im_;
  GCG_FN constexpr complex(T re = T(), T im = T()) : re_(re), im_(im) {}
  GCG_FN constexpr T real() const { return re_; }
  GCG_FN constexpr T imag() const { return im_; }
};

template <class T>
GCG_FN complex<T> operator-(complex<T> a) {
  return {-a.re_, -a.im_};
}
template <class T>
GCG_FN complex<T> operator+(complex<T> a, complex<T> b) {
  return {a.re_ + b.re_, a.im_ + b.im_};
}
template <class T>
GCG_FN complex<T> operator+(T a, complex<T> b) {
  return {a + b.re_, b.im_};
}
template <class T>
GCG_FN complex<T> operator-(complex<T> a, complex<T> b) {
  return {a.re_ - b.re_, a.im_ - b.im_};
}
template <class T>
GCG_FN complex<T> operator*(complex<T> a, complex<T> b) {
  return {a.re_ * b.re_ - a.im_ * b.im_, a.re_ * b.im_ + a.im_ * b.re_};
}
// Smith's: the larger part of the divisor divides the smaller, so no square overflows.
template <class T>
GCG_FN complex<T> operator/(complex<T> a, complex<T> b) {
  if (::fabs(b.re_) >= ::fabs(b.im_)) {
    const T r = b.im_ / b.re_, d = b.re_ + b.im_ * r;
    return {(a.re_ + a.im_ * r) / d, (a.im_ - a.re_ * r) / d};
  }
  const T r = b.re_ / b.im_, d = b.re_ * r + b.im_;
  return {(a.re_ * r + a.im_) / d, (a.im_ * r - a.re_) / d};
}
template <class T>
GCG_FN complex<T> operator/(complex<T> a, T b) {
  return {a.re_ / b, a.im_ / b};
}
template <class T>
GCG_FN bool operator==(complex<T> a, complex<T> b) {
  return a.re_ == b.re_ && a.im_ == b.im_;
}
template <class T>
GCG_FN bool operator!=(complex<T> a, complex<T> b) {
  return !(a == b);
}
template <class T>
GCG_FN T abs(complex<T> a) {
  return ::hypot(a.re_, a.im_);
}
template <class T>
GCG_FN complex<T> conj(complex<T> a) {
  return {a.re_, -a.im_};
}

template <class T>
GCG_FN complex<T> exp(complex<T> z) {
  if (z.im_ == T(0)) return {::exp(z.re_), z.im_};  // a real argument keeps its imaginary zero's sign
  // e^x as (e^(x/2))^2 past where e^x alone overflows but e^x cos y need not.
  const T half = ::exp(z.re_ / T(2)), c = ::cos(z.im_), s = ::sin(z.im_);
  return {half * c * half, half * s * half};
}
template <class T>
GCG_FN complex<T> log(complex<T> z) {
  const T ax = ::fabs(z.re_), ay = ::fabs(z.im_), big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
  T re;
  if (big >= T(0.5) && big <= T(2))  // |z| near 1: log |z| = log1p((big - 1)(big + 1) + small^2) / 2
    re = ::log1p((big - T(1)) * (big + T(1)) + small * small) / T(2);
  else
    re = ::log(::hypot(z.re_, z.im_));
  return {re, ::atan2(z.im_, z.re_)};
}
// The principal root: t = sqrt((|x| + |z|) / 2) and y / 2t, the larger part first.
template <class T>
GCG_FN complex<T> sqrt(complex<T> z) {
  if (z.re_ == T(0) && z.im_ == T(0)) return {T(0), z.im_};
  const T t = ::sqrt((::fabs(z.re_) + ::hypot(z.re_, z.im_)) / T(2));
  if (z.re_ >= T(0)) return {t, z.im_ / (T(2) * t)};
  return {::fabs(z.im_) / (T(2) * t), ::copysign(t, z.im_)};
}
template <class T>
GCG_FN complex<T> sinh(complex<T> z) {
  return {::sinh(z.re_) * ::cos(z.im_), ::cosh(z.re_) * ::sin(z.im_)};
}
template <class T>
GCG_FN complex<T> cosh(complex<T> z) {
  return {::cosh(z.re_) * ::cos(z.im_), ::sinh(z.re_) * ::sin(z.im_)};
}
// Kahan's: with t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2),
// tanh z = (b r s + i t) / (1 + b s^2); past |x| = 20, tanh x rounds to +-1.
template <class T>
GCG_FN complex<T> tanh(complex<T> z) {
  if (::fabs(z.re_) > T(20)) {
    const T e = ::exp(-T(2) * ::fabs(z.re_));
    return {::copysign(T(1), z.re_), T(4) * ::sin(z.im_) * ::cos(z.im_) * e};
  }
  const T t = ::tan(z.im_), b = T(1) + t * t, s = ::sinh(z.re_), r = ::sqrt(T(1) + s * s), d = T(1) + b * s * s;
  return {b * r * s / d, t / d};
}
// sin z = -i sinh(i z), cos z = cosh(i z), tan z = -i tanh(i z).
template <class T>
GCG_FN complex<T> sin(complex<T> z) {
  const complex<T> w = sinh(complex<T>(-z.im_, z.re_));
  return {w.im_, -w.re_};
}
template <class T>
GCG_FN complex<T> cos(complex<T> z) {
  return cosh(complex<T>(-z.im_, z.re_));
}
template <class T>
GCG_FN complex<T> tan(complex<T> z) {
  const complex<T> w = tanh(complex<T>(-z.im_, z.re_));
  return {w.im_, -w.re_};
}

// Named by complex_ops.h, never called from device code.
template <class T>
complex<T> asin(complex<T>);
template <class T>
complex<T> acos(complex<T>);
template <class T>
complex<T> atan(complex<T>);
template <class T>
complex<T> asinh(complex<T>);
template <class T>
complex<T> acosh(complex<T>);
template <class T>
complex<T> atanh(complex<T>);

}  // namespace GCG_COMPLEX_DEVICE_NS

#endif  // GRAFT_COMPLEX_DEVICE_H
