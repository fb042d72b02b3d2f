// graft::linalg's implicit differentiation (include/graft/linalg.h):
// custom_linear_solve and custom_root, as jax.lax's.
//
// Both trace the user's functions once, so that every value they close over
// (parameters traced by an enclosing grad or vmap) becomes an explicit
// argument of one custom_jvp function. Its value is the user's solver's; its
// tangent comes from the implicit function theorem, never from
// differentiating the solver's iterations:
//   custom_linear_solve: x = A^-1 b, x' = A^-1 (b' - A' x), where A^-1 is a
//     linear_call of solve whose transpose is transpose_solve, so reverse
//     mode solves with A^T the way the user does;
//   custom_root: f(x*, theta) = 0, x*' = -(df/dx)^-1 (df/dtheta theta'), the
//     inverse being tangent_solve on the linearised f.
// The solvers' own captured values get no derivative (JAX's rule too): the
// solution does not depend on how it was found.
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/autodiff.h"
#include "graft/errors.h"
#include "graft/linalg.h"
#include "ir/dtype.h"
#include "ir/value.h"

namespace graft::linalg {
namespace {

using Arrays = std::vector<Array>;

// How many orders of derivatives custom_root takes implicitly.
constexpr int kImplicitOrders = 3;

Arrays concat(Arrays a, const Arrays& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Arrays slice(const Arrays& a, size_t begin, size_t end) {
  return Arrays(a.begin() + static_cast<long>(begin), a.begin() + static_cast<long>(end));
}

// A traced one-output function run on x and the values it captured.
Array call1(const Graph& g, const Array& x, const Arrays& captured) {
  return detail::run_graph(g, concat({x}, captured)).at(0);
}

using detail::where;

const ir::ValueType& type_of(const Array& a, const char* what) { return detail::checked_impl(a, what).type; }

// A function of x must return x's type: the solvers and maps here all do.
void check_same_type(const Array& got, const Array& x, const std::string& what, const Loc& loc) {
  const ir::ValueType& g = type_of(got, "custom_linear_solve");
  const ir::ValueType& want = type_of(x, "custom_linear_solve");
  if (g != want) throw ShapeError(what + " returned " + ir::type_str(g) + " for " + ir::type_str(want) + where(loc));
}

void check_float(const Array& x, const char* fn, const char* what, const Loc& loc) {
  const ir::ValueType& t = type_of(x, fn);
  if (!ir::is_floating(t.dtype))
    throw DTypeError(std::string(fn) + ": " + what + " must be a float array, got " + ir::type_str(t) + where(loc));
}

}  // namespace

Array custom_linear_solve(const ArrayFunction& matvec, const Array& b, const LinearSolve& solve,
                          const LinearSolve& transpose_solve, bool symmetric, Loc loc) {
  if (!matvec || !solve) throw Error("custom_linear_solve: matvec and solve must be callable" + where(loc));
  check_float(b, "custom_linear_solve", "b", loc);
  // A, A^-1 and A^-T as graphs of (vector, captured values...).
  ArrayFunction mv = matvec;
  auto traced_matvec = detail::trace_function(mv, b);
  check_same_type(traced_matvec.out, b, "custom_linear_solve: matvec", loc);
  auto solve_b = [&](const Array& rhs) { return solve(matvec, rhs); };
  auto traced_solve = detail::trace_function(solve_b, b);
  check_same_type(traced_solve.out, b, "custom_linear_solve: solve", loc);
  std::optional<Graph> g_transpose;
  Arrays transpose_captured;
  if (symmetric) {
    g_transpose = traced_solve.graph;
    transpose_captured = traced_solve.captured;
  } else if (transpose_solve) {
    // y -> A^T y: the VJP of the (linear) matvec.
    const ArrayFunction vecmat = [&](const Array& y) { return std::get<0>(vjp(matvec, b).second(y)); };
    auto solve_t = [&](const Array& ct) { return transpose_solve(vecmat, ct); };
    auto traced = detail::trace_function(solve_t, b);
    check_same_type(traced.out, b, "custom_linear_solve: transpose_solve", loc);
    g_transpose = traced.graph;
    transpose_captured = traced.captured;
  }
  const Graph g_matvec = traced_matvec.graph, g_solve = traced_solve.graph;
  const size_t num_solve = traced_solve.captured.size();

  // r -> A^-1 r as one linear_call: residuals are solve's captured values,
  // then the transpose's; its transpose runs transpose_solve.
  auto inverse = [=](const Arrays& residuals, const Array& r) {
    auto fun = [&](const Arrays& res, const Array& v) { return call1(g_solve, v, slice(res, 0, num_solve)); };
    ir::Graphs transposes;
    if (g_transpose) {
      auto fun_t = [&](const Arrays& res, const Array& ct) {
        return call1(*g_transpose, ct, slice(res, num_solve, res.size()));
      };
      transposes.push_back(detail::trace_function(fun_t, residuals, r).graph.ir_ptr());
    }
    ir::Attrs attrs{{"fun", ir::Graphs{detail::trace_function(fun, residuals, r).graph.ir_ptr()}},
                    {"num_residuals", static_cast<int64_t>(residuals.size())},
                    {"transpose", transposes}};
    return detail::bind1(ir::Op::linear_call, concat(residuals, {r}), attrs, loc);
  };
  auto value = [g_solve](const Array& rhs, const Arrays& solve_c, const Arrays&, const Arrays&) {
    return call1(g_solve, rhs, solve_c);
  };
  auto rule = [=](const auto& primals, const auto& tangents) {
    const auto& [rhs, solve_c, matvec_c, transpose_c] = primals;
    const Array& rhs_dot = std::get<0>(tangents);
    const Arrays& matvec_dot = std::get<2>(tangents);
    Array x = call1(g_solve, rhs, solve_c);
    Array r = rhs_dot;
    if (!matvec_c.empty()) {  // minus A' x, the matvec's tangent in its captured values
      auto a_at_x = [&](const Arrays& m) { return call1(g_matvec, x, m); };
      r = r - jvp(a_at_x, std::make_tuple(matvec_c), std::make_tuple(matvec_dot)).second;
    }
    return std::make_pair(x, inverse(concat(solve_c, transpose_c), r));
  };
  return custom_jvp(value, rule)(b, traced_solve.captured, traced_matvec.captured, transpose_captured);
}

Array custom_root(const ArrayFunction& f, const Array& initial_guess, const RootSolve& solve,
                  const LinearSolve& tangent_solve, Loc loc) {
  if (!f || !solve || !tangent_solve)
    throw Error("custom_root: f, solve and tangent_solve must be callable" + where(loc));
  check_float(initial_guess, "custom_root", "the initial guess", loc);
  ArrayFunction fn = f;
  auto traced_f = detail::trace_function(fn, initial_guess);
  check_same_type(traced_f.out, initial_guess, "custom_root: f", loc);
  auto solve_x0 = [&](const Array& x0) { return solve(f, x0); };
  auto traced_solve = detail::trace_function(solve_x0, initial_guess);
  check_same_type(traced_solve.out, initial_guess, "custom_root: solve", loc);
  const Graph g_f = traced_f.graph, g_solve = traced_solve.graph;

  // x* with `depth` levels of the implicit rule: the rule's own x* is the
  // next level's, so its derivatives are implicit again (graft traces a
  // rule when the function is called, so the levels end: past the last,
  // derivatives run through the solver's steps).
  std::function<Array(const Array&, const Arrays&, const Arrays&, int)> root;
  root = [&](const Array& guess, const Arrays& solve_captured, const Arrays& f_captured, int depth) -> Array {
    if (depth == 0) return call1(g_solve, guess, solve_captured);
    auto value = [&](const Array& x0, const Arrays& solve_c, const Arrays&) { return call1(g_solve, x0, solve_c); };
    auto rule = [&, depth](const auto& primals, const auto& tangents) {
      // References, not a structured binding: lambdas below capture f_c, which clang refuses under OpenMP.
      const auto& x0 = std::get<0>(primals);
      const auto& solve_c = std::get<1>(primals);
      const auto& f_c = std::get<2>(primals);
      const Arrays& f_dot = std::get<2>(tangents);
      Array x = root(x0, solve_c, f_c, depth - 1);
      if (f_c.empty()) return std::make_pair(x, zeros_like(x));  // f has no parameters: x* is constant
      // df/dtheta theta' at x*, then -(df/dx)^-1 of it.
      auto f_at_x = [&](const Arrays& theta) { return call1(g_f, x, theta); };
      Array rhs = jvp(f_at_x, std::make_tuple(f_c), std::make_tuple(f_dot)).second;
      const ArrayFunction linearized = [&](const Array& t) {
        auto f_of = [&](const Array& y) { return call1(g_f, y, f_c); };
        return jvp(f_of, std::make_tuple(x), std::make_tuple(t)).second;
      };
      Array x_dot = -tangent_solve(linearized, rhs);
      check_same_type(x_dot, x, "custom_root: tangent_solve", loc);
      return std::make_pair(x, x_dot);
    };
    return custom_jvp(value, rule)(guess, solve_captured, f_captured);
  };
  return root(initial_guess, traced_solve.captured, traced_f.captured, kImplicitOrders);
}

}  // namespace graft::linalg
