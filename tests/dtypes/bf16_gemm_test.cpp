// bf16 products on the CPU's bf16 instructions (oneDNN; interpreter/onednn_bf16.h)
// against the same products widened to f32 (GRAFT_BF16_GEMM=f32) and against an
// f64 reference of the operands' exact values: every layout dot_general brings to
// a GEMM (transposed in place, copied into order, batched), bf16 and f32 results.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "interpreter/onednn_bf16.h"
#include "support/scoped_env.h"

using namespace graft;

namespace {

// Runs f with GRAFT_BF16_GEMM=f32 (the widened path).
Array widened(const std::function<Array()>& f) {
  const test::ScopedEnv f32("GRAFT_BF16_GEMM", "f32");
  Array out = f();
  (void)out.to_vector<float>();  // computed before the variable is restored
  return out;
}

}  // namespace

TEST_CASE("bf16 products on bf16 instructions equal the widened f32 products", "[dtypes][bf16_gemm]") {
  INFO("bf16 GEMM: " << interpreter::bf16_gemm_description());
  const auto keys = random::split(random::key(7), 2);
  // [batch, m, k] and [batch, k, n] with values that are exact in bf16.
  const Array a32 = random::normal(keys[0], {3, 48, 64}), b32 = random::normal(keys[1], {3, 64, 40});
  const Array a = astype(a32, DType::bf16), b = astype(b32, DType::bf16);
  const Array at = astype(transpose(a32, {0, 2, 1}), DType::bf16), bt = astype(transpose(b32, {0, 2, 1}), DType::bf16);
  const std::vector<std::pair<std::string, std::function<Array(DotOptions)>>> cases = {
      {"plain matmul", [&](DotOptions o) { return matmul(a, b, o); }},
      {"lhs transposed in place",
       [&](DotOptions o) {
         return dot_general(at, b, {{1}, {1}}, {{0}, {0}}, o);
       }},
      {"rhs transposed in place",
       [&](DotOptions o) {
         return dot_general(a, bt, {{2}, {2}}, {{0}, {0}}, o);
       }},
      {"both transposed",
       [&](DotOptions o) {
         return dot_general(at, bt, {{1}, {2}}, {{0}, {0}}, o);
       }},
      {"batch axis last (copied into order)",
       [&](DotOptions o) {
         const Array al = transpose(a, {1, 2, 0}), bl = transpose(b, {1, 0, 2});  // [m,k,batch], [k,batch,n]
         return dot_general(al, bl, {{1}, {0}}, {{2}, {1}}, o);
       }},
      {"one product",
       [&](DotOptions o) {
         return matmul(reshape(slice(a, {0, 0, 0}, {1, 48, 64}), {48, 64}),
                       reshape(slice(b, {0, 0, 0}, {1, 64, 40}), {64, 40}), o);
       }},
  };
  for (const auto& [name, product] : cases) {
    for (bool f32_out : {false, true}) {
      INFO(name << (f32_out ? ", preferred f32" : ", bf16 result"));
      const DotOptions o = f32_out ? DotOptions{.preferred_element_type = DType::f32} : DotOptions{};
      const Array native = product(o), wide = widened([&] { return product(o); });
      REQUIRE(native.dtype() == (f32_out ? DType::f32 : DType::bf16));
      const std::vector<double> x = astype(native, DType::f64).to_vector<double>();
      const std::vector<double> y = astype(wide, DType::f64).to_vector<double>();
      // An f64 reference of the exact operand values. The f32 sums of 64 products of normal
      // values stay within 1e-5 (|r| + 8) of it (64 * 2^-24 of the sum of |products|, which is
      // below 8 + |r| here); a bf16 result is rounded once more (2^-8 relative, one step), so
      // the two paths may differ by a bf16 step.
      const std::vector<double> r = product(DotOptions{.preferred_element_type = DType::f64}).to_vector<double>();
      REQUIRE(x.size() == r.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const double bound = f32_out ? 1e-5 * (std::fabs(r[i]) + 8.0) : std::ldexp(std::fabs(r[i]), -7) + 1e-5 * 8.0;
        CHECK(std::fabs(x[i] - r[i]) <= bound);
        CHECK(std::fabs(x[i] - y[i]) <= bound);
      }
      // Under jit too (the cpu backend runs the same kernel).
      const Array jitted = jit([&](const Array&) { return product(o); })(scalar(0.0f));
      CHECK(astype(jitted, DType::f64).to_vector<double>() == x);
    }
  }
}

TEST_CASE("bf16 GEMM: build_info names the path", "[dtypes][bf16_gemm]") {
  const std::string info = build_info();
  CHECK(info.find("bf16 GEMM: " + interpreter::bf16_gemm_description()) != std::string::npos);
  if (interpreter::bf16_gemm_native()) {
    CHECK(interpreter::bf16_gemm_description().find("oneDNN") != std::string::npos);
  } else {
    CHECK(interpreter::bf16_gemm_description().find("widened to f32") != std::string::npos);
  }
  const test::ScopedEnv f32("GRAFT_BF16_GEMM", "f32");
  CHECK_FALSE(interpreter::bf16_gemm_native());
  CHECK(interpreter::bf16_gemm_description().find("widened to f32") != std::string::npos);
}
