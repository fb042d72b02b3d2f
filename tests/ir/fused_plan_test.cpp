// The plan of a fused body (ir/fused_plan.h): the class of each value, the
// reductions' groups, how outputs are stored; and that both consumers, the
// interpreter's tiled evaluator and the CPU code generator, compute what the
// body computes op by op.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emit.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"
#include "ir/builder.h"
#include "ir/fused_plan.h"
#include "ir/attrs.h"

namespace cg = graft::codegen::cpu;
using namespace graft;
using ir::Op;
using ir::ValueClass;
using ir::ValueId;

namespace {

ir::Attrs bcast(const Shape& shape, const ir::Ints& dims) {
  return ir::Attrs{{"shape", ir::Ints(shape.begin(), shape.end())}, {"broadcast_dimensions", dims}};
}
ir::Attrs axes(const ir::Ints& a) { return ir::Attrs{{"axes", a}}; }

// Inputs of a body: f64 values, a different formula per input.
std::vector<runtime::BufferPtr> make_inputs(const ir::Graph& body) {
  std::vector<runtime::BufferPtr> out;
  for (size_t j = 0; j < body.inputs().size(); ++j) {
    const ir::ValueType& t = body.type(body.inputs()[j]);
    REQUIRE(t.dtype == DType::f64);
    const int64_t n = t.num_elements();
    auto buf = runtime::make_buffer(static_cast<size_t>(n) * sizeof(double));
    auto* d = static_cast<double*>(buf->data());
    for (int64_t i = 0; i < n; ++i) d[i] = 0.25 * std::sin(static_cast<double>(i * 7 + 3 * j + 1)) + 0.1 * static_cast<double>(j);
    out.push_back(buf);
  }
  return out;
}

std::vector<runtime::BufferPtr> make_outputs(const ir::Graph& body) {
  std::vector<runtime::BufferPtr> out;
  for (ValueId id : body.outputs())
    out.push_back(runtime::make_buffer(static_cast<size_t>(body.type(id).num_elements()) * sizeof(double)));
  return out;
}

// The interpreter's kernel for a fusion node of `body`.
std::vector<runtime::BufferPtr> run_interpreter(const ir::GraphPtr& body, const std::vector<runtime::BufferPtr>& in) {
  std::vector<runtime::BufferPtr> out = make_outputs(*body);
  const ir::Attrs attrs{{"body", ir::Graphs{body}}};
  interpreter::KernelCall call{Op::fusion, attrs, {}, {}};
  for (size_t j = 0; j < in.size(); ++j) call.inputs.push_back({&body->type(body->inputs()[j]), in[j]->data()});
  for (size_t k = 0; k < out.size(); ++k) call.outputs.push_back({&body->type(body->outputs()[k]), out[k]->data()});
  interpreter::run_kernel(call);
  return out;
}

// The body compiled to C++ and run.
std::vector<runtime::BufferPtr> run_cpu(const ir::Graph& body, const std::vector<runtime::BufferPtr>& in,
                                        const std::string& sym) {
  std::vector<runtime::BufferPtr> out = make_outputs(body);
  cg::KernelFn fn = cg::compile_kernel(cg::emit_kernel(body, sym), sym);
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (const auto& b : in) ins.push_back(b->data());
  for (const auto& b : out) outs.push_back(b->data());
  const std::vector<int64_t> scalars = cg::kernel_scalars(body);
  fn(ins.data(), outs.data(), scalars.data(), cg::kernel_elements(body));
  return out;
}

void check_equal(const ir::Graph& body, const std::vector<runtime::BufferPtr>& got,
                 const std::vector<runtime::BufferPtr>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const int64_t n = body.type(body.outputs()[k]).num_elements();
    const auto* g = static_cast<const double*>(got[k]->data());
    const auto* w = static_cast<const double*>(want[k]->data());
    for (int64_t i = 0; i < n; ++i) {
      INFO("output " << k << " element " << i);
      if (tol == 0) CHECK(g[i] == w[i]);
      else CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
    }
  }
}

}  // namespace

