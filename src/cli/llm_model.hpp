// Arguments shared by `ridge serve` and `ridge train`: MODEL (an LLM zoo name or a Hugging Face config.json
// or its directory), --device and --devices.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ridge/device.hpp"
#include "ridge/llm.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge::cli {

struct LlmModelArgs {
  std::string model, device_name;
  std::vector<std::string> device_dirs;
  std::string calibration = "builtin";

  /// Adds MODEL, --device (required) and --devices to `cmd`.
  void add_to(CLI::App* cmd);
  /// The configuration MODEL names. Throws ridge::Error naming MODEL (with the closest zoo names).
  LlmConfig config() const;
  /// The device --device names (built-in or from --devices).
  Device find_device() const;
  /// The calibration --calibration names for `d` at `p`: "builtin" (the shipped LLM fit of d's family, if any),
  /// "none" (roofline upper bound) or a file (refused when fitted on another device family).
  std::optional<Calibration> find_calibration(const Device& d, Precision p) const;
};

/// Parses a --weights/--kv value; throws UsageError naming the flag.
NumberFormat number_format_flag(const std::string& flag, const std::string& value);

/// Parses --attention eager|fused (true for fused); throws UsageError.
bool attention_flag(const std::string& value);

}  // namespace ridge::cli
