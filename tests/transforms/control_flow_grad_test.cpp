// Differentiating through control flow: cond/switch_ and scan/fori_loop in
// both modes (against closed forms, finite differences and unrolled loops),
// while_loop in both (reverse mode counts the trips and sweeps back on the
// binomial checkpoint schedule, within WhileOptions::checkpoints carries).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "graft/graft.h"
#include "graft/testing.h"
#include "ir/builder.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

Array points(std::vector<double> v) { return array(v, {static_cast<int64_t>(v.size())}); }

// An RNN over the rows of xs: h' = tanh(W h + x_t); the loss sums the squared states.
Array rnn_loss_scan(const Array& w, const Array& xs) {
  auto step = [&w](const Array& h, const Array& x) {
    Array next = graft::tanh(matmul(w, h) + x);
    return std::make_pair(next, sum(next * next));
  };
  auto [h, ys] = scan(step, zeros({3}, DType::f64), xs);
  return sum(ys) + sum(h);
}

Array rnn_loss_unrolled(const Array& w, const Array& xs) {
  Array h = zeros({3}, DType::f64);
  Array total = scalar(0.0, DType::f64);
  for (int64_t t = 0; t < xs.shape()[0]; ++t) {
    h = graft::tanh(matmul(w, h) + xs[t]);
    total = total + sum(h * h);
  }
  return total + sum(h);
}

void check_close(const Array& got, const Array& want, double tol = 1e-10) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("control flow grad: cond takes the derivative of the branch taken", "[transforms][control]") {
  auto f = [](const Array& x) {
    return cond(sum(x) > 0.0, [](const Array& a) { return sum(graft::sin(a) * a); },
                [](const Array& a) { return sum(graft::exp(a)); }, x);
  };
  Array pos = points({0.3, 0.9}), neg = points({-0.4, -1.2});
  // d/dx sum(x sin x) = sin x + x cos x; d/dx sum(exp x) = exp x.
  check_close(grad(f)(pos), points({std::sin(0.3) + 0.3 * std::cos(0.3), std::sin(0.9) + 0.9 * std::cos(0.9)}));
  check_close(grad(f)(neg), points({std::exp(-0.4), std::exp(-1.2)}));
  CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(pos), 2));
  CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(neg), 2));

  // switch_ with a closure over a traced value, and a pytree of operands.
  auto g = [](const Array& x, const Array& k) {
    std::vector<std::function<Array(const Array&, const Array&)>> branches = {
        [](const Array& a, const Array&) { return sum(a * a); },
        [&x](const Array& a, const Array& b) { return sum(a * b * x); },
        [](const Array& a, const Array& b) { return sum(graft::sin(a + b)); }};
    return switch_(k, branches, x, x * 2.0);
  };
  Array x = points({0.5, -0.25});
  check_close(grad(g)(x, scalar(1, DType::i32)), x * x * 6.0);  // 2x^3 per element -> 6x^2
  check_close(grad(g)(x, scalar(7, DType::i32)), graft::cos(x * 3.0) * 3.0);  // clamped to the last branch
  CHECK_NOTHROW(testing::check_grads([&](const Array& a) { return g(a, scalar(1, DType::i32)); }, std::make_tuple(x), 2));
}

