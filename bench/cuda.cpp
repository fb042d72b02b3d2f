// The CUDA backend on a GPU, each row beside its reference in the same run:
//   - an elementwise chain (jit, one fused kernel) against the device's copy
//     bandwidth (a device-to-device copy of the same bytes: the most a
//     memory-bound kernel can move);
//   - matmul under jit against cuBLAS called directly (the same GEMM through
//     the driver, no graft in between);
//   - an MLP 784-512-512-10 batch-256 jit(value_and_grad) step, beside the
//     same step on the cpu backend;
//   - a cached jit call on f32[8] (dispatch, launch and the copy back).
// Goals (issue 18): >= 80 % of the copy bandwidth, >= 0.9x direct cuBLAS,
// cached call <= 10 us. Where no GPU exists it says so and exits 0;
// GRAFT_CUDA_DRIVER=emulated runs it on the emulated device with small
// sizes to check the program, and its figures mean nothing.
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <string>

#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/driver.h"
#include "graft/graft.h"
#include "timing.h"

using namespace graft;

namespace {

void wait_for_gpu() { codegen::cuda::cuda_driver().synchronize(0); }

void print_spread(const char* what, const TimeSpread& s, double scale, const char* unit) {
  std::printf("  %-44s %9.3f %s (min %.3f, max %.3f over 7 runs)\n", what, s.median * scale, unit, s.min * scale,
              s.max * scale);
}

}  // namespace

