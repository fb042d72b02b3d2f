// Control flow (cond, switch_, while_loop, fori_loop, scan): values eagerly
// and through make_graph + evaluate, pytrees, closures over traced values,
// JSON round trips, and the errors for mismatched branches and carries.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/graft.h"
#include "ir/graph.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

Array bool_scalar(bool b) { return scalar(b ? 1.0 : 0.0, bool_); }
Array i32_scalar(int64_t v) { return scalar(static_cast<double>(v), i32); }

int count_ops(const Graph& g, const std::string& name) {
  int n = 0;
  for (const auto& node : g.ir().nodes())
    if (ir::op_name(node.op) == name) ++n;
  return n;
}

const ir::Node& only_node(const Graph& g, const std::string& name) {
  for (const auto& node : g.ir().nodes())
    if (ir::op_name(node.op) == name) return node;
  FAIL("no " << name << " node");
  throw;
}

void check_close(const Array& got, const Array& want, double tol = 1e-5) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  std::vector<double> g = astype(got, f64).to_vector<double>(), w = astype(want, f64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
  }
}

// Evaluates g, and the same graph after a JSON round trip, on inputs; both must agree.
std::vector<Array> eval_both(const Graph& g, const std::vector<Array>& inputs) {
  std::vector<Array> direct = evaluate(g, inputs);
  Graph back = Graph::from_json(g.to_json());
  CHECK(back.ir() == g.ir());
  std::vector<Array> again = evaluate(back, inputs);
  REQUIRE(direct.size() == again.size());
  for (size_t i = 0; i < direct.size(); ++i) check_close(again[i], direct[i], 0);
  return direct;
}

}  // namespace

TEST_CASE("cond: picks the branch eagerly", "[control]") {
  Array x = array({1.0f, -2.0f, 3.0f});
  auto double_it = [](const Array& v) { return v * 2.0; };
  auto negate = [](const Array& v) { return -v; };
  CHECK(cond(bool_scalar(true), double_it, negate, x).to_vector<float>() == std::vector<float>{2, -4, 6});
  CHECK(cond(bool_scalar(false), double_it, negate, x).to_vector<float>() == std::vector<float>{-1, 2, -3});
  CHECK(cond(sum(x) > 0.0, double_it, negate, x).to_vector<float>() == std::vector<float>{2, -4, 6});
  // An integer predicate: nonzero is true.
  CHECK(cond(i32_scalar(7), double_it, negate, x).to_vector<float>() == std::vector<float>{2, -4, 6});
  CHECK(cond(scalar(0, i64), double_it, negate, x).to_vector<float>() == std::vector<float>{-1, 2, -3});
  // Several operands, no operand at all.
  Array y = cond(bool_scalar(true), [](const Array& a, const Array& b) { return a - b; },
                 [](const Array& a, const Array& b) { return a + b; }, x, ones({3}));
  CHECK(y.to_vector<float>() == std::vector<float>{0, -3, 2});
  Array k = cond(bool_scalar(false), [] { return scalar(1.0); }, [] { return scalar(2.0); });
  CHECK(k.item<float>() == 2.0f);
}

TEST_CASE("cond: inside make_graph, evaluated for either predicate", "[control]") {
  auto f = [](const Array& p, const Array& x) {
    return cond(p, [](const Array& v) { return sin(v); }, [](const Array& v) { return cos(v) * 3.0; }, x);
  };
  Array x = array({0.5f, 1.5f});
  Graph g = make_graph(f)(bool_scalar(true), x);
  CHECK(count_ops(g, "cond") == 1);
  CHECK(only_node(g, "cond").inputs.size() == 2);  // the predicate and x: nothing captured
  CHECK_NOTHROW(g.verify());
  check_close(eval_both(g, {bool_scalar(true), x})[0], sin(x));
  check_close(eval_both(g, {bool_scalar(false), x})[0], cos(x) * 3.0);
}

