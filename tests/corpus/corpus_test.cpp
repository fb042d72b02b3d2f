// The transformation corpus runner: every case of tests/corpus/cases.json
// crossed with every check: evaluation, jvp against finite differences, the
// vjp dot-product test, second order for smooth ops, and a JSON round trip
// of the transformed graphs (which must evaluate to the same numbers).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "api/dispatch.h"
#include "codegen/cuda/module_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/json.h"
#include "ir/op.h"
#include "support/shell.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/vmap.h"

using namespace graft;
using nlohmann::json;

namespace {

struct Case {
  std::string name;
  ir::GraphPtr graph;            // one node: the op
  std::vector<Array> inputs;     // concrete values for every operand
  std::vector<size_t> wrt;       // operands differentiated
  bool smooth = true;
  bool reverse_mode = true;      // false for ops with forward mode only (while)
  std::vector<std::optional<double>> low;  // a float operand's domain start (vmap varies it from there)
  // Collective cases run under a named axis: inputs are one replica's, and
  // the case is checked as pmap equals vmap over `axis_size` replicas.
  std::string axis_name;
  int64_t axis_size = 0;
};

Array make_input(const json& spec, size_t salt) {
  DType dtype = *ir::dtype_from_name(spec.at("dtype").get<std::string>());
  Shape shape = spec.at("shape").get<Shape>();
  int64_t n = ir::checked_num_elements(shape);
  std::vector<double> v(static_cast<size_t>(n));
  if (spec.contains("values")) {
    v = spec.at("values").get<std::vector<double>>();
    REQUIRE(static_cast<int64_t>(v.size()) == n);
  } else {
    double lo = spec.at("domain")[0].get<double>(), hi = spec.at("domain")[1].get<double>();
    for (int64_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * (0.5 + 0.5 * std::sin(1.7 * static_cast<double>(i) + 0.9 * salt + 0.3));
  }
  return astype(array(v, shape), dtype);
}

std::vector<Case> load_cases() {
  std::ifstream in(GRAFT_CORPUS_FILE);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str());
  REQUIRE(doc.at("format") == "graft.corpus");
  REQUIRE(doc.at("version") == 1);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name").get<std::string>();
    k.smooth = c.value("smooth", true);
    k.reverse_mode = c.value("modes", std::string("fwd_and_rev")) != "fwd";
    if (c.contains("axis")) {
      k.axis_name = c.at("axis").at("name").get<std::string>();
      k.axis_size = c.at("axis").at("size").get<int64_t>();
    }
    ir::GraphBuilder b;
    std::vector<ir::ValueId> ids;
    for (size_t i = 0; i < c.at("inputs").size(); ++i) {
      k.inputs.push_back(make_input(c.at("inputs")[i], i));
      const json& spec = c.at("inputs")[i];
      bool varies = spec.contains("domain") && ir::is_floating(k.inputs.back().dtype());
      k.low.push_back(varies ? std::optional<double>(spec.at("domain")[0].get<double>()) : std::nullopt);
      ids.push_back(b.input(ir::ValueType{k.inputs.back().dtype(), k.inputs.back().shape()}));
      bool is_float = ir::is_floating(k.inputs.back().dtype());
      if (!c.contains("wrt") && is_float) k.wrt.push_back(i);
    }
    if (c.contains("wrt")) k.wrt = c.at("wrt").get<std::vector<size_t>>();
    ir::Op op = *ir::op_from_name(c.at("op").get<std::string>());
    std::vector<ir::ValueId> outs = b.add(op, ids, ir::attrs_from_json(c.at("attrs").dump()));
    k.graph = b.finish(outs);
    cases.push_back(std::move(k));
  }
  return cases;
}

// The case's op as a function of its differentiated operands.
std::vector<Array> apply(const Case& k, const std::vector<Array>& diff) {
  std::vector<Array> args = k.inputs;
  for (size_t j = 0; j < k.wrt.size(); ++j) args[k.wrt[j]] = diff[j];
  return detail::call_graph(*k.graph, args);
}

std::vector<Array> diff_inputs(const Case& k) {
  std::vector<Array> d;
  for (size_t i : k.wrt) d.push_back(k.inputs[i]);
  return d;
}

