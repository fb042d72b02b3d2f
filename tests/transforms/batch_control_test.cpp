// Batching rules of control flow (cond, while, scan), of calls carrying user
// rules (custom_jvp_call, custom_vjp_call, remat, custom_lin) and of
// collectives. A vmapped graph must give what running the unbatched graph on
// each example and stacking the results gives, for batch sizes 3 and 1 and
// every placement of the batch axes (per-example predicates included).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <sstream>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "transforms/transpose.h"
#include "transforms/vmap.h"

using namespace graft;
using ir::Op;

namespace {

constexpr int64_t kNone = -1;

// An input of the graph: example k's value, and the batch-axis placements to try.
struct In {
  std::function<Array(int64_t)> example;
  std::vector<int64_t> dims;
};

// Smooth f64 data that differs per example k.
Array data(Shape shape, double salt, int64_t k) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(0.37 * static_cast<double>(i) + 0.91 * static_cast<double>(k) + salt);
  return array(v, std::move(shape));
}

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

void check_close(const Array& got, const Array& want) {
  CHECK(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).margin(1e-12).epsilon(1e-12));
  }
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  for (int64_t d : dims) os << (d == kNone ? std::string("none") : std::to_string(d)) << ' ';
  return os.str();
}

std::vector<std::vector<int64_t>> placements(const std::vector<In>& ins) {
  std::vector<std::vector<int64_t>> out{{}};
  for (const In& in : ins) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& p : out)
      for (int64_t d : in.dims) {
        next.push_back(p);
        next.back().push_back(d);
      }
    out = std::move(next);
  }
  std::erase_if(out, [](const std::vector<int64_t>& p) {
    return std::all_of(p.begin(), p.end(), [](int64_t d) { return d == kNone; });
  });
  return out;
}

size_t count(const ir::Graph& g, Op op) {
  size_t n = 0;
  for (const ir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

// The vmapped graph (outputs at 0) against a loop over the examples.
void check_vmap(const ir::Graph& g, const std::vector<In>& ins, const std::string& what) {
  const size_t n_out = g.outputs().size();
  for (const std::vector<int64_t>& dims : placements(ins)) {
    for (int64_t batch : {3, 1}) {
      INFO(what << ": in_dims " << dims_str(dims) << "batch " << batch);
      std::vector<Array> inputs;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (dims[i] == kNone) {
          inputs.push_back(ins[i].example(0));
          continue;
        }
        std::vector<Array> ex;
        for (int64_t k = 0; k < batch; ++k) ex.push_back(ins[i].example(k));
        inputs.push_back(stack(ex, static_cast<int>(dims[i])));
      }
      ir::GraphPtr bg = transforms::vmap_graph(g, dims, std::vector<int64_t>(n_out, 0), batch, "");
      ir::verify(*bg);
      std::vector<Array> got = detail::call_graph(*bg, inputs);
      REQUIRE(got.size() == n_out);
      std::vector<std::vector<Array>> per_out(n_out);
      for (int64_t k = 0; k < batch; ++k) {
        std::vector<Array> args;
        for (size_t i = 0; i < ins.size(); ++i) args.push_back(ins[i].example(dims[i] == kNone ? 0 : k));
        std::vector<Array> outs = detail::call_graph(g, args);
        for (size_t o = 0; o < n_out; ++o) per_out[o].push_back(outs[o]);
      }
      for (size_t o = 0; o < n_out; ++o) {
        INFO("output " << o);
        check_close(got[o], stack(per_out[o], 0));
      }
    }
  }
}

In floats(Shape shape, double salt, std::vector<int64_t> dims) {
  return {[shape, salt](int64_t k) { return data(shape, salt, k); }, std::move(dims)};
}

}  // namespace

// ---- cond

