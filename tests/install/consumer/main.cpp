#include <iostream>

#include "graft/graph.h"

int main() {
  graft::Graph g = graft::Graph::from_json(R"({"format": "graft.graph", "version": 1, "graph": {
    "inputs": [{"id": 0, "dtype": "f32", "shape": [2]}],
    "nodes": [{"id": 0, "op": "sin", "inputs": [0], "outputs": [{"id": 1, "dtype": "f32", "shape": [2]}]}],
    "outputs": [1]}})");
  std::cout << "nodes=" << g.num_nodes() << "\n";
  return g.num_nodes() == 1 ? 0 : 1;
}
