// execute(): one forward pass; the memory check that runs before anything is allocated.
#include <fstream>
#include <sstream>

#include "program.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

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
  Count need = m.param_bytes + m.buffer_bytes + m.input_bytes + m.activation_bytes;
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
              " available; use a smaller --batch");
}

ExecResult execute(const Graph& g, const ExecOptions& opts) {
  check_memory_fits(g, opts.train, opts.available_bytes);
  exec::Program prog(g, opts);
  for (auto& s : prog.steps())
    if (s.forward) s.forward();
  prog.stream().wait();
  ExecResult r;
  for (const auto& s : prog.steps()) r.steps.push_back(s.info);
  for (int out : g.outputs) r.outputs[g.value(out).name] = prog.read(out);
  r.notes = prog.notes();
  r.buffer_bytes = prog.buffer_bytes();
  return r;
}

TensorMap parameter_gradients(const Graph& g, const ExecOptions& opts) {
  check_memory_fits(g, true, opts.available_bytes);
  ExecOptions training = opts;
  training.train = true;
  exec::Program prog(g, training);
  for (auto& s : prog.steps())
    if (s.forward) s.forward();
  prog.start_backward();
  for (auto s = prog.steps().rbegin(); s != prog.steps().rend(); ++s)
    if (s->backward) s->backward();
  prog.stream().wait();
  TensorMap out;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind == ValueKind::Param) out[g.values[v].name] = prog.read_grad(static_cast<int>(v));
  return out;
}

}  // namespace ridge
