// The non-template side of make_graph, evaluate and named_scope.
#include <optional>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/ref_state.h"
#include "graft/errors.h"
#include "graft/make_graph.h"
#include "graft/named_scope.h"
#include "interpreter/evaluate.h"
#include "ir/passes.h"
#include "ir/trace.h"

namespace graft {
namespace detail {

namespace {
thread_local std::vector<TraceSession*> t_sessions;
thread_local std::optional<std::vector<Shape>> t_input_shapes;    // TraceInputShapes
thread_local int t_shapeless = 0;                                 // ShapelessStructures
}

TraceInputShapes::TraceInputShapes(std::vector<Shape> shapes) { t_input_shapes = std::move(shapes); }
TraceInputShapes::~TraceInputShapes() { t_input_shapes.reset(); }
ShapelessStructures::ShapelessStructures() { ++t_shapeless; }
ShapelessStructures::~ShapelessStructures() { --t_shapeless; }

TraceSession* current_session() { return t_sessions.empty() ? nullptr : t_sessions.back(); }

bool carrying_to_root(const ir::Trace* trace) {
  const ir::Trace* expected = trace;
  for (auto it = t_sessions.rbegin(); it != t_sessions.rend() && expected; ++it) {
    if ((*it)->trace_id() != expected || !(*it)->carries_refs()) return false;
    expected = expected->parent().get();
  }
  return expected == nullptr;
}

struct TraceSession::Impl {
  ir::TraceScope scope;
  std::vector<std::shared_ptr<RefState>> refs;     // stand-ins of Ref arguments
  bool carries = false;                            // a loop body that carries enclosing Refs
  std::vector<std::shared_ptr<RefState>> touched;  // enclosing Refs used, not bound
  std::vector<std::shared_ptr<RefState>> bound;    // enclosing Refs bound to inputs
  std::vector<ir::ValueId> bound_inputs;           // their inputs
  std::optional<std::vector<Shape>> input_shapes;  // TraceInputShapes (outermost sessions only)
  size_t next_input = 0;
};

TraceSession::TraceSession() : impl_(std::make_unique<Impl>()) {
  if (t_sessions.empty()) impl_->input_shapes = t_input_shapes;
  t_sessions.push_back(this);
}
TraceSession::~TraceSession() {
  // The overlays this trace made end with it (a first, discarded trace leaves none behind).
  const ir::Trace* t = impl_->scope.trace().get();
  auto drop = [t](const std::shared_ptr<RefState>& st) {
    std::erase_if(st->overlays, [t](const RefState::Overlay& o) { return o.trace == t; });
  };
  for (const auto& st : impl_->touched) drop(st);
  for (const auto& st : impl_->bound) drop(st);
  if (!t_sessions.empty() && t_sessions.back() == this) t_sessions.pop_back();
}

void TraceSession::carry_refs() { impl_->carries = true; }
bool TraceSession::carries_refs() const { return impl_->carries; }
const void* TraceSession::trace_id() const { return impl_->scope.trace().get(); }

void TraceSession::note_touched(const std::shared_ptr<RefState>& state) {
  for (const auto& s : impl_->touched)
    if (s == state) return;
  for (const auto& s : impl_->bound)
    if (s == state) return;
  impl_->touched.push_back(state);
}

std::vector<std::shared_ptr<RefState>> TraceSession::touched_refs() const { return impl_->touched; }

void TraceSession::bind_refs(const std::vector<std::shared_ptr<RefState>>& states) {
  const ir::TracePtr& trace = impl_->scope.trace();
  for (const auto& st : states) {
    const ir::ValueType& type = st->value.impl()->type;
    const ir::ValueId v = trace->builder().input(type);
    st->overlays.push_back({trace.get(), Array(make_traced(type, trace, v))});
    impl_->bound.push_back(st);
    impl_->bound_inputs.push_back(v);
  }
}

std::vector<size_t> TraceSession::bound_input_positions() const {
  const std::vector<ir::ValueId>& inputs = impl_->scope.trace()->builder().graph().inputs();
  std::vector<size_t> out;
  for (ir::ValueId v : impl_->bound_inputs)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] == v) out.push_back(i);
  return out;
}

std::vector<Array> TraceSession::bound_finals() const {
  std::vector<Array> out;
  for (const auto& st : impl_->bound) out.push_back(visible_value(*st, impl_->scope.trace().get()));
  return out;
}

void TraceSession::add_ref_argument(std::shared_ptr<RefState> alias) { impl_->refs.push_back(std::move(alias)); }

void TraceSession::refuse_ref_arguments() const {
  if (!impl_->refs.empty())
    throw UnsupportedError(
        "a Ref was passed as an argument of a transform other than jit: only jit takes Ref arguments (it updates "
        "them in place); pass r.get() instead, or make the Ref inside the function");
}

std::vector<Array> TraceSession::ref_finals() const {
  std::vector<Array> out;
  for (const auto& r : impl_->refs) out.push_back(r->value);
  return out;
}

