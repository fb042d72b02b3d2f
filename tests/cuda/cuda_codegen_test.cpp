// The CUDA backend without a GPU: generated kernels for every kernel shape
// compile with NVRTC for sm_75, sm_80 and sm_90 with no register spills in
// elementwise kernels (ptxas -v); the same kernels run on the emulated driver
// and match the interpreter; the emulator catches a divergent barrier; the
// toolkit's stub libcuda gives the clean "no GPU driver" error.
#include <catch2/catch.hpp>
#include <stdexcept>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/emit.h"
#include "codegen/cuda/fft.h"
#include "codegen/cuda/module_cache.h"
#include "codegen/cuda/movement.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/op_kernels.h"
#include "graft/errors.h"
#include "graft/graft.h"
#include "support/kernel_bodies.h"
#include "support/shell.h"

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

using test::axes;
using test::bcast;
using test::constant;
using test::kFloatBinary;
using test::kFloatUnary;
using test::kIntBinary;
using test::kIntUnary;

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

// f16 and bf16 to and from f32, i32 and each other, their bitcasts, select
// on their bits, and a constant.
CudaBody half_convert() {
  const int64_t n = 1029;
  ir::GraphBuilder b;
  ValueId h = b.input({DType::f16, {n}}), g = b.input({DType::bf16, {n}}), x = b.input({DType::f32, {n}}),
          i = b.input({DType::i32, {n}}), q = b.input({DType::bool_, {n}});
  auto to = [&](ValueId v, DType d) { return b.add1(Op::convert_element_type, {v}, ir::Attrs{{"new_dtype", d}}); };
  ValueId half = b.add1(Op::broadcast_in_dim, {constant(b, DType::f16, 0.5)}, bcast({n}, {}));
  std::vector<ValueId> outs = {to(h, DType::f32),
                               to(h, DType::i32),
                               to(h, DType::bf16),
                               to(g, DType::f32),
                               to(g, DType::i32),
                               to(g, DType::f16),
                               to(x, DType::f16),
                               to(x, DType::bf16),
                               to(i, DType::f16),
                               to(i, DType::bf16),
                               b.add1(Op::select, {q, h, b.add1(Op::neg, {h})}),
                               b.add1(Op::bitcast_convert_type, {g}, ir::Attrs{{"new_dtype", DType::u16}}),
                               b.add1(Op::mul, {b.add1(Op::add, {h, half}), h})};
  return {"k_half_convert", b.finish(outs)};
}

// Complex arithmetic (the ops complex_device.h serves on the GPU), complex(re, im),
// real and imag, conversions between c64, c128 and f32, select, and a c64 constant.
CudaBody complex_ops() {
  const int64_t n = 1033;
  ir::GraphBuilder b;
  ValueId z = b.input({DType::c64, {n}}), w = b.input({DType::c64, {n}}), d = b.input({DType::c128, {n}}),
          x = b.input({DType::f32, {n}}), q = b.input({DType::bool_, {n}});
  auto to = [&](ValueId v, DType t) { return b.add1(Op::convert_element_type, {v}, ir::Attrs{{"new_dtype", t}}); };
  std::vector<ValueId> outs;
  for (Op op : {Op::neg, Op::abs, Op::sign, Op::square, Op::reciprocal, Op::real, Op::imag, Op::conj, Op::copy})
    outs.push_back(b.add1(op, {z}));
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::eq, Op::ne}) outs.push_back(b.add1(op, {z, w}));
  for (Op op : {Op::mul, Op::div, Op::abs, Op::sign})
    outs.push_back(b.add1(op, op == Op::mul || op == Op::div ? std::vector<ValueId>{d, d} : std::vector<ValueId>{d}));
  outs.push_back(b.add1(Op::complex, {x, b.add1(Op::neg, {x})}));
  outs.push_back(to(z, DType::c128));
  outs.push_back(to(d, DType::c64));
  outs.push_back(to(x, DType::c64));
  outs.push_back(to(z, DType::f32));
  outs.push_back(b.add1(Op::bitcast_convert_type, {z}, ir::Attrs{{"new_dtype", DType::i64}}));
  outs.push_back(b.add1(Op::bitcast_convert_type,
                        {b.add1(Op::bitcast_convert_type, {z}, ir::Attrs{{"new_dtype", DType::f64}})},
                        ir::Attrs{{"new_dtype", DType::c64}}));
  outs.push_back(b.add1(Op::select, {q, z, w}));
  ValueId c =
      b.add1(Op::broadcast_in_dim, {b.add1(Op::complex, {constant(b, DType::f32, 0.5), constant(b, DType::f32, -2.0)})},
             bcast({n}, {}));
  outs.push_back(b.add1(Op::add, {b.add1(Op::mul, {z, c}), b.add1(Op::mul, {to(x, DType::c64), w})}));
  // A c64 constant: a kernel parameter of all 8 bytes.
  outs.push_back(b.add1(Op::sub, {z, b.add1(Op::broadcast_in_dim, {constant(b, DType::c64, 1.5)}, bcast({n}, {}))}));
  return {"k_complex_ops", b.finish(outs)};
}

