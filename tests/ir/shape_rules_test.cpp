// Shape-rule tests: every op in ops.def against the catalogue in op_cases.h,
// through infer_types directly and through the verifier.
#include <catch2/catch.hpp>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "graft/errors.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/shape_rules/rule.h"
#include "tests/ir/op_cases.h"

using namespace graft;
using namespace graft::ir;
using namespace graft::ir::testing;

namespace {

// What a call threw, sorted into the error classes these tests tell apart.
struct Thrown {
  enum Class { nothing, shape_error, dtype_error, format_error, other_graft_error, other_exception };
  Class what = nothing;
  std::string message;
};

Thrown thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const ShapeError& e) {
    return {Thrown::shape_error, e.what()};
  } catch (const DTypeError& e) {
    return {Thrown::dtype_error, e.what()};
  } catch (const GraphFormatError& e) {
    return {Thrown::format_error, e.what()};
  } catch (const Error& e) {
    return {Thrown::other_graft_error, e.what()};
  } catch (const std::exception& e) {
    return {Thrown::other_exception, e.what()};
  }
  return {};
}

Thrown::Class expected_class(BadOpCase::Kind k) {
  switch (k) {
    case BadOpCase::shape: return Thrown::shape_error;
    case BadOpCase::dtype: return Thrown::dtype_error;
    case BadOpCase::format: return Thrown::format_error;
  }
  return Thrown::nothing;
}

const char* class_name(Thrown::Class c) {
  switch (c) {
    case Thrown::nothing: return "nothing";
    case Thrown::shape_error: return "ShapeError";
    case Thrown::dtype_error: return "DTypeError";
    case Thrown::format_error: return "GraphFormatError";
    case Thrown::other_graft_error: return "another graft::Error";
    case Thrown::other_exception: return "a non-graft exception";
  }
  return "?";
}

std::string types_str(const std::vector<ValueType>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_str(types[i]);
  return s + ")";
}

// A graph holding one node of `op` over fresh inputs of the given types,
// assembled without GraphBuilder (which would run the rule and throw before
// the verifier sees anything). Its outputs get a plausible declared type.
Graph unchecked_one_node_graph(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs) {
  Graph g;
  Node node;
  node.id = 0;
  node.op = op;
  node.attrs = attrs;
  for (const ValueType& t : inputs) node.inputs.push_back(g.add_input(t));
  node.outputs.push_back(g.new_value(inputs.empty() ? ValueType{DType::f32, {}} : inputs[0]));
  std::vector<ValueId> outputs = node.outputs;
  g.add_node(std::move(node));
  g.set_outputs(outputs);
  return g;
}

}  // namespace

TEST_CASE("shape rules: every op has a valid and an invalid case", "[ir][shape_rules][coverage]") {
  std::set<Op> with_valid, with_invalid;
  for (const OpCase& c : valid_op_cases()) with_valid.insert(c.op);
  for (const BadOpCase& c : invalid_op_cases()) with_invalid.insert(c.op);
  std::vector<std::string> lacking_valid, lacking_invalid;
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    if (!with_valid.count(op)) lacking_valid.emplace_back(op_name(op));
    if (!with_invalid.count(op)) lacking_invalid.emplace_back(op_name(op));
  }
  INFO("ops without a valid case: " << Catch::Detail::stringify(lacking_valid));
  INFO("ops without an invalid case: " << Catch::Detail::stringify(lacking_invalid));
  CHECK(lacking_valid.empty());
  CHECK(lacking_invalid.empty());
}

TEST_CASE("shape rules: valid cases infer the expected types and verify", "[ir][shape_rules]") {
  for (const OpCase& c : valid_op_cases()) {
    INFO(case_summary(c));
    Thrown failure = thrown_by([&] {
      std::vector<ValueType> inferred = infer_types(c.op, c.inputs, c.attrs);
      INFO("inferred " << types_str(inferred) << ", expected " << types_str(c.expected_outputs));
      CHECK(inferred == c.expected_outputs);
    });
    INFO("infer_types threw " << class_name(failure.what) << ": " << failure.message);
    CHECK(failure.what == Thrown::nothing);
    if (failure.what != Thrown::nothing) continue;

    Thrown verify_failure = thrown_by([&] {
      GraphPtr g = graph_of(c);
      CHECK(g->input_types() == c.inputs);
      CHECK(g->num_nodes() == 1);
      verify(*g);
    });
    INFO("building or verifying the one-node graph threw " << class_name(verify_failure.what) << ": "
                                                           << verify_failure.message);
    CHECK(verify_failure.what == Thrown::nothing);
  }
}

TEST_CASE("shape rules: invalid cases are rejected by the rule and by the verifier", "[ir][shape_rules]") {
  for (const BadOpCase& c : invalid_op_cases()) {
    INFO(case_summary(c));
    const std::string name(op_name(c.op));

    Thrown by_rule = thrown_by([&] { infer_types(c.op, c.inputs, c.attrs); });
    INFO("infer_types threw " << class_name(by_rule.what) << ": " << by_rule.message);
    CHECK(by_rule.what == expected_class(c.kind));
    CHECK_THAT(by_rule.message, Catch::Contains(c.message_fragment));
    // Messages start with the op's name; that it appears anywhere is the promise.
    CHECK_THAT(by_rule.message, Catch::Contains(name));

    // The verifier runs the same rule, so it must fail the same way (whatever
    // output type the node declares).
    Graph g = unchecked_one_node_graph(c.op, c.inputs, c.attrs);
    Thrown by_verifier = thrown_by([&] { verify(g); });
    INFO("verify threw " << class_name(by_verifier.what) << ": " << by_verifier.message);
    CHECK(by_verifier.what == expected_class(c.kind));
    CHECK_THAT(by_verifier.message, Catch::Contains(c.message_fragment));
    CHECK_THAT(by_verifier.message, Catch::Contains(name));
  }
}

