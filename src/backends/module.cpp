// libridge_backends.so: the table of real implementations (src/load/onnx, src/measure/exec). Linked with
// --exclude-libs,ALL so that nothing but ridge_backends_api() is exported.
#include "backends/backend_api.hpp"

extern "C" __attribute__((visibility("default"))) const ridge::backends::Api* ridge_backends_api() {
  using namespace ridge;
  static const backends::Api api{
      backends::kApiVersion,
      static_cast<Graph (*)(const std::string&, const LoadOptions&, const OnnxImportOptions&)>(&import_onnx),
      &import_onnx_bytes,
      &execute,
      &parameter_gradients,
      &measure_graph,
      &read_onnx_weights,
      &read_tensor_pb,
      &write_tensor_pb,
  };
  return &api;
}
