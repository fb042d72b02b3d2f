// The op-case catalogue (see op_cases.h). The file is named *_test.cpp only so
// that the test target's glob compiles it; it holds no test cases itself.
//
// Cases follow the attribute conventions documented at the top of each
// ops/<family>.cpp. Cases marked "Regression:" once exposed a rule
// defect (overflow, wrong error class) and keep it fixed.
#include "tests/ir/op_cases.h"

#include <bit>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "ir/builder.h"

namespace graft::ir::testing {
namespace {

using Types = std::vector<ValueType>;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// ---- literals (little-endian, row-major, as ir/attrs.h specifies)

LiteralPtr make_literal(ValueType type, std::vector<uint8_t> bytes) {
  return std::make_shared<const Literal>(Literal{std::move(type), std::move(bytes)});
}

void append_little_endian(std::vector<uint8_t>& bytes, uint32_t word) {
  for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<uint8_t>(word >> shift));
}

LiteralPtr i32_literal(std::initializer_list<int32_t> values, Shape shape) {
  std::vector<uint8_t> bytes;
  for (int32_t v : values) append_little_endian(bytes, static_cast<uint32_t>(v));
  return make_literal(ValueType{DType::i32, std::move(shape)}, std::move(bytes));
}

LiteralPtr f32_literal(std::initializer_list<float> values, Shape shape) {
  std::vector<uint8_t> bytes;
  for (float v : values) append_little_endian(bytes, std::bit_cast<uint32_t>(v));
  return make_literal(ValueType{DType::f32, std::move(shape)}, std::move(bytes));
}

// ---- small subgraphs for control flow and custom calls

GraphPtr unary_graph(Op op, const ValueType& type) {
  GraphBuilder b;
  ValueId x = b.input(type);
  return b.finish({b.add1(op, {x})});
}

GraphPtr binary_graph(Op op, const ValueType& type) {
  GraphBuilder b;
  ValueId x = b.input(type);
  ValueId y = b.input(type);
  return b.finish({b.add1(op, {x, y})});
}

// No inputs, one output: i32[n] counting up.
GraphPtr iota_graph(int64_t n) {
  GraphBuilder b;
  return b.finish({b.add1(Op::iota, {}, {{"dtype", DType::i32}, {"shape", Ints{n}}, {"dimension", int64_t{0}}})});
}

// No inputs, one output: the constant i32[3] {3, 1, 2}.
GraphPtr constant_graph() {
  GraphBuilder b;
  return b.finish({b.add1(Op::constant, {}, {{"value", i32_literal({3, 1, 2}, {3})}})});
}

// while cond: (limit f32[], i i32[], x f32[3]) -> f32(i) < limit.
GraphPtr counter_below_limit_graph() {
  GraphBuilder b;
  ValueId limit = b.input({f32, {}});
  ValueId i = b.input({i32, {}});
  b.input({f32, {3}});
  ValueId i_as_float = b.add1(Op::convert_element_type, {i}, {{"new_dtype", DType::f32}});
  return b.finish({b.add1(Op::lt, {i_as_float, limit})});
}

// while body: (step f32[3], i i32[], x f32[3]) -> (i + 1, x + step).
GraphPtr step_counter_graph() {
  GraphBuilder b;
  ValueId step = b.input({f32, {3}});
  ValueId i = b.input({i32, {}});
  ValueId x = b.input({f32, {3}});
  ValueId one = b.add1(Op::constant, {}, {{"value", i32_literal({1}, {})}});
  return b.finish({b.add1(Op::add, {i, one}), b.add1(Op::add, {x, step})});
}

// while body with the wrong carry: (step f32[3], i i32[], x f32[3]) -> (i, x < step).
GraphPtr wrong_carry_graph() {
  GraphBuilder b;
  ValueId step = b.input({f32, {3}});
  ValueId i = b.input({i32, {}});
  ValueId x = b.input({f32, {3}});
  return b.finish({i, b.add1(Op::lt, {x, step})});
}

// scan body: (w f32[3], carry f32[3], x f32[3]) -> (carry + w * x, sin of that).
GraphPtr weighted_running_sum_graph() {
  GraphBuilder b;
  ValueId w = b.input({f32, {3}});
  ValueId carry = b.input({f32, {3}});
  ValueId x = b.input({f32, {3}});
  ValueId next = b.add1(Op::add, {carry, b.add1(Op::mul, {w, x})});
  return b.finish({next, b.add1(Op::sin, {next})});
}

// scan body returning the outputs in the wrong order: (y, carry).
GraphPtr ys_before_carry_graph() {
  GraphBuilder b;
  b.input({f32, {3}});
  ValueId carry = b.input({f32, {3}});
  ValueId x = b.input({f32, {3}});
  ValueId y = b.add1(Op::is_finite, {x});
  return b.finish({y, carry});
}

// scan body: (i i32[]) -> f64(i), for a scan with only xs and ys.
GraphPtr to_f64_graph() {
  GraphBuilder b;
  ValueId i = b.input({i32, {}});
  return b.finish({b.add1(Op::convert_element_type, {i}, {{"new_dtype", DType::f64}})});
}

// custom_jvp rule of sin: (x, t) -> (sin x, cos x * t).
GraphPtr sin_jvp_graph() {
  GraphBuilder b;
  ValueId x = b.input({f32, {3}});
  ValueId t = b.input({f32, {3}});
  return b.finish({b.add1(Op::sin, {x}), b.add1(Op::mul, {b.add1(Op::cos, {x}), t})});
}

// custom_vjp forward of sin: x -> (sin x, residual cos x).
GraphPtr sin_fwd_graph() {
  GraphBuilder b;
  ValueId x = b.input({f32, {3}});
  return b.finish({b.add1(Op::sin, {x}), b.add1(Op::cos, {x})});
}

// remat body: (x f32[3], n i32[]) -> (sin x, -n).
GraphPtr two_output_graph() {
  GraphBuilder b;
  ValueId x = b.input({f32, {3}});
  ValueId n = b.input({i32, {}});
  return b.finish({b.add1(Op::sin, {x}), b.add1(Op::neg, {n})});
}

// ---- the catalogue, filled family by family

struct Catalogue {
  std::vector<OpCase> valid;
  std::vector<BadOpCase> invalid;

