// The JSON reader. Untrusted input: every field is checked for presence and
// type before use, every id and dimension for range, and nothing is sized
// from a number in the input (literal bytes come from the hex text's length).
#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "graft/errors.h"
#include "ir/attr_schema.h"
#include "ir/passes.h"
#include "ir/dtype.h"
#include "ir/json.h"

#include "ir/effects.h"

namespace graft::ir {
namespace {

using nlohmann::json;

constexpr int kMaxGraphDepth = 64;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw GraphFormatError("graph JSON: " + what + " at " + path);
}

const char* type_name(const json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "float";
  return j.type_name();
}

void expect_object(const json& j, const std::string& path, std::initializer_list<const char*> allowed) {
  if (!j.is_object()) fail(path, std::string("expected an object, found ") + type_name(j));
  for (const auto& [key, _] : j.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) fail(path, "unknown field '" + key + "'");
  }
}

const json& field(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(path, std::string("missing field '") + key + "'");
  return *it;
}

const json& array_field(const json& obj, const char* key, const std::string& path) {
  const json& j = field(obj, key, path);
  if (!j.is_array()) fail(path + "." + key, std::string("expected an array, found ") + type_name(j));
  return j;
}

int64_t get_int(const json& j, const std::string& path, int64_t lo = std::numeric_limits<int64_t>::min(),
                int64_t hi = std::numeric_limits<int64_t>::max()) {
  if (!j.is_number_integer()) fail(path, std::string("expected an integer, found ") + type_name(j));
  int64_t v;
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(path, "integer out of range");
    v = static_cast<int64_t>(u);
  } else {
    v = j.get<int64_t>();
  }
  if (v < lo || v > hi) fail(path, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

const std::string& get_string(const json& j, const std::string& path) {
  if (!j.is_string()) fail(path, std::string("expected a string, found ") + type_name(j));
  return j.get_ref<const std::string&>();
}

DType get_dtype(const json& j, const std::string& path) {
  auto d = dtype_from_name(get_string(j, path));
  if (!d) fail(path, "unknown dtype '" + get_string(j, path) + "'");
  return *d;
}

Ints get_ints(const json& j, const std::string& path) {
  if (!j.is_array()) fail(path, std::string("expected an array of integers, found ") + type_name(j));
  Ints out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) out.push_back(get_int(j[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

Shape get_shape(const json& j, const std::string& path) {
  if (!j.is_array()) fail(path, std::string("expected a shape (array of integers), found ") + type_name(j));
  if (j.size() > static_cast<size_t>(kMaxRank)) fail(path, "rank " + std::to_string(j.size()) + " exceeds " + std::to_string(kMaxRank));
  Shape s;
  for (size_t i = 0; i < j.size(); ++i) s.push_back(get_int(j[i], path + "[" + std::to_string(i) + "]", 0, kMaxDim));
  if (checked_num_elements(s) < 0) fail(path, "shape " + shape_str(s) + " has too many elements");
  return s;
}

ValueType get_type(const json& j, const std::string& path) {
  return ValueType{get_dtype(field(j, "dtype", path), path + ".dtype"), get_shape(field(j, "shape", path), path + ".shape")};
}

std::vector<uint8_t> get_hex(const std::string& s, const std::string& path) {
  if (s.size() % 2) fail(path, "hex data has an odd number of digits");
  auto digit = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    fail(path, std::string("invalid hex digit '") + c + "'");
  };
  std::vector<uint8_t> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(digit(s[2 * i]) * 16 + digit(s[2 * i + 1]));
  return out;
}

class Reader {
 public:
  GraphPtr graph(const json& j, const std::string& path, int depth);
  // Version 6: a polymorphic graph's symbolic dimensions, checked against g's values.
  std::shared_ptr<const SymbolicDims> symbolic(const json& j, const std::string& path, const Graph& g);
  AttrValue attr(const json& j, const std::string& path, int depth);

 private:
  ValueId define(Graph& g, const json& j, const std::string& path, ValueId bound);
};

ValueId Reader::define(Graph& g, const json& j, const std::string& path, ValueId bound) {
  expect_object(j, path, {"id", "dtype", "shape"});
  ValueId id = static_cast<ValueId>(get_int(field(j, "id", path), path + ".id", 0, bound - 1));
  ValueType t = get_type(j, path);
  if (g.has_value(id)) fail(path + ".id", "duplicate value id %" + std::to_string(id));
  g.define_value(id, std::move(t));
  return id;
}

AttrValue Reader::attr(const json& j, const std::string& path, int depth) {
  if (!j.is_object() || j.size() != 1)
    fail(path,
         "an attribute must be an object with one field naming its kind (int, ints, float, dtype, string, graphs, "
         "literal, callback)");
  auto first = j.begin();  // (not items(): its proxy would dangle once the statement ends)
  const std::string kind = first.key();
  const json& v = first.value();
  std::string p = path + "." + kind;
  if (kind == "int") return get_int(v, p);
  if (kind == "ints") return get_ints(v, p);
  if (kind == "float") {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(p, "expected a number or \"nan\", \"inf\", \"-inf\"");
  }
  if (kind == "dtype") return get_dtype(v, p);
  if (kind == "string") return get_string(v, p);
  if (kind == "graphs") {
    if (!v.is_array()) fail(p, std::string("expected an array of graphs, found ") + type_name(v));
    Graphs gs;
    for (size_t i = 0; i < v.size(); ++i) gs.push_back(graph(v[i], p + "[" + std::to_string(i) + "]", depth + 1));
    return gs;
  }
  if (kind == "literal") {
    expect_object(v, p, {"dtype", "shape", "data"});
    ValueType t = get_type(v, p);
    const std::string& data = get_string(field(v, "data", p), p + ".data");
    uint64_t want = static_cast<uint64_t>(checked_num_elements(t.shape)) * dtype_size(t.dtype);
    if (data.size() / 2 != want || data.size() % 2)
      fail(p + ".data", "literal " + type_str(t) + " needs " + std::to_string(want) + " bytes (" +
                            std::to_string(2 * want) + " hex digits), found " + std::to_string(data.size()) + " digits");
    return std::make_shared<const Literal>(Literal{std::move(t), get_hex(data, p + ".data")});
  }
  if (kind == "callback") {
    // A function cannot be read back: the node keeps its name and types, and
    // running it is an UnsupportedError naming the function.
    expect_object(v, p, {"name", "results"});
    auto cb = std::make_shared<HostCallback>();
    cb->name = get_string(field(v, "name", p), p + ".name");
    const json& results = field(v, "results", p);
    if (!results.is_array())
      fail(p + ".results", std::string("expected an array of types, found ") + type_name(results));
    for (size_t i = 0; i < results.size(); ++i) {
      std::string rp = p + ".results[" + std::to_string(i) + "]";
      expect_object(results[i], rp, {"dtype", "shape"});
      cb->results.push_back(get_type(results[i], rp));
    }
    return HostCallbackPtr(std::move(cb));
  }
  fail(path, "unknown attribute kind '" + kind + "'");
}

std::shared_ptr<const SymbolicDims> Reader::symbolic(const json& j, const std::string& path, const Graph& g) {
  expect_object(j, path, {"symbols", "constraints", "values"});
  auto out = std::make_shared<SymbolicDims>();
  const json& symbols = array_field(j, "symbols", path);
  for (size_t i = 0; i < symbols.size(); ++i) {
    const std::string sp = path + ".symbols[" + std::to_string(i) + "]";
    std::string name = get_string(symbols[i], sp);
    std::vector<std::string> one;
    DimExpr e;
    try {
      e = parse_dim_expr(name, &one, "symbol");
    } catch (const ShapeError& err) {
      fail(sp, err.what());
    }
    if (one.size() != 1 || e != DimExpr::symbol(0)) fail(sp, "'" + name + "' is not a symbol's name");
    if (std::find(out->symbols.begin(), out->symbols.end(), name) != out->symbols.end()) fail(sp, "duplicate symbol");
    out->symbols.push_back(std::move(name));
  }
  if (out->symbols.size() > 32) fail(path + ".symbols", "more than 32 symbols");
  const json& constraints = array_field(j, "constraints", path);
  for (size_t i = 0; i < constraints.size(); ++i) {
    const std::string cp = path + ".constraints[" + std::to_string(i) + "]";
    std::string text = get_string(constraints[i], cp);
    std::vector<std::string> names = out->symbols;
    try {
      parse_dim_constraint(text, &names);
    } catch (const ShapeError& err) {
      fail(cp, err.what());
    }
    if (names.size() != out->symbols.size()) fail(cp, "names a symbol that \"symbols\" does not list");
    out->constraints.push_back(std::move(text));
  }
  const json& values = field(j, "values", path);
  if (!values.is_object()) fail(path + ".values", std::string("expected an object, found ") + type_name(values));
  for (const auto& [key, dims] : values.items()) {
    const std::string vp = path + ".values." + key;
    int64_t id = -1;
    if (key.empty() || key.size() > 10 || key.find_first_not_of("0123456789") != std::string::npos ||
        (id = std::stoll(key)) > std::numeric_limits<ValueId>::max() || !g.has_value(static_cast<ValueId>(id)))
      fail(vp, "not the id of a value of the graph");
    if (!dims.is_array()) fail(vp, std::string("expected an array, found ") + type_name(dims));
    const ValueType& type = g.type(static_cast<ValueId>(id));
    if (dims.size() != type.shape.size())
      fail(vp, std::to_string(dims.size()) + " dimensions for a value of rank " + std::to_string(type.rank()));
    std::vector<DimExpr> exprs;
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string dp = vp + "[" + std::to_string(d) + "]";
      std::vector<std::string> names = out->symbols;
      try {
        exprs.push_back(parse_dim_expr(get_string(dims[d], dp), &names, "dimension"));
      } catch (const ShapeError& err) {
        fail(dp, err.what());
      }
      if (names.size() != out->symbols.size()) fail(dp, "names a symbol that \"symbols\" does not list");
    }
    out->values[static_cast<ValueId>(id)] = std::move(exprs);
  }
  return out;
}

GraphPtr Reader::graph(const json& j, const std::string& path, int depth) {
  if (depth > kMaxGraphDepth) fail(path, "subgraphs nested deeper than " + std::to_string(kMaxGraphDepth));
  expect_object(j, path, {"inputs", "nodes", "outputs", "input_names", "output_names", "symbolic"});
  if (depth > 0 && j.contains("symbolic")) fail(path + ".symbolic", "only the top-level graph has symbolic dimensions");
  const json& inputs = array_field(j, "inputs", path);
  const json& nodes = array_field(j, "nodes", path);
  const json& outputs = array_field(j, "outputs", path);

  // Ids may leave gaps, but not absurd ones: the value table is sized by the
  // largest id, so bound it by what the document actually declares.
  size_t declared = inputs.size();
  for (const json& n : nodes)
    if (n.is_object())
      if (auto it = n.find("outputs"); it != n.end() && it->is_array()) declared += it->size();
  ValueId bound = static_cast<ValueId>(std::min<size_t>(16 * declared + 1024, std::numeric_limits<ValueId>::max()));

  Graph g;
  for (size_t i = 0; i < inputs.size(); ++i)
    g.add_input_id(define(g, inputs[i], path + ".inputs[" + std::to_string(i) + "]", bound));

  std::unordered_set<int64_t> node_ids;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string np = path + ".nodes[" + std::to_string(i) + "]";
    const json& jn = nodes[i];
    expect_object(jn, np, {"id", "op", "inputs", "outputs", "attrs", "scope", "loc", "effects"});
    Node n;
    n.id = static_cast<int32_t>(get_int(field(jn, "id", np), np + ".id", 0, std::numeric_limits<int32_t>::max() - 1));
    if (!node_ids.insert(n.id).second) fail(np + ".id", "duplicate node id " + std::to_string(n.id));
    const std::string& op_text = get_string(field(jn, "op", np), np + ".op");
    auto op = op_from_name(op_text);
    if (!op) fail(np + ".op", "unknown op '" + op_text + "'");
    n.op = *op;
    const json& ins = array_field(jn, "inputs", np);
    for (size_t k = 0; k < ins.size(); ++k)
      n.inputs.push_back(static_cast<ValueId>(get_int(ins[k], np + ".inputs[" + std::to_string(k) + "]", 0, bound - 1)));
    const json& outs = array_field(jn, "outputs", np);
    for (size_t k = 0; k < outs.size(); ++k)
      n.outputs.push_back(define(g, outs[k], np + ".outputs[" + std::to_string(k) + "]", bound));
    if (jn.contains("attrs")) {
      const json& attrs = jn["attrs"];
      if (!attrs.is_object()) fail(np + ".attrs", std::string("expected an object, found ") + type_name(attrs));
      for (const auto& [name, value] : attrs.items()) n.attrs.set(name, attr(value, np + ".attrs." + name, depth));
    }
    if (std::string why = attr_schema_violation(n.op, n.attrs); !why.empty()) fail(np + ".attrs", op_text + ": " + why);
    if (jn.contains("scope")) n.scope = get_string(jn["scope"], np + ".scope");
    if (jn.contains("loc")) {
      const json& loc = jn["loc"];
      std::string lp = np + ".loc";
      expect_object(loc, lp, {"file", "line", "function"});
      const std::string file = get_string(field(loc, "file", lp), lp + ".file");
      const int line = static_cast<int>(get_int(field(loc, "line", lp), lp + ".line", 0, std::numeric_limits<int>::max()));
      n.loc = SourceLoc(file, get_string(field(loc, "function", lp), lp + ".function"), line);
    }
    // "effects" restates what the op and its subgraphs say; a file that disagrees is malformed.
    const bool effects = jn.contains("effects") && jn["effects"].is_boolean() && jn["effects"].get<bool>();
    if (jn.contains("effects") && !jn["effects"].is_boolean()) fail(np + ".effects", "expected true or false");
    if (effects != has_effects(n))
      fail(np + ".effects", op_text + (has_effects(n) ? " has effects but the node does not say so"
                                                      : " has no effects but the node says it has"));
    g.add_node(std::move(n));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::string op = path + ".outputs[" + std::to_string(k) + "]";
    ValueId v = static_cast<ValueId>(get_int(outputs[k], op, 0, bound - 1));
    if (!g.has_value(v)) fail(op, "output %" + std::to_string(v) + " is not defined");
  }
  {
    Ints outs = get_ints(outputs, path + ".outputs");
    g.set_outputs(std::vector<ValueId>(outs.begin(), outs.end()));
  }
  // Names (version 2): optional, one string per input (output).
  auto names = [&](const char* key, size_t count) {
    std::vector<std::string> out;
    if (!j.contains(key)) return out;
    const std::string np = path + "." + key;
    const json& arr = array_field(j, key, path);
    if (arr.size() != count)
      fail(np, std::to_string(arr.size()) + " names for " + std::to_string(count) + (key[0] == 'i' ? " inputs" : " outputs"));
    for (size_t i = 0; i < arr.size(); ++i) out.push_back(get_string(arr[i], np + "[" + std::to_string(i) + "]"));
    return out;
  };
  {
    std::vector<std::string> in_names = names("input_names", g.inputs().size());
    std::vector<std::string> out_names = names("output_names", g.outputs().size());
    g.set_names(std::move(in_names), std::move(out_names));
  }
  if (j.contains("symbolic")) g.set_symbolic(symbolic(j["symbolic"], path + ".symbolic", g));

  // Uses: every operand must be defined, and defined earlier in the list.
  std::vector<int> producer(g.value_id_bound(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (ValueId v : g.nodes()[i].outputs) producer[v] = static_cast<int>(i);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      ValueId v = n.inputs[k];
      std::string ip = path + ".nodes[" + std::to_string(i) + "].inputs[" + std::to_string(k) + "]";
      if (!g.has_value(v)) fail(ip, "node " + std::to_string(n.id) + " uses undefined value %" + std::to_string(v));
      if (producer[v] >= static_cast<int>(i)) {
        Graph sorted = g;
        topo_sort(sorted);  // throws, naming the cycle, when there is one
        fail(ip, "node " + std::to_string(n.id) + " uses value %" + std::to_string(v) +
                     " before its definition (nodes must be listed in topological order)");
      }
    }
  }

  try {
    verify(g);
  } catch (const GraphFormatError& e) {
    fail(path, e.what());
  } catch (const Error& e) {
    fail(path, e.what());
  }
  return std::make_shared<const Graph>(std::move(g));
}

}  // namespace

