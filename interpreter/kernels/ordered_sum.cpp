#include "interpreter/kernels/ordered_sum.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "interpreter/kernel.h"
#include "interpreter/kernels/sum_order.h"

namespace graft::interpreter {
namespace {

namespace so = graft::sum_order;

template <class F>
void for_floats(DType d, F&& f) {
  if (d == DType::f32) f(float{});
  else f(double{});
}

// Runs f(i) for i < n on OpenMP threads when `work` elements are many.
template <class F>
void parallel_items(int64_t n, int64_t work, F&& f) {
#pragma omp parallel for schedule(static) if (work >= kParallelThreshold && n > 1)
  for (int64_t i = 0; i < n; ++i) f(i);
}

template <class T>
void combine_rows_typed(T* p, int64_t n, int64_t stride, int64_t width, T* out) {
  // Node [i, i + 2s) = node [i, i + s) + node [i + s, i + 2s); a missing
  // right node is zero padding, and adding it changes nothing.
  for (int64_t s = 1; s < n; s *= 2)
    for (int64_t i = 0; i + s < n; i += 2 * s) {
      T* a = p + i * stride;
      const T* b = p + (i + s) * stride;
      for (int64_t j = 0; j < width; ++j) a[j] = a[j] + b[j];
    }
  if (n == 0) std::fill_n(out, width, T(0));
  else if (out != p) std::copy_n(p, width, out);
}

// Rows of at most one lane group (softmax over 10 classes, a norm of 3
// numbers), N a constant: sum_order's block sum of many rows at once,
// transposed so that each add of the tree runs across 64 rows (vectorised).
// Lane l of row r holds 0 + x[r][l] and lanes >= N are zero and skipped,
// exactly as block_sum adds them, so the bits are block_sum's.
template <class T, int N>
void short_rows(const T* in, int64_t rows, T* out) {
  if constexpr (N == 0) {
    std::fill_n(out, rows, T(0));
  } else {
    constexpr int64_t kBatch = 64;
    alignas(64) T v[N][kBatch];
    int64_t r0 = 0;
    for (; r0 + kBatch <= rows; r0 += kBatch) {
      for (int64_t r = 0; r < kBatch; ++r)
        for (int l = 0; l < N; ++l) v[l][r] = T(0) + in[(r0 + r) * N + l];
      int m = N;  // lanes >= m are zero
      for (int w = so::kLanes / 2; w > 0; w /= 2) {
        for (int l = 0; l < w && l + w < m; ++l)
          for (int64_t r = 0; r < kBatch; ++r) v[l][r] = v[l][r] + v[l + w][r];
        if (m > w) m = w;
      }
      std::copy_n(v[0], kBatch, out + r0);
    }
    for (; r0 < rows; ++r0) out[r0] = so::block_sum<T>(in + r0 * N, N);
  }
}

template <class T, int... N>
bool short_rows_of(const T* in, int64_t rows, int64_t len, T* out, std::integer_sequence<int, N...>) {
  return ((len == N ? (short_rows<T, N>(in, rows, out), true) : false) || ...);
}

template <class T>
void sum_rows_typed(const T* in, int64_t rows, int64_t len, T* out) {
  if (len <= so::kLanes && short_rows_of(in, rows, len, out, std::make_integer_sequence<int, so::kLanes + 1>{})) return;
  for (int64_t r = 0; r < rows; ++r) out[r] = so::row_sum<T>(in + r * len, len);
}

template <class T>
void rows_typed(const T* x, int64_t outer, int64_t rows, T* y) {
  if (rows <= kRowPiece) {
    const int64_t per = std::max<int64_t>(1, kRowPiece / std::max<int64_t>(rows, 1));  // rows per item
    parallel_items((outer + per - 1) / per, outer * rows, [&](int64_t i) {
      const int64_t o = i * per;
      sum_rows_typed<T>(x + o * rows, std::min(per, outer - o), rows, y + o);
    });
    return;
  }
  // Rows cut into pieces of kRowPiece (subtrees), summed in parallel.
  const int64_t m = (rows + kRowPiece - 1) / kRowPiece;
  std::vector<T> part(static_cast<size_t>(outer * m));
  parallel_items(outer * m, outer * rows, [&](int64_t i) {
    const int64_t o = i / m, p = i % m, lo = p * kRowPiece;
    part[static_cast<size_t>(i)] = so::row_sum<T>(x + o * rows + lo, std::min(kRowPiece, rows - lo));
  });
  for (int64_t o = 0; o < outer; ++o) combine_rows_typed<T>(part.data() + o * m, m, 1, 1, y + o);
}

// Columns: items of (outer, column chunk, row piece), each a ColumnSums.
template <class T>
void columns_typed(const T* x, int64_t outer, int64_t rows, int64_t inner, T* y) {
  const int64_t cw = std::min<int64_t>(inner, 1024), chunks = (inner + cw - 1) / cw;
  const int64_t piece = column_piece_rows(cw, kRowPiece), pieces = rows == 0 ? 1 : (rows + piece - 1) / piece;
  const int64_t items = outer * chunks * pieces;
  std::vector<T> part(pieces > 1 ? static_cast<size_t>(items * cw) : 0);
  const int64_t levels = so::column_levels(std::min(rows, piece));
#pragma omp parallel if (outer * rows * inner >= kParallelThreshold && items > 1)
  {
    std::vector<T> storage(static_cast<size_t>((levels + 1) * cw));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < items; ++i) {
      const int64_t p = i % pieces, c = (i / pieces) % chunks, o = i / pieces / chunks;
      const int64_t j0 = c * cw, w = std::min(cw, inner - j0), r0 = p * piece, r1 = std::min(rows, r0 + piece);
      so::ColumnSums<T> cs;
      cs.start(storage.data(), w, levels);
      cs.add(x + (o * rows + r0) * inner + j0, r1 - r0, inner);
      cs.finish(pieces > 1 ? part.data() + i * cw : y + o * inner + j0);
    }
  }
  if (pieces == 1) return;
  parallel_items(outer * chunks, outer * inner * pieces, [&](int64_t g) {
    const int64_t o = g / chunks, c = g % chunks, j0 = c * cw;
    combine_rows_typed<T>(part.data() + g * pieces * cw, pieces, cw, std::min(cw, inner - j0), y + o * inner + j0);
  });
}

}  // namespace

