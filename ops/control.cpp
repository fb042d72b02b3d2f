// The control op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of control flow. Subgraphs take everything they use as
// explicit inputs (no implicit capture), so each rule checks their signatures.
//
// cond(index, args...)            branches: graphs (args) -> outs, all alike.
//                                 index is i32[] (clamped), or bool[] with
//                                 exactly two branches (false, true).
// while(cconsts.., bconsts.., init..)  cond: (cconsts.., carry..) -> bool[];
//                                 body: (bconsts.., carry..) -> carry..;
//                                 attrs cond_nconsts, body_nconsts.
// scan(consts.., init.., xs..)    body: (consts.., carry.., x slices..) ->
//                                 (carry.., y slices..); results are the
//                                 final carry and ys stacked on a new axis 0;
//                                 attrs num_consts, num_carry, length, reverse.
//
// Transform rules of control flow: cond, while and scan.
//
// The JVP of cond and scan is split so that reverse mode needs no special
// partial evaluation: the primal node computes the primal values (scan also
// records the carry entering each step), and a separate node, linear in the
// tangents, recomputes what it needs of the primal inside its subgraphs.
// Transposing that node transposes its subgraphs (transpose_graph), so the
// backward pass of a scan recomputes one step's intermediates at a time, as
// if each step were checkpointed: memory O(length x carry) instead of
// O(length x intermediates), for about one extra forward pass.
//
// while's JVP is one loop over primal and tangent carries; reverse mode
// splits it (partial evaluation runs the primal part) and runs the steps
// backwards from bounded checkpoints (transforms/rules/while_reverse.h),
// which JAX refuses.
//
// Batching rules (vmap)
//
// Subgraphs are batched with vmap_graph: their inputs take the batch dims of
// the operands bound to them, and each output comes out at dimension 0, or
// unbatched where the rule asks for that (an output every batched version
// leaves unbatched: a loop carry the body never makes batched, a branch
// output independent of the batched operands).
//
// cond with an unbatched index batches its branches. A batched index (a
// predicate per example) runs every branch, batched, and picks each example's
// result with select, as JAX does.
// while: which carries are batched is a fixed point (a carry becomes batched
// when the body makes it so). If the predicate is then still unbatched, the
// loop runs as one loop over batched carries; a batched predicate (one per
// example) makes every carry batched, runs while any example's predicate
// holds, and updates only the examples whose predicate holds.
// scan: consts keep their batch dims; xs are sliced on axis 0, so an xs
// batched at 0 moves its batch axis to 1 (at d > 0 it stays, and the slice
// has it at d - 1); carries are batched by fixed point; batched ys come out
// of the body at 0, so they are stacked with the batch axis at 1.
#include <algorithm>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ir/inline.h"
#include "ir/passes.h"
#include "ops/rules.h"
#include "transforms/jvp.h"
#include "transforms/rules/while_reverse.h"
#include "transforms/transpose.h"
#include "transforms/vmap.h"

