// CPU kernel of conv_general_dilated: the convolution as GEMMs over patches
// of lhs gathered into a buffer (im2col), per feature (or batch) group, in
// any layout. Output element (b, o, p) sums lhs at input position
// p * stride + w * rhs_dilation - low padding (taken where it lands on an
// undilated lhs element; zero elsewhere) times rhs[o, i, w] over the
// window offsets w and the group's input features i. Two arrangements of
// the same sum, chosen by which of lhs's batch and feature dimensions lies
// closer in memory (the one gathered in runs):
//  - rows: patches, one row per (b, p) and one column per (w, i): a forward
//    convolution in NHWC, and its data gradient; row blocks run on OpenMP
//    threads, each a single-threaded GEMM writing its rows of the output.
//  - columns: one row per (i, w) and one column per (p, b), multiplied
//    transposed: the weight gradient (lhs's batch holds the input features,
//    its features the examples, the window the whole image), whose sum is
//    long and whose output is small; fixed slices of the sum run on threads
//    into partial results added in order.
// Block sizes do not depend on the thread count, so neither do the results.
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/layout.h"
#include "interpreter/onednn_products.h"

namespace graft::interpreter {
namespace {

constexpr int kDims = 3;  // spatial dimensions, fewer padded with size-1 ones

// C[m, n] (row stride ldc) = beta C + op(A) B: A is [m, k] (lda), or [k, m]
// when `transpose_a`; B is [k, n] (ldb); one thread (callers run it inside
// their OpenMP teams, where OpenBLAS keeps to the calling thread).
template <class T>
void gemm(bool transpose_a, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          bool accumulate, T* c, int64_t ldc) {
#ifdef GRAFT_HAVE_OPENBLAS
  const auto ta = transpose_a ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const auto LA = static_cast<blasint>(lda), LB = static_cast<blasint>(ldb), LC = static_cast<blasint>(ldc);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, CblasNoTrans, M, N, K, 1.0f, a, LA, b, LB, accumulate ? 1.0f : 0.0f, c, LC);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, M, N, K, 1.0, a, LA, b, LB, accumulate ? 1.0 : 0.0, c, LC);
  } else {
    const T one(1), beta(accumulate ? 1 : 0);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      cblas_cgemm(CblasRowMajor, ta, CblasNoTrans, M, N, K, &one, a, LA, b, LB, &beta, c, LC);
    else
      cblas_zgemm(CblasRowMajor, ta, CblasNoTrans, M, N, K, &one, a, LA, b, LB, &beta, c, LC);
  }
#else
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Const = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  Eigen::Map<Mat, 0, Eigen::OuterStride<>> C(c, m, n, Eigen::OuterStride<>(ldc));
  const Const B(b, k, n, Eigen::OuterStride<>(ldb));
  if (!accumulate) C.setZero();
  if (transpose_a)
    C.noalias() += Const(a, k, m, Eigen::OuterStride<>(lda)).transpose() * B;
  else
    C.noalias() += Const(a, m, k, Eigen::OuterStride<>(lda)) * B;
#endif
}

// Whether dims (size, stride), outermost first, walk memory as rows of
// `row` elements each: size-1 dims aside, each dim's stride is the next
// one's times its size, and the last one's is `row`.
bool rows_of(const std::vector<std::pair<int64_t, int64_t>>& dims, int64_t row) {
  int64_t want = row;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    if (it->first == 1) continue;
    if (it->second != want) return false;
    want *= it->first;
  }
  return true;
}

// The call's sizes and strides, spatial dimensions padded to kDims.
struct ConvGeometry {
  int64_t batch = 0, out_features = 0, in_per_group = 0, out_per_group = 0, groups = 1;
  bool batch_groups = false;           // the groups split lhs's batch, not its features
  int64_t l_batch = 0, l_feature = 0;  // lhs strides
  int64_t r_out = 0, r_in = 0;         // rhs strides
  int64_t o_batch = 0, o_feature = 0;  // output strides
  std::array<int64_t, kDims> out{}, window{}, r_sp{}, o_sp{};
  std::array<int64_t, kDims> in{}, l_sp{}, stride{}, lhs_dilation{}, rhs_dilation{}, pad_low{};
  bool lhs_dilated = false;
  std::array<std::vector<int64_t>, kDims> taps;  // [p * window + w]: lhs offset along the dim, or -1
  int64_t positions = 1, window_size = 1;

