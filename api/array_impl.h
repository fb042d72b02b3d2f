// What an Array handle points to: a concrete buffer, or a value of a trace.
#pragma once

#include <memory>

#include "ir/trace.h"
#include "ir/value.h"
#include "runtime/buffer.h"

namespace graft::detail {

struct ArrayImpl {
  ir::ValueType type;
  runtime::BufferPtr buffer;  // concrete arrays
  ir::TracePtr trace;         // traced arrays: the trace that owns `value`
  ir::ValueId value = -1;
  bool deleted = false;       // its buffer was donated

  bool traced() const { return trace != nullptr; }
};

std::shared_ptr<ArrayImpl> make_concrete(ir::ValueType type, runtime::BufferPtr buffer);
std::shared_ptr<ArrayImpl> make_traced(ir::ValueType type, ir::TracePtr trace, ir::ValueId value);
// A fresh, uninitialised concrete array of the given type.
std::shared_ptr<ArrayImpl> allocate_concrete(ir::ValueType type);

}  // namespace graft::detail
