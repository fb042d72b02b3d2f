// libFuzzer target: a case of the JAX-valued corpus as the corpus loader
// reads one (corpus/cases/NAME: graph.json, in_0.npy, in_1.npy, ...), packed
// in one input: the graph's JSON, then each .npy file, the parts separated by
// the line "--npy--". Malformed parts, arrays whose types disagree with the
// graph's inputs, and a graph that refuses them must each be a graft::Error;
// a case that loads is evaluated as the corpus test evaluates it.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_setup.h"
#include "graft/graft.h"

namespace {
std::string path;
const std::string kSeparator = "\n--npy--\n";
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graft_fuzz::setup();
  const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  path = dir + "/graft_fuzz_case_" + std::to_string(getpid()) + ".npy";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t next = text.find(kSeparator, at);
    parts.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + kSeparator.size();
  }
  try {
    const graft::Graph g = graft::Graph::from_json(parts[0]);
    std::vector<graft::Array> inputs;
    int64_t total = 0;
    for (size_t i = 1; i < parts.size(); ++i) {
      {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(parts[i].data(), static_cast<std::streamsize>(parts[i].size()));
      }
      inputs.push_back(graft::load_npy(path));
      total += inputs.back().size();
    }
    if (total > (1 << 16) || g.num_nodes() > 64) return 0;
    (void)graft::evaluate(g, inputs);  // a count or type that disagrees is graft's Error
  } catch (const graft::Error&) {
  }
  return 0;
}
