#include "ir/attrs.h"

#include "graft/errors.h"
#include "ir/attr_access.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "ir/graph.h"

namespace graft::ir {

const char* attr_kind_name(AttrKind kind) {
  static constexpr const char* kNames[] = {"int", "ints", "float", "dtype", "string", "graphs", "literal", "callback"};
  return kNames[static_cast<int>(kind)];
}

namespace {

size_t mix(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)); }

// Cheap structural hash of a subgraph: consistent with structural equality
// (equal graphs hash equal) without walking attributes recursively.
size_t graph_hash(const Graph& g) {
  size_t h = mix(g.inputs().size(), g.outputs().size());
  for (const Node& n : g.nodes()) h = mix(h, static_cast<size_t>(n.op));
  return h;
}

}  // namespace

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, double>) {
          return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
        } else if constexpr (std::is_same_v<T, Graphs>) {
          if (x.size() != y.size()) return false;
          for (size_t i = 0; i < x.size(); ++i)
            if (x[i] != y[i] && !(x[i] && y[i] && *x[i] == *y[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, LiteralPtr>) {
          return x == y || (x && y && *x == *y);
        } else if constexpr (std::is_same_v<T, HostCallbackPtr>) {
          // Two callbacks with no function (read from JSON) are equal by what they declare.
          return x == y || (x && y && !x->call && !y->call && x->name == y->name && x->results == y->results);
        } else {
          return x == y;
        }
      },
      a);
}

size_t attr_hash(const AttrValue& v) {
  size_t h = v.index();
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          h = mix(h, std::hash<int64_t>{}(x));
        } else if constexpr (std::is_same_v<T, Ints>) {
          for (int64_t i : x) h = mix(h, std::hash<int64_t>{}(i));
        } else if constexpr (std::is_same_v<T, double>) {
          h = mix(h, std::bit_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, DType>) {
          h = mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = mix(h, std::hash<std::string>{}(x));
        } else if constexpr (std::is_same_v<T, Graphs>) {
          for (const GraphPtr& g : x) h = mix(h, g ? graph_hash(*g) : 0);
        } else if constexpr (std::is_same_v<T, HostCallbackPtr>) {
          if (x) h = mix(h, std::hash<std::string>{}(x->name));
        } else if constexpr (std::is_same_v<T, LiteralPtr>) {
          if (x) {
            h = mix(h, static_cast<size_t>(x->type.dtype));
            for (int64_t d : x->type.shape) h = mix(h, static_cast<size_t>(d));
            h = mix(h, std::hash<std::string_view>{}(std::string_view(
                           reinterpret_cast<const char*>(x->bytes.data()), x->bytes.size())));
          }
        }
      },
      v);
  return h;
}

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) {
  for (const auto& [name, value] : init) set(name, value);
}

void Attrs::set(const std::string& name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& n) { return item.first < n; });
  if (it != items_.end() && it->first == name)
    it->second = std::move(value);
  else
    items_.insert(it, {name, std::move(value)});
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& n) { return item.first < n; });
  return it != items_.end() && it->first == name ? &it->second : nullptr;
}

bool Attrs::operator==(const Attrs& other) const {
  if (items_.size() != other.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first != other.items_[i].first || !attr_equal(items_[i].second, other.items_[i].second))
      return false;
  return true;
}

size_t Attrs::hash() const {
  size_t h = items_.size();
  for (const auto& [name, value] : items_) h = mix(mix(h, std::hash<std::string>{}(name)), attr_hash(value));
  return h;
}

[[noreturn]] void bad_attr(Op op, std::string_view name, const AttrValue* found, const char* want) {
  std::string msg = std::string(op_name(op)) + ": attribute '" + std::string(name) + "' ";
  msg += found ? "is not " + std::string(want) : "is missing (it must be " + std::string(want) + ")";
  throw GraphFormatError(msg);
}

}  // namespace graft::ir
