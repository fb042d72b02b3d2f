#include "runtime/device_threads.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/device.h"
#include "runtime/spin_wait.h"

namespace graft::runtime {
namespace {

class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      stopping_flag_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  void push(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
      queued_.fetch_add(1, std::memory_order_release);
    }
    ready_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      // The next launch usually follows within microseconds: poll before sleeping.
      spin_until([&] { return queued_.load(std::memory_order_acquire) > 0 || stopping_flag_.load(); });
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::atomic<size_t> queued_{0};        // queue_.size(), readable without the lock
  std::atomic<bool> stopping_flag_{false};
  std::thread thread_;  // last: starts once the queue exists
};

struct Workers {
  std::mutex launch;  // held while one launch queues its tasks on every worker
  std::vector<std::unique_ptr<Worker>> by_device;
};

Workers& workers() {
  static Workers w;
  return w;
}

}  // namespace

void run_on_device_threads(const std::vector<Device*>& devices, const std::vector<std::function<void()>>& tasks,
                           const std::function<void()>& here) {
  std::latch done(static_cast<std::ptrdiff_t>(tasks.size()));
  {
    Workers& w = workers();
    std::lock_guard lock(w.launch);
    for (size_t i = 0; i < tasks.size(); ++i) {
      const size_t id = static_cast<size_t>(devices[i]->id());
      if (w.by_device.size() <= id) w.by_device.resize(id + 1);
      if (!w.by_device[id]) w.by_device[id] = std::make_unique<Worker>();
      w.by_device[id]->push([&task = tasks[i], &done] {
        task();
        done.count_down();
      });
    }
  }
  here();
  spin_until([&] { return done.try_wait(); });  // the other replicas usually finish within microseconds
  done.wait();
}

}  // namespace graft::runtime
