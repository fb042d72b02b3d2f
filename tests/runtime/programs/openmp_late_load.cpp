// A program that starts libgomp (an OpenMP parallel region) and only then
// loads libgraft with dlopen, as a Python extension or a plugin host would.
// graft can no longer choose libgomp's spin count, and build_info() must say
// so rather than claim it did. Prints build_info() on stdout.
//   openmp_late_load /path/to/libgraft.so
#include <dlfcn.h>
#include <omp.h>

#include <cstdio>
#include <string>

namespace graft {
std::string build_info();
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    ++threads;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  using BuildInfo = std::string (*)();
  auto* info = reinterpret_cast<BuildInfo>(dlsym(lib, "_ZN5graft10build_infoB5cxx11Ev"));
  if (info == nullptr) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 4;
  }
  std::printf("threads %d\n%s\n", threads, info().c_str());
  return 0;
}
