#include "ir/literal.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/dtype.h"
#include "ir/element_type.h"

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
  return visit_element_type(lit.type.dtype, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      return lit.bytes[i] != 0;
    else if constexpr (is_complex_type<T>)
      return static_cast<double>(load<T>(lit, i).real());
    else
      return static_cast<double>(load<T>(lit, i));
  });
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
    visit_element_type(lit.type.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>)
        s += lit.bytes[i] ? "true" : "false";
      else if constexpr (std::is_integral_v<T>)
        s += std::to_string(load<T>(lit, i));
      else if constexpr (is_complex_type<T>) {
        const T z = load<T>(lit, i);
        s += float_str(z.real()) + (std::signbit(z.imag()) ? "-" : "+") + float_str(std::fabs(z.imag())) + "j";
      } else if constexpr (std::is_same_v<T, float>)
        s += float_str(load<T>(lit, i));
      else
        s += float_str(static_cast<double>(load<T>(lit, i)));
    });
  }
  if (n > limit) s += ", ...";
  return s + "]";
}

}  // namespace graft::ir
