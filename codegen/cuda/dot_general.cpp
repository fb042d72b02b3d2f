#include "codegen/cuda/dot_general.h"

#include "graft/types.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::codegen::cuda {
namespace {

using ir::Ints;

bool is_run(const Ints& axes, int64_t first) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != first + static_cast<int64_t>(i)) return false;
  return true;
}

// Where an operand's contracting axes sit after its batch axes: at the end
// ("rows": [.., free, contract]) or right after the batch ("cols": [.., contract, free]).
enum class Place { end, start, neither };

Place place_of(const Ints& contracting, int64_t batch, int64_t rank) {
  const auto c = static_cast<int64_t>(contracting.size());
  if (is_run(contracting, rank - c)) return Place::end;
  if (is_run(contracting, batch)) return Place::start;
  return Place::neither;
}

int64_t product(const Shape& s, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t i = from; i < to; ++i) p *= s[static_cast<size_t>(i)];
  return p;
}

}  // namespace

std::optional<GemmCall> plan_dot_general(const ir::ValueType& lhs, const ir::ValueType& rhs, const ir::Attrs& attrs,
                                         std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<GemmCall> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (lhs.dtype != rhs.dtype || (lhs.dtype != DType::f32 && lhs.dtype != DType::f64))
    return refuse("cuBLAS GEMMs take f32 or f64 operands, not " + std::string(dtype_name(lhs.dtype)));
  const Ints& lb = ir::attr<Ints>(attrs, "lhs_batch", ir::Op::dot_general);
  const Ints& rb = ir::attr<Ints>(attrs, "rhs_batch", ir::Op::dot_general);
  const Ints& lc = ir::attr<Ints>(attrs, "lhs_contracting", ir::Op::dot_general);
  const Ints& rc = ir::attr<Ints>(attrs, "rhs_contracting", ir::Op::dot_general);
  const auto nb = static_cast<int64_t>(lb.size());
  if (!is_run(lb, 0) || !is_run(rb, 0)) return refuse("the batch axes do not lead both operands in order");
  const auto lrank = static_cast<int64_t>(lhs.shape.size()), rrank = static_cast<int64_t>(rhs.shape.size());
  const Place lp = place_of(lc, nb, lrank), rp = place_of(rc, nb, rrank);
  if (lp == Place::neither || rp == Place::neither)
    return refuse("the contracting axes are not one run at either end of an operand's non-batch axes");
  const auto nc = static_cast<int64_t>(lc.size());
  const int64_t B = product(lhs.shape, 0, nb);
  const int64_t K = lp == Place::end ? product(lhs.shape, lrank - nc, lrank) : product(lhs.shape, nb, nb + nc);
  const int64_t M = product(lhs.shape, nb, lrank) / (K ? K : 1);
  const int64_t N = product(rhs.shape, nb, rrank) / (K ? K : 1);
  if (K <= 1) return refuse("a contraction of " + std::to_string(K) + " elements is an outer product, not a GEMM");
  if (M == 0 || N == 0 || B == 0) return refuse("the result is empty");
  GemmCall g;
  g.f64 = lhs.dtype == DType::f64;
  g.m = N;
  g.n = M;
  g.k = K;
  g.batch = B;
  // cuBLAS's A: the rhs, [K, N] row-major (N x K column-major, as is) or [N, K] (transposed).
  g.trans_a = rp == Place::end;
  g.lda = g.trans_a ? K : N;
  g.stride_a = K * N;
  // cuBLAS's B: the lhs, [M, K] row-major (K x M column-major, as is) or [K, M] (transposed).
  g.trans_b = lp == Place::start;
  g.ldb = g.trans_b ? M : K;
  g.stride_b = M * K;
  g.ldc = N;
  g.stride_c = M * N;
  return g;
}

}  // namespace graft::codegen::cuda