TEST_CASE("vmap: cond, batched operands and per-example predicates", "[vmap][control]") {
  auto f = [](const Array& p, const Array& x, const Array& y) {
    return cond(
        p,
        [](const Array& a, const Array& b) { return std::make_tuple(a * b + 1.0, sum(a), full({2}, 1.0, f64)); },
        [](const Array& a, const Array& b) { return std::make_tuple(a - b, max(a), full({2}, 2.0, f64)); }, x, y);
  };
  Graph g = make_graph(f)(scalar(1, DType::bool_), data({2, 3}, 0, 0), data({3}, 1, 0));
  REQUIRE(count(g.ir(), Op::cond) == 1);
  In p{[](int64_t k) { return scalar(k % 2 == 0 ? 1 : 0, DType::bool_); }, {kNone, 0}};
  check_vmap(g.ir(), {p, floats({2, 3}, 0, {kNone, 0, 1, 2}), floats({3}, 1, {kNone, 0, 1})}, "cond");

  // An unbatched predicate keeps one cond; an output no branch batches stays unbatched.
  transforms::BatchedGraph bg = transforms::batch_graph(g.ir(), {kNone, 1, kNone}, 3, "");
  CHECK(count(*bg.graph, Op::cond) == 1);
  CHECK(bg.out_dims == std::vector<int64_t>{0, 0, kNone});
  // A batched predicate runs both branches and selects.
  bg = transforms::batch_graph(g.ir(), {0, kNone, kNone}, 3, "");
  CHECK(count(*bg.graph, Op::cond) == 0);
  CHECK(count(*bg.graph, Op::select) >= 3);
}

TEST_CASE("vmap: switch with an i32 index, clamped per example", "[vmap][control]") {
  using Fn = std::function<Array(const Array&)>;
  std::vector<Fn> branches = {[](const Array& a) { return a * 2.0; }, [](const Array& a) { return graft::sin(a); },
                              [](const Array& a) { return a - 5.0; }};
  auto f = [&](const Array& i, const Array& x) { return switch_(i, branches, x); };
  Graph g = make_graph(f)(scalar(0, DType::i32), data({2, 2}, 0, 0));
  In idx{[](int64_t k) { return scalar(std::vector<double>{-1, 1, 5}[static_cast<size_t>(k)], DType::i32); }, {kNone, 0}};
  check_vmap(g.ir(), {idx, floats({2, 2}, 0, {kNone, 0, 2})}, "switch");
  // Every index value, one example each.
  In all{[](int64_t k) { return scalar(static_cast<double>(k) - 1, DType::i32); }, {0}};
  check_vmap(g.ir(), {all, floats({2, 2}, 0, {0})}, "switch all indices");
}

// ---- while

TEST_CASE("vmap: while with a batched bound (per-example trip counts)", "[vmap][control]") {
  auto f = [](const Array& n, const Array& x) {
    return fori_loop(scalar(0, DType::i32), n,
                     [](const Array& i, const Array& c) { return c * 0.9 + astype(i, f64) + graft::sin(c); }, x);
  };
  Graph g = make_graph(f)(scalar(3, DType::i32), data({3}, 0, 0));
  REQUIRE(count(g.ir(), Op::while_loop) == 1);
  In n{[](int64_t k) { return scalar(std::vector<double>{2, 5, 0}[static_cast<size_t>(k)], DType::i32); }, {kNone, 0}};
  check_vmap(g.ir(), {n, floats({3}, 0, {kNone, 0, 1})}, "while bound");

  // An unbatched bound keeps the predicate unbatched: no select in the loop.
  transforms::BatchedGraph bg = transforms::batch_graph(g.ir(), {kNone, 0}, 3, "");
  REQUIRE(count(*bg.graph, Op::while_loop) == 1);
  for (const ir::Node& node : bg.graph->nodes())
    if (node.op == Op::while_loop) {
      const ir::Graph& body = *std::get<ir::Graphs>(*node.attrs.find("body")).at(0);
      CHECK(count(body, Op::select) == 0);
    }
}

