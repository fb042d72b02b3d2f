#include "codegen/cache_files.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace graft::codegen {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

bool write_file_atomically(const std::filesystem::path& p, const std::string& text) {
  static std::atomic<int> counter{0};
  const std::filesystem::path tmp = p.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::error_code ec;
  if (!write_file(tmp, text)) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace graft::codegen
