#include "codegen/cuda/cusolver.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

// cuSOLVER's C ABI, as cusolverDn.h declares it.
using Status = int;
using Handle = void*;
constexpr Status kStatusSuccess = 0;
constexpr int kFillLower = 0, kFillUpper = 1;  // cublasFillMode_t
constexpr int kEigModeVector = 1;              // cusolverEigMode_t

template <class T>
struct Routines {
  Status (*potrf_size)(Handle, int, int, T*, int, int*) = nullptr;
  Status (*potrf)(Handle, int, int, T*, int, T*, int, int*) = nullptr;
  Status (*syevd_size)(Handle, int, int, int, const T*, int, const T*, int*) = nullptr;
  Status (*syevd)(Handle, int, int, int, T*, int, T*, T*, int, int*) = nullptr;
};

struct CusolverApi {
  void* handle = nullptr;
  std::string path;
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, void*) = nullptr;
  Routines<float> s;
  Routines<double> d;
};

// Opens the library and binds the entry points; *why says what failed.
bool open_cusolver(CusolverApi& api, std::string* why) {
  for (const char* name : {"libcusolver.so.12", "libcusolver.so.11"}) {
    api.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (api.handle) {
      api.path = name;
      break;
    }
  }
  if (!api.handle) {
    *why = "cuSOLVER is not installed (libcusolver.so.12 and .11 do not load: " + std::string(dlerror()) + ")";
    return false;
  }
  auto bind = [&](const char* sym, auto** fn) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(api.handle, sym));
    if (!*fn && why->empty()) *why = api.path + " lacks " + sym;
  };
  bind("cusolverDnCreate", &api.Create);
  bind("cusolverDnSetStream", &api.SetStream);
  bind("cusolverDnSpotrf_bufferSize", &api.s.potrf_size);
  bind("cusolverDnSpotrf", &api.s.potrf);
  bind("cusolverDnSsyevd_bufferSize", &api.s.syevd_size);
  bind("cusolverDnSsyevd", &api.s.syevd);
  bind("cusolverDnDpotrf_bufferSize", &api.d.potrf_size);
  bind("cusolverDnDpotrf", &api.d.potrf);
  bind("cusolverDnDsyevd_bufferSize", &api.d.syevd_size);
  bind("cusolverDnDsyevd", &api.d.syevd);
  return why->empty();
}

int checked_int(int64_t v, const char* what) {
  if (v < 0 || v > 0x7fffffff)
    throw Error(std::string("cuda solver: ") + what + " " + std::to_string(v) + " exceeds cuSOLVER's int range");
  return static_cast<int>(v);
}

class LoadedCusolver final : public Cusolver {
 public:
  explicit LoadedCusolver(CusolverApi api) : api_(std::move(api)) {}

  void run(int device, void* stream, const SolverCall& c, const std::function<void*(size_t)>& workspace) override {
    Handle h = handle_for(device);
    check(api_.SetStream(h, stream), "cusolverDnSetStream");
    if (c.f64)
      run_typed(h, c, api_.d, workspace);
    else
      run_typed(h, c, api_.s, workspace);
  }

 private:
  template <class T>
  void run_typed(Handle h, const SolverCall& c, const Routines<T>& r, const std::function<void*(size_t)>& workspace) {
    const int n = checked_int(c.n, "n"), lda = checked_int(c.lda, "lda");
    const int uplo = c.upper ? kFillUpper : kFillLower;
    T* a = static_cast<T*>(c.a);
    T* b = static_cast<T*>(c.b);
    int lwork = 0;
    if (c.routine == SolverCall::Routine::potrf)
      check(r.potrf_size(h, uplo, n, a, lda, &lwork), "cusolverDnXpotrf_bufferSize");
    else if (c.routine == SolverCall::Routine::syevd)
      check(r.syevd_size(h, kEigModeVector, uplo, n, a, lda, b, &lwork), "cusolverDnXsyevd_bufferSize");
    else
      throw Error("cuda solver: cuSOLVER does not run trsm (cuBLAS does)");
    T* work = static_cast<T*>(workspace(sizeof(T) * static_cast<size_t>(lwork > 0 ? lwork : 1)));
    for (int64_t e = 0; e < c.batch; ++e) {
      T* ae = a + e * c.stride_a;
      if (c.routine == SolverCall::Routine::potrf)
        check(r.potrf(h, uplo, n, ae, lda, work, lwork, c.info + e), "cusolverDnXpotrf");
      else
        check(r.syevd(h, kEigModeVector, uplo, n, ae, lda, b + e * c.stride_b, work, lwork, c.info + e),
              "cusolverDnXsyevd");
    }
  }

  // A handle belongs to the context current when it was made: one per device.
  Handle handle_for(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    Handle& h = handles_[device];
    if (!h) check(api_.Create(&h), "cusolverDnCreate");
    return h;
  }
  static void check(Status s, const char* what) {
    if (s != kStatusSuccess)
      throw Error(std::string("cuda: ") + what + " failed: cusolverStatus_t " + std::to_string(s));
  }

  CusolverApi api_;
  std::mutex mu_;
  std::map<int, Handle> handles_;  // kept for the process, like cuBLAS's
};

}  // namespace

std::unique_ptr<Cusolver> load_cusolver() {
  CusolverApi api;
  std::string why;
  if (!open_cusolver(api, &why)) throw UnsupportedError("cuda: " + why);
  return std::make_unique<LoadedCusolver>(std::move(api));
}

std::string cusolver_description() {
  CusolverApi api;
  std::string why;
  if (!open_cusolver(api, &why)) return "no cuSOLVER: " + why;
  return "cuSOLVER (" + api.path + ")";
}

}  // namespace graft::codegen::cuda
