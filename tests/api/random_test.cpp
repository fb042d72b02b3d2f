// graft::random: threefry known answers, the random_bits layout, determinism
// across thread counts, distributions, batched keys, errors and tracing.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "graft/graft.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/threefry.h"
#include "ir/graph.h"

using namespace graft;
using Catch::Matchers::Contains;
using graft::interpreter::threefry2x32;
using graft::interpreter::U32x2;

namespace {

std::vector<uint32_t> key_words(const Array& k) { return k.to_vector<uint32_t>(); }

// What random::bits must give for one key, as jax.random.bits: element i is
// the xor of the two words of threefry2x32(k, (hi(i), lo(i))).
std::vector<uint32_t> reference_bits(U32x2 k, int64_t n) {
  std::vector<uint32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const U32x2 w = threefry2x32(k, {static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32), static_cast<uint32_t>(i)});
    out[static_cast<size_t>(i)] = w[0] ^ w[1];
  }
  return out;
}

struct Moments {
  double mean, var;
};
template <class T>
Moments moments(const std::vector<T>& v) {
  double m = 0;
  for (T x : v) m += static_cast<double>(x);
  m /= static_cast<double>(v.size());
  double s = 0;
  for (T x : v) s += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  return {m, s / static_cast<double>(v.size() - 1)};
}

// graft links OpenMP privately, so this binary does not link libgomp itself:
// the OpenMP functions are looked up in the libgomp that libgraft loaded
// (the very runtime whose thread count the kernels use).
template <class F>
F* openmp_function(const char* name) {
  F* f = reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
  if (!f) FAIL("OpenMP runtime function " << name << " not found");
  return f;
}

// Sets the OpenMP thread count for the scope, then restores it.
struct Threads {
  explicit Threads(int n)
      : set(openmp_function<decltype(omp_set_num_threads)>("omp_set_num_threads")),
        saved(openmp_function<decltype(omp_get_max_threads)>("omp_get_max_threads")()) {
    set(n);
  }
  ~Threads() { set(saved); }
  decltype(&omp_set_num_threads) set;
  int saved;
};

}  // namespace

TEST_CASE("random: threefry2x32 matches the Random123 known answers", "[api][random]") {
  CHECK(threefry2x32({0u, 0u}, {0u, 0u}) == U32x2{0x6b200159u, 0x99ba4efeu});
  CHECK(threefry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}) == U32x2{0x1cb996fcu, 0xbb002be7u});
  CHECK(threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}) == U32x2{0xc4923a9cu, 0x483df7a0u});
  static_assert(threefry2x32({0u, 0u}, {0u, 0u})[1] == 0x99ba4efeu, "usable at compile time");
}

TEST_CASE("random: keys, bits layout and split", "[api][random]") {
  CHECK(key_words(random::key(0)) == std::vector<uint32_t>{0, 0});
  CHECK(key_words(random::key(0x0000000500000007ull)) == std::vector<uint32_t>{5, 7});
  CHECK(random::key(42).shape() == Shape{2});
  CHECK(random::key(42).dtype() == DType::u32);

  Array k = random::key(1234);
  U32x2 kw = {0u, 1234u};
  // Element i depends on (key, i) only: a shorter request is a prefix of a longer one.
  std::vector<uint32_t> b5 = random::bits(k, {5}).to_vector<uint32_t>();
  std::vector<uint32_t> b7 = random::bits(k, {7}).to_vector<uint32_t>();
  CHECK(b5 == reference_bits(kw, 5));
  CHECK(std::vector<uint32_t>(b7.begin(), b7.begin() + 5) == b5);
  Array b23 = random::bits(k, {2, 3});
  CHECK(b23.shape() == Shape{2, 3});
  CHECK(b23.to_vector<uint32_t>() == reference_bits(kw, 6));
  CHECK(random::bits(k, {0}).size() == 0);
  CHECK(random::bits(k, {}).to_vector<uint32_t>() == reference_bits(kw, 1));

  // split child i is threefry2x32(key, (0, i)).
  std::vector<Array> kids = random::split(k, 3);
  REQUIRE(kids.size() == 3);
  std::set<std::vector<uint32_t>> distinct = {key_words(k)};
  for (uint32_t i = 0; i < 3; ++i) {
    CHECK(kids[i].shape() == Shape{2});
    CHECK(kids[i].dtype() == DType::u32);
    U32x2 w = threefry2x32(kw, {0u, i});
    CHECK(key_words(kids[i]) == std::vector<uint32_t>{w[0], w[1]});
    distinct.insert(key_words(kids[i]));
  }
  CHECK(distinct.size() == 4);
  CHECK(random::split(k).size() == 2);
  CHECK(random::split(k, 0).empty());
}

