// The non-template side of pmap: choosing devices, splitting arguments over
// them, running one replica per device on its own thread, and surfacing a
// failed replica's error without leaving the others waiting.
#include "graft/pmap.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>

#include "codegen/cpu/compiler.h"
#include "api/device_map.h"
#include "api/dispatch.h"
#include "api/sharded_array.h"
#include "graft/distributed.h"
#include "graft/errors.h"
#include "runtime/processes.h"
#include "runtime/replicas.h"

namespace graft::detail {

// With several processes the list is global and process-major: n devices
// of process 0, then n of process 1, ...
std::vector<Device> pmap_devices(const std::vector<Device>& requested, int64_t n) {
  const runtime::Processes& procs = runtime::processes();
  const std::vector<Device> local = distributed::local_devices();
  const int64_t total = n * procs.count;
  if (!requested.empty()) {
    if (static_cast<int64_t>(requested.size()) != total)
      throw ShapeError("pmap: the mapped axis has size " + std::to_string(n) +
                       (procs.count > 1 ? " in each of " + std::to_string(procs.count) + " processes" : "") + " but " +
                       std::to_string(requested.size()) + " devices were given; they must be equal" +
                       (procs.count > 1 ? " (" + std::to_string(total) + " devices, process-major)" : ""));
    for (size_t i = 0; i < requested.size(); ++i) {
      const Device& d = requested[i];
      const int process = static_cast<int>(static_cast<int64_t>(i) / n);
      if (procs.count > 1 && (d.kind() != "cpu" || runtime::process_of_device(d.id()) != process))
        throw Error("pmap: devices are listed process-major, " + std::to_string(n) + " per process; entry " +
                    std::to_string(i) + " (" + d.str() + ") should be a device of process " + std::to_string(process));
      if (process == procs.index) runtime_device(d);  // throws for a device that does not exist
      for (size_t j = 0; j < i; ++j)
        if (requested[j] == d)
          throw Error("pmap: device " + d.str() + " is listed twice; each replica needs its own device");
      if (d.kind() != requested[0].kind())
        throw Error("pmap: devices " + requested[0].str() + " and " + d.str() +
                    " are of different kinds; a pmap's replicas run on devices of one kind");
    }
    return requested;
  }
  if (n > static_cast<int64_t>(local.size()))
    throw ShapeError("pmap: the mapped axis has size " + std::to_string(n) + " but this process has only " +
                     std::to_string(local.size()) +
                     " device(s); one replica runs per device (set GRAFT_CPU_DEVICES for more virtual CPU devices)");
  std::vector<Device> out;
  for (int p = 0; p < procs.count; ++p)
    for (int64_t i = 0; i < n; ++i) out.emplace_back("cpu", runtime::global_device_id(p, static_cast<int>(i)));
  return out;
}

// The replicas' backend follows their devices, whatever the default device is.
Backend pmap_backend(const std::vector<Device>& devices) {
  if (!devices.empty() && devices[0].kind() == "cuda") return Backend::cuda;
  return codegen::cpu::cpu_compiler_available() ? Backend::cpu : Backend::interpreter;
}

namespace {

// Started as one of several processes but never joined them: every process
// computes alone, which is rarely what was meant.
void warn_if_uninitialized() {
  static std::atomic<bool> warned{false};
  if (runtime::processes().initialized || runtime::launched_process_count() <= 1 || warned.exchange(true)) return;
  std::fprintf(stderr,
               "graft: warning: an MPI launcher started %d processes but distributed::initialize() was not called; "
               "this pmap runs on this process's devices alone\n",
               runtime::launched_process_count());
}

}  // namespace

std::vector<Array> run_pmap(const Executable& exe, const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                            const std::vector<Device>& devices, const std::string& axis_name,
                            const std::vector<bool>& donated) {
  const runtime::Processes& procs = runtime::processes();
  warn_if_uninitialized();
  // This process's replicas: its slice of the process-major device list.
  const size_t n = devices.size() / static_cast<size_t>(procs.count);
  const int first_rank = procs.index * static_cast<int>(n);
  std::vector<runtime::Device*> targets;
  for (size_t r = 0; r < n; ++r) targets.push_back(&runtime_device(devices[static_cast<size_t>(first_rank) + r]));
  std::vector<std::vector<Array>> inputs(n);
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ArrayImpl& impl = live_impl(leaves[i], "pmap");
    if (impl.traced()) throw TracerLeakError("pmap: a traced value was passed outside the transform that traced it");
    ir::ValueType part = impl.type;
    if (dims[i] >= 0) part.shape.erase(part.shape.begin() + dims[i]);
    std::vector<runtime::BufferPtr> pieces = split_to_devices(impl, dims[i], targets);
    for (size_t r = 0; r < n; ++r) inputs[r].emplace_back(make_concrete(part, std::move(pieces[r])));
  }

