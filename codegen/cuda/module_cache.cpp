#include "codegen/cuda/module_cache.h"

#include <filesystem>
#include <functional>
#include <sstream>

#include "codegen/cache_files.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cuda/nvrtc.h"

namespace graft::codegen::cuda {

namespace fs = std::filesystem;

std::string cuda_cache_dir() { return (fs::path(cpu::cpu_cache_dir()).parent_path() / "cuda").string(); }

std::string cached_module_image(const std::string& source, const std::string& name, int arch, bool as_ptx) {
  std::string key = nvrtc_description() + "\n";
  for (const std::string& o : nvrtc_options()) key += o + " ";
  key += (as_ptx ? "compute_" : "sm_") + std::to_string(arch) + "\n" + source;
  std::ostringstream hex;
  hex << std::hex << std::hash<std::string>{}(key);
  const fs::path dir = cuda_cache_dir();
  const fs::path bin = dir / (hex.str() + ".bin"), keyfile = dir / (hex.str() + ".key");
  std::error_code ec;
  if (fs::exists(bin, ec) && read_file(keyfile) == key) {
    std::string image = read_file(bin);
    if (!image.empty()) return image;
  }
  std::string image = nvrtc_compile(source, name + ".cu", arch, as_ptx).image;
  fs::create_directories(dir, ec);
  if (!ec) {
    write_file_atomically(bin, image);
    write_file_atomically(keyfile, key);
  }
  return image;
}

}  // namespace graft::codegen::cuda
