// The builder (type inference, node sharing) and the text view.
#include <catch2/catch.hpp>

#include "graft/errors.h"
#include "ir/passes.h"
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
  ValueId r = b.add1(Op::remat, {x}, {{"body", Graphs{remat_body}}, {"policy", std::string("nothing_saveable")}});
  GraphPtr g = b.finish({s, r});
  std::string expected =
      "{ lambda %0:f32[3] %1:f32[3] .\n"
      "  %2:f32[3] = mul %0 %1\n"
      "  %3:f32[] = reduce_sum[axes=(0)] %2                          # loss\n"
      "  %4:f32[3] = remat[policy='nothing_saveable'] %0\n"
      "    body = { lambda %4/body/0:f32[3] .\n"  // subgraph values named by their path: unique
      "        %4/body/1:f32[3] = cos %4/body/0\n"
      "        in (%4/body/1) }\n"
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

TEST_CASE("graph: IdList holds four ids inline and grows like a vector past them", "[ir]") {
  IdList ids{1, 2, 3};
  CHECK(ids.size() == 3);
  CHECK(ids.capacity() == 4);
  for (ValueId v = 4; v <= 11; ++v) ids.push_back(v);  // past the inline four, then past the first block
  REQUIRE(ids.size() == 11);
  CHECK(ids.capacity() >= 11);
  for (size_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == static_cast<ValueId>(i + 1));
  CHECK(ids == std::vector<ValueId>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});

  IdList copy = ids;  // a heap copy owns its own block
  copy[0] = 100;
  CHECK(ids[0] == 1);
  IdList moved = std::move(copy);
  CHECK(moved.size() == 11);
  CHECK(moved[0] == 100);
  CHECK(copy.empty());  // NOLINT: moved-from is specified as empty

  IdList small{7, 8};
  IdList small_moved = std::move(small);
  CHECK(small_moved == IdList{7, 8});
  small_moved = ids;  // inline -> heap by assignment
  CHECK(small_moved == ids);
  small_moved = IdList{5};  // heap -> inline by move
  CHECK(small_moved == std::vector<ValueId>{5});

  std::vector<ValueId> as_vector = ids;
  CHECK(as_vector.size() == 11);
  CHECK(IdList(as_vector) == ids);
  IdList sized(6, -1);
  CHECK(sized == std::vector<ValueId>(6, -1));
  sized.resize(2);
  sized.append(ids.begin(), ids.begin() + 3);
  CHECK(sized == std::vector<ValueId>{-1, -1, 1, 2, 3});
  CHECK_FALSE(sized == ids);
}