bool ordered_sum(ir::Op op, DType d) {
  return op == ir::Op::reduce_sum && (d == DType::f32 || d == DType::f64 || ir::is_half(d));
}

void sum_outer_rows_inner(DType d, const void* x, int64_t outer, int64_t rows, int64_t inner, void* y) {
  for_floats(d, [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1) rows_typed<T>(static_cast<const T*>(x), outer, rows, static_cast<T*>(y));
    else columns_typed<T>(static_cast<const T*>(x), outer, rows, inner, static_cast<T*>(y));
  });
}

void sum_rows(DType d, const void* x, int64_t rows, int64_t len, void* dst) {
  for_floats(d, [&](auto tag) {
    using T = decltype(tag);
    sum_rows_typed<T>(static_cast<const T*>(x), rows, len, static_cast<T*>(dst));
  });
}

void combine_item_rows(DType d, void* p, int64_t n, int64_t stride, int64_t width, void* out) {
  for_floats(d, [&](auto tag) {
    using T = decltype(tag);
    combine_rows_typed<T>(static_cast<T*>(p), n, stride, width, static_cast<T*>(out));
  });
}

int64_t column_piece_rows(int64_t width, int64_t elements) {
  int64_t rows = so::kColumnBlock;
  while (rows * 2 * std::max<int64_t>(width, 1) <= elements) rows *= 2;
  return rows;
}

struct StreamedSum::State {
  DType d = DType::f32;
  so::RowSum<float> row_f;
  so::RowSum<double> row_d;
  so::ColumnSums<float> col_f;
  so::ColumnSums<double> col_d;
  std::vector<double> storage;  // the columns' blocks and levels (as f32 or f64)
};

StreamedSum::StreamedSum() : s_(std::make_unique<State>()) {}
StreamedSum::~StreamedSum() = default;
StreamedSum::StreamedSum(StreamedSum&&) noexcept = default;
StreamedSum& StreamedSum::operator=(StreamedSum&&) noexcept = default;

void StreamedSum::start_row(DType d) {
  s_->d = d;
  if (d == DType::f32) s_->row_f = {};
  else s_->row_d = {};
}

void StreamedSum::add_to_row(const void* x, int64_t n) {
  if (s_->d == DType::f32) s_->row_f.add(static_cast<const float*>(x), n);
  else s_->row_d.add(static_cast<const double*>(x), n);
}

void StreamedSum::finish_row(void* out) {
  if (s_->d == DType::f32) *static_cast<float*>(out) = s_->row_f.finish();
  else *static_cast<double*>(out) = s_->row_d.finish();
}

void StreamedSum::start_columns(DType d, int64_t width, int64_t max_rows) {
  s_->d = d;
  const int64_t levels = so::column_levels(max_rows);
  const auto need = static_cast<size_t>((levels + 1) * width);
  if (s_->storage.size() < need) s_->storage.resize(need);
  if (d == DType::f32) s_->col_f.start(reinterpret_cast<float*>(s_->storage.data()), width, levels);
  else s_->col_d.start(s_->storage.data(), width, levels);
}

void StreamedSum::add_rows(const void* x, int64_t rows, int64_t stride) {
  if (s_->d == DType::f32) s_->col_f.add(static_cast<const float*>(x), rows, stride);
  else s_->col_d.add(static_cast<const double*>(x), rows, stride);
}

void StreamedSum::finish_columns(void* out) {
  if (s_->d == DType::f32) s_->col_f.finish(static_cast<float*>(out));
  else s_->col_d.finish(static_cast<double*>(out));
}

}  // namespace graft::interpreter
