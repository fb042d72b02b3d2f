#include <cmath>
#include <nlohmann/json.hpp>

#include "ir/json.h"

#include "ir/effects.h"

namespace graft::ir {
namespace {

using nlohmann::json;

json value_json(const Graph& g, ValueId v) {
  const ValueType& t = g.type(v);
  return json{{"id", v}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}};
}

std::string hex(const std::vector<uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

json graph_json(const Graph& g);

json attr_json(const AttrValue& value) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return {{"int", x}};
        } else if constexpr (std::is_same_v<T, Ints>) {
          return {{"ints", x}};
        } else if constexpr (std::is_same_v<T, double>) {
          // JSON has no inf or nan; they travel as strings.
          if (std::isnan(x)) return {{"float", "nan"}};
          if (std::isinf(x)) return {{"float", x > 0 ? "inf" : "-inf"}};
          return {{"float", x}};
        } else if constexpr (std::is_same_v<T, DType>) {
          return {{"dtype", dtype_name(x)}};
        } else if constexpr (std::is_same_v<T, std::string>) {
          return {{"string", x}};
        } else if constexpr (std::is_same_v<T, Graphs>) {
          json arr = json::array();
          for (const GraphPtr& g : x) arr.push_back(graph_json(*g));
          return {{"graphs", arr}};
        } else if constexpr (std::is_same_v<T, HostCallbackPtr>) {
          // The function itself cannot travel: its name and result types do.
          json results = json::array();
          for (const ValueType& t : x->results) results.push_back({{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}});
          return {{"callback", {{"name", x->name}, {"results", results}}}};
        } else {
          return {{"literal",
                   {{"dtype", dtype_name(x->type.dtype)}, {"shape", x->type.shape}, {"data", hex(x->bytes)}}}};
        }
      },
      value);
}

json node_json(const Graph& g, const Node& n) {
  json j;
  j["id"] = n.id;
  j["op"] = std::string(op_name(n.op));
  j["inputs"] = n.inputs;
  json outs = json::array();
  for (ValueId v : n.outputs) outs.push_back(value_json(g, v));
  j["outputs"] = outs;
  json attrs = json::object();
  for (const auto& [name, value] : n.attrs.items()) attrs[name] = attr_json(value);
  j["attrs"] = attrs;
  if (!n.scope.empty()) j["scope"] = n.scope;
  // A reader that does not know the op can still tell it must not drop, merge or reorder the node.
  if (has_effects(n)) j["effects"] = true;
  if (!n.loc.empty()) j["loc"] = {{"file", std::string(n.loc.file)}, {"line", n.loc.line}, {"function", std::string(n.loc.function)}};
  return j;
}

json graph_json(const Graph& g) {
  json inputs = json::array();
  for (ValueId v : g.inputs()) inputs.push_back(value_json(g, v));
  json nodes = json::array();
  for (const Node& n : g.nodes()) nodes.push_back(node_json(g, n));
  json doc = {{"inputs", inputs}, {"nodes", nodes}, {"outputs", g.outputs()}};
  if (!g.input_names().empty()) doc["input_names"] = g.input_names();
  if (!g.output_names().empty()) doc["output_names"] = g.output_names();
  return doc;
}

}  // namespace

std::string to_json(const Graph& graph, int indent) {
  json doc = {{"format", "graft.graph"}, {"version", kJsonVersion}, {"graph", graph_json(graph)}};
  if (const auto& sym = graph.symbolic()) {  // version 6: a polymorphic graph's dimensions
    json values = json::object();
    for (const auto& [id, dims] : sym->values) {
      json d = json::array();
      for (const DimExpr& e : dims) d.push_back(e.str(sym->symbols));
      values[std::to_string(id)] = d;
    }
    doc["graph"]["symbolic"] = {{"symbols", sym->symbols}, {"constraints", sym->constraints}, {"values", values}};
  }
  // Replace invalid UTF-8 in user strings (file names, scopes) instead of throwing.
  return doc.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string attrs_to_json(const Attrs& attrs) {
  json j = json::object();
  for (const auto& [name, value] : attrs.items()) j[name] = attr_json(value);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace graft::ir