TEST_CASE("random: same key same numbers, different keys different streams", "[api][random]") {
  Array k = random::key(7);
  CHECK(random::normal(k, {100}).to_vector<float>() == random::normal(k, {100}).to_vector<float>());
  CHECK(random::uniform(k, {100}).to_vector<float>() == random::uniform(random::key(7), {100}).to_vector<float>());

  auto count_equal = [](const std::vector<float>& a, const std::vector<float>& b) {
    int same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    return same;
  };
  std::vector<float> base = random::uniform(k, {1000}).to_vector<float>();
  std::vector<float> other = random::uniform(random::key(8), {1000}).to_vector<float>();
  CHECK(count_equal(base, other) < 5);
  std::vector<Array> kids = random::split(k);
  std::vector<float> c0 = random::uniform(kids[0], {1000}).to_vector<float>();
  std::vector<float> c1 = random::uniform(kids[1], {1000}).to_vector<float>();
  CHECK(count_equal(c0, c1) < 5);
  CHECK(count_equal(c0, base) < 5);
  CHECK(count_equal(c1, base) < 5);

  // fold_in: deterministic, distinct per data; fold_in(k, d) is split's child d, as in JAX.
  CHECK(key_words(random::fold_in(k, 3)) == key_words(random::fold_in(k, 3)));
  CHECK(key_words(random::fold_in(k, 1)) == key_words(kids[1]));
  std::set<std::vector<uint32_t>> keys = {key_words(k), key_words(kids[0]), key_words(kids[1])};
  for (uint32_t d = 0; d < 20; ++d) keys.insert(key_words(random::fold_in(k, d)));
  CHECK(keys.size() == 21);
  CHECK(random::fold_in(k, 5).shape() == Shape{2});
  CHECK(random::fold_in(random::key(1), 0).to_vector<uint32_t>() !=
        random::fold_in(random::key(2), 0).to_vector<uint32_t>());
}

TEST_CASE("random: results do not depend on the thread count", "[api][random]") {
  const int64_t n = 100001;  // odd, above kParallelThreshold
  REQUIRE(n > graft::interpreter::kParallelThreshold);
  Array k = random::key(99);
  std::vector<uint32_t> one, two;
  std::vector<float> normal_one, normal_two;
  {
    Threads t(1);
    one = random::bits(k, {n}).to_vector<uint32_t>();
    normal_one = random::normal(k, {n}).to_vector<float>();
  }
  {
    Threads t(2);
    two = random::bits(k, {n}).to_vector<uint32_t>();
    normal_two = random::normal(k, {n}).to_vector<float>();
  }
  CHECK(one == two);
  CHECK(one == reference_bits({0u, 99u}, n));
  CHECK(normal_one == normal_two);

  // A batch of keys whose per-key length is odd and not a multiple of the
  // chunk size, so chunks start mid-key and on odd elements.
  std::vector<uint32_t> kw = {1, 2, 3, 4, 0xdeadbeef, 0xfeedface};
  Array keys = array(kw, {3, 2});
  const int64_t per_key = 33335;
  std::vector<uint32_t> batched1, batched2;
  {
    Threads t(1);
    batched1 = random::bits(keys, {per_key}).to_vector<uint32_t>();
  }
  {
    Threads t(2);
    batched2 = random::bits(keys, {per_key}).to_vector<uint32_t>();
  }
  CHECK(batched1 == batched2);
  std::vector<uint32_t> expected;
  for (int b = 0; b < 3; ++b) {
    std::vector<uint32_t> r = reference_bits({kw[2 * b], kw[2 * b + 1]}, per_key);
    expected.insert(expected.end(), r.begin(), r.end());
  }
  CHECK(batched1 == expected);
}