  explicit ConvGeometry(const KernelCall& call) {
    const Shape &ls = call.inputs[0].type->shape, &rs = call.inputs[1].type->shape, &os = call.outputs[0].type->shape;
    const ir::Ints &lspec = ints_attr(call, "lhs_spec"), &rspec = ints_attr(call, "rhs_spec"),
                   &ospec = ints_attr(call, "out_spec"), &stride_attr = ints_attr(call, "window_strides"),
                   &lo = ints_attr(call, "padding_low"), &ld = ints_attr(call, "lhs_dilation"),
                   &rd = ints_attr(call, "rhs_dilation");
    const int64_t fg = int_attr(call, "feature_group_count"), bg = int_attr(call, "batch_group_count");
    const std::vector<int64_t> lst = row_major_strides(ls), rst = row_major_strides(rs), ost = row_major_strides(os);
    batch = os[ospec[0]], out_features = os[ospec[1]], in_per_group = rs[rspec[1]];
    groups = std::max(fg, bg), batch_groups = bg > 1;
    out_per_group = out_features / groups;
    l_batch = lst[lspec[0]], l_feature = lst[lspec[1]], r_out = rst[rspec[0]], r_in = rst[rspec[1]];
    o_batch = ost[ospec[0]], o_feature = ost[ospec[1]];
    const int n = static_cast<int>(ls.size()) - 2;
    for (int d = 0; d < kDims; ++d) {
      if (d >= n) {
        out[d] = window[d] = in[d] = stride[d] = lhs_dilation[d] = rhs_dilation[d] = 1, taps[d] = {0};
        continue;
      }
      in[d] = ls[lspec[2 + d]], l_sp[d] = lst[lspec[2 + d]];
      stride[d] = stride_attr[d], lhs_dilation[d] = ld[d], rhs_dilation[d] = rd[d], pad_low[d] = lo[d];
      lhs_dilated = lhs_dilated || ld[d] > 1;
      out[d] = os[ospec[2 + d]], window[d] = rs[rspec[2 + d]];
      r_sp[d] = rst[rspec[2 + d]], o_sp[d] = ost[ospec[2 + d]];
      taps[d].resize(static_cast<size_t>(out[d] * window[d]));
      for (int64_t p = 0; p < out[d]; ++p)
        for (int64_t w = 0; w < window[d]; ++w) {
          const int64_t at = p * stride_attr[d] + w * rd[d] - lo[d];
          const bool real = at >= 0 && at % ld[d] == 0 && at / ld[d] < in[d];
          taps[d][p * window[d] + w] = real ? at / ld[d] * lst[lspec[2 + d]] : -1;
        }
      positions *= out[d];
      window_size *= window[d];
    }
  }

  // off[w] = the lhs offset of window offset w at output position p (flat), or -1.
  void window_offsets(int64_t p, std::vector<int64_t>& off) const {
    const int64_t p2 = p % out[2], p1 = p / out[2] % out[1], p0 = p / out[2] / out[1];
    const int64_t* t0 = &taps[0][p0 * window[0]];
    const int64_t* t1 = &taps[1][p1 * window[1]];
    const int64_t* t2 = &taps[2][p2 * window[2]];
    off.resize(static_cast<size_t>(window_size));
    size_t k = 0;
    for (int64_t a = 0; a < window[0]; ++a)
      for (int64_t b = 0; b < window[1]; ++b)
        for (int64_t c = 0; c < window[2]; ++c)
          off[k++] = t0[a] < 0 || t1[b] < 0 || t2[c] < 0 ? -1 : t0[a] + t1[b] + t2[c];
  }
  // off[p] = the lhs offset of window offset w (flat) at each output position, or -1.
  void position_offsets(int64_t w, std::vector<int64_t>& off) const {
    const int64_t w2 = w % window[2], w1 = w / window[2] % window[1], w0 = w / window[2] / window[1];
    off.resize(static_cast<size_t>(positions));
    size_t k = 0;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c) {
          const int64_t x = taps[0][a * window[0] + w0], y = taps[1][b * window[1] + w1],
                        z = taps[2][c * window[2] + w2];
          off[k++] = x < 0 || y < 0 || z < 0 ? -1 : x + y + z;
        }
  }
  // The output offset of spatial position p (flat), and rhs's of window offset w.
  int64_t out_offset(int64_t p) const {
    return p / out[2] / out[1] * o_sp[0] + p / out[2] % out[1] * o_sp[1] + p % out[2] * o_sp[2];
  }
  int64_t rhs_offset(int64_t w) const {
    return w / window[2] / window[1] * r_sp[0] + w / window[2] % window[1] * r_sp[1] + w % window[2] * r_sp[2];
  }
  // Where group g's output features, lhs features and lhs batch start.
  int64_t first_out(int64_t g) const { return g * out_per_group; }
  int64_t lhs_base(int64_t g) const { return batch_groups ? g * batch * l_batch : g * in_per_group * l_feature; }
};

// run(i) for i in [0, count): on OpenMP threads (each GEMM then single-
// threaded) when there are several and `flops` is large, else here, outside
// any OpenMP construct, where OpenBLAS threads each GEMM itself (it ran 20x
// slower inside an inactive `omp parallel if (false)`).
template <class Run>
void over_blocks(int64_t count, int64_t flops, const Run& run) {
  if (count < 2 || flops < (int64_t{1} << 18)) {
    for (int64_t i = 0; i < count; ++i) run(i);
    return;
  }
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < count; ++i) run(i);
}

