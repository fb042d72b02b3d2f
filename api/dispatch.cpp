#include "api/dispatch.h"

#include <cstring>
#include <optional>

#include "api/array_impl.h"
#include "api/device_map.h"
#include "codegen/cuda/node_kernels.h"
#include "graft/errors.h"
#include "interpreter/debug_nans.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"
#include "interpreter/kernel_span.h"
#include "ir/dtype.h"
#include "ir/inline.h"
#include "ir/shape_rules/rule.h"
#include "ir/trace.h"
#include "runtime/cpu_share.h"
#include "runtime/device.h"

namespace graft::detail {

std::shared_ptr<ArrayImpl> make_concrete(ir::ValueType type, runtime::BufferPtr buffer) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->type = std::move(type);
  impl->buffer = std::move(buffer);
  return impl;
}

std::shared_ptr<ArrayImpl> make_traced(ir::ValueType type, ir::TracePtr trace, ir::ValueId value) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->type = std::move(type);
  impl->trace = std::move(trace);
  impl->value = value;
  return impl;
}

std::shared_ptr<ArrayImpl> allocate_concrete(ir::ValueType type) {
  size_t nbytes = static_cast<size_t>(type.num_elements()) * ir::dtype_size(type.dtype);
  return make_concrete(std::move(type), runtime::make_buffer(nbytes));
}

namespace {

// graft's API layer: the directory of this file.
std::string_view api_dir() {
  static const std::string dir = [] {
    const std::string self = std::source_location::current().file_name();
    return self.substr(0, self.rfind('/') + 1);
  }();
  return dir;
}

// Whether a call site is graft's own. Every eager op asks, so the answer for
// the last file is kept: a file's name is one literal per translation unit,
// compared by pointer.
bool inside_graft(const char* file) {
  thread_local const char* last_file = nullptr;
  thread_local bool last_inside = false;
  if (file != last_file) {
    const std::string_view f = file;
    last_file = file;
    last_inside = f.substr(0, api_dir().size()) == api_dir() || f.find("include/graft/") != std::string_view::npos;
  }
  return last_inside;
}

}  // namespace

ir::SourceLoc to_loc(const std::source_location& loc) {
  if (const ir::SourceLoc* composite = ir::composite_loc()) return *composite;
  thread_local ir::SourceLoc last_user_loc;
  if (inside_graft(loc.file_name())) return last_user_loc;
  const std::string_view file = loc.file_name();
  if (last_user_loc.file != file || last_user_loc.line != static_cast<int>(loc.line()))
    last_user_loc = ir::SourceLoc{file, loc.function_name(), static_cast<int>(loc.line())};
  return last_user_loc;
}

const ArrayImpl& checked_impl(const Array& a, const char* what) {
  if (!a.impl()) throw Error(std::string(what) + ": the Array is empty (default-constructed)");
  return *a.impl();
}

const ArrayImpl& live_impl(const Array& a, const char* what, const std::source_location* loc) {
  const ArrayImpl& impl = checked_impl(a, what);
  if (impl.deleted)
    throw DonatedArrayError(std::string(what) + ": this " + ir::type_str(impl.type) +
                            " Array's buffer was donated to a jitted call and is deleted" +
                            (loc ? " (used at " + ir::loc_str(to_loc(*loc)) + ")" : std::string()) +
                            "; use the jitted call's result instead");
  return impl;
}

std::string made_at(const ArrayImpl& impl) {
  if (!impl.traced()) return {};
  const auto& nodes = impl.trace->builder().graph().nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    for (ir::ValueId v : it->outputs)
      if (v == impl.value) return it->loc.empty() ? std::string() : " (made at " + ir::loc_str(it->loc) + ")";
  return {};
}

namespace {

// The value of `a` inside trace `t`: its own value, a capture from an
// enclosing trace, or a constant made from a concrete array.
ir::ValueId value_in(ir::Trace& t, const ArrayImpl& a, const ir::SourceLoc& loc) {
  if (a.traced()) {
    if (a.trace.get() == &t) {
      if (!t.alive()) throw TracerLeakError("a traced value was used after its trace ended");
      return a.value;
    }
    return t.capture(*a.trace, a.value);
  }
  const runtime::BufferPtr data = host_buffer(a);
  ir::Literal lit{a.type, std::vector<uint8_t>(data->size())};
  if (!lit.bytes.empty()) std::memcpy(lit.bytes.data(), data->data(), lit.bytes.size());  // an empty array may have no data
  return t.builder().add1(ir::Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}}, loc,
                          ir::current_scope());
}

}  // namespace

