#include "codegen/cuda/movement.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "codegen/cuda/prelude.h"
#include "graft/errors.h"
#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"

namespace graft::codegen::cuda {
namespace {

using interpreter::row_major_strides;
using ir::Ints;
using ir::Op;

// The identity copy of `t` (every index to itself, row-major on both sides).
StridedCopy whole(const ir::ValueType& t) {
  StridedCopy c;
  c.rank = static_cast<int>(t.shape.size());
  c.count = t.num_elements();
  const std::vector<int64_t> st = row_major_strides(t.shape);
  for (int d = 0; d < c.rank; ++d) {
    c.size[d] = t.shape[static_cast<size_t>(d)];
    c.src_stride[d] = c.dst_stride[d] = st[static_cast<size_t>(d)];
  }
  return c;
}

// The module for one element size: `T` is an unsigned integer of that size,
// or for 16 bytes (c128) a pair of them.
std::string movement_source(size_t bytes) {
  const char* type = bytes == 1   ? "unsigned char"
                     : bytes == 2 ? "unsigned short"
                     : bytes == 4 ? "unsigned int"
                     : bytes == 8 ? "unsigned long long"
                                  : "gk_move16_element";
  const std::string sym = "gk_move" + std::to_string(bytes);
  std::string k = R"(
// ---- kernel SYM: strided copies of TYPE elements (codegen/cuda/movement.h)
ELEMENT_STRUCT
struct SYM_params {
  const TYPE* src;
  TYPE* dst;
  const TYPE* pad;
  int64_t n, rank, src_offset, dst_offset;
  int64_t size[8], src_stride[8], dst_stride[8], lo[8], step[8], in_size[8];
};
extern "C" __global__ void __launch_bounds__(GCG_THREADS) SYM(const SYM_params p) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    int64_t rest = i, s = p.src_offset, d = p.dst_offset;
    bool inside = true;
    for (int64_t a = p.rank - 1; a >= 0; --a) {
      const int64_t o = rest % p.size[a];
      rest /= p.size[a];
      d += o * p.dst_stride[a];
      int64_t j = o;
      if (p.pad) {
        j = o - p.lo[a];
        if (j < 0 || j % p.step[a] != 0 || j / p.step[a] >= p.in_size[a]) inside = false;
        j /= p.step[a];
      }
      s += j * p.src_stride[a];
    }
    p.dst[d] = inside ? p.src[s] : *p.pad;
  }
}
#ifdef GCG_EMULATED
GCG_EXPORT void SYM_emulated(const void* p) { SYM(*static_cast<const SYM_params*>(p)); }
#endif
)";
  replace_all(k, "ELEMENT_STRUCT",
              bytes == 16 ? "struct alignas(16) gk_move16_element { unsigned long long lo, hi; };" : "");
  replace_all(k, "SYM", sym);
  replace_all(k, "TYPE", type);
  return prelude_text() + k;
}

}  // namespace

bool is_movement(Op op) { return ir::codegen_kind(op) == ir::CodegenKind::strided_copy; }

