// docs/OPS.md, the normative op reference, against the op table: every op
// of ir/ops.def has its section (### `name`), and each section names every
// attribute of the op's schema; and corpus/README.md's counts against the
// corpus's index.json, so the numbers a reader sees are the real ones.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ir/attr_schema.h"
#include "ir/op.h"

namespace {

const std::filesystem::path kRoot = std::filesystem::path(GRAFT_JAX_CORPUS_DIR).parent_path();

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Each op section of docs/OPS.md and docs/ops/*.md: name -> its text, up to the next heading of its level or above.
std::map<std::string, std::string> op_sections() {
  std::vector<std::filesystem::path> files = {kRoot / "docs" / "OPS.md"};
  for (const auto& entry : std::filesystem::directory_iterator(kRoot / "docs" / "ops"))
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  std::map<std::string, std::string> sections;
  const std::regex heading("^### `([a-z0-9_]+)`\\s*$");
  for (const auto& file : files) {
    std::stringstream in(read_text(file));
    std::string line, current;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_match(line, m, heading)) {
        current = m[1];
        INFO(file.string());
        CHECK(sections.count(current) == 0);  // one section per op
        sections[current];
      } else if (line.rfind("## ", 0) == 0 || line.rfind("# ", 0) == 0) {
        current.clear();
      } else if (!current.empty()) {
        sections[current] += line + "\n";
      }
    }
  }
  return sections;
}

}  // namespace

TEST_CASE("docs/OPS.md documents every op of the table and names each attribute", "[corpus][docs]") {
  const std::map<std::string, std::string> sections = op_sections();
  std::set<std::string> ops;
  for (int k = 0; k < graft::ir::kNumOps; ++k) {
    const auto op = static_cast<graft::ir::Op>(k);
    const std::string name(graft::ir::op_name(op));
    ops.insert(name);
    INFO("op " << name);
    auto it = sections.find(name);
    REQUIRE(it != sections.end());
    for (const graft::ir::AttrSpec& a : graft::ir::attr_schema(op)) {
      INFO("attribute " << a.name);
      CHECK(it->second.find("`" + std::string(a.name) + "`") != std::string::npos);
    }
    // The parts every section states.
    for (const char* part :
         {"**Operands**", "**Attributes**", "**Result**", "**Semantics**", "**Derivative**", "**Batching**"}) {
      INFO("part " << part);
      CHECK(it->second.find(part) != std::string::npos);
    }
  }
  for (const auto& [name, text] : sections) {
    INFO("section " << name);
    CHECK(ops.count(name) == 1);  // no section for an op the table does not have
  }
}

TEST_CASE("corpus/README.md states the corpus's real counts", "[corpus][docs]") {
  const nlohmann::json index = nlohmann::json::parse(read_text(kRoot / "corpus" / "index.json"));
  const std::string readme = read_text(kRoot / "corpus" / "README.md");
  std::smatch m;
  REQUIRE(std::regex_search(readme, m, std::regex("(\\d+) test cases over (\\d+) of graft's (\\d+) ops")));
  CHECK(std::stoul(m[1]) == index.at("cases").size());
  CHECK(std::stoul(m[2]) == index.at("ops").size());
  CHECK(std::stoi(m[3]) == graft::ir::kNumOps);
  // Every op is either covered or listed as not covered, never both.
  for (const auto& [op, why] : index.at("not_covered").items()) {
    INFO(op);
    CHECK(std::find(index.at("ops").begin(), index.at("ops").end(), op) == index.at("ops").end());
  }
  CHECK(index.at("ops").size() + index.at("not_covered").size() == static_cast<size_t>(graft::ir::kNumOps));
}
