// libFuzzer target: the text graft parses from users besides JSON, the
// shape-polymorphic specifications of jit (JAX's syntax: "(b, 784)", "(b,)",
// "t >= 2", "2*b + 1") and checkpoint policy specs. Malformed text must
// throw a graft::Error; a parsed expression must print and parse back to
// itself, and evaluate without undefined behaviour (overflow is a ShapeError).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_setup.h"
#include "graft/errors.h"
#include "ir/dim_expr.h"
#include "ir/remat_policy.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graft_fuzz::setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> symbols;
  try {
    if (graft::ir::is_dim_constraint(text)) {
      graft::ir::DimConstraint c = graft::ir::parse_dim_constraint(text, &symbols);
      (void)c.holds(std::vector<int64_t>(symbols.size(), 3));
    } else {
      std::vector<bool> from_argument;
      std::vector<graft::ir::DimExpr> dims = graft::ir::parse_poly_shape(text, &symbols, &from_argument);
      for (size_t i = 0; i < dims.size(); ++i) {
        if (from_argument.at(i)) continue;
        // What graft prints, graft parses back to the same expression.
        std::vector<std::string> names = symbols;
        const std::string printed = dims[i].str(names);
        if (graft::ir::parse_dim_expr(printed, &names, "fuzz") != dims[i]) __builtin_trap();
        (void)dims[i].evaluate(std::vector<int64_t>(symbols.size(), 1 << 20));
      }
    }
  } catch (const graft::Error&) {
  }
  try {
    // A policy that parses prints and parses back to itself.
    const graft::ir::RematPolicy policy = graft::ir::parse_remat_policy(text);
    const std::string printed = graft::ir::remat_policy_text(policy);
    if (graft::ir::remat_policy_text(graft::ir::parse_remat_policy(printed)) != printed) __builtin_trap();
  } catch (const graft::Error&) {
  }
  return 0;
}
