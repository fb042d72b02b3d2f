#include "runtime/allocator_stats.h"

#include <cstdio>

namespace graft::runtime {

std::string format_bytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while ((value >= 1024.0 || value <= -1024.0) && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

namespace {

// "1048576 bytes (1.00 MiB)"
void append_bytes(std::string& out, int64_t bytes) {
  out += std::to_string(bytes);
  out += " bytes";
  if (bytes >= 1024 || bytes <= -1024) {
    out += " (";
    out += format_bytes(bytes);
    out += ')';
  }
}

void append_field(std::string& out, const char* name, int64_t value) {
  out += name;
  out += ": ";
  out += std::to_string(value);
  out += '\n';
}

}  // namespace

std::string to_string(const AllocatorStats& s) {
  std::string out;
  append_field(out, "bytes_in_use", s.bytes_in_use);
  append_field(out, "peak_bytes_in_use", s.peak_bytes_in_use);
  append_field(out, "bytes_limit", s.bytes_limit);
  append_field(out, "bytes_reserved", s.bytes_reserved);
  append_field(out, "peak_bytes_reserved", s.peak_bytes_reserved);
  append_field(out, "num_allocs", s.num_allocs);
  append_field(out, "largest_alloc_size", s.largest_alloc_size);
  append_field(out, "largest_free_block_bytes", s.largest_free_block_bytes);
  return out;
}

std::string out_of_memory_message(const char* allocator_name, size_t requested, const AllocatorStats& s,
                                  const std::string& detail) {
  std::string out = allocator_name;
  out += " allocator: out of memory: requested ";
  append_bytes(out, static_cast<int64_t>(requested));
  out += "; in use ";
  append_bytes(out, s.bytes_in_use);
  out += ", reserved ";
  append_bytes(out, s.bytes_reserved);
  out += ", limit ";
  if (s.bytes_limit > 0)
    append_bytes(out, s.bytes_limit);
  else
    out += "none";
  out += ", largest free block ";
  append_bytes(out, s.largest_free_block_bytes);
  out += '.';
  if (!detail.empty()) {
    out += ' ';
    out += detail;
  }
  return out;
}

}  // namespace graft::runtime
