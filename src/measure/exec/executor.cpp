// execute(): one forward pass; the memory check that runs before anything is allocated.
#include <fstream>
#include <sstream>

#include "program.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

namespace ridge {

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
