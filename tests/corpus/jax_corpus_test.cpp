// The corpus with JAX's answers, every case on every backend and under
// every transform (tests/corpus/corpus_runner.h runs the checks).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "corpus/corpus_runner.h"
#include "ir/op.h"

using nlohmann::json;

TEST_CASE("corpus: every case agrees with JAX's answers, on every backend and under every transform",
          "[corpus][jax]") {
  const json index = graft::test::corpus_index();
  REQUIRE(index.at("format") == "graft.jax_corpus");
  REQUIRE(index.at("version") == 2);
  const auto& cases = index.at("cases");
  CHECK(cases.size() >= 300);

  // Every op of graft's table is in some case or has its reason stated.
  std::set<std::string> covered;
  for (const json& c : cases)
    for (const json& op : c.at("ops")) covered.insert(op.get<std::string>());
  for (int k = 0; k < graft::ir::kNumOps; ++k) {
    const std::string op(graft::ir::op_name(static_cast<graft::ir::Op>(k)));
    INFO("op " << op);
    CHECK((covered.count(op) == 1 || index.at("not_covered").contains(op)));
  }

  graft::test::CorpusCounts counts;
  int failures = 0;
  for (const json& meta : cases) {
    const std::string name = meta.at("name").get<std::string>();
    INFO("case " << name << " (corpus/cases/" << name << ")");
    std::vector<std::string> differences;
    graft::test::check_corpus_case(meta, true, differences, counts);
    for (const std::string& d : differences) FAIL_CHECK(d);
    failures += static_cast<int>(differences.size());
  }
  std::printf(
      "JAX corpus: %zu cases (%zu ops) checked: eval on 4 paths, jvp %d, vjp %d, vmap %d (mixed in_axes %d), "
      "Hessian %d, composed transforms %d; %d differences\n",
      cases.size(), covered.size(), counts.jvps, counts.vjps, counts.vmaps, counts.mixed, counts.hessians,
      counts.composed, failures);
}
