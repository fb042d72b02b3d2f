// std::ostream << Array, in the spirit of JAX's repr: nested brackets of the
// values, then the dtype and shape; large arrays show the first and last
// three entries along each axis.
#include <cmath>
#include <complex>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "graft/array.h"
#include "ir/dtype.h"

namespace graft {

namespace {

constexpr int64_t kSummariseAbove = 1000;  // NumPy's threshold
constexpr int64_t kEdge = 3;               // entries kept at each end of a summarised axis

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  std::string s = buf;
  // As NumPy, a float with no fraction still reads as a float: "2." not "2".
  if (s.find_first_of(".eE") == std::string::npos) s += '.';
  return s;
}

struct Printer {
  const std::vector<std::string>& text;  // every element, formatted
  const Shape& shape;
  bool summarise;
  size_t width;      // widest element, so columns line up
  std::string pad;   // indentation of a continued row

  void print(std::ostream& os, size_t axis, int64_t offset, int64_t stride_elems) const {
    const int64_t n = shape[axis];
    const int64_t inner = stride_elems / std::max<int64_t>(n, 1);
    os << '[';
    bool first = true;
    for (int64_t i = 0; i < n; ++i) {
      if (summarise && n > 2 * kEdge && i == kEdge) {
        os << (axis + 1 == shape.size() ? ", ..." : ",\n" + pad + std::string(axis + 1, ' ') + "...");
        i = n - kEdge - 1;
        continue;
      }
      if (!first) os << (axis + 1 == shape.size() ? ", " : ",\n" + std::string(shape.size() - axis - 1 > 1 ? 1 : 0, '\n') + pad + std::string(axis + 1, ' '));
      first = false;
      if (axis + 1 == shape.size()) {
        const std::string& t = text[static_cast<size_t>(offset + i)];
        os << std::string(width - t.size(), ' ') << t;
      } else {
        print(os, axis + 1, offset + i * inner, inner);
      }
    }
    os << ']';
  }
};

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) out += ",";
  return out + ")";
}

}  // namespace

namespace detail {

std::string values_text(const Array& x, const std::string& pad) {
  const detail::ArrayImpl& impl = *x.impl();
  const int64_t n = impl.type.num_elements();
  const bool summarise = n > kSummariseAbove;
  std::vector<std::string> text(static_cast<size_t>(n));
  if (impl.type.dtype == DType::bool_) {
    std::vector<bool> v = x.to_vector<bool>();
    for (int64_t i = 0; i < n; ++i) text[static_cast<size_t>(i)] = v[static_cast<size_t>(i)] ? "true" : "false";
  } else if (ir::is_floating(impl.type.dtype)) {
    std::vector<double> v = x.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) text[static_cast<size_t>(i)] = format_float(v[static_cast<size_t>(i)]);
  } else if (ir::is_complex(impl.type.dtype)) {  // as NumPy: 1.5-2.j
    std::vector<std::complex<double>> v = x.to_vector<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) {
      const std::complex<double> z = v[static_cast<size_t>(i)];
      const bool minus = std::signbit(z.imag()) && !std::isnan(z.imag());
      text[static_cast<size_t>(i)] =
          format_float(z.real()) + (minus ? "-" : "+") + format_float(std::fabs(z.imag())) + "j";
    }
  } else if (ir::is_unsigned_integer(impl.type.dtype)) {
    std::vector<uint64_t> v = x.to_vector<uint64_t>();
    for (int64_t i = 0; i < n; ++i) text[static_cast<size_t>(i)] = std::to_string(v[static_cast<size_t>(i)]);
  } else {
    std::vector<int64_t> v = x.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) text[static_cast<size_t>(i)] = std::to_string(v[static_cast<size_t>(i)]);
  }
  std::ostringstream body;
  if (impl.type.shape.empty()) {
    body << text[0];
  } else {
    size_t width = 0;
    for (const std::string& t : text) width = std::max(width, t.size());
    Printer p{text, impl.type.shape, summarise, width, pad};
    p.print(body, 0, 0, n);
  }
  return body.str();
}

}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Array& x) {
  if (!x.valid()) return os << "Array(<empty>)";
  const detail::ArrayImpl& impl = *x.impl();
  const std::string tail =
      ", dtype=" + std::string(dtype_name(impl.type.dtype)) + ", shape=" + shape_text(impl.type.shape) + ")";
  if (impl.traced()) return os << "Traced<" << ir::type_str(impl.type) << ">";
  if (impl.deleted) return os << "Array(<deleted: donated>" << tail;
  return os << "Array(" << detail::values_text(x, "      ") << tail;  // rows continue under "Array("
}

}  // namespace graft
