// What an LLM costs to serve (prefill + decode over a KV cache) and to train (Megatron-style 3-D parallelism),
// per op and per phase, on a device's roofline, plus the published formulas of other tools (Megatron-LM,
// PaLM, calflops) as named conventions. Every formula and its source: docs/llm.md.
#pragma once
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace ridge {

/// A valid request beyond a capacity: the device's memory or the model's positions. Callers that sweep sizes
/// (the serving charts) stop a curve there; every other error still surfaces.
class DoesNotFit : public Error {
 public:
  using Error::Error;
};

/// Storage format of weights or KV cache entries: bits per element plus per-group scales.
struct NumberFormat {
  std::string name;       ///< "int4", "fp16", ...
  int bits = 16;          ///< bits per element
  int64_t group = 0;      ///< elements per scale (0: no scales)
  int scale_bytes = 0;    ///< bytes per scale (fp16 scales: 2)
  /// Exact bytes of `elements` stored in this format: ceil(elements x bits / 8) + ceil(elements / group) x scale.
  Count bytes(Count elements) const;
};
/// int4 and int8 (GPTQ-style: groups of 128 with one fp16 scale each), fp8 (one per-tensor scale, not
/// counted), fp16, bf16, fp32; nullopt when unknown.
std::optional<NumberFormat> parse_number_format(std::string_view name);

/// A fused attention kernel's published utilization on one GPU family: the fraction of the dense fp16/bf16 tensor
/// peak its forward and backward reach, and where it was published (data/calibrations/kernels/attention.json).
struct AttentionKernelEfficiency {
  std::string kernel;         ///< "flash-attention-2" or "flash-attention-1"
  std::string device_family;  ///< "a100", "h100"
  double ppp = 0;             ///< fraction of the dense tensor peak
  std::string source;         ///< the publication and what it says
};
/// What --attention names: eager (HF: scores and softmax in memory), fused (one kernel, scores on chip, timed at
/// the GEMM factors: an ideal fused kernel), flash2 / flash1 (fused, at FlashAttention-2's / -1's published
/// utilization on the device's family where one is shipped). Fused kernels execute only the scores the causal mask
/// and the layer's sliding window keep (src/model/llm_attention.hpp, fused_core_flops); an encoder's, every score.
struct AttentionChoice {
  bool fused = false;
  std::string kernel;  ///< "" (GEMM factors), "flash-attention-2" or "flash-attention-1"
};
/// The precision an LLM's activations and peak use (--compute): fp16, bf16 or fp32, the element types of its
/// graphs; nullopt for anything else (int8 or fp8 compute would need quantized kernels ridge does not model).
std::optional<Precision> parse_llm_compute(std::string_view name);
/// Parses eager | fused | flash2 | flash1; nullopt otherwise.
std::optional<AttentionChoice> parse_attention(std::string_view name);
/// What --moe names: "eager" (false: HF's loop, a kernel per routed expert and op) or "grouped" (true: one grouped
/// kernel per op of a layer's experts, ServeOptions/TrainOptions::grouped_experts); nullopt for anything else.
std::optional<bool> parse_moe(std::string_view name);
/// The shipped utilization of `kernel` on `device_id`'s family; nullopt when none is published or `kernel` is "".
std::optional<AttentionKernelEfficiency> builtin_attention_efficiency(const std::string& kernel,
                                                                      const std::string& device_id);
/// `cal` with an "attention" class: its gemm factors (memory efficiency, overhead) with the kernel's compute
/// efficiency. The class the fused attention core's matmuls take when a kernel efficiency applies.
Calibration with_attention_kernel(Calibration cal, const AttentionKernelEfficiency& k);
/// One line on how the fused attention core is timed under `kernel` / `efficiency` (for notes); "" when `kernel`
/// is "".
std::string attention_kernel_note(const std::string& kernel, const std::optional<AttentionKernelEfficiency>& efficiency,
                                  bool calibrated, const std::string& device_id);

/// Inputs of `ridge serve`.
struct ServeOptions {
  int64_t batch = 1;          ///< concurrent sequences
  int64_t prompt = 512;       ///< prompt tokens (prefill)
  int64_t generate = 128;     ///< generated tokens (decode steps at contexts prompt .. prompt + generate - 1)
  int tp = 1;                 ///< tensor-parallel GPUs
  int dp = 1;                 ///< data-parallel attention GPUs (MoE models; tp 1): each attends for ceil(batch / dp)
                              ///< sequences with every head and holds 1/dp of the experts, reached by all-to-alls
  NumberFormat weights;       ///< weight storage (Linear weights; embeddings and norms stay at the activation type)
  NumberFormat kv;            ///< KV cache storage
  Precision compute = Precision::FP16;  ///< activations and the peak used
  bool fused_attention = false;  ///< cost QK^T..SV as one fused kernel (scores stay on chip) instead of HF eager
  std::string attention_kernel;  ///< the fused kernel ("flash-attention-2", "flash-attention-1"); "": an ideal one at the GEMM factors
  std::optional<AttentionKernelEfficiency> attention_efficiency;  ///< its published utilization (with_llm_calibration)
  bool grouped_experts = false;  ///< MoE: each op of a layer's routed experts is one grouped kernel (vLLM fused_moe)
                                 ///< instead of HF eager's kernel per expert (one launch overhead, not one per expert)
  bool latent_kv = false;        ///< MLA models: cache the latent and decode in it (vLLM, SGLang; LlmShape::latent_kv)
  std::optional<Calibration> calibration;  ///< fitted per-class factors (llm_op_time); nullopt: roofline upper bound
  bool calibration_disabled = false;       ///< --calibration none: no calibration by choice (the notes say so)
  std::optional<AllReduceFit> tp_allreduce;  ///< measured all-reduce fit of tp GPUs in one node; nullopt: data sheet
  std::string bound_note;                  ///< uncalibrated: measured_ceiling_note of the device (with_llm_calibration)
};
/// `o` with --precision `name` as predict and summary read it (PrecisionMode): its compute precision as `compute`,
/// and, unless given on their own (`weights_given`, `kv_given`), weights at its weight type (amp-*: fp32, autocast
/// casting them per op) and the KV cache at its activation type. Serving computes in fp32, tf32, bf16 or fp16:
/// int8 (weight-only quantization is --weights int8) and fp64 are ridge::UsageError naming --precision, and so is
/// `compute_given` (--compute as well: the two would disagree).
ServeOptions with_serving_precision(ServeOptions o, std::string_view name, bool weights_given, bool kv_given,
                                   bool compute_given = false);

/// One op of one phase on one GPU. Decode ops are summed over the generate steps.
struct ServeOp {
  std::string phase;          ///< "prefill" or "decode"
  std::string name;           ///< node name ("model.layers.0.self_attn.q_proj"), or "allreduce" rows
  std::string op_class;       ///< ridge::op_class ("Linear", "MatMul", "Binary", ...; "" for all-reduce rows)
  Count flops = 0;
  Count weight_bytes = 0;     ///< weights read (quantized, scales included)
  Count activation_bytes = 0; ///< activations read and written
  Count kv_read_bytes = 0;    ///< KV cache read
  Count kv_written_bytes = 0; ///< new keys/values written to the cache
  Count bytes() const { return weight_bytes + activation_bytes + kv_read_bytes + kv_written_bytes; }
  double time_s = 0;          ///< llm_op_time: calibrated, or the roofline (upper bound of speed) without one
  Bound bound = Bound::None;  ///< of the op (decode: at the first step)
};

/// Result of a serving analysis; times are calibrated when options.calibration is set, else roofline lower
/// bounds on latency.
struct ServeResult {
  std::string model, device;
  std::string time_label;           ///< llm_time_label(): calibrated (FILE) or upper bound (uncalibrated)
  ServeOptions options;
  int64_t kv_len_cap = 0;           ///< sliding window (0: none)
  double prefill_time_s = 0;        ///< = ttft_s
  double ttft_s = 0;
  double decode_time_s = 0;         ///< all generate steps
  double decode_time_per_token_s = 0;  ///< decode_time_s / generate
  double end_to_end_s = 0;          ///< prefill + decode
  double tokens_per_s = 0;          ///< batch x generate / end_to_end_s
  /// Tensor parallelism: the all-reduces of one layer (a decoder layer's 2: attention output, MLP output; a hybrid
  /// layer's 1: its mixer's output), on the node link while tp fits a node, else on the network.
  int allreduces_per_layer = 2;
  int64_t attention_layers = 0;     ///< layers with self-attention (0 in a mamba2 model: no attention core to time)
  int64_t index_topk = 0;           ///< DeepSeek Sparse Attention: positions each query attends to (0: dense)
  int64_t experts_per_gpu = 0;      ///< routed experts of one MoE layer on one GPU (all of them, or 1/dp; 0: dense)
  double allreduce_time_per_layer_prefill_s = 0, allreduce_time_per_layer_decode_s = 0;
  /// --dp: one MoE layer's dispatch and combine all-to-alls, for the prompt and for one decode step (0 without --dp).
  double alltoall_time_per_layer_prefill_s = 0, alltoall_time_per_layer_decode_s = 0;
  Count prefill_flops = 0, decode_flops = 0;  ///< per GPU, decode summed over steps
  Count calflops_prefill_flops = 0;  ///< the prefill graph's forward FLOPs under calflops' convention (per GPU)
  Count weights_bytes = 0;          ///< all GPUs (replicated norms counted once per GPU)
  Count weights_bytes_per_gpu = 0;
  Count kv_cache_bytes = 0;         ///< all GPUs, at context prompt + generate
  Count kv_cache_bytes_per_gpu = 0;
  Count latent_kv_cache_bytes = 0;  ///< MLA models, all GPUs: the cache holding the latent (kv_lora_rank +
                                    ///< qk_rope_head_dim per token and layer, replicated per GPU; vLLM, SGLang); else 0
  Count decompressed_kv_cache_bytes = 0;  ///< MLA models, all GPUs: HF's cache of every head's key and value; else 0
  Count state_cache_bytes = 0;      ///< hybrid models, all GPUs: the Mamba-2 and Gated DeltaNet layers' conv and
                                    ///< recurrent states (a constant size per sequence); else 0
  Count state_cache_bytes_per_gpu = 0;
  Count memory_per_gpu_bytes = 0;   ///< weights + KV cache (+ state cache) per GPU
  int64_t max_batch = 0;            ///< largest batch whose weights + KV fit in one GPU's memory at this context
  Count active_params = 0, total_params = 0;
  std::vector<ServeOp> ops;
};

/// The per-GPU configuration of `c` under `tp`-way Megatron tensor parallelism (heads, KV heads, MLP width,
/// vocabulary split). Throws ridge::Error naming --tp when it does not divide them.
LlmConfig tensor_parallel_shard(const LlmConfig& c, int tp);
/// KV cache bytes of `batch` sequences at `context` tokens: kv_heads x (head_dim + value_dim) x batch x the positions
/// each layer keeps (context, or min(context, window) in a sliding layer: LlmConfig::window_of), in format `kv`.
Count kv_cache_bytes(const LlmConfig& c, int64_t batch, int64_t context, const NumberFormat& kv);
/// The recurrent layers' state cache of `batch` sequences (any context): per Mamba-2 layer the conv state (conv_dim x
/// (conv_kernel - 1) values at `act`) and the recurrent state (heads x head_dim x state, float32 with
/// mamba_ssm_cache_dtype float32, else at `act`); per Gated DeltaNet the conv state (q|k|v width x (conv_kernel - 1)
/// at `act`) and a float32 key_dim x value_dim state per value head; 0 for models with neither.
Count state_cache_bytes(const LlmConfig& c, int64_t batch, DType act);
/// The cache of an MLA model holding the latent instead: (kv_lora_rank + qk_rope_head_dim) x layers x context x
/// batch values in format `kv`; 0 for other models.
Count latent_kv_cache_bytes(const LlmConfig& c, int64_t batch, int64_t context, const NumberFormat& kv);
/// Serving analysis. Throws ridge::Error for inputs that do not belong together, for an encoder (LlmConfig::causal
/// false: nothing to decode) and "does not fit: needs X GiB, device has Y GiB".
ServeResult analyze_serving(const LlmConfig& c, const Device& d, const ServeOptions& o);

// ---- training ------------------------------------------------------------------------------------------------

/// Activation recomputation (Korthikanti et al. 2022).
enum class Recompute : uint8_t { None, Selective, Full };
std::optional<Recompute> parse_recompute(std::string_view name);
/// Parses --zero: "0".."3", or "fsdp" (PyTorch FSDP FULL_SHARD shards weights, gradients and optimizer states:
/// stage 3); nullopt otherwise.
std::optional<int> parse_zero_stage(std::string_view text);

/// Inputs of `ridge train`: a Megatron-style layout tp x cp x pp x dp = gpus.
struct TrainOptions {
  int gpus = 1, tp = 1, pp = 1, dp = 0;  ///< dp 0: gpus / (tp cp pp)
  int cp = 1;                            ///< context-parallel GPUs: each holds seq / cp tokens of every sequence and
                                         ///< runs ring attention over the others' K, V (Megatron-LM --context-parallel-size)
  int zero = 0;                          ///< ZeRO stage 0-3 (sharding over dp); PyTorch FSDP full shard = 3
  bool sequence_parallel = false;        ///< Megatron sequence parallelism (Korthikanti et al. 2022) with tp
  int interleave = 1;                    ///< virtual pipeline stages per GPU (interleaved 1F1B, Narayanan et al. 2021)
  int ep = 1;                            ///< expert-parallel GPUs (MoE): experts split over ep ranks of the dp group
  Recompute recompute = Recompute::None;
  int64_t seq = 2048;                    ///< tokens per sequence
  int64_t global_batch = 0;              ///< sequences per iteration (0: dp x micro_batch)
  int64_t micro_batch = 1;               ///< sequences per micro-batch
  Precision compute = Precision::BF16;
  /// --precision (PrecisionMode: the same table as predict and summary): what training keeps per parameter
  /// (weights, gradients, optimizer states, the all-reduced gradients) and the activation type; `compute` is its
  /// compute precision. Unset: Megatron/DeepSpeed mixed precision at `compute` (train_state_bytes).
  std::optional<PrecisionMode> precision;
  int gpus_per_node = 8;                 ///< NVLink inside a node, the device's network link between nodes
  double token_budget = 0;               ///< tokens to train on (0: none); gives days_for_budget
  bool fused_attention = false;          ///< time the attention core as one fused kernel (see ServeOptions)
  std::string attention_kernel;          ///< see ServeOptions
  std::optional<AttentionKernelEfficiency> attention_efficiency;  ///< see ServeOptions
  bool grouped_experts = false;          ///< see ServeOptions (Megatron-LM --moe-grouped-gemm)
  std::optional<Calibration> calibration;  ///< fitted per-class factors (llm_op_time); nullopt: roofline upper bound
  bool calibration_disabled = false;       ///< --calibration none: no calibration by choice (the notes say so)
  std::optional<AllReduceFit> tp_allreduce;  ///< measured all-reduce fit of tp GPUs in one node; nullopt: data sheet
  std::string bound_note;                  ///< uncalibrated: measured_ceiling_note of the device (with_llm_calibration)
};

/// One op of the tensor-parallel shard's graph through one micro-batch on one GPU (all layers, before the pipeline
/// stage share): where a training iteration's compute time goes.
struct TrainOp {
  std::string name;           ///< node name ("model.layers.0.mlp.up_proj")
  std::string op_class;       ///< ridge::op_class ("Linear", "MatMul", "Binary", ...), or "attention" for the core's
                              ///< matmuls timed at a fused kernel's published utilization (--attention flash2)
  Count flops = 0;            ///< forward FLOPs (at seq / cp tokens; the attention core: its cp ring blocks)
  Count backward_flops = 0;   ///< backward FLOPs (same scaling)
  Count bytes = 0;            ///< forward bytes (fused attention: what reaches DRAM); backward moves twice these when
                              ///< calibrated, these once in the uncalibrated bound (none for a pass-through)
  double forward_s = 0, backward_s = 0;
  double recompute_s = 0;     ///< recomputed forwards (full or selective recomputation, fused attention's backward)
  double time_s() const { return forward_s + backward_s + recompute_s; }
};

/// Per-GPU memory of one training layout.
struct TrainMemory {
  Count weights = 0, gradients = 0, optimizer = 0, activations = 0;
  Count total() const { return weights + gradients + optimizer + activations; }
};

/// Result of a training analysis (times calibrated when options.calibration is set, else roofline figures).
struct TrainResult {
  std::string model, device;
  std::string time_label;              ///< llm_time_label()
  TrainOptions options;
  int64_t micro_batches = 0;           ///< per pipeline per iteration (m)
  int64_t attention_layers = 0;        ///< layers with self-attention (0 in a mamba2 model)
  int64_t layers_per_stage = 0;        ///< layers of the largest pipeline stage: ceil(layers / pp) (uneven stages
                                       ///< allowed, e.g. Llama 3 405B's 126 over 16: the slowest stage sets the pace)
  Count model_flops = 0;               ///< per iteration: forward + backward of the graph (no recomputation)
  Count hardware_flops = 0;            ///< model_flops + recomputed forward work
  double compute_time_s = 0;           ///< pipeline compute including the bubble
  double bubble_fraction = 0;          ///< (p - 1) / v / (m + (p - 1) / v), v = interleave (1: plain 1F1B)
  double tp_comm_s = 0, pp_comm_s = 0, dp_comm_exposed_s = 0;
  double ep_comm_s = 0;                ///< MoE all-to-alls (dispatch + combine, forward and backward) with ep > 1
  double cp_comm_s = 0;                ///< ring attention's K, V (and dK, dV) passes with cp > 1, the part not hidden
                                       ///< behind the attention blocks they feed
  double iteration_time_s = 0;
  double mfu = 0, hfu = 0;             ///< model / hardware FLOPs per second over gpus x peak
  double tokens_per_s = 0;
  double days_for_budget = 0;          ///< token_budget / tokens_per_s in days (0 without a budget)
  TrainMemory memory;                  ///< per GPU: the pipeline stage that needs the most (first or last, usually)
  std::vector<TrainOp> ops;            ///< per op of one micro-batch through the whole shard (graph order); the
                                       ///< slowest stage's share of their time_s() (its layers' share of the layers'
                                       ///< ops, + the embedding's on the first, the head's on the last) x (m +
                                       ///< (p-1)/v) is compute_time_s
  Count device_memory_bytes = 0;
  bool fits = false;
};

/// Training analysis. Throws ridge::Error when tp x cp x pp x dp != gpus or a size does not divide. Pipeline stages may
/// be uneven (pp need not divide the layers; the middle stages take the extra layers first); the embedding is on the
/// first stage, the final norm and output layer on the last (Megatron-LM); the time is the slowest stage's, the
/// memory that of the stage that needs the most.
TrainResult analyze_training(const LlmConfig& c, const Device& d, const TrainOptions& o);
/// For a layout that does not fit: the first change of memory savers that makes it fit, as flags ("--zero 1",
/// "--zero 3 --recompute full"), trying in order of their cost in time ZeRO 1, 2, 3 (with dp > 1), then selective
/// and full recomputation with the ZeRO stage that fits best; nullopt when none fits (more GPUs, tp or pp needed)
/// or the layout already fits.
std::optional<std::string> memory_savers_that_fit(const LlmConfig& c, const Device& d, const TrainOptions& o);

// ---- op times: calibrated or roofline -------------------------------------------------------------------------

/// Time of one kernel of `op_class` moving `bytes` and doing `flops`: with `cal`, phase_time() with the class's
/// factors (its kernel family's, else the fallback) and `kernels` launches; without, the roofline
/// max(flops / peak, bytes / bandwidth). `bound` (optional) receives what limits it. With `cache_bytes` (the
/// device's L2, 0: unknown), a calibrated time is never below (bytes - cache_bytes) / bandwidth: a fitted memory
/// efficiency above 1 (small tensors served from L2) cannot apply to the traffic the cache cannot hold.
double llm_op_time(Count flops, Count bytes, const std::string& op_class, int kernels, double peak_flop_per_s,
                   double bandwidth_bytes_per_s, const Calibration* cal, Bound* bound = nullptr, Count cache_bytes = 0);
/// "calibrated (FILE)" for a fitted calibration, else "upper bound (uncalibrated)".
std::string llm_time_label(const std::optional<Calibration>& cal);
/// Machine form of the same, as predict's JSON "time_kind": "calibrated" or "upper_bound".
std::string llm_time_kind_key(const std::optional<Calibration>& cal);

// ---- calibration on measured per-operator times (Vidur profiles) ---------------------------------------------

/// One operator of one measured LLM layer (one op column of one row of Vidur's mlp.csv) with the work ridge
/// assigns it (formulas in docs/llm.md).
struct LlmOpMeasurement {
  std::string file;            ///< the CSV it came from
  int line = 0;                ///< its line in the file
  std::string device_family;   ///< from the file name ("a100_...csv" -> "a100"); "" when it names none
  std::string op;              ///< Vidur's operator: "attn_pre_proj", "mlp_up_proj", "input_layernorm", ...
  std::string op_class;        ///< calibration class: "gemm", "normalization", "elementwise" or "Gather"
  int64_t tokens = 0;          ///< tokens in the batch
  int tp = 1;                  ///< tensor-parallel GPUs (the GEMMs are 1/tp of the full ones)
  int64_t m = 0, k = 0, n = 0; ///< GEMM shape (rows x inner x columns; 0 for other ops)
  Count flops = 0;             ///< per GPU
  Count bytes = 0;             ///< per GPU, read + written, fp16
  double time_s = 0;           ///< median measured time
  int kernels = 1;             ///< kernels the time covers (a three-operand residual sum runs two)
};
/// Reads a Vidur per-operator profile (mlp.csv: time_stats.OP.median in ms, n_head, n_kv_head, n_embd,
/// n_expanded_embd, use_gated_mlp, num_tokens, num_tensor_parallel_workers). Throws ridge::Error naming the file,
/// line and column.
std::vector<LlmOpMeasurement> read_vidur_op_csv(const std::string& path);

/// Which measurements a hold-out evaluation fits on and which it checks: "tp=N" holds out tensor-parallel degree
/// N, "tokens>N" the token counts above N, "odd-tokens" every other distinct token count, "" none.
struct LlmHoldOut {
  std::string rule;
  /// Splits `all` into (fitted on, held out). Throws ridge::UsageError for an unknown rule, and ridge::Error when
  /// either side is empty.
  std::pair<std::vector<LlmOpMeasurement>, std::vector<LlmOpMeasurement>> split(
      const std::vector<LlmOpMeasurement>& all) const;
};

/// Fits per-class factors (calibrate(), sum model, per-kernel overhead) to the measurements against `d`'s peak at
/// `p` and its DRAM bandwidth; classes the profiles lack that are memory-bound kernels ("softmax", "reduction")
/// take the "elementwise" factors. The result's device is d.id and precision p.
Calibration fit_operator_classes(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p);
/// fit_operator_classes(), with the "gemm" class refitted under the max model (fit_max_model: loads overlap math)
/// where that fits the GEMMs better than the sum model: the calibration `serve` and `train` use.
Calibration fit_llm_calibration(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p);
/// The operators as a CNN calibration sees them: the embedding lookup is dropped, "gemm", "normalization" (RMSNorm)
/// and "elementwise" (residual add) stay, the rest (rotary, SiLU x up) become "memory" (docs/model.md,
/// "GEMM-shape calibration").
std::vector<LlmOpMeasurement> cnn_view_of_operators(const std::vector<LlmOpMeasurement>& ms);
/// A calibration for CNNs from operator profiles: fit_operator_classes() on cnn_view_of_operators(), plus the GEMM-shape
/// table (fit_gemm_shape_table) for the "gemm" and "conv" classes, and one memory efficiency fitted on every
/// memory-bound operator pooled for "memory", "pooling", "softmax" and "reduction" (and depthwise convs).
Calibration fit_cnn_calibration(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p);

/// One measured operator predicted under a calibration.
struct LlmOpError {
  const LlmOpMeasurement* m = nullptr;  ///< the measurement (owned by the caller's vector)
  double predicted_s = 0;               ///< llm_op_time under the calibration
  double error = 0;                     ///< (predicted - measured) / measured
};
/// Errors of a calibration on measurements (nothing fitted): per op, pooled, per Vidur op and per class.
struct LlmEvaluation {
  std::vector<LlmOpError> ops;                ///< one per measurement, in order
  ErrorStats all;                             ///< of |error|
  std::map<std::string, ErrorStats> by_op;    ///< Vidur op -> |error| stats
  std::map<std::string, ErrorStats> by_class; ///< calibration class -> |error| stats
};
/// Predicts every measurement with `cal` on `d` at `p` (llm_op_time, one kernel each).
LlmEvaluation evaluate_llm_calibration(const std::vector<LlmOpMeasurement>& ms, const Calibration& cal, const Device& d,
                                       Precision p);

/// The shipped LLM calibration (data/calibrations/llm/*.json) for `device_id`'s family at `p` (fp16 and bf16 are
/// interchangeable: the same tensor-core rate on the devices calibrated); nullopt when none applies.
std::optional<Calibration> builtin_llm_calibration(const std::string& device_id, Precision p);
/// The calibration `which` names for `d` at `p`: "builtin" (builtin_llm_calibration), "none" (roofline upper bound,
/// nullopt) or a calibration file, refused (ridge::Error) when fitted on another device family or precision.
std::optional<Calibration> llm_calibration(const Device& d, Precision p, const std::string& which);
/// The shipped all-reduce fit (data/calibrations/allreduce-vidur.json) of `workers` GPUs all in one node of
/// `device_id`'s family; nullopt when none was measured (or workers < 2).
std::optional<AllReduceFit> builtin_tp_allreduce_fit(const std::string& device_id, int workers);
/// How an LLM's times are taken on a device: the calibration and the tensor-parallel all-reduce fit.
struct LlmCalibrationChoice {
  std::optional<Calibration> calibration;    ///< llm_calibration(d, p, which); nullopt: roofline upper bound
  std::optional<AllReduceFit> tp_allreduce;  ///< with a calibration, the shipped fit of tp GPUs in one node
};
/// The calibration `which` names for `d` at `p` (llm_calibration) and, when one applies, the measured all-reduce
/// fit of `tp` GPUs in one node (builtin_tp_allreduce_fit); what `ridge serve`, `ridge train` and `ridge report
/// --serve` time with.
LlmCalibrationChoice llm_calibration_for(const Device& d, Precision p, int tp, const std::string& which);
/// `o` (ServeOptions or TrainOptions) with the calibration and all-reduce fit llm_calibration_for chooses for
/// its compute precision and tensor-parallel size, and, with a calibration, the published utilization of its fused
/// attention kernel on `d` (builtin_attention_efficiency).
template <class Options>
Options with_llm_calibration(const Device& d, Options o, const std::string& which) {
  LlmCalibrationChoice chosen = llm_calibration_for(d, o.compute, o.tp, which);
  o.calibration = std::move(chosen.calibration);
  o.calibration_disabled = which == "none";
  o.tp_allreduce = std::move(chosen.tp_allreduce);
  o.bound_note = o.calibration ? "" : measured_ceiling_note(d, o.compute);
  o.attention_efficiency.reset();
  if (o.calibration && o.fused_attention) o.attention_efficiency = builtin_attention_efficiency(o.attention_kernel, d.id);
  return o;
}
/// `o` (ServeOptions or TrainOptions) with the attention `a` names (--attention): fused or not, and which kernel.
template <class Options>
Options with_attention(Options o, const AttentionChoice& a) {
  o.fused_attention = a.fused;
  o.attention_kernel = a.kernel;
  return o;
}
/// Why `o` (ServeOptions or TrainOptions) times `device_id` uncalibrated: the user's --calibration none, or none applies.
template <class Options>
std::string uncalibrated_reason(const Options& o, const std::string& device_id) {
  return o.calibration_disabled ? "--calibration none" : "no calibration applies to " + device_id + " (--calibration)";
}
/// What the device's measured ceiling says beside `o`'s times (ServeOptions or TrainOptions): with a calibration, that
/// it was scaled to the ceiling (Calibration::ceiling_note); without, how far below the peak the bound's ceiling is
/// (bound_note); "" when neither applies.
template <class Options>
std::string ceiling_note(const Options& o) {
  return o.calibration ? o.calibration->ceiling_note : o.bound_note;
}
/// attention_kernel_note for `o` (ServeOptions or TrainOptions) on `device_id`.
template <class Options>
std::string attention_kernel_note(const Options& o, const std::string& device_id) {
  return attention_kernel_note(o.attention_kernel, o.attention_efficiency, o.calibration.has_value(), device_id);
}
/// What --mla names: "hf" (false: HF's cache of decompressed keys and values) or "latent" (true: the latent cache of
/// vLLM and SGLang, ServeOptions::latent_kv); nullopt for anything else.
std::optional<bool> parse_mla(std::string_view name);
/// How a mixture-of-experts model's experts are timed (--moe), for notes; "" for a dense model (`moe` false).
std::string moe_experts_note(bool moe, bool grouped_experts);
/// How --dp serves the model (data-parallel attention, expert-parallel MoE layers), for notes; "" without --dp.
std::string data_parallel_note(const ServeResult& r);
/// How DeepSeek Sparse Attention is timed (a sparse kernel attending to the top `index_topk`, or HF's masks; the
/// indexer replicated over `tp` GPUs; in training, its backward), for serve's (`serving`) and train's notes; "" for a
/// model without it (index_topk 0).
std::string sparse_attention_note(int64_t index_topk, bool fused_attention, int tp, bool serving);
/// Whether `o` (ServeOptions or TrainOptions) times the fused attention core at a kernel's published utilization:
/// fused, calibrated, and an efficiency found (then the core's matmuls take the class "attention").
template <class Options>
bool attention_kernel_applies(const Options& o) {
  return o.fused_attention && o.calibration && o.attention_efficiency;
}
/// The calibration `o`'s ops are timed with: its calibration, with the "attention" class added where
/// attention_kernel_applies (with_attention_kernel); nullopt: the roofline upper bound.
template <class Options>
std::optional<Calibration> timing_calibration(const Options& o) {
  if (attention_kernel_applies(o)) return with_attention_kernel(*o.calibration, *o.attention_efficiency);
  return o.calibration;
}

// ---- published formulas (named conventions) -----------------------------------------------------------------

/// Megatron-LM paper (Narayanan et al. 2021, eq. 3): FLOPs per iteration with full recomputation,
/// 96 B s l h^2 (1 + s / 6h + V / 16 l h); exact as a rational, rounded down to an integer.
Count megatron_iteration_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden, int64_t vocab);
/// Megatron-LM paper parameter count 12 l h^2 (1 + 13 / 12h + (V + s) / 12 l h) = 12 l h^2 + 13 l h + (V + s) h.
Count megatron_params(int64_t layers, int64_t hidden, int64_t vocab, int64_t seq);
/// PaLM (Chowdhery et al. 2022, App. B) model FLOPs per token: 6 N + 12 L H Q T.
Count palm_flops_per_token(Count params, int64_t layers, int64_t heads, int64_t head_dim, int64_t seq);
/// ZeRO's model-state memory per GPU (Rajbhandari et al. 2020, sec. 3-5 and Fig. 1): with Psi parameters,
/// mixed-precision Adam (2 Psi fp16 weights + 2 Psi fp16 gradients + K Psi optimizer states, K = 12) over Nd
/// data-parallel GPUs, stage 0 keeps all of it, 1 (P_os) shards the K Psi, 2 (P_os+g) also the gradients,
/// 3 (P_os+g+p) also the weights; each sharded term is rounded up to whole bytes per GPU.
struct ZeroMemory {
  Count weights = 0, gradients = 0, optimizer = 0;
  Count total() const { return weights + gradients + optimizer; }
};
ZeroMemory zero_model_state_bytes(Count params, int stage, int64_t dp, int64_t k = 12, int64_t weight_bytes = 2,
                                  int64_t gradient_bytes = 2);

