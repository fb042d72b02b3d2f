// A user program built against the installed graft, with whatever compiler
// and flags the test chose (g++; clang 16 with and without -fopenmp): every
// transform's templates are instantiated here, and each result is checked.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <utility>

#include "graft/graft.h"

namespace {

using graft::Array;

int failures = 0;

void expect(const char* what, float got, float want) {
  if (!(std::fabs(got - want) <= 1e-4f * (1.0f + std::fabs(want)))) {
    std::printf("%s: got %.7g, want %.7g\n", what, got, want);
    ++failures;
  }
}

float first(const Array& a) { return a.to_vector<float>().at(0); }

}  // namespace

int main() {
  graft::Graph g = graft::Graph::from_json(R"({"format": "graft.graph", "version": 1, "graph": {
    "inputs": [{"id": 0, "dtype": "f32", "shape": [2]}],
    "nodes": [{"id": 0, "op": "sin", "inputs": [0], "outputs": [{"id": 1, "dtype": "f32", "shape": [2]}]}],
    "outputs": [1]}})");

  using namespace graft;
  const float x0 = 0.5f;
  const Array x = full({3}, x0);
  auto f = [](const Array& v) { return sum(sin(v)); };
  expect("grad", first(grad(f)(x)), std::cos(x0));
  expect("vmap", first(vmap([](const Array& v) { return sin(v); })(full({2, 3}, x0))), std::sin(x0));
  expect("jit", first(jit(f)(x)), 3 * std::sin(x0));
  expect("jacfwd", first(jacfwd([](const Array& v) { return sin(v); })(x)), std::cos(x0));
  expect("jacrev", first(jacrev([](const Array& v) { return sin(v); })(x)), std::cos(x0));
  expect("hessian", first(hessian(f)(x)), -std::sin(x0));
  expect("pmap", first(pmap([](const Array& v) { return psum(sum(v), "i"); }, "i")(ones({1, 5}))), 5.0f);
  // Reverse mode through a checkpointed layer that closes over its weight.
  const Array w = full({3, 3}, 0.25f);
  auto layer_loss = [&](const Array& wv) {
    return sum(checkpoint([&](const Array& h) { return tanh(matmul(h, wv)); })(x));
  };
  const float t = std::tanh(0.75f * x0);
  expect("checkpoint closure", first(grad(layer_loss)(w)), x0 * (1 - t * t));
  auto step = [](const Array& c, const Array& xi) { return std::make_pair(c + xi, c); };
  expect("scan", first(scan(step, zeros({}), x).first), 3 * x0);
  expect("fori_loop",
         first(fori_loop(
             0, 4, [](const Array&, const Array& c) { return c * 2.0f; }, x)),
         16 * x0);
  expect("cond",
         first(cond(
             sum(x) > 0.0f, [](const Array& v) { return v + 1.0f; }, [](const Array& v) { return v; }, x)),
         x0 + 1);
  std::cout << "nodes=" << g.num_nodes() << " failures=" << failures << "\n";
  return g.num_nodes() == 1 && failures == 0 ? 0 : 1;
}
