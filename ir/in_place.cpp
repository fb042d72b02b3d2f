#include "ir/in_place.h"
#include "ir/attr_access.h"

#include "ir/op.h"

namespace graft::ir {

bool elementwise_in_place(const Node& node) {
  const OpInfo& info = op_info(node.op);
  if (info.family == OpFamily::elementwise) return info.inplace;
  if (node.op != Op::fusion) return false;
  for (const Node& b : ir::attr<Graphs>(node, "body").at(0)->nodes())
    if (op_info(b.op).family != OpFamily::elementwise && b.op != Op::broadcast_in_dim && b.op != Op::reshape &&
        b.op != Op::constant)
      return false;
  return true;
}

bool updates_first_operand_in_place(const Node& node) {
  const OpInfo& info = op_info(node.op);
  return info.family == OpFamily::indexing && info.inplace && !node.inputs.empty();
}

}  // namespace graft::ir
