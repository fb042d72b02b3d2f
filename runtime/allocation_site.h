// Provenance of device memory: the op, named scope and user source location
// that made a buffer. The code about to allocate (eager dispatch, the graph
// walker for each node, a jit executable) sets the thread's current site; a
// Buffer made meanwhile records it. Sites are interned and never freed, so a
// buffer's record stays valid after the graph that made it is gone; there is
// one record per distinct (op, scope, file, function, line), a bounded set in
// any program.
#pragma once

#include <string>
#include <string_view>

namespace graft::runtime {

struct AllocationSite {
  std::string op;        // "mul", "constant", "device_put", ...; empty when unknown
  std::string scope;     // named scopes joined by '/', outermost first
  std::string file;      // the user's source file
  std::string function;  // the user's function
  int line = 0;

  std::string str() const;  // "mul at file.cpp:12 in f (scope a/b)"
};

// The interned record of a site; equal arguments give the same pointer.
const AllocationSite* intern_site(std::string_view op, std::string_view scope, std::string_view file,
                                  std::string_view function, int line);

// The record for allocations that nothing attributed.
const AllocationSite* unknown_site();

// The thread's current site (unknown_site() when none is set).
const AllocationSite* current_site();

// Sets the thread's current site for its lifetime; nests.
class SiteScope {
 public:
  explicit SiteScope(const AllocationSite* site);
  ~SiteScope();
  SiteScope(const SiteScope&) = delete;
  SiteScope& operator=(const SiteScope&) = delete;

 private:
  const AllocationSite* saved_;
};

}  // namespace graft::runtime
