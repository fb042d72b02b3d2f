// graft-inspect: reads graphs exported as JSON (Graph::to_json) and verifies,
// prints, draws, measures, runs or compares them. `graft-inspect --help`
// lists the subcommands.
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "inspect.h"
#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/text.h"

namespace {

constexpr const char* kHelp = R"(usage: graft-inspect COMMAND GRAPH.json [options]

Reads a graph exported by graft (Graph::to_json, any schema version this
graft knows) and:

  verify GRAPH                  checks it (schema, types, every op's shape rule)
  text GRAPH                    prints it as text, one line per node, with the
                                inputs' and outputs' names and each node's
                                scope and source line
  json GRAPH                    prints it as normalised JSON (the current schema)
  scopes GRAPH                  lists its named scopes as a tree, with node counts
  dot GRAPH [--collapse GLOB] [--budget N] [--full]
                                prints it as Graphviz DOT. Each --collapse draws
                                the scopes its glob matches ('block*',
                                '*/attention', 'backward'; '*' stays within one
                                level) as one box each. Without --collapse, a
                                graph of more than N items (default 150) is
                                drawn with its deeper scopes collapsed, deepest
                                level that fits first (--budget 0: no limit).
                                Constants, broadcasts and reshapes fold into
                                their readers, inputs and outputs group by
                                pytree prefix and edges between boxes bundle;
                                --full draws every node as it is
  svg GRAPH [-o FILE] [dot's options] [--timeout S]
                                draws it with Graphviz's dot (package graphviz),
                                giving up after S seconds (default 60)
  png GRAPH -o FILE [dot's options] [--timeout S]
                                the same, as PNG
  html GRAPH -o FILE            one self-contained HTML page (opens offline in a
                                browser): scopes as boxes that expand on a
                                click, search, node details, a flops/bytes
                                overlay
  stats GRAPH [--by-scope]      op histogram; flops and bytes as traced (loop
                                bodies as often as they run; forward and
                                backward apart; --by-scope: per scope); per
                                jit backend: fused kernels, flops, bytes
                                accessed, the planned memory peak
  run GRAPH [NAME=]IN.npy... -o DIR [--cast]
                                evaluates it on the inputs (by name, as text
                                lists them, or %ID; or one .npy per input, in
                                order) and writes DIR/out_0.npy, ...; --cast
                                converts an input of another dtype
  diff A B                      what changed from A to B: inputs and outputs
                                matched by name, nodes by what they compute;
                                exit status 1 if they differ
  profile TRACE.json            where a traced run's time went (a trace from
                                graft::profiler::stop_trace): time, share,
                                GFLOP/s and GB/s per op kind, the kernels that
                                took most, and the annotations

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

// The DOT a picture is drawn from: the scopes asked for collapsed, or within
// the node budget; constants folded, inputs grouped, edges bundled unless full.
std::string dot_of(const graft::Graph& g, const std::vector<std::string>& patterns, int64_t budget, bool full) {
  graft::ir::DotOptions options;
  if (!patterns.empty()) {
    options.collapse = graft::inspect::match_scopes(g.ir(), patterns);
  } else if (budget > 0 && g.num_nodes() > budget) {
    const graft::inspect::BudgetChoice choice = graft::inspect::scopes_within_budget(g.ir(), budget);
    options.collapse = choice.collapse;
    if (!choice.collapse.empty())
      std::cerr << "graft-inspect: " << g.num_nodes() << " nodes are more than the budget of " << budget
                << " items: scopes below level " << choice.level << " are drawn collapsed (about " << choice.shown
                << " items; --collapse GLOB chooses, --budget N changes the budget, --budget 0 draws all)\n";
  }
  options.fold_constants = options.group_inputs = options.bundle_edges = !full;
  if (!full) options.max_edge_labels = 100;
  return graft::ir::to_dot(g.ir(), options);
}

// Pipes DOT through Graphviz's dot into `file` ("" = stdout), within `timeout` seconds.
int draw(const std::string& dot, const std::string& format, const std::string& file, int timeout, bool big) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    std::cerr << "graft-inspect: Graphviz's dot is not installed (apt install graphviz)\n";
    return 1;
  }
  const std::filesystem::path dot_file =
      std::filesystem::temp_directory_path() / ("graft-inspect-" + std::to_string(getpid()) + ".dot");
  std::ofstream(dot_file) << dot;
  const std::filesystem::path errors = dot_file.string() + ".err";
  // A big picture's x coordinates: a few network-simplex passes, not dot's
  // unbounded default (a 3,056-node graph collapsed to 118 boxes: 21 s -> 1.5 s).
  std::string cmd = "timeout --kill-after=5 " + std::to_string(timeout) + " dot" + (big ? " -Gnslimit=5" : "") + " -T" +
                    format + " '" + dot_file.string() + "' 2>'" + errors.string() + "'";
  if (!file.empty()) cmd += " -o '" + file + "'";
  const int status = std::system(cmd.c_str());
  std::filesystem::remove(dot_file);
  // Graphviz can print thousands of lines about one problem: the first few say what it is.
  std::string first_lines;
  {
    std::ifstream in(errors);
    std::string line;
    for (int i = 0; i < 5 && std::getline(in, line); ++i) first_lines += "  " + line + "\n";
  }
  std::filesystem::remove(errors);
  if (status == 0) return 0;
  if (!file.empty()) std::filesystem::remove(file);  // no half-written picture
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 124 || code == 137)
    std::cerr << "graft-inspect: Graphviz's dot did not finish within " << timeout
              << " s; draw less (--collapse GLOB, a smaller --budget) or allow more (--timeout S)\n";
  else
    std::cerr << "graft-inspect: Graphviz's dot failed (status " << status << ")" << (first_lines.empty() ? "" : ":")
              << "\n"
              << first_lines;
  return 1;
}

