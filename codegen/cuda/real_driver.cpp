// The NVIDIA driver API through dlopen (driver.h): the entry points graft
// calls, declared here with the driver's C ABI (cuda.h is not needed to
// build graft). One primary context and one stream per device; modules are
// built by NVRTC for the device's architecture (a cubin; PTX for the newest
// architecture NVRTC knows when the device is newer), cached in memory per
// device and on disk under $GRAFT_CACHE_DIR/cuda.
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "codegen/cuda/cublas.h"
#include "codegen/cuda/cufft.h"
#include "codegen/cuda/cusolver.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/module_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/prelude.h"
#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

// Driver error codes graft explains (cuda.h's CUresult).
constexpr CUresult kSuccess = 0, kOutOfMemory = 2, kStubLibrary = 34,
                   kInsufficientDriver = 35, kNoDevice = 100, kInvalidPtx = 218, kUnsupportedPtxVersion = 222;
// CUdevice_attribute values.
constexpr int kAttrMultiprocessors = 16, kAttrMajor = 75, kAttrMinor = 76;

struct Api {
  void* handle = nullptr;
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*StreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*StreamSynchronize)(CUstream) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void**, void**) = nullptr;
};

struct Device {
  CudaDeviceInfo info;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
};

class RealDriver final : public CudaDriver {
 public:
  explicit RealDriver(const std::string& path) : path_(path) {
    api_.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!api_.handle) {
      const char* e = dlerror();
      throw UnsupportedError("cuda: no CUDA driver: " + path + " does not load (" + (e ? e : "dlopen failed") +
                             "); is the NVIDIA driver installed? (GRAFT_CUDA_DRIVER=emulated runs an emulated device)");
    }
    std::string missing;
    bind("cuInit", &api_.Init, &missing);
    bind("cuDriverGetVersion", &api_.DriverGetVersion, &missing);
    bind("cuGetErrorName", &api_.GetErrorName, &missing);
    bind("cuDeviceGetCount", &api_.DeviceGetCount, &missing);
    bind("cuDeviceGet", &api_.DeviceGet, &missing);
    bind("cuDeviceGetName", &api_.DeviceGetName, &missing);
    bind("cuDeviceGetAttribute", &api_.DeviceGetAttribute, &missing);
    bind("cuDeviceTotalMem_v2", &api_.DeviceTotalMem, &missing);
    bind("cuDevicePrimaryCtxRetain", &api_.DevicePrimaryCtxRetain, &missing);
    bind("cuCtxSetCurrent", &api_.CtxSetCurrent, &missing);
    bind("cuStreamCreate", &api_.StreamCreate, &missing);
    bind("cuStreamSynchronize", &api_.StreamSynchronize, &missing);
    bind("cuMemAlloc_v2", &api_.MemAlloc, &missing);
    bind("cuMemFree_v2", &api_.MemFree, &missing);
    bind("cuMemcpyHtoD_v2", &api_.MemcpyHtoD, &missing);
    bind("cuMemcpyDtoH_v2", &api_.MemcpyDtoH, &missing);
    bind("cuMemcpyDtoDAsync_v2", &api_.MemcpyDtoDAsync, &missing);
    bind("cuModuleLoadData", &api_.ModuleLoadData, &missing);
    bind("cuModuleGetFunction", &api_.ModuleGetFunction, &missing);
    bind("cuLaunchKernel", &api_.LaunchKernel, &missing);
    if (!missing.empty()) throw UnsupportedError("cuda: " + path + " is not a usable CUDA driver: it lacks " + missing);
    const CUresult init = api_.Init(0);
    if (init == kStubLibrary)
      throw UnsupportedError("cuda: no GPU driver: " + path +
                             " is the CUDA toolkit's stub library (cuInit: CUDA_ERROR_STUB_LIBRARY), which only "
                             "satisfies the linker; install the NVIDIA driver, or set GRAFT_CUDA_DRIVER=emulated");
    if (init == kNoDevice) throw UnsupportedError("cuda: no GPU: the driver (" + path + ") finds no CUDA device");
    if (init == kInsufficientDriver)
      throw UnsupportedError("cuda: the NVIDIA driver is too old for this CUDA (cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER)");
    if (init != kSuccess) throw UnsupportedError("cuda: cuInit failed: " + error_name(init));
    api_.DriverGetVersion(&version_);
    int count = 0;
    check(api_.DeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw UnsupportedError("cuda: no GPU: the driver finds no CUDA device");
    for (int i = 0; i < count; ++i) {
      Device d;
      CUdevice dev = 0;
      check(api_.DeviceGet(&dev, i), "cuDeviceGet");
      char name[256] = {};
      check(api_.DeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
      int major = 0, minor = 0, sms = 0;
      check(api_.DeviceGetAttribute(&major, kAttrMajor, dev), "cuDeviceGetAttribute");
      check(api_.DeviceGetAttribute(&minor, kAttrMinor, dev), "cuDeviceGetAttribute");
      check(api_.DeviceGetAttribute(&sms, kAttrMultiprocessors, dev), "cuDeviceGetAttribute");
      size_t total = 0;
      check(api_.DeviceTotalMem(&total, dev), "cuDeviceTotalMem");
      d.info = CudaDeviceInfo{name, major * 10 + minor, sms, static_cast<int64_t>(total), false};
      check(api_.DevicePrimaryCtxRetain(&d.ctx, dev), "cuDevicePrimaryCtxRetain");
      check(api_.CtxSetCurrent(d.ctx), "cuCtxSetCurrent");
      check(api_.StreamCreate(&d.stream, 0), "cuStreamCreate");  // blocking: ordered with the synchronous copies
      devices_.push_back(d);
    }
  }

  std::string description() const override {
    return "CUDA driver " + std::to_string(version_ / 1000) + "." + std::to_string(version_ % 1000 / 10) + " (" + path_ +
           "), " + nvrtc_description();
  }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  CudaDeviceInfo device_info(int device) const override { return at(device).info; }

  void* mem_alloc(int device, size_t bytes) override {
    use(device);
    CUdeviceptr p = 0;
    const CUresult r = api_.MemAlloc(&p, std::max<size_t>(bytes, 1));
    if (r == kOutOfMemory) return nullptr;
    check(r, "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void mem_free(int device, void* ptr) override {
    use(device);
    if (ptr) check(api_.MemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
  }
  void copy_to_device(int device, void* dst, const void* src, size_t bytes) override {
    use(device);
    if (bytes) check(api_.MemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(int device, void* dst, const void* src, size_t bytes) override {
    use(device);
    if (bytes) check(api_.MemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
  }
  void copy_on_device(int device, void* dst, const void* src, size_t bytes) override {
    use(device);
    if (bytes)
      check(api_.MemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes,
                                 at(device).stream),
            "cuMemcpyDtoDAsync");
  }

  void launch(int device, const CudaKernel& kernel, const std::vector<uint64_t>& params) override {
    use(device);
    CUfunction f = function_of(device, kernel);
    const Device& d = at(device);
    const int64_t grid = grid_blocks(kernel, int64_t{d.info.multiprocessors} * 8);
    void* block = const_cast<uint64_t*>(params.data());
    void* args[] = {block};
    check(api_.LaunchKernel(f, static_cast<unsigned>(grid), 1, 1, kThreadsPerBlock, 1, 1, 0, d.stream, args, nullptr),
          "cuLaunchKernel(" + kernel.symbol + ")");
  }
  void gemm(int device, const GemmCall& call) override {
    use(device);
    loaded(cublas_, load_cublas).gemm(device, at(device).stream, call);
  }
  void solver(int device, const SolverCall& call) override {
    use(device);
    if (call.routine == SolverCall::Routine::trsm)
      return loaded(cublas_, load_cublas).trsm(device, at(device).stream, call);
    loaded(cusolver_, load_cusolver).run(device, at(device).stream, call, [this, device](size_t bytes) {
      return workspace(device, bytes);
    });
  }
  void fft(int device, const FftCall& call) override {
    use(device);
    loaded(cufft_, load_cufft).run(device, at(device).stream, call);
    const bool inverse = call.type == ir::FftType::ifft || call.type == ir::FftType::irfft;
    if (inverse) {  // cuFFT leaves inverse transforms unscaled; lax.fft scales them
      if (!call.scale) throw Error("cuda: an inverse FFT needs its scaling kernel");
      launch(device, *call.scale, {reinterpret_cast<uint64_t>(call.out), reinterpret_cast<uint64_t>(call.out)});
    }
  }
  void synchronize(int device) override {
    use(device);
    check(api_.StreamSynchronize(at(device).stream), "cuStreamSynchronize");
  }

 private:
  // A CUDA library, loaded (dlopen) at its first use; kept for the process.
  template <class T>
  T& loaded(std::unique_ptr<T>& slot, std::unique_ptr<T> (*load)()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!slot) slot = load();
    return *slot;
  }
  template <class F>
  void bind(const char* name, F* fn, std::string* missing) {
    *fn = reinterpret_cast<F>(dlsym(api_.handle, name));
    if (!*fn && missing->empty()) *missing = name;
  }
  std::string error_name(CUresult r) const {
    const char* name = nullptr;
    if (api_.GetErrorName && api_.GetErrorName(r, &name) == kSuccess && name) return name;
    return "CUresult " + std::to_string(r);
  }
  void check(CUresult r, const std::string& what) const {
    if (r == kSuccess) return;
    if (r == kOutOfMemory) throw OutOfMemoryError("cuda: " + what + ": out of device memory");
    throw Error("cuda: " + what + " failed: " + error_name(r));
  }
  const Device& at(int device) const {
    if (device < 0 || device >= static_cast<int>(devices_.size()))
      throw Error("cuda: device " + std::to_string(device) + " does not exist (" + std::to_string(devices_.size()) +
                  " present)");
    return devices_[static_cast<size_t>(device)];
  }
  void use(int device) { check(api_.CtxSetCurrent(at(device).ctx), "cuCtxSetCurrent"); }

  CUfunction function_of(int device, const CudaKernel& kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Loaded>& same_hash = functions_[source_hash(kernel)];
    for (const Loaded& l : same_hash)
      if (l.device == device && l.source == kernel.source) return l.function;
    const int arch = at(device).info.arch;
    const std::vector<int> known = nvrtc_architectures();
    if (known.empty()) throw UnsupportedError("cuda: " + nvrtc_description());
    // A device newer than NVRTC knows runs PTX for the newest it knows (the driver compiles it).
    const bool as_ptx = arch > known.back();
    const int target = as_ptx ? known.back() : arch;
    const std::string image = cached_module_image(kernel.source, kernel.symbol, target, as_ptx);
    CUmodule module = nullptr;
    const CUresult r = api_.ModuleLoadData(&module, image.c_str());
    if (r == kUnsupportedPtxVersion || r == kInvalidPtx)
      throw UnsupportedError("cuda: the driver (" + description() + ") is too old for the code " + nvrtc_description() +
                             " makes (" + error_name(r) + "); NVRTC 13 needs an R580 or newer driver");
    check(r, "cuModuleLoadData(" + kernel.symbol + ")");
    CUfunction f = nullptr;
    check(api_.ModuleGetFunction(&f, module, kernel.symbol.c_str()), "cuModuleGetFunction(" + kernel.symbol + ")");
    same_hash.push_back({device, kernel.source, f});
    return f;
  }

  // The device's solver workspace, grown as calls need: the old one is
  // freed once the stream's work (which may still read it) is done.
  void* workspace(int device, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    Workspace& w = workspaces_[device];
    if (bytes > w.bytes) {
      if (w.ptr) {
        check(api_.StreamSynchronize(at(device).stream), "cuStreamSynchronize");
        mem_free(device, w.ptr);
        w = {};
      }
      w.ptr = mem_alloc(device, bytes);
      if (!w.ptr)
        throw OutOfMemoryError("cuda: no room on device " + std::to_string(device) + " for cuSOLVER's workspace of " +
                               std::to_string(bytes) + " bytes");
      w.bytes = bytes;
    }
    return w.ptr;
  }

  std::string path_;
  Api api_;
  int version_ = 0;
  std::vector<Device> devices_;
  std::mutex mu_;
  struct Loaded {
    int device;
    std::string source;
    CUfunction function;
  };
  std::unordered_map<size_t, std::vector<Loaded>> functions_;  // by source hash; modules stay loaded for the process
  std::unique_ptr<Cublas> cublas_;                             // loaded at the first GEMM or trsm
  std::unique_ptr<Cusolver> cusolver_;                         // loaded at the first factorization
  std::unique_ptr<Cufft> cufft_;                               // loaded at the first FFT
  struct Workspace {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  std::map<int, Workspace> workspaces_;  // kept for the process, like the modules
};

}  // namespace

std::unique_ptr<CudaDriver> load_driver_library(const std::string& path) { return std::make_unique<RealDriver>(path); }

}  // namespace graft::codegen::cuda
