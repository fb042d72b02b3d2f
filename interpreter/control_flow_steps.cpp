#include "interpreter/control_flow_steps.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"

namespace graft::interpreter {
namespace {

int64_t int_attr(const KernelCall& call, const char* name) { return ir::attr<int64_t>(call.attrs, name, call.op); }

// Copies of operands [first, first + n).
Buffers copy_inputs(const KernelCall& call, size_t first, size_t n, const ControlFlowMemory& m) {
  Buffers out;
  out.reserve(n);
  for (size_t i = first; i < first + n; ++i) out.push_back(m.copy_in(call.inputs[i].data, call.inputs[i].type->num_bytes()));
  return out;
}

// Operands the bodies only read (never donated): views where the memory allows.
Buffers view_inputs(const KernelCall& call, size_t first, size_t n, const ControlFlowMemory& m) {
  if (!m.view) return copy_inputs(call, first, n, m);
  Buffers out;
  out.reserve(n);
  for (size_t i = first; i < first + n; ++i)
    out.push_back(m.view(call.inputs[i].data, call.inputs[i].type->num_bytes()));
  return out;
}

void copy_out(const runtime::BufferPtr& from, const KernelOut& to, const ControlFlowMemory& m) {
  if (const size_t bytes = to.type->num_bytes()) m.copy(to.data, from->data(), bytes);
}

Buffers concat(const Buffers& a, const Buffers& b) {
  Buffers out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

void run_cond(const KernelCall& call, size_t num_branches, const ControlFlowMemory& m, const RunBody& run) {
  const KernelIn& index = call.inputs.at(0);
  size_t k;
  if (index.type->dtype == DType::bool_) {
    uint8_t b = 0;
    m.read(&b, index.data, 1);
    k = b != 0 ? 1 : 0;
  } else {  // switch_: the i32 index clamped to the branches
    int32_t i = 0;
    m.read(&i, index.data, sizeof i);
    k = static_cast<size_t>(std::clamp<int64_t>(i, 0, static_cast<int64_t>(num_branches) - 1));
  }
  const Buffers outs = run(k, view_inputs(call, 1, call.inputs.size() - 1, m), {});
  for (size_t j = 0; j < outs.size(); ++j) copy_out(outs[j], call.outputs[j], m);
}

// GRAFT_WHILE_MAX_TRIPS=N: a while loop that would run more than N trips
// is an Error instead (a guard for generated or fuzzed programs whose loops
// may never end; unset, loops run as long as their predicate says).
static int64_t while_max_trips() {
  static const int64_t limit = [] {
    const char* s = std::getenv("GRAFT_WHILE_MAX_TRIPS");
    return s && *s ? std::max<int64_t>(0, std::strtoll(s, nullptr, 10)) : int64_t{-1};
  }();
  return limit;
}

void run_while(const KernelCall& call, const ControlFlowMemory& m, const RunBody& run) {
  const size_t cn = static_cast<size_t>(int_attr(call, "cond_nconsts"));
  const size_t bn = static_cast<size_t>(int_attr(call, "body_nconsts"));
  const size_t nc = call.inputs.size() - cn - bn;
  const Buffers cconsts = view_inputs(call, 0, cn, m);
  const Buffers bconsts = view_inputs(call, cn, bn, m);
  Buffers carry = copy_inputs(call, cn + bn, nc, m);  // the loop's own: a step may write over them
  // A carry's buffer is donated to the step unless it is also a constant's or
  // another carry's (a body may return an input as it is).
  std::vector<bool> carry_donated(bn + nc, false);
  auto owned_alone = [&](size_t k) {
    const runtime::Buffer* b = carry[k].get();
    for (const Buffers* others : {&cconsts, &bconsts})
      for (const runtime::BufferPtr& o : *others)
        if (o.get() == b) return false;
    for (size_t j = 0; j < nc; ++j)
      if (j != k && carry[j].get() == b) return false;
    return true;
  };
  const int64_t limit = while_max_trips();
  for (int64_t trips = 0;; ++trips) {
    const Buffers pred = run(0, concat(cconsts, carry), {});
    uint8_t go = 0;
    m.read(&go, pred.at(0)->data(), 1);
    if (go == 0) break;
    if (limit >= 0 && trips >= limit)
      throw Error("while: more than " + std::to_string(limit) + " iterations (the limit GRAFT_WHILE_MAX_TRIPS sets)");
    for (size_t k = 0; k < nc; ++k) carry_donated[bn + k] = owned_alone(k);
    carry = run(1, concat(bconsts, carry), carry_donated);
  }
  for (size_t k = 0; k < nc; ++k) copy_out(carry[k], call.outputs[k], m);
}

void run_scan(const KernelCall& call, const ControlFlowMemory& m, const RunBody& run) {
  const size_t nk = static_cast<size_t>(int_attr(call, "num_consts"));
  const size_t nc = static_cast<size_t>(int_attr(call, "num_carry"));
  const int64_t length = int_attr(call, "length");
  const bool reverse = int_attr(call, "reverse") != 0;
  const size_t nx = call.inputs.size() - nk - nc;
  const size_t ny = call.outputs.size() - nc;

  Buffers inputs = view_inputs(call, 0, nk, m);  // consts, then the carry
  const Buffers carry = copy_inputs(call, nk, nc, m);
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  inputs.resize(nk + nc + nx);
  // Bytes of one row (one slice along axis 0) of each xs and ys.
  std::vector<size_t> x_row(nx), y_row(ny);
  if (length > 0) {
    for (size_t j = 0; j < nx; ++j) x_row[j] = call.inputs[nk + nc + j].type->num_bytes() / static_cast<size_t>(length);
    for (size_t j = 0; j < ny; ++j) y_row[j] = call.outputs[nc + j].type->num_bytes() / static_cast<size_t>(length);
  }
  for (int64_t step = 0; step < length; ++step) {
    const size_t i = static_cast<size_t>(reverse ? length - 1 - step : step);
    for (size_t j = 0; j < nx; ++j)
      inputs[nk + nc + j] = m.copy_in(static_cast<const char*>(call.inputs[nk + nc + j].data) + i * x_row[j], x_row[j]);
    const Buffers outs = run(0, inputs, {});
    for (size_t j = 0; j < nc; ++j) inputs[nk + j] = outs[j];
    for (size_t j = 0; j < ny; ++j)
      if (y_row[j]) m.copy(static_cast<char*>(call.outputs[nc + j].data) + i * y_row[j], outs[nc + j]->data(), y_row[j]);
  }
  for (size_t j = 0; j < nc; ++j) copy_out(inputs[nk + j], call.outputs[j], m);
}

}  // namespace graft::interpreter
