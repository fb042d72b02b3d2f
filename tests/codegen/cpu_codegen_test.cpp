// The CPU code generator: generated kernels against the interpreter, op by
// op and on fused bodies (broadcasts, constants, reductions), and the
// compiler driver's caches.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <stdexcept>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emit.h"
#include "graft/graft.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "support/kernel_bodies.h"
#include "support/scoped_env.h"

namespace cg = graft::codegen::cpu;
using namespace graft;
using ir::Op;
using ir::ValueId;

namespace {

using graft::test::ScopedEnv;

// Op tests keep their modules under the build tree, so a rerun loads them.
std::string op_cache_dir() { return std::string(GRAFT_TEST_TMPDIR) + "/codegen_cache"; }

// ---- inputs with exact bits

Array raw_array(DType dt, const Shape& shape, const void* bytes) {
  auto impl = detail::allocate_concrete(ir::ValueType{dt, shape});
  size_t n = static_cast<size_t>(ir::checked_num_elements(shape)) * ir::dtype_size(dt);
  if (n) std::memcpy(impl->buffer->data(), bytes, n);
  return Array(impl);
}

uint64_t lcg(uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 11;
}
double uniform01(uint64_t& s) { return static_cast<double>(lcg(s)) / static_cast<double>(1ull << 53); }

// Floats in [lo, hi), with special values (zeros, infinities, NaN,
// denormals, halves, huge values) every 37th element and in the last ones.
template <class T>
std::vector<T> float_values(int64_t n, uint64_t salt, double lo, double hi, bool specials_too) {
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0),   -T(0),  L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min() * 3,
                        T(-1),  T(1),   T(0.5),        T(-0.5),        T(2.5),         T(-2.5),
                        T(1e30), T(-1e30), T(3),       T(88.5),        T(-0.99),       T(0.25)};
  const int64_t ns = sizeof(specials) / sizeof(specials[0]);
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = salt * 7919 + 17;
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(lo + (hi - lo) * uniform01(s));
    if (specials_too && (i % 37 == 5 || i >= n - 3)) v[i] = specials[lcg(s) % ns];
  }
  return v;
}

template <class T>
std::vector<T> int_values(int64_t n, uint64_t salt) {
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0), T(1), static_cast<T>(-1), L::min(), L::max(), T(2), static_cast<T>(-2), T(7),
                        static_cast<T>(-7), static_cast<T>(L::max() - 1)};
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = salt * 104729 + 3;
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(static_cast<int64_t>(lcg(s) % 201) - 100);
    if (i % 11 == 3 || i >= n - 2) v[i] = specials[lcg(s) % 10];
  }
  return v;
}

// A half's bits for float_values' values, with every 7th element random
// bits (subnormals, NaN payloads, the largest values) when specials are on.
std::vector<uint16_t> half_values(DType dt, int64_t n, uint64_t salt, double lo, double hi, bool specials) {
  std::vector<float> f = float_values<float>(n, salt, lo, hi, specials);
  std::vector<uint16_t> h(static_cast<size_t>(n));
  uint64_t s = salt * 31 + 7;
  for (int64_t i = 0; i < n; ++i) {
    h[i] = dt == DType::f16 ? float16(f[i]).bits : bfloat16(f[i]).bits;
    if (specials && i % 7 == 2) h[i] = static_cast<uint16_t>(lcg(s));
  }
  return h;
}

// specials: float inputs include zeros, infinities, NaN, ... (see float_values).
Array input_array(DType dt, const Shape& shape, uint64_t salt, double lo = -4, double hi = 4, bool specials = true) {
  const int64_t n = ir::checked_num_elements(shape);
  switch (dt) {
    case DType::f16:
    case DType::bf16: return raw_array(dt, shape, half_values(dt, n, salt, lo, hi, specials).data());
    case DType::i8: return raw_array(dt, shape, int_values<int8_t>(n, salt).data());
    case DType::u8: return raw_array(dt, shape, int_values<uint8_t>(n, salt).data());
    case DType::i16: return raw_array(dt, shape, int_values<int16_t>(n, salt).data());
    case DType::u16: return raw_array(dt, shape, int_values<uint16_t>(n, salt).data());
    case DType::u64: return raw_array(dt, shape, int_values<uint64_t>(n, salt).data());
    case DType::c64: return raw_array(dt, shape, float_values<float>(2 * n, salt, lo, hi, specials).data());
    case DType::c128: return raw_array(dt, shape, float_values<double>(2 * n, salt, lo, hi, specials).data());
    case DType::f32: return raw_array(dt, shape, float_values<float>(n, salt, lo, hi, specials).data());
    case DType::f64: return raw_array(dt, shape, float_values<double>(n, salt, lo, hi, specials).data());
    case DType::i32: return raw_array(dt, shape, int_values<int32_t>(n, salt).data());
    case DType::i64: return raw_array(dt, shape, int_values<int64_t>(n, salt).data());
    case DType::u32: return raw_array(dt, shape, int_values<uint32_t>(n, salt).data());
    case DType::bool_: {
      std::vector<uint8_t> b(static_cast<size_t>(n));
      uint64_t s = salt + 5;
      for (auto& x : b) x = static_cast<uint8_t>(lcg(s) % 2);
      return raw_array(dt, shape, b.data());
    }
    default: throw std::logic_error("no case for this dtype here");
  }
  return {};
}

// ---- bodies

using test::axes;
using test::bcast;
using test::constant;
using test::to;

struct Case {
  std::string sym;
  ir::GraphPtr body;
  std::vector<Array> inputs;
  int64_t n = 0;             // the iteration space
  std::vector<double> tol;   // per output: 0 = bit-exact (NaN == NaN), else relative to scale_output's sum |v|
  std::vector<std::string> names;  // per output, for messages
  int scale_output = -1;     // the values a tolerant output reduces
};

