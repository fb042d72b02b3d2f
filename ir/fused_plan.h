// The plan of a fused body: what every backend running a `fusion` node needs
// to know about its body, found once, in one vocabulary. The interpreter's
// tiled evaluator (interpreter/kernels/fusion.cpp) and the CPU C++ emitter
// (codegen/cpu/schedule.cpp) both consume it; a backend adds only its own
// decisions (tiles, scratch, threads, stages, text) and may refuse a plan it
// cannot run.
//
// Vocabulary. A fused body computes over one iteration space: N elements,
// the row-major linear index of the shape its ops make (and its reductions
// read). Each value of the body is of one class:
//   uniform  every element is one scalar, known before the loop over the
//            space: a one-element input or constant, a broadcast or reshape
//            of a uniform, an elementwise op whose operands are all uniform;
//   view     elements of a buffer (a body input, or a constant's literal)
//            read through per-axis strides: an input of more than one
//            element, and its broadcasts and reshapes;
//   full     computed per element of the space: an elementwise op reading
//            a view or a full value;
//   reduced  the result of a reduction (read only as a body output).
// Reshapes and broadcasts that keep the element count and cannot be written
// as strides share their operand's value (same elements, same order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graft::ir {

enum class ValueClass : uint8_t { uniform, view, full, reduced };

struct FusedValue {
  ValueClass cls = ValueClass::full;
  DType dtype = DType::f32;
  Shape shape;    // of the first body value it is
  int64_t count = 0;
  // uniform: the value whose step computes the scalar (itself, unless it is
  // a broadcast or reshape of another uniform)
  int scalar = -1;
  // view: the buffer (body input `input`, or when input < 0 the literal of
  // `constant`) and the element stride of each axis of `shape`
  int input = -1;
  const Node* constant = nullptr;
  std::vector<int64_t> strides;
};

// A step computes one value: inputs first (one-element inputs, the uniforms
// they are), then the body's constants, ops and reductions in node order.
struct FusedStep {
  enum What : uint8_t { input, constant, op, reduction } what = op;
  const Node* node = nullptr;  // constant, op, reduction
  int input_index = -1;        // input: the body input number
  std::vector<int> in;         // op, reduction: operand values
  int out = -1;                // the value it computes
};

// How a body output is stored.
enum class OutputStore : uint8_t {
  loop,       // N elements, one per element of the space (full values, views and uniforms of N elements)
  scalar,     // one element: a uniform of one element
  fill,       // a uniform of another size: filled with its scalar
  copy,       // a contiguous view of another size: its buffer copied
  reduction,  // a reduction's result
  none,       // a strided view of another size: no store for it
};

struct FusedOutput {
  int value = -1;  // the value it is (a reduced value for a reduction)
  OutputStore store = OutputStore::loop;
};

// The reduced operand's axes without size-1 axes, neighbours of one kind
// (kept or reduced) merged; strides are row-major, of the operand
// (in_stride) and of the result (out_stride, kept groups only).
struct ReductionGroup {
  int64_t size = 1;
  bool reduced = false;
  int64_t in_stride = 0, out_stride = 0;
};

struct FusedReduction {
  const Node* node = nullptr;
  int in = -1;                  // the operand's value
  int out = -1;                 // the reduced value
  std::vector<size_t> outputs;  // positions of the body outputs holding it
  std::vector<ReductionGroup> groups;
};

struct FusedPlan {
  // Why no plan describes the body (neither backend runs it); empty when planned.
  std::string refused;
  int64_t N = 0;                  // the iteration space
  // Every node but constants makes N elements (reductions: read N), and there is one.
  bool single_space = false;
  std::vector<FusedValue> values;
  std::vector<int> value_of;      // by body ValueId: the value it is, or -1
  std::vector<FusedStep> steps;
  std::vector<FusedOutput> outputs;  // by body output position
  std::vector<FusedReduction> reductions;  // in node order

  const FusedValue& value(int v) const { return values[static_cast<size_t>(v)]; }
  const FusedValue& of(ValueId id) const { return value(value_of[static_cast<size_t>(id)]); }
};

// The plan of `body`; plan.refused says why there is none. Throws
// GraphFormatError when the body reads a value it does not define.
FusedPlan plan_fused_body(const Graph& body);

// A view's axes without size-1 axes, neighbours that step through the buffer
// as one axis merged (a uniform's strides are all 0).
void merged_axes(const FusedValue& v, Shape* sizes, std::vector<int64_t>* strides);

// Whether a view reads its buffer's elements in order (a plain pointer walk).
bool contiguous(const FusedValue& v);

// Groups of the form [outer kept, reduced, inner kept] (absent ones are 1);
// false when the groups do not have that form.
struct OuterReducedInner {
  int64_t outer = 1, reduced = 1, inner = 1;
};
bool outer_reduced_inner(const std::vector<ReductionGroup>& groups, OuterReducedInner* out);

}  // namespace graft::ir
