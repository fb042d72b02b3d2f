#include "codegen/cuda/cublas.h"

#include <map>
#include <mutex>
#include <string>

#include "codegen/cuda/shared_library.h"
#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

// cuBLAS's C ABI, as cublas_api.h declares it.
using Status = int;
using Handle = void*;
constexpr Status kCublasSuccess = 0;
constexpr int kOpN = 0, kOpT = 1;

struct CublasApi {
  SharedLibrary lib;
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, void*) = nullptr;
  Status (*GetVersion)(Handle, int*) = nullptr;
  Status (*Sgemm)(Handle, int, int, int, int, int, const float*, const float*, int, long long, const float*, int,
                  long long, const float*, float*, int, long long, int) = nullptr;
  Status (*Dgemm)(Handle, int, int, int, int, int, const double*, const double*, int, long long, const double*, int,
                  long long, const double*, double*, int, long long, int) = nullptr;
  Status (*Strsm)(Handle, int, int, int, int, int, int, const float*, const float*, int, float*, int) = nullptr;
  Status (*Dtrsm)(Handle, int, int, int, int, int, int, const double*, const double*, int, double*, int) = nullptr;
};

// Opens the library and binds the entry points; *why says what failed.
bool open_cublas(CublasApi& api, std::string* why) {
  if (!api.lib.open({"libcublas.so.13", "libcublas.so.12"}, "cuBLAS", why)) return false;
  auto bind = [&](const char* sym, auto** fn) { api.lib.bind(sym, fn, why); };
  bind("cublasCreate_v2", &api.Create);
  bind("cublasSetStream_v2", &api.SetStream);
  bind("cublasGetVersion_v2", &api.GetVersion);
  bind("cublasSgemmStridedBatched", &api.Sgemm);
  bind("cublasDgemmStridedBatched", &api.Dgemm);
  bind("cublasStrsm_v2", &api.Strsm);
  bind("cublasDtrsm_v2", &api.Dtrsm);
  return why->empty();
}

int cublas_int(int64_t v, const char* what) {
  if (v < 0 || v > 0x7fffffff) throw Error(std::string("cuda gemm: ") + what + " " + std::to_string(v) + " exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

class LoadedCublas final : public Cublas {
 public:
  explicit LoadedCublas(CublasApi api) : api_(std::move(api)) {}

  void gemm(int device, void* stream, const GemmCall& c) override {
    Handle h = handle_for(device);
    check(api_.SetStream(h, stream), "cublasSetStream");
    const int ta = c.trans_a ? kOpT : kOpN, tb = c.trans_b ? kOpT : kOpN;
    const int m = cublas_int(c.m, "m"), n = cublas_int(c.n, "n"), k = cublas_int(c.k, "k");
    const int lda = cublas_int(c.lda, "lda"), ldb = cublas_int(c.ldb, "ldb"), ldc = cublas_int(c.ldc, "ldc");
    const int batch = cublas_int(c.batch, "batch");
    if (c.f64) {
      const double one = 1, zero = 0;
      check(api_.Dgemm(h, ta, tb, m, n, k, &one, static_cast<const double*>(c.a), lda, c.stride_a,
                       static_cast<const double*>(c.b), ldb, c.stride_b, &zero, static_cast<double*>(c.c), ldc,
                       c.stride_c, batch),
            "cublasDgemmStridedBatched");
    } else {
      const float one = 1, zero = 0;
      check(api_.Sgemm(h, ta, tb, m, n, k, &one, static_cast<const float*>(c.a), lda, c.stride_a,
                       static_cast<const float*>(c.b), ldb, c.stride_b, &zero, static_cast<float*>(c.c), ldc,
                       c.stride_c, batch),
            "cublasSgemmStridedBatched");
    }
  }

  void trsm(int device, void* stream, const SolverCall& c) override {
    Handle h = handle_for(device);
    check(api_.SetStream(h, stream), "cublasSetStream");
    const int side = c.left ? 0 : 1, uplo = c.upper ? 1 : 0, op = c.trans ? kOpT : kOpN, diag = c.unit ? 1 : 0;
    const int m = cublas_int(c.m, "m"), n = cublas_int(c.n, "n");
    const int lda = cublas_int(c.lda, "lda"), ldb = cublas_int(c.ldb, "ldb");
    for (int64_t e = 0; e < c.batch; ++e) {
      if (c.f64) {
        const double one = 1;
        check(api_.Dtrsm(h, side, uplo, op, diag, m, n, &one, static_cast<const double*>(c.a) + e * c.stride_a, lda,
                         static_cast<double*>(c.b) + e * c.stride_b, ldb),
              "cublasDtrsm");
      } else {
        const float one = 1;
        check(api_.Strsm(h, side, uplo, op, diag, m, n, &one, static_cast<const float*>(c.a) + e * c.stride_a, lda,
                         static_cast<float*>(c.b) + e * c.stride_b, ldb),
              "cublasStrsm");
      }
    }
  }

 private:
  // A handle belongs to the context current when it was made: one per device.
  Handle handle_for(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    Handle& h = handles_[device];
    if (!h) check(api_.Create(&h), "cublasCreate");
    return h;
  }
  static void check(Status s, const char* what) {
    if (s != kCublasSuccess) throw Error(std::string("cuda: ") + what + " failed: cublasStatus_t " + std::to_string(s));
  }

  CublasApi api_;
  std::mutex mu_;
  std::map<int, Handle> handles_;  // kept for the process, like the modules
};

}  // namespace

std::unique_ptr<Cublas> load_cublas() {
  CublasApi api;
  std::string why;
  if (!open_cublas(api, &why)) throw UnsupportedError("cuda: " + why);
  return std::make_unique<LoadedCublas>(std::move(api));
}

}  // namespace graft::codegen::cuda
