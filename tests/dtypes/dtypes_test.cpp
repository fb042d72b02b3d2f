// Every dtype against JAX's answers (tests/dtypes/jax_dtype_values.json,
// written by scripts/make_dtype_values.py with jax_enable_x64): the
// promotion lattice cell by cell, conversions to and from the halves bit
// for bit, elementwise ops and reductions in the halves and small integers,
// eagerly and under jit.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>

#include "graft/graft.h"
#include "ir/dtype.h"
#include "support/scoped_env.h"

using namespace graft;
using nlohmann::json;

namespace {

const json& values() {
  static const json j = [] {
    std::ifstream in(GRAFT_DTYPE_VALUES_FILE);
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return j;
}

DType dtype_named(const std::string& name) {
  if (name == "bool") return bool_;
  auto d = ir::dtype_from_name(name);
  REQUIRE(d.has_value());
  return *d;
}

// The unsigned dtype of d's width, whose values are d's bit patterns.
DType bits_dtype(DType d) {
  switch (ir::dtype_size(d)) {
    case 1: return u8;
    case 2: return u16;
    case 4: return u32;
    default: return u64;
  }
}

// An array of dtype d from the JSON's encoding: floats as hex bit patterns, the rest as numbers.
Array decode(const json& v, DType d) {
  const Shape shape{static_cast<int64_t>(v.size())};
  if (ir::is_inexact(d)) {
    std::vector<uint64_t> bits;
    for (const json& h : v) bits.push_back(std::stoull(h.get<std::string>(), nullptr, 16));
    REQUIRE_FALSE(ir::is_complex(d));  // no complex values in the file yet
    return bitcast(astype(array(bits, shape), bits_dtype(d)), d);
  }
  if (d == u64) return array(v.get<std::vector<uint64_t>>(), shape);
  return astype(array(v.get<std::vector<int64_t>>(), shape), d);
}

// The bit patterns (floats) or values (the rest) of x, as u64 for comparison.
std::vector<uint64_t> encode(const Array& x) {
  if (ir::is_complex(x.dtype())) return encode(astype(x, ir::real_dtype(x.dtype())));  // real values only, here
  if (ir::is_inexact(x.dtype())) return astype(bitcast(x, bits_dtype(x.dtype())), u64).to_vector<uint64_t>();
  return bitcast(astype(x, x.dtype() == u64 ? u64 : i64), u64).to_vector<uint64_t>();
}
std::vector<uint64_t> expected(const json& v, DType d) { return encode(decode(v, d)); }

// Distance in units of the last place between two floats of d, given as bit patterns.
int64_t ulps(uint64_t a, uint64_t b, DType d) {
  const int bits = static_cast<int>(ir::dtype_size(d)) * 8;
  auto ordered = [&](uint64_t u) {
    const uint64_t sign = uint64_t{1} << (bits - 1);
    const int64_t mag = static_cast<int64_t>(u & (sign - 1));
    return (u & sign) ? -mag : mag;
  };
  return std::abs(ordered(a) - ordered(b));
}

bool is_nan_bits(uint64_t u, DType d) {
  if (d == f16) return (u & 0x7c00) == 0x7c00 && (u & 0x3ff);
  if (d == bf16) return (u & 0x7f80) == 0x7f80 && (u & 0x7f);
  if (d == f32) return std::isnan(std::bit_cast<float>(static_cast<uint32_t>(u)));
  return std::isnan(std::bit_cast<double>(u));
}

// got equals want element by element: exactly, or within max_ulps for floats (NaN matching NaN).
void check_close(const std::vector<uint64_t>& got, const std::vector<uint64_t>& want, DType d, int64_t max_ulps) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = got[i] == want[i];
    if (!ok && ir::is_floating(d))
      ok = (is_nan_bits(got[i], d) && is_nan_bits(want[i], d)) || ulps(got[i], want[i], d) <= max_ulps;
    if (!ok && ++bad <= 5) FAIL_CHECK("element " << i << ": got " << std::hex << got[i] << ", JAX " << want[i]);
  }
  CHECK(bad == 0);
}

// The f16 nearest v by search (ties to the even mantissa): the reference for f16_of_double.
uint16_t nearest_f16(double v) {
  const uint16_t guess = float16(static_cast<float>(v)).bits;  // within one step of the answer
  uint16_t best = guess;
  double best_gap = INFINITY;
  for (int step = -1; step <= 1; ++step) {
    const uint16_t b = static_cast<uint16_t>(guess + step);
    // Neither a NaN nor across the sign; the gap is exact (v and the candidate are near).
    if (((b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0) || ((b ^ guess) & 0x8000) != 0) continue;
    // (inf stands where 2^16 would be: IEEE overflows to it from the midpoint 65520 up)
    const double h = (b & 0x7fff) == 0x7c00 ? std::copysign(65536.0, v) : static_cast<float>(float16::from_bits(b));
    const double gap = std::abs(v - h);
    if (gap < best_gap || (gap == best_gap && (b & 1) == 0)) best = b, best_gap = gap;
  }
  return best;
}

}  // namespace

TEST_CASE("dtypes: JAX's promotion table, every pair and weak scalars", "[dtypes][promotion]") {
  const json& p = values()["promotion"];
  const std::vector<std::string> order = p["order"];
  auto operand = [](const std::string& name) {
    if (name == "weak_int") return ir::PromotionType{i32, true};
    if (name == "weak_float") return ir::PromotionType{f32, true};
    if (name == "weak_complex") return ir::PromotionType{c64, true};
    return ir::PromotionType{dtype_named(name), false};
  };
  int cells = 0;
  for (size_t r = 0; r < order.size(); ++r)
    for (size_t c = 0; c < order.size(); ++c) {
      std::string want = p["table"][r][c];
      const bool weak = want.back() == '*';
      if (weak) want.pop_back();
      const DType jax = dtype_named(want);
      const ir::PromotionType got = ir::promote_types(operand(order[r]), operand(order[c]));
      INFO(order[r] << " + " << order[c] << ": JAX " << p["table"][r][c].get<std::string>() << ", graft "
                    << dtype_name(got.dtype) << (got.weak ? "*" : ""));
      CHECK(got.weak == weak);
      if (weak) {  // JAX (with x64) materialises a weak kind as 64 bits; graft as the default dtype of the kind
        CHECK(ir::is_integer(got.dtype) == ir::is_integer(jax));
        CHECK(ir::is_floating(got.dtype) == ir::is_floating(jax));
        CHECK(ir::is_complex(got.dtype) == ir::is_complex(jax));
      } else {
        CHECK(got.dtype == jax);
      }
      if (r < 15 && c < 15) {  // the public function on two dtypes: a weak join is f64 in both modes, as JAX's
        CHECK(promote_types(dtype_named(order[r]), dtype_named(order[c])) == (weak ? f64 : jax));
      }
      ++cells;
    }
  CHECK(cells == 18 * 18);
}

