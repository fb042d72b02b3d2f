// Shared helpers of the interpreter's kernels: dtype dispatch and
// OpenMP-parallel loops over element ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <omp.h>

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"
#include "ir/element_type.h"

namespace graft::interpreter {

// Calls f(std::type_identity<T>{}) with T the C++ type of dtype d's
// elements (ir/element_type.h), for the dtypes kernels compute in: bool, the
// integers, f32 and f64. The halves reach the elementwise kernels as they
// are stored, and the other families' kernels widened to f32 (kernel.cpp);
// complex arrays have no computing kernels yet.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  if (ir::is_complex(d) || ir::is_half(d))
    throw UnsupportedError(std::string("no interpreter kernel computes on ") + dtype_name(d) + " here");
  return ir::visit_element_type(d, [&](auto tag) -> decltype(auto) {
    using T = typename decltype(tag)::type;
    if constexpr (ir::is_complex_type<T> || ir::is_half_type<T>)
      return (throw UnsupportedError(dtype_name(d)), f(std::type_identity<float>{}));  // unreachable; f's return type
    else
      return f(tag);
  });
}

// visit_dtype with the halves too, as float16 and bfloat16.
template <class F>
decltype(auto) visit_stored_dtype(DType d, F&& f) {
  if (ir::is_complex(d))
    throw UnsupportedError(std::string("no interpreter kernel computes on ") + dtype_name(d) + " yet");
  return ir::visit_element_type(d, [&](auto tag) -> decltype(auto) {
    using T = typename decltype(tag)::type;
    if constexpr (ir::is_complex_type<T>)
      return (throw UnsupportedError(dtype_name(d)), f(std::type_identity<float>{}));  // unreachable; f's return type
    else
      return f(tag);
  });
}

// Whether a batch of independent matrix problems is worth OpenMP threads:
// more than one, and about 2^15 multiply-adds in all.
inline bool parallel_batches(int64_t batches, int64_t work_per_batch) {
  return batches > 1 && batches * work_per_batch >= (int64_t{1} << 15);
}

// Matrices below this size factor faster on one thread than on OpenBLAS's
// threads (bench/linalg, f64, 2 cores: eigh at 256 7.5 ms single-threaded
// against 12.2 threaded, svd 16.2 against 24.1, qr 3.2 against 4.7; at 1024
// the threads win): the LAPACK kernels run such matrices inside an OpenMP
// team (over_batches' `parallel`), where OpenBLAS keeps to the calling
// thread, even a batch of one.
inline constexpr int64_t kThreadedLapackMin = 512;

// run(begin, end) over the batch's matrices: split among OpenMP threads when
// `parallel`, else called once outside any OpenMP region, where OpenBLAS
// threads each call (its threads ran 20x slower under an inactive
// `omp parallel if (false)`, measured at n = 256).
template <class Run>
inline void over_batches(int64_t batches, bool parallel, const Run& run) {
  if (!parallel) return run(0, batches);
#pragma omp parallel
  {
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    run(batches * me / threads, batches * (me + 1) / threads);
  }
}

// Runs f(begin, end) over [0, n) in chunks, on OpenMP threads when n is large.
// Chunks are fixed-size, so results never depend on the thread count.
template <class F>
void parallel_ranges(int64_t n, F&& f) {
  constexpr int64_t kChunk = 1 << 14;
  if (n < kParallelThreshold) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk));
}

template <class T>
const T* in_ptr(const KernelCall& call, size_t i) {
  return static_cast<const T*>(call.inputs[i].data);
}
template <class T>
T* out_ptr(const KernelCall& call, size_t i) {
  return static_cast<T*>(call.outputs[i].data);
}
inline int64_t out_elements(const KernelCall& call, size_t i = 0) { return call.outputs[i].type->num_elements(); }

}  // namespace graft::interpreter
