// Fibres with ucontext. Switches are annotated for AddressSanitizer and
// ThreadSanitizer (each fibre has its own stack), so the sanitizer builds run
// the emulated device too.
#include "codegen/cuda/emulator/fibres.h"

#include <ucontext.h>

#include <memory>
#include <vector>

#include "graft/errors.h"

#if defined(__SANITIZE_ADDRESS__)
#define GRAFT_FIBRES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRAFT_FIBRES_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GRAFT_FIBRES_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GRAFT_FIBRES_TSAN 1
#endif
#endif

#ifdef GRAFT_FIBRES_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef GRAFT_FIBRES_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace graft::codegen::cuda::emulator {
namespace {

#ifdef GRAFT_FIBRES_ASAN
constexpr size_t kStackBytes = 512 << 10;  // instrumented frames are larger
#else
constexpr size_t kStackBytes = 64 << 10;
#endif

enum class State : uint8_t { runnable, at_barrier, at_shuffle, done };

struct Fibre {
  ucontext_t ctx;
  char* stack = nullptr;
  Coords coords;
  State state = State::runnable;
  uint64_t shuffle_value = 0, shuffle_result = 0;
  unsigned shuffle_delta = 0;
#ifdef GRAFT_FIBRES_TSAN
  void* tsan = nullptr;
#endif
};

// The block being run on this host thread.
struct BlockRun {
  Entry entry = nullptr;
  const void* params = nullptr;
  Fibre* current = nullptr;
  ucontext_t scheduler;
  const void* scheduler_bottom = nullptr;
  size_t scheduler_size = 0;
#ifdef GRAFT_FIBRES_TSAN
  void* tsan_scheduler = nullptr;
#endif
};

thread_local BlockRun* g_run = nullptr;

// Fibre stacks, kept per host thread between launches.
std::vector<std::unique_ptr<char[]>>& stack_pool() {
  thread_local std::vector<std::unique_ptr<char[]>> pool;
  return pool;
}

void to_fibre(BlockRun& r, Fibre& f) {
  r.current = &f;
#ifdef GRAFT_FIBRES_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
#endif
#ifdef GRAFT_FIBRES_TSAN
  __tsan_switch_to_fiber(f.tsan, 0);
#endif
  swapcontext(&r.scheduler, &f.ctx);
#ifdef GRAFT_FIBRES_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void to_scheduler(BlockRun& r, Fibre& f, bool finished) {
#ifdef GRAFT_FIBRES_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake, r.scheduler_bottom, r.scheduler_size);
#else
  (void)finished;
#endif
#ifdef GRAFT_FIBRES_TSAN
  __tsan_switch_to_fiber(r.tsan_scheduler, 0);
#endif
  swapcontext(&f.ctx, &r.scheduler);
#ifdef GRAFT_FIBRES_ASAN
  __sanitizer_finish_switch_fiber(fake, &r.scheduler_bottom, &r.scheduler_size);
#endif
}

void trampoline() {
  BlockRun& r = *g_run;
#ifdef GRAFT_FIBRES_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &r.scheduler_bottom, &r.scheduler_size);
#endif
  Fibre& f = *r.current;
  r.entry(r.params);
  f.state = State::done;
  to_scheduler(r, f, true);  // never resumed
}

Fibre& current() {
  if (!g_run || !g_run->current) throw Error("cuda emulator: a device function ran outside a kernel launch");
  return *g_run->current;
}

const Coords* coords_cb() { return &current().coords; }

void syncthreads_cb() {
  Fibre& f = current();
  f.state = State::at_barrier;
  to_scheduler(*g_run, f, false);
}

uint64_t shfl_down_cb(uint64_t value, unsigned delta) {
  Fibre& f = current();
  f.shuffle_value = value;
  f.shuffle_delta = delta;
  f.state = State::at_shuffle;
  to_scheduler(*g_run, f, false);
  return f.shuffle_result;
}

const Runtime kRuntime{kRuntimeVersion, &coords_cb, &syncthreads_cb, &shfl_down_cb};

std::string where(const std::string& kernel, unsigned block) {
  return "cuda emulator: kernel " + kernel + ", block " + std::to_string(block) + ": ";
}

// After every fibre stopped: releases the warps whose threads all wait at a
// shuffle, else the block when all wait at the barrier. False when all are done.
bool release(std::vector<Fibre>& fs, const std::string& kernel, unsigned block) {
  const size_t n = fs.size();
  size_t done = 0, barrier = 0;
  for (const Fibre& f : fs) done += f.state == State::done, barrier += f.state == State::at_barrier;
  if (done == n) return false;
  bool released = false;
  for (size_t w = 0; w < n; w += kWarpSize) {
    const size_t end = std::min(n, w + kWarpSize);
    size_t waiting = 0;
    for (size_t t = w; t < end; ++t) waiting += fs[t].state == State::at_shuffle;
    if (waiting == 0) continue;
    if (waiting != end - w) continue;  // the others may still come (or the block is stuck: below)
    for (size_t t = w; t < end; ++t) {
      const size_t src = t + fs[t].shuffle_delta;
      fs[t].shuffle_result = src < end ? fs[src].shuffle_value : fs[t].shuffle_value;
    }
    for (size_t t = w; t < end; ++t) fs[t].state = State::runnable;
    released = true;
  }
  if (released) return true;
  if (barrier + done == n) {
    if (done > 0)
      throw Error(where(kernel, block) + "__syncthreads() reached by " + std::to_string(barrier) + " of " +
                  std::to_string(n) + " threads; the other " + std::to_string(done) +
                  " returned without reaching it (a divergent barrier: on a GPU the block would hang or "
                  "compute garbage)");
    for (Fibre& f : fs) f.state = State::runnable;
    return true;
  }
  size_t shuffle = 0;
  for (const Fibre& f : fs) shuffle += f.state == State::at_shuffle;
  throw Error(where(kernel, block) + "threads wait forever: " + std::to_string(barrier) + " at __syncthreads(), " +
              std::to_string(shuffle) + " at a warp shuffle whose warp did not all arrive, " + std::to_string(done) +
              " returned (of " + std::to_string(n) + ")");
}

}  // namespace

