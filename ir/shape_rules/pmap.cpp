// Shape/dtype rule of pmap, a function run once per device.
//
// pmap(args..)  body: one replica's args -> one replica's outs. A mapped
//               operand (in_dims[i] >= 0) has mapped_size at that dimension
//               and the body sees it without; a replicated one (-1) is seen
//               whole. Outputs stack the replicas' results at out_dims[k]
//               (mapped_size inserted there), or are replica 0's (-1).
//               axis_size (every process's replicas) is a multiple of
//               mapped_size; devices is empty or lists axis_size ids.
#include <string>

#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes pmap_shape(const RuleCtx& c) {
  c.attr_string("axis_name");  // may be empty: a body without collectives needs no name
  const int64_t n = c.attr_int("mapped_size");
  const int64_t total = c.attr_int("axis_size");
  if (n < 1 || n > (int64_t{1} << 20)) c.shape_error("mapped_size " + std::to_string(n) + " is out of range");
  if (total < n || total % n != 0)
    c.shape_error("axis_size " + std::to_string(total) + " is not a multiple of mapped_size " + std::to_string(n));
  const Ints& devices = c.attr_ints("devices");
  if (!devices.empty() && static_cast<int64_t>(devices.size()) != total)
    c.shape_error("devices lists " + std::to_string(devices.size()) + " ids for axis_size " + std::to_string(total));
  const Ints& in_dims = c.attr_ints("in_dims");
  if (in_dims.size() != c.num_inputs())
    c.shape_error("in_dims has " + std::to_string(in_dims.size()) + " entries for " + std::to_string(c.num_inputs()) +
                  " operands");
  std::vector<ValueType> replica_in;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    ValueType t = c.input(i);
    const int64_t d = in_dims[i];
    if (d != -1) {
      const int axis = c.axis(d, t.rank(), "in_dims[" + std::to_string(i) + "]");
      if (t.shape[static_cast<size_t>(axis)] != n)
        c.shape_error("operand " + std::to_string(i) + " " + type_str(t) + " has size " +
                      std::to_string(t.shape[static_cast<size_t>(axis)]) + " at its mapped dimension " +
                      std::to_string(d) + ", not mapped_size " + std::to_string(n));
      t.shape.erase(t.shape.begin() + axis);
    }
    replica_in.push_back(std::move(t));
  }
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", replica_in, nullptr);
  std::vector<ValueType> outs = body.output_types();
  const Ints& out_dims = c.attr_ints("out_dims");
  if (out_dims.size() != outs.size())
    c.shape_error("out_dims has " + std::to_string(out_dims.size()) + " entries for " + std::to_string(outs.size()) +
                  " body outputs");
  for (size_t k = 0; k < outs.size(); ++k) {
    const int64_t d = out_dims[k];
    if (d == -1) continue;
    const int axis = c.axis(d, outs[k].rank() + 1, "out_dims[" + std::to_string(k) + "]");
    outs[k].shape.insert(outs[k].shape.begin() + axis, n);
  }
  return outs;
}

}  // namespace graft::ir
