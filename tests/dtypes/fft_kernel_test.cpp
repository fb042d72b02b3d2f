// graft's own FFT kernel (interpreter/kernels/fft_stockham.h) against the
// DFT's definition summed in long double: every length to 80 (radices 2, 3,
// 4, 5, the generic odd ones, and primes above 64 by Bluestein's), lengths past
// the four-step threshold, partial blocks of lines, strided axes, the real
// transforms of even and odd length, in f32 and f64; and each instruction
// set's kernel giving the same bits.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "interpreter/kernels/fft_plan.h"
#include "interpreter/kernels/fft_stockham.h"

using namespace graft;

namespace {

using LC = std::complex<long double>;

// The DFT of each line of x (lines x n), in long double.
std::vector<LC> dft(const std::vector<LC>& x, int64_t lines, int64_t n) {
  std::vector<LC> w(static_cast<size_t>(n)), y(x.size());
  for (int64_t t = 0; t < n; ++t) {
    const long double a = -2.0L * std::numbers::pi_v<long double> * t / n;
    w[static_cast<size_t>(t)] = {std::cos(a), std::sin(a)};
  }
  for (int64_t l = 0; l < lines; ++l)
    for (int64_t k = 0; k < n; ++k) {
      LC acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += x[static_cast<size_t>(l * n + j)] * w[static_cast<size_t>((j * k) % n)];
      y[static_cast<size_t>(l * n + k)] = acc;
    }
  return y;
}

template <class T>
std::vector<LC> widen(const std::vector<std::complex<T>>& v) {
  std::vector<LC> out;
  for (const auto& z : v) out.emplace_back(z.real(), z.imag());
  return out;
}

// The worst error of a line of got against want, over eps (log2 n + 1) |x_line|_2 (|.|_2 of
// the line's input times 1/n for an inverse): the FFT's error bound is O(eps log n) that.
double scaled_error(const std::vector<LC>& got, const std::vector<LC>& want, const std::vector<LC>& x, int64_t lines,
                    int64_t n, int64_t in_n, double eps, bool inverse) {
  double worst = 0;
  const int64_t out_n = static_cast<int64_t>(got.size()) / lines;
  for (int64_t l = 0; l < lines; ++l) {
    long double norm = 0;
    for (int64_t j = 0; j < in_n; ++j) norm += std::norm(x[static_cast<size_t>(l * in_n + j)]);
    norm = std::sqrt(norm) * (inverse ? 1.0L / n : 1.0L);
    if (norm == 0) norm = 1;
    for (int64_t k = 0; k < out_n; ++k) {
      const long double e =
          std::abs(got[static_cast<size_t>(l * out_n + k)] - want[static_cast<size_t>(l * out_n + k)]);
      worst = std::max(worst, static_cast<double>(e / norm));
    }
  }
  return worst / (eps * (std::log2(static_cast<double>(n)) + 1));
}

// One length's checks in T: x = a + i b against its DFT X (long double; x's values are f32,
// exact in both types); ifft against X[-k] / n; rfft of a against (X[k] + conj X[n-k]) / 2;
// irfft of that half spectrum (rounded to T) against a.
template <class T>
void check_length(const std::vector<float>& a, const std::vector<float>& b, const std::vector<LC>& X, int64_t lines,
                  int64_t n, double* worst) {
  const DType rd = sizeof(T) == 4 ? f32 : f64;
  const double eps = std::numeric_limits<T>::epsilon();
  const Array re = astype(array(a, {lines, n}), rd), im = astype(array(b, {lines, n}), rd);
  const Array x = complex(re, im);
  std::vector<LC> xv, av, inv, half;
  for (size_t i = 0; i < a.size(); ++i) {
    xv.emplace_back(a[i], b[i]);
    av.emplace_back(a[i], 0);
  }
  const int64_t m = n / 2 + 1;
  for (int64_t l = 0; l < lines; ++l) {
    const LC* Xl = X.data() + l * n;
    for (int64_t k = 0; k < n; ++k) inv.push_back(Xl[(n - k) % n] / static_cast<long double>(n));
    for (int64_t k = 0; k < m; ++k) half.push_back((Xl[k] + std::conj(Xl[(n - k) % n])) / 2.0L);
  }
  auto note = [&](const char* what, double e, double bound) {
    *worst = std::max(*worst, e);
    INFO(what << " of " << lines << " x " << n << " in " << dtype_name(rd) << ": " << e);
    CHECK(e <= bound);
  };
  note("fft", scaled_error(widen(fft::fft(x).to_vector<std::complex<T>>()), X, xv, lines, n, n, eps, false), 1.0);
  note("ifft", scaled_error(widen(fft::ifft(x).to_vector<std::complex<T>>()), inv, xv, lines, n, n, eps, true), 1.0);
  const std::vector<std::complex<T>> sv = fft::rfft(re).to_vector<std::complex<T>>();
  note("rfft", scaled_error(widen(sv), half, av, lines, n, n, eps, false), 1.0);
  // The imaginary parts of bin 0 and (n even) bin n/2 are exactly zero, as NumPy's.
  for (int64_t l = 0; l < lines; ++l) {
    CHECK(sv[static_cast<size_t>(l * m)].imag() == 0);
    if (n % 2 == 0) CHECK(sv[static_cast<size_t>(l * m + m - 1)].imag() == 0);
  }
  std::vector<T> half_re, half_im;
  for (const LC& z : half) {
    half_re.push_back(static_cast<T>(z.real()));
    half_im.push_back(static_cast<T>(z.imag()));
  }
  const Array back = fft::irfft(complex(array(half_re, {lines, m}), array(half_im, {lines, m})), n);
  std::vector<LC> bv;
  for (T v : back.to_vector<T>()) bv.emplace_back(v, 0);
  // The bound is twice the others': a Hermitian spectrum's bins count twice in its |.|_2.
  note("irfft", scaled_error(bv, av, half, lines, n, m, eps, true), 2.0);
}

}  // namespace

