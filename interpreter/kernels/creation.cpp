// CPU kernels of iota and constant.
#include <cstring>

#include "interpreter/kernels/convert.h"
#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "ir/attr_access.h"

namespace graft::interpreter {

void iota_kernel(const KernelCall& call) {
  int64_t dim = ir::attr<int64_t>(call.attrs, "dimension", call.op);
  const Shape& shape = call.outputs[0].type->shape;
  int64_t stride = row_major_strides(shape)[dim], size = shape[dim];
  ir::visit_element_type(call.outputs[0].type->dtype, [&](auto tag) {  // every dtype, complex too (as lax.iota)
    using T = typename decltype(tag)::type;
    T* y = out_ptr<T>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = convert_element<T>((i / stride) % size);
    });
  });
}

void constant_kernel(const KernelCall& call) {
  const ir::Literal& lit = *ir::attr<ir::LiteralPtr>(call.attrs, "value", call.op);
  if (!lit.bytes.empty()) std::memcpy(call.outputs[0].data, lit.bytes.data(), lit.bytes.size());
}

}  // namespace graft::interpreter
