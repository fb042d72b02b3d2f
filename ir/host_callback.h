// A C++ function that a callback node (pure_callback, io_callback) calls on
// the host. The API layer makes it, the interpreter's kernel calls it; the ir
// only carries it, as a node attribute of kind `callback`: its name for text
// and JSON, the types it returns for the shape rule.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/value.h"

namespace graft::ir {

// One call's buffers: operands to read, results to fill (host memory, typed
// as the node's operands and outputs).
struct HostCallbackCall {
  const std::vector<ValueType>& input_types;
  const std::vector<const void*>& inputs;
  const std::vector<ValueType>& output_types;
  const std::vector<void*>& outputs;
};

struct HostCallback {
  std::string name;                // "pure_callback at model.cpp:12": text, JSON and messages
  std::vector<ValueType> results;  // what the function returns, leaf by leaf
  SourceLoc loc;                   // the user's line that made it
  // Fills the outputs from the inputs; empty for a callback read from JSON,
  // which names a function this process cannot call.
  std::function<void(const HostCallbackCall&)> call;
};
using HostCallbackPtr = std::shared_ptr<const HostCallback>;

}  // namespace graft::ir
