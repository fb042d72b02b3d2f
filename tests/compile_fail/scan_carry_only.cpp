// Must not compile: a scan body that returns only the carry. The test expects
// graft's one static_assert message (see tests/CMakeLists.txt), not pages of
// errors from <tuple>.
#include "graft/graft.h"

int main() {
  using namespace graft;
  auto out = scan([](const Array& c, const Array& x) { return c + x; }, scalar(0.0), ones({3}));
  (void)out;
}
