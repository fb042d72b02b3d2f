#include "ir/effects.h"

#include <variant>

namespace graft::ir {

bool has_effects(Op op, const Attrs& attrs) {
  if (has_side_effects(op)) return true;
  for (const auto& [name, value] : attrs.items())
    if (const Graphs* gs = std::get_if<Graphs>(&value))
      for (const GraphPtr& g : *gs)
        if (g && graph_has_effects(*g)) return true;
  return false;
}

bool graph_has_effects(const Graph& g) {
  for (const Node& n : g.nodes())
    if (has_effects(n)) return true;
  return false;
}

}  // namespace graft::ir
