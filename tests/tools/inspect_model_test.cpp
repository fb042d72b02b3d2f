// graft-inspect on graphs of the sizes engineers inspect (an MLP, a
// 21-block transformer's value_and_grad, a scan RNN): scopes, pictures that
// finish, diffs that report what changed, stats through loops, names and
// lines that point into the user's code.
#ifdef GRAFT_INSPECT
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "graft/graft.h"
#include "ir/graph.h"
#include "tools/inspect_shell.h"
#include "tools/model_graphs.h"

using namespace graft;
using test::inspect;
using test::save;

namespace {

// Whether a node, or one in its subgraphs, names one of graft's own source
// files (its API layer or a public header) instead of the user's line.
std::string graft_file_named(const ir::Graph& g) {
  const std::string root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().string();
  for (const ir::Node& n : g.nodes()) {
    const std::string file(n.loc.file);
    if (file.rfind(root + "/api/", 0) == 0 || file.find("include/graft/") != std::string::npos)
      return std::string(ir::op_name(n.op)) + " at " + ir::loc_str(n.loc);
    for (const auto& [name, value] : n.attrs.items())
      if (const ir::Graphs* gs = std::get_if<ir::Graphs>(&value))
        for (const ir::GraphPtr& sub : *gs)
          if (sub)
            if (std::string inner = graft_file_named(*sub); !inner.empty()) return inner;
  }
  return {};
}

Array helper(const Array& x, const Array& w) {
  named_scope scope("dense");
  return graft::tanh(matmul(x, w));
}

}  // namespace

TEST_CASE("no node of an exported graph names a graft source file, composites are groups at the user's line",
          "[tools]") {
  const Graph t = test::transformer_grad_graph(2);
  INFO(graft_file_named(t.ir()));
  CHECK(graft_file_named(t.ir()).empty());
  // Library functions built from other ops, eager-looking code under jit and grad, control flow.
  auto f = [](const Array& x) {
    Array y = nn::softplus(x) + nn::silu(x) + nn::elu(x) + nn::leaky_relu(x) + nn::relu6(x) + nn::log_sigmoid(x);
    y = y + var(x) + graft::std(x) + logsumexp(x) + cumlogsumexp(x, 0) + clip(x, -1.0f, 1.0f) + linalg::norm(x);
    y = y + sum(nn::standardize(reshape(x, {2, 3}))) + mean(nn::gelu(x, false)) + sum(softmax(x) * log_softmax(x));
    auto [c, ys] =
        scan([](const Array& h, const Array& xi) { return std::make_pair(h + nn::gelu(xi), h); }, zeros({}), x);
    return sum(y) + c + sum(ys);
  };
  const Array x = linspace(-1, 1, 6);
  const Graph g = make_graph(grad(f))(x);
  INFO(graft_file_named(g.ir()));
  CHECK(graft_file_named(g.ir()).empty());
  // softmax is one group, its nodes at this file's line.
  const Graph s = make_graph([](const Array& v) { return softmax(v * 2.0f); })(x);
  const int line = __LINE__ - 1;
  int grouped = 0;
  for (const ir::Node& n : s.ir().nodes()) {
    if (n.scope != "softmax") continue;
    ++grouped;
    CHECK(std::string(n.loc.file) == __FILE__);
    CHECK(n.loc.line == line);
  }
  CHECK(grouped >= 4);  // max, subtract, exp, sum, divide (and their broadcasts)
}

TEST_CASE("each call of a helper gets its own scope instance", "[tools]") {
  const Graph g =
      make_graph([](const Array& x, const Array& w) { return helper(helper(x, w), w); })(ones({2, 3}), ones({3, 3}));
  std::set<std::string> scopes;
  for (const ir::Node& n : g.ir().nodes()) scopes.insert(n.scope);
  CHECK(scopes == std::set<std::string>{"dense", "dense_1"});
  // A second graph numbers afresh.
  const Graph again =
      make_graph([](const Array& x, const Array& w) { return helper(x, w); })(ones({2, 3}), ones({3, 3}));
  CHECK(again.ir().nodes()[0].scope == "dense");
}

TEST_CASE("graft-inspect scopes lists the tree, --collapse takes globs and rejects a scope that does not exist",
          "[tools]") {
  const std::string g = save(test::transformer_grad_graph(2), "transformer2.json");
  int status = -1;
  const std::string scopes = inspect("scopes " + g, &status);
  INFO(scopes);
  CHECK(status == 0);
  CHECK(scopes.find("\nblock00  ") != std::string::npos);
  CHECK(scopes.find("\n  attention  ") != std::string::npos);
  CHECK(scopes.find("\n    softmax  10\n") != std::string::npos);
  CHECK(scopes.find("\nbackward  ") != std::string::npos);
  const std::string dot = inspect("dot " + g + " --collapse 'block*' --collapse backward", &status);
  CHECK(status == 0);
  CHECK(dot.find("label=\"block00\\n") != std::string::npos);  // a box with its node count
  CHECK(dot.find("label=\"backward\\n") != std::string::npos);
  CHECK(dot.find("dot_general") != std::string::npos);  // the head, outside any block, is drawn
  const std::string wrong = inspect("dot " + g + " --collapse block9", &status);
  CHECK(status == 1);
  CHECK(wrong.find("--collapse 'block9': no scope matches it") != std::string::npos);
  CHECK(inspect("dot " + g + " --collapse 'block00/att'", &status).find("no scope matches") != std::string::npos);
}