/// Bytes per parameter (and the activations' type) a training run keeps, from TrainOptions: with `precision`,
/// its PrecisionMode row (Adam: master copy + 2 states); without, Megatron/DeepSpeed mixed precision at `compute`:
/// weights and gradients at the compute type, fp32 master + 2 moments (K = 12), or with fp32 compute 2 fp32 moments
/// (K = 8, the weights are the master).
struct TrainStateBytes {
  int64_t weights = 2, gradients = 2, optimizer = 12, allreduce = 2;
  DType activations = DType::BF16;           ///< the activations' element type
  std::string weights_type, gradients_type;  ///< "bf16", "fp32", ...
  std::string optimizer_label;               ///< "Adam: fp32 master + 2 moments", ...
};
TrainStateBytes train_state_bytes(const TrainOptions& o);
/// `o` with --precision `name` (a training PrecisionMode: not int8): its row for what is kept and its compute
/// precision as `compute`. Throws ridge::UsageError naming --precision for an unknown or inference-only mode, or
/// when `compute_given` (--compute as well).
TrainOptions with_training_precision(TrainOptions o, std::string_view name, bool compute_given = false);

/// Activation memory per transformer layer in bytes (Korthikanti et al. 2022, eqs. 2-4; the "Transformer Math
/// 101" formulas of EleutherAI quote them): no recomputation s b h (10 + 24/t + 5 a s / (h t)), selective
/// s b h (10 + 24/t), full 2 s b h; tensor parallelism t, no sequence parallelism, 2-byte activations. Exact
/// integer (floor of the rational value). With sequence parallelism (eqs. 5-6) the 10 s b h outside the tensor-parallel
/// region is split too: s b h (34/t + 5as/(ht)), s b h 34/t selective, 2 s b h / t full.
Count korthikanti_activation_bytes_per_layer(int64_t seq, int64_t micro_batch, int64_t hidden, int64_t heads, int64_t tp,
                                             Recompute recompute, bool sequence_parallel = false);

