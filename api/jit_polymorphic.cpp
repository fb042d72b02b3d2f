// Shape-polymorphic jit: reading JitOptions::polymorphic_shapes, choosing
// the sizes f is traced at, fitting the symbolic program, and the per-size
// instances that run it (see api/jit_polymorphic.h).
#include "api/jit_polymorphic.h"

#include <algorithm>

#include "api/array_impl.h"
#include "codegen/cuda/node_kernels.h"
#include "graft/errors.h"
#include "graft/jit.h"

namespace graft::detail {

namespace {

// Symbols every leaf's polymorphic shape may be solved for: a dimension
// whose expression has one unknown symbol in it, of degree one.
bool solve_step(const PolymorphicSpec& spec, const std::vector<ir::ValueType>& leaves, std::vector<int64_t>& values,
                std::vector<bool>& known) {
  bool progress = false;
  for (size_t l = 0; l < leaves.size(); ++l)
    for (size_t d = 0; d < spec.leaf_dims[l].size(); ++d) {
      const ir::DimExpr& e = spec.leaf_dims[l][d];
      int unknown = -1;
      bool several = false;
      for (size_t s = 0; s < spec.symbols.size(); ++s)
        if ((e.symbols_used() >> s & 1) && !known[s]) {
          several = unknown >= 0;
          unknown = static_cast<int>(s);
        }
      if (unknown < 0 || several) continue;
      // e = a * x + c, a and c evaluated from known symbols (x at 0 and at 1).
      std::vector<int64_t> at = values;
      at[static_cast<size_t>(unknown)] = 0;
      const int64_t c = e.evaluate(at);
      at[static_cast<size_t>(unknown)] = 1;
      const int64_t a = e.evaluate(at) - c;
      const int64_t actual = leaves[l].shape[d];
      if (a == 0 || (actual - c) % a != 0) continue;  // left for the check, which names the leaf
      values[static_cast<size_t>(unknown)] = (actual - c) / a;
      known[static_cast<size_t>(unknown)] = true;
      progress = true;
    }
  return progress;
}

// Three distinct sizes per symbol for the traces: primes from 17 up (no size
// of 1, which broadcasting treats apart, and no two symbols alike), moved
// into the bounds the constraints give a lone symbol when they exclude them.
std::vector<std::vector<int64_t>> choose_points(const PolymorphicSpec& spec) {
  static const int64_t kPrimes[] = {17,  19,  23,  29,  31,  37,  41,  43,  47,  53,  59,  61,  67,  71,  73,  79,
                                    83,  89,  97,  101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163,
                                    167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251,
                                    257, 263, 269, 271, 277, 281, 283, 293, 307, 311, 313, 317, 331, 337, 347, 349,
                                    353, 359, 367, 373, 379, 383, 389, 397, 401, 409, 419, 421, 431, 433, 439, 443,
                                    449, 457, 461, 463, 467, 479, 487, 491, 499, 503, 509, 521, 523, 541, 547, 557};
  const size_t k = spec.symbols.size();
  // Bounds of each symbol from constraints on it alone ("b >= 8", "b <= 64", "b == 32").
  std::vector<int64_t> lo(k, 1), hi(k, int64_t{1} << 40);
  for (const ir::DimConstraint& c : spec.constraints) {
    const ir::DimExpr diff = c.lhs - c.rhs;  // diff cmp 0
    if (diff.terms().empty()) continue;
    const uint32_t used = diff.symbols_used();
    if (__builtin_popcount(used) != 1 || diff.terms().size() > 2) continue;
    const size_t s = static_cast<size_t>(__builtin_ctz(used));
    int64_t a = 0;
    for (const auto& t : diff.terms())
      if (t.symbols) a = t.coeff;
    if (diff.terms().back().symbols != used || a == 0) continue;
    const int64_t c0 = diff.constant_part();
    // a*x + c0 cmp 0: x cmp -c0/a, direction flipped when a < 0.
    using Cmp = ir::DimConstraint::Cmp;
    Cmp cmp = c.cmp;
    if (a < 0)
      cmp = cmp == Cmp::ge   ? Cmp::le
            : cmp == Cmp::gt ? Cmp::lt
            : cmp == Cmp::le ? Cmp::ge
            : cmp == Cmp::lt ? Cmp::gt
                             : cmp;
    const int64_t m = a < 0 ? -a : a, rhs = a < 0 ? c0 : -c0;  // m*x cmp rhs
    auto ceil_div = [](int64_t p, int64_t q) { return p >= 0 ? (p + q - 1) / q : -((-p) / q); };
    auto floor_div = [](int64_t p, int64_t q) { return p >= 0 ? p / q : -((-p + q - 1) / q); };
    if (cmp == Cmp::ge || cmp == Cmp::eq) lo[s] = std::max(lo[s], ceil_div(rhs, m));
    if (cmp == Cmp::gt) lo[s] = std::max(lo[s], floor_div(rhs, m) + 1);
    if (cmp == Cmp::le || cmp == Cmp::eq) hi[s] = std::min(hi[s], floor_div(rhs, m));
    if (cmp == Cmp::lt) hi[s] = std::min(hi[s], ceil_div(rhs, m) - 1);
  }
  std::vector<int64_t> first(k), second(k), third(k);
  size_t next_prime = 0;
  for (size_t s = 0; s < k; ++s) {
    std::vector<int64_t> picked;
    for (; next_prime < std::size(kPrimes) && picked.size() < 3; ++next_prime)
      if (kPrimes[next_prime] >= lo[s] && kPrimes[next_prime] <= hi[s]) picked.push_back(kPrimes[next_prime]);
    // Outside the primes' range: sizes from the lower bound up (above 1 where the bounds allow).
    for (int64_t v = std::max<int64_t>(lo[s], lo[s] < hi[s] - 2 ? 2 : lo[s]); picked.size() < 3 && v <= hi[s]; ++v)
      if (std::find(picked.begin(), picked.end(), v) == picked.end()) picked.push_back(v);
    if (picked.size() < 3)
      throw ShapeError("jit: polymorphic_shapes: the constraints leave " + spec.symbols[s] +
                       " fewer than three sizes (" + std::to_string(lo[s]) + " to " + std::to_string(hi[s]) +
                       "); a dimension with so few sizes is better given as a number");
    first[s] = picked[0];
    second[s] = picked[1];
    third[s] = picked[2];
  }
  std::vector<std::vector<int64_t>> points = ir::sample_points(first, second, third);
  for (const std::vector<int64_t>& p : points)
    for (const ir::DimConstraint& c : spec.constraints)
      if (!c.holds(p))
        throw ShapeError("jit: polymorphic_shapes: cannot choose sizes to trace at that satisfy the constraint '" +
                         c.text + "' (tried " + ir::symbol_values_str(spec.symbols, p) +
                         "); constraints between several symbols must hold for sizes chosen per symbol");
  return points;
}

// A copy of g (the program at the first sample) that knows its symbolic dimensions.
ir::GraphPtr annotated(const ir::Graph& g, const ir::SymbolicGraph& program, const PolymorphicSpec& spec) {
  auto dims = std::make_shared<ir::SymbolicDims>();
  dims->symbols = program.symbols;
  for (const ir::DimConstraint& c : spec.constraints) dims->constraints.push_back(c.text);
  for (auto& [id, d] : ir::symbolic_value_dims(program)) dims->values[id] = std::move(d);
  auto copy = std::make_shared<ir::Graph>(g);
  copy->set_symbolic(std::move(dims));
  return copy;
}

}  // namespace

PolymorphicSpec parse_polymorphic_spec(const std::vector<std::string>& specs,
                                       const std::vector<ir::ValueType>& leaves) {
  PolymorphicSpec spec;
  std::vector<std::string> shapes;
  std::vector<std::string> constraints;
  for (const std::string& s : specs) (ir::is_dim_constraint(s) ? constraints : shapes).push_back(s);
  if (shapes.size() != leaves.size())
    throw ShapeError("jit: polymorphic_shapes gives " + std::to_string(shapes.size()) +
                     " shapes, but the function is called with " + std::to_string(leaves.size()) +
                     " argument leaves (give one per leaf, '(...)' with '_' for a dimension kept as it is)");
  uint32_t in_shapes = 0;
  for (size_t l = 0; l < shapes.size(); ++l) {
    std::vector<bool> from_argument;
    std::vector<ir::DimExpr> dims = ir::parse_poly_shape(shapes[l], &spec.symbols, &from_argument);
    if (dims.size() != leaves[l].shape.size())
      throw ShapeError("jit: polymorphic_shapes: argument leaf " + std::to_string(l) + " has shape " +
                       ir::shape_str(leaves[l].shape) + " (rank " + std::to_string(leaves[l].rank()) +
                       ") but its polymorphic shape '" + shapes[l] + "' has " + std::to_string(dims.size()) +
                       " dimensions");
    for (size_t d = 0; d < dims.size(); ++d) {
      if (from_argument[d]) dims[d] = ir::DimExpr::constant(leaves[l].shape[d]);
      in_shapes |= dims[d].symbols_used();
    }
    spec.leaf_dims.push_back(std::move(dims));
    spec.leaf_text.push_back(shapes[l]);
  }
  for (const std::string& c : constraints) spec.constraints.push_back(ir::parse_dim_constraint(c, &spec.symbols));
  for (size_t s = 0; s < spec.symbols.size(); ++s)
    if (!(in_shapes >> s & 1))
      throw ShapeError("jit: polymorphic_shapes: the symbol '" + spec.symbols[s] +
                       "' appears in a constraint but in no argument's shape");
  if (spec.symbols.empty())
    throw ShapeError("jit: polymorphic_shapes names no symbol: every dimension is a number; leave it empty instead");
  if (spec.symbols.size() > 4)
    throw ShapeError("jit: polymorphic_shapes names " + std::to_string(spec.symbols.size()) +
                     " symbols; at most 4 are supported (the function is traced 2^k + 1 times)");
  return spec;
}

std::vector<int64_t> bind_symbols(const PolymorphicSpec& spec, const std::vector<ir::ValueType>& leaves) {
  if (leaves.size() != spec.leaf_dims.size())
    throw ShapeError("jit: polymorphic executable called with " + std::to_string(leaves.size()) +
                     " argument leaves, traced with " + std::to_string(spec.leaf_dims.size()));
  for (size_t l = 0; l < leaves.size(); ++l)
    if (leaves[l].shape.size() != spec.leaf_dims[l].size())
      throw ShapeError("jit: polymorphic_shapes: argument leaf " + std::to_string(l) + " has shape " +
                       ir::shape_str(leaves[l].shape) + " but its polymorphic shape is '" + spec.leaf_text[l] + "'");
  std::vector<int64_t> values(spec.symbols.size(), 0);
  std::vector<bool> known(spec.symbols.size(), false);
  while (solve_step(spec, leaves, values, known)) {
  }
  for (size_t s = 0; s < spec.symbols.size(); ++s)
    if (!known[s])
      throw ShapeError("jit: polymorphic_shapes: cannot find the size of '" + spec.symbols[s] +
                       "' from the arguments' shapes (give some argument a dimension that is '" + spec.symbols[s] +
                       "' alone, or a multiple of it plus a number)");
  for (size_t l = 0; l < leaves.size(); ++l)
    for (size_t d = 0; d < spec.leaf_dims[l].size(); ++d) {
      const int64_t want = spec.leaf_dims[l][d].evaluate(values);
      if (want != leaves[l].shape[d])
        throw ShapeError("jit: polymorphic_shapes: argument leaf " + std::to_string(l) + " has shape " +
                         ir::shape_str(leaves[l].shape) + " but its polymorphic shape '" + spec.leaf_text[l] +
                         "' needs dimension " + std::to_string(d) + " to be " + spec.leaf_dims[l][d].str(spec.symbols) +
                         " = " + std::to_string(want) + " with " + ir::symbol_values_str(spec.symbols, values));
    }
  for (size_t s = 0; s < spec.symbols.size(); ++s)
    if (values[s] < 1)
      throw ShapeError("jit: polymorphic_shapes: " + ir::symbol_values_str(spec.symbols, values) +
                       " from the arguments, but " + spec.symbols[s] + " must be at least 1");
  for (const ir::DimConstraint& c : spec.constraints)
    if (!c.holds(values))
      throw ShapeError("jit: polymorphic_shapes: the arguments give " + ir::symbol_values_str(spec.symbols, values) +
                       ", which breaks the constraint '" + c.text + "'");
  return values;
}

std::shared_ptr<const PolymorphicSamples> polymorphic_samples(const std::vector<std::string>& specs,
                                                              const std::vector<Array>& leaves) {
  std::vector<ir::ValueType> types;
  for (const Array& a : leaves) types.push_back(live_impl(a, "jit").type);
  auto out = std::make_shared<PolymorphicSamples>();
  out->spec = parse_polymorphic_spec(specs, types);
  bind_symbols(out->spec, types);  // the first call's arguments must fit too
  out->points = choose_points(out->spec);
  return out;
}

Graph polymorphic_traced_graph(const Executable& exe) {
  if (!exe.poly) throw Error("jit: not a polymorphic executable");
  return exe.poly->traced;
}

namespace {
std::vector<int64_t> symbol_values_of(const PolymorphicExecutable& poly, const std::vector<Array>& leaves) {
  std::vector<ir::ValueType> types;
  types.reserve(leaves.size());
  for (const Array& a : leaves) types.push_back(live_impl(a, "jit").type);
  return bind_symbols(poly.spec, types);
}
}  // namespace

bool polymorphic_needs_check(const Executable& exe, const std::vector<Array>& leaves) {
  return exe.poly && exe.poly->needs_check(symbol_values_of(*exe.poly, leaves));
}

void polymorphic_check(const Executable& exe, const std::vector<Array>& leaves, const Graph& traced) {
  if (exe.poly) exe.poly->check(symbol_values_of(*exe.poly, leaves), traced);
}

size_t polymorphic_sample_count(const PolymorphicSamples& samples) { return samples.points.size(); }

std::vector<Shape> polymorphic_sample_shapes(const PolymorphicSamples& samples, size_t point) {
  std::vector<Shape> shapes;
  for (const std::vector<ir::DimExpr>& dims : samples.spec.leaf_dims) {
    Shape s;
    for (const ir::DimExpr& e : dims) s.push_back(e.evaluate(samples.points.at(point)));
    shapes.push_back(std::move(s));
  }
  return shapes;
}

std::shared_ptr<const Executable> compile_polymorphic(const PolymorphicSamples& samples,
                                                      const std::vector<Graph>& traced, const JitOptions& options,
                                                      std::vector<bool> donated,
                                                      const std::vector<size_t>& ref_inputs) {
  for (size_t pos : ref_inputs) donated.at(pos) = true;  // a Ref's final value may take its own buffer
  const Backend backend = resolve_backend(options.backend);
  std::vector<ir::GraphPtr> fused;
  std::vector<JitPasses> passes;
  for (const Graph& g : traced) {
    passes.push_back(run_jit_passes(g.ir(), donated));
    fused.push_back(passes.back().fused);
  }
  auto poly = std::make_shared<PolymorphicExecutable>();
  poly->spec = samples.spec;
  poly->program = ir::fit_symbolic_graph(fused, samples.points, samples.spec.symbols);
  // Kernels whose source is the same at every sample take their sizes at run time: they serve any size.
  if (backend == Backend::cpu) poly->generic = codegen::cpu::size_generic_sources(fused);
  poly->options = options;
  poly->donated = donated;
  poly->traced_nodes = traced[0].num_nodes();
  poly->first_point = samples.points[0];
  // The first sample's executable compiles the module every size's kernels come from.
  poly->first = executable_of_fused(fused[0], *passes[0].clean, poly->traced_nodes, backend, options, donated, true);
  auto exe = executable_of_fused(annotated(*fused[0], poly->program, poly->spec), *passes[0].clean, poly->traced_nodes,
                                 backend, options, donated, false);
  exe->cpu = poly->first->cpu;
  // The traced program's symbolic dimensions too, for Lowered::graph() (its text and JSON).
  std::vector<ir::GraphPtr> traced_ir;
  for (const Graph& g : traced) traced_ir.push_back(g.ir_ptr());
  try {
    poly->traced_program = ir::fit_symbolic_graph(traced_ir, samples.points, samples.spec.symbols);
    poly->traced = Graph(annotated(*traced_ir[0], *poly->traced_program, poly->spec));
  } catch (const ShapeError&) {  // the fused program fits (jit simplified it); show the trace without its symbols
    poly->traced = traced[0];
  }
  exe->poly = std::move(poly);
  attach_refs(*exe, ref_inputs);
  return exe;
}

std::shared_ptr<const Executable> PolymorphicExecutable::instance(const std::vector<int64_t>& values) const {
  const codegen::cpu::FusedGraphKernels* loaded = first->cpu ? first->cpu->ready() : nullptr;
  std::lock_guard lock(mu_);
  if (auto it = own_.find(values); it != own_.end()) return it->second;
  for (auto it = recent_.begin(); it != recent_.end(); ++it) {
    if (it->values != values) continue;
    if (!it->with_kernels && loaded) break;  // made before the module loaded: make it again, with kernels
    recent_.splice(recent_.begin(), recent_, it);
    return it->exe;
  }
  std::erase_if(recent_, [&](const Instance& i) { return i.values == values; });
  ir::GraphPtr g = ir::instantiate(program, values);
  auto exe = executable_of_fused(g, *g, traced_nodes, first->backend, options, donated, false);
  // pmap nodes: their bodies at these sizes, compiled like any jit program (the C++ kernels from the module cache).
  exe->pmap_kernels = pmap_kernels(*g, options);
  // CUDA: the instance's kernels take their sizes as parameters, so they are found in the module cache
  // whenever another instance of the same form (no size of 1 where the other had more) compiled them.
  if (first->backend == Backend::cuda)
    exe->cuda = std::make_shared<const codegen::cuda::CudaGraphKernels>(
        codegen::cuda::cuda_graph_kernels(*g, nullptr, codegen::cuda::Sizes::parameters));
  if (loaded) {
    exe->rebound = std::make_shared<const codegen::cpu::FusedGraphKernels>(
        codegen::cpu::rebind_fused_graph(*g, *loaded, &generic));
    // Kernels whose code at these sizes the module lacks (a size of 1 drops its axis; a long row takes
    // another loop than a short one): the instance's own module, compiled in the background (or now, with
    // wait_for_compile). Sources hold no sizes, so this compiles once per such form of the program: every
    // other size of that form finds the module in the cache.
    if (exe->rebound->differing > 0) exe->cpu = start_cpu_compile(g, options.wait_for_compile);
  }
  ++made_;
  recent_.push_front(Instance{values, exe, loaded != nullptr});
  if (recent_.size() > kKeep) recent_.pop_back();
  return exe;
}

bool PolymorphicExecutable::needs_check(const std::vector<int64_t>& values) const {
  std::lock_guard lock(mu_);
  return !checked_.count(values);
}

void PolymorphicExecutable::check(const std::vector<int64_t>& values, const Graph& traced) const {
  std::optional<std::string> differs;
  if (traced_program) {
    differs = ir::symbolic_mismatch(*traced_program, traced.ir(), values);
  } else {  // only the fused programs fitted: compare after jit's passes
    const JitPasses p = run_jit_passes(traced.ir(), donated);
    differs = ir::symbolic_mismatch(program, *p.fused, values);
  }
  std::shared_ptr<const Executable> own;
  if (differs) {
    JitOptions specialised = options;
    specialised.polymorphic_shapes.clear();
    own = compile_graph(traced, specialised, donated);
  }
  std::lock_guard lock(mu_);
  checked_.insert(values);
  if (!own) return;
  own_[values] = own;
  own_order_.push_back(values);
  ++differing_;
  if (own_order_.size() > kKeep) {
    own_.erase(own_order_.front());
    checked_.erase(own_order_.front());
    own_order_.pop_front();
  }
  std::fprintf(stderr,
               "graft: jit: polymorphic_shapes: at %s the function builds another program than the polymorphic "
               "one (%s): it branches on a size its samples did not meet. These sizes run an executable of their "
               "own, traced and compiled for them.\n",
               ir::symbol_values_str(program.symbols, values).c_str(), differs->c_str());
}

size_t PolymorphicExecutable::sizes_differing() const {
  std::lock_guard lock(mu_);
  return differing_;
}

size_t PolymorphicExecutable::instances_made() const {
  std::lock_guard lock(mu_);
  return made_;
}

std::string polymorphic_text(const PolymorphicExecutable& poly) {
  const ir::SymbolicGraph& p = poly.program;
  std::string s = "polymorphic in ";
  for (size_t i = 0; i < p.symbols.size(); ++i) {
    if (i) s += ", ";
    s += p.symbols[i];
  }
  s += " (each >= 1";
  for (const ir::DimConstraint& c : poly.spec.constraints) s += ", " + c.text;
  s += "): " + std::to_string(p.symbolic_count) + " sizes in the program depend on them; " +
       std::to_string(poly.instances_made()) +
       " instances made; below, the program with its symbolic dimensions (fused kernels' bodies at the first sample "
       "size, " +
       ir::symbol_values_str(p.symbols, poly.first_point) + ")\n";
  if (const size_t differing = poly.sizes_differing())
    s += std::to_string(differing) +
         " sizes run an executable of their own: the function builds another program there (warned on stderr)\n";
  std::shared_ptr<const Executable> last;
  std::vector<int64_t> at;
  {
    std::lock_guard lock(poly.mu_);
    if (!poly.recent_.empty()) {
      last = poly.recent_.front().exe;
      at = poly.recent_.front().values;
    }
  }
  if (last) {
    int64_t fusions = 0;
    for (const ir::Node& n : last->graph->nodes()) fusions += n.op == ir::Op::fusion;
    // Its own module once loaded (a form of the program the first sample's module lacks), else that module's kernels.
    const codegen::cpu::FusedGraphKernels* own = last->cpu ? last->cpu->ready() : nullptr;
    const codegen::cpu::FusedGraphKernels* used = own ? own : last->rebound.get();
    s += "the most recent instance (" + ir::symbol_values_str(p.symbols, at) +
         "): " + std::to_string(used ? used->compiled : 0) + " of " + std::to_string(fusions) +
         " fused kernels run compiled code, the others the interpreter; " +
         (own         ? "its own module (the first sample's lacks the code of this form of the program)"
          : last->cpu ? "the first sample's module, while its own compiles"
                      : "the first sample's module") +
         "\n";
    if (used)
      for (const std::string& why : used->refused) s += "  " + why + "\n";
  }
  return s;
}

}  // namespace graft::detail
