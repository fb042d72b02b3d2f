#include "ir/op.h"

#include <array>

namespace graft::ir {

namespace {
// The op count is derived from ops.def (ir/op.h); these check that the enum,
// the table and the count agree, so a malformed line cannot shift them apart.
constexpr int count_ops() {
  int n = 0;
#define GRAFT_OP(...) ++n;
#include "ir/ops.def"
#undef GRAFT_OP
  return n;
}
static_assert(count_ops() == kNumOps, "ops.def and kNumOps disagree");
static_assert(detail::kOpTable.size() == static_cast<size_t>(kNumOps), "the op table and kNumOps disagree");
}  // namespace

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < detail::kOpTable.size(); ++i)
    if (detail::kOpTable[i].name == name) return static_cast<Op>(i);
  return std::nullopt;
}

const char* family_name(OpFamily family) {
  static constexpr const char* kNames[kNumFamilies] = {
      "elementwise", "reduce",     "shape", "indexing", "sort", "creation", "linalg", "random",  "control",
      "custom",      "collective", "pmap",  "fusion",   "fft",  "conv",     "window", "callback"};
  return kNames[static_cast<int>(family)];
}

}  // namespace graft::ir
