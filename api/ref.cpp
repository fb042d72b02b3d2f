// Mutable references (graft/ref.h): eager updates write into the Ref's own
// buffer; inside a trace an update replaces the value later reads see (the
// discharge to functional form happens as the function is traced).
#include "graft/ref.h"

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/ref_state.h"
#include "graft/errors.h"
#include "graft/jit.h"
#include "graft/ops.h"
#include "runtime/device.h"

namespace graft {

namespace detail {

namespace {

std::string at_line(const std::source_location& loc) {
  std::string l = ir::loc_str(to_loc(loc));
  return l.empty() ? "" : " (at " + l + ")";
}

RefState& live_state(const Ref& r, const char* what, const std::source_location& loc) {
  if (!r.valid()) throw Error(std::string("Ref.") + what + ": the Ref is empty" + at_line(loc));
  RefState& st = *r.state();
  if (st.frozen)
    throw Error(std::string("Ref.") + what + ": the Ref was frozen (freeze) and may not be used" + at_line(loc));
  return st;
}

bool encloses(const ir::Trace* outer, const ir::Trace* t) {
  for (; t; t = t->parent().get())
    if (t == outer) return true;
  return false;
}

// The session of `trace` when it is a loop body that carries enclosing Refs.
TraceSession* carrying_session(const ir::Trace* trace) {
  TraceSession* s = current_session();
  return s && s->trace_id() == trace && s->carries_refs() ? s : nullptr;
}

// Checks that the code running now may use the Ref (it belongs to the
// current trace, or, with no trace, is eager; or it belongs to enclosing
// code and the function traced now carries it); returns the value that code sees.
const Array& access(const Ref& r, const char* what, bool write, const std::source_location& loc) {
  RefState& st = live_state(r, what, loc);
  const ir::Trace* cur = ir::current_trace().get();
  if (st.home.get() == cur) return st.value;
  const std::string op = std::string("Ref.") + what + at_line(loc);
  if (!st.home) {
    if (!carrying_to_root(cur))
      throw UnsupportedError(op +
                             ": the Ref was made outside the function traced here (by jvp, vjp, a Jacobian, pmap, "
                             "checkpoint or a custom rule), which would keep its value as a constant; read it "
                             "outside and pass the value, or use it where Refs are carried: jit, grad, "
                             "value_and_grad, vmap, loop bodies and cond branches");
  } else if (!encloses(st.home.get(), cur)) {
    throw TracerLeakError(op + ": the Ref was made inside a transform that has finished");
  }
  TraceSession* body = carrying_session(cur);
  if (write && !body)
    throw UnsupportedError(op +
                           ": the Ref belongs to enclosing code and is written inside jvp, vjp, a Jacobian, "
                           "pmap, checkpoint or a custom rule (jit, grad, value_and_grad, vmap, loop bodies and "
                           "cond branches carry such writes out); return the new value and set the Ref after the "
                           "call");
  if (body) body->note_touched(r.state());
  return visible_value(st, cur);
}

// Makes v the value the running code sees: in the Ref itself where it
// lives (eagerly, written into its buffer), else in the loop body's overlay.
void put(RefState& st, const Array& v, const std::source_location& loc, const char* what) {
  const ir::Trace* cur = ir::current_trace().get();
  if (st.home.get() != cur) {
    for (RefState::Overlay& o : st.overlays)
      if (o.trace == cur) {
        o.value = v;
        return;
      }
    st.overlays.push_back({cur, v});
    return;
  }
  if (st.home) {
    st.value = v;
    return;
  }
  if (v.impl() == st.value.impl()) return;
  const ArrayImpl& src = live_impl(v, "Ref.set", &loc);
  if (src.traced())
    throw TracerLeakError(std::string("Ref.") + what + ": a traced value stored into a Ref made outside the transform" +
                          at_line(loc));
  const runtime::BufferPtr& to = data_buffer(*st.value.impl());
  const runtime::BufferPtr& from = data_buffer(src);
  if (to->size()) runtime::copy_bytes(to->device(), to->data(), from->device(), from->data(), to->size());
}

std::string shape_of(const Array& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape()[i]);
  return s + (a.shape().size() == 1 ? ",)" : ")");
}

void check_type(const RefState& st, const Array& v, const char* what, const std::source_location& loc) {
  if (!v.valid()) throw Error(std::string("Ref.") + what + ": the value is an empty Array" + at_line(loc));
  if (v.dtype() != st.value.dtype())
    throw DTypeError(std::string("Ref.") + what + ": the Ref holds " + dtype_name(st.value.dtype()) +
                     " but the value is " + dtype_name(v.dtype()) + at_line(loc));
  if (v.shape() != st.value.shape())
    throw ShapeError(std::string("Ref.") + what + ": the Ref holds shape " + shape_of(st.value) +
                     " but the value has shape " + shape_of(v) + at_line(loc));
}

// Replaces the Ref's value: eagerly by writing into its buffer.
void store(const Ref& r, const Array& v, const char* what, const std::source_location& loc) {
  access(r, what, true, loc);
  RefState& st = *r.state();
  check_type(st, v, what, loc);
  put(st, v, loc, what);
}

}  // namespace

const Array& visible_value(const RefState& state, const ir::Trace* trace) {
  for (auto it = state.overlays.rbegin(); it != state.overlays.rend(); ++it)
    if (encloses(it->trace, trace)) return it->value;
  return state.value;
}

std::vector<Array> ref_initials(const std::vector<std::shared_ptr<RefState>>& refs) {
  std::vector<Array> out;
  // A read through access: code that encloses this, and carries Refs itself, learns of it.
  for (const auto& r : refs)
    out.push_back(access(Ref(r), "get (a carried value)", false, std::source_location::current()));
  return out;
}

void write_back_refs(const std::vector<std::shared_ptr<RefState>>& refs, const std::vector<Array>& finals) {
  const std::source_location here = std::source_location::current();
  for (size_t i = 0; i < refs.size(); ++i) {
    access(Ref(refs[i]), "set (a carried value written back)", true, here);
    put(*refs[i], finals.at(i), here, "set");
  }
}

std::vector<Array> closed_ref_leaves(const std::vector<std::shared_ptr<RefState>>& closed) {
  std::vector<Array> out;
  for (const auto& st : closed) out.push_back(ref_leaf(Ref(st)));
  return out;
}

Array ref_leaf(const Ref& r) {
  if (!r.valid()) throw Error("Ref: an empty Ref passed to a transform");
  if (r.state()->frozen) throw Error("Ref: a frozen Ref passed to a transform");
  return r.state()->value;
}

Ref ref_alias(const Ref& r, const Array& traced_value) {
  if (!traced_value.is_traced()) return r;
  auto st = std::make_shared<RefState>();
  st->value = traced_value;
  st->home = traced_value.impl()->trace;
  st->target = r.state();
  st->input = traced_value.impl()->value;
  if (TraceSession* session = current_session()) session->add_ref_argument(st);
  return Ref(st);
}

}  // namespace detail

