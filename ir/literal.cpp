#include "ir/literal.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/dtype.h"

namespace graft::ir {

namespace {
template <class T>
T load(const Literal& lit, int64_t i) {
  T v;
  std::memcpy(&v, lit.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}
}  // namespace

double literal_element(const Literal& lit, int64_t i) {
  switch (lit.type.dtype) {
    case DType::bool_: return lit.bytes[i] != 0;
    case DType::i32: return load<int32_t>(lit, i);
    case DType::i64: return static_cast<double>(load<int64_t>(lit, i));
    case DType::u32: return load<uint32_t>(lit, i);
    case DType::f32: return load<float>(lit, i);
    case DType::f64: return load<double>(lit, i);
  }
  return 0;
}

std::string float_str(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

std::string literal_str(const Literal& lit, int64_t limit) {
  int64_t n = static_cast<int64_t>(lit.bytes.size() / dtype_size(lit.type.dtype));
  std::string s = "[";
  for (int64_t i = 0; i < n && i < limit; ++i) {
    if (i) s += ", ";
    if (lit.type.dtype == DType::i64)
      s += std::to_string(load<int64_t>(lit, i));
    else if (lit.type.dtype == DType::bool_)
      s += lit.bytes[i] ? "true" : "false";
    else if (lit.type.dtype == DType::f32)
      s += float_str(load<float>(lit, i));
    else
      s += float_str(literal_element(lit, i));
  }
  if (n > limit) s += ", ...";
  return s + "]";
}

}  // namespace graft::ir
