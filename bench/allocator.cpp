// Allocators side by side on one randomized trace: the BFC allocator, the
// platform allocator (aligned_alloc per request) and glibc malloc.
//   ns per op (an op is one allocate or one free; memory is never touched, so
//   this is the allocator's own cost)         goal for bfc: <= 100 ns
//   fragmentation = peak reserved / peak in use                goal: <= 1.15
// The trace: 1e6 ops over 64 slots; each op picks a slot at random and frees
// its block, or fills it with a new one of 64 B - 64 MiB (log-uniform). About
// half the slots are live at a time (a bounded live set of ~150 MiB mean).
// Deterministic (fixed seed). Usage: allocator [ops [seed [smallest size]]].
//
// A preallocating BFC reserves its whole limit, so its fragmentation is the
// smallest limit that serves the whole trace (found by bisection) over the
// trace's peak in use. A growing BFC reports the reserved peak its doubling
// growth reached. For malloc, mallinfo2 after every op (in a separate,
// untimed pass) gives reserved = arena + mmapped bytes.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "graft/errors.h"
#include "runtime/bfc_allocator.h"
#include "runtime/platform_allocator.h"

using namespace graft::runtime;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

struct Op {
  uint32_t slot;
  bool alloc;
  size_t size;  // of the block allocated, or freed
};

struct Trace {
  std::vector<Op> ops;
  int slots = 0;
  size_t peak_requested = 0;  // peak of the sum of live request sizes
  size_t peak_chunks = 0;     // the same with sizes rounded as bfc and platform count them
  double mean_live_blocks = 0;
};

Trace make_trace(int n_ops, int slots, uint64_t seed, double min_size = 64.0) {
  Trace t;
  t.slots = slots;
  t.ops.reserve(n_ops);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, slots - 1);
  std::uniform_real_distribution<double> log_size(std::log(min_size), std::log(64.0 * MiB));
  std::vector<size_t> live(slots, 0);
  size_t requested = 0, chunks = 0, live_blocks = 0;
  double sum_live = 0;
  for (int i = 0; i < n_ops; ++i) {
    uint32_t s = static_cast<uint32_t>(pick(rng));
    if (live[s]) {
      t.ops.push_back({s, false, live[s]});
      requested -= live[s];
      chunks -= BfcAllocator::chunk_size(live[s]);
      live[s] = 0;
      --live_blocks;
    } else {
      size_t n = static_cast<size_t>(std::exp(log_size(rng)));
      t.ops.push_back({s, true, n});
      live[s] = n;
      requested += n;
      chunks += BfcAllocator::chunk_size(n);
      ++live_blocks;
      t.peak_requested = std::max(t.peak_requested, requested);
      t.peak_chunks = std::max(t.peak_chunks, chunks);
    }
    sum_live += live_blocks;
  }
  // Free what is left, so every run ends empty.
  for (int s = 0; s < slots; ++s)
    if (live[s]) t.ops.push_back({static_cast<uint32_t>(s), false, live[s]});
  t.mean_live_blocks = sum_live / n_ops;
  return t;
}

