#include "runtime/allocation_site.h"

#include <array>
#include <cstdint>

#include <memory>
#include <mutex>
#include <unordered_set>

namespace graft::runtime {
namespace {

struct SiteHash {
  using is_transparent = void;
  size_t operator()(const AllocationSite* s) const { return hash(s->op, s->scope, s->file, s->function, s->line); }
  static size_t hash(std::string_view op, std::string_view scope, std::string_view file, std::string_view function,
                     int line) {
    std::hash<std::string_view> h;
    size_t seed = h(op);
    for (size_t v : {h(scope), h(file), h(function), std::hash<int>()(line)})
      seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
};
struct SiteEq {
  bool operator()(const AllocationSite* a, const AllocationSite* b) const {
    return a->line == b->line && a->op == b->op && a->file == b->file && a->function == b->function &&
           a->scope == b->scope;
  }
};

struct Interned {
  std::mutex mutex;
  std::unordered_set<const AllocationSite*, SiteHash, SiteEq> sites;
};

Interned& interned() {
  static Interned* table = new Interned();  // never destroyed: buffers may die during static destruction
  return *table;
}

bool same(const AllocationSite& s, std::string_view op, std::string_view scope, std::string_view file,
          std::string_view function, int line) {
  return s.line == line && s.op == op && s.file == file && s.function == function && s.scope == scope;
}

thread_local const AllocationSite* t_current_site = nullptr;

}  // namespace

std::string AllocationSite::str() const {
  std::string s = op.empty() ? std::string("unknown op") : op;
  if (!file.empty()) {
    s += " at " + file + ":" + std::to_string(line);
    if (!function.empty()) s += " in " + function;
  }
  if (!scope.empty()) s += " (scope " + scope + ")";
  return s;
}

const AllocationSite* intern_site(std::string_view op, std::string_view scope, std::string_view file,
                                  std::string_view function, int line) {
  // A program allocates from a few sites over and over (a loop, a traced
  // function's lines): a small per-thread cache, placed by the site's line,
  // op and file addresses and checked by content, answers without building
  // strings or locking.
  thread_local std::array<const AllocationSite*, 64> recent{};
  const size_t slot = (static_cast<size_t>(line) * 31u + reinterpret_cast<uintptr_t>(op.data()) / 8 +
                       reinterpret_cast<uintptr_t>(file.data()) / 16 + scope.size()) %
                      recent.size();
  if (const AllocationSite* hit = recent[slot]; hit && same(*hit, op, scope, file, function, line)) return hit;
  AllocationSite probe{std::string(op), std::string(scope), std::string(file), std::string(function), line};
  Interned& t = interned();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.sites.find(&probe);
  if (it == t.sites.end()) it = t.sites.insert(new AllocationSite(std::move(probe))).first;
  recent[slot] = *it;
  return *it;
}

const AllocationSite* unknown_site() {
  static const AllocationSite* site = intern_site("", "", "", "", 0);
  return site;
}

const AllocationSite* current_site() { return t_current_site ? t_current_site : unknown_site(); }

SiteScope::SiteScope(const AllocationSite* site) : saved_(t_current_site) { t_current_site = site; }
SiteScope::~SiteScope() { t_current_site = saved_; }

}  // namespace graft::runtime
