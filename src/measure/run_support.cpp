// The parts of the measure stage's executor API that need neither oneDNN nor ONNX protobuf: status names, the
// memory check before anything is allocated, roofline columns of a measurement, tensor comparison. They stay in
// the `ridge` binary; execute()/measure_graph() live in the backends module (src/backends).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/measure.hpp"

namespace ridge {

std::string_view step_status_name(StepStatus s) {
  switch (s) {
    case StepStatus::Executed: return "executed";
    case StepStatus::Folded: return "folded";
    case StepStatus::NotExecuted: return "not executed";
  }
  return "?";
}

Count executor_memory_need(const Graph& g, bool train) {
  const MemoryEstimate m = estimate_memory(g, Optimizer::SGD);
  // The executor keeps every activation (no buffer reuse) next to the weights; training adds one gradient
  // per activation and parameter.
  // Sources the executor fills (a ConstantOfShape too large to fold) count as views in activation_bytes; the
  // live peak counts them.
  Count need = m.param_bytes + m.buffer_bytes + m.input_bytes + std::max(m.activation_bytes, m.inference_peak_bytes);
  if (train) need += m.grad_bytes + m.activation_bytes;
  return need;
}

Count mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return static_cast<Count>(kb) * 1024;
  return 0;
}

void check_memory_fits(const Graph& g, bool train, std::optional<Count> available_bytes) {
  const Count need = executor_memory_need(g, train);
  const Count have = available_bytes ? *available_bytes : mem_available_bytes();
  if (have <= 0 || need <= have) return;
  auto gb = [](Count b) {
    std::ostringstream os;
    os.precision(3);
    os << to_double(b) / 1e9 << " GB";
    return os.str();
  };
  int64_t batch = g.inputs.empty() || g.value(g.inputs[0]).shape.rank() == 0 ? 1 : g.value(g.inputs[0]).shape[0];
  throw Error(g.name + " at batch " + std::to_string(batch) + (train ? " (training)" : "") + " needs " + gb(need) +
              " (estimate: weights + every activation" + (train ? " + gradients" : "") + "), only " + gb(have) +
              " available; " + (batch > 1 ? "use a smaller --batch" : "the model does not fit this machine's memory"));
}

void apply_roofline(ModelMeasurement& m, const measure::MachineProfile& machine) {
  for (auto& row : m.layers) {
    if (row.flops <= 0 || row.bytes <= 0 || row.forward.median_s <= 0) continue;
    const double ai = to_double(row.flops) / to_double(row.bytes);
    // The roof of the memory level the step's working set fits in: an L3-resident ReLU is not DRAM-bound.
    row.roofline_level = "DRAM";
    for (const auto& level : machine.levels)
      if (level.level != "DRAM" && level.capacity_bytes > 0 && row.bytes <= level.capacity_bytes && level.gbs(true)) {
        row.roofline_level = level.level;
        break;
      }
    row.roofline_gflops_per_s = measure::attainable_gflops(machine, ai, DType::F32, m.threads, row.roofline_level);
    if (row.roofline_gflops_per_s <= 0) continue;
    row.roofline_percent = 100.0 * row.gflops_per_s / row.roofline_gflops_per_s;
    row.estimated_time_s = to_double(row.flops) / (row.roofline_gflops_per_s * 1e9);
  }
}

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double rtol, double atol) {
  Comparison c;
  c.elements = static_cast<Count>(expected.data.size());
  c.shape_matches = actual.data.size() == expected.data.size() &&
                    (actual.shape == expected.shape || actual.shape.elements() == expected.shape.elements());
  if (!c.shape_matches) return c;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    const double a = actual.data[i], e = expected.data[i];
    if (std::isnan(e) || std::isnan(a)) {
      c.mismatches += std::isnan(e) != std::isnan(a);
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      c.mismatches += a != e;
      continue;
    }
    const double diff = std::abs(a - e);
    c.max_abs_diff = std::max(c.max_abs_diff, diff);
    if (e != 0) c.max_rel_diff = std::max(c.max_rel_diff, diff / std::abs(e));
    if (diff > atol + rtol * std::abs(e)) ++c.mismatches;
  }
  c.passed = c.mismatches == 0;
  return c;
}

}  // namespace ridge