namespace graft::ops {

namespace {

using Types = std::vector<ValueType>;

Types slice_types(const Types& ts, size_t first, size_t count) {
  return Types(ts.begin() + first, ts.begin() + first + count);
}

int64_t count_attr(const RuleCtx& c, const std::string& name, size_t limit) {
  int64_t n = c.attr_int(name);
  if (n < 0 || n > static_cast<int64_t>(limit))
    c.shape_error(name + " " + std::to_string(n) + " must be in [0, " + std::to_string(limit) + "]");
  return n;
}

using Out = ir::IdList;

using Types = std::vector<ir::ValueType>;

const ir::Graphs& graphs_attr(const ir::Node& n, const char* name) { return ir::attr<ir::Graphs>(n, name); }

// Which outputs of g may carry a tangent when the flagged inputs do: a float
// path through differentiable ops. A superset of what jvp_graph leaves
// non-zero, which is all a loop's fixed point needs.
std::vector<bool> tangent_reaches(const ir::Graph& g, const std::vector<bool>& flagged) {
  std::vector<bool> reached(g.value_id_bound(), false);
  for (size_t i = 0; i < g.inputs().size(); ++i) reached[g.inputs()[i]] = flagged[i];
  for (const ir::Node& n : g.nodes()) {
    bool any = false;
    for (ValueId v : n.inputs) any = any || reached[v];
    if (!any || is_non_differentiable(n.op)) continue;
    for (ValueId v : n.outputs) reached[v] = ir::is_inexact(g.type(v).dtype);
  }
  std::vector<bool> out;
  for (ValueId v : g.outputs()) out.push_back(reached[v]);
  return out;
}

// The tangent outputs `keep` (indices into g's outputs) of g's JVP graph, as
// a graph of its own: inputs g's inputs then the flagged tangents.
ir::GraphPtr tangent_part(const ir::Graph& g, const std::vector<bool>& flags, const std::vector<size_t>& keep) {
  ir::GraphPtr full = jvp_graph(g, flags);
  ir::Graph part = *full;
  std::vector<ValueId> outs;
  for (size_t k : keep) outs.push_back(full->outputs()[g.outputs().size() + k]);
  part.set_outputs(std::move(outs));
  return std::make_shared<const ir::Graph>(ir::recomputation_dce(std::move(part)));
}

std::vector<size_t> iota_indices(size_t first, size_t count) {
  std::vector<size_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

// A scan node's operand and output counts, and its attributes.
struct ScanShape {
  size_t consts, carry, xs, ys;
  int64_t length, reverse;
};

ir::Attrs scan_attrs(const ir::GraphPtr& body, size_t consts, size_t carry, int64_t length, int64_t reverse) {
  return {{"body", ir::Graphs{body}},
          {"num_consts", static_cast<int64_t>(consts)},
          {"num_carry", static_cast<int64_t>(carry)},
          {"length", length},
          {"reverse", reverse}};
}

// A cotangent made concrete: zeros where none arrived.
ValueId concrete(TransposeCtx& c, ValueId ct, const ir::ValueType& type) { return ct != kZero ? ct : c.zeros(type); }

ir::ValueType stacked(const ir::ValueType& t, int64_t length) {
  ir::ValueType s = t;
  s.shape.insert(s.shape.begin(), length);
  return s;
}

using Batched = std::vector<BatchedValue>;

std::vector<int64_t> dims_of(const Batched& ops, size_t first, size_t count) {
  std::vector<int64_t> d;
  for (size_t i = first; i < first + count; ++i) d.push_back(ops[i].dim);
  return d;
}

std::vector<int64_t> concat_dims(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// 0 where batched, kNotBatched elsewhere.
std::vector<int64_t> zero_or_none(const std::vector<bool>& batched) {
  std::vector<int64_t> d;
  for (bool x : batched) d.push_back(x ? 0 : kNotBatched);
  return d;
}

// v (batch axis at `have`, or none) with its batch axis at `want`: moved there,
// or broadcast in.
ValueId place(BatchCtx& c, ValueId v, int64_t have, int64_t want) {
  if (have != kNotBatched) return c.move_axis(v, have, want);
  ir::ValueType t = c.type(v);
  ir::Ints dims;
  for (int64_t d = 0; d < t.rank() + 1; ++d)
    if (d != want) dims.push_back(d);
  t.shape.insert(t.shape.begin() + want, c.axis_size);
  return c.add(Op::broadcast_in_dim, {v}, {{"shape", ir::Ints(t.shape)}, {"broadcast_dimensions", dims}});
}

// pred (bool[B]) broadcast over a value of `shape` batched at 0 (shape
// includes the batch axis).
ValueId spread(ir::GraphBuilder& b, ValueId pred, const Shape& shape, const ir::Node* at) {
  if (shape.size() == 1) return pred;
  return b.add1(Op::broadcast_in_dim, {pred}, {{"shape", ir::Ints(shape)}, {"broadcast_dimensions", ir::Ints{0}}},
                at->loc, at->scope);
}

}  // namespace

// ---- cond

OutTypes cond_shape(const RuleCtx& c) {
  if (c.num_inputs() < 1) c.shape_error("needs an index operand");
  const ValueType& index = c.input(0);
  const Graphs& branches = c.attr_graphs("branches");
  if (branches.empty()) c.shape_error("needs at least one branch");
  if (index.rank() != 0) c.shape_error("index must be a scalar, got " + type_str(index));
  if (index.dtype == DType::bool_) {
    if (branches.size() != 2) c.shape_error("a bool predicate needs exactly two branches");
  } else if (index.dtype != DType::i32) {
    c.dtype_error(std::string("index must be i32 or bool, got ") + dtype_name(index.dtype));
  }
  Types args = slice_types(c.inputs(), 1, c.num_inputs() - 1);
  Types outs = branches[0]->output_types();
  for (size_t i = 0; i < branches.size(); ++i)
    c.check_signature(*branches[i], "branch " + std::to_string(i), args, &outs);
  return outs;
}

// cond(index, args..): the primal cond stays; a second cond, over each
// branch's JVP restricted to its tangents, gives the output tangents.
ir::IdList cond_jvp(JvpCtx& c) {
  const ir::Graphs& branches = graphs_attr(c.node(), "branches");
  const size_t n_args = c.primals.size() - 1;
  std::vector<bool> flags(n_args);
  std::vector<ValueId> inputs = c.primals;
  for (size_t i = 0; i < n_args; ++i) {
    flags[i] = c.tangents[i + 1] != kZero;
    if (flags[i]) inputs.push_back(c.tangents[i + 1]);
  }
  // An output gets a tangent if some branch can give it one.
  std::vector<bool> live(c.outputs.size(), false);
  for (const ir::GraphPtr& br : branches) {
    std::vector<bool> r = tangent_reaches(*br, flags);
    for (size_t k = 0; k < live.size(); ++k) live[k] = live[k] || r[k];
  }
  std::vector<size_t> keep;
  for (size_t k = 0; k < live.size(); ++k)
    if (live[k]) keep.push_back(k);
  Out result(c.outputs.size(), kZero);
  if (keep.empty()) return result;
  ir::Graphs tangent_branches;
  for (const ir::GraphPtr& br : branches) tangent_branches.push_back(tangent_part(*br, flags, keep));
  Out touts = c.add_multi(Op::cond, inputs, {{"branches", tangent_branches}});
  for (size_t j = 0; j < keep.size(); ++j) result[keep[j]] = touts[j];
  return result;
}

// cond is linear in the operands whose branches are: each branch is
// transposed on its own, and a cond over the transposed branches picks one.
ir::IdList cond_transpose(TransposeCtx& c) {
  if (c.unknown[0]) throw UnsupportedError("cond: the branch index cannot carry a tangent");
  const ir::Graphs& branches = graphs_attr(c.node(), "branches");
  std::vector<bool> unknown(c.unknown.begin() + 1, c.unknown.end());
  std::vector<ValueId> inputs{c.operands[0]};
  for (size_t i = 0; i < unknown.size(); ++i)
    if (!unknown[i]) inputs.push_back(c.operands[i + 1]);
  const Types out_types = branches[0]->output_types();
  for (size_t k = 0; k < out_types.size(); ++k) inputs.push_back(concrete(c, c.cotangents[k], out_types[k]));
  ir::Graphs transposed;
  for (const ir::GraphPtr& br : branches) transposed.push_back(transpose_graph(*br, unknown));
  Out cts = c.emit().add_multi(Op::cond, inputs, {{"branches", transposed}});
  std::vector<ValueId> result(c.operands.size(), kZero);
  size_t next = 0;
  for (size_t i = 0; i < unknown.size(); ++i)
    if (unknown[i]) result[i + 1] = cts[next++];
  return result;
}

// cond(index, args..)
std::vector<BatchedValue> cond_batch(BatchCtx& c) {
  const ir::Graphs& branches = graphs_attr(c.node(), "branches");
  const size_t n_args = c.operands.size() - 1;
  const std::vector<int64_t> arg_dims = dims_of(c.operands, 1, n_args);
  std::vector<ValueId> args;
  for (size_t i = 1; i < c.operands.size(); ++i) args.push_back(c.operands[i].value);

  if (c.operands[0].dim == kNotBatched) {
    // An output stays unbatched if no branch makes it batched.
    const size_t n_out = branches[0]->outputs().size();
    std::vector<bool> out_b(n_out, false);
    for (const ir::GraphPtr& br : branches) {
      std::vector<bool> r = batched_outputs(*br, arg_dims, c.axis_size, c.axis_name);
      for (size_t k = 0; k < n_out; ++k) out_b[k] = out_b[k] || r[k];
    }
    const std::vector<int64_t> out_dims = zero_or_none(out_b);
    ir::Graphs batched;
    for (const ir::GraphPtr& br : branches)
      batched.push_back(vmap_graph(*br, arg_dims, out_dims, c.axis_size, c.axis_name));
    std::vector<ValueId> inputs{c.operands[0].value};
    inputs.insert(inputs.end(), args.begin(), args.end());
    Out outs = c.add_multi(Op::cond, inputs, {{"branches", batched}});
    Batched result;
    for (size_t k = 0; k < n_out; ++k) result.push_back({outs[k], out_dims[k]});
    return result;
  }

  // A predicate per example: every branch runs; select picks. The index is
  // bool[B] (two branches: false, true) or i32[B], clamped into range: branch
  // k is taken where index >= k and no later branch is.
  ir::GraphBuilder& b = c.builder();
  const ValueId index = c.operands[0].value;  // a scalar, so batched at 0
  const bool is_bool = c.type(index).dtype == DType::bool_;
  std::vector<Out> outs;
  for (const ir::GraphPtr& br : branches) {
    BatchedGraph bg = batch_graph(*br, arg_dims, c.axis_size, c.axis_name);
    Out o = ir::inline_graph(b, *bg.graph, args);
    for (size_t k = 0; k < o.size(); ++k) o[k] = place(c, o[k], bg.out_dims[k], 0);
    outs.push_back(std::move(o));
  }
  Out result = outs[0];
  for (size_t j = 1; j < branches.size(); ++j) {
    ValueId pick = index;
    if (!is_bool) {
      ValueId k = emit_full(b, static_cast<double>(j), c.type(index), &c.node());
      pick = c.add(Op::ge, {index, k});
    }
    for (size_t k = 0; k < result.size(); ++k) {
      ValueId p = spread(b, pick, c.type(result[k]).shape, &c.node());
      result[k] = c.add(Op::select, {p, outs[j][k], result[k]});
    }
  }
  Batched r;
  for (ValueId v : result) r.push_back({v, 0});
  return r;
}

// ---- while_loop

OutTypes while_loop_shape(const RuleCtx& c) {
  int64_t cn = count_attr(c, "cond_nconsts", c.num_inputs());
  int64_t bn = count_attr(c, "body_nconsts", c.num_inputs() - cn);
  // Reverse mode's memory bound: two sets of slots of at least one carry each.
  if (int64_t k = c.attr_int("checkpoints"); k < 2 || k > (int64_t{1} << 30))
    c.format_error("checkpoints " + std::to_string(k) + " is out of range (2 to 2^30 carries)");
  Types carry = slice_types(c.inputs(), cn + bn, c.num_inputs() - cn - bn);
  Types cond_in = slice_types(c.inputs(), 0, cn);
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  Types cond_out = {ValueType{DType::bool_, {}}};
  c.check_signature(c.attr_graph("cond"), "cond", cond_in, &cond_out);
  Types body_in = slice_types(c.inputs(), cn, bn);
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  c.check_signature(c.attr_graph("body"), "body", body_in, &carry);
  return carry;
}

// while(cconsts.., bconsts.., carry..): one loop over the primal and tangent
// carries together. Which carries need a tangent is a fixed point: a carry
// whose tangent is zero on entry may get one from the body.
ir::IdList while_loop_jvp(JvpCtx& c) {
  const ir::Graph& cond = *graphs_attr(c.node(), "cond").at(0);
  const ir::Graph& body = *graphs_attr(c.node(), "body").at(0);
  const size_t cn = static_cast<size_t>(ir::int_attr(c.node(), "cond_nconsts"));
  const size_t bn = static_cast<size_t>(ir::int_attr(c.node(), "body_nconsts"));
  const size_t n = c.primals.size() - cn - bn;
  std::vector<bool> flags(bn + n);  // body inputs: bconsts, carry
  for (size_t i = 0; i < bn + n; ++i) flags[i] = c.tangents[cn + i] != kZero;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> r = tangent_reaches(body, flags);
    for (size_t k = 0; k < n; ++k)
      if (r[k] && !flags[bn + k]) changed = flags[bn + k] = true;
  }
  std::vector<size_t> tb, tc;  // flagged bconsts, flagged carries
  for (size_t i = 0; i < bn; ++i)
    if (flags[i]) tb.push_back(i);
  for (size_t k = 0; k < n; ++k)
    if (flags[bn + k]) tc.push_back(k);

  // New operands: cconsts, bconsts, their tangents, carry, carry tangents.
  std::vector<ValueId> inputs(c.primals.begin(), c.primals.begin() + static_cast<long>(cn + bn));
  for (size_t i : tb) inputs.push_back(c.tangents[cn + i]);
  for (size_t k = 0; k < n; ++k) inputs.push_back(c.primals[cn + bn + k]);
  for (size_t k : tc) inputs.push_back(c.instantiate(c.tangents[cn + bn + k], c.primals[cn + bn + k]));
  Types types;
  for (ValueId v : inputs) types.push_back(c.type(v));

  // cond sees (cconsts, carry, carry tangents) and ignores the tangents.
  Types cond_types(types.begin(), types.begin() + static_cast<long>(cn));
  cond_types.insert(cond_types.end(), types.begin() + static_cast<long>(cn + bn + tb.size()), types.end());
  std::vector<size_t> cond_bind = iota_indices(0, cn + n);
  ir::GraphPtr new_cond = ir::rebind_graph(cond, cond_types, cond_bind, {0});

  // body sees (bconsts, bconst tangents, carry, carry tangents); its JVP graph
  // takes (bconsts, carry, bconst tangents, carry tangents).
  ir::GraphPtr jp = jvp_graph(body, flags);
  Types body_types(types.begin() + static_cast<long>(cn), types.end());
  std::vector<size_t> bind;
  for (size_t i = 0; i < bn; ++i) bind.push_back(i);
  for (size_t k = 0; k < n; ++k) bind.push_back(bn + tb.size() + k);
  for (size_t j = 0; j < tb.size(); ++j) bind.push_back(bn + j);
  for (size_t j = 0; j < tc.size(); ++j) bind.push_back(bn + tb.size() + n + j);
  std::vector<size_t> outs = iota_indices(0, n);
  for (size_t k : tc) outs.push_back(n + k);
  ir::GraphPtr new_body = ir::rebind_graph(*jp, body_types, bind, outs);

  Out res = c.add_multi(Op::while_loop, inputs,
                        {{"cond", ir::Graphs{new_cond}},
                         {"body", ir::Graphs{new_body}},
                         {"cond_nconsts", static_cast<int64_t>(cn)},
                         {"body_nconsts", static_cast<int64_t>(bn + tb.size())},
                         {"checkpoints", ir::int_attr(c.node(), "checkpoints")}});
  for (size_t k = 0; k < n; ++k) c.outputs[k] = res[k];  // the loop runs once, not twice
  Out tangents(n, kZero);
  for (size_t j = 0; j < tc.size(); ++j) tangents[tc[j]] = res[n + j];
  return tangents;
}

// The joint loop of while's JVP, its primal part run by partial evaluation:
// the steps run backwards from checkpoints (transforms/rules/while_reverse.h).
ir::IdList while_loop_transpose(TransposeCtx& c) {
  auto split = split_while(c.node(), c.unknown);
  if (!split)
    throw UnsupportedError(
        "while: reverse-mode differentiation of this while_loop is not supported: its condition reads a value "
        "that carries a tangent, or a tangent flows into the primal carries");
  try {
    return emit_while_reverse(c.emit().builder(), c.node(), *split,
                              std::vector<ValueId>(c.operands.begin(), c.operands.end()), c.unknown,
                              std::vector<ValueId>(c.cotangents.begin(), c.cotangents.end()));
  } catch (const UnsupportedError& e) {
    // The body's tangent step did not transpose. One such body is a while's own backward sweep, whose
    // cond mixes primal and tangent values once differentiated again: say what to do instead.
    throw UnsupportedError(std::string("while: reverse mode through this while_loop's body is not supported (") +
                           e.what() +
                           "); differentiating a while loop's gradient in reverse mode again is one such case: "
                           "take second derivatives forward over reverse (jvp of grad)");
  }
}

// while(cconsts.., bconsts.., carry..)
std::vector<BatchedValue> while_loop_batch(BatchCtx& c) {
  const ir::Graph& cond = *graphs_attr(c.node(), "cond").at(0);
  const ir::Graph& body = *graphs_attr(c.node(), "body").at(0);
  const size_t cn = static_cast<size_t>(ir::int_attr(c.node(), "cond_nconsts"));
  const size_t bn = static_cast<size_t>(ir::int_attr(c.node(), "body_nconsts"));
  const size_t n = c.operands.size() - cn - bn;
  const std::vector<int64_t> cdims = dims_of(c.operands, 0, cn), bdims = dims_of(c.operands, cn, bn);

  std::vector<bool> carry_b(n);
  for (size_t k = 0; k < n; ++k) carry_b[k] = c.operands[cn + bn + k].dim != kNotBatched;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> r = batched_outputs(body, concat_dims(bdims, zero_or_none(carry_b)), c.axis_size, c.axis_name);
    for (size_t k = 0; k < n; ++k)
      if (r[k] && !carry_b[k]) changed = carry_b[k] = true;
  }
  const bool pred_b = batched_outputs(cond, concat_dims(cdims, zero_or_none(carry_b)), c.axis_size, c.axis_name).at(0);
  if (pred_b) carry_b.assign(n, true);
  const std::vector<int64_t> carry_dims = zero_or_none(carry_b);

