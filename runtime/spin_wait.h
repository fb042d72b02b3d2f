// Polling for a short while before blocking. Handing work to another thread
// through a condition variable costs a futex sleep and wake, tens of
// microseconds on a virtual machine; pmap's replicas and collectives hand
// over work every few microseconds, so the waiting side first polls (yielding
// the core to runnable threads, so oversubscribed devices still progress) and
// only then sleeps, as OpenMP's barriers do.
#pragma once

#include <chrono>
#include <thread>

namespace graft::runtime {

inline constexpr std::chrono::microseconds kSpinFor{100};

// Polls ready() until it holds or kSpinFor has passed; returns whether it held.
template <class Ready>
bool spin_until(Ready&& ready) {
  if (ready()) return true;
  const auto until = std::chrono::steady_clock::now() + kSpinFor;
  for (int i = 0;; ++i) {
    for (int k = 0; k < 64; ++k) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() > until) return ready();
    if (i % 4 == 3) std::this_thread::yield();
  }
}

}  // namespace graft::runtime
