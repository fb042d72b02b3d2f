// Float sums keep their digits (issue: eager sum of 2^24 squares was off by
// 2.8e-2): every summing reduction, on every path (eager kernels, the jit
// interpreter's tiled evaluator, generated C++) and axis layout, is within the
// pairwise bound of interpreter/kernels/sum_order.h against an exact sum,
// and the paths agree bit for bit (a tiered function's result does not change
// when its compiled module arrives), whatever the thread count.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "interpreter/kernels/sum_order.h"
#include "support/arrays.h"

using namespace graft;

namespace {

// A layout: a shape and the axes summed.
struct Layout {
  std::string name;
  Shape shape;
  std::vector<int> axes;
};

// The worst-case depth of sum_order's tree for a row of n elements or a
// column of n rows: adds on any element's path to the result.
int depth(int64_t n, bool column) {
  namespace so = graft::sum_order;
  const int64_t block = column ? so::kColumnBlock : so::kRowBlock;
  int d = column ? static_cast<int>(so::kColumnBlock) : static_cast<int>(so::kRowBlock / so::kLanes) + 4;
  for (int64_t b = (n + block - 1) / block; b > 1; b = (b + 1) / 2) ++d;
  return d + 1;
}

// For every output: |got - exact| <= depth * eps * sum |x| (the bound of a
// tree sum of that depth, Higham 4.2), with exact and sum |x| in long double.
// Returns the largest error relative to sum |x|.
template <class T>
double check_bound(const std::vector<T>& x, const Layout& L, const std::vector<T>& got) {
  const size_t rank = L.shape.size();
  std::vector<bool> reduced(rank, false);
  for (int a : L.axes) reduced[static_cast<size_t>(a < 0 ? a + static_cast<int>(rank) : a)] = true;
  if (L.axes.empty()) reduced.assign(rank, true);
  // The layout is [outer, reduced, inner] when the axes are adjacent, else
  // the reduced axes are walked per output by index arithmetic.
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * L.shape[i];
  int64_t n_out = 1, n_red = 1;
  bool column = false;  // some kept axis after the last reduced one, in sum_order's sense
  int last_red = -1;
  for (size_t i = 0; i < rank; ++i) (reduced[i] ? n_red : n_out) *= L.shape[i];
  for (size_t i = 0; i < rank; ++i)
    if (reduced[i]) last_red = static_cast<int>(i);
  for (size_t i = static_cast<size_t>(last_red) + 1; i < rank; ++i) column = column || L.shape[i] > 1;
  const double bound = depth(n_red, column) * std::numeric_limits<T>::epsilon();
  REQUIRE(static_cast<int64_t>(got.size()) == n_out);
  double worst = 0;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < n_out; ++o) {
    // the input offset of output o's first element
    int64_t rest = o, base = 0;
    for (size_t i = rank; i-- > 0;)
      if (!reduced[i]) {
        base += rest % L.shape[i] * strides[i];
        rest /= L.shape[i];
      }
    long double exact = 0, mag = 0;
    for (int64_t r = 0; r < n_red; ++r) {
      int64_t rr = r, off = base;
      for (size_t i = rank; i-- > 0;)
        if (reduced[i]) {
          off += rr % L.shape[i] * strides[i];
          rr /= L.shape[i];
        }
      exact += x[static_cast<size_t>(off)];
      mag += std::fabs(static_cast<long double>(x[static_cast<size_t>(off)]));
    }
    const double err = mag > 0 ? static_cast<double>(std::fabs(got[static_cast<size_t>(o)] - exact) / mag) : 0.0;
    INFO(L.name << ": output " << o << " of " << n_out << ", " << n_red << " terms");
    REQUIRE(err <= bound);
    worst = std::max(worst, err);
  }
  return worst;
}

template <class T>
bool same_bits(const Array& a, const Array& b) {
  std::vector<T> x = a.to_vector<T>(), y = b.to_vector<T>();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// Standard normals, squared when `squares` (a loss), of dtype d.
Array data(const Shape& s, uint64_t seed, bool squares, DType d) {
  Array x = astype(test::randn(s, seed), d);
  return squares ? x * x : x;
}

// Every path of one layout: eager, jit interpreter, jit cpu (fused with the
// square, so it is the tiled evaluator's and the generated code's loop), and
// the bound. All equal bit for bit.
template <class T>
void check_layout(const Layout& L, uint64_t seed, bool compiled) {
  const DType d = std::is_same_v<T, float> ? f32 : f64;
  Array x = data(L.shape, seed, false, d);
  Array xx = x * x;
  const std::vector<T> terms = xx.template to_vector<T>();
  Array eager = sum(xx, L.axes);
  check_bound(terms, L, eager.template to_vector<T>());
  for (Backend b : {Backend::interpreter, Backend::cpu}) {
    if (b == Backend::cpu && !compiled) continue;
    auto f = jit([&](const Array& a) { return sum(a * a, L.axes); }, JitOptions{.backend = b, .wait_for_compile = true});
    Array got = f(x);
    INFO(L.name << (b == Backend::cpu ? ": jit cpu" : ": jit interpreter") << " equals eager bit for bit");
    CHECK(same_bits<T>(got, eager));
  }
  // Mixed signs: the bound is relative to sum |x|.
  check_bound(x.template to_vector<T>(), L, sum(x, L.axes).template to_vector<T>());
}

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {
      {"full of 1", {1}, {0}},
      {"full of 17", {17}, {0}},
      {"full of 256", {256}, {0}},
      {"full of 257", {257}, {0}},
      {"full of 100003", {100003}, {0}},
      {"full of 2^20 + 5", {(int64_t{1} << 20) + 5}, {}},
      {"rows [37, 3]", {37, 3}, {1}},
      {"rows [300, 1000]", {300, 1000}, {1}},
      {"rows [3, 70000]", {3, 70000}, {-1}},
      {"columns [1000, 300]", {1000, 300}, {0}},
      {"columns [100000, 3]", {100000, 3}, {0}},
      {"columns [40, 5000]", {40, 5000}, {0}},
      {"middle [7, 500, 33]", {7, 500, 33}, {1}},
      {"middle [4, 3000, 250]", {4, 3000, 250}, {1}},
      {"two middle axes [5, 60, 70, 9]", {5, 60, 70, 9}, {1, 2}},
      {"non-adjacent [30, 8, 40, 6]", {30, 8, 40, 6}, {0, 2}},
      {"non-adjacent [300, 5, 300]", {300, 5, 300}, {0, 2}},
  };
  return l;
}

}  // namespace

