// The corpus with JAX's answers (corpus/, written by scripts/make_corpus.py):
// every case's graph is read (graft's shape rules must agree with the types
// JAX inferred), run op by op, through jit on the interpreter and the cpu
// backend (also fused with a negation, so the op's generated C++ runs),
// and its jvp, vjp, vmap over a batch (all inputs at axis 0, and with
// mixed in_axes), vmap of grad and grad of vmap, jvp of vjp and Hessian are
// compared with what JAX computed in float64, by the corpus's comparison
// rule (corpus/README.md): per element |got - want| <= atol + rtol |want|
// with the case's own bounds from index.json, NaN equal to NaN, infinities
// equal with their sign; complex numbers part by part; integers and bools
// exactly.
#include "corpus/corpus_runner.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "support/arrays.h"

namespace graft::test {
namespace {

using nlohmann::json;

const std::string kDir = GRAFT_JAX_CORPUS_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Tolerance {
  double rtol = 0, atol = 0;
};

template <typename T>
bool mismatch_at(size_t i, T got, T want, std::string* why) {
  std::ostringstream s;
  s.precision(17);
  s << "element " << i << ": graft " << got << ", JAX " << want;
  *why = s.str();
  return false;
}

// Integers and bools compare exactly, in 64 bits of their signedness (u64 and
// i64 values beyond 2^53 are not exact as doubles).
bool integers_match(const Array& got, const Array& want, std::string* why) {
  auto same = [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> a = got.to_vector<T>(), b = want.to_vector<T>();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return mismatch_at(i, a[i], b[i], why);
    return true;
  };
  return ir::is_unsigned_integer(got.dtype()) ? same(uint64_t{0}) : same(int64_t{0});
}

// Whether got (graft) matches want (JAX, f64 for floats, c128 for complex
// numbers, compared part by part); the first mismatch in *why.
bool matches(const Array& got, const Array& want, Tolerance tol, std::string* why) {
  if (got.shape() != want.shape()) {
    *why = "shape " + std::to_string(got.shape().size()) + "-d differs from JAX's";
    return false;
  }
  if (ir::is_complex(got.dtype()) != ir::is_complex(want.dtype())) {
    *why = std::string("dtype ") + dtype_name(got.dtype()) + " differs from JAX's " + dtype_name(want.dtype());
    return false;
  }
  if (ir::is_complex(got.dtype())) {
    if (!matches(real(got), real(want), tol, why)) return *why = "real part: " + *why, false;
    if (!matches(imag(got), imag(want), tol, why)) return *why = "imaginary part: " + *why, false;
    return true;
  }
  const bool floating = ir::is_floating(got.dtype());
  if (!floating && got.dtype() != want.dtype()) {
    *why = std::string("dtype ") + dtype_name(got.dtype()) + " differs from JAX's " + dtype_name(want.dtype());
    return false;
  }
  if (!floating) return integers_match(got, want, why);
  const std::vector<double> a = got.to_vector<double>(), b = want.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    const bool ok = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ||
                    std::abs(a[i] - b[i]) <= tol.atol + tol.rtol * std::abs(b[i]);
    if (!ok) return mismatch_at(i, a[i], b[i], why);
  }
  return true;
}

struct JaxCase {
  std::string name;
  Graph graph;
  std::vector<Array> inputs;
  json meta;

