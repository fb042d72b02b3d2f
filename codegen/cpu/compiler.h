// The system-compiler driver for generated CPU kernels: compiles C++ source
// into a shared object with the system compiler, loads it with dlopen, and
// caches modules in memory and on disk so that a second process start
// compiles nothing.
//
// Compiler: $GRAFT_CXX, else `c++`, else `g++`, from PATH. Flags:
//   -std=c++17 -O3 -march=native -ffp-contract=off -fno-math-errno
//   -fopenmp -fPIC -shared -fvisibility=hidden
// ($GRAFT_CPU_CXXFLAGS, when set, replaces "-O3 -march=native"). No
// fast-math: kernels must compute the interpreter's bits.
//
// Disk cache: $GRAFT_CACHE_DIR/cpu (default $XDG_CACHE_HOME/graft/cpu, else
// ~/.cache/graft/cpu), read when a module is requested. A module is keyed by
// the compiler's path and `--version` first line (run once per process), the
// flags, the machine (CPU model and feature flags, when a flag says
// "native") and the source; files are <hash>.so with <hash>.key holding the
// whole key, compared on every disk hit (so a hash collision cannot load a
// wrong module). Files are written under temporary names and renamed, so
// processes sharing the directory never see half a module.
//
// Thread-safe: concurrent requests for one source compile it once.
// Loaded modules stay loaded for the life of the process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graft::codegen::cpu {

// The kernel ABI of emit.h.
using KernelFn = void (*)(const void* const* inputs, void* const* outputs, const int64_t* scalars, int64_t n);

// Whether a compiler ran (`<cxx> --version` succeeded); jit's `automatic`
// should pick the CPU code generator only then.
bool cpu_compiler_available();
// Whether the module of `source` is loaded or in the disk cache, so that
// load_kernels would compile nothing.
bool module_cached(const std::string& source);
// Records, in the disk cache, which modules a fused graph (by its structural
// hash) compiles into, before they are built; graph_modules_on_disk says
// whether all of them are there now: a cheap test (no emission) of whether
// an earlier run has compiled this graph.
void record_graph_modules(uint64_t graph_hash, const std::vector<std::string>& sources);
bool graph_modules_on_disk(uint64_t graph_hash);
// "c++: c++ (Debian 12.2.0-14+deb12u1) 12.2.0", or why no compiler is usable.
std::string cpu_compiler_description();
// The flags every module is compiled with.
std::vector<std::string> cpu_compile_flags();
// Where modules are cached on disk (reads the environment now).
std::string cpu_cache_dir();

// A loaded module's kernels, and the module itself: it stays loaded while any
// copy of `module` lives, and is unloaded (dlclose) after the last one goes,
// so a process that compiles many functions over its life does not keep
// every module mapped (a process has room for some tens of thousands).
struct LoadedKernels {
  std::shared_ptr<const void> module;
  std::vector<KernelFn> fns;  // valid while `module` lives
};

// Compiles `source` (or finds it in the caches: loaded modules are shared
// while alive, and the disk cache outlives them), loads and initialises it,
// and returns the address of each symbol. Throws graft::Error with the
// compiler's output when compilation fails, or when no compiler is present.
LoadedKernels load_kernels(const std::string& source, const std::vector<std::string>& symbols);

// The same, for callers that keep bare function pointers (tests): the module
// stays loaded until the process ends.
std::vector<KernelFn> compile_kernels(const std::string& source, const std::vector<std::string>& symbols);
KernelFn compile_kernel(const std::string& source, const std::string& symbol);

// Modules loaded now (for tests of unloading).
int64_t loaded_module_count();

// Whether the process has begun to exit: modules are no longer loaded, and a
// background compile that fails for it has nothing to report.
bool process_exiting();

struct CompileStats {
  int64_t compiles = 0;      // runs of the compiler that produced a module
  int64_t disk_hits = 0;     // modules loaded from the disk cache
  int64_t memory_hits = 0;   // requests served by an already loaded module
  int64_t failures = 0;      // failed compilations
  double compile_seconds = 0;  // wall time spent in the compiler
};
CompileStats compile_stats();  // since the process started

namespace testing {
// Forgets every module of the in-memory cache, as a new process would start
// (the modules stay loaded: kernels handed out remain valid).
void forget_loaded_modules();
}  // namespace testing

}  // namespace graft::codegen::cpu
