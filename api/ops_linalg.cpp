// matmul and dot_general, lowered to the dot_general primitive.
#include <algorithm>
#include <cctype>
#include <map>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch, Loc loc) {
  DType d = ir::promote_types(a.dtype(), b.dtype());
  auto axes = [&](const std::vector<int>& v, int rank) {
    ir::Ints out;
    for (int x : v) out.push_back(detail::normalize_axis("dot_general", x, rank, loc));
    return out;
  };
  return detail::bind1(Op::dot_general, {detail::convert(a, d, loc), detail::convert(b, d, loc)},
                       {{"lhs_contracting", axes(contracting.first, a.ndim())},
                        {"rhs_contracting", axes(contracting.second, b.ndim())},
                        {"lhs_batch", axes(batch.first, a.ndim())},
                        {"rhs_batch", axes(batch.second, b.ndim())}},
                       loc);
}

// NumPy's matmul: 1-d operands gain (and then lose) an axis; leading axes
// broadcast. Lowered as jnp.matmul is: a leading axis both operands have
// (at one size) is a dot_general batch dimension; one only an operand has
// (or where the other's size is 1) is a free dimension of that operand, so
// x[B,T,D] @ w[D,F] is one product over B*T rows, and w is never broadcast
// to [B,D,F] (nor its gradient summed over B products).
Array matmul(const Array& a, const Array& b, Loc loc) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ShapeError("matmul: operands must have at least one axis, got " + detail::describe(a) + " and " +
                     detail::describe(b) + detail::where(loc));
  DType d = ir::promote_types(a.dtype(), b.dtype());
  Array x = detail::convert(a, d, loc), y = detail::convert(b, d, loc);
  bool a_vec = x.ndim() == 1, b_vec = y.ndim() == 1;
  if (a_vec) x = reshape(x, {1, x.shape()[0]}, loc);
  if (b_vec) y = reshape(y, {y.shape()[0], 1}, loc);
  int64_t k_a = x.shape().back(), k_b = y.shape()[y.ndim() - 2];
  if (k_a != k_b)
    throw ShapeError("matmul: contracting sizes differ: " + detail::describe(a) + " @ " + detail::describe(b) +
                     detail::where(loc));
  const Shape xb(x.shape().begin(), x.shape().end() - 2), yb(y.shape().begin(), y.shape().end() - 2);
  const Shape batch = detail::broadcast_shapes("matmul", std::vector<Shape>{xb, yb}, loc);
  const int nb = static_cast<int>(batch.size());
  const int x_off = nb - static_cast<int>(xb.size()), y_off = nb - static_cast<int>(yb.size());
  // Each broadcast axis i: a batch pair, a free axis of x or of y, or of size 1 in the result.
  enum class Role { batch, x_free, y_free, one };
  std::vector<Role> role(static_cast<size_t>(nb));
  Shape xs, ys;  // the operands without the size-1 axes the other broadcasts over
  std::vector<int> x_at(static_cast<size_t>(nb), -1), y_at(static_cast<size_t>(nb), -1);  // axis i in xs, ys
  for (int i = 0; i < nb; ++i) {
    const int64_t sx = i >= x_off ? xb[size_t(i - x_off)] : -1, sy = i >= y_off ? yb[size_t(i - y_off)] : -1;
    Role& r = role[size_t(i)];
    if (sx >= 0 && sy >= 0 && sx == sy)
      r = Role::batch;
    else if (sx >= 0 && sx != 1)  // y's size there is 1, or y has no such axis
      r = Role::x_free;
    else if (sy >= 0 && sy != 1)
      r = Role::y_free;
    else
      r = Role::one;
    if (r == Role::batch || r == Role::x_free) {
      x_at[size_t(i)] = static_cast<int>(xs.size());
      xs.push_back(sx);
    }
    if (r == Role::batch || r == Role::y_free) {
      y_at[size_t(i)] = static_cast<int>(ys.size());
      ys.push_back(sy);
    }
  }
  const int xm = static_cast<int>(xs.size()), yk = static_cast<int>(ys.size());
  xs.insert(xs.end(), x.shape().end() - 2, x.shape().end());
  ys.insert(ys.end(), y.shape().end() - 2, y.shape().end());
  if (xs != x.shape()) x = reshape(x, xs, loc);  // drops size-1 axes only
  if (ys != y.shape()) y = reshape(y, ys, loc);
  ir::Ints lb, rb;
  for (int i = 0; i < nb; ++i)
    if (role[size_t(i)] == Role::batch) {
      lb.push_back(x_at[size_t(i)]);
      rb.push_back(y_at[size_t(i)]);
    }
  Array r = detail::bind1(
      Op::dot_general, {x, y},
      {{"lhs_contracting", ir::Ints{xm + 1}}, {"rhs_contracting", ir::Ints{yk}}, {"lhs_batch", lb}, {"rhs_batch", rb}},
      loc);
  // dot_general's result: the batch axes, x's free axes (then m), y's (then n).
  const int n_batch = static_cast<int>(lb.size());
  const int n_xfree = xm - n_batch + 1;
  std::vector<int> perm;
  int bi = 0, xi = 0, yi = 0;
  for (int i = 0; i < nb; ++i) {
    switch (role[size_t(i)]) {
      case Role::batch: perm.push_back(bi++); break;
      case Role::x_free: perm.push_back(n_batch + xi++); break;
      case Role::y_free: perm.push_back(n_batch + n_xfree + yi++); break;
      case Role::one: break;
    }
  }
  perm.push_back(n_batch + n_xfree - 1);           // m
  perm.push_back(static_cast<int>(r.ndim()) - 1);  // n
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int>(i);
  if (!identity) r = transpose(r, perm, loc);
  Shape out = batch;
  if (!a_vec) out.push_back(x.shape()[size_t(xm)]);
  if (!b_vec) out.push_back(y.shape()[size_t(yk + 1)]);
  return r.shape() == out ? r : reshape(r, out, loc);
}

}  // namespace graft

