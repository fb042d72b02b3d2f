// Jacobians and Hessians (w.r.t. argument 0), batched with vmap.
#pragma once

#include <tuple>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/ops.h"
#include "graft/vmap.h"

namespace graft {

namespace detail {
// The standard basis of like's space: [like.size] + like.shape, like's dtype.
Array standard_basis(const Array& like);
// A [n] + out.shape stack of Jacobian columns reordered to out.shape + in_shape.
Array basis_last(const Array& columns, const Shape& in_shape);
}  // namespace detail

// Jacobians w.r.t. argument 0 (an Array): shape f(x).shape + x.shape.
// As JAX does, both vmap over the standard basis: jacfwd pushes every basis
// tangent through one batched JVP, jacrev pulls every basis cotangent
// through one batched VJP (a graph the size of one pass, not n passes).
template <class F>
auto jacfwd(F f) {
  return [f](const Array& x, const auto&... rest) {
    auto g = [&](const Array& a) -> Array { return f(a, rest...); };
    auto push = [&](const Array& t) { return jvp(g, std::make_tuple(x), std::make_tuple(t)).second; };
    Array columns = vmap(push)(detail::standard_basis(x));  // [x.size] + f(x).shape
    return detail::basis_last(columns, x.shape());
  };
}

template <class F>
auto jacrev(F f) {
  return [f](const Array& x, const auto&... rest) {
    auto g = [&](const Array& a) -> Array { return f(a, rest...); };
    auto [y, pullback] = vjp(g, x);
    auto pull = [&pullback](const Array& u) { return std::get<0>(pullback(u)); };
    Array rows = vmap(pull)(detail::standard_basis(y));  // [y.size] + x.shape
    Shape s = y.shape();
    s.insert(s.end(), x.shape().begin(), x.shape().end());
    return reshape(rows, s);
  };
}

template <class F>
auto hessian(F f) {
  return jacfwd(jacrev(f));
}

}  // namespace graft
