// The fft op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rule of the fft family: lax.fft's four transforms over the
// trailing len(fft_lengths) axes (at most 3).
//
// Rules of the fft family. The op is linear (its JVP is the op on the
// tangent); its transposes are JAX's (jax/_src/lax/fft.py): fft and ifft are
// their own transposes (the DFT matrix is symmetric); rfft's is a naive
// rfft's (pad to the full length, fft, real part); irfft's is rfft with the
// half spectrum's doubled entries weighted, scaled and conjugated, so that
// gradients follow JAX's complex convention.
#include <complex>
#include <cstring>

#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ir/fft_type.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

// A constant vector of complex weights of dtype d, as a literal node.
ValueId complex_vector(TransposeCtx& c, DType d, const std::vector<double>& w) {
  ir::Literal lit{ir::ValueType{d, {static_cast<int64_t>(w.size())}},
                  std::vector<uint8_t>(w.size() * ir::dtype_size(d))};
  for (size_t i = 0; i < w.size(); ++i) {
    if (d == DType::c64) {
      const std::complex<float> z(static_cast<float>(w[i]), 0.0f);
      std::memcpy(lit.bytes.data() + i * sizeof z, &z, sizeof z);
    } else {
      const std::complex<double> z(w[i], 0.0);
      std::memcpy(lit.bytes.data() + i * sizeof z, &z, sizeof z);
    }
  }
  return c.add(Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
}

}  // namespace

// ---- fft

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

ir::IdList fft_transpose(TransposeCtx& c) {
  const ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const FftType type = *ir::fft_type_from_name(ir::attr<std::string>(c.attrs(), "fft_type", Op::fft));
  const ir::Ints& lengths = ir::attr<ir::Ints>(c.attrs(), "fft_lengths", Op::fft);
  const ir::ValueType& x = c.operand_types[0];
  const int rank = x.rank();
  switch (type) {
    case FftType::fft:
    case FftType::ifft: return {c.add(Op::fft, {ct}, c.attrs())};
    case FftType::rfft: {
      // ct: the half spectrum; zeros for the rest of the last axis, then the full transform's transpose.
      const DType cd = ir::complex_dtype(x.dtype);
      const int64_t n = lengths.back(), m = n / 2 + 1;
      ir::Ints low(rank, 0), high(rank, 0), interior(rank, 0);
      high.back() = n - m;
      const ValueId zero = c.zeros(ir::ValueType{cd, {}});
      const ValueId full =
          c.add(Op::pad, {ct, zero}, {{"padding_low", low}, {"padding_high", high}, {"padding_interior", interior}});
      const ValueId spectrum = c.add(Op::fft, {full}, {{"fft_type", std::string("fft")}, {"fft_lengths", lengths}});
      return {c.add(Op::real, {spectrum})};
    }
    case FftType::irfft: {
      const ValueId half = c.add(Op::fft, {ct}, {{"fft_type", std::string("rfft")}, {"fft_lengths", lengths}});
      const int64_t n = lengths.back(), m = n / 2 + 1;
      double count = 1;
      for (int64_t l : lengths) count *= static_cast<double>(l);
      // Each entry but the first (and, for even n, the last) stands for two of the full spectrum.
      std::vector<double> w(static_cast<size_t>(m), 2.0 / count);
      w.front() = 1.0 / count;
      if (n % 2 == 0) w.back() = 1.0 / count;
      const ValueId weights = c.add(Op::broadcast_in_dim, {complex_vector(c, x.dtype, w)},
                                    {{"shape", ir::Ints(x.shape)}, {"broadcast_dimensions", ir::Ints{rank - 1}}});
      return {c.add(Op::conj, {c.add(Op::mul, {half, weights})})};
    }
  }
  return {kZero};
}

std::vector<BatchedValue> fft_batch(BatchCtx& c) { return {{c.add(Op::fft, {c.at(0, 0)}, c.attrs()), 0}}; }

}  // namespace graft::ops
