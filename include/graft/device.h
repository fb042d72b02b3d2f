// Devices: where an Array's buffer lives, and their memory statistics.
// CPU devices are virtual: GRAFT_CPU_DEVICES of them (default 1), each with its
// own allocator. The GRAFT_* memory settings are read when graft first uses a
// device; changing the environment later has no effect (see docs/MEMORY.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/detail/source_location.h"

namespace graft {

class Array;

// A device's allocator statistics, exact to the byte. Sizes count what the
// allocator hands out (requests rounded up to 64-byte multiples).
struct MemoryStats {
  int64_t bytes_in_use = 0;        // held by live buffers
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_limit = 0;         // the most the allocator may take from the system
  int64_t bytes_reserved = 0;      // taken from the system now (bfc: its regions)
  int64_t peak_bytes_reserved = 0;
  int64_t num_allocs = 0;          // allocations served so far
  int64_t largest_alloc_size = 0;  // the largest single request so far
  int64_t largest_free_block_bytes = 0;  // the largest free block inside reserved memory
};

class Device {
 public:
  Device(std::string kind = "cpu", int id = 0) : kind_(std::move(kind)), id_(id) {}
  const std::string& kind() const { return kind_; }  // "cpu" or "cuda"
  int id() const { return id_; }
  std::string str() const { return kind_ + ":" + std::to_string(id_); }
  // The process whose memory the device is (0 unless graft::distributed started several).
  int process_index() const;
  bool operator==(const Device&) const = default;

  // Throws graft::Error for a device that does not exist.
  MemoryStats memory_stats() const;
  // Peak statistics restart from the current values (for measuring one step).
  void reset_peak_memory_stats() const;

 private:
  std::string kind_;
  int id_;
};

// The devices of `kind` ("cpu" or "cuda"; "" for the default device's kind),
// in id order: every process's CPU devices after distributed::initialize().
// CUDA devices exist when a CUDA driver is usable (GRAFT_CUDA_DRIVER=emulated
// gives emulated ones); devices("cuda") is empty otherwise.
std::vector<Device> devices(std::string kind = "");
// The device fresh arrays (array, zeros, arange, load_npy, random keys) and
// jit(Backend::automatic) use: cuda:0 when a real GPU is present, as in JAX,
// else cpu:0. GRAFT_PLATFORMS overrides it as JAX_PLATFORMS does: "cpu",
// "cuda", or a list ("cuda,cpu") whose first kind with a device wins.
// Chosen once per process.
Device default_device();
// A copy of a concrete array on `device` (the same array when it is there already).
Array device_put(const Array& x, const Device& device,
                 std::source_location where = std::source_location::current());

// What runs underneath, in one line a bug report can quote: graft's version,
// the CPU features seen, the GEMM library and the kernels it runs (and
// whether graft re-selected them), the float math of interpreter kernels
// and of compiled ones, and the CUDA backend's state.
std::string build_info();

}  // namespace graft
