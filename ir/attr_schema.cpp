#include "ir/attr_schema.h"

#include <array>
#include <stdexcept>
#include <vector>

#include "graft/errors.h"

namespace graft::ir {
namespace {

constexpr int kNumKinds = 8;

// "axis:int index_dtype:dtype" -> {{"axis", int_}, {"index_dtype", dtype}}. A
// malformed column is a bug in ops.def, reported on first use.
std::vector<AttrSpec> parse(Op op, std::string_view text) {
  std::vector<AttrSpec> out;
  auto bad = [&](const std::string& why) -> std::vector<AttrSpec> {
    throw std::logic_error("ops.def: attribute schema of " + std::string(op_name(op)) + ": " + why);
  };
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') { ++pos; continue; }
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    size_t colon = item.find(':');
    // Messages built piecewise: "literal" + std::string draws a false GCC 12 -Wrestrict warning at -O3.
    if (colon == std::string_view::npos || colon == 0) {
      std::string why = "'";
      why += item;
      why += "' is not name:kind";
      return bad(why);
    }
    std::string_view kind = item.substr(colon + 1);
    int k = 0;
    while (k < kNumKinds && kind != attr_kind_name(static_cast<AttrKind>(k))) ++k;
    if (k == kNumKinds) {
      std::string why = "unknown kind '";
      why += kind;
      why += '\'';
      return bad(why);
    }
    AttrSpec spec{item.substr(0, colon), static_cast<AttrKind>(k)};
    if (!out.empty() && !(out.back().name < spec.name)) return bad("names must be sorted and distinct");
    out.push_back(spec);
    pos = end;
  }
  return out;
}

const std::array<std::vector<AttrSpec>, kNumOps>& schemas() {
  static const std::array<std::vector<AttrSpec>, kNumOps> table = [] {
    std::array<std::vector<AttrSpec>, kNumOps> t;
    for (int i = 0; i < kNumOps; ++i) t[i] = parse(static_cast<Op>(i), op_info(static_cast<Op>(i)).attributes);
    return t;
  }();
  return table;
}

std::string missing(const AttrSpec& s) {
  return "attribute '" + std::string(s.name) + "' is missing (it must be " + attr_kind_name(s.kind) + ")";
}

}  // namespace

std::span<const AttrSpec> attr_schema(Op op) { return schemas()[static_cast<size_t>(op)]; }

std::string attr_schema_violation(Op op, const Attrs& attrs) {
  std::span<const AttrSpec> schema = attr_schema(op);
  const auto& items = attrs.items();  // sorted by name, like the schema
  size_t i = 0, k = 0;
  while (i < items.size() || k < schema.size()) {
    if (k == schema.size() || (i < items.size() && items[i].first < schema[k].name)) {
      std::string allowed;
      for (const AttrSpec& s : schema) allowed += (allowed.empty() ? "" : ", ") + std::string(s.name);
      return "unknown attribute '" + items[i].first + "' (" +
             (allowed.empty() ? std::string("the op takes none") : "it takes " + allowed) + ")";
    }
    if (i == items.size() || schema[k].name < items[i].first) return missing(schema[k]);
    AttrKind have = attr_kind(items[i].second);
    if (have != schema[k].kind)
      return "attribute '" + items[i].first + "' must be " + attr_kind_name(schema[k].kind) + ", not " +
             attr_kind_name(have);
    ++i;
    ++k;
  }
  return {};
}

void check_attr_schema(Op op, const Attrs& attrs) {
  std::string why = attr_schema_violation(op, attrs);
  if (!why.empty()) throw GraphFormatError(std::string(op_name(op)) + ": " + why);
}

}  // namespace graft::ir
