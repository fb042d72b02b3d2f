// The non-template side of cond, switch_, while_loop, fori_loop and scan:
// checks what the traced functions returned, turns their captured values
// into explicit operands and emits the node (or runs it eagerly).
//
// A traced function's graph takes (argument leaves.., captured..); the
// control-flow ops want their constants first (see ops/control.cpp),
// so graphs are rebuilt with their inputs in the node's order when needed.
#include "graft/control_flow.h"

#include <algorithm>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/ref_state.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/inline.h"

namespace graft::detail {
namespace {

using Types = std::vector<ir::ValueType>;

Types types_of(const std::vector<Array>& xs, const char* what) {
  Types out;
  out.reserve(xs.size());
  for (const Array& a : xs) out.push_back(checked_impl(a, what).type);
  return out;
}

// g with its inputs moved: g's input i becomes input pos[i] of a graph
// taking `types`. g itself when nothing moves.
ir::GraphPtr rewire(const ir::GraphPtr& g, const Types& types, const std::vector<size_t>& pos) {
  bool same = types.size() == pos.size();
  for (size_t i = 0; same && i < pos.size(); ++i) same = pos[i] == i;
  if (same) return g;
  ir::GraphBuilder b;
  std::vector<ir::ValueId> inputs;
  inputs.reserve(types.size());
  for (const ir::ValueType& t : types) inputs.push_back(b.input(t));
  std::vector<ir::ValueId> bound;
  bound.reserve(pos.size());
  for (size_t w : pos) bound.push_back(inputs[w]);
  return b.finish(ir::inline_graph(b, *g, bound));
}

// Positions [first, first + n).
void append_range(std::vector<size_t>& v, size_t first, size_t n) {
  for (size_t i = 0; i < n; ++i) v.push_back(first + i);
}

// Throws when `got` (what `who` returned) differs from `want` (what `whom`
// has): ShapeError for a different structure or shape, DTypeError for a
// different dtype. `leaf_kind` names the leaves ("output", "carry").
void check_same(const std::string& what, const std::string& who, const std::string& whom, const char* leaf_kind,
                const std::string& got_structure, const std::string& want_structure, const Types& got,
                const Types& want, const std::source_location& loc) {
  if (got_structure != want_structure || got.size() != want.size()) {
    std::string msg = what;
    msg += ": ";
    msg += who;
    msg += " returns a ";
    msg += leaf_kind;
    msg += " of tree structure ";
    msg += got_structure;
    msg += " but ";
    msg += whom;
    msg += " has ";
    msg += want_structure;
    msg += where(loc);
    throw ShapeError(msg);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    std::string msg = what;
    msg += ": ";
    msg += who;
    msg += " returns ";
    msg += leaf_kind;
    msg += " leaf ";
    msg += std::to_string(i);
    msg += " as ";
    msg += ir::type_str(got[i]);
    msg += " but ";
    msg += whom;
    msg += " has ";
    msg += ir::type_str(want[i]);
    if (got[i].shape == want[i].shape) {
      msg += " (a different dtype)";
      msg += where(loc);
      throw DTypeError(msg);
    }
    msg += where(loc);
    throw ShapeError(msg);
  }
}

bool same_value(const Array& a, const Array& b) {
  return a.impl()->trace == b.impl()->trace && a.impl()->value == b.impl()->value;
}

// cond's predicate as bool[], or switch_'s index as i32[].
Array branch_index(bool is_switch, const Array& index, size_t num_branches, const std::source_location& loc) {
  const char* what = is_switch ? "switch_" : "cond";
  const ir::ValueType& t = checked_impl(index, what).type;
  if (t.rank() != 0) {
    std::string msg = what;
    msg += is_switch ? ": the index must be a scalar, got " : ": the predicate must be a scalar, got ";
    msg += ir::type_str(t);
    msg += where(loc);
    throw ShapeError(msg);
  }
  if (!is_switch) {
    if (t.dtype == DType::bool_) return index;
    if (ir::is_integer(t.dtype)) return convert(index, DType::bool_, loc);  // nonzero is true
    std::string msg = "cond: the predicate must be a bool or integer scalar, got ";
    msg += ir::type_str(t);
    msg += where(loc);
    throw DTypeError(msg);
  }
  if (!ir::is_integer(t.dtype)) {
    std::string msg = "switch_: the index must be an integer scalar, got ";
    msg += ir::type_str(t);
    msg += where(loc);
    throw DTypeError(msg);
  }
  if (t.dtype == DType::i32) return index;  // the cond node clamps
  // Clamp before narrowing, so a large i64 or u32 index stays the last branch.
  return convert(clip(index, 0.0, static_cast<double>(num_branches - 1), loc), DType::i32, loc);
}

}  // namespace

std::vector<Array> cond_bind(bool is_switch, const Array& index, const std::vector<TracedBody>& branches,
                             const std::vector<Array>& operands, const std::source_location& loc) {
  const char* what = is_switch ? "switch_" : "cond";
  if (branches.empty()) {
    std::string msg = "switch_: needs at least one branch";
    msg += where(loc);
    throw ShapeError(msg);
  }
  auto name = [&](size_t i) {
    if (!is_switch) return std::string(i == 0 ? "false_fn" : "true_fn");
    return "branch " + std::to_string(i);
  };
  Array idx = branch_index(is_switch, index, branches.size(), loc);
  // Every branch must return what the first one does.
  const Types first = branches[0].graph.ir().output_types();
  for (size_t i = 1; i < branches.size(); ++i)
    check_same(what, name(i), name(0), "result", branches[i].out_structure, branches[0].out_structure,
               branches[i].graph.ir().output_types(), first, loc);

  // Values the branches captured, each once; every branch graph takes them all.
  std::vector<Array> captured;
  std::vector<std::vector<size_t>> where_in(branches.size());
  Types in_types = types_of(operands, what);
  const size_t nargs = operands.size();
  for (size_t b = 0; b < branches.size(); ++b) {
    append_range(where_in[b], 0, nargs);
    for (const Array& c : branches[b].captured) {
      size_t k = 0;
      while (k < captured.size() && !same_value(captured[k], c)) ++k;
      if (k == captured.size()) {
        captured.push_back(c);
        in_types.push_back(c.impl()->type);
      }
      where_in[b].push_back(nargs + k);
    }
  }
  ir::Graphs graphs;
  for (size_t b = 0; b < branches.size(); ++b)
    graphs.push_back(rewire(branches[b].graph.ir_ptr(), in_types, where_in[b]));

  std::vector<Array> inputs{idx};
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  return bind(ir::Op::cond, inputs, {{"branches", std::move(graphs)}}, loc);
}

std::vector<Array> while_bind(const char* what, const TracedBody& cond, const TracedBody& body,
                              const std::string& init_structure, const std::vector<Array>& init, int64_t checkpoints,
                              const std::source_location& loc) {
  if (checkpoints < 2 || checkpoints > (int64_t{1} << 30))
    throw Error(std::string(what) + ": WhileOptions::checkpoints is " + std::to_string(checkpoints) +
                "; reverse mode needs room for 2 to 2^30 carries" + where(loc));
  const Types carry = types_of(init, what);
  // cond_fn: one bool scalar.
  Types cond_out = cond.graph.ir().output_types();
  if (cond_out.size() != 1 || cond_out[0] != ir::ValueType{DType::bool_, {}}) {
    std::string msg = what;
    msg += ": cond_fn must return one bool scalar Array, it returns ";
    if (cond_out.size() != 1) {
      msg += std::to_string(cond_out.size());
      msg += " arrays";
    } else {
      msg += ir::type_str(cond_out[0]);
    }
    msg += where(loc);
    if (cond_out.size() == 1 && cond_out[0].rank() == 0) throw DTypeError(msg);
    throw ShapeError(msg);
  }
  check_same(what, "body_fn", "init", "carry", body.out_structure, init_structure, body.graph.ir().output_types(),
             carry, loc);

  // (carry.., captured..) -> (cconsts.., carry..) and (bconsts.., carry..).
  const size_t nc = carry.size(), ncc = cond.captured.size(), nbc = body.captured.size();
  Types cond_in = types_of(cond.captured, what);
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  std::vector<size_t> cond_where;
  append_range(cond_where, ncc, nc);
  append_range(cond_where, 0, ncc);
  Types body_in = types_of(body.captured, what);
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  std::vector<size_t> body_where;
  append_range(body_where, nbc, nc);
  append_range(body_where, 0, nbc);

  std::vector<Array> inputs = cond.captured;
  inputs.insert(inputs.end(), body.captured.begin(), body.captured.end());
  inputs.insert(inputs.end(), init.begin(), init.end());
  ir::Attrs attrs{{"cond", ir::Graphs{rewire(cond.graph.ir_ptr(), cond_in, cond_where)}},
                  {"body", ir::Graphs{rewire(body.graph.ir_ptr(), body_in, body_where)}},
                  {"cond_nconsts", static_cast<int64_t>(ncc)},
                  {"body_nconsts", static_cast<int64_t>(nbc)},
                  {"checkpoints", checkpoints}};
  return bind(ir::Op::while_loop, inputs, std::move(attrs), loc);
}

int64_t scan_length(const std::vector<Array>& xs, int64_t length, const std::source_location& loc) {
  if (xs.empty()) {
    if (length < 0) {
      std::string msg = "scan: cannot infer the length from xs with no arrays; pass length";
      msg += where(loc);
      throw ShapeError(msg);
    }
    return length;
  }
  int64_t n = length;
  for (size_t i = 0; i < xs.size(); ++i) {
    const ir::ValueType& t = checked_impl(xs[i], "scan").type;
    if (t.rank() == 0) {
      std::string msg = "scan: xs leaf ";
      msg += std::to_string(i);
      msg += " is the scalar ";
      msg += ir::type_str(t);
      msg += "; scanned arrays need a leading axis";
      msg += where(loc);
      throw ShapeError(msg);
    }
    if (n < 0) {
      n = t.shape[0];
      continue;
    }
    if (t.shape[0] != n) {
      std::string msg = "scan: xs leaf ";
      msg += std::to_string(i);
      msg += " (";
      msg += ir::type_str(t);
      msg += ") has leading dimension ";
      msg += std::to_string(t.shape[0]);
      msg += length >= 0 ? " but length is " : " but xs leaf 0 has ";
      msg += std::to_string(n);
      msg += "; every scanned array must have the same leading dimension";
      msg += where(loc);
      throw ShapeError(msg);
    }
  }
  return n;
}

std::vector<Array> scan_slices_like(const std::vector<Array>& xs) {
  std::vector<Array> out;
  out.reserve(xs.size());
  for (const Array& x : xs) {
    const ir::ValueType& t = checked_impl(x, "scan").type;
    // Only its type is read (the trace makes an input like it), so no buffer.
    out.emplace_back(make_concrete(ir::ValueType{t.dtype, Shape(t.shape.begin() + 1, t.shape.end())}, nullptr));
  }
  return out;
}

std::vector<Array> scan_bind(const char* what, const TracedBody& body, const std::string& init_structure,
                             const std::vector<Array>& init, const std::vector<Array>& xs, int64_t length, bool reverse,
                             const std::source_location& loc) {
  const Types carry = types_of(init, what);
  Types outs = body.graph.ir().output_types();
  Types carry_out(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(std::min(carry.size(), outs.size())));
  std::string who = std::string(what) == "fori_loop" ? "body" : "f";
  check_same(what, who, "init", "carry", body.out_structure, init_structure, carry_out, carry, loc);

  // (carry.., x.., captured..) -> (consts.., carry.., x..)
  const size_t nc = carry.size(), nx = xs.size(), nk = body.captured.size();
  Types in = types_of(body.captured, what);
  in.insert(in.end(), carry.begin(), carry.end());
  for (const Array& x : xs) {
    const ir::ValueType& t = x.impl()->type;
    in.push_back(ir::ValueType{t.dtype, Shape(t.shape.begin() + 1, t.shape.end())});
  }
  std::vector<size_t> where_in;
  append_range(where_in, nk, nc + nx);
  append_range(where_in, 0, nk);

  std::vector<Array> inputs = body.captured;
  inputs.insert(inputs.end(), init.begin(), init.end());
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  ir::Attrs attrs{{"body", ir::Graphs{rewire(body.graph.ir_ptr(), in, where_in)}},
                  {"num_consts", static_cast<int64_t>(nk)},
                  {"num_carry", static_cast<int64_t>(nc)},
                  {"length", length},
                  {"reverse", int64_t{reverse ? 1 : 0}}};
  return bind(ir::Op::scan, inputs, std::move(attrs), loc);
}

void merge_refs(std::vector<std::shared_ptr<RefState>>& refs, const std::vector<std::shared_ptr<RefState>>& more) {
  for (const auto& r : more)
    if (std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
}

std::vector<Array> split_ref_results(const std::vector<std::shared_ptr<RefState>>& refs, std::vector<Array> outs) {
  const size_t n = outs.size() - refs.size();
  write_back_refs(refs, std::vector<Array>(outs.begin() + static_cast<std::ptrdiff_t>(n), outs.end()));
  outs.resize(n);
  return outs;
}

void carry_refs_through_scan(TracedBody& body, size_t num_carry, size_t num_xs) {
  const ir::Graph& g = body.graph.ir();
  const size_t nc = num_carry, nx = num_xs, nr = body.refs.size();
  const size_t nk = g.inputs().size() - nc - nx - nr;
  const size_t ny = g.outputs().size() - nc - nr;
  const Types in = g.input_types();
  // New inputs: carry.., refs.., xs.., captured..; g's input i binds to bind[i].
  Types types(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(nc));
  types.insert(types.end(), in.begin() + static_cast<std::ptrdiff_t>(nc + nx),
               in.begin() + static_cast<std::ptrdiff_t>(nc + nx + nr));
  types.insert(types.end(), in.begin() + static_cast<std::ptrdiff_t>(nc),
               in.begin() + static_cast<std::ptrdiff_t>(nc + nx));
  types.insert(types.end(), in.begin() + static_cast<std::ptrdiff_t>(nc + nx + nr), in.end());
  std::vector<size_t> bind;
  append_range(bind, 0, nc);
  append_range(bind, nc + nr, nx);
  append_range(bind, nc, nr);
  append_range(bind, nc + nr + nx, nk);
  std::vector<size_t> outs;
  append_range(outs, 0, nc);
  append_range(outs, nc + ny, nr);
  append_range(outs, nc, ny);
  body.graph = Graph(ir::rebind_graph(g, types, bind, outs));
}

void cond_reads_refs(TracedBody& cond, const std::source_location& loc) {
  const ir::Graph& g = cond.graph.ir();
  const size_t nr = cond.refs.size();
  const size_t nc = g.inputs().size() - cond.captured.size() - nr;
  for (size_t k = 0; k < nr; ++k)
    if (g.outputs()[1 + k] != g.inputs()[nc + k])
      throw UnsupportedError("while_loop: cond_fn writes a Ref" + where(loc) +
                             "; a loop's condition may read Refs, and only its body may write them");
  ir::Graph copy = g;
  copy.set_outputs({g.outputs()[0]});
  cond.graph = Graph(std::make_shared<const ir::Graph>(std::move(copy)));
}

std::pair<Array, Array> fori_bounds(const Array& lo, const Array& hi, const std::source_location& loc) {
  auto bound = [&](const Array& b, const char* name) {
    const ir::ValueType& t = checked_impl(b, "fori_loop").type;
    if (t.rank() != 0 || !ir::is_integer(t.dtype)) {
      std::string msg = "fori_loop: ";
      msg += name;
      msg += " must be an integer scalar, got ";
      msg += ir::type_str(t);
      msg += where(loc);
      if (t.rank() != 0) throw ShapeError(msg);
      throw DTypeError(msg);
    }
    return t.dtype == DType::i32 ? b : convert(b, DType::i32, loc);
  };
  return {bound(lo, "lo"), bound(hi, "hi")};
}

}  // namespace graft::detail