TEST_CASE("vmap: while whose predicate depends on the batched carry", "[vmap][control]") {
  auto f = [](const Array& x) {
    return while_loop([](const Array& c) { return sum(c) < 10.0; }, [](const Array& c) { return c * 1.5 + 0.5; }, x);
  };
  Graph g = make_graph(f)(data({2}, 0, 0));
  In x{[](int64_t k) { return abs(data({2}, 0, k)) * static_cast<double>(k * 3 + 1); }, {0, 1}};
  check_vmap(g.ir(), {x}, "while carry predicate");
}

TEST_CASE("vmap: while carry made batched by the body", "[vmap][control]") {
  // The carry x starts unbatched; adding the batched c makes it batched; the
  // counter stays unbatched.
  auto f = [](const Array& c, const Array& x) {
    auto cond_fn = [](const std::pair<Array, Array>& s) { return s.first < 4; };
    auto body_fn = [&c](const std::pair<Array, Array>& s) {
      return std::make_pair(s.first + 1, s.second * 0.5 + c * astype(s.first, f64));
    };
    return while_loop(cond_fn, body_fn, std::make_pair(scalar(0, DType::i32), x));
  };
  Graph g = make_graph(f)(data({2}, 0, 0), data({2}, 1, 0));
  check_vmap(g.ir(), {floats({2}, 0, {kNone, 0, 1}), floats({2}, 1, {kNone, 0, 1})}, "while fixed point");
  transforms::BatchedGraph bg = transforms::batch_graph(g.ir(), {0, kNone}, 3, "");
  CHECK(bg.out_dims == std::vector<int64_t>{kNone, 0});
}

// ---- scan

TEST_CASE("vmap: scan over batched consts, carries and xs, both directions", "[vmap][control]") {
  for (bool reverse : {false, true}) {
    auto f = [reverse](const Array& w, const Array& c0, const Array& xs) {
      auto step = [&w](const Array& c, const Array& x) {
        Array c2 = c * w + graft::sin(x);
        return std::make_pair(c2, std::make_tuple(c2 * 2.0, graft::cos(x), sum(c2)));
      };
      auto [c, ys] = scan(step, c0, xs, -1, reverse);
      return std::make_tuple(c, std::get<0>(ys), std::get<1>(ys), std::get<2>(ys));
    };
    Graph g = make_graph(f)(data({3}, 0, 0), data({3}, 1, 0), data({4, 3}, 2, 0));
    REQUIRE(count(g.ir(), Op::scan) == 1);
    check_vmap(g.ir(),
               {floats({3}, 0, {kNone, 0, 1}), floats({3}, 1, {kNone, 0}), floats({4, 3}, 2, {kNone, 0, 1, 2})},
               reverse ? "scan reverse" : "scan");
    // xs batched at 1 stay where they are; the carry is batched by the body;
    // ys that depend only on unbatched values stay unbatched; batched ys at 1.
    transforms::BatchedGraph bg = transforms::batch_graph(g.ir(), {kNone, kNone, 2}, 3, "");
    CHECK(count(*bg.graph, Op::transpose) == 0);
    CHECK(bg.out_dims == std::vector<int64_t>{0, 1, 1, 1});
    bg = transforms::batch_graph(g.ir(), {0, kNone, kNone}, 3, "");
    CHECK(bg.out_dims == std::vector<int64_t>{0, 1, kNone, 1});
  }
}

TEST_CASE("vmap: fori_loop with static bounds (a scan without xs)", "[vmap][control]") {
  auto f = [](const Array& x) {
    return fori_loop(0, 3, [](const Array& i, const Array& c) { return c * c * 0.5 + astype(i, f64); }, x);
  };
  Graph g = make_graph(f)(data({2, 2}, 0, 0));
  check_vmap(g.ir(), {floats({2, 2}, 0, {0, 1, 2})}, "fori_loop");
}

