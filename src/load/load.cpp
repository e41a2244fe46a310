#include <fmt/format.h>

#include <filesystem>

#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/load.hpp"

namespace ridge {

bool is_model_file(const std::string& model) {
  if (model.size() >= 5 && model.compare(model.size() - 5, 5, ".onnx") == 0) return true;
  std::error_code ec;
  return model.find('/') != std::string::npos || std::filesystem::is_regular_file(model, ec);
}

Graph load_model(const std::string& model, const LoadOptions& opts) {
  if (model.empty()) throw UsageError("MODEL is empty (a zoo name such as resnet50, or a path to an .onnx file)");
  if (is_llm_config_path(model)) return build_llm(read_llm_config(model), opts);
  if (is_model_file(model)) {
    std::error_code ec;
    if (!std::filesystem::exists(model, ec)) throw Error(fmt::format("{}: no such file", model));
    return import_onnx(model, opts);
  }
  if (is_descriptor(model)) return graph_from_descriptor(model, opts.dtype);
  return build_zoo_model(model, opts);
}

}  // namespace ridge
