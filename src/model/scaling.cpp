// Batch scaling: predicted time and throughput against batch size, and the largest batch that fits in memory.
#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge {

std::vector<BatchPoint> predict_vs_batch(const std::vector<int64_t>& batches,
                                         const std::function<std::vector<LayerWork>(int64_t)>& work_at,
                                         PredictOptions opt) {
  std::vector<BatchPoint> out;
  for (int64_t b : batches) {
    opt.batch = b;
    const Prediction p = predict(work_at(b), opt);
    out.push_back({b, p.total_time_s, p.samples_per_s});
  }
  return out;
}

int64_t largest_batch_that_fits(const std::function<Count(int64_t)>& memory_at, Count capacity_bytes,
                                int64_t limit) {
  RIDGE_ASSERT(limit >= 1, "batch limit must be positive");
  if (memory_at(1) > capacity_bytes) return 0;
  int64_t fits = 1, too_big = 0;  // invariant: memory_at(fits) <= capacity; too_big == 0 means unknown
  while (too_big == 0) {
    const int64_t next = fits > limit / 2 ? limit : fits * 2;
    if (next == fits) return fits;
    if (memory_at(next) <= capacity_bytes) fits = next;
    else too_big = next;
  }
  while (too_big - fits > 1) {
    const int64_t mid = fits + (too_big - fits) / 2;
    if (memory_at(mid) <= capacity_bytes) fits = mid;
    else too_big = mid;
  }
  return fits;
}

}  // namespace ridge
