// Flop and byte counts per node (ir/cost.h).
#include "ir/cost.h"

#include <algorithm>
#include <cmath>

#include "ir/attr_access.h"
#include "ir/dtype.h"

namespace graft::ir {
namespace {

double elements(const ValueType& t) { return static_cast<double>(t.num_elements()); }
double bytes(const ValueType& t) { return elements(t) * static_cast<double>(dtype_size(t.dtype)); }

double io_bytes(const Graph& g, const Node& n) {
  double b = 0;
  for (ValueId v : n.inputs) b += bytes(g.type(v));
  for (ValueId v : n.outputs) b += bytes(g.type(v));
  return b;
}

Cost times(Cost c, double k) {
  c.flops *= k;
  c.bytes *= k;
  return c;
}

const Graph& body(const Node& n, std::string_view name, size_t i = 0) { return *attr<Graphs>(n, name).at(i); }

// The flops of a node without bodies.
double own_flops(const Graph& g, const Node& n) {
  const double out = n.outputs.empty() ? 0 : elements(g.type(n.outputs[0]));
  switch (n.op) {
    case Op::dot_general: {
      const Shape& a = g.type(n.inputs[0]).shape;
      double contracted = 1;
      for (int64_t axis : ints_attr(n, "lhs_contracting"))
        contracted *= static_cast<double>(a[static_cast<size_t>(axis)]);
      return 2 * out * contracted;
    }
    case Op::conv_general_dilated: {
      // Each result element sums (input features per group) x (window) products.
      const ValueType& rhs = g.type(n.inputs[1]);
      const int64_t out_features = rhs.shape[static_cast<size_t>(ints_attr(n, "rhs_spec")[0])];
      return out_features > 0 ? 2 * out * elements(rhs) / static_cast<double>(out_features) : 0;
    }
    case Op::fft: {
      double n_fft = 1;
      for (int64_t len : ints_attr(n, "fft_lengths")) n_fft *= static_cast<double>(len);
      const double batch = n_fft > 0 ? std::max(elements(g.type(n.inputs[0])), out) / n_fft : 0;
      return n_fft > 1 ? 5 * n_fft * std::log2(n_fft) * batch : 0;
    }
    default: break;
  }
  switch (op_info(n.op).family) {
    case OpFamily::elementwise: return out;
    case OpFamily::reduce: return elements(g.type(n.inputs[0]));
    case OpFamily::window: {
      // reduce_window_*: a window per result element; the select ops: a window per operand element.
      double window = 1;
      for (int64_t d : ints_attr(n, "window_dimensions")) window *= static_cast<double>(d);
      const bool per_operand = n.op == Op::select_and_scatter_add || n.op == Op::select_and_gather_add;
      return (per_operand ? elements(g.type(n.inputs[0])) : out) * window;
    }
    default: return 0;
  }
}

}  // namespace

Cost node_cost(const Graph& g, const Node& n) {
  switch (n.op) {
    case Op::scan: return times(graph_cost(body(n, "body")), static_cast<double>(int_attr(n, "length")));
    case Op::while_loop: {
      Cost c = graph_cost(body(n, "cond"));
      c += graph_cost(body(n, "body"));
      c.per_trip = true;
      return c;
    }
    case Op::cond: {
      Cost most;
      for (const GraphPtr& branch : attr<Graphs>(n, "branches")) {
        const Cost c = graph_cost(*branch);
        if (c.flops > most.flops || (c.flops == most.flops && c.bytes > most.bytes)) most = c;
        most.per_trip = most.per_trip || c.per_trip;
      }
      return most;
    }
    case Op::custom_jvp_call:
    case Op::custom_vjp_call: return graph_cost(body(n, "call"));
    case Op::remat: return graph_cost(body(n, "body"));
    case Op::linear_call: return graph_cost(body(n, "fun"));
    case Op::pmap: return times(graph_cost(body(n, "body")), static_cast<double>(int_attr(n, "axis_size")));
    case Op::fusion: {
      Cost c = graph_cost(body(n, "body"));
      c.bytes = io_bytes(g, n);
      return c;
    }
    default: return Cost{own_flops(g, n), io_bytes(g, n), false};
  }
}

Cost graph_cost(const Graph& g) {
  Cost total;
  for (const Node& n : g.nodes()) total += node_cost(g, n);
  return total;
}

}  // namespace graft::ir