  void ok(Op op, Types inputs, Attrs attrs, Types outputs) {
    valid.push_back(OpCase{op, std::move(inputs), std::move(attrs), std::move(outputs)});
  }
  void bad_shape(Op op, Types inputs, Attrs attrs, std::string fragment) {
    invalid.push_back(BadOpCase{op, std::move(inputs), std::move(attrs), BadOpCase::shape, std::move(fragment)});
  }
  void bad_format(Op op, Types inputs, Attrs attrs, std::string fragment) {
    invalid.push_back(BadOpCase{op, std::move(inputs), std::move(attrs), BadOpCase::format, std::move(fragment)});
  }
  void bad_dtype(Op op, Types inputs, Attrs attrs, std::string fragment) {
    invalid.push_back(BadOpCase{op, std::move(inputs), std::move(attrs), BadOpCase::dtype, std::move(fragment)});
  }
};

void add_elementwise_cases(Catalogue& c) {
  // Float-only unary ops: any shape, scalars included; integers rejected.
  for (Op op :
       {Op::floor,      Op::ceil,       Op::round,    Op::exp,      Op::log,   Op::log1p,   Op::expm1,  Op::sqrt,
        Op::rsqrt,      Op::sin,        Op::cos,      Op::tan,      Op::asin,  Op::acos,    Op::atan,   Op::sinh,
        Op::cosh,       Op::tanh,       Op::logistic, Op::erf,      Op::cbrt,  Op::erf_inv, Op::erfc,   Op::exp2,
        Op::log2,       Op::log10,      Op::asinh,    Op::acosh,    Op::atanh, Op::trunc,   Op::lgamma, Op::digamma,
        Op::bessel_i0e, Op::bessel_i1e, Op::ndtr,     Op::log_ndtr, Op::ndtri}) {
    c.ok(op, {{f32, {2, 3}}}, {}, {{f32, {2, 3}}});
    c.ok(op, {{f64, {}}}, {}, {{f64, {}}});
    c.bad_dtype(op, {{i32, {3}}}, {}, "float dtype");
  }
  c.bad_dtype(Op::exp, {{bool_, {}}}, {}, "got bool");

  // Signed numeric unary ops: unsigned and bool have no sign to flip or take.
  for (Op op : {Op::neg, Op::abs, Op::sign}) {
    c.ok(op, {{f32, {3}}}, {}, {{f32, {3}}});
    c.ok(op, {{i64, {2, 2}}}, {}, {{i64, {2, 2}}});
    c.bad_dtype(op, {{u32, {3}}}, {}, "signed numeric dtype");
  }
  c.bad_dtype(Op::neg, {{bool_, {}}}, {}, "got bool");

  for (Op op : {Op::square, Op::reciprocal}) {
    c.ok(op, {{f64, {4}}}, {}, {{f64, {4}}});
    c.ok(op, {{u32, {}}}, {}, {{u32, {}}});
    c.bad_dtype(op, {{bool_, {2}}}, {}, "numeric dtype");
  }

  c.ok(Op::is_finite, {{f32, {2, 3}}}, {}, {{bool_, {2, 3}}});
  c.ok(Op::is_finite, {{f64, {}}}, {}, {{bool_, {}}});
  c.bad_dtype(Op::is_finite, {{i32, {3}}}, {}, "float dtype");

  c.ok(Op::bitwise_not, {{bool_, {3}}}, {}, {{bool_, {3}}});
  c.ok(Op::bitwise_not, {{u32, {}}}, {}, {{u32, {}}});
  c.bad_dtype(Op::bitwise_not, {{f32, {3}}}, {}, "integer or bool");

  // stop_gradient and copy take any single operand; only the operand count
  // can be wrong.
  for (Op op : {Op::stop_gradient, Op::copy}) {
    c.ok(op, {{f32, {2, 3}}}, {}, {{f32, {2, 3}}});
    c.ok(op, {{bool_, {}}}, {}, {{bool_, {}}});
    c.bad_shape(op, {{f32, {3}}, {f32, {3}}}, {}, "takes 1 operand(s), got 2");
  }
  c.ok(Op::checkpoint_name, {{f32, {2, 3}}}, {{"name", std::string("h")}}, {{f32, {2, 3}}});
  c.ok(Op::checkpoint_name, {{i32, {}}}, {{"name", std::string("")}}, {{i32, {}}});
  c.bad_shape(Op::checkpoint_name, {{f32, {3}}, {f32, {3}}}, {{"name", std::string("h")}}, "takes 1 operand(s), got 2");
  c.bad_format(Op::checkpoint_name, {{f32, {3}}}, {}, "attribute 'name' is missing (it must be string)");

  // Numeric binary ops: equal shapes and dtypes, no broadcasting.
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::max, Op::min}) {
    c.ok(op, {{f32, {2, 3}}, {f32, {2, 3}}}, {}, {{f32, {2, 3}}});
    c.ok(op, {{i32, {}}, {i32, {}}}, {}, {{i32, {}}});
    c.bad_shape(op, {{f32, {3}}, {f32, {4}}}, {}, "operand shapes [3] and [4] differ");
    c.bad_dtype(op, {{f32, {3}}, {i32, {3}}}, {}, "operand dtypes f32 and i32 differ");
    c.bad_dtype(op, {{bool_, {3}}, {bool_, {3}}}, {}, "numeric dtype");
  }
  // A scalar does not broadcast against an array at this level.
  c.bad_shape(Op::mul, {{f32, {}}, {f32, {3}}}, {}, "operand shapes [] and [3] differ");

  for (Op op : {Op::pow, Op::atan2, Op::nextafter, Op::igamma, Op::igammac, Op::igamma_grad_a, Op::random_gamma_grad,
                Op::polygamma, Op::zeta}) {
    c.ok(op, {{f64, {2}}, {f64, {2}}}, {}, {{f64, {2}}});
    c.ok(op, {{f32, {}}, {f32, {}}}, {}, {{f32, {}}});
    c.bad_dtype(op, {{i32, {2}}, {i32, {2}}}, {}, "float dtype");
    c.bad_shape(op, {{f32, {2}}, {f32, {2, 1}}}, {}, "differ");
  }

  c.ok(Op::top_k, {{f32, {2, 5}}}, {{"k", int64_t{3}}}, {{f32, {2, 3}}, {i32, {2, 3}}});
  c.ok(Op::top_k, {{i64, {4}}}, {{"k", int64_t{0}}}, {{i64, {0}}, {i32, {0}}});
  c.bad_shape(Op::top_k, {{f32, {2, 5}}}, {{"k", int64_t{6}}}, "k = 6 must be in [0, 5]");
  c.bad_shape(Op::top_k, {{f32, {}}}, {{"k", int64_t{0}}}, "rank 1 or more");
  c.bad_dtype(Op::top_k, {{bool_, {3}}}, {{"k", int64_t{1}}}, "numeric dtype");
  c.ok(Op::bitcast_convert_type, {{f32, {2, 3}}}, {{"new_dtype", u32}}, {{u32, {2, 3}}});
  c.ok(Op::bitcast_convert_type, {{i64, {}}}, {{"new_dtype", f64}}, {{f64, {}}});
  c.bad_dtype(Op::bitcast_convert_type, {{f32, {2}}}, {{"new_dtype", f64}}, "only dtypes of one width");
  c.bad_dtype(Op::bitcast_convert_type, {{bool_, {2}}}, {{"new_dtype", bool_}}, "bool has no bit layout");
  c.ok(Op::betainc, {{f64, {2}}, {f64, {2}}, {f64, {2}}}, {}, {{f64, {2}}});
  c.ok(Op::betainc, {{f32, {}}, {f32, {}}, {f32, {}}}, {}, {{f32, {}}});
  c.bad_dtype(Op::betainc, {{i32, {2}}, {i32, {2}}, {i32, {2}}}, {}, "float dtype");
  c.bad_shape(Op::betainc, {{f32, {2}}, {f32, {2}}, {f32, {3}}}, {}, "differ");

  for (Op op : {Op::bitwise_and, Op::bitwise_or, Op::bitwise_xor}) {
    c.ok(op, {{bool_, {3}}, {bool_, {3}}}, {}, {{bool_, {3}}});
    c.ok(op, {{u32, {}}, {u32, {}}}, {}, {{u32, {}}});
    c.bad_dtype(op, {{f32, {3}}, {f32, {3}}}, {}, "integer or bool");
  }
  for (Op op : {Op::shift_left, Op::shift_right_arithmetic, Op::shift_right_logical}) {
    c.ok(op, {{i32, {3}}, {i32, {3}}}, {}, {{i32, {3}}});
    c.ok(op, {{u32, {}}, {u32, {}}}, {}, {{u32, {}}});
    c.bad_dtype(op, {{bool_, {3}}, {bool_, {3}}}, {}, "an integer dtype");
    c.bad_dtype(op, {{i32, {3}}, {u32, {3}}}, {}, "differ");
  }
  for (Op op : {Op::population_count, Op::clz}) {
    c.ok(op, {{i64, {2, 3}}}, {}, {{i64, {2, 3}}});
    c.bad_dtype(op, {{f32, {3}}}, {}, "an integer dtype");
  }

  // Comparisons accept every dtype and yield bool.
  for (Op op : {Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge}) {
    c.ok(op, {{f32, {2, 3}}, {f32, {2, 3}}}, {}, {{bool_, {2, 3}}});
    c.ok(op, {{bool_, {}}, {bool_, {}}}, {}, {{bool_, {}}});
    c.bad_dtype(op, {{f32, {3}}, {f64, {3}}}, {}, "operand dtypes f32 and f64 differ");
    c.bad_shape(op, {{i32, {3}}, {i32, {}}}, {}, "operand shapes [3] and [] differ");
  }

  // select(pred, on_true, on_false): pred is bool, scalar or the branches' shape.
  c.ok(Op::select, {{bool_, {}}, {f32, {3}}, {f32, {3}}}, {}, {{f32, {3}}});
  c.ok(Op::select, {{bool_, {2, 2}}, {i32, {2, 2}}, {i32, {2, 2}}}, {}, {{i32, {2, 2}}});
  c.ok(Op::select, {{bool_, {}}, {u32, {}}, {u32, {}}}, {}, {{u32, {}}});
  c.bad_dtype(Op::select, {{i32, {3}}, {f32, {3}}, {f32, {3}}}, {}, "predicate must be bool, got i32");
  c.bad_shape(Op::select, {{bool_, {2}}, {f32, {3}}, {f32, {3}}}, {}, "predicate shape [2]");
  c.bad_dtype(Op::select, {{bool_, {}}, {f32, {3}}, {f64, {3}}}, {}, "operand dtypes f32 and f64 differ");
  c.bad_shape(Op::select, {{bool_, {}}, {f32, {3}}, {f32, {4}}}, {}, "operand shapes [3] and [4] differ");

  // complex numbers: built from f32/f64 parts, taken apart into them; abs of a complex number is real.
  c.ok(Op::complex, {{f32, {2}}, {f32, {2}}}, {}, {{c64, {2}}});
  c.ok(Op::complex, {{f64, {}}, {f64, {}}}, {}, {{c128, {}}});
  c.bad_dtype(Op::complex, {{bf16, {2}}, {bf16, {2}}}, {}, "needs f32 or f64 parts, got bf16");
  c.bad_dtype(Op::complex, {{f32, {2}}, {f64, {2}}}, {}, "operand dtypes f32 and f64 differ");
  for (Op op : {Op::real, Op::imag}) {
    c.ok(op, {{c64, {3}}}, {}, {{f32, {3}}});
    c.ok(op, {{c128, {2, 2}}}, {}, {{f64, {2, 2}}});
    c.bad_dtype(op, {{f32, {3}}}, {}, "needs a complex dtype (c64, c128), got f32");
  }
  c.ok(Op::conj, {{c128, {3}}}, {}, {{c128, {3}}});
  // fft over the trailing axes: rfft halves the last, irfft restores it from fft_lengths.
  auto fft_attrs = [](const char* type, Ints lengths) {
    return ir::Attrs{{"fft_type", std::string(type)}, {"fft_lengths", lengths}};
  };
  c.ok(Op::fft, {{c64, {2, 8}}}, fft_attrs("fft", {8}), {{c64, {2, 8}}});
  c.ok(Op::fft, {{c128, {3, 4}}}, fft_attrs("ifft", {3, 4}), {{c128, {3, 4}}});
  c.ok(Op::fft, {{f32, {5, 9}}}, fft_attrs("rfft", {5, 9}), {{c64, {5, 5}}});
  c.ok(Op::fft, {{c128, {5}}}, fft_attrs("irfft", {8}), {{f64, {8}}});
  c.bad_dtype(Op::fft, {{f32, {8}}}, fft_attrs("fft", {8}), "fft needs a complex operand, got f32");
  c.bad_shape(Op::fft, {{c64, {8}}}, fft_attrs("fft", {4}), "the trailing axes [8] must be [4]");
  c.bad_shape(Op::fft, {{c64, {2, 2, 2, 2}}}, fft_attrs("fft", {2, 2, 2, 2}), "fft_lengths must name 1 to 3 axes");
  c.bad_format(Op::fft, {{c64, {8}}}, fft_attrs("dft", {8}), "fft_type must be fft, ifft, rfft or irfft");
  c.bad_dtype(Op::conj, {{f64, {3}}}, {}, "needs a complex dtype (c64, c128), got f64");
  c.ok(Op::abs, {{c64, {3}}}, {}, {{f32, {3}}});
  c.ok(Op::exp, {{c128, {3}}}, {}, {{c128, {3}}});
  c.bad_dtype(Op::floor, {{c64, {3}}}, {}, "needs a real float dtype (f16, bf16, f32, f64), got c64");
  c.bad_dtype(Op::lt, {{c64, {3}}, {c64, {3}}}, {}, "needs an ordered (not complex) dtype, got c64");
  c.ok(Op::sort, {{c64, {3}}, {f32, {3}}},  // complex keys: real part, then imaginary, as lax.sort
       {{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}}, {{c64, {3}}, {f32, {3}}});
  c.bad_dtype(Op::cummax, {{c64, {3}}}, {{"axis", int64_t{0}}, {"reverse", int64_t{0}}}, "needs a real numeric dtype");
  c.ok(Op::sort, {{f32, {3}}, {c64, {3}}},
       {{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}}, {{f32, {3}}, {c64, {3}}});

  c.ok(Op::convert_element_type, {{f32, {2, 3}}}, {{"new_dtype", DType::i32}}, {{i32, {2, 3}}});
  c.ok(Op::convert_element_type, {{bool_, {}}}, {{"new_dtype", DType::f64}}, {{f64, {}}});
  c.ok(Op::convert_element_type, {{u32, {4}}}, {{"new_dtype", DType::u32}}, {{u32, {4}}});
  c.bad_format(Op::convert_element_type, {{f32, {3}}}, {}, "attribute 'new_dtype' is missing (it must be dtype)");
  // ops.def's schema: no attribute beyond those listed.
  c.bad_format(Op::add, {{f32, {3}}, {f32, {3}}}, {{"axes", Ints{0}}}, "unknown attribute 'axes' (the op takes none)");
  c.bad_format(Op::convert_element_type, {{f32, {3}}}, {{"new_dtype", DType::i32}, {"old_dtype", DType::f32}},
               "unknown attribute 'old_dtype' (it takes new_dtype)");
  c.bad_format(Op::convert_element_type, {{f32, {3}}}, {{"new_dtype", std::string("i32")}},
              "attribute 'new_dtype' must be dtype, not string");
}

