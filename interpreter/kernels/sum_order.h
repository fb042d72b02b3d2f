// The order in which graft sums floating-point numbers, written once.
//
// Every summing reduction (reduce_sum, and so mean, var, logsumexp, softmax
// and norms) on every path (the interpreter's kernels and tiled evaluator,
// the generated C++ and the generated CUDA) adds its elements in the order
// defined here, so results are accurate (error O(eps log n), as NumPy's
// pairwise sum), deterministic, independent of the thread count, and equal
// bit for bit between the interpreter and compiled code (a tiered jit's
// result does not change when its compiled module arrives). The interpreter
// includes this header; the code generators splice its text into their
// modules' preludes at build time (cmake/embed_text.cmake), with
// GRAFT_SUM_FN defined as their function qualifiers.
//
// The order. A reduction's elements are numbered in row-major order of the
// reduced axes (its "row"), or, when kept axes follow the reduced ones,
// each output is a "column" summed over the reduced rows:
//   - a row of n elements is cut into blocks of kRowBlock; within a block,
//     element i goes to lane i % kLanes (each lane a sum from +0 in order)
//     and the lanes combine as a halving tree (lane l += lane l + w, for
//     w = 8, 4, 2, 1);
//   - a column of n rows is cut into blocks of kColumnBlock rows summed in
//     order from +0;
//   - the blocks' sums are the leaves of a perfect binary tree of adjacent
//     pairs, padded with zeros to a power of two (Levels below computes it
//     as a binary counter, streaming).
// Every partial sum starts from +0, so none is -0 and adding a padding zero
// is exact: a run of 2^k whole blocks, cut anywhere at a multiple of 2^k
// blocks, is a subtree, and pieces of such runs combined by Levels give the
// same bits as one pass. That is how the backends split a row or a column
// over threads and tiles without changing the result.
//
// Integer sums wrap (associative: any order gives the same result) and do
// not use this order.
#ifndef GRAFT_SUM_ORDER_H
#define GRAFT_SUM_ORDER_H

#ifndef GRAFT_SUM_EMBEDDED
#include <cstdint>
#endif
#ifndef GRAFT_SUM_FN
#define GRAFT_SUM_FN inline
#endif

namespace graft::sum_order {

constexpr int kLanes = 16;           // lanes of a row block
constexpr int64_t kRowBlock = 256;   // elements of a row block (a multiple of kLanes)
constexpr int64_t kColumnBlock = 32; // rows of a column block
constexpr int kMaxLevels = 64;       // levels of the tree over blocks (2^64 blocks)

// The sum of get(0) ... get(n - 1), n <= kRowBlock: one row block.
template <class T, class Get>
GRAFT_SUM_FN T block_sum_by(Get get, int64_t n) {
  if (n < kLanes) {
    // Lanes l >= n stay +0 and adding +0 changes nothing, so the halving
    // tree skips them: the same bits as the general path, without the zeros.
    T v[kLanes];
    for (int64_t l = 0; l < n; ++l) v[l] = T(0) + get(l);
    int64_t m = n;  // lanes >= m are zero
    for (int w = kLanes / 2; w > 0; w /= 2) {
      for (int l = 0; l < w && l + w < m; ++l) v[l] = v[l] + v[l + w];
      if (m > w) m = w;
    }
    return m > 0 ? v[0] : T(0);
  }
  T lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = T(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += get(i + l);
  if (i < n) {  // the tail padded with zeros (adding +0 to a lane changes nothing)
    T tail[kLanes];
    for (int l = 0; l < kLanes; ++l) tail[l] = T(0);
    for (int64_t l = 0; l < n - i; ++l) tail[l] = get(i + l);
    for (int l = 0; l < kLanes; ++l) lane[l] += tail[l];
  }
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0];
}

// The sum of x[0] ... x[n - 1], n <= kRowBlock.
template <class T>
GRAFT_SUM_FN T block_sum(const T* x, int64_t n) {
  return block_sum_by<T>([x](int64_t i) { return x[i]; }, n);
}

// The tree over block sums, as a binary counter: push the leaves in order;
// level k holds the sum of the last complete run of 2^k leaves not yet
// paired. finish() pads with zeros (which adds nothing).
template <class T>
struct Levels {
  T level[kMaxLevels];
  uint64_t count = 0;  // leaves pushed

