// Pinned thread team and huge-page buffers for the micro-benchmarks.
#include "measure/machine/thread_team.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "ridge/error.hpp"

namespace ridge::measure {

AffinityRestorer::AffinityRestorer() {
  CPU_ZERO(&saved_);
  valid_ = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) == 0;
}

AffinityRestorer::~AffinityRestorer() {
  if (valid_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
}

void pin_to_allowed_cpu(int index) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return;
  int seen = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    if (seen++ == index % count) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      return;
    }
  }
}

ThreadTeam::ThreadTeam(int size, double hot_window_s) : size_(size < 1 ? 1 : size), hot_window_s_(hot_window_s) {
  for (int i = 1; i < size_; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadTeam::~ThreadTeam() {
  stopping_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

uint64_t ThreadTeam::await_generation(uint64_t seen) const {
  const auto hot_until = std::chrono::steady_clock::now() + std::chrono::duration<double>(hot_window_s_);
  for (uint32_t spins = 1;; ++spins) {
    const uint64_t g = generation_.load(std::memory_order_acquire);
    if (g != seen) return g;
    cpu_relax();
    if (spins % 4096 == 0) {
      if (std::chrono::steady_clock::now() > hot_until) break;
      std::this_thread::yield();  // more threads than CPUs (--threads above the CPU count): let the others run
    }
  }
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    const uint64_t g = generation_.load(std::memory_order_acquire);
    if (g != seen) return g;
  }
}

void ThreadTeam::worker(int index) {
  pin_to_allowed_cpu(index);
  uint64_t seen = 0;
  for (;;) {
    seen = await_generation(seen);
    if (stopping_.load(std::memory_order_relaxed)) return;
    (*job_)(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadTeam::run(const std::function<void(int)>& job) {
  job_ = &job;
  pending_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  job(0);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
  job_ = nullptr;
}

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}

PageBuffer::PageBuffer(size_t bytes, bool huge_pages) : bytes_(bytes) {
  // Over-map by one huge page and trim so that the buffer starts on a 2 MiB boundary.
  bytes = (bytes + 4095) & ~size_t{4095};
  mapped_ = bytes + kHugePage;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error(fmt::format("machine benchmark: cannot map {} bytes: {}", mapped_, std::strerror(errno)));
  auto base = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (base + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > base) munmap(p, aligned - base);
  const size_t tail = mapped_ - (aligned - base) - bytes;
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  mapped_ = bytes;
  data_ = reinterpret_cast<void*>(aligned);
  if (huge_pages) madvise(data_, bytes_, MADV_HUGEPAGE);
}

PageBuffer::~PageBuffer() {
  if (data_) munmap(data_, mapped_);
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_), mapped_(other.mapped_) {
  other.data_ = nullptr;
}

double team_span_s(const std::vector<double>& starts_s, const std::vector<double>& ends_s) {
  if (starts_s.empty() || ends_s.empty()) return 0;
  return *std::max_element(ends_s.begin(), ends_s.end()) - *std::min_element(starts_s.begin(), starts_s.end());
}

}  // namespace ridge::measure