  std::vector<ValueId> consts, carry;
  for (size_t i = 0; i < cn + bn; ++i) consts.push_back(c.operands[i].value);
  for (size_t k = 0; k < n; ++k) carry.push_back(carry_b[k] ? c.at(cn + bn + k, 0) : c.operands[cn + bn + k].value);

  ir::GraphPtr new_body = vmap_graph(body, concat_dims(bdims, carry_dims), carry_dims, c.axis_size, c.axis_name);
  ir::GraphPtr new_cond, body_used = new_body;
  std::vector<ValueId> inputs;
  int64_t body_nconsts = static_cast<int64_t>(bn);
  if (!pred_b) {
    new_cond = vmap_graph(cond, concat_dims(cdims, carry_dims), {kNotBatched}, c.axis_size, c.axis_name);
    inputs = consts;
  } else {
    // cond: any example's predicate holds. body (cconsts, bconsts, carry):
    // the step where the example's predicate holds, the carry elsewhere.
    ir::GraphPtr per_example = vmap_graph(cond, concat_dims(cdims, carry_dims), {0}, c.axis_size, c.axis_name);
    Types ctypes, btypes, ktypes;
    for (size_t i = 0; i < cn; ++i) ctypes.push_back(c.type(consts[i]));
    for (size_t i = cn; i < cn + bn; ++i) btypes.push_back(c.type(consts[i]));
    for (ValueId v : carry) ktypes.push_back(c.type(v));
    {
      ir::GraphBuilder g;
      std::vector<ValueId> ins;
      for (const ir::ValueType& t : ctypes) ins.push_back(g.input(t));
      for (const ir::ValueType& t : ktypes) ins.push_back(g.input(t));
      ValueId p = ir::inline_graph(g, *per_example, ins).at(0);
      new_cond = g.finish({g.add1(Op::reduce_or, {p}, {{"axes", ir::Ints{0}}}, c.node().loc, c.node().scope)});
    }
    {
      ir::GraphBuilder g;
      std::vector<ValueId> cc, bc, k;
      for (const ir::ValueType& t : ctypes) cc.push_back(g.input(t));
      for (const ir::ValueType& t : btypes) bc.push_back(g.input(t));
      for (const ir::ValueType& t : ktypes) k.push_back(g.input(t));
      std::vector<ValueId> cin = cc, bin = bc;
      cin.insert(cin.end(), k.begin(), k.end());
      bin.insert(bin.end(), k.begin(), k.end());
      ValueId p = ir::inline_graph(g, *per_example, cin).at(0);
      Out next = ir::inline_graph(g, *new_body, bin);
      Out outs;
      for (size_t j = 0; j < n; ++j) {
        ValueId pj = spread(g, p, ktypes[j].shape, &c.node());
        outs.push_back(g.add1(Op::select, {pj, next[j], k[j]}, {}, c.node().loc, c.node().scope));
      }
      body_used = g.finish(std::move(outs));
    }
    inputs.assign(consts.begin(), consts.begin() + static_cast<long>(cn));
    inputs.insert(inputs.end(), consts.begin(), consts.end());
    body_nconsts = static_cast<int64_t>(cn + bn);
  }
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  Out res = c.add_multi(Op::while_loop, inputs,
                        {{"cond", ir::Graphs{new_cond}},
                         {"body", ir::Graphs{body_used}},
                         {"cond_nconsts", static_cast<int64_t>(cn)},
                         {"body_nconsts", body_nconsts},
                         {"checkpoints", ir::int_attr(c.node(), "checkpoints")}});
  Batched result;
  for (size_t k = 0; k < n; ++k) result.push_back({res[k], carry_dims[k]});
  return result;
}

// ---- scan

OutTypes scan_shape(const RuleCtx& c) {
  int64_t nconsts = count_attr(c, "num_consts", c.num_inputs());
  int64_t ncarry = count_attr(c, "num_carry", c.num_inputs() - nconsts);
  int64_t length = c.attr_int("length");
  if (length < 0 || length > kMaxDim) c.shape_error("length " + std::to_string(length) + " is out of range");
  c.attr_bool("reverse");
  Types body_in = slice_types(c.inputs(), 0, nconsts + ncarry);
  for (size_t i = nconsts + ncarry; i < c.num_inputs(); ++i) {
    const ValueType& x = c.input(i);
    if (x.rank() == 0 || x.shape[0] != length)
      c.shape_error("scanned operand " + type_str(x) + " needs a leading axis of length " + std::to_string(length));
    body_in.push_back(ValueType{x.dtype, Shape(x.shape.begin() + 1, x.shape.end())});
  }
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", body_in, nullptr);
  Types body_out = body.output_types();
  Types carry = slice_types(c.inputs(), nconsts, ncarry);
  if (body_out.size() < carry.size() || slice_types(body_out, 0, carry.size()) != carry)
    c.shape_error("body must return the carry types first");
  Types out = carry;
  for (size_t i = carry.size(); i < body_out.size(); ++i) {
    Shape s = {length};
    s.insert(s.end(), body_out[i].shape.begin(), body_out[i].shape.end());
    c.check_shape(s, "stacked output");
    out.push_back(ValueType{body_out[i].dtype, s});
  }
  return out;
}

ScanShape scan_shape(const ir::Node& node, size_t num_operands, const ir::Graph& body) {
  ScanShape s;
  s.consts = static_cast<size_t>(ir::int_attr(node, "num_consts"));
  s.carry = static_cast<size_t>(ir::int_attr(node, "num_carry"));
  s.xs = num_operands - s.consts - s.carry;
  s.ys = body.outputs().size() - s.carry;
  s.length = ir::int_attr(node, "length");
  s.reverse = ir::int_attr(node, "reverse");
  return s;
}

// scan(consts.., init.., xs..): the primal scan is re-emitted so that it also
// stacks the carry entering each step; a tangent scan then runs each step's
// JVP from that carry, recomputing the step's primal values.
ir::IdList scan_jvp(JvpCtx& c) {
  const ir::Graph& body = *graphs_attr(c.node(), "body").at(0);
  const ScanShape s = scan_shape(c.node(), c.primals.size(), body);
  const size_t n_in = c.primals.size();
  std::vector<bool> flags(n_in);
  for (size_t i = 0; i < n_in; ++i) flags[i] = c.tangents[i] != kZero;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> r = tangent_reaches(body, flags);
    for (size_t k = 0; k < s.carry; ++k)
      if (r[k] && !flags[s.consts + k]) changed = flags[s.consts + k] = true;
  }
  std::vector<bool> y_live = tangent_reaches(body, flags);
  std::vector<size_t> tk, tc, tx, ty;  // flagged consts, carries, xs; ys with tangents
  for (size_t i = 0; i < s.consts; ++i)
    if (flags[i]) tk.push_back(i);
  for (size_t k = 0; k < s.carry; ++k)
    if (flags[s.consts + k]) tc.push_back(k);
  for (size_t i = 0; i < s.xs; ++i)
    if (flags[s.consts + s.carry + i]) tx.push_back(i);
  for (size_t j = 0; j < s.ys; ++j)
    if (y_live[s.carry + j]) ty.push_back(j);

