// Must not compile: argnum 2 of a two-argument function. The test expects
// graft's own static_assert message (see tests/CMakeLists.txt).
#include "graft/graft.h"

int main() {
  auto f = [](const graft::Array& a, const graft::Array& b) { return graft::sum(a * b); };
#if defined(GRAFT_CHECK_JACOBIAN)
  graft::jacfwd<2>(f)(graft::scalar(1), graft::scalar(2));
#else
  graft::grad<2>(f)(graft::scalar(1), graft::scalar(2));
#endif
}
