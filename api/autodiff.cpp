// The non-template side of the autodiff wrappers.
#include "graft/autodiff.h"

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "transforms/jvp.h"

namespace graft::detail {

std::vector<Array> jvp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals,
                            const std::vector<Array>& tangents) {
  if (tangents.size() != primals.size())
    throw ShapeError("jvp: " + std::to_string(tangents.size()) + " tangent arrays for " +
                     std::to_string(primals.size()) + " primal arrays; they must have one structure");
  for (size_t i = 0; i < primals.size(); ++i) {
    const ir::ValueType& p = checked_impl(primals[i], "jvp").type;
    const ir::ValueType& t = checked_impl(tangents[i], "jvp").type;
    if (!ir::is_floating(p.dtype))
      throw DTypeError("jvp: primal " + std::to_string(i) + " is " + ir::type_str(p) +
                       "; only float arrays can be differentiated (pass integers as static values)");
    if (p != t)
      throw ShapeError("jvp: tangent " + std::to_string(i) + " is " + ir::type_str(t) + " but its primal is " +
                       ir::type_str(p));
  }
  std::vector<bool> has_tangent(primals.size(), true);
  has_tangent.resize(primals.size() + captured.size(), false);  // closed-over values are constants here
  ir::GraphPtr jg = transforms::jvp_graph(graph.ir(), has_tangent);
  std::vector<Array> inputs = primals;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  return call_graph(*jg, inputs);
}

}  // namespace graft::detail