  // The primal scan, recording the carries: body outputs (carry', y, carry).
  Types body_types = body.input_types();
  std::vector<size_t> record = iota_indices(0, s.carry + s.ys);
  for (size_t k = 0; k < s.carry; ++k) record.push_back(body.outputs().size() + s.consts + k);
  ir::GraphPtr recording = ir::rebind_graph(body, body_types, iota_indices(0, n_in), record);
  Out primal = c.add_multi(Op::scan, c.primals, scan_attrs(recording, s.consts, s.carry, s.length, s.reverse));
  for (size_t k = 0; k < s.carry + s.ys; ++k) c.outputs[k] = primal[k];
  std::vector<ValueId> history(primal.begin() + static_cast<long>(s.carry + s.ys), primal.end());

  // The tangent scan's operands: consts, const tangents | carry tangents |
  // carry history, xs, x tangents.
  std::vector<ValueId> inputs(c.primals.begin(), c.primals.begin() + static_cast<long>(s.consts));
  for (size_t i : tk) inputs.push_back(c.tangents[i]);
  for (size_t k : tc) inputs.push_back(c.instantiate(c.tangents[s.consts + k], c.primals[s.consts + k]));
  inputs.insert(inputs.end(), history.begin(), history.end());
  for (size_t i = 0; i < s.xs; ++i) inputs.push_back(c.primals[s.consts + s.carry + i]);
  for (size_t i : tx) inputs.push_back(c.tangents[s.consts + s.carry + i]);

