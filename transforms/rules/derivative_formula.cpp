// DERIVATIVE("formula"), ops.def's standard JVP rule of a unary op: the
// tangent is t * formula, where the formula is written in
//   x, y          the operand and the op's result
//   numbers       1, 0.5, -0.5, 1.1283791670955126 (as C++ reads a double)
//   + - * /       with the usual precedence, and unary minus
//   f(e)          any unary op by its ops.def name (cos, rsqrt, square, ...)
// and emits graft's own ops, so higher derivatives come free. Each op's
// formula is parsed once, at first use; a malformed one is an error
// naming the op (tests/ir/op_table_test.cpp parses every formula).
#include <array>
#include <charconv>
#include <memory>
#include <mutex>
#include <string>

#include "graft/errors.h"
#include "transforms/rules/derivative_formula.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

using ir::Op;

struct Formula {
  enum Kind { x, y, number, call, neg, add, sub, mul, div } kind;
  double value = 0;  // number
  Op op{};           // call
  std::unique_ptr<Formula> a, b;
};

namespace {

class Parser {
 public:
  Parser(std::string_view text, Op op) : s_(text), op_(op) {}

  std::unique_ptr<Formula> parse() {
    auto f = sum();
    skip();
    if (k_ != s_.size()) fail("unexpected '" + std::string(1, s_[k_]) + "'");
    return f;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("ops.def: the DERIVATIVE formula of " + std::string(ir::op_name(op_)) + " (\"" +
                        std::string(s_) + "\"): " + what + " at character " + std::to_string(k_));
  }
  void skip() {
    while (k_ < s_.size() && s_[k_] == ' ') ++k_;
  }
  bool eat(char c) {
    skip();
    if (k_ < s_.size() && s_[k_] == c) {
      ++k_;
      return true;
    }
    return false;
  }
  static std::unique_ptr<Formula> node(Formula::Kind kind, std::unique_ptr<Formula> a = nullptr,
                                       std::unique_ptr<Formula> b = nullptr) {
    auto f = std::make_unique<Formula>();
    f->kind = kind;
    f->a = std::move(a);
    f->b = std::move(b);
    return f;
  }
  // Folds arithmetic on two numbers, so "2 * 0.5" is one constant node.
  static std::unique_ptr<Formula> binary(Formula::Kind kind, std::unique_ptr<Formula> a, std::unique_ptr<Formula> b) {
    if (a->kind == Formula::number && b->kind == Formula::number) {
      double v = kind == Formula::add   ? a->value + b->value
                 : kind == Formula::sub ? a->value - b->value
                 : kind == Formula::mul ? a->value * b->value
                                        : a->value / b->value;
      a->value = v;
      return a;
    }
    return node(kind, std::move(a), std::move(b));
  }
  std::unique_ptr<Formula> sum() {
    auto f = product();
    for (;;) {
      if (eat('+')) f = binary(Formula::add, std::move(f), product());
      else if (eat('-')) f = binary(Formula::sub, std::move(f), product());
      else return f;
    }
  }
  std::unique_ptr<Formula> product() {
    auto f = unary();
    for (;;) {
      if (eat('*')) f = binary(Formula::mul, std::move(f), unary());
      else if (eat('/')) f = binary(Formula::div, std::move(f), unary());
      else return f;
    }
  }
  std::unique_ptr<Formula> unary() {
    if (eat('-')) {
      auto f = unary();
      if (f->kind == Formula::number) {
        f->value = -f->value;
        return f;
      }
      return node(Formula::neg, std::move(f));
    }
    return atom();
  }
  std::unique_ptr<Formula> atom() {
    skip();
    if (eat('(')) {
      auto f = sum();
      if (!eat(')')) fail("expected ')'");
      return f;
    }
    if (k_ < s_.size() && ((s_[k_] >= '0' && s_[k_] <= '9') || s_[k_] == '.')) {
      auto f = node(Formula::number);
      auto [end, ec] = std::from_chars(s_.data() + k_, s_.data() + s_.size(), f->value);
      if (ec != std::errc()) fail("a malformed number");
      k_ = static_cast<size_t>(end - s_.data());
      return f;
    }
    size_t start = k_;
    while (k_ < s_.size() && ((s_[k_] >= 'a' && s_[k_] <= 'z') || (s_[k_] >= '0' && s_[k_] <= '9') || s_[k_] == '_'))
      ++k_;
    std::string_view name = s_.substr(start, k_ - start);
    if (name.empty()) fail("expected a number, x, y, a call or '('");
    if (name == "x") return node(Formula::x);
    if (name == "y") return node(Formula::y);
    std::optional<Op> op = ir::op_from_name(name);
    if (!op || ir::op_info(*op).arity != 1) fail("'" + std::string(name) + "' is not a unary op");
    if (!eat('(')) fail("expected '(' after " + std::string(name));
    auto f = node(Formula::call, sum());
    f->op = *op;
    if (!eat(')')) fail("expected ')'");
    return f;
  }

  std::string_view s_;
  size_t k_ = 0;
  Op op_;
};

ValueId emit(JvpCtx& c, const Formula& f, ValueId x, ValueId y) {
  switch (f.kind) {
    case Formula::x: return x;
    case Formula::y: return y;
    case Formula::number: return c.scalar_like(f.value, x);
    case Formula::call: return c.add(f.op, {emit(c, *f.a, x, y)});
    case Formula::neg: return c.add(Op::neg, {emit(c, *f.a, x, y)});
    default: break;
  }
  ValueId a = emit(c, *f.a, x, y), b = emit(c, *f.b, x, y);
  Op op = f.kind == Formula::add ? Op::add : f.kind == Formula::sub ? Op::sub : f.kind == Formula::mul ? Op::mul : Op::div;
  return c.add(op, {a, b});
}

}  // namespace

const Formula& derivative_formula(Op op) {
  static std::array<std::unique_ptr<Formula>, ir::kNumOps> parsed;
  static std::array<std::once_flag, ir::kNumOps> once;
  const size_t i = static_cast<size_t>(op);
  const ir::JvpSpec& spec = ir::op_info(op).jvp;
  if (spec.kind != ir::JvpKind::derivative)
    throw Error(std::string(ir::op_name(op)) + " has no DERIVATIVE formula in ops.def");
  std::call_once(once[i], [&] { parsed[i] = Parser(spec.text, op).parse(); });
  return *parsed[i];
}

ir::IdList derivative_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  const Formula& f = derivative_formula(c.node().op);
  return {c.tmul(c.tangents[0], emit(c, f, c.primals[0], c.outputs[0]))};
}

}  // namespace graft::transforms
