// data_parallel: an MLP trained data-parallel on 4 virtual CPU devices.
// The parameters are replicated (one copy per device), each device takes a
// quarter of the batch, and the gradients are averaged across devices with
// pmean before the update, so every replica applies the same step. The loss
// curve is compared with the same training on one device and the full
// batch; the program exits non-zero if they differ by more than 1e-5.
//
// The same program runs across processes: under mpirun the 4 devices are
// split over the processes (2 each for -np 2), each process passes the
// quarters of the batch its devices take, and the pmean spans them all, so
// the loss curve is the one a single process prints.
//
//   ./build/examples/data_parallel
//   mpirun -np 2 ./build/examples/data_parallel
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "graft/graft.h"

using namespace graft;

struct Mlp {
  Array w1, b1, w2, b2;
};
GRAFT_PYTREE(Mlp, w1, b1, w2, b2);

constexpr int kDevices = 4;
constexpr int64_t kBatch = 256, kIn = 16, kHidden = 64;
constexpr float kLearningRate = 0.1f;

// Mean squared error of the network on a batch (x: [b, in], y: [b, 1]).
Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = graft::tanh(matmul(x, p.w1) + p.b1);
  Array e = matmul(h, p.w2) + p.b2 - y;
  return mean(e * e);
}

Mlp update(const Mlp& p, const Mlp& g) {
  return {p.w1 - kLearningRate * g.w1, p.b1 - kLearningRate * g.b1, p.w2 - kLearningRate * g.w2,
          p.b2 - kLearningRate * g.b2};
}

// Deterministic "random" values in [-scale, scale].
Array wiggle(Shape shape, float scale, float phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, f32) * 1.618f + phase) * scale, shape);
}

// The first axis split into `parts` equal pieces: [parts, n / parts, ...].
Array split(const Array& a, int64_t parts) {
  Shape s = a.shape();
  s[0] /= parts;
  s.insert(s.begin(), parts);
  return reshape(a, s);
}

// `parts` copies of every leaf, stacked: the replicated parameters.
Mlp replicate(const Mlp& p, int parts) {
  auto copies = [parts](const Array& a) { return stack(std::vector<Array>(static_cast<size_t>(parts), a)); };
  return {copies(p.w1), copies(p.b1), copies(p.w2), copies(p.b2)};
}

// This process's part of a stacked array: the entries of its own devices.
Array local_part(const Array& a) {
  const int64_t local = static_cast<int64_t>(distributed::local_devices().size());
  Shape start(a.shape().size(), 0), stop = a.shape();
  start[0] = distributed::process_index() * local;
  stop[0] = start[0] + local;
  return slice(a, start, stop);
}

int main() {
  // One process alone, or one of those mpirun started: kDevices devices in all.
  distributed::initialize({.cpu_devices = kDevices});
  const bool first = distributed::process_index() == 0;  // prints the table

  const Array x = wiggle({kBatch, kIn}, 1.0f, 0.3f);
  const Array y = sin(matmul(x, wiggle({kIn, 1}, 0.5f, 1.1f)));
  const Mlp init{wiggle({kIn, kHidden}, 0.3f, 0.0f), zeros({kHidden}), wiggle({kHidden, 1}, 0.3f, 2.0f), zeros({1})};

  // One device, the full batch.
  auto single_step = jit([](const Mlp& p, const Array& x, const Array& y) {
    auto [l, g] = value_and_grad(loss)(p, x, y);
    return std::make_tuple(update(p, g), l);
  });
  // Every device: its shard of the batch, gradients averaged over "devices".
  auto parallel_step = pmap(
      [](const Mlp& p, const Array& x, const Array& y) {
        auto [l, g] = value_and_grad(loss)(p, x, y);
        Mlp mean_g{pmean(g.w1, "devices"), pmean(g.b1, "devices"), pmean(g.w2, "devices"), pmean(g.b2, "devices")};
        return std::make_tuple(update(p, mean_g), pmean(l, "devices"));
      },
      "devices");

  Mlp single = init;
  const int local = static_cast<int>(distributed::local_devices().size());
  Mlp replicas = replicate(init, local);  // stays sharded across steps: each device keeps its copy
  const Array xs = local_part(split(x, kDevices)), ys = local_part(split(y, kDevices));
  double worst = 0;
  if (first)
    std::printf("step  loss (1 device)  loss (%d devices in %d process%s)  difference\n", kDevices,
                distributed::process_count(), distributed::process_count() > 1 ? "es" : "");
  for (int step = 0; step < 30; ++step) {
    auto [next_single, l1] = single_step(single, x, y);
    auto [next_replicas, ln] = parallel_step(replicas, xs, ys);
    single = next_single;
    replicas = next_replicas;
    const double a = l1.item<double>(), b = ln.to_vector<double>()[0];
    worst = std::max(worst, std::abs(a - b));
    if (first && (step % 5 == 0 || step == 29))
      std::printf("%4d  %15.8f  %30.8f  %10.2e\n", step, a, b, std::abs(a - b));
  }
  // The replicas agree with each other and with the single-device parameters.
  const std::vector<Array> w1_shards = replicas.w1.addressable_shards();
  for (size_t d = 0; d < w1_shards.size(); ++d) {
    const double diff = max(abs(w1_shards[d] - single.w1)).item<double>();
    worst = std::max(worst, diff);
    std::printf("process %d, device %s: w1 differs from the single-device w1 by %.2e\n", distributed::process_index(),
                w1_shards[d].device().str().c_str(), diff);
  }
  if (worst > 1e-5) {
    std::printf("FAILED: data-parallel training differs from single-device training by %.2e\n", worst);
    return 1;
  }
  std::printf("data-parallel training matches single-device training (largest difference %.2e)\n", worst);
  return 0;
}
