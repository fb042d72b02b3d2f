#include "ir/remat_policy.h"

#include <algorithm>
#include <array>
#include <utility>

#include "graft/errors.h"
#include "ir/attr_access.h"

namespace graft::ir {

namespace {

constexpr std::array<std::pair<RematSave, std::string_view>, 6> kNames{{
    {RematSave::everything, "everything_saveable"},
    {RematSave::nothing, "nothing_saveable"},
    {RematSave::dots, "dots_saveable"},
    {RematSave::dots_with_no_batch_dims, "dots_with_no_batch_dims_saveable"},
    {RematSave::only_names, "save_only_these_names"},
    {RematSave::anything_except_names, "save_anything_except_these_names"},
}};

bool takes_names(RematSave s) { return s == RematSave::only_names || s == RematSave::anything_except_names; }

[[noreturn]] void bad_policy(std::string_view text, const std::string& why) {
  throw GraphFormatError("remat: policy \"" + std::string(text.substr(0, 80)) + "\" " + why);
}

}  // namespace

std::string remat_policy_text(const RematPolicy& policy) {
  std::string text;
  for (const auto& [save, name] : kNames)
    if (save == policy.save) text = name;
  for (const std::string& n : policy.names) {
    text += ' ';
    text += std::to_string(n.size());
    text += ':';
    text += n;
  }
  return text;
}

RematPolicy parse_remat_policy(std::string_view text) {
  const std::string_view head = text.substr(0, text.find(' '));
  RematPolicy policy;
  auto known = std::find_if(kNames.begin(), kNames.end(), [&](const auto& k) { return k.second == head; });
  if (known == kNames.end())
    bad_policy(text,
               "is not one of everything_saveable, nothing_saveable, dots_saveable, "
               "dots_with_no_batch_dims_saveable, save_only_these_names, save_anything_except_these_names");
  policy.save = known->first;
  size_t at = head.size();
  while (at < text.size()) {
    // " <length>:<bytes>"
    if (text[at] != ' ') bad_policy(text, "has no space before a name");
    const size_t colon = text.find(':', at + 1);
    if (colon == std::string_view::npos || colon == at + 1 || colon - at > 10)
      bad_policy(text, "has a name without its length");
    size_t length = 0;
    for (size_t i = at + 1; i < colon; ++i) {
      if (text[i] < '0' || text[i] > '9') bad_policy(text, "has a name length that is not a number");
      length = length * 10 + static_cast<size_t>(text[i] - '0');
    }
    if (length > text.size() - colon - 1) bad_policy(text, "has a name longer than the text");
    policy.names.emplace_back(text.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  if (!takes_names(policy.save) && !policy.names.empty()) bad_policy(text, "takes no names");
  return policy;
}

bool remat_saveable(const RematPolicy& policy, const Node& n) {
  auto named = [&] {
    if (n.op != Op::checkpoint_name) return false;
    const std::string& name = attr<std::string>(n.attrs, "name", n.op);
    return std::find(policy.names.begin(), policy.names.end(), name) != policy.names.end();
  };
  switch (policy.save) {
    case RematSave::everything: return true;
    case RematSave::nothing: return false;
    case RematSave::dots: return n.op == Op::dot_general;
    case RematSave::dots_with_no_batch_dims:
      return n.op == Op::dot_general && attr<Ints>(n.attrs, "lhs_batch", n.op).empty();
    case RematSave::only_names: return named();
    case RematSave::anything_except_names: return !named();
  }
  return false;
}

}  // namespace graft::ir