TEST_CASE("fft kernel: every length to 80 and longer ones agree with the DFT within O(eps log n)", "[dtypes][fft]") {
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 80; ++n) lengths.push_back(n);
  // 3^5, 7^3, 2^3 5^3, 2^10, 11 * 13 * 4, past the four-step threshold (4608 = 64 x 72;
  // 4100 = 41 x 100), primes above the largest radix (1031; 4099, whose convolution's
  // transforms run in four steps).
  for (int64_t n : {243, 343, 1000, 1024, 572, 4608, 4100, 1031, 4099}) lengths.push_back(n);
  double worst32 = 0, worst64 = 0, worst_bluestein = 0;
  for (int64_t n : lengths) {
    const int64_t lines = n <= 80 ? (n % 3 == 0 ? 17 : 3) : 1;  // partial blocks of 16 and 8 lanes
    const std::vector<float> a = random::normal(random::key(static_cast<uint64_t>(n)), {lines, n}).to_vector<float>();
    const std::vector<float> b =
        random::normal(random::key(static_cast<uint64_t>(n) + 1), {lines, n}).to_vector<float>();
    std::vector<LC> x;
    for (size_t i = 0; i < a.size(); ++i) x.emplace_back(a[i], b[i]);
    const std::vector<LC> X = dft(x, lines, n);
    // Primes above the largest radix run by Bluestein's algorithm.
    const bool bluestein = n == 67 || n == 71 || n == 73 || n == 79 || n == 1031 || n == 4099;
    check_length<float>(a, b, X, lines, n, bluestein ? &worst_bluestein : &worst32);
    check_length<double>(a, b, X, lines, n, bluestein ? &worst_bluestein : &worst64);
  }
  // Measured: the worst scaled errors are 1.38 (f32), 1.26 (f64) and 1.49 (Bluestein's),
  // all irfft's (its bound is 2), so the bounds are tight to a factor of ~1.5; and not vacuous:
  INFO("worst f32 " << worst32 << ", f64 " << worst64 << ", Bluestein's " << worst_bluestein);
  CHECK(worst32 > 0.005);
  CHECK(worst64 > 0.005);
  CHECK(worst_bluestein > 0.005);
}

TEST_CASE("fft kernel: strided axes and uneven blocks equal the transform along the last axis", "[dtypes][fft]") {
  // fft2 transforms its first axis inside the kernel (lanes spaced by the inner
  // extent: 5 is fewer than a block, 20 straddles blocks); fft(axis 0) moves the axis last.
  for (const Shape& s : {Shape{12, 5}, Shape{16, 20}, Shape{45, 33}, Shape{4608, 3}}) {
    INFO(Catch::Detail::stringify(s));
    for (DType d : {f32, f64}) {
      const Array x = complex(random::normal(random::key(1), s, d), random::normal(random::key(2), s, d));
      const Array two = fft::fft2(x);
      const Array step = fft::fft(fft::fft(x, -1, 1), -1, 0);
      const double eps = d == f32 ? 0x1p-23 : 0x1p-52;
      const double scale = std::sqrt(static_cast<double>(s[0] * s[1])) * 4;
      CHECK(max(abs(two - step)).item<double>() <= 8 * eps * std::log2(static_cast<double>(s[0] * s[1])) * scale);
      CHECK(max(abs(fft::ifft2(two) - x)).item<double>() <= 8 * eps * std::log2(static_cast<double>(s[0] * s[1])) * 4);
    }
  }
}

TEST_CASE("fft kernel: powers of two are exact on impulses and constants", "[dtypes][fft]") {
  for (int64_t n : {2, 4, 8, 64, 1024, 8192}) {
    INFO("n = " << n);
    std::vector<float> impulse(static_cast<size_t>(n), 0.0f), ones(static_cast<size_t>(n), 1.0f);
    impulse[0] = 1;
    const std::vector<std::complex<float>> flat = fft::rfft(array(impulse, {n})).to_vector<std::complex<float>>();
    CHECK(std::all_of(flat.begin(), flat.end(), [](std::complex<float> z) { return z == std::complex<float>(1, 0); }));
    const std::vector<std::complex<float>> peak = fft::rfft(array(ones, {n})).to_vector<std::complex<float>>();
    CHECK(peak[0] == std::complex<float>(static_cast<float>(n), 0));
    CHECK(std::all_of(peak.begin() + 1, peak.end(),
                      [](std::complex<float> z) { return z == std::complex<float>(0, 0); }));
  }
}

