#include "interpreter/onednn_products.h"

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/cpu_share.h"

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

// Whether oneDNN found AVX-512 (any of its server variants) on this CPU.
bool avx512() {
  static const bool found = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx: return true;
      default: return false;
    }
  }();
  return found;
}

// A buffer of at least `bytes` for operand `slot` (0-2) of a convolution:
// reused, per thread, across calls and grown as needed. A fresh one each
// call faulted in its pages every time (the blocked copy of a 3x3x256x512
// kernel: ~1 ms of a 10 ms gradient); the largest ever needed stays.
// Aligned to 64 bytes, as oneDNN's own allocations (its AVX-512 kernels
// read whole cache lines).
void* scratch(int slot, size_t bytes) {
  thread_local std::array<std::vector<std::byte>, 3> buffers;
  std::vector<std::byte>& b = buffers[static_cast<size_t>(slot)];
  if (b.size() < bytes + 64) b.resize(bytes + 64);
  void* at = b.data();
  size_t room = b.size();
  return std::align(64, bytes, at, room);
}

// The CPU engine every primitive here runs on, made once.
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
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

bool f32_conv_on_onednn() {
#ifdef GRAFT_HAVE_DNNL
  const char* v = std::getenv("GRAFT_F32_CONV");
  return avx512() && !(v && std::strcmp(v, "graft") == 0);
#else
  return false;
#endif
}

std::string f32_conv_description() {
#ifdef GRAFT_HAVE_DNNL
  if (!avx512()) return "graft's im2col GEMMs (OpenBLAS; no AVX-512 here for oneDNN's)";
  if (!f32_conv_on_onednn()) return "graft's im2col GEMMs (OpenBLAS; GRAFT_F32_CONV=graft)";
  return "oneDNN " + version() + " (AVX-512)";
#else
  return "graft's im2col GEMMs (OpenBLAS; built without oneDNN)";
#endif
}

