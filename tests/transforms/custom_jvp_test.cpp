// custom_jvp: the user's rule replaces autodiff's, in forward and reverse mode.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;

TEST_CASE("custom_jvp: a stable derivative for log(1 + exp(x))", "[transforms][custom_jvp]") {
  auto naive = [](const Array& x) { return graft::log(1.0f + graft::exp(x)); };
  auto softplus = custom_jvp(naive, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    Array y = graft::log(1.0f + graft::exp(x));
    return std::make_pair(y, std::get<0>(t) * logistic(x));
  });
  Array x = array({0.0f, 2.0f, 100.0f});
  // Values are f's.
  CHECK(softplus(x).to_vector<float>()[1] == Approx(std::log(1 + std::exp(2.0))));
  // The naive derivative overflows at 100 (inf / inf); the rule does not.
  std::vector<float> naive_grad = grad([&](const Array& a) { return sum(naive(a)); })(x).to_vector<float>();
  CHECK(std::isnan(naive_grad[2]));
  std::vector<float> g = grad([&](const Array& a) { return sum(softplus(a)); })(x).to_vector<float>();
  CHECK(g[0] == Approx(0.5f));
  CHECK(g[1] == Approx(1.0f / (1.0f + std::exp(-2.0f))));
  CHECK(g[2] == Approx(1.0f));
  // Forward mode uses the rule too, and it composes (second order through logistic).
  auto [y, t] = jvp(softplus, std::make_tuple(x), std::make_tuple(array({1.0f, 1.0f, 1.0f})));
  CHECK(t.to_vector<float>()[2] == Approx(1.0f));
  Array x64 = array<double>({-0.5, 0.3, 1.2});
  auto softplus64 = custom_jvp([](const Array& a) { return graft::log(1.0 + graft::exp(a)); },
                               [](const std::tuple<Array>& p, const std::tuple<Array>& tt) {
                                 const Array& a = std::get<0>(p);
                                 return std::make_pair(graft::log(1.0 + graft::exp(a)), std::get<0>(tt) * logistic(a));
                               });
  CHECK_NOTHROW(testing::check_grads(softplus64, std::make_tuple(x64), 2));
  // Traced: one custom_jvp_call node holding both graphs; it survives JSON.
  Graph gr = make_graph(softplus64)(x64);
  REQUIRE(gr.num_nodes() == 1);
  CHECK(gr.to_text().find("custom_jvp_call") != std::string::npos);
  Graph back = Graph::from_json(gr.to_json());
  CHECK(evaluate(back, {x64})[0].to_vector<double>() == softplus64(x64).to_vector<double>());
}

TEST_CASE("custom_jvp: a rule that differs from the truth is what autodiff uses", "[transforms][custom_jvp]") {
  // A straight-through estimator: round in the forward pass, identity derivative.
  auto ste = custom_jvp([](const Array& a) { return graft::round(a); },
                        [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                          return std::make_pair(graft::round(std::get<0>(p)), std::get<0>(t));
                        });
  Array x = array<double>({0.2, 1.7});
  CHECK(ste(x).to_vector<double>() == std::vector<double>{0.0, 2.0});
  CHECK(grad([&](const Array& a) { return sum(ste(a) * a); })(x).to_vector<double>() == std::vector<double>{0.2 + 0.0, 1.7 + 2.0});
  // Closing over a traced value: the rule gives the argument's part (outer),
  // the function's own derivative the closed-over value's (a = outer): 2 outer.
  auto closed = [&](const Array& outer) {
    auto scaled = custom_jvp([&](const Array& a) { return a * outer; },
                             [&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                               return std::make_pair(std::get<0>(p) * outer, std::get<0>(t) * outer);
                             });
    return sum(scaled(outer));
  };
  CHECK(grad(closed)(x).to_vector<double>() == std::vector<double>{0.4, 3.4});
}

TEST_CASE("custom_jvp: an eager call runs f alone, transforms still get the rule", "[transforms][custom_jvp]") {
  int f_calls = 0, rule_calls = 0;
  auto fn = custom_jvp(
      [&](const Array& a) {
        ++f_calls;
        return graft::sin(a);
      },
      [&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
        ++rule_calls;
        return std::make_pair(graft::sin(std::get<0>(p)), 2.0 * std::get<0>(t));  // deliberately not cos
      });
  Array x = array<double>({0.5, 1.0});
  // Eager: nothing traces, so the rule is not even traced; the values are f's.
  CHECK(fn(x).to_vector<double>() == graft::sin(x).to_vector<double>());
  CHECK(f_calls == 1);
  CHECK(rule_calls == 0);
  // Under grad the argument is traced, and the rule is what autodiff uses.
  CHECK(grad([&](const Array& a) { return sum(fn(a)); })(x).to_vector<double>() == std::vector<double>{2.0, 2.0});
  CHECK(rule_calls >= 1);
  // Concrete arguments but an f that closes over a traced value: the traced
  // path takes the value as a closure-converted operand.
  Array closed = jit([&](const Array& outer) {
    auto scaled = custom_jvp([&](const Array& a) { return a * outer; },
                             [&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                               return std::make_pair(std::get<0>(p) * outer, std::get<0>(t) * outer);
                             });
    return scaled(array<double>({1.0, 2.0}));
  })(x);
  CHECK(closed.to_vector<double>() == std::vector<double>{0.5, 2.0});
}
