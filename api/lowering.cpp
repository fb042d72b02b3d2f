#include "api/lowering.h"

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "graft/errors.h"

namespace graft::detail {

std::string where(const std::source_location& loc) {
  return std::string(" at ") + loc.file_name() + ":" + std::to_string(loc.line());
}

std::string describe(const Array& a) { return ir::type_str(checked_impl(a, "array").type); }

Shape broadcast_shapes(const char* op, const std::vector<Array>& args, const std::source_location& loc) {
  std::vector<Shape> shapes;
  for (const Array& a : args) shapes.push_back(checked_impl(a, op).type.shape);
  try {
    return broadcast_shapes(op, shapes, loc);
  } catch (const ShapeError&) {
    std::string types;
    for (const Array& b : args) {
      if (!types.empty()) types += ", ";
      types += describe(b);
    }
    throw ShapeError(std::string(op) + ": shapes cannot be broadcast together: " + types + where(loc));
  }
}

Shape broadcast_shapes(const char* op, const std::vector<Shape>& shapes, const std::source_location& loc) {
  Shape out;
  for (const Shape& s : shapes) {
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[out.size() - s.size() + i];
      int64_t d = s[i];
      if (o == d || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string text;
      for (const Shape& t : shapes) {
        if (!text.empty()) text += ", ";
        text += ir::shape_str(t);
      }
      throw ShapeError(std::string(op) + ": shapes cannot be broadcast together: " + text + where(loc));
    }
  }
  return out;
}

Array broadcast_to_shape(const Array& x, const Shape& shape, const std::source_location& loc) {
  const Shape& s = checked_impl(x, "broadcast_to").type.shape;
  if (s == shape) return x;
  if (s.size() > shape.size())
    throw ShapeError("broadcast_to: cannot broadcast " + describe(x) + " to " + ir::shape_str(shape) + where(loc));
  ir::Ints dims(s.size());
  for (size_t i = 0; i < s.size(); ++i) dims[i] = static_cast<int64_t>(shape.size() - s.size() + i);
  return bind1(ir::Op::broadcast_in_dim, {x}, {{"shape", ir::Ints(shape)}, {"broadcast_dimensions", dims}}, loc);
}

Array convert(const Array& x, DType dtype, const std::source_location& loc) {
  if (checked_impl(x, "astype").type.dtype == dtype) return x;
  return bind1(ir::Op::convert_element_type, {x}, {{"new_dtype", dtype}}, loc);
}

Array as_float(const Array& x, const char* name, const std::source_location& loc) {
  return ir::is_inexact(checked_impl(x, name).type.dtype) ? x : convert(x, default_float_dtype(), loc);
}

std::vector<Array> promote_and_broadcast(const char* op, std::vector<Array> args, const std::source_location& loc) {
  if (args.empty()) return args;
  // Fast path: operands that already agree (the common case) pass through untouched.
  const ir::ValueType& first = checked_impl(args[0], op).type;
  bool same = true;
  for (size_t i = 1; i < args.size() && same; ++i) same = checked_impl(args[i], op).type == first;
  if (same) return args;
  DType d = first.dtype;
  for (const Array& a : args) d = ir::promote_types(d, checked_impl(a, op).type.dtype);
  Shape shape = broadcast_shapes(op, args, loc);
  for (Array& a : args) a = broadcast_to_shape(convert(a, d, loc), shape, loc);
  return args;
}

int normalize_axis(const char* op, int64_t axis, int rank, const std::source_location& loc) {
  if (axis < -rank || axis >= rank)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank) + where(loc));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

DType weak_scalar_dtype(const Array& x, bool is_float, const char* op) {
  const DType xd = checked_impl(x, op).type.dtype;
  const ir::PromotionType t = ir::promote_types(ir::PromotionType{xd}, ir::PromotionType{is_float ? DType::f32 : DType::i32, true});
  // A weak result (a bool array and a number, an int array and a float
  // number) is the default dtype of its kind: 64-bit under GRAFT_ENABLE_X64.
  if (!t.weak) return t.dtype;
  if (ir::is_complex(t.dtype)) return ir::complex_dtype(default_float_dtype());
  return ir::is_floating(t.dtype) ? default_float_dtype() : default_int_dtype();
}

}  // namespace graft::detail
