// CUDA devices end to end: devices("cuda"), the BFC allocator over the
// driver's memory, device_put both ways, eager ops, jit(Backend::cuda),
// donation, out-of-memory reports and memory profiles. ctest runs these with
// GRAFT_CUDA_DRIVER=emulated (two emulated devices); scripts/gpu_check.sh
// runs them on a real GPU.
#include <catch2/catch.hpp>
#include <stdexcept>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "api/dispatch.h"
#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/node_kernels.h"
#include "graft/graft.h"
#include "ir/op.h"
#include "runtime/bfc_allocator.h"
#include "runtime/device.h"
#include "support/arrays.h"
#include "support/cuda_devices.h"

using namespace graft;
using Catch::Matchers::Contains;
using graft::test::check_close;
using graft::test::gpus;
using graft::test::randn;
using graft::test::values;

namespace {

int64_t in_use(const Device& d) { return d.memory_stats().bytes_in_use; }

}  // namespace

TEST_CASE("cuda devices: listed, with a preallocated BFC over the driver's memory", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  CHECK(g[0] == Device("cuda", 0));
  CHECK(g[0].kind() == "cuda");
  // Fresh arrays live on a real GPU, as in JAX, not on an emulated one (or
  // where GRAFT_PLATFORMS says otherwise).
  if (!std::getenv("GRAFT_PLATFORMS"))
    CHECK(default_device() == (codegen::cuda::real_gpu_present() ? g[0] : devices("cpu")[0]));
  codegen::cuda::CudaDriver& driver = codegen::cuda::cuda_driver();
  const MemoryStats s = g[0].memory_stats();
  const int64_t total = driver.device_info(0).total_memory;
  // GRAFT_MEM_FRACTION (0.75) of the device's memory, preallocated as on JAX
  // (growing on demand under GRAFT_ALLOCATOR=platform, the sanitizer runs' setting).
  CHECK(s.bytes_limit == static_cast<int64_t>(static_cast<double>(total) * 0.75) / 64 * 64);
  if (runtime::device_settings().allocator == "bfc")
    CHECK(s.bytes_reserved == s.bytes_limit);
  else
    CHECK(s.bytes_reserved < s.bytes_limit);
  CHECK_THAT(build_info(), Contains("cuda"));
}

TEST_CASE("cuda devices: device_put both ways is exact, and memory stats count it", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Array x = arange(0, 1000, 1, f32) * 0.37f - 11.0f;
  const int64_t before = in_use(g[0]);
  {
    Array on_gpu = device_put(x, g[0]);
    CHECK(on_gpu.device() == g[0]);
    CHECK(in_use(g[0]) - before == static_cast<int64_t>(runtime::BfcAllocator::chunk_size(4000)));
    CHECK(on_gpu.to_vector<float>() == x.to_vector<float>());  // to_vector copies back (and waits)
    Array back = device_put(on_gpu, default_device());
    CHECK(back.device() == default_device());
    CHECK(back.to_vector<float>() == x.to_vector<float>());
    CHECK(device_put(on_gpu, g[0]).unsafe_buffer_pointer() == on_gpu.unsafe_buffer_pointer());
    if (g.size() > 1) {  // GPU to GPU goes through the host
      Array other = device_put(on_gpu, g[1]);
      CHECK(other.device() == g[1]);
      CHECK(other.to_vector<float>() == x.to_vector<float>());
    }
  }
  CHECK(in_use(g[0]) == before);
}

TEST_CASE("cuda devices: eager ops on GPU arrays run there and match the CPU", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Array a = randn({64, 48}, 1), b = randn({64, 48}, 2), w = randn({48, 16}, 3);
  const Array ga = device_put(a, g[0]), gb = device_put(b, g[0]), gw = device_put(w, g[0]);
  // Generated kernels: elementwise, a reduction; integer and comparison ops bit-exact.
  const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
  Array sum_ab = ga + gb;
  CHECK(codegen::cuda::run_counts().launches == at_start.launches + 1);
  CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);
  CHECK(sum_ab.device() == g[0]);
  CHECK(sum_ab.to_vector<float>() == (a + b).to_vector<float>());
  CHECK(maximum(ga, gb).to_vector<float>() == maximum(a, b).to_vector<float>());
  CHECK((ga < gb).to_vector<bool>() == (a < b).to_vector<bool>());
  check_close(exp(ga) * 0.5f, exp(a) * 0.5f, 2e-6);
  Array rows = sum(ga, {1});
  CHECK(rows.device() == g[0]);
  check_close(rows, sum(a, {1}), 1e-5);
  CHECK(max(ga).to_vector<float>() == max(a).to_vector<float>());
  // dot_general: one cuBLAS GEMM (the emulated driver serves it on the host).
  const int64_t launched = codegen::cuda::run_counts().launches;
  Array m = matmul(ga, gw);
  CHECK(codegen::cuda::run_counts().launches == launched + 1);
  CHECK(m.device() == g[0]);
  check_close(m, matmul(a, w), 1e-5);
  // A host operand is copied to the GPU operand's device.
  CHECK((ga * b).device() == g[0]);
  CHECK((ga * b).to_vector<float>() == (a * b).to_vector<float>());
  CHECK((a * gb).to_vector<float>() == (a * b).to_vector<float>());
}