template <class T>
T* scratch(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// rhs of group g as a [K, out_per_group] matrix, K ordered (w, i) when
// `window_major`, else (i, w): a view of rhs itself when its layout has
// those rows, else packed into `buf`. Returns the matrix and its row stride.
template <class T>
std::pair<const T*, int64_t> kernel_matrix(const ConvGeometry& G, const T* rhs, int64_t g, bool window_major,
                                           std::vector<T>& buf) {
  const T* base = rhs + G.first_out(g) * G.r_out;
  std::vector<std::pair<int64_t, int64_t>> k_dims;
  if (!window_major) k_dims.emplace_back(G.in_per_group, G.r_in);
  for (int d = 0; d < kDims; ++d) k_dims.emplace_back(G.window[d], G.r_sp[d]);
  if (window_major) k_dims.emplace_back(G.in_per_group, G.r_in);
  for (int64_t row : {G.r_in, G.r_sp[2], G.r_sp[1], G.r_sp[0]})
    if ((G.r_out == 1 || G.out_per_group == 1) && row >= G.out_per_group && rows_of(k_dims, row)) return {base, row};
  const int64_t n = G.out_per_group, K = G.in_per_group * G.window_size;
  T* m = scratch(buf, K * n);
  for (int64_t i = 0; i < G.in_per_group; ++i)
    for (int64_t w = 0; w < G.window_size; ++w) {
      const int64_t k = window_major ? w * G.in_per_group + i : i * G.window_size + w;
      const T* src = base + i * G.r_in + G.rhs_offset(w);
      for (int64_t o = 0; o < n; ++o) m[k * n + o] = src[o * G.r_out];
    }
  return {m, n};
}

// Patches as rows: A[(b, p), (w, i)].
template <class T>
void conv_rows(const ConvGeometry& G, const T* lhs, const T* rhs, T* y) {
  const int64_t K = G.window_size * G.in_per_group, n = G.out_per_group, M = G.batch * G.positions;
  // The output as rows (b, p) of features: written in place when its layout is that.
  std::vector<std::pair<int64_t, int64_t>> row_dims{{G.batch, G.o_batch}};
  for (int d = 0; d < kDims; ++d) row_dims.emplace_back(G.out[d], G.o_sp[d]);
  int64_t out_row = 0;
  for (int64_t r : {G.o_sp[2], G.o_sp[1], G.o_sp[0], G.o_batch})
    if (out_row == 0 && (G.o_feature == 1 || n == 1) && r >= n && rows_of(row_dims, r)) out_row = r;
  // Rows per GEMM: patches of about 4 MiB, at least 64 rows (each call
  // repacks the kernel). A kernel of 4 MiB or more is worth one GEMM that
  // OpenBLAS threads itself, over patches of up to 64 MiB gathered on
  // OpenMP threads (measured: ResNet-18's 7x7x512 layers at batch 32).
  const bool one_gemm = K * n * static_cast<int64_t>(sizeof(T)) >= (int64_t{1} << 22) &&
                        M * K * static_cast<int64_t>(sizeof(T)) <= (int64_t{1} << 26);
  const int64_t block =
      one_gemm ? M : std::clamp<int64_t>((int64_t{1} << 22) / std::max<int64_t>(K * sizeof(T), 1), 64, 1024);
  const int64_t blocks = (M + block - 1) / block;
  std::vector<T> packed;
  for (int64_t g = 0; g < G.groups; ++g) {
    // Plain names, not a structured binding: `run` captures them, which clang refuses under OpenMP.
    const std::pair<const T*, int64_t> matrix = kernel_matrix(G, rhs, g, true, packed);
    const T* const B = matrix.first;
    const int64_t ldb = matrix.second;
    const T* l = lhs + G.lhs_base(g);
    T* yg = y + G.first_out(g) * G.o_feature;
    auto run = [&](int64_t blk) {
      thread_local std::vector<T> a_buf, c_buf;
      const int64_t r0 = blk * block, rows = std::min(block, M - r0);
      T* A = scratch(a_buf, rows * K);
#pragma omp parallel for if (one_gemm && rows * K >= (int64_t{1} << 16))
      for (int64_t r = 0; r < rows; ++r) {
        thread_local std::vector<int64_t> off;
        const int64_t b = (r0 + r) / G.positions, p = (r0 + r) % G.positions;
        G.window_offsets(p, off);
        const T* src = l + b * G.l_batch;
        T* dst = A + r * K;
        for (int64_t w = 0; w < G.window_size; ++w, dst += G.in_per_group) {
          const int64_t at = off[static_cast<size_t>(w)];
          if (at < 0)
            std::fill_n(dst, G.in_per_group, T(0));
          else if (G.l_feature == 1)
            std::memcpy(dst, src + at, static_cast<size_t>(G.in_per_group) * sizeof(T));
          else
            for (int64_t i = 0; i < G.in_per_group; ++i) dst[i] = src[at + i * G.l_feature];
        }
      }
      if (out_row != 0) return gemm(false, rows, n, K, A, K, B, ldb, false, yg + r0 * out_row, out_row);
      T* C = scratch(c_buf, rows * n);
      gemm(false, rows, n, K, A, K, B, ldb, false, C, n);
      for (int64_t r = 0; r < rows; ++r) {
        T* dst = yg + (r0 + r) / G.positions * G.o_batch + G.out_offset((r0 + r) % G.positions);
        for (int64_t o = 0; o < n; ++o) dst[o * G.o_feature] = C[r * n + o];
      }
    };
    over_blocks(blocks, M * n * K, run);
  }
}

// Patches as columns: A[(i, w), (p, b)], multiplied transposed.
template <class T>
void conv_columns(const ConvGeometry& G, const T* lhs, const T* rhs, T* y) {
  const int64_t K = G.window_size * G.in_per_group, n = G.out_per_group, M = G.positions * G.batch;
  // Sum terms per GEMM: patches of about 4 MiB, at least 64 (each call updates all of C).
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 22) / std::max<int64_t>(M * sizeof(T), 1), 64, 4096);
  const int64_t blocks = (K + block - 1) / block;
  // Partial sums, each over a fixed run of blocks: at most 8 and 2^21
  // elements in all; a larger output is one sum whose GEMMs OpenBLAS threads.
  const int64_t parts =
      std::clamp<int64_t>(std::min<int64_t>(blocks, (int64_t{1} << 21) / std::max<int64_t>(M * n, 1)), 1, 8);
  std::vector<T> packed, partial;
  for (int64_t g = 0; g < G.groups; ++g) {
    const std::pair<const T*, int64_t> matrix = kernel_matrix(G, rhs, g, false, packed);
    const T* const B = matrix.first;
    const int64_t ldb = matrix.second;
    const T* l = lhs + G.lhs_base(g);
    T* sums = scratch(partial, parts * M * n);
    auto run = [&](int64_t part) {
      thread_local std::vector<T> a_buf;
      thread_local std::vector<int64_t> off;
      T* C = sums + part * M * n;
      std::fill_n(C, M * n, T(0));
      for (int64_t blk = blocks * part / parts; blk < blocks * (part + 1) / parts; ++blk) {
        const int64_t k0 = blk * block, rows = std::min(block, K - k0);
        T* A = scratch(a_buf, rows * M);
        int64_t last_w = -1;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = (k0 + r) / G.window_size, w = (k0 + r) % G.window_size;
          if (w != last_w) G.position_offsets(w, off), last_w = w;
          const T* src = l + i * G.l_feature;
          T* dst = A + r * M;
          for (int64_t p = 0; p < G.positions; ++p, dst += G.batch) {
            const int64_t at = off[static_cast<size_t>(p)];
            if (at < 0)
              std::fill_n(dst, G.batch, T(0));
            else if (G.l_batch == 1)
              std::memcpy(dst, src + at, static_cast<size_t>(G.batch) * sizeof(T));
            else
              for (int64_t b = 0; b < G.batch; ++b) dst[b] = src[at + b * G.l_batch];
          }
        }
        gemm(true, M, n, rows, A, M, B + k0 * ldb, ldb, true, C, n);
      }
    };
    over_blocks(parts, M * n * K, run);
    T* yg = y + G.first_out(g) * G.o_feature;
    for (int64_t part = 1; part < parts; ++part)
      for (int64_t e = 0; e < M * n; ++e) sums[e] += sums[part * M * n + e];
    for (int64_t p = 0; p < G.positions; ++p)
      for (int64_t b = 0; b < G.batch; ++b) {
        T* dst = yg + b * G.o_batch + G.out_offset(p);
        const T* src = sums + (p * G.batch + b) * n;
        for (int64_t o = 0; o < n; ++o) dst[o * G.o_feature] = src[o];
      }
  }
}

