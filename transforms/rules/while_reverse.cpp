#include "transforms/rules/while_reverse.h"

#include <functional>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/inline.h"
#include "ir/passes.h"
#include "transforms/transpose.h"

namespace graft::transforms {

namespace {

using ir::Op;
using Types = std::vector<ir::ValueType>;

std::vector<ValueId> slice_of(const std::vector<ValueId>& v, size_t from, size_t count) {
  return std::vector<ValueId>(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(from + count));
}
std::vector<ValueId> joined(std::vector<ValueId> a, const std::vector<ValueId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const ir::Graph& subgraph(const ir::Node& n, const char* name) { return *ir::attr<ir::Graphs>(n, name).at(0); }

// Per value of g: whether it depends on a flagged input.
std::vector<bool> depends_on(const ir::Graph& g, const std::vector<bool>& flagged) {
  std::vector<bool> d(g.value_id_bound(), false);
  for (size_t i = 0; i < g.inputs().size(); ++i) d[g.inputs()[i]] = flagged[i];
  for (const ir::Node& n : g.nodes()) {
    bool any = false;
    for (ValueId v : n.inputs) any = any || d[v];
    for (ValueId v : n.outputs) d[v] = any;
  }
  return d;
}

// g over the kept inputs only, returning the outputs `outputs` (indices);
// null when one of them needs a dropped input.
ir::GraphPtr restricted(const ir::Graph& g, const std::vector<bool>& keep, const std::vector<size_t>& outputs) {
  std::vector<bool> dropped(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) dropped[i] = !keep[i];
  const std::vector<bool> d = depends_on(g, dropped);
  for (size_t k : outputs)
    if (d[g.outputs()[k]]) return nullptr;
  ir::GraphBuilder b;
  std::vector<ValueId> map(g.value_id_bound(), -1);
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) map[g.inputs()[i]] = b.input(g.type(g.inputs()[i]));
  for (const ir::Node& n : g.nodes()) {
    bool skip = false;  // a node reading a dropped input (directly or not) is left out
    ir::IdList ins;
    for (ValueId v : n.inputs) {
      skip = skip || map[v] < 0;
      ins.push_back(map[v]);
    }
    if (skip) continue;
    ir::IdList outs = b.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  std::vector<ValueId> outs;
  for (size_t k : outputs) outs.push_back(map[g.outputs()[k]]);
  return b.finish(std::move(outs));
}

// Whether output `out` of g reads input `in` (directly or not).
bool reads(const ir::Graph& g, size_t in, size_t out) {
  std::vector<bool> flagged(g.inputs().size(), false);
  flagged[in] = true;
  return depends_on(g, flagged)[g.outputs()[out]];
}

// The graphs the reverse sweep runs, cut from the loop's condition and body.
struct Parts {
  ir::GraphPtr cond;                 // (cond consts, known carries) -> pred
  ir::GraphPtr step;                 // (known body consts, known carries) -> known carries'
  ir::GraphPtr replay;               // step without its effects (io_callbacks ran once, in the forward pass)
  ir::GraphPtr reverse;              // (known body consts, known carries, cotangents of unknown carries') ->
                                     //   (cotangents of unknown body consts, of unknown carries)
  std::vector<size_t> kb, ub, p, t;  // known/unknown body consts, known/unknown carries
};

// with_reverse: also the graphs only the backward pass needs (replay, reverse).
Parts parts_of(const ir::Node& n, const WhileSplit& s, bool with_reverse) {
  Parts parts;
  for (size_t i = 0; i < s.body_consts; ++i) (s.body_const_known[i] ? parts.kb : parts.ub).push_back(i);
  for (size_t k = 0; k < s.carries; ++k) (s.carry_known[k] ? parts.p : parts.t).push_back(k);
  const ir::Graph& cond = subgraph(n, "cond");
  const ir::Graph& body = subgraph(n, "body");
  std::vector<bool> cond_keep(s.cond_consts, true);
  for (size_t k = 0; k < s.carries; ++k) cond_keep.push_back(s.carry_known[k]);
  parts.cond = restricted(cond, cond_keep, {0});
  std::vector<bool> body_keep = s.body_const_known;
  body_keep.insert(body_keep.end(), s.carry_known.begin(), s.carry_known.end());
  parts.step = restricted(body, body_keep, parts.p);
  if (!parts.cond || !parts.step) throw Error("while: the known part of the loop reads an unknown value");
  if (!with_reverse) return parts;
  parts.replay = std::make_shared<const ir::Graph>(ir::recomputation_dce(ir::Graph(*parts.step)));
  // The tangent step over (kb, p, ub, t) -> t', transposed in (ub, t).
  const Types in = body.input_types();
  Types order;
  std::vector<size_t> bind(in.size());
  auto place = [&](size_t body_input) {
    bind[body_input] = order.size();
    order.push_back(in[body_input]);
  };
  for (size_t i : parts.kb) place(i);
  for (size_t k : parts.p) place(s.body_consts + k);
  for (size_t i : parts.ub) place(i);
  for (size_t k : parts.t) place(s.body_consts + k);
  ir::GraphPtr tangent_step = ir::rebind_graph(body, order, bind, parts.t);
  std::vector<bool> unknown(order.size(), false);
  for (size_t j = parts.kb.size() + parts.p.size(); j < order.size(); ++j) unknown[j] = true;
  // Its primal part is recomputed per step: effects stay with the forward pass.
  parts.reverse =
      std::make_shared<const ir::Graph>(ir::recomputation_dce(ir::Graph(*transpose_graph(*tangent_step, unknown))));
  return parts;
}

using CondFn = std::function<ValueId(ir::GraphBuilder&, const std::vector<ValueId>&, const std::vector<ValueId>&)>;
using BodyFn =
    std::function<std::vector<ValueId>(ir::GraphBuilder&, const std::vector<ValueId>&, const std::vector<ValueId>&)>;

// A while node in b over `init`, its condition and body reading `consts`
// (its own reverse mode, for a second derivative, keeps `checkpoints` carries).
std::vector<ValueId> emit_loop(ir::GraphBuilder& b, int64_t checkpoints, const std::vector<ValueId>& consts,
                               const std::vector<ValueId>& init, const CondFn& cond, const BodyFn& body) {
  Types const_types, carry_types;
  for (ValueId v : consts) const_types.push_back(b.type(v));
  for (ValueId v : init) carry_types.push_back(b.type(v));
  auto graph = [&](bool is_cond) {
    ir::GraphBuilder g;
    std::vector<ValueId> cs, xs;
    for (const ir::ValueType& t : const_types) cs.push_back(g.input(t));
    for (const ir::ValueType& t : carry_types) xs.push_back(g.input(t));
    std::vector<ValueId> outs = is_cond ? std::vector<ValueId>{cond(g, cs, xs)} : body(g, cs, xs);
    return g.finish(std::move(outs));
  };
  ir::GraphPtr cond_graph = graph(true), body_graph = graph(false);
  std::vector<ValueId> operands = consts;
  operands.insert(operands.end(), consts.begin(), consts.end());
  operands.insert(operands.end(), init.begin(), init.end());
  const auto nc = static_cast<int64_t>(consts.size());
  ir::IdList out = b.add(Op::while_loop, ir::IdList(operands),
                         {{"cond", ir::Graphs{cond_graph}},
                          {"body", ir::Graphs{body_graph}},
                          {"cond_nconsts", nc},
                          {"body_nconsts", nc},
                          {"checkpoints", checkpoints}});
  return std::vector<ValueId>(out.begin(), out.end());
}

using BranchFn = std::function<std::vector<ValueId>(ir::GraphBuilder&, const std::vector<ValueId>&)>;

// A cond node in b: when_true(args) where pred holds, else when_false(args).
std::vector<ValueId> emit_cond(ir::GraphBuilder& b, ValueId pred, const std::vector<ValueId>& args,
                               const BranchFn& when_false, const BranchFn& when_true) {
  Types arg_types;
  for (ValueId v : args) arg_types.push_back(b.type(v));
  ir::Graphs branches;
  for (const BranchFn* f : {&when_false, &when_true}) {
    ir::GraphBuilder g;
    std::vector<ValueId> as;
    for (const ir::ValueType& t : arg_types) as.push_back(g.input(t));
    branches.push_back(g.finish((*f)(g, as)));
  }
  ir::IdList out = b.add(Op::cond, joined({pred}, args), {{"branches", std::move(branches)}});
  return std::vector<ValueId>(out.begin(), out.end());
}

// Integer scalars (i64) and the slots of a checkpoint buffer [K, shape...].
ValueId i64(ir::GraphBuilder& b, int64_t v) { return emit_full(b, static_cast<double>(v), {DType::i64, {}}); }
ValueId op2(ir::GraphBuilder& b, Op op, ValueId x, ValueId y) { return b.add1(op, {x, y}); }

ValueId slot_read(ir::GraphBuilder& b, ValueId buf, ValueId index) {
  const ir::ValueType t = b.type(buf);
  ir::IdList ins{buf, index};
  ir::Ints sizes{1};
  for (size_t d = 1; d < t.shape.size(); ++d) {
    ins.push_back(i64(b, 0));
    sizes.push_back(t.shape[d]);
  }
  ValueId slice = b.add1(Op::dynamic_slice, std::move(ins), {{"slice_sizes", sizes}});
  return b.add1(Op::reshape, {slice}, {{"new_sizes", ir::Ints(t.shape.begin() + 1, t.shape.end())}});
}

ValueId slot_write(ir::GraphBuilder& b, ValueId buf, ValueId index, ValueId v) {
  const ir::ValueType t = b.type(buf);
  ir::Ints one{1};
  one.insert(one.end(), t.shape.begin() + 1, t.shape.end());
  ValueId update = b.add1(Op::reshape, {v}, {{"new_sizes", one}});
  ir::IdList ins{buf, update, index};
  for (size_t d = 1; d < t.shape.size(); ++d) ins.push_back(i64(b, 0));
  return b.add1(Op::dynamic_update_slice, std::move(ins));
}

// Slot `index` of buf set to v where `store`; else v goes to the buffer's
// last slot, one past the K kept ones, which is never read (cheaper than
// reading the slot back to select it).
ValueId slot_keep(ir::GraphBuilder& b, ValueId buf, ValueId index, ValueId store, ValueId v) {
  const int64_t spare = b.type(buf).shape[0] - 1;
  return slot_write(b, buf, b.add1(Op::select, {store, index, i64(b, spare)}), v);
}

// How many steps the sweep advances from a slot holding the carry entering
// step p, to reverse the l steps p..end with `free` slots above it: l - 1
// (reverse step end, not stored) when l = 1 or no slot is free; else the
// binomial schedule's split (Griewank and Walther's revolve). With
// B(c, r) = C(c + r + 1, c + 1), the most steps c free slots reverse when
// no step runs forward more than r times, and r the least with B(c, r) >= l,
// storing the carry entering step p + m for any m in
// [max(B(c, r - 2), l - B(c - 1, r)), min(B(c, r - 1), l - B(c - 1, r - 1))]
// reverses the l steps with the fewest forward steps (checked against dynamic
// programming by the tests); the smallest such m is taken.
ValueId revolve_advance(ir::GraphBuilder& b, int64_t checkpoints, ValueId l, ValueId free) {
  const ValueId one = i64(b, 1), c = op2(b, Op::max, free, one);
  // (r, B(c, r), B(c, r - 1), B(c, r - 2)) from (0, 1, 0, 0): B(c, r + 1) = B(c, r) (c + r + 2) / (r + 1).
  std::vector<ValueId> bs = emit_loop(
      b, checkpoints, {c, l}, {i64(b, 0), one, i64(b, 0), i64(b, 0)},
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& cs, const std::vector<ValueId>& xs) {
        return op2(g, Op::lt, xs[1], cs[1]);
      },
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& cs, const std::vector<ValueId>& xs) {
        const ValueId r1 = op2(g, Op::add, xs[0], i64(g, 1));
        const ValueId grown = op2(g, Op::mul, xs[1], op2(g, Op::add, cs[0], op2(g, Op::add, r1, i64(g, 1))));
        return std::vector<ValueId>{r1, op2(g, Op::div, grown, r1), xs[1], xs[2]};
      });
  // B(c - 1, r) = B(c, r) - B(c, r - 1) (Pascal's rule).
  const ValueId right = op2(b, Op::sub, bs[1], bs[2]);
  const ValueId last = op2(b, Op::sub, l, one);
  ValueId m = op2(b, Op::max, op2(b, Op::max, one, bs[3]), op2(b, Op::sub, l, right));
  m = op2(b, Op::min, m, last);
  return b.add1(Op::select, {op2(b, Op::le, free, i64(b, 0)), last, op2(b, Op::max, m, i64(b, 0))});
}

}  // namespace

