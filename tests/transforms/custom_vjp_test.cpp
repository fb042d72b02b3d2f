// custom_vjp: the user's bwd replaces autodiff's reverse mode.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"

using namespace graft;
using Catch::Matchers::Contains;

TEST_CASE("custom_vjp: bwd supplies the gradient", "[transforms][custom_vjp]") {
  auto f = [](const Array& x) { return graft::sin(x); };
  auto fwd = [](const Array& x) { return std::make_pair(graft::sin(x), graft::cos(x)); };
  auto bwd = [](const Array& cos_x, const Array& g) { return std::make_tuple(g * cos_x); };
  auto s = custom_vjp(f, fwd, bwd);
  Array x = array<double>({0.1, 0.7, 2.0});
  CHECK(s(x).to_vector<double>()[1] == Approx(std::sin(0.7)));
  std::vector<double> g = grad([&](const Array& a) { return sum(s(a)); })(x).to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(g[i] == Approx(std::cos(x.to_vector<double>()[i])));

  // A bwd that differs from the true derivative (gradient clipping) is what grad uses.
  auto clipped = custom_vjp([](const Array& a) { return a * 1.0; },
                            [](const Array& a) { return std::make_pair(a * 1.0, std::vector<Array>{}); },
                            [](const std::vector<Array>&, const Array& ct) { return std::make_tuple(clip(ct, -0.5, 0.5)); });
  std::vector<double> gc = grad([&](const Array& a) { return sum(clipped(a) * array<double>({3.0, 0.2, -2.0})); })(x)
                               .to_vector<double>();
  CHECK(gc == std::vector<double>{0.5, 0.2, -0.5});

  // Two arguments, several residuals, a pytree output.
  auto h = custom_vjp(
      [](const Array& a, const Array& b) { return std::make_pair(a * b, a + b); },
      [](const Array& a, const Array& b) { return std::make_pair(std::make_pair(a * b, a + b), std::make_pair(a, b)); },
      [](const std::pair<Array, Array>& res, const std::pair<Array, Array>& ct) {
        return std::make_tuple(ct.first * res.second + ct.second, ct.first * res.first + ct.second);
      });
  Array b = array<double>({2.0, -1.0, 0.5});
  auto [ga, gb] = grad<0, 1>([&](const Array& a, const Array& bb) {
    auto [p, q] = h(a, bb);
    return sum(p * 2.0 + q);
  })(x, b);
  CHECK(ga.to_vector<double>() == std::vector<double>{2 * 2.0 + 1, 2 * -1.0 + 1, 2 * 0.5 + 1});
  CHECK(gb.to_vector<double>()[2] == Approx(2 * 2.0 + 1));
}

TEST_CASE("custom_vjp: traced, exported, and no forward mode", "[transforms][custom_vjp]") {
  auto s = custom_vjp([](const Array& x) { return graft::sin(x); },
                      [](const Array& x) { return std::make_pair(graft::sin(x), graft::cos(x)); },
                      [](const Array& cos_x, const Array& g) { return std::make_tuple(g * cos_x); });
  Array x = array<double>({0.1, 0.7});
  Graph gr = make_graph(s)(x);
  CHECK(gr.to_text().find("custom_vjp_call") != std::string::npos);
  Graph gg = make_graph([&](const Array& a) { return grad([&](const Array& b) { return sum(s(b)); })(a); })(x);
  Graph back = Graph::from_json(gg.to_json());
  CHECK(evaluate(back, {x})[0].to_vector<double>()[1] == Approx(std::cos(0.7)));
  try {
    jvp(s, std::make_tuple(x), std::make_tuple(x));
    FAIL("forward mode of a custom_vjp function ran");
  } catch (const UnsupportedError& e) {
    CHECK_THAT(e.what(), Contains("no forward-mode derivative"));
  }
}