TEST_CASE("switch_: the index is clamped to the branches", "[control]") {
  using Fn = std::function<Array(const Array&)>;
  std::vector<Fn> branches = {[](const Array& v) { return v + 1.0; }, [](const Array& v) { return v * 2.0; },
                              [](const Array& v) { return v - 3.0; }};
  Array x = array({1.0f, 2.0f});
  auto run = [&](const Array& index) { return switch_(index, branches, x).to_vector<float>(); };
  CHECK(run(i32_scalar(0)) == std::vector<float>{2, 3});
  CHECK(run(i32_scalar(1)) == std::vector<float>{2, 4});
  CHECK(run(i32_scalar(2)) == std::vector<float>{-2, -1});
  CHECK(run(i32_scalar(-5)) == std::vector<float>{2, 3});
  CHECK(run(i32_scalar(10)) == std::vector<float>{-2, -1});
  CHECK(run(scalar(1, i64)) == std::vector<float>{2, 4});
  CHECK(run(scalar(4000000000.0, i64)) == std::vector<float>{-2, -1});  // clamped before narrowing to i32
  CHECK(run(scalar(7, u32)) == std::vector<float>{-2, -1});

  Graph g = make_graph([&](const Array& i, const Array& v) { return switch_(i, branches, v); })(i32_scalar(0), x);
  CHECK(only_node(g, "cond").attrs.find("branches") != nullptr);
  CHECK(eval_both(g, {i32_scalar(-1), x})[0].to_vector<float>() == std::vector<float>{2, 3});
  CHECK(eval_both(g, {i32_scalar(1), x})[0].to_vector<float>() == std::vector<float>{2, 4});
  CHECK(eval_both(g, {i32_scalar(99), x})[0].to_vector<float>() == std::vector<float>{-2, -1});
}

TEST_CASE("cond: pytree operands and results", "[control]") {
  using P = std::pair<Array, Array>;
  auto swap_scale = [](const P& p, const Array& s) { return std::make_tuple(p.second * s, p.first); };
  auto add_both = [](const P& p, const Array& s) { return std::make_tuple(p.first + p.second, p.second - s); };
  P p{array({1.0f, 2.0f}), array({10.0f, 20.0f})};
  Array s = scalar(3.0);
  auto [a, b] = cond(bool_scalar(true), swap_scale, add_both, p, s);
  CHECK(a.to_vector<float>() == std::vector<float>{30, 60});
  CHECK(b.to_vector<float>() == std::vector<float>{1, 2});
  auto [c, d] = cond(bool_scalar(false), swap_scale, add_both, p, s);
  CHECK(c.to_vector<float>() == std::vector<float>{11, 22});
  CHECK(d.to_vector<float>() == std::vector<float>{7, 17});

  // Traced, with a static leaf in the operands.
  auto f = [&](const Array& pred, const P& q) {
    auto r = cond(pred, [](const P& v, int k) { return std::make_tuple(v.first * static_cast<double>(k), v.second); },
                  [](const P& v, int) { return std::make_tuple(v.second, v.first); }, q, 4);
    return std::get<0>(r) + std::get<1>(r);
  };
  Graph g = make_graph(f)(bool_scalar(true), p);
  CHECK(eval_both(g, {bool_scalar(true), p.first, p.second})[0].to_vector<float>() == std::vector<float>{14, 28});
  CHECK(eval_both(g, {bool_scalar(false), p.first, p.second})[0].to_vector<float>() == std::vector<float>{11, 22});
}

TEST_CASE("cond: branches closing over traced values get them as operands", "[control]") {
  // true_fn closes over y, false_fn over z and y: the node takes each once.
  auto f = [](const Array& p, const Array& x, const Array& y, const Array& z) {
    return cond(p, [&](const Array& v) { return v + y; }, [&](const Array& v) { return v * z - y; }, x);
  };
  Array x = array({1.0f, 2.0f}), y = array({10.0f, 20.0f}), z = array({3.0f, 4.0f});
  Graph g = make_graph(f)(bool_scalar(true), x, y, z);
  const ir::Node& n = only_node(g, "cond");
  CHECK(n.inputs.size() == 4);  // predicate, x, then the captured y and z
  CHECK_NOTHROW(g.verify());
  CHECK(eval_both(g, {bool_scalar(true), x, y, z})[0].to_vector<float>() == std::vector<float>{11, 22});
  CHECK(eval_both(g, {bool_scalar(false), x, y, z})[0].to_vector<float>() == std::vector<float>{-7, -12});

  // A concrete array closed over is a constant of the branch, not an operand.
  Array c = array({100.0f, 200.0f});
  Graph h = make_graph([&](const Array& p, const Array& v) {
    return cond(p, [&](const Array& w) { return w + c; }, [](const Array& w) { return w; }, v);
  })(bool_scalar(true), x);
  CHECK(only_node(h, "cond").inputs.size() == 2);
  CHECK(eval_both(h, {bool_scalar(true), x})[0].to_vector<float>() == std::vector<float>{101, 202});

  // Nested: an inner cond's branch closes over a value two traces out.
  Graph k = make_graph([](const Array& p, const Array& v, const Array& w) {
    return cond(p, [&](const Array& a) { return cond(p, [&](const Array& b) { return b * w; }, [](const Array& b) { return b; }, a); },
                [](const Array& a) { return -a; }, v);
  })(bool_scalar(true), x, z);
  CHECK(eval_both(k, {bool_scalar(true), x, z})[0].to_vector<float>() == std::vector<float>{3, 8});
  CHECK(eval_both(k, {bool_scalar(false), x, z})[0].to_vector<float>() == std::vector<float>{-1, -2});
}

