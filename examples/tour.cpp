// tour: the five-minute tour of the README, as a program that checks itself
// (exit status 1 if any result is off). grad, vmap, jit, pmap and export.
//
//   ./build/examples/tour
#include <cmath>
#include <cstdio>
#include <iostream>

#include "graft/graft.h"

using namespace graft;

struct Params {
  Array w, b;
};
GRAFT_PYTREE(Params, w, b);

int main() {
  // A linear model's squared error, written once for eager and traced use.
  auto loss = [](const Params& p, const Array& x, const Array& y) { return mean(square(matmul(x, p.w) + p.b - y)); };
  Params p{full({3, 1}, 0.5), zeros({1})};
  Array x = reshape(linspace(-1, 1, 12), {4, 3});
  Array y = sum(x, {1}, true);

  // grad: the gradient has the parameters' structure.
  Params g = grad(loss)(p, x, y);
  std::cout << "dloss/dw = " << g.w << "\n";

  // vmap: per-example gradients in one batched computation.
  auto per_example = vmap([&](const Array& xi, const Array& yi) {
    return grad(loss)(p, reshape(xi, {1, 3}), reshape(yi, {1, 1})).w;
  });
  Array pe = per_example(x, y);  // [4, 3, 1]
  std::cout << "per-example dw: " << pe.shape()[0] << " x " << pe.shape()[1] << "\n";

  // jit: the whole training step traced once, fused and compiled.
  auto step = jit([&](const Params& q, const Array& xb, const Array& yb) {
    Params d = grad(loss)(q, xb, yb);
    return Params{q.w - d.w * 0.5, q.b - d.b * 0.5};
  });
  for (int i = 0; i < 200; ++i) p = step(p, x, y);
  const float final_loss = loss(p, x, y).item<float>();
  std::cout << "loss after 200 jitted steps = " << final_loss << "\n";

  // pmap: one replica per device (GRAFT_CPU_DEVICES=2 for two), psum across them.
  const int64_t n = static_cast<int64_t>(devices().size());
  Array total = pmap([](const Array& v) { return psum(sum(v), "i"); }, "i")(ones({n, 5}));
  std::cout << "psum over " << n << " device(s) = " << total << "\n";

  // Export: the traced graph as text, JSON (read back and run) and Graphviz.
  Graph graph = make_graph(loss)(p, x, y);
  Graph back = Graph::from_json(graph.to_json());
  const float again = evaluate(back, {p.w, p.b, x, y})[0].item<float>();
  std::cout << graph.num_nodes() << " nodes; the JSON round trip gives " << again << "\n";

  const bool ok = final_loss < 1e-3f && std::fabs(again - final_loss) < 1e-6f &&
                  total.to_vector<float>() == std::vector<float>(static_cast<size_t>(n), 5.0f * static_cast<float>(n));
  std::cout << (ok ? "tour: ok" : "tour: WRONG RESULT") << "\n";
  return ok ? 0 : 1;
}
