// Differential testing on random programs (tests/differential/random_graph.h):
// each graph runs op by op on the interpreter (the reference), through jit
// with the interpreter backend (simplified, fused, memory-planned) and with
// the cpu backend (generated C++), and after a JSON round trip; every output
// must equal the reference bit for bit (NaNs by class), except that the cpu
// backend folds float sums and products in its own order (docs/API.md: "a
// float sum over a row, rounding aside"), so a program with one is compared
// within 1e-4 (f32) or 1e-10 (f64). vmap over a batch of 3 must equal the
// loop (within 1e-5 in f32, 1e-12 in f64: batching may reassociate). jvp and
// grad of a weighted sum must match central differences, on the program
// where it is fit for that (f64, no jumps) and on a sibling drawn for it
// from the same seed (f64, differentiable ops). A difference is minimised
// (the one output that still differs, then nodes cut from it back, their
// results becoming inputs) and written, as graph.json and input_*.npy, to
// build/tests/tmp/differential/seed_N/; the message names the seed.
//   ./build/tests/graft_tests "[differential]"                   (the CI count)
//   GRAFT_DIFFERENTIAL_PROGRAMS=100000 ./build/tests/graft_tests "[differential]"
//   GRAFT_DIFFERENTIAL_FIRST=3884 GRAFT_DIFFERENTIAL_PROGRAMS=1 ...  (one seed again)
//   GRAFT_DIFFERENTIAL_LIST=1 ...                          (prints each program's ops)
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/dispatch.h"
#include "differential/random_graph.h"
#include "graft/graft.h"
#include "support/arrays.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "ir/passes.h"

using namespace graft;

namespace {

// Equal bits, except that any NaN equals any NaN of the same dtype.
bool same(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (ir::is_complex(a.dtype())) return same(real(a), real(b)) && same(imag(a), imag(b));
  const size_t n = static_cast<size_t>(a.size()), size = ir::dtype_size(a.dtype());
  const auto* p = static_cast<const unsigned char*>(a.unsafe_buffer_pointer());
  const auto* q = static_cast<const unsigned char*>(b.unsafe_buffer_pointer());
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(p + i * size, q + i * size, size) == 0) continue;
    if (a.dtype() == DType::f32) {
      float x, y;
      std::memcpy(&x, p + i * size, 4);
      std::memcpy(&y, q + i * size, 4);
      if (std::isnan(x) && std::isnan(y)) continue;
    } else if (a.dtype() == DType::f64) {
      double x, y;
      std::memcpy(&x, p + i * size, 8);
      std::memcpy(&y, q + i * size, 8);
      if (std::isnan(x) && std::isnan(y)) continue;
    }
    return false;
  }
  return true;
}

// A program to check: a graph and values for its inputs.
struct Program {
  Graph graph;
  std::vector<Array> inputs;
};

Graph without_dead_nodes(ir::Graph g) {
  return Graph(std::make_shared<const ir::Graph>(ir::dead_code_elimination(std::move(g))));
}

// A smaller program that still fails `fails`: first the one output that
// fails alone (with the nodes it does not need removed), then nodes cut
// from the output back: a node whose results become inputs of the program,
// holding the values it computed there, is left cut if the program still
// fails, and the nodes only it needed go with it.
template <class Fails>
Program minimise(Program p, Fails fails) {
  auto still_fails = [&](const Program& q) {
    try {
      return fails(q);
    } catch (const Error&) {
      return false;  // a different problem: not this reproduction
    }
  };
  for (ir::ValueId out : p.graph.ir().outputs()) {
    ir::Graph one = p.graph.ir();
    one.set_outputs({out});
    Program q{without_dead_nodes(std::move(one)), p.inputs};
    if (still_fails(q)) {
      p = std::move(q);
      break;
    }
  }
  for (int64_t k = p.graph.num_nodes() - 1; k >= 0; --k) {
    if (k >= p.graph.num_nodes()) continue;  // nodes went with an earlier cut
    const ir::Node& node = p.graph.ir().nodes()[static_cast<size_t>(k)];
    const std::vector<ir::ValueId> results(node.outputs.begin(), node.outputs.end());
    ir::Graph there = p.graph.ir();
    there.set_outputs(results);
    Program q{Graph(), p.inputs};
    for (Array& v : evaluate(without_dead_nodes(std::move(there)), p.inputs)) q.inputs.push_back(std::move(v));
    ir::Graph cut = p.graph.ir();
    for (ir::ValueId v : results) cut.add_input_id(v);
    std::vector<bool> keep(static_cast<size_t>(cut.num_nodes()), true);
    keep[static_cast<size_t>(k)] = false;
    cut.keep_nodes(keep);
    q.graph = without_dead_nodes(std::move(cut));
    if (still_fails(q)) p = std::move(q);
  }
  return p;
}