  // Its body takes slices of the history and xs; the step's JVP graph takes
  // (consts, carry, xs, const tangents, carry tangents, x tangents).
  Types types;
  for (size_t i = 0; i < s.consts; ++i) types.push_back(body_types[i]);
  for (size_t i : tk) types.push_back(body_types[i]);
  for (size_t k : tc) types.push_back(body_types[s.consts + k]);
  for (size_t k = 0; k < s.carry; ++k) types.push_back(body_types[s.consts + k]);
  for (size_t i = 0; i < s.xs; ++i) types.push_back(body_types[s.consts + s.carry + i]);
  for (size_t i : tx) types.push_back(body_types[s.consts + s.carry + i]);
  const size_t at_tk = s.consts, at_tc = at_tk + tk.size(), at_hist = at_tc + tc.size(), at_xs = at_hist + s.carry,
               at_tx = at_xs + s.xs;
  std::vector<size_t> bind;
  for (size_t i = 0; i < s.consts; ++i) bind.push_back(i);
  for (size_t k = 0; k < s.carry; ++k) bind.push_back(at_hist + k);
  for (size_t i = 0; i < s.xs; ++i) bind.push_back(at_xs + i);
  for (size_t j = 0; j < tk.size(); ++j) bind.push_back(at_tk + j);
  for (size_t j = 0; j < tc.size(); ++j) bind.push_back(at_tc + j);
  for (size_t j = 0; j < tx.size(); ++j) bind.push_back(at_tx + j);
  const size_t n_out = s.carry + s.ys;
  std::vector<size_t> outs;
  for (size_t k : tc) outs.push_back(n_out + k);
  for (size_t j : ty) outs.push_back(n_out + s.carry + j);
  // Effects ran in the primal scan; the tangent scan only recomputes values.
  ir::GraphPtr tangent_body = std::make_shared<const ir::Graph>(
      ir::recomputation_dce(ir::Graph(*ir::rebind_graph(*jvp_graph(body, flags), types, bind, outs))));
  Out t = c.add_multi(Op::scan, inputs, scan_attrs(tangent_body, s.consts + tk.size(), tc.size(), s.length, s.reverse));

