// A fixed team of pinned threads that run the same job together, and page-aligned buffers for kernels.
#pragma once
#include <sched.h>

#include <barrier>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace ridge::measure {

/// `size` threads (the caller is thread 0), each pinned to one allowed CPU, started once and reused: run()
/// costs two barrier waits, so short timed runs are not dominated by thread start-up.
class ThreadTeam {
 public:
  explicit ThreadTeam(int size);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  /// Number of threads, the caller included.
  int size() const { return size_; }
  /// Runs job(thread_index) on every thread at once and returns when all have finished.
  void run(const std::function<void(int)>& job);

 private:
  void worker(int index);

  int size_;
  std::barrier<> start_;
  std::barrier<> done_;
  const std::function<void(int)>* job_ = nullptr;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// Wall time of one team run from per-thread kernel start and end times: the last end minus the first start.
/// Waking the team before the first start is not counted; threads that start late are (the slowest thread's
/// own time would let a late thread's work look free and overstate all-thread rates).
double team_span_s(const std::vector<double>& starts_s, const std::vector<double>& ends_s);

/// Pins the calling thread to the `index`-th CPU this process may use (best effort; ignored on failure).
void pin_to_allowed_cpu(int index);

/// Restores the calling thread's CPU affinity on destruction: a caller pinned for a benchmark gets its mask back,
/// so threads it starts later (oneDNN's OpenMP team) and later CPU detection see every allowed CPU again.
class AffinityRestorer {
 public:
  AffinityRestorer();
  ~AffinityRestorer();
  AffinityRestorer(const AffinityRestorer&) = delete;
  AffinityRestorer& operator=(const AffinityRestorer&) = delete;

 private:
  cpu_set_t saved_;
  bool valid_ = false;
};

/// A zero-filled, 2 MiB-aligned anonymous mapping, unmapped on destruction; with `huge_pages` transparent huge
/// pages are requested (MADV_HUGEPAGE), else it gets the system's page policy.
class PageBuffer {
 public:
  PageBuffer(size_t bytes, bool huge_pages);
  ~PageBuffer();
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  PageBuffer& operator=(PageBuffer&&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t mapped_ = 0;
};

}  // namespace ridge::measure