TEST_CASE("while_loop: Collatz step count and Newton's square root", "[control]") {
  using State = std::pair<Array, Array>;  // (n as f64, steps as i32)
  auto not_one = [](const State& s) { return s.first != 1.0; };
  auto step = [](const State& s) {
    Array even = floor(s.first / 2.0) * 2.0 == s.first;
    return State{where(even, s.first / 2.0, s.first * 3.0 + 1.0), s.second + 1};
  };
  auto [n, steps] = while_loop(not_one, step, State{scalar(27, f64), i32_scalar(0)});
  CHECK(n.item<double>() == 1.0);
  CHECK(steps.dtype() == i32);
  CHECK(steps.item<int32_t>() == 111);

  // Traced: the graph holds one while node; evaluate with other starts.
  Graph g = make_graph([&](const Array& start) { return while_loop(not_one, step, State{start, i32_scalar(0)}).second; })(
      scalar(27, f64));
  CHECK(count_ops(g, "while") == 1);
  CHECK(eval_both(g, {scalar(27, f64)})[0].item<int32_t>() == 111);
  CHECK(eval_both(g, {scalar(6, f64)})[0].item<int32_t>() == 8);
  CHECK(eval_both(g, {scalar(1, f64)})[0].item<int32_t>() == 0);  // the body never runs

  // Newton's iteration for sqrt(a), a traced value captured by cond_fn and body_fn.
  auto newton = [](const Array& a) {
    return while_loop([&](const Array& x) { return abs(x * x - a) > 1e-12 * a; },
                      [&](const Array& x) { return (x + a / x) * 0.5; }, a);
  };
  CHECK(newton(scalar(2, f64)).item<double>() == Approx(std::sqrt(2.0)).epsilon(1e-12));
  Graph h = make_graph(newton)(scalar(2, f64));
  const ir::Node& w = only_node(h, "while");
  CHECK(std::get<int64_t>(*w.attrs.find("cond_nconsts")) == 1);
  CHECK(std::get<int64_t>(*w.attrs.find("body_nconsts")) == 1);
  for (double a : {2.0, 10.0, 12345.0, 0.25})
    CHECK(eval_both(h, {scalar(a, f64)})[0].item<double>() == Approx(std::sqrt(a)).epsilon(1e-12));
}

TEST_CASE("fori_loop: sum of squares with integer and Array bounds", "[control]") {
  auto add_square = [](const Array& i, const Array& acc) { return acc + i * i; };
  auto closed_form = [](int64_t n) { return (n - 1) * n * (2 * n - 1) / 6; };  // sum of i*i for i < n
  CHECK(fori_loop(0, 10, add_square, i32_scalar(0)).item<int32_t>() == closed_form(10));
  CHECK(fori_loop(3, 10, add_square, i32_scalar(0)).item<int32_t>() == closed_form(10) - closed_form(3));
  CHECK(fori_loop(5, 2, add_square, i32_scalar(7)).item<int32_t>() == 7);  // empty range
  CHECK(fori_loop(i32_scalar(0), i32_scalar(10), add_square, i32_scalar(0)).item<int32_t>() == closed_form(10));
  CHECK(fori_loop(scalar(3, i64), scalar(10, i64), add_square, i32_scalar(0)).item<int32_t>() ==
        closed_form(10) - closed_form(3));

  // Integer bounds lower to scan (reverse-differentiable), Array bounds to while.
  Graph g = make_graph([&](const Array& acc) { return fori_loop(0, 100, add_square, acc); })(i32_scalar(0));
  CHECK(count_ops(g, "scan") == 1);
  CHECK(count_ops(g, "while") == 0);
  CHECK(std::get<int64_t>(*only_node(g, "scan").attrs.find("length")) == 100);
  CHECK(eval_both(g, {i32_scalar(5)})[0].item<int32_t>() == 5 + closed_form(100));

  Graph h = make_graph([&](const Array& hi, const Array& acc) { return fori_loop(i32_scalar(0), hi, add_square, acc); })(
      i32_scalar(0), i32_scalar(0));
  CHECK(count_ops(h, "while") == 1);
  CHECK(count_ops(h, "scan") == 0);
  for (int64_t n : {0, 1, 7, 50}) CHECK(eval_both(h, {i32_scalar(n), i32_scalar(0)})[0].item<int32_t>() == closed_form(n));

  // A pytree carry with floats: (sum of i, product of 0.5).
  auto [s, p] = fori_loop(
      0, 6, [](const Array& i, const std::pair<Array, Array>& c) { return std::make_pair(c.first + astype(i, f32), c.second * 0.5); },
      std::make_pair(scalar(0.0), scalar(1.0)));
  CHECK(s.item<float>() == 15.0f);
  CHECK(p.item<float>() == Approx(1.0 / 64));
}