TEST_CASE("vmap: control flow composes with grad and nested vmap", "[vmap][control]") {
  auto loss = [](const Array& w, const Array& x) {
    auto step = [&w](const Array& c, const Array& xi) { return std::make_pair(graft::tanh(c * w + xi), c); };
    Array c = scan(step, zeros({2}, f64), x).first;
    return sum(cond(sum(c) > 0.0, [](const Array& a) { return a * a; }, [](const Array& a) { return -a; }, c));
  };
  Array w = data({2}, 0.3, 0);
  Array xs = stack({data({4, 2}, 1, 0), data({4, 2}, 1, 1), data({4, 2}, 1, 2)});
  Array got = vmap(grad(loss), Axes{none, 0})(w, xs);
  for (int64_t k = 0; k < 3; ++k) check_close(got[k], grad(loss)(w, xs[k]));
  Array got2 = grad([&](const Array& ww) { return sum(vmap(loss, Axes{none, 0})(ww, xs)); })(w);
  Array want2 = grad(loss)(w, xs[0]) + grad(loss)(w, xs[1]) + grad(loss)(w, xs[2]);
  check_close(got2, want2);
  // vmap of vmap over a while loop with per-example trip counts.
  auto g = [](const Array& x) {
    return while_loop([](const Array& c) { return sum(c) < 5.0; }, [](const Array& c) { return c + 1.0; }, x);
  };
  Array cube = abs(data({2, 3, 2}, 0, 0)) * 3.0;
  Array nested = vmap(vmap(g))(cube);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) check_close(nested[i][j], g(cube[i][j]));
}

// ---- custom rules and remat

TEST_CASE("vmap: custom_jvp_call keeps its rule", "[vmap][custom]") {
  // The rule's tangent is twice the true one, so a batched rule is visible.
  auto f = custom_jvp([](const Array& a, const Array& b) { return graft::log(1.0 + graft::exp(a * b)); },
                      [](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
                        const Array& a = std::get<0>(p);
                        const Array& b = std::get<1>(p);
                        Array s = logistic(a * b) * 2.0;
                        return std::make_pair(graft::log(1.0 + graft::exp(a * b)),
                                              s * (std::get<0>(t) * b + a * std::get<1>(t)));
                      });
  Graph g = make_graph(f)(data({3}, 0, 0), data({3}, 1, 0));
  REQUIRE(count(g.ir(), Op::custom_jvp_call) == 1);
  check_vmap(g.ir(), {floats({3}, 0, {kNone, 0, 1}), floats({3}, 1, {kNone, 0, 1})}, "custom_jvp");
  transforms::BatchedGraph bg = transforms::batch_graph(g.ir(), {1, kNone}, 2, "");
  CHECK(count(*bg.graph, Op::custom_jvp_call) == 1);

  Array A = stack({data({3}, 0, 0), data({3}, 0, 1)});
  Array b = data({3}, 1, 0);
  Array ga = grad([&](const Array& a) { return sum(vmap(f, Axes{0, none})(a, b)); })(A);
  check_close(ga, logistic(A * b) * 2.0 * b);
  Array gb = grad([&](const Array& bb) { return sum(vmap(f, Axes{0, none})(A, bb)); })(b);
  check_close(gb, sum(logistic(A * b) * 2.0 * A, {0}));
  auto [y, t] = jvp([&](const Array& a) { return vmap(f, Axes{0, none})(a, b); }, std::make_tuple(A),
                    std::make_tuple(full({2, 3}, 1.0, f64)));
  check_close(t, logistic(A * b) * 2.0 * b);
}