TEST_CASE("dtypes: conversions to and from the halves match XLA bit for bit", "[dtypes][convert]") {
  int cases = 0;
  for (const json& c : values()["convert"]) {
    const DType from = dtype_named(c["from"]), to = dtype_named(c["to"]);
    INFO(c["from"].get<std::string>() << " -> " << c["to"].get<std::string>());
    const Array x = decode(c["x"], from);
    std::vector<uint64_t> want = expected(c["y"], to);
    if (from == f64 && to == f16) {
      // XLA's answer depends on the CPU: with AVX512-FP16 it rounds once, elsewhere (where these
      // values were made) through f32, twice; graft rounds once, as NumPy. JAX's values are one
      // of the two, and graft's the nearest f16.
      const std::vector<double> v = x.to_vector<double>();
      for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t once = nearest_f16(v[i]), twice = float16(static_cast<float>(v[i])).bits;
        CHECK((want[i] == once || want[i] == twice || std::isnan(v[i])));
        if (!std::isnan(v[i])) want[i] = once;
      }
    }
    check_close(encode(astype(x, to)), want, to, 0);
    // Under jit too (the interpreter runs what generated code cannot).
    check_close(encode(jit([to](const Array& a) { return astype(a, to); })(x)), want, to, 0);
    ++cases;
  }
  CHECK(cases == 32);
}

namespace {

using Fn = std::function<Array(const std::vector<Array>&)>;
const std::map<std::string, Fn>& ops() {
  static const std::map<std::string, Fn> m = {
      {"neg", [](auto& a) { return -a[0]; }},
      {"exp", [](auto& a) { return exp(a[0]); }},
      {"log", [](auto& a) { return log(a[0]); }},
      {"sin", [](auto& a) { return sin(a[0]); }},
      {"tanh", [](auto& a) { return tanh(a[0]); }},
      {"sqrt", [](auto& a) { return sqrt(a[0]); }},
      {"logistic", [](auto& a) { return sigmoid(a[0]); }},
      {"floor", [](auto& a) { return floor(a[0]); }},
      {"abs", [](auto& a) { return abs(a[0]); }},
      {"erf", [](auto& a) { return erf(a[0]); }},
      {"add", [](auto& a) { return a[0] + a[1]; }},
      {"sub", [](auto& a) { return a[0] - a[1]; }},
      {"mul", [](auto& a) { return a[0] * a[1]; }},
      {"div", [](auto& a) { return a[0] / a[1]; }},
      {"floor_divide", [](auto& a) { return floor_divide(a[0], a[1]); }},
      {"remainder", [](auto& a) { return a[0] % a[1]; }},
      {"max", [](auto& a) { return maximum(a[0], a[1]); }},
      {"pow", [](auto& a) { return pow(abs(a[0]), a[1]); }},
      {"atan2", [](auto& a) { return atan2(a[0], a[1]); }},
      {"lt", [](auto& a) { return a[0] < a[1]; }},
      {"eq", [](auto& a) { return a[0] == a[1]; }},
      {"left_shift", [](auto& a) { return a[0] << a[1]; }},
      {"right_shift", [](auto& a) { return a[0] >> a[1]; }},
      {"population_count", [](auto& a) { return population_count(a[0]); }},
      {"clz", [](auto& a) { return clz(a[0]); }},
      {"not", [](auto& a) { return ~a[0]; }},
  };
  return m;
}

// JAX's own f32 math rounds to the half once; graft's f32 functions are
// within a few f32 ulps of JAX's, so the half may differ by one ulp.
int64_t half_ulps(const std::string& op) {
  for (const char* exact : {"neg", "floor", "abs", "add", "sub", "mul", "div", "max", "lt", "eq", "sqrt"})
    if (op == exact) return 0;
  return 1;
}

}  // namespace

TEST_CASE("dtypes: elementwise ops in the halves and small integers match JAX", "[dtypes][elementwise]") {
  int cases = 0;
  for (const json& c : values()["elementwise"]) {
    const std::string op = c["op"];
    const DType d = dtype_named(c["dtype"]);
    INFO(op << " on " << dtype_name(d));
    auto it = ops().find(op);
    REQUIRE(it != ops().end());
    std::vector<Array> args;
    for (const json& a : c["args"]) args.push_back(decode(a, d));
    const Array eager = it->second(args);
    const DType out = eager.dtype();
    CHECK((out == d || out == bool_));
    const std::vector<uint64_t> want = expected(c["y"], out);
    check_close(encode(eager), want, out, half_ulps(op));
    const Array compiled = jit([f = it->second](const std::vector<Array>& a) { return f(a); })(args);
    check_close(encode(compiled), want, out, half_ulps(op));
    ++cases;
  }
  CHECK(cases >= 80);
}

TEST_CASE("dtypes: nextafter in the halves steps by the half's own last place, as JAX", "[dtypes][elementwise]") {
  // jnp.nextafter on float16 / bfloat16 operands (JAX 0.10.2), as bit patterns.
  auto step = [](DType d, float from, float to) {
    const Array x = astype(array(std::vector<float>{from}, {1}), d), y = astype(array(std::vector<float>{to}, {1}), d);
    const Array eager = nextafter(x, y);
    const Array compiled = jit([](const Array& a, const Array& b) { return nextafter(a, b); })(x, y);
    CHECK(encode(compiled) == encode(eager));
    return encode(eager).at(0);
  };
  CHECK(step(f16, 1, 2) == 0x3c01);  // 1.001
  CHECK(step(f16, 1, 0) == 0x3bff);  // 0.9995
  CHECK(step(f16, -1, 0) == 0xbbff);
  CHECK(step(f16, 0, -1) == 0x8001);  // the smallest subnormal, negative
  CHECK(step(f16, 65504, INFINITY) == 0x7c00);
  CHECK(step(bf16, 1, 2) == 0x3f81);  // 1.0078125
  CHECK(step(bf16, 0, 1) == 0x0001);
  CHECK(step(bf16, 2, 2) == 0x4000);
  CHECK(is_nan_bits(step(f16, NAN, 1), f16));
}

TEST_CASE("dtypes: reductions of halves accumulate in f32, as JAX", "[dtypes][reduce]") {
  for (const json& c : values()["reductions"]) {
    const DType d = dtype_named(c["dtype"]);
    const Array x = decode(c["x"], d);
    INFO("sum of " << x.size() << " " << dtype_name(d));
    check_close(encode(sum(x)), expected(c["y"], d), d, 1);
    check_close(encode(jit([](const Array& a) { return sum(a); })(x)), expected(c["y"], d), d, 1);
    check_close(encode(max(x)), expected(c["max"], d), d, 0);
  }
}

