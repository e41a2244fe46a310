// Arguments shared by `ridge serve` and `ridge train`: MODEL (an LLM zoo name or a Hugging Face config.json
// or its directory), --device and --devices.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ridge/llm.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::cli {

struct LlmModelArgs {
  std::string model, device_name;
  std::vector<std::string> device_dirs;
  std::string calibration = "builtin";

  /// Adds MODEL, --device (required), --calibration and --devices to `cmd`.
  void add_to(CLI::App* cmd);
};

/// Parses a --weights/--kv value; throws UsageError naming the flag.
NumberFormat number_format_flag(const std::string& flag, const std::string& value);

/// Parses --attention eager|fused|flash2 (parse_attention); throws UsageError.
AttentionChoice attention_flag(const std::string& value);
/// --attention's help text (one for serve and train).
extern const char* const kAttentionHelp;

/// Parses --moe eager|grouped: true for grouped (ServeOptions/TrainOptions::grouped_experts); throws UsageError.
bool moe_flag(const std::string& value);
/// --moe's help text (one for serve and train).
extern const char* const kMoeHelp;

/// The progress line for `command` on an LLM whose graphs are large enough to take seconds to build and cost
/// (llm_graph_nodes_estimate above 40,000: MoE models with many experts), or "" for a smaller one.
std::string large_llm_message(const LlmConfig& c, std::string_view command);
/// Prints large_llm_message on stderr when `model` is such an LLM (a zoo name or config); nothing otherwise.
void announce_large_llm(const ModelSource& model, std::string_view command);

/// Parses --mla hf|latent: true for latent (ServeOptions::latent_kv); throws UsageError.
bool mla_flag(const std::string& value);
/// --mla's help text.
extern const char* const kMlaHelp;

}  // namespace ridge::cli
