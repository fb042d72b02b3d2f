// quickstart: load an exported graph (a small MLP's loss), verify it, print
// its jaxpr-like text, and write its JSON and Graphviz views.
//
//   ./build/examples/quickstart [graph.json]
//
// Until the Array API lands, graphs enter graft through JSON; this is also
// what a user inspecting an exported graph does.
#include <fstream>
#include <iostream>
#include <sstream>

#include "graft/errors.h"
#include "graft/graph.h"

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : GRAFT_EXAMPLES_DIR "/graphs/mlp.json";
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();

  graft::Graph g = graft::Graph::from_json(text.str());
  g.verify();
  std::cout << "graph with " << g.num_nodes() << " nodes:\n" << g.to_text();

  std::ofstream("quickstart.json") << g.to_json() << "\n";
  std::ofstream("quickstart.dot") << g.to_dot();
  std::cout << "wrote quickstart.json and quickstart.dot (render: dot -Tsvg quickstart.dot > quickstart.svg)\n";

  // A malformed document is an error that says what and where, never a crash.
  try {
    graft::Graph::from_json(R"({"format": "graft.graph", "version": 1, "graph": {"inputs": [],
      "nodes": [{"id": 0, "op": "frobnicate", "inputs": [], "outputs": []}], "outputs": []}})");
  } catch (const graft::GraphFormatError& e) {
    std::cout << "rejected as expected: " << e.what() << "\n";
  }
  return 0;
}