TEST_CASE("dtypes: the halves convert as IEEE and bfloat16 do", "[dtypes][convert]") {
  // Every f16 bit pattern survives a round trip through float.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float16 h = float16::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) continue;
    REQUIRE(float16(f).bits == b);
    const bfloat16 g = bfloat16::from_bits(static_cast<uint16_t>(b));
    if (!std::isnan(static_cast<float>(g))) REQUIRE(bfloat16(static_cast<float>(g)).bits == b);
  }
  CHECK(float16(65504.0f).bits == 0x7bff);
  CHECK(float16(65520.0f).bits == 0x7c00);                // rounds up to inf
  CHECK(float16(5.960464477539063e-08f).bits == 0x0001);  // the smallest subnormal
  CHECK(float16(2.981e-08f).bits == 0x0001);              // above half of it: up
  CHECK(float16(2.9802322e-08f).bits == 0x0000);          // exactly half: to even, zero
  CHECK(bfloat16(1.00390625f).bits == 0x3f80);            // a tie: to even
  CHECK(std::isnan(static_cast<float>(bfloat16(std::nanf("")))));
}

TEST_CASE("dtypes: a double rounds to f16 once, as NumPy and JAX (and to bf16 through f32, as JAX)",
          "[dtypes][convert]") {
  // Just above a tie: rounding to f32 first would land on the tie and then on the even neighbour.
  CHECK(half_bits::f16_of_double(1 + 0x1p-11 + 0x1p-30) == float16(1.0009765625f).bits);
  CHECK(half_bits::f16_of_double(-(1 + 0x1p-11 + 0x1p-40)) == float16(-1.0009765625f).bits);
  CHECK(half_bits::f16_of_double(1 + 0x1p-11) == float16(1.0f).bits);  // the tie itself: to even
  CHECK(half_bits::f16_of_double(0x1p-25 + 0x1p-60) == 0x0001);        // above half the smallest subnormal
  CHECK(half_bits::f16_of_double(65520.0 - 0x1p-30) == 0x7bff);        // just below the overflow threshold
  CHECK(half_bits::f16_of_double(1e300) == 0x7c00);
  CHECK(half_bits::f16_of_double(1e-300) == 0x0000);
  CHECK(half_bits::f16_of_double(-1e-300) == 0x8000);
  // Every f16 value, each midpoint to its neighbour and doubles a few f32 ulps-and-a-bit either side of it.
  int checked = 0;
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const double lo = static_cast<float>(float16::from_bits(static_cast<uint16_t>(b)));
    const double hi = static_cast<float>(float16::from_bits(static_cast<uint16_t>(b + 1)));
    const double mid = (lo + hi) / 2;
    for (double v : {lo, mid, mid + mid * 0x1p-35, mid - mid * 0x1p-35, mid + mid * 0x1p-26, mid - mid * 0x1p-26,
                     lo + (hi - lo) * 0.3}) {
      for (double s : {v, -v}) {
        INFO("v = " << s);
        REQUIRE(half_bits::f16_of_double(s) == nearest_f16(s));
        ++checked;
      }
    }
  }
  CHECK(checked == 0x7c00 * 14);
  // Every path: eager, a lone node under jit, generated code (fused with a negation), complex, weak scalars.
  const Array x = array(std::vector<double>{1 + 0x1p-11 + 0x1p-30, -(1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-11}, Shape{3});
  const std::vector<double> want{1.0009765625, -1.0009765625, 1.0};
  CHECK(astype(astype(x, f16), f64).to_vector<double>() == want);
  CHECK(astype(jit([](const Array& a) { return astype(a, f16); })(x), f64).to_vector<double>() == want);
  CHECK(astype(-jit([](const Array& a) { return -astype(a, f16); },
                    JitOptions{.backend = Backend::cpu, .wait_for_compile = true})(x),
               f64)
            .to_vector<double>() == want);
  CHECK(astype(astype(astype(x, c128), f16), f64).to_vector<double>() == want);
  CHECK((ones(Shape{1}, f16) * (1 + 0x1p-11 + 0x1p-30)).to_vector<double>() == std::vector<double>{1.0009765625});
  // bf16 from a double goes through f32, as JAX and ml_dtypes: 1 + 2^-8 + 2^-40 is bf16's 1, not 1 + 2^-7.
  CHECK(astype(astype(array(std::vector<double>{1 + 0x1p-8 + 0x1p-40}, Shape{1}), bf16), f64).to_vector<double>() ==
        std::vector<double>{1.0});
}

TEST_CASE("dtypes: element read-back, printing and .npy in every dtype", "[dtypes][npy]") {
  const Array ints = array({-3, 0, 5, 100});
  for (DType d : ir::kAllDTypes) {
    INFO(dtype_name(d));
    const Array x = astype(d == bool_ ? ints : abs(ints), d);
    const std::string path = std::string(GRAFT_TEST_TMPDIR) + "/dtype_" + dtype_name(d) + ".npy";
    save_npy(path, x);
    const Array back = d == bf16 ? load_npy(path, bf16) : load_npy(path);
    CHECK(back.dtype() == d);
    CHECK(encode(back) == encode(x));
    std::ostringstream os;
    os << x;
    CHECK(os.str().find(std::string("dtype=") + dtype_name(d)) != std::string::npos);
  }
  CHECK(astype(array({1.5, -2.25}), bf16).to_vector<bfloat16>()[1].bits == bfloat16(-2.25f).bits);
  CHECK(static_cast<float>(astype(scalar(0.1), f16).item<float16>()) == static_cast<float>(float16(0.1f)));
  CHECK(astype(array({3, 4}), c64).to_vector<std::complex<float>>()[1] == std::complex<float>(4, 0));
  CHECK(astype(array({-1, 300}), u8).to_vector<uint8_t>() == std::vector<uint8_t>{255, 44});     // wraps, as NumPy
  CHECK(astype(array({-1.5, 300.0}), u8).to_vector<uint8_t>() == std::vector<uint8_t>{0, 255});  // saturates, as XLA
  CHECK_THROWS_AS(load_npy(std::string(GRAFT_TEST_TMPDIR) + "/dtype_bf16.npy"), DTypeError);
}

// ---- complex numbers

