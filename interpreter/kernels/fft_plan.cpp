#include "interpreter/kernels/fft_plan.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace graft::interpreter {
namespace {

// n's radices in the order the stages run: fours, a two, threes, fives, then other primes.
std::vector<int64_t> radices_of(int64_t n) {
  std::vector<int64_t> out;
  while (n % 4 == 0) {
    out.push_back(4);
    n /= 4;
  }
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  if (n > 1) out.push_back(n);
  return out;
}

template <class R>
std::shared_ptr<const FftPlan<R>> make_plan(int64_t n) {
  const std::vector<int64_t> radices = radices_of(n);
  auto plan = std::make_shared<FftPlan<R>>();
  plan->tables.resize(2 * radices.size());
  int64_t l = 1;
  for (size_t s = 0; s < radices.size(); ++s) {
    const int64_t p = radices[s], q = n / l, m = q / p;
    std::vector<R>& tw = plan->tables[2 * s];
    tw.reserve(static_cast<size_t>(2 * m * (p - 1)));
    for (int64_t t = 0; t < m; ++t)
      for (int64_t k = 1; k < p; ++k) {
        const auto [c, sn] = root_of_unity(t * k, q);
        tw.push_back(static_cast<R>(c));
        tw.push_back(static_cast<R>(sn));
      }
    std::vector<R>& root = plan->tables[2 * s + 1];
    for (int64_t k = 0; k < p; ++k) {
      const auto [c, sn] = root_of_unity(k, p);
      root.push_back(static_cast<R>(c));
      root.push_back(static_cast<R>(sn));
    }
    plan->stages.push_back({static_cast<int>(p), l, m, tw.data(), root.data()});
    l *= p;
  }
  plan->view = {n, static_cast<int>(plan->stages.size()), plan->stages.data()};
  return plan;
}

}  // namespace

std::pair<double, double> root_of_unity(int64_t r, int64_t q) {
  // 2 pi r / q = (pi / 2) (quadrant + rem / q): the angle within the quadrant is
  // taken below pi / 4 (cos and sin swapped above it), and the quadrant turned
  // exactly, so that W^0, W^(q/4), W^(q/2), ... are exact and W^r, W^(q-r) conjugate.
  const int64_t a = 4 * (((r % q) + q) % q), quadrant = a / q, rem = a % q;
  const bool upper = 2 * rem > q;
  const double angle = std::numbers::pi / 2 * static_cast<double>(upper ? q - rem : rem) / static_cast<double>(q);
  double c = std::cos(angle), s = std::sin(angle);
  if (upper) std::swap(c, s);
  for (int64_t t = 0; t < quadrant; ++t) {  // times i: (c, s) -> (-s, c)
    const double c0 = c;
    c = -s;
    s = c0;
  }
  return {c, -s};  // exp(-i angle)
}

bool fft_plannable(int64_t n) {
  for (int64_t p : radices_of(n))
    if (p > kFftMaxRadix) return false;
  return true;
}

template <class R>
std::shared_ptr<const FftPlan<R>> fft_plan(int64_t n) {
  static FftTableCache<int64_t, FftPlan<R>> cache;
  return cache.get(n, static_cast<size_t>(4 * n) * sizeof(R), [n] { return make_plan<R>(n); });
}

template <class R>
std::shared_ptr<const std::vector<R>> four_step_twiddles(int64_t n1, int64_t n2) {
  static FftTableCache<std::pair<int64_t, int64_t>, std::vector<R>> cache;
  return cache.get({n1, n2}, static_cast<size_t>(2 * n1 * n2) * sizeof(R), [n1, n2] {
    auto w = std::make_shared<std::vector<R>>(static_cast<size_t>(2 * n1 * n2));
    for (int64_t k1 = 0; k1 < n1; ++k1)
      for (int64_t j2 = 0; j2 < n2; ++j2) {
        const auto [c, sn] = root_of_unity(k1 * j2, n1 * n2);
        (*w)[static_cast<size_t>(2 * (k1 * n2 + j2))] = static_cast<R>(c);
        (*w)[static_cast<size_t>(2 * (k1 * n2 + j2) + 1)] = static_cast<R>(sn);
      }
    return std::shared_ptr<const std::vector<R>>(std::move(w));
  });
}

template std::shared_ptr<const FftPlan<float>> fft_plan<float>(int64_t);
template std::shared_ptr<const FftPlan<double>> fft_plan<double>(int64_t);
template std::shared_ptr<const std::vector<float>> four_step_twiddles<float>(int64_t, int64_t);
template std::shared_ptr<const std::vector<double>> four_step_twiddles<double>(int64_t, int64_t);

}  // namespace graft::interpreter
