#include "ir/symbolic_graph.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "graft/errors.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/element_type.h"
#include "ir/inline.h"
#include "ir/literal.h"

namespace graft::ir {

namespace {

// A scalar constant that may hold a size: an integer, or a float holding an
// integer exactly (mean's count). Other constants are compared as bytes.
bool size_like_scalar(const Literal& lit, int64_t* value) {
  if (lit.type.rank() != 0 || lit.bytes.size() != dtype_size(lit.type.dtype)) return false;
  const DType d = lit.type.dtype;
  if (d == DType::bool_ || is_complex(d) || d == DType::f16 || d == DType::bf16) return false;
  const double v = literal_element(lit, 0);
  if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) >= 9007199254740992.0) return false;
  if (d == DType::i64 || d == DType::u64) {  // exact beyond 2^53 too
    int64_t x;
    std::memcpy(&x, lit.bytes.data(), sizeof x);
    if (d == DType::u64 && x < 0) return false;
    *value = x;
    return true;
  }
  *value = static_cast<int64_t>(v);
  return true;
}

// A float scalar constant holding 1 / n for an integer n, to the bit (what
// mean's gradient multiplies by): *n = n.
bool reciprocal_scalar(const Literal& lit, int64_t* n) {
  if (lit.type.rank() != 0 || (lit.type.dtype != DType::f32 && lit.type.dtype != DType::f64)) return false;
  const double v = literal_element(lit, 0);
  if (!std::isfinite(v) || v == 0) return false;
  const double r = std::round(1.0 / v);
  if (!(std::fabs(r) >= 2 && std::fabs(r) < 9007199254740992.0)) return false;
  if (lit.type.dtype == DType::f32 ? static_cast<float>(v) != static_cast<float>(1.0 / r) : v != 1.0 / r) return false;
  *n = static_cast<int64_t>(r);
  return true;
}

LiteralPtr reciprocal_literal(DType d, int64_t n) {
  Literal lit{ValueType{d, {}}, std::vector<uint8_t>(dtype_size(d))};
  if (d == DType::f32) {
    const float v = static_cast<float>(1.0 / static_cast<double>(n));
    std::memcpy(lit.bytes.data(), &v, sizeof v);
  } else {
    const double v = 1.0 / static_cast<double>(n);
    std::memcpy(lit.bytes.data(), &v, sizeof v);
  }
  return std::make_shared<const Literal>(std::move(lit));
}

LiteralPtr scalar_literal(DType d, int64_t value) {
  Literal lit{ValueType{d, {}}, std::vector<uint8_t>(dtype_size(d))};
  visit_element_type(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_type<T> && !is_half_type<T>) {
      const T v = static_cast<T>(value);
      std::memcpy(lit.bytes.data(), &v, sizeof v);
    }
  });
  return std::make_shared<const Literal>(std::move(lit));
}