namespace {

// A complex array from the JSON's encoding: (real, imaginary) bit patterns, element by element.
Array decode_complex(const json& v, DType d) {
  const DType part = ir::real_dtype(d);
  const int64_t n = static_cast<int64_t>(v.size()) / 2;
  const Array parts = reshape(decode(v, part), {n, 2});
  return complex(reshape(slice(parts, {0, 0}, {n, 1}), {n}), reshape(slice(parts, {0, 1}, {n, 2}), {n}));
}

Array decode_any(const json& v, DType d) { return ir::is_complex(d) ? decode_complex(v, d) : decode(v, d); }

std::vector<std::complex<double>> values_of(const Array& x) {
  if (ir::is_complex(x.dtype())) return astype(x, c128).to_vector<std::complex<double>>();
  std::vector<std::complex<double>> out;
  for (double v : astype(x, f64).to_vector<double>()) out.emplace_back(v, 0.0);
  return out;
}

// The largest |got - want| / max(|want|, floor), in units of the dtype's epsilon (NaNs must match).
double worst_error(const Array& got, const Array& want, double floor = 1e-6) {
  const std::vector<std::complex<double>> g = values_of(got), w = values_of(want);
  REQUIRE(g.size() == w.size());
  const double eps = ir::real_dtype(want.dtype()) == f32 || want.dtype() == f32 ? 0x1p-23 : 0x1p-52;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool gn = std::isnan(g[i].real()) || std::isnan(g[i].imag());
    const bool wn = std::isnan(w[i].real()) || std::isnan(w[i].imag());
    if (gn || wn) {
      if (gn != wn) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::abs(g[i] - w[i]) / std::max(std::abs(w[i]), floor) / eps);
  }
  return worst;
}

using Unary = std::function<Array(const Array&)>;
const std::map<std::string, Unary>& complex_unary() {
  static const std::map<std::string, Unary> m = {
      {"exp", [](auto& z) { return exp(z); }},          {"log", [](auto& z) { return log(z); }},
      {"log1p", [](auto& z) { return log1p(z); }},      {"expm1", [](auto& z) { return expm1(z); }},
      {"sqrt", [](auto& z) { return sqrt(z); }},        {"rsqrt", [](auto& z) { return rsqrt(z); }},
      {"sin", [](auto& z) { return sin(z); }},          {"cos", [](auto& z) { return cos(z); }},
      {"tan", [](auto& z) { return tan(z); }},          {"sinh", [](auto& z) { return sinh(z); }},
      {"cosh", [](auto& z) { return cosh(z); }},        {"tanh", [](auto& z) { return tanh(z); }},
      {"asin", [](auto& z) { return asin(z); }},        {"acos", [](auto& z) { return acos(z); }},
      {"atan", [](auto& z) { return atan(z); }},        {"asinh", [](auto& z) { return asinh(z); }},
      {"acosh", [](auto& z) { return acosh(z); }},      {"atanh", [](auto& z) { return atanh(z); }},
      {"logistic", [](auto& z) { return sigmoid(z); }}, {"square", [](auto& z) { return square(z); }},
      {"reciprocal", [](auto& z) { return 1.0 / z; }},  {"neg", [](auto& z) { return -z; }},
      {"sign", [](auto& z) { return sign(z); }},        {"abs", [](auto& z) { return abs(z); }},
      {"real", [](auto& z) { return real(z); }},        {"imag", [](auto& z) { return imag(z); }},
      {"conj", [](auto& z) { return conj(z); }},        {"angle", [](auto& z) { return angle(z); }},
  };
  return m;
}

}  // namespace

TEST_CASE("dtypes: complex elementwise ops match JAX", "[dtypes][complex]") {
  const json& cx = values()["complex"];
  std::map<std::string, double> worst;
  for (const json& c : cx["unary"]) {
    const DType d = dtype_named(c["dtype"]), out = dtype_named(c["ydtype"]);
    const std::string op = c["op"];
    INFO(op << " on " << dtype_name(d));
    const Array z = decode_complex(c["x"], d), want = decode_any(c["y"], out), exact = decode_any(c["exact"], out);
    const Array got = complex_unary().at(op)(z);
    CHECK(got.dtype() == out);
    // Within 4 epsilons of the exact value (mpmath's, rounded once), relative to its magnitude.
    const double e = worst_error(got, exact);
    worst[op] = std::max(worst[op], e);
    CHECK(e <= 4);
    CHECK(worst_error(jit(complex_unary().at(op))(z), exact) <= 4);  // jit runs the interpreter's kernels
    // And within 8 of JAX's, but for sinh: XLA's cancels near 0 (222 epsilons at 1e-4 + 2e-4i, where graft's is exact).
    if (op != "sinh") CHECK(worst_error(got, want) <= 8);
  }
  for (const json& c : cx["binary"]) {
    const DType d = dtype_named(c["dtype"]), out = dtype_named(c["ydtype"]);
    const std::string op = c["op"];
    INFO(op << " on " << dtype_name(d));
    const Array z = decode_complex(c["x"], d), w = decode_complex(c["w"], d), want = decode_any(c["y"], out);
    const Array got = op == "add"   ? z + w
                      : op == "sub" ? z - w
                      : op == "mul" ? z * w
                      : op == "div" ? z / w
                      : op == "eq"  ? z == w
                                    : z != w;
    CHECK(got.dtype() == out);
    CHECK(worst_error(got, want) <= 2);
  }
  std::string report;
  for (const auto& [op, e] : worst) report += op + " " + std::to_string(e) + "  ";
  INFO("worst error against the exact values, in epsilons: " << report);
  CHECK(worst.size() == 28);
}

TEST_CASE("dtypes: complex reductions and matmul match JAX", "[dtypes][complex]") {
  const json& cx = values()["complex"];
  for (const json& c : cx["reduce"]) {
    const DType d = dtype_named(c["dtype"]);
    INFO(dtype_name(d));
    const Array m = reshape(decode_complex(c["x"], d), {4, 5});
    CHECK(worst_error(sum(m, {1}), decode_complex(c["sum"], d)) <= 4);
    CHECK(worst_error(jit([](const Array& a) { return sum(a, {1}); })(m), decode_complex(c["sum"], d)) <= 4);
    CHECK(worst_error(mean(m), decode_complex(c["mean"], d)) <= 8);
    CHECK(worst_error(reshape(cumsum(m, 0), {20}), decode_complex(c["cumsum"], d)) <= 4);
    const Array v = var(m, {1});
    CHECK(v.dtype() == ir::real_dtype(d));
    CHECK(worst_error(v, decode(c["var"], ir::real_dtype(d))) <= 8);
  }
  for (const json& c : cx["matmul"]) {
    const DType d = dtype_named(c["dtype"]);
    const Array a = reshape(decode_complex(c["a"], d), {6, 7}), b = reshape(decode_complex(c["b"], d), {7, 5});
    CHECK(worst_error(reshape(matmul(a, b), {30}), decode_complex(c["y"], d), 1.0) <= 16);
  }
}