// acc[o] += a[o * as] * b[o * bs] over o < n: contiguous runs vectorise.
template <class T>
void lanes_multiply_add(T* __restrict acc, const T* __restrict a, int64_t as, const T* __restrict b, int64_t bs,
                        int64_t n) {
  if (as == 1 && bs == 1) {
    for (int64_t o = 0; o < n; ++o) acc[o] += a[o] * b[o];
  } else {
    for (int64_t o = 0; o < n; ++o) acc[o] += a[o * as] * b[o * bs];
  }
}

// One output feature per group, reading one lhs channel (depthwise: one
// input feature per group; the depthwise weight gradient: one lhs batch
// element per batch group): output features side by side as lanes, each
// output position's window summed in order, positions on OpenMP threads.
template <class T>
void conv_lanes(const ConvGeometry& G, const T* lhs, const T* rhs, T* y) {
  const int64_t O = G.out_features, n = G.batch * G.positions;
  const int64_t lane_step = G.batch_groups ? G.l_batch : G.l_feature;  // lhs: one output feature's channel to the next
  const int64_t feature_step = G.batch_groups ? G.l_feature : 0;       // lhs: one summed feature to the next
  const int64_t batch_step = G.batch_groups ? 0 : G.l_batch;
  auto run = [&](int64_t q) {
    thread_local std::vector<T> acc_buf;
    thread_local std::vector<int64_t> off;
    const int64_t b = q / G.positions, p = q % G.positions;
    T* acc = scratch(acc_buf, O);
    std::fill_n(acc, O, T(0));
    G.window_offsets(p, off);
    for (int64_t i = 0; i < G.in_per_group; ++i)
      for (int64_t w = 0; w < G.window_size; ++w) {
        const int64_t at = off[static_cast<size_t>(w)];
        if (at < 0) continue;
        lanes_multiply_add(acc, lhs + b * batch_step + i * feature_step + at, lane_step,
                           rhs + i * G.r_in + G.rhs_offset(w), G.r_out, O);
      }
    T* dst = y + b * G.o_batch + G.out_offset(p);
    for (int64_t o = 0; o < O; ++o) dst[o * G.o_feature] = acc[o];
  };
  if (n * O * G.in_per_group * G.window_size < (int64_t{1} << 16) || n < 2) {
    for (int64_t q = 0; q < n; ++q) run(q);
    return;
  }
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t q = 0; q < n; ++q) run(q);
}

