// Jacobians and Hessians with argnums, over pytree arguments and results,
// batched with vmap.
//
// jacfwd<I...>(f)(args...) and jacrev<I...>(f)(args...) follow JAX's
// nesting: the result has the structure of f's output outside and the
// structure of the differentiated arguments inside (that argument's tree for
// one index or none, argument 0 by default; a std::tuple of the arguments'
// trees for several). The block of output leaf y and input leaf x has shape
// y.shape + x.shape. hessian<I...>(f) is jacfwd<I...>(jacrev<I...>(f)).
//
// As JAX does, both vmap over a standard basis: jacfwd pushes every basis
// tangent of the flattened inputs through one batched JVP, jacrev pulls every
// basis cotangent of the flattened outputs through one batched VJP (a graph
// the size of one pass, not n passes).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/ops.h"
#include "graft/tree.h"
#include "graft/vmap.h"

namespace graft {

// jacfwd<I...>(f): a callable whose call jacfwd<I...>(f)(args...) returns the
// Jacobian of f at args with respect to arguments I... (argument 0 when none
// is given), in forward mode: one batched JVP over the standard basis of the
// differentiated arguments' elements; best when they are fewer than f's
// outputs. The result nests as described above; a non-float argument is a
// DTypeError naming it, an argnum past the arguments a compile-time error.
template <size_t... Is, class F>
auto jacfwd(F f);

// jacrev<I...>(f): the same Jacobian in reverse mode: one batched VJP over
// the standard basis of f's output elements; best when f has fewer outputs
// than the differentiated arguments have elements (a scalar loss: one row).
template <size_t... Is, class F>
auto jacrev(F f);

// hessian<I...>(f): the Hessian of f (a scalar-valued function, or each
// output leaf's) with respect to arguments I..., as jacfwd<I...>(jacrev<I...>(f)):
// blocks of shape y.shape + x.shape + x.shape.
template <size_t... Is, class F>
auto hessian(F f);

}  // namespace graft

#include "graft/detail/jacobian.h"
