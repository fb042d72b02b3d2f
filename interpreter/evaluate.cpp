#include "interpreter/evaluate.h"

#include <algorithm>

#include "ir/attr_access.h"

#include "interpreter/debug_nans.h"

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "interpreter/kernel_span.h"
#include "ir/dtype.h"
#include "ir/in_place.h"
#include "runtime/allocation_site.h"
#include "runtime/device.h"

#include <cstring>
#include <optional>

namespace graft::interpreter {

namespace {

// For each graph value that a donated input's buffer should hold: the index of
// that input (-1 elsewhere). An output takes a donated input of the same byte
// size that is dead once the output's node runs, that the node reads
// elementwise (each element read before it is written), or that the node
// updates in place as its operand 0 (ir/in_place.h).
std::vector<int64_t> plan_donations(const ir::Graph& graph, const std::vector<bool>& donated,
                                    const std::vector<int64_t>& last_use) {
  std::vector<int64_t> take(graph.value_id_bound(), -1);
  std::vector<bool> is_output(graph.value_id_bound(), false);
  for (ir::ValueId v : graph.outputs()) is_output[v] = true;
  std::vector<bool> used(donated.size(), false);
  auto bytes = [&](ir::ValueId v) {
    const ir::ValueType& t = graph.type(v);
    return static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype);
  };
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    const bool elementwise = ir::elementwise_in_place(n);
    for (ir::ValueId v : n.outputs) {
      if (!is_output[v] || take[v] >= 0) continue;
      for (size_t d = 0; d < donated.size(); ++d) {
        if (!donated[d] || used[d]) continue;
        ir::ValueId in = graph.inputs()[d];
        if (bytes(in) != bytes(v) || is_output[in]) continue;
        const bool dead_before = last_use[in] < static_cast<int64_t>(i);
        const bool last_read_here = last_use[in] == static_cast<int64_t>(i);
        const bool read_in_place = last_read_here && elementwise && graph.type(in).shape == graph.type(v).shape;
        // dynamic_update_slice, scatter_add: only the window is written over a
        // dying operand 0 (a while body's buffer carry costs no copy per step).
        const bool updated_in_place = last_read_here && ir::updates_first_operand_in_place(n) && n.inputs[0] == in &&
                                      v == n.outputs[0] && std::count(n.inputs.begin(), n.inputs.end(), in) == 1;
        if (!dead_before && !read_in_place && !updated_in_place) continue;
        take[v] = static_cast<int64_t>(d);
        used[d] = true;
        break;
      }
    }
  }
  return take;
}

std::vector<int64_t> last_uses(const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  const int64_t kForever = static_cast<int64_t>(nodes.size());
  std::vector<int64_t> last_use(graph.value_id_bound(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (ir::ValueId v : nodes[i].inputs) last_use[v] = static_cast<int64_t>(i);
  for (ir::ValueId v : graph.outputs()) last_use[v] = kForever;
  return last_use;
}

}  // namespace

std::vector<int64_t> donation_plan(const ir::Graph& graph, const std::vector<bool>& donated) {
  std::vector<int64_t> take = plan_donations(graph, donated, last_uses(graph));
  std::vector<int64_t> by_input(donated.size(), -1);
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    int64_t d = take[graph.outputs()[k]];
    if (d >= 0 && by_input[static_cast<size_t>(d)] < 0) by_input[static_cast<size_t>(d)] = static_cast<int64_t>(k);
  }
  return by_input;
}

std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs) {
  return evaluate(graph, inputs, {}, nullptr);
}

std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs,
                                         const std::vector<bool>& donated, std::vector<bool>* reused) {
  EvaluateOptions options{donated, reused, nullptr};
  return evaluate(graph, inputs, options);
}