TEST_CASE("random: uniform statistics and range", "[api][random]") {
  const int64_t n = 100000;
  const double dn = static_cast<double>(n);
  std::vector<float> u = random::uniform(random::key(0), {n}).to_vector<float>();
  Moments m = moments(u);
  CHECK(std::abs(m.mean - 0.5) < 4 * std::sqrt(1.0 / 12 / dn));
  CHECK(std::abs(m.var - 1.0 / 12) < 4 * std::sqrt(1.0 / 180 / dn));
  for (float x : u) {
    REQUIRE(x >= 0.0f);
    REQUIRE(x < 1.0f);
    REQUIRE(std::ldexp(x, 23) == std::floor(std::ldexp(x, 23)));  // 23 random mantissa bits
  }

  std::vector<float> v = random::uniform(random::key(1), {n}, -2.0, 5.0).to_vector<float>();
  Moments mv = moments(v);
  CHECK(std::abs(mv.mean - 1.5) < 4 * 7 * std::sqrt(1.0 / 12 / dn));
  CHECK(*std::min_element(v.begin(), v.end()) >= -2.0f);
  CHECK(*std::max_element(v.begin(), v.end()) < 5.0f);
  CHECK(*std::min_element(v.begin(), v.end()) < -1.99f);
  CHECK(*std::max_element(v.begin(), v.end()) > 4.99f);

  // A tiny interval: rounding may not reach hi.
  std::vector<float> t = random::uniform(random::key(2), {1000}, 1.0, 1.0 + 1e-6).to_vector<float>();
  for (float x : t) {
    REQUIRE(x >= 1.0f);
    REQUIRE(static_cast<double>(x) < 1.0 + 1e-6);
  }

  Array d = random::uniform(random::key(3), {n}, 0, 1, DType::f64);
  CHECK(d.dtype() == DType::f64);
  std::vector<double> dv = d.to_vector<double>();
  Moments md = moments(dv);
  CHECK(std::abs(md.mean - 0.5) < 4 * std::sqrt(1.0 / 12 / dn));
  CHECK(std::abs(md.var - 1.0 / 12) < 4 * std::sqrt(1.0 / 180 / dn));
  bool fine_bits = false;  // f64 uniforms use more than 23 bits
  for (double x : dv) {
    REQUIRE(x >= 0.0);
    REQUIRE(x < 1.0);
    fine_bits |= std::ldexp(x, 23) != std::floor(std::ldexp(x, 23));
  }
  CHECK(fine_bits);
}

TEST_CASE("random: normal statistics", "[api][random]") {
  const int64_t n = 100000;
  const double dn = static_cast<double>(n);
  for (DType dt : {DType::f32, DType::f64}) {
    Array z = random::normal(random::key(5), {n}, dt);
    CHECK(z.dtype() == dt);
    std::vector<double> v = z.to_vector<double>();
    Moments m = moments(v);
    CHECK(std::abs(m.mean) < 4 / std::sqrt(dn));
    CHECK(std::abs(m.var - 1) < 4 * std::sqrt(2 / dn));
    int within1 = 0, finite = 0;
    for (double x : v) {
      within1 += std::abs(x) < 1;
      finite += std::isfinite(x);
    }
    CHECK(finite == n);
    // P(|z| < 1) = 0.682689...
    CHECK(std::abs(within1 / dn - 0.682689) < 4 * std::sqrt(0.682689 * 0.317311 / dn));
  }
  CHECK(random::normal(random::key(5), {2, 3}).shape() == Shape{2, 3});
}

