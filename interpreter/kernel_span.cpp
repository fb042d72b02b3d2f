#include "interpreter/kernel_span.h"

#include <cstdio>

#include "ir/attr_access.h"
#include "ir/cost.h"
#include "ir/op.h"
#include "runtime/trace_events.h"

namespace graft::interpreter {
namespace {

// "f32[16,64] f32[64,32] -> f32[16,32]"
std::string shapes_of(const KernelCall& call) {
  std::string s;
  for (const KernelIn& in : call.inputs) {
    s += ir::type_str(*in.type);
    s += ' ';
  }
  s += "->";
  for (const KernelOut& out : call.outputs) {
    s += ' ';
    s += ir::type_str(*out.type);
  }
  return s;
}

double bytes_of(const KernelCall& call) {
  double b = 0;
  for (const KernelIn& in : call.inputs) b += double(in.type->num_elements()) * double(ir::dtype_size(in.type->dtype));
  for (const KernelOut& out : call.outputs)
    b += double(out.type->num_elements()) * double(ir::dtype_size(out.type->dtype));
  return b;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string common_args(const KernelCall& call, const ir::SourceLoc& loc, const std::string& scope) {
  std::string a = "\"shapes\": \"" + runtime::json_escape(shapes_of(call)) + "\"";
  if (!loc.empty()) a += ", \"source\": \"" + runtime::json_escape(ir::loc_str(loc)) + "\"";
  if (!scope.empty()) a += ", \"scope\": \"" + runtime::json_escape(scope) + "\"";
  return a;
}

}  // namespace

KernelSpan::KernelSpan(const ir::Graph& graph, const ir::Node& n, const KernelCall& call) {
  if (!runtime::tracing()) return;
  on_ = true;
  kind_ = ir::family_name(ir::op_info(n.op).family);
  name_ = ir::op_name(n.op);
  if (n.op == ir::Op::fusion) {  // "fusion (tanh, mul, reduce_sum, +2)"
    const ir::Graph& body = *ir::attr<ir::Graphs>(n, "body").at(0);
    std::string ops;
    size_t shown = 0;
    for (const ir::Node& m : body.nodes()) {
      if (m.op == ir::Op::constant || m.op == ir::Op::broadcast_in_dim || m.op == ir::Op::reshape) continue;
      if (shown++ >= 6) continue;
      if (!ops.empty()) ops += ", ";
      ops += ir::op_name(m.op);
    }
    if (shown > 6) ops += ", +" + std::to_string(shown - 6);
    name_ += " (" + ops + ")";
  }
  const ir::Cost cost = ir::node_cost(graph, n);
  args_ =
      common_args(call, n.loc, n.scope) + ", \"bytes\": " + number(cost.bytes) + ", \"flops\": " + number(cost.flops);
  start_us_ = runtime::trace_now_us();
}

KernelSpan::KernelSpan(const KernelCall& call, const ir::SourceLoc& loc) {
  if (!runtime::tracing()) return;
  on_ = true;
  kind_ = ir::family_name(ir::op_info(call.op).family);
  name_ = std::string(ir::op_name(call.op)) + " (eager)";
  args_ = common_args(call, loc, "") + ", \"bytes\": " + number(bytes_of(call));
  start_us_ = runtime::trace_now_us();
}

KernelSpan::~KernelSpan() {
  if (on_) runtime::record_span(name_, kind_, start_us_, runtime::trace_now_us(), args_);
}

}  // namespace graft::interpreter