std::optional<WhileSplit> split_while(const ir::Node& n, const std::vector<bool>& operand_unknown) {
  if (n.op != Op::while_loop) return std::nullopt;
  WhileSplit s;
  s.cond_consts = static_cast<size_t>(ir::attr<int64_t>(n, "cond_nconsts"));
  s.body_consts = static_cast<size_t>(ir::attr<int64_t>(n, "body_nconsts"));
  s.carries = operand_unknown.size() - s.cond_consts - s.body_consts;
  for (size_t i = 0; i < s.cond_consts; ++i)
    if (operand_unknown[i]) return std::nullopt;
  const ir::Graph& body = subgraph(n, "body");
  std::vector<bool> flagged(operand_unknown.begin() + static_cast<long>(s.cond_consts), operand_unknown.end());
  // Unknown carries: those given unknown values, and those the body computes from unknown ones (a fixed point).
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<bool> d = depends_on(body, flagged);
    for (size_t k = 0; k < s.carries; ++k)
      if (d[body.outputs()[k]] && !flagged[s.body_consts + k]) changed = flagged[s.body_consts + k] = true;
  }
  for (size_t i = 0; i < s.body_consts; ++i) s.body_const_known.push_back(!flagged[i]);
  bool any_unknown = false;
  for (size_t k = 0; k < s.carries; ++k) {
    s.carry_known.push_back(!flagged[s.body_consts + k]);
    any_unknown = any_unknown || flagged[s.body_consts + k];
  }
  if (!any_unknown) return std::nullopt;
  const ir::Graph& cond = subgraph(n, "cond");
  std::vector<bool> cond_flags(s.cond_consts, false);
  for (size_t k = 0; k < s.carries; ++k) cond_flags.push_back(!s.carry_known[k]);
  if (depends_on(cond, cond_flags)[cond.outputs()[0]]) return std::nullopt;
  return s;
}

