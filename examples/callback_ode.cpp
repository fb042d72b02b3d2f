// callback_ode: fitting the parameters of an ODE whose right-hand side is a
// plain C++ function graft cannot see into (as a physics library's would
// be), called from inside jit(grad(...)) through pure_callback. Its
// derivative comes from the library too (a vector-Jacobian product), given
// to graft with custom_vjp, so reverse mode runs through the integrator.
//
//   Lotka-Volterra: y0' = a y0 - b y0 y1,  y1' = d y0 y1 - g y1,
//   p = (a, b, d, g), integrated by RK4 (a scan of 200 steps) from y(0);
//   loss(p) = |y(T) - target|^2.
//
// The example checks what it relies on and exits non-zero otherwise:
//   - loss(p) against the same RK4 written in plain C++ doubles;
//   - jit(grad(loss))(p) against central finite differences of that plain
//     C++ loss (no graft in the reference);
//   - the callbacks ran as many times as the integrator needs: 4 per step
//     forward and 4 VJPs per step backward, plus the right-hand sides the
//     backward scan recomputes (it recomputes a step's intermediates rather
//     than storing them: here the first three stages of each step).
//
//   ./build/examples/callback_ode
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "graft/graft.h"

using namespace graft;

namespace {

// ---- the "library": plain C++, no graft types
void lotka_volterra(const double* y, const double* p, double* dydt) {
  dydt[0] = p[0] * y[0] - p[1] * y[0] * y[1];
  dydt[1] = p[2] * y[0] * y[1] - p[3] * y[1];
}
// ct_y = J_y^T ct, ct_p = J_p^T ct.
void lotka_volterra_vjp(const double* y, const double* p, const double* ct, double* ct_y, double* ct_p) {
  ct_y[0] = ct[0] * (p[0] - p[1] * y[1]) + ct[1] * p[2] * y[1];
  ct_y[1] = ct[0] * (-p[1] * y[0]) + ct[1] * (p[2] * y[0] - p[3]);
  ct_p[0] = ct[0] * y[0];
  ct_p[1] = -ct[0] * y[0] * y[1];
  ct_p[2] = ct[1] * y[0] * y[1];
  ct_p[3] = -ct[1] * y[1];
}

constexpr int kSteps = 200;
constexpr double kDt = 0.05;
const std::array<double, 2> kY0 = {1.0, 0.5};
const std::array<double, 2> kTarget = {0.8, 1.6};

std::atomic<long> rhs_calls{0}, vjp_calls{0};

// ---- the bridge: the library's functions as graft functions
Array rhs(const Array& y, const Array& p) {
  // No copy in (y and p view graft's buffers) and none out (dydt is graft's output buffer).
  auto call = [](const Array& yv, const Array& pv, Array& dydt) {
    ++rhs_calls;
    const double* yd = static_cast<const double*>(yv.unsafe_buffer_pointer());
    const double* pd = static_cast<const double*>(pv.unsafe_buffer_pointer());
    lotka_volterra(yd, pd, writable_data<double>(dydt));
  };
  return pure_callback(call, ShapeDtype{{2}, f64}, y, p);
}

std::pair<Array, Array> rhs_vjp(const Array& y, const Array& p, const Array& ct) {
  auto call = [](const Array& yv, const Array& pv, const Array& cv, std::pair<Array, Array>& out) {
    ++vjp_calls;
    lotka_volterra_vjp(static_cast<const double*>(yv.unsafe_buffer_pointer()),
                       static_cast<const double*>(pv.unsafe_buffer_pointer()),
                       static_cast<const double*>(cv.unsafe_buffer_pointer()), writable_data<double>(out.first),
                       writable_data<double>(out.second));
  };
  return pure_callback(call, std::make_pair(ShapeDtype{{2}, f64}, ShapeDtype{{4}, f64}), y, p, ct);
}

// rhs with its reverse-mode derivative from the library.
const auto rhs_differentiable = custom_vjp(
    rhs, [](const Array& y, const Array& p) { return std::make_pair(rhs(y, p), std::make_pair(y, p)); },
    [](const std::pair<Array, Array>& res, const Array& ct) {
      auto [ct_y, ct_p] = rhs_vjp(res.first, res.second, ct);
      return std::make_tuple(ct_y, ct_p);
    });

Array rk4_solve(const Array& p) {
  auto step = [&p](const Array& y, const std::tuple<>&) {
    Array k1 = rhs_differentiable(y, p);
    Array k2 = rhs_differentiable(y + 0.5 * kDt * k1, p);
    Array k3 = rhs_differentiable(y + 0.5 * kDt * k2, p);
    Array k4 = rhs_differentiable(y + kDt * k3, p);
    return std::make_pair(y + kDt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), std::tuple<>{});
  };
  return scan(step, array({kY0[0], kY0[1]}), std::tuple<>{}, kSteps).first;
}