TEST_CASE("fft kernel: every instruction set's kernel gives the same bits", "[dtypes][fft]") {
  using interpreter::FftKernels;
  const std::vector<const FftKernels*> sets = interpreter::fft_kernel_sets();
  REQUIRE(!sets.empty());
  INFO(sets.size() << " kernels");
  for (int64_t n : {60, 64, 77, 1024}) {
    const auto plan32 = interpreter::fft_plan<float>(n);
    const auto plan64 = interpreter::fft_plan<double>(n);
    REQUIRE(plan32);
    REQUIRE(plan64);
    constexpr int V32 = interpreter::kFftLanes<float>, V64 = interpreter::kFftLanes<double>;
    std::vector<float> x32(static_cast<size_t>(2 * n * V32));
    std::vector<double> x64(static_cast<size_t>(2 * n * V64));
    for (size_t i = 0; i < x32.size(); ++i) x32[i] = std::sin(0.37f * static_cast<float>(i)) + 0.1f;
    for (size_t i = 0; i < x64.size(); ++i) x64[i] = std::cos(0.29 * static_cast<double>(i)) - 0.2;
    int64_t lanes32[V32], lanes64[V64];
    for (int v = 0; v < V32; ++v) lanes32[v] = v * n;  // whole lines side by side
    for (int v = 0; v < V64; ++v) lanes64[v] = v;      // adjacent lanes
    std::vector<std::vector<float>> out32;
    std::vector<std::vector<double>> out64;
    for (const FftKernels* k : sets)
      for (bool inverse : {false, true}) {
        std::vector<float> y32(x32.size()), w32(static_cast<size_t>(4 * n * V32));
        std::vector<double> y64(x64.size()), w64(static_cast<size_t>(4 * n * V64));
        k->f32(plan32->view, {x32.data(), lanes32, 1, n, y32.data(), lanes32, 1, n, V32 - 3, 0.5f, nullptr, w32.data()},
               inverse);
        k->f64(plan64->view, {x64.data(), lanes64, V64, 1, y64.data(), lanes64, V64, 1, V64, 1.0, nullptr, w64.data()},
               inverse);
        out32.push_back(y32);
        out64.push_back(y64);
      }
    for (size_t i = 2; i < out32.size(); ++i) {
      CHECK(std::memcmp(out32[i].data(), out32[i % 2].data(), out32[i].size() * sizeof(float)) == 0);
      CHECK(std::memcmp(out64[i].data(), out64[i % 2].data(), out64[i].size() * sizeof(double)) == 0);
    }
    CHECK(out32[0] != out32[1]);  // forward and inverse differ
  }
}

TEST_CASE("fft kernel: plan and twiddle caches drop old tables past their budget", "[dtypes][fft]") {
  using Cache = interpreter::FftTableCache<int, std::vector<char>>;
  Cache cache;
  int made = 0;
  auto make = [&] {
    ++made;
    return std::make_shared<const std::vector<char>>(10, 'x');
  };
  const size_t third = Cache::kBytes / 3;
  const std::shared_ptr<const std::vector<char>> first = cache.get(1, third, make);
  CHECK(cache.get(1, third, make) == first);
  CHECK(made == 1);
  cache.get(2, third, make);
  cache.get(3, third, make);
  CHECK(made == 3);
  cache.get(4, third, make);  // past the budget: 1, 2 and 3 are dropped
  CHECK(made == 4);
  CHECK(cache.get(4, third, make) != nullptr);
  CHECK(made == 4);
  CHECK(cache.get(1, third, make) != first);  // made again
  CHECK(made == 5);
  CHECK(first->size() == 10);  // whoever holds a dropped table keeps it
}

TEST_CASE("fft kernel: transforms from several threads at once equal one thread's", "[dtypes][fft]") {
  // Blocks, four steps and Bluestein's chirps share plan caches and thread-local work.
  const std::vector<int64_t> lengths = {1024, 4099, int64_t{1} << 15, 3 << 13};
  std::vector<Array> inputs, want;
  for (int64_t n : lengths) {
    inputs.push_back(random::normal(random::key(static_cast<uint64_t>(n)), {3, n}));
    want.push_back(fft::rfft(inputs.back()));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (size_t k = 0; k < lengths.size(); ++k) {
          const size_t i = (k + static_cast<size_t>(t)) % lengths.size();
          const Array got = fft::rfft(inputs[i]);
          mismatches[static_cast<size_t>(t)] += max(abs(got - want[i])).item<float>() != 0;
        }
    });
  for (std::thread& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}
