// profiler::start_trace, stop_trace, trace and TraceAnnotation over the
// runtime's recorder (runtime/trace_events.h).
#include <cstdio>

#include "graft/profiler.h"
#include "runtime/trace_events.h"

namespace graft::profiler {

void start_trace(const std::string& dir) { runtime::start_tracing(dir); }

std::string stop_trace() { return runtime::stop_tracing(); }

trace::trace(const std::string& dir) { start_trace(dir); }

trace::~trace() {
  try {
    stop_trace();
  } catch (const std::exception& e) {
    // A destructor must not throw; say why the file is missing.
    std::fprintf(stderr, "graft: profiler::trace: %s\n", e.what());
  }
}

TraceAnnotation::TraceAnnotation(std::string name) : name_(std::move(name)) {
  if (runtime::tracing()) start_us_ = runtime::trace_now_us();
}

TraceAnnotation::~TraceAnnotation() {
  if (start_us_ >= 0) runtime::record_span(name_, "annotation", start_us_, runtime::trace_now_us(), "");
}

}  // namespace graft::profiler
