// random::multivariate_normal and random::orthogonal (include/graft/random.h):
// JAX's "cholesky" method, mean + L z, on the cholesky primitive, and
// Mezzadri's signed QR of normal draws on the qr primitive.
#include <algorithm>
#include <string>
#include <vector>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/random_keys.h"
#include "graft/errors.h"
#include "graft/linalg.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "ir/dtype.h"

namespace graft::random {

Array multivariate_normal(const Array& key, const Array& mean, const Array& cov, Shape shape,
                          std::source_location loc) {
  const char* fn = "random::multivariate_normal";
  const Shape& ms = mean.shape();
  const Shape& cs = cov.shape();
  if (ms.empty())
    throw ShapeError(std::string(fn) + ": mean must have rank >= 1, got " + detail::describe(mean) +
                     detail::where(loc));
  const int64_t n = ms.back();
  if (cs.size() < 2 || cs[cs.size() - 1] != n || cs[cs.size() - 2] != n)
    throw ShapeError(std::string(fn) + ": cov must be [..., n, n] for mean's n = " + std::to_string(n) + ", got " +
                     detail::describe(cov) + detail::where(loc));
  const DType d = ir::promote_types(detail::as_float(mean, fn, loc).dtype(), detail::as_float(cov, fn, loc).dtype());
  const Shape mean_batch(ms.begin(), ms.end() - 1), cov_batch(cs.begin(), cs.end() - 2);
  shape = detail::random_draw_shape(fn, {mean_batch, cov_batch}, shape, loc);
  const Array factor = linalg::cholesky(detail::convert(cov, d, loc), loc);  // [cov batch..., n, n]
  Shape z_shape = shape;
  z_shape.push_back(n);
  z_shape.push_back(1);
  const Array z = detail::bind1(ir::Op::reshape, {normal(key, Shape(z_shape.begin(), z_shape.end() - 1), d, loc)},
                                {{"new_sizes", ir::Ints(z_shape.begin(), z_shape.end())}}, loc);
  const Array lz = matmul(factor, z, loc);  // [shape..., n, 1]
  const Shape& ls = lz.shape();
  const Array v = detail::bind1(ir::Op::reshape, {lz}, {{"new_sizes", ir::Ints(ls.begin(), ls.end() - 1)}}, loc);
  const std::vector<Array> terms = detail::promote_and_broadcast(fn, {detail::convert(mean, d, loc), v}, loc);
  return detail::bind1(ir::Op::add, terms, {}, loc);
}

Array orthogonal(const Array& key, int64_t n, Shape shape, DType dtype, int64_t m, std::source_location loc) {
  const char* fn = "random::orthogonal";
  if (m < 0) m = n;
  if (n < 0) throw Error(std::string(fn) + ": n must be >= 0, got " + std::to_string(n) + detail::where(loc));
  if (!ir::is_floating(dtype))
    throw DTypeError(std::string(fn) + ": needs a float dtype, got " + dtype_name(dtype) + detail::where(loc));
  Shape z_shape = shape;
  z_shape.push_back(std::max(n, m));
  z_shape.push_back(std::min(n, m));
  const auto [q, r] = linalg::qr(normal(key, z_shape, dtype, loc), "reduced", loc);
  const Array x = q * expand_dims(sign(diagonal(r, 0, -2, -1, loc)), -2, loc);
  if (n >= m) return x;
  std::vector<int> perm;
  for (size_t i = 0; i < x.shape().size(); ++i) perm.push_back(static_cast<int>(i));
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(x, perm, loc);
}

}  // namespace graft::random