Array Ref::get(std::source_location loc) const {
  const Array& v = detail::access(*this, "get", false, loc);
  if (!v.is_traced() && !ir::current_trace())
    return detail::bind1(ir::Op::copy, {v}, {}, loc);  // a copy: later sets leave it
  return v;
}

void Ref::set(const Array& v, std::source_location loc) const { detail::store(*this, v, "set", loc); }

Array Ref::swap(const Array& v, std::source_location loc) const {
  Array old = get(loc);
  detail::store(*this, v, "swap", loc);
  return old;
}

void Ref::addupdate(const Array& v, std::source_location loc) const {
  const Array& now = detail::access(*this, "addupdate", true, loc);
  detail::store(*this, detail::bind1(ir::Op::add, {now, v}, {}, loc), "addupdate", loc);
}

RefIndex Ref::at(std::vector<Index> index) const { return RefIndex(*this, std::move(index)); }
RefIndex Ref::at(int64_t i) const { return RefIndex(*this, {Index(i)}); }

const Shape& Ref::shape() const {
  return detail::live_state(*this, "shape", std::source_location::current()).value.shape();
}
DType Ref::dtype() const { return detail::live_state(*this, "dtype", std::source_location::current()).value.dtype(); }
const void* Ref::unsafe_buffer_pointer() const {
  return detail::live_state(*this, "unsafe_buffer_pointer", std::source_location::current())
      .value.unsafe_buffer_pointer();
}

Array RefIndex::get(std::source_location loc) const { return detail::access(ref_, "at().get", false, loc)[index_]; }

void RefIndex::set(const Array& v, std::source_location loc) const {
  const Array& now = detail::access(ref_, "at().set", true, loc);
  detail::store(ref_, now.at(index_).set(v, loc), "at().set", loc);
}

Array RefIndex::swap(const Array& v, std::source_location loc) const {
  Array old = get(loc);
  set(v, loc);
  return old;
}

void RefIndex::addupdate(const Array& v, std::source_location loc) const {
  const Array& now = detail::access(ref_, "at().addupdate", true, loc);
  detail::store(ref_, now.at(index_).add(v, loc), "at().addupdate", loc);
}

Ref new_ref(const Array& init, std::source_location loc) {
  const detail::ArrayImpl& impl = detail::live_impl(init, "new_ref", &loc);
  auto st = std::make_shared<detail::RefState>();
  st->home = ir::current_trace();
  // Eagerly a buffer of its own (init stays as it is); traced, the value itself.
  st->value = st->home ? init : detail::bind1(ir::Op::copy, {init}, {}, loc);
  (void)impl;
  return Ref(st);
}

Array freeze(const Ref& r, std::source_location loc) {
  Array v = r.get(loc);
  r.state()->frozen = true;
  return v;
}

}  // namespace graft
