// Devices, device_put and memory profiles: the public face of runtime/device.h.
#include "graft/device.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <source_location>
#include <tuple>

#include "api/array_impl.h"
#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/driver.h"
#include "api/dispatch.h"
#include "graft/array.h"
#include "graft/errors.h"
#include "graft/profiler.h"
#include "ir/dtype.h"
#include "ir/trace.h"
#include "runtime/device.h"
#include "runtime/pprof.h"
#include "runtime/processes.h"
#include "api/device_map.h"

namespace graft {
namespace detail {

// Public ids are global (runtime::global_device_id); with one process they
// are the runtime's own.
runtime::Device& runtime_device(const Device& d) {
  if (d.kind() == "cuda") {
    const auto& gpus = codegen::cuda::cuda_devices();
    if (d.id() >= 0 && static_cast<size_t>(d.id()) < gpus.size()) return *gpus[static_cast<size_t>(d.id())];
    std::string why;
    if (gpus.empty() && !codegen::cuda::cuda_available(&why))
      throw Error("device " + d.str() + " does not exist: there are no cuda devices (" + why + ")");
    throw Error("device " + d.str() + " does not exist: this process has " + std::to_string(gpus.size()) +
                " cuda device(s)");
  }
  if (d.kind() != "cpu") throw Error("device " + d.str() + " does not exist: device kinds are \"cpu\" and \"cuda\"");
  const auto& all = runtime::devices();
  const runtime::Processes& procs = runtime::processes();
  const int process = d.kind() == "cpu" ? runtime::process_of_device(d.id()) : -1;
  if (process >= 0 && process != procs.index)
    throw Error("device " + d.str() + " belongs to process " + std::to_string(process) + "; this is process " +
                std::to_string(procs.index) + ", which reaches only its own devices (distributed::local_devices())");
  if (process < 0)
    throw Error("device " + d.str() + " does not exist: " +
                (procs.count > 1 ? "the " + std::to_string(procs.count) + " processes have " +
                                       std::to_string(all.size()) + " cpu device(s) each"
                                 : "this process has " + std::to_string(all.size()) + " cpu device(s)") +
                " (GRAFT_CPU_DEVICES) and no cuda devices");
  return *all[static_cast<size_t>(d.id() - runtime::global_device_id(procs.index, 0))];
}

Device public_device(const runtime::Device& d) {
  if (codegen::cuda::is_cuda_device(d)) return Device(d.kind(), d.id());
  return Device(d.kind(), runtime::global_device_id(runtime::processes().index, d.id()));
}

}  // namespace detail

using detail::public_device;
using detail::runtime_device;

namespace {

// The profile's frames for one site: the user's frame, then its named scopes
// from innermost to outermost (so `pprof -top` also totals by scope).
std::vector<runtime::ProfileFrame> frames_of(const runtime::AllocationSite& site) {
  std::vector<runtime::ProfileFrame> stack;
  if (site.file.empty())
    stack.push_back({site.op.empty() ? "<unknown>" : "<" + site.op + ">", "", 0});
  else
    stack.push_back({site.function.empty() ? site.file : site.function, site.file, site.line});
  size_t end = site.scope.size();
  while (end > 0) {
    size_t slash = site.scope.rfind('/', end - 1);
    size_t begin = slash == std::string::npos ? 0 : slash + 1;
    stack.push_back({"scope " + site.scope.substr(begin, end - begin), "", 0});
    end = slash == std::string::npos ? 0 : slash;
  }
  return stack;
}

}  // namespace

MemoryStats Device::memory_stats() const {
  runtime::AllocatorStats s = runtime_device(*this).memory_stats();
  return MemoryStats{s.bytes_in_use,   s.peak_bytes_in_use, s.bytes_limit,        s.bytes_reserved,
                     s.peak_bytes_reserved, s.num_allocs, s.largest_alloc_size, s.largest_free_block_bytes};
}

void Device::reset_peak_memory_stats() const { runtime_device(*this).allocator().reset_peak(); }

std::vector<Device> devices(std::string kind) {
  std::vector<Device> out;
  std::string k = kind;
  if (k.empty()) k = default_device().kind();
  if (k == "cpu") {
    for (int id = 0; id < runtime::global_device_count(); ++id) out.emplace_back("cpu", id);
  } else if (k == "cuda") {
    for (const runtime::Device* d : codegen::cuda::cuda_devices()) out.push_back(public_device(*d));
  } else {
    throw Error("devices: unknown device kind \"" + kind + "\"; the kinds are \"cpu\" and \"cuda\"");
  }
  return out;
}

int Device::process_index() const {
  if (kind_ == "cuda") return runtime::processes().index;  // a process sees only its own GPUs
  const int process = kind_ == "cpu" ? runtime::process_of_device(id_) : -1;
  return process < 0 ? 0 : process;
}

namespace {

// GRAFT_PLATFORMS, as JAX_PLATFORMS: a comma-separated list of kinds
// ("cuda,cpu"), the first with a device giving the default; unset: cuda:0
// when a real GPU is present (emulated ones do not count), else cpu:0.
Device choose_default_device() {
  const char* env = std::getenv("GRAFT_PLATFORMS");
  const std::string list = env ? env : "";
  if (list.empty())
    return codegen::cuda::real_gpu_present() ? public_device(*codegen::cuda::cuda_devices().at(0))
                                             : public_device(*runtime::devices()[0]);
  std::string missing;
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string kind = list.substr(at, comma - at);
    at = comma + 1;
    if (kind == "cpu") return public_device(*runtime::devices()[0]);
    if (kind == "cuda") {
      std::string why;
      if (codegen::cuda::cuda_available(&why) && !codegen::cuda::cuda_devices().empty())
        return public_device(*codegen::cuda::cuda_devices()[0]);
      missing += " cuda (" + (why.empty() ? std::string("no device") : why) + ")";
      continue;
    }
    throw Error("GRAFT_PLATFORMS=\"" + list + "\": unknown platform \"" + kind + "\"; the platforms are cpu and cuda");
  }
  throw Error("GRAFT_PLATFORMS=\"" + list + "\": none of its platforms has a device:" + missing);
}

}  // namespace

