// Arrays a transformed function closes over: every transform but jit reads
// their current value at each call (as jax.grad and jax.vmap do); jit reads
// them when it traces (as jax.jit does).
#include <catch2/catch.hpp>

#include "graft/graft.h"

using namespace graft;

namespace {
std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }
}  // namespace

TEST_CASE("closures: transforms other than jit read the captured value at every call", "[closure][transforms]") {
  Array x = array({1.0, 2.0, 3.0});
  Array scale = scalar(2.0, f64);
  auto loss = [&](const Array& v) { return sum(v * scale); };
  auto times = [&](const Array& v) { return v * scale; };

  auto g = grad(loss);
  auto vg = value_and_grad(loss);
  auto vm = vmap(times);
  auto jf = jacfwd(times);
  auto jr = jacrev(times);
  auto hs = hessian([&](const Array& v) { return sum(v * v * scale); });
  auto run_all = [&](double s) {
    INFO("scale " << s);
    CHECK(values(g(x)) == std::vector<double>(3, s));
    auto [value, grads] = vg(x);
    CHECK(value.item<double>() == Approx(6 * s));
    CHECK(values(grads) == std::vector<double>(3, s));
    CHECK(values(vm(x)) == std::vector<double>{s, 2 * s, 3 * s});
    auto [y, pullback] = vjp(times, x);
    CHECK(values(std::get<0>(pullback(ones({3}, f64)))) == std::vector<double>(3, s));
    CHECK(values(jvp(times, std::make_tuple(x), std::make_tuple(ones({3}, f64))).second) == std::vector<double>(3, s));
    CHECK(values(jf(x)) == values(eye(3) * s));
    CHECK(values(jr(x)) == values(eye(3) * s));
    CHECK(values(hs(x)) == values(eye(3) * (2 * s)));
  };
  run_all(2.0);
  scale = scalar(10.0, f64);  // rebinding the captured handle
  run_all(10.0);
  scale = scalar(-0.5, f64);
  run_all(-0.5);
  // A new shape of the captured array traces a graph of its own.
  scale = array({1.0, 2.0, 3.0});
  CHECK(values(g(x)) == std::vector<double>{1, 2, 3});
}

TEST_CASE("closures: a closure that changes at every call stays correct", "[closure][transforms]") {
  // More distinct closures than the cache keeps per signature: each call is right.
  Array w = array({0.5, -1.0});
  Array data;
  auto g = grad([&](const Array& v) { return sum(graft::sin(v) * data); });
  for (int step = 0; step < 12; ++step) {
    data = array({1.0 + step, 2.0 - step});
    std::vector<double> got = values(g(w));
    CHECK(got[0] == Approx(std::cos(0.5) * (1.0 + step)));
    CHECK(got[1] == Approx(std::cos(-1.0) * (2.0 - step)));
  }
  // Cycling back to an earlier closure value reuses its graph and stays right.
  data = array({1.0, 2.0});
  CHECK(values(g(w))[1] == Approx(std::cos(-1.0) * 2.0));
}

TEST_CASE("closures: jit reads captured arrays when it traces", "[closure][jit]") {
  Array scale = scalar(2.0, f64);
  auto f = jit([&](const Array& v) { return v * scale; });
  Array x = array({1.0, 2.0});
  CHECK(values(f(x)) == std::vector<double>{2, 4});
  scale = scalar(10.0, f64);
  CHECK(values(f(x)) == std::vector<double>{2, 4});  // as jax.jit: the value at trace time
  CHECK(f.cache_size() == 1);
  // A grad inside jit is traced with jit's function: its captures are jit's constants.
  auto jg = jit(grad([&](const Array& v) { return sum(v * scale); }));
  CHECK(values(jg(x)) == std::vector<double>{10, 10});
}
