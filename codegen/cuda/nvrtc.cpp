// NVRTC through dlopen: the handful of entry points graft calls, declared
// here with NVRTC's C ABI (nvrtc.h is not needed to build graft).
#include "codegen/cuda/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

using nvrtcResult = int;
using nvrtcProgram = void*;

struct Nvrtc {
  void* handle = nullptr;
  std::string why;  // why it did not load
  std::string path;
  int major = 0, minor = 0;
  std::vector<int> archs;
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  nvrtcResult (*GetNumSupportedArchs)(int*) = nullptr;
  nvrtcResult (*GetSupportedArchs)(int*) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
};

// Where NVRTC may be: $GRAFT_NVRTC, the loader's search path, the toolkit's
// usual home.
std::vector<std::string> candidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("GRAFT_NVRTC"); env && *env) return {env};
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) c.push_back(name);
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    c.push_back(std::string("/usr/local/cuda/lib64/") + name);
  return c;
}

template <class F>
bool bind(void* h, const char* name, F* fn, std::string* missing) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  if (!*fn && missing->empty()) *missing = name;
  return *fn != nullptr;
}

const Nvrtc& nvrtc() {
  static const Nvrtc lib = [] {
    Nvrtc n;
    std::string tried;
    for (const std::string& path : candidates()) {
      n.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.handle) {
        n.path = path;
        break;
      }
      tried += (tried.empty() ? "" : ", ") + path;
    }
    if (!n.handle) {
      n.why = "NVRTC (libnvrtc.so, the CUDA toolkit's run-time compiler) is not installed: tried " + tried;
      return n;
    }
    std::string missing;
    bind(n.handle, "nvrtcGetErrorString", &n.GetErrorString, &missing);
    bind(n.handle, "nvrtcVersion", &n.Version, &missing);
    bind(n.handle, "nvrtcGetNumSupportedArchs", &n.GetNumSupportedArchs, &missing);
    bind(n.handle, "nvrtcGetSupportedArchs", &n.GetSupportedArchs, &missing);
    bind(n.handle, "nvrtcCreateProgram", &n.CreateProgram, &missing);
    bind(n.handle, "nvrtcDestroyProgram", &n.DestroyProgram, &missing);
    bind(n.handle, "nvrtcCompileProgram", &n.CompileProgram, &missing);
    bind(n.handle, "nvrtcGetProgramLogSize", &n.GetProgramLogSize, &missing);
    bind(n.handle, "nvrtcGetProgramLog", &n.GetProgramLog, &missing);
    bind(n.handle, "nvrtcGetCUBINSize", &n.GetCUBINSize, &missing);
    bind(n.handle, "nvrtcGetCUBIN", &n.GetCUBIN, &missing);
    bind(n.handle, "nvrtcGetPTXSize", &n.GetPTXSize, &missing);
    bind(n.handle, "nvrtcGetPTX", &n.GetPTX, &missing);
    if (!missing.empty()) {
      n.why = n.path + " lacks " + missing + " (NVRTC 11.2 or newer is needed)";
      n.handle = nullptr;
      return n;
    }
    n.Version(&n.major, &n.minor);
    int count = 0;
    if (n.GetNumSupportedArchs(&count) == 0 && count > 0) {
      n.archs.resize(static_cast<size_t>(count));
      n.GetSupportedArchs(n.archs.data());
      std::sort(n.archs.begin(), n.archs.end());
    }
    return n;
  }();
  return lib;
}

const Nvrtc& loaded() {
  const Nvrtc& n = nvrtc();
  if (!n.handle) throw UnsupportedError("cuda: " + n.why);
  return n;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  const Nvrtc& n = nvrtc();
  if (!n.handle && why) *why = n.why;
  return n.handle != nullptr;
}

std::string nvrtc_description() {
  const Nvrtc& n = nvrtc();
  if (!n.handle) return "no NVRTC (" + n.why + ")";
  return "NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor);
}

int nvrtc_version() {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.major * 1000 + n.minor * 10 : 0;
}

std::vector<int> nvrtc_architectures() { return nvrtc().archs; }

std::vector<std::string> nvrtc_options() { return {"--fmad=false", "--std=c++17", "-default-device"}; }

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool as_ptx) {
  const Nvrtc& n = loaded();
  if (std::find(n.archs.begin(), n.archs.end(), arch) == n.archs.end())
    throw UnsupportedError("cuda: " + nvrtc_description() + " does not compile for sm_" + std::to_string(arch));
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = n.CreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != 0)
    throw Error(std::string("cuda: nvrtcCreateProgram failed: ") + n.GetErrorString(r));
  struct Destroy {
    const Nvrtc& n;
    nvrtcProgram* p;
    ~Destroy() { n.DestroyProgram(p); }
  } destroy{n, &prog};
  std::vector<std::string> opts = nvrtc_options();
  opts.push_back((as_ptx ? "--gpu-architecture=compute_" : "--gpu-architecture=sm_") + std::to_string(arch));
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = n.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  size_t log_size = 0;
  if (n.GetProgramLogSize(prog, &log_size) == 0 && log_size > 1) {
    out.log.resize(log_size);
    n.GetProgramLog(prog, out.log.data());
    out.log.resize(log_size - 1);
  }
  if (r != 0)
    throw Error("cuda: NVRTC could not compile " + name + " for sm_" + std::to_string(arch) + " (" +
                n.GetErrorString(r) + "):\n" + out.log);
  size_t size = 0;
  if (as_ptx) {
    n.GetPTXSize(prog, &size);
    out.image.resize(size);
    n.GetPTX(prog, out.image.data());
    if (!out.image.empty() && out.image.back() == '\0') out.image.pop_back();
  } else {
    n.GetCUBINSize(prog, &size);
    out.image.resize(size);
    n.GetCUBIN(prog, out.image.data());
  }
  return out;
}

}  // namespace graft::codegen::cuda