TEST_CASE("vmap: custom_vjp_call keeps its bwd", "[vmap][custom]") {
  // bwd scales the true cotangents by 3.
  auto h = custom_vjp([](const Array& a, const Array& b) { return a * b + graft::sin(a); },
                      [](const Array& a, const Array& b) {
                        return std::make_pair(a * b + graft::sin(a), std::make_tuple(a, b, graft::cos(a)));
                      },
                      [](const std::tuple<Array, Array, Array>& r, const Array& ct) {
                        return std::make_tuple(ct * (std::get<1>(r) + std::get<2>(r)) * 3.0, ct * std::get<0>(r) * 3.0);
                      });
  Graph g = make_graph(h)(data({3}, 0, 0), data({3}, 1, 0));
  REQUIRE(count(g.ir(), Op::custom_vjp_call) == 1);
  check_vmap(g.ir(), {floats({3}, 0, {kNone, 0, 1}), floats({3}, 1, {kNone, 0, 1})}, "custom_vjp");

  Array A = stack({data({3}, 0, 0), data({3}, 0, 1), data({3}, 0, 2)});
  Array b = data({3}, 1, 0);
  auto [ga, gb] = grad<0, 1>([&](const Array& a, const Array& bb) { return sum(vmap(h, Axes{0, none})(a, bb)); })(A, b);
  check_close(ga, (b + graft::cos(A)) * 3.0);
  check_close(gb, sum(A, {0}) * 3.0);  // the unbatched operand's cotangent sums over examples
  Array per = vmap(grad([&](const Array& a, const Array& bb) { return sum(h(a, bb)); }), Axes{0, none})(A, b);
  check_close(per, (b + graft::cos(A)) * 3.0);
}

TEST_CASE("vmap: checkpoint (remat) batches its body", "[vmap][custom]") {
  auto f = checkpoint([](const Array& a, const Array& b) { return graft::sin(a) * graft::exp(b); });
  Graph g = make_graph(f)(data({2, 3}, 0, 0), data({2, 3}, 1, 0));
  REQUIRE(count(g.ir(), Op::remat) == 1);
  check_vmap(g.ir(), {floats({2, 3}, 0, {kNone, 0, 2}), floats({2, 3}, 1, {kNone, 1})}, "remat");
  Array A = stack({data({2, 3}, 0, 0), data({2, 3}, 0, 1)});
  Array B = data({2, 3}, 1, 0);
  Array ga = grad([&](const Array& a) { return sum(vmap(f, Axes{0, none})(a, B)); })(A);
  check_close(ga, graft::cos(A) * graft::exp(B));
}

TEST_CASE("vmap: custom_lin batches bwd, and transposes to the batched bwd", "[vmap][custom]") {
  // custom_lin(r, t) with bwd (r, ct) -> ct * sin(r): the transpose of the
  // batched node must be the per-example bwd.
  ir::GraphBuilder bb;
  ir::ValueType v3{f64, {3}};
  ir::ValueId r = bb.input(v3), ct = bb.input(v3);
  ir::GraphPtr bwd = bb.finish({bb.add1(Op::mul, {ct, bb.add1(Op::sin, {r})})});
  ir::GraphBuilder b;
  ir::ValueId res = b.input(v3), tan = b.input(v3);
  ir::GraphPtr g = b.finish(b.add(Op::custom_lin, {res, tan}, {{"bwd", ir::Graphs{bwd}}, {"num_residuals", int64_t{1}}}));
  for (std::vector<int64_t> dims : {std::vector<int64_t>{0, 0}, {1, kNone}, {kNone, 1}, {0, 1}}) {
    INFO("in_dims " << dims_str(dims));
    transforms::BatchedGraph bg = transforms::batch_graph(*g, dims, 2, "");
    ir::verify(*bg.graph);
    REQUIRE(count(*bg.graph, Op::custom_lin) == 1);
    CHECK(bg.out_dims == std::vector<int64_t>{0});
    // Transposed in the tangent: (residual, output cotangent) -> tangent cotangent.
    ir::GraphPtr tg = transforms::transpose_graph(*bg.graph, {false, true});
    Array rr = dims[0] == kNone ? data({3}, 0, 0) : stack({data({3}, 0, 0), data({3}, 0, 1)}, static_cast<int>(dims[0]));
    Array cts = stack({data({3}, 1, 0), data({3}, 1, 1)});
    Array got = detail::call_graph(*tg, {rr, cts})[0];
    // The batched tangent operand sits where dims[1] put it (broadcast if none).
    const int64_t td = dims[1] == kNone ? 0 : dims[1];
    std::vector<Array> rows;
    for (int64_t k = 0; k < 2; ++k) rows.push_back(cts[k] * graft::sin(data({3}, 0, dims[0] == kNone ? 0 : k)));
    Array want = stack(rows, static_cast<int>(td));
    if (dims[1] == kNone) want = sum(want, {0});
    check_close(got, want);
  }
}

