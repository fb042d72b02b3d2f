// Mutation checks: the corpus must catch a deliberately wrong rule. Each
// test puts a wrong batching rule or kernel in place of the right one (every
// example takes example 0's branch; select's two choices swapped; negative
// start indices wrapped Python-style instead of clamped; a half's sum
// accumulated in the half; f64 to f16 rounded twice), runs the corpus
// cases holding that op (eval on the interpreter and both vmaps), expects
// some check to fail, and puts the right one back, which passes them all.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "corpus/corpus_runner.h"
#include "graft/types.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "transforms/rules/batch_rule.h"

using nlohmann::json;
namespace ir = graft::ir;
namespace tr = graft::transforms;
namespace interp = graft::interpreter;

namespace {

// The corpus cases whose graphs hold `op`.
std::vector<json> cases_with(const std::string& op) {
  std::vector<json> out;
  const json index = graft::test::corpus_index();
  for (const json& c : index.at("cases"))
    for (const json& o : c.at("ops"))
      if (o == op) out.push_back(c);
  return out;
}

// The differences the cases show (eval on the interpreter, vmap and vmap with mixed in_axes).
std::vector<std::string> differences(const std::vector<json>& cases) {
  std::vector<std::string> all;
  graft::test::CorpusCounts counts;
  for (const json& c : cases) {
    std::vector<std::string> found;
    graft::test::check_corpus_case(c, false, found, counts);
    for (const std::string& f : found) all.push_back(c.at("name").get<std::string>() + ": " + f);
  }
  return all;
}

// A rule or kernel swapped in for the life of the object.
template <typename T, T (*replace)(ir::Op, T)>
struct Swapped {
  Swapped(ir::Op op, T wrong) : op(op), right(replace(op, wrong)) {}
  ~Swapped() { replace(op, right); }
  ir::Op op;
  T right;
};
using SwappedRule = Swapped<tr::BatchRule, tr::replace_batch_rule>;
using SwappedKernel = Swapped<interp::Kernel, interp::replace_kernel>;

tr::BatchRule right_cond_batch = nullptr;
interp::Kernel right_select = nullptr, right_dynamic_slice = nullptr, right_reduce_sum = nullptr,
               right_convert = nullptr;

// cond batched as a wrong rule would: the whole batch takes example 0's branch index.
std::vector<tr::BatchedValue> cond_batch_from_example_0(tr::BatchCtx& c) {
  tr::BatchedValue& index = c.operands[0];
  if (index.dim != tr::kNotBatched) {
    const ir::ValueType t = c.type(index.value);
    ir::Ints start(t.shape.size(), 0), limit(t.shape.begin(), t.shape.end()), strides(t.shape.size(), 1);
    limit[static_cast<size_t>(index.dim)] = 1;
    const ir::ValueId first =
        c.add(ir::Op::slice, {index.value}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}});
    const graft::Shape& shape = c.unbatched_type(0).shape;
    index = {c.add(ir::Op::reshape, {first}, {{"new_sizes", ir::Ints(shape.begin(), shape.end())}}), tr::kNotBatched};
  }
  return right_cond_batch(c);
}

// select with its two choices swapped.
void select_swapped(const interp::KernelCall& call) {
  interp::KernelCall swapped{call.op, call.attrs, call.inputs, call.outputs};
  std::swap(swapped.inputs[1], swapped.inputs[2]);
  right_select(swapped);
}

// dynamic_slice with a negative start index wrapped (start + size, as Python's x[-1]) before the clamp.
void dynamic_slice_wrapping(const interp::KernelCall& call) {
  interp::KernelCall wrapped{call.op, call.attrs, call.inputs, call.outputs};
  std::vector<int64_t> starts(call.inputs.size());
  for (size_t i = 1; i < call.inputs.size(); ++i) {
    const graft::DType d = call.inputs[i].type->dtype;
    if (d != graft::DType::i32 && d != graft::DType::i64) continue;
    int64_t s = 0;
    if (d == graft::DType::i32) {
      int32_t v;
      std::memcpy(&v, call.inputs[i].data, sizeof v);
      s = v;
    } else {
      std::memcpy(&s, call.inputs[i].data, sizeof s);
    }
    if (s < 0) s += call.inputs[0].type->shape[i - 1];
    starts[i] = s;
    if (d == graft::DType::i32) {
      const int32_t v = static_cast<int32_t>(s);
      std::memcpy(&starts[i], &v, sizeof v);
    }
    wrapped.inputs[i].data = &starts[i];
  }
  right_dynamic_slice(wrapped);
}

