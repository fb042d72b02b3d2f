// One coverage test for every rule kind and every backend, walking ops.def:
// each op has exactly the rules its columns call for (ir/op.h's has_*), and
// every elementwise op runs on each dtype its shape rule accepts on the
// interpreter, and has C++ the CPU emitter writes for it. A failure names the
// op and the missing (or unexpected) rule.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "codegen/cpu/elementwise.h"
#include "graft/errors.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "ir/shape_rules/rule.h"
#include "transforms/rules/batch_rule.h"
#include "transforms/rules/derivative_formula.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

using namespace graft;
using ir::Op;

namespace {

struct RuleKind {
  const char* name;
  bool (*required)(Op);
  bool (*present)(Op);
};

constexpr bool always(Op) { return true; }

const RuleKind kKinds[] = {
    {"shape rule (ir/shape_rules)", always, [](Op op) { return ir::shape_rule(op) != nullptr; }},
    {"interpreter kernel (interpreter/kernels)", always,
     [](Op op) { return interpreter::kernel_for(op) != nullptr; }},
    {"JVP rule (transforms/rules)", ir::has_jvp_rule, [](Op op) { return transforms::jvp_rule(op) != nullptr; }},
    {"transpose rule (transforms/rules)", ir::has_transpose_rule,
     [](Op op) { return transforms::transpose_rule(op) != nullptr; }},
    {"batching rule (transforms/rules)", ir::has_batch_rule,
     [](Op op) { return transforms::batch_rule(op) != nullptr; }},
};

// Every dtype; generated C++ is owed for those it has a type for (not the halves or complex).
const auto& kDTypes = ir::kAllDTypes;
bool has_generated_code(DType d) { return !ir::is_half(d) && !ir::is_complex(d); }

}  // namespace

TEST_CASE("coverage: every op has exactly the rules ops.def calls for", "[coverage]") {
  std::vector<std::string> missing, unexpected;
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    for (const RuleKind& k : kKinds) {
      bool want = k.required(op), have = k.present(op);
      if (want && !have) missing.push_back(std::string(ir::op_name(op)) + ": " + k.name);
      if (!want && have) unexpected.push_back(std::string(ir::op_name(op)) + ": " + k.name);
    }
  }
  INFO("missing: " << Catch::Detail::stringify(missing));
  CHECK(missing.empty());
  INFO("present although ops.def does not call for it: " << Catch::Detail::stringify(unexpected));
  CHECK(unexpected.empty());
  // The derivations themselves, on ops whose answer is known.
  CHECK(ir::has_transpose_rule(Op::dot_general));
  CHECK_FALSE(ir::has_transpose_rule(Op::exp));
  CHECK_FALSE(ir::has_jvp_rule(Op::floor));
  CHECK_FALSE(ir::has_jvp_rule(Op::fusion));
  CHECK_FALSE(ir::has_batch_rule(Op::iota));
  CHECK(ir::has_batch_rule(Op::axis_index));
}

TEST_CASE("coverage: ops.def's standard rules are well formed", "[coverage]") {
  int formulas = 0, linear = 0;
  for (int i = 0; i < ir::kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    const ir::OpInfo& info = ir::op_info(op);
    INFO(ir::op_name(op));
    if (info.jvp.kind == ir::JvpKind::derivative) {
      CHECK(info.arity == 1);  // a formula in x and y
      CHECK_NOTHROW(transforms::derivative_formula(op));
      ++formulas;
    } else {
      CHECK_THROWS_AS(transforms::derivative_formula(op), Error);
    }
    if (info.jvp.kind == ir::JvpKind::linear_in) {
      ++linear;
      if (info.jvp.text == "all") {
        CHECK(info.arity == ir::kVariadic);
      } else {
        int n = 0;
        for (char ch : info.jvp.text) {
          if (ch == ' ') continue;
          CHECK((ch >= '0' && ch <= '9'));
          CHECK((info.arity == ir::kVariadic || ch - '0' < info.arity));
          ++n;
        }
        CHECK(n > 0);
      }
      CHECK(info.linear);  // linear in those operands, so it has a transpose rule
    }
    // The standard shape rules of the elementwise family stay in it.
    if (info.shape_rule == ir::ShapeRuleKind::same_type || info.shape_rule == ir::ShapeRuleKind::bool_result)
      CHECK(info.family == ir::OpFamily::elementwise);
  }
  CHECK(formulas >= 20);
  CHECK(linear >= 15);
}

