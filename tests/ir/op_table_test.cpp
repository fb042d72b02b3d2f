#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "graft/errors.h"
#include "ir/attr_schema.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "ir/shape_rules/rule.h"
#include "tests/ir/op_cases.h"

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
  CHECK(op_name(Op::while_loop) == "while");
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
  CHECK(not_differentiable.size() == 34);  // 25, shifts, population_count, clz, trunc, nextafter, bitcast,
                                           // lu_pivots_to_permutation
}

TEST_CASE("op table: the attribute schema column", "[ir][ops][attrs]") {
  // Every schema parses (a malformed column throws on first use).
  for (int i = 0; i < ir::kNumOps; ++i) CHECK_NOTHROW(ir::attr_schema(static_cast<Op>(i)));
  auto names = [](Op op) {
    std::vector<std::string> out;
    for (const ir::AttrSpec& s : ir::attr_schema(op)) out.emplace_back(std::string(s.name) + ":" + attr_kind_name(s.kind));
    return out;
  };
  CHECK(names(Op::add).empty());
  CHECK(names(Op::argmax) == std::vector<std::string>{"axis:int", "index_dtype:dtype"});
  CHECK(names(Op::constant) == std::vector<std::string>{"value:literal"});
  CHECK(names(Op::cond) == std::vector<std::string>{"branches:graphs"});
  CHECK(names(Op::psum) == std::vector<std::string>{"axis_name:string"});

  // Every well-typed catalogue case fits its op's schema exactly, and each way
  // of breaking one is named.
  for (const testing::OpCase& c : testing::valid_op_cases()) {
    INFO(testing::case_summary(c));
    CHECK(ir::attr_schema_violation(c.op, c.attrs).empty());
  }
  Attrs argmax{{"axis", int64_t{0}}, {"index_dtype", DType::i32}};
  CHECK(ir::attr_schema_violation(Op::argmax, argmax).empty());
  Attrs missing{{"axis", int64_t{0}}};
  CHECK(ir::attr_schema_violation(Op::argmax, missing) == "attribute 'index_dtype' is missing (it must be dtype)");
  Attrs wrong{{"axis", Ints{0}}, {"index_dtype", DType::i32}};
  CHECK(ir::attr_schema_violation(Op::argmax, wrong) == "attribute 'axis' must be int, not ints");
  Attrs extra{{"axis", int64_t{0}}, {"index_dtype", DType::i32}, {"keepdims", int64_t{1}}};
  CHECK(ir::attr_schema_violation(Op::argmax, extra) == "unknown attribute 'keepdims' (it takes axis, index_dtype)");
  Attrs first{{"a", int64_t{0}}, {"axis", int64_t{0}}, {"index_dtype", DType::i32}};
  CHECK(ir::attr_schema_violation(Op::argmax, first) == "unknown attribute 'a' (it takes axis, index_dtype)");
  try {
    ir::check_attr_schema(Op::argmax, missing);
    FAIL("no error");
  } catch (const GraphFormatError& e) {
    CHECK_THAT(e.what(), Catch::Equals("argmax: attribute 'index_dtype' is missing (it must be dtype)"));
  }
}