TEST_CASE("while_loop: a buffer carry updated by dynamic_update_slice is written in place", "[control]") {
  // Each step writes one row of a [64, 256] buffer; the callback sees the buffer the step reads. Its
  // memory is the same at every step (no copy of the buffer per step), eagerly and under jit.
  std::vector<const void*> seen;
  auto fill = [&seen](const Array& rows) {
    auto out = while_loop(
        [](const auto& s) { return s.first < 6; },
        [&seen](const auto& s) {
          io_callback([&seen](const Array& buf) { seen.push_back(buf.unsafe_buffer_pointer()); }, std::tuple<>{},
                      s.second);
          Array row = broadcast_to(astype(s.first, f32), {1, 256});
          return std::make_pair(s.first + 1, dynamic_update_slice(s.second, row, {s.first, scalar(0, DType::i32)}));
        },
        std::make_pair(scalar(0, DType::i32), rows));
    return out.second;
  };
  for (bool jitted : {false, true}) {
    INFO((jitted ? "jit" : "eager"));
    seen.clear();
    const Array out = jitted ? jit(fill)(zeros({64, 256}, f32)) : fill(zeros({64, 256}, f32));
    REQUIRE(seen.size() == 6);
    CHECK(std::set<const void*>(seen.begin(), seen.end()).size() == 1);
    for (int r = 0; r < 8; ++r) CHECK(slice(out, {r, 0}, {r + 1, 1}).item<float>() == (r < 6 ? r : 0));
  }
}

TEST_CASE("scan: cumulative sums, forwards and in reverse", "[control]") {
  auto running = [](const Array& c, const Array& x) {
    Array next = c + x;
    return std::make_pair(next, next);
  };
  Array xs = array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  auto [total, ys] = scan(running, scalar(0.0), xs);
  CHECK(total.item<float>() == 15.0f);
  check_close(ys, cumsum(xs, 0));

  // Rows of a matrix, carry a vector.
  Array m = reshape(astype(arange(12), f32), {4, 3});
  auto [last, rows] = scan(running, zeros({3}), m);
  check_close(rows, cumsum(m, 0));
  check_close(last, sum(m, {0}));

  // reverse: from the last row to the first, each y at its x's index.
  auto [rlast, rrows] = scan(running, zeros({3}), m, -1, true);
  check_close(rrows, flip(cumsum(flip(m, {0}), 0), {0}));
  check_close(rlast, sum(m, {0}));
  auto [rt, rys] = scan(running, scalar(0.0), xs, 5, true);
  CHECK(rys.to_vector<float>() == std::vector<float>{15, 14, 12, 9, 5});
  CHECK(rt.item<float>() == 15.0f);

  // Traced, with a captured scale, then evaluated and round-tripped through JSON.
  auto f = [](const Array& init, const Array& v, const Array& scale) {
    auto [c, y] = scan([&](const Array& carry, const Array& x) {
      Array next = carry + x * scale;
      return std::make_pair(next, next);
    }, init, v);
    return std::make_pair(c, y);
  };
  Graph g = make_graph(f)(scalar(0.0), xs, scalar(2.0));
  const ir::Node& n = only_node(g, "scan");
  CHECK(std::get<int64_t>(*n.attrs.find("num_consts")) == 1);
  CHECK(std::get<int64_t>(*n.attrs.find("num_carry")) == 1);
  std::vector<Array> out = eval_both(g, {scalar(1.0), xs, scalar(2.0)});
  CHECK(out[0].item<float>() == 31.0f);
  CHECK(out[1].to_vector<float>() == std::vector<float>{3, 7, 13, 21, 31});
}

