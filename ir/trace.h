// Trace contexts: a thread's stack of graphs being built. Each op applied
// while a trace is active appends a node to the innermost one. A value of an
// enclosing trace used by an inner one becomes an implicit input of the inner
// graph (closure capture), recorded so the caller can pass it in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace graft::ir {

class Trace {
 public:
  explicit Trace(Trace* parent) : parent_(parent), depth_(parent ? parent->depth_ + 1 : 0) {}

  GraphBuilder& builder() { return builder_; }
  Trace* parent() const { return parent_; }
  int depth() const { return depth_; }
  bool alive() const { return alive_; }
  void end() { alive_ = false; }

 private:
  GraphBuilder builder_;
  Trace* parent_;
  int depth_;
  bool alive_ = true;
};
using TracePtr = std::shared_ptr<Trace>;

// The innermost active trace of this thread, or nullptr when running eagerly.
Trace* current_trace();
// Pushes a new trace (child of the current one) and pops it when destroyed.
class TraceScope {
 public:
  TraceScope();
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  const TracePtr& trace() const { return trace_; }

 private:
  TracePtr trace_;
};

// Named scopes ("mlp/layer1") of this thread, recorded on every traced node.
const std::string& current_scope();
void push_scope(const std::string& name);
void pop_scope();

}  // namespace graft::ir
