// CPU kernels of cholesky and triangular_solve, per matrix of a batch
// (leading axes), through Eigen on row-major maps; batches run in parallel.
//
// cholesky reads the lower triangle of each matrix and writes L (zeros above
// the diagonal); a matrix that is not positive definite gives a matrix of
// NaNs, as jax.lax.linalg.cholesky (so a caller can test for it without an
// exception in the middle of a jitted program). triangular_solve reads a's
// `lower` (or upper) triangle, its diagonal taken as ones with unit_diagonal,
// and solves op(a) x = b (left_side) or x op(a) = b, op(a) = a or a^T.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <limits>

#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

namespace graft::interpreter {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatMap = Eigen::Map<RowMajor<T>>;
template <class T>
using ConstMatMap = Eigen::Map<const RowMajor<T>>;

// Batches worth running in parallel: about 2^15 multiply-adds in all.
bool parallel_batches(int64_t batches, int64_t work_per_batch) {
  return batches > 1 && batches * work_per_batch >= (int64_t{1} << 15);
}

template <class T>
void cholesky_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back();
  const int64_t size = n * n, batches = n == 0 ? 0 : t.num_elements() / size;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* out = static_cast<T*>(call.outputs[0].data);
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * n / 3))
  for (int64_t k = 0; k < batches; ++k) {
    MatMap<T> l(out + k * size, n, n);
    l = ConstMatMap<T>(in + k * size, n, n).template triangularView<Eigen::Lower>();
    Eigen::LLT<Eigen::Ref<RowMajor<T>>, Eigen::Lower> llt(l);  // in place: l's lower triangle becomes L
    if (llt.info() != Eigen::Success) {
      l.setConstant(std::numeric_limits<T>::quiet_NaN());
      continue;
    }
    l.template triangularView<Eigen::StrictlyUpper>().setZero();
  }
}

// x = op(a)^-1 b or b op(a)^-1 in place in x (holding b), a's triangle `Mode`.
template <int Mode, class T>
void solve_one(const ConstMatMap<T>& a, MatMap<T>& x, bool left, bool transpose) {
  if (left) {
    if (transpose)
      a.template triangularView<Mode>().transpose().solveInPlace(x);
    else
      a.template triangularView<Mode>().solveInPlace(x);
  } else {
    if (transpose)
      a.template triangularView<Mode>().transpose().template solveInPlace<Eigen::OnTheRight>(x);
    else
      a.template triangularView<Mode>().template solveInPlace<Eigen::OnTheRight>(x);
  }
}

template <class T>
void triangular_solve_typed(const KernelCall& call) {
  const ir::ValueType& at = *call.inputs[0].type;
  const ir::ValueType& bt = *call.inputs[1].type;
  const bool left = int_attr(call, "left_side") != 0, lower = int_attr(call, "lower") != 0;
  const bool transpose = int_attr(call, "transpose_a") != 0, unit = int_attr(call, "unit_diagonal") != 0;
  const int64_t m = at.shape.back();
  const int64_t rows = bt.shape[bt.rank() - 2], cols = bt.shape[bt.rank() - 1];
  const int64_t a_size = m * m, b_size = rows * cols;
  int64_t batches = 1;
  for (int i = 0; i + 2 < bt.rank(); ++i) batches *= bt.shape[static_cast<size_t>(i)];
  const T* a = static_cast<const T*>(call.inputs[0].data);
  const T* b = static_cast<const T*>(call.inputs[1].data);
  T* out = static_cast<T*>(call.outputs[0].data);
  if (b_size == 0) return;
#pragma omp parallel for schedule(static) if (parallel_batches(batches, b_size * m))
  for (int64_t k = 0; k < batches; ++k) {
    ConstMatMap<T> ak(a + k * a_size, m, m);
    MatMap<T> x(out + k * b_size, rows, cols);
    x = ConstMatMap<T>(b + k * b_size, rows, cols);
    if (lower && unit)
      solve_one<Eigen::UnitLower>(ak, x, left, transpose);
    else if (lower)
      solve_one<Eigen::Lower>(ak, x, left, transpose);
    else if (unit)
      solve_one<Eigen::UnitUpper>(ak, x, left, transpose);
    else
      solve_one<Eigen::Upper>(ak, x, left, transpose);
  }
}

template <template <class> class Typed>
void float_kernel(const KernelCall& call) {
  if (call.inputs[0].type->dtype == DType::f64)
    Typed<double>::run(call);
  else
    Typed<float>::run(call);
}

template <class T>
struct Cholesky {
  static void run(const KernelCall& call) { cholesky_typed<T>(call); }
};
template <class T>
struct TriangularSolve {
  static void run(const KernelCall& call) { triangular_solve_typed<T>(call); }
};

}  // namespace

void cholesky_kernel(const KernelCall& call) { float_kernel<Cholesky>(call); }

void triangular_solve_kernel(const KernelCall& call) { float_kernel<TriangularSolve>(call); }

}  // namespace graft::interpreter