TEST_CASE("cuda devices: transpose, rev, slice, pad and concatenate are strided copies on the GPU", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Array base = reshape(arange(0, 30, 1, f32) * 0.75f - 9.0f, {2, 3, 5});
  for (DType dt : {f32, f64, i32, DType::bool_}) {
    INFO("dtype " << dtype_name(dt));
    const Array x = dt == DType::bool_ ? base > 0.0f : astype(base, dt);
    const Array other = dt == DType::bool_ ? reshape(arange(0, 20, 1, f32), {2, 2, 5}) < 7.0f
                                           : astype(reshape(arange(0, 20, 1, f32), {2, 2, 5}), dt);
    const Array gx = device_put(x, g[0]), gother = device_put(other, g[0]);
    const std::vector<std::pair<const char*, std::function<Array(const Array&, const Array&)>>> ops = {
        {"transpose", [](const Array& a, const Array&) { return transpose(a, {2, 0, 1}); }},
        {"rev", [](const Array& a, const Array&) { return flip(a, {0, 2}); }},
        {"slice", [](const Array& a, const Array&) { return slice(a, {0, 1, 1}, {2, 3, 5}, {1, 1, 2}); }},
        {"pad", [](const Array& a, const Array&) { return pad(a, {{1, 2}, {0, 1}, {3, 0}}, 1.0); }},
        {"concatenate", [](const Array& a, const Array& b) { return concatenate({a, b, slice(b, {0, 0, 0}, {2, 0, 5})}, 1); }},
        {"scalar slice of a transpose", [](const Array& a, const Array&) {
           return reshape(slice(transpose(a), {4, 2, 1}, {5, 3, 2}), {});
         }}};
    for (const auto& [name, op] : ops) {
      INFO(name);
      const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
      const Array got = op(gx, gother);
      CHECK(codegen::cuda::run_counts().launches > before.launches);
      CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
      CHECK(got.device() == g[0]);
      const Array want = op(x, other);
      REQUIRE(got.shape() == want.shape());
      if (dt == DType::bool_) CHECK(got.to_vector<bool>() == want.to_vector<bool>());
      else if (dt == i32) CHECK(got.to_vector<int32_t>() == want.to_vector<int32_t>());
      else CHECK(astype(got, f64).to_vector<double>() == astype(want, f64).to_vector<double>());
    }
  }
  // Under jit too: no movement node is left to the host.
  auto f = [](const Array& a) { return transpose(pad(flip(a, {1}), {{0, 1}, {1, 0}, {0, 0}}, 0.0), {1, 2, 0}) * 2.0f; };
  const std::string text = jit(f, JitOptions{.backend = Backend::cuda}).lower(base).compile().as_text();
  CHECK_THAT(text, !Contains("runs on the host"));
  check_close(jit(f, JitOptions{.backend = Backend::cuda})(base), f(base), 0);
}

namespace {

// Bit for bit, except that any NaN equals any NaN: an invalid operation's NaN
// is 0xffc00000 on x86 and 0x7fffffff on an NVIDIA GPU, and neither IEEE 754
// nor XLA fixes a NaN's sign or payload.
template <class T>
void same_float_bits(const Array& got, const Array& want) {
  const std::vector<T> a = got.to_vector<T>(), b = want.to_vector<T>();
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": " << a[i] << " vs " << b[i]);
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    CHECK(std::memcmp(&a[i], &b[i], sizeof(T)) == 0);
  }
}

// Every element of `got` (on a GPU) equals `want` (the CPU's) bit for bit.
void check_same_bits(const Array& got, const Array& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  switch (want.dtype()) {
    case DType::bool_: CHECK(got.to_vector<bool>() == want.to_vector<bool>()); break;
    case DType::i32: CHECK(got.to_vector<int32_t>() == want.to_vector<int32_t>()); break;
    case DType::i64: CHECK(got.to_vector<int64_t>() == want.to_vector<int64_t>()); break;
    case DType::u32: CHECK(got.to_vector<uint32_t>() == want.to_vector<uint32_t>()); break;
    case DType::f32: same_float_bits<float>(got, want); break;
    case DType::f64: same_float_bits<double>(got, want); break;
    case DType::f16:
    case DType::bf16: same_float_bits<float>(astype(got, f32), astype(want, f32)); break;  // widening is exact
    default: throw std::logic_error("no case for this dtype here");
  }
}

}  // namespace

