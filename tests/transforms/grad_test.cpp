// Reverse mode: closed-form gradients, the dot-product test against jvp for
// every differentiable op family, composition and pytrees.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "api/dispatch.h"
#include "graft/graft.h"

using namespace graft;

namespace {

Array points(std::vector<double> v) { return array(v, {static_cast<int64_t>(v.size())}); }

double inner(const Array& a, const Array& b) { return sum(a * b).item<double>(); }

// <grad_x <f(x), u>, v> must equal <u, jvp f(x; v)>: reverse mode checked by forward mode.
void dot_product_test(const std::function<Array(const Array&)>& f, const Array& x, const Array& v) {
  Array y = f(x);
  Array u = graft::cos(reshape(astype(arange(y.size()), f64), y.shape()) * 0.9) + 0.3;
  Array g = grad([&](const Array& a) { return sum(f(a) * u); })(x);
  Array t = jvp([&](const Array& a) { return f(a); }, std::make_tuple(x), std::make_tuple(v)).second;
  CHECK(inner(g, v) == Approx(inner(u, t)).epsilon(1e-9).margin(1e-9));
}

struct Mlp {
  Array w1, b1, w2;
  double scale;
};

}  // namespace

GRAFT_PYTREE(Mlp, w1, b1, w2, scale);

TEST_CASE("grad: closed forms", "[transforms][grad]") {
  auto rosenbrock = [](const Array& p) {
    Array x = p[0], y = p[1];
    return graft::square(1.0 - x) + 100.0 * graft::square(y - graft::square(x));
  };
  Array p = points({-1.2, 1.0});
  std::vector<double> g = grad(rosenbrock)(p).to_vector<double>();
  double x = -1.2, y = 1.0;
  CHECK(g[0] == Approx(-2 * (1 - x) - 400 * x * (y - x * x)));
  CHECK(g[1] == Approx(200 * (y - x * x)));

  Array z = points({0.5, -1.0, 2.0, 0.1});
  std::vector<double> lse = grad([](const Array& a) { return logsumexp(a); })(z).to_vector<double>();
  std::vector<double> sm = softmax(z).to_vector<double>();
  for (int i = 0; i < 4; ++i) CHECK(lse[i] == Approx(sm[i]));

  // Softmax cross-entropy: the gradient of the logits is softmax - one_hot.
  Array label = one_hot(array({2}), 4, f64)[0];
  auto xent = [&](const Array& logits) { return -sum(label * log_softmax(logits)); };
  std::vector<double> gx = grad(xent)(z).to_vector<double>();
  for (int i = 0; i < 4; ++i) CHECK(gx[i] == Approx(sm[i] - (i == 2 ? 1.0 : 0.0)));

  auto [v, gs] = value_and_grad([](const Array& a) { return sum(graft::sin(a)); })(z);
  CHECK(v.item<double>() == Approx(std::sin(0.5) + std::sin(-1.0) + std::sin(2.0) + std::sin(0.1)));
  CHECK(gs.to_vector<double>()[2] == Approx(std::cos(2.0)));
}

