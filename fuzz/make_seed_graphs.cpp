// Writes the from_json fuzzer's seed graphs (fuzz/corpus/from_json/*.json):
// small graphs of every kind of node graft writes — elementwise and
// reductions, layout, indexing, dot_general, random bits, cond, while, scan,
// and a gradient — compact, since short seeds mutate faster.
//   ./build-fuzz/fuzz/make_seed_graphs fuzz/corpus/from_json
#include <fstream>
#include <iostream>
#include <string>

#include "graft/graft.h"

using namespace graft;

namespace {

void write(const std::string& dir, const std::string& name, const Graph& g) {
  std::ofstream(dir + "/" + name + ".json") << g.to_json(-1) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seed_graphs DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const Array x = zeros({2, 3}), v = zeros({3}), i = zeros({2}, DType::i32);
  write(dir, "elementwise", make_graph([](const Array& a, const Array& b) { return exp(a * 2.0f) - tanh(b) / a; })(x, v));
  write(dir, "reduce", make_graph([](const Array& a) { return sum(a, {1}) + min(a, {1}) * argmax(a, 1); })(x));
  write(dir, "layout", make_graph([](const Array& a) {
          return concatenate({transpose(reshape(a, {3, 2})), pad(a, {{1, 0}, {0, 2}})[{Slice(0, 2)}][{Slice(), Slice(0, 3)}]}, 0);
        })(x));
  write(dir, "indexing", make_graph([](const Array& a, const Array& idx) {
          return scatter_add(take(a, idx, 1), idx, ones({2, 2}), 0) + dynamic_slice(a, {idx[0], idx[1]}, {2, 2});
        })(x, i));
  write(dir, "dot", make_graph([](const Array& a, const Array& b) { return matmul(a, b) + einsum("ij,j->i", {a, b}); })(x, v));
  write(dir, "random", make_graph([](const Array& k) { return random::uniform(k, {4}) + sort(random::normal(k, {4})); })(
                           random::key(1)));
  write(dir, "cond", make_graph([](const Array& a) {
          return cond(sum(a) > 0.0f, [](const Array& y) { return y * 2.0f; }, [](const Array& y) { return -y; }, a);
        })(x));
  write(dir, "while", make_graph([](const Array& a) {
          return while_loop([](const Array& y) { return sum(y) < 10.0f; }, [](const Array& y) { return y + 1.0f; }, a);
        })(x));
  write(dir, "scan", make_graph([](const Array& a) {
          auto [carry, ys] = scan([](const Array& c, const Array& row) { return std::make_pair(c + row, c * row); },
                                  zeros({3}), a);
          return carry + sum(ys, {0});
        })(x));
  write(dir, "grad", make_graph(grad([](const Array& a) { return sum(sin(a) * a); }))(x));
  return 0;
}
