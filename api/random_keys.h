// Keys for the samplers of api/ (random.cpp defines it).
#pragma once

#include <cstdint>
#include <source_location>

#include "graft/array.h"

namespace graft::detail {

// random::split(key, n) as one u32[n, 2] array (key one u32[2] key).
Array random_split_keys(const Array& key, int64_t n, const std::source_location& loc);

}  // namespace graft::detail