// "r2", "%7": a prefix and a number (appended piecewise: GCC 12 warns falsely on "literal" + std::string).
std::string tag(const char* prefix, int64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

std::string hex_bytes(const std::vector<uint8_t>& b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (uint8_t x : b) {
    s += digits[x >> 4];
    s += digits[x & 15];
  }
  return s;
}

// Visits every part of a graph in one fixed order: structure as tokens,
// size-like numbers as numbers. With V::kWrites, numbers the visitor changes
// are written back (value types, attributes, scalar constants, subgraphs).
template <class V>
void walk(Graph& g, V& v, int depth) {
  auto type = [&](ValueId id, const Node* at) {
    v.on_value(id, depth);
    ValueType t = g.type(id);
    v.token(dtype_name(t.dtype), at);
    v.token(tag("r", static_cast<int64_t>(t.rank())), at);
    bool changed = false;
    for (int64_t& d : t.shape) {
      const int64_t before = d;
      v.number(d, at);
      changed = changed || d != before;
    }
    if constexpr (V::kWrites)
      if (changed) g.set_type(id, std::move(t));
  };
  v.token(tag("in", static_cast<int64_t>(g.inputs().size())), nullptr);
  for (ValueId id : g.inputs()) {
    v.token(tag("%", static_cast<int64_t>(id)), nullptr);
    type(id, nullptr);
  }
  for (Node& n : g.mutable_nodes()) {
    const Node* at = &n;
    v.token(std::string(op_name(n.op)), at);
    v.token(tag("i", static_cast<int64_t>(n.inputs.size())), at);
    for (ValueId id : n.inputs) v.token(tag("%", static_cast<int64_t>(id)), at);
    v.token(tag("o", static_cast<int64_t>(n.outputs.size())), at);
    for (ValueId id : n.outputs) {
      v.token(tag("%", static_cast<int64_t>(id)), at);
      type(id, at);
    }
    v.token(tag("a", static_cast<int64_t>(n.attrs.size())), at);
    std::vector<std::pair<std::string, AttrValue>> updates;  // applied after the loop over the attributes
    for (const auto& item : n.attrs.items()) {
      // Plain names, not a structured binding: the visitor captures `name`, which clang refuses under OpenMP.
      const auto& name = item.first;
      const auto& value = item.second;
      v.token(name, at);
      v.token(attr_kind_name(attr_kind(value)), at);
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>) {
              int64_t y = x;
              v.number(y, at);
              if constexpr (V::kWrites)
                if (y != x) updates.emplace_back(name, y);
            } else if constexpr (std::is_same_v<T, Ints>) {
              Ints y = x;
              v.token(tag("n", static_cast<int64_t>(y.size())), at);
              for (int64_t& e : y) v.number(e, at);
              if constexpr (V::kWrites)
                if (y != x) updates.emplace_back(name, std::move(y));
            } else if constexpr (std::is_same_v<T, double>) {
              uint64_t bits;
              std::memcpy(&bits, &x, sizeof bits);
              v.token(tag("f", static_cast<int64_t>(bits)), at);
            } else if constexpr (std::is_same_v<T, DType>) {
              v.token(dtype_name(x), at);
            } else if constexpr (std::is_same_v<T, std::string>) {
              v.token("'" + x + "'", at);
            } else if constexpr (std::is_same_v<T, Graphs>) {
              v.token(tag("g", static_cast<int64_t>(x.size())), at);
              Graphs out = x;
              for (GraphPtr& sub : out) {
                auto copy = std::make_shared<Graph>(*sub);
                walk(*copy, v, depth + 1);
                sub = std::move(copy);
              }
              if constexpr (V::kWrites) updates.emplace_back(name, std::move(out));
            } else if constexpr (std::is_same_v<T, LiteralPtr>) {
              const Literal& lit = *x;
              v.token(dtype_name(lit.type.dtype), at);
              v.token(tag("r", static_cast<int64_t>(lit.type.rank())), at);
              for (int64_t d : lit.type.shape)
                v.token(tag("d", static_cast<int64_t>(d)), at);  // a constant array's size is fixed
              int64_t value;
              if (size_like_scalar(lit, &value)) {
                v.token("scalar", at);
                const int64_t before = value;
                v.number(value, at);
                if constexpr (V::kWrites)
                  if (value != before) updates.emplace_back(name, scalar_literal(lit.type.dtype, value));
              } else if (reciprocal_scalar(lit, &value)) {
                v.token("reciprocal", at);
                const int64_t before = value;
                v.number(value, at);
                if constexpr (V::kWrites)
                  if (value != before) updates.emplace_back(name, reciprocal_literal(lit.type.dtype, value));
              } else {
                v.token(lit.bytes.size() <= 64 ? hex_bytes(lit.bytes)
                                               : tag("#", static_cast<int64_t>(lit.bytes.size())) +
                                                     tag(":", static_cast<int64_t>(attr_hash(x))),
                        at);
              }
            } else {
              v.token("callback", at);  // each trace makes its own; the first one's serves every size
              HostCallbackPtr cb = x;
              v.callback(cb);
              if constexpr (V::kWrites)
                if (cb != x) updates.emplace_back(name, std::move(cb));
            }
          },
          value);
    }
    for (auto& [name, value] : updates) n.attrs.set(name, std::move(value));
  }
  v.token(tag("out", static_cast<int64_t>(g.outputs().size())), nullptr);
  for (ValueId id : g.outputs()) v.token(tag("%", static_cast<int64_t>(id)), nullptr);
}