void add_reduce_cases(Catalogue& c) {
  for (Op op : {Op::reduce_sum, Op::reduce_max, Op::reduce_min, Op::reduce_prod}) {
    c.ok(op, {{f32, {2, 3, 4}}}, {{"axes", Ints{0, 2}}}, {{f32, {3}}});
    c.ok(op, {{i32, {2, 3}}}, {{"axes", Ints{}}}, {{i32, {2, 3}}});
    c.ok(op, {{f64, {5}}}, {{"axes", Ints{0}}}, {{f64, {}}});
    c.bad_shape(op, {{f32, {2, 3}}}, {{"axes", Ints{1, 1}}}, "reduction axis 1 is repeated");
    c.bad_shape(op, {{f32, {2, 3}}}, {{"axes", Ints{2}}}, "reduction axis 2 is out of range for rank 2");
  }
  // Max and min of booleans are any and all; sum and product are not defined.
  c.ok(Op::reduce_max, {{bool_, {4}}}, {{"axes", Ints{0}}}, {{bool_, {}}});
  c.ok(Op::reduce_min, {{bool_, {2, 4}}}, {{"axes", Ints{1}}}, {{bool_, {2}}});
  c.bad_dtype(Op::reduce_sum, {{bool_, {4}}}, {{"axes", Ints{0}}}, "numeric dtype, got bool");
  c.bad_dtype(Op::reduce_prod, {{bool_, {4}}}, {{"axes", Ints{0}}}, "numeric dtype, got bool");
  c.bad_shape(Op::reduce_min, {{f32, {3}}}, {{"axes", Ints{-1}}}, "reduction axis -1 is out of range");
  c.bad_format(Op::reduce_max, {{f32, {3}}}, {}, "attribute 'axes' is missing (it must be ints)");
  c.bad_format(Op::reduce_sum, {{f32, {3}}}, {{"axes", int64_t{0}}}, "attribute 'axes' must be ints, not int");

  for (Op op : {Op::reduce_and, Op::reduce_or}) {
    c.ok(op, {{bool_, {2, 3}}}, {{"axes", Ints{1}}}, {{bool_, {2}}});
    c.ok(op, {{u32, {4}}}, {{"axes", Ints{0}}}, {{u32, {}}});
    c.bad_dtype(op, {{f32, {2, 3}}}, {{"axes", Ints{1}}}, "integer or bool dtype, got f32");
  }

  for (Op op : {Op::argmax, Op::argmin}) {
    c.ok(op, {{f32, {3, 4}}}, {{"axis", int64_t{1}}, {"index_dtype", DType::i32}}, {{i32, {3}}});
    c.ok(op, {{i32, {5}}}, {{"axis", int64_t{0}}, {"index_dtype", DType::i64}}, {{i64, {}}});
    c.bad_shape(op, {{f32, {3, 0}}}, {{"axis", int64_t{1}}, {"index_dtype", DType::i32}}, "empty axis");
    c.bad_dtype(op, {{f32, {3}}}, {{"axis", int64_t{0}}, {"index_dtype", DType::u32}},
                "index_dtype must be i32 or i64, got u32");
    c.bad_shape(op, {{f32, {}}}, {{"axis", int64_t{0}}, {"index_dtype", DType::i32}},
                "axis 0 is out of range for rank 0");
  }
  c.ok(Op::argmax, {{bool_, {2, 3, 4}}}, {{"axis", int64_t{0}}, {"index_dtype", DType::i32}}, {{i32, {3, 4}}});

  for (Op op : {Op::cumsum, Op::cumprod, Op::cummax, Op::cummin}) {
    c.ok(op, {{f32, {3, 4}}}, {{"axis", int64_t{1}}, {"reverse", int64_t{0}}}, {{f32, {3, 4}}});
    c.ok(op, {{i32, {5}}}, {{"axis", int64_t{0}}, {"reverse", int64_t{1}}}, {{i32, {5}}});
    c.bad_dtype(op, {{bool_, {5}}}, {{"axis", int64_t{0}}, {"reverse", int64_t{0}}}, "numeric dtype, got bool");
    c.bad_shape(op, {{f32, {5}}}, {{"axis", int64_t{0}}, {"reverse", int64_t{2}}},
                "attribute 'reverse' must be 0 or 1, not 2");
    c.bad_shape(op, {{f32, {3, 4}}}, {{"axis", int64_t{2}}, {"reverse", int64_t{0}}},
                "axis 2 is out of range for rank 2");
  }
}

void add_layout_cases(Catalogue& c) {
  // broadcast_in_dim: operand axis i lands on broadcast_dimensions[i].
  c.ok(Op::broadcast_in_dim, {{f32, {3}}}, {{"shape", Ints{2, 3}}, {"broadcast_dimensions", Ints{1}}},
       {{f32, {2, 3}}});
  c.ok(Op::broadcast_in_dim, {{i32, {1, 4}}}, {{"shape", Ints{5, 2, 4}}, {"broadcast_dimensions", Ints{0, 2}}},
       {{i32, {5, 2, 4}}});
  c.ok(Op::broadcast_in_dim, {{f64, {}}}, {{"shape", Ints{2, 2}}, {"broadcast_dimensions", Ints{}}}, {{f64, {2, 2}}});
  c.ok(Op::broadcast_in_dim, {{bool_, {}}}, {{"shape", Ints{}}, {"broadcast_dimensions", Ints{}}}, {{bool_, {}}});
  c.bad_shape(Op::broadcast_in_dim, {{f32, {3}}}, {{"shape", Ints{2, 4}}, {"broadcast_dimensions", Ints{1}}},
              "operand axis 0 of size 3 cannot broadcast to size 4");
  c.bad_shape(Op::broadcast_in_dim, {{f32, {3, 3}}}, {{"shape", Ints{3, 3}}, {"broadcast_dimensions", Ints{1, 0}}},
              "must increase");
  c.bad_shape(Op::broadcast_in_dim, {{f32, {3}}}, {{"shape", Ints{3, 3}}, {"broadcast_dimensions", Ints{}}},
              "one entry per operand axis");
  c.bad_shape(Op::broadcast_in_dim, {{f32, {}}}, {{"shape", Ints{-2}}, {"broadcast_dimensions", Ints{}}},
              "dimension outside");

  c.ok(Op::reshape, {{f32, {2, 3}}}, {{"new_sizes", Ints{3, 2}}}, {{f32, {3, 2}}});
  c.ok(Op::reshape, {{i32, {1, 1}}}, {{"new_sizes", Ints{}}}, {{i32, {}}});
  c.ok(Op::reshape, {{f32, {0, 4}}}, {{"new_sizes", Ints{2, 0}}}, {{f32, {2, 0}}});
  c.bad_shape(Op::reshape, {{f32, {2, 3}}}, {{"new_sizes", Ints{4, 2}}}, "cannot reshape [2,3] (6 elements) to [4,2]");
  c.bad_shape(Op::reshape, {{f32, {2, 3}}}, {{"new_sizes", Ints{-1, 6}}}, "dimension outside");

  c.ok(Op::transpose, {{f32, {2, 3, 4}}}, {{"permutation", Ints{2, 0, 1}}}, {{f32, {4, 2, 3}}});
  c.ok(Op::transpose, {{i32, {}}}, {{"permutation", Ints{}}}, {{i32, {}}});
  c.bad_shape(Op::transpose, {{f32, {2, 3}}}, {{"permutation", Ints{0, 0}}}, "is not a permutation");
  c.bad_shape(Op::transpose, {{f32, {2, 3}}}, {{"permutation", Ints{1, 0, 2}}}, "must have 2 entries");

  c.ok(Op::rev, {{f32, {2, 3}}}, {{"dimensions", Ints{1, 0}}}, {{f32, {2, 3}}});
  c.ok(Op::rev, {{u32, {}}}, {{"dimensions", Ints{}}}, {{u32, {}}});
  c.bad_shape(Op::rev, {{f32, {2, 3}}}, {{"dimensions", Ints{1, 1}}}, "dimension 1 is repeated");
  c.bad_shape(Op::rev, {{f32, {2, 3}}}, {{"dimensions", Ints{2}}}, "dimension 2 is out of range for rank 2");

  // slice: ceil((limit - start) / stride) elements per axis.
  c.ok(Op::slice, {{f32, {5, 6}}},
       {{"start_indices", Ints{1, 0}}, {"limit_indices", Ints{4, 6}}, {"strides", Ints{1, 4}}}, {{f32, {3, 2}}});
  c.ok(Op::slice, {{i32, {4}}}, {{"start_indices", Ints{2}}, {"limit_indices", Ints{2}}, {"strides", Ints{1}}},
       {{i32, {0}}});
  c.ok(Op::slice, {{f64, {}}}, {{"start_indices", Ints{}}, {"limit_indices", Ints{}}, {"strides", Ints{}}},
       {{f64, {}}});
  // A stride longer than the axis keeps just the first element. (Regression:
  // limit - start + stride - 1 overflowed int64 here.)
  c.ok(Op::slice, {{f32, {2}}}, {{"start_indices", Ints{0}}, {"limit_indices", Ints{2}}, {"strides", Ints{kInt64Max}}},
       {{f32, {1}}});
  c.bad_shape(Op::slice, {{f32, {5}}}, {{"start_indices", Ints{2}}, {"limit_indices", Ints{6}}, {"strides", Ints{1}}},
              "does not fit axis 0 of [5]");
  c.bad_shape(Op::slice, {{f32, {5}}}, {{"start_indices", Ints{3}}, {"limit_indices", Ints{2}}, {"strides", Ints{1}}},
              "does not fit axis 0");
  c.bad_shape(Op::slice, {{f32, {5}}}, {{"start_indices", Ints{0}}, {"limit_indices", Ints{5}}, {"strides", Ints{0}}},
              "does not fit axis 0");
  c.bad_shape(Op::slice, {{f32, {5, 5}}},
              {{"start_indices", Ints{0}}, {"limit_indices", Ints{5}}, {"strides", Ints{1}}},
              "need 2 entries each");

  c.ok(Op::concatenate, {{f32, {2, 3}}, {f32, {2, 1}}, {f32, {2, 4}}}, {{"dimension", int64_t{1}}}, {{f32, {2, 8}}});
  c.ok(Op::concatenate, {{i32, {3}}}, {{"dimension", int64_t{0}}}, {{i32, {3}}});
  c.ok(Op::concatenate, {{bool_, {0, 2}}, {bool_, {3, 2}}}, {{"dimension", int64_t{0}}}, {{bool_, {3, 2}}});
  c.bad_shape(Op::concatenate, {}, {{"dimension", int64_t{0}}}, "needs at least one operand");
  c.bad_dtype(Op::concatenate, {{f32, {2}}, {i32, {2}}}, {{"dimension", int64_t{0}}}, "operands must share one dtype");
  c.bad_shape(Op::concatenate, {{f32, {2, 3}}, {f32, {3, 3}}}, {{"dimension", int64_t{1}}},
              "must agree except along dimension 1");
  c.bad_shape(Op::concatenate, {{f32, {2, 3}}, {f32, {2}}}, {{"dimension", int64_t{0}}},
              "must agree except along dimension 0");
  c.bad_shape(Op::concatenate, {{f32, {}}, {f32, {}}}, {{"dimension", int64_t{0}}},
              "dimension 0 is out of range for rank 0");

  // pad(x, value): axis i becomes low + high + d + (d - 1) * interior; a
  // negative low or high crops.
  c.ok(Op::pad, {{f32, {4, 3}}, {f32, {}}},
       {{"padding_low", Ints{-1, 0}}, {"padding_high", Ints{2, 1}}, {"padding_interior", Ints{1, 0}}},
       {{f32, {8, 4}}});
  c.ok(Op::pad, {{i32, {0}}, {i32, {}}},
       {{"padding_low", Ints{1}}, {"padding_high", Ints{2}}, {"padding_interior", Ints{3}}}, {{i32, {3}}});
  c.ok(Op::pad, {{f32, {3}}, {f32, {}}},
       {{"padding_low", Ints{-2}}, {"padding_high", Ints{-1}}, {"padding_interior", Ints{0}}}, {{f32, {0}}});
  c.ok(Op::pad, {{f64, {}}, {f64, {}}},
       {{"padding_low", Ints{}}, {"padding_high", Ints{}}, {"padding_interior", Ints{}}}, {{f64, {}}});
  c.bad_shape(Op::pad, {{f32, {3}}, {f32, {1}}},
              {{"padding_low", Ints{0}}, {"padding_high", Ints{0}}, {"padding_interior", Ints{0}}},
              "padding value must be a scalar");
  c.bad_dtype(Op::pad, {{f32, {3}}, {f64, {}}},
              {{"padding_low", Ints{0}}, {"padding_high", Ints{0}}, {"padding_interior", Ints{0}}},
              "padding value must have the operand's dtype");
  c.bad_shape(Op::pad, {{f32, {3}}, {f32, {}}},
              {{"padding_low", Ints{-3}}, {"padding_high", Ints{-1}}, {"padding_interior", Ints{0}}},
              "padding makes axis 0 negative");
  c.bad_shape(Op::pad, {{f32, {3}}, {f32, {}}},
              {{"padding_low", Ints{0}}, {"padding_high", Ints{0}}, {"padding_interior", Ints{-1}}},
              "padding of axis 0 is out of range");
  c.bad_shape(Op::pad, {{f32, {3, 3}}, {f32, {}}},
              {{"padding_low", Ints{0}}, {"padding_high", Ints{0, 0}}, {"padding_interior", Ints{0, 0}}},
              "need 2 entries each");
  // Regression: (d - 1) * interior = 2^24 * 2^40 overflowed int64 and wrapped
  // to 0, so pad accepted an axis of about 2^64 elements. The fragment is the operand type, which any
  // rule error names.
  c.bad_shape(Op::pad, {{f32, {(int64_t{1} << 24) + 1}}, {f32, {}}},
              {{"padding_low", Ints{0}}, {"padding_high", Ints{0}}, {"padding_interior", Ints{int64_t{1} << 40}}},
              "f32[16777217]");
}