void same_values(const std::vector<Array>& a, const std::vector<Array>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(astype(a[i], f64).to_vector<double>() == astype(b[i], f64).to_vector<double>());
}

// Example e of operand i for vmap: float operands with a domain shrink
// toward its low end (staying inside it); the others repeat.
Array example_of(const Case& k, size_t i, int64_t e) {
  if (!k.low[i]) return k.inputs[i];
  return (k.inputs[i] - *k.low[i]) * (1.0 - 0.07 * static_cast<double>(e)) + *k.low[i];
}

void close_values(const Array& got, const Array& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  const double tol = want.dtype() == f32 ? 1e-5 : 1e-12;
  std::vector<double> g = astype(got, f64).to_vector<double>(), w = astype(want, f64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
  }
}

void close_all(const std::vector<Array>& got, const std::vector<Array>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) close_values(got[i], want[i]);
}

// Every placement of the batch axis: none or 0..rank for each operand, not all none.
std::vector<std::vector<int64_t>> placements(const Case& k) {
  std::vector<std::vector<int64_t>> out{{}};
  for (const Array& x : k.inputs) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& p : out)
      for (int64_t d = -1; d <= x.ndim(); ++d) {
        next.push_back(p);
        next.back().push_back(d);
      }
    out = std::move(next);
  }
  std::erase_if(out, [](const std::vector<int64_t>& p) {
    return std::all_of(p.begin(), p.end(), [](int64_t d) { return d < 0; });
  });
  return out;
}

}  // namespace

TEST_CASE("corpus: vmap equals a loop over examples", "[corpus][vmap]") {
  size_t checks = 0;
  for (const Case& k : load_cases()) {
    INFO("case " << k.name);
    if (!k.axis_name.empty()) continue;  // a collective needs its own axis: "pmap equals vmap" below
    for (const std::vector<int64_t>& dims : placements(k)) {
      INFO("batch axes " << Catch::Detail::stringify(dims));
      for (int64_t batch : {3, 1}) {
        INFO("batch size " << batch);
        std::vector<Array> batched;
        for (size_t i = 0; i < k.inputs.size(); ++i) {
          if (dims[i] < 0) {
            batched.push_back(k.inputs[i]);
            continue;
          }
          std::vector<Array> xs;
          for (int64_t e = 0; e < batch; ++e) xs.push_back(example_of(k, i, e));
          batched.push_back(stack(xs, static_cast<int>(dims[i])));
        }
        ir::GraphPtr vg = transforms::vmap_graph(*k.graph, dims, std::vector<int64_t>(k.graph->outputs().size(), 0),
                                                 batch, "");
        std::vector<Array> got = detail::call_graph(*vg, batched);
        std::vector<std::vector<Array>> per_output(got.size());
        for (int64_t e = 0; e < batch; ++e) {
          std::vector<Array> args;
          for (size_t i = 0; i < k.inputs.size(); ++i) args.push_back(dims[i] < 0 ? k.inputs[i] : example_of(k, i, e));
          std::vector<Array> outs = detail::call_graph(*k.graph, args);
          for (size_t o = 0; o < outs.size(); ++o) per_output[o].push_back(outs[o]);
        }
        for (size_t o = 0; o < got.size(); ++o) close_values(got[o], stack(per_output[o]));
        ++checks;
      }
    }
  }
  std::printf("corpus: vmap checked against loops in %zu placements\n", checks);
  CHECK(checks > 1000);
}

