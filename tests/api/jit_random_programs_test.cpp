// Property test of jit's execution: random programs whose fused kernels have
// several outputs, write over dying operands (in place, through the memory
// plan) and return reshape views of their operands. jit with the interpreter
// backend and with the cpu backend must equal running the program op by op.
// (A multi-output kernel once wrote its in-place output before copying out a
// view of the operand it overwrote: a wrong Hessian, found by a user.)
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "graft/graft.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"
#include "ir/dtype.h"
#include "ir/text.h"
#include "runtime/buffer.h"
#include "transforms/fusion.h"
#include "transforms/simplify.h"

using namespace graft;

namespace {

// Shapes of each element count, views of one another by reshape.
const std::vector<std::vector<Shape>> kShapes = {
    {{}, {1}, {1, 1}},
    {{3}, {1, 3}, {3, 1}},
    {{6}, {2, 3}, {3, 2}, {1, 6}, {6, 1}},
};

struct Instr {
  int op;       // what to compute
  int a, b;     // operands: indices into the values computed so far
  int shape;    // which shape of the result's element count
};

struct Program {
  std::vector<Instr> code;
  std::vector<int> outputs;  // values returned
};

Program random_program(std::mt19937& rng, int length) {
  Program p;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int i = 0; i < length; ++i) {
    int have = 2 + i;  // two inputs, then one value per instruction
    p.code.push_back(Instr{pick(9), pick(have), pick(have), pick(5)});
  }
  const int total = 2 + length;
  int n_out = 1 + pick(4);
  for (int k = 0; k < n_out; ++k) p.outputs.push_back(pick(total));
  return p;
}

// x as an array of `count` elements in one of that count's shapes: a
// reshape (a view) when x has that many, else a broadcast of x's mean.
Array as_count(const Array& x, int64_t count, int shape_pick) {
  const std::vector<Shape>& group = kShapes[count == 1 ? 0 : count == 3 ? 1 : 2];
  const Shape& s = group[static_cast<size_t>(shape_pick) % group.size()];
  if (x.size() == count) return reshape(x, s);
  return broadcast_to(mean(x), s);
}

// b as an array of a's shape: a view when it has as many elements.
Array as_like(const Array& b, const Array& a) {
  if (b.size() == a.size()) return reshape(b, a.shape());
  return broadcast_to(mean(b), a.shape());
}

std::vector<Array> run_program(const Program& p, const Array& x, const Array& y) {
  std::vector<Array> v = {x, y};
  for (const Instr& in : p.code) {
    const Array& a = v[static_cast<size_t>(in.a)];
    const Array& b = v[static_cast<size_t>(in.b)];
    Array r;
    switch (in.op) {
      case 0: r = graft::sin(a); break;
      case 1: r = a + as_like(b, a); break;
      case 2: r = a * as_like(b, a); break;
      case 3: r = as_count(a, a.size(), in.shape); break;  // a view
      case 4: r = a.ndim() > 0 ? sum(a, {-1}, true) : a * 2.0; break;  // a reduction keeping dims
      case 5: r = a.ndim() > 0 ? a - log(sum(exp(a), {-1}, true)) : exp(a); break;  // the reported pattern
      case 6: r = graft::reciprocal(1.0 + graft::square(a)) * as_like(b, a); break;
      case 7: r = as_count(a, b.size(), in.shape); break;  // to the other operand's count
      default: r = graft::tanh(a) - as_like(b, a) * 0.5; break;
    }
    v.push_back(r);
  }
  std::vector<Array> out;
  for (int k : p.outputs) out.push_back(v[static_cast<size_t>(k)]);
  return out;
}

void check_same(const std::vector<Array>& got, const std::vector<Array>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("output " << k);
    REQUIRE(got[k].shape() == want[k].shape());
    std::vector<double> g = got[k].to_vector<double>(), w = want[k].to_vector<double>();
    for (size_t e = 0; e < g.size(); ++e) CHECK(g[e] == Approx(w[e]).epsilon(tol).margin(tol));
  }
}

