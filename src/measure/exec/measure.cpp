// measure_graph(): warm-up, repeated passes with per-step timers, statistics, costs next to times.
#include <sys/resource.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "program.hpp"
#include "ridge/perf_counters.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

namespace ridge {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

measure::BenchStats stats_of(const std::vector<double>& samples) {
  return samples.empty() ? measure::BenchStats{} : measure::summarize(samples);
}

Count peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<Count>(u.ru_maxrss) * 1024;
}

/// The passes of one measurement: forward (or a training step), with or without a timer per step.
class Runner {
 public:
  explicit Runner(exec::Program& p) : p_(p), fwd_(p.steps().size()), bwd_(p.steps().size()), counts_(p.steps().size()) {}

  /// One pass; returns its wall time. With `timed`, appends each step's time to its samples.
  double pass(bool timed) {
    auto& steps = p_.steps();
    const double start = now_s();
    for (size_t i = 0; i < steps.size(); ++i) run(steps[i].forward, timed ? &fwd_[i] : nullptr, timed ? &counts_[i] : nullptr);
    if (p_.training()) {
      p_.start_backward();
      for (size_t i = steps.size(); i-- > 0;) run(steps[i].backward, timed ? &bwd_[i] : nullptr);
      const double t = now_s();
      p_.sgd_update();
      if (timed) update_.push_back(now_s() - t);
    }
    return now_s() - start;
  }
  const std::vector<double>& forward(size_t i) const { return fwd_[i]; }
  const std::vector<double>& backward(size_t i) const { return bwd_[i]; }
  const std::vector<double>& update() const { return update_; }
  /// Counter totals of step i over the timed passes (empty when counters are unavailable).
  const std::map<std::string, Count>& counts(size_t i) const { return counts_[i]; }

 private:
  void run(const std::function<void()>& f, std::vector<double>* samples,
           std::map<std::string, Count>* counts = nullptr) {
    if (!f) return;
    if (!samples) return f();
    if (counts && counters_.available()) {
      counters_.reset();
      counters_.start();
    }
    const double t = now_s();
    f();
    samples->push_back(now_s() - t);
    if (counts && counters_.available()) {
      counters_.stop();
      for (const auto& [name, v] : counters_.read().values) (*counts)[name] += v;
    }
  }
  exec::Program& p_;
  std::vector<std::vector<double>> fwd_, bwd_;
  std::vector<double> update_;
  measure::CounterGroup counters_;  ///< one group for the calling thread, bracketing each timed step
  std::vector<std::map<std::string, Count>> counts_;
};

/// Measures one program (per-layer, or the end-to-end one with opts.exec.fuse).
ModelMeasurement measure_program(const Graph& g, const MeasureOptions& opts, const ModelCost& costs) {
  exec::Program prog(g, opts.exec);
  Runner runner(prog);
  for (int i = 0; i < opts.warmup; ++i) runner.pass(false);
  std::vector<double> untimed, timed;
  const double start = now_s();
  for (int r = 0; r < std::max(1, opts.max_repeats); ++r) {
    untimed.push_back(runner.pass(false));
    timed.push_back(runner.pass(true));
    if (r + 1 < opts.min_repeats) continue;
    if (measure::summarize(untimed).spread <= opts.target_noise || now_s() - start > opts.max_seconds) break;
  }

  ModelMeasurement m;
  m.total = stats_of(untimed);
  m.total_timed = stats_of(timed);
  m.update = stats_of(runner.update());
  m.train = opts.exec.train;
  m.threads = exec::set_threads(0);
  m.batch = g.inputs.empty() || g.value(g.inputs[0]).shape.rank() == 0 ? 1 : g.value(g.inputs[0]).shape[0];
  m.samples_per_s = m.total.median_s > 0 ? static_cast<double>(m.batch) / m.total.median_s : 0;
  for (size_t i = 0; i < prog.steps().size(); ++i) {
    LayerMeasurement row;
    row.step = prog.steps()[i].info;
    row.forward = stats_of(runner.forward(i));
    row.backward = stats_of(runner.backward(i));
    if (row.step.op == "Reorder") {
      row.bytes = row.step.bytes_moved;
      row.bytes_written = row.step.bytes_moved / 2;  // a copy writes what it reads
      row.op_class = "Reorder";
    } else if (row.step.node >= 0) {
      std::vector<int> nodes{row.step.node};
      nodes.insert(nodes.end(), row.step.fused_nodes.begin(), row.step.fused_nodes.end());
      for (int ni : nodes) {  // a fused step costs what its nodes cost
        const NodeCost& nc = costs.nodes.at(ni);
        row.cost_known = row.cost_known && nc.status == CostStatus::Ok;
        row.flops += nc.cost.flops;
        row.bwd_flops += nc.cost.bwd_flops();
        row.bytes += nc.cost.bytes();
        row.bytes_written += nc.cost.bytes_written;
      }
      row.op_class = op_class(g, g.nodes.at(row.step.node));
    }
    if (row.step.status == StepStatus::Executed) {
      m.layers_sum_s += row.forward.median_s + row.backward.median_s;
      if (row.cost_known) m.flops += row.flops + (m.train ? row.bwd_flops : 0);
    }
    if (!runner.counts(i).empty() && !runner.forward(i).empty()) {
      const Count passes = static_cast<Count>(runner.forward(i).size());
      for (const auto& [name, v] : runner.counts(i)) row.counters.push_back({name, v / passes});
    }
    if (row.forward.median_s > 0) {
      row.gflops_per_s = to_double(row.flops) / row.forward.median_s / 1e9;
      row.gbytes_per_s = to_double(row.bytes) / row.forward.median_s / 1e9;
    }
    m.layers.push_back(std::move(row));
  }
  m.buffer_bytes = prog.buffer_bytes();
  m.peak_rss_bytes = peak_rss_bytes();
  const MemoryEstimate mem = estimate_memory(g, Optimizer::SGD);
  m.estimated_peak_bytes = m.train ? mem.training_peak_bytes : mem.inference_peak_bytes;
  m.notes = prog.notes();
  if (std::string note = reference_kernel_note(m); !note.empty()) m.notes.push_back(std::move(note));
  if (const std::string& why = measure::counters_unavailable_reason(); !why.empty())
    m.notes.push_back("hardware counters unavailable: " + why + " (per-layer counter columns omitted)");
  if (!costs.complete()) m.notes.push_back("some nodes have no cost estimate: their FLOP columns are empty");
  return m;
}