TEST_CASE("corpus: every case, every check", "[corpus]") {
  std::vector<Case> cases = load_cases();
  REQUIRE(cases.size() >= 60);
  std::set<std::string> ops;
  size_t jitted = 0;
  size_t collective = 0;
  for (const Case& k : cases) {
    INFO("case " << k.name);
    ops.insert(std::string(ir::op_name(k.graph->nodes()[0].op)));
    if (!k.axis_name.empty()) {  // needs its named axis: "corpus: pmap equals vmap"
      ++collective;
      continue;
    }
    // eval: the interpreter runs the graph and yields the rule's types.
    std::vector<Array> out = evaluate(Graph(k.graph), k.inputs);
    for (size_t i = 0; i < out.size(); ++i) {
      CHECK(out[i].shape() == k.graph->type(k.graph->outputs()[i]).shape);
      for (double v : astype(out[i], f64).to_vector<double>()) CHECK(std::isfinite(v));
    }
    // jvp vs finite differences, and the vjp dot-product test; second order if smooth.
    auto f = [&k](const std::vector<Array>& d) { return apply(k, d); };
    std::vector<Array> d = diff_inputs(k);
    CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(d), k.smooth ? 2 : 1,
                                       k.reverse_mode ? testing::Modes::fwd_and_rev : testing::Modes::fwd));
    // The transformed graphs survive JSON and still compute the same numbers.
    Graph jg = make_graph([&](const std::vector<Array>& p, const std::vector<Array>& t) {
      return jvp(f, std::make_tuple(p), std::make_tuple(t)).second;
    })(d, d);
    Graph jback = Graph::from_json(jg.to_json());
    CHECK(jback.to_json() == jg.to_json());
    std::vector<Array> jin = d;
    jin.insert(jin.end(), d.begin(), d.end());
    same_values(evaluate(jback, jin), evaluate(jg, jin));
    // jit equals eager on both backends, on the op and on its vmap (batch of 2 along axis 0).
    std::vector<Array> stacked;
    for (const Array& x : d) stacked.push_back(stack({x, x * 0.5}));
    auto batched = vmap(f);
    const std::vector<Array> eager_batched = batched(stacked);
    for (Backend backend : {Backend::interpreter, Backend::cpu}) {
      INFO("backend " << (backend == Backend::cpu ? "cpu" : "interpreter"));
      const JitOptions options{.backend = backend, .wait_for_compile = true};
      same_values(jit(f, options)(d), f(d));
      close_all(jit(batched, options)(stacked), eager_batched);
    }
    if (!k.reverse_mode) {
      ++jitted;
      continue;
    }
    auto total = [&](const std::vector<Array>& p) {
      Array s = scalar(0.0, f64);
      for (const Array& o : f(p)) s = s + sum(astype(o, f64));
      return s;
    };
    Graph gg = make_graph([&](const std::vector<Array>& p) { return grad(total)(p); })(d);
    Graph gback = Graph::from_json(gg.to_json());
    CHECK(gback.to_json() == gg.to_json());
    same_values(evaluate(gback, d), evaluate(gg, d));
    // jit equals eager on the gradient, on both backends.
    const std::vector<Array> eager_grad = grad(total)(d);
    same_values(jit(grad(total), JitOptions{.backend = Backend::interpreter})(d), eager_grad);
    close_all(jit(grad(total), JitOptions{.backend = Backend::cpu, .wait_for_compile = true})(d), eager_grad);
    ++jitted;
  }
  // Every differentiable primitive appears in the corpus, except those that
  // only exist around a user's function or inside a transform.
  const std::map<std::string, std::string> exempt = {
      {"custom_jvp_call", "wraps a user's function and rule: tests/transforms/custom_jvp_test.cpp"},
      {"custom_vjp_call", "wraps a user's fwd and bwd: tests/transforms/custom_vjp_test.cpp"},
      {"custom_lin", "exists only between a JVP and its transpose"},
      {"remat", "wraps a user's function: tests/transforms/checkpoint_test.cpp"},
      {"linear_call", "wraps a user's linear function and its transpose: tests/linalg/implicit_test.cpp"},
      {"geqrf", "has no derivative (JAX defines none): tests/linalg/decompositions_test.cpp has JAX's values"},
      {"householder_product",
       "has no derivative (JAX defines none): tests/linalg/decompositions_test.cpp has JAX's values"},
      {"pmap", "runs a user's function on several devices: tests/api/pmap_primitive_test.cpp"},
      {"fusion", "exists only inside jit executables"},
      {"pure_callback", "calls a C++ function and refuses a derivative: tests/api/callback_test.cpp"},
      {"io_callback", "calls a C++ function and refuses a derivative: tests/api/callback_test.cpp"},
      {"complex", "takes complex values, which the corpus format has not: tests/dtypes has JAX's values and grads"},
      {"real", "takes complex values, which the corpus format has not: tests/dtypes has JAX's values and grads"},
      {"imag", "takes complex values, which the corpus format has not: tests/dtypes has JAX's values and grads"},
      {"conj", "takes complex values, which the corpus format has not: tests/dtypes has JAX's values and grads"},
      {"fft", "takes or makes complex values, which the corpus format has not: tests/dtypes has JAX's values"},
      {"igamma_grad_a", "has no derivative of its own (JAX defines none): tests/special has its values"},
      {"random_gamma_grad", "has no derivative of its own (JAX defines none): tests/special has its values"}};
  std::vector<std::string> missing;
  for (int i = 0; i < ir::kNumOps; ++i) {
    auto op = static_cast<ir::Op>(i);
    std::string name(ir::op_name(op));
    if (transforms::is_non_differentiable(op) || exempt.count(name) || ops.count(name)) continue;
    if (transforms::jvp_rule(op) != nullptr || ir::op_info(op).linear) missing.push_back(name);
  }
  INFO("differentiable ops without a corpus case: " << Catch::Detail::stringify(missing));
  CHECK(missing.empty());
  std::printf("corpus: %zu cases over %zu ops (%zu checked jit against eager on both backends)\n", cases.size(), ops.size(), jitted);
  CHECK(jitted + collective == cases.size());
}

