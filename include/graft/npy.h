// NumPy's .npy format: arrays move to and from Python untouched.
//
//   graft::save_npy("x.npy", x);          // np.load("x.npy") gives the same values
//   graft::Array y = graft::load_npy("y.npy");  // written by np.save
//
// DTypes map to NumPy descriptors as
//   bool_ '|b1'   i32 '<i4'   i64 '<i8'   u32 '<u4'   f32 '<f4'   f64 '<f8'.
//
// load_npy reads format versions 1.0, 2.0 and 3.0. The descriptor's byte order
// may be '<' (little-endian), '>' (big-endian: the elements are byte-swapped on
// load), '=' (native, as NumPy itself reads it) or '|' (not applicable; for
// multi-byte types treated as native, as NumPy does); it may also be omitted.
// Bool bytes other than 0 and 1 load as true, as in NumPy. Anything else throws
// a graft::Error naming the file and the problem:
//   - DTypeError for descriptors graft has no dtype for (float16 '<f2',
//     complex '<c8', int8/int16/uint8/uint16/uint64, strings, objects 'O',
//     structured/record dtypes); convert in NumPy first, e.g. a.astype(np.float32);
//   - UnsupportedError for fortran_order True (Fortran order is unsupported;
//     save np.ascontiguousarray(a) instead);
//   - ShapeError for negative dimensions, dimensions above 2^40, more than 64
//     dimensions, or an element count that overflows;
//   - graft::Error for a missing or unreadable file, a wrong magic string, an
//     unsupported format version, a truncated or unparsable header, and data
//     shorter or longer than the shape says. The data size is checked against
//     the file's size before anything is allocated, so a hostile header cannot
//     drive an allocation.
//
// save_npy writes version 1.0 (2.0 only if the header would not fit 1.0's
// 65535-byte limit) with little-endian descriptors, padding the header with
// spaces and a newline so that the data starts at a multiple of 64 bytes, as
// NumPy does. An existing file is overwritten. Saving a traced Array (inside a
// transform) throws ConcretizationError; failing to create or write the file
// throws graft::Error.
#pragma once

#include <string>

#include "graft/array.h"

namespace graft {

Array load_npy(const std::string& path);
void save_npy(const std::string& path, const Array& x);

}  // namespace graft