// out(v, name): v becomes the body's next output, called name in messages.
auto named_output(std::vector<ValueId>* outs, std::vector<std::string>* names) {
  return [outs, names](ValueId v, const std::string& name) {
    outs->push_back(v);
    names->push_back(name);
  };
}

// One output per op, each applied to the body's inputs.
Case per_op_case(const std::string& sym, DType dt, int64_t n, const std::vector<Op>& unary, const std::vector<Op>& binary) {
  Case c;
  c.sym = sym;
  c.n = n;
  ir::GraphBuilder b;
  ValueId x = b.input({dt, {n}});
  ValueId y = b.input({dt, {n}});
  std::vector<ValueId> outs;
  for (Op op : unary) outs.push_back(b.add1(op, {x})), c.names.push_back(std::string(ir::op_name(op)));
  for (Op op : binary) outs.push_back(b.add1(op, {x, y})), c.names.push_back(std::string(ir::op_name(op)));
  c.body = b.finish(outs);
  c.inputs = {input_array(dt, {n}, 1), input_array(dt, {n}, 2)};
  if (ir::is_floating(dt)) {
    // y equals x in places, so comparisons and max/min see ties (and -0 against +0).
    Array same = c.inputs[0];
    std::vector<uint8_t> yb(static_cast<size_t>(c.inputs[1].nbytes()));
    std::memcpy(yb.data(), c.inputs[1].unsafe_buffer_pointer(), yb.size());
    const size_t es = ir::dtype_size(dt);
    for (int64_t i = 0; i < n; i += 13) std::memcpy(yb.data() + i * es, static_cast<const uint8_t*>(same.unsafe_buffer_pointer()) + i * es, es);
    c.inputs[1] = raw_array(dt, {n}, yb.data());
  }
  c.tol.assign(outs.size(), 0);
  return c;
}

// ---- running and comparing

std::vector<Array> run_compiled(cg::KernelFn fn, const Case& c, const std::vector<Array>& inputs,
                                std::vector<Array> outputs = {}) {
  std::vector<const void*> in;
  for (const Array& a : inputs) in.push_back(a.unsafe_buffer_pointer());
  if (outputs.empty()) {
    for (ValueId id : c.body->outputs()) {
      auto impl = detail::allocate_concrete(c.body->type(id));
      std::memset(impl->buffer->data(), 0xA5, impl->buffer->size());  // unwritten elements show
      outputs.emplace_back(impl);
    }
  }
  std::vector<void*> out;
  for (const Array& a : outputs) out.push_back(const_cast<void*>(a.unsafe_buffer_pointer()));
  std::vector<int64_t> sc = cg::kernel_scalars(*c.body);
  fn(in.data(), out.data(), sc.data(), c.n);
  return outputs;
}

template <class T>
double as_double(const void* p, int64_t i) {
  return static_cast<double>(static_cast<const T*>(p)[i]);
}

double element(DType dt, const void* p, int64_t i) {
  switch (dt) {
    case DType::bool_: return as_double<bool>(p, i);
    case DType::i32: return as_double<int32_t>(p, i);
    case DType::i64: return as_double<int64_t>(p, i);
    case DType::u32: return as_double<uint32_t>(p, i);
    case DType::f32: return as_double<float>(p, i);
    case DType::f64: return as_double<double>(p, i);
    case DType::i8: return as_double<int8_t>(p, i);
    case DType::u8: return as_double<uint8_t>(p, i);
    case DType::i16: return as_double<int16_t>(p, i);
    case DType::u16: return as_double<uint16_t>(p, i);
    case DType::u64: return as_double<uint64_t>(p, i);
    case DType::f16: return float16::from_bits(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16: return bfloat16::from_bits(static_cast<const uint16_t*>(p)[i]);
    default: throw std::logic_error("no case for this dtype here");
  }
  return 0;
}

// Counts elements that differ: bitwise (any NaN equals any NaN) when tol is
// 0, else by more than tol * scale.
int64_t mismatches(const Array& want, const Array& got, double tol, double scale, const std::string& what) {
  REQUIRE(want.dtype() == got.dtype());
  REQUIRE(want.shape() == got.shape());
  if (ir::is_complex(want.dtype())) {  // as their parts: [..., 2] of the real dtype
    Shape parts = want.shape();
    parts.push_back(2);
    const DType r = ir::real_dtype(want.dtype());
    return mismatches(raw_array(r, parts, want.unsafe_buffer_pointer()),
                      raw_array(r, parts, got.unsafe_buffer_pointer()), tol, scale, what);
  }
  const DType dt = want.dtype();
  const size_t es = ir::dtype_size(dt);
  const auto* w = static_cast<const uint8_t*>(want.unsafe_buffer_pointer());
  const auto* g = static_cast<const uint8_t*>(got.unsafe_buffer_pointer());
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    double a = element(dt, w, i), b = element(dt, g, i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else if (tol == 0) ok = std::memcmp(w + i * es, g + i * es, es) == 0;
    else ok = std::fabs(a - b) <= tol * scale;
    if (!ok && bad++ < 3) {
      UNSCOPED_INFO(what << "[" << i << "]: interpreter " << a << ", compiled " << b
                         << (a == b ? " (same value, other sign of zero or bits)" : ""));
    }
  }
  return bad;
}

// The sum of |v| over all elements: a bound for the rounding of any sum of them.
double sum_abs(const Array& a) {
  double s = 0;
  for (double v : astype(a, f64).to_vector<double>()) s += std::fabs(v);
  return s;
}

void check_case(const Case& c, cg::KernelFn fn) {
  std::vector<Array> want = detail::call_graph(*c.body, c.inputs);
  std::vector<Array> got = run_compiled(fn, c, c.inputs);
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    std::string what = c.sym + " output " + std::to_string(k) + (k < c.names.size() ? " (" + c.names[k] + ")" : "");
    const double tol = k < c.tol.size() ? c.tol[k] : 0;
    INFO(what);
    const double scale = tol ? sum_abs(want.at(c.scale_output)) : 1;
    INFO("tolerance " << tol * scale);
    CHECK(mismatches(want[k], got[k], tol, scale, what) == 0);
  }
}

