#include "llm_model.hpp"

#include <fmt/format.h>

#include <optional>

#include "commands.hpp"
#include "ridge/count.hpp"
#include "ridge/error.hpp"

namespace ridge::cli {

void LlmModelArgs::add_to(CLI::App* cmd) {
  cmd->add_option("MODEL", model, "LLM zoo name (llama-2-7b, ...; see `ridge list`; also gpt2 and distilbert), or a "
                                  "Hugging Face config.json or its directory (decoders; BERT-family encoders train "
                                  "but are not served: model types in docs/llm.md)")
      ->required();
  cmd->add_option("--device,-d", device_name, "Device id or alias (see `ridge devices`)")->required();
  cmd->add_option("--calibration", calibration,
                  "builtin (the shipped LLM fit of the device's family, when there is one), none (roofline upper "
                  "bound) or a calibration FILE (ridge calibrate)")
      ->capture_default_str();
  cmd->add_option("--devices", device_dirs, "Also read device files from DIR")->type_name("DIR");
}

NumberFormat number_format_flag(const std::string& flag, const std::string& value) {
  auto f = parse_number_format(value);
  if (!f) throw UsageError(fmt::format("{} {}: unknown format (int4, int8, fp8, fp16, bf16, fp32)", flag, value));
  return *f;
}

AttentionChoice attention_flag(const std::string& value) {
  const auto a = parse_attention(value);
  if (!a) throw UsageError(fmt::format("--attention {}: use eager, fused, flash2 or flash1", value));
  return *a;
}

const char* const kAttentionHelp =
    "eager (HF, scores in memory) | fused (one FlashAttention-style kernel at the GEMM factors) | flash2 "
    "(FlashAttention-2 at its published utilization on the GPU family: data/calibrations/kernels/attention.json) | "
    "flash1 (FlashAttention-1, flash-attn 1.x or its Triton port, likewise). Fused kernels execute the scores the "
    "causal mask and sliding window keep";

bool moe_flag(const std::string& value) {
  const auto grouped = parse_moe(value);
  if (!grouped) throw UsageError(fmt::format("--moe {}: use eager or grouped", value));
  return *grouped;
}

std::string large_llm_message(const LlmConfig& c, std::string_view command) {
  const int64_t nodes = llm_graph_nodes_estimate(c);
  if (nodes < 40000) return "";
  return fmt::format("{}: {} has about {} ops per graph ({} layers{}): building and costing them takes seconds",
                     command, c.name, with_commas(Count{nodes / 1000 * 1000}), c.num_layers,
                     c.moe() ? fmt::format(", {} experts in each sparse one", c.num_experts) : "");
}

void announce_large_llm(const ModelSource& model, std::string_view command) {
  std::optional<LlmConfig> c;
  try {
    c = llm_config_of_source(model);
  } catch (const Error&) {
    return;  // the command itself reports the config's error
  }
  if (c)
    if (const std::string line = large_llm_message(*c, command); !line.empty()) progress(line);
}

bool mla_flag(const std::string& value) {
  const auto latent = parse_mla(value);
  if (!latent) throw UsageError(fmt::format("--mla {}: use hf or latent", value));
  return *latent;
}

const char* const kMlaHelp =
    "Multi-head latent attention models (DeepSeek): hf (the cache holds every head's key and value, as transformers) | "
    "latent (the cache holds the latent and decode attends in it, as vLLM and SGLang)";

const char* const kMoeHelp =
    "MoE experts: eager (HF's loop, one kernel per routed expert and op) | grouped (one grouped kernel per op of a "
    "layer's experts, the routing weight in the down projection's epilogue and the top-k sum one kernel, as vLLM's "
    "fused_moe and Megatron-LM's --moe-grouped-gemm run them)";

}  // namespace ridge::cli
