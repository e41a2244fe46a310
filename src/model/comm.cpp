// Data-parallel training: gradient all-reduce time (alpha-beta model) and scaling efficiency.
#include <cmath>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge {

std::string_view allreduce_name(AllReduce a) {
  switch (a) {
    case AllReduce::Ring: return "ring";
    case AllReduce::Tree: return "tree";
    case AllReduce::ParameterServer: return "ps";
  }
  return "ring";
}

std::optional<AllReduce> parse_allreduce(std::string_view name) {
  if (name == "ring") return AllReduce::Ring;
  if (name == "tree") return AllReduce::Tree;
  if (name == "ps" || name == "parameter-server") return AllReduce::ParameterServer;
  return std::nullopt;
}

double allreduce_time_s(AllReduce algo, Count bytes, int devices, const Interconnect& link) {
  RIDGE_ASSERT(devices >= 1, "device count must be positive");
  RIDGE_ASSERT(link.bandwidth_bytes_per_s > 0, "link bandwidth must be positive");
  if (devices == 1) return 0.0;
  const double n = devices, alpha = link.latency_s, beta = link.bandwidth_bytes_per_s, b = to_double(bytes);
  switch (algo) {
    case AllReduce::Ring:  // reduce-scatter + all-gather: 2(N-1) steps of bytes/N each
      return 2 * (n - 1) * (alpha + b / (n * beta));
    case AllReduce::Tree:  // reduce up a binary tree, broadcast down: 2 ceil(log2 N) steps of the full buffer
      return 2 * std::ceil(std::log2(n)) * (alpha + b / beta);
    case AllReduce::ParameterServer:  // one device gathers N-1 gradients, then sends N-1 updates on its link
      return 2 * (alpha + (n - 1) * b / beta);
  }
  return 0.0;
}

DataParallel data_parallel(const Prediction& single, int64_t batch_per_device, Count gradient_bytes, int devices,
                           AllReduce algo, const Interconnect& link) {
  DataParallel dp;
  dp.devices = devices;
  dp.compute_s = single.total_time_s;
  dp.communication_s = allreduce_time_s(algo, gradient_bytes, devices, link);
  dp.iteration_s = dp.compute_s + dp.communication_s;
  dp.samples_per_s = dp.iteration_s > 0 ? devices * static_cast<double>(batch_per_device) / dp.iteration_s : 0.0;
  dp.efficiency = dp.iteration_s > 0 ? dp.compute_s / dp.iteration_s : 1.0;
  return dp;
}

}  // namespace ridge
