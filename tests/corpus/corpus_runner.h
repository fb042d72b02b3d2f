// The corpus with JAX's answers (corpus/, written by scripts/make_corpus.py),
// run through graft: one case's checks at a time, each failure as a message.
// tests/corpus/jax_corpus_test.cpp runs every case; the mutation tests run
// some with a deliberately wrong rule in place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace graft::test {

// How many checks of each kind ran.
struct CorpusCounts {
  int jvps = 0, vjps = 0, vmaps = 0, mixed = 0, hessians = 0, composed = 0;
};

// corpus/index.json.
nlohmann::json corpus_index();
// The text of corpus/cases/<path>.
std::string corpus_file(const std::string& path);

// Runs the checks of the case `meta` (an entry of index.json's "cases"):
// with all_paths, eval op by op, through jit on the interpreter and the cpu
// backend (also fused with a negation), jvp, vjp, Hessian, vmap (axis 0 and
// mixed in_axes), vmap of grad, grad of vmap and jvp of vjp; without, only
// eval on the interpreter and the vmaps. Appends a message per difference.
void check_corpus_case(const nlohmann::json& meta, bool all_paths, std::vector<std::string>& failures,
                       CorpusCounts& counts);

}  // namespace graft::test