  std::vector<std::vector<Array>> outputs(n);
  runtime::run_replicas(targets, first_rank, axis_name,
                        [&](size_t r) { outputs[r] = run_executable(exe, inputs[r], donated, JitOptions{}); });

  std::vector<Array> result;
  for (size_t k = 0; k < outputs[0].size(); ++k) {
    std::vector<runtime::BufferPtr> shards;
    for (size_t r = 0; r < n; ++r) shards.push_back(outputs[r][k].impl()->buffer);
    result.emplace_back(make_sharded(outputs[0][k].impl()->type, std::move(shards)));
  }
  return result;
}

std::vector<Array> place_pmap_outputs(std::vector<Array> sharded, const std::vector<int64_t>& out_dims) {
  for (size_t k = 0; k < sharded.size(); ++k) {
    const int64_t d = out_dims[k];
    if (d == 0) continue;
    if (d < 0) {  // the same on every replica: replica 0's, where it was computed
      sharded[k] = sharded[k].addressable_shards()[0];
      continue;
    }
    std::vector<int> perm;
    for (int a = 1; a < sharded[k].ndim(); ++a) perm.push_back(a);
    perm.insert(perm.begin() + d, 0);
    sharded[k] = transpose(sharded[k], perm);
  }
  return sharded;
}

void delete_donated(const std::vector<Array>& leaves, const std::vector<bool>& donated) {
  for (size_t i = 0; i < donated.size() && i < leaves.size(); ++i) {
    if (!donated[i]) continue;
    ArrayImpl& impl = *leaves[i].impl();
    impl.deleted = true;
    impl.buffer.reset();
    impl.shards.clear();
  }
}

std::vector<Array> pmap_bind(const Graph& body, const std::vector<Array>& captured, const std::vector<Array>& leaves,
                             const std::vector<int64_t>& dims, int64_t mapped_size,
                             const std::vector<int64_t>& out_dims, const std::vector<Device>& devices,
                             const std::string& axis_name, const std::source_location& site) {
  const runtime::Processes& procs = runtime::processes();
  std::vector<Array> operands = leaves;
  operands.insert(operands.end(), captured.begin(), captured.end());
  ir::Ints in_dims(dims.begin(), dims.end());
  in_dims.resize(operands.size(), -1);  // captured values: the same on every replica
  ir::Ints ids;
  for (const Device& d : devices) ids.push_back(d.id());
  ir::Attrs attrs{{"axis_name", axis_name},
                  {"axis_size", mapped_size * procs.count},
                  {"body", ir::Graphs{body.ir_ptr()}},
                  {"devices", ids},
                  {"in_dims", in_dims},
                  {"mapped_size", mapped_size},
                  {"out_dims", ir::Ints(out_dims.begin(), out_dims.end())}};
  return bind(ir::Op::pmap, operands, std::move(attrs), site);
}

namespace {
thread_local int t_pmap_body_depth = 0;
}  // namespace

PmapBodyScope::PmapBodyScope() { ++t_pmap_body_depth; }
PmapBodyScope::~PmapBodyScope() { --t_pmap_body_depth; }
bool PmapBodyScope::active() { return t_pmap_body_depth > 0; }

}  // namespace graft::detail
