// graft::conv_general_dilated and conv (include/graft/conv.h): layouts read
// into the primitive's lhs/rhs/out specs, string padding resolved as JAX's
// padtype_to_pads, operands promoted, then one conv_general_dilated node.
#include "graft/conv.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/padding.h"
#include "graft/errors.h"
#include "ir/dtype.h"

namespace graft {

Padding::Padding(const char* n) : Padding(std::string(n)) {}
Padding::Padding(std::string n) : name(std::move(n)) {
  if (name != "SAME" && name != "SAME_LOWER" && name != "VALID")
    throw Error("conv padding: a string padding is \"SAME\", \"SAME_LOWER\" or \"VALID\", got \"" + name + "\"");
}
Padding::Padding(std::vector<std::pair<int64_t, int64_t>> explicit_pads) : pads(std::move(explicit_pads)) {}

namespace {

using Loc = std::source_location;

struct Specs {
  ir::Ints lhs, rhs, out;
};

// The primitive's specs from the layout letters (JAX's conv_general_permutations).
Specs specs_of(const char* fn, const ConvDimensionNumbers& dn, int rank, const Loc& loc) {
  const ConvDimensionNumbers def;
  if (dn.lhs == def.lhs && dn.rhs == def.rhs && dn.out == def.out && rank != 4) {
    Specs s;
    for (int64_t i = 0; i < rank; ++i) s.lhs.push_back(i);
    s.rhs = s.out = s.lhs;
    return s;
  }
  auto bad = [&](const std::string& why) {
    return ShapeError(std::string(fn) + ": dimension numbers (\"" + dn.lhs + "\", \"" + dn.rhs + "\", \"" + dn.out +
                      "\") " + why + detail::where(loc));
  };
  for (const std::string* s : {&dn.lhs, &dn.rhs, &dn.out}) {
    if (static_cast<int>(s->size()) != rank)
      throw bad("must each have " + std::to_string(rank) + " letters (the operands' rank)");
    std::string sorted = *s;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw bad("repeat a letter");
  }
  auto index = [&](const std::string& s, char c, const char* which) {
    const size_t at = s.find(c);
    if (at == std::string::npos) throw bad(std::string(which) + " lacks '" + c + "'");
    return static_cast<int64_t>(at);
  };
  Specs s{{index(dn.lhs, 'N', "lhs"), index(dn.lhs, 'C', "lhs")},
          {index(dn.rhs, 'O', "rhs"), index(dn.rhs, 'I', "rhs")},
          {index(dn.out, 'N', "out"), index(dn.out, 'C', "out")}};
  for (char c : dn.rhs) {
    if (c == 'O' || c == 'I') continue;
    s.rhs.push_back(index(dn.rhs, c, "rhs"));
    s.lhs.push_back(index(dn.lhs, c, "lhs"));
    s.out.push_back(index(dn.out, c, "out"));
  }
  return s;
}

}  // namespace

Array conv_general_dilated(const Array& lhs_in, const Array& rhs_in, Shape window_strides, Padding padding,
                           Shape lhs_dilation, Shape rhs_dilation, ConvDimensionNumbers dimension_numbers,
                           int64_t feature_group_count, int64_t batch_group_count, DotOptions options, Loc loc) {
  const char* fn = "conv_general_dilated";
  Array lhs = detail::as_float(lhs_in, fn, loc), rhs = detail::as_float(rhs_in, fn, loc);
  DType dtype = ir::promote_types(lhs.dtype(), rhs.dtype());
  if (options.preferred_element_type && ir::is_inexact(*options.preferred_element_type))
    dtype = *options.preferred_element_type;
  lhs = detail::convert(lhs, dtype, loc);
  rhs = detail::convert(rhs, dtype, loc);
  const int rank = lhs.ndim();
  if (rank < 3 || rank > 5 || rhs.ndim() != rank)
    throw ShapeError(std::string(fn) + ": lhs and rhs need one rank from 3 to 5 (1 to 3 spatial dimensions), got " +
                     detail::describe(lhs) + " and " + detail::describe(rhs) + detail::where(loc));
  const size_t n = static_cast<size_t>(rank - 2);
  const Specs s = specs_of(fn, dimension_numbers, rank, loc);
  auto ones_if_empty = [&](Shape v, const char* what) {
    if (v.empty()) v.assign(n, 1);
    if (v.size() != n)
      throw ShapeError(std::string(fn) + ": " + what + " needs " + std::to_string(n) + " entries, got " +
                       std::to_string(v.size()) + detail::where(loc));
    return v;
  };
  window_strides = ones_if_empty(window_strides, "window_strides");
  lhs_dilation = ones_if_empty(lhs_dilation, "lhs_dilation");
  rhs_dilation = ones_if_empty(rhs_dilation, "rhs_dilation");
  ir::Ints lo(n), hi(n);
  if (!padding.name.empty()) {
    if (std::any_of(lhs_dilation.begin(), lhs_dilation.end(), [](int64_t d) { return d != 1; }))
      throw Error(std::string(fn) + ": string padding (\"" + padding.name +
                  "\") is not defined with an lhs dilation, as in JAX; give explicit pads" + detail::where(loc));
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = lhs.shape()[static_cast<size_t>(s.lhs[2 + i])];
      const int64_t k = rhs.shape()[static_cast<size_t>(s.rhs[2 + i])];
      const int64_t window = k == 0 ? 0 : (k - 1) * rhs_dilation[i] + 1;
      std::tie(lo[i], hi[i]) = detail::string_padding(padding, in, window, window_strides[i]);
    }
  } else {
    if (padding.pads.size() != n)
      throw ShapeError(std::string(fn) + ": padding needs " + std::to_string(n) + " {low, high} pairs, got " +
                       std::to_string(padding.pads.size()) + detail::where(loc));
    for (size_t i = 0; i < n; ++i) lo[i] = padding.pads[i].first, hi[i] = padding.pads[i].second;
  }
  return detail::bind1(ir::Op::conv_general_dilated, {lhs, rhs},
                       {{"batch_group_count", batch_group_count},
                        {"feature_group_count", feature_group_count},
                        {"lhs_dilation", ir::Ints(lhs_dilation)},
                        {"lhs_spec", s.lhs},
                        {"out_spec", s.out},
                        {"padding_high", hi},
                        {"padding_low", lo},
                        {"rhs_dilation", ir::Ints(rhs_dilation)},
                        {"rhs_spec", s.rhs},
                        {"window_strides", ir::Ints(window_strides)}},
                       loc);
}

