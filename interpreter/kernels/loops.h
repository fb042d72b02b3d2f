// Shared helpers of the interpreter's kernels: dtype dispatch and
// OpenMP-parallel loops over element ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <omp.h>

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"

namespace graft::interpreter {

// Calls f(std::type_identity<T>{}) with T the C++ type of dtype d.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::bool_: return f(std::type_identity<bool>{});
    case DType::i32: return f(std::type_identity<int32_t>{});
    case DType::i64: return f(std::type_identity<int64_t>{});
    case DType::u32: return f(std::type_identity<uint32_t>{});
    case DType::f32: return f(std::type_identity<float>{});
    case DType::f64: return f(std::type_identity<double>{});
  }
  throw Error("unknown dtype");
}

// Whether a batch of independent matrix problems is worth OpenMP threads:
// more than one, and about 2^15 multiply-adds in all.
inline bool parallel_batches(int64_t batches, int64_t work_per_batch) {
  return batches > 1 && batches * work_per_batch >= (int64_t{1} << 15);
}

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
