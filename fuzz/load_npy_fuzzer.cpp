// libFuzzer target: load_npy on arbitrary bytes. A malformed file must throw
// a graft::Error naming the problem; a file that loads must save and load
// back to the same bytes of data. The input is written to a file in
// /dev/shm (load_npy reads paths), one per process.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "graft/graft.h"
#include "fuzz_setup.h"
#include "ir/dtype.h"

namespace {
std::string path, path_back;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graft_fuzz::setup();
  const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  path = dir + "/graft_fuzz_npy_" + std::to_string(getpid()) + ".npy";
  path_back = dir + "/graft_fuzz_npy_" + std::to_string(getpid()) + "_back.npy";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  graft::Array x;
  try {
    x = graft::load_npy(path);
  } catch (const graft::Error&) {
    return 0;
  }
  graft::save_npy(path_back, x);
  graft::Array y = graft::load_npy(path_back);
  if (y.dtype() != x.dtype() || y.shape() != x.shape()) __builtin_trap();
  // Same bits (NaN payloads included): compare as raw bytes through u32/bool views of the data.
  const int64_t n = x.size();
  if (n > 0 && n < (1 << 20)) {
    const auto* a = static_cast<const unsigned char*>(x.unsafe_buffer_pointer());
    const auto* b = static_cast<const unsigned char*>(y.unsafe_buffer_pointer());
    const size_t bytes = static_cast<size_t>(n) * graft::ir::dtype_size(x.dtype());
    for (size_t i = 0; i < bytes; ++i)
      if (a[i] != b[i]) __builtin_trap();
  }
  return 0;
}
