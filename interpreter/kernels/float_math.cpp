// Which float math table runs: the widest instruction set this CPU has (see
// float_math.h), or the one $GRAFT_FLOAT_MATH names.
#include "interpreter/kernels/float_math.h"

#include <cstdio>
#include <array>
#include <cstdlib>
#include <string>

#include "interpreter/cpu_features.h"

namespace graft::interpreter {

// float_math_<isa>.cpp; the AVX tables are built on x86-64 only (GRAFT_FLOAT_MATH_X86).
const FloatMathTable& float_math_table_baseline();
#ifdef GRAFT_FLOAT_MATH_X86
const FloatMathTable& float_math_table_avx2();
const FloatMathTable& float_math_table_avx512();
#endif

namespace {

bool cpu_runs(FloatIsa isa) {
  const CpuFeatures f = cpu_features();
  switch (isa) {
    case FloatIsa::baseline: return true;
    case FloatIsa::avx2: return f.avx2_fma;
    case FloatIsa::avx512: return f.avx512;
  }
  return false;
}

const FloatMathTable* table_of(FloatIsa isa) {
  switch (isa) {
    case FloatIsa::baseline: return &float_math_table_baseline();
#ifdef GRAFT_FLOAT_MATH_X86
    case FloatIsa::avx2: return &float_math_table_avx2();
    case FloatIsa::avx512: return &float_math_table_avx512();
#else
    default: return nullptr;
#endif
  }
  return nullptr;
}

const FloatMathTable& choose() {
  const FloatMathTable* best = &float_math_table_baseline();
  for (const FloatMathTable* t : float_math_tables()) best = t;  // narrowest first
  const char* want = std::getenv("GRAFT_FLOAT_MATH");
  if (!want || !*want) return *best;
  const std::string w = want;
  for (FloatIsa isa : {FloatIsa::baseline, FloatIsa::avx2, FloatIsa::avx512}) {
    const char* key = isa == FloatIsa::baseline ? "baseline" : isa == FloatIsa::avx2 ? "avx2" : "avx512";
    if (w != key) continue;
    if (cpu_runs(isa) && table_of(isa)) return *table_of(isa);
    std::fprintf(stderr, "graft: GRAFT_FLOAT_MATH=%s: this %s; using %s\n", want,
                 table_of(isa) ? "CPU lacks that instruction set" : "build has no such table", float_isa_name(best->isa));
    return *best;
  }
  std::fprintf(stderr, "graft: GRAFT_FLOAT_MATH=%s is not baseline, avx2 or avx512; using %s\n", want,
               float_isa_name(best->isa));
  return *best;
}

}  // namespace

namespace {

constexpr std::array<ir::Op, kFloatFnCount> kOps = {{
#define GRAFT_FLOAT_FN_OWN(ident)
#define GRAFT_FLOAT_FN_SCALAR(ident)
#define GRAFT_FLOAT_FN_VECTOR_MATH(ident) ir::Op::ident,
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) GRAFT_FLOAT_FN_##kernel(ident)
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_FLOAT_FN_OWN
#undef GRAFT_FLOAT_FN_SCALAR
#undef GRAFT_FLOAT_FN_VECTOR_MATH
}};

}  // namespace

std::optional<FloatFn> float_fn_of(ir::Op op) {
  for (int i = 0; i < kFloatFnCount; ++i)
    if (kOps[i] == op) return static_cast<FloatFn>(i);
  return std::nullopt;
}

ir::Op op_of(FloatFn fn) { return kOps[static_cast<size_t>(fn)]; }

const char* float_fn_name(FloatFn fn) { return ir::op_name(op_of(fn)).data(); }

const char* float_isa_name(FloatIsa isa) {
  switch (isa) {
    case FloatIsa::baseline: return "baseline x86-64 (SSE2)";
    case FloatIsa::avx2: return "AVX2+FMA";
    case FloatIsa::avx512: return "AVX-512";
  }
  return "?";
}

std::vector<const FloatMathTable*> float_math_tables() {
  std::vector<const FloatMathTable*> out;
  for (FloatIsa isa : {FloatIsa::baseline, FloatIsa::avx2, FloatIsa::avx512})
    if (cpu_runs(isa))
      if (const FloatMathTable* t = table_of(isa)) out.push_back(t);
  return out;
}

const FloatMathTable& float_math() {
  static const FloatMathTable& table = choose();
  return table;
}

}  // namespace graft::interpreter
