// libFuzzer target: random op sequences through the public API. The bytes
// make a few arrays (random shapes with 0-size and size-1 axes, every dtype,
// special values) and then a program of up to 24 calls drawn from graft's
// NumPy-named ops with random axes, shapes, widths, indices and dtypes,
// extremes included. Every failure must be a graft::Error; a crash, another
// exception, a hang or a leak is a finding. Each result joins the pool the
// next calls draw from, and every result is read back (to_vector), so lazy
// paths run too.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "fuzz_setup.h"
#include "graft/graft.h"

using namespace graft;
using graft_fuzz::FuzzInput;

namespace {

constexpr DType kDTypes[] = {DType::bool_, DType::i32, DType::i64, DType::u32, DType::f32, DType::f64};

using Unary = Array (*)(ArrayAt);
const Unary kUnary[] = {neg,  abs,  sign, floor, ceil, round, exp,  log,  log1p,    expm1,   sqrt,       rsqrt,
                        sin,  cos,  tan,  asin,  acos, atan,  sinh, cosh, tanh,     logistic, sigmoid,   erf,
                        square, reciprocal, isfinite, logical_not, stop_gradient};

DType dtype(FuzzInput& in) { return kDTypes[in.pick(6)]; }

Shape shape(FuzzInput& in, int max_rank = 3) {
  Shape s(static_cast<size_t>(in.pick(max_rank + 1)));
  for (int64_t& d : s) d = in.pick(5);  // 0 .. 4
  return s;
}

// An attribute-like shape: small sizes, with an extreme now and then.
Shape wild_shape(FuzzInput& in) {
  Shape s(static_cast<size_t>(in.pick(4)));
  for (int64_t& d : s) d = in.small(1, 5);
  return s;
}

std::vector<int> axes(FuzzInput& in) {
  std::vector<int> a(static_cast<size_t>(in.pick(4)));
  for (int& x : a) x = static_cast<int>(in.small(4, 4));
  return a;
}

Array make_array(FuzzInput& in) {
  const DType t = dtype(in);
  const Shape s = shape(in);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = in.value();
  // Built as f64 and converted: the conversion's own rules (NaN to int, ...) are under test too.
  return astype(array(v, s), t);
}

// One call; its results join the pool.
void step(FuzzInput& in, std::vector<Array>& pool) {
  auto any = [&]() -> const Array& { return pool[static_cast<size_t>(in.pick(static_cast<int>(pool.size())))]; };
  const Array& x = any();
  const Array& y = any();
  std::vector<Array> out;
  const int call = in.pick(40);
  static const bool trace = std::getenv("GRAFT_FUZZ_TRACE") != nullptr;  // which calls an input makes
  if (trace) {
    auto dims = [](const Array& a) {
      std::string s;
      for (int64_t d : a.shape()) s += std::to_string(d) + ",";
      return "[" + s + "]";
    };
    std::fprintf(stderr, "call %d on %s and %s\n", call, dims(x).c_str(), dims(y).c_str());
  }
  switch (call) {
    case 0: out.push_back(kUnary[in.pick(static_cast<int>(std::size(kUnary)))](x)); break;
    case 1: {
      switch (in.pick(10)) {
        case 0: out.push_back(x + y); break;
        case 1: out.push_back(x - y); break;
        case 2: out.push_back(x * y); break;
        case 3: out.push_back(x / y); break;
        case 4: out.push_back(x < y); break;
        case 5: out.push_back(x == y); break;
        case 6: out.push_back(pow(x, y)); break;
        case 7: out.push_back(maximum(x, y)); break;
        case 8: out.push_back(atan2(x, y)); break;
        default: out.push_back(logical_or(x, y)); break;
      }
      break;
    }
    case 2: out.push_back(x * in.value()); break;
    case 3: out.push_back(pow(x, in.value())); break;
    case 4: out.push_back(where(x, y, any())); break;
    case 5: out.push_back(clip(x, in.value(), in.value())); break;
    case 6: out.push_back(astype(x, dtype(in))); break;
    case 7: {
      const bool keep = in.flip();
      switch (in.pick(9)) {
        case 0: out.push_back(sum(x, axes(in), keep)); break;
        case 1: out.push_back(mean(x, axes(in), keep)); break;
        case 2: out.push_back(max(x, axes(in), keep)); break;
        case 3: out.push_back(min(x, axes(in), keep)); break;
        case 4: out.push_back(prod(x, axes(in), keep)); break;
        case 5: out.push_back(all(x, axes(in), keep)); break;
        case 6: out.push_back(var(x, axes(in), keep, static_cast<int>(in.small(1, 3)))); break;
        case 7: out.push_back(logsumexp(x, axes(in), keep)); break;
        default: out.push_back(graft::any(x, axes(in), keep)); break;
      }
      break;
    }
    case 8: out.push_back(in.flip() ? argmax(x, static_cast<int>(in.small(4, 4))) : argmin(x, static_cast<int>(in.small(4, 4)))); break;
    case 9: out.push_back(in.flip() ? softmax(x, axes(in)) : log_softmax(x, axes(in))); break;
    case 10: {
      const int axis = static_cast<int>(in.small(4, 4));
      const bool reverse = in.flip();
      switch (in.pick(4)) {
        case 0: out.push_back(cumsum(x, axis, reverse)); break;
        case 1: out.push_back(cumprod(x, axis, reverse)); break;
        case 2: out.push_back(cummax(x, axis, reverse)); break;
        default: out.push_back(cummin(x, axis, reverse)); break;
      }
      break;
    }
    case 11: out.push_back(reshape(x, wild_shape(in))); break;
    case 12: {
      std::vector<int> perm(static_cast<size_t>(in.pick(4)));
      for (int& p : perm) p = static_cast<int>(in.small(3, 3));
      out.push_back(transpose(x, perm));
      break;
    }
    case 13: out.push_back(broadcast_to(x, wild_shape(in))); break;
    case 14: out.push_back(expand_dims(x, static_cast<int>(in.small(4, 4)))); break;
    case 15: out.push_back(squeeze(x, axes(in))); break;
    case 16: out.push_back(concatenate({x, y}, static_cast<int>(in.small(3, 3)))); break;
    case 17: out.push_back(stack({x, y}, static_cast<int>(in.small(3, 3)))); break;
    case 18: out.push_back(flip(x, axes(in))); break;
    case 19: {
      Shape a = wild_shape(in), b = wild_shape(in), c;
      if (in.flip()) c = wild_shape(in);
      out.push_back(slice(x, a, b, c));
      break;
    }
    case 20: {
      std::vector<std::pair<int64_t, int64_t>> w(static_cast<size_t>(in.pick(4)));
      for (auto& [lo, hi] : w) lo = in.small(3, 3), hi = in.small(3, 3);
      out.push_back(pad(x, w, in.value()));
      break;
    }
    case 21: {
      // The count of sections stays small: split(empty, 2^31) is 2^31 empty arrays, as NumPy, not a bug.
      if (in.flip()) out = split(x, SplitSections(in.small(1, 4) % 64), static_cast<int>(in.small(3, 3)));
      else out = split(x, std::vector<int64_t>{in.small(2, 5), in.small(2, 5)}, static_cast<int>(in.small(3, 3)));
      break;
    }
    case 22: out.push_back(tile(x, wild_shape(in))); break;
    case 23: out.push_back(in.flip() ? repeat(x, in.small(1, 3), static_cast<int>(in.small(3, 3))) : repeat(x, in.small(1, 3))); break;
    case 24: out.push_back(outer(x, y)); break;
    case 25: {
      const double a = in.value(), b = in.value(), s = in.value();
      out.push_back(in.flip() ? arange(a, b, s) : arange(a, b, s, dtype(in)));
      break;
    }
    case 26: {
      std::vector<Array> start;
      for (int k = in.pick(4); k > 0; --k) start.push_back(any());
      out.push_back(dynamic_slice(x, start, wild_shape(in)));
      break;
    }
    case 27: {
      std::vector<Array> start;
      for (int k = in.pick(4); k > 0; --k) start.push_back(any());
      out.push_back(dynamic_update_slice(x, y, start));
      break;
    }
    case 28: out.push_back(take(x, y, static_cast<int>(in.small(3, 3)))); break;
    case 29: out.push_back(scatter_add(x, y, any(), static_cast<int>(in.small(3, 3)))); break;
    case 30: out.push_back(in.flip() ? sort(x, static_cast<int>(in.small(3, 3))) : argsort(x, static_cast<int>(in.small(3, 3)))); break;
    case 31: out.push_back(one_hot(x, in.small(1, 5), dtype(in))); break;
    case 32: out.push_back(in.flip() ? matmul(x, y) : dot(x, y)); break;
    case 33: {
      // A spec over a small alphabet, with or without an explicit output.
      const char letters[] = "ijk.-> ,";
      std::string spec;
      for (int k = in.pick(12); k > 0; --k) spec += letters[in.pick(8)];
      out.push_back(einsum(spec, in.flip() ? std::vector<Array>{x} : std::vector<Array>{x, y}));
      break;
    }
    case 34: out.push_back(dot_general(x, y, {axes(in), axes(in)}, {axes(in), axes(in)})); break;
    case 35: out.push_back(graft::std(x, axes(in), in.flip(), 0)); break;
    case 36: {
      const Shape s = wild_shape(in);
      switch (in.pick(4)) {
        case 0: out.push_back(zeros(s, dtype(in))); break;
        case 1: out.push_back(full(s, in.value(), dtype(in))); break;
        case 2: out.push_back(arange(in.small(1, 6), dtype(in))); break;
        default: out.push_back(eye(in.small(1, 4))); break;
      }
      break;
    }
    case 37: out.push_back(x[in.small(3, 3)]); break;
    case 38: out.push_back(x.T()); break;
    default: out.push_back(make_array(in)); break;
  }
  for (Array& a : out) {
    if (trace) {
      std::string d;
      for (int64_t k : a.shape()) d += std::to_string(k) + ",";
      std::fprintf(stderr, "  -> %s[%s]\n", dtype_name(a.dtype()), d.c_str());
    }
    // Read every result back; keep the pool small.
    if (a.size() <= (1 << 16)) {
      if (a.dtype() == DType::f64) (void)a.to_vector<double>();
      else if (a.dtype() == DType::f32) (void)a.to_vector<float>();
    }
    if (pool.size() < 8) pool.push_back(std::move(a));
    else pool[static_cast<size_t>(in.pick(8))] = std::move(a);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graft_fuzz::setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  std::vector<Array> pool;
  try {
    pool.push_back(make_array(in));
    pool.push_back(make_array(in));
  } catch (const graft::Error&) {
    return 0;
  }
  for (int k = 0; k < 24 && !in.empty(); ++k) {
    try {
      step(in, pool);
    } catch (const graft::Error&) {
      // the expected outcome of a bad call; the program goes on
    }
  }
  return 0;
}
