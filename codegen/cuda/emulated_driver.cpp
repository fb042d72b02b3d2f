// The emulated CUDA driver (driver.h): device memory is host memory, and a
// kernel's module is its generated CUDA source compiled as host C++ (the
// emulator's shim first) by the CPU backend's compiler driver, cached like
// any CPU module. Launches run on fibres (emulator/fibres.h) on the calling
// thread, so the stream is always idle when a call returns. cuBLAS's GEMM
// is a host loop, and cuSOLVER's routines the host's LAPACK.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "codegen/cpu/compiler.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/emulator/fibres.h"
#include "codegen/cuda/emulator/shim.h"
#include "codegen/cuda/prelude.h"
#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "interpreter/lapack_host.h"

namespace graft::codegen::cuda {
namespace {

// The emulated device's shape: what the launcher sizes grids by.
constexpr int kEmulatedArch = 90;
constexpr int kEmulatedMultiprocessors = 2;
constexpr int64_t kEmulatedMemory = int64_t{1} << 30;  // small: preallocation takes GRAFT_MEM_FRACTION of it

// A symbol of a loaded module as the function type it has (load_kernels hands
// every symbol out as a CPU kernel pointer).
template <class F>
F symbol_as(cpu::KernelFn f) {
  return reinterpret_cast<F>(reinterpret_cast<void (*)()>(f));
}

int emulated_device_count() {
  const char* v = std::getenv("GRAFT_CUDA_EMULATED_DEVICES");
  if (!v || !*v) return 1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 16)
    throw Error(std::string("GRAFT_CUDA_EMULATED_DEVICES='") + v + "': expected a device count from 1 to 16");
  return static_cast<int>(n);
}

class EmulatedDriver final : public CudaDriver {
 public:
  EmulatedDriver() : devices_(emulated_device_count()), in_use_(static_cast<size_t>(devices_), 0) {
    if (!cpu::cpu_compiler_available())
      throw UnsupportedError("cuda: the emulated driver compiles kernels with the C++ compiler, and none runs: " +
                             cpu::cpu_compiler_description());
  }

  std::string description() const override {
    return "emulated CUDA driver (" + std::to_string(devices_) +
           " device(s); device memory in host RAM; generated CUDA kernels run as host C++ on fibres)";
  }
  int device_count() const override { return devices_; }
  CudaDeviceInfo device_info(int device) const override {
    check(device);
    return CudaDeviceInfo{"emulated CUDA device (host memory, sm_90 limits)", kEmulatedArch, kEmulatedMultiprocessors,
                          kEmulatedMemory, true};
  }

  void* mem_alloc(int device, size_t bytes) override {
    check(device);
    std::lock_guard<std::mutex> lock(mu_);
    int64_t& used = in_use_[static_cast<size_t>(device)];
    if (static_cast<int64_t>(bytes) > kEmulatedMemory - used) return nullptr;
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p) return nullptr;
    used += static_cast<int64_t>(bytes);
    sizes_[p] = bytes;
    return p;
  }
  void mem_free(int device, void* ptr) override {
    check(device);
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(ptr);
    if (it == sizes_.end()) throw Error("cuda emulator: cuMemFree of a pointer the device did not allocate");
    in_use_[static_cast<size_t>(device)] -= static_cast<int64_t>(it->second);
    sizes_.erase(it);
    std::free(ptr);
  }
  void copy_to_device(int device, void* dst, const void* src, size_t bytes) override {
    require_device_memory(dst, bytes, "cuMemcpyHtoD's destination");
    copy(device, dst, src, bytes);
  }
  void copy_to_host(int device, void* dst, const void* src, size_t bytes) override {
    require_device_memory(src, bytes, "cuMemcpyDtoH's source");
    copy(device, dst, src, bytes);
  }
  void copy_on_device(int device, void* dst, const void* src, size_t bytes) override {
    require_device_memory(dst, bytes, "cuMemcpyDtoD's destination");
    require_device_memory(src, bytes, "cuMemcpyDtoD's source");
    copy(device, dst, src, bytes);
  }

