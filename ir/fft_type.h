// lax.fft's four transforms, as the fft op's `fft_type` attribute names them.
#pragma once

#include <optional>
#include <string_view>

namespace graft::ir {

enum class FftType { fft, ifft, rfft, irfft };

inline const char* fft_type_name(FftType t) {
  switch (t) {
    case FftType::fft: return "fft";
    case FftType::ifft: return "ifft";
    case FftType::rfft: return "rfft";
    case FftType::irfft: return "irfft";
  }
  return "?";
}

inline std::optional<FftType> fft_type_from_name(std::string_view name) {
  for (FftType t : {FftType::fft, FftType::ifft, FftType::rfft, FftType::irfft})
    if (name == fft_type_name(t)) return t;
  return std::nullopt;
}

}  // namespace graft::ir