TEST_CASE("verifier: a declared output type that disagrees with the rule is rejected", "[ir][shape_rules]") {
  Graph g;
  Node node;
  node.op = Op::sin;
  node.inputs = {g.add_input({f32, {3}})};
  node.outputs = {g.new_value({f32, {4}})};
  g.add_node(node);
  g.set_outputs(node.outputs);

  Thrown thrown = thrown_by([&] { verify(g); });
  INFO(thrown.message);
  CHECK(thrown.what == Thrown::shape_error);
  CHECK_THAT(thrown.message, Catch::Contains("declared f32[4]"));
  CHECK_THAT(thrown.message, Catch::Contains("f32[3]"));
  CHECK_THAT(thrown.message, Catch::Contains("sin"));

  // A declared dtype that disagrees is caught the same way.
  Graph h;
  Node compare;
  compare.op = Op::lt;
  compare.inputs = {h.add_input({i32, {2}}), h.add_input({i32, {2}})};
  compare.outputs = {h.new_value({i32, {2}})};
  h.add_node(compare);
  h.set_outputs(compare.outputs);
  Thrown thrown_dtype = thrown_by([&] { verify(h); });
  INFO(thrown_dtype.message);
  CHECK(thrown_dtype.what == Thrown::shape_error);
  CHECK_THAT(thrown_dtype.message, Catch::Contains("declared i32[2] but its op makes bool[2]"));
}

TEST_CASE("verifier: an ill-typed node inside a subgraph is rejected", "[ir][shape_rules]") {
  // The remat body adds f32[3] to f32[4]: the verifier must recurse into it.
  auto body = std::make_shared<Graph>();
  Node add;
  add.op = Op::add;
  add.inputs = {body->add_input({f32, {3}}), body->add_input({f32, {4}})};
  add.outputs = {body->new_value({f32, {3}})};
  body->add_node(add);
  body->set_outputs(add.outputs);

  Graph g;
  Node remat;
  remat.op = Op::remat;
  remat.inputs = {g.add_input({f32, {3}}), g.add_input({f32, {4}})};
  remat.outputs = {g.new_value({f32, {3}})};
  remat.attrs.set("body", Graphs{body});
  g.add_node(remat);
  g.set_outputs(remat.outputs);

  Thrown thrown = thrown_by([&] { verify(g); });
  INFO(thrown.message);
  CHECK(thrown.what == Thrown::shape_error);
  CHECK_THAT(thrown.message, Catch::Contains("add: operand shapes [3] and [4] differ"));
}

TEST_CASE("shape rules: a fixed-arity op given the wrong operand count is rejected", "[ir][shape_rules]") {
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    int arity = op_info(op).arity;
    if (arity == kVariadic) continue;
    INFO(op_name(op) << " with " << arity + 1 << " operands");
    std::vector<ValueType> too_many(static_cast<size_t>(arity) + 1, ValueType{DType::f32, {3}});
    Thrown thrown = thrown_by([&] { infer_types(op, too_many, {}); });
    INFO(thrown.message);
    CHECK(thrown.what == Thrown::shape_error);
    CHECK_THAT(thrown.message, Catch::Contains("takes " + std::to_string(arity) + " operand(s), got " +
                                               std::to_string(arity + 1)));
    CHECK_THAT(thrown.message, Catch::Contains(std::string(op_name(op))));
  }

  // Too few, too: a binary op with one operand.
  Thrown thrown = thrown_by([&] { infer_types(Op::add, {ValueType{DType::f32, {3}}}, {}); });
  CHECK(thrown.what == Thrown::shape_error);
  CHECK_THAT(thrown.message, Catch::Contains("operand"));
}

TEST_CASE("shape rules: error messages name the operand types", "[ir][shape_rules]") {
  Thrown add = thrown_by([] { infer_types(Op::add, {{f32, {3}}, {f32, {4}}}, {}); });
  CHECK(add.what == Thrown::shape_error);
  CHECK_THAT(add.message, Catch::Contains("f32[3]"));
  CHECK_THAT(add.message, Catch::Contains("f32[4]"));
  CHECK_THAT(add.message, Catch::StartsWith("add: "));

  Thrown scalar = thrown_by([] { infer_types(Op::sin, {{i32, {}}}, {}); });
  CHECK(scalar.what == Thrown::dtype_error);
  CHECK_THAT(scalar.message, Catch::Contains("i32[]"));

  Thrown nullary = thrown_by([] { infer_types(Op::axis_index, {}, {{"axis_name", std::string()}}); });
  CHECK_THAT(nullary.message, Catch::Contains("operands: none"));

  // Given a node id and a source location, the message points at them.
  SourceLoc loc{"model.cpp", "forward", 42};
  Thrown located = thrown_by([&] { infer_types(Op::mul, {{f32, {2}}, {i32, {2}}}, {}, &loc, 7); });
  CHECK(located.what == Thrown::dtype_error);
  CHECK_THAT(located.message, Catch::Contains("f32[2], i32[2]"));
  CHECK_THAT(located.message, Catch::Contains("node 7"));
  CHECK_THAT(located.message, Catch::Contains("model.cpp:42"));
}
