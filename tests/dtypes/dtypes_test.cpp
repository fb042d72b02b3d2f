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
#include <sstream>

#include "graft/graft.h"
#include "ir/dtype.h"

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
      if (r < 15 && c < 15) {  // the public function on two dtypes: a weak join is the default float
        CHECK(promote_types(dtype_named(order[r]), dtype_named(order[c])) == (weak ? default_float_dtype() : jax));
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
    check_close(encode(astype(x, to)), expected(c["y"], to), to, 0);
    // Under jit too (the interpreter runs what generated code cannot).
    check_close(encode(jit([to](const Array& a) { return astype(a, to); })(x)), expected(c["y"], to), to, 0);
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