TEST_CASE("grad: the dot-product test against jvp, op by op", "[transforms][grad]") {
  std::vector<double> d(12);
  for (int k = 0; k < 12; ++k) d[k] = std::sin(1.3 * k) + 0.1 * k + 0.2;
  Array x = array(d, {3, 4});
  Array xp = graft::abs(x) + 0.5;
  Array v = graft::cos(x * 0.7);
  using F = std::function<Array(const Array&)>;
  std::vector<std::pair<const char*, F>> cases = {
      {"exp", [](const Array& a) { return graft::exp(a); }},
      {"tanh", [](const Array& a) { return graft::tanh(a); }},
      {"logistic", [](const Array& a) { return graft::logistic(a); }},
      {"erf", [](const Array& a) { return graft::erf(a); }},
      {"sin cos", [](const Array& a) { return graft::sin(a) * graft::cos(a); }},
      {"abs", [](const Array& a) { return graft::abs(a); }},
      {"div", [](const Array& a) { return a / (graft::square(a) + 1.0); }},
      {"pow", [](const Array& a) { return graft::pow(graft::abs(a) + 1.0, a); }},
      {"atan2", [](const Array& a) { return graft::atan2(a, graft::square(a) + 1.0); }},
      {"maximum", [](const Array& a) { return maximum(a, graft::sin(a)); }},
      {"where", [](const Array& a) { return where(a > 0.5, graft::square(a), -a); }},
      {"astype", [](const Array& a) { return astype(astype(a, f32), f64) * a; }},
      {"sum", [](const Array& a) { return sum(a, {1}); }},
      {"max", [](const Array& a) { return max(a, {0}); }},
      {"cumsum", [](const Array& a) { return cumsum(a, 1); }},
      {"softmax", [](const Array& a) { return softmax(a); }},
      {"transpose", [](const Array& a) { return transpose(a) * 2.0; }},
      {"reshape", [](const Array& a) { return reshape(a, {4, 3}); }},
      {"broadcast", [](const Array& a) { return a + sum(a, {0}, true); }},
      {"flip", [](const Array& a) { return flip(a, {0, 1}); }},
      {"slice", [](const Array& a) { return slice(a, {0, 1}, {3, 4}, {2, 2}); }},
      {"concatenate", [](const Array& a) { return concatenate({a, a * 3.0}, 0); }},
      {"pad", [](const Array& a) { return pad(a, {{1, 2}, {0, 1}}, 0.5); }},
      {"take", [](const Array& a) { return take(a, array({2, 0, 2}), 1); }},
      {"scatter_add", [](const Array& a) { return scatter_add(a, array({1, 1}), a[0] * 2.0, 0); }},
      {"dynamic_slice", [](const Array& a) { return dynamic_slice(a, {scalar(1, i32), scalar(1, i32)}, {2, 2}); }},
      {"dynamic_update_slice",
       [](const Array& a) { return dynamic_update_slice(a, reshape(a[2], {1, 4}) * 5.0, {scalar(0, i32), scalar(0, i32)}); }},
      {"matmul", [](const Array& a) { return matmul(a, transpose(a)); }},
      {"einsum batch", [](const Array& a) {
         Array b = reshape(a, {3, 2, 2});
         return einsum("bij,bjk->bki", {b, graft::tanh(b)});
       }},
  };
  for (auto& [name, f] : cases) {
    INFO(name);
    dot_product_test(f, x, v);
  }
  dot_product_test([](const Array& a) { return graft::log(a) + graft::sqrt(a) + graft::rsqrt(a); }, xp, v);
}

TEST_CASE("grad: argnums, pytrees and static leaves", "[transforms][grad]") {
  auto f = [](const Array& a, const Array& b, const Array& c) { return sum(a * b * b + c); };
  Array a = points({1, 2}), b = points({3, 4}), c = points({5, 6});
  auto [ga, gc] = grad<0, 2>(f)(a, b, c);
  CHECK(ga.to_vector<double>() == std::vector<double>{9, 16});
  CHECK(gc.to_vector<double>() == std::vector<double>{1, 1});
  CHECK(grad<1>(f)(a, b, c).to_vector<double>() == std::vector<double>{6, 16});

  Mlp params{array<double>({0.1, 0.2, 0.3, 0.4}, {2, 2}), points({0.0, 0.1}), array<double>({1.0, -1.0}, {2, 1}), 2.0};
  Array xs = array<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  auto loss = [&](const Mlp& p) { return p.scale * mean(graft::square(matmul(graft::tanh(matmul(xs, p.w1) + p.b1), p.w2))); };
  Mlp g = grad(loss)(params);
  CHECK(g.scale == 2.0);  // static leaves come back unchanged
  CHECK(g.w1.shape() == Shape{2, 2});
  CHECK(g.b1.shape() == Shape{2});
  // Against central differences on one weight.
  const double h = 1e-6;
  Mlp up = params, down = params;
  up.w2 = params.w2 + array<double>({h, 0.0}, {2, 1});
  down.w2 = params.w2 - array<double>({h, 0.0}, {2, 1});
  CHECK(g.w2.to_vector<double>()[0] == Approx((loss(up).item<double>() - loss(down).item<double>()) / (2 * h)).epsilon(1e-6));
}