// The complex functions complex_device.h defines for the GPU (compiled with
// NVRTC only: the emulated driver computes them with the host's <complex>,
// and tests/cuda/complex_device_test.cpp checks the device formulas).
CudaBody complex_math(DType dt) {
  ir::GraphBuilder b;
  ValueId z = b.input({dt, {257}});
  std::vector<ValueId> outs;
  for (Op op : {Op::exp, Op::log, Op::log1p, Op::expm1, Op::sqrt, Op::rsqrt, Op::sin, Op::cos, Op::tan, Op::sinh,
                Op::cosh, Op::tanh, Op::logistic})
    outs.push_back(b.add1(op, {z}));
  return {dt == DType::c64 ? "k_complex_math_c64" : "k_complex_math_c128", b.finish(outs)};
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
      // The halves: stored bits, computed in float, reduced in f32.
      per_op("k_f16_ops", DType::f16, 1031, kFloatUnary, kFloatBinary),
      per_op("k_bf16_ops", DType::bf16, 517, kFloatUnary, kFloatBinary),
      half_convert(),
      reduction("k_sum_rows_bf16", Op::reduce_sum, DType::bf16, {33, 1000}, {1}),
      reduction("k_sum_columns_f16", Op::reduce_sum, DType::f16, {300, 65}, {0}),
      reduction("k_max_rows_bf16", Op::reduce_max, DType::bf16, {9, 513}, {1}),
      complex_ops(),
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

namespace {

// `source` compiles with NVRTC for each of `archs`. Through the disk cache,
// keyed by the source, NVRTC's version and the options: the sanitizer pass,
// which shares the release pass's cache, compiles nothing again.
void check_compiles_for_every_arch(const std::string& source, const std::string& name,
                                   std::initializer_list<int> archs = {75, 80, 90}) {
  for (int arch : archs) {
    INFO(name << " for sm_" << arch);
    std::string image;
    CHECK_NOTHROW(image = cu::cached_module_image(source, name, arch, /*as_ptx=*/false));
    CHECK(image.size() > 100);
  }
}

}  // namespace

TEST_CASE("cuda emitter: every kernel shape compiles with NVRTC for sm_75, sm_80 and sm_90", "[cuda]") {
  if (!have_nvrtc()) return;
  INFO(cu::nvrtc_description());
  std::vector<test::CudaBody> bodies = test::cuda_test_bodies();
  bodies.push_back(test::complex_math(DType::c64));
  bodies.push_back(test::complex_math(DType::c128));
  for (const test::CudaBody& b : bodies) {
    check_compiles_for_every_arch(cu::emit_kernel(*b.body, b.name).source, b.name);
    // Sizes as parameters too (a shape-polymorphic program's instances), for one architecture: the
    // parameter block is all that differs.
    const cu::CudaKernel k = cu::emit_kernel(*b.body, b.name, cu::Sizes::parameters);
    if (!k.sizes.empty()) check_compiles_for_every_arch(k.source, b.name, {90});
  }
}

TEST_CASE("cuda movement kernels compile with NVRTC for sm_75, sm_80 and sm_90", "[cuda]") {
  if (!have_nvrtc()) return;
  for (size_t bytes : {1, 2, 4, 8, 16}) {
    const cu::CudaKernel& k = cu::movement_kernel(bytes, 1000);
    CHECK(k.source.find(k.symbol + "(const " + k.symbol + "_params p)") != std::string::npos);
    check_compiles_for_every_arch(k.source, k.symbol);
  }
}

namespace {

// Every op kernel node of f traced at a 3 x 4 x of dtype dt and indices: made, and compiled for every
// architecture. Returns how many.
template <class F>
int compile_op_kernels(F f, DType dt) {
  const Array x = astype(reshape(arange(0, 12, 1), {3, 4}), dt);
  const Array i = array(std::vector<int32_t>{2, 0, -1, 7}, {4});
  const Graph g = make_graph(f)(x, i);
  int kernels = 0;
  for (const ir::Node& n : g.ir().nodes()) {
    if (!cu::has_op_kernel(n.op)) continue;
    cu::OpKernelRequest r{n.op, {}, {}, n.attrs};
    for (ir::ValueId v : n.inputs) r.inputs.push_back(&g.ir().type(v));
    for (ir::ValueId v : n.outputs) r.outputs.push_back(&g.ir().type(v));
    std::string why;
    const std::optional<cu::CudaKernel> k = cu::op_kernel(r, &why);
    INFO(ir::op_name(n.op) << " of " << dtype_name(dt) << ": " << why);
    REQUIRE(k);
    check_compiles_for_every_arch(k->source, k->symbol);
    ++kernels;
  }
  return kernels;
}

}  // namespace

TEST_CASE("cuda op kernels (indexing, sort, scans, arg and bitwise reductions, iota, random bits) compile with NVRTC",
          "[cuda]") {
  if (!have_nvrtc()) return;
  // Every op kernel a traced function of every dtype makes, vmapped too
  // (gather and scatter_add with batch dimensions).
  auto f = [](const Array& x, const Array& i) {
    const Array k = reshape(tile(i, {3}), {3, 4});
    std::vector<Array> out = {take(x, i, 1), scatter_add(x, i, take(x, i, 0), 0), sort(x, 0), argsort(x, 1),
                              cumsum(x, 1), cumprod(x, 0, true), cummax(x, 1), cummin(x, 0), argmax(x, 1), argmin(x, 0),
                              dynamic_slice(x, {i[0], i[1]}, {2, 2}),
                              dynamic_update_slice(x, slice(x, {0, 0}, {1, 2}), {i[2], i[3]}),
                              vmap([](const Array& r, const Array& j) { return take(r, j, 0); })(x, k)};
    if (x.dtype() != DType::bool_) out.push_back(prod(x, {1}));
    if (x.dtype() != f32 && x.dtype() != f64) out.push_back(all(x != 0, {0}));
    out.push_back(any(x > 1, {1}));
    out.push_back(random::bits(random::key(3), {3, 5}));
    return out;
  };
  int kernels = 0;
  for (DType dt : {f32, i64, u32})  // float, signed and unsigned steps (f64 and i32 differ only in names)
    kernels += compile_op_kernels(f, dt);
  CHECK(kernels >= 3 * 18);
  // Complex elements in the kernels that only move them (the others run on the host).
  auto moves = [](const Array& x, const Array& i) {
    const Array k = reshape(tile(i, {3}), {3, 4});
    return std::vector<Array>{take(x, i, 1), dynamic_slice(x, {i[0], i[1]}, {2, 2}),
                              dynamic_update_slice(x, slice(x, {0, 0}, {1, 2}), {i[2], i[3]}),
                              vmap([](const Array& r, const Array& j) { return take(r, j, 0); })(x, k)};
  };
  int complex_kernels = 0;
  for (DType dt : {c64, c128}) complex_kernels += compile_op_kernels(moves, dt);
  CHECK(complex_kernels >= 2 * 4);
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
    const std::string ptx = cu::cached_module_image(k.source, b.name, 90, /*as_ptx=*/true);
    const std::filesystem::path file = dir / (b.name + ".ptx");
    std::ofstream(file) << ptx;
    int status = 0;
    const std::string out = test::run("'" + tool + "' -arch=sm_90 -v -o /dev/null '" + file.string() + "'", &status);
    INFO(out);
    REQUIRE(status == 0);
    // Every function of the module: the kernel and the special functions it
    // calls out of line (special_functions.h's GCG_FN_OUTLINE).
    const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
    int functions = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), spills); it != std::sregex_iterator();
         ++it, ++functions)
      if ((*it)[1] != "0" || (*it)[2] != "0") spilling.push_back(b.name + ": " + it->str());
    CHECK(functions >= 1);
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
  // The inverse functions of complex values and complex sums run on the host.
  for (ir::Op op : {ir::Op::asinh, ir::Op::acos, ir::Op::atan}) {
    ir::GraphBuilder d;
    ir::GraphPtr inv = d.finish({d.add1(op, {d.input({DType::c64, {3}})})});
    CHECK_THROWS_WITH(cu::emit_kernel(*inv, "k"), Catch::Contains(std::string(ir::op_name(op)) + " of c64") &&
                                                      Catch::Contains("the host computes it"));
  }
  ir::GraphBuilder e;
  ir::GraphPtr sum = e.finish({e.add1(ir::Op::reduce_sum, {e.input({DType::c128, {3, 4}})}, test::axes({1}))});
  CHECK_THROWS_WITH(cu::emit_kernel(*sum, "k"), Catch::Contains("a reduction of complex values"));
}

