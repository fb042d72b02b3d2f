#include "ir/shape_rules/rule.h"

namespace graft::ir {

void register_control_shape_rules(ShapeRuleTable&) {}

}  // namespace graft::ir