TEST_CASE("cuda devices: indexing, sort, scans, arg and bitwise reductions, iota and random bits are CUDA kernels",
          "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  // Floats with ties (-0 and +0 too), NaNs and infinities; integers with repeats.
  std::vector<float> fv = randn({6, 7}, 11).to_vector<float>();
  fv[3] = fv[10] = std::nanf("");
  fv[5] = -0.0f;
  fv[6] = 0.0f;
  fv[8] = fv[9] = fv[12] = 1.5f;
  fv[20] = std::numeric_limits<float>::infinity();
  const Array xf = array(fv, {6, 7});
  const Array xi = astype(floor(xf * 3.0f), i32);  // NaN -> 0
  const Array xb = xi > 0;
  const Array idx = array(std::vector<int32_t>{4, -1, 0, 9, 2, 2, -30, 6}, {8});
  const Array idx64 = astype(idx, i64);
  const Array upd = randn({8, 7}, 12);
  const Array key = random::key(42);
  using Fn = std::function<Array(const Array&, const Array&, const Array&, const Array&, const Array&)>;
  // (xf, xi, xb, idx, upd)
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"take axis 1", [](auto& f, auto&, auto&, auto& i, auto&) { return take(f, i, 1); }},
      {"take i64 indices",
       [&](auto& f, auto&, auto&, auto&, auto&) { return take(f, device_put(idx64, f.device()), 0); }},
      {"take of ints, 2-d indices",
       [](auto&, auto& n, auto&, auto& i, auto&) {
         return take(n, reshape(i, {2, 4}), 0);
       }},
      {"take of bools", [](auto&, auto&, auto& b, auto& i, auto&) { return take(b, i, 1); }},
      // The halves: moved as bits by the indexing kernels, computed in float by the elementwise ones.
      {"take of bf16", [](auto& f, auto&, auto&, auto& i, auto&) { return take(astype(f, bf16) * 1.5f, i, 1); }},
      {"dynamic_slice of f16",
       [](auto& f, auto&, auto&, auto& i, auto&) {
         return dynamic_slice(astype(f, f16), {reshape(slice(i, {0}, {1}), {}), reshape(slice(i, {3}, {4}), {})},
                              {2, 3});
       }},
      {"f16 sums", [](auto& f, auto&, auto&, auto&, auto&) { return sum(exp(astype(f, f16) * 0.25f), {1}); }},
      {"scatter_add f32", [](auto& f, auto&, auto&, auto& i, auto& u) { return scatter_add(f, i, u, 0); }},
      {"scatter_add i32",
       [](auto&, auto& n, auto&, auto& i, auto& u) { return scatter_add(n, i, astype(u * 4.0f, i32), 0); }},
      {"scatter_add axis 1",
       [](auto& f, auto&, auto&, auto& i, auto& u) {
         return scatter_add(f, slice(i, {0}, {3}), slice(transpose(u), {0, 0}, {6, 3}), 1);
       }},
      {"dynamic_slice",
       [](auto& f, auto&, auto&, auto& i, auto&) {
         return dynamic_slice(f, {reshape(slice(i, {0}, {1}), {}), reshape(slice(i, {3}, {4}), {})}, {2, 3});
       }},
      {"dynamic_slice clamped low",
       [](auto&, auto& n, auto&, auto& i, auto&) {
         return dynamic_slice(n, {reshape(slice(i, {6}, {7}), {}), reshape(slice(i, {1}, {2}), {})}, {4, 7});
       }},
      {"dynamic_update_slice",
       [](auto& f, auto&, auto&, auto& i, auto& u) {
         return dynamic_update_slice(f, slice(u, {0, 0}, {2, 3}), {reshape(slice(i, {3}, {4}), {}), reshape(slice(i, {4}, {5}), {})});
       }},
      {"sort f32 rows", [](auto& f, auto&, auto&, auto&, auto&) { return sort(f, 1); }},
      {"sort f32 columns", [](auto& f, auto&, auto&, auto&, auto&) { return sort(f, 0); }},
      {"sort i32", [](auto&, auto& n, auto&, auto&, auto&) { return sort(n, -1); }},
      {"argsort f32 (two operands, iota)", [](auto& f, auto&, auto&, auto&, auto&) { return argsort(f, 1); }},
      {"argsort i32 columns", [](auto&, auto& n, auto&, auto&, auto&) { return argsort(n, 0); }},
      {"cumsum f32", [](auto& f, auto&, auto&, auto&, auto&) { return cumsum(f, 1); }},
      {"cumsum i32 reverse", [](auto&, auto& n, auto&, auto&, auto&) { return cumsum(n, 0, true); }},
      {"cumprod f32 reverse", [](auto& f, auto&, auto&, auto&, auto&) { return cumprod(f, 1, true); }},
      {"cumprod i32", [](auto&, auto& n, auto&, auto&, auto&) { return cumprod(n * 7 + 3, 1); }},
      {"cummax f32", [](auto& f, auto&, auto&, auto&, auto&) { return cummax(f, 0); }},
      // Signed zeros (f * 0: -0 where f < 0): -0 is below +0 in max, min and their reductions and scans.
      {"maximum of signed zeros", [](auto& f, auto&, auto&, auto&, auto&) { return maximum(f * 0.0f, -(f * 0.0f)); }},
      {"minimum of signed zeros", [](auto& f, auto&, auto&, auto&, auto&) { return minimum(f * 0.0f, -(f * 0.0f)); }},
      {"max and min rows of signed zeros",
       [](auto& f, auto&, auto&, auto&, auto&) {
         return concatenate({max(f * 0.0f, {1}), min(f * 0.0f, {1})});
       }},
      {"top_k of signed zeros", [](auto& f, auto&, auto&, auto&, auto&) { return std::get<1>(top_k(f * 0.0f, 3)); }},
      {"cummax and cummin of signed zeros",
       [](auto& f, auto&, auto&, auto&,
          auto&) { return concatenate({cummax(f * 0.0f, 0), cummin(f * 0.0f, 1, true)}); }},
      {"cummin i32 reverse", [](auto&, auto& n, auto&, auto&, auto&) { return cummin(n, 1, true); }},
      {"argmax f32", [](auto& f, auto&, auto&, auto&, auto&) { return argmax(f, 1); }},
      {"argmin f32 axis 0", [](auto& f, auto&, auto&, auto&, auto&) { return argmin(f, 0); }},
      {"argmax i32", [](auto&, auto& n, auto&, auto&, auto&) { return argmax(n, 0); }},
      {"prod f32", [](auto& f, auto&, auto&, auto&, auto&) { return prod(f, {1}); }},
      {"prod i32 all", [](auto&, auto& n, auto&, auto&, auto&) { return prod(n + 2); }},
      {"all rows", [](auto&, auto&, auto& b, auto&, auto&) { return all(b, {1}); }},
      {"any columns", [](auto&, auto&, auto& b, auto&, auto&) { return any(b, {0}); }},
      {"random bits (odd count)", [&](auto&, auto&, auto&, auto&, auto&) { return random::bits(key, {5, 3}); }},
  };
  for (const auto& [name, op] : ops) {
    INFO(name);
    const Array want = op(xf, xi, xb, idx, upd);
    // random::bits reads its key from the GPU: put it there for that one.
    const Array gf = device_put(xf, g[0]), gi = device_put(xi, g[0]), gb = device_put(xb, g[0]),
                gidx = device_put(idx, g[0]), gu = device_put(upd, g[0]);
    const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
    Array got;
    if (std::string(name).rfind("random", 0) == 0) got = random::bits(device_put(key, g[0]), {5, 3});
    else got = op(gf, gi, gb, gidx, gu);
    CHECK(codegen::cuda::run_counts().launches > before.launches);
    CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
    CHECK(got.device() == g[0]);
    check_same_bits(got, want);
  }
  // Under jit, vmapped (gather with batch dimensions), updated in place and
  // argsorted (iota): no node on the host, the interpreter's bits.
  auto f = [](const Array& x, const Array& i) {
    const Array k = reshape(tile(i, {7}), {8, 7});
    const Array rows = vmap([](const Array& r, const Array& j) { return take(r, j, 0); })(x, k);
    const Array upd = dynamic_update_slice(rows * 1.0f, slice(x, {0, 0}, {2, 2}), {i[2], i[3]});
    return std::make_tuple(upd, argsort(x, 0), cumsum(scatter_add(x, i, x * 2.0f, 0), 1, true));
  };
  const Array x8 = randn({8, 7}, 13);
  auto jf = jit(f, JitOptions{.backend = Backend::cuda});
  const std::string text = jf.lower(x8, idx).compile().as_text();
  CHECK_THAT(text, !Contains("runs on the host"));
  const auto [u1, a1, c1] = jf(x8, idx);
  const auto [u0, a0, c0] = f(x8, idx);
  check_same_bits(u1, u0);
  check_same_bits(a1, a0);
  check_same_bits(c1, c0);
  // An operand that dies at the op is updated in place (no copy before the
  // scatter, no second buffer for the slice update), still bit for bit.
  auto in_place = [](const Array& x, const Array& i) {
    const Array s = scatter_add(x * 2.0f, i, x, 0);
    return dynamic_update_slice(s + 1.0f, slice(x, {0, 0}, {1, 7}), {i[0], i[1]});
  };
  const std::string plan = jit(in_place, JitOptions{.backend = Backend::cuda}).lower(x8, idx).compile().as_text();
  CHECK_THAT(plan, !Contains(" 0 in place"));
  check_same_bits(jit(in_place, JitOptions{.backend = Backend::cuda})(x8, idx), in_place(x8, idx));
}

