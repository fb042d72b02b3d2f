// Pytrees: flatten/unflatten round trips, structure strings, map, and
// registered structs through make_graph.
#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "ir/graph.h"

using namespace graft;

namespace model {
struct Layer {
  Array w, b;
  std::string activation;
};
struct Params {
  std::vector<Layer> layers;
  Array scale;
  int version;
};
}  // namespace model

GRAFT_PYTREE(model::Layer, w, b, activation);
GRAFT_PYTREE(model::Params, layers, scale, version);

TEST_CASE("tree: leaves, unflatten and structure of standard containers", "[api][tree]") {
  std::tuple<Array, std::vector<Array>, std::pair<int, Array>, std::map<std::string, Array>> t{
      ones({2}), {zeros({3}), zeros({1, 2}, i32)}, {7, scalar(1.0, f64)}, {{"b", ones({4})}, {"a", ones({5})}}};
  std::vector<Array> l = tree::leaves(t);
  REQUIRE(l.size() == 6);
  CHECK(l[0].shape() == Shape{2});
  CHECK(l[2].dtype() == i32);
  CHECK(l[3].dtype() == f64);
  CHECK(l[4].shape() == Shape{5});  // map leaves in key order: "a" first
  CHECK(tree::structure(t) == "(f32[2],[f32[3],i32[1,2],],(7,f64[]),{a:f32[5],b:f32[4],},)");
  auto doubled = tree::map([](const Array& x) { return x + x; }, t);
  CHECK(std::get<0>(doubled).to_vector<float>() == std::vector<float>{2, 2});
  CHECK(std::get<2>(doubled).first == 7);  // static leaves are kept
  auto summed = tree::map([](const Array& x, const Array& y) { return x + y; }, t, doubled);
  CHECK(std::get<3>(summed).at("a").to_vector<float>()[0] == 3.0f);
  CHECK_THROWS(tree::unflatten(t, std::vector<Array>{ones({1})}));
  std::array<Array, 2> arr{ones({1}), ones({2})};
  CHECK(tree::leaves(arr).size() == 2);
}

TEST_CASE("tree: GRAFT_PYTREE structs flatten, rebuild and trace", "[api][tree]") {
  model::Params p{{{ones({2, 3}), zeros({3}), "relu"}, {ones({3, 1}), zeros({1}), "none"}}, scalar(2.0), 3};
  CHECK(tree::leaves(p).size() == 5);
  CHECK(tree::structure(p) ==
        "model::Params{layers=[model::Layer{w=f32[2,3],b=f32[3],activation='relu',},model::Layer{w=f32[3,1],b=f32[1],"
        "activation='none',},],scale=f32[],version=3,}");
  model::Params q = tree::map([](const Array& x) { return x * 3.0; }, p);
  CHECK(q.layers[1].activation == "none");
  CHECK(q.scale.item<float>() == 6.0f);
  CHECK(q.version == 3);

  auto forward = [](const model::Params& params, const Array& x) {
    Array h = x;
    for (const model::Layer& l : params.layers) {
      h = matmul(h, l.w) + l.b;
      if (l.activation == "relu") h = maximum(h, scalar(0.0));
    }
    return sum(h) * params.scale;
  };
  Graph g = make_graph(forward)(p, ones({4, 2}));
  CHECK(g.ir().inputs().size() == 6);
  std::vector<Array> inputs = tree::leaves(p);
  inputs.push_back(ones({4, 2}));
  CHECK(evaluate(g, inputs)[0].item<float>() == Approx(forward(p, ones({4, 2})).item<float>()));
  CHECK(forward(p, ones({4, 2})).item<float>() == Approx(4 * 3 * 2 * 2.0f));  // by hand: each hidden 2, out 6 per row
}

TEST_CASE("tree: paths name each leaf as JAX's keystr does", "[api][tree]") {
  std::tuple<Array, std::vector<Array>, std::pair<int, Array>, std::map<std::string, Array>> t{
      ones({2}), {zeros({3}), zeros({1, 2}, i32)}, {7, scalar(1.0, f64)}, {{"b", ones({4})}, {"a", ones({5})}}};
  CHECK(tree::paths(t, "t") ==
        std::vector<std::string>{"t[0]", "t[1][0]", "t[1][1]", "t[2][1]", "t[3]['a']", "t[3]['b']"});
  model::Params p{{{ones({2, 2}), zeros({2}), "relu"}, {ones({2, 1}), zeros({1}), "none"}}, ones({}), 3};
  CHECK(tree::paths(p, "params") == std::vector<std::string>{"params.layers[0].w", "params.layers[0].b",
                                                               "params.layers[1].w", "params.layers[1].b",
                                                               "params.scale"});
  CHECK(tree::paths(p) == std::vector<std::string>{"layers[0].w", "layers[0].b", "layers[1].w", "layers[1].b", "scale"});
  CHECK(tree::paths(ones({3}), "x") == std::vector<std::string>{"x"});
  CHECK(tree::paths(p).size() == tree::leaves(p).size());
}
