// The non-template side of transform wrappers' graph caches.
#include "graft/graph_cache.h"

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

size_t GraphCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

size_t GraphCache::traces() const {
  std::lock_guard lock(mutex_);
  return traces_;
}

void GraphCache::count_trace() {
  std::lock_guard lock(mutex_);
  ++traces_;
}

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
