// The corpus with JAX's answers, every case on every backend and under
// every transform (tests/corpus/corpus_runner.h runs the checks).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "corpus/corpus_runner.h"
#include "graft/errors.h"
#include "graft/graph.h"
#include "ir/attrs.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/json.h"
#include "ir/op.h"

using nlohmann::json;

TEST_CASE("corpus: every case agrees with JAX's answers, on every backend and under every transform",
          "[corpus][jax]") {
  const json index = graft::test::corpus_index();
  REQUIRE(index.at("format") == "graft.jax_corpus");
  REQUIRE(index.at("version") == 2);
  const auto& cases = index.at("cases");
  CHECK(cases.size() >= 300);

  // Every op of graft's table is in some case or has its reason stated.
  std::set<std::string> covered;
  for (const json& c : cases)
    for (const json& op : c.at("ops")) covered.insert(op.get<std::string>());
  for (int k = 0; k < graft::ir::kNumOps; ++k) {
    const std::string op(graft::ir::op_name(static_cast<graft::ir::Op>(k)));
    INFO("op " << op);
    CHECK((covered.count(op) == 1 || index.at("not_covered").contains(op)));
  }

  graft::test::CorpusCounts counts;
  int failures = 0;
  for (const json& meta : cases) {
    const std::string name = meta.at("name").get<std::string>();
    INFO("case " << name << " (corpus/cases/" << name << ")");
    std::vector<std::string> differences;
    graft::test::check_corpus_case(meta, true, differences, counts);
    for (const std::string& d : differences) FAIL_CHECK(d);
    failures += static_cast<int>(differences.size());
  }
  std::printf(
      "JAX corpus: %zu cases (%zu ops) checked: eval on 4 paths, jvp %d, vjp %d, vmap %d (mixed in_axes %d), "
      "Hessian %d, composed transforms %d; %d differences\n",
      cases.size(), covered.size(), counts.jvps, counts.vjps, counts.vmaps, counts.mixed, counts.hessians,
      counts.composed, failures);
}

namespace {

// The graph a must-reject case's JSON describes, built without any check (as
// an implementation's own reader might): an unknown op or dtype is the
// GraphFormatError graft's reader would raise, anything else is left to
// Graph::verify.
graft::Graph unchecked_graph(const json& g) {
  namespace ir = graft::ir;
  auto type_of = [](const json& spec) {
    const auto dtype = ir::dtype_from_name(spec.at("dtype").get<std::string>());
    if (!dtype) throw graft::GraphFormatError("unknown dtype");
    return ir::ValueType{*dtype, spec.at("shape").get<graft::Shape>()};
  };
  ir::Graph out;
  for (const json& in : g.at("inputs")) {
    out.define_value(in.at("id").get<ir::ValueId>(), type_of(in));
    out.add_input_id(in.at("id").get<ir::ValueId>());
  }
  for (const json& n : g.at("nodes")) {
    const auto op = ir::op_from_name(n.at("op").get<std::string>());
    if (!op) throw graft::GraphFormatError("unknown op " + n.at("op").get<std::string>());
    ir::Node node;
    node.id = n.at("id").get<int32_t>();
    node.op = *op;
    for (const json& v : n.at("inputs")) node.inputs.push_back(v.get<ir::ValueId>());
    for (const json& o : n.at("outputs")) {
      out.define_value(o.at("id").get<ir::ValueId>(), type_of(o));
      node.outputs.push_back(o.at("id").get<ir::ValueId>());
    }
    if (n.contains("attrs")) node.attrs = ir::attrs_from_json(n.at("attrs").dump());
    out.add_node(std::move(node));
  }
  out.set_outputs(g.at("outputs").get<std::vector<ir::ValueId>>());
  return graft::Graph(std::make_shared<const ir::Graph>(std::move(out)));
}

// The class of graft error f throws ("nothing" if none).
template <typename F>
std::string error_class(F f) {
  try {
    f();
  } catch (const graft::GraphFormatError&) {
    return "GraphFormatError";
  } catch (const graft::ShapeError&) {
    return "ShapeError";
  } catch (const graft::DTypeError&) {
    return "DTypeError";
  } catch (const graft::Error& e) {
    return std::string("another graft::Error: ") + e.what();
  }
  return "nothing";
}

}  // namespace

TEST_CASE("corpus: every must-reject graph is refused, by the verifier with the error class it names",
          "[corpus][jax]") {
  const json index = graft::test::corpus_index();
  const json& rejects = index.at("rejects");
  CHECK(rejects.size() >= 10);
  for (const json& r : rejects) {
    const std::string name = r.at("name").get<std::string>(), want = r.at("error").get<std::string>();
    INFO("case " << name << " (corpus/cases/" << name << "), expected " << want);
    const std::string text = graft::test::corpus_file(name + "/graph.json");
    // The reader refuses it as malformed JSON, naming the JSON path and the problem...
    CHECK(error_class([&] { graft::Graph::from_json(text); }) == "GraphFormatError");
    // ...and the verifier, given the same graph built without checks, with the class the case names.
    CHECK(error_class([&] { unchecked_graph(json::parse(text).at("graph")).verify(); }) == want);
  }
}
