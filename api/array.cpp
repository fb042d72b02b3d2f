// Array: accessors, element read-back, creation functions and operators.
#include "graft/array.h"

#include <cstdlib>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "api/array_impl.h"
#include "api/device_map.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/convert.h"
#include "ir/element_type.h"
#include "ir/trace.h"
#include "runtime/allocation_site.h"

namespace graft {

using detail::ArrayImpl;
using detail::checked_impl;

Array::Array() = default;
Array::Array(std::shared_ptr<ArrayImpl> impl) : impl_(std::move(impl)) {}

const Shape& Array::shape() const { return checked_impl(*this, "shape").type.shape; }
DType Array::dtype() const { return checked_impl(*this, "dtype").type.dtype; }
int Array::ndim() const { return checked_impl(*this, "ndim").type.rank(); }
int64_t Array::size() const { return checked_impl(*this, "size").type.num_elements(); }
int64_t Array::nbytes() const { return size() * static_cast<int64_t>(ir::dtype_size(dtype())); }
bool Array::is_traced() const { return impl_ && impl_->traced(); }
bool Array::is_deleted() const { return impl_ && impl_->deleted; }

namespace {

const ArrayImpl& concrete(const Array& a, const char* what, const std::source_location* loc = nullptr) {
  const ArrayImpl& impl = detail::live_impl(a, what, loc);
  if (impl.traced())
    throw ConcretizationError(std::string(what) + " needs a concrete value, but this Array (" +
                              ir::type_str(impl.type) + detail::made_at(impl) +
                              ") is traced inside a transform; its value is not known yet" +
                              (loc ? " (needed at " + ir::loc_str(detail::to_loc(*loc)) + ")" : std::string()) +
                              ". Use graft::where or graft::cond to choose by a traced value.");
  return impl;
}

template <class T>
void convert_out(const ArrayImpl& impl, T* out) {
  const int64_t n = impl.type.num_elements();
  const runtime::BufferPtr host = detail::host_buffer(impl);
  ir::visit_element_type(impl.type.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* src = static_cast<const S*>(host->data());
    for (int64_t i = 0; i < n; ++i) out[i] = interpreter::convert_element<T, S>(src[i]);
  });
}

}  // namespace

template <class T>
std::vector<T> Array::to_vector(std::source_location loc) const {
  const ArrayImpl& impl = concrete(*this, "to_vector", &loc);
  std::vector<T> out(static_cast<size_t>(impl.type.num_elements()));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(out.size());
    convert_out(impl, bytes.data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
  } else {
    convert_out(impl, out.data());
  }
  return out;
}

template <class T>
T Array::item(std::source_location loc) const {
  const ArrayImpl& impl = concrete(*this, "item", &loc);
  if (impl.type.num_elements() != 1)
    throw ShapeError("item: needs an array of one element, got " + ir::type_str(impl.type) + detail::where(loc));
  return to_vector<T>(loc)[0];
}

#define GRAFT_INSTANTIATE(T)                             \
  template std::vector<T> Array::to_vector<T>(std::source_location) const; \
  template T Array::item<T>(std::source_location) const;
GRAFT_INSTANTIATE(float)
GRAFT_INSTANTIATE(double)
GRAFT_INSTANTIATE(int8_t)
GRAFT_INSTANTIATE(int16_t)
GRAFT_INSTANTIATE(int32_t)
GRAFT_INSTANTIATE(int64_t)
GRAFT_INSTANTIATE(uint8_t)
GRAFT_INSTANTIATE(uint16_t)
GRAFT_INSTANTIATE(uint32_t)
GRAFT_INSTANTIATE(uint64_t)
GRAFT_INSTANTIATE(bool)
GRAFT_INSTANTIATE(float16)
GRAFT_INSTANTIATE(bfloat16)
GRAFT_INSTANTIATE(std::complex<float>)
GRAFT_INSTANTIATE(std::complex<double>)
#undef GRAFT_INSTANTIATE

const void* Array::unsafe_buffer_pointer() const { return detail::data_buffer(concrete(*this, "unsafe_buffer_pointer"))->data(); }

Array::operator bool() const {
  const ArrayImpl& impl = concrete(*this, "bool(Array)");
  if (impl.type.num_elements() != 1)
    throw ShapeError("bool(Array): the truth value of an array with " + std::to_string(impl.type.num_elements()) +
                     " elements is ambiguous");
  return to_vector<double>()[0] != 0;
}