namespace {

uint64_t next(uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 11;
}

// Inputs with every dtype's awkward values mixed in (zeros, infinities, NaN,
// integer extremes, -1 for division).
Array test_input(const ir::ValueType& t, uint64_t salt) {
  const int64_t n = t.num_elements();
  uint64_t s = salt * 7919 + 13;
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * ir::dtype_size(t.dtype));
  for (int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(next(s) % 1000000) / 1000000.0;
    const bool special = i % 37 == 5;
    const int64_t k = i / 37 % 6;
    auto put = [&](auto v) { std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v); };
    switch (t.dtype) {
      case DType::f32: {
        const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f};
        put(special ? sp[k] : static_cast<float>(-3 + 6 * u));
        break;
      }
      case DType::f64: {
        const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e300};
        put(special ? sp[k] : -3 + 6 * u);
        break;
      }
      case DType::i32: {
        const int32_t sp[] = {0, -1, 1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 7};
        put(special ? sp[k] : static_cast<int32_t>(-1000 + 2000 * u));
        break;
      }
      case DType::i64: {
        const int64_t sp[] = {0, -1, 1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 7};
        put(special ? sp[k] : static_cast<int64_t>(-1000 + 2000 * u));
        break;
      }
      case DType::u32: {
        const uint32_t sp[] = {0, 1, 2, std::numeric_limits<uint32_t>::max(), 1u << 31, 7};
        put(special ? sp[k] : static_cast<uint32_t>(2000 * u));
        break;
      }
      case DType::bool_: put(static_cast<uint8_t>(u < 0.5)); break;
      case DType::f16:
      case DType::bf16: {  // every 7th element random bits: subnormals, NaN payloads, the largest values
        const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f};
        const float f = special ? sp[k] : static_cast<float>(-3 + 6 * u);
        uint16_t bits = t.dtype == DType::f16 ? float16(f).bits : bfloat16(f).bits;
        if (i % 7 == 2) bits = static_cast<uint16_t>(next(s));
        put(bits);
        break;
      }
      case DType::c64:
      case DType::c128: {  // a special value in one part or the other
        const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30};
        const double other = -3 + 6 * static_cast<double>(next(s) % 1000000) / 1000000.0;
        const double re = special && k % 2 ? sp[k] : -3 + 6 * u, im = special && k % 2 == 0 ? sp[k] : other;
        if (t.dtype == DType::c64)
          put(std::complex<float>(static_cast<float>(re), static_cast<float>(im)));
        else
          put(std::complex<double>(re, im));
        break;
      }
      default: throw std::logic_error("no case for this dtype here");
    }
  }
  auto impl = detail::allocate_concrete(t);
  if (!bytes.empty()) std::memcpy(impl->buffer->data(), bytes.data(), bytes.size());
  return Array(impl);
}

