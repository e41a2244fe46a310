// Report stage, front-end API: one call per `ridge` command. Each takes plain values (a loaded Graph, or a model
// spec with LoadOptions, and an options struct) and returns a report::Document (plus typed extras where a
// front end draws charts). The CLI parses arguments into these structs and prints what comes back; the Python
// module calls the same functions. Errors are ridge::Error (bad input) or ridge::UsageError (bad option value).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ridge/chart.hpp"
#include "ridge/cost.hpp"
#include "ridge/device.hpp"
#include "ridge/ingest.hpp"
#include "ridge/llm.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/load.hpp"
#include "ridge/machine.hpp"
#include "ridge/measure.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"
#include "ridge/report.hpp"

namespace ridge::report {

// ---- summary ------------------------------------------------------------------------------------------------

/// What `ridge summary` shows of a loaded graph.
struct SummaryOptions {
  int depth = 0;                          ///< group nodes by the first `depth` module-path components; 0 = every node
  std::optional<Convention> convention;   ///< adds a per-layer headline column and totals.headline under it
  Optimizer optimizer = Optimizer::SGD;   ///< optimizer whose state the training memory counts
  std::optional<PrecisionMode> precision; ///< training precision of weights, gradients and optimizer state
                                          ///< (nullopt: every tensor at the graph's dtype)
};

/// Marks a report of an incomplete model: `alert` (the INCOMPLETE line printed first), JSON `complete` and
/// `not_costed` (node, op, reason).
void mark_incomplete(Document& d, const Incompleteness& inc);
/// The same for a report of several models (compare, sweep): `gaps` lists incomplete models with the op types
/// left out (a model listed again is named once); the alert names them, JSON `complete` (false when any is
/// listed) and `not_costed` ({model, ops}).
void mark_incomplete_models(Document& d, const std::vector<std::pair<std::string, std::vector<std::string>>>& gaps);

/// The deepest module depth at which the layer table has at most `max_rows` rows (0 = every node, when all of
/// them fit; at least 1).
int fitting_depth(const Graph& g, size_t max_rows);

/// torchinfo-style summary: per-layer table "layers" (name, op, output shape, params, MACs, FLOPs, backward,
/// bytes, memory, share), fields "totals" and "memory", and notes (uncosted ops, importer notes).
Document summary_report(const Graph& g, const SummaryOptions& opts);

// ---- flops --------------------------------------------------------------------------------------------------

/// The conventions `ridge flops` lists: every one with `all`, ridge's and `one` when given, else ridge's alone.
std::vector<Convention> flops_conventions(bool all, std::optional<Convention> one);

/// Headline counts of `g` under each of `conventions` (table "conventions": exact count, unit, the tool's own
/// text, ratio to ridge's FLOPs, what differs) and ridge's totals (fields "totals"). With `llm` (the LLM that `g`
/// instantiates at input [batch, seq]) also table "llm_conventions": the published LLM formulas and tools.
Document flops_report(const Graph& g, const std::vector<Convention>& conventions, const LlmConfig* llm = nullptr);

// ---- predict ------------------------------------------------------------------------------------------------

/// Data-parallel training across devices (`ridge predict --devices-count N --train`).
struct DataParallelRequest {
  ClusterRequest cluster;                 ///< devices (> 1 turns data parallelism on), GPUs per node, links
  std::string allreduce = "auto";         ///< auto|ring|tree|hierarchical|ps
  std::string allreduce_fit = "builtin";  ///< NCCL fit file whose one-node fits replace the fabric's data sheet
                                          ///< figures; "builtin" (data/calibrations) or "none"
  double bucket_mib = 25;                 ///< gradient bucket size (PyTorch DDP bucket_cap_mb)
};

/// What `ridge predict` predicts: a model on a device at a precision mode, optionally data-parallel.
struct PredictRequest {
  ModelSource model;                      ///< zoo name, .onnx path, descriptor or an in-memory model (a label
                                          ///< only with `flops`)
  bool strict = false;                    ///< a node that cannot be costed is an error (require_complete)
  LoadOptions load;                       ///< batch and input sizes; `training` follows `train`
  std::optional<DType> dtype;             ///< element type of tensors (nullopt: the precision mode's activations)
  std::string device;                     ///< device id or alias
  std::vector<std::string> device_dirs;   ///< further device folders
  std::string precision = "fp32";         ///< precision mode (precision_mode_names())
  bool train = false;                     ///< training iteration: forward, backward and SGD weight update
  std::string combine;                    ///< sum (PALEO) or max (roofline overlap); "": the calibration's, or max
                                          ///< with no fitted calibration (the bound)
  std::string level = "dram";             ///< memory level whose bandwidth the memory term uses
  std::string calibration;                ///< "" (the shipped one), "none" or a calibration file (PredictSettings)
  bool force = false;                     ///< apply a calibration of another device family or precision anyway
  std::optional<double> ppp;              ///< fallback fraction of peak FLOP/s
  std::optional<double> ppp_mem;          ///< fallback fraction of peak bandwidth
  std::optional<double> kernel_launch_s;  ///< per-kernel overhead (nullopt: the device's)
  std::string optimizer = "sgd";          ///< the training step's weight update: sgd|momentum|adam
  std::optional<Count> flops;             ///< hand-given forward FLOPs for the whole model instead of ridge's
  DataParallelRequest data_parallel;      ///< cluster.devices > 1: data-parallel training (needs `train`)
};

/// The prediction document: fields "summary", with data_parallel also fields "data_parallel" and table
/// "buckets", then table "layers" (per-layer times, their calibration and bound).
Document predict_report(const PredictRequest& req);

// ---- roofline -----------------------------------------------------------------------------------------------

/// What `ridge roofline` places: models on the rooflines of devices, with optional measurements.
struct RooflineRequest {
  std::vector<std::string> models;        ///< zoo names or .onnx paths
  bool strict = false;                    ///< a node that cannot be costed is an error (require_complete)
  LoadOptions load;                       ///< batch and input sizes
  std::optional<DType> dtype;             ///< element type of tensors (nullopt: the precision's)
  std::vector<std::string> devices;       ///< device ids or aliases
  std::vector<std::string> device_dirs;   ///< further device folders
  std::string precision = "fp32";         ///< peak precision name (fp64|fp32|tf32|fp16|bf16|int8)
  std::string level = "dram";             ///< memory level whose bandwidth forms the roof
  std::vector<MeasuredRun> measured;      ///< measurements matched to models and devices (match_measurement)
  std::vector<std::string> measured_files;  ///< measurement files read (after the devices are found) and
                                            ///< matched after `measured`
  bool force = false;                     ///< use a measurement that records another model, device or batch
                                          ///< (check_measurement_matches) anyway; the notes then say so
  bool summary_only = false;              ///< per-model rows only, no layer table
  bool charts = true;                     ///< also build one roofline chart per device
};

/// The roofline document (tables "devices", "models", and "layers" unless summary_only) and one roofline chart
/// per device with the model and layer points.
struct RooflineResult {
  Document doc;
  std::vector<chart::Chart> charts;  ///< one per device, in request order (none without RooflineRequest::charts)
};
RooflineResult roofline_report(const RooflineRequest& req);

// ---- measure ------------------------------------------------------------------------------------------------

/// How `ridge measure` runs a loaded graph on this CPU.
struct MeasureRequest {
  MeasureOptions options;       ///< executor (threads, seed, train) and repeat policy
  std::string machine_profile;  ///< `ridge machine` profile for the roofline columns ("" = the cached one; "none")
  std::string model_file;       ///< .onnx file whose payloads (weights, Constants, Clip bounds) are read; "" = random
};
/// Measures `g` (loaded at the batch and training mode to run) with oneDNN: refuses a graph that does not fit in
/// memory (ridge::Error), calls `starting` (when set) just before the first run, and fills the roofline columns
/// from the machine profile (a missing profile is a note).
ModelMeasurement measure_model(const Graph& g, const MeasureRequest& req, const std::function<void()>& starting = {});
/// The measurement document: fields "summary" (end to end) and table "layers" (per layer, with counters); with an
/// end-to-end measurement also fields "end_to_end" and tables "fusion_groups" and "end_to_end_steps".
Document measure_report(const Graph& g, const ModelMeasurement& m);
/// The end-to-end program's blocks of a measurement (none without one): fields "end_to_end" (its time next to
/// the per-layer program's and the sum of layer medians, the fusion gain) and table "fusion_groups" (each fused
/// step's time next to its nodes run one by one). Shared by `ridge measure` and `ridge report --end-to-end`.
std::vector<Block> end_to_end_blocks(const ModelMeasurement& m);

// ---- run ----------------------------------------------------------------------------------------------------

/// What `ridge run` executes: a model once on this CPU, compared with expected outputs.
struct RunRequest {
  std::string model;                  ///< .onnx file (its real weights are read) or zoo name (random weights)
  std::vector<std::string> inputs;    ///< input TensorProto files (.pb), bound by name or in graph-input order
  std::vector<std::string> expected;  ///< expected output files (.pb), by name or in graph-output order
  double rtol = 1e-3;                 ///< relative tolerance of the comparison
  double atol = 1e-7;                 ///< absolute tolerance of the comparison
  int64_t batch = 1;                  ///< batch when no input file binds the shapes
  int threads = 0;                    ///< oneDNN threads (0 = runtime default)
  uint64_t seed = 42;                 ///< seed of random inputs and weights no file provides
};
/// One execution: the graph run, its outputs, the document (tables "outputs" and "steps"), and the first
/// failure (an output outside tolerance, or steps not executed when outputs were expected) as one line.
struct RunResult {
  Graph graph;
  ExecResult exec;
  Document doc;
  std::optional<std::string> failure;  ///< nullopt: every expected output matched
};
/// Loads, executes and compares (throws ridge::Error for unreadable files, UsageError for surplus tensors).
RunResult run_model(const RunRequest& req);

// ---- sweep --------------------------------------------------------------------------------------------------

/// One point of a batch-size sweep: ridge's estimate, and a measurement and prediction when it has them.
struct SweepPoint {
  std::string model;
  int64_t batch = 0;
  Count params = 0, flops = 0, macs = 0, backward_flops = 0, bytes = 0;  ///< estimated totals
  Count activation_bytes = 0, inference_peak_bytes = 0, training_peak_bytes = 0;  ///< estimated memory
  std::vector<std::string> not_costed_ops;        ///< op types left out of the estimate (empty: complete)
  bool measured = false;                          ///< the point was measured (its time may still be unknown)
  std::optional<double> measured_time_s;          ///< measured time per pass
  std::optional<double> measured_samples_per_s;   ///< batch / measured time
  bool predicted = false;                         ///< the point was predicted on the sweep's device
  std::optional<double> predicted_time_s;         ///< predicted time per pass or training step
  std::optional<double> predicted_samples_per_s;  ///< batch / predicted time
  bool predicted_calibrated = false;              ///< fitted factors applied (else the times are peak-rate bounds)
};
/// The largest batches of each model that fit a device (model::batch_capacity), for the sweep's capacity table.
struct SweepCapacity {
  std::string device;                  ///< device id
  Count memory_bytes = 0;              ///< its memory
  std::string optimizer;               ///< optimizer of the training peak
  std::vector<std::pair<std::string, std::optional<BatchCapacity>>> models;  ///< nullopt: memory unknown
  std::map<std::string, std::string> unknown;  ///< model -> why its largest batch is not computed
  bool trainable = true;                       ///< false at an inference-only precision (int8): no training column
};
/// What the sweep report shows besides its points.
struct SweepReportRequest {
  std::vector<std::string> models;        ///< the swept models
  size_t planned_points = 0;              ///< points planned (results may be fewer)
  std::string device;                     ///< device predictions were made on ("" = none)
  std::optional<SweepCapacity> capacity;  ///< table "capacity" (with a device)
};
/// The sweep document: table "points" (estimates, measured and predicted columns when any point has them),
/// table "fits" (least-squares line per model and quantity against batch), and "capacity" when requested.
Document sweep_report(const SweepReportRequest& req, const std::vector<SweepPoint>& points);
/// FLOPs and memory against batch (estimates), and measured time when any point has one; one series per model.
std::vector<chart::Chart> sweep_charts(const std::vector<SweepPoint>& points);

// ---- machine ------------------------------------------------------------------------------------------------

/// This CPU's empirical roofline (from measure::load_or_measure_machine): fields "cpu", peaks and bandwidths per
/// level, tables "peaks" and "levels" (and "sweep", every working-set point, with `with_sweep`); the whole profile
/// under extra["profile"].
Document machine_report(const measure::MachineProfile& p, const measure::ProfileSource& src, bool with_sweep);

// ---- ingest -------------------------------------------------------------------------------------------------

/// What `ridge ingest` reads and how it sums, groups and compares it.
struct IngestRequest {
  std::vector<std::pair<std::string, std::string>> files;  ///< (profiler output path, label such as "bs=10")
  std::string input_format;               ///< force a format (ingest::format_name) instead of detecting it ("")
  std::string join = "auto";              ///< combine files: auto|id|sequence|none (ingest::parse_join_mode)
  std::string arch;                       ///< GPU architecture for the tensor-core factor ("" = from the files)
  std::optional<int64_t> tensor_factor;   ///< FLOPs per tensor-pipe instruction (overrides arch)
  std::optional<size_t> run;              ///< only run N (1-based) when the files hold several
  std::string group = "family";           ///< family|nvtx|process|name|label|file|run|op
  std::optional<size_t> top;              ///< kernels listed (nullopt: 25 in the short form, all in the full one)
  std::string model;                      ///< compare with ridge's estimate of this model ("" = no comparison)
  int64_t batch = 1;                      ///< batch of the profiled run (with model)
  int64_t steps = 1;                      ///< iterations in the capture (with model)
  bool train = false;                     ///< the capture holds training steps
  std::string device;                     ///< device id or alias: predicted time per family, kernel roofline ("" = none)
  std::vector<std::string> device_dirs;   ///< further device folders
  std::string precision = "fp32";         ///< precision mode of the profiled run (its peak is the headline ceiling)
  std::string calibration;                ///< with model and device, the prediction's: "" the shipped one, "none", a file
  bool force = false;                     ///< use a profile whose files name another model, batch or GPU anyway
};
/// Reads, combines and derives the files of `req` (throws ridge::Error when nothing could be read, UsageError
/// for an unknown input format or a comparison over several runs). With a model or device, a profile whose file
/// names (or recorded GPU) say another model, batch or GPU, or files of different models, are a one-line
/// ridge::Error naming both sides; with `force` they become "forced: ..." notes of the profile.
ingest::Profile ingest_profile(const IngestRequest& req);
/// Profiled time per kernel family (and per layer where a kernel's NVTX range or operator names a layer) next to
/// ridge's predicted time for `work` (times `steps`), with FLOPs and DRAM bytes counted vs estimated: tables
/// "families" and "layers_profiled" (when any layer matched), and notes.
Document profile_vs_prediction(const ingest::Profile& p, const std::vector<LayerWork>& work, const Prediction& pred,
                               int64_t steps, bool train);
/// Kernel roofline charts of a profile on device `d`: every kernel name (or kernel family when there are more
/// than 40 names) at its achieved FLOP/s against its DRAM arithmetic intensity, one series per precision, under
/// the device's ceilings per precision (`headline` first); and, when the profile has L1 or L2 bytes, the
/// hierarchical roofline (NERSC: the same FLOP/s at the L1, L2 and DRAM intensities) under the DRAM ceiling and
/// the device's L2 and L1 bandwidths, with a note on where those come from or which the device file lacks. Points
/// above their roof are labelled "above-roof" and listed in `flags` (when given) as lines.
std::vector<chart::Chart> kernel_roofline_charts(const ingest::Profile& p, const Device& d, Precision headline,
                                                 std::vector<std::string>* flags = nullptr);
/// The memory ceilings of a GPU's hierarchical roofline: fields "ceilings" with dram/l2/l1_bandwidth_bytes_per_s
/// (empty where the device file has no figure) and the source of each (`..._source`).
Fields device_ceilings(const Device& d);
/// The ingest document: fields "totals", tables "groups", "runs" (and fields "fit" for labelled runs),
/// "compare" (with a model), "families" and "layers_profiled" (with a model and a device: profile_vs_prediction),
/// "counters" and "kernels" (the longest `top` unless `all_kernels`, which also adds every column); with a device,
/// fields "ceilings" (device_ceilings) and kernels above their roof named in the notes. The comparison uses
/// `costs` when given (the caller's estimate of req.model at req.batch, as `ridge report` has it), else it loads
/// req.model.
Document ingest_report(const ingest::Profile& p, const IngestRequest& req, bool all_kernels,
                       const ModelCost* costs = nullptr);
/// The kernel roofline charts of `ingest --device` (kernel_roofline_charts on the request's device and precision).
std::vector<chart::Chart> ingest_charts(const ingest::Profile& p, const IngestRequest& req);

// ---- devices ------------------------------------------------------------------------------------------------

/// What `ridge devices` lists.
struct DevicesRequest {
  std::vector<std::string> device_dirs;  ///< further device folders
  std::string machine_profile;           ///< `ridge machine` profile to add as device "machine" ("" = the cached one)
};
/// The device table "devices" (peaks per precision, DRAM bandwidth, ridge point, memory, SMs) with whole
/// device records under extra["devices"]; a missing or bad machine profile is a note, not an error.
Document devices_report(const DevicesRequest& req);

// ---- compare ------------------------------------------------------------------------------------------------

/// What `ridge compare` puts side by side: every model at every batch and precision mode.
struct CompareRequest {
  std::vector<std::string> models;               ///< zoo names, .onnx files or config.json files
  std::vector<int64_t> batches{1};
  std::vector<std::string> precisions{"fp32"};   ///< precision modes (precision_mode_names())
  int64_t seq_len = 0;                           ///< language models' sequence length (0: each model's)
  std::vector<std::string> devices;              ///< devices to predict the time on (none: no time columns)
  std::vector<std::string> device_dirs;          ///< further device folders
  bool train = false;                            ///< training iteration instead of inference
  std::string optimizer = "sgd";                 ///< sgd|momentum|adam (training memory)
};
/// Table "compare" (headline::compare_table: params, FLOPs, peak memory, time per device) of every variant.
/// Throws UsageError for fewer than two variants, a bad batch, precision or optimizer.
Document compare_report(const CompareRequest& req);

// ---- serve -----------------------------------------------------------------------------------------------

/// The serving document of `ridge serve`: fields "serve" (TTFT, time per token, tokens/s, KV and weight bytes,
/// largest batch), table "op_groups" (per phase, each op summed over the layers: count, FLOPs, bytes, time, share
/// of the phase) and table "ops" (per phase and op of every layer: FLOPs, bytes, bound, time), each time labelled.
Document serve_report(const ServeResult& r);
/// An op name with its layer index replaced by "*" (the first dotted component that is a number):
/// "model.layers.12.mlp.up_proj" -> "model.layers.*.mlp.up_proj"; names without one are returned unchanged.
std::string layer_pattern(std::string_view name);
/// A note naming the ops (by layer_pattern, each with its class) whose op class `cal` has no fitted factors for:
/// llm_op_time times them with the calibration's fallback factors (a recurrent model's scans and conv1d, which no
/// shipped measurement covers). "" when every class is fitted or nothing is calibrated. `label`: the time label.
std::string fallback_classes_note(const std::optional<Calibration>& cal, const std::vector<ServeOp>& ops,
                                  const std::string& label);
std::string fallback_classes_note(const std::optional<Calibration>& cal, const std::vector<TrainOp>& ops,
                                  const std::string& label);

/// What `ridge serve` and `ridge train` analyse: an LLM on a device with the options of the phase (ServeOptions:
/// batch, prompt, generate, tp, formats, compute, attention; TrainOptions: layout, batch, sequence, precision,
/// recompute, ZeRO, attention). The options' calibration and all-reduce fit are filled by resolve_llm_request.
template <class Options>
struct LlmRequest {
  ModelSource model;                      ///< LLM zoo name, config.json path (or its folder), or config text
  std::string device;                     ///< device id or alias
  std::vector<std::string> device_dirs;   ///< further device folders
  std::string calibration = "builtin";    ///< "builtin" (the shipped LLM fit of the device's family), "none", a file
  Options options;
};
/// What an LlmRequest names, resolved: the model's config, the device, and the options with the calibration and
/// the measured TP all-reduce fit that apply (llm_calibration_for).
template <class Options>
struct LlmSetup {
  LlmConfig config;
  Device device;
  Options options;
};
/// The LLM configuration of a serve/train/report --serve MODEL (require_llm_config); a zoo graph that is not an LLM
/// configuration (gpt2, bert) is refused as such, not as an unknown name.
LlmConfig require_llm_model(const ModelSource& model);
/// Resolves `req` (throws ridge::Error for an unknown model, device or calibration). Defined for ServeOptions and
/// TrainOptions.
template <class Options>
LlmSetup<Options> resolve_llm_request(const LlmRequest<Options>& req);
extern template LlmSetup<ServeOptions> resolve_llm_request(const LlmRequest<ServeOptions>&);
extern template LlmSetup<TrainOptions> resolve_llm_request(const LlmRequest<TrainOptions>&);

/// A slow step of a report starting: `what` ("report: sweep"), item `done` (0-based) of `total` (0: a single
/// step, `what` says it all) and which item ("batch 8"); done == total: the counted step has ended.
using ReportProgress = std::function<void(const std::string& what, size_t done, size_t total, const std::string& detail)>;

/// What `ridge serve` analyses: an LLM on a device with the serving options.
using ServeRequest = LlmRequest<ServeOptions>;
/// Analyses `req` (analyze_serving of resolve_llm_request) and returns serve_report of the result.
Document serve_report(const ServeRequest& req);
/// The charts of `ridge serve --plot`: memory per GPU (weights + KV cache, stacked, at batch 1, the request's
/// batch and the largest that fits, against the device's memory), TTFT and time per output token against batch
/// and against prompt length (each curve stops where a size no longer fits), and the prefill and decode ops on the
/// device's roofline. Each latency curve's serving analyses are told to `progress` ("serve --plot: latency vs
/// batch", one item per point).
std::vector<chart::Chart> serve_charts(const ServeRequest& req, const ReportProgress& progress = {});
/// Training memory per GPU (weights, gradients, optimizer states, activations, stacked) of layout `o` under ZeRO
/// stages 0-3, the layout's own stage marked, against the device's memory (for `ridge train --plot`).
chart::Chart train_memory_chart(const LlmConfig& c, const Device& d, const TrainOptions& o);
/// Where a training micro-batch's compute time goes on one GPU: one stacked bar per op class (forward, backward,
/// recomputed forward), largest first, from TrainResult::ops (for `ridge train --plot`).
chart::Chart train_time_chart(const TrainResult& r);

// ---- train -----------------------------------------------------------------------------------------------

/// The training document of `ridge train` for the LLM `c`: iteration time, MFU/HFU, tokens/s, memory per GPU
/// with its breakdown and whether it fits, communication per layout. For a layout that does not fit, `fits_with`
/// (memory_savers_that_fit of the same layout) goes into extra["fits_with"] and a note.
Document train_report(const TrainResult& r, const LlmConfig& c, const std::optional<std::string>& fits_with = {});

/// What `ridge train` analyses: an LLM trained on GPUs of one device kind under a parallel layout.
using TrainRequest = LlmRequest<TrainOptions>;
/// Analyses `req` (analyze_training of resolve_llm_request) and returns train_report of the result, with
/// memory_savers_that_fit when it does not fit.
Document train_report(const TrainRequest& req);
/// The charts of `ridge train --plot`: train_memory_chart and train_time_chart of the resolved request.
std::vector<chart::Chart> train_charts(const TrainRequest& req);

// ---- report (the HTML page) ------------------------------------------------------------------------------

/// What `ridge report` puts on its page: a model's costs, predictions on devices, sweeps and, when asked,
/// measurements on this CPU and GPU profiles; or, with `serve`, an LLM's serving on each device.
struct ReportRequest {
  ModelSource model;                      ///< zoo name, .onnx path, in-memory model; with `serve` an LLM
  bool strict = false;                    ///< a node that cannot be costed is an error (require_complete)
  LoadOptions load;                       ///< batch and input sizes; `training` follows `train`
  std::optional<DType> dtype;             ///< element type of tensors (nullopt: the precision mode's activations)
  std::string precision;                  ///< precision mode (precision_mode_names()); "": the default, fp32, or
                                          ///< with `serve` serve_options as they are (fp16 by default)
  bool train = false;                     ///< training iteration: forward, backward and weight update
  std::string optimizer = "sgd";          ///< optimizer of the training memory: sgd|momentum|adam
  std::vector<std::string> devices;       ///< devices predicted on, one roofline each
  std::vector<std::string> device_dirs;   ///< further device folders
  bool measure = false;                   ///< also time every layer on this CPU (fp32, oneDNN)
  bool end_to_end = false;                ///< with `measure`: also the fused end-to-end program (end_to_end_blocks)
  std::vector<std::string> profiles;      ///< GPU profiler outputs shown next to the estimates
  bool force = false;                     ///< use profiles whose file names name another model, batch or GPU
  std::vector<int64_t> sweep = {1, 2, 4, 8, 16, 32, 64};  ///< batch sizes of the sweep charts
  int depth = 1;                          ///< module depth of the layer table's groups (0: one group per layer)
  size_t top = 5;                         ///< slowest layers on the headline
  bool serve = false;                     ///< an LLM's serving (prefill, decode, KV cache) instead
  ServeOptions serve_options;             ///< with `serve`: batch, prompt, generate, tp, formats; `precision`, when
                                          ///< set, applies as `serve --precision` (with_serving_precision: compute,
                                          ///< and the formats not marked given below); calibration as `serve`'s builtin
  bool serve_weights_given = false;       ///< serve_options.weights was chosen (--weights): `precision` keeps it
  bool serve_kv_given = false;            ///< serve_options.kv was chosen (--kv): `precision` keeps it
  ReportProgress progress;                ///< told of each slow step (may be empty)
};
/// The report page and its JSON summary: the headline's tables (runs, slowest layers, op groups, memory) as
/// `doc`, and every section (headline, rooflines, sweeps, layer table, prediction, measurements, profiles) as
/// `page`, which chart::write_html / chart::render_html turn into one self-contained HTML file.
struct HtmlReport {
  chart::ReportData page;
  Document doc;
};
/// Builds the report `req` asks for (throws ridge::Error for bad input, UsageError for a bad option value).
HtmlReport html_report(const ReportRequest& req);

}  // namespace ridge::report
