// CPU kernels of indexing with run-time indices. Start indices are clamped
// so a slice stays inside the operand (as XLA does); gather clamps indices,
// scatter_add drops out-of-range ones. No index can read or write out of bounds.
#include <algorithm>
#include <cstring>

#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/scalar_ops.h"

namespace graft::interpreter {
namespace {

using ir::Ints;
using ir::Op;

int64_t read_index(const KernelIn& in, int64_t i) {
  if (!ir::is_integer(in.type->dtype)) throw Error("index operand must be an integer array");
  return ir::visit_element_type(in.type->dtype, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T v = static_cast<const T*>(in.data)[i];
      // A u64 index past int64's range is out of range all the same (clamped or dropped).
      if constexpr (std::is_same_v<T, uint64_t>)
        return v > uint64_t{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(v);
      else
        return static_cast<int64_t>(v);
    } else {
      return 0;  // not reached: checked above
    }
  });
}

// Clamped start offsets of a window of `sizes` in `shape`, from scalar operands first..first+rank.
std::vector<int64_t> clamped_starts(const KernelCall& call, size_t first, const Shape& shape, const Shape& sizes) {
  std::vector<int64_t> starts(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    starts[d] = std::clamp<int64_t>(read_index(call.inputs[first + d], 0), 0, shape[d] - sizes[d]);
  return starts;
}

// The gather/scatter_add index space: output = [outer, middle, inner] where
// outer runs over x[:axis], middle over indices[batch_dims:], inner over x[axis+1:].
struct TakeGeometry {
  int64_t outer = 1, middle = 1, inner = 1, axis_size = 0, per_batch = 1;
};

TakeGeometry geometry(const KernelCall& call) {
  const Shape& x = call.inputs[0].type->shape;
  const Shape& idx = call.inputs[1].type->shape;
  int64_t axis = ir::attr<int64_t>(call.attrs, "axis", call.op);
  int64_t b = ir::attr<int64_t>(call.attrs, "batch_dims", call.op);
  TakeGeometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  for (int64_t d = b; d < axis; ++d) g.per_batch *= x[d];  // outer positions sharing one batch of indices
  for (size_t d = b; d < idx.size(); ++d) g.middle *= idx[d];
  for (size_t d = axis + 1; d < x.size(); ++d) g.inner *= x[d];
  g.axis_size = x[axis];
  return g;
}

template <class T>
void scatter_add_typed(const KernelCall& call) {
  TakeGeometry g = geometry(call);
  const T* x = in_ptr<T>(call, 0);
  const T* u = in_ptr<T>(call, 2);
  T* y = out_ptr<T>(call, 0);
  int64_t total = out_elements(call);
  if (total && y != x) std::memcpy(y, x, static_cast<size_t>(total) * sizeof(T));  // in place: nothing to copy
  // Sequential: several updates may hit one element, and the order of adds must not depend on threads.
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t m = 0; m < g.middle; ++m) {
      int64_t v = read_index(call.inputs[1], (o / g.per_batch) * g.middle + m);
      if (v < 0 || v >= g.axis_size) continue;
      T* dst = y + (o * g.axis_size + v) * g.inner;
      const T* src = u + (o * g.middle + m) * g.inner;
      for (int64_t i = 0; i < g.inner; ++i) {
        if constexpr (ir::is_complex_type<T>)
          dst[i] += src[i];
        else
          dst[i] = gcg_wrap_add<T>(dst[i], src[i]);
      }
    }
}

}  // namespace

void dynamic_slice_kernel(const KernelCall& call) {
  const Shape& shape = call.inputs[0].type->shape;
  const Shape& sizes = call.outputs[0].type->shape;
  std::vector<int64_t> starts = clamped_starts(call, 1, shape, sizes);
  std::vector<int64_t> strides = row_major_strides(shape);
  int64_t base = 0;
  for (size_t d = 0; d < shape.size(); ++d) base += starts[d] * strides[d];
  size_t elem = ir::dtype_size(call.outputs[0].type->dtype);
  const auto* x = static_cast<const uint8_t*>(call.inputs[0].data);
  auto* y = static_cast<uint8_t*>(call.outputs[0].data);
  StridedWalk walk(sizes, strides, base);
  int64_t n = out_elements(call);
  for (int64_t j = 0; j < n; ++j, walk.next()) std::memcpy(y + j * elem, x + walk.offset() * elem, elem);
}

void dynamic_update_slice_kernel(const KernelCall& call) {
  const Shape& shape = call.inputs[0].type->shape;
  const Shape& sizes = call.inputs[1].type->shape;
  size_t elem = ir::dtype_size(call.outputs[0].type->dtype);
  int64_t total = out_elements(call);
  if (total && call.outputs[0].data != call.inputs[0].data)  // in place: only the window is written
    std::memcpy(call.outputs[0].data, call.inputs[0].data, static_cast<size_t>(total) * elem);
  std::vector<int64_t> starts = clamped_starts(call, 2, shape, sizes);
  std::vector<int64_t> strides = row_major_strides(shape);
  int64_t base = 0;
  for (size_t d = 0; d < shape.size(); ++d) base += starts[d] * strides[d];
  const auto* u = static_cast<const uint8_t*>(call.inputs[1].data);
  auto* y = static_cast<uint8_t*>(call.outputs[0].data);
  const int64_t n = call.inputs[1].type->num_elements();
  if (n == 0) return;
  // The update's rows along its last axis are contiguous in the output: one copy each.
  const int64_t run = sizes.empty() ? 1 : sizes.back();
  const Shape outer(sizes.begin(), sizes.end() - (sizes.empty() ? 0 : 1));
  const std::vector<int64_t> outer_strides(strides.begin(), strides.end() - (strides.empty() ? 0 : 1));
  StridedWalk walk(outer, outer_strides, base);
  const size_t bytes = static_cast<size_t>(run) * elem;
  for (int64_t j = 0; j < n / run; ++j, walk.next()) std::memcpy(y + walk.offset() * elem, u + j * static_cast<int64_t>(bytes), bytes);
}

void gather_kernel(const KernelCall& call) {
  TakeGeometry g = geometry(call);
  size_t row = static_cast<size_t>(g.inner) * ir::dtype_size(call.outputs[0].type->dtype);
  const auto* x = static_cast<const uint8_t*>(call.inputs[0].data);
  auto* y = static_cast<uint8_t*>(call.outputs[0].data);
  parallel_ranges(g.outer * g.middle, [&](int64_t b, int64_t e) {
    for (int64_t om = b; om < e; ++om) {
      int64_t o = om / g.middle, m = om % g.middle;
      int64_t v = std::clamp<int64_t>(read_index(call.inputs[1], (o / g.per_batch) * g.middle + m), 0, g.axis_size - 1);
      if (row) std::memcpy(y + om * row, x + (o * g.axis_size + v) * row, row);
    }
  });
}

void scatter_add_kernel(const KernelCall& call) {
  // Complex values add as themselves (the transpose of gather, e.g. in sort's JVP, carries them).
  if (call.inputs[0].type->dtype == DType::c64) return scatter_add_typed<std::complex<float>>(call);
  if (call.inputs[0].type->dtype == DType::c128) return scatter_add_typed<std::complex<double>>(call);
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) throw UnsupportedError("scatter_add: bool operand");
    else scatter_add_typed<T>(call);
  });
}

}  // namespace graft::interpreter
