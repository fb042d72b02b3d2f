// Wall-clock timing for the benchmarks: the best of several repeats, or the
// spread (min, median, max) of the repeats where a noisy machine matters.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

template <class F>
double seconds_of(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double best_seconds(F&& f, int repeats = 5) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) best = std::min(best, seconds_of(f));
  return best;
}

struct TimeSpread {
  double min = 0, median = 0, max = 0;
};

inline TimeSpread spread_of(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {v.front(), med, v.back()};
}

// Each repeat timed on its own: min, median and max seconds.
template <class F>
TimeSpread timed_spread(F&& f, int repeats = 7) {
  std::vector<double> s;
  for (int r = 0; r < repeats; ++r) s.push_back(seconds_of(f));
  return spread_of(std::move(s));
}