// One sample's walk: its tokens and numbers, each with the node it belongs to.
struct Collected {
  static constexpr bool kWrites = false;
  std::vector<HostCallbackPtr> callbacks;  // in walk order
  void callback(HostCallbackPtr& cb) { callbacks.push_back(cb); }
  std::vector<std::string> tokens;
  std::vector<const Node*> token_at;
  std::vector<int64_t> numbers;
  std::vector<const Node*> number_at;
  void on_value(ValueId, int) {}
  void token(std::string t, const Node* at) {
    tokens.push_back(std::move(t));
    token_at.push_back(at);
  }
  void number(int64_t& x, const Node* at) {
    numbers.push_back(x);
    number_at.push_back(at);
  }
};

struct Writer {
  static constexpr bool kWrites = true;
  const std::vector<DimExpr>* exprs;
  const std::vector<int64_t>* values;
  size_t next = 0;
  void on_value(ValueId, int) {}
  void token(const std::string&, const Node*) {}
  void number(int64_t& x, const Node*) {
    const DimExpr& e = (*exprs)[next++];
    if (!e.is_constant()) x = e.evaluate(*values);
  }
  void callback(HostCallbackPtr&) {}
};

// Puts given callbacks in a graph's callback attributes, in walk order: a
// trace's own callbacks replaced by the program's, so that two traces of one
// program compare equal (each trace makes its own callback objects).
struct CallbackSetter {
  static constexpr bool kWrites = true;
  const std::vector<HostCallbackPtr>* callbacks;
  size_t next = 0;
  void on_value(ValueId, int) {}
  void token(const std::string&, const Node*) {}
  void number(int64_t&, const Node*) {}
  void callback(HostCallbackPtr& cb) {
    if (next < callbacks->size()) cb = (*callbacks)[next];
    ++next;
  }
};

std::string where(const Node* n) {
  if (!n) return "the graph's inputs or outputs";
  std::string s = "node " + std::to_string(n->id) + " (" + std::string(op_name(n->op));
  if (!n->loc.empty()) s += " at " + loc_str(n->loc);
  return s + ")";
}

// The expression taking values[m] at corner m; nullopt when its
// coefficients are not integers.
std::optional<DimExpr> fit_corners(const std::vector<int64_t>& values, const std::vector<int64_t>& first,
                                   const std::vector<int64_t>& second) {
  const size_t k = first.size(), corners = size_t{1} << k;
  // Differences over corners (Moebius inversion): f = sum_S d_S prod_{s in S} t_s,
  // t_s = (x_s - first_s) / delta_s in {0, 1}.
  std::vector<__int128> d(corners);
  for (size_t S = 0; S < corners; ++S) {
    __int128 sum = 0;
    for (size_t T = S;; T = (T - 1) & S) {
      const int sign = (__builtin_popcountll(S) - __builtin_popcountll(T)) % 2 ? -1 : 1;
      sum += sign * static_cast<__int128>(values[T]);
      if (T == 0) break;
    }
    d[S] = sum;
  }
  __int128 D = 1;
  for (size_t s = 0; s < k; ++s) D *= second[s] - first[s];
  std::vector<DimExpr::Term> terms;
  for (size_t U = 0; U < corners; ++U) {
    __int128 scaled = 0;  // coefficient of prod_{s in U} x_s, times D
    for (size_t S = U; S < corners; S = (S + 1) | U) {
      __int128 t = d[S];
      for (size_t s = 0; s < k; ++s) {
        if (S >> s & 1) {
          if (!(U >> s & 1)) t *= -first[s];
        } else {
          t *= second[s] - first[s];
        }
      }
      scaled += t;
    }
    if (scaled % D != 0) return std::nullopt;
    const __int128 c = scaled / D;
    if (c > INT64_MAX || c < INT64_MIN) return std::nullopt;
    terms.push_back({static_cast<uint32_t>(U), static_cast<int64_t>(c)});
  }
  return DimExpr::from_terms(std::move(terms));
}

}  // namespace