TEST_CASE("cuda devices: control flow steps from the host, its bodies run on the GPU", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  // cond (bool and integer index), while_loop, scan both ways, fori_loop,
  // checkpoint (remat) and a custom_jvp function, and the gradient of a scan.
  auto f = [](const Array& x, const Array& w) {
    const Array picked = cond(sum(x) > 0.0f, [](const Array& a) { return exp(a) * 0.5f; },
                              [](const Array& a) { return sort(a, 0); }, x);
    const std::vector<std::function<Array(const Array&)>> branches = {
        [](const Array& a) { return a + 1.0f; }, [](const Array& a) { return cumsum(a, 0); },
        [](const Array& a) { return a * a; }};
    const Array switched = switch_(argmax(w, 0), branches, x);
    const Array grown = while_loop([](const Array& c) { return sum(c) < 100.0f; },
                                   [](const Array& c) { return c * 1.5f + 0.5f; }, abs(x));
    auto step = [&w](const Array& c, const Array& r) {
      const Array c2 = tanh(c * w + r);
      return std::make_pair(c2, sum(c2));
    };
    const auto [carry, ys] = scan(step, x, reshape(arange(0, 12, 1, f32), {4, 3}) * 0.1f);
    const auto [back, ys_back] = scan(step, w, reshape(arange(0, 12, 1, f32), {4, 3}) * -0.1f, -1, true);
    const Array looped = fori_loop(0, 3, [](const Array& i, const Array& c) { return c + astype(i, f32); }, x);
    const Array saved = checkpoint([](const Array& a) { return sin(a) * cos(a); })(x);
    return std::make_tuple(picked, switched, grown, carry, ys, back, ys_back, looped, saved);
  };
  auto loss = [&f](const Array& x, const Array& w) { return sum(std::get<3>(f(x, w))) + sum(std::get<8>(f(x, w))); };
  for (float sign : {1.0f, -1.0f}) {
    INFO("sign " << sign);
    const Array x = randn({3}, 21) * sign + 0.1f * sign, w = randn({3}, 22);
    auto jf = jit(f, JitOptions{.backend = Backend::cuda});
    const std::string text = jf.lower(x, w).compile().as_text();
    CHECK_THAT(text, !Contains("runs on the host"));
    const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
    const auto got = jf(x, w);
    CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
    CHECK(codegen::cuda::run_counts().launches > before.launches);
    CHECK(std::get<0>(got).device() == g[0]);
    const auto want = f(x, w);
    check_close(std::get<0>(got), std::get<0>(want), 2e-6);
    check_close(std::get<1>(got), std::get<1>(want), 2e-6);
    check_close(std::get<2>(got), std::get<2>(want), 2e-6);
    check_close(std::get<3>(got), std::get<3>(want), 2e-6);
    check_close(std::get<4>(got), std::get<4>(want), 2e-6);
    check_close(std::get<5>(got), std::get<5>(want), 2e-6);
    check_close(std::get<6>(got), std::get<6>(want), 2e-6);
    check_close(std::get<7>(got), std::get<7>(want), 0);
    check_close(std::get<8>(got), std::get<8>(want), 2e-6);
    // Reverse mode through the scan and the checkpoint, on the GPU.
    auto jg = jit(grad<0, 1>(loss), JitOptions{.backend = Backend::cuda});
    CHECK_THAT(jg.lower(x, w).compile().as_text(), !Contains("runs on the host"));
    const auto [gx, gw] = jg(x, w);
    const auto [wx, ww] = grad<0, 1>(loss)(x, w);
    check_close(gx, wx, 1e-5);
    check_close(gw, ww, 1e-5);
  }
  // Eagerly, on GPU operands: the cond's bodies run there too.
  const Array gx = device_put(randn({5}, 23), g[0]);
  const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
  const Array r = cond(sum(gx) > 100.0f, [](const Array& a) { return a; }, [](const Array& a) { return sort(a * 2.0f, 0); }, gx);
  CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
  CHECK(r.device() == g[0]);
  check_close(r, sort(randn({5}, 23) * 2.0f, 0), 0);
}

TEST_CASE("cuda devices: jit(Backend::cuda) matches the interpreter, gradients included", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  auto loss = [](const Array& w, const Array& x) {
    Array h = tanh(matmul(x, w) * 1.5f + 0.25f);
    return mean(h * h - exp(-h));
  };
  const Array w = randn({32, 8}, 4), x = randn({16, 32}, 5);
  const JitOptions on_cuda{.backend = Backend::cuda};
  const JitOptions on_interp{.backend = Backend::interpreter};
  auto step = [&](const Array& w_, const Array& x_) { return value_and_grad(loss)(w_, x_); };
  auto [v_cuda, g_cuda] = jit(step, on_cuda)(w, x);
  auto [v_ref, g_ref] = jit(step, on_interp)(w, x);
  CHECK(v_cuda.device() == g[0]);
  CHECK(g_cuda.device() == g[0]);
  check_close(v_cuda, v_ref, 1e-5);
  check_close(g_cuda, g_ref, 1e-5);
  // The executable says what runs where: generated kernels, and the host's share with reasons.
  const std::string text = jit(step, on_cuda).lower(w, x).compile().as_text();
  CHECK_THAT(text, Contains("backend: cuda ("));
  CHECK_THAT(text, !Contains("runs on the host: dot_general"));  // cuBLAS runs it
  CHECK_THAT(text, Contains("generated CUDA:"));
  CHECK_THAT(text, Contains("__global__"));
  // Arguments already on the GPU stay there; results are equal to the copied ones' bit for bit.
  auto [v2, g2] = jit(step, on_cuda)(device_put(w, g[0]), device_put(x, g[0]));
  CHECK(v2.to_vector<float>() == v_cuda.to_vector<float>());
  CHECK(g2.to_vector<float>() == g_cuda.to_vector<float>());
  // A GPU array passed to a cpu-side executable is read through a host copy.
  check_close(jit(loss, on_interp)(device_put(w, g[0]), x), v_ref, 1e-6);
}