/// Median time of the steps that run any of `nodes` (their reorders included).
double time_of(const ModelMeasurement& m, const std::vector<int>& nodes) {
  double t = 0;
  for (const auto& l : m.layers)
    if (l.step.status == StepStatus::Executed && std::find(nodes.begin(), nodes.end(), l.step.node) != nodes.end())
      t += l.forward.median_s;
  return t;
}

EndToEndMeasurement compare_end_to_end(const Graph& g, const ModelMeasurement& per_layer, ModelMeasurement fused) {
  EndToEndMeasurement e;
  e.total = fused.total;
  e.total_timed = fused.total_timed;
  e.samples_per_s = fused.samples_per_s;
  e.buffer_bytes = fused.buffer_bytes;
  e.notes = std::move(fused.notes);
  for (const auto& l : fused.layers) e.steps += l.step.status == StepStatus::Executed;
  if (e.total.median_s > 0) e.gain_percent = 100 * (per_layer.total.median_s / e.total.median_s - 1);
  for (const auto& l : fused.layers) {
    if (l.step.fused_nodes.empty() || l.step.op == "Reorder") continue;
    std::vector<int> nodes{l.step.node};
    nodes.insert(nodes.end(), l.step.fused_nodes.begin(), l.step.fused_nodes.end());
    FusionGroup grp;
    grp.name = l.step.name;
    for (int ni : nodes) grp.nodes.push_back(g.nodes.at(ni).name);
    grp.fused_time_s = time_of(fused, nodes);
    grp.per_layer_time_s = time_of(per_layer, nodes);
    if (grp.fused_time_s > 0) grp.gain_percent = 100 * (grp.per_layer_time_s / grp.fused_time_s - 1);
    e.groups.push_back(std::move(grp));
  }
  e.layers = std::move(fused.layers);
  return e;
}

}  // namespace

std::string reference_kernel_note(const ModelMeasurement& m) {
  std::vector<const LayerMeasurement*> ref;
  double ref_s = 0;
  for (const auto& l : m.layers)
    if (l.step.status == StepStatus::Executed && reference_kernel(l.step.kernel)) {
      ref.push_back(&l);
      ref_s += l.forward.median_s + l.backward.median_s;
    }
  if (ref.empty()) return {};
  std::stable_sort(ref.begin(), ref.end(), [](auto* a, auto* b) { return a->forward.median_s > b->forward.median_s; });
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t i = 0; i < std::min(ref.size(), kNamed); ++i)
    names += fmt::format("{}{} {:.3g} ms ({})", i ? ", " : "", ref[i]->step.name, 1e3 * ref[i]->forward.median_s,
                         ref[i]->step.kernel);
  if (ref.size() > kNamed) names += fmt::format(" and {} more", ref.size() - kNamed);
  const double share = m.layers_sum_s > 0 ? 100 * ref_s / m.layers_sum_s : 0;
  return fmt::format("{} step{} ran in reference kernels (correct but not optimised: an optimised runtime may be "
                     "faster): {}; {:.1f} % of the sum of layer medians",
                     ref.size(), ref.size() == 1 ? "" : "s", names, share);
}

ModelMeasurement measure_graph(const Graph& g, const MeasureOptions& opts) {
  check_memory_fits(g, opts.exec.train, opts.exec.available_bytes);
  const ModelCost costs = estimate(g);
  MeasureOptions per_layer = opts;
  per_layer.exec.fuse = false;
  ModelMeasurement m = measure_program(g, per_layer, costs);
  if (opts.end_to_end && opts.exec.train) {
    m.notes.push_back("the end-to-end program is inference only: not measured with --train");
  } else if (opts.end_to_end) {
    MeasureOptions fused = opts;
    fused.exec.fuse = true;
    m.end_to_end = compare_end_to_end(g, m, measure_program(g, fused, costs));
  }
  return m;
}

}  // namespace ridge
