// Model stage, performance side: roofline placement, PALEO-style time prediction, data-parallel communication,
// calibration of the platform-percent-of-peak (PPP) factors from measurements, and batch scaling.
// Everything works on plain per-layer numbers (LayerWork) so it is testable without models; layer_work()
// converts ridge::estimate() output. Formulas are documented in docs/model.md.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/cost.hpp"
#include "ridge/count.hpp"
#include "ridge/device.hpp"
#include "ridge/load.hpp"

namespace ridge {

// ---- per-layer work ---------------------------------------------------------------------------------------

/// What one layer asks of the hardware, as plain numbers.
struct LayerWork {
  std::string name;            ///< node name, "layer1.0.conv1"
  std::string op_class;        ///< class used to pick calibrated factors: ridge::op_class ("Conv", "DepthwiseConv", ...)
  Count flops = 0;             ///< forward FLOPs
  Count bytes = 0;             ///< forward bytes moved (read + written)
  Count bytes_written = 0;     ///< the written part of `bytes` (timed at the write factor)
  Count bwd_input_flops = 0;   ///< backward FLOPs for the input gradient
  Count bwd_weight_flops = 0;  ///< backward FLOPs for the weight gradient
  Count params = 0;            ///< trainable parameters (the weight update touches them)
  int kernels = 1;             ///< forward kernel launches (0 for views that move nothing)
  bool needs_backward = false; ///< a gradient flows through it (also implied by backward FLOPs > 0)
  bool costed = true;          ///< false: ridge cannot cost this layer (never counted as zero silently)
  std::string reason;          ///< why not costed
  int64_t gemm_m = 0;          ///< (implicit-)GEMM shape M x N x K of a conv or matmul (gemm_shape_of); 0: none
  int64_t gemm_n = 0;          ///< GEMM columns (conv: Cout)
  int64_t gemm_k = 0;          ///< GEMM inner dimension (conv: Cin / groups x kernel taps)
  bool depthwise = false;      ///< a depthwise convolution (run as a memory-bound kernel under a GEMM-shape table)
};

/// The GEMM a layer runs as: conv as implicit GEMM (M = N x Ho x Wo, N = Cout, K = Cin / groups x kh x kw), Linear
/// (rows x out x in) and MatMul (batch x M, N, K); fills w.gemm_m/n/k and w.depthwise, leaves them 0 otherwise.
void set_gemm_shape(LayerWork& w, const Graph& g, const Node& n);

/// Per-layer work of a costed graph: one entry per node except metadata-only ones (View/Source families);
/// uncosted nodes are kept with costed = false and their reason.
std::vector<LayerWork> layer_work(const Graph& g, const ModelCost& costs);

/// A model's per-layer work at one batch size and precision, from load_model() and estimate().
struct ModelWork {
  std::string name;                 ///< graph name ("resnet50" or the file stem)
  std::vector<LayerWork> layers;
  Cost total;                       ///< sum over costed nodes
  Count param_bytes = 0;            ///< trainable parameter bytes = gradient bytes for data-parallel training
  int bytes_per_element = 4;        ///< element size at the precision
  std::vector<std::string> notes;   ///< uncosted ops (excluded from totals) and importer notes
  Incompleteness incomplete;        ///< the nodes not costed (incompleteness())
  MemoryEstimate memory;            ///< estimate_memory() under the optimizer and storage given to load_model_work
  int64_t batch = 1;                ///< samples the graph holds: the load options' batch, or the one a file fixes
};
/// Loads MODEL (zoo name, .onnx or an in-memory model) with `opts` (batch, input sizes, element type, training)
/// and costs it; its memory with `optimizer` and parameters stored as `storage` (all zero: the graph's types).
ModelWork load_model_work(const ModelSource& model, const LoadOptions& opts, Optimizer optimizer = Optimizer::SGD,
                          const ParamStorage& storage = {});

/// What limits a layer (or a whole model).
enum class Bound : uint8_t { Compute, Memory, Overhead, None };
/// "compute", "memory", "overhead" (kernel launches dominate), "none" (no work).
std::string_view bound_name(Bound b);

// ---- roofline ---------------------------------------------------------------------------------------------

/// Where a piece of work sits on a device's roofline.
struct RooflinePoint {
  double intensity_flop_per_byte = 0;  ///< FLOPs / bytes (infinite when no bytes move)
  double attainable_flop_per_s = 0;    ///< min(peak, intensity x bandwidth)
  double ridge_flop_per_byte = 0;      ///< peak / bandwidth: where the roof bends
  double time_lower_bound_s = 0;       ///< max(flops / peak, bytes / bandwidth)
  Bound bound = Bound::None;           ///< memory below the ridge point, compute at or above it
};
/// The ridge point peak / bandwidth in FLOP/byte.
double ridge_point(double peak_flop_per_s, double bandwidth_bytes_per_s);
/// Places `flops` over `bytes` on the roofline of (peak, bandwidth).
RooflinePoint roofline_point(Count flops, Count bytes, double peak_flop_per_s, double bandwidth_bytes_per_s);

// ---- PALEO-style prediction -------------------------------------------------------------------------------

/// How the compute and memory terms of a layer combine: PALEO adds them, a roofline overlaps them.
enum class Combine : uint8_t { Sum, Max };
std::string_view combine_name(Combine c);
std::optional<Combine> parse_combine(std::string_view name);

/// Efficiency factors of one op class: time = flops / (ppp x peak) (+ or max) memory time, plus the per-kernel
/// overhead, where memory time = bytes read / (ppp_mem x bandwidth) + bytes written / (ppp_write x bandwidth).
/// A factor of +infinity means the term was fitted to zero.
struct Efficiency {
  double ppp = 1.0;                       ///< fraction of peak FLOP/s achieved
  double ppp_mem = 1.0;                   ///< fraction of peak bandwidth achieved (reads; also writes when ppp_write is unset)
  std::optional<double> overhead_s;       ///< per-kernel overhead; unset: the device's kernel_launch_s
  int samples = 0;                        ///< measurements it was fitted from (0: set by hand)
  std::optional<double> ppp_write;        ///< fraction of peak bandwidth achieved by writes; unset: ppp_mem
  std::optional<Combine> combine;         ///< how this class's compute and memory terms combine; unset: the prediction's
  /// ppp is a fraction of the vector (fp32) pipe's peak, not of the precision's: the class's measured kernels did
  /// their FLOPs on the vector units (BatchNorm, elementwise), so a layer's FLOPs are timed there too
  /// (PredictOptions::pipe_peaks.fp32). Set by calibrate() from FLOPs counted per pipe; JSON "flops_pipe": "vector".
  bool vector_pipe = false;
};

/// Tensor-core GEMM efficiency (PPP) as a function of GEMM shape, fitted on measured GEMM times: a grid over
/// x = log2(M x N) (output elements: the parallelism) and y = log2(K) (the inner dimension), interpolated
/// bilinearly between grid nodes and clamped at its edges (docs/model.md, "GEMM-shape calibration").
struct GemmShapeTable {
  std::vector<double> log2_mn;        ///< grid nodes along x, ascending
  std::vector<double> log2_k;         ///< grid nodes along y, ascending
  std::vector<double> ppp;            ///< PPP at each node, x-major: ppp[i * log2_k.size() + j]
  std::vector<int> samples;           ///< measurements fitted per node (0: filled from the nearest fitted node)
  int64_t memory_bound_k = 16;        ///< convs with K at most this (and depthwise convs) are memory-bound kernels
  Combine combine = Combine::Max;     ///< GEMM kernels overlap loads with math: max(compute, memory) + overhead
  std::string memory_class = "elementwise";  ///< whose factors time those memory-bound convs

