// Threefry-2x32 with 20 rounds: the counter-based block function behind
// random_bits (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
// as 1, 2, 3", SC'11 — the generator JAX uses). It maps a 64-bit key and a
// 64-bit counter to 64 pseudo-random bits, so any element of a random stream
// can be computed on its own, in any order, on any thread.
#pragma once

#include <array>
#include <cstdint>

namespace graft::interpreter {

using U32x2 = std::array<uint32_t, 2>;

constexpr uint32_t rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }

// threefry2x32(key, counter) with the standard rotation constants and key
// schedule (parity constant 0x1BD11BDA; a key injection after every 4 rounds).
constexpr U32x2 threefry2x32(U32x2 key, U32x2 counter) {
  constexpr unsigned kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0];
  uint32_t x1 = counter[1] + ks[1];
  for (unsigned block = 0; block < 5; ++block) {  // 5 blocks of 4 rounds = 20 rounds
    for (unsigned r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = rotl32(x1, kRot[(block % 2) * 4 + r]);
      x1 ^= x0;
    }
    const unsigned s = block + 1;  // key injection number
    x0 += ks[s % 3];
    x1 += ks[(s + 1) % 3] + s;
  }
  return {x0, x1};
}

// The counter of the pair of output words holding elements 2j and 2j+1 of a
// random_bits stream: (high word of j, low word of j).
constexpr U32x2 random_bits_counter(uint64_t j) { return {static_cast<uint32_t>(j >> 32), static_cast<uint32_t>(j)}; }

}  // namespace graft::interpreter
