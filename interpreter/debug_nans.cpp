#include "interpreter/debug_nans.h"
#include "ir/attr_access.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "graft/errors.h"
#include "ir/dtype.h"
#include "runtime/device.h"

namespace graft::interpreter {

bool debug_nans() {
  static const bool on = [] {
    const char* v = std::getenv("GRAFT_DEBUG_NANS");
    return v && std::string(v) == "1";
  }();
  return on;
}

namespace {

template <class T>
int64_t first_nan(const void* data, int64_t n) {
  const T* p = static_cast<const T*>(data);
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(p[i])) return i;
  return -1;
}

// The op's name; a fused kernel's is the list of the ops it runs.
std::string op_description(ir::Op op, const ir::Node* node) {
  if (!node || op != ir::Op::fusion) return std::string(ir::op_name(op));
  std::string s = "fusion of";
  const ir::Graph& body = *ir::attr<ir::Graphs>(*node, "body").at(0);
  const char* separator = " ";
  for (const ir::Node& b : body.nodes()) {
    if (b.op == ir::Op::constant) continue;
    s += separator;
    s += ir::op_name(b.op);
    separator = ", ";
  }
  return s;
}

}  // namespace

void check_nans(const KernelCall& call, const ir::SourceLoc& loc, const ir::Node* node) {
  // On a GPU the outputs are read through a host copy.
  runtime::DeviceTransfers* copies = runtime::current_device().transfers();
  for (size_t k = 0; k < call.outputs.size(); ++k) {
    const ir::ValueType& t = *call.outputs[k].type;
    if (t.dtype != DType::f32 && t.dtype != DType::f64) continue;
    const void* data = call.outputs[k].data;
    runtime::BufferPtr host;
    if (copies && t.num_elements() > 0) {
      const size_t bytes = static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype);
      host = std::make_shared<runtime::Buffer>(bytes, runtime::host_device());
      copies->to_host(host->data(), data, bytes);
      data = host->data();
    }
    int64_t at = -1;
    if (t.dtype == DType::f32) at = first_nan<float>(data, t.num_elements());
    if (t.dtype == DType::f64) at = first_nan<double>(data, t.num_elements());
    if (at < 0) continue;
    std::string msg = "GRAFT_DEBUG_NANS: ";
    msg += op_description(call.op, node);
    msg += " produced a NaN at flat index " + std::to_string(at) + " of output " + std::to_string(k) + " (" +
           ir::type_str(t) + ") from operands (";
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      if (i) msg += ", ";
      msg += ir::type_str(*call.inputs[i].type);
    }
    msg += ")";
    if (!loc.empty()) msg += " at " + ir::loc_str(loc);
    throw Error(msg);
  }
}

}  // namespace graft::interpreter