TEST_CASE("cuda devices: a node the table sends to the host says so in as_text", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  // pmap's codegen column is HOST: its replicas run on the host.
  auto f = [](const Array& x) {
    return pmap([](const Array& v) { return psum(v * 2.0f, "i"); }, PmapOptions{.axis_name = "i"})(x) + 1.0f;
  };
  const Array x = randn({1, 4}, 7);
  const JitOptions on_cuda{.backend = Backend::cuda};
  const std::string text = jit(f, on_cuda).lower(x).compile().as_text();
  CHECK_THAT(text, Contains("1 on the host)"));
  CHECK_THAT(text, Contains("runs on the host: pmap (node "));
  CHECK_THAT(text, Contains(std::string(ir::op_info(ir::Op::pmap).codegen.host_reason)));
  check_close(jit(f, on_cuda)(x), jit(f, JitOptions{.backend = Backend::interpreter})(x), 1e-6);
}

TEST_CASE("cuda devices: float sums add in the interpreter's order, bit for bit, on every layout", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  struct Layout {
    Shape shape;
    std::vector<int> axes;
  };
  // Full sums of one and of several pieces per thread, short and long rows,
  // columns, a middle axis (interpreter/kernels/sum_order.h).
  const std::vector<Layout> layouts = {{{70001}, {}},        {{300000}, {0}},  {{37, 300}, {1}}, {{5, 70000}, {1}},
                                       {{1000, 7}, {0}},     {{6, 100, 9}, {1}}, {{40, 13}, {1}}};
  uint64_t seed = 40;
  for (const Layout& L : layouts) {
    INFO("sum over " << L.axes.size() << " axes of a " << L.shape.size() << "-d array of " << L.shape[0]);
    const Array x = randn(L.shape, seed++);
    auto f = [&](const Array& a) { return sum(a * a, L.axes); };
    const Array want = jit(f, JitOptions{.backend = Backend::interpreter})(x);
    const Array got = jit(f, JitOptions{.backend = Backend::cuda})(x);
    CHECK(got.device() == g[0]);
    check_same_bits(got, want);
    const Array x64 = astype(x, f64);
    check_same_bits(jit(f, JitOptions{.backend = Backend::cuda})(x64), jit(f, JitOptions{.backend = Backend::interpreter})(x64));
  }
}

TEST_CASE("cuda devices: donation keeps the device buffer", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  auto update = [](const Array& p, const Array& d) { return p - d * 0.1f; };
  const Array p0 = device_put(randn({1024}, 6), g[0]), d = device_put(randn({1024}, 7), g[0]);
  const std::vector<float> want = (device_put(p0, default_device()) - device_put(d, default_device()) * 0.1f).to_vector<float>();
  auto step = jit(update, JitOptions{.donate_argnums = {0}, .backend = Backend::cuda, .donation_must_apply = true});
  Array p = p0 + 0.0f;  // a buffer of its own to donate
  const void* where = p.unsafe_buffer_pointer();
  const int64_t before = in_use(g[0]);
  Array q = step(p, d);
  CHECK(q.unsafe_buffer_pointer() == where);
  CHECK(in_use(g[0]) == before);
  CHECK_THROWS_AS(p.to_vector<float>(), DonatedArrayError);
  CHECK(q.to_vector<float>() == want);
}

TEST_CASE("cuda devices: out of memory names the device and the line, profiles list GPU buffers", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const int64_t limit = g[0].memory_stats().bytes_limit;
  const Array big = device_put(zeros({limit / 8}, f32), g[0]);  // half the device's limit
  try {
    Array more = device_put(zeros({limit / 4 * 3 / 4}, f32), g[0]);
    FAIL("no OutOfMemoryError");
  } catch (const OutOfMemoryError& e) {
    CHECK_THAT(e.what(), Contains("cuda:0"));
    CHECK_THAT(e.what(), Contains("cuda_devices_test.cpp"));
  }
  const std::string path = (std::filesystem::temp_directory_path() / "graft_cuda_profile.pb.gz").string();
  profiler::save_device_memory_profile(path, g[0]);
  CHECK(std::filesystem::file_size(path) > 20);
  std::filesystem::remove(path);
  CHECK(big.device() == g[0]);
}

TEST_CASE("cuda devices: every primitive runs on the cuda backend, alone or on the host with a reason", "[cuda_devices]") {
  // The op table decides (ops.def's codegen column): every primitive that
  // computes has a CUDA kernel (emitted, cuBLAS, cuSOLVER, a strided copy or
  // an op kernel, cuFFT), control flow and graph calls run their bodies on the
  // device; only collectives, pmap, custom_lin (an error to run), lu's
  // pivots made a permutation (a short sequential loop), eig (LAPACK's geev,
  // as JAX's on GPUs) and host callbacks (C++ functions) take the host, each
  // with a reason.
  int generated = 0, hosted = 0;
  for (int i = 0; i < ir::kNumOps; ++i) {
    const auto op = static_cast<ir::Op>(i);
    const std::string why = codegen::cuda::host_reason(op);
    INFO(ir::op_name(op) << ": " << why);
    (why.empty() ? generated : hosted) += 1;
    CHECK(why.empty() == (ir::codegen_kind(op) != ir::CodegenKind::host));
    const ir::OpFamily family = ir::op_info(op).family;
    const bool host_family = op == ir::Op::custom_lin || op == ir::Op::lu_pivots_to_permutation || op == ir::Op::eig ||
                             family == ir::OpFamily::collective || family == ir::OpFamily::pmap ||
                             family == ir::OpFamily::callback;
    CHECK(why.empty() == !host_family);
  }
  CHECK(generated == 137);
  CHECK(hosted == 14);
}

