// The CUDA devices a test runs on, for the cuda-labelled tests.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/cuda/driver.h"
#include "graft/graft.h"

namespace graft::test {

// The CUDA devices, or none with a warning; under the ctest (emulated
// driver) their absence is a failure, never a skip.
inline std::vector<Device> gpus() {
  std::vector<Device> out = devices("cuda");
  const char* driver = std::getenv("GRAFT_CUDA_DRIVER");
  if (driver && std::string(driver) == "emulated") REQUIRE(!out.empty());
  if (out.empty()) {
    std::string why;
    codegen::cuda::cuda_available(&why);
    WARN("no CUDA device: " << why);
  }
  return out;
}

}  // namespace graft::test
