// NumPy's .npy format: arrays move to and from Python untouched.
//
//   graft::save_npy("x.npy", x);          // np.load("x.npy") gives the same values
//   graft::Array y = graft::load_npy("y.npy");  // written by np.save
//
// DTypes map to NumPy descriptors as
//   bool_ '|b1'   i8 '|i1'   i16 '<i2'   i32 '<i4'   i64 '<i8'
//   u8 '|u1'   u16 '<u2'   u32 '<u4'   u64 '<u8'
//   f16 '<f2'   f32 '<f4'   f64 '<f8'   c64 '<c8'   c128 '<c16'
// and bf16 '|V2': NumPy has no bfloat16, and ml_dtypes' bfloat16 arrays save
// as 2-byte void records, which load_npy(path, bf16) reads back.
//
// load_npy reads format versions 1.0, 2.0 and 3.0. The descriptor's byte order
// may be '<' (little-endian), '>' (big-endian: the elements are byte-swapped on
// load), '=' (native, as NumPy itself reads it) or '|' (not applicable; for
// multi-byte types treated as native, as NumPy does); it may also be omitted.
// Bool bytes other than 0 and 1 load as true, as in NumPy. Anything else throws
// a graft::Error naming the file and the problem:
//   - DTypeError for descriptors graft has no dtype for (float128, complex256,
//     strings, objects 'O', structured/record dtypes, and void records unless
//     the caller names their dtype); convert in NumPy first, e.g. a.astype(np.float32);
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
// Reads 2-byte void records ('<V2', '|V2': ml_dtypes' bfloat16 as NumPy saves it) as records_as, a 2-byte dtype.
Array load_npy(const std::string& path, DType records_as);
void save_npy(const std::string& path, const Array& x);

}  // namespace graft
