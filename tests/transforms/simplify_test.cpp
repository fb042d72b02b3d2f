// jit's simplification: identities fold, shared work is computed once, dead
// nodes go, and the simplified graph computes what the original did.
#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "ir/graph.h"
#include "transforms/simplify.h"

using namespace graft;

namespace {

int count(const ir::Graph& g, ir::Op op) {
  int n = 0;
  for (const ir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

}  // namespace

TEST_CASE("simplify: identities fold and duplicates are shared", "[jit][simplify]") {
  auto f = [](const Array& x, const Array& y) {
    Array a = (x * 1.0 + 0.0) / 1.0 - 0.0;                      // x
    Array b = -(-transpose(transpose(a)));                       // x
    Array c = reshape(b, {3, 4});                                // same shape
    Array d = graft::sin(c) + graft::sin(x);                     // one sin
    Array unused = graft::exp(y) * 3.0;                          // dead
    (void)unused;
    return d * astype(y, f32);                                   // y is already f32
  };
  Array x = reshape(astype(arange(12), f32), {3, 4}) * 0.1f, y = full({3, 4}, 2.0f);
  Graph g = make_graph(f)(x, y);
  transforms::SimplifyResult r = transforms::simplify(g.ir());
  const ir::Graph& s = *r.graph;
  CHECK(r.rewrites >= 5);
  CHECK(count(s, ir::Op::sin) == 1);
  CHECK(count(s, ir::Op::transpose) == 0);
  CHECK(count(s, ir::Op::neg) == 0);
  CHECK(count(s, ir::Op::exp) == 0);
  CHECK(count(s, ir::Op::div) == 0);
  CHECK(s.num_nodes() <= 3);  // sin, add, mul
  std::vector<double> want = evaluate(g, {x, y})[0].to_vector<double>();
  std::vector<double> got = evaluate(Graph(r.graph), {x, y})[0].to_vector<double>();
  CHECK(got == want);
}

TEST_CASE("simplify: keeps what is not an identity", "[jit][simplify]") {
  auto f = [](const Array& x) { return transpose(transpose(x, {1, 2, 0}), {1, 2, 0}) * 2.0f + 1.0f; };
  Array x = reshape(astype(arange(24), f32), {2, 3, 4});
  Graph g = make_graph(f)(x);
  transforms::SimplifyResult r = transforms::simplify(g.ir());
  CHECK(count(*r.graph, ir::Op::transpose) == 2);  // (1,2,0) twice is (2,0,1), not the identity
  CHECK(evaluate(Graph(r.graph), {x})[0].to_vector<double>() == evaluate(g, {x})[0].to_vector<double>());
}

TEST_CASE("simplify: a sum of zero-padded pieces at disjoint windows is one buffer of updates", "[jit][simplify]") {
  // The cotangent of slices of one stacked array: each slice's is a pad.
  auto f = [](const Array& a, const Array& b, const Array& c) {
    return pad(a, {{0, 5}, {1, 0}}) + pad(b, {{2, 3}, {0, 1}}) + pad(c, {{4, 0}, {0, 0}});
  };
  Array a = reshape(astype(arange(6), f32) + 1.0f, {1, 6}), b = full({1, 6}, -2.5), c = reshape(astype(arange(14), f32), {2, 7});
  Graph g = make_graph(f)(a, b, c);
  transforms::SimplifyResult r = transforms::simplify(g.ir());
  CHECK(count(*r.graph, ir::Op::pad) == 1);
  CHECK(count(*r.graph, ir::Op::dynamic_update_slice) == 2);
  CHECK(count(*r.graph, ir::Op::add) == 0);
  CHECK(evaluate(Graph(r.graph), {a, b, c})[0].to_vector<double>() == evaluate(g, {a, b, c})[0].to_vector<double>());
  // Overlapping windows, interior or negative padding, or a nonzero pad value: kept as they are.
  auto overlapping = [](const Array& p, const Array& q) { return pad(p, {{0, 1}, {0, 0}}) + pad(q, {{1, 0}, {0, 0}}); };
  Array p = full({2, 3}, 1.0), q = full({2, 3}, 2.0);
  transforms::SimplifyResult r2 = transforms::simplify(make_graph(overlapping)(p, q).ir());
  CHECK(count(*r2.graph, ir::Op::dynamic_update_slice) == 0);
  auto valued = [](const Array& p, const Array& q) { return pad(p, {{0, 2}, {0, 0}}, 1.0) + pad(q, {{2, 0}, {0, 0}}); };
  transforms::SimplifyResult r3 = transforms::simplify(make_graph(valued)(p, q).ir());
  CHECK(count(*r3.graph, ir::Op::dynamic_update_slice) == 0);
}

TEST_CASE("simplify: the gradient of slices of a stacked array writes each slice's cotangent once", "[jit][simplify]") {
  // 16 checkpointed layers reading Ws[i] of one [16, 8, 8] array, against the same net over a vector of layers.
  const int L = 16;
  Array Ws = random::normal(random::key(3), {L, 8, 8}) * 0.3f, x = random::normal(random::key(4), {5, 8});
  std::vector<Array> Wv;
  for (int i = 0; i < L; ++i) Wv.push_back(Ws[i]);
  auto block = checkpoint([](const Array& h, const Array& W) { return h + tanh(matmul(h, W)); });
  auto stacked = [&](const Array& W, const Array& xb) {
    Array h = xb;
    for (int i = 0; i < L; ++i) h = block(h, W[i]);
    return mean(square(h));
  };
  auto vec = [&](const std::vector<Array>& W, const Array& xb) {
    Array h = xb;
    for (int i = 0; i < L; ++i) h = block(h, W[i]);
    return mean(square(h));
  };
  auto gs = jit(grad(stacked), {.backend = Backend::interpreter});
  const std::string text = gs.lower(Ws, x).compile().as_text();
  size_t pads = 0;
  for (size_t at = text.find("= pad["); at != std::string::npos; at = text.find("= pad[", at + 1)) ++pads;
  CHECK(pads == 1);  // one zero buffer, then one dynamic_update_slice per layer, in place
  const Array g = gs(Ws, x);
  const std::vector<Array> gv = grad(vec)(Wv, x);
  for (int i = 0; i < L; ++i) CHECK(g[i].to_vector<float>() == gv[static_cast<size_t>(i)].to_vector<float>());
}
