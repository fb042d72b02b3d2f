// The non-template side of vmap: matching axis specifications to leaves,
// checking the mapped size, and calling the batching transform.
#include "graft/vmap.h"

#include <optional>

#include "api/array_impl.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "transforms/vmap.h"

namespace graft::detail {
namespace {

// Where each leaf sits, for error messages: "argument 1", "argument 0[2][1]".
void leaf_paths(const tree::TreeShape& shape, const std::string& prefix, std::vector<std::string>& out) {
  if (shape.children.empty()) {
    for (size_t i = 0; i < shape.leaves; ++i) out.push_back(prefix);
    return;
  }
  for (size_t c = 0; c < shape.children.size(); ++c) {
    std::string p = prefix;
    p += '[';
    p += std::to_string(c);
    p += ']';
    leaf_paths(shape.children[c], p, out);
  }
}

std::vector<std::string> top_paths(const tree::TreeShape& shape, const char* top) {
  std::vector<std::string> out;
  for (size_t c = 0; c < shape.children.size(); ++c) {
    std::string p = top;
    p += ' ';
    p += std::to_string(c);
    leaf_paths(shape.children[c], p, out);
  }
  if (shape.children.empty()) leaf_paths(shape, top, out);
  return out;
}

// One entry per leaf: its axis as given (possibly negative), or none.
void match(const AxisSpec& spec, const tree::TreeShape& shape, const std::string& path, const char* what,
           std::vector<std::optional<int64_t>>& out) {
  if (spec.kind() != AxisSpec::Kind::list) {
    std::optional<int64_t> axis;
    if (spec.kind() == AxisSpec::Kind::axis) axis = spec.axis();
    for (size_t i = 0; i < shape.leaves; ++i) out.push_back(axis);
    return;
  }
  const auto& items = spec.items();
  if (items.size() != shape.children.size()) {
    std::string msg = "vmap: ";
    msg += what;
    msg += " has ";
    msg += std::to_string(items.size());
    msg += " entries for ";
    msg += path.empty() ? "the arguments" : path;
    msg += ", which has ";
    msg += std::to_string(shape.children.size());
    msg += shape.children.empty() ? " children (it is a single array: give an int or none)" : " children";
    throw ShapeError(msg);
  }
  for (size_t c = 0; c < items.size(); ++c) {
    std::string p = path;
    p += '[';
    p += std::to_string(c);
    p += ']';
    match(items[c], shape.children[c], p, what, out);
  }
}

}  // namespace

std::vector<int64_t> leaf_axes(const AxisSpec& spec, const tree::TreeShape& shape, const std::vector<int64_t>& ranks,
                               const char* what, const char* top) {
  std::vector<std::optional<int64_t>> given;
  match(spec, shape, "", what, given);
  std::vector<std::string> paths = top_paths(shape, top);
  std::vector<int64_t> dims(given.size(), -1);
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i]) continue;
    int64_t axis = *given[i];
    int64_t rank = ranks[i];
    int64_t norm = axis < 0 ? axis + rank : axis;
    if (norm < 0 || norm >= rank) {
      std::string msg = "vmap: ";
      msg += what;
      msg += " ";
      msg += std::to_string(axis);
      msg += " is out of range for ";
      msg += paths[i];
      msg += ", which has ";
      msg += std::to_string(rank);
      msg += rank == 1 ? " axis" : " axes";
      if (std::string(what) == "out_axes") msg += " when batched";
      throw ShapeError(msg);
    }
    dims[i] = norm;
  }
  return dims;
}

int64_t mapped_axis_size(const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                         const tree::TreeShape& shape) {
  std::vector<std::string> paths = top_paths(shape, "argument");
  int64_t size = -1;
  size_t first = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (dims[i] < 0) continue;
    int64_t n = leaves[i].shape()[static_cast<size_t>(dims[i])];
    if (size < 0) {
      size = n;
      first = i;
    } else if (n != size) {
      std::string msg = "vmap: mapped axes have different sizes: ";
      msg += paths[first];
      msg += " (";
      msg += tree::detail::describe_leaf(leaves[first]);
      msg += ", axis ";
      msg += std::to_string(dims[first]);
      msg += ") has ";
      msg += std::to_string(size);
      msg += ", but ";
      msg += paths[i];
      msg += " (";
      msg += tree::detail::describe_leaf(leaves[i]);
      msg += ", axis ";
      msg += std::to_string(dims[i]);
      msg += ") has ";
      msg += std::to_string(n);
      throw ShapeError(msg);
    }
  }
  if (size < 0)
    throw ShapeError("vmap: in_axes maps no argument (all are none, or the arguments have no arrays); "
                     "the mapped axis size cannot be inferred");
  return size;
}

Array example_input(TraceSession& session, const Array& leaf, int64_t dim) {
  if (dim < 0) return session.input_like(leaf);
  Shape s = leaf.shape();
  s.erase(s.begin() + dim);
  return session.input_of(s, leaf.dtype());
}

Graph vmap_transform(const Graph& traced, size_t num_captured, const std::vector<int64_t>& in_dims,
                     const std::vector<int64_t>& out_dims, int64_t axis_size, const std::string& axis_name,
                     size_t num_refs) {
  std::vector<int64_t> dims = in_dims;
  dims.resize(in_dims.size() + num_captured, -1);
  transforms::BatchedGraph bg = transforms::batch_graph(traced.ir(), dims, axis_size, axis_name);
  const size_t n = bg.out_dims.size();
  for (size_t k = n - num_refs; k < n; ++k)
    if (bg.out_dims[k] >= 0)
      // JAX refuses this too: the Ref holds one value for the whole batch.
      throw UnsupportedError("vmap: a Ref of the enclosing code (" +
                             ir::type_str(traced.ir().type(traced.ir().outputs()[k])) +
                             ") is given a value that varies along the mapped axis, but it holds one value for the "
                             "whole batch; return the batched value and set the Ref after vmap");
  std::vector<int64_t> want = out_dims;
  want.resize(n, -1);
  return Graph(transforms::place_batch_axes(bg, want, axis_size));
}

}  // namespace graft::detail