// ---- creation

namespace {

template <class T>
DType dtype_of() {
  if constexpr (std::is_floating_point_v<T> && !std::is_same_v<T, float>)
    return DType::f64;
  else
    return ir::dtype_of_element<T>();  // int8_t gives i8, uint64_t u64, as NumPy
}

// A concrete array of `dtype` filled from its number of values of any C++
// type, or with values[0] everywhere when `repeat` (made by `site`).
template <class T>
Array from_values(const T* values, Shape shape, DType dtype, const std::source_location& loc, bool repeat = false,
                  const char* site_name = "array") {
  ir::ValueType type{dtype, std::move(shape)};
  int64_t n = ir::checked_num_elements(type.shape);
  if (n < 0) throw ShapeError("array: invalid shape " + ir::shape_str(type.shape) + detail::where(loc));
  const ir::SourceLoc user = detail::to_loc(loc);  // a profile names the user's line, not graft's
  runtime::SiteScope site(runtime::intern_site(site_name, ir::current_scope(), user.file, user.function, user.line));
  std::shared_ptr<detail::ArrayImpl> impl;
  {
    runtime::DeviceScope on(detail::fill_device());
    impl = detail::allocate_concrete(type);
  }
  ir::visit_element_type(dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    D* dst = static_cast<D*>(impl->buffer->data());
    // convert_element_type's rule: a double past an integer dtype's range saturates, NaN gives 0.
    if (repeat)
      std::fill_n(dst, n, interpreter::convert_element<D>(values[0]));
    else
      for (int64_t i = 0; i < n; ++i) dst[i] = interpreter::convert_element<D>(values[i]);
  });
  detail::place_fresh(*impl);
  return Array(impl);
}

Array filled(Shape shape, double value, DType dtype, const std::source_location& loc) {
  for (int64_t d : shape)
    if (d < 0 || d > ir::kMaxDim)
      throw ShapeError("full: invalid shape " + ir::shape_str(shape) + detail::where(loc));
  // Eagerly the buffer is filled directly (what broadcasting a scalar
  // computes); a trace records the constant and its broadcast.
  if (!ir::current_trace()) return from_values(&value, std::move(shape), dtype, loc, true, "full");
  Array s = from_values(&value, {}, dtype, loc);
  return detail::broadcast_to_shape(s, shape, loc);
}

}  // namespace

template <Scalar T>
Array array(std::initializer_list<T> values, std::source_location loc) {
  return from_values(values.begin(), {static_cast<int64_t>(values.size())}, dtype_of<T>(), loc);
}

template <Scalar T>
Array array(const std::vector<T>& values, Shape shape, std::source_location loc) {
  if (ir::checked_num_elements(shape) != static_cast<int64_t>(values.size()))
    throw ShapeError("array: " + std::to_string(values.size()) + " values do not fill shape " + ir::shape_str(shape) +
                     detail::where(loc));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_values(bytes.data(), std::move(shape), DType::bool_, loc);
  } else {
    return from_values(values.data(), std::move(shape), dtype_of<T>(), loc);
  }
}

namespace {
// The shape of a nested list (rows must agree), and its elements in row-major order.
template <class T>
void nested_shape(std::initializer_list<T> v, Shape& shape, size_t depth, const std::source_location& loc) {
  const int64_t n = static_cast<int64_t>(v.size());
  if (shape.size() <= depth) shape.push_back(n);
  else if (shape[depth] != n)
    throw ShapeError("array: ragged nested list (a row of " + std::to_string(n) + " where another has " +
                     std::to_string(shape[depth]) + ")" + detail::where(loc));
  if constexpr (!std::is_arithmetic_v<T>)
    for (const T& row : v) nested_shape(row, shape, depth + 1, loc);
}
template <class T, class E>
void nested_values(std::initializer_list<T> v, std::vector<E>& out) {
  if constexpr (std::is_arithmetic_v<T>) out.insert(out.end(), v.begin(), v.end());
  else
    for (const T& row : v) nested_values(row, out);
}
}  // namespace

template <Scalar T>
Array array(std::initializer_list<std::initializer_list<T>> rows, std::source_location loc) {
  Shape shape;
  nested_shape(rows, shape, 0, loc);
  std::vector<T> values;
  nested_values(rows, values);
  if (static_cast<int64_t>(shape.size()) < 2) shape.push_back(0);  // {{}}: no columns
  return array(values, shape, loc);
}

