// Every op's graph survives JSON exactly, and its text and DOT views render.
#include <catch2/catch.hpp>

#include "ir/dot.h"
#include "ir/json.h"
#include "ir/text.h"
#include "tests/ir/op_cases.h"

using namespace graft::ir;
using namespace graft::ir::testing;

TEST_CASE("json: every op's graph round-trips exactly", "[ir][json][ops]") {
  std::vector<bool> covered(kNumOps, false);
  for (const OpCase& c : valid_op_cases()) {
    INFO(case_summary(c));
    GraphPtr g = graph_of(c);
    std::string text = to_json(*g);
    GraphPtr back = from_json(text);
    CHECK(*back == *g);
    CHECK(to_json(*back) == text);
    CHECK(to_text(*back) == to_text(*g));
    CHECK(to_dot(*back).find(std::string(op_name(c.op))) != std::string::npos);
    covered[static_cast<size_t>(c.op)] = true;
  }
  for (int i = 0; i < kNumOps; ++i) {
    INFO("op without a round-trip case: " << op_name(static_cast<Op>(i)));
    CHECK(covered[i]);
  }
}
