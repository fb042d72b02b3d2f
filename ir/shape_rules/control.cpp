// Shape/dtype rules of control flow. Subgraphs take everything they use as
// explicit inputs (no implicit capture), so each rule checks their signatures.
//
// cond(index, args...)            branches: graphs (args) -> outs, all alike.
//                                 index is i32[] (clamped), or bool[] with
//                                 exactly two branches (false, true).
// while(cconsts.., bconsts.., init..)  cond: (cconsts.., carry..) -> bool[];
//                                 body: (bconsts.., carry..) -> carry..;
//                                 attrs cond_nconsts, body_nconsts.
// scan(consts.., init.., xs..)    body: (consts.., carry.., x slices..) ->
//                                 (carry.., y slices..); results are the
//                                 final carry and ys stacked on a new axis 0;
//                                 attrs num_consts, num_carry, length, reverse.
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

Types slice_types(const Types& ts, size_t first, size_t count) {
  return Types(ts.begin() + first, ts.begin() + first + count);
}

int64_t count_attr(const RuleCtx& c, const std::string& name, size_t limit) {
  int64_t n = c.attr_int(name);
  if (n < 0 || n > static_cast<int64_t>(limit))
    c.shape_error(name + " " + std::to_string(n) + " must be in [0, " + std::to_string(limit) + "]");
  return n;
}

}  // namespace

OutTypes cond_shape(const RuleCtx& c) {
  if (c.num_inputs() < 1) c.shape_error("needs an index operand");
  const ValueType& index = c.input(0);
  const Graphs& branches = c.attr_graphs("branches");
  if (branches.empty()) c.shape_error("needs at least one branch");
  if (index.rank() != 0) c.shape_error("index must be a scalar, got " + type_str(index));
  if (index.dtype == DType::bool_) {
    if (branches.size() != 2) c.shape_error("a bool predicate needs exactly two branches");
  } else if (index.dtype != DType::i32) {
    c.dtype_error(std::string("index must be i32 or bool, got ") + dtype_name(index.dtype));
  }
  Types args = slice_types(c.inputs(), 1, c.num_inputs() - 1);
  Types outs = branches[0]->output_types();
  for (size_t i = 0; i < branches.size(); ++i)
    c.check_signature(*branches[i], "branch " + std::to_string(i), args, &outs);
  return outs;
}

OutTypes while_loop_shape(const RuleCtx& c) {
  int64_t cn = count_attr(c, "cond_nconsts", c.num_inputs());
  int64_t bn = count_attr(c, "body_nconsts", c.num_inputs() - cn);
  // Reverse mode's memory bound: two sets of slots of at least one carry each.
  if (int64_t k = c.attr_int("checkpoints"); k < 2 || k > (int64_t{1} << 30))
    c.format_error("checkpoints " + std::to_string(k) + " is out of range (2 to 2^30 carries)");
  Types carry = slice_types(c.inputs(), cn + bn, c.num_inputs() - cn - bn);
  Types cond_in = slice_types(c.inputs(), 0, cn);
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  Types cond_out = {ValueType{DType::bool_, {}}};
  c.check_signature(c.attr_graph("cond"), "cond", cond_in, &cond_out);
  Types body_in = slice_types(c.inputs(), cn, bn);
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  c.check_signature(c.attr_graph("body"), "body", body_in, &carry);
  return carry;
}

OutTypes scan_shape(const RuleCtx& c) {
  int64_t nconsts = count_attr(c, "num_consts", c.num_inputs());
  int64_t ncarry = count_attr(c, "num_carry", c.num_inputs() - nconsts);
  int64_t length = c.attr_int("length");
  if (length < 0 || length > kMaxDim) c.shape_error("length " + std::to_string(length) + " is out of range");
  c.attr_bool("reverse");
  Types body_in = slice_types(c.inputs(), 0, nconsts + ncarry);
  for (size_t i = nconsts + ncarry; i < c.num_inputs(); ++i) {
    const ValueType& x = c.input(i);
    if (x.rank() == 0 || x.shape[0] != length)
      c.shape_error("scanned operand " + type_str(x) + " needs a leading axis of length " + std::to_string(length));
    body_in.push_back(ValueType{x.dtype, Shape(x.shape.begin() + 1, x.shape.end())});
  }
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", body_in, nullptr);
  Types body_out = body.output_types();
  Types carry = slice_types(c.inputs(), nconsts, ncarry);
  if (body_out.size() < carry.size() || slice_types(body_out, 0, carry.size()) != carry)
    c.shape_error("body must return the carry types first");
  Types out = carry;
  for (size_t i = carry.size(); i < body_out.size(); ++i) {
    Shape s = {length};
    s.insert(s.end(), body_out[i].shape.begin(), body_out[i].shape.end());
    c.check_shape(s, "stacked output");
    out.push_back(ValueType{body_out[i].dtype, s});
  }
  return out;
}

}  // namespace graft::ir
