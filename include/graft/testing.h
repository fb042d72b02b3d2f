// graft::testing::check_grads: numerical checks of derivatives, for tests of
// user functions and of graft itself. Forward mode is compared with central
// finite differences computed in f64; reverse mode with forward mode by the
// dot-product test <vjp(u), v> = <u, jvp(v)>; both recursively up to `order`,
// with JAX's tolerances (f32: 2e-3, f64: 1e-5, absolute and relative).
#pragma once

#include <functional>
#include <tuple>
#include <vector>

#include "graft/autodiff.h"
#include "graft/tree.h"

namespace graft::testing {

enum class Modes { fwd, rev, fwd_and_rev };

namespace detail {
using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
void check_grads_flat(const FlatFn& f, const std::vector<Array>& x, int order, Modes modes, double eps);
}  // namespace detail

// Throws graft::Error describing the worst mismatch. args is a tuple of
// pytrees of float Arrays; f returns a pytree of float Arrays.
template <class F, class... Args>
void check_grads(F f, const std::tuple<Args...>& args, int order = 2, Modes modes = Modes::fwd_and_rev,
                 double eps = 1e-3) {
  detail::FlatFn flat = [f, args](const std::vector<Array>& leaves) {
    auto rebuilt = graft::tree::unflatten(args, leaves);
    return graft::tree::leaves(std::apply(f, rebuilt));
  };
  detail::check_grads_flat(flat, graft::tree::leaves(args), order, modes, eps);
}

}  // namespace graft::testing