int main() {
  const char* driver = std::getenv("GRAFT_CUDA_DRIVER");
  const bool emulated = driver && std::string(driver) == "emulated";
  std::string why;
  if (!codegen::cuda::real_gpu_present() && !emulated) {
    codegen::cuda::cuda_available(&why);
    std::printf("bench/cuda: no GPU here (%s); nothing to measure\n", why.empty() ? "emulated driver" : why.c_str());
    return 0;
  }
  const Device gpu = devices("cuda").at(0);
  std::printf("bench/cuda on %s: %s\n", codegen::cuda::cuda_driver().description().c_str(),
              codegen::cuda::cuda_driver().device_info(0).name.c_str());
  if (emulated) std::printf("  (emulated device, small sizes: checks the program; the figures mean nothing)\n");
  const JitOptions on_cuda{.backend = Backend::cuda};

  // 1. Elementwise chain against the copy bandwidth.
  {
    const int64_t n = emulated ? (int64_t{1} << 14) : (int64_t{1} << 26);
    const Array x = device_put(random::normal(random::key(1), {n}), gpu);
    auto chain = jit([](const Array& v) { return tanh(v * 1.5f + 0.5f) * v - exp(v) * 0.25f; }, on_cuda);
    Array y = chain(x);
    wait_for_gpu();
    const TimeSpread t = timed_spread([&] {
      y = chain(x);
      wait_for_gpu();
    });
    const Array dst = device_put(zeros({n}, f32), gpu);
    codegen::cuda::CudaDriver& d = codegen::cuda::cuda_driver();
    const size_t bytes = static_cast<size_t>(n) * 4;
    const TimeSpread c = timed_spread([&] {
      d.copy_on_device(0, const_cast<void*>(dst.unsafe_buffer_pointer()), x.unsafe_buffer_pointer(), bytes);
      wait_for_gpu();
    });
    std::printf("elementwise chain, %lld f32 (read and write %.0f MiB):\n", static_cast<long long>(n),
                2.0 * static_cast<double>(bytes) / (1 << 20));
    print_spread("graft jit(cuda)", t, 1e3, "ms");
    print_spread("device-to-device copy of the same bytes", c, 1e3, "ms");
    std::printf("  bandwidth: graft %.0f GB/s, copy %.0f GB/s: %.2f of the copy (goal >= 0.80)\n",
                2.0 * static_cast<double>(bytes) / t.median / 1e9, 2.0 * static_cast<double>(bytes) / c.median / 1e9,
                c.median / t.median);
  }

  // 2. GEMM against cuBLAS called directly.
  {
    const int64_t s = emulated ? 64 : 4096;
    const Array a = device_put(random::normal(random::key(2), {s, s}), gpu);
    const Array b = device_put(random::normal(random::key(3), {s, s}), gpu);
    auto mm = jit([](const Array& p, const Array& q) { return matmul(p, q); }, on_cuda);
    Array c = mm(a, b);
    wait_for_gpu();
    const TimeSpread t = timed_spread([&] {
      c = mm(a, b);
      wait_for_gpu();
    });
    const Array out = device_put(zeros({s, s}, f32), gpu);
    codegen::cuda::GemmCall g;
    g.m = g.n = g.k = s;
    g.lda = g.ldb = g.ldc = s;
    g.a = b.unsafe_buffer_pointer();
    g.b = a.unsafe_buffer_pointer();
    g.c = const_cast<void*>(out.unsafe_buffer_pointer());
    codegen::cuda::cuda_driver().gemm(0, g);
    wait_for_gpu();
    const TimeSpread r = timed_spread([&] {
      codegen::cuda::cuda_driver().gemm(0, g);
      wait_for_gpu();
    });
    const double flops = 2.0 * static_cast<double>(s) * static_cast<double>(s) * static_cast<double>(s);
    std::printf("sgemm %lld^3:\n", static_cast<long long>(s));
    print_spread("graft jit(cuda) matmul", t, 1e3, "ms");
    print_spread("cuBLAS called directly", r, 1e3, "ms");
    std::printf("  graft %.1f TFLOP/s, cuBLAS %.1f TFLOP/s: %.2fx direct cuBLAS (goal >= 0.9)\n",
                flops / t.median / 1e12, flops / r.median / 1e12, r.median / t.median);
  }

  // 3. MLP grad step, cuda beside cpu.
  {
    const int64_t batch = emulated ? 8 : 256;
    auto init = [](uint64_t seed, int64_t in, int64_t out) {
      return random::normal(random::key(seed), {in, out}) * static_cast<float>(1.0 / std::sqrt(double(in)));
    };
    const std::vector<Array> params{init(4, 784, 512), init(5, 512, 512), init(6, 512, 10)};
    const Array x = random::normal(random::key(7), {batch, 784});
    auto loss = [&](const std::vector<Array>& p) {
      Array h = tanh(matmul(x, p[0]));
      h = tanh(matmul(h, p[1]));
      return mean(square(matmul(h, p[2])));
    };
    auto step_cuda = jit(value_and_grad(loss), on_cuda);
    auto step_cpu = jit(value_and_grad(loss), JitOptions{.backend = Backend::automatic, .wait_for_compile = true});
    std::vector<Array> on_gpu;
    for (const Array& p : params) on_gpu.push_back(device_put(p, gpu));
    auto r1 = step_cuda(on_gpu);
    wait_for_gpu();
    const TimeSpread t = timed_spread([&] {
      r1 = step_cuda(on_gpu);
      wait_for_gpu();
    });
    auto r2 = step_cpu(params);
    const TimeSpread c = timed_spread([&] { r2 = step_cpu(params); });
    std::printf("MLP 784-512-512-10, batch %lld, jit(value_and_grad) step:\n", static_cast<long long>(batch));
    print_spread("graft jit(cuda)", t, 1e3, "ms");
    print_spread("graft jit(cpu) on this host", c, 1e3, "ms");
    std::printf("  cuda is %.1fx the cpu backend's speed\n", c.median / t.median);
  }

  // 4. Cached jit call.
  {
    const Array x = device_put(arange(8, f32), gpu);
    auto f = jit([](const Array& v) { return v * 2.0f + 1.0f; }, on_cuda);
    Array y = f(x);
    wait_for_gpu();
    constexpr int kCalls = 2000;
    const TimeSpread t = timed_spread([&] {
      for (int i = 0; i < kCalls; ++i) y = f(x);
      wait_for_gpu();
    });
    std::printf("cached jit call, f32[8] on the GPU:\n");
    print_spread("per call", t, 1e6 / kCalls, "us");
    std::printf("  goal <= 10 us\n");
  }
  return 0;
}
