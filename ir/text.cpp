// Example:
//   { lambda %0:f32[3] %1:f32[3] .
//       %2:f32[3] = mul %0 %1
//       %3:f32[] = reduce_sum[axes=(0)] %2          # loss
//     in (%3) }
// Values of a subgraph carry its path: in the body of %7 = scan, %7/body/0.
#include "ir/text.h"
#include "ir/symbolic_graph.h"

#include <charconv>

#include "ir/literal.h"

namespace graft::ir {
namespace {

// A value's name: its id, prefixed inside a subgraph by the path of the node
// and attribute holding it ("%7/body/2"), so no two values print alike.
// (Appends rather than "literal" + std::string: GCC 12 warns falsely on that, -Wrestrict.)
std::string value_name(const std::string& prefix, ValueId v) {
  std::string s = "%";
  s += prefix;
  s += std::to_string(v);
  return s;
}

std::string value_decl(const Graph& g, ValueId v, const std::string& prefix) {
  std::string s = value_name(prefix, v);
  s += ':';
  if (g.symbolic())  // a polymorphic graph: its dimensions as expressions ("f32[b,784]")
    if (auto it = g.symbolic()->values.find(v); it != g.symbolic()->values.end()) {
      s += symbolic_type_str(g.type(v).dtype, it->second, g.symbolic()->symbols);
      return s;
    }
  s += type_str(g.type(v));
  return s;
}

// with_lines: the user's source line after each node's scope.
void print_graph(const Graph& g, int indent, const std::string& prefix, bool with_lines, std::string& out);

// "model.cpp:12": the file's name without its directories.
std::string short_loc(const SourceLoc& loc) {
  const std::string where = loc_str(loc);
  const size_t slash = where.rfind('/');
  return slash == std::string::npos ? where : where.substr(slash + 1);
}

}  // namespace

std::string attr_text(const AttrValue& value, int64_t literal_limit) {
  return std::visit(
      [literal_limit](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, Ints>) {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) s += ',';
            s += std::to_string(x[i]);
          }
          return s + ")";
        } else if constexpr (std::is_same_v<T, double>) {
          return float_str(x);
        } else if constexpr (std::is_same_v<T, DType>) {
          return dtype_name(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          std::string q = "'";
          q += x;
          q += '\'';
          return q;
        } else if constexpr (std::is_same_v<T, LiteralPtr>) {
          return x ? literal_str(*x, literal_limit) : "null";
        } else if constexpr (std::is_same_v<T, HostCallbackPtr>) {
          return x ? "<" + x->name + ">" : "null";
        } else {
          return "";  // graphs are printed below the node
        }
      },
      value);
}

namespace {

void print_node(const Graph& g, const Node& n, int indent, const std::string& prefix, bool with_lines,
                std::string& out) {
  std::string line(indent, ' ');
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (i) line += ' ';
    line += value_decl(g, n.outputs[i], prefix);
  }
  line += " = ";
  line += op_name(n.op);
  std::string attrs;
  for (const auto& [name, value] : n.attrs.items()) {
    if (attr_kind(value) == AttrKind::graphs) continue;
    if (!attrs.empty()) attrs += ", ";
    attrs += name;
    attrs += '=';
    attrs += attr_text(value);
  }
  if (!attrs.empty()) {
    line += '[';
    line += attrs;
    line += ']';
  }
  for (ValueId v : n.inputs) {
    line += ' ';
    line += value_name(prefix, v);
  }
  const std::string where = with_lines && !n.loc.empty() ? short_loc(n.loc) : std::string();
  if (!n.scope.empty() || !where.empty()) {
    if (line.size() < 60) line.resize(60, ' ');
    line += "  # ";
    line += n.scope;
    if (!where.empty()) {
      if (!n.scope.empty()) line += "  ";
      line += where;
    }
  }
  out += line + "\n";
  for (const auto& [name, value] : n.attrs.items()) {
    const Graphs* gs = std::get_if<Graphs>(&value);
    if (!gs) continue;
    for (size_t i = 0; i < gs->size(); ++i) {
      std::string which = name;
      if (gs->size() > 1) {
        which += '[';
        which += std::to_string(i);
        which += ']';
      }
      out.append(indent + 2, ' ');
      out += which;
      out += " = ";
      if ((*gs)[i])
        print_graph(*(*gs)[i], indent + 4, subgraph_prefix(prefix, n, which), with_lines, out);
      else
        out += "null\n";
    }
  }
}

void print_graph(const Graph& g, int indent, const std::string& prefix, bool with_lines, std::string& out) {
  // Named inputs and outputs (a top-level graph from make_graph) one per line with their names.
  const bool named = with_lines && !g.input_names().empty();
  out += "{ lambda";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    out += named ? "\n" + std::string(indent + 4, ' ') : " ";
    out += value_decl(g, g.inputs()[i], prefix);
    if (named) out += "  # " + g.input_names()[i];
  }
  out += named ? "\n" + std::string(indent + 2, ' ') + ".\n" : " .\n";
  for (const Node& n : g.nodes()) print_node(g, n, indent + 2, prefix, with_lines, out);
  out += std::string(indent, ' ') + "  in (";
  const bool named_outputs = with_lines && !g.output_names().empty();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    if (named_outputs) {
      out += "\n" + std::string(indent + 4, ' ') + value_name(prefix, g.outputs()[i]) + "  # " + g.output_names()[i];
    } else {
      if (i) out += ", ";
      out += value_name(prefix, g.outputs()[i]);
    }
  }
  out += named_outputs ? "\n" + std::string(indent + 2, ' ') + ") }\n" : ") }\n";
}

}  // namespace

std::string to_text(const Graph& graph) {
  std::string out;
  print_graph(graph, 0, "", false, out);
  return out;
}

std::string to_text_with_names(const Graph& graph) {
  std::string out;
  print_graph(graph, 0, "", true, out);
  return out;
}

std::string subgraph_prefix(const std::string& prefix, const Node& n, const std::string& which) {
  std::string s = prefix;
  s += n.outputs.empty() ? "node" + std::to_string(n.id) : std::to_string(n.outputs[0]);
  s += '/';
  s += which;
  s += '/';
  return s;
}

std::string node_text(const Graph& graph, const Node& node) {
  std::string out;
  print_node(graph, node, 0, "", false, out);
  return out;
}

}  // namespace graft::ir
