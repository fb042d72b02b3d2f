// The non-template side of jacfwd, jacrev and hessian: the flattened
// standard basis and the cutting of batched results into Jacobian blocks.
#include "graft/errors.h"
#include "graft/jacobian.h"
#include "ir/dtype.h"

namespace graft::detail {

std::vector<int64_t> leaf_offsets(const std::vector<Array>& leaves) {
  std::vector<int64_t> off;
  int64_t at = 0;
  for (const Array& a : leaves) {
    off.push_back(at);
    at += a.size();
  }
  return off;
}

void check_float_leaves(const std::vector<Array>& leaves, const char* what) {
  for (size_t i = 0; i < leaves.size(); ++i)
    if (!ir::is_floating(leaves[i].dtype()))
      throw DTypeError(std::string(what) + " leaf " + std::to_string(i) + " is " + dtype_name(leaves[i].dtype()) +
                       "; Jacobians are taken of float arrays only (as in JAX)");
}

Array flat_basis(const std::vector<Array>& leaves, const char* what) {
  check_float_leaves(leaves, what);
  int64_t n = 0;
  DType dtype = DType::f32;
  for (const Array& a : leaves) {
    if (a.dtype() == DType::f64) dtype = DType::f64;
    n += a.size();
  }
  return astype(eye(n), dtype);
}

Array unflatten_piece(const Array& flat, int64_t offset, const Array& like) {
  Array piece = slice(flat, {offset}, {offset + like.size()});
  return astype(reshape(piece, like.shape()), like.dtype());
}

Array forward_block(const Array& columns, int64_t offset, const Array& in) {
  // columns: [N] + out.shape; rows [offset, offset + in.size) are this input's.
  Shape start(columns.shape().size(), 0), stop = columns.shape();
  start[0] = offset;
  stop[0] = offset + in.size();
  Array rows = slice(columns, start, stop);  // [n] + out.shape
  const int in_rank = in.ndim(), out_rank = columns.ndim() - 1;
  Shape s = in.shape();
  s.insert(s.end(), columns.shape().begin() + 1, columns.shape().end());
  Array split = reshape(rows, s);  // in.shape + out.shape
  std::vector<int> perm;
  for (int d = 0; d < out_rank; ++d) perm.push_back(in_rank + d);
  for (int d = 0; d < in_rank; ++d) perm.push_back(d);
  return transpose(split, perm);  // out.shape + in.shape
}

Array reverse_block(const Array& rows, int64_t offset, const Array& out) {
  // rows: [M] + in.shape; rows [offset, offset + out.size) are this output's.
  Shape start(rows.shape().size(), 0), stop = rows.shape();
  start[0] = offset;
  stop[0] = offset + out.size();
  Shape s = out.shape();
  s.insert(s.end(), rows.shape().begin() + 1, rows.shape().end());
  return reshape(slice(rows, start, stop), s);
}

}  // namespace graft::detail
