// The BFC and platform allocators: a randomized property test against a
// reference model, write patterns, exhaustion, growth, exact statistics and
// fragmentation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "graft/errors.h"
#include "runtime/bfc_allocator.h"
#include "runtime/platform_allocator.h"

using namespace graft::runtime;
using graft::OutOfMemoryError;

namespace {

// Regions that cannot grow in place (as a CUDA device's): the allocator adds regions.
class FixedRegions final : public MemorySource {
 public:
  void* reserve(size_t n) override { return host_->reserve(n); }
  void release(void* base, size_t n) override { host_->release(base, n); }
  bool host_addressable() const override { return true; }

 private:
  std::unique_ptr<MemorySource> host_ = host_pages();
};

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The message of the OutOfMemoryError `f` throws ("" if it does not throw).
template <class F>
std::string oom_message(F&& f) {
  try {
    f();
  } catch (const OutOfMemoryError& e) {
    return e.what();
  }
  return "";
}

// Log-uniform in [lo, hi], with some exact edge cases mixed in.
size_t random_size(std::mt19937_64& rng, size_t lo, size_t hi) {
  std::uniform_int_distribution<int> pick(0, 99);
  int k = pick(rng);
  if (k == 0) return 0;
  if (k == 1) return 64 * std::uniform_int_distribution<size_t>(1, 16)(rng);
  std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi)));
  return std::max<size_t>(lo, static_cast<size_t>(std::exp(u(rng))));
}

// Fills a block with a pattern only its owner writes, and checks it.
void fill(void* p, size_t n, uint64_t id) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(id * 131 + i * 7 + (i >> 8));
}
bool intact(const void* p, size_t n, uint64_t id) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(id * 131 + i * 7 + (i >> 8))) return false;
  return true;
}

}  // namespace

TEST_CASE("bfc: chunk sizes are requests rounded up to 64 bytes", "[memory]") {
  CHECK(BfcAllocator::chunk_size(0) == 64);
  CHECK(BfcAllocator::chunk_size(1) == 64);
  CHECK(BfcAllocator::chunk_size(64) == 64);
  CHECK(BfcAllocator::chunk_size(65) == 128);
  CHECK(BfcAllocator::chunk_size(1000) == 1024);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4097}})
    CHECK(PlatformAllocator::rounded_size(n) == BfcAllocator::chunk_size(n));
  CHECK_THROWS_AS(BfcAllocator(0, false), std::invalid_argument);
  CHECK_THROWS_AS(BfcAllocator(63, true), std::invalid_argument);
}

