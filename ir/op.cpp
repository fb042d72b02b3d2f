#include "ir/op.h"

#include <array>

namespace graft::ir {
namespace {

#define VARIADIC kVariadic
#define LINEAR true
#define NONLINEAR false
#define INPLACE true
#define NOT_INPLACE false
#define REDUCTION true
#define NO_REDUCTION false
#define DIFFERENTIABLE ""
constexpr std::array<OpInfo, kNumOps> kOpTable = {{
#define GRAFT_OP(ident, name, arity, family, linear, inplace, reduction, differentiable) \
  OpInfo{name, arity, OpFamily::family, linear, inplace, reduction, differentiable},
#include "ir/ops.def"
#undef GRAFT_OP
}};
#undef VARIADIC
#undef LINEAR
#undef NONLINEAR
#undef INPLACE
#undef NOT_INPLACE
#undef REDUCTION
#undef NO_REDUCTION
#undef DIFFERENTIABLE

constexpr int count_ops() {
  int n = 0;
#define GRAFT_OP(...) ++n;
#include "ir/ops.def"
#undef GRAFT_OP
  return n;
}
static_assert(count_ops() == kNumOps,
              "ops.def and kNumOps disagree: update kNumOps in ir/op.h and give the new op its rules");

}  // namespace

const OpInfo& op_info(Op op) { return kOpTable[static_cast<size_t>(op)]; }

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOpTable.size(); ++i)
    if (kOpTable[i].name == name) return static_cast<Op>(i);
  return std::nullopt;
}

const char* family_name(OpFamily family) {
  static constexpr const char* kNames[kNumFamilies] = {
      "elementwise", "reduce", "shape", "indexing", "sort", "creation",
      "linalg", "random", "control", "custom", "collective", "fusion"};
  return kNames[static_cast<int>(family)];
}

}  // namespace graft::ir
