// The non-template side of transform wrappers' graph caches.
#include "graft/graph_cache.h"

#include <atomic>

#include "ir/graph.h"

namespace graft::detail {

std::shared_ptr<const void> GraphCache::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

void GraphCache::insert(const std::string& key, std::shared_ptr<const void> entry) {
  std::lock_guard lock(mutex_);
  entries_.emplace(key, std::move(entry));  // a racing thread's equal entry may already be there; keep that one
}

std::shared_ptr<const void> GraphCache::find(const std::string& key, const Graph& traced) const {
  const size_t h = traced.ir().structural_hash();
  std::lock_guard lock(mutex_);
  auto it = by_trace_.find(key);
  if (it == by_trace_.end()) return nullptr;
  for (const ByTrace& t : it->second)
    if (t.hash == h && (t.traced.ir_ptr() == traced.ir_ptr() || t.traced.ir() == traced.ir())) return t.entry;
  return nullptr;
}

void GraphCache::insert(const std::string& key, const Graph& traced, std::shared_ptr<const void> entry) {
  const size_t h = traced.ir().structural_hash();
  std::lock_guard lock(mutex_);
  std::vector<ByTrace>& list = by_trace_[key];
  for (const ByTrace& t : list)
    if (t.hash == h && t.traced.ir() == traced.ir()) return;  // a racing thread's equal entry; keep that one
  list.insert(list.begin(), ByTrace{traced, h, std::move(entry)});
  if (list.size() > kTracesPerSignature) list.pop_back();
}

size_t GraphCache::size() const {
  std::lock_guard lock(mutex_);
  size_t n = entries_.size();
  for (const auto& [key, list] : by_trace_) n += list.size();
  return n;
}

size_t GraphCache::traces() const {
  std::lock_guard lock(mutex_);
  return traces_;
}

namespace {
std::atomic<size_t> all_traces{0};
}

void GraphCache::count_trace() {
  all_traces.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  ++traces_;
}

size_t GraphCache::total_traces() { return all_traces.load(std::memory_order_relaxed); }

std::string signature_key(const char* tag, const std::type_info& types, const std::string& structures) {
  // Traced leaves describe as "traced f32[3]": reusing a graph across traces
  // is sound (it is inlined into whichever trace calls it), so they stay in
  // the key only as a distinction, not as a reason to skip the cache.
  if (structures.find(tree::kOpaqueStatic) != std::string::npos) return {};
  std::string key = tag;
  key += '|';
  key += types.name();
  key += '|';
  key += structures;
  return key;
}

}  // namespace graft::detail
