// Shape-polymorphic jit (JitOptions::polymorphic_shapes): the parsed
// specification, the sizes it is traced at, and the executable that serves
// every size: one symbolic program (ir/symbolic_graph.h), one compiled
// module, and per size met an instance (the program at those sizes, its
// memory plan, and the module's kernels whose source does not depend on
// them). Internal to the api layer.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/jit_executable.h"
#include "codegen/cpu/emit.h"
#include "graft/graph.h"
#include "ir/dim_expr.h"
#include "ir/symbolic_graph.h"

namespace graft::detail {

struct PolymorphicSpec {
  std::vector<std::string> symbols;
  std::vector<std::vector<ir::DimExpr>> leaf_dims;  // per argument leaf ("_" resolved to the first call's size)
  std::vector<std::string> leaf_text;               // as written, for errors
  std::vector<ir::DimConstraint> constraints;       // the user's, besides every symbol >= 1
};

// Reads `specs` (shapes, one per leaf, and constraints) against the first
// call's leaves. Throws ShapeError for malformed text, a count or rank that
// does not match, or a symbol that no shape holds.
PolymorphicSpec parse_polymorphic_spec(const std::vector<std::string>& specs, const std::vector<ir::ValueType>& leaves);
// The symbols' values in a call with these leaves; throws ShapeError naming
// the leaf, its shape and its polymorphic shape, or the failing constraint.
std::vector<int64_t> bind_symbols(const PolymorphicSpec& spec, const std::vector<ir::ValueType>& leaves);

// What the function is traced at.
struct PolymorphicSamples {
  PolymorphicSpec spec;
  std::vector<std::vector<int64_t>> points;  // ir::sample_points' order
};

struct PolymorphicExecutable {
  PolymorphicSpec spec;
  ir::SymbolicGraph program;                // the fused program
  std::shared_ptr<const Executable> first;  // at the first sample point: holds the compiled module
  JitOptions options;
  std::vector<bool> donated;
  int64_t traced_nodes = 0;
  std::vector<int64_t> first_point;  // the symbols' values at the first sample
  Graph traced;                      // the trace at the first sample, with its symbolic dimensions
  std::optional<ir::SymbolicGraph> traced_program;  // the traces fitted (nullopt: only the fused programs fit)
  std::vector<std::optional<codegen::cpu::KernelSource>>
      generic;  // by node: a kernel that serves every size (codegen/cpu)

  // The executable at these symbol values (made on first use, a few kept).
  std::shared_ptr<const Executable> instance(const std::vector<int64_t>& values) const;
  size_t instances_made() const;

  // Whether f's program at these sizes is still to be checked against the
  // symbolic one: f is traced once more at each new size (C++ cannot hand f
  // symbolic sizes, so a function that branches on a size no sample met
  // would otherwise run the wrong program there).
  bool needs_check(const std::vector<int64_t>& values) const;
  // Checks `traced` (f at these sizes); where it differs, these sizes run an
  // executable compiled from it from now on, and a warning says where.
  void check(const std::vector<int64_t>& values, const Graph& traced) const;
  size_t sizes_differing() const;

 private:
  friend std::string polymorphic_text(const PolymorphicExecutable& poly);
  struct Instance {
    std::vector<int64_t> values;
    std::shared_ptr<const Executable> exe;
    bool with_kernels = false;  // made once the first sample's module was loaded
  };
  static constexpr size_t kKeep = 64;  // instances kept, most recently used first
  mutable std::mutex mu_;
  mutable std::list<Instance> recent_;
  mutable size_t made_ = 0;
  mutable std::set<std::vector<int64_t>> checked_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Executable>> own_;  // sizes whose trace differs
  // own_'s sizes, oldest first: at most kKeep are kept (a size evicted is
  // checked, traced and compiled again when it comes back), so a function
  // that differs at every size does not grow without bound.
  mutable std::list<std::vector<int64_t>> own_order_;
  mutable size_t differing_ = 0;  // sizes ever found to differ
};

// The lines executable_text adds for a polymorphic executable: its symbols,
// constraints, instances, and the program's inputs and outputs with symbolic dimensions.
std::string polymorphic_text(const PolymorphicExecutable& poly);

}  // namespace graft::detail
