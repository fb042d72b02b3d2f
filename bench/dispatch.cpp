// bench/dispatch: the cost of calling a cached jitted function of 3 ops on
// f32[8] (the signature check, binding buffers and running the executable),
// beside the same 3 ops run eagerly. Goal (issue 7): <= 1 us per jitted call.
// Also the per-call cost of a cached grad and vmap wrapper of the same
// function, beside running the function's own ops eagerly: those wrappers
// re-trace f at every call so that arrays f closes over are read fresh.
#include <cstdio>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

int main() {
  auto f = [](const Array& x, const Array& y) { return graft::tanh(x * y + 1.0f); };
  auto jf = jit(f, {.wait_for_compile = true});  // time the compiled tier
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

  // grad and vmap wrappers: each call traces f, finds the transformed graph
  // by the traced graph and runs it (interpreter). Compared with eager f + the
  // eager backward pass's size, i.e. as a ratio to the eager forward.
  Array scale = full({8}, 1.5f);
  auto loss = [&scale](const Array& v) { return sum(graft::tanh(v * scale + 1.0f)); };
  auto g = grad(loss);
  auto vf = vmap([&scale](const Array& v) { return graft::tanh(v * scale + 1.0f); });
  Array xb = full({4, 8}, 0.5f);
  g(x);
  vf(xb);
  const int m = 5000;
  double t_grad = best_seconds([&] {
    for (int i = 0; i < m; ++i) g(x);
  });
  double t_vmap = best_seconds([&] {
    for (int i = 0; i < m; ++i) vf(xb);
  });
  double t_loss = best_seconds([&] {
    for (int i = 0; i < m; ++i) loss(x);
  });
  std::printf("\n%-24s %10s %10s\n", "", "us/call", "vs eager f");
  std::printf("%-24s %10.2f %9.2fx\n", "grad (cached)", t_grad / m * 1e6, t_grad / t_loss);
  std::printf("%-24s %10.2f %9.2fx\n", "vmap (cached)", t_vmap / m * 1e6, t_vmap / t_loss);
  std::printf("%-24s %10.2f %9.2fx\n", "eager f (4 dispatches)", t_loss / m * 1e6, 1.0);
  return 0;
}