void add_indexing_cases(Catalogue& c) {
  // dynamic_slice(x, one integer scalar start per axis).
  c.ok(Op::dynamic_slice, {{f32, {5, 4}}, {i32, {}}, {i64, {}}}, {{"slice_sizes", Ints{2, 4}}}, {{f32, {2, 4}}});
  c.ok(Op::dynamic_slice, {{f64, {}}}, {{"slice_sizes", Ints{}}}, {{f64, {}}});
  c.ok(Op::dynamic_slice, {{i32, {6}}, {u32, {}}}, {{"slice_sizes", Ints{0}}}, {{i32, {0}}});
  c.bad_shape(Op::dynamic_slice, {{f32, {5, 4}}, {i32, {}}}, {{"slice_sizes", Ints{2, 4}}},
              "needs 2 start indices (one per axis), got 1");
  c.bad_dtype(Op::dynamic_slice, {{f32, {5}}, {f32, {}}}, {{"slice_sizes", Ints{2}}}, "start indices must be integers");
  c.bad_shape(Op::dynamic_slice, {{f32, {5}}, {i32, {1}}}, {{"slice_sizes", Ints{2}}}, "start indices must be scalars");
  c.bad_shape(Op::dynamic_slice, {{f32, {5}}, {i32, {}}}, {{"slice_sizes", Ints{6}}}, "slice_sizes [6] do not fit in [5]");
  c.bad_shape(Op::dynamic_slice, {}, {{"slice_sizes", Ints{}}}, "needs an operand");

  // dynamic_update_slice(x, update, one start per axis).
  c.ok(Op::dynamic_update_slice, {{f32, {5, 4}}, {f32, {2, 4}}, {i32, {}}, {i32, {}}}, {}, {{f32, {5, 4}}});
  c.ok(Op::dynamic_update_slice, {{bool_, {}}, {bool_, {}}}, {}, {{bool_, {}}});
  c.bad_shape(Op::dynamic_update_slice, {{f32, {5, 4}}, {f32, {6, 4}}, {i32, {}}, {i32, {}}}, {},
              "update [6,4] does not fit in [5,4]");
  c.bad_dtype(Op::dynamic_update_slice, {{f32, {5}}, {f64, {2}}, {i32, {}}}, {},
              "update dtype must equal the operand's");
  c.bad_shape(Op::dynamic_update_slice, {{f32, {5}}, {f32, {1, 1}}, {i32, {}}}, {},
              "update rank must equal the operand's");
  c.bad_dtype(Op::dynamic_update_slice, {{f32, {5}}, {f32, {2}}, {bool_, {}}}, {}, "start indices must be integers");
  c.bad_shape(Op::dynamic_update_slice, {{f32, {5}}}, {}, "needs an operand and an update");

  // gather: result x[:axis] + indices[batch_dims:] + x[axis+1:].
  c.ok(Op::gather, {{f32, {5, 3}}, {i32, {2, 4}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}},
       {{f32, {2, 4, 3}}});
  c.ok(Op::gather, {{f32, {2, 5, 3}}, {i32, {2, 4}}}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}}},
       {{f32, {2, 4, 3}}});
  // One index per batch element: the indices' batch axes are all they have.
  c.ok(Op::gather, {{i64, {2, 5}}, {u32, {2}}}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}}}, {{i64, {2}}});
  c.ok(Op::gather, {{f32, {5, 3}}, {i64, {}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}}, {{f32, {3}}});
  c.bad_dtype(Op::gather, {{f32, {5, 3}}, {f32, {2}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}},
              "indices must be integers, got f32");
  c.bad_shape(Op::gather, {{f32, {2, 5, 3}}, {i32, {3, 4}}}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}}},
              "batch dimension 0 differs between operand and indices");
  c.bad_shape(Op::gather, {{f32, {2, 5}}, {i32, {2, 4}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{1}}},
              "must not be a batch dimension");
  c.bad_shape(Op::gather, {{f32, {2, 5}}, {i32, {2}}}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{2}}},
              "batch_dims 2 exceeds the rank");
  c.bad_shape(Op::gather, {{f32, {5}}, {i32, {2}}}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{0}}},
              "axis 1 is out of range for rank 1");

  // scatter_add(x, indices, updates): updates have gather's result type.
  c.ok(Op::scatter_add, {{f32, {2, 5, 3}}, {i32, {2, 4}}, {f32, {2, 4, 3}}},
       {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}}}, {{f32, {2, 5, 3}}});
  c.ok(Op::scatter_add, {{i32, {5}}, {i32, {}}, {i32, {}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}},
       {{i32, {5}}});
  c.bad_shape(Op::scatter_add, {{f32, {5, 3}}, {i32, {2}}, {f32, {2, 4}}},
              {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}}, "updates must be f32[2,3], got f32[2,4]");
  c.bad_dtype(Op::scatter_add, {{bool_, {5}}, {i32, {2}}, {bool_, {2}}},
              {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}}, "numeric operand, got bool");
  c.bad_dtype(Op::scatter_add, {{f32, {5}}, {f32, {2}}, {f32, {2}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}},
              "indices must be integers");
  // Regression: updates of the right shape but another dtype are a dtype
  // mismatch (as dynamic_update_slice reports it), not a ShapeError.
  c.bad_dtype(Op::scatter_add, {{f32, {5}}, {i32, {2}}, {f64, {2}}}, {{"axis", int64_t{0}}, {"batch_dims", int64_t{0}}},
              "updates");
}

void add_sort_cases(Catalogue& c) {
  Attrs by_last_axis{{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}};
  c.ok(Op::sort, {{f32, {4, 3}}}, by_last_axis, {{f32, {4, 3}}});
  c.ok(Op::sort, {{f32, {4, 3}}, {i32, {4, 3}}}, by_last_axis, {{f32, {4, 3}}, {i32, {4, 3}}});
  c.ok(Op::sort, {{i32, {6}}, {f32, {6}}, {bool_, {6}}},
       {{"dimension", int64_t{0}}, {"num_keys", int64_t{2}}, {"is_stable", int64_t{0}}},
       {{i32, {6}}, {f32, {6}}, {bool_, {6}}});
  c.bad_shape(Op::sort, {{f32, {4, 3}}, {i32, {3, 4}}}, by_last_axis, "operands must share one shape");
  c.bad_shape(Op::sort, {{f32, {4}}}, {{"dimension", int64_t{0}}, {"num_keys", int64_t{2}}, {"is_stable", int64_t{0}}},
              "num_keys 2 must be in [1, 1]");
  c.bad_shape(Op::sort, {{f32, {4}}}, {{"dimension", int64_t{0}}, {"num_keys", int64_t{0}}, {"is_stable", int64_t{0}}},
              "num_keys 0 must be in [1, 1]");
  c.bad_shape(Op::sort, {{f32, {4}}}, {{"dimension", int64_t{1}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{0}}},
              "dimension 1 is out of range for rank 1");
  c.bad_format(Op::sort, {{f32, {4}}}, {{"dimension", int64_t{0}}, {"num_keys", int64_t{1}}},
              "attribute 'is_stable' is missing (it must be int)");
  c.bad_shape(Op::sort, {}, by_last_axis, "needs at least one operand");
}

void add_creation_cases(Catalogue& c) {
  c.ok(Op::iota, {}, {{"dtype", DType::i32}, {"shape", Ints{2, 3}}, {"dimension", int64_t{1}}}, {{i32, {2, 3}}});
  c.ok(Op::iota, {}, {{"dtype", DType::f64}, {"shape", Ints{5}}, {"dimension", int64_t{0}}}, {{f64, {5}}});
  c.ok(Op::iota, {}, {{"dtype", DType::u32}, {"shape", Ints{0, 4}}, {"dimension", int64_t{0}}}, {{u32, {0, 4}}});
  c.bad_dtype(Op::iota, {}, {{"dtype", DType::bool_}, {"shape", Ints{3}}, {"dimension", int64_t{0}}},
              "iota cannot be bool");
  c.bad_shape(Op::iota, {}, {{"dtype", DType::i32}, {"shape", Ints{2, 3}}, {"dimension", int64_t{2}}},
              "dimension 2 is out of range for rank 2");
  c.bad_shape(Op::iota, {}, {{"dtype", DType::i32}, {"shape", Ints{}}, {"dimension", int64_t{0}}},
              "dimension 0 is out of range for rank 0");
  c.bad_shape(Op::iota, {}, {{"dtype", DType::i32}, {"shape", Ints{-3}}, {"dimension", int64_t{0}}},
              "dimension outside");

  c.ok(Op::constant, {}, {{"value", f32_literal({1.5f, -2.0f}, {2})}}, {{f32, {2}}});
  c.ok(Op::constant, {}, {{"value", i32_literal({7}, {})}}, {{i32, {}}});
  c.ok(Op::constant, {}, {{"value", make_literal({bool_, {3}}, {1, 0, 1})}}, {{bool_, {3}}});
  c.ok(Op::constant, {}, {{"value", make_literal({f64, {2, 0}}, {})}}, {{f64, {2, 0}}});
  c.bad_shape(Op::constant, {}, {{"value", make_literal({f32, {2}}, {0, 0, 0, 0})}},
              "literal f32[2] needs 2 elements of 4 bytes, has 4 bytes");
  c.bad_shape(Op::constant, {}, {{"value", make_literal({i32, {-1}}, {})}}, "dimension outside");
  c.bad_format(Op::constant, {}, {}, "attribute 'value' is missing (it must be literal)");
  c.bad_format(Op::constant, {}, {{"value", LiteralPtr{}}}, "holds a null literal");
  // Regression: 2^62 elements * 8 bytes wrapped uint64 to 0, so constant
  // accepted an empty byte string as a literal of 2^65 bytes.
  c.bad_shape(Op::constant, {}, {{"value", make_literal({f64, {int64_t{1} << 40, int64_t{1} << 22}}, {})}}, "literal");
}