void check_programs(Backend backend, int count, unsigned seed0) {
  for (int s = 0; s < count; ++s) {
    std::mt19937 rng(seed0 + static_cast<unsigned>(s));
    Program p = random_program(rng, 4 + static_cast<int>(rng() % 8));
    const auto& xs = kShapes[rng() % 3];
    const auto& ys = kShapes[rng() % 3];
    Shape sx = xs[rng() % xs.size()], sy = ys[rng() % ys.size()];
    auto values = [&](const Shape& sh, double phase) {
      int64_t n = 1;
      for (int64_t d : sh) n *= d;
      std::vector<double> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(std::sin(0.7 * static_cast<double>(i) + phase) * 1.3);
      return array(v, sh);
    };
    Array a = values(sx, 0.1 * s), b = values(sy, 0.5 + 0.1 * s);
    auto f = [&p](const Array& u, const Array& w) { return run_program(p, u, w); };
    std::vector<Array> want = f(a, b);
    INFO("program seed " << seed0 + static_cast<unsigned>(s));
    check_same(jit(f, {.backend = backend, .wait_for_compile = true})(a, b), want, 1e-12);
    // Its Hessian-like derivatives bring many multi-output kernels and views.
    auto loss = [&](const Array& u) {
      Array total = scalar(0.0, f64);
      for (const Array& o : f(u, b)) total = total + sum(o * o);
      return total;
    };
    auto g = [&](const Array& u) { return grad(loss)(u); };
    check_same({jit(g, {.backend = backend, .wait_for_compile = true})(a)}, {g(a)}, 1e-10);
    auto h = [&](const Array& u) { return hessian(loss)(u); };
    check_same({jit(h, {.backend = backend, .wait_for_compile = true})(a)}, {h(a)}, 1e-9);
  }
}

// Runs every node of a fused graph on fresh buffers; for each fusion node,
// also with each output placed over each operand of its byte size (a dying
// operand written in place, as jit's memory plan may place it), and checks
// that every output equals the fresh run. Returns the number of placements tried.
int check_in_place_fusions(const ir::Graph& fused, const std::vector<runtime::BufferPtr>& inputs) {
  int tried = 0;
  std::vector<runtime::BufferPtr> vals(static_cast<size_t>(fused.value_id_bound()));
  for (size_t i = 0; i < inputs.size(); ++i) vals[static_cast<size_t>(fused.inputs()[i])] = inputs[i];
  auto bytes = [&](ir::ValueId v) {
    const ir::ValueType& t = fused.type(v);
    return static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype);
  };
  for (const ir::Node& n : fused.nodes()) {
    auto run = [&](int out_k, int over_i) {
      interpreter::KernelCall call{n.op, n.attrs, {}, {}};
      std::vector<runtime::BufferPtr> ins, outs;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        runtime::BufferPtr b = vals[static_cast<size_t>(n.inputs[i])];
        if (static_cast<int>(i) == over_i) {  // a private copy the output may overwrite
          runtime::BufferPtr c = runtime::make_buffer(b->size());
          if (b->size()) std::memcpy(c->data(), b->data(), b->size());
          b = c;
        }
        ins.push_back(b);
        call.inputs.push_back({&fused.type(n.inputs[i]), b->data()});
      }
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        runtime::BufferPtr b = static_cast<int>(k) == out_k ? ins[static_cast<size_t>(over_i)]
                                                           : runtime::make_buffer(bytes(n.outputs[k]));
        outs.push_back(b);
        call.outputs.push_back({&fused.type(n.outputs[k]), b->data()});
      }
      interpreter::run_kernel(call);
      return outs;
    };
    std::vector<runtime::BufferPtr> fresh = run(-1, -1);
    if (n.op == ir::Op::fusion)
      for (size_t k = 0; k < n.outputs.size(); ++k)
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          if (bytes(n.outputs[k]) != bytes(n.inputs[i]) || bytes(n.inputs[i]) == 0) continue;
          ++tried;
          std::vector<runtime::BufferPtr> placed = run(static_cast<int>(k), static_cast<int>(i));
          for (size_t m = 0; m < n.outputs.size(); ++m) {
            INFO("fusion node " << n.id << ": output " << k << " over operand " << i << ", output " << m << " differs; body:\n"
                                 << ir::to_text(*std::get<ir::Graphs>(*n.attrs.find("body"))[0]));
            const size_t count = bytes(n.outputs[m]) / sizeof(double);  // the programs compute in f64
            std::vector<double> got(count), want(count);
            if (count) {
              std::memcpy(got.data(), placed[m]->data(), count * sizeof(double));
              std::memcpy(want.data(), fresh[m]->data(), count * sizeof(double));
            }
            // Not bitwise: where a value lives (aligned scratch or an output
            // buffer) may change which of Eigen's paths computes an element.
            for (size_t e = 0; e < count; ++e) CHECK(got[e] == Approx(want[e]).epsilon(1e-13).margin(1e-300));
          }
        }
    for (size_t k = 0; k < n.outputs.size(); ++k) vals[static_cast<size_t>(n.outputs[k])] = fresh[k];
  }
  return tried;
}

}  // namespace

