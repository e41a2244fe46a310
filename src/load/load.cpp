#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/load.hpp"
#include "ridge/onnx_import.hpp"

namespace ridge {

bool is_model_file(const std::string& model) {
  if (model.size() >= 5 && model.compare(model.size() - 5, 5, ".onnx") == 0) return true;
  std::error_code ec;
  return model.find('/') != std::string::npos || std::filesystem::is_regular_file(model, ec);
}

bool is_onnx_file(const std::string& model) { return is_model_file(model) && !is_llm_config_path(model); }

Graph load_model(const std::string& model, const LoadOptions& opts) {
  if (model.empty()) throw UsageError("MODEL is empty (a zoo name such as resnet50, a path to an .onnx file or to a Hugging Face config.json)");
  std::error_code missing;
  // A descriptor may hold '/' (its attributes: "layernormalization:2x16x768,768,768/axis=-1"): it is one unless a
  // file of that name exists.
  if (is_descriptor(model) && !std::filesystem::exists(model, missing)) return graph_from_descriptor(model, opts.dtype);
  if (is_llm_config_path(model)) return build_llm(read_llm_config(model), opts);
  if (is_model_file(model)) {
    std::error_code ec;
    if (!std::filesystem::exists(model, ec)) throw Error(fmt::format("{}: no such file", model));
    if (std::filesystem::is_directory(model, ec))
      throw Error(fmt::format("{}: a directory without a config.json (MODEL is a zoo name, an .onnx file, or a Hugging "
                              "Face config.json or the directory holding it)", model));
    return import_onnx(model, opts);
  }
  return build_zoo_model(model, opts);
}

Graph load_source(const ModelSource& model, const LoadOptions& opts) {
  if (model.onnx_bytes.empty() && model.hf_config.empty()) return load_model(model.name, opts);
  Graph g;
  if (!model.onnx_bytes.empty()) {
    g = import_onnx_bytes(model.onnx_bytes, model.name, opts);
  } else {
    nlohmann::json j = nlohmann::json::parse(model.hf_config, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(fmt::format("{}: the config is not a JSON object", model.name));
    g = build_llm(parse_llm_config(j, model.name), opts);
  }
  if (g.name.empty()) g.name = model.name;
  return g;
}

}  // namespace ridge
