// Every error graft throws derives from graft::Error. Messages name the
// operation, the shapes and dtypes involved, and the user's file and line.
#pragma once

#include <stdexcept>
#include <string>

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

}  // namespace graft
