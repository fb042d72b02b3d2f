// An allocator's statistics, exact to the byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graft::runtime {

struct AllocatorStats {
  int64_t bytes_in_use = 0;        // held by live allocations (as the allocator rounds them)
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_limit = 0;         // the most it may take from the system (0: no limit)
  int64_t bytes_reserved = 0;      // taken from the system now
  int64_t peak_bytes_reserved = 0;
  int64_t num_allocs = 0;          // allocations served so far
  int64_t largest_alloc_size = 0;  // the largest single request served so far (as requested)
  int64_t largest_free_block_bytes = 0;  // the largest free chunk within reserved memory now
};

// "1.50 MiB": bytes in the largest binary unit that keeps the number >= 1.
std::string format_bytes(int64_t bytes);

// One line per field, for logs and error messages.
std::string to_string(const AllocatorStats& stats);

// The message of the OutOfMemoryError an allocator throws: the bytes
// requested, in use, reserved, the limit and the largest free block, each as
// an exact byte count followed by a readable size. `detail` (may be empty) is
// appended as a last sentence.
std::string out_of_memory_message(const char* allocator_name, size_t requested, const AllocatorStats& stats,
                                  const std::string& detail = {});

}  // namespace graft::runtime