TEST_CASE("fused plan: the class of each value, the reduction's groups, the outputs' stores", "[fusion][ir]") {
  ir::GraphBuilder b;
  const DType f64 = DType::f64;
  ValueId x = b.input({f64, {4, 3}}), r = b.input({f64, {3}}), a = b.input({f64, {}});
  ir::Literal lit{ir::ValueType{f64, {}}, std::vector<uint8_t>(sizeof(double))};
  const double two_value = 2.0;
  std::memcpy(lit.bytes.data(), &two_value, sizeof two_value);
  ValueId two = b.add1(Op::constant, {}, ir::Attrs{{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
  ValueId br = b.add1(Op::broadcast_in_dim, {r}, bcast({4, 3}, {1}));
  ValueId ba = b.add1(Op::broadcast_in_dim, {a}, bcast({4, 3}, {}));
  ValueId a2 = b.add1(Op::add, {ba, b.add1(Op::broadcast_in_dim, {two}, bcast({4, 3}, {}))});
  ValueId m = b.add1(Op::mul, {x, br});
  ValueId e = b.add1(Op::exp, {m});
  ValueId y = b.add1(Op::add, {e, ba});
  ValueId w = b.add1(Op::mul, {y, a2});
  ValueId s = b.add1(Op::reduce_sum, {w}, axes({1}));
  ir::GraphPtr body = b.finish({w, s});

  const ir::FusedPlan p = ir::plan_fused_body(*body);
  REQUIRE(p.refused.empty());
  CHECK(p.N == 12);
  CHECK(p.single_space);
  CHECK(p.of(x).cls == ValueClass::view);
  CHECK(ir::contiguous(p.of(x)));
  CHECK(p.of(r).cls == ValueClass::view);
  CHECK(p.of(r).count == 3);
  CHECK(p.of(a).cls == ValueClass::uniform);
  CHECK(p.of(two).cls == ValueClass::uniform);
  // An op on uniforms: a uniform computed by its own step.
  CHECK(p.of(a2).cls == ValueClass::uniform);
  CHECK(p.of(a2).count == 12);
  CHECK(p.of(a2).scalar == p.value_of[static_cast<size_t>(a2)]);
  // A broadcast input: a view of r stepping 0 along the new axis.
  CHECK(p.of(br).cls == ValueClass::view);
  CHECK(p.of(br).input == 1);
  CHECK(p.of(br).strides == std::vector<int64_t>{0, 1});
  CHECK_FALSE(ir::contiguous(p.of(br)));
  // A broadcast scalar: a uniform of 12 elements repeating a's scalar.
  CHECK(p.of(ba).cls == ValueClass::uniform);
  CHECK(p.of(ba).count == 12);
  CHECK(p.of(ba).scalar == p.value_of[static_cast<size_t>(a)]);
  for (ValueId v : {m, e, y, w}) CHECK(p.of(v).cls == ValueClass::full);
  CHECK(p.of(s).cls == ValueClass::reduced);
  // Steps: the one-element input, then constants, ops and the reduction in node order.
  REQUIRE(p.steps.size() == 8);
  CHECK(p.steps[0].what == ir::FusedStep::input);
  CHECK(p.steps[0].input_index == 2);
  CHECK(p.steps[1].what == ir::FusedStep::constant);
  CHECK(p.steps[2].what == ir::FusedStep::op);
  CHECK(p.steps[2].node->op == Op::add);
  CHECK(p.steps[7].what == ir::FusedStep::reduction);
  REQUIRE(p.reductions.size() == 1);
  const auto& g = p.reductions[0].groups;
  REQUIRE(g.size() == 2);
  CHECK((g[0].size == 4 && !g[0].reduced && g[0].in_stride == 3 && g[0].out_stride == 1));
  CHECK((g[1].size == 3 && g[1].reduced && g[1].in_stride == 1));
  CHECK(p.reductions[0].outputs == std::vector<size_t>{1});
  REQUIRE(p.outputs.size() == 2);
  CHECK(p.outputs[0].store == ir::OutputStore::loop);
  CHECK(p.outputs[1].store == ir::OutputStore::reduction);

  const auto in = make_inputs(*body);
  const auto want = interpreter::evaluate(*body, in);
  check_equal(*body, run_interpreter(body, in), want, 0);
  // The CPU kernel sums each row in lanes: the same sums up to rounding.
  check_equal(*body, run_cpu(*body, in, "fused_plan_classes"), want, 1e-14);
}

TEST_CASE("fused plan: an op on broadcast scalars is uniform, whatever its size", "[fusion][ir]") {
  ir::GraphBuilder b;
  const DType f64 = DType::f64;
  ValueId x = b.input({f64, {40}}), a = b.input({f64, {}}), c = b.input({f64, {}});
  ValueId ba = b.add1(Op::broadcast_in_dim, {a}, bcast({40}, {}));
  ValueId bc = b.add1(Op::broadcast_in_dim, {c}, bcast({40}, {}));
  ValueId sum = b.add1(Op::add, {ba, bc});
  ValueId e = b.add1(Op::exp, {sum});
  ValueId y = b.add1(Op::mul, {x, e});
  ir::GraphPtr body = b.finish({y, e});

  const ir::FusedPlan p = ir::plan_fused_body(*body);
  REQUIRE(p.refused.empty());
  for (ValueId v : {sum, e}) {
    CHECK(p.of(v).cls == ValueClass::uniform);
    CHECK(p.of(v).count == 40);
    CHECK(p.of(v).scalar == p.value_of[static_cast<size_t>(v)]);  // computed by its own step
  }
  CHECK(p.of(y).cls == ValueClass::full);
  CHECK(p.outputs[1].store == ir::OutputStore::loop);  // 40 elements: the space's

  const auto in = make_inputs(*body);
  const auto want = interpreter::evaluate(*body, in);
  // The interpreter computes exp once, the C++ kernel per element (Eigen's
  // packet path, as the op-by-op kernel): equal up to the last bits.
  check_equal(*body, run_interpreter(body, in), want, 1e-15);
  check_equal(*body, run_cpu(*body, in, "fused_plan_uniform_op"), want, 1e-15);
}

TEST_CASE("fused plan: a reshape of a strided view is that view, the CPU emitter refuses it", "[fusion][ir]") {
  ir::GraphBuilder b;
  const DType f64 = DType::f64;
  ValueId x = b.input({f64, {12}}), r = b.input({f64, {3}});
  ValueId br = b.add1(Op::broadcast_in_dim, {r}, bcast({4, 3}, {1}));
  ValueId q = b.add1(Op::reshape, {br}, {{"new_sizes", ir::Ints{12}}});
  ValueId y = b.add1(Op::sub, {x, q});
  ir::GraphPtr body = b.finish({y});

  const ir::FusedPlan p = ir::plan_fused_body(*body);
  REQUIRE(p.refused.empty());
  CHECK(p.value_of[static_cast<size_t>(q)] == p.value_of[static_cast<size_t>(br)]);
  CHECK(p.of(q).cls == ValueClass::view);
  CHECK(cg::unsupported_reason(*body).has_value());

  const auto in = make_inputs(*body);
  check_equal(*body, run_interpreter(body, in), interpreter::evaluate(*body, in), 0);
}

TEST_CASE("fused plan: reductions over the same axes share one geometry", "[fusion][ir]") {
  ir::GraphBuilder b;
  const DType f64 = DType::f64;
  ValueId x = b.input({f64, {5, 2, 3}});
  ValueId e = b.add1(Op::sin, {x});
  ValueId mx = b.add1(Op::reduce_max, {e}, axes({0}));
  ValueId sm = b.add1(Op::reduce_sum, {e}, axes({0}));
  ir::GraphPtr body = b.finish({sm, mx, e});

  const ir::FusedPlan p = ir::plan_fused_body(*body);
  REQUIRE(p.refused.empty());
  CHECK(p.N == 30);
  REQUIRE(p.reductions.size() == 2);
  for (const ir::FusedReduction& r : p.reductions) {
    REQUIRE(r.groups.size() == 2);
    CHECK((r.groups[0].size == 5 && r.groups[0].reduced));
    CHECK((r.groups[1].size == 6 && !r.groups[1].reduced && r.groups[1].out_stride == 1));
    ir::OuterReducedInner ori;
    CHECK(ir::outer_reduced_inner(r.groups, &ori));
    CHECK((ori.outer == 1 && ori.reduced == 5 && ori.inner == 6));
  }
  CHECK(p.reductions[0].outputs == std::vector<size_t>{1});
  CHECK(p.reductions[1].outputs == std::vector<size_t>{0});
  // Only a trailing reduction ends a C++ kernel.
  CHECK(cg::unsupported_reason(*body).has_value());

  const auto in = make_inputs(*body);
  check_equal(*body, run_interpreter(body, in), interpreter::evaluate(*body, in), 0);
}

TEST_CASE("fused plan: a body no backend fuses is refused, with the reason", "[fusion][ir]") {
  ir::GraphBuilder b;
  ValueId x = b.input({DType::f32, {4, 4}});
  ir::GraphPtr body = b.finish({b.add1(Op::transpose, {x}, ir::Attrs{{"permutation", ir::Ints{1, 0}}})});
  const ir::FusedPlan p = ir::plan_fused_body(*body);
  CHECK(p.refused.find("transpose") != std::string::npos);
  CHECK(p.values.empty());
}
