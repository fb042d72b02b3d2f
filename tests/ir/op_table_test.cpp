#include <catch2/catch.hpp>
#include <string>
#include <vector>

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

TEST_CASE("op table: the property columns and the predicates derived from them", "[ir][ops]") {
  std::vector<std::string> reductions, not_differentiable;
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    if (ir::is_reduction(op)) reductions.emplace_back(ir::op_name(op));
    if (!ir::is_differentiable(op)) {
      not_differentiable.emplace_back(ir::op_name(op));
      CHECK(ir::op_info(op).not_differentiable.size() > 3);  // a reason, not a flag
    }
    CHECK(ir::is_collective(op) == (ir::op_info(op).family == ir::OpFamily::collective));
    if (ir::is_reduction(op)) CHECK(ir::op_info(op).family == ir::OpFamily::reduce);
  }
  CHECK(reductions == std::vector<std::string>{"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                                               "reduce_or"});
  CHECK(!ir::is_reduction(Op::argmax));
  CHECK(!ir::is_reduction(Op::cumsum));
  CHECK(ir::is_differentiable(Op::sin));
  CHECK(!ir::is_differentiable(Op::floor));
  CHECK(ir::op_info(Op::floor).not_differentiable == "piecewise constant");
  CHECK(not_differentiable.size() == 24);
}
