// Must not compile (each GRAFT_CHECK_* case): a derivative with respect to an
// argument holding no Array, or jit of an argument jit cannot cache on,
// would silently hand the argument back or retrace at every call. The tests
// expect graft's own static_assert messages (see tests/CMakeLists.txt);
// GRAFT_CHECK_OK is the registered version, which compiles.
#include "graft/graft.h"

struct Params {
  graft::Array w;
};
#if defined(GRAFT_CHECK_OK)
GRAFT_PYTREE(Params, w);
#endif

int main() {
  using namespace graft;
  auto loss = [](const Params& p) { return sum(square(p.w)); };
  Params p{array({3.0f, -1.0f})};
#if defined(GRAFT_CHECK_OK)
  grad(loss)(p);
  value_and_grad(loss)(p);
  jit(loss)(p);
  jacfwd([](const Array& x) { return x * 2.0; })(scalar(3.0));
#elif defined(GRAFT_CHECK_STRUCT)
  grad(loss)(p);
#elif defined(GRAFT_CHECK_DOUBLE)
  grad([](double x) { return square(scalar(x)); })(3.0);
#elif defined(GRAFT_CHECK_VALUE_AND_GRAD)
  value_and_grad<1>([](const Array& a, double x) { return sum(a) * x; })(scalar(1.0), 2.0);
#elif defined(GRAFT_CHECK_JACFWD)
  jacfwd([](double x) { return scalar(x) * 2.0; })(3.0);
#elif defined(GRAFT_CHECK_JIT)
  jit(loss)(p);
#endif
}