// Collective cases: the case's op on 4 replicas, as pmap (one thread per
// device, real collectives) and as vmap with the same axis name (batching
// rules), on the op itself, its JVP and its gradient (whose transposes are
// collectives too: all_gather's is psum_scatter, ppermute's the inverse).
TEST_CASE("corpus: pmap equals vmap for every collective case", "[corpus][pmap]") {
  graft::test::check_child_passes("GRAFT_CPU_DEVICES=4", "[.corpus_pmap]");
}

TEST_CASE("corpus: pmap equals vmap (child with 4 devices)", "[.corpus_pmap]") {
  REQUIRE(devices().size() == 4);
  size_t checked = 0;
  for (const Case& k : load_cases()) {
    if (k.axis_name.empty()) continue;
    INFO("case " << k.name);
    REQUIRE(k.axis_size == 4);
    // Replica e's operands shrink toward their domain's low end, so replicas differ.
    std::vector<Array> stacked, tangents;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      std::vector<Array> examples;
      for (int64_t e = 0; e < k.axis_size; ++e) examples.push_back(example_of(k, i, e));
      stacked.push_back(stack(examples));
      tangents.push_back(cos(stacked.back() * 1.3) + 0.2);
    }
    // A mapped placeholder gives the axis its size when the op has no operands (axis_index).
    Array placeholder = zeros({k.axis_size});
    auto f = [&k](const Array&, const std::vector<Array>& p) { return apply(k, p); };
    close_all(pmap(f, k.axis_name)(placeholder, stacked), vmap(f, 0, 0, k.axis_name)(placeholder, stacked));
    if (k.wrt.empty()) {
      ++checked;
      continue;
    }
    auto tangent_out = [&k](const Array&, const std::vector<Array>& p, const std::vector<Array>& t) {
      return jvp([&k](const std::vector<Array>& q) { return apply(k, q); }, std::make_tuple(p), std::make_tuple(t))
          .second;
    };
    close_all(pmap(tangent_out, k.axis_name)(placeholder, stacked, tangents),
              vmap(tangent_out, 0, 0, k.axis_name)(placeholder, stacked, tangents));
    auto gradient = [&k](const Array&, const std::vector<Array>& p) {
      return grad([&k](const std::vector<Array>& q) {
        Array s = scalar(0.0, f64);
        for (const Array& o : apply(k, q)) s = s + sum(sin(astype(o, f64)));
        return s;
      })(p);
    };
    close_all(pmap(gradient, k.axis_name)(placeholder, stacked), vmap(gradient, 0, 0, k.axis_name)(placeholder, stacked));
    ++checked;
  }
  std::printf("corpus: pmap equals vmap on %zu collective cases\n", checked);
  CHECK(checked >= 13);
}