TEST_CASE("dtypes: gradients through complex numbers follow JAX's convention", "[dtypes][complex][autodiff]") {
  const json& cx = values()["complex"];
  int checked = 0;
  for (const json& g : cx["grad"]) {
    const DType d = dtype_named(g["dtype"]);
    const std::string f = g["f"];
    INFO(f << " on " << dtype_name(d));
    const Array z = decode_complex(g["z"], d), c = decode_complex(g["c"], d);
    if (f == "parts") {
      auto fn = [c](const Array& x, const Array& y) {
        const Array w = complex(x, y);
        return sum(square(abs(w * c))) + sum(real(exp(w)));
      };
      const auto grads = grad<0, 1>(fn)(real(z), imag(z));
      CHECK(worst_error(std::get<0>(grads), decode(g["grad"], ir::real_dtype(d)), 1.0) <= 64);
      CHECK(worst_error(std::get<1>(grads), decode(g["grad_y"], ir::real_dtype(d)), 1.0) <= 64);
      ++checked;
      continue;
    }
    std::function<Array(const Array&)> fn;
    if (f == "abs2") fn = [](const Array& w) { return sum(square(abs(w))); };
    if (f == "abs") fn = [](const Array& w) { return sum(abs(w)); };
    if (f == "real_cz") fn = [c](const Array& w) { return sum(real(c * w * w)); };
    if (f == "imag_exp") fn = [](const Array& w) { return sum(imag(exp(w) * conj(w))); };
    if (f == "angle") fn = [](const Array& w) { return sum(angle(w)); };
    if (f == "log_abs_sin") fn = [](const Array& w) { return sum(log(abs(sin(w)))); };
    if (f == "mean_matmul")
      fn = [c](const Array& w) { return real(mean(matmul(matmul(reshape(w, {6, 1}), reshape(c, {1, 6})), conj(w)))); };
    REQUIRE(fn);
    CHECK(worst_error(fn(z), decode(g["value"], ir::real_dtype(d)), 1.0) <= 64);
    const Array gz = grad(fn)(z);
    CHECK(gz.dtype() == d);
    CHECK(worst_error(gz, decode_complex(g["grad"], d), 1.0) <= 64);
    CHECK(worst_error(jit(grad(fn))(z), decode_complex(g["grad"], d), 1.0) <= 64);
    ++checked;
  }
  CHECK(checked == 16);
}

TEST_CASE("dtypes: iota in complex dtypes counts along the real axis (lax.iota)", "[dtypes][complex]") {
  for (DType d : {c64, c128}) {
    const Array z = arange(4, d);
    REQUIRE(z.dtype() == d);
    CHECK(real(z).to_vector<double>() == std::vector<double>{0, 1, 2, 3});
    CHECK(imag(z).to_vector<double>() == std::vector<double>{0, 0, 0, 0});
  }
}

TEST_CASE("dtypes: complex values are refused where JAX refuses them", "[dtypes][complex]") {
  const Array z = complex(array({1.0f, 2.0f}), array({0.5f, -1.0f}));
  CHECK(z.dtype() == c64);
  CHECK_THROWS_AS(z < z, DTypeError);
  CHECK_THROWS_AS(max(z), DTypeError);
  CHECK_THROWS_AS(floor(z), DTypeError);
  CHECK_THROWS_AS(complex(z, z), DTypeError);
  CHECK(complex(array({1.0}), array({2.0})).dtype() == c128);
  CHECK(abs(z).dtype() == f32);
  CHECK(real(array({1, 2})).dtype() == i32);  // a real array is its own real part
  CHECK((z * 2.0).dtype() == c64);            // a weak float keeps the complex dtype
  CHECK(isfinite(z).to_vector<bool>() == std::vector<bool>{true, true});
}

// ---- the FFT (jnp.fft) against JAX's values

namespace {

Array decode_shaped(const json& c, const char* values, const char* dtype_key, const char* shape_key) {
  const DType d = dtype_named(c[dtype_key]);
  const Shape shape = c[shape_key].get<Shape>();
  return reshape(decode_any(c[values], d), shape);
}

// The largest |got - want| relative to JAX's largest magnitude, in epsilons: an FFT's error
// grows as eps log n relative to the signal's norm, not to each (possibly tiny) coefficient.
double fft_error(const Array& got, const Array& want) {
  double scale = 0;
  for (const auto& w : values_of(want)) scale = std::max(scale, std::abs(w));
  return worst_error(reshape(got, {got.size()}), reshape(want, {want.size()}), scale);
}

std::function<Array(const Array&)> fft_fn(const std::string& fn, const json& c) {
  if (fn == "fft") return [](const Array& x) { return fft::fft(x); };
  if (fn == "ifft") return [](const Array& x) { return fft::ifft(x); };
  if (fn == "rfft") return [](const Array& x) { return fft::rfft(x); };
  if (fn == "irfft") return [n = c["n"].get<int64_t>()](const Array& x) { return fft::irfft(x, n); };
  if (fn == "fft2") return [](const Array& x) { return fft::fft2(x); };
  if (fn == "rfft2") return [](const Array& x) { return fft::rfft2(x); };
  if (fn == "irfft2") return [](const Array& x) { return fft::irfft2(x, {4, 6}); };
  if (fn == "fftn") return [](const Array& x) { return fft::fftn(x); };
  if (fn == "ifftn_ortho") return [](const Array& x) { return fft::ifftn(x, {}, {}, "ortho"); };
  if (fn == "fft_forward_n10") return [](const Array& x) { return fft::fft(x, 10, 1, "forward"); };
  if (fn == "rfftn_axes02") return [](const Array& x) { return fft::rfftn(real(x), {}, {0, 2}); };
  return {};
}

}  // namespace

TEST_CASE("fft: jnp.fft's transforms match JAX, eagerly, under jit and vmap", "[dtypes][fft]") {
  int cases = 0;
  for (const json& c : values()["fft"]) {
    const std::string fn = c["fn"];
    if (fn.rfind("grad_", 0) == 0 || fn == "fftfreq") continue;
    INFO(fn << " of " << c["dtype"].get<std::string>() << Catch::Detail::stringify(c["shape"].get<Shape>()));
    const Array x = decode_shaped(c, "x", "dtype", "shape");
    const Array want = decode_shaped(c, "y", "ydtype", "yshape");
    const auto f = fft_fn(fn, c);
    REQUIRE(f);
    const Array got = f(x);
    CHECK(got.dtype() == want.dtype());
    CHECK(got.shape() == want.shape());
    CHECK(fft_error(got, want) <= 16);
    CHECK(fft_error(jit(f)(x), want) <= 16);
    // vmap over a stack of two equals the transform of each.
    const Array both = vmap(f)(stack({x, x * 2.0}));
    CHECK(fft_error(take(both, array({1}), 0), want * 2.0) <= 16);
    ++cases;
  }
  CHECK(cases == 34);
}

