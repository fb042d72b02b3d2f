#include "ir/dim_expr.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "graft/errors.h"

namespace graft::ir {

namespace {

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw ShapeError(std::string("dimension expression overflows in ") + what);
  return r;
}
int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw ShapeError(std::string("dimension expression overflows in ") + what);
  return r;
}

}  // namespace

DimExpr DimExpr::constant(int64_t value) { return from_terms({{0, value}}); }
DimExpr DimExpr::symbol(int index) { return from_terms({{uint32_t{1} << index, 1}}); }

DimExpr DimExpr::from_terms(std::vector<Term> terms) {
  std::map<uint32_t, int64_t> by;
  for (const Term& t : terms) by[t.symbols] = checked_add(by[t.symbols], t.coeff, "a sum");
  DimExpr e;
  for (const auto& [s, c] : by)
    if (c != 0) e.terms_.push_back({s, c});
  return e;
}

bool DimExpr::is_constant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].symbols == 0); }

int64_t DimExpr::constant_part() const { return !terms_.empty() && terms_[0].symbols == 0 ? terms_[0].coeff : 0; }

uint32_t DimExpr::symbols_used() const {
  uint32_t u = 0;
  for (const Term& t : terms_) u |= t.symbols;
  return u;
}

int64_t DimExpr::evaluate(const std::vector<int64_t>& values) const {
  int64_t sum = 0;
  for (const Term& t : terms_) {
    int64_t p = t.coeff;
    for (int i = 0; i < 32; ++i)
      if (t.symbols >> i & 1) p = checked_mul(p, values.at(static_cast<size_t>(i)), "evaluation");
    sum = checked_add(sum, p, "evaluation");
  }
  return sum;
}

std::string DimExpr::str(const std::vector<std::string>& names) const {
  if (terms_.empty()) return "0";
  std::string s;
  // Symbol terms first (in symbol order), the constant last: "2*b + 1".
  std::vector<Term> order(terms_.begin(), terms_.end());
  std::stable_sort(order.begin(), order.end(), [](const Term& a, const Term& b) {
    const int da = a.symbols ? __builtin_popcount(a.symbols) : 99, db = b.symbols ? __builtin_popcount(b.symbols) : 99;
    return da != db ? da < db : a.symbols < b.symbols;  // by degree, the constant last
  });
  for (const Term& t : order) {
    int64_t c = t.coeff;
    if (s.empty()) {
      if (c < 0) s += "-";
    } else {
      s += c < 0 ? " - " : " + ";
    }
    const int64_t mag = c < 0 ? -c : c;
    std::string factors;
    for (int i = 0; i < 32; ++i)
      if (t.symbols >> i & 1) {
        if (!factors.empty()) factors += "*";
        if (static_cast<size_t>(i) < names.size()) {
          factors += names[static_cast<size_t>(i)];
        } else {
          factors += 's';
          factors += std::to_string(i);
        }
      }
    if (factors.empty())
      s += std::to_string(mag);
    else if (mag == 1)
      s += factors;
    else {
      s += std::to_string(mag);
      s += '*';
      s += factors;
    }
  }
  return s;
}

DimExpr DimExpr::operator+(const DimExpr& o) const {
  std::vector<Term> all = terms_;
  all.insert(all.end(), o.terms_.begin(), o.terms_.end());
  return from_terms(std::move(all));
}
DimExpr DimExpr::operator-(const DimExpr& o) const { return *this + o.scaled(-1); }

DimExpr DimExpr::scaled(int64_t k) const {
  std::vector<Term> all = terms_;
  for (Term& t : all) t.coeff = checked_mul(t.coeff, k, "a product");
  return from_terms(std::move(all));
}

DimExpr DimExpr::operator*(const DimExpr& o) const {
  std::vector<Term> all;
  for (const Term& a : terms_)
    for (const Term& b : o.terms_) {
      if (a.symbols & b.symbols)
        throw ShapeError("dimension expressions are of degree at most one in each symbol: a product repeats one");
      all.push_back({a.symbols | b.symbols, checked_mul(a.coeff, b.coeff, "a product")});
    }
  return from_terms(std::move(all));
}

std::string symbol_values_str(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i) s += ", ";
    s += names[i];
    s += " = ";
    s += std::to_string(values[i]);
  }
  return s;
}

bool DimConstraint::holds(const std::vector<int64_t>& values) const {
  const int64_t a = lhs.evaluate(values), b = rhs.evaluate(values);
  switch (cmp) {
    case Cmp::ge: return a >= b;
    case Cmp::gt: return a > b;
    case Cmp::le: return a <= b;
    case Cmp::lt: return a < b;
    case Cmp::eq: return a == b;
  }
  return false;
}