void add_linalg_cases(Catalogue& c) {
  auto dims = [](Ints lhs_contracting, Ints rhs_contracting, Ints lhs_batch, Ints rhs_batch) {
    return Attrs{{"lhs_contracting", std::move(lhs_contracting)},
                 {"rhs_contracting", std::move(rhs_contracting)},
                 {"lhs_batch", std::move(lhs_batch)},
                 {"rhs_batch", std::move(rhs_batch)}};
  };
  // cholesky: batches of square matrices.
  c.ok(Op::cholesky, {{f64, {3, 3}}}, {}, {{f64, {3, 3}}});
  c.ok(Op::cholesky, {{f32, {2, 4, 4}}}, {}, {{f32, {2, 4, 4}}});
  c.bad_shape(Op::cholesky, {{f64, {3, 2}}}, {}, "square in its last two axes, got 3x2");
  c.bad_shape(Op::cholesky, {{f64, {3}}}, {}, "rank >= 2");
  c.bad_dtype(Op::cholesky, {{i32, {2, 2}}}, {}, "needs f32, f64, c64 or c128");
  auto solve = [](int64_t left) {
    return Attrs{{"conjugate_a", int64_t{0}},
                 {"left_side", left},
                 {"lower", int64_t{1}},
                 {"transpose_a", int64_t{0}},
                 {"unit_diagonal", int64_t{0}}};
  };
  c.ok(Op::triangular_solve, {{f64, {3, 3}}, {f64, {3, 2}}}, solve(1), {{f64, {3, 2}}});
  c.ok(Op::triangular_solve, {{f32, {5, 3, 3}}, {f32, {5, 2, 3}}}, solve(0), {{f32, {5, 2, 3}}});
  c.bad_shape(Op::triangular_solve, {{f64, {3, 3}}, {f64, {2, 3}}}, solve(1), "b's rows (2) must equal a's size 3");
  c.bad_shape(Op::triangular_solve, {{f64, {2, 3, 3}}, {f64, {4, 3, 1}}}, solve(1), "batch axis 0 differs");
  c.bad_shape(Op::triangular_solve, {{f64, {3, 3}}, {f64, {3}}}, solve(1), "b must have a's rank 2");
  c.bad_dtype(Op::triangular_solve, {{f64, {3, 3}}, {f32, {3, 1}}}, solve(1), "operand dtypes f64 and f32 differ");
  // lu: (lu, i32 pivots [..., min(m, n)], i32 permutation [..., m]).
  c.ok(Op::lu, {{f64, {3, 3}}}, {}, {{f64, {3, 3}}, {i32, {3}}, {i32, {3}}});
  c.ok(Op::lu, {{f32, {2, 5, 3}}}, {}, {{f32, {2, 5, 3}}, {i32, {2, 3}}, {i32, {2, 5}}});
  c.ok(Op::lu, {{f64, {2, 4}}}, {}, {{f64, {2, 4}}, {i32, {2}}, {i32, {2}}});
  c.bad_shape(Op::lu, {{f64, {3}}}, {}, "rank >= 2");
  c.bad_dtype(Op::lu, {{i32, {2, 2}}}, {}, "needs f32, f64, c64 or c128");
  // eigh: (v [..., n, n], w [..., n]).
  c.ok(Op::eigh, {{f64, {3, 3}}}, {{"lower", int64_t{1}}}, {{f64, {3, 3}}, {f64, {3}}});
  c.ok(Op::eigh, {{f32, {2, 4, 4}}}, {{"lower", int64_t{0}}}, {{f32, {2, 4, 4}}, {f32, {2, 4}}});
  c.bad_shape(Op::eigh, {{f64, {3, 2}}}, {{"lower", int64_t{1}}}, "square in its last two axes, got 3x2");
  c.bad_dtype(Op::eigh, {{i32, {2, 2}}}, {{"lower", int64_t{1}}}, "needs f32, f64, c64 or c128");
  // qr: (q, r), reduced or full.
  c.ok(Op::qr, {{f64, {5, 3}}}, {{"full_matrices", int64_t{0}}}, {{f64, {5, 3}}, {f64, {3, 3}}});
  c.ok(Op::qr, {{f32, {2, 5, 3}}}, {{"full_matrices", int64_t{1}}}, {{f32, {2, 5, 5}}, {f32, {2, 5, 3}}});
  c.ok(Op::qr, {{f64, {2, 4}}}, {{"full_matrices", int64_t{0}}}, {{f64, {2, 2}}, {f64, {2, 4}}});
  c.bad_shape(Op::qr, {{f64, {3}}}, {{"full_matrices", int64_t{0}}}, "rank >= 2");
  c.bad_dtype(Op::qr, {{i32, {2, 2}}}, {{"full_matrices", int64_t{0}}}, "needs f32, f64, c64 or c128");
  c.ok(Op::geqrf, {{f64, {2, 5, 3}}}, {}, {{f64, {2, 5, 3}}, {f64, {2, 3}}});
  c.ok(Op::geqrf, {{f32, {2, 4}}}, {}, {{f32, {2, 4}}, {f32, {2}}});
  c.bad_shape(Op::geqrf, {{f64, {3}}}, {}, "rank >= 2");
  c.ok(Op::householder_product, {{f64, {2, 5, 3}}, {f64, {2, 2}}}, {}, {{f64, {2, 5, 3}}});
  c.bad_shape(Op::householder_product, {{f64, {2, 4}}, {f64, {2}}}, {}, "at least as many rows as columns");
  c.bad_shape(Op::householder_product, {{f64, {5, 3}}, {f64, {4}}}, {}, "more taus (4) than a's columns (3)");
  c.bad_shape(Op::householder_product, {{f64, {2, 5, 3}}, {f64, {3, 2}}}, {},
              "taus must be [..., k] over a's batch axes");
  c.bad_dtype(Op::householder_product, {{f64, {5, 3}}, {f32, {3}}}, {}, "taus' dtype f32 differs");
  c.bad_dtype(Op::cholesky, {{f16, {2, 2}}}, {}, "needs f32, f64, c64 or c128 (the types LAPACK computes in), got f16");
  c.ok(Op::cholesky, {{c64, {3, 3}}}, {}, {{c64, {3, 3}}});
  c.ok(Op::eigh, {{c128, {2, 3, 3}}}, {{"lower", int64_t{1}}}, {{c128, {2, 3, 3}}, {f64, {2, 3}}});
  // eig: w, then vl and vr where asked for, complex.
  const auto eig_attrs = [](int64_t left, int64_t right) {
    return Attrs{{"compute_left_eigenvectors", left}, {"compute_right_eigenvectors", right}};
  };
  c.ok(Op::eig, {{f64, {3, 3}}}, eig_attrs(0, 1), {{c128, {3}}, {c128, {3, 3}}});
  c.ok(Op::eig, {{f32, {2, 4, 4}}}, eig_attrs(1, 1), {{c64, {2, 4}}, {c64, {2, 4, 4}}, {c64, {2, 4, 4}}});
  c.ok(Op::eig, {{c64, {3, 3}}}, eig_attrs(0, 0), {{c64, {3}}});
  c.bad_shape(Op::eig, {{f64, {3, 2}}}, eig_attrs(0, 1), "square in its last two axes, got 3x2");
  c.bad_dtype(Op::eig, {{bf16, {2, 2}}}, eig_attrs(0, 1), "got bf16");
  // conv_general_dilated: XLA's output sizes, in any layout.
  const auto conv_attrs = [](Ints lhs_spec, Ints rhs_spec, Ints out_spec, Ints strides, Ints lo, Ints hi,
                             int64_t groups = 1, int64_t batch_groups = 1) {
    const Ints ones(strides.size(), 1);
    return Attrs{{"batch_group_count", batch_groups},
                 {"feature_group_count", groups},
                 {"lhs_dilation", ones},
                 {"lhs_spec", lhs_spec},
                 {"out_spec", out_spec},
                 {"padding_high", hi},
                 {"padding_low", lo},
                 {"rhs_dilation", ones},
                 {"rhs_spec", rhs_spec},
                 {"window_strides", strides}};
  };
  const Attrs nchw = conv_attrs({0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}, {2, 1}, {1, 0}, {1, 0});
  c.ok(Op::conv_general_dilated, {{f32, {2, 3, 7, 5}}, {f32, {4, 3, 3, 2}}}, nchw, {{f32, {2, 4, 4, 4}}});
  // NHWC / HWIO / NHWC with two feature groups.
  c.ok(Op::conv_general_dilated, {{f64, {2, 6, 5, 4}}, {f64, {3, 2, 2, 6}}},
       conv_attrs({0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}, {1, 1}, {0, 0}, {0, 0}, 2), {{f64, {2, 4, 4, 6}}});
  c.bad_shape(Op::conv_general_dilated, {{f32, {2, 3, 7, 5}}, {f32, {4, 2, 3, 2}}}, nchw,
              "lhs's 3 features over feature_group_count 1 must equal rhs's input features 2");
  c.bad_shape(Op::conv_general_dilated, {{f32, {2, 3, 7, 5}}, {f32, {4, 3, 3}}}, nchw, "must have lhs's rank 4");
  c.bad_dtype(Op::conv_general_dilated, {{f32, {2, 3, 7, 5}}, {f64, {4, 3, 3, 2}}}, nchw,
              "operand dtypes f32 and f64 differ");
  // The windowed reductions: XLA's ReduceWindow sizes; select-and-scatter's source has them.
  const auto window_attrs = [](Ints window, Ints strides, Ints lo, Ints hi, Ints base, const char* select = nullptr) {
    Attrs a{{"base_dilation", base},       {"padding_high", hi},
            {"padding_low", lo},           {"window_dilation", Ints(window.size(), 1)},
            {"window_dimensions", window}, {"window_strides", strides}};
    if (select) a.set("select", std::string(select));
    return a;
  };
  const Attrs pool = window_attrs({1, 3, 3, 1}, {1, 2, 2, 1}, {0, 1, 1, 0}, {0, 1, 1, 0}, {1, 1, 1, 1});
  c.ok(Op::reduce_window_max, {{f32, {2, 7, 6, 3}}}, pool, {{f32, {2, 4, 3, 3}}});
  c.ok(Op::reduce_window_sum, {{i32, {4, 5}}}, window_attrs({2, 2}, {1, 2}, {0, 0}, {0, 0}, {2, 1}), {{i32, {6, 2}}});
  c.ok(Op::reduce_window_min, {{f64, {3}}}, window_attrs({2}, {1}, {0}, {0}, {1}), {{f64, {2}}});
  c.bad_shape(Op::reduce_window_max, {{f32, {2, 7}}}, pool, "window_dimensions needs 2 entries");
  c.bad_dtype(Op::reduce_window_min, {{c64, {3}}}, window_attrs({2}, {1}, {0}, {0}, {1}), "ordered");
  c.bad_shape(Op::reduce_window_sum, {{f32, {4}}}, window_attrs({0}, {1}, {0}, {0}, {1}),
              "window size must be at least 1");
  c.bad_dtype(Op::reduce_window_sum, {{bool_, {4}}}, window_attrs({2}, {1}, {0}, {0}, {1}), "got bool");
  const Attrs ge = window_attrs({2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, "ge");
  c.ok(Op::select_and_gather_add, {{f32, {4, 6}}, {f32, {4, 6}}}, ge, {{f32, {2, 3}}});
  c.bad_shape(Op::select_and_gather_add, {{f32, {4, 5}}, {f32, {4, 6}}}, ge, "must have one type");
  c.bad_shape(Op::select_and_gather_add, {{f32, {4, 6}}, {f32, {4, 6}}},
              window_attrs({2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, "gt"), "select must be");
  c.ok(Op::select_and_scatter_add, {{f64, {2, 3}}, {f64, {4, 6}}}, ge, {{f64, {4, 6}}});
  c.bad_shape(Op::select_and_scatter_add, {{f64, {2, 2}}, {f64, {4, 6}}}, ge, "must have the windowed shape [2,3]");
  c.bad_dtype(Op::select_and_scatter_add, {{i32, {2, 3}}, {i32, {4, 6}}}, ge, "got i32");
  // svd: (s) or (s, u, vt), reduced or full.
  const Attrs uv{{"compute_uv", int64_t{1}}, {"full_matrices", int64_t{0}}};
  const Attrs full_uv{{"compute_uv", int64_t{1}}, {"full_matrices", int64_t{1}}};
  c.ok(Op::svd, {{f64, {5, 3}}}, uv, {{f64, {3}}, {f64, {5, 3}}, {f64, {3, 3}}});
  c.ok(Op::svd, {{f32, {2, 3, 5}}}, full_uv, {{f32, {2, 3}}, {f32, {2, 3, 3}}, {f32, {2, 5, 5}}});
  c.ok(Op::svd, {{f64, {4, 2}}}, {{"compute_uv", int64_t{0}}, {"full_matrices", int64_t{0}}}, {{f64, {2}}});
  c.bad_shape(Op::svd, {{f64, {3}}}, uv, "rank >= 2");
  c.bad_dtype(Op::svd, {{i32, {2, 2}}}, uv, "needs f32, f64, c64 or c128");
  c.ok(Op::svd, {{c64, {5, 3}}}, uv, {{f32, {3}}, {c64, {5, 3}}, {c64, {3, 3}}});
  const Attrs size4{{"permutation_size", int64_t{4}}};
  c.ok(Op::lu_pivots_to_permutation, {{i32, {2, 3}}}, size4, {{i32, {2, 4}}});
  c.bad_shape(Op::lu_pivots_to_permutation, {{i32, {5}}}, size4, "permutation_size 4 must be at least the 5 pivots");
  c.bad_shape(Op::lu_pivots_to_permutation, {{i32, {}}}, size4, "rank >= 1");
  c.bad_dtype(Op::lu_pivots_to_permutation, {{i64, {3}}}, size4, "needs i32 pivots, got i64");
  // Batched matmul: batch axes first, then lhs free, then rhs free.
  c.ok(Op::dot_general, {{f32, {2, 3, 4}}, {f32, {2, 4, 5}}}, dims({2}, {1}, {0}, {0}), {{f32, {2, 3, 5}}});
  // Batch axes that are not leading, and an rhs with no free axes.
  c.ok(Op::dot_general, {{f32, {3, 2, 4}}, {f32, {4, 2}}}, dims({2}, {0}, {1}, {1}), {{f32, {2, 3}}});
  c.ok(Op::dot_general, {{f64, {3}}, {f64, {3}}}, dims({0}, {0}, {}, {}), {{f64, {}}});
  c.ok(Op::dot_general, {{i32, {2}}, {i32, {3}}}, dims({}, {}, {}, {}), {{i32, {2, 3}}});
  c.ok(Op::dot_general, {{f32, {}}, {f32, {4}}}, dims({}, {}, {}, {}), {{f32, {4}}});
  c.bad_shape(Op::dot_general, {{f32, {2, 3}}, {f32, {4, 5}}}, dims({1}, {0}, {}, {}),
              "contracting sizes differ: lhs axis 1 has 3, rhs axis 0 has 4");
  c.bad_dtype(Op::dot_general, {{f32, {2, 3}}, {f64, {3}}}, dims({1}, {0}, {}, {}), "operand dtypes f32 and f64 differ");
  c.bad_dtype(Op::dot_general, {{bool_, {3}}, {bool_, {3}}}, dims({0}, {0}, {}, {}), "numeric operands, got bool");
  c.bad_shape(Op::dot_general, {{f32, {3, 3}}, {f32, {3, 3}}}, dims({0}, {0}, {0}, {1}), "lhs axis 0 is used twice");
  c.bad_shape(Op::dot_general, {{f32, {2, 3}}, {f32, {4, 3}}}, dims({1}, {1}, {0}, {0}),
              "batch sizes differ at batch dimension 0");
  c.bad_shape(Op::dot_general, {{f32, {2, 3}}, {f32, {3}}}, dims({1}, {}, {}, {}),
              "lhs_contracting and rhs_contracting differ in length");
  c.bad_shape(Op::dot_general, {{f32, {2, 3}}, {f32, {3}}}, dims({2}, {0}, {}, {}), "lhs axis 2 is out of range");
  // The result f32[2^31, 2^33] would have 2^64 elements: an element count
  // must fit int64, however small the operands are.
  c.bad_shape(Op::dot_general, {{f32, {int64_t{1} << 31, 1}}, {f32, {1, int64_t{1} << 33}}}, dims({1}, {0}, {}, {}),
              "elements");
}

void add_random_cases(Catalogue& c) {
  c.ok(Op::random_bits, {{u32, {2}}}, {{"shape", Ints{3, 4}}}, {{u32, {3, 4}}});
  c.ok(Op::random_bits, {{u32, {5, 2}}}, {{"shape", Ints{3}}}, {{u32, {5, 3}}});
  c.ok(Op::random_bits, {{u32, {2}}}, {{"shape", Ints{}}}, {{u32, {}}});
  c.bad_dtype(Op::random_bits, {{i32, {2}}}, {{"shape", Ints{3}}}, "key must be u32, got i32");
  c.bad_shape(Op::random_bits, {{u32, {3}}}, {{"shape", Ints{3}}}, "key must have a trailing axis of size 2");
  c.bad_shape(Op::random_bits, {{u32, {}}}, {{"shape", Ints{3}}}, "key must have a trailing axis of size 2");
  c.bad_shape(Op::random_bits, {{u32, {2}}}, {{"shape", Ints{-1}}}, "dimension outside");
}

void add_control_cases(Catalogue& c) {
  const ValueType f32_3{f32, {3}};
  GraphPtr sin_branch = unary_graph(Op::sin, f32_3);
  GraphPtr cos_branch = unary_graph(Op::cos, f32_3);

  // cond(index, args...)
  c.ok(Op::cond, {{i32, {}}, f32_3}, {{"branches", Graphs{sin_branch, cos_branch}}}, {f32_3});
  c.ok(Op::cond, {{bool_, {}}, {f32, {2, 2}}, {f32, {2, 2}}},
       {{"branches", Graphs{binary_graph(Op::add, {f32, {2, 2}}), binary_graph(Op::mul, {f32, {2, 2}})}}},
       {{f32, {2, 2}}});
  c.ok(Op::cond, {{i32, {}}, {i32, {}}},
       {{"branches", Graphs{unary_graph(Op::neg, {i32, {}}), unary_graph(Op::abs, {i32, {}}),
                            unary_graph(Op::sign, {i32, {}})}}},
       {{i32, {}}});
  // Branches without operands, and a single branch.
  c.ok(Op::cond, {{i32, {}}}, {{"branches", Graphs{iota_graph(3), constant_graph()}}}, {{i32, {3}}});
  c.ok(Op::cond, {{i32, {}}, f32_3}, {{"branches", Graphs{sin_branch}}}, {f32_3});
  c.bad_dtype(Op::cond, {{f32, {}}, f32_3}, {{"branches", Graphs{sin_branch, cos_branch}}},
              "index must be i32 or bool, got f32");
  c.bad_shape(Op::cond, {{i32, {2}}, f32_3}, {{"branches", Graphs{sin_branch, cos_branch}}},
              "index must be a scalar, got i32[2]");
  c.bad_shape(Op::cond, {{bool_, {}}, f32_3}, {{"branches", Graphs{sin_branch, cos_branch, sin_branch}}},
              "a bool predicate needs exactly two branches");
  c.bad_shape(Op::cond, {{i32, {}}, f32_3}, {{"branches", Graphs{sin_branch, unary_graph(Op::sin, {f32, {4}})}}},
              "branch 1 takes (f32[4]) but is given (f32[3])");
  c.bad_shape(Op::cond, {{i32, {}}, f32_3}, {{"branches", Graphs{sin_branch, unary_graph(Op::is_finite, f32_3)}}},
              "branch 1 returns (bool[3]) but must return (f32[3])");
  c.bad_shape(Op::cond, {{i32, {}}, f32_3}, {{"branches", Graphs{}}}, "needs at least one branch");
  c.bad_shape(Op::cond, {}, {{"branches", Graphs{sin_branch}}}, "needs an index operand");

  // while(cond consts.., body consts.., carry..)
  GraphPtr keep_going = counter_below_limit_graph();
  GraphPtr step = step_counter_graph();
  const Types while_operands = {{f32, {}}, f32_3, {i32, {}}, f32_3};  // limit, step, i, x
  const Attrs one_const_each{{"cond_nconsts", int64_t{1}},
                             {"body_nconsts", int64_t{1}},
                             {"checkpoints", int64_t{128}},
                             {"cond", Graphs{keep_going}},
                             {"body", Graphs{step}}};
  c.ok(Op::while_loop, while_operands, one_const_each, {{i32, {}}, f32_3});
  c.bad_format(Op::while_loop, while_operands,
               {{"cond_nconsts", int64_t{1}},
                {"body_nconsts", int64_t{1}},
                {"checkpoints", int64_t{1}},
                {"cond", Graphs{keep_going}},
                {"body", Graphs{step}}},
               "checkpoints 1 is out of range");
  {
    // No constants: loop i while i != 0, decrementing.
    GraphBuilder cb;
    ValueId i = cb.input({i32, {}});
    ValueId zero = cb.add1(Op::constant, {}, {{"value", i32_literal({0}, {})}});
    GraphPtr nonzero = cb.finish({cb.add1(Op::ne, {i, zero})});
    GraphBuilder bb;
    ValueId j = bb.input({i32, {}});
    ValueId one = bb.add1(Op::constant, {}, {{"value", i32_literal({1}, {})}});
    GraphPtr decrement = bb.finish({bb.add1(Op::sub, {j, one})});
    c.ok(Op::while_loop, {{i32, {}}},
         {{"cond_nconsts", int64_t{0}},
          {"body_nconsts", int64_t{0}},
          {"checkpoints", int64_t{128}},
          {"cond", Graphs{nonzero}},
          {"body", Graphs{decrement}}},
         {{i32, {}}});
  }
  c.bad_shape(Op::while_loop, while_operands,
              {{"cond_nconsts", int64_t{1}},
               {"body_nconsts", int64_t{1}},
               {"checkpoints", int64_t{128}},
               {"cond", Graphs{step}},
               {"body", Graphs{step}}},
              "cond takes (f32[3], i32[], f32[3]) but is given (f32[], i32[], f32[3])");
  c.bad_shape(Op::while_loop, while_operands,
              {{"cond_nconsts", int64_t{1}},
               {"body_nconsts", int64_t{1}},
               {"checkpoints", int64_t{128}},
               {"cond", Graphs{keep_going}},
               {"body", Graphs{wrong_carry_graph()}}},
              "body returns (i32[], bool[3]) but must return (i32[], f32[3])");
  {
    // A condition that yields f32[] rather than bool[].
    GraphBuilder cb;
    ValueId limit = cb.input({f32, {}});
    cb.input({i32, {}});
    cb.input(f32_3);
    GraphPtr float_cond = cb.finish({cb.add1(Op::exp, {limit})});
    c.bad_shape(Op::while_loop, while_operands,
                {{"cond_nconsts", int64_t{1}},
                 {"body_nconsts", int64_t{1}},
                 {"checkpoints", int64_t{128}},
                 {"cond", Graphs{float_cond}},
                 {"body", Graphs{step}}},
                "cond returns (f32[]) but must return (bool[])");
  }
  c.bad_shape(Op::while_loop, while_operands,
              {{"cond_nconsts", int64_t{9}},
               {"body_nconsts", int64_t{1}},
               {"checkpoints", int64_t{128}},
               {"cond", Graphs{keep_going}},
               {"body", Graphs{step}}},
              "cond_nconsts 9 must be in [0, 4]");
  c.bad_shape(Op::while_loop, while_operands,
              {{"cond_nconsts", int64_t{1}},
               {"body_nconsts", int64_t{1}},
               {"checkpoints", int64_t{128}},
               {"cond", Graphs{keep_going, keep_going}},
               {"body", Graphs{step}}},
              "attribute 'cond' must hold exactly one graph, not 2");

  // scan(consts.., init.., xs..): final carry, then ys stacked on axis 0.
  GraphPtr running_sum = weighted_running_sum_graph();
  auto scan_attrs = [](int64_t num_consts, int64_t num_carry, int64_t length, int64_t reverse, GraphPtr body) {
    return Attrs{{"num_consts", num_consts}, {"num_carry", num_carry}, {"length", length},
                 {"reverse", reverse}, {"body", Graphs{std::move(body)}}};
  };
  c.ok(Op::scan, {f32_3, f32_3, {f32, {4, 3}}}, scan_attrs(1, 1, 4, 0, running_sum), {f32_3, {f32, {4, 3}}});
  c.ok(Op::scan, {{i32, {5}}}, scan_attrs(0, 0, 5, 1, to_f64_graph()), {{f64, {5}}});
  // Carry only, no xs: length alone sets the trip count.
  c.ok(Op::scan, {{f32, {}}}, scan_attrs(0, 1, 3, 0, unary_graph(Op::exp, {f32, {}})), {{f32, {}}});
  // Length 0 with an empty xs.
  c.ok(Op::scan, {{i32, {0}}}, scan_attrs(0, 0, 0, 0, to_f64_graph()), {{f64, {0}}});
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {5, 3}}}, scan_attrs(1, 1, 4, 0, running_sum),
              "scanned operand f32[5,3] needs a leading axis of length 4");
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {}}}, scan_attrs(1, 1, 4, 0, running_sum),
              "scanned operand f32[] needs a leading axis of length 4");
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {4, 3}}}, scan_attrs(1, 1, 4, 0, ys_before_carry_graph()),
              "body must return the carry types first");
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {4, 2}}}, scan_attrs(1, 1, 4, 0, running_sum),
              "body takes (f32[3], f32[3], f32[3]) but is given (f32[3], f32[3], f32[2])");
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {4, 3}}}, scan_attrs(1, 1, 4, 2, running_sum),
              "attribute 'reverse' must be 0 or 1, not 2");
  c.bad_shape(Op::scan, {f32_3, f32_3, {f32, {4, 3}}}, scan_attrs(2, 2, 4, 0, running_sum),
              "num_carry 2 must be in [0, 1]");
  c.bad_shape(Op::scan, {{f32, {0, 3}}}, scan_attrs(0, 0, -1, 0, unary_graph(Op::sin, f32_3)),
              "length -1 is out of range");
  {
    // The stacked ys f32[2^20, 2^30, 2^30] would have 2^80 elements, though
    // each slice the body makes is a valid type.
    GraphBuilder b;
    GraphPtr big = b.finish({b.add1(
        Op::iota, {}, {{"dtype", DType::f32}, {"shape", Ints{int64_t{1} << 30, int64_t{1} << 30}}, {"dimension", int64_t{0}}})});
    c.bad_shape(Op::scan, {}, scan_attrs(0, 0, int64_t{1} << 20, 0, big), "elements");
  }
}

