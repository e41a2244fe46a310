// A model's per-layer work from the load and costs stages, at a precision's element type.
#include <fmt/format.h>

#include "ridge/load.hpp"
#include "ridge/predict.hpp"

namespace ridge {

ModelWork load_model_work(const ModelSource& model, const LoadOptions& opts, Optimizer optimizer,
                          const ParamStorage& storage) {
  const Graph g = load_source(model, opts);
  const ModelCost costs = estimate(g);
  ModelWork w;
  w.memory = storage.weight_bytes > 0 ? estimate_memory(g, optimizer, storage) : estimate_memory(g, optimizer);
  w.name = g.name;
  w.batch = g.fixed_batch.value_or(opts.batch);
  w.layers = layer_work(g, costs);
  w.total = costs.total;
  w.bytes_per_element = static_cast<int>(dtype_bytes(opts.dtype));
  w.param_bytes = costs.total.params * w.bytes_per_element;
  w.incomplete = incompleteness(g, costs);
  for (const auto& [op, n] : costs.excluded_ops)
    w.notes.push_back(fmt::format("{}: {} node(s) of op {} not costed: excluded from every time and total", g.name, n, op));
  for (const auto& note : g.notes) w.notes.push_back(g.name + ": " + note);
  return w;
}

}  // namespace ridge
