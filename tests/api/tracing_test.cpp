// make_graph: traced graphs, closure capture, leaks, concretization, and
// evaluate() of graphs read back from JSON.
#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "ir/graph.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

Array mlp(const Array& x, const std::vector<Array>& params) {
  Array h;
  {
    named_scope s("layer1");
    h = maximum(matmul(x, params[0]) + params[1], scalar(0.0));
  }
  named_scope s("layer2");
  return sum(matmul(h, params[2]));
}

std::vector<std::string> op_sequence(const Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.ir().nodes()) ops.emplace_back(ir::op_name(n.op));
  return ops;
}

}  // namespace

TEST_CASE("make_graph: an MLP traces to the expected nodes", "[api][tracing]") {
  Array x = ones({4, 3});
  std::vector<Array> params = {full({3, 5}, 0.1), full({5}, 0.2), full({5, 2}, 0.3)};
  Graph g = make_graph(mlp)(x, params);
  CHECK(g.ir().inputs().size() == 4);  // x and the three parameters, as one pytree
  CHECK(op_sequence(g) == std::vector<std::string>{"dot_general", "broadcast_in_dim", "add", "constant",
                                                    "broadcast_in_dim", "max", "dot_general", "reduce_sum"});
  CHECK_NOTHROW(g.verify());
  // Nodes carry the user's file and named scopes.
  for (const auto& n : g.ir().nodes()) {
    CHECK_THAT(std::string(n.loc.file), Contains("tracing_test.cpp"));
    CHECK((n.scope == "layer1" || n.scope == "layer2"));
  }
  CHECK_THAT(g.to_text(), Contains("# layer1"));

  // JSON round trip, then evaluate equals eager.
  Graph back = Graph::from_json(g.to_json());
  CHECK(back.to_json() == g.to_json());
  std::vector<Array> out = evaluate(back, {x, params[0], params[1], params[2]});
  REQUIRE(out.size() == 1);
  CHECK(out[0].item<float>() == Approx(mlp(x, params).item<float>()));
  // by hand: each hidden unit is 3*0.1 + 0.2 = 0.5; each output 5*0.5*0.3 = 0.75; 4 rows x 2 outputs
  CHECK(out[0].item<float>() == Approx(6.0f));
}

TEST_CASE("make_graph: concrete arrays become constants, traced ones refuse concretization", "[api][tracing]") {
  Array c = array({1.0f, 2.0f});
  Graph g = make_graph([&](const Array& x) { return x * c; })(zeros({2}));
  CHECK(op_sequence(g) == std::vector<std::string>{"constant", "mul"});
  CHECK(evaluate(g, {array({3.0f, 4.0f})})[0].to_vector<float>() == std::vector<float>{3, 8});

  auto branchy = [](const Array& x) {
    if (sum(x) > 0) return x;  // explicit operator bool on a traced value
    return -x;
  };
  CHECK_THROWS_AS(make_graph(branchy)(ones({2})), ConcretizationError);
  try {
    make_graph([](const Array& x) { return scalar(x.item<float>()); })(ones({}));
  } catch (const ConcretizationError& e) {
    CHECK_THAT(e.what(), Contains("where"));
    CHECK_THAT(e.what(), Contains("cond"));
  }
  CHECK_THROWS_AS(make_graph([](const Array& x) { x.to_vector<float>(); return x; })(ones({2})), ConcretizationError);
}

TEST_CASE("make_graph: a traced value used after its trace throws TracerLeakError", "[api][tracing]") {
  Array leaked;
  make_graph([&](const Array& x) {
    leaked = x * 2.0;
    return x;
  })(ones({3}));
  CHECK(leaked.is_traced());
  CHECK_THROWS_AS(leaked + 1.0, TracerLeakError);
  CHECK_THROWS_AS(make_graph([&](const Array& x) { return x + leaked; })(ones({3})), TracerLeakError);
  CHECK_THROWS_AS(leaked.item<float>(), ConcretizationError);
}

