// CPU kernel of eig, per matrix of a batch (leading axes): LAPACK's geev, as
// JAX's and NumPy's, so the eigenvalues come in its order and each
// eigenvector has unit 2-norm with its largest component real. A real matrix
// goes to sgeev/dgeev and its packed conjugate pairs are unpacked into
// complex vectors (column j + i column j+1, and its conjugate); a complex one
// to cgeev/zgeev. A matrix whose QR iteration does not converge gives NaNs,
// as JAX's. Matrices below kThreadedLapackMin run one per OpenMP thread. A build without
// OpenBLAS has no eig (Eigen's solver orders and scales differently).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "graft/errors.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

#ifdef GRAFT_HAVE_OPENBLAS
#include "interpreter/lapack_calls.h"
#endif

namespace graft::interpreter {
namespace {

#ifdef GRAFT_HAVE_OPENBLAS

// Row-major complex vectors out[i * n + j] (vector j in column j) from geev's
// column-major ones: a real T's packed pairs unpacked by wi, a complex T's
// copied.
template <class T, class C>
void unpack_vectors(const std::vector<T>& col, const std::vector<T>& wi, int64_t n, C* out) {
  for (int64_t j = 0; j < n; ++j) {
    const T* v = col.data() + j * n;
    if constexpr (lapack::is_complex_v<T>) {
      for (int64_t i = 0; i < n; ++i) out[i * n + j] = v[i];
    } else if (wi[static_cast<size_t>(j)] == T(0)) {
      for (int64_t i = 0; i < n; ++i) out[i * n + j] = C(v[i], 0);
    } else {  // the pair j, j+1: v_j = re + i im, v_{j+1} its conjugate
      const T* im = v + n;
      for (int64_t i = 0; i < n; ++i) {
        out[i * n + j] = C(v[i], im[i]);
        out[i * n + j + 1] = C(v[i], -im[i]);
      }
      ++j;
    }
  }
}

template <class T>
void eig_typed(const KernelCall& call) {
  using R = lapack::Real<T>;
  using C = std::complex<R>;
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back(), size = n * n;
  const int64_t batches = n == 0 ? 0 : t.num_elements() / size;
  const bool left = int_attr(call, "compute_left_eigenvectors") != 0;
  const bool right = int_attr(call, "compute_right_eigenvectors") != 0;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  C* w_out = static_cast<C*>(call.outputs[0].data);
  C* vl_out = left ? static_cast<C*>(call.outputs[1].data) : nullptr;
  C* vr_out = right ? static_cast<C*>(call.outputs[left ? 2 : 1].data) : nullptr;
  if (batches == 0) return;
  if (n > 0x7fffffff) throw Error("eig: matrices over 2^31 - 1 rows are beyond LAPACK's ints");
  ensure_blas_core();
  const int ni = static_cast<int>(n);
  const C nan(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(size)), w(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
    std::vector<T> vl(static_cast<size_t>(left ? size : 1)), vr(static_cast<size_t>(right ? size : 1));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      // A NaN or infinity: NaN results without calling geev, whose balancing
      // (gebal) refuses such a matrix through LAPACK's xerbla, printing to stderr.
      const bool finite = std::all_of(in + b * size, in + (b + 1) * size, [](const T& x) {
        if constexpr (lapack::is_complex_v<T>)
          return std::isfinite(x.real()) && std::isfinite(x.imag());
        else
          return std::isfinite(x);
      });
      int info = 1;
      if (finite) {
        lapack::transpose_copy(ni, ni, in + b * size, ni, a.data(), ni);
        info = lapack::geev(left ? 'V' : 'N', right ? 'V' : 'N', ni, a.data(), ni, w.data(), wi.data(), vl.data(),
                            left ? ni : 1, vr.data(), right ? ni : 1, ws);
      }
      C* wb = w_out + b * n;
      if (info != 0) {
        std::fill(wb, wb + n, nan);
        if (left) std::fill(vl_out + b * size, vl_out + (b + 1) * size, nan);
        if (right) std::fill(vr_out + b * size, vr_out + (b + 1) * size, nan);
        continue;
      }
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (lapack::is_complex_v<T>)
          wb[j] = w[static_cast<size_t>(j)];
        else
          wb[j] = C(w[static_cast<size_t>(j)], wi[static_cast<size_t>(j)]);
      }
      if (left) unpack_vectors(vl, wi, n, vl_out + b * size);
      if (right) unpack_vectors(vr, wi, n, vr_out + b * size);
    }
  };
  over_batches(batches, n < kThreadedLapackMin, run);
}

#endif

}  // namespace

void eig_kernel(const KernelCall& call) {
#ifdef GRAFT_HAVE_OPENBLAS
  switch (call.inputs[0].type->dtype) {
    case DType::f32: return eig_typed<float>(call);
    case DType::f64: return eig_typed<double>(call);
    case DType::c64: return eig_typed<std::complex<float>>(call);
    case DType::c128: return eig_typed<std::complex<double>>(call);
    default: throw UnsupportedError(std::string("eig: no kernel for ") + dtype_name(call.inputs[0].type->dtype));
  }
#else
  (void)call;
  throw UnsupportedError("eig: needs LAPACK's geev, and this build has no OpenBLAS");
#endif
}

}  // namespace graft::interpreter
