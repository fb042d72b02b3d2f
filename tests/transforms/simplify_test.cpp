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