// An lhs-dilated convolution (a transposed one: the data gradient of a
// strided convolution) without the dilation's zeros: each lhs element t
// times the kernel, Z[t, (w, o)] = sum_i lhs[b, i, t] rhs[o, i, w] (one
// GEMM per block of t), added into the output position t reaches through
// window offset w (col2im). Runs of whole batch elements are tasks on
// OpenMP threads, each adding into its own outputs in order.
template <class T>
void conv_scatter(const ConvGeometry& G, const T* lhs, const T* rhs, T* y, int64_t outputs) {
  std::fill_n(y, outputs, T(0));
  const int64_t n = G.out_per_group, WO = G.window_size * n, I = G.in_per_group;
  const int64_t inputs = G.in[0] * G.in[1] * G.in[2];
  // Per dim: the output index input index t reaches through window offset w, or -1.
  std::array<std::vector<int64_t>, kDims> reach;
  for (int d = 0; d < kDims; ++d) {
    reach[d].assign(static_cast<size_t>(G.in[d] * G.window[d]), -1);
    for (int64_t t = 0; t < G.in[d]; ++t)
      for (int64_t w = 0; w < G.window[d]; ++w) {
        const int64_t at = t * G.lhs_dilation[d] + G.pad_low[d] - w * G.rhs_dilation[d];
        if (at >= 0 && at % G.stride[d] == 0 && at / G.stride[d] < G.out[d])
          reach[d][t * G.window[d] + w] = at / G.stride[d];
      }
  }
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 22) / std::max<int64_t>(WO * sizeof(T), 1), 16, 1024);
  std::vector<T> packed(static_cast<size_t>(I * WO));
  for (int64_t g = 0; g < G.groups; ++g) {
    // R[i, (w, o)] = rhs[o, i, w].
    const T* base = rhs + G.first_out(g) * G.r_out;
    for (int64_t i = 0; i < I; ++i)
      for (int64_t w = 0; w < G.window_size; ++w)
        for (int64_t o = 0; o < n; ++o) packed[i * WO + w * n + o] = base[o * G.r_out + i * G.r_in + G.rhs_offset(w)];
    const T* l = lhs + G.lhs_base(g);
    T* yg = y + G.first_out(g) * G.o_feature;
    // Tasks of whole batch elements, about 256 GEMM rows each; or, for a
    // kernel of 4 MiB or more (repacked by every GEMM), one task whose GEMM
    // OpenBLAS threads, its gathers and additions on OpenMP threads.
    const bool one = I * WO * static_cast<int64_t>(sizeof(T)) >= (int64_t{1} << 22) &&
                     G.batch * inputs * WO * static_cast<int64_t>(sizeof(T)) <= (int64_t{1} << 26);
    const int64_t per_task = one ? G.batch : std::max<int64_t>(1, 256 / std::max<int64_t>(inputs, 1));
    const int64_t tasks = (G.batch + per_task - 1) / per_task, step = one ? G.batch * inputs : block;
    auto run = [&](int64_t task) {
      thread_local std::vector<T> x_buf, z_buf;
      const int64_t b_end = std::min(G.batch, (task + 1) * per_task), total = (b_end - task * per_task) * inputs;
      for (int64_t r0 = 0; r0 < total; r0 += step) {
        const int64_t rows = std::min(step, total - r0);
        T* X = scratch(x_buf, rows * I);
        auto locate = [&](int64_t r, int64_t& b, int64_t& u0, int64_t& u1, int64_t& u2) {
          const int64_t q = task * per_task * inputs + r0 + r, t = q % inputs;
          b = q / inputs, u2 = t % G.in[2], u1 = t / G.in[2] % G.in[1], u0 = t / G.in[2] / G.in[1];
        };
#pragma omp parallel for if (one)
        for (int64_t r = 0; r < rows; ++r) {
          int64_t b, u0, u1, u2;
          locate(r, b, u0, u1, u2);
          const T* src = l + b * G.l_batch + u0 * G.l_sp[0] + u1 * G.l_sp[1] + u2 * G.l_sp[2];
          for (int64_t i = 0; i < I; ++i) X[r * I + i] = src[i * G.l_feature];
        }
        T* Z = scratch(z_buf, rows * WO);
        gemm(false, rows, WO, I, X, I, packed.data(), WO, false, Z, WO);
        // Rows [r_begin, r_end) added into their outputs, in order.
        auto add_rows = [&](int64_t r_begin, int64_t r_end) {
          for (int64_t r = r_begin; r < r_end; ++r) {
            int64_t b, u0, u1, u2;
            locate(r, b, u0, u1, u2);
            int64_t w = 0;
            for (int64_t a = 0; a < G.window[0]; ++a)
              for (int64_t c = 0; c < G.window[1]; ++c)
                for (int64_t e = 0; e < G.window[2]; ++e, ++w) {
                  const int64_t q0 = reach[0][u0 * G.window[0] + a], q1 = reach[1][u1 * G.window[1] + c],
                                q2 = reach[2][u2 * G.window[2] + e];
                  if (q0 < 0 || q1 < 0 || q2 < 0) continue;
                  T* dst = yg + b * G.o_batch + q0 * G.o_sp[0] + q1 * G.o_sp[1] + q2 * G.o_sp[2];
                  const T* z = Z + r * WO + w * n;
                  if (G.o_feature == 1)
                    for (int64_t o = 0; o < n; ++o) dst[o] += z[o];
                  else
                    for (int64_t o = 0; o < n; ++o) dst[o * G.o_feature] += z[o];
                }
          }
        };
        if (!one) {
          add_rows(0, rows);
          continue;
        }
        // One batch element per OpenMP iteration: each adds into its own outputs.
#pragma omp parallel for
        for (int64_t b = 0; b < G.batch; ++b) add_rows(b * inputs, (b + 1) * inputs);
      }
    };
    over_blocks(tasks, G.batch * inputs * I * WO, run);
  }
}