TEST_CASE("graft-inspect svg of a 21-block transformer's gradient finishes with a picture, dot has a timeout",
          "[tools]") {
  const Graph graph = test::transformer_grad_graph(21);
  REQUIRE(graph.num_nodes() > 3000);
  const std::string g = save(graph, "transformer21.json");
  const std::filesystem::path svg = test::kInspectDir / "transformer21.svg";
  std::filesystem::remove(svg);
  int status = -1;
  const auto start = std::chrono::steady_clock::now();
  const std::string said = inspect("svg " + g + " -o '" + svg.string() + "'", &status);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(said);
  CHECK(status == 0);
  CHECK(seconds < 60);
  CHECK(said.find("nodes are more than the budget of 150 items: scopes below level 1 are drawn collapsed") !=
        std::string::npos);
  std::ifstream in(svg);
  const std::string picture((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(picture.find("<svg") != std::string::npos);
  CHECK(picture.find("block07/attention") != std::string::npos);
  // Everything at once does not finish in a second: a clear error, no picture, no temporary file.
  const std::filesystem::path big = test::kInspectDir / "transformer21_full.svg";
  const std::string late = inspect("svg " + g + " --full --budget 0 --timeout 1 -o '" + big.string() + "'", &status);
  CHECK(status == 1);
  CHECK(late.find("did not finish within 1 s") != std::string::npos);
  CHECK(!std::filesystem::exists(big));
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    CHECK(entry.path().filename().string().rfind("graft-inspect-", 0) != 0);
}

TEST_CASE("graft-inspect dot folds constants, broadcasts and reshapes and groups parameters", "[tools]") {
  const std::string g = save(make_graph(test::mlp_loss)(test::mlp_params(12), ones({4, 8}), ones({4})), "mlp12.json");
  int status = -1;
  const std::string folded = inspect("dot " + g, &status), full = inspect("dot " + g + " --full", &status);
  CHECK(status == 0);
  // Each bias's broadcast is an edge labelled by its op, each constant a line of its reader's label.
  CHECK(full.find("label=\"broadcast_in_dim") != std::string::npos);
  CHECK(folded.find("label=\"broadcast_in_dim") == std::string::npos);
  CHECK(folded.find("(broadcast_in_dim)") != std::string::npos);
  CHECK(folded.find("<- 12: f32[]") == std::string::npos);  // the mean's divisor...
  CHECK(folded.find("<- 4: f32[]") != std::string::npos);   // ...is the batch size, shown in the divide's box
  // 24 parameters in 12 groups of 2.
  CHECK(folded.find("arg0['layer3']\\n2 inputs") != std::string::npos);
  CHECK(full.find("arg0['layer3']['w']: f32[16,16]") != std::string::npos);
}

TEST_CASE("graft-inspect diff: adding a layer reports the added nodes only, a batch size names the inputs", "[tools]") {
  const Array x = ones({4, 8}), y = ones({4});
  const std::string a = save(make_graph(test::mlp_loss)(test::mlp_params(3), x, y), "mlp3.json");
  const std::string b = save(make_graph(test::mlp_loss)(test::mlp_params(4), x, y), "mlp4.json");
  int status = -1;
  const std::string added = inspect("diff " + a + " " + b, &status);
  INFO(added);
  CHECK(status == 1);
  CHECK(added.find("added input:   arg0['layer3']['b']: f32[16]\n") != std::string::npos);
  CHECK(added.find("added input:   arg0['layer3']['w']: f32[16,16]\n") != std::string::npos);
  // The new layer's four nodes, each with its scope and line, and nothing else.
  CHECK(std::regex_search(added,
                          std::regex("added:   %\\d+:f32\\[4,16\\] = tanh %\\d+ +# layer3  model_graphs.h:\\d+\n")));
  CHECK(added.find("6 differences (18 nodes -> 22)") != std::string::npos);
  CHECK(added.find("removed") == std::string::npos);
  CHECK(added.find("changed:") == std::string::npos);
  CHECK(added.find("1 node now reads added or changed values") != std::string::npos);  // the loss, reading layer3

  const std::string c = save(make_graph(test::mlp_loss)(test::mlp_params(3), ones({8, 8}), ones({8})), "mlp3_b8.json");
  const std::string batch = inspect("diff " + a + " " + c, &status);
  INFO(batch);
  CHECK(batch.find("changed input: arg1: f32[4,8] -> f32[8,8]\n") != std::string::npos);
  CHECK(batch.find("changed input: arg2: f32[4] -> f32[8]\n") != std::string::npos);
  // The mean's divisor, matched by scope, not with another constant.
  CHECK(std::regex_search(batch, std::regex("  - %\\d+:f32\\[\\] = constant\\[value=\\[4\\]\\] +# loss ")));
  CHECK(std::regex_search(batch, std::regex("  \\+ %\\d+:f32\\[\\] = constant\\[value=\\[8\\]\\] +# loss ")));
  CHECK(batch.find("nodes downstream differ only in types that flow from them") != std::string::npos);
  CHECK(batch.find("= tanh") == std::string::npos);
}

TEST_CASE("graft-inspect stats counts a scan's body as often as it runs, per scope and forward/backward", "[tools]") {
  int status = -1;
  const std::string rnn = inspect("stats " + save(test::rnn_graph(), "rnn.json"), &status);
  INFO(rnn);
  CHECK(status == 0);
  // Per step: h W (2*16*16) + x U (2*4*16) + add + tanh (16 each) = 672; 12 steps; the mean 16 + 1.
  const double hand = 12 * 672 + 17;
  std::smatch m;
  REQUIRE(std::regex_search(rnn, m, std::regex("as traced[^\n]*\n  flops: (\\d+)")));
  CHECK(std::abs(std::stod(m[1]) - hand) <= 0.05 * hand);

  const std::string t =
      inspect("stats " + save(test::transformer_grad_graph(2), "transformer2s.json") + " --by-scope", &status);
  INFO(t);
  REQUIRE(std::regex_search(t, m, std::regex("  flops: (\\d+) \\(forward (\\d+), backward (\\d+)\\)")));
  CHECK(std::stod(m[2]) + std::stod(m[3]) == std::stod(m[1]));
  CHECK(std::stod(m[3]) > std::stod(m[2]));  // the backward pass does about twice the forward's work
  CHECK(std::regex_search(t, std::regex("\n  block01 +\\d+ +\\d+ +\\d+\n")));
  CHECK(std::regex_search(t, std::regex("\n      softmax +10 +\\d+ +\\d+\n")));
}

TEST_CASE("graft-inspect text shows names and lines, run takes inputs by name and casts when asked", "[tools]") {
  auto f = [](const Array& x, const Array& y) { return sin(x) * y; };
  const Graph graph = make_graph(f)(ones({2, 3}), ones({3}));
  const std::string g = save(graph, "named.json");
  int status = -1;
  const std::string text = inspect("text " + g, &status);
  INFO(text);
  CHECK(text.find("    %0:f32[2,3]  # arg0\n") != std::string::npos);
  CHECK(std::regex_search(text, std::regex("= sin %0 +# inspect_model_test.cpp:\\d+\n")));
  CHECK(text.find("  # out\n") != std::string::npos);

  const Array x = reshape(linspace(-1, 1, 6), {2, 3}), y = array({1.0f, 2.0f, 3.0f});
  const std::string xf = (test::kInspectDir / "nx.npy").string(), yf = (test::kInspectDir / "ny.npy").string();
  const std::string y64 = (test::kInspectDir / "ny64.npy").string();
  save_npy(xf, x);
  save_npy(yf, y);
  save_npy(y64, astype(y, DType::f64));
  const std::string out = (test::kInspectDir / "named_out").string();
  std::filesystem::remove_all(out);
  // By name, in any order.
  CHECK(inspect("run " + g + " arg1=" + yf + " arg0=" + xf + " -o " + out, &status).find("out_0.npy: out f32[2,3]") !=
        std::string::npos);
  CHECK(status == 0);
  CHECK(load_npy(out + "/out_0.npy").to_vector<float>() == f(x, y).to_vector<float>());
  // NumPy's float64 default: an error naming the input and the file, unless cast.
  const std::string refused = inspect("run " + g + " arg0=" + xf + " %1=" + y64 + " -o " + out, &status);
  CHECK(status == 1);
  CHECK(refused.find("input 1 (arg1, %1) is f32[3] but " + y64 + " holds f64[3] (--cast converts it)") !=
        std::string::npos);
  CHECK(inspect("run " + g + " arg0=" + xf + " %1=" + y64 + " -o " + out + " --cast", &status).find("out_0.npy") !=
        std::string::npos);
  CHECK(status == 0);
  CHECK(inspect("run " + g + " argX=" + xf + " -o " + out, &status).find("no input named 'argX'") != std::string::npos);
  CHECK(inspect("run " + g + " arg0=" + xf + " -o " + out, &status).find("no file for input 1 (arg1, %1)") !=
        std::string::npos);
}
#endif