std::string save_reproduction(uint64_t seed, const Program& p, const std::string& suffix = "") {
  const Graph& g = p.graph;
  const std::vector<Array>& inputs = p.inputs;
  const std::filesystem::path dir =
      std::filesystem::path(GRAFT_TEST_TMPDIR) / "differential" / ("seed_" + std::to_string(seed) + suffix);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "graph.json") << g.to_json();
  for (size_t i = 0; i < inputs.size(); ++i) save_npy((dir / ("input_" + std::to_string(i) + ".npy")).string(), inputs[i]);
  return dir.string();
}

// Equal within a relative tolerance (NaN matches NaN, inf matches the same
// inf); integers and bools exactly. For transforms, which may reassociate.
bool close(const Array& a, const Array& b, double tol) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (ir::is_complex(a.dtype())) return close(real(a), real(b), tol) && close(imag(a), imag(b), tol);
  if (a.dtype() != DType::f32 && a.dtype() != DType::f64) return same(a, b);
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return false;
    } else if (std::isinf(x[i]) || std::isinf(y[i])) {
      if (x[i] != y[i]) return false;
    } else if (std::abs(x[i] - y[i]) > tol * (1 + std::abs(y[i]))) {
      return false;
    }
  }
  return true;
}

// The graph as a function of arrays, so that transforms can trace it.
std::vector<Array> call(const Graph& g, const std::vector<Array>& xs) { return detail::call_graph(g.ir(), xs); }


// Derivatives of a weighted sum of the first output in the first input
// against central differences, for programs whose first input and output are
// f64: forward mode (jvp along one direction) always, reverse mode (grad,
// every element) unless a while loop is on the way (reverse mode of while is
// an UnsupportedError, as in JAX). Programs holding stop_gradient (its
// derivative is zero by definition, not the slope), ops the table calls not
// differentiable (floor, sign, comparisons, ...: a step of finite differences
// may cross their jumps) or rem (differentiable, with jumps) are not fit.
bool differentiable(const test::RandomGraph& r) {
  for (const std::string& o : r.ops) {
    const auto op = ir::op_from_name(o);
    if (!op || !ir::is_differentiable(*op) || *op == ir::Op::stop_gradient || *op == ir::Op::rem) return false;
  }
  const auto outs = r.graph->output_types();
  return r.inputs[0].dtype() == DType::f64 && outs[0].dtype == DType::f64 && r.inputs[0].size() <= 64;
}

int derivatives_checked = 0, grads_checked = 0;