  // (2-byte void records are ml_dtypes' bfloat16, how the corpus stores bf16 arrays.)
  Array load(const std::string& file) const { return load_npy(kDir + "/cases/" + name + "/" + file, DType::bf16); }
  std::vector<Array> load_all(const char* key) const {
    std::vector<Array> out;
    for (const json& f : meta.at("files").at(key)) out.push_back(load(f.get<std::string>()));
    return out;
  }
  bool has(const char* key) const { return meta.at("files").contains(key); }
  std::vector<size_t> positions(const char* key) const { return meta.at(key).get<std::vector<size_t>>(); }
  // The case's bounds (index.json's "tolerance": "value" for results, "derivative" for the rest).
  Tolerance tol(bool derivative) const {
    const json& t = meta.at("tolerance").at(derivative ? "derivative" : "value");
    return {t.at("rtol").get<double>(), t.at("atol").get<double>()};
  }
};

// g with every float output negated (exact in IEEE, and not simplified away
// as a double negation would be): the op fuses with the negation, so jit's
// cpu backend runs generated C++ for it (a lone op runs the interpreter's
// kernel).
Graph with_negation(const Graph& g) {
  ir::Graph h = g.ir();
  std::vector<ir::ValueId> outs;
  for (ir::ValueId v : h.outputs()) {
    const ir::ValueType t = h.type(v);
    if (ir::is_inexact(t.dtype)) {
      ir::Node n;
      n.id = h.next_node_id();
      n.op = ir::Op::neg;
      n.inputs = {v};
      v = h.new_value(t);
      n.outputs = {v};
      h.add_node(std::move(n));
    }
    outs.push_back(v);
  }
  h.set_outputs(outs);
  return Graph(std::make_shared<const ir::Graph>(std::move(h)));
}

}  // namespace

json corpus_index() { return json::parse(read_text(kDir + "/index.json")); }

std::string corpus_file(const std::string& path) { return read_text(kDir + "/cases/" + path); }

