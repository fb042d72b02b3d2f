#include "ir/shape_rules/rule.h"

#include <algorithm>

#include "graft/errors.h"
#include "ir/attr_schema.h"
#include "ir/dtype.h"

namespace graft::ir {

std::string RuleCtx::context() const {
  std::string s = " (operands: ";
  if (inputs_.empty()) s += "none";
  for (size_t i = 0; i < inputs_.size(); ++i) s += (i ? ", " : "") + type_str(inputs_[i]);
  s += ")";
  if (node_id_ >= 0) s += " at node " + std::to_string(node_id_);
  if (loc_ && !loc_->empty()) s += " at " + loc_str(*loc_);
  return s;
}

void RuleCtx::shape_error(const std::string& what) const {
  throw ShapeError(std::string(op_name(op_)) + ": " + what + context());
}

void RuleCtx::dtype_error(const std::string& what) const {
  throw DTypeError(std::string(op_name(op_)) + ": " + what + context());
}

void RuleCtx::format_error(const std::string& what) const {
  throw GraphFormatError(std::string(op_name(op_)) + ": " + what + context());
}

const AttrValue& RuleCtx::attr(const std::string& name, AttrKind kind) const {
  const AttrValue* v = attrs_.find(name);
  if (!v) format_error(std::string("missing ") + attr_kind_name(kind) + " attribute '" + name + "'");
  if (attr_kind(*v) != kind)
    format_error("attribute '" + name + "' must be " + attr_kind_name(kind) + ", not " +
                attr_kind_name(attr_kind(*v)));
  return *v;
}

int64_t RuleCtx::attr_int(const std::string& n) const { return std::get<int64_t>(attr(n, AttrKind::int_)); }
const Ints& RuleCtx::attr_ints(const std::string& n) const { return std::get<Ints>(attr(n, AttrKind::ints)); }
double RuleCtx::attr_float(const std::string& n) const { return std::get<double>(attr(n, AttrKind::float_)); }
DType RuleCtx::attr_dtype(const std::string& n) const { return std::get<DType>(attr(n, AttrKind::dtype)); }
const std::string& RuleCtx::attr_string(const std::string& n) const {
  return std::get<std::string>(attr(n, AttrKind::string));
}
const Graphs& RuleCtx::attr_graphs(const std::string& n) const {
  const Graphs& gs = std::get<Graphs>(attr(n, AttrKind::graphs));
  for (const GraphPtr& g : gs)
    if (!g) format_error("attribute '" + n + "' holds a null graph");
  return gs;
}
const Graph& RuleCtx::attr_graph(const std::string& n) const {
  const Graphs& gs = attr_graphs(n);
  if (gs.size() != 1) shape_error("attribute '" + n + "' must hold exactly one graph, not " + std::to_string(gs.size()));
  return *gs[0];
}
const Literal& RuleCtx::attr_literal(const std::string& n) const {
  const LiteralPtr& p = std::get<LiteralPtr>(attr(n, AttrKind::literal));
  if (!p) format_error("attribute '" + n + "' holds a null literal");
  return *p;
}

const HostCallback& RuleCtx::attr_callback(const std::string& n) const {
  const HostCallbackPtr& p = std::get<HostCallbackPtr>(attr(n, AttrKind::callback));
  if (!p) format_error("attribute '" + n + "' holds a null callback");
  return *p;
}
bool RuleCtx::attr_bool(const std::string& n) const {
  int64_t v = attr_int(n);
  if (v != 0 && v != 1) shape_error("attribute '" + n + "' must be 0 or 1, not " + std::to_string(v));
  return v == 1;
}

int RuleCtx::axis(int64_t axis, int rank, const std::string& what) const {
  if (axis < 0 || axis >= rank)
    shape_error(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis);
}

void RuleCtx::check_shape(const Shape& shape, const std::string& what) const {
  if (shape.size() > static_cast<size_t>(kMaxRank)) shape_error(what + " has rank above " + std::to_string(kMaxRank));
  for (int64_t d : shape)
    if (d < 0 || d > kMaxDim) shape_error(what + " " + shape_str(shape) + " has a dimension outside [0, 2^40]");
  if (checked_num_elements(shape) < 0) shape_error(what + " " + shape_str(shape) + " has too many elements");
}

void RuleCtx::check_same_dtype(const ValueType& a, const ValueType& b) const {
  if (a.dtype != b.dtype)
    dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
}

void RuleCtx::check_permutation(const Ints& perm, int rank, const std::string& what) const {
  if (static_cast<int>(perm.size()) != rank)
    shape_error(what + " " + shape_str(perm) + " must have " + std::to_string(rank) + " entries");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) shape_error(what + " " + shape_str(perm) + " is not a permutation");
    seen[p] = true;
  }
}

