// Model stage: what `--precision` means for a run, in one table shared by summary, sweep, predict, report and the
// LLM train/serve commands: the peak a device is looked up at and the bytes per element of activations, weights,
// gradients, fp32 master weights, optimizer state and the gradient all-reduce. See docs/model.md, "Precision modes".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridge/cost.hpp"
#include "ridge/device.hpp"
#include "ridge/dtype.hpp"

namespace ridge {

/// One --precision value: pure modes (fp32, tf32, bf16, fp16, fp64, int8) keep every tensor at one type; AMP modes
/// (amp-bf16, amp-fp16) follow PyTorch torch.autocast: fp32 parameters, gradients and optimizer state, half-precision
/// activations and compute.
struct PrecisionMode {
  std::string_view name;        ///< "amp-bf16"
  Precision compute;            ///< precision of the device peak the compute term uses (tensor cores for tf32/bf16/fp16)
  DType activation_dtype;       ///< element type of activations (what load_model costs tensors at)
  int activation_bytes;         ///< bytes per activation element
  int weight_bytes;             ///< bytes per parameter of the weights the model holds
  int gradient_bytes;           ///< bytes per parameter of the gradients
  int master_bytes;             ///< bytes per parameter of a separate fp32 master copy (0: the weights are the master)
  int optimizer_state_bytes;    ///< bytes per parameter of each optimizer state (momentum: 1 state, Adam: 2)
  int allreduce_bytes;          ///< bytes per parameter the data-parallel all-reduce moves (the gradient type)
  bool loss_scaling;            ///< gradients need loss scaling (fp16 ranges)
  std::string_view description; ///< one line for help and docs
};

/// Every precision mode, in display order (fp32, tf32, bf16, fp16, amp-bf16, amp-fp16, fp64, int8).
const std::vector<PrecisionMode>& precision_modes();
/// Parses a --precision value ("amp-bf16", "amp_bf16", "fp16", "half", ...); nullopt if unknown.
std::optional<PrecisionMode> parse_precision_mode(std::string_view name);
/// Parses a --precision value or throws ridge::UsageError naming `flag` and the accepted names.
PrecisionMode require_precision_mode(std::string_view name, const std::string& flag = "--precision");
/// `mode` for a training iteration: int8 is an inference mode (no int8 gradients or optimizer are modelled);
/// throws ridge::UsageError naming the flag and the modes that train.
const PrecisionMode& require_training_mode(const PrecisionMode& mode, const std::string& flag = "--precision");
/// For commands with both --precision (a mode) and --compute (its compute precision alone, train and serve): a
/// ridge::UsageError when both are given (`compute_given`), since --precision sets the compute precision too.
void refuse_precision_with_compute(std::string_view precision, bool compute_given);
/// "fp32|tf32|bf16|fp16|amp-bf16|amp-fp16|fp64|int8" for help text.
std::string precision_mode_names();
/// What training keeps per parameter under `mode` (for estimate_memory).
ParamStorage param_storage(const PrecisionMode& mode);

}  // namespace ridge
