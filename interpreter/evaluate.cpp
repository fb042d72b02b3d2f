#include "interpreter/evaluate.h"

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"

namespace graft::interpreter {

std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs) {
  if (inputs.size() != graph.inputs().size())
    throw Error("evaluate: the graph takes " + std::to_string(graph.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  const auto& nodes = graph.nodes();
  // The last node reading each value; graph outputs are read "after" every node.
  const int64_t kForever = static_cast<int64_t>(nodes.size());
  std::vector<int64_t> last_use(graph.value_id_bound(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (ir::ValueId v : nodes[i].inputs) last_use[v] = static_cast<int64_t>(i);
  for (ir::ValueId v : graph.outputs()) last_use[v] = kForever;

  std::vector<runtime::BufferPtr> values(graph.value_id_bound());
  for (size_t i = 0; i < inputs.size(); ++i) values[graph.inputs()[i]] = inputs[i];

  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    KernelCall call{n.op, n.attrs, {}, {}};
    for (ir::ValueId v : n.inputs) call.inputs.push_back({&graph.type(v), values[v]->data()});
    for (ir::ValueId v : n.outputs) {
      const ir::ValueType& t = graph.type(v);
      values[v] = runtime::make_buffer(static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
      call.outputs.push_back({&t, values[v]->data()});
    }
    run_kernel(call);
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

}  // namespace graft::interpreter
