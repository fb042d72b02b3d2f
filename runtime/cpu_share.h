// Sharing the machine: how many threads graft's parallel regions use while
// other processes keep some of the cores busy.
//
// A parallel region splits its work evenly over its threads and ends when
// the last one finishes; a thread whose core another process holds finishes
// late, and the region waits for it. With one busy process on 2 cores, a
// jitted step on 2 threads ran 2-2.7x its time alone; on the one core left
// free it runs 1.3-2x (the step's serial time). So a region uses at most the
// cores no other process is running on: the caller's OpenMP thread count,
// less the other processes' runnable threads (the kernel's count of running
// threads, /proc/loadavg, less this process's own), sampled at most every
// 10 ms and taken as the smaller of the last two samples, so a passing
// process does not shrink the team. Results do not change: graft's kernels
// split their work in fixed-size chunks, whatever the thread count, OpenBLAS
// splits a product's rows and columns (never its sums), and oneDNN runs on
// all threads (AllThreads below).
// GRAFT_SHARE_CPUS=0 turns this off.
#pragma once

namespace graft::runtime {

// The thread count for the caller's next parallel regions: `wanted` (its
// OpenMP thread count), or fewer while other processes hold cores.
int threads_beside_other_work(int wanted);

// For the span of one jit executable run or eager op: sets the calling
// thread's OpenMP thread count to threads_beside_other_work, and restores it.
// A library whose sums depend on its thread count (oneDNN splits
// reductions over threads) runs inside AllThreads instead, so its results
// never depend on what else the machine runs.
class ShareCpusWithOtherWork {
 public:
  ShareCpusWithOtherWork();
  ~ShareCpusWithOtherWork();
  ShareCpusWithOtherWork(const ShareCpusWithOtherWork&) = delete;
  ShareCpusWithOtherWork& operator=(const ShareCpusWithOtherWork&) = delete;

 private:
  int restore_ = 0;  // the thread count to restore, or 0 when unchanged
};

// For the span of a call into oneDNN: the calling thread's OpenMP thread
// count as it was before ShareCpusWithOtherWork lowered it.
class AllThreads {
 public:
  AllThreads();
  ~AllThreads();
  AllThreads(const AllThreads&) = delete;
  AllThreads& operator=(const AllThreads&) = delete;

 private:
  int restore_ = 0;
};

}  // namespace graft::runtime
