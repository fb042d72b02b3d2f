// gaussian_process: Gaussian-process regression with a squared-exponential
// kernel, its three hyperparameters (length scale, signal and noise
// variance, as logs) fitted by gradient descent on the negative log marginal
// likelihood, as one would in JAX:
//
//   nll = y^T K^-1 y / 2 + log det K / 2 + n log(2 pi) / 2,  K = k(x, x) + s2 I,
//
// through linalg::cholesky and cho_solve (log det K = 2 sum log diag L). The
// example checks what it relies on and exits non-zero otherwise: the
// gradient against central finite differences, log det K against
// linalg::slogdet, and the fitted posterior mean against the function the
// data came from.
//
//   ./build/examples/gaussian_process
#include <cmath>
#include <cstdio>
#include <numbers>

#include "graft/graft.h"

using namespace graft;

namespace {

// exp(log_signal) exp(-(x_i - x_j)^2 / (2 exp(2 log_length))), x a column [n, 1] and z [m, 1].
Array kernel(const Array& theta, const Array& x, const Array& z) {
  const Array d = x - transpose(z, {1, 0});
  return exp(theta[1]) * exp(-0.5 * square(d) / exp(2.0 * theta[0]));
}

// The negative log marginal likelihood of y at hyperparameters theta =
// (log length scale, log signal variance, log noise variance).
Array nll(const Array& theta, const Array& x, const Array& y) {
  const int64_t n = x.shape()[0];
  const Array k = kernel(theta, x, x) + exp(theta[2]) * eye(n, DType::f64);
  const Array l = linalg::cholesky(k);
  const Array alpha = linalg::cho_solve({l, true}, y);
  return 0.5 * sum(y * alpha) + sum(log(diagonal(l))) + 0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
}

}  // namespace

int main() {
  const int64_t n = 40;
  // Noisy samples of sin(3x) on [-2, 2].
  const Array x = reshape(linspace(-2.0, 2.0, n, DType::f64), {n, 1});
  const Array y = reshape(sin(3.0 * x) + 0.1 * random::normal(random::key(0), {n, 1}, DType::f64), {n});
  const Array& xs = x;
  bool ok = true;

  // The gradient against central differences at the starting point.
  Array theta = array<double>({std::log(1.0), std::log(0.5), std::log(0.2)});
  auto loss = [&](const Array& t) { return nll(t, xs, y); };
  const Array g = grad(loss)(theta);
  const std::vector<double> t0 = theta.to_vector<double>(), gv = g.to_vector<double>();
  for (size_t i = 0; i < 3; ++i) {
    const double h = 1e-5;
    std::vector<double> up = t0, down = t0;
    up[i] += h;
    down[i] -= h;
    const double fd = (loss(array(up, {3})).item<double>() - loss(array(down, {3})).item<double>()) / (2 * h);
    std::printf("d nll / d theta[%zu]: graft %+.8f, finite differences %+.8f\n", i, gv[i], fd);
    ok = ok && std::fabs(gv[i] - fd) < 1e-6 * (1 + std::fabs(fd));
  }

  // log det K two ways: through the Cholesky factor and through an LU factorization.
  const Array k0 = kernel(theta, xs, xs) + exp(theta[2]) * eye(n, DType::f64);
  const double via_cholesky = 2.0 * sum(log(diagonal(linalg::cholesky(k0)))).item<double>();
  const auto [sign, logdet] = linalg::slogdet(k0);
  std::printf("log det K: %.12f (cholesky), %.12f (slogdet, sign %+.0f)\n", via_cholesky, logdet.item<double>(),
              sign.item<double>());
  ok = ok && sign.item<double>() == 1 && std::fabs(via_cholesky - logdet.item<double>()) < 1e-9;

  // Fit: gradient descent on the NLL, one jitted step.
  auto step = jit([&](const Array& t) {
    const auto [value, gt] = value_and_grad(loss)(t);
    return std::make_pair(value, t - 0.01 * gt);
  });
  double first = 0, last = 0;
  for (int it = 0; it < 300; ++it) {
    auto [value, next] = step(theta);
    if (it == 0) first = value.item<double>();
    last = value.item<double>();
    theta = next;
  }
  const std::vector<double> fitted = exp(theta).to_vector<double>();
  std::printf("nll %.4f -> %.4f; length scale %.3f, signal variance %.3f, noise variance %.5f\n", first, last,
              fitted[0], fitted[1], fitted[2]);
  ok = ok && last < first;

  // The posterior mean at new points: k(x*, x) K^-1 y, against sin(3x*).
  const Array x_new = reshape(linspace(-1.8, 1.8, 50, DType::f64), {50, 1});
  const Array k = kernel(theta, xs, xs) + exp(theta[2]) * eye(n, DType::f64);
  const Array posterior = matmul(kernel(theta, x_new, xs), linalg::cho_solve(linalg::cho_factor(k), y));
  const double rmse = std::sqrt(mean(square(posterior - reshape(sin(3.0 * x_new), {50}))).item<double>());
  std::printf("posterior mean vs sin(3x): rmse %.4f (noise 0.1)\n", rmse);
  ok = ok && rmse < 0.1;

  std::printf("gaussian_process: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
