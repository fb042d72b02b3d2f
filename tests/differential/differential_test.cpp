// Differential testing on random programs (tests/differential/random_graph.h):
// each graph runs op by op on the interpreter (the reference), through jit
// with the interpreter backend (simplified, fused, memory-planned) and with
// the cpu backend (generated C++), and after a JSON
// round trip; every output must equal the reference bit for bit (NaNs by
// class). A failure writes the graph's JSON and its inputs as .npy files to
// build/tests/tmp/differential/seed_N/ and names the seed.
//   ./build/tests/graft_tests "[differential]"                   (the CI count)
//   GRAFT_DIFFERENTIAL_PROGRAMS=100000 ./build/tests/graft_tests "[differential]"
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "differential/random_graph.h"
#include "graft/graft.h"
#include "ir/dtype.h"

using namespace graft;

namespace {

// Equal bits, except that any NaN equals any NaN of the same dtype.
bool same(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const size_t n = static_cast<size_t>(a.size()), size = ir::dtype_size(a.dtype());
  const auto* p = static_cast<const unsigned char*>(a.unsafe_buffer_pointer());
  const auto* q = static_cast<const unsigned char*>(b.unsafe_buffer_pointer());
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(p + i * size, q + i * size, size) == 0) continue;
    if (a.dtype() == DType::f32) {
      float x, y;
      std::memcpy(&x, p + i * size, 4);
      std::memcpy(&y, q + i * size, 4);
      if (std::isnan(x) && std::isnan(y)) continue;
    } else if (a.dtype() == DType::f64) {
      double x, y;
      std::memcpy(&x, p + i * size, 8);
      std::memcpy(&y, q + i * size, 8);
      if (std::isnan(x) && std::isnan(y)) continue;
    }
    return false;
  }
  return true;
}

std::string save_reproduction(uint64_t seed, const Graph& g, const std::vector<Array>& inputs) {
  const std::filesystem::path dir =
      std::filesystem::path(GRAFT_TEST_TMPDIR) / "differential" / ("seed_" + std::to_string(seed));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "graph.json") << g.to_json();
  for (size_t i = 0; i < inputs.size(); ++i) save_npy((dir / ("input_" + std::to_string(i) + ".npy")).string(), inputs[i]);
  return dir.string();
}

std::vector<Array> run_jit(const Graph& g, const std::vector<Array>& inputs, Backend backend) {
  const JitOptions options{.backend = backend, .wait_for_compile = true};
  const std::vector<bool> donated(inputs.size(), false);
  auto exe = detail::compile_graph(g, options, donated, "differential");
  return detail::run_executable(*exe, inputs, donated, options);
}

}  // namespace

TEST_CASE("differential: random programs agree op by op, through jit and after a JSON round trip", "[differential]") {
  const char* env = std::getenv("GRAFT_DIFFERENTIAL_PROGRAMS");
  const int programs = env ? std::atoi(env) : 300;
  int checked = 0, failed = 0;
  for (int s = 0; s < programs; ++s) {
    const uint64_t seed = static_cast<uint64_t>(s);
    test::RandomGraph r = test::random_graph(seed, 4 + static_cast<int>(seed % 9));
    const Graph g(r.graph);
    std::string ops;
    for (const std::string& o : r.ops) ops += o + " ";
    std::vector<Array> want;
    try {
      want = evaluate(g, r.inputs);
    } catch (const Error& e) {
      FAIL("seed " << seed << ": the reference run failed: " << e.what() << "\nops: " << ops);
    }
    auto check = [&](const char* what, const std::vector<Array>& got) {
      bool ok = got.size() == want.size();
      for (size_t k = 0; ok && k < got.size(); ++k) ok = same(got[k], want[k]);
      if (!ok) {
        ++failed;
        FAIL_CHECK("seed " << seed << ": " << what << " differs from the op-by-op run; ops: " << ops
                           << "\nreproduction: " << save_reproduction(seed, g, r.inputs));
      }
    };
    const Graph back = Graph::from_json(g.to_json());
    CHECK(back.to_json() == g.to_json());
    check("after a JSON round trip", evaluate(back, r.inputs));
    check("jit (interpreter)", run_jit(g, r.inputs, Backend::interpreter));
    check("jit (cpu)", run_jit(g, r.inputs, Backend::cpu));
    ++checked;
    if (failed >= 5) break;  // enough to read
  }
  CHECK(checked == programs);
  std::printf("differential: %d programs checked\n", checked);
}