template <class T>
void conv_typed(const KernelCall& call) {
  const ConvGeometry G(call);
  const T* lhs = static_cast<const T*>(call.inputs[0].data);
  const T* rhs = static_cast<const T*>(call.inputs[1].data);
  T* y = static_cast<T*>(call.outputs[0].data);
  const int64_t outputs = call.outputs[0].type->num_elements();
  if (outputs == 0) return;
  if (G.in_per_group * G.window_size == 0) {
    std::fill_n(y, outputs, T(0));
    return;
  }
  // Depthwise convolutions and their weight gradients: one lhs channel per output feature.
  if (G.out_per_group == 1 && G.groups > 1 && (G.batch_groups ? G.batch == 1 : G.in_per_group == 1))
    return conv_lanes(G, lhs, rhs, y);
  // Transposed convolutions: no multiplications by the lhs dilation's zeros.
  if (G.lhs_dilated && !G.batch_groups) return conv_scatter(G, lhs, rhs, y, outputs);
  // Gather in runs along whichever of lhs's batch and feature dimensions is closer in memory.
  if (G.l_batch < G.l_feature) return conv_columns(G, lhs, rhs, y);
  conv_rows(G, lhs, rhs, y);
}

// Whether dimension d of `s` may keep the rows a negative high padding
// drops (a strided convolution's leftover ones) with that padding taken as
// zero: oneDNN, rounding (in + pad - span) / stride down as XLA does, then
// finds the same output size, so the full, dense operand is read (a cropped
// view of NHWC has no fast kernel) or written (no tap reaches those rows:
// zeros).
bool keeps_rows(const OnednnConvShape& s, int d) {
  const bool swapped = onednn_conv_as_backward_weights(s);  // (its stride and dilation are ours swapped)
  const int64_t window = swapped ? s.out[d] : s.window[d], dilation = swapped ? s.stride[d] : s.rhs_dilation[d],
                stride = swapped ? s.rhs_dilation[d] : s.stride[d], out = swapped ? s.window[d] : s.out[d];
  const int64_t reach = s.in[d] + s.pad_low[d] - ((window - 1) * dilation + 1);
  return reach >= 0 && reach / stride + 1 == out;
}

