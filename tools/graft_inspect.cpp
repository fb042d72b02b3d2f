// graft-inspect: reads graphs exported as JSON (Graph::to_json) and verifies,
// prints, draws, measures, runs or compares them. `graft-inspect --help`
// lists the subcommands.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "graft/graft.h"
#include "inspect.h"
#include "ir/graph.h"

namespace {

constexpr const char* kHelp = R"(usage: graft-inspect COMMAND GRAPH.json [options]

Reads a graph exported by graft (Graph::to_json, any schema version this
graft knows) and:

  verify GRAPH                  checks it (schema, types, every op's shape rule)
  text GRAPH                    prints it as text, one line per node
  json GRAPH                    prints it as normalised JSON (the current schema)
  dot GRAPH [--collapse SCOPE]  prints it as Graphviz DOT; each --collapse (a
                                named scope such as mlp/layer1, or backward)
                                draws that scope as one box
  svg GRAPH [-o FILE] [--collapse SCOPE]
                                draws it with Graphviz's dot (package graphviz)
  png GRAPH -o FILE [--collapse SCOPE]
                                the same, as PNG
  stats GRAPH                   op histogram; per jit backend: fused kernels,
                                flops, bytes accessed, the planned memory peak
  run GRAPH IN.npy... -o DIR    evaluates it on the inputs (one .npy per graph
                                input, in order) and writes DIR/out_0.npy, ...
  diff A B                      nodes added, removed and changed from A to B
                                (matched by what they compute, not by ids);
                                exit status 1 if they differ

graft-inspect GRAPH.json [--text | --dot | --json | --verify] also works.
Exit status: 0 done, 1 the graph or an input is bad (the message says why),
2 a usage error.
)";

int usage(const std::string& why) {
  std::cerr << "graft-inspect: " << why << "\n(graft-inspect --help lists the commands)\n";
  return 2;
}

graft::Graph read_graph(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw graft::Error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return graft::Graph::from_json(text.str());
  } catch (const graft::Error& e) {
    throw graft::Error(path + ": " + e.what());
  }
}

// Pipes DOT through Graphviz's dot into `file` ("" = stdout).
int draw(const graft::Graph& g, const std::string& format, const std::string& file,
         const std::vector<std::string>& collapse) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    std::cerr << "graft-inspect: Graphviz's dot is not installed (apt install graphviz)\n";
    return 1;
  }
  const std::filesystem::path dot_file =
      std::filesystem::temp_directory_path() / ("graft-inspect-" + std::to_string(getpid()) + ".dot");
  std::ofstream(dot_file) << g.to_dot(collapse);
  std::string cmd = "dot -T" + format + " '" + dot_file.string() + "'";
  if (!file.empty()) cmd += " -o '" + file + "'";
  const int status = std::system(cmd.c_str());
  std::filesystem::remove(dot_file);
  if (status != 0) {
    std::cerr << "graft-inspect: dot failed (status " << status << ")\n";
    return 1;
  }
  return 0;
}

int run(const graft::Graph& g, const std::vector<std::string>& inputs, const std::string& dir) {
  std::vector<graft::Array> xs;
  for (const std::string& path : inputs) xs.push_back(graft::load_npy(path));
  const std::vector<graft::Array> outs = graft::evaluate(g, xs);
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / ("out_" + std::to_string(i) + ".npy")).string();
    graft::save_npy(path, outs[i]);
    std::cout << path << ": ";
    if (!g.ir().output_names().empty()) std::cout << g.ir().output_names()[i] << " ";
    std::cout << graft::dtype_name(outs[i].dtype()) << "[";
    for (size_t k = 0; k < outs[i].shape().size(); ++k) std::cout << (k ? "," : "") << outs[i].shape()[k];
    std::cout << "]\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no command");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kHelp;
    return 0;
  }
  // The first form: graft-inspect GRAPH.json [--text | --dot | --json | --verify].
  if (args[0].size() > 2 && args[0].substr(0, 2) != "--" && args[0].find('.') != std::string::npos) {
    if (args.size() > 2) return usage("too many arguments");
    const std::string mode = args.size() == 2 ? args[1] : "--text";
    if (mode != "--text" && mode != "--dot" && mode != "--json" && mode != "--verify")
      return usage("unknown option '" + mode + "'");
    args = {mode.substr(2), args[0]};
  }
  const std::string command = args[0];
  // Options: -o VALUE and --collapse SCOPE anywhere after the command; the rest are operands.
  std::string output;
  std::vector<std::string> operands, collapse;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--collapse") {
      if (i + 1 >= args.size()) return usage(args[i] + " needs a value");
      (args[i] == "-o" ? output : collapse.emplace_back()) = args[i + 1];
      ++i;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return usage("unknown option '" + args[i] + "'");
    } else {
      operands.push_back(args[i]);
    }
  }
  auto want = [&](size_t n) { return operands.size() == n; };
  try {
    if (command == "verify" && want(1)) {
      const graft::Graph g = read_graph(operands[0]);
      std::cout << "ok: " << g.num_nodes() << " nodes, " << g.ir().inputs().size() << " inputs, "
                << g.ir().outputs().size() << " outputs\n";
    } else if (command == "text" && want(1)) {
      std::cout << read_graph(operands[0]).to_text();
    } else if (command == "json" && want(1)) {
      std::cout << read_graph(operands[0]).to_json() << "\n";
    } else if (command == "dot" && want(1)) {
      std::cout << read_graph(operands[0]).to_dot(collapse);
    } else if ((command == "svg" || command == "png") && want(1)) {
      if (command == "png" && output.empty()) return usage("png needs -o FILE");
      return draw(read_graph(operands[0]), command, output, collapse);
    } else if (command == "stats" && want(1)) {
      graft::inspect::print_stats(read_graph(operands[0]), std::cout);
    } else if (command == "run" && !operands.empty()) {
      if (output.empty()) return usage("run needs -o DIR");
      return run(read_graph(operands[0]), std::vector<std::string>(operands.begin() + 1, operands.end()), output);
    } else if (command == "diff" && want(2)) {
      return graft::inspect::print_diff(read_graph(operands[0]), read_graph(operands[1]), std::cout) ? 1 : 0;
    } else if (command == "verify" || command == "text" || command == "json" || command == "dot" ||
               command == "svg" || command == "png" || command == "stats" || command == "run" || command == "diff") {
      return usage(command + ": wrong number of operands");
    } else {
      return usage("unknown command '" + command + "'");
    }
  } catch (const graft::Error& e) {
    std::cerr << "graft-inspect: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
