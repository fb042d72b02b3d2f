// JSON: exact round trips, and malformed documents rejected with
// GraphFormatError naming the problem and where it is.
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "graft/errors.h"
#include "graft/graph.h"
#include "ir/builder.h"
#include "ir/json.h"

using namespace graft;
using namespace graft::ir;
using nlohmann::json;

namespace {

LiteralPtr f32_literal(std::vector<float> values) {
  Literal lit{ValueType{DType::f32, {static_cast<int64_t>(values.size())}}, {}};
  lit.bytes.resize(values.size() * 4);
  std::memcpy(lit.bytes.data(), values.data(), lit.bytes.size());
  return std::make_shared<const Literal>(std::move(lit));
}

LiteralPtr i32_scalar(int32_t v) {
  Literal lit{ValueType{DType::i32, {}}, std::vector<uint8_t>(4)};
  std::memcpy(lit.bytes.data(), &v, 4);
  return std::make_shared<const Literal>(std::move(lit));
}

// x:f32[3], n:i32[] -> (sum(x + c), while n < 10: n + 1); with scopes,
// locations, a literal with awkward floats, and two nested subgraphs.
GraphPtr sample_graph() {
  GraphBuilder cb;
  ValueId ci = cb.input({DType::i32, {}});
  ValueId ten = cb.add1(Op::constant, {}, {{"value", i32_scalar(10)}});
  GraphPtr cond = cb.finish({cb.add1(Op::lt, {ci, ten})});

  GraphBuilder bb;
  ValueId bi = bb.input({DType::i32, {}});
  ValueId one = bb.add1(Op::constant, {}, {{"value", i32_scalar(1)}});
  GraphPtr body = bb.finish({bb.add1(Op::add, {bi, one}, {}, {"body.cpp", "step", 7}, "loop")});

  GraphBuilder b;
  ValueId x = b.input({DType::f32, {3}});
  ValueId n = b.input({DType::i32, {}});
  float nan = std::numeric_limits<float>::quiet_NaN();
  ValueId c = b.add1(Op::constant, {}, {{"value", f32_literal({0.1f, -0.0f, nan})}}, {"model.cpp", "f", 3});
  ValueId a = b.add1(Op::add, {x, c}, {}, {"model.cpp", "f", 4}, "mlp/layer1");
  ValueId s = b.add1(Op::reduce_sum, {a}, {{"axes", Ints{0}}}, {"model.cpp", "f", 5}, "mlp");
  ValueId w = b.add1(Op::while_loop, {n},
                     {{"cond", Graphs{cond}},
                      {"body", Graphs{body}},
                      {"cond_nconsts", int64_t{0}},
                      {"body_nconsts", int64_t{0}},
                      {"checkpoints", int64_t{128}}});
  return b.finish({s, w});
}

json sample_json() { return json::parse(to_json(*sample_graph())); }

// Expect from_json(doc) to throw GraphFormatError whose message has `fragment`.
void expect_format_error(const std::string& doc, const std::string& fragment) {
  try {
    from_json(doc);
    FAIL("accepted malformed JSON; expected an error containing '" << fragment << "'");
  } catch (const GraphFormatError& e) {
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("json: round trip is exact", "[ir][json]") {
  GraphPtr g = sample_graph();
  std::string text = to_json(*g);
  GraphPtr back = from_json(text);
  CHECK(*back == *g);
  CHECK(to_json(*back) == text);
  CHECK(to_json(*back, -1) == to_json(*g, -1));
  // Locations, scopes and the literal's NaN bits survive.
  const Node& add = back->nodes()[1];
  CHECK(add.scope == "mlp/layer1");
  CHECK(add.loc.file == "model.cpp");
  CHECK(add.loc.line == 4);
  const Literal& lit = *std::get<LiteralPtr>(*back->nodes()[0].attrs.find("value"));
  CHECK(lit.bytes == std::get<LiteralPtr>(*g->nodes()[0].attrs.find("value"))->bytes);
}

TEST_CASE("json: float attributes keep every bit, inf and nan included", "[ir][json]") {
  // No op of ops.def takes a float attribute yet, so the encoding is checked
  // on attributes alone (a node carrying one is refused by the schema).
  for (double v : {0.1, -0.0, 1e-310, 1.7976931348623157e308, std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    Attrs attrs{{"scale", v}};
    Attrs back = attrs_from_json(attrs_to_json(attrs));
    REQUIRE(back.has("scale"));
    CHECK(attr_equal(*back.find("scale"), AttrValue{v}));
  }
  ir::Graph g;
  ValueId x = g.add_input({DType::f32, {}});
  Node n;
  n.op = Op::neg;
  n.inputs = {x};
  n.outputs = {g.new_value({DType::f32, {}})};
  n.attrs.set("scale", 0.5);
  g.add_node(n);
  g.set_outputs(n.outputs);
  CHECK_THROWS_WITH(from_json(to_json(g)), Catch::Contains("neg: unknown attribute 'scale' (the op takes none)"));
}

TEST_CASE("json: the public Graph round-trips and verifies", "[ir][json]") {
  graft::Graph g(sample_graph());
  graft::Graph back = graft::Graph::from_json(g.to_json());
  CHECK(back.num_nodes() == 4);
  CHECK_NOTHROW(back.verify());
  CHECK(back.to_json() == g.to_json());
}

TEST_CASE("json: malformed documents throw GraphFormatError", "[ir][json][malformed]") {
  const json base = sample_json();
  auto with = [&](auto&& edit) {
    json j = base;
    edit(j);
    return j.dump();
  };
  auto& G = base["graph"];
  (void)G;

  SECTION("not JSON") {
    expect_format_error("", "not valid JSON");
    std::string full = base.dump();
    expect_format_error(full.substr(0, full.size() / 2), "not valid JSON");
    expect_format_error("{\"format\": \"graft.graph\",}", "not valid JSON");
    expect_format_error("{\"a\": \"\xff\xfe\"}", "not valid JSON");
  }
  SECTION("document level") {
    expect_format_error("[1, 2]", "expected an object");
    expect_format_error(with([](json& j) { j.erase("graph"); }), "missing field 'graph'");
    expect_format_error(with([](json& j) { j.erase("version"); }), "missing field 'version'");
    expect_format_error(with([](json& j) { j["version"] = 7; }),
                        "unsupported version 7 (this graft reads versions 1 to 6)");
    expect_format_error(with([](json& j) { j["version"] = 0; }), "unsupported version 0");
    expect_format_error(with([](json& j) { j["version"] = "1"; }), "expected an integer");
    expect_format_error(with([](json& j) { j["format"] = "onnx"; }), "format must be");
    expect_format_error(with([](json& j) { j["extra"] = 1; }), "unknown field 'extra'");
    expect_format_error(with([](json& j) { j["graph"] = 5; }), "expected an object");
    expect_format_error(std::string(100000, '[') + std::string(100000, ']'), "expected an object");
  }
  SECTION("graph fields") {
    expect_format_error(with([](json& j) { j["graph"]["inputs"] = "x"; }), "$.graph.inputs");
    expect_format_error(with([](json& j) { j["graph"].erase("nodes"); }), "missing field 'nodes'");
    expect_format_error(with([](json& j) { j["graph"]["outputs"] = {99}; }), "output %99 is not defined");
    expect_format_error(with([](json& j) { j["graph"]["outputs"] = {1.5}; }), "expected an integer");
  }
  SECTION("types and shapes") {
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0].erase("dtype"); }), "missing field 'dtype'");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["dtype"] = "f8"; }), "unknown dtype 'f8'");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["dtype"] = 3; }), "expected a string");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = {-3}; }), "out of range");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = {int64_t{1} << 50}; }), "out of range");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = {2.5}; }), "expected an integer");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = json(std::vector<int>(65, 1)); }), "rank 65");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40}; }),
                        "too many elements");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["shape"] = {4}; }), "operand shapes [4] and [3] differ");
  }
  SECTION("ids") {
    expect_format_error(with([](json& j) { j["graph"]["inputs"][1]["id"] = 0; }), "duplicate value id %0");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["id"] = -1; }), "out of range");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["id"] = 2147483647; }), "out of range");
    expect_format_error(with([](json& j) { j["graph"]["inputs"][0]["id"] = json(18446744073709551615ull); }),
                        "out of range");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["id"] = j["graph"]["nodes"][0]["id"]; }),
                        "duplicate node id");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["outputs"][0]["id"] = 0; }), "duplicate value id %0");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["inputs"][0] = 77; }), "undefined value %77");
  }
  SECTION("order and cycles") {
    expect_format_error(with([](json& j) { std::swap(j["graph"]["nodes"][1], j["graph"]["nodes"][2]); }),
                        "before its definition");
    // add uses reduce_sum's output, and reduce_sum uses add's: a cycle.
    expect_format_error(with([](json& j) {
                          auto& nodes = j["graph"]["nodes"];
                          nodes[1]["inputs"][1] = nodes[2]["outputs"][0]["id"];
                          nodes[1]["inputs"][1] = nodes[2]["outputs"][0]["id"];
                          nodes[2]["outputs"][0]["shape"] = {3};
                          nodes[2]["op"] = "neg";
                          nodes[2]["attrs"] = json::object();
                        }),
                        "cycle");
  }
  SECTION("nodes") {
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["op"] = "frobnicate"; }), "unknown op 'frobnicate'");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1].erase("op"); }), "missing field 'op'");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["colour"] = "red"; }), "unknown field 'colour'");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["inputs"] = 3; }), "expected an array");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["inputs"].erase(1); }), "takes 2 operand(s), got 1");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["outputs"][0]["shape"] = {4}; }), "declared f32[4]");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["scope"] = 7; }), "$.graph.nodes[1].scope");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["loc"]["line"] = -5; }), "out of range");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][1]["loc"].erase("file"); }), "missing field 'file'");
  }
  SECTION("attributes") {
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["axes"] = {{"tuple", 1}}; }),
                        "unknown attribute kind 'tuple'");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["axes"] = {{"ints", {0}}, {"int", 0}}; }),
                        "one field");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["axes"] = {{"int", 0}}; }),
                        "attribute 'axes' must be ints");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"].erase("axes"); }),
                        "attribute 'axes' is missing (it must be ints)");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["keepdims"] = {{"int", 1}}; }),
                        "unknown attribute 'keepdims' (it takes axes)");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["axes"] = {{"ints", {1.5}}}; }),
                        "expected an integer");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["axes"] = {{"ints", {3}}}; }),
                        "reduction axis 3 is out of range");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"]["eps"] = {{"float", "NaNny"}}; }),
                        "expected a number");
    expect_format_error(with([](json& j) { j["graph"]["nodes"][2]["attrs"] = {1, 2}; }), "expected an object");
  }
  SECTION("literals") {
    auto lit = [](json& j) -> json& { return j["graph"]["nodes"][0]["attrs"]["value"]["literal"]; };
    expect_format_error(with([&](json& j) { lit(j)["data"] = "00"; }), "needs 12 bytes");
    expect_format_error(with([&](json& j) { lit(j)["data"] = std::string(23, '0') + "z"; }), "invalid hex digit 'z'");
    expect_format_error(with([&](json& j) { lit(j)["shape"] = {int64_t{1} << 40}; }), "needs 4398046511104 bytes");
    expect_format_error(with([&](json& j) { lit(j)["dtype"] = "complex64"; }), "unknown dtype");
  }
  SECTION("subgraphs") {
    auto body = [](json& j) -> json& { return j["graph"]["nodes"][3]["attrs"]["body"]["graphs"][0]; };
    expect_format_error(with([&](json& j) { body(j)["nodes"] = json::array(); body(j)["outputs"][0] = body(j)["inputs"][0]["id"]; body(j)["inputs"][0]["dtype"] = "f32"; }),
                        "body takes (f32[])");
    expect_format_error(with([&](json& j) { j["graph"]["nodes"][3]["attrs"]["body"]["graphs"][0] = 5; }),
                        "expected an object");
    expect_format_error(with([&](json& j) { j["graph"]["nodes"][3]["attrs"]["body"]["graphs"] = json::array(); }),
                        "exactly one graph");
    expect_format_error(with([&](json& j) { body(j)["nodes"][1]["op"] = "mul"; body(j)["nodes"][1]["inputs"] = {99, 98}; }),
                        "undefined value %99");
    // Subgraphs nested 70 deep.
    json deep = {{"inputs", json::array()}, {"nodes", json::array()}, {"outputs", json::array()}};
    for (int i = 0; i < 70; ++i) {
      json node = {{"id", 0}, {"op", "remat"}, {"inputs", json::array()}, {"outputs", json::array()},
                   {"attrs", {{"body", {{"graphs", {deep}}}}}}};
      deep = {{"inputs", json::array()}, {"nodes", {node}}, {"outputs", json::array()}};
    }
    expect_format_error(json{{"format", "graft.graph"}, {"version", 1}, {"graph", deep}}.dump(), "nested deeper than 64");
  }
}

