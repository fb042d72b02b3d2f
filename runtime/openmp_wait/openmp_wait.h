// How long graft's OpenMP threads spin before they sleep, and who chose it.
//
// libgomp reads its wait policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT) once, when
// it starts, and by default a thread that waits at a barrier or for the next
// parallel region spins 300,000 times (3 ms where a pause takes 10 ns) before
// sleeping. On a machine shared with other work that is ruinous: the thread
// being waited for is often the one the other process took the core from, so
// every parallel region (a jitted step runs hundreds: graft's kernels,
// OpenBLAS's, oneDNN's, all on libgomp's one pool) costs a scheduler time
// slice of spinning. graft asks for a short spin instead, about what a sleep
// and a wake-up cost, so a waiting thread gives its core away soon after the
// work it waits for has stalled.
//
// It can only ask before libgomp starts, so this is a library of its own
// (libgraft_openmp_wait.so) that libgraft lists after libgomp among the
// libraries it needs: the dynamic loader starts a later-listed library with no
// dependencies of its own before an earlier-listed one, so its constructor
// sets GOMP_SPINCOUNT and libgomp then reads it. The user's choice wins: with
// OMP_WAIT_POLICY or GOMP_SPINCOUNT set, nothing is changed. libgraft's own
// start-up removes the variable again (runtime/openmp_wait_policy.cpp), so
// child processes inherit the user's environment, not graft's.
#pragma once

extern "C" {

// How long graft asks libgomp's threads to spin before sleeping: about what a
// sleep and a wake-up cost, so waiting never costs more than twice the
// cheaper of the two. (Measured on 2-core machines: with 10 us, small jitted
// steps ran 2x slower than with 30 us, every thread sleeping between regions.)
inline constexpr long long graft_openmp_spin_ns = 30000;

// The spin count set: graft_openmp_spin_ns over the time one spin takes,
// measured at load (libgomp counts pause instructions, which take 1 ns on
// some x86 cores and 10 on others), or 0 before the constructor ran.
long long graft_openmp_spin_count();

// What the constructor did: 0 nothing yet, 1 set GOMP_SPINCOUNT, 2 the user had
// set OMP_WAIT_POLICY or GOMP_SPINCOUNT, 3 libgomp had already started (graft
// was loaded into a running OpenMP program), so asking was too late.
int graft_openmp_wait_choice();
}
