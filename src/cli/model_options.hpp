// Options every model-taking command shares (batch, input size, sequence length, dtype, named inputs).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ridge/cost.hpp"
#include "ridge/load.hpp"
#include "ridge/report.hpp"

namespace ridge::cli {

struct ModelOptions {
  int64_t batch = 1;
  std::string input_size;             ///< "3x224x224" (zoo CNNs)
  int64_t seq_len = 0;                ///< 0 = model default
  std::vector<std::string> inputs;    ///< NAME=1x3x224x224 (ONNX)
  std::string dtype = "fp32";
  bool strict = false;                ///< --strict: a node that cannot be costed is an error (exit 1)
  CLI::Option* dtype_flag = nullptr;  ///< set by add_to()

  /// Adds --batch, --input-size, --seq-len, --input, --dtype, --strict to `cmd`.
  void add_to(CLI::App* cmd, bool with_batch = true);
  /// True when --dtype was on the command line (commands with --precision default the dtype to it otherwise).
  bool dtype_given() const { return dtype_flag && dtype_flag->count() > 0; }
  /// Validated LoadOptions (throws UsageError naming the flag).
  LoadOptions load_options() const;
  /// LoadOptions with a different batch size (for sweeps).
  LoadOptions load_options(int64_t batch_override) const;
  /// With --strict, throws the costs stage's error naming the first node not costed; else does nothing.
  void check(const Incompleteness& inc, const std::string& model) const {
    if (strict) require_complete(inc, model);
  }
};

/// The counting convention named by --convention; throws UsageError listing the known names.
Convention convention_flag(const std::string& value);

/// What MODEL may be, for every command's help: one wording everywhere.
inline constexpr const char* kModelHelp =
    "Zoo name (see `ridge list`), a path to an .onnx file, or a Hugging Face config.json (or its directory)";
inline constexpr const char* kModelsHelp =
    "Zoo names, .onnx files or Hugging Face config.json files (see `ridge list`)";

/// Parses a batch list: "1:501:50" (start:stop:step, stop inclusive), "1,2,4,8" or "16". Throws UsageError.
std::vector<int64_t> parse_batch_list(const std::string& text, const std::string& flag);

}  // namespace ridge::cli
