// Load stage: turn a model name or file into a Graph with every shape bound.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ridge/graph.hpp"

namespace ridge {

/// How to instantiate a model: batch size, input sizes, element type.
struct LoadOptions {
  int64_t batch = 1;                    ///< binds the batch dim (zoo) or symbolic batch axes (ONNX)
  std::optional<Shape> input_size;      ///< per-sample input size without batch (e.g. 3x224x224), zoo CNNs
  std::optional<int64_t> seq_len;       ///< sequence length for language models (zoo and ONNX symbolic axes)
  std::vector<std::pair<std::string, Shape>> input_shapes;  ///< --input NAME=1x3x224x224 (full shapes)
  DType dtype = DType::F32;             ///< element type of params and activations
  bool training = false;                ///< build training-mode graphs (Dropout active, BN batch statistics)
  bool refuse_unused = false;           ///< an ONNX file refuses an input_size (zoo only) or a seq_len it has no
                                        ///< symbolic sequence dim for; front ends set it for what a user typed
};

/// Loads MODEL: a path to an .onnx file (anything that exists on disk or ends in .onnx), a layer descriptor
/// printed by ridge (re-runs one layer), or a zoo name.
/// Throws ridge::Error with a one-line reason (unknown name with suggestions, unreadable file, bad shape).
Graph load_model(const std::string& model, const LoadOptions& opts);

/// A model named on a command line, or held in memory by a front end (the Python module's exported torch Modules
/// and config dicts). Converts implicitly from a name, so that every call taking a name takes one of these too.
struct ModelSource {
  std::string name;        ///< zoo name, file path or descriptor; with a payload below, the model's label
  std::string onnx_bytes;  ///< a serialized ONNX ModelProto (imported like a file named `name`)
  std::string hf_config;   ///< a Hugging Face config.json's text (built like a config file named `name`)
  ModelSource(std::string model = {}) : name(std::move(model)) {}  // NOLINT: implicit on purpose
  ModelSource(const char* model) : name(model) {}                  // NOLINT: implicit on purpose
};

/// Loads a named model (load_model above) or an in-memory one; a graph without a name is named after the label.
/// Throws ridge::Error naming the label.
Graph load_source(const ModelSource& model, const LoadOptions& opts);

/// True if `model` names a file rather than a zoo entry.
bool is_model_file(const std::string& model);
/// True if `model` names an ONNX file: a file (is_model_file) that is not a Hugging Face config
/// (is_llm_config_path); only these carry weights and constants to read.
bool is_onnx_file(const std::string& model);

// ---- zoo -----------------------------------------------------------------------------------------------

/// One built-in model.
struct ZooEntry {
  std::string name;         ///< "resnet50"
  std::string family;       ///< "resnet", "vgg", "transformer", ...
  std::string reference;    ///< where the architecture comes from ("torchvision.models.resnet50")
  Shape input;              ///< default per-sample input size (3x224x224, or sequence length for LMs)
  bool sequence_input = false;  ///< input is token ids [batch, seq] (or [seq, batch] for transformer-lm)
  Count published_params = 0;   ///< parameter count published by the reference
  /// The Hugging Face config.json (text) of the same model, which `serve` and `train` read for this name (the
  /// graph above is the zoo's own); empty: the model has none.
  std::string hf_config{};
};

/// Every zoo model, in `ridge list` order.
const std::vector<ZooEntry>& zoo_entries();
/// The entry named `name`, or nullptr.
const ZooEntry* find_zoo_entry(const std::string& name);
/// Builds a zoo model. Throws ridge::Error for unknown names (listing the closest) and bad sizes.
Graph build_zoo_model(const std::string& name, const LoadOptions& opts);
/// Up to `n` known names closest to `name` (edit distance, case-insensitive; a name containing the query, or
/// contained in it, counts as distance 1), best first, none further than `max_distance` edits (0: the default
/// max(3, half the query's length), loose enough for model and device names).
std::vector<std::string> closest_names(const std::string& name, const std::vector<std::string>& known, size_t n = 3,
                                       size_t max_distance = 0);
/// " (did you mean a, b?)" for the closest_names of `name`, or "" when none is close: for error messages.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known);

// ---- layer descriptors ---------------------------------------------------------------------------------

/// True if `model` looks like a layer descriptor ("conv:mb1ic3...", "gemm:m1k512n1000b1", "relu:1x64x56x56").
bool is_descriptor(const std::string& model);
/// A one-node graph re-created from a descriptor printed by ridge (see ops::descriptor in op_rules.hpp).
/// Throws ridge::Error naming the descriptor and the field at fault.
Graph graph_from_descriptor(const std::string& desc, DType dtype);

// ---- onnx (implemented in src/load/onnx) -----------------------------------------------------------------

/// Imports an ONNX file: parses it, binds inputs from `opts`, infers every shape (ONNX inference plus
/// ridge's own folding of shape arithmetic), recovers module paths from node names, and records exporter
/// artefacts in Graph::notes. Never reads weight payloads. Throws ridge::Error naming the file (and node).
Graph import_onnx(const std::string& path, const LoadOptions& opts);

}  // namespace ridge
