// Mutable references (jax.new_ref): an array that code updates in place.
//
// Eagerly a Ref owns one buffer and every update writes into it (its address
// never changes). Inside a transform, updates are discharged to functional
// form as the function is traced: r.set(v) makes v the value later reads see,
// so grad, vmap, scan and cond see plain dataflow. A Ref passed as an
// argument of a jitted function is updated in the caller's buffer: the
// executable writes the final value where the Ref's elements already live
// (no output is allocated for it), so a training step written with Refs
// keeps its parameters at one address across steps. A jitted function whose
// only effects are on Refs may return void.
//
// Where a Ref may be used: where it was made; in jit (as an argument, or
// closed over: either way the executable reads its current value and
// writes the final one back in place); in scan, fori_loop and while_loop
// bodies and cond/switch_ branches (which carry it as an extra value and
// write it back after the loop or branch; a while's condition may read
// it); in grad, value_and_grad and vmap (an input that is not
// differentiated, or not mapped; its final value written back after the
// call; under vmap it must not vary along the mapped axis); and, for
// reading only, in any transform traced inside the one that made it.
// Anything else (an eager Ref inside jvp, vjp, pmap, checkpoint or a
// custom rule, a write there) is an UnsupportedError saying what to do
// instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"
#include "graft/tree.h"

namespace graft {

namespace detail {
struct RefState;
}

class RefIndex;

class Ref {
 public:
  Ref() = default;  // an empty handle; using it throws graft::Error
  explicit Ref(std::shared_ptr<detail::RefState> state) : state_(std::move(state)) {}

  // The current value (eagerly a copy: later updates do not change it).
  Array get(std::source_location loc = std::source_location::current()) const;
  // Replaces the value with v (same shape and dtype: ShapeError/DTypeError otherwise).
  void set(const Array& v, std::source_location loc = std::source_location::current()) const;
  // Replaces the value with v and returns the old one.
  Array swap(const Array& v, std::source_location loc = std::source_location::current()) const;
  // Adds v (of the same shape and dtype) to the value.
  void addupdate(const Array& v, std::source_location loc = std::source_location::current()) const;
  // The same on the entries an index selects (as Array::operator[] and .at).
  RefIndex at(std::vector<Index> index) const;
  RefIndex at(int64_t i) const;

  const Shape& shape() const;
  DType dtype() const;
  bool valid() const { return state_ != nullptr; }
  // The address of the elements (eagerly; stable across updates).
  const void* unsafe_buffer_pointer() const;
  const std::shared_ptr<detail::RefState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::RefState> state_;
};

// r.at(index): get, set, swap and addupdate on the selected entries.
class RefIndex {
 public:
  RefIndex(Ref ref, std::vector<Index> index) : ref_(std::move(ref)), index_(std::move(index)) {}
  Array get(std::source_location loc = std::source_location::current()) const;
  void set(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array swap(const Array& v, std::source_location loc = std::source_location::current()) const;
  void addupdate(const Array& v, std::source_location loc = std::source_location::current()) const;

 private:
  Ref ref_;
  std::vector<Index> index_;
};

// A new Ref holding a copy of init.
Ref new_ref(const Array& init, std::source_location loc = std::source_location::current());
// The Ref's value; the Ref may not be used afterwards (jax.freeze).
Array freeze(const Ref& r, std::source_location loc = std::source_location::current());

namespace detail {
// For pytrees (below) and jit: the Array holding a Ref's value (its own
// buffer, eagerly), and the Ref a traced function sees for a Ref argument
// (a new Ref whose value is the traced input; TraceSession collects it).
Array ref_leaf(const Ref& r);
Ref ref_alias(const Ref& r, const Array& traced_value);
}  // namespace detail

namespace tree {
// A Ref is one leaf (its value): jit's signature sees its shape and dtype.
template <>
struct Node<Ref> {
  static void flatten(const Ref& r, std::vector<Array>& out) { out.push_back(graft::detail::ref_leaf(r)); }
  static Ref unflatten(const Ref& like, const Array*& it) { return graft::detail::ref_alias(like, *it++); }
  static void shape(const Ref&, TreeShape& s) { s.leaves = 1; }
  static void paths(const Ref&, const std::string& at, std::vector<std::string>& out) { out.push_back(at); }
  static void describe(const Ref& r, std::string& out) {
    out += "Ref ";
    out += detail::describe_leaf(graft::detail::ref_leaf(r));
  }
};
}  // namespace tree

}  // namespace graft
