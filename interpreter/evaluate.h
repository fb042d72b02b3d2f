// The graph walker: runs nodes in order with the interpreter's kernels and
// frees each intermediate buffer right after its last use.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "runtime/buffer.h"

namespace graft::interpreter {

// inputs[i] holds graph.inputs()[i]; returns one buffer per graph output.
std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs);

}  // namespace graft::interpreter
