// The memory of a transform wrapper (grad(f), value_and_grad(f), and later
// vmap and jit): the graphs it built, one per abstract signature of its
// arguments, so that calling the wrapper in a loop traces f once.
//
// As with jax.jit, arrays f closes over are read when f is traced and become
// constants of the cached graph: data that changes between calls must be an
// argument. Calls whose f closes over values of an enclosing trace, or whose
// arguments hold static leaves that cannot be compared, are never cached.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>

#include "graft/tree.h"

namespace graft::detail {

class GraphCache {
 public:
  // The entry stored under key, or null.
  std::shared_ptr<const void> find(const std::string& key) const;
  void insert(const std::string& key, std::shared_ptr<const void> entry);
  size_t size() const;
  size_t traces() const;  // how many times a wrapper traced f (cache misses and uncached calls)
  void count_trace();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const void>> entries_;
  size_t traces_ = 0;
};

// The cache key of a call with these arguments: their C++ types and
// structures (leaf dtypes and shapes, static values), plus `tag` for what
// the wrapper varies besides (e.g. which arguments are differentiated).
// Empty when the call must not be cached.
std::string signature_key(const char* tag, const std::type_info& types, const std::string& structures);

template <class... Args>
std::string signature_key(const char* tag, const Args&... args) {
  std::string structures;
  ((structures += tree::structure(args), structures += ';'), ...);
  return signature_key(tag, typeid(std::tuple<Args...>), structures);
}

}  // namespace graft::detail