// Compiles every case into one module and checks each against the interpreter.
void check_cases(const std::vector<Case>& cases) {
  std::string source;
  std::vector<std::string> syms;
  for (const Case& c : cases) {
    source += cg::emit_kernel(*c.body, c.sym);
    syms.push_back(c.sym);
  }
  ScopedEnv dir("GRAFT_CACHE_DIR", op_cache_dir());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<cg::KernelFn> fns = cg::compile_kernels(source, syms);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("cpu codegen: " << cases.size() << " kernels, " << source.size() << " bytes of source, compiled or loaded in "
                       << secs << " s");
  for (size_t i = 0; i < cases.size(); ++i) check_case(cases[i], fns[i]);
}

using test::kFloatBinary;
using test::kFloatUnary;
using test::kIntBinary;
using test::kIntUnary;

// select and every conversion between f32, f64, i32, u32, i64 and bool.
Case select_convert_case() {
  Case c;
  c.sym = "k_select_convert";
  const int64_t n = 2053;
  c.n = n;
  ir::GraphBuilder b;
  ValueId x = b.input({f32, {n}}), y = b.input({f32, {n}}), z = b.input({f64, {n}}), i = b.input({i32, {n}}),
          u = b.input({u32, {n}}), l = b.input({i64, {n}}), p = b.input({bool_, {}}), q = b.input({bool_, {n}});
  std::vector<ValueId> outs = {b.add1(Op::select, {b.add1(Op::lt, {x, y}), x, y}), b.add1(Op::select, {p, x, y}),
                               b.add1(Op::select, {q, z, z}), b.add1(Op::select, {q, i, b.add1(Op::neg, {i})})};
  c.names = {"select(lt)", "select(scalar)", "select(f64)", "select(i32)"};
  const std::vector<std::pair<ValueId, DType>> from = {{x, f32}, {z, f64}, {i, i32}, {u, u32}, {l, i64}, {q, bool_}};
  for (auto [v, fd] : from)
    for (DType td : {f32, f64, i32, u32, i64, bool_}) {
      if (td == fd) continue;
      outs.push_back(b.add1(Op::convert_element_type, {v}, to(td)));
      c.names.push_back(std::string("convert ") + dtype_name(fd) + "->" + dtype_name(td));
    }
  c.body = b.finish(outs);
  c.inputs = {input_array(f32, {n}, 3, -5e9, 5e9), input_array(f32, {n}, 4), input_array(f64, {n}, 5, -1e19, 1e19),
              input_array(i32, {n}, 6), input_array(u32, {n}, 7), input_array(i64, {n}, 8), input_array(bool_, {}, 9),
              input_array(bool_, {n}, 10)};
  c.tol.assign(outs.size(), 0);
  return c;
}

// The halves: every conversion to and from each other dtype, bitcasts to and
// from their 16-bit integers, select, and a chain rounding after each op.
Case half_convert_case() {
  Case c;
  c.sym = "k_half_convert";
  const int64_t n = 1543;
  c.n = n;
  ir::GraphBuilder b;
  const std::vector<DType> others = {f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool_};
  ValueId h = b.input({f16, {n}}), g = b.input({bf16, {n}}), q = b.input({bool_, {n}});
  std::vector<ValueId> outs;
  std::vector<Array> inputs = {input_array(f16, {n}, 41, -300, 300), input_array(bf16, {n}, 42, -3e5, 3e5),
                               input_array(bool_, {n}, 43)};
  auto out = named_output(&outs, &c.names);
  for (auto [v, hd] : {std::pair{h, f16}, std::pair{g, bf16}}) {
    const std::string hn = dtype_name(hd);
    for (DType d : others) out(b.add1(Op::convert_element_type, {v}, to(d)), hn + "->" + dtype_name(d));
    out(b.add1(Op::convert_element_type, {v}, to(hd == f16 ? bf16 : f16)), hn + "->other half");
    const DType bits = hd == f16 ? i16 : u16;
    out(b.add1(Op::bitcast_convert_type, {v}, to(bits)), "bitcast " + hn);
    out(b.add1(Op::select, {q, v, b.add1(Op::neg, {v})}), "select " + hn);
    // (x * x + 1) / x - x: each op rounded to the half.
    ValueId one = b.add1(Op::broadcast_in_dim, {constant(b, hd, 1.0)}, bcast({n}, {}));
    out(b.add1(Op::sub, {b.add1(Op::div, {b.add1(Op::add, {b.add1(Op::mul, {v, v}), one}), v}), v}), "chain " + hn);
  }
  for (DType d : others) {
    ValueId x = b.input({d, {n}});
    inputs.push_back(d == f32 || d == f64 ? input_array(d, {n}, 50 + inputs.size(), -1e5, 1e5)
                                          : input_array(d, {n}, 50 + inputs.size()));
    out(b.add1(Op::convert_element_type, {x}, to(f16)), std::string(dtype_name(d)) + "->f16");
    out(b.add1(Op::convert_element_type, {x}, to(bf16)), std::string(dtype_name(d)) + "->bf16");
    if (d == i16 || d == u16) {
      out(b.add1(Op::bitcast_convert_type, {x}, to(f16)), std::string("bitcast to f16 from ") + dtype_name(d));
      out(b.add1(Op::bitcast_convert_type, {x}, to(bf16)), std::string("bitcast to bf16 from ") + dtype_name(d));
    }
  }
  c.body = b.finish(outs);
  c.inputs = inputs;
  c.tol.assign(outs.size(), 0);
  return c;
}