// A convolution with lhs dilation (a transposed convolution: the input
// gradient of a strided one) as oneDNN's backward-data pass of the
// convolution it transposes: that one's stride is our lhs dilation, its
// input our output, its output our lhs, and its kernel ours flipped with
// input and output features swapped (copied: oneDNN takes no negative
// strides). Unit window strides only (as every such gradient has).
template <class T>
bool transposed_conv_onednn(const KernelCall& call) {
  const Shape &ls = call.inputs[0].type->shape, &rs = call.inputs[1].type->shape, &os = call.outputs[0].type->shape;
  const int n = static_cast<int>(ls.size()) - 2;
  const ir::Ints &lspec = ints_attr(call, "lhs_spec"), &rspec = ints_attr(call, "rhs_spec"),
                 &ospec = ints_attr(call, "out_spec"), &ld = ints_attr(call, "lhs_dilation"),
                 &rd = ints_attr(call, "rhs_dilation"), &lo = ints_attr(call, "padding_low"),
                 &hi = ints_attr(call, "padding_high"), &strides = ints_attr(call, "window_strides");
  const std::vector<int64_t> lst = row_major_strides(ls), rst = row_major_strides(rs), ost = row_major_strides(os);
  const int64_t groups = int_attr(call, "feature_group_count");
  const int64_t in_pg = rs[rspec[1]], out_f = rs[rspec[0]], out_pg = out_f / groups;
  OnednnConvShape s;
  s.spatial = n, s.f32 = std::is_same_v<T, float>, s.backward_data = true, s.groups = groups;
  s.batch = ls[lspec[0]], s.in_features = out_f, s.out_features = ls[lspec[1]];
  int64_t work = s.batch * out_f * in_pg, skip = 0;  // skip: output elements before oneDNN's view
  bool cropped = false;
  for (int d = 0; d < n; ++d) {
    const int64_t k = rs[rspec[2 + d]];
    s.window[d] = k, s.in[d] = os[ospec[2 + d]], s.out[d] = ls[lspec[2 + d]];
    s.stride[d] = ld[d], s.rhs_dilation[d] = rd[d];
    s.pad_low[d] = (k - 1) * rd[d] - lo[d], s.pad_high[d] = (k - 1) * rd[d] - hi[d];
    if (strides[d] != 1) return false;
    // Padding beyond the dilated kernel (a strided gradient's leftover rows) makes output rows no tap
    // reaches: zeros, outside the view oneDNN writes.
    if (s.pad_low[d] < 0) skip += -s.pad_low[d] * ost[ospec[2 + d]], s.in[d] += s.pad_low[d], s.pad_low[d] = 0;
    if (s.pad_high[d] < 0) s.in[d] += keeps_rows(s, d) ? 0 : s.pad_high[d], s.pad_high[d] = 0;
    cropped = cropped || s.in[d] != os[ospec[2 + d]];
    if (s.in[d] <= 0) return false;
    work *= k * s.in[d];
  }
  if (work < kGemmMinWork) return false;
  for (int k = 0; k < n + 2; ++k) s.lhs_strides[k] = ost[ospec[k]], s.out_strides[k] = lst[lspec[k]];
  // The kernel it transposes is ours with input and output features swapped (strides alone) and the
  // window reversed: a copy of ours in its own layout, runs along the innermost dimension: element
  // [g * in_pg + c, o, w] is ours [g * out_pg + o, c, flipped w].
  // (Kept per thread across calls: a fresh buffer faulted in its pages every time.)
  thread_local std::vector<T> kernel;
  if (kernel.size() < static_cast<size_t>(call.inputs[1].type->num_elements()))
    kernel.resize(static_cast<size_t>(call.inputs[1].type->num_elements()));
  const T* r = static_cast<const T*>(call.inputs[1].data);
  const int rank = n + 2;
  std::array<bool, kDims + 2> flipped{};
  for (int d = 0; d < n; ++d) flipped[static_cast<size_t>(rspec[2 + d])] = true;
  const int64_t run = rs[rank - 1], runs = call.inputs[1].type->num_elements() / std::max<int64_t>(run, 1);
  for (int64_t at = 0; at < runs; ++at) {
    int64_t from = 0;  // the source of the destination run `at`: its index with the window dims reversed
    for (int64_t k = rank - 2, rest = at; k >= 0; --k) {
      const int64_t size = rs[k], i = rest % size;
      rest /= size;
      from += (flipped[static_cast<size_t>(k)] ? size - 1 - i : i) * rst[static_cast<size_t>(k)];
    }
    T* to = kernel.data() + at * run;
    if (flipped[static_cast<size_t>(rank - 1)])
      std::reverse_copy(r + from, r + from + run, to);
    else
      std::copy(r + from, r + from + run, to);
  }
  s.rhs_strides[0] = rst[rspec[1]], s.rhs_strides[1] = rst[rspec[0]], s.rhs_group_stride = rst[rspec[0]] * out_pg;
  for (int d = 0; d < n; ++d) s.rhs_strides[2 + d] = rst[rspec[2 + d]];
  const bool out_bf16 = call.outputs[0].type->dtype == DType::bf16;
  const size_t bytes = out_bf16 ? 2 : 4;
  char* out = static_cast<char*>(call.outputs[0].data);
  if (cropped) std::memset(out, 0, static_cast<size_t>(call.outputs[0].type->num_elements()) * bytes);
  return onednn_conv(s, call.inputs[0].data, kernel.data(), out + skip * bytes, out_bf16);
}

}  // namespace

