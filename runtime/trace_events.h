// The profiler's recorder: while a trace is on (profiler::start_trace), each
// kernel a jit executable or an eager op runs, and each TraceAnnotation, is
// a span (name, kind, start, duration, thread, details) kept in memory;
// stop writes them as a Chrome trace event file, which Perfetto
// (ui.perfetto.dev), chrome://tracing and `graft-inspect profile` read.
// Off, a span costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace graft::runtime {

namespace detail {
extern std::atomic<bool> tracing_on;
}

// Whether a trace is being recorded.
inline bool tracing() { return detail::tracing_on.load(std::memory_order_relaxed); }

// Starts recording into memory, to be written under `dir` by stop_tracing;
// throws graft::Error if a trace is already on or dir cannot be made.
void start_tracing(const std::string& dir);

// Stops recording and writes `dir`/graft-<time>-<pid>.trace.json; returns
// its path. Throws graft::Error if no trace is on or the file cannot be written.
std::string stop_tracing();

// Microseconds on the trace's clock (steady, since the process started).
double trace_now_us();

// Records one finished span. `args` is a JSON object's members, already
// escaped ("\"shapes\": \"...\", \"flops\": 12"), or empty.
void record_span(const std::string& name, const char* kind, double start_us, double end_us, const std::string& args);

// JSON string escaping for args.
std::string json_escape(const std::string& s);

}  // namespace graft::runtime