double element(DType dt, const void* p, int64_t i) {
  switch (dt) {
    case DType::bool_: return static_cast<const bool*>(p)[i];
    case DType::i32: return static_cast<const int32_t*>(p)[i];
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::u32: return static_cast<const uint32_t*>(p)[i];
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::u16: return static_cast<const uint16_t*>(p)[i];
    case DType::f16: return float16::from_bits(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16: return bfloat16::from_bits(static_cast<const uint16_t*>(p)[i]);
    default: throw std::logic_error("no case for this dtype here");
  }
  return 0;
}

// Runs a body's kernel on a driver: inputs copied in, outputs copied back.
std::vector<std::vector<uint8_t>> run_on(cu::CudaDriver& drv, const cu::CudaKernel& k, const ir::Graph& body,
                                         const std::vector<Array>& inputs) {
  std::vector<void*> in_dev, out_dev;
  std::vector<const void*> in_ptrs;
  for (const Array& a : inputs) {
    const size_t bytes = static_cast<size_t>(a.nbytes());
    void* d = drv.mem_alloc(0, bytes);
    REQUIRE(d != nullptr);
    drv.copy_to_device(0, d, a.unsafe_buffer_pointer(), bytes);
    in_dev.push_back(d);
    in_ptrs.push_back(d);
  }
  std::vector<size_t> out_bytes;
  for (ir::ValueId id : body.outputs()) {
    const ir::ValueType& t = body.type(id);
    out_bytes.push_back(static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
    void* d = drv.mem_alloc(0, out_bytes.back());
    REQUIRE(d != nullptr);
    std::vector<uint8_t> poison(out_bytes.back(), 0xA5);  // an unwritten element shows
    drv.copy_to_device(0, d, poison.data(), poison.size());
    out_dev.push_back(d);
  }
  drv.launch(0, k, cu::kernel_params(k, in_ptrs, out_dev));
  drv.synchronize(0);
  std::vector<std::vector<uint8_t>> outs;
  for (size_t o = 0; o < out_dev.size(); ++o) {
    outs.emplace_back(out_bytes[o]);
    drv.copy_to_host(0, outs.back().data(), out_dev[o], out_bytes[o]);
  }
  for (void* d : in_dev) drv.mem_free(0, d);
  for (void* d : out_dev) drv.mem_free(0, d);
  return outs;
}

}  // namespace

namespace {

// Every test body's kernel, with its sizes as literals and as parameters.
void check_every_shape(cu::CudaDriver* drv) {
  for (const test::CudaBody& b : test::cuda_test_bodies())
    for (cu::Sizes sizes : {cu::Sizes::literals, cu::Sizes::parameters}) {
      INFO(b.name << (sizes == cu::Sizes::parameters ? ", sizes as parameters" : ""));
      const ir::Graph& body = *b.body;
      std::vector<Array> inputs;
      for (size_t j = 0; j < body.inputs().size(); ++j)
        inputs.push_back(test_input(body.type(body.inputs()[j]), j + 1));
      std::vector<Array> want = detail::call_graph(body, inputs);
      const cu::CudaKernel k = cu::emit_kernel(body, b.name, sizes);
      if (sizes == cu::Sizes::parameters)
        CHECK((k.source.find("int64_t z0;") != std::string::npos) == !k.sizes.empty());
      std::vector<std::vector<uint8_t>> got = run_on(*drv, k, body, inputs);
      REQUIRE(got.size() == want.size());
      const bool reduces = k.shape != cu::KernelShape::elementwise;
      for (size_t o = 0; o < got.size(); ++o) {
        // A complex output compares as its parts.
        const DType dt = ir::is_complex(want[o].dtype()) ? ir::real_dtype(want[o].dtype()) : want[o].dtype();
        const int64_t count = want[o].size() * (ir::is_complex(want[o].dtype()) ? 2 : 1);
        const bool last = o + 1 == got.size();
        // Floats: the host libm stands in for CUDA's math library (both within
        // a few ULP of the exact result), and a row or full sum adds in a tree.
        double scale = 0;
        if (reduces && last)
          for (int64_t i = 0; i < want[o - 1].size(); ++i) {
            const double v = element(want[o - 1].dtype(), want[o - 1].unsafe_buffer_pointer(), i);
            if (std::isfinite(v)) scale += std::fabs(v);
          }
        // The halves: one unit in their last place (2^-11, 2^-8), a float result rounded either way.
        const double rtol = dt == DType::f16 ? 1e-3 : dt == DType::bf16 ? 8e-3 : dt == DType::f32 ? 2e-6 : 1e-14;
        int64_t bad = 0;
        for (int64_t i = 0; i < count; ++i) {
          const double w = element(dt, want[o].unsafe_buffer_pointer(), i), g = element(dt, got[o].data(), i);
          bool ok;
          if (std::isnan(w) || std::isnan(g))
            ok = std::isnan(w) && std::isnan(g);
          else if (!ir::is_floating(dt) || std::isinf(w))
            ok = w == g;
          else
            ok = std::fabs(w - g) <=
                 rtol * std::fabs(w) + (reduces && last ? 1e-6 * scale : 0) + (dt == DType::f16 ? 6e-8 : 0);
          if (!ok && bad++ < 3)
            UNSCOPED_INFO("output " << o << "[" << i << "]: interpreter " << w << ", emulated " << g);
        }
        CHECK(bad == 0);
      }
    }
}

}  // namespace

TEST_CASE("cuda emulated driver: every kernel shape matches the interpreter", "[cuda]") {
  std::unique_ptr<cu::CudaDriver> drv = cu::make_emulated_driver();
  CHECK(drv->device_info(0).emulated);
  CHECK_THAT(drv->description(), Catch::Contains("emulated"));
  check_every_shape(drv.get());
}

// On a machine with a GPU (scripts/gpu_check.sh), or with GRAFT_CUDA_DRIVER=emulated.
TEST_CASE("cuda driver of this process: every kernel shape matches the interpreter", "[cuda]") {
  std::string why;
  if (!cu::cuda_available(&why)) {
    WARN("no CUDA device here, so only the emulated driver ran the kernels: " << why);
    return;
  }
  cu::CudaDriver& drv = cu::cuda_driver();
  WARN("running on " << drv.description() << ", device 0: " << drv.device_info(0).name);
  check_every_shape(&drv);
}

TEST_CASE("cuda emulated driver: integer, select and conversion kernels are bit-exact", "[cuda]") {
  std::unique_ptr<cu::CudaDriver> drv = cu::make_emulated_driver();
  for (const test::CudaBody& b : test::cuda_test_bodies()) {
    if (b.name != "k_i32_ops" && b.name != "k_i64_ops" && b.name != "k_u32_ops" && b.name != "k_select_convert" &&
        b.name != "k_sum_i32" && b.name != "k_max_i64_columns" && b.name != "k_half_convert")
      continue;
    INFO(b.name);
    const ir::Graph& body = *b.body;
    std::vector<Array> inputs;
    for (size_t j = 0; j < body.inputs().size(); ++j) inputs.push_back(test_input(body.type(body.inputs()[j]), j + 1));
    std::vector<Array> want = detail::call_graph(body, inputs);
    std::vector<std::vector<uint8_t>> got = run_on(*drv, cu::emit_kernel(body, b.name), body, inputs);
    for (size_t o = 0; o < got.size(); ++o) {
      INFO("output " << o);
      CHECK(std::memcmp(got[o].data(), want[o].unsafe_buffer_pointer(), got[o].size()) == 0);
    }
  }
}

TEST_CASE("cuda emulated driver: a barrier some threads skip fails the launch", "[cuda]") {
  std::unique_ptr<cu::CudaDriver> drv = cu::make_emulated_driver();
  cu::CudaKernel k;
  k.symbol = "k_divergent";
  k.shape = cu::KernelShape::elementwise;
  k.work = 256;
  k.source = R"(
struct k_divergent_params { float* out0; int64_t n; };
extern "C" __global__ void k_divergent(const k_divergent_params p) {
  if (threadIdx.x % 2 == 1) return;
  __syncthreads();
  p.out0[threadIdx.x] = 1.0f;
}
#ifdef GCG_EMULATED
GCG_EXPORT void k_divergent_emulated(const void* p) { k_divergent(*static_cast<const k_divergent_params*>(p)); }
#endif
)";
  void* out = drv->mem_alloc(0, 256 * sizeof(float));
  std::vector<uint64_t> params = {reinterpret_cast<uint64_t>(out), 256};
  CHECK_THROWS_WITH(drv->launch(0, k, params), Catch::Contains("k_divergent") &&
                                                     Catch::Contains("__syncthreads() reached by 128 of 256 threads"));
  drv->mem_free(0, out);
}