std::vector<std::vector<int64_t>> sample_points(const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                                                const std::vector<int64_t>& third) {
  const size_t k = first.size();
  std::vector<std::vector<int64_t>> points;
  for (size_t m = 0; m < (size_t{1} << k); ++m) {
    std::vector<int64_t> p(k);
    for (size_t s = 0; s < k; ++s) p[s] = (m >> s & 1) ? second[s] : first[s];
    points.push_back(std::move(p));
  }
  points.push_back(third);
  return points;
}

SymbolicGraph fit_symbolic_graph(const std::vector<GraphPtr>& samples, const std::vector<std::vector<int64_t>>& points,
                                 std::vector<std::string> symbols) {
  const size_t k = symbols.size(), corners = size_t{1} << k;
  if (samples.size() != corners + 1 || points.size() != samples.size())
    throw ShapeError("polymorphic trace: expected " + std::to_string(corners + 1) + " samples");
  std::vector<Graph> copies;
  copies.reserve(samples.size());
  std::vector<Collected> walks(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    copies.push_back(*samples[i]);
    walk(copies.back(), walks[i], 0);
  }
  const Collected& w0 = walks[0];
  for (size_t i = 1; i < walks.size(); ++i) {
    const Collected& wi = walks[i];
    const size_t n = std::min(w0.tokens.size(), wi.tokens.size());
    size_t at = 0;
    while (at < n && w0.tokens[at] == wi.tokens[at]) ++at;
    if (at == n && w0.tokens.size() == wi.tokens.size() && w0.numbers.size() == wi.numbers.size()) continue;
    const Node* node = at < w0.token_at.size() ? w0.token_at[at] : nullptr;
    throw ShapeError("jit: polymorphic_shapes: the function builds a different program at " +
                     symbol_values_str(symbols, points[i]) + " than at " + symbol_values_str(symbols, points[0]) +
                     ", first at " + where(node) +
                     (at < n ? " ('" + w0.tokens[at] + "' against '" + wi.tokens[at] + "')" : std::string()) +
                     ": an op, a constant array whose size depends on a symbol, or code that branches on a "
                     "dimension. A polymorphic function must build one program for every size.");
  }
  std::vector<int64_t> first = points[0], second(k), third = points[corners];
  for (size_t s = 0; s < k; ++s) second[s] = points[size_t{1} << s][s];
  SymbolicGraph out;
  out.base = samples[0];
  out.numbers.reserve(w0.numbers.size());
  std::vector<int64_t> values(samples.size());
  for (size_t j = 0; j < w0.numbers.size(); ++j) {
    bool same = true;
    for (size_t i = 0; i < walks.size(); ++i) {
      values[i] = walks[i].numbers[j];
      same = same && values[i] == values[0];
    }
    if (same) {
      out.numbers.push_back(DimExpr::constant(values[0]));
      continue;
    }
    std::optional<DimExpr> e = fit_corners(values, first, second);
    if (!e || e->evaluate(third) != values[corners]) {
      std::string seen;
      for (size_t i = 0; i < values.size(); ++i) {
        if (i) seen += ", ";
        seen += std::to_string(values[i]);
        seen += " at ";
        seen += symbol_values_str(symbols, points[i]);
      }
      throw ShapeError("jit: polymorphic_shapes: a size at " + where(w0.number_at[j]) + " is " + seen +
                       ": not a sum of products of distinct symbols with integer coefficients (such as b // 2 "
                       "or b*b), which a polymorphic program cannot compute.");
    }
    out.numbers.push_back(std::move(*e));
    ++out.symbolic_count;
  }
  out.symbols = std::move(symbols);
  return out;
}

