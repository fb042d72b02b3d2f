// graft's elementwise ops and reductions on edge values, against NumPy's
// results (tests/edge_values/expected.json, written by
// scripts/make_edge_values.py with Debian's python3-numpy): +-0, +-inf, NaN,
// subnormals, the largest and smallest finite values, integer extremes and
// overflow. Integers, bools, NaN, infinities and signed zeros must match
// exactly; other floats within the op's documented ULP bound
// (docs/FLOAT_MATH.md) plus one for the reference's own rounding. Cases with
// a "rule" are graft's documented choices where NumPy differs
// (docs/EDGE_VALUES.md); their expected values follow graft's rule.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "graft/graft.h"

using namespace graft;
using json = nlohmann::json;

namespace {

DType dtype_of(const std::string& name) {
  static const std::map<std::string, DType> k = {{"f32", DType::f32}, {"f64", DType::f64}, {"i32", DType::i32},
                                                 {"i64", DType::i64}, {"u32", DType::u32}, {"bool", DType::bool_}};
  return k.at(name);
}

Array decode(const json& values, DType t, const Shape& shape) {
  std::vector<double> unused;
  switch (t) {
    case DType::f32: {
      std::vector<float> v;
      for (const json& s : values) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(std::stoul(s.get<std::string>(), nullptr, 16))));
      return array(v, shape);
    }
    case DType::f64: {
      std::vector<double> v;
      for (const json& s : values) v.push_back(std::bit_cast<double>(static_cast<uint64_t>(std::stoull(s.get<std::string>(), nullptr, 16))));
      return array(v, shape);
    }
    case DType::i32: return array(values.get<std::vector<int32_t>>(), shape);
    case DType::i64: return array(values.get<std::vector<int64_t>>(), shape);
    case DType::u32: return array(values.get<std::vector<uint32_t>>(), shape);
    case DType::bool_: {
      std::vector<int32_t> v;
      for (const json& b : values) v.push_back(b.get<bool>() ? 1 : 0);
      return astype(array(v, shape), DType::bool_);
    }
    default: throw std::logic_error("no case for this dtype here");
  }
  return {};
}

const std::map<std::string, std::function<Array(const Array&)>>& unary_ops() {
  static const std::map<std::string, std::function<Array(const Array&)>> k = {
      {"neg", [](const Array& x) { return neg(x); }},
      {"abs", [](const Array& x) { return graft::abs(x); }},
      {"sign", [](const Array& x) { return sign(x); }},
      {"floor", [](const Array& x) { return graft::floor(x); }},
      {"ceil", [](const Array& x) { return graft::ceil(x); }},
      {"round", [](const Array& x) { return graft::round(x); }},
      {"exp", [](const Array& x) { return graft::exp(x); }},
      {"log", [](const Array& x) { return graft::log(x); }},
      {"log1p", [](const Array& x) { return graft::log1p(x); }},
      {"expm1", [](const Array& x) { return graft::expm1(x); }},
      {"sqrt", [](const Array& x) { return graft::sqrt(x); }},
      {"rsqrt", [](const Array& x) { return rsqrt(x); }},
      {"sin", [](const Array& x) { return graft::sin(x); }},
      {"cos", [](const Array& x) { return graft::cos(x); }},
      {"tan", [](const Array& x) { return graft::tan(x); }},
      {"asin", [](const Array& x) { return graft::asin(x); }},
      {"acos", [](const Array& x) { return graft::acos(x); }},
      {"atan", [](const Array& x) { return graft::atan(x); }},
      {"sinh", [](const Array& x) { return graft::sinh(x); }},
      {"cosh", [](const Array& x) { return graft::cosh(x); }},
      {"tanh", [](const Array& x) { return graft::tanh(x); }},
      {"logistic", [](const Array& x) { return logistic(x); }},
      {"erf", [](const Array& x) { return graft::erf(x); }},
      {"square", [](const Array& x) { return square(x); }},
      {"reciprocal", [](const Array& x) { return reciprocal(x); }},
      {"cbrt", [](const Array& x) { return graft::cbrt(x); }},
      {"isfinite", [](const Array& x) { return graft::isfinite(x); }},
      {"logical_not", [](const Array& x) { return logical_not(x); }},
      {"astype_i32", [](const Array& x) { return astype(x, DType::i32); }},
      {"astype_i64", [](const Array& x) { return astype(x, DType::i64); }},
      {"astype_u32", [](const Array& x) { return astype(x, DType::u32); }},
      {"sum", [](const Array& x) { return sum(x, {1}); }},
      {"prod", [](const Array& x) { return prod(x, {1}); }},
      {"max", [](const Array& x) { return graft::max(x, {1}); }},
      {"min", [](const Array& x) { return graft::min(x, {1}); }},
      {"argmax", [](const Array& x) { return argmax(x, 1); }},
      {"argmin", [](const Array& x) { return argmin(x, 1); }},
  };
  return k;
}