TEST_CASE("control flow grad: scan equals the unrolled loop, in both modes and to second order", "[transforms][control]") {
  Array w = reshape(array<double>({0.5, -0.3, 0.2, 0.1, 0.4, -0.6, 0.3, 0.2, -0.1}), {3, 3});
  Array xs = reshape(array<double>({0.1, 0.2, -0.3, 0.5, -0.1, 0.0, 0.3, 0.3, 0.2, -0.4, 0.6, 0.1}), {4, 3});
  check_close(rnn_loss_scan(w, xs), rnn_loss_unrolled(w, xs));
  auto [gw, gx] = grad<0, 1>(rnn_loss_scan)(w, xs);
  auto [uw, ux] = grad<0, 1>(rnn_loss_unrolled)(w, xs);
  check_close(gw, uw);
  check_close(gx, ux);
  auto [y, t] = jvp(rnn_loss_scan, std::make_tuple(w, xs), std::make_tuple(w * 0.5, xs - 0.2));
  auto [uy, ut] = jvp(rnn_loss_unrolled, std::make_tuple(w, xs), std::make_tuple(w * 0.5, xs - 0.2));
  check_close(t, ut);
  // Second order: the Hessian-vector product through the transposed scan.
  auto hvp = [](auto loss, const Array& w0, const Array& xs0, const Array& v) {
    return jvp([&](const Array& a) { return grad(loss)(a, xs0); }, std::make_tuple(w0), std::make_tuple(v)).second;
  };
  check_close(hvp(rnn_loss_scan, w, xs, w + 1.0), hvp(rnn_loss_unrolled, w, xs, w + 1.0), 1e-9);
  // A smaller step than the default: this loss has large third derivatives.
  CHECK_NOTHROW(testing::check_grads(rnn_loss_scan, std::make_tuple(w, xs), 2, testing::Modes::fwd_and_rev, 1e-4));
}

TEST_CASE("control flow grad: reverse scans, carries that start constant, fori_loop", "[transforms][control]") {
  // c_{t+1} = c_t * a + x_t from a constant c_0 = 1: the carry's tangent
  // starts as zeros and becomes non-zero inside the loop.
  auto horner = [](const Array& a, const Array& xs, bool reverse) {
    auto step = [&a](const Array& c, const Array& x) { return std::make_pair(c * a + x, c); };
    auto [c, cs] = scan(step, scalar(1.0, DType::f64), xs, -1, reverse);
    return c + sum(cs) * 0.5;
  };
  Array a = scalar(0.7, DType::f64);
  Array xs = points({0.2, -0.5, 0.9});
  for (bool reverse : {false, true}) {
    INFO("reverse " << reverse);
    auto f = [&](const Array& p, const Array& q) { return horner(p, q, reverse); };
    CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(a, xs), 2));
  }
  // Forward: c = a^3 + x0 a^2 + x1 a + x2; reversed, x2 enters first.
  double av = 0.7;
  auto final_only = [](const Array& p, const Array& q, bool reverse) {
    auto step = [&p](const Array& c, const Array& x) { return std::make_pair(c * p + x, std::tuple<>{}); };
    return scan(step, scalar(1.0, DType::f64), q, -1, reverse).first;
  };
  CHECK(grad(final_only)(a, xs, false).item<double>() == Approx(3 * av * av + 2 * 0.2 * av - 0.5));
  CHECK(grad(final_only)(a, xs, true).item<double>() == Approx(3 * av * av + 2 * 0.9 * av - 0.5));
  CHECK(grad<1>(final_only)(a, xs, false).to_vector<double>()[0] == Approx(av * av));

  // fori_loop with integer bounds lowers to scan: x^(2^5) by repeated squaring.
  auto power = [](const Array& x) { return fori_loop(0, 5, [](const Array&, const Array& c) { return c * c; }, x); };
  double x0 = 1.01;
  CHECK(grad(power)(scalar(x0, DType::f64)).item<double>() == Approx(32 * std::pow(x0, 31)));
  // The loop index takes part: sum_i i * x.
  auto weighted = [](const Array& x) {
    return fori_loop(2, 6, [&x](const Array& i, const Array& c) { return c + astype(i, DType::f64) * x; },
                     scalar(0.0, DType::f64));
  };
  CHECK(grad(weighted)(scalar(3.0, DType::f64)).item<double>() == Approx(2 + 3 + 4 + 5));
}

