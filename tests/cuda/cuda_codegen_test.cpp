// The CUDA backend without a GPU: generated kernels for every kernel shape
// compile with NVRTC for sm_75, sm_80 and sm_90 with no register spills in
// elementwise kernels (ptxas -v).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "codegen/cuda/nvrtc.h"
#include "graft/errors.h"
#include "support/shell.h"
#include <cstring>

#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/literal.h"

namespace graft::test {
namespace {

struct CudaBody {
  std::string name;  // a C identifier: the kernel's symbol
  ir::GraphPtr body;
};

using ir::Op;
using ir::ValueId;

ir::Attrs bcast(Shape shape, ir::Ints dims) {
  return ir::Attrs{{"shape", ir::Ints(shape.begin(), shape.end())}, {"broadcast_dimensions", std::move(dims)}};
}
ir::Attrs axes(ir::Ints a) { return ir::Attrs{{"axes", std::move(a)}}; }

ValueId constant(ir::GraphBuilder& b, DType dt, double v) {
  ir::Literal lit{ir::ValueType{dt, {}}, std::vector<uint8_t>(ir::dtype_size(dt))};
  auto put = [&](auto x) { std::memcpy(lit.bytes.data(), &x, sizeof x); };
  switch (dt) {
    case DType::f32: put(static_cast<float>(v)); break;
    case DType::f64: put(v); break;
    case DType::i32: put(static_cast<int32_t>(v)); break;
    case DType::i64: put(static_cast<int64_t>(v)); break;
    case DType::u32: put(static_cast<uint32_t>(v)); break;
    case DType::bool_: put(static_cast<uint8_t>(v != 0)); break;
  }
  return b.add1(Op::constant, {}, ir::Attrs{{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
}

const std::vector<Op> kFloatUnary = {Op::neg,  Op::abs,   Op::sign,  Op::floor, Op::ceil,  Op::round,    Op::exp,
                                     Op::log,  Op::log1p, Op::expm1, Op::sqrt,  Op::rsqrt, Op::sin,      Op::cos,
                                     Op::tan,  Op::asin,  Op::acos,  Op::atan,  Op::sinh,  Op::cosh,     Op::tanh,
                                     Op::logistic, Op::erf, Op::square, Op::reciprocal, Op::is_finite,
                                     Op::stop_gradient, Op::copy};
const std::vector<Op> kFloatBinary = {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::pow, Op::max, Op::min,
                                      Op::atan2, Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge};
const std::vector<Op> kIntUnary = {Op::neg, Op::abs, Op::sign, Op::square, Op::reciprocal, Op::not_, Op::copy};
const std::vector<Op> kIntBinary = {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::max, Op::min, Op::and_,
                                    Op::or_, Op::xor_, Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge};

CudaBody per_op(const std::string& name, DType dt, int64_t n, const std::vector<Op>& unary,
                const std::vector<Op>& binary) {
  ir::GraphBuilder b;
  ValueId x = b.input({dt, {n}}), y = b.input({dt, {n}});
  std::vector<ValueId> outs;
  for (Op op : unary)
    if (!(dt == DType::u32 && (op == Op::neg || op == Op::abs || op == Op::sign))) outs.push_back(b.add1(op, {x}));
  for (Op op : binary) outs.push_back(b.add1(op, {x, y}));
  return {name, b.finish(outs)};
}

CudaBody select_convert() {
  const int64_t n = 2053;
  ir::GraphBuilder b;
  ValueId x = b.input({DType::f32, {n}}), y = b.input({DType::f32, {n}}), z = b.input({DType::f64, {n}}),
          i = b.input({DType::i32, {n}}), u = b.input({DType::u32, {n}}), l = b.input({DType::i64, {n}}),
          p = b.input({DType::bool_, {}}), q = b.input({DType::bool_, {n}});
  std::vector<ValueId> outs = {b.add1(Op::select, {b.add1(Op::lt, {x, y}), x, y}), b.add1(Op::select, {p, x, y}),
                               b.add1(Op::select, {q, z, z}), b.add1(Op::select, {q, i, b.add1(Op::neg, {i})})};
  const std::vector<std::pair<ValueId, DType>> from = {{x, DType::f32}, {z, DType::f64}, {i, DType::i32},
                                                       {u, DType::u32}, {l, DType::i64}, {q, DType::bool_}};
  for (const auto& [v, src] : from)
    for (DType dst : {DType::f32, DType::f64, DType::i32, DType::u32, DType::i64, DType::bool_})
      if (dst != src) outs.push_back(b.add1(Op::convert_element_type, {v}, ir::Attrs{{"new_dtype", dst}}));
  return {"k_select_convert", b.finish(outs)};
}

// x[r, c] * 2 + bias[c] (a broadcast view) then tanh, with a scalar input
// and a constant: uniforms, views and full values in one body.
CudaBody broadcast_chain() {
  ir::GraphBuilder b;
  ValueId x = b.input({DType::f32, {37, 129}}), bias = b.input({DType::f32, {129}}), s = b.input({DType::f32, {}});
  ValueId two = constant(b, DType::f32, 2.0);
  ValueId bb = b.add1(Op::broadcast_in_dim, {bias}, bcast({37, 129}, {1}));
  ValueId ss = b.add1(Op::broadcast_in_dim, {b.add1(Op::mul, {s, two})}, bcast({37, 129}, {}));
  ValueId y = b.add1(Op::tanh, {b.add1(Op::add, {b.add1(Op::mul, {x, ss}), bb})});
  return {"k_broadcast_chain", b.finish({y, b.add1(Op::mul, {s, two})})};
}

// A chain ending in a reduction over `red` of a [a, b, c] input.
CudaBody reduction(const std::string& name, Op op, DType dt, Shape shape, ir::Ints red) {
  ir::GraphBuilder b;
  ValueId x = b.input({dt, shape});
  ValueId y = ir::is_floating(dt) ? b.add1(Op::mul, {b.add1(Op::sin, {x}), x}) : b.add1(Op::mul, {x, x});
  return {name, b.finish({y, b.add1(op, {y}, axes(red))})};
}

std::vector<CudaBody> cuda_test_bodies() {
  std::vector<CudaBody> v = {
      per_op("k_f32_ops", DType::f32, 1031, kFloatUnary, kFloatBinary),
      per_op("k_f64_ops", DType::f64, 517, kFloatUnary, kFloatBinary),
      per_op("k_i32_ops", DType::i32, 1031, kIntUnary, kIntBinary),
      per_op("k_i64_ops", DType::i64, 517, kIntUnary, kIntBinary),
      per_op("k_u32_ops", DType::u32, 517, kIntUnary, kIntBinary),
      select_convert(),
      broadcast_chain(),
      reduction("k_sum_rows", Op::reduce_sum, DType::f32, {33, 1000}, {1}),
      reduction("k_sum_full", Op::reduce_sum, DType::f32, {70000}, {0}),
      reduction("k_sum_columns", Op::reduce_sum, DType::f32, {300, 65}, {0}),
      reduction("k_sum_middle", Op::reduce_sum, DType::f64, {5, 40, 7}, {1}),
      reduction("k_max_rows", Op::reduce_max, DType::f32, {9, 513}, {1}),
      reduction("k_min_outer_inner", Op::reduce_min, DType::f32, {6, 5, 300}, {0, 2}),
      reduction("k_sum_i32", Op::reduce_sum, DType::i32, {17, 999}, {1}),
      reduction("k_max_i64_columns", Op::reduce_max, DType::i64, {40, 33}, {0}),
      reduction("k_sum_empty", Op::reduce_sum, DType::f32, {4, 0}, {1}),
  };
  return v;
}

}  // namespace
}  // namespace graft::test

namespace {

using namespace graft;
namespace cu = graft::codegen::cuda;

bool have_nvrtc() {
  std::string why;
  if (cu::nvrtc_available(&why)) return true;
  WARN("NVRTC is not installed; the CUDA compile checks are skipped: " << why);
  return false;
}

std::string ptxas() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

}  // namespace

TEST_CASE("cuda emitter: every kernel shape compiles with NVRTC for sm_75, sm_80 and sm_90", "[cuda]") {
  if (!have_nvrtc()) return;
  INFO(cu::nvrtc_description());
  for (const test::CudaBody& b : test::cuda_test_bodies()) {
    cu::CudaKernel k = cu::emit_kernel(*b.body, b.name);
    for (int arch : {75, 80, 90}) {
      INFO(b.name << " for sm_" << arch);
      cu::NvrtcOutput out;
      CHECK_NOTHROW(out = cu::nvrtc_compile(k.source, b.name + ".cu", arch));
      CHECK(out.image.size() > 100);
    }
  }
}

TEST_CASE("cuda emitter: elementwise kernels do not spill registers (ptxas -v)", "[cuda]") {
  if (!have_nvrtc()) return;
  const std::string tool = ptxas();
  if (tool.empty()) {
    WARN("ptxas is not installed; the spill check is skipped");
    return;
  }
  const std::filesystem::path dir = std::filesystem::path(GRAFT_TEST_TMPDIR) / "cuda_ptx";
  std::filesystem::create_directories(dir);
  std::vector<std::string> spilling;
  int checked = 0;
  for (const test::CudaBody& b : test::cuda_test_bodies()) {
    cu::CudaKernel k = cu::emit_kernel(*b.body, b.name);
    if (k.shape != cu::KernelShape::elementwise) continue;
    const std::string ptx = cu::nvrtc_compile(k.source, b.name + ".cu", 90, /*as_ptx=*/true).image;
    const std::filesystem::path file = dir / (b.name + ".ptx");
    std::ofstream(file) << ptx;
    int status = 0;
    const std::string out = test::run("'" + tool + "' -arch=sm_90 -v -o /dev/null '" + file.string() + "'", &status);
    INFO(out);
    REQUIRE(status == 0);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)")));
    if (m[1] != "0" || m[2] != "0") spilling.push_back(b.name + ": " + m[0].str());
    ++checked;
  }
  INFO("kernels that spill: " << spilling.size());
  for (const std::string& s : spilling) UNSCOPED_INFO(s);
  CHECK(spilling.empty());
  CHECK(checked >= 6);
}

TEST_CASE("cuda emitter: bodies it cannot take are refused with the reason", "[cuda]") {
  ir::GraphBuilder b;
  ir::ValueId x = b.input({DType::f32, {4, 5}});
  ir::GraphPtr g = b.finish({b.add1(ir::Op::transpose, {x}, ir::Attrs{{"permutation", ir::Ints{1, 0}}})});
  CHECK_THROWS_AS(cu::emit_kernel(*g, "k"), UnsupportedError);
  CHECK_THROWS_WITH(cu::emit_kernel(*g, "k"), Catch::Contains("cuda codegen") && Catch::Contains("transpose"));
  ir::GraphBuilder c;
  ir::GraphPtr h = c.finish({c.add1(ir::Op::exp, {c.input({DType::f32, {3}})})});
  CHECK_THROWS_AS(cu::emit_kernel(*h, "not an identifier"), Error);
}