bool bf16_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t* a, const uint16_t* b, bool ta, bool tb,
                 void* c, bool c_bf16) {
#ifdef GRAFT_HAVE_DNNL
  const runtime::AllThreads all_threads;  // oneDNN's sums depend on its thread count
  using dnnl::memory;
  using dt = memory::data_type;
  try {
    const dnnl::engine& engine = cpu_engine();
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

bool onednn_conv_as_backward_weights(const OnednnConvShape& s) {
  int64_t window_size = 1, positions = 1;
  for (int d = 0; d < s.spatial; ++d) window_size *= s.window[d], positions *= s.out[d];
  return !s.backward_data && (s.batch_groups || (s.groups == 1 && window_size > positions));
}

bool onednn_conv(const OnednnConvShape& s, const void* lhs, const void* rhs, void* out, bool out_bf16) {
#ifdef GRAFT_HAVE_DNNL
  const runtime::AllThreads all_threads;  // oneDNN's sums depend on its thread count
  using dnnl::memory;
  using dt = memory::data_type;
  try {
    const dnnl::engine& engine = cpu_engine();
    const int n = s.spatial;
    const memory::dims in(s.in, s.in + n), window(s.window, s.window + n), out_sp(s.out, s.out + n);
    auto cat = [](memory::dims a, const memory::dims& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    auto strides = [&](const int64_t* st, int lead) { return memory::dims(st, st + lead + n); };
    const int64_t og = s.out_features / s.groups, ig = s.in_features / s.groups;
    // The operands where they are (any layout, read through strides); grouped weights as [G, O/G, I/G, ...].
    const dt result = out_bf16 ? dt::bf16 : dt::f32, operand = s.f32 ? dt::f32 : dt::bf16;
    const memory::desc src(cat({s.batch, s.in_features}, in), s.backward_data ? result : operand,
                           strides(s.lhs_strides, 2));
    const int64_t out_batch = s.batch_groups ? s.batch / s.groups : s.batch;
    const memory::desc dst(cat({out_batch, s.out_features}, out_sp), s.backward_data ? operand : result,
                           strides(s.out_strides, 2));
    const memory::desc weights =
        s.batch_groups  ? memory::desc()  // (no forward kernel: run as backward weights below)
        : s.groups == 1 ? memory::desc(cat({s.out_features, s.in_features}, window), operand, strides(s.rhs_strides, 2))
                        : memory::desc(cat({s.groups, og, ig}, window), operand,
                                       cat({s.rhs_group_stride ? s.rhs_group_stride : s.rhs_strides[0] * og,
                                            s.rhs_strides[0], s.rhs_strides[1]},
                                           memory::dims(s.rhs_strides + 2, s.rhs_strides + 2 + n)));
    // The primitive picks the weights' layout, and for bf16 the activations' too (blocked, for the bf16
    // units); reorders bring the operands there. f32 activations stay where they are (NHWC ran up to 1.8x
    // faster than reordering to blocks), unless oneDNN has only its reference kernel for their layout.
    auto any = [](const memory::desc& d) { return memory::desc(d.dims(), d.data_type(), memory::format_tag::any); };
    auto reference = [](const auto& pd) { return std::strncmp(pd.impl_info_str(), "ref", 3) == 0; };
    for (const bool keep : {s.f32, false}) {
      auto act = [&](const memory::desc& d) { return keep ? d : any(d); };
      memory::dims stride(s.stride, s.stride + n), dilation(n), pad_low(s.pad_low, s.pad_low + n),
          pad_high(s.pad_high, s.pad_high + n);
      for (int d = 0; d < n; ++d) dilation[d] = s.rhs_dilation[d] - 1;  // oneDNN counts the gaps
      dnnl::stream stream(engine);
      int slots = 0;
      auto placed = [&](const memory::desc& user, void* data, const memory::desc& want) {
        memory m(user, engine, data);
        if (want == user) return m;
        memory moved(want, engine, scratch(slots++, want.get_size()));
        dnnl::reorder(m, moved).execute(stream, m, moved);
        return moved;
      };
      memory user_dst, dst_m;
      if (s.backward_data) {
        // The gradient of the input from that of the output (the forward pass's descriptor is the hint).
        const dnnl::convolution_forward::primitive_desc hint(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            act(src), any(weights), act(dst), stride, dilation, pad_low, pad_high),
            engine);
        const dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, act(src), any(weights), act(dst),
                                                  stride, dilation, pad_low, pad_high),
            engine, hint);
        if (keep && reference(pd)) continue;
        const memory dd_m = placed(dst, const_cast<void*>(lhs), pd.diff_dst_desc());
        const memory w_m = placed(weights, const_cast<void*>(rhs), pd.weights_desc());
        user_dst = memory(src, engine, out);
        dst_m = pd.diff_src_desc() == src
                    ? user_dst
                    : memory(pd.diff_src_desc(), engine, scratch(2, pd.diff_src_desc().get_size()));
        dnnl::convolution_backward_data(pd).execute(
            stream, {{DNNL_ARG_DIFF_DST, dd_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DIFF_SRC, dst_m}});
      } else if (onednn_conv_as_backward_weights(s)) {
        // A window larger than the output: a weight gradient (the window is the forward pass's output, the
        // output its kernel). The same sums are oneDNN's backward-weights convolution of a problem whose
        // batch is our input features, whose input channels are our batch, with our window dilation as its
        // stride and our stride as its dilation; run as a forward one, it took 25 ms where this takes 3.
        // Batch groups (a grouped convolution's weight gradient) are its groups: group g's outputs take
        // our batch's g-th part.
        const memory::desc bsrc(
            cat({s.in_features, s.batch}, in), operand,
            cat({s.lhs_strides[1], s.lhs_strides[0]}, memory::dims(s.lhs_strides + 2, s.lhs_strides + 2 + n)));
        const memory::desc bdiff_dst(
            cat({s.in_features, s.out_features}, window), operand,
            cat({s.rhs_strides[1], s.rhs_strides[0]}, memory::dims(s.rhs_strides + 2, s.rhs_strides + 2 + n)));
        const int64_t bog = s.out_features / s.groups, big = s.batch / s.groups;
        const memory::desc bdiff_w =
            s.groups == 1 ? memory::desc(cat({s.out_features, s.batch}, out_sp), result,
                                         cat({s.out_strides[1], s.out_strides[0]},
                                             memory::dims(s.out_strides + 2, s.out_strides + 2 + n)))
                          : memory::desc(cat({s.groups, bog, big}, out_sp), result,
                                         cat({s.out_strides[1] * bog, s.out_strides[1], s.out_strides[0]},
                                             memory::dims(s.out_strides + 2, s.out_strides + 2 + n)));
        memory::dims bstride(s.rhs_dilation, s.rhs_dilation + n), bdilation(n);
        for (int d = 0; d < n; ++d) bdilation[d] = s.stride[d] - 1;
        const dnnl::convolution_forward::primitive_desc hint(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            act(bsrc), any(bdiff_w), act(bdiff_dst), bstride, bdilation, pad_low,
                                            pad_high),
            engine);
        const dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, act(bsrc), any(bdiff_w),
                                                     act(bdiff_dst), bstride, bdilation, pad_low, pad_high),
            engine, hint);
        if (keep && reference(pd)) continue;
        const memory src_m = placed(bsrc, const_cast<void*>(lhs), pd.src_desc());
        const memory dd_m = placed(bdiff_dst, const_cast<void*>(rhs), pd.diff_dst_desc());
        memory user_dw(bdiff_w, engine, out);
        dst_m = pd.diff_weights_desc() == bdiff_w
                    ? user_dw
                    : memory(pd.diff_weights_desc(), engine, scratch(2, pd.diff_weights_desc().get_size()));
        user_dst = user_dw;
        dnnl::convolution_backward_weights(pd).execute(
            stream, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_DIFF_DST, dd_m}, {DNNL_ARG_DIFF_WEIGHTS, dst_m}});
      } else {
        const dnnl::convolution_forward::primitive_desc pd(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            act(src), any(weights), act(dst), stride, dilation, pad_low, pad_high),
            engine);
        if (keep && reference(pd)) continue;
        const memory src_m = placed(src, const_cast<void*>(lhs), pd.src_desc());
        const memory w_m = placed(weights, const_cast<void*>(rhs), pd.weights_desc());
        user_dst = memory(dst, engine, out);
        dst_m = pd.dst_desc() == dst ? user_dst : memory(pd.dst_desc(), engine, scratch(2, pd.dst_desc().get_size()));
        dnnl::convolution_forward(pd).execute(stream,
                                              {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DST, dst_m}});
      }
      if (dst_m != user_dst) dnnl::reorder(dst_m, user_dst).execute(stream, dst_m, user_dst);
      stream.wait();
      return true;
    }
    return false;
  } catch (const dnnl::error&) {
    return false;  // a convolution oneDNN does not serve: the caller widens to f32
  }
#else
  (void)s, (void)lhs, (void)rhs, (void)out, (void)out_bf16;
  return false;
#endif
}

}  // namespace graft::interpreter
