// The builder (type inference, node sharing) and the text view.
#include <catch2/catch.hpp>

#include "graft/errors.h"
#include "ir/bgl.h"
#include "ir/builder.h"
#include "ir/text.h"

using namespace graft;
using namespace graft::ir;

TEST_CASE("builder: infers types and shares identical nodes", "[ir][builder]") {
  GraphBuilder b;
  ValueId x = b.input({DType::f32, {2, 3}});
  ValueId s1 = b.add1(Op::sin, {x});
  ValueId s2 = b.add1(Op::sin, {x}, {}, {"other.cpp", "g", 9});
  CHECK(s1 == s2);  // same op, operands, attributes: one node
  ValueId r0 = b.add1(Op::reduce_sum, {s1}, {{"axes", Ints{0}}});
  ValueId r1 = b.add1(Op::reduce_sum, {s1}, {{"axes", Ints{1}}});
  CHECK(r0 != r1);  // different attributes: two nodes
  CHECK(b.type(r0) == ValueType{DType::f32, {3}});
  CHECK(b.type(r1) == ValueType{DType::f32, {2}});
  CHECK(b.num_shared() == 1);
  GraphPtr g = b.finish({r0, r1});
  CHECK(g->num_nodes() == 3);
  CHECK_NOTHROW(verify(*g));
}

TEST_CASE("builder: a rule violation throws before anything is added", "[ir][builder]") {
  GraphBuilder b;
  ValueId x = b.input({DType::f32, {3}});
  ValueId y = b.input({DType::f64, {3}});
  CHECK_THROWS_AS(b.add1(Op::add, {x, y}, {}, {"model.cpp", "f", 42}), DTypeError);
  try {
    b.add1(Op::add, {x, y}, {}, {"model.cpp", "f", 42});
  } catch (const DTypeError& e) {
    std::string m = e.what();
    CHECK(m.find("add") != std::string::npos);
    CHECK(m.find("f32[3]") != std::string::npos);
    CHECK(m.find("f64[3]") != std::string::npos);
    CHECK(m.find("model.cpp:42") != std::string::npos);
  }
  CHECK(b.graph().num_nodes() == 0);
}

TEST_CASE("text: one line per node, scopes, attributes, nested subgraphs", "[ir][text]") {
  GraphBuilder body;
  ValueId bi = body.input({DType::f32, {3}});
  GraphPtr remat_body = body.finish({body.add1(Op::cos, {bi})});

  GraphBuilder b;
  ValueId x = b.input({DType::f32, {3}});
  ValueId y = b.input({DType::f32, {3}});
  ValueId m = b.add1(Op::mul, {x, y});
  ValueId s = b.add1(Op::reduce_sum, {m}, {{"axes", Ints{0}}}, {}, "loss");
  ValueId r = b.add1(Op::remat, {x}, {{"body", Graphs{remat_body}}});
  GraphPtr g = b.finish({s, r});
  std::string expected =
      "{ lambda %0:f32[3] %1:f32[3] .\n"
      "  %2:f32[3] = mul %0 %1\n"
      "  %3:f32[] = reduce_sum[axes=(0)] %2                          # loss\n"
      "  %4:f32[3] = remat %0\n"
      "    body = { lambda %0:f32[3] .\n"
      "        %1:f32[3] = cos %0\n"
      "        in (%1) }\n"
      "  in (%3, %4) }\n";
  CHECK(to_text(*g) == expected);
}

TEST_CASE("graph: ids removed by DCE are not handed out again", "[ir][builder][bgl]") {
  GraphBuilder b;
  ValueId x = b.input({DType::f32, {3}});
  ValueId live = b.add1(Op::sin, {x});
  b.add1(Op::cos, {live});  // dead, and the highest ids
  GraphPtr g = b.finish({live});
  ir::Graph pruned = dead_code_elimination(*g);
  REQUIRE(pruned.num_nodes() == 1);
  CHECK(pruned.new_value({DType::f32, {}}) == g->value_id_bound());
  CHECK(pruned.next_node_id() == g->next_node_id());
}
