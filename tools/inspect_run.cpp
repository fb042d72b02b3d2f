// graft-inspect run: evaluates a graph on inputs read from .npy files, given
// by name (NAME=FILE, NAME as the text view lists inputs, or %ID) or in order.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "inspect.h"
#include "ir/graph.h"

namespace graft::inspect {
namespace {

// "%7" (appended, not "%" + std::string: GCC 12 warns falsely on that, -Wrestrict).
std::string value_name(ir::ValueId v) {
  std::string s = "%";
  s += std::to_string(v);
  return s;
}

std::string type_text(DType dtype, const Shape& shape) {
  std::string s(dtype_name(dtype));
  s += '[';
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k) s += ',';
    s += std::to_string(shape[k]);
  }
  s += ']';
  return s;
}

// "input 2 (arg0['w'], %2)": how an error names an input.
std::string input_label(const ir::Graph& g, size_t i) {
  std::string s = "input " + std::to_string(i) + " (";
  if (!g.input_names().empty()) s += g.input_names()[i] + ", ";
  return s + value_name(g.inputs()[i]) + ")";
}

// The files for each input, in the graph's order.
std::vector<std::string> files_by_input(const ir::Graph& g, const std::vector<std::string>& operands) {
  const size_t n = g.inputs().size();
  size_t named = 0;
  for (const std::string& op : operands) named += op.find('=') != std::string::npos;
  if (named == 0) {
    if (operands.size() != n)
      throw Error("run: the graph has " + std::to_string(n) + " inputs, " + std::to_string(operands.size()) +
                  " files were given (give one .npy per input in order, or NAME=FILE)");
    return operands;
  }
  if (named != operands.size()) throw Error("run: give every input as NAME=FILE, or none (all in order)");
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) {
    index[value_name(g.inputs()[i])] = i;
    if (!g.input_names().empty()) index[g.input_names()[i]] = i;
  }
  std::vector<std::string> files(n);
  for (const std::string& op : operands) {
    const size_t eq = op.find('=');
    const std::string name = op.substr(0, eq);
    const auto it = index.find(name);
    if (it == index.end()) {
      std::string known;
      for (size_t i = 0; i < n && i < 8; ++i) {
        if (i) known += ", ";
        known += g.input_names().empty() ? value_name(g.inputs()[i]) : g.input_names()[i];
      }
      throw Error("run: the graph has no input named '" + name + "' (its inputs: " + known + (n > 8 ? ", ..." : "") +
                  "; `graft-inspect text` lists them)");
    }
    if (!files[it->second].empty()) throw Error("run: " + input_label(g, it->second) + " is given twice");
    files[it->second] = op.substr(eq + 1);
  }
  for (size_t i = 0; i < n; ++i)
    if (files[i].empty()) throw Error("run: no file for " + input_label(g, i));
  return files;
}

}  // namespace

int run_graph(const Graph& graph, const std::vector<std::string>& operands, const std::string& dir, bool cast,
              std::ostream& out) {
  const ir::Graph& g = graph.ir();
  const std::vector<std::string> files = files_by_input(g, operands);
  std::vector<Array> xs;
  for (size_t i = 0; i < files.size(); ++i) {
    Array x;
    try {
      x = load_npy(files[i]);
    } catch (const Error& e) {
      throw Error("run: " + input_label(g, i) + ": " + e.what());
    }
    const ir::ValueType& want = g.type(g.inputs()[i]);
    if (x.shape() != want.shape)
      throw ShapeError("run: " + input_label(g, i) + " is " + type_text(want.dtype, want.shape) + " but " + files[i] +
                       " holds " + type_text(x.dtype(), x.shape()));
    if (x.dtype() != want.dtype) {
      if (!cast)
        throw DTypeError("run: " + input_label(g, i) + " is " + type_text(want.dtype, want.shape) + " but " + files[i] +
                         " holds " + type_text(x.dtype(), x.shape()) + " (--cast converts it)");
      x = astype(x, want.dtype);
    }
    xs.push_back(x);
  }
  const std::vector<Array> outs = evaluate(graph, xs);
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / ("out_" + std::to_string(i) + ".npy")).string();
    save_npy(path, outs[i]);
    out << path << ": ";
    if (!g.output_names().empty()) out << g.output_names()[i] << " ";
    out << type_text(outs[i].dtype(), outs[i].shape()) << "\n";
  }
  return 0;
}

}  // namespace graft::inspect
