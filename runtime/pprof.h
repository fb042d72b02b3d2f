// Device-memory profiles in pprof's format (github.com/google/pprof,
// proto/profile.proto), so `go tool pprof` can show, trace and diff them.
// The encoder is hand-written: a profile needs only a few messages, and the
// protobuf wire format (varints and length-delimited fields) is small.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace graft::runtime {

// One frame of the user's stack that made an allocation.
struct ProfileFrame {
  std::string function;
  std::string file;
  int64_t line = 0;
};

// A group of allocations made from one stack.
struct ProfileSample {
  std::vector<ProfileFrame> stack;  // leaf (innermost) first
  int64_t count = 1;                // allocations/count
  int64_t bytes = 0;                // space/bytes
  std::vector<std::pair<std::string, std::string>> labels;  // string labels, e.g. kind=buffer, device=cpu:0
};

// The gzipped profile.proto bytes of a device-memory profile: sample types
// allocations/count and space/bytes (space is the default), one Function per
// distinct (function, file), one Location per distinct frame, one Mapping.
std::string encode_memory_profile(const std::vector<ProfileSample>& samples);

// Writes encode_memory_profile(samples) to path; throws graft::Error on I/O failure.
void write_memory_profile(const std::string& path, const std::vector<ProfileSample>& samples);

}  // namespace graft::runtime