TEST_CASE("cuda driver: the toolkit's stub libcuda gives the no-GPU error", "[cuda]") {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) {
    WARN("no CUDA toolkit stub at " << stub << "; skipped");
    return;
  }
  CHECK_THROWS_AS(cu::load_driver_library(stub), UnsupportedError);
  CHECK_THROWS_WITH(cu::load_driver_library(stub), Catch::Contains("stub library") &&
                                                       Catch::Contains("CUDA_ERROR_STUB_LIBRARY") &&
                                                       Catch::Contains("GRAFT_CUDA_DRIVER=emulated"));
  CHECK_THROWS_WITH(cu::load_driver_library("/nonexistent/libcuda.so.1"),
                    Catch::Contains("no CUDA driver") && Catch::Contains("does not load"));
}

TEST_CASE("cuda: build_info names the driver, or why there is none, NVRTC and cuBLAS", "[cuda]") {
  const std::string info = build_info();
  std::string why;
  if (cu::cuda_available(&why)) CHECK_THAT(info, Catch::Contains("CUDA: " + cu::cuda_driver().description()));
  else CHECK_THAT(info, Catch::Contains("CUDA: no device (" + why + ")"));
  // Named by their files, not loaded: NVRTC's so-name carries its major version.
  if (cu::nvrtc_available()) {
    CHECK_THAT(info, Catch::Contains("NVRTC (libnvrtc.so." + std::to_string(cu::nvrtc_version() / 1000)));
    CHECK_THAT(info, Catch::Contains("cuBLAS (libcublas.so.1"));  // the toolkit installs both
  } else {
    CHECK_THAT(info, Catch::Contains("no NVRTC ("));
  }
}

