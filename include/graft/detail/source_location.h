// std::source_location, which graft's API takes to name the user's line in
// errors. A compiler and standard library without it get one clear message
// instead of pages of errors: clang 14 with GCC's libstdc++ lacks the
// builtin that libstdc++'s source_location needs.
#pragma once

#include <source_location>

#if !defined(__cpp_lib_source_location)
#error \
    "graft needs C++20 std::source_location: build with g++ >= 11 or clang >= 16 (clang 15 and older lack __builtin_source_location, which GCC's libstdc++ needs), with -std=c++20"
#endif