const Runtime& runtime() { return kRuntime; }

void launch(Entry entry, const void* params, unsigned grid, unsigned block, const std::string& kernel) {
  if (block == 0 || block > 1024) throw Error("cuda emulator: kernel " + kernel + ": " + std::to_string(block) + " threads per block (1 to 1024)");
  if (g_run) throw Error("cuda emulator: kernel " + kernel + " launched from inside a kernel");
  std::vector<std::unique_ptr<char[]>>& pool = stack_pool();
  while (pool.size() < block) pool.push_back(std::make_unique<char[]>(kStackBytes));
  std::vector<Fibre> fs(block);
  BlockRun run;
  run.entry = entry;
  run.params = params;
  g_run = &run;
  struct Reset {
    ~Reset() { g_run = nullptr; }
  } reset;
#ifdef GRAFT_FIBRES_TSAN
  run.tsan_scheduler = __tsan_get_current_fiber();
  for (Fibre& f : fs) f.tsan = __tsan_create_fiber(0);
  struct DestroyFibres {
    std::vector<Fibre>& fs;
    ~DestroyFibres() {
      for (Fibre& f : fs) __tsan_destroy_fiber(f.tsan);
    }
  } destroy{fs};
#endif
  for (unsigned b = 0; b < grid; ++b) {
    for (unsigned t = 0; t < block; ++t) {
      Fibre& f = fs[t];
      f.stack = pool[t].get();
      f.state = State::runnable;
      f.coords = Coords{{t, 0, 0}, {b, 0, 0}, {block, 1, 1}, {grid, 1, 1}};
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack;
      f.ctx.uc_stack.ss_size = kStackBytes;
      f.ctx.uc_link = nullptr;
      makecontext(&f.ctx, &trampoline, 0);
    }
    try {
      do {
        for (Fibre& f : fs)
          if (f.state == State::runnable) to_fibre(run, f);
      } while (release(fs, kernel, b));
    } catch (const Error&) {
#ifdef GRAFT_FIBRES_ASAN
      // The abandoned fibres' frames leave poisoned stack behind.
      for (unsigned t = 0; t < block; ++t) __asan_unpoison_memory_region(pool[t].get(), kStackBytes);
#endif
      throw;
    }
  }
}

}  // namespace graft::codegen::cuda::emulator
