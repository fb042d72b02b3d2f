// random::multivariate_normal (include/graft/random.h): JAX's "cholesky"
// method, mean + L z, on the cholesky primitive.
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

}  // namespace graft::random
