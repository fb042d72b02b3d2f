// The C++ source that starts every generated CPU module (see prelude.cpp).
#pragma once

namespace graft::codegen::cpu {

extern const char kPrelude[];

}  // namespace graft::codegen::cpu