// Whether jvp or grad (see above) of p's first output in its first input
// differs from finite differences; `report` prints the numbers.
bool derivatives_differ(const Program& p, bool loops, uint64_t seed, bool report) {
  const ir::ValueType out = p.graph.ir().output_types()[0];
  if (p.inputs[0].dtype() != DType::f64 || out.dtype != DType::f64 || p.inputs[0].size() > 64) return false;
  const Graph& g = p.graph;
  int64_t n_out = 1;
  for (int64_t d : out.shape) n_out *= d;
  const Array w = astype(arange(n_out), DType::f64) * 0.37 - 1.0;
  auto loss = [&](const Array& x0) {
    std::vector<Array> xs = p.inputs;
    xs[0] = x0;
    return sum(call(g, xs)[0] * reshape(w, out.shape));
  };
  // Does `derivative` match the central difference of the loss from x0 along
  // d with step h? Its rounding (that of a large loss, divided by 2h) and its
  // truncation error, estimated from the difference with step 2h (Richardson:
  // the error of a central difference grows as h^2), are allowed for; where
  // that estimate is not small (a pole, a jump or a steep curve within the
  // steps) finite differences say nothing and the point is passed over.
  auto agrees = [&](double derivative, const Array& x0, const Array& d, double h, const char* what) {
    auto central = [&](double step, double& rounding) {
      const double lu = loss(x0 + d * step).item<double>(), ld = loss(x0 - d * step).item<double>();
      rounding = 16 * 2.2e-16 * (std::abs(lu) + std::abs(ld)) / (2 * step);
      return (lu - ld) / (2 * step);
    };
    double rounding = 0, rounding2 = 0;
    const double fd = central(h, rounding), fd2 = central(2 * h, rounding2);
    if (!std::isfinite(fd) || !std::isfinite(fd2) || !std::isfinite(derivative)) return true;  // a pole or a NaN
    const double truncation = std::abs(fd2 - fd) / 3;
    if (truncation > 1e-2 * (1 + std::abs(fd)) + rounding + rounding2) return true;  // not a usable estimate
    const bool ok = std::abs(derivative - fd) <= 1e-4 * (1 + std::abs(fd)) + rounding + rounding2 + 4 * truncation;
    if (!ok && report) std::printf("seed %llu: %s %.9g, finite differences %.9g (step 2h: %.9g)\n",
                         static_cast<unsigned long long>(seed), what, derivative, fd, fd2);
    return ok;
  };
  const Array& x0 = p.inputs[0];
  bool ok = true;
  {
    const Array d = reshape(sin(astype(arange(x0.size()), DType::f64) * 1.3 + 0.2), x0.shape());
    const double slope = jvp(loss, std::make_tuple(x0), std::make_tuple(d)).second.item<double>();
    ok = agrees(slope, x0, d, 1e-6 * (1 + (x0.size() ? max(abs(x0)).item<double>() : 0.0)), "jvp");
  }
  if (!loops) {
    const std::vector<double> gr = grad(loss)(x0).to_vector<double>();
    const std::vector<double> x = x0.to_vector<double>();
    for (size_t i = 0; ok && i < x.size(); ++i) {
      std::vector<double> e(x.size(), 0.0);
      e[i] = 1;
      const std::string what = "d/dx[" + std::to_string(i) + "] by grad";
      ok = agrees(gr[i], x0, array(e, x0.shape()), 1e-6 * (1 + std::abs(x[i])), what.c_str());
    }
  }
  return !ok;
}

// The derivative checks of a random program; false (and a reproduction) if they fail.
bool check_derivatives(uint64_t seed, const test::RandomGraph& r, const char* which, const char* dir_suffix) {
  bool loops = false;
  for (const std::string& o : r.ops) loops = loops || o == ir::op_name(ir::Op::while_loop);
  const Program program{Graph(r.graph), r.inputs};
  // A derivative JAX does not define (polygamma in n, zeta in s, betainc in
  // a and b, igamma_grad_a's own) is refused, as JAX refuses it: nothing to compare.
  auto refused = [](const UnsupportedError& e) {
    return std::string(e.what()).find("JAX defines none") != std::string::npos;
  };
  try {
    if (!derivatives_differ(program, loops, seed, true)) {
      ++derivatives_checked;
      grads_checked += !loops;
      return true;
    }
  } catch (const UnsupportedError& e) {
    if (refused(e)) return true;
    throw;
  }
  ++derivatives_checked;
  grads_checked += !loops;
  std::string ops;
  for (const std::string& o : r.ops) ops += o + " ";
  const Program small = minimise(program, [&](const Program& q) {
    try {
      return derivatives_differ(q, loops, seed, false);
    } catch (const UnsupportedError& e) {
      if (refused(e)) return false;
      throw;
    }
  });
  FAIL_CHECK("seed " << seed << ": a derivative of " << which << " differs from finite differences; ops: " << ops
                     << "\nreproduction: " << save_reproduction(seed, small, dir_suffix));
  return false;
}