TEST_CASE("bfc: randomized alloc/free against a reference model", "[memory][slow]") {
  const bool preallocate = GENERATE(false, true);
  INFO("preallocate = " << preallocate);
  const size_t limit = 8 * MiB;
  BfcAllocator bfc(limit, preallocate);
  std::mt19937_64 rng(preallocate ? 12345 : 67890);

  struct Block {
    size_t chunk;
  };
  std::map<uintptr_t, Block> live;  // by address: overlap checks look at the neighbours
  std::vector<void*> handles;       // for picking a random live block
  size_t model_in_use = 0, model_peak = 0, model_largest = 0;
  int64_t model_allocs = 0;
  int ooms = 0, grows = 0;
  const size_t max_live = 256;
  const int ops = 100000;

  for (int op = 0; op < ops; ++op) {
    bool do_alloc = handles.empty() || (handles.size() < max_live && std::bernoulli_distribution(0.5)(rng));
    if (do_alloc) {
      size_t n = random_size(rng, 1, MiB);
      size_t chunk = BfcAllocator::chunk_size(n);
      AllocatorStats before = bfc.stats();
      void* p = nullptr;
      try {
        p = bfc.allocate(n);
      } catch (const OutOfMemoryError& e) {
        ++ooms;
        AllocatorStats after = bfc.stats();
        std::string requested = "requested ";
        requested += std::to_string(n);
        requested += " bytes";
        REQUIRE(std::string(e.what()).find(requested) != std::string::npos);
        REQUIRE(after.bytes_in_use == before.bytes_in_use);
        REQUIRE(after.num_allocs == before.num_allocs);
        // It failed only because nothing could hold the chunk.
        REQUIRE(after.largest_free_block_bytes < int64_t(chunk));
        if (preallocate)
          REQUIRE(after.bytes_reserved == int64_t(limit));
        else
          REQUIRE(after.bytes_limit - after.bytes_reserved < int64_t(chunk));
      }
      if (p) {
        REQUIRE(addr(p) % kBufferAlignment == 0);
        auto next = live.lower_bound(addr(p));
        if (next != live.end()) REQUIRE(addr(p) + chunk <= next->first);
        if (next != live.begin()) {
          auto prev = std::prev(next);
          REQUIRE(prev->first + prev->second.chunk <= addr(p));
        }
        live.emplace(addr(p), Block{chunk});
        handles.push_back(p);
        model_in_use += chunk;
        model_peak = std::max(model_peak, model_in_use);
        model_largest = std::max(model_largest, n);
        model_allocs += 1;
        if (bfc.stats().bytes_reserved > before.bytes_reserved) ++grows;
      }
    } else {
      size_t i = std::uniform_int_distribution<size_t>(0, handles.size() - 1)(rng);
      void* p = handles[i];
      handles[i] = handles.back();
      handles.pop_back();
      auto it = live.find(addr(p));
      REQUIRE(it != live.end());
      model_in_use -= it->second.chunk;
      live.erase(it);
      bfc.deallocate(p, 0);
    }
    if (op % 10007 == 0) {
      bfc.reset_peak();
      model_peak = model_in_use;
    }

    AllocatorStats s = bfc.stats();
    REQUIRE(s.bytes_in_use == int64_t(model_in_use));
    REQUIRE(s.peak_bytes_in_use == int64_t(model_peak));
    REQUIRE(s.num_allocs == model_allocs);
    REQUIRE(s.largest_alloc_size == int64_t(model_largest));
    REQUIRE(s.bytes_limit == int64_t(limit));
    REQUIRE(s.bytes_reserved <= s.bytes_limit);
    REQUIRE(s.peak_bytes_reserved >= s.bytes_reserved);
    REQUIRE(s.largest_free_block_bytes <= s.bytes_reserved - s.bytes_in_use);
    if (preallocate) REQUIRE(s.bytes_reserved == int64_t(limit));
    REQUIRE_NOTHROW(bfc.check_invariants());
  }
  // The run exercised exhaustion as well as success, and growth when growing.
  CHECK(ooms > 0);
  CHECK(model_allocs > ops / 5);
  WARN("preallocate " << preallocate << ": " << model_allocs << " allocations, " << ooms << " out of memory, "
                      << grows << " grew");
  if (!preallocate) CHECK(grows > 0);

  for (void* p : handles) bfc.deallocate(p, 0);
  AllocatorStats s = bfc.stats();
  CHECK(s.bytes_in_use == 0);
  // Everything coalesced back: each region is one free chunk.
  CHECK(s.largest_free_block_bytes > 0);
  REQUIRE_NOTHROW(bfc.check_invariants());
  if (preallocate) CHECK(s.largest_free_block_bytes == int64_t(limit));
}