// ---- collectives

namespace {

ir::GraphPtr collective(Op op, const ir::ValueType& x, ir::Attrs attrs) {
  ir::GraphBuilder b;
  std::vector<ir::ValueId> ins;
  if (op != Op::axis_index) ins.push_back(b.input(x));
  return b.finish(b.add(op, ins, std::move(attrs)));
}

ir::Attrs gather_attrs(const std::string& name, int64_t size, int64_t axis, bool tiled) {
  return {{"axis_name", name}, {"axis_size", size}, {"axis", axis}, {"tiled", int64_t{tiled}}};
}

// Examples 0..n-1 of shape `shape`, and their stack at `dim`.
std::vector<Array> examples(const Shape& shape, int64_t n) {
  std::vector<Array> ex;
  for (int64_t k = 0; k < n; ++k) ex.push_back(data(shape, 0.5, k));
  return ex;
}

// Runs the one-node graph batched over axis "i" with x's batch axis at dim.
std::pair<Array, int64_t> run_over_i(const ir::Graph& g, const std::vector<Array>& ex, int64_t dim) {
  const int64_t n = static_cast<int64_t>(ex.size());
  transforms::BatchedGraph bg = transforms::batch_graph(g, {dim}, n, "i");
  ir::verify(*bg.graph);
  Array x = dim == kNone ? ex[0] : stack(ex, static_cast<int>(dim));
  return {detail::call_graph(*bg.graph, {x})[0], bg.out_dims[0]};
}

Array sum_of(const std::vector<Array>& ex) {
  Array s = ex[0];
  for (size_t k = 1; k < ex.size(); ++k) s = s + ex[k];
  return s;
}

}  // namespace

TEST_CASE("vmap: psum, pmax, pmin over the vmapped axis", "[vmap][collective]") {
  const ir::ValueType t{f64, {2, 3}};
  for (int64_t n : {3, 1}) {
    std::vector<Array> ex = examples({2, 3}, n);
    for (int64_t dim : {0, 1, 2}) {
      INFO("batch " << n << " dim " << dim);
      auto [s, sd] = run_over_i(*collective(Op::psum, t, {{"axis_name", std::string("i")}}), ex, dim);
      CHECK(sd == kNone);  // the same for every example
      check_close(s, sum_of(ex));
      auto [mx, mxd] = run_over_i(*collective(Op::pmax, t, {{"axis_name", std::string("i")}}), ex, dim);
      CHECK(mxd == kNone);
      check_close(mx, max(stack(ex), {0}));
      auto [mn, mnd] = run_over_i(*collective(Op::pmin, t, {{"axis_name", std::string("i")}}), ex, dim);
      CHECK(mnd == kNone);
      check_close(mn, min(stack(ex), {0}));
    }
    // An unbatched operand: psum is n copies, pmax is itself.
    ir::GraphBuilder b;
    ir::ValueId x = b.input(t), y = b.input(t);
    ir::GraphPtr g = b.finish({b.add1(Op::psum, {x}, {{"axis_name", std::string("i")}}),
                               b.add1(Op::pmax, {x}, {{"axis_name", std::string("i")}}), y});
    transforms::BatchedGraph bg = transforms::batch_graph(*g, {kNone, 0}, n, "i");
    std::vector<Array> outs = detail::call_graph(*bg.graph, {ex[0], stack(ex)});
    check_close(outs[0], ex[0] * static_cast<double>(n));
    check_close(outs[1], ex[0]);
  }
}

