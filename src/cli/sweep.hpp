// Sweeps over models x batch sizes: the plan (a manifest on disk), one result file per point written
// atomically, and the merge of whatever result files exist (local and Slurm results mix freely).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/report.hpp"

namespace ridge::cli {

/// Where and how a sweep's points run on Slurm.
struct SlurmOptions {
  std::string partition, account, gres, time = "00:30:00";
  int max_parallel = 0;     ///< 0 = no limit (%K in --array)
  std::string gpu_command;  ///< with --gres: the program to profile; "{batch}" is replaced by the batch size
};

/// Everything needed to run one sweep, anywhere. Serialised as DIR/sweep.json.
struct SweepPlan {
  std::vector<std::string> models;
  std::vector<int64_t> batches;
  ModelOptions model;        ///< input size, dtype, ... (batch ignored)
  std::string optimizer = "sgd";
  bool measure = false;      ///< run `ridge measure` (CPU) or the profiler command (GPU) per point
  int threads = 0;           ///< --threads for ridge measure (0 = its default)
  SlurmOptions slurm;
  std::string device;        ///< predict time and samples/s on this device (ridge devices), "" = none
  std::string precision = "fp32";
  bool train = false;        ///< predict a training step instead of inference
  std::string ridge_binary;  ///< absolute path of the ridge that tasks run

  /// Load options of one point: the model options at `batch`, tensors at the precision's activation type unless a
  /// --dtype other than the default fp32 was given.
  LoadOptions load_options(int64_t batch) const;
  /// (model, batch) of point `index`; points are ordered model-major.
  std::pair<std::string, int64_t> point(size_t index) const;
  size_t size() const { return models.size() * batches.size(); }
  nlohmann::json to_json() const;
  static SweepPlan from_json(const nlohmann::json& j, const std::string& where);
};

/// Quotes a string for /bin/sh ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& s);
/// Runs a shell command, capturing stdout and stderr together; returns its exit code (127 when no shell).
int run_shell(const std::string& cmd, std::string& out);

/// Computes one point (estimate, and measurement when planned) as a self-describing JSON result.
/// Throws ridge::Error when the point cannot be computed.
nlohmann::json run_point(const SweepPlan& plan, size_t index);

/// File name of a point's result inside DIR/results ("resnet50__b16.json", safe characters only).
std::string result_file_name(const std::string& model, int64_t batch);

/// Creates DIR (and results/, logs/, state/) and writes the manifest. Refuses (ridge::Error) to reuse a
/// folder holding a different sweep's manifest or unrelated files, so nothing is overwritten.
void prepare_sweep_dir(const std::string& dir, const SweepPlan& plan);
/// Reads DIR/sweep.json. Throws ridge::Error naming the file.
SweepPlan read_sweep_dir(const std::string& dir);

/// Results found in a sweep folder, plus what is wrong with the rest.
struct Collected {
  std::vector<nlohmann::json> results;     ///< one per point that has a valid result, plan order
  std::vector<size_t> missing;             ///< point indices without a valid result
  std::vector<std::string> warnings;       ///< foreign or broken files (named), skipped
};
Collected collect_results(const std::string& dir, const SweepPlan& plan);

/// The typed points of result files, for the report stage (missing blocks stay unset).
std::vector<report::SweepPoint> sweep_points(const std::vector<nlohmann::json>& results);

/// What the sweep report needs of a plan: its models and size, its device and, with a device, the largest batch
/// of each model that fits it (model::batch_capacity).
report::SweepReportRequest sweep_report_request(const SweepPlan& plan);

}  // namespace ridge::cli