// Whether vmap over a batch of 3 differs from the loop over its examples
// (example e: each input with its elements rotated by e).
bool vmap_differs(const Program& p) {
  std::vector<std::vector<Array>> examples(3);
  std::vector<Array> batched;
  for (const Array& x : p.inputs) {
    std::vector<Array> column;
    for (int e = 0; e < 3; ++e) {
      const int64_t n = x.size(), k = n > 0 ? e % n : 0;
      const Array flat = reshape(x, {n});
      Array v = n > 0 ? reshape(concatenate({slice(flat, {k}, {n}), slice(flat, {0}, {k})}), x.shape()) : x;
      examples[static_cast<size_t>(e)].push_back(v);
      column.push_back(v);
    }
    batched.push_back(stack(column));
  }
  std::vector<Array> mapped = vmap([&](const std::vector<Array>& xs) { return call(p.graph, xs); })(batched);
  bool ok = mapped.size() == p.graph.ir().outputs().size();
  for (int e = 0; ok && e < 3; ++e) {
    std::vector<Array> one = evaluate(p.graph, examples[static_cast<size_t>(e)]);
    for (size_t k = 0; ok && k < one.size(); ++k)
      ok = close(mapped[k][e], one[k], mapped[k].dtype() == DType::f32 ? 1e-5 : 1e-12);
  }
  return !ok;
}

}  // namespace