  GRAFT_SUM_FN void push(T s) {
    int k = 0;
    for (uint64_t c = count; c & 1u; c >>= 1, ++k) s = level[k] + s;
    level[k] = s;
    ++count;
  }
  // The total, with `tail` (the sum of the leaves after the pushed ones, a
  // subtree or a padded one) as the last leaf; tail = 0 for none.
  GRAFT_SUM_FN T finish(T tail) const {
    T acc = tail;
    for (int k = 0; k < kMaxLevels; ++k)
      if ((count >> k) & 1u) acc = level[k] + acc;
    return acc;
  }
  // The total of the pushed leaves alone.
  GRAFT_SUM_FN T finish() const {
    T acc = T(0);
    bool any = false;
    for (int k = 0; k < kMaxLevels; ++k) {
      if (!((count >> k) & 1u)) continue;
      acc = any ? level[k] + acc : level[k];
      any = true;
    }
    return acc;
  }
};

// The sum of a row of n elements, get(i) its i-th.
template <class T, class Get>
GRAFT_SUM_FN T row_sum_by(Get get, int64_t n) {
  if (n <= kRowBlock) return block_sum_by<T>(get, n);
  Levels<T> lv;
  int64_t b = 0;
  for (; b + kRowBlock < n; b += kRowBlock) lv.push(block_sum_by<T>([&](int64_t i) { return get(b + i); }, kRowBlock));
  return lv.finish(block_sum_by<T>([&](int64_t i) { return get(b + i); }, n - b));
}

// The sum of the row x[0] ... x[n - 1].
template <class T>
GRAFT_SUM_FN T row_sum(const T* x, int64_t n) {
  return row_sum_by<T>([x](int64_t i) { return x[i]; }, n);
}

// A row summed from pieces that arrive in order, of any lengths.
template <class T>
struct RowSum {
  Levels<T> lv;
  T pending[kRowBlock];
  int64_t held = 0;  // elements in `pending`

  GRAFT_SUM_FN void add(const T* x, int64_t n) {
    while (held > 0 && n > 0) {
      pending[held++] = *x++;
      --n;
      if (held == kRowBlock) {
        lv.push(block_sum<T>(pending, kRowBlock));
        held = 0;
      }
    }
    for (; n >= kRowBlock; x += kRowBlock, n -= kRowBlock) lv.push(block_sum<T>(x, kRowBlock));
    for (int64_t i = 0; i < n; ++i) pending[held++] = x[i];
  }
  GRAFT_SUM_FN T finish() const { return held > 0 ? lv.finish(block_sum<T>(pending, held)) : lv.finish(); }
};

// Column sums over rows that arrive in order: out[j] = sum over rows r of
// row_r[j], j < width. The caller gives storage for (levels + 1) * width
// elements, levels = the number of bits of the most column blocks it will
// add (column_levels).
template <class T>
struct ColumnSums {
  T* block = nullptr;  // [width]: the current block's sums
  T* level = nullptr;  // [levels][width]
  int64_t width = 0, levels = 0;
  int64_t rows = 0;    // rows added
  uint64_t count = 0;  // blocks pushed

  GRAFT_SUM_FN void start(T* storage, int64_t w, int64_t lv) {
    block = storage;
    level = storage + w;
    width = w;
    levels = lv;
    rows = 0;
    count = 0;
  }
  GRAFT_SUM_FN void push_block() {
    int64_t k = 0;
    for (uint64_t c = count; c & 1u; c >>= 1, ++k) {
      const T* l = level + k * width;
      for (int64_t j = 0; j < width; ++j) block[j] = l[j] + block[j];
    }
    T* dst = level + k * width;
    for (int64_t j = 0; j < width; ++j) dst[j] = block[j];
    ++count;
  }
  // Adds n rows, row r at x + r * stride.
  GRAFT_SUM_FN void add(const T* x, int64_t n, int64_t stride) {
    for (int64_t r = 0; r < n; ++r, ++rows) {
      const T* row = x + r * stride;
      if (rows % kColumnBlock == 0) {
        if (rows > 0) push_block();
        for (int64_t j = 0; j < width; ++j) block[j] = T(0) + row[j];
      } else {
        for (int64_t j = 0; j < width; ++j) block[j] += row[j];
      }
    }
  }
  // out[j] = the column sums (0 when no row was added).
  GRAFT_SUM_FN void finish(T* out) const {
    for (int64_t j = 0; j < width; ++j) out[j] = rows > 0 ? block[j] : T(0);
    for (int64_t k = 0; k < levels; ++k) {
      if (!((count >> k) & 1u)) continue;
      const T* l = level + k * width;
      for (int64_t j = 0; j < width; ++j) out[j] = l[j] + out[j];
    }
  }
};

// The levels a ColumnSums needs for `rows` rows.
GRAFT_SUM_FN int64_t column_levels(int64_t rows) {
  int64_t blocks = (rows + kColumnBlock - 1) / kColumnBlock, k = 0;
  while (blocks > 1) blocks = (blocks + 1) / 2, ++k;
  return k + 1;
}

// The sum of one column of n rows, get(r) its r-th row's element.
template <class T, class Get>
GRAFT_SUM_FN T column_sum_by(Get get, int64_t n) {
  if (n <= 0) return T(0);
  Levels<T> lv;
  int64_t b = 0;
  for (;; b += kColumnBlock) {
    T s = T(0);
    const int64_t e = b + kColumnBlock < n ? b + kColumnBlock : n;
    for (int64_t r = b; r < e; ++r) s += get(r);
    if (e == n) return lv.finish(s);
    lv.push(s);
  }
}

}  // namespace graft::sum_order

#endif  // GRAFT_SUM_ORDER_H