std::optional<std::vector<StridedCopy>> plan_movement(Op op, const std::vector<const ir::ValueType*>& ins,
                                                      const ir::ValueType& out, const ir::Attrs& attrs,
                                                      std::string* why) {
  if (!is_movement(op)) {
    if (why) *why = std::string(ir::op_name(op)) + " is not a strided copy";
    return std::nullopt;
  }
  if (out.shape.size() > static_cast<size_t>(kMaxMoveRank)) {
    if (why) *why = "rank " + std::to_string(out.shape.size()) + " is above " + std::to_string(kMaxMoveRank);
    return std::nullopt;
  }
  if (ir::dtype_size(out.dtype) > 16) {
    if (why) *why = std::string("no strided-copy kernel moves ") + dtype_name(out.dtype) + " elements yet";
    return std::nullopt;
  }
  std::vector<StridedCopy> copies;
  if (out.num_elements() == 0) return copies;
  const ir::ValueType& in = *ins.at(0);
  const std::vector<int64_t> in_st = row_major_strides(in.shape);
  StridedCopy c = whole(out);  // the output's box, written row-major
  switch (op) {
    case Op::transpose: {
      const Ints& perm = ir::attr<Ints>(attrs, "permutation", op);
      for (int d = 0; d < c.rank; ++d) c.src_stride[d] = in_st[static_cast<size_t>(perm[static_cast<size_t>(d)])];
      break;
    }
    case Op::rev: {
      for (int64_t d : ir::attr<Ints>(attrs, "dimensions", op)) {
        c.src_offset += (in.shape[static_cast<size_t>(d)] - 1) * in_st[static_cast<size_t>(d)];
        c.src_stride[d] = -in_st[static_cast<size_t>(d)];
      }
      break;
    }
    case Op::slice: {
      const Ints& start = ir::attr<Ints>(attrs, "start_indices", op);
      const Ints& step = ir::attr<Ints>(attrs, "strides", op);
      for (int d = 0; d < c.rank; ++d) {
        const size_t a = static_cast<size_t>(d);
        c.src_offset += start[a] * in_st[a];
        c.src_stride[d] = in_st[a] * (step.empty() ? 1 : step[a]);
      }
      break;
    }
    case Op::pad: {
      const Ints& lo = ir::attr<Ints>(attrs, "padding_low", op);
      const Ints& interior = ir::attr<Ints>(attrs, "padding_interior", op);
      c.padded = true;
      for (int d = 0; d < c.rank; ++d) {
        const size_t a = static_cast<size_t>(d);
        c.src_stride[d] = in_st[a];
        c.lo[d] = lo[a];
        c.step[d] = interior[a] + 1;
        c.in_size[d] = in.shape[a];
      }
      break;
    }
    case Op::concatenate: {
      // One copy per operand, into its stretch of the output's axis.
      const size_t axis = static_cast<size_t>(ir::attr<int64_t>(attrs, "dimension", op));
      const std::vector<int64_t> out_st = row_major_strides(out.shape);
      int64_t at = 0;
      for (size_t k = 0; k < ins.size(); ++k) {
        StridedCopy part = whole(*ins[k]);
        part.operand = static_cast<int>(k);
        for (int d = 0; d < part.rank; ++d) part.dst_stride[d] = out_st[static_cast<size_t>(d)];
        part.dst_offset = at * out_st[axis];
        at += ins[k]->shape[axis];
        if (part.count > 0) copies.push_back(part);
      }
      return copies;
    }
    default: break;
  }
  copies.push_back(c);
  return copies;
}

const CudaKernel& movement_kernel(size_t bytes, int64_t count) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16)
    throw Error("cuda: no movement kernel for " + std::to_string(bytes) + "-byte elements");
  // One entry per (element size, power of two at or above count): the grid
  // grows with the copy, the source (and so the module) is per size.
  int log2 = 0;
  while (log2 < 62 && (int64_t{1} << log2) < count) ++log2;
  static std::mutex mu;
  static std::map<std::pair<size_t, int>, std::unique_ptr<const CudaKernel>> kernels;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<const CudaKernel>& slot = kernels[{bytes, log2}];
  if (!slot) {
    auto k = std::make_unique<CudaKernel>();
    k->symbol = "gk_move" + std::to_string(bytes);
    k->source = movement_source(bytes);
    k->source_hash = std::hash<std::string>{}(k->source);
    k->shape = KernelShape::elementwise;
    k->work = k->n = int64_t{1} << log2;
    k->num_inputs = 1;
    k->num_outputs = 1;
    slot = std::move(k);
  }
  return *slot;
}

std::vector<uint64_t> movement_params(const StridedCopy& c, const void* src, void* dst, const void* pad) {
  std::vector<uint64_t> p = {reinterpret_cast<uint64_t>(src),
                             reinterpret_cast<uint64_t>(dst),
                             reinterpret_cast<uint64_t>(c.padded ? pad : nullptr),
                             static_cast<uint64_t>(c.count),
                             static_cast<uint64_t>(c.rank),
                             static_cast<uint64_t>(c.src_offset),
                             static_cast<uint64_t>(c.dst_offset)};
  for (const int64_t* field : {c.size, c.src_stride, c.dst_stride, c.lo, c.step, c.in_size})
    for (int d = 0; d < kMaxMoveRank; ++d) p.push_back(static_cast<uint64_t>(field[d]));
  return p;
}

}  // namespace graft::codegen::cuda
