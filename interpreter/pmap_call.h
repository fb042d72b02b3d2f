// Running a pmap node given a way to run its body on one replica: the
// interpreter's kernel evaluates the body (interpreter/kernels/pmap.cpp);
// jit passes the body's own compiled executable.
#pragma once

#include <functional>
#include <vector>

#include "interpreter/kernel.h"
#include "runtime/buffer.h"

namespace graft::interpreter {

// One replica's body: its input slices (on its device) -> its outputs.
using ReplicaBody = std::function<std::vector<runtime::BufferPtr>(const std::vector<runtime::BufferPtr>& inputs)>;

// Splits the node's operands over this process's replicas, runs `body` on
// each replica's device thread with collectives bound, and stacks the
// replicas' outputs into the node's outputs.
void run_pmap_call(const KernelCall& call, const ReplicaBody& body);

}  // namespace graft::interpreter
