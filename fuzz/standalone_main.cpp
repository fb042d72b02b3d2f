// A main for the fuzz targets where libFuzzer is absent (GCC builds, the
// sanitizer pass of CI): runs every input file named on the command line (or
// found in a named directory), then, with -seconds=N, mutates those inputs
// at random for N seconds (byte flips, inserts, erases, splices; seeded, so a
// run can be repeated with -seed=S). Not coverage-guided: that is
// scripts/fuzz.sh with clang. Prints the number of executions.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void mutate(std::vector<uint8_t>& d, const std::vector<std::vector<uint8_t>>& pool, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % std::max<size_t>(n, 1)); };
  for (int k = 1 + static_cast<int>(pick(4)); k > 0; --k) {
    switch (pick(5)) {
      case 0:
        if (!d.empty()) d[pick(d.size())] ^= static_cast<uint8_t>(1u << pick(8));
        break;
      case 1:
        if (!d.empty()) d[pick(d.size())] = static_cast<uint8_t>(rng());
        break;
      case 2:
        if (d.size() < 4096) d.insert(d.begin() + static_cast<std::ptrdiff_t>(pick(d.size() + 1)), static_cast<uint8_t>(rng()));
        break;
      case 3:
        if (!d.empty()) d.erase(d.begin() + static_cast<std::ptrdiff_t>(pick(d.size())));
        break;
      default: {  // splice: a piece of another input
        const std::vector<uint8_t>& o = pool[pick(pool.size())];
        if (o.empty()) break;
        const size_t at = pick(o.size()), len = 1 + pick(std::min<size_t>(64, o.size() - at));
        d.insert(d.begin() + static_cast<std::ptrdiff_t>(pick(d.size() + 1)), o.begin() + static_cast<std::ptrdiff_t>(at),
                 o.begin() + static_cast<std::ptrdiff_t>(at + len));
        break;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  double seconds = 0;
  uint64_t seed = 1;
  std::vector<std::vector<uint8_t>> inputs;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "-seconds=", 9) == 0) {
      seconds = std::atof(argv[i] + 9);
    } else if (std::strncmp(argv[i], "-seed=", 6) == 0) {
      seed = std::strtoull(argv[i] + 6, nullptr, 10);
    } else if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[i]))
        if (e.is_regular_file()) inputs.push_back(read_file(e.path()));
    } else {
      inputs.push_back(read_file(argv[i]));
    }
  }
  uint64_t runs = 0;
  for (const auto& d : inputs) {
    LLVMFuzzerTestOneInput(d.data(), d.size());
    ++runs;
  }
  if (seconds > 0) {
    if (inputs.empty()) inputs.push_back({});
    std::mt19937_64 rng(seed);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      std::vector<uint8_t> d = inputs[static_cast<size_t>(rng() % inputs.size())];
      mutate(d, inputs, rng);
      LLVMFuzzerTestOneInput(d.data(), d.size());
      ++runs;
    }
  }
  std::printf("%s: %llu inputs run without a finding (seed %llu)\n", argv[0], static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(seed));
  return 0;
}
