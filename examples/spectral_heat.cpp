// spectral_heat: the heat equation u_t = kappa u_xx on a periodic interval,
// stepped exactly in Fourier space with rfft/irfft as one would with
// jnp.fft, and the gradient of the final energy E = integral of u(T)^2 with
// respect to the initial temperature and to the diffusivity.
//
//   each step: u <- irfft(rfft(u) * exp(-kappa k^2 dt)), k the wavenumbers.
//
// The example checks what it relies on and exits non-zero otherwise:
//   - the final state against the analytic solution of
//     u0 = sin x + cos 3x / 2: e^(-kappa T) sin x + e^(-9 kappa T) cos 3x / 2;
//   - dE/du0 against its closed form: diffusion is self-adjoint, so
//     dE/du0 = 2 dx u(2T), the solution run for twice as long;
//   - dE/dkappa against central finite differences.
//
//   ./build/examples/spectral_heat
#include <cmath>
#include <cstdio>
#include <numbers>

#include "graft/graft.h"

using namespace graft;

namespace {

constexpr int64_t kN = 128;
constexpr int kSteps = 50;
constexpr double kDt = 0.01;

// The state after `steps` steps of length kDt from u0, at diffusivity kappa (a scalar Array).
Array solve(const Array& u0, const Array& kappa, int steps) {
  const Array k = fft::rfftfreq(kN, 1.0 / kN, f64);  // wavenumbers 0 .. N/2 on [0, 2 pi)
  const Array decay = exp(-kappa * k * k * kDt);     // one step's factor per mode
  Array u = u0;
  for (int s = 0; s < steps; ++s) u = fft::irfft(fft::rfft(u) * decay, kN);
  return u;
}

double max_abs(const Array& x) { return max(abs(x)).item<double>(); }

}  // namespace

int main() {
  const double dx = 2 * std::numbers::pi / kN;
  const Array x = arange(kN, f64) * dx;
  const Array u0 = sin(x) + 0.5 * cos(3.0 * x);
  const Array kappa = scalar(0.3, f64);
  const double t = kSteps * kDt, kap = 0.3;

  // 1. The solver against the analytic solution.
  const Array u = jit([](const Array& a, const Array& k) { return solve(a, k, kSteps); })(u0, kappa);
  const Array exact = std::exp(-kap * t) * sin(x) + 0.5 * std::exp(-9 * kap * t) * cos(3.0 * x);
  const double state_err = max_abs(u - exact);
  std::printf("max |u(T) - exact|             %.3e\n", state_err);

  // 2. The gradient of the final energy with respect to u0 and kappa.
  auto energy = [dx](const Array& a, const Array& k) { return sum(square(solve(a, k, kSteps))) * dx; };
  const auto [du0, dkappa] = jit(grad<0, 1>(energy))(u0, kappa);
  const Array closed_form = 2.0 * dx * solve(u0, kappa, 2 * kSteps);
  const double du0_err = max_abs(du0 - closed_form) / max_abs(closed_form);
  std::printf("dE/du0 vs 2 dx u(2T), relative %.3e\n", du0_err);
  const double h = 1e-5;
  const double fd =
      (energy(u0, scalar(kap + h, f64)).item<double>() - energy(u0, scalar(kap - h, f64)).item<double>()) / (2 * h);
  const double dk = dkappa.item<double>();
  const double dk_err = std::abs(dk - fd) / std::abs(fd);
  std::printf("dE/dkappa %.6f, finite differences %.6f, relative %.3e\n", dk, fd, dk_err);

  const bool ok = state_err < 1e-12 && du0_err < 1e-12 && dk_err < 1e-6;
  std::printf("spectral_heat: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
