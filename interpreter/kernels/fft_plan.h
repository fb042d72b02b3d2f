// Plans of graft's own FFT (fft_stockham.h): a length's radices with each
// stage's twiddle factors, and the twiddles of a long length's four-step
// split. Made once per length (in double, rounded to R) and kept in caches
// of bounded size (FftTableCache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "interpreter/kernels/fft_stockham.h"

namespace graft::interpreter {

// The largest prime factor a plan takes (as an O(p^2) butterfly).
inline constexpr int64_t kFftMaxRadix = 64;

// (cos, sin) of -2 pi r / q, in double, exact at multiples of pi / 2.
std::pair<double, double> root_of_unity(int64_t r, int64_t q);

template <class R>
struct FftPlan {
  FftPlanView<R> view;  // what the kernel reads: points into the members below
  std::vector<FftStageView<R>> stages;
  std::vector<std::vector<R>> tables;  // each stage's twiddles and roots
};

// Tables made once per key and kept while a cache holds at most kBytes of
// them: one that would pass that drops the others (whoever uses one holds
// it), so transforms of ever new lengths do not grow memory without bound.
template <class K, class V>
class FftTableCache {
 public:
  static constexpr size_t kBytes = size_t{64} << 20;
  // The table of key, made by make() (returning a shared_ptr<const V> of `bytes` bytes) if absent.
  template <class Make>
  std::shared_ptr<const V> get(const K& key, size_t bytes, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = tables_.find(key); it != tables_.end()) return it->second;
    std::shared_ptr<const V> made = make();
    if (held_ + bytes > kBytes) {
      tables_.clear();
      held_ = 0;
    }
    tables_.emplace(key, made);
    held_ += bytes;
    return made;
  }

 private:
  std::mutex mu_;
  std::map<K, std::shared_ptr<const V>> tables_;
  size_t held_ = 0;
};

// Whether a plan takes n (>= 1): no prime factor above kFftMaxRadix.
bool fft_plannable(int64_t n);

// The plan of length n (>= 2, fft_plannable).
template <class R>
std::shared_ptr<const FftPlan<R>> fft_plan(int64_t n);

// (re, im) of W_n^(k1 j2) at [k1 n2 + j2], n = n1 n2: the twiddles between a four-step's passes.
template <class R>
std::shared_ptr<const std::vector<R>> four_step_twiddles(int64_t n1, int64_t n2);

}  // namespace graft::interpreter
