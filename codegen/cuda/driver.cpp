// Choosing the process's CUDA driver (driver.h): GRAFT_CUDA_DRIVER, read once.
#include "codegen/cuda/driver.h"

#include <cstdlib>
#include <mutex>

#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

struct Chosen {
  std::unique_ptr<CudaDriver> driver;
  std::string why;  // when driver is null
};

const Chosen& chosen() {
  static const Chosen c = [] {
    Chosen out;
    const char* env = std::getenv("GRAFT_CUDA_DRIVER");
    const std::string choice = env ? env : "";
    try {
      out.driver = choice == "emulated" ? make_emulated_driver()
                                        : load_driver_library(choice.empty() ? "libcuda.so.1" : choice);
    } catch (const Error& e) {
      out.why = e.what();
    }
    return out;
  }();
  return c;
}

}  // namespace

CudaDriver& cuda_driver() {
  const Chosen& c = chosen();
  if (!c.driver) throw UnsupportedError(c.why);
  return *c.driver;
}

bool cuda_available(std::string* why) {
  const Chosen& c = chosen();
  if (!c.driver && why) *why = c.why;
  return c.driver && c.driver->device_count() > 0;
}

}  // namespace graft::codegen::cuda
