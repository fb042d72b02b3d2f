// Closure conversion: functions given to checkpoint, custom_jvp, custom_vjp,
// cond, scan and while_loop may close over values an enclosing grad, vmap or
// jit traces (a layer's weights, say). Each wrapped model is checked against
// the same model written without the wrapper: its gradient with respect to
// the closed-over weight (and, for the custom rules, the argument's gradient,
// which the rule deliberately doubles), vmap against a loop over the batch,
// and jit against the eager result.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#include "graft/graft.h"

using namespace graft;

namespace {

using Model = std::function<Array(const Array&, const Array&)>;  // (w [3,3], x [2,3]) -> scalar

// The reference: one tanh layer, squared, summed.
Array plain(const Array& w, const Array& x) { return sum(square(tanh(matmul(x, w)))); }

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

void check_close(const Array& got, const Array& want, const std::string& what) {
  INFO(what);
  std::vector<double> g = values(got), r = values(want);
  REQUIRE(g.size() == r.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(r[i]).epsilon(1e-10).margin(1e-12));
}

// Functions, not globals: an Array made at static initialisation would start
// graft's devices before a test could set their environment.
Array weight() { return array<double>({{0.3, -0.2, 0.5}, {0.1, 0.4, -0.3}, {-0.6, 0.2, 0.25}}); }
Array input() { return array<double>({{1.0, -0.5, 0.25}, {0.3, 0.7, -1.1}}); }

// grad w.r.t. the closed-over weight, vmap over a batch of weights and
// inputs, jit of the loss and of its gradient: each equals the plain model's.
void check_model(const std::string& name, const Model& model) {
  const Array kW = weight(), kX = input();
  check_close(model(kW, kX), plain(kW, kX), name + ": eager value");
  check_close(grad(model)(kW, kX), grad(plain)(kW, kX), name + ": grad w.r.t. the closed-over weight");
  const Array ws = stack({kW, kW * 0.5, -kW}), xs = stack({kX, kX * 2.0, kX});
  Array batched = vmap(model)(ws, xs);
  for (int64_t b = 0; b < 3; ++b)
    check_close(batched[b], plain(ws[b], xs[b]), name + ": vmap, example " + std::to_string(b));
  Array batched_grads = vmap(grad(model))(ws, xs);
  for (int64_t b = 0; b < 3; ++b)
    check_close(batched_grads[b], grad(plain)(ws[b], xs[b]), name + ": vmap of grad, example " + std::to_string(b));
  check_close(jit(model)(kW, kX), plain(kW, kX), name + ": jit");
  check_close(jit(grad(model))(kW, kX), grad(plain)(kW, kX), name + ": jit of grad");
}

}  // namespace

TEST_CASE("closure conversion: checkpoint closes over a traced weight", "[closure][checkpoint]") {
  for (const auto& [policy_name, policy] : {std::pair{"nothing_saveable", checkpoint_policies::nothing_saveable},
                                            std::pair{"dots_saveable", checkpoint_policies::dots_saveable}}) {
    check_model(std::string("checkpoint ") + policy_name, [policy = policy](const Array& w, const Array& x) {
      return sum(square(checkpoint([&](const Array& h) { return tanh(matmul(h, w)); }, policy)(x)));
    });
  }
}

// The rules double the argument's derivative: the argument's gradient shows
// the rule is used, the weight's that the closure is differentiated as f.
TEST_CASE("closure conversion: custom_jvp closes over a traced weight", "[closure][custom_jvp]") {
  const Array kW = weight(), kX = input();
  auto layer = [](const Array& w) {
    return custom_jvp([&](const Array& h) { return tanh(matmul(h, w)); },
                      [&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        Array y = tanh(matmul(std::get<0>(p), w));
                        return std::make_pair(y, 2.0 * (1.0 - y * y) * matmul(std::get<0>(t), w));
                      });
  };
  Model model = [&](const Array& w, const Array& x) { return sum(square(layer(w)(x))); };
  check_model("custom_jvp", model);
  check_close(grad<1>(model)(kW, kX), 2.0 * grad<1>(plain)(kW, kX), "custom_jvp: the rule gives the argument's");
  // Forward mode over the weight and the argument at once: the sum of both parts.
  Array tw = full_like(kW, 0.1), tx = full_like(kX, -0.2);
  auto [value, tangent] = jvp(model, std::make_tuple(kW, kX), std::make_tuple(tw, tx));
  auto [value0, tangent_w] = jvp(plain, std::make_tuple(kW, kX), std::make_tuple(tw, zeros_like(kX)));
  auto [value1, tangent_x] = jvp(plain, std::make_tuple(kW, kX), std::make_tuple(zeros_like(kW), tx));
  check_close(value, value0, "custom_jvp: jvp's value");
  check_close(tangent, tangent_w + 2.0 * tangent_x, "custom_jvp: jvp in both");
  (void)value1;
}

TEST_CASE("closure conversion: custom_vjp closes over a traced weight", "[closure][custom_vjp]") {
  const Array kW = weight(), kX = input();
  auto layer = [](const Array& w) {
    return custom_vjp([&](const Array& h) { return tanh(matmul(h, w)); },
                      [&](const Array& h) {
                        Array y = tanh(matmul(h, w));
                        return std::make_pair(y, y);
                      },
                      [&](const Array& y, const Array& ct) {
                        return std::make_tuple(2.0 * matmul((1.0 - y * y) * ct, transpose(w)));
                      });
  };
  Model model = [&](const Array& w, const Array& x) { return sum(square(layer(w)(x))); };
  check_model("custom_vjp", model);
  check_close(grad<1>(model)(kW, kX), 2.0 * grad<1>(plain)(kW, kX), "custom_vjp: the rule gives the argument's");
}

TEST_CASE("closure conversion: cond, scan and while_loop bodies close over a traced weight",
          "[closure][control_flow]") {
  check_model("cond", [](const Array& w, const Array& x) {
    Array y = cond(
        sum(x) > -100.0, [&](const Array& h) { return tanh(matmul(h, w)); }, [&](const Array& h) { return h * w[0]; },
        x);
    return sum(square(y));
  });
  // One step of the layer as a scan over the two rows of x; the carry sums the loss.
  check_model("scan", [](const Array& w, const Array& x) {
    auto step = [&](const Array& total, const Array& row) {
      return std::make_pair(total + sum(square(tanh(matmul(row, w)))), total);
    };
    return scan(step, zeros({}, f64), x).first;
  });
  // A while_loop that applies the layer once (its trip count is data).
  check_model("while_loop", [](const Array& w, const Array& x) {
    using State = std::pair<Array, Array>;
    auto body = [&](const State& s) { return State{s.first + 1, tanh(matmul(s.second, w))}; };
    auto not_done = [](const State& s) { return s.first < 1; };
    return sum(square(while_loop(not_done, body, State{scalar(0, i32), x}).second));
  });
}
