// The memory of a transform wrapper: the graphs it built, so that calling
// the wrapper in a loop does not rebuild them.
//
// jit and pmap key an entry by the abstract signature of the arguments and
// trace f once per signature: as with jax.jit, arrays f closes over are read
// when f is traced and become constants of the compiled graph.
//
// grad, value_and_grad, vjp and vmap read the arrays f closes over at every
// call, as JAX's do: they trace f at every call (cheap) and key the
// transformed graph by the signature and by the traced graph itself (its
// constants by value), so a changed closure gets a graph of its own. A few
// traced graphs are kept per signature (most recent first), so a closure
// that changes at every call does not grow the cache without bound.
//
// Calls whose arguments hold static leaves that cannot be compared are never cached.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "graft/graph.h"
#include "graft/tree.h"

namespace graft::detail {

class GraphCache {
 public:
  // The entry stored under key, or null.
  std::shared_ptr<const void> find(const std::string& key) const;
  void insert(const std::string& key, std::shared_ptr<const void> entry);
  // The entry stored under key for this traced graph, or null.
  std::shared_ptr<const void> find(const std::string& key, const Graph& traced) const;
  void insert(const std::string& key, const Graph& traced, std::shared_ptr<const void> entry);
  static constexpr size_t kTracesPerSignature = 4;
  size_t size() const;
  // jit: how many times the wrapper traced f; grad and vmap: how many
  // transformed graphs they built (cache misses and uncached calls).
  size_t traces() const;
  void count_trace();
  // Over every cache of the process, for tests: transformed graphs built.
  static size_t total_traces();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const void>> entries_;
  struct ByTrace {
    Graph traced;
    size_t hash;
    std::shared_ptr<const void> entry;
  };
  std::unordered_map<std::string, std::vector<ByTrace>> by_trace_;
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
