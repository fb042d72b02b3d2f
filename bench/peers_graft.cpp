// bench/peers_graft: graft's side of bench/peers/run.py, which runs the same
// workloads in JAX and PyTorch (bench/peers/*_peer.py) and prints one table.
// Every workload is the one its peer computes, on the same inputs (made by
// the formula in `det` below, which the peers repeat in NumPy), and prints
//   workload<TAB>best seconds<TAB>median seconds     (of several repeats)
//   #check<TAB>workload<TAB>value                    (run.py compares these)
// A name with [interpreter] is graft's interpreter backend; without, graft's
// default jit backend (generated C++ where a compiler is found: "cpu").
// Workloads:
//   chain_logistic    logistic(tanh(x*1.5 + 0.5)*x) - exp(x)*0.25, f32[16M], jit
//   chain_sin         exp(sin(x)*2 + x) - x*0.5, f32[16M], jit
//   mlp_value_and_grad  jit(value_and_grad(loss)) step, MLP 784-512-512-10,
//                     batch 256, tanh, softmax cross-entropy (bench/grad_mlp)
//   per_example_grads jit(vmap(grad(loss))), MLP 64-64-10, batch 128 (bench/per_example)
//   eager_op_f32_8    one eager multiply on f32[8] (bench/eager)
//   jit_call_3op_f32_8  a cached jitted tanh(x*y + 1) on f32[8] (bench/dispatch)
//   gemm_1024         matmul f32 1024x1024 @ 1024x1024 (bench/gemm)
//   first_call_deep_mlp  the first call of jit(grad(loss)) for an MLP of 400
//                     layers of width 16: trace, differentiate, fuse, run
//                     (tiered: on the interpreter while the C++ module
//                     compiles in the background). Timed once per process,
//                     with graft's disk cache of compiled modules pointed at
//                     a fresh directory (cold).
// Usage: peers_graft [--dump DIR]  (DIR: the chains' outputs as .npy, which
// the peers compare element by element)
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

// The models' parameters (pytrees: GRAFT_PYTREE at namespace scope).
struct Layer {
  Array w, b;
};
GRAFT_PYTREE(Layer, w, b);

struct Mlp3 {
  Array w1, b1, w2, b2, w3, b3;
};
GRAFT_PYTREE(Mlp3, w1, b1, w2, b2, w3, b3);

struct Mlp2 {
  Array w1, b1, w2, b2;
};
GRAFT_PYTREE(Mlp2, w1, b1, w2, b2);