int64_t number_option(const std::string& option, const std::string& value) {
  try {
    size_t used = 0;
    const long long n = std::stoll(value, &used);
    if (used == value.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(option + " needs a number, not '" + value + "'");
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
  // Options anywhere after the command; the rest are operands.
  std::string output;
  std::vector<std::string> operands, collapse;
  int64_t budget = 150, timeout = 60;
  bool by_scope = false, full = false, cast = false;
  try {
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "-o" || a == "--collapse" || a == "--budget" || a == "--timeout") {
        if (i + 1 >= args.size()) return usage(a + " needs a value");
        const std::string& value = args[++i];
        if (a == "-o")
          output = value;
        else if (a == "--collapse")
          collapse.push_back(value);
        else
          (a == "--budget" ? budget : timeout) = number_option(a, value);
      } else if (a == "--by-scope" || a == "--full" || a == "--cast") {
        (a == "--by-scope" ? by_scope : a == "--full" ? full : cast) = true;
      } else if (a.size() > 1 && a[0] == '-') {
        return usage("unknown option '" + a + "'");
      } else {
        operands.push_back(a);
      }
    }
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  }
  if (timeout < 1) return usage("--timeout needs at least 1 second");
  auto want = [&](size_t n) { return operands.size() == n; };
  try {
    if (command == "verify" && want(1)) {
      const graft::Graph g = read_graph(operands[0]);
      std::cout << "ok: " << g.num_nodes() << " nodes, " << g.ir().inputs().size() << " inputs, "
                << g.ir().outputs().size() << " outputs\n";
    } else if (command == "text" && want(1)) {
      std::cout << graft::ir::to_text_with_names(read_graph(operands[0]).ir());
    } else if (command == "json" && want(1)) {
      std::cout << read_graph(operands[0]).to_json() << "\n";
    } else if (command == "scopes" && want(1)) {
      graft::inspect::print_scopes(read_graph(operands[0]), std::cout);
    } else if (command == "dot" && want(1)) {
      std::cout << dot_of(read_graph(operands[0]), collapse, budget, full);
    } else if ((command == "svg" || command == "png") && want(1)) {
      if (command == "png" && output.empty()) return usage("png needs -o FILE");
      const graft::Graph g = read_graph(operands[0]);
      return draw(dot_of(g, collapse, budget, full), command, output, static_cast<int>(timeout), g.num_nodes() > 150);
    } else if (command == "html" && want(1)) {
      if (output.empty()) return usage("html needs -o FILE");
      const graft::Graph g = read_graph(operands[0]);
      std::ofstream file(output, std::ios::binary);
      if (!file) throw graft::Error("cannot write " + output);
      graft::inspect::write_html(g, file);
      if (!file.flush()) throw graft::Error("cannot write " + output);
    } else if (command == "stats" && want(1)) {
      graft::inspect::print_stats(read_graph(operands[0]), std::cout, by_scope);
    } else if (command == "run" && !operands.empty()) {
      if (output.empty()) return usage("run needs -o DIR");
      return graft::inspect::run_graph(read_graph(operands[0]),
                                       std::vector<std::string>(operands.begin() + 1, operands.end()), output, cast,
                                       std::cout);
    } else if (command == "profile" && want(1)) {
      return graft::inspect::print_profile(operands[0], std::cout);
    } else if (command == "diff" && want(2)) {
      return graft::inspect::print_diff(read_graph(operands[0]), read_graph(operands[1]), std::cout) ? 1 : 0;
    } else if (command == "verify" || command == "text" || command == "json" || command == "dot" || command == "svg" ||
               command == "png" || command == "stats" || command == "run" || command == "diff" || command == "scopes" ||
               command == "html" || command == "profile") {
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
