// Applying a primitive to Arrays: recorded as a node when a trace is active,
// run by the interpreter's kernel right away otherwise.
#pragma once

#include <source_location>
#include <string>
#include <vector>

#include "graft/array.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/trace.h"

namespace graft::detail {

std::vector<Array> bind(ir::Op op, const std::vector<Array>& inputs, ir::Attrs attrs,
                        const std::source_location& loc);
Array bind1(ir::Op op, const std::vector<Array>& inputs, ir::Attrs attrs, const std::source_location& loc);

// Where a node or error is attributed: the user's line. A call site inside
// graft itself (its API layer, or a template of its public headers) is not
// one: it becomes the user's line of the composite function being traced,
// else the last user line seen on this thread, else unknown.
ir::SourceLoc to_loc(const std::source_location& loc);

// Marks a composite library function (softmax, gelu, ...) while it runs:
// its nodes form one group named `name` and carry the user's line `loc`.
class Composite {
 public:
  Composite(const char* name, const std::source_location& loc) : scope_(name, to_loc(loc)) {}

 private:
  ir::CompositeScope scope_;
};

// Runs a graph on Arrays: inlined into the active trace (so transforms
// compose), or evaluated by the interpreter when no trace is active.
std::vector<Array> call_graph(const ir::Graph& graph, const std::vector<Array>& inputs);
// The Array's implementation, for its type: throws only for an empty handle
// (a donated Array keeps its shape and dtype, as in JAX).
const ArrayImpl& checked_impl(const Array& a, const char* what);
// The same, for using its data: a donated Array throws DonatedArrayError
// naming `what` and, when given, the user's line.
const ArrayImpl& live_impl(const Array& a, const char* what, const std::source_location* loc = nullptr);
// A concrete Array's values as operator<< prints them, without "Array(" and
// the dtype (debug.print's form); continued rows start with `pad`.
std::string values_text(const Array& x, const std::string& pad);
// " (made at file:line)" for a traced Array whose node records the user's line, else "".
std::string made_at(const ArrayImpl& impl);

}  // namespace graft::detail