std::vector<ValueId> emit_known_while(ir::GraphBuilder& b, const ir::Node& n, const WhileSplit& s,
                                      const std::vector<ValueId>& operands) {
  const Parts parts = parts_of(n, s, false);
  std::vector<ValueId> ins(operands.begin(), operands.begin() + static_cast<long>(s.cond_consts));
  for (size_t i : parts.kb) ins.push_back(operands[s.cond_consts + i]);
  for (size_t k : parts.p) ins.push_back(operands[s.cond_consts + s.body_consts + k]);
  ir::IdList out = b.add(Op::while_loop, ir::IdList(ins),
                         {{"cond", ir::Graphs{parts.cond}},
                          {"body", ir::Graphs{parts.step}},
                          {"cond_nconsts", static_cast<int64_t>(s.cond_consts)},
                          {"body_nconsts", static_cast<int64_t>(parts.kb.size())},
                          {"checkpoints", ir::attr<int64_t>(n, "checkpoints")}},
                         n.loc, n.scope);
  return std::vector<ValueId>(out.begin(), out.end());
}

std::vector<ValueId> emit_while_reverse(ir::GraphBuilder& b, const ir::Node& n, const WhileSplit& s,
                                        const std::vector<ValueId>& operands, const std::vector<bool>& operand_unknown,
                                        const std::vector<ValueId>& cotangents) {
  const Parts parts = parts_of(n, s, true);
  const int64_t checkpoints = ir::attr<int64_t>(n, "checkpoints");
  const size_t cn = s.cond_consts, bn = s.body_consts;
  const size_t nkb = parts.kb.size(), np = parts.p.size(), nub = parts.ub.size(), nt = parts.t.size();
  std::vector<ValueId> cconsts(operands.begin(), operands.begin() + static_cast<long>(cn)), kb, p0;
  for (size_t i : parts.kb) kb.push_back(operands[cn + i]);
  for (size_t k : parts.p) p0.push_back(operands[cn + bn + k]);
  const Types body_in = subgraph(n, "body").input_types();
  auto step = [&](ir::GraphBuilder& g, const std::vector<ValueId>& kbv, const std::vector<ValueId>& p) {
    return ir::inline_graph(g, *parts.replay, joined(kbv, p));
  };

  // 1. The trip count N: a loop over the carries the condition needs (those
  // it reads, and those their steps read, a fixed point), carries (i, q...):
  // a condition reading a counter alone (a run-time trip count) counts
  // without the rest of the step.
  std::vector<bool> needed(np, false);
  for (size_t k = 0; k < np; ++k) needed[k] = reads(*parts.cond, cn + k, 0);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t k = 0; k < np; ++k)
      for (size_t j = 0; j < np && needed[k]; ++j)
        if (!needed[j] && reads(*parts.replay, nkb + j, k)) grew = needed[j] = true;
  }
  std::vector<size_t> q;  // the needed carries, as indices into p
  std::vector<ValueId> q0;
  for (size_t k = 0; k < np; ++k)
    if (needed[k]) q.push_back(k), q0.push_back(p0[k]);
  std::vector<bool> cond_keep(cn, true), step_keep(nkb, true);
  cond_keep.insert(cond_keep.end(), needed.begin(), needed.end());
  step_keep.insert(step_keep.end(), needed.begin(), needed.end());
  const ir::GraphPtr count_cond = restricted(*parts.cond, cond_keep, {0}),
                     count_step = restricted(*parts.replay, step_keep, q);
  if (!count_cond || !count_step) throw Error("while: the trip count's carries read a carry they do not keep");
  const size_t nq = q.size();
  std::vector<ValueId> counted = emit_loop(
      b, checkpoints, joined(cconsts, kb), joined({i64(b, 0)}, q0),
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& cs, const std::vector<ValueId>& xs) {
        return ir::inline_graph(g, *count_cond, joined(slice_of(cs, 0, cn), slice_of(xs, 1, nq)))[0];
      },
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& cs, const std::vector<ValueId>& xs) {
        return joined({op2(g, Op::add, xs[0], i64(g, 1))},
                      ir::inline_graph(g, *count_step, joined(slice_of(cs, cn, nkb), slice_of(xs, 1, nq))));
      });
  const ValueId N = counted[0];

  // 2. The sweep: carries (top, end, pos, slots..., ct_t..., ct_ub...).
  // Slot j < C holds the carry entering step pos[j]; slots 0..top are the
  // stack; slot C takes the writes not kept. `end` is the step to reverse next.
  std::vector<ValueId> slots;
  for (size_t k = 0; k < np; ++k) {
    ir::ValueType t = body_in[bn + parts.p[k]];
    t.shape.insert(t.shape.begin(), checkpoints + 1);
    slots.push_back(slot_write(b, emit_full(b, 0.0, t), i64(b, 0), p0[k]));
  }
  const ValueId pos = emit_full(b, 0.0, {DType::i64, {checkpoints + 1}});
  std::vector<ValueId> ct_t, ct_ub;
  const ir::Graph& body = subgraph(n, "body");
  for (size_t j = 0; j < nt; ++j) {
    const ValueId ct = cotangents[parts.t[j]];
    ct_t.push_back(ct != kZero ? ct : emit_full(b, 0.0, body.type(body.outputs()[parts.t[j]])));
  }
  for (size_t i : parts.ub) ct_ub.push_back(emit_full(b, 0.0, body_in[i]));
  const std::vector<ValueId> init =
      joined(joined(joined({i64(b, 0), op2(b, Op::sub, N, i64(b, 1)), pos}, slots), ct_t), ct_ub);
  std::vector<ValueId> swept = emit_loop(
      b, checkpoints, kb, init,
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& cs, const std::vector<ValueId>& xs) {
        (void)cs;
        return op2(g, Op::ge, xs[1], i64(g, 0));
      },
      [&](ir::GraphBuilder& g, const std::vector<ValueId>& kbv, const std::vector<ValueId>& xs) {
        const ValueId top = xs[0], end = xs[1], one = i64(g, 1), zero = i64(g, 0);
        const ValueId p = slot_read(g, xs[2], top);
        std::vector<ValueId> x;
        for (size_t k = 0; k < np; ++k) x.push_back(slot_read(g, xs[3 + k], top));
        const ValueId l = op2(g, Op::add, op2(g, Op::sub, end, p), one);
        const ValueId m = revolve_advance(g, checkpoints, l, op2(g, Op::sub, i64(g, checkpoints - 1), top));
        // The carry entering step p + m: step end's when reversing.
        std::vector<ValueId> y = emit_loop(
            g, checkpoints, joined(kbv, {m}), joined({zero}, x),
            [&](ir::GraphBuilder& h, const std::vector<ValueId>& ds, const std::vector<ValueId>& ys) {
              return op2(h, Op::lt, ys[0], ds[nkb]);
            },
            [&](ir::GraphBuilder& h, const std::vector<ValueId>& ds, const std::vector<ValueId>& ys) {
              return joined({op2(h, Op::add, ys[0], i64(h, 1))}, step(h, slice_of(ds, 0, nkb), slice_of(ys, 1, np)));
            });
        y.erase(y.begin());
        const ValueId reversing = op2(g, Op::eq, m, op2(g, Op::sub, l, one));
        // Step end reversed when reversing: (cotangents of the unknown carries, of the unknown body consts).
        std::vector<ValueId> cts = emit_cond(
            g, reversing, joined(joined(joined(kbv, y), slice_of(xs, 3 + np, nt)), slice_of(xs, 3 + np + nt, nub)),
            [&](ir::GraphBuilder&, const std::vector<ValueId>& as) {
              return joined(slice_of(as, nkb + np, nt), slice_of(as, nkb + np + nt, nub));
            },
            [&](ir::GraphBuilder& h, const std::vector<ValueId>& as) {
              std::vector<ValueId> r = ir::inline_graph(h, *parts.reverse, slice_of(as, 0, nkb + np + nt));
              std::vector<ValueId> out = slice_of(r, nub, nt);
              for (size_t j = 0; j < nub; ++j) out.push_back(op2(h, Op::add, as[nkb + np + nt + j], r[j]));
              return out;
            });
        // Reversing pops the slot once its step is reversed (m = 0); advancing pushes y.
        const ValueId popped = op2(g, Op::max, op2(g, Op::sub, top, one), zero);
        const ValueId push = g.add1(Op::bitwise_not, {reversing});
        const ValueId next = op2(g, Op::add, top, one);
        std::vector<ValueId> out{
            g.add1(Op::select, {reversing, g.add1(Op::select, {op2(g, Op::eq, m, zero), popped, top}), next}),
            g.add1(Op::select, {reversing, op2(g, Op::sub, end, one), end}),
            slot_keep(g, xs[2], next, push, op2(g, Op::add, p, m))};
        for (size_t k = 0; k < np; ++k) out.push_back(slot_keep(g, xs[3 + k], next, push, y[k]));
        out.insert(out.end(), cts.begin(), cts.end());
        return out;
      });
  swept.erase(swept.begin(), swept.begin() + 3 + static_cast<long>(np));

  std::vector<ValueId> result(operands.size(), kZero);
  for (size_t j = 0; j < nt; ++j)
    if (operand_unknown[cn + bn + parts.t[j]]) result[cn + bn + parts.t[j]] = swept[j];
  for (size_t j = 0; j < nub; ++j)
    if (operand_unknown[cn + parts.ub[j]]) result[cn + parts.ub[j]] = swept[nt + j];
  return result;
}

}  // namespace graft::transforms