TEST_CASE("vmap: all_gather and psum_scatter over the vmapped axis", "[vmap][collective]") {
  for (int64_t n : {3, 1}) {
    std::vector<Array> ex = examples({2, 3}, n);
    for (int64_t dim : {0, 1, 2}) {
      for (int64_t axis : {0, 1, 2}) {
        INFO("batch " << n << " dim " << dim << " axis " << axis);
        auto [got, gd] = run_over_i(*collective(Op::all_gather, {f64, {2, 3}}, gather_attrs("i", n, axis, false)), ex, dim);
        CHECK(gd == kNone);
        check_close(got, stack(ex, static_cast<int>(axis)));
        if (axis < 2) {
          auto [tg, tgd] =
              run_over_i(*collective(Op::all_gather, {f64, {2, 3}}, gather_attrs("i", n, axis, true)), ex, dim);
          CHECK(tgd == kNone);
          check_close(tg, concatenate(ex, static_cast<int>(axis)));
        }
      }
    }
    // psum_scatter: example j gets part j of the sum.
    for (int64_t axis : {0, 1}) {
      for (bool tiled : {false, true}) {
        Shape shape = axis == 0 ? Shape{n * (tiled ? 2 : 1), 3} : Shape{3, n * (tiled ? 2 : 1)};
        std::vector<Array> xs = examples(shape, n);
        Array total = sum_of(xs);
        for (int64_t dim : {0, 1, 2}) {
          INFO("psum_scatter batch " << n << " axis " << axis << " tiled " << tiled << " dim " << dim);
          auto [got, gd] =
              run_over_i(*collective(Op::psum_scatter, {f64, shape}, gather_attrs("i", n, axis, tiled)), xs, dim);
          REQUIRE(gd != kNone);
          for (int64_t j = 0; j < n; ++j) {
            Array mine = take(got, array(std::vector<int>{static_cast<int>(j)}, Shape{}), static_cast<int>(gd));
            Shape start{0, 0}, stop = shape;
            start[axis] = tiled ? 2 * j : j;
            stop[axis] = tiled ? 2 * j + 2 : j + 1;
            Array part = slice(total, start, stop);
            if (!tiled) part = squeeze(part, {static_cast<int>(axis)});
            check_close(mine, part);
          }
        }
      }
    }
  }
}