TEST_CASE("random: bernoulli and randint", "[api][random]") {
  const int64_t n = 100000;
  const double dn = static_cast<double>(n);
  Array b = random::bernoulli(random::key(11), 0.3, {n});
  CHECK(b.dtype() == DType::bool_);
  std::vector<bool> bv = b.to_vector<bool>();
  double freq = static_cast<double>(std::count(bv.begin(), bv.end(), true)) / dn;
  CHECK(std::abs(freq - 0.3) < 4 * std::sqrt(0.3 * 0.7 / dn));
  std::vector<bool> none = random::bernoulli(random::key(11), 0.0, {1000}).to_vector<bool>();
  std::vector<bool> all = random::bernoulli(random::key(11), 1.0, {1000}).to_vector<bool>();
  CHECK(std::count(none.begin(), none.end(), true) == 0);
  CHECK(std::count(all.begin(), all.end(), true) == 1000);

  Array r = random::randint(random::key(12), {n}, -3, 7);
  CHECK(r.dtype() == DType::i32);
  std::vector<int32_t> rv = r.to_vector<int32_t>();
  std::vector<int64_t> counts(10, 0);
  for (int32_t x : rv) {
    REQUIRE(x >= -3);
    REQUIRE(x < 7);
    ++counts[x + 3];
  }
  for (int64_t c : counts) CHECK(std::abs(static_cast<double>(c) - dn / 10) < 4 * std::sqrt(dn * 0.1 * 0.9));
  Moments m = moments(rv);
  CHECK(std::abs(m.mean - 1.5) < 4 * std::sqrt(99.0 / 12 / dn));

  std::vector<int32_t> single = random::randint(random::key(12), {50}, 5, 6).to_vector<int32_t>();
  CHECK(std::all_of(single.begin(), single.end(), [](int32_t x) { return x == 5; }));
  // The whole i32 range: both signs appear, roughly half each.
  std::vector<int32_t> wide =
      random::randint(random::key(13), {10000}, INT32_MIN, int64_t{INT32_MAX} + 1).to_vector<int32_t>();
  int64_t negative = std::count_if(wide.begin(), wide.end(), [](int32_t x) { return x < 0; });
  CHECK(std::abs(static_cast<double>(negative) - 5000) < 4 * 50);
}

TEST_CASE("random: batched keys give one draw per key", "[api][random]") {
  std::vector<uint32_t> kw = {0, 1, 2, 3, 4, 5};
  Array keys = array(kw, {3, 2});
  Array batched = random::bits(keys, {4, 5});
  CHECK(batched.shape() == Shape{3, 4, 5});
  std::vector<uint32_t> stacked;
  for (int i = 0; i < 3; ++i) {
    std::vector<uint32_t> one = random::bits(keys[i], {4, 5}).to_vector<uint32_t>();
    stacked.insert(stacked.end(), one.begin(), one.end());
  }
  CHECK(batched.to_vector<uint32_t>() == stacked);

  Array z = random::normal(keys, {7});
  CHECK(z.shape() == Shape{3, 7});
  std::vector<float> zs;
  for (int i = 0; i < 3; ++i) {
    std::vector<float> one = random::normal(keys[i], {7}).to_vector<float>();
    zs.insert(zs.end(), one.begin(), one.end());
  }
  // Equal up to the last bit or so: Eigen's vectorised log/cos may round a
  // lane differently from its scalar tail, and the positions differ here.
  std::vector<float> zb = z.to_vector<float>();
  REQUIRE(zb.size() == zs.size());
  for (size_t i = 0; i < zs.size(); ++i) CHECK(zb[i] == Approx(zs[i]).epsilon(1e-6).margin(1e-6));

  // split of a batch of keys: child j of each key.
  std::vector<Array> kids = random::split(keys, 2);
  REQUIRE(kids.size() == 2);
  CHECK(kids[1].shape() == Shape{3, 2});
  CHECK(kids[1][2].to_vector<uint32_t>() == random::split(keys[2], 2)[1].to_vector<uint32_t>());
  CHECK(random::fold_in(keys, 9)[1].to_vector<uint32_t>() == random::fold_in(keys[1], 9).to_vector<uint32_t>());
}