  /// The PPP at GEMM shape M x N x K (bilinear in (log2(M N), log2 K), clamped to the grid).
  double lookup(int64_t m, int64_t n, int64_t k) const;
  /// lookup() for a GEMM whose K lies beyond the grid, run split-K (as weight-gradient kernels split the batch and
  /// pixels): the PPP at (M N s, K / s), s the power of two that brings K down to the grid's last node.
  double lookup_split_k(int64_t m, int64_t n, int64_t k) const;
  bool empty() const { return ppp.empty(); }
};

/// PPP factors per op class with a fallback, as fitted by calibrate() or given by --ppp/--ppp-mem.
struct Calibration {
  Efficiency fallback;                          ///< for classes without their own factors
  std::map<std::string, Efficiency> by_class;   ///< "Conv" -> factors
  std::string device;                           ///< device id the factors were fitted on ("" for hand-set)
  std::string precision = "fp32";               ///< precision of the peak used while fitting
  Combine combine = Combine::Sum;               ///< how the fitted model combined its terms

  std::string device_family;                   ///< device family it applies to ("a100"; "" = the device's)
  std::optional<double> leave_one_out_error;    ///< median leave-one-model-out error of the fit, when measured
  std::string file;                             ///< where it was read from ("" when built in code)
  std::string scope;                            ///< what it was fitted for: "cnn" (predict), "llm" (serve, train),
                                                ///< "" (not stated: any)
  GemmShapeTable gemm_shapes;                   ///< shape-dependent PPP of the "conv" and "gemm" classes (may be empty)
  /// The fastest FLOP/s among the measurements fitted (flops / time of the best one; unset for hand-set factors
  /// and files fitted before it was recorded): compared with the device's measured ceiling by cap_at_achieved_flops.
  std::optional<double> best_measured_flop_per_s;
  /// The same as a fraction of the peak the fit was made against: what cap_at_achieved_flops compares with a device's
  /// measured ceiling, so that boards of one family with other peaks (H100 SXM and PCIe) compare like with like.
  std::optional<double> best_measured_of_peak;
  std::string ceiling_note;                     ///< what cap_at_achieved_flops lowered ("" when nothing)

