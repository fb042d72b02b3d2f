#include "ir/trace.h"

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

Trace* current_trace() {
  auto& t = state().traces;
  return t.empty() ? nullptr : t.back().get();
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