/// llm-analysis (cli99/llm-analysis, llm_analysis/analysis.py get_num_flops_fwd_total at d841e40) forward
/// FLOPs of `batch` sequences of `seq` tokens: per layer 4 B s h^2 (q + o) + 4 B s h^2 kv / H (k + v) +
/// 4 B s^2 h (QK^T, SV; causality not halved) + (6 gated | 4) B s h I (one expert: top-k not counted), plus the
/// logits 2 B s h V; norms, activations and softmax count 0. Its decode step is the same at s = 1.
Count llm_analysis_forward_flops(const LlmConfig& c, int64_t batch, int64_t seq);

/// Megatron-LM's code (megatron/training/training.py num_floating_point_operations, transformer_flops at
/// d98e8a6): FLOPs of one training iteration (forward + backward wgrad + dgrad = 3 x 2 MACs, no recomputation):
/// B s [6 h I f per dense layer (f = 3 SwiGLU, 2 plain) + 6 h (k I_e f + I_shared f) per MoE layer + 6 (h (q +
/// 2 kv_size) + q h) per layer + 6 h V_padded] + 6 B s^2 q per layer (QK^T and SV halved for the causal mask; an
/// encoder, LlmConfig::causal false: 12 B s^2 q),
/// q = H x head_dim, kv_size = kv heads x head_dim, V padded up to a multiple of `vocab_multiple` (its
/// --make-vocab-size-divisible-by 128 x tp).
Count megatron_code_iteration_flops(const LlmConfig& c, int64_t batch, int64_t seq, int64_t vocab_multiple = 128);

