// LLM charts outside the HTML report, drawn with the report's chart builders (include/ridge/chart.hpp): `ridge serve
// --plot` (memory per GPU, latency against batch and prompt length, prefill and decode ops on the roofline) and the
// training memory per GPU under each ZeRO stage and where a training micro-batch's compute time goes (`ridge train --plot`).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::report {
namespace {

// Serving of one batch/prompt variant of the request; nullopt when it does not fit in device memory or in the
// model's positions. Any other error is the request's own and surfaces.
std::optional<ServeResult> serve_variant(const LlmConfig& c, const Device& d, ServeOptions o, int64_t batch, int64_t prompt) {
  o.batch = batch;
  o.prompt = prompt;
  try {
    return analyze_serving(c, d, o);
  } catch (const DoesNotFit&) {
    return std::nullopt;  // the curve stops there
  }
}

// Latency (TTFT and time per output token) against `xs`, each x giving one variant.
// `progress` is told of each point as "serve --plot: latency vs <x_title>".
chart::Chart latency_chart(const std::string& title, const std::string& x_title, const std::vector<int64_t>& xs,
                           const std::function<std::optional<ServeResult>(int64_t)>& at, const std::string& label,
                           const ReportProgress& progress) {
  chart::SweepSeries ttft{"time to first token", {}, false}, tpot{"time per output token", {}, false};
  const std::string what = "serve --plot: latency vs " + x_title;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t x = xs[i];
    if (progress) progress(what, i, xs.size(), fmt::format("{} {}", x_title, x));
    const auto r = at(x);
    if (!r) break;
    ttft.xy.push_back({static_cast<double>(x), r->ttft_s});
    tpot.xy.push_back({static_cast<double>(x), r->decode_time_per_token_s});
  }
  if (progress) progress(what, xs.size(), xs.size(), "");
  chart::Axis xa{x_title, "", chart::Scale::Log}, ya{"latency [" + label + "]", "s", chart::Scale::Log};
  return chart::sweep_chart(title, xa, ya, {ttft, tpot});
}

// 1, 2, 4, ... up to `last` (inclusive), plus `extra` where it falls between.
std::vector<int64_t> doubling(int64_t first, int64_t last, int64_t extra) {
  std::vector<int64_t> xs;
  for (int64_t x = first; x <= last; x *= 2) xs.push_back(x);
  if (extra >= first && extra <= last) xs.push_back(extra);
  if (xs.empty() || xs.back() != last) xs.push_back(last);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

}  // namespace

std::vector<chart::Chart> serve_charts(const ServeRequest& req, const ReportProgress& progress) {
  const auto setup = resolve_llm_request(req);
  const LlmConfig& c = setup.config;
  const Device& d = setup.device;
  const ServeOptions& o = setup.options;
  const ServeResult r = analyze_serving(c, d, o);
  const std::string scenario = fmt::format("{} on {}{}", c.name, d.id, o.tp > 1 ? fmt::format(" x{}", o.tp) : "");
  std::vector<chart::Chart> charts;

  // Memory per GPU: weights + KV cache (+ a hybrid's state cache; both linear in the batch) at batch 1, the
  // request's batch and the largest batch that fits, against the device's memory.
  chart::Chart mem;
  mem.title = fmt::format("Memory per GPU: {}, context {}", scenario, o.prompt + o.generate);
  mem.kind = chart::Kind::Bars;
  mem.stacked = true;
  mem.x = {"memory per GPU", "B", chart::Scale::Linear};
  chart::Series weights{"weights", chart::Mark::Bars}, kv{"KV cache", chart::Mark::Bars},
      state{"recurrent state cache", chart::Mark::Bars};
  std::vector<int64_t> batches{1, o.batch, std::max<int64_t>(1, r.max_batch)};
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  // Sequences on one GPU: all of them, or the busiest data-parallel rank's ceil(batch / dp).
  auto on_gpu = [&](int64_t b) { return static_cast<double>((b + o.dp - 1) / o.dp); };
  for (int64_t b : batches) {
    const double x = static_cast<double>(mem.categories.size());
    mem.categories.push_back(fmt::format("batch {}{}", b, b == r.max_batch ? " (largest that fits)" : ""));
    weights.points.push_back({x, to_double(r.weights_bytes_per_gpu)});
    kv.points.push_back({x, to_double(r.kv_cache_bytes_per_gpu) / on_gpu(o.batch) * on_gpu(b)});
    state.points.push_back({x, to_double(r.state_cache_bytes_per_gpu) / on_gpu(o.batch) * on_gpu(b)});
  }
  mem.series = {weights, kv};
  if (r.state_cache_bytes_per_gpu > 0) mem.series.push_back(state);
  if (d.memory_bytes > 0)
    mem.markers.push_back({to_double(d.memory_bytes), 0, fmt::format("{} memory", d.id)});
  charts.push_back(std::move(mem));

  // Latency against batch (up to the largest that fits, at most 256) and against the prompt length.
  charts.push_back(latency_chart(
      fmt::format("Latency vs batch: {}, prompt {}", c.name, o.prompt), "batch", doubling(1, std::clamp<int64_t>(r.max_batch, 1, 256), o.batch),
      [&](int64_t b) { return serve_variant(c, d, o, b, o.prompt); }, r.time_label, progress));
  const int64_t max_prompt = std::max<int64_t>(1, c.max_positions - o.generate);
  charts.push_back(latency_chart(
      fmt::format("Latency vs prompt: {}, batch {}", c.name, o.batch), "prompt tokens",
      doubling(std::min<int64_t>(128, max_prompt), max_prompt, o.prompt),
      [&](int64_t p) { return serve_variant(c, d, o, o.batch, p); }, r.time_label, progress));

  // Prefill and decode ops on the roofline (decode ops summed over the steps: their rate is the average).
  chart::RoofDevice roof{d.id, {}, {}};
  roof.compute_flops_per_s.push_back({std::string(precision_info(o.compute).name), d.require_peak(o.compute)});
  roof.memory_bytes_per_s.push_back({"DRAM", d.dram_bandwidth()});
  std::vector<chart::RoofPoint> points;
  for (const ServeOp& op : r.ops) {
    const Count bytes = op.bytes();
    if (op.flops <= 0 || bytes <= 0 || op.time_s <= 0 || op.op_class.empty()) continue;  // all-reduce rows
    points.push_back({op.phase + " ops", op.name, to_double(op.flops) / to_double(bytes), to_double(op.flops) / op.time_s,
                      "", -1, false});
  }
  charts.push_back(chart::roofline_chart(fmt::format("Prefill and decode ops: {}, batch {}", c.name, o.batch), {roof},
                                         points, 6));
  return charts;
}

