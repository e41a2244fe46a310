// execute(): one forward pass; the memory check that runs before anything is allocated.
#include <fstream>
#include <sstream>

#include "program.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

namespace ridge {

bool reference_kernel(std::string_view kernel) {
  if (kernel.rfind("ref", 0) != 0) return false;
  constexpr std::string_view chain = "ref_fused_convolution:any:";
  if (kernel.rfind(chain, 0) != 0 || kernel.size() == chain.size()) return true;
  // The chain's parts, name:isa pairs: "jit_1x1:avx2:jit_dw:avx2" is optimised, "ref:any:ref:any" is not.
  for (std::string_view parts = kernel.substr(chain.size()); !parts.empty();) {
    if (parts.rfind("ref", 0) == 0) return true;
    const size_t name_end = parts.find(':');
    const size_t isa_end = name_end == std::string_view::npos ? name_end : parts.find(':', name_end + 1);
    if (isa_end == std::string_view::npos) break;
    parts.remove_prefix(isa_end + 1);
  }
  return false;
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

namespace {

/// One training step of `prog`: forward in training mode, backward with the loss taken as the sum of the outputs,
/// and (with `update`) the SGD update.
void training_step(exec::Program& prog, bool update) {
  for (auto& s : prog.steps())
    if (s.forward) s.forward();
  prog.start_backward();
  for (auto s = prog.steps().rbegin(); s != prog.steps().rend(); ++s)
    if (s->backward) s->backward();
  if (update) prog.sgd_update();
  prog.stream().wait();
}

/// Every Param of the graph by name, read through `read(vid)`.
template <typename Read>
TensorMap params(const Graph& g, Read read) {
  TensorMap out;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind == ValueKind::Param) out[g.values[v].name] = read(static_cast<int>(v));
  return out;
}

}  // namespace

TensorMap parameter_gradients(const Graph& g, const ExecOptions& opts) {
  check_memory_fits(g, true, opts.available_bytes);
  ExecOptions training = opts;
  training.train = true;
  exec::Program prog(g, training);
  training_step(prog, false);
  return params(g, [&](int v) { return prog.read_grad(v); });
}

TensorMap trained_parameters(const Graph& g, const ExecOptions& opts, int steps) {
  check_memory_fits(g, true, opts.available_bytes);
  ExecOptions training = opts;
  training.train = true;
  exec::Program prog(g, training);
  for (int i = 0; i < steps; ++i) training_step(prog, true);
  return params(g, [&](int v) { return prog.read(v); });
}

}  // namespace ridge
