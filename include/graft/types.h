// graft's element types and shapes: the vocabulary every other header uses.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace graft {

enum class DType : uint8_t { bool_, i32, i64, u32, f32, f64 };

inline constexpr DType bool_ = DType::bool_;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType u32 = DType::u32;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;

// "bool", "i32", "i64", "u32", "f32", "f64".
const char* dtype_name(DType dtype);

using Shape = std::vector<int64_t>;

}  // namespace graft