TEST_CASE("vmap: ppermute and axis_index over the vmapped axis", "[vmap][collective]") {
  const int64_t n = 4;
  std::vector<Array> ex = examples({2, 3}, n);
  const std::vector<ir::Ints> perms = {{0, 1, 1, 2, 2, 3}, {0, 1, 1, 2, 2, 3, 3, 0}, {3, 0}, {0, 0, 1, 1, 2, 2, 3, 3}};
  for (const ir::Ints& perm : perms) {
    for (int64_t dim : {0, 1, 2}) {
      INFO("perm " << dims_str(perm) << "dim " << dim);
      auto [got, gd] =
          run_over_i(*collective(Op::ppermute, {f64, {2, 3}}, {{"axis_name", std::string("i")}, {"perm", perm}}), ex, dim);
      REQUIRE(gd != kNone);
      std::vector<Array> want(n, zeros({2, 3}, f64));
      for (size_t p = 0; p < perm.size(); p += 2) want[static_cast<size_t>(perm[p + 1])] = ex[static_cast<size_t>(perm[p])];
      check_close(got, stack(want, static_cast<int>(gd)));
    }
  }
  // An unbatched operand: every receiving example gets it.
  auto [u, ud] = run_over_i(*collective(Op::ppermute, {f64, {2, 3}}, {{"axis_name", std::string("i")}, {"perm", perms[0]}}),
                            ex, kNone);
  REQUIRE(ud == 0);
  check_close(u, stack({zeros({2, 3}, f64), ex[0], ex[0], ex[0]}));

  transforms::BatchedGraph ai = transforms::batch_graph(*collective(Op::axis_index, {}, {{"axis_name", std::string("i")}}), {}, n, "i");
  REQUIRE(ai.out_dims == std::vector<int64_t>{0});
  std::vector<Array> idx = detail::call_graph(*ai.graph, {});
  CHECK(idx[0].dtype() == DType::i32);
  CHECK(values(idx[0]) == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("vmap: collectives over another axis pass through", "[vmap][collective]") {
  const ir::ValueType t{f64, {2, 3}};
  // The outer axis "o" has size 5; the vmap (axis "i", size 4) batches at dim.
  for (int64_t dim : {0, 1, 2}) {
    for (Op op : {Op::psum, Op::pmax, Op::pmin, Op::ppermute}) {
      ir::Attrs attrs{{"axis_name", std::string("o")}};
      if (op == Op::ppermute) attrs.set("perm", ir::Ints{0, 1});
      transforms::BatchedGraph bg = transforms::batch_graph(*collective(op, t, attrs), {dim}, 4, "i");
      REQUIRE(count(*bg.graph, op) == 1);
      CHECK(bg.out_dims == std::vector<int64_t>{dim});
      CHECK_THROWS(detail::call_graph(*bg.graph, {zeros(bg.graph->type(bg.graph->inputs()[0]).shape, f64)}));
    }
    for (Op op : {Op::all_gather, Op::psum_scatter}) {
      for (int64_t axis : {0, 1, 2}) {
        for (bool tiled : {false, true}) {
          const bool gather = op == Op::all_gather;
          if (axis == 2 && (tiled || !gather)) continue;
          Shape shape = {2, 3};
          if (!gather && !tiled) shape[static_cast<size_t>(axis)] = 5;
          if (!gather && tiled) shape[static_cast<size_t>(axis)] = 10;
          ir::GraphPtr g = collective(op, {f64, shape}, gather_attrs("o", 5, axis, tiled));
          INFO(ir::op_name(op) << " axis " << axis << " tiled " << tiled << " dim " << dim);
          transforms::BatchedGraph bg = transforms::batch_graph(*g, {dim}, 4, "i");
          ir::verify(*bg.graph);
          REQUIRE(count(*bg.graph, op) == 1);
          REQUIRE(bg.out_dims[0] != kNone);
          Shape want = g->type(g->outputs()[0]).shape;
          want.insert(want.begin() + bg.out_dims[0], 4);
          CHECK(bg.graph->type(bg.graph->outputs()[0]).shape == want);
        }
      }
    }
  }
  // A psum over an outer vmap's axis: nested vmaps with the right names.
  Array cube = reshape(arange(24, f64), {2, 3, 4});
  auto inner = vmap([](const Array& a) { return a - psum(a, "o") / 2.0; }, 1, 1, "i");
  check_close(vmap(inner, 0, 0, "o")(cube), cube - sum(cube, {0}, true) / 2.0);
}

TEST_CASE("vmap: collectives inside control flow over the vmapped axis", "[vmap][collective][control]") {
  Array xs = data({4, 5, 2}, 0, 0);  // 4 examples, each scanned over 5 steps
  auto f = [](const Array& x) {
    auto step = [](const Array& c, const Array& xi) {
      Array c2 = c + xi - pmean(xi, "i");
      return std::make_pair(c2, psum(c2 * c2, "i"));
    };
    auto [c, ys] = scan(step, zeros({2}, f64), x);
    Array k = astype(axis_index("i"), f64);
    return std::make_tuple(c, ys, cond(k > 1.0, [](const Array& a) { return a * 2.0; }, [](const Array& a) { return a; }, c));
  };
  auto [c, ys, sel] = vmap(f, 0, 0, "i")(xs);
  Array centred = xs - mean(xs, {0}, true);
  Array want_c = sum(centred, {1});
  check_close(c, want_c);
  Array run = cumsum(centred, 1);
  Array want_ys = broadcast_to(sum(run * run, {0}, true), {4, 5, 2});
  check_close(ys, want_ys);
  check_close(sel, want_c * reshape(array<double>({1, 1, 2, 2}), {4, 1}));
}