TEST_CASE("scan: pytree carry, xs and ys, length with no xs", "[control]") {
  using Carry = std::pair<Array, Array>;  // (running sum, running product)
  using Xs = std::tuple<Array, Array>;
  auto body = [](const Carry& c, const Xs& x) {
    Carry next{c.first + std::get<0>(x), c.second * std::get<1>(x)};
    std::map<std::string, Array> y{{"sum", next.first}, {"twice", std::get<1>(x) * 2.0}};
    return std::make_pair(next, y);
  };
  Xs xs{array({1.0f, 2.0f, 3.0f}), array({2.0f, 3.0f, 4.0f})};
  auto [carry, ys] = scan(body, Carry{scalar(0.0), scalar(1.0)}, xs);
  CHECK(carry.first.item<float>() == 6.0f);
  CHECK(carry.second.item<float>() == 24.0f);
  CHECK(ys.at("sum").to_vector<float>() == std::vector<float>{1, 3, 6});
  CHECK(ys.at("twice").to_vector<float>() == std::vector<float>{4, 6, 8});

  // No xs: the length says how many steps; ys still stack.
  auto doubling = [](const Array& c, const std::tuple<>&) { return std::make_pair(c * 2.0, c); };
  auto [c5, seq] = scan(doubling, scalar(1.0), std::tuple<>{}, 5);
  CHECK(c5.item<float>() == 32.0f);
  CHECK(seq.to_vector<float>() == std::vector<float>{1, 2, 4, 8, 16});
  auto [c0, none] = scan(doubling, scalar(3.0), std::tuple<>{}, 0);
  CHECK(c0.item<float>() == 3.0f);
  CHECK(none.shape() == Shape{0});

  Graph g = make_graph([&](const Array& start) { return scan(doubling, start, std::tuple<>{}, 4, true); })(scalar(1.0));
  std::vector<Array> out = eval_both(g, {scalar(3.0)});
  CHECK(out[0].item<float>() == 48.0f);
  CHECK(out[1].to_vector<float>() == std::vector<float>{24, 12, 6, 3});  // reverse: step k writes index 3 - k
}

TEST_CASE("control flow: one graph with cond, while and scan round-trips through JSON", "[control]") {
  auto f = [](const Array& p, const Array& xs) {
    Array c = cond(p, [](const Array& v) { return sum(v); }, [](const Array& v) { return max(v); }, xs);
    Array w = while_loop([](const Array& v) { return v < 100.0; }, [](const Array& v) { return v * 3.0; }, c);
    auto [last, ys] = scan([](const Array& carry, const Array& x) { return std::make_pair(carry * x, carry); }, w, xs);
    return std::make_tuple(c, w, last, ys);
  };
  Array xs = array({1.0f, 2.0f, 0.5f});
  Graph g = make_graph(f)(bool_scalar(true), xs);
  CHECK(count_ops(g, "cond") == 1);
  CHECK(count_ops(g, "while") == 1);
  CHECK(count_ops(g, "scan") == 1);
  CHECK_THAT(g.to_text(), Contains("scan"));
  CHECK_FALSE(g.to_dot().empty());
  std::vector<Array> out = eval_both(g, {bool_scalar(true), xs});
  auto eager = f(bool_scalar(true), xs);
  check_close(out[0], std::get<0>(eager));
  check_close(out[1], std::get<1>(eager));
  check_close(out[2], std::get<2>(eager));
  check_close(out[3], std::get<3>(eager));
  CHECK(out[0].item<float>() == 3.5f);
  CHECK(out[1].item<float>() == 283.5f);  // 3.5 * 3^4
  CHECK(out[3].to_vector<float>() == std::vector<float>{283.5f, 283.5f, 567.0f});
  std::vector<Array> other = eval_both(g, {bool_scalar(false), xs});
  CHECK(other[0].item<float>() == 2.0f);
  CHECK(other[1].item<float>() == 162.0f);
}

