// Tiered execution's second tier: the cpu module of a fused graph, compiled
// on a background thread while calls run the same fused graph on the
// interpreter (the first tier). Interpreter and generated kernels compute the
// same bits (emit.h; float sums too, in sum_order.h's order), so which tier
// ran a call is invisible in its results.
//
// One worker thread takes graphs in the order they were jitted; each graph's
// modules compile in parallel (fused_graph.h). A graph whose executable is
// gone by its turn is skipped. At process exit the compilers still running
// are left to finish: each moves its module into the disk cache itself
// (compiler.cpp), so the next run of a short program loads it at its first
// call (load_fused_graph_if_cached).
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "codegen/cpu/fused_graph.h"
#include "ir/graph.h"

namespace graft::codegen::cpu {

class PendingKernels {
 public:
  // The kernels once compiled and loaded; nullptr before, and after a failure.
  const FusedGraphKernels* ready() const { return ready_.load(std::memory_order_acquire); }
  // Blocks until the compile has finished; rethrows its error.
  const FusedGraphKernels& wait() const;
  // Whether the compile has finished (ready, or failed).
  bool finished() const;
  // The compiler's error, "" when none (yet).
  std::string failure() const;
  // Wall time of the compile, once finished.
  double seconds() const { return seconds_.load(); }

 private:
  friend class BackgroundCompiler;
  std::unique_ptr<FusedGraphKernels> result_;
  std::atomic<const FusedGraphKernels*> ready_{nullptr};
  std::atomic<double> seconds_{0};
  mutable std::mutex mu_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::string error_text_;
};

// Queues `graph` for compilation; `on_finished` runs on the worker thread
// when it is done (also when it failed), while the executable is alive.
std::shared_ptr<const PendingKernels> compile_fused_graph_in_background(
    ir::GraphPtr graph, std::function<void(const PendingKernels&)> on_finished = {});

// Compiles `graph` on this thread (JitOptions::wait_for_compile); throws
// graft::Error when the compiler fails.
std::shared_ptr<const PendingKernels> compile_fused_graph_now(ir::GraphPtr graph);

// The kernels of `graph` loaded on this thread when every module is already
// loaded or in the disk cache (a short program's second run: its first call
// runs compiled code), else nullptr (compile in the background).
std::shared_ptr<const PendingKernels> load_fused_graph_if_cached(ir::GraphPtr graph);

namespace testing {
// While one is alive, queued compiles do not start (a test sees the first tier).
class HoldBackgroundCompiles {
 public:
  HoldBackgroundCompiles();
  ~HoldBackgroundCompiles();
  HoldBackgroundCompiles(const HoldBackgroundCompiles&) = delete;
  HoldBackgroundCompiles& operator=(const HoldBackgroundCompiles&) = delete;
};
}  // namespace testing

}  // namespace graft::codegen::cpu