Device default_device() {
  static const Device chosen = choose_default_device();
  return chosen;
}

namespace detail {

runtime::Device& placement_device() {
  if (runtime::Device* scoped = runtime::scoped_device()) return *scoped;
  static runtime::Device& chosen = runtime_device(default_device());
  return chosen;
}

runtime::Device& fill_device() {
  if (ir::current_trace()) return runtime::current_device();
  runtime::Device& d = placement_device();
  return d.host_addressable() ? d : runtime::host_device();
}

void place_fresh(ArrayImpl& impl) {
  if (ir::current_trace() || !impl.buffer) return;
  runtime::Device& target = placement_device();
  if (&impl.buffer->device() != &target) impl.buffer = runtime::copy_onto(target, *impl.buffer);
}

}  // namespace detail

Device Array::device() const {
  const detail::ArrayImpl& impl = detail::checked_impl(*this, "device");
  if (impl.buffer) return public_device(impl.buffer->device());
  if (!impl.shards.empty()) return public_device(impl.shards[0]->device());  // a sharded array: where shard 0 is
  return public_device(runtime::current_device());
}

Array device_put(const Array& x, const Device& device, std::source_location where) {
  const detail::ArrayImpl& impl = detail::live_impl(x, "device_put");
  runtime::Device& target = runtime_device(device);
  if (impl.traced()) return x;
  runtime::SiteScope site(runtime::intern_site("device_put", ir::current_scope(), where.file_name(),
                                               where.function_name(), static_cast<int>(where.line())));
  const runtime::BufferPtr& source = detail::data_buffer(impl);
  if (&source->device() == &target) return x;
  return Array(detail::make_concrete(impl.type, runtime::copy_onto(target, *source)));
}

namespace profiler {

void save_device_memory_profile(const std::string& path, const Device& device) {
  runtime::Device& d = runtime_device(device);
  // One sample per (site, kind): pprof sums samples with equal stacks and labels anyway.
  std::map<std::pair<const runtime::AllocationSite*, std::string>, runtime::ProfileSample> by_site;
  for (const runtime::LiveAllocation& a : d.live_allocations()) {
    runtime::ProfileSample& s = by_site[{a.site, a.kind}];
    if (s.stack.empty()) {
      s.stack = frames_of(*a.site);
      s.count = 0;
      s.labels = {{"kind", a.kind}, {"device", d.name()}};
      if (!a.site->op.empty()) s.labels.emplace_back("op", a.site->op);
      if (!a.site->scope.empty()) s.labels.emplace_back("scope", a.site->scope);
    }
    s.count += 1;
    s.bytes += a.bytes;
  }
  std::vector<runtime::ProfileSample> samples;
  samples.reserve(by_site.size());
  for (auto& [key, sample] : by_site) samples.push_back(std::move(sample));
  runtime::write_memory_profile(path, samples);
}

}  // namespace profiler
}  // namespace graft
