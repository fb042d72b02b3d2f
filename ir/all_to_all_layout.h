// The data movement of all_to_all as one transpose of the stacked operands,
// shared by its kernel (interpreter/kernels/collective.cpp) and its batching
// rule (ops/collective.cpp), which both hold every replica's
// operand stacked on a leading axis.
//
// The stack [sender, x...] is read as [sender, ..., receiver, chunk, ...]
// (split_axis cut into n chunks), then transposed to put receivers first and
// each sender just before the concat axis it joins: [receiver, ..., sender,
// concat, ...]. Receiver r's result is then block r, and merging sender into
// the concat axis gives its shape.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/value.h"

namespace graft::ir {

struct AllToAllLayout {
  Shape split_stack;            // the stack with split_axis cut: [n, ..., n, chunk, ...]
  std::vector<int64_t> permutation;  // of split_stack's axes: receivers first
  Shape moved;                  // split_stack's shape after the permutation
  Shape result;                 // one receiver's result (the op's output shape)
};

// x: one replica's operand shape; split and concat in [0, rank).
inline AllToAllLayout all_to_all_layout(const Shape& x, int64_t split, int64_t concat, int64_t n) {
  AllToAllLayout l;
  const auto rank = static_cast<int64_t>(x.size());
  constexpr int64_t kSender = -1, kReceiver = -2;
  std::vector<int64_t> labels{kSender};
  l.split_stack.push_back(n);
  for (int64_t a = 0; a < rank; ++a) {
    if (a == split) {
      l.split_stack.push_back(n);
      labels.push_back(kReceiver);
    }
    l.split_stack.push_back(a == split ? x[static_cast<size_t>(a)] / n : x[static_cast<size_t>(a)]);
    labels.push_back(a);
  }
  std::vector<int64_t> order{kReceiver};
  for (int64_t a = 0; a < rank; ++a) {
    if (a == concat) order.push_back(kSender);
    order.push_back(a);
  }
  for (int64_t label : order)
    for (size_t k = 0; k < labels.size(); ++k)
      if (labels[k] == label) {
        l.permutation.push_back(static_cast<int64_t>(k));
        l.moved.push_back(l.split_stack[k]);
      }
  l.result = x;
  l.result[static_cast<size_t>(split)] /= n;
  l.result[static_cast<size_t>(concat)] *= n;
  return l;
}

}  // namespace graft::ir
