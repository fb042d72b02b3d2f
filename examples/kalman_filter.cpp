// kalman_filter: a Kalman filter for a constant-velocity model, written
// with scan, linalg::solve and linalg::slogdet as one would in JAX, and its
// log-likelihood differentiated with respect to the process and measurement
// noise (as logs) to fit them by gradient ascent.
//
//   state s = (position, velocity), s' = F s + process noise (q Q0),
//   observation y = s + measurement noise (r I);
//   each step: predict, innovation v = y - m, S = P + r I, gain P S^-1,
//   log-likelihood -(log det(2 pi S) + v^T S^-1 v) / 2.
//
// The example checks what it relies on and exits non-zero otherwise: the
// filtered means and the log-likelihood against a plain C++ filter with 2x2
// inverses written out, and the gradient against central finite differences.
//
//   ./build/examples/kalman_filter
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "graft/graft.h"

using namespace graft;

// The scan's carry: the filtered mean and covariance and the log-likelihood so far.
// (A pytree is declared at namespace scope: GRAFT_PYTREE specialises graft::tree::Node.)
struct Filter {
  Array mean, cov, loglik;
};
GRAFT_PYTREE(Filter, mean, cov, loglik);

namespace {

constexpr double kDt = 0.1;

// Filtered means [T, 2] and the log-likelihood of ys [T, 2] at theta = (log q, log r).
std::pair<Array, Array> kalman(const Array& theta, const Array& ys) {
  const Array f = array<double>({{1, kDt}, {0, 1}});
  const Array q0 = array<double>({{kDt * kDt * kDt / 3, kDt * kDt / 2}, {kDt * kDt / 2, kDt}});
  const Array q = exp(theta[0]) * q0, r = exp(theta[1]) * eye(2, DType::f64);
  const Filter init{zeros({2}, DType::f64), eye(2, DType::f64), zeros({}, DType::f64)};
  auto step = [&](const Filter& s, const Array& y) {
    const Array m = matmul(f, s.mean);
    const Array p = matmul(matmul(f, s.cov), transpose(f, {1, 0})) + q;
    const Array v = y - m;
    const Array big_s = p + r;
    const Array gain_t = linalg::solve(big_s, p);  // S^-1 P = (P S^-1)^T, both symmetric
    const auto [sign, logdet] = linalg::slogdet(2 * std::numbers::pi * big_s);
    const Array loglik = s.loglik - 0.5 * (logdet + sum(v * linalg::solve(big_s, v)));
    const Array mean = m + matmul(v, gain_t);
    const Array cov = p - matmul(transpose(gain_t, {1, 0}), p);
    return std::make_pair(Filter{mean, cov, loglik}, mean);
  };
  auto [last, means] = scan(step, init, ys);
  return {means, last.loglik};
}

// The same filter in plain C++: 2x2 matrices, the inverse and determinant written out.
using M2 = std::array<double, 4>;  // row-major
M2 mul(const M2& a, const M2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
}
M2 tr(const M2& a) { return {a[0], a[2], a[1], a[3]}; }

std::pair<std::vector<double>, double> reference(double q, double r, const std::vector<double>& ys) {
  const M2 f{1, kDt, 0, 1};
  const M2 q0{kDt * kDt * kDt / 3, kDt * kDt / 2, kDt * kDt / 2, kDt};
  std::array<double, 2> m{0, 0};
  M2 p{1, 0, 0, 1};
  double loglik = 0;
  std::vector<double> means;
  for (size_t t = 0; t * 2 < ys.size(); ++t) {
    m = {m[0] + kDt * m[1], m[1]};
    p = mul(mul(f, p), tr(f));
    for (int i = 0; i < 4; ++i) p[i] += q * q0[i];
    const M2 s{p[0] + r, p[1], p[2], p[3] + r};
    const double det = s[0] * s[3] - s[1] * s[2];
    const M2 s_inv{s[3] / det, -s[1] / det, -s[2] / det, s[0] / det};
    const std::array<double, 2> v{ys[2 * t] - m[0], ys[2 * t + 1] - m[1]};
    const double quad = v[0] * (s_inv[0] * v[0] + s_inv[1] * v[1]) + v[1] * (s_inv[2] * v[0] + s_inv[3] * v[1]);
    loglik -= 0.5 * (std::log(4 * std::numbers::pi * std::numbers::pi * det) + quad);
    const M2 gain = mul(p, s_inv);
    m = {m[0] + gain[0] * v[0] + gain[1] * v[1], m[1] + gain[2] * v[0] + gain[3] * v[1]};
    const M2 gp = mul(gain, p);
    for (int i = 0; i < 4; ++i) p[i] -= gp[i];
    means.push_back(m[0]);
    means.push_back(m[1]);
  }
  return {means, loglik};
}

}  // namespace

