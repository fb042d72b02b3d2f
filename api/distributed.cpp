// The public face of runtime/processes.h.
#include "graft/distributed.h"

#include "api/device_map.h"
#include "runtime/processes.h"

namespace graft::distributed {

void initialize(const InitializeOptions& options) {
  runtime::initialize_processes(options.process_count, options.process_index, options.cpu_devices);
}

bool is_initialized() { return runtime::processes().initialized; }
int process_index() { return runtime::processes().index; }
int process_count() { return runtime::processes().count; }

std::vector<Device> local_devices() {
  std::vector<Device> out;
  for (const runtime::Device* d : runtime::devices()) out.push_back(detail::public_device(*d));
  return out;
}

}  // namespace graft::distributed