TEST_CASE("control flow: errors name the branch, the carry and the mismatch", "[control]") {
  Array x = array({1.0f, 2.0f});
  // Branch results of different shapes, dtypes and structures.
  try {
    cond(bool_scalar(true), [](const Array& v) { return sum(v); }, [](const Array& v) { return v; }, x);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("cond"));
    CHECK_THAT(e.what(), Contains("true_fn"));
    CHECK_THAT(e.what(), Contains("f32[]"));
    CHECK_THAT(e.what(), Contains("f32[2]"));
    CHECK_THAT(e.what(), Contains("control_flow_test.cpp"));
  }
  try {
    cond(bool_scalar(true), [](const Array& v) { return astype(v, f64); }, [](const Array& v) { return v; }, x);
    FAIL("no error");
  } catch (const DTypeError& e) {
    CHECK_THAT(e.what(), Contains("f64[2]"));
    CHECK_THAT(e.what(), Contains("false_fn"));
  }
  using VFn = std::function<std::vector<Array>(const Array&)>;
  std::vector<VFn> uneven = {[](const Array& v) { return std::vector<Array>{v}; },
                             [](const Array& v) { return std::vector<Array>{v, v}; }};
  try {
    switch_(i32_scalar(0), uneven, x);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("branch 1"));
    CHECK_THAT(e.what(), Contains("tree structure"));
  }
  CHECK_THROWS_AS(switch_(i32_scalar(0), std::vector<VFn>{}, x), ShapeError);
  CHECK_THROWS_AS(switch_(scalar(1.0), uneven, x), DTypeError);
  CHECK_THROWS_AS(cond(array({true, false}), [](const Array& v) { return v; }, [](const Array& v) { return v; }, x),
                  ShapeError);
  CHECK_THROWS_AS(cond(scalar(1.0), [](const Array& v) { return v; }, [](const Array& v) { return v; }, x), DTypeError);

  // A while body that changes the carry's dtype or shape; a cond_fn that is not bool.
  try {
    while_loop([](const Array& v) { return v < 10.0; }, [](const Array& v) { return astype(v, f64) + 1.0; }, scalar(0.0));
    FAIL("no error");
  } catch (const DTypeError& e) {
    CHECK_THAT(e.what(), Contains("while_loop"));
    CHECK_THAT(e.what(), Contains("body_fn"));
    CHECK_THAT(e.what(), Contains("f64[]"));
  }
  try {
    while_loop([](const Array& v) { return sum(v) < 10.0; }, [](const Array& v) { return concatenate({v, v}); }, x);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("carry leaf 0"));
    CHECK_THAT(e.what(), Contains("f32[4]"));
  }
  CHECK_THROWS_AS(while_loop([](const Array& v) { return v; }, [](const Array& v) { return v; }, scalar(1.0)),
                  DTypeError);
  CHECK_THROWS_AS(fori_loop(0, 3, [](const Array& i, const Array& c) { return c + astype(i, f32); }, i32_scalar(0)),
                  DTypeError);
  CHECK_THROWS_AS(fori_loop(scalar(0.0), scalar(3.0), [](const Array&, const Array& c) { return c; }, x), DTypeError);

  // scan: xs of different lengths, a length that disagrees, no xs and no length, a carry that changes.
  auto body = [](const Array& c, const std::pair<Array, Array>& xy) {
    return std::make_pair(c + xy.first + xy.second, c);
  };
  try {
    scan(body, scalar(0.0), std::make_pair(zeros({3}), zeros({4})));
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("leading dimension"));
    CHECK_THAT(e.what(), Contains("xs leaf 1"));
  }
  try {
    scan(body, scalar(0.0), std::make_pair(zeros({3}), zeros({3})), 5);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("length is 5"));
  }
  CHECK_THROWS_AS(scan([](const Array& c, const std::tuple<>&) { return std::make_pair(c, c); }, scalar(0.0), std::tuple<>{}),
                  ShapeError);
  CHECK_THROWS_AS(scan([](const Array& c, const Array& x) { return std::make_pair(c + x, c); }, scalar(0.0), scalar(1.0)),
                  ShapeError);
  try {
    scan([](const Array& c, const Array& x) { return std::make_pair(c * x, c); }, scalar(0.0), zeros({3, 2}));
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("scan"));
    CHECK_THAT(e.what(), Contains("carry leaf 0 as f32[2]"));
  }
}