namespace graft {

// NumPy's dot: sum over the last axis of a and the second-to-last of b (the only axis of a 1-d b).
Array dot(const Array& a, const Array& b, Loc loc) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  if (a.ndim() <= 2 && b.ndim() <= 2) return matmul(a, b, loc);
  int bk = b.ndim() == 1 ? 0 : b.ndim() - 2;
  return dot_general(a, b, {{a.ndim() - 1}, {bk}}, {}, loc);
}

namespace {

struct EinsumTerm {
  std::string letters;
  Array value;
};

// Replaces each letter repeated within t by one axis, its diagonal: the two
// axes moved last and flattened, every (n+1)-th element of the n*n is the
// diagonal (a strided slice, so linear and cheap under every transform).
EinsumTerm take_diagonals(EinsumTerm t, const Loc& loc) {
  for (size_t p = 0; p < t.letters.size(); ++p) {
    size_t q = t.letters.find(t.letters[p], p + 1);
    if (q == std::string::npos) continue;
    std::vector<int> perm;
    std::string letters;
    for (size_t i = 0; i < t.letters.size(); ++i)
      if (i != p && i != q) {
        perm.push_back(static_cast<int>(i));
        letters += t.letters[i];
      }
    perm.push_back(static_cast<int>(p));
    perm.push_back(static_cast<int>(q));
    Array moved = transpose(t.value, perm, loc);
    Shape flat(moved.shape().begin(), moved.shape().end() - 2);
    int64_t n = moved.shape().back();
    flat.push_back(n * n);
    Array square = reshape(moved, flat, loc);
    Shape start(flat.size(), 0), stop = flat, step(flat.size(), 1);
    step.back() = n + 1;
    t = {letters + t.letters[p], slice(square, start, stop, step, loc)};
    p = static_cast<size_t>(-1);  // rescan: a letter may repeat three times
  }
  return t;
}

// Sums out letters of `t` that appear in no other operand and not in the output.
EinsumTerm reduce_private(EinsumTerm t, const std::string& keep, const Loc& loc) {
  std::vector<int> axes;
  std::string rest;
  for (size_t i = 0; i < t.letters.size(); ++i) {
    if (keep.find(t.letters[i]) == std::string::npos) axes.push_back(static_cast<int>(i));
    else rest += t.letters[i];
  }
  if (!axes.empty()) t.value = sum(t.value, axes, false, loc);
  t.letters = rest;
  return t;
}

// Contracts two terms: shared letters kept later become batch dims, others are contracted.
EinsumTerm contract(const EinsumTerm& a, const EinsumTerm& b, const std::string& keep, const Loc& loc) {
  std::vector<int> ab, bb, ac, bc;
  std::string batch, afree, bfree;
  for (size_t i = 0; i < a.letters.size(); ++i) {
    char c = a.letters[i];
    size_t j = b.letters.find(c);
    if (j == std::string::npos) {
      afree += c;
    } else if (keep.find(c) != std::string::npos) {
      ab.push_back(static_cast<int>(i));
      bb.push_back(static_cast<int>(j));
      batch += c;
    } else {
      ac.push_back(static_cast<int>(i));
      bc.push_back(static_cast<int>(j));
    }
  }
  for (char c : b.letters)
    if (a.letters.find(c) == std::string::npos) bfree += c;
  return {batch + afree + bfree, dot_general(a.value, b.value, {ac, bc}, {ab, bb}, loc)};
}

}  // namespace

