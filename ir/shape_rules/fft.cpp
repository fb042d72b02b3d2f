// Shape/dtype rule of the fft family: lax.fft's four transforms over the
// trailing len(fft_lengths) axes (at most 3).
#include "ir/dtype.h"
#include "ir/fft_type.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {

// fft, ifft: complex in and out, the trailing axes of fft_lengths' sizes.
// rfft: f32/f64 in, complex out whose last axis keeps n / 2 + 1 entries.
// irfft: complex in with that last axis, f32/f64 out of fft_lengths' sizes.
OutTypes fft_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const std::optional<FftType> type = fft_type_from_name(c.attr_string("fft_type"));
  if (!type) c.format_error("fft_type must be fft, ifft, rfft or irfft, not '" + c.attr_string("fft_type") + "'");
  const Ints& lengths = c.attr_ints("fft_lengths");
  const int k = static_cast<int>(lengths.size());
  if (k < 1 || k > 3) c.shape_error("fft_lengths must name 1 to 3 axes, got " + std::to_string(k));
  if (x.rank() < k)
    c.shape_error("transforms " + std::to_string(k) + " trailing axes of a rank-" + std::to_string(x.rank()) +
                  " operand");
  for (int64_t n : lengths)
    if (n < 1) c.shape_error("fft_lengths must be positive, got " + shape_str(lengths));
  const bool real_in = *type == FftType::rfft;
  if (real_in ? (x.dtype != DType::f32 && x.dtype != DType::f64) : !is_complex(x.dtype))
    c.dtype_error(std::string(fft_type_name(*type)) + " needs " + (real_in ? "an f32 or f64" : "a complex") +
                  " operand, got " + dtype_name(x.dtype));
  Shape expect(x.shape.end() - k, x.shape.end());
  Shape want(lengths.begin(), lengths.end());
  if (*type == FftType::irfft) want.back() = want.back() / 2 + 1;
  if (expect != want)
    c.shape_error("the trailing axes " + shape_str(expect) + " must be " + shape_str(want) + " for " +
                  fft_type_name(*type) + " of fft_lengths " + shape_str(lengths));
  ValueType out = x;
  switch (*type) {
    case FftType::fft:
    case FftType::ifft: break;
    case FftType::rfft:
      out.dtype = complex_dtype(x.dtype);
      out.shape.back() = lengths.back() / 2 + 1;
      break;
    case FftType::irfft:
      out.dtype = real_dtype(x.dtype);
      out.shape.back() = lengths.back();
      break;
  }
  return {out};
}

}  // namespace graft::ir
