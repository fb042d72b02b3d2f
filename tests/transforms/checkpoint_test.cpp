// checkpoint: same values and gradients, fewer residuals kept for the backward pass.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"
#include "ir/graph.h"
#include "transforms/vjp.h"

using namespace graft;

namespace {
Array chain(const Array& x) { return graft::sin(graft::sin(graft::sin(graft::sin(x)))); }
}  // namespace

TEST_CASE("checkpoint: same results, recomputation instead of saved values", "[transforms][checkpoint]") {
  Array x = array<double>({0.3, -1.1, 2.0});
  auto plain = [](const Array& a) { return sum(chain(a)); };
  auto ckpt = [](const Array& a) { return sum(checkpoint(chain)(a)); };
  CHECK(ckpt(x).item<double>() == Approx(plain(x).item<double>()));
  std::vector<double> g1 = grad(plain)(x).to_vector<double>(), g2 = grad(ckpt)(x).to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(g2[i] == Approx(g1[i]));
  // Forward mode and second order still work through the remat node.
  auto [y, t] = jvp(ckpt, std::make_tuple(x), std::make_tuple(full({3}, 1.0, f64)));
  CHECK(t.item<double>() == Approx(g1[0] + g1[1] + g1[2]));
  std::vector<double> h = grad([&](const Array& a) { return sum(grad(ckpt)(a)); })(x).to_vector<double>();
  std::vector<double> hp = grad([&](const Array& a) { return sum(grad(plain)(a)); })(x).to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(h[i] == Approx(hp[i]));

  // Residuals: without checkpoint the backward pass reads the chain's
  // intermediates (the cosines of every stage); with it, only x and the output.
  Graph gp = make_graph(plain)(x), gc = make_graph(ckpt)(x);
  size_t saved_plain = transforms::count_residuals(gp.ir(), {true});
  size_t saved_ckpt = transforms::count_residuals(gc.ir(), {true});
  INFO("residuals without checkpoint: " << saved_plain << ", with: " << saved_ckpt);
  CHECK(saved_plain >= 4);
  CHECK(saved_ckpt < saved_plain);
  CHECK(saved_ckpt <= 1);
  // The grad graph holds a remat node for the forward pass and recomputes inside the backward.
  Graph gg = make_graph([&](const Array& a) { return grad(ckpt)(a); })(x);
  int remats = 0, sines = 0;
  for (const auto& n : gg.ir().nodes()) {
    remats += n.op == ir::Op::remat;
    sines += n.op == ir::Op::sin;
  }
  CHECK(remats == 1);  // the forward pass (it also yields the value); the tangent remat was transposed away
  CHECK(sines == 3);   // the backward pass recomputes sin of the first three stages
  CHECK(Graph::from_json(gg.to_json()).to_json() == gg.to_json());
}
