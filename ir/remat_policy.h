// A checkpoint's policy (jax.checkpoint_policies): which values computed in
// a remat node's body its backward pass may keep from the forward pass; the
// rest it recomputes. The remat node carries it as the text of its "policy"
// attribute: the policy's name, then, for the two name policies, each name
// as " <length>:<bytes>" (so any name round-trips, spaces included).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace graft::ir {

enum class RematSave {
  everything,               // "everything_saveable": no recomputation at all
  nothing,                  // "nothing_saveable": checkpoint's default
  dots,                     // "dots_saveable": dot_general results
  dots_with_no_batch_dims,  // "dots_with_no_batch_dims_saveable": those without batch axes
  only_names,               // "save_only_these_names": checkpoint_name values with these names
  anything_except_names,    // "save_anything_except_these_names": all but those
};

struct RematPolicy {
  RematSave save = RematSave::nothing;
  std::vector<std::string> names;  // for the two name policies
};

// The attribute text of a policy.
std::string remat_policy_text(const RematPolicy& policy);

// The policy an attribute text spells; GraphFormatError saying what is wrong otherwise.
RematPolicy parse_remat_policy(std::string_view text);

// Whether the policy lets the backward pass keep the outputs of node n.
bool remat_saveable(const RematPolicy& policy, const Node& n);

}  // namespace graft::ir
