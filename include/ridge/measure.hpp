// Measure stage, executor: runs any Graph on this CPU with oneDNN primitives (random or real weights), times
// every layer, and compares the result with the cost model. Plain values in (Graph, options), plain values out
// (per-step status and timings, output tensors).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/bench_loop.hpp"
#include "ridge/count.hpp"
#include "ridge/graph.hpp"
#include "ridge/machine.hpp"

namespace ridge {

/// A dense fp32 tensor in row-major order (integer and boolean tensors are carried as exact small floats).
struct HostTensor {
  Shape shape;
  std::vector<float> data;
};

/// Tensors keyed by Value::name.
using TensorMap = std::map<std::string, HostTensor>;

/// How to build and run an executor.
struct ExecOptions {
  int threads = 0;            ///< oneDNN (OpenMP) threads; 0 keeps the runtime default
  uint64_t seed = 42;         ///< seed of the random weights and inputs (the same seed gives the same numbers)
  TensorMap weights;          ///< real payloads of params/buffers/constants by name; the others are random
  TensorMap inputs;           ///< graph inputs by name; the others are random
  bool train = false;         ///< build a training step: forward (training mode), backward, SGD update
  float learning_rate = 0.01f;  ///< SGD step size of the training update
  std::optional<Count> available_bytes;  ///< memory budget; default: MemAvailable from /proc/meminfo
  /// Build the end-to-end program (inference only): BatchNorm folded into the preceding Conv's weights, bias
  /// Adds, eltwise ops and residual Adds run as post-ops of their Conv/Gemm/MatMul, activation buffers shared
  /// by liveness. Off: one step per node (the per-layer program).
  bool fuse = false;
  /// For tests of the end-to-end program's fallback: fused kernels that oneDNN is told to refuse, as when a CPU or
  /// oneDNN version lacks one. Depthwise: a 1x1 conv with its depthwise conv appended (the conv then runs without
  /// it); Any: every step with absorbed nodes (they then run on their own). Outputs must not change.
  enum class Refuse : uint8_t { None, Depthwise, Any } refuse_fused = Refuse::None;
};

/// What the executor did with one step.
enum class StepStatus : uint8_t { Executed, Folded, NotExecuted };
/// "executed", "folded", "not executed".
std::string_view step_status_name(StepStatus s);

/// One row of an execution: a graph node, or a layout reorder the executor inserted before a node.
struct StepInfo {
  std::string name;      ///< node name; "<node>.reorder" for an inserted reorder
  std::string op;        ///< op type ("Conv") or "Reorder"
  int node = -1;         ///< graph node index (the consumer node for reorders)
  StepStatus status = StepStatus::Executed;
  std::string reason;    ///< for NotExecuted: why ("no kernel for op Resize"); for Folded: what was folded
  std::string kernel;    ///< implementation: oneDNN's ("brg:avx512_core"), "reference", "view" or "copy"
  bool synthetic_inputs = false;  ///< an input came from a step that did not execute (filled with random data)
  bool has_backward = false;      ///< --train: the step has a backward pass
  Count bytes_moved = 0;          ///< reorders: bytes read + written (nodes take theirs from the cost model)
  std::vector<int> fused_nodes;   ///< end-to-end program: the nodes this step also runs (as post-ops or folded)
};

/// True when `kernel` (StepInfo::kernel) names a reference implementation: oneDNN's "ref:any" (its RNN cells
/// too, which call its GEMMs), a fused chain "ref_fused_convolution:any:A:isa:B:isa" when one of its parts is one,
/// and ridge's own single-threaded "reference" loops. Correct everywhere, and tens to thousands of times slower
/// than the optimised kernels.
bool reference_kernel(std::string_view kernel);

/// Result of one forward pass.
struct ExecResult {
  std::vector<StepInfo> steps;
  TensorMap outputs;               ///< graph outputs by name
  std::vector<std::string> notes;  ///< what the executor approximated (random weights, synthetic inputs, ...)
  Count buffer_bytes = 0;          ///< bytes held by the executor's buffers (activations, weights, reorders)
};

/// Executes `g` once (forward; in training mode when opts.train: batch statistics) and returns its outputs. Throws ridge::Error when the graph cannot
/// be instantiated (unknown shapes, not enough memory); ops without a kernel are reported per step instead.
ExecResult execute(const Graph& g, const ExecOptions& opts);

/// Gradients of every trainable parameter after one forward and backward pass in training mode, with the loss
/// taken as the sum of all graph outputs (before any update). For checking backward kernels.
TensorMap parameter_gradients(const Graph& g, const ExecOptions& opts);

/// Every trainable parameter after `steps` training steps (forward in training mode, backward with the loss the
/// sum of the outputs, SGD update by opts.learning_rate), by name. Checks that the updates reach the kernels: a
/// kernel reading a packed copy of a weight must see each step's update.
TensorMap trained_parameters(const Graph& g, const ExecOptions& opts, int steps);

/// Bytes the executor needs for `g` (weights + every activation, + gradients and saved tensors when training),
/// from ridge::estimate_memory.
Count executor_memory_need(const Graph& g, bool train);
/// MemAvailable from /proc/meminfo in bytes (0 when unreadable).
Count mem_available_bytes();
/// Throws ridge::Error ("batch N needs X GB ... only Y GB available") when `g` would not fit in the budget
/// (`available_bytes` or MemAvailable). Called before anything is allocated.
void check_memory_fits(const Graph& g, bool train, std::optional<Count> available_bytes);

// ---- measurement ---------------------------------------------------------------------------------------

/// Options of `ridge measure`: the executor's options plus the repeat policy.
struct MeasureOptions {
  ExecOptions exec;
  int max_repeats = 50;        ///< cap on timed repeats (--repeat R sets it)
  int min_repeats = 5;         ///< timed repeats always done
  int warmup = 2;              ///< untimed runs first
  double target_noise = 0.02;  ///< stop when the relative spread of the end-to-end time falls below this
  double max_seconds = 20.0;   ///< stop repeating after this much wall time (after min_repeats)
  bool end_to_end = false;     ///< also measure the fused end-to-end program (ExecOptions::fuse) after the per-layer one
};

/// One measured row.
struct LayerMeasurement {
  StepInfo step;
  measure::BenchStats forward;     ///< forward time of this step
  measure::BenchStats backward;    ///< --train: backward time (0 samples when none)
  Count flops = 0;         ///< forward FLOPs from ridge::estimate (0 for reorders and views)
  Count bwd_flops = 0;     ///< backward FLOPs from ridge::estimate
  Count bytes = 0;         ///< bytes read + written (cost model; reorders: their own copy)
  Count bytes_written = 0; ///< the written part of `bytes`
  std::string op_class;    ///< ridge::op_class of the node ("Conv", "DepthwiseConv", ...; "Reorder")
  bool cost_known = true;  ///< false when the cost model could not cost the node
  double gflops_per_s = 0;   ///< achieved forward FLOP rate
  double gbytes_per_s = 0;   ///< achieved forward byte rate
  double roofline_gflops_per_s = 0;  ///< attainable at this step's intensity (0 without a machine profile)
  double roofline_percent = 0;       ///< gflops_per_s as a percentage of roofline_gflops_per_s
  std::string roofline_level;        ///< the memory level whose bandwidth forms that roof: the smallest cache
                                     ///< holding the step's bytes, else DRAM ("" without a profile)
  double estimated_time_s = 0;       ///< roofline time: flops / attainable rate (0 without a profile)
  /// Hardware counters per forward pass of this step (cycles, instructions, FP arithmetic events), averaged
  /// over the timed passes; empty where perf_event_open provides none.
  std::vector<std::pair<std::string, Count>> counters;
};

/// One step of the end-to-end program that runs several graph nodes, next to the per-layer steps it replaces.
struct FusionGroup {
  std::string name;                ///< the fused step (its Conv/Gemm/MatMul node)
  std::vector<std::string> nodes;  ///< the nodes it runs, that node first
  double fused_time_s = 0;         ///< median time of the fused step and its reorders (per-step timers)
  double per_layer_time_s = 0;     ///< sum of the per-layer medians of the same nodes and their reorders
  double gain_percent = 0;         ///< 100 * (per_layer_time_s / fused_time_s - 1)
};

/// The end-to-end program measured as a whole (ExecOptions::fuse), next to the per-layer program.
struct EndToEndMeasurement {
  measure::BenchStats total;        ///< whole program, no per-step timers
  measure::BenchStats total_timed;  ///< the same pass with a timer around every step
  double samples_per_s = 0;         ///< batch / total.median_s
  size_t steps = 0;                 ///< executed steps (per-layer program: one per node plus reorders)
  Count buffer_bytes = 0;           ///< bytes held by its buffers (activations shared by liveness)
  double gain_percent = 0;          ///< 100 * (per-layer total / end-to-end total - 1)
  std::vector<FusionGroup> groups;  ///< fused steps, in program order
  std::vector<LayerMeasurement> layers;  ///< every step of the end-to-end program (per-step timers)
  std::vector<std::string> notes;
};

/// Everything `ridge measure` reports.
struct ModelMeasurement {
  std::vector<LayerMeasurement> layers;
  measure::BenchStats total;        ///< end-to-end forward (or training step) time without per-layer timers
  measure::BenchStats total_timed;  ///< the same pass with a timer around every step
  double layers_sum_s = 0;  ///< sum of per-step median times
  double samples_per_s = 0; ///< batch / total.median_s
  int64_t batch = 1;
  int threads = 0;          ///< threads oneDNN ran with
  bool train = false;
  measure::BenchStats update;       ///< --train: SGD update of all parameters
  Count buffer_bytes = 0;   ///< bytes held by the executor's buffers
  Count peak_rss_bytes = 0; ///< process peak resident set (getrusage)
  Count estimated_peak_bytes = 0;  ///< ridge::estimate_memory: inference or training peak
  Count flops = 0;          ///< sum over executed, costed steps
  std::vector<std::string> notes;
  std::optional<EndToEndMeasurement> end_to_end;  ///< with MeasureOptions::end_to_end
};

/// Builds the executor, warms up, and repeats forward passes (or training steps) until the noise is low or
/// the cap is reached, timing every step; with opts.end_to_end then does the same for the fused program and
/// fills `end_to_end`. Never depends on machine speed for correctness.
ModelMeasurement measure_graph(const Graph& g, const MeasureOptions& opts);

/// The note measure_graph() adds when executed steps of `m` ran in reference kernels (reference_kernel()):
/// how many, the slowest by name with time and kernel, and their share of the sum of layer medians; empty when
/// none did. Their times are correct measurements of slow code, not of what an optimised runtime takes.
std::string reference_kernel_note(const ModelMeasurement& m);
/// Fills every row's roofline columns (attainable GFLOP/s at its intensity, percent, roofline time) from a
/// machine profile, at the measurement's thread count.
void apply_roofline(ModelMeasurement& m, const measure::MachineProfile& machine);

// ---- ONNX payloads ---------------------------------------------------------------------------------------

/// Reads the weight payloads (initializers and Constant node tensors) of an .onnx file, converting them to
/// fp32. Initializers whose data is external and missing are skipped (they stay random) and named in `notes`.
/// Throws ridge::Error naming the file when it cannot be parsed.
TensorMap read_onnx_weights(const std::string& path, std::vector<std::string>* notes = nullptr);
/// Reads one ONNX TensorProto file (input_0.pb). The name is the proto's name ("" when absent).
std::pair<std::string, HostTensor> read_tensor_pb(const std::string& path);
/// Writes a TensorProto file (fp32).
void write_tensor_pb(const std::string& path, const std::string& name, const HostTensor& t);

/// Element-wise comparison of an output with its expected value.
struct Comparison {
  bool shape_matches = false;
  bool passed = false;
  Count elements = 0;
  Count mismatches = 0;     ///< elements with |a - e| > atol + rtol * |e| (NaN matches only NaN)
  double max_abs_diff = 0;
  double max_rel_diff = 0;
};
Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double rtol, double atol);

}  // namespace ridge
