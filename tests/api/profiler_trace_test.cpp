// profiler::start_trace / stop_trace / trace / TraceAnnotation: the trace file
// holds a span per kernel a jit executable runs and per eager op, named and
// kinded by the op table, with shapes, bytes and flops; annotations enclose
// what they time; graft-inspect profile sums it by kind.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "graft/graft.h"
#include "support/shell.h"

using namespace graft;
using nlohmann::json;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("graft-trace-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

}  // namespace

TEST_CASE("profiler: a trace names each kernel, its kind, shapes and flops", "[profiler]") {
  const auto dir = scratch("spans");
  const Array x = ones({64, 32}) * 0.5f, w = ones({32, 16}) * 0.25f;
  auto f = jit([](const Array& a, const Array& b) { return tanh(matmul(a, b) * 0.5f) + 1.0f; });
  (void)f(x, w);  // compiled before the trace: the trace holds runs, not compiles
  profiler::start_trace(dir.string());
  {
    const profiler::TraceAnnotation step("step");
    (void)f(x, w).to_vector<float>();
    (void)(x * 2.0f).to_vector<float>();  // an eager op
  }
  const std::string path = profiler::stop_trace();
  REQUIRE(std::filesystem::exists(path));
  CHECK(std::filesystem::path(path).parent_path() == dir);
  const json doc = read_json(path);
  REQUIRE(doc.contains("traceEvents"));
  const json* gemm = nullptr;
  const json* fused = nullptr;
  const json* eager = nullptr;
  const json* annotation = nullptr;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e.contains("tid"));
    const std::string name = e["name"];
    if (name == "dot_general") gemm = &e;
    if (name.rfind("fusion (", 0) == 0) fused = &e;
    if (name == "mul (eager)") eager = &e;
    if (name == "step") annotation = &e;
  }
  REQUIRE(gemm != nullptr);
  CHECK((*gemm)["cat"] == "linalg");  // dot_general's family in ops.def
  CHECK((*gemm)["args"]["shapes"] == "f32[64,32] f32[32,16] -> f32[64,16]");
  CHECK((*gemm)["args"]["flops"].get<double>() == 2.0 * 64 * 32 * 16);
  CHECK((*gemm)["args"]["bytes"].get<double>() == 4.0 * (64 * 32 + 32 * 16 + 64 * 16));
  CHECK_THAT((*gemm)["args"]["source"].get<std::string>(), Catch::Contains("profiler_trace_test.cpp"));
  REQUIRE(fused != nullptr);
  CHECK((*fused)["cat"] == "fusion");
  CHECK_THAT((*fused)["name"].get<std::string>(), Catch::Contains("tanh"));
  REQUIRE(eager != nullptr);
  CHECK((*eager)["cat"] == "elementwise");
  REQUIRE(annotation != nullptr);
  CHECK((*annotation)["cat"] == "annotation");
  // The annotation encloses the kernels run inside it.
  const double a0 = (*annotation)["ts"], a1 = a0 + (*annotation)["dur"].get<double>();
  for (const json* k : {gemm, fused, eager}) {
    CHECK((*k)["ts"].get<double>() >= a0);
    CHECK((*k)["ts"].get<double>() + (*k)["dur"].get<double>() <= a1);
  }
#ifdef GRAFT_INSPECT
  int status = 0;
  const std::string out = graft::test::run(std::string("'") + GRAFT_INSPECT + "' profile '" + path + "'", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK_THAT(out, Catch::Contains("| linalg |") && Catch::Contains("| fusion |") &&
                      Catch::Contains("dot_general f32[64,32] f32[32,16] -> f32[64,16]") &&
                      Catch::Contains("annotation: step"));
#endif
  std::filesystem::remove_all(dir);
}

TEST_CASE("profiler: nothing is recorded outside a trace, and misuse is an error", "[profiler]") {
  const auto dir = scratch("misuse");
  CHECK_THROWS_WITH(profiler::stop_trace(), Catch::Contains("no trace is being recorded"));
  {
    const profiler::trace t(dir.string());
    CHECK_THROWS_WITH(profiler::start_trace(dir.string()), Catch::Contains("already being recorded"));
    (void)(ones({4}) + 1.0f).to_vector<float>();
  }
  // The RAII trace wrote its file when it ended; an op after it is in no trace.
  (void)(ones({4}) * 3.0f).to_vector<float>();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    const std::string text = [&] {
      std::ifstream in(entry.path());
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    }();
    CHECK_THAT(text, Catch::Contains("add (eager)"));
    CHECK(text.find("mul (eager)") == std::string::npos);
  }
  CHECK(files == 1);
#ifdef GRAFT_INSPECT
  int status = 0;
  const std::string bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"traceEvents\": 3";
  const std::string out = graft::test::run(std::string("'") + GRAFT_INSPECT + "' profile '" + bad + "'", &status);
  CHECK(status != 0);
  CHECK_THAT(out, Catch::Contains("not JSON"));
#endif
  std::filesystem::remove_all(dir);
}
