// The interpreter's kernel for `fusion`: a tiled evaluator.
//
// A fused body (transforms/fusion.h) holds elementwise ops, broadcasts,
// reshapes and trailing reductions over one iteration space of N elements
// (its linear, row-major index). Its plan (ir/fused_plan.h, shared with the
// CPU code generator) says what each value is: uniform, view, full or
// reduced. Rather than computing each body op over all N elements (N-sized
// temporaries, each read back from memory), the evaluator walks the body once
// per tile of the space (kTile elements), with small per-thread scratch
// buffers that stay in cache and are reused tile after tile:
//   - a contiguous view of N elements (an operand of N elements) is read in
//     place (a pointer at the tile);
//   - a uniform is its scalar: ops on uniforms run once, when the plan is
//     built, and a uniform an op reads as an array is filled once per thread;
//   - any other view of N elements (a broadcast of a smaller operand) is
//     gathered per tile from the operand's strides (a copy or a fill along
//     the innermost run);
//   - a reshape, or a broadcast that adds only unit axes, of a computed value
//     is that value (the linear index does not change);
//   - each elementwise op runs the interpreter's own elementwise kernel on
//     the tile (so fused results equal unfused ones bit for bit), writing
//     into scratch, or straight into the output buffer when the value is a
//     kernel output;
//   - a reduction folds the tile into accumulators. The reduced operand,
//     with unit axes dropped and neighbouring axes merged, is [O, R, I]
//     (outer kept, reduced, inner kept). Tiles are aligned to it: whole
//     rows when I = 1, rows of I (or a piece of one) otherwise. Each work
//     item covers at most kBlock elements of one output slice, folding in
//     the same order as the unfused kernel; when a slice spans several work
//     items their partial results are combined in work-item order. Float
//     sums add in sum_order.h's order (a work item's rows or columns are a
//     subtree of the slice's sum), so they equal the unfused kernel's bit for
//     bit. Work item boundaries depend only on the shapes, so results never
//     depend on the number of threads. Other reductions (reduced axes not contiguous) materialise
//     their operand and run the reduce kernel.
// Tiles or work items run in parallel on OpenMP threads. A body the tiled
// path cannot handle runs through interpreter::evaluate instead.
//
// An output that shares memory with an operand (a donated buffer) is written
// at the end of each tile, after every read of the tile's operands, when the
// operand has its size (each tile reads only its own range of it); any other
// overlap is computed into a temporary copied out at the end. So a fusion
// node may write an output over a dying operand of the same shape.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>

#include "interpreter/evaluate.h"
#include "interpreter/kernels/fusion_gather.h"
#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/ordered_sum.h"
#include "interpreter/kernels/reduce_step.h"
#include "ir/attr_access.h"
#include "ir/fused_plan.h"
#include "ir/graph.h"
#include "ir/literal.h"

namespace graft::interpreter {
namespace {

using ir::Op;
using ir::ValueId;

// Elements per tile: a few scratch buffers of 8-16 KB stay in L1/L2. 2048
// rather than 4096 since the f32 math got twice as fast: the sin chain of
// bench/fusion 9.4-10.0 -> 8.4-8.6 ms, the 8-op chain 10.4-11.0 -> 10.3-10.5.
constexpr int64_t kTile = 2048;
constexpr int64_t kBlock = kRowPiece;   // elements one reduction work item covers at most (a row piece: a subtree of a float sum)
constexpr size_t kMaxElemBytes = 8;

using ir::is_reduction;  // from ops.def
using tiled::fill_uniform;
using tiled::Gather;
using tiled::make_gather;

// ---- the evaluator's plan: the body's plan (ir/fused_plan.h) plus where
// each value lives per tile and the steps a tile runs

// Where the elements of a value live per tile: not at all (a uniform, read as
// its scalar or a filled array; a view of another size; a reduced value),
// in a buffer the body reads (a contiguous view of N elements), in a
// per-thread scratch slot, or in an output buffer.
enum class Where : uint8_t { none, direct, slot, output };

struct Storage {
  Where where = Where::none;
  const uint8_t* base = nullptr;  // direct: the buffer
  int index = -1;                 // slot or output number
  // uniforms whose step computes their scalar (every uniform reads its scalar's)
  uint64_t bits = 0;              // the element, in the low bytes
  int array = -1;                 // per-thread filled array, when a step reads it as an array
};

struct Reduction {
  Op op;
  DType dtype;
  const ir::Attrs* attrs;
  const ir::ValueType* in_type;  // the reduced operand's type
  std::vector<int> outputs;      // body output numbers holding the result
};

struct Step {
  enum Type : uint8_t { kernel, gather, fold } type;
  Kernel fn = nullptr;
  Op op = Op::add;
  const ir::Attrs* attrs = nullptr;
  std::vector<int> ins;          // values of the plan (uniforms: their scalar's)
  int out = -1;                  // the value it computes
  int index = -1;                // gather or reduction number
};

// The reductions' geometry: their groups as [O, R, I] (outer kept, reduced,
// inner kept), or general.
struct Geometry {
  bool general = false;
  int64_t outer = 1, reduced = 1, inner = 1;
};

Geometry geometry_of(const std::vector<ir::ReductionGroup>& groups) {
  ir::OuterReducedInner ori;
  Geometry g;
  g.general = !ir::outer_reduced_inner(groups, &ori);
  g.outer = ori.outer;
  g.reduced = ori.reduced;
  g.inner = ori.inner;
  return g;
}

class Plan {
 public:
  // Builds the plan; false when the tiled path cannot run this body.
  bool build(const ir::Graph& body, const KernelCall& call);
  void run() const;