namespace {

// Recursive descent over one expression: sum := product (('+'|'-') product)*,
// product := factor ('*' factor)*, factor := integer | name | '(' sum ')' | '-' factor.
class Parser {
 public:
  Parser(const std::string& text, std::vector<std::string>* symbols, const std::string& what)
      : s_(text), symbols_(symbols), what_(what) {}

  DimExpr whole() {
    DimExpr e = sum();
    skip();
    if (at_ < s_.size()) fail("unexpected '" + std::string(1, s_[at_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ShapeError(what_ + ": cannot read the dimension expression '" + s_ + "': " + why);
  }
  void skip() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool eat(char c) {
    skip();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  DimExpr sum() {
    DimExpr e = product();
    for (;;) {
      if (eat('+'))
        e = e + product();
      else if (eat('-'))
        e = e - product();
      else
        return e;
    }
  }
  DimExpr product() {
    DimExpr e = factor();
    while (eat('*')) {
      try {
        e = e * factor();
      } catch (const ShapeError& err) {
        fail(err.what());
      }
    }
    return e;
  }
  DimExpr factor() {
    skip();
    if (at_ >= s_.size()) fail("it ends where a number or a name is expected");
    const char c = s_[at_];
    if (eat('(')) {
      DimExpr e = sum();
      if (!eat(')')) fail("a '(' is not closed");
      return e;
    }
    if (eat('-')) return factor().scaled(-1);
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[at_] - '0', &v))
          fail("a number overflows");
        ++at_;
      }
      return DimExpr::constant(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = at_;
      while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
      std::string name = s_.substr(at_, end - at_);
      at_ = end;
      if (name == "_") fail("'_' stands for a whole dimension, not part of an expression");
      auto it = std::find(symbols_->begin(), symbols_->end(), name);
      if (it == symbols_->end()) {
        if (symbols_->size() >= 32) fail("more than 32 symbols");
        symbols_->push_back(name);
        it = symbols_->end() - 1;
      }
      return DimExpr::symbol(static_cast<int>(it - symbols_->begin()));
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  std::vector<std::string>* symbols_;
  std::string what_;
  size_t at_ = 0;
};

}  // namespace

DimExpr parse_dim_expr(const std::string& text, std::vector<std::string>* symbols, const std::string& what) {
  return Parser(text, symbols, what).whole();
}

bool is_dim_constraint(const std::string& text) { return text.find_first_of("<>=") != std::string::npos; }

DimConstraint parse_dim_constraint(const std::string& text, std::vector<std::string>* symbols) {
  static const std::pair<const char*, DimConstraint::Cmp> kOps[] = {{">=", DimConstraint::Cmp::ge},
                                                                    {"<=", DimConstraint::Cmp::le},
                                                                    {"==", DimConstraint::Cmp::eq},
                                                                    {">", DimConstraint::Cmp::gt},
                                                                    {"<", DimConstraint::Cmp::lt}};
  const std::string what = "polymorphic_shapes constraint '" + text + "'";
  for (const auto& [op, cmp] : kOps) {
    const size_t at = text.find(op);
    if (at == std::string::npos) continue;
    const std::string rest = text.substr(at + std::string(op).size());
    if (rest.find_first_of("<>=") != std::string::npos)
      throw ShapeError(what + ": one comparison per constraint (>=, >, <=, <, ==)");
    DimConstraint c;
    c.lhs = parse_dim_expr(text.substr(0, at), symbols, what);
    c.rhs = parse_dim_expr(rest, symbols, what);
    c.cmp = cmp;
    c.text = text;
    return c;
  }
  throw ShapeError(what + ": no comparison (>=, >, <=, <, ==)");
}

std::vector<DimExpr> parse_poly_shape(const std::string& text, std::vector<std::string>* symbols,
                                      std::vector<bool>* from_argument) {
  const std::string what = "polymorphic_shapes '" + text + "'";
  std::string body = text;
  auto trim = [](std::string s) {
    const size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  body = trim(body);
  if (!body.empty() && body.front() == '(') {
    if (body.back() != ')') throw ShapeError(what + ": a '(' is not closed");
    body = trim(body.substr(1, body.size() - 2));
  }
  std::vector<DimExpr> dims;
  from_argument->clear();
  if (body.empty()) return dims;
  // Split at top-level commas; a trailing comma ("(b,)") ends the list.
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : body) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || parts.empty()) parts.push_back(cur);
  for (const std::string& p : parts) {
    const std::string d = trim(p);
    if (d.empty()) throw ShapeError(what + ": an empty dimension");
    if (d == "...") throw ShapeError(what + ": '...' is not supported; write every dimension ('_' takes one as given)");
    if (d == "_") {
      dims.emplace_back();
      from_argument->push_back(true);
      continue;
    }
    dims.push_back(parse_dim_expr(d, symbols, what));
    from_argument->push_back(false);
  }
  return dims;
}

}  // namespace graft::ir
