// CPU kernels of control flow: cond runs one branch's graph, while and scan
// run their body graphs in a loop (see ir/shape_rules/control.cpp for the
// operand layout). Operands are copied once into owned buffers; buffers the
// body graphs return become the next step's inputs without copying (the
// graph walker never writes into an input). scan copies one row of each xs
// into a fresh buffer per step and writes each y row straight into place.
#include <algorithm>
#include <cstring>

#include "interpreter/evaluate.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/loops.h"

namespace graft::interpreter {
namespace {

using Buffers = std::vector<runtime::BufferPtr>;

size_t bytes_of(const ir::ValueType& t) { return static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype); }

runtime::BufferPtr copy_in(const void* data, size_t bytes) {
  runtime::BufferPtr b = runtime::make_buffer(bytes);
  if (bytes) std::memcpy(b->data(), data, bytes);
  return b;
}

// Owned copies of inputs [first, first + n).
Buffers copy_inputs(const KernelCall& call, size_t first, size_t n) {
  Buffers out;
  out.reserve(n);
  for (size_t i = first; i < first + n; ++i) out.push_back(copy_in(call.inputs[i].data, bytes_of(*call.inputs[i].type)));
  return out;
}

void copy_out(const runtime::BufferPtr& from, const KernelOut& to) {
  size_t bytes = bytes_of(*to.type);
  if (bytes) std::memcpy(to.data, from->data(), bytes);
}

const ir::Graph& graph_attr(const KernelCall& call, const char* name) {
  return *ir::attr<ir::Graphs>(call.attrs, name, call.op).at(0);
}

Buffers concat(const Buffers& a, const Buffers& b) {
  Buffers out;
  out.reserve(a.size() + b.size());
  out.insert(out.end(), a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

void cond_kernel(const KernelCall& call) {
  const ir::Graphs& branches = ir::attr<ir::Graphs>(call.attrs, "branches", call.op);
  const KernelIn& index = call.inputs.at(0);
  int64_t i;
  if (index.type->dtype == DType::bool_) {
    i = *static_cast<const uint8_t*>(index.data) != 0 ? 1 : 0;
  } else {
    i = *static_cast<const int32_t*>(index.data);
    i = std::clamp<int64_t>(i, 0, static_cast<int64_t>(branches.size()) - 1);
  }
  Buffers outs = evaluate(*branches[static_cast<size_t>(i)], copy_inputs(call, 1, call.inputs.size() - 1));
  for (size_t k = 0; k < outs.size(); ++k) copy_out(outs[k], call.outputs[k]);
}

void while__kernel(const KernelCall& call) {
  const ir::Graph& cond = graph_attr(call, "cond");
  const ir::Graph& body = graph_attr(call, "body");
  const size_t cn = static_cast<size_t>(int_attr(call, "cond_nconsts"));
  const size_t bn = static_cast<size_t>(int_attr(call, "body_nconsts"));
  const size_t nc = call.inputs.size() - cn - bn;
  const Buffers cconsts = copy_inputs(call, 0, cn);
  const Buffers bconsts = copy_inputs(call, cn, bn);
  Buffers carry = copy_inputs(call, cn + bn, nc);
  for (;;) {
    Buffers pred = evaluate(cond, concat(cconsts, carry));
    if (*static_cast<const uint8_t*>(pred.at(0)->data()) == 0) break;
    carry = evaluate(body, concat(bconsts, carry));
  }
  for (size_t k = 0; k < nc; ++k) copy_out(carry[k], call.outputs[k]);
}

void scan_kernel(const KernelCall& call) {
  const ir::Graph& body = graph_attr(call, "body");
  const size_t nk = static_cast<size_t>(int_attr(call, "num_consts"));
  const size_t nc = static_cast<size_t>(int_attr(call, "num_carry"));
  const int64_t length = int_attr(call, "length");
  const bool reverse = int_attr(call, "reverse") != 0;
  const size_t nx = call.inputs.size() - nk - nc;
  const size_t ny = call.outputs.size() - nc;

  Buffers inputs = copy_inputs(call, 0, nk + nc);  // consts, then the carry
  inputs.resize(nk + nc + nx);
  // Bytes of one row (one slice along axis 0) of each xs and ys.
  std::vector<size_t> x_row(nx), y_row(ny);
  if (length > 0) {
    for (size_t j = 0; j < nx; ++j) x_row[j] = bytes_of(*call.inputs[nk + nc + j].type) / static_cast<size_t>(length);
    for (size_t j = 0; j < ny; ++j) y_row[j] = bytes_of(*call.outputs[nc + j].type) / static_cast<size_t>(length);
  }
  for (int64_t step = 0; step < length; ++step) {
    const size_t i = static_cast<size_t>(reverse ? length - 1 - step : step);
    for (size_t j = 0; j < nx; ++j)
      inputs[nk + nc + j] = copy_in(static_cast<const char*>(call.inputs[nk + nc + j].data) + i * x_row[j], x_row[j]);
    Buffers outs = evaluate(body, inputs);
    for (size_t j = 0; j < nc; ++j) inputs[nk + j] = outs[j];
    for (size_t j = 0; j < ny; ++j)
      if (y_row[j]) std::memcpy(static_cast<char*>(call.outputs[nc + j].data) + i * y_row[j], outs[nc + j]->data(), y_row[j]);
  }
  for (size_t j = 0; j < nc; ++j) copy_out(inputs[nk + j], call.outputs[j]);
}

}  // namespace graft::interpreter
