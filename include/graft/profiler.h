// Profiling: traces of the kernels a program runs (Perfetto / Chrome trace
// files, as jax.profiler.trace writes), and device-memory profiles that
// `go tool pprof` reads (-top, -traces, -diff_base).
#pragma once

#include <string>

#include "graft/device.h"

namespace graft::profiler {

// Writes a gzipped pprof profile of the device's live buffers (and the memory
// jit executables keep), each sample attributed to the user source location,
// op and named scopes that made it. Throws graft::Error if the file cannot be written.
void save_device_memory_profile(const std::string& path, const Device& device = default_device());

// Starts recording every kernel graft runs on the CPU (each node of a jit
// executable, each eager op) and every TraceAnnotation, in memory. Throws
// graft::Error if a trace is already on or `dir` cannot be made.
void start_trace(const std::string& dir);

// Stops recording and writes the trace, a Chrome trace event file that
// ui.perfetto.dev, chrome://tracing and `graft-inspect profile FILE` read, to
// `dir`/graft-<time>-<pid>.trace.json; returns its path. Each kernel is a span
// named by its op (a fused kernel by the ops it fuses), its kind the op's
// family (fusion, linalg, conv, shape, callback, ...), with its shapes, bytes,
// flops and the user's line. Throws graft::Error if no trace is on.
std::string stop_trace();

// A trace for as long as it lives (as `with jax.profiler.trace(dir):`); its
// destructor stops it and writes the file, as stop_trace does.
class trace {
 public:
  explicit trace(const std::string& dir);
  ~trace();
  trace(const trace&) = delete;
  trace& operator=(const trace&) = delete;
};

// A named span in the trace around the code it lives over (as
// jax.profiler.TraceAnnotation); nothing while no trace is on.
class TraceAnnotation {
 public:
  explicit TraceAnnotation(std::string name);
  ~TraceAnnotation();
  TraceAnnotation(const TraceAnnotation&) = delete;
  TraceAnnotation& operator=(const TraceAnnotation&) = delete;

 private:
  std::string name_;
  double start_us_ = -1;
};

}  // namespace graft::profiler
