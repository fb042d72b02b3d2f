// quickstart: arrays and NumPy-style operations run eagerly; make_graph
// traces the same function into a graph, which prints as text, exports to
// JSON and Graphviz, and runs again after a JSON round trip.
//
//   ./build/examples/quickstart        (writes quickstart.json, quickstart.dot)
#include <fstream>
#include <iostream>

#include "graft/graft.h"

using namespace graft;

// A two-layer perceptron's squared-error loss.
Array loss(const std::vector<Array>& params, const Array& x, const Array& y) {
  Array h;
  {
    named_scope scope("layer1");
    h = graft::tanh(matmul(x, params[0]) + params[1]);
  }
  named_scope scope("layer2");
  Array pred = matmul(h, params[2]);
  return mean(square(pred - y));
}

int main() {
  // Eager: every operation runs at once.
  Array x = reshape(linspace(-1, 1, 8), {4, 2});
  Array y = sum(x, {1}, true);
  std::vector<Array> params = {full({2, 3}, 0.5), zeros({3}), full({3, 1}, 0.25)};
  std::cout << "x = " << x.shape()[0] << "x" << x.shape()[1] << " f32, loss = " << loss(params, x, y).item<float>()
            << "\n\n";

  // Traced: the same function as a graph.
  Graph g = make_graph(loss)(params, x, y);
  std::cout << g.to_text() << "\n";
  std::ofstream("quickstart.json") << g.to_json() << "\n";
  std::ofstream("quickstart.dot") << g.to_dot();
  std::cout << "wrote quickstart.json and quickstart.dot (render: dot -Tsvg quickstart.dot > quickstart.svg)\n";

  // The exported graph runs again, with the same result.
  Graph back = Graph::from_json(g.to_json());
  std::vector<Array> out = evaluate(back, {params[0], params[1], params[2], x, y});
  std::cout << "loss from the JSON graph = " << out[0].item<float>() << "\n";

  // Mistakes are errors that say what and where, never crashes.
  try {
    Array bad = x + ones({3});
  } catch (const ShapeError& e) {
    std::cout << "error, as expected: " << e.what() << "\n";
  }
  return 0;
}