TEST_CASE("differential: random programs agree op by op, through jit and after a JSON round trip", "[differential]") {
  const char* env = std::getenv("GRAFT_DIFFERENTIAL_PROGRAMS");
  const int programs = env ? std::atoi(env) : 300;
  const char* first_env = std::getenv("GRAFT_DIFFERENTIAL_FIRST");  // seeds first .. first + programs - 1
  const int first = first_env ? std::atoi(first_env) : 0;
  int checked = 0, failed = 0;
  for (int s = first; s < first + programs; ++s) {
    const uint64_t seed = static_cast<uint64_t>(s);
    test::RandomGraph r = test::random_graph(seed, 4 + static_cast<int>(seed % 9));
    const Graph g(r.graph);
    std::string ops;
    for (const std::string& o : r.ops) ops += o + " ";
    if (std::getenv("GRAFT_DIFFERENTIAL_LIST")) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), ops.c_str());
    std::vector<Array> want;
    try {
      want = evaluate(g, r.inputs);
    } catch (const Error& e) {
      FAIL("seed " << seed << ": the reference run failed: " << e.what() << "\nops: " << ops);
    }
    // `run` computes the program another way; a difference is minimised and saved.
    const Program program{g, r.inputs};
    auto check = [&](const char* what, auto run, bool rounding_aside = false) {
      auto differs = [&](const Program& p) {
        const std::vector<Array> a = run(p), b = evaluate(p.graph, p.inputs);
        bool ok = a.size() == b.size();
        for (size_t k = 0; ok && k < a.size(); ++k)
          ok = rounding_aside ? close(a[k], b[k], a[k].dtype() == DType::f32 ? 1e-4 : 1e-10) : same(a[k], b[k]);
        return !ok;
      };
      if (differs(program)) {
        ++failed;
        FAIL_CHECK("seed " << seed << ": " << what << " differs from the op-by-op run; ops: " << ops
                           << "\nreproduction: " << save_reproduction(seed, minimise(program, differs)));
      }
    };
    const Graph back = Graph::from_json(g.to_json());
    CHECK(back.to_json() == g.to_json());
    check("after a JSON round trip",
          [&](const Program& p) { return evaluate(Graph::from_json(p.graph.to_json()), p.inputs); });
    check("jit (interpreter)", [&](const Program& p) { return test::run_jit(p.graph, p.inputs, Backend::interpreter); });
    // The cpu backend folds a float sum or product in its own order: the same bits otherwise
    // (docs/API.md, "a float sum over a row, rounding aside"), close where a program has one.
    const bool folds = ops.find("reduce_sum") != std::string::npos || ops.find("reduce_prod") != std::string::npos;
    check("jit (cpu)", [&](const Program& p) { return test::run_jit(p.graph, p.inputs, Backend::cpu); }, folds);
    if (vmap_differs(program)) {
      ++failed;
      FAIL_CHECK("seed " << seed << ": vmap differs from the loop; ops: " << ops
                         << "\nreproduction: " << save_reproduction(seed, minimise(program, vmap_differs)));
    }

    // Derivatives, on the program if it is fit for them and on one drawn for them.
    if (differentiable(r)) failed += !check_derivatives(seed, r, "the program", "");
    const test::RandomGraph d = test::random_graph(seed, 3 + static_cast<int>(seed % 7), true);
    if (std::getenv("GRAFT_DIFFERENTIAL_LIST")) {
      std::printf("seed %llu (differentiable): ", static_cast<unsigned long long>(seed));
      for (const std::string& o : d.ops) std::printf("%s ", o.c_str());
      std::printf("\n");
    }
    failed += !check_derivatives(seed, d, "its differentiable sibling", "_differentiable");
    ++checked;
    if (checked % 1000 == 0) {  // a long run shows its progress
      std::fprintf(stderr, "differential: %d of %d programs checked\n", checked, programs);
      std::fflush(stderr);
    }
    if (failed >= 5) break;  // enough to read
  }
  CHECK(checked == programs);
  std::printf("differential: %d programs checked (vmap on each; jvp against finite differences on %d, grad on %d)\n",
              checked, derivatives_checked, grads_checked);
}

TEST_CASE("differential: a difference is minimised to the output and the node that show it", "[differential]") {
  // Three outputs; a pretend backend that gets only the cosine wrong.
  const Graph g = make_graph([](const Array& x) {
    return std::vector<Array>{exp(x) * 2.0f, cos(sin(x) * 3.0f), tanh(x) + 1.0f};
  })(zeros({4}));
  const Array x = array({0.5f, -1.0f, 2.0f, 0.0f});
  auto differs = [](const Program& p) {
    for (const ir::Node& n : p.graph.ir().nodes())
      if (n.op == ir::Op::cos) return true;
    return false;
  };
  const Program small = minimise(Program{g, {x}}, differs);
  CHECK(differs(small));
  CHECK(small.graph.ir().outputs().size() == 1);
  REQUIRE(small.graph.num_nodes() == 1);  // the cosine alone; sin and the product are cut
  CHECK(small.graph.ir().nodes()[0].op == ir::Op::cos);
  // Its operand is now an input holding what the program computed there.
  REQUIRE(small.inputs.size() == 2);
  CHECK(small.inputs[1].to_vector<float>() == (sin(x) * 3.0f).to_vector<float>());
  CHECK(evaluate(small.graph, small.inputs)[0].to_vector<float>() == cos(sin(x) * 3.0f).to_vector<float>());
  // As saved: the reproduction reads back and computes the same.
  const Graph saved = Graph::from_json(small.graph.to_json());
  CHECK(evaluate(saved, small.inputs)[0].to_vector<float>() == cos(sin(x) * 3.0f).to_vector<float>());
  // Nothing fails alone: the program is kept whole.
  CHECK(minimise(Program{g, {x}}, [](const Program&) { return false; }).graph.num_nodes() == g.num_nodes());
}
