// The CUDA driver graft runs on, chosen once per process by
// GRAFT_CUDA_DRIVER:
//   unset      the NVIDIA driver, libcuda.so.1, loaded with dlopen at first
//              use (never linked); modules compiled by NVRTC (nvrtc.h);
//   emulated   the emulated driver: device memory is host memory, and the
//              same generated CUDA source runs as host C++ on fibres
//              (emulator/fibres.h), compiled by the CPU backend's compiler;
//   a path     that libcuda (tests load the toolkit's stub with it).
// Whatever is missing is an UnsupportedError saying what: no driver, the
// stub driver, no GPU, no NVRTC, a driver too old for the PTX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"

namespace graft::codegen::cuda {

struct CudaDeviceInfo {
  std::string name;         // "NVIDIA H100 80GB HBM3", "emulated CUDA device"
  int arch = 0;             // compute capability as 10 * major + minor (90)
  int multiprocessors = 0;
  int64_t total_memory = 0;  // bytes
  bool emulated = false;
};

class CudaDriver {
 public:
  virtual ~CudaDriver() = default;
  // One line: the driver, its version, NVRTC's, and whether it is emulated.
  virtual std::string description() const = 0;
  virtual int device_count() const = 0;
  virtual CudaDeviceInfo device_info(int device) const = 0;

  // Device memory: nullptr when the device has no room.
  virtual void* mem_alloc(int device, size_t bytes) = 0;
  virtual void mem_free(int device, void* ptr) = 0;
  // Copies on the device's stream; a copy to the host waits for it.
  virtual void copy_to_device(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_on_device(int device, void* dst, const void* src, size_t bytes) = 0;

  // Launches `kernel` on the device's stream with these parameters
  // (kernel_params), compiling and loading its module first unless cached.
  virtual void launch(int device, const CudaKernel& kernel, const std::vector<uint64_t>& params) = 0;
  // Waits for everything queued on the device's stream.
  virtual void synchronize(int device) = 0;
};

// The process's driver (made at first use). Throws UnsupportedError when
// none is usable, saying why.
CudaDriver& cuda_driver();
// Whether cuda_driver() would succeed with at least one device; *why says
// what is missing otherwise. Never throws.
bool cuda_available(std::string* why = nullptr);

// Drivers, for tests: the emulator, and the driver API from the library at
// `path` (throws UnsupportedError like cuda_driver()).
std::unique_ptr<CudaDriver> make_emulated_driver();
std::unique_ptr<CudaDriver> load_driver_library(const std::string& path);

}  // namespace graft::codegen::cuda
