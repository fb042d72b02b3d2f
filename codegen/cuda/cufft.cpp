// cuFFT's C ABI as cufft.h declares it, bound with dlopen (see cufft.h).
#include "codegen/cuda/cufft.h"

#include <map>
#include <mutex>
#include <tuple>

#include "codegen/cuda/shared_library.h"
#include "graft/errors.h"

namespace graft::codegen::cuda {
namespace {

using Result = int;  // cufftResult
using Plan = int;    // cufftHandle
constexpr Result kCufftSuccess = 0;
// cufftType
constexpr int kR2C = 0x2a, kC2R = 0x2c, kC2C = 0x29, kD2Z = 0x6a, kZ2D = 0x6c, kZ2Z = 0x69;
constexpr int kForward = -1, kInverse = 1;

struct CufftApi {
  SharedLibrary lib;
  Result (*PlanMany)(Plan*, int, int*, int*, int, int, int*, int, int, int, int) = nullptr;
  Result (*SetStream)(Plan, void*) = nullptr;
  Result (*ExecC2C)(Plan, void*, void*, int) = nullptr;
  Result (*ExecZ2Z)(Plan, void*, void*, int) = nullptr;
  Result (*ExecR2C)(Plan, void*, void*) = nullptr;
  Result (*ExecD2Z)(Plan, void*, void*) = nullptr;
  Result (*ExecC2R)(Plan, void*, void*) = nullptr;
  Result (*ExecZ2D)(Plan, void*, void*) = nullptr;
  Result (*Destroy)(Plan) = nullptr;
};

bool open_cufft(CufftApi& api, std::string* why) {
  if (!api.lib.open({"libcufft.so.12", "libcufft.so.11"}, "cuFFT", why)) return false;
  auto bind = [&](const std::string& sym, auto** fn) { api.lib.bind(sym, fn, why); };
  bind("cufftPlanMany", &api.PlanMany);
  bind("cufftSetStream", &api.SetStream);
  bind("cufftExecC2C", &api.ExecC2C);
  bind("cufftExecZ2Z", &api.ExecZ2Z);
  bind("cufftExecR2C", &api.ExecR2C);
  bind("cufftExecD2Z", &api.ExecD2Z);
  bind("cufftExecC2R", &api.ExecC2R);
  bind("cufftExecZ2D", &api.ExecZ2D);
  bind("cufftDestroy", &api.Destroy);
  return why->empty();
}

int checked_fft_int(int64_t v, const char* what) {
  if (v < 0 || v > 0x7fffffff)
    throw Error(std::string("cuda fft: ") + what + " " + std::to_string(v) + " exceeds cuFFT's int range");
  return static_cast<int>(v);
}

class LoadedCufft final : public Cufft {
 public:
  explicit LoadedCufft(CufftApi api) : api_(std::move(api)) {}
  ~LoadedCufft() override {
    for (auto& [key, plan] : plans_) api_.Destroy(plan);
  }

  void run(int device, void* stream, const FftCall& c) override {
    const int type = c.type == ir::FftType::rfft    ? (c.f64 ? kD2Z : kR2C)
                     : c.type == ir::FftType::irfft ? (c.f64 ? kZ2D : kC2R)
                                                    : (c.f64 ? kZ2Z : kC2C);
    Plan plan = plan_for(device, type, c);
    check(api_.SetStream(plan, stream), "cufftSetStream");
    switch (type) {
      case kC2C: check(api_.ExecC2C(plan, c.in, c.out, direction(c)), "cufftExecC2C"); break;
      case kZ2Z: check(api_.ExecZ2Z(plan, c.in, c.out, direction(c)), "cufftExecZ2Z"); break;
      case kR2C: check(api_.ExecR2C(plan, c.in, c.out), "cufftExecR2C"); break;
      case kD2Z: check(api_.ExecD2Z(plan, c.in, c.out), "cufftExecD2Z"); break;
      case kC2R: check(api_.ExecC2R(plan, c.in, c.out), "cufftExecC2R"); break;
      default: check(api_.ExecZ2D(plan, c.in, c.out), "cufftExecZ2D"); break;
    }
  }

 private:
  static int direction(const FftCall& c) { return c.type == ir::FftType::ifft ? kInverse : kForward; }

  // Plans belong to the context current when they are made: one per device and shape.
  Plan plan_for(int device, int type, const FftCall& c) {
    std::tuple<int, int, int, int64_t, int64_t, int64_t, int64_t> key{device,       type,         c.rank, c.lengths[0],
                                                                      c.lengths[1], c.lengths[2], c.batch};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    int n[3];
    for (int i = 0; i < c.rank; ++i) n[i] = checked_fft_int(c.lengths[i], "length");
    Plan plan = 0;
    // No embedding: the basic contiguous layouts (a real transform's complex
    // side has lengths[rank-1] / 2 + 1 elements in its last axis).
    check(api_.PlanMany(&plan, c.rank, n, nullptr, 1, 0, nullptr, 1, 0, type, checked_fft_int(c.batch, "batch")),
          "cufftPlanMany");
    plans_.emplace(key, plan);
    return plan;
  }
  static void check(Result r, const char* what) {
    if (r != kCufftSuccess) throw Error(std::string("cuda: ") + what + " failed: cufftResult " + std::to_string(r));
  }

  CufftApi api_;
  std::mutex mu_;
  std::map<std::tuple<int, int, int, int64_t, int64_t, int64_t, int64_t>, Plan> plans_;
};

}  // namespace

std::unique_ptr<Cufft> load_cufft() {
  CufftApi api;
  std::string why;
  if (!open_cufft(api, &why)) throw UnsupportedError("cuda: " + why);
  return std::make_unique<LoadedCufft>(std::move(api));
}

}  // namespace graft::codegen::cuda
