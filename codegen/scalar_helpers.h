// The scalar helpers every generated kernel's prelude contains (see
// scalar_helpers.cpp): one text for the CPU and CUDA code generators.
#pragma once

namespace graft::codegen {

extern const char kScalarHelpers[];

}  // namespace graft::codegen