TEST_CASE("fft: gradients through the transforms match JAX's", "[dtypes][fft][autodiff]") {
  int cases = 0;
  for (const json& c : values()["fft"]) {
    const std::string fn = c["fn"];
    if (fn.rfind("grad_", 0) != 0) continue;
    const DType d = dtype_named(c["dtype"]);
    const DType cd = ir::complex_dtype(d);
    INFO(fn << " in " << dtype_name(d));
    const Array x = decode_shaped(c, "x", "dtype", "shape");
    const Array cc = decode_complex(c["c"], cd);
    const DType rd = ir::real_dtype(d);
    std::function<Array(const Array&)> f;
    if (fn == "grad_rfft_power") f = [](const Array& a) { return sum(square(abs(fft::rfft(a)))); };
    if (fn == "grad_fft_real") f = [cc](const Array& a) { return sum(real(fft::fft(a) * cc)); };
    if (fn == "grad_ifft_abs") f = [](const Array& a) { return sum(abs(fft::ifft(a))); };
    if (fn == "grad_irfft_weighted") f = [rd](const Array& a) { return sum(fft::irfft(a, 10) * arange(10, rd)); };
    if (fn == "grad_irfft_odd") f = [](const Array& a) { return sum(sin(fft::irfft(a, 11))); };
    if (fn == "grad_rfft2_energy")
      f = [](const Array& a) { return sum(pow(abs(fft::rfft2(reshape(a, {2, 5}))), 3.0)); };
    REQUIRE(f);
    // The value sums terms of up to ~100 (arange weights): its error is relative to them, not to the sum.
    CHECK(worst_error(f(x), decode(c["value"], rd), 100.0) <= 16);
    const Array want = reshape(decode_any(c["y"], d), x.shape());
    CHECK(fft_error(grad(f)(x), want) <= 64);
    CHECK(fft_error(jit(grad(f))(x), want) <= 64);
    ++cases;
  }
  CHECK(cases == 12);
}

TEST_CASE("fft: frequencies, shifts and bad arguments", "[dtypes][fft]") {
  const json* fq = nullptr;
  for (const json& c : values()["fft"])
    if (c["fn"] == "fftfreq") fq = &c;
  REQUIRE(fq);
  // JAX computes these in f32 (no x64 for its defaults); graft's f32 values round the exact ones.
  CHECK(fft_error(fft::fftfreq(7, 0.5, f64), decode((*fq)["y"], f64)) <= 4);
  CHECK(fft_error(fft::fftfreq(8, 1.0, f64), decode((*fq)["y8"], f64)) <= 4);
  CHECK(fft_error(fft::rfftfreq(7, 0.5, f64), decode((*fq)["rfft7"], f64)) <= 4);
  CHECK(fft_error(fft::fftshift(arange(7, f64)), decode((*fq)["shift"], f64)) == 0);
  CHECK(fft_error(fft::ifftshift(arange(6, f64)), decode((*fq)["ishift"], f64)) == 0);
  // Round trips.
  const Array x = astype(arange(10, f64), f64) * 0.25;
  CHECK(fft_error(fft::irfft(fft::rfft(x), 10), x) <= 8);
  CHECK(fft_error(real(fft::ifft(fft::fft(x))), x) <= 8);
  CHECK_THROWS_AS(fft::rfft(complex(x, x)), DTypeError);
  CHECK_THROWS_AS(fft::fft(x, 0), ShapeError);
  CHECK_THROWS_AS(fft::fft2(x), ShapeError);
  CHECK_THROWS_AS(fft::fft(x, -1, -1, "sideways"), Error);
}

TEST_CASE("dtypes: grad(f, holomorphic) gives df/dz of a complex-differentiable f", "[dtypes][complex][autodiff]") {
  const Array z = complex(array({0.3, -1.2, 2.0}), array({0.7, 0.4, -0.5}));
  const Array c = complex(array({1.5, -0.5, 0.25}), array({-2.0, 1.0, 0.0}));
  // f(z) = sum(c z^2 + exp(z)): df/dz = 2 c z + exp(z), no conjugation (JAX's holomorphic=True).
  auto f = [c](const Array& w) { return sum(c * w * w + exp(w)); };
  const Array want = 2.0 * c * z + exp(z);
  CHECK(worst_error(grad(f, holomorphic)(z), want, 1.0) <= 8);
  CHECK(worst_error(jit(grad(f, holomorphic))(z), want, 1.0) <= 8);
  const auto [value, g] = value_and_grad(f, holomorphic)(z);
  CHECK(worst_error(value, f(z), 1.0) <= 2);
  CHECK(worst_error(g, want, 1.0) <= 8);
  // What JAX refuses: a complex output without the tag, the tag on real inputs or a real output.
  CHECK_THROWS_WITH(grad(f)(z), Catch::Contains("use grad(f, holomorphic)"));
  CHECK_THROWS_AS(grad([](const Array& w) { return sum(w); }, holomorphic)(array({1.0, 2.0})), DTypeError);
  CHECK_THROWS_AS(grad([](const Array& w) { return sum(abs(w)); }, holomorphic)(z), DTypeError);
}

TEST_CASE("fft: long transforms (four steps) agree with the DFT's definition", "[dtypes][fft]") {
  // Lengths past the four-step threshold (2^14), one line and a few: sampled bins against the
  // DFT summed in long double, and round trips; n = 3 * 2^14 is not a power of two.
  for (int64_t n : {int64_t{1} << 16, int64_t{3} << 14}) {
    INFO("n = " << n);
    const Array x = random::normal(random::key(static_cast<uint64_t>(n)), {2, n}, f64);
    const Array spectrum = fft::rfft(x);
    const Array full = fft::fft(complex(x, zeros_like(x)));
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<std::complex<double>> sv = spectrum.to_vector<std::complex<double>>();
    const std::vector<std::complex<double>> fv = full.to_vector<std::complex<double>>();
    const int64_t m = n / 2 + 1;
    double worst = 0;
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{7}, n / 4 + 3, n / 2 - 1, n / 2}) {
      for (int64_t row = 0; row < 2; ++row) {
        std::complex<long double> acc = 0;
        for (int64_t j = 0; j < n; ++j) {
          const long double angle = -2.0L * std::numbers::pi_v<long double> * static_cast<long double>((j * k) % n) / n;
          acc += static_cast<long double>(xv[static_cast<size_t>(row * n + j)]) *
                 std::complex<long double>(std::cos(angle), std::sin(angle));
        }
        const std::complex<double> want(static_cast<double>(acc.real()), static_cast<double>(acc.imag()));
        worst = std::max(worst, std::abs(sv[static_cast<size_t>(row * m + k)] - want));
        worst = std::max(worst, std::abs(fv[static_cast<size_t>(row * n + k)] - want));
      }
    }
    // Relative to the spectrum's scale, sqrt(n) for unit normal samples: O(eps log n).
    CHECK(worst / std::sqrt(static_cast<double>(n)) <= 64 * 0x1p-52);
    CHECK(fft_error(fft::irfft(spectrum, n), x) <= 64);
    CHECK(fft_error(real(fft::ifft(full)), x) <= 64);
    CHECK(fft_error(jit([](const Array& a) { return fft::rfft(a); })(x), spectrum) <= 4);
  }
}

