// graft::linalg::expm (include/graft/linalg.h): the matrix exponential as
// jax.scipy.linalg.expm computes it, by scaling and squaring with Padé
// approximants (Higham, "The scaling and squaring method for the matrix
// exponential revisited", SIAM J. Matrix Anal. Appl. 26, 2005): a is scaled
// by 2^-s so that its 1-norm falls below the largest degree's bound, the
// degree is the smallest whose bound the norm meets (3, 5, 7, 9 or 13 in f64;
// 3, 5 or 7 in f32, as JAX), r = q(a)^-1 p(a), and r is squared s times.
// More than 16 squarings (a 1-norm over 2^17 times the bound) give NaNs, as
// JAX's max_squarings. Differentiable through the same steps.
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "api/lowering.h"
#include "graft/control_flow.h"
#include "graft/errors.h"
#include "graft/linalg.h"
#include "graft/ops.h"
#include "graft/vmap.h"

namespace graft::linalg {
namespace {

constexpr int kMaxSquarings = 16;

using Pade = std::pair<Array, Array>;  // (U, V): p = V + U, q = V - U

// U and V of the degree-m approximant from the coefficients b[0..m] (b[m] = 1).
Pade pade(const Array& a, const std::vector<double>& b) {
  const int64_t n = a.shape()[0];
  const Array ident = eye(n, a.dtype());
  const Array a2 = matmul(a, a);
  const size_t m = b.size() - 1;
  if (m == 13) {
    const Array a4 = matmul(a2, a2), a6 = matmul(a4, a2);
    const Array u =
        matmul(a, matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident);
    const Array v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident;
    return {u, v};
  }
  // Powers a^2, a^4, .. a^(m-1); U = a (sum of odd terms), V = sum of even terms.
  std::vector<Array> powers{ident, a2};
  while (2 * powers.size() <= m) powers.push_back(matmul(powers.back(), a2));
  Array odd = b[1] * powers[0], even = b[0] * powers[0];
  for (size_t k = 1; k < powers.size(); ++k) {
    odd = odd + b[2 * k + 1] * powers[k];
    even = even + b[2 * k] * powers[k];
  }
  return {matmul(a, odd), even};
}

const std::vector<double> kPade3{120., 60., 12., 1.};
const std::vector<double> kPade5{30240., 15120., 3360., 420., 30., 1.};
const std::vector<double> kPade7{17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
const std::vector<double> kPade9{17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                                 2162160.,     110880.,     3960.,       90.,        1.};
const std::vector<double> kPade13{64764752532480000.,
                                  32382376266240000.,
                                  7771770303897600.,
                                  1187353796428800.,
                                  129060195264000.,
                                  10559470521600.,
                                  670442572800.,
                                  33522128640.,
                                  1323241920.,
                                  40840800.,
                                  960960.,
                                  16380.,
                                  182.,
                                  1.};

// expm of one n x n matrix.
Array expm_matrix(const Array& a) {
  const bool f64 = a.dtype() == DType::f64;
  const Array l1 = norm(a, 1.0);
  // The degrees' 1-norm bounds (Higham's theta_m), the last one scaled to.
  const std::vector<double> bounds =
      f64 ? std::vector<double>{1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068e+0}
          : std::vector<double>{4.258730016922831e-1, 1.880152677804762e+0};
  const double max_norm = f64 ? 5.371920351148152 : 3.925724783138660;
  const Array squarings = maximum(zeros_like(l1), floor(log2(l1 / max_norm)));
  const Array scaled = a / exp2(squarings);
  Array degree = zeros_like(l1, DType::i32);  // how many bounds l1 reaches (np.digitize)
  for (double b : bounds) degree = degree + astype(l1 >= b, DType::i32);
  std::vector<std::function<Pade(const Array&)>> branches{[](const Array& x) { return pade(x, kPade3); },
                                                          [](const Array& x) { return pade(x, kPade5); },
                                                          [](const Array& x) { return pade(x, kPade7); }};
  if (f64) {
    branches.push_back([](const Array& x) { return pade(x, kPade9); });
    branches.push_back([](const Array& x) { return pade(x, kPade13); });
  }
  const auto [u, v] = switch_(degree, branches, scaled);
  const Array p = v + u, q = v - u;
  auto too_large = [](const Array& num, const Array&, const Array&) {
    return full_like(num, std::numeric_limits<double>::quiet_NaN());
  };
  auto compute = [](const Array& num, const Array& den, const Array& times) {
    auto square = [&times](const Array& r, const Array& i) {
      return std::make_pair(
          cond(
              i < times, [](const Array& x) { return matmul(x, x); }, [](const Array& x) { return x; }, r),
          zeros({}, r.dtype()));
    };
    return scan(square, solve(den, num), arange(kMaxSquarings, num.dtype())).first;
  };
  return cond(squarings > static_cast<double>(kMaxSquarings), too_large, compute, p, q, squarings);
}

}  // namespace

Array expm(const Array& a, Loc loc) {
  const Array x = detail::as_float(a, "linalg::expm", loc);
  const Shape& s = x.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError("linalg::expm: needs square matrices in the last two axes, got " + detail::describe(x) +
                     detail::where(loc));
  if (x.ndim() == 2) return expm_matrix(x);
  const Shape shape = x.shape();
  const int64_t n = shape.back();
  const Array flat = reshape(x, {-1, n, n});
  return reshape(vmap([](const Array& m) { return expm_matrix(m); })(flat), shape);
}

}  // namespace graft::linalg