void add_custom_cases(Catalogue& c) {
  const ValueType f32_3{f32, {3}};
  GraphPtr sin_call = unary_graph(Op::sin, f32_3);

  c.ok(Op::custom_jvp_call, {f32_3}, {{"call", Graphs{sin_call}}, {"jvp", Graphs{sin_jvp_graph()}}}, {f32_3});
  {
    // Two scalar operands: a * b, with jvp (a, b, ta, tb) -> (a b, a tb + b ta).
    GraphBuilder cb;
    ValueId a = cb.input({f64, {}});
    ValueId b = cb.input({f64, {}});
    GraphPtr product = cb.finish({cb.add1(Op::mul, {a, b})});
    GraphBuilder jb;
    ValueId ja = jb.input({f64, {}});
    ValueId jbv = jb.input({f64, {}});
    ValueId ta = jb.input({f64, {}});
    ValueId tb = jb.input({f64, {}});
    ValueId tangent = jb.add1(Op::add, {jb.add1(Op::mul, {ja, tb}), jb.add1(Op::mul, {jbv, ta})});
    GraphPtr product_jvp = jb.finish({jb.add1(Op::mul, {ja, jbv}), tangent});
    c.ok(Op::custom_jvp_call, {{f64, {}}, {f64, {}}}, {{"call", Graphs{product}}, {"jvp", Graphs{product_jvp}}},
         {{f64, {}}});
  }
  c.bad_shape(Op::custom_jvp_call, {f32_3}, {{"call", Graphs{sin_call}}, {"jvp", Graphs{sin_call}}},
              "jvp rule takes (f32[3]) but is given (f32[3], f32[3])");
  c.bad_shape(Op::custom_jvp_call, {f32_3}, {{"call", Graphs{sin_call}}, {"jvp", Graphs{binary_graph(Op::mul, f32_3)}}},
              "jvp rule returns (f32[3]) but must return (f32[3], f32[3])");
  c.bad_shape(Op::custom_jvp_call, {{f32, {4}}}, {{"call", Graphs{sin_call}}, {"jvp", Graphs{sin_jvp_graph()}}},
              "call takes (f32[3]) but is given (f32[4])");
  c.bad_format(Op::custom_jvp_call, {f32_3}, {{"call", Graphs{sin_call}}},
               "attribute 'jvp' is missing (it must be graphs)");

  GraphPtr mul_bwd = binary_graph(Op::mul, f32_3);  // (residual cos x, cotangent) -> cotangent * cos x
  c.ok(Op::custom_vjp_call, {f32_3},
       {{"call", Graphs{sin_call}}, {"fwd", Graphs{sin_fwd_graph()}}, {"bwd", Graphs{mul_bwd}},
        {"num_residuals", int64_t{1}}},
       {f32_3});
  // No residuals: bwd sees only the output cotangents.
  c.ok(Op::custom_vjp_call, {f32_3},
       {{"call", Graphs{sin_call}}, {"fwd", Graphs{sin_call}}, {"bwd", Graphs{unary_graph(Op::neg, f32_3)}},
        {"num_residuals", int64_t{0}}},
       {f32_3});
  c.bad_shape(Op::custom_vjp_call, {f32_3},
              {{"call", Graphs{sin_call}}, {"fwd", Graphs{sin_fwd_graph()}}, {"bwd", Graphs{mul_bwd}},
               {"num_residuals", int64_t{2}}},
              "num_residuals");
  c.bad_shape(Op::custom_vjp_call, {f32_3},
              {{"call", Graphs{sin_call}}, {"fwd", Graphs{sin_fwd_graph()}},
               {"bwd", Graphs{binary_graph(Op::lt, f32_3)}}, {"num_residuals", int64_t{1}}},
              "bwd returns (bool[3]) but must return (f32[3])");
  c.bad_shape(Op::custom_vjp_call, {f32_3},
              {{"call", Graphs{sin_call}}, {"fwd", Graphs{sin_fwd_graph()}}, {"bwd", Graphs{mul_bwd}},
               {"num_residuals", int64_t{-1}}},
              "num_residuals");
  {
    // fwd whose leading output is not the call's output type.
    GraphBuilder b;
    ValueId x = b.input(f32_3);
    GraphPtr bad_fwd = b.finish({b.add1(Op::is_finite, {x}), b.add1(Op::cos, {x})});
    c.bad_shape(Op::custom_vjp_call, {f32_3},
                {{"call", Graphs{sin_call}}, {"fwd", Graphs{bad_fwd}}, {"bwd", Graphs{mul_bwd}},
                 {"num_residuals", int64_t{1}}},
                "fwd's leading outputs must have the call's output types");
  }

  c.ok(Op::remat, {f32_3, {i32, {}}}, {{"body", Graphs{two_output_graph()}}, {"policy", std::string("dots_saveable")}},
       {f32_3, {i32, {}}});
  // custom_lin(residual, tangent) with bwd (residual, cotangent) -> cotangent * residual.
  c.ok(Op::custom_lin, {f32_3, f32_3}, {{"bwd", Graphs{binary_graph(Op::mul, f32_3)}}, {"num_residuals", int64_t{1}}},
       {f32_3});
  c.bad_shape(Op::custom_lin, {{f64, {3}}, f32_3},
              {{"bwd", Graphs{binary_graph(Op::mul, f32_3)}}, {"num_residuals", int64_t{1}}},
              "bwd must take the residuals first");
  c.bad_shape(Op::custom_lin, {f32_3, f32_3}, {{"bwd", Graphs{binary_graph(Op::mul, f32_3)}}, {"num_residuals", int64_t{3}}},
              "num_residuals 3 is out of range");
  // linear_call(residual, x): fun (residual, x) -> residual * x, its own transpose.
  c.ok(Op::linear_call, {f32_3, f32_3},
       {{"fun", Graphs{binary_graph(Op::mul, f32_3)}},
        {"num_residuals", int64_t{1}},
        {"transpose", Graphs{binary_graph(Op::mul, f32_3)}}},
       {f32_3});
  c.ok(Op::linear_call, {f32_3, f32_3},
       {{"fun", Graphs{binary_graph(Op::mul, f32_3)}}, {"num_residuals", int64_t{1}}, {"transpose", Graphs{}}},
       {f32_3});
  c.bad_shape(Op::linear_call, {f32_3, f32_3},
              {{"fun", Graphs{binary_graph(Op::mul, f32_3)}},
               {"num_residuals", int64_t{1}},
               {"transpose", Graphs{binary_graph(Op::mul, {f64, {3}})}}},
              "transpose takes");
  c.bad_shape(Op::linear_call, {f32_3, f32_3},
              {{"fun", Graphs{binary_graph(Op::mul, f32_3)}}, {"num_residuals", int64_t{3}}, {"transpose", Graphs{}}},
              "num_residuals 3 is out of range");
  const std::string nothing = "nothing_saveable";
  c.ok(Op::remat, {{f64, {2, 2}}},
       {{"body", Graphs{unary_graph(Op::tanh, {f64, {2, 2}})}}, {"policy", std::string("save_only_these_names 1:a")}},
       {{f64, {2, 2}}});
  c.bad_shape(Op::remat, {{f32, {4}}, {i32, {}}}, {{"body", Graphs{two_output_graph()}}, {"policy", nothing}},
              "body takes (f32[3], i32[]) but is given (f32[4], i32[])");
  c.bad_format(Op::remat, {f32_3}, {{"policy", nothing}}, "attribute 'body' is missing (it must be graphs)");
  c.bad_format(Op::remat, {f32_3}, {{"body", Graphs{GraphPtr{}}}, {"policy", nothing}},
               "attribute 'body' holds a null graph");
  c.bad_format(Op::remat, {f32_3}, {{"body", Graphs{unary_graph(Op::sin, f32_3)}}},
               "attribute 'policy' is missing (it must be string)");
  c.bad_format(Op::remat, {f32_3}, {{"body", Graphs{unary_graph(Op::sin, f32_3)}}, {"policy", std::string("some")}},
               "policy \"some\" is not one of");
  c.bad_format(Op::remat, {f32_3},
               {{"body", Graphs{unary_graph(Op::sin, f32_3)}}, {"policy", std::string("save_only_these_names 5:ab")}},
               "has a name longer than the text");
}