TEST_CASE("cuda devices: dot_general layouts as one cuBLAS GEMM, or on the host, equal the CPU", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  struct Layout {
    const char* spec;
    bool one_gemm;
  };
  // Every storage order of both operands, batch axes, several contracting
  // axes; layouts one GEMM cannot read in place run on the host.
  const Layout layouts[] = {
      {"mk,kn->mn", true},       {"km,kn->mn", true},        {"mk,nk->mn", true},   {"km,nk->mn", true},
      {"bmk,bkn->bmn", true},    {"bkm,bnk->bmn", true},     {"abmk,abkn->abmn", true},
      {"mkl,kln->mn", true},     {"klm,nkl->mn", true},      {"mk,k->m", true},     {"k,kn->n", true},
      {"mbk,bkn->bmn", false},   {"mkn,kn->m", true},       {"mk,kn->nm", true},   {"m,n->mn", false}};
  int64_t sizes[128] = {};
  sizes['m'] = 5, sizes['k'] = 7, sizes['n'] = 3, sizes['b'] = 2, sizes['a'] = 3, sizes['l'] = 2;
  uint64_t seed = 10;
  for (const DType dt : {f32, f64}) {
    for (const Layout& l : layouts) {
      INFO(l.spec << " " << dtype_name(dt));
      const std::string spec = l.spec;
      const std::string lhs = spec.substr(0, spec.find(',')), rhs = spec.substr(spec.find(',') + 1, spec.find('-') - spec.find(',') - 1);
      Shape ls, rs;
      for (char c : lhs) ls.push_back(sizes[static_cast<int>(c)]);
      for (char c : rhs) rs.push_back(sizes[static_cast<int>(c)]);
      const Array a = astype(randn(ls, ++seed), dt), b = astype(randn(rs, ++seed), dt);
      const Array want = einsum(spec, {a, b});
      const int64_t launched = codegen::cuda::run_counts().launches;
      const int64_t hosted = codegen::cuda::run_counts().host_runs;
      const Array got = einsum(spec, {device_put(a, g[0]), device_put(b, g[0])});
      CHECK(got.device() == g[0]);
      check_close(got, want, dt == f32 ? 1e-5 : 1e-13);
      // The GEMM and whatever layout ops einsum added around it.
      if (l.one_gemm) CHECK(codegen::cuda::run_counts().launches > launched);
      if (!l.one_gemm) CHECK(codegen::cuda::run_counts().host_runs > hosted);
    }
  }
}

TEST_CASE("cuda devices: pmap over the GPUs, collectives through the thread communicator", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.size() < 2) {
    WARN("pmap over GPUs needs two CUDA devices (GRAFT_CUDA_EMULATED_DEVICES=2)");
    return;
  }
  const std::vector<Device> two{g[0], g[1]};
  auto step = [](const Array& x) {
    Array y = tanh(x) * 2.0f + 1.0f;
    return y - psum(y, "i") / 2.0f;  // each replica minus the mean of both
  };
  const Array x = randn({2, 300}, 20);
  const Array got = pmap(step, PmapOptions{.axis_name = "i", .devices = two})(x);
  const Array want = vmap(step, 0, 0, "i")(x);
  check_close(got, want, 2e-6);
  const std::vector<Array> shards = got.addressable_shards();
  REQUIRE(shards.size() == 2);
  CHECK(shards[0].device() == g[0]);
  CHECK(shards[1].device() == g[1]);
  check_close(shards[1], want[1], 2e-6);
  CHECK_THROWS_WITH(pmap(step, PmapOptions{.axis_name = "i", .devices = {g[0], default_device()}})(x),
                    Contains("different kinds"));
}

// Run by the ctest cuda.default_device with GRAFT_PLATFORMS=cuda on the
// emulated driver: what a machine with a GPU does by default (where a real
// GPU makes cuda:0 the default without the variable).
TEST_CASE("cuda default device: fresh arrays, eager ops and jit live on cuda:0", "[cuda_default]") {
  REQUIRE(default_device() == Device("cuda", 0));  // GRAFT_PLATFORMS=cuda, or a real GPU
  for (const Device& d : devices()) CHECK(d.kind() == "cuda");
  const Device cpu("cpu", 0);
  // Fresh arrays of every kind are made on the GPU, with the values asked for.
  const Array a = array({1.5f, -2.0f, 3.25f});
  const Array z = zeros({2, 3});
  const Array r = arange(0, 6, 1);
  const Array k = random::key(7);
  const Array s = scalar(2.5, f64);
  for (const Array* x : {&a, &z, &r, &k, &s}) CHECK(x->device() == default_device());
  CHECK(a.to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.25f});
  CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  CHECK(k.to_vector<uint32_t>() == std::vector<uint32_t>{0, 7});
  CHECK(s.to_vector<double>() == std::vector<double>{2.5});
  const std::string path = "cuda_default_device.npy";
  save_npy(path, reshape(arange(0, 6, 1, f32), {2, 3}));
  const Array loaded = load_npy(path);
  std::filesystem::remove(path);
  CHECK(loaded.device() == default_device());
  CHECK(loaded.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Eager ops run there, and equal the CPU's.
  const Array x = random::normal(random::key(1), {16, 8});
  CHECK(x.device() == default_device());
  const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
  const Array y = sum(tanh(x) * 2.0f, {1});
  CHECK(codegen::cuda::run_counts().launches > before.launches);
  CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
  CHECK(y.device() == default_device());
  const Array xc = device_put(x, cpu);
  check_close(y, sum(tanh(xc) * 2.0f, {1}), 2e-6);
  // jit picks the default device's backend.
  auto f = [](const Array& v) { return softmax(v * 3.0f); };
  const std::string text = jit(f).lower(x).compile().as_text();
  CHECK_THAT(text, Contains("backend: cuda"));
  check_close(jit(f)(x), f(xc), 2e-6);
  // pmap over CPU devices still runs them on the CPU.
  const Array pm = pmap([](const Array& v) { return psum(v * 2.0f, "i"); },
                        PmapOptions{.axis_name = "i", .devices = {cpu}})(reshape(arange(0, 3, 1, f32), {1, 3}));
  CHECK(pm.to_vector<float>() == std::vector<float>{0, 2, 4});
}

