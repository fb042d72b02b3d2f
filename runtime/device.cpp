#include "runtime/device.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "graft/errors.h"
#include "runtime/bfc_allocator.h"
#include "runtime/platform_allocator.h"

namespace graft::runtime {
namespace {

constexpr bool kAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

[[noreturn]] void bad_setting(const char* name, const std::string& value, const char* accepted) {
  throw Error(std::string(name) + "=\"" + value + "\" is not valid: expected " + accepted +
              " (read when graft first uses a device)");
}

int64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{8} << 30;  // unknown: assume 8 GiB
  return static_cast<int64_t>(pages) * page;
}

std::unique_ptr<Allocator> make_allocator(const DeviceSettings& s) {
  auto limit = static_cast<size_t>(s.bytes_limit());
  if (s.allocator == "platform") return std::make_unique<PlatformAllocator>(limit, s.preallocate);
  return std::make_unique<BfcAllocator>(limit, s.preallocate);
}

thread_local Device* t_current_device = nullptr;

}  // namespace

int64_t DeviceSettings::bytes_limit() const {
  double per_device = static_cast<double>(physical_bytes) * mem_fraction / std::max(1, cpu_devices);
  return std::max<int64_t>(64, static_cast<int64_t>(per_device) / 64 * 64);
}

DeviceSettings DeviceSettings::from_environment() {
  DeviceSettings s;
  s.physical_bytes = physical_memory();
  if (std::string v = env_or_empty("GRAFT_CPU_DEVICES"); !v.empty()) {
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 256) bad_setting("GRAFT_CPU_DEVICES", v, "an integer from 1 to 256");
    s.cpu_devices = static_cast<int>(n);
  }
  if (kAddressSanitizer) s.allocator = "platform";  // sanitizers see every block
  if (std::string v = env_or_empty("GRAFT_ALLOCATOR"); !v.empty()) {
    if (v != "bfc" && v != "platform") bad_setting("GRAFT_ALLOCATOR", v, "bfc or platform");
    s.allocator = v;
  }
  if (std::string v = env_or_empty("GRAFT_PREALLOCATE"); !v.empty()) {
    s.preallocate_set = true;
    if (v == "true" || v == "1")
      s.preallocate = true;
    else if (v == "false" || v == "0")
      s.preallocate = false;
    else
      bad_setting("GRAFT_PREALLOCATE", v, "true, false, 1 or 0");
  }
  if (std::string v = env_or_empty("GRAFT_MEM_FRACTION"); !v.empty()) {
    char* end = nullptr;
    double f = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !(f > 0.0 && f <= 1.0)) bad_setting("GRAFT_MEM_FRACTION", v, "a number in (0, 1]");
    s.mem_fraction = f;
  }
  return s;
}

// ---- executables' memory

ExecutableMemory::ExecutableMemory(Device& device, int64_t bytes, const AllocationSite* site)
    : device_(device), record_{bytes, site, "executable"} {
  device_.track(this);
}

ExecutableMemory::~ExecutableMemory() { device_.untrack(this); }

// ---- devices

Device::Device(std::string kind, int id, std::unique_ptr<Allocator> allocator,
               std::unique_ptr<DeviceTransfers> transfers)
    : kind_(std::move(kind)),
      id_(id),
      name_(kind_ + ":" + std::to_string(id)),
      allocator_(std::move(allocator)),
      transfers_(std::move(transfers)) {}

Device::~Device() = default;

// The lists of live buffers and executables: intrusive, doubly linked.
template <class T>
void Device::link_front(T*& head, T* x) {
  x->prev_ = nullptr;
  x->next_ = head;
  if (head) head->prev_ = x;
  head = x;
}

template <class T>
void Device::unlink(T*& head, T* x) {
  if (x->prev_) x->prev_->next_ = x->next_;
  else head = x->next_;
  if (x->next_) x->next_->prev_ = x->prev_;
}

void Device::track(Buffer* b) {
  std::lock_guard<std::mutex> lock(mutex_);
  link_front(buffers_, b);
}

void Device::untrack(Buffer* b) {
  std::lock_guard<std::mutex> lock(mutex_);
  unlink(buffers_, b);
}

void Device::track(ExecutableMemory* e) {
  std::lock_guard<std::mutex> lock(mutex_);
  link_front(executables_, e);
}

void Device::untrack(ExecutableMemory* e) {
  std::lock_guard<std::mutex> lock(mutex_);
  unlink(executables_, e);
}

std::vector<LiveAllocation> Device::live_allocations() const {
  std::vector<LiveAllocation> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Buffer* b = buffers_; b; b = b->next_)
      out.push_back({static_cast<int64_t>(b->size()), b->site(), "buffer"});
    for (const ExecutableMemory* e = executables_; e; e = e->next_) out.push_back(e->record_);
  }
  std::stable_sort(out.begin(), out.end(), [](const LiveAllocation& a, const LiveAllocation& b) { return a.bytes > b.bytes; });
  return out;
}

void* Device::allocate(size_t nbytes) {
  try {
    return allocator_->allocate(nbytes);
  } catch (const OutOfMemoryError& e) {
    std::string msg = name_ + ": " + e.what();
    const AllocationSite* site = current_site();
    msg += "\nThe request came from " + site->str() + ".";
    std::vector<LiveAllocation> live = live_allocations();
    if (live.empty()) {
      msg += "\nNo buffers are live on " + name_ + ".";
    } else {
      const size_t shown = std::min<size_t>(live.size(), 5);
      msg += "\nLargest live buffers on " + name_ + " (" + std::to_string(live.size()) + " in all):";
      for (size_t i = 0; i < shown; ++i)
        msg += "\n  " + format_bytes(live[i].bytes) + " (" + std::to_string(live[i].bytes) + " bytes) " +
               live[i].kind + ", made by " + live[i].site->str();
    }
    throw OutOfMemoryError(msg);
  }
}

const DeviceSettings& device_settings() {
  static const DeviceSettings settings = DeviceSettings::from_environment();
  return settings;
}

namespace {
std::atomic<bool> g_devices_made{false};
}

bool devices_made() { return g_devices_made.load(); }

const std::vector<Device*>& devices() {
  // Never destroyed: buffers may be freed during static destruction.
  static const std::vector<Device*>* all = [] {
    g_devices_made = true;
    const DeviceSettings& s = device_settings();
    auto* list = new std::vector<Device*>();
    for (int i = 0; i < s.cpu_devices; ++i) list->push_back(new Device("cpu", i, make_allocator(s)));
    return list;
  }();
  return *all;
}

Device& host_device() { return *devices()[0]; }

void copy_bytes(Device& dst_device, void* dst, Device& src_device, const void* src, size_t bytes) {
  if (bytes == 0) return;
  DeviceTransfers* from = src_device.transfers();
  DeviceTransfers* to = dst_device.transfers();
  if (!from && !to) {
    std::memcpy(dst, src, bytes);
  } else if (!from) {
    to->to_device(dst, src, bytes);
  } else if (!to) {
    from->to_host(dst, src, bytes);
  } else if (&src_device == &dst_device) {
    to->within(dst, src, bytes);
  } else {  // two devices: through the host
    Buffer staging(bytes, host_device());
    from->to_host(staging.data(), src, bytes);
    to->to_device(dst, staging.data(), bytes);
  }
}

Device& current_device() { return t_current_device ? *t_current_device : *devices()[0]; }
Device* scoped_device() { return t_current_device; }

DeviceScope::DeviceScope(Device& device) : saved_(t_current_device) { t_current_device = &device; }
DeviceScope::~DeviceScope() { t_current_device = saved_; }

}  // namespace graft::runtime