TEST_CASE("grad: composes with itself, with jvp and inside traces", "[transforms][grad]") {
  auto f = [](const Array& x) { return sum(graft::sin(x)); };
  Array x = points({0.3, 1.0, 2.0});
  // grad(grad(.)) needs a scalar: differentiate sum of the gradient.
  Array g2 = grad([&](const Array& a) { return sum(grad(f)(a)); })(x);
  for (int i = 0; i < 3; ++i) CHECK(g2.to_vector<double>()[i] == Approx(-std::sin(x.to_vector<double>()[i])));

  // Hessian-vector product by jvp of grad: sum(x^3) has Hessian diag(6x).
  auto cube = [](const Array& a) { return sum(a * a * a); };
  Array v = points({1.0, -2.0, 0.5});
  Array hvp = jvp([&](const Array& a) { return grad(cube)(a); }, std::make_tuple(x), std::make_tuple(v)).second;
  for (int i = 0; i < 3; ++i)
    CHECK(hvp.to_vector<double>()[i] == Approx(6 * x.to_vector<double>()[i] * v.to_vector<double>()[i]));

  // A gradient of a lambda capturing an outer traced value, inside make_graph.
  Graph g = make_graph([](const Array& w, const Array& batch) {
    return grad([&](const Array& ww) { return sum(graft::square(ww * batch)); })(w);
  })(points({1, 2, 3}), points({2, 2, 2}));
  CHECK(evaluate(g, {points({1, 2, 3}), points({2, 2, 2})})[0].to_vector<double>() == std::vector<double>{8, 16, 24});
}

TEST_CASE("grad: bad input", "[transforms][grad][errors]") {
  CHECK_THROWS_AS(grad([](const Array& a) { return a; })(points({1, 2})), ShapeError);
  CHECK_THROWS_AS(grad([](const Array& a) { return sum(a); })(array({1, 2})), DTypeError);
  CHECK_THROWS_AS(grad([](const Array& a) { return astype(sum(a), i32); })(points({1, 2})), DTypeError);
  // Forward mode over a custom_vjp's linear part is refused: the error names
  // the op and the user's line.
  auto s = custom_vjp([](const Array& x) { return graft::sin(x); },
                      [](const Array& x) { return std::make_pair(graft::sin(x), graft::cos(x)); },
                      [](const Array& cos_x, const Array& g) { return std::make_tuple(g * cos_x); });
  try {
    jvp([&](const Array& a) { return jvp(s, std::make_tuple(a), std::make_tuple(a)).second; },
        std::make_tuple(points({1, 2})), std::make_tuple(points({1, 1})));
    FAIL("no error");
  } catch (const UnsupportedError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("custom_lin"));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("(at "));
  }
}

TEST_CASE("grad: prod (with zeros) and sort", "[transforms][grad]") {
  // d/dx_i prod(x) = prod of the others, exact even where x has a zero.
  Array x = array<double>({2.0, 0.0, 3.0, 5.0});
  CHECK(grad([](const Array& a) { return prod(a); })(x).to_vector<double>() == std::vector<double>{0, 30, 0, 0});
  Array m = array<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<double> gm = grad([](const Array& a) { return sum(prod(a, {1})); })(m).to_vector<double>();
  CHECK(gm == std::vector<double>{6, 3, 2, 30, 24, 20});
  // Sorting permutes the gradient back to where each element came from.
  Array s = array<double>({3.0, 1.0, 2.0});
  Array w = array<double>({10.0, 20.0, 30.0});
  CHECK(grad([&](const Array& a) { return sum(sort(a) * w); })(s).to_vector<double>() == std::vector<double>{30, 10, 20});
  Array s2 = array<double>({3, 1, 2, 0, 5, 4}, {2, 3});
  std::vector<double> g2 = grad([&](const Array& a) { return sum(sort(a, 0) * reshape(astype(arange(6), f64), {2, 3})); })(s2).to_vector<double>();
  CHECK(g2 == std::vector<double>{3, 1, 2, 0, 4, 5});  // by hand: column 0 swaps, columns 1 and 2 stay
}