TEST_CASE("fusion kernel: an output written over any operand of its size equals fresh buffers", "[jit][property]") {
  // The fused graphs of random programs, their gradients and Hessians.
  int tried = 0;
  for (unsigned seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(7000 + seed);
    Program p = random_program(rng, 4 + static_cast<int>(rng() % 8));
    auto f = [&p](const Array& u, const Array& w) { return run_program(p, u, w); };
    Array b = array({0.3, -0.6, 0.9});
    auto loss = [&](const Array& u) {
      Array total = scalar(0.0, f64);
      for (const Array& o : f(u, b)) total = total + sum(o * o);
      return total;
    };
    const auto& group = kShapes[seed % 3];
    Shape shape = group[(seed / 3) % group.size()];
    std::vector<double> v;
    for (int64_t i = 0, n = Array(zeros(shape)).size(); i < n; ++i) v.push_back(0.4 * static_cast<double>(i) - 0.5);
    Array a = array(v, shape);
    INFO("seed " << seed);
    for (const Graph& g : {make_graph(f)(a, b), make_graph([&](const Array& u) { return grad(loss)(u); })(a),
                           make_graph([&](const Array& u) { return hessian(loss)(u); })(a)}) {
      ir::GraphPtr fused = transforms::fuse(*transforms::simplify(g.ir()).graph);
      std::vector<runtime::BufferPtr> inputs;
      for (ir::ValueId in : fused->inputs()) {
        const ir::ValueType& t = fused->type(in);
        const Array& src = t.shape == a.shape() ? a : b;
        std::vector<double> data = src.to_vector<double>();
        inputs.push_back(runtime::make_buffer(data.size() * sizeof(double)));
        std::memcpy(inputs.back()->data(), data.data(), data.size() * sizeof(double));
      }
      tried += check_in_place_fusions(*fused, inputs);
    }
  }
  // The reported log-softmax Hessian.
  auto g = [](const Array& l) { return sum(l - log(sum(exp(l), {-1}, true))); };
  Graph hg = make_graph([&](const Array& l) { return hessian(g)(l); })(array({0.5, -1.0, 2.0}));
  ir::GraphPtr fused = transforms::fuse(*transforms::simplify(hg.ir()).graph);
  runtime::BufferPtr in = runtime::make_buffer(3 * sizeof(double));
  const double l[3] = {0.5, -1.0, 2.0};
  std::memcpy(in->data(), l, sizeof l);
  tried += check_in_place_fusions(*fused, {in});
  CHECK(tried > 100);  // the placements exist: the check is not vacuous
}

TEST_CASE("jit random programs: the interpreter backend equals op-by-op execution", "[jit][property]") {
  check_programs(Backend::interpreter, 150, 1000);
}

TEST_CASE("jit: the reported Hessian of log-softmax on the interpreter backend", "[jit][property]") {
  auto g = [](const Array& l) { return sum(l - log(sum(exp(l), {-1}, true))); };
  auto h = [&](const Array& l) { return hessian(g)(l); };
  Array l = array({0.5, -1.0, 2.0});
  check_same({jit(h, {.backend = Backend::interpreter})(l)}, {h(l)}, 1e-12);
  std::vector<double> hv = jit(h, {.backend = Backend::interpreter})(l).to_vector<double>();
  CHECK(hv[0] == Approx(-0.4337).epsilon(1e-3));
  CHECK(hv[1] == Approx(0.02057).epsilon(1e-3));
}

TEST_CASE("jit random programs: the cpu backend equals op-by-op execution", "[jit][property][codegen]") {
  check_programs(Backend::cpu, 40, 5000);
}
