#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ir/builder.h"
#include "ir/dot.h"

using namespace graft;
using namespace graft::ir;

namespace {

const ValueType kF32x3{DType::f32, {3}};

// What the DOT text says about clusters and vertices, read back line by line
// (to_dot writes one statement per line).
struct DotLayout {
  std::map<std::string, std::string> vertex_label;    // vertex id -> label, as escaped in the file
  std::map<std::string, std::string> cluster_parent;  // cluster label -> enclosing cluster label ("" at top)
  std::map<std::string, std::string> vertex_cluster;  // vertex id -> label of the cluster listing it
  std::set<std::string> edge_ends;                    // vertex ids that edges mention
};

// The text of the first label="..." in a line, still escaped.
std::string label_in(const std::string& line) {
  size_t begin = line.find("label=\"");
  if (begin == std::string::npos) return {};
  begin += 7;
  size_t end = begin;
  while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
  return line.substr(begin, end - begin);
}

DotLayout read_layout(const std::string& dot) {
  const char* digits = "0123456789";
  DotLayout layout;
  std::vector<std::string> open;  // labels of the clusters we are inside
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);) {
    line.erase(0, line.find_first_not_of(' '));
    size_t id_end = line.find_first_not_of(digits);
    std::string id = line.substr(0, id_end);
    if (line.rfind("subgraph cluster_", 0) == 0) {
      open.emplace_back();
    } else if (line == "}" && !open.empty()) {
      open.pop_back();
    } else if (!open.empty() && line.rfind("label=", 0) == 0) {
      open.back() = label_in(line);
      layout.cluster_parent[open.back()] = open.size() > 1 ? open[open.size() - 2] : "";
    } else if (id.empty() || id_end == std::string::npos) {
      continue;
    } else if (!open.empty() && line == id + ";") {
      layout.vertex_cluster[id] = open.back();
    } else if (line.compare(id_end, 2, "->") == 0) {
      layout.edge_ends.insert(id);
      layout.edge_ends.insert(line.substr(id_end + 2, line.find_first_not_of(digits, id_end + 2) - id_end - 2));
    } else {
      layout.vertex_label[id] = label_in(line);
    }
  }
  return layout;
}

std::string vertex_labelled(const DotLayout& layout, const std::string& label) {
  for (const auto& [id, l] : layout.vertex_label)
    if (l == label) return id;
  FAIL("no vertex labelled " << label);
  return {};
}

// Writes the DOT into the test directory and renders it; returns dot's exit status.
int render_svg(const std::string& dot, const std::string& name) {
  std::string base = std::string(GRAFT_TEST_TMPDIR) + "/" + name;
  std::ofstream(base + ".dot") << dot;
  std::string command = "dot -Tsvg '" + base + ".dot' -o '" + base + ".svg'";
  return std::system(command.c_str());
}

Node node_with_subgraphs(int32_t id, Op op, std::vector<ValueId> inputs, ValueId output, const std::string& attr,
                         Graphs subgraphs, std::string scope = {}) {
  Node n;
  n.id = id;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  n.attrs = Attrs{{attr, std::move(subgraphs)}};
  n.scope = std::move(scope);
  return n;
}

// x -> cos
GraphPtr cos_graph() {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  return b.finish({b.add1(Op::cos, {x})});
}

// x -> while(body: cos) -> neg. Built by hand: only the elementwise rules are
// certain to exist, and this graph is drawn, not verified.
GraphPtr while_graph() {
  Graph g;
  ValueId x = g.add_input(kF32x3);
  ValueId w = g.new_value(kF32x3);
  g.add_node(node_with_subgraphs(0, Op::while_loop, {x}, w, "body", {cos_graph()}));
  Node neg;
  neg.id = 1;
  neg.op = Op::neg;
  neg.inputs = {w};
  neg.outputs = {g.new_value(kF32x3)};
  g.add_node(neg);
  g.set_outputs({neg.outputs[0]});
  return std::make_shared<const Graph>(std::move(g));
}

}  // namespace

