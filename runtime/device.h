// Devices: each owns an allocator and knows its live buffers (with their
// provenance) and the device memory held by executables, so it can report
// statistics, explain an out-of-memory error and write a memory profile.
//
// CPU devices are virtual: GRAFT_CPU_DEVICES of them (default 1) share the
// machine, each with its own allocator, so pmap runs one replica per device.
// Settings come from the environment when a device is first used (see
// DeviceSettings); later changes to the environment do not apply.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/allocation_site.h"
#include "runtime/allocator_stats.h"
#include "runtime/buffer.h"

namespace graft::runtime {

struct DeviceSettings {
  int cpu_devices = 1;             // GRAFT_CPU_DEVICES: 1..256
  std::string allocator = "bfc";   // GRAFT_ALLOCATOR: bfc | platform (platform under AddressSanitizer)
  bool preallocate = false;        // GRAFT_PREALLOCATE: true|false|1|0 (CPU default: false)
  bool preallocate_set = false;    // whether GRAFT_PREALLOCATE was given (GPUs preallocate unless told not to)
  double mem_fraction = 0.75;      // GRAFT_MEM_FRACTION: (0, 1], of physical memory, shared by the devices
  int64_t physical_bytes = 0;      // the machine's memory
  int64_t bytes_limit() const;     // per device: physical * fraction / cpu_devices, rounded to 64 bytes

  // Reads the environment; throws graft::Error naming the variable and the
  // accepted values for a malformed one.
  static DeviceSettings from_environment();
};

// What a live allocation holds, for profiles and OOM reports.
struct LiveAllocation {
  int64_t bytes = 0;
  const AllocationSite* site = nullptr;
  const char* kind = "buffer";  // "buffer" or "executable"
};

class Device;

// How bytes move in and out of a device whose memory the CPU cannot address
// (a GPU's). Devices of host memory have none. Copies to the host wait for
// the device's queued work; the others are queued behind it.
class DeviceTransfers {
 public:
  virtual ~DeviceTransfers() = default;
  virtual void to_host(void* host, const void* device, size_t bytes) = 0;
  virtual void to_device(void* device, const void* host, size_t bytes) = 0;
  virtual void within(void* dst, const void* src, size_t bytes) = 0;
  // Waits for everything queued on the device.
  virtual void synchronize() = 0;
};

// Device memory an executable keeps (its constants and code), reported in
// profiles with kind "executable" until the handle is destroyed.
class ExecutableMemory {
 public:
  ExecutableMemory(Device& device, int64_t bytes, const AllocationSite* site);
  ~ExecutableMemory();
  ExecutableMemory(const ExecutableMemory&) = delete;
  ExecutableMemory& operator=(const ExecutableMemory&) = delete;

 private:
  friend class Device;
  Device& device_;
  LiveAllocation record_;
  ExecutableMemory* prev_ = nullptr;
  ExecutableMemory* next_ = nullptr;
};

class Device {
 public:
  // `transfers`: null for host memory; a GPU's copies otherwise.
  Device(std::string kind, int id, std::unique_ptr<Allocator> allocator,
         std::unique_ptr<DeviceTransfers> transfers = nullptr);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& kind() const { return kind_; }
  int id() const { return id_; }
  const std::string& name() const { return name_; }  // "cpu:0"; with several processes its global id
  // Called once by initialize_processes, before any replica runs.
  void set_name(std::string name) { name_ = std::move(name); }
  Allocator& allocator() { return *allocator_; }
  AllocatorStats memory_stats() const { return allocator_->stats(); }
  // Whether the CPU may read and write its buffers' bytes directly.
  bool host_addressable() const { return !transfers_; }
  DeviceTransfers* transfers() const { return transfers_.get(); }

  // Allocates through the allocator. An OutOfMemoryError gains what was being
  // made (the current site) and the largest live buffers with their sites.
  void* allocate(size_t nbytes);

  // Every live buffer and executable record, largest first.
  std::vector<LiveAllocation> live_allocations() const;

 private:
  friend class Buffer;
  friend class ExecutableMemory;
  void track(Buffer* b);
  void untrack(Buffer* b);
  void track(ExecutableMemory* e);
  void untrack(ExecutableMemory* e);
  template <class T>
  static void link_front(T*& head, T* x);
  template <class T>
  static void unlink(T*& head, T* x);

  std::string kind_;
  int id_;
  std::string name_;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<DeviceTransfers> transfers_;
  mutable std::mutex mutex_;  // guards the two lists
  Buffer* buffers_ = nullptr;
  ExecutableMemory* executables_ = nullptr;
};

// The settings the devices were made with (reads the environment on first use).
const DeviceSettings& device_settings();

// Every CPU device, made on first use from device_settings() (CUDA devices
// are made by the CUDA backend, codegen/cuda/cuda_devices.h).
const std::vector<Device*>& devices();
// The host's memory: devices()[0], where host copies of device buffers live.
Device& host_device();

// Copies `bytes` from `src` (memory of `src_device`) to `dst` (of
// `dst_device`) wherever each lives: host, a GPU, two GPUs through the host.
void copy_bytes(Device& dst_device, void* dst, Device& src_device, const void* src, size_t bytes);
inline void copy_buffer(Buffer& dst, const Buffer& src, size_t bytes) {
  copy_bytes(dst.device(), dst.data(), src.device(), src.data(), bytes);
}
// A new buffer on `device` holding a copy of `src` (made at the current site).
inline BufferPtr copy_onto(Device& device, const Buffer& src) {
  auto out = std::make_shared<Buffer>(src.size(), device);
  copy_buffer(*out, src, src.size());
  return out;
}

// Whether devices() has run (after it, GRAFT_CPU_DEVICES is no longer read).
bool devices_made();

// The device this thread allocates on: devices()[0] unless a DeviceScope says otherwise.
Device& current_device();
// The innermost DeviceScope's device on this thread, or null outside any.
Device* scoped_device();

// Makes `device` the thread's current device for its lifetime (a pmap
// replica's thread, an eager op on arrays of another device); nests.
class DeviceScope {
 public:
  explicit DeviceScope(Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device* saved_;
};

}  // namespace graft::runtime
