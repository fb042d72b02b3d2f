// Data movement on a CUDA device: transpose, rev, slice, pad and
// concatenate as strided copies, run by one generic kernel per element size
// (the values are moved, never computed, so the dtype does not matter).
//
// A copy walks a box of `size` (row-major index idx) and writes
//   dst[dst_offset + sum_d idx_d * dst_stride_d]
// from
//   src[src_offset + sum_d j_d * src_stride_d]
// where j = idx, or, for a padded copy, j_d = (idx_d - lo_d) / step_d when
// that divides evenly and lands in [0, in_size_d), and the pad value (the
// op's second operand, read on the device) elsewhere. Strides may be
// negative (rev). One thread per element, grid-stride; every element is
// written by exactly one thread, so results are the interpreter's bit for bit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::codegen::cuda {

inline constexpr int kMaxMoveRank = 8;

struct StridedCopy {
  int operand = 0;  // the source: the op's operand
  int rank = 0;
  int64_t count = 0;  // elements of the box
  int64_t src_offset = 0, dst_offset = 0;
  int64_t size[kMaxMoveRank] = {}, src_stride[kMaxMoveRank] = {}, dst_stride[kMaxMoveRank] = {};
  bool padded = false;  // pad: the value outside the operand is operand 1
  int64_t lo[kMaxMoveRank] = {}, step[kMaxMoveRank] = {}, in_size[kMaxMoveRank] = {};
};

// Whether `op` is one of the ops above.
bool is_movement(ir::Op op);

// The copies computing `op` on operands of types `ins` into `out` (none for
// an empty result); nullopt, with *why set, when they cannot (rank above
// kMaxMoveRank).
std::optional<std::vector<StridedCopy>> plan_movement(ir::Op op, const std::vector<const ir::ValueType*>& ins,
                                                      const ir::ValueType& out, const ir::Attrs& attrs,
                                                      std::string* why);

// The kernel moving elements of `bytes` (1, 4 or 8), sized for `count`
// elements (one module per element size; the launch grid follows count).
const CudaKernel& movement_kernel(size_t bytes, int64_t count);

// The kernel's parameter block for one copy; `pad` is the pad value's
// device address for a padded copy, else null.
std::vector<uint64_t> movement_params(const StridedCopy& c, const void* src, void* dst, const void* pad);

}  // namespace graft::codegen::cuda
