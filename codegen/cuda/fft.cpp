#include "codegen/cuda/fft.h"

#include <cstdio>
#include <memory>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/driver.h"
#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "runtime/buffer.h"
#include "runtime/device.h"

namespace graft::codegen::cuda {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;

std::optional<SolverKernel> fft_kernel(const OpKernelRequest& r, std::string* why) {
  std::string ignored;
  if (!why) why = &ignored;
  const ir::ValueType& in = *r.inputs[0];
  const ir::ValueType& out = *r.outputs[0];
  const ir::FftType type = *ir::fft_type_from_name(ir::attr<std::string>(r.attrs, "fft_type", r.op));
  const ir::Ints& lengths = ir::attr<ir::Ints>(r.attrs, "fft_lengths", r.op);
  const DType part = ir::real_dtype(type == ir::FftType::rfft ? in.dtype : out.dtype);
  FftCall plan;
  plan.type = type;
  plan.f64 = part == DType::f64;
  plan.rank = static_cast<int>(lengths.size());
  if (plan.rank < 1 || plan.rank > 3 || (part != DType::f32 && part != DType::f64)) {
    *why = "cuFFT here takes 1 to 3 axes of f32/c64 or f64/c128, not " + ir::type_str(in);
    return std::nullopt;
  }
  int64_t points = 1;
  for (int i = 0; i < plan.rank; ++i) {
    plan.lengths[i] = lengths[static_cast<size_t>(i)];
    points *= plan.lengths[i];
  }
  const int64_t per = type == ir::FftType::irfft ? out.num_elements() : in.num_elements();
  plan.batch = points == 0 ? 0 : per / points;
  for (int64_t d : {plan.lengths[0], plan.lengths[1], plan.lengths[2], plan.batch})
    if (d > 0x7fffffff) {
      *why = "an FFT of " + ir::type_str(in) + " exceeds cuFFT's int sizes";
      return std::nullopt;
    }
  SolverKernel result;
  std::shared_ptr<const CudaKernel> scale;
  if (type == ir::FftType::ifft || type == ir::FftType::irfft) {
    // out *= 1/n over the real parts, 1/n rounded once to the part's type.
    const int64_t reals = out.num_elements() * (ir::is_complex(out.dtype) ? 2 : 1);
    const ir::ValueType parts{part, {reals}};
    ir::Attrs no_attrs;
    const OpKernelRequest request{r.op, {&parts}, {&parts}, no_attrs};
    char factor[64];
    std::snprintf(factor, sizeof factor, "%a", points ? 1.0 / static_cast<double>(points) : 1.0);
    const std::string body = cat("  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) p.out0[t] = p.in0[t] * (",
                                 ctype(part), ")", factor, ";\n");
    scale = std::make_shared<const CudaKernel>(detail::frame_kernel("the inverse FFT's 1/n", request, reals, body));
    result.kernels.push_back(*scale);
  }
  result.run = [plan, scale](const interpreter::KernelCall& call) {
    if (call.outputs[0].type->num_bytes() == 0) return;
    runtime::Device& device = cuda_device_here("fft");
    FftCall c = plan;
    runtime::BufferPtr copy;
    if (c.type == ir::FftType::irfft) {
      const size_t bytes = call.inputs[0].type->num_bytes();
      copy = runtime::make_buffer(bytes);
      device.transfers()->within(copy->data(), call.inputs[0].data, bytes);
      c.in = copy->data();
    } else {
      c.in = const_cast<void*>(call.inputs[0].data);  // cuFFT's other transforms only read it
    }
    c.out = call.outputs[0].data;
    c.scale = scale.get();
    cuda_driver().fft(device.id(), c);
  };
  return result;
}

}  // namespace graft::codegen::cuda
