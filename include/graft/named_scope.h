// named_scope: names the nodes traced while it lives ("mlp/layer1" when
// nested); the names show in text, JSON, DOT and memory profiles.
#pragma once

#include <string>

namespace graft {

class named_scope {
 public:
  explicit named_scope(const std::string& name);
  ~named_scope();
  named_scope(const named_scope&) = delete;
  named_scope& operator=(const named_scope&) = delete;
};

}  // namespace graft
