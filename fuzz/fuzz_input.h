// Reads a fuzzer's bytes as a stream of choices: small numbers most of the
// time, with a byte now and then selecting an extreme (the largest int64, a
// negative size, a NaN), so that inputs probe both the common paths and
// graft's checks of what no sensible caller passes. Past the end of the data
// every read gives 0, so any byte string is a complete program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace graft_fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool empty() const { return p_ == end_; }
  uint8_t byte() { return p_ == end_ ? 0 : *p_++; }
  // 0 .. n-1
  int pick(int n) { return n <= 0 ? 0 : static_cast<int>(byte() % static_cast<unsigned>(n)); }
  bool flip() { return byte() & 1; }

  // An integer for a size, an axis, an index or a count: mostly in
  // [-lo, hi], sometimes an extreme.
  int64_t small(int64_t lo, int64_t hi) {
    const uint8_t b = byte();
    if (b < 240) return -lo + static_cast<int64_t>(b % static_cast<unsigned>(lo + hi + 1));
    switch (b) {
      case 240: return std::numeric_limits<int64_t>::max();
      case 241: return std::numeric_limits<int64_t>::min();
      case 242: return int64_t{1} << 31;
      case 243: return -(int64_t{1} << 31);
      case 244: return int64_t{1} << 40;
      case 245: return std::numeric_limits<int32_t>::max();
      case 246: return -1;
      default: return static_cast<int64_t>(b) - 250;
    }
  }

  // A value for an element or an attribute: small integers, halves, and the
  // floating point specials.
  double value() {
    const uint8_t b = byte();
    switch (b % 16) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return -0.0;
      case 4: return std::numeric_limits<float>::denorm_min();
      case 5: return std::numeric_limits<float>::max();
      case 6: return 1e300;
      case 7: return static_cast<double>(std::numeric_limits<int32_t>::min());
      default: return (static_cast<int>(b) - 128) / 8.0;
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace graft_fuzz