TEST_CASE("bfc: write patterns survive other blocks' traffic", "[memory]") {
  const bool preallocate = GENERATE(false, true);
  BfcAllocator bfc(4 * MiB, preallocate);
  std::mt19937_64 rng(2024);
  struct Block {
    void* p;
    size_t n;
    uint64_t id;
  };
  std::vector<Block> live;
  uint64_t next_id = 1;
  for (int op = 0; op < 20000; ++op) {
    if (live.empty() || (live.size() < 200 && std::bernoulli_distribution(0.5)(rng))) {
      size_t n = random_size(rng, 1, 16 * KiB);
      void* p = bfc.allocate(n);
      fill(p, n, next_id);
      live.push_back({p, n, next_id++});
    } else {
      size_t i = std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng);
      REQUIRE(intact(live[i].p, live[i].n, live[i].id));
      bfc.deallocate(live[i].p, live[i].n);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (const Block& b : live) {
    REQUIRE(intact(b.p, b.n, b.id));
    bfc.deallocate(b.p, b.n);
  }
  CHECK(bfc.stats().bytes_in_use == 0);
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("bfc: threads share one allocator", "[memory]") {
  BfcAllocator bfc(16 * MiB, false);
  auto worker = [&bfc](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::pair<void*, size_t>> mine;
    bool ok = true;
    for (int op = 0; op < 20000; ++op) {
      if (mine.empty() || (mine.size() < 64 && std::bernoulli_distribution(0.5)(rng))) {
        size_t n = random_size(rng, 1, 32 * KiB);
        void* p = bfc.allocate(n);
        fill(p, n, seed);
        mine.emplace_back(p, n);
      } else {
        size_t i = std::uniform_int_distribution<size_t>(0, mine.size() - 1)(rng);
        ok = ok && intact(mine[i].first, mine[i].second, seed);
        bfc.deallocate(mine[i].first, mine[i].second);
        mine[i] = mine.back();
        mine.pop_back();
      }
    }
    for (auto [p, n] : mine) {
      ok = ok && intact(p, n, seed);
      bfc.deallocate(p, n);
    }
    return ok;
  };
  bool ok1 = false, ok2 = false;
  std::thread t1([&] { ok1 = worker(1); });
  std::thread t2([&] { ok2 = worker(2); });
  t1.join();
  t2.join();
  CHECK(ok1);
  CHECK(ok2);
  CHECK(bfc.stats().bytes_in_use == 0);
  CHECK(bfc.stats().num_allocs > 10000);
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("bfc: exhaustion throws OutOfMemoryError naming the numbers", "[memory]") {
  BfcAllocator bfc(1 * MiB, true);
  void* a = bfc.allocate(600 * KiB);
  std::string msg = oom_message([&] { bfc.allocate(600 * KiB); });
  INFO(msg);
  CHECK(msg.find("bfc allocator: out of memory") != std::string::npos);
  CHECK(msg.find("requested 614400 bytes (600.00 KiB)") != std::string::npos);
  CHECK(msg.find("in use 614400 bytes") != std::string::npos);
  CHECK(msg.find("reserved 1048576 bytes (1.00 MiB)") != std::string::npos);
  CHECK(msg.find("limit 1048576 bytes") != std::string::npos);
  CHECK(msg.find("largest free block 434176 bytes") != std::string::npos);
  // The failure changed nothing; the allocator still serves what fits.
  CHECK(bfc.stats().num_allocs == 1);
  CHECK(bfc.stats().bytes_in_use == 600 * KiB);
  void* b = bfc.allocate(400 * KiB);
  CHECK(bfc.stats().bytes_in_use == 1000 * KiB);
  bfc.deallocate(a, 600 * KiB);
  bfc.deallocate(b, 400 * KiB);
  // Larger than the limit itself.
  std::string huge = oom_message([&] { bfc.allocate(2 * MiB); });
  CHECK(huge.find("requested 2097152 bytes") != std::string::npos);
  CHECK(huge.find("larger than the limit") != std::string::npos);
  CHECK(!oom_message([&] { bfc.allocate(SIZE_MAX); }).empty());
  // A pointer it does not hold.
  int x = 0;
  CHECK_THROWS_AS(bfc.deallocate(&x, sizeof x), std::invalid_argument);
  void* c = bfc.allocate(100);
  bfc.deallocate(c, 100);
  CHECK_THROWS_AS(bfc.deallocate(c, 100), std::invalid_argument);  // double free
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("bfc: growing on demand vs preallocating", "[memory]") {
  SECTION("preallocate takes the whole limit at once") {
    BfcAllocator bfc(64 * MiB, true);
    AllocatorStats s = bfc.stats();
    CHECK(s.bytes_reserved == int64_t(64 * MiB));
    CHECK(s.peak_bytes_reserved == int64_t(64 * MiB));
    CHECK(s.largest_free_block_bytes == int64_t(64 * MiB));
    CHECK(s.bytes_in_use == 0);
    CHECK(bfc.num_regions() == 1);
    void* p = bfc.allocate(40 * MiB);
    CHECK(bfc.stats().bytes_reserved == int64_t(64 * MiB));
    bfc.deallocate(p, 40 * MiB);
    CHECK(bfc.release_free_regions() == 0);  // a preallocated region is kept
    CHECK(bfc.stats().bytes_reserved == int64_t(64 * MiB));
  }
  SECTION("growth of a source that cannot extend (a GPU's): max(request, doubling from 2 MiB), capped by the limit") {
    BfcAllocator bfc(64 * MiB, false, std::make_unique<FixedRegions>());
    CHECK(bfc.stats().bytes_reserved == 0);
    CHECK(bfc.stats().largest_free_block_bytes == 0);
    CHECK(bfc.num_regions() == 0);
    void* a = bfc.allocate(1000);  // region 1: 2 MiB
    CHECK(bfc.stats().bytes_reserved == int64_t(2 * MiB));
    CHECK(bfc.stats().largest_free_block_bytes == int64_t(2 * MiB - 1024));
    void* b = bfc.allocate(3 * MiB);  // region 2: max(3, 4) = 4 MiB
    CHECK(bfc.stats().bytes_reserved == int64_t(6 * MiB));
    CHECK(bfc.stats().largest_free_block_bytes == int64_t(2 * MiB - 1024));
    void* c = bfc.allocate(10 * MiB);  // region 3: max(10, 8) = 10 MiB
    CHECK(bfc.stats().bytes_reserved == int64_t(16 * MiB));
    void* d = bfc.allocate(40 * MiB);  // region 4: max(40, 16) = 40 MiB
    CHECK(bfc.stats().bytes_reserved == int64_t(56 * MiB));
    CHECK(bfc.num_regions() == 4);
    bfc.deallocate(c, 10 * MiB);  // region 3 is entirely free now, but kept
    CHECK(bfc.stats().bytes_reserved == int64_t(56 * MiB));
    CHECK(bfc.stats().largest_free_block_bytes == int64_t(10 * MiB));
    // 12 MiB fits nowhere and 8 MiB are left under the limit: region 3 goes
    // back to the system and region 5 takes min(max(12, 32), 64 - 46) = 18 MiB.
    void* e = bfc.allocate(12 * MiB);
    CHECK(bfc.stats().bytes_reserved == int64_t(64 * MiB));
    CHECK(bfc.stats().peak_bytes_reserved == int64_t(64 * MiB));
    CHECK(bfc.num_regions() == 4);
    CHECK(bfc.stats().largest_free_block_bytes == int64_t(6 * MiB));
    std::string msg = oom_message([&] { bfc.allocate(7 * MiB); });
    INFO(msg);
    CHECK(msg.find("requested 7340032 bytes") != std::string::npos);
    CHECK(msg.find("reserved 67108864 bytes") != std::string::npos);
    CHECK(msg.find("limit 67108864 bytes") != std::string::npos);
    CHECK(msg.find("largest free block 6291456 bytes") != std::string::npos);
    CHECK(msg.find("would pass the limit") != std::string::npos);
    REQUIRE_NOTHROW(bfc.check_invariants());
    for (void* p : {a, b, d, e}) bfc.deallocate(p, 0);
    CHECK(bfc.stats().bytes_reserved == int64_t(64 * MiB));  // freed chunks stay reserved
    CHECK(bfc.release_free_regions() == 64 * MiB);
    CHECK(bfc.stats().bytes_reserved == 0);
    CHECK(bfc.stats().peak_bytes_reserved == int64_t(64 * MiB));
    bfc.reset_peak();
    CHECK(bfc.stats().peak_bytes_reserved == 0);
    REQUIRE_NOTHROW(bfc.check_invariants());
  }
  SECTION("growth of host pages: one region extended in place by max(what is missing, reserved / 16, 256 KiB)") {
    BfcAllocator bfc(64 * MiB, false);
    void* a = bfc.allocate(1000);  // 2 MiB
    CHECK(bfc.stats().bytes_reserved == int64_t(2 * MiB));
    void* t = bfc.allocate(64 * 1024);  // fits
    bfc.deallocate(t, 0);
    void* b = bfc.allocate(2 * MiB);  // 1 KiB missing from the free tail: it grows by 256 KiB
    CHECK(bfc.stats().bytes_reserved == int64_t(2 * MiB + 256 * 1024));
    CHECK(bfc.stats().largest_free_block_bytes == int64_t(256 * 1024 - 1024));
    bfc.deallocate(b, 0);
    b = bfc.allocate(3 * MiB);  // 1 MiB - 256 KiB + 1 KiB missing: exactly that
    CHECK(bfc.stats().bytes_reserved == int64_t(3 * MiB + 1024));
    CHECK(bfc.stats().largest_free_block_bytes == 0);
    void* c = bfc.allocate(10 * MiB);  // the tail is in use: 10 MiB more
    CHECK(bfc.stats().bytes_reserved == int64_t(13 * MiB + 1024));
    void* d = bfc.allocate(40 * MiB);  // the tail is in use: 40 MiB more
    CHECK(bfc.stats().bytes_reserved == int64_t(53 * MiB + 1024));
    CHECK(bfc.num_regions() == 1);
    std::memset(d, 1, 40 * MiB);  // every byte handed out is usable
    bfc.deallocate(c, 10 * MiB);
    void* e = bfc.allocate(8 * MiB);  // reuses the hole: nothing new reserved
    CHECK(e == c);
    CHECK(bfc.stats().bytes_reserved == int64_t(53 * MiB + 1024));
    // 12 MiB fits nowhere, and only 11 MiB - 1 KiB are left under the limit.
    std::string msg = oom_message([&] { bfc.allocate(12 * MiB); });
    INFO(msg);
    CHECK(msg.find("largest free block 2097152 bytes") != std::string::npos);
    CHECK(msg.find("would pass the limit") != std::string::npos);
    void* f = bfc.allocate(11 * MiB - 1024);  // the rest of the limit, exactly
    CHECK(bfc.stats().bytes_reserved == int64_t(64 * MiB));
    REQUIRE_NOTHROW(bfc.check_invariants());
    for (void* p : {a, b, d, e, f}) bfc.deallocate(p, 0);
    CHECK(bfc.release_free_regions() == 64 * MiB);
    CHECK(bfc.num_regions() == 0);
    REQUIRE_NOTHROW(bfc.check_invariants());
  }
}

TEST_CASE("bfc: growing on host pages, reserved stays within 1.15x of the peak in use", "[memory]") {
  // Bursts of varied size (as training steps at batch sizes 1..1024 make):
  // each allocates 20 blocks of 1 KiB to 4 MiB scaled by the burst, then frees them.
  BfcAllocator bfc(size_t{4} << 30, false);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> batch(1, 1024);
  std::uniform_real_distribution<double> log_size(std::log(1024.0), std::log(4.0 * MiB));
  std::vector<void*> live;
  for (int step = 0; step < 400; ++step) {
    const double scale = batch(rng) / 1024.0;
    for (int i = 0; i < 20; ++i)
      live.push_back(bfc.allocate(static_cast<size_t>(std::exp(log_size(rng)) * scale) + 64));
    for (void* p : live) bfc.deallocate(p, 0);
    live.clear();
  }
  const AllocatorStats s = bfc.stats();
  INFO("peak reserved " << s.peak_bytes_reserved << ", peak in use " << s.peak_bytes_in_use);
  CHECK(double(s.peak_bytes_reserved) <= 1.15 * double(s.peak_bytes_in_use) + double(2 * MiB));
  CHECK(bfc.num_regions() == 1);
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("bfc: statistics are exact to the byte", "[memory]") {
  BfcAllocator bfc(1 * MiB, true);
  char* p1 = static_cast<char*>(bfc.allocate(1));  // 64
  void* p2 = bfc.allocate(100);                    // 128
  void* p3 = bfc.allocate(0);                      // 64
  void* p4 = bfc.allocate(1000);                   // 1024
  // Best fit from one free chunk hands out its front: consecutive addresses.
  CHECK(p2 == p1 + 64);
  CHECK(p3 == p1 + 192);
  CHECK(p4 == p1 + 256);
  AllocatorStats s = bfc.stats();
  CHECK(s.bytes_in_use == 1280);
  CHECK(s.peak_bytes_in_use == 1280);
  CHECK(s.bytes_limit == 1048576);
  CHECK(s.bytes_reserved == 1048576);
  CHECK(s.peak_bytes_reserved == 1048576);
  CHECK(s.num_allocs == 4);
  CHECK(s.largest_alloc_size == 1000);
  CHECK(s.largest_free_block_bytes == 1048576 - 1280);

  bfc.deallocate(p2, 100);
  s = bfc.stats();
  CHECK(s.bytes_in_use == 1152);
  CHECK(s.peak_bytes_in_use == 1280);
  // Best fit: 64 bytes go into the 128-byte hole, not the big free chunk.
  void* p5 = bfc.allocate(64);
  CHECK(p5 == p2);
  CHECK(bfc.stats().bytes_in_use == 1216);
  bfc.reset_peak();
  CHECK(bfc.stats().peak_bytes_in_use == 1216);
  REQUIRE_NOTHROW(bfc.check_invariants());

  for (void* p : {static_cast<void*>(p1), p3, p4, p5}) bfc.deallocate(p, 0);
  s = bfc.stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.peak_bytes_in_use == 1216);
  CHECK(s.num_allocs == 5);
  CHECK(s.largest_free_block_bytes == 1048576);  // all coalesced into one chunk
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("bfc: fragmentation leaves the largest free block below the free bytes", "[memory]") {
  BfcAllocator bfc(1 * MiB, true);
  std::vector<void*> blocks;
  for (int i = 0; i < 16; ++i) blocks.push_back(bfc.allocate(64 * KiB));
  CHECK(bfc.stats().largest_free_block_bytes == 0);
  for (int i = 0; i < 16; i += 2) bfc.deallocate(blocks[i], 64 * KiB);
  AllocatorStats s = bfc.stats();
  CHECK(s.bytes_in_use == int64_t(512 * KiB));
  CHECK(s.bytes_reserved - s.bytes_in_use == int64_t(512 * KiB));
  CHECK(s.largest_free_block_bytes == int64_t(64 * KiB));
  std::string msg = oom_message([&] { bfc.allocate(128 * KiB); });
  INFO(msg);
  CHECK(msg.find("largest free block 65536 bytes") != std::string::npos);
  CHECK(msg.find("fragmented: 524288 bytes are free") != std::string::npos);
  REQUIRE_NOTHROW(bfc.check_invariants());
  // Freeing block 1 joins blocks 0, 1 and 2 into one 192 KiB chunk.
  bfc.deallocate(blocks[1], 64 * KiB);
  CHECK(bfc.stats().largest_free_block_bytes == int64_t(192 * KiB));
  void* big = bfc.allocate(128 * KiB);
  CHECK(big == blocks[0]);
  CHECK(bfc.stats().largest_free_block_bytes == int64_t(64 * KiB));
  REQUIRE_NOTHROW(bfc.check_invariants());
}

TEST_CASE("platform allocator: exact statistics and an optional limit", "[memory]") {
  PlatformAllocator pa(4096, /*preallocate (ignored)*/ true);
  CHECK(std::string(pa.name()) == "platform");
  CHECK(pa.stats().bytes_reserved == 0);
  void* a = pa.allocate(100);
  void* b = pa.allocate(0);
  CHECK(addr(a) % kBufferAlignment == 0);
  CHECK(addr(b) % kBufferAlignment == 0);
  AllocatorStats s = pa.stats();
  CHECK(s.bytes_in_use == 192);
  CHECK(s.bytes_reserved == 192);
  CHECK(s.bytes_limit == 4096);
  CHECK(s.num_allocs == 2);
  CHECK(s.largest_alloc_size == 100);
  CHECK(s.largest_free_block_bytes == 0);
  std::string msg = oom_message([&] { pa.allocate(5000); });
  INFO(msg);
  CHECK(msg.find("platform allocator: out of memory: requested 5000 bytes") != std::string::npos);
  CHECK(msg.find("in use 192 bytes") != std::string::npos);
  CHECK(msg.find("limit 4096 bytes") != std::string::npos);
  CHECK(pa.stats().bytes_in_use == 192);
  pa.deallocate(a, 100);
  pa.deallocate(b, 0);
  s = pa.stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.peak_bytes_in_use == 192);
  pa.reset_peak();
  CHECK(pa.stats().peak_bytes_in_use == 0);

  PlatformAllocator unlimited;
  CHECK(unlimited.stats().bytes_limit == 0);
  void* big = unlimited.allocate(3 * MiB);
  CHECK(unlimited.stats().bytes_in_use == int64_t(3 * MiB));
  unlimited.deallocate(big, 3 * MiB);
  CHECK(std::string(unlimited.name()) == "platform");
  CHECK(std::string(BfcAllocator(1 * MiB, false).name()) == "bfc");
}