std::vector<Array> bind(ir::Op op, const std::vector<Array>& inputs, ir::Attrs attrs,
                        const std::source_location& where) {
  const std::string_view name = ir::op_name(op);
  if (const ir::TracePtr& trace = ir::current_trace()) {
    ir::SourceLoc loc = to_loc(where);
    std::vector<ir::ValueId> ids;
    ids.reserve(inputs.size());
    for (const Array& a : inputs) ids.push_back(value_in(*trace, live_impl(a, name.data(), &where), loc));
    std::vector<ir::ValueId> outs = trace->builder().add(op, std::move(ids), std::move(attrs), loc, ir::current_scope());
    std::vector<Array> result;
    result.reserve(outs.size());
    for (ir::ValueId v : outs) result.emplace_back(make_traced(trace->builder().type(v), trace, v));
    return result;
  }

  // Reused per thread: copying a type into a slot that already holds one
  // reuses its shape's storage, so a steady stream of eager ops allocates
  // nothing here.
  thread_local std::vector<ir::ValueType> in_types;
  in_types.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArrayImpl& impl = live_impl(inputs[i], name.data(), &where);
    if (impl.traced())
      throw TracerLeakError(std::string(name) + ": a traced value was used outside the transform that traced it (at " +
                            ir::loc_str(to_loc(where)) + "); return it from the function instead of storing it");
    in_types[i] = impl.type;
  }
  // The caller's location only matters for an error message, so the common
  // path skips building it; a failing rule is run again with it.
  ir::OutTypes out_types;
  try {
    out_types = ir::infer_output_types(op, in_types, attrs);
  } catch (const Error&) {
    ir::SourceLoc loc = to_loc(where);
    ir::infer_types(op, in_types, attrs, &loc);
    throw;
  }

  // The operand lists' storage is kept per thread and lent to each call.
  thread_local std::vector<interpreter::KernelIn> kernel_ins;
  thread_local std::vector<interpreter::KernelOut> kernel_outs;
  kernel_ins.clear();
  kernel_outs.clear();
  interpreter::KernelCall call{op, attrs, std::move(kernel_ins), std::move(kernel_outs)};
  // Outputs live where the first operand lives, and remember who made them.
  runtime::Device& device = inputs.empty() ? placement_device() : data_buffer(*inputs[0].impl())->device();
  std::optional<runtime::DeviceScope> on_device;
  if (&device != &runtime::current_device()) on_device.emplace(device);
  const ir::SourceLoc user = to_loc(where);  // a profile names the user's line, not graft's
  runtime::SiteScope site(runtime::intern_site(name, ir::current_scope(), user.file, user.function, user.line));
  // An operand the device cannot read where it is (GPU memory read by the
  // CPU, or host memory by a GPU) is copied to the device first.
  std::vector<runtime::BufferPtr> copied;
  for (const Array& a : inputs) {
    const runtime::BufferPtr& b = data_buffer(*a.impl());
    const void* data = b->data();
    if (&b->device() != &device && !(device.host_addressable() && b->device().host_addressable())) {
      copied.push_back(runtime::copy_onto(device, *b));
      data = copied.back()->data();
    }
    call.inputs.push_back({&a.impl()->type, data});
  }
  std::vector<Array> result;
  result.reserve(out_types.size());
  for (ir::ValueType& t : out_types) result.emplace_back(allocate_concrete(std::move(t)));
  for (const Array& r : result) call.outputs.push_back({&r.impl()->type, r.impl()->buffer->data()});
  if (device.host_addressable()) {
    // Ops this small run on one thread; others share the cores with other work.
    std::optional<runtime::ShareCpusWithOtherWork> share;
    if (!result.empty() && result[0].impl()->type.num_elements() >= (int64_t{1} << 15)) share.emplace();
    const interpreter::KernelSpan span(call, to_loc(where));  // a profiler span while a trace is on
    interpreter::run_kernel(call);
  } else {
    codegen::cuda::run_eager_op(call);
  }
  if (interpreter::debug_nans()) interpreter::check_nans(call, to_loc(where));
  kernel_ins = std::move(call.inputs);
  kernel_outs = std::move(call.outputs);
  return result;
}

std::vector<Array> call_graph(const ir::Graph& graph, const std::vector<Array>& inputs) {
  if (inputs.size() != graph.inputs().size())
    throw Error("call_graph: the graph takes " + std::to_string(graph.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  if (const ir::TracePtr& trace = ir::current_trace()) {
    std::vector<ir::ValueId> ids;
    for (const Array& a : inputs) ids.push_back(value_in(*trace, live_impl(a, "call"), {}));
    std::vector<ir::ValueId> outs = ir::inline_graph(trace->builder(), graph, ids);
    std::vector<Array> result;
    for (ir::ValueId v : outs) result.emplace_back(make_traced(trace->builder().type(v), trace, v));
    return result;
  }
  std::vector<runtime::BufferPtr> buffers;
  for (const Array& a : inputs) {
    const ArrayImpl& impl = live_impl(a, "call");
    if (impl.traced()) throw TracerLeakError("a traced value was used outside the transform that traced it");
    buffers.push_back(host_buffer(impl));  // the interpreter runs on the host
  }
  std::vector<runtime::BufferPtr> out = interpreter::evaluate(graph, buffers);
  std::vector<Array> result;
  for (size_t i = 0; i < out.size(); ++i) result.emplace_back(make_concrete(graph.type(graph.outputs()[i]), out[i]));
  return result;
}

Array bind1(ir::Op op, const std::vector<Array>& inputs, ir::Attrs attrs, const std::source_location& loc) {
  return bind(op, inputs, std::move(attrs), loc).at(0);
}

}  // namespace graft::detail