  /// The factors fitted for `op_class`: its own, else those of its kernel family (kernel_family_of_op_class),
  /// else nullptr (the fallback applies).
  const Efficiency* find(const std::string& op_class) const;
  /// The factors for `op_class` (find(), else the fallback).
  const Efficiency& for_class(const std::string& op_class) const;
  /// True when fitted on measurements (some factors have samples), false for hand-set or default factors.
  bool fitted() const;
  /// The fallback and every class's factors, to adjust them all.
  std::vector<Efficiency*> all_factors();
  /// The factors for one layer: for_class(), except that with a GEMM-shape table a layer of kernel family conv or
  /// gemm with a known shape takes the table's PPP at its shape, and depthwise or K <= memory_bound_k convs take
  /// the memory class's factors. `label` (when given) receives whose factors applied.
  Efficiency for_layer(const LayerWork& w, std::string* label = nullptr) const;
  /// The backward GEMMs of a layer of forward shape M x N x K, each at its own shape under the GEMM-shape table:
  /// the input gradient (M x K, inner N) and the weight gradient (K x N, inner M: the batch and pixels, large
  /// for convolutions, looked up split-K). Nothing when the table does not apply to the layer (for_layer then
  /// covers backward too).
  struct BackwardGemms {
    Efficiency input_gradient, weight_gradient;
  };
  std::optional<BackwardGemms> backward_gemms(const LayerWork& w) const;
};

/// Fits a GemmShapeTable on measured GEMMs (m, n, k, flops, bytes, time) under the max model: with `gemm`'s ppp_mem
/// and overhead, the GEMMs whose memory term explains less than 80 % of (time - overhead) are compute-bound, and
/// per grid node (log2 M N and log2 K rounded) their PPP is the least-squares (relative) solution of
/// flops / (ppp x peak) = time - overhead; nodes with fewer than 3 such GEMMs take the nearest fitted node.
struct GemmTiming {
  int64_t m = 0, n = 0, k = 0;
  Count flops = 0, bytes = 0;
  double time_s = 0;
};
GemmShapeTable fit_gemm_shape_table(const std::vector<GemmTiming>& gemms, const Efficiency& gemm, double peak_flop_per_s,
                                    double bandwidth_bytes_per_s);

// ---- one table: prediction op classes <-> GPU kernel families ---------------------------------------------

/// The calibration class a ridge op class (ridge::op_class: "Conv", "Linear", ...) shares with GPU kernels:
/// "conv", "gemm", "normalization", "elementwise", "pooling", "softmax", "reduction"; "" when none.
std::string_view kernel_family_of_op_class(std::string_view op_class);
/// The calibration class of an ingested kernel family (ridge ingest: "conv-implicit-gemm", "gemm", ...): every
/// conv-* family is "conv"; families that are no calibration class are returned unchanged.
std::string calibration_class_of_kernel_family(std::string_view family);
/// Every (op class, kernel family) row of that table.
const std::vector<std::pair<std::string_view, std::string_view>>& op_class_kernel_families();

// ---- trust: which calibration applies, refused mismatches, sanity flags ----------------------------------

/// A device's family: its id up to the first '-' ("a100-sxm4-40gb" -> "a100", "v100-pcie" -> "v100").
std::string device_family(const std::string& device_id);
/// Whether a calibration read from a folder is the one wanted (its device_family is filled in from its device).
using CalibrationMatch = std::function<bool(const Calibration&)>;
/// The first calibration (format ridge-calibration; other formats are skipped) among the *.json files of `dir`,
/// in name order, that `applies` accepts; nullopt when none does or `dir` is no folder. Shared by
/// builtin_calibration and builtin_llm_calibration.
std::optional<Calibration> find_calibration(const std::string& dir, const CalibrationMatch& applies);
/// Every calibration among the *.json files of `dir` that `applies` accepts, in name order (one read of the
/// folder; find_calibration is its first).
std::vector<Calibration> find_calibrations(const std::string& dir, const CalibrationMatch& applies);
/// The shipped calibration (data/calibrations/*.json, format ridge-calibration) for `device`'s family at the
/// peak precision `p` whose leave-one-model-out error is at most 50 % (or not measured); of several, the first
/// with a GEMM-shape table, else the first in name order; nullopt when none applies.
std::optional<Calibration> builtin_calibration(const std::string& device_id, Precision p);
/// Checks that `cal` applies to `device_id` at precision `p`: another device family or precision is a
/// ridge::Error naming both sides and ending in `hint` ("... (use --force to apply it anyway)"); with `force` the
/// mismatch is returned as a line for the output instead. Hand-set calibrations (no device) always apply. A
/// calibration whose scope is stated and is not `scope` (when given) is refused the same way.
std::vector<std::string> check_calibration_applies(const Calibration& cal, const std::string& device_id, Precision p,
                                                   bool force,
                                                   std::string_view hint = "use --force to apply it anyway",
                                                   std::string_view scope = "");
/// Brings a calibration fitted on measurements that ran faster than the device sustains down to it: when
/// cal.best_measured_of_peak is above the device's measured ceiling at precision `p` as a fraction of its peak (its
/// achieved.flops; fp16 and bf16 stand in for each other), every tensor-pipe compute factor (ppp of each class, the
/// fallback and the GEMM-shape table; not classes timed on the vector pipe, nor factors fitted to infinity) is
/// scaled by ceiling / best: short per-operator profiles can run at burst clocks that a long run does not hold, and the ratio of the
/// two best matmuls is that clock ratio (docs/model.md, "Measured ceilings"). Nothing changes for calibrations
/// that are not fitted, record no best rate, or stayed below the ceiling. Returns, and records in cal.ceiling_note,
/// one line saying what was scaled; "" when nothing was.
std::string cap_at_achieved_flops(Calibration& cal, const Device& d, Precision p);
/// Beside an uncalibrated upper bound: how far below the data-sheet peak at `p` the best matmul measured on `d` runs
/// (Device::achieved_fraction), so that the bound's distance from what the GPU sustains is stated where it is shown;
/// "" when the device file has no measured ceiling at `p`.
std::string measured_ceiling_note(const Device& d, Precision p);

/// What a measurement or profile is expected to be of; empty fields / 0 are not checked.
struct RunIdentity {
  std::string model;
  std::string device;
  int64_t batch = 0;
  std::string precision;
};
/// Checks a measured run against what it is used for: another model, device (family), batch or precision is a
/// ridge::Error naming the file and both sides; with `force` the mismatches come back as lines for the output.
/// Fields the run does not record are not checked.
std::vector<std::string> check_run_matches(const std::string& file, const RunIdentity& run, const RunIdentity& expected,
                                           bool force);

/// What a profile's file name says it is of (profilers record neither the model nor the batch): the longest zoo
/// model name, a GPU family (a100, v100, h100, ...: a device id prefix) and "bsN"/"batchN" found as words of the
/// stem ("01_ncu_text_nyu_A100_resnet18_bs10_train" -> resnet18, a100, 10). Unknown parts stay empty / 0.
RunIdentity identity_from_file_name(const std::string& path);
/// The model a model file is of: its file name up to the first dot (resnet18.ext_emptybin.onnx -> resnet18).
std::string model_name_of_file(const std::string& path);

/// Sanity flags (short names shown beside a number): "above-roof" when achieved FLOP/s exceed the attainable
/// min(peak, AI x bandwidth) by more than 5 %.
std::vector<std::string> roof_flags(Count flops, Count bytes, double time_s, double peak_flop_per_s,
                                    double bandwidth_bytes_per_s);
/// "busy-machine" when the spread of repeated timings ((max - min) / median) is above 50 %.
std::vector<std::string> timing_flags(double median_s, double min_s, double max_s);
/// "2-thread-peak-below-1-thread" when a two-thread peak is below the one-thread peak.
std::vector<std::string> thread_peak_flags(double one_thread, double two_threads);
/// "calibration-loo-error>50%" when the calibration's leave-one-out error is above 50 %, and "above-roof:CLASS" for
/// each fitted class whose PPP or PPP memory exceeds 1 (its kernels measured faster than the roof).
std::vector<std::string> calibration_flags(const Calibration& cal);

/// FLOPs a profiled kernel ran on each GPU pipe, as ncu counts them per instruction (ridge ingest's
/// flops_tensor, flops_fp32, flops_fp16, flops_fp64).
struct PipeFlops {
  Count tensor = 0;  ///< tensor-core FLOPs
  Count fp32 = 0;    ///< fp32 vector FLOPs (FADD, FMUL, FFMA)
  Count fp16 = 0;    ///< fp16 vector FLOPs (HADD, HMUL, HFMA)
  Count fp64 = 0;    ///< fp64 vector FLOPs (DADD, DMUL, DFMA)
};
/// Peak FLOP/s of each pipe, to time measured FLOPs at the peak of the pipe they ran on (0: unknown).
struct PipePeaks {
  double tensor = 0;  ///< the tensor cores at the prediction's precision (fp16 when that precision is fp32 or fp64)
  double fp32 = 0;    ///< the fp32 vector units; fp16 vector FLOPs are priced here too (a lower bound on their rate)
  double fp64 = 0;    ///< the fp64 vector units
};

/// The hardware numbers a prediction uses.
struct PredictOptions {
  double peak_flop_per_s = 0;
  PipePeaks pipe_peaks;            ///< per-pipe peaks for measured samples that split their FLOPs by pipe
  double bandwidth_bytes_per_s = 0;
  double kernel_launch_s = 0;      ///< default per-kernel overhead (Efficiency::overhead_s overrides it)
  Combine combine = Combine::Sum;
  Calibration calibration;         ///< PPP factors (default: 1 and 1)
  bool training = false;           ///< add backward and the weight update
  int bytes_per_param = 4;         ///< parameter element size for the weight update
  Optimizer optimizer = Optimizer::SGD;  ///< the weight update's step (optimizer_step)
  int64_t batch = 1;               ///< samples per iteration (for samples/s)
  /// The device's last-level cache (L2) in bytes; with a fitted calibration, a phase that moves more than it holds
  /// takes at least (bytes - cache) / DRAM bandwidth, whatever memory efficiency the fit found (factors above 1 come
  /// from kernels whose operands stayed in the L2); 0: no floor. Set by predict_options from a GPU's device file.
  Count cache_bytes = 0;
};

/// Where a prediction's numbers come from: the device's peak and bandwidth, its calibration, and overrides.
struct PredictSettings {
  Precision precision = Precision::FP32;  ///< whose peak the compute term uses
  std::string level = "dram";             ///< memory level whose bandwidth the memory term uses
  std::optional<Combine> combine;         ///< unset: the fitted calibration's; with none fitted, max (the bound)
  std::string calibration;                ///< "": the shipped one for the device family and precision (none when
                                          ///< ppp or ppp_mem is given); "none": uncalibrated; else a calibration file
  bool force = false;                     ///< apply a calibration file of another device family or precision anyway
  std::optional<double> ppp;              ///< replaces the calibration's fallback PPP
  std::optional<double> ppp_mem;          ///< replaces the calibration's fallback PPP memory (and its write factor)
  std::optional<double> kernel_launch_s;  ///< per-kernel overhead; unset: the device's when a fitted calibration
                                          ///< applies, else 0 (the bound)
  bool training = false;                  ///< add backward and the weight update
  int bytes_per_param = 4;                ///< parameter element size for the weight update
  Optimizer optimizer = Optimizer::SGD;   ///< the weight update's step
  int64_t batch = 1;                      ///< samples per iteration
};
/// The one way PredictOptions are built from a device (predict, sweep, calibrate, report). With no fitted
/// calibration and nothing set by hand, the options are the roofline bound: PPP 1, max(compute, memory) per
/// kernel, no launch overhead (time_kind() is then UpperBound). Throws ridge::Error for
/// a precision or memory level the device lacks, an unreadable calibration file, or one of another device family
/// or precision without `force`; with `force` such mismatches are appended to `forced` (when given) as lines.
PredictOptions predict_options(const Device& d, const PredictSettings& s, std::vector<std::string>* forced = nullptr);

/// What a prediction's times are, decided by the factors that made them (time_kind()).
enum class TimeKind : uint8_t {
  Calibrated,  ///< factors fitted on measurements applied
  HandSet,     ///< no fitted factors, but PPP, combine or launch overhead set by hand: an estimate, not a bound
  UpperBound,  ///< peak rates, compute and memory overlapped (max), no launch overhead: a bound on speed (the
               ///< times are lower bounds, samples/s an upper bound, at the chosen memory level's bandwidth)
};
/// "calibrated", "estimate (hand-set factors, uncalibrated)" or "upper bound (uncalibrated)": the label printed
/// beside every predicted number.
std::string_view time_kind_label(TimeKind k);
/// The JSON value of `time_kind`: "calibrated", "hand_set" or "upper_bound".
std::string_view time_kind_key(TimeKind k);
/// The kind of the times `opt` gives: Calibrated when its calibration was fitted, UpperBound when every factor is
/// the bound's (PPP 1 for compute, reads and writes, no per-class factors or shape table, max, no overhead),
/// else HandSet.
TimeKind time_kind(const PredictOptions& opt);

/// Time of one phase (forward or backward) of one layer.
struct PhaseTime {
  double compute_s = 0;   ///< flops / (ppp x peak)
  double memory_s = 0;    ///< bytes / (ppp_mem x bandwidth)
  double overhead_s = 0;  ///< kernels x per-kernel overhead
  double time_s = 0;      ///< combine(compute, memory) + overhead
  Bound bound = Bound::None;
  Count bytes = 0;        ///< bytes the phase is charged for (read + written)
};
/// Time of `flops` and `bytes` (of which `bytes_written` are writes) in `kernels` launches with factors `eff`;
/// FLOPs at the vector pipe's peak where `eff.vector_pipe` and opt.pipe_peaks.fp32 is known, else at opt's peak.
PhaseTime phase_time(Count flops, Count bytes, Count bytes_written, int kernels, const Efficiency& eff,
                     const PredictOptions& opt);

/// Predicted time of one layer.
struct LayerPrediction {
  std::string name;
  std::string op_class;
  std::string calibration;  ///< whose factors applied: the class ("Conv", "conv"), "fallback", or "uncalibrated"
  PhaseTime forward;
  PhaseTime backward;      ///< zero unless training
  double time_s = 0;       ///< forward + backward
  Bound bound = Bound::None;
  bool costed = true;
  std::string reason;
};

/// Predicted time of one iteration of a whole model.
struct Prediction {
  std::vector<LayerPrediction> layers;
  double forward_s = 0;
  double backward_s = 0;
  double update_s = 0;        ///< weight update (SGD: read param + grad, write param), one fused kernel
  double total_time_s = 0;    ///< forward + backward + update
  double samples_per_s = 0;   ///< batch / total_time_s
  int uncosted_layers = 0;    ///< layers ridge could not cost (excluded from the times; reported)
  bool calibrated = false;    ///< factors fitted on measurements applied (kind == TimeKind::Calibrated)
  TimeKind kind = TimeKind::UpperBound;  ///< what the times are (time_kind() of the options that made them)
};
/// PALEO-style prediction. In training, a layer with a gradient runs one backward kernel per gradient it computes
/// (input, weight; at least one) moving about twice the forward bytes (see docs/model.md).
Prediction predict(const std::vector<LayerWork>& layers, const PredictOptions& opt);

// ---- data-parallel training: clusters, all-reduce, gradient buckets ---------------------------------------

/// A cluster of `nodes` nodes with `gpus_per_node` devices each. `intra` joins the devices of a node (bandwidth per
/// device and direction); `inter` joins nodes (bandwidth per NIC and direction, `nics_per_node` NICs per node).
struct ClusterTopology {
  int gpus_per_node = 1;
  int nodes = 1;
  Interconnect intra;
  Interconnect inter;      ///< unused when nodes == 1
  int nics_per_node = 1;