namespace {

// Deterministic inputs, the same in every peer: float(sin(k*0.7 + seed)) * scale
// for the flat index k, with the sine in double (so all agree to the last bit).
Array det(Shape shape, double seed, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<float>(std::sin(double(k) * 0.7 + seed)) * scale;
  return array(v, shape);
}

// One-hot labels (k*3) mod 10 for example k.
Array labels(int64_t batch, int64_t classes) {
  std::vector<float> v(static_cast<size_t>(batch * classes), 0.0f);
  for (int64_t k = 0; k < batch; ++k) v[static_cast<size_t>(k * classes + (k * 3) % classes)] = 1.0f;
  return array(v, {batch, classes});
}

void report(const std::string& name, TimeSpread t, double per = 1) {
  std::printf("%s\t%.6g\t%.6g\n", name.c_str(), t.min / per, t.median / per);
  std::fflush(stdout);
}
void check(const std::string& name, double value) { std::printf("#check\t%s\t%.9g\n", name.c_str(), value); }

double sum_abs(const Array& a) {
  double s = 0;
  for (float v : astype(a, f32).to_vector<float>()) s += std::fabs(v);
  return s;
}

const JitOptions kInterp{.backend = Backend::interpreter};
const JitOptions kDefault{.wait_for_compile = true};  // timed calls run the compiled module

// 400 layers of width 16, batch 16: h = tanh(h w + b); loss = mean(h^2).
void first_call_deep_mlp() {
  const int layers = 400, width = 16;
  std::vector<Layer> p;
  for (int i = 0; i < layers; ++i)
    p.push_back({det({width, width}, 1.0 + i, 0.3f), det({width}, 1000.0 + i, 0.1f)});
  Array x = det({16, width}, 5.0, 1.0f);
  auto loss = [](const std::vector<Layer>& ps, const Array& h0) {
    Array h = h0;
    for (const Layer& l : ps) h = graft::tanh(matmul(h, l.w) + l.b);
    return mean(h * h);
  };
  for (int interp = 0; interp < 2; ++interp) {
    // graft's default: tiered, so the first call runs on the interpreter while the module compiles.
    auto jg = jit(grad(loss), interp ? kInterp : JitOptions{});
    std::vector<Layer> g;
    double s = seconds_of([&] { g = jg(p, x); });
    const std::string name = interp ? "first_call_deep_mlp[interpreter]" : "first_call_deep_mlp";
    report(name, {s, s, s});
    double total = 0;
    for (const Layer& l : g) total += sum_abs(l.w);
    check(name, total);
  }
}

void chains(const std::string& dump) {
  const int64_t n = int64_t{1} << 24;
  Array x = (astype(arange(n), f32) * (1.0f / static_cast<float>(n)) - 0.5f) * 8.0f;  // [-4, 4)
  struct Chain {
    const char* name;
    Array (*f)(const Array&);
  };
  const Chain list[] = {
      {"chain_logistic",
       [](const Array& v) { return graft::logistic(graft::tanh(v * 1.5f + 0.5f) * v) - graft::exp(v) * 0.25f; }},
      {"chain_sin", [](const Array& v) { return graft::exp(graft::sin(v) * 2.0f + v) - v * 0.5f; }},
  };
  for (const Chain& c : list) {
    for (int interp = 0; interp < 2; ++interp) {
      auto jf = jit(c.f, interp ? kInterp : kDefault);
      Array y = jf(x);  // compile outside the timing
      const std::string name = std::string(c.name) + (interp ? "[interpreter]" : "");
      report(name, timed_spread([&] { Array r = jf(x); }, 9));
      check(name, sum_abs(y));
      if (!interp && !dump.empty()) save_npy(dump + "/" + c.name + ".npy", y);
    }
  }
}

Array mlp_loss(const Mlp3& p, const Array& x, const Array& y) {
  Array h1 = graft::tanh(matmul(x, p.w1) + p.b1);
  Array h2 = graft::tanh(matmul(h1, p.w2) + p.b2);
  return -mean(sum(y * log_softmax(matmul(h2, p.w3) + p.b3, {-1}), {-1}));
}

void mlp() {
  const int64_t batch = 256, in = 784, hidden = 512, out = 10;
  auto s = [](int64_t fan_in) { return static_cast<float>(1.0 / std::sqrt(double(fan_in))); };
  Mlp3 p{det({in, hidden}, 1, s(in)),         det({hidden}, 2, 0.1f),  det({hidden, hidden}, 3, s(hidden)),
         det({hidden}, 4, 0.1f),              det({hidden, out}, 5, s(hidden)), det({out}, 6, 0.1f)};
  Array x = det({batch, in}, 7, 1.0f), y = labels(batch, out);
  for (int interp = 0; interp < 2; ++interp) {
    auto step = jit(value_and_grad(mlp_loss), interp ? kInterp : kDefault);
    auto [v, g] = step(p, x, y);
    const int steps = 4;
    const std::string name = interp ? "mlp_value_and_grad[interpreter]" : "mlp_value_and_grad";
    report(name,
           timed_spread(
               [&] {
                 for (int i = 0; i < steps; ++i) {
                   auto [vi, gi] = step(p, x, y);
                   (void)vi.item<float>();  // the step is done when its value is read
                 }
               },
               11),
           steps);
    check(name + ":loss", v.item<float>());
    check(name + ":sum|dw1|", sum_abs(g.w1));
  }
}

Array example_loss(const Mlp2& p, const Array& x, const Array& y) {  // x [64], y one-hot [10]
  Array h = graft::tanh(matmul(x, p.w1) + p.b1);
  return -sum(log_softmax(matmul(h, p.w2) + p.b2) * y);
}

void per_example() {
  const int64_t in = 64, hidden = 64, out = 10, batch = 128;
  Mlp2 p{det({in, hidden}, 11, 0.3f), det({hidden}, 12, 0.1f), det({hidden, out}, 13, 0.3f), det({out}, 14, 0.1f)};
  Array xs = det({batch, in}, 15, 1.0f), ys = labels(batch, out);
  for (int interp = 0; interp < 2; ++interp) {
    auto f = jit(vmap(grad(example_loss), Axes{none, 0, 0}), interp ? kInterp : kDefault);
    Mlp2 g = f(p, xs, ys);
    const std::string name = interp ? "per_example_grads[interpreter]" : "per_example_grads";
    report(name, timed_spread([&] { Mlp2 r = f(p, xs, ys); }, 21));
    check(name, sum_abs(g.w1));
  }
}

void dispatch() {
  Array x = full({8}, 0.5f), y = full({8}, 1.0f);
  const int ops = 5000;
  report("eager_op_f32_8", timed_spread(
                               [&] {
                                 Array z = x;
                                 for (int i = 0; i < ops; ++i) z = z * y;
                               },
                               40),
         ops);
  auto f = [](const Array& a, const Array& b) { return graft::tanh(a * b + 1.0f); };
  for (int interp = 0; interp < 2; ++interp) {
    auto jf = jit(f, interp ? kInterp : kDefault);
    Array r = jf(x, y);
    const int calls = 20000;
    const std::string name = interp ? "jit_call_3op_f32_8[interpreter]" : "jit_call_3op_f32_8";
    report(name, timed_spread(
                     [&] {
                       for (int i = 0; i < calls; ++i) jf(x, y);
                     },
                     7),
           calls);
    check(name, sum_abs(r));
  }
}

void gemm() {
  const int64_t n = 1024;
  Array a = det({n, n}, 21, 1.0f), b = det({n, n}, 22, 1.0f);
  Array c = matmul(a, b);
  report("gemm_1024", timed_spread([&] { Array r = matmul(a, b); }, 9));
  check("gemm_1024", sum_abs(c));
}

}  // namespace

int main(int argc, char** argv) {
  std::string dump;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--dump") == 0 && i + 1 < argc) dump = argv[++i];
  if (!dump.empty()) std::filesystem::create_directories(dump);
  // A fresh disk cache, so that first_call_deep_mlp compiles as a new user's first run would.
  std::string cache = (std::filesystem::temp_directory_path() / ("graft-peers-" + std::to_string(getpid()))).string();
  setenv("GRAFT_CACHE_DIR", cache.c_str(), 1);
  std::printf("#program\t%s\n", build_info().c_str());
  {
    auto warm = jit([](const Array& v) { return v + 1.0f; }, kDefault);  // start the runtime and the compiler
    warm(full({8}, 1.0f));
  }
  first_call_deep_mlp();
  chains(dump);
  mlp();
  per_example();
  dispatch();
  gemm();
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  return 0;
}