TEST_CASE("control flow grad: while_loop in forward and reverse mode", "[transforms][control]") {
  // Newton's iteration for sqrt(a), a fixed number of times through a dynamic loop.
  auto newton_sqrt = [](const Array& a) {
    auto state = std::make_pair(scalar(0, DType::i32), a);
    auto out = while_loop([](const auto& s) { return s.first < 30; },
                          [&a](const auto& s) { return std::make_pair(s.first + 1, (s.second + a / s.second) * 0.5); },
                          state);
    return out.second;
  };
  Array a = scalar(2.0, DType::f64);
  CHECK(newton_sqrt(a).item<double>() == Approx(std::sqrt(2.0)));
  auto [y, t] = jvp(newton_sqrt, std::make_tuple(a), std::make_tuple(scalar(1.0, DType::f64)));
  CHECK(t.item<double>() == Approx(0.5 / std::sqrt(2.0)));
  // Reverse mode (JAX refuses it): the same derivative, eagerly and under jit.
  CHECK(grad(newton_sqrt)(a).item<double>() == Approx(0.5 / std::sqrt(2.0)).epsilon(1e-12));
  CHECK(jit(grad(newton_sqrt))(a).item<double>() == Approx(0.5 / std::sqrt(2.0)).epsilon(1e-12));
  // With Array bounds fori_loop is a while loop.
  auto cube = [](const Array& x) {
    return fori_loop(scalar(0, DType::i32), scalar(3, DType::i32), [&x](const Array&, const Array& c) { return c * x; },
                     scalar(1.0, DType::f64));
  };
  CHECK(jvp(cube, std::make_tuple(a), std::make_tuple(scalar(1.0, DType::f64))).second.item<double>() == Approx(12.0));
  CHECK(grad(cube)(a).item<double>() == Approx(12.0));
  // A condition reading a differentiated carry: the trip count is fixed locally (x^4 at x = 2).
  auto reads_tangent = [](const Array& x) {
    return while_loop([](const Array& v) { return v < 10.0; }, [&x](const Array& v) { return v * x; }, x);
  };
  CHECK(reads_tangent(a).item<double>() == Approx(16.0));
  CHECK(grad(reads_tangent)(a).item<double>() == Approx(4 * 8.0));  // x^4, its trip count fixed locally
}

TEST_CASE("control flow grad: while_loop reverse mode equals scan's and finite differences", "[transforms][control]") {
  // An RNN of n steps (n a run-time value of the while, static for the scan).
  const Array w = reshape(array<double>({0.5, -0.3, 0.2, 0.1, 0.4, -0.6, 0.3, 0.2, -0.1}), {3, 3});
  const Array x = array<double>({0.1, 0.2, -0.3});
  auto by_while = [&x](const Array& steps) {
    return [steps, &x](const Array& wm, const Array& u) {
      auto out = while_loop([&steps](const auto& s) { return s.first < steps; },
                            [&](const auto& s) { return std::make_pair(s.first + 1, tanh(matmul(wm, s.second) + u)); },
                            std::make_pair(scalar(0, DType::i32), x));
      return sum(out.second * out.second);
    };
  };
  // Trip counts around the checkpoint bound K = 64 and past K^2 = 4096 (where steps are recomputed).
  for (int n : {0, 1, 5, 63, 64, 65, 300, 4097}) {
    INFO("trip count " << n);
    auto by_scan = [n, &x](const Array& wm, const Array& u) {
      Array h = fori_loop(
          0, n, [&](const Array&, const Array& c) { return tanh(matmul(wm, c) + u); }, x);
      return sum(h * h);
    };
    const Array steps = scalar(n, DType::i32);
    auto [gw, gu] = jit(grad<0, 1>(by_while(steps)))(w, x);
    auto [sw, su] = jit(grad<0, 1>(by_scan))(w, x);
    check_close(gw, sw, 1e-13);
    check_close(gu, su, 1e-13);
    if (n <= 65) {
      auto [ew, eu] = grad<0, 1>(by_while(steps))(w, x);  // eagerly too
      check_close(ew, sw, 1e-13);
      testing::check_grads(by_while(steps), std::make_tuple(w, x), 1, testing::Modes::rev);
    }
  }
}

