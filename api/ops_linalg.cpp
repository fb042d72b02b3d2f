// matmul and dot_general, lowered to the dot_general primitive.
#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch, Loc loc) {
  DType d = ir::promote_types(a.dtype(), b.dtype());
  auto axes = [&](const std::vector<int>& v, int rank) {
    ir::Ints out;
    for (int x : v) out.push_back(detail::normalize_axis("dot_general", x, rank, loc));
    return out;
  };
  return detail::bind1(Op::dot_general, {detail::convert(a, d, loc), detail::convert(b, d, loc)},
                       {{"lhs_contracting", axes(contracting.first, a.ndim())},
                        {"rhs_contracting", axes(contracting.second, b.ndim())},
                        {"lhs_batch", axes(batch.first, a.ndim())},
                        {"rhs_batch", axes(batch.second, b.ndim())}},
                       loc);
}

// NumPy's matmul: 1-d operands gain (and then lose) an axis; leading axes
// broadcast and become dot_general batch dimensions.
Array matmul(const Array& a, const Array& b, Loc loc) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ShapeError("matmul: operands must have at least one axis, got " + detail::describe(a) + " and " +
                     detail::describe(b) + detail::where(loc));
  DType d = ir::promote_types(a.dtype(), b.dtype());
  Array x = detail::convert(a, d, loc), y = detail::convert(b, d, loc);
  bool a_vec = x.ndim() == 1, b_vec = y.ndim() == 1;
  if (a_vec) x = reshape(x, {1, x.shape()[0]}, loc);
  if (b_vec) y = reshape(y, {y.shape()[0], 1}, loc);
  int64_t k_a = x.shape().back(), k_b = y.shape()[y.ndim() - 2];
  if (k_a != k_b)
    throw ShapeError("matmul: contracting sizes differ: " + detail::describe(a) + " @ " + detail::describe(b) +
                     detail::where(loc));
  Shape xb(x.shape().begin(), x.shape().end() - 2), yb(y.shape().begin(), y.shape().end() - 2);
  Shape batch = detail::broadcast_shapes("matmul", std::vector<Shape>{xb, yb}, loc);
  Shape xs = batch, ys = batch;
  xs.insert(xs.end(), x.shape().end() - 2, x.shape().end());
  ys.insert(ys.end(), y.shape().end() - 2, y.shape().end());
  x = detail::broadcast_to_shape(x, xs, loc);
  y = detail::broadcast_to_shape(y, ys, loc);
  int nb = static_cast<int>(batch.size());
  ir::Ints bd(nb);
  for (int i = 0; i < nb; ++i) bd[i] = i;
  Array r = detail::bind1(Op::dot_general, {x, y},
                          {{"lhs_contracting", ir::Ints{nb + 1}}, {"rhs_contracting", ir::Ints{nb}},
                           {"lhs_batch", bd}, {"rhs_batch", bd}},
                          loc);
  Shape out = batch;
  if (!a_vec) out.push_back(x.shape()[nb]);
  if (!b_vec) out.push_back(y.shape()[nb + 1]);
  return reshape(r, out, loc);
}

}  // namespace graft
