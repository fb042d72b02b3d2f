#include "ir/shape_rules/rule.h"

namespace graft::ir {

void register_reduce_shape_rules(ShapeRuleTable&) {}

}  // namespace graft::ir