TEST_CASE("control flow grad: a while_loop's reverse mode within WhileOptions' memory bound", "[transforms][control]") {
  // 2 to 9 checkpoints: 30 steps need recomputation (2 slots: steps run forward up to 7 times).
  auto power_sum = [](int checkpoints) {
    return [checkpoints](const Array& x) {
      auto out = while_loop([](const auto& s) { return s.first < 30; },
                            [&x](const auto& s) { return std::make_pair(s.first + 1, sin(s.second) * x + 0.1); },
                            std::make_pair(scalar(0, DType::i32), x), WhileOptions{.checkpoints = checkpoints});
      return out.second;
    };
  };
  auto unrolled = [](const Array& x) {
    Array v = x;
    for (int i = 0; i < 30; ++i) v = sin(v) * x + 0.1;
    return v;
  };
  const Array x = scalar(0.7, DType::f64);
  const double want = grad(unrolled)(x).item<double>();
  for (int k : {2, 3, 4, 9, 128}) {
    INFO(k << " checkpoints");
    CHECK(grad(power_sum(k))(x).item<double>() == Approx(want).epsilon(1e-13));
    CHECK(jit(grad(power_sum(k)))(x).item<double>() == Approx(want).epsilon(1e-13));
  }
  // The slots the backward pass allocates follow the bound: [checkpoints + 1] (one takes the writes not kept).
  Graph g = make_graph(grad(power_sum(4)))(x);
  CHECK(g.to_text().find("f64[5]") != std::string::npos);
  CHECK(g.to_text().find("f64[6]") == std::string::npos);
  CHECK(make_graph(grad(power_sum(128)))(x).to_text().find("f64[129]") != std::string::npos);
  CHECK_THROWS_WITH(power_sum(1)(x), Contains("WhileOptions::checkpoints is 1"));

  // An io_callback in the body runs once per step of the forward pass, not again while the backward
  // pass replays the steps (3 checkpoints: replays recompute steps).
  std::vector<int> trips;
  auto logged = [&trips](const Array& v) {
    auto out = while_loop([](const auto& s) { return s.first < 7; },
                          [&](const auto& s) {
                            io_callback([&trips](const Array& k) { trips.push_back(k.item<int>()); }, std::tuple<>{},
                                        ordered, s.first);
                            return std::make_pair(s.first + 1, sin(s.second) * v);
                          },
                          std::make_pair(scalar(0, DType::i32), v), WhileOptions{.checkpoints = 3});
    return out.second;
  };
  const double g_logged = grad(logged)(x).item<double>();
  CHECK(trips == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  auto logged_unrolled = [](const Array& v) {
    Array y = v;
    for (int i = 0; i < 7; ++i) y = sin(y) * v;
    return y;
  };
  CHECK(g_logged == Approx(grad(logged_unrolled)(x).item<double>()).epsilon(1e-13));
}

TEST_CASE("control flow grad: a while_loop's backward pass runs the fewest forward steps", "[transforms][control]") {
  // fewest[l][c]: the fewest forward steps that reverse l steps from a kept carry with c more
  // slots, by dynamic programming over where the next carry is kept (the binomial schedule's
  // claim, checked here by counting the steps the backward pass actually runs).
  constexpr int kMaxSteps = 80, kMaxFree = 5;
  std::vector<std::vector<int64_t>> fewest(kMaxSteps + 1, std::vector<int64_t>(kMaxFree + 1, 0));
  for (int l = 2; l <= kMaxSteps; ++l) {
    fewest[l][0] = int64_t{l} * (l - 1) / 2;
    for (int c = 1; c <= kMaxFree; ++c) {
      int64_t best = std::numeric_limits<int64_t>::max();
      for (int m = 1; m < l; ++m) best = std::min(best, m + fewest[l - m][c - 1] + fewest[m][c]);
      fewest[l][c] = best;
    }
  }
  int steps_run = 0;  // a pure_callback on the step counter counts the body's runs
  // One on a carry the condition does not read: the trip count's loop, carrying the counter alone, skips it.
  int state_runs = 0;
  auto looped = [&steps_run, &state_runs](int n, int checkpoints) {
    return [&steps_run, &state_runs, n, checkpoints](const Array& a) {
      auto out = while_loop([n](const auto& s) { return std::get<0>(s) < n; },
                            [&](const auto& s) {
                              Array i = pure_callback(
                                  [&steps_run](const Array& k) {
                                    ++steps_run;
                                    return k;
                                  },
                                  ShapeDtype{{}, DType::i32}, std::get<0>(s));
                              Array j = pure_callback(
                                  [&state_runs](const Array& k) {
                                    ++state_runs;
                                    return k;
                                  },
                                  ShapeDtype{{}, DType::i32}, std::get<2>(s));
                              return std::make_tuple(i + 1, sin(std::get<1>(s)) * a, j + 2);
                            },
                            std::make_tuple(scalar(0, DType::i32), a, scalar(0, DType::i32)),
                            WhileOptions{.checkpoints = checkpoints});
      return std::get<1>(out);
    };
  };
  const Array a = scalar(0.9, DType::f64);
  for (int checkpoints : {2, 3, 4, 6}) {
    for (int n : {0, 1, 2, 5, 13, 40, 80}) {
      INFO(n << " steps, " << checkpoints << " checkpoints");
      steps_run = state_runs = 0;
      const double g = grad(looped(n, checkpoints))(a).item<double>();
      // The forward pass and the count run each step once; the sweep runs the fewest.
      CHECK(steps_run == 2 * n + (n > 0 ? fewest[n][checkpoints - 1] : 0));
      CHECK(state_runs == n + (n > 0 ? fewest[n][checkpoints - 1] : 0));
      Array v = a, dv = scalar(1.0, DType::f64);  // d/da of the unrolled loop, by forward mode
      for (int i = 0; i < n; ++i) {
        dv = cos(v) * dv * a + sin(v);
        v = sin(v) * a;
      }
      CHECK(g == Approx(dv.item<double>()).epsilon(1e-13));
    }
  }
}

TEST_CASE("control flow grad: second derivatives through a while_loop, forward over reverse", "[transforms][control]") {
  auto looped = [](int n, int checkpoints) {
    return [n, checkpoints](const Array& a) {
      auto out = while_loop([n](const auto& s) { return s.first < n; },
                            [&a](const auto& s) { return std::make_pair(s.first + 1, sin(s.second) * a + 0.1); },
                            std::make_pair(scalar(0, DType::i32), a), WhileOptions{.checkpoints = checkpoints});
      return out.second;
    };
  };
  auto unrolled = [](int n) {
    return [n](const Array& a) {
      Array v = a;
      for (int i = 0; i < n; ++i) v = sin(v) * a + 0.1;
      return v;
    };
  };
  const Array a = scalar(0.9, DType::f64), one = scalar(1.0, DType::f64);
  for (int n : {0, 1, 5, 17}) {
    for (int checkpoints : {2, 3, 128}) {
      INFO(n << " steps, " << checkpoints << " checkpoints");
      const double want = grad(grad(unrolled(n)))(a).item<double>();
      auto second = [&](const Array& x) {
        return jvp([&](const Array& y) { return grad(looped(n, checkpoints))(y); }, std::make_tuple(x),
                   std::make_tuple(one))
            .second;
      };
      CHECK(second(a).item<double>() == Approx(want).epsilon(1e-12));
      CHECK(jit(second)(a).item<double>() == Approx(want).epsilon(1e-12));
    }
  }
  // Reverse over reverse is refused, saying what to do instead (JAX has no reverse mode through while at all).
  CHECK_THROWS_WITH(grad(grad(looped(5, 4)))(a), Contains("forward over reverse (jvp of grad)"));
}

TEST_CASE("control flow grad: vmap of a while_loop's gradient with per-example trip counts", "[transforms][control]") {
  // x <- x * a until x exceeds a bound: each example stops after its own number of steps.
  auto grow = [](const Array& a, const Array& x0, const Array& bound) {
    auto out = while_loop([&bound](const auto& s) { return s.second < bound; },
                          [&a](const auto& s) { return std::make_pair(s.first + 1, s.second * a); },
                          std::make_pair(scalar(0, DType::i32), x0));
    return out.second;
  };
  const Array as = array<double>({1.5, 2.0, 1.1, 3.0});
  const Array x0 = array<double>({1.0, 0.5, 2.0, 0.1});
  const Array bound = scalar(10.0, DType::f64);
  auto per_example = [&](const Array& a, const Array& x) { return grad<0, 1>(grow)(a, x, bound); };
  auto [da, dx] = vmap(per_example)(as, x0);
  auto [ja, jx] = jit(vmap(per_example))(as, x0);
  for (int i = 0; i < 4; ++i) {
    const double ai = as.to_vector<double>()[i], xi = x0.to_vector<double>()[i];
    int n = 0;
    for (double v = xi; v < 10.0; v *= ai) ++n;  // y = x0 a^n
    INFO("example " << i << ": " << n << " steps");
    CHECK(da.to_vector<double>()[i] == Approx(n * xi * std::pow(ai, n - 1)));
    CHECK(dx.to_vector<double>()[i] == Approx(std::pow(ai, n)));
    CHECK(ja.to_vector<double>()[i] == Approx(n * xi * std::pow(ai, n - 1)));
    CHECK(jx.to_vector<double>()[i] == Approx(std::pow(ai, n)));
  }
}

TEST_CASE("control flow grad: graphs export and run after a round trip", "[transforms][control]") {
  Array w = reshape(array<double>({0.5, -0.3, 0.2, 0.1, 0.4, -0.6, 0.3, 0.2, -0.1}), {3, 3});
  Array xs = reshape(array<double>({0.1, 0.2, -0.3, 0.5, -0.1, 0.0}), {2, 3});
  Graph g = make_graph(grad(rnn_loss_scan))(w, xs);
  CHECK(g.to_text().find("scan") != std::string::npos);
  Graph back = Graph::from_json(g.to_json());
  check_close(evaluate(back, {w, xs})[0], grad(rnn_loss_unrolled)(w, xs));
}

TEST_CASE("control flow: a while body returning a constant as a carry keeps the constant intact",
          "[transforms][control]") {
  // A graph (as JSON may bring; traced bodies copy such outputs) whose body returns its constant c
  // as carry b, so from step 1 on carry b's buffer is c's; d = 2 b may be computed in the
  // buffer of a carry dead after it, but never in c's.
  using ir::Op;
  const ir::ValueType vec{DType::f64, {4}}, count{DType::i32, {}};
  ir::GraphBuilder cb;
  ir::ValueId limit = cb.input(count), i = cb.input(count);
  cb.input(vec);
  cb.input(vec);
  ir::GraphPtr cond = cb.finish({cb.add1(Op::lt, {i, limit})});
  ir::GraphBuilder bb;
  ir::ValueId c = bb.input(vec), two = bb.input(vec), one = bb.input(count);
  ir::ValueId j = bb.input(count), b = bb.input(vec);
  bb.input(vec);
  ir::GraphPtr body = bb.finish({bb.add1(Op::add, {j, one}), c, bb.add1(Op::mul, {b, two})});
  ir::GraphBuilder g;
  std::vector<ir::ValueId> ins;
  for (const ir::ValueType& t : {count, vec, vec, count, count, vec, vec}) ins.push_back(g.input(t));
  ir::IdList outs = g.add(Op::while_loop, ir::IdList(ins),
                          {{"cond", ir::Graphs{cond}},
                           {"body", ir::Graphs{body}},
                           {"cond_nconsts", int64_t{1}},
                           {"body_nconsts", int64_t{3}},
                           {"checkpoints", int64_t{128}}});
  const Graph loop(g.finish({outs[1], outs[2]}));
  const Array cv = array<double>({1.0, 2.0, 3.0, 4.0});
  const std::vector<Array> args = {scalar(3, DType::i32),      cv,
                                   full({4}, 2.0, DType::f64), scalar(1, DType::i32),
                                   scalar(0, DType::i32),      zeros({4}, DType::f64),
                                   zeros({4}, DType::f64)};
  std::vector<Array> result = evaluate(loop, args);
  CHECK(result[0].to_vector<double>() == std::vector<double>{1.0, 2.0, 3.0, 4.0});
  CHECK(result[1].to_vector<double>() == std::vector<double>{2.0, 4.0, 6.0, 8.0});
  CHECK(cv.to_vector<double>() == std::vector<double>{1.0, 2.0, 3.0, 4.0});
}
