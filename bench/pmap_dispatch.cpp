// pmap_dispatch: the per-call cost of pmap on 2 virtual devices for a one-op
// function, with and without a psum, as a new user calls it (a fresh,
// unsharded argument each call, and the result read back), beside jit of the
// same op on one device. Prints the median and the 90th percentile of
// single-call times (these machines are noisy: the spread matters).
// Goal (issue 15): <= 10 us per pmap call of a one-op function on 2 devices.
//   GRAFT_CPU_DEVICES=2 ./build/bench/pmap_dispatch
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "graft/graft.h"

using namespace graft;

namespace {

struct Spread {
  double median_us, p90_us;
};

template <class F>
Spread time_calls(F&& call, int n = 4000) {
  for (int i = 0; i < 200; ++i) call();  // warm: compile, start worker threads
  std::vector<double> us;
  us.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 9 / 10]};
}

void row(const char* name, Spread s, double ref) {
  std::printf("%-40s %10.1f %10.1f %9.1fx\n", name, s.median_us, s.p90_us, s.median_us / ref);
}

}  // namespace

int main() {
  setenv("GRAFT_CPU_DEVICES", "2", 0);
  if (devices().size() < 2) {
    std::fprintf(stderr, "pmap_dispatch needs GRAFT_CPU_DEVICES >= 2\n");
    return 2;
  }
  auto twice = [](const Array& v) { return v * 2.0f; };
  auto summed = [](const Array& v) { return psum(v, "i"); };
  auto p_twice = pmap(twice, "i");
  auto p_sum = pmap(summed, "i");
  auto j_twice = jit(twice, {.wait_for_compile = true});
  std::vector<float> data(16, 1.5f);
  Array one = array(std::vector<float>(8, 1.5f), {8});
  Spread jit_one = time_calls([&] { j_twice(one); });
  Spread kept = time_calls([&] { p_twice(array(data, {2, 8})); });
  Spread read = time_calls([&] { p_twice(array(data, {2, 8})).to_vector<float>(); });
  Spread with_psum = time_calls([&] { p_sum(array(data, {2, 8})).to_vector<float>(); });
  std::printf("per call, f32[8] per device, 2 devices       median us    p90 us   vs jit\n");
  row("jit (1 device, reference)", jit_one, jit_one.median_us);
  row("pmap v*2", kept, jit_one.median_us);
  row("pmap v*2, result read", read, jit_one.median_us);
  row("pmap psum, result read", with_psum, jit_one.median_us);
  std::printf("goal: pmap of a one-op function <= 10 us\n");
  return 0;
}
