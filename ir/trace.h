// Trace contexts: a thread's stack of graphs being built. Each op applied
// while a trace is active appends a node to the innermost one. A value of an
// enclosing trace used by an inner one becomes an implicit input of the inner
// graph (closure capture), recorded so the caller can pass it in.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"

namespace graft::ir {

class Trace;
using TracePtr = std::shared_ptr<Trace>;

class Trace {
 public:
  explicit Trace(TracePtr parent) : parent_(std::move(parent)), depth_(parent_ ? parent_->depth_ + 1 : 0) {}

  GraphBuilder& builder() { return builder_; }
  const TracePtr& parent() const { return parent_; }
  int depth() const { return depth_; }
  bool alive() const { return alive_; }
  void end() { alive_ = false; }

  // A value of an enclosing trace, seen from this one: made an implicit input
  // of this graph on first use (and of every trace in between). Throws
  // TracerLeakError if `owner` is not an enclosing, still active trace.
  ValueId capture(const Trace& owner, ValueId value);

  // What this graph captured, in the order of its implicit inputs (which
  // follow the explicit ones).
  struct Capture {
    TracePtr owner;       // the trace the value belongs to (the parent, after propagation)
    ValueId outer_value;  // its id there
    ValueId input;        // the implicit input here
  };
  const std::vector<Capture>& captures() const { return captures_; }

  // A scope path entered again in this graph gets its own instance
  // ("mlp/dense", then "mlp/dense_1"), so each call of a helper is a group
  // of its own (drawn collapsed, two calls would look like a cycle).
  std::string scope_instance(const std::string& path);

 private:
  GraphBuilder builder_;
  TracePtr parent_;
  int depth_;
  bool alive_ = true;
  std::vector<Capture> captures_;
  std::unordered_set<std::string> scope_paths_;        // the scope instances handed out
  std::unordered_map<std::string, int> scope_suffix_;  // the last suffix given to each path entered again
};

// The innermost active trace of this thread, or null when running eagerly.
const TracePtr& current_trace();
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

// A composite library function (softmax, gelu, a layer norm) while it runs:
// the outermost one opens a scope of its name, and every node it traces, and
// every error it raises, carries the user's line instead of graft's own.
// Nested composites add nothing (log_softmax's logsumexp stays inside the
// log_softmax group).
class CompositeScope {
 public:
  CompositeScope(const char* name, const SourceLoc& user_loc);
  ~CompositeScope();
  CompositeScope(const CompositeScope&) = delete;
  CompositeScope& operator=(const CompositeScope&) = delete;

 private:
  bool outermost_;
};
// The user's line of the composite being traced, or null outside one.
const SourceLoc* composite_loc();

}  // namespace graft::ir