bool conv_general_dilated_onednn(const KernelCall& call) {
  const bool f32 = call.inputs[0].type->dtype == DType::f32 && call.inputs[1].type->dtype == DType::f32 &&
                   call.outputs[0].type->dtype == DType::f32;
  if (!(f32 ? f32_conv_on_onednn() : bf16_units_serve(call))) return false;
  const DType out = call.outputs[0].type->dtype;
  const Shape &ls = call.inputs[0].type->shape, &rs = call.inputs[1].type->shape, &os = call.outputs[0].type->shape;
  const int n = static_cast<int>(ls.size()) - 2;
  if (n < 1 || n > 3) return false;
  const int64_t batch_groups = int_attr(call, "batch_group_count");
  const bool lhs_dilated = std::any_of(ints_attr(call, "lhs_dilation").begin(), ints_attr(call, "lhs_dilation").end(),
                                       [](int64_t d) { return d != 1; });
  if (lhs_dilated)
    return batch_groups == 1 && (f32 ? transposed_conv_onednn<float>(call) : transposed_conv_onednn<uint16_t>(call));
  const ir::Ints &lspec = ints_attr(call, "lhs_spec"), &rspec = ints_attr(call, "rhs_spec"),
                 &ospec = ints_attr(call, "out_spec"), &ld = ints_attr(call, "lhs_dilation"),
                 &lo = ints_attr(call, "padding_low"), &hi = ints_attr(call, "padding_high");
  const std::vector<int64_t> lst = row_major_strides(ls), rst = row_major_strides(rs), ost = row_major_strides(os);
  OnednnConvShape s;
  s.spatial = n, s.f32 = f32;
  s.batch = ls[lspec[0]], s.in_features = ls[lspec[1]], s.out_features = rs[rspec[0]];
  s.groups = std::max(int_attr(call, "feature_group_count"), batch_groups);
  s.batch_groups = batch_groups > 1;
  int64_t work = s.batch * s.out_features * rs[rspec[1]];
  for (int k = 0; k < n + 2; ++k)
    s.lhs_strides[k] = lst[lspec[k]], s.rhs_strides[k] = rst[rspec[k]], s.out_strides[k] = ost[ospec[k]];
  const char* lhs = static_cast<const char*>(call.inputs[0].data);
  const int64_t element = f32 ? 4 : 2;
  for (int d = 0; d < n; ++d) {
    if (ld[d] != 1) return false;
    s.in[d] = ls[lspec[2 + d]], s.window[d] = rs[rspec[2 + d]], s.out[d] = os[ospec[2 + d]];
    s.stride[d] = ints_attr(call, "window_strides")[d], s.rhs_dilation[d] = ints_attr(call, "rhs_dilation")[d];
    s.pad_low[d] = lo[d], s.pad_high[d] = hi[d];
    // A negative pad crops (a strided convolution's weight gradient has one): oneDNN reads a smaller
    // view, or at the high end, where it can, the whole operand (keeps_rows).
    if (lo[d] < 0) lhs += -lo[d] * s.lhs_strides[2 + d] * element, s.in[d] += lo[d], s.pad_low[d] = 0;
    work *= s.window[d] * s.out[d];
  }
  for (int d = 0; d < n; ++d) {
    if (hi[d] < 0) s.pad_high[d] = 0, s.in[d] += keeps_rows(s, d) ? 0 : hi[d];
    if (s.in[d] <= 0) return false;
  }
  // Convolutions too small to amortise a primitive's dispatch widen to f32 (an empty one too: the
  // generic kernel fills zeros).
  if (work < kGemmMinWork) return false;
  return onednn_conv(s, lhs, call.inputs[1].data, call.outputs[0].data, out == DType::bf16);
}

void conv_general_dilated_kernel(const KernelCall& call) {
  switch (call.inputs[0].type->dtype) {
    case DType::f32:
      if (conv_general_dilated_onednn(call)) return;
      return conv_typed<float>(call);
    case DType::f64: return conv_typed<double>(call);
    case DType::c64: return conv_typed<std::complex<float>>(call);
    case DType::c128: return conv_typed<std::complex<double>>(call);
    default:
      throw UnsupportedError(std::string("conv_general_dilated: no kernel for ") +
                             dtype_name(call.inputs[0].type->dtype));
  }
}

}  // namespace graft::interpreter
