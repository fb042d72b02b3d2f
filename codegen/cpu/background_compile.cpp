#include "codegen/cpu/background_compile.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <thread>

#include "codegen/cpu/compiler.h"
#include "graft/errors.h"

namespace graft::codegen::cpu {

const FusedGraphKernels& PendingKernels::wait() const {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
  return *result_;
}

bool PendingKernels::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::string PendingKernels::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_text_;
}

class BackgroundCompiler {
 public:
  struct Job {
    ir::GraphPtr graph;
    std::weak_ptr<PendingKernels> pending;
    std::function<void(const PendingKernels&)> done;
  };

  // Marks p finished with `result` (or with the error), after `seconds`.
  static void finish(PendingKernels& p, std::unique_ptr<FusedGraphKernels> result, std::exception_ptr error,
                     std::string error_text, double seconds) {
    p.seconds_ = seconds;
    {
      std::lock_guard<std::mutex> lock(p.mu_);
      p.result_ = std::move(result);
      p.error_ = error;
      p.error_text_ = std::move(error_text);
      p.done_ = true;
      if (p.result_) p.ready_.store(p.result_.get(), std::memory_order_release);
    }
    p.done_cv_.notify_all();
  }

  // Never destroyed: its detached worker may outlive static destruction.
  static BackgroundCompiler& get() {
    static BackgroundCompiler* c = new BackgroundCompiler;
    return *c;
  }

  std::shared_ptr<const PendingKernels> submit(ir::GraphPtr graph, std::function<void(const PendingKernels&)> done) {
    auto pending = std::make_shared<PendingKernels>();
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({std::move(graph), pending, std::move(done)});
    if (!started_) {
      started_ = true;
      std::thread([this] { work(); }).detach();
    }
    cv_.notify_all();
    return pending;
  }

  // Compiles job.graph on this thread into p.
  static void run(const Job& job, PendingKernels& p);

  void hold(int delta) {
    std::lock_guard<std::mutex> lock(mu_);
    holds_ += delta;
    cv_.notify_all();
  }

 private:
  void work() {
    // Below the threads that run calls: the interpreter keeps the cores, and
    // the compilers this thread starts inherit its priority.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() && holds_ == 0; });
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      std::shared_ptr<PendingKernels> pending = job.pending.lock();
      if (!pending) continue;  // its executable is gone
      run(job, *pending);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  int holds_ = 0;
  bool started_ = false;
};

void BackgroundCompiler::run(const Job& job, PendingKernels& p) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<FusedGraphKernels> result;
  std::exception_ptr error;
  std::string error_text;
  try {
    result = std::make_unique<FusedGraphKernels>(compile_fused_graph(*job.graph));
  } catch (const std::exception& e) {
    error = std::current_exception();
    error_text = e.what();
  } catch (...) {
    error = std::current_exception();
    error_text = "unknown error";
  }
  finish(p, std::move(result), error, std::move(error_text),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (job.done) job.done(p);
}

std::shared_ptr<const PendingKernels> compile_fused_graph_in_background(
    ir::GraphPtr graph, std::function<void(const PendingKernels&)> on_finished) {
  return BackgroundCompiler::get().submit(std::move(graph), std::move(on_finished));
}

std::shared_ptr<const PendingKernels> compile_fused_graph_now(ir::GraphPtr graph) {
  auto pending = std::make_shared<PendingKernels>();
  BackgroundCompiler::run({std::move(graph), pending, {}}, *pending);
  pending->wait();  // rethrows the compiler's error
  return pending;
}

std::shared_ptr<const PendingKernels> load_fused_graph_if_cached(ir::GraphPtr graph) {
  auto t0 = std::chrono::steady_clock::now();
  if (!graph_modules_on_disk(graph->structural_hash())) return nullptr;  // the usual first run: no emission here
  std::optional<FusedGraphKernels> k;
  try {
    k = compile_fused_graph_if_cached(*graph);
  } catch (const std::exception&) {
    return nullptr;  // a damaged cache entry: the background compile builds it again
  }
  if (!k) return nullptr;
  auto pending = std::make_shared<PendingKernels>();
  BackgroundCompiler::finish(*pending, std::make_unique<FusedGraphKernels>(std::move(*k)), nullptr, "",
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return pending;
}

namespace testing {
HoldBackgroundCompiles::HoldBackgroundCompiles() { BackgroundCompiler::get().hold(+1); }
HoldBackgroundCompiles::~HoldBackgroundCompiles() { BackgroundCompiler::get().hold(-1); }
}  // namespace testing

}  // namespace graft::codegen::cpu
