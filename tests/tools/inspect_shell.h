// Running the built graft-inspect from tests, on graphs saved here.
#pragma once

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "graft/graft.h"
#include "support/shell.h"

namespace graft::test {

inline const std::filesystem::path kInspectDir = std::filesystem::path(GRAFT_TEST_TMPDIR) / "graft_inspect";

// Runs graft-inspect with `args` (stdout and stderr together); its exit status in *status.
inline std::string inspect(const std::string& args, int* status) {
  int raw = 0;
  std::string out = run(std::string("'") + GRAFT_INSPECT + "' " + args, &raw);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

// Saves g's JSON as kInspectDir/name; returns the path, quoted for a shell.
inline std::string save(const Graph& g, const std::string& name) {
  std::filesystem::create_directories(kInspectDir);
  const std::string path = (kInspectDir / name).string();
  std::ofstream(path) << g.to_json();
  return "'" + path + "'";
}

}  // namespace graft::test
