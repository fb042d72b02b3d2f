#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "graft/errors.h"
#include "ir/bgl.h"
#include "ir/builder.h"

using namespace graft;
using namespace graft::ir;

namespace {

const ValueType kF32x3{DType::f32, {3}};

Node make_node(int32_t id, Op op, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
  Node n;
  n.id = id;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// The GraphFormatError's message, or a failed test if nothing was thrown.
std::string format_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const GraphFormatError& e) {
    return e.what();
  }
  FAIL("no GraphFormatError was thrown");
  return {};
}

std::vector<int32_t> node_ids(const Graph& g) {
  std::vector<int32_t> ids;
  for (const Node& n : g.nodes()) ids.push_back(n.id);
  return ids;
}

// True when every node's operands are inputs or outputs of earlier nodes.
bool uses_follow_definitions(const Graph& g) {
  std::set<ValueId> visible(g.inputs().begin(), g.inputs().end());
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.inputs)
      if (!visible.count(v)) return false;
    visible.insert(n.outputs.begin(), n.outputs.end());
  }
  return true;
}

// x -> sin(0) -> exp(1) -> add(2) of sin and exp -> mul(3) with x, plus an
// independent cos(4) of x; nodes appended as 3, 1, 4, 2, 0.
Graph scrambled_graph() {
  Graph g;
  ValueId x = g.add_input(kF32x3);  // %0
  for (ValueId v = 1; v <= 5; ++v) g.define_value(v, kF32x3);
  g.add_node(make_node(3, Op::mul, {4, x}, {5}));
  g.add_node(make_node(1, Op::exp, {1}, {2}));
  g.add_node(make_node(4, Op::cos, {x}, {3}));
  g.add_node(make_node(2, Op::add, {1, 2}, {4}));
  g.add_node(make_node(0, Op::sin, {x}, {1}));
  g.set_outputs({5, 3});
  return g;
}

}  // namespace

TEST_CASE("bgl: the view has one vertex per node and one edge per use of a node's value", "[bgl]") {
  Graph g = scrambled_graph();
  DataflowView view = dataflow_view(g);
  CHECK(boost::num_vertices(view.graph) == 5);
  // Uses of node values: mul uses %4, exp uses %1, add uses %1 and %2; uses of x make no edge.
  CHECK(boost::num_edges(view.graph) == 4);
  CHECK(view.producer_of(0) == DataflowView::kNoProducer);  // an input
  CHECK(view.producer_of(4) == 3);                          // add, at index 3
  CHECK(view.producer_of(99) == DataflowView::kNoProducer);

  // add (index 3) is fed by sin (index 4) as operand 0 and exp (index 1) as operand 1.
  std::map<size_t, std::pair<DataflowVertex, ValueId>> add_operands;
  for (auto [it, end] = boost::in_edges(3, view.graph); it != end; ++it)
    add_operands[view.graph[*it].operand] = {boost::source(*it, view.graph), view.graph[*it].value};
  CHECK(add_operands.size() == 2);
  CHECK(add_operands[0] == std::pair<DataflowVertex, ValueId>{4, 1});
  CHECK(add_operands[1] == std::pair<DataflowVertex, ValueId>{1, 2});
}

