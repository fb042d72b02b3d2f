// The rules of collectives, checked on graphs: a collective only runs under
// vmap or pmap (which bring its axis), so here the rewritten graphs are
// inspected for the adjoint collective and its attributes. vmap's and
// pmap's tests check the numbers.
#include <catch2/catch.hpp>

#include "graft/errors.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "transforms/jvp.h"
#include "transforms/vjp.h"

using namespace graft;
using namespace graft::ir;

namespace {

// A graph applying one collective to an f32[2, 3] input.
GraphPtr one_op(Op op, Attrs attrs) {
  GraphBuilder b;
  ValueId x = b.input(ValueType{DType::f32, {2, 3}});
  return b.finish(b.add(op, {x}, std::move(attrs)));
}

// The nodes of g applying op, in order.
std::vector<const Node*> nodes_of(const Graph& g, Op op) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes())
    if (n.op == op) out.push_back(&n);
  return out;
}

}  // namespace

TEST_CASE("collective rules: transposes are the adjoint collectives", "[transforms][collective]") {
  Attrs gather{{"axis_name", std::string("i")}, {"axis_size", int64_t{4}}, {"axis", int64_t{0}}, {"tiled", int64_t{1}}};
  GraphPtr vg = transforms::vjp_graph(*one_op(Op::all_gather, gather), {true});
  auto scatters = nodes_of(*vg, Op::psum_scatter);
  REQUIRE(scatters.size() == 1);
  CHECK(scatters[0]->attrs == gather);
  CHECK(vg->type(vg->outputs()[1]) == (ValueType{DType::f32, {2, 3}}));

  Attrs sum{{"axis_name", std::string("i")}};
  vg = transforms::vjp_graph(*one_op(Op::psum, sum), {true});
  CHECK(nodes_of(*vg, Op::psum).size() == 2);  // the forward psum and its transpose

  Attrs shift{{"axis_name", std::string("i")}, {"perm", Ints{0, 1, 1, 2, 2, 0}}};
  vg = transforms::vjp_graph(*one_op(Op::ppermute, shift), {true});
  auto perms = nodes_of(*vg, Op::ppermute);
  REQUIRE(perms.size() == 2);
  CHECK(std::get<Ints>(*perms[1]->attrs.find("perm")) == Ints{1, 0, 2, 1, 0, 2});
}

TEST_CASE("collective rules: pmax's tangent comes from the replicas that attain it", "[transforms][collective]") {
  GraphPtr jg = transforms::jvp_graph(*one_op(Op::pmax, {{"axis_name", std::string("i")}}), {true});
  // eq(x, pmax x) selects the replicas; two psums count them and gather their tangents.
  CHECK(nodes_of(*jg, Op::eq).size() == 1);
  CHECK(nodes_of(*jg, Op::psum).size() == 2);
  CHECK(nodes_of(*jg, Op::div).size() == 1);
}

TEST_CASE("collective rules: pmax and pmin refuse complex operands, psum bool ones", "[transforms][collective]") {
  auto apply = [](Op op, DType dtype) {
    GraphBuilder b;
    ValueId x = b.input(ValueType{dtype, {3}});
    b.add(op, {x}, {{"axis_name", std::string("i")}});
  };
  CHECK_THROWS_AS(apply(Op::pmax, DType::c64), DTypeError);  // no order: its max would be meaningless
  CHECK_THROWS_AS(apply(Op::pmin, DType::c128), DTypeError);
  CHECK_THROWS_AS(apply(Op::psum, DType::bool_), DTypeError);
  CHECK_NOTHROW(apply(Op::psum, DType::c64));
  CHECK_NOTHROW(apply(Op::pmax, DType::i32));
}