// The cuda backend against the interpreter on every case (ctest -L cuda runs
// it on the emulated driver): the op, its vmap and its gradient. Integer and
// bool results are equal bit for bit, and so is everything the host runs;
// float results of generated kernels agree to the tolerance of close_values
// (CUDA's libm against graft's own float math: docs/CUDA.md).
TEST_CASE("corpus (cuda): jit(Backend::cuda) equals the interpreter on every case", "[cuda_devices][corpus]") {
  if (devices("cuda").empty()) {
    WARN("no CUDA device (GRAFT_CUDA_DRIVER=emulated gives one)");
    return;
  }
  const JitOptions on_cuda{.backend = Backend::cuda};
  const JitOptions on_interp{.backend = Backend::interpreter};
  // svd's and eigh's vectors are defined up to their signs, which cuSOLVER
  // (gesvd, syevd) and LAPACK on the CPU (gesdd, syevd) choose each their
  // own way: their magnitudes are compared, and their gradients (whose
  // values follow the signs) are left to the CPU backends' checks.
  bool up_to_sign = false;
  auto check = [&up_to_sign](const std::vector<Array>& got, const std::vector<Array>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].device() == Device("cuda", 0));
      if (up_to_sign)
        close_values(abs(got[i]), abs(want[i]));
      else if (ir::is_floating(want[i].dtype()))
        close_values(got[i], want[i]);
      else
        CHECK(astype(got[i], f64).to_vector<double>() == astype(want[i], f64).to_vector<double>());
    }
  };
  // Every distinct module the executables generate (each starts with the
  // guarded prelude), for the NVRTC check below.
  std::set<std::string> modules;
  auto collect = [&modules](const std::string& text) {
    const std::string marker = "generated CUDA:\n", prelude = "#ifndef GRAFT_CUDA_PRELUDE\n";
    const size_t at = text.find(marker);
    if (at == std::string::npos) return;
    const std::string source = text.substr(at + marker.size());
    for (size_t b = source.find(prelude); b != std::string::npos;) {
      const size_t e = source.find(prelude, b + prelude.size());
      modules.insert(source.substr(b, e == std::string::npos ? std::string::npos : e - b));
      b = e;
    }
  };
  size_t checked = 0;
  for (const Case& k : load_cases()) {
    if (!k.axis_name.empty()) continue;  // collectives need their named axis (pmap)
    INFO("case " << k.name);
    const ir::Op op = k.graph->nodes().back().op;
    up_to_sign = op == ir::Op::svd || op == ir::Op::eigh;
    auto f = [&k](const std::vector<Array>& d) { return apply(k, d); };
    const std::vector<Array> d = diff_inputs(k);
    auto jf = jit(f, on_cuda);
    collect(jf.lower(d).compile().as_text());
    check(jf(d), jit(f, on_interp)(d));
    std::vector<Array> stacked;
    for (const Array& x : d) stacked.push_back(stack({x, x * 0.5}));
    auto jv = jit(vmap(f), on_cuda);
    collect(jv.lower(stacked).compile().as_text());
    check(jv(stacked), jit(vmap(f), on_interp)(stacked));
    if (k.reverse_mode && !up_to_sign) {
      auto total = [&](const std::vector<Array>& p) {
        Array s = scalar(0.0, f64);
        for (const Array& o : f(p)) s = s + sum(astype(o, f64));
        return s;
      };
      auto jg = jit(grad(total), on_cuda);
      collect(jg.lower(d).compile().as_text());
      check(jg(d), jit(grad(total), on_interp)(d));
    }
    ++checked;
  }
  CHECK(checked >= 60);
  // Every kernel the corpus makes compiles with NVRTC for sm_75, sm_80 and
  // sm_90: all of them as one module per architecture (the prelude and the
  // helpers are guarded, the symbols are named after their sources).
  std::string why;
  if (!codegen::cuda::nvrtc_available(&why)) {
    WARN("NVRTC is not installed; the corpus kernels were not compiled for a GPU: " << why);
    return;
  }
  std::string all;
  for (const std::string& m : modules) all += m;
  INFO(modules.size() << " distinct kernels");
  CHECK(modules.size() >= 100);
  for (int arch : {75, 80, 90}) {
    INFO("sm_" << arch);
    std::string image;  // through the disk cache, which the sanitizer pass shares
    CHECK_NOTHROW(image = codegen::cuda::cached_module_image(all, "corpus_kernels", arch, /*as_ptx=*/false));
    CHECK(image.size() > 1000);
  }
}
