// GRAFT_DEBUG_NANS inside jit: a fused kernel that makes a NaN is run again
// op by op, so the error names the op that made it and the user's line, not
// the fused kernel. The checks run in a child process with the variable set
// (it is read once per process).
#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "support/shell.h"

using namespace graft;
using Catch::Matchers::Contains;

TEST_CASE("debug nans: the op inside a fused kernel is named, with its line", "[.debug_nans]") {
  Array x = array({3.0, 2.5, 1.0, 4.0});  // log(x - 2) is NaN at x = 1
  int line = __LINE__ + 3;
  auto f = [](const Array& a) {
    Array s = graft::sin(a) * 2.0;
    Array l = graft::log(a - 2.0);
    return graft::exp(s * l) + 1.0;
  };
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    INFO("backend " << static_cast<int>(backend));
    try {
      jit(f, {.backend = backend, .wait_for_compile = true})(x);
      FAIL("no NaN was reported");
    } catch (const Error& e) {
      std::string m = e.what();
      CHECK_THAT(m, Contains("GRAFT_DEBUG_NANS") && Contains("log") &&
                        Contains("debug_nans_test.cpp:" + std::to_string(line)));
      CHECK_THAT(m, !Contains("fusion of"));
    }
  }
  // Inside the gradient too: d/da log(a - 2) at a = 1 is finite, but the forward NaN comes first.
  CHECK_THROWS_WITH(jit(grad([&](const Array& a) { return sum(f(a)); }))(x), Contains("log"));
  // No NaN: no error, same values as eager.
  Array ok = array({3.0, 2.5});
  CHECK(jit(f)(ok).to_vector<double>() == f(ok).to_vector<double>());
}

TEST_CASE("debug nans: jit names the op that made a NaN", "[jit][debug_nans]") {
  graft::test::check_child_passes("GRAFT_DEBUG_NANS=1", "[.debug_nans]");
}
