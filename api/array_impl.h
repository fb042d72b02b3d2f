// What an Array handle points to: a concrete buffer, or a value of a trace.
#pragma once

#include <memory>
#include <vector>

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
  bool writable = false;      // a host callback's output view, while the callback runs (graft/callback.h)
  // A sharded array (a pmap result): one buffer per device, shard i holding
  // index i of axis 0. `buffer` stays empty until the whole array is read
  // (data_buffer), so the next pmap call takes the shards where they are.
  std::vector<runtime::BufferPtr> shards;

  bool traced() const { return trace != nullptr; }
};

std::shared_ptr<ArrayImpl> make_concrete(ir::ValueType type, runtime::BufferPtr buffer);
std::shared_ptr<ArrayImpl> make_traced(ir::ValueType type, ir::TracePtr trace, ir::ValueId value);
// The buffer holding a concrete array's elements; a sharded array's shards
// are first assembled into one buffer on the current device (once).
const runtime::BufferPtr& data_buffer(const ArrayImpl& impl);
// The elements where the CPU can read them: data_buffer itself on a CPU
// device, a fresh host copy of a GPU buffer (which waits for the GPU).
runtime::BufferPtr host_buffer(const ArrayImpl& impl);
// A fresh, uninitialised concrete array of the given type.
std::shared_ptr<ArrayImpl> allocate_concrete(ir::ValueType type);

}  // namespace graft::detail