void check_corpus_case(const json& meta, bool all_paths, std::vector<std::string>& failures, CorpusCounts& counts) {
  JaxCase c;
  c.name = meta.at("name").get<std::string>();
  c.meta = meta;
  try {
    c.graph = Graph::from_json(read_text(kDir + "/cases/" + c.name + "/graph.json"));
  } catch (const Error& e) {
    failures.push_back(std::string("graft cannot read the graph: ") + e.what());
    return;
  }
  for (size_t i = 0; i < c.graph.ir().inputs().size(); ++i)
    c.inputs.push_back(c.load("in_" + std::to_string(i) + ".npy"));
  const std::vector<Array> want = c.load_all("eval");
  auto check = [&](const char* what, const std::vector<Array>& got, const std::vector<Array>& expected,
                   bool derivative) {
    bool ok = got.size() == expected.size();
    std::string why = ok ? "" : "output count differs";
    for (size_t k = 0; ok && k < got.size(); ++k) ok = matches(got[k], expected[k], c.tol(derivative), &why);
    if (!ok) failures.push_back(std::string(what) + " differs from JAX: " + why);
  };
  try {
    check("eval (interpreter, op by op)", evaluate(c.graph, c.inputs), want, false);
    if (all_paths) {
      check("jit (interpreter)", test::run_jit(c.graph, c.inputs, Backend::interpreter), want, false);
      check("jit (cpu)", test::run_jit(c.graph, c.inputs, Backend::cpu), want, false);
      std::vector<Array> negated = want;
      for (Array& w : negated)
        if (ir::is_inexact(w.dtype())) w = -w;
      check("jit (cpu), fused with a negation", test::run_jit(with_negation(c.graph), c.inputs, Backend::cpu), negated, false);
    }

    const std::vector<size_t> fin = c.positions("float_inputs"), fout = c.positions("float_outputs");
    auto float_fn = [&](const std::vector<Array>& fx) {
      std::vector<Array> xs = c.inputs;
      for (size_t i = 0; i < fin.size(); ++i) xs[fin[i]] = fx[i];
      std::vector<Array> outs = detail::call_graph(c.graph.ir(), xs), picked;
      for (size_t k : fout) picked.push_back(outs[k]);
      return picked;
    };
    std::vector<Array> primals;
    for (size_t i : fin) primals.push_back(c.inputs[i]);
    auto as_dtypes = [&](std::vector<Array> xs, const std::vector<Array>& like) {
      for (size_t i = 0; i < xs.size(); ++i) xs[i] = astype(xs[i], like[i].dtype());
      return xs;
    };
    if (all_paths && c.has("jvp")) {
      const std::vector<Array> tangents = as_dtypes(c.load_all("jvp_tangents"), primals);
      check("jvp", jvp(float_fn, std::make_tuple(primals), std::make_tuple(tangents)).second, c.load_all("jvp"), true);
      ++counts.jvps;
    }
    if (all_paths && c.has("vjp")) {
      std::vector<Array> outs;
      auto [value, pullback] = vjp(float_fn, primals);
      const std::vector<Array> cts = as_dtypes(c.load_all("vjp_cotangents"), value);
      check("vjp", std::get<0>(pullback(cts)), c.load_all("vjp"), true);
      ++counts.vjps;
    }
    if (all_paths && c.has("hessian")) {
      const std::vector<Array> ws = c.load_all("hessian_weights");
      auto s = [&](const Array& x0) {
        std::vector<Array> fx = primals;
        fx[0] = x0;
        const std::vector<Array> outs = float_fn(fx);
        Array total = sum(outs[0] * astype(ws[0], outs[0].dtype()));
        for (size_t k = 1; k < outs.size(); ++k) total = total + sum(outs[k] * astype(ws[k], outs[k].dtype()));
        return total;
      };
      check("hessian", {hessian(s)(primals[0])}, {c.load("hessian.npy")}, true);
      ++counts.hessians;
    }
    if (c.has("vmap")) {
      const std::vector<Array> batched = as_dtypes(c.load_all("vmap_inputs"), c.inputs);
      check("vmap", vmap([&](const std::vector<Array>& xs) { return detail::call_graph(c.graph.ir(), xs); })(batched),
            c.load_all("vmap"), false);
      ++counts.vmaps;
    }
    if (c.has("vmap_axes")) {
      Axes per_input{};
      for (const json& a : meta.at("vmap_in_axes"))
        per_input.items.push_back(a.is_null() ? AxisSpec(none) : AxisSpec(a.get<int>()));
      const std::vector<Array> placed = as_dtypes(c.load_all("vmap_axes_inputs"), c.inputs);
      check("vmap with mixed in_axes",
            vmap([&](const std::vector<Array>& xs) { return detail::call_graph(c.graph.ir(), xs); },
                 Axes{AxisSpec(per_input)})(placed),
            c.load_all("vmap_axes"), false);
      ++counts.mixed;
    }
    if (all_paths && c.has("vmap_grad")) {
      // The objective of one example, sum_k sum(out_k * w_k), and its gradient in the first float input.
      const size_t k0 = fin[0];
      auto objective = [&](const std::vector<Array>& xs, const std::vector<Array>& w) {
        const std::vector<Array> outs = detail::call_graph(c.graph.ir(), xs);
        Array total;
        for (size_t i = 0; i < fout.size(); ++i) {
          const Array term = sum(outs[fout[i]] * astype(w[i], outs[fout[i]].dtype()));
          total = i ? total + term : term;
        }
        return total;
      };
      auto grad_x0 = [&](const std::vector<Array>& xs, const std::vector<Array>& w) {
        return grad([&](const Array& x0) {
          std::vector<Array> ys = xs;
          ys[k0] = x0;
          return objective(ys, w);
        })(xs[k0]);
      };
      const std::vector<Array> batched = as_dtypes(c.load_all("vmap_inputs"), c.inputs);
      const std::vector<Array> ws = c.load_all("vmap_grad_weights");
      check("vmap of grad", {vmap(grad_x0)(batched, ws)}, c.load_all("vmap_grad"), true);
      check("grad of vmap", {grad([&](const Array& bx0) {
              std::vector<Array> bxs = batched;
              bxs[k0] = bx0;
              return sum(vmap(objective)(bxs, ws));
            })(batched[k0])},
            c.load_all("vmap_grad"), true);
      ++counts.composed;
      if (c.has("hvp")) {
        std::vector<Array> w0;
        for (const Array& w : ws) w0.push_back(w[0]);
        const Array v = astype(c.load_all("hvp_vector")[0], c.inputs[k0].dtype());
        auto gradient = [&](const Array& x0) {
          std::vector<Array> xs = c.inputs;
          xs[k0] = x0;
          return grad_x0(xs, w0);
        };
        check("jvp of vjp (a Hessian-vector product)",
              {jvp(gradient, std::make_tuple(c.inputs[k0]), std::make_tuple(v)).second}, c.load_all("hvp"), true);
        ++counts.composed;
      }
    }
  } catch (const Error& e) {
    failures.push_back(std::string("graft threw: ") + e.what());
  }
}

}  // namespace graft::test
