// The leak hunt of JAX's "Device memory profiling" guide, in graft: a training
// loop that, by mistake, keeps every step's activations alive in a
// std::vector. A memory profile is saved after each step; diffing two of them
// with `go tool pprof -top -lines -diff_base=mem_1.pb.gz mem_4.pb.gz` names
// the line that keeps allocating (docs/MEMORY.md shows the output).
//
//   ./memory_leak_hunt [dir]   writes dir/mem_<step>.pb.gz (default: the current directory)
#include <cstdio>
#include <string>
#include <vector>

#include "graft/graft.h"

using namespace graft;

namespace {

Array layer(const Array& w, const Array& x) { return tanh(matmul(x, w)); }

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  Array key = random::key(0);
  Array w = random::normal(key, {512, 512}) * 0.05f;
  Array x = random::normal(random::split(key)[1], {256, 512});

  std::vector<Array> history;  // the leak: it should hold a scalar per step, not the activations
  for (int step = 1; step <= 4; ++step) {
    named_scope scope("train_step");
    Array h = layer(w, x);
    history.push_back(h * 1.0f);  // <- the line that grows: 512 KiB a step
    Array loss = mean(square(h));
    std::printf("step %d: loss %.6f, %lld bytes in use\n", step, loss.item<float>(),
                static_cast<long long>(default_device().memory_stats().bytes_in_use));
    profiler::save_device_memory_profile(dir + "/mem_" + std::to_string(step) + ".pb.gz");
  }
  std::printf("profiles written to %s/mem_{1..4}.pb.gz; compare two with\n"
              "  go tool pprof -top -lines -diff_base=%s/mem_1.pb.gz %s/mem_4.pb.gz\n",
              dir.c_str(), dir.c_str(), dir.c_str());
  return 0;
}
