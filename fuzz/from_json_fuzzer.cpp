// libFuzzer target: Graph::from_json on arbitrary text. Malformed input must
// throw a graft::Error (GraphFormatError, ShapeError, ...); anything else
// escaping (a std::exception, a crash, a leak, a hang) is a finding. A graph
// that loads is printed, written back, re-read and compared, and evaluated
// on zeros when small, so the importer's output is exercised downstream too.
#include <cstdint>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "fuzz_setup.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graft_fuzz::setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  graft::Graph g;
  try {
    g = graft::Graph::from_json(text);
  } catch (const graft::Error&) {
    return 0;
  }
  (void)g.to_text();
  (void)g.to_dot();
  const std::string out = g.to_json();
  // What graft wrote, graft reads back to the same JSON.
  if (graft::Graph::from_json(out).to_json() != out) __builtin_trap();
  try {
    graft_fuzz::evaluate_on_zeros(g);
  } catch (const graft::Error&) {
  }
  return 0;
}