Array conv(const Array& lhs, const Array& rhs, Shape window_strides, Padding padding, Loc loc) {
  ConvDimensionNumbers canonical;
  if (lhs.ndim() != 4) canonical = {};  // the default stands for the canonical order at every rank
  return conv_general_dilated(lhs, rhs, std::move(window_strides), std::move(padding), {}, {}, canonical, 1, 1, {},
                              loc);
}

Array conv_transpose(const Array& lhs, const Array& rhs_in, Shape strides, Padding padding, Shape rhs_dilation,
                     std::optional<ConvDimensionNumbers> dimension_numbers, bool transpose_kernel, Loc loc) {
  const char* fn = "conv_transpose";
  const int rank = lhs.ndim();
  if (rank < 3 || rank > 5 || rhs_in.ndim() != rank)
    throw ShapeError(std::string(fn) + ": lhs and rhs need one rank from 3 to 5 (1 to 3 spatial dimensions), got " +
                     detail::describe(lhs) + " and " + detail::describe(rhs_in) + detail::where(loc));
  const size_t n = static_cast<size_t>(rank - 2);
  if (!dimension_numbers) {  // TensorFlow's layouts, as JAX's defaults
    static const char* const kSpatial[] = {"H", "HW", "HWD"};
    const std::string sp = kSpatial[n - 1];
    dimension_numbers = ConvDimensionNumbers{"N" + sp + "C", sp + "IO", "N" + sp + "C"};
  }
  const Specs s = specs_of(fn, *dimension_numbers, rank, loc);
  if (strides.size() != n)
    throw ShapeError(std::string(fn) + ": strides needs " + std::to_string(n) + " entries, got " +
                     std::to_string(strides.size()) + detail::where(loc));
  if (rhs_dilation.empty()) rhs_dilation.assign(n, 1);
  Array rhs = rhs_in;
  if (!padding.name.empty()) {
    if (padding.name == "SAME_LOWER")
      throw Error(std::string(fn) + ": padding is \"SAME\", \"VALID\" or explicit pairs, as JAX's; got \"SAME_LOWER\"" +
                  detail::where(loc));
    if (rhs_dilation.size() != n)
      throw ShapeError(std::string(fn) + ": rhs_dilation needs " + std::to_string(n) + " entries" + detail::where(loc));
    std::vector<std::pair<int64_t, int64_t>> pads(n);
    for (size_t i = 0; i < n; ++i) {  // JAX's _conv_transpose_padding
      const int64_t k0 = rhs.shape()[static_cast<size_t>(s.rhs[2 + i])];
      const int64_t k = k0 == 0 ? 0 : (k0 - 1) * rhs_dilation[i] + 1, st = strides[i];
      int64_t before, total;
      if (padding.name == "SAME") {
        total = k + st - 2;
        before = st > k - 1 ? k - 1 : (total + 1) / 2;
      } else {
        total = k + st - 2 + std::max<int64_t>(k - st, 0);
        before = k - 1;
      }
      pads[i] = {before, total - before};
    }
    padding = Padding(std::move(pads));
  }
  if (transpose_kernel) {
    std::vector<int> spatial(s.rhs.begin() + 2, s.rhs.end());
    rhs = flip(rhs, spatial, loc);
    std::vector<int> perm(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
    std::swap(perm[static_cast<size_t>(s.rhs[0])], perm[static_cast<size_t>(s.rhs[1])]);
    rhs = transpose(rhs, perm, loc);
  }
  return conv_general_dilated(lhs, rhs, Shape(n, 1), std::move(padding), std::move(strides), std::move(rhs_dilation),
                              *dimension_numbers, 1, 1, {}, loc);
}

}  // namespace graft
