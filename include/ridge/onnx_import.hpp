// ONNX import beyond load.hpp's import_onnx(path, opts): in-memory models (fuzzing, tests) and switches that
// let the conformance test check ridge's own shape rules without ONNX's inference behind them.
#pragma once
#include <string>
#include <string_view>

#include "ridge/load.hpp"

namespace ridge {

/// Which shape engines the importer runs. Both on is the normal mode; the conformance test also runs
/// ridge's rules alone to check them against ONNX's expected outputs.
struct OnnxImportOptions {
  bool onnx_inference = true;  ///< run onnx::shape_inference::InferShapes with data propagation first
  bool ridge_rules = true;     ///< then ridge's own per-op rules and folding of shape arithmetic
  /// With both engines: ridge's rules alone first, and ONNX's inference (run in a child process, the costly part
  /// of an import) only when they leave a tensor without shape or type or an op unknown. Same Graph either way
  /// (checked on every ONNX file of the tests); off forces the full import.
  bool onnx_inference_for_gaps_only = true;
};

/// doc_string of an initializer its writer declares a non-trainable buffer (Python: a module's named_buffers()):
/// counted as a buffer whatever its uses (a normalisation mean multiplied in reads like an elementwise weight).
inline constexpr const char* kDeclaredBufferDoc = "ridge: non-trainable buffer";
/// doc_string of an initializer its writer declares a trainable parameter (Python: a module's named_parameters()):
/// counted as a parameter whatever its uses (Swin V2's logit_scale, [heads, 1, 1], is only clamped, exponentiated
/// and multiplied in, which reads like a buffer).
inline constexpr const char* kDeclaredParameterDoc = "ridge: trainable parameter";

/// metadata_props key under which a writer lists the parameters of its source module that the exported graph does
/// not use ("name:elements" joined by commas; Python: a torch.nn.Module's auxiliary heads that only run in training,
/// such as googlenet's aux1 and aux2). The importer notes them: counted by torch, absent from the graph, not counted.
inline constexpr const char* kParametersNotInGraphKey = "ridge.parameters_not_in_graph";

/// import_onnx with explicit engine switches.
Graph import_onnx(const std::string& path, const LoadOptions& opts, const OnnxImportOptions& engines);

/// Imports a serialized ModelProto held in memory; `label` names it in errors (like a file path would).
/// External data is never read, so relative locations do not matter.
Graph import_onnx_bytes(std::string_view bytes, const std::string& label, const LoadOptions& opts,
                        const OnnxImportOptions& engines = {});

}  // namespace ridge