TEST_CASE("bgl: topo_sort orders a scrambled graph and keeps ids", "[bgl]") {
  Graph g = scrambled_graph();
  std::map<int32_t, Node> before;
  for (const Node& n : g.nodes()) before[n.id] = n;

  topo_sort(g);

  CHECK(uses_follow_definitions(g));
  REQUIRE_NOTHROW(verify(g));
  REQUIRE(g.num_nodes() == 5);
  for (const Node& n : g.nodes()) CHECK(n == before.at(n.id));  // ids, operands, outputs untouched
  CHECK(g.inputs() == std::vector<ValueId>{0});
  CHECK(g.outputs() == std::vector<ValueId>{5, 3});
  // Nodes are placed as the DFS first needs them, starting from mul.
  CHECK(node_ids(g) == std::vector<int32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("bgl: topo_sort leaves a sorted graph unchanged", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId y = b.input(kF32x3);
  ValueId s = b.add1(Op::sin, {x});
  ValueId c = b.add1(Op::cos, {y});  // independent of s
  ValueId e = b.add1(Op::exp, {s});
  ValueId m = b.add1(Op::mul, {e, c});
  ValueId n = b.add1(Op::neg, {x});  // independent of everything before
  GraphPtr built = b.finish({m, n});

  Graph g = *built;
  topo_sort(g);
  CHECK(g == *built);

  Graph empty;
  topo_sort(empty);
  CHECK(empty.num_nodes() == 0);
}

TEST_CASE("bgl: topo_sort names the nodes of a cycle", "[bgl]") {
  // node 3: %2 = add(%0, %3); node 5: %3 = mul(%2, %2); node 1 = neg(%0) is not on the cycle.
  Graph g;
  ValueId x = g.add_input(kF32x3);
  for (ValueId v = 1; v <= 3; ++v) g.define_value(v, kF32x3);
  g.add_node(make_node(1, Op::neg, {x}, {1}));
  g.add_node(make_node(3, Op::add, {x, 3}, {2}));
  g.add_node(make_node(5, Op::mul, {2, 2}, {3}));
  g.set_outputs({3, 1});

  std::string msg = format_error_of([&] { topo_sort(g); });
  CHECK_THAT(msg, Catch::Contains("cycle"));
  CHECK_THAT(msg, Catch::Contains("node 3 (add) -> node 5 (mul) -> node 3"));
  CHECK_THAT(msg, !Catch::Contains("node 1"));
  CHECK(node_ids(g) == std::vector<int32_t>{1, 3, 5});  // left as it was
}

TEST_CASE("bgl: topo_sort reports a node that uses its own output", "[bgl]") {
  Graph g;
  ValueId x = g.add_input(kF32x3);
  g.define_value(1, kF32x3);
  g.add_node(make_node(7, Op::add, {x, 1}, {1}));
  g.set_outputs({1});
  std::string msg = format_error_of([&] { topo_sort(g); });
  CHECK_THAT(msg, Catch::Contains("cycle through node 7 (add) -> node 7"));
}

TEST_CASE("bgl: a use of an undefined value is an error", "[bgl]") {
  SECTION("typed but defined by no node and no input") {
    Graph g;
    ValueId x = g.add_input(kF32x3);
    g.define_value(1, kF32x3);
    g.define_value(9, kF32x3);
    g.add_node(make_node(0, Op::add, {x, 9}, {1}));
    g.set_outputs({1});
    std::string msg = format_error_of([&] { topo_sort(g); });
    CHECK_THAT(msg, Catch::Contains("undefined value %9"));
    CHECK_THAT(msg, Catch::Contains("node 0 (add)"));
  }
  SECTION("an id the graph has never seen") {
    Graph g;
    ValueId x = g.add_input(kF32x3);
    g.define_value(1, kF32x3);
    g.add_node(make_node(0, Op::sin, {42}, {1}));
    g.add_node(make_node(1, Op::cos, {x}, {}));
    g.set_outputs({1});
    CHECK_THAT(format_error_of([&] { topo_sort(g); }), Catch::Contains("undefined value %42"));
  }
  SECTION("a graph output") {
    Graph g;
    g.add_input(kF32x3);
    g.define_value(1, kF32x3);
    g.set_outputs({1});
    CHECK_THAT(format_error_of([&] { topo_sort(g); }), Catch::Contains("undefined value %1"));
    CHECK_THAT(format_error_of([&] { dead_code_elimination(g); }), Catch::Contains("undefined value %1"));
  }
  SECTION("a value defined by two nodes") {
    Graph g;
    ValueId x = g.add_input(kF32x3);
    g.define_value(1, kF32x3);
    g.add_node(make_node(0, Op::sin, {x}, {1}));
    g.add_node(make_node(1, Op::cos, {x}, {1}));
    g.set_outputs({1});
    CHECK_THAT(format_error_of([&] { topo_sort(g); }), Catch::Contains("defined by both node 0 (sin) and node 1 (cos)"));
  }
}

TEST_CASE("bgl: dead code elimination keeps exactly what the outputs need", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);             // %0
  ValueId y = b.input(kF32x3);             // %1
  ValueId unused = b.input(kF32x3);        // %2, stays in the signature
  ValueId a = b.add1(Op::sin, {x});        // node 0, live: shared by both outputs
  ValueId t = b.add1(Op::exp, {y});        // node 1, dead
  ValueId u = b.add1(Op::neg, {t});        // node 2, dead, fed by a dead node
  ValueId c = b.add1(Op::mul, {a, y});     // node 3, live
  b.add1(Op::add, {c, u});                 // node 4, dead, fed by a live and a dead node
  ValueId d = b.add1(Op::cos, {a});        // node 5, live
  b.add1(Op::tanh, {unused});              // node 6, dead
  GraphPtr g = b.finish({c, d, c});

  Graph pruned = dead_code_elimination(*g);

  CHECK(node_ids(pruned) == std::vector<int32_t>{0, 3, 5});
  CHECK(pruned.inputs() == std::vector<ValueId>{x, y, unused});
  CHECK(pruned.input_types() == g->input_types());
  CHECK(pruned.outputs() == std::vector<ValueId>{c, d, c});
  CHECK(pruned.output_types() == g->output_types());
  for (const Node& n : pruned.nodes()) CHECK(n == g->nodes()[n.id]);  // builder ids are indices
  CHECK(pruned.has_value(a));
  CHECK_FALSE(pruned.has_value(t));
  CHECK_FALSE(pruned.has_value(u));
  REQUIRE_NOTHROW(verify(pruned));

  SECTION("it is idempotent") { CHECK(dead_code_elimination(pruned) == pruned); }
}

TEST_CASE("bgl: dead code elimination of nodes out of topological order", "[bgl]") {
  // The usual graph is in order and is swept backwards; this one is not, and
  // goes through the dataflow view instead, with the same answer.
  Graph g;
  ValueId x = g.add_input(kF32x3);
  g.define_value(1, kF32x3);
  g.define_value(2, kF32x3);
  g.define_value(3, kF32x3);
  g.add_node(make_node(0, Op::cos, {1}, {2}));  // live, reads node 1's value
  g.add_node(make_node(1, Op::sin, {x}, {1}));  // live
  g.add_node(make_node(2, Op::exp, {x}, {3}));  // dead
  g.set_outputs({2});
  Graph pruned = dead_code_elimination(g);
  CHECK(node_ids(pruned) == std::vector<int32_t>{0, 1});
  CHECK_FALSE(pruned.has_value(3));
}

TEST_CASE("bgl: in_topological_order tells built graphs from scrambled and malformed ones", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId s = b.add1(Op::sin, {x});
  GraphPtr built = b.finish({b.add1(Op::mul, {s, x})});
  CHECK(in_topological_order(*built));
  CHECK(in_topological_order(Graph()));

  Graph scrambled = scrambled_graph();
  CHECK_FALSE(in_topological_order(scrambled));
  topo_sort(scrambled);
  CHECK(in_topological_order(scrambled));

  Graph twice = *built;  // one value defined by two nodes
  twice.add_node(make_node(9, Op::cos, {x}, {s}));
  CHECK_FALSE(in_topological_order(twice));
  Graph undefined_output = *built;
  undefined_output.set_outputs({42});
  CHECK_FALSE(in_topological_order(undefined_output));
}

TEST_CASE("bgl: dead code elimination drops the types of the values it removes", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId dead = b.add1(Op::reduce_sum, {x}, {{"axes", Ints{0}}});  // f32[], unlike every live value
  ValueId live = b.add1(Op::sin, {x});
  Graph g = b.finish_graph({live});
  REQUIRE(g.has_value(dead));
  Graph pruned = dead_code_elimination(std::move(g));
  CHECK_FALSE(pruned.has_value(dead));
  CHECK(pruned.value_id_bound() > dead);  // ids are not handed out again
  CHECK(pruned.type(live) == kF32x3);
  Graph rebuilt = pruned;
  CHECK(rebuilt.new_value(kF32x3) == pruned.value_id_bound());
  CHECK_THROWS_AS(rebuilt.keep_nodes({}), Error);  // one flag per node
}

TEST_CASE("bgl: dead code elimination of a graph that returns its inputs removes every node", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId y = b.input(kF32x3);
  ValueId s = b.add1(Op::sin, {x});
  b.add1(Op::add, {s, y});
  GraphPtr g = b.finish({y, x, y});

  Graph pruned = dead_code_elimination(*g);
  CHECK(pruned.num_nodes() == 0);
  CHECK(pruned.inputs() == std::vector<ValueId>{x, y});
  CHECK(pruned.outputs() == std::vector<ValueId>{y, x, y});
  REQUIRE_NOTHROW(verify(pruned));
}

TEST_CASE("bgl: reachable_from on a diamond", "[bgl]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId top = b.add1(Op::sin, {x});        // 0
  ValueId left = b.add1(Op::exp, {top});     // 1
  ValueId right = b.add1(Op::neg, {top});    // 2
  ValueId bottom = b.add1(Op::add, {left, right});  // 3
  ValueId aside = b.add1(Op::cos, {x});      // 4
  GraphPtr g = b.finish({bottom, aside});

  using Reached = std::vector<bool>;
  CHECK(reachable_from(*g, {0}) == Reached{true, true, true, true, false});
  CHECK(reachable_from(*g, {1}) == Reached{false, true, false, true, false});
  CHECK(reachable_from(*g, {1, 2}) == Reached{false, true, true, true, false});
  CHECK(reachable_from(*g, {3}) == Reached{false, false, false, true, false});
  CHECK(reachable_from(*g, {4, 4}) == Reached{false, false, false, false, true});
  CHECK(reachable_from(*g, {}) == Reached(5, false));

  DataflowView view = dataflow_view(*g);
  CHECK(reachable_from(view, {2}) == Reached{false, false, true, true, false});
  CHECK_THROWS_AS(reachable_from(view, {5}), Error);
}