  void launch(int device, const CudaKernel& kernel, const std::vector<uint64_t>& params) override {
    check(device);
    // A kernel's first parameters are its input and output buffers (kernel_params, movement_params).
    const size_t buffers = static_cast<size_t>(kernel.num_inputs + kernel.num_outputs);
    for (size_t i = 0; i < buffers && i < params.size(); ++i)
      if (params[i])
        require_device_memory(reinterpret_cast<const void*>(params[i]), 0,
                              "kernel " + kernel.symbol + "'s buffer parameter " + std::to_string(i));
    emulator::Entry entry = entry_of(kernel);
    const int64_t grid = grid_blocks(kernel, int64_t{kEmulatedMultiprocessors} * 4);
    emulator::launch(entry, params.data(), static_cast<unsigned>(grid), kThreadsPerBlock, kernel.symbol);
  }
  // cuBLAS served by the host: the column-major product, each element
  // summed over k in order.
  void gemm(int device, const GemmCall& c) override {
    check(device);
    require_device_memory(c.a, 0, "the GEMM's A");
    require_device_memory(c.b, 0, "the GEMM's B");
    require_device_memory(c.c, 0, "the GEMM's C");
    if (c.f64)
      host_gemm(c, static_cast<const double*>(c.a), static_cast<const double*>(c.b), static_cast<double*>(c.c));
    else
      host_gemm(c, static_cast<const float*>(c.a), static_cast<const float*>(c.b), static_cast<float*>(c.c));
  }
  // cuSOLVER and cuBLAS's trsm served by the host's LAPACK, call for call.
  void solver(int device, const SolverCall& c) override {
    check(device);
    require_device_memory(c.a, 0, "the solver's A");
    if (c.b) require_device_memory(c.b, 0, "the solver's B");
    if (c.info) require_device_memory(c.info, 0, "the solver's info");
    if (c.u) require_device_memory(c.u, 0, "the solver's U");
    if (c.vt) require_device_memory(c.vt, 0, "the solver's VT");
    if (c.ipiv) require_device_memory(c.ipiv, 0, "the solver's pivots");
    if (c.f64)
      host_solver(c, static_cast<double*>(c.a), static_cast<double*>(c.b));
    else
      host_solver(c, static_cast<float*>(c.a), static_cast<float*>(c.b));
  }
  // cuFFT served by the host's FFT kernel (which scales inverse transforms itself).
  void fft(int device, const FftCall& c) override {
    check(device);
    require_device_memory(c.in, 0, "the FFT's input");
    require_device_memory(c.out, 0, "the FFT's output");
    const bool real_in = c.type == ir::FftType::rfft, real_out = c.type == ir::FftType::irfft;
    const DType part = c.f64 ? DType::f64 : DType::f32, whole = c.f64 ? DType::c128 : DType::c64;
    ir::ValueType in{real_in ? part : whole, {c.batch}}, out{real_out ? part : whole, {c.batch}};
    ir::Ints lengths;
    for (int i = 0; i < c.rank; ++i) {
      lengths.push_back(c.lengths[i]);
      const bool last = i == c.rank - 1;
      in.shape.push_back(last && real_out ? c.lengths[i] / 2 + 1 : c.lengths[i]);
      out.shape.push_back(last && real_in ? c.lengths[i] / 2 + 1 : c.lengths[i]);
    }
    const ir::Attrs attrs{{"fft_type", std::string(ir::fft_type_name(c.type))}, {"fft_lengths", lengths}};
    interpreter::run_kernel(interpreter::KernelCall{ir::Op::fft, attrs, {{&in, c.in}}, {{&out, c.out}}});
  }
  void synchronize(int device) override { check(device); }

 private:
  void check(int device) const {
    if (device < 0 || device >= devices_)
      throw Error("cuda emulator: device " + std::to_string(device) + " does not exist (" + std::to_string(devices_) +
                  " emulated; GRAFT_CUDA_EMULATED_DEVICES)");
  }
  // A GPU faults on a host pointer where this emulator, whose device memory
  // is host memory, would quietly read it: so every pointer the driver is
  // given as device memory must lie in an allocation of mem_alloc's, and
  // CI sees what a GPU would.
  void require_device_memory(const void* p, size_t bytes, const std::string& what) {
    if (!p && bytes == 0) return;
    const auto* c = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.upper_bound(const_cast<void*>(p));
    if (it != sizes_.begin()) {
      --it;
      const auto* base = static_cast<const char*>(it->first);
      if (c >= base && c + bytes <= base + it->second) return;
    }
    throw Error("cuda emulator: " + what + " is not device memory (" + pointer_str(p) + ", " + std::to_string(bytes) +
                " bytes): a GPU would fault on a host pointer here");
  }
  static std::string pointer_str(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }

  void copy(int device, void* dst, const void* src, size_t bytes) {
    check(device);
    if (bytes) std::memmove(dst, src, bytes);
  }

  // The kernel's module, compiled (or found in the CPU compiler's caches) once per source.
  template <class T>
  static void host_gemm(const GemmCall& c, const T* a, const T* b, T* out) {
    for (int64_t e = 0; e < c.batch; ++e) {
      const T* ae = a + e * c.stride_a;
      const T* be = b + e * c.stride_b;
      T* ce = out + e * c.stride_c;
      for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
          T acc = 0;
          for (int64_t p = 0; p < c.k; ++p) {
            const T x = c.trans_a ? ae[p + i * c.lda] : ae[i + p * c.lda];
            const T y = c.trans_b ? be[j + p * c.ldb] : be[p + j * c.ldb];
            acc += x * y;
          }
          ce[i + j * c.ldc] = acc;
        }
    }
  }

  template <class T>
  static void host_solver(const SolverCall& c, T* a, T* b) {
    const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), k = static_cast<int>(c.k);
    const int lda = static_cast<int>(c.lda), ldb = static_cast<int>(c.ldb);
    const int ldu = static_cast<int>(c.ldu), ldvt = static_cast<int>(c.ldvt);
    for (int64_t e = 0; e < c.batch; ++e) {
      T* ae = a + e * c.stride_a;
      T* be = b ? b + e * c.stride_b : nullptr;
      T* ue = c.u ? static_cast<T*>(c.u) + e * c.stride_u : nullptr;
      T* vte = c.vt ? static_cast<T*>(c.vt) + e * c.stride_vt : nullptr;
      switch (c.routine) {
        case SolverCall::Routine::getrf:
          c.info[e] = interpreter::lapack::getrf(m, n, ae, lda, c.ipiv + e * std::min(c.m, c.n));
          break;
        case SolverCall::Routine::geqrf: c.info[e] = interpreter::lapack::geqrf(m, n, ae, lda, be); break;
        case SolverCall::Routine::orgqr: c.info[e] = interpreter::lapack::orgqr(m, n, k, ae, lda, be); break;
        case SolverCall::Routine::gesvd:
          c.info[e] = interpreter::lapack::gesvd(c.job, m, n, ae, lda, be, ue, ldu, vte, ldvt);
          break;
        case SolverCall::Routine::potrf: c.info[e] = interpreter::lapack::potrf(c.upper, n, ae, lda); break;
        case SolverCall::Routine::syevd: c.info[e] = interpreter::lapack::syevd(true, c.upper, n, ae, lda, be); break;
        case SolverCall::Routine::trsm:
          interpreter::lapack::trsm(c.left, c.upper, c.trans, c.unit, m, n, T(1), ae, lda, be, ldb);
          break;
      }
    }
  }

  emulator::Entry entry_of(const CudaKernel& kernel) {
    std::lock_guard<std::mutex> lock(modules_mu_);
    std::vector<Module>& same_hash = modules_[source_hash(kernel)];
    for (const Module& m : same_hash)
      if (m.source == kernel.source) return symbol_as<emulator::Entry>(m.loaded.fns[0]);
    {
      std::string source = "#define GCG_EMU_VERSION " + std::to_string(emulator::kRuntimeVersion) + "\n";
      source += emulator::kShim + kernel.source;
      cpu::LoadedKernels loaded = cpu::load_kernels(source, {kernel.symbol + "_emulated", "graft_cuda_emulator_init"});
      using Init = int (*)(const void*);
      if (symbol_as<Init>(loaded.fns[1])(&emulator::runtime()) != 0)
        throw Error("cuda emulator: module of " + kernel.symbol + " was built for another emulator version");
      same_hash.push_back({kernel.source, std::move(loaded)});
    }
    return symbol_as<emulator::Entry>(same_hash.back().loaded.fns[0]);
  }

  const int devices_;
  std::mutex mu_;
  std::vector<int64_t> in_use_;
  std::map<void*, size_t> sizes_;
  std::mutex modules_mu_;
  struct Module {
    std::string source;
    cpu::LoadedKernels loaded;
  };
  std::unordered_map<size_t, std::vector<Module>> modules_;  // by source hash; loaded for the driver's life
};

}  // namespace

std::unique_ptr<CudaDriver> make_emulated_driver() { return std::make_unique<EmulatedDriver>(); }

}  // namespace graft::codegen::cuda
