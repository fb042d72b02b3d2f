// A shape-polymorphic graph: one program whose numbers that depend on sizes
// (dimensions of values, size-like attributes such as reshape's sizes or
// slice limits, and scalar constants that hold a size or its reciprocal,
// such as the count mean divides by and the 1/n its gradient multiplies by)
// are dimension expressions over symbols (ir/dim_expr.h).
//
// How the expressions are found: the program is traced at a few sample
// points (sizes for every symbol) and the graphs compared number by number.
// Every number is a polynomial of degree at most one in each symbol, so its
// values at the 2^k corners of two sizes per symbol determine it; a further
// point with every symbol at a third size checks it. Anything else that
// differs between the samples (an op, a constant array whose size depends on
// a symbol, a number that is not such a polynomial, as b // 2) means the
// program is not one program for every size, and is refused naming the node
// (as JAX refuses a comparison of symbolic dimensions it cannot decide).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dim_expr.h"
#include "ir/graph.h"

namespace graft::ir {

struct SymbolicGraph {
  GraphPtr base;                     // the program at the first sample point
  std::vector<std::string> symbols;  // names, by symbol index
  std::vector<DimExpr> numbers;      // every number of base, in the order graph_numbers visits them
  size_t symbolic_count = 0;         // how many of them depend on a symbol
};

// The sample points for k symbols, from three distinct sizes per symbol
// (first[s], second[s], third[s]): the 2^k corners (point m takes second[s]
// where bit s of m is set, else first[s]), then the check point (third).
std::vector<std::vector<int64_t>> sample_points(const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                                                const std::vector<int64_t>& third);

// The symbolic graph of `samples` traced at `points` (as sample_points
// makes them). Throws graft::ShapeError naming the first node at which the
// samples differ in something other than a fitting number.
SymbolicGraph fit_symbolic_graph(const std::vector<GraphPtr>& samples, const std::vector<std::vector<int64_t>>& points,
                                 std::vector<std::string> symbols);

// The program at these symbol values: base with every number evaluated.
GraphPtr instantiate(const SymbolicGraph& g, const std::vector<int64_t>& values);

// Where `sample` (the program traced at these symbol values) differs from
// g's program at them: the first node and what differs there; nullopt when
// it is that program. (Sampling cannot see a function that branches on a
// size it was not traced at: this check at each new size can.)
std::optional<std::string> symbolic_mismatch(const SymbolicGraph& g, const Graph& sample,
                                             const std::vector<int64_t>& values);

// Each value's dimensions as the symbolic graph knows them, in the order of
// the walk: for the text and JSON views. Keyed by the value's id in the top-level graph.
std::vector<std::pair<ValueId, std::vector<DimExpr>>> symbolic_value_dims(const SymbolicGraph& g);

// "f32[b,784]": a type with symbolic dimensions.
std::string symbolic_type_str(DType dtype, const std::vector<DimExpr>& dims, const std::vector<std::string>& symbols);

}  // namespace graft::ir