TEST_CASE("coverage: every DERIVATIVE formula of ops.def agrees with finite differences", "[coverage][jvp]") {
  // x in [0.5, 0.8], inside most ops' domains (log, asin, ...), else 1 beyond: the
  // formula's JVP against central differences (step 1e-4), its VJP against
  // the JVP, and the formula's own derivative (second order), in f64.
  const Array x = linspace(0.5, 0.8, 7, DType::f64);
  int checked = 0;
  for (int i = 0; i < ir::kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (ir::op_info(op).jvp.kind != ir::JvpKind::derivative) continue;
    INFO(ir::op_name(op) << ": " << ir::op_info(op).jvp.text);
    auto f = [op](const Array& a) { return detail::bind1(op, {a}, {}, std::source_location::current()); };
    // An op defined only beyond 1 (acosh) is checked on [1.5, 1.8].
    const Array at = any(isnan(f(x))).item<bool>() ? x + 1.0 : x;
    CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(at), 2, testing::Modes::fwd_and_rev, 1e-4));
    ++checked;
  }
  CHECK(checked >= 21);
}

TEST_CASE("coverage: every elementwise op, on every dtype its shape rule accepts, runs on the interpreter and has "
          "emitted C++",
          "[coverage][interpreter][codegen]") {
  std::vector<std::string> failures;
  int runs = 0;
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    if (!ir::is_elementwise(op)) continue;
    for (DType d : kDTypes) {
      std::vector<ir::ValueType> ins(static_cast<size_t>(ir::op_info(op).arity), ir::ValueType{d, {3}});
      if (op == Op::select) ins[0].dtype = DType::bool_;
      ir::Attrs attrs;
      if (op == Op::convert_element_type) attrs.set("new_dtype", d == DType::f32 ? DType::i32 : DType::f32);
      if (op == Op::bitcast_convert_type) {  // another dtype of d's width
        DType other = d;
        for (DType e : ir::kAllDTypes)
          if (e != d && e != DType::bool_ && ir::dtype_size(e) == ir::dtype_size(d)) other = e;
        attrs.set("new_dtype", other);
      }
      try {
        ir::infer_types(op, ins, attrs);
      } catch (const Error&) {
        continue;  // the rule refuses this dtype: no kernel is owed
      }
      const std::string what = std::string(ir::op_name(op)) + " on " + dtype_name(d);
      try {
        ir::GraphBuilder b;
        std::vector<ir::ValueId> args;
        for (const ir::ValueType& t : ins) args.push_back(b.input(t));
        ir::IdList outs = b.add(op, ir::IdList(args.begin(), args.end()), attrs);
        ir::GraphPtr g = b.finish(std::vector<ir::ValueId>(outs.begin(), outs.end()));
        std::vector<runtime::BufferPtr> bufs;
        for (const ir::ValueType& t : ins) {
          runtime::BufferPtr buf = runtime::make_buffer(static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
          std::memset(buf->data(), 1, buf->size());  // nonzero in every dtype
          bufs.push_back(buf);
        }
        std::vector<runtime::BufferPtr> out = interpreter::evaluate(*g, bufs);
        if (out.size() != 1) failures.push_back(what + ": wrong number of outputs");
        ++runs;
      } catch (const std::exception& e) {
        failures.push_back(what + ", interpreter kernel: " + e.what());
      }
      // The CPU emitter: a call of graft's math function, or an inline expression.
      if (!has_generated_code(d) || ir::codegen_kind(op) != ir::CodegenKind::emitted) continue;
      if (op == Op::convert_element_type || op == Op::bitcast_convert_type)
        if (!has_generated_code(std::get<DType>(*attrs.find("new_dtype")))) continue;
      try {
        const DType out = ir::infer_types(op, ins, attrs)[0].dtype;
        const DType operand = op == Op::select ? d : ins[0].dtype;
        std::string code;
        if (auto fn = codegen::cpu::detail::op_math_fn(op, operand)) {
          code = codegen::cpu::detail::op_call(*fn, "x", "y", "n");
        } else {
          const std::vector<std::string> operands = {"a", "b", "c"};
          code = codegen::cpu::detail::op_expr(op, operand, out, operands);
        }
        if (code.empty()) failures.push_back(what + ", cpu emitter: empty code");
      } catch (const std::exception& e) {
        failures.push_back(what + ", cpu emitter: " + e.what());
      }
    }
  }
  INFO("failed: " << Catch::Detail::stringify(failures));
  CHECK(failures.empty());
  CHECK(runs > 100);  // the walk reached the ops (a refusal of every dtype would pass vacuously)
}
