// graft::fft: jnp.fft's discrete Fourier transforms, on the fft primitive
// (lax.fft: fft, ifft, rfft and irfft over up to 3 trailing axes), which
// differentiates, vmaps and jits like every op. Real inputs of fft/ifft
// become complex (f32 -> c64, f64 -> c128, integers through the default
// float); `n`/`s` crop or zero-pad the transformed axes; `norm` is
// "backward" (the default: the inverse divides by n), "ortho" (both divide
// by sqrt(n)) or "forward" (the forward divides by n).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft::fft {

using Loc = std::source_location;

// One axis: the transform of length n (-1: the axis's size; irfft's default is 2 * (size - 1)).
Array fft(const Array& a, int64_t n = -1, int axis = -1, const std::string& norm = "backward",
          Loc loc = Loc::current());
Array ifft(const Array& a, int64_t n = -1, int axis = -1, const std::string& norm = "backward",
           Loc loc = Loc::current());
Array rfft(const Array& a, int64_t n = -1, int axis = -1, const std::string& norm = "backward",
           Loc loc = Loc::current());  // real input, the n / 2 + 1 non-negative frequencies
Array irfft(const Array& a, int64_t n = -1, int axis = -1, const std::string& norm = "backward",
            Loc loc = Loc::current());  // the real signal of length n from its half spectrum

// Two axes (by default the last two), of sizes s (empty: the axes' sizes).
Array fft2(const Array& a, Shape s = {}, std::vector<int> axes = {-2, -1}, const std::string& norm = "backward",
           Loc loc = Loc::current());
Array ifft2(const Array& a, Shape s = {}, std::vector<int> axes = {-2, -1}, const std::string& norm = "backward",
            Loc loc = Loc::current());
Array rfft2(const Array& a, Shape s = {}, std::vector<int> axes = {-2, -1}, const std::string& norm = "backward",
            Loc loc = Loc::current());
Array irfft2(const Array& a, Shape s = {}, std::vector<int> axes = {-2, -1}, const std::string& norm = "backward",
             Loc loc = Loc::current());

// Any axes (empty: every axis, or the last s.size() when s is given).
Array fftn(const Array& a, Shape s = {}, std::vector<int> axes = {}, const std::string& norm = "backward",
           Loc loc = Loc::current());
Array ifftn(const Array& a, Shape s = {}, std::vector<int> axes = {}, const std::string& norm = "backward",
            Loc loc = Loc::current());
Array rfftn(const Array& a, Shape s = {}, std::vector<int> axes = {}, const std::string& norm = "backward",
            Loc loc = Loc::current());
Array irfftn(const Array& a, Shape s = {}, std::vector<int> axes = {}, const std::string& norm = "backward",
             Loc loc = Loc::current());

// The sample frequencies of an n-point transform with spacing d: [0, 1, ..., -1] / (d n), as np.fft.fftfreq.
Array fftfreq(int64_t n, double d = 1.0, DType dtype = f32, Loc loc = Loc::current());
// The non-negative ones, [0, 1, ..., n / 2] / (d n), for rfft.
Array rfftfreq(int64_t n, double d = 1.0, DType dtype = f32, Loc loc = Loc::current());
// The zero frequency moved to the centre of the axes (empty: all), and back.
Array fftshift(const Array& x, std::vector<int> axes = {}, Loc loc = Loc::current());
Array ifftshift(const Array& x, std::vector<int> axes = {}, Loc loc = Loc::current());

}  // namespace graft::fft