TEST_CASE("grad: has_aux carries auxiliary outputs along", "[transforms][grad]") {
  auto loss = [](const Array& w, const Array& x) {
    Array pred = w * x;
    return std::make_pair(sum(graft::square(pred)), std::make_pair(pred, argmax(pred, 0)));
  };
  Array w = points({1.0, 2.0}), x = points({3.0, -1.0});
  auto [value, g] = value_and_grad(loss, has_aux)(w, x);
  CHECK(value.first.item<double>() == Approx(9.0 + 4.0));
  CHECK(value.second.first.to_vector<double>() == std::vector<double>{3.0, -2.0});
  CHECK(value.second.second.item<int32_t>() == 0);
  CHECK(g.to_vector<double>() == std::vector<double>{2 * 3.0 * 3.0, 2 * -2.0 * -1.0});
  auto [g2, aux] = grad<1>(loss, has_aux)(w, x);
  CHECK(g2.to_vector<double>() == std::vector<double>{2 * 3.0 * 1.0, 2 * -2.0 * 2.0});
  CHECK(aux.first.to_vector<double>() == std::vector<double>{3.0, -2.0});
  CHECK_THROWS_AS(grad([](const Array& a) { return std::make_pair(sum(a), a); })(w), ShapeError);
}

TEST_CASE("grad: a wrapper builds one VJP graph per abstract signature", "[transforms][grad][cache]") {
  // f is traced at every call (so captured arrays are read fresh); the VJP
  // graph is built once per signature and traced graph.
  auto built = [start = detail::GraphCache::total_traces()] { return detail::GraphCache::total_traces() - start; };
  int traces = 0;
  auto loss = [&traces](const Array& w, double scale) {
    ++traces;  // runs only while tracing
    return sum(graft::sin(w) * scale);
  };
  auto g = grad(loss);
  Array w = points({0.1, 0.2, 0.3});
  for (int step = 0; step < 10; ++step) {
    Array gw = g(w, 2.0);
    CHECK(gw.to_vector<double>()[1] == Approx(2.0 * std::cos(0.2 - 0.01 * step)));
    w = w - 0.01;  // new values, same signature
  }
  CHECK(traces == 10);
  CHECK(built() == 1);
  g(points({0.5, 0.6}), 2.0);  // a new shape builds again
  CHECK(built() == 2);
  // A new value of a static argument is a new signature: 2.0 and 2.0000000001 differ.
  CHECK(g(points({0.5, 0.6}), 2.0000000001).to_vector<double>()[0] == Approx(2.0000000001 * std::cos(0.5)));
  CHECK(built() == 3);
  g(astype(points({0.5, 0.6}), DType::f32), 2.0);  // and a new dtype
  CHECK(built() == 4);
  auto copy = g;  // copies share the cache
  copy(points({0.5, 0.6}), 2.0);
  CHECK(built() == 4);

  // value_and_grad with has_aux caches alike, keeping the aux tree's structure.
  auto vg = value_and_grad(
      [](const Array& w) { return std::make_pair(sum(w * w), std::make_tuple(w * 2.0, mean(w))); }, has_aux);
  for (int i = 0; i < 3; ++i) {
    auto [value, grads] = vg(points({1.0, 2.0 + i}));
    CHECK(value.first.item<double>() == Approx(1.0 + (2.0 + i) * (2.0 + i)));
    CHECK(std::get<1>(value.second).item<double>() == Approx((3.0 + i) / 2));
    CHECK(grads.to_vector<double>()[1] == Approx(2 * (2.0 + i)));
  }
  CHECK(built() == 5);
}

TEST_CASE("grad: a wrapper closing over a traced value is traced per call", "[transforms][grad][cache]") {
  // The inner wrapper captures the outer argument, a different tracer (and
  // value) in each call; a cached graph would carry the first one's.
  int traces = 0;
  Array s;
  auto inner = grad([&](const Array& w) {
    ++traces;
    return sum(w * w * s);
  });
  auto outer = [&](const Array& scale) {
    s = scale;
    return inner(points({1.0, 3.0}));
  };
  Graph gr = make_graph(outer)(scalar(1.0));
  CHECK(evaluate(gr, {scalar(2.0)})[0].to_vector<double>()[1] == Approx(12.0));
  CHECK(grad([&](const Array& k) { return sum(outer(k)); })(scalar(5.0)).item<double>() == Approx(2 * 1.0 + 2 * 3.0));
  CHECK(traces == 2);
  // Outside any trace the captured array is read at every call, too.
  s = scalar(2.0);
  CHECK(inner(points({1.0, 3.0})).to_vector<double>()[1] == Approx(12.0));
  s = scalar(10.0);
  CHECK(inner(points({1.0, 3.0})).to_vector<double>()[1] == Approx(60.0));
}
