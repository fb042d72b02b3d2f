#include "ir/op.h"

#include <array>

namespace graft::ir {

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < detail::kOpTable.size(); ++i)
    if (detail::kOpTable[i].name == name) return static_cast<Op>(i);
  return std::nullopt;
}

const char* family_name(OpFamily family) {
  static constexpr const char* kNames[kNumFamilies] = {
      "elementwise", "reduce", "shape", "indexing", "sort", "creation",
      "linalg", "random", "control", "custom", "collective", "pmap", "fusion"};
  return kNames[static_cast<int>(family)];
}

}  // namespace graft::ir