  /// gpus_per_node x nodes.
  int devices() const { return gpus_per_node * nodes; }
  /// Network bandwidth out of one node per direction: nics_per_node x inter bandwidth.
  double node_network_bytes_per_s() const { return nics_per_node * inter.bandwidth_bytes_per_s; }
};

/// What a user asks for on the command line; unset fields come from the device's "node" block.
struct ClusterRequest {
  int devices = 1;                    ///< --devices-count
  std::optional<int> gpus_per_node;   ///< --gpus-per-node
  std::string intra_node;             ///< --intra-node / --interconnect: interconnect file or device link name
  std::string inter_node;             ///< --inter-node
  std::optional<int> nics_per_node;   ///< --nics-per-node
};
/// Builds the topology: GPUs per node from the request, else the device's (capped at `devices`), else all in one
/// node. Throws ridge::UsageError for impossible shapes (gpus per node above the count or not dividing it) and
/// ridge::Error naming the flag for unknown links ("no such link") or a missing default.
ClusterTopology cluster_topology(const Device& d, const std::vector<InterconnectSpec>& links, const ClusterRequest& req);
/// "8 nodes x 8 GPUs, nvlink3 inside, 8 x ib-hdr between" (one node: "1 node x 8 GPUs over nvlink3").
std::string topology_text(const ClusterTopology& t);

/// All-reduce algorithm: `Auto` takes the fastest of ring, tree and hierarchical, as NCCL's tuner does.
enum class AllReduce : uint8_t { Auto, Ring, Tree, Hierarchical, ParameterServer };
std::string_view allreduce_name(AllReduce a);
/// Parses "auto", "ring", "tree", "hierarchical" (also "2d"), "ps"; nullopt if unknown.
std::optional<AllReduce> parse_allreduce(std::string_view name);

/// One all-reduce: the algorithm used (never Auto) and its time split into latency and bandwidth terms.
struct AllReduceTime {
  AllReduce algorithm = AllReduce::Ring;
  double latency_s = 0;
  double bandwidth_s = 0;
  double time_s = 0;  ///< latency_s + bandwidth_s
};
/// Time to all-reduce `bytes` on `topo` (formulas in docs/model.md; N devices, G per node, M nodes):
/// ring 2(N-1) a + 2(N-1)/N S / min(B_intra, B_node); tree 2(ceil(log2 M) a_inter + (G-1) a_intra) + 2 S / min(..);
/// hierarchical = intra reduce-scatter + inter-node all-reduce of S/G per GPU (ring or tree) + intra all-gather;
/// parameter server 2 (a + (N-1) S / B). Zero for one device.
AllReduceTime allreduce_time(AllReduce algo, Count bytes, const ClusterTopology& topo);

/// A ring all-reduce of `bytes` across `devices` joined by one `link` (one level: tensor-parallel groups inside a
/// node, or a flat group over one network): allreduce_time(Ring, ...) on a one-node topology.
double ring_allreduce_time_s(Count bytes, int devices, const Interconnect& link);
/// An all-to-all of `bytes` per device across `devices` joined by one `link`, as a pairwise exchange (MoE dispatch
/// and combine under expert parallelism): (N - 1) latency + (N - 1) / N bytes / bandwidth.
double all_to_all_time_s(double bytes, int devices, const Interconnect& link);
/// The link GPUs of `d` talk over: inside a node NVLink (else Infinity Fabric, else PCIe), between nodes the network
/// (else PCIe). Throws ridge::Error when the device file names none.
const Interconnect& gpu_link(const Device& d, bool inside_node);

/// NCCL's bus bandwidth of an all-reduce: algbw x 2(n-1)/n, with algbw = bytes / time (nccl-tests PERFORMANCE.md).
double allreduce_bus_bandwidth(Count bytes, double time_s, int devices);

/// How gradients are grouped and exchanged (PyTorch DistributedDataParallel's defaults).
struct BucketOptions {
  Count bucket_bytes = Count(25) << 20;       ///< bucket_cap_mb = 25 MiB
  Count first_bucket_bytes = Count(1) << 20;  ///< DDP's first bucket (the last layers) closes at 1 MiB
  bool overlap = true;                        ///< false: every all-reduce waits for the end of backward
  AllReduce algorithm = AllReduce::Auto;
};
/// One layer's backward as data parallelism sees it: how long it takes and how many gradient bytes it produces.
struct BackwardStep {
  std::string name;
  double backward_s = 0;
  Count gradient_bytes = 0;
};
/// The backward steps of a training prediction, in forward order: gradient bytes = params x `bytes_per_gradient`.
std::vector<BackwardStep> backward_steps(const Prediction& p, const std::vector<LayerWork>& work, int bytes_per_gradient);

/// One gradient bucket; times count from the start of backward.
struct GradientBucket {
  Count bytes = 0;
  int layers = 0;               ///< layers whose gradients it holds
  double ready_s = 0;           ///< when backward has produced its last gradient
  double start_s = 0;           ///< max(ready, end of the previous bucket's all-reduce): one communication stream
  AllReduceTime allreduce;
  double end_s = 0;             ///< start + all-reduce time
};

/// Data-parallel training on a cluster: each device runs the per-device batch; bucket all-reduces overlap with
/// the rest of backward; what is left after backward ends is exposed.
struct DataParallel {
  ClusterTopology topology;
  int devices = 1;
  AllReduce algorithm = AllReduce::Ring;  ///< the algorithm of the largest bucket
  double compute_s = 0;        ///< one device's iteration (forward + backward + update)
  double allreduce_s = 0;      ///< sum of the buckets' all-reduce times
  double exposed_s = 0;        ///< communication not hidden behind backward
  double iteration_s = 0;      ///< compute + exposed
  double samples_per_s = 0;    ///< devices x batch / iteration
  double efficiency = 1;       ///< single-device time / per-device iteration time
  std::vector<GradientBucket> buckets;  ///< in the order they are all-reduced (last layers first)
};
/// Data-parallel training from a single-device training prediction and its backward steps (forward order).
DataParallel data_parallel(const Prediction& single, const std::vector<BackwardStep>& steps, int64_t batch_per_device,
                           const ClusterTopology& topo, const BucketOptions& opt = {});

// ---- measurements and calibration -------------------------------------------------------------------------

/// One measured layer or kernel.
struct MeasuredRow {
  std::string name;
  std::string op;                 ///< op type or family as the measurement names it ("" when unknown)
  std::optional<double> time_s;   ///< absent when not timed (ncu counters without durations, not executed)
  std::optional<Count> flops;     ///< measured or estimated FLOPs when the file has them
  std::optional<Count> bytes;     ///< measured (dram) or estimated bytes when the file has them
  std::optional<Count> bytes_written;  ///< the written part of `bytes` when the file splits it
  std::string op_class;           ///< "op_class" field (ridge measure) when present
  std::vector<std::string> flags; ///< sanity flags: "busy-machine" when min/max timings spread > 50 % of the median
  std::optional<PipeFlops> pipe_flops;  ///< FLOPs per pipe when the row splits them (ridge ingest's kernels)
};
/// A measurement file: `ridge measure --format json` (`layers[]`) or `ridge ingest --format json` (`kernels[]`).
struct MeasuredRun {
  std::string file;
  std::string model;              ///< "model" field, else the file stem
  std::string recorded_model;     ///< the model the file records ("model" field, else a zoo name in an ingested
                                  ///< profile's source file names); "": not recorded
  std::string device;             ///< "device" field when present (else the rows' common device, else the GPU
                                  ///< an ingested profile's source file names name)
  int64_t batch = 0;              ///< "batch" field when present (else an ingested profile's "bs10" in its source
                                  ///< file names; 0: not recorded)
  std::string precision;          ///< "precision" (or "dtype") field when present
  std::vector<MeasuredRow> layers;
};
/// Checks a measurement against the model (its loaded name or the spec's stem), device and batch it is used for
/// (check_run_matches; a CPU device takes any measurement of "cpu" or "machine"). Throws ridge::Error naming the
/// file and both sides; with `force` the mismatches come back as "forced: ..." lines for the output.
std::vector<std::string> check_measurement_matches(const MeasuredRun& m, const std::string& model_name,
                                                   const std::string& model_spec, const Device& d, int64_t batch,
                                                   bool force);
/// Parses a measurement document (fields in docs/model.md); `origin` prefixes errors.
MeasuredRun parse_measurement(const std::string& text, const std::string& origin);
/// Reads a measurement file. Throws ridge::Error naming the file and the field.
MeasuredRun read_measurement(const std::string& path);
/// A measurement's totals, each only when every row has it, and its rows by layer name.
struct MeasuredTotals {
  std::optional<double> time_s;
  std::optional<Count> flops;
  std::optional<Count> bytes;
  std::map<std::string, const MeasuredRow*> by_layer;  ///< points into the MeasuredRun it was made from
};
/// Totals of `m` (see MeasuredTotals).
MeasuredTotals measured_totals(const MeasuredRun& m);
/// The first of `runs` that belongs to a model (its loaded name `model_name` or the spec `model_spec` it was
/// loaded from; any model when `only_model`) on device `d` (any run naming no device, or any when `only_device`);
/// nullopt when none does.
std::optional<size_t> match_measurement(const std::vector<MeasuredRun>& runs, const std::string& model_name,
                                        const std::string& model_spec, bool only_model, const Device& d,
                                        bool only_device);

/// One calibration sample: a layer's work and its measured time.
struct Sample {
  std::string model;
  std::string layer;
  std::string op_class;
  Count flops = 0;
  Count bytes = 0;
  double time_s = 0;
  std::optional<Count> bytes_written;  ///< unknown: all of `bytes` is timed as reads
  int kernels = 1;                      ///< kernel launches the time covers (each pays the per-kernel overhead)
  std::optional<PipeFlops> pipe_flops;  ///< FLOPs per pipe: timed at each pipe's peak (see peak_equivalent_flops)
};
/// The FLOPs that take as long at `peak` as `s`'s FLOPs on the pipes they ran on: each pipe's FLOPs scaled by
/// peak / that pipe's peak (tensor, fp32 and fp16 vector, fp64). `s.flops` when the sample does not split its
/// FLOPs by pipe or a pipe it used has no known peak. So a fitted PPP is a fraction of the peak of the pipe the
/// kernels ran on: an fp32 SGEMM's efficiency carries over to tensor-core GEMMs (docs/model.md).
Count peak_equivalent_flops(const Sample& s, double peak, const PipePeaks& pipes);
/// Samples from measurements: rows with a positive time and known FLOPs; the op class is the row's
/// `op_class` when given, else the family of its op when ridge knows it, else the op text. Layers without
/// FLOPs are skipped and counted.
std::vector<Sample> samples_from(const std::vector<MeasuredRun>& ms, int* skipped = nullptr);

/// Fits per-class factors (and a fallback from all samples) by non-negative least squares,
/// time ~ flops/(ppp peak) + bytes read/(ppp_mem bw) + bytes written/(ppp_write bw) + overhead (the write term
/// only where samples split their bytes), with an error symmetric in predicted/measured
/// (iteratively reweighted; see docs/model.md). Classes with fewer than `min_samples` samples use
/// the fallback.
/// Samples that split their FLOPs by pipe are timed at each pipe's peak in `pipes` (peak_equivalent_flops).
Calibration calibrate(const std::vector<Sample>& samples, double peak_flop_per_s, double bandwidth_bytes_per_s,
                      int min_samples = 3, const PipePeaks& pipes = {});
/// Fits one class's factors under the max model, time = max(flops/(ppp peak), bytes/(ppp_mem bw)) + overhead (the
/// roofline's overlap of loads and math, as GEMM kernels run), minimising the same symmetric error as calibrate()
/// (sum of (sqrt(p) - 1/sqrt(p))^2, p = predicted/measured) by NLopt's Nelder-Mead from `start` (the class's sum fit).
/// Returns factors with combine = Max and the error they leave; `start`'s error under the sum model is
/// `sum_model_loss` for comparison. Samples without time are ignored.
struct MaxFit {
  Efficiency factors;
  double loss = 0;            ///< symmetric error of the max model on the samples
  double sum_model_loss = 0;  ///< the same error of `start` under the sum model
};
MaxFit fit_max_model(const std::vector<Sample>& samples, double peak_flop_per_s, double bandwidth_bytes_per_s,
                     const Efficiency& start);
/// Predicted time of one sample under `cal` (sum combine, its kernels; per-pipe FLOPs at hw.pipe_peaks).
double predict_sample(const Sample& s, const Calibration& cal, const PredictOptions& hw);

/// Median and 90th percentile of |predicted - measured| / measured.
struct ErrorStats {
  double median = 0;
  double p90 = 0;
  size_t count = 0;
};
ErrorStats error_stats(std::vector<double> relative_errors);

/// Errors of one model when predicted by factors fitted without it.
struct ModelCheck {
  std::string model;
  ErrorStats layer_error;          ///< per layer
  double end_to_end_error = 0;     ///< |sum predicted - sum measured| / sum measured
};
/// Prediction errors before (uncalibrated `baseline`) and after calibration, and leave-one-model-out checks.
struct CalibrationCheck {
  ErrorStats before;
  ErrorStats after;                 ///< in-sample
  std::vector<ModelCheck> leave_one_model_out;  ///< empty with fewer than two models
};
CalibrationCheck check_calibration(const std::vector<Sample>& samples, const PredictOptions& hw,
                                   const Calibration& baseline, int min_samples = 3);

/// Calibration file (JSON, see docs/model.md). Infinite ppp is written as null.
nlohmann::json calibration_to_json(const Calibration& c);
/// Parses a calibration file's JSON; `origin` prefixes errors.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& origin);
/// Reads a calibration file. Throws ridge::Error naming the file.
Calibration read_calibration(const std::string& path);

// ---- all-reduce calibration on measured NCCL times ----------------------------------------------------------

/// One measured all-reduce (Vidur's network profiles: ../shared/reference/measured/vidur/*_all_reduce.csv).
struct AllReduceSample {
  int workers = 0;           ///< devices taking part
  int devices_per_node = 0;  ///< of which on one node
  Count bytes = 0;           ///< message size
  double time_s = 0;         ///< median time
};
/// Reads a Vidur all_reduce.csv (columns num_workers, devices_per_node, size in bytes,
/// time_stats.all_reduce.median in ms). Throws ridge::Error naming the file, line and column.
std::vector<AllReduceSample> read_allreduce_csv(const std::string& path);

/// Latency and bus bandwidth of one configuration, fitted to t = 2(n-1) a + 2(n-1)/n S / busbw.
struct AllReduceFit {
  std::string device;             ///< ridge device id the measurements ran on
  int workers = 0;
  int devices_per_node = 0;
  double latency_s = 0;           ///< a: per ring step
  double bus_bandwidth_bytes_per_s = 0;
  int samples = 0;
  ErrorStats in_sample;           ///< |predicted - measured| / measured over this configuration's sizes
  ErrorStats leave_range_out;     ///< each size range predicted by a fit on the other ranges
  std::vector<double> errors;           ///< per-sample in-sample relative errors (empty when read from a file)
  std::vector<double> held_out_errors;  ///< per-sample leave-one-size-range-out relative errors
};
/// The size ranges held out in turn: [0, 1 MiB), [1, 8 MiB), [8, 32 MiB), [32 MiB, inf).
const std::vector<Count>& allreduce_size_range_bounds();
/// Fits one configuration (all samples share workers and devices_per_node) by least squares in relative error.
AllReduceFit fit_allreduce(const std::vector<AllReduceSample>& samples, const std::string& device);
/// Predicted time of `bytes` under a fit.
double allreduce_fit_time_s(const AllReduceFit& fit, Count bytes);
/// Fits every (workers, devices_per_node) configuration of `samples`, sorted by workers then devices per node.
std::vector<AllReduceFit> fit_allreduce_configs(const std::vector<AllReduceSample>& samples, const std::string& device);
/// The fits as a calibration file ({"format": "ridge-allreduce-calibration", "fits": [...], "summary": errors
/// pooled over every sample of every fit}), with `source`.
nlohmann::json allreduce_fits_to_json(const std::vector<AllReduceFit>& fits, const std::string& source);
/// Reads such a file. Throws ridge::Error naming the file and field.
std::vector<AllReduceFit> read_allreduce_fits(const std::string& path);
/// The fit that describes the fabric inside one node of `t`: a one-node fit of gpus_per_node workers, measured on
/// a device (of `devices`) whose node names the same intra-node link; nullopt when there is none.
std::optional<AllReduceFit> intra_node_fit(const std::vector<AllReduceFit>& fits, const std::vector<Device>& devices,
                                           const ClusterTopology& t);
/// `t` with its intra-node link replaced by a fit's latency and bus bandwidth (a one-node ring then gives the
/// fitted time exactly).
ClusterTopology with_intra_node_fit(ClusterTopology t, const AllReduceFit& fit);

// ---- scaling ------------------------------------------------------------------------------------------------

/// Predicted time and throughput at one batch size.
struct BatchPoint {
  int64_t batch = 0;
  double time_s = 0;
  double samples_per_s = 0;
};
/// Predicts `work_at(batch)` for each batch size (the caller builds the per-layer work at that batch).
std::vector<BatchPoint> predict_vs_batch(const std::vector<int64_t>& batches,
                                         const std::function<std::vector<LayerWork>(int64_t)>& work_at,
                                         PredictOptions opt);

/// Largest batch in [1, limit] whose `memory_at(batch)` is at most `capacity_bytes` (memory grows with the
/// batch); 0 when even batch 1 does not fit. Doubling, then bisection: O(log limit) evaluations.
int64_t largest_batch_that_fits(const std::function<Count(int64_t)>& memory_at, Count capacity_bytes,
                                int64_t limit = int64_t(1) << 20);

/// The largest batches of one model that fit a device's memory (0: not even batch 1).
struct BatchCapacity {
  int64_t inference = 0;  ///< inference peak (live activations) plus parameters and buffers
  int64_t training = 0;   ///< training peak (weights, gradients, optimizer state, saved activations)
  int64_t limit = 0;      ///< the search's upper limit: a batch equal to it means "at least this many"
};
/// Largest batches up to `limit` of MODEL, loaded with `load` at each batch, whose memory (parameters at
/// `storage`, state of optimizer `opt`) is at most `capacity_bytes`.
BatchCapacity batch_capacity(const std::string& model, const LoadOptions& load, Optimizer opt,
                             const ParamStorage& storage, Count capacity_bytes, int64_t limit = int64_t(1) << 16);

}  // namespace ridge
