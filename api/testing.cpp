// check_grads: finite differences and the dot-product test, recursively.
#include <cmath>
#include <sstream>

#include "graft/errors.h"
#include "graft/ops.h"
#include "graft/testing.h"

namespace graft::testing::detail {
namespace {

bool ir_is_float(const Array& a) { return a.dtype() == DType::f32 || a.dtype() == DType::f64; }

double tolerance(DType d) { return d == DType::f64 ? 1e-5 : 2e-3; }

// A deterministic, irregular direction of x's shape and dtype (seeded by salt).
Array direction(const Array& x, double salt) {
  Array i = astype(reshape(arange(x.size(), DType::i32), x.shape()), DType::f64);
  return astype(graft::sin(i * 1.7 + salt) + 0.25, x.dtype());
}

double inner(const std::vector<Array>& a, const std::vector<Array>& b) {
  double s = 0;
  for (size_t k = 0; k < a.size(); ++k) s += sum(astype(a[k], DType::f64) * astype(b[k], DType::f64)).item<double>();
  return s;
}

struct Worst {
  double excess = 0;  // how far past its tolerance
  std::string what;
};

void compare(const char* kind, int order, const std::vector<Array>& got, const std::vector<Array>& want, double tol,
             Worst& worst) {
  for (size_t k = 0; k < got.size(); ++k) {
    std::vector<double> g = astype(got[k], DType::f64).to_vector<double>();
    std::vector<double> w = astype(want[k], DType::f64).to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) {
      double err = std::abs(g[i] - w[i]), allowed = tol + tol * std::abs(w[i]);
      if (!(err <= allowed) && (err - allowed > worst.excess || worst.what.empty())) {
        std::ostringstream os;
        os << kind << " (order " << order << "): output " << k << " element " << i << " is " << g[i] << ", expected "
           << w[i] << " (difference " << err << ", tolerance " << allowed << ")";
        worst.excess = err - allowed;
        worst.what = os.str();
      }
    }
  }
}

void check(const FlatFn& f, const std::vector<Array>& x, int order, Modes modes, double eps, int level, Worst& worst) {
  if (order < 1) return;
  double tol = 0;
  std::vector<Array> v;
  for (size_t k = 0; k < x.size(); ++k) {
    if (!ir_is_float(x[k])) throw DTypeError("check_grads: argument leaf " + std::to_string(k) + " is not a float array");
    tol = std::max(tol, tolerance(x[k].dtype()));
    v.push_back(direction(x[k], 0.3 + level));
  }
  auto [y, t] = jvp(f, std::make_tuple(x), std::make_tuple(v));
  if (modes != Modes::rev) {
    std::vector<Array> hi, lo;
    for (size_t k = 0; k < x.size(); ++k) {
      Array x64 = astype(x[k], DType::f64), v64 = astype(v[k], DType::f64);
      hi.push_back(astype(x64 + v64 * eps, x[k].dtype()));
      lo.push_back(astype(x64 - v64 * eps, x[k].dtype()));
    }
    std::vector<Array> fh = f(hi), fl = f(lo), fd;
    for (size_t k = 0; k < fh.size(); ++k)
      fd.push_back((astype(fh[k], DType::f64) - astype(fl[k], DType::f64)) / (2 * eps));
    compare("jvp vs finite differences", level, t, fd, tol, worst);
    if (order > 1) {
      FlatFn tangent_of = [f, v](const std::vector<Array>& at) { return jvp(f, std::make_tuple(at), std::make_tuple(v)).second; };
      check(tangent_of, x, order - 1, Modes::fwd, eps, level + 1, worst);
    }
  }
  if (modes != Modes::fwd) {
    std::vector<Array> u;
    for (size_t k = 0; k < y.size(); ++k) u.push_back(direction(y[k], 1.1 + level));
    auto pulled = std::get<0>(vjp(f, x).second(u));
    double lhs = inner(pulled, v), rhs = inner(u, t);
    compare("vjp vs jvp (dot-product test)", level, {scalar(lhs, DType::f64)}, {scalar(rhs, DType::f64)}, tol, worst);
    if (order > 1) {
      FlatFn pullback_of = [f, u](const std::vector<Array>& at) { return std::get<0>(vjp(f, at).second(u)); };
      check(pullback_of, x, order - 1, Modes::rev, eps, level + 1, worst);
    }
  }
}

}  // namespace

void check_grads_flat(const FlatFn& f, const std::vector<Array>& x, int order, Modes modes, double eps) {
  Worst worst;
  check(f, x, order, modes, eps, 1, worst);
  if (!worst.what.empty()) throw Error("check_grads: " + worst.what);
}

}  // namespace graft::testing::detail