TEST_CASE("dot: scopes and subgraphs become nested clusters that graphviz renders", "[dot]") {
  GraphBuilder b;
  ValueId x = b.input(kF32x3);
  ValueId s = b.add1(Op::sin, {x}, {}, {}, "a");
  ValueId e = b.add1(Op::exp, {s}, {}, {}, "a/b");
  ValueId n = b.add1(Op::neg, {e}, {}, {}, "a/b");
  ValueId t = b.add1(Op::tanh, {x}, {}, {}, "we\"ird\\name");
  Graph g = *b.finish({});
  ValueId c = g.new_value(kF32x3);
  g.add_node(node_with_subgraphs(g.next_node_id(), Op::cond, {n}, c, "branches", {while_graph(), cos_graph()}, "a"));
  g.set_outputs({n, t, c});

  std::string dot = to_dot(g);
  INFO(dot);
  CHECK(dot.rfind("digraph G {", 0) == 0);
  CHECK_THAT(dot, Catch::Contains("subgraph cluster_"));
  CHECK_THAT(dot, Catch::Contains(R"(label="sin\nf32[3]")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="in %0: f32[3]", shape="ellipse")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="out 2: f32[3]", shape="ellipse", peripheries="2")"));
  CHECK_THAT(dot, Catch::Contains(R"([label="%1: f32[3]"])"));  // sin's output on its edge to exp

  DotLayout layout = read_layout(dot);
  // Scopes nest per level; a node with subgraphs gets a box in its scope that
  // holds it and one box per subgraph, which holds its own nodes' boxes.
  CHECK(layout.cluster_parent.at("a") == "");
  CHECK(layout.cluster_parent.at("b") == "a");
  CHECK(layout.cluster_parent.at(R"(we\"ird\\name)") == "");
  CHECK(layout.cluster_parent.at("%5 = cond") == "a");
  CHECK(layout.cluster_parent.at("branches[0]") == "%5 = cond");
  CHECK(layout.cluster_parent.at("branches[1]") == "%5 = cond");
  CHECK(layout.cluster_parent.at("%5/branches[0]/1 = while") == "branches[0]");
  CHECK(layout.cluster_parent.at("body") == "%5/branches[0]/1 = while");
  CHECK(layout.cluster_parent.size() == 8);

  CHECK(layout.vertex_cluster.at(vertex_labelled(layout, R"(sin\nf32[3])")) == "a");
  CHECK(layout.vertex_cluster.at(vertex_labelled(layout, R"(exp\nf32[3])")) == "b");
  CHECK(layout.vertex_cluster.at(vertex_labelled(layout, R"(while\nf32[3])")) == "%5/branches[0]/1 = while");
  CHECK(layout.vertex_cluster.at(vertex_labelled(layout, R"(cond\nf32[3])")) == "%5 = cond");

  // Values inside subgraphs are named by their path: the cond's (%5) branch 0,
  // the body of its while (%1 there), value 1 (the cosine); no two edges of
  // different values share a name.
  CHECK_THAT(dot, Catch::Contains(R"([label="%5/branches[0]/1/body/1: f32[3]"])"));
  CHECK_THAT(dot, Catch::Contains(R"(label="in %5/branches[1]/0: f32[3]")"));

  // Vertices: top 1 input + 5 nodes + 3 outputs; branches[0] 1 + 2 + 1;
  // its while body 1 + 1 + 1; branches[1] 1 + 1 + 1. All ids distinct.
  CHECK(layout.vertex_label.size() == 19);
  for (const std::string& id : layout.edge_ends) CHECK(layout.vertex_label.count(id) == 1);

  REQUIRE(render_svg(dot, "dot_test_nested") == 0);
  std::ifstream svg(std::string(GRAFT_TEST_TMPDIR) + "/dot_test_nested.svg");
  std::stringstream svg_text;
  svg_text << svg.rdbuf();
  CHECK_THAT(svg_text.str(), Catch::Contains("<svg"));
  CHECK_THAT(svg_text.str(), Catch::Contains("%5/branches[0]/1 = while"));
}

