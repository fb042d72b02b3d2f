// bench/dispatch: the cost of calling a cached jitted function of 3 ops on
// f32[8] (the signature check, binding buffers and running the executable),
// beside the same 3 ops run eagerly. Goal (issue 7): <= 1 us per jitted call.
#include <cstdio>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

int main() {
  auto f = [](const Array& x, const Array& y) { return graft::tanh(x * y + 1.0f); };
  auto jf = jit(f);
  Array x = full({8}, 0.5f), y = full({8}, 2.0f);
  jf(x, y);  // trace and compile once
  const int n = 20000;
  double t_jit = best_seconds([&] {
    for (int i = 0; i < n; ++i) jf(x, y);
  });
  double t_eager = best_seconds([&] {
    for (int i = 0; i < n; ++i) f(x, y);
  });
  std::printf("3-op function on f32[8], %d calls (best of 5)\n", n);
  std::printf("%-24s %10s %10s\n", "", "us/call", "vs eager");
  std::printf("%-24s %10.2f %9.2fx\n", "jit (cached)", t_jit / n * 1e6, t_jit / t_eager);
  std::printf("%-24s %10.2f %9.2fx\n", "eager (3 dispatches)", t_eager / n * 1e6, 1.0);
  std::printf("goal: jit <= 1 us per call\n");
  return 0;
}