/// One layer row of LLM-Viewer's analysis (hahnyuan/LLM-Viewer, model_analyzer.py ModelAnalyzer.analyze with
/// configs/Llama.py, no FlashAttention): OPs and bytes moved as that tool counts them for one transformer layer
/// (lm_head: the whole head, counted once).
struct LlmViewerLayer {
  std::string name;     ///< q_proj, k_proj, ..., qk_matmul, softmax, attn_norm, attn_add, mlp_act, lm_head
  Count ops = 0;        ///< "OPs": 2 per MAC; softmax 5, norm 7, add 1, mlp_act 2 per element
  Count load_weight = 0, load_act = 0, store_act = 0, load_kv_cache = 0, store_kv_cache = 0;  ///< bytes
  /// memory_access: the sum of the five byte counts.
  Count memory_access() const { return load_weight + load_act + store_act + load_kv_cache + store_kv_cache; }
};
/// LLM-Viewer's per-layer rows for `stage` "prefill" (seq tokens) or "decode" (one token attending to seq
/// cached ones) at `batch`, with weights / activations / KV cache of w_bits / a_bits / kv_bits bits; lm_head is the
/// last row. Its quirks are kept: mlp_act counts the hidden size (not the MLP width), the prefill QK^T loads Q
/// with the KV heads' size, lm_head counts batch x h x V OPs (one token, one MAC) in both stages.
std::vector<LlmViewerLayer> llm_viewer_layers(const LlmConfig& c, const std::string& stage, int64_t batch, int64_t seq,
                                              int w_bits = 16, int a_bits = 16, int kv_bits = 16);