std::vector<size_t> TraceSession::ref_input_positions() const {
  const std::vector<ir::ValueId>& inputs = impl_->scope.trace()->builder().graph().inputs();
  std::vector<size_t> out;
  for (const auto& r : impl_->refs)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] == r->input) out.push_back(i);
  return out;
}

Array TraceSession::input_like(const Array& like) {
  const ArrayImpl& impl = checked_impl(like, "make_graph");
  const ir::TracePtr& trace = impl_->scope.trace();
  ir::ValueType type = impl.type;
  if (const auto& shapes = impl_->input_shapes) {  // a shape-polymorphic trace at one of its sample sizes
    if (impl_->next_input >= shapes->size())
      throw Error("jit: polymorphic_shapes gives " + std::to_string(shapes->size()) +
                  " shapes, but the function takes more argument leaves");
    type.shape = (*shapes)[impl_->next_input++];
  }
  ir::ValueId v = trace->builder().input(type);
  return Array(make_traced(type, trace, v));
}

Array TraceSession::input_of(const Shape& shape, DType dtype) {
  const ir::TracePtr& trace = impl_->scope.trace();
  ir::ValueType type{dtype, shape};
  ir::ValueId v = trace->builder().input(type);
  return Array(make_traced(type, trace, v));
}

Graph TraceSession::finish(const std::vector<Array>& outputs) {
  const ir::TracePtr& trace = impl_->scope.trace();
  std::vector<ir::ValueId> ids;
  ids.reserve(outputs.size());
  for (const Array& a : outputs) {
    const ArrayImpl& impl = checked_impl(a, "make_graph output");
    if (impl.traced() && impl.trace == trace) {
      ids.push_back(impl.value);
    } else {
      // A constant or a captured value returned as is: a copy node makes it a value of this graph.
      Array same = bind1(ir::Op::copy, {a}, {}, std::source_location::current());
      ids.push_back(same.impl()->value);
    }
  }
  return Graph(trace->builder().finish(std::move(ids)));
}

Graph exported_graph(const Graph& traced, std::vector<std::string> input_names,
                     std::vector<std::string> output_names) {
  ir::Graph g = ir::dead_code_elimination(traced.ir());  // the one copy of the traced graph
  const size_t explicit_inputs = input_names.size();
  for (size_t i = explicit_inputs; i < g.inputs().size(); ++i)
    input_names.push_back("captured[" + std::to_string(i - explicit_inputs) + "]");
  input_names.resize(g.inputs().size());
  g.set_names(std::move(input_names), std::move(output_names));
  return Graph(std::make_shared<const ir::Graph>(std::move(g)));
}

std::vector<Array> TraceSession::captured() const {
  std::vector<Array> out;
  for (const ir::Trace::Capture& c : impl_->scope.trace()->captures())
    out.emplace_back(make_traced(c.owner->builder().type(c.outer_value), c.owner, c.outer_value));
  return out;
}

}  // namespace detail

std::vector<Array> evaluate(const Graph& graph, const std::vector<Array>& inputs) {
  const ir::Graph& g = graph.ir();
  if (inputs.size() != g.inputs().size())
    throw ShapeError("evaluate: the graph takes " + std::to_string(g.inputs().size()) + " inputs, got " +
                     std::to_string(inputs.size()));
  std::vector<runtime::BufferPtr> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const detail::ArrayImpl& impl = detail::live_impl(inputs[i], "evaluate");
    const ir::ValueType& want = g.type(g.inputs()[i]);
    if (impl.type != want)
      throw ShapeError("evaluate: input " + std::to_string(i) + " must be " + ir::type_str(want) + ", got " +
                       ir::type_str(impl.type));
    if (impl.traced()) throw ConcretizationError("evaluate: input " + std::to_string(i) + " is traced; evaluate runs concrete arrays");
    buffers.push_back(detail::host_buffer(impl));  // the interpreter runs on the host
  }
  std::vector<runtime::BufferPtr> out = interpreter::evaluate(g, buffers);
  std::vector<Array> result;
  for (size_t i = 0; i < out.size(); ++i) result.emplace_back(detail::make_concrete(g.type(g.outputs()[i]), out[i]));
  return result;
}

named_scope::named_scope(const std::string& name) { ir::push_scope(name); }
named_scope::~named_scope() { ir::pop_scope(); }

}  // namespace graft

namespace graft::tree::detail {

std::string describe_leaf(const Array& a) {
  if (!a.valid()) return "empty";
  std::string s = a.is_traced() ? "traced " : "";
  if (graft::detail::t_shapeless) {
    s += dtype_name(a.impl()->type.dtype);
    s += "[rank ";
    s += std::to_string(a.impl()->type.rank());
    s += "]";
    return s;
  }
  s += ir::type_str(a.impl()->type);
  return s;
}

}  // namespace graft::tree::detail