std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs,
                                         const EvaluateOptions& options) {
  const std::vector<bool>& donated = options.donated;
  std::vector<bool>* reused = options.reused;
  const std::vector<NodeKernel>* node_kernels = options.node_kernels;
  if (inputs.size() != graph.inputs().size())
    throw Error("evaluate: the graph takes " + std::to_string(graph.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  const auto& nodes = graph.nodes();
  // The last node reading each value; graph outputs are read "after" every node.
  const std::vector<int64_t> last_use = last_uses(graph);
  std::vector<int64_t> take;
  if (!donated.empty()) take = plan_donations(graph, donated, last_use);
  if (reused) reused->assign(donated.size(), false);

  std::vector<runtime::BufferPtr> values(graph.value_id_bound());
  runtime::BufferPtr arena;
  if (options.arena_offsets && options.arena_bytes > 0)
    arena = runtime::make_buffer(static_cast<size_t>(options.arena_bytes));
  for (size_t i = 0; i < inputs.size(); ++i) values[graph.inputs()[i]] = inputs[i];

  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    KernelCall call{n.op, n.attrs, {}, {}};
    // Buffers made for this node are attributed to the user's line that
    // traced it; a node without one keeps the caller's site.
    std::optional<runtime::SiteScope> site;
    if (!n.loc.empty())
      site.emplace(runtime::intern_site(ir::op_name(n.op), n.scope, n.loc.file, n.loc.function, n.loc.line));
    for (ir::ValueId v : n.inputs) call.inputs.push_back({&graph.type(v), values[v]->data()});
    for (ir::ValueId v : n.outputs) {
      const ir::ValueType& t = graph.type(v);
      if (!take.empty() && take[v] >= 0) {
        values[v] = inputs[static_cast<size_t>(take[v])];
        if (reused) (*reused)[static_cast<size_t>(take[v])] = true;
      } else if (arena && (*options.arena_offsets)[v] >= 0) {
        values[v] = std::make_shared<runtime::Buffer>(arena, static_cast<size_t>((*options.arena_offsets)[v]),
                                                      static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
      } else {
        values[v] = runtime::make_buffer(static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
      }
      call.outputs.push_back({&t, values[v]->data()});
    }
    // GRAFT_DEBUG_NANS: a fused kernel that makes a NaN is run again op by
    // op on copies of its operands (taken now: an output may overwrite one),
    // so the error names the op and the line inside it, as JAX re-runs un-jitted.
    // On a GPU the copies are taken to the host, where the op-by-op run happens.
    std::vector<runtime::BufferPtr> operand_copies;
    runtime::DeviceTransfers* transfers = runtime::current_device().transfers();
    if (debug_nans() && n.op == ir::Op::fusion)
      for (const KernelIn& in : call.inputs) {
        const size_t bytes = static_cast<size_t>(in.type->num_elements()) * ir::dtype_size(in.type->dtype);
        operand_copies.push_back(std::make_shared<runtime::Buffer>(
            bytes, transfers ? runtime::host_device() : runtime::current_device()));
        if (bytes && transfers) transfers->to_host(operand_copies.back()->data(), in.data, bytes);
        else if (bytes) std::memcpy(operand_copies.back()->data(), in.data, bytes);
      }
    {
      const KernelSpan span(graph, n, call);  // a profiler span while a trace is on
      if (node_kernels && i < node_kernels->size() && (*node_kernels)[i])
        (*node_kernels)[i](call);
      else
        run_kernel(call);
    }
    if (debug_nans()) {
      try {
        check_nans(call, n.loc, &n);
      } catch (const Error&) {
        if (n.op == ir::Op::fusion) {
          std::optional<runtime::DeviceScope> on_host;
          if (transfers) on_host.emplace(runtime::host_device());
          evaluate(*ir::attr<ir::Graphs>(n, "body").at(0), operand_copies);
        }
        throw;  // the op-by-op run found none: report the fused kernel
      }
    }
    for (ir::ValueId v : n.inputs)
      if (last_use[v] == static_cast<int64_t>(i)) values[v].reset();
    for (ir::ValueId v : n.outputs)
      if (last_use[v] < 0) values[v].reset();  // never read
  }

  std::vector<runtime::BufferPtr> out;
  out.reserve(graph.outputs().size());
  for (ir::ValueId v : graph.outputs()) out.push_back(values[v]);
  return out;
}

void evaluate_call(const ir::Graph& body, const KernelCall& call) {
  std::vector<runtime::BufferPtr> inputs;
  for (const KernelIn& in : call.inputs) {
    const size_t bytes = static_cast<size_t>(in.type->num_elements()) * ir::dtype_size(in.type->dtype);
    runtime::BufferPtr b = runtime::make_buffer(bytes);
    if (bytes) std::memcpy(b->data(), in.data, bytes);
    inputs.push_back(b);
  }
  std::vector<runtime::BufferPtr> outputs = evaluate(body, inputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ir::ValueType& t = *call.outputs[k].type;
    const size_t bytes = static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype);
    if (bytes) std::memcpy(call.outputs[k].data, outputs[k]->data(), bytes);
  }
}

}  // namespace graft::interpreter