// Complex values: every op with an inline complex kernel, complex(re, im), real,
// imag, conj, conversions both ways, select and a c64 constant (a kernel
// parameter), in c64 and c128.
std::vector<Case> complex_cases() {
  // (The ops calling the C library's complex functions run on the interpreter: see the refusals' test.)
  const std::vector<Op> unary = {Op::neg,  Op::abs,  Op::sign, Op::square, Op::reciprocal,
                                 Op::copy, Op::real, Op::imag, Op::conj,   Op::stop_gradient};
  const std::vector<Op> binary = {Op::add, Op::sub, Op::mul, Op::div, Op::eq, Op::ne};
  std::vector<Case> cases = {per_op_case("k_c64", c64, 2011, unary, binary),
                             per_op_case("k_c128", c128, 517, unary, binary)};
  Case c;
  c.sym = "k_complex_convert";
  const int64_t n = 1031;
  c.n = n;
  ir::GraphBuilder b;
  ValueId z = b.input({c64, {n}}), w = b.input({c128, {n}}), x = b.input({f32, {n}}), y = b.input({f32, {n}}),
          i = b.input({i32, {n}}), h = b.input({bf16, {n}}), q = b.input({bool_, {n}});
  std::vector<ValueId> outs;
  auto out = named_output(&outs, &c.names);
  ValueId xy = b.add1(Op::complex, {x, y});
  out(xy, "complex(x, y)");
  for (DType d : {f32, f64, f16, i32, u8, bool_, c128})
    out(b.add1(Op::convert_element_type, {z}, to(d)), std::string("c64->") + dtype_name(d));
  out(b.add1(Op::convert_element_type, {w}, to(c64)), "c128->c64");
  out(b.add1(Op::convert_element_type, {w}, to(bf16)), "c128->bf16");
  for (auto [v, d] : {std::pair{x, f32}, std::pair{i, i32}, std::pair{h, bf16}, std::pair{q, bool_}})
    out(b.add1(Op::convert_element_type, {v}, to(c64)), std::string(dtype_name(d)) + "->c64");
  out(b.add1(Op::select, {q, z, b.add1(Op::conj, {z})}), "select");
  ValueId zbits = b.add1(Op::bitcast_convert_type, {z}, to(u64));
  out(zbits, "bitcast c64->u64");
  out(b.add1(Op::bitcast_convert_type, {b.add1(Op::add, {zbits, zbits})}, to(c64)), "bitcast u64->c64");
  out(b.add1(Op::atanh, {b.add1(Op::mul, {z, z})}), "atanh(z * z)");  // a C library call, not VECTOR_MATH: emitted
  // z * k + complex(x, y) with k a c64 constant 0.5 - 2i.
  ir::Literal lit{ir::ValueType{c64, {}}, std::vector<uint8_t>(8)};
  const std::complex<float> kv(0.5f, -2.0f);
  std::memcpy(lit.bytes.data(), &kv, 8);
  ValueId k = b.add1(Op::constant, {}, ir::Attrs{{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
  ValueId kb = b.add1(Op::broadcast_in_dim, {k}, bcast({n}, {}));
  out(b.add1(Op::add, {b.add1(Op::mul, {z, kb}), xy}), "z * k + complex(x, y)");
  out(b.add1(Op::abs, {b.add1(Op::div, {b.add1(Op::mul, {w, w}), w})}), "abs(w * w / w)");
  c.body = b.finish(outs);
  c.inputs = {input_array(c64, {n}, 61),  input_array(c128, {n}, 62), input_array(f32, {n}, 63),
              input_array(f32, {n}, 64),  input_array(i32, {n}, 65),  input_array(bf16, {n}, 66),
              input_array(bool_, {n}, 67)};
  c.tol.assign(outs.size(), 0);
  cases.push_back(c);
  return cases;
}

// A long fused chain over [R, C]: row and column broadcasts of inputs, a
// scalar input, constants (0.123456 among them), and several outputs.
Case chain_case(const std::string& sym, DType dt, double c1, bool alias_shape = false) {
  const int64_t R = 37, C = 130;
  Case c;
  c.sym = sym;
  c.n = R * C;
  ir::GraphBuilder b;
  ValueId x = alias_shape ? b.add1(Op::reshape, {b.input({dt, {R * C}})}, ir::Attrs{{"new_sizes", ir::Ints{R, C}}})
                          : b.input({dt, {R, C}});
  ValueId bias = b.input({dt, {C}});
  ValueId scale = b.input({dt, {R, 1}});
  ValueId lr = b.input({dt, {}});
  ValueId k1 = constant(b, dt, c1), k2 = constant(b, dt, 3.0), k3 = constant(b, dt, 0.5);
  auto full = [&](ValueId s) { return b.add1(Op::broadcast_in_dim, {s}, bcast({R, C}, {})); };
  ValueId bb = b.add1(Op::broadcast_in_dim, {bias}, bcast({R, C}, {1}));
  ValueId sb = b.add1(Op::broadcast_in_dim, {scale}, bcast({R, C}, {0, 1}));
  ValueId h = b.add1(Op::add, {b.add1(Op::mul, {x, sb}), bb});
  ValueId a = b.add1(Op::mul, {b.add1(Op::logistic, {h}), full(k1)});
  ValueId d = b.add1(Op::sub, {b.add1(Op::tanh, {x}), a});
  ValueId e = b.add1(Op::exp, {b.add1(Op::min, {d, full(k2)})});
  ValueId lrk = b.add1(Op::mul, {lr, k3});  // computed once per call
  ValueId f = b.add1(Op::add, {b.add1(Op::sqrt, {b.add1(Op::abs, {b.add1(Op::mul, {e, full(lrk)})})}),
                               b.add1(Op::log1p, {b.add1(Op::abs, {h})})});
  ValueId g = b.add1(Op::select, {b.add1(Op::gt, {f, full(k3)}), f, b.add1(Op::neg, {f})});
  ValueId splat = b.add1(Op::exp, {full(lr)});  // a broadcast scalar through a call stage
  ValueId flat = b.add1(Op::reshape, {b.add1(Op::add, {g, splat})}, ir::Attrs{{"new_sizes", ir::Ints{R * C}}});
  c.body = b.finish({g, flat, lrk, a, bb});
  c.names = {"g", "flat", "lr*0.5", "a", "broadcast bias"};
  c.inputs = {input_array(dt, alias_shape ? Shape{R * C} : Shape{R, C}, 11), input_array(dt, {C}, 12),
              input_array(dt, {R, 1}, 13), input_array(dt, {}, 14, 0.5, 2)};
  c.tol.assign(5, 0);
  return c;
}

// A trailing reduction of f(x) over `ax`, with f(x) also an output.
Case reduce_case(const std::string& sym, DType dt, const Shape& shape, Op red, const ir::Ints& ax, Op f, double tol,
                 double lo = -4, double hi = 4) {
  Case c;
  c.sym = sym;
  c.n = ir::checked_num_elements(shape);
  ir::GraphBuilder b;
  ValueId x = b.input({dt, shape});
  ValueId fx = b.add1(f, {x});
  ValueId r = b.add1(red, {fx}, axes(ax));
  c.body = b.finish({fx, r});
  c.names = {std::string(ir::op_name(f)), std::string(ir::op_name(red))};
  c.inputs = {input_array(dt, shape, 21, lo, hi, tol == 0)};  // NaN would make every sum NaN
  c.tol = {0, tol};
  c.scale_output = 0;
  return c;
}

// softmax's denominator: sum over rows of exp(x - max) with the max an input
// broadcast along the rows (a gathered column).
Case softmax_case() {
  const int64_t R = 300, C = 257;
  Case c;
  c.sym = "k_softmax_sum";
  c.n = R * C;
  ir::GraphBuilder b;
  ValueId x = b.input({f32, {R, C}});
  ValueId m = b.input({f32, {R}});
  ValueId e = b.add1(Op::exp, {b.add1(Op::sub, {x, b.add1(Op::broadcast_in_dim, {m}, bcast({R, C}, {0}))})});
  c.body = b.finish({b.add1(Op::reduce_sum, {e}, axes({1})), e});
  c.names = {"row sums", "exp"};
  std::vector<float> xv(static_cast<size_t>(R * C)), mv(static_cast<size_t>(R), -1e30f);
  uint64_t s = 99;
  for (int64_t i = 0; i < R * C; ++i) {
    xv[i] = static_cast<float>(-6 + 12 * uniform01(s));
    mv[i / C] = std::max(mv[i / C], xv[i]);
  }
  c.inputs = {raw_array(f32, {R, C}, xv.data()), raw_array(f32, {R}, mv.data())};
  c.tol = {1e-5, 0};
  c.scale_output = 1;
  return c;
}

// 60 rounds of t = tanh(t) * c + x: a long chain whose block arrays
// outgrow the stack (the kernel takes them from the heap).
Case long_chain_case() {
  Case c;
  c.sym = "k_long_chain";
  c.n = 3001;
  ir::GraphBuilder b;
  ValueId x = b.input({f64, {3001}});
  ValueId k = b.add1(Op::broadcast_in_dim, {constant(b, f64, 0.75)}, bcast({3001}, {}));
  ValueId t = x;
  for (int i = 0; i < 60; ++i) t = b.add1(Op::add, {b.add1(Op::mul, {b.add1(Op::tanh, {t}), k}), x});
  c.body = b.finish({t});
  c.names = {"chain"};
  c.inputs = {input_array(f64, {3001}, 36)};
  c.tol = {0};
  return c;
}

// Outputs that are inputs, small inputs, splats, repeated values; a
// reduction of a broadcast input, output twice; bool reductions.
std::vector<Case> output_cases() {
  std::vector<Case> cases;
  {
    Case c;
    c.sym = "k_outputs";
    c.n = 301;
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {301}}), small = b.input({i32, {3, 2}}), s = b.input({f64, {}});
    ValueId e = b.add1(Op::exp, {x});
    ValueId splat = b.add1(Op::broadcast_in_dim, {s}, bcast({4}, {}));
    ValueId rs = b.add1(Op::reshape, {small}, ir::Attrs{{"new_sizes", ir::Ints{6}}});
    c.body = b.finish({x, e, small, splat, e, rs, s, b.add1(Op::reshape, {x}, ir::Attrs{{"new_sizes", ir::Ints{7, 43}}})});
    c.names = {"x", "exp", "small", "splat", "exp again", "reshaped small", "scalar", "reshaped x"};
    c.inputs = {input_array(f32, {301}, 31), input_array(i32, {3, 2}, 32), input_array(f64, {}, 33)};
    c.tol.assign(8, 0);
    cases.push_back(c);
  }
  {
    Case c;
    c.sym = "k_reduce_view";
    c.n = 35;
    ir::GraphBuilder b;
    ValueId r = b.input({f32, {7}});
    ValueId m = b.add1(Op::reduce_max, {b.add1(Op::broadcast_in_dim, {r}, bcast({5, 7}, {1}))}, axes({0}));
    c.body = b.finish({m, m});
    c.names = {"max", "max again"};
    c.inputs = {input_array(f32, {7}, 34)};
    c.tol.assign(2, 0);
    cases.push_back(c);
  }
  {
    Case c;
    c.sym = "k_reduce_bool";
    c.n = 50 * 9;
    ir::GraphBuilder b;
    ValueId p = b.input({bool_, {50, 9}});
    ValueId q = b.add1(Op::bitwise_not, {p});
    c.body = b.finish({b.add1(Op::reduce_min, {q}, axes({1}))});
    c.names = {"all"};
    c.inputs = {input_array(bool_, {50, 9}, 35)};
    c.tol.assign(1, 0);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

TEST_CASE("cpu codegen: a compiler is present", "[codegen]") {
  INFO(cg::cpu_compiler_description());
  REQUIRE(cg::cpu_compiler_available());
}

TEST_CASE("cpu codegen: every elementwise op equals the interpreter bit for bit", "[codegen]") {
  std::vector<Case> cases;
  // f32 over more than kParallelMin elements: the parallel paths of both sides.
  cases.push_back(per_op_case("k_f32", f32, 40009, kFloatUnary, kFloatBinary));
  cases.push_back(per_op_case("k_f64", f64, 1031, kFloatUnary, kFloatBinary));
  cases.push_back(per_op_case("k_i32", i32, 1029, kIntUnary, kIntBinary));
  cases.push_back(per_op_case("k_i64", i64, 517, kIntUnary, kIntBinary));
  cases.push_back(per_op_case("k_u32", u32, 517, {Op::square, Op::reciprocal, Op::bitwise_not}, kIntBinary));
  cases.push_back(per_op_case("k_bool", bool_, 263, {Op::bitwise_not, Op::copy},
                              {Op::bitwise_and, Op::bitwise_or, Op::bitwise_xor, Op::eq, Op::ne, Op::lt, Op::ge}));
  cases.push_back(select_convert_case());
  // The halves compute in float, rounding each op's result, as the interpreter does.
  cases.push_back(per_op_case("k_f16", f16, 20011, kFloatUnary, kFloatBinary));
  cases.push_back(per_op_case("k_bf16", bf16, 1031, kFloatUnary, kFloatBinary));
  cases.push_back(half_convert_case());
  // Complex values, with std::complex as the interpreter computes them.
  for (Case& c : complex_cases()) cases.push_back(std::move(c));
  cases.push_back(chain_case("k_chain_bf16", bf16, 0.123456));
  cases.push_back(chain_case("k_chain_f16", f16, 0.123456, true));
  // Small integers.
  cases.push_back(per_op_case("k_i8", i8, 517, kIntUnary, kIntBinary));
  cases.push_back(per_op_case("k_u16", u16, 517, {Op::square, Op::bitwise_not, Op::population_count}, kIntBinary));
  cases.push_back(chain_case("k_chain_f32", f32, 0.123456));
  cases.push_back(chain_case("k_chain_f64", f64, 0.123456, true));
  // Trailing reductions, in the interpreter's order (float sums: sum_order.h), so tol 0.
  cases.push_back(reduce_case("k_sum_all", f32, {70001}, Op::reduce_sum, {0}, Op::exp, 0, -1, 0));
  cases.push_back(reduce_case("k_sum_all_f64", f64, {5000}, Op::reduce_sum, {0}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_rows_f32", f32, {37, 1000}, Op::reduce_sum, {1}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_short_rows", f64, {300, 5}, Op::reduce_sum, {1}, Op::cos, 0));
  cases.push_back(reduce_case("k_max_all", f32, {40000}, Op::reduce_max, {0}, Op::sqrt, 0));
  cases.push_back(reduce_case("k_min_rows", f32, {129, 77}, Op::reduce_min, {1}, Op::neg, 0));
  cases.push_back(reduce_case("k_max_rows_i32", i32, {100, 33}, Op::reduce_max, {1}, Op::abs, 0));
  cases.push_back(reduce_case("k_sum_rows_i32", i32, {1000, 9}, Op::reduce_sum, {1}, Op::square, 0));
  cases.push_back(reduce_case("k_sum_cols", f32, {513, 70}, Op::reduce_sum, {0}, Op::tanh, 0));
  cases.push_back(reduce_case("k_sum_cols_wide", f64, {40, 1500}, Op::reduce_sum, {0}, Op::expm1, 0, -1, 1));
  // Few columns of many rows: pieces of rows on threads, combined as one pass would (the last piece short).
  cases.push_back(reduce_case("k_sum_tall_cols", f32, {5000, 70}, Op::reduce_sum, {0}, Op::tanh, 0));
  cases.push_back(reduce_case("k_sum_tall_middle", f64, {3, 4500, 40}, Op::reduce_sum, {1}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_tall_even", f32, {8192, 16}, Op::reduce_sum, {0}, Op::exp, 0));
  cases.push_back(reduce_case("k_min_middle", f64, {6, 50, 33}, Op::reduce_min, {1}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_middle", f32, {6, 50, 33}, Op::reduce_sum, {1}, Op::atan, 0));
  cases.push_back(reduce_case("k_sum_outer_inner_i32", i32, {6, 50, 33}, Op::reduce_sum, {0, 2}, Op::neg, 0));
  cases.push_back(reduce_case("k_sum_unit_axis", f32, {5, 1, 7}, Op::reduce_sum, {1}, Op::log, 0));
  cases.push_back(reduce_case("k_sum_empty", f32, {0, 4}, Op::reduce_sum, {0}, Op::exp, 0));
  cases.push_back(reduce_case("k_max_scalar", f64, {1, 1}, Op::reduce_max, {0, 1}, Op::cosh, 0));
  // Halves reduce in f32, rounded once.
  cases.push_back(reduce_case("k_sum_all_bf16", bf16, {70001}, Op::reduce_sum, {0}, Op::exp, 0, -1, 0));
  cases.push_back(reduce_case("k_sum_rows_f16", f16, {37, 1000}, Op::reduce_sum, {1}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_cols_bf16", bf16, {513, 70}, Op::reduce_sum, {0}, Op::tanh, 0));
  cases.push_back(reduce_case("k_sum_tall_cols_bf16", bf16, {5000, 64}, Op::reduce_sum, {0}, Op::tanh, 0));
  cases.push_back(reduce_case("k_max_rows_f16", f16, {129, 77}, Op::reduce_max, {1}, Op::neg, 0));
  cases.push_back(reduce_case("k_min_middle_bf16", bf16, {6, 50, 33}, Op::reduce_min, {1}, Op::sin, 0));
  cases.push_back(reduce_case("k_sum_empty_f16", f16, {0, 4}, Op::reduce_sum, {0}, Op::exp, 0));
  cases.push_back(softmax_case());
  for (Case& c : output_cases()) cases.push_back(std::move(c));
  cases.push_back(long_chain_case());
  check_cases(cases);
}

TEST_CASE("cpu codegen: outputs may alias inputs", "[codegen]") {
  Case c = chain_case("k_alias_chain", f32, 0.75);
  ScopedEnv dir("GRAFT_CACHE_DIR", op_cache_dir());
  cg::KernelFn fn = cg::compile_kernel(cg::emit_kernel(*c.body, c.sym), c.sym);
  std::vector<Array> want = detail::call_graph(*c.body, c.inputs);
  // Output 0 (g, [R, C]) written over a copy of input 0 (x, [R, C]).
  Array x_copy = raw_array(f32, c.inputs[0].shape(), c.inputs[0].unsafe_buffer_pointer());
  std::vector<Array> inputs = c.inputs;
  inputs[0] = x_copy;
  std::vector<Array> outs;
  for (ValueId id : c.body->outputs()) outs.emplace_back(detail::allocate_concrete(c.body->type(id)));
  outs[0] = x_copy;
  std::vector<Array> got = run_compiled(fn, c, inputs, outs);
  for (size_t k = 0; k < want.size(); ++k) CHECK(mismatches(want[k], got[k], 0, 1, c.names[k]) == 0);
}

TEST_CASE("cpu codegen: constants are parameters, not source", "[codegen]") {
  Case a = chain_case("k_const", f32, 0.123456);
  Case b = chain_case("k_const", f32, 0.654321);
  std::string src = cg::emit_kernel(*a.body, "k_const");
  CHECK(src.find("0.123456") == std::string::npos);
  CHECK(src.find("123456") == std::string::npos);
  CHECK(src.find("0.12345") == std::string::npos);
  CHECK(src == cg::emit_kernel(*b.body, "k_const"));  // a new value: the same kernel
  CHECK(cg::kernel_constants(*a.body) != cg::kernel_constants(*b.body));
  CHECK(cg::kernel_constants(*a.body).size() == 3);

  // Both values through the one compiled kernel.
  ScopedEnv dir("GRAFT_CACHE_DIR", op_cache_dir());
  cg::KernelFn fn = cg::compile_kernel(src, "k_const");
  check_case(a, fn);
  check_case(b, fn);
}

TEST_CASE("cpu codegen: modules are cached in memory and on disk", "[codegen]") {
  Case c = chain_case("k_cache", f64, 0.25);
  // A comment makes this source unique to this run, so the first compile is real.
  const std::string tag = std::to_string(getpid()) + "_" +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string src = "// cache test " + tag + "\n" + cg::emit_kernel(*c.body, c.sym);
  const std::string dir = std::string(GRAFT_TEST_TMPDIR) + "/codegen_cache_" + tag;
  ScopedEnv env("GRAFT_CACHE_DIR", dir);
  CHECK(cg::cpu_cache_dir() == dir + "/cpu");

  cg::CompileStats s0 = cg::compile_stats();
  auto t0 = std::chrono::steady_clock::now();
  cg::KernelFn f1 = cg::compile_kernel(src, c.sym);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("cpu codegen: one chain kernel (" << src.size() << " bytes) compiled in " << secs << " s");
  cg::CompileStats s1 = cg::compile_stats();
  CHECK(s1.compiles == s0.compiles + 1);
  CHECK(s1.disk_hits == s0.disk_hits);

  // The same source again: the loaded module.
  cg::KernelFn f2 = cg::compile_kernel(src, c.sym);
  cg::CompileStats s2 = cg::compile_stats();
  CHECK(f2 == f1);
  CHECK(s2.compiles == s1.compiles);
  CHECK(s2.memory_hits == s1.memory_hits + 1);

  // A new process: nothing in memory, the module on disk.
  cg::testing::forget_loaded_modules();
  cg::KernelFn f3 = cg::compile_kernel(src, c.sym);
  cg::CompileStats s3 = cg::compile_stats();
  CHECK(s3.compiles == s2.compiles);
  CHECK(s3.disk_hits == s2.disk_hits + 1);
  check_case(c, f3);

  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cpu")) files += e.path().extension() == ".so";
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cpu codegen: concurrent requests compile once", "[codegen]") {
  const std::string tag = std::to_string(getpid()) + "_" +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string dir = std::string(GRAFT_TEST_TMPDIR) + "/codegen_cache_" + tag;
  ScopedEnv env("GRAFT_CACHE_DIR", dir);
  ir::GraphBuilder b;
  ValueId x = b.input({f32, {100}});
  ir::GraphPtr g = b.finish({b.add1(Op::sin, {x})});
  const std::string src = "// concurrency " + tag + "\n" + cg::emit_kernel(*g, "k_conc");
  cg::CompileStats s0 = cg::compile_stats();
  std::vector<cg::KernelFn> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { got[t] = cg::compile_kernel(src, "k_conc"); });
  for (auto& t : threads) t.join();
  cg::CompileStats s1 = cg::compile_stats();
  CHECK(s1.compiles == s0.compiles + 1);
  CHECK(s1.memory_hits == s0.memory_hits + 3);
  for (cg::KernelFn f : got) CHECK(f == got[0]);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cpu codegen: an unusable cache directory still compiles", "[codegen]") {
  ScopedEnv env("GRAFT_CACHE_DIR", "/dev/null/graft");
  ir::GraphBuilder b;
  ValueId x = b.input({f64, {10}});
  Case c;
  c.sym = "k_nocache";
  c.n = 10;
  c.body = b.finish({b.add1(Op::cos, {x})});
  c.inputs = {input_array(f64, {10}, 41)};
  const std::string src = "// no cache " + std::to_string(getpid()) + "\n" + cg::emit_kernel(*c.body, c.sym);
  check_case(c, cg::compile_kernel(src, c.sym));
}

TEST_CASE("cpu codegen: compile errors carry the compiler's message", "[codegen]") {
  const std::string dir = std::string(GRAFT_TEST_TMPDIR) + "/codegen_cache_errors";
  ScopedEnv env("GRAFT_CACHE_DIR", dir);
  const std::string bad = "extern \"C\" void k_bad() { this_is_not_declared(); }\n// " + std::to_string(getpid());
  try {
    cg::compile_kernel(bad, "k_bad");
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("this_is_not_declared") != std::string::npos);
    CHECK(msg.find("error") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("cpu codegen: bodies it cannot emit are refused", "[codegen]") {
  {  // not elementwise
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {4, 4}});
    ir::GraphPtr g = b.finish({b.add1(Op::transpose, {x}, ir::Attrs{{"permutation", ir::Ints{1, 0}}})});
    CHECK_THROWS_AS(cg::emit_kernel(*g, "k"), UnsupportedError);
    CHECK(cg::unsupported_reason(*g).has_value());
  }
  {  // an op on a smaller input before its broadcast
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {4, 4}}), r = b.input({f32, {4}});
    ValueId e = b.add1(Op::broadcast_in_dim, {b.add1(Op::exp, {r})}, bcast({4, 4}, {1}));
    ir::GraphPtr g = b.finish({b.add1(Op::add, {x, e})});
    CHECK_THROWS_AS(cg::emit_kernel(*g, "k"), UnsupportedError);
  }
  {  // a reduction before the end
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {4, 4}});
    ValueId s = b.add1(Op::reduce_sum, {x}, axes({1}));
    ir::GraphPtr g = b.finish({b.add1(Op::exp, {s})});
    CHECK_THROWS_AS(cg::emit_kernel(*g, "k"), UnsupportedError);
  }
  {  // a float sum over axes that are not adjacent (the interpreter sums it in sum_order.h's order)
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {3, 4, 5}});
    ir::GraphPtr g = b.finish({b.add1(Op::reduce_sum, {b.add1(Op::exp, {x})}, axes({0, 2}))});
    CHECK_THROWS_AS(cg::emit_kernel(*g, "k"), UnsupportedError);
    REQUIRE(cg::unsupported_reason(*g).has_value());
    CHECK_THAT(*cg::unsupported_reason(*g), Catch::Matchers::Contains("not adjacent"));
  }
  {  // complex functions of the C library, a complex sum, a c128 constant: the interpreter runs them
    for (Op op : {Op::exp, Op::sin, Op::tanh, Op::sqrt}) {
      ir::GraphBuilder b;
      ValueId z = b.input({c64, {8}});
      ir::GraphPtr g = b.finish({b.add1(Op::add, {b.add1(op, {z}), z})});
      REQUIRE(cg::unsupported_reason(*g).has_value());
      CHECK_THAT(*cg::unsupported_reason(*g), Catch::Matchers::Contains("calls the C library"));
    }
    ir::GraphBuilder b;
    ValueId z = b.input({c128, {8}});
    ir::GraphPtr g = b.finish({b.add1(Op::reduce_sum, {b.add1(Op::mul, {z, z})}, axes({0}))});
    REQUIRE(cg::unsupported_reason(*g).has_value());
    CHECK_THAT(*cg::unsupported_reason(*g), Catch::Matchers::Contains("complex"));
    ir::GraphBuilder c;
    ir::Literal lit{ir::ValueType{c128, {}}, std::vector<uint8_t>(16)};
    ValueId k = c.add1(Op::constant, {}, ir::Attrs{{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
    ValueId w = c.input({c128, {8}});
    ir::GraphPtr h = c.finish({c.add1(Op::mul, {w, c.add1(Op::broadcast_in_dim, {k}, bcast({8}, {}))})});
    REQUIRE(cg::unsupported_reason(*h).has_value());
    CHECK_THAT(*cg::unsupported_reason(*h), Catch::Matchers::Contains("8 bytes"));
  }
  {  // fine
    ir::GraphBuilder b;
    ValueId x = b.input({f32, {4, 4}});
    ir::GraphPtr g = b.finish({b.add1(Op::exp, {x})});
    CHECK_FALSE(cg::unsupported_reason(*g).has_value());
    CHECK_THROWS_AS(cg::emit_kernel(*g, "not an identifier"), Error);
  }
}