chart::Chart train_memory_chart(const LlmConfig& c, const Device& d, const TrainOptions& o) {
  chart::Chart mem;
  mem.title = fmt::format("Training memory per GPU: {} on {} (tp {}, pp {}, {} GPUs)", c.name, d.id, o.tp, o.pp, o.gpus);
  mem.kind = chart::Kind::Bars;
  mem.stacked = true;
  mem.x = {"memory per GPU", "B", chart::Scale::Linear};
  const char* const parts[] = {"weights", "gradients", "optimizer states", "activations"};
  for (const char* part : parts) mem.series.push_back({part, chart::Mark::Bars});
  for (int zero = 0; zero <= 3; ++zero) {
    TrainOptions z = o;
    z.zero = zero;
    const TrainMemory m = analyze_training(c, d, z).memory;
    const double x = static_cast<double>(mem.categories.size());
    mem.categories.push_back(fmt::format("ZeRO {}{}", zero, zero == o.zero ? " (this layout)" : ""));
    const Count values[] = {m.weights, m.gradients, m.optimizer, m.activations};
    for (size_t i = 0; i < 4; ++i) mem.series[i].points.push_back({x, to_double(values[i])});
  }
  if (d.memory_bytes > 0) mem.markers.push_back({to_double(d.memory_bytes), 0, fmt::format("{} memory", d.id)});
  return mem;
}

chart::Chart train_time_chart(const TrainResult& r) {
  chart::Chart t;
  t.title = fmt::format("Compute time per micro-batch and GPU by op class: {} on {} [{}]", r.model, r.device,
                        r.time_label);
  t.kind = chart::Kind::Bars;
  t.stacked = true;
  t.x = {"time per micro-batch", "s", chart::Scale::Linear};
  struct Class {
    std::string name;
    double forward_s = 0, backward_s = 0, recompute_s = 0;
    double total() const { return forward_s + backward_s + recompute_s; }
  };
  std::vector<Class> classes;
  for (const TrainOp& op : r.ops) {
    auto it = std::find_if(classes.begin(), classes.end(), [&](const Class& c) { return c.name == op.op_class; });
    if (it == classes.end()) it = classes.insert(classes.end(), Class{op.op_class});
    it->forward_s += op.forward_s;
    it->backward_s += op.backward_s;
    it->recompute_s += op.recompute_s;
  }
  std::stable_sort(classes.begin(), classes.end(), [](const Class& a, const Class& b) { return a.total() > b.total(); });
  for (const char* part : {"forward", "backward", "recomputed forward"}) t.series.push_back({part, chart::Mark::Bars});
  for (const Class& c : classes) {
    const double x = static_cast<double>(t.categories.size());
    t.categories.push_back(c.name);
    t.series[0].points.push_back({x, c.forward_s});
    t.series[1].points.push_back({x, c.backward_s});
    t.series[2].points.push_back({x, c.recompute_s});
  }
  t.notes.push_back("communication is not in these bars");
  return t;
}

}  // namespace ridge::report
