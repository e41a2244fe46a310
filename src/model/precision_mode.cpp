// The --precision table (include/ridge/precision_mode.hpp). AMP rows follow PyTorch's torch.autocast recipe
// (docs/model.md, "Precision modes"): parameters, their gradients and the optimizer state stay fp32; autocast runs
// matmuls and convolutions in the half type, so activations are half; DDP all-reduces the fp32 gradients.
#include "ridge/precision_mode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "ridge/error.hpp"

namespace ridge {

const std::vector<PrecisionMode>& precision_modes() {
  static const std::vector<PrecisionMode> modes = {
      // name       compute          activations    act w  g  m  opt ar  loss-scale
      {"fp32", Precision::FP32, DType::F32, 4, 4, 4, 0, 4, 4, false, "everything fp32 on the fp32 vector units"},
      {"tf32", Precision::TF32, DType::F32, 4, 4, 4, 0, 4, 4, false,
       "fp32 storage, matmuls/convolutions on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32)"},
      {"bf16", Precision::BF16, DType::BF16, 2, 2, 2, 0, 2, 2, false,
       "pure bf16: model.to(torch.bfloat16), weights, gradients and optimizer state bf16"},
      {"fp16", Precision::FP16, DType::F16, 2, 2, 2, 0, 2, 2, false,
       "pure fp16: model.half(), weights, gradients and optimizer state fp16"},
      {"amp-bf16", Precision::BF16, DType::BF16, 2, 4, 4, 0, 4, 4, false,
       "torch.autocast(bfloat16): fp32 weights, gradients and optimizer state; bf16 activations and compute"},
      {"amp-fp16", Precision::FP16, DType::F16, 2, 4, 4, 0, 4, 4, true,
       "torch.autocast(float16) + GradScaler: fp32 weights, gradients and optimizer state; fp16 activations and "
       "compute; loss scaling"},
      {"fp64", Precision::FP64, DType::F64, 8, 8, 8, 0, 8, 8, false, "everything fp64"},
      {"int8", Precision::INT8, DType::I8, 1, 1, 1, 0, 1, 1, false, "int8 inference (weights and activations int8)"},
  };
  return modes;
}

std::optional<PrecisionMode> parse_precision_mode(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return c == '_' ? '-' : std::tolower(c); });
  if (n == "amp" || n == "amp-f16" || n == "amp-half" || n == "mixed") n = "amp-fp16";
  if (n == "amp-bfloat16") n = "amp-bf16";
  for (const PrecisionMode& m : precision_modes())
    if (m.name == n) return m;
  if (auto p = parse_precision(n)) {  // "float16", "half", "f32", ... name a pure mode
    for (const PrecisionMode& m : precision_modes())
      if (!m.name.starts_with("amp") && m.compute == *p) return m;
  }
  return std::nullopt;
}

std::string precision_mode_names() {
  std::string s;
  for (const PrecisionMode& m : precision_modes()) s += (s.empty() ? "" : "|") + std::string(m.name);
  return s;
}

PrecisionMode require_precision_mode(std::string_view name, const std::string& flag) {
  if (auto m = parse_precision_mode(name)) return *m;
  throw UsageError(flag + " " + std::string(name) + ": unknown precision (use " + precision_mode_names() + ")");
}

const PrecisionMode& require_training_mode(const PrecisionMode& mode, const std::string& flag) {
  if (mode.compute == Precision::INT8)
    throw UsageError(fmt::format("{} {} is an inference mode: training is modelled at fp32, tf32, bf16, fp16, fp64, "
                                 "amp-bf16 or amp-fp16", flag, mode.name));
  return mode;
}

void refuse_precision_with_compute(std::string_view precision, bool compute_given) {
  if (compute_given)
    throw UsageError(fmt::format("--precision {} and --compute: give one (--precision sets the compute precision too)",
                                 precision));
}

ParamStorage param_storage(const PrecisionMode& mode) {
  return {mode.weight_bytes, mode.gradient_bytes, mode.master_bytes, mode.optimizer_state_bytes};
}

}  // namespace ridge
