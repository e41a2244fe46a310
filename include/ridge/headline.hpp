// The report's first screen from plain numbers: how long one iteration takes on each device (predicted) or here
// (measured), what bounds it, where the time goes (top layers, time by op group) and what fills the memory.
// Commands turn predictions and measurements into Runs; these functions pick, group and lay them out as
// report tables and charts, so the HTML report, `--json` and the tests see the same numbers.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/chart.hpp"
#include "ridge/count.hpp"
#include "ridge/report.hpp"

namespace ridge::headline {

/// One layer's time in one run (NaN: not costed or not executed).
struct LayerTime {
  std::string name{};      ///< node name ("layer1.0.conv1")
  std::string op_class{};  ///< ridge::op_class ("Conv", "Linear", "BatchNorm", ...)
  double time_s = 0;
  std::string bound{};     ///< "compute", "memory", "overhead" ("" when unknown, e.g. measured)
};

/// One way the model was timed: predicted on a device, or measured on this CPU.
struct Run {
  std::string name{};       ///< "a100-sxm4-40gb"
  bool measured = false;    ///< measured (filled marks) or predicted (hollow marks)
  std::string time_kind{};  ///< "calibrated", "upper bound (uncalibrated)", "median of 12 runs"
  double time_s = 0;        ///< per iteration (or per request for serving)
  double rate_per_s = 0;    ///< samples/s or tokens/s
  std::string bound{};      ///< what limits the whole run ("": dominant_bound of the layers decides)
  std::vector<LayerTime> layers{};
  double ttft_s = NAN;        ///< serving: time to first token (NaN: not serving)
  double per_token_s = NAN;   ///< serving: time per output token
  /// Machine form of time_kind in JSON and CSV: "calibrated", "upper_bound", "hand_set" (predict's time_kind) or
  /// "measured"; empty: time_kind itself.
  std::string time_kind_key{};
};

/// The op groups a performance engineer reads time by, in display order: "conv", "matmul", "attention", "norm",
/// "elementwise", "pool/reduce", "data movement", "other".
const std::vector<std::string>& op_groups();
/// The op group of a ridge::op_class (or a measured step's op, "Reorder" is data movement); "other" when none fits.
std::string op_group(std::string_view op_class);
/// Seconds per op group of `layers`, indexed like op_groups() (NaN layer times are skipped).
std::vector<double> time_by_group(const std::vector<LayerTime>& layers);
/// Indices of the `n` slowest layers, slowest first (ties keep layer order; NaN times never picked).
std::vector<size_t> top_layers(const std::vector<LayerTime>& layers, size_t n);
/// The bound under which most of the time is spent ("compute", "memory", "overhead"; "" when no layer has one).
std::string dominant_bound(const std::vector<LayerTime>& layers);
/// The op class of an LLM serving op: all-reduce rows "Communication", the attention core's matmul* (or a fused
/// kernel's class "attention") "Attention", anything under a norm "LayerNorm", else the op's own class `op_class`
/// (its family: "Linear" for every projection, MoE expert and router, "Softmax", "Gather", "Binary", ...); without
/// one, from the name: *_proj and lm_head "Linear", softmax "Softmax", embed_tokens "Gather", the rest "Unary".
std::string llm_op_class(const std::string& name, const std::string& op_class = "");
/// The module path of a layer at `depth`: its first `depth` dot-separated components ("layer1.0.conv1", 1 ->
/// "layer1"); the whole name when it has no more components or depth <= 0.
std::string module_of(const std::string& layer, int depth);
/// Repeated instances in a list of layer names: names that differ only in the index of a numbered module with at
/// least `min_instances` distinct indices under one parent (a MoE layer's experts.0 ... experts.127), an index that is
/// not the name's first number (so "model.layers.3" stays apart from "model.layers.4"). Path components are split at
/// '.' and '/' (ONNX exports' "/model/layers.3/mlp/experts.17/..."). Returns each name's group key: the name with such
/// indices as "*" ("model.layers.3.mlp.experts.*.gate_proj"), or the name itself.
std::vector<std::string> repeat_keys(const std::vector<std::string>& names, size_t min_instances = 32);
/// A layer table with the rows of repeated instances (repeat_keys of column `name_col`) merged into one row per key,
/// in order of first appearance: named "KEY (×N)", additive columns (counts, FLOPs, MACs, bytes, seconds, percent)
/// summed exactly, other cells kept where every member agrees and "varies" (text) or empty where not. Total rows
/// stay, after the others. `row_of` (if given) receives, for every input row, its row in the result.
report::Table collapse_repeats(const report::Table& t, int name_col, std::vector<int>* row_of = nullptr,
                               size_t min_instances = 32);
/// `runs` with each run's repeated instances (repeat_keys over every run's layer names) as one layer "KEY (×N)":
/// times summed (NaN members skipped; NaN when every member is), op class and bound of the first member. The slowest
/// layers of a MoE model are then its experts' projections, not single attention ops; every total is unchanged.
std::vector<Run> merge_repeats(std::vector<Run> runs, size_t min_instances = 32);
/// "resnet50, batch 8, amp-bf16, training": what every chart title starts with.
std::string scenario(const std::string& model, int64_t batch, const std::string& precision, bool training);

/// What fills memory, in bytes. Parts that do not apply are 0 (gradients in inference, KV outside serving).
struct MemoryParts {
  Count weights = 0;      ///< parameters and buffers (and a separate master copy)
  Count gradients = 0;
  Count optimizer = 0;    ///< optimizer state
  Count activations = 0;  ///< saved for backward (training) or the live peak (inference)
  Count kv_cache = 0;
  Count state_cache = 0;  ///< a recurrent model's Mamba / Gated DeltaNet states (serving)
  bool serving = false;   ///< an LLM served: no gradients or optimizer state, activations not counted
  Count total() const { return weights + gradients + optimizer + activations + kv_cache + state_cache; }
};
/// A device's memory for the limit line: its name and capacity (0: unknown, not drawn).
struct MemoryLimit {
  std::string device{};
  Count bytes = 0;
};

/// The headline table: one row per run with its time, rate (`rate_title`: "samples/s" or "tokens/s"), bound and
/// time kind. Keys: run, measured, time_s, rate_per_s, bound, time_kind; serving runs add ttft_s and per_token_s
/// (time_s is then the end-to-end latency of one request).
report::Table runs_table(const std::vector<Run>& runs, const std::string& rate_title);
/// The `n` slowest layers of the first run with their op group, share of that run's time and their time in every
/// run (columns time_s.<run name>; empty where a run lacks the layer).
report::Table top_layers_table(const std::vector<Run>& runs, size_t n);
/// Time by op group for every run, one row per group with seconds and percent per run (keys: group,
/// time_s.<run>, percent.<run>).
report::Table op_group_table(const std::vector<Run>& runs);
/// The memory parts as Fields (weights_bytes, gradient_bytes, optimizer_bytes, activation_bytes, kv_cache_bytes,
/// total_bytes), exact.
report::Fields memory_fields(const MemoryParts& m);

/// One model at one batch and precision, for `ridge compare`.
struct Variant {
  std::string model{};
  int64_t batch = 1;
  std::string precision{};     ///< "fp32", "amp-bf16"
  Count params = 0;
  Count flops = 0;             ///< per iteration: forward, or forward + backward in training
  Count memory_bytes = 0;      ///< peak: inference, or training (weights, gradients, optimizer, saved activations)
  std::vector<double> time_s{};       ///< predicted per iteration, one per device (NaN: not predicted)
  std::vector<double> samples_per_s{};
  std::vector<std::string> time_kind{};  ///< per device: time_kind_label() ("calibrated", "upper bound ...")
  std::vector<std::string> time_kind_key{};  ///< per device, beside time_kind: time_kind_key() ("upper_bound", ...)
};
/// The variants side by side, one row each (keys: model, batch, precision, params, flops, memory_bytes, then
/// time_s.<device>, samples_per_s.<device> and time_kind.<device> per device, and flops_vs_first: FLOPs relative to
/// the first row).
report::Table compare_table(const std::vector<Variant>& variants, const std::vector<std::string>& devices);

/// One stacked bar per run: the percent of its time in each op group (legend in op_groups() order).
chart::Chart op_group_chart(const std::string& title, const std::vector<Run>& runs);
/// One stacked bar of the memory parts in GiB with a line at each device's capacity.
chart::Chart memory_chart(const std::string& title, const MemoryParts& m, const std::vector<MemoryLimit>& limits);

}  // namespace ridge::headline
