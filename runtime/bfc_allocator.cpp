#include "runtime/bfc_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/intrusive/set.hpp>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/errors.h"

#if defined(__SANITIZE_ADDRESS__)
#define GRAFT_BFC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRAFT_BFC_ASAN 1
#endif
#endif
#if defined(GRAFT_BFC_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace graft::runtime {
namespace {

namespace bi = boost::intrusive;

constexpr size_t kGranule = kBufferAlignment;
static_assert(std::has_single_bit(kGranule));
constexpr int kGranuleBits = std::countr_zero(kGranule);
constexpr int kNumBins = 64;  // bin b holds free chunks of [64 << b, 64 << (b + 1)) bytes

// Free memory is poisoned under AddressSanitizer, so a read or write past the
// requested bytes of a block, or into a freed block, is reported.
inline void poison(const void* p, size_t n) {
#if defined(GRAFT_BFC_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}
inline void unpoison(const void* p, size_t n) {
#if defined(GRAFT_BFC_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

struct Region;

// A piece of a region. Free chunks are linked into their bin's tree through
// the hook; live ones are found by pointer in PointerTable.
struct Chunk : bi::set_base_hook<bi::link_mode<bi::normal_link>, bi::optimize_size<true>> {
  char* ptr = nullptr;
  size_t size = 0;
  Chunk* prev = nullptr;  // neighbours in address order within the region
  Chunk* next = nullptr;  // (also links the spare chunk records)
  Region* region = nullptr;
  bool in_use = false;
};

struct Region {
  char* base;
  size_t size;
  Chunk* first;  // at `base`; never merged away, so stable for the region's life
};

struct FreeOrder {
  bool operator()(const Chunk& a, const Chunk& b) const { return a.size != b.size ? a.size < b.size : a.ptr < b.ptr; }
};
struct SizeKey {
  bool operator()(const Chunk& a, size_t size) const { return a.size < size; }
  bool operator()(size_t size, const Chunk& a) const { return size < a.size; }
};
using Bin = bi::set<Chunk, bi::compare<FreeOrder>, bi::constant_time_size<false>>;

inline int bin_index(size_t size) { return std::bit_width(size >> kGranuleBits) - 1; }

// Open addressing (linear probing, backward-shift deletion) from a live
// chunk's address to its record. Addresses are 64-byte aligned and never 0.
class PointerTable {
 public:
  PointerTable() { rehash(64); }

  void insert(const char* key, Chunk* value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    place(reinterpret_cast<uintptr_t>(key), value);
    ++size_;
  }

  Chunk* find(const void* key) const {
    uintptr_t k = reinterpret_cast<uintptr_t>(key);
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      if (slots_[i].key == k) return slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // Removes `key`; nullptr if it is not there.
  Chunk* take(const void* key) {
    uintptr_t k = reinterpret_cast<uintptr_t>(key);
    if (k == 0) return nullptr;
    size_t i = home(k);
    while (slots_[i].key != k) {
      if (slots_[i].key == 0) return nullptr;
      i = (i + 1) & mask_;
    }
    Chunk* value = slots_[i].value;
    // Shift later entries of the probe run back over the hole.
    for (size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      size_t h = home(slots_[j].key);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    return value;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uintptr_t key = 0;
    Chunk* value = nullptr;
  };

  size_t home(uintptr_t k) const { return static_cast<size_t>(((k >> kGranuleBits) * 0x9E3779B97F4A7C15ull) >> shift_); }

  void place(uintptr_t k, Chunk* value) {
    size_t i = home(k);
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{k, value};
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    for (const Slot& s : old)
      if (s.key != 0) place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

// Host pages: each region sits at the start of an address window reserved
// without access (PROT_NONE, MAP_NORESERVE: no memory is committed or
// charged), so that extend() makes more of the window usable in place.
class HostPages final : public MemorySource {
 public:
  // Address space only: 64 GiB per region, or the region itself when larger.
  static constexpr size_t kWindow = size_t{64} << 30;

  void* reserve(size_t n) override {
    const size_t window = std::max(n, kWindow);
    void* p = mmap(nullptr, window, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {  // no room for the window (a tight RLIMIT_AS): the region alone
      p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      std::lock_guard<std::mutex> lock(mutex_);
      windows_[p] = n;
      return p;
    }
    if (mprotect(p, n, PROT_READ | PROT_WRITE) != 0) {
      munmap(p, window);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    windows_[p] = window;
    return p;
  }
  bool extend(void* base, size_t bytes, size_t new_bytes) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = windows_.find(base);
      if (it == windows_.end() || new_bytes > it->second) return false;
    }
    // From the page that holds the old end (already accessible: mprotect
    // works on whole pages) to the new end, rounded up by mprotect itself.
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t from = (reinterpret_cast<uintptr_t>(base) + bytes) / page * page;
    const uintptr_t to = reinterpret_cast<uintptr_t>(base) + new_bytes;
    return mprotect(reinterpret_cast<void*>(from), to - from, PROT_READ | PROT_WRITE) == 0;
  }
  void release(void* base, size_t n) override {
    size_t window = n;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = windows_.find(base);
      if (it != windows_.end()) {
        window = it->second;
        windows_.erase(it);
      }
    }
    munmap(base, window);
  }
  bool host_addressable() const override { return true; }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, size_t> windows_;  // region base -> its window's size
};

[[noreturn]] void fail(const char* what, const std::string& where = {}) {
  std::string message = "bfc allocator invariant broken: ";
  message += what;
  message += where;
  throw std::logic_error(message);
}

}  // namespace

struct BfcAllocator::Impl {
  static constexpr size_t kMinExtension = size_t{256} << 10;
  std::unique_ptr<MemorySource> source;
  bool poisons;  // host memory: free chunks are poisoned under AddressSanitizer
  size_t limit;
  bool preallocate;
  size_t next_growth;

  mutable std::mutex mutex;
  std::vector<Region*> regions;
  std::array<Bin, kNumBins> bins;
  uint64_t nonempty = 0;  // bit b: bins[b] has a chunk
  PointerTable live;
  std::vector<std::unique_ptr<Chunk[]>> slabs;
  Chunk* spare = nullptr;

  size_t in_use = 0, peak_in_use = 0, reserved = 0, peak_reserved = 0, largest_alloc = 0;
  int64_t num_allocs = 0;

  Impl(size_t limit_, bool preallocate_, std::unique_ptr<MemorySource> source_)
      : source(source_ ? std::move(source_) : host_pages()),
        poisons(source->host_addressable()),
        limit(limit_ / kGranule * kGranule), preallocate(preallocate_), next_growth(std::min(kInitialGrowth, limit)) {
    if (limit == 0) throw std::invalid_argument("bfc allocator: the limit must be at least 64 bytes");
    if (preallocate && !add_region(limit)) {
      std::string detail = "The system refused to preallocate the limit (";
      detail += std::to_string(limit);
      detail += " bytes).";
      throw OutOfMemoryError(out_of_memory_message("bfc", limit, stats(), detail));
    }
  }

  ~Impl() {
    for (Bin& bin : bins) bin.clear();
    for (Region* r : regions) {
      if (poisons) unpoison(r->base, r->size);
      source->release(r->base, r->size);
      delete r;
    }
  }

  // ---- chunk records
  Chunk* new_chunk() {
    if (!spare) {
      constexpr size_t kSlab = 256;
      slabs.push_back(std::make_unique<Chunk[]>(kSlab));
      Chunk* slab = slabs.back().get();
      for (size_t i = 0; i < kSlab; ++i) slab[i].next = i + 1 < kSlab ? &slab[i + 1] : nullptr;
      spare = slab;
    }
    Chunk* c = spare;
    spare = c->next;
    c->next = nullptr;
    return c;
  }

  void drop_chunk(Chunk* c) {
    c->ptr = nullptr;
    c->size = 0;
    c->prev = nullptr;
    c->region = nullptr;
    c->in_use = false;
    c->next = spare;
    spare = c;
  }

  // ---- bins
  void insert_free(Chunk* c) {
    int b = bin_index(c->size);
    bins[b].insert(*c);
    nonempty |= uint64_t{1} << b;
  }

  void remove_free(Chunk* c) {
    int b = bin_index(c->size);
    bins[b].erase(bins[b].iterator_to(*c));
    if (bins[b].empty()) nonempty &= ~(uint64_t{1} << b);
  }

  // The smallest free chunk of at least `size` bytes (lowest address among equals).
  Chunk* best_fit(size_t size) {
    int b = bin_index(size);
    if (nonempty >> b & 1) {
      auto it = bins[b].lower_bound(size, SizeKey{});
      if (it != bins[b].end()) return &*it;
    }
    uint64_t larger = b + 1 < kNumBins ? nonempty & (~uint64_t{0} << (b + 1)) : 0;
    if (!larger) return nullptr;
    return &*bins[std::countr_zero(larger)].begin();
  }

  size_t largest_free() const {
    if (!nonempty) return 0;
    return bins[63 - std::countl_zero(nonempty)].rbegin()->size;
  }

  // ---- regions
  Chunk* add_region(size_t size) {
    void* p = source->reserve(size);
    if (!p) return nullptr;
    if (poisons) poison(p, size);
    Region* r = new Region{static_cast<char*>(p), size, nullptr};
    Chunk* c = new_chunk();
    c->ptr = r->base;
    c->size = size;
    c->region = r;
    r->first = c;
    regions.push_back(r);
    reserved += size;
    peak_reserved = std::max(peak_reserved, reserved);
    insert_free(c);
    return c;
  }

  size_t release_free_regions() {
    if (preallocate) return 0;
    size_t released = 0;
    std::erase_if(regions, [&](Region* r) {
      Chunk* c = r->first;
      if (c->in_use || c->size != r->size) return false;
      remove_free(c);
      drop_chunk(c);
      if (poisons) unpoison(r->base, r->size);
      source->release(r->base, r->size);
      released += r->size;
      delete r;
      return true;
    });
    reserved -= released;
    return released;
  }

  // The last chunk of a region (a walk: growth is rare).
  static Chunk* last_chunk(const Region* r) {
    Chunk* c = r->first;
    while (c->next) c = c->next;
    return c;
  }

  // Extends a region in place so that its end holds a free chunk of at least
  // `size` bytes, by max(what is missing, a sixteenth of what is reserved,
  // 256 KiB): steps of about 6 % keep reserved memory within 1.15x of the
  // peak in use, where doubling regions reached 1.5x, and the floor keeps
  // small heaps from growing a page at a time. The newest region is tried
  // first. Returns that free chunk, or nullptr.
  Chunk* extend_region(size_t size) {
    for (auto it = regions.rbegin(); it != regions.rend(); ++it) {
      Region* r = *it;
      Chunk* tail = last_chunk(r);
      const size_t have = tail->in_use ? 0 : tail->size;
      const size_t missing = size - std::min(size, have);
      const size_t step = std::max({missing, reserved / 16, kMinExtension}) / kGranule * kGranule;
      const size_t available = limit - reserved;
      if (missing > available) continue;
      size_t delta = std::min(step, available);
      if (!source->extend(r->base, r->size, r->size + delta)) {
        if (delta == missing || !source->extend(r->base, r->size, r->size + missing)) continue;
        delta = missing;
      }
      if (poisons) poison(r->base + r->size, delta);
      if (!tail->in_use) {
        remove_free(tail);
        tail->size += delta;
      } else {
        Chunk* c = new_chunk();
        c->ptr = r->base + r->size;
        c->size = delta;
        c->region = r;
        c->prev = tail;
        tail->next = c;
        tail = c;
      }
      r->size += delta;
      reserved += delta;
      peak_reserved = std::max(peak_reserved, reserved);
      insert_free(tail);
      return tail;
    }
    return nullptr;
  }

  // A free chunk of at least `size` bytes in an extended or a new region, or
  // nullptr (and why) when the limit or the system refuses.
  Chunk* grow(size_t size, std::string& why) {
    if (preallocate) return nullptr;
    if (Chunk* c = extend_region(size)) return c;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (attempt == 1 && release_free_regions() == 0) break;
      size_t available = limit - reserved;
      if (available < size) {
        why = "Reserving more memory would pass the limit.";
        continue;
      }
      size_t region = std::min(std::max(size, next_growth), available);
      Chunk* c = add_region(region);
      if (!c && region > size) c = add_region(region = size);
      if (c) {
        next_growth = next_growth <= limit / 2 ? next_growth * 2 : limit;
        return c;
      }
      why = "The system refused a new region of ";
      why += std::to_string(region);
      why += " bytes.";
    }
    return nullptr;
  }

  // ---- allocation
  void* allocate(size_t nbytes) {
    size_t size = chunk_size(nbytes);
    Chunk* c = size <= limit ? best_fit(size) : nullptr;
    if (!c) c = grow_or_throw(nbytes, size);
    remove_free(c);
    if (c->size > size) {  // the rest is a multiple of 64 bytes: always a usable chunk
      Chunk* rest = new_chunk();
      rest->ptr = c->ptr + size;
      rest->size = c->size - size;
      rest->region = c->region;
      rest->prev = c;
      rest->next = c->next;
      if (c->next) c->next->prev = rest;
      c->next = rest;
      c->size = size;
      insert_free(rest);  // c was free, so c->next is live: nothing to merge with
    }
    c->in_use = true;
    live.insert(c->ptr, c);
    in_use += size;
    peak_in_use = std::max(peak_in_use, in_use);
    num_allocs += 1;
    largest_alloc = std::max(largest_alloc, nbytes);
    if (poisons) unpoison(c->ptr, nbytes);
    return c->ptr;
  }

  // The slow path: a free chunk of `size` bytes in a new region, or OutOfMemoryError.
  Chunk* grow_or_throw(size_t nbytes, size_t size) {
    std::string why;
    Chunk* c = size <= limit ? grow(size, why) : nullptr;
    if (!c) throw OutOfMemoryError(out_of_memory_message("bfc", nbytes, stats(), oom_detail(size, why)));
    return c;
  }

  std::string oom_detail(size_t size, const std::string& why) const {
    std::string detail;
    if (size > limit) {
      detail = "The request is larger than the limit.";
      return detail;
    }
    size_t free_bytes = reserved - in_use;
    if (free_bytes >= size) {
      detail = "Free memory is fragmented: ";
      detail += std::to_string(free_bytes);
      detail += " bytes are free but no free block holds ";
      detail += std::to_string(size);
      detail += " bytes.";
    }
    if (!why.empty()) {
      if (!detail.empty()) detail += ' ';
      detail += why;
    }
    return detail;
  }

  void deallocate(void* ptr) {
    Chunk* c = live.take(ptr);
    if (!c) throw std::invalid_argument("bfc allocator: deallocate of a pointer it does not hold (double free?)");
    c->in_use = false;
    in_use -= c->size;
    if (poisons) poison(c->ptr, c->size);
    if (Chunk* n = c->next; n && !n->in_use) {  // merge the next chunk into c
      remove_free(n);
      c->size += n->size;
      c->next = n->next;
      if (n->next) n->next->prev = c;
      drop_chunk(n);
    }
    if (Chunk* p = c->prev; p && !p->in_use) {  // merge c into the previous chunk
      remove_free(p);
      p->size += c->size;
      p->next = c->next;
      if (c->next) c->next->prev = p;
      drop_chunk(c);
      c = p;
    }
    insert_free(c);
  }

  AllocatorStats stats() const {
    AllocatorStats s;
    s.bytes_in_use = static_cast<int64_t>(in_use);
    s.peak_bytes_in_use = static_cast<int64_t>(peak_in_use);
    s.bytes_limit = static_cast<int64_t>(limit);
    s.bytes_reserved = static_cast<int64_t>(reserved);
    s.peak_bytes_reserved = static_cast<int64_t>(peak_reserved);
    s.num_allocs = num_allocs;
    s.largest_alloc_size = static_cast<int64_t>(largest_alloc);
    s.largest_free_block_bytes = static_cast<int64_t>(largest_free());
    return s;
  }

  void check_invariants() const {
    size_t total_reserved = 0, total_in_use = 0, num_free = 0, num_live = 0;
    for (const Region* r : regions) {
      total_reserved += r->size;
      if (reinterpret_cast<uintptr_t>(r->base) % kGranule) fail("a region is not 64-byte aligned");
      const Chunk* c = r->first;
      if (!c || c->ptr != r->base || c->prev) fail("a region's first chunk is not at its base");
      size_t covered = 0;
      for (; c; c = c->next) {
        std::string at = " (chunk at offset ";
        at += std::to_string(c->ptr - r->base);
        at += ')';
        if (c->region != r) fail("a chunk names the wrong region", at);
        if (c->ptr != r->base + covered) fail("chunks do not tile their region", at);
        if (c->size == 0 || c->size % kGranule) fail("a chunk size is not a positive multiple of 64", at);
        if (c->next && c->next->prev != c) fail("prev and next links disagree", at);
        covered += c->size;
        if (covered > r->size) fail("chunks run past the end of their region", at);
        if (c->in_use) {
          ++num_live;
          total_in_use += c->size;
          if (live.find(c->ptr) != c) fail("a live chunk is not in the pointer table", at);
        } else {
          ++num_free;
          if (c->next && !c->next->in_use) fail("two adjacent chunks are free", at);
          const Bin& bin = bins[bin_index(c->size)];
          auto it = bin.find(*c);
          if (it == bin.end() || &*it != c) fail("a free chunk is not in the bin for its size", at);
        }
      }
      if (covered != r->size) fail("chunks do not cover their region");
    }
    size_t in_bins = 0;
    for (int b = 0; b < kNumBins; ++b) {
      if (bins[b].empty() == bool(nonempty >> b & 1)) fail("the non-empty bin mask is wrong");
      for (const Chunk& c : bins[b]) {
        ++in_bins;
        if (c.in_use) fail("a live chunk is in a bin");
        if (bin_index(c.size) != b) fail("a chunk is in the wrong bin");
      }
    }
    if (in_bins != num_free) fail("the bins hold chunks that are not in any region, or a chunk twice");
    if (num_live != live.size()) fail("the pointer table holds chunks that are not live");
    if (total_reserved != reserved) fail("bytes_reserved differs from the regions' sizes");
    if (total_in_use != in_use) fail("bytes_in_use differs from the live chunks' sizes");
    if (reserved > limit) fail("reserved memory is past the limit");
    if (peak_in_use < in_use || peak_reserved < reserved) fail("a peak is below the current value");
  }
};

BfcAllocator::BfcAllocator(size_t limit, bool preallocate, std::unique_ptr<MemorySource> source)
    : impl_(std::make_unique<Impl>(limit, preallocate, std::move(source))) {}

std::unique_ptr<MemorySource> host_pages() { return std::make_unique<HostPages>(); }

BfcAllocator::~BfcAllocator() = default;

size_t BfcAllocator::chunk_size(size_t nbytes) {
  if (nbytes > std::numeric_limits<size_t>::max() - kGranule) return std::numeric_limits<size_t>::max();
  size_t rounded = (nbytes + kGranule - 1) & ~(kGranule - 1);
  return rounded ? rounded : kGranule;
}

void* BfcAllocator::allocate(size_t nbytes) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->allocate(nbytes);
}

void BfcAllocator::deallocate(void* ptr, size_t) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->deallocate(ptr);
}

AllocatorStats BfcAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats();
}

void BfcAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->peak_in_use = impl_->in_use;
  impl_->peak_reserved = impl_->reserved;
}

size_t BfcAllocator::release_free_regions() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->release_free_regions();
}

size_t BfcAllocator::num_regions() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->regions.size();
}

void BfcAllocator::check_invariants() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->check_invariants();
}

}  // namespace graft::runtime
