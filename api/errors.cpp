// Errors that gain the user's line on their way out of a transform wrapper.
#include <exception>

#include "graft/errors.h"

namespace graft::detail {

namespace {

template <class E>
bool rethrow_as(const Error& e, const std::string& msg) {
  if (dynamic_cast<const E*>(&e) == nullptr) return false;
  throw E(msg);
}

}  // namespace

void rethrow_with_site(const char* transform, const std::source_location& loc) {
  try {
    throw;
  } catch (const Error& e) {
    const std::string msg = std::string(e.what()) + " (in the " + transform + " made at " + loc.file_name() + ":" +
                            std::to_string(loc.line()) + ")";
    // Most derived first: each error type is its own class.
    rethrow_as<ShapeError>(e, msg) || rethrow_as<DTypeError>(e, msg) || rethrow_as<ConcretizationError>(e, msg) ||
        rethrow_as<TracerLeakError>(e, msg) || rethrow_as<DonatedArrayError>(e, msg) ||
        rethrow_as<OutOfMemoryError>(e, msg) || rethrow_as<GraphFormatError>(e, msg) ||
        rethrow_as<UnsupportedError>(e, msg);
    throw Error(msg);
  }
}

}  // namespace graft::detail