TEST_CASE("json: input and output names round-trip (version 2) and are checked", "[ir][json]") {
  ir::Graph g = *sample_graph();
  g.set_names({"x", "params['n']"}, {"out[0]", "out[1]"});
  const std::string text = to_json(g);
  CHECK(json::parse(text)["version"] == kJsonVersion);
  CHECK(json::parse(text)["graph"]["input_names"] == json::array({"x", "params['n']"}));
  const GraphPtr back = from_json(text);
  CHECK(back->input_names() == std::vector<std::string>{"x", "params['n']"});
  CHECK(back->output_names() == std::vector<std::string>{"out[0]", "out[1]"});
  CHECK(*back == g);
  CHECK_FALSE(*back == *sample_graph());  // names are part of equality, as locations are

  json bad = json::parse(text);
  bad["graph"]["output_names"] = json::array({"only one"});
  expect_format_error(bad.dump(), "1 names for 2 outputs at $.graph.output_names");
  bad["graph"]["output_names"] = json::array({"a", 7});
  expect_format_error(bad.dump(), "$.graph.output_names[1]");
  CHECK_THROWS_AS(g.set_names({"one"}, {}), GraphFormatError);
}

TEST_CASE("json: a version 2 triangular_solve gains conjugate_a 0, in subgraphs too", "[ir][json]") {
  // Written by graft before complex linear algebra (version 2): no conjugate_a.
  const std::string solve = R"({"id": 0, "op": "triangular_solve", "inputs": [0, 1],
      "attrs": {"left_side": {"int": 1}, "lower": {"int": 1}, "transpose_a": {"int": 0}, "unit_diagonal": {"int": 0}},
      "outputs": [{"id": 2, "dtype": "f64", "shape": [2, 1]}]})";
  const std::string inputs =
      R"([{"id": 0, "dtype": "f64", "shape": [2, 2]}, {"id": 1, "dtype": "f64", "shape": [2, 1]}])";
  const std::string v2 = R"({"format": "graft.graph", "version": 2, "graph": {"inputs": )" + inputs +
                         R"(, "nodes": [)" + solve + R"(], "outputs": [2]}})";
  const GraphPtr g = from_json(v2);
  REQUIRE(g->num_nodes() == 1);
  const json again = json::parse(to_json(*g));
  CHECK(again["version"] == kJsonVersion);
  CHECK(again["graph"]["nodes"][0]["attrs"]["conjugate_a"] == json{{"int", 0}});
  // Inside a cond's branch as well.
  const std::string branch = R"({"inputs": )" + inputs + R"(, "nodes": [)" + solve + R"(], "outputs": [2]})";
  const std::string v2_cond = R"({"format": "graft.graph", "version": 2, "graph": {
      "inputs": [{"id": 0, "dtype": "i32", "shape": []}, {"id": 1, "dtype": "f64", "shape": [2, 2]},
                 {"id": 2, "dtype": "f64", "shape": [2, 1]}],
      "nodes": [{"id": 0, "op": "cond", "inputs": [0, 1, 2], "attrs": {"branches": {"graphs": [)" +
                              branch + "," + branch + R"(]}},
                 "outputs": [{"id": 3, "dtype": "f64", "shape": [2, 1]}]}],
      "outputs": [3]}})";
  const GraphPtr c = from_json(v2_cond);
  const json cond = json::parse(to_json(*c));
  CHECK(cond["graph"]["nodes"][0]["attrs"]["branches"]["graphs"][1]["nodes"][0]["attrs"]["conjugate_a"] ==
        json{{"int", 0}});
  // A version 3 document must say it.
  json v3 = json::parse(v2);
  v3["version"] = 3;
  expect_format_error(v3.dump(), "conjugate_a");
}

TEST_CASE("json: a version 1 document still loads, and is written back as the newest", "[ir][json]") {
  // Written by graft before names existed (version 1), by hand here so it stays version 1.
  const std::string v1 = R"({"format": "graft.graph", "version": 1, "graph": {
      "inputs": [{"id": 0, "dtype": "f32", "shape": [2]}],
      "nodes": [{"id": 0, "op": "sin", "inputs": [0], "outputs": [{"id": 1, "dtype": "f32", "shape": [2]}]}],
      "outputs": [1]}})";
  const GraphPtr g = from_json(v1);
  CHECK(g->num_nodes() == 1);
  CHECK(g->input_names().empty());
  const json again = json::parse(to_json(*g));
  CHECK(again["version"] == kJsonVersion);
  CHECK(*from_json(again.dump()) == *g);
  // Names in a version 1 document are refused, as graft refused them then.
  json named = json::parse(v1);
  named["graph"]["input_names"] = json::array({"x"});
  expect_format_error(named.dump(), "unknown field (version 1 has no names; they came in version 2) at $.graph.input_names");
}
