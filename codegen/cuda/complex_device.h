// complex<T> for generated CUDA modules. NVRTC has no standard library, and
// interpreter/kernels/complex_ops.h (whose text follows this one in a module
// that computes on complex values) is written against std::complex: this
// file gives device code a std::complex with what those functions use (the
// parts, arithmetic, comparison, abs and conj) and declares the
// transcendental functions, which complex_ops.h names but the CUDA emitter
// never calls (their nodes run on the host, as on the CPU backend).
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

// Named by complex_ops.h, never called from device code.
template <class T>
complex<T> exp(complex<T>);
template <class T>
complex<T> log(complex<T>);
template <class T>
complex<T> sqrt(complex<T>);
template <class T>
complex<T> sin(complex<T>);
template <class T>
complex<T> cos(complex<T>);
template <class T>
complex<T> tan(complex<T>);
template <class T>
complex<T> asin(complex<T>);
template <class T>
complex<T> acos(complex<T>);
template <class T>
complex<T> atan(complex<T>);
template <class T>
complex<T> sinh(complex<T>);
template <class T>
complex<T> cosh(complex<T>);
template <class T>
complex<T> tanh(complex<T>);
template <class T>
complex<T> asinh(complex<T>);
template <class T>
complex<T> acosh(complex<T>);
template <class T>
complex<T> atanh(complex<T>);

}  // namespace GCG_COMPLEX_DEVICE_NS

#endif  // GRAFT_COMPLEX_DEVICE_H