void add_callback_cases(Catalogue& c) {
  const ValueType f32_3{f32, {3}};
  // A callback without a function (as one read from JSON): the rules see only its declared results.
  auto cb = std::make_shared<HostCallback>();
  cb->name = "pure_callback at model.cpp:3";
  cb->results = {f32_3, {i32, {}}};
  auto none = std::make_shared<HostCallback>();
  none->name = "debug.print at model.cpp:4";
  const HostCallbackPtr two(cb), zero(none);
  c.ok(Op::pure_callback, {f32_3, {f64, {2, 2}}}, {{"callback", two}, {"vmap_method", std::string("expand_dims")}},
       {f32_3, {i32, {}}});
  c.ok(Op::io_callback, {f32_3}, {{"callback", zero}, {"ordered", int64_t{1}}}, {});
  c.ok(Op::io_callback, {}, {{"callback", two}, {"ordered", int64_t{0}}}, {f32_3, {i32, {}}});
  c.bad_format(Op::pure_callback, {f32_3}, {{"callback", two}, {"vmap_method", std::string("loop")}},
               "vmap_method must be sequential, expand_dims or broadcast_all");
  c.bad_shape(Op::io_callback, {f32_3}, {{"callback", zero}, {"ordered", int64_t{2}}}, "'ordered' must be 0 or 1");
  c.bad_format(Op::io_callback, {f32_3}, {{"callback", HostCallbackPtr{}}, {"ordered", int64_t{0}}}, "null callback");
  c.bad_format(Op::pure_callback, {f32_3}, {{"vmap_method", std::string("sequential")}},
               "attribute 'callback' is missing (it must be callback)");
}