 private:
  struct Thread;
  Storage& store(int v) { return store_[static_cast<size_t>(v)]; }
  const Storage& store(int v) const { return store_[static_cast<size_t>(v)]; }
  bool uniform(int v) const { return fp_.value(v).cls == ir::ValueClass::uniform; }
  bool add_step(const ir::Graph& body, const ir::FusedStep& st, const KernelCall& call);
  bool materialise(int v, const KernelCall& call);
  int read_as_array(int v);
  void assign_storage();
  void* locate(const Thread& t, int v, int64_t lo) const;
  template <class Fold>
  void run_tile(Thread& t, int64_t lo, int64_t len, Fold&& fold) const;
  void finish_tile(Thread& t, int64_t lo, int64_t len) const;
  void prefetch_next_tile(int64_t lo, int64_t len, size_t part, size_t parts) const;
  void finish_output(Thread& t, size_t k, int64_t lo, int64_t len) const;

  ir::FusedPlan fp_;
  int64_t n_ = 0;                  // the iteration space
  std::vector<Storage> store_;     // by plan value
  // Buffers read or written at the tile's own range (direct operands, outputs
  // of N elements): the next tile's part of them is prefetched (run_tile).
  struct Stream {
    const uint8_t* base;
    size_t size;
  };
  std::vector<Stream> streams_;
  std::vector<Step> steps_;
  std::vector<Gather> gathers_;
  std::vector<Reduction> reductions_;
  Geometry geometry_;
  int slots_ = 0, arrays_ = 0;
  std::vector<uint8_t*> out_data_;
  std::vector<const ir::ValueType*> out_types_;
  std::vector<int> out_values_;    // per output: its value
  std::vector<bool> tile_end_;     // per output: shares an operand's memory, written at the end of each tile
  std::vector<std::tuple<runtime::BufferPtr, uint8_t*, size_t>> temps_;  // outputs computed aside: (temp, output, bytes)
};

struct Plan::Thread {
  std::unique_ptr<uint64_t[]> scratch;  // slots, then uniform arrays, then accumulators
  std::vector<uint8_t*> slot, array;
  uint8_t* acc = nullptr;               // reductions' accumulators, kTile elements each
  std::vector<KernelCall> calls;        // one per kernel step (unused entries for others)
  std::vector<StreamedSum> sums;        // per reduction: a float sum's work item (ordered_sum.h)
  ir::ValueType tile_type[ir::kNumDTypes];
  int64_t len = -1;
};

int64_t count_of(const ir::ValueType& t) { return t.num_elements(); }

bool Plan::build(const ir::Graph& body, const KernelCall& call) {
  fp_ = ir::plan_fused_body(body);
  // One iteration space: what every elementwise op, broadcast and reshape
  // makes, and what every reduction reads.
  if (!fp_.refused.empty() || !fp_.single_space || fp_.N <= 0) return false;
  for (const ir::FusedValue& v : fp_.values)  // a uniform's scalar is 8 bytes (Storage::bits): not a c128
    if (ir::dtype_size(v.dtype) > kMaxElemBytes) return false;
  n_ = fp_.N;
  store_.assign(fp_.values.size(), Storage{});
  for (const ir::FusedStep& st : fp_.steps)
    if (!add_step(body, st, call)) return false;
  const size_t num_outputs = body.outputs().size();
  for (size_t k = 0; k < num_outputs; ++k) {
    out_data_.push_back(static_cast<uint8_t*>(call.outputs[k].data));
    out_types_.push_back(call.outputs[k].type);
    const ir::FusedOutput& o = fp_.outputs[k];
    out_values_.push_back(o.value);
    // Every output but a reduction's result has the space's N elements.
    const bool n_elements = o.store == ir::OutputStore::loop || (o.store == ir::OutputStore::scalar && n_ == 1);
    if (o.store != ir::OutputStore::reduction && !n_elements) return false;
    if (o.store != ir::OutputStore::reduction && !uniform(o.value) && !materialise(o.value, call)) return false;
  }
  for (const ir::FusedReduction& r : fp_.reductions) {
    Reduction& red = reductions_[static_cast<size_t>(&r - fp_.reductions.data())];
    for (size_t k : r.outputs) red.outputs.push_back(static_cast<int>(k));
    if (red.outputs.empty()) return false;  // a reduction nobody reads: not from the fusion pass
  }
  // Outputs sharing memory with an operand (a donated buffer). An output
  // over an operand of its own size and element size, read only at the
  // tile's own range, is written at the end of each tile, after every read
  // of that range; any other overlap goes through a temporary copied out at the end.
  tile_end_.assign(num_outputs, false);
  for (size_t k = 0; k < call.outputs.size(); ++k) {
    auto* o = static_cast<uint8_t*>(call.outputs[k].data);
    const size_t ob = static_cast<size_t>(count_of(*call.outputs[k].type)) * ir::dtype_size(call.outputs[k].type->dtype);
    bool temp = false;
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const auto* in = static_cast<const uint8_t*>(call.inputs[i].data);
      const size_t ib = static_cast<size_t>(count_of(*call.inputs[i].type)) * ir::dtype_size(call.inputs[i].type->dtype);
      if (!ob || !ib || !(o < in + ib && in < o + ob)) continue;
      // An output that is a view of an operand (or literal) would be copied
      // at the end of the tile from memory another tile-end write may have
      // overwritten: it goes through a temporary instead.
      const Where where = store(out_values_[k]).where;
      const bool computed = where == Where::slot || where == Where::output;
      const bool read_in_place = fp_.of(body.inputs()[i]).count == n_;  // each tile reads its own range
      const bool same_range = in == o && ib == ob && read_in_place && computed &&
                              ir::dtype_size(call.inputs[i].type->dtype) == ir::dtype_size(call.outputs[k].type->dtype);
      if (same_range) tile_end_[k] = true;
      else temp = true;
    }
    if (temp) {
      temps_.emplace_back(runtime::make_buffer(ob), o, ob);
      out_data_[k] = static_cast<uint8_t*>(std::get<0>(temps_.back())->data());
      tile_end_[k] = false;
    }
  }
  for (size_t k = 0; k < num_outputs; ++k)
    if (fp_.value(out_values_[k]).cls == ir::ValueClass::full)
      streams_.push_back({out_data_[k], ir::dtype_size(fp_.value(out_values_[k]).dtype)});
  // One reduction geometry for the whole body.
  for (size_t q = 0; q < fp_.reductions.size(); ++q) {
    const Geometry g = geometry_of(fp_.reductions[q].groups);
    if (q == 0) geometry_ = g;
    else if (g.general != geometry_.general || g.outer != geometry_.outer || g.reduced != geometry_.reduced ||
             g.inner != geometry_.inner)
      return false;
  }
  assign_storage();
  return true;
}

// A uniform's scalar, which a step reads as an array: filled once per thread.
int Plan::read_as_array(int v) {
  const int s = fp_.value(v).scalar;
  if (store(s).array < 0) store(s).array = arrays_++;
  return s;
}

// Gives a view or full value its elements per tile: a full value is computed
// into a slot or output (assign_storage); a view of N elements is read in
// place when contiguous, else gathered by a step here.
bool Plan::materialise(int v, const KernelCall& call) {
  Storage& s = store(v);
  if (s.where != Where::none) return true;
  const ir::FusedValue& x = fp_.value(v);
  if (x.cls == ir::ValueClass::full) {
    s.where = Where::slot;
    return true;
  }
  if (x.cls != ir::ValueClass::view || x.count != n_) return false;
  const auto* buffer = x.input >= 0 ? static_cast<const uint8_t*>(call.inputs[static_cast<size_t>(x.input)].data)
                                    : ir::attr<ir::LiteralPtr>(*x.constant, "value")->bytes.data();
  if (ir::contiguous(x)) {
    s.where = Where::direct;
    s.base = buffer;
    streams_.push_back({buffer, ir::dtype_size(x.dtype)});
    return true;
  }
  s.where = Where::slot;
  gathers_.push_back(make_gather(x, buffer));
  static const ir::Attrs kNoAttrs;
  steps_.push_back(Step{Step::gather, nullptr, Op::broadcast_in_dim, &kNoAttrs, {}, v, static_cast<int>(gathers_.size() - 1)});
  return true;
}

bool Plan::add_step(const ir::Graph& body, const ir::FusedStep& st, const KernelCall& call) {
  switch (st.what) {
    case ir::FusedStep::input: {
      const auto& in = call.inputs[static_cast<size_t>(st.input_index)];
      std::memcpy(&store(st.out).bits, in.data, ir::dtype_size(in.type->dtype));
      return true;
    }
    case ir::FusedStep::constant: {
      const ir::Literal& lit = *ir::attr<ir::LiteralPtr>(*st.node, "value");
      std::memcpy(&store(st.out).bits, lit.bytes.data(), ir::dtype_size(lit.type.dtype));
      return true;
    }
    case ir::FusedStep::reduction: {
      const ir::Node& node = *st.node;
      const int x = st.in[0];
      // A half's reduction accumulates in f32 and a complex one sums its parts
      // (the reduce kernel widens or views its operand): the body runs node by node instead.
      if (ir::is_half(fp_.value(x).dtype) || ir::is_complex(fp_.value(x).dtype)) return false;
      const int home = uniform(x) ? read_as_array(x) : x;
      if (!uniform(x) && !materialise(x, call)) return false;
      const int index = static_cast<int>(reductions_.size());
      reductions_.push_back(Reduction{node.op, fp_.value(x).dtype, &node.attrs, &body.type(node.inputs[0]), {}});
      steps_.push_back(Step{Step::fold, nullptr, node.op, &node.attrs, {home}, -1, index});
      return true;
    }
    case ir::FusedStep::op: break;
  }
  const ir::Node& node = *st.node;
  Kernel fn = kernel_for(node.op);
  if (!fn) return false;
  if (uniform(st.out)) {  // computed once, here
    static const auto kScalar = [] {  // by DType's value
      std::array<ir::ValueType, ir::kNumDTypes> t;
      for (int d = 0; d < ir::kNumDTypes; ++d) t[d] = ir::ValueType{static_cast<DType>(d), {}};
      return t;
    }();
    KernelCall c{node.op, node.attrs, {}, {}};
    for (int x : st.in) {
      const ir::FusedValue& xv = fp_.value(x);
      c.inputs.push_back({&kScalar[static_cast<int>(xv.dtype)], &store(xv.scalar).bits});
    }
    c.outputs.push_back({&kScalar[static_cast<int>(fp_.value(st.out).dtype)], &store(st.out).bits});
    fn(c);
    return true;
  }
  Step s{Step::kernel, fn, node.op, &node.attrs, {}, st.out, -1};
  for (size_t k = 0; k < st.in.size(); ++k) {
    const int x = st.in[k];
    if (!uniform(x)) {
      if (!materialise(x, call)) return false;
      s.ins.push_back(x);
    } else if (node.op == Op::select && k == 0) {
      s.ins.push_back(fp_.value(x).scalar);  // select reads a uniform predicate as a scalar
    } else {
      s.ins.push_back(read_as_array(x));
    }
  }
  store(st.out).where = Where::slot;
  steps_.push_back(std::move(s));
  return true;
}

// Homes of computed values: an output buffer when the value is a kernel
// output (and no output aliases an operand), else a scratch slot, reused
// once the value's last reader has run.
void Plan::assign_storage() {
  const int kForever = static_cast<int>(steps_.size());
  const auto materialised = [&](int v) { return store(v).where != Where::none; };
  std::vector<int> last(store_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s)
    for (int v : steps_[s].ins)
      if (materialised(v)) last[static_cast<size_t>(v)] = static_cast<int>(s);
  std::vector<int> out_of(store_.size(), -1);
  for (size_t k = 0; k < out_values_.size(); ++k) {
    const int v = out_values_[k];
    if (!materialised(v)) continue;
    last[static_cast<size_t>(v)] = kForever;  // copied out at the end of the tile if not written in place
    if (!tile_end_[k] && out_of[static_cast<size_t>(v)] < 0) out_of[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  std::vector<int> free_slots;
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& st = steps_[s];
    // Slots of values read for the last time here may take this step's output
    // (elementwise kernels and gathers write element i after reading element i),
    // when the element sizes agree.
    std::vector<int> dying;
    for (int v : st.ins) {
      const Storage& x = store(v);
      if (x.where == Where::slot && last[static_cast<size_t>(v)] == static_cast<int>(s) &&
          std::find(dying.begin(), dying.end(), x.index) == dying.end())
        dying.push_back(x.index);
    }
    if (st.out >= 0) {
      Storage& o = store(st.out);
      const DType odt = fp_.value(st.out).dtype;
      if (out_of[static_cast<size_t>(st.out)] >= 0) {
        o.where = Where::output;
        o.index = out_of[static_cast<size_t>(st.out)];
      } else {
        o.where = Where::slot;
        int reuse = -1;
        for (size_t k = 0; k < st.ins.size() && reuse < 0; ++k) {
          const Storage& x = store(st.ins[k]);
          if (x.where == Where::slot && last[static_cast<size_t>(st.ins[k])] == static_cast<int>(s) &&
              ir::dtype_size(fp_.value(st.ins[k]).dtype) == ir::dtype_size(odt))
            reuse = x.index;
        }
        if (reuse >= 0) {
          dying.erase(std::find(dying.begin(), dying.end(), reuse));
          o.index = reuse;
        } else if (!free_slots.empty()) {
          o.index = free_slots.back();
          free_slots.pop_back();
        } else {
          o.index = slots_++;
        }
      }
      if (last[static_cast<size_t>(st.out)] < 0 && o.where == Where::slot) dying.push_back(o.index);  // never read
    }
    free_slots.insert(free_slots.end(), dying.begin(), dying.end());
  }
}

void* Plan::locate(const Thread& t, int v, int64_t lo) const {
  const Storage& s = store(v);
  if (uniform(v)) {
    if (s.array >= 0) return t.array[static_cast<size_t>(s.array)];
    return const_cast<uint64_t*>(&s.bits);
  }
  const size_t size = ir::dtype_size(fp_.value(v).dtype);
  switch (s.where) {
    case Where::direct: return const_cast<uint8_t*>(s.base) + static_cast<size_t>(lo) * size;
    case Where::output: return out_data_[static_cast<size_t>(s.index)] + static_cast<size_t>(lo) * size;
    case Where::slot:
    case Where::none: break;
  }
  return t.slot[static_cast<size_t>(s.index)];
}

template <class Fold>
void Plan::run_tile(Thread& t, int64_t lo, int64_t len, Fold&& fold) const {
  if (len != t.len) {
    for (auto& type : t.tile_type) type.shape = {len};
    t.len = len;
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& st = steps_[s];
    prefetch_next_tile(lo, len, s, steps_.size());
    switch (st.type) {
      case Step::kernel: {
        KernelCall& c = t.calls[s];
        for (size_t k = 0; k < st.ins.size(); ++k) c.inputs[k].data = locate(t, st.ins[k], lo);
        c.outputs[0].data = locate(t, st.out, lo);
        st.fn(c);
        break;
      }
      case Step::gather:
        gathers_[static_cast<size_t>(st.index)].run(lo, len, static_cast<uint8_t*>(locate(t, st.out, lo)));
        break;
      case Step::fold:
        fold(st.index, locate(t, st.ins[0], lo), len);
        break;
    }
  }
  finish_tile(t, lo, len);
}

// GCC drops a loop that does nothing but __builtin_prefetch once it is
// inlined into run_tile (no prefetch instruction was left in the library),
// so x86 gets the instruction itself.
inline void prefetch_to_l2(const uint8_t* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht1 %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 0, 2);
#endif
}

// A tile's steps read its operands from memory in one step and then
// compute on scratch for several: the hardware prefetcher, which follows
// reads, idles while the math runs. So each step fetches its part of the
// next tile's operands and output lines (a tenth of an 8 KB stream per step
// of ten), and memory traffic overlaps the math. Measured on the issue-17
// chains (bench/fusion): the interpreter 10-25 % faster.
void Plan::prefetch_next_tile(int64_t lo, int64_t len, size_t part, size_t parts) const {
  const int64_t next = std::min(kTile, n_ - lo - len);
  if (next <= 0) return;
  for (const Stream& st : streams_) {
    const size_t bytes = static_cast<size_t>(next) * st.size, share = (bytes / parts + 63) / 64 * 64;
    const uint8_t* p = st.base + static_cast<size_t>(lo + len) * st.size;
    const size_t end = std::min(bytes, (part + 1) * share);
    for (size_t b = part * share; b < end; b += 64) prefetch_to_l2(p + b);
  }
}

// Outputs not written in place: copied (or filled) from where they live.
// Outputs written over an operand (tile_end_) come last, once every other
// output has copied what it reads of this tile, operand views included.
void Plan::finish_tile(Thread& t, int64_t lo, int64_t len) const {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < out_values_.size(); ++k) {
      if (tile_end_[k] != (pass == 1)) continue;
      finish_output(t, k, lo, len);
    }
}