Attrs attrs_from_json(const std::string& object_text) {
  json doc;
  try {
    doc = json::parse(object_text);
  } catch (const json::exception& e) {
    throw GraphFormatError(std::string("attributes JSON: not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) fail("$", std::string("expected an object of attributes, found ") + type_name(doc));
  Attrs attrs;
  Reader reader;
  for (auto it = doc.begin(); it != doc.end(); ++it) attrs.set(it.key(), reader.attr(it.value(), "$." + it.key(), 0));
  return attrs;
}

namespace {

// Brings a document of an older version to the newest, one step at a time,
// so the reader knows one schema. The steps so far:
//   1 -> 2: graphs gained optional "input_names"/"output_names"; a version 1
//           graph has none, so there is nothing to rewrite, but such fields in
//           a version 1 document are refused as the version 1 reader did.
//   2 -> 3: triangular_solve gained "conjugate_a" (complex matrices); a
//           version 2 node, which has none, gets 0, its meaning then.
//   3 -> 4: nothing to change (version 4 added callbacks and "effects").
//   4 -> 5: remat gained "policy" (checkpoint policies); a version 4 node,
//           which has none, gets "nothing_saveable", its meaning then.
//           while gained "checkpoints" (reverse mode's memory bound): 128.
//   5 -> 6: nothing to change (version 6 added the optional "symbolic" of a
//           polymorphic graph; an older document with one is refused).
//           (Version 5 also added the op checkpoint_name.)

// Gives every node of `op` in the document (subgraphs included) attribute
// `name` with `value` where it has none.
void add_missing_attr(json& doc, const char* op, const char* name, const json& value) {
  std::function<void(json&, int)> visit = [&](json& g, int depth) {
    if (!g.is_object() || depth > kMaxGraphDepth) return;  // the reader refuses deeper nesting itself
    auto nodes = g.find("nodes");
    if (nodes == g.end() || !nodes->is_array()) return;
    for (json& n : *nodes) {
      if (!n.is_object()) continue;
      auto attrs = n.find("attrs");
      if (attrs == n.end() || !attrs->is_object()) continue;
      if (auto o = n.find("op"); o != n.end() && *o == op && !attrs->contains(name)) (*attrs)[name] = value;
      for (auto a = attrs->begin(); a != attrs->end(); ++a)
        if (a->is_object())
          if (auto gs = a->find("graphs"); gs != a->end() && gs->is_array())
            for (json& sub : *gs) visit(sub, depth + 1);
    }
  };
  if (auto g = doc.find("graph"); g != doc.end()) visit(*g, 0);
}

void upgrade(json& doc, int64_t version) {
  if (version < 6)
    if (auto g = doc.find("graph"); g != doc.end() && g->is_object() && g->contains("symbolic"))
      fail("$.graph.symbolic", "unknown field (symbolic dimensions came in version 6)");
  if (version == 1) {
    std::function<void(const json&, const std::string&, int)> refuse_names = [&](const json& g, const std::string& path,
                                                                                int depth) {
      if (!g.is_object() || depth > kMaxGraphDepth) return;  // the reader refuses deeper nesting itself
      for (const char* key : {"input_names", "output_names"})
        if (g.contains(key)) fail(path + "." + key, "unknown field (version 1 has no names; they came in version 2)");
      if (auto nodes = g.find("nodes"); nodes != g.end() && nodes->is_array())
        for (size_t i = 0; i < nodes->size(); ++i)
          if (const json& n = (*nodes)[i]; n.is_object())
            if (auto attrs = n.find("attrs"); attrs != n.end() && attrs->is_object())
              for (auto a = attrs->begin(); a != attrs->end(); ++a)
                if (a->is_object())
                  if (auto gs = a->find("graphs"); gs != a->end() && gs->is_array())
                    for (size_t k = 0; k < gs->size(); ++k)
                      refuse_names((*gs)[k],
                                   path + ".nodes[" + std::to_string(i) + "].attrs." + a.key() + ".graphs[" +
                                       std::to_string(k) + "]",
                                   depth + 1);
    };
    if (auto g = doc.find("graph"); g != doc.end()) refuse_names(*g, "$.graph", 0);
    version = 2;
  }
  if (version == 2) {
    add_missing_attr(doc, "triangular_solve", "conjugate_a", {{"int", 0}});
    version = 3;
  }
  // 3 -> 4: host callbacks came (the attribute kind "callback", the node
  // field "effects"); a version 3 document has neither, and needs no change.
  if (version == 3) version = 4;
  if (version == 4) {
    add_missing_attr(doc, "remat", "policy", {{"string", "nothing_saveable"}});
    add_missing_attr(doc, "while", "checkpoints", {{"int", 128}});
    version = 5;
  }
  if (version == 5) version = 6;
  doc["version"] = version;
}

}  // namespace

GraphPtr from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw GraphFormatError(std::string("graph JSON: not valid JSON: ") + e.what());
  }
  expect_object(doc, "$", {"format", "version", "graph"});
  if (get_string(field(doc, "format", "$"), "$.format") != "graft.graph")
    fail("$.format", "format must be \"graft.graph\"");
  int64_t version = get_int(field(doc, "version", "$"), "$.version");
  if (version < kOldestJsonVersion || version > kJsonVersion)
    fail("$.version", "unsupported version " + std::to_string(version) + " (this graft reads versions " +
                          std::to_string(kOldestJsonVersion) + " to " + std::to_string(kJsonVersion) + ")");
  upgrade(doc, version);
  try {
    return Reader().graph(field(doc, "graph", "$"), "$.graph", 0);
  } catch (const GraphFormatError&) {
    throw;
  } catch (const Error& e) {
    throw GraphFormatError(std::string("graph JSON: ") + e.what());
  } catch (const json::exception& e) {  // a check this reader missed; still no crash
    throw GraphFormatError(std::string("graph JSON: ") + e.what());
  }
}

}  // namespace graft::ir
