// The table of functions the backends module (libridge_backends.so) gives the `ridge` binary: ONNX import
// (libonnx, protobuf) and the oneDNN executor (libdnnl). Loading those libraries costs ~2.3 ms per process, more
// than everything `ridge summary` does for a zoo model, so the binary links only shim.cpp, which loads the
// module on first use and forwards to this table. Tests and fuzzers link the implementations directly.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ridge/measure.hpp"
#include "ridge/onnx_import.hpp"

namespace ridge::backends {

/// Bumped whenever the table or a signature in it changes; the shim refuses a module built for another one.
constexpr int kApiVersion = 1;

struct Api {
  int version = kApiVersion;
  Graph (*import_onnx)(const std::string&, const LoadOptions&, const OnnxImportOptions&);
  Graph (*import_onnx_bytes)(std::string_view, const std::string&, const LoadOptions&, const OnnxImportOptions&);
  ExecResult (*execute)(const Graph&, const ExecOptions&);
  TensorMap (*parameter_gradients)(const Graph&, const ExecOptions&);
  ModelMeasurement (*measure_graph)(const Graph&, const MeasureOptions&);
  TensorMap (*read_onnx_weights)(const std::string&, std::vector<std::string>*);
  std::pair<std::string, HostTensor> (*read_tensor_pb)(const std::string&);
  void (*write_tensor_pb)(const std::string&, const std::string&, const HostTensor&);
};

}  // namespace ridge::backends

/// The module's one exported symbol.
extern "C" const ridge::backends::Api* ridge_backends_api();