Array loss(const Array& p) {
  Array d = rk4_solve(p) - array({kTarget[0], kTarget[1]});
  return sum(d * d);
}

// ---- the reference: the same RK4 in plain doubles
double loss_reference(const std::array<double, 4>& p) {
  std::array<double, 2> y = kY0, k1, k2, k3, k4, t;
  for (int s = 0; s < kSteps; ++s) {
    lotka_volterra(y.data(), p.data(), k1.data());
    for (int i = 0; i < 2; ++i) t[i] = y[i] + 0.5 * kDt * k1[i];
    lotka_volterra(t.data(), p.data(), k2.data());
    for (int i = 0; i < 2; ++i) t[i] = y[i] + 0.5 * kDt * k2[i];
    lotka_volterra(t.data(), p.data(), k3.data());
    for (int i = 0; i < 2; ++i) t[i] = y[i] + kDt * k3[i];
    lotka_volterra(t.data(), p.data(), k4.data());
    for (int i = 0; i < 2; ++i) y[i] += kDt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return (y[0] - kTarget[0]) * (y[0] - kTarget[0]) + (y[1] - kTarget[1]) * (y[1] - kTarget[1]);
}

}  // namespace

int main() {
  const std::array<double, 4> p0 = {1.1, 0.9, 0.8, 1.2};
  const Array p = array({p0[0], p0[1], p0[2], p0[3]});
  bool ok = true;

  // The loss, through the callback, equals the plain C++ integrator's.
  const double value = jit(loss)(p).item<double>();
  const double value_ref = loss_reference(p0);
  std::printf("loss: graft %.12f   plain C++ %.12f\n", value, value_ref);
  ok &= std::fabs(value - value_ref) <= 1e-12 * std::fabs(value_ref) + 1e-15;

  // The gradient, through custom_vjp and the library's VJP, equals finite differences.
  auto dloss = jit(grad(loss));
  rhs_calls = vjp_calls = 0;
  const std::vector<double> g = dloss(p).to_vector<double>();
  std::printf("callbacks in one jit(grad) call: rhs %ld (%d forward, the rest recomputed backward), vjp %ld\n",
              rhs_calls.load(), 4 * kSteps, vjp_calls.load());
  ok &= rhs_calls == 7L * kSteps && vjp_calls == 4L * kSteps;
  rhs_calls = 0;
  jit(loss)(p);
  std::printf("callbacks in one jit(loss) call: rhs %ld\n", rhs_calls.load());
  ok &= rhs_calls == 4L * kSteps;
  const double h = 1e-6;
  for (int i = 0; i < 4; ++i) {
    std::array<double, 4> up = p0, down = p0;
    up[i] += h;
    down[i] -= h;
    const double fd = (loss_reference(up) - loss_reference(down)) / (2 * h);
    const double err = std::fabs(g[i] - fd);
    std::printf("dloss/dp%d: graft %+.9f   finite differences %+.9f   |diff| %.1e\n", i, g[i], fd, err);
    ok &= err <= 1e-6 * std::max(1.0, std::fabs(fd));
  }

  // A few steps of gradient descent on the parameters, all jitted.
  Array q = p;
  for (int it = 0; it < 50; ++it) q = q - 0.05 * dloss(q);
  const double fitted = jit(loss)(q).item<double>();
  std::printf("loss after 50 steps of gradient descent: %.6f (from %.6f)\n", fitted, value);
  ok &= fitted < value;

  std::printf(ok ? "callback_ode: ok\n" : "callback_ode: FAILED\n");
  return ok ? 0 : 1;
}
