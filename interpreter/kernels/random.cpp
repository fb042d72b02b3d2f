// CPU kernel of random_bits: key u32[..., 2] -> u32[..., shape].
//
// Bit layout: for each key k of the batch, the N = prod(shape) output words
// (row-major) are the words of threefry2x32(k, (hi(j), lo(j))) for pair index
// j = 0, 1, 2, ...: element 2j is word 0, element 2j+1 is word 1 (the second
// word of the last pair is dropped when N is odd). So element i depends on
// (k, i) only — never on N's chunking or the thread count — and
// random_bits(k, {n, 2}) row r is exactly threefry2x32(k, (0, r)).
#include "interpreter/kernels/loops.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/threefry.h"

namespace graft::interpreter {

void random_bits_kernel(const KernelCall& call) {
  const uint32_t* keys = in_ptr<uint32_t>(call, 0);
  uint32_t* out = out_ptr<uint32_t>(call, 0);
  int64_t per_key = 1;
  for (int64_t d : ir::attr<ir::Ints>(call.attrs, "shape", call.op)) per_key *= d;
  const int64_t total = out_elements(call);
  if (per_key == 0 || total == 0) return;
  parallel_ranges(total, [&](int64_t b, int64_t e) {
    int64_t g = b;
    while (g < e) {  // one segment per key within [b, e)
      const int64_t batch = g / per_key;
      const U32x2 key = {keys[2 * batch], keys[2 * batch + 1]};
      uint32_t* row = out + batch * per_key;
      const int64_t lo = g - batch * per_key;
      const int64_t hi = std::min(per_key, e - batch * per_key);
      int64_t i = lo;
      if (i % 2 == 1) {  // starts on the second word of a pair
        row[i] = threefry2x32(key, random_bits_counter(static_cast<uint64_t>(i / 2)))[1];
        ++i;
      }
      for (; i + 1 < hi; i += 2) {
        const U32x2 w = threefry2x32(key, random_bits_counter(static_cast<uint64_t>(i / 2)));
        row[i] = w[0];
        row[i + 1] = w[1];
      }
      if (i < hi) row[i] = threefry2x32(key, random_bits_counter(static_cast<uint64_t>(i / 2)))[0];
      g = batch * per_key + hi;
    }
  });
}

}  // namespace graft::interpreter
