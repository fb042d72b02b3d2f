#include "codegen/cuda/cuda_devices.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "codegen/cuda/driver.h"
#include "runtime/bfc_allocator.h"

namespace graft::codegen::cuda {
namespace {

// The allocator's regions: cuMemAlloc on one device.
class DriverMemory final : public runtime::MemorySource {
 public:
  DriverMemory(CudaDriver& driver, int ordinal) : driver_(driver), ordinal_(ordinal) {}
  void* reserve(size_t bytes) override { return driver_.mem_alloc(ordinal_, bytes); }
  void release(void* base, size_t) override { driver_.mem_free(ordinal_, base); }
  bool host_addressable() const override { return false; }

 private:
  CudaDriver& driver_;
  int ordinal_;
};

// Copies on the device's stream (driver.h: a copy to the host waits for it).
class DriverTransfers final : public runtime::DeviceTransfers {
 public:
  DriverTransfers(CudaDriver& driver, int ordinal) : driver_(driver), ordinal_(ordinal) {}
  void to_host(void* host, const void* device, size_t bytes) override {
    driver_.copy_to_host(ordinal_, host, device, bytes);
  }
  void to_device(void* device, const void* host, size_t bytes) override {
    driver_.copy_to_device(ordinal_, device, host, bytes);
  }
  void within(void* dst, const void* src, size_t bytes) override { driver_.copy_on_device(ordinal_, dst, src, bytes); }
  void synchronize() override { driver_.synchronize(ordinal_); }

 private:
  CudaDriver& driver_;
  int ordinal_;
};

std::vector<runtime::Device*>* make_devices() {
  auto* list = new std::vector<runtime::Device*>();
  if (!cuda_available()) return list;
  CudaDriver& driver = cuda_driver();
  const runtime::DeviceSettings& s = runtime::device_settings();
  const bool preallocate = s.preallocate_set ? s.preallocate : s.allocator != "platform";
  for (int i = 0; i < driver.device_count(); ++i) {
    const double total = static_cast<double>(driver.device_info(i).total_memory);
    const auto limit = std::max<size_t>(64, static_cast<size_t>(total * s.mem_fraction) / 64 * 64);
    auto allocator =
        std::make_unique<runtime::BfcAllocator>(limit, preallocate, std::make_unique<DriverMemory>(driver, i));
    list->push_back(new runtime::Device("cuda", i, std::move(allocator), std::make_unique<DriverTransfers>(driver, i)));
  }
  return list;
}

}  // namespace

const std::vector<runtime::Device*>& cuda_devices() {
  // Never destroyed, like the CPU devices: buffers may be freed during static destruction.
  static const std::vector<runtime::Device*>* all = make_devices();
  return *all;
}

bool real_gpu_present() {
  static const bool present = [] {
    if (!cuda_available()) return false;
    CudaDriver& driver = cuda_driver();
    return driver.device_count() > 0 && !driver.device_info(0).emulated;
  }();
  return present;
}

runtime::Device& cuda_device_here(const char* what) {
  runtime::Device& d = runtime::current_device();
  if (d.host_addressable())
    throw Error(std::string("cuda: ") + what + " ran with " + d.name() + " as the current device, not a CUDA device");
  return d;
}

}  // namespace graft::codegen::cuda