TEST_CASE("dot: broken graphs are drawn, not rejected", "[dot]") {
  // node 0 uses node 1's output (a cycle) and the undefined %9.
  Graph g;
  ValueId x = g.add_input(kF32x3);
  g.define_value(1, kF32x3);
  g.define_value(2, kF32x3);
  Node a;
  a.id = 0;
  a.op = Op::add;
  a.inputs = {2, 9};
  a.outputs = {1};
  Node m;
  m.id = 1;
  m.op = Op::mul;
  m.inputs = {1, x};
  m.outputs = {2};
  g.add_node(a);
  g.add_node(m);
  g.set_outputs({2});

  std::string dot;
  REQUIRE_NOTHROW(dot = to_dot(g));
  CHECK_THAT(dot, Catch::Contains(R"(label="undefined %9")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="%9: ?")"));
  REQUIRE(render_svg(dot, "dot_test_broken") == 0);
}

TEST_CASE("dot: labels carry attributes, constants and source lines, backward shaded, scopes collapse", "[dot]") {
  GraphBuilder b;
  ValueId x = b.input(ValueType{DType::f32, {2, 3}});
  const SourceLoc here{"/src/model/mlp.cpp", "loss", 42};
  ValueId s = b.add1(Op::reduce_sum, {x}, {{"axes", Ints{1}}}, here, "mlp/layer1");
  ValueId c = b.add1(Op::constant, {}, {{"value", std::make_shared<const Literal>(Literal{{DType::f32, {}}, {0, 0, 0x40, 0x3f}})}});
  ValueId m = b.add1(Op::mul, {s, b.add1(Op::broadcast_in_dim, {c}, {{"shape", Ints{2}}, {"broadcast_dimensions", Ints{}}})},
                     {}, {}, "mlp/layer1");
  ValueId t = b.add1(Op::neg, {m}, {}, {}, "backward/mlp");
  Graph g = *b.finish({t});

  const std::string dot = to_dot(g);
  INFO(dot);
  CHECK_THAT(dot, Catch::Contains(R"(label="reduce_sum axes=(1)\nf32[2]\nmlp.cpp:42")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="constant 0.75\nf32[]")"));  // the value, not "value=..."
  CHECK_THAT(dot, Catch::Contains(R"(label="neg\nf32[2]", shape="box", tooltip="node 4 in backward/mlp", style="filled")"));
  CHECK_THAT(dot, !Catch::Contains(R"(tooltip="node 0 in mlp/layer1 at /src/model/mlp.cpp:42", style="filled")"));

  // mlp/layer1 collapsed: one box for its two nodes, inside mlp's cluster; the
  // edge between them is not drawn, those entering and leaving are.
  const std::string folded = to_dot(g, DotOptions{{"mlp/layer1"}});
  INFO(folded);
  const DotLayout layout = read_layout(folded);
  const std::string box = vertex_labelled(layout, R"(mlp/layer1\n2 nodes)");
  CHECK(layout.vertex_cluster.at(box) == "mlp");
  CHECK(layout.cluster_parent.count("layer1") == 0);
  CHECK_THAT(folded, !Catch::Contains("reduce_sum"));
  CHECK_THAT(folded, !Catch::Contains(R"([label="%1: f32[2]"])"));  // reduce_sum -> mul, inside the box
  CHECK_THAT(folded, Catch::Contains(R"([label="%0: f32[2,3]"])"));  // x enters it
  CHECK_THAT(folded, Catch::Contains(R"([label="%4: f32[2]"])"));    // its product leaves it
  REQUIRE(render_svg(folded, "dot_test_collapsed") == 0);
}
