// Attributes are read through checked accessors: a missing or mistyped
// attribute is a GraphFormatError naming the op and the attribute, in the
// IR, in a kernel and in a transform rule, never a null dereference.
#include <catch2/catch.hpp>

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/attr_access.h"

using namespace graft;
using Catch::Matchers::Contains;

TEST_CASE("attributes: checked reads name the op and the attribute", "[ir][attrs]") {
  ir::Node node;
  node.op = ir::Op::reduce_sum;
  node.attrs.set("axes", ir::Ints{0, 1});
  CHECK(ir::ints_attr(node, "axes") == ir::Ints{0, 1});
  CHECK_THROWS_AS(ir::int_attr(node, "axes"), GraphFormatError);
  CHECK_THROWS_WITH(ir::int_attr(node, "axes"), Contains("reduce_sum") && Contains("'axes'") && Contains("integer"));
  CHECK_THROWS_WITH(ir::ints_attr(node, "dims"), Contains("reduce_sum") && Contains("'dims'") && Contains("missing"));
}

TEST_CASE("attributes: a kernel given a node without its attribute throws GraphFormatError", "[ir][attrs]") {
  ir::Attrs none;
  ir::ValueType in{DType::f32, {2, 3}}, out{DType::f32, {2}};
  std::vector<float> x(6, 1.0f), y(2, 0.0f);
  for (ir::Op op : {ir::Op::reduce_sum, ir::Op::transpose, ir::Op::cumsum}) {
    INFO(ir::op_name(op));
    interpreter::KernelCall call{op, none, {{&in, x.data()}}, {{op == ir::Op::reduce_sum ? &out : &in, y.data()}}};
    std::vector<float> big(6);
    if (op != ir::Op::reduce_sum) call.outputs[0].data = big.data();
    CHECK_THROWS_WITH(interpreter::run_kernel(call), Contains(std::string(ir::op_name(op))) && Contains("attribute"));
  }
}
