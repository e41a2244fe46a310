// Scaling: predicted time and throughput against batch size, the largest batch that fits in memory, and
// data-parallel training across a cluster (gradient buckets overlapped with backward).
#include <algorithm>

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

// ---- data-parallel training with gradient buckets ------------------------------------------------------------
namespace ridge {

std::vector<BackwardStep> backward_steps(const Prediction& p, const std::vector<LayerWork>& work, int bytes_per_gradient) {
  RIDGE_ASSERT(p.layers.size() == work.size(), "one prediction per layer of work");
  std::vector<BackwardStep> steps;
  steps.reserve(work.size());
  for (size_t i = 0; i < work.size(); ++i)
    steps.push_back({work[i].name, p.layers[i].backward.time_s, work[i].params * bytes_per_gradient});
  return steps;
}

DataParallel data_parallel(const Prediction& single, const std::vector<BackwardStep>& steps, int64_t batch_per_device,
                           const ClusterTopology& topo, const BucketOptions& opt) {
  RIDGE_ASSERT(opt.bucket_bytes > 0 && opt.first_bucket_bytes > 0, "bucket sizes must be positive");
  DataParallel dp;
  dp.topology = topo;
  dp.devices = topo.devices();
  dp.compute_s = single.total_time_s;
  // Backward runs from the last layer to the first; DDP fills buckets in that order and launches a bucket's
  // all-reduce once its last gradient exists (the first bucket closes at first_bucket_bytes, later ones at
  // bucket_bytes). All-reduces run one after another on one communication stream.
  double backward_end_s = 0;
  for (const BackwardStep& s : steps) backward_end_s += s.backward_s;
  double clock_s = 0, stream_free_s = 0;
  GradientBucket open;
  auto launch = [&](double ready_s) {
    open.ready_s = opt.overlap ? ready_s : backward_end_s;
    open.start_s = std::max(open.ready_s, stream_free_s);
    open.allreduce = allreduce_time(opt.algorithm, open.bytes, topo);
    open.end_s = stream_free_s = open.start_s + open.allreduce.time_s;
    dp.allreduce_s += open.allreduce.time_s;
    dp.buckets.push_back(open);
    open = GradientBucket{};
  };
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    clock_s += it->backward_s;
    if (it->gradient_bytes <= 0) continue;
    open.bytes += it->gradient_bytes;
    ++open.layers;
    if (open.bytes >= (dp.buckets.empty() ? opt.first_bucket_bytes : opt.bucket_bytes)) launch(clock_s);
  }
  if (open.bytes > 0) launch(clock_s);
  dp.exposed_s = std::max(0.0, stream_free_s - backward_end_s);
  dp.iteration_s = dp.compute_s + dp.exposed_s;
  dp.samples_per_s = dp.iteration_s > 0 ? dp.devices * static_cast<double>(batch_per_device) / dp.iteration_s : 0.0;
  dp.efficiency = dp.iteration_s > 0 ? dp.compute_s / dp.iteration_s : 1.0;
  const auto largest = std::max_element(dp.buckets.begin(), dp.buckets.end(),
                                        [](const GradientBucket& a, const GradientBucket& b) { return a.bytes < b.bytes; });
  dp.algorithm = largest != dp.buckets.end() ? largest->allreduce.algorithm : AllReduce::Ring;
  return dp;
}

}  // namespace ridge

namespace ridge {

BatchCapacity batch_capacity(const std::string& model, const LoadOptions& load, Optimizer opt,
                             const ParamStorage& storage, Count capacity_bytes, int64_t limit) {
  auto memory_at = [&](int64_t b, bool training) {
    LoadOptions at = load;
    at.batch = b;
    const MemoryEstimate m = estimate_memory(load_model(model, at), opt, storage);
    return training ? m.training_peak_bytes : m.inference_peak_bytes + m.param_bytes + m.buffer_bytes;
  };
  return {largest_batch_that_fits([&](int64_t b) { return memory_at(b, false); }, capacity_bytes, limit),
          largest_batch_that_fits([&](int64_t b) { return memory_at(b, true); }, capacity_bytes, limit), limit};
}

}  // namespace ridge