TEST_CASE("make_graph: nested traces capture enclosing values as implicit inputs", "[api][tracing]") {
  Graph inner_graph;
  Array example = ones({3});  // made outside: inside a trace, creating it would be traced too
  Graph outer = make_graph([&](const Array& x) {
    Array y = graft::sin(x);
    inner_graph = make_graph([&](const Array& z) { return z * y; })(example);
    return y;
  })(ones({3}));
  // The inner graph takes z and, after it, the captured y.
  REQUIRE(inner_graph.ir().inputs().size() == 2);
  CHECK(op_sequence(inner_graph) == std::vector<std::string>{"mul"});
  CHECK(op_sequence(outer) == std::vector<std::string>{"sin"});
  CHECK(evaluate(inner_graph, {array({1.0f, 2.0f, 3.0f}), array({2.0f, 2.0f, 0.5f})})[0].to_vector<float>() ==
        std::vector<float>{2, 4, 1.5f});

  // Three levels: the middle trace captures too, so the value flows down.
  Graph innermost;
  make_graph([&](const Array& x) {
    make_graph([&](const Array&) {
      innermost = make_graph([&](const Array& w) { return w + x; })(ones({3}));
      return x;
    })(ones({1}));
    return x;
  })(ones({3}));
  CHECK(innermost.ir().inputs().size() == 2);
}

TEST_CASE("make_graph: outputs may be inputs, constants or pytrees", "[api][tracing]") {
  Graph id = make_graph([](const Array& x) { return x; })(ones({2}));
  CHECK(evaluate(id, {array({5.0f, 6.0f})})[0].to_vector<float>() == std::vector<float>{5, 6});
  Graph pair = make_graph([](const Array& x, const Array& y) { return std::make_pair(x + y, x * y); })(ones({2}), ones({2}));
  std::vector<Array> out = evaluate(pair, {array({1.0f, 2.0f}), array({3.0f, 4.0f})});
  REQUIRE(out.size() == 2);
  CHECK(out[0].to_vector<float>() == std::vector<float>{4, 6});
  CHECK(out[1].to_vector<float>() == std::vector<float>{3, 8});
  std::map<std::string, Array> params = {{"w", ones({2})}, {"b", zeros({2})}};
  Graph m = make_graph([](const std::map<std::string, Array>& p, int scale) { return p.at("w") * scale + p.at("b"); })(
      params, 3);
  CHECK(m.ir().inputs().size() == 2);  // the int is static
  CHECK_THROWS_AS(evaluate(m, {ones({2})}), ShapeError);
  CHECK_THROWS_AS(evaluate(m, {ones({3}), ones({2})}), ShapeError);
}

namespace naming {
struct Mlp {
  Array w1, b1;
};
}  // namespace naming
GRAFT_PYTREE(naming::Mlp, w1, b1);

TEST_CASE("make_graph: inputs and outputs are named by their pytree paths", "[api][tracing]") {
  auto loss = [](const naming::Mlp& p, const Array& x) { return sum(tanh(matmul(x, p.w1) + p.b1)); };
  const naming::Mlp p{ones({3, 2}), zeros({2})};
  const Array x = ones({4, 3});
  const Graph g = make_graph(loss, {"params", "x"})(p, x);
  CHECK(g.ir().input_names() == std::vector<std::string>{"params.w1", "params.b1", "x"});
  CHECK(g.ir().output_names() == std::vector<std::string>{"out"});
  // Without argnames: arg0, arg1; a gradient's outputs are named like the parameters.
  const Graph d = make_graph(grad(loss))(p, x);
  CHECK(d.ir().input_names() == std::vector<std::string>{"arg0.w1", "arg0.b1", "arg1"});
  CHECK(d.ir().output_names() == std::vector<std::string>{"out.w1", "out.b1"});
  // Names survive export, and the picture shows them.
  CHECK(Graph::from_json(d.to_json()).ir().output_names() == d.ir().output_names());
  CHECK(d.to_dot().find(R"(label="arg0.w1: f32[3,2]")") != std::string::npos);
  CHECK(d.to_dot().find(R"(label="out.b1: f32[2]")") != std::string::npos);
  // A captured value is an input too.
  const Array c = full({2}, 3.0);
  const Graph nested = make_graph([&](const Array& y) {
    return make_graph([&](const Array& z) { return z * y; })(y).num_nodes() > 0 ? y * 2.0f : y;
  })(c);
  CHECK(nested.ir().input_names() == std::vector<std::string>{"arg0"});
}