TEST_CASE("dtypes: DotOptions' preferred_element_type", "[dtypes][matmul]") {
  const Array a = astype(reshape(arange(12, f32), {3, 4}) * 0.37, bf16),
              b = astype(reshape(arange(8, f32), {4, 2}) * 1.3, bf16);
  // bf16 operands, an f32 result: the f32 product of their exact values, not rounded to bf16.
  const Array wide = matmul(a, b, DotOptions{.preferred_element_type = f32});
  CHECK(wide.dtype() == f32);
  CHECK(encode(wide) == encode(matmul(astype(a, f32), astype(b, f32))));
  CHECK(matmul(a, b).dtype() == bf16);
  CHECK(encode(matmul(a, b)) == encode(astype(wide, bf16)));
  // i8 operands accumulate in i32 without wrapping.
  const Array i = full({2, 3}, 100, i8), j = full({3, 2}, 100, i8);
  CHECK(dot_general(i, j, {{1}, {0}}, {}, DotOptions{.preferred_element_type = i32}).to_vector<int32_t>() ==
        std::vector<int32_t>(4, 30000));
  CHECK(einsum("ij,jk->ik", {i, j}, DotOptions{.preferred_element_type = i32}).dtype() == i32);
  // Gradients come back in the operands' dtypes.
  const auto g = grad<0, 1>([](const Array& x, const Array& y) {
    return sum(matmul(x, y, DotOptions{.preferred_element_type = f32}));
  })(a, b);
  CHECK(std::get<0>(g).dtype() == bf16);
  CHECK(std::get<1>(g).dtype() == bf16);
}

TEST_CASE("dtypes: a bf16 product is the f32 product of its operands, rounded", "[dtypes][matmul]") {
  // Big enough for the BLAS path and the parallel conversions; each size
  // twice and larger after smaller, so reused conversion buffers are checked.
  // Bit for bit on the widened path (GRAFT_BF16_GEMM=f32; on CPUs with bf16
  // instructions the products run there and sum in another order:
  // tests/dtypes/bf16_gemm_test.cpp bounds that path against this one).
  const test::ScopedEnv widened("GRAFT_BF16_GEMM", "f32");
  for (const int64_t n : {64, 300, 96, 300}) {
    INFO("n = " << n);
    const Array a = astype(random::normal(random::key(n), {n, n + 3}), bf16);
    const Array b = astype(random::normal(random::key(n + 1), {n + 3, n - 5}), bf16);
    const Array want = astype(matmul(astype(a, f32), astype(b, f32)), bf16);
    CHECK(encode(matmul(a, b)) == encode(want));
    CHECK(encode(jit([](const Array& x, const Array& y) { return matmul(x, y); })(a, b)) == encode(want));
    const Array h = astype(a, f16);
    CHECK(encode(sum(h, {1})) == encode(astype(sum(astype(h, f32), {1}), f16)));
  }
}

namespace {

// The bytes of x's elements (row-major), as NumPy's view reads them.
std::vector<uint8_t> bytes_of(const Array& x) {
  const std::vector<uint8_t> b = bitcast(x.size() == 0 ? x : reshape(x, {-1}), u8).to_vector<uint8_t>();
  return b;
}

}  // namespace

TEST_CASE("dtypes: bitcast across widths is NumPy's view, low bytes first", "[dtypes][bitcast]") {
  // The reference: the elements' bytes copied into the other type (this machine is little-endian).
  const std::vector<float> f = {1.0f, -2.5f, std::numeric_limits<float>::quiet_NaN(), 3.0e-39f, -0.0f, 65504.0f};
  std::vector<uint8_t> raw(f.size() * 4);
  std::memcpy(raw.data(), f.data(), raw.size());
  std::vector<uint16_t> halves(raw.size() / 2);
  std::memcpy(halves.data(), raw.data(), raw.size());
  std::vector<uint64_t> wide(raw.size() / 8);
  std::memcpy(wide.data(), raw.data(), raw.size());
  const Array x = array(f, {2, 3});
  for (const bool jitted : {false, true}) {
    INFO("jit " << jitted);
    auto run = [&](DType d, const Array& a) {
      return jitted ? jit([d](const Array& v) { return bitcast(v, d); })(a) : bitcast(a, d);
    };
    const Array b = run(u8, x);
    CHECK(b.shape() == Shape{2, 12});
    CHECK(b.to_vector<uint8_t>() == raw);
    CHECK(run(u16, x).to_vector<uint16_t>() == halves);
    CHECK(bitcast(run(f32, b), u32).to_vector<uint32_t>() == bitcast(x, u32).to_vector<uint32_t>());  // and back
    CHECK(run(bf16, x).shape() == Shape{2, 6});
    CHECK(bitcast(run(bf16, x), u16).to_vector<uint16_t>() == halves);
    const Array w = run(u64, reshape(x, {3, 2}));
    CHECK(w.shape() == Shape{3, 1});
    CHECK(w.to_vector<uint64_t>() == wide);
    CHECK(bytes_of(run(f16, w)) == raw);
    CHECK(bytes_of(run(i8, run(f64, reshape(x, {3, 2})))) == raw);
  }
  // Per example under vmap: each row viewed alone.
  const Array rows = vmap([](const Array& r) { return bitcast(r, u8); })(x);
  CHECK(rows.to_vector<uint8_t>() == raw);
  CHECK_THROWS_AS(bitcast(array(std::vector<float>{1, 2, 3}, {3}), f64), ShapeError);  // 3 is not a multiple of 2
  CHECK_THROWS_AS(bitcast(scalar(1.0, f32), u8), ShapeError);                          // a scalar keeps its width
  CHECK_THROWS_AS(bitcast(array(std::vector<float>{1, 2}, {2}), c64), DTypeError);
}

