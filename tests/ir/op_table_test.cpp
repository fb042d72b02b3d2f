#include <catch2/catch.hpp>

#include "ir/dtype.h"
#include "ir/op.h"
#include "ir/shape_rules/rule.h"

using namespace graft;
using namespace graft::ir;

TEST_CASE("op table: names are unique and round-trip", "[ir][ops]") {
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    auto back = op_from_name(op_name(op));
    REQUIRE(back.has_value());
    CHECK(*back == op);
  }
  CHECK_FALSE(op_from_name("no_such_op").has_value());
  CHECK(op_info(Op::add).arity == 2);
  CHECK(op_info(Op::concatenate).arity == kVariadic);
  CHECK(op_info(Op::dot_general).family == OpFamily::linalg);
  CHECK(op_name(Op::while_) == "while");
}

TEST_CASE("op table: every op has a shape rule", "[ir][ops][coverage]") {
  std::vector<std::string> missing;
  for (int i = 0; i < kNumOps; ++i)
    if (!shape_rule(static_cast<Op>(i))) missing.emplace_back(op_name(static_cast<Op>(i)));
  INFO("ops without a shape rule: " << Catch::Detail::stringify(missing));
  CHECK(missing.empty());
}
