// The interpreter's float sums in sum_order.h's order: the reduce kernel's
// (reduce.cpp) and the tiled evaluator's (fusion.cpp). Results depend only on
// the shapes, never on threads, tiles or work items.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::interpreter {

// Elements of a row (a power of two times sum_order::kRowBlock) one work item
// sums: a piece of a longer row is a subtree of its sum.
inline constexpr int64_t kRowPiece = int64_t{1} << 16;

// Whether a reduction `op` over dtype `d` sums in sum_order's order (float
// sums, the halves' in f32; integer sums wrap, and order does not change
// max, min, and, or).
bool ordered_sum(ir::Op op, DType d);

// y[o * inner + j] = the sum over r of x[(o * rows + r) * inner + j]: the
// reduce kernel on a reduced run of axes (inner == 1: rows; else columns).
void sum_outer_rows_inner(DType d, const void* x, int64_t outer, int64_t rows, int64_t inner, void* y);

// dst[r] = the sum of row r of `len` elements, r < rows.
void sum_rows(DType d, const void* x, int64_t rows, int64_t len, void* dst);

// out[0, width) = the trees over `n` rows of item sums, row i at
// p + i * stride elements (each item a whole subtree of its slices' sums but
// the last), combined in place as sum_order's padded perfect tree: the
// same bits as sum_order::Levels, vectorised across the row.
void combine_item_rows(DType d, void* p, int64_t n, int64_t stride, int64_t width, void* out);

// The rows of a column piece: a power of two times sum_order::kColumnBlock,
// about `elements` / width rows, so that pieces of one column are subtrees.
int64_t column_piece_rows(int64_t width, int64_t elements);

// A row (or the columns of a row block) of f32 or f64 summed from pieces that
// arrive in order: one work item of the tiled evaluator.
class StreamedSum {
 public:
  StreamedSum();
  ~StreamedSum();
  StreamedSum(const StreamedSum&) = delete;
  StreamedSum& operator=(const StreamedSum&) = delete;
  StreamedSum(StreamedSum&&) noexcept;
  StreamedSum& operator=(StreamedSum&&) noexcept;

  // A row: pieces of any lengths, then its sum into *out.
  void start_row(DType d);
  void add_to_row(const void* x, int64_t n);
  void finish_row(void* out);
  // Columns: `width` sums over at most `max_rows` rows, then out[0, width).
  void start_columns(DType d, int64_t width, int64_t max_rows);
  void add_rows(const void* x, int64_t rows, int64_t stride);
  void finish_columns(void* out);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace graft::interpreter
