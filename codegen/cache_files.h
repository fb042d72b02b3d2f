// Files of the compiled-kernel disk caches (codegen/cpu/compiler.cpp,
// codegen/cuda/module_cache.cpp).
#pragma once

#include <filesystem>
#include <string>

namespace graft::codegen {

// The whole file, or "" when it cannot be read.
std::string read_file(const std::filesystem::path& p);
// Writes (truncating); false when the write failed.
bool write_file(const std::filesystem::path& p, const std::string& text);
// Writes under a temporary name in the same directory, then renames, so a
// process sharing the directory never reads half a file. False on failure
// (nothing is left behind).
bool write_file_atomically(const std::filesystem::path& p, const std::string& text);

}  // namespace graft::codegen