// Replays the trace; returns seconds. `after_op` (may be empty) runs after each op.
template <class Alloc, class Free>
double replay(const Trace& t, Alloc&& alloc, Free&& free, const std::function<void()>& after_op = {}) {
  std::vector<void*> ptrs(t.slots, nullptr);
  auto t0 = std::chrono::steady_clock::now();
  for (const Op& op : t.ops) {
    if (op.alloc)
      ptrs[op.slot] = alloc(op.size);
    else
      free(ptrs[op.slot], op.size);
    if (after_op) after_op();
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

double time_allocator(const Trace& t, Allocator& a) {
  return replay(
      t, [&](size_t n) { return a.allocate(n); }, [&](void* p, size_t n) { a.deallocate(p, n); });
}

// Does a bfc of `limit` bytes serve the whole trace? Its stats go to `stats`.
bool serves(const Trace& t, size_t limit, bool preallocate, AllocatorStats* stats = nullptr) {
  BfcAllocator bfc(limit, preallocate);
  bool ok = true;
  try {
    time_allocator(t, bfc);
  } catch (const graft::OutOfMemoryError&) {
    ok = false;
  }
  if (stats) *stats = bfc.stats();
  return ok;
}

// The smallest limit (to 0.1% of the peak) with which a bfc serves the trace.
size_t smallest_limit(const Trace& t, bool preallocate) {
  size_t lo = t.peak_chunks, hi = 2 * t.peak_chunks;  // lo may fail, hi must serve
  while (!serves(t, hi, preallocate)) hi *= 2;
  if (serves(t, lo, preallocate)) return lo;
  while (hi - lo > t.peak_chunks / 1000) {
    size_t mid = lo + (hi - lo) / 2;
    (serves(t, mid, preallocate) ? hi : lo) = mid;
  }
  return hi;
}

size_t reserved_by_malloc() {
  struct mallinfo2 mi = mallinfo2();
  return mi.arena + mi.hblkhd;
}

struct Row {
  std::string name;
  double ns_per_op;
  double peak_in_use_mib;
  double peak_reserved_mib;
  double fragmentation;
};

void print_row(const Row& r) {
  std::printf("%-48s %8.1f %12.1f %14.1f %10.3f\n", r.name.c_str(), r.ns_per_op, r.peak_in_use_mib,
              r.peak_reserved_mib, r.fragmentation);
}

}  // namespace

int main(int argc, char** argv) {
  int n_ops = argc > 1 ? std::atoi(argv[1]) : 1000000;
  const int slots = 64;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 42;
  Trace t = make_trace(n_ops, slots, seed, argc > 3 ? std::atof(argv[3]) : 64.0);
  const double ops = static_cast<double>(t.ops.size());
  const int repeats = 3;
  std::printf("trace: %zu ops (allocs + frees), sizes 64 B - 64 MiB log-uniform, %d slots (%.1f live on average), seed %llu\n",
              t.ops.size(), slots, t.mean_live_blocks, static_cast<unsigned long long>(seed));
  std::printf("peak in use: %.1f MiB requested, %.1f MiB as 64-byte-rounded chunks\n\n", t.peak_requested / MiB,
              t.peak_chunks / MiB);
  std::printf("%-48s %8s %12s %14s %10s\n", "allocator", "ns/op", "peak in use", "peak reserved", "reserved/");
  std::printf("%-48s %8s %12s %14s %10s\n", "", "", "(MiB)", "(MiB)", "in use");

  std::vector<Row> rows;
  const size_t roomy = 4 * t.peak_chunks;

  // bfc, preallocated with room to spare: the cost per op.
  double best = 1e300;
  AllocatorStats prealloc_stats;
  for (int r = 0; r < repeats; ++r) {
    BfcAllocator bfc(roomy, true);
    best = std::min(best, time_allocator(t, bfc));
    prealloc_stats = bfc.stats();
  }
  double bfc_ns = best / ops * 1e9;
  rows.push_back({"bfc, preallocated (limit 4x peak)", bfc_ns, prealloc_stats.peak_bytes_in_use / MiB,
                  prealloc_stats.peak_bytes_reserved / MiB,
                  double(prealloc_stats.peak_bytes_reserved) / double(prealloc_stats.peak_bytes_in_use)});

  // bfc, preallocated with the smallest limit that serves the trace.
  size_t prealloc_limit = smallest_limit(t, true);
  double bfc_frag = double(prealloc_limit) / double(t.peak_chunks);
  rows.push_back({"bfc, preallocated (smallest limit that serves)", bfc_ns, t.peak_chunks / MiB,
                  prealloc_limit / MiB, bfc_frag});

  // bfc, growing on demand: doubling growth overshoots unless the limit caps it.
  best = 1e300;
  AllocatorStats grow_stats;
  for (int r = 0; r < repeats; ++r) {
    BfcAllocator bfc(roomy, false);
    best = std::min(best, time_allocator(t, bfc));
    grow_stats = bfc.stats();
  }
  rows.push_back({"bfc, growing (limit 4x peak)", best / ops * 1e9, grow_stats.peak_bytes_in_use / MiB,
                  grow_stats.peak_bytes_reserved / MiB,
                  double(grow_stats.peak_bytes_reserved) / double(grow_stats.peak_bytes_in_use)});
  size_t grow_limit = smallest_limit(t, false);
  serves(t, grow_limit, false, &grow_stats);
  rows.push_back({"bfc, growing (smallest limit that serves)", best / ops * 1e9, grow_stats.peak_bytes_in_use / MiB,
                  grow_stats.peak_bytes_reserved / MiB,
                  double(grow_stats.peak_bytes_reserved) / double(grow_stats.peak_bytes_in_use)});

  // platform: aligned_alloc per request; its own reserved is its in use.
  {
    PlatformAllocator platform;
    best = 1e300;
    for (int r = 0; r < repeats; ++r) best = std::min(best, time_allocator(t, platform));
    AllocatorStats st = platform.stats();
    rows.push_back({"platform (aligned_alloc; own accounting)", best / ops * 1e9, st.peak_bytes_in_use / MiB,
                    st.peak_bytes_reserved / MiB, double(st.peak_bytes_reserved) / double(st.peak_bytes_in_use)});
  }

  // glibc malloc: first an untimed pass that reads mallinfo2 after every op.
  malloc_trim(0);
  size_t base = reserved_by_malloc(), peak_reserved = 0;
  replay(
      t, [](size_t n) { return std::malloc(n); }, [](void* p, size_t) { std::free(p); },
      [&] {
        size_t now = reserved_by_malloc();
        peak_reserved = std::max(peak_reserved, now - std::min(base, now));
      });
  best = 1e300;
  for (int r = 0; r < repeats; ++r)
    best = std::min(best, replay(
                              t, [](size_t n) { return std::malloc(n); }, [](void* p, size_t) { std::free(p); }));
  rows.push_back({"glibc malloc (mallinfo2: arena + mmapped)", best / ops * 1e9, t.peak_requested / MiB,
                  peak_reserved / MiB, double(peak_reserved) / double(t.peak_requested)});

  for (const Row& r : rows) print_row(r);
  std::printf("\ngoals: bfc %.1f ns/op (goal <= 100: %s), bfc fragmentation %.3f (goal <= 1.15: %s)\n", bfc_ns,
              bfc_ns <= 100 ? "met" : "MISSED", bfc_frag, bfc_frag <= 1.15 ? "met" : "MISSED");
  return 0;
}
