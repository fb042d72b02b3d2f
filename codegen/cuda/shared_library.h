// A CUDA library opened with dlopen and its entry points bound: what
// cublas.cpp and cusolver.cpp share (graft never links them).
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <type_traits>

namespace graft::codegen::cuda {

struct SharedLibrary {
  void* handle = nullptr;
  std::string path;  // the name that loaded

  // Opens the first of `names` that loads; false with *why naming `what`
  // and dlopen's error otherwise.
  bool open(std::initializer_list<const char*> names, const std::string& what, std::string* why) {
    std::string tried;
    for (const char* name : names) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        path = name;
        return true;
      }
      tried += (tried.empty() ? "" : ", ") + std::string(name);
    }
    const char* error = dlerror();
    *why = what + " is not installed (" + tried + " do not load: " + (error ? error : "") + ")";
    return false;
  }

  // Binds `symbol` to *fn; the first missing one is named in *why.
  template <class F>
  void bind(const std::string& symbol, F** fn, std::string* why) const {
    *fn = reinterpret_cast<F*>(dlsym(handle, symbol.c_str()));
    if (!*fn && why->empty()) *why = path + " lacks " + symbol;
  }
};

}  // namespace graft::codegen::cuda
