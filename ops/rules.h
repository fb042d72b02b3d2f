// What every op family file sees: the interfaces its rules implement. An
// op's shape/dtype rule (ir/shape_rules/rule.h), JVP, transpose and batching
// rules (transforms/rules/*_rule.h) are declared from ops.def in
// namespace graft::ops, and each family file defines its ops' rules side by
// side, op by op, as JAX's lax/<family>.py does.
#pragma once

#include "ir/shape_rules/rule.h"
#include "transforms/rules/batch_rule.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::ops {

// Rules are written in the vocabulary of both layers they join.
using namespace graft::ir;
using namespace graft::transforms;

}  // namespace graft::ops