const std::map<std::string, std::function<Array(const Array&, const Array&)>>& binary_ops() {
  static const std::map<std::string, std::function<Array(const Array&, const Array&)>> k = {
      {"add", [](const Array& a, const Array& b) { return a + b; }},
      {"sub", [](const Array& a, const Array& b) { return a - b; }},
      {"mul", [](const Array& a, const Array& b) { return a * b; }},
      {"div", [](const Array& a, const Array& b) { return a / b; }},
      {"pow", [](const Array& a, const Array& b) { return graft::pow(a, b); }},
      {"maximum", [](const Array& a, const Array& b) { return maximum(a, b); }},
      {"minimum", [](const Array& a, const Array& b) { return minimum(a, b); }},
      {"atan2", [](const Array& a, const Array& b) { return graft::atan2(a, b); }},
      {"lt", [](const Array& a, const Array& b) { return a < b; }},
      {"eq", [](const Array& a, const Array& b) { return a == b; }},
  };
  return k;
}

// The largest error allowed, in ULPs of the result: the op's bound in
// docs/FLOAT_MATH.md (rounded up), plus one for the reference's rounding;
// 0 for the correctly rounded ones.
int64_t ulp_bound(const std::string& op) {
  static const std::map<std::string, int64_t> k = {
      {"exp", 6},  {"log", 3},  {"log1p", 4}, {"expm1", 6}, {"sin", 4},  {"cos", 4},  {"tan", 3},
      {"asin", 2}, {"acos", 2}, {"atan", 2},  {"sinh", 3},  {"cosh", 3}, {"tanh", 7}, {"logistic", 7},
      {"erf", 2},  {"pow", 2},  {"atan2", 2}, {"rsqrt", 2}, {"sqrt", 1}, {"cbrt", 2},
  };
  auto it = k.find(op);
  return it == k.end() ? 0 : it->second;
}

// Distance in representable values between two finite floats of one sign.
template <class F>
int64_t ulps(F a, F b) {
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  auto key = [](F v) {
    const I i = std::bit_cast<I>(v);
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<I>::min()) - static_cast<int64_t>(i) : static_cast<int64_t>(i);
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

template <class F>
std::string mismatch(const std::vector<F>& got, const std::vector<F>& want, const std::vector<F>& in0, int64_t bound) {
  std::ostringstream os;
  for (size_t i = 0; i < want.size(); ++i) {
    const F g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w) || w == 0) ok = std::bit_cast<std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>>(g) ==
                                         std::bit_cast<std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>>(w);
    else ok = std::isfinite(g) && ulps(g, w) <= bound;
    if (!ok) {
      os.precision(sizeof(F) == 4 ? 9 : 17);
      os << " [" << i << "] in " << (i < in0.size() ? in0[i] : F(0)) << ": got " << g << ", NumPy " << w << ";";
    }
  }
  return os.str();
}

template <class T>
std::string mismatch_exact(const std::vector<T>& got, const std::vector<T>& want) {
  std::ostringstream os;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) os << " [" << i << "] got " << +got[i] << ", NumPy " << +want[i] << ";";
  return os.str();
}

}  // namespace

TEST_CASE("elementwise ops and reductions on edge values agree with NumPy", "[edge_values]") {
  std::ifstream in(GRAFT_EDGE_VALUES_FILE);
  REQUIRE(in);
  const json file = json::parse(in);
  REQUIRE(file.at("format") == "graft.edge_values");
  int checked = 0;
  for (const json& c : file.at("cases")) {
    const std::string op = c.at("op"), dt = c.at("dtype");
    const DType t = dtype_of(dt), want_t = dtype_of(c.at("expected_dtype"));
    const Shape shape = c.at("shape").get<Shape>();
    std::vector<Array> xs;
    for (const json& v : c.at("inputs")) xs.push_back(decode(v, t, shape));
    Shape want_shape = shape;
    if (c.contains("axes")) want_shape.pop_back();
    const Array want = decode(c.at("expected"), want_t, want_shape);
    auto run = [&] { return xs.size() == 1 ? unary_ops().at(op)(xs[0]) : binary_ops().at(op)(xs[0], xs[1]); };
    INFO(op << " on " << dt << (c.contains("rule") ? " (graft's rule: " + c.at("rule").get<std::string>() + ")" : ""));
    if (c.value("error", false)) {  // NumPy raises: graft throws its own error
      CHECK_THROWS_AS(run(), graft::Error);
      ++checked;
      continue;
    }
    const Array got = run();
    REQUIRE(got.dtype() == want_t);
    REQUIRE(got.shape() == want.shape());
    std::string bad;
    switch (want_t) {
      case DType::f32: bad = mismatch(got.to_vector<float>(), want.to_vector<float>(), xs[0].to_vector<float>(), ulp_bound(op)); break;
      case DType::f64: bad = mismatch(got.to_vector<double>(), want.to_vector<double>(), xs[0].to_vector<double>(), ulp_bound(op)); break;
      case DType::i32: bad = mismatch_exact(got.to_vector<int32_t>(), want.to_vector<int32_t>()); break;
      case DType::i64: bad = mismatch_exact(got.to_vector<int64_t>(), want.to_vector<int64_t>()); break;
      case DType::u32: bad = mismatch_exact(got.to_vector<uint32_t>(), want.to_vector<uint32_t>()); break;
      case DType::bool_: bad = mismatch_exact(got.to_vector<int32_t>(), want.to_vector<int32_t>()); break;
      default: throw std::logic_error("no case for this dtype here");
    }
    CHECK(bad == "");
    ++checked;
  }
  CHECK(checked >= 140);
}