TEST_CASE("cuda devices: a fused kernel with two outputs, one in place over an input the other reads",
          "[cuda_devices]") {
  // The memory plan puts the first output (the mask) in place of the
  // product p, which dies in the kernel; the second output reads p. With the
  // inputs declared __restrict__, the compiler could store the mask before
  // reading p (it did on the emulated driver: phi came out equal to the mask).
  const Array a = array<double>({{4.0, 1.0, 0.5}, {1.0, 3.0, 0.2}, {0.5, 0.2, 2.0}});
  auto f = [](const Array& x) {
    const auto loc = std::source_location::current();
    auto index = [&](int64_t d) {
      return detail::bind1(ir::Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints{3, 3}}, {"dimension", d}}, loc);
    };
    const Array rows = index(0), cols = index(1);
    const Array mask = astype(rows > cols, DType::f64), diagonal = astype(rows == cols, DType::f64);
    const Array p = detail::bind1(ir::Op::dot_general, {x, full_like(x, 1.0)},
                                  {{"lhs_contracting", ir::Ints{0}},
                                   {"rhs_contracting", ir::Ints{0}},
                                   {"lhs_batch", ir::Ints{}},
                                   {"rhs_batch", ir::Ints{}}},
                                  loc);             // cuBLAS's output, dying in the fused kernel
    const Array phi = p * (mask + diagonal * 0.5);  // the kernel's outputs: mask and phi
    const Array q = matmul(phi, x);                 // phi goes through cuBLAS
    return q * mask;                                // the mask is read after it
  };
  const Array want = jit(f, JitOptions{.backend = Backend::interpreter})(a);
  auto on_cuda = jit(f, JitOptions{.backend = Backend::cuda});
  INFO(on_cuda.lower(a).compile().as_text().substr(0, 1500));
  CHECK(on_cuda(a).to_vector<double>() == want.to_vector<double>());
}

TEST_CASE("cuda devices: cholesky, eigh and triangular_solve run as cuSOLVER and cuBLAS calls", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  for (DType dt : {f64, f32}) {
    INFO("dtype " << dtype_name(dt));
    const double tol = dt == f64 ? 1e-12 : 2e-4;
    auto close = [tol](const Array& got, const Array& want) {
      const std::vector<double> x = astype(got, f64).to_vector<double>(), y = astype(want, f64).to_vector<double>();
      REQUIRE(x.size() == y.size());
      for (size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x[i] - y[i]) <= tol * (1 + std::fabs(y[i])));
    };
    // A batch of symmetric positive definite matrices, and one that is not.
    const Array x = astype(randn({3, 5, 5}, 21), dt);
    const Array spd = matmul(x, transpose(x, {0, 2, 1})) + eye(5, dt) * 5.0;
    const Array gspd = device_put(spd, g[0]);
    const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
    const Array l = linalg::cholesky(gspd);
    CHECK(l.device() == g[0]);
    close(l, linalg::cholesky(spd));
    const auto [w, v] = linalg::eigh(gspd);
    CHECK(v.device() == g[0]);
    close(w, linalg::eigh(spd).first);
    // Eigenvectors up to sign: v diag(w) v^T is a, and v is orthonormal.
    close(matmul(v * expand_dims(w, 1), transpose(v, {0, 2, 1})), spd);
    const Array b = astype(randn({3, 5, 2}, 22), dt), gb = device_put(b, g[0]);
    for (bool lower : {true, false})
      for (int trans : {0, 1}) {
        const Array tri = lower ? l : transpose(l, {0, 2, 1});
        close(linalg::solve_triangular(tri, gb, lower, trans),
              linalg::solve_triangular(device_put(tri, Device("cpu", 0)), b, lower, trans));
      }
    CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);
    // The right side (x a = b) and a unit diagonal, through the primitive under jit.
    auto right = [](const Array& a, const Array& rhs) {
      return detail::bind1(ir::Op::triangular_solve, {a, rhs},
                           {{"left_side", int64_t{0}},
                            {"lower", int64_t{1}},
                            {"transpose_a", int64_t{0}},
                            {"conjugate_a", int64_t{0}},
                            {"unit_diagonal", int64_t{1}}},
                           std::source_location::current());
    };
    const Array rows = astype(randn({3, 4, 5}, 23), dt);
    close(jit(right, JitOptions{.backend = Backend::cuda})(l, device_put(rows, g[0])),
          right(device_put(l, Device("cpu", 0)), rows));
    // Not positive definite: NaNs in the lower triangle and zeros above, as on the CPU and in JAX.
    const Array bad = device_put(astype(array({{1.0, 2.0}, {2.0, 1.0}}), dt), g[0]);
    const std::vector<double> f = linalg::cholesky(bad).to_vector<double>();
    CHECK(std::isnan(f[0]));
    CHECK(f[1] == 0);
    CHECK(std::isnan(f[2]));
    CHECK(std::isnan(f[3]));
  }
}

TEST_CASE("cuda devices: the FFT runs as one cuFFT call and a scaling kernel", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Device cpu("cpu", 0);
  for (DType dt : {f64, f32}) {
    INFO("dtype " << dtype_name(dt));
    // The emulated driver serves cuFFT with the host's kernel (which scales
    // inverse transforms itself): the device's results are the host's, and
    // nothing falls back to running the node on the host (irfft2's first
    // transform is over a non-trailing axis: transposes of c64 and c128).
    const Array x = astype(randn({3, 4, 16}, 31), dt);
    const Array z = complex(x, astype(randn({3, 4, 16}, 32), dt));  // made on the host: complex() is a host op there
    const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
    const std::vector<std::tuple<const char*, std::function<Array(const Array&)>, Array>> cases = {
        {"rfft", [](const Array& a) { return fft::rfft(a); }, x},
        {"fft2", [](const Array& a) { return fft::fft2(a); }, z},
        {"ifftn", [](const Array& a) { return fft::ifftn(a); }, z},
        {"irfft2 of rfft2",
         [](const Array& a) {
           return fft::irfft2(fft::rfft2(a), {4, 16});
         },
         x}};
    for (const auto& [name, f, in] : cases) {
      INFO(name);
      const Array want = f(in), got = f(device_put(in, g[0]));
      CHECK(got.device() == g[0]);
      CHECK(max(abs(device_put(got, cpu) - want)).item<double>() == 0);
      const Array jitted = jit(f, JitOptions{.backend = Backend::cuda})(device_put(in, g[0]));
      CHECK(max(abs(device_put(jitted, cpu) - want)).item<double>() == 0);
    }
    CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);
  }
}

