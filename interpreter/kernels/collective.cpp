// CPU kernels of the collectives, run by each replica of a pmap. They are
// built from the communicator's two byte-moving calls: a reduction (psum,
// pmax, pmin) gathers every replica's operand and reduces the stack in rank
// order with the reduce kernels, so every replica computes bit-identical
// results; all_gather is a gather plus, off axis 0, a transpose; psum_scatter
// keeps this replica's slice of the sum.
#include <cstring>

#include "graft/errors.h"
#include "ir/all_to_all_layout.h"
#include "ir/attr_access.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"
#include "runtime/buffer.h"
#include "runtime/communicator.h"

namespace graft::interpreter {
namespace {

using ir::Op;

const std::string& axis_name(const KernelCall& call) { return ir::attr<std::string>(call.attrs, "axis_name", call.op); }

// The replica running this kernel, checked to be mapped over the op's axis.
const runtime::Replica& replica(const KernelCall& call) {
  const runtime::Replica* r = runtime::current_replica();
  const std::string& name = axis_name(call);
  if (!r)
    throw UnsupportedError(std::string(ir::op_name(call.op)) + " over axis '" + name +
                           "' runs only inside pmap (or vmap, which batches it away); this graph was run outside both");
  if (r->axis_name != name)
    throw ShapeError(std::string(ir::op_name(call.op)) + ": axis '" + name + "' is not the pmap's axis '" +
                     r->axis_name + "'");
  return *r;
}

std::string describe(const KernelCall& call) {
  return std::string(ir::op_name(call.op)) + " " + ir::type_str(*call.inputs[0].type) + " over axis '" +
         axis_name(call) + "'";
}

// Every replica's operand, stacked on a new leading axis.
struct Stack {
  ir::ValueType type;
  runtime::BufferPtr buffer;
};

Stack gather_stack(const KernelCall& call, const runtime::Replica& r) {
  const ir::ValueType& t = *call.inputs[0].type;
  ir::ValueType stacked{t.dtype, t.shape};
  stacked.shape.insert(stacked.shape.begin(), r.communicator->size());
  Stack s{stacked, std::make_shared<runtime::Buffer>(stacked.num_bytes())};
  r.communicator->all_gather(r.rank, call.inputs[0].data, s.buffer->data(), t.num_bytes(), describe(call));
  return s;
}

// Reduces the stack's leading axis into `out` with the reduce kernel `op`.
void reduce_stack(Op op, const Stack& s, const KernelOut& out) {
  const ir::Attrs attrs{{"axes", ir::Ints{0}}};
  run_kernel(KernelCall{op, attrs, {{&s.type, s.buffer->data()}}, {out}});
}

void all_reduce_kernel(const KernelCall& call) {
  const runtime::Replica& r = replica(call);
  const Op reduce = call.op == Op::psum ? Op::reduce_sum : call.op == Op::pmax ? Op::reduce_max : Op::reduce_min;
  reduce_stack(reduce, gather_stack(call, r), call.outputs[0]);
}

}  // namespace

void psum_kernel(const KernelCall& call) { all_reduce_kernel(call); }
void pmax_kernel(const KernelCall& call) { all_reduce_kernel(call); }
void pmin_kernel(const KernelCall& call) { all_reduce_kernel(call); }

void all_gather_kernel(const KernelCall& call) {
  const runtime::Replica& r = replica(call);
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t axis = int_attr(call, "axis");
  if (axis == 0) {  // stacked or concatenated along axis 0: the gathered bytes as they come
    r.communicator->all_gather(r.rank, call.inputs[0].data, call.outputs[0].data, t.num_bytes(), describe(call));
    return;
  }
  // Stack on axis 0, then move that axis to `axis`. Tiled, the moved axis and
  // the one after it are one axis of the output: the bytes are the same.
  Stack s = gather_stack(call, r);
  ir::Ints permutation;
  for (int64_t d = 1; d <= axis; ++d) permutation.push_back(d);
  permutation.push_back(0);
  for (int64_t d = axis + 1; d < s.type.rank(); ++d) permutation.push_back(d);
  ir::ValueType moved{t.dtype, {}};
  for (int64_t d : permutation) moved.shape.push_back(s.type.shape[static_cast<size_t>(d)]);
  const ir::Attrs attrs{{"permutation", permutation}};
  run_kernel(KernelCall{Op::transpose, attrs, {{&s.type, s.buffer->data()}}, {{&moved, call.outputs[0].data}}});
}

void psum_scatter_kernel(const KernelCall& call) {
  const runtime::Replica& r = replica(call);
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t axis = int_attr(call, "axis");
  Stack s = gather_stack(call, r);
  runtime::Buffer sum(t.num_bytes());
  reduce_stack(Op::reduce_sum, s, {&t, sum.data()});
  // Replica r's slice along `axis`: a chunk of extent/size rows (one, untiled).
  const int64_t n = r.communicator->size();
  const int64_t extent = t.shape[static_cast<size_t>(axis)];
  const int64_t chunk = extent / n;
  int64_t outer = 1, inner = static_cast<int64_t>(ir::dtype_size(t.dtype));
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.shape[static_cast<size_t>(d)];
  const auto* src = static_cast<const char*>(sum.data());
  auto* dst = static_cast<char*>(call.outputs[0].data);
  const size_t piece = static_cast<size_t>(chunk * inner);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * piece, src + static_cast<size_t>((o * extent + r.rank * chunk) * inner),
                piece);
}

// Every replica's operand is gathered (n times the bytes a pairwise exchange
// would move: simple, and the communicator needs no third call); replica r
// keeps chunk r of each along split_axis, laid side by side along
// concat_axis, by one transpose of the stack.
void all_to_all_kernel(const KernelCall& call) {
  const runtime::Replica& r = replica(call);
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t split = int_attr(call, "split_axis");
  const int64_t concat = int_attr(call, "concat_axis");
  Stack s = gather_stack(call, r);
  const ir::AllToAllLayout l = ir::all_to_all_layout(t.shape, split, concat, r.communicator->size());
  const ir::ValueType split_type{t.dtype, l.split_stack}, moved{t.dtype, l.moved};
  runtime::Buffer all(s.type.num_bytes());
  const ir::Attrs attrs{{"permutation", ir::Ints(l.permutation)}};
  run_kernel(KernelCall{Op::transpose, attrs, {{&split_type, s.buffer->data()}}, {{&moved, all.data()}}});
  const size_t mine = t.num_bytes();  // the output has as many elements as the operand
  std::memcpy(call.outputs[0].data, static_cast<const char*>(all.data()) + static_cast<size_t>(r.rank) * mine, mine);
}

void ppermute_kernel(const KernelCall& call) {
  const runtime::Replica& r = replica(call);
  const ir::Ints& flat = ir::attr<ir::Ints>(call.attrs, "perm", call.op);
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    pairs.emplace_back(static_cast<int>(flat[i]), static_cast<int>(flat[i + 1]));
  const size_t bytes = call.inputs[0].type->num_bytes();
  if (!r.communicator->permute(r.rank, call.inputs[0].data, call.outputs[0].data, bytes, pairs, describe(call)))
    std::memset(call.outputs[0].data, 0, bytes);  // replicas that receive nothing get zeros
}

void axis_index_kernel(const KernelCall& call) {
  const int32_t rank = replica(call).rank;
  std::memcpy(call.outputs[0].data, &rank, sizeof rank);
}

}  // namespace graft::interpreter