TEST_CASE("float sums: within the pairwise bound on every path and layout, the paths equal bit for bit",
          "[summation][slow]") {
  uint64_t seed = 100;
  for (const Layout& L : layouts()) {
    SECTION(L.name) {
      check_layout<float>(L, seed, true);
      check_layout<double>(L, seed + 1, false);
    }
    seed += 2;
  }
}

TEST_CASE("float sums: 2^24 squares of normals keep their digits on every path", "[summation][slow]") {
  // The numbers: eager 2.8e-2 (a sequential fold), interpreter
  // 7.2e-6, generated C++ 1.2e-7; NumPy 1.0e-8 ... 6e-8. The bound here is
  // 45 eps = 2.7e-6; measured 5.9e-8.
  const Layout L{"full of 2^24", {int64_t{1} << 24}, {}};
  Array x = test::randn(L.shape, 7);
  Array xx = x * x;
  const std::vector<float> terms = xx.to_vector<float>();
  Array eager = sum(xx);
  const double err = check_bound(terms, L, eager.to_vector<float>());
  CHECK(err < 5e-7);
  Array m = mean(xx);
  CHECK(std::fabs(m.item<float>() - eager.item<float>() / static_cast<float>(terms.size())) == 0);
  for (Backend b : {Backend::interpreter, Backend::cpu}) {
    auto f = jit([](const Array& a) { return sum(a * a); }, JitOptions{.backend = b, .wait_for_compile = true});
    CHECK(same_bits<float>(f(x), eager));
  }
  // Row sums of 2^18, then summed (the 5.6e-5).
  Array rows = sum(reshape(xx, {64, 1 << 18}), {1});
  const double err_rows = check_bound(terms, Layout{"rows", {64, 1 << 18}, {1}}, rows.to_vector<float>());
  CHECK(err_rows < 5e-7);
}

TEST_CASE("float sums: the result does not depend on the thread count", "[summation]") {
  Array x = test::randn({3000, 700}, 11);
  std::vector<Array> one, two;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<Array>& out = threads == 1 ? one : two;
    for (std::vector<int> axes : {std::vector<int>{}, {0}, {1}}) {
      out.push_back(sum(x, axes));
      auto f = jit([axes](const Array& a) { return sum(a * a, axes); }, JitOptions{.backend = Backend::interpreter});
      out.push_back(f(x));
    }
  }
  omp_set_num_threads(omp_get_num_procs());
  for (size_t i = 0; i < one.size(); ++i) CHECK(same_bits<float>(one[i], two[i]));
}

TEST_CASE("float sums: what is built on sum keeps its digits (mean, var, logsumexp, softmax, norms)", "[summation]") {
  // Values of mean 1e4 and spread 1: a sequential f32 fold of 2^20 of them
  // loses about 3 digits of the mean; the pairwise order keeps it to a few
  // ulps of 1e4.
  const int64_t n = int64_t{1} << 20;
  Array x = test::randn({n}, 21) + 1e4;
  const std::vector<float> v = x.to_vector<float>();
  long double s = 0, s2 = 0;
  for (float e : v) s += e;
  const long double mu = s / n;
  for (float e : v) s2 += (e - mu) * (e - mu);
  CHECK(std::fabs(mean(x).item<float>() - static_cast<double>(mu)) <= 4 * 1e4 * 6e-8);
  CHECK(std::fabs(var(x).item<float>() - static_cast<double>(s2 / n)) <= 1e-3);
  // logsumexp of n equal values: log(n) + 0.5 exactly representable pieces.
  Array z = full({n}, 0.5);
  CHECK(logsumexp(z).item<float>() == Approx(std::log(static_cast<double>(n)) + 0.5).epsilon(2e-7));
  Array sm = softmax(reshape(z, {1, n}));
  CHECK(sum(sm).item<float>() == Approx(1.0).epsilon(1e-6));
  std::vector<float> ones(static_cast<size_t>(n), 1.0f);
  CHECK(sqrt(sum(square(array(ones, {n})))).item<float>() == 1024.0f);
}

TEST_CASE("float sums: short rows of every length equal the generated code's bit for bit", "[summation]") {
  // The interpreter sums rows of up to 16 elements 64 at a time, transposed
  // (ordered_sum.cpp); the generated code one row block each: same order.
  for (int n = 1; n <= 17; ++n) {
    INFO("rows of " << n);
    Array x = test::randn({130, n}, static_cast<uint64_t>(500 + n)) * 1e3f;
    auto compiled = jit([](const Array& a) { return sum(a, {1}); }, JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
    CHECK(same_bits<float>(sum(x, {1}), compiled(x)));
    Array x64 = astype(x, f64);
    CHECK(same_bits<double>(sum(x64, {1}), compiled(x64)));
  }
}