TEST_CASE("cuda: the inverse FFT's scaling kernel compiles with NVRTC", "[cuda]") {
  if (!have_nvrtc()) return;
  // cuFFT's inverse transforms are unscaled; a GPU driver runs this kernel after them.
  for (const char* type : {"ifft", "irfft"})
    for (DType part : {f32, f64}) {
      const bool real_out = std::string(type) == "irfft";
      const ir::ValueType in{ir::complex_dtype(part), {3, real_out ? 5 : 8}}, out{real_out ? part : in.dtype, {3, 8}};
      const ir::Attrs attrs{{"fft_type", std::string(type)}, {"fft_lengths", ir::Ints{8}}};
      std::string why;
      const auto k = cu::fft_kernel(cu::OpKernelRequest{ir::Op::fft, {&in}, {&out}, attrs}, &why);
      INFO(type << " " << dtype_name(part) << ": " << why);
      REQUIRE(k);
      REQUIRE(k->kernels.size() == 1);
      CHECK(k->kernels[0].source.find("0x1p-3") != std::string::npos);  // 1/8
      check_compiles_for_every_arch(k->kernels[0].source, k->kernels[0].symbol);
    }
  const ir::ValueType c{c64, {4, 8}};
  const ir::Attrs forward{{"fft_type", std::string("fft")}, {"fft_lengths", ir::Ints{8}}};
  const auto k = cu::fft_kernel(cu::OpKernelRequest{ir::Op::fft, {&c}, {&c}, forward}, nullptr);
  REQUIRE(k);
  CHECK(k->kernels.empty());  // forward transforms are not scaled
}
