#include "codegen/sum_order_text.h"

namespace graft::codegen {

std::string sum_order_text(const std::string& fn_qualifiers) {
  return "#define GRAFT_SUM_EMBEDDED 1\n#define GRAFT_SUM_FN " + fn_qualifiers + "\n" + kSumOrderText;
}

}  // namespace graft::codegen
