// Compiled by the layering tests (tests/CMakeLists.txt) with the include
// path of the graft_transforms layer: an allowed include compiles, one that
// goes against docs/DESIGN.md's layers (transforms/ may not see interpreter/)
// must not.
#ifdef GRAFT_PROBE_FORBIDDEN
#include "interpreter/kernel.h"
#else
#include "transforms/rules/jvp_rule.h"
#endif

int main() { return 0; }