int main() {
  // Simulate 100 steps with q = 0.5 and r = 0.04.
  const int64_t steps = 100;
  const double q_true = 0.5, r_true = 0.04;
  std::vector<double> ys;
  {
    const std::vector<double> w = random::normal(random::key(1), {steps, 2}, DType::f64).to_vector<double>();
    const std::vector<double> e = random::normal(random::key(2), {steps, 2}, DType::f64).to_vector<double>();
    double pos = 0, vel = 1;
    for (int64_t t = 0; t < steps; ++t) {
      // Process noise with covariance q Q0 (its Cholesky factor), then a noisy observation of both.
      const double a = std::sqrt(kDt * kDt * kDt / 3), b = (kDt * kDt / 2) / a, c = std::sqrt(kDt - b * b);
      pos += kDt * vel + std::sqrt(q_true) * a * w[2 * t];
      vel += std::sqrt(q_true) * (b * w[2 * t] + c * w[2 * t + 1]);
      ys.push_back(pos + std::sqrt(r_true) * e[2 * t]);
      ys.push_back(vel + std::sqrt(r_true) * e[2 * t + 1]);
    }
  }
  const Array y = array(ys, {steps, 2});
  bool ok = true;

  // graft's filter against the plain one, at a starting guess q = 1, r = 0.1.
  Array theta = array<double>({0.0, std::log(0.1)});
  auto [means, loglik] = kalman(theta, y);
  const auto [ref_means, ref_loglik] = reference(1.0, 0.1, ys);
  double worst = 0;
  const std::vector<double> got = means.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref_means[i]));
  std::printf("log-likelihood: graft %.10f, plain C++ %.10f; filtered means differ by at most %.2e\n",
              loglik.item<double>(), ref_loglik, worst);
  ok = ok && worst < 1e-10 && std::fabs(loglik.item<double>() - ref_loglik) < 1e-9 * std::fabs(ref_loglik);

  // The gradient against central differences.
  auto objective = [&](const Array& t) { return kalman(t, y).second; };
  const std::vector<double> g = grad(objective)(theta).to_vector<double>(), t0 = theta.to_vector<double>();
  for (size_t i = 0; i < 2; ++i) {
    const double h = 1e-5;
    std::vector<double> up = t0, down = t0;
    up[i] += h;
    down[i] -= h;
    const double fd = (objective(array(up, {2})).item<double>() - objective(array(down, {2})).item<double>()) / (2 * h);
    std::printf("d loglik / d theta[%zu]: graft %+.8f, finite differences %+.8f\n", i, g[i], fd);
    ok = ok && std::fabs(g[i] - fd) < 1e-6 * (1 + std::fabs(fd));
  }

  // Maximum likelihood: gradient ascent on (log q, log r), one jitted step.
  auto ascend = jit([&](const Array& t) {
    const auto [value, gt] = value_and_grad(objective)(t);
    return std::make_pair(value, t + 0.015 * gt);
  });
  double first = 0, last = 0;
  for (int it = 0; it < 40; ++it) {  // converged to 4 digits (200 steps of 0.005 give the same)
    auto [value, next] = ascend(theta);
    if (it == 0) first = value.item<double>();
    last = value.item<double>();
    theta = next;
  }
  const std::vector<double> fitted = exp(theta).to_vector<double>();
  std::printf("log-likelihood %.4f -> %.4f; q %.3f (true %.2f), r %.4f (true %.2f)\n", first, last, fitted[0], q_true,
              fitted[1], r_true);
  ok = ok && last > first && std::fabs(std::log(fitted[1] / r_true)) < 0.5;

  std::printf("kalman_filter: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