GraphPtr instantiate(const SymbolicGraph& g, const std::vector<int64_t>& values) {
  auto copy = std::make_shared<Graph>(*g.base);
  Writer w{&g.numbers, &values};
  walk(*copy, w, 0);
  return copy;
}

namespace {
// g built again through a builder that shares equal nodes: two traces of one
// program compare equal even where a size happens to equal a constant the
// program also holds (b = 1 and the constant 1, shared into one node).
Graph shared(const Graph& g) {
  GraphBuilder b;
  std::vector<ValueId> ins;
  for (ValueId id : g.inputs()) ins.push_back(b.input(g.type(id)));
  return *b.finish(inline_graph(b, g, ins));
}
}  // namespace

std::optional<std::string> symbolic_mismatch(const SymbolicGraph& g, const Graph& sample,
                                             const std::vector<int64_t>& values) {
  Graph mine = shared(*instantiate(g, values)), other = shared(sample);
  if (mine == other) return std::nullopt;
  Collected w0, w1;
  walk(mine, w0, 0);
  walk(other, w1, 0);
  if (!w0.callbacks.empty() && w0.callbacks.size() == w1.callbacks.size()) {
    // The program's callbacks serve every size: the sample's own are not a difference.
    CallbackSetter set{&w0.callbacks};
    walk(other, set, 0);
    if (mine == other) return std::nullopt;
  }
  const size_t n = std::min(w0.tokens.size(), w1.tokens.size());
  for (size_t i = 0; i < n; ++i)
    if (w0.tokens[i] != w1.tokens[i])
      return "at " + where(w0.token_at[i]) + ": '" + w1.tokens[i] + "' where the program has '" + w0.tokens[i] + "'";
  for (size_t j = 0; j < std::min(w0.numbers.size(), w1.numbers.size()); ++j)
    if (w0.numbers[j] != w1.numbers[j])
      return "at " + where(w0.number_at[j]) + ": the number " + std::to_string(w1.numbers[j]) +
             " where the program has " + std::to_string(w0.numbers[j]);
  return std::string("in its length, locations or names");
}

namespace {
struct ValueDims {
  static constexpr bool kWrites = false;
  const std::vector<DimExpr>* exprs = nullptr;
  size_t next = 0;
  std::vector<std::pair<ValueId, std::vector<DimExpr>>> out;
  bool top = false;      // the value just announced is in the top-level graph
  int64_t pending = -1;  // its dimensions still to come, once its rank token is seen
  void callback(HostCallbackPtr&) {}
  void on_value(ValueId id, int depth) {
    top = depth == 0;
    pending = -1;
    if (top) out.push_back({id, {}});
  }
  void token(const std::string& t, const Node*) {
    if (top && pending < 0 && t.size() > 1 && t[0] == 'r') pending = std::stoll(t.substr(1));
  }
  void number(int64_t&, const Node*) {
    const DimExpr& e = (*exprs)[next++];
    if (top && pending > 0) {
      out.back().second.push_back(e);
      if (--pending == 0) top = false;
    }
  }
};
}  // namespace

std::vector<std::pair<ValueId, std::vector<DimExpr>>> symbolic_value_dims(const SymbolicGraph& g) {
  Graph copy = *g.base;
  ValueDims v;
  v.exprs = &g.numbers;
  walk(copy, v, 0);
  return std::move(v.out);
}

std::string symbolic_type_str(DType dtype, const std::vector<DimExpr>& dims, const std::vector<std::string>& symbols) {
  std::string s = dtype_name(dtype);
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i].str(symbols);
  }
  return s + "]";
}

}  // namespace graft::ir