template <Scalar T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes, std::source_location loc) {
  Shape shape;
  nested_shape(planes, shape, 0, loc);
  std::vector<T> values;
  nested_values(planes, values);
  while (static_cast<int64_t>(shape.size()) < 3) shape.push_back(0);
  return array(values, shape, loc);
}

#define GRAFT_INSTANTIATE(T)                                                                                 \
  template Array array<T>(std::initializer_list<T>, std::source_location);                                 \
  template Array array<T>(const std::vector<T>&, Shape, std::source_location);                             \
  template Array array<T>(std::initializer_list<std::initializer_list<T>>, std::source_location);          \
  template Array array<T>(std::initializer_list<std::initializer_list<std::initializer_list<T>>>, std::source_location);
GRAFT_INSTANTIATE(float)
GRAFT_INSTANTIATE(double)
GRAFT_INSTANTIATE(int)
GRAFT_INSTANTIATE(long)
GRAFT_INSTANTIATE(long long)
GRAFT_INSTANTIATE(signed char)
GRAFT_INSTANTIATE(short)
GRAFT_INSTANTIATE(unsigned char)
GRAFT_INSTANTIATE(unsigned short)
GRAFT_INSTANTIATE(unsigned)
GRAFT_INSTANTIATE(unsigned long)
GRAFT_INSTANTIATE(unsigned long long)
GRAFT_INSTANTIATE(bool)
#undef GRAFT_INSTANTIATE

Array scalar(double value, DType dtype, std::source_location loc) { return from_values(&value, {}, dtype, loc); }
Array zeros(Shape shape, DType dtype, std::source_location loc) { return filled(std::move(shape), 0, dtype, loc); }
Array ones(Shape shape, DType dtype, std::source_location loc) { return filled(std::move(shape), 1, dtype, loc); }
Array full(Shape shape, double value, DType dtype, std::source_location loc) {
  return filled(std::move(shape), value, dtype, loc);
}

Array arange(int64_t n, DType dtype, std::source_location loc) {
  if (n < 0 || n > ir::kMaxDim) throw ShapeError("arange: invalid length " + std::to_string(n) + detail::where(loc));
  return detail::bind1(ir::Op::iota, {}, {{"dtype", dtype}, {"shape", ir::Ints{n}}, {"dimension", int64_t{0}}}, loc);
}

Array linspace(double start, double stop, int64_t n, DType dtype, bool endpoint, std::source_location loc) {
  if (n < 0 || n > ir::kMaxDim) throw ShapeError("linspace: invalid length " + std::to_string(n) + detail::where(loc));
  std::vector<double> v(static_cast<size_t>(n));
  const double div = static_cast<double>(endpoint ? n - 1 : n);
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = (endpoint && n == 1) ? start : start + (stop - start) * static_cast<double>(i) / div;
  if (endpoint && n > 1) v.back() = stop;  // exactly stop, as NumPy
  return from_values(v.data(), {n}, dtype, loc);
}

Array eye(int64_t n, DType dtype, std::source_location loc) {
  if (n < 0 || n > (int64_t{1} << 20)) throw ShapeError("eye: invalid size " + std::to_string(n) + detail::where(loc));
  std::vector<double> v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0;
  return from_values(v.data(), {n, n}, dtype, loc);
}

Array zeros_like(const Array& x, std::optional<DType> dtype, std::source_location loc) {
  return full(x.shape(), 0.0, dtype.value_or(x.dtype()), loc);
}
Array ones_like(const Array& x, std::optional<DType> dtype, std::source_location loc) {
  return full(x.shape(), 1.0, dtype.value_or(x.dtype()), loc);
}
Array full_like(const Array& x, double value, std::optional<DType> dtype, std::source_location loc) {
  return full(x.shape(), value, dtype.value_or(x.dtype()), loc);
}

namespace {
bool x64_enabled() {
  static const bool on = [] {
    const char* s = std::getenv("GRAFT_ENABLE_X64");
    return s && (std::string(s) == "1" || std::string(s) == "true" || std::string(s) == "True");
  }();
  return on;
}
}  // namespace

DType default_float_dtype() { return x64_enabled() ? DType::f64 : DType::f32; }
DType default_int_dtype() { return x64_enabled() ? DType::i64 : DType::i32; }

}  // namespace graft