void add_collective_cases(Catalogue& c) {
  for (Op op : {Op::psum, Op::pmax, Op::pmin}) {
    c.ok(op, {{f32, {2, 3}}}, {{"axis_name", std::string("devices")}}, {{f32, {2, 3}}});
    c.ok(op, {{i32, {}}}, {{"axis_name", std::string("i")}}, {{i32, {}}});
    c.bad_shape(op, {{f32, {3}}}, {{"axis_name", std::string()}}, "axis_name must not be empty");
    c.bad_format(op, {{f32, {3}}}, {}, "attribute 'axis_name' is missing (it must be string)");
  }
  c.ok(Op::pmax, {{bool_, {3}}}, {{"axis_name", std::string("i")}}, {{bool_, {3}}});
  c.bad_dtype(Op::psum, {{bool_, {3}}}, {{"axis_name", std::string("i")}}, "needs a numeric dtype, got bool");

  auto gather_attrs = [](int64_t axis, int64_t tiled) {
    return Attrs{{"axis_name", std::string("i")}, {"axis_size", int64_t{4}}, {"axis", axis}, {"tiled", tiled}};
  };
  c.ok(Op::all_gather, {{f32, {2, 3}}}, gather_attrs(1, 1), {{f32, {2, 12}}});
  c.ok(Op::all_gather, {{f32, {2, 3}}}, gather_attrs(0, 0), {{f32, {4, 2, 3}}});
  c.ok(Op::all_gather, {{f32, {2, 3}}}, gather_attrs(2, 0), {{f32, {2, 3, 4}}});
  c.ok(Op::all_gather, {{i32, {}}}, gather_attrs(0, 0), {{i32, {4}}});
  c.bad_shape(Op::all_gather, {{f32, {2, 3}}}, gather_attrs(2, 1), "axis 2 is out of range for rank 2");
  c.bad_shape(Op::all_gather, {{f32, {2, 3}}}, gather_attrs(3, 0), "axis 3 is out of range for rank 3");
  c.bad_shape(Op::all_gather, {{f32, {3}}},
              {{"axis_name", std::string("i")}, {"axis_size", int64_t{0}}, {"axis", int64_t{0}}, {"tiled", int64_t{1}}},
              "axis_size 0 is out of range");
  c.bad_shape(Op::all_gather, {{f32, {3}}}, gather_attrs(0, 3), "attribute 'tiled' must be 0 or 1, not 3");

  c.ok(Op::psum_scatter, {{f32, {8, 3}}}, gather_attrs(0, 1), {{f32, {2, 3}}});
  c.ok(Op::psum_scatter, {{f32, {3, 4}}}, gather_attrs(1, 0), {{f32, {3}}});
  c.ok(Op::psum_scatter, {{i32, {4}}}, gather_attrs(0, 0), {{i32, {}}});
  c.bad_shape(Op::psum_scatter, {{f32, {6, 3}}}, gather_attrs(0, 1), "axis 0 of size 6 does not divide by axis_size 4");
  c.bad_shape(Op::psum_scatter, {{f32, {3, 4}}}, gather_attrs(0, 0), "axis 0 must have axis_size 4");
  c.bad_dtype(Op::psum_scatter, {{bool_, {4}}}, gather_attrs(0, 0), "numeric operand, got bool");
  c.bad_shape(Op::psum_scatter, {{f32, {}}}, gather_attrs(0, 1), "axis 0 is out of range for rank 0");

  auto a2a_attrs = [](int64_t split, int64_t concat) {
    return Attrs{{"axis_name", std::string("i")}, {"axis_size", int64_t{4}}, {"split_axis", split},
                     {"concat_axis", concat}};
  };
  c.ok(Op::all_to_all, {{f32, {8, 3}}}, a2a_attrs(0, 1), {{f32, {2, 12}}});
  c.ok(Op::all_to_all, {{i32, {4, 3}}}, a2a_attrs(0, 0), {{i32, {4, 3}}});
  c.ok(Op::all_to_all, {{f32, {3, 4}}}, a2a_attrs(1, 0), {{f32, {12, 1}}});
  c.bad_shape(Op::all_to_all, {{f32, {6, 3}}}, a2a_attrs(0, 1), "split_axis 0 of size 6 does not divide by axis_size 4");
  c.bad_shape(Op::all_to_all, {{f32, {8, 3}}}, a2a_attrs(0, 2), "concat_axis 2 is out of range for rank 2");

  c.ok(Op::ppermute, {{f32, {2, 3}}}, {{"axis_name", std::string("i")}, {"perm", Ints{0, 1, 1, 2, 2, 0}}},
       {{f32, {2, 3}}});
  c.ok(Op::ppermute, {{u32, {}}}, {{"axis_name", std::string("i")}, {"perm", Ints{}}}, {{u32, {}}});
  c.bad_shape(Op::ppermute, {{f32, {3}}}, {{"axis_name", std::string("i")}, {"perm", Ints{0, 1, 2}}},
              "perm must hold (source, destination) pairs");
  c.bad_shape(Op::ppermute, {{f32, {3}}}, {{"axis_name", std::string("i")}, {"perm", Ints{0, 1, 2, 1}}},
              "destination 1 appears twice in perm");
  c.bad_shape(Op::ppermute, {{f32, {3}}}, {{"axis_name", std::string("i")}, {"perm", Ints{0, 1, 0, 2}}},
              "source 0 appears twice in perm");
  c.bad_shape(Op::ppermute, {{f32, {3}}}, {{"axis_name", std::string("i")}, {"perm", Ints{-1, 0}}},
              "perm entries must be non-negative");

  c.ok(Op::axis_index, {}, {{"axis_name", std::string("i")}}, {{i32, {}}});
  c.bad_shape(Op::axis_index, {}, {{"axis_name", std::string()}}, "axis_name must not be empty");
  c.bad_shape(Op::axis_index, {{i32, {}}}, {{"axis_name", std::string("i")}}, "takes 0 operand(s), got 1");
}

// fusion nodes exist only inside jit executables (transforms/fusion.cpp); the
// shape rule checks the body's signature and returns its outputs.
void add_pmap_cases(Catalogue& c) {
  // Body: one replica's (x f32[3], n i32[]) -> (sin x, -n).
  auto attrs = [](Ints in_dims, Ints out_dims, int64_t mapped, int64_t total) {
    return Attrs{{"axis_name", std::string("i")}, {"axis_size", total},   {"body", Graphs{two_output_graph()}},
                 {"devices", Ints{}},             {"in_dims", in_dims},   {"mapped_size", mapped},
                 {"out_dims", out_dims}};
  };
  c.ok(Op::pmap, {{f32, {4, 3}}, {i32, {}}}, attrs({0, -1}, {0, -1}, 4, 4), {{f32, {4, 3}}, {i32, {}}});
  c.ok(Op::pmap, {{f32, {3, 2}}, {i32, {2}}}, attrs({1, 0}, {1, 0}, 2, 4), {{f32, {3, 2}}, {i32, {2}}});
  c.bad_shape(Op::pmap, {{f32, {4, 3}}, {i32, {}}}, attrs({1, -1}, {0, -1}, 4, 4),
              "operand 0 f32[4,3] has size 3 at its mapped dimension 1, not mapped_size 4");
  c.bad_shape(Op::pmap, {{f32, {4, 3}}, {i32, {}}}, attrs({0, -1}, {0, -1}, 4, 6),
              "axis_size 6 is not a multiple of mapped_size 4");
  c.bad_shape(Op::pmap, {{f32, {4, 3}}, {i32, {}}}, attrs({0}, {0, -1}, 4, 4), "in_dims has 1 entries for 2 operands");
  c.bad_shape(Op::pmap, {{f32, {4, 3}}, {i32, {}}}, attrs({0, -1}, {2, -1}, 4, 4),
              "out_dims[0] 2 is out of range for rank 2");
  c.bad_shape(Op::pmap, {{f32, {4, 4}}, {i32, {}}}, attrs({0, -1}, {0, -1}, 4, 4),
              "body takes (f32[3], i32[]) but is given (f32[4], i32[])");
  c.bad_format(Op::pmap, {{f32, {4, 3}}}, {}, "attribute 'axis_name' is missing (it must be string)");
}

void add_fusion_cases(Catalogue& c) {
  const ValueType f32_3{f32, {3}};
  c.ok(Op::fusion, {f32_3, {i32, {}}}, {{"body", Graphs{two_output_graph()}}}, {f32_3, {i32, {}}});
  {
    // exp, and its sum over the last axis: a multi-output kernel ending in a reduction.
    GraphBuilder b;
    ValueId x = b.input({f32, {2, 3}});
    ValueId e = b.add1(Op::exp, {x});
    GraphPtr body = b.finish({e, b.add1(Op::reduce_sum, {e}, {{"axes", Ints{1}}})});
    c.ok(Op::fusion, {{f32, {2, 3}}}, {{"body", Graphs{body}}}, {{f32, {2, 3}}, {f32, {2}}});
  }
  c.bad_shape(Op::fusion, {{f32, {4}}, {i32, {}}}, {{"body", Graphs{two_output_graph()}}},
              "body takes (f32[3], i32[]) but is given (f32[4], i32[])");
  c.bad_format(Op::fusion, {f32_3}, {}, "attribute 'body' is missing (it must be graphs)");
  {
    GraphBuilder b;
    b.input(f32_3);
    c.bad_shape(Op::fusion, {f32_3}, {{"body", Graphs{b.finish({})}}}, "body must return at least one value");
  }
}

const Catalogue& catalogue() {
  static const Catalogue all = [] {
    Catalogue c;
    add_elementwise_cases(c);
    add_reduce_cases(c);
    add_layout_cases(c);
    add_indexing_cases(c);
    add_sort_cases(c);
    add_creation_cases(c);
    add_linalg_cases(c);
    add_random_cases(c);
    add_control_cases(c);
    add_custom_cases(c);
    add_callback_cases(c);
    add_collective_cases(c);
    add_pmap_cases(c);
    add_fusion_cases(c);
    return c;
  }();
  return all;
}

std::string attr_value_str(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, Ints>) {
          return shape_str(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, DType>) {
          return dtype_name(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + v + "\"";
        } else if constexpr (std::is_same_v<T, Graphs>) {
          // Appended piecewise: "<" + std::string trips GCC 12's false -Wrestrict.
          std::string s = std::to_string(v.size());
          s.append(" graph(s)>");
          return s.insert(0, 1, '<');
        } else if constexpr (std::is_same_v<T, HostCallbackPtr>) {
          std::string s = "<callback ";
          s.append(v ? v->name : "null");
          s.push_back('>');
          return s;
        } else {
          if (!v) return "<null literal>";
          std::string s = "<literal ";
          s.append(type_str(v->type));
          s.push_back('>');
          return s;
        }
      },
      value);
}

}  // namespace

const std::vector<OpCase>& valid_op_cases() { return catalogue().valid; }
const std::vector<BadOpCase>& invalid_op_cases() { return catalogue().invalid; }

GraphPtr graph_of(const OpCase& c) {
  GraphBuilder b;
  std::vector<ValueId> operands;
  for (const ValueType& t : c.inputs) operands.push_back(b.input(t));
  return b.finish(b.add(c.op, std::move(operands), c.attrs));
}

std::string case_summary(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs) {
  std::string s = std::string(op_name(op)) + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + type_str(inputs[i]);
  s += ")";
  if (!attrs.empty()) {
    s += " {";
    bool first = true;
    for (const auto& [name, value] : attrs.items()) {
      s += (first ? "" : ", ") + name + "=" + attr_value_str(value);
      first = false;
    }
    s += "}";
  }
  return s;
}

}  // namespace graft::ir::testing