TEST_CASE("cuda devices: complex arithmetic runs in generated kernels, a spectral step stays on the GPU",
          "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Device cpu("cpu", 0);
  // One explicit step of the heat equation by rfft: the spectrum times a real
  // decay (promoted to complex) and a phase exp(i decay), its conjugate's real
  // part, and complex(re, im).
  auto step = [](const Array& u, const Array& decay) {
    const Array s = fft::rfft(u) * decay * exp(complex(zeros_like(decay), decay));
    return std::make_tuple(fft::irfft(s, 64), real(conj(s) * s), complex(u, -u) / complex(decay[0], u[0]));
  };
  for (DType dt : {f32, f64}) {
    INFO("dtype " << dtype_name(dt));
    const Array u = astype(randn({8, 64}, 41), dt), decay = exp(-0.01 * astype(arange(33), dt));
    const auto want = step(u, decay);
    const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
    auto on_gpu = jit(step, JitOptions{.backend = Backend::cuda});
    const auto got = on_gpu(device_put(u, g[0]), device_put(decay, g[0]));
    CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);  // nothing ran on the host
    CHECK(std::get<0>(got).device() == g[0]);
    const double tol = dt == f32 ? 1e-5 : 1e-13;
    CHECK(max(abs(device_put(std::get<0>(got), cpu) - std::get<0>(want))).item<double>() <= tol);
    CHECK(max(abs(device_put(std::get<1>(got), cpu) - std::get<1>(want))).item<double>() <= tol * 64);
    CHECK(max(abs(device_put(std::get<2>(got), cpu) - std::get<2>(want))).item<double>() <= tol * 8);
    const std::string text = on_gpu.lower(device_put(u, g[0]), device_put(decay, g[0])).compile().as_text();
    CHECK_THAT(text, Contains("0 on the host)"));
  }
  // Gathers and dynamic slices of complex elements move them on the GPU.
  auto moves = [](const Array& z, const Array& i) {
    return std::make_tuple(take(z, i, 1), dynamic_slice(z, {i[0], i[1]}, {2, 2}),
                           dynamic_update_slice(z, slice(z, {0, 0}, {1, 2}) * 2.0f, {i[2], i[3]}));
  };
  const Array z = complex(randn({3, 4}, 51), randn({3, 4}, 52));
  const Array i = array(std::vector<int32_t>{2, 0, 1, 1}, {4});
  const auto want = moves(z, i);
  const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
  const auto got = jit(moves, JitOptions{.backend = Backend::cuda})(device_put(z, g[0]), device_put(i, g[0]));
  CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);
  CHECK(max(abs(device_put(std::get<0>(got), cpu) - std::get<0>(want))).item<double>() == 0);
  CHECK(max(abs(device_put(std::get<1>(got), cpu) - std::get<1>(want))).item<double>() == 0);
  CHECK(max(abs(device_put(std::get<2>(got), cpu) - std::get<2>(want))).item<double>() == 0);
}

TEST_CASE("cuda devices: lu, qr, svd, geqrf and householder_product run as cuSOLVER calls", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Device cpu("cpu", 0);
  for (DType dt : {f64, f32}) {
    INFO("dtype " << dtype_name(dt));
    const double tol = dt == f64 ? 1e-11 : 2e-4;
    auto close = [tol](const Array& got, const Array& want) {
      const std::vector<double> x = astype(got, f64).to_vector<double>(), y = astype(want, f64).to_vector<double>();
      REQUIRE(x.size() == y.size());
      for (size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(x[i] - y[i]) <= tol * (1 + std::fabs(y[i])));
    };
    const codegen::cuda::CudaRunCounts at_start = codegen::cuda::run_counts();
    for (const Shape& shape : {Shape{2, 6, 4}, Shape{2, 4, 6}, Shape{5, 5}}) {
      INFO("shape " << shape.size());
      const Array a = astype(randn(shape, 31), dt), ga = device_put(a, g[0]);
      const int r = static_cast<int>(shape.size());
      std::vector<int> swap_last(static_cast<size_t>(r));
      for (int i = 0; i < r; ++i) swap_last[static_cast<size_t>(i)] = i;
      std::swap(swap_last[static_cast<size_t>(r - 1)], swap_last[static_cast<size_t>(r - 2)]);
      // lu: the same pivots as the CPU's getrf, the same factors.
      const std::vector<Array> lu_g = detail::bind(ir::Op::lu, {ga}, {}, std::source_location::current());
      const std::vector<Array> lu_c = detail::bind(ir::Op::lu, {a}, {}, std::source_location::current());
      CHECK(lu_g[0].device() == g[0]);
      close(lu_g[0], lu_c[0]);
      CHECK(lu_g[1].to_vector<int32_t>() == lu_c[1].to_vector<int32_t>());
      CHECK(lu_g[2].to_vector<int32_t>() == lu_c[2].to_vector<int32_t>());
      // qr, reduced and complete, and its two halves: LAPACK's signs on both.
      for (const char* mode : {"reduced", "complete"}) {
        const auto [q, rr] = linalg::qr(ga, mode);
        const auto [q_c, r_c] = linalg::qr(a, mode);
        close(q, q_c);
        close(rr, r_c);
      }
      const auto [packed, taus] = linalg::geqrf(ga);
      const auto [packed_c, taus_c] = linalg::geqrf(a);
      close(packed, packed_c);
      close(taus, taus_c);
      if (shape[shape.size() - 2] >= shape.back())
        close(linalg::householder_product(packed, taus), linalg::qr(a).first);
      // svd: gesvd's singular values are gesdd's; vectors up to sign, so
      // u diag(s) vt rebuilds a, and the singular values alone agree.
      for (bool full : {false, true}) {
        const auto [u, s, vt] = linalg::svd(ga, full);
        CHECK(u.device() == g[0]);
        close(s, linalg::svdvals(a));
        const int64_t k = s.shape().back();
        const Array u_k = u[std::vector<Index>{Ellipsis{}, Slice(0, k)}];
        const Array vt_k = vt[std::vector<Index>{Ellipsis{}, Slice(0, k), Slice()}];
        close(matmul(u_k * expand_dims(s, -2), vt_k), a);
        close(matmul(transpose(u, swap_last), u),
              eye(u.shape().back(), dt) + zeros_like(matmul(transpose(u, swap_last), u)));
      }
      close(linalg::svdvals(ga), linalg::svdvals(a));
    }
    CHECK(codegen::cuda::run_counts().host_runs == at_start.host_runs);
  }
}
