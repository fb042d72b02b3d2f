// Reading and making literal arrays (the payload of `constant`).
#pragma once

#include <string>

#include "ir/attrs.h"

namespace graft::ir {

// Element i of a literal as a double (exact for every graft dtype but i64/u64
// beyond 2^53, which printing tolerates; a complex element's real part).
double literal_element(const Literal& lit, int64_t i);
// "[1, 2.5, 3]" for small literals; the first `limit` elements then "..." otherwise.
std::string literal_str(const Literal& lit, int64_t limit = 8);
// The shortest decimal text that reads back as exactly x ("0.1", "-0", "inf", "nan").
std::string float_str(double x);

}  // namespace graft::ir