TEST_CASE("dtypes: complex sort, prod and cumprod, and their derivatives", "[dtypes][complex]") {
  const std::vector<std::complex<double>> v = {{1, 2}, {-1, 5}, {1, -3}, {0.5, 0}, {-1, -2}, {1, 2}};
  auto carray = [](const std::vector<std::complex<double>>& c) {
    std::vector<double> re, im;
    for (const auto& x : c) re.push_back(x.real()), im.push_back(x.imag());
    const Shape n{static_cast<int64_t>(c.size())};
    return complex(array(re, n), array(im, n));
  };
  const Array z = carray(v);
  // lax.sort orders complex keys by real part, then imaginary part (argsort keeps ties stable).
  std::vector<std::complex<double>> want = v;
  std::stable_sort(want.begin(), want.end(),
                   [](auto a, auto b) { return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()); });
  CHECK(sort(z).to_vector<std::complex<double>>() == want);
  CHECK(argsort(z).to_vector<int32_t>() == std::vector<int32_t>{4, 1, 3, 2, 0, 5});
  CHECK(jit([](const Array& x) { return sort(x); })(astype(z, c64)).to_vector<std::complex<float>>()[1] ==
        std::complex<float>(-1, 5));
  // Products in the real kernels' order: left to right.
  std::complex<double> p = 1;
  std::vector<std::complex<double>> running;
  for (const auto& x : v) running.push_back(p *= x);
  CHECK(prod(z).item<std::complex<double>>() == p);
  CHECK(cumprod(z, 0).to_vector<std::complex<double>>() == running);
  const Array m = reshape(z, {2, 3});
  CHECK(prod(m, {1}).to_vector<std::complex<double>>() ==
        std::vector<std::complex<double>>{v[0] * v[1] * v[2], v[3] * v[4] * v[5]});
  // d prod / d z_i = prod / z_i (complex-differentiable: holomorphic grad).
  const std::vector<std::complex<double>> w = {{1, 2}, {-1, 0.5}, {0.25, -3}};
  const Array zw = carray(w);
  const std::complex<double> pw = w[0] * w[1] * w[2];
  const auto g = grad([](const Array& x) { return prod(x); }, holomorphic)(zw).to_vector<std::complex<double>>();
  for (size_t i = 0; i < w.size(); ++i) CHECK(std::abs(g[i] - pw / w[i]) < 1e-14);
  // d sum(cumprod) / d z_i = sum over j >= i of prod_{k <= j} / z_i.
  const auto gc =
      grad([](const Array& x) { return sum(cumprod(x, 0)); }, holomorphic)(zw).to_vector<std::complex<double>>();
  const std::complex<double> c0 = w[0], c1 = w[0] * w[1], c2 = c1 * w[2];
  const std::vector<std::complex<double>> want_c = {(c0 + c1 + c2) / w[0], (c1 + c2) / w[1], c2 / w[2]};
  for (size_t i = 0; i < w.size(); ++i) CHECK(std::abs(gc[i] - want_c[i]) < 1e-14);
}

TEST_CASE("dtypes: bf16, f16 and complex programs fuse into C++ kernels equal to eager bit for bit",
          "[dtypes][jit][cpu]") {
  const JitOptions cpu{.backend = Backend::cpu};
  auto bits_equal = [](const Array& a, const Array& b) {
    if (ir::is_complex(a.dtype())) return encode(real(a)) == encode(real(b)) && encode(imag(a)) == encode(imag(b));
    return encode(a) == encode(b);
  };
  // A bf16 layer: its matmul in f32, bias, gelu-like tanh, a row sum in f32.
  const Array x = astype(reshape(linspace(-3, 3, 64 * 48, f32), {64, 48}), bf16);
  const Array w = astype(reshape(linspace(-1, 1, 48 * 32, f32), {48, 32}), bf16);
  const Array bias = astype(linspace(-0.5, 0.5, 32, f32), bf16);
  auto layer = [](const Array& a, const Array& m, const Array& c) {
    const Array h = matmul(a, m) + c;
    const Array y = h * 0.5f * (1.0f + tanh(h * 0.79788456f));
    return std::vector<Array>{y, sum(y * y, {1})};
  };
  auto compiled = jit(layer, cpu).lower(x, w, bias).compile();
  CHECK_THAT(compiled.as_text(), Catch::Contains("fusion of"));
  const std::vector<Array> got = compiled(x, w, bias), want = layer(x, w, bias);
  CHECK(bits_equal(got[0], want[0]));
  CHECK(bits_equal(got[1], want[1]));
  // f16 with a NaN and an infinity through max, where and a comparison.
  const Array h = astype(array(std::vector<float>{1.5f, NAN, -INFINITY, 65504, 0.1f, -0.f}, {6}), f16);
  auto clip = [](const Array& a) { return where(a > 1.0f, maximum(a * 3.0f, a), a - 0.25f); };
  CHECK(bits_equal(jit(clip, cpu)(h), clip(h)));
  // A complex chain (arithmetic fused, exp on the interpreter's kernel between).
  const Array z = complex(linspace(-2, 2, 4096, f32), linspace(1, -1, 4096, f32));
  auto chain = [](const Array& a) {
    const Array b = a * conj(a) - a / (a + complex(scalar(1.0, f32), scalar(0.5, f32)));
    return std::vector<Array>{b, exp(b) * a, real(b) + imag(b), abs(b)};
  };
  auto cz = jit(chain, cpu).lower(z).compile();
  CHECK_THAT(cz.as_text(), Catch::Contains("std::complex<float>"));
  const std::vector<Array> zg = cz(z), zw = chain(z);
  for (size_t i = 0; i < zw.size(); ++i) {
    INFO("output " << i);
    CHECK(bits_equal(zg[i], zw[i]));
  }
}

// jnp.promote_types(i64, u64) is float64 with or without x64, and so are
// i8, i16 and i32 with u64; array arithmetic on such pairs computes in f64.
TEST_CASE("dtypes: a signed integer with u64 promotes to f64 in both modes", "[dtypes][promotion]") {
  for (DType s : {i8, i16, i32, i64}) {
    INFO(dtype_name(s));
    CHECK(promote_types(s, u64) == f64);
    CHECK(promote_types(u64, s) == f64);
  }
  const Array big = array(std::vector<uint64_t>{uint64_t{1} << 63}, {1});
  const Array neg = array(std::vector<int64_t>{-(int64_t{1} << 62)}, {1});
  const Array y = big + neg;
  CHECK(y.dtype() == f64);
  CHECK(y.to_vector<double>() == std::vector<double>{std::ldexp(1.0, 62)});
  CHECK((neg * big).dtype() == f64);
  CHECK((astype(neg, i8) - big).dtype() == f64);
}
