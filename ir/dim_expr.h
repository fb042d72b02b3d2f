// Symbolic dimensions: a dimension of a shape-polymorphic program is an
// expression over named symbols ("b", "2*b", "b*t", "b + 1"), a polynomial
// of degree at most one in each symbol with integer coefficients. That covers
// what programs do with sizes in practice (batch dimensions, flattening
// (b, t, d) into (b*t, d), concatenation, padding) and is what a symbol's
// value can be solved from at call time. Constraints relate two expressions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graft::ir {

// A sum of terms coeff * s_i * s_j * ... (each symbol at most once per term);
// symbols are indices into a table of names held by whoever uses the
// expression.
class DimExpr {
 public:
  struct Term {
    uint32_t symbols = 0;  // bit i: symbol i is a factor (at most 32 symbols)
    int64_t coeff = 0;
    bool operator==(const Term&) const = default;
  };

  DimExpr() = default;
  static DimExpr constant(int64_t value);
  static DimExpr symbol(int index);
  // From coefficients by term: terms with a zero coefficient are dropped.
  static DimExpr from_terms(std::vector<Term> terms);

  const std::vector<Term>& terms() const { return terms_; }  // sorted by symbols, nonzero coefficients
  bool is_constant() const;
  int64_t constant_part() const;
  uint32_t symbols_used() const;  // the union of the terms' symbol bits
  // Its value for these symbol values; throws graft::ShapeError on overflow.
  int64_t evaluate(const std::vector<int64_t>& values) const;
  // "2*b + 1", with the given names; "0" for the zero expression.
  std::string str(const std::vector<std::string>& names) const;

  DimExpr operator+(const DimExpr& other) const;
  DimExpr operator-(const DimExpr& other) const;
  DimExpr scaled(int64_t k) const;
  // The product; throws graft::ShapeError when a symbol would appear twice in a term (b*b).
  DimExpr operator*(const DimExpr& other) const;
  bool operator==(const DimExpr&) const = default;

 private:
  std::vector<Term> terms_;
};

// A comparison of two dimension expressions: "b >= 1", "b <= 1024", "t == 2*b".
struct DimConstraint {
  enum class Cmp { ge, gt, le, lt, eq };
  DimExpr lhs, rhs;
  Cmp cmp = Cmp::ge;
  std::string text;  // as the user wrote it, for errors
  bool holds(const std::vector<int64_t>& values) const;
};

// "b = 17, t = 29": symbols with their values, for messages.
std::string symbol_values_str(const std::vector<std::string>& names, const std::vector<int64_t>& values);

// Parses an expression over the names in *symbols, adding new names at the
// end (at most 32). Grammar: sums and differences of products of integers
// and names ("2*b", "b*t", "b + 1", "(b - 1)"); names are [A-Za-z_][A-Za-z0-9_]*.
// Throws graft::ShapeError naming `what` and the offending text.
DimExpr parse_dim_expr(const std::string& text, std::vector<std::string>* symbols, const std::string& what);
// True when `text` is a constraint (holds >=, <=, ==, > or <) rather than a shape.
bool is_dim_constraint(const std::string& text);
DimConstraint parse_dim_constraint(const std::string& text, std::vector<std::string>* symbols);
// A polymorphic shape in JAX's syntax: "(b, 784)", "b, 784", "(b,)", "()",
// with "_" for a dimension taken from the actual argument (returned as an
// empty expression list entry flagged in *from_argument).
std::vector<DimExpr> parse_poly_shape(const std::string& text, std::vector<std::string>* symbols,
                                      std::vector<bool>* from_argument);

}  // namespace graft::ir
