// Every error graft throws derives from graft::Error. Messages name the
// operation, the shapes and dtypes involved, and the user's file and line.
#pragma once

#include <stdexcept>
#include <string>

#include "graft/detail/source_location.h"

namespace graft {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#define GRAFT_DECLARE_ERROR(Name)          \
  class Name : public Error {              \
   public:                                 \
    using Error::Error;                    \
  };

GRAFT_DECLARE_ERROR(ShapeError)           // operand shapes do not fit the operation
GRAFT_DECLARE_ERROR(DTypeError)           // operand dtypes do not fit the operation
GRAFT_DECLARE_ERROR(ConcretizationError)  // a traced value was asked for its concrete value
GRAFT_DECLARE_ERROR(TracerLeakError)      // a traced value escaped its trace
GRAFT_DECLARE_ERROR(DonatedArrayError)    // an Array was used after its buffer was donated
GRAFT_DECLARE_ERROR(OutOfMemoryError)     // a device allocator could not serve a request
GRAFT_DECLARE_ERROR(GraphFormatError)     // a graph (in memory or JSON) is malformed
GRAFT_DECLARE_ERROR(UnsupportedError)     // valid request that graft does not implement

#undef GRAFT_DECLARE_ERROR

namespace detail {
// Called inside a catch of a graft::Error raised by a transform's own checks:
// throws an error of the same type whose message also names the transform and
// the user's line that made the wrapper, e.g. "... (in vmap at train.cpp:42)".
[[noreturn]] void rethrow_with_site(const char* transform, const std::source_location& loc);
}  // namespace detail

}  // namespace graft