TEST_CASE("random: invalid keys and parameters throw, naming the function and line", "[api][random]") {
  Array k = random::key(0);
  CHECK_THROWS_AS(random::normal(array({1.0f, 2.0f}), {3}), DTypeError);
  CHECK_THROWS_WITH(random::normal(array({1.0f, 2.0f}), {3}),
                    Contains("random::normal") && Contains("f32[2]") && Contains("random_test.cpp"));
  CHECK_THROWS_AS(random::uniform(array(std::vector<uint32_t>{1, 2, 3}, {3}), {3}), ShapeError);
  CHECK_THROWS_WITH(random::split(array(std::vector<uint32_t>{1, 2, 3}, {3})),
                    Contains("random::split") && Contains("u32[3]") && Contains("random_test.cpp"));
  CHECK_THROWS_AS(random::bits(array(std::vector<int>{1, 2}, {2}), {3}), DTypeError);
  CHECK_THROWS_AS(random::fold_in(scalar(1, DType::u32), 1), ShapeError);

  CHECK_THROWS_AS(random::randint(k, {3}, 5, 5), Error);
  CHECK_THROWS_WITH(random::randint(k, {3}, 5, 2), Contains("random::randint") && Contains("random_test.cpp"));
  CHECK_THROWS_AS(random::randint(k, {3}, 0, int64_t{1} << 40), Error);
  CHECK_THROWS_AS(random::bernoulli(k, 1.5, {3}), Error);
  CHECK_THROWS_WITH(random::bernoulli(k, -0.1, {3}), Contains("random::bernoulli") && Contains("random_test.cpp"));
  CHECK_THROWS_AS(random::bernoulli(k, std::nan(""), {3}), Error);
  CHECK_THROWS_AS(random::uniform(k, {3}, 1.0, 1.0), Error);
  CHECK_THROWS_AS(random::uniform(k, {3}, 0, 1, DType::i32), DTypeError);
  CHECK_THROWS_AS(random::normal(k, {-1}), ShapeError);
  CHECK_THROWS_AS(random::split(k, -1), ShapeError);
}

TEST_CASE("random: traced calls record random_bits and evaluate to the eager result", "[api][random]") {
  auto f = [](const Array& key) {
    std::vector<Array> kids = random::split(key);
    return random::normal(kids[0], {3, 4}) + random::uniform(kids[1], {3, 4}, -1.0, 1.0);
  };
  Array k = random::key(2024);
  Graph g = make_graph(f)(k);
  CHECK_NOTHROW(g.verify());
  int random_nodes = 0;
  for (const auto& node : g.ir().nodes())
    if (node.op == ir::Op::random_bits) {
      ++random_nodes;
      CHECK_THAT(std::string(node.loc.file), Contains("random_test.cpp"));
    }
  CHECK(random_nodes == 3);  // split, normal, uniform
  CHECK_THAT(g.to_text(), Contains("random_bits"));

  std::vector<float> eager = f(k).to_vector<float>();
  std::vector<Array> out = evaluate(g, {k});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == Shape{3, 4});
  CHECK(out[0].to_vector<float>() == eager);
  // Also after a JSON round trip, and with another key.
  Graph back = Graph::from_json(g.to_json());
  CHECK(evaluate(back, {k})[0].to_vector<float>() == eager);
  Array k2 = random::key(2025);
  CHECK(evaluate(g, {k2})[0].to_vector<float>() == f(k2).to_vector<float>());

  // The other distributions trace too.
  auto h = [](const Array& key) {
    return std::vector<Array>{random::bernoulli(key, 0.5, {5}), random::randint(key, {5}, 0, 10),
                              random::fold_in(key, 3), random::normal(key, {5}, DType::f64)};
  };
  std::vector<Array> traced = evaluate(make_graph(h)(k), {k});
  std::vector<Array> direct = h(k);
  REQUIRE(traced.size() == 4);
  CHECK(traced[0].to_vector<bool>() == direct[0].to_vector<bool>());
  CHECK(traced[1].to_vector<int32_t>() == direct[1].to_vector<int32_t>());
  CHECK(traced[2].to_vector<uint32_t>() == direct[2].to_vector<uint32_t>());
  CHECK(traced[3].to_vector<double>() == direct[3].to_vector<double>());
}
