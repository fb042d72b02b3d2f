// The Eigen expression of each vectorised float op, written once: the
// interpreter's elementwise kernel and the functions generated CPU kernels
// call (codegen/cpu/math.cpp) both expand this list, so compiled kernels
// compute the interpreter's bits by construction.
//
// M(name, expr): expr reads X (an Eigen::Map of the operand) and has element
// type T. Internal header: it needs <Eigen/Core> where it is expanded.
#pragma once

#include <Eigen/Core>

namespace graft::interpreter {

template <class T>
using EVec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using CMap = Eigen::Map<const EVec<T>>;
template <class T>
using MMap = Eigen::Map<EVec<T>>;

}  // namespace graft::interpreter

#define GRAFT_FLOAT_MATH_OPS(M)                 \
  M(floor, X.floor())                           \
  M(ceil, X.ceil())                             \
  M(round, X.rint()) /* half to even, as NumPy */ \
  M(sqrt, X.sqrt())                             \
  M(rsqrt, X.rsqrt())                           \
  M(exp, X.exp())                               \
  M(log, X.log())                               \
  M(log1p, X.log1p())                           \
  M(expm1, X.expm1())                           \
  M(sin, X.sin())                               \
  M(cos, X.cos())                               \
  M(tan, X.tan())                               \
  M(asin, X.asin())                             \
  M(acos, X.acos())                             \
  M(atan, X.atan())                             \
  M(sinh, X.sinh())                             \
  M(cosh, X.cosh())                             \
  M(tanh, X.tanh())                             \
  M(logistic, T(1) / (T(1) + (-X).exp()))