Array einsum(const std::string& spec, const std::vector<Array>& operands, Loc loc) {
  auto bad = [&](const std::string& what) -> ShapeError {
    return ShapeError("einsum: " + what + " in \"" + spec + "\"" + detail::where(loc));
  };
  std::string s;
  for (char c : spec)
    if (c != ' ') s += c;
  size_t arrow = s.find("->");
  std::string lhs = s.substr(0, arrow);
  std::vector<std::string> inputs(1);
  for (char c : lhs) {
    if (c == ',') inputs.emplace_back();
    else if (std::isalpha(static_cast<unsigned char>(c))) inputs.back() += c;
    else throw bad(std::string("unexpected character '") + c + "'");
  }
  if (inputs.size() != operands.size())
    throw bad(std::to_string(inputs.size()) + " operand terms for " + std::to_string(operands.size()) + " arrays");
  std::string out;
  if (arrow == std::string::npos) {
    for (char c = 'A'; c <= 'z'; ++c) {
      int count = 0;
      for (const std::string& t : inputs) count += static_cast<int>(std::count(t.begin(), t.end(), c));
      if (count == 1) out += c;
    }
  } else {
    out = s.substr(arrow + 2);
    for (char c : out) {
      if (!std::isalpha(static_cast<unsigned char>(c))) throw bad(std::string("unexpected character '") + c + "'");
      if (std::count(out.begin(), out.end(), c) > 1) throw bad(std::string("output letter '") + c + "' repeated");
      if (lhs.find(c) == std::string::npos) throw bad(std::string("output letter '") + c + "' is in no operand");
    }
  }
  // Sizes must agree per letter, also for a letter repeated inside one operand (a diagonal).
  std::map<char, int64_t> sizes;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string& t = inputs[k];
    if (static_cast<int>(t.size()) != operands[k].ndim())
      throw bad("term '" + t + "' has " + std::to_string(t.size()) + " letters for " + detail::describe(operands[k]));
    for (size_t i = 0; i < t.size(); ++i) {
      auto [it, fresh] = sizes.emplace(t[i], operands[k].shape()[i]);
      if (!fresh && it->second != operands[k].shape()[i])
        throw bad(std::string("letter '") + t[i] + "' has sizes " + std::to_string(it->second) + " and " +
                  std::to_string(operands[k].shape()[i]));
    }
  }
  // Contract left to right; a letter stays while a later operand or the output needs it.
  auto needed_after = [&](size_t k) {
    std::string keep = out;
    for (size_t j = k; j < inputs.size(); ++j) keep += inputs[j];
    return keep;
  };
  EinsumTerm acc = reduce_private(take_diagonals({inputs[0], operands[0]}, loc), needed_after(1), loc);
  for (size_t k = 1; k < operands.size(); ++k) {
    std::string keep = needed_after(k + 1);
    EinsumTerm next = reduce_private(take_diagonals({inputs[k], operands[k]}, loc), keep + acc.letters, loc);
    acc = contract(acc, next, keep, loc);
  }
  acc = reduce_private(acc, out, loc);
  std::vector<int> perm;
  for (char c : out) perm.push_back(static_cast<int>(acc.letters.find(c)));
  return transpose(acc.value, perm, loc);
}

// ---- DotOptions: the product in the wider of the operands' dtype and the
// preferred one, converted to the preferred one.

namespace {

template <class Product>
Array with_options(const Array& a, const Array& b, const DotOptions& options, const Loc& loc, Product product) {
  if (!options.preferred_element_type) return product(a, b);
  const DType preferred = *options.preferred_element_type;
  const DType d = ir::promote_types(a.dtype(), b.dtype());
  const DType compute = ir::promote_types(d, preferred) == preferred ? preferred : d;
  const Array r = product(detail::convert(a, compute, loc), detail::convert(b, compute, loc));
  return detail::convert(r, preferred, loc);
}

}  // namespace

Array matmul(const Array& a, const Array& b, DotOptions options, Loc loc) {
  return with_options(a, b, options, loc, [&](const Array& x, const Array& y) { return matmul(x, y, loc); });
}

Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch, DotOptions options, Loc loc) {
  return with_options(a, b, options, loc,
                      [&](const Array& x, const Array& y) { return dot_general(x, y, contracting, batch, loc); });
}

Array einsum(const std::string& spec, const std::vector<Array>& operands, DotOptions options, Loc loc) {
  if (!options.preferred_element_type || operands.empty()) return einsum(spec, operands, loc);
  const DType preferred = *options.preferred_element_type;
  DType d = operands[0].dtype();
  for (const Array& x : operands) d = ir::promote_types(d, x.dtype());
  const DType compute = ir::promote_types(d, preferred) == preferred ? preferred : d;
  std::vector<Array> converted;
  for (const Array& x : operands) converted.push_back(detail::convert(x, compute, loc));
  return detail::convert(einsum(spec, converted, loc), preferred, loc);
}

}  // namespace graft
