// graft-inspect's subcommands, run as a user would (the built binary in a
// shell), on graphs made here: each checks what the command prints or writes.
#ifdef GRAFT_INSPECT
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "graft/graft.h"
#include "tools/inspect_shell.h"

using namespace graft;

using test::inspect;
using test::save;
const std::filesystem::path& kDir = test::kInspectDir;

TEST_CASE("graft-inspect --help lists every command, bad usage is status 2", "[tools]") {
  int status = -1;
  const std::string help = inspect("--help", &status);
  CHECK(status == 0);
  for (const char* command : {"verify", "text", "json", "scopes", "dot", "svg", "png", "stats", "run", "diff"})
    CHECK(help.find(std::string("\n  ") + command + " ") != std::string::npos);
  CHECK(inspect("", &status).find("no command") != std::string::npos);
  CHECK(status == 2);
  CHECK(inspect("frobnicate x.json", &status).find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(status == 2);
  CHECK(inspect("diff only_one.json", &status).find("wrong number of operands") != std::string::npos);
  CHECK(status == 2);
}

TEST_CASE("graft-inspect verify, text, svg, a malformed file is status 1 with a message", "[tools]") {
  const std::string g = save(make_graph([](const Array& x) { return exp(x) * 2.0f; })(zeros({3})), "exp.json");
  int status = -1;
  CHECK(inspect("verify " + g, &status) == "ok: 4 nodes, 1 inputs, 1 outputs\n");  // exp, the 2 and its broadcast, mul
  CHECK(status == 0);
  const std::string text = inspect("text " + g, &status);
  CHECK(text.find("= exp %0") != std::string::npos);
  CHECK(inspect(g + " --verify", &status).find("ok: 4 nodes") == 0);  // the first form still works
  const std::string svg = inspect("svg " + g, &status);
  CHECK(status == 0);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("exp") != std::string::npos);

  std::ofstream(kDir / "broken.json") << "{\"format\": \"graft.graph\", \"version\": 1, \"graph\": {\"nodes\": [";
  const std::string err = inspect("verify '" + (kDir / "broken.json").string() + "'", &status);
  CHECK(status == 1);
  CHECK(err.find("graft-inspect: ") == 0);
  CHECK(err.find("broken.json") != std::string::npos);
}

TEST_CASE("graft-inspect run evaluates a graph on .npy inputs and writes .npy outputs", "[tools]") {
  auto f = [](const Array& x, const Array& y) { return std::vector<Array>{sin(x) * y + 1.0f, sum(x, {1})}; };
  const Array x = reshape(linspace(-2, 2, 6), {2, 3}), y = array({0.5f, -1.0f, 2.0f});
  const std::string g = save(make_graph(f)(x, y), "run.json");
  save_npy((kDir / "x.npy").string(), x);
  save_npy((kDir / "y.npy").string(), y);
  const std::filesystem::path out = kDir / "run_out";
  std::filesystem::remove_all(out);
  int status = -1;
  const std::string printed = inspect("run " + g + " '" + (kDir / "x.npy").string() + "' '" +
                                          (kDir / "y.npy").string() + "' -o '" + out.string() + "'",
                                      &status);
  INFO(printed);
  CHECK(status == 0);
  CHECK(printed.find("out_0.npy: out[0] f32[2,3]") != std::string::npos);  // named by make_graph
  const std::vector<Array> want = f(x, y);
  CHECK(load_npy((out / "out_0.npy").string()).to_vector<float>() == want[0].to_vector<float>());
  CHECK(load_npy((out / "out_1.npy").string()).to_vector<float>() == want[1].to_vector<float>());
  // One input short: an error naming the count, status 1.
  CHECK(inspect("run " + g + " '" + (kDir / "x.npy").string() + "' -o '" + out.string() + "'", &status)
            .find("graft-inspect: ") == 0);
  CHECK(status == 1);
}

TEST_CASE("graft-inspect stats: the op histogram, flops and the fused kernels per backend", "[tools]") {
  auto f = [](const Array& a, const Array& b) { return tanh(matmul(a, b)) + 1.0f; };
  const std::string g = save(make_graph(f)(ones({4, 8}), ones({8, 16})), "stats.json");
  int status = -1;
  const std::string stats = inspect("stats " + g, &status);
  INFO(stats);
  CHECK(status == 0);
  CHECK(stats.find("  dot_general                   1      0\n") != std::string::npos);
  CHECK(stats.find("  tanh                          1      0\n") != std::string::npos);
  CHECK(stats.find("jit, backend interpreter:") != std::string::npos);
  CHECK(stats.find("jit, backend cpu:") != std::string::npos);
  // 2*4*8*16 for the product, then tanh and the add on 64 elements.
  CHECK(stats.find("flops: 1152\n") != std::string::npos);
  CHECK(stats.find("memory: arguments 640,") != std::string::npos);  // (32 + 128) floats
  CHECK(stats.find("outputs 256,") != std::string::npos);             // 64 floats
}

TEST_CASE("graft-inspect diff: nodes matched by what they compute, added, removed and changed", "[tools]") {
  const Array x = ones({3, 4});
  const std::string a = save(make_graph([](const Array& v) { return sum(exp(v), {0}) * 2.0f; })(x), "a.json");
  const std::string b =
      save(make_graph([](const Array& v) { return sin(sum(exp(v), {1})) * 2.0f; })(x), "b.json");
  int status = -1;
  const std::string same = inspect("diff " + a + " " + a, &status);
  CHECK(status == 0);
  CHECK(same.find("no differences") == 0);
  const std::string d = inspect("diff " + a + " " + b, &status);
  INFO(d);
  CHECK(status == 1);
  // reduce_sum over another axis: changed (exp, read by it, is the same node).
  CHECK(d.find("changed:\n  - %2:f32[4] = reduce_sum[axes=(0)] %1  # graft_inspect_test.cpp:") != std::string::npos);
  CHECK(d.find("\n  + %2:f32[3] = reduce_sum[axes=(1)] %1  # graft_inspect_test.cpp:") != std::string::npos);
  CHECK(d.find("added:   %3:f32[3] = sin %2  # graft_inspect_test.cpp:") != std::string::npos);
  CHECK(d.find("= exp") == std::string::npos);
}
#endif
