#include "ir/trace.h"

#include "graft/errors.h"

namespace graft::ir {
namespace {

struct ThreadState {
  std::vector<TracePtr> traces;
  std::vector<std::string> scopes;  // full paths: scopes.back() is the current one
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

}  // namespace

const TracePtr& current_trace() {
  static const TracePtr kNone;
  auto& t = state().traces;
  return t.empty() ? kNone : t.back();
}

ValueId Trace::capture(const Trace& owner, ValueId value) {
  if (!owner.alive())
    throw TracerLeakError("a traced value was used after the transform that traced it had returned; "
                          "return it from the function instead of storing it");
  if (!parent_)
    throw TracerLeakError("a traced value of another, unrelated trace was used here");
  // The value as the parent sees it: itself if the parent owns it, else captured there first.
  ValueId in_parent = parent_.get() == &owner ? value : parent_->capture(owner, value);
  for (const Capture& c : captures_)
    if (c.outer_value == in_parent) return c.input;
  ValueId input = builder_.input(parent_->builder().type(in_parent));
  captures_.push_back(Capture{parent_, in_parent, input});
  return input;
}

TraceScope::TraceScope() : trace_(std::make_shared<Trace>(current_trace())) { state().traces.push_back(trace_); }

TraceScope::~TraceScope() {
  trace_->end();
  state().traces.pop_back();
}

const std::string& current_scope() {
  static const std::string kEmpty;
  auto& s = state().scopes;
  return s.empty() ? kEmpty : s.back();
}

void push_scope(const std::string& name) {
  auto& s = state().scopes;
  s.push_back(s.empty() ? name : s.back() + "/" + name);
}

void pop_scope() {
  auto& s = state().scopes;
  if (!s.empty()) s.pop_back();
}

}  // namespace graft::ir