  Out result(n_out, kZero);
  for (size_t j = 0; j < tc.size(); ++j) result[tc[j]] = t[j];
  for (size_t j = 0; j < ty.size(); ++j) result[s.carry + ty[j]] = t[tc.size() + j];
  return result;
}

// A scan linear in its carries and in some consts and xs runs backwards:
// carry cotangents flow from the last step to the first, the unknown
// consts' cotangents are summed over steps in extra carries, and the
// unknown xs' cotangents come out stacked. Each step transposes the body.
ir::IdList scan_transpose(TransposeCtx& c) {
  const ir::Graph& body = *graphs_attr(c.node(), "body").at(0);
  const ScanShape s = scan_shape(c.node(), c.operands.size(), body);
  // Every carry is linear in a scan that is transposed. One can still be
  // known: a tangent that starts as zeros (a constant) and becomes non-zero
  // in the loop. The body is transposed with it as linear all the same.
  std::vector<bool> unknown = c.unknown;
  for (size_t k = 0; k < s.carry; ++k) unknown[s.consts + k] = true;
  std::vector<size_t> kc, uc, kx, ux;  // known / unknown consts and xs
  for (size_t i = 0; i < s.consts; ++i) (unknown[i] ? uc : kc).push_back(i);
  for (size_t i = 0; i < s.xs; ++i) (unknown[s.consts + s.carry + i] ? ux : kx).push_back(i);

  // The transposed step takes (known consts, known xs, carry' cts, y cts) and
  // gives (unknown const cts, carry cts, unknown x cts).
  ir::GraphPtr step = transpose_graph(body, unknown);
  const Types body_types = body.input_types();
  const Types out_types = body.output_types();

  // The backward scan's body: (known consts | carry cts, const accumulators |
  // known xs, y cts) -> (carry cts, accumulators + const cts | unknown x cts).
  ir::GraphBuilder b;
  std::vector<ValueId> known_consts, carry_ct, acc, known_xs, y_ct;
  for (size_t i : kc) known_consts.push_back(b.input(body_types[i]));
  for (size_t k = 0; k < s.carry; ++k) carry_ct.push_back(b.input(out_types[k]));
  for (size_t i : uc) acc.push_back(b.input(body_types[i]));
  for (size_t i : kx) known_xs.push_back(b.input(body_types[s.consts + s.carry + i]));
  for (size_t j = 0; j < s.ys; ++j) y_ct.push_back(b.input(out_types[s.carry + j]));
  std::vector<ValueId> step_in = known_consts;
  step_in.insert(step_in.end(), known_xs.begin(), known_xs.end());
  step_in.insert(step_in.end(), carry_ct.begin(), carry_ct.end());
  step_in.insert(step_in.end(), y_ct.begin(), y_ct.end());
  std::vector<ValueId> step_out = ir::inline_graph(b, *step, step_in);
  std::vector<ValueId> outs(step_out.begin() + static_cast<long>(uc.size()),
                            step_out.begin() + static_cast<long>(uc.size() + s.carry));
  for (size_t j = 0; j < uc.size(); ++j) outs.push_back(b.add1(Op::add, {acc[j], step_out[j]}));
  outs.insert(outs.end(), step_out.begin() + static_cast<long>(uc.size() + s.carry), step_out.end());
  ir::GraphPtr back_body = b.finish(std::move(outs));

  std::vector<ValueId> inputs;
  for (size_t i : kc) inputs.push_back(c.operands[i]);
  for (size_t k = 0; k < s.carry; ++k) inputs.push_back(concrete(c, c.cotangents[k], out_types[k]));
  for (size_t i : uc) inputs.push_back(c.zeros(body_types[i]));
  for (size_t i : kx) inputs.push_back(c.operands[s.consts + s.carry + i]);
  for (size_t j = 0; j < s.ys; ++j)
    inputs.push_back(concrete(c, c.cotangents[s.carry + j], stacked(out_types[s.carry + j], s.length)));
  Out res = c.emit().add_multi(Op::scan, inputs,
                               scan_attrs(back_body, kc.size(), s.carry + uc.size(), s.length, s.reverse ? 0 : 1));

  std::vector<ValueId> result(c.operands.size(), kZero);
  for (size_t k = 0; k < s.carry; ++k)
    if (c.unknown[s.consts + k]) result[s.consts + k] = res[k];
  for (size_t j = 0; j < uc.size(); ++j) result[uc[j]] = res[s.carry + j];
  for (size_t j = 0; j < ux.size(); ++j) result[s.consts + s.carry + ux[j]] = res[s.carry + uc.size() + j];
  return result;
}

