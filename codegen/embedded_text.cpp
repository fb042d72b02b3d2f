#include "codegen/embedded_text.h"

namespace graft::codegen {

std::string scalar_ops_text() {
  return std::string("#define GRAFT_HALF_EMBEDDED 1\n#define GRAFT_HALF_FN GCG_FN\n") + kHalfBitsText +
         "#define GRAFT_SCALAR_EMBEDDED 1\n" + kScalarOpsText + kSpecialFunctionsText;
}

std::string complex_ops_text() { return std::string("#define GRAFT_COMPLEX_EMBEDDED 1\n") + kComplexOpsText; }

std::string cuda_complex_ops_text() {
  return std::string("#ifdef GCG_EMULATED\n#include <complex>\n#else\n") + kComplexDeviceText + "#endif\n" +
         complex_ops_text();
}

std::string sum_order_text(const std::string& fn_qualifiers) {
  return "#define GRAFT_SUM_EMBEDDED 1\n#define GRAFT_SUM_FN " + fn_qualifiers + "\n" + kSumOrderText;
}

}  // namespace graft::codegen
