#include "codegen/cuda/library_names.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <vector>

namespace graft::codegen::cuda {
namespace {

namespace fs = std::filesystem;

// Where the dynamic loader looks: LD_LIBRARY_PATH, the directories of
// /etc/ld.so.conf.d (the toolkit adds its own there), the CUDA toolkit's
// usual home and the system's library directories.
std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH"))
    for (std::string s = env; !s.empty();) {
      const size_t colon = s.find(':');
      if (colon) dirs.emplace_back(s.substr(0, colon));
      s = colon == std::string::npos ? "" : s.substr(colon + 1);
    }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/etc/ld.so.conf.d", ec)) {
    std::ifstream conf(entry.path());
    for (std::string line; std::getline(conf, line);)
      if (!line.empty() && line[0] == '/') dirs.emplace_back(line);
  }
  for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                        "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"})
    dirs.emplace_back(d);
  return dirs;
}

// "what (file)" for the first of `names` found, "no what (none of ... found)" otherwise.
std::string named(const std::string& what, std::initializer_list<const char*> names,
                  const std::vector<fs::path>& dirs) {
  std::error_code ec;
  std::string tried;
  for (const char* name : names) {
    for (const fs::path& d : dirs)
      if (fs::exists(d / name, ec)) return what + " (" + name + ")";
    tried += (tried.empty() ? "" : ", ") + std::string(name);
  }
  return "no " + what + " (none of " + tried + " is installed)";
}

}  // namespace

std::string cuda_libraries_description() {
  const std::vector<fs::path> dirs = search_dirs();
  return named("NVRTC", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, dirs) + "; " +
         named("cuBLAS", {"libcublas.so.13", "libcublas.so.12"}, dirs) + "; " +
         named("cuSOLVER", {"libcusolver.so.12", "libcusolver.so.11"}, dirs) + "; " +
         named("cuFFT", {"libcufft.so.12", "libcufft.so.11"}, dirs);
}

}  // namespace graft::codegen::cuda
