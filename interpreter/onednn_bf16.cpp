#include "interpreter/onednn_bf16.h"

#include <cstdlib>
#include <cstring>

#ifdef GRAFT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace graft::interpreter {

namespace {

bool forced_f32() {
  const char* v = std::getenv("GRAFT_BF16_GEMM");
  return v && std::strcmp(v, "f32") == 0;
}

#ifdef GRAFT_HAVE_DNNL
// The bf16 instructions oneDNN found on this CPU ("" when none).
const char* bf16_isa() {
  static const char* isa = [] {
    const dnnl::cpu_isa found = dnnl::get_effective_cpu_isa();
    if (found == dnnl::cpu_isa::avx512_core_amx) return "AMX-BF16";
    if (found == dnnl::cpu_isa::avx512_core_bf16) return "AVX512-BF16";
    return "";
  }();
  return isa;
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}
#endif

}  // namespace

bool bf16_gemm_native() {
#ifdef GRAFT_HAVE_DNNL
  return *bf16_isa() != '\0' && !forced_f32();
#else
  return false;
#endif
}

std::string bf16_gemm_description() {
#ifdef GRAFT_HAVE_DNNL
  if (*bf16_isa() == '\0') return "widened to f32 (oneDNN " + version() + " finds no bf16 instructions on this CPU)";
  if (forced_f32()) return "widened to f32 (GRAFT_BF16_GEMM=f32)";
  return "oneDNN " + version() + " (" + bf16_isa() + ")";
#else
  return "widened to f32 (built without oneDNN)";
#endif
}

bool bf16_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t* a, const uint16_t* b, bool ta, bool tb,
                 void* c, bool c_bf16) {
#ifdef GRAFT_HAVE_DNNL
  using dnnl::memory;
  using dt = memory::data_type;
  try {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    // Each operand as a [batch, rows, cols] view with its own strides: a
    // transposed one is read in place. oneDNN caches the primitive per shape.
    const memory::desc a_md({batch, m, k}, dt::bf16, ta ? memory::dims{m * k, 1, m} : memory::dims{m * k, k, 1});
    const memory::desc b_md({batch, k, n}, dt::bf16, tb ? memory::dims{k * n, 1, k} : memory::dims{k * n, n, 1});
    const memory::desc c_md({batch, m, n}, c_bf16 ? dt::bf16 : dt::f32, memory::dims{m * n, n, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), engine);
    dnnl::stream stream(engine);
    memory am(a_md, engine, const_cast<uint16_t*>(a)), bm(b_md, engine, const_cast<uint16_t*>(b)), cm(c_md, engine, c);
    dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;  // a shape or layout oneDNN does not serve: the caller widens to f32
  }
#else
  (void)batch, (void)m, (void)n, (void)k, (void)a, (void)b, (void)ta, (void)tb, (void)c, (void)c_bf16;
  return false;
#endif
}

}  // namespace graft::interpreter
