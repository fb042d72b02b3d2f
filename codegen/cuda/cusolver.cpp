#include "codegen/cuda/cusolver.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "codegen/cuda/shared_library.h"
#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

// cuSOLVER's C ABI, as cusolverDn.h declares it.
using Status = int;
using Handle = void*;
constexpr Status kCusolverSuccess = 0;
constexpr int kFillLower = 0, kFillUpper = 1;  // cublasFillMode_t
constexpr int kEigModeVector = 1;              // cusolverEigMode_t

template <class T>
struct Routines {
  Status (*potrf_size)(Handle, int, int, T*, int, int*) = nullptr;
  Status (*potrf)(Handle, int, int, T*, int, T*, int, int*) = nullptr;
  Status (*syevd_size)(Handle, int, int, int, const T*, int, const T*, int*) = nullptr;
  Status (*syevd)(Handle, int, int, int, T*, int, T*, T*, int, int*) = nullptr;
  Status (*getrf_size)(Handle, int, int, T*, int, int*) = nullptr;
  Status (*getrf)(Handle, int, int, T*, int, T*, int*, int*) = nullptr;
  Status (*geqrf_size)(Handle, int, int, T*, int, int*) = nullptr;
  Status (*geqrf)(Handle, int, int, T*, int, T*, T*, int, int*) = nullptr;
  Status (*orgqr_size)(Handle, int, int, int, const T*, int, const T*, int*) = nullptr;
  Status (*orgqr)(Handle, int, int, int, T*, int, const T*, T*, int, int*) = nullptr;
  Status (*gesvd_size)(Handle, int, int, int*) = nullptr;
  Status (*gesvd)(Handle, signed char, signed char, int, int, T*, int, T*, T*, int, T*, int, T*, int, T*,
                  int*) = nullptr;
};

struct CusolverApi {
  SharedLibrary lib;
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, void*) = nullptr;
  Routines<float> s;
  Routines<double> d;
};

// Opens the library and binds the entry points; *why says what failed.
bool open_cusolver(CusolverApi& api, std::string* why) {
  if (!api.lib.open({"libcusolver.so.12", "libcusolver.so.11"}, "cuSOLVER", why)) return false;
  auto bind = [&](const std::string& sym, auto** fn) { api.lib.bind(sym, fn, why); };
  bind("cusolverDnCreate", &api.Create);
  bind("cusolverDnSetStream", &api.SetStream);
  auto bind_all = [&](const std::string& x, auto& r) {
    const std::string p = "cusolverDn" + x;
    bind(p + "potrf_bufferSize", &r.potrf_size);
    bind(p + "potrf", &r.potrf);
    bind(p + "syevd_bufferSize", &r.syevd_size);
    bind(p + "syevd", &r.syevd);
    bind(p + "getrf_bufferSize", &r.getrf_size);
    bind(p + "getrf", &r.getrf);
    bind(p + "geqrf_bufferSize", &r.geqrf_size);
    bind(p + "geqrf", &r.geqrf);
    bind(p + "orgqr_bufferSize", &r.orgqr_size);
    bind(p + "orgqr", &r.orgqr);
    bind(p + "gesvd_bufferSize", &r.gesvd_size);
    bind(p + "gesvd", &r.gesvd);
  };
  bind_all("S", api.s);
  bind_all("D", api.d);
  return why->empty();
}

int cusolver_int(int64_t v, const char* what) {
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
    using R = SolverCall::Routine;
    const int m = cusolver_int(c.m, "m"), n = cusolver_int(c.n, "n"), k = cusolver_int(c.k, "k");
    const int lda = cusolver_int(c.lda, "lda"), ldu = cusolver_int(c.ldu, "ldu"), ldvt = cusolver_int(c.ldvt, "ldvt");
    const int uplo = c.upper ? kFillUpper : kFillLower;
    T* a = static_cast<T*>(c.a);
    T* b = static_cast<T*>(c.b);
    int lwork = 0;
    switch (c.routine) {
      case R::potrf: check(r.potrf_size(h, uplo, n, a, lda, &lwork), "cusolverDnXpotrf_bufferSize"); break;
      case R::syevd:
        check(r.syevd_size(h, kEigModeVector, uplo, n, a, lda, b, &lwork), "cusolverDnXsyevd_bufferSize");
        break;
      case R::getrf: check(r.getrf_size(h, m, n, a, lda, &lwork), "cusolverDnXgetrf_bufferSize"); break;
      case R::geqrf: check(r.geqrf_size(h, m, n, a, lda, &lwork), "cusolverDnXgeqrf_bufferSize"); break;
      case R::orgqr: check(r.orgqr_size(h, m, n, k, a, lda, b, &lwork), "cusolverDnXorgqr_bufferSize"); break;
      case R::gesvd: check(r.gesvd_size(h, m, n, &lwork), "cusolverDnXgesvd_bufferSize"); break;
      case R::trsm: throw Error("cuda solver: cuSOLVER does not run trsm (cuBLAS does)");
    }
    // gesvd's rwork (min(m, n) - 1 superdiagonal entries) after the workspace.
    const size_t extra = c.routine == R::gesvd ? static_cast<size_t>(std::min(m, n)) : 0;
    T* work = static_cast<T*>(workspace(sizeof(T) * (static_cast<size_t>(lwork > 0 ? lwork : 1) + extra)));
    T* rwork = work + (lwork > 0 ? lwork : 1);
    for (int64_t e = 0; e < c.batch; ++e) {
      T* ae = a + e * c.stride_a;
      T* be = b ? b + e * c.stride_b : nullptr;
      int* info = c.info + e;
      switch (c.routine) {
        case R::potrf: check(r.potrf(h, uplo, n, ae, lda, work, lwork, info), "cusolverDnXpotrf"); break;
        case R::syevd:
          check(r.syevd(h, kEigModeVector, uplo, n, ae, lda, be, work, lwork, info), "cusolverDnXsyevd");
          break;
        case R::getrf:
          check(r.getrf(h, m, n, ae, lda, work, c.ipiv + e * std::min(m, n), info), "cusolverDnXgetrf");
          break;
        case R::geqrf: check(r.geqrf(h, m, n, ae, lda, be, work, lwork, info), "cusolverDnXgeqrf"); break;
        case R::orgqr: check(r.orgqr(h, m, n, k, ae, lda, be, work, lwork, info), "cusolverDnXorgqr"); break;
        case R::gesvd: {
          T* ue = c.job == 'N' ? nullptr : static_cast<T*>(c.u) + e * c.stride_u;
          T* vte = c.job == 'N' ? nullptr : static_cast<T*>(c.vt) + e * c.stride_vt;
          check(r.gesvd(h, static_cast<signed char>(c.job), static_cast<signed char>(c.job), m, n, ae, lda, be, ue,
                        std::max(ldu, 1), vte, std::max(ldvt, 1), work, lwork, rwork, info),
                "cusolverDnXgesvd");
          break;
        }
        case R::trsm: break;
      }
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
    if (s != kCusolverSuccess)
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

}  // namespace graft::codegen::cuda