namespace {
std::string types_str(const std::vector<ValueType>& ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + type_str(ts[i]);
  return s + ")";
}
}  // namespace

void RuleCtx::check_signature(const Graph& g, const std::string& what, const std::vector<ValueType>& in,
                              const std::vector<ValueType>* out) const {
  std::vector<ValueType> gin = g.input_types();
  if (gin != in) shape_error(what + " takes " + types_str(gin) + " but is given " + types_str(in));
  if (out) {
    std::vector<ValueType> gout = g.output_types();
    if (gout != *out) shape_error(what + " returns " + types_str(gout) + " but must return " + types_str(*out));
  }
}

void check_accepted_dtype(const RuleCtx& c, DType d) {
  if (accepts_dtype(op_info(c.op()).dtypes, d)) return;
  const char* want = "";
  switch (op_info(c.op()).dtypes) {
    case DTypeClass::floats: want = "a real float dtype (f16, bf16, f32, f64)"; break;
    case DTypeClass::inexact: want = "a float dtype (f16, bf16, f32, f64) or a complex one"; break;
    case DTypeClass::numbers: want = "a real numeric dtype"; break;
    case DTypeClass::all_numbers: want = "a numeric dtype"; break;
    case DTypeClass::complex: want = "a complex dtype (c64, c128)"; break;
    case DTypeClass::real: want = "an ordered (not complex) dtype"; break;
    case DTypeClass::signed_numbers: want = "a signed numeric dtype"; break;
    case DTypeClass::ints: want = "an integer dtype"; break;
    case DTypeClass::ints_or_bool: want = "an integer or bool dtype"; break;
    case DTypeClass::lapack: want = "f32, f64, c64 or c128 (the types LAPACK computes in)"; break;
    case DTypeClass::any: break;
  }
  c.dtype_error(std::string("needs ") + want + ", got " + dtype_name(d));
}

namespace {

ShapeRuleTable build_shape_rule_table() {
  ShapeRuleTable t{};
  // Filled from ops.def's `shape` column: the op's own rule or a standard one.
#define GRAFT_SHAPE_OWN(ident) ops::ident##_shape
#define GRAFT_SHAPE_SAME_TYPE(ident) ops::same_type_rule
#define GRAFT_SHAPE_BOOL_RESULT(ident) ops::bool_result_rule
#define GRAFT_SHAPE_REDUCES_AXES(ident) ops::reduces_axes_rule
#define GRAFT_SHAPE_REDUCES_AXIS(ident) ops::reduces_axis_rule
#define GRAFT_SHAPE_SCANS_AXIS(ident) ops::scans_axis_rule
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, ...) \
  t[static_cast<size_t>(Op::ident)] = GRAFT_SHAPE_##shape(ident);
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_SHAPE_OWN
#undef GRAFT_SHAPE_SAME_TYPE
#undef GRAFT_SHAPE_BOOL_RESULT
#undef GRAFT_SHAPE_REDUCES_AXES
#undef GRAFT_SHAPE_REDUCES_AXIS
#undef GRAFT_SHAPE_SCANS_AXIS
  return t;
}

}  // namespace

ShapeRule shape_rule(Op op) {
  static const ShapeRuleTable table = build_shape_rule_table();
  return table[static_cast<size_t>(op)];
}

std::vector<ValueType> OutTypes::to_vector() && {
  if (!single_) return std::move(many_);
  std::vector<ValueType> out;
  out.push_back(std::move(one_));
  return out;
}

std::vector<ValueType> infer_types(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs,
                                   const SourceLoc* loc, int node_id) {
  return infer_output_types(op, inputs, attrs, loc, node_id).to_vector();
}

OutTypes infer_output_types(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs, const SourceLoc* loc,
                            int node_id) {
  RuleCtx ctx(op, inputs, attrs, loc, node_id);
  int arity = op_info(op).arity;
  if (arity != kVariadic && static_cast<int>(inputs.size()) != arity)
    ctx.shape_error("takes " + std::to_string(arity) + " operand(s), got " + std::to_string(inputs.size()));
  if (std::string why = attr_schema_violation(op, attrs); !why.empty()) ctx.format_error(why);
  ShapeRule rule = shape_rule(op);
  if (!rule) throw UnsupportedError(std::string(op_name(op)) + ": no shape rule");
  OutTypes out = rule(ctx);
  // Whatever the rule allowed, a result must be addressable: its byte count
  // is computed in many places, and an overflow there would be a tiny buffer.
  for (const ValueType& t : out)
    if (checked_num_elements(t.shape) < 0)
      ctx.shape_error("the result " + type_str(t) + " has more elements than fit in memory (at most 2^60)");
  return out;
}

}  // namespace graft::ir
