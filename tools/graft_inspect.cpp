// graft-inspect: reads a graph exported as JSON, verifies it, and prints it
// as text (default), Graphviz DOT, or normalised JSON.
//
//   graft-inspect graph.json [--text | --dot | --json | --verify]
#include <fstream>
#include <iostream>
#include <sstream>

#include "graft/errors.h"
#include "graft/graph.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: graft-inspect GRAPH.json [--text | --dot | --json | --verify]\n";
    return 2;
  }
  std::string mode = argc == 3 ? argv[2] : "--text";
  if (mode != "--text" && mode != "--dot" && mode != "--json" && mode != "--verify") {
    std::cerr << "graft-inspect: unknown option '" << mode << "'\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "graft-inspect: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    graft::Graph g = graft::Graph::from_json(text.str());
    if (mode == "--text") std::cout << g.to_text();
    if (mode == "--dot") std::cout << g.to_dot();
    if (mode == "--json") std::cout << g.to_json() << "\n";
    if (mode == "--verify") std::cout << "ok: " << g.num_nodes() << " nodes\n";
  } catch (const graft::Error& e) {
    std::cerr << "graft-inspect: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
