// Wall-clock timing for the benchmarks: the best of several repeats.
#pragma once

#include <algorithm>
#include <chrono>

template <class F>
double best_seconds(F&& f, int repeats = 5) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}