void Plan::finish_output(Thread& t, size_t k, int64_t lo, int64_t len) const {
  const int v = out_values_[k];
  const ir::FusedValue& x = fp_.value(v);
  const size_t size = ir::dtype_size(x.dtype);
  uint8_t* dst = out_data_[k] + static_cast<size_t>(lo) * size;
  if (x.cls == ir::ValueClass::uniform) {
    fill_uniform(size, store(x.scalar).bits, dst, len);
  } else if (x.cls != ir::ValueClass::reduced) {
    const Storage& s = store(v);
    if (s.where == Where::output && s.index == static_cast<int>(k)) return;
    std::memcpy(dst, locate(t, v, lo), static_cast<size_t>(len) * size);
  }
}

void Plan::run() const {
  // Work items: ranges of the space, each walked in tiles by one thread.
  const Geometry& g = geometry_;
  const bool reducing = !reductions_.empty();
  const bool general = reducing && g.general;
  // Reductions: how tiles and work items cut [O, R, I].
  int64_t rows_per_tile = 1, chunk = 1, chunks = 1, rows_per_item = 1, items_per_slice = 1;
  if (reducing && !general) {
    if (g.inner == 1) {  // rows of R: whole rows per tile, or a row cut into blocks
      chunk = 1;
      rows_per_tile = g.reduced <= kTile ? std::max<int64_t>(1, kTile / g.reduced) : 1;
      rows_per_item = rows_per_tile;
      items_per_slice = g.reduced <= kTile ? 1 : (g.reduced + kBlock - 1) / kBlock;
    } else {  // columns: rows of I (or pieces of one) accumulate element-wise
      chunk = std::min(g.inner, kTile);
      chunks = (g.inner + chunk - 1) / chunk;
      rows_per_tile = chunk == g.inner ? std::max<int64_t>(1, kTile / g.inner) : 1;
      // A power of two times sum_order's column block, so a float sum's work items are subtrees.
      rows_per_item = column_piece_rows(chunk, kBlock);
      items_per_slice = (g.reduced + rows_per_item - 1) / rows_per_item;
    }
  }
  int64_t items;
  if (!reducing || general) items = (n_ + kTile - 1) / kTile;
  else if (g.inner == 1 && g.reduced <= kTile) items = (g.outer + rows_per_tile - 1) / rows_per_tile;
  else items = g.outer * chunks * items_per_slice;

  // Partial results of reductions whose slices span several work items.
  const bool partials = reducing && !general && items_per_slice > 1;
  const int64_t partial_len = g.inner == 1 ? 1 : chunk;
  std::vector<std::unique_ptr<uint64_t[]>> partial(reductions_.size());
  if (partials)
    for (auto& p : partial) p.reset(new uint64_t[static_cast<size_t>(items * partial_len)]);
  // General reductions: the operand, materialised.
  std::vector<runtime::BufferPtr> materialised(reductions_.size());
  if (general)
    for (size_t q = 0; q < reductions_.size(); ++q)
      materialised[q] = runtime::make_buffer(static_cast<size_t>(n_) * ir::dtype_size(reductions_[q].dtype));

  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<bool> failed{false};
  // Every tile (and accumulator row) holds at most min(kTile, N) elements.
  const int64_t cap = std::min(kTile, n_);
  // Every slot 64-byte aligned, as output buffers are: Eigen's packet path
  // covers the elements whose packet is aligned in the destination, so a
  // misaligned slot would change which elements take the scalar formula
  // (generated kernels rely on this, codegen/cpu/emit.cpp).
  const size_t acc_bytes = (static_cast<size_t>(cap) * kMaxElemBytes + 63) / 64 * 64;
  const bool parallel = n_ >= kParallelThreshold && items > 1;

#pragma omp parallel if (parallel)
  {
    Thread t;
    try {
      const size_t per = acc_bytes / sizeof(uint64_t);
      const size_t words = per * static_cast<size_t>(slots_ + arrays_) + per * reductions_.size();
      t.scratch.reset(new uint64_t[words + 8]);
      auto* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(t.scratch.get()) + 63) & ~uintptr_t{63});
      for (int k = 0; k < slots_; ++k) t.slot.push_back(base + static_cast<size_t>(k) * acc_bytes);
      for (int k = 0; k < arrays_; ++k) t.array.push_back(base + static_cast<size_t>(slots_ + k) * acc_bytes);
      t.acc = base + static_cast<size_t>(slots_ + arrays_) * acc_bytes;
      t.sums.resize(reductions_.size());
      for (size_t v = 0; v < store_.size(); ++v)
        if (store_[v].array >= 0)
          fill_uniform(ir::dtype_size(fp_.values[v].dtype), store_[v].bits, t.array[static_cast<size_t>(store_[v].array)], cap);
      for (int d = 0; d < ir::kNumDTypes; ++d) t.tile_type[d] = ir::ValueType{static_cast<DType>(d), {kTile}};
      static const ir::ValueType kScalarBool{DType::bool_, {}};
      t.calls.reserve(steps_.size());
      for (const Step& st : steps_) {
        t.calls.push_back(KernelCall{st.op, *st.attrs, {}, {}});
        if (st.type != Step::kernel) continue;
        KernelCall& c = t.calls.back();
        for (int v : st.ins) {
          const bool scalar = uniform(v) && store(v).array < 0;
          c.inputs.push_back({scalar ? &kScalarBool : &t.tile_type[static_cast<int>(fp_.value(v).dtype)], nullptr});
        }
        c.outputs.push_back({&t.tile_type[static_cast<int>(fp_.value(st.out).dtype)], nullptr});
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }

#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        if (!reducing || general) {
          const int64_t lo = item * kTile, len = std::min(kTile, n_ - lo);
          run_tile(t, lo, len, [&](int q, const void* x, int64_t n) {
            const size_t size = ir::dtype_size(reductions_[static_cast<size_t>(q)].dtype);
            std::memcpy(static_cast<uint8_t*>(materialised[static_cast<size_t>(q)]->data()) + static_cast<size_t>(lo) * size, x,
                        static_cast<size_t>(n) * size);
          });
        } else if (g.inner == 1 && g.reduced <= kTile) {
          // Whole rows: each output is finished within the tile.
          const int64_t o0 = item * rows_per_tile, rows = std::min(rows_per_tile, g.outer - o0);
          run_tile(t, o0 * g.reduced, rows * g.reduced, [&](int q, const void* x, int64_t) {
            const Reduction& r = reductions_[static_cast<size_t>(q)];
            uint8_t* dst = out_data_[static_cast<size_t>(r.outputs[0])] + static_cast<size_t>(o0) * ir::dtype_size(r.dtype);
            if (ordered_sum(r.op, r.dtype)) {
              sum_rows(r.dtype, x, rows, g.reduced, dst);
              return;
            }
            fill_identity(r.op, r.dtype, dst, rows);
            fold_rows(r.op, r.dtype, x, rows, g.reduced, dst);
          });
        } else {
          // One slice piece: o, column chunk c, rows [r0, r1) of R.
          const int64_t b = item % items_per_slice, c = (item / items_per_slice) % chunks,
                        o = item / items_per_slice / chunks;
          const int64_t j0 = c * chunk, width = g.inner == 1 ? 1 : std::min(chunk, g.inner - j0);
          for (size_t q = 0; q < reductions_.size(); ++q) {
            const Reduction& r = reductions_[q];
            if (!ordered_sum(r.op, r.dtype)) fill_identity(r.op, r.dtype, t.acc + q * acc_bytes, width);
            else if (g.inner == 1) t.sums[q].start_row(r.dtype);
            else t.sums[q].start_columns(r.dtype, width, rows_per_item);
          }
          if (g.inner == 1) {
            const int64_t lo0 = o * g.reduced + b * kBlock, hi = std::min(o * g.reduced + (b + 1) * kBlock, (o + 1) * g.reduced);
            for (int64_t lo = lo0; lo < hi; lo += kTile)
              run_tile(t, lo, std::min(kTile, hi - lo), [&](int q, const void* x, int64_t n) {
                const Reduction& r = reductions_[static_cast<size_t>(q)];
                if (ordered_sum(r.op, r.dtype)) t.sums[static_cast<size_t>(q)].add_to_row(x, n);
                else fold_rows(r.op, r.dtype, x, 1, n, t.acc + static_cast<size_t>(q) * acc_bytes);
              });
          } else {
            const int64_t r0 = b * rows_per_item, r1 = std::min(g.reduced, r0 + rows_per_item);
            for (int64_t r = r0; r < r1; r += rows_per_tile) {
              const int64_t rows = std::min(rows_per_tile, r1 - r);
              run_tile(t, (o * g.reduced + r) * g.inner + j0, rows * width, [&](int q, const void* x, int64_t) {
                const Reduction& red = reductions_[static_cast<size_t>(q)];
                if (ordered_sum(red.op, red.dtype)) t.sums[static_cast<size_t>(q)].add_rows(x, rows, width);
                else fold_columns(red.op, red.dtype, x, rows, width, t.acc + static_cast<size_t>(q) * acc_bytes);
              });
            }
          }
          for (size_t q = 0; q < reductions_.size(); ++q) {
            const Reduction& r = reductions_[q];
            if (ordered_sum(r.op, r.dtype)) {
              if (g.inner == 1) t.sums[q].finish_row(t.acc + q * acc_bytes);
              else t.sums[q].finish_columns(t.acc + q * acc_bytes);
            }
            const size_t size = ir::dtype_size(reductions_[q].dtype);
            uint8_t* dst = partials ? reinterpret_cast<uint8_t*>(partial[q].get()) + static_cast<size_t>(item * partial_len) * size
                                    : out_data_[static_cast<size_t>(reductions_[q].outputs[0])] +
                                          static_cast<size_t>(o * g.inner + j0) * size;
            std::memcpy(dst, t.acc + q * acc_bytes, static_cast<size_t>(width) * size);
          }
        }
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  }
  if (error) std::rethrow_exception(error);

  // Partial results, combined per output in work-item order.
  if (partials) {
    for (size_t q = 0; q < reductions_.size(); ++q) {
      const Reduction& r = reductions_[q];
      if (ordered_sum(r.op, r.dtype)) {  // the items' sums are subtrees of each slice's: combined row by row
        const size_t size = ir::dtype_size(r.dtype);
        const int64_t groups = g.outer * chunks;
#pragma omp parallel for schedule(static) if (groups * items_per_slice * partial_len >= kParallelThreshold)
        for (int64_t gi = 0; gi < groups; ++gi) {
          const int64_t o = gi / chunks, c = gi % chunks, j0 = g.inner == 1 ? 0 : c * chunk;
          const int64_t width = g.inner == 1 ? 1 : std::min(chunk, g.inner - j0);
          combine_item_rows(r.dtype, reinterpret_cast<uint8_t*>(partial[q].get()) + static_cast<size_t>(gi * items_per_slice * partial_len) * size,
                            items_per_slice, partial_len, width,
                            out_data_[static_cast<size_t>(r.outputs[0])] + static_cast<size_t>(o * g.inner + j0) * size);
        }
        continue;
      }
      visit_dtype(r.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        with_step<T>(r.op, [&](auto step) {
          const T* p = reinterpret_cast<const T*>(partial[q].get());
          T* out = reinterpret_cast<T*>(out_data_[static_cast<size_t>(r.outputs[0])]);
          parallel_ranges(g.outer * g.inner, [&](int64_t lo, int64_t hi) {
            for (int64_t e = lo; e < hi; ++e) {
              const int64_t o = e / g.inner, j = e % g.inner, c = g.inner == 1 ? 0 : j / chunk, jj = g.inner == 1 ? 0 : j - c * chunk;
              const int64_t first = (o * chunks + c) * items_per_slice;
              T acc = p[first * partial_len + jj];
              for (int64_t b = 1; b < items_per_slice; ++b) acc = step(acc, p[(first + b) * partial_len + jj]);
              out[e] = acc;
            }
          });
        });
      });
    }
  }
  // General reductions: the reduce kernel on the materialised operand.
  if (general)
    for (size_t q = 0; q < reductions_.size(); ++q) {
      const Reduction& r = reductions_[q];
      const auto k = static_cast<size_t>(r.outputs[0]);
      run_kernel(KernelCall{r.op, *r.attrs, {{r.in_type, materialised[q]->data()}}, {{out_types_[k], out_data_[k]}}});
    }
  for (const auto& [temp, out, bytes] : temps_) std::memcpy(out, temp->data(), bytes);
  // Reductions read by several outputs: copies of the first.
  for (const Reduction& r : reductions_)
    for (size_t k = 1; k < r.outputs.size(); ++k) {
      const ir::ValueType& t = *out_types_[static_cast<size_t>(r.outputs[k])];
      std::memcpy(out_data_[static_cast<size_t>(r.outputs[k])], out_data_[static_cast<size_t>(r.outputs[0])],
                  static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype));
    }
}

}  // namespace

void fusion_kernel(const KernelCall& call) {
  const ir::Graph& body = *ir::attr<ir::Graphs>(call.attrs, "body", call.op).at(0);
  Plan plan;
  if (plan.build(body, call)) plan.run();
  else evaluate_call(body, call);
}

}  // namespace graft::interpreter
