#include "ir/trace.h"

#include "graft/errors.h"

namespace graft::ir {
namespace {

struct ThreadState {
  std::vector<TracePtr> traces;
  std::vector<std::string> scopes;  // full paths: scopes.back() is the current one
  SourceLoc composite_loc;          // the outermost composite's call site
  int composite_depth = 0;
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

std::string Trace::scope_instance(const std::string& path) {
  if (scope_paths_.insert(path).second) return path;
  // The next suffix no path of this graph has (a scope the user named "dense_1" included).
  int& suffix = scope_suffix_[path];
  std::string instance;
  do instance = path + "_" + std::to_string(++suffix);
  while (!scope_paths_.insert(instance).second);
  return instance;
}

void push_scope(const std::string& name) {
  auto& s = state().scopes;
  std::string path = s.empty() ? name : s.back() + "/" + name;
  if (const TracePtr& trace = current_trace()) path = trace->scope_instance(path);
  s.push_back(std::move(path));
}

void pop_scope() {
  auto& s = state().scopes;
  if (!s.empty()) s.pop_back();
}

CompositeScope::CompositeScope(const char* name, const SourceLoc& user_loc)
    : outermost_(state().composite_depth++ == 0) {
  if (!outermost_) return;
  state().composite_loc = user_loc;
  push_scope(name);
}

CompositeScope::~CompositeScope() {
  --state().composite_depth;
  if (outermost_) pop_scope();
}

const SourceLoc* composite_loc() { return state().composite_depth > 0 ? &state().composite_loc : nullptr; }

}  // namespace graft::ir