/// LLM-Viewer's total_results of a stage: every layer row x num_hidden_layers, plus lm_head once.
LlmViewerLayer llm_viewer_total(const LlmConfig& c, const std::string& stage, int64_t batch, int64_t seq,
                                int w_bits = 16, int a_bits = 16, int kv_bits = 16);

/// A count as llm-analysis' _num_to_string(num, divisor=1000) prints it: "6.87 T", "13.15 G".
std::string llm_analysis_number(Count v);
/// A count as LLM-Viewer's utils.str_number prints it: "1.7T", "69G", "33.6M".
std::string llm_viewer_number(Count v);

/// One published convention's headline for an LLM, beside ridge's (ridge flops --all-conventions).
struct LlmConventionRow {
  std::string name;        ///< "calflops", "megatron-paper", ...
  Count total = 0;         ///< the count, exact
  std::string unit;        ///< "FLOP" or "byte"
  std::string as_printed;  ///< as the source prints it (or its formula's value)
  std::string differs;     ///< what it counts differently from ridge
};
/// The LLM presets for `c` at `batch` sequences of `seq` tokens, given its forward graph `g` (build_llm at that
/// shape): calflops, Megatron-LM paper eq. 3 and Megatron-LM's code, PaLM 6N + 12LHQT, llm-analysis, LLM-Viewer
/// (prefill and decode), Transformer Math 101 (2PD forward, 6PD training), Korthikanti et al.'s activation bytes
/// (t = 1, no / selective / full recomputation, whole model), and ZeRO stage 0-3 model-state bytes per GPU at
/// Nd = 64 (the paper's Fig. 1 setting).
std::vector<LlmConventionRow> llm_convention_rows(const LlmConfig& c, const Graph& g, int64_t batch, int64_t seq);

/// calflops' forward FLOPs of an LLM graph built by build_llm (F.linear 2 MACs, torch.matmul 2 MACs,
/// F.softmax / F.silu / F.gelu / F.relu one per input element, F.layer_norm five; Python operators and
/// rsqrt/pow/mean are not patched, so 0).
Count calflops_forward_flops(const Graph& g);

}  // namespace ridge