// reduce_sum of a half over its last axis as a half accumulator would sum it:
// each partial sum rounded to the half (graft and JAX accumulate in f32).
void reduce_sum_in_half(const interp::KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const ir::Ints& axes = interp::ints_attr(call, "axes");
  if (!ir::is_half(t.dtype) || axes.size() != 1 || axes[0] + 1 != static_cast<int64_t>(t.shape.size()))
    return right_reduce_sum(call);
  const int64_t n = t.shape.back(), rows = n ? t.num_elements() / n : 0;
  auto run = [&](auto zero) {
    using H = decltype(zero);
    const H* x = static_cast<const H*>(call.inputs[0].data);
    H* y = static_cast<H*>(call.outputs[0].data);
    for (int64_t r = 0; r < rows; ++r) {
      H acc = zero;
      for (int64_t i = 0; i < n; ++i) acc = H(static_cast<float>(acc) + static_cast<float>(x[r * n + i]));
      y[r] = acc;
    }
  };
  t.dtype == graft::DType::f16 ? run(graft::float16(0.0f)) : run(graft::bfloat16(0.0f));
}

// convert_element_type from f64 to f16 through f32, rounding twice (JAX and
// NumPy round once: 1 + 2^-11 + 2^-30 is f16's 1 + 2^-10, not 1).
void convert_f64_to_f16_twice(const interp::KernelCall& call) {
  if (call.inputs[0].type->dtype != graft::DType::f64 || call.outputs[0].type->dtype != graft::DType::f16)
    return right_convert(call);
  const double* x = static_cast<const double*>(call.inputs[0].data);
  graft::float16* y = static_cast<graft::float16*>(call.outputs[0].data);
  for (int64_t i = 0; i < call.outputs[0].type->num_elements(); ++i) y[i] = graft::float16(static_cast<float>(x[i]));
}

// The differences the cases of `op` show with `wrong` in place of its rule
// (Swap: SwappedRule or SwappedKernel), after checking they show none
// without it; `right` receives the displaced rule for `wrong` to call.
template <typename Swap, typename T>
std::vector<std::string> differences_with(ir::Op op, T wrong, T& right) {
  const std::vector<json> cases = cases_with(std::string(ir::op_name(op)));
  REQUIRE(!cases.empty());
  CHECK(differences(cases).empty());
  std::vector<std::string> found;
  {
    Swap swapped(op, wrong);
    right = swapped.right;
    found = differences(cases);
  }
  CHECK(differences(cases).empty());  // the right one is back
  return found;
}

}  // namespace

TEST_CASE("corpus mutation: a vmap of cond that takes example 0's branch for the batch fails", "[corpus][mutation]") {
  const auto found = differences_with<SwappedRule>(ir::Op::cond, &cond_batch_from_example_0, right_cond_batch);
  INFO(found.size() << " differences, the first: " << (found.empty() ? "" : found[0]));
  CHECK(found.size() >= 2);
}

TEST_CASE("corpus mutation: select with its choices swapped fails", "[corpus][mutation]") {
  const auto found = differences_with<SwappedKernel>(ir::Op::select, &select_swapped, right_select);
  INFO(found.size() << " differences, the first: " << (found.empty() ? "" : found[0]));
  CHECK(!found.empty());
}

TEST_CASE("corpus mutation: dynamic_slice that wraps negative starts instead of clamping fails", "[corpus][mutation]") {
  const auto found =
      differences_with<SwappedKernel>(ir::Op::dynamic_slice, &dynamic_slice_wrapping, right_dynamic_slice);
  INFO(found.size() << " differences, the first: " << (found.empty() ? "" : found[0]));
  CHECK(!found.empty());
}

TEST_CASE("corpus mutation: a half's sum accumulated in the half fails", "[corpus][mutation]") {
  const auto found = differences_with<SwappedKernel>(ir::Op::reduce_sum, &reduce_sum_in_half, right_reduce_sum);
  INFO(found.size() << " differences, the first: " << (found.empty() ? "" : found[0]));
  CHECK(found.size() >= 2);  // the f16 and bf16 cases
}

TEST_CASE("corpus mutation: f64 rounded to f16 through f32 (twice) fails", "[corpus][mutation]") {
  const auto found =
      differences_with<SwappedKernel>(ir::Op::convert_element_type, &convert_f64_to_f16_twice, right_convert);
  INFO(found.size() << " differences, the first: " << (found.empty() ? "" : found[0]));
  CHECK(!found.empty());
}