// scan(consts.., init.., xs..)
std::vector<BatchedValue> scan_batch(BatchCtx& c) {
  const ir::Graph& body = *graphs_attr(c.node(), "body").at(0);
  const ScanShape s = scan_shape(c.node(), c.operands.size(), body);
  const std::vector<int64_t> kdims = dims_of(c.operands, 0, s.consts);

  // xs: the slice's batch dim is the operand's less one; an operand batched
  // at 0 moves its batch axis to 1 first.
  std::vector<ValueId> xs;
  std::vector<int64_t> xdims;
  for (size_t i = 0; i < s.xs; ++i) {
    const size_t op = s.consts + s.carry + i;
    const int64_t d = c.operands[op].dim;
    if (d == kNotBatched) {
      xs.push_back(c.operands[op].value);
      xdims.push_back(kNotBatched);
    } else {
      xs.push_back(d == 0 ? c.at(op, 1) : c.operands[op].value);
      xdims.push_back(d == 0 ? 0 : d - 1);
    }
  }

  std::vector<bool> carry_b(s.carry);
  for (size_t k = 0; k < s.carry; ++k) carry_b[k] = c.operands[s.consts + k].dim != kNotBatched;
  std::vector<bool> r;
  for (bool changed = true; changed;) {
    changed = false;
    r = batched_outputs(body, concat_dims(concat_dims(kdims, zero_or_none(carry_b)), xdims), c.axis_size, c.axis_name);
    for (size_t k = 0; k < s.carry; ++k)
      if (r[k] && !carry_b[k]) changed = carry_b[k] = true;
  }
  const std::vector<int64_t> carry_dims = zero_or_none(carry_b);
  std::vector<bool> y_b(r.begin() + static_cast<long>(s.carry), r.end());
  const std::vector<int64_t> out_dims = concat_dims(carry_dims, zero_or_none(y_b));
  ir::GraphPtr new_body =
      vmap_graph(body, concat_dims(concat_dims(kdims, carry_dims), xdims), out_dims, c.axis_size, c.axis_name);

  std::vector<ValueId> inputs;
  for (size_t i = 0; i < s.consts; ++i) inputs.push_back(c.operands[i].value);
  for (size_t k = 0; k < s.carry; ++k)
    inputs.push_back(carry_b[k] ? c.at(s.consts + k, 0) : c.operands[s.consts + k].value);
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  Out res = c.add_multi(Op::scan, inputs, scan_attrs(new_body, s.consts, s.carry, s.length, s.reverse));
  Batched result;
  for (size_t k = 0; k < s.carry; ++k) result.push_back({res[k], carry_dims[k]});
  for (size_t j = 0; j < s.ys; ++j) result.push_back({res[s.carry + j], y_b[j] ? 1 : kNotBatched});
  return result;
}

}  // namespace graft::ops
